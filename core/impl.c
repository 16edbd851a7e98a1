/* Finding and checking implementations (impl.h). */
#include "impl.h"
#include "methods.h"

const ht_impl *ht_impl_of(ht_variant v)
{
  for (int i = 0; i < ht_impls_cpu_count; i++)
    if (ht_impls_cpu[i].variant == v)
      return &ht_impls_cpu[i];
  for (int i = 0; i < ht_impls_cuda_count; i++)
    if (ht_impls_cuda[i].variant == v)
      return &ht_impls_cuda[i];
  return NULL;
}

bool ht_impl_takes(const ht_impl *impl, const ht_job *job, char *why)
{
  if (impl->method != job->method) {
    ht_set_msg(why, "variant %s computes another method", impl->name);
    return false;
  }
  if (job->scan == HT_SCAN_SERPENTINE && !(impl->caps & HT_CAP_SERPENTINE)) {
    if (impl->backend == HT_BACKEND_CUDA)
      ht_set_msg(why, "the serpentine scan runs sequentially on the CPU only; variant %s cannot do it "
                      "(use backend cpu or auto)", impl->name);
    else
      ht_set_msg(why, "the serpentine scan runs sequentially (variant ed); variant %s cannot do it", impl->name);
    return false;
  }
  if (job->schedule == HT_SCHEDULE_RASTER && impl->backend == HT_BACKEND_CUDA &&
      ht_method_row(impl->method) && (ht_method_row(impl->method)->caps & HT_MCAP_SEARCH)) {
    ht_set_msg(why, "the raster schedule is the search's sequential reference, on the CPU; variant %s runs the "
                    "parallel schedule (use backend cpu or auto)", impl->name);
    return false;
  }
  if (job->objective == HT_OBJECTIVE_FILTERED && impl->backend == HT_BACKEND_CUDA && job->method == HT_METHOD_DBS) {
    ht_set_msg(why, "DBS's filtered objective runs on the CPU for now; variant %s minimises the LES paper's error "
                    "(use backend cpu or auto, or objective les)", impl->name);
    return false;
  }
  if ((job->carry_in || job->carry_out || job->y0) && !(impl->caps & HT_CAP_CARRY)) {
    ht_set_msg(why, "variant %s cannot run a band with carried rows", impl->name);
    return false;
  }
  if (job->stream && !(impl->caps & HT_CAP_STREAM)) {
    ht_set_msg(why, "variant %s cannot stream a band's carried rows (variant stream does)", impl->name);
    return false;
  }
  return true;
}

const ht_impl *ht_impl_default(ht_backend backend, const ht_job *job, char *why)
{
  const ht_impl *t = backend == HT_BACKEND_CUDA ? ht_impls_cuda : ht_impls_cpu;
  const int n = backend == HT_BACKEND_CUDA ? ht_impls_cuda_count : ht_impls_cpu_count;
  for (int i = 0; i < n; i++)
    if (ht_impl_takes(&t[i], job, NULL))
      return &t[i];
  /* say why the fastest of the job's method does not (or the fastest) */
  for (int i = 0; i < n; i++)
    if (t[i].method == job->method) {
      ht_impl_takes(&t[i], job, why);
      return NULL;
    }
  if (n > 0)
    ht_impl_takes(&t[0], job, why);
  return NULL;
}

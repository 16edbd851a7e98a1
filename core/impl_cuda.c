/* The CUDA backend's implementations (impl.h): every row runs in the
 * module that cuda_loader.c opens, through its family's host side
 * (diffusion/gpu.c, color/gpu.c, search/gpu.c); the names stay known
 * (and refused with "no usable GPU") where the module or a GPU is
 * missing. Kasagi et al. Table V names the paper's variants; gpu-fast is
 * ours (cuda/diffusion/fast.cu). */
#include "impl.h"
#include "../cuda/module.h"
#include "diffusion/diffusion.h"
#include "search/search.h"
#include "color/color.h"

#define N_(text) text

/* The module's number for the row that runs the job (context.c sets
 * job->variant to the row's variant before it calls run). */
static int module_variant(const ht_job *job)
{
  const ht_impl *impl = ht_impl_of(job->variant);
  return impl ? impl->module_variant : HT_IMPL_NO_MODULE;
}
static ht_status run(ht_job *job, const ht_rows *rows)
{
  return ht_diffusion_gpu_run(job->cuda, job, rows, module_variant(job));
}
static ht_status run_pd(ht_job *job, const ht_rows *rows)
{
  (void)rows; /* all planes are in job->color */
  return ht_color_gpu_run(job->cuda, job);
}
static ht_status run_search(ht_job *job, const ht_rows *rows)
{
  return ht_search_gpu_run(job->cuda, job, rows, module_variant(job));
}

/* The last field of each row is the number the module knows it by
 * (impl.h; cuda/module.h), never derived from the variant's place in
 * ht_variant; tests/core/test-impls.c checks them. */
#define ED HT_METHOD_ERROR_DIFFUSION, HT_BACKEND_CUDA
const ht_impl ht_impls_cuda[] = {
  { HT_VARIANT_GPU_FAST, "gpu-fast", N_("GPU: a warp per band of 32 rows (ours)"), ED, HT_CAP_CARRY, run,
    HT_CUDA_VARIANT_FAST },
  { HT_VARIANT_GPU_3D_PED, "gpu-3d-ped", N_("GPU: 3-delay PED, global memory"), ED, 0, run, HT_CUDA_VARIANT_3D_PED },
  { HT_VARIANT_GPU_2D_PED_ATOMIC, "gpu-2d-ped-atomic", N_("GPU: 2-delay PED with atomics, global memory"), ED, 0, run,
    HT_CUDA_VARIANT_2D_PED_ATOMIC },
  { HT_VARIANT_GPU_2D_PED_DOUBLE, "gpu-2d-ped-double", N_("GPU: 2-delay PED, double buffer, global memory"), ED, 0,
    run, HT_CUDA_VARIANT_2D_PED_DOUBLE },
  { HT_VARIANT_GPU_2D_PEC, "gpu-2d-pec", N_("GPU: 2-delay PEC, global memory"), ED, 0, run, HT_CUDA_VARIANT_2D_PEC },
  { HT_VARIANT_GPU_3D_PED_PERM, "gpu-3d-ped-perm", N_("GPU: 3-delay PED, permuted data"), ED, 0, run,
    HT_CUDA_VARIANT_3D_PED_PERM },
  { HT_VARIANT_GPU_2D_PED_ATOMIC_PERM, "gpu-2d-ped-atomic-perm", N_("GPU: 2-delay PED with atomics, permuted data"),
    ED, 0, run, HT_CUDA_VARIANT_2D_PED_ATOMIC_PERM },
  { HT_VARIANT_GPU_2D_PED_DOUBLE_PERM, "gpu-2d-ped-double-perm", N_("GPU: 2-delay PED, double buffer, permuted data"),
    ED, 0, run, HT_CUDA_VARIANT_2D_PED_DOUBLE_PERM },
  { HT_VARIANT_GPU_2D_PEC_PERM, "gpu-2d-pec-perm", N_("GPU: 2-delay PEC, permuted data"), ED, 0, run,
    HT_CUDA_VARIANT_2D_PEC_PERM },
  { HT_VARIANT_GPU_PB_PED, "gpu-pb-ped", N_("GPU: parallelogram blocks, PED"), ED, 0, run, HT_CUDA_VARIANT_PB_PED },
  { HT_VARIANT_GPU_PB_PED_RC, "gpu-pb-ped-rc", N_("GPU: parallelogram blocks, PED, register caching"), ED, 0, run,
    HT_CUDA_VARIANT_PB_PED_RC },
  { HT_VARIANT_GPU_PB_PEC, "gpu-pb-pec", N_("GPU: parallelogram blocks, PEC"), ED, 0, run, HT_CUDA_VARIANT_PB_PEC },
  { HT_VARIANT_GPU_PB_PEC_RC, "gpu-pb-pec-rc", N_("GPU: parallelogram blocks, PEC, register caching"), ED, 0, run,
    HT_CUDA_VARIANT_PB_PEC_RC },
  /* plane-dependent colour (cuda/color/pd.cu): the exact k-delay scan;
   * color_pd has one form, number 0 */
  { HT_VARIANT_GPU_PD, "gpu-pd", N_("GPU: plane-dependent colour, exact scan"), HT_METHOD_PLANE_DEPENDENT,
    HT_BACKEND_CUDA, 0, run_pd, 0 },
  /* The search methods: a thread block per q x q block of a group, its
   * windows' patterns over the threads (Kouge et al. Sec. IV); a warp
   * per block for DBS */
  { HT_VARIANT_LES_GPU, "les-gpu", N_("Local exhaustive search (GPU)"), HT_METHOD_LES, HT_BACKEND_CUDA, 0,
    run_search, HT_CUDA_SEARCH_LES },
  { HT_VARIANT_PES_GPU, "pes-gpu", N_("Partial exhaustive search (GPU)"), HT_METHOD_PES, HT_BACKEND_CUDA, 0,
    run_search, HT_CUDA_SEARCH_PES },
  { HT_VARIANT_DBS_GPU, "dbs-gpu", N_("Direct binary search (GPU)"), HT_METHOD_DBS, HT_BACKEND_CUDA, 0, run_search,
    HT_CUDA_SEARCH_DBS },
};
const int ht_impls_cuda_count = (int)(sizeof ht_impls_cuda / sizeof ht_impls_cuda[0]);

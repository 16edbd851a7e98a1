/* The CUDA backend's implementations (impl.h): every row runs in the
 * module that cuda_loader.c opens; the names stay known (and refused with
 * "no usable GPU") where the module or a GPU is missing. Kasagi et al.
 * Table V names the paper's variants; gpu-fast is ours
 * (cuda/diffusion/fast.cu). */
#include "impl.h"
#include "cuda_loader.h"
#include "../cuda/module.h"
#include "diffusion/diffusion.h"
#include "search/search.h"

#include <stdlib.h>
#include <string.h>

#define N_(text) text

static ht_status run(ht_job *job, const ht_rows *rows) { return ht_cuda_run(job->cuda, job, rows, job->variant); }
static ht_status run_pd(ht_job *job, const ht_rows *rows)
{
  (void)rows; /* all planes are in job->color */
  return ht_cuda_color_run(job->cuda, job);
}

/* ------------------------------------------------------- search methods */

/* A plane of LES, PES or DBS in the module (cuda/search/run.cu): the
 * input and, for the Floyd-Steinberg start, the initial image made here;
 * the random start, the error field and the rounds on the GPU; the
 * result stored as core/search/run.c stores it. */
static ht_status run_search(ht_job *job, const ht_rows *rows)
{
  const int method = job->method == HT_METHOD_LES ? HT_CUDA_SEARCH_LES
                     : job->method == HT_METHOD_PES ? HT_CUDA_SEARCH_PES
                                                    : HT_CUDA_SEARCH_DBS;
  const char *name = method == HT_CUDA_SEARCH_LES ? "les" : method == HT_CUDA_SEARCH_PES ? "pes" : "dbs";
  const ht_status refused = ht_search_check_job(job, name);
  if (refused != HT_OK)
    return refused;
  const int64_t w = rows->width, h = rows->height;
  const size_t px = (size_t)w * (size_t)h;
  uint16_t *a = ht_alloc_raw(job, px, sizeof *a);
  uint8_t *b = ht_alloc_raw(job, px, 1);
  int32_t *row = ht_alloc_raw(job, (size_t)w, sizeof *row);
  ht_status st = HT_OK;
  if (!a || !b || !row) {
    st = HT_ERR_NO_MEMORY;
    goto out;
  }
  for (int64_t y = 0; y < h; y++) {
    rows->load(rows, y, 0, w, row);
    for (int64_t x = 0; x < w; x++)
      a[(size_t)y * (size_t)w + (size_t)x] = (uint16_t)row[x]; /* HT_FX values are 0..65535 */
  }
  if (job->init == HT_INIT_FLOYD_STEINBERG && (st = ht_search_fs_start(job, rows, b)) != HT_OK)
    goto out;
  ht_cuda_search s;
  memset(&s, 0, sizeof s);
  s.method = method;
  s.width = w;
  s.height = h;
  s.a = a;
  s.b = b;
  s.init_given = job->init == HT_INIT_FLOYD_STEINBERG;
  s.seed = job->seed;
  s.plane = job->plane;
  s.y0 = job->y0;
  s.window = job->window;
  s.radius = job->eye.radius;
  s.eye = job->eye.w;
  s.max_rounds = job->max_rounds;
  st = ht_cuda_search_run(job->cuda, job, &s);
  ht_job_note_rounds(job, s.rounds); /* --metrics' rounds, as run.c */
  /* for the benchmark, as the CPU's run.c counts them */
  atomic_store(&ht_sx_last_rounds, s.rounds);
  atomic_store(&ht_sx_last_searched, s.searched);
  atomic_store(&ht_sx_last_changed, s.changed);
  if (st == HT_OK)
    for (int64_t y = 0; y < h; y++)
      rows->store(rows, y, 0, w, b + (size_t)y * (size_t)w);
  else if (st == HT_ERR_CANCELLED)
    ht_set_msg(job->msg, "cancelled");
out:
  free(a);
  free(b);
  free(row);
  return st;
}

#define ED HT_METHOD_ERROR_DIFFUSION, HT_BACKEND_CUDA
const ht_impl ht_impls_cuda[] = {
  { HT_VARIANT_GPU_FAST, "gpu-fast", N_("GPU: a warp per band of 32 rows (ours)"), ED, HT_CAP_CARRY, run },
  { HT_VARIANT_GPU_3D_PED, "gpu-3d-ped", N_("GPU: 3-delay PED, global memory"), ED, 0, run },
  { HT_VARIANT_GPU_2D_PED_ATOMIC, "gpu-2d-ped-atomic", N_("GPU: 2-delay PED with atomics, global memory"), ED, 0, run },
  { HT_VARIANT_GPU_2D_PED_DOUBLE, "gpu-2d-ped-double", N_("GPU: 2-delay PED, double buffer, global memory"), ED, 0,
    run },
  { HT_VARIANT_GPU_2D_PEC, "gpu-2d-pec", N_("GPU: 2-delay PEC, global memory"), ED, 0, run },
  { HT_VARIANT_GPU_3D_PED_PERM, "gpu-3d-ped-perm", N_("GPU: 3-delay PED, permuted data"), ED, 0, run },
  { HT_VARIANT_GPU_2D_PED_ATOMIC_PERM, "gpu-2d-ped-atomic-perm", N_("GPU: 2-delay PED with atomics, permuted data"),
    ED, 0, run },
  { HT_VARIANT_GPU_2D_PED_DOUBLE_PERM, "gpu-2d-ped-double-perm", N_("GPU: 2-delay PED, double buffer, permuted data"),
    ED, 0, run },
  { HT_VARIANT_GPU_2D_PEC_PERM, "gpu-2d-pec-perm", N_("GPU: 2-delay PEC, permuted data"), ED, 0, run },
  { HT_VARIANT_GPU_PB_PED, "gpu-pb-ped", N_("GPU: parallelogram blocks, PED"), ED, 0, run },
  { HT_VARIANT_GPU_PB_PED_RC, "gpu-pb-ped-rc", N_("GPU: parallelogram blocks, PED, register caching"), ED, 0, run },
  { HT_VARIANT_GPU_PB_PEC, "gpu-pb-pec", N_("GPU: parallelogram blocks, PEC"), ED, 0, run },
  { HT_VARIANT_GPU_PB_PEC_RC, "gpu-pb-pec-rc", N_("GPU: parallelogram blocks, PEC, register caching"), ED, 0, run },
  /* plane-dependent colour (cuda/color/pd.cu): the exact k-delay scan */
  { HT_VARIANT_GPU_PD, "gpu-pd", N_("GPU: plane-dependent colour, exact scan"), HT_METHOD_PLANE_DEPENDENT,
    HT_BACKEND_CUDA, 0, run_pd },
  /* The search methods: a thread block per q x q block of a group, its
   * windows' patterns over the threads (Kouge et al. Sec. IV); a warp
   * per block for DBS */
  { HT_VARIANT_LES_GPU, "les-gpu", N_("Local exhaustive search (GPU)"), HT_METHOD_LES, HT_BACKEND_CUDA, 0,
    run_search },
  { HT_VARIANT_PES_GPU, "pes-gpu", N_("Partial exhaustive search (GPU)"), HT_METHOD_PES, HT_BACKEND_CUDA, 0,
    run_search },
  { HT_VARIANT_DBS_GPU, "dbs-gpu", N_("Direct binary search (GPU)"), HT_METHOD_DBS, HT_BACKEND_CUDA, 0, run_search },
};
const int ht_impls_cuda_count = (int)(sizeof ht_impls_cuda / sizeof ht_impls_cuda[0]);

/* Plane-dependent colour error diffusion (Zhang, Recker, Ulichney, Tastl,
 * Owens, "Plane-dependent error diffusion on a GPU", Sec. 2.1): the
 * implementations, one file each, and what they share. The design, and
 * why every implementation gives the same bits, is in docs/color.md.
 *
 *   ../shared/pd_arith.h  the shared arithmetic (C and CUDA)
 *   pd.c                  the sequential reference (serpentine too)
 *   pd_threads.c          the threaded k-delay scan of the rows
 *   pd_diagonal.c         its fast kernel: bands of rows as SIMD lanes
 *                         (AVX2)
 *   gpu.c                 gpu-pd's host side: the planes to and from the
 *                         CUDA module (cuda/color/)
 */
#ifndef HT_COLOR_H
#define HT_COLOR_H

#include "../job.h"
#include "../rows.h"
#include "../shared/pd_arith.h"

#include <sched.h>
#include <stdatomic.h>

/* What a plane-dependent run is given besides the job (job->color). */
typedef struct ht_color_job {
  int planes;                       /* 1..4                                */
  bool cmyk;                        /* 4 planes from rows 0..2 (R, G, B)   */
  int32_t black;                    /* cmyk: Q16 black generation          */
  int levels[HT_PD_MAX_PLANES];
  int32_t forward[HT_PD_MAX_PLANES];  /* Q12; 0 for the last plane         */
  int32_t backward[HT_PD_MAX_PLANES]; /* Q12; 0 for the first plane        */
  int32_t amount;                   /* Q12 randomisation of the filter      */
  ht_rows rows[HT_PD_MAX_PLANES];   /* plane p: stored to output channel p,
                                       loaded from input channel p (cmyk:
                                       rows 0..2 load R, G, B)             */
} ht_color_job;

/* Columns x0 .. x0 + n - 1 of row y of every plane into dst[p][0 .. n)
 * (HT_FX values; cmyk: separated, `tmp` holding 3 * n values). */
static inline void ht_color_load(const ht_color_job *cj, int64_t y, int64_t x0, int64_t n, int32_t *const *dst,
                                 int32_t *tmp)
{
  if (!cj->cmyk) {
    for (int p = 0; p < cj->planes; p++)
      cj->rows[p].load(&cj->rows[p], y, x0, n, dst[p]);
    return;
  }
  for (int p = 0; p < 3; p++)
    cj->rows[p].load(&cj->rows[p], y, x0, n, tmp + (size_t)p * (size_t)n);
  for (int64_t i = 0; i < n; i++) {
    int32_t o[4];
    ht_pd_cmyk(tmp[i], tmp[(size_t)n + (size_t)i], tmp[2 * (size_t)n + (size_t)i], cj->black, o);
    for (int p = 0; p < 4; p++)
      dst[p][i] = o[p];
  }
}

/* Until the progress word *v reaches `want` (acquire); false on
 * cancel. Spins, then yields: with more threads than cores the row or
 * band waited for needs this core. */
static inline bool ht_pd_wait(const ht_job *job, _Atomic uint64_t *v, uint64_t want)
{
  for (unsigned spins = 0; atomic_load_explicit(v, memory_order_acquire) < want; spins++) {
    if (ht_job_cancelled(job))
      return false;
    if (spins > 256)
      sched_yield();
#if defined(__x86_64__) || defined(__i386__)
    else
      __builtin_ia32_pause();
#endif
  }
  return true;
}

ht_status ht_pd_run(ht_job *job, const ht_rows *rows);         /* pd.c         */
ht_status ht_pd_threads_run(ht_job *job, const ht_rows *rows); /* pd_threads.c */
/* gpu.c: every plane of job->color on the GPU (cuda/color/) in the open
 * module. */
ht_status ht_color_gpu_run(ht_cuda *cuda, ht_job *job);

/* pd_diagonal.c: the fast kernel's run for T threads, or NULL where it
 * does not take the job (or memory failed: job->msg says so); thread
 * me's share of the work once T threads run; whether some error grew
 * past what its 32-bit products take (then the job must run again on
 * the row kernel). */
typedef struct ht_pdd ht_pdd;
ht_pdd *ht_pd_diagonal_new(ht_job *job, int T);
void ht_pd_diagonal_work(ht_pdd *S, int me, int T);
bool ht_pd_diagonal_overflowed(const ht_pdd *S);
void ht_pd_diagonal_free(ht_pdd *S);

#endif

/* Plane-dependent colour error diffusion on threads: the k-delay
 * parallel scan (Kasagi et al. Sec. III; Metaxas) applied to whole
 * pixels of P planes, which gives the bits of pd.c (docs/color.md
 * proves it). Rows are dealt to the T threads in turn (row y to thread
 * y mod T); row y may process column x once row y - 1 has finished
 * column x + L (L = the filter's reach to the left), since every error
 * that reaches (x, y) from above comes from a column <= x + L of an
 * earlier row. The inter-plane feeds stay inside a pixel (forward) or go
 * to the next pixel of the same row (backward), which the row's own
 * thread processes next: they add no dependency between rows.
 *
 * Errors travel through accumulators acc[dy - 1][slot][plane][x]: row y
 * adds its terms for row y + dy to slot (y + dy) mod RING of array
 * dy - 1, which no other row writes, and the target row reads and
 * clears them. With RING = T + max(D, 1) a slot is written again only
 * by a row whose thread has finished a row at or below the reader, so
 * never while it is read. Integer sums do not depend on order, so the
 * result is pd.c's bit for bit. */
#include "color.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Columns between two publications of a row's progress (pdt.ch): long
 * enough that the row below, which trails by at least this much, works
 * on other cache lines of the accumulators than the row above writes,
 * but short enough that all threads' rows fit in the width at once. */
#define CH_MIN 32
#define CH_MAX 256

typedef struct {
  _Alignas(64) _Atomic uint64_t v; /* (row << 32) | columns done */
} row_progress;

typedef struct {
  ht_job *job;
  const ht_color_job *cj;
  int64_t w, h;
  int T, ring, D, L;
  int64_t ch;            /* columns between publications                  */
  int32_t *acc;          /* [D][ring][P][w]                              */
  row_progress *prog;    /* [ring]                                        */
  int32_t *bufs;         /* per thread: P*w inputs + 3*w cmyk scratch     */
  uint8_t *lvs;          /* per thread: P*w level indices                 */
} pdt;

static inline int32_t *acc_row(const pdt *S, int d, int64_t y, int p)
{
  return S->acc + (((size_t)d * (size_t)S->ring + (size_t)(y % S->ring)) * (size_t)S->cj->planes + (size_t)p) *
                      (size_t)S->w;
}

/* Until row y has published `need` columns; false on cancel. */
static bool wait_row(pdt *S, int64_t y, int64_t need)
{
  return ht_pd_wait(S->job, &S->prog[y % S->ring].v, ((uint64_t)y << 32) | (uint64_t)need);
}

static bool run_row(pdt *S, int me, int64_t y)
{
  const ht_color_job *cj = S->cj;
  const ht_filter *f = &S->job->filter;
  const int P = cj->planes;
  const int64_t w = S->w, h = S->h;
  const size_t W = (size_t)w;
  int32_t *in = S->bufs + (size_t)me * ((size_t)P + 3) * W;
  uint8_t *lv = S->lvs + (size_t)me * (size_t)P * W;
  int32_t *dst[HT_PD_MAX_PLANES];
  for (int p = 0; p < P; p++)
    dst[p] = in + (size_t)p * W;
  ht_color_load(cj, y, 0, w, dst, in + (size_t)P * W);
  int32_t q0[HT_FILTER_MAX_TAPS], q[HT_FILTER_MAX_TAPS];
  const int nt = f->ntaps;
  for (int t = 0; t < nt; t++)
    q0[t] = q[t] = f->taps[t].q;
  /* every row this row reads from or adds to, once: rd[d][j] collects
   * what row y - 1 - d sent, tgt[t][j] is where tap t adds (this row's
   * own inputs for the taps on the row, NULL below the image) */
  int32_t *rd[HT_FILTER_MAX_DOWN][HT_PD_MAX_PLANES];
  int32_t *tgt[HT_FILTER_MAX_TAPS][HT_PD_MAX_PLANES];
  int tdx[HT_FILTER_MAX_TAPS];
  for (int j = 0; j < P; j++) {
    for (int d = 0; d < S->D; d++)
      rd[d][j] = acc_row(S, d, y, j);
    for (int t = 0; t < nt; t++) {
      const int dy = f->taps[t].dy;
      tgt[t][j] = dy == 0 ? dst[j] : y + dy < h ? acc_row(S, dy - 1, y + dy, j) : NULL;
    }
  }
  bool below = true; /* every tap's row inside the image */
  for (int t = 0; t < nt; t++) {
    tdx[t] = f->taps[t].dx;
    below = below && tgt[t][0];
  }
  /* columns whose taps all land inside the image: no test a tap */
  const int64_t xin0 = below ? f->reach_left : w, xin1 = below ? w - f->reach_right : w;
  int32_t back[HT_PD_MAX_PLANES] = { 0 };
  _Atomic uint64_t *mine = &S->prog[y % S->ring].v;
  for (int64_t x0 = 0; x0 < w; x0 += S->ch) {
    const int64_t x1 = x0 + S->ch < w ? x0 + S->ch : w;
    if (y > 0) {
      const int64_t need = x1 + S->L < w ? x1 + S->L : w;
      if (!wait_row(S, y - 1, need))
        return false;
    }
    for (int64_t x = x0; x < x1; x++) {
      const bool last = x == w - 1;
      int32_t fwd = 0, nback[HT_PD_MAX_PLANES] = { 0 };
      for (int j = 0; j < P; j++) {
        int32_t v = dst[j][x] + fwd + back[j];
        for (int d = 0; d < S->D; d++) {
          v += rd[d][j][x];
          rd[d][j][x] = 0;
        }
        int32_t e;
        lv[(size_t)j * W + (size_t)x] = (uint8_t)ht_pd_round(v, cj->levels[j], &e);
        fwd = ht_pd_term(e, cj->forward[j]);
        const int32_t b = last ? 0 : ht_pd_term(e, cj->backward[j]);
        if (j > 0)
          nback[j - 1] = b;
        const int32_t ei = e - fwd - b;
        if (cj->amount)
          ht_pd_perturb(q0, nt, cj->amount, S->job->seed, (uint32_t)j, (uint32_t)x, (uint32_t)y, q);
        if (x >= xin0 && x < xin1)
          for (int t = 0; t < nt; t++)
            tgt[t][j][x + tdx[t]] += ht_pd_term(ei, q[t]);
        else
          for (int t = 0; t < nt; t++) {
            const int64_t tx = x + tdx[t];
            if (tx >= 0 && tx < w && tgt[t][j])
              tgt[t][j][tx] += ht_pd_term(ei, q[t]);
          }
      }
      for (int j = 0; j < HT_PD_MAX_PLANES; j++) /* a fixed size: no call */
        back[j] = nback[j];
    }
    atomic_store_explicit(mine, ((uint64_t)y << 32) | (uint64_t)x1, memory_order_release);
  }
  for (int j = 0; j < P; j++)
    cj->rows[j].store(&cj->rows[j], y, 0, w, lv + (size_t)j * W);
  return true;
}

static void work(pdt *S, int me)
{
  for (int64_t y = me; y < S->h; y += S->T) {
    if (ht_job_cancelled(S->job) || !run_row(S, me, y)) {
      atomic_store(&S->job->cancelled, 1); /* the others stop waiting */
      return;
    }
    /* only the calling thread reports progress (and may cancel); row y
     * done means every row above it is done */
    if (me == 0 && !ht_job_tick(S->job, y + 1, S->h))
      return;
  }
}

/* One run on T threads: the row kernel's (S) or the fast kernel's (D). */
typedef struct {
  pdt *S;
  ht_pdd *D;
  int T;           /* the threads that run, final once `go` is set */
  _Atomic int go;
} start;

static void helper(void *arg, int k)
{
  start *st = arg;
  while (atomic_load_explicit(&st->go, memory_order_acquire) == 0)
    sched_yield();
  if (k >= st->T)
    return;
  if (st->D)
    ht_pd_diagonal_work(st->D, k, st->T);
  else
    work(st->S, k);
}

typedef struct {
  start *st;
  int k;
  pthread_t tid;
} worker;

static void *worker_main(void *arg)
{
  worker *wk = arg;
  helper(wk->st, wk->k);
  return NULL;
}

/* Runs st's kernel on up to T threads (the caller is thread 0); false
 * when the worker table cannot be had. */
static bool team(ht_job *job, int T, start *st)
{
  worker *workers = ht_alloc(job, (size_t)T, sizeof *workers);
  if (!workers)
    return false;
  int started = 1;
  if (job->pool)
    started += ht_pool_start(job->pool, T - 1, helper, st);
  else
    for (int t = 1; t < T; t++) {
      workers[t].st = st;
      workers[t].k = t;
      if (pthread_create(&workers[t].tid, NULL, worker_main, &workers[t]) != 0)
        break;
      started++;
    }
  st->T = started; /* work is dealt only once `go` is set */
  if (st->S)
    st->S->T = started;
  atomic_store_explicit(&st->go, 1, memory_order_release);
  helper(st, 0);
  if (job->pool)
    ht_pool_wait(job->pool);
  else
    for (int t = 1; t < started; t++)
      pthread_join(workers[t].tid, NULL);
  free(workers);
  return true;
}

ht_status ht_pd_threads_run(ht_job *job, const ht_rows *rows)
{
  (void)rows;
  if (job->scan != HT_SCAN_RASTER) {
    ht_set_msg(job->msg, "the serpentine scan runs sequentially (variant pd)");
    return HT_ERR_UNSUPPORTED;
  }
  const ht_color_job *cj = job->color;
  int T = job->threads < 1 ? 1 : job->threads;
  if (T > cj->rows[0].height)
    T = (int)cj->rows[0].height;
  if (T > HT_POOL_MAX + 1)
    T = HT_POOL_MAX + 1;
  /* The fast kernel where it takes the job; the row kernel for the rest,
   * and again for a job whose errors grew past the fast kernel's range. */
  /* 2^18 pixels a thread at least, as the gray wavefront: below, a
   * thread more costs more than it brings (tests: HT_PD_ANY_THREADS
   * takes every thread asked for, to run many bands on small images) */
  const int64_t px = cj->rows[0].width * cj->rows[0].height;
  int TD = px >> 18 < T ? (int)(px >> 18 > 1 ? px >> 18 : 1) : T;
  if (getenv("HT_PD_ANY_THREADS"))
    TD = T;
  ht_pdd *D = ht_pd_diagonal_new(job, TD);
  if (D) {
    start go = { NULL, D, TD, 0 };
    const bool ran = team(job, TD, &go);
    const bool over = ran && ht_pd_diagonal_overflowed(D);
    ht_pd_diagonal_free(D);
    if (!ran)
      return HT_ERR_NO_MEMORY;
    if (ht_job_cancelled(job))
      return HT_ERR_CANCELLED;
    if (!over)
      return HT_OK;
  }
  pdt S;
  memset(&S, 0, sizeof S);
  S.job = job;
  S.cj = cj;
  S.w = cj->rows[0].width;
  S.h = cj->rows[0].height;
  S.D = job->filter.reach_down;
  S.L = job->filter.reach_left;
  S.T = T;
  S.ring = T + (S.D > 1 ? S.D : 1);
  S.ch = S.w / (4 * (int64_t)T); /* the rows in flight span a quarter of the width */
  S.ch = S.ch < CH_MIN ? CH_MIN : S.ch > CH_MAX ? CH_MAX : S.ch;
  const int P = cj->planes;
  const size_t W = (size_t)S.w;
  S.acc = ht_alloc(job, (size_t)(S.D ? S.D : 1) * (size_t)S.ring * (size_t)P * W, sizeof *S.acc);
  void *prog_mem = ht_alloc(job, (size_t)S.ring + 1, sizeof *S.prog);
  S.bufs = ht_alloc_raw(job, (size_t)T * ((size_t)P + 3) * W, sizeof *S.bufs);
  S.lvs = ht_alloc_raw(job, (size_t)T * (size_t)P * W, 1);
  ht_status st = HT_OK;
  if (!S.acc || !prog_mem || !S.bufs || !S.lvs) {
    st = HT_ERR_NO_MEMORY;
    goto out;
  }
  S.prog = (row_progress *)(((uintptr_t)prog_mem + 63) & ~(uintptr_t)63);
  /* slot r starts as row r - ring, "done": row 0 waits for no one */
  for (int r = 0; r < S.ring; r++)
    atomic_init(&S.prog[r].v, 0);
  start go = { &S, NULL, T, 0 };
  if (!team(job, T, &go))
    st = HT_ERR_NO_MEMORY;
  else if (ht_job_cancelled(job))
    st = HT_ERR_CANCELLED;
out:
  free(S.acc);
  free(prog_mem);
  free(S.bufs);
  free(S.lvs);
  return st;
}

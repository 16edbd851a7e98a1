/* The multi-threaded exact CPU wavefront: Kasagi et al. Sec. III, the
 * k-delay parallel scan of error collection (k-D PEC), mapped to CPU
 * threads and to the instruction-level parallelism of one core
 * (docs/algorithms.md, "The wavefront", tells it at length).
 *
 * k-D PEC lets row y + 1 process column x once row y has finished column
 * x + k - 1 (k = job->filter.delay). Here the image is cut into bands of
 * a few rows; a free thread takes the next band (wavefront_sched.c), and
 * a band's first row follows the band above's last row through that
 * band's published progress. Inside a band, the rows advance together,
 * each a little behind the row above, so that one thread keeps several
 * independent dependency chains in flight. Two kernels run bands:
 *  - the parallelogram (wavefront_parallelogram.c), for every filter and
 *    level count: bands of up to 16 rows in chunks of 32 columns, each
 *    row's chunks shifted left of the row above's;
 *  - the diagonal kernel (wavefront_diagonal.c), for the filters that
 *    reach one row down and one column either side (Floyd-Steinberg,
 *    Sierra Lite) with binary output, where the CPU has AVX2: one SIMD
 *    lane per row, bands of up to 32 rows, which change threads between
 *    blocks (wavefront_diagonal_sched.c).
 * Every term is ht_fx_term of core/shared/fixed.h, summed as integers, so the
 * output equals ed.c bit for bit whatever the order, band heights and
 * threads.
 *
 * This file sizes the run (band heights, threads, the ring below),
 * allocates, and starts the threads.
 *
 * Memory. Inside a band, rows live in short buffers that move along the
 * row with the band's work, so that what a thread touches stays in its
 * core's caches whatever the width. Only a band's last D <= 3 rows, which
 * the next band reads, are whole rows of S ~ width + 2 * PAD values, in a
 * ring of `ring` sets (T + 1 for the parallelogram, up to 2T + 1 for the
 * diagonal kernel, whose sets are one row): band b uses set b mod ring,
 * and the set is next taken by band b + ring. Bands finish in order (a
 * band's last row needs the end of the band above), so when a thread is
 * free to take band b + T + 1 (parallelogram), at most T - 1 bands are in
 * flight, all after band b + 1 -- the only band that reads band b's
 * rows -- which is done; the diagonal kernel checks that band b + 1 is
 * done before it starts band b + ring. In all O(3 * ring * width +
 * T * G * 1024) values, never O(pixels).
 *
 * Carried rows (job.h, ht_run_band). The rows above band 0 are laid out
 * as a set too (W->top), so that band 0 reads the carried rows (zeros at
 * the top of the image) as any band reads the band above's; and a band's
 * last rows, whole in its set, leave as carried rows once it is done. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "footprint.h"
#include "wavefront_sched.h"

/* ------------------------------------------------------------ threads */

static void free_buffers(wf *W)
{
  free(W->e);
  free(W->prog_mem);
  free(W->pace_mem);
  free(W->slide);
  free(W->tiles_mem);
  free(W->dtiles_mem);
  free(W->dbands_mem);
  free(W->parked);
}

typedef struct {
  wf *W;
  int me;
  pthread_t tid;
} worker;

/* Thread `me`'s share of the run: bands off the ticket until none is
 * left (the diagonal kernel's threads share bands instead). */
static void work(wf *W, int me)
{
  if (W->diag) {
    ht_wf_diagonal_work(W, me);
    return;
  }
  const int64_t t_start = wf_stat_clock();
  WF_STAT_SET(W, me, cpu0, sched_getcpu());
  W->pace[me].t_mark = ht_now_ns();
  band B;
  while (!ht_job_cancelled(W->job) && ht_wf_ticket_take(W, ht_wf_band_rows(W, me), NULL, &B)) {
    if (!W->band(W, me, &B))
      break;
    ht_wf_carry_out(W, &B);
    WF_STAT(W, me, bands, 1);
    WF_STAT(W, me, rows, B.g);
    /* only the calling thread reports progress (and may cancel); bands
     * finish in order, so every row above this band's end is done */
    if (me == 0 && !ht_job_tick(W->job, B.y0 + B.g, W->h))
      break;
  }
  WF_STAT_SET(W, me, run_ns, ht_now_ns() - t_start);
  WF_STAT_SET(W, me, cpu1, sched_getcpu());
}

/* A helper: once T is final, thread k works, if it is one of them. */
static void helper(void *arg, int k)
{
  wf *W = arg;
  while (atomic_load_explicit(&W->go, memory_order_acquire) == 0)
    sched_yield();
  if (k < W->T)
    work(W, k);
}

static void *worker_main(void *arg)
{
  worker *k = arg;
  helper(k->W, k->me);
  return NULL;
}

/* Bench builds (HT_WF_STATS): where each thread's time went. */
static void stats_threads(const wf *W)
{
  fprintf(stderr, "wavefront: %d threads, %lld bands\n", W->T, (long long)(atomic_load(&W->ticket) >> 33));
  for (int t = 0; t < W->T; t++) {
    const wf_stats *s = &W->st[t];
    fprintf(stderr,
            "  thread %2d cpu %2d-%2d: %4lld bands %5lld rows, run %7.2f ms, waiting %7.2f ms in %6lld waits, "
            "blocked %6.2f ms in %4lld, pace %u, %lld steps/switches, sched %.2f ms, %lld blocks of %.0f\n",
            t, s->cpu0, s->cpu1, (long long)s->bands, (long long)s->rows, (double)s->run_ns / 1e6,
            (double)s->wait_ns / 1e6, (long long)s->waits, (double)s->block_ns / 1e6, (long long)s->blocks,
            atomic_load(&W->pace[t].ns16), (long long)s->steps, (double)s->sched_ns / 1e6, (long long)s->nblk,
            s->nblk ? (double)s->iters / (double)s->nblk : 0.0);
  }
}

/* The same for the whole run: t = entry, threads started, go, thread 0
 * done, joined; clean-up until now. */
static void stats_times(const int64_t t[5])
{
  fprintf(stderr, "wavefront: set-up %.2f ms (threads %.2f), thread 0 %.2f ms, joins %.2f ms, clean-up %.2f ms\n",
          (double)(t[2] - t[0]) / 1e6, (double)(t[2] - t[1]) / 1e6, (double)(t[3] - t[2]) / 1e6,
          (double)(t[4] - t[3]) / 1e6, (double)(ht_now_ns() - t[4]) / 1e6);
}

ht_status ht_wavefront_run(ht_job *job, const ht_rows *rows)
{
  int64_t tm[5] = { wf_stat_clock(), 0, 0, 0, 0 }; /* bench builds: stats_times */
  const ht_filter *f = &job->filter;
  wf W;
  memset(&W, 0, sizeof W);
  W.rows = rows;
  W.job = job;
  W.w = rows->width;
  W.h = rows->height;
  W.nchunks = (W.w + C - 1) / C;
  int T = job->threads < 1 ? 1 : job->threads > MAX_THREADS ? MAX_THREADS : job->threads;
  /* Band height: at most bg rows, G for the most interleaved chains,
   * unless that makes the chain of bands the bottleneck. A band can start
   * about bg + 1 chunk steps after the one above, and its thread needs
   * about w / C of them for a band: with T bands in flight, the chain
   * leaves slack while T * (bg + 1) * C <= w. Below 8 rows, though, a
   * thread loses half its interleaved chains, which costs more than the
   * chain of bands: 8 rows stay while T * 9 * C <= w (BENCHMARKS.md).
   * The slower threads take bands of down to bg / 2 rows
   * (ht_wf_band_rows). */
  W.diag = WF_DIAG && job->levels == 2 && f->reach_left <= 1 && f->reach_right <= 1 && f->reach_down <= 1 &&
           wf_cpu_has_avx2();
  int64_t in_flight;
  if (W.diag) {
    /* The same for the diagonal kernel, whose next band starts about
     * 2 * bg + DMIN columns after the band above (its shortest block), in
     * bands of whole vectors. */
    W.bg = DG;
    while (W.bg > 8 && (int64_t)T * (2 * W.bg + DMIN) > W.w)
      W.bg -= 8;
    W.gmin = 8;
    in_flight = (W.w + 2 * W.bg) / (2 * W.bg + DMIN);
    /* A thread costs its start and wake-ups whatever its share; below
     * about 2^18 pixels a thread, that share no longer pays for them
     * (BENCHMARKS.md). */
    const int64_t share = W.w * W.h >> 18;
    if (!WF_TEST && in_flight > share) /* test builds: many threads on small images too */
      in_flight = share;
  } else {
    W.bg = G;
    while (W.bg > BG_MIN && (int64_t)T * (W.bg + 1) * C > W.w)
      W.bg /= 2;
    W.gmin = W.bg / 2 > BG_MIN ? W.bg / 2 : BG_MIN;
    /* Nor can more bands be in flight than the width holds: a band lasts
     * about nchunks + bg steps and the next starts bg + 1 steps after it.
     * A thread beyond that would only wait, and cost its start. */
    in_flight = (W.nchunks + W.bg) / (W.bg + 1);
  }
  const int64_t nbands = (W.h + W.gmin - 1) / W.gmin;
  if (T > nbands)
    T = (int)nbands; /* a thread without a band would only wait */
  if (T > in_flight)
    T = in_flight > 1 ? (int)in_flight : 1;
  /* Row stride: the data and its pads, plus a skew. In a step, row j
   * works C + L columns left of row j - 1, L1 sets repeat every 4096
   * bytes, and S = a multiple of 1024 values would put every row's chunk
   * in the same few sets; S = C + L + 48 (mod 1024) puts consecutive rows
   * 192 bytes (three lines) apart in the cache instead. */
  const size_t skew = (size_t)(C + ht_footprint_of(f).left + 48);
  W.S = (((size_t)W.nchunks * C + 2 * PAD + 1023 - skew) & ~(size_t)1023) + skew;
  W.levels = job->levels;
  ht_weight_box_of(f, &W.box);

  ht_status st = HT_OK;
  worker *workers = NULL;
  int inited = 0; /* progress slots with a mutex and condition variable */
  bool idle_ok = false; /* idle_lock and idle_wake too */
  /* With very wide images the per-thread rows add up: if they cannot be
   * had, run with half the threads (down to one) rather than fail. */
  W.set_rows = W.diag ? 1 : HT_FILTER_MAX_DOWN; /* the diagonal kernel's filters reach one row down */
  for (;;) {
    /* The diagonal kernel's bands may be more than its threads (parked
     * bands): up to DRING per thread, as many as the width holds. */
    W.ring = T + 1;
    if (W.diag)
      W.ring = (int)((int64_t)DRING * T / 2 < in_flight ? (int64_t)DRING * T / 2 : in_flight > T ? in_flight : T) + 1;
    /* the diagonal kernel writes every column of a set that it reads
     * (iteration i reads column i + 1 < w, once the band above has
     * published it), and its thread buffers before it reads them */
    W.e = (W.diag ? ht_alloc_raw : ht_alloc)(job, (size_t)W.ring * (size_t)W.set_rows, W.S * sizeof *W.e);
    /* calloc aligns to 16 bytes only: take one slot more and round up, so
     * that every counter has its own cache line */
    W.prog_mem = ht_alloc(job, (size_t)W.ring + 1, sizeof *W.prog);
    W.pace_mem = ht_alloc(job, (size_t)T + 1, sizeof *W.pace);
    W.prog = W.prog_mem ? (wf_progress *)(((uintptr_t)W.prog_mem + 63) & ~(uintptr_t)63) : NULL;
    W.pace = W.pace_mem ? (pace *)(((uintptr_t)W.pace_mem + 63) & ~(uintptr_t)63) : NULL;
    workers = ht_alloc(job, (size_t)T, sizeof *workers);
    /* the kernel's own buffers */
    const bool kernel_ok = W.diag ? ht_wf_diagonal_alloc(&W, T) : ht_wf_parallelogram_alloc(&W, T);
    if ((W.e && W.prog && W.pace && workers && kernel_ok) || T == 1)
      break;
    free_buffers(&W);
    free(workers);
    T /= 2;
  }
  W.dk = W.diag ? 1 : ht_footprint_of(f).down;
  W.top_mem = ht_alloc(job, (size_t)W.dk, W.S * sizeof *W.top_mem);
  W.top = W.top_mem ? W.top_mem + PAD : NULL;
  for (int up = 1; W.top && up <= W.dk; up++) {
    const int32_t *carried = ht_job_carry_in_row(job, W.w, up);
    if (carried)
      memcpy(W.top + (size_t)(W.dk - up) * W.S, carried, (size_t)W.w * sizeof *carried);
  }
  ht_job_carry_begin(job, W.w, W.h);
  bool lt_ok = ht_level_table_init(&W.lt, job, W.levels);
  if (!W.e || !W.top || !W.prog || !W.pace || !workers || !lt_ok ||
      (W.diag ? !W.dtiles || !W.dbands || !W.parked : !W.slide || !W.tiles)) {
    st = HT_ERR_NO_MEMORY;
    goto out;
  }
  job->msg[0] = '\0'; /* a failed try above is no failure of the run */
  pthread_condattr_t ca;
  bool ca_ok = pthread_condattr_init(&ca) == 0;
  if (ca_ok)
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* the clock ht_wf_wait_1ms reads */
  for (; inited < W.ring; inited++) {
    atomic_init(&W.prog[inited].v, 0);
    atomic_init(&W.prog[inited].sleepers, 0);
    atomic_init(&W.prog[inited].polling, 0);
    if (pthread_mutex_init(&W.prog[inited].lock, NULL) != 0)
      break;
    if (!ca_ok || pthread_cond_init(&W.prog[inited].wake, &ca) != 0) {
      pthread_mutex_destroy(&W.prog[inited].lock);
      break;
    }
  }
  if (ca_ok && pthread_mutex_init(&W.idle_lock, NULL) == 0) {
    if (pthread_cond_init(&W.idle_wake, &ca) == 0)
      idle_ok = true;
    else
      pthread_mutex_destroy(&W.idle_lock);
  }
  if (ca_ok)
    pthread_condattr_destroy(&ca);
  if (inited < W.ring || !idle_ok) {
    ht_set_msg(job->msg, "out of memory: could not create the wavefront's synchronisation objects");
    st = HT_ERR_NO_MEMORY;
    goto out;
  }
  W.band = ht_wf_parallelogram(f, wf_cpu_has_avx2(), W.levels == 2); /* unused with W.diag: see work() */

  /* Start the helpers; if one cannot be created, run with those that
   * were (the band assignment is fixed only once `go` is set). */
  for (int t = 0; t < T; t++)
    atomic_init(&W.pace[t].ns16, 0);
  for (int k = 0; W.parked && k < W.ring; k++) {
    atomic_init(&W.parked[k].b, -1);
    atomic_init(&W.parked[k].need, 0);
  }
  atomic_init(&W.nparked, 0);
  atomic_init(&W.rows_done, 0);
  atomic_init(&W.idlers, 0);
  atomic_init(&W.sleepers, 0);
  atomic_init(&W.beat, 0);
  atomic_init(&W.go, 0);
  atomic_init(&W.ticket, 0);
  int started = 1;
  tm[1] = wf_stat_clock();
  if (job->pool) /* the context's threads, kept from its last run */
    started += ht_pool_start(job->pool, T - 1, helper, &W);
  else
    for (int t = 1; t < T; t++) {
      workers[t].W = &W;
      workers[t].me = t;
      if (pthread_create(&workers[t].tid, NULL, worker_main, &workers[t]) != 0)
        break;
      started++;
    }
  W.T = started;
  W.stall_ns = started <= ht_online_cores() ? STALL_NS_CORES : STALL_NS;
  tm[2] = wf_stat_clock();
  atomic_store_explicit(&W.go, 1, memory_order_release);
  work(&W, 0);
  tm[3] = wf_stat_clock();
  if (job->pool)
    ht_pool_wait(job->pool);
  else
    for (int t = 1; t < started; t++)
      pthread_join(workers[t].tid, NULL);
  tm[4] = wf_stat_clock();
  if (ht_job_cancelled(job))
    st = HT_ERR_CANCELLED;
  if (WF_STATS)
    stats_threads(&W);
out:
  if (idle_ok) {
    pthread_mutex_destroy(&W.idle_lock);
    pthread_cond_destroy(&W.idle_wake);
  }
  for (int k = 0; k < inited; k++) {
    pthread_mutex_destroy(&W.prog[k].lock);
    pthread_cond_destroy(&W.prog[k].wake);
  }
  free_buffers(&W);
  free(W.top_mem);
  free(workers);
  ht_level_table_free(&W.lt);
  if (WF_STATS && tm[4])
    stats_times(tm);
  return st;
}

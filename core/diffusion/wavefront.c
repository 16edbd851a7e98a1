/* The multi-threaded exact CPU wavefront: Kasagi et al. Sec. III, the
 * k-delay parallel scan of error collection (k-D PEC), mapped to CPU
 * threads and to the instruction-level parallelism of one core.
 *
 * k-D PEC lets row y + 1 process column x once row y has finished column
 * x + k - 1 (k = job->filter.delay). Here the image is cut into bands of
 * up to G rows and every row into chunks of C columns. Chunk c of a
 * band's row j covers columns [c*C - L*j, (c+1)*C - L*j) (L = the
 * filter's reach to the lower left, k - 1): a parallelogram, so row j can
 * do its chunk c one step after row j - 1 did its chunk c. The whole chunk
 * of the row above is then done, which lets the part of a pixel's sum
 * that comes from the rows above be computed for a whole chunk at once.
 *
 *  - A free thread takes the next band from an atomic ticket, so bands
 *    start in order and a thread only ever waits for a band that a
 *    running thread holds. The first row of band b follows the last row
 *    of band b - 1 through a per-band progress counter (C11
 *    release/acquire), published every PUB chunk steps; the other rows
 *    of a band follow rows of their own band.
 *  - A band can go no faster than the band above, and the cores of a
 *    virtual machine need not be equally fast: under full load the GPU
 *    host runs the same code up to 2.3x slower on some vCPUs than on
 *    others. Bands of equal height would make the whole chain run at the
 *    pace of its slowest thread (BENCHMARKS.md). So a band's height is
 *    chosen when a thread takes it, in proportion to that thread's recent
 *    pace (time per row-chunk, waits left out): the fastest thread takes
 *    bands of bg rows, one half as fast bands of bg / 2. Every band then
 *    does a step in about the same time, and the chain goes at the sum of
 *    the threads' rates. Heights never change what is computed. (The
 *    diagonal kernel goes further: its bands change threads; below.)
 *  - Inside a band the rows are processed interleaved: in step s row j
 *    does chunk s - j. The in-row dependency chains (each pixel needs the
 *    error of its left neighbour) of different rows are independent;
 *    groups of ILP = 8 of them run in one loop, pixel by pixel, so the
 *    core overlaps them. This is what makes one thread about twice as
 *    fast as a single chain (EC-RC).
 *  - Speed-up with threads is bounded by the chain of bands: a band
 *    starts about (rows + 1) * C columns after the band above, so with T
 *    threads and W columns it pays while T * (rows + 1) * C is below W.
 *    Hence C = 32 (a chunk is still four AVX2 vectors) and bands of at
 *    most 16 rows (fewer rows read from another core's cache), or 8 or 4
 *    when the image is too narrow for that many threads.
 *  - For each row and chunk, first the "upper" sum (the input plus the
 *    terms of every tap with dy >= 1) is computed for all C columns in a
 *    vectorisable loop (SIMD; AVX2 when the CPU has it), then the chain
 *    adds the dy == 0 terms pixel by pixel.
 * Every term is ht_fx_term of core/fixed.h, summed as integers, so the
 * output equals core/ed.c bit for bit whatever the order.
 *
 * Two band geometries share the tickets, progress counters and rings:
 *  - the parallelogram above (run_band), for every filter and level count;
 *  - the diagonal kernel (diag_band, below), for the filters that reach
 *    one row down and one column either side (Floyd-Steinberg, Sierra
 *    Lite) with binary output, where the CPU has AVX2: the k-delay scan
 *    with one SIMD lane per row. Its bands span 2 (rows - 1) columns
 *    instead of (rows + 1) * C, so they can be taller (32 rows) and the
 *    chain of bands leaves far more slack; one thread is also faster
 *    (0.68 against 1.26 ns per pixel on the 2-core machine, 1.11-1.47
 *    against 1.53 in the GPU host's tables; BENCHMARKS.md).
 *
 * Memory. Inside a band, error rows are short buffers that slide along
 * with the chunks (see ER below), input is loaded and output stored a
 * few chunks at a time: what a thread touches stays in its core's caches
 * whatever the width (with whole rows, 16K-wide bands ran from memory and
 * a thread was half as fast). Only a band's last D <= 3 rows, which the
 * next band reads, are whole rows of S ~ width + 2 * PAD values, in a ring
 * of `ring` sets (T + 1 for the parallelogram, up to 2T + 1 for the
 * diagonal kernel, whose sets are one row): band b uses set b mod ring,
 * and the set is next taken by band b + ring. Bands finish in order (a
 * band's last row needs the end of the band above), so when a thread is
 * free to take band b + T + 1 (parallelogram), at most T - 1 bands are in
 * flight, all after band b + 1 -- the only band that reads band b's
 * rows -- which is done; the diagonal kernel checks that band b + 1 is
 * done before it starts band b + ring. In all O(3 * ring * width +
 * T * G * ER) values, never O(pixels). */
#include "impl.h"
#include "levels.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HT_AI static inline __attribute__((always_inline))
/* The HT_WF_* knobs may be set with -D for experiments (bench builds);
 * the defaults are the measured best. */
#ifndef HT_WF_G
#define HT_WF_G 16
#endif
#ifndef HT_WF_C
#define HT_WF_C 32
#endif
#ifndef HT_WF_SHIFT
#define HT_WF_SHIFT 0 /* 0: the filter's reach L */
#endif
#ifndef HT_WF_PUB
#define HT_WF_PUB 2
#endif
#ifndef HT_WF_SLACK
#define HT_WF_SLACK 2
#endif
#define G HT_WF_G         /* most rows per band (>= HT_FILTER_MAX_DOWN + 1)     */
#define C HT_WF_C         /* columns per chunk (> the filter's width)           */
#define ILP 8             /* chains interleaved in one loop (registers allow 8) */
#define PAD 8             /* zero columns left and right of an error row (>= 4) */
#define PUB HT_WF_PUB     /* steps between two publications of a band's progress */
#define SLACK HT_WF_SLACK /* extra steps a waiting band lets its predecessor run */
#ifndef HT_WF_STALL_NS
#define HT_WF_STALL_NS 50000
#endif
#ifndef HT_WF_STALL_NS_CORES
#define HT_WF_STALL_NS_CORES 1000000
#endif
#ifndef HT_WF_POLL_NS
#define HT_WF_POLL_NS 2000000
#endif
#define STALL_NS HT_WF_STALL_NS /* no sign of life above this long: a waiter blocks */
#define STALL_NS_CORES HT_WF_STALL_NS_CORES /* the same, with no more threads than cores */
#define POLL_NS HT_WF_POLL_NS   /* a waiter blocks after this long in any case     */
#ifndef HT_WF_PACE_UNITS
#define HT_WF_PACE_UNITS 4096
#endif
/* row-chunks between two pace samples: about 0.4 ms, so that a pace is
 * a core's lasting speed, not a hiccup */
#define PACE_UNITS HT_WF_PACE_UNITS
#define BOXW (HT_FILTER_MAX_LEFT + HT_FILTER_MAX_RIGHT + 1)
#define MAX_THREADS 1024

#define BG_MIN 4  /* fewest rows per band but the last                    */
_Static_assert(BG_MIN > HT_FILTER_MAX_DOWN, "a band must cover the filter's rows");
_Static_assert(G < 256, "the ticket holds a band's height in 8 bits");
_Static_assert(C > HT_FILTER_MAX_LEFT + HT_FILTER_MAX_RIGHT + 1, "a chunk must exceed the delay");

typedef struct {
  _Alignas(64) _Atomic uint64_t v; /* (band << 32) | steps done           */
  _Atomic int sleepers;            /* threads blocked on `wake`            */
  _Atomic int polling;             /* this band polls for the band above   */
  pthread_mutex_t lock;
  pthread_cond_t wake;
} progress;

/* The chunk a row works on, in a fixed layout: with a compile-time
 * stride between the G tiles, the interleaved loop addresses every row
 * from one base and one index register (with row buffers of run-time
 * stride it ran out of registers and spilled the row offsets). */
#define TH 8 /* halo: the previous chunk's last errors (>= HT_FILTER_MAX_RIGHT) */
#ifndef HT_WF_IOB
#define HT_WF_IOB 1024
#endif
#define IOB HT_WF_IOB /* columns a row loads, or stores, per call (shorter spans
                  * measured slower with 2 threads: the interleaved rows'
                  * input streams are too short for the prefetchers)    */
typedef struct {
  _Alignas(64) int32_t u[C]; /* upper sums of the chunk; whole cache lines
                              * per tile, so no two threads share one  */
  int32_t e[TH + C]; /* e[TH + i]: error of column i; e[TH - k]: halo    */
  uint8_t lv[C];     /* level indices                                    */
  int32_t in[IOB];   /* input values of columns in0 .. in1 - 1           */
  uint8_t out[IOB + C]; /* level indices of columns out0 .. (not yet stored) */
  int64_t in0, in1, out0;
} tile;

/* Error rows inside a band live in short buffers of ER values that slide
 * along the row: when a chunk would not fit, the last KEEP columns move
 * to the front. KEEP covers every column a later reader still needs: row
 * j + dy reads row j from (dy - 1) * C + dy * L + R columns left of row
 * j's newest chunk. Only the band's last D rows, which the next band
 * (another thread, maybe far behind) reads, are whole rows. So the
 * memory a band touches moves along with its chunks and stays in the
 * core's caches, whatever the width. */
#define ER 1024
#define KEEP (4 * C)
_Static_assert(KEEP >= (HT_FILTER_MAX_DOWN - 1) * C + HT_FILTER_MAX_DOWN * HT_FILTER_MAX_LEFT + HT_FILTER_MAX_RIGHT &&
                   KEEP >= TH,
               "KEEP must cover what later rows read");
_Static_assert(ER >= KEEP + 2 * C + PAD, "a sliding row must hold KEEP columns and a chunk");

/* A band: rows y0 .. y0 + g - 1; the band above has gprev rows. */
typedef struct {
  int64_t b, y0;
  int g, gprev;
} band;

/* A thread's recent pace: nanoseconds x 16 per row-chunk, not counting
 * waits; 0 until measured. */
typedef struct {
  _Alignas(64) _Atomic uint32_t ns16;
  /* the sample under way, the thread's own: it runs on across bands, so
   * that bands shorter than PACE_UNITS row-chunks are measured too */
  int64_t t_mark, waited, units;
} pace;

typedef struct wf wf;
typedef struct dtile dtile; /* a thread's buffers for the diagonal kernel */
typedef struct dband dband; /* a diagonal band between two blocks         */
/* A parked diagonal band: the band (or -1) and what its next block needs
 * of the band above's progress */
typedef struct {
  _Atomic int64_t b;
  _Atomic uint64_t need;
} dpark_slot;
/* Runs band B by thread `me`; false when the run was cancelled. */
typedef bool (*band_fn)(wf *W, int me, const band *B);

struct wf {
  const ht_rows *rows;
  ht_job *job;
  int64_t w, h;
  int64_t nchunks;     /* chunks covering the width                    */
  size_t S;            /* row stride of every row buffer, in elements   */
  int T;               /* running threads                               */
  int64_t stall_ns;    /* no sign of life above this long: a waiter blocks */
  int bg;              /* most rows per band, G or less                  */
  int gmin;            /* fewest rows per band but the last              */
  int levels;
  int32_t q[HT_FILTER_MAX_DOWN + 1][BOXW]; /* q[dy][HT_FILTER_MAX_LEFT + dx] */
  ht_level_table lt;
  int ring;            /* slots for bands in flight: T + 1, more with dbands */
  int set_rows;        /* rows per set of e: a band's last rows            */
  int32_t *e;          /* ring sets of set_rows whole rows                 */
  int32_t *slide;      /* T threads' G sliding rows of PAD + ER values   */
  int32_t *zero;       /* a row of zeros: the rows above the image       */
  tile *tiles;         /* T threads' G chunk tiles                         */
  bool diag;           /* the diagonal kernel: bands of multiples of 8 rows */
  dtile *dtiles;       /* its T threads' buffers                           */
  void *dtiles_mem;
  dband *dbands;       /* ring slots: band b's state in slot b mod ring   */
  void *dbands_mem;
  dpark_slot *parked;  /* ring slots: the bands no thread holds           */
  _Alignas(64) _Atomic int nparked;
  _Atomic int64_t rows_done; /* rows above this are finished              */
  _Alignas(64) _Atomic int idlers; /* threads with no block to run        */
  _Atomic int sleepers;      /* of those, blocked on idle_wake            */
  _Atomic uint64_t beat;     /* blocks done while some thread idled       */
  pthread_mutex_t idle_lock;
  pthread_cond_t idle_wake;
  void *tiles_mem;
  pace *pace;          /* T threads' paces                               */
  void *pace_mem;
#ifdef HT_WF_STATS /* bench builds: where each thread's time went */
  struct {
    _Alignas(64) int64_t bands, rows, steps, waits, blocks, wait_ns, block_ns, run_ns, sched_ns, nblk, iters;
    int cpu0, cpu1;
  } st[MAX_THREADS];
#endif
  progress *prog;      /* ring slots, slot = band mod ring               */
  void *prog_mem;
  band_fn band;
  _Atomic int go;      /* > 0: T is final, workers may start            */
  /* the ticket: bands are taken in order; alone on its cache line, since
   * every band start writes it and every thread reads the fields above.
   * (next band << 33) | (its first row << 8) | rows of the band before:
   * HT_MAX_SIDE rows fit in 25 bits, G in 8 */
  _Alignas(64) _Atomic uint64_t ticket;
  char ticket_line[64 - sizeof(uint64_t)];
};

/* ------------------------------------------------------------ waiting */

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

#ifdef HT_WF_HEIGHT_TEST
/* Test builds only: bands taken of other than bg rows, so that the
 * test can tell that heights varied. */
_Atomic long long ht_wf_test_other_heights;
/* and diagonal bands that went on in another thread than their last block */
_Atomic long long ht_wf_test_moves;
/* and diagonal blocks that started before the band above had done every
 * column they read (never, or the output is a matter of luck) */
_Atomic long long ht_wf_test_overruns;
#endif

/* Waits on c (m held) for a millisecond at most: a bounded wait, so a
 * cancel (or a lost wake-up) is noticed within a millisecond. */
static void wait_1ms(pthread_cond_t *c, pthread_mutex_t *m)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  ts.tv_nsec += 1000000;
  if (ts.tv_nsec >= 1000000000) {
    ts.tv_sec++;
    ts.tv_nsec -= 1000000000;
  }
  pthread_cond_timedwait(c, m, &ts);
}

/* Waits until band `b` has published `need` steps; false when the run
 * was cancelled meanwhile. `seen` caches the last value read, so a thread
 * that is well behind touches the shared cache line only rarely. When it
 * does have to wait, it waits for SLACK steps more than it needs (at
 * most `all`, the band's total), so that it does not trail the
 * band at the minimum distance, re-reading the counter (and taking the
 * line away from the writer) at every step. `waited` accumulates the time spent here.
 * It spins first: while the thread it waits for runs, the wait is a
 * fraction of a step. When the band above shows no life for a while
 * (its thread was preempted) it blocks, so that its core can go to that
 * thread (or to another program) rather than to spinning; publish()
 * wakes it. "A while" is 50 us with more threads than cores, but 1 ms
 * with no more: on the 16-vCPU GPU host every vCPU pauses for 20-100 us
 * hundreds of times a second, a wake-up took about 0.7 ms, and with 50 us
 * a thread spent over 40% of a 16K run blocked (BENCHMARKS.md). With a
 * program hogging one of 2 cores, never blocking made 2 threads slower
 * than 1 (the waiter kept the free core busy, so the stalled thread was
 * never moved to it). */
static bool wait_band(wf *W, int me, int64_t b, uint64_t need, uint64_t all, uint64_t *seen,
                      int64_t *waited)
{
  (void)me; /* used by HT_WF_STATS builds */
  const uint64_t base = (uint64_t)b << 32;
  if (*seen >= base + need)
    return true;
  progress *p = &W->prog[b % W->ring];
  if ((*seen = atomic_load_explicit(&p->v, memory_order_acquire)) >= base + need)
    return true;
  const uint64_t want = base + (need + SLACK < all ? need + SLACK : all);
  /* Poll while the band we wait for is alive: a running band publishes
   * every few microseconds, and a blocked thread would pay a wake-up
   * (tens of microseconds, more in a VM) on the critical chain of bands.
   * A band that polls for its own predecessor says so in `polling`, so
   * a queue of waiting bands keeps polling while its head moves. When the
   * band above neither moves nor polls for STALL_NS, its thread has been
   * preempted (a busy machine) or sleeps: then block too (if allowed),
   * and leave the core to whoever can use it; likewise after POLL_NS. */
  progress *mine = &W->prog[(b + 1) % W->ring];
  atomic_store_explicit(&mine->polling, 1, memory_order_relaxed);
  const int64_t t0 = ht_now_ns();
  bool ok = true;
  int64_t t_moved = t0;
  uint64_t last = *seen;
  bool block = false;
  for (unsigned spins = 1;; spins++) {
    if ((*seen = atomic_load_explicit(&p->v, memory_order_acquire)) >= want)
      break;
    if (ht_job_cancelled(W->job)) {
      ok = false;
      break;
    }
    if (spins < 256)
      cpu_relax();
    else
      sched_yield(); /* lets a preempted thread of ours run on this core */
    if (spins % 16 == 0) {
      const int64_t now = ht_now_ns();
      if (*seen != last || atomic_load_explicit(&p->polling, memory_order_relaxed)) {
        last = *seen;
        t_moved = now;
      }
      if (now - t_moved > W->stall_ns || now - t0 > POLL_NS) {
        block = true;
        break;
      }
    }
  }
  atomic_store_explicit(&mine->polling, 0, memory_order_relaxed);
#ifdef HT_WF_STATS
  W->st[me].waits++;
  const int64_t t_block = ht_now_ns();
  if (block)
    W->st[me].blocks++;
#endif
  if (block) {
    pthread_mutex_lock(&p->lock);
    /* seq_cst on both sides: either publish() sees this sleeper, or
     * the load below sees its store */
    atomic_fetch_add(&p->sleepers, 1);
    while ((*seen = atomic_load(&p->v)) < want) {
      if (ht_job_cancelled(W->job)) {
        ok = false;
        break;
      }
      wait_1ms(&p->wake, &p->lock);
    }
    atomic_fetch_sub(&p->sleepers, 1);
    pthread_mutex_unlock(&p->lock);
  }
  *waited += ht_now_ns() - t0;
#ifdef HT_WF_STATS
  W->st[me].wait_ns += ht_now_ns() - t0;
  if (block)
    W->st[me].block_ns += ht_now_ns() - t_block;
#endif
  return ok;
}

static void publish(progress *p, uint64_t value)
{
  atomic_store(&p->v, value);
  if (atomic_load(&p->sleepers) > 0) {
    pthread_mutex_lock(&p->lock);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
  }
}

/* Takes the next band of the image off the ticket: `want` rows, fewer
 * at its end; when `may` is given, only if it lets band b of g rows
 * start now. False when no band is left, or it may not start. Bands are
 * numbered in order and stacked: each starts below the one taken before
 * it. */
static bool ticket_take(wf *W, int want, bool (*may)(const wf *W, int64_t b, int g), band *B)
{
  uint64_t t = atomic_load_explicit(&W->ticket, memory_order_relaxed);
  for (;;) {
    const int64_t b = (int64_t)(t >> 33), y0 = (int64_t)((t >> 8) & 0x1ffffff);
    if (y0 >= W->h)
      return false;
    const int g = (int)(W->h - y0 < want ? W->h - y0 : want);
    if (may && !may(W, b, g))
      return false;
    const uint64_t next = ((uint64_t)(b + 1) << 33) | ((uint64_t)(y0 + g) << 8) | (uint64_t)g;
    if (atomic_compare_exchange_weak_explicit(&W->ticket, &t, next, memory_order_relaxed, memory_order_relaxed)) {
      B->b = b;
      B->y0 = y0;
      B->g = g;
      B->gprev = b > 0 ? (int)(t & 0xff) : g;
#ifdef HT_WF_HEIGHT_TEST
      if (g != W->bg && y0 + g < W->h)
        atomic_fetch_add_explicit(&ht_wf_test_other_heights, 1, memory_order_relaxed);
#endif
      return true;
    }
  }
}

/* Band b's last rows (set b mod ring), at column 0. */
static inline int32_t *band_set(const wf *W, int64_t b)
{
  return W->e + (size_t)(b % W->ring) * (size_t)W->set_rows * W->S + PAD;
}

/* A new sample of thread `me`'s pace once `units` row-chunks were done
 * since `t_mark`, `waited` of that time waiting: time per row-chunk,
 * smoothed. */
static void pace_sample(wf *W, int me, int64_t *t_mark, int64_t *waited, int64_t *units)
{
  if (*units < PACE_UNITS)
    return;
  const int64_t now = ht_now_ns();
  const int64_t busy = now - *t_mark - *waited;
  if (busy > 0) {
    const uint64_t sample = (uint64_t)busy * 16 / (uint64_t)*units;
    const uint32_t old = atomic_load_explicit(&W->pace[me].ns16, memory_order_relaxed);
    const uint64_t p = old ? (3 * (uint64_t)old + sample) / 4 : sample;
    atomic_store_explicit(&W->pace[me].ns16, p > UINT32_MAX ? UINT32_MAX : (uint32_t)p, memory_order_relaxed);
  }
  *t_mark = now;
  *waited = 0;
  *units = 0;
}

/* ------------------------------------------------------------- kernels */



/* The upper sum of n columns of one row into `u`: the input plus the
 * terms of the taps with dy >= 1 (sources x - R .. x + L of the rows
 * above). `in` and s1..s3 point at the chunk's first column. Every column
 * is independent: this loop vectorises. */
HT_AI void upper(const int L, const int R, const int D, const wf *W, int32_t *restrict u,
                 const int32_t *restrict in, const int32_t *restrict s1, const int32_t *restrict s2,
                 const int32_t *restrict s3, int64_t n)
{
  int32_t q[HT_FILTER_MAX_DOWN][BOXW];
#pragma GCC unroll 4
  for (int dy = 1; dy <= D; dy++)
#pragma GCC unroll 16
    for (int k = 0; k <= L + R; k++)
      q[dy - 1][k] = W->q[dy][HT_FILTER_MAX_LEFT + R - k]; /* source x - R + k: dx = R - k */
  for (int64_t x = 0; x < n; x++) {
    int32_t v = in[x];
#pragma GCC unroll 16
    for (int k = 0; k <= L + R; k++) {
      v += ht_fx_term(s1[x - R + k], q[0][k]);
      if (D >= 2)
        v += ht_fx_term(s2[x - R + k], q[D >= 2 ? 1 : 0][k]);
      if (D >= 3)
        v += ht_fx_term(s3[x - R + k], q[D >= 3 ? 2 : 0][k]);
    }
    u[x] = v;
  }
}

/* The in-row chains of N rows (tiles t[0..N-1]) at once, n columns
 * each: each pixel adds the terms of its left neighbours (dy == 0) to
 * its upper sum and rounds. Rows are independent, so their chains
 * overlap in the pipeline. */
HT_AI void chains(const int N, const int R, const bool binary, const wf *W, tile *restrict t, int64_t n)
{
  int32_t q0[HT_FILTER_MAX_RIGHT + 1];
  int32_t prev[ILP];
#pragma GCC unroll 8
  for (int k = 1; k <= R; k++)
    q0[k] = W->q[0][HT_FILTER_MAX_LEFT + k];
#pragma GCC unroll 8
  for (int r = 0; r < N; r++)
    prev[r] = t[r].e[TH - 1];
  for (int64_t i = 0; i < n; i++) {
#pragma GCC unroll 8
    for (int r = 0; r < N; r++) {
      int32_t v = t[r].u[i] + ht_fx_term(prev[r], q0[1]);
#pragma GCC unroll 4
      for (int k = 2; k <= R; k++)
        v += ht_fx_term(t[r].e[TH + i - k], q0[k]); /* stored k steps ago: off the chain */
      int32_t err = ht_level_round(binary, &W->lt, v, &t[r].lv[i]);
      t[r].e[TH + i] = err;
      prev[r] = err;
    }
  }
}

/* n_rows consecutive rows, in as few groups of interleaved chains as
 * ILP allows, of sizes as even as can be: 10 rows run as 5 + 5, not
 * 8 + 2, since a group of 2 chains waits on its chains' latency. */
HT_AI void chains_n(const int R, const bool binary, const wf *W, int n_rows, tile *t, int64_t n)
{
  for (int k; n_rows > 0; n_rows -= k, t += k) {
    const int groups = (n_rows + ILP - 1) / ILP;
    k = (n_rows + groups - 1) / groups;
    switch (k) {
#define CASE(k) case k: chains(k, R, binary, W, t, n); break;
      CASE(1) CASE(2) CASE(3) CASE(4) CASE(5) CASE(6) CASE(7) CASE(8)
#undef CASE
    default: break;
    }
  }
}
_Static_assert(ILP == 8, "chains_n has one case per row count up to ILP");

/* Chunk c of row j (0-based in its band) covers image columns
 * [c*C - L*j, (c+1)*C - L*j), clipped to [0, w): each row's chunks sit L
 * columns left of the row above's (a parallelogram, as the blocks of the
 * paper's Sec. V), so when row j - 1 has finished its chunk c, every
 * column that row j's chunk c reads from it (up to x1 - 1 + L) is done,
 * and row j can follow one step behind (LAG = 1). */
static inline int64_t chunk_x0(int64_t c, int L, int j) { return c * C - (int64_t)L * j; }
/* first and last chunk of row j with any column in [0, w) */
static inline int64_t chunk_first(int L, int j) { return ((int64_t)L * j) / C; }
static inline int64_t chunk_last(int64_t w, int L, int j) { return (w + (int64_t)L * j + C - 1) / C - 1; }
/* steps of a band of g rows: its last row starts at step g - 1 */
static inline int64_t band_steps(int64_t w, int L, int g) { return g - 1 + chunk_last(w, L, g - 1) + 1; }

/* Band B, rows y0 .. y0 + g - 1, by worker `me`; false when the run was
 * cancelled. */
HT_AI bool run_band(const int L, const int R, const int D, const bool binary, wf *W, int me, const band *B)
{
  const int64_t b = B->b;
  const size_t S = W->S;
  const int64_t w = W->w;
  const int64_t y0 = B->y0;
  const int SH = HT_WF_SHIFT > 0 ? HT_WF_SHIFT : L; /* chunk shift per row, >= L */
  const int g = B->g;
  /* the band's last D rows are whole rows in set b mod (T + 1), where the
   * next band finds them; the others slide */
  int32_t *set = band_set(W, b);
  const int32_t *prev = b > 0 ? band_set(W, b - 1) : NULL;
  tile *T = W->tiles + (size_t)me * G;
  /* where row j's errors are: column x at er[j][x - base[j]] */
  int32_t *er[G];
  int64_t base[G];
  for (int j = 0; j < g; j++) {
    if (j >= g - D) {
      er[j] = set + (size_t)(j - (g - D)) * S;
    } else {
      er[j] = W->slide + ((size_t)me * G + (size_t)j) * (PAD + ER) + PAD;
      memset(er[j] - PAD, 0, PAD * sizeof(int32_t)); /* columns < 0 */
    }
    base[j] = 0; /* whole rows keep it */
  }
  /* rows above the band: the band above's last D rows, or zeros */
  const int32_t *above[HT_FILTER_MAX_DOWN + 1];
  for (int dy = 1; dy <= HT_FILTER_MAX_DOWN; dy++)
    above[dy] = dy > D ? NULL : y0 - dy >= 0 ? prev + (size_t)(D - dy) * S : W->zero + PAD;
  const int64_t steps = band_steps(w, SH, g);
  /* the band above and its last row */
  const int64_t prev_all = band_steps(w, SH, B->gprev);
  const int jp = B->gprev - 1;
  const int64_t last0 = chunk_last(w, SH, 0);
  progress *mine = &W->prog[b % W->ring];
  int64_t cfirst[G], clast[G], xs0[G], xs1[G];
  for (int j = 0; j < g; j++) {
    cfirst[j] = chunk_first(SH, j);
    clast[j] = chunk_last(w, SH, j);
  }
  /* this thread's pace: time per row-chunk, without the waits */
  pace *const pc = &W->pace[me];
  int64_t t_mark = pc->t_mark, waited = pc->waited, units = pc->units;
  uint64_t seen = 0; /* the band above's progress, as last read */
  int jlo = 0, jhi = -1;
  for (int64_t s = 0; s < steps; s++) {
    if (b > 0 && s <= last0) {
      /* Row 0's chunk s reads the band above's last rows up to column
       * x1 - 1 + L; the last row (the most shifted, the latest) has that
       * column once it has finished chunk cp, at its step cp + jp. Later
       * rows of this band need no more than row 0 did. */
      const int64_t x1 = chunk_x0(s + 1, SH, 0) < w ? chunk_x0(s + 1, SH, 0) : w;
      const int64_t col = x1 - 1 + L < w - 1 ? x1 - 1 + L : w - 1;
      const int64_t cp = (col + 1 + (int64_t)SH * jp + C - 1) / C - 1;
      if (!wait_band(W, me, b - 1, (uint64_t)(cp + jp + 1), (uint64_t)prev_all, &seen, &waited))
        return false;
      /* The band above was written by another core, so every line row 0
       * reads from it is a coherence miss. Fetch the lines of a chunk it
       * will need two steps from now, once `seen` shows them finished
       * (never earlier: a line fetched before its last write is only
       * taken back by the writer). */
      const int64_t c_pre = s + 2, prev_chunk = (int64_t)(seen & 0xffffffffu) - jp - 1;
      if ((int64_t)(seen >> 32) == b - 1 && c_pre <= last0 &&
          chunk_x0(prev_chunk + 1, SH, jp) >= chunk_x0(c_pre + 1, SH, 0) + L)
        for (int dy = 1; dy <= D; dy++)
          for (int64_t x = c_pre * C; x < c_pre * C + C && x < w; x += 64 / (int64_t)sizeof(int32_t))
            __builtin_prefetch(above[dy] + x);
    }
    /* rows with a chunk in this step (c = s - j): jlo .. jhi, since
     * j + first[j] and j + last[j] grow with j; among them the run
     * [jf0, jf1] whose chunks are whole (C columns) shares the
     * interleaved loop, and a clipped chunk (a row's first or last) runs
     * alone */
    while (jhi + 1 < g && s - (jhi + 1) >= cfirst[jhi + 1])
      jhi++;
    while (s - jlo > clast[jlo])
      jlo++;
    int jf0 = g, jf1 = -1;
    for (int j = jlo; j <= jhi; j++) {
      const int64_t c = s - j, cx0 = chunk_x0(c, SH, j);
      const int64_t x0 = cx0 > 0 ? cx0 : 0, x1 = cx0 + C < w ? cx0 + C : w;
      xs0[j] = x0;
      xs1[j] = x1;
      tile *t = &T[j];
      if (c == cfirst[j])
        t->in0 = t->in1 = t->out0 = 0;
      if (x1 > t->in1) { /* load the next IOB columns */
        t->in0 = x0;
        t->in1 = x0 + IOB < w ? x0 + IOB : w;
        W->rows->load(W->rows, y0 + j, t->in0, t->in1 - t->in0, t->in);
      }
      const int32_t *sp[HT_FILTER_MAX_DOWN + 1] = { NULL, NULL, NULL, NULL };
      for (int dy = 1; dy <= D; dy++)
        sp[dy] = j >= dy ? er[j - dy] + (x0 - base[j - dy]) : above[dy - j] + x0;
      upper(L, R, D, W, t->u, t->in + (x0 - t->in0), sp[1], sp[2], sp[3], x1 - x0);
      /* the halo (zeros left of column 0) */
      memcpy(T[j].e, er[j] + (x0 - base[j]) - TH, TH * sizeof(int32_t));
      if (x1 - x0 == C) {
        jf0 = j < jf0 ? j : jf0;
        jf1 = j;
      }
    }
    for (int j = jlo; j <= jhi; j++)
      if (j < jf0 || j > jf1)
        chains(1, R, binary, W, T + j, xs1[j] - xs0[j]);
    if (jf0 <= jf1)
      chains_n(R, binary, W, jf1 - jf0 + 1, T + jf0, C);
    for (int j = jlo; j <= jhi; j++) {
      const int64_t x0 = xs0[j], x1 = xs1[j], n = x1 - x0;
      int32_t *const r = er[j];
      if (j < g - D && x1 + PAD - base[j] > ER) {
        /* slide: keep the last KEEP columns before this chunk */
        const int64_t nb = x0 - KEEP;
        memmove(r, r + (nb - base[j]), (size_t)(x0 - nb) * sizeof(int32_t));
        base[j] = nb;
      }
      const int64_t rb = base[j];
      if (n == C) /* the usual case, with a size the compiler inlines */
        memcpy(r + (x0 - rb), T[j].e + TH, C * sizeof(int32_t));
      else
        memcpy(r + (x0 - rb), T[j].e + TH, (size_t)n * sizeof(int32_t));
      if (x1 == w) /* columns right of the image read as zeros */
        memset(r + (w - rb), 0, PAD * sizeof(int32_t));
      /* output, IOB columns a call; 1-bit output takes whole bytes, so
       * up to 7 columns wait for the next call */
      tile *t = &T[j];
      if (n == C)
        memcpy(t->out + (x0 - t->out0), t->lv, C);
      else
        memcpy(t->out + (x0 - t->out0), t->lv, (size_t)n);
      if (x1 == w || x1 - t->out0 >= IOB) {
        const int64_t xe = x1 == w ? w : x1 & ~(int64_t)7;
        W->rows->store(W->rows, y0 + j, t->out0, xe - t->out0, t->out);
        for (int64_t i = 0; i < x1 - xe; i++) /* fewer than 8 */
          t->out[i] = t->out[xe - t->out0 + i];
        t->out0 = xe;
      }
    }
    /* publish every PUB steps: each store may have to take the line back
     * from a reader on another core */
    if ((s + 1) % PUB == 0 || s + 1 == steps)
      publish(mine, ((uint64_t)b << 32) | (uint64_t)(s + 1));
    units += jhi - jlo + 1;
    if ((s & 7) == 7)
      pace_sample(W, me, &t_mark, &waited, &units);
  }
  pc->t_mark = t_mark;
  pc->waited = waited;
  pc->units = units;
  return true;
}

/* Instances: the footprints of the built-in filters and the largest one
 * (any filter), binary and multi-level; on x86 also compiled for AVX2,
 * picked at run time when the CPU has it. */
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define WF_AVX2 1
#define AVX2_INSTANCE(L, R, D)                                                                     \
  __attribute__((target("avx2"))) static bool band_##L##R##D##_b_avx2(wf *W, int me, const band *B)      \
  {                                                                                                \
    return run_band(L, R, D, true, W, me, B);                                                      \
  }                                                                                                \
  __attribute__((target("avx2"))) static bool band_##L##R##D##_m_avx2(wf *W, int me, const band *B)      \
  {                                                                                                \
    return run_band(L, R, D, false, W, me, B);                                                     \
  }
#define AVX2_FNS(L, R, D) { band_##L##R##D##_m_avx2, band_##L##R##D##_b_avx2 }
#else
#define WF_AVX2 0
#define AVX2_INSTANCE(L, R, D)
#define AVX2_FNS(L, R, D) { band_##L##R##D##_m, band_##L##R##D##_b }
#endif
#define INSTANCE(L, R, D)                                                                       \
  static bool band_##L##R##D##_b(wf *W, int me, const band *B) { return run_band(L, R, D, true, W, me, B); }  \
  static bool band_##L##R##D##_m(wf *W, int me, const band *B) { return run_band(L, R, D, false, W, me, B); } \
  AVX2_INSTANCE(L, R, D)
INSTANCE(1, 1, 1) /* Floyd-Steinberg, Sierra Lite          */
INSTANCE(2, 2, 1) /* Burkes, Sierra-2                      */
INSTANCE(1, 2, 2) /* Atkinson                              */
INSTANCE(2, 2, 2) /* Jarvis-Judice-Ninke, Stucki, Sierra-3 */
INSTANCE(4, 4, 3) /* any filter                            */

static const struct {
  int l, r, d;
  band_fn fn[2][2]; /* [avx2][binary] */
} instances[] = {
#define ROW(L, R, D) { L, R, D, { { band_##L##R##D##_m, band_##L##R##D##_b }, AVX2_FNS(L, R, D) } }
  ROW(1, 1, 1), ROW(2, 2, 1), ROW(1, 2, 2), ROW(2, 2, 2), ROW(4, 4, 3),
#undef ROW
};

static bool cpu_has_avx2(void)
{
#if WF_AVX2 && !defined(HT_WF_NO_AVX2) /* -DHT_WF_NO_AVX2: test the SSE2 path */
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2");
#else
  return false;
#endif
}

/* ----------------------------------------------- the diagonal kernel */

/* For filters whose taps lie within one column left or right and one
 * row down (Floyd-Steinberg, Sierra Lite, and custom filters of that
 * shape), binary output, on CPUs with AVX2: the k-delay scan of
 * Sec. III itself, with k = 2 and one SIMD lane per row. In iteration i,
 * row j of a band of g rows (g a multiple of 8, at most DG) works on
 * column i - 2j; row j - 1 finished column i - 2j + 1 one iteration
 * before, so the g pixels of an iteration are independent and go as
 * g / 8 AVX2 vectors of 8 int32 lanes. A pixel's terms (collection
 * form, each one ht_fx_term) come from its left neighbour (the same lane,
 * one iteration before), from above-right (that vector moved up one
 * lane: lane 0 takes the last lane of the vector before, or the band
 * above's last row from memory) and from above and above-left (the moved
 * vectors of one and two iterations before).
 *
 * The band spans 2 (g - 1) columns, where the parallelogram above spans
 * (g + 1) * C: the next band can start about 2g + DMIN columns after
 * the band above, so 16 bands in flight take a tenth of a 16K row where
 * the parallelogram's took half, and a band reads the band above once
 * per g rows, up to 32 (BENCHMARKS.md, ninth session).
 * A band runs in blocks of up to DK iterations, each of which starts
 * only when the band above has done every column it reads (so it never
 * waits inside), and the band's state between blocks is a dband: bands
 * are not tied to threads (see "the diagonal kernel's threads" below).
 * Input and output go through the same short buffers a block at a time:
 * row j's input for the block is loaded into in[j], turned into one
 * vector of lanes per iteration by 8 x 8 transposes, and the
 * per-iteration threshold masks are turned back into rows the same way. */
#ifndef HT_WF_DG
#define HT_WF_DG 32
#endif
#define DG HT_WF_DG /* most rows per diagonal band: DG / 8 vectors        */
#ifndef HT_WF_DK
#ifdef HT_WF_HEIGHT_TEST /* tests: many blocks and bands in flight, small images too */
#define HT_WF_DK 32
#else
#define HT_WF_DK 256
#endif
#endif
#define DK HT_WF_DK /* iterations per block                               */
#define DPUB 32     /* iterations between two publications of progress    */
#ifndef HT_WF_DRING
#define HT_WF_DRING 4
#endif
#define DRING HT_WF_DRING /* bands in flight per thread, at most, in halves */
#ifndef HT_WF_DMIN
#ifdef HT_WF_HEIGHT_TEST
#define HT_WF_DMIN 8
#else
#define HT_WF_DMIN 32
#endif
#endif
#define DMIN HT_WF_DMIN /* shortest block but a band's last: fewer to go, a thread
                         * does another band meanwhile                   */
_Static_assert(DG % 8 == 0 && DG >= 8 && DG <= 64, "DG: a multiple of 8 up to 64");
_Static_assert(DK % DPUB == 0 && DK % 8 == 0, "a block holds whole publication spans");
_Static_assert(DMIN % 8 == 0 && DMIN >= 8 && DMIN <= DK, "DMIN: whole vectors, at most a block");

struct dtile {
  _Alignas(64) int32_t s[DK + 2][DG]; /* lanes of each iteration: input (and terms), then masks */
  _Alignas(64) int32_t in[DG][DK]; /* row j: columns i0 - 2j .. of the block, then its masks   */
  /* level indices not yet stored, from column out0[j] of the band's row
   * j: stored once DK wait (short blocks too make long stores), or when
   * the thread leaves the band (then up to 7 go to its pend) */
  uint8_t out[DG][2 * DK + 8];
};

/* A diagonal band between two of its blocks: all that the thread that
 * runs its next block needs, whichever thread ran the last one. */
struct dband {
  _Alignas(64) int32_t e[DG], c1[DG], c2[DG]; /* diag_block's registers                */
  uint8_t pend[DG][8]; /* while parked: row j's level indices from column out0[j] (< 8) */
  int64_t out0[DG];
  int64_t b, y0;       /* the band: rows y0 .. y0 + g - 1                              */
  int64_t i0, n;       /* its next iteration, and its iterations in all               */
  int g;
  int by;              /* the thread that ran its last block                         */
};

#if WF_AVX2
#include <immintrin.h>
#define DAVX2 __attribute__((target("avx2")))

/* 8 x 8 int32 transpose in registers: r[k] holds row k (8 columns); o[c]
 * gets column c. */
HT_AI DAVX2 void transpose8r(__m256i r[8], __m256i o[8])
{
  __m256i t[8];
  for (int k = 0; k < 8; k += 2) {
    t[k] = _mm256_unpacklo_epi32(r[k], r[k + 1]);
    t[k + 1] = _mm256_unpackhi_epi32(r[k], r[k + 1]);
  }
  for (int k = 0; k < 8; k += 4) {
    r[k] = _mm256_unpacklo_epi64(t[k], t[k + 2]);
    r[k + 1] = _mm256_unpackhi_epi64(t[k], t[k + 2]);
    r[k + 2] = _mm256_unpacklo_epi64(t[k + 1], t[k + 3]);
    r[k + 3] = _mm256_unpackhi_epi64(t[k + 1], t[k + 3]);
  }
  for (int k = 0; k < 4; k++) {
    o[k] = _mm256_permute2x128_si256(r[k], r[k + 4], 0x20);
    o[k + 4] = _mm256_permute2x128_si256(r[k], r[k + 4], 0x31);
  }
}

/* The same from src (row stride ss) to dst (row stride ds). */
HT_AI DAVX2 void transpose8(const int32_t *src, size_t ss, int32_t *dst, size_t ds)
{
  __m256i r[8], o[8];
  for (int k = 0; k < 8; k++)
    r[k] = _mm256_load_si256((const __m256i *)(const void *)(src + (size_t)k * ss));
  transpose8r(r, o);
  for (int k = 0; k < 8; k++)
    _mm256_store_si256((__m256i *)(void *)(dst + (size_t)k * ds), o[k]);
}

#define DTERM(e, q) _mm256_srai_epi32(_mm256_add_epi32(_mm256_mullo_epi32(e, q), half_q), HT_Q_BITS)

/* The next n iterations of band S (n from dspan), of g rows in NV =
 * ceil(g / 8) vectors (rows past g, in the image's last band only, run on
 * zeros and are not stored), in thread buffers d. The band above must
 * have done the columns the block reads. True when that was the
 * band's last block: then S may be taken by a new band at once. */
HT_AI DAVX2 bool diag_block(const int NV, wf *W, dband *S, dtile *d, bool resume, const int n)
{
  const int64_t b = S->b, w = W->w, y0 = S->y0, i0 = S->i0, N = S->n;
  const int g = S->g, skew = 2 * (8 * NV - 1);
  int32_t *const next = band_set(W, b);
  const int32_t *const above = b > 0 ? band_set(W, b - 1) : W->zero + PAD;
  const ht_rows *const rows = W->rows;
  const uint8_t *const gray =
      rows->in_format == HT_FORMAT_U8 && rows->in_channels == 1 && rows->in_channel == 0 ? rows->in : NULL;
  progress *const mine = &W->prog[b % W->ring];
  const __m256i half_q = _mm256_set1_epi32(HT_Q_HALF), q_left = _mm256_set1_epi32(W->q[0][HT_FILTER_MAX_LEFT + 1]),
                q_ur = _mm256_set1_epi32(W->q[1][HT_FILTER_MAX_LEFT - 1]),
                q_up = _mm256_set1_epi32(W->q[1][HT_FILTER_MAX_LEFT]),
                q_ul = _mm256_set1_epi32(W->q[1][HT_FILTER_MAX_LEFT + 1]), mid = _mm256_set1_epi32(HT_FX_ONE / 2),
                one = _mm256_set1_epi32(HT_FX_ONE), up = _mm256_setr_epi32(7, 0, 1, 2, 3, 4, 5, 6),
                lanes = _mm256_setr_epi32(0, -2, -4, -6, -8, -10, -12, -14), wv = _mm256_set1_epi32((int)w),
                zero = _mm256_setzero_si256();
  /* e: the errors of the iteration before (the left neighbours). The
   * terms from above and above-left, which come from the moved vector of
   * one and two iterations before, are added to the coming iterations'
   * slots of s as soon as the moved vector is known (so only e stays in
   * registers); c1 and c2 carry those for the first two iterations of
   * the next block. At iteration -1, lane 0 of the moved vector is
   * column 0 of the row above. */
  __m256i e[DG / 8], c1[DG / 8], c2[DG / 8];
  if (i0 == 0) {
    for (int k = 0; k < NV; k++)
      e[k] = c1[k] = c2[k] = zero;
    const __m256i a = _mm256_setr_epi32(above[0], 0, 0, 0, 0, 0, 0, 0);
    c1[0] = DTERM(a, q_up);
    c2[0] = DTERM(a, q_ul);
    for (int j = 0; j < g; j++)
      S->out0[j] = 0;
  } else {
    for (int k = 0; k < NV; k++) {
      e[k] = _mm256_load_si256((const __m256i *)(const void *)&S->e[8 * k]);
      c1[k] = _mm256_load_si256((const __m256i *)(const void *)&S->c1[8 * k]);
      c2[k] = _mm256_load_si256((const __m256i *)(const void *)&S->c2[8 * k]);
    }
    if (resume) /* the thread ran another band last */
      for (int j = 0; j < g; j++)
        memcpy(d->out[j], S->pend[j], 8);
  }
  const int n8 = (n + 7) & ~7; /* n is a multiple of 8 but in the last block */
#ifdef HT_WF_HEIGHT_TEST /* iteration i reads column i + 1 of the band above */
  if (b > 0 && atomic_load(&W->prog[(b - 1) % W->ring].v) <
                   (((uint64_t)(b - 1) << 32) | (uint64_t)(i0 + n + 1 < w ? i0 + n + 1 : w)))
    atomic_fetch_add_explicit(&ht_wf_test_overruns, 1, memory_order_relaxed);
#endif
  /* input: row j's columns i0 - 2j .. i0 - 2j + n8 - 1, zeros outside.
   * An 8-bit gray image (the CLI's usual input), in a block that lies
   * inside it, is read here as bytes (ht_fx_from_u8: v * 257); anything
   * else goes through rows->load. */
  if (gray && i0 - skew >= 0 && i0 + n8 <= w) {
    for (int k = 0; k < NV; k++)
      for (int t = 0; t < n8; t += 8) {
        __m256i r[8], o[8];
        for (int l = 0; l < 8; l++) {
          const int j = 8 * k + l;
          if (j >= g) {
            r[l] = zero;
            continue;
          }
          const uint8_t *p = gray + (size_t)(y0 + j) * rows->in_stride + (size_t)(i0 + t - 2 * j);
          const __m256i v = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)p));
          r[l] = _mm256_add_epi32(_mm256_slli_epi32(v, 8), v);
        }
        transpose8r(r, o);
        for (int c = 0; c < 8; c++)
          _mm256_store_si256((__m256i *)(void *)&d->s[t + c][8 * k], o[c]);
      }
  } else {
    for (int j = 0; j < 8 * NV; j++) {
      const int64_t x0 = i0 - 2 * j, a = x0 > 0 ? x0 : 0, z = x0 + n8 < w ? x0 + n8 : w;
      if (j >= g || a >= z) {
        memset(d->in[j], 0, (size_t)n8 * sizeof(int32_t));
        continue;
      }
      memset(d->in[j], 0, (size_t)(a - x0) * sizeof(int32_t));
      rows->load(rows, y0 + j, a, z - a, d->in[j] + (a - x0));
      memset(d->in[j] + (z - x0), 0, (size_t)(x0 + n8 - z) * sizeof(int32_t));
    }
    for (int k = 0; k < NV; k++)
      for (int t = 0; t < n8; t += 8)
        transpose8(&d->in[8 * k][t], DK, &d->s[t][8 * k], DG);
  }
  for (int k = 0; k < NV; k++) {
    _mm256_store_si256((__m256i *)(void *)&d->s[n8][8 * k], zero);
    _mm256_store_si256((__m256i *)(void *)&d->s[n8 + 1][8 * k], zero);
    __m256i *s0 = (__m256i *)(void *)&d->s[0][8 * k], *s1 = (__m256i *)(void *)&d->s[1][8 * k];
    _mm256_store_si256(s0, _mm256_add_epi32(_mm256_load_si256(s0), c1[k]));
    _mm256_store_si256(s1, _mm256_add_epi32(_mm256_load_si256(s1), c2[k]));
  }
  for (int t = 0; t < n; t++) {
    const int64_t i = i0 + t;
    /* the last row's columns < i - skew are done */
    if ((i & (DPUB - 1)) == 0 && i > skew)
      publish(mine, ((uint64_t)b << 32) | (uint64_t)(i - skew < w ? i - skew : w));
    __m256i carry = _mm256_set1_epi32(i + 1 < w ? above[i + 1] : 0);
    const int edge = i < skew || i >= w;
#pragma GCC unroll 8
    for (int k = 0; k < NV; k++) {
      const __m256i m = _mm256_permutevar8x32_epi32(e[k], up);
      const __m256i a = _mm256_blend_epi32(m, carry, 1); /* the moved vector: above-right */
      carry = m;
      __m256i *const st = (__m256i *)(void *)&d->s[t][8 * k], *const s1 = st + DG / 8, *const s2 = st + DG / 4;
      __m256i v = _mm256_load_si256(st);
      v = _mm256_add_epi32(v, _mm256_add_epi32(DTERM(e[k], q_left), DTERM(a, q_ur)));
      /* a is above (above-left) of this lane's pixel one (two) iterations on */
      _mm256_store_si256(s1, _mm256_add_epi32(_mm256_load_si256(s1), DTERM(a, q_up)));
      _mm256_store_si256(s2, _mm256_add_epi32(_mm256_load_si256(s2), DTERM(a, q_ul)));
      const __m256i on = _mm256_cmpgt_epi32(v, mid); /* ht_fx_binary */
      __m256i err = _mm256_sub_epi32(v, _mm256_and_si256(on, one));
      if (edge) { /* lanes outside the image: their error is dropped */
        const __m256i x = _mm256_add_epi32(lanes, _mm256_set1_epi32((int)(i - 16 * k)));
        err = _mm256_and_si256(err, _mm256_andnot_si256(_mm256_cmpgt_epi32(zero, x), _mm256_cmpgt_epi32(wv, x)));
      }
      _mm256_store_si256(st, on);
      e[k] = err;
    }
    const int64_t xl = i - skew; /* the last row's column */
    if (xl >= 0 && xl < w)
      next[xl] = _mm256_extract_epi32(e[NV - 1], 7);
  }
  for (int k = 0; k < NV; k++) {
    _mm256_store_si256((__m256i *)(void *)&S->e[8 * k], e[k]);
    _mm256_store_si256((__m256i *)(void *)&S->c1[8 * k],
                       _mm256_load_si256((const __m256i *)(const void *)&d->s[n][8 * k]));
    _mm256_store_si256((__m256i *)(void *)&S->c2[8 * k],
                       _mm256_load_si256((const __m256i *)(const void *)&d->s[n + 1][8 * k]));
  }
  /* output: the masks back into rows, then each row's columns in order
   * (1-bit output takes whole bytes: up to 7 columns wait) */
  for (int k = 0; k < NV; k++)
    for (int t = 0; t < n8; t += 8)
      transpose8(&d->s[t][8 * k], DG, &d->in[8 * k][t], DK);
  for (int j = 0; j < g; j++) {
    const int64_t x0 = i0 - 2 * j, a = x0 > 0 ? x0 : 0, z = x0 + n < w ? x0 + n : w;
    if (a < z) {
      uint8_t *o = d->out[j] + (a - S->out0[j]);
      const int32_t *src = d->in[j] + (a - x0);
      for (int64_t k = 0; k < z - a; k++)
        o[k] = (uint8_t)(src[k] & 1);
      const int64_t xe = z == w ? w : z & ~(int64_t)7;
      if (xe > S->out0[j] && (z == w || z - S->out0[j] >= DK)) {
        rows->store(rows, y0 + j, S->out0[j], xe - S->out0[j], d->out[j]);
        memmove(d->out[j], d->out[j] + (xe - S->out0[j]), (size_t)(z - xe));
        S->out0[j] = xe;
      }
    }
  }
  S->i0 = i0 + n;
  if (i0 + n < N) {
    if (i0 + n > skew)
      publish(mine, ((uint64_t)b << 32) | (uint64_t)(i0 + n - skew < w ? i0 + n - skew : w));
    return false;
  }
  publish(mine, ((uint64_t)b << 32) | (uint64_t)w);
  return true;
}

DAVX2 static bool diag_block_avx2(wf *W, dband *S, dtile *d, bool resume, int n)
{
  switch ((S->g + 7) / 8) {
  case 1: return diag_block(1, W, S, d, resume, n);
  case 2: return diag_block(2, W, S, d, resume, n);
#if DG > 16
  case 3: return diag_block(3, W, S, d, resume, n);
  case 4: return diag_block(4, W, S, d, resume, n);
#endif
#if DG > 32
  case 5: return diag_block(5, W, S, d, resume, n);
  case 6: return diag_block(6, W, S, d, resume, n);
  case 7: return diag_block(7, W, S, d, resume, n);
  case 8: return diag_block(8, W, S, d, resume, n);
#endif
  default: return true;
  }
}
#endif

/* ----------------------------------------- the diagonal kernel's threads */
#if WF_AVX2

/* The diagonal kernel's bands are not tied to threads. A band is run a
 * block at a time, and a block only starts once the band above has done
 * every column it reads, so it never waits inside. Between two blocks
 * the band's state (a dband, under 1 KB) lies in the ring, and whichever
 * thread is free runs the next block of some band. A thread keeps its
 * band while the band's next block can run (taking a parked band higher
 * in the image first measured slower: more switches). When its own band
 * would have to wait, it parks it and runs the highest parked band that
 * can go on, or starts a new band, as long as the ring has a slot for
 * one; only when there is none of these does it wait. So a slower
 * thread (a busy core of a virtual machine) holds up only the band it
 * runs, for one block, not a chain of bands: the other threads work on
 * the bands around it. A block runs as far as the band above allows, up
 * to DK iterations; below DMIN the thread looks for other work first.
 * No thread ever waits inside a block, and the highest unfinished band
 * can always go on, so some thread always can: there is no deadlock
 * however the bands are parked. On an instance of the 16-vCPU GPU host
 * this made 16 threads 1.24x faster at 16K² (1.3-1.5x at 8K² and 4K²),
 * a thread waiting 1-5% of the time where it had waited 10-20%
 * (BENCHMARKS.md, tenth session). */

/* What the shortest block band b may run, from iteration i0 of n, needs
 * of the band above's progress: column i + 1 is read in iteration i. */
static inline uint64_t dneed(const wf *W, int64_t b, int64_t i0, int64_t n)
{
  if (b == 0)
    return 0;
  const int64_t end = i0 + (n - i0 < DMIN ? n - i0 : DMIN) + 1;
  return ((uint64_t)(b - 1) << 32) | (uint64_t)(end < W->w ? end : W->w);
}

static inline bool dmet(const wf *W, int64_t b, uint64_t need)
{
  return b == 0 || atomic_load_explicit(&W->prog[(b - 1) % W->ring].v, memory_order_acquire) >= need;
}

/* The iterations band S may run now: up to DK, as many as the band
 * above has done columns for, a multiple of 8 (the block's carries sit
 * in whole vectors of 8) but for the band's last; 0 below DMIN. */
static int64_t dspan(const wf *W, const dband *S)
{
  const int64_t left = S->n - S->i0;
  int64_t n = left < DK ? left : DK;
  if (S->b > 0) {
    const uint64_t v = atomic_load_explicit(&W->prog[(S->b - 1) % W->ring].v, memory_order_acquire),
                   base = (uint64_t)(S->b - 1) << 32;
    const int64_t done = v < base ? 0 : (int64_t)(v - base); /* columns done by the band above */
    const int64_t a = done - 1 - S->i0; /* iterations up to done - 2 read columns it has */
    if (done < W->w && a < n)
      n = a < 0 ? 0 : a & ~(int64_t)7;
  }
  return n < left && n < DMIN ? 0 : n;
}

static inline bool dready(const wf *W, const dband *S)
{
  return dspan(W, S) > 0;
}

/* Stores what thread buffers d hold of band S's output, but for the
 * last columns of a row short of a whole byte, which go to S->pend: the
 * next thread to run S may be another. */
static void dflush(const wf *W, dband *S, dtile *d)
{
  for (int j = 0; j < S->g; j++) {
    const int64_t x = S->i0 - 2 * j, z = x < 0 ? 0 : x < W->w ? x : W->w; /* columns < z are done */
    const int64_t xe = z == W->w ? z : z & ~(int64_t)7;
    if (xe > S->out0[j]) {
      W->rows->store(W->rows, S->y0 + j, S->out0[j], xe - S->out0[j], d->out[j]);
      memmove(d->out[j], d->out[j] + (xe - S->out0[j]), (size_t)(z - xe));
      S->out0[j] = xe;
    }
    memcpy(S->pend[j], d->out[j], 8);
  }
}

/* Puts band S, held by the caller, where any thread may take it. */
static void dpark(wf *W, dband *S)
{
  dpark_slot *p = &W->parked[S->b % W->ring];
  atomic_store_explicit(&p->need, dneed(W, S->b, S->i0, S->n), memory_order_relaxed);
  atomic_fetch_add_explicit(&W->nparked, 1, memory_order_relaxed);
  atomic_store_explicit(&p->b, S->b, memory_order_release); /* after S itself */
}

/* Takes the highest parked band whose next block can run (the bands
 * below wait on it); NULL when there is none. */
static dband *dclaim(wf *W)
{
  while (atomic_load_explicit(&W->nparked, memory_order_relaxed) > 0) {
    int64_t best = -1;
    for (int s = 0; s < W->ring; s++) {
      const int64_t b = atomic_load_explicit(&W->parked[s].b, memory_order_relaxed);
      if (b >= 0 && (best < 0 || b < best) &&
          dmet(W, b, atomic_load_explicit(&W->parked[s].need, memory_order_relaxed)))
        best = b;
    }
    if (best < 0)
      return NULL;
    int64_t expect = best;
    if (atomic_compare_exchange_strong_explicit(&W->parked[best % W->ring].b, &expect, -1, memory_order_acq_rel,
                                                memory_order_relaxed)) {
      atomic_fetch_sub_explicit(&W->nparked, 1, memory_order_relaxed);
      dband *S = W->dbands + best % W->ring;
      if (dready(W, S))
        return S;
      dpark(W, S); /* read while another thread ran it: not ready after all */
    }
  }
  return NULL;
}

static inline bool dtickets_left(const wf *W)
{
  return (int64_t)((atomic_load_explicit(&W->ticket, memory_order_relaxed) >> 8) & 0x1ffffff) < W->h;
}

static int band_rows(const wf *W, int me);

/* A diagonal band of g rows: its iterations (the last row's column
 * w - 1 is at w - 1 + 2 (rows - 1), rows rounded up to whole vectors). */
static inline int64_t dband_iters(const wf *W, int g) { return W->w + 2 * (8 * ((g + 7) / 8) - 1); }

/* Whether band b of g rows may start: its slot of the ring is free and
 * its first block can run. Band b takes slot b mod ring from band
 * b - ring, whose last row band b - ring + 1 reads: that one must be
 * done. */
static bool dmay(const wf *W, int64_t b, int g)
{
  const int64_t r = b - W->ring + 1;
  if (r >= 0 && atomic_load_explicit(&W->prog[r % W->ring].v, memory_order_acquire) <
                    (((uint64_t)r << 32) | (uint64_t)W->w))
    return false;
  return dmet(W, b, dneed(W, b, 0, dband_iters(W, g)));
}

/* Starts the next band of the image if it may; NULL otherwise. */
static dband *dtake(wf *W, int me)
{
  band B;
  if (!ticket_take(W, band_rows(W, me), dmay, &B))
    return NULL;
  dband *S = W->dbands + B.b % W->ring;
  S->b = B.b;
  S->y0 = B.y0;
  S->g = B.g;
  S->i0 = 0;
  S->n = dband_iters(W, B.g);
  return S;
}

static void dwork(wf *W, int me)
{
#ifdef HT_WF_STATS
  const int64_t t_start = ht_now_ns();
  W->st[me].cpu0 = sched_getcpu();
#endif
  dtile *const d = W->dtiles + me;
  dband *cur = NULL;
  const dband *ran = NULL; /* the band whose output d holds */
  int64_t ticked = 0;
  /* idling: since when, the last sign of life, spins */
  bool idle = false;
  int64_t t_idle = 0, t_moved = 0;
  uint64_t beat = 0;
  unsigned spins = 0;
  while (!ht_job_cancelled(W->job)) {
    /* only the calling thread reports progress (and may cancel) */
    if (me == 0) {
      const int64_t r = atomic_load_explicit(&W->rows_done, memory_order_relaxed);
      if (r > ticked && !ht_job_tick(W->job, ticked = r, W->h))
        break;
    }
#ifdef HT_WF_STATS
    const int64_t t_sched = ht_now_ns();
#endif
    int64_t n = cur ? dspan(W, cur) : 0;
    bool own = n > 0;
#ifdef HT_WF_HEIGHT_TEST /* tests: hand bands over that could go on, too */
    if (own && ((uint64_t)ht_now_ns() * 0x9e3779b97f4a7c15u >> 61) == 0)
      own = false;
#endif
    dband *S = own ? cur : dclaim(W);
    if (!S)
      S = dtake(W, me);
    if (S && S != cur)
      n = dspan(W, S); /* > 0: it was ready, and the band above only moves on */
#ifdef HT_WF_STATS
    W->st[me].sched_ns += ht_now_ns() - t_sched;
#endif
    if (S) {
      if (idle) {
        idle = false;
        atomic_fetch_sub(&W->idlers, 1);
#ifdef HT_WF_STATS
        W->st[me].wait_ns += ht_now_ns() - t_idle;
#endif
      }
      if (cur && S != cur) {
        dflush(W, cur, d);
        ran = NULL;
        dpark(W, cur);
#ifdef HT_WF_STATS
        W->st[me].steps++;
#endif
      }
#ifdef HT_WF_HEIGHT_TEST
      if (S->i0 > 0 && S->by != me)
        atomic_fetch_add_explicit(&ht_wf_test_moves, 1, memory_order_relaxed);
#endif
      cur = S;
      cur->by = me;
      const int64_t end = cur->y0 + cur->g;
#ifdef HT_WF_STATS
      const int g = cur->g;
#endif
      /* once its last block is done, the band's slot may be a new band's */
      const bool done = diag_block_avx2(W, cur, d, cur != ran, (int)n);
#ifdef HT_WF_STATS
      W->st[me].nblk++;
      W->st[me].iters += n;
#endif
      ran = cur;
      if (atomic_load(&W->idlers) > 0) { /* seq_cst: see the sleeper below */
        atomic_fetch_add(&W->beat, 1);
        if (atomic_load(&W->sleepers) > 0) {
          pthread_mutex_lock(&W->idle_lock);
          pthread_cond_broadcast(&W->idle_wake);
          pthread_mutex_unlock(&W->idle_lock);
        }
      }
      if (done) { /* bands end in order: each waits on the one above */
        int64_t r = atomic_load_explicit(&W->rows_done, memory_order_relaxed);
        while (r < end &&
               !atomic_compare_exchange_weak_explicit(&W->rows_done, &r, end, memory_order_relaxed,
                                                      memory_order_relaxed)) {
        }
#ifdef HT_WF_STATS
        W->st[me].bands++;
        W->st[me].rows += g;
#endif
        cur = NULL;
        ran = NULL; /* its slot may come back as another band */
      }
      continue;
    }
    if (!cur && !dtickets_left(W) && atomic_load_explicit(&W->nparked, memory_order_relaxed) == 0)
      break; /* what is left is in other threads' hands */
    /* Nothing can run: spin while other threads make progress (a block
     * takes microseconds), but when none shows for a while (preempted
     * threads, a busy machine) block, as wait_band does. */
    const int64_t now = ht_now_ns();
    if (!idle) {
      idle = true;
      atomic_fetch_add(&W->idlers, 1);
      t_idle = t_moved = now;
      beat = atomic_load(&W->beat);
      spins = 0;
#ifdef HT_WF_STATS
      W->st[me].waits++;
#endif
    }
    if (++spins < 256)
      cpu_relax();
    else
      sched_yield();
    const uint64_t bt = atomic_load(&W->beat);
    if (bt != beat) {
      beat = bt;
      t_moved = now;
    }
    if (now - t_moved > W->stall_ns || now - t_idle > POLL_NS) {
      pthread_mutex_lock(&W->idle_lock);
      atomic_fetch_add(&W->sleepers, 1);
      if (atomic_load(&W->beat) == beat)
        wait_1ms(&W->idle_wake, &W->idle_lock);
      atomic_fetch_sub(&W->sleepers, 1);
      pthread_mutex_unlock(&W->idle_lock);
      t_idle = t_moved = ht_now_ns();
#ifdef HT_WF_STATS
      W->st[me].blocks++;
#endif
    }
  }
  if (idle)
    atomic_fetch_sub(&W->idlers, 1);
#ifdef HT_WF_STATS
  W->st[me].run_ns = ht_now_ns() - t_start;
  W->st[me].cpu1 = sched_getcpu();
#endif
}
#endif

/* ------------------------------------------------------------ threads */

typedef struct {
  wf *W;
  int me;
  pthread_t tid;
} worker;

/* Rows for the next band of thread `me`: in proportion to its pace
 * (bg for the fastest thread), so that every band does a step in about
 * the same time whichever core runs it (see the top of this file). */
static int band_rows(const wf *W, int me)
{
#ifdef HT_WF_HEIGHT_TEST /* tests: bands of any height the tiles allow */
  const uint64_t r = (uint64_t)ht_now_ns() * 0x9e3779b97f4a7c15u + (uint64_t)me;
  if (W->diag)
    return 8 * (1 + (int)((r >> 40) % (uint64_t)(W->bg / 8)));
  return BG_MIN + (int)((r >> 40) % (uint64_t)(G - BG_MIN + 1));
#else
  if (W->diag) /* its bands change threads (dwork): no thread's pace is theirs */
    return W->bg;
  const uint32_t mine = atomic_load_explicit(&W->pace[me].ns16, memory_order_relaxed);
  uint32_t best = 0;
  for (int t = 0; t < W->T; t++) {
    const uint32_t p = atomic_load_explicit(&W->pace[t].ns16, memory_order_relaxed);
    if (p && (!best || p < best))
      best = p;
  }
  if (!mine || !best)
    return W->bg; /* not measured yet */
  const int g = (int)(((uint64_t)W->bg * best + mine / 2) / mine);
  return g < W->gmin ? W->gmin : g > W->bg ? W->bg : g;
#endif
}

/* Takes the next band; false when none is left. */
static bool take_band(wf *W, int me, band *B) { return ticket_take(W, band_rows(W, me), NULL, B); }

static void work(wf *W, int me)
{
#if WF_AVX2
  if (W->diag) {
    dwork(W, me);
    return;
  }
#endif
#ifdef HT_WF_STATS
  const int64_t t_start = ht_now_ns();
  W->st[me].cpu0 = sched_getcpu();
#endif
  W->pace[me].t_mark = ht_now_ns();
  band B;
  while (!ht_job_cancelled(W->job) && take_band(W, me, &B)) {
    if (!W->band(W, me, &B))
      break;
#ifdef HT_WF_STATS
    W->st[me].bands++;
    W->st[me].rows += B.g;
#endif
    /* only the calling thread reports progress (and may cancel); bands
     * finish in order, so every row above this band's end is done */
    if (me == 0 && !ht_job_tick(W->job, B.y0 + B.g, W->h))
      break;
  }
#ifdef HT_WF_STATS
  W->st[me].run_ns = ht_now_ns() - t_start;
  W->st[me].cpu1 = sched_getcpu();
#endif
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

ht_status ht_wavefront_run(ht_job *job, const ht_rows *rows)
{
#ifdef HT_WF_STATS
  const int64_t t_enter = ht_now_ns();
  int64_t t_alloc = 0, t_go = 0, t_work = 0, t_joined = 0;
#endif
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
   * chain of bands: 8 rows stay while T * 9 * C <= w (measured: 1K, 2
   * threads, 0.92 against 1.16 ms with 4 rows; 8K, 16 threads on the GPU
   * host, 16.1-17.9 against 20.8-21.0 ms). The slower threads take
   * bands of down to bg / 2 rows (band_rows). */
#if WF_AVX2 && !defined(HT_WF_NO_DIAG) /* -DHT_WF_NO_DIAG: test the parallelogram */
  W.diag = job->levels == 2 && f->reach_left <= 1 && f->reach_right <= 1 && f->reach_down <= 1 && cpu_has_avx2();
#endif
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
     * about 2^18 pixels a thread that share no longer pays for them (1K²
     * on the 16-vCPU GPU host, best of 3 rounds: 0.77 ms on 4 threads,
     * 0.91 on 8, 1.13 on 16; BENCHMARKS.md, ninth session). */
#ifndef HT_WF_HEIGHT_TEST /* test builds: many threads on small images too */
    const int64_t share = W.w * W.h >> 18;
    if (in_flight > share)
      in_flight = share;
#endif
  } else {
    W.bg = G;
    while (W.bg > BG_MIN && (int64_t)T * (W.bg + 1) * C > W.w)
      W.bg /= 2;
    W.gmin = W.bg / 2 > BG_MIN ? W.bg / 2 : BG_MIN;
    /* Nor can more bands be in flight than the width holds: a band lasts
     * about nchunks + bg steps and the next starts bg + 1 steps after it.
     * A thread beyond that would only wait, and cost its start (at 1K on
     * the 16-vCPU GPU host, 16 threads took longer than 8). */
    in_flight = (W.nchunks + W.bg) / (W.bg + 1);
  }
  const int64_t nbands = (W.h + W.gmin - 1) / W.gmin;
  if (T > nbands)
    T = (int)nbands; /* a thread without a band would only wait */
  if (T > in_flight)
    T = in_flight > 1 ? (int)in_flight : 1;
  size_t inst = 0;
  while (inst + 1 < sizeof instances / sizeof instances[0] &&
         (f->reach_left > instances[inst].l || f->reach_right > instances[inst].r ||
          f->reach_down > instances[inst].d))
    inst++;
  /* Row stride: the data and its pads, plus a skew. In a step, row j
   * works C + L columns left of row j - 1, L1 sets repeat every 4096
   * bytes, and S = a multiple of 1024 values would put every row's chunk
   * in the same few sets; S = C + L + 48 (mod 1024) puts consecutive rows
   * 192 bytes (three lines) apart in the cache instead. */
  const size_t skew = (size_t)(C + instances[inst].l + 48);
  W.S = (((size_t)W.nchunks * C + 2 * PAD + 1023 - skew) & ~(size_t)1023) + skew;
  W.levels = job->levels;
  for (int t = 0; t < f->ntaps; t++)
    W.q[f->taps[t].dy][HT_FILTER_MAX_LEFT + f->taps[t].dx] = f->taps[t].q;

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
    /* the parallelogram's buffers, or the diagonal kernel's */
    W.slide = W.diag ? NULL : ht_alloc(job, (size_t)T * G, (PAD + ER) * sizeof *W.slide);
    /* calloc aligns to 16 bytes only: one tile more, rounded up */
    W.tiles_mem = W.diag ? NULL : ht_alloc(job, (size_t)T * G + 1, sizeof *W.tiles);
    /* calloc aligns to 16 bytes only: take one slot more and round up, so
     * that every counter has its own cache line */
    W.prog_mem = ht_alloc(job, (size_t)W.ring + 1, sizeof *W.prog);
    W.pace_mem = ht_alloc(job, (size_t)T + 1, sizeof *W.pace);
    W.dtiles_mem = W.diag ? ht_alloc_raw(job, (size_t)T + 1, sizeof(dtile)) : NULL;
    W.dbands_mem = W.diag ? ht_alloc(job, (size_t)W.ring + 1, sizeof(dband)) : NULL;
    W.parked = W.diag ? ht_alloc(job, (size_t)W.ring, sizeof *W.parked) : NULL;
    workers = ht_alloc(job, (size_t)T, sizeof *workers);
    if ((W.e && W.prog_mem && W.pace_mem && workers &&
         (W.diag ? W.dtiles_mem && W.dbands_mem && W.parked : W.slide && W.tiles_mem)) ||
        T == 1)
      break;
    free(W.dtiles_mem);
    free(W.dbands_mem);
    free(W.parked);
    free(W.e);
    free(W.slide);
    free(W.tiles_mem);
    free(W.prog_mem);
    free(W.pace_mem);
    free(workers);
    T /= 2;
  }
  W.prog = W.prog_mem ? (progress *)(((uintptr_t)W.prog_mem + 63) & ~(uintptr_t)63) : NULL;
  W.tiles = W.tiles_mem ? (tile *)(((uintptr_t)W.tiles_mem + 63) & ~(uintptr_t)63) : NULL;
  W.pace = W.pace_mem ? (pace *)(((uintptr_t)W.pace_mem + 63) & ~(uintptr_t)63) : NULL;
  W.dtiles = W.dtiles_mem ? (dtile *)(((uintptr_t)W.dtiles_mem + 63) & ~(uintptr_t)63) : NULL;
  W.dbands = W.dbands_mem ? (dband *)(((uintptr_t)W.dbands_mem + 63) & ~(uintptr_t)63) : NULL;
  W.zero = ht_alloc(job, W.S, sizeof *W.zero);
  bool lt_ok = ht_level_table_init(&W.lt, job, W.levels);
  if (!W.e || !W.zero || !W.prog || !W.pace || !workers || !lt_ok ||
      (W.diag ? !W.dtiles || !W.dbands || !W.parked : !W.slide || !W.tiles)) {
    st = HT_ERR_NO_MEMORY;
    goto out;
  }
  job->msg[0] = '\0'; /* a failed try above is no failure of the run */
  pthread_condattr_t ca;
  bool ca_ok = pthread_condattr_init(&ca) == 0;
  if (ca_ok)
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* the clock wait_band reads */
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
  W.band = instances[inst].fn[cpu_has_avx2()][W.levels == 2]; /* unused with W.diag: see work() */

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
#ifdef HT_WF_STATS
  t_alloc = ht_now_ns();
#endif
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
#ifdef HT_WF_STATS
  t_go = ht_now_ns();
#endif
  atomic_store_explicit(&W.go, 1, memory_order_release);
  work(&W, 0);
#ifdef HT_WF_STATS
  t_work = ht_now_ns();
#endif
  if (job->pool)
    ht_pool_wait(job->pool);
  else
    for (int t = 1; t < started; t++)
      pthread_join(workers[t].tid, NULL);
#ifdef HT_WF_STATS
  t_joined = ht_now_ns();
#endif
  if (ht_job_cancelled(job))
    st = HT_ERR_CANCELLED;
#ifdef HT_WF_STATS /* bench builds: where each thread's time went */
  fprintf(stderr, "wavefront: %d threads, %lld bands\n", W.T, (long long)(atomic_load(&W.ticket) >> 33));
  for (int t = 0; t < W.T; t++)
    fprintf(stderr, "  thread %2d cpu %2d-%2d: %4lld bands %5lld rows, run %7.2f ms, waiting %7.2f ms in %6lld waits, blocked %6.2f ms in %4lld, pace %u, %lld steps/switches, sched %.2f ms, %lld blocks of %.0f\n",
            t, W.st[t].cpu0, W.st[t].cpu1, (long long)W.st[t].bands, (long long)W.st[t].rows, (double)W.st[t].run_ns / 1e6,
            (double)W.st[t].wait_ns / 1e6, (long long)W.st[t].waits, (double)W.st[t].block_ns / 1e6,
            (long long)W.st[t].blocks, atomic_load(&W.pace[t].ns16), (long long)W.st[t].steps,
            (double)W.st[t].sched_ns / 1e6, (long long)W.st[t].nblk,
            W.st[t].nblk ? (double)W.st[t].iters / (double)W.st[t].nblk : 0.0);
#endif
out:
  if (idle_ok) {
    pthread_mutex_destroy(&W.idle_lock);
    pthread_cond_destroy(&W.idle_wake);
  }
  for (int k = 0; k < inited; k++) {
    pthread_mutex_destroy(&W.prog[k].lock);
    pthread_cond_destroy(&W.prog[k].wake);
  }
  free(W.e);
  free(W.slide);
  free(W.zero);
  free(W.tiles_mem);
  free(W.prog_mem);
  free(W.pace_mem);
  free(W.dtiles_mem);
  free(W.dbands_mem);
  free(W.parked);
  free(workers);
  ht_level_table_free(&W.lt);
#ifdef HT_WF_STATS
  fprintf(stderr, "wavefront: set-up %.2f ms (threads %.2f), thread 0 %.2f ms, joins %.2f ms, clean-up %.2f ms\n",
          (double)(t_go - t_enter) / 1e6, (double)(t_go - t_alloc) / 1e6, (double)(t_work - t_go) / 1e6, (double)(t_joined - t_work) / 1e6,
          (double)(ht_now_ns() - t_joined) / 1e6);
#endif
  return st;
}

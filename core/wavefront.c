/* The multi-threaded exact CPU wavefront: Kasagi et al. Sec. III, the
 * k-delay parallel scan of error collection (k-D PEC), mapped to CPU
 * threads and to the instruction-level parallelism of one core.
 *
 * k-D PEC lets row y + 1 process column x once row y has finished column
 * x + k - 1 (k = job->filter.delay). Here the image is cut into bands of
 * G rows and every row into chunks of C columns, C >= k, so a lag of
 * LAG = 2 chunks between consecutive rows is a k-delay scan with room to
 * spare; the extra chunk lets the part of a pixel's sum that comes from
 * the rows above be computed for a whole chunk at once.
 *
 *  - Bands go round robin to the threads (band b to thread b mod T).
 *    The first row of band b follows the last row of band b - 1 through a
 *    per-band progress counter (C11 release/acquire), published every PUB
 *    chunk steps; the other rows of a band follow rows of their own band.
 *  - Inside a band the G rows are processed interleaved: in step s row j
 *    does chunk s - LAG * j. The in-row dependency chains (each pixel
 *    needs the error of its left neighbour) of different rows are
 *    independent; groups of ILP = 8 of them run in one loop, pixel by
 *    pixel, so the core overlaps them. This is what makes one thread
 *    about twice as fast as a single chain (EC-RC). G = 16 rather than 8
 *    halves the rows one thread reads from another's cache; images too
 *    narrow for T bands of 16 rows to overlap get bands of 8 or 4.
 *  - For each row and chunk, first the "upper" sum (the input plus the
 *    terms of every tap with dy >= 1) is computed for all C columns in a
 *    vectorisable loop (SIMD; AVX2 when the CPU has it), then the chain
 *    adds the dy == 0 terms pixel by pixel.
 * Every term is ht_fx_term of core/fixed.h, summed as integers, so the
 * output equals core/ed.c bit for bit whatever the order.
 *
 * Memory: rows of S ~ width + 2 * PAD values. The e (error) rows form a
 * ring of (T + 1) * G rows: band b uses set b mod (T + 1), and the set is
 * next taken by band b + T + 1, which runs on the thread of band b + 1,
 * the only band that reads band b's rows, after that band is done. Each
 * thread also has G rows of input values and G rows of level indices,
 * and G chunk tiles. In all O((reach_down + G * T) * width) -- here
 * reach_down <= 3 < 4 <= rows per band, so (T + 1) * G rows of e --
 * never O(pixels). */
#include "internal.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HT_AI static inline __attribute__((always_inline))
#define G 16      /* rows per band (>= HT_FILTER_MAX_DOWN + 1)           */
#define C 64      /* columns per chunk (>= the largest delay, 5)          */
#define ILP 8     /* chains interleaved in one loop (registers allow 8)   */
#define LAG 2     /* chunks between consecutive rows                       */
#define PAD 8     /* zero columns left and right of every e row (>= 4)     */
#define PUB 4     /* steps between two publications of a band's progress  */
#define SLACK 8   /* extra steps a waiting band lets its predecessor run   */
#define SPINS 1000 /* pauses (~25 us) before a waiting thread blocks        */
#define BOXW (HT_FILTER_MAX_LEFT + HT_FILTER_MAX_RIGHT + 1)
#define MAX_THREADS 1024

#define BG_MIN 4  /* fewest rows per band                                  */
_Static_assert(BG_MIN > HT_FILTER_MAX_DOWN, "a band must cover the filter's rows");
_Static_assert(C > HT_FILTER_MAX_LEFT + HT_FILTER_MAX_RIGHT + 1, "a chunk must exceed the delay");

typedef struct {
  _Alignas(64) _Atomic uint64_t v; /* (band << 32) | steps done           */
  _Atomic int sleepers;            /* threads blocked on `wake`            */
  pthread_mutex_t lock;
  pthread_cond_t wake;
} progress;

/* The chunk a row works on, in a fixed layout: with a compile-time
 * stride between the G tiles, the interleaved loop addresses every row
 * from one base and one index register (with row buffers of run-time
 * stride it ran out of registers and spilled the row offsets). */
#define TH 8 /* halo: the previous chunk's last errors (>= HT_FILTER_MAX_RIGHT) */
typedef struct {
  int32_t u[C];      /* upper sums of the chunk                          */
  int32_t e[TH + C]; /* e[TH + i]: error of column i; e[TH - k]: halo    */
  uint8_t lv[C];     /* level indices                                    */
} tile;

typedef struct wf wf;
typedef void (*band_fn)(wf *W, int me, int64_t b);

struct wf {
  const ht_rows *rows;
  ht_job *job;
  int64_t w, h;
  int64_t nchunks;     /* chunks covering the width                    */
  int64_t nfull;       /* chunks of exactly C columns                   */
  int64_t nbands;
  size_t S;            /* row stride of every row buffer, in elements   */
  int T;               /* running threads                               */
  int bg;              /* rows per band, G or less                       */
  int levels;
  int32_t q[HT_FILTER_MAX_DOWN + 1][BOXW]; /* q[dy][HT_FILTER_MAX_LEFT + dx] */
  ht_level_table lt;
  int32_t *e;          /* (T + 1) sets of G rows                         */
  int32_t *up;         /* T sets of G rows                               */
  uint8_t *lv;         /* T sets of G rows                               */
  int32_t *zero;       /* a row of zeros: the rows above the image       */
  tile *tiles;         /* T sets of G chunk tiles                          */
  progress *prog;      /* T + 1 slots, slot = band mod (T + 1)           */
  void *prog_mem;
  band_fn band;
  _Atomic int go;      /* > 0: T is final, workers may start            */
};

/* ------------------------------------------------------------ waiting */

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

/* Waits until band `b` has published `need` steps; false when the run was
 * cancelled meanwhile. `seen` caches the last value read, so a thread
 * that is well behind touches the shared cache line only rarely. When it
 * does have to wait, it waits for SLACK steps more than it needs (at most
 * `all`, the band's total), so that it does not trail the band at the
 * minimum distance, re-reading the counter (and taking the line away from
 * the writer) at every step.
 * It spins first: while the thread it waits for runs, the wait is a
 * fraction of a step. Then it blocks, so that when the machine is busy
 * (more runnable threads than cores) its core goes to the thread it waits
 * for rather than to spinning; publish() wakes it. */
static bool wait_band(wf *W, int64_t b, uint64_t need, uint64_t all, uint64_t *seen)
{
  const uint64_t base = (uint64_t)b << 32;
  if (*seen >= base + need)
    return true;
  progress *p = &W->prog[b % (W->T + 1)];
  if ((*seen = atomic_load_explicit(&p->v, memory_order_acquire)) >= base + need)
    return true;
  const uint64_t want = base + (need + SLACK < all ? need + SLACK : all);
  for (unsigned spins = 0; spins < SPINS; spins++) {
    if ((*seen = atomic_load_explicit(&p->v, memory_order_acquire)) >= want)
      return true;
    if (ht_job_cancelled(W->job))
      return false;
    cpu_relax();
  }
  bool ok = true;
  pthread_mutex_lock(&p->lock);
  /* seq_cst on both sides: either publish() sees this sleeper, or the
   * load below sees its store */
  atomic_fetch_add(&p->sleepers, 1);
  while ((*seen = atomic_load(&p->v)) < want) {
    if (ht_job_cancelled(W->job)) {
      ok = false;
      break;
    }
    /* a bounded wait: a cancel is noticed within a millisecond */
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_nsec += 1000000;
    if (ts.tv_nsec >= 1000000000) {
      ts.tv_sec++;
      ts.tv_nsec -= 1000000000;
    }
    pthread_cond_timedwait(&p->wake, &p->lock, &ts);
  }
  atomic_fetch_sub(&p->sleepers, 1);
  pthread_mutex_unlock(&p->lock);
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

/* ------------------------------------------------------------- kernels */



/* The upper sum of columns [x0, x1) of one row into `u`: the input plus
 * the terms of the taps with dy >= 1 (sources x - R .. x + L of the rows
 * above). Every column is independent: this loop vectorises. */
HT_AI void upper(const int L, const int R, const int D, const wf *W, int32_t *restrict u,
                 const int32_t *restrict in, const int32_t *restrict s1, const int32_t *restrict s2,
                 const int32_t *restrict s3, int64_t x0, int64_t x1)
{
  int32_t q[HT_FILTER_MAX_DOWN][BOXW];
#pragma GCC unroll 4
  for (int dy = 1; dy <= D; dy++)
#pragma GCC unroll 16
    for (int k = 0; k <= L + R; k++)
      q[dy - 1][k] = W->q[dy][HT_FILTER_MAX_LEFT + R - k]; /* source x - R + k: dx = R - k */
  u -= x0;
  for (int64_t x = x0; x < x1; x++) {
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

/* n_rows consecutive rows, in groups of up to ILP interleaved chains */
HT_AI void chains_n(const int R, const bool binary, const wf *W, int n_rows, tile *t, int64_t n)
{
  for (; n_rows > 0; n_rows -= ILP, t += ILP) {
    switch (n_rows < ILP ? n_rows : ILP) {
#define CASE(k) case k: chains(k, R, binary, W, t, n); break;
      CASE(1) CASE(2) CASE(3) CASE(4) CASE(5) CASE(6) CASE(7) CASE(8)
#undef CASE
    default: break;
    }
  }
}
_Static_assert(ILP == 8, "chains_n has one case per row count up to ILP");

/* One band: rows y0 .. y0 + g - 1, by worker `me`. */
HT_AI void run_band(const int L, const int R, const int D, const bool binary, wf *W, int me, int64_t b)
{
  const size_t S = W->S;
  const int64_t w = W->w, nchunks = W->nchunks, nfull = W->nfull;
  const int bg = W->bg;
  const int64_t y0 = b * bg;
  const int g = (int)(W->h - y0 < bg ? W->h - y0 : bg);
  int32_t *E = W->e + (size_t)(b % (W->T + 1)) * G * S + PAD;
  const int32_t *Eprev = b > 0 ? W->e + (size_t)((b - 1) % (W->T + 1)) * G * S + PAD : NULL;
  int32_t *U = W->up + (size_t)me * G * S + PAD;
  uint8_t *LV = W->lv + (size_t)me * G * S + PAD;
  tile *T = W->tiles + (size_t)me * G;
  /* source row of row j, dy rows up */
  const int32_t *src[G][HT_FILTER_MAX_DOWN + 1];
  for (int j = 0; j < g; j++)
    for (int dy = 1; dy <= HT_FILTER_MAX_DOWN; dy++)
      src[j][dy] = j >= dy ? E + (size_t)(j - dy) * S
                   : y0 + j - dy >= 0 ? Eprev + (size_t)(bg + j - dy) * S : W->zero + PAD;
  const int64_t steps = nchunks + LAG * (g - 1);
  progress *mine = &W->prog[b % (W->T + 1)];
  uint64_t seen = 0;
  for (int64_t s = 0; s < steps; s++) {
    if (b > 0 && s < nchunks) {
      /* row 0 at chunk s reads the previous band's last row up to chunk
       * s + 1 (its window reaches L columns into the next chunk) */
      int64_t c_need = s + 1 < nchunks ? s + 1 : nchunks - 1;
      if (!wait_band(W, b - 1, (uint64_t)(c_need + LAG * (bg - 1) + 1), (uint64_t)(nchunks + LAG * (bg - 1)),
                     &seen))
        return;
      /* The previous band's rows were written by another core, so every
       * line row 0 reads from them is a coherence miss. Fetch the lines of
       * a chunk it will need two steps from now, once `seen` shows that
       * chunk finished (never earlier: a line fetched before its last write
       * is only taken back by the writer). */
      const int64_t c_pre = s + 2, prev_done = (int64_t)(seen & 0xffffffffu) - LAG * (bg - 1);
      if ((int64_t)(seen >> 32) == b - 1 && c_pre < prev_done && c_pre < nchunks)
        for (int dy = 1; dy <= D; dy++)
          for (int64_t x = c_pre * C; x < c_pre * C + C; x += 64 / (int64_t)sizeof(int32_t))
            __builtin_prefetch(src[0][dy] + x);
    }
    /* rows with a chunk in this step: c = s - LAG * j in [0, nchunks) */
    int jlo = s - nchunks + 1 <= 0 ? 0 : (int)((s - nchunks + 1 + LAG - 1) / LAG);
    int jhi = (int)(s / LAG < g - 1 ? s / LAG : g - 1);
    int jfull = jhi + 1; /* first row of the run with a full chunk      */
    for (int j = jlo; j <= jhi; j++) {
      const int64_t c = s - LAG * j;
      if (c == 0)
        W->rows->load(W->rows, y0 + j, U + (size_t)j * S);
      const int64_t x0 = c * C, x1 = x0 + C < w ? x0 + C : w;
      int32_t *row = E + (size_t)j * S;
      upper(L, R, D, W, T[j].u, U + (size_t)j * S, src[j][1], src[j][2], src[j][3], x0, x1);
      memcpy(T[j].e, row + x0 - TH, TH * sizeof *row); /* the halo (zero pads at x0 == 0) */
      if (c < nfull && j < jfull)
        jfull = j;
    }
    /* a row whose last chunk is partial runs alone, to the last column */
    for (int j = jlo; j < jfull; j++)
      chains(1, R, binary, W, T + j, w - (s - LAG * j) * C);
    if (jfull <= jhi)
      chains_n(R, binary, W, jhi - jfull + 1, T + jfull, C);
    for (int j = jlo; j <= jhi; j++) {
      const int64_t x0 = (s - LAG * j) * C, n = x0 + C < w ? C : w - x0;
      memcpy(E + (size_t)j * S + x0, T[j].e + TH, (size_t)n * sizeof *E);
      memcpy(LV + (size_t)j * S + x0, T[j].lv, (size_t)n);
    }
    /* the row that finished its last chunk goes out */
    if (jlo <= jhi && s - LAG * jlo == nchunks - 1)
      W->rows->store(W->rows, y0 + jlo, LV + (size_t)jlo * S);
    /* publish every PUB steps: each store may have to take the line back
     * from a reader on another core */
    if ((s + 1) % PUB == 0 || s + 1 == steps)
      publish(mine, ((uint64_t)b << 32) | (uint64_t)(s + 1));
  }
}

/* Instances: the footprints of the built-in filters and the largest one
 * (any filter), binary and multi-level; on x86 also compiled for AVX2,
 * picked at run time when the CPU has it. */
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define WF_AVX2 1
#define AVX2_INSTANCE(L, R, D)                                                                     \
  __attribute__((target("avx2"))) static void band_##L##R##D##_b_avx2(wf *W, int me, int64_t b)     \
  {                                                                                                \
    run_band(L, R, D, true, W, me, b);                                                             \
  }                                                                                                \
  __attribute__((target("avx2"))) static void band_##L##R##D##_m_avx2(wf *W, int me, int64_t b)     \
  {                                                                                                \
    run_band(L, R, D, false, W, me, b);                                                            \
  }
#define AVX2_FNS(L, R, D) { band_##L##R##D##_m_avx2, band_##L##R##D##_b_avx2 }
#else
#define WF_AVX2 0
#define AVX2_INSTANCE(L, R, D)
#define AVX2_FNS(L, R, D) { band_##L##R##D##_m, band_##L##R##D##_b }
#endif
#define INSTANCE(L, R, D)                                                                       \
  static void band_##L##R##D##_b(wf *W, int me, int64_t b) { run_band(L, R, D, true, W, me, b); }  \
  static void band_##L##R##D##_m(wf *W, int me, int64_t b) { run_band(L, R, D, false, W, me, b); } \
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

/* ------------------------------------------------------------ threads */

typedef struct {
  wf *W;
  int me;
  pthread_t tid;
} worker;

static void work(wf *W, int me)
{
  for (int64_t b = me; b < W->nbands; b += W->T) {
    if (ht_job_cancelled(W->job))
      return;
    W->band(W, me, b);
    /* only the calling thread reports progress (and may cancel) */
    if (me == 0 && !ht_job_tick(W->job, (b + 1) * W->bg < W->h ? (b + 1) * W->bg : W->h, W->h))
      return;
  }
}

static void *worker_main(void *arg)
{
  worker *k = arg;
  while (atomic_load_explicit(&k->W->go, memory_order_acquire) == 0)
    sched_yield();
  if (k->me < k->W->T)
    work(k->W, k->me);
  return NULL;
}

ht_status ht_wavefront_run(ht_job *job, const ht_rows *rows)
{
  const ht_filter *f = &job->filter;
  wf W;
  memset(&W, 0, sizeof W);
  W.rows = rows;
  W.job = job;
  W.w = rows->width;
  W.h = rows->height;
  W.nchunks = (W.w + C - 1) / C;
  W.nfull = W.w / C;
  int T = job->threads < 1 ? 1 : job->threads > MAX_THREADS ? MAX_THREADS : job->threads;
  /* Band height: G rows for the most interleaved chains, unless the
   * image is too narrow for T bands of G rows to be in flight at once
   * (consecutive bands start LAG * bg steps apart, a band lasts
   * nchunks + LAG * (bg - 1) steps); then fewer rows. */
  W.bg = G;
  while (W.bg > BG_MIN && W.nchunks + LAG * (W.bg - 1) < (int64_t)T * LAG * W.bg)
    W.bg /= 2;
  W.nbands = (W.h + W.bg - 1) / W.bg;
  if (T > W.nbands)
    T = (int)W.nbands; /* a thread without a band would only wait */
  /* stride: data, pads, rounded to 16 values (64 bytes) */
  W.S = ((size_t)W.nchunks * C + 2 * PAD + 15) & ~(size_t)15;
  W.levels = job->levels;
  for (int t = 0; t < f->ntaps; t++)
    W.q[f->taps[t].dy][HT_FILTER_MAX_LEFT + f->taps[t].dx] = f->taps[t].q;

  ht_status st = HT_OK;
  worker *workers = NULL;
  int inited = 0; /* progress slots with a mutex and condition variable */
  /* With very wide images the per-thread rows add up: if they cannot be
   * had, run with half the threads (down to one) rather than fail. */
  for (;;) {
    W.e = ht_alloc(job, (size_t)(T + 1) * G, W.S * sizeof *W.e);
    W.up = ht_alloc(job, (size_t)T * G, W.S * sizeof *W.up);
    W.lv = ht_alloc(job, (size_t)T * G, W.S);
    W.tiles = ht_alloc(job, (size_t)T * G, sizeof *W.tiles);
    /* calloc aligns to 16 bytes only: take one slot more and round up, so
     * that every counter has its own cache line */
    W.prog_mem = ht_alloc(job, (size_t)T + 2, sizeof *W.prog);
    workers = ht_alloc(job, (size_t)T, sizeof *workers);
    if ((W.e && W.up && W.lv && W.tiles && W.prog_mem && workers) || T == 1)
      break;
    free(W.e);
    free(W.up);
    free(W.lv);
    free(W.tiles);
    free(W.prog_mem);
    free(workers);
    T /= 2;
  }
  W.prog = W.prog_mem ? (progress *)(((uintptr_t)W.prog_mem + 63) & ~(uintptr_t)63) : NULL;
  W.zero = ht_alloc(job, W.S, sizeof *W.zero);
  bool lt_ok = ht_level_table_init(&W.lt, job, W.levels);
  if (!W.e || !W.up || !W.lv || !W.zero || !W.tiles || !W.prog || !workers || !lt_ok) {
    st = HT_ERR_NO_MEMORY;
    goto out;
  }
  job->msg[0] = '\0'; /* a failed try above is no failure of the run */
  pthread_condattr_t ca;
  bool ca_ok = pthread_condattr_init(&ca) == 0;
  if (ca_ok)
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* the clock wait_band reads */
  for (; inited <= T; inited++) {
    atomic_init(&W.prog[inited].v, 0);
    atomic_init(&W.prog[inited].sleepers, 0);
    if (pthread_mutex_init(&W.prog[inited].lock, NULL) != 0)
      break;
    if (!ca_ok || pthread_cond_init(&W.prog[inited].wake, &ca) != 0) {
      pthread_mutex_destroy(&W.prog[inited].lock);
      break;
    }
  }
  if (ca_ok)
    pthread_condattr_destroy(&ca);
  if (inited <= T) {
    ht_set_msg(job->msg, "out of memory: could not create the wavefront's synchronisation objects");
    st = HT_ERR_NO_MEMORY;
    goto out;
  }
  size_t i = 0;
  while (i + 1 < sizeof instances / sizeof instances[0] &&
         (f->reach_left > instances[i].l || f->reach_right > instances[i].r || f->reach_down > instances[i].d))
    i++;
  W.band = instances[i].fn[cpu_has_avx2()][W.levels == 2];

  /* Start the helpers; if one cannot be created, run with those that
   * were (the band assignment is fixed only once `go` is set). */
  atomic_init(&W.go, 0);
  int started = 1;
  for (int t = 1; t < T; t++) {
    workers[t].W = &W;
    workers[t].me = t;
    if (pthread_create(&workers[t].tid, NULL, worker_main, &workers[t]) != 0)
      break;
    started++;
  }
  W.T = started;
  atomic_store_explicit(&W.go, 1, memory_order_release);
  work(&W, 0);
  for (int t = 1; t < started; t++)
    pthread_join(workers[t].tid, NULL);
  if (ht_job_cancelled(job))
    st = HT_ERR_CANCELLED;
out:
  for (int k = 0; k < inited; k++) {
    pthread_mutex_destroy(&W.prog[k].lock);
    pthread_cond_destroy(&W.prog[k].wake);
  }
  free(W.e);
  free(W.up);
  free(W.lv);
  free(W.zero);
  free(W.tiles);
  free(W.prog_mem);
  free(workers);
  ht_level_table_free(&W.lt);
  return st;
}

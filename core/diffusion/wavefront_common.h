/* What the files of the threaded wavefront share. Its design is told in
 * wavefront.c and, at length, in docs/algorithms.md ("The wavefront").
 *
 *   wavefront.c                 the entry point: sizes, buffers, threads
 *   wavefront_sched.c           tickets, progress counters, waiting, paces,
 *                               band heights and the rows a band carries out
 *   wavefront_parallelogram.c   the kernel for every filter and level count
 *   wavefront_diagonal.c        the AVX2 kernel for Floyd-Steinberg shapes
 *                               with binary output
 *   wavefront_diagonal_sched.c  how threads share that kernel's bands
 */
#ifndef HT_WAVEFRONT_COMMON_H
#define HT_WAVEFRONT_COMMON_H

#include <pthread.h>

#include "diffusion.h"
#include "footprint.h"
#include "levels.h"
#include "tuning.h"

#define HT_AI static inline __attribute__((always_inline))
#define PAD 8 /* zero columns left and right of an error row (>= 4) */
#define BOXW HT_BOX_WIDTH
#define MAX_THREADS 1024
#define BG_MIN 4  /* fewest rows per parallelogram band but the last */
#define DPUB 32   /* diagonal iterations between two publications of progress */
_Static_assert(BG_MIN > HT_FILTER_MAX_DOWN, "a band must cover the filter's rows");
_Static_assert(G < 256, "the ticket holds a band's height in 8 bits");
_Static_assert(C > HT_FILTER_MAX_LEFT + HT_FILTER_MAX_RIGHT + 1, "a chunk must exceed the delay");
_Static_assert(DG % 8 == 0 && DG >= 8 && DG <= 64, "DG: a multiple of 8 up to 64");
_Static_assert(DK % DPUB == 0 && DK % 8 == 0, "a block holds whole publication spans");
_Static_assert(DMIN % 8 == 0 && DMIN >= 8 && DMIN <= DK, "DMIN: whole vectors, at most a block");

/* A band's progress: the steps (chunk steps, or columns of its last
 * row for the diagonal kernel) it has done, and how its waiters sleep. */
typedef struct {
  _Alignas(64) _Atomic uint64_t v; /* (band << 32) | steps done           */
  _Atomic int sleepers;            /* threads blocked on `wake`            */
  _Atomic int polling;             /* this band polls for the band above   */
  pthread_mutex_t lock;
  pthread_cond_t wake;
} wf_progress;

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
typedef struct tile tile; /* a row's chunk in the parallelogram kernel */

/* A thread's buffers for the diagonal kernel. */
typedef struct {
  _Alignas(64) int32_t s[DK + 2][DG]; /* lanes of each iteration: input (and terms), then masks */
  _Alignas(64) int32_t in[DG][DK]; /* row j: columns i0 - 2j .. of the block, then its masks   */
  /* level indices not yet stored, from column out0[j] of the band's row
   * j: stored once DK wait (short blocks too make long stores), or when
   * the thread leaves the band (then up to 7 go to its pend) */
  uint8_t out[DG][2 * DK + 8];
} dtile;

/* A diagonal band between two of its blocks: all that the thread that
 * runs its next block needs, whichever thread ran the last one. */
typedef struct {
  _Alignas(64) int32_t e[DG], c1[DG], c2[DG]; /* the block's registers                   */
  uint8_t pend[DG][8]; /* while parked: row j's level indices from column out0[j] (< 8) */
  int64_t out0[DG];
  int64_t b, y0;       /* the band: rows y0 .. y0 + g - 1                              */
  int64_t i0, n;       /* its next iteration, and its iterations in all               */
  int g;
  int by;              /* the thread that ran its last block                         */
} dband;

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
  ht_weight_box box; /* box.q[dy][HT_FILTER_MAX_LEFT + dx] */
  ht_level_table lt;
  int ring;            /* slots for bands in flight: T + 1, more with dbands */
  int set_rows;        /* rows per set of e: a band's last rows            */
  int dk;              /* of those, the rows the kernel reads: D of its footprint */
  int32_t *e;          /* ring sets of set_rows whole rows                 */
  /* the rows above band 0, laid out as a set (band_set: row dk - up is
   * `up` rows up): the carried rows where the band continues a taller
   * image (job.h), zeros above the image */
  int32_t *top, *top_mem;
  int32_t *slide;      /* T threads' G sliding rows of PAD + ER values   */
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
  wf_stats st[WF_STATS ? MAX_THREADS : 1]; /* bench builds: where each thread's time went */
  wf_progress *prog;   /* ring slots, slot = band mod ring               */
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

/* ------------------------------------------- the scheduler (wavefront_sched.c) */

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

/* Publishes a band's progress and wakes its sleepers. Inline: the
 * kernels call it inside their loops. */
static inline void publish(wf_progress *p, uint64_t value)
{
  atomic_store(&p->v, value);
  if (atomic_load(&p->sleepers) > 0) {
    pthread_mutex_lock(&p->lock);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
  }
}

/* Band b's last rows (set b mod ring), at column 0. */
static inline int32_t *band_set(const wf *W, int64_t b)
{
  return W->e + (size_t)(b % W->ring) * (size_t)W->set_rows * W->S + PAD;
}

/* A new sample of thread `me`'s pace once `units` row-chunks were done
 * since `t_mark`, `waited` of that time waiting: time per row-chunk,
 * smoothed. Inline: the parallelogram kernel calls it inside its loop. */
static inline void pace_sample(wf *W, int me, int64_t *t_mark, int64_t *waited, int64_t *units)
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


/* ------------------------------------------------------------- the kernels */

/* The parallelogram kernel's function for the filter's footprint, with
 * AVX2 or not, binary or not (wavefront_parallelogram.c); its buffers
 * for T threads (false when they cannot be had; freed by the caller). */
band_fn ht_wf_parallelogram(const ht_filter *f, bool avx2, bool binary);
bool ht_wf_parallelogram_alloc(wf *W, int T);

#if WF_AVX2
/* The diagonal kernel: thread `me`'s work until no band is left
 * (wavefront_diagonal_sched.c); its buffers for T threads and W->ring
 * bands; the next n iterations of band S (wavefront_diagonal.c). */
void ht_wf_diagonal_work(wf *W, int me);
bool ht_wf_diagonal_alloc(wf *W, int T);
bool ht_wf_diagonal_block(wf *W, dband *S, dtile *d, bool resume, int n);
#else
/* never called: W->diag stays false where the kernel is not compiled */
static inline void ht_wf_diagonal_work(wf *W, int me) { (void)W, (void)me; }
static inline bool ht_wf_diagonal_alloc(wf *W, int T) { (void)W, (void)T; return false; }
#endif

#endif

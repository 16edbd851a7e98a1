/* What one algorithm run is given besides its rows, and the utilities
 * every algorithm uses: failure messages, checked allocation, progress
 * and cancel ticks, carried rows, clocks and core counts.
 *
 * This is the bottom layer of the library: it calls nothing above it
 * (no context, no dispatch), so algorithm files that include it form no
 * circle with the dispatcher (docs/architecture.md). */
#ifndef HT_JOB_H
#define HT_JOB_H

#include "halftone.h"
#include "shared/eye.h"
#include "shared/fixed.h"
#include "pool.h"

#include <stdatomic.h>

#define HT_MSG_MAX 256

typedef struct ht_cuda ht_cuda; /* the open GPU (cuda_loader.h) */
typedef struct ht_color_job ht_color_job; /* plane-dependent colour (color/color.h) */

typedef struct ht_job ht_job;
struct ht_job {
  ht_method method;
  ht_variant variant; /* the implementation that runs the job         */
  ht_filter filter;   /* with q, reach and delay filled in            */
  int levels;
  ht_scan scan;
  int threads;        /* >= 1, resolved                               */
  ht_pool *pool;      /* the context's threads; NULL: create them     */
  ht_cuda *cuda;      /* the open GPU, for GPU implementations        */
  /* Keys of the counter-based generator (rng.h) for methods that draw
   * random numbers: the run's seed and this plane's index. */
  uint64_t seed;
  int plane;
  /* The run's parameters as the caller gave them (valid while the run
   * lasts): a method reads its own from here (ht_params.mask_size), so
   * that a new parameter needs no field in the job. */
  const ht_params *params;
  /* Plane-dependent colour error diffusion (method
   * HT_METHOD_PLANE_DEPENDENT): all the planes, which its
   * implementations run together; their `rows` argument is rows[0]. */
  const ht_color_job *color;
  /* Carried rows (ht_run_band): the band is rows y0 .. y0 + height - 1
   * of a taller plane. carry_in holds the quantisation errors of the
   * ht_job_carry_rows() rows just above the band (row r is plane row
   * y0 - carry_rows + r), width values a row; NULL means the band starts
   * the plane (zeros above). carry_out, when not NULL, receives the
   * errors of the plane's last carry_rows rows up to the band's end, in
   * the same layout: what the next band takes as its carry_in. */
  int64_t y0;
  const int32_t *carry_in;
  int32_t *carry_out;
  /* A streamed band (ht_run_band_stream): carry_in and carry_out are its
   * above and below, filled and read in chunks through its callbacks;
   * NULL for every other run. Only implementations with HT_CAP_STREAM
   * take it. */
  const ht_stream *stream;
  /* The search methods (core/search/, docs/search.md): the eye model's
   * table, the window side m, the initial image, the schedule and the
   * round limit (0: none), as ht_params gave them. */
  ht_eye eye;
  int window;
  ht_search_init init;
  ht_search_schedule schedule;
  int max_rounds;
  ht_search_objective objective; /* DBS's (the others: the LES paper's) */
  /* What the search did: the most rounds any plane of the run took (an
   * implementation adds its plane's count with ht_job_note_rounds). */
  int64_t rounds;
  /* progress: only ht_job_tick() touches these */
  ht_progress_fn progress;
  void *user;
  double base, span;  /* fraction of the whole run this job covers    */
  int64_t last_tick_ns;
  atomic_int cancelled;
  char *msg;          /* HT_MSG_MAX bytes, for the failure message     */
};

/* Reports that `done` of `total` rows are finished; throttled to about
 * 20 calls a second. Call from the thread that called ht_run only.
 * Returns false (and sets job->cancelled) when the user cancelled. */
bool ht_job_tick(ht_job *job, int64_t done, int64_t total);
static inline bool ht_job_cancelled(const ht_job *job)
{
  return atomic_load_explicit(&((ht_job *)job)->cancelled, memory_order_relaxed) != 0;
}

/* Checked allocations: NULL with job->msg set when they fail. */
void *ht_alloc(ht_job *job, size_t count, size_t size);     /* zeroed     */
void *ht_alloc_raw(ht_job *job, size_t count, size_t size); /* not zeroed */
void ht_set_msg(char *msg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Rows carried across a band's top and bottom: the filter's reach down
 * (the rows below a pixel that its error reaches). */
static inline int ht_job_carry_rows(const ht_job *job) { return job->filter.reach_down; }

/* The error of band row y (0-based), x = 0: where an algorithm writes
 * row y's errors for carry_out, or NULL when no carry_out is asked for
 * or row y is not among the band's last carry rows. Rows above the band
 * that carry_out still needs (a band shorter than the carry) are copied
 * from carry_in by ht_job_carry_begin(). */
static inline int32_t *ht_job_carry_out_row(const ht_job *job, int64_t width, int64_t height, int64_t y)
{
  const int64_t r = y - (height - job->filter.reach_down); /* carry_out row of band row y */
  if (!job->carry_out || r < 0 || r >= job->filter.reach_down)
    return NULL;
  return job->carry_out + (size_t)r * (size_t)width;
}
void ht_job_carry_begin(const ht_job *job, int64_t width, int64_t height);
/* The error of the row `up` rows above the band (1 .. carry rows), or
 * NULL where the band starts the plane. */
static inline const int32_t *ht_job_carry_in_row(const ht_job *job, int64_t width, int up)
{
  if (!job->carry_in || up < 1 || up > ht_job_carry_rows(job))
    return NULL;
  return job->carry_in + (size_t)(ht_job_carry_rows(job) - up) * (size_t)width;
}

/* A search implementation's rounds for the job's current plane. */
static inline void ht_job_note_rounds(ht_job *job, int64_t rounds)
{
  if (rounds > job->rounds)
    job->rounds = rounds;
}

int ht_online_cores(void);
int64_t ht_now_ns(void);

#endif

/* Private interfaces of libhalftone: what the algorithm files share. */
#ifndef HT_INTERNAL_H
#define HT_INTERNAL_H

#include "halftone.h"
#include "fixed.h"

#include <stdatomic.h>
#include <stdio.h>

#define HT_MSG_MAX 256

/* Where rows come from and go to. Algorithms see only this, so they work
 * for every input and output format with memory that grows with the
 * width, never with the pixel count. load/store may be called from
 * several threads at once for different rows. */
typedef struct ht_rows ht_rows;
struct ht_rows {
  int64_t width, height;
  /* Columns x0 .. x0 + n - 1 of row y as HT_FX values, to dst[0 .. n). */
  void (*load)(const ht_rows *r, int64_t y, int64_t x0, int64_t n, int32_t *dst);
  /* Level indices of columns x0 .. x0 + n - 1 of row y. For 1-bit output
   * x0 is a multiple of 8, and so is n unless the span ends the row. */
  void (*store)(const ht_rows *r, int64_t y, int64_t x0, int64_t n, const uint8_t *levels);
  /* Source */
  const uint8_t *in;
  size_t in_stride;
  int in_channels;
  int in_channel;      /* channel to read, or -1 for luma             */
  ht_format in_format;
  /* Sink */
  uint8_t *out;
  size_t out_stride;
  int out_channels;
  int out_channel;
  ht_format out_format;
  int levels;
  uint16_t lut[256];   /* level index -> stored output value        */
};

/* Worker threads kept from one run to the next (core/pool.c); one run
 * at a time. */
typedef struct ht_pool ht_pool;
#define HT_POOL_MAX 1023 /* helpers at most, besides the calling thread */
ht_pool *ht_pool_new(int max_helpers);   /* NULL when out of memory; no thread yet */
/* Runs fn(arg, k) for k = 1 .. helpers on pool threads (started as
 * needed) and returns how many it runs, fewer where threads could not
 * be created. */
int ht_pool_start(ht_pool *p, int helpers, void (*fn)(void *arg, int k), void *arg);
void ht_pool_wait(ht_pool *p);           /* until every fn of the last start returned */
void ht_pool_free(ht_pool *p);           /* ends the threads */

/* What one algorithm run needs besides the rows. */
typedef struct ht_job ht_job;
struct ht_job {
  ht_filter filter;   /* with q, reach and delay filled in            */
  int levels;
  ht_scan scan;
  int threads;        /* >= 1, resolved                               */
  ht_pool *pool;      /* the context's threads; NULL: create them     */
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

void *ht_alloc(ht_job *job, size_t count, size_t size);        /* zeroed, checked */
void *ht_alloc_raw(ht_job *job, size_t count, size_t size);    /* not zeroed, checked */
void ht_set_msg(char *msg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The rounding step shared by the fast variants (ED-RC, EC-RC, wavefront):
 * level values, and for more than two levels a table of ht_fx_quantize
 * over 0..HT_FX_ONE, so that no pixel needs a division. */
typedef struct {
  int32_t value[256];
  uint8_t *lut; /* levels > 2 only */
} ht_level_table;

/* false (job->msg set) when the table cannot be allocated */
bool ht_level_table_init(ht_level_table *t, ht_job *job, int levels);
void ht_level_table_free(ht_level_table *t);

/* Rounds v (core/fixed.h rules), stores the level index, returns the error. */
static inline __attribute__((always_inline)) int32_t
ht_level_round(const bool binary, const ht_level_table *t, int32_t v, uint8_t *lv)
{
  int32_t q;
  if (binary) {
    q = ht_fx_binary(v);
    *lv = (uint8_t)q;
    return q ? v - HT_FX_ONE : v;
  }
  /* the table holds ht_fx_quantize of every clamped value (ht_fx_quantize
   * clamps to 0 and L-1 itself), so this is the same level */
  q = t->lut[v < 0 ? 0 : v > HT_FX_ONE ? HT_FX_ONE : v];
  *lv = (uint8_t)q;
  return v - t->value[q];
}

/* Fills reach_* and delay from the taps. */
void ht_filter_derive(ht_filter *f);

/* The algorithms: one file each, named after it. */
ht_status ht_ed_run(ht_job *job, const ht_rows *rows);        /* ed.c        */
ht_status ht_ec_run(ht_job *job, const ht_rows *rows);        /* ec.c        */
ht_status ht_ed_rc_run(ht_job *job, const ht_rows *rows);     /* ed_rc.c     */
ht_status ht_ec_rc_run(ht_job *job, const ht_rows *rows);     /* ec_rc.c     */
ht_status ht_wavefront_run(ht_job *job, const ht_rows *rows); /* wavefront.c */

/* The CUDA backend (cuda_loader.c): loads the module on first use. */
typedef struct ht_cuda ht_cuda;
/* Returns NULL with a message in `msg` when no GPU can be used. */
ht_cuda *ht_cuda_open(char *msg);
void ht_cuda_close(ht_cuda *cuda);
ht_status ht_cuda_run(ht_cuda *cuda, ht_job *job, const ht_rows *rows, ht_variant variant);

int ht_online_cores(void);
int64_t ht_now_ns(void);

#endif

/* The rows of an ordered method on the job's threads (ordered.h): each
 * thread takes the next row, loads it, has the method's row function
 * choose its levels and stores it. A row depends on nothing but itself,
 * so the order in which threads take rows changes no bit. */
#include "ordered.h"
#include "../pool.h"

#include <stdatomic.h>
#include <stdlib.h>

typedef struct {
  ht_job *job;
  const ht_rows *rows;
  ht_ordered_row_fn fn;
  const void *ctx;
  atomic_llong next, done;
  atomic_int failed;
} ordered_state;

/* Takes rows until none are left; the calling thread (k 0) also reports
 * progress, as ht_job_tick wants. */
static void work(ordered_state *S, int k)
{
  ht_job *job = S->job;
  const int64_t w = S->rows->width, h = S->rows->height;
  int32_t *in = ht_alloc_raw(job, (size_t)w, sizeof *in);
  uint8_t *lv = ht_alloc_raw(job, (size_t)w, 1);
  if (!in || !lv)
    atomic_store(&S->failed, 1);
  while (in && lv && !ht_job_cancelled(job)) {
    const int64_t y = atomic_fetch_add(&S->next, 1);
    if (y >= h)
      break;
    S->rows->load(S->rows, y, 0, w, in);
    S->fn(S->ctx, job, y, in, lv, w);
    S->rows->store(S->rows, y, 0, w, lv);
    const int64_t done = atomic_fetch_add(&S->done, 1) + 1;
    if (k == 0 && !ht_job_tick(job, done, h))
      break;
  }
  free(in);
  free(lv);
}

static void helper(void *arg, int k) { work(arg, k); }

ht_status ht_ordered_run(ht_job *job, const ht_rows *rows, ht_ordered_row_fn fn, const void *ctx)
{
  ordered_state S = { .job = job, .rows = rows, .fn = fn, .ctx = ctx };
  atomic_init(&S.next, 0);
  atomic_init(&S.done, 0);
  atomic_init(&S.failed, 0);
  int helpers = job->threads - 1;
  if (helpers > rows->height / 8)
    helpers = (int)(rows->height / 8); /* a few rows each at least */
  const int started = helpers > 0 && job->pool ? ht_pool_start(job->pool, helpers, helper, &S) : 0;
  work(&S, 0);
  if (started > 0)
    ht_pool_wait(job->pool);
  if (atomic_load(&S.failed))
    return HT_ERR_NO_MEMORY;
  return ht_job_cancelled(job) ? HT_ERR_CANCELLED : HT_OK;
}

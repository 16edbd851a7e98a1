/* The schedules of the search methods (docs/search.md): rounds of
 * window searches until a round changes nothing.
 *
 * Parallel (Kouge et al., Sec. IV-B, Fig. 5): the window positions are
 * tiled by q x q blocks from (0, 0); the blocks fall into four groups by
 * (block row parity, block column parity), run in the order (even, even),
 * (even, odd), (odd, even), (odd, odd). A block visits its positions in
 * raster order; the blocks of a group run at once, on any thread in any
 * order, because with q = 2r + side - 1 (search.h) no two windows of one
 * group reach each other's affected regions: what one block reads and
 * writes, no other block of its group touches. So the result is that of
 * running the blocks one after the other, whatever the threads do.
 *
 * Raster (Sec. II-B, Fig. 2): the positions in raster order over the
 * whole image, one thread (the paper's CPU reference).
 *
 * The skip map (Sec. III, "update map"): a window is searched only if
 * something within 2r of it changed since its last search, or that
 * search changed it. Its search reads e over its affected region and b
 * over the window, which depend on b within 2r of the window only; if
 * none of that changed and the last search kept the pattern, this one
 * would find the same patterns with the same errors and keep it again.
 * So skipping never changes the result; builds with HT_SEARCH_NO_SKIP
 * search every window and the core suite compares them.
 *
 * Builds with HT_SEARCH_CHECK (and every build without NDEBUG) check the
 * block rule as they run: each block claims the pixels its windows'
 * affected regions cover, and the skip-map flags it sets must belong to
 * its own block or to another group; a pixel or flag claimed by two
 * blocks of one group aborts the process with a message. */
#include "search.h"
#include "../shared/search_progress.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#if defined(HT_SEARCH_CHECK) || !defined(NDEBUG)
#define SX_CHECK 1
#else
#define SX_CHECK 0
#endif
#ifdef HT_SEARCH_NO_SKIP
#define SX_SKIP 0
#else
#define SX_SKIP 1
#endif

/* ------------------------------------------------------------- skip map */

bool ht_sx_take(const ht_sx *s, int64_t i, int64_t j)
{
  atomic_uchar *f = &s->dirty[i * s->pw + j];
  if (!atomic_load_explicit(f, memory_order_relaxed))
    return !SX_SKIP;
  atomic_store_explicit(f, 0, memory_order_relaxed);
  return true;
}

#if SX_CHECK
/* The block a checked thread is running: (row, column, group), or group
 * -1 outside the parallel schedule. */
static _Thread_local int64_t check_br, check_bc;
static _Thread_local int check_group = -1;

/* ht_sx_mark's hook: a flag set must belong to the marking block or to
 * another group. */
static void check_mark(const ht_sx *s, int64_t i, int64_t j)
{
  const int64_t br = i / s->q, bc = j / s->q;
  if (check_group >= 0 && (int)((br & 1) * 2 + (bc & 1)) == check_group && (br != check_br || bc != check_bc)) {
    fprintf(stderr, "search schedule: block (%lld, %lld) of group %d marks window (%lld, %lld) of block (%lld, %lld) "
            "of the same group (q = %d is too small)\n", (long long)check_br, (long long)check_bc, check_group + 1,
            (long long)i, (long long)j, (long long)br, (long long)bc, s->q);
    abort();
  }
}
#endif

/* ------------------------------------------------------------ the rounds */

typedef struct {
  ht_sx *s;
  ht_sx_scratch *scr; /* one per thread */
  int threads;
  int round, group;
  int64_t nbr, nbc;   /* blocks: rows, columns */
  int64_t gbc;        /* the group's block columns */
  int64_t nblocks;    /* the group's blocks */
  atomic_llong next;  /* the next of them to take */
  atomic_int changed;
  int64_t before;     /* blocks of the round's earlier groups */
  pthread_mutex_t lock;
  pthread_cond_t idle;
  int active;         /* helpers still at work on the group */
#if SX_CHECK
  atomic_llong *own;  /* per pixel: (phase << 32) | block of the last claim */
  int64_t phase;
#endif
} sched;

/* The fraction of the run done, from round r and the fraction f of it
 * (shared/search_progress.h: measured shares of the rounds). */
static bool tick(sched *S, double f)
{
  const int64_t total = (int64_t)1 << 30;
  return ht_job_tick(S->s->job, ht_search_progress(S->s->job->max_rounds, S->round, f, total), total);
}

static double group_fraction(sched *S)
{
  const int64_t taken = atomic_load_explicit(&S->next, memory_order_relaxed);
  const int64_t all = S->nbr * S->nbc;
  return all ? (double)(S->before + (taken < S->nblocks ? taken : S->nblocks)) / (double)all : 1.0;
}

#if SX_CHECK
/* The pixels that the windows of block b reach: their affected regions. */
static void claim(sched *S, int64_t b, int64_t i0, int64_t i1, int64_t j0, int64_t j1)
{
  const ht_sx *s = S->s;
  const int64_t y0 = i0 + s->off - s->r, y1 = i1 - 1 + s->off + s->wh - 1 + s->r;
  const int64_t x0 = j0 + s->off - s->r, x1 = j1 - 1 + s->off + s->ww - 1 + s->r;
  const long long tag = (long long)(S->phase << 32 | (b & 0xffffffff));
  for (int64_t y = y0 < 0 ? 0 : y0; y <= y1 && y < s->height; y++)
    for (int64_t x = x0 < 0 ? 0 : x0; x <= x1 && x < s->width; x++) {
      const long long old = atomic_exchange(&S->own[y * s->width + x], tag);
      if (old >> 32 == S->phase && old != tag) {
        fprintf(stderr, "search schedule: blocks %lld and %lld of group %d both reach pixel (%lld, %lld) "
                "(q = %d is too small)\n", old & 0xffffffff, (long long)b, S->group + 1, (long long)x, (long long)y,
                s->q);
        abort();
      }
    }
}
#endif

/* Block b of the group: its positions in raster order. The calling
 * thread (k = 0) reports progress after each row of them. */
static bool run_block(sched *S, int k, int64_t b)
{
  ht_sx *s = S->s;
  ht_sx_scratch *w = &S->scr[k];
  const int64_t br = (S->group >> 1) + 2 * (b / S->gbc), bc = (S->group & 1) + 2 * (b % S->gbc);
  const int64_t i0 = br * s->q, i1 = i0 + s->q < s->ph ? i0 + s->q : s->ph;
  const int64_t j0 = bc * s->q, j1 = j0 + s->q < s->pw ? j0 + s->q : s->pw;
#if SX_CHECK
  claim(S, b, i0, i1, j0, j1);
  check_br = br;
  check_bc = bc;
  check_group = S->group;
#endif
  bool changed = false;
  for (int64_t i = i0; i < i1; i++) {
    for (int64_t j = j0; j < j1; j++)
      if (ht_sx_take(s, i, j)) {
        w->searched++;
        if (s->step(s, w, i, j)) {
          w->changed++;
          changed = true;
        }
      }
    if (k == 0 ? !tick(S, group_fraction(S)) : ht_job_cancelled(s->job))
      break;
  }
#if SX_CHECK
  check_group = -1;
#endif
  if (changed)
    atomic_store_explicit(&S->changed, 1, memory_order_relaxed);
  return !ht_job_cancelled(s->job);
}

static void take_blocks(sched *S, int k)
{
  for (;;) {
    const int64_t b = atomic_fetch_add_explicit(&S->next, 1, memory_order_relaxed);
    if (b >= S->nblocks || !run_block(S, k, b))
      return;
  }
}

static void helper(void *arg, int k)
{
  sched *S = arg;
  take_blocks(S, k);
  pthread_mutex_lock(&S->lock);
  if (--S->active == 0)
    pthread_cond_signal(&S->idle);
  pthread_mutex_unlock(&S->lock);
}

/* One group on the threads; the calling thread reports progress (and so
 * sees a cancel) while the helpers finish their last blocks. */
static void run_group(sched *S, int g)
{
  ht_sx *s = S->s;
  const int64_t pr = g >> 1, pc = g & 1;
  const int64_t gbr = S->nbr > pr ? (S->nbr - pr + 1) / 2 : 0;
  S->gbc = S->nbc > pc ? (S->nbc - pc + 1) / 2 : 0;
  S->group = g;
  S->nblocks = gbr * S->gbc;
  atomic_store(&S->next, 0);
#if SX_CHECK
  S->phase++;
#endif
  int helpers = S->threads - 1;
  if (helpers > S->nblocks - 1)
    helpers = S->nblocks > 1 ? (int)(S->nblocks - 1) : 0;
  if (helpers > 0) {
    S->active = helpers;
    const int started = ht_pool_start(s->job->pool, helpers, helper, S);
    if (started < helpers) {
      pthread_mutex_lock(&S->lock);
      S->active -= helpers - started;
      pthread_mutex_unlock(&S->lock);
    }
  }
  take_blocks(S, 0);
  if (helpers > 0) {
    pthread_mutex_lock(&S->lock);
    while (S->active > 0) {
      struct timespec until;
      clock_gettime(CLOCK_REALTIME, &until);
      until.tv_nsec += 50000000;
      if (until.tv_nsec >= 1000000000) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000;
      }
      pthread_cond_timedwait(&S->idle, &S->lock, &until);
      pthread_mutex_unlock(&S->lock);
      tick(S, group_fraction(S));
      pthread_mutex_lock(&S->lock);
    }
    pthread_mutex_unlock(&S->lock);
    ht_pool_wait(s->job->pool);
  }
  S->before += S->nblocks;
}

static bool parallel_round(sched *S)
{
  atomic_store(&S->changed, 0);
  S->before = 0;
  for (int g = 0; g < 4 && !ht_job_cancelled(S->s->job); g++)
    run_group(S, g);
  return atomic_load(&S->changed) != 0;
}

static bool raster_round(sched *S)
{
  ht_sx *s = S->s;
  ht_sx_scratch *w = &S->scr[0];
  bool changed = false;
  for (int64_t i = 0; i < s->ph; i++) {
    for (int64_t j = 0; j < s->pw; j++)
      if (ht_sx_take(s, i, j)) {
        w->searched++;
        if (s->step(s, w, i, j)) {
          w->changed++;
          changed = true;
        }
      }
    if (!tick(S, (double)(i + 1) / (double)s->ph))
      break;
  }
  return changed;
}

ht_status ht_sx_schedule_run(ht_sx *s)
{
  ht_job *job = s->job;
  sched S = { .s = s };
  const bool parallel = job->schedule == HT_SCHEDULE_PARALLEL;
  S.threads = parallel && job->pool ? job->threads : 1;
#if SX_CHECK
  s->mark_check = check_mark;
  /* tests make the rule fail on purpose with a smaller block */
  const char *test_q = getenv("HT_SEARCH_TEST_BLOCK");
  if (test_q && atoi(test_q) > 0)
    s->q = atoi(test_q);
#endif
  S.nbr = (s->ph + s->q - 1) / s->q;
  S.nbc = (s->pw + s->q - 1) / s->q;
  const int64_t blocks = S.nbr * S.nbc;
  if (S.threads > blocks)
    S.threads = blocks > 1 ? (int)blocks : 1;
  S.scr = ht_alloc(job, (size_t)S.threads, sizeof *S.scr);
  ht_status st = HT_OK;
  int ready = 0;
  bool sync = false;
  if (!S.scr)
    return HT_ERR_NO_MEMORY;
  for (; ready < S.threads; ready++)
    if (!ht_sx_scratch_init(s, &S.scr[ready], s->work))
      break;
  if (ready == 0) {
    st = HT_ERR_NO_MEMORY;
    goto out;
  }
  S.threads = ready; /* fewer threads where memory ran out: the same bits */
  job->msg[0] = '\0';
  if (pthread_mutex_init(&S.lock, NULL) != 0)
    goto nosync;
  if (pthread_cond_init(&S.idle, NULL) != 0) {
    pthread_mutex_destroy(&S.lock);
    goto nosync;
  }
  sync = true;
nosync:
  if (!sync && S.threads > 1) {
    ht_set_msg(job->msg, "out of memory: could not create the search's synchronisation objects");
    st = HT_ERR_NO_MEMORY;
    goto out;
  }
#if SX_CHECK
  if (parallel && !(S.own = ht_alloc(job, (size_t)s->width * (size_t)s->height, sizeof *S.own))) {
    st = HT_ERR_NO_MEMORY;
    goto out;
  }
#endif
  for (S.round = 0; !job->max_rounds || S.round < job->max_rounds; S.round++) {
    const bool changed = parallel ? parallel_round(&S) : raster_round(&S);
    if (ht_job_cancelled(job)) {
      st = HT_ERR_CANCELLED;
      break;
    }
    s->rounds++;
    if (!changed)
      break;
  }
out:
  for (int t = 0; t < ready; t++) {
    s->searched += S.scr[t].searched;
    s->changed += S.scr[t].changed;
    ht_sx_scratch_free(&S.scr[t]);
  }
  free(S.scr);
#if SX_CHECK
  free(S.own);
#endif
  if (sync) {
    pthread_cond_destroy(&S.idle);
    pthread_mutex_destroy(&S.lock);
  }
  return st;
}

/* How threads share the diagonal kernel's bands (docs/algorithms.md,
 * "Bands that change threads").
 *
 * The diagonal kernel's bands are not tied to threads. A band is run a
 * block at a time, and a block only starts once the band above has done
 * every column it reads, so it never waits inside. Between two blocks
 * the band's state (a dband, under 1 KB) lies in the ring, and whichever
 * thread is free runs the next block of some band. A thread keeps its
 * band while the band's next block can run (taking a parked band higher
 * in the image first is slower: more switches). When its own band would
 * have to wait, it parks it and runs the highest parked band that can go
 * on, or starts a new band, as long as the ring has a slot for one; only
 * when there is none of these does it wait. So a slower thread (a busy
 * core of a virtual machine) holds up only the band it runs, for one
 * block, not a chain of bands: the other threads work on the bands
 * around it. A block runs as far as the band above allows, up to DK
 * iterations; below DMIN the thread looks for other work first.
 * No thread ever waits inside a block, and the highest unfinished band
 * can always go on, so some thread always can: there is no deadlock
 * however the bands are parked. */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "wavefront_sched.h"

#if WF_AVX2

bool ht_wf_diagonal_alloc(wf *W, int T)
{
  /* calloc aligns to 16 bytes only: one more, rounded up. The thread
   * buffers are written before they are read. */
  W->dtiles_mem = ht_alloc_raw(W->job, (size_t)T + 1, sizeof(dtile));
  W->dbands_mem = ht_alloc(W->job, (size_t)W->ring + 1, sizeof(dband));
  W->parked = ht_alloc(W->job, (size_t)W->ring, sizeof *W->parked);
  W->dtiles = W->dtiles_mem ? (dtile *)(((uintptr_t)W->dtiles_mem + 63) & ~(uintptr_t)63) : NULL;
  W->dbands = W->dbands_mem ? (dband *)(((uintptr_t)W->dbands_mem + 63) & ~(uintptr_t)63) : NULL;
  return W->dtiles && W->dbands && W->parked;
}

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
  if (!ht_wf_ticket_take(W, ht_wf_band_rows(W, me), dmay, &B))
    return NULL;
  dband *S = W->dbands + B.b % W->ring;
  S->b = B.b;
  S->y0 = B.y0;
  S->g = B.g;
  S->i0 = 0;
  S->n = dband_iters(W, B.g);
  return S;
}

void ht_wf_diagonal_work(wf *W, int me)
{
  const int64_t t_start = wf_stat_clock();
  WF_STAT_SET(W, me, cpu0, sched_getcpu());
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
    const int64_t t_sched = wf_stat_clock();
    int64_t n = cur ? dspan(W, cur) : 0;
    bool own = n > 0;
    if (WF_TEST && own && ((uint64_t)ht_now_ns() * 0x9e3779b97f4a7c15u >> 61) == 0)
      own = false; /* tests: hand bands over that could go on, too */
    dband *S = own ? cur : dclaim(W);
    if (!S)
      S = dtake(W, me);
    if (S && S != cur)
      n = dspan(W, S); /* > 0: it was ready, and the band above only moves on */
    WF_STAT(W, me, sched_ns, ht_now_ns() - t_sched);
    if (S) {
      if (idle) {
        idle = false;
        atomic_fetch_sub(&W->idlers, 1);
        WF_STAT(W, me, wait_ns, ht_now_ns() - t_idle);
      }
      if (cur && S != cur) {
        dflush(W, cur, d);
        ran = NULL;
        dpark(W, cur);
        WF_STAT(W, me, steps, 1);
      }
      if (WF_TEST && S->i0 > 0 && S->by != me)
        WF_TEST_COUNT(moves);
      cur = S;
      cur->by = me;
      const int64_t end = cur->y0 + cur->g;
      const int g = cur->g;
      /* once its last block is done, the band's slot may be a new band's */
      const bool done = ht_wf_diagonal_block(W, cur, d, cur != ran, (int)n);
      WF_STAT(W, me, nblk, 1);
      WF_STAT(W, me, iters, n);
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
        WF_STAT(W, me, bands, 1);
        WF_STAT(W, me, rows, g);
        const band B = { cur->b, cur->y0, g, 0 };
        ht_wf_carry_out(W, &B);
        cur = NULL;
        ran = NULL; /* its slot may come back as another band */
      }
      continue;
    }
    if (!cur && !dtickets_left(W) && atomic_load_explicit(&W->nparked, memory_order_relaxed) == 0)
      break; /* what is left is in other threads' hands */
    /* Nothing can run: spin while other threads make progress (a block
     * takes microseconds), but when none shows for a while (preempted
     * threads, a busy machine) block, as ht_wf_wait_band does. */
    const int64_t now = ht_now_ns();
    if (!idle) {
      idle = true;
      atomic_fetch_add(&W->idlers, 1);
      t_idle = t_moved = now;
      beat = atomic_load(&W->beat);
      spins = 0;
      WF_STAT(W, me, waits, 1);
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
        ht_wf_wait_1ms(&W->idle_wake, &W->idle_lock);
      atomic_fetch_sub(&W->sleepers, 1);
      pthread_mutex_unlock(&W->idle_lock);
      t_idle = t_moved = ht_now_ns();
      WF_STAT(W, me, blocks, 1);
    }
  }
  if (idle)
    atomic_fetch_sub(&W->idlers, 1);
  WF_STAT_SET(W, me, run_ns, ht_now_ns() - t_start);
  WF_STAT_SET(W, me, cpu1, sched_getcpu());
}
#endif

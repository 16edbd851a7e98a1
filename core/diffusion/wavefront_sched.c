/* The wavefront's scheduling: which thread runs which band, how a band
 * waits for the band above, and how tall a band is.
 *
 *  - Tickets. A free thread takes the next band from one atomic word, so
 *    bands start in order, stacked one below the other, and a thread
 *    only ever waits for a band that a running thread holds.
 *  - Progress. Each band publishes how far it is in a counter of its own
 *    cache line (C11 release/acquire); the first row of band b follows
 *    the last row of band b - 1 through it. A waiter spins while the band
 *    above moves, and blocks when it stalls (its thread was preempted),
 *    so that the core goes to whoever can use it.
 *  - Paces and heights. A band can go no faster than the band above, and
 *    the cores of a virtual machine need not be equally fast: with bands
 *    of equal height the whole chain would run at the pace of its
 *    slowest thread (BENCHMARKS.md). So a band's height is chosen when a
 *    thread takes it, in proportion to that thread's recent pace (time
 *    per row-chunk, waits left out): the fastest thread takes bands of bg
 *    rows, one half as fast bands of bg / 2. Every band then does a step
 *    in about the same time, and the chain goes at the sum of the
 *    threads' rates. Heights never change what is computed. */
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "wavefront_sched.h"

#ifdef HT_WF_HEIGHT_TEST
_Atomic long long ht_wf_test_other_heights;
_Atomic long long ht_wf_test_moves;
_Atomic long long ht_wf_test_overruns;
#endif

/* Waits on c (m held) for a millisecond at most: a bounded wait, so a
 * cancel (or a lost wake-up) is noticed within a millisecond. */
void ht_wf_wait_1ms(pthread_cond_t *c, pthread_mutex_t *m)
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
 * most `all`, the band's total), so that it does not trail the band at
 * the minimum distance, re-reading the counter (and taking the line away
 * from the writer) at every step. `waited` accumulates the time spent
 * here.
 * It spins first: while the thread it waits for runs, the wait is a
 * fraction of a step. When the band above shows no life for a while
 * (its thread was preempted) it blocks, so that its core can go to that
 * thread (or to another program) rather than to spinning; publish()
 * wakes it. "A while" is STALL_NS with more threads than cores, but the
 * longer STALL_NS_CORES with no more: the vCPUs of a virtual machine
 * pause briefly and often, and a thread that blocked at each pause would
 * pay a wake-up, dearer than the pause, on the chain of bands. Never
 * blocking is no better: beside a program hogging a core, the waiter
 * would keep the free core busy, and the stalled thread would never be
 * moved to it (BENCHMARKS.md). */
bool ht_wf_wait_band(wf *W, int me, int64_t b, uint64_t need, uint64_t all, uint64_t *seen, int64_t *waited)
{
  const uint64_t base = (uint64_t)b << 32;
  if (*seen >= base + need)
    return true;
  wf_progress *p = &W->prog[b % W->ring];
  if ((*seen = atomic_load_explicit(&p->v, memory_order_acquire)) >= base + need)
    return true;
  const uint64_t want = base + (need + SLACK < all ? need + SLACK : all);
  /* Poll while the band we wait for is alive: a running band publishes
   * every few microseconds, and a blocked thread would pay a wake-up
   * (tens of microseconds, more in a VM) on the critical chain of bands.
   * A band that polls for its own predecessor says so in `polling`, so
   * a queue of waiting bands keeps polling while its head moves. When the
   * band above neither moves nor polls for W->stall_ns, its thread has
   * been preempted (a busy machine) or sleeps: then block too, and leave
   * the core to whoever can use it; likewise after POLL_NS. */
  wf_progress *mine = &W->prog[(b + 1) % W->ring];
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
  WF_STAT(W, me, waits, 1);
  WF_STAT(W, me, blocks, block);
  const int64_t t_block = wf_stat_clock();
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
      ht_wf_wait_1ms(&p->wake, &p->lock);
    }
    atomic_fetch_sub(&p->sleepers, 1);
    pthread_mutex_unlock(&p->lock);
  }
  *waited += ht_now_ns() - t0;
  WF_STAT(W, me, wait_ns, ht_now_ns() - t0);
  WF_STAT(W, me, block_ns, block ? ht_now_ns() - t_block : 0);
  return ok;
}

/* Takes the next band of the image off the ticket: `want` rows, fewer
 * at its end; when `may` is given, only if it lets band b of g rows
 * start now. False when no band is left, or it may not start. Bands are
 * numbered in order and stacked: each starts below the one taken before
 * it. */
bool ht_wf_ticket_take(wf *W, int want, bool (*may)(const wf *W, int64_t b, int g), band *B)
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
      if (WF_TEST && g != W->bg && y0 + g < W->h)
        WF_TEST_COUNT(other_heights);
      return true;
    }
  }
}

/* Rows for the next band of thread `me`: in proportion to its pace
 * (bg for the fastest thread), so that every band does a step in about
 * the same time whichever core runs it. */
int ht_wf_band_rows(const wf *W, int me)
{
  if (WF_TEST) { /* tests: bands of any height the tiles allow */
    const uint64_t r = (uint64_t)ht_now_ns() * 0x9e3779b97f4a7c15u + (uint64_t)me;
    if (W->diag)
      return 8 * (1 + (int)((r >> 40) % (uint64_t)(W->bg / 8)));
    return BG_MIN + (int)((r >> 40) % (uint64_t)(G - BG_MIN + 1));
  }
  if (W->diag) /* its bands change threads: no thread's pace is theirs */
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
}

/* Carried rows (job.h): the rows of band B that the band below it in a
 * taller image reads, copied once the band is done from its set, where
 * its last dk rows are whole rows. Only the image's last bands have
 * any. */
void ht_wf_carry_out(const wf *W, const band *B)
{
  if (!W->job->carry_out)
    return;
  for (int j = B->g - W->dk > 0 ? B->g - W->dk : 0; j < B->g; j++) {
    int32_t *dst = ht_job_carry_out_row(W->job, W->w, W->h, B->y0 + j);
    if (dst)
      memcpy(dst, band_set(W, B->b) + (size_t)(j - (B->g - W->dk)) * W->S, (size_t)W->w * sizeof *dst);
  }
}

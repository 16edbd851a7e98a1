/* The wavefront's tuning knobs and build variants, in one place.
 *
 * Every HT_WF_* knob below may be set with -D for experiments; the
 * defaults are the measured best (BENCHMARKS.md). Build variants:
 *   HT_WF_STATS        bench builds: where each thread's time went,
 *                      printed to stderr after every run;
 *   HT_WF_HEIGHT_TEST  test builds: bands of random heights, short
 *                      diagonal blocks, diagonal bands handed to other
 *                      threads at random, and the counters below, so
 *                      that the tests reach what a quiet machine rarely
 *                      does (core/meson.build);
 *   HT_WF_NO_DIAG      test builds: no diagonal kernel, so that the
 *                      parallelogram runs every band;
 *   HT_WF_NO_AVX2      neither the diagonal kernel nor the AVX2
 *                      instances: the SSE2 path.
 * The code asks for a variant through the constants WF_STATS, WF_TEST,
 * WF_DIAG and WF_AVX2 in plain `if`s, which the compiler removes, and
 * counts through WF_STAT and WF_TEST_COUNT, which compile to nothing in
 * normal builds. */
#ifndef HT_WF_TUNING_H
#define HT_WF_TUNING_H

#include "job.h"

#ifdef HT_WF_HEIGHT_TEST
#define WF_TEST 1
#else
#define WF_TEST 0
#endif

/* ------------------------------------------------------------ the knobs */

/* The parallelogram kernel: bands of at most G rows (>= the filter's
 * rows, < 256 for the ticket), chunks of C columns (> the filter's
 * width), each row's chunks SHIFT columns left of the row above's (0:
 * the filter's reach to the lower left, the least that works). */
#ifndef HT_WF_G
#define HT_WF_G 16
#endif
#ifndef HT_WF_C
#define HT_WF_C 32
#endif
#ifndef HT_WF_SHIFT
#define HT_WF_SHIFT 0
#endif
/* Columns a row loads, or stores, per call: shorter spans are slower
 * with 2 threads, the interleaved rows' input streams being too short
 * for the prefetchers. */
#ifndef HT_WF_IOB
#define HT_WF_IOB 1024
#endif
/* Chunk steps between two publications of a band's progress (each may
 * take the line back from a reader on another core), and the extra
 * steps a band that had to wait lets the band above run ahead. */
#ifndef HT_WF_PUB
#define HT_WF_PUB 2
#endif
#ifndef HT_WF_SLACK
#define HT_WF_SLACK 2
#endif
/* Waiting (wavefront_sched.c): a waiter blocks when the band above has
 * shown no life for STALL_NS (more threads than cores) or STALL_NS_CORES
 * (no more), and after POLL_NS in any case. */
#ifndef HT_WF_STALL_NS
#define HT_WF_STALL_NS 50000
#endif
#ifndef HT_WF_STALL_NS_CORES
#define HT_WF_STALL_NS_CORES 1000000
#endif
#ifndef HT_WF_POLL_NS
#define HT_WF_POLL_NS 2000000
#endif
/* Row-chunks between two pace samples: about 0.4 ms, so that a pace is
 * a core's lasting speed, not a hiccup. */
#ifndef HT_WF_PACE_UNITS
#define HT_WF_PACE_UNITS 4096
#endif
/* The diagonal kernel: bands of at most DG rows (DG / 8 vectors), blocks
 * of at most DK iterations and at least DMIN but a band's last (fewer to
 * go, a thread does another band meanwhile), and up to DRING / 2 bands
 * in flight per thread. Test builds take short blocks, so that small
 * images have many blocks and bands in flight too. */
#ifndef HT_WF_DG
#define HT_WF_DG 32
#endif
#ifndef HT_WF_DK
#define HT_WF_DK (WF_TEST ? 32 : 256)
#endif
#ifndef HT_WF_DMIN
#define HT_WF_DMIN (WF_TEST ? 8 : 32)
#endif
#ifndef HT_WF_DRING
#define HT_WF_DRING 4
#endif

#define G HT_WF_G
#define C HT_WF_C
#define IOB HT_WF_IOB
#define PUB HT_WF_PUB
#define SLACK HT_WF_SLACK
#define STALL_NS HT_WF_STALL_NS
#define STALL_NS_CORES HT_WF_STALL_NS_CORES
#define POLL_NS HT_WF_POLL_NS
#define PACE_UNITS HT_WF_PACE_UNITS
#define DG HT_WF_DG
#define DK HT_WF_DK
#define DMIN HT_WF_DMIN
#define DRING HT_WF_DRING

/* ------------------------------------------------------- the variants */

/* x86 with GCC or clang: the AVX2 instances and the diagonal kernel are
 * compiled, and used where the CPU has AVX2 (wf_cpu_has_avx2). */
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define WF_AVX2 1
#else
#define WF_AVX2 0
#endif
#if WF_AVX2 && !defined(HT_WF_NO_DIAG)
#define WF_DIAG 1
#else
#define WF_DIAG 0
#endif

static inline bool wf_cpu_has_avx2(void)
{
#if WF_AVX2 && !defined(HT_WF_NO_AVX2)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2");
#else
  return false;
#endif
}

/* Test builds count, for the equivalence test: bands taken of other than
 * bg rows (so heights did vary), diagonal bands that went on in another
 * thread than their last block, and diagonal blocks that started before
 * the band above had done every column they read (never, or the output
 * is a matter of luck). */
#ifdef HT_WF_HEIGHT_TEST
extern _Atomic long long ht_wf_test_other_heights;
extern _Atomic long long ht_wf_test_moves;
extern _Atomic long long ht_wf_test_overruns;
#define WF_TEST_COUNT(name) atomic_fetch_add_explicit(&ht_wf_test_##name, 1, memory_order_relaxed)
#else
#define WF_TEST_COUNT(name) ((void)0)
#endif

/* Bench builds: where each thread's time went (wavefront.c prints it). */
#ifdef HT_WF_STATS
#define WF_STATS 1
#else
#define WF_STATS 0
#endif
typedef struct {
  _Alignas(64) int64_t bands, rows, steps, waits, blocks, wait_ns, block_ns, run_ns, sched_ns, nblk, iters;
  int cpu0, cpu1;
} wf_stats;
/* thread me's counter `field` += n; the clock, 0 in normal builds */
#define WF_STAT(W, me, field, n) (WF_STATS ? (void)((W)->st[me].field += (n)) : (void)0)
#define WF_STAT_SET(W, me, field, v) (WF_STATS ? (void)((W)->st[me].field = (v)) : (void)0)
static inline int64_t wf_stat_clock(void) { return WF_STATS ? ht_now_ns() : 0; }

#endif

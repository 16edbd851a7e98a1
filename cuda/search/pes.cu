/* cuda/search/pes.cu: partial exhaustive search (PES) on the GPU: Kouge,
 * Ito, Nakano, Sec. IV-C (the LES kernel's shape with the search of
 * Sec. II-C: the best pattern r_k among the C(n, k) with k white pixels,
 * from k = beta, the window's own count, walking to the valley; lists in
 * which neighbours differ in two positions).
 *
 * The walk and its tie rules are core/search/pes.c's, step for step;
 * only each r_k is computed differently: thread h of the 2^hb threads
 * takes the patterns of C(n, k) whose high hb bits are h and lists their
 * low bits in revolving-door order (two flips a step, Knuth's Algorithm
 * R: core/shared/revolving_door.h), and the block takes the least
 * (error, value). That is r_k whatever the order of the list: for k other
 * than beta the least by error, then value; for k = beta the current
 * pattern unless some pattern is strictly better.
 *
 * An r_k counts only where its error is at most L = min(kept, -1), kept
 * the error of the best pattern so far (relative to the current one):
 * the walk's every decision and the pattern kept (pes.c) are the same
 * whether an r_k of error > L has its own error or any other error > L
 * (docs/search.md, "PES's bounds"). So a thread skips its block where
 * low_bound says that everything in it is above L, and r_k may then be
 * "none" (error LLONG_MAX) or another pattern of error > L. */
#include "common.cuh"

#define HT_RD_MAX_N (HT_SEARCH_WINDOW_MAX * HT_SEARCH_WINDOW_MAX)
#include "../../core/shared/revolving_door.h"

#include <climits>

namespace htcuda {

namespace {

using namespace sx;

/* pes.c's rule: whether c replaces best, the current pattern cur. */
__device__ __forceinline__ bool replaces(cand c, cand best, uint32_t cur)
{
  return c.sum < best.sum || (c.sum == best.sum && best.x != cur && c.x < best.x);
}

struct pes {
  /* pes.c's walk from beta, the window's white count, to the valley. */
  template <int S> __device__ static uint32_t search(const plane &P, const frame &F, uint32_t cur)
  {
    const int nt = blockDim.x, tid = threadIdx.x, rs = P.rh * P.rw, n = P.n, hb = F.hb, lo = F.lo;
    const long long base = region_error(F.reg, rs); /* the current pattern's region error */
    const int beta = __popc(cur);
    cand kept = { 0, cur };
    /* r_k, the same in every thread */
    auto best_of = [&](int k) -> cand {
      cand c = { LLONG_MAX, 0xffffffffu };
      const int kl = k - __popc((unsigned)tid);
      if (tid < (1 << hb) && kl >= 0 && kl <= lo) {
        uint32_t x = (uint32_t)tid << lo; /* the low pixels black, then the first of the list */
        long long sum = start_at<S>(P, F, x, cur);
        if (low_bound(F.slot, nt, F.reach, rs) > base + (kept.sum < -1 ? kept.sum : -1))
          goto none;
        for (int b = 0; b < kl; b++)
          sum += flip<S>(F.slot, nt, F.tab + b * S * S, F.at[b], P.rw, true);
        ht_rd g;
        x |= ht_rd_first(&g, lo, kl);
        c = { sum, x };
        int out, inn;
        while (ht_rd_next(&g, &out, &inn)) {
          sum += flip<S>(F.slot, nt, F.tab + out * S * S, F.at[out], P.rw, false); /* out turns black */
          sum += flip<S>(F.slot, nt, F.tab + inn * S * S, F.at[inn], P.rw, true);  /* in turns white */
          x ^= 1u << out | 1u << inn;
          if (lex_less(cand{ sum, x }, c))
            c = { sum, x };
        }
      }
    none:
      cand r = block_min(c, F.red);
      if (k == beta && r.sum >= 0)
        r = { 0, cur };
      return r;
    };
    const cand mid = best_of(beta);
    if (replaces(mid, kept, cur))
      kept = mid;
    cand lo_c = { LLONG_MAX, 0 }, hi_c = { LLONG_MAX, 0 };
    if (beta > 0 && replaces(lo_c = best_of(beta - 1), kept, cur))
      kept = lo_c;
    if (beta < n && replaces(hi_c = best_of(beta + 1), kept, cur))
      kept = hi_c;
    const bool up = beta < n && (beta == 0 || lex_less(hi_c, lo_c));
    cand prev = up ? hi_c : lo_c;
    if (prev.sum < mid.sum)
      for (int k = beta + (up ? 2 : -2); k >= 0 && k <= n; k += up ? 1 : -1) {
        const cand next = best_of(k);
        if (replaces(next, kept, cur))
          kept = next;
        if (next.sum >= prev.sum)
          break;
        prev = next;
      }
    return kept.x;
  }
};

} // namespace

cudaError_t sx_launch_pes(const plane &P, int nt, size_t bytes, cudaStream_t st)
{
  return launch_windows<pes>(P, nt, bytes, st);
}

} // namespace htcuda

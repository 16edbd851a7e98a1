/* Local exhaustive search (LES): Kouge, Ito, Nakano, Sec. II-B (the
 * search, formula 6) and Sec. III (Gray-code order, incremental errors).
 *
 * At a window of n = wh x ww pixels the step finds the pattern of least
 * total error among all 2^n, by the tie rule of docs/search.md: start
 * with best = the current pattern; a pattern replaces best if its error
 * is strictly lower, or equal to best's while best is not the current
 * pattern and its value is smaller. The result is then the current
 * pattern if nothing is strictly better, else the smallest-valued of the
 * least-error patterns, whatever the order of the visit.
 *
 * The visit is the binary reflected Gray code from the current pattern:
 * step t flips bit ctz(t), one pixel, and ht_sx_flip updates the region's
 * errors and their sum in O(r^2) (Sec. III).
 *
 * Early outs that keep the result (docs/search.md, "bounds"): in the
 * Gray code the steps t .. t + 2^d - 1, t a multiple of 2^d, visit every
 * pattern of the low d bits with the high bits fixed, and leave the low
 * bits as they were but for bit d - 1. Over such a block each error e(p)
 * stays within [e(p) - Z(p), e(p) + O(p)], Z and O the reach of the free
 * pixels that can turn white and black, so the block's errors are at
 * least the sum over p of the distance from 0 to that interval. Where
 * that bound is strictly above the best error so far, no pattern of the
 * block can become best (not even by a tie), and the step flips bit
 * d - 1 alone instead of the 2^d - 1 flips. Blocks of d = 4, 8, 12, ...
 * (LEVEL) are tried, the largest first. */
#include "kernel.h"

#define LEVEL HT_SX_BOUND_BITS

/* The bounds' Z and O for level li (d = LEVEL (li + 1) free low bits)
 * and block parity par (the free bits are the current pattern's, bit
 * d - 1 flipped in odd blocks): per region vector, the sum of the tables
 * of the free pixels that are black (Z: they can lower e) and white (O).
 * `rows` vectors each, those past the region zero. */
HT_SX_INLINE void make_bounds(const ht_sx *s, ht_sx_scratch *w, int n, const int cnt, int rows)
{
  const int nv = s->nv;
  for (int li = 0; li < ht_les_levels(n); li++) {
    const int d = LEVEL * (li + 1);
    for (int par = 0; par < 2; par++) {
      ht_sxv *z = w->work + (size_t)((li * 2 + par) * 2) * (size_t)rows, *o = z + rows;
      for (int i = 0; i < 2 * rows; i++)
        z[i] = (ht_sxv){ 0 };
      for (int q = 0; q < d; q++) {
        const int white = (int)(w->cur >> q & 1) ^ (q == d - 1 ? par : 0);
        ht_sxv *dst = (white ? o : z) + (q / s->ww) * nv;
        const ht_sxv *t = w->tab[q][0]; /* 65535 w >= 0 */
        for (int i = 0; i < cnt; i++)
          dst[i] += t[i];
      }
    }
  }
}

/* The least error a block can have: the sum over the region of
 * max(0, e - Z, -(e + O)) (e - Z and e + O are errors of patterns of the
 * block, so they fit). */
HT_SX_INLINE int64_t bound(const ht_sx_region *R, const bool reg, const ht_sxv *z, const ht_sxv *o)
{
  ht_sxq8 q = { 0 };
  const ht_sxv zero = { 0 };
  for (int i = 0; i < R->rows; i++) {
    const ht_sxv e = ht_sx_vec(R, reg, i);
    q = ht_sx_widen_add(q, ht_sx_max(ht_sx_max(e - z[i], -(e + o[i])), zero));
  }
  return ht_sx_qsum(q);
}

HT_SX_INLINE uint32_t search(const ht_sx *s, ht_sx_scratch *w, const bool reg, const int cnt)
{
  const int n = s->wh * s->ww;
  const uint32_t cur = w->cur, end = 1u << n;
  ht_sx_region R;
  ht_sx_open(&R, s, w, reg);
  const int rows = R.rows;
  make_bounds(s, w, n, cnt, rows);
  const int64_t base = ht_sx_sum(&R, reg);
  uint32_t state = cur, best = cur;
  int64_t sum = 0, best_sum = 0; /* the region's error minus base */
  for (uint32_t t = 1; t < end;) {
    const int k = __builtin_ctz(t);
    sum += ht_sx_flip_k(&R, reg, k, state, cnt);
    state ^= 1u << k;
    bool skip = false;
#ifndef HT_SX_NO_BOUNDS /* for measurements of what the bounds save */
    for (int li = k / LEVEL - 1; li >= 0 && !skip; li--) {
      const int d = LEVEL * (li + 1);
      const ht_sxv *z = w->work + (size_t)((li * 2 + (int)(t >> d & 1)) * 2) * (size_t)rows;
      if (bound(&R, reg, z, z + rows) > base + best_sum) {
        sum += ht_sx_flip_k(&R, reg, d - 1, state, cnt);
        state ^= 1u << (d - 1);
        t += 1u << d;
        skip = true;
      }
    }
#endif
    if (skip)
      continue;
    if (sum <= best_sum && (sum < best_sum || (best != cur && state < best))) {
      best = state;
      best_sum = sum;
    }
    t++;
  }
  ht_sx_flip_all(&R, reg, &state, state ^ best, cnt); /* e for the pattern kept */
  ht_sx_close(&R, reg);
  return best;
}

bool HT_SX_FN(ht_les_step)(const ht_sx *s, ht_sx_scratch *w, int64_t i, int64_t j)
{
  return ht_sx_search_step(s, w, i, j, search);
}

/* Partial exhaustive search (PES): Kouge, Ito, Nakano, Sec. II-C (the
 * search over C(n, k), formulas 7 and 8) and Sec. IV-C (lists in which
 * neighbours differ in two positions).
 *
 * r_k is the best pattern with k white pixels (the tie rule of les.c,
 * the current pattern a candidate for k = beta, its number of white
 * pixels, and for no other k). The step computes r_beta, r_beta-1 and
 * r_beta+1; where the better of the two neighbours (by error, then by
 * value) is strictly better than r_beta it walks that way, computing
 * r_k+dir while it is strictly better than r_k; the pattern kept is the
 * best of every r_k computed, by the tie rule. docs/search.md gives the
 * rule in full.
 *
 * Each C(n, k) is listed in revolving-door order, R(j, t) = R(j - 1, t),
 * then R(j - 1, t - 1) reversed with element j - 1 (the order of
 * revolving_door.h), walked as that recursion: a block R(j, t) has the
 * window's pixels j .. n - 1 fixed and t of the pixels 0 .. j - 1 white,
 * its first and last patterns differ in two positions, and so does each
 * pattern from the next (a step is two flips, ht_sx_flip).
 *
 * Bounds that keep the result (docs/search.md, "PES's bounds"):
 *  - over a block, each error e(p) lies in [E(p) - F(p), E(p)], E the
 *    error with the block's free pixels black and F the reach of those
 *    pixels, so the block's errors are at least the sum over p of the
 *    distance from 0 to that interval (LES's bound);
 *  - r_k only counts where its error is at most L = min(kept, -1)
 *    (kept: the error of the best pattern so far, relative to the
 *    current one): every test of the walk and the choice of the kept
 *    pattern give the same answer whether such an r_k is exact or any
 *    pattern of error > L (the proof is in docs/search.md);
 * so where a block's bound is strictly above min(best of the list so
 * far, L) none of its patterns can change r_k where r_k counts, and the
 * step jumps from the block's first pattern to its last (two flips).
 * The r_k that count are exact; the kept pattern and every decision of
 * the walk are those of the search without bounds. */
#include "kernel.h"

#include <limits.h>

/* Blocks of fewer free pixels or fewer patterns, or of an odd number of
 * free pixels (the block's halves, one pixel fewer, are tried instead),
 * are walked without a bound: a bound costs about as much as a step. */
#define MIN_FREE 4
#define MIN_PATTERNS 6

typedef struct {
  uint32_t x;  /* the pattern */
  int64_t sum; /* its error, minus the current pattern's */
} cand;

/* The tie rule of les.c: whether c replaces best. */
HT_SX_INLINE bool replaces(cand c, cand best, uint32_t cur)
{
  return c.sum < best.sum || (c.sum == best.sum && best.x != cur && c.x < best.x);
}

/* The better of two patterns: by error, then by value. */
HT_SX_INLINE bool better(cand a, cand b) { return a.sum < b.sum || (a.sum == b.sum && a.x < b.x); }

/* P_i = the sum of the flip tables (65535 w >= 0) of window pixels
 * 0 .. i - 1, over the region's `rows` vectors, for i = 0 .. n: the reach
 * of the first i pixels. */
HT_SX_INLINE void make_prefix(const ht_sx *s, ht_sx_scratch *w, int n, const int cnt, int rows)
{
  ht_sxv *p = w->work;
  for (int i = 0; i < rows; i++)
    p[i] = (ht_sxv){ 0 };
  for (int q = 0; q < n; q++) {
    ht_sxv *dst = p + (size_t)(q + 1) * (size_t)rows;
    const ht_sxv *src = dst - rows, *t = w->tab[q][0];
    for (int i = 0; i < rows; i++)
      dst[i] = src[i];
    dst += (q / s->ww) * s->nv;
    for (int i = 0; i < cnt; i++)
      dst[i] += t[i];
  }
}

/* The least error of block R(j, t) entered at its first pattern (the
 * free white pixels 0 .. t - 1: E = e + P_t) or, reversed, at its last
 * (0 .. t - 2 and j - 1: E = e + P_t-1 + P_j - P_j-1): the sum over the
 * region of max(0, E - P_j, -E). E and E - P_j are errors of patterns
 * (all free pixels black, all white), so they fit in int32. */
HT_SX_INLINE int64_t bound(const ht_sx_region *R, const bool reg, const ht_sxv *pre, int rows, int j, int t, bool rev)
{
  const ht_sxv *pj = pre + (size_t)j * (size_t)rows;
  const ht_sxv *pa = pre + (size_t)(rev ? t - 1 : t) * (size_t)rows;
  const ht_sxv *pb = pre + (size_t)(j - 1) * (size_t)rows;
  ht_sxq8 q = { 0 };
  const ht_sxv zero = { 0 };
  for (int i = 0; i < rows; i++) {
    ht_sxv e = ht_sx_vec(R, reg, i) + pa[i];
    if (rev)
      e += pj[i] - pb[i];
    q = ht_sx_widen_add(q, ht_sx_max(ht_sx_max(e - pj[i], -e), zero));
  }
  return ht_sx_qsum(q);
}

/* A block of the revolving-door recursion: R(j, t) forward or reversed,
 * and how far its walk has gone (0: not begun, 1: first half done). */
typedef struct {
  int8_t j, t, rev, half;
} frame;

/* r_k, listing C(n, k) from the state *state (its error *sum); `base`
 * the current pattern's region error, `limit` the L above. One flip
 * site for the steps and the jumps, for the compiler's sake. */
HT_SX_INLINE cand best_of(const ht_sx *s, ht_sx_scratch *w, ht_sx_region *R, const bool reg, int k, uint32_t *state,
                          int64_t *sum, int64_t base, int64_t limit, const int cnt)
{
  const int n = s->wh * s->ww, rows = R->rows;
  const uint32_t cur = w->cur;
  const uint32_t first = k >= 32 ? 0xffffffffu : (1u << k) - 1;
  uint32_t x = *state;
  int64_t d = *sum + ht_sx_flip_all(R, reg, &x, x ^ first, cnt);
  /* for k = beta the current pattern starts as best; else nothing */
  cand best = { cur, __builtin_popcount(cur) == k ? 0 : INT64_MAX };
  frame st[HT_SX_MAX_BITS + 1];
  int sp = 0;
  st[0] = (frame){ (int8_t)n, (int8_t)k, 0, 0 };
  /* a block of one pattern (t = 0 or t = j) is visited where it would be
   * pushed, without a frame */
#define VISIT()                                                                                                       \
  do {                                                                                                                 \
    const cand c_ = { x, d };                                                                                          \
    if (replaces(c_, best, cur))                                                                                       \
      best = c_;                                                                                                       \
  } while (0)
  if (k == 0 || k == n) {
    VISIT();
    sp = -1;
  }
  while (sp >= 0) {
    frame *f = &st[sp];
    const int j = f->j, t = f->t;
    int out = -1, in = -1; /* a swap: out turns black, in white */
    bool leaf = false;     /* the swap enters a block of one pattern */
    if (f->half == 0) {
      bool skip = false;
#ifndef HT_SX_NO_BOUNDS /* for measurements of what the bounds save */
      skip = j >= MIN_FREE && !(j & 1) && ((t > 1 && t < j - 1) || j >= MIN_PATTERNS) &&
             bound(R, reg, w->work, rows, j, t, f->rev) > base + (best.sum < limit ? best.sum : limit);
#endif
      if (skip) { /* first {0 .. t-1} <-> last {0 .. t-2, j-1} */
        out = f->rev ? j - 1 : t - 1;
        in = f->rev ? t - 1 : j - 1;
        sp--;
      } else {
        /* forward: R(j-1, t), then R(j-1, t-1) reversed; reversed:
         * R(j-1, t-1) (j - 1 white), then R(j-1, t) reversed */
        f->half = 1;
        const int tc = f->rev ? t - 1 : t;
        if (tc == 0 || tc == j - 1)
          VISIT();
        else
          st[++sp] = (frame){ (int8_t)(j - 1), (int8_t)tc, 0, 0 };
      }
    } else if (f->half == 1) {
      /* the last of the first half to the first of the second: pixel
       * a = t - 2 (j - 2 for t = 1) and pixel j - 1 trade places */
      const int a = t >= 2 ? t - 2 : j - 2;
      out = f->rev ? j - 1 : a;
      in = f->rev ? a : j - 1;
      f->half = 2;
      const int tc = f->rev ? t : t - 1;
      if (tc == 0 || tc == j - 1)
        leaf = true;
      else
        st[++sp] = (frame){ (int8_t)(j - 1), (int8_t)tc, 1, 0 };
    } else
      sp--;
    if (out >= 0)
      d += ht_sx_flip_all(R, reg, &x, 1u << out | 1u << in, cnt);
    if (leaf)
      VISIT();
  }
#undef VISIT
  *state = x;
  *sum = d;
  return best;
}

HT_SX_INLINE uint32_t search(const ht_sx *s, ht_sx_scratch *w, const bool reg, const int cnt)
{
  const int n = s->wh * s->ww;
  const uint32_t cur = w->cur;
  const int beta = __builtin_popcount(cur);
  ht_sx_region R;
  ht_sx_open(&R, s, w, reg);
  make_prefix(s, w, n, cnt, R.rows);
  const int64_t base = ht_sx_sum(&R, reg);
  uint32_t state = cur;
  int64_t sum = 0;
  cand kept = { cur, 0 };
  /* r_beta, r_beta-1, r_beta+1 (those that exist), then the walk
   * towards the better neighbour while each r_k is strictly better than
   * the one before; one call site of best_of */
  int ks[3], nk = 0;
  ks[nk++] = beta;
  if (beta > 0)
    ks[nk++] = beta - 1;
  if (beta < n)
    ks[nk++] = beta + 1;
  cand mid = kept, lo = { 0, INT64_MAX }, hi = { 0, INT64_MAX }, prev = kept;
  int dir = 0;
  for (int idx = 0, k = beta;; idx++) {
    if (idx < nk)
      k = ks[idx];
    else {
      if (idx == nk) {
        const bool up = beta < n && (beta == 0 || better(hi, lo));
        prev = up ? hi : lo;
        if (prev.sum >= mid.sum)
          break;
        dir = up ? 1 : -1;
        k = beta + dir;
      }
      k += dir;
      if (k < 0 || k > n)
        break;
    }
    const cand c = best_of(s, w, &R, reg, k, &state, &sum, base, kept.sum < -1 ? kept.sum : -1, cnt);
    if (replaces(c, kept, cur))
      kept = c;
    if (idx < nk) {
      if (k == beta)
        mid = c;
      else if (k < beta)
        lo = c;
      else
        hi = c;
    } else {
      if (c.sum >= prev.sum)
        break;
      prev = c;
    }
  }
  ht_sx_flip_all(&R, reg, &state, state ^ kept.x, cnt); /* e for the pattern kept */
  ht_sx_close(&R, reg);
  return kept.x;
}

bool HT_SX_FN(ht_pes_step)(const ht_sx *s, ht_sx_scratch *w, int64_t i, int64_t j)
{
  return ht_sx_search_step(s, w, i, j, search);
}

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
 * Each C(n, k) is listed in revolving-door order (revolving_door.h),
 * from the state the last list left: a step is two flips (ht_sx_flip). */
#include "kernel.h"
#include "revolving_door.h"

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

/* r_k, listing C(n, k) from the state *state (its error *sum). */
HT_SX_INLINE cand best_of(const ht_sx *s, ht_sx_scratch *w, int k, uint32_t *state, int64_t *sum, const int cnt)
{
  const int n = s->wh * s->ww, nv = s->nv;
  const uint32_t cur = w->cur;
  ht_rd g;
  const uint32_t first = ht_rd_first(&g, n, k);
  *sum += ht_sx_flip_bits(s, w, state, *state ^ first);
  /* for k = beta the current pattern starts as best; else nothing */
  cand best = { cur, __builtin_popcount(cur) == k ? 0 : INT64_MAX };
  cand c = { first, *sum };
  if (replaces(c, best, cur))
    best = c;
  int out, in;
  while (ht_rd_next(&g, &out, &in)) {
    c.sum += ht_sx_flip(w->e + (out / s->ww) * nv, w->tab[out][0], cnt); /* out turns black */
    c.sum += ht_sx_flip(w->e + (in / s->ww) * nv, w->tab[in][1], cnt);   /* in turns white */
    c.x ^= 1u << out | 1u << in;
    if (replaces(c, best, cur))
      best = c;
  }
  *state = c.x;
  *sum = c.sum;
  return best;
}

HT_SX_INLINE uint32_t search(const ht_sx *s, ht_sx_scratch *w, const int cnt)
{
  const int n = s->wh * s->ww;
  const uint32_t cur = w->cur;
  const int beta = __builtin_popcount(cur);
  uint32_t state = cur;
  int64_t sum = 0;
  cand kept = { cur, 0 };
  const cand mid = best_of(s, w, beta, &state, &sum, cnt);
  if (replaces(mid, kept, cur))
    kept = mid;
  cand lo = { 0, INT64_MAX }, hi = { 0, INT64_MAX };
  if (beta > 0 && replaces(lo = best_of(s, w, beta - 1, &state, &sum, cnt), kept, cur))
    kept = lo;
  if (beta < n && replaces(hi = best_of(s, w, beta + 1, &state, &sum, cnt), kept, cur))
    kept = hi;
  /* the walk, towards the better neighbour while each r_k is strictly
   * better than the one before */
  const bool up = beta < n && (beta == 0 || better(hi, lo));
  cand prev = up ? hi : lo;
  if (prev.sum < mid.sum)
    for (int k = beta + (up ? 2 : -2); k >= 0 && k <= n; k += up ? 1 : -1) {
      const cand next = best_of(s, w, k, &state, &sum, cnt);
      if (replaces(next, kept, cur))
        kept = next;
      if (next.sum >= prev.sum)
        break;
      prev = next;
    }
  ht_sx_flip_bits(s, w, &state, state ^ kept.x); /* e for the pattern kept */
  return kept.x;
}

bool HT_SX_FN(ht_pes_step)(const ht_sx *s, ht_sx_scratch *w, int64_t i, int64_t j)
{
  ht_sx_begin(s, w, i, j);
  const int cnt = (2 * s->r + 1) * s->nv;
  uint32_t best;
  switch (cnt) { /* the usual eyes with constant loop counts */
  case 3: best = search(s, w, 3); break;
  case 5: best = search(s, w, 5); break;
  case 7: best = search(s, w, 7); break;
  default: best = search(s, w, cnt); break;
  }
  if (best == w->cur)
    return false;
  ht_sx_commit(s, w, best);
  return true;
}

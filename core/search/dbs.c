/* Direct binary search (DBS): Analoui and Allebach, "Model-based
 * halftoning by direct binary search" (1992), with the eye model and the
 * error of Kouge et al. (formulas 1-4) in place of theirs; Kouge et al.,
 * Table II, compares with it.
 *
 * At pixel p the candidates are: toggling p, then swapping p with each
 * of its 8 neighbours whose value differs (inside the image), in raster
 * order of (dy, dx). The step takes the candidate that lowers the total
 * error most, strictly; among equal ones the first in that order; none
 * when nothing lowers it. Its "window" for the schedule and the skip map
 * is the 3 x 3 around p (search.h: offset -1), window pixel 4 being p.
 *
 * The toggle's errors t = e + d_p are made once; a swap with n adds
 * n's flip to t. So each swap's change is the toggle's plus that of n's
 * flip over t, two sums that each fit in int32 (kernel.h) while their
 * total may not. */
#include "kernel.h"

#define P 4 /* p in the 3 x 3 window */

HT_SX_INLINE uint32_t search(const ht_sx *s, ht_sx_scratch *w, const int cnt)
{
  const int nv = s->nv, R = s->rh * nv;
  const uint32_t cur = w->cur;
  ht_sxv *t = w->work, *ta = w->work + R; /* t and |t| over the region */
  const ht_sxv *tp = w->tab[P][~cur >> P & 1];
  /* p's rows are region rows 1 .. 2r + 1 */
  for (int i = 0; i < R; i++)
    t[i] = w->e[i];
  ht_sxv acc = { 0 };
  for (int i = 0; i < cnt; i++) {
    const ht_sxv o = w->e[nv + i], n = o + tp[i];
    t[nv + i] = n;
    acc += ht_sx_abs(n) - ht_sx_abs(o);
  }
  for (int i = 0; i < R; i++)
    ta[i] = ht_sx_abs(t[i]);
  const int32_t toggle = ht_sx_hsum(acc);
  int64_t best = toggle < 0 ? toggle : 0;
  uint32_t kept = toggle < 0 ? cur ^ 1u << P : cur;
  const uint32_t other = (cur >> P & 1) ? ~cur : cur; /* bit k: k differs from p */
  for (int k = 0; k < 9; k++) {
    if (k == P || !(w->inside >> k & 1) || !(other >> k & 1))
      continue;
    const ht_sxv *tn = w->tab[k][~cur >> k & 1];
    const int ky = k / 3;
    ht_sxv a = { 0 };
    for (int i = 0; i < cnt; i++)
      a += ht_sx_abs(t[ky * nv + i] + tn[i]) - ta[ky * nv + i];
    const int64_t d = (int64_t)toggle + ht_sx_hsum(a);
    if (d < best) {
      best = d;
      kept = cur ^ (1u << P | 1u << k);
    }
  }
  if (kept != cur) {
    uint32_t state = cur;
    ht_sx_flip_bits(s, w, &state, cur ^ kept);
  }
  return kept;
}

bool HT_SX_FN(ht_dbs_step)(const ht_sx *s, ht_sx_scratch *w, int64_t i, int64_t j)
{
  ht_sx_begin(s, w, i, j);
  const int cnt = (2 * s->r + 1) * s->nv;
  uint32_t kept;
  switch (cnt) { /* the usual eyes with constant loop counts */
  case 3: kept = search(s, w, 3); break;
  case 5: kept = search(s, w, 5); break;
  case 7: kept = search(s, w, 7); break;
  default: kept = search(s, w, cnt); break;
  }
  if (kept == w->cur)
    return false;
  ht_sx_commit(s, w, kept);
  return true;
}

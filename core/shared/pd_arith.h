/* The arithmetic of plane-dependent colour error diffusion that every
 * backend shares (C and CUDA include this header): the split of a
 * plane's error between the intra-plane filter and the inter-plane
 * feeds, the randomised filter weights and the CMYK separation.
 * docs/color.md says why, docs/arithmetic.md ("Plane-dependent colour")
 * states the rules; Zhang et al., Sec. 2.1 (the feeds) and Ulichney
 * 1988 (the paper's ref. 8: perturbed weights). */
#ifndef HT_COLOR_PD_ARITH_H
#define HT_COLOR_PD_ARITH_H

#include "fixed.h"
#include "rng.h"

#define HT_PD_MAX_PLANES 4

/* term(e, q) of docs/arithmetic.md with a 64-bit product: equal to
 * ht_fx_term wherever that one does not overflow, and safe for the
 * larger errors that the inter-plane feeds can build up. */
HT_FX_INLINE int32_t ht_pd_term(int32_t e, int32_t q)
{
  return (int32_t)(((int64_t)e * q + HT_Q_HALF) >> HT_Q_BITS);
}

/* Q12 of an inter-plane weight or amount w in 0..1: floor(w*4096 + 1/2). */
static inline int32_t ht_pd_q12(double w) { return (int32_t)(w * HT_Q_ONE + 0.5); }

/* The filter's taps perturbed for one pixel and plane (Ulichney's
 * randomised weights): taps are paired in the filter's order (0 with 1,
 * 2 with 3, ...; an odd last tap stays); pair k moves
 *   d = (s * min(q_a, q_b) * amount) >> 27,  s = u - 32768,
 * from its second weight to its first, u being 16 bits of
 * ht_rng4(seed, plane, x, y, k / 8): word (k % 8) / 2, the low half for
 * even k. |d| <= min(q_a, q_b), so no weight goes negative, and every
 * pair keeps its sum, so the filter's sum stays. amount (Q12) 0 leaves
 * the weights as they are. */
HT_FX_INLINE void ht_pd_perturb(const int32_t *q, int ntaps, int32_t amount, uint64_t seed, uint32_t plane,
                                uint32_t x, uint32_t y, int32_t *out)
{
  uint32_t r[4] = { 0, 0, 0, 0 };
  for (int t = 0; t < ntaps; t++)
    out[t] = q[t];
  for (int k = 0; 2 * k + 1 < ntaps; k++) {
    if (k % 8 == 0)
      ht_rng4(seed, plane, x, y, (uint32_t)(k / 8), r);
    const uint32_t word = r[(k % 8) / 2];
    const int32_t s = (int32_t)((k & 1) ? word >> 16 : word & 0xFFFFu) - 32768;
    const int32_t a = q[2 * k], b = q[2 * k + 1];
    const int64_t m = a < b ? a : b;
    const int32_t d = (int32_t)(((int64_t)s * m * amount) >> 27);
    out[2 * k] = a + d;
    out[2 * k + 1] = b - d;
  }
}

/* CMYK from RGB (values 0..HT_FX_ONE), black generation `black` in Q16
 * (65536 = all of the common part):
 *   c, m, y = 65535 - r, g, b;  k = (min(c, m, y) * black + 32768) >> 16;
 *   C, M, Y, K = c - k, m - k, y - k, k
 * (grey component replacement by `black`; docs/color.md). */
HT_FX_INLINE void ht_pd_cmyk(int32_t r, int32_t g, int32_t b, int32_t black, int32_t out[4])
{
  const int32_t c = HT_FX_ONE - r, m = HT_FX_ONE - g, y = HT_FX_ONE - b;
  int32_t mn = c < m ? c : m;
  mn = mn < y ? mn : y;
  const int32_t k = (int32_t)(((int64_t)mn * black + 32768) >> 16);
  out[0] = c - k;
  out[1] = m - k;
  out[2] = y - k;
  out[3] = k;
}

/* Nearest level (core/shared/fixed.h's rule) of v for `levels` levels: the index,
 * and the error v - level value through *e. */
HT_FX_INLINE int32_t ht_pd_round(int32_t v, int32_t levels, int32_t *e)
{
  const int32_t q = levels == 2 ? ht_fx_binary(v) : ht_fx_quantize(v, levels);
  *e = v - (levels == 2 ? (q ? HT_FX_ONE : 0) : ht_fx_level(q, levels));
  return q;
}

#endif

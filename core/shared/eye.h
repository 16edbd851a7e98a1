/* The eye model of the search methods (LES, PES, DBS) and of the HVS
 * metric: a Gaussian low-pass filter V of (2r + 1)^2 weights (Kouge,
 * Ito, Nakano, Sec. II-A, formula 1), in fixed point so that every
 * backend computes the same integers.
 *
 *  Weights  Q15 (HT_EYE_ONE = 32768 is 1): every weight but the centre is
 *           round-half-up of its share of the Gaussian; the centre takes
 *           what makes the sum exactly HT_EYE_ONE. The table depends only
 *           on (sigma, radius) and is built on the host by ht_eye_init
 *           with IEEE double +, -, *, / alone (no libm), so it is the
 *           same on every machine; kernels get the integer table.
 *  Error    the projected error of pixel p (formulas 2 and 3):
 *               e(p) = a(p) - sum over |dx|, |dy| <= r of w(dx, dy) b'(p + (dx, dy)),
 *           a the input and b the output level's value, both in the units
 *           of fixed.h (0..65535), so e is in units of 1/32768 of those:
 *           e = a * HT_EYE_ONE - V*b'. |e| <= 65535 * 32768 < 2^31: int32.
 *  Border   b' is b inside the image; outside it, it is the input a of
 *           the nearest pixel inside (coordinates clamped): the eye sees
 *           the picture continue, reproduced exactly, so a border is
 *           neither darkened nor lightened, and what lies outside never
 *           changes while a search runs (it is a constant of each pixel).
 *  Total    Error(A, B) = sum of |e(p)| over the image's pixels (formula
 *           4), an integer: int64 (exact up to 2^32 pixels).
 *
 * Included by C and by CUDA code (HT_FX_INLINE from fixed.h).
 */
#ifndef HT_EYE_H
#define HT_EYE_H

#include "fixed.h"
#include "../halftone.h"

#include <stdint.h>

#define HT_EYE_BITS 15
#define HT_EYE_ONE (1 << HT_EYE_BITS)
#define HT_EYE_SIDE_MAX (2 * HT_EYE_MAX_RADIUS + 1)

typedef struct {
  int radius;
  int side; /* 2 radius + 1 */
  /* w[(dy + radius) * side + dx + radius]: symmetric, sum HT_EYE_ONE */
  int32_t w[HT_EYE_SIDE_MAX * HT_EYE_SIDE_MAX];
} ht_eye;

HT_FX_INLINE int32_t ht_eye_weight(const ht_eye *eye, int dx, int dy)
{
  return eye->w[(dy + eye->radius) * eye->side + dx + eye->radius];
}

HT_FX_INLINE int64_t ht_eye_clamp(int64_t v, int64_t n) { return v < 0 ? 0 : v >= n ? n - 1 : v; }

/* e(x, y) for the input a and output level values b (fixed.h units,
 * `stride` values a row, w x h pixels). */
HT_FX_INLINE int32_t ht_eye_error_at(const ht_eye *eye, const int32_t *a, const int32_t *b, int64_t stride, int64_t w,
                                     int64_t h, int64_t x, int64_t y)
{
  int32_t e = a[y * stride + x] * HT_EYE_ONE;
  for (int dy = -eye->radius; dy <= eye->radius; dy++)
    for (int dx = -eye->radius; dx <= eye->radius; dx++) {
      const int64_t qx = x + dx, qy = y + dy;
      const bool inside = qx >= 0 && qx < w && qy >= 0 && qy < h;
      const int32_t v = inside ? b[qy * stride + qx] : a[ht_eye_clamp(qy, h) * stride + ht_eye_clamp(qx, w)];
      e -= ht_eye_weight(eye, dx, dy) * v;
    }
  return e;
}

#ifdef __cplusplus
extern "C" {
#endif
/* Builds the table for `p`; false when sigma is outside 0.25..4 or the
 * radius outside 1..HT_EYE_MAX_RADIUS. Host code only (eye.c, in
 * libhalftone). */
bool ht_eye_init(ht_eye *eye, const ht_eye_params *p);
/* exp(-x), x >= 0, the same on every machine (eye.c). Host code only. */
double ht_exp_neg(double x);

/* Error(A, B): the sum of |e| over a w x h plane. The reference
 * definition of what the search methods minimise. */
int64_t ht_eye_total_error(const ht_eye *eye, const int32_t *a, const int32_t *b, int64_t stride, int64_t w,
                           int64_t h);
#ifdef __cplusplus
}
#endif

#endif

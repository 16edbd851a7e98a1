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
 *  Error    the projected error of pixel p is
 *               e(p) = sum over |dx|, |dy| <= r of w(dx, dy) * d(p + (dx, dy)),
 *           d = a - b: the input minus the output level's value, both in
 *           the units of fixed.h (0..65535). So e = V*a - V*b (the eye
 *           sees the input and the halftone through the same filter; the
 *           LES paper's formula 3 compares V*b with a itself), in units of
 *           1/32768 of fixed.h's. |e| <= 65535 * 32768 < 2^31: int32.
 *  Border   d is 0 outside the image: the eye sees the image on a
 *           background that it reproduces exactly, so a border is neither
 *           darkened nor lightened and no pixel outside can change.
 *  Total    Error(A, B) = sum of |e(p)| over the image's pixels (formula
 *           4), an integer: int64 (exact up to 2^32 pixels).
 *
 * Included by C and by CUDA code (HT_FX_INLINE from fixed.h).
 */
#ifndef HT_EYE_H
#define HT_EYE_H

#include "fixed.h"
#include "halftone.h"

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

/* e(x, y) of a plane of differences d (a - b, fixed.h units), `stride`
 * values a row, w x h pixels, 0 outside. */
HT_FX_INLINE int32_t ht_eye_error_at(const ht_eye *eye, const int32_t *d, int64_t stride, int64_t w, int64_t h,
                                     int64_t x, int64_t y)
{
  int32_t e = 0;
  for (int dy = -eye->radius; dy <= eye->radius; dy++) {
    if (y + dy < 0 || y + dy >= h)
      continue;
    for (int dx = -eye->radius; dx <= eye->radius; dx++)
      if (x + dx >= 0 && x + dx < w)
        e += ht_eye_weight(eye, dx, dy) * d[(y + dy) * stride + x + dx];
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

/* Error(A, B): the sum of |e| over a w x h plane of differences d. The
 * reference definition of what the search methods minimise. */
int64_t ht_eye_total_error(const ht_eye *eye, const int32_t *d, int64_t stride, int64_t w, int64_t h);
#ifdef __cplusplus
}
#endif

#endif

/* The sRGB transfer function in integers (docs/arithmetic.md, "Linear
 * light"): what every backend uses to turn a stored value into light and
 * back, bit for bit.
 *
 *  Decode  v (0..65535, stored) -> light (0..65535): u = v + (v >> 15)
 *          stretches 0..65535 onto 0..65536, then the table of
 *          srgb_table.h (4096 steps of IEC 61966-2-1's curve, rounded) is
 *          interpolated: i = u >> 4, f = u & 15,
 *          light = (T[i] (16 - f) + T[i + 1] f + 8) >> 4.
 *          Monotone, 0 -> 0, 65535 -> 65535; within 1 unit of the curve.
 *  Encode  light y -> the stored value of `maxval` (255 or 65535) whose
 *          decoded light is nearest y, the lower one on a tie: a search,
 *          no inverse curve, so that encode is exact against decode. */
#ifndef HT_SRGB_H
#define HT_SRGB_H

#include <stdint.h>

#if defined(__CUDACC__)
#define HT_SRGB_TABLE_QUALIFIER static __device__
#define HT_SRGB_INLINE __device__ static inline
#else
#define HT_SRGB_TABLE_QUALIFIER static
#define HT_SRGB_INLINE static inline
#endif

#include "srgb_table.h"

HT_SRGB_INLINE int32_t ht_srgb_decode(int32_t v)
{
  const uint32_t u = (uint32_t)v + ((uint32_t)v >> 15), i = u >> 4, f = u & 15u;
  return (int32_t)(((uint32_t)ht_srgb_table[i] * (16u - f) + (uint32_t)ht_srgb_table[i + 1] * f + 8u) >> 4);
}

/* The stored value 0..maxval (a sample v stands for v * 65535 / maxval;
 * maxval 255 or 65535) whose light is nearest y (0..65535). */
HT_SRGB_INLINE int32_t ht_srgb_encode(int32_t y, int32_t maxval)
{
  const int32_t unit = 65535 / maxval; /* 257 or 1 */
  int32_t lo = 0, hi = maxval;         /* the first s with decode(s) >= y */
  while (lo < hi) {
    const int32_t mid = (lo + hi) / 2;
    if (ht_srgb_decode(mid * unit) >= y)
      hi = mid;
    else
      lo = mid + 1;
  }
  if (lo > 0 && y - ht_srgb_decode((lo - 1) * unit) <= ht_srgb_decode(lo * unit) - y)
    return lo - 1;
  return lo;
}

#endif

/* The filtered objective of the search (DBS as the literature means it:
 * Analoui and Allebach, "Model-based halftoning using direct binary
 * search", SPIE 1666, 1992; the efficient form of Lieberman and
 * Allebach, "Efficient model based halftoning using direct binary
 * search", ICIP 1997), in integers that every backend computes alike. docs/arithmetic.md, "The filtered objective", says the same.
 *
 *  Error      e(p) = b(p) - a(p), the halftone's level value minus the
 *             input, fixed.h units; 0 outside the image (eye.h's border
 *             rule: the eye sees the input continue there).
 *  Objective  E = sum over every pixel p of the plane of (V*e)(p)^2,
 *             V the eye's Q15 table (eye.h): the error as the eye sees
 *             it, squared, wherever the blur reaches (also up to r beyond
 *             the image's edges).
 *  c_pp       the autocorrelation of V, c_pp(d) = sum_k w(k) w(k + d),
 *             over |dx|, |dy| <= 2r: exact integers (Q30), each at most
 *             (sum w)^2 = 2^30, so int32. Then E = sum_m sum_n e(m)
 *             c_pp(n - m) e(n), exactly.
 *  c_ep       the cross-correlation of e and the filter, c_ep(n) =
 *             sum_m c_pp(n - m) e(m), kept at every image pixel: int64,
 *             |c_ep| <= 65535 * 2^30 < 2^46.
 *  A change   of pixel m by a0 = s 65535 (s = +1 black to white, -1 white
 *             to black) changes E by a0^2 c_pp(0) + 2 a0 c_ep(m); a swap
 *             of m (a0) with n (a1 = -a0) by (a0^2 + a1^2) c_pp(0) +
 *             2 a0 a1 c_pp(n - m) + 2 a0 c_ep(m) + 2 a1 c_ep(n). Every
 *             term holds the factor 65535, so the search compares
 *             D = dE / 65535 (exact, |D| < 2^49): O(1) a candidate.
 *             An accepted change adds a0 c_pp(n - m) to c_ep(n) over the
 *             (4r + 1)^2 pixels n around m: O(filter area).
 *
 * Included by C and by CUDA code (HT_FX_INLINE from fixed.h). */
#ifndef HT_FILTERED_H
#define HT_FILTERED_H

#include "eye.h"

#define HT_CPP_SIDE_MAX (4 * HT_EYE_MAX_RADIUS + 1)

typedef struct {
  int radius; /* 2r */
  int side;   /* 4r + 1 */
  /* c[(dy + radius) * side + dx + radius] */
  int32_t c[HT_CPP_SIDE_MAX * HT_CPP_SIDE_MAX];
} ht_cpp;

HT_FX_INLINE void ht_cpp_init(ht_cpp *cpp, const ht_eye *eye)
{
  const int r = eye->radius;
  cpp->radius = 2 * r;
  cpp->side = 4 * r + 1;
  for (int dy = -2 * r; dy <= 2 * r; dy++)
    for (int dx = -2 * r; dx <= 2 * r; dx++) {
      int64_t s = 0;
      for (int ky = -r; ky <= r; ky++)
        for (int kx = -r; kx <= r; kx++) {
          const int qx = kx + dx, qy = ky + dy;
          if (qx >= -r && qx <= r && qy >= -r && qy <= r)
            s += (int64_t)ht_eye_weight(eye, kx, ky) * ht_eye_weight(eye, qx, qy);
        }
      cpp->c[(dy + 2 * r) * cpp->side + dx + 2 * r] = (int32_t)s;
    }
}

HT_FX_INLINE int32_t ht_cpp_at(const ht_cpp *cpp, int dx, int dy)
{
  return cpp->c[(dy + cpp->radius) * cpp->side + dx + cpp->radius];
}

/* D of toggling a pixel whose c_ep is `cep`, s = +1 to white, -1 to black. */
HT_FX_INLINE int64_t ht_filtered_toggle(const ht_cpp *cpp, int64_t cep, int s)
{
  return (int64_t)HT_FX_ONE * ht_cpp_at(cpp, 0, 0) + 2 * s * cep;
}

/* D of swapping pixel m (s as above, c_ep cm) with its neighbour n at
 * (dx, dy) from m, whose value differs (c_ep cn). */
HT_FX_INLINE int64_t ht_filtered_swap(const ht_cpp *cpp, int64_t cm, int64_t cn, int s, int dx, int dy)
{
  return 2 * (int64_t)HT_FX_ONE * (ht_cpp_at(cpp, 0, 0) - ht_cpp_at(cpp, dx, dy)) + 2 * s * (cm - cn);
}

#endif

/* ht_compute_eye_error (halftone.h): the error that the search methods
 * minimise, Kouge et al. formulas 2-4 with core/shared/eye.h's integer eye and
 * border rule, as a mean per pixel in 0..255 units. The paper's Table II
 * reports this figure ("average error").
 *
 * Values are those of the search: an 8-bit sample v is v * 257, so for
 * an 8-bit input and a binary result this is exactly the total that LES,
 * PES and DBS computed, divided by the pixels and by 257 * HT_EYE_ONE. */
#include "search.h"

ht_status ht_compute_eye_error(const uint8_t *gray, size_t gray_stride, const uint8_t *result, size_t result_stride,
                               int64_t width, int64_t height, const ht_eye_params *params, double *mean_error)
{
  if (!gray || !result || !mean_error)
    return HT_ERR_INVALID_ARGUMENT;
  if (width <= 0 || height <= 0 || width > HT_MAX_SIDE || height > HT_MAX_SIDE || width * height > HT_MAX_PIXELS)
    return HT_ERR_BAD_SIZE;
  if (gray_stride < (size_t)width || result_stride < (size_t)width)
    return HT_ERR_INVALID_ARGUMENT;
  const ht_eye_params standard = { 1.0, 3 };
  ht_eye eye;
  if (!ht_eye_init(&eye, params ? params : &standard))
    return HT_ERR_INVALID_ARGUMENT;
  const int r = eye.radius;
  int64_t total = 0;
  for (int64_t y = 0; y < height; y++) {
    const uint8_t *g = gray + (size_t)y * gray_stride;
    int64_t row = 0;
    for (int64_t x = 0; x < width; x++) {
      /* e in units of 1/257 of the search's: every term is a multiple
       * of 257, so the sum is exact in int32 all the same */
      int32_t e = (int32_t)g[x] * HT_EYE_ONE;
      for (int dy = -r; dy <= r; dy++) {
        const int64_t qy = y + dy;
        const bool row_in = qy >= 0 && qy < height;
        const uint8_t *rr = row_in ? result + (size_t)qy * result_stride : NULL;
        const uint8_t *gg = gray + (size_t)ht_eye_clamp(qy, height) * gray_stride;
        for (int dx = -r; dx <= r; dx++) {
          const int64_t qx = x + dx;
          const int32_t v = row_in && qx >= 0 && qx < width ? rr[qx] : gg[ht_eye_clamp(qx, width)];
          e -= ht_eye_weight(&eye, dx, dy) * v;
        }
      }
      row += e < 0 ? -(int64_t)e : e;
    }
    total += row;
  }
  *mean_error = (double)total / ((double)width * (double)height * (double)HT_EYE_ONE);
  return HT_OK;
}

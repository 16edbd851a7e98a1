/* Quality metrics of a halftone: mean tone error and the HVS error.
 *
 * HVS error: Kasagi et al., "local exhaustive search" paper, Sec. II-A,
 * formulas (1)-(4): a 7x7 Gaussian (w = 3, sigma = 1, weights normalised
 * to sum 1) models the eye. The paper compares the original a with the
 * filtered binary image; we compare the filtered original with the
 * filtered result, mean |(G*a) - (G*r)|, so that a continuous-tone input
 * is judged by what the eye sees of it too (this is the definition in
 * core/halftone.h). Both are reported in 0..255 units, averaged over the
 * pixels so that images of different sizes compare.
 *
 * By linearity G*a - G*r = G*(a - r): one blur of the difference image
 * instead of two. The Gaussian is separable (the normalised 2-D kernel is
 * the outer product of the normalised 1-D one), so each row is filtered
 * horizontally once and kept in a ring of 7 rows for the vertical pass:
 * memory O(width), not O(pixels).
 *
 * Borders: coordinates outside the image are clamped to the nearest edge
 * pixel (edge replication). A flat image therefore stays flat under the
 * blur, so a border is neither darkened nor brightened, and every pixel
 * gets full kernel weight.
 */
#include "halftone.h"

#include <math.h>
#include <stdlib.h>

#define HVS_RADIUS 3 /* w in the paper: (2w + 1) x (2w + 1) = 7 x 7 */
#define HVS_TAPS (2 * HVS_RADIUS + 1)

static inline int64_t clamp_i64(int64_t v, int64_t lo, int64_t hi)
{
  return v < lo ? lo : v > hi ? hi : v;
}

/* Horizontal pass of row y of (gray - result) into dst. */
static void hfilter_row(const uint8_t *g, const uint8_t *r, int64_t width, const double *k,
                        double *diff, double *dst)
{
  for (int64_t x = 0; x < width; x++)
    diff[x] = (double)g[x] - (double)r[x];
  /* Interior without clamping (the hot loop), edges with it. */
  int64_t lo = HVS_RADIUS < width ? HVS_RADIUS : width;
  int64_t hi = width - HVS_RADIUS > lo ? width - HVS_RADIUS : lo;
  for (int64_t x = lo; x < hi; x++) {
    double s = 0.0;
    for (int t = 0; t < HVS_TAPS; t++)
      s += k[t] * diff[x + t - HVS_RADIUS];
    dst[x] = s;
  }
  for (int64_t x = 0; x < width; x++) {
    if (x == lo)
      x = hi; /* skip the interior done above */
    if (x >= width)
      break;
    double s = 0.0;
    for (int t = 0; t < HVS_TAPS; t++)
      s += k[t] * diff[clamp_i64(x + t - HVS_RADIUS, 0, width - 1)];
    dst[x] = s;
  }
}

ht_status ht_compute_metrics(const uint8_t *gray, size_t gray_stride, const uint8_t *result,
                             size_t result_stride, int64_t width, int64_t height, ht_metrics *m)
{
  if (!gray || !result || !m)
    return HT_ERR_INVALID_ARGUMENT;
  if (width <= 0 || height <= 0 || width > HT_MAX_SIDE || height > HT_MAX_SIDE ||
      width * height > HT_MAX_PIXELS)
    return HT_ERR_BAD_SIZE;
  if (gray_stride < (size_t)width || result_stride < (size_t)width)
    return HT_ERR_INVALID_ARGUMENT;

  double k[HVS_TAPS], ksum = 0.0;
  for (int t = 0; t < HVS_TAPS; t++) {
    double d = (double)(t - HVS_RADIUS);
    k[t] = exp(-d * d / 2.0); /* sigma = 1 */
    ksum += k[t];
  }
  for (int t = 0; t < HVS_TAPS; t++)
    k[t] /= ksum;

  /* HVS_TAPS ring rows + one row of raw differences. */
  double *buf = calloc((size_t)(HVS_TAPS + 1) * (size_t)width, sizeof *buf);
  if (!buf)
    return HT_ERR_NO_MEMORY;
  double *diff = buf + (size_t)HVS_TAPS * (size_t)width;

  int64_t sum_in = 0, sum_out = 0;
  double hvs = 0.0;
  int64_t next = 0; /* next row to filter horizontally */
  for (int64_t y = 0; y < height; y++) {
    int64_t need = y + HVS_RADIUS < height - 1 ? y + HVS_RADIUS : height - 1;
    for (; next <= need; next++) {
      const uint8_t *g = gray + (size_t)next * gray_stride;
      const uint8_t *r = result + (size_t)next * result_stride;
      for (int64_t x = 0; x < width; x++) {
        sum_in += g[x];
        sum_out += r[x];
      }
      hfilter_row(g, r, width, k, diff, buf + (size_t)(next % HVS_TAPS) * (size_t)width);
    }
    const double *rows[HVS_TAPS];
    for (int t = 0; t < HVS_TAPS; t++) {
      int64_t yy = clamp_i64(y + t - HVS_RADIUS, 0, height - 1);
      rows[t] = buf + (size_t)(yy % HVS_TAPS) * (size_t)width;
    }
    double row_sum = 0.0;
    for (int64_t x = 0; x < width; x++) {
      double s = 0.0;
      for (int t = 0; t < HVS_TAPS; t++)
        s += k[t] * rows[t][x];
      row_sum += fabs(s);
    }
    hvs += row_sum;
  }
  free(buf);

  double n = (double)width * (double)height;
  m->mean_tone_error = fabs((double)sum_out - (double)sum_in) / n;
  m->hvs_error = hvs / n;
  return HT_OK;
}

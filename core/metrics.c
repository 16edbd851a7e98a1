/* Quality metrics of a halftone: mean tone error, the HVS error, and the
 * PSNR and SSIM of both images blurred (below, "the field's measure").
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
  static const double sigmas[HT_METRICS_SIGMAS] = { 1.5, 2.0 };
  for (int i = 0; i < HT_METRICS_SIGMAS; i++) {
    const ht_status s = ht_compute_blurred_quality(gray, gray_stride, result, result_stride, width, height,
                                                   sigmas[i], &m->blurred[i]);
    if (s != HT_OK)
      return s;
  }
  return HT_OK;
}

/* ------------------------------------------------ the field's measure */

/* PSNR and SSIM of the original and the halftone both blurred by a
 * Gaussian of the viewer's sigma: the measure the DBS literature and its
 * successors report (e.g. Lieberman and Allebach's efficient DBS is
 * judged by the filtered error; SSIM is Wang, Bovik, Sheikh, Simoncelli,
 * "Image quality assessment: from error visibility to structural
 * similarity", IEEE TIP 13(4), 2004, Sec. III-C).
 *
 *  Blur  a Gaussian of `sigma` pixels over radius ceil(3 sigma), the 1-D
 *        weights normalised to sum 1, applied to rows and then columns,
 *        coordinates outside the image clamped (as the HVS error above).
 *  PSNR  10 log10(255^2 / MSE), MSE the mean over every pixel of the
 *        squared difference of the two blurred images.
 *  SSIM  Wang et al.'s index with their constants, C1 = (0.01 * 255)^2,
 *        C2 = (0.03 * 255)^2, local statistics under an 11 x 11 Gaussian
 *        window of sigma 1.5 normalised to sum 1 (their Sec. III-C), the
 *        map averaged over the positions whose window lies inside the
 *        image (their reference code's 'valid' filtering): no border
 *        rule enters it.
 *
 * Everything streams by rows (memory O(width)): a ring of horizontally
 * blurred rows gives each blurred row, and a ring of the window's
 * horizontal sums of the five moments gives each row of the SSIM map. */

#define SSIM_RADIUS 5 /* 11 x 11 */
#define SSIM_TAPS (2 * SSIM_RADIUS + 1)
#define SSIM_MOMENTS 5 /* mu_a, mu_b, a^2, b^2, ab */

#define BLUR_RADIUS_MAX 12 /* ceil(3 HT_EYE_SIGMA_MAX) */

static int blur_radius(double sigma) { return (int)ceil(3.0 * sigma); }

static void gauss_1d(double *k, int radius, double sigma)
{
  double sum = 0.0;
  for (int t = -radius; t <= radius; t++) {
    k[t + radius] = exp(-(double)(t * t) / (2.0 * sigma * sigma));
    sum += k[t + radius];
  }
  for (int t = 0; t <= 2 * radius; t++)
    k[t] /= sum;
}

static void hblur(const uint8_t *src, int64_t width, const double *k, int radius, double *dst)
{
  for (int64_t x = 0; x < width; x++) {
    double s = 0.0;
    for (int t = -radius; t <= radius; t++)
      s += k[t + radius] * (double)src[clamp_i64(x + t, 0, width - 1)];
    dst[x] = s;
  }
}

ht_status ht_compute_blurred_quality(const uint8_t *gray, size_t gray_stride, const uint8_t *result,
                                     size_t result_stride, int64_t width, int64_t height, double sigma,
                                     ht_blurred_quality *q)
{
  if (!gray || !result || !q || !(sigma >= HT_EYE_SIGMA_MIN && sigma <= HT_EYE_SIGMA_MAX))
    return HT_ERR_INVALID_ARGUMENT;
  if (width <= 0 || height <= 0 || width > HT_MAX_SIDE || height > HT_MAX_SIDE ||
      width * height > HT_MAX_PIXELS)
    return HT_ERR_BAD_SIZE;
  if (gray_stride < (size_t)width || result_stride < (size_t)width)
    return HT_ERR_INVALID_ARGUMENT;

  const int R = blur_radius(sigma), taps = 2 * R + 1;
  double k[2 * BLUR_RADIUS_MAX + 1], win[SSIM_TAPS];
  if (R > BLUR_RADIUS_MAX)
    return HT_ERR_INVALID_ARGUMENT;
  gauss_1d(k, R, sigma);
  gauss_1d(win, SSIM_RADIUS, 1.5);

  const size_t w = (size_t)width;
  /* two rings of horizontally blurred rows, two blurred rows, the ring of
   * the window's horizontal moment sums */
  const size_t n = 2 * (size_t)taps * w + 2 * w + (size_t)SSIM_MOMENTS * SSIM_TAPS * w;
  double *buf = calloc(n, sizeof *buf);
  if (!buf)
    return HT_ERR_NO_MEMORY;
  double *ha = buf, *hb = ha + (size_t)taps * w, *ba = hb + (size_t)taps * w, *bb = ba + w;
  double *mom = bb + w; /* [(row % 11) * 5 + moment] * w */

  const bool ssim_ok = width >= SSIM_TAPS && height >= SSIM_TAPS;
  double sq = 0.0, ssim_sum = 0.0;
  int64_t next = 0;
  for (int64_t y = 0; y < height; y++) {
    const int64_t need = y + R < height - 1 ? y + R : height - 1;
    for (; next <= need; next++) {
      hblur(gray + (size_t)next * gray_stride, width, k, R, ha + (size_t)(next % taps) * w);
      hblur(result + (size_t)next * result_stride, width, k, R, hb + (size_t)(next % taps) * w);
    }
    for (int64_t x = 0; x < width; x++) {
      double sa = 0.0, sb = 0.0;
      for (int t = -R; t <= R; t++) {
        const size_t row = (size_t)(clamp_i64(y + t, 0, height - 1) % taps) * w;
        sa += k[t + R] * ha[row + (size_t)x];
        sb += k[t + R] * hb[row + (size_t)x];
      }
      ba[x] = sa;
      bb[x] = sb;
      sq += (sa - sb) * (sa - sb);
    }
    if (!ssim_ok)
      continue;
    /* the window's horizontal sums of row y, at the columns where it fits */
    double *m = mom + (size_t)(y % SSIM_TAPS) * SSIM_MOMENTS * w;
    for (int64_t x = SSIM_RADIUS; x < width - SSIM_RADIUS; x++) {
      double s[SSIM_MOMENTS] = { 0 };
      for (int t = -SSIM_RADIUS; t <= SSIM_RADIUS; t++) {
        const double u = ba[x + t], v = bb[x + t], g = win[t + SSIM_RADIUS];
        s[0] += g * u;
        s[1] += g * v;
        s[2] += g * u * u;
        s[3] += g * v * v;
        s[4] += g * u * v;
      }
      for (int c = 0; c < SSIM_MOMENTS; c++)
        m[(size_t)c * w + (size_t)x] = s[c];
    }
    if (y < SSIM_TAPS - 1)
      continue;
    /* the map's row y - 5: rows y - 10 .. y are in the ring */
    const double C1 = (0.01 * 255) * (0.01 * 255), C2 = (0.03 * 255) * (0.03 * 255);
    for (int64_t x = SSIM_RADIUS; x < width - SSIM_RADIUS; x++) {
      double s[SSIM_MOMENTS] = { 0 };
      for (int t = 0; t < SSIM_TAPS; t++) {
        const double *mt = mom + (size_t)((y - SSIM_TAPS + 1 + t) % SSIM_TAPS) * SSIM_MOMENTS * w;
        for (int c = 0; c < SSIM_MOMENTS; c++)
          s[c] += win[t] * mt[(size_t)c * w + (size_t)x];
      }
      const double va = s[2] - s[0] * s[0], vb = s[3] - s[1] * s[1], cov = s[4] - s[0] * s[1];
      ssim_sum += ((2 * s[0] * s[1] + C1) * (2 * cov + C2)) /
                  ((s[0] * s[0] + s[1] * s[1] + C1) * (va + vb + C2));
    }
  }
  free(buf);

  q->sigma = sigma;
  q->mse = sq / ((double)width * (double)height);
  q->psnr = q->mse > 0 ? 10.0 * log10(255.0 * 255.0 / q->mse) : INFINITY;
  q->ssim = ssim_ok ? ssim_sum / ((double)(width - 2 * SSIM_RADIUS) * (double)(height - 2 * SSIM_RADIUS)) : NAN;
  return HT_OK;
}

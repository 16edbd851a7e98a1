/* The field's measure (ht_compute_blurred_quality, ht_metrics.blurred)
 * against this file's own computation, written from the definitions
 * without the library's shortcuts: the blur as one 2-D convolution (the
 * (2R+1)^2 Gaussian normalised as a whole, R = ceil(3 sigma), coordinates
 * clamped) over whole-image arrays, and SSIM (Wang, Bovik, Sheikh,
 * Simoncelli 2004, Sec. III-C: C1 = (0.01 * 255)^2, C2 = (0.03 * 255)^2,
 * an 11 x 11 Gaussian window of sigma 1.5 normalised as a whole) window
 * by window over the positions where the window fits. The library's rows
 * and rings add in another order: the figures agree to rounding. */
#include "ht-test.h"

#include <math.h>

static double *blur2d(const uint8_t *img, int64_t w, int64_t h, double sigma)
{
  const int R = (int)ceil(3 * sigma), S = 2 * R + 1;
  double *k = xmalloc(sizeof(double) * (size_t)(S * S)), sum = 0;
  for (int y = -R; y <= R; y++)
    for (int x = -R; x <= R; x++)
      sum += k[(y + R) * S + x + R] = exp(-(x * x + y * y) / (2 * sigma * sigma));
  double *out = xmalloc(sizeof(double) * (size_t)(w * h));
  for (int64_t y = 0; y < h; y++)
    for (int64_t x = 0; x < w; x++) {
      double s = 0;
      for (int dy = -R; dy <= R; dy++)
        for (int dx = -R; dx <= R; dx++) {
          int64_t qy = y + dy < 0 ? 0 : y + dy >= h ? h - 1 : y + dy;
          int64_t qx = x + dx < 0 ? 0 : x + dx >= w ? w - 1 : x + dx;
          s += k[(dy + R) * S + dx + R] / sum * img[qy * w + qx];
        }
      out[y * w + x] = s;
    }
  free(k);
  return out;
}

static void reference(const uint8_t *a, const uint8_t *b, int64_t w, int64_t h, double sigma, double *psnr,
                      double *ssim)
{
  double *A = blur2d(a, w, h, sigma), *B = blur2d(b, w, h, sigma);
  double mse = 0;
  for (int64_t i = 0; i < w * h; i++)
    mse += (A[i] - B[i]) * (A[i] - B[i]);
  mse /= (double)(w * h);
  *psnr = mse > 0 ? 10 * log10(255.0 * 255.0 / mse) : INFINITY;
  double g[11][11], gs = 0;
  for (int y = 0; y < 11; y++)
    for (int x = 0; x < 11; x++)
      gs += g[y][x] = exp(-((x - 5) * (x - 5) + (y - 5) * (y - 5)) / (2 * 1.5 * 1.5));
  const double C1 = 6.5025, C2 = 58.5225;
  double total = 0;
  int64_t n = 0;
  for (int64_t y = 5; y + 5 < h; y++)
    for (int64_t x = 5; x + 5 < w; x++) {
      double ma = 0, mb = 0, vaa = 0, vbb = 0, vab = 0;
      for (int dy = -5; dy <= 5; dy++)
        for (int dx = -5; dx <= 5; dx++) {
          const double wt = g[dy + 5][dx + 5] / gs, u = A[(y + dy) * w + x + dx], v = B[(y + dy) * w + x + dx];
          ma += wt * u;
          mb += wt * v;
          vaa += wt * u * u;
          vbb += wt * v * v;
          vab += wt * u * v;
        }
      vaa -= ma * ma;
      vbb -= mb * mb;
      vab -= ma * mb;
      total += (2 * ma * mb + C1) * (2 * vab + C2) / ((ma * ma + mb * mb + C1) * (vaa + vbb + C2));
      n++;
    }
  *ssim = n ? total / (double)n : NAN;
  free(A);
  free(B);
}

static bool near(double got, double want, double tol)
{
  if (isnan(want))
    return isnan(got);
  if (isinf(want))
    return got == want;
  return fabs(got - want) <= tol * (1 + fabs(want));
}

int main(void)
{
  const int64_t shapes[][2] = { { 1, 1 }, { 10, 40 }, { 11, 11 }, { 37, 23 }, { 64, 64 } };
  const double sigmas[] = { 0.25, 1.0, 1.5, 2.0, 2.7, 4.0 };
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    const int64_t w = shapes[s][0], h = shapes[s][1];
    uint8_t *a = xmalloc((size_t)(w * h)), *b = xmalloc((size_t)(w * h));
    fill_random(a, (size_t)w, w, h, 1, 10 + s);
    /* a halftone-like result: thresholded noise around the input */
    fill_random(b, (size_t)w, w, h, 1, 90 + s);
    for (int64_t i = 0; i < w * h; i++)
      b[i] = (uint8_t)(a[i] > b[i] ? 255 : 0);
    for (size_t k = 0; k < sizeof sigmas / sizeof sigmas[0]; k++) {
      double psnr, ssim;
      reference(a, b, w, h, sigmas[k], &psnr, &ssim);
      ht_blurred_quality q;
      CHECK(ht_compute_blurred_quality(a, (size_t)w, b, (size_t)w, w, h, sigmas[k], &q) == HT_OK, "status");
      CHECK(near(q.psnr, psnr, 1e-9), "%lldx%lld sigma %g: PSNR %.12g, the reference %.12g", (long long)w,
            (long long)h, sigmas[k], q.psnr, psnr);
      CHECK(near(q.ssim, ssim, 1e-9), "%lldx%lld sigma %g: SSIM %.12g, the reference %.12g", (long long)w,
            (long long)h, sigmas[k], q.ssim, ssim);
      CHECK(q.sigma == sigmas[k], "sigma");
      /* the same image twice: no difference, SSIM 1 */
      CHECK(ht_compute_blurred_quality(a, (size_t)w, a, (size_t)w, w, h, sigmas[k], &q) == HT_OK, "status");
      CHECK(isinf(q.psnr) && q.psnr > 0 && q.mse == 0, "PSNR of an image with itself: %g", q.psnr);
      CHECK(w < 11 || h < 11 ? isnan(q.ssim) : fabs(q.ssim - 1) < 1e-12, "SSIM of an image with itself: %g",
            q.ssim);
    }
    /* ht_compute_metrics carries sigma 1.5 and 2 */
    ht_metrics m;
    CHECK(ht_compute_metrics(a, (size_t)w, b, (size_t)w, w, h, &m) == HT_OK, "metrics");
    for (int i = 0; i < HT_METRICS_SIGMAS; i++) {
      double psnr, ssim;
      reference(a, b, w, h, i ? 2.0 : 1.5, &psnr, &ssim);
      CHECK(m.blurred[i].sigma == (i ? 2.0 : 1.5), "ht_metrics sigma %g", m.blurred[i].sigma);
      CHECK(near(m.blurred[i].psnr, psnr, 1e-9) && near(m.blurred[i].ssim, ssim, 1e-9),
            "ht_metrics at sigma %g: %g %g, the reference %g %g", m.blurred[i].sigma, m.blurred[i].psnr,
            m.blurred[i].ssim, psnr, ssim);
    }
    free(a);
    free(b);
  }
  /* a fixed case worked by hand: a flat 20 x 20 image of 100 against one
   * of 110 stays flat under any blur: MSE 100, PSNR 10 log10(650.25),
   * SSIM the luminance term (2 * 100 * 110 + C1) / (100^2 + 110^2 + C1) */
  uint8_t f1[400], f2[400];
  memset(f1, 100, sizeof f1);
  memset(f2, 110, sizeof f2);
  ht_blurred_quality q;
  CHECK(ht_compute_blurred_quality(f1, 20, f2, 20, 20, 20, 1.5, &q) == HT_OK, "flat");
  CHECK(near(q.psnr, 10 * log10(650.25), 1e-9), "flat PSNR %.15g", q.psnr);
  CHECK(near(q.ssim, (22000 + 6.5025) / (22100 + 6.5025), 1e-9), "flat SSIM %.15g", q.ssim);
  /* refusals */
  CHECK(ht_compute_blurred_quality(f1, 20, f2, 20, 20, 20, 0.1, &q) == HT_ERR_INVALID_ARGUMENT, "sigma 0.1");
  CHECK(ht_compute_blurred_quality(f1, 20, f2, 20, 20, 20, 4.5, &q) == HT_ERR_INVALID_ARGUMENT, "sigma 4.5");
  CHECK(ht_compute_blurred_quality(f1, 19, f2, 20, 20, 20, 1.5, &q) == HT_ERR_INVALID_ARGUMENT, "stride");
  CHECK(ht_compute_blurred_quality(f1, 20, f2, 20, 0, 20, 1.5, &q) == HT_ERR_BAD_SIZE, "size");
  return test_finish("metrics");
}

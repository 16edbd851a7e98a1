/* ht-metrics: quality of any halftone, whoever made it.
 *
 *   ht-metrics ORIGINAL RESULT
 *
 * Prints the mean tone error and the HVS error (ht_compute_metrics: mean
 * |G*a - G*r|, 7x7 Gaussian, sigma 1, 0..255 units) of RESULT against
 * ORIGINAL, and the PSNR and SSIM of both blurred at sigma 1.5 and 2
 * (ht_metrics.blurred), both reduced to one 8-bit gray plane (colour: Rec. 709 luma of
 * the stored values). The benchmark uses it to judge netpbm, ImageMagick,
 * GEGL and Pillow output with the same code as ours.
 */
#include "halftone.h"
#include "imageio.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
  if (argc != 3) {
    fprintf(stderr, "ht-metrics: usage: ht-metrics ORIGINAL RESULT\n");
    return 2;
  }
  char err[512];
  hti_image a, r;
  if (!hti_read(argv[1], &a, err, sizeof err)) {
    fprintf(stderr, "ht-metrics: %s: %s\n", argv[1], err);
    return 1;
  }
  if (!hti_read(argv[2], &r, err, sizeof err)) {
    fprintf(stderr, "ht-metrics: %s: %s\n", argv[2], err);
    hti_release(&a);
    return 1;
  }
  int rc = 1;
  uint8_t *ga = NULL, *gr = NULL;
  if (a.width != r.width || a.height != r.height) {
    fprintf(stderr, "ht-metrics: %s is %lldx%lld but %s is %lldx%lld\n", argv[1], (long long)a.width,
            (long long)a.height, argv[2], (long long)r.width, (long long)r.height);
    goto done;
  }
  /* 8-bit gray (and PBM, decoded to 8-bit) is used in place. */
  bool a8 = a.depth == 8 && a.channels == 1, r8 = r.depth == 8 && r.channels == 1;
  ga = a8 ? NULL : hti_gray8(&a, -1);
  gr = r8 ? NULL : hti_gray8(&r, -1);
  const uint8_t *pa = a8 ? a.pixels : ga, *pr = r8 ? r.pixels : gr;
  size_t sa = a8 ? a.stride : (size_t)a.width, sr = r8 ? r.stride : (size_t)r.width;
  ht_metrics m;
  ht_status s = pa && pr ? ht_compute_metrics(pa, sa, pr, sr, a.width, a.height, &m) : HT_ERR_NO_MEMORY;
  if (s != HT_OK) {
    fprintf(stderr, "ht-metrics: %s\n", ht_status_string(s));
    goto done;
  }
  printf("mean tone error: %.4f\nHVS error: %.4f\n", m.mean_tone_error, m.hvs_error);
  for (int i = 0; i < HT_METRICS_SIGMAS; i++) /* as halftone --metrics prints them */
    printf("blurred PSNR, SSIM (sigma %g): %.4f dB, %.4f\n", m.blurred[i].sigma, m.blurred[i].psnr, m.blurred[i].ssim);
  rc = 0;
done:
  free(ga);
  free(gr);
  hti_release(&a);
  hti_release(&r);
  return rc;
}

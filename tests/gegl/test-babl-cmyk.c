/* The cmyk mode's separation (docs/color.md "CMYK") against babl's CMYK
 * conversion, which GEGL would use for a "CMYK float" buffer. Exit 77
 * where babl has no CMYK formats.
 *
 * They are different formulas, and this test pins down exactly how:
 *  - babl's "CMYK float" from "RGB float" (linear, so that no transfer
 *    curve enters) is c = 1 - r, k = min(c, m, y), C = (c - k) / (1 - k):
 *    the inverse of R = (1 - C)(1 - K), inks whose dots overlap at
 *    random;
 *  - ours at black 1 is k = min(c, m, y), C = c - k: the inverse of
 *    R = 1 - C - K, inks whose dots do not overlap, which is what
 *    plane-dependent error diffusion aims for.
 * So K agrees, and our C equals babl's C times (1 - K). The test checks
 * both, and that from R'G'B' babl first linearises (the op halftones the
 * stored values unless told linear). Our separation is read back from
 * ht_run on one pixel at a time (nothing to diffuse to) with 256 levels:
 * within half a level, 1/510.
 */
#include <babl/babl.h>
#include "halftone.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int failures;

#define CHECK(cond, ...)                                                      \
  do {                                                                        \
    if (!(cond)) {                                                            \
      fprintf(stderr, "test-babl-cmyk:%d: %s: ", __LINE__, #cond);            \
      fprintf(stderr, __VA_ARGS__);                                           \
      fputc('\n', stderr);                                                    \
      failures++;                                                             \
    }                                                                         \
  } while (0)

/* Our inks for one RGB pixel, 16-bit in, 256 levels out, as 0..1. */
static void ours(ht_context *ctx, const uint16_t rgb[3], double black, double ink[4])
{
  ht_params par;
  ht_params_init(&par);
  par.color = HT_COLOR_CMYK;
  par.levels = 256;
  par.black = black;
  /* the inks as separated: no error passed between the planes either */
  for (int c = 0; c < HT_MAX_PLANES; c++)
    par.plane_weights.forward[c] = par.plane_weights.backward[c] = 0;
  uint16_t in[3] = { rgb[0], rgb[1], rgb[2] }, out[4];
  ht_image gi = { 1, 1, 6, 3, HT_FORMAT_U16, in }, go = { 1, 1, 8, 4, HT_FORMAT_U16, out };
  ht_status s = ht_run(ctx, &gi, &go, &par);
  CHECK(s == HT_OK, "%s", ht_context_message(ctx));
  for (int c = 0; c < 4; c++)
    ink[c] = s == HT_OK ? out[c] / 65535.0 : -1;
}

int main(void)
{
  babl_init();
  if (!babl_format_exists("CMYK float")) {
    printf("test-babl-cmyk: this babl has no CMYK formats: skipped\n");
    babl_exit();
    return 77;
  }
  const Babl *lin = babl_fish(babl_format("RGB float"), babl_format("CMYK float"));
  const Babl *nonlin = babl_fish(babl_format("R'G'B' float"), babl_format("CMYK float"));
  const Babl *back = babl_fish(babl_format("CMYK float"), babl_format("RGB float"));
  ht_context *ctx = ht_context_new();
  if (!ctx)
    return 99;
  const double tol = 1.0 / 510 + 1e-6;
  uint64_t seed = 88172645463325252ULL;
  int differ = 0;
  for (int i = 0; i < 600; i++) {
    uint16_t rgb[3];
    float f[3], lin_cmyk[4], nl_cmyk[4], rt[3];
    for (int c = 0; c < 3; c++) {
      seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
      /* the corners and edges of the cube too: 0, 1, and random */
      rgb[c] = (uint16_t)(i < 8 ? (uint64_t)((i >> c & 1) * 65535) : seed >> 48);
      f[c] = (float)(rgb[c] / 65535.0);
    }
    babl_process(lin, f, lin_cmyk, 1);
    babl_process(nonlin, f, nl_cmyk, 1);
    babl_process(back, lin_cmyk, rt, 1);
    double ink[4];
    ours(ctx, rgb, 1.0, ink);
    const double K = lin_cmyk[3];
    CHECK(fabs(ink[3] - K) <= tol, "rgb %u %u %u: our K %.5f, babl's %.5f", rgb[0], rgb[1], rgb[2], ink[3], K);
    for (int c = 0; c < 3; c++) {
      /* ours = babl's times (1 - K), and both give back the input under
       * their own model: ours 1 - C - K, babl's (1 - C)(1 - K) */
      CHECK(fabs(ink[c] - lin_cmyk[c] * (1 - K)) <= tol, "rgb %u %u %u plane %d: our %.5f, babl's %.5f (1 - %.5f)",
            rgb[0], rgb[1], rgb[2], c, ink[c], lin_cmyk[c], K);
      CHECK(fabs(1 - ink[c] - ink[3] - f[c]) <= 2 * tol, "ours does not invert: %.5f", 1 - ink[c] - ink[3]);
      CHECK(fabs(rt[c] - f[c]) < 1e-4, "babl does not invert: %.5f for %.5f", rt[c], f[c]);
      differ += fabs(ink[c] - lin_cmyk[c]) > 0.05;
    }
    /* from R'G'B' babl linearises first: its K is 1 minus the largest
     * linear value */
    double mx = fmax(f[0], fmax(f[1], f[2]));
    double mx_lin = mx <= 0.04045 ? mx / 12.92 : pow((mx + 0.055) / 1.055, 2.4);
    CHECK(fabs(nl_cmyk[3] - (1 - mx_lin)) < 1e-4, "R'G'B' %.4f %.4f %.4f: babl K %.5f, 1 - linear max %.5f", f[0],
          f[1], f[2], nl_cmyk[3], 1 - mx_lin);
    /* at black 0 ours keeps c, m, y whole and prints no K */
    ours(ctx, rgb, 0.0, ink);
    for (int c = 0; c < 3; c++)
      CHECK(fabs(ink[c] - (1 - f[c])) <= tol, "black 0 plane %d: %.5f for %.5f", c, ink[c], 1 - f[c]);
    CHECK(ink[3] == 0, "black 0: K %.5f", ink[3]);
  }
  /* the formulas really differ wherever K and a chromatic ink meet */
  CHECK(differ > 100, "only %d samples differ by more than 0.05", differ);
  ht_context_free(ctx);
  babl_exit();
  if (failures) {
    fprintf(stderr, "test-babl-cmyk: %d check(s) failed\n", failures);
    return 1;
  }
  printf("test-babl-cmyk: all checks passed (%d ink values differ from babl's by more than 0.05)\n", differ);
  return 0;
}

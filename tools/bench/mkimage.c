/* ht-mkimage: makes a square 8-bit gray PGM or RGB PPM of any size from a
 * photo, for the benchmarks (tools/bench/bench.py, bench-color.sh), so
 * that no Python imaging is needed.
 *
 *   ht-mkimage INPUT SIZE OUTPUT.pgm|OUTPUT.ppm
 *
 * The centre square of INPUT (for a PGM gray, or Rec. 709 luma of colour,
 * as `halftone` computes it; for a PPM its R, G and B, or the gray
 * channel three times) is resized to SIZE x SIZE by bilinear
 * interpolation with pixel centres aligned (x_src = (x + 0.5) * s - 0.5,
 * clamped at the edges). Like `halftone`, it refuses to write over its
 * input and writes nothing when it fails.
 */
#include "halftone.h"
#include "imageio.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
  hti_std_fds();
  hti_signals("ht-mkimage");
  if (argc == 2 && strcmp(argv[1], "--help") == 0) {
    puts("Usage: ht-mkimage INPUT SIZE OUTPUT.pgm|OUTPUT.ppm\n"
         "Bilinear resize of INPUT's centre square to SIZE x SIZE, 8-bit gray PGM or RGB PPM.");
    return 0;
  }
  if (argc != 4) {
    fprintf(stderr, "ht-mkimage: usage: ht-mkimage INPUT SIZE OUTPUT.pgm|OUTPUT.ppm\n");
    return 2;
  }
  char *end;
  errno = 0;
  long size = strtol(argv[2], &end, 10);
  if (errno || *end || size < 1 || size > HT_MAX_SIDE) {
    fprintf(stderr, "ht-mkimage: SIZE must be 1..%lld, not '%s'\n", (long long)HT_MAX_SIDE, argv[2]);
    return 2;
  }
  int kind = hti_kind_from_path(argv[3]);
  if (kind != HTI_PGM && kind != HTI_PPM) {
    fprintf(stderr, "ht-mkimage: %s: the output must be a .pgm or .ppm file\n", argv[3]);
    return 2;
  }
  const int nc = kind == HTI_PPM ? 3 : 1;
  char err[512];
  hti_dest dest;
  if (!hti_dest_open(&dest, argv[3], argv[1], false, err, sizeof err)) {
    fprintf(stderr, "ht-mkimage: %s: %s\n", argv[3], err);
    return 1;
  }
  hti_image im;
  if (!hti_read(argv[1], &im, err, sizeof err)) {
    fprintf(stderr, "ht-mkimage: %s: %s\n", argv[1], err);
    hti_dest_close(&dest);
    return 1;
  }
  /* The planes to resize: luma, or R, G, B (a gray input's one channel
   * three times; hti_gray8 gives a CMYK input's R, G and B). */
  uint8_t *plane[3] = {NULL, NULL, NULL};
  bool colour = im.channels - (im.has_alpha ? 1 : 0) >= 3;
  bool ok_planes = true;
  for (int c = 0; c < nc; c++)
    ok_planes &= (plane[c] = hti_gray8(&im, nc == 1 ? -1 : colour ? c : -1)) != NULL;
  int64_t sw = im.width, side = im.width < im.height ? im.width : im.height;
  int64_t x0 = (im.width - side) / 2, y0 = (im.height - side) / 2;
  hti_release(&im);
  hti_out out;
  if (!ok_planes) {
    fprintf(stderr, "ht-mkimage: out of memory\n");
    for (int c = 0; c < nc; c++)
      free(plane[c]);
    hti_dest_close(&dest);
    return 1;
  }
  if (!hti_out_init(&out, (hti_kind)kind, size, size, nc, 8, err, sizeof err)) {
    fprintf(stderr, "ht-mkimage: %s: %s\n", argv[3], err);
    for (int c = 0; c < nc; c++)
      free(plane[c]);
    hti_dest_close(&dest);
    return 1;
  }
  double scale = (double)side / (double)size;
  /* Horizontal taps are the same on every row: compute them once. */
  int64_t *xi = malloc((size_t)size * sizeof *xi);
  double *xf = malloc((size_t)size * sizeof *xf);
  if (!xi || !xf) {
    fprintf(stderr, "ht-mkimage: out of memory\n");
    free(xi);
    free(xf);
    for (int c = 0; c < nc; c++)
      free(plane[c]);
    hti_out_free(&out);
    hti_dest_close(&dest);
    return 1;
  }
  for (int64_t x = 0; x < size; x++) {
    double sx = ((double)x + 0.5) * scale - 0.5;
    if (sx < 0)
      sx = 0;
    if (sx > (double)(side - 1))
      sx = (double)(side - 1);
    xi[x] = (int64_t)sx;
    xf[x] = sx - (double)xi[x];
  }
  for (int64_t y = 0; y < size; y++) {
    double sy = ((double)y + 0.5) * scale - 0.5;
    if (sy < 0)
      sy = 0;
    if (sy > (double)(side - 1))
      sy = (double)(side - 1);
    int64_t iy = (int64_t)sy;
    double fy = sy - (double)iy;
    int64_t iy1 = iy + 1 < side ? iy + 1 : iy;
    for (int c = 0; c < nc; c++) {
      const uint8_t *r0 = plane[c] + (size_t)(y0 + iy) * (size_t)sw + x0;
      const uint8_t *r1 = plane[c] + (size_t)(y0 + iy1) * (size_t)sw + x0;
      uint8_t *d = out.pixels + (size_t)y * out.stride + c;
      for (int64_t x = 0; x < size; x++) {
        int64_t a = xi[x], b = a + 1 < side ? a + 1 : a;
        double fx = xf[x];
        double top = r0[a] + fx * (r0[b] - r0[a]);
        double bot = r1[a] + fx * (r1[b] - r1[a]);
        d[x * nc] = (uint8_t)lrint(top + fy * (bot - top));
      }
    }
  }
  free(xi);
  free(xf);
  for (int c = 0; c < nc; c++)
    free(plane[c]);
  bool ok = hti_out_write(&out, &dest, err, sizeof err);
  hti_out_free(&out);
  hti_dest_close(&dest);
  if (!ok) {
    fprintf(stderr, "ht-mkimage: %s: %s\n", argv[3], err);
    return 1;
  }
  return 0;
}

/* cmyk-tiff: writes a CMYK TIFF through imageio's hti_write_cmyk_tiff,
 * for test_formats.py (case cmyk-write), which reads it back with
 * libtiff's tools and with halftone.
 *
 *   cmyk-tiff DEPTH LEVELS WIDTH HEIGHT OUTPUT [COMPRESSION]
 *
 * Plane p, pixel (x, y) holds ink ((x * (p + 1) + y * 3) % LEVELS)
 * scaled to 0..255 (DEPTH 8), or the bit of that value's lowest bit
 * (DEPTH 1, LEVELS 2), so that the test can compute every sample. The
 * rows are given with a stride wider than needed, as a caller's buffers
 * may be. */
#include "imageio.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
  if (argc < 6 || argc > 7) {
    fprintf(stderr, "usage: cmyk-tiff DEPTH LEVELS WIDTH HEIGHT OUTPUT [COMPRESSION]\n");
    return 2;
  }
  hti_cmyk c;
  memset(&c, 0, sizeof c);
  c.depth = atoi(argv[1]);
  int levels = atoi(argv[2]);
  c.width = atoi(argv[3]);
  c.height = atoi(argv[4]);
  c.xdpi = c.ydpi = 2400;
  c.compression = argc == 7 ? (hti_compression)hti_compression_from_name(argv[6]) : HTI_COMPRESS_AUTO;
  if (levels < 2 || levels > 256 || c.width < 1 || c.height < 1 || (int)c.compression < 0)
    return 2;
  uint8_t *mem[4];
  for (int p = 0; p < 4; p++) {
    c.levels[p] = levels;
    c.stride[p] = (c.depth == 1 ? ((size_t)c.width + 7) / 8 : (size_t)c.width) + 5;
    mem[p] = calloc(c.stride[p], (size_t)c.height);
    if (!mem[p])
      return 1;
    for (int64_t y = 0; y < c.height; y++)
      for (int64_t x = 0; x < c.width; x++) {
        int v = (int)((x * (p + 1) + y * 3) % levels);
        uint8_t *row = mem[p] + (size_t)y * c.stride[p];
        if (c.depth == 1) {
          if (v & 1)
            row[x >> 3] |= (uint8_t)(0x80u >> (x & 7));
        } else {
          row[x] = (uint8_t)(v * 255 / (levels - 1));
        }
      }
    c.plane[p] = mem[p];
  }
  char err[256];
  hti_dest d;
  hti_signals("cmyk-tiff");
  bool ok = hti_dest_open(&d, argv[5], NULL, false, err, sizeof err) && hti_write_cmyk_tiff(&c, &d, err, sizeof err);
  if (!ok)
    fprintf(stderr, "cmyk-tiff: %s\n", err);
  hti_dest_close(&d);
  for (int p = 0; p < 4; p++)
    free(mem[p]);
  return ok ? 0 : 1;
}

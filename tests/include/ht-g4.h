/* The CCITT G4 round trip shared by test-g4.c (suite cli) and
 * fuzz-imageio.c (suite fuzz): a strip coded by imageio/imageio_g4.c is put
 * into a one-strip TIFF and decoded by libtiff's own G4 decoder. Needs
 * libtiff (callers build it under HT_HAVE_TIFF). */
#ifndef HT_G4_H
#define HT_G4_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <tiffio.h>
#include <unistd.h>

/* The tags the TIFF writer gives a 1-bit G4 image of one strip. */
static inline void ht_g4_tags(TIFF *tif, uint32_t w, uint32_t h)
{
  TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, w);
  TIFFSetField(tif, TIFFTAG_IMAGELENGTH, h);
  TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, 1);
  TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, 1);
  TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISWHITE);
  TIFFSetField(tif, TIFFTAG_COMPRESSION, COMPRESSION_CCITTFAX4);
  TIFFSetField(tif, TIFFTAG_FILLORDER, FILLORDER_MSB2LSB);
  TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, h);
}

/* A TIFF on the file fd, from its start (emptied first for "w");
 * TIFFClose closes a copy of fd, not fd. */
static inline TIFF *ht_g4_open(int fd, const char *mode)
{
  if (*mode == 'w' && ftruncate(fd, 0) != 0)
    return NULL;
  lseek(fd, 0, SEEK_SET);
  return TIFFFdOpen(dup(fd), "scratch", mode);
}

/* Decodes the strip `coded` (len bytes) of a w x h image with libtiff,
 * through the file fd, and compares it with `packed` (rows of (w + 7) / 8
 * bytes; bits past w are not compared): -1 when every row agrees, else
 * the first row that does not, or -2 when libtiff cannot decode it. */
static inline int64_t ht_g4_decode_compare(int fd, const uint8_t *coded, size_t len, const uint8_t *packed, uint32_t w,
                                           uint32_t h)
{
  size_t rb = ((size_t)w + 7) / 8;
  TIFF *tif = ht_g4_open(fd, "w");
  if (!tif)
    return -2;
  ht_g4_tags(tif, w, h);
  bool wrote = TIFFWriteRawStrip(tif, 0, (void *)(uintptr_t)coded, (tmsize_t)len) >= 0;
  TIFFClose(tif);
  tif = wrote ? ht_g4_open(fd, "r") : NULL;
  uint8_t *back = malloc(rb * h);
  int64_t bad = -2;
  if (tif && back && TIFFReadEncodedStrip(tif, 0, back, (tmsize_t)(rb * h)) == (tmsize_t)(rb * h)) {
    uint8_t last = (uint8_t)(0xFF00u >> ((w - 1) % 8 + 1)); /* the pixels of a row's last byte */
    bad = -1;
    for (uint32_t y = 0; y < h && bad == -1; y++) {
      const uint8_t *a = packed + y * rb, *b = back + y * rb;
      if (memcmp(a, b, rb - 1) != 0 || ((a[rb - 1] ^ b[rb - 1]) & last))
        bad = y;
    }
  }
  if (tif)
    TIFFClose(tif);
  free(back);
  return bad;
}

#endif

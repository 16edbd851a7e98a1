/* What the parts of imageio/ (one file a format) share; private to
 * them, not for the tools. */
#ifndef HT_IMAGEIO_PRIV_H
#define HT_IMAGEIO_PRIV_H

#include "imageio.h"

#include "ht-config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Same bounds as libhalftone (HT_MAX_SIDE): larger images are refused
 * here already, before any allocation is sized from the header. */
#define HTI_MAX_SIDE ((int64_t)1 << 24)

/* Writes the message into err (when there is room) and returns false. */
bool hti_fail(char *err, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* a * b in size_t, false on overflow. */
static inline bool hti_mul_size(size_t a, size_t b, size_t *r)
{
  if (a && b > SIZE_MAX / a)
    return false;
  *r = a * b;
  return true;
}

/* The bytes of memory a decoded image may take, read from an input of
 * `input_len` bytes (0: not known, as for a stream before its end): the
 * budget of imageio_util.c (hti_set_memory_limit). */
uint64_t hti_memory_limit(uint64_t input_len);
/* Whether `bytes` for a w x h image from an input of `input_len` bytes
 * (0: not known) fit that budget; else false with a "too large" message
 * that says which bound it passed and how --max-memory lifts it. Every
 * allocation sized from a header is checked with it first. */
bool hti_fits_memory(uint64_t bytes, uint64_t input_len, uint64_t w, uint64_t h, char *err, size_t n);
/* The same for `what` ("a 640x480 PNG read from a stream"); `stream`:
 * `what` is a stream whose image takes `image` bytes decoded (0: not
 * known) and whose data went on until they and it took `bytes`. */
bool hti_fits_memory_text(uint64_t bytes, uint64_t input_len, bool stream, uint64_t image, const char *what, char *err,
                          size_t n);

static inline uint32_t hti_be32(const uint8_t *p)
{
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline bool hti_little_endian(void)
{
  const uint16_t one = 1;
  uint8_t first;
  memcpy(&first, &one, 1);
  return first == 1;
}

/* ------------------------------------------------------------ signatures */

static inline bool hti_pnm_signature(const uint8_t *p, size_t len)
{
  return len >= 2 && p[0] == 'P' && p[1] >= '1' && p[1] <= '7';
}

static inline bool hti_png_signature(const uint8_t *p, size_t len)
{
  static const uint8_t sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
  return len >= 8 && memcmp(p, sig, 8) == 0;
}

/* --------------------------------------------------------------- netpbm */

/* A netpbm header, as far as the bytes go. */
typedef struct {
  char kind;                 /* '1'..'7'                                     */
  bool ascii, bits;          /* P2/P3 plain; P4 packed bits                  */
  uint64_t w, h, maxval;
  int channels;
  bool alpha;
  size_t data;               /* where the samples start                      */
  size_t samples;            /* w * h * channels                             */
} pnm_header;

bool hti_pnm_parse_header(const uint8_t *data, size_t len, pnm_header *hd, char *err, size_t n);
bool hti_decode_pnm(const uint8_t *data, size_t len, hti_image *img, char *err, size_t n);
/* PBM, PGM, PPM: the file hti_out_init built (header and pixels) as it is. */
bool hti_write_pnm(const hti_out *o, int fd, char *err, size_t n);

/* ------------------------------------------------------------------ PNG */

/* The bytes a PNG's pixels take in the file before compression; 0 when
 * the header is not one to trust. */
uint64_t hti_png_raw_bytes(uint64_t w, uint64_t h, int bit_depth, int color_type);
bool hti_decode_png(const uint8_t *data, size_t len, hti_image *img, char *err, size_t n);
bool hti_write_png(const hti_out *o, int fd, char *err, size_t n);

/* --------------------------------------------------------------- output */

/* Whether `path` is the null device (where output goes to be discarded). */
bool hti_is_null_device(const char *path);
/* write() until done; false with the system's reason. */
bool hti_write_all(int fd, const uint8_t *p, size_t len, char *err, size_t n);
/* After a writer has written the file to d->fd (ok: it succeeded): syncs,
 * closes and renames it into place (nothing for standard output). */
bool hti_dest_finish(hti_dest *d, bool ok, char *err, size_t n);

/* ----------------------------------------------------------- TIFF, JPEG */

static inline bool hti_tiff_signature(const uint8_t *p, size_t len)
{
  return len >= 4 && ((p[0] == 'I' && p[1] == 'I' && (p[2] == 42 || p[2] == 43) && p[3] == 0) ||
                      (p[0] == 'M' && p[1] == 'M' && p[2] == 0 && (p[3] == 42 || p[3] == 43)));
}

static inline bool hti_jpeg_signature(const uint8_t *p, size_t len)
{
  return len >= 3 && p[0] == 0xFF && p[1] == 0xD8 && p[2] == 0xFF;
}

/* CCITT Group 4 (T.6) coding of `rows` rows of `width` pixels, each row
 * `stride` bytes apart, packed MSB first, bit set = black (T.6's black;
 * MinIsWhite in TIFF): the bit stream of one strip, EOFB at its end,
 * zeros to the last byte, as a TIFF G4 strip in FillOrder 1 holds it
 * (imageio_g4.c). Bits past `width` are not read. `out` holds
 * hti_g4_bound(width, rows) bytes; returns the bytes written, 0 when out
 * of memory. */
size_t hti_g4_bound(uint32_t width, uint32_t rows);
size_t hti_g4_encode(const uint8_t *pixels, size_t stride, uint32_t width, uint32_t rows, uint8_t *out);
/* The words of the reference line's bitmaps that the coder's searches
 * read past their first load, so far in this process (all threads): in
 * each row at most every word of the two bitmaps once and one word a
 * search, linear in the width; for tests (test-g4.c). */
uint64_t hti_g4_far_words(void);

bool hti_decode_tiff(const uint8_t *data, size_t len, hti_image *img, char *err, size_t n);
bool hti_write_tiff(const hti_out *o, int fd, char *err, size_t n);
/* The largest file the TIFF writer writes as classic TIFF before it
 * starts again as BigTIFF: 2^32 - 1 bytes, or less for tests (0: that
 * again). */
void hti_tiff_set_classic_limit(uint64_t bytes);
/* A checked CMYK image (hti_write_cmyk_tiff) as a TIFF into fd. */
bool hti_write_cmyk_fd(const hti_cmyk *c, int fd, char *err, size_t n);
bool hti_decode_jpeg(const uint8_t *data, size_t len, hti_image *img, char *err, size_t n);

/* ---------------------------------------------------------------- table */

/* The first row of the format table (imageio_formats.c) whose signature
 * data starts with, or NULL. */
const hti_format *hti_format_by_signature(const uint8_t *data, size_t len);

#endif

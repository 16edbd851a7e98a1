/* The formats of the tools' image files in one table (imageio.h,
 * hti_format): per format its names and extensions, label, the layouts it
 * writes, whether it keeps a resolution and an ICC profile, and its
 * reader and writer, NULL where this build lacks the library. Reading
 * (imageio_read.c), writing (hti_out_init, imageio_dest.c) and the tools'
 * checks, --format and --help all look here. */
#include "imageio_priv.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#if HT_HAVE_PNG
#define PNG_READ hti_decode_png
#define PNG_WRITE hti_write_png
#else
#define PNG_READ NULL
#define PNG_WRITE NULL
#endif
#if HT_HAVE_TIFF
#define TIFF_READ hti_decode_tiff
#define TIFF_WRITE hti_write_tiff
#else
#define TIFF_READ NULL
#define TIFF_WRITE NULL
#endif
#if HT_HAVE_JPEG
#define JPEG_READ hti_decode_jpeg
#else
#define JPEG_READ NULL
#endif

#define DEPTH(d) ((uint32_t)1 << (d))
#define CHANNELS(c) ((uint32_t)1 << (c))
/* PNG and TIFF: gray, gray + alpha, RGB, RGBA; 1-bit (gray only), 8, 16 */
#define ANY_DEPTH (DEPTH(1) | DEPTH(8) | DEPTH(16))
#define ANY_CHANNELS (CHANNELS(1) | CHANNELS(2) | CHANNELS(3) | CHANNELS(4))

/* In hti_kind's order. Every netpbm row reads every netpbm file (P1..P7);
 * reading takes the first row whose signature matches. */
static const hti_format formats[] = {
  { HTI_PBM, "pbm", { ".pbm" }, "PBM", "packed 1-bit (2 levels, one plane)", NULL, true, DEPTH(1),
    CHANNELS(1), false, false, "black and white only (one plane, 2 levels)", hti_pnm_signature, hti_decode_pnm,
    hti_write_pnm, 0 },
  /* 16-bit only for halftone --write-mask (a threshold map for other
   * tools); halftoning writes 8-bit gray */
  { HTI_PGM, "pgm", { ".pgm" }, "PGM", "8-bit gray", NULL, true, DEPTH(8) | DEPTH(16), CHANNELS(1), false, false,
    "one plane of 8- or 16-bit samples", hti_pnm_signature, hti_decode_pnm, hti_write_pnm, 0 },
  { HTI_PPM, "ppm", { ".ppm" }, "PPM", "8-bit RGB", NULL, true, DEPTH(8), CHANNELS(3), false, false,
    "three planes (RGB) of 8-bit samples", hti_pnm_signature, hti_decode_pnm, hti_write_pnm, 0 },
  /* libpng writes (and by default reads) at most 10^6 pixels a side: its
   * user limits, which other programs' readers keep */
  { HTI_PNG, "png", { ".png" }, "PNG", "gray/RGB, alpha kept; 1-bit when black and white", "libpng", HT_HAVE_PNG,
    ANY_DEPTH, ANY_CHANNELS, true, false, NULL, hti_png_signature, PNG_READ, PNG_WRITE, 1000000 },
  { HTI_TIFF, "tiff", { ".tif", ".tiff" }, "TIFF", "as .png; 1-bit with CCITT Group 4 compression, else Deflate",
    "libtiff", HT_HAVE_TIFF, ANY_DEPTH, ANY_CHANNELS, true, true, NULL, hti_tiff_signature, TIFF_READ, TIFF_WRITE,
    0 },
  /* takes what PNG would; nothing is written (hti_out_write) */
  { HTI_NULL, NULL, { NULL }, "the null device", NULL, NULL, true, ANY_DEPTH, ANY_CHANNELS, false, false, NULL, NULL,
    NULL, NULL, 0 },
  { HTI_JPEG, "jpeg", { ".jpg", ".jpeg" }, "JPEG", NULL, "libjpeg", HT_HAVE_JPEG, 0, 0, false, false, NULL,
    hti_jpeg_signature, JPEG_READ, NULL, 0 },
};
#define NFORMATS (sizeof formats / sizeof formats[0])

const hti_format *hti_formats(size_t *count)
{
  *count = NFORMATS;
  return formats;
}

const hti_format *hti_format_of(hti_kind kind)
{
  for (size_t i = 0; i < NFORMATS; i++)
    if (formats[i].kind == kind)
      return &formats[i];
  return NULL;
}

const hti_format *hti_format_by_signature(const uint8_t *data, size_t len)
{
  for (size_t i = 0; i < NFORMATS; i++)
    if (formats[i].signature && formats[i].signature(data, len))
      return &formats[i];
  return NULL;
}

bool hti_format_writes(const hti_format *f, int channels, int depth)
{
  return channels >= 1 && channels <= 4 && depth >= 1 && depth <= 16 && (f->channels & CHANNELS(channels)) &&
         (f->depths & DEPTH(depth)) && (depth != 1 || channels == 1);
}

void hti_format_missing(const hti_format *f, char *buf, size_t size)
{
  snprintf(buf, size, "this build has no %s support (%s was not found)", f->label, f->library);
}

int hti_kind_from_path(const char *path)
{
  if (hti_is_null_device(path))
    return HTI_NULL;
  const char *slash = strrchr(path, '/');
  const char *dot = strrchr(slash ? slash + 1 : path, '.');
  if (!dot)
    return -1;
  return hti_kind_from_name(dot + 1);
}

int hti_kind_from_name(const char *name)
{
  for (size_t i = 0; i < NFORMATS; i++) {
    const hti_format *f = &formats[i];
    if (!f->depths) /* never written: no output kind */
      continue;
    if (f->name && strcasecmp(name, f->name) == 0)
      return (int)f->kind;
    for (const char *const *e = f->extensions; *e; e++)
      if (strcasecmp(name, *e + 1) == 0)
        return (int)f->kind;
  }
  return -1;
}

const char *hti_kind_name(hti_kind kind)
{
  const hti_format *f = hti_format_of(kind);
  return f ? f->label : "?";
}

static const hti_compression_name compressions[] = {
  { HTI_COMPRESS_AUTO, "auto", "g4 for black and white, else deflate" },
  { HTI_COMPRESS_G4, "g4", "CCITT Group 4, 1-bit only" },
  { HTI_COMPRESS_DEFLATE, "deflate", NULL },
  { HTI_COMPRESS_LZW, "lzw", NULL },
  { HTI_COMPRESS_NONE, "none", NULL },
};

const hti_compression_name *hti_compressions(size_t *count)
{
  *count = sizeof compressions / sizeof compressions[0];
  return compressions;
}

int hti_compression_from_name(const char *name)
{
  for (size_t i = 0; i < sizeof compressions / sizeof compressions[0]; i++)
    if (strcasecmp(name, compressions[i].name) == 0)
      return (int)compressions[i].value;
  return -1;
}

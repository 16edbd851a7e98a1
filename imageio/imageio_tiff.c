/* TIFF files (libtiff) for the halftone tools; see imageio.h.
 *
 * Reading: the first image of the file (imageio says how many there are),
 * 1/2/4/8/16-bit gray (either photometric), RGB and CMYK, with or without
 * alpha, in strips or tiles, contiguous or planar, any compression
 * libtiff decodes. Other colour models (palette, YCbCr, CIE Lab ...) go
 * through libtiff's RGBA interface at 8 bits. Each strip or tile is
 * decoded straight into the image where the layouts agree, else through
 * one strip's buffer: never a second copy of the whole image. Before any
 * allocation the declared size is checked against what the file holds
 * (each strip inside the file, enough data for the compression's best
 * ratio) and the memory the process may use.
 *
 * Writing: strips of about 256 KiB of pixels, written from the caller's
 * rows as they are (the codecs used do not touch their input). CCITT G4
 * strips are coded by imageio_g4.c, not by libtiff's coder (about 20 ns
 * a pixel on error diffusion's noise, most of a run's time), and handed
 * to libtiff as coded bytes; the bytes are the same as libtiff's coder
 * gives (tests/cli/test-g4.c). Classic TIFF, unless the file passes its
 * 4 GiB: then BigTIFF, written again from the start (hti_write_tiff).
 */
#include "imageio_priv.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if HT_HAVE_TIFF
#include <tiffio.h>

/* ------------------------------------------------------------ messages */

typedef struct {
  char msg[256]; /* libtiff's first error */
} tiff_errors;

static int on_tiff_error(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap)
{
  (void)tif;
  (void)module;
  tiff_errors *e = user;
  if (e && !e->msg[0]) {
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    for (char *p = e->msg; *p; p++) /* one line */
      if (*p == '\n' || *p == '\r')
        *p = ' ';
  }
  return 1;
}

static int on_tiff_warning(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap)
{
  (void)tif, (void)user, (void)module, (void)fmt, (void)ap;
  return 1; /* unknown tags and the like: not the user's concern */
}

/* ------------------------------------------------------------ reading */

typedef struct {
  const uint8_t *data;
  size_t len, pos;
} mem_file;

static tmsize_t mem_read(thandle_t h, void *buf, tmsize_t size)
{
  mem_file *m = (mem_file *)h;
  size_t left = m->pos < m->len ? m->len - m->pos : 0, k = (size_t)size < left ? (size_t)size : left;
  memcpy(buf, m->data + m->pos, k);
  m->pos += k;
  return (tmsize_t)k;
}

static tmsize_t mem_write(thandle_t h, void *buf, tmsize_t size)
{
  (void)h, (void)buf, (void)size;
  return -1;
}

static toff_t mem_seek(thandle_t h, toff_t off, int whence)
{
  mem_file *m = (mem_file *)h;
  uint64_t base = whence == SEEK_CUR ? m->pos : whence == SEEK_END ? m->len : 0;
  if (off > UINT64_MAX - base || base + off > SIZE_MAX)
    return (toff_t)-1;
  m->pos = (size_t)(base + off);
  return m->pos;
}

static int mem_close(thandle_t h) { (void)h; return 0; }
static toff_t mem_size(thandle_t h) { return ((mem_file *)h)->len; }

static int mem_map(thandle_t h, void **base, toff_t *size)
{
  mem_file *m = (mem_file *)h;
  *base = (void *)(uintptr_t)m->data;
  *size = m->len;
  return 1;
}

static void mem_unmap(thandle_t h, void *base, toff_t size) { (void)h, (void)base, (void)size; }

static TIFF *open_mem(mem_file *m, tiff_errors *e, tmsize_t max_alloc)
{
  TIFFOpenOptions *opts = TIFFOpenOptionsAlloc();
  if (!opts)
    return NULL;
  TIFFOpenOptionsSetErrorHandlerExtR(opts, on_tiff_error, e);
  TIFFOpenOptionsSetWarningHandlerExtR(opts, on_tiff_warning, e);
  if (max_alloc > 0)
    TIFFOpenOptionsSetMaxSingleMemAlloc(opts, max_alloc);
  TIFF *tif = TIFFClientOpenExt("input", "r", (thandle_t)m, mem_read, mem_write, mem_seek, mem_close, mem_size,
                                mem_map, mem_unmap, opts);
  TIFFOpenOptionsFree(opts);
  return tif;
}

/* How the file's samples become the image's. */
typedef struct {
  uint32_t w, h;
  int bps;            /* bits a sample in the file: 1, 2, 4, 8, 16        */
  int spp;            /* samples a pixel in the file                      */
  int colors;         /* 1 gray, 3 RGB, 4 CMYK                            */
  int alpha;          /* index of the alpha sample, or -1                 */
  bool assoc;         /* alpha premultiplied into the colours             */
  bool invert;        /* MinIsWhite                                       */
  int out_ch;         /* channels of the image                            */
  int out_bytes;      /* bytes a sample of the image: 1 or 2              */
  size_t out_stride;
  uint8_t *out;
} layout;

static uint32_t get_sample(const uint8_t *row, size_t i, int bps)
{
  switch (bps) {
  case 8: return row[i];
  case 16: {
    uint16_t v;
    memcpy(&v, row + 2 * i, 2);
    return v;
  }
  default: {
    size_t bit = i * (size_t)bps;
    return (uint32_t)(row[bit >> 3] >> (8 - bps - (int)(bit & 7))) & ((1u << bps) - 1);
  }
  }
}

/* Samples [first, first + count) of one row of the file, `ns` samples a
 * pixel in `src` (spp for contiguous data, 1 for one plane) of which
 * sample `s0` is the first to take (0, or the plane), into pixels x0...
 * of image row y. */
static void put_row(const layout *L, const uint8_t *src, int ns, int s0, uint32_t x0, uint32_t count, uint32_t y)
{
  uint32_t maxv = (1u << L->bps) - 1;
  uint8_t *row = L->out + (size_t)y * L->out_stride;
  for (uint32_t i = 0; i < count; i++) {
    size_t x = (size_t)x0 + i;
    for (int s = 0; s < ns; s++) {
      int fs = s0 + s; /* the sample of the file's pixel */
      int c = fs < L->colors ? fs : fs == L->alpha ? L->out_ch - 1 : -1;
      if (c < 0)
        continue; /* an extra sample that is not kept */
      uint32_t v = get_sample(src, (size_t)i * (size_t)ns + (size_t)s, L->bps);
      if (L->invert && fs < L->colors)
        v = maxv - v;
      size_t o = x * (size_t)L->out_ch + (size_t)c;
      if (L->out_bytes == 2) {
        uint16_t v16 = (uint16_t)v;
        memcpy(row + 2 * o, &v16, 2);
      } else {
        row[o] = (uint8_t)(L->bps == 8 ? v : (v * 255u + maxv / 2) / maxv);
      }
    }
  }
}

/* 1-bit gray, contiguous: a byte of the file is 8 pixels. */
static void put_bits(const layout *L, const uint8_t *src, uint32_t x0, uint32_t count, uint32_t y)
{
  uint8_t *row = L->out + (size_t)y * L->out_stride + x0;
  uint8_t on = L->invert ? 0 : 255, off = L->invert ? 255 : 0;
  for (uint32_t i = 0; i < count; i++)
    row[i] = (src[i >> 3] >> (7 - (i & 7))) & 1 ? on : off;
}

/* Alpha premultiplied into the colours: divided out again, since the
 * tools keep alpha as a channel of its own beside unmultiplied colours. */
static void unassociate(const layout *L)
{
  int colors = L->out_ch - 1;
  for (uint32_t y = 0; y < L->h; y++) {
    uint8_t *row = L->out + (size_t)y * L->out_stride;
    for (uint32_t x = 0; x < L->w; x++) {
      size_t p = (size_t)x * (size_t)L->out_ch;
      if (L->out_bytes == 2) {
        uint16_t v[4];
        memcpy(v, row + 2 * p, 2 * (size_t)L->out_ch);
        uint32_t a = v[colors];
        for (int c = 0; c < colors; c++)
          v[c] = (uint16_t)(a ? (v[c] >= a ? 65535 : ((uint32_t)v[c] * 65535 + a / 2) / a) : 0);
        memcpy(row + 2 * p, v, 2 * (size_t)L->out_ch);
      } else {
        uint32_t a = row[p + (size_t)colors];
        for (int c = 0; c < colors; c++)
          row[p + (size_t)c] = (uint8_t)(a ? (row[p + (size_t)c] >= a ? 255 : (row[p + (size_t)c] * 255u + a / 2) / a) : 0);
      }
    }
  }
}

/* Strips or tiles: each inside the file, and together enough data for
 * the declared size at the compression's best ratio, where the codec
 * has one (the CCITT codes spend at least a bit a row); "truncated"
 * otherwise. What a small file may claim at all, whatever its codec
 * (ZSTD, LZMA, JBIG, JPEG, G4 ... and strips that share their bytes), is
 * the memory budget's check (hti_fits_memory), after this one. */
static bool check_data(TIFF *tif, uint64_t raw, uint16_t compression, size_t len, char *err, size_t n)
{
  uint32_t count = TIFFIsTiled(tif) ? TIFFNumberOfTiles(tif) : TIFFNumberOfStrips(tif);
  if (count == 0)
    return hti_fail(err, n, "TIFF: no image data (0 %s)", TIFFIsTiled(tif) ? "tiles" : "strips");
  uint64_t total = 0;
  for (uint32_t i = 0; i < count; i++) {
    int bad = 0;
    uint64_t off = TIFFGetStrileOffsetWithErr(tif, i, &bad), size = TIFFGetStrileByteCountWithErr(tif, i, &bad);
    if (bad)
      return hti_fail(err, n, "TIFF: the offsets or sizes of its %s cannot be read", TIFFIsTiled(tif) ? "tiles" : "strips");
    if (off > len || size > len - off)
      return hti_fail(err, n, "truncated: %s %u of the TIFF lies beyond the end of the file (%zu bytes)",
                      TIFFIsTiled(tif) ? "tile" : "strip", (unsigned)i, len);
    total += size;
  }
  /* the most each codec can expand a byte of its data to */
  uint64_t ratio = compression == COMPRESSION_NONE ? 1 : compression == COMPRESSION_PACKBITS ? 64
                   : compression == COMPRESSION_ADOBE_DEFLATE || compression == COMPRESSION_DEFLATE ? 1032 : 0;
  if (ratio && total * ratio < raw)
    return hti_fail(err, n, "truncated: the TIFF's image needs %llu bytes of pixel data, its %s hold %llu",
                    (unsigned long long)((raw + ratio - 1) / ratio), TIFFIsTiled(tif) ? "tiles" : "strips",
                    (unsigned long long)total);
  uint32_t rows = 0;
  if ((compression == COMPRESSION_CCITTRLE || compression == COMPRESSION_CCITTFAX3 ||
       compression == COMPRESSION_CCITTFAX4) && TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &rows) &&
      total * 8 < rows)
    return hti_fail(err, n, "truncated: the TIFF's %u rows of CCITT code need at least %u bytes, its %s hold %llu",
                    (unsigned)rows, (unsigned)((rows + 7) / 8), TIFFIsTiled(tif) ? "tiles" : "strips",
                    (unsigned long long)total);
  return true;
}

/* Samples of the file that go into the image one for one: each strip
 * can be decoded straight into the image, without a strip's buffer. */
static bool decodes_in_place(TIFF *tif, const layout *L, bool planar)
{
  return !TIFFIsTiled(tif) && !planar && !L->invert && L->bps >= 8 && L->spp == L->out_ch;
}

/* Reads every strip or tile of the first image into L->out. */
static bool read_native(TIFF *tif, layout *L, bool planar, tiff_errors *e, char *err, size_t n)
{
  bool tiled = TIFFIsTiled(tif);
  tmsize_t chunk = tiled ? TIFFTileSize(tif) : TIFFStripSize(tif);
  if (chunk <= 0)
    return hti_fail(err, n, "TIFF: %s", e->msg[0] ? e->msg : "bad strip or tile size");
  bool direct = decodes_in_place(tif, L, planar);
  uint8_t *buf = direct ? NULL : malloc((size_t)chunk);
  if (!direct && !buf)
    return hti_fail(err, n, "out of memory (%lld bytes for a %s)", (long long)chunk, tiled ? "tile" : "strip");
  int planes = planar ? L->spp : 1, ns = planar ? 1 : L->spp;
  uint32_t tw = L->w, th = 0;
  if (tiled) {
    TIFFGetField(tif, TIFFTAG_TILEWIDTH, &tw);
    TIFFGetField(tif, TIFFTAG_TILELENGTH, &th);
  } else {
    th = L->h;
    TIFFGetFieldDefaulted(tif, TIFFTAG_ROWSPERSTRIP, &th);
    if (th == 0 || th > L->h)
      th = L->h;
  }
  if (tw == 0 || th == 0) {
    free(buf);
    return hti_fail(err, n, "TIFF: bad tile size %ux%u", (unsigned)tw, (unsigned)th);
  }
  /* bytes of one row of a strip or tile in the file */
  size_t row_bytes = ((size_t)tw * (size_t)ns * (size_t)L->bps + 7) / 8;
  bool ok = true;
  for (int p = 0; p < planes && ok; p++)
    for (uint32_t y0 = 0; y0 < L->h && ok; y0 += th)
      for (uint32_t x0 = 0; x0 < L->w && ok; x0 += tw) {
        uint32_t rows = L->h - y0 < th ? L->h - y0 : th, cols = L->w - x0 < tw ? L->w - x0 : tw;
        tmsize_t got;
        uint8_t *dst = direct ? L->out + (size_t)y0 * L->out_stride : buf;
        if (tiled)
          got = TIFFReadEncodedTile(tif, TIFFComputeTile(tif, x0, y0, 0, (uint16_t)p), dst, chunk);
        else
          got = TIFFReadEncodedStrip(tif, TIFFComputeStrip(tif, y0, (uint16_t)p), dst,
                                     direct ? (tmsize_t)((size_t)rows * L->out_stride) : chunk);
        if (got < 0) {
          ok = hti_fail(err, n, "TIFF: %s", e->msg[0] ? e->msg : "cannot decode its pixel data");
          break;
        }
        if (direct)
          continue;
        for (uint32_t r = 0; r < rows; r++) {
          const uint8_t *src = buf + (size_t)r * row_bytes;
          if (L->bps == 1 && L->spp == 1)
            put_bits(L, src, x0, cols, y0 + r);
          else
            put_row(L, src, ns, p, x0, cols, y0 + r);
        }
      }
  free(buf);
  return ok;
}

/* Colour models other than gray, RGB and CMYK, through libtiff's RGBA
 * interface: 8 bits, RGB or RGBA. */
static bool read_rgba(TIFF *tif, layout *L, tiff_errors *e, char *err, size_t n)
{
  size_t px = (size_t)L->w * L->h;
  uint32_t *raster = (uint32_t *)(void *)L->out; /* out holds w * h * 4 bytes, see the caller */
  if (!TIFFReadRGBAImageOriented(tif, L->w, L->h, raster, ORIENTATION_TOPLEFT, 0))
    return hti_fail(err, n, "TIFF: %s", e->msg[0] ? e->msg : "cannot decode its pixel data");
  /* ABGR words to RGB(A) bytes, front to back: the bytes written never
   * pass the word read */
  for (size_t i = 0; i < px; i++) {
    uint32_t v = raster[i];
    uint8_t *d = L->out + i * (size_t)L->out_ch;
    d[0] = (uint8_t)TIFFGetR(v);
    d[1] = (uint8_t)TIFFGetG(v);
    d[2] = (uint8_t)TIFFGetB(v);
    if (L->out_ch == 4)
      d[3] = (uint8_t)TIFFGetA(v);
  }
  return true;
}

bool hti_decode_tiff(const uint8_t *data, size_t len, hti_image *img, char *err, size_t n)
{
  mem_file m = { data, len, 0 };
  tiff_errors e = { "" };
  uint64_t limit = hti_memory_limit(len);
  TIFF *tif = open_mem(&m, &e, limit > (uint64_t)INT64_MAX ? 0 : (tmsize_t)limit);
  if (!tif)
    return hti_fail(err, n, "TIFF: %s", e.msg[0] ? e.msg : "cannot open");
  bool ok = false;
  layout L;
  memset(&L, 0, sizeof L);
  uint16_t bps = 1, spp = 1, photo = 0, planar = PLANARCONFIG_CONTIG, format = SAMPLEFORMAT_UINT, compression = 0,
           inkset = INKSET_CMYK, nextra = 0, *extra = NULL;
  if (!TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &L.w) || !TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &L.h)) {
    hti_fail(err, n, "TIFF: no image size");
    goto done;
  }
  TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &bps);
  TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &spp);
  TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLEFORMAT, &format);
  TIFFGetFieldDefaulted(tif, TIFFTAG_PLANARCONFIG, &planar);
  TIFFGetFieldDefaulted(tif, TIFFTAG_COMPRESSION, &compression);
  TIFFGetFieldDefaulted(tif, TIFFTAG_EXTRASAMPLES, &nextra, &extra);
  TIFFGetFieldDefaulted(tif, TIFFTAG_INKSET, &inkset);
  if (!TIFFGetField(tif, TIFFTAG_PHOTOMETRIC, &photo))
    photo = spp >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK;
  if (L.w == 0 || L.h == 0 || L.w > HTI_MAX_SIDE || L.h > HTI_MAX_SIDE) {
    hti_fail(err, n, "TIFF: bad size %ux%u (each side 1..%lld)", (unsigned)L.w, (unsigned)L.h,
             (long long)HTI_MAX_SIDE);
    goto done;
  }
  if (format != SAMPLEFORMAT_UINT && format != SAMPLEFORMAT_VOID) {
    hti_fail(err, n, "unsupported TIFF sample format: %d-bit %s; halftone reads unsigned integer samples", bps,
             format == SAMPLEFORMAT_IEEEFP ? "floating point" : format == SAMPLEFORMAT_INT ? "signed integers"
                                                                                           : "complex numbers");
    goto done;
  }
  if (bps != 1 && bps != 2 && bps != 4 && bps != 8 && bps != 16) {
    hti_fail(err, n, "unsupported TIFF sample size: %d bits (1, 2, 4, 8 or 16 are read)", bps);
    goto done;
  }
  if (spp < 1 || spp > 16) {
    hti_fail(err, n, "unsupported TIFF: %d samples a pixel", spp);
    goto done;
  }
  /* JPEG-compressed YCbCr: libtiff's codec hands out RGB */
  if (photo == PHOTOMETRIC_YCBCR && compression == COMPRESSION_JPEG && spp >= 3 && bps == 8 &&
      planar == PLANARCONFIG_CONTIG && TIFFSetField(tif, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB))
    photo = PHOTOMETRIC_RGB;
  bool native = true;
  L.bps = bps;
  L.spp = spp;
  L.alpha = -1;
  const char *model;
  switch (photo) {
  case PHOTOMETRIC_MINISWHITE:
  case PHOTOMETRIC_MINISBLACK: L.colors = 1; L.invert = photo == PHOTOMETRIC_MINISWHITE; model = "gray"; break;
  case PHOTOMETRIC_RGB: L.colors = 3; model = "RGB"; break;
  case PHOTOMETRIC_SEPARATED:
    if (inkset != INKSET_CMYK || spp < 4) {
      hti_fail(err, n, "unsupported TIFF: separated colour with %d inks that are not CMYK", spp);
      goto done;
    }
    L.colors = 4;
    model = "CMYK";
    break;
  default: native = false; model = "RGB"; break;
  }
  if (native && L.colors > spp) {
    hti_fail(err, n, "bad TIFF: %s with %d samples a pixel", model, spp);
    goto done;
  }
  if (native && bps < 8 && L.colors > 1 && bps != 1) {
    hti_fail(err, n, "unsupported TIFF: %d-bit %s", bps, model);
    goto done;
  }
  bool dropped_alpha = false;
  if (nextra > 0 && spp > L.colors && (extra[0] == EXTRASAMPLE_ASSOCALPHA || extra[0] == EXTRASAMPLE_UNASSALPHA)) {
    if (L.colors == 4)
      dropped_alpha = true; /* the tools' images have no CMYK + alpha */
    else {
      L.alpha = native ? L.colors : 3;
      L.assoc = extra[0] == EXTRASAMPLE_ASSOCALPHA;
    }
  }
  if (!native) {
    char why[1024] = "";
    if (!TIFFRGBAImageOK(tif, why)) {
      hti_fail(err, n, "unsupported TIFF: %s", why[0] ? why : "colour model not readable");
      goto done;
    }
    L.bps = 8;
    L.colors = 3;
  }
  L.out_ch = L.colors + (L.alpha >= 0 ? 1 : 0);
  L.out_bytes = L.bps == 16 ? 2 : 1;
  L.out_stride = (size_t)L.w * (size_t)L.out_ch * (size_t)L.out_bytes;
  /* the RGBA interface needs 4 bytes a pixel whatever comes out */
  uint64_t bytes = (uint64_t)L.w * L.h * (native ? (uint64_t)L.out_ch * (uint64_t)L.out_bytes : 4);
  uint64_t raw = (uint64_t)L.h * (((uint64_t)L.w * spp * bps + 7) / 8);
  /* and, unless each strip is decoded in place, a strip's or tile's
   * buffer (libtiff's own, in the RGBA interface) */
  uint64_t chunk = native && decodes_in_place(tif, &L, planar == PLANARCONFIG_SEPARATE) ? 0
                   : TIFFIsTiled(tif) ? TIFFTileSize64(tif) : TIFFStripSize64(tif);
  if (!check_data(tif, raw, compression, len, err, n) || !hti_fits_memory(bytes + chunk, len, L.w, L.h, err, n))
    goto done;
  L.out = malloc((size_t)bytes);
  if (!L.out) {
    hti_fail(err, n, "out of memory (%llu bytes)", (unsigned long long)bytes);
    goto done;
  }
  if (!(native ? read_native(tif, &L, planar == PLANARCONFIG_SEPARATE, &e, err, n) : read_rgba(tif, &L, &e, err, n))) {
    free(L.out);
    goto done;
  }
  if (native && L.assoc)
    unassociate(&L);

  /* resolution: inches unless the file says centimetres; none without a
   * unit (ResolutionUnit 1 gives an aspect ratio only) */
  float xr = 0, yr = 0;
  uint16_t unit = RESUNIT_INCH;
  TIFFGetFieldDefaulted(tif, TIFFTAG_RESOLUTIONUNIT, &unit);
  if (TIFFGetField(tif, TIFFTAG_XRESOLUTION, &xr) && unit != RESUNIT_NONE && xr > 0 && xr < 1e7f) {
    if (!TIFFGetField(tif, TIFFTAG_YRESOLUTION, &yr) || !(yr > 0 && yr < 1e7f))
      yr = xr;
    double f = unit == RESUNIT_CENTIMETER ? 2.54 : 1.0;
    img->xdpi = round(xr * f * 100) / 100; /* to 1/100 dpi */
    img->ydpi = round(yr * f * 100) / 100;
  }
  uint32_t icc_len = 0;
  void *icc = NULL;
  if (TIFFGetField(tif, TIFFTAG_ICCPROFILE, &icc_len, &icc) && icc && icc_len > 0 && icc_len < (64u << 20)) {
    img->icc = malloc(icc_len);
    if (img->icc) {
      memcpy(img->icc, icc, icc_len);
      img->icc_len = icc_len;
    }
  }
  img->pages = TIFFNumberOfDirectories(tif);
  if (img->pages < 1)
    img->pages = 1;
  free(img->buf);
  img->buf = L.out;
  img->pixels = L.out;
  img->width = L.w;
  img->height = L.h;
  img->channels = L.out_ch;
  img->has_alpha = L.alpha >= 0;
  img->cmyk = L.colors == 4;
  img->depth = L.out_bytes * 8;
  img->stride = L.out_stride;
  static const char *const names[3][2][2] = {
    { { "TIFF (gray)", "TIFF (gray+alpha)" }, { "TIFF (gray, 16-bit)", "TIFF (gray+alpha, 16-bit)" } },
    { { "TIFF (RGB)", "TIFF (RGBA)" }, { "TIFF (RGB, 16-bit)", "TIFF (RGBA, 16-bit)" } },
    { { "TIFF (CMYK)", "TIFF (CMYK)" }, { "TIFF (CMYK, 16-bit)", "TIFF (CMYK, 16-bit)" } },
  };
  img->format = names[L.colors == 1 ? 0 : L.colors == 3 ? 1 : 2][L.out_bytes == 2][img->has_alpha];
  if (dropped_alpha)
    img->note = "the alpha channel of the CMYK TIFF is dropped";
  else if (nextra > 0 && spp > L.out_ch && native)
    img->note = "extra samples of the TIFF other than alpha are dropped";
  ok = true;
done:
  TIFFClose(tif);
  return ok;
}

/* ------------------------------------------------------------ writing */

/* Where libtiff's bytes go: the temporary file (seekable), or for
 * standard output that is a pipe, memory written out at the end (TIFF
 * points back to its directory, written last). */
typedef struct {
  int fd;
  bool seekable;
  uint8_t *mem;
  size_t len, cap, pos; /* memory: its bytes; pos also the file's offset */
  uint64_t end;         /* the file's size so far (the furthest byte written) */
  int error; /* the first failing write's errno */
} sink;

static tmsize_t sink_write(thandle_t h, void *buf, tmsize_t size)
{
  sink *s = (sink *)h;
  if (s->seekable) {
    const uint8_t *p = buf;
    size_t left = (size_t)size;
    while (left) {
      ssize_t w = write(s->fd, p, left);
      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0) {
        if (!s->error)
          s->error = w < 0 ? errno : ENOSPC;
        return -1;
      }
      p += w;
      left -= (size_t)w;
    }
    s->pos += (size_t)size;
    if (s->pos > s->end)
      s->end = s->pos;
    return size;
  }
  size_t end = s->pos + (size_t)size;
  if (end > s->cap) {
    size_t cap = s->cap ? s->cap : (1 << 20);
    while (cap < end)
      cap *= 2;
    uint8_t *m = realloc(s->mem, cap);
    if (!m) {
      if (!s->error)
        s->error = ENOMEM;
      return -1;
    }
    s->mem = m;
    s->cap = cap;
  }
  if (s->pos > s->len) /* a seek past the end: zeros in between */
    memset(s->mem + s->len, 0, s->pos - s->len);
  memcpy(s->mem + s->pos, buf, (size_t)size);
  s->pos = end;
  if (end > s->len)
    s->len = end;
  s->end = s->len;
  return size;
}

static tmsize_t sink_read(thandle_t h, void *buf, tmsize_t size)
{
  sink *s = (sink *)h;
  if (s->seekable) {
    ssize_t r = read(s->fd, buf, (size_t)size);
    if (r > 0)
      s->pos += (size_t)r;
    return r;
  }
  size_t k = s->pos < s->len ? s->len - s->pos : 0;
  if (k > (size_t)size)
    k = (size_t)size;
  memcpy(buf, s->mem + s->pos, k);
  s->pos += k;
  return (tmsize_t)k;
}

static toff_t sink_seek(thandle_t h, toff_t off, int whence)
{
  sink *s = (sink *)h;
  if (s->seekable) {
    off_t r = lseek(s->fd, (off_t)off, whence);
    if (r >= 0)
      s->pos = (size_t)r;
    return r < 0 ? (toff_t)-1 : (toff_t)r;
  }
  uint64_t base = whence == SEEK_CUR ? s->pos : whence == SEEK_END ? s->len : 0;
  s->pos = (size_t)(base + off);
  return s->pos;
}

static int sink_close(thandle_t h) { (void)h; return 0; }

static toff_t sink_size(thandle_t h)
{
  sink *s = (sink *)h;
  struct stat st;
  if (s->seekable)
    return fstat(s->fd, &st) == 0 ? (toff_t)st.st_size : 0;
  return s->len;
}

static int sink_map(thandle_t h, void **base, toff_t *size) { (void)h, (void)base, (void)size; return 0; }
static void sink_unmap(thandle_t h, void *base, toff_t size) { (void)h, (void)base, (void)size; }

typedef struct {
  sink s;
  tiff_errors e;
  TIFF *tif;
  bool big;      /* BigTIFF ("w8")                                       */
  bool overflow; /* classic TIFF could not hold the file: write it again
                    as BigTIFF                                           */
} writer;

/* The largest file classic TIFF holds: its offsets have 32 bits. */
static uint64_t classic_limit = UINT32_MAX;

void hti_tiff_set_classic_limit(uint64_t bytes) { classic_limit = bytes ? bytes : UINT32_MAX; }

/* Opens a TIFF on fd where it stands; `big`: BigTIFF, a second try after
 * classic TIFF could not hold the file, which starts again from where
 * the first began (`start`, the file cut back to it). */
static bool writer_open(writer *w, int fd, bool big, off_t start, char *err, size_t n)
{
  memset(w, 0, sizeof *w);
  w->s.fd = fd;
  w->big = big;
  off_t at = lseek(fd, big ? start : 0, big ? SEEK_SET : SEEK_CUR);
  w->s.seekable = at >= 0;
  if (big && w->s.seekable && ftruncate(fd, start) != 0)
    return hti_fail(err, n, "cannot write: %s", strerror(errno));
  w->s.pos = w->s.seekable ? (size_t)at : 0;
  TIFFOpenOptions *opts = TIFFOpenOptionsAlloc();
  if (!opts)
    return hti_fail(err, n, "out of memory");
  TIFFOpenOptionsSetErrorHandlerExtR(opts, on_tiff_error, &w->e);
  TIFFOpenOptionsSetWarningHandlerExtR(opts, on_tiff_warning, &w->e);
  /* BigTIFF only where the classic format's 4 GiB of offsets could not
   * hold the file ("w8" would make it unreadable for older readers) */
  w->tif = TIFFClientOpenExt("output", big ? "w8" : "w", (thandle_t)&w->s, sink_read, sink_write, sink_seek,
                             sink_close, sink_size, sink_map, sink_unmap, opts);
  TIFFOpenOptionsFree(opts);
  if (!w->tif)
    return hti_fail(err, n, "TIFF: %s", w->e.msg[0] ? w->e.msg : "cannot start the file");
  return true;
}

/* Whether `more` bytes after what is written pass what classic TIFF
 * holds: then the file is written again as BigTIFF. */
static bool writer_full(writer *w, uint64_t more)
{
  if (!w->big && w->s.end + more > classic_limit)
    w->overflow = true;
  return w->overflow;
}

/* A failed step: the system's reason where a write failed, else libtiff's
 * (whose "Maximum TIFF file size exceeded" asks for BigTIFF). */
static bool writer_fail(writer *w, char *err, size_t n)
{
  if (!w->big && strstr(w->e.msg, "Maximum TIFF file size exceeded"))
    w->overflow = true;
  if (w->overflow)
    return hti_fail(err, n, "TIFF: the file passes the 4 GiB of classic TIFF");
  if (w->s.error)
    return hti_fail(err, n, "cannot write: %s", strerror(w->s.error));
  return hti_fail(err, n, "TIFF: %s", w->e.msg[0] ? w->e.msg : "cannot write the file");
}

/* Closes the file (libtiff writes the directory here) and, for a pipe,
 * writes out what was built in memory. */
static bool writer_close(writer *w, bool ok, char *err, size_t n)
{
  if (ok && (!TIFFFlush(w->tif) || writer_full(w, 0)))
    ok = writer_fail(w, err, n);
  TIFFClose(w->tif);
  if (ok && !w->s.seekable)
    ok = hti_write_all(w->s.fd, w->s.mem, w->s.len, err, n);
  free(w->s.mem);
  return ok;
}

static void set_common(TIFF *tif, uint32_t width, uint32_t height, double xdpi, double ydpi, const uint8_t *icc,
                       size_t icc_len)
{
  TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, width);
  TIFFSetField(tif, TIFFTAG_IMAGELENGTH, height);
  TIFFSetField(tif, TIFFTAG_ORIENTATION, ORIENTATION_TOPLEFT);
  TIFFSetField(tif, TIFFTAG_SOFTWARE, "halftone " HT_VERSION);
  if (xdpi > 0) {
    TIFFSetField(tif, TIFFTAG_XRESOLUTION, (float)xdpi);
    TIFFSetField(tif, TIFFTAG_YRESOLUTION, (float)(ydpi > 0 ? ydpi : xdpi));
    TIFFSetField(tif, TIFFTAG_RESOLUTIONUNIT, RESUNIT_INCH);
  }
  if (icc && icc_len > 0 && icc_len <= UINT32_MAX)
    TIFFSetField(tif, TIFFTAG_ICCPROFILE, (uint32_t)icc_len, icc);
}

static uint16_t codec(hti_compression c, bool bilevel_gray)
{
  switch (c) {
  case HTI_COMPRESS_G4: return COMPRESSION_CCITTFAX4;
  case HTI_COMPRESS_LZW: return COMPRESSION_LZW;
  case HTI_COMPRESS_NONE: return COMPRESSION_NONE;
  case HTI_COMPRESS_DEFLATE: return COMPRESSION_ADOBE_DEFLATE;
  default: return bilevel_gray ? COMPRESSION_CCITTFAX4 : COMPRESSION_ADOBE_DEFLATE;
  }
}

/* Rows a strip: about 256 KiB of pixels (few strips, each large enough
 * for the codec; G4 restarts at each strip). */
static uint32_t strip_rows(size_t row_bytes, uint32_t height)
{
  size_t r = ((size_t)256 << 10) / (row_bytes ? row_bytes : 1);
  if (r < 1)
    r = 1;
  return r > height ? height : (uint32_t)r;
}

static void set_codec(TIFF *tif, uint16_t comp)
{
  TIFFSetField(tif, TIFFTAG_COMPRESSION, comp);
  if (comp == COMPRESSION_ADOBE_DEFLATE)
    TIFFSetField(tif, TIFFTAG_ZIPQUALITY, 1); /* dithered pixels are noise to zlib: effort buys little */
  if (comp == COMPRESSION_CCITTFAX4)
    TIFFSetField(tif, TIFFTAG_FILLORDER, FILLORDER_MSB2LSB);
}

/* The tags of gray or RGB(A) output, for `height` rows in strips of
 * `rows`. */
static void set_layout(TIFF *tif, const hti_out *o, uint32_t height, uint16_t comp, uint32_t rows)
{
  bool bilevel = o->depth == 1 && o->channels == 1;
  TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, (uint32_t)o->width);
  TIFFSetField(tif, TIFFTAG_IMAGELENGTH, height);
  TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, (uint16_t)o->channels);
  TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, (uint16_t)o->depth);
  TIFFSetField(tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
  /* 1-bit: our bit set = black, which is MinIsWhite's 1 */
  TIFFSetField(tif, TIFFTAG_PHOTOMETRIC,
               bilevel ? PHOTOMETRIC_MINISWHITE : o->channels >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK);
  if (o->channels == 2 || o->channels == 4) {
    uint16_t extra = EXTRASAMPLE_UNASSALPHA;
    TIFFSetField(tif, TIFFTAG_EXTRASAMPLES, 1, &extra);
  }
  set_codec(tif, comp);
  TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, rows);
}

/* Strips are coded independently (a G4 strip starts from a white line, a
 * Deflate strip is a stream of its own), so several threads code them at
 * once, G4 with our coder, the others each through a TIFF of its own in
 * memory holding that one strip, and the file gets the coded bytes as
 * they are (TIFFWriteRawStrip), in order: the same file as coding them
 * one after the other. */
typedef struct {
  const hti_out *o;
  uint16_t comp;
  uint32_t rows, first, count; /* strips [first, first + count) */
  _Atomic uint32_t next;
  uint8_t **data;
  size_t *len;
} strip_job;

static void *code_strips(void *arg)
{
  strip_job *j = arg;
  for (uint32_t i; (i = atomic_fetch_add(&j->next, 1)) < j->count;) {
    uint32_t y = (j->first + i) * j->rows, h = (uint32_t)j->o->height;
    uint32_t k = h - y < j->rows ? h - y : j->rows;
    const uint8_t *px = j->o->pixels + (size_t)y * j->o->stride;
    if (j->comp == COMPRESSION_CCITTFAX4) {
      /* into the batch slot's buffer, kept from batch to batch (fresh
       * memory for every strip costs the kernel's page faults) */
      if (!j->data[i])
        j->data[i] = malloc(hti_g4_bound((uint32_t)j->o->width, j->rows));
      j->len[i] = j->data[i] ? hti_g4_encode(px, j->o->stride, (uint32_t)j->o->width, k, j->data[i]) : 0;
      continue;
    }
    sink s;
    memset(&s, 0, sizeof s);
    s.fd = -1;
    tiff_errors e = { "" };
    TIFFOpenOptions *opts = TIFFOpenOptionsAlloc();
    if (!opts)
      continue;
    TIFFOpenOptionsSetErrorHandlerExtR(opts, on_tiff_error, &e);
    TIFFOpenOptionsSetWarningHandlerExtR(opts, on_tiff_warning, &e);
    TIFF *tif = TIFFClientOpenExt("strip", "w", (thandle_t)&s, sink_read, sink_write, sink_seek, sink_close, sink_size,
                                  sink_map, sink_unmap, opts);
    TIFFOpenOptionsFree(opts);
    if (!tif)
      continue;
    set_layout(tif, j->o, k, j->comp, k);
    /* the strip's bytes are in the sink once this returns (libtiff flushes
     * them); the directory, never written, is not needed */
    if (TIFFWriteEncodedStrip(tif, 0, (void *)(uintptr_t)px, (tmsize_t)((size_t)k * j->o->stride)) >= 0) {
      uint64_t off = TIFFGetStrileOffset(tif, 0), cnt = TIFFGetStrileByteCount(tif, 0);
      if (off <= s.len && cnt <= s.len - off && (j->data[i] = malloc(cnt ? cnt : 1)) != NULL) {
        memcpy(j->data[i], s.mem + off, cnt);
        j->len[i] = cnt;
      }
    }
    TIFFClose(tif);
    free(s.mem);
  }
  return NULL;
}

#define MAX_CODERS 16

/* One try of writing an image (an hti_out or an hti_cmyk) as classic
 * TIFF or BigTIFF (`big`) into fd from `start`; *overflow: it failed
 * because classic TIFF cannot hold the file. */
typedef bool (*tiff_try)(const void *img, int fd, bool big, off_t start, bool *overflow, char *err, size_t n);

/* Classic TIFF, and BigTIFF ("w8") only where the classic format cannot
 * hold the file (older readers cannot read BigTIFF): found while it is
 * written (each strip's coded size is known before it goes out, and
 * libtiff says so of its directory), and then written again from the
 * start as BigTIFF. The halftone is not computed again, and a file that
 * fits comes out as it always did. */
static bool classic_or_big(tiff_try attempt, const void *img, int fd, char *err, size_t n)
{
  off_t start = lseek(fd, 0, SEEK_CUR);
  bool overflow = false;
  bool ok = attempt(img, fd, false, start, &overflow, err, n);
  if (!ok && overflow)
    ok = attempt(img, fd, true, start, &overflow, err, n);
  return ok;
}

static bool write_gray(const void *img, int fd, bool big, off_t start, bool *overflow, char *err, size_t n)
{
  const hti_out *o = img;
  bool bilevel = o->depth == 1 && o->channels == 1;
  writer w;
  if (!writer_open(&w, fd, big, start, err, n))
    return false;
  TIFF *tif = w.tif;
  set_common(tif, (uint32_t)o->width, (uint32_t)o->height, o->xdpi, o->ydpi, o->icc, o->icc_len);
  uint16_t comp = codec(o->compression, bilevel);
  uint32_t rows = strip_rows(o->stride, (uint32_t)o->height), h = (uint32_t)o->height;
  set_layout(tif, o, h, comp, rows);
  uint32_t strips = (h + rows - 1) / rows;
  long cpus = o->threads > 0 ? o->threads : sysconf(_SC_NPROCESSORS_ONLN);
  int coders = comp == COMPRESSION_NONE || cpus < 2 ? 1 : cpus > MAX_CODERS ? MAX_CODERS : (int)cpus;
  if ((uint32_t)coders > strips)
    coders = (int)strips;
  bool ok = true;
  if (coders < 2 && comp != COMPRESSION_CCITTFAX4) { /* G4: our coder, below */
    for (uint32_t y = 0, s = 0; ok && y < h; y += rows, s++) {
      uint32_t k = h - y < rows ? h - y : rows;
      /* uncompressed, the strip's size is known before it is written */
      if ((comp == COMPRESSION_NONE && writer_full(&w, (uint64_t)k * o->stride)) ||
          TIFFWriteEncodedStrip(tif, s, o->pixels + (size_t)y * o->stride, (tmsize_t)((size_t)k * o->stride)) < 0 ||
          writer_full(&w, 0))
        ok = writer_fail(&w, err, n);
    }
    ok = writer_close(&w, ok, err, n);
    *overflow = w.overflow;
    return ok;
  }
  /* batches of 4 strips a thread: coded together, written in order */
  uint32_t batch = 4 * (uint32_t)coders;
  uint8_t **data = calloc(batch, sizeof *data);
  size_t *len = calloc(batch, sizeof *len);
  if (!data || !len)
    ok = hti_fail(err, n, "out of memory");
  for (uint32_t first = 0; ok && first < strips; first += batch) {
    strip_job j = { o, comp, rows, first, strips - first < batch ? strips - first : batch, 0, data, len };
    pthread_t t[MAX_CODERS];
    int started = 0;
    for (; started < coders - 1; started++)
      if (pthread_create(&t[started], NULL, code_strips, &j) != 0)
        break;
    code_strips(&j); /* this thread too; alone if no thread could start or one codes */
    for (int i = 0; i < started; i++)
      pthread_join(t[i], NULL);
    for (uint32_t i = 0; i < j.count; i++) {
      if (ok && (!data[i] || (comp == COMPRESSION_CCITTFAX4 && !len[i])))
        ok = hti_fail(err, n, "TIFF: cannot code strip %u (out of memory?)", (unsigned)(first + i));
      if (ok && (writer_full(&w, len[i]) || TIFFWriteRawStrip(tif, first + i, data[i], (tmsize_t)len[i]) < 0))
        ok = writer_fail(&w, err, n);
      if (comp != COMPRESSION_CCITTFAX4) {
        free(data[i]);
        data[i] = NULL;
      }
    }
  }
  for (uint32_t i = 0; data && i < batch; i++)
    free(data[i]);
  free(data);
  free(len);
  ok = writer_close(&w, ok, err, n);
  *overflow = w.overflow;
  return ok;
}

bool hti_write_tiff(const hti_out *o, int fd, char *err, size_t n)
{
  if (o->compression == HTI_COMPRESS_G4 && !(o->depth == 1 && o->channels == 1))
    return hti_fail(err, n, "TIFF: CCITT G4 compression holds 1-bit gray only");
  return classic_or_big(write_gray, o, fd, err, n);
}

static bool write_cmyk_try(const void *img, int fd, bool big, off_t start, bool *overflow, char *err, size_t n)
{
  const hti_cmyk *c = img;
  bool all2 = true;
  for (int p = 0; p < 4; p++)
    all2 = all2 && c->levels[p] == 2;
  int file_bits = c->depth == 1 || all2 ? 1 : 8;
  writer w;
  if (!writer_open(&w, fd, big, start, err, n))
    return false;
  TIFF *tif = w.tif;
  set_common(tif, (uint32_t)c->width, (uint32_t)c->height, c->xdpi, c->ydpi, c->icc, c->icc_len);
  TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, 4);
  TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, (uint16_t)file_bits);
  TIFFSetField(tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_SEPARATE);
  TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_SEPARATED);
  TIFFSetField(tif, TIFFTAG_INKSET, INKSET_CMYK);
  set_codec(tif, codec(c->compression, false));
  size_t row = file_bits == 1 ? ((size_t)c->width + 7) / 8 : (size_t)c->width;
  uint32_t rows = strip_rows(row, (uint32_t)c->height), h = (uint32_t)c->height;
  TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, rows);
  /* a strip's rows packed, unless the caller's rows already are */
  uint8_t *buf = malloc(row * rows);
  bool ok = buf != NULL;
  if (!ok)
    hti_fail(err, n, "out of memory");
  uint32_t strips = (h + rows - 1) / rows;
  for (int p = 0; ok && p < 4; p++)
    for (uint32_t y = 0, s = 0; ok && y < h; y += rows, s++) {
      uint32_t k = h - y < rows ? h - y : rows;
      const uint8_t *src = c->plane[p] + (size_t)y * c->stride[p];
      if (!(c->stride[p] == row && (c->depth == file_bits))) {
        for (uint32_t r = 0; r < k; r++) {
          const uint8_t *in = c->plane[p] + (size_t)(y + r) * c->stride[p];
          uint8_t *out = buf + (size_t)r * row;
          if (c->depth == file_bits) {
            memcpy(out, in, row);
          } else { /* 8-bit samples of 2 levels to bits */
            memset(out, 0, row);
            for (int64_t x = 0; x < c->width; x++)
              if (in[x] >= 128)
                out[x >> 3] |= (uint8_t)(0x80u >> (x & 7));
          }
        }
        src = buf;
      }
      bool none = c->compression == HTI_COMPRESS_NONE;
      if ((none && writer_full(&w, (uint64_t)row * k)) ||
          TIFFWriteEncodedStrip(tif, (uint32_t)p * strips + s, (void *)(uintptr_t)src, (tmsize_t)(row * k)) < 0 ||
          writer_full(&w, 0))
        ok = writer_fail(&w, err, n);
    }
  free(buf);
  ok = writer_close(&w, ok, err, n);
  *overflow = w.overflow;
  return ok;
}

/* As hti_write_tiff: BigTIFF where classic TIFF cannot hold the file. */
static bool write_cmyk(const hti_cmyk *c, int fd, char *err, size_t n)
{
  if (c->compression == HTI_COMPRESS_G4)
    return hti_fail(err, n, "TIFF: CCITT G4 compression holds 1-bit gray only, not CMYK");
  return classic_or_big(write_cmyk_try, c, fd, err, n);
}
#endif

bool hti_write_cmyk_fd(const hti_cmyk *c, int fd, char *err, size_t n)
{
#if HT_HAVE_TIFF
  return write_cmyk(c, fd, err, n);
#else
  (void)c, (void)fd;
  return hti_fail(err, n, "this build has no TIFF support (libtiff was not found)");
#endif
}

/* PNG files (libpng) for the halftone tools; see imageio.h. */
#include "imageio_priv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The bytes a PNG's pixels take in the file before compression (rows of
 * one filter byte and the packed samples, as without interlacing); 0 when
 * the header is not one to trust (libpng then says why). */
uint64_t hti_png_raw_bytes(uint64_t w, uint64_t h, int bit_depth, int color_type)
{
  static const int channels[7] = { 1, 0, 3, 1, 2, 0, 4 };
  if (w == 0 || h == 0 || w > (uint64_t)HTI_MAX_SIDE || h > (uint64_t)HTI_MAX_SIDE || color_type < 0 ||
      color_type > 6 || channels[color_type] == 0 || bit_depth < 1 || bit_depth > 16)
    return 0;
  return h * ((w * (uint64_t)channels[color_type] * (uint64_t)bit_depth + 7) / 8 + 1);
}

#if HT_HAVE_PNG
#include <png.h>
#include <setjmp.h>

typedef struct {
  jmp_buf jmp;
  char *err;
  size_t err_size;
  const uint8_t *data;
  size_t len, pos;
  uint8_t *out;      /* decoded pixels  */
  png_bytep *rows;   /* row pointers into out */
} png_io;

static void png_fail(png_structp png, png_const_charp msg)
{
  png_io *io = png_get_error_ptr(png);
  hti_fail(io->err, io->err_size, "PNG: %s", msg);
  longjmp(io->jmp, 1);
}

static void png_warn(png_structp png, png_const_charp msg) { (void)png; (void)msg; }

static void png_read_mem(png_structp png, png_bytep out, size_t count)
{
  png_io *io = png_get_io_ptr(png);
  if (io->len - io->pos < count)
    png_error(png, "truncated file");
  memcpy(out, io->data + io->pos, count);
  io->pos += count;
}

bool hti_decode_png(const uint8_t *data, size_t len, hti_image *img, char *err, size_t n)
{
  /* On the heap: what changes between setjmp and a longjmp must not live
   * in this function's automatic variables. */
  png_io *io = calloc(1, sizeof *io);
  if (!io)
    return hti_fail(err, n, "out of memory");
  io->err = err;
  io->err_size = n;
  io->data = data;
  io->len = len;
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, io, png_fail, png_warn);
  png_infop info = png ? png_create_info_struct(png) : NULL;
  if (!info) {
    png_destroy_read_struct(&png, NULL, NULL);
    free(io);
    return hti_fail(err, n, "out of memory");
  }
  if (setjmp(io->jmp)) {
    free(io->rows);
    free(io->out);
    png_destroy_read_struct(&png, &info, NULL);
    free(io);
    return false;
  }
  png_set_read_fn(png, io, png_read_mem);
  /* libpng's own bounds: the sides the library takes (its default stops
   * at 10^6), and what one ancillary chunk may allocate */
  png_set_user_limits(png, (png_uint_32)HTI_MAX_SIDE, (png_uint_32)HTI_MAX_SIDE);
  png_set_chunk_malloc_max(png, 8 << 20);
  png_read_info(png, info);
  png_uint_32 w = png_get_image_width(png, info), h = png_get_image_height(png, info);
  if ((int64_t)w > HTI_MAX_SIDE || (int64_t)h > HTI_MAX_SIDE)
    png_error(png, "image is too large");
  int ct = png_get_color_type(png, info), bd = png_get_bit_depth(png, info);
  /* Deflate packs at most 1032 bytes into one (runs of 258 bytes in two
   * bits), so what is left of the file bounds the pixels it can hold: a
   * header that declares more is cut off, said before any allocation. */
  uint64_t raw = hti_png_raw_bytes(w, h, bd, ct), left = len - io->pos;
  if (raw / 1032 > left + 64) {
    hti_fail(err, n, "truncated: a %lux%lu PNG needs at least %llu bytes of compressed pixel data, the file has %llu",
         (unsigned long)w, (unsigned long)h, (unsigned long long)(raw / 1032), (unsigned long long)left);
    longjmp(io->jmp, 1);
  }
  /* Stored values as they are (no gamma conversion): the halftone
   * reproduces the file's tones, as for netpbm input. */
  if (ct == PNG_COLOR_TYPE_PALETTE)
    png_set_palette_to_rgb(png);
  if (ct == PNG_COLOR_TYPE_GRAY && bd < 8)
    png_set_expand_gray_1_2_4_to_8(png);
  if (png_get_valid(png, info, PNG_INFO_tRNS))
    png_set_tRNS_to_alpha(png);
  if (bd == 16 && hti_little_endian())
    png_set_swap(png);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  int channels = png_get_channels(png, info), depth = png_get_bit_depth(png, info);
  ct = png_get_color_type(png, info);
  size_t rb = png_get_rowbytes(png, info), total;
  if (!hti_mul_size(rb, h, &total))
    png_error(png, "image is too large");
  if (!hti_fits_memory((uint64_t)total + (uint64_t)h * sizeof *io->rows, len, w, h, err, n))
    longjmp(io->jmp, 1);
  io->out = malloc(total ? total : 1);
  io->rows = malloc((size_t)h * sizeof *io->rows);
  if (!io->out || !io->rows)
    png_error(png, "out of memory");
  for (png_uint_32 y = 0; y < h; y++)
    io->rows[y] = io->out + (size_t)y * rb;
  png_read_image(png, io->rows);
  png_read_end(png, NULL);
  /* resolution in pixels a metre, kept in dpi */
  png_uint_32 rx = 0, ry = 0;
  int unit = 0;
  if (png_get_pHYs(png, info, &rx, &ry, &unit) && unit == PNG_RESOLUTION_METER && rx > 0) {
    /* to 1/100 dpi: 300 dpi is stored as 11811 pixels a metre */
    img->xdpi = round(rx * 2.54) / 100;
    img->ydpi = round((ry > 0 ? ry : rx) * 2.54) / 100;
  }
  png_charp icc_name = NULL;
  png_bytep icc = NULL;
  png_uint_32 icc_len = 0;
  int icc_comp = 0;
  if (png_get_iCCP(png, info, &icc_name, &icc_comp, &icc, &icc_len) && icc && icc_len > 0 &&
      (img->icc = malloc(icc_len)) != NULL) {
    memcpy(img->icc, icc, icc_len);
    img->icc_len = icc_len;
  }
  png_destroy_read_struct(&png, &info, NULL);

  free(img->buf);
  img->buf = io->out;
  img->pixels = io->out;
  img->width = w;
  img->height = h;
  img->channels = channels;
  img->has_alpha = (ct & PNG_COLOR_MASK_ALPHA) != 0;
  img->depth = depth;
  img->stride = rb;
  static const char *const names[2][4] = {
    { "PNG (gray, 8-bit)", "PNG (gray+alpha, 8-bit)", "PNG (RGB, 8-bit)", "PNG (RGBA, 8-bit)" },
    { "PNG (gray, 16-bit)", "PNG (gray+alpha, 16-bit)", "PNG (RGB, 16-bit)", "PNG (RGBA, 16-bit)" },
  };
  img->format = names[depth == 16][channels - 1];
  free(io->rows);
  free(io);
  return true;
}

/* libpng writes through write_all into the temporary file's descriptor,
 * so that a failing write reports the system's reason ("No space left on
 * device") instead of libpng's "Write Error". */
typedef struct {
  png_io io; /* first: png_fail finds the error buffer and jmp_buf there */
  int fd;
  size_t used;
  uint8_t buf[1 << 18]; /* fewer, larger write() calls than libpng's 8 KiB */
} png_sink;

static void png_sink_write(png_structp png, png_bytep data, size_t len)
{
  png_sink *s = png_get_io_ptr(png);
  if (len > sizeof s->buf - s->used) {
    if (!hti_write_all(s->fd, s->buf, s->used, s->io.err, s->io.err_size))
      longjmp(s->io.jmp, 1);
    s->used = 0;
  }
  if (len > sizeof s->buf) {
    if (!hti_write_all(s->fd, data, len, s->io.err, s->io.err_size))
      longjmp(s->io.jmp, 1);
    return;
  }
  memcpy(s->buf + s->used, data, len);
  s->used += len;
}

static void png_sink_flush(png_structp png) { (void)png; }

bool hti_write_png(const hti_out *o, int fd, char *err, size_t n)
{
  /* On the heap: the buffer is large, and what changes between setjmp
   * and a longjmp must not live in this function's automatic variables. */
  png_sink *s = malloc(sizeof *s);
  if (!s)
    return hti_fail(err, n, "out of memory");
  memset(&s->io, 0, sizeof s->io);
  s->io.err = err;
  s->io.err_size = n;
  s->fd = fd;
  s->used = 0;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &s->io, png_fail, png_warn);
  png_infop info = png ? png_create_info_struct(png) : NULL;
  if (!info) {
    png_destroy_write_struct(&png, NULL);
    free(s);
    return hti_fail(err, n, "out of memory");
  }
  if (setjmp(s->io.jmp)) {
    png_destroy_write_struct(&png, &info);
    free(s);
    return false;
  }
  png_set_write_fn(png, s, png_sink_write, png_sink_flush);
  static const int types[] = { PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB,
                               PNG_COLOR_TYPE_RGB_ALPHA };
  png_set_IHDR(png, info, (png_uint_32)o->width, (png_uint_32)o->height, o->depth,
               types[o->channels - 1], PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  /* Dithered pixels are noise to zlib: row filters and harder effort
   * cost time and gain a few per cent of size at most. */
  if (o->depth == 1)
    png_set_filter(png, 0, PNG_FILTER_NONE);
  png_set_compression_level(png, 1);
  if (o->xdpi > 0) /* pixels a metre */
    png_set_pHYs(png, info, (png_uint_32)(o->xdpi / 0.0254 + 0.5),
                 (png_uint_32)((o->ydpi > 0 ? o->ydpi : o->xdpi) / 0.0254 + 0.5), PNG_RESOLUTION_METER);
  /* The profile goes out as it came in: libpng would refuse some
   * widespread sRGB profiles it knows to be slightly off (the bundled
   * sample carries one), which is no reason to fail a run. */
#ifdef PNG_SKIP_sRGB_CHECK_PROFILE
  png_set_option(png, PNG_SKIP_sRGB_CHECK_PROFILE, PNG_OPTION_ON);
#endif
  if (o->icc && o->icc_len > 0 && o->icc_len <= 0xFFFFFFFFu)
    png_set_iCCP(png, info, "ICC profile", PNG_COMPRESSION_TYPE_BASE, o->icc, (png_uint_32)o->icc_len);
  png_write_info(png, info);
  if (o->depth == 1)
    png_set_invert_mono(png); /* our bit set = black; PNG's 1 = white */
  if (o->depth == 16 && hti_little_endian())
    png_set_swap(png);
  for (int64_t y = 0; y < o->height; y++)
    png_write_row(png, o->pixels + (size_t)y * o->stride);
  png_write_end(png, NULL);
  png_destroy_write_struct(&png, &info);
  bool ok = hti_write_all(fd, s->buf, s->used, err, n);
  free(s);
  return ok;
}
#endif

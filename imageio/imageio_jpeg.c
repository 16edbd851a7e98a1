/* JPEG input (libjpeg-turbo) for the halftone tools; see imageio.h.
 *
 * Gray and colour (YCbCr, RGB) JPEGs decode to 8-bit gray and RGB with
 * libjpeg's defaults (integer DCT, smooth upsampling), the pixels that
 * djpeg gives. CMYK and YCCK JPEGs decode to CMYK ink amounts; those with
 * an Adobe marker (Photoshop and the prepress tools after it) store the
 * inks inverted (0 = full ink), which is undone here.
 *
 * A corrupt or truncated file is refused, not decoded to gray blocks as
 * libjpeg's warnings would let it be; a header that declares more than
 * the file can hold (baseline Huffman coding spends at least 2 bits a
 * block) or the memory budget allows is refused before any allocation.
 * Arithmetic coding and a progressive file's scans can spend less than a
 * bit a block (127 bytes declare 65500x65500), so for them the budget's
 * bound on what a small file may claim is the check.
 */
#include "imageio_priv.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if HT_HAVE_JPEG
#include <jerror.h>
#include <jpeglib.h>
#include <setjmp.h>

typedef struct {
  struct jpeg_error_mgr mgr; /* first: libjpeg's pointer is to it */
  jmp_buf jmp;
  char *err;
  size_t err_size;
} jpeg_err;

static void jpeg_fail(j_common_ptr cinfo)
{
  jpeg_err *e = (jpeg_err *)(void *)cinfo->err;
  char msg[JMSG_LENGTH_MAX];
  cinfo->err->format_message(cinfo, msg);
  hti_fail(e->err, e->err_size, "JPEG: %s", msg);
  longjmp(e->jmp, 1);
}

/* Warnings (level -1) say the data is corrupt: libjpeg would go on and
 * fill the rest with gray; the tools refuse the file instead. Stray bytes
 * between markers are the one harmless case. */
static void jpeg_message(j_common_ptr cinfo, int level)
{
  if (level < 0 && cinfo->err->msg_code != JWRN_EXTRANEOUS_DATA)
    jpeg_fail(cinfo);
}

/* What changes between setjmp and longjmp lives here, not in automatic
 * variables. */
typedef struct {
  struct jpeg_decompress_struct cinfo;
  jpeg_err err;
  uint8_t *out;
  uint8_t *icc;
  size_t icc_len;
} jpeg_state;

bool hti_decode_jpeg(const uint8_t *data, size_t len, hti_image *img, char *err, size_t n)
{
  jpeg_state *st = calloc(1, sizeof *st);
  if (!st)
    return hti_fail(err, n, "out of memory");
  st->err.err = err;
  st->err.err_size = n;
  st->cinfo.err = jpeg_std_error(&st->err.mgr);
  st->err.mgr.error_exit = jpeg_fail;
  st->err.mgr.emit_message = jpeg_message;
  if (setjmp(st->err.jmp)) {
    jpeg_destroy_decompress(&st->cinfo);
    free(st->out);
    free(st->icc);
    free(st);
    return false;
  }
  j_decompress_ptr ci = &st->cinfo;
  jpeg_create_decompress(ci);
  /* libjpeg's own cap on what it allocates (it has no backing store) */
  uint64_t limit = hti_memory_limit(len);
  ci->mem->max_memory_to_use = limit > (uint64_t)LONG_MAX ? LONG_MAX : (long)limit;
  jpeg_mem_src(ci, data, (unsigned long)len);
  jpeg_save_markers(ci, JPEG_APP0 + 2, 0xFFFF); /* ICC profile chunks */
  jpeg_read_header(ci, TRUE);
  uint64_t w = ci->image_width, h = ci->image_height;
  if (w == 0 || h == 0 || w > (uint64_t)HTI_MAX_SIDE || h > (uint64_t)HTI_MAX_SIDE)
    ERREXIT(ci, JERR_EMPTY_IMAGE);
  bool cmyk = ci->jpeg_color_space == JCS_CMYK || ci->jpeg_color_space == JCS_YCCK;
  if (ci->num_components == 1)
    ci->out_color_space = JCS_GRAYSCALE;
  else if (cmyk)
    ci->out_color_space = JCS_CMYK;
  else if (ci->num_components == 3)
    ci->out_color_space = JCS_RGB;
  else {
    hti_fail(err, n, "unsupported JPEG: %d colour components", ci->num_components);
    longjmp(st->err.jmp, 1);
  }
  /* blocks of the whole image, over every component */
  uint64_t blocks = 0;
  for (int c = 0; c < ci->num_components; c++)
    blocks += (uint64_t)ci->comp_info[c].width_in_blocks * ci->comp_info[c].height_in_blocks;
  if (!ci->progressive_mode && !ci->arith_code && blocks / 4 > len) {
    hti_fail(err, n, "truncated: a %llux%llu JPEG needs at least %llu bytes of data, the file has %zu",
             (unsigned long long)w, (unsigned long long)h, (unsigned long long)(blocks / 4), len);
    longjmp(st->err.jmp, 1);
  }
  int channels = cmyk ? 4 : ci->num_components == 1 ? 1 : 3;
  /* the pixels, and a progressive file's coefficients (2 bytes a sample
   * of every block, held until the last scan) */
  uint64_t bytes = w * h * (uint64_t)channels, coefs = ci->progressive_mode ? blocks * 128 : 0;
  if (!hti_fits_memory(bytes + coefs, len, w, h, err, n))
    longjmp(st->err.jmp, 1);
  jpeg_start_decompress(ci);
  size_t stride = (size_t)w * (size_t)channels;
  st->out = malloc((size_t)bytes);
  if (!st->out) {
    hti_fail(err, n, "out of memory (%llu bytes)", (unsigned long long)bytes);
    longjmp(st->err.jmp, 1);
  }
  while (ci->output_scanline < ci->output_height) {
    JSAMPROW row = st->out + (size_t)ci->output_scanline * stride;
    jpeg_read_scanlines(ci, &row, 1);
  }
  if (cmyk && ci->saw_Adobe_marker)
    for (size_t i = 0; i < (size_t)bytes; i++)
      st->out[i] = (uint8_t)(255 - st->out[i]);
  JOCTET *icc = NULL;
  unsigned int icc_len = 0;
  if (jpeg_read_icc_profile(ci, &icc, &icc_len) && icc && icc_len > 0) {
    st->icc = icc; /* malloc'ed by libjpeg: free() */
    st->icc_len = icc_len;
  }
  if (ci->saw_JFIF_marker && (ci->density_unit == 1 || ci->density_unit == 2) && ci->X_density > 0) {
    double f = ci->density_unit == 2 ? 2.54 : 1.0;
    img->xdpi = ci->X_density * f;
    img->ydpi = (ci->Y_density > 0 ? ci->Y_density : ci->X_density) * f;
  }
  jpeg_finish_decompress(ci);
  jpeg_destroy_decompress(ci);

  free(img->buf);
  img->buf = st->out;
  img->pixels = st->out;
  img->icc = st->icc;
  img->icc_len = st->icc_len;
  img->width = (int64_t)w;
  img->height = (int64_t)h;
  img->channels = channels;
  img->cmyk = cmyk;
  img->depth = 8;
  img->stride = stride;
  img->format = cmyk ? (ci->saw_Adobe_marker ? "JPEG (CMYK, Adobe inverted)" : "JPEG (CMYK)")
                : channels == 1 ? "JPEG (gray)" : "JPEG (colour)";
  free(st);
  return true;
}
#endif

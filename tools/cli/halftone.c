/* halftone: the command-line front end of libhalftone.
 *
 *   halftone [OPTIONS] INPUT OUTPUT
 *
 * Exit status: 0 success, 1 failure (file, image, GPU), 2 usage error.
 * Every failure prints one line "halftone: ..." on stderr and leaves no
 * output file behind: the output is claimed before the input is read
 * (imageio's hti_dest_open: not the input itself, not read-only, its
 * folder takes a new file), written to a temporary file made only once
 * the image is computed (hti_out_write: a SIGKILL while the input is
 * read leaves nothing) and renamed over the destination only as the very last step, after
 * everything that can still fail (stdout included). The plates of
 * --separations are claimed before the work too, and renamed into place
 * together with the output once all of them are written. Every signal
 * that ends the process and can be caught (SIGINT, SIGTERM, SIGHUP,
 * SIGQUIT, SIGUSR1, ..., SIGBUS from a truncated mapped input) removes
 * the temporary files and says so (hti_signals).
 *
 * The common case, an 8-bit PGM to a PBM, is kept copy-free: the input is
 * mapped and handed to ht_run in place, the 1-bit result is rendered
 * straight into the output file's buffer, which goes out in one write.
 */
#include "halftone-cli.h"
#include "imageio.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <math.h>
#include <unistd.h>

/* The 8-bit plane the library dithered: the luma plane (plane -1) or
 * one channel. Points into the input when it already is that, else fills
 * *owned. */
static const uint8_t *input_plane(const hti_image *im, int plane, uint8_t **owned, size_t *stride)
{
  if (plane >= 0 && im->depth == 8 && im->channels == 1) {
    *stride = im->stride;
    return im->pixels;
  }
  *owned = hti_gray8(im, plane);
  *stride = (size_t)im->width;
  return *owned;
}

/* Plane `plane` of the rendered result as 8-bit gray. */
static uint8_t *result_plane(const ht_image *out, int plane)
{
  size_t w = (size_t)out->width;
  uint8_t *p = malloc(w * (size_t)out->height);
  if (!p)
    return NULL;
  for (int64_t y = 0; y < out->height; y++) {
    const uint8_t *row = (const uint8_t *)out->data + (size_t)y * out->stride;
    uint8_t *d = p + (size_t)y * w;
    for (size_t x = 0; x < w; x++) {
      size_t i = x * (size_t)out->channels + (size_t)plane;
      if (out->format == HT_FORMAT_BIT1) {
        d[x] = (row[x >> 3] >> (7 - (x & 7))) & 1 ? 0 : 255;
      } else if (out->format == HT_FORMAT_U16) {
        uint16_t v;
        memcpy(&v, row + 2 * i, 2);
        d[x] = (uint8_t)((v + 128) / 257);
      } else {
        d[x] = row[i];
      }
    }
  }
  return p;
}

static double now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The progress line on a terminal: shown once a run has taken half a
 * second (a quick one stays silent), redrawn when the percentage
 * changes, ended with a carriage return so that whatever is printed next
 * (an error, the signal handler's line) starts at the left edge. */
typedef struct {
  const char *what; /* the algorithm's name */
  double start_ms;
  int shown;        /* the percentage on screen, -1 for none */
} progress_line;

static bool progress_cb(double fraction, void *user)
{
  progress_line *p = user;
  int pct = (int)(fraction * 100.0);
  pct = pct < 0 ? 0 : pct > 100 ? 100 : pct;
  if (pct != p->shown && now_ms() - p->start_ms >= 500.0) {
    char line[128];
    int n = snprintf(line, sizeof line, "halftone: %s: %3d%%\r", p->what, pct);
    if (n > 0 && write(STDERR_FILENO, line, (size_t)n) == n)
      p->shown = pct;
  }
  return true;
}

static void progress_clear(progress_line *p)
{
  static const char clear[] = "\r\033[K";
  if (p->shown >= 0 && write(STDERR_FILENO, clear, sizeof clear - 1) < 0)
    p->shown = -1; /* nothing else to do: the terminal is gone */
  p->shown = -1;
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* --separations PREFIX: each plane of the result as PREFIX-NAME.pbm (2
 * levels) or .pgm, dark where the plane is 0 (RGB) or has ink (cmyk).
 * The plates are claimed before the work (open_separations), written to
 * their temporary files after it (write_separations) and renamed into
 * place together with OUTPUT only once every file is complete
 * (hti_dest_commit): a failure or an interruption leaves no new plate
 * and no mixed set of new and old ones. */
typedef struct {
  int count;
  char path[4][4096];
  hti_dest dest[4];
} separations;

static bool plate_bits(const options *o, int p)
{
  const int L = o->params.plane_levels[p] ? o->params.plane_levels[p] : o->levels;
  return L == 2;
}

static bool open_separations(const options *o, int planes, bool cmyk, separations *sp, char *err, size_t n)
{
  static const char *const rgb[4] = { "r", "g", "b", "a" }, *const inks[4] = { "c", "m", "y", "k" };
  for (int p = 0; p < planes; p++) {
    char *path = sp->path[p];
    if (snprintf(path, sizeof sp->path[p], "%s-%s.%s", o->separations, cmyk ? inks[p] : rgb[p],
                 plate_bits(o, p) ? "pbm" : "pgm") >= (int)sizeof sp->path[p]) {
      snprintf(err, n, "--separations: the name is too long");
      return false;
    }
    char why[512];
    if (!hti_dest_open(&sp->dest[p], path, o->input, o->force, why, sizeof why)) {
      snprintf(err, n, "%.300s: %.200s", path, why);
      return false;
    }
    sp->dest[p].defer = true;
    sp->count = p + 1;
  }
  return true;
}

static bool write_separations(const ht_image *res, const options *o, bool cmyk, separations *sp, char *err,
                              size_t n)
{
  for (int p = 0; p < sp->count; p++) {
    const bool bits = plate_bits(o, p);
    const char *path = sp->path[p];
    hti_out so;
    char why[512];
    if (!hti_out_init(&so, bits ? HTI_PBM : HTI_PGM, res->width, res->height, 1, bits ? 1 : 8, why, sizeof why)) {
      snprintf(err, n, "%.300s: %.200s", path, why);
      return false;
    }
    for (int64_t y = 0; y < res->height; y++) {
      const uint8_t *src = (const uint8_t *)res->data + (size_t)y * res->stride;
      uint8_t *dst = so.pixels + (size_t)y * so.stride;
      if (bits)
        memset(dst, 0, ((size_t)res->width + 7) / 8);
      for (int64_t x = 0; x < res->width; x++) {
        const uint8_t v = src[(size_t)x * (size_t)res->channels + (size_t)p];
        const uint8_t gray = cmyk ? (uint8_t)(255 - v) : v; /* ink is dark */
        if (bits)
          dst[x >> 3] |= (uint8_t)(gray < 128 ? 0x80 >> (x & 7) : 0); /* PBM: set = black */
        else
          dst[x] = gray;
      }
    }
    const bool ok = hti_out_write(&so, &sp->dest[p], why, sizeof why);
    hti_out_free(&so);
    if (!ok) {
      snprintf(err, n, "%.300s: %.200s", path, why);
      return false;
    }
  }
  return true;
}

/* OUTPUT and its plates into place together; false with the message
 * said. */
static bool commit_all(const options *o, hti_dest *dest, separations *sp)
{
  hti_dest *set[5] = { dest };
  const char *names[5] = { o->output };
  for (int p = 0; p < sp->count; p++) {
    set[1 + p] = &sp->dest[p];
    names[1 + p] = sp->path[p];
  }
  char err[512];
  int done = hti_dest_commit(set, 1 + sp->count, err, sizeof err);
  if (done == 1 + sp->count)
    return true;
  say("%s: %s%s", names[done], err, done > 0 ? "; the files before it in the set are in place, it and those "
                                               "after it are not" : "; no file of the set was replaced");
  return false;
}

/* --write-mask FILE: the blue-noise mask of --noise-size and --seed (the
 * one --algorithm blue-noise dithers with, from the same cache) as 16-bit
 * gray, rank r of n = side^2 as r * 65535 / (n - 1) rounded down: the
 * values keep the ranks' order, distinct up to 256^2 (above it, ranks
 * share a value, n / 65536 each), so that the pixels below a value are
 * the point set of one level. Written as every output is: claimed first,
 * into a temporary file, renamed. Returns the exit status. */
static int write_mask(const options *o)
{
  /* what else was asked for has no place in a mask */
  const unsigned allowed = GIVEN(HT_PARAM_NOISE_SIZE) | GIVEN(HT_PARAM_SEED) | GIVEN(HT_PARAM_ALGORITHM);
  for (int id = 0; id < HT_PARAM_COUNT; id++)
    if ((o->given & ~allowed) & GIVEN(id))
      return usage_error("--write-mask takes --noise-size and --seed only, not --%s",
                         ht_param_info((ht_param_id)id)->option ? ht_param_info((ht_param_id)id)->option
                                                                : ht_param_info((ht_param_id)id)->name);
  if (o->algorithm && strcmp(o->algorithm, "blue-noise") != 0)
    return usage_error("--write-mask writes the blue-noise mask; --algorithm %s has none", o->algorithm);
  if (o->metrics || o->bench || o->separations || o->compression >= 0 || o->variant != HT_VARIANT_AUTO)
    return usage_error("--write-mask writes the mask alone; --metrics, --bench, --separations, --compression and "
                       "--variant go with halftoning");
  const int side = o->params.noise_size;
  const bool to_stdout = hti_is_stdout(o->write_mask);
  int kind = hti_kind_from_path(o->write_mask);
  if (kind != HTI_NULL && o->format >= 0)
    kind = o->format;
  const hti_format *fmt = kind >= 0 ? hti_format_of((hti_kind)kind) : NULL;
  if (!fmt || !hti_format_writes(fmt, 1, 16))
    return usage_error("%s: a mask is 16-bit gray; the name must end in .png, .pgm or .tif (or give --format png, "
                       "pgm or tiff)", o->write_mask);
  if (!fmt->built) {
    char why[128];
    hti_format_missing(fmt, why, sizeof why);
    return usage_error("%s: %s", o->write_mask, why);
  }

  char err[512];
  hti_dest dest;
  if (!hti_dest_open(&dest, to_stdout ? "-" : o->write_mask, NULL, o->force, err, sizeof err)) {
    say("%s: %s", o->write_mask, err);
    return 1;
  }
  const size_t cells = (size_t)side * (size_t)side;
  uint32_t *rank = malloc(cells * sizeof *rank);
  hti_out out;
  memset(&out, 0, sizeof out);
  int rc = 1;
  if (!rank) {
    say("out of memory");
    goto done;
  }
  if (ht_blue_noise_mask(side, o->params.seed, true, rank, err, sizeof err) != HT_OK) {
    say("%s", err);
    goto done;
  }
  if (!hti_out_init(&out, (hti_kind)kind, side, side, 1, 16, err, sizeof err)) {
    say("%s: %s", o->write_mask, err);
    goto done;
  }
  for (int y = 0; y < side; y++) {
    uint8_t *row = out.pixels + (size_t)y * out.stride;
    for (int x = 0; x < side; x++) {
      const uint64_t r = rank[(size_t)y * (size_t)side + (size_t)x];
      const uint16_t v = (uint16_t)(r * 65535u / (cells - 1));
      memcpy(row + 2 * (size_t)x, &v, 2); /* native-endian: hti_out's 16-bit rows */
    }
  }
  if (!hti_out_write(&out, &dest, err, sizeof err)) {
    say("%s: %s", o->write_mask, err);
    goto done;
  }
  rc = 0;
done:
  hti_dest_close(&dest);
  hti_out_free(&out);
  free(rank);
  return rc;
}

int main(int argc, char **argv)
{
  hti_std_fds();
  hti_signals("halftone");
  options o;
  int rc = parse_args(argc, argv, &o);
  if (rc >= 0)
    return rc;
  if (o.write_mask)
    return write_mask(&o);

  /* --- everything that can be checked before touching any file */
  notices notes = { .count = 0 };
  ht_params params;
  ht_context *ctx = NULL;
  rc = setup(&o, &params, &ctx, &notes);
  if (rc >= 0)
    return rc;
  /* "-", or /dev/stdout and the like where standard output is a pipe */
  bool to_stdout = hti_is_stdout(o.output);
  int kind = hti_kind_from_path(o.output);
  if (kind != HTI_NULL && o.format >= 0)
    kind = o.format;
  if (kind < 0 && to_stdout)
    return quit(ctx, usage_error("OUTPUT %s (standard output) needs --format %s", o.output, format_names_or()));
  if (kind < 0) {
    char endings[128];
    format_list(endings, sizeof endings, FORMATS_WRITTEN, FORMAT_EXTENSIONS, " or ");
    return quit(ctx, usage_error("%s: unknown output type; the name must end in %s (or be /dev/null), or give "
                                 "--format", o.output, endings));
  }
  /* imageio's row for it: what it holds, whether this build has it */
  const hti_format *fmt = hti_format_of((hti_kind)kind);
  /* a format of every layout (alpha kept; 1, 8 or 16 bits): PNG, TIFF,
   * and the null device, which takes whatever PNG would */
  bool png_like = hti_format_writes(fmt, 4, 16);
  if (o.compression >= 0 && !fmt->compression && kind != HTI_NULL) {
    char compressed[64];
    format_list(compressed, sizeof compressed, FORMATS_COMPRESSED, FORMAT_LABEL, " or ");
    return quit(ctx, usage_error("--compression is for %s output, and %s is %s", compressed, o.output,
                                 fmt->label));
  }
  if (!fmt->built) {
    char why[128];
    hti_format_missing(fmt, why, sizeof why);
    return quit(ctx, usage_error("%s: %s", o.output, why));
  }
  if (kind == HTI_PBM && o.nplane_levels > 0)
    return quit(ctx, usage_error("%s: PBM holds one plane; per-plane --levels need .ppm or .png", o.output));
  if (kind == HTI_PBM && o.levels != 2)
    return quit(ctx, usage_error("%s: PBM holds 2 levels only; use .pgm or .png for --levels %d", o.output,
                                 o.levels));

  char err[512];
  hti_dest dest;
  if (!hti_dest_open(&dest, to_stdout ? "-" : o.output, o.input, o.force, err, sizeof err)) {
    say("%s: %s", o.output, err);
    return quit(ctx, 1);
  }
  /* the image goes to standard output on a descriptor of its own; what
   * the run prints goes to stderr, not into the image */
  if (dest.to_stdout && dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    say("cannot redirect the printed output to stderr: %s", strerror(errno));
    hti_dest_close(&dest);
    return quit(ctx, 1);
  }

  /* --- input, within the memory budget (--max-memory) */
  hti_set_memory_limit(o.max_memory);
  hti_image im;
  if (!hti_read(o.input, &im, err, sizeof err)) {
    say("%s: %s", strcmp(o.input, "-") == 0 ? "standard input" : o.input, err);
    hti_dest_close(&dest);
    return quit(ctx, 1);
  }
  const char *in_name = strcmp(o.input, "-") == 0 ? "standard input" : o.input;
  if (im.pages > 1)
    notice_add(&notes, "%s: a TIFF of %d pages; the first is halftoned", in_name, im.pages);
  if (im.note)
    notice_add(&notes, "%s: %s", in_name, im.note);
  if (im.cmyk) {
    if (!hti_cmyk_to_rgb(&im, err, sizeof err)) {
      say("%s: %s", in_name, err);
      hti_release(&im);
      hti_dest_close(&dest);
      return quit(ctx, 1);
    }
    notice_add(&notes, "%s: CMYK converted to RGB by R = (1-C)(1-K) etc. (no colour management)", in_name);
  }
  /* plane-dependent colour writes what per-channel does; cmyk halftones
   * four ink planes (`inks`) and writes them as a CMYK TIFF, or an RGB
   * rendering of them to other files (docs/color.md) */
  ht_params shape = params;
  shape.alpha = im.has_alpha;
  ht_layout layout;
  if (ht_output_layout(&shape, im.channels, false, &layout) != HT_OK) {
    hti_release(&im);
    hti_dest_close(&dest);
    return quit(ctx, usage_error("%s: %s", in_name, layout.why));
  }
  const bool cmyk = layout.inks;
  const bool per_channel = layout.planes >= 3;
  const int planes = layout.planes;
  uint8_t *inks = NULL;
  rc = 1;

  /* --- output layout */
  const char *mode = ht_choice_by_value(HT_LIST_COLOR_MODES, (int)o.color)->name;
  if (o.nplane_levels > 0 && o.nplane_levels != planes) {
    hti_release(&im);
    hti_dest_close(&dest);
    if (cmyk) /* the planes are the inks, whatever the input has */
      return quit(ctx, usage_error("--levels gives %d values, one per colour plane, but --color cmyk has %d ink "
                                   "planes (C, M, Y, K)", o.nplane_levels, planes));
    return quit(ctx, usage_error("--levels gives %d values, one per colour plane, but %s has %d colour channel%s",
                                 o.nplane_levels, in_name, planes, planes == 1 ? "" : "s"));
  }
  if (per_channel && (kind == HTI_PBM || kind == HTI_PGM)) {
    hti_release(&im);
    hti_dest_close(&dest);
    if (cmyk)
      return quit(ctx, usage_error("%s: --color cmyk gives four ink planes; write .tif (a CMYK TIFF) or .ppm or .png "
                                   "(their RGB rendering)", o.output));
    return quit(ctx, usage_error("%s: --color %s on colour input gives RGB; write .ppm or .png", o.output, mode));
  }
  if (kind == HTI_PPM && !cmyk && planes != 3) {
    hti_release(&im);
    hti_dest_close(&dest);
    return quit(ctx, usage_error("%s: PPM output is for --color per-channel on colour input; write .pgm, .pbm or .png",
                                 o.output));
  }
  bool keep_alpha = im.has_alpha && png_like && !cmyk;
  int file_channels = (cmyk ? 3 : planes) + (keep_alpha ? 1 : 0);
  int depth;
  if (cmyk)
    depth = 8; /* the RGB rendering of the inks */
  else if (kind == HTI_PBM || (png_like && planes == 1 && !keep_alpha && o.levels == 2))
    depth = 1;
  else if (png_like && keep_alpha && im.depth == 16)
    depth = 16; /* a 16-bit alpha channel keeps its precision */
  else
    depth = 8;
  if (im.has_alpha && !keep_alpha && !cmyk) /* cmyk's own notice below */
    notice_add(&notes, "%s: %s has no alpha channel; the input's alpha is dropped", o.output,
               hti_kind_name((hti_kind)kind));

  if (fmt->compression && o.compression == HTI_COMPRESS_G4 && !(depth == 1 && file_channels == 1)) {
    hti_release(&im);
    hti_dest_close(&dest);
    return quit(ctx, usage_error("%s: --compression g4 holds 1-bit gray only (2 levels, one plane, no alpha)",
                                 o.output));
  }

  /* the plates of --separations, claimed before the work like OUTPUT,
   * and put in place together with it */
  separations plates = { .count = 0 };
  if (o.separations) {
    if (!open_separations(&o, planes, cmyk, &plates, err, sizeof err)) {
      say("%s", err);
      for (int p = 0; p < plates.count; p++)
        hti_dest_close(&plates.dest[p]);
      hti_release(&im);
      hti_dest_close(&dest);
      return quit(ctx, 1);
    }
    dest.defer = true;
  }

  hti_out out;
  if (!hti_out_init(&out, (hti_kind)kind, im.width, im.height, file_channels, depth, err, sizeof err)) {
    say("%s: %s", o.output, err);
    for (int p = 0; p < plates.count; p++)
      hti_dest_close(&plates.dest[p]);
    hti_release(&im);
    hti_dest_close(&dest);
    return quit(ctx, 1);
  }
  /* resolution and ICC profile, where the output holds them */
  bool holds_meta = fmt->metadata;
  out.xdpi = o.dpi > 0 ? o.dpi : im.xdpi;
  out.ydpi = o.dpi > 0 ? o.dpi : im.ydpi;
  out.compression = o.compression >= 0 ? (hti_compression)o.compression : HTI_COMPRESS_AUTO;
  out.threads = o.threads; /* --threads bounds the TIFF coders too */
  if (o.dpi > 0 && !holds_meta && kind != HTI_NULL) {
    char keeping[64], advice[80] = ""; /* where this build can keep it */
    if (format_list(keeping, sizeof keeping, FORMATS_WRITTEN | FORMATS_METADATA, FORMAT_EXTENSION, " or ") > 0)
      snprintf(advice, sizeof advice, " (write %s)", keeping);
    notice_add(&notes, "%s: %s has no place for a resolution; --dpi is not kept%s", o.output,
               hti_kind_name((hti_kind)kind), advice);
  }
  char icc_space[16] = "", icc_desc[128] = "", icc_fate[160] = "";
  if (im.icc && hti_icc_info(im.icc, im.icc_len, icc_space, sizeof icc_space, icc_desc, sizeof icc_desc)) {
    const char *want = planes == 1 ? "GRAY" : "RGB";
    if (holds_meta && strcmp(icc_space, want) == 0) {
      out.icc = im.icc;
      out.icc_len = im.icc_len;
      snprintf(icc_fate, sizeof icc_fate, "kept");
    } else if (holds_meta) {
      snprintf(icc_fate, sizeof icc_fate, "not kept: it describes %s and the output is %s", icc_space,
               planes == 1 ? "gray" : "RGB");
      /* an sRGB profile on gray output goes without a word: gray without
       * a profile is read as sRGB's gray anyway, and nearly every photo
       * carries one (--metrics still says what became of it) */
      if (!(planes == 1 && hti_icc_is_srgb(im.icc, im.icc_len)))
        notice_add(&notes, "%s: the input's ICC profile (%s%s%s) is %s", o.output,
                   icc_desc[0] ? icc_desc : icc_space, icc_desc[0] ? ", " : "", icc_desc[0] ? icc_space : "",
                   icc_fate);
    } else {
      snprintf(icc_fate, sizeof icc_fate, "not kept: %s has no place for it", hti_kind_name((hti_kind)kind));
    }
  }

  /* The library copies alpha through when params.alpha is set and the
   * output has room for it; when the file has no alpha but the input
   * does, render with alpha into scratch memory and drop it below
   * (1-bit output drops it by itself). */
  ht_image in_img = { im.width, im.height, im.stride, im.channels,
                      im.depth == 16 ? HT_FORMAT_U16 : HT_FORMAT_U8, (void *)(uintptr_t)im.pixels };
  params.alpha = im.has_alpha;
  if (o.dpi <= 0 && im.xdpi >= ht_param_info(HT_PARAM_DPI)->min && im.xdpi <= ht_param_info(HT_PARAM_DPI)->max &&
      ht_param_used(HT_PARAM_DPI, ht_params_algorithm(&params), params.color))
    params.dpi = im.xdpi; /* the screen's resolution: the input's unless --dpi says */
  ht_format out_fmt = depth == 1 ? HT_FORMAT_BIT1 : depth == 16 ? HT_FORMAT_U16 : HT_FORMAT_U8;
  int render_channels = planes + (im.has_alpha && depth != 1 ? 1 : 0);
  ht_image out_img = { im.width, im.height, out.stride, render_channels, out_fmt, out.pixels };
  uint8_t *scratch = NULL;
  /* the inks' channels: four, and the input's alpha beside them, which
   * the library copies and no file written here holds */
  const size_t ink_ch = (size_t)layout.channels;
  if (cmyk) { /* four ink planes; rendered below */
    inks = malloc((size_t)im.width * (size_t)im.height * ink_ch);
    if (!inks) {
      say("out of memory");
      goto done;
    }
    out_img = (ht_image){ im.width, im.height, (size_t)im.width * ink_ch, (int)ink_ch, HT_FORMAT_U8, inks };
    if (im.has_alpha)
      notice_add(&notes, "%s: --color cmyk drops the input's alpha", o.output);
  } else if (render_channels != file_channels) {
    size_t rs = ht_format_row_bytes(out_fmt, im.width, render_channels);
    scratch = malloc(rs * (size_t)im.height);
    if (!scratch) {
      say("out of memory");
      goto done;
    }
    out_img.stride = rs;
    out_img.data = scratch;
  }

  /* --- halftone (N times for --bench) */
  int runs = o.bench > 0 ? o.bench : 1;
  double *times = malloc((size_t)runs * sizeof *times);
  if (!times) {
    say("out of memory");
    goto done;
  }
  ht_status s = HT_OK;
  /* a search's estimate before it starts: a large window can take days,
   * and its progress bar hardly moves (the library refuses what is over
   * HT_ESTIMATE_LIMIT_S unless --run-long) */
  if ((ht_method_describe(params.method)->caps & HT_MCAP_SEARCH) && o.bench == 0 && !o.quiet &&
      (o.verbose || isatty(STDERR_FILENO))) {
    char took[32];
    ht_format_duration(ht_estimate_seconds(&params, im.width, im.height, planes, o.threads), took, sizeof took);
    say("%s: estimated to take %s on the CPU (a photo's figure; noisy images take far longer)",
        ht_method_describe(params.method)->name, took);
  }
  progress_line progress = { o.algorithm ? o.algorithm : "halftoning", now_ms(), -1 };
  if (!o.quiet && o.bench == 0 && isatty(STDERR_FILENO))
    ht_context_set_progress(ctx, progress_cb, &progress);
  for (int i = 0; i < runs && s == HT_OK; i++) {
    double t0 = now_ms();
    s = ht_run(ctx, &in_img, &out_img, &params);
    times[i] = now_ms() - t0;
  }
  progress_clear(&progress);
  if (o.verbose && ht_context_gpu_detail(ctx)[0]) /* the details of ht_notice_no_gpu */
    notice_add(&notes, "GPU: %s", ht_context_gpu_detail(ctx));
  if (s != HT_OK) {
    /* The library says "backend cuda: <why>" when a GPU variant finds no
     * GPU; with --backend left at auto it was the variant that asked for
     * the GPU, so name it. */
    const char *msg = ht_context_message(ctx), *prefix = "backend cuda: ";
    if (s == HT_ERR_NO_GPU && o.backend == HT_BACKEND_AUTO && o.variant != HT_VARIANT_AUTO &&
        ht_variant_backend((ht_variant)o.variant) == HT_BACKEND_CUDA) {
      if (strncmp(msg, prefix, strlen(prefix)) == 0)
        msg += strlen(prefix);
      say("variant %s runs on the GPU, and there is none usable: %s", ht_variant_name((ht_variant)o.variant), msg);
    } else {
      say("%s", msg);
    }
    free(times);
    goto done;
  }
  if (o.bench > 0) {
    qsort(times, (size_t)runs, sizeof *times, cmp_double);
    double med = runs % 2 ? times[runs / 2] : (times[runs / 2 - 1] + times[runs / 2]) / 2;
    double px = (double)im.width * (double)im.height;
    ht_variant v = ht_context_last_variant(ctx);
    printf("bench: %lldx%lld, %d run(s): min %.3f ms, median %.3f ms, %.3f ns/pixel (min); backend %s, variant %s\n",
           (long long)im.width, (long long)im.height, runs, times[0], med, times[0] * 1e6 / px,
           ht_choice_by_value(HT_LIST_BACKENDS, (int)ht_context_last_backend(ctx))->name, ht_variant_name(v));
  }
  free(times);

  if (inks) { /* the RGB rendering: red light is what cyan and black leave */
    for (int64_t y = 0; y < im.height; y++) {
      const uint8_t *src = inks + (size_t)y * (size_t)im.width * ink_ch;
      uint8_t *dst = out.pixels + (size_t)y * out.stride;
      for (size_t x = 0; x < (size_t)im.width; x++)
        for (size_t c = 0; c < 3; c++) {
          const int ink = src[ink_ch * x + c] + src[ink_ch * x + 3];
          dst[3 * x + c] = (uint8_t)(ink >= 255 ? 0 : 255 - ink);
        }
    }
  }
  if (o.separations && !write_separations(&out_img, &o, cmyk, &plates, err, sizeof err)) {
    say("%s", err);
    goto done;
  }
  if (scratch) { /* drop the alpha channel the file cannot hold */
    size_t bps = depth == 16 ? 2 : 1, rc_ = (size_t)render_channels, fc = (size_t)file_channels;
    for (int64_t y = 0; y < im.height; y++) {
      const uint8_t *src = scratch + (size_t)y * out_img.stride;
      uint8_t *dst = out.pixels + (size_t)y * out.stride;
      for (int64_t x = 0; x < im.width; x++)
        memcpy(dst + (size_t)x * fc * bps, src + (size_t)x * rc_ * bps, fc * bps);
    }
  }

  /* --- metrics, averaged over the dithered planes (the cmyk inks have
   * no input plane to compare with) */
  if (o.metrics && cmyk)
    notice_add(&notes, "--metrics: no tone or HVS error for --color cmyk (its ink planes have no input plane of "
               "their own); bias, grain and overlap compare the inks with the separated input");
  if (o.metrics && !cmyk) {
    /* the eye error: for the search methods, which minimise it, and for
     * error diffusion when an eye model is asked for */
    const bool eye = (ht_method_describe(params.method)->caps & HT_MCAP_SEARCH) ||
                     (o.given & (GIVEN(HT_PARAM_SIGMA) | GIVEN(HT_PARAM_EYE_RADIUS)));
    double tone = 0, hvs = 0, eye_error = 0;
    /* the field's measure at sigma 1.5 and 2, and at the search's eye
     * where that is another (the last column) */
    const bool eye_col = (ht_method_describe(params.method)->caps & HT_MCAP_SEARCH) && params.eye.sigma != 1.5 &&
                         params.eye.sigma != 2.0;
    double bmse[HT_METRICS_SIGMAS + 1] = { 0 }, bssim[HT_METRICS_SIGMAS + 1] = { 0 },
           bsigma[HT_METRICS_SIGMAS + 1] = { 0 };
    for (int p = 0; p < planes; p++) {
      uint8_t *owned = NULL, *res = result_plane(&out_img, p);
      size_t gs = 0;
      const uint8_t *g = input_plane(&im, per_channel || im.channels - (im.has_alpha ? 1 : 0) == 1 ? p : -1, &owned, &gs);
      ht_metrics m;
      ht_status ms = g && res ? ht_compute_metrics(g, gs, res, (size_t)im.width, im.width, im.height, &m)
                              : HT_ERR_NO_MEMORY;
      double e = 0;
      if (ms == HT_OK && eye)
        ms = ht_compute_eye_error(g, gs, res, (size_t)im.width, im.width, im.height, &params.eye, &e);
      ht_blurred_quality bq[HT_METRICS_SIGMAS + 1];
      for (int i = 0; i < HT_METRICS_SIGMAS && ms == HT_OK; i++)
        bq[i] = m.blurred[i];
      if (ms == HT_OK && eye_col)
        ms = ht_compute_blurred_quality(g, gs, res, (size_t)im.width, im.width, im.height, params.eye.sigma,
                                        &bq[HT_METRICS_SIGMAS]);
      for (int i = 0; i < HT_METRICS_SIGMAS + (eye_col ? 1 : 0) && ms == HT_OK; i++) {
        bmse[i] += bq[i].mse;
        bssim[i] += bq[i].ssim;
        bsigma[i] = bq[i].sigma;
      }
      eye_error += e;
      free(owned);
      free(res);
      if (ms != HT_OK) {
        say("metrics: %s", ht_status_string(ms));
        goto done;
      }
      tone += m.mean_tone_error;
      hvs += m.hvs_error;
    }
    printf("mean tone error: %.4f\nHVS error: %.4f\n", tone / planes, hvs / planes);
    for (int i = 0; i < HT_METRICS_SIGMAS + (eye_col ? 1 : 0); i++) {
      /* the planes' mean squared error, and its PSNR */
      const double mse = bmse[i] / planes;
      printf("blurred PSNR, SSIM (sigma %g%s): %.4f dB, %.4f\n", bsigma[i], i == HT_METRICS_SIGMAS ? ", the eye's" : "",
             mse > 0 ? 10.0 * log10(255.0 * 255.0 / mse) : INFINITY, bssim[i] / planes);
    }
    if (icc_fate[0])
      printf("input ICC profile: %s (%s, %zu bytes), %s\n", icc_desc[0] ? icc_desc : "no description", icc_space,
             im.icc_len, icc_fate);
    if (im.xdpi > 0)
      printf("input resolution: %g x %g dpi\n", im.xdpi, im.ydpi);
    if (eye)
      printf("eye error (sigma %g, %dx%d): %.4f\n", params.eye.sigma, 2 * params.eye.radius + 1,
             2 * params.eye.radius + 1, eye_error / planes);
    if (params.method != HT_METHOD_ERROR_DIFFUSION)
      printf("rounds: %lld\n", (long long)ht_context_last_rounds(ctx));
  }
  if (o.metrics && planes >= 2) { /* colour: Bias, Grain, overlap (docs/color.md) */
    ht_color_metrics cm;
    ht_status ms = ht_compute_color_metrics(&in_img, &out_img, &params, &cm);
    if (ms != HT_OK) {
      say("metrics: %s", ht_status_string(ms));
      goto done;
    }
    printf("bias: %.4f %%\ngrain: %.4f %%\n", 100 * cm.bias, 100 * cm.grain);
    if (isnan(cm.overlap))
      printf("overlap: n/a");
    else
      printf("overlap: %.4f", cm.overlap);
    printf(" (grain %.4f %% between %.4f %% the tones need and %.4f %% of independent planes)\n", 100 * cm.grain,
           100 * cm.overlap_least, 100 * cm.overlap_independent);
  }

  /* --- output: stdout first, since a run that fails writes no file */
  if (fflush(stdout) != 0 || ferror(stdout)) {
    say("cannot write to stdout: %s; %s not written", strerror(errno), o.output);
    goto done;
  }
  if (inks && kind == HTI_TIFF) { /* the inks themselves, a plane each, 1 bit where 2 levels */
    hti_cmyk ci;
    memset(&ci, 0, sizeof ci);
    ci.width = im.width;
    ci.height = im.height;
    ci.depth = 8;
    ci.xdpi = out.xdpi;
    ci.ydpi = out.ydpi;
    ci.compression = out.compression;
    const size_t plane = (size_t)im.width * (size_t)im.height;
    uint8_t *sep = malloc(plane * 4);
    if (!sep) {
      say("out of memory");
      goto done;
    }
    for (int p = 0; p < 4; p++) {
      for (size_t i = 0; i < plane; i++)
        sep[(size_t)p * plane + i] = inks[ink_ch * i + (size_t)p];
      ci.plane[p] = sep + (size_t)p * plane;
      ci.stride[p] = (size_t)im.width;
      ci.levels[p] = params.plane_levels[p] ? params.plane_levels[p] : params.levels;
    }
    const bool ok = hti_write_cmyk_tiff(&ci, &dest, err, sizeof err);
    free(sep);
    if (!ok) {
      say("%s: %s", o.output, err);
      goto done;
    }
  } else if (!hti_out_write(&out, &dest, err, sizeof err)) {
    say("%s: %s", o.output, err);
    goto done;
  }
  if (o.separations && !commit_all(&o, &dest, &plates))
    goto done;
  rc = 0;
  for (int i = 0; i < notes.count && !o.quiet; i++)
    say("%s", notes.text[i]);
done:
  for (int p = 0; p < plates.count; p++)
    hti_dest_close(&plates.dest[p]);
  hti_dest_close(&dest);
  ht_context_free(ctx);
  free(scratch);
  free(inks);
  hti_out_free(&out);
  hti_release(&im);
  return rc;
}

/* libFuzzer target: the core on tiny images. The input's bytes choose
 * the image (size, format, channels, padding, samples, NaN and values
 * out of range), the parameters (filter, a custom one too, levels and
 * per-plane levels, colour mode, alpha, scan, output format) and a band
 * split. The reference is variant ed on one thread; every CPU variant of
 * ht_choices(HT_LIST_VARIANTS) and auto, on 1 to 4 threads, must give
 * the same status and, on success, the same bits, and write nothing
 * between the output's rows; a variant may only refuse the parameters
 * (HT_ERR_UNSUPPORTED) where ht_check refuses them too. The image run as
 * two bands (ht_run_band with carried rows) must equal the whole run.
 * Any difference aborts, which libFuzzer reports as a crash.
 */
#include "halftone.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_W 40
#define MAX_H 24
#define MAX_THREADS 4
#define PAD_BYTE 0xC3

static ht_context *contexts[MAX_THREADS + 1]; /* [t]: t threads, backend cpu */

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  (void)argc;
  (void)argv;
  for (int t = 1; t <= MAX_THREADS; t++) {
    contexts[t] = ht_context_new();
    if (!contexts[t])
      abort();
    ht_context_set_backend(contexts[t], HT_BACKEND_CPU);
    ht_context_set_threads(contexts[t], t);
  }
  return 0;
}

/* The input read as numbers; zeros once it runs out. */
typedef struct {
  const uint8_t *p;
  size_t n;
} reader;

static unsigned take(reader *r)
{
  if (!r->n)
    return 0;
  r->n--;
  return *r->p++;
}

static unsigned take16(reader *r) { return take(r) | take(r) << 8; }

static __attribute__((noreturn)) void fail(const char *what, const ht_params *p, ht_variant v, int threads,
                                           const char *detail)
{
  fprintf(stderr, "fuzz-core: %s: variant %s, %d thread(s), levels %d, scan %d, colour %d, alpha %d: %s\n", what,
          ht_variant_name(v), threads, p->levels, (int)p->scan, (int)p->color, (int)p->alpha, detail);
  abort();
}

/* A custom filter from the input: a random grid written in the custom
 * syntax and parsed; Floyd-Steinberg where the parser refuses it. */
static ht_filter custom_filter(reader *r)
{
  char text[512];
  size_t n = 0;
  int left = (int)(take(r) % 5), right = (int)(take(r) % 5), down = (int)(take(r) % 4);
  unsigned big = take(r);
  for (int dy = 0; dy <= down; dy++) {
    if (dy)
      n += (size_t)snprintf(text + n, sizeof text - n, ";");
    for (int dx = -left; dx <= right; dx++) {
      if (dy == 0 && dx <= 0) {
        n += (size_t)snprintf(text + n, sizeof text - n, dx < 0 ? " -" : " *");
        continue;
      }
      unsigned v = take(r);
      n += (size_t)snprintf(text + n, sizeof text - n, " %u", big & 1 ? v * 3919u : v % 8);
    }
  }
  if (take(r) & 1)
    snprintf(text + n, sizeof text - n, " / %u", 1 + take16(r) * (big & 2 ? 487u : 1u));
  ht_filter f;
  if (ht_filter_parse(text, &f, NULL, 0) != HT_OK)
    f = *ht_filter_builtin(HT_FILTER_FLOYD_STEINBERG);
  return f;
}

static size_t sample_bytes(ht_format f) { return f == HT_FORMAT_U16 ? 2 : f == HT_FORMAT_F32 ? 4 : 1; }

/* Output buffers with padding between rows, to see a variant write
 * outside its rows. */
typedef struct {
  uint8_t *data;
  size_t bytes, row;
} outbuf;

static void out_reset(outbuf *o) { memset(o->data, PAD_BYTE, o->bytes); }

static bool same_rows(const outbuf *a, const outbuf *b, const ht_image *im)
{
  for (int64_t y = 0; y < im->height; y++)
    if (memcmp(a->data + (size_t)y * im->stride, b->data + (size_t)y * im->stride, a->row) != 0)
      return false;
  return true;
}

static bool padding_untouched(const outbuf *o, const ht_image *im)
{
  for (int64_t y = 0; y < im->height; y++) {
    const uint8_t *row = o->data + (size_t)y * im->stride;
    const size_t end = y + 1 < im->height ? im->stride : o->row;
    for (size_t i = o->row; i < end; i++)
      if (row[i] != PAD_BYTE)
        return false;
  }
  return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  reader r = { data, size };
  ht_params p;
  ht_params_init(&p);

  /* the image */
  const int64_t w = 1 + (int64_t)(take(&r) % MAX_W), h = 1 + (int64_t)(take(&r) % MAX_H);
  const unsigned f0 = take(&r), f1 = take(&r);
  const ht_format in_format = (f0 & 3) == 1 ? HT_FORMAT_U16 : (f0 & 3) == 2 ? HT_FORMAT_F32 : HT_FORMAT_U8;
  const int channels = 1 + (int)((f0 >> 2) % 4);
  p.alpha = (f0 >> 4) & 1;
  p.color = (f0 >> 5) & 1 ? HT_COLOR_PER_CHANNEL : HT_COLOR_LUMA;
  p.scan = (f0 >> 6) & 1 ? HT_SCAN_SERPENTINE : HT_SCAN_RASTER;
  const unsigned lv = take(&r);
  p.levels = lv < 128 ? 2 : 2 + (int)(lv % 255);
  if (f1 & 1)
    for (int i = 0; i < HT_MAX_PLANES; i++) {
      unsigned v = take(&r);
      p.plane_levels[i] = v < 64 ? 0 : 2 + (int)(v % 255);
    }
  /* one of the built-in filters (HT_LIST_FILTERS but custom) or, for
   * the last two values, a custom one */
  int nlist = 0;
  const ht_choice *filters = ht_choices(HT_LIST_FILTERS, &nlist);
  unsigned fid = take(&r) % (unsigned)(nlist + 1);
  const ht_filter *builtin = NULL;
  for (int i = 0; i < nlist && !builtin; i++)
    if (filters[i].value != HT_FILTER_CUSTOM && fid-- == 0)
      builtin = ht_filter_builtin((ht_filter_id)filters[i].value);
  p.filter = builtin ? *builtin : custom_filter(&r);

  const size_t in_sample = sample_bytes(in_format);
  const size_t in_row = (size_t)w * (size_t)channels * in_sample;
  const size_t in_stride = in_row + in_sample * (take(&r) % 3);
  uint8_t *in_data = malloc(in_stride * (size_t)h);
  if (!in_data)
    return 0;
  memset(in_data, 0, in_stride * (size_t)h);
  const unsigned specials = take(&r); /* how often a float is out of range or not finite */
  for (int64_t y = 0; y < h; y++)
    for (size_t i = 0; i < (size_t)w * (size_t)channels; i++) {
      uint8_t *s = in_data + (size_t)y * in_stride + i * in_sample;
      const unsigned v = take16(&r);
      if (in_format == HT_FORMAT_U8) {
        *s = (uint8_t)v;
      } else if (in_format == HT_FORMAT_U16) {
        const uint16_t u = (uint16_t)v;
        memcpy(s, &u, 2);
      } else {
        float x = (float)v / 65535.0f;
        if (specials && v % 256 < specials % 32) /* rare: out of range, and now and then not finite */
          x = v % 7 == 0 ? (v % 2 ? NAN : INFINITY) : x * 3.0f - 1.0f;
        memcpy(s, &x, 4);
      }
    }

  /* the output: per-channel or luma planes, alpha kept */
  const int colors = channels - (p.alpha ? 1 : 0);
  const int planes = p.color == HT_COLOR_LUMA && colors >= 3 ? 1 : colors;
  const unsigned of = take(&r) % 3;
  ht_format out_format = of == 1 ? HT_FORMAT_U16 : of == 2 ? HT_FORMAT_BIT1 : HT_FORMAT_U8;
  int out_channels = planes + (p.alpha && out_format != HT_FORMAT_BIT1 ? 1 : 0);
  if (out_channels < 1)
    out_channels = 1; /* refused: an alpha channel only */
  const size_t out_row = ht_format_row_bytes(out_format, w, out_channels);
  const size_t out_stride = out_row + sample_bytes(out_format) * (take(&r) % 3);
  outbuf ref = { malloc(out_stride * (size_t)h), out_stride * (size_t)h, out_row };
  outbuf got = { malloc(out_stride * (size_t)h), out_stride * (size_t)h, out_row };
  const int64_t split = h > 1 ? 1 + (int64_t)(take(&r) % (unsigned)(h - 1)) : 0;
  if (!ref.data || !got.data) {
    free(in_data);
    free(ref.data);
    free(got.data);
    return 0;
  }
  const ht_image in = { w, h, in_stride, channels, in_format, in_data };
  ht_image out_ref = { w, h, out_stride, out_channels, out_format, ref.data };
  ht_image out_got = { w, h, out_stride, out_channels, out_format, got.data };
  char detail[512];

  /* the reference */
  p.variant = HT_VARIANT_ED;
  out_reset(&ref);
  const ht_status want = ht_run(contexts[1], &in, &out_ref, &p);
  if (want == HT_OK && !padding_untouched(&ref, &out_ref))
    fail("ed wrote between the output's rows", &p, HT_VARIANT_ED, 1, "");

  /* every CPU variant and thread count */
  int nv = 0;
  const ht_choice *variants = ht_choices(HT_LIST_VARIANTS, &nv);
  for (int k = 0; k < nv; k++) {
    const ht_variant v = (ht_variant)variants[k].value;
    if (v != HT_VARIANT_AUTO && ht_variant_backend(v) != HT_BACKEND_CPU)
      continue;
    p.variant = v;
    for (int t = 1; t <= MAX_THREADS; t++) {
      out_reset(&got);
      const ht_status s = ht_run(contexts[t], &in, &out_got, &p);
      if (s == HT_ERR_UNSUPPORTED && want == HT_OK) {
        /* a variant that cannot run these parameters: ht_check says so
         * before any image is read, and nothing is written */
        if (ht_check(contexts[t], &p) != HT_ERR_UNSUPPORTED) {
          snprintf(detail, sizeof detail, "ht_run refuses (%s), ht_check does not", ht_context_message(contexts[t]));
          fail("refusal", &p, v, t, detail);
        }
        continue;
      }
      if (s != want) {
        snprintf(detail, sizeof detail, "status %s, the reference's %s (%s)", ht_status_string(s),
                 ht_status_string(want), ht_context_message(contexts[t]));
        fail("status differs", &p, v, t, detail);
      }
      if (s != HT_OK)
        continue;
      if (!same_rows(&got, &ref, &out_got))
        fail("output differs from the reference", &p, v, t, "");
      if (!padding_untouched(&got, &out_got))
        fail("wrote between the output's rows", &p, v, t, "");
    }
  }

  /* two bands with carried rows equal the whole image */
  p.variant = HT_VARIANT_AUTO;
  const int carry = ht_carry_rows(&p);
  if (want == HT_OK && p.scan == HT_SCAN_RASTER && split > 0 && carry >= 0) {
    const size_t rows = (size_t)carry * (size_t)w * (size_t)planes;
    int32_t *carried = calloc(rows ? rows : 1, sizeof *carried);
    if (carried) {
      const int t = 1 + (int)(split % MAX_THREADS);
      const ht_image top_in = { w, split, in_stride, channels, in_format, in_data };
      const ht_image bottom_in = { w, h - split, in_stride, channels, in_format, in_data + (size_t)split * in_stride };
      ht_image top_out = { w, split, out_stride, out_channels, out_format, got.data };
      ht_image bottom_out = { w, h - split, out_stride, out_channels, out_format, got.data + (size_t)split * out_stride };
      const ht_band top = { 0, NULL, carried }, bottom = { split, carried, NULL };
      out_reset(&got);
      ht_status s = ht_run_band(contexts[t], &top_in, &top_out, &p, &top);
      if (s == HT_OK)
        s = ht_run_band(contexts[t], &bottom_in, &bottom_out, &p, &bottom);
      if (s != HT_OK) {
        snprintf(detail, sizeof detail, "bands split at row %lld: %s", (long long)split,
                 ht_context_message(contexts[t]));
        fail("bands refused", &p, HT_VARIANT_AUTO, t, detail);
      }
      if (!same_rows(&got, &ref, &out_got)) {
        snprintf(detail, sizeof detail, "split at row %lld", (long long)split);
        fail("bands differ from the whole image", &p, HT_VARIANT_AUTO, t, detail);
      }
      free(carried);
    }
  }

  free(in_data);
  free(ref.data);
  free(got.data);
  return 0;
}

/* gpu-pd's data path (cuda/color/io.cu, core/color/gpu.c): 8-bit
 * interleaved pixels cross as they are and are unpacked (cmyk: separated)
 * and packed on the GPU; other formats cross as planes the core makes.
 * Every combination gives the CPU reference's bytes (pd-threads, itself
 * equal to the sequential pd in tests/core/test-color.c), padding after
 * each row untouched and alpha copied:
 *  - 8-bit RGBA with alpha, rows padded in and out; cmyk, padded;
 *  - 8-bit in, 16-bit out; 16-bit in, 8-bit out; 16-bit both; float in;
 *  - one channel, per-plane levels 2/3/16 (the packing tables);
 *  - 1 x 70000 (a stripe's rows are capped at a grid's 65535) and
 *    4099 x 3001 (several 32 MB stripes, alternating streams).
 * Exits 77 where no GPU is usable. */
#include "ht-test.h"

enum { PAD = 0xA5 };

typedef struct {
  const char *what;
  int64_t w, h;
  int channels;          /* input, alpha included */
  bool alpha;
  ht_color_mode color;
  ht_format in_fmt, out_fmt;
  int pad_in, pad_out;   /* bytes after each row */
  int levels[3];         /* per-plane levels, 0: p.levels */
} io_case;

static size_t sample_size(ht_format f)
{
  return f == HT_FORMAT_U8 ? 1 : f == HT_FORMAT_U16 ? 2 : 4;
}

/* A ramp with noise in every channel, alpha included, in format f. */
static void *make_input(const io_case *c, size_t stride, uint64_t seed)
{
  uint8_t *buf = xmalloc(stride * (size_t)c->h);
  memset(buf, PAD, stride * (size_t)c->h);
  uint64_t s = seed * 0x9E3779B97F4A7C15ULL + 3;
  for (int64_t y = 0; y < c->h; y++)
    for (int64_t x = 0; x < c->w; x++)
      for (int k = 0; k < c->channels; k++) {
        double v = (double)((x * 7 + y * 3 + k * 50) % 1000) / 1000.0 * 0.9 + (double)(rng_next(&s) >> 11) * 0x1p-53 * 0.1;
        uint8_t *px = buf + (size_t)y * stride + (size_t)(x * c->channels + k) * sample_size(c->in_fmt);
        if (c->in_fmt == HT_FORMAT_U8)
          *px = (uint8_t)(v * 255.0 + 0.5);
        else if (c->in_fmt == HT_FORMAT_U16) {
          uint16_t u = (uint16_t)(v * 65535.0 + 0.5);
          memcpy(px, &u, 2);
        } else {
          float f = (float)v;
          memcpy(px, &f, 4);
        }
      }
  return buf;
}

static ht_status run_one(ht_context *ctx, const io_case *c, const void *in, size_t in_stride, void *out,
                         size_t out_stride, int out_ch, ht_variant v)
{
  ht_params p;
  ht_params_init(&p);
  p.color = c->color;
  p.alpha = c->alpha;
  p.levels = 2;
  for (int j = 0; j < 3; j++)
    p.plane_levels[j] = c->levels[j];
  for (int j = 0; j < 4; j++)
    p.plane_weights.forward[j] = p.plane_weights.backward[j] = 0.2;
  p.black = 0.8;
  p.variant = v;
  ht_context_set_backend(ctx, ht_variant_backend(v));
  ht_image i = { c->w, c->h, in_stride, c->channels, c->in_fmt, (void *)(uintptr_t)in };
  ht_image o = { c->w, c->h, out_stride, out_ch, c->out_fmt, out };
  return ht_run(ctx, &i, &o, &p);
}

int main(void)
{
  const io_case cases[] = {
    { "8-bit RGBA, alpha, padded rows", 301, 97, 4, true, HT_COLOR_PLANE_DEPENDENT, HT_FORMAT_U8, HT_FORMAT_U8, 5, 3,
      { 0 } },
    { "cmyk from 8-bit RGB, padded rows", 301, 97, 3, false, HT_COLOR_CMYK, HT_FORMAT_U8, HT_FORMAT_U8, 7, 1,
      { 0 } },
    { "8-bit in, 16-bit out", 200, 50, 3, false, HT_COLOR_PLANE_DEPENDENT, HT_FORMAT_U8, HT_FORMAT_U16, 0, 0,
      { 0 } },
    { "16-bit in, 8-bit out", 200, 50, 3, false, HT_COLOR_CMYK, HT_FORMAT_U16, HT_FORMAT_U8, 2, 0, { 0 } },
    { "16-bit in and out", 200, 50, 3, false, HT_COLOR_PLANE_DEPENDENT, HT_FORMAT_U16, HT_FORMAT_U16, 0, 6,
      { 0 } },
    { "float RGB in, 8-bit out", 200, 50, 3, false, HT_COLOR_PLANE_DEPENDENT, HT_FORMAT_F32, HT_FORMAT_U8, 0, 0,
      { 0 } },
    { "one channel", 333, 65, 1, false, HT_COLOR_PLANE_DEPENDENT, HT_FORMAT_U8, HT_FORMAT_U8, 1, 1, { 0 } },
    { "levels 2/3/16", 257, 40, 3, false, HT_COLOR_PLANE_DEPENDENT, HT_FORMAT_U8, HT_FORMAT_U8, 0, 0,
      { 2, 3, 16 } },
    { "1 x 70000", 1, 70000, 3, false, HT_COLOR_PLANE_DEPENDENT, HT_FORMAT_U8, HT_FORMAT_U8, 0, 0, { 0 } },
    { "4099 x 3001, several stripes", 4099, 3001, 3, false, HT_COLOR_CMYK, HT_FORMAT_U8, HT_FORMAT_U8, 0, 0,
      { 0 } },
  };
  ht_context *ctx = ht_context_new();
  if (!ctx)
    return 99;
  ht_context_set_threads(ctx, 4);
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    const io_case *c = &cases[k];
    const int colors = c->channels - (c->alpha ? 1 : 0);
    const int out_ch = (c->color == HT_COLOR_CMYK ? 4 : colors) + (c->alpha ? 1 : 0);
    const size_t in_stride = (size_t)(c->w * c->channels) * sample_size(c->in_fmt) + (size_t)c->pad_in;
    const size_t out_stride = (size_t)(c->w * out_ch) * sample_size(c->out_fmt) + (size_t)c->pad_out;
    const size_t out_bytes = out_stride * (size_t)c->h;
    void *in = make_input(c, in_stride, k + 1);
    uint8_t *a = xmalloc(out_bytes), *b = xmalloc(out_bytes);
    memset(a, PAD, out_bytes);
    memset(b, PAD, out_bytes);
    ht_status s = run_one(ctx, c, in, in_stride, a, out_stride, out_ch, HT_VARIANT_PD_THREADS);
    CHECK(s == HT_OK, "%s: pd-threads: %s", c->what, ht_context_message(ctx));
    s = run_one(ctx, c, in, in_stride, b, out_stride, out_ch, HT_VARIANT_GPU_PD);
    if (s == HT_ERR_NO_GPU) {
      printf("no usable GPU: %s\n", ht_context_message(ctx));
      free(in), free(a), free(b);
      ht_context_free(ctx);
      return SKIP;
    }
    CHECK(s == HT_OK, "%s: gpu-pd: %s", c->what, ht_context_message(ctx));
    size_t diff = 0, first = 0;
    for (size_t i = 0; i < out_bytes; i++)
      if (a[i] != b[i] && diff++ == 0)
        first = i;
    CHECK(diff == 0, "%s: %zu of %zu output bytes differ, the first at row %zu, byte %zu", c->what, diff, out_bytes,
          first / out_stride, first % out_stride);
    /* the padding is the caller's: untouched by both */
    bool pad_kept = true;
    for (int64_t y = 0; y < c->h && c->pad_out; y++)
      for (int i = 0; i < c->pad_out; i++)
        pad_kept = pad_kept && b[(size_t)y * out_stride + out_stride - (size_t)c->pad_out + (size_t)i] == PAD;
    CHECK(pad_kept, "%s: gpu-pd wrote into the padding after a row", c->what);
    printf("%s: %s\n", c->what, s == HT_OK && diff == 0 && pad_kept ? "equal" : "FAILED");
    free(in), free(a), free(b);
  }
  ht_context_free(ctx);
  return test_finish("test-color-io");
}

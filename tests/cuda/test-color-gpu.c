/* Plane-dependent colour error diffusion on the GPU (variant gpu-pd,
 * cuda/color/pd.cu) against the CPU's sequential reference (pd,
 * core/color/pd.c, itself tested against an independent reference in
 * tests/core/test-color.c): the same bits for
 * RGB and CMYK, levels 2/3/16, several filters, weights 0/0.2/0.5,
 * randomisation 0/1, awkward shapes, and errors that outgrow the kernel's
 * 32-bit terms (its launch again with 64-bit ones). Exits 77 where no GPU
 * is usable.
 *
 * usage: test-color-gpu [check | bench W H [gpu]] (bench: the times of
 * gray wavefront, gray gpu-fast, RGB pd-threads and RGB gpu-pd on one
 * W x H image, `gpu`: the GPU rows only; set HT_CUDA_COLOR_TIMES=1 for
 * the kernel alone) */
#include "ht-test.h"

#include <time.h>

static double now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static uint8_t *make_rgb(int64_t w, int64_t h, uint64_t seed)
{
  uint8_t *in = xmalloc((size_t)(w * h * 3));
  uint64_t s = seed * 0x9E3779B97F4A7C15ULL + 1;
  for (int64_t y = 0; y < h; y++)
    for (int64_t x = 0; x < w; x++)
      for (int c = 0; c < 3; c++) {
        uint64_t r = rng_next(&s);
        in[(y * w + x) * 3 + c] = (uint8_t)((x * 255 / (w > 1 ? w - 1 : 1) + (int64_t)(r >> 61) * 9 + c * 40 + y) & 255);
      }
  return in;
}

/* runs with variant v on `channels` 8-bit channels; the output has
 * `planes` 8-bit channels */
static ht_status run(ht_context *ctx, const uint8_t *in, int64_t w, int64_t h, int channels, ht_params *p, ht_variant v,
                     int planes, uint8_t *out)
{
  ht_image i = { w, h, (size_t)(w * channels), channels, HT_FORMAT_U8, (void *)(uintptr_t)in };
  ht_image o = { w, h, (size_t)(w * planes), planes, HT_FORMAT_U8, out };
  p->variant = v;
  ht_context_set_backend(ctx, ht_variant_backend(v));
  return ht_run(ctx, &i, &o, p);
}

/* The kernel's filter boxes: (1,1,1) Floyd-Steinberg and Sierra Lite;
 * (2,2,2) JJN, Atkinson, Stucki, Burkes; (4,4,3) any filter, here one of
 * the widest reach with 27 taps, so that randomised weights take two
 * Philox draws a pixel (pairs 8 and up). Shapes: one pixel, widths that
 * are no multiple of the kernel's 16-column blocks, heights that end a
 * 32-row band early, many bands. Planes 1 and 2 (plane-dependent on 1- or
 * 2-channel input) run as 3 in the kernel. */
static int check(ht_context *ctx)
{
  const int64_t shapes[][2] = { { 1, 1 }, { 33, 17 }, { 5, 70 }, { 301, 97 }, { 1000, 700 } };
  const char *filters[] = { "floyd-steinberg", "jarvis-judice-ninke", "atkinson", "sierra-lite", "stucki", "burkes",
                            "custom" };
  ht_filter wide;
  char why[200];
  CHECK(ht_filter_parse("- - - - * 3 2 1 1; 1 1 2 1 2 1 2 1 1; 1 1 1 2 1 2 1 1 1; 1 0 1 0 1 0 1 0 1", &wide, why,
                        sizeof why) == HT_OK,
        "custom filter: %s", why);
  CHECK(wide.ntaps == 27 && wide.reach_left == 4 && wide.reach_right == 4 && wide.reach_down == 3,
        "custom filter: %d taps, reach %d/%d/%d", wide.ntaps, wide.reach_left, wide.reach_right, wide.reach_down);
  const int lv[3] = { 2, 3, 16 };
  const double ws[3] = { 0, 0.2, 0.5 };
  int runs = 0;
  for (int k = 0; k < 48; k++) {
    const int si = k >= 46 ? 3 + k % 2 : k % 5;
    const int64_t w = shapes[si][0], h = shapes[si][1];
    uint8_t *in = make_rgb(w, h, (uint64_t)k + 1);
    ht_params p;
    ht_params_init(&p);
    const char *fname = filters[k < 30 ? k % 4 : k % 7];
    p.filter = strcmp(fname, "custom") ? *ht_filter_by_name(fname) : wide;
    p.color = k % 2 ? HT_COLOR_CMYK : HT_COLOR_PLANE_DEPENDENT;
    p.levels = lv[(k / 2) % 3];
    if (k % 7 == 3)
      p.plane_levels[1] = 5;
    for (int j = 0; j < 4; j++) {
      p.plane_weights.forward[j] = ws[(k / 3) % 3];
      p.plane_weights.backward[j] = ws[(k / 3) % 3] * (k % 4 == 1 ? 0.5 : 1.0);
    }
    p.randomize = (k < 30 ? (k / 5) % 2 : k % 4 != 0) ? 1.0 : 0.0;
    if (k == 34)
      p.levels = 2; /* the widest filter, binary and randomised */
    p.black = 0.75;
    p.seed = (uint64_t)k * 31;
    /* cases 36..43 on 1 or 2 channels (plane-dependent only) */
    int channels = 3;
    if (k >= 36 && k < 44) {
      channels = 1 + k % 2;
      p.color = HT_COLOR_PLANE_DEPENDENT;
    }
    if (k >= 46) {
      /* plane 1 takes all of planes 0's and 2's errors, each nearly half
       * of full scale and positive (inputs just below the midpoint), on a
       * white green plane: its error grows by about 2^17 a row, past 2^18,
       * where the kernel's 32-bit terms stop being exact */
      p.filter = *ht_filter_by_name(k == 46 ? "floyd-steinberg" : "jarvis-judice-ninke");
      p.color = HT_COLOR_PLANE_DEPENDENT;
      p.levels = 2;
      p.plane_levels[1] = 0;
      for (int j = 0; j < 4; j++)
        p.plane_weights.forward[j] = p.plane_weights.backward[j] = 0;
      p.plane_weights.forward[0] = 1;
      p.plane_weights.backward[2] = 1;
      p.randomize = 0;
      for (int64_t i = 0; i < w * h; i++) {
        in[i * 3] = (uint8_t)(120 + i % 8);
        in[i * 3 + 1] = 255;
        in[i * 3 + 2] = (uint8_t)(127 - i % 5);
      }
    } else if (k >= 44) { /* the benchmark's run: RGB, Floyd-Steinberg, binary, 0.2, randomised */
      p.filter = *ht_filter_by_name("floyd-steinberg");
      p.color = HT_COLOR_PLANE_DEPENDENT;
      p.levels = 2;
      p.plane_levels[1] = 0;
      for (int j = 0; j < 4; j++)
        p.plane_weights.forward[j] = p.plane_weights.backward[j] = 0.2;
      p.randomize = 1.0;
    }
    const int planes = p.color == HT_COLOR_CMYK ? 4 : channels;
    uint8_t *a = xmalloc((size_t)(w * h * planes)), *b = xmalloc((size_t)(w * h * planes));
    ht_context_set_threads(ctx, 4);
    ht_status s = run(ctx, in, w, h, channels, &p, HT_VARIANT_PD_CPU, planes, a);
    CHECK(s == HT_OK, "pd: %s", ht_context_message(ctx));
    s = run(ctx, in, w, h, channels, &p, HT_VARIANT_GPU_PD, planes, b);
    if (s == HT_ERR_NO_GPU) {
      printf("no usable GPU: %s\n", ht_context_message(ctx));
      free(in), free(a), free(b);
      return SKIP;
    }
    CHECK(s == HT_OK, "gpu-pd: %s", ht_context_message(ctx));
    CHECK(s != HT_OK || memcmp(a, b, (size_t)(w * h * planes)) == 0,
          "gpu-pd differs from pd (case %d): %lldx%lld %s, %d planes, filter %s, levels %d, weights %g/%g, "
          "randomize %g",
          k, (long long)w, (long long)h, p.color == HT_COLOR_CMYK ? "cmyk" : "plane-dependent", planes, p.filter.name,
          p.levels,
          p.plane_weights.forward[0], p.plane_weights.backward[0], p.randomize);
    runs++;
    free(in), free(a), free(b);
  }
  printf("check: %d comparisons\n", runs);
  return test_finish("test-color-gpu");
}

static double best_of(ht_context *ctx, const uint8_t *in, int64_t w, int64_t h, ht_params *p, ht_variant v, int channels,
                      int planes, uint8_t *out, int reps)
{
  double best = 1e30;
  for (int r = 0; r < reps; r++) {
    ht_image i = { w, h, (size_t)(w * channels), channels, HT_FORMAT_U8, (void *)(uintptr_t)in };
    ht_image o = { w, h, (size_t)(w * planes), planes, HT_FORMAT_U8, out };
    p->variant = v;
    ht_context_set_backend(ctx, ht_variant_backend(v));
    double t0 = now_ms();
    ht_status s = ht_run(ctx, &i, &o, p);
    double t = now_ms() - t0;
    if (s != HT_OK) {
      printf("%s: %s\n", ht_variant_name(v), ht_context_message(ctx));
      return -1;
    }
    best = t < best ? t : best;
  }
  return best;
}

static int bench(ht_context *ctx, int64_t w, int64_t h, bool gpu_only)
{
  uint8_t *rgb = make_rgb(w, h, 7);
  uint8_t *gray = xmalloc((size_t)(w * h));
  for (int64_t i = 0; i < w * h; i++)
    gray[i] = rgb[i * 3 + 1];
  uint8_t *o1 = xmalloc((size_t)(w * h * 3)), *o2 = xmalloc((size_t)(w * h * 3));
  ht_context_set_threads(ctx, 0);
  ht_params p;
  ht_params_init(&p);
  const double px = (double)w * (double)h;
  double t;
  if (!gpu_only) {
    t = best_of(ctx, gray, w, h, &p, HT_VARIANT_WAVEFRONT, 1, 1, o1, 3);
    printf("gray wavefront (CPU, all cores): %.1f ms, %.1f Mpx/s\n", t, px / t / 1e3);
  }
  t = best_of(ctx, gray, w, h, &p, HT_VARIANT_GPU_FAST, 1, 1, o1, 3);
  printf("gray gpu-fast (end to end): %.1f ms, %.1f Mpx/s\n", t, px / t / 1e3);
  p.color = HT_COLOR_PLANE_DEPENDENT;
  for (int j = 0; j < 4; j++)
    p.plane_weights.forward[j] = p.plane_weights.backward[j] = 0.2;
  for (int r = 0; r < 2; r++) {
    p.randomize = r;
    if (!gpu_only) {
      double tc = best_of(ctx, rgb, w, h, &p, HT_VARIANT_PD_THREADS, 3, 3, o1, 2);
      printf("RGB pd-threads (CPU, all cores), randomize %d: %.1f ms, %.1f Mpx/s\n", r, tc, px / tc / 1e3);
    }
    double tg = best_of(ctx, rgb, w, h, &p, HT_VARIANT_GPU_PD, 3, 3, o2, 2);
    printf("RGB gpu-pd (end to end), randomize %d: %.1f ms, %.1f Mpx/s\n", r, tg, px / tg / 1e3);
    CHECK(gpu_only || memcmp(o1, o2, (size_t)(w * h * 3)) == 0, "bench: gpu-pd differs from pd-threads");
  }
  free(rgb), free(gray), free(o1), free(o2);
  return test_finish("test-color-gpu bench");
}

int main(int argc, char **argv)
{
  ht_context *ctx = ht_context_new();
  if (!ctx)
    return 99;
  int rc;
  if (argc > 3 && !strcmp(argv[1], "bench"))
    rc = bench(ctx, atoll(argv[2]), atoll(argv[3]), argc > 4 && !strcmp(argv[4], "gpu"));
  else
    rc = check(ctx);
  ht_context_free(ctx);
  return rc;
}

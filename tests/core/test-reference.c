/* The library against things it cannot influence:
 *  - an independent error diffusion written here (a full 2-D array, the
 *    rules of core/shared/fixed.h re-derived from docs/arithmetic.md with plain
 *    integer division instead of the library's shifts and tables), raster
 *    and serpentine, on tiny images;
 *  - tone preservation on flat grays;
 *  - an 8-bit image, its 16-bit twin (x 257) and its float twin (v / 255)
 *    give the same output.
 * usage: test-reference [reference|tone|formats] */
#include "ht-test.h"

/* ------------------------------------------------ independent reference */

typedef struct {
  int dx, dy, num;
} ref_tap;

static const ref_tap ref_fs[] = { { 1, 0, 7 }, { -1, 1, 3 }, { 0, 1, 5 }, { 1, 1, 1 } };
static const ref_tap ref_jjn[] = { { 1, 0, 7 },  { 2, 0, 5 },  { -2, 1, 3 }, { -1, 1, 5 },
                                   { 0, 1, 7 },  { 1, 1, 5 },  { 2, 1, 3 },  { -2, 2, 1 },
                                   { -1, 2, 3 }, { 0, 2, 5 },  { 1, 2, 3 },  { 2, 2, 1 } };

/* floor(a / b) for b > 0, by division, not by shifting */
static int64_t floor_div(int64_t a, int64_t b)
{
  int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

/* The nearest of L evenly spaced levels, ties to the lower one: found by
 * comparing distances, not by a formula. */
static int nearest_level(int64_t v, int L, const int64_t *value)
{
  int best = 0;
  for (int i = 1; i < L; i++) {
    int64_t d_best = v - value[best] < 0 ? value[best] - v : v - value[best];
    int64_t d = v - value[i] < 0 ? value[i] - v : v - value[i];
    if (d < d_best)
      best = i;
  }
  return best;
}

/* Straight error diffusion on a whole-image array of int64. */
static void reference_ed(const uint16_t *in, int w, int h, const ref_tap *taps, int ntaps, int den, int L,
                         bool serpentine, uint8_t *out)
{
  int64_t *a = xmalloc((size_t)w * (size_t)h * sizeof *a);
  int64_t value[256];
  for (int i = 0; i < L; i++) /* level i: round(i * 65535 / (L - 1)), halves up */
    value[i] = floor_div(2 * (int64_t)i * 65535 + (L - 1), 2 * (int64_t)(L - 1));
  for (int i = 0; i < w * h; i++)
    a[i] = in[i];
  for (int y = 0; y < h; y++) {
    bool rev = serpentine && (y & 1);
    for (int i = 0; i < w; i++) {
      int x = rev ? w - 1 - i : i;
      int64_t v = a[y * w + x];
      int q = nearest_level(v, L, value);
      int64_t e = v - value[q];
      out[y * w + x] = (uint8_t)q;
      for (int t = 0; t < ntaps; t++) {
        int tx = x + (rev ? -taps[t].dx : taps[t].dx), ty = y + taps[t].dy;
        if (tx < 0 || tx >= w || ty >= h)
          continue;
        /* Q12 weight rounded half up, then the share floor(e*q/4096 + 1/2) */
        int64_t qw = floor_div(2 * (int64_t)taps[t].num * 4096 + den, 2 * (int64_t)den);
        a[ty * w + tx] += floor_div(e * qw + 2048, 4096);
      }
    }
  }
  free(a);
}

static void run_reference(ht_context *ctx)
{
  static const int sizes[][2] = { { 1, 1 }, { 7, 5 }, { 16, 9 }, { 1, 8 }, { 8, 1 }, { 33, 17 }, { 2, 2 } };
  const int levels[] = { 2, 3, 16, 256 };
  struct {
    const ref_tap *taps;
    int ntaps, den;
    ht_filter_id id;
  } filters[] = { { ref_fs, 4, 16, HT_FILTER_FLOYD_STEINBERG }, { ref_jjn, 12, 48, HT_FILTER_JARVIS_JUDICE_NINKE } };
  uint64_t seed = 7;
  for (size_t fi = 0; fi < 2; fi++)
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
      for (int li = 0; li < 4; li++)
        for (int serp = 0; serp < 2; serp++) {
          int w = sizes[si][0], h = sizes[si][1];
          uint16_t *in = random_plane(w, h, seed++);
          uint8_t *want = xmalloc((size_t)(w * h)), *got = xmalloc((size_t)(w * h));
          reference_ed(in, w, h, filters[fi].taps, filters[fi].ntaps, filters[fi].den, levels[li], serp, want);
          ht_params p;
          ht_params_init(&p);
          p.filter = *ht_filter_builtin(filters[fi].id);
          p.levels = levels[li];
          p.scan = serp ? HT_SCAN_SERPENTINE : HT_SCAN_RASTER;
          /* the reference ED, and (raster) the default variant */
          for (int k = 0; k < (serp ? 1 : 2); k++) {
            p.variant = k == 0 ? HT_VARIANT_ED : HT_VARIANT_AUTO;
            ht_context_set_threads(ctx, 2);
            memset(got, 0xEE, (size_t)(w * h));
            ht_status s = ht_run_plane(ctx, in, (size_t)w * 2, got, (size_t)w, w, h, &p);
            CHECK(s == HT_OK, "%s", ht_context_message(ctx));
            for (int i = 0; i < w * h; i++)
              if (got[i] != want[i]) {
                CHECK(0, "%s, %s, %s, levels %d, %dx%d: pixel (%d, %d) is %d, the independent reference says %d",
                      p.filter.name, serp ? "serpentine" : "raster", ht_variant_name(p.variant), levels[li], w, h,
                      i % w, i / w, got[i], want[i]);
                break;
              }
          }
          free(in);
          free(want);
          free(got);
        }

  /* serpentine really is another scan on a non-flat image */
  int w = 64, h = 32;
  uint16_t *in = random_plane(w, h, 4242);
  uint8_t *a = xmalloc((size_t)(w * h)), *b = xmalloc((size_t)(w * h));
  ht_params p;
  ht_params_init(&p);
  p.variant = HT_VARIANT_ED;
  CHECK(ht_run_plane(ctx, in, (size_t)w * 2, a, (size_t)w, w, h, &p) == HT_OK, "%s", ht_context_message(ctx));
  p.scan = HT_SCAN_SERPENTINE;
  CHECK(ht_run_plane(ctx, in, (size_t)w * 2, b, (size_t)w, w, h, &p) == HT_OK, "%s", ht_context_message(ctx));
  CHECK(memcmp(a, b, (size_t)(w * h)) != 0, "serpentine output equals raster output");
  /* the first row is scanned the same way by both */
  CHECK(memcmp(a, b, (size_t)w) == 0, "the first row differs between raster and serpentine");
  free(in);
  free(a);
  free(b);
}

/* --------------------------------------------------------------- tone */

/* Flat gray g in 0..255 on a 256 x 256 image, cut into 64 x 64 tiles:
 * the mean output of every tile must be within 1% of full scale (2.55 of
 * 255) of g. Full scale, not 1% of g: a 64 x 64 binary tile can only
 * express means in steps of 255 / 4096, and at g = 1 a tile holds about
 * 16 white dots, so a relative bound would demand the impossible.
 * Every tile counts, the first rows and columns included. There error
 * diffusion starts with no error carried in, so the first dots come late
 * (or early) and the tiles on the top and left edges deviate most: up to
 * 2.4 of 255 (Jarvis-Judice-Ninke, gray 26, top-left tile), against at
 * most 1.33 inside. The filters tested, every built-in one
 * (HT_LIST_FILTERS) that passes on all of the error (weights sum to the
 * divisor), lose away from the start only the error pushed off the right
 * and bottom edges. One that passes on less (Atkinson, 6/8) is not
 * tone-preserving and is left out. */
static void run_tone(ht_context *ctx)
{
  const int w = 256, h = 256, tile = 64;
  uint8_t *in = xmalloc((size_t)(w * h)), *out = xmalloc((size_t)(w * h));
  double worst = 0;
  char worst_at[128] = "";
  int tested = 0;
  for (int fi = 0; fi < test_nbuiltin(); fi++) {
    const ht_filter *f = test_builtin(fi);
    long long weights = 0;
    for (int t = 0; t < f->ntaps; t++)
      weights += f->taps[t].num;
    if (weights != f->den)
      continue;
    tested++;
    for (int levels = 2; levels <= 4; levels += 2)
      for (int g = 1; g <= 254; g += (g < 8 || g > 247) ? 1 : 9) {
        memset(in, g, (size_t)(w * h));
        ht_params p;
        ht_params_init(&p);
        p.filter = *f;
        p.levels = levels;
        ht_image I = { w, h, (size_t)w, 1, HT_FORMAT_U8, in }, O = { w, h, (size_t)w, 1, HT_FORMAT_U8, out };
        ht_status s = ht_run(ctx, &I, &O, &p);
        CHECK(s == HT_OK, "%s", ht_context_message(ctx));
        for (int ty = 0; ty < h; ty += tile)
          for (int tx = 0; tx < w; tx += tile) {
            double sum = 0;
            for (int y = ty; y < ty + tile; y++)
              for (int x = tx; x < tx + tile; x++)
                sum += out[y * w + x];
            double mean = sum / (tile * tile), dev = mean - g < 0 ? g - mean : mean - g;
            if (dev > worst) {
              worst = dev;
              snprintf(worst_at, sizeof worst_at, "%s, levels %d, gray %d, tile (%d, %d), mean %.3f", p.filter.name,
                       levels, g, tx, ty, mean);
            }
            CHECK(dev <= 2.55, "%s, levels %d, gray %d: tile (%d, %d) has mean %.3f", p.filter.name, levels, g, tx,
                  ty, mean);
          }
      }
  }
  CHECK(tested > 0, "no built-in filter passes on all of the error");
  printf("tone: %d filters, largest tile deviation %.3f of 255 (%s)\n", tested, worst, worst_at);
  free(in);
  free(out);
}

/* ------------------------------------------------------------ formats */

/* One size: a small one, and one wide enough that the wavefront's
 * diagonal kernel reads most of an 8-bit image's blocks as bytes itself
 * (core/diffusion/wavefront.c), on two threads where the machine has two cores. */
static void run_formats_size(ht_context *ctx, int64_t w, int64_t h)
{
  uint16_t *noise = random_plane(w, h, 31337);
  uint8_t *in8 = xmalloc((size_t)(w * h));
  uint16_t *in16 = xmalloc((size_t)(w * h) * 2);
  float *inf = xmalloc((size_t)(w * h) * 4);
  for (int64_t i = 0; i < w * h; i++) {
    in8[i] = (uint8_t)(noise[i] >> 8);
    in16[i] = (uint16_t)(in8[i] * 257);
    inf[i] = (float)in8[i] / 255.0f;
  }
  free(noise);
  const struct {
    ht_format f;
    void *data;
    size_t bps;
  } ins[] = { { HT_FORMAT_U8, in8, 1 }, { HT_FORMAT_U16, in16, 2 }, { HT_FORMAT_F32, inf, 4 } };
  const ht_variant variants[] = { HT_VARIANT_ED, HT_VARIANT_WAVEFRONT };
  for (int levels = 2; levels <= 5; levels += 3)
    for (int vi = 0; vi < 2; vi++) {
      uint8_t *outs[3];
      for (int k = 0; k < 3; k++) {
        outs[k] = xmalloc((size_t)(w * h));
        ht_params p;
        ht_params_init(&p);
        p.levels = levels;
        p.variant = variants[vi];
        ht_image I = { w, h, (size_t)w * ins[k].bps, 1, ins[k].f, ins[k].data };
        ht_image O = { w, h, (size_t)w, 1, HT_FORMAT_U8, outs[k] };
        ht_status s = ht_run(ctx, &I, &O, &p);
        CHECK(s == HT_OK, "%s", ht_context_message(ctx));
      }
      CHECK(memcmp(outs[0], outs[1], (size_t)(w * h)) == 0, "8-bit and 16-bit twins differ (levels %d)", levels);
      CHECK(memcmp(outs[0], outs[2], (size_t)(w * h)) == 0, "8-bit and float twins differ (levels %d)", levels);
      for (int k = 0; k < 3; k++)
        free(outs[k]);
    }
  free(in8);
  free(in16);
  free(inf);
}

static void run_formats(ht_context *ctx)
{
  run_formats_size(ctx, 97, 61);
  run_formats_size(ctx, 1031, 517);
}

int main(int argc, char **argv)
{
  const char *part = argc > 1 ? argv[1] : "all";
  ht_context *ctx = ht_context_new();
  if (!ctx)
    return 99;
  ht_context_set_backend(ctx, HT_BACKEND_CPU);
  if (!strcmp(part, "all") || !strcmp(part, "reference"))
    run_reference(ctx);
  if (!strcmp(part, "all") || !strcmp(part, "tone"))
    run_tone(ctx);
  if (!strcmp(part, "all") || !strcmp(part, "formats"))
    run_formats(ctx);
  ht_context_free(ctx);
  return test_finish("test-reference");
}

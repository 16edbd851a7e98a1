/* Linear light (ht_params.space, core/shared/srgb.h, docs/arithmetic.md):
 *  - the decoding is monotone, ends at 0 and 65535, and within 2 units
 *    of the sRGB curve; encoding finds the stored value of nearest light;
 *  - a ramp halftoned in linear light keeps its mean light within 0.5 %
 *    for 2, 4 and 16 levels, luma and per-channel, by Floyd-Steinberg,
 *    and the stored space does not (it keeps the mean stored value);
 *  - linear and stored differ, and every method (error diffusion, the
 *    search, ordered, threshold, plane-dependent colour) gives the same
 *    bits on 1..4 threads in linear light.
 * usage: test-space */
#include "ht-test.h"
#include "shared/srgb.h"

#include <math.h>

#define W 256
#define H 64

static double decode(double x) { return x <= 0.04045 ? x / 12.92 : pow((x + 0.055) / 1.055, 2.4); }

static ht_status run(const uint8_t *in, int ch, int och, const ht_params *p, int threads, uint8_t *out)
{
  ht_context *ctx = ht_context_new();
  ht_context_set_threads(ctx, threads);
  ht_context_set_backend(ctx, HT_BACKEND_CPU);
  ht_image I = { W, H, (size_t)W * (size_t)ch, ch, HT_FORMAT_U8, (void *)(uintptr_t)in };
  ht_image O = { W, H, (size_t)W * (size_t)och, och, HT_FORMAT_U8, out };
  ht_status s = ht_run(ctx, &I, &O, p);
  if (s != HT_OK)
    fprintf(stderr, "run: %s\n", ht_context_message(ctx));
  ht_context_free(ctx);
  return s;
}

/* mean light of 8-bit stored samples, by the floating-point curve */
static double mean_light(const uint8_t *p, size_t n)
{
  double m = 0;
  for (size_t i = 0; i < n; i++)
    m += decode(p[i] / 255.0);
  return m / (double)n;
}

int main(void)
{
  /* the table */
  int32_t prev = -1, worst = 0;
  for (int32_t v = 0; v <= 65535; v++) {
    const int32_t y = ht_srgb_decode(v);
    CHECK(y >= prev, "decode falls at %d", v);
    prev = y;
    const int32_t d = abs(y - (int32_t)lround(65535 * decode(v / 65535.0)));
    worst = d > worst ? d : worst;
  }
  CHECK(ht_srgb_decode(0) == 0 && ht_srgb_decode(65535) == 65535, "ends %d %d", ht_srgb_decode(0),
        ht_srgb_decode(65535));
  CHECK(worst <= 2, "decode is %d units off the curve", worst);
  for (int32_t y = 0; y <= 65535; y += 97) {
    const int32_t s = ht_srgb_encode(y, 255);
    for (int32_t t = 0; t <= 255; t++)
      CHECK(abs(ht_srgb_decode(t * 257) - y) >= abs(ht_srgb_decode(s * 257) - y), "encode(%d) = %d, %d is nearer", y,
            s, t);
  }

  uint8_t *ramp = xmalloc(W * H * 3), *a = xmalloc(W * H * 4), *b = xmalloc(W * H * 4);
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++)
      for (int c = 0; c < 3; c++)
        ramp[(y * W + x) * 3 + c] = (uint8_t)x;
  static const int levels[] = { 2, 4, 16 };
  for (size_t k = 0; k < 3; k++)
    for (int per = 0; per < 2; per++) {
      ht_params p;
      ht_params_init(&p);
      p.levels = levels[k];
      p.color = per ? HT_COLOR_PER_CHANNEL : HT_COLOR_LUMA;
      const int och = per ? 3 : 1;
      const size_t n = (size_t)W * H * (size_t)och;
      p.space = HT_SPACE_LINEAR;
      CHECK(run(ramp, 3, och, &p, 2, a) == HT_OK, "linear run");
      p.space = HT_SPACE_STORED;
      CHECK(run(ramp, 3, och, &p, 2, b) == HT_OK, "stored run");
      const double in = mean_light(ramp, (size_t)W * H * 3), lin = mean_light(a, n), sto = mean_light(b, n);
      printf("%d levels, %s: mean light in %.5f, linear %.5f, stored %.5f\n", levels[k], per ? "per-channel" : "luma",
             in, lin, sto);
      CHECK(fabs(lin - in) <= 0.005 * in, "%d levels: linear light's mean %.5f, the input's %.5f", levels[k], lin, in);
      CHECK(memcmp(a, b, n) != 0, "%d levels: linear and stored give the same bits", levels[k]);
      if (levels[k] == 2)
        CHECK(fabs(sto - in) > 0.005 * in, "2 levels: stored values keep the light too (%.5f, %.5f)", sto, in);
    }

  /* every method, 1..4 threads */
  uint8_t *img = xmalloc(W * H * 3);
  fill_random(img, W * 3, W * 3, H, 1, 5);
  static const int algorithms[] = { HT_FILTER_FLOYD_STEINBERG, HT_FILTER_STUCKI, HT_ALGORITHM_DBS,
                                    HT_ALGORITHM_BAYER, HT_ALGORITHM_THRESHOLD };
  static const ht_color_mode modes[] = { HT_COLOR_LUMA, HT_COLOR_PER_CHANNEL, HT_COLOR_PLANE_DEPENDENT,
                                         HT_COLOR_CMYK };
  for (size_t i = 0; i < sizeof algorithms / sizeof algorithms[0]; i++)
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
      ht_params p;
      ht_params_init(&p);
      ht_params_set_algorithm(&p, algorithms[i]);
      p.color = modes[m];
      p.space = HT_SPACE_LINEAR;
      p.levels = algorithms[i] == HT_ALGORITHM_DBS ? 2 : 3;
      if (modes[m] >= HT_COLOR_PLANE_DEPENDENT) {
        if (algorithms[i] >= HT_ALGORITHM_LES)
          continue; /* coupled planes are error diffusion's */
        for (int j = 0; j < HT_MAX_PLANES; j++)
          p.plane_weights.forward[j] = 0.2;
      }
      if (algorithms[i] == HT_ALGORITHM_DBS && modes[m] == HT_COLOR_LUMA)
        p.max_rounds = 3;
      else if (algorithms[i] == HT_ALGORITHM_DBS)
        continue;
      const int och = modes[m] == HT_COLOR_LUMA ? 1 : modes[m] == HT_COLOR_CMYK ? 4 : 3;
      const size_t n = (size_t)W * H * (size_t)och;
      CHECK(run(img, 3, och, &p, 1, a) == HT_OK, "run");
      for (int t = 2; t <= 4; t++) {
        memset(b, 0x55, n);
        CHECK(run(img, 3, och, &p, t, b) == HT_OK && memcmp(a, b, n) == 0,
              "algorithm %d, mode %d: %d threads differ from one", algorithms[i], (int)modes[m], t);
      }
      ht_params s = p;
      s.space = HT_SPACE_STORED;
      CHECK(run(img, 3, och, &s, 2, b) == HT_OK && memcmp(a, b, n) != 0,
            "algorithm %d, mode %d: linear and stored give the same bits", algorithms[i], (int)modes[m]);
    }
  free(ramp);
  free(a);
  free(b);
  free(img);
  return test_finish("space");
}

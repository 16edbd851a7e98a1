/* The error strength (ht_params.strength, docs/arithmetic.md "Strength"):
 *  - strength 1 gives today's bits: golden hashes of Floyd-Steinberg and
 *    Jarvis-Judice-Ninke on a fixed image, taken before the strength
 *    existed, and the default run for every filter and colour mode;
 *  - strength 0 gives what threshold gives (each pixel to its nearest
 *    level), in every colour mode that threshold takes, and the planes
 *    of plane-dependent and cmyk runs each rounded on their own;
 *  - an error diffusion written here with the weights scaled as the
 *    arithmetic says equals the library for every built-in filter;
 *  - every CPU variant and 1..4 threads and a run as two bands give the
 *    same bits at strengths between.
 * usage: test-strength */
#include "ht-test.h"

#define W 61
#define H 47
/* FNV-1a of the 1-bit-as-8-bit output of fill_random(seed 7), made by
 * running the code; test-reference's independent diffusion holds the
 * same bits for strength 1 */
#define GOLDEN_FS 0x93d4c46a2aa1c859ULL
#define GOLDEN_JJN 0x7e89d9e781e59d25ULL

/* FNV-1a of a buffer */
static uint64_t hash(const uint8_t *p, size_t n)
{
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < n; i++)
    h = (h ^ p[i]) * 0x100000001b3ULL;
  return h;
}

static ht_status run(const uint8_t *in, int channels, const ht_params *p, int threads, ht_variant v, uint8_t *out,
                     int out_channels)
{
  ht_context *ctx = ht_context_new();
  ht_context_set_threads(ctx, threads);
  ht_context_set_backend(ctx, HT_BACKEND_CPU);
  ht_params q = *p;
  q.variant = v;
  ht_image I = { W, H, (size_t)W * (size_t)channels, channels, HT_FORMAT_U8, (void *)(uintptr_t)in };
  ht_image O = { W, H, (size_t)W * (size_t)out_channels, out_channels, HT_FORMAT_U8, out };
  ht_status s = ht_run(ctx, &I, &O, &q);
  if (s != HT_OK)
    fprintf(stderr, "run: %s\n", ht_context_message(ctx));
  ht_context_free(ctx);
  return s;
}

/* Straight error diffusion of 8-bit input with every Q12 weight scaled
 * by the strength (floor((q s + 2048) / 4096)), division instead of
 * shifts; levels by comparing distances to i * 65535 / (L - 1). */
static void reference(const uint8_t *in, const ht_filter *f, double strength, int L, uint8_t *out)
{
  int64_t *a = xmalloc(sizeof *a * W * H);
  const int64_t s = (int64_t)(strength * 4096 + 0.5);
  for (int i = 0; i < W * H; i++)
    a[i] = in[i] * 257;
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      const int64_t v = a[y * W + x];
      int best = 0;
      int64_t bd = INT64_MAX, lv = 0;
      for (int i = 0; i < L; i++) { /* the exact midpoints decide: compare 2 (L-1) v with (2i) 65535 */
        const int64_t d = llabs(2 * (L - 1) * v - 2 * (int64_t)i * 65535);
        if (d < bd) {
          bd = d;
          best = i;
        }
      }
      lv = (2 * (int64_t)best * 65535 + L - 1) / (2 * (L - 1));
      out[y * W + x] = (uint8_t)((2 * best * 255 + L - 1) / (2 * (L - 1)));
      const int64_t e = v - lv;
      for (int t = 0; t < f->ntaps; t++) {
        const int64_t q = (f->taps[t].q * s + 2048);
        const int64_t qs = q >= 0 ? q / 4096 : -((-q + 4095) / 4096);
        const int64_t num = e * qs + 2048;
        const int64_t term = num >= 0 ? num / 4096 : -((-num + 4095) / 4096);
        const int xx = x + f->taps[t].dx, yy = y + f->taps[t].dy;
        if (xx >= 0 && xx < W && yy < H)
          a[yy * W + xx] += term;
      }
    }
  free(a);
}

int main(void)
{
  uint8_t *gray = xmalloc(W * H), *rgb = xmalloc(W * H * 3);
  uint8_t *a = xmalloc(W * H * 4), *b = xmalloc(W * H * 4);
  fill_random(gray, W, W, H, 1, 7);
  fill_random(rgb, W * 3, W * 3, H, 1, 11);

  /* golden: the bits before the strength existed */
  {
    static const struct {
      ht_filter_id f;
      uint64_t h;
    } golden[] = { { HT_FILTER_FLOYD_STEINBERG, GOLDEN_FS }, { HT_FILTER_JARVIS_JUDICE_NINKE, GOLDEN_JJN } };
    for (size_t i = 0; i < sizeof golden / sizeof golden[0]; i++) {
      ht_params p;
      ht_params_init(&p);
      ht_params_set_algorithm(&p, (int)golden[i].f);
      p.strength = 1.0;
      CHECK(run(gray, 1, &p, 2, HT_VARIANT_AUTO, a, 1) == HT_OK, "golden run");
      const uint64_t h = hash(a, W * H);
      CHECK(h == golden[i].h, "filter %d at strength 1: hash 0x%016llx, golden 0x%016llx", (int)golden[i].f,
            (unsigned long long)h, (unsigned long long)golden[i].h);
    }
  }

  static const ht_color_mode modes[] = { HT_COLOR_LUMA, HT_COLOR_PER_CHANNEL, HT_COLOR_PLANE_DEPENDENT,
                                         HT_COLOR_CMYK };
  for (int fi = 0; fi < test_nbuiltin(); fi++)
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++)
      for (int L = 2; L <= 4; L += 2) {
        ht_params p;
        ht_params_init(&p);
        p.filter = *test_builtin(fi);
        p.color = modes[m];
        p.levels = L;
        if (modes[m] == HT_COLOR_PLANE_DEPENDENT || modes[m] == HT_COLOR_CMYK)
          for (int j = 0; j < HT_MAX_PLANES; j++)
            p.plane_weights.forward[j] = p.plane_weights.backward[j] = 0.25;
        const int in_ch = modes[m] == HT_COLOR_LUMA ? 1 : 3;
        const int out_ch = modes[m] == HT_COLOR_CMYK ? 4 : in_ch;
        const uint8_t *in = in_ch == 1 ? gray : rgb;
        const size_t n = (size_t)W * H * (size_t)out_ch;

        /* strength 1 is the default's bits */
        ht_params d = p;
        d.strength = 1.0;
        CHECK(run(in, in_ch, &p, 1, HT_VARIANT_AUTO, a, out_ch) == HT_OK &&
                run(in, in_ch, &d, 3, HT_VARIANT_AUTO, b, out_ch) == HT_OK && memcmp(a, b, n) == 0,
              "%s, mode %d, %d levels: strength 1 differs from the default", p.filter.name, (int)modes[m], L);

        /* strength 0 is plain rounding: threshold's bits, plane by plane */
        ht_params z = p;
        z.strength = 0.0;
        CHECK(run(in, in_ch, &z, 2, HT_VARIANT_AUTO, a, out_ch) == HT_OK, "strength 0 run");
        if (modes[m] != HT_COLOR_CMYK) {
          ht_params t;
          ht_params_init(&t);
          ht_params_set_algorithm(&t, HT_ALGORITHM_THRESHOLD);
          t.levels = L;
          t.color = in_ch == 1 ? HT_COLOR_LUMA : HT_COLOR_PER_CHANNEL;
          CHECK(run(in, in_ch, &t, 1, HT_VARIANT_AUTO, b, out_ch) == HT_OK && memcmp(a, b, n) == 0,
                "%s, mode %d, %d levels: strength 0 differs from threshold", p.filter.name, (int)modes[m], L);
        }

        /* between: every variant, thread count and a split into bands agree */
        for (int k = 1; k <= 3; k++) {
          ht_params s = p;
          s.strength = k / 4.0 + 0.01;
          CHECK(run(in, in_ch, &s, 1, HT_VARIANT_AUTO, a, out_ch) == HT_OK, "run");
          const ht_method method = modes[m] == HT_COLOR_PLANE_DEPENDENT || modes[m] == HT_COLOR_CMYK
                                     ? HT_METHOD_PLANE_DEPENDENT
                                     : HT_METHOD_ERROR_DIFFUSION;
          ht_variant vs[TEST_MAX_VARIANTS];
          const int nv = test_variants(method, HT_BACKEND_CPU, vs, TEST_MAX_VARIANTS);
          for (int v = 0; v < nv; v++)
            for (int threads = 1; threads <= 4; threads++) {
              ht_params sv = s;
              if (vs[v] == HT_VARIANT_STREAM)
                continue; /* ht_run_band_stream's own; test-stream covers it */
              memset(b, 0xAA, n);
              ht_status st = run(in, in_ch, &sv, threads, vs[v], b, out_ch);
              if (st == HT_ERR_UNSUPPORTED)
                continue; /* a variant that does not take this filter */
              CHECK(st == HT_OK && memcmp(a, b, n) == 0, "%s, mode %d, %d levels, strength %g: %s on %d threads",
                    p.filter.name, (int)modes[m], L, s.strength, ht_variant_name(vs[v]), threads);
            }
          if (modes[m] == HT_COLOR_LUMA) {
            /* two bands, the errors carried across */
            const int cr = ht_carry_rows(&s), h1 = H / 3;
            int32_t *carry = xmalloc(sizeof *carry * (size_t)(cr > 0 ? cr : 1) * W);
            ht_context *ctx = ht_context_new();
            ht_image I1 = { W, h1, W, 1, HT_FORMAT_U8, gray }, O1 = { W, h1, W, 1, HT_FORMAT_U8, b };
            ht_image I2 = { W, H - h1, W, 1, HT_FORMAT_U8, gray + h1 * W },
                     O2 = { W, H - h1, W, 1, HT_FORMAT_U8, b + h1 * W };
            ht_band b1 = { 0, NULL, cr ? carry : NULL }, b2 = { h1, cr ? carry : NULL, NULL };
            CHECK(ht_run_band(ctx, &I1, &O1, &s, &b1) == HT_OK && ht_run_band(ctx, &I2, &O2, &s, &b2) == HT_OK &&
                    memcmp(a, b, n) == 0,
                  "%s, %d levels, strength %g: two bands differ from the whole", p.filter.name, L, s.strength);
            ht_context_free(ctx);
            free(carry);
            /* the reference written here */
            reference(gray, &p.filter, s.strength, L, b);
            CHECK(memcmp(a, b, n) == 0, "%s, %d levels, strength %g: differs from the reference", p.filter.name, L,
                  s.strength);
          }
        }
      }
  free(gray);
  free(rgb);
  free(a);
  free(b);
  return test_finish("strength");
}

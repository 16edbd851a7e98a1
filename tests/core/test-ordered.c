/* Ordered dithering (core/ordered/): the library's Bayer method against
 * a reference written here from the definition (the matrix built by
 * Bayer's doubling, B(2n) = [4B, 4B+2; 4B+3, 4B+1], not the library's
 * bit interleaving), the same bits on 1 to 5 threads, the planes of a
 * colour image on turned matrices, and the tone of flat grays. */
#include "ht-test.h"

#include <stdlib.h>
#include <string.h>

/* Bayer's matrix of side n by doubling, row-major. */
static int *bayer_matrix(int n)
{
  int *m = malloc(sizeof *m * (size_t)n * (size_t)n), *t = malloc(sizeof *t * (size_t)n * (size_t)n);
  m[0] = 0;
  for (int s = 1; s < n; s *= 2) {
    static const int quad[2][2] = { { 0, 2 }, { 3, 1 } }; /* [row][column] */
    for (int y = 0; y < 2 * s; y++)
      for (int x = 0; x < 2 * s; x++)
        t[y * 2 * s + x] = 4 * m[(y % s) * s + (x % s)] + quad[y / s][x / s];
    memcpy(m, t, sizeof *m * (size_t)(4 * s * s));
  }
  free(t);
  return m;
}

/* The level of 8-bit value v at (x, y) of plane p: v between levels i and
 * i + 1 with remainder r (of HT_FX_ONE), up where r passes the middle of
 * the pixel's 1/n^2 share of a level step; plane p's matrix is turned p
 * quarter turns. */
static int reference_level(const int *m, int n, int levels, int p, int x, int y, int v)
{
  const int a = x % n, b = y % n;
  const int turns = p & 3;
  const int tx = turns == 0 ? a : turns == 1 ? b : turns == 2 ? n - 1 - a : n - 1 - b;
  const int ty = turns == 0 ? b : turns == 1 ? n - 1 - a : turns == 2 ? n - 1 - b : a;
  const long long s = (long long)v * 257 * (levels - 1);
  const long long i = s / 65535, r = s % 65535;
  const long long t = ((2LL * m[ty * n + tx] + 1) * 65535) / (2LL * n * n);
  return (int)(i + (r > t));
}

static ht_status run(const uint8_t *in, int w, int h, int channels, ht_color_mode color, int levels, int n,
                     int threads, uint8_t *out)
{
  ht_context *ctx = ht_context_new();
  ht_context_set_threads(ctx, threads);
  ht_context_set_backend(ctx, HT_BACKEND_CPU);
  ht_params p;
  ht_params_init(&p);
  ht_params_set_algorithm(&p, HT_ALGORITHM_BAYER);
  p.levels = levels;
  p.mask_size = n;
  p.color = color;
  ht_image I = { w, h, (size_t)w * (size_t)channels, channels, HT_FORMAT_U8, (void *)(uintptr_t)in };
  ht_image O = { w, h, (size_t)w * (size_t)channels, channels, HT_FORMAT_U8, out };
  ht_status s = ht_run(ctx, &I, &O, &p);
  if (s != HT_OK)
    fprintf(stderr, "run: %s\n", ht_context_message(ctx));
  ht_context_free(ctx);
  return s;
}

int main(void)
{
  const int w = 301, h = 157;
  uint8_t *in = malloc((size_t)w * h * 3), *out = malloc((size_t)w * h * 3), *again = malloc((size_t)w * h * 3);
  srand(7);
  for (int i = 0; i < w * h * 3; i++)
    in[i] = (uint8_t)((i / 3 % w) * 255 / (w - 1) ^ (rand() & 15));
  for (int n = 2; n <= 256; n *= 2) {
    int *m = bayer_matrix(n);
    const int levels_list[3] = { 2, 3, 17 };
    for (int li = 0; li < 3; li++) {
      const int L = levels_list[li];
      CHECK(run(in, w, h, 3, HT_COLOR_PER_CHANNEL, L, n, 1, out) == HT_OK, "n %d levels %d", n, L);
      int bad = 0;
      for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
          for (int c = 0; c < 3; c++) {
            const int q = reference_level(m, n, L, c, x, y, in[(y * w + x) * 3 + c]);
            const int want = (q * 255 * 2 + (L - 1)) / (2 * (L - 1)); /* level q as an 8-bit value */
            bad += out[(y * w + x) * 3 + c] != want;
          }
      CHECK(bad == 0, "n %d, levels %d: %d samples differ from the reference", n, L, bad);
      for (int t = 2; t <= 5; t++) {
        CHECK(run(in, w, h, 3, HT_COLOR_PER_CHANNEL, L, n, t, again) == HT_OK, "threads %d", t);
        CHECK(memcmp(out, again, (size_t)w * h * 3) == 0, "n %d levels %d: %d threads differ from one", n, L, t);
      }
    }
    free(m);
  }
  /* flat grays keep their tone: an n x n tile has the exact share */
  for (int v = 0; v <= 255; v += 17) {
    uint8_t flat[64 * 64], res[64 * 64];
    memset(flat, v, sizeof flat);
    CHECK(run(flat, 64, 64, 1, HT_COLOR_LUMA, 2, 16, 0, res) == HT_OK, "flat %d", v);
    long sum = 0;
    for (int i = 0; i < 64 * 64; i++)
      sum += res[i] ? 1 : 0;
    const double share = (double)sum / (64 * 64), want = v / 255.0;
    CHECK(share > want - 1.0 / 256 - 1e-9 && share < want + 1.0 / 256 + 1e-9, "flat %d: %.4f white", v, share);
  }
  /* threshold: the nearest level of each pixel alone (ties to the lower
   * one), written here from the definition; 1 and 4 threads equal */
  {
    ht_context *ctx = ht_context_new();
    ht_context_set_threads(ctx, 1);
    for (int L = 2; L <= 256; L = L * 3 - 1) {
      ht_params p;
      ht_params_init(&p);
      CHECK(ht_params_set_algorithm(&p, HT_ALGORITHM_THRESHOLD) == HT_OK, "threshold: no such algorithm");
      p.levels = L;
      p.color = HT_COLOR_PER_CHANNEL;
      ht_image I = { w, h, (size_t)w * 3, 3, HT_FORMAT_U8, in };
      ht_image O = { w, h, (size_t)w * 3, 3, HT_FORMAT_U8, out };
      CHECK(ht_run(ctx, &I, &O, &p) == HT_OK, "threshold %d: %s", L, ht_context_message(ctx));
      int bad = 0;
      for (int i = 0; i < w * h * 3; i++) {
        const long long v = (long long)in[i] * 257; /* the nearest q: |v - q ONE/(L-1)| least, ties down */
        long long q = (2 * v * (L - 1) + 65534) / (2 * 65535);
        const int want = (int)((q * 255 * 2 + (L - 1)) / (2 * (L - 1)));
        bad += out[i] != want;
      }
      CHECK(bad == 0, "threshold, levels %d: %d samples differ from the reference", L, bad);
      ht_context_set_threads(ctx, 4);
      CHECK(ht_run(ctx, &I, &O, &p) == HT_OK, "threshold %d on 4 threads", L);
      int bad4 = 0;
      for (int i = 0; i < w * h * 3; i++) {
        const long long v = (long long)in[i] * 257;
        long long q = (2 * v * (L - 1) + 65534) / (2 * 65535);
        bad4 += out[i] != (int)((q * 255 * 2 + (L - 1)) / (2 * (L - 1)));
      }
      CHECK(bad4 == 0, "threshold, levels %d, 4 threads: %d samples differ", L, bad4);
      ht_context_set_threads(ctx, 1);
    }
    ht_context_free(ctx);
  }
  /* what the description refuses */
  {
    ht_context *ctx = ht_context_new();
    ht_params p;
    ht_params_init(&p);
    ht_params_set_algorithm(&p, HT_ALGORITHM_BAYER);
    p.mask_size = 12;
    CHECK(ht_check(ctx, &p) == HT_ERR_INVALID_ARGUMENT, "mask size 12 accepted");
    p.mask_size = 8;
    p.color = HT_COLOR_CMYK;
    CHECK(ht_check(ctx, &p) != HT_OK, "bayer in cmyk accepted");
    ht_context_free(ctx);
  }
  free(in);
  free(out);
  free(again);
  return test_finish("ordered");
}

/* Blue-noise masks and AM screens (core/ordered/): what makes a mask blue
 * noise, measured here against white noise of the same density (its
 * radially averaged power spectrum low at low frequencies, every level
 * a well-spread point set, no seam where it tiles), the cache giving what
 * is made fresh, a corrupt cache file ignored; a screen's output binary,
 * the mean of every gray of a ramp within 1 % of it, its dominant
 * frequency at the period and angle asked for; the same bits for 1 to 3
 * threads. */
#include "ht-test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static double power_low(const uint8_t *b, int n, int rmax, double *all);

/* The 2-D DFT's power of a 0/1 pattern (mean removed), separably. */
static double *power(const uint8_t *b, int n)
{
  double *re = calloc((size_t)n * n, sizeof *re), *im = calloc((size_t)n * n, sizeof *im);
  double *tr = calloc((size_t)n * n, sizeof *tr), *ti = calloc((size_t)n * n, sizeof *ti);
  double mean = 0;
  for (int i = 0; i < n * n; i++)
    mean += b[i];
  mean /= (double)n * n;
  for (int y = 0; y < n; y++) /* rows */
    for (int k = 0; k < n; k++) {
      double sr = 0, si = 0;
      for (int x = 0; x < n; x++) {
        const double a = -2 * M_PI * k * x / n;
        sr += (b[y * n + x] - mean) * cos(a);
        si += (b[y * n + x] - mean) * sin(a);
      }
      tr[y * n + k] = sr;
      ti[y * n + k] = si;
    }
  for (int k = 0; k < n; k++) /* columns */
    for (int l = 0; l < n; l++) {
      double sr = 0, si = 0;
      for (int y = 0; y < n; y++) {
        const double a = -2 * M_PI * l * y / n, c = cos(a), s = sin(a);
        sr += tr[y * n + k] * c - ti[y * n + k] * s;
        si += tr[y * n + k] * s + ti[y * n + k] * c;
      }
      re[l * n + k] = sr;
      im[l * n + k] = si;
    }
  for (int i = 0; i < n * n; i++)
    re[i] = re[i] * re[i] + im[i] * im[i];
  free(im);
  free(tr);
  free(ti);
  return re;
}

/* The mean power at radii 1..rmax (low frequencies) and, in *all, at
 * every radius but 0. */
static double power_low(const uint8_t *b, int n, int rmax, double *all)
{
  double *P = power(b, n), low = 0, tot = 0;
  int nlow = 0, ntot = 0;
  for (int l = 0; l < n; l++)
    for (int k = 0; k < n; k++) {
      const int fx = k <= n / 2 ? k : k - n, fy = l <= n / 2 ? l : l - n;
      const double r = sqrt((double)fx * fx + fy * fy);
      if (r < 0.5)
        continue;
      tot += P[l * n + k];
      ntot++;
      if (r <= rmax) {
        low += P[l * n + k];
        nlow++;
      }
    }
  free(P);
  *all = tot / ntot;
  return low / nlow;
}

/* The mean distance from each set cell of an n x n pattern to its
 * nearest set neighbour on the torus; *min gets the smallest. */
static double mean_nn(const uint8_t *b, int n, double *min)
{
  double sum = 0;
  int count = 0;
  *min = n;
  for (int i = 0; i < n * n; i++)
    if (b[i]) {
      int best = 4 * n * n;
      for (int j = 0; j < n * n; j++)
        if (b[j] && j != i) {
          int dx = abs(i % n - j % n), dy = abs(i / n - j / n);
          dx = dx < n - dx ? dx : n - dx;
          dy = dy < n - dy ? dy : n - dy;
          if (dx * dx + dy * dy < best)
            best = dx * dx + dy * dy;
        }
      sum += sqrt(best);
      count++;
      *min = sqrt(best) < *min ? sqrt(best) : *min;
    }
  return sum / count;
}

static void blue_noise_mask_tests(void)
{
  const int n = 64, N = n * n;
  uint32_t *rank = malloc(sizeof *rank * N), *again = malloc(sizeof *again * N);
  CHECK(ht_blue_noise_mask(n, 7, false, rank, NULL, 0) == HT_OK, "mask 64");
  uint8_t *seen = calloc(N, 1);
  int perm = 1;
  for (int i = 0; i < N; i++) {
    perm &= rank[i] < (uint32_t)N && !seen[rank[i]];
    if (rank[i] < (uint32_t)N)
      seen[rank[i]] = 1;
  }
  CHECK(perm, "the ranks are not a permutation of 0..n^2-1");
  CHECK(ht_blue_noise_mask(n, 7, false, again, NULL, 0) == HT_OK && memcmp(rank, again, sizeof *rank * N) == 0,
        "the same seed gives another mask");
  CHECK(ht_blue_noise_mask(n, 8, false, again, NULL, 0) == HT_OK && memcmp(rank, again, sizeof *rank * N) != 0,
        "another seed gives the same mask");
  CHECK(ht_blue_noise_mask(48, 7, false, again, NULL, 0) == HT_ERR_INVALID_ARGUMENT, "size 48 accepted");

  /* every level: its minority points spread (below a quarter of the
   * cells: the mean distance to the nearest neighbour a quarter more than
   * white noise's, the smallest no less) and its spectrum low at low frequencies (radius <= n/8, below a
   * quarter of white noise's there, which is flat) */
  uint64_t s = 12345;
  uint8_t *b = malloc(N), *w = malloc(N);
  for (int j = 1; j < 32; j++) {
    const int k = N * j / 32, m = k < N - k ? k : N - k;
    for (int i = 0; i < N; i++)
      b[i] = (rank[i] < (uint32_t)k) == (k <= N / 2);
    int placed = 0; /* white noise: m cells drawn at random */
    memset(w, 0, N);
    while (placed < m) {
      const int i = (int)(rng_next(&s) % (uint64_t)N);
      placed += !w[i];
      w[i] = 1;
    }
    double bmin, wmin;
    const double bnn = mean_nn(b, n, &bmin), wnn = mean_nn(w, n, &wmin);
    /* where points may touch (a quarter of the cells and more), every
     * pattern has neighbours 1 apart: the spectrum says it there */
    CHECK(4 * m >= N || (bnn >= 1.25 * wnn && bmin >= wmin), "level %d/32: nearest neighbours %.3f apart on average, %.3f at least; "
          "white noise %.3f, %.3f", j, bnn, bmin, wnn, wmin);
    double ball, wall;
    const double blow = power_low(b, n, n / 8, &ball), wlow = power_low(w, n, n / 8, &wall);
    CHECK(blow < 0.25 * wlow, "level %d/32: low-frequency power %g, white noise's %g", j, blow, wlow);
    CHECK(blow < 0.25 * ball, "level %d/32: low-frequency power %g, mean %g", j, blow, ball);
    if (j % 8 == 4)
      printf("level %d/32: nearest neighbour %.3f (white noise %.3f), low-frequency power %.3f of white noise's\n",
             j, bnn, wnn, blow / wlow);
  }
  free(b);
  free(w);

  /* the cache: made and written, read back, a corrupt file remade */
  char dir[] = "/tmp/ht-test-cache-XXXXXX";
  CHECK(mkdtemp(dir) != NULL, "mkdtemp");
  setenv("XDG_CACHE_HOME", dir, 1);
  char path[512];
  snprintf(path, sizeof path, "%s/gegl-halftone/blue-noise-v1-64-0000000000000007.bin", dir);
  CHECK(ht_blue_noise_mask(n, 7, true, again, NULL, 0) == HT_OK && memcmp(rank, again, sizeof *rank * N) == 0,
        "cached mask differs from the one made fresh");
  struct stat st;
  CHECK(stat(path, &st) == 0 && st.st_size == 32 + 4 * N, "no cache file %s of %d bytes", path, 32 + 4 * N);
  for (int seed = 100; seed < 104; seed++) /* pushes seed 7 out of the process's memory */
    CHECK(ht_blue_noise_mask(16, (uint64_t)seed, true, again, NULL, 0) == HT_OK, "mask 16 seed %d", seed);
  memset(again, 0, sizeof *again * N);
  CHECK(ht_blue_noise_mask(n, 7, true, again, NULL, 0) == HT_OK && memcmp(rank, again, sizeof *rank * N) == 0,
        "mask read from the cache file differs from the one made fresh");
  /* corrupt: one rank changed in place, then a file cut short */
  for (int round = 0; round < 2; round++) {
    for (int seed = 200; seed < 204; seed++)
      ht_blue_noise_mask(16, (uint64_t)seed + 10 * (uint64_t)round, true, again, NULL, 0);
    FILE *f = fopen(path, round == 0 ? "r+b" : "wb");
    CHECK(f != NULL, "open %s", path);
    if (f) {
      if (round == 0) {
        fseek(f, 32 + 4 * 100, SEEK_SET);
        fputc(0x55, f);
      } else {
        fputs("HTBN", f);
      }
      fclose(f);
    }
    memset(again, 0, sizeof *again * N);
    CHECK(ht_blue_noise_mask(n, 7, true, again, NULL, 0) == HT_OK && memcmp(rank, again, sizeof *rank * N) == 0,
          "a corrupt cache file (%s) gave another mask", round == 0 ? "a rank changed" : "cut short");
    CHECK(stat(path, &st) == 0 && st.st_size == 32 + 4 * N, "the corrupt file was not written anew");
  }
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  CHECK(system(cmd) == 0, "rm");
  unsetenv("XDG_CACHE_HOME");
  free(seen);
  free(rank);
  free(again);
}

static ht_status run(ht_params *p, const uint8_t *in, int w, int h, int channels, int threads, uint8_t *out)
{
  ht_context *ctx = ht_context_new();
  ht_context_set_threads(ctx, threads);
  ht_context_set_backend(ctx, HT_BACKEND_CPU);
  ht_image I = { w, h, (size_t)w * (size_t)channels, channels, HT_FORMAT_U8, (void *)(uintptr_t)in };
  ht_image O = { w, h, (size_t)w * (size_t)channels, channels, HT_FORMAT_U8, out };
  ht_status s = ht_run(ctx, &I, &O, p);
  if (s != HT_OK)
    fprintf(stderr, "run: %s\n", ht_context_message(ctx));
  ht_context_free(ctx);
  return s;
}

/* The method through ht_run: threads, planes, seams where the mask tiles. */
static void blue_noise_method_tests(void)
{
  setenv("XDG_CACHE_HOME", "/nonexistent/ht-test", 1); /* no cache: made every time, still right */
  const int w = 150, h = 97;
  uint8_t *in = malloc((size_t)w * h * 3), *out = malloc((size_t)w * h * 3), *again = malloc((size_t)w * h * 3);
  uint64_t s = 99;
  for (int i = 0; i < w * h * 3; i++)
    in[i] = (uint8_t)((i / 3 % w) * 255 / (w - 1) ^ (rng_next(&s) & 7));
  ht_params p;
  ht_params_init(&p);
  CHECK(ht_params_set_algorithm(&p, HT_ALGORITHM_BLUE_NOISE) == HT_OK, "no blue-noise algorithm");
  p.noise_size = 32;
  p.seed = 5;
  p.color = HT_COLOR_PER_CHANNEL;
  for (int L = 2; L <= 5; L += 3) {
    p.levels = L;
    CHECK(run(&p, in, w, h, 3, 1, out) == HT_OK, "levels %d", L);
    for (int t = 2; t <= 3; t++) {
      CHECK(run(&p, in, w, h, 3, t, again) == HT_OK, "threads %d", t);
      CHECK(memcmp(out, again, (size_t)w * h * 3) == 0, "levels %d: %d threads differ from one", L, t);
    }
    /* the reference: plane c reads the mask shifted (c = 1: both, 2: x) */
    uint32_t *rank = malloc(sizeof *rank * 32 * 32);
    CHECK(ht_blue_noise_mask(32, 5, false, rank, NULL, 0) == HT_OK, "mask");
    int bad = 0;
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++)
        for (int c = 0; c < 3; c++) {
          const int ox = c == 1 || c == 2 ? 16 : 0, oy = c == 1 ? 16 : 0;
          const long long r = rank[((y + oy) % 32) * 32 + (x + ox) % 32];
          const long long t = ((2 * r + 1) * 65535) / (2 * 1024);
          const long long v = (long long)in[(y * w + x) * 3 + c] * 257 * (L - 1);
          const int q = (int)(v / 65535 + (v % 65535 > t)), want = (2 * q * 255 + L - 1) / (2 * (L - 1));
          bad += out[(y * w + x) * 3 + c] != want;
        }
    CHECK(bad == 0, "levels %d: %d samples differ from the reference", L, bad);
    free(rank);
  }
  /* a flat gray over four tiles of the mask: no two dots closer across
   * the seams than inside (the whole image, not on a torus) */
  const int n = 32, side = 2 * n;
  uint8_t *flat = malloc((size_t)side * side), *res = malloc((size_t)side * side);
  memset(flat, 255 - 32, (size_t)side * side); /* 1/8 black */
  p.levels = 2;
  p.color = HT_COLOR_LUMA;
  CHECK(run(&p, flat, side, side, 1, 0, res) == HT_OK, "flat");
  int best = 1 << 30, inner = 1 << 30;
  for (int i = 0; i < side * side; i++)
    for (int j = i + 1; j < side * side; j++)
      if (!res[i] && !res[j]) {
        const int dx = i % side - j % side, dy = i / side - j / side, d = dx * dx + dy * dy;
        best = d < best ? d : best;
        if (i % side < n && j % side < n && i / side < n && j / side < n)
          inner = d < inner ? d : inner;
      }
  CHECK(best >= inner && best >= 2, "dots %g apart across the seams, %g inside one tile", sqrt(best), sqrt(inner));
  unsetenv("XDG_CACHE_HOME");
  free(flat);
  free(res);
  free(in);
  free(out);
  free(again);
}

static void screen_tests(void)
{
  ht_params p;
  ht_params_init(&p);
  CHECK(ht_params_set_algorithm(&p, HT_ALGORITHM_SCREEN) == HT_OK, "no screen algorithm");
  p.dpi = 600;
  p.lpi = 60;
  /* a ramp: every fifth 8-bit gray a band of 320 x 320 pixels (32 x 32
   * cells); each band's mean within 1 % of full scale of its gray, for
   * every dot and some angles */
  const int bw = 320, h = 320, nb = 52, w = nb * bw;
  uint8_t *in = malloc((size_t)w * h), *out = malloc((size_t)w * h), *again = malloc((size_t)w * h);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      in[y * w + x] = (uint8_t)(x / bw * 5);
  const double angles[] = { 45, 15, 0, 75, 33.3 };
  for (int dot = HT_DOT_ROUND; dot <= HT_DOT_EUCLIDEAN; dot++)
    for (int a = 0; a < 5; a++) {
      if (dot != HT_DOT_ROUND && a > 1)
        continue;
      p.dot = dot;
      p.angle = angles[a];
      CHECK(run(&p, in, w, h, 1, 0, out) == HT_OK, "dot %d angle %g", dot, angles[a]);
      int binary = 1;
      double worst = 0;
      int worst_g = 0;
      for (int band = 0; band < nb; band++) {
        const int g = band * 5;
        double sum = 0;
        for (int y = 0; y < h; y++)
          for (int x = band * bw; x < (band + 1) * bw; x++) {
            binary &= out[y * w + x] == 0 || out[y * w + x] == 255;
            sum += out[y * w + x];
          }
        const double err = fabs(sum / (bw * h) - g) / 255;
        if (err > worst) {
          worst = err;
          worst_g = g;
        }
      }
      CHECK(binary, "dot %d angle %g: gray pixels in binary output", dot, angles[a]);
      CHECK(worst <= 0.01, "dot %d angle %g: gray %d comes out %.2f %% off", dot, angles[a], worst_g, 100 * worst);
      if (a == 0)
        printf("screen dot %d: tone response within %.3f %% (worst at gray %d)\n", dot, 100 * worst, worst_g);
    }
  /* threads and levels */
  p.dot = HT_DOT_EUCLIDEAN;
  p.angle = 15;
  for (int L = 2; L <= 4; L += 2) {
    p.levels = L;
    CHECK(run(&p, in, 1000, 300, 1, 1, out) == HT_OK, "levels %d", L);
    for (int t = 2; t <= 3; t++) {
      CHECK(run(&p, in, 1000, 300, 1, t, again) == HT_OK, "threads %d", t);
      CHECK(memcmp(out, again, 1000 * 300) == 0, "screen, levels %d: %d threads differ from one", L, t);
    }
  }
  /* geometry: a flat 50 % gray's strongest frequency at 1/period in the
   * screen's direction (modulo a quarter turn: the grid is square) */
  const int n = 128;
  p.levels = 2;
  p.dot = HT_DOT_ROUND;
  for (int a = 0; a < 3; a++) {
    const double angle = a == 0 ? 0 : a == 1 ? 15 : 37.5, period = 8.0;
    p.angle = angle;
    p.dpi = 480;
    p.lpi = 480 / period;
    uint8_t *flat = malloc((size_t)n * n), *res = malloc((size_t)n * n);
    memset(flat, 128, (size_t)n * n);
    CHECK(run(&p, flat, n, n, 1, 0, res) == HT_OK, "flat");
    for (int i = 0; i < n * n; i++)
      res[i] = res[i] != 0;
    double *P = power(res, n), best = 0;
    int bk = 0, bl = 0;
    for (int l = 0; l < n; l++)
      for (int k = 0; k < n; k++)
        if ((k || l) && P[l * n + k] > best) {
          best = P[l * n + k];
          bk = k;
          bl = l;
        }
    free(P);
    const int fx = bk <= n / 2 ? bk : bk - n, fy = bl <= n / 2 ? bl : bl - n;
    const double r = sqrt((double)fx * fx + fy * fy), want = n / period;
    double dir = fmod(atan2(-fy, fx) * 180 / M_PI + 360.0, 90.0), off = fabs(dir - fmod(angle, 90.0));
    off = off < 90 - off ? off : 90 - off;
    CHECK(fabs(r - want) <= 1.0, "angle %g: strongest frequency %g cycles, want %g", angle, r, want);
    CHECK(off <= 4.0, "angle %g: strongest frequency at %g degrees", angle, dir);
    free(flat);
    free(res);
  }
  /* cells under 2 pixels are refused, with a reason */
  p.dpi = 100;
  p.lpi = 80;
  CHECK(run(&p, in, 16, 16, 1, 1, out) == HT_ERR_INVALID_ARGUMENT, "lpi 80 at 100 dpi accepted");
  free(in);
  free(out);
  free(again);
}

int main(void)
{
  blue_noise_mask_tests();
  blue_noise_method_tests();
  screen_tests();
  return test_finish("screens");
}

/* ht-bench-search-gpu: the search methods on the GPU against the CPU, end
 * to end through ht_run (as the CLI runs them: the input in host memory,
 * the initial image, upload, rounds, download), for BENCHMARKS.md,
 * "Search methods on the GPU".
 *
 *   ht-bench-search-gpu [options] IMAGE.pgm SIZE METHOD M
 *
 * IMAGE's centre square is resized to SIZE x SIZE (bilinear, pixel
 * centres aligned, as ht-mkimage does); METHOD is les, pes or dbs; M the
 * window. Runs the GPU (les-gpu, ...) `--reps` times and the CPU once on
 * `--threads` threads (0: every core; --no-cpu skips it), checks that
 * their bits are equal, and prints one line: seconds (the GPU's median),
 * their ratio, rounds, windows searched and changed, and the paper's
 * average error (0..255). The GPU is opened by a run on a tiny image
 * first; that time is printed on its own line. */
#include "halftone.h"
#include "bench-internal.h" /* the last search run's counters (ht_sx_last_*) */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static uint8_t *read_pgm(const char *path, int *w, int *h)
{
  FILE *f = fopen(path, "rb");
  int maxv = 0;
  if (!f || fscanf(f, "P5 %d %d %d", w, h, &maxv) != 3 || maxv != 255 || *w <= 0 || *h <= 0 || fgetc(f) == EOF) {
    fprintf(stderr, "ht-bench-search-gpu: %s is not an 8-bit binary PGM\n", path);
    if (f)
      fclose(f);
    return NULL;
  }
  uint8_t *p = malloc((size_t)*w * (size_t)*h);
  if (!p || fread(p, 1, (size_t)*w * (size_t)*h, f) != (size_t)*w * (size_t)*h) {
    fprintf(stderr, "ht-bench-search-gpu: %s is short\n", path);
    free(p);
    fclose(f);
    return NULL;
  }
  fclose(f);
  return p;
}

/* The centre square of src, bilinear to n x n. */
static uint8_t *square(const uint8_t *src, int w, int h, int n)
{
  const int s = w < h ? w : h, ox = (w - s) / 2, oy = (h - s) / 2;
  uint8_t *d = malloc((size_t)n * (size_t)n);
  if (!d)
    return NULL;
  const double k = (double)s / n;
  for (int y = 0; y < n; y++)
    for (int x = 0; x < n; x++) {
      double fx = (x + 0.5) * k - 0.5, fy = (y + 0.5) * k - 0.5;
      fx = fx < 0 ? 0 : fx > s - 1 ? s - 1 : fx;
      fy = fy < 0 ? 0 : fy > s - 1 ? s - 1 : fy;
      const int x0 = (int)fx, y0 = (int)fy, x1 = x0 + 1 < s ? x0 + 1 : x0, y1 = y0 + 1 < s ? y0 + 1 : y0;
      const double ax = fx - x0, ay = fy - y0;
      const double v = (1 - ay) * ((1 - ax) * src[(oy + y0) * w + ox + x0] + ax * src[(oy + y0) * w + ox + x1]) +
                       ay * ((1 - ax) * src[(oy + y1) * w + ox + x0] + ax * src[(oy + y1) * w + ox + x1]);
      d[(size_t)y * n + x] = (uint8_t)(v + 0.5);
    }
  return d;
}

static int cmp(const void *a, const void *b)
{
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* One run; seconds, or -1 on failure. */
static double run(ht_context *ctx, const uint8_t *in, uint8_t *out, int n, const ht_params *p)
{
  ht_image I = { n, n, (size_t)n, 1, HT_FORMAT_U8, (void *)(uintptr_t)in };
  ht_image O = { n, n, (size_t)n, 1, HT_FORMAT_U8, out };
  const double t0 = now();
  const ht_status s = ht_run(ctx, &I, &O, p);
  const double t = now() - t0;
  if (s != HT_OK) {
    fprintf(stderr, "ht-bench-search-gpu: %s\n", ht_context_message(ctx));
    return -1;
  }
  return t;
}

int main(int argc, char **argv)
{
  int reps = 3, threads = 0, max_rounds = 0, cpu = 1, a = 1;
  ht_search_init init = HT_INIT_FLOYD_STEINBERG;
  for (; a < argc && argv[a][0] == '-'; a++) {
    if (!strcmp(argv[a], "--reps") && a + 1 < argc)
      reps = atoi(argv[++a]);
    else if (!strcmp(argv[a], "--threads") && a + 1 < argc)
      threads = atoi(argv[++a]);
    else if (!strcmp(argv[a], "--max-rounds") && a + 1 < argc)
      max_rounds = atoi(argv[++a]);
    else if (!strcmp(argv[a], "--init") && a + 1 < argc)
      init = strcmp(argv[++a], "random") ? HT_INIT_FLOYD_STEINBERG : HT_INIT_RANDOM;
    else if (!strcmp(argv[a], "--no-cpu"))
      cpu = 0;
    else {
      fprintf(stderr, "ht-bench-search-gpu: unknown option %s\n", argv[a]);
      return 2;
    }
  }
  if (argc - a != 4 || reps < 1 || reps > 100) {
    fprintf(stderr, "usage: ht-bench-search-gpu [--reps N] [--threads N] [--max-rounds N] [--init fs|random] "
                    "[--no-cpu] IMAGE.pgm SIZE les|pes|dbs M\n");
    return 2;
  }
  int w, h;
  uint8_t *src = read_pgm(argv[a], &w, &h);
  const int n = atoi(argv[a + 1]), m = atoi(argv[a + 3]);
  const char *method = argv[a + 2];
  if (!src || n < 1 || n > 16384)
    return 2;
  uint8_t *in = square(src, w, h, n), *g = malloc((size_t)n * n), *c = malloc((size_t)n * n);
  if (!in || !g || !c)
    return 2;
  ht_params p;
  ht_params_init(&p);
  p.method = !strcmp(method, "les") ? HT_METHOD_LES : !strcmp(method, "pes") ? HT_METHOD_PES : HT_METHOD_DBS;
  p.objective = HT_OBJECTIVE_LES; /* the GPU's (the filtered one runs on the CPU) */
  p.window = m;
  p.init = init;
  p.max_rounds = max_rounds;

  ht_context *gctx = ht_context_new();
  ht_context_set_backend(gctx, HT_BACKEND_CUDA);
  {
    uint8_t t[4] = { 1, 2, 3, 4 }, o[4];
    ht_params q = p;
    q.method = HT_METHOD_DBS;
    const double open_s = run(gctx, t, o, 2, &q);
    if (open_s < 0)
      return 1;
    printf("# GPU opened in %.3f s (a 2x2 DBS run included)\n", open_s);
  }
  double times[100];
  for (int r = 0; r < reps; r++)
    if ((times[r] = run(gctx, in, g, n, &p)) < 0)
      return 1;
  const long long rounds = atomic_load(&ht_sx_last_rounds), searched = atomic_load(&ht_sx_last_searched),
                  changed = atomic_load(&ht_sx_last_changed);
  qsort(times, (size_t)reps, sizeof times[0], cmp);
  const double gpu_s = times[reps / 2];
  double cpu_s = -1;
  int equal = -1;
  if (cpu) {
    ht_context *cctx = ht_context_new();
    ht_context_set_backend(cctx, HT_BACKEND_CPU);
    ht_context_set_threads(cctx, threads);
    cpu_s = run(cctx, in, c, n, &p);
    ht_context_free(cctx);
    if (cpu_s < 0)
      return 1;
    equal = memcmp(g, c, (size_t)n * n) == 0;
  }
  double err = -1;
  ht_compute_eye_error(in, (size_t)n, g, (size_t)n, n, n, &p.eye, &err);
  printf("%s m=%d %dx%d init=%s  gpu %.3f s (min %.3f, max %.3f)  cpu %.3f s  cpu/gpu %.1f  rounds %lld  "
         "searched %lld  changed %lld  error %.3f  equal %s\n",
         method, m, n, n, init == HT_INIT_RANDOM ? "random" : "fs", gpu_s, times[0], times[reps - 1], cpu_s,
         cpu_s > 0 ? cpu_s / gpu_s : 0.0, rounds, searched, changed, err, equal < 0 ? "-" : equal ? "yes" : "NO");
  ht_context_free(gctx);
  free(src);
  free(in);
  free(g);
  free(c);
  return equal == 0 ? 1 : 0;
}

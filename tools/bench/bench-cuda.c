/* ht-bench-cuda: the GPU benchmark (Kasagi et al. Table V (2)-(5) and
 * ours). Floyd-Steinberg, binary, 8-bit input, square images 1K..16K:
 *  - kernel times of the paper's twelve variants (cuda/paper_*.cu) and of
 *    gpu-fast, device events, median of --reps runs, every output checked
 *    against the CPU reference (core/diffusion/ed.c);
 *  - the dependency-chain floor: one band's time per step (a latency
 *    probe) times the steps of the longest chain, W + K*H;
 *  - host <-> device transfers of n bytes (pinned);
 *  - end to end through the library (ht_run, backend cuda): 8-bit in to
 *    8-bit out and to packed 1-bit, from pinned and from ordinary memory.
 * Prints a Markdown section (the figures of the paper beside ours).
 *   ht-bench-cuda [--sizes 1,2,4,...] [--reps N] [--no-paper] [--out FILE]
 * Exits 77 when no GPU is usable. */
#include "halftone.h"
/* cuda/module.h is the CUDA module's ABI (the versioned table that
 * core/cuda_loader.c loads, HT_CUDA_ABI), not libhalftone's API: this
 * benchmark opens the module itself and calls its kernel and transfer
 * hooks straight, so it depends on that ABI and is rebuilt with it. */
#include "module.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef HT_CUDA_MODULE_BUILD
#define HT_CUDA_MODULE_BUILD "libhalftone-cuda.so"
#endif

#define NSIZES 12
static const int paper_sizes[NSIZES] = { 1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16 };
/* Table V of the paper, GeForce GTX 780 Ti, ms; rows (2)-(5). */
static const char *const row_names[12] = {
  "3-D PED (low parallelism)", "2-D PED with atomicAdd", "2-D PED with double kernel calls", "2-D PEC",
  "3-D PED, permuted", "2-D PED atomicAdd, permuted", "2-D PED double, permuted", "2-D PEC, permuted",
  "PB 2-D PED", "PB 2-D PED with RC", "PB 2-D PEC", "PB 2-D PEC with RC",
};
static const double paper_ms[14][NSIZES] = {
  { 32.23, 68.50, 99.50, 140.5, 167.3, 232.2, 257.2, 304.3, 383.0, 501.1, 613.8, 805.8 },
  { 23.43, 56.14, 78.35, 107.4, 128.3, 165.4, 199.5, 233.2, 306.2, 421.1, 589.1, 796.1 },
  { 40.49, 82.42, 127.1, 173.8, 224.4, 282.6, 332.9, 403.8, 528.7, 691.3, 941.9, 1254 },
  { 17.41, 35.27, 53.16, 78.28, 115.3, 136.9, 158.9, 191.6, 261.7, 357.1, 476.2, 650.5 },
  { 18.77, 37.56, 57.76, 77.40, 99.29, 119.8, 150.5, 162.5, 212.0, 258.2, 305.0, 355.5 },
  { 14.06, 28.37, 42.35, 55.63, 71.12, 86.75, 101.6, 127.0, 155.0, 209.9, 227.9, 266.8 },
  { 24.26, 49.43, 81.12, 98.80, 125.7, 186.8, 195.8, 203.9, 266.8, 353.2, 404.1, 448.6 },
  { 14.28, 26.10, 39.10, 51.33, 65.92, 85.26, 94.04, 118.0, 146.5, 176.5, 207.7, 260.6 },
  { 2.192, 4.559, 6.944, 9.298, 11.66, 14.13, 16.64, 19.09, 24.21, 29.74, 35.27, 56.27 },
  { 1.891, 3.945, 5.976, 7.993, 10.04, 12.19, 14.30, 16.45, 24.26, 29.59, 35.05, 55.77 },
  { 2.009, 4.365, 6.519, 8.748, 10.94, 13.37, 15.65, 18.12, 22.98, 28.88, 34.26, 51.36 },
  { 1.847, 3.919, 6.000, 8.097, 10.08, 12.26, 14.25, 16.63, 21.07, 26.33, 31.32, 46.75 },
  { 0.2979, 0.8501, 1.834, 3.346, 4.782, 6.855, 9.245, 12.39, 18.92, 29.82, 38.43, 49.83 }, /* H->G */
  { 0.3107, 0.8529, 1.828, 3.389, 4.896, 7.386, 9.475, 12.36, 19.95, 30.85, 39.97, 54.75 }, /* G->H */
};

static double now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_d(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
  qsort(v, (size_t)n, sizeof *v, cmp_d);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void *xmalloc(size_t n)
{
  void *p = malloc(n ? n : 1);
  if (!p) {
    fprintf(stderr, "ht-bench-cuda: out of memory (%zu bytes)\n", n);
    exit(1);
  }
  return p;
}

/* A smooth image with texture: every error size occurs, nothing is flat. */
static void make_image(uint8_t *p, int n)
{
  uint64_t s = 88172645463325252ULL;
  for (int y = 0; y < n; y++)
    for (int x = 0; x < n; x++) {
      s ^= s << 13;
      s ^= s >> 7;
      s ^= s << 17;
      int v = (int)((x * 191LL / n + y * 64LL / n) + (int)(s & 31) - 16);
      p[(size_t)y * (size_t)n + (size_t)x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
    }
}

static ht_filter fs(void) { return *ht_filter_builtin(HT_FILTER_FLOYD_STEINBERG); }

/* One end-to-end figure through ht_run. */
static double e2e(ht_context *ctx, const uint8_t *in, void *out, int n, ht_format of, int reps, int *ok,
                  const uint8_t *ref)
{
  ht_params p;
  ht_params_init(&p);
  p.variant = HT_VARIANT_GPU_FAST;
  ht_image ii = { n, n, (size_t)n, 1, HT_FORMAT_U8, (void *)(uintptr_t)in };
  ht_image oo = { n, n, ht_format_row_bytes(of, n, 1), 1, of, out };
  double t[64];
  if (reps > 64)
    reps = 64;
  *ok = 1;
  for (int r = -1; r < reps; r++) {
    double t0 = now_ms();
    if (ht_run(ctx, &ii, &oo, &p) != HT_OK) {
      fprintf(stderr, "ht-bench-cuda: end-to-end run failed: %s\n", ht_context_message(ctx));
      *ok = 0;
      return 0;
    }
    if (r >= 0)
      t[r] = now_ms() - t0;
  }
  /* check against the reference levels */
  const uint8_t *o = out;
  size_t rb = oo.stride;
  for (int y = 0; y < n && *ok; y++)
    for (int x = 0; x < n; x++) {
      int lv = ref[(size_t)y * (size_t)n + (size_t)x];
      int got = of == HT_FORMAT_BIT1 ? !((o[(size_t)y * rb + (size_t)(x >> 3)] >> (7 - (x & 7))) & 1)
                                     : o[(size_t)y * rb + (size_t)x] != 0;
      if (got != lv) {
        *ok = 0;
        break;
      }
    }
  return median(t, reps);
}

int main(int argc, char **argv)
{
  int sizes[NSIZES], nsizes = 0, reps = 5, paper = 1;
  const char *outpath = NULL;
  for (int i = 0; i < NSIZES; i++)
    sizes[nsizes++] = paper_sizes[i];
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
      nsizes = 0;
      for (char *t = strtok(argv[++i], ","); t && nsizes < NSIZES; t = strtok(NULL, ","))
        sizes[nsizes++] = atoi(t);
    } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
      reps = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--no-paper")) {
      paper = 0;
    } else if (!strcmp(argv[i], "--out") && i + 1 < argc) {
      outpath = argv[++i];
    } else {
      fprintf(stderr, "usage: %s [--sizes 1,2,4,...] [--reps N] [--no-paper] [--out FILE]\n", argv[0]);
      return 2;
    }
  }
  if (reps < 1)
    reps = 1;
  const char *path = getenv("HT_CUDA_MODULE");
  if (!path || !path[0])
    path = HT_CUDA_MODULE_BUILD;
  setenv("HT_CUDA_MODULE", path, 1); /* the library loads the same module */
  void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!dl) {
    printf("skipped: cannot load %s: %s\n", path, dlerror());
    return 77;
  }
  ht_cuda_entry_fn entry;
  *(void **)&entry = dlsym(dl, HT_CUDA_ENTRY);
  const ht_cuda_module_api *api = entry ? entry(HT_CUDA_ABI) : NULL;
  if (!api) {
    fprintf(stderr, "ht-bench-cuda: %s is not a CUDA module of ABI %d\n", path, HT_CUDA_ABI);
    return 1;
  }
  void *dev = NULL;
  char msg[256] = "";
  if (api->open(&dev, msg, sizeof msg) != HT_CUDA_OK) {
    printf("skipped: %s\n", msg);
    return 77;
  }
  ht_cuda_info info;
  api->info(dev, &info);
  char date[64];
  time_t tt = time(NULL);
  strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&tt));
  fprintf(stderr, "device: %s, cc %d.%d, %d SMs, driver %d, runtime %d\n", info.name, info.cc_major, info.cc_minor,
          info.multiprocessors, info.driver_version, info.runtime_version);

  ht_filter f = fs();
  ht_context *cpu = ht_context_new(), *gpu = ht_context_new();
  ht_context_set_backend(cpu, HT_BACKEND_CPU);
  ht_context_set_backend(gpu, HT_BACKEND_CUDA);

  double probe_ns = 0;
  if (api->bench_probe(dev, 1 << 20, &probe_ns, msg, sizeof msg) != HT_CUDA_OK)
    fprintf(stderr, "probe failed: %s\n", msg);
  fprintf(stderr, "latency probe: %.2f ns per dependent step of a band\n", probe_ns);

  double kern[13][NSIZES], floor_ms[NSIZES], h2d[NSIZES], d2h[NSIZES], e2e_ms[4][NSIZES];
  int exact[13][NSIZES], e2e_ok[4][NSIZES];
  memset(kern, 0, sizeof kern);
  memset(exact, 0, sizeof exact);
  memset(e2e_ms, 0, sizeof e2e_ms);
  memset(e2e_ok, 0, sizeof e2e_ok);
  int mismatches = 0, compared = 0;
  for (int si = 0; si < nsizes; si++) {
    const int n = sizes[si] * 1024;
    const size_t np = (size_t)n * (size_t)n;
    uint8_t *in = xmalloc(np), *ref = xmalloc(np), *lv = xmalloc(np);
    uint16_t *in16 = xmalloc(np * 2);
    make_image(in, n);
    for (size_t i = 0; i < np; i++)
      in16[i] = (uint16_t)(in[i] * 257);
    ht_params p;
    ht_params_init(&p);
    p.variant = HT_VARIANT_ED;
    double t0 = now_ms();
    if (ht_run_plane(cpu, in16, (size_t)n * 2, ref, (size_t)n, n, n, &p) != HT_OK) {
      fprintf(stderr, "cpu reference failed: %s\n", ht_context_message(cpu));
      return 1;
    }
    fprintf(stderr, "%dK: cpu reference (ed) %.0f ms\n", sizes[si], now_ms() - t0);
    free(in16);
    for (int v = 0; v < 13; v++) {
      if (v > 0 && !paper)
        continue;
      memset(lv, 0xee, np);
      double ms = 0;
      const int kreps = v >= 1 && v <= 8 && n >= 8192 ? (reps + 1) / 2 : reps;
      int r = api->bench_kernel(dev, v, &f, 2, in, n, n, kreps, lv, &ms, msg, sizeof msg);
      if (r != HT_CUDA_OK) {
        fprintf(stderr, "%dK %s: %s\n", sizes[si], v ? row_names[v - 1] : "gpu-fast", msg);
        kern[v][si] = -1;
        continue;
      }
      kern[v][si] = ms;
      exact[v][si] = memcmp(lv, ref, np) == 0;
      compared++;
      mismatches += !exact[v][si];
      fprintf(stderr, "%dK %-34s %10.3f ms %s\n", sizes[si], v ? row_names[v - 1] : "gpu-fast (ours)", ms,
              exact[v][si] ? "exact" : "DIFFERS FROM CPU");
    }
    floor_ms[si] = probe_ns * (double)(n + 2 * n) / 1e6;
    if (api->bench_transfer(dev, np, reps, &h2d[si], &d2h[si], msg, sizeof msg) != HT_CUDA_OK)
      fprintf(stderr, "transfer: %s\n", msg);
    /* end to end: pinned and ordinary memory, 8-bit and packed output */
    for (int pinned = 1; pinned >= 0; pinned--) {
      uint8_t *hin = pinned ? api->host_alloc(dev, np) : xmalloc(np);
      uint8_t *hout = pinned ? api->host_alloc(dev, np) : xmalloc(np);
      if (!hin || !hout) {
        fprintf(stderr, "host allocation failed\n");
        return 1;
      }
      memcpy(hin, in, np);
      for (int bit = 0; bit < 2; bit++) {
        int k = (pinned ? 0 : 2) + bit;
        e2e_ms[k][si] = e2e(gpu, hin, hout, n, bit ? HT_FORMAT_BIT1 : HT_FORMAT_U8, reps, &e2e_ok[k][si], ref);
        compared++;
        mismatches += !e2e_ok[k][si];
        fprintf(stderr, "%dK end to end, %s memory, 8-bit -> %s: %.3f ms %s\n", sizes[si],
                pinned ? "pinned" : "pageable", bit ? "1-bit" : "8-bit", e2e_ms[k][si],
                e2e_ok[k][si] ? "exact" : "DIFFERS");
      }
      if (pinned) {
        api->host_free(dev, hin);
        api->host_free(dev, hout);
      } else {
        free(hin);
        free(hout);
      }
    }
    free(in);
    free(ref);
    free(lv);
  }

  FILE *o = outpath ? fopen(outpath, "w") : stdout;
  if (!o) {
    perror(outpath);
    return 1;
  }
  fprintf(o, "### GPU: %s\n\n", info.name);
  fprintf(o, "%s, compute capability %d.%d, %d multiprocessors, %.0f GiB; CUDA driver %d.%d, runtime %d.%d; "
             "measured %s by `tools/bench/bench-gpu.sh` (`ht-bench-cuda --reps %d`).\n\n",
          info.name, info.cc_major, info.cc_minor, info.multiprocessors, (double)info.memory / (1 << 30),
          info.driver_version / 1000, info.driver_version % 1000 / 10, info.runtime_version / 1000,
          info.runtime_version % 1000 / 10, date, reps);
  fprintf(o, "Floyd-Steinberg, binary output, 8-bit input (a smooth ramp with noise), square images; "
             "milliseconds, median of %d runs (%d for the global-memory rows at 8K and up); "
             "each cell is **ours** / the paper's GeForce GTX 780 Ti (Table V). "
             "Every GPU output was compared with the CPU reference (core/diffusion/ed.c): %d of %d equal.\n\n",
          reps, (reps + 1) / 2, compared - mismatches, compared);
  fprintf(o, "| Table V row |");
  for (int si = 0; si < nsizes; si++)
    fprintf(o, " %dK |", sizes[si]);
  fprintf(o, "\n|---|");
  for (int si = 0; si < nsizes; si++)
    fprintf(o, "---|");
  fprintf(o, "\n");
  for (int v = 0; v < 13; v++) {
    if (v > 0 && !paper)
      continue;
    int row = v - 1;
    const char *sec = v == 0 ? "ours" : row < 4 ? "(2)" : row < 8 ? "(3)" : "(4)";
    fprintf(o, "| %s %s |", sec, v ? row_names[row] : "gpu-fast kernel (warp per 32-row band, persistent)");
    for (int si = 0; si < nsizes; si++) {
      int pi = -1;
      for (int k = 0; k < NSIZES; k++)
        if (paper_sizes[k] == sizes[si])
          pi = k;
      if (kern[v][si] < 0)
        fprintf(o, " failed |");
      else if (v && pi >= 0)
        fprintf(o, " **%.3f**%s / %.4g |", kern[v][si], exact[v][si] ? "" : " (WRONG)", paper_ms[row][pi]);
      else
        fprintf(o, " **%.3f**%s |", kern[v][si], exact[v][si] ? "" : " (WRONG)");
    }
    fprintf(o, "\n");
  }
  fprintf(o, "| ours: dependency-chain floor, (W + 2H) x %.1f ns a step |", probe_ns);
  for (int si = 0; si < nsizes; si++)
    fprintf(o, " %.3f |", floor_ms[si]);
  fprintf(o, "\n");
  const char *tn[2] = { "(5) host to GPU, pinned", "(5) GPU to host, pinned" };
  for (int k = 0; k < 2; k++) {
    fprintf(o, "| %s |", tn[k]);
    for (int si = 0; si < nsizes; si++) {
      int pi = -1;
      for (int j = 0; j < NSIZES; j++)
        if (paper_sizes[j] == sizes[si])
          pi = j;
      fprintf(o, " **%.3f** / %.4g |", k ? d2h[si] : h2d[si], pi >= 0 ? paper_ms[12 + k][pi] : 0.0);
    }
    fprintf(o, "\n");
  }
  const char *en[4] = { "end to end, pinned, 8-bit -> 8-bit", "end to end, pinned, 8-bit -> packed 1-bit",
                        "end to end, pageable, 8-bit -> 8-bit", "end to end, pageable, 8-bit -> packed 1-bit" };
  for (int k = 0; k < 4; k++) {
    fprintf(o, "| ours, ht_run: %s |", en[k]);
    for (int si = 0; si < nsizes; si++)
      fprintf(o, " **%.3f**%s |", e2e_ms[k][si], e2e_ok[k][si] ? "" : " (WRONG)");
    fprintf(o, "\n");
  }
  fprintf(o, "\nPaper, end to end at 16K (Table V (4)+(5), 2-D PEC with RC): 46.75 + 49.83 + 54.75 = 151.3 ms.\n");
  if (o != stdout)
    fclose(o);
  ht_context_free(cpu);
  ht_context_free(gpu);
  api->close(dev);
  return mismatches ? 1 : 0;
}

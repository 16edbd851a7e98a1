/* The cost model of backend auto: the GPU only where it is expected to be
 * faster. Its three costs were measured on the 16-vCPU H100 host
 * (BENCHMARKS.md, "Backend auto: what opening the GPU costs"):
 *  - opening the GPU (module, device context, streams), once per
 *    context: HT_AUTO_GPU_OPEN_MS, default 300 (a whole `halftone
 *    --backend cuda` run of a 1024² image takes 0.36-0.39 s, against
 *    3-6 ms on the CPU);
 *  - a run on an open GPU: 0.5 ms plus 0.1 ns a pixel (end to end from
 *    pageable memory: 0.52 ms at 1K², 8.7 ms at 8K², 17.8 to 29.3 ms at
 *    16K² for 1-bit and 8-bit output);
 *  - the CPU: 1 ns a pixel on one thread (the wavefront at 16K²: 1.05 to
 *    1.13), and T threads at 65% of T times that (16 threads: 9-12.8x).
 * So a process that halftones one image (the CLI, a gegl graph) stays on
 * the CPU up to about 0.45 G pixels on 2 cores; a context kept for many
 * images (GIMP's) uses its GPU, once open, from about 0.8 M pixels on 2
 * cores. With 16 or more threads the model never prefers the GPU, as the
 * measurements do not (16 threads: 30 ms at 16K², within 1.7x of the
 * open GPU). A colour image run per channel is judged by one channel. */
#include "cost.h"
#include "job.h"

#include <stdio.h>
#include <stdlib.h>

bool ht_cost_prefers_gpu(double pixels, int threads, bool gpu_open)
{
  const double cpu_ms = pixels * 1e-6 / (threads > 1 ? 0.65 * threads : 1.0);
  double open_ms = 300;
  const char *env = getenv("HT_AUTO_GPU_OPEN_MS");
  if (env && *env) {
    char *end;
    const double v = strtod(env, &end);
    if (*end == '\0' && v >= 0 && v <= 1e7)
      open_ms = v;
  }
  return 0.5 + pixels * 0.1e-6 + (gpu_open ? 0 : open_ms) < cpu_ms;
}

/* The search methods are compute-bound and run for many rounds. Their
 * costs a pixel, the whole run from the Floyd-Steinberg start on a photo
 * (coffee.png at 512^2 to 4896^2), measured on the H100 host
 * (BENCHMARKS.md, "Search methods on the GPU"): the CPU's as one thread's
 * (16 threads' time times 0.65 * 16), the GPU's on an open device plus
 * 5 ms a run. Windows of 1 x 1, 2 x 2 and 5 x 5 were not measured: their
 * figures are rough (5 x 5 costs about 2^25 / 2^16 times 4 x 4 without
 * the CPU's bounds). Colour runs per channel are judged by one channel. */
bool ht_cost_prefers_gpu_search(int method, int window, double pixels, int threads, bool gpu_open)
{
  /* [method - LES][m - 1]; DBS has no m */
  static const double cpu_ns[3][5] = {
    { 1e3, 2e3, 1.2e4, 2.4e5, 1e7 }, /* LES */
    { 1e3, 2e3, 1.5e4, 8.5e5, 1e7 }, /* PES */
    { 1.3e3, 1.3e3, 1.3e3, 1.3e3, 1.3e3 },
  };
  static const double gpu_ns[3][5] = {
    { 50, 100, 400, 8e3, 1e6 },
    { 50, 100, 800, 1.2e4, 1e6 },
    { 10, 10, 10, 10, 10 },
  };
  const int mi = method >= 1 && method <= 3 ? method - 1 : 2;
  const int wi = window >= 1 && window <= 5 ? window - 1 : 3;
  const double cpu_ms = pixels * cpu_ns[mi][wi] * 1e-6 / (threads > 1 ? 0.65 * threads : 1.0);
  double open_ms = 300;
  const char *env = getenv("HT_AUTO_GPU_OPEN_MS");
  if (env && *env) {
    char *end;
    const double v = strtod(env, &end);
    if (*end == '\0' && v >= 0 && v <= 1e7)
      open_ms = v;
  }
  return 5.0 + pixels * gpu_ns[mi][wi] * 1e-6 + (gpu_open ? 0 : open_ms) < cpu_ms;
}

/* ht_estimate_seconds (halftone.h). The searches' costs a pixel in the
 * first round on one thread, in ns, [method - LES][m - 1], measured with
 * `halftone --threads 1 --bench 1 --max-rounds 1` on crops of
 * data/coffee.png on the project's 2-core machine (docs/search.md, "What
 * a search costs", has the table and how far other images stray). */
static const double first_round_ns[3][HT_SEARCH_WINDOW_MAX] = {
  { 200, 593, 4830, 143000, 2610000 }, /* LES */
  { 369, 711, 6870, 259000, 4470000 }, /* PES */
  { 422, 422, 422, 422, 422 },         /* DBS (its window is fixed)  */
};

/* A whole run to convergence took 2.2 to 3.4 first rounds (later rounds
 * search only where the image still moves): the larger is taken. */
#define SEARCH_FIRST_ROUNDS 3.4

double ht_estimate_seconds(const ht_params *p, int64_t width, int64_t height, int planes, int threads)
{
  if (!p || width <= 0 || height <= 0 || width > HT_MAX_SIDE || height > HT_MAX_SIDE || planes < 1 ||
      planes > HT_MAX_PLANES || threads < 0)
    return -1;
  const bool search = p->method == HT_METHOD_LES || p->method == HT_METHOD_PES || p->method == HT_METHOD_DBS;
  if (search && (p->window < 1 || p->window > HT_SEARCH_WINDOW_MAX))
    return -1;
  const double pixels = (double)width * (double)height * planes;
  const int cores = ht_online_cores();
  int t = threads > 0 && threads < cores ? threads : cores;
  if (search && p->schedule == HT_SCHEDULE_RASTER)
    t = 1; /* the raster schedule is one thread by definition */
  const double speedup = t > 1 ? 0.65 * t : 1.0; /* as backend auto's model above */
  if (!search)
    return pixels * 1e-9 / speedup;
  double rounds = SEARCH_FIRST_ROUNDS;
  if (p->max_rounds > 0 && p->max_rounds < rounds)
    rounds = p->max_rounds;
  return pixels * first_round_ns[p->method - HT_METHOD_LES][p->window - 1] * 1e-9 * rounds / speedup;
}

int ht_format_duration(double s, char *buf, size_t n)
{
  if (!(s >= 0))
    return snprintf(buf, n, "unknown");
  if (s < 1)
    return snprintf(buf, n, "under a second");
  if (s < 90)
    return snprintf(buf, n, "%.0f s", s);
  if (s < 90 * 60)
    return snprintf(buf, n, "%.0f min", s / 60);
  if (s < 48 * 3600)
    return snprintf(buf, n, "%.1f h", s / 3600);
  if (s < 3 * 365.25 * 86400)
    return snprintf(buf, n, "%.0f days", s / 86400);
  return snprintf(buf, n, "%.0f years", s / (365.25 * 86400));
}

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

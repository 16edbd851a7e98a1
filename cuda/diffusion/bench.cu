/* cuda/diffusion/bench.cu: the benchmark hooks of module.h
 * (tools/bench/bench-cuda.c): kernels alone on a resident image, pinned
 * transfers, and the latency probe of gpu-fast's step. HT_BENCH_TRACE
 * adds a time-stamped run of gpu-fast (fast.h's trace layout) and prints
 * where the time goes. */
#include "../module_private.h"
#include "../../core/shared/fixed.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace htcuda {

namespace {

double median(std::vector<double> v)
{
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

/* HT_FAST_STATS builds: the first group's arrival, and the waits after it. */
void print_stats(const std::vector<unsigned long long> &tr, int nb)
{
  const auto at = [&](int b, int k) { return tr[HT_FAST_TRACE_BAND * (size_t)b + (size_t)k]; };
  std::vector<double> mx;
  double n = 0, nb0 = 0, cyc = 0, c15 = 0, sp0 = 0, rt = 0;
  for (int b = 1; b < nb; b++) {
    c15 += (double)(long long)at(b, HT_FT_C15);
    sp0 += (double)(at(b, HT_FT_POLLS_RT) & 0xffffffffu);
    rt += (double)(at(b, HT_FT_POLLS_RT) >> 32);
    n += (double)at(b, HT_FT_WAITS);
    nb0 += (double)at(b, HT_FT_WAITS_CHUNK);
    cyc += (double)at(b, HT_FT_WAIT_CYC);
    mx.push_back((double)at(b, HT_FT_WAIT_MAX));
  }
  std::sort(mx.begin(), mx.end());
  fprintf(stderr,
          "stats: first groups every %.3f us; per band after it: %.1f waits (%.1f at a chunk's first "
          "group), %.0f cycles waiting, longest wait median %.0f p90 %.0f max %.0f cycles\n",
          (double)(at(nb - 1, HT_FT_FIRST) - at(1, HT_FT_FIRST)) / 1e3 / (nb - 2), n / (nb - 1), nb0 / (nb - 1),
          cyc / (nb - 1), mx[mx.size() / 2], mx[mx.size() * 9 / 10], mx.back());
  fprintf(stderr,
          "stats: first group to column 15 of the last row %.0f cycles; first-group polls %.2f; "
          "a load's round trip %.0f cycles\n",
          c15 / (nb - 1), sp0 / (nb - 1), rt / (nb - 1));
  fprintf(stderr, "stats: clock %.3f GHz (band 1)\n",
          (double)at(1, HT_FT_CLOCKS) / (double)(at(1, HT_FT_END) - at(1, HT_FT_START)));
  /* the lag between consecutive bands at group g, averaged over bands 2.. */
  const auto gt = [&](int b, int g) {
    return tr[HT_FAST_TRACE_BAND * (size_t)nb + HT_FAST_TRACE_GROUPS * (size_t)b + (size_t)g];
  };
  fprintf(stderr, "stats: lag (ns) at group");
  for (int g = 0; g < HT_FAST_TRACE_GROUPS; g += (g < 16 ? 1 : g < 64 ? 8 : 64)) {
    double l = 0;
    int cnt = 0;
    for (int b = 2; b < nb; b++)
      if (gt(b, g) && gt(b - 1, g)) {
        l += (double)(gt(b, g) - gt(b - 1, g));
        cnt++;
      }
    fprintf(stderr, " %d:%.0f", g, cnt ? l / cnt : 0.0);
  }
  fprintf(stderr, "\nstats: band 5 group pass deltas (ns):");
  for (int g = 1; g < 40 && nb > 5; g++)
    fprintf(stderr, " %lld", (long long)(gt(5, g) - gt(5, g - 1)));
  fprintf(stderr, "\n");
}

/* One more gpu-fast run of `fp` with time stamps: when bands end, and
 * with HT_BENCH_TRACE_FILE the raw stamps appended to that file. */
bool trace_run(dev *d, ctx_err &ce, const ht_filter *f, ht_fast_params &fp, int W, int H, int wps)
{
  const int nb = (H + 31) / 32;
  unsigned long long *dt = nullptr;
  std::vector<unsigned long long> tr((size_t)(HT_FAST_TRACE_BAND + HT_FAST_TRACE_GROUPS) * (size_t)nb);
  if (!ce.check(cudaMalloc((void **)&dt, tr.size() * 8), "cudaMalloc"))
    return false;
  fp.trace = dt;
  if (++d->tag == 0)
    d->tag = 1;
  fp.tag = d->tag;
  bool ok = next_wtag(d, ce, 0);
  fp.wtag = d->wtag;
  ok = ok && ce.check(cudaMemsetAsync(dt, 0, tr.size() * 8, d->comp), "memset") &&
       ce.check(cudaMemsetAsync(d->d_ticket, 0, sizeof(int), d->comp), "memset") &&
       ce.check(ht_fast_launch(f, &fp, d->prop.multiProcessorCount, wps, d->comp), "the kernel") &&
       ce.check(cudaStreamSynchronize(d->comp), "the kernel") &&
       ce.check(cudaMemcpy(tr.data(), dt, tr.size() * 8, cudaMemcpyDeviceToHost), "trace");
  fp.trace = nullptr;
  cudaFree(dt);
  if (!ok)
    return false;
  if (const char *tf = getenv("HT_BENCH_TRACE_FILE")) {
    FILE *o = fopen(tf, "ab");
    const unsigned long long hdr[3] = { (unsigned long long)W, (unsigned long long)H, (unsigned long long)tr.size() };
    if (!o || fwrite(hdr, 8, 3, o) != 3 || fwrite(tr.data(), 8, tr.size(), o) != tr.size())
      fprintf(stderr, "HT_BENCH_TRACE_FILE %s: %s\n", tf, strerror(errno));
    if (o)
      fclose(o);
  }
  const auto at = [&](int b, int k) { return tr[HT_FAST_TRACE_BAND * (size_t)b + (size_t)k]; };
  unsigned long long t0 = at(0, HT_FT_START);
  for (int b = 0; b < nb; b++)
    t0 = std::min(t0, at(b, HT_FT_START));
  double span = (double)(at(nb - 1, HT_FT_END) - t0) / 1e3;
  double gap = nb > 1 ? (double)(at(nb - 1, HT_FT_END) - at(0, HT_FT_END)) / 1e3 / (nb - 1) : 0;
  fprintf(stderr, "trace %dx%d: span %.1f us, band 0 %.1f us, band ends every %.3f us (%d bands)\n", W, H, span,
          (double)(at(0, HT_FT_END) - at(0, HT_FT_START)) / 1e3, gap, nb);
  if (nb > 2 && at(1, HT_FT_FIRST) != 0)
    print_stats(tr, nb);
  return true;
}

} // namespace

int m_bench_kernel(void *p, int variant, const ht_filter *f, int levels, const uint8_t *in, int W, int H, int reps,
                   uint8_t *levels_out, double *ms, char *msg, size_t n)
{
  dev *d = (dev *)p;
  ctx_err ce{ msg, n };
  if (!f || levels < 2 || levels > 256 || !in || W <= 0 || H <= 0 || reps < 1 || !levels_out || !ms ||
      variant < 0 || variant >= HT_CUDA_VARIANT_COUNT) {
    say(msg, n, "invalid arguments to bench_kernel");
    return HT_CUDA_ERR_UNSUPPORTED;
  }
#if !HT_HAVE_PAPER
  if (variant != HT_CUDA_VARIANT_FAST) {
    say(msg, n, "this module was built without the paper's variants");
    return HT_CUDA_ERR_UNSUPPORTED;
  }
#endif
  cudaSetDevice(d->device);
  const bool fast = variant == HT_CUDA_VARIANT_FAST;
  const size_t in_pitch = roundup(roundup((size_t)W, 32), 512), out_pitch = in_pitch;
  const int Hpad = (int)roundup((size_t)H, 32);
  const int D = ht_fast_down(f);
  const size_t bound_row = roundup((size_t)W, 32);
  const int wps = (int)env_long("HT_CUDA_FAST_WPS", 0);
  std::vector<double> t;
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  ht_fast_params fp;
  memset(&fp, 0, sizeof fp);
  unsigned *done_dev = nullptr;
  if (!grow_dev(ce, &d->d_in, &d->d_in_size, in_pitch * (size_t)Hpad, false, "the input") ||
      !grow_dev(ce, (void **)&d->d_out, &d->d_out_size, out_pitch * (size_t)Hpad, false, "the output"))
    return status_of(ce);
  if (fast && (!grow_dev(ce, (void **)&d->d_bound, &d->d_bound_size,
                         (size_t)(Hpad / 32 + 1) * (size_t)D * bound_row * sizeof(unsigned), true, "the band boundaries") ||
               !grow_host(ce, (void **)&d->h_done, &d->h_done_n, (size_t)(Hpad / 32) * sizeof(unsigned),
                          cudaHostAllocMapped, "the band flags")))
    return status_of(ce);
  if (!ce.check(cudaMemcpy2D(d->d_in, in_pitch, in, (size_t)W, (size_t)W, (size_t)H, cudaMemcpyHostToDevice),
                "upload") ||
      !ce.check(cudaEventCreate(&e0), "event") || !ce.check(cudaEventCreate(&e1), "event"))
    goto out;
  if (fast) {
    /* every stripe counts as uploaded: the kernel alone is timed */
    const int all = INT_MAX;
    if (!ce.check(cudaHostGetDevicePointer((void **)&done_dev, d->h_done, 0), "cudaHostGetDevicePointer") ||
        !arm_fault(d, ce, &fp.fault) ||
        !ce.check(cudaMemcpy(d->d_ready, &all, sizeof all, cudaMemcpyHostToDevice), "flag"))
      goto out;
    fp.in = d->d_in;
    fp.in_pitch = in_pitch;
    fp.in_bits = 8;
    fp.out = d->d_out;
    fp.out_pitch = out_pitch;
    fp.width = W;
    fp.height = H;
    ht_fast_set_filter(&fp, f, levels);
    for (int i = 0; i < 256; i++)
      fp.lut[i] = (unsigned char)i;
    fp.bound = d->d_bound;
    fp.bound_row = bound_row;
    fp.ticket = d->d_ticket;
    fp.in_ready = d->d_ready;
    fp.stripe_rows = Hpad;
    fp.done = done_dev;
  }
  for (int r = 0; r < reps; r++) {
    if (fast) {
      if (++d->tag == 0)
        d->tag = 1;
      fp.tag = d->tag;
      if (!next_wtag(d, ce, 0))
        goto out;
      fp.wtag = d->wtag;
    }
    if (!ce.check(cudaEventRecord(e0, d->comp), "event"))
      goto out;
    if (fast) {
      if (!ce.check(cudaMemsetAsync(d->d_ticket, 0, sizeof(int), d->comp), "memset") ||
          !ce.check(ht_fast_launch(f, &fp, d->prop.multiProcessorCount, wps, d->comp), "the kernel"))
        goto out;
    } else {
#if HT_HAVE_PAPER
      if (!ce.check(ht_gpu_paper_run((ht_gpu_paper_variant)(variant - HT_CUDA_VARIANT_PAPER_FIRST), d->d_in, 8,
                                     in_pitch, d->d_out, out_pitch, W, H, f, levels, d->comp),
                    "the paper variant"))
        goto out;
#endif
    }
    float el = 0;
    if (!ce.check(cudaEventRecord(e1, d->comp), "event") || !ce.check(cudaEventSynchronize(e1), "the kernel") ||
        !ce.check(cudaEventElapsedTime(&el, e0, e1), "event"))
      goto out;
    t.push_back(el);
  }
  *ms = median(t);
  if (fast && faulted(d, ce))
    goto out;
  if (fast && getenv("HT_BENCH_TRACE") && !trace_run(d, ce, f, fp, W, H, wps))
    goto out;
  ce.check(cudaMemcpy2D(levels_out, (size_t)W, d->d_out, out_pitch, (size_t)W, (size_t)H, cudaMemcpyDeviceToHost),
           "download");
out:
  if (e0)
    cudaEventDestroy(e0);
  if (e1)
    cudaEventDestroy(e1);
  if (ce.err != cudaSuccess) {
    drain(d);
    cudaGetLastError();
    return status_of(ce);
  }
  return HT_CUDA_OK;
}

int m_bench_transfer(void *p, size_t bytes, int reps, double *h2d_ms, double *d2h_ms, char *msg, size_t n)
{
  dev *d = (dev *)p;
  ctx_err ce{ msg, n };
  cudaSetDevice(d->device);
  void *h = nullptr;
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  std::vector<double> a, b;
  if (grow_dev(ce, &d->d_in, &d->d_in_size, bytes, false, "the transfer buffer") &&
      ce.check(cudaHostAlloc(&h, bytes, cudaHostAllocDefault), "cudaHostAlloc") &&
      ce.check(cudaEventCreate(&e0), "event") && ce.check(cudaEventCreate(&e1), "event")) {
    memset(h, 0x5a, bytes);
    for (int r = 0; r < reps && ce.err == cudaSuccess; r++) {
      float x = 0, y = 0;
      if (ce.check(cudaEventRecord(e0, d->comp), "event") &&
          ce.check(cudaMemcpyAsync(d->d_in, h, bytes, cudaMemcpyHostToDevice, d->comp), "upload") &&
          ce.check(cudaEventRecord(e1, d->comp), "event") && ce.check(cudaEventSynchronize(e1), "upload") &&
          ce.check(cudaEventElapsedTime(&x, e0, e1), "event") && ce.check(cudaEventRecord(e0, d->comp), "event") &&
          ce.check(cudaMemcpyAsync(h, d->d_in, bytes, cudaMemcpyDeviceToHost, d->comp), "download") &&
          ce.check(cudaEventRecord(e1, d->comp), "event") && ce.check(cudaEventSynchronize(e1), "download") &&
          ce.check(cudaEventElapsedTime(&y, e0, e1), "event")) {
        a.push_back(x);
        b.push_back(y);
      }
    }
  }
  if (h)
    cudaFreeHost(h);
  if (e0)
    cudaEventDestroy(e0);
  if (e1)
    cudaEventDestroy(e1);
  if (ce.err != cudaSuccess)
    return status_of(ce);
  *h2d_ms = median(a);
  *d2h_ms = median(b);
  return HT_CUDA_OK;
}

/* One band of Floyd-Steinberg: no band waits for another, so the time
 * per step is the per-pixel dependency chain of the kernel's loop. */
int m_bench_probe(void *p, int steps, double *ns, char *msg, size_t n)
{
  ht_filter f;
  memset(&f, 0, sizeof f);
  f.id = HT_FILTER_FLOYD_STEINBERG;
  snprintf(f.name, sizeof f.name, "floyd-steinberg");
  f.den = 16;
  f.ntaps = 4;
  const int dx[4] = { 1, -1, 0, 1 }, dy[4] = { 0, 1, 1, 1 }, num[4] = { 7, 3, 5, 1 };
  for (int i = 0; i < 4; i++) {
    f.taps[i].dx = (int8_t)dx[i];
    f.taps[i].dy = (int8_t)dy[i];
    f.taps[i].num = num[i];
    f.taps[i].q = HT_Q(num[i], 16);
  }
  f.reach_left = f.reach_right = f.reach_down = 1;
  f.delay = 2;
  std::vector<uint8_t> in((size_t)steps * 32), lv((size_t)steps * 32);
  for (size_t i = 0; i < in.size(); i++)
    in[i] = (uint8_t)((i * 2654435761u) >> 24);
  double ms = 0;
  int r = m_bench_kernel(p, HT_CUDA_VARIANT_FAST, &f, 2, in.data(), steps, 32, 5, lv.data(), &ms, msg, n);
  if (r != HT_CUDA_OK)
    return r;
  const double total_steps = (double)roundup((size_t)steps, 32) + 31 * 2 + 2;
  *ns = ms * 1e6 / total_steps;
  return HT_CUDA_OK;
}

} // namespace htcuda

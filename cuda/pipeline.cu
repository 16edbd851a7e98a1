/* cuda/pipeline.cu: a plane's rows between the caller and the device.
 *
 * Pinned caller buffers are copied by DMA directly; pageable ones go
 * through NSLOT pinned staging slots, filled and emptied by up to
 * HT_CUDA_COPY_THREADS threads, because the copy into staging costs more
 * than the bus transfer itself and one core's memcpy rate would bound
 * it. 8-bit and 16-bit planes go up as they are, anything else as 16-bit
 * rows from the core's load(); outputs come back as bytes or packed bits
 * into the caller's plane, or as level indices through store(). */
#include "module_private.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <thread>
#include <vector>

namespace htcuda {

namespace {

/* Runs fn(r0, r1) over rows [0, n) split among up to `threads` threads.
 * The core's load/store may run on several threads at once for
 * different rows (module.h). */
template <typename F> void parallel_rows(int n, int threads, F fn)
{
  if (threads > n / 16)
    threads = n / 16;
  if (threads <= 1) {
    fn(0, n);
    return;
  }
  std::vector<std::thread> pool;
  int per = (n + threads - 1) / threads;
  for (int k = 1; k < threads; k++) {
    int r0 = k * per, r1 = std::min(n, r0 + per);
    if (r0 < r1) {
      try {
        pool.emplace_back(fn, r0, r1);
      } catch (...) {
        fn(r0, r1); /* no thread: do it here */
      }
    }
  }
  fn(0, std::min(n, per));
  for (auto &t : pool)
    t.join();
}

/* 4 threads on 8 cores or more: more are not reliably faster and vary
 * more from run to run (BENCHMARKS.md, "What bounds gpu-fast"). */
int copy_threads()
{
  long t = env_long("HT_CUDA_COPY_THREADS", 0);
  if (t <= 0) {
    unsigned hc = std::thread::hardware_concurrency();
    t = hc >= 8 ? 4 : hc >= 2 ? 2 : 1;
  }
  return (int)std::min(t, 64L);
}

} // namespace

bool is_pinned(const void *p)
{
  if (!p)
    return false;
  cudaPointerAttributes a;
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return a.type == cudaMemoryTypeHost;
}

void plane_init(plane &pl, const ht_cuda_io *io)
{
  pl.io = io;
  pl.W = (int)io->width;
  pl.H = (int)io->height;
  pl.in_bits = io->in ? io->in_bits : 16;
  pl.in_sz = pl.in_bits / 8;
  pl.bit1 = io->out_kind == HT_CUDA_OUT_BIT1;
  pl.store = io->out_kind == HT_CUDA_OUT_STORE;
  size_t wr = roundup((size_t)pl.W, 32);
  pl.in_pitch = roundup(wr * (size_t)pl.in_sz, 512);
  pl.out_pitch = roundup(pl.bit1 ? wr / 8 : wr, 512);
  pl.host_out_row = pl.bit1 ? ((size_t)pl.W + 7) / 8 : (size_t)pl.W;
  pl.in_direct = io->in && is_pinned(io->in) &&
                 is_pinned((const unsigned char *)io->in + (size_t)(pl.H - 1) * io->in_stride);
  pl.out_direct = !pl.store && is_pinned(io->out) &&
                  is_pinned((const unsigned char *)io->out + (size_t)(pl.H - 1) * io->out_stride);
}

bool ensure_staging(dev *d, ctx_err &ce, const plane &pl, int S)
{
  size_t in_need = pl.in_direct ? 0 : (size_t)S * (size_t)pl.W * (size_t)pl.in_sz;
  size_t out_need = pl.out_direct ? 0 : (size_t)S * pl.host_out_row;
  if (in_need > d->stage_in_size || out_need > d->stage_out_size) {
    size_t in_have = d->stage_in_size, out_have = d->stage_out_size;
    for (int s = 0; s < NSLOT; s++) {
      size_t h = in_have;
      if (in_need > in_have && !grow_host(ce, (void **)&d->h_stage_in[s], &h, in_need, cudaHostAllocDefault, "input staging"))
        return false;
      h = out_have;
      if (out_need > out_have && !grow_host(ce, (void **)&d->h_stage_out[s], &h, out_need, cudaHostAllocDefault, "output staging"))
        return false;
    }
    d->stage_in_size = std::max(in_need, in_have);
    d->stage_out_size = std::max(out_need, out_have);
  }
  return true;
}

bool upload_rows(dev *d, ctx_err &ce, const plane &pl, int64_t y, int n, unsigned char *dst, int slot)
{
  const ht_cuda_io *io = pl.io;
  const size_t rb = (size_t)pl.W * (size_t)pl.in_sz;
  if (pl.in_direct)
    return ce.check(cudaMemcpy2DAsync(dst, pl.in_pitch, (const unsigned char *)io->in + (size_t)y * io->in_stride,
                                      io->in_stride, rb, (size_t)n, cudaMemcpyHostToDevice, d->h2d),
                    "upload");
  if (!ce.check(cudaEventSynchronize(d->ev_in[slot]), "staging slot"))
    return false;
  unsigned char *st = d->h_stage_in[slot];
  if (io->in)
    parallel_rows(n, copy_threads(), [&](int r0, int r1) {
      for (int r = r0; r < r1; r++)
        memcpy(st + (size_t)r * rb, (const unsigned char *)io->in + (size_t)(y + r) * io->in_stride, rb);
    });
  else
    parallel_rows(n, copy_threads(), [&](int r0, int r1) {
      std::vector<int32_t> scratch((size_t)pl.W);
      for (int r = r0; r < r1; r++)
        io->load(io->user, y + r, (uint16_t *)(void *)(st + (size_t)r * rb), scratch.data());
    });
  return ce.check(cudaMemcpy2DAsync(dst, pl.in_pitch, st, rb, rb, (size_t)n, cudaMemcpyHostToDevice, d->h2d),
                  "upload") &&
         ce.check(cudaEventRecord(d->ev_in[slot], d->h2d), "event");
}

bool download_rows(dev *d, ctx_err &ce, const plane &pl, int64_t y, int n, const unsigned char *src, int slot)
{
  const ht_cuda_io *io = pl.io;
  bool ok;
  if (pl.out_direct)
    ok = ce.check(cudaMemcpy2DAsync((unsigned char *)io->out + (size_t)y * io->out_stride, io->out_stride, src,
                                    pl.out_pitch, pl.host_out_row, (size_t)n, cudaMemcpyDeviceToHost, d->d2h),
                  "download");
  else
    ok = ce.check(cudaMemcpy2DAsync(d->h_stage_out[slot], pl.host_out_row, src, pl.out_pitch, pl.host_out_row,
                                    (size_t)n, cudaMemcpyDeviceToHost, d->d2h),
                  "download");
  return ok && ce.check(cudaEventRecord(d->ev_out[slot], d->d2h), "event");
}

void store_rows(dev *d, const plane &pl, int64_t y, int n, int slot)
{
  if (pl.out_direct)
    return;
  const ht_cuda_io *io = pl.io;
  const unsigned char *st = d->h_stage_out[slot];
  parallel_rows(n, copy_threads(), [&](int r0, int r1) {
    for (int r = r0; r < r1; r++) {
      const unsigned char *row = st + (size_t)r * pl.host_out_row;
      if (pl.store)
        io->store(io->user, y + r, row);
      else
        memcpy((unsigned char *)io->out + (size_t)(y + r) * io->out_stride, row, pl.host_out_row);
    }
  });
}

/* The kernel's bands wait for the stripe counter: setting it past any
 * stripe lets them run to their end (on whatever input is there), so the
 * streams can drain. */
void release_kernel(dev *d)
{
  if (!d->h_vals) {
    drain(d);
    cudaGetLastError();
    return;
  }
  d->h_vals[0] = INT_MAX;
  cudaMemcpyAsync(d->d_ready, d->h_vals, sizeof(int), cudaMemcpyHostToDevice, d->h2d);
  drain(d);
  cudaGetLastError();
}

} // namespace htcuda

/* cuda/module.cu: libhalftone-cuda.so, the module core/cuda_loader.c loads.
 *
 * Device discovery, the host <-> device pipeline and the benchmark hooks.
 * The pipeline (gpu-fast): the image goes up in horizontal stripes while
 * ONE persistent kernel (fast.cu) runs over all of it: a band of rows
 * waits on a device counter of uploaded stripes, and announces its
 * finished rows in host-mapped flags, so stripe k + 1 uploads and stripe
 * k - 1 downloads while stripe k computes, with no kernel boundary between
 * stripes (each kernel boundary would cost a whole pipeline fill). Images
 * larger than the device's memory run as several such "chunks", the last
 * error rows of one carried into the next. Pinned caller buffers are
 * copied directly; pageable ones go through pinned staging slots.
 */
#include "module.h"
#include "fast.h"
#include "paper.h"
#include "../core/fixed.h"

#include <climits>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <thread>
#include <vector>
#include <sched.h>

#ifndef HT_HAVE_PAPER
#define HT_HAVE_PAPER 1
#endif

#define EXPORT extern "C" __attribute__((visibility("default")))

namespace {

constexpr int NSLOT = 3; /* staging slots / downloads in flight */

struct dev_t_ {
  int device;
  cudaDeviceProp prop;
  cudaStream_t comp, h2d, d2h;
  cudaEvent_t ev_reset, ev_in[NSLOT], ev_out[NSLOT];
  unsigned tag;  /* launch tag of the done flags */
  unsigned wtag; /* launch tag of the boundary words, 1..255 (fast.h) */
  /* cached buffers, grown on demand */
  void *d_in = nullptr;
  size_t d_in_size = 0;
  unsigned char *d_out = nullptr;
  size_t d_out_size = 0;
  unsigned char *d_lv = nullptr;
  size_t d_lv_size = 0;
  unsigned *d_bound = nullptr;
  size_t d_bound_size = 0;
  int *d_ticket = nullptr, *d_ready = nullptr;
  unsigned *h_done = nullptr;
  size_t h_done_n = 0;
  int *h_fault = nullptr; /* host-mapped: a band's wait timed out */
  size_t h_fault_n = 0;
  int *h_vals = nullptr;
  size_t h_vals_n = 0;
  unsigned char *h_stage_in[NSLOT] = {}, *h_stage_out[NSLOT] = {};
  size_t stage_in_size = 0, stage_out_size = 0;
};
typedef dev_t_ dev;

void say(char *msg, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void say(char *msg, size_t n, const char *fmt, ...)
{
  if (!msg || !n)
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, n, fmt, ap);
  va_end(ap);
}

/* Every CUDA call goes through this: the first failure names the call. */
struct ctx_err {
  char *msg;
  size_t n;
  cudaError_t err = cudaSuccess;
  bool check(cudaError_t e, const char *what)
  {
    if (e == cudaSuccess)
      return true;
    if (err == cudaSuccess) {
      err = e;
      say(msg, n, "CUDA error in %s: %s", what, cudaGetErrorString(e));
    }
    return false;
  }
};

bool env_set(const char *name) { const char *s = getenv(name); return s && *s && strcmp(s, "0") != 0; }
bool fail_alloc_simulated() { return env_set("HT_CUDA_FAIL_ALLOC"); }

size_t roundup(size_t v, size_t m) { return (v + m - 1) / m * m; }

long env_long(const char *name, long def)
{
  const char *s = getenv(name);
  if (!s || !*s)
    return def;
  char *end;
  long v = strtol(s, &end, 10);
  return *end ? def : v;
}

/* Runs fn(r0, r1) over rows [0, n) split among up to `threads` threads:
 * the staging copies of pageable memory are bound by one core's memcpy
 * rate otherwise. The core's load/store may run on several threads at
 * once for different rows (core/internal.h). */
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

int copy_threads()
{
  long t = env_long("HT_CUDA_COPY_THREADS", 0);
  if (t <= 0) {
    /* 4 on the 16-core H100 host: 8 threads once gave 18.6 ms (16K²
     * pageable 8-bit -> 8-bit) against 22.8, but 27.7 and 31.7 ms in later
     * runs, while 4 stayed at 22.8-25.0 */
    unsigned hc = std::thread::hardware_concurrency();
    t = hc >= 8 ? 4 : hc >= 2 ? 2 : 1;
  }
  return (int)std::min(t, 64L);
}

/* Grows a device buffer; zeroed when `zero`. */
bool grow_dev(ctx_err &ce, void **p, size_t *have, size_t need, bool zero, const char *what)
{
  if (*have >= need && *p)
    return true;
  if (fail_alloc_simulated()) {
    say(ce.msg, ce.n, "cudaMalloc of %zu bytes for %s failed (simulated by HT_CUDA_FAIL_ALLOC)", need, what);
    ce.err = cudaErrorMemoryAllocation;
    return false;
  }
  if (*p)
    cudaFree(*p);
  *p = nullptr;
  *have = 0;
  cudaError_t e = cudaMalloc(p, need);
  if (e != cudaSuccess) {
    cudaGetLastError();
    *p = nullptr;
    ce.err = e;
    say(ce.msg, ce.n, "cudaMalloc of %zu bytes for %s failed: %s", need, what, cudaGetErrorString(e));
    return false;
  }
  if (zero && cudaMemset(*p, 0, need) != cudaSuccess)
    return ce.check(cudaGetLastError(), "cudaMemset");
  *have = need;
  return true;
}

/* The next word tag (fast.h). Before the tags wrap, the boundary slots
 * are cleared, all but the first `keep` words (the carried rows), so no
 * word of an earlier launch can pass for one of this launch. */
bool next_wtag(dev *d, ctx_err &ce, size_t keep)
{
  if (d->wtag >= 255) {
    const size_t n = d->d_bound_size / sizeof(unsigned);
    if (n > keep && !ce.check(cudaMemsetAsync(d->d_bound + keep, 0, (n - keep) * sizeof(unsigned), d->comp),
                              "cudaMemsetAsync"))
      return false;
    d->wtag = 0;
  }
  d->wtag++;
  return true;
}

bool grow_host(ctx_err &ce, void **p, size_t *have, size_t need, unsigned flags, const char *what)
{
  if (*have >= need && *p)
    return true;
  if (fail_alloc_simulated()) {
    say(ce.msg, ce.n, "cudaHostAlloc of %zu bytes for %s failed (simulated by HT_CUDA_FAIL_ALLOC)", need, what);
    ce.err = cudaErrorMemoryAllocation;
    return false;
  }
  if (*p)
    cudaFreeHost(*p);
  *p = nullptr;
  *have = 0;
  cudaError_t e = cudaHostAlloc(p, need, flags);
  if (e != cudaSuccess) {
    cudaGetLastError();
    *p = nullptr;
    ce.err = e;
    say(ce.msg, ce.n, "cudaHostAlloc of %zu bytes for %s failed: %s", need, what, cudaGetErrorString(e));
    return false;
  }
  memset(*p, 0, need);
  *have = need;
  return true;
}

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

void to_gpu_filter(const ht_cuda_filter *f, ht_gpu_filter *g)
{
  static_assert(sizeof(ht_cuda_filter) == sizeof(ht_gpu_filter), "filter layouts differ");
  memcpy(g, f, sizeof *g);
}

void fill_q(const ht_cuda_filter *f, int q[4][9])
{
  memset(q, 0, sizeof(int) * 36);
  for (int i = 0; i < f->ntaps && i < 32; i++)
    if (f->dy[i] >= 0 && f->dy[i] <= 3 && f->dx[i] >= -4 && f->dx[i] <= 4)
      q[f->dy[i]][f->dx[i] + 4] = f->q[i];
}

/* Level indices (paper variants' output) -> the io's output bytes. */
__global__ void convert_kernel(const unsigned char *lv, size_t lv_pitch, unsigned char *out, size_t out_pitch,
                               int width, int height, int bit1, const unsigned char *lut_unused, ht_fast_params lp)
{
  (void)lut_unused;
  const int y = blockIdx.y;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (y >= height)
    return;
  const unsigned char *r = lv + (size_t)y * lv_pitch;
  if (bit1) {
    const int x0 = i * 8;
    if (x0 >= width)
      return;
    unsigned b = 0;
    for (int k = 0; k < 8; k++)
      b |= (unsigned)(x0 + k < width && r[x0 + k] == 0) << (7 - k);
    out[(size_t)y * out_pitch + i] = (unsigned char)b;
  } else if (i < width) {
    out[(size_t)y * out_pitch + i] = lp.lut[r[i]];
  }
}

/* ------------------------------------------------------------- plane io */

struct plane {
  const ht_cuda_io *io;
  int W, H;
  int in_bits, in_sz;
  bool bit1, store;
  size_t in_pitch, out_pitch;   /* device */
  size_t host_out_row;          /* bytes per output row on the host side */
  bool in_direct, out_direct;   /* pinned caller memory */
};

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

/* Stripe rows [y, y + n) of the image up to device rows starting at dst. */
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

int status_of(const ctx_err &ce)
{
  if (ce.err == cudaErrorMemoryAllocation)
    return HT_CUDA_ERR_NO_MEMORY;
  return HT_CUDA_ERR_GPU;
}

void drain(dev *d)
{
  cudaStreamSynchronize(d->h2d);
  cudaStreamSynchronize(d->d2h);
  cudaStreamSynchronize(d->comp);
}

/* Lets a kernel that waits for stripes run to its end (on garbage). */
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

/* ------------------------------------------------------------- gpu-fast */

/* The fast kernel's fault flag (host-mapped), cleared, and its device
 * address in *fault_dev. */
bool arm_fault(dev *d, ctx_err &ce, int **fault_dev)
{
  if (!grow_host(ce, (void **)&d->h_fault, &d->h_fault_n, sizeof(int), cudaHostAllocMapped, "the fault flag") ||
      !ce.check(cudaHostGetDevicePointer((void **)fault_dev, d->h_fault, 0), "cudaHostGetDevicePointer"))
    return false;
  *(volatile int *)d->h_fault = 0;
  return true;
}

/* Whether a band of the fast kernel gave up waiting (the flag is set
 * before the band's done flag, so a finished stripe shows it); then
 * the message and the error. HT_CUDA_FAIL_WAIT tests this path: the
 * rows carried into the second chunk are wiped, so its first band waits
 * for words that never come. */
bool faulted(dev *d, ctx_err &ce)
{
  if (!*(volatile int *)d->h_fault)
    return false;
  say(ce.msg, ce.n, "%s%s", HT_FAST_FAULT_MSG, env_set("HT_CUDA_FAIL_WAIT") ? " (simulated by HT_CUDA_FAIL_WAIT)" : "");
  ce.err = cudaErrorUnknown;
  return true;
}

int run_fast(dev *d, const ht_cuda_filter *f, const ht_cuda_io *io, char *msg, size_t msg_size)
{
  ctx_err ce{ msg, msg_size };
  plane pl;
  plane_init(pl, io);
  ht_gpu_filter g;
  to_gpu_filter(f, &g);
  const int D = ht_fast_down(&g);
  const int W = pl.W, H = pl.H;
  const size_t bound_row = roundup((size_t)W, 32);

  /* Stripe height: enough stripes to overlap transfers with the kernel,
   * not so thin that per-copy overheads dominate. */
  long S = env_long("HT_CUDA_STRIPE_ROWS", 0);
  if (S <= 0)
    S = std::max<long>((H + 15) / 16, (1L << 20) / W);
  S = (long)roundup((size_t)std::max<long>(S, 32), 32);
  /* Chunk height: what fits in device memory. */
  size_t per_row = pl.in_pitch + pl.out_pitch + (size_t)D * bound_row * sizeof(unsigned) / 32 + 16;
  size_t free_b = 0, total_b = 0;
  if (!ce.check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo"))
    return status_of(ce);
  size_t budget = (free_b + d->d_in_size + d->d_out_size + d->d_bound_size) / 10 * 7;
  long C = env_long("HT_CUDA_CHUNK_ROWS", 0);
  if (C <= 0)
    C = (long)std::min<size_t>(budget / per_row, (size_t)INT_MAX / 2);
  C = C / 32 * 32;
  if (C < 32) {
    say(msg, msg_size, "not enough GPU memory for a %dx32 stripe (%zu bytes free)", W, free_b);
    return HT_CUDA_ERR_NO_MEMORY;
  }
  if (S > C)
    S = C;
  C = C / S * S;
  if (C > (long)roundup((size_t)H, (size_t)S))
    C = (long)roundup((size_t)H, (size_t)S);
  const int Cpad = (int)C; /* multiple of 32 */
  const int max_bands = Cpad / 32;
  const int max_stripes = (int)((C + S - 1) / S);

  if (!grow_dev(ce, &d->d_in, &d->d_in_size, pl.in_pitch * (size_t)Cpad, false, "the input") ||
      !grow_dev(ce, (void **)&d->d_out, &d->d_out_size, pl.out_pitch * (size_t)Cpad, false, "the output") ||
      !grow_dev(ce, (void **)&d->d_bound, &d->d_bound_size,
                (size_t)(max_bands + 1) * (size_t)D * bound_row * sizeof(unsigned), true, "the band boundaries") ||
      !grow_host(ce, (void **)&d->h_done, &d->h_done_n, (size_t)max_bands * sizeof(unsigned), cudaHostAllocMapped,
                 "the band flags") ||
      !grow_host(ce, (void **)&d->h_vals, &d->h_vals_n, (size_t)(max_stripes + 1) * sizeof(int),
                 cudaHostAllocDefault, "the stripe flags") ||
      !ensure_staging(d, ce, pl, (int)S))
    return status_of(ce);
  unsigned *done_dev = nullptr;
  int *fault_dev = nullptr;
  if (!ce.check(cudaHostGetDevicePointer((void **)&done_dev, d->h_done, 0), "cudaHostGetDevicePointer") ||
      !arm_fault(d, ce, &fault_dev))
    return status_of(ce);

  ht_fast_params p;
  memset(&p, 0, sizeof p);
  p.in = d->d_in;
  p.in_pitch = pl.in_pitch;
  p.in_bits = pl.in_bits;
  p.out = d->d_out;
  p.out_pitch = pl.out_pitch;
  p.out_bit1 = pl.bit1;
  p.width = W;
  p.levels = f->levels;
  fill_q(f, p.q);
  for (int i = 0; i < 256; i++) /* packed bits are made from level indices */
    p.lut[i] = pl.store || pl.bit1 ? (unsigned char)i : io->lut[i];
  p.bound = d->d_bound;
  p.bound_row = bound_row;
  p.ticket = d->d_ticket;
  p.in_ready = d->d_ready;
  p.stripe_rows = (int)S;
  p.done = done_dev;
  p.fault = fault_dev;
  const int wps = (int)env_long("HT_CUDA_FAST_WPS", 0);

  unsigned carry_wtag = 0;
  int64_t stored_rows = 0;
  for (int64_t y0 = 0; y0 < H; y0 += C) {
    const int Hc = (int)std::min<int64_t>(C, H - y0);
    const int nstripes = (int)((Hc + S - 1) / S);
    const int nbands = (Hc + 31) / 32;
    if (++d->tag == 0)
      d->tag = 1;
    p.tag = d->tag;
    p.height = Hc;
    p.have_carry = y0 > 0;
    p.carry_wtag = carry_wtag;
    if (!next_wtag(d, ce, y0 > 0 ? (size_t)D * bound_row : 0))
      goto fail;
    p.wtag = d->wtag;
    if (y0 == C && env_set("HT_CUDA_FAIL_WAIT") && /* see faulted() */
        !ce.check(cudaMemsetAsync(d->d_bound, 0, (size_t)D * bound_row * sizeof(unsigned), d->comp), "cudaMemsetAsync"))
      goto fail;
    if (!ce.check(cudaMemsetAsync(d->d_ticket, 0, sizeof(int), d->comp), "cudaMemsetAsync") ||
        !ce.check(cudaMemsetAsync(d->d_ready, 0, sizeof(int), d->comp), "cudaMemsetAsync") ||
        !ce.check(cudaEventRecord(d->ev_reset, d->comp), "event") ||
        !ce.check(cudaStreamWaitEvent(d->h2d, d->ev_reset, 0), "cudaStreamWaitEvent") ||
        !ce.check(ht_fast_launch(&g, &p, d->prop.multiProcessorCount, wps, d->comp), "the kernel launch"))
      goto fail;
    {
      int up = 0, down = 0, stored = 0;
      auto rows_of = [&](int k) { return (int)std::min<long>(S, Hc - (long)k * S); };
      auto stripe_done = [&](int k) {
        int b0 = (int)((long)k * S / 32), b1 = std::min(nbands, (int)(((long)k * S + rows_of(k) + 31) / 32));
        for (int b = b0; b < b1; b++)
          if (((volatile unsigned *)d->h_done)[b] != p.tag)
            return false;
        return true;
      };
      while (stored < nstripes) {
        bool busy = false;
        if (up < nstripes) {
          unsigned char *dst = (unsigned char *)d->d_in + (size_t)up * (size_t)S * pl.in_pitch;
          if (!upload_rows(d, ce, pl, y0 + (int64_t)up * S, rows_of(up), dst, up % NSLOT))
            goto fail;
          d->h_vals[up + 1] = up + 1;
          if (!ce.check(cudaMemcpyAsync(d->d_ready, &d->h_vals[up + 1], sizeof(int), cudaMemcpyHostToDevice, d->h2d),
                        "stripe flag"))
            goto fail;
          up++;
          busy = true;
        }
        if (down < up && down - stored < NSLOT && stripe_done(down)) {
          if (faulted(d, ce)) /* before any of its rows reach the caller */
            goto fail;
          const unsigned char *src = d->d_out + (size_t)down * (size_t)S * pl.out_pitch;
          if (!download_rows(d, ce, pl, y0 + (int64_t)down * S, rows_of(down), src, down % NSLOT))
            goto fail;
          down++;
          busy = true;
        }
        if (stored < down) {
          cudaError_t e = cudaEventQuery(d->ev_out[stored % NSLOT]);
          if (e == cudaSuccess) {
            store_rows(d, pl, y0 + (int64_t)stored * S, rows_of(stored), stored % NSLOT);
            stored_rows += rows_of(stored);
            stored++;
            busy = true;
            if (io->tick && !io->tick(io->user, stored_rows, H)) {
              say(msg, msg_size, "cancelled");
              release_kernel(d);
              return HT_CUDA_ERR_CANCELLED;
            }
          } else if (e != cudaErrorNotReady && !ce.check(e, "download")) {
            goto fail;
          }
        }
        if (!busy) {
          cudaError_t e = cudaStreamQuery(d->comp);
          if (e == cudaSuccess && down < nstripes && !stripe_done(down)) {
            say(msg, msg_size, "the GPU kernel ended without finishing rows %lld..",
                (long long)(y0 + (int64_t)down * S));
            ce.err = cudaErrorUnknown;
            goto fail;
          }
          if (e != cudaSuccess && e != cudaErrorNotReady && !ce.check(e, "the kernel"))
            goto fail;
          sched_yield();
        }
      }
    }
    if (!ce.check(cudaStreamSynchronize(d->comp), "the kernel") || faulted(d, ce))
      goto fail;
    if (y0 + C < H) {
      /* carry the last error rows into slot 0 for the next chunk */
      if (!ce.check(cudaMemcpyAsync(d->d_bound, d->d_bound + (size_t)nbands * (size_t)D * bound_row,
                                    (size_t)D * bound_row * sizeof(unsigned), cudaMemcpyDeviceToDevice, d->comp),
                    "carry"))
        goto fail;
      carry_wtag = p.wtag;
    }
  }
  if (!ce.check(cudaStreamSynchronize(d->comp), "the kernel"))
    goto fail;
  return HT_CUDA_OK;
fail:
  release_kernel(d);
  return status_of(ce);
}

/* --------------------------------------------------- the paper's variants */

int run_paper(dev *d, int variant, const ht_cuda_filter *f, const ht_cuda_io *io, char *msg, size_t msg_size)
{
#if HT_HAVE_PAPER
  ctx_err ce{ msg, msg_size };
  plane pl;
  plane_init(pl, io);
  ht_gpu_filter g;
  to_gpu_filter(f, &g);
  const int W = pl.W, H = pl.H;
  const size_t lv_pitch = roundup((size_t)W, 512);
  const int S = std::max(32, (int)roundup((size_t)std::max(1, (1 << 22) / W), 32));
  size_t free_b = 0, total_b = 0;
  if (!ce.check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo"))
    return status_of(ce);
  size_t need = (pl.in_pitch + lv_pitch + pl.out_pitch) * (size_t)H;
  if (need > (free_b + d->d_in_size + d->d_out_size + d->d_lv_size) / 10 * 7) {
    say(msg, msg_size, "the paper's variants need the whole image on the GPU: %zu MB, %zu MB free", need >> 20,
        free_b >> 20);
    return HT_CUDA_ERR_UNSUPPORTED;
  }
  if (!grow_dev(ce, &d->d_in, &d->d_in_size, pl.in_pitch * (size_t)H, false, "the input") ||
      !grow_dev(ce, (void **)&d->d_lv, &d->d_lv_size, lv_pitch * (size_t)H, false, "the levels") ||
      !grow_dev(ce, (void **)&d->d_out, &d->d_out_size, pl.out_pitch * (size_t)H, false, "the output") ||
      !grow_host(ce, (void **)&d->h_vals, &d->h_vals_n, 2 * sizeof(int), cudaHostAllocDefault, "flags") ||
      !ensure_staging(d, ce, pl, S))
    return status_of(ce);
  for (int y = 0, k = 0; y < H; y += S, k++)
    if (!upload_rows(d, ce, pl, y, std::min(S, H - y), (unsigned char *)d->d_in + (size_t)y * pl.in_pitch, k % NSLOT))
      goto fail;
  if (!ce.check(cudaStreamSynchronize(d->h2d), "upload") ||
      !ce.check(ht_gpu_paper_run((ht_gpu_paper_variant)(variant - HT_CUDA_VARIANT_PAPER_FIRST), d->d_in, pl.in_bits,
                                 pl.in_pitch, d->d_lv, lv_pitch, W, H, &g, d->comp),
                "the paper variant"))
    goto fail;
  {
    ht_fast_params lp;
    for (int i = 0; i < 256; i++)
      lp.lut[i] = pl.store || pl.bit1 ? (unsigned char)i : io->lut[i];
    dim3 grid((unsigned)((pl.bit1 ? (W + 7) / 8 : W) + 255) / 256, (unsigned)H);
    convert_kernel<<<grid, 256, 0, d->comp>>>(d->d_lv, lv_pitch, d->d_out, pl.out_pitch, W, H, pl.bit1, nullptr, lp);
    if (!ce.check(cudaGetLastError(), "convert") || !ce.check(cudaStreamSynchronize(d->comp), "convert"))
      goto fail;
  }
  for (int y = 0, k = 0; y < H; y += S, k++) {
    int n = std::min(S, H - y);
    if (!download_rows(d, ce, pl, y, n, d->d_out + (size_t)y * pl.out_pitch, 0) ||
        !ce.check(cudaEventSynchronize(d->ev_out[0]), "download"))
      goto fail;
    store_rows(d, pl, y, n, 0);
    if (io->tick && !io->tick(io->user, y + n, H)) {
      say(msg, msg_size, "cancelled");
      return HT_CUDA_ERR_CANCELLED;
    }
  }
  return HT_CUDA_OK;
fail:
  drain(d);
  cudaGetLastError();
  return status_of(ce);
#else
  (void)d; (void)variant; (void)f; (void)io;
  say(msg, msg_size, "this module was built without the paper's variants");
  return HT_CUDA_ERR_UNSUPPORTED;
#endif
}

/* ----------------------------------------------------------- the table */

int m_open(void **out, char *msg, size_t n)
{
  *out = nullptr;
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();
    say(msg, n, "no usable NVIDIA driver or device (%s)", cudaGetErrorString(e));
    return HT_CUDA_ERR_NO_GPU;
  }
  if (count <= 0) {
    say(msg, n, "no CUDA device found");
    return HT_CUDA_ERR_NO_GPU;
  }
  int index = (int)env_long("HT_CUDA_DEVICE", 0);
  if (index < 0 || index >= count) {
    say(msg, n, "HT_CUDA_DEVICE=%d but there are %d CUDA device(s)", index, count);
    return HT_CUDA_ERR_NO_GPU;
  }
  dev *d = new (std::nothrow) dev();
  if (!d) {
    say(msg, n, "out of memory");
    return HT_CUDA_ERR_NO_MEMORY;
  }
  d->device = index;
  /* tests start the word tags near their wrap, to cover it in a short run */
  d->wtag = (unsigned)std::min(std::max(env_long("HT_CUDA_FIRST_WTAG", 0), 0L), 255L);
  ctx_err ce{ msg, n };
  if (!ce.check(cudaGetDeviceProperties(&d->prop, index), "cudaGetDeviceProperties")) {
    delete d;
    return HT_CUDA_ERR_NO_GPU;
  }
  int mode = 0;
  if (cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, index) == cudaSuccess && mode == cudaComputeModeProhibited) {
    say(msg, n, "CUDA device %d (%s) is in prohibited compute mode", index, d->prop.name);
    delete d;
    return HT_CUDA_ERR_NO_GPU;
  }
  e = cudaSetDevice(index);
  if (e == cudaSuccess)
    e = cudaFree(nullptr); /* creates the context: fails when the device is busy */
  if (e != cudaSuccess) {
    cudaGetLastError();
    say(msg, n, "CUDA device %d (%s) is not usable: %s%s", index, d->prop.name, cudaGetErrorString(e),
        e == cudaErrorDevicesUnavailable ? " (busy: exclusive mode and in use)" : "");
    delete d;
    return HT_CUDA_ERR_NO_GPU;
  }
  cudaFuncAttributes fa;
  e = cudaFuncGetAttributes(&fa, convert_kernel);
  if (e != cudaSuccess) {
    cudaGetLastError();
    say(msg, n, "this module has no code for %s (compute capability %d.%d): %s; rebuild with -Dgpu_arch=sm_%d%d",
        d->prop.name, d->prop.major, d->prop.minor, cudaGetErrorString(e), d->prop.major, d->prop.minor);
    delete d;
    return HT_CUDA_ERR_NO_GPU;
  }
  bool ok = ce.check(cudaStreamCreateWithFlags(&d->comp, cudaStreamNonBlocking), "cudaStreamCreate") &&
            ce.check(cudaStreamCreateWithFlags(&d->h2d, cudaStreamNonBlocking), "cudaStreamCreate") &&
            ce.check(cudaStreamCreateWithFlags(&d->d2h, cudaStreamNonBlocking), "cudaStreamCreate") &&
            ce.check(cudaEventCreateWithFlags(&d->ev_reset, cudaEventDisableTiming), "cudaEventCreate");
  for (int s = 0; ok && s < NSLOT; s++)
    ok = ce.check(cudaEventCreateWithFlags(&d->ev_in[s], cudaEventDisableTiming), "cudaEventCreate") &&
         ce.check(cudaEventCreateWithFlags(&d->ev_out[s], cudaEventDisableTiming), "cudaEventCreate");
  ok = ok && ce.check(cudaMalloc((void **)&d->d_ticket, sizeof(int)), "cudaMalloc") &&
       ce.check(cudaMalloc((void **)&d->d_ready, sizeof(int)), "cudaMalloc");
  if (!ok) {
    delete d; /* the process keeps a few handles; this path means a broken driver */
    return HT_CUDA_ERR_NO_GPU;
  }
  *out = d;
  return HT_CUDA_OK;
}

void m_close(void *p)
{
  dev *d = (dev *)p;
  if (!d)
    return;
  cudaSetDevice(d->device);
  drain(d);
  cudaFree(d->d_in);
  cudaFree(d->d_out);
  cudaFree(d->d_lv);
  cudaFree(d->d_bound);
  cudaFree(d->d_ticket);
  cudaFree(d->d_ready);
  cudaFreeHost(d->h_done);
  cudaFreeHost(d->h_fault);
  cudaFreeHost(d->h_vals);
  for (int s = 0; s < NSLOT; s++) {
    cudaFreeHost(d->h_stage_in[s]);
    cudaFreeHost(d->h_stage_out[s]);
    cudaEventDestroy(d->ev_in[s]);
    cudaEventDestroy(d->ev_out[s]);
  }
  cudaEventDestroy(d->ev_reset);
  cudaStreamDestroy(d->comp);
  cudaStreamDestroy(d->h2d);
  cudaStreamDestroy(d->d2h);
  delete d;
}

int m_info(void *p, ht_cuda_info *out)
{
  dev *d = (dev *)p;
  memset(out, 0, sizeof *out);
  snprintf(out->name, sizeof out->name, "%.127s", d->prop.name);
  out->cc_major = d->prop.major;
  out->cc_minor = d->prop.minor;
  out->multiprocessors = d->prop.multiProcessorCount;
  out->memory = d->prop.totalGlobalMem;
  cudaDriverGetVersion(&out->driver_version);
  cudaRuntimeGetVersion(&out->runtime_version);
  return HT_CUDA_OK;
}

int m_run(void *p, int variant, const ht_cuda_filter *f, const ht_cuda_io *io, char *msg, size_t n)
{
  dev *d = (dev *)p;
  if (!d || !f || !io || io->width <= 0 || io->height <= 0 || io->width > INT_MAX / 4 || io->height > INT_MAX / 4 ||
      f->levels < 2 || f->levels > 256 || (io->out_kind == HT_CUDA_OUT_BIT1 && f->levels != 2) ||
      (!io->in && !io->load) || (io->in && io->in_bits != 8 && io->in_bits != 16) ||
      (io->out_kind == HT_CUDA_OUT_STORE ? !io->store : !io->out)) {
    say(msg, n, "invalid arguments to the CUDA module");
    return HT_CUDA_ERR_UNSUPPORTED;
  }
  if (variant < 0 || variant >= HT_CUDA_VARIANT_COUNT) {
    say(msg, n, "unknown GPU variant %d", variant);
    return HT_CUDA_ERR_UNSUPPORTED;
  }
  if (cudaSetDevice(d->device) != cudaSuccess) {
    cudaGetLastError();
    say(msg, n, "cannot select CUDA device %d", d->device);
    return HT_CUDA_ERR_GPU;
  }
  /* HT_CUDA_HOST_REGISTER=1 pins the caller's pageable planes for the run
   * (cudaHostRegister) instead of copying them through staging. */
  std::vector<void *> registered;
  if (env_long("HT_CUDA_HOST_REGISTER", 0) == 1) {
    const size_t in_bytes = io->in ? (size_t)(io->height - 1) * io->in_stride + (size_t)io->width * (size_t)(io->in_bits / 8) : 0;
    const size_t out_row = io->out_kind == HT_CUDA_OUT_BIT1 ? ((size_t)io->width + 7) / 8 : (size_t)io->width;
    const size_t out_bytes = io->out_kind != HT_CUDA_OUT_STORE ? (size_t)(io->height - 1) * io->out_stride + out_row : 0;
    void *ptrs[2] = { (void *)(uintptr_t)io->in, io->out };
    size_t sizes[2] = { in_bytes, out_bytes };
    for (int k = 0; k < 2; k++)
      if (sizes[k] && !is_pinned(ptrs[k])) {
        if (cudaHostRegister(ptrs[k], sizes[k], cudaHostRegisterDefault) == cudaSuccess)
          registered.push_back(ptrs[k]);
        else
          cudaGetLastError();
      }
  }
  int r = variant == HT_CUDA_VARIANT_FAST ? run_fast(d, f, io, msg, n) : run_paper(d, variant, f, io, msg, n);
  for (void *q : registered)
    cudaHostUnregister(q);
  return r;
}

void *m_host_alloc(void *p, size_t bytes)
{
  (void)p;
  void *h = nullptr;
  if (cudaHostAlloc(&h, bytes, cudaHostAllocPortable) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return h;
}

void m_host_free(void *p, void *h)
{
  (void)p;
  if (h)
    cudaFreeHost(h);
}

double median(std::vector<double> v)
{
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

int m_bench_kernel(void *p, int variant, const ht_cuda_filter *f, const uint8_t *in, int W, int H, int reps,
                   uint8_t *levels, double *ms, char *msg, size_t n)
{
  dev *d = (dev *)p;
  ctx_err ce{ msg, n };
  ht_gpu_filter g;
  to_gpu_filter(f, &g);
  cudaSetDevice(d->device);
  const size_t in_pitch = roundup(roundup((size_t)W, 32), 512), out_pitch = in_pitch;
  const int Hpad = (int)roundup((size_t)H, 32);
  const int D = ht_fast_down(&g);
  const size_t bound_row = roundup((size_t)W, 32);
  std::vector<double> t;
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  if (!grow_dev(ce, &d->d_in, &d->d_in_size, in_pitch * (size_t)Hpad, false, "the input") ||
      !grow_dev(ce, (void **)&d->d_out, &d->d_out_size, out_pitch * (size_t)Hpad, false, "the output"))
    return status_of(ce);
  if (variant == HT_CUDA_VARIANT_FAST &&
      (!grow_dev(ce, (void **)&d->d_bound, &d->d_bound_size,
                 (size_t)(Hpad / 32 + 1) * (size_t)D * bound_row * sizeof(unsigned), true, "the band boundaries") ||
       !grow_host(ce, (void **)&d->h_done, &d->h_done_n, (size_t)(Hpad / 32) * sizeof(unsigned),
                  cudaHostAllocMapped, "the band flags")))
    return status_of(ce);
  if (!ce.check(cudaMemcpy2D(d->d_in, in_pitch, in, (size_t)W, (size_t)W, (size_t)H, cudaMemcpyHostToDevice),
                "upload") ||
      !ce.check(cudaEventCreate(&e0), "event") || !ce.check(cudaEventCreate(&e1), "event"))
    goto out;
  {
    ht_fast_params fp;
    memset(&fp, 0, sizeof fp);
    unsigned *done_dev = nullptr;
    if (variant == HT_CUDA_VARIANT_FAST) {
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
      fp.levels = f->levels;
      fill_q(f, fp.q);
      for (int i = 0; i < 256; i++)
        fp.lut[i] = (unsigned char)i;
      fp.bound = d->d_bound;
      fp.bound_row = bound_row;
      fp.ticket = d->d_ticket;
      fp.in_ready = d->d_ready;
      fp.stripe_rows = Hpad;
      fp.done = done_dev;
    }
    const int wps = (int)env_long("HT_CUDA_FAST_WPS", 0);
    for (int r = 0; r < reps; r++) {
      if (variant == HT_CUDA_VARIANT_FAST) {
        if (++d->tag == 0)
          d->tag = 1;
        fp.tag = d->tag;
        if (!next_wtag(d, ce, 0))
          goto out;
        fp.wtag = d->wtag;
      }
      if (!ce.check(cudaEventRecord(e0, d->comp), "event"))
        goto out;
      if (variant == HT_CUDA_VARIANT_FAST) {
        if (!ce.check(cudaMemsetAsync(d->d_ticket, 0, sizeof(int), d->comp), "memset") ||
            !ce.check(ht_fast_launch(&g, &fp, d->prop.multiProcessorCount, wps, d->comp), "the kernel"))
          goto out;
      } else {
#if HT_HAVE_PAPER
        if (!ce.check(ht_gpu_paper_run((ht_gpu_paper_variant)(variant - HT_CUDA_VARIANT_PAPER_FIRST), d->d_in, 8,
                                       in_pitch, d->d_out, out_pitch, W, H, &g, d->comp),
                      "the paper variant"))
          goto out;
#else
        say(msg, n, "this module was built without the paper's variants");
        ce.err = cudaErrorNotSupported;
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
    if (variant == HT_CUDA_VARIANT_FAST && faulted(d, ce))
      goto out;
    if (variant == HT_CUDA_VARIANT_FAST && getenv("HT_BENCH_TRACE")) {
      /* one more run with time stamps: where the time goes between bands */
      const int nb = (H + 31) / 32;
      unsigned long long *dt = nullptr;
      std::vector<unsigned long long> tr((size_t)(HT_FAST_TRACE_BAND + HT_FAST_TRACE_GROUPS) * (size_t)nb);
      if (ce.check(cudaMalloc((void **)&dt, tr.size() * 8), "cudaMalloc")) {
        fp.trace = dt;
        fp.tag = ++d->tag;
        if (!next_wtag(d, ce, 0))
          goto out;
        fp.wtag = d->wtag;
        if (ce.check(cudaMemsetAsync(dt, 0, tr.size() * 8, d->comp), "memset") &&
            ce.check(cudaMemsetAsync(d->d_ticket, 0, sizeof(int), d->comp), "memset") &&
            ce.check(ht_fast_launch(&g, &fp, d->prop.multiProcessorCount, wps, d->comp), "the kernel") &&
            ce.check(cudaStreamSynchronize(d->comp), "the kernel") &&
            ce.check(cudaMemcpy(tr.data(), dt, tr.size() * 8, cudaMemcpyDeviceToHost), "trace")) {
          if (const char *tf = getenv("HT_BENCH_TRACE_FILE")) {
            FILE *f = fopen(tf, "ab");
            const unsigned long long hdr[3] = { (unsigned long long)W, (unsigned long long)H, (unsigned long long)tr.size() };
            if (!f || fwrite(hdr, 8, 3, f) != 3 || fwrite(tr.data(), 8, tr.size(), f) != tr.size())
              fprintf(stderr, "HT_BENCH_TRACE_FILE %s: %s\n", tf, strerror(errno));
            if (f)
              fclose(f);
          }
          const auto at = [&](int b, int k) { return tr[HT_FAST_TRACE_BAND * (size_t)b + (size_t)k]; };
          unsigned long long t0 = at(0, HT_FT_START);
          for (int b = 0; b < nb; b++)
            t0 = std::min(t0, at(b, HT_FT_START));
          double span = (double)(at(nb - 1, HT_FT_END) - t0) / 1e3;
          double gap = nb > 1 ? (double)(at(nb - 1, HT_FT_END) - at(0, HT_FT_END)) / 1e3 / (nb - 1) : 0;
          fprintf(stderr, "trace %dx%d: span %.1f us, band 0 %.1f us, band ends every %.3f us (%d bands)\n", W, H,
                  span, (double)(at(0, HT_FT_END) - at(0, HT_FT_START)) / 1e3, gap, nb);
          if (nb > 2 && at(1, HT_FT_FIRST) != 0) {
            /* HT_FAST_STATS builds: the first group's arrival, and the waits after it */
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
                    (double)(at(nb - 1, HT_FT_FIRST) - at(1, HT_FT_FIRST)) / 1e3 / (nb - 2), n / (nb - 1), nb0 / (nb - 1), cyc / (nb - 1),
                    mx[mx.size() / 2], mx[mx.size() * 9 / 10], mx.back());
            fprintf(stderr, "stats: first group to column 15 of the last row %.0f cycles; first-group polls %.2f; "
                    "a load's round trip %.0f cycles\n",
                    c15 / (nb - 1), sp0 / (nb - 1), rt / (nb - 1));
            fprintf(stderr, "stats: clock %.3f GHz (band 1)\n", (double)at(1, HT_FT_CLOCKS) / (double)(at(1, HT_FT_END) - at(1, HT_FT_START)));
            /* the lag between consecutive bands at group g, averaged over bands 2.. */
            const auto gt = [&](int b, int g) { return tr[HT_FAST_TRACE_BAND * (size_t)nb + HT_FAST_TRACE_GROUPS * (size_t)b + (size_t)g]; };
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
        }
        fp.trace = nullptr;
        cudaFree(dt);
      }
    }
    ce.check(cudaMemcpy2D(levels, (size_t)W, d->d_out, out_pitch, (size_t)W, (size_t)H, cudaMemcpyDeviceToHost),
             "download");
  }
out:
  if (e0)
    cudaEventDestroy(e0);
  if (e1)
    cudaEventDestroy(e1);
  if (ce.err != cudaSuccess) {
    drain(d);
    cudaGetLastError();
    return ce.err == cudaErrorNotSupported ? HT_CUDA_ERR_UNSUPPORTED : status_of(ce);
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

int m_bench_probe(void *p, int steps, double *ns, char *msg, size_t n)
{
  /* one band of Floyd-Steinberg: no band waits for another, so the time
   * per step is the per-pixel dependency chain of the kernel's loop */
  ht_cuda_filter f;
  memset(&f, 0, sizeof f);
  f.ntaps = 4;
  const int dx[4] = { 1, -1, 0, 1 }, dy[4] = { 0, 1, 1, 1 }, num[4] = { 7, 3, 5, 1 };
  for (int i = 0; i < 4; i++) {
    f.dx[i] = dx[i];
    f.dy[i] = dy[i];
    f.q[i] = HT_Q(num[i], 16);
  }
  f.reach_left = f.reach_right = f.reach_down = 1;
  f.delay = 2;
  f.levels = 2;
  std::vector<uint8_t> in((size_t)steps * 32), lv((size_t)steps * 32);
  for (size_t i = 0; i < in.size(); i++)
    in[i] = (uint8_t)((i * 2654435761u) >> 24);
  double ms = 0;
  int r = m_bench_kernel(p, HT_CUDA_VARIANT_FAST, &f, in.data(), steps, 32, 5, lv.data(), &ms, msg, n);
  if (r != HT_CUDA_OK)
    return r;
  const double total_steps = (double)roundup((size_t)steps, 32) + 31 * 2 + 2;
  *ns = ms * 1e6 / total_steps;
  return HT_CUDA_OK;
}

const ht_cuda_module_api api = {
  HT_CUDA_ABI, m_open, m_close, m_info, m_run, m_host_alloc, m_host_free, m_bench_kernel, m_bench_transfer,
  m_bench_probe,
};

} // namespace

EXPORT const ht_cuda_module_api *ht_cuda_module_entry(int abi)
{
  return abi == HT_CUDA_ABI ? &api : nullptr;
}

/* cuda/device.cu: the open device (module.h's open, close, info and
 * pinned host memory) and the cached buffers that runs grow on demand. */
#include "module_private.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

namespace htcuda {

void say(char *msg, size_t n, const char *fmt, ...)
{
  if (!msg || !n)
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, n, fmt, ap);
  va_end(ap);
}

bool ctx_err::check(cudaError_t e, const char *what)
{
  if (e == cudaSuccess)
    return true;
  if (err == cudaSuccess) {
    err = e;
    say(msg, n, "CUDA error in %s: %s", what, cudaGetErrorString(e));
  }
  return false;
}

bool env_set(const char *name)
{
  const char *s = getenv(name);
  return s && *s && strcmp(s, "0") != 0;
}

long env_long(const char *name, long def)
{
  const char *s = getenv(name);
  if (!s || !*s)
    return def;
  char *end;
  long v = strtol(s, &end, 10);
  return *end ? def : v;
}

static bool fail_alloc_simulated() { return env_set("HT_CUDA_FAIL_ALLOC"); }

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

/* Cleared slots hold 0, which is no tag's word, so after the clear no
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

/* A kernel of this module: asking for its attributes fails where the
 * module has no code for the device's generation. */
__global__ void code_probe() {}

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
  e = cudaFuncGetAttributes(&fa, code_probe);
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

} // namespace htcuda

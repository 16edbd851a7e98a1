/* The shared arithmetic headers compiled by nvcc and run on the GPU give
 * what the C core computes: core/shared/fixed.h (terms, levels, rounding),
 * core/shared/rng.h (Philox4x32-10 keyed by seed, plane, x, y) and core/shared/eye.h
 * (the projected error of the eye model). The host side here is plain
 * C++ from the same headers, checked against the C core itself by
 * tests/core/test-arith.c; the eye table comes from the core (eye.c), as
 * the search kernels get it. Exits 77 where no GPU is usable. */
#include "../../core/shared/eye.h"
#include "../../core/shared/fixed.h"
#include "../../core/shared/rng.h"

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "../include/ht-check.h"

static bool ok(cudaError_t e, const char *what)
{
  if (e != cudaSuccess)
    fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
  return e == cudaSuccess;
}

__global__ void rng_kernel(uint64_t seed, uint32_t plane, int w, int h, uint32_t *out)
{
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x >= w || y >= h)
    return;
  uint32_t r[4];
  ht_rng4(seed, plane, (uint32_t)x, (uint32_t)y, (uint32_t)(x & 3), r);
  uint32_t *o = out + ((size_t)y * w + x) * 6;
  for (int i = 0; i < 4; i++)
    o[i] = r[i];
  o[4] = ht_rng_below(r[0], 1000);
  o[5] = (uint32_t)ht_rng_fx(r[1]);
}

__global__ void eye_kernel(ht_eye eye, const int32_t *a, const int32_t *b, int w, int h, int32_t *e)
{
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x < w && y < h)
    e[(size_t)y * w + x] = ht_eye_error_at(&eye, a, b, w, w, h, x, y);
}

__global__ void fixed_kernel(const int32_t *v, int n, int32_t *out)
{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  const int levels = 2 + (i % 255);
  out[4 * i + 0] = ht_fx_term(v[i] - 32768, 1 + (i % 4096));
  out[4 * i + 1] = ht_fx_quantize(v[i], levels);
  out[4 * i + 2] = ht_fx_level(i % levels, levels);
  out[4 * i + 3] = ht_fx_binary(v[i]);
}

int main()
{
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    printf("no usable GPU: skipped\n");
    return SKIP;
  }
  const int w = 1000, h = 300;
  const size_t n = (size_t)w * h;

  /* rng */
  uint32_t *d_r = nullptr;
  std::vector<uint32_t> r(n * 6);
  if (!ok(cudaMalloc(&d_r, n * 6 * sizeof(uint32_t)), "cudaMalloc"))
    return 1;
  const uint64_t seeds[] = { 0, 1, 0x0123456789abcdefull, ~0ull };
  for (uint64_t seed : seeds)
    for (uint32_t plane = 0; plane < 4; plane++) {
      rng_kernel<<<dim3((w + 127) / 128, h), 128>>>(seed, plane, w, h, d_r);
      if (!ok(cudaMemcpy(r.data(), d_r, n * 6 * sizeof(uint32_t), cudaMemcpyDeviceToHost), "rng kernel"))
        return 1;
      int bad = 0;
      for (int y = 0; y < h && !bad; y++)
        for (int x = 0; x < w && !bad; x++) {
          uint32_t want[4];
          ht_rng4(seed, plane, (uint32_t)x, (uint32_t)y, (uint32_t)(x & 3), want);
          const uint32_t *got = &r[((size_t)y * w + x) * 6];
          if (memcmp(got, want, sizeof want) != 0 || got[4] != ht_rng_below(want[0], 1000) ||
              got[5] != (uint32_t)ht_rng_fx(want[1])) {
            CHECK(0, "rng differs at seed %llx plane %u (%d, %d)", (unsigned long long)seed, plane, x, y);
            bad = 1;
          }
        }
    }
  cudaFree(d_r);

  /* fixed point */
  std::vector<int32_t> v(n), fx(n * 4);
  uint64_t s = 88172645463325252ull;
  for (size_t i = 0; i < n; i++) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    v[i] = (int32_t)(s % 200000) - 67000;
  }
  int32_t *d_v = nullptr, *d_fx = nullptr;
  if (!ok(cudaMalloc(&d_v, n * sizeof(int32_t)), "cudaMalloc") ||
      !ok(cudaMalloc(&d_fx, n * 4 * sizeof(int32_t)), "cudaMalloc") ||
      !ok(cudaMemcpy(d_v, v.data(), n * sizeof(int32_t), cudaMemcpyHostToDevice), "upload"))
    return 1;
  fixed_kernel<<<(unsigned)((n + 255) / 256), 256>>>(d_v, (int)n, d_fx);
  if (!ok(cudaMemcpy(fx.data(), d_fx, n * 4 * sizeof(int32_t), cudaMemcpyDeviceToHost), "fixed kernel"))
    return 1;
  for (size_t i = 0; i < n; i++) {
    const int levels = 2 + (int)(i % 255);
    const int32_t want[4] = { ht_fx_term(v[i] - 32768, 1 + (int32_t)(i % 4096)), ht_fx_quantize(v[i], levels),
                              ht_fx_level((int32_t)(i % (size_t)levels), levels), ht_fx_binary(v[i]) };
    if (memcmp(&fx[4 * i], want, sizeof want) != 0) {
      CHECK(0, "fixed point differs at %zu (v = %d)", i, v[i]);
      break;
    }
  }

  /* the eye: the paper's and the widest */
  const ht_eye_params eps[] = { { 1.0, 3 }, { 4.0, HT_EYE_MAX_RADIUS }, { 0.25, 1 } };
  std::vector<int32_t> a(n), b(n), e(n);
  for (size_t i = 0; i < n; i++) {
    a[i] = (v[i] % 65536 + 65536) % 65536;
    b[i] = (v[i] & 1) ? HT_FX_ONE : 0;
  }
  int32_t *d_a = nullptr, *d_b = nullptr, *d_e = nullptr;
  if (!ok(cudaMalloc(&d_a, n * sizeof(int32_t)), "cudaMalloc") ||
      !ok(cudaMalloc(&d_b, n * sizeof(int32_t)), "cudaMalloc") ||
      !ok(cudaMalloc(&d_e, n * sizeof(int32_t)), "cudaMalloc") ||
      !ok(cudaMemcpy(d_a, a.data(), n * sizeof(int32_t), cudaMemcpyHostToDevice), "upload") ||
      !ok(cudaMemcpy(d_b, b.data(), n * sizeof(int32_t), cudaMemcpyHostToDevice), "upload"))
    return 1;
  for (const ht_eye_params &p : eps) {
    ht_eye eye;
    CHECK(ht_eye_init(&eye, &p), "eye sigma %g radius %d refused", p.sigma, p.radius);
    eye_kernel<<<dim3((w + 127) / 128, h), 128>>>(eye, d_a, d_b, w, h, d_e);
    if (!ok(cudaMemcpy(e.data(), d_e, n * sizeof(int32_t), cudaMemcpyDeviceToHost), "eye kernel"))
      return 1;
    int64_t total = 0;
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++) {
        const int32_t want = ht_eye_error_at(&eye, a.data(), b.data(), w, w, h, x, y), got = e[(size_t)y * w + x];
        if (got != want) {
          CHECK(0, "eye sigma %g radius %d differs at (%d, %d): %d, not %d", p.sigma, p.radius, x, y, got, want);
          y = h;
          break;
        }
        total += got < 0 ? -(int64_t)got : got;
      }
    CHECK(total == ht_eye_total_error(&eye, a.data(), b.data(), w, w, h), "total error differs");
  }
  cudaFree(d_v);
  cudaFree(d_fx);
  cudaFree(d_a);
  cudaFree(d_b);
  cudaFree(d_e);
  return test_finish("cuda arith");
}

/* cuda/search/field.cu: the books of a plane being searched on the GPU,
 * as core/search/field.c keeps them: the random initial image (Kouge,
 * Ito, Nakano, Sec. III, Step 1: white with probability a / 65536, from
 * core/shared/rng.h keyed by seed, plane, x, y, so every backend draws the same
 * image) and the error field e = a * HT_EYE_ONE - V*b' (formulas 2 and
 * 3, core/shared/eye.h's border rule: outside the image the input of the
 * nearest pixel inside). Integers throughout, so the field is the CPU's. */
#include "common.cuh"
#include "../../core/shared/eye.h"
#include "../../core/shared/rng.h"

namespace htcuda {

namespace {

struct eye_table {
  int32_t w[sx::MAX_SIDE * sx::MAX_SIDE];
};

__global__ void random_kernel(const uint16_t *a, uint8_t *b, int W, int H, uint64_t seed, uint32_t plane,
                              long long y0)
{
  const int x = (int)(blockIdx.x * blockDim.x + threadIdx.x);
  for (int y = (int)blockIdx.y; x < W && y < H; y += (int)gridDim.y) {
    const size_t p = (size_t)y * W + x;
    const uint32_t r = ht_rng(seed, plane, (uint32_t)x, (uint32_t)(y0 + y));
    b[p] = (uint8_t)(ht_rng_fx(r) < (int32_t)a[p]);
  }
}

/* e at (x, y), eye.h's ht_eye_error_at with b' = 65535 b inside. */
__device__ int32_t error_at(const uint16_t *a, const uint8_t *b, int W, int H, int r, const eye_table &eye, int x, int y)
{
  const int S = 2 * r + 1;
  int32_t v = (int32_t)a[(size_t)y * W + x] * HT_EYE_ONE;
  for (int dy = -r; dy <= r; dy++)
    for (int dx = -r; dx <= r; dx++) {
      const int qy = y + dy, qx = x + dx;
      int32_t o;
      if (qy >= 0 && qy < H && qx >= 0 && qx < W)
        o = b[(size_t)qy * W + qx] ? HT_FX_ONE : 0;
      else
        o = a[(size_t)ht_eye_clamp(qy, H) * W + ht_eye_clamp(qx, W)];
      v -= eye.w[(dy + r) * S + dx + r] * o;
    }
  return v;
}

__global__ void field_kernel(const uint16_t *a, const uint8_t *b, int32_t *e, int W, int H, int r,
                             const eye_table eye)
{
  const int x = (int)(blockIdx.x * blockDim.x + threadIdx.x);
  for (int y = (int)blockIdx.y; x < W && y < H; y += (int)gridDim.y)
    e[(size_t)y * W + x] = error_at(a, b, W, H, r, eye, x, y);
}

} // namespace

cudaError_t sx_launch_random(const uint16_t *a, uint8_t *b, int W, int H, uint64_t seed, int plane, int64_t y0,
                             cudaStream_t st)
{
  random_kernel<<<dim3((unsigned)(W + 127) / 128, (unsigned)(H < 65535 ? H : 65535)), 128, 0, st>>>(a, b, W, H, seed, (uint32_t)plane,
                                                                              (long long)y0);
  return cudaGetLastError();
}

cudaError_t sx_launch_field(const uint16_t *a, const uint8_t *b, int32_t *e, int W, int H, int r, const int32_t *eye,
                            cudaStream_t st)
{
  eye_table t = {};
  for (int i = 0; i < (2 * r + 1) * (2 * r + 1); i++)
    t.w[i] = eye[i];
  field_kernel<<<dim3((unsigned)(W + 127) / 128, (unsigned)(H < 65535 ? H : 65535)), 128, 0, st>>>(a, b, e, W, H, r, t);
  return cudaGetLastError();
}

} // namespace htcuda

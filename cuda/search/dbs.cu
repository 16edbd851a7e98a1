/* cuda/search/dbs.cu: direct binary search (DBS, Analoui and Allebach)
 * on the GPU, on the parallel schedule of Kouge, Ito, Nakano, Sec. IV-B
 * with the eye model and error of their formulas 1-4.
 *
 * A step is small (a toggle and at most 8 swaps, each a sum over the
 * (2r + 1)^2 errors a flip reaches), so a warp takes a q x q block, its
 * lanes the errors of a flip, and a thread block holds a few such warps
 * (blocks of the same group, independent). The choice is core/search/
 * dbs.c's: the candidate that lowers the total error most, strictly,
 * the first in the order toggle, then swaps with the neighbours in raster
 * order, none when nothing lowers it. Each sum is exact in int32 (a
 * flip's changes, core/search/kernel.h), so the lanes' order does not
 * matter. */
#include "common.cuh"

namespace htcuda {

namespace {

using namespace sx;

constexpr int WARPS = 4; /* q x q blocks per thread block */
constexpr int P4 = 4;    /* the pixel: the centre of its 3 x 3 window */

__device__ __forceinline__ int32_t warp_sum(int32_t v)
{
  for (int o = 16; o > 0; o /= 2)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__global__ void dbs_kernel(const plane P)
{
  extern __shared__ __align__(16) int32_t dsm[];
  const int lane = threadIdx.x, rs = P.rh * P.rw, S = P.S, SS = S * S;
  int32_t *reg = dsm + threadIdx.y * 2 * rs, *tog = reg + rs; /* the errors, and with the toggle */
  const int blk = P.first + (int)(blockIdx.x * WARPS + threadIdx.y);
  if (blk >= P.last)
    return;
  visit_block(P, blk, lane, warp_barrier(), [&](int y0, int x0) {
    load_region(P, y0, x0, reg, lane, 32);
    uint32_t in;
    const uint32_t cur = read_pattern(P, y0, x0, &in);
    __syncwarp();
    for (int t = lane; t < rs; t += 32)
      tog[t] = reg[t];
    __syncwarp();
    /* the toggle: p's reach starts at region (1, 1) */
    const bool wp = !(cur >> P4 & 1);
    int32_t d = 0;
    for (int t = lane; t < SS; t += 32) {
      const int dy = t / S, dx = t % S, idx = (1 + dy) * P.rw + 1 + dx;
      const int32_t m = mag_at(P, y0, x0, P4, dy, dx), o = reg[idx], v = wp ? o - m : o + m;
      tog[idx] = v;
      d += abs(v) - abs(o);
    }
    const int32_t toggle = warp_sum(d);
    __syncwarp();
    long long best = toggle < 0 ? toggle : 0;
    uint32_t kept = toggle < 0 ? cur ^ 1u << P4 : cur;
    const uint32_t other = (cur >> P4 & 1) ? ~cur : cur; /* bit k: k differs from p */
    for (int k = 0; k < 9; k++) {
      if (k == P4 || !(in >> k & 1) || !(other >> k & 1))
        continue;
      const int ky = k / 3, kx = k % 3;
      const bool wk = !(cur >> k & 1);
      int32_t a = 0;
      for (int t = lane; t < SS; t += 32) {
        const int dy = t / S, dx = t % S;
        const int32_t m = mag_at(P, y0, x0, k, dy, dx), o = tog[(ky + dy) * P.rw + kx + dx];
        a += abs(wk ? o - m : o + m) - abs(o);
      }
      const long long dk = (long long)toggle + warp_sum(a);
      if (dk < best) {
        best = dk;
        kept = cur ^ (1u << P4 | 1u << k);
      }
    }
    if (kept == cur)
      return false;
    commit(P, y0, x0, reg, kept, (kept ^ cur) & in, lane, 32);
    return true;
  });
}

} // namespace

cudaError_t sx_launch_dbs(const plane &P, cudaStream_t st)
{
  const int blocks = (P.last - P.first + WARPS - 1) / WARPS;
  const size_t bytes = (size_t)WARPS * 2 * P.rh * P.rw * sizeof(int32_t);
  dbs_kernel<<<blocks, dim3(32, WARPS), bytes, st>>>(P);
  return cudaGetLastError();
}

} // namespace htcuda

/* cuda/color_pd.cu: plane-dependent colour error diffusion on the GPU,
 * exact (Zhang et al., Sec. 2.1, computed by the k-delay scan of Kasagi
 * et al. Sec. III instead of the paper's pinwheel blocks, which change
 * the result; docs/color.md proves the scan gives the sequential bits).
 *
 * A warp runs a band of 32 rows, a lane per row, in lockstep steps: at
 * step s lane i processes column s - i K, K = the filter's reach left + 1,
 * so a row is always K columns behind the row above, which has then
 * finished every column whose errors reach the pixel. All P planes of a
 * pixel are processed by its lane in order; the forward share stays in
 * the lane, the backward share goes to the lane's next column, kept in
 * registers: no dependency between rows is added. Bands are taken in
 * order from a ticket by resident warps (a persistent kernel), and a
 * band's lane 0 waits for the band above's published steps. Errors are
 * added with integer atomics into whole-image planes: the same terms as
 * core/color/pd.c in another order, so the same integers. */
#include "module_private.h"
#include "../core/color/pd.h"

#include <cstdint>

namespace htcuda {

namespace {

constexpr int WARP = 32;
constexpr int PUB = 4; /* steps between two publications of a band's progress */

struct pd_filter {
  int ntaps;
  int8_t dx[HT_FILTER_MAX_TAPS], dy[HT_FILTER_MAX_TAPS];
  int32_t q[HT_FILTER_MAX_TAPS];
};

struct pd_args {
  int64_t w, h;
  int planes, K;
  int levels[HT_PD_MAX_PLANES];
  int32_t fwd[HT_PD_MAX_PLANES], bwd[HT_PD_MAX_PLANES];
  int32_t amount;
  uint64_t seed;
  const uint16_t *in; /* [plane][y][x] */
  int32_t *err;       /* [plane][y][x], zeroed */
  uint8_t *out;       /* [plane][y][x] level indices */
  unsigned *ticket;
  volatile unsigned long long *done; /* per band: steps finished */
  int64_t nbands, steps;
};

__global__ void pd_kernel(pd_args a, pd_filter f)
{
  const int lane = threadIdx.x & (WARP - 1);
  const size_t plane_size = (size_t)a.w * (size_t)a.h;
  for (;;) {
    int64_t band = 0;
    if (lane == 0)
      band = atomicAdd(a.ticket, 1u);
    band = __shfl_sync(0xffffffffu, (long long)band, 0);
    if (band >= a.nbands)
      return;
    const int64_t y = band * WARP + lane;
    const bool row_ok = y < a.h;
    int32_t back[HT_PD_MAX_PLANES] = { 0, 0, 0, 0 };
    unsigned long long seen = band == 0 ? ~0ull : 0;
    for (int64_t s = 0; s < a.steps; s++) {
      /* lane 0 needs the band above's lane 31 past column x + K - 1:
       * that lane reaches column c at step c + 31 K */
      if (lane == 0 && band > 0) {
        const unsigned long long need = (unsigned long long)(s + a.K - 1 + 31 * a.K + 1);
        const unsigned long long cap = (unsigned long long)a.steps;
        const unsigned long long want = need < cap ? need : cap;
        while (seen < want)
          seen = a.done[band - 1];
        __threadfence();
      }
      __syncwarp();
      const int64_t x = s - (int64_t)lane * a.K;
      if (row_ok && x >= 0 && x < a.w) {
        const bool last = x == a.w - 1;
        const size_t at = (size_t)y * (size_t)a.w + (size_t)x;
        int32_t fwd = 0, nback[HT_PD_MAX_PLANES] = { 0, 0, 0, 0 };
        for (int j = 0; j < a.planes; j++) {
          int32_t *ej = a.err + (size_t)j * plane_size;
          const int32_t v = (int32_t)a.in[(size_t)j * plane_size + at] + __ldcg(ej + at) + fwd + back[j];
          int32_t e;
          a.out[(size_t)j * plane_size + at] = (uint8_t)ht_pd_round(v, a.levels[j], &e);
          fwd = ht_pd_term(e, a.fwd[j]);
          const int32_t b = last ? 0 : ht_pd_term(e, a.bwd[j]);
          if (j > 0)
            nback[j - 1] = b;
          const int32_t ei = e - fwd - b;
          int32_t q[HT_FILTER_MAX_TAPS];
          if (a.amount)
            ht_pd_perturb(f.q, f.ntaps, a.amount, a.seed, (uint32_t)j, (uint32_t)x, (uint32_t)y, q);
          else
            for (int t = 0; t < f.ntaps; t++)
              q[t] = f.q[t];
          for (int t = 0; t < f.ntaps; t++) {
            const int64_t tx = x + f.dx[t], ty = y + f.dy[t];
            if (tx < 0 || tx >= a.w || ty >= a.h)
              continue;
            const int32_t term = ht_pd_term(ei, q[t]);
            if (term)
              atomicAdd(ej + (size_t)ty * (size_t)a.w + (size_t)tx, term);
          }
        }
        for (int j = 0; j < HT_PD_MAX_PLANES; j++)
          back[j] = nback[j];
      }
      __syncwarp();
      if (lane == 0 && ((s + 1) % PUB == 0 || s + 1 == a.steps)) {
        __threadfence();
        a.done[band] = (unsigned long long)(s + 1);
      }
    }
  }
}

} // namespace

int color_pd(dev *d, const ht_filter *flt, ht_cuda_color *c, char *msg, size_t n)
{
  if (!c || !flt || c->width <= 0 || c->height <= 0 || c->planes < 1 || c->planes > HT_PD_MAX_PLANES || !c->in ||
      !c->out || flt->ntaps < 0 || flt->ntaps > HT_FILTER_MAX_TAPS) {
    say(msg, n, "invalid arguments to the CUDA module's plane-dependent colour");
    return HT_CUDA_ERR_UNSUPPORTED;
  }
  pd_filter f;
  f.ntaps = flt->ntaps;
  for (int t = 0; t < flt->ntaps; t++) {
    f.dx[t] = flt->taps[t].dx;
    f.dy[t] = flt->taps[t].dy;
    f.q[t] = flt->taps[t].q;
    if (f.dy[t] < 0 || f.dy[t] > HT_FILTER_MAX_DOWN || (f.dy[t] == 0 && f.dx[t] <= 0) || f.dx[t] < -flt->reach_left) {
      say(msg, n, "the CUDA module cannot run filter %.32s: taps out of range", flt->name);
      return HT_CUDA_ERR_UNSUPPORTED;
    }
  }
  if (cudaSetDevice(d->device) != cudaSuccess) {
    cudaGetLastError();
    say(msg, n, "cannot select CUDA device %d", d->device);
    return HT_CUDA_ERR_GPU;
  }
  pd_args a{};
  a.w = c->width;
  a.h = c->height;
  a.planes = c->planes;
  a.K = flt->reach_left + 1;
  for (int j = 0; j < HT_PD_MAX_PLANES; j++) {
    a.levels[j] = c->levels[j] ? c->levels[j] : 2;
    a.fwd[j] = c->forward[j];
    a.bwd[j] = c->backward[j];
  }
  a.amount = c->amount;
  a.seed = c->seed;
  a.nbands = (c->height + WARP - 1) / WARP;
  a.steps = c->width + (int64_t)(WARP - 1) * a.K;
  const size_t px = (size_t)c->width * (size_t)c->height * (size_t)c->planes;
  uint16_t *din = nullptr;
  int32_t *derr = nullptr;
  uint8_t *dout = nullptr;
  unsigned *dticket = nullptr;
  unsigned long long *ddone = nullptr;
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  int r = HT_CUDA_OK;
  if (cudaMalloc(&din, px * 2) != cudaSuccess || cudaMalloc(&derr, px * 4) != cudaSuccess ||
      cudaMalloc(&dout, px) != cudaSuccess || cudaMalloc(&dticket, sizeof *dticket) != cudaSuccess ||
      cudaMalloc(&ddone, (size_t)a.nbands * sizeof *ddone) != cudaSuccess) {
    cudaGetLastError();
    say(msg, n, "%zu MB of GPU memory for a %lldx%lld image of %d planes", px * 7 >> 20, (long long)c->width,
        (long long)c->height, c->planes);
    r = HT_CUDA_ERR_NO_MEMORY;
    goto out;
  }
  if (cudaMemcpy(din, c->in, px * 2, cudaMemcpyHostToDevice) != cudaSuccess ||
      cudaMemset(derr, 0, px * 4) != cudaSuccess || cudaMemset(dticket, 0, sizeof *dticket) != cudaSuccess ||
      cudaMemset(ddone, 0, (size_t)a.nbands * sizeof *ddone) != cudaSuccess) {
    r = HT_CUDA_ERR_GPU;
    say(msg, n, "copy to the GPU failed: %s", cudaGetErrorString(cudaGetLastError()));
    goto out;
  }
  a.in = din;
  a.err = derr;
  a.out = dout;
  a.ticket = dticket;
  a.done = ddone;
  {
    /* only resident warps: a band waits for the band above, which a warp
     * already running holds */
    const int threads = 128;
    int per_sm = 0;
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, pd_kernel, threads, 0);
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, d->device);
    int64_t blocks = (int64_t)(per_sm > 0 ? per_sm : 1) * prop.multiProcessorCount;
    const int64_t need = (a.nbands + threads / WARP - 1) / (threads / WARP);
    if (blocks > need)
      blocks = need;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    cudaEventRecord(e0);
    pd_kernel<<<(unsigned)blocks, threads>>>(a, f);
    cudaEventRecord(e1);
    if (cudaEventSynchronize(e1) != cudaSuccess || cudaGetLastError() != cudaSuccess) {
      r = HT_CUDA_ERR_GPU;
      say(msg, n, "the plane-dependent kernel failed: %s", cudaGetErrorString(cudaGetLastError()));
      goto out;
    }
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    c->kernel_ms = ms;
  }
  if (cudaMemcpy(c->out, dout, px, cudaMemcpyDeviceToHost) != cudaSuccess) {
    r = HT_CUDA_ERR_GPU;
    say(msg, n, "copy from the GPU failed: %s", cudaGetErrorString(cudaGetLastError()));
  }
out:
  if (e0)
    cudaEventDestroy(e0);
  if (e1)
    cudaEventDestroy(e1);
  cudaFree(din);
  cudaFree(derr);
  cudaFree(dout);
  cudaFree(dticket);
  cudaFree(ddone);
  return r;
}

} // namespace htcuda

/* cuda/search/les.cu: local exhaustive search (LES) on the GPU: Kouge,
 * Ito, Nakano, Sec. IV-B (a thread block per q x q block of a group, its
 * windows in raster order, the patterns of a window split over the
 * threads and reduced) over Sec. II-B's search (formula 6) and Sec. III's
 * Gray-code order with incremental errors.
 *
 * The result is core/search/les.c's: the pattern of least region error,
 * the current one unless another is strictly better, among equal better
 * ones the smallest value (docs/search.md). Thread h of the 2^hb threads
 * takes the patterns whose high hb bits are h: it copies the region,
 * flips the high bits that differ from the current pattern, then walks
 * the low n - hb bits in the binary reflected Gray code (one flip a
 * step, the same pixel in every thread at once, so the flip tables are
 * read as broadcasts). Each thread keeps its least negative (error,
 * value) and the block takes the least; as every sum is exact, the order
 * of the visit does not matter. */
#include "common.cuh"

namespace htcuda {

namespace {

using namespace sx;

struct les {
  /* The pattern of least error, cur unless another is strictly better. */
  template <int S> __device__ static uint32_t search(const plane &P, const frame &F, uint32_t cur)
  {
    const int nt = blockDim.x, tid = threadIdx.x, rs = P.rh * P.rw;
    const uint32_t lomask = (1u << F.lo) - 1;
    cand c = { 0, 0xffffffffu }; /* none: only errors below the current one count */
    if (tid < (1 << F.hb)) {
      const long long base = region_error(F.reg, rs); /* the current pattern's region error */
      uint32_t x = (uint32_t)tid << F.lo;            /* the low pixels black */
      long long sum = start_at<S>(P, F, x, cur);
      if (sum < 0)
        c = { sum, x };
      const uint32_t end = low_bound(F.slot, nt, F.reach, rs) >= base ? 0 : lomask;
      for (uint32_t t = 1; t <= end; t++) {
        const int k = __ffs(t) - 1;
        x ^= 1u << k;
        sum += flip<S>(F.slot, nt, F.tab + k * S * S, F.at[k], P.rw, x >> k & 1);
        if (sum < c.sum || (sum == c.sum && sum < 0 && x < c.x))
          c = { sum, x };
      }
    }
    const cand best = block_min(c, F.red);
    return best.sum < 0 ? best.x : cur;
  }
};

} // namespace

cudaError_t sx_launch_les(const plane &P, int nt, size_t bytes, cudaStream_t st)
{
  return launch_windows<les>(P, nt, bytes, st);
}

} // namespace htcuda

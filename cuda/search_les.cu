/* cuda/search_les.cu: local exhaustive search (LES) on the GPU: Kouge,
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
#include "search_common.cuh"

namespace htcuda {

namespace {

using namespace sx;

template <int S> __global__ void les_kernel(const plane P)
{
  extern __shared__ __align__(16) unsigned char smem[];
  const int nt = blockDim.x, tid = threadIdx.x, rs = P.rh * P.rw, n = P.n;
  const smem_layout Lo = layout(rs, n, S, nt);
  int32_t *reg = (int32_t *)(smem + Lo.reg), *tab = (int32_t *)(smem + Lo.tab);
  int32_t *slot = (int32_t *)(smem + Lo.slots) + tid;
  cand *red = (cand *)(smem + Lo.red);
  int *at = (int *)(smem + Lo.at);
  int32_t *reach = (int32_t *)(smem + Lo.reach);
  int hb = 0; /* the high bits the threads split: 2^hb <= nt, hb <= n */
  while (hb < n && (2 << hb) <= nt)
    hb++;
  const int lo = n - hb;
  const uint32_t lomask = (1u << lo) - 1;
  int i0, i1, j0, j1;
  block_range(P, P.first + (int)blockIdx.x, i0, i1, j0, j1);
  unsigned long long searched = 0, changed = 0;
  for (int i = i0; i < i1; i++)
    for (int j = j0; j < j1; j++) {
      __syncthreads(); /* the last window's commit is seen, shared memory free */
      const bool due = P.dirty[(size_t)i * P.pw + j] != 0;
      __syncthreads();
      if (!due)
        continue;
      if (tid == 0)
        P.dirty[(size_t)i * P.pw + j] = 0;
      searched++;
      const int y0 = i + P.off, x0 = j + P.off;
      prepare(P, y0, x0, reg, tab, at);
      uint32_t in;
      const uint32_t cur = read_pattern(P, y0, x0, &in);
      __syncthreads();
      low_reach(P, tab, reach, lo);
      __syncthreads();
      cand c = { 0, 0xffffffffu }; /* none: only errors below the current one count */
      if (tid < (1 << hb)) {
        long long base = 0; /* the current pattern's region error */
        for (int t = 0; t < rs; t++) {
          slot[(size_t)t * nt] = reg[t];
          base += abs(reg[t]);
        }
        uint32_t x = (uint32_t)tid << lo; /* the low pixels black */
        long long sum = 0;
        for (uint32_t f = x ^ cur; f; f &= f - 1) {
          const int k = __ffs(f) - 1;
          sum += flip<S>(slot, nt, tab + k * S * S, at[k], P.rw, x >> k & 1);
        }
        if (sum < 0)
          c = { sum, x };
        const uint32_t end = low_bound(slot, nt, reach, rs) >= base ? 0 : lomask;
        for (uint32_t t = 1; t <= end; t++) {
          const int k = __ffs(t) - 1;
          x ^= 1u << k;
          sum += flip<S>(slot, nt, tab + k * S * S, at[k], P.rw, x >> k & 1);
          if (sum < c.sum || (sum == c.sum && sum < 0 && x < c.x))
            c = { sum, x };
        }
      }
      const cand best = block_min(c, red);
      if (best.sum < 0) {
        commit(P, y0, x0, reg, best.x, best.x ^ cur, tid, nt);
        changed++;
      }
    }
  if (tid == 0 && searched) {
    atomicAdd(&P.count[0], searched);
    if (changed) {
      atomicAdd(&P.count[1], changed);
      *P.changed = 1;
    }
  }
}

template <int S> cudaError_t launch(const plane &P, int nt, size_t bytes, cudaStream_t st)
{
  cudaError_t e = cudaFuncSetAttribute(les_kernel<S>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
  if (e != cudaSuccess)
    return e;
  les_kernel<S><<<P.last - P.first, nt, bytes, st>>>(P);
  return cudaGetLastError();
}

} // namespace

cudaError_t sx_launch_les(const plane &P, int nt, size_t bytes, cudaStream_t st)
{
  switch (P.S) {
  case 3: return launch<3>(P, nt, bytes, st);
  case 5: return launch<5>(P, nt, bytes, st);
  case 7: return launch<7>(P, nt, bytes, st);
  case 9: return launch<9>(P, nt, bytes, st);
  case 11: return launch<11>(P, nt, bytes, st);
  case 13: return launch<13>(P, nt, bytes, st);
  default: return launch<15>(P, nt, bytes, st);
  }
}

} // namespace htcuda

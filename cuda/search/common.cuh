/* cuda/search/common.cuh: what the search kernels (search/les.cu,
 * search/pes.cu, search/dbs.cu) share: the plane on the device, the
 * parallel schedule's blocks and groups, the skip map's visit, a window's
 * region and flip tables, the commit; LES's and PES's kernel, whose
 * files give only the search of one window. The arithmetic is core/search/'s: a flip
 * of one window pixel adds or subtracts 65535 w to the errors it reaches
 * inside the image (Kouge, Ito, Nakano, Sec. III), all in int32 and
 * int64 (docs/arithmetic.md), so every sum is the CPU's exactly.
 *
 * The parallel schedule (Sec. IV-B, Fig. 5) is core/search/schedule.c's:
 * window positions tiled by q x q blocks from (0, 0), q = 2r + side - 1,
 * four groups by (block row parity, block column parity) in the order
 * (even, even), (even, odd), (odd, even), (odd, odd); one launch (or a
 * few, for progress) per group, the blocks of a group at once, each
 * visiting its positions in raster order. No two windows of one group
 * reach each other's affected regions, so the blocks of a group never
 * touch each other's errors, pixels or skip-map flags, and the result is
 * the CPU's whatever order the GPU runs them in. */
#ifndef HT_CUDA_SEARCH_COMMON_CUH
#define HT_CUDA_SEARCH_COMMON_CUH

#include "../module.h"

#include <cuda_runtime.h>
#include <cstddef>
#include <cstdint>

namespace htcuda {
namespace sx {

constexpr int MAX_SIDE = 2 * HT_EYE_MAX_RADIUS + 1;
constexpr int MAX_BITS = HT_SEARCH_WINDOW_MAX * HT_SEARCH_WINDOW_MAX;

/* One plane being searched, passed by value to every launch. */
struct plane {
  int W, H;         /* the image                                         */
  int r, S;         /* the eye's radius and side 2r + 1                  */
  int wh, ww, off;  /* windows: wh x ww pixels from (i + off, j + off)   */
  int n;            /* window pixels, wh ww                              */
  int ph, pw, q;    /* positions and the block side                      */
  int rh, rw;       /* a window's region: wh + 2r rows, ww + 2r columns  */
  int32_t *e;       /* the error field, W a row (core/shared/eye.h)      */
  uint8_t *b;       /* the output, 0 black, 1 white                      */
  uint8_t *dirty;   /* the skip map, one flag per position               */
  unsigned long long *count; /* [0] windows searched, [1] changed        */
  int *changed;     /* set when a window changed in this round           */
  int group, gbc;   /* the group and its block columns                   */
  int first, last;  /* the launch's blocks of the group: first .. last-1 */
  /* |a flip|: 65535 w(dx, dy) at [(dy + r) S + dx + r] (the output level
   * 1 is 65535, fixed.h) */
  int32_t mag[MAX_SIDE * MAX_SIDE];
};

/* The positions of block `blk` of the group (schedule.c's run_block). */
__device__ __forceinline__ void block_range(const plane &P, int blk, int &i0, int &i1, int &j0, int &j1)
{
  const int br = (P.group >> 1) + 2 * (blk / P.gbc), bc = (P.group & 1) + 2 * (blk % P.gbc);
  i0 = br * P.q;
  i1 = min(i0 + P.q, P.ph);
  j0 = bc * P.q;
  j1 = min(j0 + P.q, P.pw);
}

__device__ __forceinline__ bool inside(const plane &P, int y, int x) { return y >= 0 && y < P.H && x >= 0 && x < P.W; }

/* Marks the positions whose window lies within 2r of the pixels y0..y1 x
 * x0..x1 (schedule.c's ht_sx_mark), lanes lane, lane + nl, ... */
__device__ inline void mark(const plane &P, int y0, int y1, int x0, int x1, int lane, int nl)
{
  const int d = 2 * P.r;
  const int i0 = max(y0 - d - P.wh + 1 - P.off, 0), i1 = min(y1 + d - P.off, P.ph - 1);
  const int j0 = max(x0 - d - P.ww + 1 - P.off, 0), j1 = min(x1 + d - P.off, P.pw - 1);
  const int cols = j1 - j0 + 1, cnt = (i1 - i0 + 1) * cols;
  for (int t = lane; t < cnt; t += nl)
    P.dirty[(size_t)(i0 + t / cols) * P.pw + j0 + t % cols] = 1;
}

/* The region of the window with top-left pixel (y0, x0): its errors, 0
 * for pixels outside the image (whose tables are 0, so they never
 * change or count). */
__device__ inline void load_region(const plane &P, int y0, int x0, int32_t *reg, int lane, int nl)
{
  const int rs = P.rh * P.rw;
  for (int t = lane; t < rs; t += nl) {
    const int y = y0 - P.r + t / P.rw, x = x0 - P.r + t % P.rw;
    reg[t] = inside(P, y, x) ? P.e[(size_t)y * P.W + x] : 0;
  }
}

/* The window's pattern: bit k is window pixel k (raster order) white;
 * *in: the pixels inside the image. */
__device__ inline uint32_t read_pattern(const plane &P, int y0, int x0, uint32_t *in)
{
  uint32_t cur = 0, msk = 0;
  for (int k = 0; k < P.n; k++) {
    const int y = y0 + k / P.ww, x = x0 + k % P.ww;
    if (inside(P, y, x)) {
      msk |= 1u << k;
      cur |= (uint32_t)P.b[(size_t)y * P.W + x] << k;
    }
  }
  *in = msk;
  return cur;
}

/* |flip| of window pixel k at region offset (dy, dx) from its reach's
 * corner: 0 where that pixel lies outside the image. */
__device__ __forceinline__ int32_t mag_at(const plane &P, int y0, int x0, int k, int dy, int dx)
{
  const int y = y0 + k / P.ww + dy - P.r, x = x0 + k % P.ww + dx - P.r;
  return inside(P, y, x) ? P.mag[dy * P.S + dx] : 0;
}

/* Sets the window to `pattern` (flipped: the pixels that change): the
 * errors of its region from `reg` (the current pattern's) plus the flips,
 * written where inside the image; the pixels; the skip map. Lanes lane,
 * lane + nl, ...; the caller synchronises after. */
__device__ inline void commit(const plane &P, int y0, int x0, const int32_t *reg, uint32_t pattern, uint32_t flipped,
                              int lane, int nl)
{
  const int rs = P.rh * P.rw;
  for (int t = lane; t < rs; t += nl) {
    const int ly = t / P.rw, lx = t % P.rw, y = y0 - P.r + ly, x = x0 - P.r + lx;
    if (!inside(P, y, x))
      continue;
    int32_t v = reg[t];
    for (uint32_t f = flipped; f; f &= f - 1) {
      const int k = __ffs(f) - 1, dy = ly - k / P.ww, dx = lx - k % P.ww;
      if (dy >= 0 && dy < P.S && dx >= 0 && dx < P.S) {
        const int32_t m = P.mag[dy * P.S + dx]; /* (y, x) is inside */
        v = (pattern >> k & 1) ? v - m : v + m;
      }
    }
    P.e[(size_t)y * P.W + x] = v;
  }
  int ky0 = P.wh, ky1 = -1, kx0 = P.ww, kx1 = -1;
  for (uint32_t f = flipped; f; f &= f - 1) {
    const int k = __ffs(f) - 1, ky = k / P.ww, kx = k % P.ww;
    ky0 = min(ky0, ky);
    ky1 = max(ky1, ky);
    kx0 = min(kx0, kx);
    kx1 = max(kx1, kx);
    if (lane == 0)
      P.b[(size_t)(y0 + ky) * P.W + x0 + kx] = (uint8_t)(pattern >> k & 1);
  }
  mark(P, y0 + ky0, y0 + ky1, x0 + kx0, x0 + kx1, lane, nl);
}

/* A candidate: its error minus the current pattern's, and its value. */
struct cand {
  long long sum;
  uint32_t x;
};

/* By error, then by value (the tie rule of docs/search.md). */
__device__ __forceinline__ bool lex_less(cand a, cand b) { return a.sum < b.sum || (a.sum == b.sum && a.x < b.x); }

/* The least candidate of a thread block (every thread passes its own;
 * every thread gets the result). red: blockDim.x entries. */
__device__ inline cand block_min(cand c, cand *red)
{
  const int tid = threadIdx.x, nt = blockDim.x;
  red[tid] = c;
  __syncthreads();
  for (int s = nt / 2; s > 0; s /= 2) {
    if (tid < s && lex_less(red[tid + s], red[tid]))
      red[tid] = red[tid + s];
    __syncthreads();
  }
  const cand out = red[0];
  __syncthreads();
  return out;
}

/* Shared memory of LES and PES for blocks of nt threads: the region
 * (rs), each pixel's flip table (n S^2), each thread's copy of the
 * region pixel-major (rs nt, so that the threads of a warp touch
 * consecutive banks), the reduction (nt candidates) and the region
 * offsets of the window's pixels. */
struct smem_layout {
  size_t reg, tab, slots, red, at, reach, bytes;
};

__host__ __device__ inline smem_layout layout(int rs, int n, int S, int nt)
{
  smem_layout L;
  L.reg = 0;
  L.tab = L.reg + (size_t)rs * 4;
  L.slots = L.tab + (size_t)n * S * S * 4;
  L.red = (L.slots + (size_t)rs * nt * 4 + 15) / 16 * 16;
  L.at = L.red + (size_t)nt * sizeof(cand);
  L.reach = L.at + (size_t)MAX_BITS * 4;
  L.bytes = L.reach + (size_t)rs * 4;
  return L;
}

/* Flips window pixel k in the calling thread's copy of the region
 * (slots + tid, stride nt): its table t (S x S), its reach starting at
 * region offset `at`; `white`: it turns white (errors fall). Returns the
 * change of the region's sum of |e|, which fits int32 (core/search/
 * kernel.h, ht_sx_flip). */
template <int S>
__device__ __forceinline__ int32_t flip(int32_t *slots, int nt, const int32_t *t, int at, int rw, bool white)
{
  int32_t d = 0;
#pragma unroll
  for (int dy = 0; dy < S; dy++) {
    int32_t *row = slots + (size_t)(at + dy * rw) * nt;
#pragma unroll
    for (int dx = 0; dx < S; dx++) {
      const int32_t m = t[dy * S + dx], o = row[(size_t)dx * nt];
      const int32_t v = white ? o - m : o + m;
      row[(size_t)dx * nt] = v;
      d += abs(v) - abs(o);
    }
  }
  return d;
}

/* Block-wide preparation of a window for LES and PES: the region, each
 * pixel's flip table (0 outside the image), the pixels' region offsets. */
__device__ inline void prepare(const plane &P, int y0, int x0, int32_t *reg, int32_t *tab, int *at)
{
  const int tid = threadIdx.x, nt = blockDim.x, SS = P.S * P.S;
  load_region(P, y0, x0, reg, tid, nt);
  for (int t = tid; t < P.n * SS; t += nt) {
    const int k = t / SS, u = t % SS;
    tab[t] = mag_at(P, y0, x0, k, u / P.S, u % P.S);
  }
  for (int k = tid; k < P.n; k += nt)
    at[k] = (k / P.ww) * P.rw + k % P.ww;
}

/* The reach of the low `lo` window pixels at each region pixel: the sum
 * of their tables, so that with the high pixels fixed and the low ones
 * free an error e lies in [e0 - reach, e0], e0 the error with the low
 * pixels black (turning white lowers e). Call after prepare and a
 * barrier. Fits int32: the weights of all pixels sum to HT_EYE_ONE. */
__device__ inline void low_reach(const plane &P, const int32_t *tab, int32_t *reach, int lo)
{
  const int SS = P.S * P.S;
  for (int t = threadIdx.x; t < P.rh * P.rw; t += blockDim.x) {
    const int ly = t / P.rw, lx = t % P.rw;
    int32_t a = 0;
    for (int k = 0; k < lo; k++) {
      const int dy = ly - k / P.ww, dx = lx - k % P.ww;
      if (dy >= 0 && dy < P.S && dx >= 0 && dx < P.S)
        a += tab[k * SS + dy * P.S + dx];
    }
    reach[t] = a;
  }
}

/* The least error (minus the current pattern's, base) that any pattern
 * of the calling thread's block can have: its region (slot) holds e0,
 * the low pixels black (low_reach); the sum over the region of the
 * distance from 0 to [e0 - reach, e0]. A block whose bound is >= 0 holds
 * nothing strictly better than the current pattern, which is all that
 * LES and PES can keep (docs/search.md), so the thread skips it. */
__device__ __forceinline__ long long low_bound(const int32_t *slot, int nt, const int32_t *reach, int rs)
{
  long long b = 0;
  for (int t = 0; t < rs; t++) {
    const long long e = slot[(size_t)t * nt], lo = e - reach[t];
    b += lo > 0 ? lo : e < 0 ? -e : 0;
  }
  return b;
}

/* Barriers of the threads that search one block of positions: the whole
 * thread block (LES, PES) or one warp (DBS). */
struct block_barrier {
  __device__ void operator()() const { __syncthreads(); }
};
struct warp_barrier {
  __device__ void operator()() const { __syncwarp(); }
};

/* Visits the positions of block `blk` of the group in raster order; each
 * that the skip map marks has its flag cleared and goes to window(y0,
 * x0), the window's top-left pixel, which returns whether it changed the
 * window. Lanes 0.. of the threads that search the block, `barrier`
 * theirs. Adds the windows searched and changed to P.count and raises
 * P.changed. */
template <class Barrier, class Window>
__device__ inline void visit_block(const plane &P, int blk, int lane, Barrier barrier, Window window)
{
  int i0, i1, j0, j1;
  block_range(P, blk, i0, i1, j0, j1);
  unsigned long long searched = 0, changed = 0;
  for (int i = i0; i < i1; i++)
    for (int j = j0; j < j1; j++) {
      barrier(); /* the last window's commit is seen, shared memory free */
      const bool due = P.dirty[(size_t)i * P.pw + j] != 0;
      barrier();
      if (!due)
        continue;
      if (lane == 0)
        P.dirty[(size_t)i * P.pw + j] = 0;
      searched++;
      if (window(i + P.off, j + P.off))
        changed++;
    }
  if (lane == 0 && searched) {
    atomicAdd(&P.count[0], searched);
    if (changed) {
      atomicAdd(&P.count[1], changed);
      *P.changed = 1;
    }
  }
}

/* What LES and PES search a window with, in shared memory (layout) but
 * slot, the calling thread's copy of the region; the 2^hb threads that
 * search take the patterns whose high hb bits are their index, the low
 * lo = n - hb bits free. */
struct frame {
  int32_t *reg, *tab, *slot, *reach;
  cand *red;
  int *at;
  int hb, lo;
};

/* The sum of |e| over the region `reg`: the current pattern's error. */
__device__ __forceinline__ long long region_error(const int32_t *reg, int rs)
{
  long long base = 0;
  for (int t = 0; t < rs; t++)
    base += abs(reg[t]);
  return base;
}

/* The calling thread's start: its copy of the region set to the current
 * pattern cur's, then turned to pattern x by flipping the pixels where
 * they differ. Returns the error of x minus cur's. */
template <int S>
__device__ inline long long start_at(const plane &P, const frame &F, uint32_t x, uint32_t cur)
{
  const int nt = blockDim.x, rs = P.rh * P.rw;
  for (int t = 0; t < rs; t++)
    F.slot[(size_t)t * nt] = F.reg[t];
  long long sum = 0;
  for (uint32_t f = x ^ cur; f; f &= f - 1) {
    const int k = __ffs(f) - 1;
    sum += flip<S>(F.slot, nt, F.tab + k * S * S, F.at[k], P.rw, x >> k & 1);
  }
  return sum;
}

/* The kernel of LES and PES (Sec. IV-B, IV-C): a thread block per block
 * of the group; each due window prepared (region, flip tables, pattern,
 * the low pixels' reach), Method::search<S>(P, F, cur) gives the pattern
 * to keep (the same in every thread), committed where it is not cur. */
template <int S, class Method> __global__ void window_kernel(const plane P)
{
  extern __shared__ __align__(16) unsigned char smem[];
  const int nt = blockDim.x, tid = threadIdx.x, n = P.n;
  const smem_layout Lo = layout(P.rh * P.rw, n, S, nt);
  frame F;
  F.reg = (int32_t *)(smem + Lo.reg);
  F.tab = (int32_t *)(smem + Lo.tab);
  F.slot = (int32_t *)(smem + Lo.slots) + tid;
  F.reach = (int32_t *)(smem + Lo.reach);
  F.red = (cand *)(smem + Lo.red);
  F.at = (int *)(smem + Lo.at);
  F.hb = 0; /* the high bits the threads split: 2^hb <= nt, hb <= n */
  while (F.hb < n && (2 << F.hb) <= nt)
    F.hb++;
  F.lo = n - F.hb;
  visit_block(P, P.first + (int)blockIdx.x, tid, block_barrier(), [&](int y0, int x0) {
    prepare(P, y0, x0, F.reg, F.tab, F.at);
    uint32_t in;
    const uint32_t cur = read_pattern(P, y0, x0, &in);
    __syncthreads();
    low_reach(P, F.tab, F.reach, F.lo);
    __syncthreads();
    const uint32_t kept = Method::template search<S>(P, F, cur);
    if (kept == cur)
      return false;
    commit(P, y0, x0, F.reg, kept, kept ^ cur, tid, nt);
    return true;
  });
}

template <int S, class Method> cudaError_t launch_sized(const plane &P, int nt, size_t bytes, cudaStream_t st)
{
  cudaError_t e = cudaFuncSetAttribute(window_kernel<S, Method>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
  if (e != cudaSuccess)
    return e;
  window_kernel<S, Method><<<P.last - P.first, nt, bytes, st>>>(P);
  return cudaGetLastError();
}

/* window_kernel for the eye's side P.S, a template argument so that the
 * flips unroll. */
template <class Method> cudaError_t launch_windows(const plane &P, int nt, size_t bytes, cudaStream_t st)
{
  switch (P.S) {
  case 3: return launch_sized<3, Method>(P, nt, bytes, st);
  case 5: return launch_sized<5, Method>(P, nt, bytes, st);
  case 7: return launch_sized<7, Method>(P, nt, bytes, st);
  case 9: return launch_sized<9, Method>(P, nt, bytes, st);
  case 11: return launch_sized<11, Method>(P, nt, bytes, st);
  case 13: return launch_sized<13, Method>(P, nt, bytes, st);
  default: return launch_sized<15, Method>(P, nt, bytes, st);
  }
}

/* The device's limits for LES and PES blocks: the threads (a power of
 * two, 32..256, at most 2^n where that is more than 32) whose shared
 * memory fits in smem_max bytes; 0 where none does. */
inline int threads_for(int rs, int n, int S, size_t smem_max)
{
  int nt = 256;
  while (nt > 32 && nt / 2 >= (1 << (n < 8 ? n : 8)))
    nt /= 2;
  while (nt >= 32 && layout(rs, n, S, nt).bytes > smem_max)
    nt /= 2;
  return nt >= 32 ? nt : 0;
}

} // namespace sx

/* The launches of the search kernels, one file each: blocks first ..
 * last - 1 of group P.group (nt threads, `bytes` of shared memory for LES
 * and PES, from threads_for and layout). */
cudaError_t sx_launch_les(const sx::plane &P, int nt, size_t bytes, cudaStream_t st);
cudaError_t sx_launch_pes(const sx::plane &P, int nt, size_t bytes, cudaStream_t st);
cudaError_t sx_launch_dbs(const sx::plane &P, cudaStream_t st);
/* search/field.cu: the random initial image (core/shared/rng.h) and the error
 * field (core/shared/eye.h) of a whole plane; eye: the Q15 weights. */
cudaError_t sx_launch_random(const uint16_t *a, uint8_t *b, int W, int H, uint64_t seed, int plane, int64_t y0,
                             cudaStream_t st);
cudaError_t sx_launch_field(const uint16_t *a, const uint8_t *b, int32_t *e, int W, int H, int r, const int32_t *eye,
                            cudaStream_t st);

} // namespace htcuda

#endif

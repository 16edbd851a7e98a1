/* cuda/fast.cu: gpu-fast, our exact error diffusion kernel.
 *
 * The k-delay parallel scan of Kasagi et al. (Sec. III, "k-D PEC") with
 * the paper's warp-synchronous idea (Sec. V: the w threads of a warp run
 * in lockstep, so a warp needs no barrier) taken further:
 *  - a warp owns a band of 32 rows, lane j = row j; lane j runs column
 *    x = s - j*K at step s (K = the filter's delay), so every error a lane
 *    collects from the rows above was computed by the lanes above at an
 *    earlier step and arrives by __shfl_up_sync: no shared or global
 *    memory on the dependency chain inside a band (error collection,
 *    Sec. II, on registers: "register caching");
 *  - bands hand the errors of their last rows to the next band through
 *    global memory as 64-bit words (tag << 32 | error): the consumer spins
 *    until the tag is this launch's, so no fence, flag or extra kernel
 *    call sits between bands (the paper needs one kernel call per
 *    parallelogram diagonal, Sec. V);
 *  - the kernel is persistent and takes bands from an atomic ticket, in
 *    order: a warp only ever waits for a band that a running warp holds,
 *    so it cannot deadlock whatever the number of resident warps;
 *  - input and output go through per-row rings in shared memory, loaded
 *    and stored 32 columns at a time with 16-byte accesses (the rows are
 *    skewed by j*K in the ring so each step's 32 accesses hit 32 banks).
 * Pixel arithmetic is core/fixed.h only, so the result equals core/ed.c.
 * Filters are run in a few "boxes" (K, D, L, R); taps of the box that the
 * filter does not have carry weight 0, and ht_fx_term(e, 0) == 0.
 */
#include "fast.h"
#include "../core/fixed.h"

#include <stdlib.h>

#define FULL 0xffffffffu

__device__ __forceinline__ unsigned long long ld_relaxed_u64(const unsigned long long *p)
{
  unsigned long long v;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p));
  return v;
}

__device__ __forceinline__ void st_relaxed_u64(unsigned long long *p, unsigned long long v)
{
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v));
}

__device__ __forceinline__ int ld_acquire_s32(const int *p)
{
  int v;
  asm volatile("ld.acquire.sys.global.s32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

template <typename Tin> __device__ __forceinline__ int32_t to_fx(Tin v);
template <> __device__ __forceinline__ int32_t to_fx<unsigned char>(unsigned char v) { return ht_fx_from_u8(v); }
template <> __device__ __forceinline__ int32_t to_fx<unsigned short>(unsigned short v) { return (int32_t)v; }

/* Element i (0..31) of a 32-element row block held in uint4 registers. */
template <typename Tin> __device__ __forceinline__ Tin block_elem(const uint4 *v, int i)
{
  constexpr int per = 16 / (int)sizeof(Tin);
  const uint4 u = v[i / per];
  const int k = i % per;
  constexpr int sh = 8 * (int)sizeof(Tin);
  const unsigned w = (k * sh / 32) == 0 ? u.x : (k * sh / 32) == 1 ? u.y : (k * sh / 32) == 2 ? u.z : u.w;
  return (Tin)(w >> ((k * sh) % 32));
}

template <int K, int D, int L, int R, bool BIN, typename Tin, int PF>
__global__ void __launch_bounds__(32) fast_kernel(const ht_fast_params p)
{
  constexpr int RING = 128;                    /* columns kept per row       */
  constexpr int SZ = (int)sizeof(Tin);
  constexpr int PIN = RING * SZ + 4;           /* +4 bytes: rows hit banks j */
  constexpr int POUT = RING + 4;
  constexpr int NV = 2 * SZ;                   /* uint4 per 32-column block  */
  __shared__ __align__(16) unsigned char s_in[32 * PIN];
  __shared__ __align__(16) unsigned char s_out[32 * POUT];
  __shared__ int s_lvl[BIN ? 1 : 256];
  __shared__ unsigned char s_lut[256];

  const int lane = (int)threadIdx.x;
  const int W = p.width;
  const int levels = p.levels;

  int q[D + 1][L + R + 1];
#pragma unroll
  for (int dy = 0; dy <= D; dy++)
#pragma unroll
    for (int i = 0; i <= L + R; i++)
      q[dy][i] = p.q[dy][i - L + 4];
  for (int i = lane; i < 256; i += 32) {
    s_lut[i] = p.lut[i];
    if (!BIN)
      s_lvl[i % (BIN ? 1 : 256)] = i < levels ? ht_fx_level(i, levels) : HT_FX_ONE;
  }
  const int32_t lvl1 = ht_fx_level(1, 2);
  const unsigned char lut0 = p.lut[0], lut1 = p.lut[1];
  __syncwarp();

  const int nblocks = (W + 31) / 32;
  const int nbands = (p.height + 31) / 32;
  const int sigma0 = -D * K;
  const int nsteps = nblocks * 32 + 31 * K + D * K;
  const int nchunks = (nsteps + 31) / 32;
  unsigned char *my_in = s_in + lane * PIN;
  unsigned char *my_out = s_out + lane * POUT;

  for (;;) {
    int b = 0;
    if (lane == 0)
      b = atomicAdd(p.ticket, 1);
    b = __shfl_sync(FULL, b, 0);
    if (b >= nbands)
      break;
    if (lane == 0) {
      const int need = (b * 32) / p.stripe_rows + 1;
      while (ld_acquire_s32(p.in_ready) < need)
        __nanosleep(256);
    }
    __syncwarp();

    const int row = b * 32 + lane;
    const Tin *inrow = (const Tin *)((const unsigned char *)p.in + (size_t)row * p.in_pitch);
    unsigned char *outrow = p.out + (size_t)row * p.out_pitch;
    const bool have_up = b > 0 || p.have_carry;
    const unsigned etag = b > 0 ? p.tag : p.carry_tag;
    const unsigned long long wtag = (unsigned long long)p.tag << 32;
    /* virtual lanes -m (m = 1..D) are the last rows of the band above:
     * lane j < dy reads them for its "dy rows up" neighbour, m = dy - j */
    const unsigned long long *uprow[D];
#pragma unroll
    for (int dy = 1; dy <= D; dy++) {
      const int m = dy - lane;
      uprow[dy - 1] = p.bound + ((size_t)b * D + (size_t)(D - (m > 0 ? m : 1))) * p.bound_row;
    }
    unsigned long long *dnrow =
        p.bound + ((size_t)(b + 1) * D + (size_t)(lane >= 32 - D ? lane - (32 - D) : 0)) * p.bound_row;

    int own[R > 0 ? R : 1];
#pragma unroll
    for (int i = 0; i < (R > 0 ? R : 1); i++)
      own[i] = 0;
    int up[D][D * K + R];
#pragma unroll
    for (int dy = 0; dy < D; dy++)
#pragma unroll
      for (int i = 0; i < D * K + R; i++)
        up[dy][i] = 0;
    unsigned long long pf[D][PF];
#pragma unroll
    for (int dy = 1; dy <= D; dy++)
#pragma unroll
      for (int t = 0; t < PF; t++) {
        pf[dy - 1][t] = 0;
        const int col = sigma0 + t + (dy - lane) * K;
        if (lane < dy && have_up && col >= 0 && col < W)
          pf[dy - 1][t] = ld_relaxed_u64(uprow[dy - 1] + col);
      }

    /* first input block (c = -1 in the loop's terms) */
    {
      const int B = (sigma0 + 31 - lane * K) >> 5;
      if (B >= 0 && B < nblocks) {
        uint4 v[NV];
        const uint4 *src = (const uint4 *)(inrow + B * 32);
#pragma unroll
        for (int i = 0; i < NV; i++)
          v[i] = __ldcg(src + i);
#pragma unroll
        for (int i = 0; i < 32; i++)
          *(Tin *)(my_in + ((B * 32 + i + lane * K) & (RING - 1)) * SZ) = block_elem<Tin>(v, i);
      }
    }

    for (int c = 0; c < nchunks; c++) {
      const int base = sigma0 + 32 * c;
      /* the block lane j needs in chunk c + 1, loaded now, stored at the end */
      const int B = (base + 63 - lane * K) >> 5;
      const bool ldb = B >= 0 && B < nblocks;
      uint4 nv[NV];
      if (ldb) {
        const uint4 *src = (const uint4 *)(inrow + B * 32);
#pragma unroll
        for (int i = 0; i < NV; i++)
          nv[i] = __ldcg(src + i);
      }

#pragma unroll
      for (int t = 0; t < 32; t++) {
        const int sg = base + t;
        const int x = sg - lane * K;
        int g[D];
#pragma unroll
        for (int dy = 1; dy <= D; dy++) {
          g[dy - 1] = 0;
          if (lane < dy && have_up) {
            const int col = sg + (dy - lane) * K;
            unsigned long long v = pf[dy - 1][t % PF];
            if (col >= 0 && col < W) {
              while ((unsigned)(v >> 32) != etag)
                v = ld_relaxed_u64(uprow[dy - 1] + col);
              g[dy - 1] = (int)(unsigned)v;
            }
            const int col2 = col + PF;
            if (col2 >= 0 && col2 < W)
              pf[dy - 1][t % PF] = ld_relaxed_u64(uprow[dy - 1] + col2);
          }
        }

        int32_t acc = to_fx<Tin>(*(const Tin *)(my_in + (sg & (RING - 1)) * SZ));
#pragma unroll
        for (int dx = 1; dx <= R; dx++)
          acc += ht_fx_term(own[dx - 1], q[0][dx + L]);
#pragma unroll
        for (int dy = 1; dy <= D; dy++)
#pragma unroll
          for (int dx = -L; dx <= R; dx++)
            acc += ht_fx_term(up[dy - 1][R - dx], q[dy][dx + L]);
        int32_t lv, e;
        if (BIN) {
          lv = ht_fx_binary(acc);
          e = acc - (lv ? lvl1 : 0);
        } else {
          lv = ht_fx_quantize(acc, levels);
          e = acc - s_lvl[lv];
        }
        const bool valid = (unsigned)x < (unsigned)W;
        e = valid ? e : 0;
        unsigned char ov;
        if (p.out_bit1)
          ov = valid ? (unsigned char)lv : 1;
        else
          ov = BIN ? (lv ? lut1 : lut0) : s_lut[lv];
        my_out[sg & (RING - 1)] = ov;
        if (lane >= 32 - D && valid)
          st_relaxed_u64(dnrow + x, wtag | (unsigned)e);
#pragma unroll
        for (int i = (R > 0 ? R : 1) - 1; i > 0; i--)
          own[i] = own[i - 1];
        own[0] = e;
#pragma unroll
        for (int dy = 1; dy <= D; dy++) {
          int r = __shfl_up_sync(FULL, e, dy);
          if (lane < dy)
            r = g[dy - 1];
#pragma unroll
          for (int i = 0; i < dy * K + R - 1; i++)
            up[dy - 1][i] = up[dy - 1][i + 1];
          up[dy - 1][dy * K + R - 1] = r;
        }
      }

      if (ldb) {
#pragma unroll
        for (int i = 0; i < 32; i++)
          *(Tin *)(my_in + ((B * 32 + i + lane * K) & (RING - 1)) * SZ) = block_elem<Tin>(nv, i);
      }
      /* the block this lane completed in this chunk */
      const int F = ((base + 32 - lane * K) >> 5) - 1;
      if (F >= 0 && F < nblocks) {
        const int o = F * 32 + lane * K;
        if (p.out_bit1) {
          unsigned w = 0;
#pragma unroll
          for (int i = 0; i < 32; i++)
            w |= (unsigned)(my_out[(o + i) & (RING - 1)] == 0) << ((i & ~7) + 7 - (i & 7));
          *(unsigned *)(outrow + F * 4) = w;
        } else {
          uint4 v[2];
          unsigned *vw = (unsigned *)v;
#pragma unroll
          for (int k = 0; k < 8; k++) {
            unsigned w = 0;
#pragma unroll
            for (int i = 0; i < 4; i++)
              w |= (unsigned)my_out[(o + 4 * k + i) & (RING - 1)] << (8 * i);
            vw[k] = w;
          }
          uint4 *dst = (uint4 *)(outrow + F * 32);
          dst[0] = v[0];
          dst[1] = v[1];
        }
      }
    }
    /* publish: the band's output rows are in device memory */
    __threadfence_system();
    __syncwarp();
    if (lane == 0)
      *(volatile unsigned *)(p.done + b) = p.tag;
  }
}

/* ----------------------------------------------------------- host side */

namespace {
struct box {
  int K, D, L, R;
  const char *name;
};
/* FS and Sierra Lite; Atkinson; the 3-row 5-wide filters; any filter. */
const box boxes[] = {
  { 2, 1, 1, 1, "K2 D1 L1 R1" },
  { 2, 2, 1, 2, "K2 D2 L1 R2" },
  { 3, 2, 2, 2, "K3 D2 L2 R2" },
  { 5, 3, 4, 4, "K5 D3 L4 R4" },
};
constexpr int PF = 8; /* steps of prefetch on the band boundary */

int pick(const ht_gpu_filter *f)
{
  for (int i = 0; i < 4; i++)
    if (f->reach_left <= boxes[i].L && f->reach_right <= boxes[i].R && f->reach_down <= boxes[i].D &&
        f->delay <= boxes[i].K)
      return i;
  return 3;
}

template <int K, int D, int L, int R, bool BIN>
cudaError_t launch_t(const ht_fast_params *p, int grid, cudaStream_t s)
{
  if (p->in_bits == 16)
    fast_kernel<K, D, L, R, BIN, unsigned short, PF><<<grid, 32, 0, s>>>(*p);
  else
    fast_kernel<K, D, L, R, BIN, unsigned char, PF><<<grid, 32, 0, s>>>(*p);
  return cudaGetLastError();
}

template <int K, int D, int L, int R>
cudaError_t launch_b(const ht_fast_params *p, int grid, cudaStream_t s)
{
  return p->levels == 2 ? launch_t<K, D, L, R, true>(p, grid, s) : launch_t<K, D, L, R, false>(p, grid, s);
}
} // namespace

int ht_fast_down(const ht_gpu_filter *f) { return boxes[pick(f)].D; }
const char *ht_fast_shape_name(const ht_gpu_filter *f) { return boxes[pick(f)].name; }

cudaError_t ht_fast_launch(const ht_gpu_filter *f, const ht_fast_params *p, int sms, int wps, cudaStream_t s)
{
  const int nbands = (p->height + 31) / 32;
  if (wps <= 0)
    wps = 8;
  int grid = sms * wps;
  if (grid > nbands)
    grid = nbands;
  if (grid < 1)
    grid = 1;
  switch (pick(f)) {
  case 0: return launch_b<2, 1, 1, 1>(p, grid, s);
  case 1: return launch_b<2, 2, 1, 2>(p, grid, s);
  case 2: return launch_b<3, 2, 2, 2>(p, grid, s);
  default: return launch_b<5, 3, 4, 4>(p, grid, s);
  }
}

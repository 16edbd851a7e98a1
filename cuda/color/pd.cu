/* cuda/color/pd.cu: plane-dependent colour error diffusion on the GPU,
 * exact (Zhang et al., Sec. 2.1, computed by the k-delay scan of Kasagi
 * et al. Sec. III instead of the paper's pinwheel blocks, which change
 * the result; docs/color.md proves the scan gives the sequential bits).
 *
 * The shape of gpu-fast (fast.cu), with the errors pushed rather than
 * pulled, because a randomised filter's weights belong to the pixel that
 * makes the error:
 *  - a persistent kernel of one-warp blocks takes bands of 32 rows from
 *    an atomic ticket; lane j runs row j, column x = s - 1 - jK at step s
 *    (K = L + 1, L the box's reach to the left); all P planes of a pixel
 *    are done by its lane in order, the forward share staying in the
 *    lane and the backward share kept for the lane's next column;
 *  - a lane adds its filter terms into registers: `op` for its own row,
 *    `pd[d]` for row y + 1 + d at columns x - L .. x + R. At column x
 *    nothing more of this row reaches column x - L of the rows below, so
 *    that sum is final: the one for row y + 1 goes to the next lane by
 *    one __shfl_up_sync (it is that lane's next column, as K = L + 1),
 *    the one for row y + 1 + d (d >= 1) goes the same way into the next
 *    lane's pd[d - 1], which passes it on with its own terms. One shuffle
 *    per plane and row of reach a step; no shared or global memory and
 *    no atomics on the dependency chain inside a band;
 *  - lane 31 stores what it would pass to lane 32 as 64-bit words
 *    (band tag << 32 | value) in a small ring of carried rows, one slot
 *    per band, reused every CSLOTS bands; the next band's lanes load
 *    them CG columns at a time, PA steps before they are needed, check
 *    the tags with one warp vote, ask again for the missing ones all at
 *    once until they are there (a word that never comes marks the launch
 *    failed after seconds instead of hanging the GPU) and hand lane 0 a
 *    column a step by a shuffle;
 *  - input and output pass through per-lane rings in shared memory,
 *    moved between global memory and the ring 16 bytes at a time;
 *  - the chunks of 16 steps in which every lane is inside the image run
 *    without masks (no row end, no pixel outside), the others with them;
 *  - with fixed weights the terms are 32-bit products (T32), exact while
 *    every error stays below 2^18 in magnitude, as they do but where the
 *    feeds pour whole planes' errors into one; an error of 2^18 or more
 *    (itself exact: every value before it was) flags the launch, and the
 *    host runs it again with 64-bit products (core/color/pd_diagonal.c
 *    does the same on the CPU). Each plane's value takes the forward
 *    share of the plane before as the last term of its sum, so only that
 *    share's product and the rounding sit between two planes;
 *  - specialised for 3 and 4 planes (fewer run as 3 with empty planes
 *    that the feeds of the real ones do not reach), for the filter boxes
 *    (L, R, D) = (1,1,1) (Floyd-Steinberg, Sierra Lite), (2,2,2) (the
 *    other built-ins) and (4,4,3) (any filter), for randomised weights
 *    or not (no Philox draw when the amount is 0), and for all planes
 *    binary (no branch in a step, so the compiler schedules the planes'
 *    and steps' independent work together).
 * Every term is core/shared/pd_arith.h's ht_pd_term of the source pixel's error
 * and (perturbed) weight (in 32 bits only where that is the same integer), so each sum is the sequential run's integer
 * whatever order the terms are added in. Timings and what bounds the
 * kernel: BENCHMARKS.md, "Plane-dependent colour". */
#include "../module_private.h"
#include "../../core/shared/pd_arith.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace htcuda {

namespace {

constexpr unsigned FULL = 0xffffffffu;
constexpr int CH = 16;     /* steps a chunk: input blocks loaded, output blocks stored */
constexpr int RING = 64;   /* columns of a lane's input and output rings */
constexpr int CSLOTS = 4;  /* carried-row slots, band b writes slot (b + 1) % CSLOTS */
constexpr int QW = 9;      /* dense weights q[dy][dx + 4] */
#ifndef HT_PD_PA
#define HT_PD_PA 7
#endif
#ifndef HT_PD_NCHK
#define HT_PD_NCHK 2
#endif
/* Carried words: NCHK checks a chunk, of CG = CH / NCHK words each, the
 * words loaded PA steps before their check. Build-time knobs for
 * benchmarks; the defaults are the fastest measured (BENCHMARKS.md,
 * "Plane-dependent colour"): more checks cost more than they save in
 * waiting, and words asked for too late or too early cost a round trip. */
constexpr int PA = HT_PD_PA;
constexpr int NCHK = HT_PD_NCHK;
constexpr int CG = CH / NCHK;
static_assert(CH % NCHK == 0 && PA > 0 && PA <= CG, "a group's words are loaded within the group before");

struct pd_params {
  int w, h, nbands, nchunks;
  int levels[4];
  int32_t fwd[4], bwd[4];
  int32_t q[4][QW];
  /* randomisation, per box position: +1 first of a pair, -1 second, 0
   * none; the pair's index and the smaller of its two weights */
  int32_t rsign[4][QW], rk[4][QW], rm[4][QW];
  int npairs;
  int32_t amount;
  unsigned long long seed;
  const uint16_t *in; /* [plane][y][in_pitch] */
  size_t in_pitch, in_plane;
  uint8_t *out;       /* [plane][y][out_pitch] level indices */
  size_t out_pitch, out_plane;
  unsigned long long *carry; /* [slot][d][plane][carry_row] */
  size_t carry_row;
  int *ticket;
  int *fault;
  int *big; /* set where a T32 launch met an error of 2^18 or more */
};

__device__ __forceinline__ unsigned long long ld_word(const unsigned long long *p)
{
  unsigned long long v;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p));
  return v;
}

/* predicated, so that lane 31's store does not split the warp every step */
__device__ __forceinline__ void st_word_if(unsigned long long *p, unsigned long long v, bool c)
{
  asm volatile("{\n\t.reg .pred q;\n\tsetp.ne.b32 q, %2, 0;\n\t@q st.relaxed.gpu.global.u64 [%0], %1;\n\t}" ::"l"(p),
               "l"(v), "r"((int)c));
}

__device__ __forceinline__ unsigned long long globaltimer()
{
  unsigned long long t;
  asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
  return t;
}

/* Bits 0..31 of (a b + c) >> sh, the product and sum in 64 bits, as a
 * multiply-add and a funnel shift (the bits are those of the shift
 * whatever its handling of the sign; nvcc otherwise emits a full 64-bit
 * multiply). */
__device__ __forceinline__ int32_t wide_shr(int32_t a, int32_t b, int32_t c, int sh)
{
  unsigned lo, hi;
  asm("{\n\t.reg .s64 t, u;\n\tcvt.s64.s32 u, %4;\n\tmad.wide.s32 t, %2, %3, u;\n\tmov.b64 {%0, %1}, t;\n\t}"
      : "=r"(lo), "=r"(hi)
      : "r"(a), "r"(b), "r"(c));
  return (int32_t)__funnelshift_r(lo, hi, (unsigned)sh);
}

/* c + ht_pd_term(e, q). T32: the product in 32 bits, ht_pd_term's bits
 * while |e| < 2^18 (then |e q + 2048| < 2^31 for every q <= 4096; the
 * kernel flags any larger error and the host runs the launch again
 * without T32); else in 64 bits. */
template <bool T32> __device__ __forceinline__ int32_t term_add(int32_t e, int32_t q, int32_t c)
{
  if (T32)
    return c + ((e * q + HT_Q_HALF) >> HT_Q_BITS);
  return c + wide_shr(e, q, HT_Q_HALF, HT_Q_BITS);
}

/* (s m amount) >> 27 of ht_pd_perturb: s m fits 32 bits (|s| <= 2^15,
 * m < 2^16, checked by the host), the product with the amount does not */
__device__ __forceinline__ int32_t perturb_d(int32_t sm, int32_t amount) { return wide_shr(sm, amount, 0, 27); }

__device__ __forceinline__ uint32_t pick4(const uint32_t r[4], int i)
{
  return i == 0 ? r[0] : i == 1 ? r[1] : i == 2 ? r[2] : r[3];
}

template <bool B> struct edge_t {
  static constexpr bool value = B;
};

template <int P, int L, int R, int D, bool RAND, bool BIN, bool T32, int UNR>
__global__ void __launch_bounds__(32) pd_kernel(const pd_params a)
{
  constexpr int K = L + 1;
  constexpr int INP = P * RING + (K == 5 ? 8 : 4); /* u16 a lane: 8-byte rows, few bank conflicts */
  constexpr int OUTP = P * RING + 16;
  constexpr int NW = L + R + 1;
  __shared__ __align__(16) uint16_t s_in[32 * INP];
  __shared__ __align__(16) uint8_t s_out[32 * OUTP];
  const int lane = (int)threadIdx.x;
  uint16_t *const rin = s_in + lane * INP;
  uint8_t *const rout = s_out + lane * OUTP;
  const int W = a.w;
  const int nblk8 = (W + 7) >> 3, nblk16 = (W + 15) >> 4;
  bool bin[P];
  int32_t wf[P], wb[P];
#pragma unroll
  for (int p = 0; p < P; p++) {
    bin[p] = a.levels[p] == 2;
    wf[p] = a.fwd[p];
    wb[p] = a.bwd[p];
  }

  for (;;) {
    int b = 0;
    if (lane == 0)
      b = atomicAdd(a.ticket, 1);
    b = __shfl_sync(FULL, b, 0);
    if (b >= a.nbands)
      break;
    const int y = b * 32 + lane;
    const bool rowok = y < a.h;
    const bool full = b * 32 + 32 <= a.h; /* warp-uniform: every row in the image */
    bool have_up = b > 0;
    const uint16_t *inrow = a.in + (size_t)(rowok ? y : 0) * a.in_pitch;
    uint8_t *outrow = a.out + (size_t)(rowok ? y : 0) * a.out_pitch;
    const unsigned long long *crd = a.carry + (size_t)(b % CSLOTS) * D * P * a.carry_row;
    unsigned long long *cwr = a.carry + (size_t)((b + 1) % CSLOTS) * D * P * a.carry_row;
    const unsigned long long wtag = (unsigned long long)(unsigned)(b + 1) << 32;

    int op[P][R + 1], pd[P][D][NW], nx[P], back[P];
    uint32_t big = 0;
#pragma unroll
    for (int p = 0; p < P; p++) {
      nx[p] = back[p] = 0;
#pragma unroll
      for (int i = 0; i <= R; i++)
        op[p][i] = 0;
#pragma unroll
      for (int d = 0; d < D; d++)
#pragma unroll
        for (int i = 0; i < NW; i++)
          pd[p][d][i] = 0;
    }

    /* the ring holds the columns before 8 lb; at a chunk's start it
     * covers the chunk, and the chunk loads blocks lb, lb + 1 for the next */
    int lb = (CH - 1 - lane * K + 7) >> 3;
    {
      const int x0 = -1 - lane * K;
      for (int k = (x0 > 0 ? x0 : 0) >> 3; k < lb; k++)
        if (rowok && k < nblk8)
#pragma unroll
          for (int p = 0; p < P; p++) {
            const uint4 v = __ldcs((const uint4 *)(inrow + (size_t)p * a.in_plane) + k);
            uint2 *dst = (uint2 *)(rin + p * RING + ((k * 8) & (RING - 1)));
            dst[0] = make_uint2(v.x, v.y);
            dst[1] = make_uint2(v.z, v.w);
          }
    }
    unsigned long long nw[P][D];
    if (have_up) {
      const int col = min(lane, W - 1);
#pragma unroll
      for (int p = 0; p < P; p++)
#pragma unroll
        for (int d = 0; d < D; d++)
          nw[p][d] = ld_word(crd + (size_t)(d * P + p) * a.carry_row + col);
    }

    int cur[P][D] = {};
    for (int c = 0; c < a.nchunks; c++) {
      const int base = c * CH;
      const int x0 = base - 1 - lane * K;
      /* lane i < CH holds the words of column base + i, which lane 0
       * takes at step base + i, at column base + i - 1 */
      const int col = base + lane;
      /* Makes the words of group h of the chunk (lanes CG h .. CG h + CG - 1) current,
       * waiting until each carries this band's tag; the missing ones are
       * asked for again all at once, a round trip a try. A word that never
       * comes marks the launch failed after seconds. */
      auto check = [&](int h) {
        const bool mine = lane / CG == h;
        const bool real = mine && col < W;
        if (have_up) {
          bool ok = true;
#pragma unroll
          for (int p = 0; p < P; p++)
#pragma unroll
            for (int d = 0; d < D; d++)
              ok = ok && (!real || (unsigned)(nw[p][d] >> 32) == (unsigned)b);
          if (!__all_sync(FULL, ok)) {
            const unsigned long long t0 = globaltimer();
            bool alive = true;
            do {
#pragma unroll
              for (int p = 0; p < P; p++)
#pragma unroll
                for (int d = 0; d < D; d++)
                  if (real && (unsigned)(nw[p][d] >> 32) != (unsigned)b)
                    nw[p][d] = ld_word(crd + (size_t)(d * P + p) * a.carry_row + col);
              ok = true;
#pragma unroll
              for (int p = 0; p < P; p++)
#pragma unroll
                for (int d = 0; d < D; d++)
                  ok = ok && (!real || (unsigned)(nw[p][d] >> 32) == (unsigned)b);
              if (!ok && globaltimer() - t0 > 4000000000ull) {
                *(volatile int *)a.fault = 1;
                alive = false;
              }
            } while (!__all_sync(FULL, ok || !alive));
            have_up = __all_sync(FULL, alive);
          }
        }
        if (mine)
#pragma unroll
          for (int p = 0; p < P; p++)
#pragma unroll
            for (int d = 0; d < D; d++)
              cur[p][d] = real && have_up ? (int)(unsigned)nw[p][d] : 0;
      };
      check(0);
      /* the words are asked for PA steps before their check (the groups
       * of this chunk after the first, the first of the next): asked for earlier, most are not
       * there yet and are asked again, a round trip each time
       * (BENCHMARKS.md, "Plane-dependent colour") */
      const int col1 = min(col, W - 1), col2 = min(col + CH, W - 1);
      /* the input blocks of the next chunk, stored into the ring at its end */
      uint4 pin[P][2];
#pragma unroll
      for (int i = 0; i < 2; i++) {
        const bool ld = rowok && lb + i >= 0 && lb + i < nblk8;
#pragma unroll
        for (int p = 0; p < P; p++)
          pin[p][i] = ld ? __ldcs((const uint4 *)(inrow + (size_t)p * a.in_plane) + (lb + i)) : make_uint4(0, 0, 0, 0);
      }
      int inv[P];
#pragma unroll
      for (int p = 0; p < P; p++)
        inv[p] = rin[p * RING + (x0 & (RING - 1))];
      /* lane 31's carried words of this chunk: columns x0 - L + t */
      unsigned long long *cw[P][D];
#pragma unroll
      for (int p = 0; p < P; p++)
#pragma unroll
        for (int d = 0; d < D; d++)
          cw[p][d] = cwr + (size_t)(d * P + p) * a.carry_row + (x0 - L);

      /* 16 steps; EDGE: some lane is outside the image (masks, row ends) */
      auto steps = [&](auto edge) {
        constexpr bool EDGE = decltype(edge)::value;
#pragma unroll UNR
        for (int t = 0; t < CH; t++) {
          const int x = x0 + t;
          const bool act = !EDGE || (rowok && (unsigned)x < (unsigned)W);
          const bool last = EDGE && x == W - 1;
          const int ri = x & (RING - 1);
          int cin[P];
#pragma unroll
          for (int p = 0; p < P; p++) {
            cin[p] = inv[p];
            if (t + 1 < CH) /* the next step's sample, a step ahead */
              inv[p] = rin[p * RING + ((x + 1) & (RING - 1))];
          }
          if (t > 0 && t % CG == 0)
            check(t / CG);
          /* by every band (slot b % CSLOTS exists; band 0 ignores them) */
          if ((t + PA) % CG == 0)
#pragma unroll
            for (int p = 0; p < P; p++)
#pragma unroll
              for (int d = 0; d < D; d++)
                nw[p][d] = ld_word(crd + (size_t)(d * P + p) * a.carry_row + (t + PA < CH ? col1 : col2));
          uint32_t r0[4] = { 0, 0, 0, 0 }, r1[4] = { 0, 0, 0, 0 };
          int eprev = 0, nb[P];
#pragma unroll
          for (int p = 0; p < P; p++) {
            /* all but the newest terms first; the forward share of the
             * plane before comes in last, by the multiply-add itself */
            const int s = cin[p] + op[p][0] + back[p] + nx[p];
            const int v = p == 0 ? s : term_add<T32>(eprev, wf[p - 1], s);
            int e, lv;
            if (BIN || bin[p]) {
              const bool up = v > HT_FX_ONE / 2; /* ht_fx_binary */
              lv = up;
              e = up ? v - HT_FX_ONE : v;
            } else {
              lv = ht_pd_round(v, a.levels[p], &e);
            }
            if (EDGE)
              e = act ? e : 0;
            if (T32) /* e outside [-2^18, 2^18) sets a bit at or above 2^19 */
              big |= (uint32_t)(e + (1 << 18));
            rout[p * RING + ri] = (uint8_t)lv;
            const int f = p + 1 < P ? term_add<T32>(e, wf[p], 0) : 0;
            const int bk = p > 0 && !last ? term_add<T32>(e, wb[p], 0) : 0;
            if (p > 0)
              nb[p - 1] = bk;
            const int ei = e - f - bk;
            if (RAND) {
              ht_rng4(a.seed, (uint32_t)p, (uint32_t)x, (uint32_t)y, 0, r0);
              if (L >= 4 && a.npairs > 8) /* only the widest box has pairs 8 and up */
                ht_rng4(a.seed, (uint32_t)p, (uint32_t)x, (uint32_t)y, 1, r1);
            }
#pragma unroll
            for (int dy = 0; dy <= D; dy++)
#pragma unroll
              for (int dx = dy == 0 ? 1 : -L; dx <= R; dx++) {
                int32_t q = a.q[dy][dx + 4];
                if (RAND) {
                  /* core/shared/pd_arith.h's ht_pd_perturb, for this position */
                  const int k = a.rk[dy][dx + 4];
                  const uint32_t w0 = pick4(r0, (k % 8) / 2), w1 = pick4(r1, (k % 8) / 2);
                  const uint32_t word = k >= 8 ? w1 : w0;
                  const int32_t sg = (int32_t)((k & 1) ? word >> 16 : word & 0xFFFFu) - 32768;
                  const int32_t dd = perturb_d(sg * a.rm[dy][dx + 4], a.amount);
                  q += a.rsign[dy][dx + 4] * dd;
                }
                if (dy == 0)
                  op[p][dx] = term_add<T32>(ei, q, op[p][dx]);
                else
                  pd[p][dy - 1][dx + L] = term_add<T32>(ei, q, pd[p][dy - 1][dx + L]);
              }
            eprev = e;
          }
#pragma unroll
          for (int p = 0; p < P; p++)
            back[p] = p + 1 < P ? nb[p] : 0;
          /* column x - L of the rows below is final: on to the next lane */
          const bool st = lane == 31 && (EDGE ? (unsigned)(x - L) < (unsigned)W : true);
#pragma unroll
          for (int p = 0; p < P; p++) {
#pragma unroll
            for (int i = 0; i < R; i++)
              op[p][i] = op[p][i + 1];
            op[p][R] = 0;
#pragma unroll
            for (int d = 0; d < D; d++) {
              const int fin = pd[p][d][0];
#pragma unroll
              for (int i = 0; i + 1 < NW; i++)
                pd[p][d][i] = pd[p][d][i + 1];
              pd[p][d][NW - 1] = 0;
              st_word_if(cw[p][d] + t, wtag | (unsigned)fin, st);
              int sh = __shfl_up_sync(FULL, fin, 1);
              const int above = __shfl_sync(FULL, cur[p][d], t);
              sh = lane == 0 ? above : sh;
              if (d == 0)
                nx[p] = sh;
              else
                pd[p][d - 1][L] += sh;
            }
          }
        }
      };
      /* every lane inside the image for the whole chunk, lane 31's
       * carried words too: no masks (randomised weights and the widest box
       * keep one form: their registers are spent) */
      const bool inner = full && x0 - (31 - lane) * K - L >= 0 && base - 1 + CH - 1 <= W - 2;
      if constexpr (L < 4 && !RAND) {
        if (inner)
          steps(edge_t<false>());
        else
          steps(edge_t<true>());
      } else {
        steps(edge_t<true>());
      }
      /* the next chunk's input into the ring (columns past this chunk's) */
#pragma unroll
      for (int i = 0; i < 2; i++)
#pragma unroll
        for (int p = 0; p < P; p++) {
          uint2 *dst = (uint2 *)(rin + p * RING + (((lb + i) * 8) & (RING - 1)));
          dst[0] = make_uint2(pin[p][i].x, pin[p][i].y);
          dst[1] = make_uint2(pin[p][i].z, pin[p][i].w);
        }
      lb += 2;
      /* the 16-column block this lane completed in this chunk */
      const int F = ((x0 + CH) >> 4) - 1;
      if (rowok && F >= 0 && F < nblk16)
#pragma unroll
        for (int p = 0; p < P; p++)
          *((uint4 *)(outrow + (size_t)p * a.out_plane) + F) = *(const uint4 *)(rout + p * RING + ((F * 16) & (RING - 1)));
    }
    /* an error of 2^18 or more: this launch's 32-bit terms may be wrong
     * from there on (not before: that error itself is exact) */
    if (T32 && __any_sync(FULL, big >= (1u << 19)) && lane == 0)
      *(volatile int *)a.big = 1;
  }
}

template <int P, int L, int R, int D, bool RAND, bool BIN, bool T32>
cudaError_t launch(const pd_params &a, int sms, int wps)
{
  /* the box of any filter compiles to a loop, not 16 unrolled steps */
  constexpr int UNR = L >= 4 ? 1 : CH;
  auto kern = pd_kernel<P, L, R, D, RAND, BIN, T32, UNR>;
  int per_sm = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, 32, 0);
  if (per_sm < 1)
    per_sm = 1;
  /* only resident warps: a band waits for the band above, which a warp
   * already running holds */
  int64_t grid = (int64_t)sms * (wps < per_sm ? wps : per_sm);
  if (grid > a.nbands)
    grid = a.nbands;
  kern<<<(unsigned)grid, 32>>>(a);
  return cudaGetLastError();
}

/* All planes binary: no branch in a step, so that the compiler can
 * interleave the planes' and steps' independent work (a branch per plane
 * ends the block it schedules in). The widest box keeps one kernel. */
template <int P, int L, int R, int D, bool RAND, bool T32>
cudaError_t launch_b(const pd_params &a, int sms, int wps)
{
  bool bin = L < 4;
  for (int j = 0; j < P; j++)
    bin = bin && a.levels[j] == 2;
  return bin ? launch<P, L, R, D, RAND, L < 4, T32>(a, sms, wps) : launch<P, L, R, D, RAND, false, T32>(a, sms, wps);
}

/* Fixed weights in the narrower boxes: 32-bit terms (T32), unless a
 * launch of them met a large error (wide = true: the launch again, with
 * 64-bit terms). Randomised weights and the widest box: 64 bits. */
template <int P, int L, int R, int D>
cudaError_t launch_r(const pd_params &a, int sms, int wps, bool wide)
{
  if (a.amount)
    return launch_b<P, L, R, D, true, false>(a, sms, wps);
  return wide || L >= 4 ? launch_b<P, L, R, D, false, false>(a, sms, wps) : launch_b<P, L, R, D, false, L < 4>(a, sms, wps);
}

template <int L, int R, int D>
cudaError_t launch_p(const pd_params &a, int planes, int sms, int wps, bool wide)
{
  return planes == 4 ? launch_r<4, L, R, D>(a, sms, wps, wide) : launch_r<3, L, R, D>(a, sms, wps, wide);
}

} // namespace

int color_pd(dev *d, const ht_filter *flt, ht_cuda_color *c, char *msg, size_t n)
{
  if (!c || !flt || c->width <= 0 || c->height <= 0 || c->width > (1 << 28) || c->height > (1 << 28) ||
      c->planes < 1 || c->planes > HT_PD_MAX_PLANES || (!c->in && !c->in8) || (!c->out && !c->out8) || flt->ntaps < 0 ||
      flt->ntaps > HT_FILTER_MAX_TAPS || c->forward[c->planes - 1] != 0 || c->backward[0] != 0) {
    say(msg, n, "invalid arguments to the CUDA module's plane-dependent colour");
    return HT_CUDA_ERR_UNSUPPORTED;
  }
  int L = 0, R = 0, D = 0;
  for (int t = 0; t < flt->ntaps; t++) {
    const ht_tap *tp = &flt->taps[t];
    bool dup = false;
    for (int u = 0; u < t; u++)
      dup = dup || (flt->taps[u].dx == tp->dx && flt->taps[u].dy == tp->dy);
    if (tp->dy < 0 || tp->dy > 3 || tp->dx < -4 || tp->dx > 4 || (tp->dy == 0 && tp->dx <= 0) || dup) {
      say(msg, n, "the CUDA module cannot run filter %.32s: taps out of range", flt->name);
      return HT_CUDA_ERR_UNSUPPORTED;
    }
    L = -tp->dx > L ? -tp->dx : L;
    R = tp->dx > R ? tp->dx : R;
    D = tp->dy > D ? tp->dy : D;
  }
  const int box = L <= 1 && R <= 1 && D <= 1 ? 0 : L <= 2 && R <= 2 && D <= 2 ? 1 : 2;
  const int BL[3] = { 1, 2, 4 }, BD[3] = { 1, 2, 3 };
  if (cudaSetDevice(d->device) != cudaSuccess) {
    cudaGetLastError();
    say(msg, n, "cannot select CUDA device %d", d->device);
    return HT_CUDA_ERR_GPU;
  }
  pd_params a{};
  const int64_t w = c->width, h = c->height;
  const int kp = c->planes == 4 ? 4 : 3; /* planes the kernel runs */
  a.w = (int)w;
  a.h = (int)h;
  a.nbands = (int)((h + 31) / 32);
  {
    const int K = BL[box] + 1;
    /* lane 31 reaches column W - 1 + L at step W + L + 31 K and writes
     * out its last block a chunk later */
    a.nchunks = (int)((w + BL[box] + 31 * K) / CH + 2);
  }
  for (int j = 0; j < 4; j++) {
    const bool real = j < c->planes;
    a.levels[j] = real && c->levels[j] ? c->levels[j] : 2;
    a.fwd[j] = real ? c->forward[j] : 0;
    a.bwd[j] = real ? c->backward[j] : 0;
  }
  for (int t = 0; t < flt->ntaps; t++) {
    const ht_tap *tp = &flt->taps[t];
    const int i = tp->dx + 4;
    a.q[tp->dy][i] = tp->q;
    if (2 * (t / 2) + 1 < flt->ntaps) {
      const int32_t qa = flt->taps[t & ~1].q, qb = flt->taps[t | 1].q;
      a.rsign[tp->dy][i] = t % 2 ? -1 : 1;
      a.rk[tp->dy][i] = t / 2;
      a.rm[tp->dy][i] = qa < qb ? qa : qb;
    }
  }
  a.npairs = flt->ntaps / 2;
  for (int dy = 0; dy < 4; dy++)
    for (int i = 0; i < QW; i++)
      if (c->amount && a.rm[dy][i] > 65535) { /* s m must fit 32 bits (perturb_d) */
        say(msg, n, "the CUDA module cannot randomise filter %.32s: a weight above 16", flt->name);
        return HT_CUDA_ERR_UNSUPPORTED;
      }
  a.amount = c->amount;
  a.seed = c->seed;
  const size_t W = (size_t)w, H = (size_t)h;
  const size_t pitch = (W + 63) & ~(size_t)63;
  const size_t plane = pitch * H;
  a.in_pitch = a.out_pitch = pitch;
  a.in_plane = a.out_plane = plane;
  a.carry_row = pitch;
  const size_t ncarry = (size_t)CSLOTS * (size_t)BD[box] * (size_t)kp * pitch;
  uint16_t *din = nullptr;
  uint8_t *dout = nullptr;
  unsigned long long *dcarry = nullptr;
  int *dticket = nullptr;
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  int r = HT_CUDA_OK;
  if (cudaMalloc(&din, plane * (size_t)kp * 2) != cudaSuccess || cudaMalloc(&dout, plane * (size_t)kp) != cudaSuccess ||
      cudaMalloc(&dcarry, ncarry * 8) != cudaSuccess || cudaMalloc(&dticket, 3 * sizeof *dticket) != cudaSuccess) {
    cudaGetLastError();
    say(msg, n, "%zu MB of GPU memory for a %lldx%lld image of %d planes", (plane * (size_t)kp * 3 + ncarry * 8) >> 20,
        (long long)w, (long long)h, c->planes);
    r = HT_CUDA_ERR_NO_MEMORY;
    goto out;
  }
  if (cudaMemset(din, 0, plane * (size_t)kp * 2) != cudaSuccess || cudaMemset(dcarry, 0, ncarry * 8) != cudaSuccess ||
      cudaMemset(dticket, 0, 3 * sizeof *dticket) != cudaSuccess) {
    r = HT_CUDA_ERR_GPU;
    say(msg, n, "GPU memory could not be cleared: %s", cudaGetErrorString(cudaGetLastError()));
    goto out;
  }
  if ((r = pd_upload(c, din, pitch, plane, msg, n)) != HT_CUDA_OK) /* color/io.cu */
    goto out;
  a.in = din;
  a.out = dout;
  a.carry = dcarry;
  a.ticket = dticket;
  a.fault = dticket + 1;
  a.big = dticket + 2;
  {
    /* 2 warps a multiprocessor (HT_CUDA_PD_WPS: benchmarks) */
    const char *env = getenv("HT_CUDA_PD_WPS");
    int wps = env ? atoi(env) : 2;
    if (wps < 1 || wps > 32)
      wps = 2;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    cudaEventRecord(e0);
    cudaError_t le = cudaSuccess;
    int flags[2] = { 0, 0 }; /* fault, big */
    bool again = false;
    /* 32-bit terms first; where an error reached 2^18, the launch again
     * with 64-bit ones, from cleared carried rows (their tags repeat) */
    for (int wide = 0; wide < 2 && le == cudaSuccess && (wide == 0 || flags[1]); wide++) {
      again = wide != 0;
      if (wide && (cudaMemset(dcarry, 0, ncarry * 8) != cudaSuccess ||
                   cudaMemset(dticket, 0, 3 * sizeof *dticket) != cudaSuccess)) {
        le = cudaGetLastError();
        break;
      }
      switch (box) {
      case 0: le = launch_p<1, 1, 1>(a, kp, d->prop.multiProcessorCount, wps, wide != 0); break;
      case 1: le = launch_p<2, 2, 2>(a, kp, d->prop.multiProcessorCount, wps, wide != 0); break;
      default: le = launch_p<4, 4, 3>(a, kp, d->prop.multiProcessorCount, wps, wide != 0); break;
      }
      if (le == cudaSuccess && cudaMemcpy(flags, dticket + 1, sizeof flags, cudaMemcpyDeviceToHost) != cudaSuccess)
        le = cudaGetLastError();
    }
    cudaEventRecord(e1);
    if (again && getenv("HT_CUDA_PD_TRACE"))
      fprintf(stderr, "gpu-pd: an error reached 2^18, launched again with 64-bit terms\n");
    const int fault = flags[0];
    if (le != cudaSuccess || cudaEventSynchronize(e1) != cudaSuccess || cudaGetLastError() != cudaSuccess) {
      r = HT_CUDA_ERR_GPU;
      say(msg, n, "the plane-dependent kernel failed: %s",
          cudaGetErrorString(le != cudaSuccess ? le : cudaGetLastError()));
      goto out;
    }
    if (fault) {
      r = HT_CUDA_ERR_GPU;
      say(msg, n, "the plane-dependent kernel: a band waited seconds for the band above (a lost word)");
      goto out;
    }
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    c->kernel_ms = ms;
  }
  r = pd_download(c, dout, pitch, plane, msg, n);
out:
  if (e0)
    cudaEventDestroy(e0);
  if (e1)
    cudaEventDestroy(e1);
  cudaFree(din);
  cudaFree(dout);
  cudaFree(dcarry);
  cudaFree(dticket);
  return r;
}

} // namespace htcuda

/* cuda/diffusion/fast.cu: gpu-fast, our exact error diffusion kernel.
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
 *    global memory as 32-bit words (error + launch tag << 24, fast.h),
 *    each stored as soon as it is known; the next band reads them a group
 *    of G columns at a time, one group ahead, and spins (warp-uniformly)
 *    until the tags are this launch's: no fence, flag or extra kernel call
 *    sits between bands
 *    (the paper needs one kernel call per parallelogram diagonal, Sec. V);
 *  - the kernel is persistent and takes bands from an atomic ticket, in
 *    order: a warp only ever waits for a band that a running warp holds,
 *    so it cannot deadlock whatever the number of resident warps;
 *  - input and output go through per-row rings in shared memory, loaded
 *    (cp.async, straight from global memory) and stored 32 columns at a
 *    time with 16-byte accesses; a lane reads the 32 samples of a chunk
 *    as words once, realigned by funnel shifts, so nothing but registers
 *    and shuffles sits between two steps.
 * Pixel arithmetic is core/shared/fixed.h only, so the result equals core/diffusion/ed.c.
 * Filters are run in a few "boxes" (K, D, L, R); taps of the box that the
 * filter does not have carry weight 0, and ht_fx_term(e, 0) == 0.
 */
#include "fast.h"
#include "../../core/shared/fixed.h"

#include <stdlib.h>
#include <string.h>

#define FULL 0xffffffffu

__device__ __forceinline__ int ld_acquire_s32(const int *p)
{
  int v;
  asm volatile("ld.acquire.sys.global.s32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

template <typename Tin> __device__ __forceinline__ int32_t to_fx(Tin v);
template <> __device__ __forceinline__ int32_t to_fx<unsigned char>(unsigned char v) { return ht_fx_from_u8(v); }
template <> __device__ __forceinline__ int32_t to_fx<unsigned short>(unsigned short v) { return (int32_t)v; }

/* Boundary word load: HT_FAST_LOAD 0 volatile, 1 ld.relaxed.gpu. */
#ifndef HT_FAST_LOAD
#define HT_FAST_LOAD 0
#endif
__device__ __forceinline__ unsigned ld_word(const unsigned *p)
{
#if HT_FAST_LOAD == 1
  unsigned v;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p));
  return v;
#else
  return *(const volatile unsigned *)p;
#endif
}

/* Boundary word store, predicated: only the band's last D rows store,
 * and a branch around the store would diverge the warp every step, which
 * slows the step. HT_FAST_STORE
 * (benchmark builds): 0 volatile (st.volatile), 1 st.relaxed.gpu, 2 a
 * weak store kept in L2. */
#ifndef HT_FAST_STORE
#define HT_FAST_STORE 0
#endif
#if HT_FAST_STORE == 1
#define HT_ST_OP "st.relaxed.gpu.global.u32"
#elif HT_FAST_STORE == 2
#define HT_ST_OP "st.global.cg.u32"
#else
#define HT_ST_OP "st.volatile.global.u32"
#endif
__device__ __forceinline__ void st_word_if(unsigned *p, unsigned v, bool c)
{
  asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %2, 0;\n\t@p " HT_ST_OP " [%0], %1;\n\t}" ::"l"(p), "r"(v),
               "r"((int)c)
               : "memory");
}

/* A boundary word is error + (tag << 24), tag 1..255 (fast.h). It is
 * this launch's when the difference is a 24-bit signed value; a word of
 * another launch (or 0, as cleared) is off by a multiple of 1 << 24. */
__device__ __forceinline__ bool word_is(unsigned w, unsigned base) { return w - base + 0x800000u < 0x1000000u; }

/* Input rows come from DRAM at a latency near one chunk's time: each
 * chunk asks L2 for the block two chunks ahead, so the load one chunk
 * ahead finds it there; with that load alone, a chunk boundary stalls on
 * DRAM. */
__device__ __forceinline__ void prefetch_l2(const void *p) { asm volatile("prefetch.global.L2 [%0];" ::"l"(p)); }

/* Input blocks go from global memory straight into the shared ring
 * (cp.async, Ampere and later): no register waits for them. Loaded into
 * registers, they would share a scoreboard with the boundary words, and
 * the first group check of every chunk would wait for the next chunk's
 * input block to arrive (BENCHMARKS.md, "What bounds gpu-fast"). */
#if __CUDA_ARCH__ >= 800
__device__ __forceinline__ void cp_async16(void *smem, const void *gmem)
{
  const unsigned sa = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(sa), "l"(gmem) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_group 0;" ::: "memory"); }
#else
/* Turing has no cp.async: a plain copy through a register */
__device__ __forceinline__ void cp_async16(void *smem, const void *gmem)
{
  *(uint4 *)smem = __ldcg((const uint4 *)gmem);
}
__device__ __forceinline__ void cp_async_commit() {}
__device__ __forceinline__ void cp_async_wait_all() {}
#endif

__device__ __forceinline__ unsigned long long globaltimer()
{
  unsigned long long t;
  asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
  return t;
}

/* One band (32 rows) in flight: the per-lane state lives in registers
 * (every array index below is a compile-time constant after unrolling). */
template <int K, int D, int L, int R, bool BIN, typename Tin> struct band {
  static constexpr int RING = 128;           /* columns kept per row       */
  static constexpr int SZ = (int)sizeof(Tin);
  /* +16 bytes a row: the 8 lanes of a 16-byte shared access phase hit
   * 8 different groups of 4 banks */
  static constexpr int PIN = RING * SZ + 16;
  static constexpr int POUT = RING + 16;
  static constexpr int NV = 2 * SZ;          /* uint4 per 32-column block  */
#ifndef HT_FAST_G
#define HT_FAST_G 16
#endif
  static constexpr int G = HT_FAST_G * D <= 32 ? HT_FAST_G : 8; /* words per group */
#ifndef HT_FAST_PFG
#define HT_FAST_PFG 1
#endif
  static constexpr int PFG = HT_FAST_PFG;   /* groups loaded ahead          */
#ifndef HT_FAST_PF
#define HT_FAST_PF 0
#endif
  /* steps ahead of its group at which a group is loaded (0: a whole group,
   * at the start of the one before) */
  static constexpr int PF = HT_FAST_PF > 0 && HT_FAST_PF < G && PFG == 1 ? HT_FAST_PF : G;
#ifndef HT_FAST_PFA
#define HT_FAST_PFA 4
#endif
  /* The first group of a chunk is loaded PA steps before the chunk ends
   * rather than a whole group ahead: a load issued a group ahead plus a
   * chunk boundary sees the band above's words too early at most chunks
   * and is reloaded, a round trip each time; 8 steps early is slower
   * (BENCHMARKS.md, "What bounds gpu-fast"). 0: a group ahead like the
   * others. */
  static constexpr int PA = HT_FAST_PFA > 0 && HT_FAST_PFA < G && PFG == 1 && PF == G ? HT_FAST_PFA : 0;
  static_assert(G * D <= 32 && (32 % G) == 0, "a group's words must fit the warp");
  static_assert((32 / G) % PFG == 0, "a chunk holds whole rounds of prefetch slots");
  static constexpr int RW = R > 0 ? R : 1;
  static_assert(L == K - 1, "boxes have L = K - 1: the newest word from above is the tap dx = -L");

  int lane, W, b, levels, sigma0;
  int32_t lvl1;
  unsigned char lut0, lut1;
  const unsigned char *s_lut;
  const int *s_lvl;
  unsigned char *my_in, *my_out;
  const Tin *inrow;
  unsigned *dnrow;
  bool partial; /* the band ends before its 32nd row (a launch's last) */
  bool bottom;  /* in such a band, this lane is one of its last D rows */
  unsigned wbase, ebase; /* this launch's tag << 24; that of the words read */
  int *fault;
  bool have_up;
  const unsigned *bound;
  size_t bound_row;
  int q[D + 1][L + R + 1];
  int own[RW];
  /* the newest word of the row above, as shuffled, and lane 0's term of
   * the word from the band above in its place (see chunk) */
  int new_raw, new_g;
  int q_new, q_new_lane, q_new_top; /* q_new_top: q_new in lane 0, 0 elsewhere */
  int up[D][D * K + R];
  /* The last rows of the band above, G columns a group: lane 8j + i holds
   * row "dy - j above" at column group + i + (dy - j) K, for lane j < dy.
   * `cur` serves the running group, `nxt` is the next one in flight. */
  unsigned nxt[PFG][D];
  int cur[D];
  /* per band: this lane's boundary row for each dy and its column offset
   * (so a group costs an add and a compare per word, no index math) */
  const unsigned *vrow[D];
  int voff[D];
  bool vlane[D];

#ifndef HT_FAST_STATS
#define HT_FAST_STATS 0
#endif
  /* benchmark builds with HT_FAST_STATS: when the first group came in,
   * and the waits after it (count, clock cycles, the longest) */
  unsigned long long s_first, s_cyc, s_max;
  long long s_c0, s_c15, s_rt;
  unsigned long long *s_gt;
  int s_gi;
  int s_n, s_nb, s_spin0;
  bool s_infirst;

  __device__ __forceinline__ void band_setup()
  {
    const int j = lane / G, i = lane % G;
#pragma unroll
    for (int dy = 1; dy <= D; dy++) {
      const int m = dy - j;
      vlane[dy - 1] = have_up && m > 0;
      voff[dy - 1] = i + (m > 0 ? m : 1) * K;
      vrow[dy - 1] = bound + ((size_t)b * D + (size_t)(D - (m > 0 ? m : 1))) * bound_row;
    }
  }

  /* block k of this lane's row into its ring slot, asynchronously */
  __device__ __forceinline__ void load_block(int k, int nblocks)
  {
    if (k >= 0 && k < nblocks) {
      const uint4 *src = (const uint4 *)(inrow + k * 32);
      uint4 *dst = (uint4 *)(void *)(my_in + ((k * 32) & (RING - 1)) * SZ);
#pragma unroll
      for (int i = 0; i < NV; i++)
        cp_async16(dst + i, src + i);
    }
    cp_async_commit();
  }

  __device__ __forceinline__ bool real_at(int dy, int gbase) const
  {
    const int col = gbase + voff[dy - 1];
    return vlane[dy - 1] && col >= 0 && col < W;
  }

  __device__ __forceinline__ void prefetch(int slot, int gbase)
  {
#pragma unroll
    for (int dy = 1; dy <= D; dy++)
    {
      /* unconditional, from a column clamped into the row: the check
       * ignores the words of lanes outside (real_at), and a predicated
       * load made the compiler wait for it at the chunk's end */
      int col = gbase + voff[dy - 1];
      col = col < 0 ? 0 : col >= W ? W - 1 : col;
      nxt[slot][dy - 1] = ld_word(vrow[dy - 1] + col);
    }
  }

  /* Makes the prefetched group current, waiting until every word carries
   * this launch's tag, then asks for the group after it. */
  __device__ __forceinline__ void next_group(int slot, int gbase, bool pf)
  {
    if (!have_up)
      return; /* the first band of the image: zeros, set at band start */
    bool real[D], ok = true;
#pragma unroll
    for (int dy = 1; dy <= D; dy++) {
      real[dy - 1] = real_at(dy, gbase);
      ok = ok && (!real[dy - 1] || word_is(nxt[slot][dy - 1], ebase));
    }
    if (!__all_sync(FULL, ok)) {
#if HT_FAST_STATS
      const long long c0 = clock64();
#endif
#pragma unroll
      for (int dy = 1; dy <= D; dy++)
        if (real[dy - 1] && !word_is(nxt[slot][dy - 1], ebase)) {
          /* A word that never comes would hang the GPU: after seconds
           * (no band waits that long for the one above) the launch is
           * marked failed and the host reports it. */
          const unsigned long long t0 = globaltimer();
          do {
            nxt[slot][dy - 1] = ld_word(vrow[dy - 1] + gbase + voff[dy - 1]);
#if HT_FAST_STATS
            if (s_infirst && lane == G - 1)
              s_spin0++;
#endif
            if (globaltimer() - t0 > 4000000000ull) {
              *(volatile int *)fault = 1;
              /* the band's result is void now: no more waits, so that
               * the launch ends in seconds, not seconds per step */
#pragma unroll
              for (int d2 = 0; d2 < D; d2++)
                vlane[d2] = false;
              break;
            }
          } while (!word_is(nxt[slot][dy - 1], ebase));
        }
      __syncwarp();
#if HT_FAST_STATS
      const unsigned long long dc = (unsigned long long)(clock64() - c0);
      if (!s_infirst) {
        s_n++;
        s_nb += pf ? 1 : 0;
        s_cyc += dc;
        s_max = dc > s_max ? dc : s_max;
      }
#endif
    }
#if HT_FAST_STATS
#ifndef HT_FAST_STATS_EVERY
#define HT_FAST_STATS_EVERY 1
#endif
    if (s_gt && lane == 0 && s_gi % HT_FAST_STATS_EVERY == 0 && s_gi / HT_FAST_STATS_EVERY < HT_FAST_TRACE_GROUPS)
      s_gt[s_gi / HT_FAST_STATS_EVERY] = globaltimer();
    s_gi++;
    if (s_infirst) {
      s_c0 = clock64();
      s_first = globaltimer();
      s_infirst = false;
      /* one load of a word known to be there: the round trip */
      const long long r0 = clock64();
      const unsigned v = ld_word(vrow[0] + gbase + voff[0]);
      if (v == 0x5a5a5a5au)
        asm volatile("trap;");
      s_rt = clock64() - r0;
    }
#endif
#pragma unroll
    for (int dy = 1; dy <= D; dy++)
      cur[dy - 1] = real[dy - 1] ? (int)(nxt[slot][dy - 1] - ebase) : 0;
    /* loads stay in flight PFG groups: the latency of a word another SM
     * has just written is longer than one group of steps */
    if (PF == G && pf)
      prefetch(slot, gbase + PFG * G);
  }

  /* Steps base .. base + 31 (chunk c). The chunk's 32 input samples and
   * outputs of this lane are contiguous in its ring rows (column x of row
   * j sits at x + jK - sigma0), so they move as whole words, once per
   * chunk: no shared-memory access on the step-to-step chain. */
  template <bool EDGE> __device__ __forceinline__ void chunk(int base, int c, int Bk, int nblocks)
  {
    constexpr int IW = 32 * SZ / 4;
    unsigned inw[IW], ow[8];
    {
      /* the ring holds column x at x mod RING (whole blocks, stored as
       * they were loaded); this lane's 32 samples start at column
       * base - lane K, at any even byte: IW + 1 words, realigned */
      cp_async_wait_all();
      const int o = ((base - lane * K) & (RING - 1)) * SZ;
      const unsigned *rin = (const unsigned *)(const void *)my_in;
      unsigned wd[IW + 1];
#pragma unroll
      for (int k = 0; k <= IW; k++)
        wd[k] = rin[((o >> 2) + k) & (RING * SZ / 4 - 1)];
#pragma unroll
      for (int k = 0; k < IW; k++)
        inw[k] = __funnelshift_r(wd[k], wd[k + 1], (o & 3) * 8);
    }
    /* the block for the next chunk: the ring is not read again in this one */
    load_block(Bk, nblocks);
#pragma unroll
    for (int k = 0; k < 8; k++)
      ow[k] = 0;
    /* boundary words of this chunk: column x = base + t - lane K; the
     * usual band's last D lanes store them (a compile-time threshold) */
    unsigned *const dnc = dnrow + (base - lane * K);
    const bool store = partial ? bottom : lane >= 32 - D;
#pragma unroll
    for (int t = 0; t < 32; t++) {
      const int sg = base + t;
      if (t % G == 0)
        next_group((t / G) % PFG, sg, PA == 0 || t + G < 32);
      if (PF < G && t % G == G - PF)
        prefetch(0, sg + PF);
      if (PA > 0 && t == 32 - PA)
        prefetch(0, base + 32);
      /* Order matters for speed only (integer sums are exact in any
       * order): the terms known a step early first, then the own-row
       * term, and last the newest word from the lane above, whose term
       * for lane 0 (which gets that word from the band above instead)
       * came in early through new_g with weight 0 on the shuffled value,
       * so no select sits between the shuffle and the sum. */
      int32_t acc = to_fx<Tin>((Tin)(inw[t * SZ / 4] >> ((t * SZ * 8) % 32))) + new_g;
#pragma unroll
      for (int dx = 2; dx <= R; dx++)
        acc += ht_fx_term(own[dx - 1], q[0][dx + L]);
#pragma unroll
      for (int dy = 1; dy <= D; dy++)
#pragma unroll
        for (int dx = -L; dx <= R; dx++)
          if (dy > 1 || R - dx != K + R - 1)
            acc += ht_fx_term(up[dy - 1][R - dx], q[dy][dx + L]);
      if (R >= 1)
        acc += ht_fx_term(own[0], q[0][1 + L]);
      acc += ht_fx_term(new_raw, q_new_lane);
      int32_t lv, e;
      if (BIN) {
        lv = ht_fx_binary(acc);
        e = acc - (lv ? lvl1 : 0);
      } else {
        lv = ht_fx_quantize(acc, levels);
        e = acc - s_lvl[lv];
      }
      const int x = sg - lane * K;
#if HT_FAST_STATS
      if (x == 15 && lane == 31)
        s_c15 = clock64();
#endif
      bool valid = true;
      if (EDGE) {
        valid = (unsigned)x < (unsigned)W;
        e = valid ? e : 0;
      }
      ow[t / 4] |= (unsigned)(BIN ? (lv ? lut1 : lut0) : s_lut[lv]) << (8 * (t % 4));
      st_word_if(dnc + t, (unsigned)e + wbase, store && valid);
#pragma unroll
      for (int i = RW - 1; i > 0; i--)
        own[i] = own[i - 1];
      own[0] = e;
#pragma unroll
      for (int dy = 1; dy <= D; dy++) {
        const int from_above = __shfl_sync(FULL, cur[dy - 1], lane * G + (t % G));
        int r = __shfl_up_sync(FULL, e, dy);
        if (dy == 1) {
          new_raw = r;
          new_g = ht_fx_term(from_above, q_new_top); /* 0 but in lane 0 */
        }
        r = lane < dy ? from_above : r;
#pragma unroll
        for (int i = 0; i < dy * K + R - 1; i++)
          up[dy - 1][i] = up[dy - 1][i + 1];
        up[dy - 1][dy * K + R - 1] = r;
      }
    }
    uint4 *rout = (uint4 *)(void *)(my_out + ((32 * c) & (RING - 1)));
    rout[0] = make_uint4(ow[0], ow[1], ow[2], ow[3]);
    rout[1] = make_uint4(ow[4], ow[5], ow[6], ow[7]);
  }
};

template <int K, int D, int L, int R, bool BIN, typename Tin>
__global__ void __launch_bounds__(32, 1) fast_kernel(const ht_fast_params p)
{
  typedef band<K, D, L, R, BIN, Tin> B;
  constexpr int RING = B::RING;
  __shared__ __align__(16) unsigned char s_in[32 * B::PIN];
  __shared__ __align__(16) unsigned char s_out[32 * B::POUT];
  __shared__ int s_lvl[BIN ? 1 : 256];
  __shared__ unsigned char s_lut[256];

  B st;
  st.lane = (int)threadIdx.x;
  const int lane = st.lane;
  st.W = p.width;
  const int W = p.width;
  st.levels = p.levels;
#pragma unroll
  for (int dy = 0; dy <= D; dy++)
#pragma unroll
    for (int i = 0; i <= L + R; i++)
      st.q[dy][i] = p.q[dy][i - L + 4];
  for (int i = lane; i < 256; i += 32) {
    s_lut[i] = p.lut[i];
    if (!BIN)
      s_lvl[i % (BIN ? 1 : 256)] = i < p.levels ? ht_fx_level(i, p.levels) : HT_FX_ONE;
  }
  /* weight of the newest column of the row above: dx = 1 - K (the box
   * has L = K - 1, so the tap exists, possibly with weight 0) */
  st.q_new = st.q[1][1 - K + L];
  st.q_new_lane = lane < 1 ? 0 : st.q_new;
  st.q_new_top = lane < 1 ? st.q_new : 0;
  st.lvl1 = ht_fx_level(1, 2);
  st.lut0 = p.lut[0];
  st.lut1 = p.lut[1];
  st.s_lut = s_lut;
  st.s_lvl = s_lvl;
  st.my_in = s_in + lane * B::PIN;
  st.my_out = s_out + lane * B::POUT;
  st.bound = p.bound;
  st.bound_row = p.bound_row;
  /* through a shuffle, so the compiler keeps it in a register instead
   * of reloading the parameter at every step */
  st.wbase = __shfl_sync(FULL, p.wtag << 24, 0);
  st.fault = p.fault;
  __syncwarp();

  const int nblocks = (W + 31) / 32;
  const int nbands = (p.height + 31) / 32;
  const int sigma0 = -D * K;
  st.sigma0 = sigma0;
  const int nsteps = nblocks * 32 + 31 * K + D * K;
  const int nchunks = (nsteps + 31) / 32;

  for (;;) {
    int b = 0;
    if (lane == 0)
      b = atomicAdd(p.ticket, 1);
    b = __shfl_sync(FULL, b, 0);
    if (b >= nbands)
      break;
    unsigned long long t0 = 0;
    if (p.trace && lane == 0)
      t0 = globaltimer();
    if (lane == 0) {
      const int need = (b * 32) / p.stripe_rows + 1;
      while (ld_acquire_s32(p.in_ready) < need)
        __nanosleep(256);
    }
    __syncwarp();

    st.b = b;
    const int row = b * 32 + lane;
    st.inrow = (const Tin *)((const unsigned char *)p.in + (size_t)row * p.in_pitch);
    unsigned char *outrow = p.out + (size_t)row * p.out_pitch;
    st.have_up = b > 0 || p.have_carry;
    st.ebase = (b > 0 ? p.wtag : p.carry_wtag) << 24;
    /* the band's last D rows go to slot b + 1, the last row at its
     * bottom; in a launch's last band, which may end before its 32nd row,
     * they are the last rows of the chunk (the carried rows of run_fast) */
    {
      const int rows = min(32, p.height - b * 32);
      st.partial = rows < 32;
      st.bottom = lane >= rows - D && lane < rows;
      st.dnrow = p.bound + ((size_t)(b + 1) * D + (size_t)(st.bottom ? lane - (rows - D) : 0)) * p.bound_row;
    }
#pragma unroll
    for (int i = 0; i < B::RW; i++)
      st.own[i] = 0;
    st.new_raw = 0;
    st.new_g = 0;
#pragma unroll
    for (int dy = 0; dy < D; dy++)
#pragma unroll
      for (int i = 0; i < D * K + R; i++)
        st.up[dy][i] = 0;
    st.band_setup();
    st.s_first = st.s_cyc = st.s_max = 0;
    st.s_n = st.s_nb = st.s_spin0 = 0;
    st.s_c0 = st.s_c15 = st.s_rt = 0;
    st.s_gt = p.trace ? p.trace + HT_FAST_TRACE_BAND * (size_t)nbands + HT_FAST_TRACE_GROUPS * (size_t)b : nullptr;
    st.s_gi = 0;
    const long long s_clk0 = clock64();
    st.s_infirst = true;
#pragma unroll
    for (int dy = 0; dy < D; dy++)
      st.cur[dy] = 0;
    if (st.have_up) {
#pragma unroll
      for (int k = 0; k < B::PFG; k++)
        st.prefetch(k, sigma0 + k * B::G);
    }

    /* first input block (c = -1 in the loop's terms) */
    {
      const int Bk = (sigma0 + 31 - lane * K) >> 5;
      /* the blocks of chunks 1 and 2 come in while the band waits */
#pragma unroll
      for (int k = 1; k <= 3; k++)
        if (Bk + k >= 0 && Bk + k < nblocks)
          prefetch_l2(st.inrow + (Bk + k) * 32);
      st.load_block(Bk, nblocks);
    }

    for (int c = 0; c < nchunks; c++) {
      const int base = sigma0 + 32 * c;
      /* the block lane j needs in chunk c + 1, loaded now, stored at the end */
      const int Bk = (base + 63 - lane * K) >> 5;
      if (Bk + 2 >= 0 && Bk + 2 < nblocks)
        prefetch_l2(st.inrow + (Bk + 2) * 32);
      /* all 32 lanes inside the image for all 32 steps: no edge masks */
      if (base - 31 * K >= 0 && base + 31 < W)
        st.template chunk<false>(base, c, Bk, nblocks);
      else
        st.template chunk<true>(base, c, Bk, nblocks);

      /* the block this lane completed in this chunk */
      const int F = ((base + 32 - lane * K) >> 5) - 1;
      if (F >= 0 && F < nblocks) {
        /* the block starts at an odd place of the ring: 9 words, realigned */
        const int o = (F * 32 + lane * K - sigma0) & (RING - 1);
        const unsigned *ro = (const unsigned *)(const void *)st.my_out;
        unsigned wd[9], v[8];
#pragma unroll
        for (int k = 0; k < 9; k++)
          wd[k] = ro[((o >> 2) + k) & (RING / 4 - 1)];
#pragma unroll
        for (int k = 0; k < 8; k++)
          v[k] = __funnelshift_r(wd[k], wd[k + 1], (o & 3) * 8);
        if (p.out_bit1) {
          /* PBM: a 1 bit is black (level 0), 8 columns a byte, the first
           * in the high bit. Per 4 columns: a zero-byte mask, its 4 bits
           * gathered by one multiply (the partial products never overlap)
           * into a nibble, first column high. */
          unsigned w = 0;
#pragma unroll
          for (int k = 0; k < 8; k++) {
            const unsigned z = ~(((v[k] & 0x7f7f7f7fu) + 0x7f7f7f7fu) | v[k] | 0x7f7f7f7fu) >> 7;
            w |= ((z * 0x08040201u) >> 24 & 0xfu) << (8 * (k / 2) + (k % 2 == 0 ? 4 : 0));
          }
          const int n = W - F * 32;
          if (n < 32) /* the last block: columns past the width are 0 */
            w &= (n >= 8 ? (1u << (8 * (n / 8))) - 1 : 0u) | ((0xff00u >> (n % 8)) & 0xffu) << (8 * (n / 8));
          *(unsigned *)(outrow + F * 4) = w;
        } else {
          uint4 *dst = (uint4 *)(outrow + F * 32);
          dst[0] = make_uint4(v[0], v[1], v[2], v[3]);
          dst[1] = make_uint4(v[4], v[5], v[6], v[7]);
        }
      }
    }
    cp_async_wait_all(); /* no copy into the ring outlives its band */
    /* publish: the band's output rows are in device memory */
    __threadfence_system();
    __syncwarp();
#if HT_FAST_STATS
    st.s_c15 = __shfl_sync(FULL, st.s_c15, 31);
    st.s_spin0 = __shfl_sync(FULL, st.s_spin0, B::G - 1);
#endif
    if (lane == 0) {
      *(volatile unsigned *)(p.done + b) = p.tag;
      if (p.trace) {
        p.trace[HT_FAST_TRACE_BAND * b + HT_FT_START] = t0;
        p.trace[HT_FAST_TRACE_BAND * b + HT_FT_END] = globaltimer();
        p.trace[HT_FAST_TRACE_BAND * b + HT_FT_FIRST] = st.s_first;
        p.trace[HT_FAST_TRACE_BAND * b + HT_FT_WAITS] = (unsigned long long)st.s_n;
        p.trace[HT_FAST_TRACE_BAND * b + HT_FT_WAIT_CYC] = st.s_cyc;
        p.trace[HT_FAST_TRACE_BAND * b + HT_FT_WAIT_MAX] = st.s_max;
        p.trace[HT_FAST_TRACE_BAND * b + HT_FT_C15] = (unsigned long long)(st.s_c15 - st.s_c0);
        p.trace[HT_FAST_TRACE_BAND * b + HT_FT_POLLS_RT] = (unsigned long long)st.s_spin0 | (unsigned long long)st.s_rt << 32;
        p.trace[HT_FAST_TRACE_BAND * b + HT_FT_CLOCKS] = (unsigned long long)(clock64() - s_clk0);
        p.trace[HT_FAST_TRACE_BAND * b + HT_FT_WAITS_CHUNK] = (unsigned long long)st.s_nb;
      }
    }
  }
}

/* ----------------------------------------------------------- host side */

namespace {
struct box {
  int K, D, L, R;
  const char *name;
};
/* FS and Sierra Lite; the 2- and 3-row filters up to 5 wide (Atkinson,
 * JJN, Stucki, Burkes, Sierra); any filter. Each box is 4 kernels per GPU
 * generation to compile, so Atkinson shares the K = 3 box rather than
 * having a K = 2 one of its own. FS keeps K = 2: a K = 3 box takes the
 * shuffle off the step chain but adds H steps, and is slower. */
const box boxes[] = {
  { 2, 1, 1, 1, "K2 D1 L1 R1" },
  { 3, 2, 2, 2, "K3 D2 L2 R2" },
  { 5, 3, 4, 4, "K5 D3 L4 R4" },
};
constexpr int NBOX = 3;

int pick(const ht_filter *f)
{
  for (int i = 0; i < NBOX; i++)
    if (f->reach_left <= boxes[i].L && f->reach_right <= boxes[i].R && f->reach_down <= boxes[i].D &&
        f->delay <= boxes[i].K)
      return i;
  return NBOX - 1;
}

template <int K, int D, int L, int R, bool BIN>
cudaError_t launch_t(const ht_fast_params *p, int grid, cudaStream_t s)
{
  if (p->in_bits == 16)
    fast_kernel<K, D, L, R, BIN, unsigned short><<<grid, 32, 0, s>>>(*p);
  else
    fast_kernel<K, D, L, R, BIN, unsigned char><<<grid, 32, 0, s>>>(*p);
  return cudaGetLastError();
}

template <int K, int D, int L, int R>
cudaError_t launch_b(const ht_fast_params *p, int grid, cudaStream_t s)
{
  return p->levels == 2 ? launch_t<K, D, L, R, true>(p, grid, s) : launch_t<K, D, L, R, false>(p, grid, s);
}
} // namespace

void ht_fast_set_filter(ht_fast_params *p, const ht_filter *f, int levels)
{
  memset(p->q, 0, sizeof p->q);
  for (int i = 0; i < f->ntaps && i < HT_FILTER_MAX_TAPS; i++) {
    const ht_tap *t = &f->taps[i];
    if (t->dy >= 0 && t->dy <= 3 && t->dx >= -4 && t->dx <= 4)
      p->q[t->dy][t->dx + 4] = t->q;
  }
  p->levels = levels;
}

int ht_fast_down(const ht_filter *f) { return boxes[pick(f)].D; }
const char *ht_fast_shape_name(const ht_filter *f) { return boxes[pick(f)].name; }

cudaError_t ht_fast_launch(const ht_filter *f, const ht_fast_params *p, int sms, int wps, cudaStream_t s)
{
  const int nbands = (p->height + 31) / 32;
  /* 2 warps an SM, on different schedulers (more are no faster); the
   * bands of a launch outnumber the SMs, so a warp takes several in
   * turn */
  if (wps <= 0)
    wps = 2;
  int grid = sms * wps;
  if (grid > nbands)
    grid = nbands;
  if (grid < 1)
    grid = 1;
  switch (pick(f)) {
  case 0: return launch_b<2, 1, 1, 1>(p, grid, s);
  case 1: return launch_b<3, 2, 2, 2>(p, grid, s);
  default: return launch_b<5, 3, 4, 4>(p, grid, s);
  }
}

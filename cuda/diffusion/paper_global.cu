/* The paper's parallel algorithms for the asynchronous CRCW-PRAM, run on
 * the GPU's global memory (Kasagi, Nakano, Ito, Sec. III and IV):
 *   Table V (2): 3-D PED (low parallelism), 2-D PED with atomicAdd,
 *                2-D PED with double kernel calls, 2-D PEC, as they are;
 *   Table V (3): the same four on permuted data (Sec. IV, Fig. 4).
 * One thread per image row, one kernel launch per step t of the k-delay
 * parallel scan (the launch boundary is the BARRIER_SYNC), 32 threads per
 * CUDA block. Also ht_gpu_paper_run, the entry point of all twelve.
 *
 * Every form works on one int32 array `a` of HT_FX values, as the paper
 * does: diffusion adds each term (ht_fx_term) to its target, collection
 * replaces a processed pixel by its error and gathers the same terms, so
 * both equal core/diffusion/ed.c bit for bit. */
#include "paper_common.cuh"

#include <limits.h>
#include <string.h>

#define HT_G_BLOCK 32 /* threads per CUDA block (Sec. IV) */

enum { HT_G_PEC, HT_G_PED, HT_G_PED_ATOMIC, HT_G_PED_PHASE };

/* What every step launch needs (passed by value: one launch, no
 * look-ups in global memory for the filter). */
typedef struct {
  int32_t *a;          /* as is: a[i * W + j]; permuted: a[c * H + i]     */
  unsigned char *out;  /* as is: the caller's d_out; permuted: c * H + i */
  size_t out_pitch;
  const int32_t *lvl;  /* ht_fx_level(i, levels)                         */
  int32_t lvl0, lvl1;  /* ht_fx_level(0 and 1, 2)                        */
  int W, H, k, levels, ntaps;
  int8_t dx[HT_PAPER_MAX_TAPS], dy[HT_PAPER_MAX_TAPS];
  int32_t q[HT_PAPER_MAX_TAPS];
  int32_t off[HT_PAPER_MAX_TAPS]; /* (dx + k*dy) mod W: a tap's column step
                                     in the permuted layout              */
  uint32_t atomic_mask;           /* taps needing atomicAdd              */
  uint8_t phase[HT_PAPER_MAX_TAPS]; /* launch of a step a tap belongs to  */
} ht_gargs;

/* COMP(i, j) of the k-delay parallel scan for rows i_lo..i_hi at step t,
 * j = t - k*i (Sec. III). ct = t mod W is the column of the permuted
 * array that holds step t (Sec. IV, Fig. 4).
 *  HT_G_PEC:        2-D PEC (Table V (2)/(3) row 4): gather, round, store e.
 *  HT_G_PED:        k-D PED with a delay at which no two rows write the
 *                   same pixel at once (3-D PED, row 1).
 *  HT_G_PED_ATOMIC: 2-D PED, the taps two rows can hit at once use
 *                   atomicAdd (row 2).
 *  HT_G_PED_PHASE:  2-D PED with an extra barrier: launch `ph` of the
 *                   step adds only that phase's taps; launch 0 rounds and
 *                   leaves e in a[i][j] for the later ones (row 3). */
template <int MODE, bool PERM>
__global__ void __launch_bounds__(HT_G_BLOCK)
ht_paper_step(const ht_gargs g, int t, int ct, int i_lo, int i_hi, int ph)
{
  const int i = i_lo + (int)(blockIdx.x * blockDim.x + threadIdx.x);
  if (i > i_hi)
    return;
  const int j = t - g.k * i;
  const size_t own = PERM ? (size_t)ct * (size_t)g.H + (size_t)i : (size_t)i * (size_t)g.W + (size_t)j;
  unsigned char *out = PERM ? g.out + own : g.out + (size_t)i * g.out_pitch + (size_t)j;

  if (MODE == HT_G_PEC) {
    int32_t s = g.a[own];
    for (int n = 0; n < g.ntaps; n++) {
      const int si = i - g.dy[n], sj = j - g.dx[n];
      if (si < 0 || sj < 0 || sj >= g.W)
        continue; /* outside the image: its error is zero */
      size_t src;
      if (PERM) {
        int c = ct - g.off[n];
        if (c < 0)
          c += g.W;
        src = (size_t)c * (size_t)g.H + (size_t)si;
      } else {
        src = (size_t)si * (size_t)g.W + (size_t)sj;
      }
      s += ht_fx_term(g.a[src], g.q[n]);
    }
    const int32_t r = ht_paper_quantize(s, g.levels);
    *out = (unsigned char)r;
    g.a[own] = s - ht_paper_level(r, g.levels, g.lvl0, g.lvl1, g.lvl);
    return;
  }

  int32_t e;
  if (MODE != HT_G_PED_PHASE || ph == 0) {
    const int32_t v = g.a[own];
    const int32_t r = ht_paper_quantize(v, g.levels);
    *out = (unsigned char)r;
    e = v - ht_paper_level(r, g.levels, g.lvl0, g.lvl1, g.lvl);
    if (MODE == HT_G_PED_PHASE)
      g.a[own] = e; /* read back by the step's later launches (Table III) */
  } else {
    e = g.a[own];
  }
  for (int n = 0; n < g.ntaps; n++) {
    if (MODE == HT_G_PED_PHASE && g.phase[n] != ph)
      continue;
    const int ti = i + g.dy[n], tj = j + g.dx[n];
    if (ti >= g.H || tj < 0 || tj >= g.W)
      continue; /* error leaving the image is dropped */
    size_t dst;
    if (PERM) {
      int c = ct + g.off[n];
      if (c >= g.W)
        c -= g.W;
      dst = (size_t)c * (size_t)g.H + (size_t)ti;
    } else {
      dst = (size_t)ti * (size_t)g.W + (size_t)tj;
    }
    const int32_t term = ht_fx_term(e, g.q[n]);
    if (MODE == HT_G_PED_ATOMIC && ((g.atomic_mask >> n) & 1u))
      atomicAdd(&g.a[dst], term);
    else
      g.a[dst] += term;
  }
}

/* a[i][j] = input in HT_FX units, for Table V (2): the algorithms of
 * Sec. IV on the image as it is laid out. */
__global__ void ht_paper_load_plain(const unsigned char *in, int bits, size_t pitch, int32_t *a,
                                    int W, int H)
{
  const int j = (int)(blockIdx.x * blockDim.x + threadIdx.x);
  if (j >= W)
    return;
  for (int i = (int)blockIdx.y; i < H; i += (int)gridDim.y)
    a[(size_t)i * (size_t)W + (size_t)j] = ht_paper_load(in, bits, pitch, j, i);
}

/* Data permutation of Sec. IV (Fig. 4): row i is shifted by k*i columns
 * and the image transposed, so that the pixels (i, t - k*i) of one step
 * are consecutive. The shift is cyclic (column c = (j + k*i) mod W): the
 * permuted array has exactly W*H entries instead of (W + k*(H-1))*H, and
 * step t still reads one column of it. Shift and transpose are fused in
 * one tiled pass: reads along image rows, writes along permuted rows. */
__global__ void __launch_bounds__(256)
ht_paper_permute_in(const unsigned char *in, int bits, size_t pitch, int32_t *a, int W, int H, int k)
{
  __shared__ int32_t tile[32][33];
  const int tiles_c = (W + 31) / 32;
  const int c0 = (int)(blockIdx.x % (unsigned)tiles_c) * 32, i0 = (int)(blockIdx.x / (unsigned)tiles_c) * 32;
  const int tx = (int)threadIdx.x, ty = (int)threadIdx.y;
  for (int r = ty; r < 32; r += 8) {
    const int i = i0 + r, c = c0 + tx;
    if (i < H && c < W) {
      int j = (int)((((int64_t)c0 - (int64_t)k * i) % W + W) % W) + tx;
      if (j >= W)
        j -= W;
      tile[r][tx] = ht_paper_load(in, bits, pitch, j, i);
    }
  }
  __syncthreads();
  for (int r = ty; r < 32; r += 8) {
    const int c = c0 + r, i = i0 + tx;
    if (i < H && c < W)
      a[(size_t)c * (size_t)H + (size_t)i] = tile[tx][r];
  }
}

/* The inverse permutation for the binary (level) image. */
__global__ void __launch_bounds__(256)
ht_paper_permute_out(const unsigned char *p, unsigned char *out, size_t pitch, int W, int H, int k)
{
  __shared__ int32_t tile[32][33];
  const int tiles_c = (W + 31) / 32;
  const int c0 = (int)(blockIdx.x % (unsigned)tiles_c) * 32, i0 = (int)(blockIdx.x / (unsigned)tiles_c) * 32;
  const int tx = (int)threadIdx.x, ty = (int)threadIdx.y;
  for (int r = ty; r < 32; r += 8) {
    const int c = c0 + r, i = i0 + tx;
    if (i < H && c < W)
      tile[r][tx] = p[(size_t)c * (size_t)H + (size_t)i];
  }
  __syncthreads();
  for (int r = ty; r < 32; r += 8) {
    const int i = i0 + r, c = c0 + tx;
    if (i < H && c < W) {
      int j = (int)((((int64_t)c0 - (int64_t)k * i) % W + W) % W) + tx;
      if (j >= W)
        j -= W;
      out[(size_t)i * pitch + (size_t)j] = (unsigned char)tile[tx][r];
    }
  }
}

template <int MODE, bool PERM>
static cudaError_t ht_paper_scan(const ht_gargs *g, int nph, cudaStream_t stream)
{
  /* steps 0 .. k(H-1) + W - 1 of the k-delay parallel scan; the row range
   * is clipped so each launch starts only the threads that work. The
   * host never waits inside the loop: launches queue on one stream. */
  const int64_t steps = (int64_t)g->W + (int64_t)g->k * (g->H - 1);
  for (int64_t t64 = 0; t64 < steps; t64++) {
    const int t = (int)t64;
    int i_hi = t / g->k;
    if (i_hi > g->H - 1)
      i_hi = g->H - 1;
    const int over = t - (g->W - 1);
    const int i_lo = over <= 0 ? 0 : (over + g->k - 1) / g->k;
    if (i_lo > i_hi)
      continue; /* narrower than the delay: no row works at this step */
    const unsigned blocks = (unsigned)((i_hi - i_lo + HT_G_BLOCK) / HT_G_BLOCK);
    const int ct = PERM ? (int)(t64 % g->W) : 0;
    for (int ph = 0; ph < nph; ph++) {
      ht_paper_step<MODE, PERM><<<blocks, HT_G_BLOCK, 0, stream>>>(*g, t, ct, i_lo, i_hi, ph);
      cudaError_t err = cudaGetLastError();
      if (err != cudaSuccess)
        return err;
    }
  }
  return cudaSuccess;
}

template <bool PERM>
static cudaError_t ht_paper_scan_mode(int mode, const ht_gargs *g, int nph, cudaStream_t stream)
{
  switch (mode) {
  case HT_G_PEC: return ht_paper_scan<HT_G_PEC, PERM>(g, 1, stream);
  case HT_G_PED: return ht_paper_scan<HT_G_PED, PERM>(g, 1, stream);
  case HT_G_PED_ATOMIC: return ht_paper_scan<HT_G_PED_ATOMIC, PERM>(g, 1, stream);
  default: return ht_paper_scan<HT_G_PED_PHASE, PERM>(g, nph, stream);
  }
}

cudaError_t ht_paper_global_run(ht_gpu_paper_variant v, const void *d_in, int in_bits,
                                size_t in_pitch, unsigned char *d_out, size_t out_pitch,
                                int width, int height, const ht_paper_filter *pf,
                                cudaStream_t stream)
{
  const bool perm = v >= HT_GPU_PAPER_3D_PED_PERM;
  const int base = (int)v - (perm ? (int)HT_GPU_PAPER_3D_PED_PERM : 0);
  ht_gargs g;
  memset(&g, 0, sizeof g);
  g.W = width;
  g.H = height;
  g.levels = pf->levels;
  g.lvl0 = ht_fx_level(0, 2);
  g.lvl1 = ht_fx_level(1, 2);
  g.ntaps = pf->ntaps;
  int mode, nph = 1;
  switch (base) {
  case HT_GPU_PAPER_3D_PED:
    mode = HT_G_PED;
    g.k = ht_paper_exclusive_delay(pf);
    break;
  case HT_GPU_PAPER_2D_PED_ATOMIC:
    mode = HT_G_PED_ATOMIC;
    g.k = pf->delay;
    g.atomic_mask = ht_paper_atomic_mask(pf, g.k);
    break;
  case HT_GPU_PAPER_2D_PED_DOUBLE:
    mode = HT_G_PED_PHASE;
    g.k = pf->delay;
    nph = ht_paper_phases(pf, g.k, 2, g.phase);
    break;
  default:
    mode = HT_G_PEC;
    g.k = pf->delay;
    break;
  }
  for (int n = 0; n < pf->ntaps; n++) {
    g.dx[n] = (int8_t)pf->dx[n];
    g.dy[n] = (int8_t)pf->dy[n];
    g.q[n] = pf->q[n];
    g.off[n] = (pf->dx[n] + g.k * pf->dy[n]) % width; /* >= 1 before the mod */
  }
  const size_t n_px = (size_t)width * (size_t)height;
  const size_t tiles = (size_t)((width + 31) / 32) * (size_t)((height + 31) / 32);
  if (perm && tiles > (size_t)INT_MAX)
    return cudaErrorInvalidValue;

  ht_paper_scratch sc;
  memset(&sc, 0, sizeof sc);
  sc.stream = stream;
  int32_t *lvl = NULL;
  cudaError_t err = ht_paper_levels(&sc, pf->levels, &lvl);
  if (err == cudaSuccess)
    err = ht_paper_alloc(&sc, (void **)&g.a, n_px * sizeof(int32_t));
  unsigned char *pout = NULL;
  if (err == cudaSuccess && perm)
    err = ht_paper_alloc(&sc, (void **)&pout, n_px);
  if (err != cudaSuccess)
    return ht_paper_scratch_end(&sc, err);
  g.lvl = lvl;
  if (perm) {
    g.out = pout;
    ht_paper_permute_in<<<(unsigned)tiles, dim3(32, 8), 0, stream>>>(
        (const unsigned char *)d_in, in_bits, in_pitch, g.a, width, height, g.k);
  } else {
    g.out = d_out;
    g.out_pitch = out_pitch;
    dim3 grid((unsigned)((width + 255) / 256), (unsigned)(height < 65535 ? height : 65535));
    ht_paper_load_plain<<<grid, 256, 0, stream>>>((const unsigned char *)d_in, in_bits, in_pitch,
                                                  g.a, width, height);
  }
  err = cudaGetLastError();
  if (err == cudaSuccess)
    err = perm ? ht_paper_scan_mode<true>(mode, &g, nph, stream)
               : ht_paper_scan_mode<false>(mode, &g, nph, stream);
  if (err == cudaSuccess && perm) {
    ht_paper_permute_out<<<(unsigned)tiles, dim3(32, 8), 0, stream>>>(pout, d_out, out_pitch, width,
                                                                       height, g.k);
    err = cudaGetLastError();
  }
  return ht_paper_scratch_end(&sc, err);
}

cudaError_t ht_gpu_paper_run(ht_gpu_paper_variant v, const void *d_in, int in_bits, size_t in_pitch,
                             unsigned char *d_out, size_t out_pitch, int width, int height,
                             const ht_filter *f, int levels, cudaStream_t stream)
{
  ht_paper_filter pf;
  if ((int)v < 0 || v >= HT_GPU_PAPER_COUNT || !d_in || !d_out)
    return cudaErrorInvalidValue;
  cudaError_t err = ht_paper_check(f, levels, in_bits, width, height, &pf);
  if (err != cudaSuccess)
    return err;
  if (in_pitch < (size_t)width * (size_t)(in_bits / 8) || out_pitch < (size_t)width)
    return cudaErrorInvalidValue;
  if (in_bits == 16 && ((in_pitch & 1) || ((uintptr_t)d_in & 1)))
    return cudaErrorInvalidValue; /* 16-bit samples must be aligned */
  if (v >= HT_GPU_PAPER_PB_PED)
    return ht_paper_pb_run(v, d_in, in_bits, in_pitch, d_out, out_pitch, width, height, &pf, stream);
  return ht_paper_global_run(v, d_in, in_bits, in_pitch, d_out, out_pitch, width, height, &pf, stream);
}

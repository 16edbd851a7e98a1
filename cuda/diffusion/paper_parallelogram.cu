/* The paper's algorithms optimised for CUDA GPUs (Kasagi, Nakano, Ito,
 * Sec. V, Figs. 5 and 6, Table IV), the rows of Table V (4):
 *   2-D PED, 2-D PED with RC, 2-D PEC, 2-D PEC with RC
 * on parallelogram blocks in shared memory.
 *
 * The image is cut into strips of w = 32 rows, each strip into
 * parallelogram blocks of w rows of w pixels, every row shifted s columns
 * left of the one above (s = the filter's delay: 2 for Floyd-Steinberg).
 * One CUDA block of w threads (one warp) takes a parallelogram block:
 * thread r owns row r, and because of the shift all w threads can work on
 * the same column c at the same time while keeping the k-delay order, so
 * the block is one column sweep in shared memory. Block (strip S, index
 * b) gets label m*S + b (m = s + 1; 3 for Floyd-Steinberg as in Fig. 6)
 * and one kernel launch runs all blocks of one label.
 *
 * Between blocks only the O(w) values at the block's edges travel through
 * global memory (Sec. V: n + O(n/w) reads and writes):
 *   side[y][0..hh-1]  per image row: the error values (PEC) or the
 *                     accumulated errors spilled to the right (PED) that
 *                     block b hands to block b+1 of the same strip;
 *   bot[S][d][x]      per strip: its last rows' errors (PEC) or the
 *                     errors it pushed into the next strip's first rows
 *                     (PED), full width, so no value is overwritten
 *                     before the next strip has read it.
 * hh and the number of rows d above/below follow from the filter's reach
 * (Floyd-Steinberg: hh = 3, d = 1: the paper's (w+1) x (w+3) array).
 * Shared rows have an odd pitch, so w threads reading one column touch w
 * different banks (Sec. V: bank (pitch*i + j) mod w, pitch odd).
 *
 * Warp-synchronous execution is not guaranteed since Volta; where the
 * paper relies on it (2-D PED without atomics or extra barriers) the
 * taps that two rows can hit in the same column step are ordered with
 * __syncwarp(), the warp-level form of the paper's argument. */
#include "paper_common.cuh"

#include <string.h>

/* The column sweep is unrolled this many times, so the register windows
 * need no moves. Full unrolling makes 2-D PEC with RC about 9% faster
 * and plain 2-D PED about 16% slower than none (Floyd-Steinberg, 4K²);
 * 32 is the setting the self-test (tests/cuda/paper_selftest.cu) covers. */
#ifndef HT_PB_STEP_UNROLL
#define HT_PB_STEP_UNROLL 32
#endif
static constexpr int ht_pb_step_unroll = HT_PB_STEP_UNROLL;

/* Bytes per row of the level tile in shared memory: 4 * an odd number,
 * so byte stores of one column by w threads hit w different banks. */
#define HT_PB_BP 36

typedef struct {
  const unsigned char *in;
  size_t in_pitch;
  int in_bits;
  unsigned char *out;
  size_t out_pitch;
  const int32_t *lvl;
  int32_t lvl0, lvl1; /* ht_fx_level(0 and 1, 2)                           */
  int32_t *side; /* per image row, hh values                              */
  int32_t *bot;  /* per strip, d rows of W values                         */
  int W, H, levels;
  int s;         /* row shift of a parallelogram block                    */
  int hh;        /* halo columns: left of the block (PEC), right (PED)     */
  int d;         /* halo rows: above the block (PEC), below (PED)         */
  int pitch;     /* shared row pitch in int32, odd                         */
  int m;         /* label spacing of strips                               */
  int ntaps, nph;
  int32_t q[HT_PAPER_MAX_TAPS];
  int32_t soff[HT_PAPER_MAX_TAPS]; /* dy*pitch + dx + s*dy: a tap's shared offset */
  uint8_t phase[HT_PAPER_MAX_TAPS];
  int32_t qt[4][9]; /* register caching: weight of (dx, dy) at qt[dy][dx + 4] */
} ht_pbargs;

/* 2-D PEC on one parallelogram block (Sec. V, Fig. 5; Table V (4) rows 3
 * and 4). RC: register caching (Sec. II, Table IV): each thread keeps its
 * own last errors and a sliding window of each row above in registers,
 * and reads one new value per row above per step from shared memory.
 * LM, RM, DM: the window's reach (left, right, down), >= the filter's. */
template <bool RC, int LM, int RM, int DM>
__global__ void __launch_bounds__(HT_PAPER_W) ht_pb_pec(const ht_pbargs g, int t, int s_lo)
{
  extern __shared__ int32_t sm[];
  const int w = HT_PAPER_W, r = (int)threadIdx.x;
  const int S = s_lo + (int)blockIdx.x, b = t - g.m * S;
  const int P = g.pitch, D = g.d, hh = g.hh, sh = g.s;
  int32_t *A = sm; /* row D + i, column hh + c: local pixel (i, c)         */
  unsigned char *B = (unsigned char *)(sm + (D + w) * P);
  const int y0 = S * w, xb = b * w; /* local row i starts at column xb - s*i */

  /* All global loads are issued before the first shared store (loops
   * unrolled, values in registers) so that their latencies overlap: a
   * block is latency bound, one warp per block. Lane r takes column r
   * and, when r < hh, column r + w of each shared row. */
  {
    int32_t up0[3], up1[3], v0[w], v1[w];
    /* the previous strip's last D rows (their errors), left halo included */
#pragma unroll
    for (int i = 0; i < 3; i++) {
      up0[i] = up1[i] = 0;
      if (i < D && S > 0) {
        const int X = xb + sh * (D - i) - hh;
        const int32_t *src = g.bot + ((size_t)(S - 1) * D + i) * g.W;
        if (X + r >= 0 && X + r < g.W)
          up0[i] = src[X + r];
        if (r < hh && X + r + w >= 0 && X + r + w < g.W)
          up1[i] = src[X + r + w];
      }
    }
    /* the block's rows: errors of block b-1's last hh columns, then input */
#pragma unroll
    for (int i = 0; i < w; i++) {
      const int y = y0 + i, X = xb - sh * i - hh;
      const bool yin = y < g.H;
      v0[i] = v1[i] = 0;
      if (r < hh)
        v0[i] = g.side[(size_t)y * hh + r];
      else if (yin && X + r >= 0 && X + r < g.W)
        v0[i] = ht_paper_load(g.in, g.in_bits, g.in_pitch, X + r, y);
      if (r < hh && yin && X + r + w >= 0 && X + r + w < g.W)
        v1[i] = ht_paper_load(g.in, g.in_bits, g.in_pitch, X + r + w, y);
    }
#pragma unroll
    for (int i = 0; i < 3; i++)
      if (i < D) {
        A[i * P + r] = up0[i];
        if (r < hh)
          A[i * P + r + w] = up1[i];
      }
#pragma unroll
    for (int i = 0; i < w; i++) {
      A[(D + i) * P + r] = v0[i];
      if (r < hh)
        A[(D + i) * P + r + w] = v1[i];
    }
  }
  __syncwarp();

  const int y = y0 + r, X = xb - sh * r;
  const bool row_in = y < g.H;
  int32_t *me = A + (D + r) * P + hh;
  unsigned char *bo = B + r * HT_PB_BP;
  if constexpr (!RC) {
#pragma unroll ht_pb_step_unroll
    for (int c = 0; c < w; c++) {
      int32_t s = me[c];
      for (int n = 0; n < g.ntaps; n++)
        s += ht_fx_term(me[c - g.soff[n]], g.q[n]);
      const int x = X + c;
      int32_t e = 0; /* a pixel outside the image passes no error on */
      if (row_in && x >= 0 && x < g.W) {
        const int32_t q = ht_paper_quantize(s, g.levels);
        bo[c] = (unsigned char)q;
        e = s - ht_paper_level(q, g.levels, g.lvl0, g.lvl1, g.lvl);
      }
      me[c] = e;
      __syncwarp();
    }
  } else {
    constexpr int WS = LM + RM + 1;
    /* own[k] = e(r, c-1-k); win[dy][k] = e(r-dy, c - s*dy - RM + k) */
    int32_t qo[RM], own[RM], qw[DM + 1][WS], win[DM + 1][WS];
#pragma unroll
    for (int k = 0; k < RM; k++) {
      qo[k] = g.qt[0][k + 1 + 4];
      own[k] = me[-1 - k];
    }
#pragma unroll
    for (int dy = 1; dy <= DM; dy++)
#pragma unroll
      for (int k = 0; k < WS; k++) {
        qw[dy][k] = g.qt[dy][RM - k + 4];
        win[dy][k] = me[-dy * P - sh * dy - RM + k];
      }
#pragma unroll ht_pb_step_unroll
    for (int c = 0; c < w; c++) {
      int32_t s = me[c];
#pragma unroll
      for (int k = 0; k < RM; k++)
        s += ht_fx_term(own[k], qo[k]);
#pragma unroll
      for (int dy = 1; dy <= DM; dy++)
#pragma unroll
        for (int k = 0; k < WS; k++)
          s += ht_fx_term(win[dy][k], qw[dy][k]);
      const int x = X + c;
      int32_t e = 0;
      if (row_in && x >= 0 && x < g.W) {
        const int32_t q = ht_paper_quantize(s, g.levels);
        bo[c] = (unsigned char)q;
        e = s - ht_paper_level(q, g.levels, g.lvl0, g.lvl1, g.lvl);
      }
      me[c] = e;
#pragma unroll
      for (int k = RM - 1; k > 0; k--)
        own[k] = own[k - 1];
      own[0] = e;
      __syncwarp();
      /* the value entering each window was finished at step
       * c + 1 - s*dy + LM <= c (s >= LM + 1), so it is final now */
#pragma unroll
      for (int dy = 1; dy <= DM; dy++) {
#pragma unroll
        for (int k = 0; k < WS - 1; k++)
          win[dy][k] = win[dy][k + 1];
        win[dy][WS - 1] = me[c + 1 - dy * P - sh * dy + LM];
      }
    }
  }
  __syncwarp();

  /* levels out (one row per pass: lanes write consecutive columns), the
   * last hh errors of every row to block b+1, the last D rows to the
   * next strip */
#pragma unroll
  for (int i = 0; i < w; i++) {
    const int yy = y0 + i, x = xb - sh * i + r;
    if (yy < g.H && x >= 0 && x < g.W)
      g.out[(size_t)yy * g.out_pitch + (size_t)x] = B[i * HT_PB_BP + r];
    if (r < hh)
      g.side[(size_t)yy * hh + r] = A[(D + i) * P + w + r];
  }
  for (int dd = 0; dd < D; dd++) {
    const int i = w - D + dd, yy = y0 + i, x = xb - sh * i + r;
    if (yy < g.H && x >= 0 && x < g.W)
      g.bot[((size_t)S * D + dd) * g.W + x] = A[(D + i) * P + hh + r];
  }
}

/* 2-D PED on one parallelogram block (Sec. V; Table V (4) rows 1 and 2).
 * Shared row i holds input + accumulated error of local pixel (i, c) for
 * c < w, and the error spilled past the block in columns w..w+hh-1 and
 * rows w..w+D-1. RC: each thread accumulates its terms for its own row
 * and for each row below in registers (a window per row) and adds one
 * finished column per row below per step to shared memory. */
template <bool RC, int LM, int RM, int DM>
__global__ void __launch_bounds__(HT_PAPER_W) ht_pb_ped(const ht_pbargs g, int t, int s_lo)
{
  extern __shared__ int32_t sm[];
  const int w = HT_PAPER_W, r = (int)threadIdx.x;
  const int S = s_lo + (int)blockIdx.x, b = t - g.m * S;
  const int P = g.pitch, D = g.d, hh = g.hh, sh = g.s;
  int32_t *A = sm;
  unsigned char *B = (unsigned char *)(sm + (w + D) * P);
  const int y0 = S * w, xb = b * w;

  /* input, plus what block b-1 spilled right and what the previous strip
   * pushed down; the spill area starts at zero. Loads first, unrolled,
   * as in ht_pb_pec. */
  {
    int32_t v0[w];
#pragma unroll
    for (int i = 0; i < w; i++) {
      const int y = y0 + i, x = xb - sh * i + r;
      int32_t v = 0;
      if (y < g.H && x >= 0 && x < g.W) {
        v = ht_paper_load(g.in, g.in_bits, g.in_pitch, x, y);
        if (i < D && S > 0)
          v += g.bot[((size_t)(S - 1) * D + i) * g.W + x];
      }
      if (r < hh)
        v += g.side[(size_t)y * hh + r];
      v0[i] = v;
    }
#pragma unroll
    for (int i = 0; i < w; i++) {
      A[i * P + r] = v0[i];
      if (r < hh)
        A[i * P + r + w] = 0;
    }
    for (int i = w; i < w + D; i++)
      for (int cc = r; cc < w + hh; cc += w)
        A[i * P + cc] = 0;
  }
  __syncwarp();

  const int y = y0 + r, X = xb - sh * r;
  const bool row_in = y < g.H;
  int32_t *me = A + r * P;
  unsigned char *bo = B + r * HT_PB_BP;
  if constexpr (!RC) {
#pragma unroll ht_pb_step_unroll
    for (int c = 0; c < w; c++) {
      const int32_t v = me[c];
      const int x = X + c;
      int32_t e = 0;
      if (row_in && x >= 0 && x < g.W) {
        const int32_t q = ht_paper_quantize(v, g.levels);
        bo[c] = (unsigned char)q;
        e = v - ht_paper_level(q, g.levels, g.lvl0, g.lvl1, g.lvl);
      }
      /* taps that two rows can hit in this step are in different phases */
      for (int ph = 0; ph < g.nph; ph++) {
        for (int n = 0; n < g.ntaps; n++)
          if (g.phase[n] == ph)
            me[c + g.soff[n]] += ht_fx_term(e, g.q[n]);
        __syncwarp();
      }
    }
  } else {
    constexpr int WS = LM + RM + 1;
    /* acc0[k]: own terms for (r, c+k); accd[dy][k]: terms for
     * (r+dy, c + s*dy - LM + k) */
    int32_t qo[RM + 1], acc0[RM + 1], qd[DM + 1][WS], accd[DM + 1][WS];
#pragma unroll
    for (int k = 0; k <= RM; k++) {
      qo[k] = k ? g.qt[0][k + 4] : 0;
      acc0[k] = 0;
    }
#pragma unroll
    for (int dy = 1; dy <= DM; dy++)
#pragma unroll
      for (int k = 0; k < WS; k++) {
        qd[dy][k] = g.qt[dy][k - LM + 4];
        accd[dy][k] = 0;
      }
#pragma unroll ht_pb_step_unroll
    for (int c = 0; c < w; c++) {
      const int32_t v = me[c] + acc0[0];
      const int x = X + c;
      int32_t e = 0;
      if (row_in && x >= 0 && x < g.W) {
        const int32_t q = ht_paper_quantize(v, g.levels);
        bo[c] = (unsigned char)q;
        e = v - ht_paper_level(q, g.levels, g.lvl0, g.lvl1, g.lvl);
      }
#pragma unroll
      for (int k = 1; k <= RM; k++)
        acc0[k] += ht_fx_term(e, qo[k]);
#pragma unroll
      for (int dy = 1; dy <= DM; dy++) {
#pragma unroll
        for (int k = 0; k < WS; k++)
          accd[dy][k] += ht_fx_term(e, qd[dy][k]);
        /* column c + s*dy - LM of row r+dy gets nothing more from this
         * row; its owner reads it at step c + s*dy - LM > c. Two rows
         * never add to one cell in the same step here. */
        me[dy * P + c + sh * dy - LM] += accd[dy][0];
#pragma unroll
        for (int k = 0; k < WS - 1; k++)
          accd[dy][k] = accd[dy][k + 1];
        accd[dy][WS - 1] = 0;
      }
#pragma unroll
      for (int k = 0; k < RM; k++)
        acc0[k] = acc0[k + 1];
      acc0[RM] = 0;
      __syncwarp();
    }
    /* what is left goes to the spill area, one row offset at a time */
#pragma unroll
    for (int k = 0; k < RM; k++)
      me[w + k] += acc0[k];
    __syncwarp();
#pragma unroll
    for (int dy = 1; dy <= DM; dy++) {
#pragma unroll
      for (int k = 0; k < WS - 1; k++)
        me[dy * P + w + sh * dy - LM + k] += accd[dy][k];
      __syncwarp();
    }
  }
  __syncwarp();

#pragma unroll
  for (int i = 0; i < w; i++) {
    const int yy = y0 + i, x = xb - sh * i + r;
    if (yy < g.H && x >= 0 && x < g.W)
      g.out[(size_t)yy * g.out_pitch + (size_t)x] = B[i * HT_PB_BP + r];
    if (r < hh)
      g.side[(size_t)yy * hh + r] = A[i * P + w + r];
  }
  /* blocks b and b+1 of a strip add to overlapping parts of bot; they run
   * at different labels, so plain additions are safe. Lane r takes
   * columns r and r + w (r < hh): distinct cells, so all loads go first. */
  int32_t old0[3], old1[3];
#pragma unroll
  for (int dd = 0; dd < 3; dd++) {
    const int i = w + dd, yy = y0 + i, x = xb - sh * i + r;
    const int32_t *row = g.bot + ((size_t)S * D + dd) * g.W;
    old0[dd] = old1[dd] = 0;
    if (dd < D && yy < g.H) {
      if (x >= 0 && x < g.W)
        old0[dd] = row[x];
      if (r < hh && x + w >= 0 && x + w < g.W)
        old1[dd] = row[x + w];
    }
  }
#pragma unroll
  for (int dd = 0; dd < 3; dd++) {
    const int i = w + dd, yy = y0 + i, x = xb - sh * i + r;
    int32_t *row = g.bot + ((size_t)S * D + dd) * g.W;
    if (dd < D && yy < g.H) {
      if (x >= 0 && x < g.W)
        row[x] = old0[dd] + A[i * P + r];
      if (r < hh && x + w >= 0 && x + w < g.W)
        row[x + w] = old1[dd] + A[i * P + r + w];
    }
  }
}

typedef void (*ht_pb_kernel)(const ht_pbargs, int, int);

cudaError_t ht_paper_pb_run(ht_gpu_paper_variant v, const void *d_in, int in_bits,
                            size_t in_pitch, unsigned char *d_out, size_t out_pitch, int width,
                            int height, const ht_paper_filter *pf, cudaStream_t stream)
{
  const int w = HT_PAPER_W;
  const bool ed = v == HT_GPU_PAPER_PB_PED || v == HT_GPU_PAPER_PB_PED_RC;
  const bool rc = v == HT_GPU_PAPER_PB_PED_RC || v == HT_GPU_PAPER_PB_PEC_RC;
  ht_pbargs g;
  memset(&g, 0, sizeof g);
  g.in = (const unsigned char *)d_in;
  g.in_pitch = in_pitch;
  g.in_bits = in_bits;
  g.out = d_out;
  g.out_pitch = out_pitch;
  g.W = width;
  g.H = height;
  g.levels = pf->levels;
  g.lvl0 = ht_fx_level(0, 2);
  g.lvl1 = ht_fx_level(1, 2);
  g.ntaps = pf->ntaps;

  /* register windows are compiled for three reaches: Floyd-Steinberg
   * sized, 5x3 filters (JJN, Stucki, Burkes, Sierra, Atkinson), any */
  int cls = 0, LM = 0, RM = 0, DM = 0;
  if (rc) {
    if (pf->left <= 1 && pf->right <= 1 && pf->down <= 1) {
      cls = 1;
      LM = RM = DM = 1;
    } else if (pf->left <= 2 && pf->right <= 2 && pf->down <= 2) {
      cls = 2;
      LM = RM = DM = 2;
    } else {
      cls = 3;
      LM = RM = 4;
      DM = 3;
    }
  }
  /* the shift is the delay; a register window also needs s >= LM + 1 so
   * that a value entering it is already final */
  g.s = pf->delay;
  if (rc && g.s < LM + 1)
    g.s = LM + 1;
  if (rc) {
    g.hh = g.s * DM + RM;
    g.d = DM;
  } else {
    g.hh = 0;
    for (int n = 0; n < pf->ntaps; n++)
      if (pf->dx[n] + g.s * pf->dy[n] > g.hh)
        g.hh = pf->dx[n] + g.s * pf->dy[n];
    g.d = pf->down;
  }
  if (g.hh > w)
    return cudaErrorInvalidValue; /* cannot happen for delays <= 8 */
  g.pitch = (w + g.hh) | 1;
  g.m = g.s + 1;
  for (int n = 0; n < pf->ntaps; n++) {
    g.q[n] = pf->q[n];
    g.soff[n] = pf->dy[n] * g.pitch + pf->dx[n] + g.s * pf->dy[n];
    g.qt[pf->dy[n]][pf->dx[n] + 4] = pf->q[n];
  }
  g.nph = ed && !rc ? ht_paper_phases(pf, g.s, 1, g.phase) : 1;

  const int strips = (height + w - 1) / w;
  const int nb = (int)(((int64_t)width - 1 + (int64_t)g.s * (w - 1)) / w) + 1;
  const int64_t labels = (int64_t)g.m * (strips - 1) + nb;
  const size_t side_n = (size_t)strips * (size_t)w * (size_t)g.hh;
  const size_t bot_n = (size_t)strips * (size_t)g.d * (size_t)width;
  const size_t smem = (size_t)(w + g.d) * (size_t)g.pitch * sizeof(int32_t) + (size_t)w * HT_PB_BP;

  ht_pb_kernel kernel;
  if (ed)
    kernel = cls == 0 ? ht_pb_ped<false, 0, 0, 0>
           : cls == 1 ? ht_pb_ped<true, 1, 1, 1>
           : cls == 2 ? ht_pb_ped<true, 2, 2, 2>
                      : ht_pb_ped<true, 4, 4, 3>;
  else
    kernel = cls == 0 ? ht_pb_pec<false, 0, 0, 0>
           : cls == 1 ? ht_pb_pec<true, 1, 1, 1>
           : cls == 2 ? ht_pb_pec<true, 2, 2, 2>
                      : ht_pb_pec<true, 4, 4, 3>;

  ht_paper_scratch sc;
  memset(&sc, 0, sizeof sc);
  sc.stream = stream;
  int32_t *lvl = NULL;
  cudaError_t err = ht_paper_levels(&sc, pf->levels, &lvl);
  if (err == cudaSuccess)
    err = ht_paper_alloc(&sc, (void **)&g.side, side_n * sizeof(int32_t));
  if (err == cudaSuccess)
    err = ht_paper_alloc(&sc, (void **)&g.bot, bot_n * sizeof(int32_t));
  /* block 0 of a strip reads a zero side; PED adds into bot */
  if (err == cudaSuccess)
    err = cudaMemsetAsync(g.side, 0, side_n * sizeof(int32_t), stream);
  if (err == cudaSuccess && ed)
    err = cudaMemsetAsync(g.bot, 0, bot_n * sizeof(int32_t), stream);
  g.lvl = lvl;
  /* Sec. V: for t, the blocks PB(S, t - m*S) run in one launch */
  for (int64_t t = 0; err == cudaSuccess && t < labels; t++) {
    int s_hi = (int)(t / g.m);
    if (s_hi > strips - 1)
      s_hi = strips - 1;
    const int64_t over = t - nb + 1;
    const int s_lo = over <= 0 ? 0 : (int)((over + g.m - 1) / g.m);
    if (s_lo > s_hi)
      continue;
    kernel<<<(unsigned)(s_hi - s_lo + 1), w, smem, stream>>>(g, (int)t, s_lo);
    err = cudaGetLastError();
  }
  return ht_paper_scratch_end(&sc, err);
}

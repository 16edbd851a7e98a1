/* What the paper's GPU variants share (cuda/diffusion/paper_global.cu,
 * Table V (2) and (3); cuda/diffusion/paper_parallelogram.cu, Table V
 * (4)): filter checking and the delays and launch orders derived from
 * it, per-pixel arithmetic (only core/shared/fixed.h), and
 * stream-ordered scratch memory that is freed on every path. Kasagi,
 * Nakano, Ito, "Parallelization techniques for error diffusion with GPU
 * implementations". */
#ifndef HT_CUDA_PAPER_COMMON_CUH
#define HT_CUDA_PAPER_COMMON_CUH

#include "paper.h"
#include "../../core/shared/fixed.h"

#include <stddef.h>
#include <stdint.h>

/* w: threads of a warp = banks of the shared memory (Sec. V). */
#define HT_PAPER_W 32
#define HT_PAPER_MAX_TAPS 32

/* A checked filter with what the schedules need, derived from its taps. */
typedef struct {
  int ntaps;
  int dx[HT_PAPER_MAX_TAPS], dy[HT_PAPER_MAX_TAPS], q[HT_PAPER_MAX_TAPS];
  int left, right, down; /* reach */
  int delay;             /* k of the k-delay parallel scan for collection */
  int levels;
} ht_paper_filter;

/* Rejects what the kernels cannot do exactly; fills `pf`. The delay is
 * derived here from the taps (the rule of core/filters.c
 * ht_filter_derive) rather than trusted; a larger f->delay (up to 8) is
 * honoured: slower but still exact, where a smaller one would not be. */
static inline cudaError_t ht_paper_check(const ht_filter *f, int levels, int in_bits, int width,
                                         int height, ht_paper_filter *pf)
{
  if (!f || (in_bits != 8 && in_bits != 16) || width <= 0 || height <= 0)
    return cudaErrorInvalidValue;
  if (f->ntaps < 1 || f->ntaps > HT_PAPER_MAX_TAPS || levels < 2 || levels > 256)
    return cudaErrorInvalidValue;
  int row_left[4] = { 0, 0, 0, 0 };
  pf->ntaps = f->ntaps;
  pf->left = pf->right = pf->down = 0;
  for (int n = 0; n < f->ntaps; n++) {
    int dx = f->taps[n].dx, dy = f->taps[n].dy, q = f->taps[n].q;
    /* same limits as core/halftone.h: 4 columns either side, 3 rows down,
     * only unprocessed targets, non-negative weights at most 1 */
    if (dy < 0 || dy > 3 || dx < -4 || dx > 4 || (dy == 0 && dx <= 0) || q < 0 || q > HT_Q_ONE)
      return cudaErrorInvalidValue;
    for (int o = 0; o < n; o++)
      if (f->taps[o].dx == dx && f->taps[o].dy == dy)
        return cudaErrorInvalidValue; /* one weight per position */
    pf->dx[n] = dx;
    pf->dy[n] = dy;
    pf->q[n] = q;
    if (-dx > pf->left)
      pf->left = -dx;
    if (dx > pf->right)
      pf->right = dx;
    if (dy > pf->down)
      pf->down = dy;
    if (dy > 0 && -dx > row_left[dy])
      row_left[dy] = -dx;
  }
  /* Row y+dy at column x collects from row y up to column x + row_left:
   * with k columns of delay per row, dy * k >= row_left + 1 (Sec. III). */
  int delay = 1;
  for (int dy = 1; dy <= 3; dy++) {
    int need = (row_left[dy] + dy) / dy;
    if (need > delay)
      delay = need;
  }
  if (f->delay > delay && f->delay <= 8)
    delay = f->delay;
  pf->delay = delay;
  pf->levels = levels;
  return cudaSuccess;
}

/* Two taps of two different rows hit the same pixel in the same step of
 * a k-delay scan: row i's tap a and row i+d's tap b with d = dy_a - dy_b
 * meet when dx_b - dx_a = k * d (Sec. III, Fig. 3). */
static inline bool ht_paper_taps_meet(const ht_paper_filter *pf, int a, int b, int k)
{
  return pf->dy[a] != pf->dy[b] && pf->dx[b] - pf->dx[a] == k * (pf->dy[a] - pf->dy[b]);
}

/* The least delay >= the collection delay at which no two rows ever add
 * to the same pixel in one step: the "3-D PED (low parallelism)" row
 * generalised (3 for Floyd-Steinberg, 5 for Jarvis-Judice-Ninke). It
 * exists: taps are at most 8 columns apart. */
static inline int ht_paper_exclusive_delay(const ht_paper_filter *pf)
{
  for (int k = pf->delay;; k++) {
    bool ok = true;
    for (int a = 0; a < pf->ntaps && ok; a++)
      for (int b = 0; b < pf->ntaps && ok; b++)
        ok = !ht_paper_taps_meet(pf, a, b, k);
    if (ok)
      return k;
  }
}

/* Taps that another row may hit at the same time under delay k: these
 * are the additions that need atomicAdd (2-D PED with atomicAdd). */
static inline uint32_t ht_paper_atomic_mask(const ht_paper_filter *pf, int k)
{
  uint32_t mask = 0;
  for (int a = 0; a < pf->ntaps; a++)
    for (int b = 0; b < pf->ntaps; b++)
      if (ht_paper_taps_meet(pf, a, b, k))
        mask |= 1u << a;
  return mask;
}

/* Splits the taps into phases separated by a barrier so that taps that
 * can meet are never in the same phase. The paper's split for
 * Floyd-Steinberg (7/16 first; then 1/16, 5/16, 3/16) is the preferred
 * colouring: row 0 taps first, the rows below second; a greedy colouring
 * adds phases only for filters that need them. Returns the count. */
static inline int ht_paper_phases(const ht_paper_filter *pf, int k, int min_phases,
                                  uint8_t *phase)
{
  int nph = min_phases;
  for (int a = 0; a < pf->ntaps; a++) {
    uint32_t used = 0;
    for (int b = 0; b < a; b++)
      if (ht_paper_taps_meet(pf, a, b, k))
        used |= 1u << phase[b];
    int p = pf->dy[a] == 0 ? 0 : (min_phases > 1 ? 1 : 0);
    if (used & (1u << p))
      for (p = 0; used & (1u << p); p++)
        ;
    phase[a] = (uint8_t)p;
    if (p + 1 > nph)
      nph = p + 1;
  }
  return nph;
}

/* ----------------------------------------------------------- device side */

#ifdef __CUDACC__
/* Sample (x, y) of the caller's 8- or 16-bit plane in HT_FX units. */
__device__ __forceinline__ int32_t ht_paper_load(const unsigned char *in, int bits, size_t pitch,
                                                 int x, int y)
{
  const unsigned char *row = in + (size_t)y * pitch;
  return bits == 8 ? ht_fx_from_u8(row[x]) : (int32_t)((const uint16_t *)row)[x];
}

/* The level index of value v, as core/diffusion/ed.c chooses it. */
__device__ __forceinline__ int32_t ht_paper_quantize(int32_t v, int levels)
{
  return levels == 2 ? ht_fx_binary(v) : ht_fx_quantize(v, levels);
}
#endif

/* The value of level q: two levels come from registers (lvl0, lvl1 are
 * ht_fx_level(0, 2) and ht_fx_level(1, 2), computed on the host), more
 * from the table; this sits on the serial path of every pixel. */
#ifdef __CUDACC__
__device__ __forceinline__ int32_t ht_paper_level(int32_t q, int levels, int32_t lvl0, int32_t lvl1,
                                                  const int32_t *lvl)
{
  return levels == 2 ? (q ? lvl1 : lvl0) : lvl[q];
}
#endif

/* Scratch buffers taken with cudaMallocAsync on the caller's stream, so
 * that repeated runs reuse the stream-ordered pool; all are freed by
 * ht_paper_scratch_end whatever happened before. */
typedef struct {
  void *p[8];
  int n;
  cudaStream_t stream;
} ht_paper_scratch;

static inline cudaError_t ht_paper_alloc(ht_paper_scratch *sc, void **out, size_t bytes)
{
  *out = NULL;
  if (sc->n == 8)
    return cudaErrorMemoryAllocation;
  void *p = NULL;
  cudaError_t err = cudaMallocAsync(&p, bytes ? bytes : 1, sc->stream);
  if (err != cudaSuccess)
    return err;
  sc->p[sc->n++] = p;
  *out = p;
  return cudaSuccess;
}

/* Frees everything, waits for the stream, returns the first error. */
static inline cudaError_t ht_paper_scratch_end(ht_paper_scratch *sc, cudaError_t err)
{
  for (int i = 0; i < sc->n; i++) {
    cudaError_t e = cudaFreeAsync(sc->p[i], sc->stream);
    if (err == cudaSuccess)
      err = e;
  }
  sc->n = 0;
  cudaError_t e = cudaStreamSynchronize(sc->stream);
  if (err == cudaSuccess)
    err = e;
  return err;
}

/* The level values ht_fx_level(i, L), i < L, copied to device memory. */
static inline cudaError_t ht_paper_levels(ht_paper_scratch *sc, int levels, int32_t **d_lvl)
{
  int32_t lvl[256];
  for (int i = 0; i < levels; i++)
    lvl[i] = ht_fx_level(i, levels);
  cudaError_t err = ht_paper_alloc(sc, (void **)d_lvl, 256 * sizeof(int32_t));
  if (err != cudaSuccess)
    return err;
  /* from pageable memory: the copy is staged before this returns */
  return cudaMemcpyAsync(*d_lvl, lvl, (size_t)levels * sizeof(int32_t), cudaMemcpyHostToDevice,
                         sc->stream);
}

/* The two halves (paper_global.cu, paper_parallelogram.cu). */
cudaError_t ht_paper_global_run(ht_gpu_paper_variant v, const void *d_in, int in_bits,
                                size_t in_pitch, unsigned char *d_out, size_t out_pitch,
                                int width, int height, const ht_paper_filter *pf,
                                cudaStream_t stream);
cudaError_t ht_paper_pb_run(ht_gpu_paper_variant v, const void *d_in, int in_bits,
                            size_t in_pitch, unsigned char *d_out, size_t out_pitch, int width,
                            int height, const ht_paper_filter *pf, cudaStream_t stream);

#endif

/* The arithmetic of the steps (les.c, pes.c, dbs.c): a flip of one
 * window pixel and what it does to the sum of |e| over the window's
 * region (Kouge et al., Sec. II-B and III: "flipping a pixel in the
 * order of the gray code ... the total error can be computed in O(w^2)
 * time"), on vectors of HT_SX_LANES int32.
 *
 * Each step file is compiled once for each instruction set (generic,
 * AVX2, AVX-512: core/meson.build sets HT_SX_ISA and the flags), so
 * that these inline functions are compiled for the set of the function
 * that calls them; run.c picks the instance the CPU can run. Every
 * instance computes the same integers: lanes are independent int32
 * additions, and sums are exact (see ht_sx_flip for why they fit).
 */
#ifndef HT_SEARCH_KERNEL_H
#define HT_SEARCH_KERNEL_H

#include "search.h"

#ifndef HT_SX_ISA
#error "HT_SX_ISA names the instruction set this file is compiled for"
#endif
#define HT_SX_CAT2(a, b) a##_##b
#define HT_SX_CAT(a, b) HT_SX_CAT2(a, b)
#define HT_SX_FN(name) HT_SX_CAT(name, HT_SX_ISA)

#define HT_SX_INLINE static inline __attribute__((always_inline))

/* Whether the steps keep a region in registers (ht_sx_reg): where there
 * are 32 vector registers of 16 lanes. */
#ifdef __AVX512F__
#define HT_SX_REG true
#else
#define HT_SX_REG true
#endif
/* These functions pass vectors by value but are always inlined: no call
 * crosses the ABI that GCC warns about. */
#pragma GCC diagnostic ignored "-Wpsabi"

typedef int32_t ht_sxv8 __attribute__((vector_size(32)));
typedef int32_t ht_sxv4 __attribute__((vector_size(16)));
typedef int64_t ht_sxq8 __attribute__((vector_size(64)));

/* |v| and max(a, b): one instruction where the set has it. */
#if defined(__AVX512F__)
#include <immintrin.h>
HT_SX_INLINE ht_sxv ht_sx_abs(ht_sxv v) { return (ht_sxv)_mm512_abs_epi32((__m512i)v); }
HT_SX_INLINE ht_sxv ht_sx_max(ht_sxv a, ht_sxv b) { return (ht_sxv)_mm512_max_epi32((__m512i)a, (__m512i)b); }
#elif defined(__AVX2__)
#include <immintrin.h>
HT_SX_INLINE ht_sxv ht_sx_join(__m256i lo, __m256i hi)
{
  return __builtin_shufflevector((ht_sxv8)lo, (ht_sxv8)hi, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
}
#define HT_SX_LO(v) ((__m256i)__builtin_shufflevector((v), (v), 0, 1, 2, 3, 4, 5, 6, 7))
#define HT_SX_HI(v) ((__m256i)__builtin_shufflevector((v), (v), 8, 9, 10, 11, 12, 13, 14, 15))
HT_SX_INLINE ht_sxv ht_sx_abs(ht_sxv v) { return ht_sx_join(_mm256_abs_epi32(HT_SX_LO(v)), _mm256_abs_epi32(HT_SX_HI(v))); }
HT_SX_INLINE ht_sxv ht_sx_max(ht_sxv a, ht_sxv b)
{
  return ht_sx_join(_mm256_max_epi32(HT_SX_LO(a), HT_SX_LO(b)), _mm256_max_epi32(HT_SX_HI(a), HT_SX_HI(b)));
}
#else
HT_SX_INLINE ht_sxv ht_sx_abs(ht_sxv v)
{
  const ht_sxv m = v >> 31;
  return (v ^ m) - m;
}
HT_SX_INLINE ht_sxv ht_sx_max(ht_sxv a, ht_sxv b)
{
  const ht_sxv gt = a > b; /* -1 where a > b */
  return b ^ ((a ^ b) & gt);
}
#endif

/* The sum of the lanes. The caller knows it fits in int32. */
HT_SX_INLINE int32_t ht_sx_hsum(ht_sxv v)
{
  const ht_sxv8 a = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7) +
                    __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
  const ht_sxv4 c = __builtin_shufflevector(a, a, 0, 1, 2, 3) + __builtin_shufflevector(a, a, 4, 5, 6, 7);
  return c[0] + c[1] + c[2] + c[3];
}

/* The sum of the lanes of non-negative int32 vectors, in int64 lanes. */
HT_SX_INLINE ht_sxq8 ht_sx_widen_add(ht_sxq8 acc, ht_sxv v)
{
  const ht_sxv8 lo = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7);
  const ht_sxv8 hi = __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
  return acc + __builtin_convertvector(lo, ht_sxq8) + __builtin_convertvector(hi, ht_sxq8);
}

HT_SX_INLINE int64_t ht_sx_qsum(ht_sxq8 q)
{
  return q[0] + q[1] + q[2] + q[3] + q[4] + q[5] + q[6] + q[7];
}

/* Flips one pixel: adds its table t (cnt vectors: 2r + 1 rows of nv)
 * to the region rows it reaches, e, and returns the change of the sum of
 * |e| over them.
 *
 * Why int32 holds it: every e is the error of some binary image, so
 * |e| <= 65535 * HT_EYE_ONE < 2^31 before and after; each pixel's
 * | |e + d| - |e| | is at most |d| = 65535 w, and the w of one flip sum
 * to at most HT_EYE_ONE, so any partial sum of the changes, a lane's or
 * all of them, is at most 65535 * 32768 < 2^31 in size. */
HT_SX_INLINE int32_t ht_sx_flip(ht_sxv *restrict e, const ht_sxv *restrict t, const int cnt)
{
  ht_sxv acc = { 0 };
  for (int i = 0; i < cnt; i++) {
    const ht_sxv o = e[i], n = o + t[i];
    e[i] = n;
    acc += ht_sx_abs(n) - ht_sx_abs(o);
  }
  return ht_sx_hsum(acc);
}

/* Sum of |e| over n vectors, in int64. */
HT_SX_INLINE int64_t ht_sx_abs_sum(const ht_sxv *e, int n)
{
  ht_sxq8 q = { 0 };
  for (int i = 0; i < n; i++)
    q = ht_sx_widen_add(q, ht_sx_abs(e[i]));
  return ht_sx_qsum(q);
}

/* The region in registers: for eyes of radius up to 3 a window's region
 * is at most HT_SX_REG_ROWS rows of one vector (5 + 2 * 3 pixels), which
 * the AVX-512 instance keeps in registers with their |e|: a flip then
 * costs four instructions a row and touches no memory (the flip's row
 * ky is a constant in each case of the switch, so that the compiler can
 * name the registers). Rows past the region are zero and stay so. */
#define HT_SX_REG_ROWS 11
#define HT_SX_REG_MAX_CNT 7

typedef struct {
  ht_sxv e[HT_SX_REG_ROWS], a[HT_SX_REG_ROWS];
} ht_sx_reg;

HT_SX_INLINE int32_t ht_sx_reg_flip_at(ht_sx_reg *g, const int ky, const ht_sxv *t, const int cnt)
{
  ht_sxv acc = { 0 };
  for (int i = 0; i < cnt; i++) {
    const ht_sxv n = g->e[ky + i] + t[i], a = ht_sx_abs(n);
    acc += a - g->a[ky + i];
    g->e[ky + i] = n;
    g->a[ky + i] = a;
  }
  return ht_sx_hsum(acc);
}

HT_SX_INLINE int32_t ht_sx_reg_flip(ht_sx_reg *g, int ky, const ht_sxv *t, const int cnt)
{
  switch (ky) {
  case 0: return ht_sx_reg_flip_at(g, 0, t, cnt);
  case 1: return ht_sx_reg_flip_at(g, 1, t, cnt);
  case 2: return ht_sx_reg_flip_at(g, 2, t, cnt);
  case 3: return ht_sx_reg_flip_at(g, 3, t, cnt);
  default: return ht_sx_reg_flip_at(g, 4, t, cnt);
  }
}

HT_SX_INLINE void ht_sx_reg_load(ht_sx_reg *g, const ht_sxv *e, int rh)
{
  for (int i = 0; i < HT_SX_REG_ROWS; i++) {
    g->e[i] = i < rh ? e[i] : (ht_sxv){ 0 };
    g->a[i] = ht_sx_abs(g->e[i]);
  }
}

HT_SX_INLINE void ht_sx_reg_store(const ht_sx_reg *g, ht_sxv *e, int rh)
{
  for (int i = 0; i < rh; i++)
    e[i] = g->e[i];
}

/* A window's region as the steps see it: in registers (reg, a
 * constant of each instance of a step) or in w->e. */
typedef struct {
  ht_sx_reg g;
  ht_sx_scratch *w;
  int nv, rh, rows; /* rows: the vectors that sums and bounds go over */
  uint8_t ky[HT_SX_MAX_BITS];
} ht_sx_region;

HT_SX_INLINE void ht_sx_open(ht_sx_region *R, const ht_sx *s, ht_sx_scratch *w, const bool reg)
{
  R->w = w;
  R->nv = s->nv;
  R->rh = s->rh;
  R->rows = reg ? HT_SX_REG_ROWS : s->rh * s->nv;
  for (int k = 0; k < s->wh * s->ww; k++)
    R->ky[k] = (uint8_t)(k / s->ww);
  if (reg)
    ht_sx_reg_load(&R->g, w->e, s->rh);
}

/* Back to w->e, for ht_sx_commit. */
HT_SX_INLINE void ht_sx_close(ht_sx_region *R, const bool reg)
{
  if (reg)
    ht_sx_reg_store(&R->g, R->w->e, R->rh);
}

/* Region vector i (0 <= i < rows). */
HT_SX_INLINE ht_sxv ht_sx_vec(const ht_sx_region *R, const bool reg, int i) { return reg ? R->g.e[i] : R->w->e[i]; }

/* Flips window pixel k (state: its present value) and returns the
 * change of the sum of |e|. */
HT_SX_INLINE int32_t ht_sx_flip_k(ht_sx_region *R, const bool reg, int k, uint32_t state, const int cnt)
{
  const ht_sxv *t = R->w->tab[k][~state >> k & 1];
  return reg ? ht_sx_reg_flip(&R->g, R->ky[k], t, cnt) : ht_sx_flip(R->w->e + R->ky[k] * R->nv, t, cnt);
}

/* Flips the pixels `bits` of *state, returns the change of the sum. */
HT_SX_INLINE int64_t ht_sx_flip_all(ht_sx_region *R, const bool reg, uint32_t *state, uint32_t bits, const int cnt)
{
  int64_t d = 0;
  while (bits) {
    const int k = __builtin_ctz(bits);
    bits &= bits - 1;
    d += ht_sx_flip_k(R, reg, k, *state, cnt);
    *state ^= 1u << k;
  }
  return d;
}

/* The region's sum of |e|. */
HT_SX_INLINE int64_t ht_sx_sum(const ht_sx_region *R, const bool reg)
{
  ht_sxq8 q = { 0 };
  for (int i = 0; i < R->rows; i++)
    q = ht_sx_widen_add(q, reg ? R->g.a[i] : ht_sx_abs(R->w->e[i]));
  return ht_sx_qsum(q);
}

/* Flips the window's pixels `bits` of `state` (e follows), returns the
 * change of the region's sum of |e|. */
HT_SX_INLINE int64_t ht_sx_flip_bits(const ht_sx *s, ht_sx_scratch *w, uint32_t *state, uint32_t bits)
{
  const int cnt = (2 * s->r + 1) * s->nv;
  int64_t d = 0;
  while (bits) {
    const int k = __builtin_ctz(bits);
    bits &= bits - 1;
    d += ht_sx_flip(w->e + (k / s->ww) * s->nv, w->tab[k][~*state >> k & 1], cnt);
    *state ^= 1u << k;
  }
  return d;
}

/* A step of LES or PES at position (i, j): `search` (the file's own,
 * always inlined) finds the pattern to keep from the window's region,
 * with the usual eyes' region in registers and their loop counts
 * constant; the window changes where that is not the current pattern. */
typedef uint32_t ht_sx_search_fn(const ht_sx *s, ht_sx_scratch *w, bool reg, int cnt);

HT_SX_INLINE bool ht_sx_search_step(const ht_sx *s, ht_sx_scratch *w, int64_t i, int64_t j, ht_sx_search_fn *search)
{
  ht_sx_begin(s, w, i, j);
  const int cnt = (2 * s->r + 1) * s->nv;
  uint32_t best;
  switch (cnt) {
  case 3: best = search(s, w, HT_SX_REG, 3); break;
  case 5: best = search(s, w, HT_SX_REG, 5); break;
  case 7: best = search(s, w, HT_SX_REG, 7); break;
  default: best = search(s, w, false, cnt); break;
  }
  if (best == w->cur)
    return false;
  ht_sx_commit(s, w, best);
  return true;
}

#endif

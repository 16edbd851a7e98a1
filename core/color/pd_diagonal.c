/* Plane-dependent colour error diffusion, the fast kernel of pd-threads
 * (Zhang et al., Sec. 2.1; the k-delay scan of Kasagi et al., Sec. III,
 * with k = 2 and one SIMD lane per row, as the gray wavefront's diagonal
 * kernel): for filters whose taps lie one row down and one column either
 * side at most (Floyd-Steinberg, Sierra Lite, custom filters of that
 * shape), 3 or 4 planes, no randomised weights, on CPUs with AVX2.
 *
 * A band of G = 8 NV rows is NV vectors of 8 int32 lanes, lane j = row
 * j. In iteration i row j works on column i - 2j, so row j - 1 did
 * column i - 2j + 1 one iteration before and the band's pixels of one
 * iteration are independent. At each iteration the planes go in order
 * 0 .. P-1, each a vector step: the value collects
 *  - the input;
 *  - the left neighbour's filter share: the same lane, one iteration
 *    before, in registers;
 *  - above-right: that vector moved up one lane (lane 0 takes the last
 *    lane of the vector before it, or the band above's last row from
 *    memory); above and above-left: the moved vectors of one and two
 *    iterations before, whose terms wait in acc1 and acc2;
 *  - the forward share of the plane before (this iteration) and the
 *    backward share of the plane after (the same lane one iteration
 *    before: the previous pixel on the row).
 * Every term is term(e, q) of docs/arithmetic.md, summed as integers, so
 * the value is the sequential reference's (docs/color.md, "Why the
 * threaded and GPU scans give the same bits"; "The fast kernel").
 *
 * Products are 32-bit here, where ht_pd_term takes 64 bits: the same
 * integer while |e| < 2^18 (e * q + 2048 < 2^31 for q <= 4096). Every
 * error's magnitude is ORed into a word; a run where one reached 2^18
 * is run again by the row kernel (pd_threads.c). Up to the first such
 * error every value is exact, so the check sees it.
 *
 * Threads take bands in turn (band b by thread b mod T); a band publishes
 * the columns its last row has done every KP iterations, and waits before
 * each KP iterations until the band above has done every column they
 * read. Its last row's errors go to a ring of whole rows (set b mod
 * ring), the band below's only input from it. Input is loaded, and
 * output stored, a block of K iterations at a time through the thread's
 * tile; 8-bit pixels 8 rows x 8 columns at a time in registers (tile_in,
 * tile_out). Inside the image (no lane masked) the kernel runs without
 * masks, and with Floyd-Steinberg's weights without products for the
 * filter (docs/color.md, "The fast kernel"). */
#include "color.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define PDD 1
#include "../simd.h"
#else
#define PDD 0
#endif

#if PDD

#define AI static inline __attribute__((always_inline))
#define AVX2 __attribute__((target("avx2")))
#define K 128        /* iterations whose input a tile holds             */
#define KP 32        /* iterations between two publications of progress     */
#define GMAX 32      /* rows of a band at most: 4 vectors                   */
#define SPAD (2 * GMAX + 8) /* zeros right of a set's row: lane 0 reads i + 1 */
#define BIG (1 << 18) /* |e| below this: 32-bit products are exact          */

typedef struct {
  _Alignas(64) _Atomic uint64_t v; /* (band << 32) | columns of its last row done */
} pdd_progress;

/* A thread's buffers. in[p][i][j]: plane p of row j at the block's
 * iteration i (column i0 + i - 2j), then its level index. */
typedef struct {
  _Alignas(64) int32_t in[HT_PD_MAX_PLANES][K][GMAX];
  int32_t rows[HT_PD_MAX_PLANES][GMAX][K]; /* the same by rows: row j from column i0 - 2j */
  int32_t tmp[3 * K];                      /* cmyk scratch */
  uint8_t out[GMAX][HT_PD_MAX_PLANES][K + 8]; /* level indices from out0[j]  */
  int64_t out0[GMAX];
} pdd_tile;

/* A band's registers between two calls of the kernel. */
typedef struct {
  _Alignas(32) int32_t r[HT_PD_MAX_PLANES][GMAX], acc1[HT_PD_MAX_PLANES][GMAX], acc2[HT_PD_MAX_PLANES][GMAX],
      back[HT_PD_MAX_PLANES][GMAX], big[8];
} pdd_regs;

struct ht_pdd {
  ht_job *job;
  const ht_color_job *cj;
  int64_t w, h, nb; /* bands */
  int P, NV, G, T, ring;
  bool binary;      /* every plane two levels */
  bool fs;          /* Floyd-Steinberg's weights */
  bool same;        /* the middle planes' two inter-plane weights equal */
  bool bytes_in;    /* rows[p] read byte p of 8-bit pixels (cmyk: R, G, B) */
  bool bytes_out;   /* rows[p] write byte p of 8-bit pixels */
  size_t ss;        /* stride of a set's plane rows */
  int32_t *sets;    /* ring x P rows of ss: a band's last row, r */
  int32_t *top;     /* P rows of zeros: above band 0 */
  pdd_progress *prog;
  void *prog_mem;
  pdd_tile *tiles;
  void *tiles_mem;
  int32_t lvtab[HT_PD_MAX_PLANES][256]; /* level values */
  uint8_t in_mask[HT_PD_MAX_PLANES][32];  /* bytes_in: tile_in's shuffles */
  bool lut16;       /* bytes_out and 16 levels at most a plane: tile_out */
  uint8_t out_lut[HT_PD_MAX_PLANES][16];  /* level index -> output byte    */
  uint8_t out_mask[HT_PD_MAX_PLANES][32]; /* tile_out's shuffles           */
  _Atomic int big;  /* some error reached BIG */
};

static inline int32_t *set_of(const ht_pdd *S, int64_t b) { return S->sets + (size_t)(b % S->ring) * (size_t)S->P * S->ss; }

#define TERM(e, q) _mm256_srai_epi32(_mm256_add_epi32(_mm256_mullo_epi32(e, q), half), HT_Q_BITS)

/* Nearest level of v (per lane) for L levels (not 2), its index to *q and
 * the error returned: q = 0 for v <= 0, else min(L - 1, floor((2 v (L - 1)
 * + 65534) / 131070)) (core/shared/fixed.h); the quotient in double, of n + 1/2
 * (never a whole multiple, so truncation is the floor of the exact one).
 * Where v is so large that 2 v (L - 1) wraps, q is still a level and the
 * error at least BIG: the run is done again. */
AI AVX2 __m256i round_multi(__m256i v, int L, const int32_t *tab, __m256i *q)
{
  const __m256i n = _mm256_add_epi32(_mm256_mullo_epi32(v, _mm256_set1_epi32(2 * (L - 1))), _mm256_set1_epi32(65534));
  const __m256d half = _mm256_set1_pd(0.5), inv = _mm256_set1_pd(1.0 / 131070.0);
  const __m128i lo = _mm256_cvttpd_epi32(_mm256_mul_pd(_mm256_add_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(n)), half), inv));
  const __m128i hi =
      _mm256_cvttpd_epi32(_mm256_mul_pd(_mm256_add_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(n, 1)), half), inv));
  __m256i k = _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
  k = _mm256_min_epi32(_mm256_max_epi32(k, _mm256_setzero_si256()), _mm256_set1_epi32(L - 1));
  k = _mm256_and_si256(k, _mm256_cmpgt_epi32(v, _mm256_setzero_si256()));
  *q = k;
  return _mm256_sub_epi32(v, _mm256_i32gather_epi32(tab, k, 4));
}

/* Iterations i0 + a .. i0 + b - 1 of band `bd` (rows y0 ..), the tile's
 * block starting at iteration i0. Without EDGE every lane's pixel lies
 * inside the image and not in its last column (run_band's interior), so
 * no lane is masked. FS: the filter is Floyd-Steinberg's, whose weights
 * are k * 256 (k = 7, 3, 5, 1), and term(e, 256 k) = (k e + 8) >> 4,
 * the same integer, from shifts and adds: the three terms of a moved
 * vector m from m + m and m + 8. SAME: the middle planes' forward and
 * backward weights are equal, so are their two shares (one product). */
AI AVX2 void kernel(const int P, const int NV, const bool BIN, const bool EDGE, const bool FS, const bool SAME,
                    const ht_pdd *S, pdd_tile *t, pdd_regs *R,
                    const int32_t *above, int32_t *next, int64_t y0, int64_t i0, int a, int b)
{
  const ht_color_job *cj = S->cj;
  const ht_filter *f = &S->job->filter;
  int32_t box[2][3] = { { 0, 0, 0 }, { 0, 0, 0 } }; /* [dy][1 + dx] */
  for (int k = 0; k < f->ntaps; k++)
    box[f->taps[k].dy][1 + f->taps[k].dx] = f->taps[k].q;
  const __m256i half = _mm256_set1_epi32(HT_Q_HALF), q_left = _mm256_set1_epi32(box[0][2]),
                q_ur = _mm256_set1_epi32(box[1][0]), q_up = _mm256_set1_epi32(box[1][1]),
                q_ul = _mm256_set1_epi32(box[1][2]), mid = _mm256_set1_epi32(HT_FX_ONE / 2),
                one = _mm256_set1_epi32(HT_FX_ONE), onei = _mm256_set1_epi32(1), eight = _mm256_set1_epi32(8),
                up = _mm256_setr_epi32(7, 0, 1, 2, 3, 4, 5, 6), wl = _mm256_set1_epi32((int)S->w - 1), neg = _mm256_set1_epi32(-1);
  __m256i fw[HT_PD_MAX_PLANES], bw[HT_PD_MAX_PLANES];
  for (int p = 0; p < P; p++) {
    fw[p] = _mm256_set1_epi32(cj->forward[p]);
    bw[p] = _mm256_set1_epi32(cj->backward[p]);
  }
  __m256i r[HT_PD_MAX_PLANES][4], acc1[HT_PD_MAX_PLANES][4], acc2[HT_PD_MAX_PLANES][4], back[HT_PD_MAX_PLANES][4];
  __m256i lane2[4], rowok[4];
  __m256i big = _mm256_load_si256((const __m256i *)(const void *)R->big);
  for (int k = 0; k < NV; k++) {
    lane2[k] = _mm256_setr_epi32(16 * k, 16 * k + 2, 16 * k + 4, 16 * k + 6, 16 * k + 8, 16 * k + 10, 16 * k + 12,
                                 16 * k + 14);
    const __m256i rows = _mm256_add_epi32(_mm256_set1_epi32((int)(y0 + 8 * k)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    rowok[k] = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)S->h), rows);
    for (int p = 0; p < P; p++) {
      r[p][k] = _mm256_load_si256((const __m256i *)(const void *)&R->r[p][8 * k]);
      acc1[p][k] = _mm256_load_si256((const __m256i *)(const void *)&R->acc1[p][8 * k]);
      acc2[p][k] = _mm256_load_si256((const __m256i *)(const void *)&R->acc2[p][8 * k]);
      back[p][k] = _mm256_load_si256((const __m256i *)(const void *)&R->back[p][8 * k]);
    }
  }
  const int64_t w = S->w, last = 2 * (8 * (int64_t)NV - 1);
  for (int ii = a; ii < b; ii++) {
    const int64_t i = i0 + ii;
    /* the moved vectors: lane j gets row j - 1's error at column i + 1 - 2j */
    __m256i m[HT_PD_MAX_PLANES][4];
    for (int p = 0; p < P; p++) {
      __m256i pr[4];
      for (int k = 0; k < NV; k++)
        pr[k] = _mm256_permutevar8x32_epi32(r[p][k], up);
      m[p][0] = _mm256_blend_epi32(pr[0], _mm256_set1_epi32(above[(size_t)p * S->ss + (size_t)(i + 1)]), 1);
      for (int k = 1; k < NV; k++)
        m[p][k] = _mm256_blend_epi32(pr[k], pr[k - 1], 1);
    }
    for (int k = 0; k < NV; k++) {
      __m256i valid = neg, nolast = neg;
      if (EDGE) {
        const __m256i x = _mm256_sub_epi32(_mm256_set1_epi32((int)i), lane2[k]);
        valid = _mm256_and_si256(_mm256_andnot_si256(_mm256_cmpgt_epi32(x, wl), _mm256_cmpgt_epi32(x, neg)), rowok[k]);
        nolast = _mm256_andnot_si256(_mm256_cmpeq_epi32(x, wl), valid);
      }
      __m256i fin = _mm256_setzero_si256();
      for (int p = 0; p < P; p++) {
        int32_t *slot = &t->in[p][ii][8 * k];
        __m256i v = _mm256_add_epi32(_mm256_load_si256((const __m256i *)(void *)slot), acc1[p][k]);
        __m256i t_up, t_ul;
        if (FS) {
          const __m256i mm = m[p][k], m2 = _mm256_add_epi32(mm, mm), m8 = _mm256_add_epi32(mm, eight),
                        m3 = _mm256_add_epi32(m2, m8), rr = r[p][k]; /* 3 m + 8 */
          v = _mm256_add_epi32(v, _mm256_srai_epi32(m3, 4));
          t_up = _mm256_srai_epi32(_mm256_add_epi32(m3, m2), 4);
          t_ul = _mm256_srai_epi32(m8, 4);
          const __m256i r7 = _mm256_sub_epi32(_mm256_slli_epi32(_mm256_add_epi32(rr, onei), 3), rr); /* 7 r + 8 */
          v = _mm256_add_epi32(v, _mm256_srai_epi32(r7, 4));
        } else {
          v = _mm256_add_epi32(v, TERM(m[p][k], q_ur));
          v = _mm256_add_epi32(v, TERM(r[p][k], q_left));
          t_up = TERM(m[p][k], q_up);
          t_ul = TERM(m[p][k], q_ul);
        }
        v = _mm256_add_epi32(v, _mm256_add_epi32(fin, back[p][k]));
        __m256i e, q;
        if (BIN || cj->levels[p] == 2) {
          const __m256i gt = _mm256_cmpgt_epi32(v, mid);
          e = _mm256_sub_epi32(v, _mm256_and_si256(gt, one));
          q = _mm256_and_si256(gt, onei);
        } else {
          e = round_multi(v, cj->levels[p], S->lvtab[p], &q);
        }
        _mm256_store_si256((__m256i *)(void *)slot, q);
        if (EDGE)
          e = _mm256_and_si256(e, valid);
        big = _mm256_or_si256(big, _mm256_abs_epi32(e));
        __m256i rest = e;
        if (p + 1 < P) {
          fin = TERM(e, fw[p]);
          rest = _mm256_sub_epi32(rest, fin);
        }
        if (p > 0) {
          const __m256i bb = EDGE                  ? _mm256_and_si256(TERM(e, bw[p]), nolast)
                             : SAME && p + 1 < P ? fin
                                                 : TERM(e, bw[p]);
          rest = _mm256_sub_epi32(rest, bb);
          back[p - 1][k] = bb;
        }
        acc1[p][k] = _mm256_add_epi32(acc2[p][k], t_up);
        acc2[p][k] = t_ul;
        r[p][k] = rest;
      }
    }
    /* the band's last row, for the band below */
    const int64_t xl = i - last;
    if (xl >= 0 && xl < w)
      for (int p = 0; p < P; p++)
        next[(size_t)p * S->ss + (size_t)xl] = _mm256_extract_epi32(r[p][NV - 1], 7);
  }
  _mm256_store_si256((__m256i *)(void *)R->big, big);
  for (int k = 0; k < NV; k++)
    for (int p = 0; p < P; p++) {
      _mm256_store_si256((__m256i *)(void *)&R->r[p][8 * k], r[p][k]);
      _mm256_store_si256((__m256i *)(void *)&R->acc1[p][8 * k], acc1[p][k]);
      _mm256_store_si256((__m256i *)(void *)&R->acc2[p][8 * k], acc2[p][k]);
      _mm256_store_si256((__m256i *)(void *)&R->back[p][8 * k], back[p][k]);
    }
}

typedef void (*kernel_fn)(const ht_pdd *S, pdd_tile *t, pdd_regs *R, const int32_t *above, int32_t *next, int64_t y0,
                          int64_t i0, int a, int b);
/* kernel_P_NV_BIN_KIND: KIND 0 the interior, 1 the edges, 2 the interior
 * with Floyd-Steinberg's weights, 3 the same with SAME */
#define INST(P, NV, BIN, KIND)                                                                                      \
  static AVX2 void kernel_##P##_##NV##_##BIN##_##KIND(const ht_pdd *S, pdd_tile *t, pdd_regs *R,                     \
                                                      const int32_t *above, int32_t *next, int64_t y0, int64_t i0,    \
                                                      int a, int b)                                                  \
  {                                                                                                                  \
    kernel(P, NV, BIN, KIND == 1, KIND >= 2, KIND == 3, S, t, R, above, next, y0, i0, a, b);                         \
  }
#define INST2(P, NV, BIN) INST(P, NV, BIN, 0) INST(P, NV, BIN, 1) INST(P, NV, BIN, 2) INST(P, NV, BIN, 3)
INST2(3, 1, 1) INST2(3, 2, 1) INST2(3, 4, 1) INST2(4, 1, 1) INST2(4, 2, 1) INST2(4, 4, 1)
INST2(3, 1, 0) INST2(3, 2, 0) INST2(3, 4, 0) INST2(4, 1, 0) INST2(4, 2, 0) INST2(4, 4, 0)
#undef INST2
#undef INST
static kernel_fn kernel_of(int P, int NV, bool bin, int kind)
{
#define ONE(P, BIN, K) { kernel_##P##_1_##BIN##_##K, kernel_##P##_2_##BIN##_##K, kernel_##P##_4_##BIN##_##K }
#define ROW(P, BIN) { ONE(P, BIN, 0), ONE(P, BIN, 1), ONE(P, BIN, 2), ONE(P, BIN, 3) }
  static const kernel_fn fns[2][2][4][3] = { { ROW(3, 0), ROW(4, 0) }, { ROW(3, 1), ROW(4, 1) } };
#undef ROW
#undef ONE
  return fns[bin][P - 3][kind][NV == 1 ? 0 : NV == 2 ? 1 : 2];
}

/* 8-bit pixels of ch channels (3 or 4) to lanes: the shuffle that takes
 * byte ch k + p of each 128-bit half into both low bytes of int32 k, so
 * that the lane holds v * 257 = ht_fx_from_u8(v). */
static void bytes_in_masks(int ch, uint8_t m[HT_PD_MAX_PLANES][32])
{
  for (int p = 0; p < HT_PD_MAX_PLANES; p++)
    for (int b = 0; b < 32; b++)
      m[p][b] = (b & 3) < 2 ? (uint8_t)(ch * ((b & 15) >> 2) + p) : 0x80;
}

/* The 8 x 8 tile of rows 8 kv .. 8 kv + 7 at the block's iterations
 * c .. c + 7 (row j at columns i0 + c - 2j ..), every pixel inside the
 * image: each row's 8 pixels are two 16-byte loads (the second from
 * pixel 4; 3-channel rows read 4 bytes past pixel 7, so the caller keeps
 * two pixels of the row after it), shuffled into planes, then turned. */
AI AVX2 void tile_in(const int P, const bool CMYK, const ht_pdd *S, pdd_tile *t, int64_t y0, int64_t i0, int kv,
                     int c, const __m256i *mk)
{
  const ht_rows *r0 = &S->cj->rows[0];
  const size_t ch = (size_t)r0->in_channels;
  __m256i v[HT_PD_MAX_PLANES][8], o[8];
  for (int l = 0; l < 8; l++) {
    const int j = 8 * kv + l;
    const uint8_t *s = r0->in + (size_t)(y0 + j) * r0->in_stride + (size_t)(i0 + c - 2 * j) * ch;
    const __m256i x = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)s)),
                                              _mm_loadu_si128((const __m128i *)(const void *)(s + 4 * ch)), 1);
    if (CMYK) { /* ht_pd_cmyk on 8 pixels; min * black + 32768 < 2^32: exact unsigned */
      const __m256i one = _mm256_set1_epi32(HT_FX_ONE);
      const __m256i cc = _mm256_sub_epi32(one, _mm256_shuffle_epi8(x, mk[0]));
      const __m256i mm = _mm256_sub_epi32(one, _mm256_shuffle_epi8(x, mk[1]));
      const __m256i yy = _mm256_sub_epi32(one, _mm256_shuffle_epi8(x, mk[2]));
      const __m256i mn = _mm256_min_epi32(_mm256_min_epi32(cc, mm), yy);
      const __m256i k = _mm256_srli_epi32(
          _mm256_add_epi32(_mm256_mullo_epi32(mn, _mm256_set1_epi32(S->cj->black)), _mm256_set1_epi32(32768)), 16);
      v[0][l] = _mm256_sub_epi32(cc, k);
      v[1][l] = _mm256_sub_epi32(mm, k);
      v[2][l] = _mm256_sub_epi32(yy, k);
      v[3][l] = k;
      continue;
    }
    for (int p = 0; p < P; p++)
      v[p][l] = _mm256_shuffle_epi8(x, mk[p]);
  }
  for (int p = 0; p < P; p++) {
    ht_transpose8r(v[p], o);
    for (int q = 0; q < 8; q++)
      _mm256_store_si256((__m256i *)(void *)&t->in[p][c + q][8 * kv], o[q]);
  }
}

/* The block's input (iterations i0 .. i0 + K - 1; row j from column
 * i0 - 2j), zeros outside the image. 8-bit RGB(A), the usual input, goes
 * a tile of 8 rows and 8 iterations at a time (tile_in) where the tile
 * lies inside the image; the other tiles, and other input, by rows, then
 * turned into lanes. */
static __attribute__((noinline)) AVX2 void load_block(const ht_pdd *S, pdd_tile *t, int64_t y0, int g, int64_t i0)
{
  const int P = S->P;
  const int64_t w = S->w;
  const ht_rows *r0 = &S->cj->rows[0];
  if (S->bytes_in) {
    const size_t ch = (size_t)r0->in_channels;
    const int64_t over = ch == 3 ? 2 : 0; /* pixels tile_in reads past a row's 8 */
    __m256i mk[HT_PD_MAX_PLANES];
    for (int p = 0; p < P; p++)
      mk[p] = _mm256_loadu_si256((const __m256i *)(const void *)S->in_mask[p]);
    /* the next block's bytes of each row, and its output's, meanwhile */
    for (int j = 0; j < g; j++) {
      const int64_t xn = i0 + K - 2 * j, xa = xn > 0 ? xn : 0, xb = xn + K < w ? xn + K : w;
      if (xb <= xa)
        continue;
      const uint8_t *src = r0->in + (size_t)(y0 + j) * r0->in_stride + (size_t)xa * ch;
      for (int64_t o = 0; o < (xb - xa) * (int64_t)ch; o += 64)
        __builtin_prefetch(src + o);
      if (S->bytes_out) {
        uint8_t *dst = r0->out + (size_t)(y0 + j) * r0->out_stride + (size_t)xa * (size_t)r0->out_channels;
        for (int64_t o = 0; o < (xb - xa) * r0->out_channels; o += 64)
          __builtin_prefetch(dst + o, 1);
      }
    }
    for (int kv = 0; kv < S->NV; kv++)
      for (int c = 0; c < K; c += 8) {
        const int64_t xlo = i0 + c - 2 * (8 * kv + 7), xhi = i0 + c - 16 * kv; /* rows 8 kv + 7 and 8 kv */
        if (ch <= 4 && 8 * kv + 7 < g && xlo >= 0 && xhi + 8 + over <= w) {
          if (S->cj->cmyk)
            tile_in(4, true, S, t, y0, i0, kv, c, mk);
          else if (P == 3)
            tile_in(3, false, S, t, y0, i0, kv, c, mk);
          else
            tile_in(4, false, S, t, y0, i0, kv, c, mk);
          continue;
        }
        for (int p = 0; p < P; p++) /* zeros outside the image */
          for (int q = 0; q < 8; q++)
            _mm256_store_si256((__m256i *)(void *)&t->in[p][c + q][8 * kv], _mm256_setzero_si256());
        for (int j = 8 * kv; j < 8 * kv + 8 && j < g; j++) {
          const int64_t x0 = i0 + c - 2 * j, qa = x0 < 0 ? -x0 : 0, qb = w - x0 < 8 ? w - x0 : 8;
          const uint8_t *row = r0->in + (size_t)(y0 + j) * r0->in_stride;
          for (int64_t q = qa; q < qb; q++) {
            const uint8_t *px = row + (size_t)(x0 + q) * ch;
            int32_t o[HT_PD_MAX_PLANES];
            if (S->cj->cmyk)
              ht_pd_cmyk(ht_fx_from_u8(px[0]), ht_fx_from_u8(px[1]), ht_fx_from_u8(px[2]), S->cj->black, o);
            for (int p = 0; p < P; p++)
              t->in[p][c + q][j] = S->cj->cmyk ? o[p] : ht_fx_from_u8(px[p]);
          }
        }
      }
    return;
  }
  for (int j = 0; j < S->G; j++) {
    const int64_t c0 = i0 - 2 * j, xa = c0 > 0 ? c0 : 0, xb = c0 + K < w ? c0 + K : w;
    const int64_t a = j < g && xb > xa ? xa - c0 : K, b = j < g && xb > xa ? xb - c0 : K;
    for (int p = 0; p < P; p++) { /* outside the image */
      memset(t->rows[p][j], 0, (size_t)a * sizeof(int32_t));
      memset(t->rows[p][j] + b, 0, (size_t)(K - b) * sizeof(int32_t));
    }
    if (a == K)
      continue;
    int32_t *dst[HT_PD_MAX_PLANES];
    for (int p = 0; p < P; p++)
      dst[p] = t->rows[p][j] + a;
    ht_color_load(S->cj, y0 + j, xa, b - a, dst, t->tmp);
  }
  for (int p = 0; p < P; p++)
    for (int j = 0; j < S->G; j += 8)
      for (int i = 0; i < K; i += 8)
        ht_transpose8(&t->rows[p][j][i], K, &t->in[p][i][j], GMAX);
}

/* The tile of rows 8 kv .. 8 kv + 7 at the block's iterations c .. c + 7,
 * every pixel inside the image, to 8-bit output of P channels: turned
 * into rows, each plane's level indices through its table (16 levels at
 * most: one shuffle), shuffled into their channels of 4 pixels a 128-bit
 * half, and stored as the row's 8 pixels (24 or 32 bytes, no more). */
AI AVX2 void tile_out(const int P, const ht_pdd *S, pdd_tile *t, int64_t y0, int64_t i0, int kv, int c,
                      const __m256i *lut, const __m256i *mk)
{
  const ht_rows *r0 = &S->cj->rows[0];
  __m256i o[HT_PD_MAX_PLANES][8];
  for (int p = 0; p < P; p++) {
    __m256i v[8];
    for (int q = 0; q < 8; q++)
      v[q] = _mm256_load_si256((const __m256i *)(const void *)&t->in[p][c + q][8 * kv]);
    ht_transpose8r(v, o[p]);
  }
  const __m256i pack = _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 7, 7);
  for (int l = 0; l < 8; l++) {
    const int j = 8 * kv + l;
    uint8_t *d = r0->out + (size_t)(y0 + j) * r0->out_stride + (size_t)(i0 + c - 2 * j) * (size_t)P;
    __m256i x = _mm256_shuffle_epi8(_mm256_shuffle_epi8(lut[0], o[0][l]), mk[0]);
    for (int p = 1; p < P; p++)
      x = _mm256_or_si256(x, _mm256_shuffle_epi8(_mm256_shuffle_epi8(lut[p], o[p][l]), mk[p]));
    if (P == 4) {
      _mm256_storeu_si256((__m256i *)(void *)d, x);
    } else {
      x = _mm256_permutevar8x32_epi32(x, pack);
      _mm_storeu_si128((__m128i *)(void *)d, _mm256_castsi256_si128(x));
      _mm_storel_epi64((__m128i *)(void *)(d + 16), _mm256_extracti128_si256(x, 1));
    }
  }
}

/* The block's level indices (n iterations) to the rows: 8-bit output of
 * P channels and 16 levels at most a tile at a time (tile_out) where the
 * tile lies inside the image, pixel by pixel elsewhere; other 8-bit
 * output straight to its bytes; other formats through out[], whole bytes
 * of 1-bit output a call (up to 7 columns wait), or the rest of the row. */
static __attribute__((noinline)) AVX2 void store_block(const ht_pdd *S, pdd_tile *t, int64_t y0, int g, int64_t i0, int n)
{
  const int P = S->P;
  const int64_t w = S->w;
  const ht_rows *r0 = &S->cj->rows[0];
  if (S->lut16) {
    __m256i lut[HT_PD_MAX_PLANES], mk[HT_PD_MAX_PLANES];
    for (int p = 0; p < P; p++) {
      lut[p] = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)S->out_lut[p]));
      mk[p] = _mm256_loadu_si256((const __m256i *)(const void *)S->out_mask[p]);
    }
    for (int kv = 0; kv < S->NV; kv++)
      for (int c = 0; c < n; c += 8) {
        const int64_t xlo = i0 + c - 2 * (8 * kv + 7), xhi = i0 + c - 16 * kv; /* rows 8 kv + 7 and 8 kv */
        if (8 * kv + 7 < g && c + 8 <= n && xlo >= 0 && xhi + 8 <= w) {
          if (P == 3)
            tile_out(3, S, t, y0, i0, kv, c, lut, mk);
          else
            tile_out(4, S, t, y0, i0, kv, c, lut, mk);
          continue;
        }
        for (int j = 8 * kv; j < 8 * kv + 8 && j < g; j++) {
          uint8_t *row = r0->out + (size_t)(y0 + j) * r0->out_stride;
          for (int ii = c; ii < c + 8 && ii < n; ii++) {
            const int64_t x = i0 + ii - 2 * j;
            if (x >= 0 && x < w)
              for (int p = 0; p < P; p++)
                row[(size_t)x * (size_t)P + (size_t)p] = S->out_lut[p][t->in[p][ii][j]];
          }
        }
      }
    return;
  }
  for (int p = 0; p < P; p++)
    for (int j = 0; j < g; j += 8)
      for (int i = 0; i < n; i += 8)
        ht_transpose8(&t->in[p][i][j], GMAX, &t->rows[p][j][i], K);
  for (int j = 0; j < g; j++) {
    const int64_t c0 = i0 - 2 * j, xa = c0 > 0 ? c0 : 0, xb = c0 + n < w ? c0 + n : w;
    if (xb <= xa)
      continue;
    const int64_t off = xa - c0;
    if (S->bytes_out) {
      const size_t ch = (size_t)r0->out_channels;
      uint8_t *dst = r0->out + (size_t)(y0 + j) * r0->out_stride + (size_t)xa * ch;
      const int32_t *l0 = t->rows[0][j] + off, *l1 = t->rows[1][j] + off, *l2 = t->rows[2][j] + off,
                    *l3 = t->rows[P - 1][j] + off;
      uint8_t u0[256], u1[256], u2[256], u3[256]; /* the bytes of each plane's levels */
      for (int q = 0; q < 256; q++) {
        u0[q] = (uint8_t)S->cj->rows[0].lut[q];
        u1[q] = (uint8_t)S->cj->rows[1].lut[q];
        u2[q] = (uint8_t)S->cj->rows[2].lut[q];
        u3[q] = (uint8_t)S->cj->rows[P - 1].lut[q];
      }
      if (P == 3 && ch == 3)
        for (int64_t x = 0; x < xb - xa; x++, dst += 3) {
          dst[0] = u0[l0[x]];
          dst[1] = u1[l1[x]];
          dst[2] = u2[l2[x]];
        }
      else
        for (int64_t x = 0; x < xb - xa; x++, dst += ch) {
          dst[0] = u0[l0[x]];
          dst[1] = u1[l1[x]];
          dst[2] = u2[l2[x]];
          dst[P - 1] = u3[l3[x]];
        }
      continue;
    }
    for (int p = 0; p < P; p++) {
      uint8_t *o = t->out[j][p] + (xa - t->out0[j]);
      const int32_t *lv = t->rows[p][j] + off;
      for (int64_t x = 0; x < xb - xa; x++)
        o[x] = (uint8_t)lv[x];
    }
    const int64_t xe = xb == w ? w : xb & ~(int64_t)7;
    if (xe > t->out0[j]) {
      for (int p = 0; p < P; p++) {
        S->cj->rows[p].store(&S->cj->rows[p], y0 + j, t->out0[j], xe - t->out0[j], t->out[j][p]);
        memmove(t->out[j][p], t->out[j][p] + (xe - t->out0[j]), (size_t)(xb - xe));
      }
      t->out0[j] = xe;
    }
  }
}

/* Until band b has published `need` columns; false on cancel. */
static bool wait_band(const ht_pdd *S, int64_t b, int64_t need)
{
  return ht_pd_wait(S->job, &S->prog[b % S->ring].v, ((uint64_t)b << 32) | (uint64_t)need);
}

static bool run_band(ht_pdd *S, int me, int64_t b)
{
  const int P = S->P, G = S->G;
  const int64_t w = S->w, y0 = b * G, N = w + 2 * (int64_t)(G - 1);
  const int g = (int)(S->h - y0 < G ? S->h - y0 : G);
  pdd_tile *t = S->tiles + me;
  const int32_t *above = b > 0 ? set_of(S, b - 1) : S->top;
  int32_t *next = set_of(S, b);
  const kernel_fn kedge = kernel_of(P, S->NV, S->binary, 1),
                  kin = kernel_of(P, S->NV, S->binary, S->fs ? 2 + S->same : 0);
  /* the interior: iterations whose lanes all lie inside the image, none
   * in its last column (row j at i - 2j: i in [2 (G - 1), w - 1)) */
  const int64_t ia = y0 + G <= S->h ? 2 * (int64_t)(G - 1) : N, ib = w - 1;
  _Alignas(32) pdd_regs R;
  memset(&R, 0, sizeof R);
  memset(t->out0, 0, sizeof t->out0);
  _Atomic uint64_t *mine = &S->prog[b % S->ring].v;
  int32_t q_up = 0, q_ul = 0;
  for (int k = 0; k < S->job->filter.ntaps; k++)
    if (S->job->filter.taps[k].dy == 1 && S->job->filter.taps[k].dx >= 0)
      *(S->job->filter.taps[k].dx ? &q_ul : &q_up) = S->job->filter.taps[k].q;
  for (int64_t i0 = 0; i0 < N; i0 += K) {
    const int n = (int)(N - i0 < K ? N - i0 : K);
    load_block(S, t, y0, g, i0);
    for (int a = 0; a < n; a += KP) {
      const int e = a + KP < n ? a + KP : n;
      if (b > 0) {
        const int64_t need = i0 + e + 1 < w ? i0 + e + 1 : w; /* lane 0 reads column i + 1 */
        if (!wait_band(S, b - 1, need))
          return false;
      }
      if (i0 + a == 0) /* column 0 above: row 0's terms from above (column 0) and above-left (column 1) */
        for (int p = 0; p < P; p++) {
          R.acc1[p][0] = ht_pd_term(above[(size_t)p * S->ss], q_up);
          R.acc2[p][0] = ht_pd_term(above[(size_t)p * S->ss], q_ul);
        }
      const int64_t sa = ia - i0 > a ? ia - i0 : a, sb = ib - i0 < e ? ib - i0 : e; /* this chunk's interior */
      if (sa < sb) {
        if (sa > a)
          kedge(S, t, &R, above, next, y0, i0, a, (int)sa);
        kin(S, t, &R, above, next, y0, i0, (int)sa, (int)sb);
        if (sb < e)
          kedge(S, t, &R, above, next, y0, i0, (int)sb, e);
      } else {
        kedge(S, t, &R, above, next, y0, i0, a, e);
      }
      int64_t done = i0 + e - 2 * (int64_t)(G - 1);
      done = done < 0 ? 0 : done > w ? w : done;
      atomic_store_explicit(mine, ((uint64_t)b << 32) | (uint64_t)done, memory_order_release);
    }
    store_block(S, t, y0, g, i0, n);
  }
  for (int k = 0; k < 8; k++)
    if (R.big[k] >= BIG || R.big[k] < 0)
      atomic_store(&S->big, 1);
  return true;
}

/* Thread me's bands: me, me + T, ... */
void ht_pd_diagonal_work(ht_pdd *S, int me, int T)
{
  for (int64_t b = me; b < S->nb; b += T) {
    if (ht_job_cancelled(S->job) || !run_band(S, me, b)) {
      atomic_store(&S->job->cancelled, 1); /* the others stop waiting */
      return;
    }
    /* only the calling thread reports progress (and may cancel); band b
     * done means every band above it is done */
    if (me == 0 && !ht_job_tick(S->job, b * S->G + S->G < S->h ? b * S->G + S->G : S->h, S->h))
      return;
  }
}

ht_pdd *ht_pd_diagonal_new(ht_job *job, int T)
{
  const ht_color_job *cj = job->color;
  const ht_filter *f = &job->filter;
  const int P = cj->planes;
  if (job->scan != HT_SCAN_RASTER || cj->amount != 0 || (P != 3 && P != 4) || f->reach_left > 1 ||
      f->reach_right > 1 || f->reach_down > 1 || cj->forward[P - 1] != 0 || cj->backward[0] != 0)
    return NULL;
  int32_t box[2][3] = { { 0, 0, 0 }, { 0, 0, 0 } }; /* [dy][1 + dx] */
  for (int k = 0; k < f->ntaps; k++) {
    if (f->taps[k].dy == 0 && f->taps[k].dx != 1)
      return NULL;
    box[f->taps[k].dy][1 + f->taps[k].dx] = f->taps[k].q;
  }
  if (getenv("HT_PD_NO_DIAGONAL")) /* tests: the row kernel on any job */
    return NULL;
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2"))
    return NULL;
  ht_pdd *S = ht_alloc(job, 1, sizeof *S);
  if (!S)
    return NULL;
  S->job = job;
  S->cj = cj;
  S->P = P;
  S->w = cj->rows[0].width;
  S->h = cj->rows[0].height;
  /* the tallest band whose chain of T bands (each about 2 G + 2 KP
   * columns behind the one above) fits twice in the width */
  S->NV = 4;
  while (S->NV > 1 && (int64_t)T * (2 * 8 * S->NV + 2 * KP) * 2 > S->w)
    S->NV /= 2;
  S->G = 8 * S->NV;
  S->nb = (S->h + S->G - 1) / S->G;
  S->T = T;
  S->ring = T + 1;
  S->fs = box[0][2] == 7 * 256 && box[1][0] == 3 * 256 && box[1][1] == 5 * 256 && box[1][2] == 256;
  S->same = true;
  for (int p = 1; p + 1 < P; p++)
    S->same = S->same && cj->forward[p] == cj->backward[p];
  S->binary = true;
  for (int p = 0; p < P; p++) {
    S->binary = S->binary && cj->levels[p] == 2;
    for (int q = 0; q < cj->levels[p] && q < 256; q++)
      S->lvtab[p][q] = cj->levels[p] == 2 ? (q ? HT_FX_ONE : 0) : ht_fx_level(q, cj->levels[p]);
  }
  S->bytes_in = S->bytes_out = true;
  for (int p = 0; p < P; p++) {
    const ht_rows *r = &cj->rows[p];
    /* cmyk: rows 0..2 read R, G, B, separated on the way in (row 3 reads nothing) */
    S->bytes_in = S->bytes_in && !r->linear && (p == 3 && cj->cmyk ? true : r->in_format == HT_FORMAT_U8 && r->in_channel == p &&
                                  r->in == cj->rows[0].in && r->in_stride == cj->rows[0].in_stride &&
                                  r->in_channels == cj->rows[0].in_channels);
    S->bytes_out = S->bytes_out && r->out_format == HT_FORMAT_U8 && r->out_channel == p &&
                   r->out == cj->rows[0].out && r->out_stride == cj->rows[0].out_stride &&
                   r->out_channels == cj->rows[0].out_channels;
  }
  bytes_in_masks(cj->rows[0].in_channels, S->in_mask);
  S->lut16 = S->bytes_out && cj->rows[0].out_channels == P;
  for (int p = 0; p < P; p++) {
    S->lut16 = S->lut16 && cj->levels[p] <= 16;
    for (int q = 0; q < 16; q++)
      S->out_lut[p][q] = (uint8_t)cj->rows[p].lut[q];
    for (int b = 0; b < 32; b++) { /* byte P k + p of a half from byte 4 k (int32 k) */
      const int k = (b & 15) / P;
      S->out_mask[p][b] = (b & 15) < 4 * P && (b & 15) % P == p ? (uint8_t)(4 * k) : 0x80;
    }
  }
  S->ss = (size_t)S->w + SPAD;
  S->sets = ht_alloc(job, (size_t)S->ring * (size_t)P, S->ss * sizeof *S->sets);
  S->top = ht_alloc(job, (size_t)P, S->ss * sizeof *S->top);
  S->prog_mem = ht_alloc(job, (size_t)S->ring + 1, sizeof *S->prog);
  S->tiles_mem = ht_alloc(job, (size_t)T + 1, sizeof *S->tiles);
  if (!S->sets || !S->top || !S->prog_mem || !S->tiles_mem) {
    ht_pd_diagonal_free(S);
    return NULL;
  }
  S->prog = (pdd_progress *)(((uintptr_t)S->prog_mem + 63) & ~(uintptr_t)63);
  S->tiles = (pdd_tile *)(((uintptr_t)S->tiles_mem + 63) & ~(uintptr_t)63);
  for (int r = 0; r < S->ring; r++)
    atomic_init(&S->prog[r].v, 0);
  return S;
}

bool ht_pd_diagonal_overflowed(const ht_pdd *S) { return atomic_load(&((ht_pdd *)S)->big) != 0; }

void ht_pd_diagonal_free(ht_pdd *S)
{
  if (!S)
    return;
  free(S->sets);
  free(S->top);
  free(S->prog_mem);
  free(S->tiles_mem);
  free(S);
}

#else /* no AVX2 kernel on this compiler or CPU family: pd_threads.c's rows */

ht_pdd *ht_pd_diagonal_new(ht_job *job, int T)
{
  (void)job, (void)T;
  return NULL;
}
void ht_pd_diagonal_work(ht_pdd *S, int me, int T) { (void)S, (void)me, (void)T; }
bool ht_pd_diagonal_overflowed(const ht_pdd *S) { (void)S; return false; }
void ht_pd_diagonal_free(ht_pdd *S) { (void)S; }

#endif

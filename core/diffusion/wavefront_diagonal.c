/* The wavefront's diagonal kernel (docs/algorithms.md, "The diagonal
 * kernel"). For filters whose taps lie within one column left or right
 * and one row down (Floyd-Steinberg, Sierra Lite, and custom filters of
 * that shape), binary output, on CPUs with AVX2: the k-delay scan of
 * Sec. III itself, with k = 2 and one SIMD lane per row. In iteration i,
 * row j of a band of g rows (g a multiple of 8, at most DG) works on
 * column i - 2j; row j - 1 finished column i - 2j + 1 one iteration
 * before, so the g pixels of an iteration are independent and go as
 * g / 8 AVX2 vectors of 8 int32 lanes. A pixel's terms (collection
 * form, each one ht_fx_term) come from its left neighbour (the same lane,
 * one iteration before), from above-right (that vector moved up one
 * lane: lane 0 takes the last lane of the vector before, or the band
 * above's last row from memory) and from above and above-left (the moved
 * vectors of one and two iterations before).
 *
 * The band spans 2 (g - 1) columns, where the parallelogram's spans
 * (g + 1) * C: the next band can start about 2g + DMIN columns after the
 * band above, so the chain of bands takes a far smaller part of a row,
 * bands can be taller (32 rows), and a band reads the band above once
 * per g rows; one thread is also faster (BENCHMARKS.md).
 * A band runs in blocks of up to DK iterations, each of which starts
 * only when the band above has done every column it reads (so it never
 * waits inside), and the band's state between blocks is a dband: bands
 * are not tied to threads (wavefront_diagonal_sched.c).
 * Input and output go through the same short buffers a block at a time:
 * row j's input for the block is loaded into in[j], turned into one
 * vector of lanes per iteration by 8 x 8 transposes, and the
 * per-iteration threshold masks are turned back into rows the same way. */
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "wavefront_sched.h"

#if WF_AVX2

#define DAVX2 __attribute__((target("avx2")))

#include "../simd.h"

#define DTERM(e, q) _mm256_srai_epi32(_mm256_add_epi32(_mm256_mullo_epi32(e, q), half_q), HT_Q_BITS)

/* The next n iterations of band S (n from dspan), of g rows in NV =
 * ceil(g / 8) vectors (rows past g, in the image's last band only, run on
 * zeros and are not stored), in thread buffers d. The band above must
 * have done the columns the block reads. True when that was the
 * band's last block: then S may be taken by a new band at once.
 * The band's set gets the errors of its last vector's last lane, which
 * the next band reads; with TAIL, in the image's last band where rows
 * past g run, those of row g - 1 instead, for carried rows (job.h). */
HT_AI DAVX2 bool diag_block(const int NV, const bool TAIL, wf *W, dband *S, dtile *d, bool resume, const int n)
{
  const int64_t b = S->b, w = W->w, y0 = S->y0, i0 = S->i0, N = S->n;
  const int g = S->g, skew = 2 * (8 * NV - 1);
  int32_t *const next = band_set(W, b);
  const int32_t *const above = b > 0 ? band_set(W, b - 1) : W->top;
  const ht_rows *const rows = W->rows;
  const uint8_t *const gray =
      rows->in_format == HT_FORMAT_U8 && rows->in_channels == 1 && rows->in_channel == 0 && !rows->linear ? rows->in
                                                                                                         : NULL;
  wf_progress *const mine = &W->prog[b % W->ring];
  const __m256i half_q = _mm256_set1_epi32(HT_Q_HALF), q_left = _mm256_set1_epi32(W->box.q[0][HT_FILTER_MAX_LEFT + 1]),
                q_ur = _mm256_set1_epi32(W->box.q[1][HT_FILTER_MAX_LEFT - 1]),
                q_up = _mm256_set1_epi32(W->box.q[1][HT_FILTER_MAX_LEFT]),
                q_ul = _mm256_set1_epi32(W->box.q[1][HT_FILTER_MAX_LEFT + 1]), mid = _mm256_set1_epi32(HT_FX_ONE / 2),
                one = _mm256_set1_epi32(HT_FX_ONE), up = _mm256_setr_epi32(7, 0, 1, 2, 3, 4, 5, 6),
                lanes = _mm256_setr_epi32(0, -2, -4, -6, -8, -10, -12, -14), wv = _mm256_set1_epi32((int)w),
                zero = _mm256_setzero_si256(), last = _mm256_set1_epi32((g - 1) % 8);
  /* e: the errors of the iteration before (the left neighbours). The
   * terms from above and above-left, which come from the moved vector of
   * one and two iterations before, are added to the coming iterations'
   * slots of s as soon as the moved vector is known (so only e stays in
   * registers); c1 and c2 carry those for the first two iterations of
   * the next block. At iteration -1, lane 0 of the moved vector is
   * column 0 of the row above. */
  __m256i e[DG / 8], c1[DG / 8], c2[DG / 8];
  if (i0 == 0) {
    for (int k = 0; k < NV; k++)
      e[k] = c1[k] = c2[k] = zero;
    const __m256i a = _mm256_setr_epi32(above[0], 0, 0, 0, 0, 0, 0, 0);
    c1[0] = DTERM(a, q_up);
    c2[0] = DTERM(a, q_ul);
    for (int j = 0; j < g; j++)
      S->out0[j] = 0;
  } else {
    for (int k = 0; k < NV; k++) {
      e[k] = _mm256_load_si256((const __m256i *)(const void *)&S->e[8 * k]);
      c1[k] = _mm256_load_si256((const __m256i *)(const void *)&S->c1[8 * k]);
      c2[k] = _mm256_load_si256((const __m256i *)(const void *)&S->c2[8 * k]);
    }
    if (resume) /* the thread ran another band last */
      for (int j = 0; j < g; j++)
        memcpy(d->out[j], S->pend[j], 8);
  }
  const int n8 = (n + 7) & ~7; /* n is a multiple of 8 but in the last block */
  /* tests: iteration i reads column i + 1 of the band above */
  if (WF_TEST && b > 0 &&
      atomic_load(&W->prog[(b - 1) % W->ring].v) <
          (((uint64_t)(b - 1) << 32) | (uint64_t)(i0 + n + 1 < w ? i0 + n + 1 : w)))
    WF_TEST_COUNT(overruns);
  /* input: row j's columns i0 - 2j .. i0 - 2j + n8 - 1, zeros outside.
   * An 8-bit gray image (the CLI's usual input), in a block that lies
   * inside it, is read here as bytes (ht_fx_from_u8: v * 257); anything
   * else goes through rows->load. */
  if (gray && i0 - skew >= 0 && i0 + n8 <= w) {
    for (int k = 0; k < NV; k++)
      for (int t = 0; t < n8; t += 8) {
        __m256i r[8], o[8];
        for (int l = 0; l < 8; l++) {
          const int j = 8 * k + l;
          if (j >= g) {
            r[l] = zero;
            continue;
          }
          const uint8_t *p = gray + (size_t)(y0 + j) * rows->in_stride + (size_t)(i0 + t - 2 * j);
          const __m256i v = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)p));
          r[l] = _mm256_add_epi32(_mm256_slli_epi32(v, 8), v);
        }
        ht_transpose8r(r, o);
        for (int c = 0; c < 8; c++)
          _mm256_store_si256((__m256i *)(void *)&d->s[t + c][8 * k], o[c]);
      }
  } else {
    for (int j = 0; j < 8 * NV; j++) {
      const int64_t x0 = i0 - 2 * j, a = x0 > 0 ? x0 : 0, z = x0 + n8 < w ? x0 + n8 : w;
      if (j >= g || a >= z) {
        memset(d->in[j], 0, (size_t)n8 * sizeof(int32_t));
        continue;
      }
      memset(d->in[j], 0, (size_t)(a - x0) * sizeof(int32_t));
      rows->load(rows, y0 + j, a, z - a, d->in[j] + (a - x0));
      memset(d->in[j] + (z - x0), 0, (size_t)(x0 + n8 - z) * sizeof(int32_t));
    }
    for (int k = 0; k < NV; k++)
      for (int t = 0; t < n8; t += 8)
        ht_transpose8(&d->in[8 * k][t], DK, &d->s[t][8 * k], DG);
  }
  for (int k = 0; k < NV; k++) {
    _mm256_store_si256((__m256i *)(void *)&d->s[n8][8 * k], zero);
    _mm256_store_si256((__m256i *)(void *)&d->s[n8 + 1][8 * k], zero);
    __m256i *s0 = (__m256i *)(void *)&d->s[0][8 * k], *s1 = (__m256i *)(void *)&d->s[1][8 * k];
    _mm256_store_si256(s0, _mm256_add_epi32(_mm256_load_si256(s0), c1[k]));
    _mm256_store_si256(s1, _mm256_add_epi32(_mm256_load_si256(s1), c2[k]));
  }
  for (int t = 0; t < n; t++) {
    const int64_t i = i0 + t;
    /* the last row's columns < i - skew are done */
    if ((i & (DPUB - 1)) == 0 && i > skew)
      publish(mine, ((uint64_t)b << 32) | (uint64_t)(i - skew < w ? i - skew : w));
    __m256i carry = _mm256_set1_epi32(i + 1 < w ? above[i + 1] : 0);
    const int edge = i < skew || i >= w;
#pragma GCC unroll 8
    for (int k = 0; k < NV; k++) {
      const __m256i m = _mm256_permutevar8x32_epi32(e[k], up);
      const __m256i a = _mm256_blend_epi32(m, carry, 1); /* the moved vector: above-right */
      carry = m;
      __m256i *const st = (__m256i *)(void *)&d->s[t][8 * k], *const s1 = st + DG / 8, *const s2 = st + DG / 4;
      __m256i v = _mm256_load_si256(st);
      v = _mm256_add_epi32(v, _mm256_add_epi32(DTERM(e[k], q_left), DTERM(a, q_ur)));
      /* a is above (above-left) of this lane's pixel one (two) iterations on */
      _mm256_store_si256(s1, _mm256_add_epi32(_mm256_load_si256(s1), DTERM(a, q_up)));
      _mm256_store_si256(s2, _mm256_add_epi32(_mm256_load_si256(s2), DTERM(a, q_ul)));
      const __m256i on = _mm256_cmpgt_epi32(v, mid); /* ht_fx_binary */
      __m256i err = _mm256_sub_epi32(v, _mm256_and_si256(on, one));
      if (edge) { /* lanes outside the image: their error is dropped */
        const __m256i x = _mm256_add_epi32(lanes, _mm256_set1_epi32((int)(i - 16 * k)));
        err = _mm256_and_si256(err, _mm256_andnot_si256(_mm256_cmpgt_epi32(zero, x), _mm256_cmpgt_epi32(wv, x)));
      }
      _mm256_store_si256(st, on);
      e[k] = err;
    }
    if (TAIL) { /* row g - 1's column */
      const int64_t xl = i - 2 * (g - 1);
      if (xl >= 0 && xl < w)
        next[xl] = _mm256_cvtsi256_si32(_mm256_permutevar8x32_epi32(e[NV - 1], last));
    } else {
      const int64_t xl = i - skew; /* the last row's column */
      if (xl >= 0 && xl < w)
        next[xl] = _mm256_extract_epi32(e[NV - 1], 7);
    }
  }
  for (int k = 0; k < NV; k++) {
    _mm256_store_si256((__m256i *)(void *)&S->e[8 * k], e[k]);
    _mm256_store_si256((__m256i *)(void *)&S->c1[8 * k],
                       _mm256_load_si256((const __m256i *)(const void *)&d->s[n][8 * k]));
    _mm256_store_si256((__m256i *)(void *)&S->c2[8 * k],
                       _mm256_load_si256((const __m256i *)(const void *)&d->s[n + 1][8 * k]));
  }
  /* output: the masks back into rows, then each row's columns in order
   * (1-bit output takes whole bytes: up to 7 columns wait) */
  for (int k = 0; k < NV; k++)
    for (int t = 0; t < n8; t += 8)
      ht_transpose8(&d->s[t][8 * k], DG, &d->in[8 * k][t], DK);
  for (int j = 0; j < g; j++) {
    const int64_t x0 = i0 - 2 * j, a = x0 > 0 ? x0 : 0, z = x0 + n < w ? x0 + n : w;
    if (a < z) {
      uint8_t *o = d->out[j] + (a - S->out0[j]);
      const int32_t *src = d->in[j] + (a - x0);
      for (int64_t k = 0; k < z - a; k++)
        o[k] = (uint8_t)(src[k] & 1);
      const int64_t xe = z == w ? w : z & ~(int64_t)7;
      if (xe > S->out0[j] && (z == w || z - S->out0[j] >= DK)) {
        rows->store(rows, y0 + j, S->out0[j], xe - S->out0[j], d->out[j]);
        memmove(d->out[j], d->out[j] + (xe - S->out0[j]), (size_t)(z - xe));
        S->out0[j] = xe;
      }
    }
  }
  S->i0 = i0 + n;
  if (i0 + n < N) {
    if (i0 + n > skew)
      publish(mine, ((uint64_t)b << 32) | (uint64_t)(i0 + n - skew < w ? i0 + n - skew : w));
    return false;
  }
  publish(mine, ((uint64_t)b << 32) | (uint64_t)w);
  return true;
}

/* Band S's block in the instance for its vectors, with TAIL or not. */
#if DG > 32
#define DIAG_CASES(TAIL)                                                                        \
  DIAG_CASE(1, TAIL) DIAG_CASE(2, TAIL) DIAG_CASE(3, TAIL) DIAG_CASE(4, TAIL) DIAG_CASE(5, TAIL) \
  DIAG_CASE(6, TAIL) DIAG_CASE(7, TAIL) DIAG_CASE(8, TAIL)
#elif DG > 16
#define DIAG_CASES(TAIL) DIAG_CASE(1, TAIL) DIAG_CASE(2, TAIL) DIAG_CASE(3, TAIL) DIAG_CASE(4, TAIL)
#else
#define DIAG_CASES(TAIL) DIAG_CASE(1, TAIL) DIAG_CASE(2, TAIL)
#endif
#define DIAG_CASE(NV, TAIL) case NV: return diag_block(NV, TAIL, W, S, d, resume, n);

/* The image's last band, where carried rows need its row g - 1 and g is
 * not a multiple of 8: apart, so that the usual instances' code stays as
 * it is. */
DAVX2 static __attribute__((noinline)) bool diag_block_tail(wf *W, dband *S, dtile *d, bool resume, int n)
{
  switch ((S->g + 7) / 8) {
    DIAG_CASES(true)
  default: return true;
  }
}

DAVX2 bool ht_wf_diagonal_block(wf *W, dband *S, dtile *d, bool resume, int n)
{
  if (S->g % 8 && W->job->carry_out)
    return diag_block_tail(W, S, d, resume, n);
  switch ((S->g + 7) / 8) {
    DIAG_CASES(false)
  default: return true;
  }
}
#endif

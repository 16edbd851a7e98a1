/* The wavefront's kernel for every filter and level count: a band of up
 * to G rows in parallelogram chunks (docs/algorithms.md, "The wavefront").
 *
 * Every row is cut into chunks of C columns. Chunk c of a band's row j
 * covers columns [c*C - L*j, (c+1)*C - L*j) (L = the filter's reach to
 * the lower left, k - 1): a parallelogram, so row j can do its chunk c
 * one step after row j - 1 did its chunk c. The whole chunk of the row
 * above is then done, which lets the part of a pixel's sum that comes
 * from the rows above be computed for a whole chunk at once.
 *
 *  - For each row and chunk, first the "upper" sum (the input plus the
 *    terms of every tap with dy >= 1) is computed for all C columns in a
 *    vectorisable loop (SIMD; AVX2 when the CPU has it), then the chain
 *    adds the dy == 0 terms pixel by pixel.
 *  - Inside a band the rows are processed interleaved: in step s row j
 *    does chunk s - j. The in-row dependency chains (each pixel needs the
 *    error of its left neighbour) of different rows are independent;
 *    groups of ILP = 8 of them run in one loop, pixel by pixel, so the
 *    core overlaps them. This is what makes one thread about twice as
 *    fast as a single chain (EC-RC).
 *  - Speed-up with threads is bounded by the chain of bands: a band
 *    starts about (rows + 1) * C columns after the band above, so with T
 *    threads and W columns it pays while T * (rows + 1) * C is below W.
 *    Hence C = 32 (a chunk is still four AVX2 vectors) and bands of at
 *    most 16 rows (fewer rows read from another core's cache), or 8 or 4
 *    when the image is too narrow for that many threads.
 *  - Memory: inside a band, error rows are short buffers that slide with
 *    the chunks (ER below), input is loaded and output stored IOB
 *    columns at a time, so what a thread touches stays in its core's
 *    caches whatever the width. Only the band's last D rows, which the
 *    next band reads, are whole rows, in the ring of sets (wavefront.c).
 * Every term is ht_fx_term of core/shared/fixed.h, summed as integers, so the
 * output equals ed.c bit for bit whatever the order. */
#include <stdlib.h>
#include <string.h>

#include "footprint.h"
#include "wavefront_sched.h"

#define ILP 8 /* chains interleaved in one loop (registers allow 8) */

/* The chunk a row works on, in a fixed layout: with a compile-time
 * stride between the G tiles, the interleaved loop addresses every row
 * from one base and one index register (with row buffers of run-time
 * stride the row offsets would not fit in registers). */
#define TH 8 /* halo: the previous chunk's last errors (>= HT_FILTER_MAX_RIGHT) */
struct tile {
  _Alignas(64) int32_t u[C]; /* upper sums of the chunk; whole cache lines
                              * per tile, so no two threads share one  */
  int32_t e[TH + C]; /* e[TH + i]: error of column i; e[TH - k]: halo    */
  uint8_t lv[C];     /* level indices                                    */
  int32_t in[IOB];   /* input values of columns in0 .. in1 - 1           */
  uint8_t out[IOB + C]; /* level indices of columns out0 .. (not yet stored) */
  int64_t in0, in1, out0;
};

/* Error rows inside a band live in short buffers of ER values that slide
 * along the row: when a chunk would not fit, the last KEEP columns move
 * to the front. KEEP covers every column a later reader still needs: row
 * j + dy reads row j from (dy - 1) * C + dy * L + R columns left of row
 * j's newest chunk. Only the band's last D rows, which the next band
 * (another thread, maybe far behind) reads, are whole rows. So the
 * memory a band touches moves along with its chunks and stays in the
 * core's caches, whatever the width. */
#define ER 1024
#define KEEP (4 * C)
_Static_assert(KEEP >= (HT_FILTER_MAX_DOWN - 1) * C + HT_FILTER_MAX_DOWN * HT_FILTER_MAX_LEFT + HT_FILTER_MAX_RIGHT &&
                   KEEP >= TH,
               "KEEP must cover what later rows read");
_Static_assert(ER >= KEEP + 2 * C + PAD, "a sliding row must hold KEEP columns and a chunk");

bool ht_wf_parallelogram_alloc(wf *W, int T)
{
  W->slide = ht_alloc(W->job, (size_t)T * G, (PAD + ER) * sizeof *W->slide);
  /* calloc aligns to 16 bytes only: one tile more, rounded up */
  W->tiles_mem = ht_alloc(W->job, (size_t)T * G + 1, sizeof *W->tiles);
  W->tiles = W->tiles_mem ? (tile *)(((uintptr_t)W->tiles_mem + 63) & ~(uintptr_t)63) : NULL;
  return W->slide && W->tiles;
}

/* The upper sum of n columns of one row into `u`: the input plus the
 * terms of the taps with dy >= 1 (sources x - R .. x + L of the rows
 * above). `in` and s1..s3 point at the chunk's first column. Every column
 * is independent: this loop vectorises. */
HT_AI void upper(const int L, const int R, const int D, const wf *W, int32_t *restrict u,
                 const int32_t *restrict in, const int32_t *restrict s1, const int32_t *restrict s2,
                 const int32_t *restrict s3, int64_t n)
{
  int32_t q[HT_FILTER_MAX_DOWN][BOXW];
#pragma GCC unroll 4
  for (int dy = 1; dy <= D; dy++)
#pragma GCC unroll 16
    for (int k = 0; k <= L + R; k++)
      q[dy - 1][k] = W->box.q[dy][HT_FILTER_MAX_LEFT + R - k]; /* source x - R + k: dx = R - k */
  for (int64_t x = 0; x < n; x++) {
    int32_t v = in[x];
#pragma GCC unroll 16
    for (int k = 0; k <= L + R; k++) {
      v += ht_fx_term(s1[x - R + k], q[0][k]);
      if (D >= 2)
        v += ht_fx_term(s2[x - R + k], q[D >= 2 ? 1 : 0][k]);
      if (D >= 3)
        v += ht_fx_term(s3[x - R + k], q[D >= 3 ? 2 : 0][k]);
    }
    u[x] = v;
  }
}

/* The in-row chains of N rows (tiles t[0..N-1]) at once, n columns
 * each: each pixel adds the terms of its left neighbours (dy == 0) to
 * its upper sum and rounds. Rows are independent, so their chains
 * overlap in the pipeline. */
HT_AI void chains(const int N, const int R, const bool binary, const wf *W, tile *restrict t, int64_t n)
{
  int32_t q0[HT_FILTER_MAX_RIGHT + 1];
  int32_t prev[ILP];
#pragma GCC unroll 8
  for (int k = 1; k <= R; k++)
    q0[k] = W->box.q[0][HT_FILTER_MAX_LEFT + k];
#pragma GCC unroll 8
  for (int r = 0; r < N; r++)
    prev[r] = t[r].e[TH - 1];
  for (int64_t i = 0; i < n; i++) {
#pragma GCC unroll 8
    for (int r = 0; r < N; r++) {
      int32_t v = t[r].u[i] + ht_fx_term(prev[r], q0[1]);
#pragma GCC unroll 4
      for (int k = 2; k <= R; k++)
        v += ht_fx_term(t[r].e[TH + i - k], q0[k]); /* stored k steps ago: off the chain */
      int32_t err = ht_level_round(binary, &W->lt, v, &t[r].lv[i]);
      t[r].e[TH + i] = err;
      prev[r] = err;
    }
  }
}

/* n_rows consecutive rows, in as few groups of interleaved chains as
 * ILP allows, of sizes as even as can be: 10 rows run as 5 + 5, not
 * 8 + 2, since a group of 2 chains waits on its chains' latency. */
HT_AI void chains_n(const int R, const bool binary, const wf *W, int n_rows, tile *t, int64_t n)
{
  for (int k; n_rows > 0; n_rows -= k, t += k) {
    const int groups = (n_rows + ILP - 1) / ILP;
    k = (n_rows + groups - 1) / groups;
    switch (k) {
#define CASE(k) case k: chains(k, R, binary, W, t, n); break;
      CASE(1) CASE(2) CASE(3) CASE(4) CASE(5) CASE(6) CASE(7) CASE(8)
#undef CASE
    default: break;
    }
  }
}
_Static_assert(ILP == 8, "chains_n has one case per row count up to ILP");

/* Chunk c of row j (0-based in its band) covers image columns
 * [c*C - L*j, (c+1)*C - L*j), clipped to [0, w): each row's chunks sit L
 * columns left of the row above's (a parallelogram, as the blocks of the
 * paper's Sec. V), so when row j - 1 has finished its chunk c, every
 * column that row j's chunk c reads from it (up to x1 - 1 + L) is done,
 * and row j can follow one step behind (LAG = 1). */
static inline int64_t chunk_x0(int64_t c, int L, int j) { return c * C - (int64_t)L * j; }
/* first and last chunk of row j with any column in [0, w) */
static inline int64_t chunk_first(int L, int j) { return ((int64_t)L * j) / C; }
static inline int64_t chunk_last(int64_t w, int L, int j) { return (w + (int64_t)L * j + C - 1) / C - 1; }
/* steps of a band of g rows: its last row starts at step g - 1 */
static inline int64_t band_steps(int64_t w, int L, int g) { return g - 1 + chunk_last(w, L, g - 1) + 1; }

/* Band B, rows y0 .. y0 + g - 1, by worker `me`; false when the run was
 * cancelled. */
HT_AI bool run_band(const int L, const int R, const int D, const bool binary, wf *W, int me, const band *B)
{
  const int64_t b = B->b;
  const size_t S = W->S;
  const int64_t w = W->w;
  const int64_t y0 = B->y0;
  const int SH = HT_WF_SHIFT > 0 ? HT_WF_SHIFT : L; /* chunk shift per row, >= L */
  const int g = B->g;
  /* the band's last D rows are whole rows in set b mod (T + 1), where the
   * next band finds them; the others slide */
  int32_t *set = band_set(W, b);
  /* the rows above: the band above's set, or above band 0 the same
   * layout of carried rows or zeros */
  const int32_t *prev = b > 0 ? band_set(W, b - 1) : W->top;
  tile *T = W->tiles + (size_t)me * G;
  /* where row j's errors are: column x at er[j][x - base[j]] */
  int32_t *er[G];
  int64_t base[G];
  for (int j = 0; j < g; j++) {
    if (j >= g - D) {
      er[j] = set + (size_t)(j - (g - D)) * S;
    } else {
      er[j] = W->slide + ((size_t)me * G + (size_t)j) * (PAD + ER) + PAD;
      memset(er[j] - PAD, 0, PAD * sizeof(int32_t)); /* columns < 0 */
    }
    base[j] = 0; /* whole rows keep it */
  }
  const int32_t *above[HT_FILTER_MAX_DOWN + 1];
  for (int dy = 1; dy <= HT_FILTER_MAX_DOWN; dy++)
    above[dy] = dy > D ? NULL : prev + (size_t)(D - dy) * S;
  const int64_t steps = band_steps(w, SH, g);
  /* the band above and its last row */
  const int64_t prev_all = band_steps(w, SH, B->gprev);
  const int jp = B->gprev - 1;
  const int64_t last0 = chunk_last(w, SH, 0);
  wf_progress *mine = &W->prog[b % W->ring];
  int64_t cfirst[G], clast[G], xs0[G], xs1[G];
  for (int j = 0; j < g; j++) {
    cfirst[j] = chunk_first(SH, j);
    clast[j] = chunk_last(w, SH, j);
  }
  /* this thread's pace: time per row-chunk, without the waits */
  pace *const pc = &W->pace[me];
  int64_t t_mark = pc->t_mark, waited = pc->waited, units = pc->units;
  uint64_t seen = 0; /* the band above's progress, as last read */
  int jlo = 0, jhi = -1;
  for (int64_t s = 0; s < steps; s++) {
    if (b > 0 && s <= last0) {
      /* Row 0's chunk s reads the band above's last rows up to column
       * x1 - 1 + L; the last row (the most shifted, the latest) has that
       * column once it has finished chunk cp, at its step cp + jp. Later
       * rows of this band need no more than row 0 did. */
      const int64_t x1 = chunk_x0(s + 1, SH, 0) < w ? chunk_x0(s + 1, SH, 0) : w;
      const int64_t col = x1 - 1 + L < w - 1 ? x1 - 1 + L : w - 1;
      const int64_t cp = (col + 1 + (int64_t)SH * jp + C - 1) / C - 1;
      if (!wait_band(W, me, b - 1, (uint64_t)(cp + jp + 1), (uint64_t)prev_all, &seen, &waited))
        return false;
      /* The band above was written by another core, so every line row 0
       * reads from it is a coherence miss. Fetch the lines of a chunk it
       * will need two steps from now, once `seen` shows them finished
       * (never earlier: a line fetched before its last write is only
       * taken back by the writer). */
      const int64_t c_pre = s + 2, prev_chunk = (int64_t)(seen & 0xffffffffu) - jp - 1;
      if ((int64_t)(seen >> 32) == b - 1 && c_pre <= last0 &&
          chunk_x0(prev_chunk + 1, SH, jp) >= chunk_x0(c_pre + 1, SH, 0) + L)
        for (int dy = 1; dy <= D; dy++)
          for (int64_t x = c_pre * C; x < c_pre * C + C && x < w; x += 64 / (int64_t)sizeof(int32_t))
            __builtin_prefetch(above[dy] + x);
    }
    /* rows with a chunk in this step (c = s - j): jlo .. jhi, since
     * j + first[j] and j + last[j] grow with j; among them the run
     * [jf0, jf1] whose chunks are whole (C columns) shares the
     * interleaved loop, and a clipped chunk (a row's first or last) runs
     * alone */
    while (jhi + 1 < g && s - (jhi + 1) >= cfirst[jhi + 1])
      jhi++;
    while (s - jlo > clast[jlo])
      jlo++;
    int jf0 = g, jf1 = -1;
    for (int j = jlo; j <= jhi; j++) {
      const int64_t c = s - j, cx0 = chunk_x0(c, SH, j);
      const int64_t x0 = cx0 > 0 ? cx0 : 0, x1 = cx0 + C < w ? cx0 + C : w;
      xs0[j] = x0;
      xs1[j] = x1;
      tile *t = &T[j];
      if (c == cfirst[j])
        t->in0 = t->in1 = t->out0 = 0;
      if (x1 > t->in1) { /* load the next IOB columns */
        t->in0 = x0;
        t->in1 = x0 + IOB < w ? x0 + IOB : w;
        W->rows->load(W->rows, y0 + j, t->in0, t->in1 - t->in0, t->in);
      }
      const int32_t *sp[HT_FILTER_MAX_DOWN + 1] = { NULL, NULL, NULL, NULL };
      for (int dy = 1; dy <= D; dy++)
        sp[dy] = j >= dy ? er[j - dy] + (x0 - base[j - dy]) : above[dy - j] + x0;
      upper(L, R, D, W, t->u, t->in + (x0 - t->in0), sp[1], sp[2], sp[3], x1 - x0);
      /* the halo (zeros left of column 0) */
      memcpy(T[j].e, er[j] + (x0 - base[j]) - TH, TH * sizeof(int32_t));
      if (x1 - x0 == C) {
        jf0 = j < jf0 ? j : jf0;
        jf1 = j;
      }
    }
    for (int j = jlo; j <= jhi; j++)
      if (j < jf0 || j > jf1)
        chains(1, R, binary, W, T + j, xs1[j] - xs0[j]);
    if (jf0 <= jf1)
      chains_n(R, binary, W, jf1 - jf0 + 1, T + jf0, C);
    for (int j = jlo; j <= jhi; j++) {
      const int64_t x0 = xs0[j], x1 = xs1[j], n = x1 - x0;
      int32_t *const r = er[j];
      if (j < g - D && x1 + PAD - base[j] > ER) {
        /* slide: keep the last KEEP columns before this chunk */
        const int64_t nb = x0 - KEEP;
        memmove(r, r + (nb - base[j]), (size_t)(x0 - nb) * sizeof(int32_t));
        base[j] = nb;
      }
      const int64_t rb = base[j];
      if (n == C) /* the usual case, with a size the compiler inlines */
        memcpy(r + (x0 - rb), T[j].e + TH, C * sizeof(int32_t));
      else
        memcpy(r + (x0 - rb), T[j].e + TH, (size_t)n * sizeof(int32_t));
      if (x1 == w) /* columns right of the image read as zeros */
        memset(r + (w - rb), 0, PAD * sizeof(int32_t));
      /* output, IOB columns a call; 1-bit output takes whole bytes, so
       * up to 7 columns wait for the next call */
      tile *t = &T[j];
      if (n == C)
        memcpy(t->out + (x0 - t->out0), t->lv, C);
      else
        memcpy(t->out + (x0 - t->out0), t->lv, (size_t)n);
      if (x1 == w || x1 - t->out0 >= IOB) {
        const int64_t xe = x1 == w ? w : x1 & ~(int64_t)7;
        W->rows->store(W->rows, y0 + j, t->out0, xe - t->out0, t->out);
        for (int64_t i = 0; i < x1 - xe; i++) /* fewer than 8 */
          t->out[i] = t->out[xe - t->out0 + i];
        t->out0 = xe;
      }
    }
    /* publish every PUB steps: each store may have to take the line back
     * from a reader on another core */
    if ((s + 1) % PUB == 0 || s + 1 == steps)
      publish(mine, ((uint64_t)b << 32) | (uint64_t)(s + 1));
    units += jhi - jlo + 1;
    if ((s & 7) == 7)
      pace_sample(W, me, &t_mark, &waited, &units);
  }
  pc->t_mark = t_mark;
  pc->waited = waited;
  pc->units = units;
  return true;
}

/* Instances: one per footprint (footprint.h), binary and multi-level;
 * on x86 also compiled for AVX2, picked at run time when the CPU has it. */
#define INSTANCE_FOR(L, R, D, binary, suffix, attr) \
  attr static bool band_##L##R##D##suffix(wf *W, int me, const band *B) { return run_band(L, R, D, binary, W, me, B); }
#if WF_AVX2
#define AVX2_INSTANCE(L, R, D)                                              \
  INSTANCE_FOR(L, R, D, true, _b_avx2, __attribute__((target("avx2"))))     \
  INSTANCE_FOR(L, R, D, false, _m_avx2, __attribute__((target("avx2"))))
#define AVX2_FNS(L, R, D) { band_##L##R##D##_m_avx2, band_##L##R##D##_b_avx2 }
#else
#define AVX2_INSTANCE(L, R, D)
#define AVX2_FNS(L, R, D) { band_##L##R##D##_m, band_##L##R##D##_b }
#endif
#define INSTANCE(L, R, D)                    \
  INSTANCE_FOR(L, R, D, true, _b, )          \
  INSTANCE_FOR(L, R, D, false, _m, )         \
  AVX2_INSTANCE(L, R, D)
HT_FOOTPRINTS(INSTANCE)

static const band_fn instances[HT_FOOTPRINT_COUNT][2][2] = { /* [footprint][avx2][binary] */
#define ROW(L, R, D) { { band_##L##R##D##_m, band_##L##R##D##_b }, AVX2_FNS(L, R, D) },
  HT_FOOTPRINTS(ROW)
#undef ROW
};

band_fn ht_wf_parallelogram(const ht_filter *f, bool avx2, bool binary)
{
  return instances[ht_footprint_of(f).index][avx2][binary];
}

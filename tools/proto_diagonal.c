/* ht-proto-diagonal: a measured prototype for the CPU scaling work, not
 * part of the library (BENCHMARKS.md, eighth session, "A lead: a diagonal
 * kernel").
 *
 *   ht-proto-diagonal --check          bit-exactness on awkward shapes
 *   ht-proto-diagonal [W [H]]          exactness and speed on a W x H image
 *   ht-proto-diagonal --threads T W H  the same with bands on T threads
 *
 * Floyd-Steinberg, binary. Bands of 16 rows run along a
 * diagonal: in iteration i, row j of the band is at column i - 2j, and
 * one iteration updates two AVX2 vectors of 8 int32 lanes (rows 0-7 and
 * 8-15), one pixel of each row. A pixel's terms (collection form, each
 * one ht_fx_term of core/fixed.h) come from its left neighbour (the same
 * lane one iteration before), from above-right (that vector moved up one
 * lane) and from above and above-left (the moved vector of one and two
 * iterations before). Lane 0 of rows 0-7 takes the row above the band
 * from memory; lane 0 of rows 8-15 takes lane 7 of rows 0-7. A band of
 * g rows spans 2(g - 1) columns, where the wavefront's parallelogram
 * needs (g + 1) * 32: the point of the exercise. With threads, a band
 * follows the band above through a counter of the columns of its last
 * row that are done, read and published every 32 columns. Being a
 * prototype, a waiting thread only spins (with more threads than cores
 * it crawls), and every band keeps its last row until the end (memory
 * grows with the image).
 *
 * Every output is compared with ht_run (variant ed), and the speed is
 * printed beside the library's wavefront on as many threads. Exits 77
 * where the CPU lacks AVX2, 1 on any difference. */
#include "fixed.h"
#include "halftone.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define G 16                /* rows per band: two vectors of 8 lanes */
#define SKEW (2 * (G - 1))  /* columns between a band's first and last row */

static double now_s(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

#define AVX2 __attribute__((target("avx2")))
#define TERM(e, q) _mm256_srai_epi32(_mm256_add_epi32(_mm256_mullo_epi32(e, q), half_q), HT_Q_BITS)

/* One band: rows in[0 .. G-1] (rows past the image are zeros and not
 * stored). eprev[x + 1]: errors of the row above (0 at x = -1 and x >= W);
 * enext gets this band's last row the same way. S: (W + SKEW + 8) * G
 * bytes, M: W + SKEW + 40 masks. out gets 0/1 per pixel. */
AVX2 static void band(const uint8_t *in, size_t stride, int W, int rows, const int32_t *eprev, int32_t *enext,
                      uint8_t *S, uint16_t *M, uint8_t *out, size_t ostride, _Atomic int *above_done,
                      _Atomic int *my_done)
{
  const int N = W + SKEW;
  /* the input along the diagonal: S[i * G + j] = row j, column i - 2j */
  memset(S, 0, (size_t)(N + 8) * G);
  for (int j = 0; j < rows; j++)
    for (int x = 0; x < W; x++)
      S[(size_t)(x + 2 * j) * G + (size_t)j] = in[(size_t)j * stride + (size_t)x];
  const __m256i half_q = _mm256_set1_epi32(HT_Q_HALF), q_left = _mm256_set1_epi32(HT_Q(7, 16)),
                q_ur = _mm256_set1_epi32(HT_Q(3, 16)), q_up = _mm256_set1_epi32(HT_Q(5, 16)),
                q_ul = _mm256_set1_epi32(HT_Q(1, 16)), mid = _mm256_set1_epi32(HT_FX_ONE / 2),
                one = _mm256_set1_epi32(HT_FX_ONE), up = _mm256_setr_epi32(7, 0, 1, 2, 3, 4, 5, 6),
                col0 = _mm256_setr_epi32(0, -2, -4, -6, -8, -10, -12, -14),
                col1 = _mm256_setr_epi32(-16, -18, -20, -22, -24, -26, -28, -30), wv = _mm256_set1_epi32(W),
                zero = _mm256_setzero_si256();
  if (above_done) /* column 0 of the row above is read before the loop */
    while (atomic_load_explicit(above_done, memory_order_acquire) < (W < 34 ? W : 34))
      _mm_pause();
  /* errors of the previous iteration (left neighbours), and the moved
   * vectors of one and two iterations before; at iteration -1 lane 0
   * of the first already holds column 0 of the row above */
  __m256i e0 = zero, e1 = zero, a0p = _mm256_setr_epi32(eprev[1], 0, 0, 0, 0, 0, 0, 0), a0pp = zero, a1p = zero,
          a1pp = zero;
  for (int i = 0; i < N; i++) {
    if ((i & 31) == 0) {
      /* lane 0 reads column i + 1 of the row above in this iteration:
       * up to column i + 32 in this block of 32 */
      if (above_done) {
        const int need = i + 34 < W ? i + 34 : W;
        while (atomic_load_explicit(above_done, memory_order_acquire) < need)
          _mm_pause();
      }
      if (my_done && i >= SKEW)
        atomic_store_explicit(my_done, i - SKEW, memory_order_release); /* columns < i - SKEW are done */
    }
    const __m256i m0 = _mm256_permutevar8x32_epi32(e0, up), m1 = _mm256_permutevar8x32_epi32(e1, up);
    const __m256i a0 = _mm256_blend_epi32(m0, _mm256_set1_epi32(eprev[i + 2]), 1);
    const __m256i a1 = _mm256_blend_epi32(m1, m0, 1);
    const __m128i raw = _mm_loadu_si128((const __m128i *)(const void *)(S + (size_t)i * G));
    const __m256i in0 = _mm256_cvtepu8_epi32(raw), in1 = _mm256_cvtepu8_epi32(_mm_srli_si128(raw, 8));
    __m256i v0 = _mm256_add_epi32(_mm256_slli_epi32(in0, 8), in0); /* ht_fx_from_u8: v * 257 */
    __m256i v1 = _mm256_add_epi32(_mm256_slli_epi32(in1, 8), in1);
    v0 = _mm256_add_epi32(v0, _mm256_add_epi32(TERM(e0, q_left), TERM(a0, q_ur)));
    v1 = _mm256_add_epi32(v1, _mm256_add_epi32(TERM(e1, q_left), TERM(a1, q_ur)));
    v0 = _mm256_add_epi32(v0, _mm256_add_epi32(TERM(a0p, q_up), TERM(a0pp, q_ul)));
    v1 = _mm256_add_epi32(v1, _mm256_add_epi32(TERM(a1p, q_up), TERM(a1pp, q_ul)));
    const __m256i b0 = _mm256_cmpgt_epi32(v0, mid), b1 = _mm256_cmpgt_epi32(v1, mid); /* ht_fx_binary */
    __m256i n0 = _mm256_sub_epi32(v0, _mm256_and_si256(b0, one)), n1 = _mm256_sub_epi32(v1, _mm256_and_si256(b1, one));
    if (i < SKEW || i >= W) { /* lanes outside the image: their error is dropped */
      const __m256i x = _mm256_set1_epi32(i), x0 = _mm256_add_epi32(col0, x), x1 = _mm256_add_epi32(col1, x);
      n0 = _mm256_and_si256(n0, _mm256_andnot_si256(_mm256_cmpgt_epi32(zero, x0), _mm256_cmpgt_epi32(wv, x0)));
      n1 = _mm256_and_si256(n1, _mm256_andnot_si256(_mm256_cmpgt_epi32(zero, x1), _mm256_cmpgt_epi32(wv, x1)));
    }
    M[i] = (uint16_t)(_mm256_movemask_ps(_mm256_castsi256_ps(b0)) |
                      _mm256_movemask_ps(_mm256_castsi256_ps(b1)) << 8);
    if (i >= SKEW)
      enext[i - SKEW + 1] = _mm256_extract_epi32(n1, 7);
    e0 = n0;
    e1 = n1;
    a0pp = a0p;
    a0p = a0;
    a1pp = a1p;
    a1p = a1;
  }
  if (my_done)
    atomic_store_explicit(my_done, W, memory_order_release);
  for (int j = 0; j < rows; j++)
    for (int x = 0; x < W; x++)
      out[(size_t)j * ostride + (size_t)x] = (uint8_t)((M[x + 2 * j] >> j) & 1);
}

/* A thread's buffers for band(), and the zero-padded rows of a last
 * band that the image does not fill. */
typedef struct {
  uint8_t *S, *pad;
  uint16_t *M;
} scratch;

static scratch scratch_new(int W)
{
  const size_t w = (size_t)W;
  scratch k = { malloc((w + SKEW + 16) * G), calloc(w * G, 1), malloc((w + SKEW + 40) * sizeof(uint16_t)) };
  if (!k.S || !k.pad || !k.M) {
    fprintf(stderr, "ht-proto-diagonal: out of memory\n");
    exit(2);
  }
  return k;
}

static void scratch_free(scratch *k)
{
  free(k->S);
  free(k->pad);
  free(k->M);
}

/* Band b of the image (rows below the image read as zeros). */
static void image_band(scratch *k, const uint8_t *in, uint8_t *out, int W, int H, int b, const int32_t *eprev,
                       int32_t *enext, _Atomic int *above_done, _Atomic int *my_done)
{
  const size_t w = (size_t)W;
  const int y0 = b * G, rows = H - y0 < G ? H - y0 : G;
  const uint8_t *src = in + (size_t)y0 * w;
  if (rows < G) {
    memset(k->pad, 0, w * G);
    memcpy(k->pad, src, (size_t)rows * w);
    src = k->pad;
  }
  band(src, w, W, rows, eprev, enext, k->S, k->M, out + (size_t)y0 * w, w, above_done, my_done);
}

/* The whole image, band by band on one thread; out gets 0/1 per pixel. */
static void diagonal(const uint8_t *in, int W, int H, uint8_t *out)
{
  const size_t n = (size_t)W + SKEW + 8;
  int32_t *ea = calloc(n, sizeof *ea), *eb = calloc(n, sizeof *eb);
  if (!ea || !eb) {
    fprintf(stderr, "ht-proto-diagonal: out of memory\n");
    exit(2);
  }
  scratch k = scratch_new(W);
  for (int b = 0; b * G < H; b++) {
    image_band(&k, in, out, W, H, b, ea, eb, NULL, NULL);
    int32_t *t = ea;
    ea = eb;
    eb = t;
    memset(eb, 0, n * sizeof *eb);
  }
  scratch_free(&k);
  free(ea);
  free(eb);
}

/* Threads: bands taken in order from a ticket; band b reads band b - 1's
 * last row from its own array, as far as band b - 1's counter says. */
typedef struct {
  const uint8_t *in;
  uint8_t *out;
  int W, H, nb;
  int32_t **rows;      /* nb + 1 arrays: [b + 1] is band b's last row, [0] zeros */
  _Atomic int *done;   /* nb counters of done columns */
  _Atomic int ticket;
} shared;

static void *worker(void *arg)
{
  shared *sh = arg;
  scratch k = scratch_new(sh->W);
  for (int b; (b = atomic_fetch_add(&sh->ticket, 1)) < sh->nb;)
    image_band(&k, sh->in, sh->out, sh->W, sh->H, b, sh->rows[b], sh->rows[b + 1], b > 0 ? &sh->done[b - 1] : NULL,
               &sh->done[b]);
  scratch_free(&k);
  return NULL;
}

static void diagonal_threads(const uint8_t *in, int W, int H, uint8_t *out, int T)
{
  shared sh = { in, out, W, H, (H + G - 1) / G, NULL, NULL, 0 };
  sh.rows = calloc((size_t)sh.nb + 1, sizeof *sh.rows);
  sh.done = calloc((size_t)sh.nb, sizeof *sh.done);
  pthread_t *tid = calloc((size_t)T, sizeof *tid);
  if (!sh.rows || !sh.done || !tid) {
    fprintf(stderr, "ht-proto-diagonal: out of memory\n");
    exit(2);
  }
  for (int b = 0; b <= sh.nb; b++)
    if (!(sh.rows[b] = calloc((size_t)W + SKEW + 8, sizeof(int32_t)))) {
      fprintf(stderr, "ht-proto-diagonal: out of memory\n");
      exit(2);
    }
  for (int t = 1; t < T; t++)
    pthread_create(&tid[t], NULL, worker, &sh);
  worker(&sh);
  for (int t = 1; t < T; t++)
    pthread_join(tid[t], NULL);
  for (int b = 0; b <= sh.nb; b++)
    free(sh.rows[b]);
  free(sh.rows);
  free((void *)sh.done);
  free(tid);
}

/* Runs one W x H image (a noisy ramp); returns the number of pixels that
 * differ from ht_run (variant ed); times both when `timed`. */
static long run(ht_context *ctx, int W, int H, int timed, int T)
{
  const size_t n = (size_t)W * (size_t)H;
  uint8_t *in = malloc(n), *ref = malloc(n), *got = malloc(n);
  if (!in || !ref || !got) {
    fprintf(stderr, "ht-proto-diagonal: out of memory\n");
    exit(2);
  }
  uint32_t s = 12345;
  for (size_t k = 0; k < n; k++) {
    s = s * 1103515245u + 12345u;
    in[k] = (uint8_t)((k % (size_t)W) * 224 / (size_t)W + ((s >> 16) & 31));
  }
  const ht_image iim = { W, H, (size_t)W, 1, HT_FORMAT_U8, in };
  ht_image oim = { W, H, (size_t)W, 1, HT_FORMAT_U8, ref };
  ht_params p;
  ht_params_init(&p);
  p.variant = HT_VARIANT_ED;
  if (ht_run(ctx, &iim, &oim, &p) != HT_OK) {
    fprintf(stderr, "ht-proto-diagonal: ht_run: %s\n", ht_context_message(ctx));
    exit(2);
  }
  if (T > 0)
    diagonal_threads(in, W, H, got, T);
  else
    diagonal(in, W, H, got);
  long bad = 0;
  for (size_t k = 0; k < n; k++)
    bad += (ref[k] != 0) != (got[k] != 0);
  printf("%dx%d: %ld pixels differ from ht_run (variant ed)\n", W, H, bad);
  if (timed) {
    double best = 1e30, best_wf = 1e30;
    p.variant = HT_VARIANT_WAVEFRONT;
    ht_context_set_threads(ctx, T > 0 ? T : 1);
    for (int r = 0; r < 5; r++) {
      double t0 = now_s();
      if (T > 0)
        diagonal_threads(in, W, H, got, T);
      else
        diagonal(in, W, H, got);
      double t1 = now_s();
      ht_run(ctx, &iim, &oim, &p);
      double t2 = now_s();
      best = t1 - t0 < best ? t1 - t0 : best;
      best_wf = t2 - t1 < best_wf ? t2 - t1 : best_wf;
    }
    printf("%d thread(s), best of 5: diagonal %.3f ms (%.3f ns/pixel), library wavefront %.3f ms (%.3f ns/pixel)\n",
           T > 0 ? T : 1, best * 1e3, best * 1e9 / (double)n, best_wf * 1e3, best_wf * 1e9 / (double)n);
  }
  free(in);
  free(ref);
  free(got);
  return bad;
}

int main(int argc, char **argv)
{
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2")) {
    printf("ht-proto-diagonal: this CPU has no AVX2\n");
    return 77;
  }
  ht_context *ctx = ht_context_new();
  if (!ctx)
    return 2;
  long bad = 0;
  if (argc > 1 && strcmp(argv[1], "--check") == 0) {
    static const int shapes[][2] = { { 1, 1 }, { 1, 40 }, { 40, 1 }, { 2, 3 }, { 3, 50 }, { 15, 17 }, { 16, 16 },
                                     { 31, 33 }, { 100, 33 }, { 257, 131 }, { 1000, 37 } };
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++)
      for (int T = 0; T <= 3; T += 3) /* sequential, and bands on 3 threads */
        bad += run(ctx, shapes[k][0], shapes[k][1], 0, T);
  } else if (argc == 5 && strcmp(argv[1], "--threads") == 0) {
    const int T = atoi(argv[2]), W = atoi(argv[3]), H = atoi(argv[4]);
    if (T < 1 || T > 256 || W < 1 || H < 1 || W > 65536 || H > 65536) {
      fprintf(stderr, "usage: ht-proto-diagonal --threads T W H (T 1..256, sides 1..65536)\n");
      return 2;
    }
    bad = run(ctx, W, H, 1, T);
  } else {
    const int W = argc > 1 ? atoi(argv[1]) : 4096, H = argc > 2 ? atoi(argv[2]) : W;
    if (W < 1 || H < 1 || W > 65536 || H > 65536) {
      fprintf(stderr, "usage: ht-proto-diagonal --check | [W [H]] (1..65536)\n");
      return 2;
    }
    bad = run(ctx, W, H, 1, 0);
  }
  ht_context_free(ctx);
  return bad ? 1 : 0;
}

#else
int main(void)
{
  printf("ht-proto-diagonal: x86-64 with GCC or Clang only\n");
  return 77;
}
#endif

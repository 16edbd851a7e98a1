/* Ordered dithering with Bayer's matrix (B. E. Bayer, "An optimum method
 * for two-level rendition of continuous-tone pictures", 1973): the
 * matrix of side n = 2^k whose thresholds spread every tone's dots as
 * evenly as a square grid allows. Multi-level: a value v (HT_FX, 0..ONE)
 * lies between levels i and i + 1 with remainder r (in 1/ONE steps of a
 * level); it takes level i + 1 where r passes the pixel's threshold.
 * Integers only (docs/arithmetic.md), so every thread count and every
 * backend gives the same bits. Plane p reads the matrix turned by p
 * quarter turns, so that the planes of a colour image do not put their
 * dots on the same pixels at the same tones. */
#include "ordered.h"

#include <stdlib.h>

/* The Bayer index of (x, y) in the matrix of side 2^k: each bit pair of
 * (x, y), from the lowest, is a base-4 digit from the most significant,
 * the 2 x 2 matrix [0 2; 3 1] giving the digit. */
static int bayer_index(int x, int y, int k)
{
  int v = 0;
  for (int i = 0; i < k; i++) {
    const int xb = (x >> i) & 1, yb = (y >> i) & 1;
    v = 4 * v + 2 * (xb ^ yb) + yb;
  }
  return v;
}

typedef struct {
  int n;               /* the matrix side                                   */
  int32_t *threshold;  /* n x n thresholds in 0 .. ONE - 1, turned for the plane */
} bayer_matrix;

static void dither_row(const void *ctx, const ht_job *job, int64_t y, const int32_t *in, uint8_t *lv, int64_t w)
{
  const bayer_matrix *B = ctx;
  const int64_t L1 = job->levels - 1;
  const int32_t *t = B->threshold + (size_t)((job->y0 + y) % B->n) * (size_t)B->n;
  for (int64_t x = 0; x < w; x++) {
    const int64_t v = in[x] < 0 ? 0 : in[x] > HT_FX_ONE ? HT_FX_ONE : in[x];
    const int64_t s = v * L1;
    const int64_t i = s / HT_FX_ONE, r = s - i * HT_FX_ONE;
    lv[x] = (uint8_t)(i + (r > t[x % B->n] ? 1 : 0));
  }
}

ht_status ht_bayer_run(ht_job *job, const ht_rows *rows)
{
  const int n = job->params->mask_size; /* a power of two 2..256: ht_check */
  int k = 0;
  while ((1 << k) < n)
    k++;
  bayer_matrix S = { .n = n, .threshold = NULL };
  S.threshold = ht_alloc_raw(job, (size_t)n * (size_t)n, sizeof *S.threshold);
  if (!S.threshold)
    return HT_ERR_NO_MEMORY;
  /* threshold of index b: the middle of its 1/n^2 of a level step */
  const int64_t cells = (int64_t)n * n;
  for (int y = 0; y < n; y++)
    for (int x = 0; x < n; x++) {
      const int turns = job->plane & 3;
      const int tx = turns == 0 ? x : turns == 1 ? y : turns == 2 ? n - 1 - x : n - 1 - y;
      const int ty = turns == 0 ? y : turns == 1 ? n - 1 - x : turns == 2 ? n - 1 - y : x;
      const int64_t b = bayer_index(tx, ty, k);
      S.threshold[(size_t)y * (size_t)n + (size_t)x] = (int32_t)(((2 * b + 1) * HT_FX_ONE) / (2 * cells));
    }
  const ht_status st = ht_ordered_run(job, rows, dither_row, &S);
  free(S.threshold);
  return st;
}

/* Ordered dithering and thresholding (core/ordered/): each pixel's level
 * from its own value and place alone, no error carried, so that rows are
 * independent and any split of them over threads gives the same bits. */
#ifndef HT_ORDERED_H
#define HT_ORDERED_H

#include "../job.h"
#include "../rows.h"

/* The levels lv[0 .. w) of row y from its values in[0 .. w) (HT_FX);
 * ctx is the method's own, read-only. Called from several threads at
 * once for different rows. */
typedef void (*ht_ordered_row_fn)(const void *ctx, const ht_job *job, int64_t y, const int32_t *in, uint8_t *lv,
                                  int64_t w);

/* Every row of the plane through `fn`, on the job's threads (ordered.c). */
ht_status ht_ordered_run(ht_job *job, const ht_rows *rows, ht_ordered_row_fn fn, const void *ctx);

/* Bayer's matrix of side ht_params.mask_size (bayer.c). */
ht_status ht_bayer_run(ht_job *job, const ht_rows *rows);
/* Each pixel to its nearest level (threshold.c). */
ht_status ht_threshold_run(ht_job *job, const ht_rows *rows);
/* A blue-noise mask of side ht_params.noise_size from the seed
 * (blue_noise.c), made by ht_void_and_cluster or taken from the cache. */
ht_status ht_blue_noise_run(ht_job *job, const ht_rows *rows);
/* The ranks of a blue-noise mask of side n, a power of two
 * 2..HT_NOISE_SIZE_MAX (void_and_cluster.c); HT_ERR_NO_MEMORY. */
ht_status ht_void_and_cluster(int n, uint64_t seed, uint32_t *rank);
/* An AM screen: ht_params' lpi, dpi, angle(s) and dot (screen.c). */
ht_status ht_screen_run(ht_job *job, const ht_rows *rows);

/* The level of value v (HT_FX) against threshold t (0 .. HT_FX_ONE - 1):
 * v lies between levels i and i + 1 with remainder r (in 1/HT_FX_ONE of
 * a level step) and takes level i + 1 where r passes t. */
static inline uint8_t ht_ordered_level(int32_t v, int64_t levels_minus_1, int32_t t)
{
  const int64_t c = v < 0 ? 0 : v > HT_FX_ONE ? HT_FX_ONE : v;
  const int64_t s = c * levels_minus_1;
  const int64_t i = s / HT_FX_ONE, r = s - i * HT_FX_ONE;
  return (uint8_t)(i + (r > t ? 1 : 0));
}

#endif

/* Plain thresholding: each pixel to its nearest level, no error carried
 * and no pattern: the baseline a halftone is compared with, and what
 * line art wants. The nearest level is the quantiser error diffusion
 * applies to a pixel and its collected error (core/shared/fixed.h), here to
 * the pixel alone, so a flat area at a level's value stays at it. */
#include "ordered.h"

static void threshold_row(const void *ctx, const ht_job *job, int64_t y, const int32_t *in, uint8_t *lv, int64_t w)
{
  (void)ctx;
  (void)y;
  for (int64_t x = 0; x < w; x++)
    lv[x] = (uint8_t)ht_fx_quantize(in[x], job->levels);
}

ht_status ht_threshold_run(ht_job *job, const ht_rows *rows) { return ht_ordered_run(job, rows, threshold_row, NULL); }

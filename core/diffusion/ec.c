/* Error collection (EC): Kasagi et al. Sec. II, "[Error Collection (EC)]".
 *
 * Instead of pushing the error of a pixel to its unprocessed neighbours
 * (ED), every pixel pulls the shares of its already processed sources:
 * pixel (x, y) collects ht_fx_term(e(x - dx, y - dy), q) for every tap
 * (dx, dy, q). The terms are exactly the integers ED adds, only summed in
 * another order, so the output equals core/ed.c bit for bit. Only the
 * rounding errors e of the last reach_down rows are kept (a ring), so
 * memory is O(width). Raster scan only; serpentine stays in ed.c. */
#include "diffusion.h"

#include <stdlib.h>
#include <string.h>

/* Zero columns either side of every stored row: sources left of column 0
 * or right of column w-1 read 0, and ht_fx_term(0, q) == 0, which is the
 * "error leaving the image is dropped" rule of core/shared/fixed.h. */
#define EC_PAD (HT_FILTER_MAX_LEFT > HT_FILTER_MAX_RIGHT ? HT_FILTER_MAX_LEFT : HT_FILTER_MAX_RIGHT)

ht_status ht_ec_run(ht_job *job, const ht_rows *rows)
{
  const ht_filter *f = &job->filter;
  const int64_t w = rows->width, h = rows->height;
  const int levels = job->levels;
  const int nrows = f->reach_down + 1;
  const size_t pad = (size_t)(EC_PAD);
  const size_t stride = (size_t)w + 2 * pad;
  int32_t *in = ht_alloc(job, (size_t)w, sizeof *in);
  uint8_t *lv = ht_alloc(job, (size_t)w, 1);
  /* e rows y, y-1, ..., y-reach_down at slot (row mod nrows), then the
   * reach_down rows above the band (zeros above the image), at least one */
  int32_t *ering = ht_alloc(job, (size_t)(2 * nrows), stride * sizeof *ering);
  ht_status s = HT_OK;
  if (!in || !lv || !ering) {
    s = HT_ERR_NO_MEMORY;
    goto out;
  }
  /* the rows above the band: carried, or zeros at the top of the image */
  int32_t *above = ering + (size_t)nrows * stride + pad;
  for (int up = 1; up < nrows; up++) {
    const int32_t *carried = ht_job_carry_in_row(job, w, up);
    if (carried)
      memcpy(above + (size_t)(nrows - 1 - up) * stride, carried, (size_t)w * sizeof *above);
  }
  ht_job_carry_begin(job, w, h);
  int32_t level_value[256];
  for (int i = 0; i < levels; i++)
    level_value[i] = ht_fx_level(i, levels);

  for (int64_t y = 0; y < h; y++) {
    rows->load(rows, y, 0, rows->width, in);
    const int32_t *src[HT_FILTER_MAX_DOWN + 1];
    int32_t *cur = ering + (size_t)(y % nrows) * stride + pad;
    for (int dy = 0; dy <= f->reach_down; dy++)
      src[dy] = dy == 0 ? cur
                : y >= dy ? ering + (size_t)((y - dy) % nrows) * stride + pad
                          : above + (size_t)(nrows - 1 - (dy - y)) * stride;
    /* The slot of row y held row y - nrows, which no tap reaches; its
     * columns are overwritten left to right before the dy == 0 taps
     * (dx > 0) read them. */
    for (int64_t x = 0; x < w; x++) {
      int32_t v = in[x];
      for (int t = 0; t < f->ntaps; t++)
        v += ht_fx_term(src[f->taps[t].dy][x - f->taps[t].dx], f->taps[t].q);
      int32_t q = levels == 2 ? ht_fx_binary(v) : ht_fx_quantize(v, levels);
      cur[x] = v - level_value[q];
      lv[x] = (uint8_t)q;
    }
    int32_t *carry = ht_job_carry_out_row(job, w, h, y);
    if (carry)
      memcpy(carry, cur, (size_t)w * sizeof *carry);
    rows->store(rows, y, 0, rows->width, lv);
    if (!ht_job_tick(job, y + 1, h)) {
      s = HT_ERR_CANCELLED;
      goto out;
    }
  }
out:
  free(in);
  free(lv);
  free(ering);
  return s;
}

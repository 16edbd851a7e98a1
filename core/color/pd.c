/* Plane-dependent colour error diffusion, the sequential reference
 * (Zhang et al., Sec. 2.1, Figure 1). Pixels in scan order; at each
 * pixel the planes in order 0 .. P-1. Plane j's value is its input, the
 * filter's terms collected from its own plane, the forward share of
 * plane j-1 of this pixel and the backward share of plane j+1 of the
 * pixel before (on this row). Its error e is split: f = term(e, mu_j)
 * forward, b = term(e, mu'_j) backward (none at the row's last pixel),
 * the rest e - f - b through the filter, whose weights are perturbed per
 * pixel and plane when the run randomises them (pd_arith.h). docs/color.md.
 * Also the only implementation of the serpentine scan. */
#include "color.h"

#include <stdlib.h>
#include <string.h>

ht_status ht_pd_run(ht_job *job, const ht_rows *rows)
{
  (void)rows;
  const ht_color_job *cj = job->color;
  const ht_filter *f = &job->filter;
  const int P = cj->planes;
  const int64_t w = cj->rows[0].width, h = cj->rows[0].height;
  const int nrows = f->reach_down + 1;
  const size_t W = (size_t)w;
  int32_t *in = ht_alloc(job, (size_t)P * W + 3 * W, sizeof *in);
  uint8_t *lv = ht_alloc(job, (size_t)P * W, 1);
  int32_t *err = ht_alloc(job, (size_t)P * (size_t)nrows * W, sizeof *err); /* [plane][row mod nrows][x] */
  ht_status s = HT_OK;
  if (!in || !lv || !err) {
    s = HT_ERR_NO_MEMORY;
    goto out;
  }
  int32_t *dst[HT_PD_MAX_PLANES];
  for (int p = 0; p < P; p++)
    dst[p] = in + (size_t)p * W;
  int32_t q0[HT_FILTER_MAX_TAPS], q[HT_FILTER_MAX_TAPS];
  for (int t = 0; t < f->ntaps; t++)
    q0[t] = q[t] = f->taps[t].q;
  for (int64_t y = 0; y < h; y++) {
    ht_color_load(cj, y, 0, w, dst, in + (size_t)P * W);
    const bool reverse = job->scan == HT_SCAN_SERPENTINE && (y & 1);
    int32_t back[HT_PD_MAX_PLANES] = { 0 }; /* fed back into plane j of this pixel */
    for (int64_t i = 0; i < w; i++) {
      const int64_t x = reverse ? w - 1 - i : i;
      const bool last = i == w - 1; /* no next pixel on the row: no backward share */
      int32_t fwd = 0, nback[HT_PD_MAX_PLANES] = { 0 };
      for (int j = 0; j < P; j++) {
        int32_t *cur = err + ((size_t)j * (size_t)nrows + (size_t)(y % nrows)) * W;
        const int32_t v = dst[j][x] + cur[x] + fwd + back[j];
        int32_t e;
        lv[(size_t)j * W + (size_t)x] = (uint8_t)ht_pd_round(v, cj->levels[j], &e);
        fwd = ht_pd_term(e, cj->forward[j]);
        const int32_t b = last ? 0 : ht_pd_term(e, cj->backward[j]);
        if (j > 0)
          nback[j - 1] = b;
        const int32_t ei = e - fwd - b;
        if (cj->amount)
          ht_pd_perturb(q0, f->ntaps, cj->amount, job->seed, (uint32_t)j, (uint32_t)x, (uint32_t)y, q);
        for (int t = 0; t < f->ntaps; t++) {
          const int64_t tx = x + (reverse ? -f->taps[t].dx : f->taps[t].dx), ty = y + f->taps[t].dy;
          if (tx < 0 || tx >= w || ty >= h)
            continue; /* error leaving the image is dropped */
          err[((size_t)j * (size_t)nrows + (size_t)(ty % nrows)) * W + (size_t)tx] += ht_pd_term(ei, q[t]);
        }
      }
      memcpy(back, nback, sizeof back);
    }
    for (int j = 0; j < P; j++) {
      memset(err + ((size_t)j * (size_t)nrows + (size_t)(y % nrows)) * W, 0, W * sizeof *err);
      cj->rows[j].store(&cj->rows[j], y, 0, w, lv + (size_t)j * W);
    }
    if (!ht_job_tick(job, y + 1, h)) {
      s = HT_ERR_CANCELLED;
      goto out;
    }
  }
out:
  free(in);
  free(lv);
  free(err);
  return s;
}

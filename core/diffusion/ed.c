/* Error diffusion (ED), the readable reference: Kasagi et al. Sec. II,
 * "[Error Diffusion (ED)]". Each pixel is rounded and its error pushed to
 * the unprocessed neighbours. Also the only variant that does the
 * serpentine scan (odd rows right to left with the filter mirrored),
 * which has no wavefront form. */
#include "impl.h"

#include <stdlib.h>
#include <string.h>

ht_status ht_ed_run(ht_job *job, const ht_rows *rows)
{
  const ht_filter *f = &job->filter;
  const int64_t w = rows->width, h = rows->height;
  const int nrows = f->reach_down + 1;
  int32_t *in = ht_alloc(job, (size_t)w, sizeof *in);
  uint8_t *lv = ht_alloc(job, (size_t)w, 1);
  /* err[(y mod nrows) * w + x]: error pushed into row y so far */
  int32_t *err = ht_alloc(job, (size_t)nrows * (size_t)w, sizeof *err);
  ht_status s = HT_OK;
  if (!in || !lv || !err) {
    s = HT_ERR_NO_MEMORY;
    goto out;
  }
  for (int64_t y = 0; y < h; y++) {
    rows->load(rows, y, 0, rows->width, in);
    int32_t *cur = err + (size_t)(y % nrows) * (size_t)w;
    bool reverse = job->scan == HT_SCAN_SERPENTINE && (y & 1);
    for (int64_t i = 0; i < w; i++) {
      int64_t x = reverse ? w - 1 - i : i;
      int32_t v = in[x] + cur[x];
      int32_t q = job->levels == 2 ? ht_fx_binary(v) : ht_fx_quantize(v, job->levels);
      int32_t e = v - ht_fx_level(q, job->levels);
      lv[x] = (uint8_t)q;
      for (int t = 0; t < f->ntaps; t++) {
        int64_t tx = x + (reverse ? -f->taps[t].dx : f->taps[t].dx);
        int64_t ty = y + f->taps[t].dy;
        if (tx < 0 || tx >= w || ty >= h)
          continue; /* error leaving the image is dropped */
        err[(size_t)(ty % nrows) * (size_t)w + (size_t)tx] += ht_fx_term(e, f->taps[t].q);
      }
    }
    memset(cur, 0, (size_t)w * sizeof *cur); /* this slot becomes row y + nrows */
    rows->store(rows, y, 0, rows->width, lv);
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

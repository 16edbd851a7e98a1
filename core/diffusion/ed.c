/* Error diffusion (ED), the readable reference: Kasagi et al. Sec. II,
 * "[Error Diffusion (ED)]". Each pixel is rounded and its error pushed to
 * the unprocessed neighbours. Also the only variant that does the
 * serpentine scan (odd rows right to left with the filter mirrored),
 * which has no wavefront form. Carried rows (job.h) enter as the pushes
 * of the rows above the band and leave as the last rows' errors. */
#include "diffusion.h"

#include <stdlib.h>
#include <string.h>

/* Odd rows of the whole image run right to left in the serpentine scan. */
static bool reversed(const ht_job *job, int64_t y)
{
  return job->scan == HT_SCAN_SERPENTINE && ((job->y0 + y) & 1);
}

/* Pushes error e of pixel (x, y) to its unprocessed neighbours;
 * err[(row mod (reach_down + 1)) * w + column] collects them. */
static inline void push(const ht_filter *f, int32_t e, int64_t x, int64_t y, bool reverse, int64_t w, int64_t h,
                        int32_t *err)
{
  const int nrows = f->reach_down + 1;
  for (int t = 0; t < f->ntaps; t++) {
    int64_t tx = x + (reverse ? -f->taps[t].dx : f->taps[t].dx);
    int64_t ty = y + f->taps[t].dy;
    if (tx < 0 || tx >= w || ty < 0 || ty >= h)
      continue; /* error leaving the image (or the band) is dropped */
    err[(size_t)(ty % nrows) * (size_t)w + (size_t)tx] += ht_fx_term(e, f->taps[t].q);
  }
}

/* The errors e[0 .. w) of row y (< 0: a carried row above the band). */
static void diffuse_row(const ht_job *job, const int32_t *e, int64_t y, int64_t w, int64_t h, int32_t *err)
{
  const bool reverse = reversed(job, y);
  for (int64_t x = 0; x < w; x++)
    push(&job->filter, e[x], x, y, reverse, w, h, err);
}

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
  /* Carried rows: the rows above the band push their errors into it as
   * they would have in one run of the whole image. */
  ht_job_carry_begin(job, w, h);
  for (int up = 1; up <= nrows - 1; up++) {
    const int32_t *above = ht_job_carry_in_row(job, w, up);
    if (above)
      diffuse_row(job, above, -up, w, h, err);
  }
  for (int64_t y = 0; y < h; y++) {
    rows->load(rows, y, 0, rows->width, in);
    int32_t *cur = err + (size_t)(y % nrows) * (size_t)w;
    int32_t *carry = ht_job_carry_out_row(job, w, h, y);
    bool reverse = reversed(job, y);
    for (int64_t i = 0; i < w; i++) {
      int64_t x = reverse ? w - 1 - i : i;
      int32_t v = in[x] + cur[x];
      int32_t q = job->levels == 2 ? ht_fx_binary(v) : ht_fx_quantize(v, job->levels);
      int32_t e = v - ht_fx_level(q, job->levels);
      lv[x] = (uint8_t)q;
      if (carry)
        carry[x] = e;
      push(f, e, x, y, reverse, w, h, err);
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

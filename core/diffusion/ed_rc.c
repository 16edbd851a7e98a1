/* Error diffusion with register caching (ED-RC): Kasagi et al. Sec. II,
 * the register caching technique applied to error diffusion.
 *
 * ED pushes ht_fx_term(e, q) of pixel (x, y) to (x + dx, y + dy). The
 * targets a pixel reaches in row y + dy are the columns x - left ..
 * x + right; their running sums live in local variables that slide one
 * column per pixel: the column entering on the right is read from memory
 * once, the column leaving on the left (which no later pixel of this row
 * reaches) is written back once. The current row's pending errors for
 * x + 1 .. x + right never touch memory at all.
 *
 * Filters stay data: one kernel for a rectangular footprint with a dense
 * weight box (a missing tap has weight 0 and ht_fx_term(e, 0) == 0),
 * instantiated for the footprints of footprint.h. The error sums in the
 * columns outside the image (the pads) are dropped: they flow only into
 * other pad columns and are cleared with the row, which is the "error
 * leaving the image is dropped" rule.
 *
 * Carried rows (job.h) enter as the terms the rows above the band push
 * into it, added before the band's first row (sums do not depend on
 * order), and leave as the errors of the band's last rows, which only
 * those rows store: they run in instances of their own, so that the
 * other rows' loop stays as it is. */
#include "register_cache.h"

#define HT_AI static inline __attribute__((always_inline))
#define PAD HT_RC_PAD
#define BOXW HT_BOX_WIDTH
#define NROWS (HT_FILTER_MAX_DOWN + 1)

/* c->err: NROWS rows, the error pushed into row y at slot (y mod NROWS) */
typedef ht_rc edrc;



/* One row: `cur` holds what the rows above pushed into it, down[dy] what
 * reaches row y + dy so far. With `store`, the errors go to eout too. */
HT_AI void ed_rc_row(const int L, const int R, const int D, const bool binary, const bool store, const edrc *c,
                     const int32_t *restrict cur, int32_t *const down[HT_FILTER_MAX_DOWN + 1],
                     int32_t *restrict eout)
{
  const int64_t w = c->rows->width;
  const int32_t *restrict in = c->in;
  uint8_t *restrict lv = c->lv;
  int32_t q0[HT_FILTER_MAX_RIGHT + 1];
  int32_t qd[HT_FILTER_MAX_DOWN][BOXW];
  int32_t pend0[HT_FILTER_MAX_RIGHT + 1];  /* error for (x + k, y), k = 0..R-1 */
  int32_t win[HT_FILTER_MAX_DOWN][BOXW];   /* sum for (x - L + k, y + dy)      */
#pragma GCC unroll 8
  for (int k = 1; k <= R; k++)
    q0[k] = c->bx.q[0][HT_FILTER_MAX_LEFT + k];
#pragma GCC unroll 8
  for (int k = 0; k <= R; k++)
    pend0[k] = 0;
#pragma GCC unroll 4
  for (int dy = 1; dy <= D; dy++) {
#pragma GCC unroll 16
    for (int k = 0; k <= L + R; k++) {
      qd[dy - 1][k] = c->bx.q[dy][HT_FILTER_MAX_LEFT - L + k];
      win[dy - 1][k] = k < L + R ? down[dy][k - L] : 0;
    }
  }
  int32_t vprev = 0; /* binary: value of the left neighbour; 0 has error 0 */
  const int32_t c_white = HT_Q_HALF - HT_FX_ONE * q0[1];
  for (int64_t x = 0; x < w; x++) {
    int32_t v = in[x] + cur[x] + pend0[0];
    if (binary) {
      /* The share of the left neighbour is the critical path of the row.
       * It is ht_fx_term(e, q) with e = vprev - level (level 0 or
       * HT_FX_ONE) and the product distributed: (vprev * q + (HT_Q_HALF -
       * level * q)) >> HT_Q_BITS, the same integer (no product leaves
       * int32: |vprev| < 2^17, q <= 2^12), so the multiply runs while the
       * threshold picks the constant. */
      v += (vprev * q0[1] + (ht_fx_binary(vprev) ? c_white : HT_Q_HALF)) >> HT_Q_BITS;
      vprev = v;
    }
    int32_t e = ht_level_round(binary, &c->lt, v, &lv[x]);
    if (store)
      eout[x] = e;
    /* slide by one column while adding this pixel's shares; pend0[R]
     * stays 0 (binary: the share for x + 1 was added above instead) */
#pragma GCC unroll 8
    for (int k = 0; k < R; k++)
      pend0[k] = pend0[k + 1] + (binary && k == 0 ? 0 : ht_fx_term(e, q0[k + 1]));
#pragma GCC unroll 4
    for (int dy = 1; dy <= D; dy++) {
      win[dy - 1][L + R] = down[dy][x + R]; /* the column entering the window */
#pragma GCC unroll 16
      for (int k = 0; k <= L + R; k++)
        win[dy - 1][k] += ht_fx_term(e, qd[dy - 1][k]);
      down[dy][x - L] = win[dy - 1][0]; /* no later pixel of this row reaches it */
#pragma GCC unroll 16
      for (int k = 0; k < L + R; k++)
        win[dy - 1][k] = win[dy - 1][k + 1];
    }
  }
#pragma GCC unroll 4
  for (int dy = 1; dy <= D; dy++) {
#pragma GCC unroll 16
    for (int k = 0; k < L + R; k++)
      down[dy][w - L + k] = win[dy - 1][k];
  }
}

/* Rows y0 .. y1 - 1; with `store`, their errors go to carry_out. */
HT_AI ht_status ed_rc_rows(const int L, const int R, const int D, const bool binary, const bool store, edrc *c,
                           int64_t y0, int64_t y1)
{
  const ht_rows *rows = c->rows;
  const int64_t h = rows->height;
  for (int64_t y = y0; y < y1; y++) {
    rows->load(rows, y, 0, rows->width, c->in);
    int32_t *down[HT_FILTER_MAX_DOWN + 1];
    for (int dy = 0; dy <= HT_FILTER_MAX_DOWN; dy++)
      down[dy] = c->err + (size_t)((y + dy) % NROWS) * c->stride + PAD;
    ed_rc_row(L, R, D, binary, store, c, down[0], down,
              store ? ht_job_carry_out_row(c->job, rows->width, h, y) : NULL);
    /* this slot becomes row y + NROWS: clear it, pads included */
    memset(down[0] - PAD, 0, c->stride * sizeof *c->err);
    rows->store(rows, y, 0, rows->width, c->lv);
    if (!ht_job_tick(c->job, y + 1, h))
      return HT_ERR_CANCELLED;
  }
  return HT_OK;
}

/* The terms that the carried rows above the band push into its first
 * rows (ed.c's, tap by tap; columns outside the image dropped). */
static void push_carried(edrc *c)
{
  const ht_filter *f = &c->job->filter;
  const int64_t w = c->rows->width, h = c->rows->height;
  for (int up = 1; up <= ht_job_carry_rows(c->job); up++) {
    const int32_t *e = ht_job_carry_in_row(c->job, w, up);
    for (int t = 0; e && t < f->ntaps; t++) {
      const int64_t y = f->taps[t].dy - up, dx = f->taps[t].dx; /* band row y, y < NROWS */
      if (y < 0 || y >= h)
        continue;
      int32_t *dst = c->err + (size_t)y * c->stride + PAD;
      for (int64_t x = dx < 0 ? -dx : 0; x < w && x + dx < w; x++)
        dst[x + dx] += ht_fx_term(e[x], f->taps[t].q);
    }
  }
}

/* one instance per footprint (footprint.h), binary and multi-level,
 * for the rows that carry nothing out and for those that do */
typedef ht_status (*rows_fn)(edrc *c, int64_t y0, int64_t y1);
#define INSTANCE(L, R, D, binary, store, name) \
  static ht_status name(edrc *c, int64_t y0, int64_t y1) { return ed_rc_rows(L, R, D, binary, store, c, y0, y1); }
#define INSTANCES(L, R, D)                                   \
  INSTANCE(L, R, D, true, false, run_##L##R##D##_b)          \
  INSTANCE(L, R, D, false, false, run_##L##R##D##_m)         \
  INSTANCE(L, R, D, true, true, carry_##L##R##D##_b)         \
  INSTANCE(L, R, D, false, true, carry_##L##R##D##_m)
HT_FOOTPRINTS(INSTANCES)
#undef INSTANCES
#undef INSTANCE

static const rows_fn instances[HT_FOOTPRINT_COUNT][2][2] = { /* [footprint][store][binary] */
#define ROW(L, R, D) { { run_##L##R##D##_m, run_##L##R##D##_b }, { carry_##L##R##D##_m, carry_##L##R##D##_b } },
  HT_FOOTPRINTS(ROW)
#undef ROW
};

ht_status ht_ed_rc_run(ht_job *job, const ht_rows *rows)
{
  const ht_filter *f = &job->filter;
  edrc c;
  ht_status s = HT_OK;
  if (!ht_rc_open(&c, job, rows, NROWS)) {
    s = HT_ERR_NO_MEMORY;
    goto out;
  }
  push_carried(&c);
  ht_job_carry_begin(job, rows->width, rows->height);
  const rows_fn *fn = instances[ht_footprint_of(f).index][0], *fn_carry = instances[ht_footprint_of(f).index][1];
  const int64_t h = rows->height, carried = job->carry_out ? ht_job_carry_rows(job) : 0;
  const int64_t y1 = h > carried ? h - carried : 0; /* the rows from y1 on leave as carried rows */
  s = fn[c.levels == 2](&c, 0, y1);
  if (s == HT_OK && y1 < h)
    s = fn_carry[c.levels == 2](&c, y1, h);
out:
  ht_rc_close(&c);
  return s;
}

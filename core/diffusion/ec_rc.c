/* Error collection with register caching (EC-RC): Kasagi et al. Sec. II,
 * the register caching technique applied to error collection.
 *
 * Pixel (x, y) collects ht_fx_term(e(x - dx, y - dy), q) from its sources
 * (see ec.c). The errors it needs from the rows above form a window of
 * columns x - right .. x + left per row; the window lives in local
 * variables and slides one column per pixel, so every pixel reads one new
 * error per row above and writes its own error once (the paper's "2n
 * reads, 2n writes" row of Table I). The errors of the current row's
 * previous pixels are kept the same way.
 *
 * Filters stay data: the kernel is written once for a rectangular
 * footprint (left, right, down) with the weights as a dense box (a
 * missing tap has weight 0, and ht_fx_term(e, 0) == 0, so it adds
 * nothing). It is instantiated for the footprints of footprint.h: the
 * built-in filters', where GCC unrolls it and keeps the window in
 * registers, and the largest one, which takes any filter.
 *
 * Carried rows (job.h) are error rows, which is what collection reads
 * from the rows above: the rows above the band are the carried ones
 * where the band continues a taller image, zeros above the image, and
 * the band's last rows leave as they are stored. */
#include "register_cache.h"

#define HT_AI static inline __attribute__((always_inline))
#define PAD HT_RC_PAD /* zero columns either side of a stored row */
#define BOXW HT_BOX_WIDTH

/* c->err: e rows y, y-1, .., y-HT_FILTER_MAX_DOWN at slot (row mod
 * (MAX_DOWN + 1)), then the rows above the band: row `up` of them (1 ..
 * MAX_DOWN) at slot MAX_DOWN + up */
typedef ht_rc ecrc;



/* One row. L, R, D: the footprint the instance is compiled for. */
HT_AI void ec_rc_row(const int L, const int R, const int D, const bool binary, const ecrc *c,
                     int32_t *restrict cur, const int32_t *const up[HT_FILTER_MAX_DOWN + 1])
{
  const int64_t w = c->rows->width;
  const int32_t *restrict in = c->in;
  uint8_t *restrict lv = c->lv;
  int32_t q0[HT_FILTER_MAX_RIGHT + 1];
  int32_t qu[HT_FILTER_MAX_DOWN][BOXW];
  int32_t cache0[HT_FILTER_MAX_RIGHT + 1];       /* e(x - k, y), k = 1..R     */
  int32_t win[HT_FILTER_MAX_DOWN][BOXW];          /* e(x - R + k, y - dy)      */
#pragma GCC unroll 8
  for (int k = 1; k <= R; k++) {
    q0[k] = c->bx.q[0][HT_FILTER_MAX_LEFT + k];
    cache0[k] = 0;
  }
#pragma GCC unroll 4
  for (int dy = 1; dy <= D; dy++) {
#pragma GCC unroll 16
    for (int k = 0; k <= L + R; k++) {
      qu[dy - 1][k] = c->bx.q[dy][HT_FILTER_MAX_LEFT + R - k]; /* source x - R + k has dx = R - k */
      win[dy - 1][k] = k < L + R ? up[dy][k - R] : 0;
    }
  }
  int32_t vprev = 0; /* value of the left neighbour; 0 has error 0 */
  const int32_t c_white = HT_Q_HALF - HT_FX_ONE * q0[1];
  for (int64_t x = 0; x < w; x++) {
    int32_t v = in[x];
#pragma GCC unroll 4
    for (int dy = 1; dy <= D; dy++) {
      win[dy - 1][L + R] = up[dy][x + L]; /* the one new read per row above */
#pragma GCC unroll 16
      for (int k = 0; k <= L + R; k++)
        v += ht_fx_term(win[dy - 1][k], qu[dy - 1][k]);
    }
#pragma GCC unroll 8
    for (int k = 2; k <= R; k++)
      v += ht_fx_term(cache0[k], q0[k]);
    if (binary) {
      /* The left neighbour's term is the critical path of the row. It is
       * ht_fx_term(e, q) with e = vprev - level, level 0 or HT_FX_ONE, and
       * the product distributed: (vprev * q + (HT_Q_HALF - level * q)) >>
       * HT_Q_BITS, the same integer (no product leaves int32: |vprev| <
       * 2^17, q <= 2^12). The multiply then runs while the threshold picks
       * the constant, instead of after it: 6 cycles a pixel instead of 8. */
      v += (vprev * q0[1] + (ht_fx_binary(vprev) ? c_white : HT_Q_HALF)) >> HT_Q_BITS;
    } else {
      v += ht_fx_term(cache0[1], q0[1]);
    }
    vprev = v;
    int32_t e = ht_level_round(binary, &c->lt, v, &lv[x]);
    cur[x] = e;
#pragma GCC unroll 8
    for (int k = R; k > 1; k--)
      cache0[k] = cache0[k - 1];
    cache0[1] = e;
#pragma GCC unroll 4
    for (int dy = 1; dy <= D; dy++) {
#pragma GCC unroll 16
      for (int k = 0; k < L + R; k++)
        win[dy - 1][k] = win[dy - 1][k + 1];
    }
  }
}

HT_AI ht_status ec_rc_rows(const int L, const int R, const int D, const bool binary, ecrc *c)
{
  const ht_rows *rows = c->rows;
  const int64_t h = rows->height;
  const int nrows = HT_FILTER_MAX_DOWN + 1;
  for (int64_t y = 0; y < h; y++) {
    rows->load(rows, y, 0, rows->width, c->in);
    const int32_t *up[HT_FILTER_MAX_DOWN + 1];
    int32_t *cur = c->err + (size_t)(y % nrows) * c->stride + PAD;
    up[0] = cur;
    for (int dy = 1; dy <= HT_FILTER_MAX_DOWN; dy++)
      up[dy] = c->err + (size_t)(y >= dy ? (y - dy) % nrows : HT_FILTER_MAX_DOWN + dy - y) * c->stride + PAD;
    ec_rc_row(L, R, D, binary, c, cur, up);
    int32_t *carry = c->job->carry_out ? ht_job_carry_out_row(c->job, rows->width, h, y) : NULL;
    if (carry)
      memcpy(carry, cur, (size_t)rows->width * sizeof *carry);
    rows->store(rows, y, 0, rows->width, c->lv);
    if (!ht_job_tick(c->job, y + 1, h))
      return HT_ERR_CANCELLED;
  }
  return HT_OK;
}

/* one instance per footprint (footprint.h), binary and multi-level */
#define INSTANCE(L, R, D) \
  static ht_status run_##L##R##D##_b(ecrc *c) { return ec_rc_rows(L, R, D, true, c); } \
  static ht_status run_##L##R##D##_m(ecrc *c) { return ec_rc_rows(L, R, D, false, c); }
HT_FOOTPRINTS(INSTANCE)
#undef INSTANCE

static ht_status (*const instances[HT_FOOTPRINT_COUNT][2])(ecrc *) = {
#define ROW(L, R, D) { run_##L##R##D##_m, run_##L##R##D##_b },
  HT_FOOTPRINTS(ROW)
#undef ROW
};

ht_status ht_ec_rc_run(ht_job *job, const ht_rows *rows)
{
  ecrc c;
  ht_status s = HT_OK;
  if (!ht_rc_open(&c, job, rows, 2 * (size_t)HT_FILTER_MAX_DOWN + 1)) {
    s = HT_ERR_NO_MEMORY;
    goto out;
  }
  for (int up = 1; up <= HT_FILTER_MAX_DOWN; up++) { /* zeros where nothing is carried */
    const int32_t *carried = ht_job_carry_in_row(job, rows->width, up);
    if (carried)
      memcpy(c.err + (size_t)(HT_FILTER_MAX_DOWN + up) * c.stride + PAD, carried,
             (size_t)rows->width * sizeof *carried);
  }
  ht_job_carry_begin(job, rows->width, rows->height);
  s = instances[ht_footprint_of(&job->filter).index][c.levels == 2](&c);
out:
  ht_rc_close(&c);
  return s;
}

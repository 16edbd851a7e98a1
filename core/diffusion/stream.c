/* Streamed bands: error collection in skewed column chunks, so that a
 * band's carried rows can come in and go out piece by piece while it
 * runs (ht_run_band_stream, docs/mpi.md). This is the per-process part
 * of the distributed error diffusion of Guilloteau, "Parallel Dithering:
 * How Fast Can We Go?", Sec. 5-6: blocks of k pixels (here `chunk`
 * columns), blocks of r consecutive rows run in a zig-zag so that the
 * block's last row, whose errors the next process needs, starts early.
 *
 * The order: the band's rows are cut into chunks of k columns; chunk c of
 * row t runs in step c + t * skew, rows in increasing order within a
 * step. A pixel (x, y) collects from (x - dx, y - dy) for every tap, so
 * chunk c of row t needs row t - 1 done up to its last column plus the
 * filter's reach to the left (what Kasagi et al. Sec. III call the
 * delay, less one); skew = ceil(reach_left / k) chunks gives exactly
 * that, and rows further up are further ahead still. The carried-in rows
 * are needed by the first row up to the same column: `need` is asked for
 * them just before. The last row's chunk is the last thing a step does
 * to a column range, so after it `ready` passes those columns of the
 * carried-out rows on.
 *
 * The arithmetic is core/fixed.h's, terms summed per pixel as in ec.c
 * (integer sums do not depend on order), with the filter as the dense
 * weight box of footprint.h and the footprint a compile-time constant,
 * so the bits are those of every other variant. As a plain variant
 * (no stream) the chunk is the whole row: row-by-row error collection
 * with O(width) memory. */
#include "footprint.h"
#include "diffusion.h"

#include <stdlib.h>
#include <string.h>

#define HT_AI static inline __attribute__((always_inline))
/* zero columns either side of a stored row: sources outside the image
 * read 0 and ht_fx_term(0, q) == 0, the "error leaving the image is
 * dropped" rule */
#define PAD 4
_Static_assert(PAD >= HT_FILTER_MAX_LEFT && PAD >= HT_FILTER_MAX_RIGHT, "pads must hold the widest filter");

typedef struct {
  ht_job *job;
  const ht_rows *rows;
  int64_t w, h;
  size_t stride;      /* w + 2 PAD                                         */
  int fd;             /* the footprint's rows down: rows kept above the band */
  int32_t *above;     /* fd rows above the band (band rows -fd .. -1)      */
  int32_t *ering;     /* band row y at slot y % ne                          */
  int64_t ne;
  uint8_t *lv;        /* levels of band row y at slot y % nlv               */
  int64_t nlv;
  int64_t *stored;    /* columns of each lv slot's row already stored       */
  int32_t *in;        /* one chunk of input                                 */
  ht_weight_box bx;
  int levels;
  int32_t level_value[256];
} stream_state;

/* Errors of band row y (< 0: a row above the band), at column 0. */
static inline int32_t *erow(const stream_state *c, int64_t y)
{
  if (y < 0)
    return c->above + (size_t)(c->fd + y) * c->stride + PAD;
  return c->ering + (size_t)(y % c->ne) * c->stride + PAD;
}

/* Columns x0 .. x1 - 1 of band row y, for footprint (L, R, D). */
HT_AI void chunk_kernel(const int L, const int R, const int D, const bool binary, const stream_state *c, int64_t y,
                        int64_t x0, int64_t x1)
{
  int32_t *restrict cur = erow(c, y);
  const int32_t *src[HT_FILTER_MAX_DOWN + 1];
  for (int dy = 1; dy <= D; dy++)
    src[dy] = erow(c, y - dy);
  int32_t q[HT_FILTER_MAX_DOWN + 1][HT_BOX_WIDTH];
  for (int dy = 0; dy <= D; dy++)
    for (int k = 0; k < HT_BOX_WIDTH; k++)
      q[dy][k] = c->bx.q[dy][k];
  const int32_t *restrict in = c->in;
  uint8_t *restrict lv = c->lv + (size_t)(y % c->nlv) * (size_t)c->w;
  c->rows->load(c->rows, y, x0, x1 - x0, c->in);
  for (int64_t x = x0; x < x1; x++) {
    int32_t v = in[x - x0];
#pragma GCC unroll 8
    for (int dx = 1; dx <= R; dx++)
      v += ht_fx_term(cur[x - dx], q[0][HT_FILTER_MAX_LEFT + dx]);
#pragma GCC unroll 4
    for (int dy = 1; dy <= D; dy++) {
#pragma GCC unroll 16
      for (int dx = -L; dx <= R; dx++)
        v += ht_fx_term(src[dy][x - dx], q[dy][HT_FILTER_MAX_LEFT + dx]);
    }
    const int32_t level = binary ? ht_fx_binary(v) : ht_fx_quantize(v, c->levels);
    cur[x] = v - (binary ? (level ? HT_FX_ONE : 0) : c->level_value[level]);
    lv[x] = (uint8_t)level;
  }
}

typedef void (*chunk_fn)(const stream_state *c, int64_t y, int64_t x0, int64_t x1);
#define HT_STREAM_KERNELS(L, R, D)                                                                     \
  static void chunk_##L##_##R##_##D##_bin(const stream_state *c, int64_t y, int64_t x0, int64_t x1)    \
  {                                                                                                    \
    chunk_kernel(L, R, D, true, c, y, x0, x1);                                                         \
  }                                                                                                    \
  static void chunk_##L##_##R##_##D##_lev(const stream_state *c, int64_t y, int64_t x0, int64_t x1)    \
  {                                                                                                    \
    chunk_kernel(L, R, D, false, c, y, x0, x1);                                                        \
  }
HT_FOOTPRINTS(HT_STREAM_KERNELS)
#undef HT_STREAM_KERNELS
#define HT_STREAM_ENTRY(L, R, D) { chunk_##L##_##R##_##D##_bin, chunk_##L##_##R##_##D##_lev },
static const chunk_fn chunk_table[HT_FOOTPRINT_COUNT][2] = { HT_FOOTPRINTS(HT_STREAM_ENTRY) };
#undef HT_STREAM_ENTRY

/* Stores the finished levels of band row y up to column x1 (for 1-bit
 * output in whole bytes until the row ends). */
static void store_levels(stream_state *c, int64_t y, int64_t x1)
{
  const size_t slot = (size_t)(y % c->nlv);
  int64_t end = x1 == c->w ? x1 : x1 & ~(int64_t)7;
  if (end > c->stored[slot]) {
    const uint8_t *lv = c->lv + slot * (size_t)c->w;
    c->rows->store(c->rows, y, c->stored[slot], end - c->stored[slot], lv + c->stored[slot]);
    c->stored[slot] = end;
  }
}

/* Copies columns x0 .. x1 - 1 of the carried-in rows into the rows above
 * the band (the last carry rows of `above`; the rest stay zero). */
static void take_carry(stream_state *c, int dc, int64_t x0, int64_t x1)
{
  for (int up = 1; up <= dc; up++) {
    const int32_t *src = ht_job_carry_in_row(c->job, c->w, up);
    if (src)
      memcpy(erow(c, -up) + x0, src + x0, (size_t)(x1 - x0) * sizeof(int32_t));
  }
}

/* Columns x0 .. x1 - 1 of the carried-out rows: the band's last dc rows,
 * or rows above it where the band is shorter. */
static void give_carry(const stream_state *c, int dc, int64_t x0, int64_t x1)
{
  for (int r = 0; r < dc; r++)
    memcpy(c->job->carry_out + (size_t)r * (size_t)c->w + x0, erow(c, c->h - dc + r) + x0,
           (size_t)(x1 - x0) * sizeof(int32_t));
}

ht_status ht_stream_run(ht_job *job, const ht_rows *rows)
{
  const ht_filter *f = &job->filter;
  const ht_stream *st = job->stream;
  const ht_footprint fp = ht_footprint_of(f);
  const int64_t w = rows->width, h = rows->height;
  const int dc = ht_job_carry_rows(job);
  const int64_t k = st ? (st->chunk < w ? st->chunk : w) : w;
  const int64_t nch = (w + k - 1) / k;
  const int64_t skew = ((int64_t)f->reach_left + k - 1) / k;
  /* Rows in flight at once: row t runs in steps t*skew .. t*skew + nch - 1,
   * so row t + n starts after row t ended once n * skew >= nch. A row's
   * errors are read by the fd rows below it, so they live fd rows longer. */
  const int64_t flight = skew ? (nch + skew - 1) / skew + 1 : h;
  stream_state c = { .job = job, .rows = rows, .w = w, .h = h, .fd = fp.down };
  c.stride = (size_t)w + 2 * PAD;
  c.nlv = flight < h ? flight : h;
  c.ne = flight + fp.down < h ? flight + fp.down : h;
  c.levels = job->levels;
  for (int i = 0; i < job->levels; i++)
    c.level_value[i] = ht_fx_level(i, job->levels);
  ht_weight_box_of(f, &c.bx);
  c.above = ht_alloc(job, (size_t)fp.down, c.stride * sizeof(int32_t));
  c.ering = ht_alloc(job, (size_t)c.ne, c.stride * sizeof(int32_t));
  c.lv = ht_alloc_raw(job, (size_t)c.nlv, (size_t)w);
  c.stored = ht_alloc(job, (size_t)c.nlv, sizeof(int64_t));
  c.in = ht_alloc_raw(job, (size_t)k, sizeof(int32_t));
  ht_status s = HT_OK;
  if (!c.above || !c.ering || !c.lv || !c.stored || !c.in) {
    s = HT_ERR_NO_MEMORY;
    goto out;
  }
  const chunk_fn run = chunk_table[fp.index][job->levels == 2 ? 0 : 1];
  /* carried-in columns there so far: all of them unless they stream */
  const bool streamed_in = job->carry_in && dc > 0 && st && st->need;
  int64_t have = 0;
  if (!streamed_in) {
    take_carry(&c, dc, 0, w);
    have = w;
  }
  const int64_t steps = nch + (h - 1) * skew;
  int64_t given = 0; /* carried-out columns passed on */
  for (int64_t step = 0; step < steps; step++) {
    /* rows t with 0 <= step - t * skew < nch */
    int64_t t_lo = 0, t_hi = h - 1;
    if (skew) {
      t_lo = step >= nch ? (step - nch + skew) / skew : 0;
      t_hi = step / skew < h - 1 ? step / skew : h - 1;
    } else if (step >= nch) {
      break;
    }
    for (int64_t t = t_lo; t <= t_hi; t++) {
      const int64_t x0 = (step - t * skew) * k, x1 = x0 + k < w ? x0 + k : w;
      if (t == 0 && have < w) {
        const int64_t want = x1 + f->reach_left < w ? x1 + f->reach_left : w;
        if (want > have) {
          if (!st->need(want, st->user)) {
            ht_set_msg(job->msg, "streamed band: stopped while waiting for carried rows");
            s = HT_ERR_CANCELLED;
            goto out;
          }
          take_carry(&c, dc, have, want);
          have = want;
        }
      }
      if (x0 == 0) /* row t takes its slot of levels */
        c.stored[t % c.nlv] = 0;
      run(&c, t, x0, x1);
      store_levels(&c, t, x1);
      if (t == h - 1 && x1 > given) {
        if (job->carry_out && dc > 0)
          give_carry(&c, dc, given, x1);
        given = x1;
        if (st && st->ready && !st->ready(x1, st->user)) {
          ht_set_msg(job->msg, "streamed band: stopped after passing on carried rows");
          s = HT_ERR_CANCELLED;
          goto out;
        }
      }
    }
    if (!ht_job_tick(job, step + 1, steps)) {
      s = HT_ERR_CANCELLED;
      goto out;
    }
  }
out:
  free(c.above);
  free(c.ering);
  free(c.lv);
  free(c.stored);
  free(c.in);
  return s;
}

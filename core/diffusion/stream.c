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
 * The arithmetic is core/shared/fixed.h's, terms summed per pixel as in ec.c
 * (integer sums do not depend on order), with the filter as the dense
 * weight box of footprint.h and the footprint a compile-time constant,
 * so the bits are those of every other variant. As a plain variant
 * (no stream) the chunk is the whole row: row-by-row error collection
 * with O(width) memory. */
#include "footprint.h"
#include "diffusion.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
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
                        int64_t x0, int64_t x1, int32_t *restrict in)
{
  int32_t *restrict cur = erow(c, y);
  const int32_t *src[HT_FILTER_MAX_DOWN + 1];
  for (int dy = 1; dy <= D; dy++)
    src[dy] = erow(c, y - dy);
  int32_t q[HT_FILTER_MAX_DOWN + 1][HT_BOX_WIDTH];
  for (int dy = 0; dy <= D; dy++)
    for (int k = 0; k < HT_BOX_WIDTH; k++)
      q[dy][k] = c->bx.q[dy][k];
  uint8_t *restrict lv = c->lv + (size_t)(y % c->nlv) * (size_t)c->w;
  c->rows->load(c->rows, y, x0, x1 - x0, in);
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

typedef void (*chunk_fn)(const stream_state *c, int64_t y, int64_t x0, int64_t x1, int32_t *in);
#define HT_STREAM_KERNELS(L, R, D)                                                                     \
  static void chunk_##L##_##R##_##D##_bin(const stream_state *c, int64_t y, int64_t x0, int64_t x1,   \
                                           int32_t *in)                                               \
  {                                                                                                    \
    chunk_kernel(L, R, D, true, c, y, x0, x1, in);                                                     \
  }                                                                                                    \
  static void chunk_##L##_##R##_##D##_lev(const stream_state *c, int64_t y, int64_t x0, int64_t x1,   \
                                           int32_t *in)                                               \
  {                                                                                                    \
    chunk_kernel(L, R, D, false, c, y, x0, x1, in);                                                    \
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

/* Threads within a band: row t runs on thread t mod T, chunk by chunk,
 * each chunk once row t - 1 has finished the columns it collects from
 * (the same rule as the steps above, kept by a counter of finished
 * columns per row, written with release and read with acquire: what row
 * t - 1 read of row t - 2 it had waited for, so the chain covers every
 * row above). The calling thread runs rows 0, T, 2T ... and is the only
 * one to call `need` (row 0 is its own) and `ready`, which it calls
 * whenever it would wait and at the end, as the last row's counter
 * grows. Rings are whole bands here: a row may lag its neighbours by
 * more than the steps allow. Columns the filter does not reach (weight 0
 * in the dense box) may be read while another thread writes them; their
 * value never counts. */
typedef struct {
  stream_state *c;
  chunk_fn run;
  int T;
  int64_t k, reach;
  _Atomic int64_t *prog; /* columns finished, per band row */
  atomic_int stop;
  int32_t *in;           /* T chunk buffers */
  int64_t given;         /* calling thread: carried-out columns passed on */
  int dc;
  ht_status status;
} team;

static void team_chunk(team *tm, int64_t t, int64_t x0, int64_t x1, int32_t *in)
{
  stream_state *c = tm->c;
  if (x0 == 0)
    c->stored[t % c->nlv] = 0;
  tm->run(c, t, x0, x1, in);
  store_levels(c, t, x1);
  atomic_store_explicit(&tm->prog[t], x1, memory_order_release);
}

/* Calling thread: passes on what the last row has finished. */
static bool team_pump(team *tm)
{
  stream_state *c = tm->c;
  const ht_stream *st = c->job->stream;
  const int64_t x = atomic_load_explicit(&tm->prog[c->h - 1], memory_order_acquire);
  if (x > tm->given) {
    if (c->job->carry_out && tm->dc > 0)
      give_carry(c, tm->dc, tm->given, x);
    tm->given = x;
    if (st && st->ready && !st->ready(x, st->user)) {
      ht_set_msg(c->job->msg, "streamed band: stopped after passing on carried rows");
      tm->status = HT_ERR_CANCELLED;
      return false;
    }
    if (!ht_job_tick(c->job, x, c->w)) {
      tm->status = HT_ERR_CANCELLED;
      return false;
    }
  }
  return true;
}

/* Waits until band row t has finished `want` columns; false once the
 * team stops. The calling thread pumps meanwhile. */
static bool team_wait(team *tm, int64_t t, int64_t want, bool caller)
{
  for (unsigned spins = 0; atomic_load_explicit(&tm->prog[t], memory_order_acquire) < want; spins++) {
    if (atomic_load_explicit(&tm->stop, memory_order_relaxed))
      return false;
    if (caller && !team_pump(tm)) {
      atomic_store(&tm->stop, 1);
      return false;
    }
    if ((spins & 63) == 63)
      sched_yield();
  }
  return true;
}

/* Rows i, i + T, ... of the band; thread 0 is the calling thread. */
static void team_rows(team *tm, int i)
{
  stream_state *c = tm->c;
  const ht_stream *st = c->job->stream;
  int32_t *in = tm->in + (size_t)i * (size_t)tm->k;
  int64_t have = i == 0 && c->job->carry_in && tm->dc > 0 && st && st->need ? 0 : c->w;
  for (int64_t t = i; t < c->h; t += tm->T)
    for (int64_t x0 = 0; x0 < c->w; x0 += tm->k) {
      const int64_t x1 = x0 + tm->k < c->w ? x0 + tm->k : c->w;
      const int64_t want = x1 + tm->reach < c->w ? x1 + tm->reach : c->w;
      if (t == 0 && have < want) {
        if (!st->need(want, st->user)) {
          ht_set_msg(c->job->msg, "streamed band: stopped while waiting for carried rows");
          tm->status = HT_ERR_CANCELLED;
          atomic_store(&tm->stop, 1);
          return;
        }
        take_carry(c, tm->dc, have, want);
        have = want;
      }
      if (t > 0 && !team_wait(tm, t - 1, want, i == 0))
        return;
      team_chunk(tm, t, x0, x1, in);
    }
  if (i == 0) /* the last row's columns, as they come */
    team_wait(tm, c->h - 1, c->w, true), team_pump(tm);
}

typedef struct {
  team *tm;
  int i;
} worker;

static void *team_main(void *arg)
{
  worker *wk = arg;
  team_rows(wk->tm, wk->i);
  return NULL;
}

static ht_status run_team(stream_state *c, chunk_fn run, int T, int64_t k, int dc)
{
  ht_job *job = c->job;
  team tm = { .c = c, .run = run, .T = T, .k = k, .reach = job->filter.reach_left, .dc = dc, .status = HT_OK };
  atomic_init(&tm.stop, 0);
  tm.prog = ht_alloc(job, (size_t)c->h, sizeof *tm.prog);
  tm.in = ht_alloc_raw(job, (size_t)T * (size_t)k, sizeof(int32_t));
  pthread_t *tid = ht_alloc(job, (size_t)T, sizeof *tid);
  worker *args = ht_alloc(job, (size_t)T, sizeof *args);
  ht_status s = HT_OK;
  if (!tm.prog || !tm.in || !tid || !args) {
    s = HT_ERR_NO_MEMORY;
    goto out;
  }
  for (int64_t t = 0; t < c->h; t++)
    atomic_init(&tm.prog[t], 0);
  if (!(job->carry_in && dc > 0 && job->stream && job->stream->need))
    take_carry(c, dc, 0, c->w);
  int started = 1;
  for (; started < T; started++) {
    args[started] = (worker){ &tm, started };
    if (pthread_create(&tid[started], NULL, team_main, &args[started]) != 0)
      break;
  }
  if (started < T) {
    atomic_store(&tm.stop, 1);
    ht_set_msg(job->msg, "cannot start %d threads for a streamed band", T);
    tm.status = HT_ERR_NO_MEMORY;
  } else {
    team_rows(&tm, 0);
  }
  atomic_store(&tm.stop, 1); /* workers waiting for a row that never comes, on a failure */
  for (int i = 1; i < started; i++)
    pthread_join(tid[i], NULL);
  s = tm.status;
out:
  free((void *)tm.prog);
  free(tm.in);
  free(tid);
  free(args);
  return s;
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
  /* threads only where rows can overlap: chunks narrower than a row */
  const int T = !st || k >= w || job->threads < 1 ? 1 : job->threads < h ? job->threads : (int)h;
  stream_state c = { .job = job, .rows = rows, .w = w, .h = h, .fd = fp.down };
  c.stride = (size_t)w + 2 * PAD;
  c.nlv = T == 1 && flight < h ? flight : h;
  c.ne = T == 1 && flight + fp.down < h ? flight + fp.down : h;
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
  if (T > 1) {
    s = run_team(&c, run, T, k, dc);
    goto out;
  }
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
      run(&c, t, x0, x1, c.in);
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

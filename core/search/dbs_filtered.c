/* Direct binary search on the filtered objective: Analoui and Allebach,
 * "Model-based halftoning using direct binary search" (1992), in the
 * efficient form of Lieberman and Allebach, "Efficient model based
 * halftoning using direct binary search" (ICIP 1997; neither paper is
 * in shared/papers, so no section is named): the error e = b - a seen
 * through the eye V, E = sum (V*e)^2, searched through
 * the cross-correlation c_ep = c_pp * e of the error with the eye's
 * autocorrelation c_pp, so that a candidate toggle or swap costs O(1) and
 * an accepted one O((4r + 1)^2). The integers are core/shared/filtered.h's.
 *
 * The candidates, their order and the tie rule are dbs.c's: at pixel p
 * toggling p, then swapping p with each of its 8 neighbours whose value
 * differs (inside the image), in raster order of (dy, dx); the one that
 * lowers E most, strictly, and among equal ones the first in that order.
 *
 * The schedule (schedule.c) is the search's, with the windows' "affected
 * region" the c_ep that a change reaches, 2r around the 3 x 3 window: so
 * its block side is ht_sx_block_side(2r, 3) = 4r + 2, and a change makes
 * due the windows whose c_ep it changed, within 2r (ht_sx.reach). */
#include "search.h"
#include "../shared/filtered.h"
#include "pool.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
  ht_sx s;       /* the schedule's view: b, the skip map, the positions */
  int64_t *cep;  /* c_ep at every pixel, width a row                    */
  ht_cpp cpp;
} fdbs;

/* c_ep(n) of row y from e = b - a, by its definition: the sum over the
 * pixels m within 2r inside the image (e is 0 outside). */
static void cross_correlation_row(fdbs *f, const int32_t *a, int64_t y)
{
  const int64_t W = f->s.width, H = f->s.height;
  const int R = f->cpp.radius;
  for (int64_t x = 0; x < W; x++) {
    int64_t c = 0;
    for (int dy = -R; dy <= R; dy++) {
      const int64_t my = y + dy;
      if (my < 0 || my >= H)
        continue;
      for (int dx = -R; dx <= R; dx++) {
        const int64_t mx = x + dx;
        if (mx < 0 || mx >= W)
          continue;
        const size_t m = (size_t)(my * W + mx);
        const int32_t e = (f->s.b[m] ? HT_FX_ONE : 0) - a[m];
        c += (int64_t)ht_cpp_at(&f->cpp, dx, dy) * e;
      }
    }
    f->cep[y * W + x] = c;
  }
}

/* The rows go to the job's threads as they ask: each row is a function
 * of b and a alone, so any split gives the same c_ep. */
typedef struct {
  fdbs *f;
  const int32_t *a;
  atomic_llong next;
} cc_work;

static void cross_correlation_rows(void *arg, int k)
{
  cc_work *cw = arg;
  (void)k;
  for (;;) {
    const int64_t y = atomic_fetch_add_explicit(&cw->next, 1, memory_order_relaxed);
    if (y >= cw->f->s.height)
      return;
    cross_correlation_row(cw->f, cw->a, y);
  }
}

static void cross_correlation(fdbs *f, const int32_t *a)
{
  cc_work cw = { f, a, 0 };
  ht_job *job = f->s.job;
  int helpers = job->threads - 1 < f->s.height - 1 ? job->threads - 1 : (int)(f->s.height - 1);
  helpers = job->pool && helpers > 0 ? ht_pool_start(job->pool, helpers, cross_correlation_rows, &cw) : 0;
  cross_correlation_rows(&cw, 0);
  if (helpers > 0)
    ht_pool_wait(job->pool);
}

/* Pixel (x, y) changes by s 65535: c_ep follows over 2r around it. */
static void apply(const fdbs *f, int64_t x, int64_t y, int s)
{
  const int64_t W = f->s.width, H = f->s.height;
  const int R = f->cpp.radius;
  f->s.b[y * W + x] = (uint8_t)(s > 0);
  const int64_t a0 = (int64_t)s * HT_FX_ONE;
  for (int dy = -R; dy <= R; dy++) {
    const int64_t ny = y + dy;
    if (ny < 0 || ny >= H)
      continue;
    int64_t *row = f->cep + ny * W;
    for (int dx = -R; dx <= R; dx++) {
      const int64_t nx = x + dx;
      if (nx >= 0 && nx < W)
        row[nx] += a0 * ht_cpp_at(&f->cpp, dx, dy);
    }
  }
}

/* The step at pixel (i, j) (search.h's ht_sx_step; the window is the
 * 3 x 3 around it). */
static bool step(const ht_sx *sx, ht_sx_scratch *w, int64_t i, int64_t j)
{
  const fdbs *f = (const fdbs *)(const void *)sx;
  (void)w;
  const int64_t W = sx->width, H = sx->height, p = i * W + j;
  const int s = sx->b[p] ? -1 : 1; /* p's change: to white +1, to black -1 */
  const int64_t cm = f->cep[p];
  int64_t best = ht_filtered_toggle(&f->cpp, cm, s);
  int kept = best < 0 ? 4 : -1; /* 4: the toggle; k != 4: the swap with neighbour k */
  if (best > 0)
    best = 0;
  for (int k = 0; k < 9; k++) {
    const int dy = k / 3 - 1, dx = k % 3 - 1;
    const int64_t ny = i + dy, nx = j + dx;
    if (k == 4 || ny < 0 || ny >= H || nx < 0 || nx >= W || sx->b[ny * W + nx] == sx->b[p])
      continue;
    const int64_t d = ht_filtered_swap(&f->cpp, cm, f->cep[ny * W + nx], s, dx, dy);
    if (d < best) {
      best = d;
      kept = k;
    }
  }
  if (kept < 0)
    return false;
  apply(f, j, i, s);
  int64_t y0 = i, y1 = i, x0 = j, x1 = j;
  if (kept != 4) {
    const int64_t ny = i + kept / 3 - 1, nx = j + kept % 3 - 1;
    apply(f, nx, ny, -s);
    y0 = ny < y0 ? ny : y0;
    y1 = ny > y1 ? ny : y1;
    x0 = nx < x0 ? nx : x0;
    x1 = nx > x1 ? nx : x1;
  }
  ht_sx_mark(sx, y0, y1, x0, x1);
  return true;
}

ht_status ht_dbs_filtered_run(ht_job *job, const ht_rows *rows)
{
  const ht_status refused = ht_search_check_job(job, "dbs");
  if (refused != HT_OK)
    return refused;
  fdbs f;
  memset(&f, 0, sizeof f);
  ht_sx *s = &f.s;
  s->job = job;
  s->width = rows->width;
  s->height = rows->height;
  /* the schedule's "region" radius: what a change of the window reaches */
  s->r = 2 * job->eye.radius;
  s->reach = s->r;
  s->wh = s->ww = 3;
  s->off = -1;
  s->ph = s->height;
  s->pw = s->width;
  s->q = ht_sx_block_side(s->r, 3);
  s->step = step;
  ht_cpp_init(&f.cpp, &job->eye);
  const size_t n = (size_t)s->width * (size_t)s->height;
  s->b = ht_alloc(job, n, 1);
  s->dirty = ht_alloc(job, n, sizeof *s->dirty);
  f.cep = ht_alloc_raw(job, n, sizeof *f.cep);
  int32_t *a = ht_alloc_raw(job, n, sizeof *a);
  ht_status st = HT_OK;
  if (!s->b || !s->dirty || !f.cep || !a) {
    st = HT_ERR_NO_MEMORY;
    goto out;
  }
  for (int64_t y = 0; y < s->height; y++)
    rows->load(rows, y, 0, s->width, a + (size_t)y * (size_t)s->width);
  if (job->init == HT_INIT_RANDOM)
    ht_search_random_start(job, a, s->b, s->width, s->height);
  else if ((st = ht_search_fs_start(job, rows, s->b)) != HT_OK)
    goto out;
  cross_correlation(&f, a);
  for (size_t i = 0; i < n; i++)
    atomic_init(&s->dirty[i], 1);
  st = ht_sx_schedule_run(s);
  ht_job_note_rounds(job, s->rounds);
  atomic_store(&ht_sx_last_rounds, s->rounds);
  atomic_store(&ht_sx_last_searched, s->searched);
  atomic_store(&ht_sx_last_changed, s->changed);
  if (st == HT_OK)
    ht_sx_store(s, rows);
  else if (st == HT_ERR_CANCELLED)
    ht_set_msg(job->msg, "cancelled");
out:
  free(a);
  free(f.cep);
  ht_sx_free(s);
  return st;
}

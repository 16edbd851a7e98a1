/* The books of a plane being searched (search.h): the initial image, the
 * error field e = a * HT_EYE_ONE - V*b' (core/shared/eye.h, Kouge et al.
 * formulas 2 and 3) and its upkeep, a window's region and flip tables.
 *
 * The field is made once, from the input and the initial image, and
 * from then on changed only by the flips the steps apply: flipping a
 * pixel changes e by 65535 w at the (2r + 1)^2 pixels it reaches inside
 * the image (Sec. III: "the update of E can be also computed by
 * adding/subtracting the values of the Gaussian filter"). Pixels outside
 * the image see the input there (eye.h's border rule), which no flip
 * changes, so they enter only the initial field. */
#include "search.h"
#include "../shared/rng.h"
#include "diffusion/diffusion.h"

#include <stdlib.h>
#include <string.h>

/* n vectors aligned to their size, zeroed; *mem is what to free. */
static ht_sxv *vectors(ht_job *job, size_t n, void **mem)
{
  char *p = ht_alloc(job, n * sizeof(ht_sxv) + sizeof(ht_sxv) - 1, 1);
  *mem = p;
  return p ? (ht_sxv *)(void *)(p + ((sizeof(ht_sxv) - (uintptr_t)p % sizeof(ht_sxv)) % sizeof(ht_sxv))) : NULL;
}

/* ---------------------------------------------------------- initial image */

/* Kouge et al., Sec. III, Step 1: white with probability a / 65536 from
 * the counter-based generator, so that every backend and thread draws
 * the same image. */
void ht_search_random_start(const ht_job *job, const int32_t *a, uint8_t *b, int64_t w, int64_t h)
{
  for (int64_t y = 0; y < h; y++)
    for (int64_t x = 0; x < w; x++) {
      const size_t p = (size_t)(y * w + x);
      const uint32_t r = ht_rng(job->seed, (uint32_t)job->plane, (uint32_t)x, (uint32_t)(job->y0 + y));
      b[p] = (uint8_t)(ht_rng_fx(r) < a[p]);
    }
}

/* The rows of the error diffusion that makes the Floyd-Steinberg start:
 * the plane's own loader, a store into b. */
typedef struct {
  ht_rows rows;
  uint8_t *b;
} init_rows;

static void init_store(const ht_rows *r, int64_t y, int64_t x0, int64_t n, const uint8_t *levels)
{
  const init_rows *ir = (const init_rows *)(const void *)r;
  memcpy(ir->b + (size_t)(y * r->width + x0), levels, (size_t)n);
}

ht_status ht_search_fs_start(ht_job *job, const ht_rows *rows, uint8_t *b)
{
  /* the wavefront gives the reference's bits (the core suite checks
   * that) on the job's threads; progress stays where the search starts */
  ht_job ed = *job;
  atomic_init(&ed.cancelled, 0);
  ed.method = HT_METHOD_ERROR_DIFFUSION;
  ed.variant = HT_VARIANT_WAVEFRONT;
  ed.filter = *ht_filter_builtin(HT_FILTER_FLOYD_STEINBERG);
  ed.levels = 2;
  ed.scan = HT_SCAN_RASTER;
  ed.carry_in = NULL;
  ed.carry_out = NULL;
  ed.span = 0.0;
  init_rows ir = { *rows, b };
  ir.rows.store = init_store;
  const ht_status st = ht_wavefront_run(&ed, &ir.rows);
  job->last_tick_ns = ed.last_tick_ns;
  if (ht_job_cancelled(&ed))
    atomic_store(&job->cancelled, 1);
  return st;
}

/* ------------------------------------------------------------ error field */

/* e at (x, y) by eye.h's definition, outside pixels seeing the input. */
static int32_t error_at(const ht_eye *eye, const int32_t *a, const uint8_t *b, int64_t w, int64_t h, int64_t x,
                        int64_t y)
{
  int32_t e = a[y * w + x] * HT_EYE_ONE;
  for (int dy = -eye->radius; dy <= eye->radius; dy++)
    for (int dx = -eye->radius; dx <= eye->radius; dx++) {
      const int64_t qx = x + dx, qy = y + dy;
      const bool inside = qx >= 0 && qx < w && qy >= 0 && qy < h;
      const int32_t v = inside ? (b[qy * w + qx] ? HT_FX_ONE : 0) : a[ht_eye_clamp(qy, h) * w + ht_eye_clamp(qx, w)];
      e -= ht_eye_weight(eye, dx, dy) * v;
    }
  return e;
}

/* The whole field: pixels r or more from every edge as 49 (for r = 3)
 * multiply-adds of whole rows, which vectorise; the rest one by one. */
static void error_field(ht_sx *s, const int32_t *a, int32_t *acc)
{
  const ht_eye *eye = &s->job->eye;
  const int64_t w = s->width, h = s->height, r = s->r;
  const int64_t xa = r < w ? r : w, xb = w - r > xa ? w - r : xa;
  for (int64_t y = 0; y < h; y++) {
    int32_t *e = s->e + y * w;
    const int32_t *ay = a + y * w;
    const bool rows_in = y >= r && y < h - r;
    if (rows_in && xb > xa) {
      memset(acc, 0, (size_t)w * sizeof *acc);
      for (int dy = -eye->radius; dy <= eye->radius; dy++)
        for (int dx = -eye->radius; dx <= eye->radius; dx++) {
          const int32_t wt = ht_eye_weight(eye, dx, dy);
          const uint8_t *bb = s->b + (y + dy) * w + dx;
          for (int64_t x = xa; x < xb; x++)
            acc[x] += wt * (int32_t)bb[x];
        }
      /* sum of w over the white pixels <= HT_EYE_ONE: the product fits */
      for (int64_t x = xa; x < xb; x++)
        e[x] = ay[x] * HT_EYE_ONE - HT_FX_ONE * acc[x];
    }
    for (int64_t x = 0; x < w; x++) {
      if (rows_in && x == xa)
        x = xb; /* done above */
      if (x < w)
        e[x] = error_at(eye, a, s->b, w, h, x, y);
    }
  }
}

/* Flip tables of windows whose region lies inside the image: by window
 * column only (the row is where the flip starts in the region). */
static void interior_tables(ht_sx *s)
{
  const ht_eye *eye = &s->job->eye;
  const int r = s->r, nv = s->nv;
  for (int kx = 0; kx < s->ww; kx++)
    for (int dir = 0; dir < 2; dir++) {
      ht_sxv *t = s->itab + (size_t)((kx * 2 + dir) * s->trows * nv);
      for (int dy = -r; dy <= r; dy++)
        for (int dx = -r; dx <= r; dx++) {
          const int c = kx + dx + r;
          t[(dy + r + 1) * nv + c / HT_SX_LANES][c % HT_SX_LANES] =
            (dir ? -HT_FX_ONE : HT_FX_ONE) * ht_eye_weight(eye, dx, dy);
        }
    }
}

ht_status ht_sx_init(ht_sx *s, ht_job *job, const ht_rows *rows, int wh, int ww, int off, int64_t ph, int64_t pw,
                     int side)
{
  memset(s, 0, sizeof *s);
  s->job = job;
  s->width = rows->width;
  s->height = rows->height;
  s->r = job->eye.radius;
  s->wh = wh;
  s->ww = ww;
  s->off = off;
  s->ph = ph;
  s->pw = pw;
  s->q = ht_sx_block_side(s->r, side);
  s->reach = 2 * s->r;
  s->rh = wh + 2 * s->r;
  s->rw = ww + 2 * s->r;
  s->nv = (s->rw + HT_SX_LANES - 1) / HT_SX_LANES;
  s->trows = 2 * s->r + 3;
  const size_t n = (size_t)s->width * (size_t)s->height;
  s->e = ht_alloc_raw(job, n, sizeof *s->e);
  s->b = ht_alloc(job, n, 1);
  s->dirty = ht_alloc(job, (size_t)ph * (size_t)pw, sizeof *s->dirty);
  s->itab = vectors(job, (size_t)(ww * 2 * s->trows * s->nv), &s->itab_mem);
  int32_t *a = ht_alloc_raw(job, n, sizeof *a);
  int32_t *acc = ht_alloc_raw(job, (size_t)s->width, sizeof *acc);
  ht_status st = HT_OK;
  if (!s->e || !s->b || !s->dirty || !s->itab || !a || !acc) {
    st = HT_ERR_NO_MEMORY;
    goto out;
  }
  for (int64_t y = 0; y < s->height; y++)
    rows->load(rows, y, 0, s->width, a + (size_t)y * (size_t)s->width);
  if (job->init == HT_INIT_RANDOM)
    ht_search_random_start(job, a, s->b, s->width, s->height);
  else if ((st = ht_search_fs_start(s->job, rows, s->b)) != HT_OK)
    goto out;
  error_field(s, a, acc);
  interior_tables(s);
  /* every window is due in the first round */
  for (size_t i = 0; i < (size_t)ph * (size_t)pw; i++)
    atomic_init(&s->dirty[i], 1);
out:
  free(a);
  free(acc);
  return st;
}

void ht_sx_free(ht_sx *s)
{
  free(s->e);
  free(s->b);
  free(s->dirty);
  free(s->itab_mem);
  memset(s, 0, sizeof *s);
}

bool ht_sx_scratch_init(const ht_sx *s, ht_sx_scratch *w, size_t work_vectors)
{
  memset(w, 0, sizeof *w);
  const size_t ne = (size_t)(s->rh * s->nv), nt = (size_t)(s->wh * s->ww * 2 * s->trows * s->nv);
  w->e = vectors(s->job, ne + nt + work_vectors, &w->mem);
  if (!w->e)
    return false;
  w->etab = w->e + ne;
  w->work = w->etab + nt;
  return true;
}

void ht_sx_scratch_free(ht_sx_scratch *w)
{
  free(w->mem);
  memset(w, 0, sizeof *w);
}

/* ------------------------------------------------------------- a window */

/* The edge window's table of pixel k: the interior one with the rows
 * and lanes that fall outside the image left zero, so that those lanes
 * of the region (zero too) never change and never count. */
static void edge_table(const ht_sx *s, ht_sx_scratch *w, int k, int64_t py, int64_t px)
{
  const ht_eye *eye = &s->job->eye;
  const int r = s->r, nv = s->nv, kx = k % s->ww;
  for (int dir = 0; dir < 2; dir++) {
    ht_sxv *t = w->etab + (size_t)((k * 2 + dir) * s->trows * nv);
    memset(t, 0, (size_t)(s->trows * nv) * sizeof *t);
    for (int dy = -r; dy <= r; dy++) {
      if (py + dy < 0 || py + dy >= s->height)
        continue;
      for (int dx = -r; dx <= r; dx++) {
        if (px + dx < 0 || px + dx >= s->width)
          continue;
        const int c = kx + dx + r;
        t[(dy + r + 1) * nv + c / HT_SX_LANES][c % HT_SX_LANES] =
          (dir ? -HT_FX_ONE : HT_FX_ONE) * ht_eye_weight(eye, dx, dy);
      }
    }
    w->tab[k][dir] = t + nv;
  }
}

void ht_sx_begin(const ht_sx *s, ht_sx_scratch *w, int64_t i, int64_t j)
{
  const int64_t W = s->width, H = s->height;
  const int nv = s->nv;
  w->y0 = i + s->off;
  w->x0 = j + s->off;
  w->ry0 = w->y0 - s->r;
  w->rx0 = w->x0 - s->r;
  const bool interior = w->ry0 >= 0 && w->ry0 + s->rh <= H && w->rx0 >= 0 && w->rx0 + s->rw <= W;
  const int64_t xa = w->rx0 < 0 ? 0 : w->rx0, xb = w->rx0 + s->rw > W ? W : w->rx0 + s->rw;
  for (int ly = 0; ly < s->rh; ly++) {
    ht_sxv *row = w->e + ly * nv;
    memset(row, 0, (size_t)nv * sizeof *row);
    const int64_t y = w->ry0 + ly;
    if (y >= 0 && y < H && xb > xa)
      memcpy((int32_t *)(void *)row + (xa - w->rx0), s->e + y * W + xa, (size_t)(xb - xa) * sizeof(int32_t));
  }
  w->inside = 0;
  w->cur = 0;
  for (int k = 0; k < s->wh * s->ww; k++) {
    const int64_t py = w->y0 + k / s->ww, px = w->x0 + k % s->ww;
    if (py < 0 || py >= H || px < 0 || px >= W) {
      w->tab[k][0] = w->tab[k][1] = NULL;
      continue;
    }
    w->inside |= 1u << k;
    w->cur |= (uint32_t)s->b[py * W + px] << k;
    if (interior) {
      const int kx = k % s->ww;
      w->tab[k][0] = s->itab + (size_t)((kx * 2 * s->trows + 1) * nv);
      w->tab[k][1] = s->itab + (size_t)(((kx * 2 + 1) * s->trows + 1) * nv);
    } else {
      edge_table(s, w, k, py, px);
    }
  }
}

void ht_sx_mark(const ht_sx *s, int64_t y0, int64_t y1, int64_t x0, int64_t x1)
{
  /* position i's window has rows i + off .. i + off + wh - 1 */
  const int64_t d = s->reach;
  int64_t i0 = y0 - d - s->wh + 1 - s->off, i1 = y1 + d - s->off;
  int64_t j0 = x0 - d - s->ww + 1 - s->off, j1 = x1 + d - s->off;
  i0 = i0 < 0 ? 0 : i0;
  j0 = j0 < 0 ? 0 : j0;
  i1 = i1 >= s->ph ? s->ph - 1 : i1;
  j1 = j1 >= s->pw ? s->pw - 1 : j1;
  for (int64_t i = i0; i <= i1; i++)
    for (int64_t j = j0; j <= j1; j++) {
      if (s->mark_check)
        s->mark_check(s, i, j);
      atomic_store_explicit(&s->dirty[i * s->pw + j], 1, memory_order_relaxed);
    }
}

void ht_sx_commit(const ht_sx *s, ht_sx_scratch *w, uint32_t pattern)
{
  const uint32_t flipped = (pattern ^ w->cur) & w->inside;
  if (!flipped)
    return;
  const int64_t W = s->width, H = s->height;
  int ky0 = s->wh, ky1 = -1, kx0 = s->ww, kx1 = -1;
  for (int k = 0; k < s->wh * s->ww; k++)
    if (flipped >> k & 1) {
      const int ky = k / s->ww, kx = k % s->ww;
      ky0 = ky < ky0 ? ky : ky0;
      ky1 = ky > ky1 ? ky : ky1;
      kx0 = kx < kx0 ? kx : kx0;
      kx1 = kx > kx1 ? kx : kx1;
      s->b[(w->y0 + ky) * W + w->x0 + kx] = (uint8_t)(pattern >> k & 1);
    }
  /* the region's rows and columns that the flips reached, inside the image */
  const int64_t xa0 = w->x0 + kx0 - s->r, xb0 = w->x0 + kx1 + s->r + 1;
  const int64_t xa = xa0 < 0 ? 0 : xa0, xb = xb0 > W ? W : xb0;
  for (int ly = ky0; ly <= ky1 + 2 * s->r; ly++) {
    const int64_t y = w->ry0 + ly;
    if (y >= 0 && y < H)
      memcpy(s->e + y * W + xa, (const int32_t *)(const void *)(w->e + ly * s->nv) + (xa - w->rx0),
             (size_t)(xb - xa) * sizeof(int32_t));
  }
  ht_sx_mark(s, w->y0 + ky0, w->y0 + ky1, w->x0 + kx0, w->x0 + kx1);
  w->cur = pattern;
}

/* ---------------------------------------------------------------- output */

void ht_sx_store(const ht_sx *s, const ht_rows *rows)
{
  for (int64_t y = 0; y < s->height; y++)
    rows->store(rows, y, 0, s->width, s->b + y * s->width);
}

int64_t ht_sx_total(const ht_sx *s)
{
  int64_t t = 0;
  for (size_t p = 0; p < (size_t)s->width * (size_t)s->height; p++)
    t += s->e[p] < 0 ? -(int64_t)s->e[p] : s->e[p];
  return t;
}

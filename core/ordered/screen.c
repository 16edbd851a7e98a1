/* AM screens as print makes them (docs/screens.md): a grid of dots of
 * one shape, lpi rows of dots per inch at the output's dpi, turned by the
 * plane's screen angle; darker tones grow the dots.
 *
 * Each pixel finds its own place in the screen's cell: its centre turned
 * into the screen's coordinates, in units of a cell, in fixed point (Q32
 * of a cell; the fraction of a coordinate is its low 32 bits, exact
 * whatever the image's size, as integer arithmetic wraps). So any angle
 * and any period, rational or not, is the screen itself, with no
 * supercell standing in for it; what is left is that pixels sample the
 * dots at every phase, so that dots of the same tone differ by a pixel
 * here and there (docs/screens.md).
 *
 * The place in the cell picks one of 256 x 256 samples of the cell; the
 * samples are ranked by the dot shape's spot function (integers on the
 * sample grid, ties by a second key, then by place), so the threshold of
 * a sample is its share of the cell's area: a flat tone v covers v of
 * every cell, and the mean of a flat area is its value (the tone
 * response, tested). Integers only after the angle's sine and cosine,
 * which come from +, -, *, / alone: every machine, thread count and row
 * order gives the same bits. */
#include "ordered.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GRID_BITS 8
#define GRID (1 << GRID_BITS) /* samples of the cell a side */
#define TONE_SIDE 1024       /* the square whose pixels rank the samples */

/* sin and cos of `deg` degrees from correctly rounded operations alone
 * (a quarter turn at a time, then Taylor series), so that the screen's
 * constants do not depend on the machine's libm. */
static void sin_cos_deg(double deg, double *s, double *c)
{
  double d = fmod(deg, 360.0); /* exact */
  if (d < 0)
    d += 360.0;
  int quarter = (int)(d / 90.0);
  if (quarter > 3)
    quarter = 3;
  const double x = (d - 90.0 * quarter) * (3.14159265358979323846 / 180.0);
  double sn = 0.0, cs = 0.0, term = 1.0;
  for (int k = 0; k < 24; k++) { /* term = x^k / k! */
    switch (k & 3) {
    case 0: cs += term; break;
    case 1: sn += term; break;
    case 2: cs -= term; break;
    default: sn -= term; break;
    }
    term = term * x / (k + 1);
  }
  const double S[4] = { sn, cs, -sn, -cs }, C[4] = { cs, -sn, -cs, sn };
  *s = S[quarter];
  *c = C[quarter];
}

/* The spot function of `dot` at sample (u, v) of the cell, odd integers
 * in (-GRID, GRID) from the cell's centre: the smaller key turns dark
 * first; k2 orders equal k1. */
static void spot(int dot, int u, int v, int64_t *k1, int64_t *k2)
{
  const int64_t U = u < 0 ? -u : u, V = v < 0 ? -v : v, G = GRID;
  *k2 = 0;
  switch (dot) {
  case HT_DOT_ELLIPSE: *k1 = 25 * U * U + 49 * V * V; break; /* axes 1.4 : 1 */
  case HT_DOT_SQUARE:
    *k1 = U > V ? U : V;
    *k2 = U * U + V * V;
    break;
  case HT_DOT_LINE:
    *k1 = V;
    *k2 = U;
    break;
  case HT_DOT_DIAMOND:
    *k1 = U + V;
    *k2 = U * U + V * V;
    break;
  case HT_DOT_EUCLIDEAN: /* a circle below the diamond U + V = G, a hole around the corners above */
    *k1 = U + V <= G ? U * U + V * V : 2 * G * G - ((G - U) * (G - U) + (G - V) * (G - V));
    break;
  default: *k1 = U * U + V * V; break; /* round */
  }
}

typedef struct {
  int64_t k1, k2;
  int32_t i;
} sample;

static int by_spot(const void *a, const void *b)
{
  const sample *x = a, *y = b;
  if (x->k1 != y->k1)
    return x->k1 < y->k1 ? -1 : 1;
  if (x->k2 != y->k2)
    return x->k2 < y->k2 ? -1 : 1;
  return (x->i > y->i) - (x->i < y->i);
}

typedef struct {
  const int32_t *t; /* GRID x GRID thresholds, [v sample][u sample]      */
  uint64_t a, b;    /* cos and sin over twice the period, Q32 of a cell  */
} screen;

static void screen_row(const void *ctx, const ht_job *job, int64_t y, const int32_t *in, uint8_t *lv, int64_t w)
{
  const screen *S = ctx;
  const int64_t L1 = job->levels - 1;
  const uint64_t Y2 = 2 * (uint64_t)(job->y0 + y) + 1;
  /* pixel centre (X, Y) = ((2x + 1) / 2, (2y + 1) / 2), y down; the grid
   * turned counterclockwise as seen: u = X cos + ... in Q32 of a cell,
   * wrapping freely (only the fraction is used) */
  uint64_t u = S->a - Y2 * S->b, v = (uint64_t)0 - S->b - Y2 * S->a;
  const uint64_t du = 2 * S->a, dv = (uint64_t)0 - 2 * S->b;
  const int shift = 32 - GRID_BITS;
  for (int64_t x = 0; x < w; x++, u += du, v += dv) {
    const uint32_t su = (uint32_t)u >> shift, sv = (uint32_t)v >> shift;
    lv[x] = ht_ordered_level(in[x], L1, S->t[(sv << GRID_BITS) | su]);
  }
}

ht_status ht_screen_run(ht_job *job, const ht_rows *rows)
{
  const ht_params *p = job->params;
  const double period = p->dpi / p->lpi; /* pixels a cell */
  if (!(period >= 2.0)) {
    ht_set_msg(job->msg, "the screen's cells would be %.3g pixels wide (dpi %g / lpi %g): lpi must be at most dpi "
               "/ 2", period, p->dpi, p->lpi);
    return HT_ERR_INVALID_ARGUMENT;
  }
  const int cells = GRID * GRID;
  sample *s = ht_alloc_raw(job, (size_t)cells, sizeof *s);
  int32_t *t = s ? ht_alloc_raw(job, (size_t)cells, sizeof *t) : NULL;
  if (!t) {
    free(s);
    return HT_ERR_NO_MEMORY;
  }
  for (int j = 0; j < GRID; j++)
    for (int i = 0; i < GRID; i++) {
      const int idx = (j << GRID_BITS) | i;
      s[idx].i = idx;
      /* the cell's centre is at the middle of the sample grid */
      spot(p->dot, 2 * i + 1 - GRID, 2 * j + 1 - GRID, &s[idx].k1, &s[idx].k2);
    }
  qsort(s, (size_t)cells, sizeof *s, by_spot);
  const double angle = p->color == HT_COLOR_LUMA ? p->angle : p->angles[job->plane & 3];
  double sn, cs;
  sin_cos_deg(angle, &sn, &cs);
  /* cos / (2 period) and sin / (2 period) in Q32 of a cell: a step of a
   * half pixel */
  const double q = 2147483648.0 / period;
  screen S = { t, (uint64_t)(int64_t)floor(cs * q + 0.5), (uint64_t)(int64_t)floor(sn * q + 0.5) };
  /* The thresholds: a sample's share of the pixels, not of the cell's
   * area. Pixels sample the cell at the phases the angle and period give
   * (at 0 degrees and a period of 10 pixels, only 100 of the samples), so
   * a sample's threshold is the share of the pixels of a TONE_SIDE^2
   * square (from the image's origin, whatever part of it is run) that
   * fall on samples turning dark before it, plus half its own: a flat
   * tone then darkens its share of those pixels exactly, and of any
   * large area nearly so, at rational and irrational angles alike. */
  int64_t *count = ht_alloc_raw(job, (size_t)cells, sizeof *count);
  if (!count) {
    free(s);
    free(t);
    return HT_ERR_NO_MEMORY;
  }
  memset(count, 0, (size_t)cells * sizeof *count);
  const uint64_t du = 2 * S.a, dv = (uint64_t)0 - 2 * S.b;
  for (uint64_t y = 0; y < TONE_SIDE; y++) {
    uint64_t u = S.a - (2 * y + 1) * S.b, v = (uint64_t)0 - S.b - (2 * y + 1) * S.a;
    for (int x = 0; x < TONE_SIDE; x++, u += du, v += dv)
      count[(((uint32_t)v >> (32 - GRID_BITS)) << GRID_BITS) | ((uint32_t)u >> (32 - GRID_BITS))]++;
  }
  /* from the last sample to turn dark (the first to be white) */
  const int64_t total = (int64_t)TONE_SIDE * TONE_SIDE;
  int64_t before = 0;
  for (int r = cells - 1; r >= 0; r--) {
    const int64_t c = count[s[r].i];
    t[s[r].i] = (int32_t)(((2 * before + c) * HT_FX_ONE) / (2 * total));
    before += c;
  }
  free(count);
  free(s);
  const ht_status st = ht_ordered_run(job, rows, screen_row, &S);
  free(t);
  return st;
}

/* Blue-noise masks by void and cluster (R. Ulichney, "The void-and-cluster
 * method for dither array generation", SPIE 1913, 1993): the ranks of an
 * n x n mask, rank r for the pixel that becomes the (r + 1)-th one, so
 * that the first k ranks of any k are a well-spread point set.
 *
 * The energy of a pixel is a Gaussian kernel summed over the ones, on the
 * torus (the mask tiles without a seam). Ulichney's method, made fast:
 *  - the energy field is kept, not recomputed: adding or removing a one
 *    adds or subtracts the kernel around it (its (2r+1)^2 cells);
 *  - the tightest cluster (the one of highest energy) and the largest void
 *    (the zero of lowest energy) come from two tournament trees over
 *    blocks of 4 x 4 cells, of which an update rescans only the blocks
 *    the kernel touched: a step costs about the kernel's area, not n^2;
 *  - the kernel's sigma follows the density of the minority pixels
 *    (sigma = max(1.5, s / 2) for their mean spacing s, in stages of a
 *    factor 2 in density): Ulichney's sigma 1.5 where he used it (10 % to
 *    90 % ones), and a kernel that still tells voids apart where points
 *    are tens of pixels apart (a fixed 1.5 gives energies that round to
 *    0 there, and the sparse levels would be white noise).
 * One thread: a step's kernel is 15 x 15 cells at sigma 1.5, less work
 * than handing it to other threads would cost (docs/screens.md).
 *
 * Exact: the kernel's weights are integers (a separable Gaussian in Q15,
 * from ht_exp_neg, the same on every machine), energies int64 sums of
 * them, and ties between equal energies go to the smaller key of the
 * counter-based generator keyed by (seed, x, y), then the smaller index:
 * the same seed gives the same mask everywhere. */
#include "ordered.h"
#include "../shared/eye.h"
#include "../shared/rng.h"

#include <stdlib.h>
#include <string.h>

#define BLOCK_SHIFT 2       /* blocks of 4 x 4 cells in the trees         */
#define RNG_PLANE 0x424e4f49u /* the generator's plane for masks          */

typedef struct {
  int n, shift, mask;     /* side n = 2^shift                              */
  int64_t cells;
  int64_t *E;             /* energy: the kernel summed over the ones      */
  uint8_t *one;
  uint32_t *key;          /* ties between equal energies                   */
  int bshift, nbx, nb;    /* block side 2^bshift, nbx x nbx blocks         */
  int32_t *tv, *tc;       /* trees: best void, best cluster (-1: none)     */
  int stage;              /* the kernel's density stage, -1: none yet      */
  int klo, klen;          /* kernel offsets klo .. klo + klen - 1          */
  int64_t *kw;            /* their 1-D weights (the 2-D weight: a product) */
  int64_t *tmp;           /* n x n, for the separable rebuild              */
  int *list;              /* the tree nodes an update recomputes           */
  uint32_t *stamp, step;  /* the update that last recomputed a node        */
} vac;

static int pick_void(const vac *V, int a, int b)
{
  if (a < 0 || b < 0)
    return a < 0 ? b : a;
  if (V->E[a] != V->E[b])
    return V->E[a] < V->E[b] ? a : b;
  if (V->key[a] != V->key[b])
    return V->key[a] < V->key[b] ? a : b;
  return a < b ? a : b;
}

static int pick_cluster(const vac *V, int a, int b)
{
  if (a < 0 || b < 0)
    return a < 0 ? b : a;
  if (V->E[a] != V->E[b])
    return V->E[a] > V->E[b] ? a : b;
  if (V->key[a] != V->key[b])
    return V->key[a] < V->key[b] ? a : b;
  return a < b ? a : b;
}

/* Block b's best void and best cluster into its leaves: pick_void and
 * pick_cluster over its cells, which come in increasing index, so that
 * the first of equals is the smaller index. */
static void scan_block(vac *V, int b)
{
  const int bs = 1 << V->bshift;
  const int y0 = (b / V->nbx) << V->bshift, x0 = (b % V->nbx) << V->bshift;
  int v = -1, c = -1;
  int64_t ve = 0, ce = 0;
  uint32_t vk = 0, ck = 0;
  for (int y = y0; y < y0 + bs; y++)
    for (int x = x0; x < x0 + bs; x++) {
      const int i = (y << V->shift) | x;
      const int64_t e = V->E[i];
      const uint32_t k = V->key[i];
      if (V->one[i]) {
        if (c < 0 || e > ce || (e == ce && k < ck)) {
          c = i;
          ce = e;
          ck = k;
        }
      } else if (v < 0 || e < ve || (e == ve && k < vk)) {
        v = i;
        ve = e;
        vk = k;
      }
    }
  V->tv[V->nb + b] = v;
  V->tc[V->nb + b] = c;
}

static void combine(vac *V, int i)
{
  V->tv[i] = pick_void(V, V->tv[2 * i], V->tv[2 * i + 1]);
  V->tc[i] = pick_cluster(V, V->tc[2 * i], V->tc[2 * i + 1]);
}

static void rebuild_trees(vac *V)
{
  for (int b = 0; b < V->nb; b++)
    scan_block(V, b);
  for (int i = V->nb - 1; i >= 1; i--)
    combine(V, i);
}

/* Adds sign times the kernel centred on cell p to the energy. */
static void add_kernel(vac *V, int p, int64_t sign)
{
  const int n = V->n, px = p & V->mask, py = p >> V->shift;
  const int x0 = (px + V->klo) & V->mask;
  const int first = V->klen < n - x0 ? V->klen : n - x0; /* up to the right edge, then from column 0 */
  for (int j = 0; j < V->klen; j++) {
    int64_t *row = V->E + ((size_t)((py + V->klo + j) & V->mask) << V->shift);
    const int64_t wy = sign * V->kw[j];
    for (int i = 0; i < first; i++)
      row[x0 + i] += wy * V->kw[i];
    for (int i = first; i < V->klen; i++)
      row[i - first] += wy * V->kw[i];
  }
}

/* The blocks a range of klen cells from `start` covers: first block and count. */
static void block_span(const vac *V, int start, int *first, int *count)
{
  const int s = start & V->mask;
  *first = s >> V->bshift;
  const int c = ((s + V->klen - 1) >> V->bshift) - *first + 1;
  *count = c < V->nbx ? c : V->nbx;
}

/* Cell p becomes a one (sign 1) or a zero (sign -1). */
static void toggle(vac *V, int p, int sign)
{
  V->one[p] = sign > 0;
  add_kernel(V, p, sign);
  int by, cy, bx, cx;
  block_span(V, (p >> V->shift) + V->klo, &by, &cy);
  block_span(V, (p & V->mask) + V->klo, &bx, &cx);
  if (cy * cx * 4 > V->nb) {
    rebuild_trees(V);
    return;
  }
  /* the touched leaves, then their parents level by level, each once
   * (a node after both its children) */
  int *list = V->list, count = 0;
  V->step++;
  for (int j = 0; j < cy; j++)
    for (int i = 0; i < cx; i++) {
      const int b = ((by + j) % V->nbx) * V->nbx + (bx + i) % V->nbx;
      scan_block(V, b);
      list[count++] = V->nb + b;
    }
  while (count > 0 && list[0] > 1) {
    int up = 0;
    for (int k = 0; k < count; k++) {
      const int t = list[k] >> 1;
      if (V->stamp[t] != V->step) {
        V->stamp[t] = V->step;
        combine(V, t);
        list[up++] = t;
      }
    }
    count = up;
  }
}

/* The density stage of m minority pixels: floor(log2(cells / m)). */
static int stage_of(const vac *V, int64_t m)
{
  int k = 0;
  while ((m << (k + 1)) <= V->cells)
    k++;
  return k;
}

/* The kernel of stage k, and the energy of the current ones with it. */
static void set_stage(vac *V, int k, int64_t ones)
{
  const int n = V->n;
  /* sigma^2 = (s / 2)^2 for the mean spacing s = sqrt(2^k * sqrt 2) of the
   * stage's middle density; at least 1.5^2, at most (n / 4)^2 */
  double s2 = 0.35355339059327373 * (double)((int64_t)1 << k);
  if (s2 < 2.25)
    s2 = 2.25;
  if (s2 > (double)n * n / 16.0 && (double)n * n / 16.0 > 2.25)
    s2 = (double)n * n / 16.0;
  const double q = ht_exp_neg(1.0 / (2.0 * s2)), q2 = q * q;
  /* w(d) = round(2^15 q^(d^2)), q^((d+1)^2) = q^(d^2) q^(2d + 1) */
  int64_t w[8 * 1024 + 1];
  int r = 0;
  double pw = 1.0, step = q;
  w[0] = 32768;
  while (r < 8 * 1024) {
    pw *= step;
    step *= q2;
    const int64_t v = (int64_t)(pw * 32768.0 + 0.5);
    if (v == 0)
      break;
    w[++r] = v;
  }
  if (2 * r + 1 <= n) {
    V->klo = -r;
    V->klen = 2 * r + 1;
    for (int d = -r; d <= r; d++)
      V->kw[d + r] = w[d < 0 ? -d : d];
  } else { /* wider than the torus: each offset takes all its images */
    V->klo = 0;
    V->klen = n;
    memset(V->kw, 0, (size_t)n * sizeof *V->kw);
    for (int d = -r; d <= r; d++)
      V->kw[((d % n) + n) % n] += w[d < 0 ? -d : d];
  }
  V->stage = k;

  /* the energy: the kernel scattered from the fewer of ones and zeros
   * (from the zeros: the sum S of the kernel less theirs), or convolved
   * separably, whichever is less work */
  const int64_t zeros = V->cells - ones, m = ones < zeros ? ones : zeros;
  const int L = V->klen;
  if (m * L * L <= 2 * V->cells * L) {
    int64_t S = 0;
    for (int i = 0; i < L; i++)
      S += V->kw[i];
    const int64_t base = ones <= zeros ? 0 : S * S;
    for (int64_t i = 0; i < V->cells; i++)
      V->E[i] = base;
    for (int p = 0; p < V->cells; p++)
      if (V->one[p] == (ones <= zeros))
        add_kernel(V, p, ones <= zeros ? 1 : -1);
  } else {
    for (int y = 0; y < n; y++)
      for (int x = 0; x < n; x++) {
        int64_t s = 0;
        const uint8_t *row = V->one + ((size_t)y << V->shift);
        for (int i = 0; i < L; i++)
          s += V->kw[i] * row[(x + V->klo + i) & V->mask];
        V->tmp[((size_t)y << V->shift) | (size_t)x] = s;
      }
    for (int y = 0; y < n; y++)
      for (int x = 0; x < n; x++) {
        int64_t s = 0;
        for (int j = 0; j < L; j++)
          s += V->kw[j] * V->tmp[((size_t)((y + V->klo + j) & V->mask) << V->shift) | (size_t)x];
        V->E[((size_t)y << V->shift) | (size_t)x] = s;
      }
  }
  rebuild_trees(V);
}

static void follow_density(vac *V, int64_t ones)
{
  const int64_t zeros = V->cells - ones;
  const int k = stage_of(V, ones < zeros ? ones : zeros);
  if (k != V->stage)
    set_stage(V, k, ones);
}

/* Initial ones: the tenth of the cells with the smallest draws. */
typedef struct {
  uint32_t draw;
  int32_t cell;
} draw_cell;

static int by_draw(const void *a, const void *b)
{
  const draw_cell *x = a, *y = b;
  return x->draw != y->draw ? (x->draw < y->draw ? -1 : 1) : (x->cell > y->cell) - (x->cell < y->cell);
}

ht_status ht_void_and_cluster(int n, uint64_t seed, uint32_t *rank)
{
  int shift = 0;
  while ((1 << shift) < n)
    shift++;
  if (n < 2 || n > HT_NOISE_SIZE_MAX || (1 << shift) != n || !rank)
    return HT_ERR_INVALID_ARGUMENT;
  vac V = { .n = n, .shift = shift, .mask = n - 1, .cells = (int64_t)n * n, .stage = -1 };
  V.bshift = shift < BLOCK_SHIFT ? shift : BLOCK_SHIFT;
  V.nbx = n >> V.bshift;
  V.nb = V.nbx * V.nbx;
  const size_t cells = (size_t)V.cells;
  V.E = malloc(cells * sizeof *V.E);
  V.tmp = malloc(cells * sizeof *V.tmp);
  V.one = calloc(cells, 1);
  uint8_t *start = malloc(cells);
  V.key = malloc(cells * sizeof *V.key);
  V.tv = malloc(2 * (size_t)V.nb * sizeof *V.tv);
  V.tc = malloc(2 * (size_t)V.nb * sizeof *V.tc);
  V.kw = malloc((size_t)(n > 2 * 8 * 1024 + 1 ? n : 2 * 8 * 1024 + 1) * sizeof *V.kw);
  draw_cell *d = malloc(cells * sizeof *d);
  V.list = malloc((size_t)V.nb * sizeof *V.list);
  V.stamp = calloc(2 * (size_t)V.nb, sizeof *V.stamp);
  ht_status st = HT_ERR_NO_MEMORY;
  if (!V.E || !V.tmp || !V.one || !start || !V.key || !V.tv || !V.tc || !V.kw || !d || !V.list || !V.stamp)
    goto done;
  for (int y = 0; y < n; y++)
    for (int x = 0; x < n; x++) {
      uint32_t r[4];
      ht_rng4(seed, RNG_PLANE, (uint32_t)x, (uint32_t)y, 0, r);
      const int i = (y << shift) | x;
      V.key[i] = r[0];
      d[i] = (draw_cell){ r[1], i };
    }
  qsort(d, cells, sizeof *d, by_draw);
  int64_t n0 = V.cells / 10 > 0 ? V.cells / 10 : 1;
  for (int64_t i = 0; i < n0; i++)
    V.one[d[i].cell] = 1;

  /* Phase 0: move the tightest cluster into the largest void until it is
   * its own largest void (at most a move a cell: it converges far sooner) */
  set_stage(&V, stage_of(&V, n0), n0);
  for (int64_t it = 0; it < V.cells; it++) {
    const int c = V.tc[1];
    toggle(&V, c, -1);
    const int v = V.tv[1];
    toggle(&V, v, 1);
    if (v == c)
      break;
  }
  memcpy(start, V.one, cells);

  /* Phase 1: the ranks below n0, tightest clusters removed first */
  int64_t ones = n0;
  for (int64_t r = n0 - 1; r >= 0; r--) {
    follow_density(&V, ones);
    const int c = V.tc[1];
    toggle(&V, c, -1);
    rank[c] = (uint32_t)r;
    ones--;
  }
  /* Phases 2 and 3: from the start again, the largest voids filled; past
   * half the zeros are the minority, and their tightest cluster is the
   * zero of lowest energy of the ones (the kernel's sum less theirs), the
   * same choice */
  memcpy(V.one, start, cells);
  ones = n0;
  V.stage = -1;
  for (int64_t r = n0; r < V.cells; r++) {
    follow_density(&V, ones);
    const int v = V.tv[1];
    toggle(&V, v, 1);
    rank[v] = (uint32_t)r;
    ones++;
  }
  st = HT_OK;
done:
  free(V.E);
  free(V.tmp);
  free(V.one);
  free(start);
  free(V.key);
  free(V.tv);
  free(V.tc);
  free(V.kw);
  free(d);
  free(V.list);
  free(V.stamp);
  return st;
}

/* The search methods LES, PES and DBS (docs/search.md), by parts:
 *
 *  optimal    after LES, no window has a strictly better pattern (a
 *             brute force over every pattern of every window, with this
 *             file's own error from the formulas);
 *  monotone   PES and DBS (and LES) never raise the total error from a
 *             round to the next, and DBS ends with no toggle or swap
 *             that lowers it; PES's result is no worse than the current
 *             pattern at any window, and among its classes;
 *  threads    1..8 threads and every instruction set give the bits of
 *             one thread, for many shapes; both schedules;
 *  golden     hashes of small results, against the table below (the
 *             noskip and searchcheck builds run this part too);
 *  seed       same seed, same bits; another seed, other bits;
 *  api        errors and messages, the lists, ht_params_set_algorithm;
 *  cancel     a cancel gives HT_ERR_CANCELLED, progress only rises;
 *  revolving  the revolving-door lists;
 *  metric     ht_compute_eye_error against this file's own sum;
 *  filtered   DBS on the filtered objective (dbs_filtered.c) against
 *             this file's own DBS, written from the definition of the
 *             objective (each candidate's change summed anew, pixel by
 *             pixel), in both schedules' orders, on 1..8 threads; the
 *             objective never rises from a round to the next, and no
 *             toggle or swap with a neighbour lowers it at the end;
 *             backend cuda refuses it, ht_check_or_cpu takes the CPU.
 *
 * The parts above test DBS on the LES paper's objective (search_params
 * sets it; DBS's default is the filtered one).
 */
#include "ht-test.h"
#include "shared/eye.h"
#include "shared/revolving_door.h"
#include "shared/rng.h"
#include "search/search.h"

#include <math.h>
#include <signal.h>
#include <unistd.h>

/* --------------------------------------------- the error, from formulas */

/* The eye's weights as the table holds them; everything else here is
 * written from Kouge et al., formulas 2-4, and eye.h's border rule. */
typedef struct {
  int r;
  int32_t w[15][15];
} eyew;

static eyew eye_weights(double sigma, int radius)
{
  ht_eye_params ep = { sigma, radius };
  ht_eye e;
  eyew out;
  memset(&out, 0, sizeof out);
  if (!ht_eye_init(&e, &ep))
    exit(99);
  out.r = radius;
  for (int y = 0; y < 2 * radius + 1; y++)
    for (int x = 0; x < 2 * radius + 1; x++)
      out.w[y][x] = e.w[y * e.side + x];
  return out;
}

/* a: input values 0..65535; b: 0/1. e(x, y) = a * 32768 - sum w b',
 * b' = 65535 b inside, the input of the nearest pixel inside outside. */
static int64_t err_at(const eyew *E, const int32_t *a, const uint8_t *b, int64_t W, int64_t H, int64_t x, int64_t y)
{
  int64_t e = (int64_t)a[y * W + x] * 32768;
  for (int dy = -E->r; dy <= E->r; dy++)
    for (int dx = -E->r; dx <= E->r; dx++) {
      int64_t qx = x + dx, qy = y + dy, v;
      if (qx >= 0 && qx < W && qy >= 0 && qy < H)
        v = b[qy * W + qx] ? 65535 : 0;
      else
        v = a[(qy < 0 ? 0 : qy >= H ? H - 1 : qy) * W + (qx < 0 ? 0 : qx >= W ? W - 1 : qx)];
      e -= E->w[dy + E->r][dx + E->r] * v;
    }
  return e;
}

static int64_t total_err(const eyew *E, const int32_t *a, const uint8_t *b, int64_t W, int64_t H)
{
  int64_t t = 0;
  for (int64_t y = 0; y < H; y++)
    for (int64_t x = 0; x < W; x++) {
      const int64_t e = err_at(E, a, b, W, H, x, y);
      t += e < 0 ? -e : e;
    }
  return t;
}

/* The error of the pixels within r of rows y0..y1, columns x0..x1. */
static int64_t region_err(const eyew *E, const int32_t *a, const uint8_t *b, int64_t W, int64_t H, int64_t y0,
                          int64_t y1, int64_t x0, int64_t x1)
{
  int64_t t = 0;
  for (int64_t y = y0 - E->r; y <= y1 + E->r; y++)
    for (int64_t x = x0 - E->r; x <= x1 + E->r; x++)
      if (y >= 0 && y < H && x >= 0 && x < W) {
        const int64_t e = err_at(E, a, b, W, H, x, y);
        t += e < 0 ? -e : e;
      }
  return t;
}

/* ------------------------------------------------------------- running */

typedef struct {
  int64_t w, h;
  uint8_t *in;  /* 8-bit input */
  int32_t *a;   /* its values, v * 257 */
  uint8_t *out; /* 0/1 */
} img;

static img make_img(int64_t w, int64_t h, uint64_t seed)
{
  img m = { w, h, xmalloc((size_t)(w * h)), xmalloc((size_t)(w * h) * 4), xmalloc((size_t)(w * h)) };
  fill_random(m.in, (size_t)w, w, h, 1, seed);
  for (int64_t i = 0; i < w * h; i++)
    m.a[i] = m.in[i] * 257;
  return m;
}

static void free_img(img *m)
{
  free(m->in);
  free(m->a);
  free(m->out);
}

static ht_params search_params(ht_method method, int window, int radius, ht_search_init init, uint64_t seed)
{
  ht_params p;
  ht_params_init(&p);
  p.method = method;
  p.window = window;
  p.eye.radius = radius;
  p.init = init;
  p.seed = seed;
  p.objective = HT_OBJECTIVE_LES;
  return p;
}

/* Runs p on m with `threads`; the result as 0/1 in m->out. */
static ht_status run(img *m, const ht_params *p, int threads)
{
  ht_context *ctx = ht_context_new();
  if (!ctx)
    exit(99);
  ht_context_set_backend(ctx, HT_BACKEND_CPU);
  ht_context_set_threads(ctx, threads);
  ht_image I = { m->w, m->h, (size_t)m->w, 1, HT_FORMAT_U8, m->in };
  ht_image O = { m->w, m->h, (size_t)m->w, 1, HT_FORMAT_U8, m->out };
  const ht_status s = ht_run(ctx, &I, &O, p);
  if (s != HT_OK)
    fprintf(stderr, "run: %s\n", ht_context_message(ctx));
  ht_context_free(ctx);
  for (int64_t i = 0; i < m->w * m->h; i++)
    m->out[i] = m->out[i] ? 1 : 0;
  return s;
}

static uint64_t hash_bits(const uint8_t *b, size_t n)
{
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++)
    h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

/* ------------------------------------------------------------- optimal */

/* No pattern of any m x m window (clipped) is strictly better. */
static void check_optimal(const img *m, const ht_params *p, const char *what)
{
  const eyew E = eye_weights(p->eye.sigma, p->eye.radius);
  const int64_t W = m->w, H = m->h;
  const int wh = H < p->window ? (int)H : p->window, ww = W < p->window ? (int)W : p->window, n = wh * ww;
  uint8_t *b = xmalloc((size_t)(W * H));
  memcpy(b, m->out, (size_t)(W * H));
  int bad = 0;
  for (int64_t i = 0; i + wh <= H && !bad; i++)
    for (int64_t j = 0; j + ww <= W && !bad; j++) {
      const int64_t cur = region_err(&E, m->a, b, W, H, i, i + wh - 1, j, j + ww - 1);
      uint8_t keep[25];
      for (int k = 0; k < n; k++)
        keep[k] = b[(i + k / ww) * W + j + k % ww];
      for (uint32_t x = 0; x < 1u << n && !bad; x++) {
        for (int k = 0; k < n; k++)
          b[(i + k / ww) * W + j + k % ww] = (uint8_t)(x >> k & 1);
        const int64_t e = region_err(&E, m->a, b, W, H, i, i + wh - 1, j, j + ww - 1);
        if (e < cur) {
          CHECK(0, "%s: window (%lld, %lld) has a pattern %#x of error %lld < %lld", what, (long long)i,
                (long long)j, x, (long long)e, (long long)cur);
          bad = 1;
        }
      }
      for (int k = 0; k < n; k++)
        b[(i + k / ww) * W + j + k % ww] = keep[k];
    }
  free(b);
}

static void part_optimal(void)
{
  const int64_t shapes[][2] = { { 13, 11 }, { 1, 9 }, { 9, 1 }, { 2, 2 }, { 24, 7 }, { 5, 17 } };
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
    for (int m = 2; m <= 3; m++)
      for (int r = 1; r <= 2; r++) {
        img im = make_img(shapes[s][0], shapes[s][1], 100 + s * 7 + (uint64_t)(m * 3 + r));
        const ht_params p = search_params(HT_METHOD_LES, m, r, s & 1 ? HT_INIT_RANDOM : HT_INIT_FLOYD_STEINBERG,
                                          s);
        char what[96];
        snprintf(what, sizeof what, "les %lldx%lld m %d r %d", (long long)im.w, (long long)im.h, m, r);
        CHECK(run(&im, &p, 2) == HT_OK, "%s: run failed", what);
        check_optimal(&im, &p, what);
        free_img(&im);
      }
}

/* ------------------------------------------------------------ monotone */

/* The PES rule of docs/search.md, from a brute force over all patterns:
 * the pattern PES keeps at window (i, j). */
static uint32_t pes_rule(const eyew *E, const img *m, uint8_t *b, int64_t i, int64_t j, int wh, int ww)
{
  const int64_t W = m->w, H = m->h;
  const int n = wh * ww;
  uint32_t cur = 0;
  for (int k = 0; k < n; k++)
    cur |= (uint32_t)b[(i + k / ww) * W + j + k % ww] << k;
  int64_t rk[26];
  uint32_t rx[26];
  for (int k = 0; k <= n; k++)
    rk[k] = INT64_MAX;
  for (uint32_t x = 0; x < 1u << n; x++) {
    for (int k = 0; k < n; k++)
      b[(i + k / ww) * W + j + k % ww] = (uint8_t)(x >> k & 1);
    const int64_t e = region_err(E, m->a, b, W, H, i, i + wh - 1, j, j + ww - 1);
    const int c = __builtin_popcount(x);
    if (e < rk[c] || (e == rk[c] && x < rx[c])) {
      rk[c] = e;
      rx[c] = x;
    }
  }
  for (int k = 0; k < n; k++)
    b[(i + k / ww) * W + j + k % ww] = (uint8_t)(cur >> k & 1);
  const int beta = __builtin_popcount(cur);
  const int64_t ecur = region_err(E, m->a, b, W, H, i, i + wh - 1, j, j + ww - 1);
  if (rk[beta] == ecur)
    rx[beta] = cur; /* the current pattern wins its class's ties */
  /* the walk */
  int lo = beta, hi = beta; /* the classes visited */
  if (beta > 0)
    lo = beta - 1;
  if (beta < n)
    hi = beta + 1;
  int dir = 0;
  if (beta < n && (beta == 0 || rk[beta + 1] < rk[beta - 1] || (rk[beta + 1] == rk[beta - 1] && rx[beta + 1] < rx[beta - 1])))
    dir = rk[beta + 1] < rk[beta] ? 1 : 0;
  else if (beta > 0)
    dir = rk[beta - 1] < rk[beta] ? -1 : 0;
  if (dir)
    for (int k = beta + dir; k + dir >= 0 && k + dir <= n; k += dir) {
      if (dir > 0)
        hi = k + 1;
      else
        lo = k - 1;
      if (rk[k + dir] >= rk[k])
        break;
    }
  uint32_t kept = cur;
  int64_t ek = ecur;
  for (int k = lo; k <= hi; k++)
    if (rk[k] < ek || (rk[k] == ek && kept != cur && rx[k] < kept)) {
      kept = rx[k];
      ek = rk[k];
    }
  return kept;
}

/* After PES, the PES rule keeps every window as it is. */
static void check_pes_fixed(const img *m, const ht_params *p, const char *what)
{
  const eyew E = eye_weights(p->eye.sigma, p->eye.radius);
  const int wh = m->h < p->window ? (int)m->h : p->window, ww = m->w < p->window ? (int)m->w : p->window;
  uint8_t *b = xmalloc((size_t)(m->w * m->h));
  memcpy(b, m->out, (size_t)(m->w * m->h));
  int bad = 0;
  for (int64_t i = 0; i + wh <= m->h && !bad; i++)
    for (int64_t j = 0; j + ww <= m->w && !bad; j++) {
      uint32_t cur = 0;
      for (int k = 0; k < wh * ww; k++)
        cur |= (uint32_t)b[(i + k / ww) * m->w + j + k % ww] << k;
      const uint32_t kept = pes_rule(&E, m, b, i, j, wh, ww);
      if (kept != cur) {
        CHECK(0, "%s: the PES rule changes window (%lld, %lld) from %#x to %#x", what, (long long)i, (long long)j,
              cur, kept);
        bad = 1;
      }
    }
  free(b);
}

/* After DBS, no toggle and no swap with a differing neighbour lowers the
 * total error. */
static void check_dbs_final(const img *m, const ht_params *p, const char *what)
{
  const eyew E = eye_weights(p->eye.sigma, p->eye.radius);
  const int64_t W = m->w, H = m->h;
  uint8_t *b = xmalloc((size_t)(W * H));
  memcpy(b, m->out, (size_t)(W * H));
  int bad = 0;
  for (int64_t y = 0; y < H && !bad; y++)
    for (int64_t x = 0; x < W && !bad; x++) {
      const int64_t before = region_err(&E, m->a, b, W, H, y - 1, y + 1, x - 1, x + 1);
      for (int c = -1; c < 9 && !bad; c++) { /* -1: the toggle */
        const int64_t ny = y + (c < 0 ? 0 : c / 3 - 1), nx = x + (c < 0 ? 0 : c % 3 - 1);
        if (c == 4 || ny < 0 || ny >= H || nx < 0 || nx >= W || (c >= 0 && b[ny * W + nx] == b[y * W + x]))
          continue;
        b[y * W + x] ^= 1;
        if (c >= 0)
          b[ny * W + nx] ^= 1;
        const int64_t after = region_err(&E, m->a, b, W, H, y - 1, y + 1, x - 1, x + 1);
        b[y * W + x] ^= 1;
        if (c >= 0)
          b[ny * W + nx] ^= 1;
        if (after < before) {
          CHECK(0, "%s: at (%lld, %lld) candidate %d lowers the error from %lld to %lld", what, (long long)x,
                (long long)y, c, (long long)before, (long long)after);
          bad = 1;
        }
      }
    }
  free(b);
}

/* The initial image, as docs/search.md defines it. */
static void initial(const img *m, const ht_params *p, int plane, uint8_t *b)
{
  if (p->init == HT_INIT_RANDOM) {
    for (int64_t y = 0; y < m->h; y++)
      for (int64_t x = 0; x < m->w; x++)
        b[y * m->w + x] =
          (uint8_t)(ht_rng_fx(ht_rng(p->seed, (uint32_t)plane, (uint32_t)x, (uint32_t)y)) < m->a[y * m->w + x]);
    return;
  }
  img t = *m;
  t.out = b;
  ht_params q;
  ht_params_init(&q);
  if (run(&t, &q, 1) != HT_OK)
    exit(99);
}

/* Rounds 1, 2, ... never raise the total error; the last is the run
 * without a limit. */
static void check_rounds(img *m, const ht_params *p, const char *what)
{
  const eyew E = eye_weights(p->eye.sigma, p->eye.radius);
  const size_t n = (size_t)(m->w * m->h);
  uint8_t *full = xmalloc(n);
  CHECK(run(m, p, 2) == HT_OK, "%s: run", what);
  memcpy(full, m->out, n);
  initial(m, p, 0, m->out);
  int64_t last = total_err(&E, m->a, m->out, m->w, m->h);
  for (int r = 1; r <= 40; r++) {
    ht_params q = *p;
    q.max_rounds = r;
    CHECK(run(m, &q, 1 + r % 3) == HT_OK, "%s: run with %d rounds", what, r);
    const int64_t e = total_err(&E, m->a, m->out, m->w, m->h);
    CHECK(e <= last, "%s: round %d raises the error from %lld to %lld", what, r, (long long)last, (long long)e);
    last = e;
    if (memcmp(m->out, full, n) == 0)
      break;
    CHECK(r < 40, "%s: 40 rounds do not reach the result of the run without a limit", what);
  }
  free(full);
}

static void part_monotone(void)
{
  const int64_t shapes[][2] = { { 14, 11 }, { 1, 12 }, { 23, 6 } };
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
    for (int r = 1; r <= 2; r++)
      for (int init = 0; init < 2; init++) {
        img im = make_img(shapes[s][0], shapes[s][1], 300 + s * 5 + (uint64_t)(r * 2 + init));
        char what[96];
        ht_params p = search_params(HT_METHOD_PES, 2 + (int)(s & 1), r, (ht_search_init)init, s + 1);
        snprintf(what, sizeof what, "pes %lldx%lld m %d r %d init %d", (long long)im.w, (long long)im.h, p.window,
                 r, init);
        check_rounds(&im, &p, what);
        check_pes_fixed(&im, &p, what);
        p = search_params(HT_METHOD_DBS, 4, r, (ht_search_init)init, s + 1);
        snprintf(what, sizeof what, "dbs %lldx%lld r %d init %d", (long long)im.w, (long long)im.h, r, init);
        check_rounds(&im, &p, what);
        check_dbs_final(&im, &p, what);
        p = search_params(HT_METHOD_LES, 3, r, (ht_search_init)init, s + 1);
        snprintf(what, sizeof what, "les %lldx%lld r %d init %d", (long long)im.w, (long long)im.h, r, init);
        check_rounds(&im, &p, what);
        free_img(&im);
      }
  /* the DBS rule with the default eye and a wider one */
  for (int r = 3; r <= 7; r += 4) {
    img im = make_img(40, 33, 77 + (uint64_t)r);
    ht_params p = search_params(HT_METHOD_DBS, 4, r, HT_INIT_RANDOM, 5);
    p.eye.sigma = r == 7 ? 2.0 : 1.0;
    CHECK(run(&im, &p, 2) == HT_OK, "dbs r %d", r);
    check_dbs_final(&im, &p, r == 7 ? "dbs 40x33 r 7" : "dbs 40x33 r 3");
    free_img(&im);
  }
}

/* ------------------------------------------------------------- threads */

typedef struct {
  ht_method method;
  int window, radius;
  double sigma;
  ht_search_init init;
  uint64_t seed;
} config;

static const config configs[] = {
  { HT_METHOD_LES, 2, 3, 1.0, HT_INIT_FLOYD_STEINBERG, 0 },
  { HT_METHOD_LES, 3, 1, 1.0, HT_INIT_RANDOM, 3 },
  { HT_METHOD_LES, 2, 5, 1.5, HT_INIT_RANDOM, 4 },       /* the region in memory */
  { HT_METHOD_PES, 3, 2, 1.0, HT_INIT_RANDOM, 5 },
  { HT_METHOD_PES, 4, 7, 2.0, HT_INIT_FLOYD_STEINBERG, 0 }, /* two vectors a row */
  { HT_METHOD_DBS, 4, 3, 1.0, HT_INIT_FLOYD_STEINBERG, 0 },
  { HT_METHOD_DBS, 4, 3, 1.0, HT_INIT_RANDOM, 9 },
  { HT_METHOD_DBS, 4, 7, 2.5, HT_INIT_RANDOM, 9 },
  /* the defaults (m = 4): in the golden part only, for their time */
  { HT_METHOD_LES, 4, 3, 1.0, HT_INIT_FLOYD_STEINBERG, 0 },
  { HT_METHOD_PES, 4, 3, 1.0, HT_INIT_FLOYD_STEINBERG, 0 },
};
#define NCONFIGS_THREADS 8
#define NCONFIGS (int)(sizeof configs / sizeof configs[0])

static ht_params config_params(const config *c)
{
  ht_params p = search_params(c->method, c->window, c->radius, c->init, c->seed);
  p.eye.sigma = c->sigma;
  return p;
}

/* Sanitized code runs ten to twenty times slower; PES with m = 4 walks
 * up to 12 870 patterns a window, which takes that run past its time.
 * The sanitizer run leaves those configurations to the plain build: it
 * looks for memory errors, which the other configurations reach too. */
static bool too_slow_sanitized(int c)
{
  return getenv("HT_TEST_SANITIZER") && configs[c].method == HT_METHOD_PES && configs[c].window == 4;
}

static void part_threads(void)
{
  const int64_t shapes[][2] = { { 1, 1 }, { 1, 29 }, { 31, 1 }, { 2, 3 }, { 13, 17 }, { 5, 40 },
                                { 61, 29 }, { 100, 23 }, { 37, 37 } };
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
    for (int c = 0; c < NCONFIGS_THREADS; c++) {
      /* PES with the wide eye is slow: on one shape only */
      if ((c == 4 && s != 4) || too_slow_sanitized(c))
        continue;
      img im = make_img(shapes[s][0], shapes[s][1], 500 + s * 11 + (uint64_t)c);
      const size_t n = (size_t)(im.w * im.h);
      const ht_params p = config_params(&configs[c]);
      uint8_t *ref = xmalloc(n);
      ht_sx_set_isa(1); /* generic: the reference */
      CHECK(run(&im, &p, 1) == HT_OK, "config %d, %lldx%lld", c, (long long)im.w, (long long)im.h);
      memcpy(ref, im.out, n);
      for (int isa = 2; isa <= 3; isa++) {
        ht_sx_set_isa(isa);
        /* 1, 2, 3 and 8 threads: odd and even splits of a group's blocks */
        static const int threads[] = { 1, 2, 3, 8 };
        for (int ti = isa == 3 ? 0 : 3; ti < 4; ti++) {
          const int t = threads[ti];
          CHECK(run(&im, &p, t) == HT_OK, "config %d", c);
          CHECK(memcmp(im.out, ref, n) == 0, "config %d, %lldx%lld: %d threads, instruction set %d (of %d) differ "
                "from one thread, generic", c, (long long)im.w, (long long)im.h, t, isa, ht_sx_isa());
        }
      }
      ht_sx_set_isa(0);
      /* the raster schedule: one thread; the same with 0 (auto) */
      ht_params q = p;
      q.schedule = HT_SCHEDULE_RASTER;
      CHECK(run(&im, &q, 1) == HT_OK, "raster");
      memcpy(ref, im.out, n);
      CHECK(run(&im, &q, 0) == HT_OK, "raster, threads 0");
      CHECK(memcmp(im.out, ref, n) == 0, "raster: threads 0 differ from 1");
      free(ref);
      free_img(&im);
    }
}

/* -------------------------------------------------------------- golden */

/* Hashes of results on make_img's pictures, as the code gave them when
 * the methods were written (docs/search.md): a change of any rule shows
 * here. The noskip and searchcheck builds must give them too. */
static const struct {
  int config;
  int64_t w, h;
  ht_search_schedule schedule;
  uint64_t hash;
} golden[] = {
#include "test-search-golden.h"
};

static void part_golden(bool print)
{
  for (size_t g = 0; g < sizeof golden / sizeof golden[0]; g++) {
    if (!print && too_slow_sanitized(golden[g].config))
      continue;
    img im = make_img(golden[g].w, golden[g].h, 900 + g);
    ht_params p = config_params(&configs[golden[g].config]);
    p.schedule = golden[g].schedule;
    CHECK(run(&im, &p, p.schedule == HT_SCHEDULE_RASTER ? 1 : 2) == HT_OK, "golden %zu", g);
    const uint64_t h = hash_bits(im.out, (size_t)(im.w * im.h));
    if (print)
      printf("  { %d, %lld, %lld, %s, 0x%016llxull },\n", golden[g].config, (long long)im.w, (long long)im.h,
             golden[g].schedule ? "HT_SCHEDULE_RASTER" : "HT_SCHEDULE_PARALLEL", (unsigned long long)h);
    else
      CHECK(h == golden[g].hash, "golden %zu (config %d, %lldx%lld): hash %016llx, expected %016llx", g,
            golden[g].config, (long long)im.w, (long long)im.h, (unsigned long long)h,
            (unsigned long long)golden[g].hash);
    free_img(&im);
  }
}

/* ---------------------------------------------------------------- seed */

static void part_seed(void)
{
  for (int method = HT_METHOD_LES; method <= HT_METHOD_DBS; method++) {
    img im = make_img(30, 20, 41);
    const size_t n = 600;
    uint8_t *a = xmalloc(n);
    ht_params p = search_params((ht_method)method, 2, 2, HT_INIT_RANDOM, 1234);
    CHECK(run(&im, &p, 2) == HT_OK, "seed");
    memcpy(a, im.out, n);
    CHECK(run(&im, &p, 1) == HT_OK, "seed");
    CHECK(memcmp(a, im.out, n) == 0, "method %d: the same seed gives other bits", method);
    p.seed = 1235;
    CHECK(run(&im, &p, 2) == HT_OK, "seed");
    CHECK(memcmp(a, im.out, n) != 0, "method %d: another seed gives the same bits", method);
    p.init = HT_INIT_FLOYD_STEINBERG; /* no random numbers: the seed does nothing */
    CHECK(run(&im, &p, 2) == HT_OK, "seed");
    memcpy(a, im.out, n);
    p.seed = 99;
    CHECK(run(&im, &p, 2) == HT_OK, "seed");
    CHECK(memcmp(a, im.out, n) == 0, "method %d: the seed changes a Floyd-Steinberg start", method);
    free(a);
    free_img(&im);
  }
}

/* ----------------------------------------------------------------- api */

#define EXPECT(call, want, needle, what)                                                               \
  do {                                                                                                 \
    const ht_status s_ = (call);                                                                       \
    const char *m_ = ht_context_message(ctx);                                                          \
    CHECK(s_ == (want), "%s: status \"%s\", expected \"%s\" (message: %s)", what, ht_status_string(s_), \
          ht_status_string(want), m_);                                                                 \
    CHECK(strstr(m_, needle) != NULL, "%s: message \"%s\" does not mention \"%s\"", what, m_, needle);  \
  } while (0)

/* ht_estimate_seconds: its arguments checked, its figures in the order
 * the measurements give (docs/search.md), and the refusal of a search
 * estimated at over HT_ESTIMATE_LIMIT_S before any pixel is computed. */
static void part_estimate(void)
{
  ht_params p = search_params(HT_METHOD_LES, 3, 3, HT_INIT_FLOYD_STEINBERG, 0), q;
  CHECK(ht_estimate_seconds(NULL, 8, 8, 1, 1) == -1, "no parameters: not -1");
  CHECK(ht_estimate_seconds(&p, 0, 8, 1, 1) == -1 && ht_estimate_seconds(&p, 8, -1, 1, 1) == -1 &&
          ht_estimate_seconds(&p, 8, 8, 0, 1) == -1 && ht_estimate_seconds(&p, 8, 8, HT_MAX_PLANES + 1, 1) == -1 &&
          ht_estimate_seconds(&p, 8, 8, 1, -1) == -1,
        "a bad size, plane count or thread count: not -1");
  q = p;
  q.window = HT_SEARCH_WINDOW_MAX + 1;
  CHECK(ht_estimate_seconds(&q, 8, 8, 1, 1) == -1, "window 6: not -1");
  for (int m = HT_METHOD_LES; m <= HT_METHOD_PES; m++)
    for (int w = 1; w < HT_SEARCH_WINDOW_MAX; w++) {
      ht_params a = search_params((ht_method)m, w, 3, HT_INIT_FLOYD_STEINBERG, 0), b = a;
      b.window = w + 1;
      const double ea = ht_estimate_seconds(&a, 256, 256, 1, 1), eb = ht_estimate_seconds(&b, 256, 256, 1, 1);
      CHECK(ea > 0 && eb > ea * (w >= 3 ? 10 : 1), "method %d: window %d estimated %g s, window %d %g s", m, w, ea,
            w + 1, eb);
    }
  for (int w = 3; w <= HT_SEARCH_WINDOW_MAX; w++) { /* PES is the slower on the CPU */
    ht_params l = search_params(HT_METHOD_LES, w, 3, HT_INIT_FLOYD_STEINBERG, 0), e = l;
    e.method = HT_METHOD_PES;
    CHECK(ht_estimate_seconds(&e, 64, 64, 1, 1) > ht_estimate_seconds(&l, 64, 64, 1, 1), "window %d: PES not slower",
          w);
  }
  const double one = ht_estimate_seconds(&p, 100, 100, 1, 1);
  CHECK(fabs(ht_estimate_seconds(&p, 200, 100, 1, 1) / one - 2) < 1e-9 &&
          fabs(ht_estimate_seconds(&p, 100, 100, 3, 1) / one - 3) < 1e-9,
        "the estimate is not proportional to pixels and planes");
  CHECK(ht_estimate_seconds(&p, 100, 100, 1, 0) <= one, "every core estimated slower than one thread");
  q = p;
  q.max_rounds = 1;
  CHECK(ht_estimate_seconds(&q, 100, 100, 1, 1) < one, "max_rounds 1 estimated no faster");
  q = p;
  q.schedule = HT_SCHEDULE_RASTER;
  CHECK(ht_estimate_seconds(&q, 100, 100, 1, 0) == one, "the raster schedule estimated on more than one thread");
  char buf[32];
  ht_format_duration(40, buf, sizeof buf);
  CHECK(strcmp(buf, "40 s") == 0, "40 s written as %s", buf);
  ht_format_duration(3 * 86400, buf, sizeof buf);
  CHECK(strcmp(buf, "3 days") == 0, "3 days written as %s", buf);

  /* 2048 x 2048 with a 5 x 5 window: hours even on a flat image */
  ht_context *ctx = ht_context_new();
  if (!ctx)
    exit(99);
  ht_context_set_backend(ctx, HT_BACKEND_CPU);
  ht_context_set_threads(ctx, 1);
  const int64_t n = 2048;
  uint16_t *in16 = malloc((size_t)(n * n) * 2);
  uint8_t *in = malloc((size_t)(n * n)), *out = malloc((size_t)(n * n));
  if (!in16 || !in || !out)
    exit(99);
  memset(in, 100, (size_t)(n * n));
  memset(in16, 100, (size_t)(n * n) * 2);
  memset(out, 0xAB, (size_t)(n * n));
  ht_image I = { n, n, (size_t)n, 1, HT_FORMAT_U8, in }, O = { n, n, (size_t)n, 1, HT_FORMAT_U8, out };
  for (int m = HT_METHOD_LES; m <= HT_METHOD_PES; m++) {
    ht_params big = search_params((ht_method)m, 5, 3, HT_INIT_FLOYD_STEINBERG, 0);
    CHECK(ht_estimate_seconds(&big, n, n, 1, 1) > HT_ESTIMATE_LIMIT_S, "method %d: 2048^2, 5 x 5 within the limit", m);
    EXPECT(ht_run(ctx, &I, &O, &big), HT_ERR_UNSUPPORTED, "run-long", "ht_run, 5 x 5 on 2048^2");
    CHECK(strstr(ht_context_message(ctx), "estimated to take") != NULL, "no estimate in: %s", ht_context_message(ctx));
    EXPECT(ht_run_plane(ctx, in16, (size_t)n * 2, out, (size_t)n, n, n, &big), HT_ERR_UNSUPPORTED, "run-long",
           "ht_run_plane, 5 x 5 on 2048^2");
  }
  size_t touched = 0;
  for (size_t i = 0; i < (size_t)(n * n); i++)
    touched += out[i] != 0xAB;
  CHECK(touched == 0, "refused runs wrote %zu output bytes", touched);
  free(in16);
  free(in);
  free(out);
  ht_context_free(ctx);
}

static void part_api(void)
{
  ht_context *ctx = ht_context_new();
  if (!ctx)
    exit(99);
  ht_context_set_backend(ctx, HT_BACKEND_CPU);
  uint8_t in[64 * 3], out[64 * 3];
  memset(in, 100, sizeof in);
  ht_image I = { 8, 8, 8, 1, HT_FORMAT_U8, in }, O = { 8, 8, 8, 1, HT_FORMAT_U8, out };
  const char *names[] = { "les", "pes", "dbs" };
  for (int m = HT_METHOD_LES; m <= HT_METHOD_DBS; m++) {
    const char *name = names[m - HT_METHOD_LES];
    char what[64];
    ht_params p = search_params((ht_method)m, 4, 3, HT_INIT_FLOYD_STEINBERG, 0), q;
    q = p;
    q.levels = 4;
    snprintf(what, sizeof what, "%s, levels 4", name);
    EXPECT(ht_run(ctx, &I, &O, &q), HT_ERR_UNSUPPORTED, name, what);
    EXPECT(ht_check(ctx, &q), HT_ERR_UNSUPPORTED, "binary", what);
    q = p;
    q.plane_levels[2] = 3;
    EXPECT(ht_check(ctx, &q), HT_ERR_UNSUPPORTED, "plane 3", "plane levels 3");
    q = p;
    q.scan = HT_SCAN_SERPENTINE;
    EXPECT(ht_run(ctx, &I, &O, &q), HT_ERR_UNSUPPORTED, "serpentine", "serpentine");
    for (int bad = -1; bad <= 6; bad += 7) {
      q = p;
      q.window = bad;
      EXPECT(ht_check(ctx, &q), HT_ERR_INVALID_ARGUMENT, "window must be 1..5", "window");
    }
    q = p;
    q.schedule = (ht_search_schedule)7;
    EXPECT(ht_check(ctx, &q), HT_ERR_INVALID_ARGUMENT, "schedule", "schedule 7");
    q = p;
    q.init = (ht_search_init)-1;
    EXPECT(ht_check(ctx, &q), HT_ERR_INVALID_ARGUMENT, "initial image", "init -1");
    q = p;
    q.max_rounds = -1;
    EXPECT(ht_check(ctx, &q), HT_ERR_INVALID_ARGUMENT, "max-rounds", "max_rounds -1");
    q = p;
    q.eye.sigma = 0.1;
    EXPECT(ht_check(ctx, &q), HT_ERR_INVALID_ARGUMENT, "sigma", "sigma 0.1");
    q = p;
    q.schedule = HT_SCHEDULE_RASTER;
    ht_context_set_threads(ctx, 2);
    EXPECT(ht_run(ctx, &I, &O, &q), HT_ERR_UNSUPPORTED, "raster schedule", "raster, 2 threads");
    ht_context_set_threads(ctx, 0);
    CHECK(ht_run(ctx, &I, &O, &q) == HT_OK, "%s: raster, threads 0: %s", name, ht_context_message(ctx));
    ht_context_set_threads(ctx, 1);
    CHECK(ht_run(ctx, &I, &O, &p) == HT_OK, "%s: %s", name, ht_context_message(ctx));
    CHECK(ht_variant_method(ht_context_last_variant(ctx)) == m &&
              ht_variant_backend(ht_context_last_variant(ctx)) == HT_BACKEND_CPU,
          "%s: variant %s", name, ht_variant_name(ht_context_last_variant(ctx)));
    /* an implementation of another method */
    q = p;
    q.variant = HT_VARIANT_WAVEFRONT;
    EXPECT(ht_run(ctx, &I, &O, &q), HT_ERR_UNSUPPORTED, "another method", "wavefront for a search");
    /* bands: the search looks at the whole plane */
    const ht_band band = { 8, NULL, NULL };
    EXPECT(ht_run_band(ctx, &I, &O, &p, &band), HT_ERR_UNSUPPORTED, "band", "a band");
    /* 1-bit output */
    uint8_t bits[8];
    ht_image B = { 8, 8, 1, 1, HT_FORMAT_BIT1, bits };
    CHECK(ht_run(ctx, &I, &B, &p) == HT_OK, "%s, 1-bit output: %s", name, ht_context_message(ctx));
    /* colour: planes keyed by their index; three equal channels give
     * three equal planes from Floyd-Steinberg, other ones from the seed */
    for (int i = 0; i < 64; i++)
      in[3 * i] = in[3 * i + 1] = in[3 * i + 2] = (uint8_t)(i * 4);
    ht_image C = { 8, 8, 24, 3, HT_FORMAT_U8, in }, D = { 8, 8, 24, 3, HT_FORMAT_U8, out };
    q = p;
    q.color = HT_COLOR_PER_CHANNEL;
    q.window = 2;
    CHECK(ht_run(ctx, &C, &D, &q) == HT_OK, "%s colour", name);
    bool same = true;
    for (int i = 0; i < 64; i++)
      same &= out[3 * i] == out[3 * i + 1] && out[3 * i] == out[3 * i + 2];
    CHECK(same, "%s: equal channels give other planes from Floyd-Steinberg", name);
    q.init = HT_INIT_RANDOM;
    CHECK(ht_run(ctx, &C, &D, &q) == HT_OK, "%s colour", name);
    same = true;
    for (int i = 0; i < 64; i++)
      same &= out[3 * i] == out[3 * i + 1];
    CHECK(!same, "%s: planes 0 and 1 draw the same random numbers", name);
    memset(in, 100, sizeof in);
  }
  /* the lists and the algorithm value */
  int n = 0, nf = 0;
  const ht_choice *a = ht_choices(HT_LIST_ALGORITHMS, &n), *f = ht_choices(HT_LIST_FILTERS, &nf);
  /* the filters, then every method that has an algorithm value of its own */
  int nm = 0, own = 0;
  const ht_choice *ms = ht_choices(HT_LIST_METHODS, &nm);
  for (int i = 0; i < nm; i++)
    own += ht_method_describe((ht_method)ms[i].value)->algorithm >= 0;
  CHECK(a && n == nf + own, "algorithms: %d entries for %d filters and %d methods", n, nf, own);
  for (int i = 0; a && i < nf && i < n; i++)
    CHECK(a[i].value == f[i].value && strcmp(a[i].name, f[i].name) == 0, "algorithm %d is %s", i, a[i].name);
  const int values[3] = { HT_ALGORITHM_LES, HT_ALGORITHM_PES, HT_ALGORITHM_DBS };
  for (int i = 0; i < 3; i++) {
    const ht_choice *c = ht_choice_by_value(HT_LIST_ALGORITHMS, values[i]);
    CHECK(c && strcmp(c->name, names[i]) == 0, "algorithm %d is %s", values[i], c ? c->name : "missing");
    const ht_choice *mth = ht_choice_by_name(HT_LIST_METHODS, names[i]);
    CHECK(mth && mth->value == (int)HT_METHOD_LES + i, "method %s", names[i]);
    ht_params p;
    ht_params_init(&p);
    CHECK(ht_params_set_algorithm(&p, values[i]) == HT_OK && (int)p.method == (int)HT_METHOD_LES + i, "set %s", names[i]);
    CHECK(ht_params_algorithm(&p) == values[i], "algorithm of %s", names[i]);
  }
  ht_params p;
  ht_params_init(&p);
  CHECK(p.window == 4 && p.init == HT_INIT_FLOYD_STEINBERG && p.schedule == HT_SCHEDULE_PARALLEL &&
          p.max_rounds == 0, "defaults");
  CHECK(ht_params_set_algorithm(&p, HT_FILTER_STUCKI) == HT_OK && p.method == HT_METHOD_ERROR_DIFFUSION &&
          p.filter.id == HT_FILTER_STUCKI && ht_params_algorithm(&p) == HT_FILTER_STUCKI, "set stucki");
  CHECK(ht_params_set_algorithm(&p, HT_ALGORITHM_DBS) == HT_OK, "set dbs");
  CHECK(ht_params_set_algorithm(&p, HT_FILTER_CUSTOM) == HT_OK && p.method == HT_METHOD_ERROR_DIFFUSION &&
          p.filter.id == HT_FILTER_STUCKI, "set custom keeps the filter");
  /* values that are no algorithm: the first one past the filters, one
   * past the last of the list, negative */
  int unused = 0, past = 0, nalg = 0;
  while (ht_choice_by_value(HT_LIST_ALGORITHMS, unused))
    unused++;
  const ht_choice *all = ht_choices(HT_LIST_ALGORITHMS, &nalg);
  for (int i = 0; i < nalg; i++)
    past = all[i].value >= past ? all[i].value + 1 : past;
  CHECK(unused < HT_ALGORITHM_LES && ht_params_set_algorithm(&p, unused) == HT_ERR_INVALID_ARGUMENT &&
            ht_params_set_algorithm(&p, past) == HT_ERR_INVALID_ARGUMENT &&
            ht_params_set_algorithm(&p, -1) == HT_ERR_INVALID_ARGUMENT &&
            ht_params_set_algorithm(NULL, HT_ALGORITHM_LES) == HT_ERR_INVALID_ARGUMENT,
        "bad values (%d)", unused);
  CHECK(ht_choice_by_name(HT_LIST_INITS, "floyd-steinberg")->value == HT_INIT_FLOYD_STEINBERG &&
          ht_choice_by_name(HT_LIST_INITS, "random")->value == HT_INIT_RANDOM, "inits");
  CHECK(ht_choice_by_name(HT_LIST_SCHEDULES, "parallel")->value == HT_SCHEDULE_PARALLEL &&
          ht_choice_by_name(HT_LIST_SCHEDULES, "raster")->value == HT_SCHEDULE_RASTER, "schedules");
  CHECK(ht_choice_by_name(HT_LIST_VARIANTS, "les-cpu") && ht_choice_by_name(HT_LIST_VARIANTS, "dbs-cpu"),
        "variants");
  double e;
  CHECK(ht_compute_eye_error(NULL, 1, in, 1, 1, 1, NULL, &e) == HT_ERR_INVALID_ARGUMENT, "metric NULL");
  CHECK(ht_compute_eye_error(in, 1, in, 1, 0, 1, NULL, &e) == HT_ERR_BAD_SIZE, "metric size");
  const ht_eye_params bad = { 9.0, 3 };
  CHECK(ht_compute_eye_error(in, 8, in, 8, 8, 8, &bad, &e) == HT_ERR_INVALID_ARGUMENT, "metric eye");
  ht_context_free(ctx);
}

/* -------------------------------------------------------------- cancel */

static void part_cancel(void)
{
  img im = make_img(96, 80, 3);
  for (int m = HT_METHOD_LES; m <= HT_METHOD_DBS; m++)
    for (int t = 1; t <= 4; t *= 2)
      for (int sched = 0; sched < 2; sched++) {
        if (sched == 1 && t > 1)
          continue;
        ht_context *ctx = ht_context_new();
        if (!ctx)
          exit(99);
        ht_context_set_backend(ctx, HT_BACKEND_CPU);
        ht_context_set_threads(ctx, t);
        ht_params p = search_params((ht_method)m, 4, 3, HT_INIT_RANDOM, 1);
        p.schedule = (ht_search_schedule)sched;
        ht_image I = { im.w, im.h, (size_t)im.w, 1, HT_FORMAT_U8, im.in };
        ht_image O = { im.w, im.h, (size_t)im.w, 1, HT_FORMAT_U8, im.out };
        watch wt = { 0, 1, 0, false };
        ht_context_set_progress(ctx, on_progress, &wt);
        const ht_status s = ht_run(ctx, &I, &O, &p);
        CHECK(s == HT_ERR_CANCELLED, "method %d, %d threads, schedule %d: status %s", m, t, sched,
              ht_status_string(s));
        CHECK(wt.calls == 1, "method %d: %d calls after cancelling at the first", m, wt.calls);
        CHECK(strstr(ht_context_message(ctx), "cancel") != NULL, "message %s", ht_context_message(ctx));
        if (m == HT_METHOD_DBS) { /* fast enough to run to the end */
          watch ok = { 0, 0, 0, false };
          ht_context_set_progress(ctx, on_progress, &ok);
          CHECK(ht_run(ctx, &I, &O, &p) == HT_OK, "dbs with progress");
          CHECK(!ok.backwards && ok.last == 1.0, "progress went back or did not end at 1 (%g)", ok.last);
        }
        ht_context_free(ctx);
      }
  free_img(&im);
}

/* ----------------------------------------------------------- revolving */

static int recursive_list(int n, int t, uint32_t *out)
{
  if (t == 0) {
    out[0] = 0;
    return 1;
  }
  if (t == n) {
    out[0] = (1u << n) - 1;
    return 1;
  }
  const int a = recursive_list(n - 1, t, out);
  uint32_t *tail = xmalloc(sizeof *tail << (n - 1));
  const int b = recursive_list(n - 1, t - 1, tail);
  for (int i = 0; i < b; i++)
    out[a + i] = tail[b - 1 - i] | 1u << (n - 1);
  free(tail);
  return a + b;
}

static void part_revolving(void)
{
  uint32_t *want = xmalloc(sizeof *want << 16), *got = xmalloc(sizeof *got << 16);
  for (int n = 1; n <= 16; n++)
    for (int t = 0; t <= n; t++) {
      ht_rd g;
      uint32_t x = ht_rd_first(&g, n, t);
      int count = 0, out, in;
      got[count++] = x;
      while (ht_rd_next(&g, &out, &in) && count < 1 << 16) {
        CHECK((x >> out & 1) && !(x >> in & 1), "C(%d, %d): step %d moves %d to %d in %#x", n, t, count, out, in, x);
        x ^= 1u << out | 1u << in;
        got[count++] = x;
      }
      const int expect = recursive_list(n, t, want);
      CHECK(count == expect, "C(%d, %d): %d combinations, expected %d", n, t, count, expect);
      CHECK(count != expect || memcmp(got, want, sizeof *got * (size_t)count) == 0,
            "C(%d, %d): not the order of the recursive definition", n, t);
    }
  free(want);
  free(got);
}

/* -------------------------------------------------------------- metric */

static void part_metric(void)
{
  const int64_t shapes[][2] = { { 1, 1 }, { 7, 3 }, { 40, 31 } };
  for (size_t s = 0; s < 3; s++)
    for (int r = 1; r <= 7; r += 3) {
      img im = make_img(shapes[s][0], shapes[s][1], 60 + s);
      ht_params p = search_params(HT_METHOD_DBS, 4, r, HT_INIT_RANDOM, 1);
      p.eye.sigma = 0.5 + r * 0.4;
      CHECK(run(&im, &p, 1) == HT_OK, "metric run");
      const eyew E = eye_weights(p.eye.sigma, r);
      const int64_t total = total_err(&E, im.a, im.out, im.w, im.h);
      for (int64_t i = 0; i < im.w * im.h; i++)
        im.out[i] = im.out[i] ? 255 : 0;
      double e = -1;
      CHECK(ht_compute_eye_error(im.in, (size_t)im.w, im.out, (size_t)im.w, im.w, im.h, &p.eye, &e) == HT_OK,
            "metric");
      const double want = (double)total / (257.0 * 32768.0 * (double)(im.w * im.h));
      CHECK(e >= want * (1 - 1e-12) && e <= want * (1 + 1e-12), "metric %g, from the formulas %g", e, want);
      free_img(&im);
    }
}

/* ------------------------------------------------------------ filtered */

/* The filtered objective from its definition (docs/search.md): e = 65535
 * b - a inside the image and 0 outside, E = the sum over the whole plane
 * of (V*e)^2 with the eye's Q15 weights, exactly (128-bit). */
typedef __int128 i128;

static int64_t seen_at(const eyew *E, const int32_t *a, const uint8_t *b, int64_t W, int64_t H, int64_t x, int64_t y)
{
  int64_t v = 0;
  for (int dy = -E->r; dy <= E->r; dy++)
    for (int dx = -E->r; dx <= E->r; dx++) {
      const int64_t qx = x - dx, qy = y - dy;
      if (qx >= 0 && qx < W && qy >= 0 && qy < H)
        v += (int64_t)E->w[dy + E->r][dx + E->r] * ((b[qy * W + qx] ? 65535 : 0) - a[qy * W + qx]);
    }
  return v;
}

/* The part of E at the pixels within r of rows y0..y1, columns x0..x1
 * (inside the image or not): all that a change there can move. */
static i128 fobj_rect(const eyew *E, const int32_t *a, const uint8_t *b, int64_t W, int64_t H, int64_t y0, int64_t y1,
                      int64_t x0, int64_t x1)
{
  i128 t = 0;
  for (int64_t y = y0 - E->r; y <= y1 + E->r; y++)
    for (int64_t x = x0 - E->r; x <= x1 + E->r; x++) {
      const i128 v = seen_at(E, a, b, W, H, x, y);
      t += v * v;
    }
  return t;
}

static i128 fobj(const eyew *E, const int32_t *a, const uint8_t *b, int64_t W, int64_t H)
{
  return fobj_rect(E, a, b, W, H, 0, H - 1, 0, W - 1);
}

/* The best candidate at (x, y) by the rule of docs/search.md: -1 none,
 * 4 the toggle, else the neighbour k (raster order in the 3 x 3) to swap
 * with; each candidate's change of E summed anew. */
static int fbest(const eyew *E, const int32_t *a, uint8_t *b, int64_t W, int64_t H, int64_t x, int64_t y)
{
  const i128 before = fobj_rect(E, a, b, W, H, y - 1, y + 1, x - 1, x + 1);
  i128 best = 0;
  int kept = -1;
  for (int c = -1; c < 9; c++) { /* -1: the toggle */
    const int64_t ny = y + (c < 0 ? 0 : c / 3 - 1), nx = x + (c < 0 ? 0 : c % 3 - 1);
    if (c == 4 || ny < 0 || ny >= H || nx < 0 || nx >= W || (c >= 0 && b[ny * W + nx] == b[y * W + x]))
      continue;
    b[y * W + x] ^= 1;
    if (c >= 0)
      b[ny * W + nx] ^= 1;
    const i128 d = fobj_rect(E, a, b, W, H, y - 1, y + 1, x - 1, x + 1) - before;
    b[y * W + x] ^= 1;
    if (c >= 0)
      b[ny * W + nx] ^= 1;
    if (d < best) {
      best = d;
      kept = c < 0 ? 4 : c;
    }
  }
  return kept;
}

static bool fvisit(const eyew *E, const int32_t *a, uint8_t *b, int64_t W, int64_t H, int64_t x, int64_t y)
{
  const int k = fbest(E, a, b, W, H, x, y);
  if (k < 0)
    return false;
  b[y * W + x] ^= 1;
  if (k != 4)
    b[(y + k / 3 - 1) * W + x + k % 3 - 1] ^= 1;
  return true;
}

/* This file's DBS: rounds until one changes nothing, the positions in
 * raster order or in the parallel schedule's order (blocks of q = 4r + 2,
 * docs/search.md: the groups one after the other, a group's blocks one
 * after the other, a block's positions in raster order). */
static void fdbs_reference(const eyew *E, const img *m, const ht_params *p, uint8_t *b)
{
  const int64_t W = m->w, H = m->h, q = 4 * E->r + 2;
  initial(m, p, 0, b);
  for (bool changed = true; changed;) {
    changed = false;
    if (p->schedule == HT_SCHEDULE_RASTER) {
      for (int64_t y = 0; y < H; y++)
        for (int64_t x = 0; x < W; x++)
          changed |= fvisit(E, m->a, b, W, H, x, y);
      continue;
    }
    for (int g = 0; g < 4; g++)
      for (int64_t by = g >> 1; by * q < H; by += 2)
        for (int64_t bx = g & 1; bx * q < W; bx += 2)
          for (int64_t y = by * q; y < H && y < (by + 1) * q; y++)
            for (int64_t x = bx * q; x < W && x < (bx + 1) * q; x++)
              changed |= fvisit(E, m->a, b, W, H, x, y);
  }
}

static void part_filtered(void)
{
  static const struct {
    int64_t w, h;
    int r;
    double sigma;
    ht_search_init init;
  } cases[] = {
    { 1, 1, 1, 1.0, HT_INIT_FLOYD_STEINBERG }, { 9, 1, 2, 1.5, HT_INIT_RANDOM },
    { 21, 17, 1, 0.8, HT_INIT_RANDOM },        { 23, 19, 2, 1.5, HT_INIT_FLOYD_STEINBERG },
    { 26, 14, 2, 1.0, HT_INIT_RANDOM },        { 24, 22, 3, 1.5, HT_INIT_FLOYD_STEINBERG },
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    img im = make_img(cases[c].w, cases[c].h, 700 + c);
    const size_t n = (size_t)(im.w * im.h);
    ht_params p = search_params(HT_METHOD_DBS, 4, cases[c].r, cases[c].init, c + 3);
    p.objective = HT_OBJECTIVE_FILTERED;
    p.eye.sigma = cases[c].sigma;
    const eyew E = eye_weights(p.eye.sigma, p.eye.radius);
    char what[96];
    snprintf(what, sizeof what, "filtered dbs %lldx%lld r %d sigma %g init %d", (long long)im.w, (long long)im.h,
             cases[c].r, cases[c].sigma, (int)cases[c].init);
    uint8_t *ref = xmalloc(n);
    for (int sch = 0; sch < 2; sch++) {
      p.schedule = sch ? HT_SCHEDULE_RASTER : HT_SCHEDULE_PARALLEL;
      fdbs_reference(&E, &im, &p, ref);
      static const int threads[] = { 1, 2, 3, 8 };
      for (int t = 0; t < (sch ? 1 : 4); t++) {
        CHECK(run(&im, &p, threads[t]) == HT_OK, "%s", what);
        CHECK(memcmp(im.out, ref, n) == 0, "%s, %s schedule, %d threads: not the bits of the test's own DBS", what,
              sch ? "raster" : "parallel", threads[t]);
      }
    }
    /* rounds never raise E; the end is a local optimum */
    p.schedule = HT_SCHEDULE_PARALLEL;
    CHECK(run(&im, &p, 2) == HT_OK, "%s", what);
    memcpy(ref, im.out, n);
    uint8_t *b = xmalloc(n);
    initial(&im, &p, 0, b);
    i128 last = fobj(&E, im.a, b, im.w, im.h);
    for (int r = 1; r <= 60; r++) {
      ht_params q = p;
      q.max_rounds = r;
      CHECK(run(&im, &q, 1 + r % 3) == HT_OK, "%s, %d rounds", what, r);
      const i128 e = fobj(&E, im.a, im.out, im.w, im.h);
      CHECK(e <= last, "%s: round %d raises the objective", what, r);
      last = e;
      if (memcmp(im.out, ref, n) == 0)
        break;
      CHECK(r < 60, "%s: 60 rounds do not reach the end", what);
    }
    memcpy(b, im.out, n);
    for (int64_t y = 0; y < im.h; y++)
      for (int64_t x = 0; x < im.w; x++)
        CHECK(fbest(&E, im.a, b, im.w, im.h, x, y) < 0, "%s: at (%lld, %lld) a toggle or swap lowers the objective",
              what, (long long)x, (long long)y);
    /* the search lowered the objective below its start's */
    initial(&im, &p, 0, b);
    CHECK(n < 100 || fobj(&E, im.a, b, im.w, im.h) > last, "%s: no lower than the start", what);
    free(b);
    free(ref);
    free_img(&im);
  }
  /* a wide eye (q = 22, 4r + 1 = 21 pixels of c_pp) on several blocks:
   * 1..8 threads and the raster schedule's one, against each other */
  img im = make_img(90, 70, 777);
  const size_t n = (size_t)(im.w * im.h);
  ht_params p = search_params(HT_METHOD_DBS, 4, 5, HT_INIT_FLOYD_STEINBERG, 0);
  p.objective = HT_OBJECTIVE_FILTERED;
  p.eye.sigma = 2.0;
  uint8_t *one = xmalloc(n);
  CHECK(run(&im, &p, 1) == HT_OK, "wide eye");
  memcpy(one, im.out, n);
  for (int t = 2; t <= 8; t *= 2) {
    CHECK(run(&im, &p, t) == HT_OK, "wide eye");
    CHECK(memcmp(im.out, one, n) == 0, "wide eye: %d threads differ from one", t);
  }
  free(one);
  free_img(&im);
  /* the GPU minimises the LES paper's error: backend cuda refuses the
   * filtered objective with the reason, and ht_check_or_cpu (the op's,
   * GIMP's) takes the CPU for it */
  ht_context *ctx = ht_context_new();
  if (!ctx)
    exit(99);
  ht_context_set_backend(ctx, HT_BACKEND_CUDA);
  ht_params_init(&p);
  p.method = HT_METHOD_DBS;
  CHECK(p.objective == HT_OBJECTIVE_FILTERED, "dbs's default objective is %d", (int)p.objective);
  CHECK(ht_check(ctx, &p) == HT_ERR_UNSUPPORTED && strstr(ht_context_message(ctx), "filtered objective"),
        "backend cuda and the filtered objective: %s", ht_context_message(ctx));
  ht_backend used = HT_BACKEND_CUDA;
  CHECK(ht_check_or_cpu(ctx, &p, &used) == HT_OK && used == HT_BACKEND_CPU &&
          strstr(ht_context_message(ctx), "filtered objective"),
        "ht_check_or_cpu: backend %d, %s", (int)used, ht_context_message(ctx));
  ht_context_free(ctx);
}

int main(int argc, char **argv)
{
  signal(SIGALRM, SIG_DFL);
  /* a hang fails here, before meson's own limit; sanitized code runs
   * several times slower (tools/run-tests.sh says which run is one) */
  alarm(getenv("HT_TEST_SANITIZER") ? 1500 : 280);
  const char *part = argc > 1 ? argv[1] : "";
  if (strcmp(part, "optimal") == 0)
    part_optimal();
  else if (strcmp(part, "monotone") == 0)
    part_monotone();
  else if (strcmp(part, "threads") == 0)
    part_threads();
  else if (strcmp(part, "golden") == 0)
    part_golden(argc > 2 && strcmp(argv[2], "print") == 0);
  else if (strcmp(part, "seed") == 0)
    part_seed();
  else if (strcmp(part, "api") == 0)
    part_api();
  else if (strcmp(part, "estimate") == 0)
    part_estimate();
  else if (strcmp(part, "cancel") == 0)
    part_cancel();
  else if (strcmp(part, "revolving") == 0)
    part_revolving();
  else if (strcmp(part, "metric") == 0)
    part_metric();
  else if (strcmp(part, "filtered") == 0)
    part_filtered();
  else {
    fprintf(stderr, "usage: test-search optimal|monotone|threads|golden [print]|seed|api|estimate|cancel|revolving|metric|filtered\n");
    return 99;
  }
  return test_finish(part);
}

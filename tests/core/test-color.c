/* Plane-dependent colour error diffusion (core/color/, docs/color.md):
 *  reference   every CPU variant of the method (HT_LIST_VARIANTS)
 *              against a reference written here with plain loops
 *              (whole-image error planes, floor division, levels by
 *              counting midpoints, its own CMYK separation and weight
 *              perturbation), RGB and CMYK, levels 2/3/16, every built-in
 *              filter (HT_LIST_FILTERS) and a custom one, weights
 *              0/0.2/0.5, randomisation 0/1, awkward shapes, the
 *              serpentine scan (where a variant takes it: ht_check);
 *  threads     every CPU variant but the sequential pd, for every thread
 *              count 1..8, against pd;
 *  per-channel inter-plane weights 0 give the per-channel mode's bits, in
 *              every CPU variant;
 *  randomize   amount 0 is no perturbation whatever the seed; amount 1
 *              changes the result and follows the seed;
 *  mean        the mean of every plane of a gray ramp is kept within a
 *              bound, and the planes' total more tightly;
 *  fast        pd-threads' fast kernel (core/color/pd_diagonal.c: filters
 *              of Floyd-Steinberg's shape, 3 and 4 planes, no randomising)
 *              against the reference for every thread count 1..8: band
 *              heights 8/16/32, levels 2..4 mixed, 8- and 16-bit input and
 *              output, cmyk, odd shapes, weights whose errors outgrow its
 *              32-bit products (the row kernel runs again), and the row
 *              kernel (HT_PD_NO_DIAGONAL) against it on a larger image;
 *  golden      hashes of a few runs, made by running this code;
 *  errors      out-of-range weights and amounts, and combinations the
 *              modes do not take, give a clear error.
 *
 * usage: test-color [reference|threads|fast|per-channel|randomize|mean|golden|errors] */
#include "ht-test.h"

#include "shared/rng.h"

#include <math.h>

/* ------------------------------------------------- the independent reference */

/* floor((e * q + 2048) / 4096) by floor division, not a shift */
static int64_t ref_term(int64_t e, int64_t q)
{
  int64_t n = e * q + 2048;
  return n >= 0 ? n / 4096 : -((-n + 4095) / 4096);
}

static int64_t ref_level_value(int i, int L) { return (2 * (int64_t)i * 65535 + L - 1) / (2 * (int64_t)(L - 1)); }

/* the nearest exact level: how many midpoints (i + 1/2) * 65535 / (L - 1) lie below v */
static int ref_level(int64_t v, int L)
{
  int q = 0;
  for (int i = 0; i < L - 1; i++)
    if (2 * v * (L - 1) > (int64_t)(2 * i + 1) * 65535)
      q = i + 1;
  return q;
}

static int64_t ref_q12(double w) { return (int64_t)floor(w * 4096.0 + 0.5); }

typedef struct {
  int64_t w, h;
  int channels;          /* of the input: 1..4                         */
  const uint16_t *in;    /* interleaved 16-bit samples                 */
} picture;

typedef struct {
  ht_filter filter;
  int planes;
  bool cmyk;
  int levels[4];
  double fwd, bwd, amount, black;
  uint64_t seed;
  bool serpentine;
} setup;

/* level indices out[p][y * w + x] */
static void reference(const picture *pic, const setup *st, uint8_t *out)
{
  const int64_t w = pic->w, h = pic->h;
  const int P = st->planes;
  int64_t *val = xmalloc((size_t)(P * w * h) * sizeof *val); /* input plus everything received */
  for (int64_t i = 0; i < w * h; i++) {
    const uint16_t *s = pic->in + i * pic->channels;
    if (st->cmyk) {
      int64_t c = 65535 - s[0], m = 65535 - s[1], y = 65535 - s[2];
      int64_t mn = c < m ? c : m;
      if (y < mn)
        mn = y;
      int64_t bq = (int64_t)floor(st->black * 65536.0 + 0.5);
      int64_t k = (mn * bq + 32768) / 65536;
      val[0 * w * h + i] = c - k;
      val[1 * w * h + i] = m - k;
      val[2 * w * h + i] = y - k;
      val[3 * w * h + i] = k;
    } else {
      for (int p = 0; p < P; p++)
        val[p * w * h + i] = s[p];
    }
  }
  const ht_filter *f = &st->filter;
  const int64_t amount = ref_q12(st->amount);
  for (int64_t y = 0; y < h; y++) {
    const bool rev = st->serpentine && (y % 2 == 1);
    for (int64_t i = 0; i < w; i++) {
      const int64_t x = rev ? w - 1 - i : i;
      const int64_t nx = rev ? x - 1 : x + 1; /* the next pixel on the row */
      const bool has_next = nx >= 0 && nx < w;
      for (int p = 0; p < P; p++) {
        int64_t v = val[p * w * h + y * w + x];
        int q = ref_level(v, st->levels[p]);
        out[p * w * h + y * w + x] = (uint8_t)q;
        int64_t e = v - ref_level_value(q, st->levels[p]);
        int64_t fw = p + 1 < P ? ref_term(e, ref_q12(st->fwd)) : 0;
        int64_t bw = p > 0 && has_next ? ref_term(e, ref_q12(st->bwd)) : 0;
        if (p + 1 < P)
          val[(p + 1) * w * h + y * w + x] += fw;
        if (p > 0 && has_next)
          val[(p - 1) * w * h + y * w + nx] += bw;
        int64_t rest = e - fw - bw;
        /* the weights, perturbed in pairs */
        int64_t qt[HT_FILTER_MAX_TAPS];
        for (int t = 0; t < f->ntaps; t++)
          qt[t] = f->taps[t].q;
        if (amount) {
          for (int k = 0; 2 * k + 1 < f->ntaps; k++) {
            uint32_t r[4];
            ht_rng4(st->seed, (uint32_t)p, (uint32_t)x, (uint32_t)y, (uint32_t)(k / 8), r);
            uint32_t word = r[(k % 8) / 2];
            int64_t u = k % 2 ? (word >> 16) : (word & 65535u);
            int64_t a = qt[2 * k], b = qt[2 * k + 1], m = a < b ? a : b;
            int64_t num = (u - 32768) * m * amount;
            int64_t d = num >= 0 ? num / 134217728 : -((-num + 134217727) / 134217728);
            qt[2 * k] = a + d;
            qt[2 * k + 1] = b - d;
          }
        }
        for (int t = 0; t < f->ntaps; t++) {
          int64_t tx = x + (rev ? -f->taps[t].dx : f->taps[t].dx), ty = y + f->taps[t].dy;
          if (tx >= 0 && tx < w && ty < h)
            val[p * w * h + ty * w + tx] += ref_term(rest, qt[t]);
        }
      }
    }
  }
  free(val);
}

/* -------------------------------------------------------------- the library */

static void set_params(const setup *st, ht_params *p, ht_variant v)
{
  ht_params_init(p);
  p->filter = st->filter;
  p->color = st->cmyk ? HT_COLOR_CMYK : HT_COLOR_PLANE_DEPENDENT;
  p->variant = v;
  p->scan = st->serpentine ? HT_SCAN_SERPENTINE : HT_SCAN_RASTER;
  for (int i = 0; i < st->planes; i++) {
    p->plane_levels[i] = st->levels[i];
    p->plane_weights.forward[i] = st->fwd;
    p->plane_weights.backward[i] = st->bwd;
  }
  p->randomize = st->amount;
  p->black = st->black;
  p->seed = st->seed;
}

/* ht_run's output turned back into level indices out[p][y * w + x]:
 * 16-bit input and output, or with `bytes` 8-bit (the picture's samples
 * must then be multiples of 257, the same values as 16 bits) */
static ht_status run_lib_fmt(ht_context *ctx, const picture *pic, const ht_params *p, int planes, uint8_t *out,
                             bool bytes)
{
  const int64_t n = pic->w * pic->h;
  const int bps = bytes ? 1 : 2, full = bytes ? 255 : 65535;
  uint8_t *i8 = xmalloc((size_t)(n * pic->channels * bps)), *o = xmalloc((size_t)(n * planes * bps));
  for (int64_t i = 0; i < n * pic->channels; i++)
    if (bytes)
      i8[i] = (uint8_t)(pic->in[i] / 257);
    else
      memcpy(i8 + 2 * i, &pic->in[i], 2);
  const ht_format fmt = bytes ? HT_FORMAT_U8 : HT_FORMAT_U16;
  ht_image in = { pic->w, pic->h, (size_t)(pic->w * pic->channels * bps), pic->channels, fmt, i8 };
  ht_image im = { pic->w, pic->h, (size_t)(pic->w * planes * bps), planes, fmt, o };
  ht_status s = ht_run(ctx, &in, &im, p);
  for (int c = 0; s == HT_OK && c < planes; c++) {
    int L = p->plane_levels[c] ? p->plane_levels[c] : p->levels;
    for (int64_t i = 0; i < n; i++) {
      int64_t v = bytes ? o[i * planes + c] : ((const uint16_t *)(const void *)o)[i * planes + c];
      out[c * n + i] = (uint8_t)((v * (L - 1) + full / 2) / full);
    }
  }
  free(i8);
  free(o);
  return s;
}

static ht_status run_lib(ht_context *ctx, const picture *pic, const ht_params *p, int planes, uint8_t *out)
{
  return run_lib_fmt(ctx, pic, p, planes, out, false);
}

static picture make_picture(int64_t w, int64_t h, int channels, uint64_t seed)
{
  uint16_t *in = xmalloc((size_t)(w * h * channels) * sizeof *in);
  for (int c = 0; c < channels; c++) {
    uint16_t *pl = random_plane(w, h, seed * 7 + (uint64_t)c);
    for (int64_t i = 0; i < w * h; i++)
      in[i * channels + c] = pl[i];
    free(pl);
  }
  return (picture){ w, h, channels, in };
}

/* The built-in filter `id`; for HT_FILTER_CUSTOM a custom one. */
static ht_filter filter_of(int id)
{
  const ht_filter *b = id == HT_FILTER_CUSTOM ? NULL : ht_filter_builtin((ht_filter_id)id);
  if (b)
    return *b;
  CHECK(id == HT_FILTER_CUSTOM, "no built-in filter %d", id);
  ht_filter f;
  char err[256];
  ht_status s = ht_filter_parse("- - * 5 1; 1 2 3 2 1; 0 1 0 1 0 / 20", &f, err, sizeof err);
  CHECK(s == HT_OK, "custom filter: %s", err);
  return f;
}

static uint64_t fnv(const uint8_t *b, size_t n)
{
  uint64_t hsh = 1469598103934665603ULL;
  for (size_t i = 0; i < n; i++)
    hsh = (hsh ^ b[i]) * 1099511628211ULL;
  return hsh;
}

/* The CPU implementations of plane-dependent error diffusion that the
 * library lists, the reference pd first. */
static int pd_variants(ht_variant *vs)
{
  ht_variant all[TEST_MAX_VARIANTS];
  const int n = test_variants(HT_METHOD_PLANE_DEPENDENT, HT_BACKEND_CPU, all, TEST_MAX_VARIANTS);
  int k = 1;
  vs[0] = HT_VARIANT_PD_CPU;
  for (int i = 0; i < n && i < TEST_MAX_VARIANTS; i++)
    if (all[i] != HT_VARIANT_PD_CPU)
      vs[k++] = all[i];
  CHECK(n == k && k > 1, "%d CPU variants of plane-dependent diffusion listed, %d found with pd", n, k);
  return k;
}

/* Runs variant p->variant; true when it ran. It may refuse the parameters
 * (HT_ERR_UNSUPPORTED) only where ht_check refuses them as well. */
static bool run_variant(ht_context *ctx, const picture *pic, const ht_params *p, int planes, uint8_t *out,
                        const char *what)
{
  ht_status s = run_lib(ctx, pic, p, planes, out);
  if (s == HT_ERR_UNSUPPORTED) {
    CHECK(ht_check(ctx, p) == HT_ERR_UNSUPPORTED, "%s: %s refuses the run, ht_check does not", what,
          ht_variant_name(p->variant));
    return false;
  }
  CHECK(s == HT_OK, "%s: %s: %s", what, ht_variant_name(p->variant), ht_context_message(ctx));
  return s == HT_OK;
}

/* ------------------------------------------------------------------ parts */

static void part_reference(ht_context *ctx)
{
  const int64_t shapes[][2] = { { 1, 1 }, { 1, 9 }, { 13, 1 }, { 7, 5 }, { 37, 19 } };
  const double weights[][2] = { { 0, 0 }, { 0.2, 0.2 }, { 0.5, 0.5 }, { 0.3, 0.1 } };
  const int lv[][4] = { { 2, 2, 2, 2 }, { 3, 3, 3, 3 }, { 16, 16, 16, 16 }, { 2, 3, 16, 2 } };
  int cases = 0;
  ht_variant vs[TEST_MAX_VARIANTS];
  const int nv = pd_variants(vs);
  for (int fi = 0; fi <= test_nbuiltin(); fi++) /* every built-in filter, then a custom one */
    for (int si = 0; si < 5; si++)
      for (int cm = 0; cm < 2; cm++) {
        const int k = fi * 10 + si * 2 + cm; /* a different mix for each */
        picture pic = make_picture(shapes[si][0], shapes[si][1], 3, (uint64_t)k + 1);
        setup st = { fi < test_nbuiltin() ? *test_builtin(fi) : filter_of(HT_FILTER_CUSTOM), cm ? 4 : 3, cm == 1, { 0 }, weights[k % 4][0], weights[k % 4][1],
                     (k / 4) % 2 ? 1.0 : 0.0, (k % 3) * 0.5, (uint64_t)k * 977, (k % 5) == 0 };
        memcpy(st.levels, lv[(k / 2) % 4], sizeof st.levels);
        const int64_t n = pic.w * pic.h * st.planes;
        uint8_t *want = xmalloc((size_t)n), *got = xmalloc((size_t)n);
        reference(&pic, &st, want);
        int ran = 0;
        for (int vi = 0; vi < nv; vi++) {
          ht_params p;
          set_params(&st, &p, vs[vi]);
          ht_context_set_threads(ctx, 3);
          if (!run_variant(ctx, &pic, &p, st.planes, got, "reference"))
            continue;
          ran++;
          CHECK(memcmp(want, got, (size_t)n) == 0,
                "%s differs from the reference: filter %s, %lldx%lld, %s, levels %d/%d/%d/%d, weights %g/%g, "
                "randomize %g, black %g, %s", ht_variant_name(vs[vi]), st.filter.name, (long long)pic.w,
                (long long)pic.h, st.cmyk ? "cmyk" : "rgb", st.levels[0], st.levels[1], st.levels[2], st.levels[3],
                st.fwd, st.bwd, st.amount, st.black, st.serpentine ? "serpentine" : "raster");
          cases++;
        }
        CHECK(ran > 0, "no variant ran filter %s, %s", st.filter.name, st.serpentine ? "serpentine" : "raster");
        free(want);
        free(got);
        free((void *)pic.in);
      }
  printf("reference: %d runs\n", cases);
}

static void part_threads(ht_context *ctx)
{
  setenv("HT_PD_ANY_THREADS", "1", 1);
  const int fis[] = { HT_FILTER_FLOYD_STEINBERG, HT_FILTER_JARVIS_JUDICE_NINKE, HT_FILTER_ATKINSON,
                      HT_FILTER_CUSTOM };
  ht_variant vs[TEST_MAX_VARIANTS];
  const int nv = pd_variants(vs);
  for (int i = 0; i < 4; i++) {
    picture pic = make_picture(150 + i * 41, 61 + i * 7, 3, (uint64_t)i + 100);
    setup st = { filter_of(fis[i]), i % 2 ? 4 : 3, i % 2 == 1, { 2, 2, 2, 2 }, 0.2 + 0.1 * i, 0.2, i >= 2 ? 1.0 : 0.0,
                 0.8, 5, false };
    if (i == 3)
      st.levels[1] = 5;
    const int64_t n = pic.w * pic.h * st.planes;
    uint8_t *want = xmalloc((size_t)n), *got = xmalloc((size_t)n);
    ht_params p;
    set_params(&st, &p, HT_VARIANT_PD_CPU);
    CHECK(run_lib(ctx, &pic, &p, st.planes, want) == HT_OK, "pd: %s", ht_context_message(ctx));
    for (int vi = 1; vi < nv; vi++)
      for (int t = 1; t <= 8; t++) {
        set_params(&st, &p, vs[vi]);
        ht_context_set_threads(ctx, t);
        ht_status s = run_lib(ctx, &pic, &p, st.planes, got);
        CHECK(s == HT_OK && memcmp(want, got, (size_t)n) == 0, "%s, %d threads, filter %s: %s",
              ht_variant_name(vs[vi]), t, st.filter.name, s == HT_OK ? "differs from pd" : ht_context_message(ctx));
      }
    free(want);
    free(got);
    free((void *)pic.in);
  }
}

static void part_fast(ht_context *ctx)
{
  setenv("HT_PD_ANY_THREADS", "1", 1); /* small images on every thread count */
  const char *shapes_fs[] = { "- * 3; 2 4 1 / 10", "- * 1; 1 1 0 / 3" }; /* custom filters of FS's shape */
  const int64_t sizes[][2] = { { 1, 1 }, { 2, 3 }, { 17, 9 }, { 63, 40 }, { 301, 70 }, { 1100, 45 } };
  const int lv[][4] = { { 2, 2, 2, 2 }, { 3, 3, 3, 3 }, { 2, 4, 3, 2 }, { 4, 2, 2, 3 } };
  const double ws[][2] = { { 0.2, 0.2 }, { 0.5, 0.5 }, { 0.3, 0.1 }, { 0, 0 } };
  int runs = 0;
  for (int k = 0; k < 26; k++) {
    ht_filter f;
    if (k % 4 < 2)
      f = *ht_filter_builtin(k % 4 ? HT_FILTER_SIERRA_LITE : HT_FILTER_FLOYD_STEINBERG);
    else {
      char err[256];
      CHECK(ht_filter_parse(shapes_fs[k % 4 - 2], &f, err, sizeof err) == HT_OK, "custom filter: %s", err);
    }
    const bool cmyk = k % 3 == 2, bytes = k % 2 == 0, wild = k >= 24;
    /* 8-bit cmyk on the larger shapes: the fast kernel's separating tiles need 8 x 8 inside */
    const int si = wild ? 4 + k % 2 : cmyk && bytes ? 4 + (k / 6) % 2 : k % 6;
    picture pic = make_picture(sizes[si][0], sizes[si][1], 3, (uint64_t)k + 500);
    uint16_t *in = (uint16_t *)(uintptr_t)pic.in;
    for (int64_t i = 0; i < pic.w * pic.h * 3; i++) /* 8-bit values, so that 8- and 16-bit runs agree */
      in[i] = (uint16_t)(in[i] / 257 * 257);
    setup st = { f, cmyk ? 4 : 3, cmyk, { 0 }, ws[k % 4][0], ws[(k / 4) % 4][1], (k % 13) == 5 ? 1.0 : 0.0,
                 cmyk ? (k % 4) * 0.33 : (k % 3) * 0.4, (uint64_t)k * 31, false }; /* cmyk: black 0 .. 0.99 */
    memcpy(st.levels, lv[(k / 3) % 4], sizeof st.levels);
    const int64_t n = pic.w * pic.h * st.planes;
    uint8_t *want = xmalloc((size_t)n), *got = xmalloc((size_t)n);
    ht_params p;
    if (wild) {
      /* plane 1 takes all of plane 0's and plane 2's errors: they grow past
       * 2^18, where the fast kernel's 32-bit products stop being exact */
      st.fwd = st.bwd = 0;
      set_params(&st, &p, HT_VARIANT_PD_CPU);
      p.plane_weights.forward[0] = 1;
      p.plane_weights.backward[2] = 1;
      for (int64_t i = 0; i < pic.w * pic.h; i++)
        in[i * 3 + 1] = 65535;
      CHECK(run_lib(ctx, &pic, &p, st.planes, want) == HT_OK, "pd: %s", ht_context_message(ctx));
    } else {
      reference(&pic, &st, want);
    }
    for (int t = 1; t <= 8; t++) {
      if (!wild)
        set_params(&st, &p, HT_VARIANT_PD_THREADS);
      p.variant = HT_VARIANT_PD_THREADS;
      ht_context_set_threads(ctx, t);
      ht_status s = run_lib_fmt(ctx, &pic, &p, st.planes, got, bytes);
      CHECK(s == HT_OK && memcmp(want, got, (size_t)n) == 0,
            "pd-threads, %d threads, filter %s, %lldx%lld, %s, %d-bit, levels %d/%d/%d/%d, weights %g/%g%s%s: %s", t,
            f.name, (long long)pic.w, (long long)pic.h, cmyk ? "cmyk" : "rgb", bytes ? 8 : 16, st.levels[0],
            st.levels[1], st.levels[2], st.levels[3], st.fwd, st.bwd, st.amount > 0 ? ", randomized" : "",
            wild ? ", growing errors" : "", s == HT_OK ? "differs from the reference" : ht_context_message(ctx));
      runs++;
    }
    free(want);
    free(got);
    free((void *)pic.in);
  }
  /* the row kernel against the fast one where a band's rows are many */
  picture pic = make_picture(700, 150, 3, 77);
  setup st = { *ht_filter_builtin(HT_FILTER_FLOYD_STEINBERG), 3, false, { 2, 2, 2, 2 }, 0.2, 0.2, 0, 0, 1, false };
  uint8_t *a = xmalloc((size_t)(700 * 150 * 3)), *b = xmalloc((size_t)(700 * 150 * 3));
  ht_params p;
  set_params(&st, &p, HT_VARIANT_PD_THREADS);
  ht_context_set_threads(ctx, 2);
  CHECK(run_lib(ctx, &pic, &p, 3, a) == HT_OK, "%s", ht_context_message(ctx));
  setenv("HT_PD_NO_DIAGONAL", "1", 1);
  CHECK(run_lib(ctx, &pic, &p, 3, b) == HT_OK, "%s", ht_context_message(ctx));
  unsetenv("HT_PD_NO_DIAGONAL");
  CHECK(memcmp(a, b, (size_t)(700 * 150 * 3)) == 0, "the row kernel and the fast kernel differ");
  free(a);
  free(b);
  free((void *)pic.in);
  /* 8-bit input of 4 channels (the fast kernel's 4-byte pixels), alpha
   * kept through, 4 colour planes, and more than 16 levels (its output
   * without the 16-entry tables): pd-threads against pd, whose bits part
   * reference checks */
  for (int k = 0; k < 3; k++) {
    const int64_t w = 333 + 41 * k, h = 67 + 9 * k;
    const int ch = k == 2 ? 3 : 4, alpha = k == 0, oc = ch; /* planes: ch - alpha */
    uint8_t *in8 = xmalloc((size_t)(w * h * ch)), *o1 = xmalloc((size_t)(w * h * oc)),
            *o2 = xmalloc((size_t)(w * h * oc));
    fill_random(in8, (size_t)(w * ch), w * ch, h, 1, (uint64_t)k + 900);
    ht_params q;
    ht_params_init(&q);
    q.filter = *ht_filter_builtin(HT_FILTER_FLOYD_STEINBERG);
    q.color = HT_COLOR_PLANE_DEPENDENT;
    q.alpha = alpha;
    q.levels = k == 2 ? 2 : 3;
    if (k == 2)
      q.plane_levels[1] = 20;
    for (int j = 0; j < 4; j++)
      q.plane_weights.forward[j] = q.plane_weights.backward[j] = 0.25;
    ht_image im = { w, h, (size_t)(w * ch), ch, HT_FORMAT_U8, in8 };
    ht_image om = { w, h, (size_t)(w * oc), oc, HT_FORMAT_U8, o1 };
    q.variant = HT_VARIANT_PD_CPU;
    CHECK(ht_run(ctx, &im, &om, &q) == HT_OK, "pd, %d channels: %s", ch, ht_context_message(ctx));
    om.data = o2;
    q.variant = HT_VARIANT_PD_THREADS;
    for (int t = 1; t <= 3; t++) {
      ht_context_set_threads(ctx, t);
      ht_status s = ht_run(ctx, &im, &om, &q);
      CHECK(s == HT_OK && memcmp(o1, o2, (size_t)(w * h * oc)) == 0, "pd-threads, %d threads, %d channels%s: %s", t,
            ch, alpha ? " (alpha)" : "", s == HT_OK ? "differs from pd" : ht_context_message(ctx));
      runs++;
    }
    free(in8), free(o1), free(o2);
  }
  unsetenv("HT_PD_ANY_THREADS");
  printf("fast: %d runs\n", runs);
}

static void part_per_channel(ht_context *ctx)
{
  for (int i = 0; i < 6; i++) {
    const int channels = i % 2 ? 4 : 3;
    picture pic = make_picture(83, 47, channels, (uint64_t)i + 200);
    setup st = { filter_of(i), channels, false, { 2, 3, 2, 16 }, 0, 0, 0, 1, (uint64_t)i, i == 5 };
    const int64_t n = pic.w * pic.h * channels;
    uint8_t *want = xmalloc((size_t)n), *got = xmalloc((size_t)n);
    ht_params p;
    set_params(&st, &p, HT_VARIANT_AUTO);
    p.color = HT_COLOR_PER_CHANNEL;
    ht_context_set_threads(ctx, 2);
    CHECK(run_lib(ctx, &pic, &p, channels, want) == HT_OK, "per-channel: %s", ht_context_message(ctx));
    ht_variant vs[TEST_MAX_VARIANTS];
    const int nv = pd_variants(vs);
    for (int vi = 0; vi < nv; vi++) {
      set_params(&st, &p, vs[vi]);
      if (run_variant(ctx, &pic, &p, channels, got, "per-channel"))
        CHECK(memcmp(want, got, (size_t)n) == 0, "%s with weights 0 differs from per-channel (filter %s)",
              ht_variant_name(vs[vi]), st.filter.name);
      else
        CHECK(vi > 0, "the reference %s refuses the per-channel case", ht_variant_name(vs[vi]));
    }
    free(want);
    free(got);
    free((void *)pic.in);
  }
}

static void part_randomize(ht_context *ctx)
{
  picture pic = make_picture(97, 53, 3, 300);
  const int64_t n = pic.w * pic.h * 3;
  uint8_t *a = xmalloc((size_t)n), *b = xmalloc((size_t)n), *c = xmalloc((size_t)n);
  setup st = { filter_of(HT_FILTER_FLOYD_STEINBERG), 3, false, { 2, 2, 2, 2 }, 0.2, 0.2, 0, 1, 1, false };
  ht_params p;
  set_params(&st, &p, HT_VARIANT_PD_THREADS);
  CHECK(run_lib(ctx, &pic, &p, 3, a) == HT_OK, "%s", ht_context_message(ctx));
  p.seed = 123456789;
  CHECK(run_lib(ctx, &pic, &p, 3, b) == HT_OK, "%s", ht_context_message(ctx));
  CHECK(memcmp(a, b, (size_t)n) == 0, "amount 0 depends on the seed");
  p.randomize = 1.0;
  CHECK(run_lib(ctx, &pic, &p, 3, b) == HT_OK, "%s", ht_context_message(ctx));
  CHECK(memcmp(a, b, (size_t)n) != 0, "amount 1 changes nothing");
  p.seed = 987654321;
  CHECK(run_lib(ctx, &pic, &p, 3, c) == HT_OK, "%s", ht_context_message(ctx));
  CHECK(memcmp(b, c, (size_t)n) != 0, "amount 1 does not follow the seed");
  p.randomize = 1.0 / 16384; /* rounds to Q12 0: no perturbation */
  CHECK(run_lib(ctx, &pic, &p, 3, c) == HT_OK, "%s", ht_context_message(ctx));
  CHECK(memcmp(a, c, (size_t)n) == 0, "an amount that rounds to 0 perturbs");
  free(a);
  free(b);
  free(c);
  free((void *)pic.in);
}

/* The paper's ramp (gray 0 .. 0.25, 512 x 32) and a brighter one. The
 * feeds move error between the planes (the paper's Bias grows with the
 * weights) but lose none: the planes' total stays within 0.5 % of full
 * scale of the input's, as each plane's own mean does with weights 0. */
static void part_mean(ht_context *ctx)
{
  const int64_t w = 512, h = 32;
  uint16_t *in = xmalloc((size_t)(w * h * 3) * sizeof *in);
  for (int ramp = 0; ramp < 2; ramp++) {
    for (int64_t y = 0; y < h; y++)
      for (int64_t x = 0; x < w; x++)
        for (int c = 0; c < 3; c++)
          in[(y * w + x) * 3 + c] = (uint16_t)((ramp ? 16384 : 0) + x * 16383 / (w - 1));
    picture pic = { w, h, 3, in };
    const double ws[] = { 0, 0.2, 0.5 };
    for (int wi = 0; wi < 3; wi++)
      for (int r = 0; r < 2; r++) {
        setup st = { filter_of(HT_FILTER_FLOYD_STEINBERG), 3, false, { 2, 2, 2, 2 }, ws[wi], ws[wi], r, 1, 7, false };
        ht_params p;
        set_params(&st, &p, HT_VARIANT_PD_THREADS);
        uint8_t *o = xmalloc((size_t)(w * h * 3));
        CHECK(run_lib(ctx, &pic, &p, 3, o) == HT_OK, "%s", ht_context_message(ctx));
        double in_mean = 0, total = 0;
        for (int64_t i = 0; i < w * h; i++)
          in_mean += in[i * 3] / 65535.0;
        in_mean /= (double)(w * h);
        for (int c = 0; c < 3; c++) {
          double m = 0;
          for (int64_t i = 0; i < w * h; i++)
            m += o[c * w * h + i];
          m /= (double)(w * h);
          total += m;
          CHECK(wi > 0 || fabs(m - in_mean) < 0.005, "ramp %d, weights %g, randomize %d: plane %d mean %.4f, input %.4f", ramp,
                ws[wi], r, c, m, in_mean);
        }
        CHECK(fabs(total / 3 - in_mean) < 0.005, "ramp %d, weights %g, randomize %d: mean of the planes %.4f, input "
              "%.4f", ramp, ws[wi], r, total / 3, in_mean);

        free(o);
      }
  }
  free(in);
}

static void part_golden(ht_context *ctx)
{
  /* made by running this code (HT_PRINT_GOLDEN=1 test-color golden prints them) */
  static const uint64_t golden[4] = { 0x9319c3b147ec1ab4ULL, 0xb2afad0ff9256570ULL, 0xd0f2b342f5a3e03aULL,
                                       0xb410cac209b03981ULL };
  picture pic = make_picture(127, 71, 3, 400);
  bool print = getenv("HT_PRINT_GOLDEN") != NULL;
  for (int i = 0; i < 4; i++) {
    setup st = { filter_of(i == 2 ? HT_FILTER_STUCKI : HT_FILTER_FLOYD_STEINBERG), i % 2 ? 4 : 3, i % 2 == 1,
                 { 2, 2, 2, 2 }, 0.15 * i, 0.15 * i, i >= 2 ? 1.0 : 0.0, 0.7, 42, false };
    if (i == 3)
      st.levels[0] = st.levels[3] = 3;
    const int64_t n = pic.w * pic.h * st.planes;
    uint8_t *o = xmalloc((size_t)n);
    ht_params p;
    set_params(&st, &p, HT_VARIANT_PD_THREADS);
    CHECK(run_lib(ctx, &pic, &p, st.planes, o) == HT_OK, "%s", ht_context_message(ctx));
    uint64_t hsh = fnv(o, (size_t)n);
    if (print)
      printf("  0x%016llxULL,\n", (unsigned long long)hsh);
    else
      CHECK(hsh == golden[i], "golden %d: 0x%016llx, want 0x%016llx", i, (unsigned long long)hsh,
            (unsigned long long)golden[i]);
    free(o);
  }
  free((void *)pic.in);
}

static void expect(ht_context *ctx, const ht_params *p, int channels, int out_channels, ht_status want,
                   const char *words)
{
  uint16_t in[4 * 4 * 4] = { 0 };
  uint16_t out[4 * 4 * 5];
  ht_image i = { 4, 4, (size_t)(4 * channels) * 2, channels, HT_FORMAT_U16, in };
  ht_image o = { 4, 4, (size_t)(4 * out_channels) * 2, out_channels, HT_FORMAT_U16, out };
  ht_status s = ht_run(ctx, &i, &o, p);
  CHECK(s == want, "got %s (%s), want %s", ht_status_string(s), ht_context_message(ctx), ht_status_string(want));
  CHECK(strstr(ht_context_message(ctx), words) != NULL, "message '%s' does not say '%s'", ht_context_message(ctx),
        words);
}

static void part_errors(ht_context *ctx)
{
  ht_params p;
  ht_params_init(&p);
  p.color = HT_COLOR_PLANE_DEPENDENT;
  p.plane_weights.forward[0] = 1.5;
  expect(ctx, &p, 3, 3, HT_ERR_INVALID_ARGUMENT, "must be 0..1");
  p.plane_weights.forward[0] = NAN;
  expect(ctx, &p, 3, 3, HT_ERR_INVALID_ARGUMENT, "must be 0..1");
  p.plane_weights.forward[0] = 0.6;
  p.plane_weights.backward[0] = 0.6;
  expect(ctx, &p, 3, 3, HT_ERR_INVALID_ARGUMENT, "more than 1");
  ht_params_init(&p);
  p.color = HT_COLOR_PLANE_DEPENDENT;
  p.randomize = -0.1;
  expect(ctx, &p, 3, 3, HT_ERR_INVALID_ARGUMENT, "randomize");
  p.randomize = 0;
  p.black = 2;
  expect(ctx, &p, 3, 3, HT_ERR_INVALID_ARGUMENT, "black");
  ht_params_init(&p);
  p.color = HT_COLOR_PER_CHANNEL;
  p.plane_weights.forward[1] = 0.2;
  expect(ctx, &p, 3, 3, HT_ERR_UNSUPPORTED, "plane-dependent or cmyk");
  p.plane_weights.forward[1] = 0;
  p.randomize = 0.5;
  expect(ctx, &p, 3, 3, HT_ERR_UNSUPPORTED, "plane-dependent or cmyk");
  ht_params_init(&p);
  p.color = HT_COLOR_CMYK;
  expect(ctx, &p, 1, 4, HT_ERR_INVALID_ARGUMENT, "separates RGB");
  expect(ctx, &p, 3, 3, HT_ERR_INVALID_ARGUMENT, "needs 4 channel");
  p.method = HT_METHOD_DBS;
  expect(ctx, &p, 3, 4, HT_ERR_UNSUPPORTED, "per-channel");
  ht_params_init(&p);
  p.color = HT_COLOR_PLANE_DEPENDENT;
  p.scan = HT_SCAN_SERPENTINE;
  p.variant = HT_VARIANT_PD_THREADS;
  expect(ctx, &p, 3, 3, HT_ERR_UNSUPPORTED, "serpentine");
  p.variant = HT_VARIANT_ED;
  p.scan = HT_SCAN_RASTER;
  expect(ctx, &p, 3, 3, HT_ERR_UNSUPPORTED, "another method");
  ht_params_init(&p);
  p.method = HT_METHOD_PLANE_DEPENDENT;
  expect(ctx, &p, 3, 1, HT_ERR_INVALID_ARGUMENT, "needs colour mode");
  /* a band is refused */
  ht_params_init(&p);
  p.color = HT_COLOR_PLANE_DEPENDENT;
  uint16_t in[12] = { 0 }, out[12];
  ht_image i = { 2, 2, 12, 3, HT_FORMAT_U16, in }, o = { 2, 2, 12, 3, HT_FORMAT_U16, out };
  ht_band band = { 0, NULL, NULL };
  CHECK(ht_run_band(ctx, &i, &o, &p, &band) == HT_ERR_UNSUPPORTED, "a band ran: %s", ht_context_message(ctx));
  /* the lists name the modes */
  CHECK(ht_choice_by_name(HT_LIST_COLOR_MODES, "plane-dependent") != NULL, "no plane-dependent in the list");
  CHECK(ht_choice_by_name(HT_LIST_COLOR_MODES, "cmyk") != NULL, "no cmyk in the list");
}

int main(int argc, char **argv)
{
  const char *part = argc > 1 ? argv[1] : "reference";
  ht_context *ctx = ht_context_new();
  if (!ctx)
    return 99;
  if (!strcmp(part, "reference"))
    part_reference(ctx);
  else if (!strcmp(part, "threads"))
    part_threads(ctx);
  else if (!strcmp(part, "fast"))
    part_fast(ctx);
  else if (!strcmp(part, "per-channel"))
    part_per_channel(ctx);
  else if (!strcmp(part, "randomize"))
    part_randomize(ctx);
  else if (!strcmp(part, "mean"))
    part_mean(ctx);
  else if (!strcmp(part, "golden"))
    part_golden(ctx);
  else if (!strcmp(part, "errors"))
    part_errors(ctx);
  else {
    fprintf(stderr, "test-color: unknown part '%s'\n", part);
    return 99;
  }
  ht_context_free(ctx);
  return test_finish(part);
}

/* Bias, Grain and the colorant-overlap figure (ht_compute_color_metrics,
 * core/color/color_metrics.c; docs/color.md "Measuring it") against the
 * paper's own numbers and an independent computation written here.
 *
 *   figure2   Zhang et al., Figure 2: the 3 x 3 RGB image of gray 1/9 and
 *             its outputs b-e, with the Bias and Grain the paper gives
 *             (0/0, 0/11 %, 67 %/0, 100 %/44 %) and the overlap figure
 *   least     the least overlap on single pixels whose answer is known
 *             by hand (Frechet's bound for two planes, and others)
 *   planes4   four planes: a 4-channel image with mixed levels, and cmyk
 *             with the separation done here
 *   random    random inputs and outputs, 1..4 planes, every format,
 *             against the computation here; and real runs of ht_run
 *   errors    what is refused
 */
#include "ht-test.h"

#include <math.h>

#define NEAR(a, b) (fabs((a) - (b)) < 1e-9)

/* ------------------------------------------------ independent reference */

typedef struct {
  double bias, grain, independent, least;
} ref_metrics;

/* The least chance of two or more of n colorants present with chances
 * p[]: the smallest t with sum min(p_i, t) - t >= sum p_i - 1, by
 * bisection (the library walks the sorted chances instead), with the
 * same allowance for rounding where the two sides meet on a flat. */
static double ref_least(const double *p, int n)
{
  double s = 0;
  for (int i = 0; i < n; i++)
    s += p[i];
  if (s <= 1 + 1e-12)
    return 0;
  double lo = 0, hi = 1;
  for (int it = 0; it < 100; it++) {
    double t = (lo + hi) / 2, f = -t;
    for (int i = 0; i < n; i++)
      f += p[i] < t ? p[i] : t;
    if (f >= s - 1 - 1e-12)
      hi = t;
    else
      lo = t;
  }
  return hi;
}

/* Two or more of n independent colorants, by summing over all 2^n
 * patterns. */
static double ref_independent(const double *p, int n)
{
  double sum = 0;
  for (unsigned m = 0; m < 1u << n; m++) {
    int on = 0;
    double pr = 1;
    for (int i = 0; i < n; i++) {
      bool b = m >> i & 1;
      on += b;
      pr *= b ? p[i] : 1 - p[i];
    }
    if (on >= 2)
      sum += pr;
  }
  return sum;
}

/* `in`: n pixels of `planes` input amounts in 0..1; `lv`: their output
 * level indices; `levels` per plane. */
static ref_metrics ref_compute(const double *in, const int *lv, const int *levels, int planes, int64_t n)
{
  ref_metrics r = { 0, 0, 0, 0 };
  double num[4] = { 0 }, mean[4] = { 0 };
  for (int64_t i = 0; i < n; i++) {
    int on = 0;
    double p[4];
    for (int c = 0; c < planes; c++) {
      num[c] += (double)lv[i * planes + c] / (levels[c] - 1);
      mean[c] += in[i * planes + c];
      on += lv[i * planes + c] > 0;
      p[c] = fmin(1.0, in[i * planes + c] * (levels[c] - 1));
    }
    r.grain += on >= 2;
    r.independent += ref_independent(p, planes);
    r.least += ref_least(p, planes);
  }
  for (int c = 0; c < planes; c++)
    r.bias += fabs(num[c] - mean[c]);
  r.bias /= (double)n;
  r.grain /= (double)n;
  r.independent /= (double)n;
  r.least /= (double)n;
  return r;
}

static void expect(const ht_color_metrics *m, ref_metrics r, double tol, const char *what)
{
  CHECK(fabs(m->bias - r.bias) < tol, "%s: bias %.9f, expected %.9f", what, m->bias, r.bias);
  CHECK(fabs(m->grain - r.grain) < 1e-12, "%s: grain %.9f, expected %.9f", what, m->grain, r.grain);
  CHECK(fabs(m->overlap_independent - r.independent) < tol, "%s: independent %.9f, expected %.9f", what,
        m->overlap_independent, r.independent);
  CHECK(fabs(m->overlap_least - r.least) < tol, "%s: least %.9f, expected %.9f", what, m->overlap_least, r.least);
  double span = r.independent - r.least;
  if (span > 1e-6)
    CHECK(fabs(m->overlap - (r.grain - r.least) / span) < tol * 100, "%s: overlap %.9f, expected %.9f", what,
          m->overlap, (r.grain - r.least) / span);
}

/* ------------------------------------------------------------- figure 2 */

static void part_figure2(void)
{
  /* (a): every pixel gray 1/9 in R, G and B */
  float in[9 * 3];
  for (int i = 0; i < 27; i++)
    in[i] = 1.0f / 9.0f;
  /* the outputs, one string a pixel: which of R, G, B are lit */
  static const char *const cases[4][9] = {
    { "R", "G", "B", "", "", "", "", "", "" },                /* (b) */
    { "", "", "", "", "RGB", "", "", "", "" },                /* (c) */
    { "R", "G", "B", "G", "B", "R", "B", "R", "G" },          /* (d) */
    { "RG", "RG", "GB", "GB", "R", "G", "B", "B", "" },       /* (e) */
  };
  /* the paper's numbers: |3-1|*3/9 = 67 %, (|3-1|+|5-1|+|4-1|)/9 = 100 % */
  static const double bias[4] = { 0, 0, 6.0 / 9, 9.0 / 9 }, grain[4] = { 0, 1.0 / 9, 0, 4.0 / 9 };
  ht_params par;
  ht_params_init(&par);
  par.color = HT_COLOR_PLANE_DEPENDENT;
  for (int k = 0; k < 4; k++) {
    uint8_t out[27] = { 0 };
    int lv[27] = { 0 };
    for (int i = 0; i < 9; i++)
      for (const char *c = cases[k][i]; *c; c++) {
        int ch = *c == 'R' ? 0 : *c == 'G' ? 1 : 2;
        out[i * 3 + ch] = 255;
        lv[i * 3 + ch] = 1;
      }
    ht_image gi = { 3, 3, 9 * sizeof(float), 3, HT_FORMAT_F32, in }, go = { 3, 3, 9, 3, HT_FORMAT_U8, out };
    ht_color_metrics m;
    CHECK(ht_compute_color_metrics(&gi, &go, &par, &m) == HT_OK, "case %c", 'b' + k);
    CHECK(m.planes == 3, "case %c: %d planes", 'b' + k, m.planes);
    /* float 1/9 becomes the nearest 16-bit step: 1e-4 of a dot */
    CHECK(fabs(m.bias - bias[k]) < 1e-4, "case %c: Bias %.4f, the paper %.4f", 'b' + k, m.bias, bias[k]);
    CHECK(fabs(m.grain - grain[k]) < 1e-12, "case %c: Grain %.4f, the paper %.4f", 'b' + k, m.grain, grain[k]);
    double din[27], p[3] = { 1.0 / 9, 1.0 / 9, 1.0 / 9 };
    for (int i = 0; i < 27; i++)
      din[i] = (double)lrintf(in[i] * 65535.0f) / 65535.0; /* as the row loader rounds */
    int levels[3] = { 2, 2, 2 };
    expect(&m, ref_compute(din, lv, levels, 3, 9), 1e-9, "figure 2");
    /* three planes at 1/9: no overlap is needed; independent planes
     * would overlap on 1 - (8/9)^3 - 3 (1/9)(8/9)^2 = 25/729 of pixels */
    CHECK(fabs(ref_independent(p, 3) - 25.0 / 729) < 1e-12, "reference independent");
    CHECK(fabs(m.overlap_independent - 25.0 / 729) < 1e-4, "case %c: independent %.6f", 'b' + k,
          m.overlap_independent);
    CHECK(m.overlap_least == 0, "case %c: least %.6f", 'b' + k, m.overlap_least);
    CHECK(fabs(m.overlap - grain[k] / (25.0 / 729)) < 1e-2, "case %c: overlap %.4f", 'b' + k, m.overlap);
  }
}

/* ------------------------------------------------------ least, by hand */

static void part_least(void)
{
  /* one pixel, chances from a 3-level input so that 0.5 is exact
   * enough: chance = a (L - 1) */
  static const struct {
    int planes;
    double p[4], least;
  } cases[] = {
    { 2, { 0.6, 0.6 }, 0.2 },              /* Frechet: max(0, p + q - 1) */
    { 2, { 0.3, 0.5 }, 0.0 },
    { 3, { 0.5, 0.5, 0.5 }, 0.25 },        /* (s - 1) / (P - 1) */
    { 3, { 1.0, 1.0, 0.0 }, 1.0 },         /* both always on */
    { 3, { 1.0, 0.3, 0.3 }, 0.3 },         /* the two small ones together */
    { 4, { 0.25, 0.25, 0.25, 0.25 }, 0.0 },
    { 4, { 0.9, 0.9, 0.9, 0.9 }, 2.6 / 3 },
    { 4, { 1.0, 0.2, 0.2, 0.2 }, 0.2 },    /* the three small ones together */
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    const int n = cases[k].planes;
    double r = ref_least(cases[k].p, n);
    CHECK(fabs(r - cases[k].least) < 1e-9, "case %zu: reference least %.6f, by hand %.6f", k, r, cases[k].least);
    uint16_t in[4];
    uint8_t out[4] = { 0 };
    ht_params par;
    ht_params_init(&par);
    par.color = HT_COLOR_PER_CHANNEL;
    par.levels = 3;
    for (int c = 0; c < n; c++)
      in[c] = (uint16_t)lround(cases[k].p[c] / 2 * 65535);
    ht_image gi = { 1, 1, 8, n, HT_FORMAT_U16, in }, go = { 1, 1, 4, n, HT_FORMAT_U8, out };
    ht_color_metrics m;
    CHECK(ht_compute_color_metrics(&gi, &go, &par, &m) == HT_OK, "case %zu", k);
    CHECK(fabs(m.overlap_least - cases[k].least) < 1e-4, "case %zu: least %.6f, by hand %.6f", k, m.overlap_least,
          cases[k].least);
    CHECK(fabs(m.overlap_independent - ref_independent(cases[k].p, n)) < 1e-4, "case %zu: independent %.6f", k,
          m.overlap_independent);
  }
}

/* ------------------------------------------------------------- 4 planes */

static void part_planes4(void)
{
  /* 2 x 2, four planes, levels 2, 2, 3, 2: amounts in, levels out */
  static const uint16_t in[16] = { 0, 13107, 32768, 65535, 6553, 6553, 6553, 6553,
                                   65535, 0, 0, 0, 19661, 26214, 0, 52428 };
  static const int lv[16] = { 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 0, 0, 1, 2, 1 };
  static const int levels[4] = { 2, 2, 3, 2 };
  uint8_t out[16];
  for (int i = 0; i < 16; i++)
    out[i] = (uint8_t)(lv[i] * 255 / (levels[i % 4] - 1));
  ht_params par;
  ht_params_init(&par);
  par.color = HT_COLOR_PLANE_DEPENDENT;
  for (int c = 0; c < 4; c++)
    par.plane_levels[c] = levels[c];
  ht_image gi = { 2, 2, 16, 4, HT_FORMAT_U16, (void *)(uintptr_t)in }, go = { 2, 2, 8, 4, HT_FORMAT_U8, out };
  ht_color_metrics m;
  CHECK(ht_compute_color_metrics(&gi, &go, &par, &m) == HT_OK, "4 planes");
  CHECK(m.planes == 4, "4 planes: %d", m.planes);
  double din[16];
  for (int i = 0; i < 16; i++)
    din[i] = in[i] / 65535.0;
  expect(&m, ref_compute(din, lv, levels, 4, 4), 1e-9, "4 planes");
  /* by hand: sums out 2, 2, 1.5, 2; in 1.4, 0.7, 0.6, 1.9: bias
   * (0.6 + 1.3 + 0.9 + 0.1) / 4 = 0.725; grain: pixels 0 and 3 (three
   * colorants each): 2/4 */
  CHECK(fabs(m.bias - 0.725) < 1e-4, "4 planes: bias %.6f, by hand 0.725", m.bias);
  CHECK(NEAR(m.grain, 0.5), "4 planes: grain %.6f, by hand 0.5", m.grain);

  /* cmyk: RGB in, separated here (docs/color.md), inks out */
  uint8_t rgb[2 * 3 * 3], inks[2 * 3 * 4];
  uint64_t seed = 3;
  for (int black = 0; black <= 2; black++) {
    ht_params_init(&par);
    par.color = HT_COLOR_CMYK;
    par.black = black / 2.0;
    int32_t kq = (int32_t)(par.black * 65536 + 0.5);
    double dcin[6 * 4];
    int ilv[6 * 4];
    for (int i = 0; i < 6; i++) {
      for (int c = 0; c < 3; c++)
        rgb[i * 3 + c] = (uint8_t)(rng_next(&seed) >> 56);
      int32_t cmy[3], mn = 65535;
      for (int c = 0; c < 3; c++) {
        cmy[c] = 65535 - rgb[i * 3 + c] * 257;
        mn = cmy[c] < mn ? cmy[c] : mn;
      }
      int32_t k = (int32_t)(((int64_t)mn * kq + 32768) >> 16);
      for (int c = 0; c < 4; c++) {
        dcin[i * 4 + c] = (c < 3 ? cmy[c] - k : k) / 65535.0;
        ilv[i * 4 + c] = (int)(rng_next(&seed) >> 63);
        inks[i * 4 + c] = (uint8_t)(ilv[i * 4 + c] * 255);
      }
    }
    ht_image ci = { 3, 2, 9, 3, HT_FORMAT_U8, rgb }, co = { 3, 2, 12, 4, HT_FORMAT_U8, inks };
    CHECK(ht_compute_color_metrics(&ci, &co, &par, &m) == HT_OK, "cmyk");
    CHECK(m.planes == 4, "cmyk: %d planes", m.planes);
    int l2[4] = { 2, 2, 2, 2 };
    expect(&m, ref_compute(dcin, ilv, l2, 4, 6), 1e-9, "cmyk");
  }
}

/* --------------------------------------------------------------- random */

static double in_amount(const ht_image *im, int64_t i, int c)
{
  size_t k = (size_t)i * (size_t)im->channels + (size_t)c;
  switch (im->format) {
  case HT_FORMAT_U8: return ((const uint8_t *)im->data)[k] * 257 / 65535.0;
  case HT_FORMAT_U16: return ((const uint16_t *)im->data)[k] / 65535.0;
  default: return (double)lrintf(((const float *)im->data)[k] * 65535.0f) / 65535.0; /* as the loader */
  }
}

static void part_random(void)
{
  uint64_t seed = 11;
  const ht_format fmts[3] = { HT_FORMAT_U8, HT_FORMAT_U16, HT_FORMAT_F32 };
  ht_context *ctx = ht_context_new();
  for (int round = 0; round < 36; round++) {
    const int planes = 1 + round % 4, w = 1 + (int)(rng_next(&seed) % 23), h = 1 + (int)(rng_next(&seed) % 9);
    const ht_format fi = fmts[round % 3], fo = fmts[(round / 3) % 2]; /* no float output */
    const size_t si = ht_format_row_bytes(fi, w, planes), so = ht_format_row_bytes(fo, w, planes);
    const int64_t n = (int64_t)w * h;
    void *in = xmalloc(si * (size_t)h), *out = xmalloc(so * (size_t)h);
    int levels[4];
    ht_params par;
    ht_params_init(&par);
    par.color = round % 2 ? HT_COLOR_PLANE_DEPENDENT : HT_COLOR_PER_CHANNEL;
    for (int c = 0; c < planes; c++)
      levels[c] = par.plane_levels[c] = 2 + (int)(rng_next(&seed) % 3);
    /* dark inputs, so that grain and the overlap bounds differ */
    for (int64_t i = 0; i < n * planes; i++) {
      uint32_t v = (uint32_t)(rng_next(&seed) >> 50); /* 0 .. 16383 */
      if (fi == HT_FORMAT_U8)
        ((uint8_t *)in)[i] = (uint8_t)(v >> 6);
      else if (fi == HT_FORMAT_U16)
        ((uint16_t *)in)[i] = (uint16_t)(v * 4);
      else
        ((float *)in)[i] = (float)v / 16383.0f;
    }
    ht_image gi = { w, h, si, planes, fi, in }, go = { w, h, so, planes, fo, out };
    /* even rounds: random levels; odd rounds: a real halftone */
    int *lv = xmalloc((size_t)(n * planes) * sizeof *lv);
    if (round % 2 == 0) {
      for (int64_t i = 0; i < n * planes; i++) {
        int c = (int)(i % planes), q = (int)(rng_next(&seed) % (uint64_t)levels[c]);
        double f = (double)q / (levels[c] - 1);
        if (fo == HT_FORMAT_U8)
          ((uint8_t *)out)[i] = (uint8_t)lround(f * 255);
        else
          ((uint16_t *)out)[i] = (uint16_t)lround(f * 65535);
      }
    } else {
      par.plane_weights.forward[0] = par.plane_weights.backward[1] = 0.2;
      CHECK(ht_run(ctx, &gi, &go, &par) == HT_OK, "round %d: %s", round, ht_context_message(ctx));
    }
    double *din = xmalloc((size_t)(n * planes) * sizeof *din);
    for (int64_t i = 0; i < n; i++)
      for (int c = 0; c < planes; c++) {
        din[i * planes + c] = in_amount(&gi, i, c);
        double f = fo == HT_FORMAT_U8 ? ((uint8_t *)out)[i * planes + c] / 255.0
                                      : ((uint16_t *)out)[i * planes + c] / 65535.0;
        lv[i * planes + c] = (int)lround(f * (levels[c] - 1));
      }
    ht_color_metrics m;
    CHECK(ht_compute_color_metrics(&gi, &go, &par, &m) == HT_OK, "round %d", round);
    char what[64];
    snprintf(what, sizeof what, "round %d (%d planes, %dx%d)", round, planes, w, h);
    expect(&m, ref_compute(din, lv, levels, planes, n), 1e-9, what);
    free(din);
    free(lv);
    free(in);
    free(out);
  }
  ht_context_free(ctx);
}

/* --------------------------------------------------------------- errors */

static void part_errors(void)
{
  uint8_t in[4 * 4] = { 0 }, out[4 * 5] = { 0 };
  ht_params par;
  ht_params_init(&par);
  par.color = HT_COLOR_PLANE_DEPENDENT;
  ht_color_metrics m;
  ht_image gi = { 2, 2, 6, 3, HT_FORMAT_U8, in }, go = { 2, 2, 6, 3, HT_FORMAT_U8, out };
  CHECK(ht_compute_color_metrics(&gi, &go, &par, &m) == HT_OK, "3 planes");
  CHECK(ht_compute_color_metrics(NULL, &go, &par, &m) == HT_ERR_INVALID_ARGUMENT, "no input");
  CHECK(ht_compute_color_metrics(&gi, &go, NULL, &m) == HT_ERR_INVALID_ARGUMENT, "no params");
  CHECK(ht_compute_color_metrics(&gi, &go, &par, NULL) == HT_ERR_INVALID_ARGUMENT, "no result");
  ht_image bad = go;
  bad.width = 1;
  CHECK(ht_compute_color_metrics(&gi, &bad, &par, &m) == HT_ERR_BAD_SIZE, "sizes differ");
  bad = go;
  bad.channels = 4;
  CHECK(ht_compute_color_metrics(&gi, &bad, &par, &m) == HT_ERR_INVALID_ARGUMENT, "channels differ");
  par.color = HT_COLOR_CMYK; /* four inks out of three channels */
  CHECK(ht_compute_color_metrics(&gi, &go, &par, &m) == HT_ERR_INVALID_ARGUMENT, "cmyk into 3 channels");
  par.black = 2;
  bad.channels = 4;
  CHECK(ht_compute_color_metrics(&gi, &bad, &par, &m) == HT_ERR_INVALID_ARGUMENT, "black 2");
  par.color = HT_COLOR_PER_CHANNEL;
  par.black = 1;
  par.plane_levels[1] = 300;
  CHECK(ht_compute_color_metrics(&gi, &go, &par, &m) == HT_ERR_INVALID_ARGUMENT, "levels 300");
  par.plane_levels[1] = 0;
  float fin[12] = { 0 }, fout[12] = { 0 };
  ht_image fi = { 2, 2, 24, 3, HT_FORMAT_F32, fin }, fo = { 2, 2, 24, 3, HT_FORMAT_F32, fout };
  CHECK(ht_compute_color_metrics(&fi, &go, &par, &m) == HT_OK, "float input");
  CHECK(ht_compute_color_metrics(&gi, &fo, &par, &m) == HT_ERR_INVALID_ARGUMENT, "float output");
  fin[4] = NAN;
  CHECK(ht_compute_color_metrics(&fi, &go, &par, &m) == HT_ERR_BAD_PIXEL, "NaN input");
}

int main(int argc, char **argv)
{
  const char *part = argc > 1 ? argv[1] : "";
  if (!strcmp(part, "figure2"))
    part_figure2();
  else if (!strcmp(part, "least"))
    part_least();
  else if (!strcmp(part, "planes4"))
    part_planes4();
  else if (!strcmp(part, "random"))
    part_random();
  else if (!strcmp(part, "errors"))
    part_errors();
  else {
    fprintf(stderr, "test-color-metrics: unknown part '%s'\n", part);
    return 99;
  }
  return test_finish("test-color-metrics");
}

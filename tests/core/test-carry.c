/* Carried rows (ht_run_band): an image run as bands, each band given the
 * error rows the band above returned, equals the image run at once, bit
 * for bit, for every CPU variant, thread count, filter, level count and
 * band height (1 row, fewer rows than the filter reaches, many), in
 * gray and in per-channel colour, in the serpentine scan too; bands run
 * by different variants fit together; the rows returned are the same
 * whichever variant made them. ht_run (variant ed) is the ground truth.
 *
 * usage: test-carry [variants|mixed|color|errors] */
#include "ht-test.h"

static const char *const customs[] = {
  "* 1 / 2",                                                 /* stays on its row   */
  "- * 0 3; 2 0 1 / 8",                                      /* reaches 1 row down */
  "- - - - * 5; 0 0 0 0 0 0 0 0 0; 3 0 0 0 0 0 0 0 1 / 16", /* 2 rows, 4 left    */
  "- - - - * 1 2 3 4; 1 1 1 1 1 1 1 1 1; 1 0 0 0 2 0 0 0 1; 1 1 1 1 1 1 1 1 1 / 64", /* 3 rows */
};
#define NCUSTOM ((int)(sizeof customs / sizeof customs[0]))

typedef struct {
  int64_t w, h;
  int channels;
  const uint16_t *in; /* interleaved */
} picture;

static ht_image in_rows(const picture *pic, int64_t y0, int64_t n)
{
  const size_t stride = (size_t)pic->w * (size_t)pic->channels * 2;
  return (ht_image){ pic->w, n, stride, pic->channels, HT_FORMAT_U16,
                     (void *)(uintptr_t)((const uint8_t *)pic->in + (size_t)y0 * stride) };
}

static ht_image out_rows(const picture *pic, uint8_t *out, int64_t y0, int64_t n)
{
  const size_t stride = (size_t)pic->w * (size_t)pic->channels;
  return (ht_image){ pic->w, n, stride, pic->channels, HT_FORMAT_U8, out + (size_t)y0 * stride };
}

/* Runs `pic` as bands of heights[0], heights[1], ... (repeated), band b
 * by variants[b mod nvariants] with threads[b mod nthreads]. Writes the
 * rows the last band returns to `last` (may be NULL). */
static bool run_bands(ht_context *ctx, const picture *pic, const ht_params *base, const int *heights,
                      int nheights, const ht_variant *variants, int nvariants, const int *threads, int nthreads,
                      uint8_t *out, int32_t *last, const char *what)
{
  const int D = ht_carry_rows(base);
  const size_t carry = (size_t)D * (size_t)pic->w * (size_t)pic->channels;
  int32_t *above = xmalloc(carry * sizeof *above), *below = xmalloc(carry * sizeof *below);
  bool ok = true;
  int b = 0;
  for (int64_t y0 = 0; y0 < pic->h && ok; b++) {
    int64_t n = heights[b % nheights];
    if (n > pic->h - y0)
      n = pic->h - y0;
    ht_params p = *base;
    p.variant = variants[b % nvariants];
    ht_context_set_threads(ctx, threads[b % nthreads]);
    ht_image i = in_rows(pic, y0, n), o = out_rows(pic, out, y0, n);
    ht_band band = { y0, y0 > 0 ? above : NULL, below };
    memset(below, 0x5A, carry * sizeof *below);
    ht_status s = ht_run_band(ctx, &i, &o, &p, &band);
    CHECK(s == HT_OK, "%s: band at row %lld (%lld rows), %s: %s", what, (long long)y0, (long long)n,
          ht_variant_name(p.variant), ht_context_message(ctx));
    ok = s == HT_OK;
    int32_t *t = above;
    above = below;
    below = t;
    y0 += n;
  }
  if (ok && last)
    memcpy(last, above, carry * sizeof *last);
  free(above);
  free(below);
  return ok;
}

static void reference(ht_context *ctx, const picture *pic, const ht_params *base, uint8_t *out, int32_t *last)
{
  static const int whole[] = { 1 << 30 }, one[] = { 1 };
  const ht_variant ed = HT_VARIANT_ED;
  ht_params p = *base;
  p.variant = HT_VARIANT_ED;
  ht_context_set_threads(ctx, 1);
  ht_image i = in_rows(pic, 0, pic->h), o = out_rows(pic, out, 0, pic->h);
  ht_status s = ht_run(ctx, &i, &o, &p);
  CHECK(s == HT_OK, "reference: %s", ht_context_message(ctx));
  /* the rows a one-band run returns, by the reference variant */
  uint8_t *again = xmalloc((size_t)(pic->w * pic->h * pic->channels));
  run_bands(ctx, pic, base, whole, 1, &ed, 1, one, 1, again, last, "reference band");
  CHECK(memcmp(again, out, (size_t)(pic->w * pic->h * pic->channels)) == 0,
        "one band of the whole image differs from ht_run");
  free(again);
}

static void compare(const picture *pic, const uint8_t *want, const uint8_t *got, const int32_t *want_last,
                    const int32_t *got_last, int D, const char *what)
{
  const size_t n = (size_t)(pic->w * pic->h * pic->channels);
  for (size_t i = 0; i < n; i++)
    if (want[i] != got[i]) {
      size_t px = i / (size_t)pic->channels;
      CHECK(0, "%s: differs at (%lld, %lld) channel %d: %d, not %d", what, (long long)(px % (size_t)pic->w),
            (long long)(px / (size_t)pic->w), (int)(i % (size_t)pic->channels), got[i], want[i]);
      return;
    }
  const size_t carry = (size_t)D * (size_t)pic->w * (size_t)pic->channels;
  for (size_t i = 0; i < carry; i++)
    if (want_last[i] != got_last[i]) {
      CHECK(0, "%s: returned error %zu is %d, not %d", what, i, got_last[i], want_last[i]);
      return;
    }
}

static picture make_picture(int64_t w, int64_t h, int channels, uint64_t seed)
{
  uint16_t *planes[4], *in = xmalloc((size_t)(w * h * channels) * sizeof *in);
  for (int c = 0; c < channels; c++)
    planes[c] = random_plane(w, h, seed * 7 + (uint64_t)c);
  for (int64_t i = 0; i < w * h; i++)
    for (int c = 0; c < channels; c++)
      in[i * channels + c] = planes[c][i];
  for (int c = 0; c < channels; c++)
    free(planes[c]);
  return (picture){ w, h, channels, in };
}

/* Every CPU variant alone, every filter, levels, band patterns. */
static void part_variants(ht_context *ctx)
{
  static const int64_t sizes[][2] = { { 1, 9 }, { 37, 23 }, { 301, 41 } };
  static const int levels[] = { 2, 3, 256 };
  static const int patterns[][4] = { { 1 }, { 2 }, { 3 }, { 5, 1, 2, 9 }, { 17 } };
  static const int threads[] = { 1, 2, 3, 8 };
  int nvar;
  const ht_choice *vars = ht_choices(HT_LIST_VARIANTS, &nvar);
  int cases = 0;
  for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
    picture pic = make_picture(sizes[si][0], sizes[si][1], 1, si + 1);
    const size_t n = (size_t)(pic.w * pic.h);
    uint8_t *want = xmalloc(n), *got = xmalloc(n);
    int32_t *want_last = xmalloc((size_t)(3 * pic.w) * sizeof *want_last);
    int32_t *got_last = xmalloc((size_t)(3 * pic.w) * sizeof *got_last);
    for (int fi = 0; fi < test_nfilters(NCUSTOM); fi++)
      for (size_t li = 0; li < sizeof levels / sizeof levels[0]; li++) {
        if (levels[li] == 256 && fi % 3 != 0)
          continue; /* 256 levels with a third of the filters */
        ht_params p;
        ht_params_init(&p);
        p.filter = test_filter_at(fi, customs);
        p.levels = levels[li];
        const int D = ht_carry_rows(&p);
        reference(ctx, &pic, &p, want, want_last);
        for (int vi = 0; vi < nvar; vi++) {
          const ht_variant v = (ht_variant)vars[vi].value;
          if (v == HT_VARIANT_AUTO || ht_variant_backend(v) != HT_BACKEND_CPU ||
              ht_variant_method(v) != HT_METHOD_ERROR_DIFFUSION)
            continue;
          for (size_t pi = 0; pi < sizeof patterns / sizeof patterns[0]; pi++) {
            int np = 0;
            while (np < 4 && patterns[pi][np])
              np++;
            const int nts = 4; /* bands on 1, 2, 3 and 8 threads in turn */
            char what[160];
            snprintf(what, sizeof what, "%s, %s, levels %d, %lldx%lld, bands pattern %zu", vars[vi].name,
                     p.filter.name, p.levels, (long long)pic.w, (long long)pic.h, pi);
            memset(got, 0xEE, n);
            if (run_bands(ctx, &pic, &p, patterns[pi], np, &v, 1, threads, nts, got, got_last, what))
              compare(&pic, want, got, want_last, got_last, D, what);
            cases++;
          }
        }
      }
    free(want);
    free(got);
    free(want_last);
    free(got_last);
    free((void *)pic.in);
  }
  printf("variants: %d band runs\n", cases);
}

/* Bands of one image run by different variants (every CPU variant of
 * error diffusion the library lists, in turn) and thread counts: the
 * carried rows mean the same to all of them. */
static void part_mixed(ht_context *ctx)
{
  ht_variant all[TEST_MAX_VARIANTS];
  const int nall = test_variants(HT_METHOD_ERROR_DIFFUSION, HT_BACKEND_CPU, all, TEST_MAX_VARIANTS);
  CHECK(nall > 1 && nall <= TEST_MAX_VARIANTS, "%d CPU variants of error diffusion", nall);
  static const int heights[] = { 7, 1, 33, 2, 64, 3 };
  static const int threads[] = { 2, 1, 1, 1, 1, 4, 3 };
  picture pic = make_picture(517, 311, 1, 99);
  const size_t n = (size_t)(pic.w * pic.h);
  uint8_t *want = xmalloc(n), *got = xmalloc(n);
  int32_t *want_last = xmalloc((size_t)(3 * pic.w) * sizeof *want_last);
  int32_t *got_last = xmalloc((size_t)(3 * pic.w) * sizeof *got_last);
  for (int fi = 0; fi < test_nfilters(NCUSTOM); fi++)
    for (int levels = 2; levels <= 5; levels += 3) {
      ht_params p;
      ht_params_init(&p);
      p.filter = test_filter_at(fi, customs);
      p.levels = levels;
      reference(ctx, &pic, &p, want, want_last);
      char what[128];
      snprintf(what, sizeof what, "mixed variants, %s, levels %d", p.filter.name, levels);
      if (run_bands(ctx, &pic, &p, heights, 6, all, nall, threads, 7, got, got_last, what))
        compare(&pic, want, got, want_last, got_last, ht_carry_rows(&p), what);
    }
  /* the serpentine scan: its rows alternate by their row in the image */
  ht_params p;
  ht_params_init(&p);
  p.scan = HT_SCAN_SERPENTINE;
  p.filter = *ht_filter_builtin(HT_FILTER_JARVIS_JUDICE_NINKE);
  reference(ctx, &pic, &p, want, want_last);
  static const ht_variant autos[] = { HT_VARIANT_AUTO, HT_VARIANT_ED };
  static const int odd[] = { 3, 1, 6, 5 };
  if (run_bands(ctx, &pic, &p, odd, 4, autos, 2, threads, 1, got, got_last, "serpentine bands"))
    compare(&pic, want, got, want_last, got_last, ht_carry_rows(&p), "serpentine bands");
  free(want);
  free(got);
  free(want_last);
  free(got_last);
  free((void *)pic.in);
}

/* Per-channel colour: each plane carries its own rows, plane after
 * plane; every plane with its own levels. */
static void part_color(ht_context *ctx)
{
  static const int heights[] = { 4, 1, 19 };
  ht_variant vars[TEST_MAX_VARIANTS];
  const int nvars = test_variants(HT_METHOD_ERROR_DIFFUSION, HT_BACKEND_CPU, vars, TEST_MAX_VARIANTS);
  CHECK(nvars > 0 && nvars <= TEST_MAX_VARIANTS, "%d CPU variants of error diffusion", nvars);
  static const int threads[] = { 2, 1, 1 };
  for (int channels = 3; channels <= 4; channels++) {
    picture pic = make_picture(123, 77, channels, (uint64_t)channels);
    const size_t n = (size_t)(pic.w * pic.h * channels);
    uint8_t *want = xmalloc(n), *got = xmalloc(n);
    int32_t *want_last = xmalloc((size_t)(3 * pic.w * channels) * sizeof *want_last);
    int32_t *got_last = xmalloc((size_t)(3 * pic.w * channels) * sizeof *got_last);
    ht_params p;
    ht_params_init(&p);
    p.color = HT_COLOR_PER_CHANNEL;
    p.filter = *ht_filter_builtin(HT_FILTER_STUCKI);
    p.plane_levels[0] = 2;
    p.plane_levels[1] = 3;
    p.plane_levels[channels - 1] = 7;
    reference(ctx, &pic, &p, want, want_last);
    /* the planes' levels were kept apart */
    int most[4] = { 0 };
    for (size_t i = 0; i < n; i++)
      if (want[i] > most[i % (size_t)channels])
        most[i % (size_t)channels] = want[i];
    CHECK(most[0] == 255 && most[1] == 255, "plane levels: top values %d %d", most[0], most[1]);
    for (size_t i = 0; i < n; i++)
      if (i % (size_t)channels == 1 && want[i] != 0 && want[i] != 128 && want[i] != 255) {
        CHECK(0, "plane 2 has 3 levels, yet value %d", want[i]);
        break;
      }
    char what[64];
    snprintf(what, sizeof what, "%d planes", channels);
    if (run_bands(ctx, &pic, &p, heights, 3, vars, nvars, threads, 3, got, got_last, what))
      compare(&pic, want, got, want_last, got_last, ht_carry_rows(&p), what);
    free(want);
    free(got);
    free(want_last);
    free(got_last);
    free((void *)pic.in);
  }
}

static void part_errors(ht_context *ctx)
{
  ht_params p;
  ht_params_init(&p);
  CHECK(ht_carry_rows(&p) == 1, "Floyd-Steinberg carries %d rows", ht_carry_rows(&p));
  p.filter = *ht_filter_builtin(HT_FILTER_JARVIS_JUDICE_NINKE);
  CHECK(ht_carry_rows(&p) == 2, "Jarvis-Judice-Ninke carries %d rows", ht_carry_rows(&p));
  char err[256];
  CHECK(ht_filter_parse("* 1 / 2", &p.filter, err, sizeof err) == HT_OK, "%s", err);
  CHECK(ht_carry_rows(&p) == 0, "a one-row filter carries %d rows", ht_carry_rows(&p));
  p.filter.den = 0;
  CHECK(ht_carry_rows(&p) == -1, "a bad filter carries %d rows", ht_carry_rows(&p));
  CHECK(ht_carry_rows(NULL) == -1, "no parameters");

  picture pic = make_picture(40, 10, 1, 5);
  uint8_t out[400];
  int32_t rows[3 * 40];
  ht_image i = in_rows(&pic, 0, 10), o = out_rows(&pic, out, 0, 10);
  ht_params_init(&p);
  CHECK(ht_run_band(ctx, &i, &o, &p, NULL) == HT_ERR_INVALID_ARGUMENT, "no band");
  ht_band band = { -1, NULL, rows };
  CHECK(ht_run_band(ctx, &i, &o, &p, &band) == HT_ERR_INVALID_ARGUMENT, "negative first row");
  band.y0 = 10;
  band.above = rows;
  p.scan = HT_SCAN_SERPENTINE;
  p.variant = HT_VARIANT_WAVEFRONT;
  CHECK(ht_run_band(ctx, &i, &o, &p, &band) == HT_ERR_UNSUPPORTED, "serpentine wavefront band");
  CHECK(strstr(ht_context_message(ctx), "serpentine") != NULL, "message: %s", ht_context_message(ctx));
  free((void *)pic.in);
}

int main(int argc, char **argv)
{
  const char *part = argc > 1 ? argv[1] : "variants";
  ht_context *ctx = ht_context_new();
  if (!ctx)
    return 99;
  ht_context_set_backend(ctx, HT_BACKEND_CPU);
  if (strcmp(part, "variants") == 0)
    part_variants(ctx);
  else if (strcmp(part, "mixed") == 0)
    part_mixed(ctx);
  else if (strcmp(part, "color") == 0)
    part_color(ctx);
  else if (strcmp(part, "errors") == 0)
    part_errors(ctx);
  else {
    fprintf(stderr, "unknown part %s\n", part);
    return 99;
  }
  ht_context_free(ctx);
  return test_finish(part);
}

/* Rules of the public API and of docs/arithmetic.md, each checked on its
 * own (one part per argument):
 *
 *   strides   16-bit and float images whose stride or start is not a
 *             whole number of samples are refused (HT_ERR_INVALID_ARGUMENT,
 *             halftone.h), before anything is written; 8-bit and 1-bit
 *             images may start and stride at any byte, and padded rows
 *             give the same bits as tight ones;
 *   filter-text  ht_filter_format's text always parses back to the same
 *             filter (implicit divisors above a million included), and
 *             what the syntax cannot hold is refused, not written;
 *   rounding  the rounding rule for L levels as docs/arithmetic.md states
 *             it (count the exact midpoints below the value), computed
 *             here from that statement, equals core/shared/fixed.h's
 *             ht_fx_quantize for every L in 2..256 and every value the
 *             diffusion can produce, negative and above full scale too.
 */
#include "ht-test.h"
#include "ht-filter-compare.h"

#include "shared/fixed.h"

/* ------------------------------------------------------------ strides */

#define W 13
#define H 7
#define SENTINEL 0xA5

/* A buffer of `bytes` bytes that starts `offset` bytes past an address
 * aligned for any sample, filled with the sentinel. */
typedef struct {
  uint8_t *block;
  uint8_t *data;
} buffer;

static buffer buffer_new(size_t bytes, size_t offset)
{
  buffer b;
  b.block = xmalloc(bytes + offset + 16);
  memset(b.block, SENTINEL, bytes + offset + 16);
  b.data = b.block + offset;
  return b;
}

static bool untouched(const buffer *b, size_t bytes, size_t offset)
{
  for (size_t i = 0; i < bytes + offset + 16; i++)
    if (b->block[i] != SENTINEL)
      return false;
  return true;
}

/* A ramp with noise in `format` (U8, U16 or F32, `channels` samples a
 * pixel), rows `stride` bytes apart. */
static void fill(uint8_t *data, size_t stride, ht_format format, int channels)
{
  uint64_t s = 99;
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W * channels; x++) {
      uint32_t v = (uint32_t)((x * 65535) / (W * channels) + (rng_next(&s) >> 54)) & 0xffff;
      uint8_t *row = data + (size_t)y * stride;
      if (format == HT_FORMAT_U8)
        row[x] = (uint8_t)(v >> 8);
      else if (format == HT_FORMAT_U16)
        memcpy(row + (size_t)x * 2, &(uint16_t){ (uint16_t)v }, 2);
      else
        memcpy(row + (size_t)x * 4, &(float){ (float)v / 65535.0f }, 4);
    }
}

static size_t sample_bytes(ht_format f) { return f == HT_FORMAT_U16 ? 2 : f == HT_FORMAT_F32 ? 4 : 1; }

static const char *format_name(ht_format f)
{
  return f == HT_FORMAT_U8 ? "u8" : f == HT_FORMAT_U16 ? "u16" : f == HT_FORMAT_F32 ? "f32" : "bit1";
}

/* Runs a gray image in `in_format` with rows `in_pad` bytes longer than
 * needed, starting `in_off` bytes off alignment, into `out_format` with
 * `out_pad` and `out_off`; checks the status, and for HT_OK that the
 * output equals a run with tight aligned rows. */
static void stride_case(ht_context *ctx, ht_format in_format, size_t in_pad, size_t in_off, ht_format out_format,
                        size_t out_pad, size_t out_off, ht_status want)
{
  ht_params p;
  ht_params_init(&p);
  p.levels = out_format == HT_FORMAT_BIT1 ? 2 : 3;
  const size_t in_row = ht_format_row_bytes(in_format, W, 1), out_row = ht_format_row_bytes(out_format, W, 1);
  const size_t in_stride = in_row + in_pad, out_stride = out_row + out_pad;
  const size_t in_bytes = in_stride * H, out_bytes = out_stride * H;
  buffer in = buffer_new(in_bytes, in_off), out = buffer_new(out_bytes, out_off);
  fill(in.data, in_stride, in_format, 1);
  ht_image ii = { W, H, in_stride, 1, in_format, in.data };
  ht_image oi = { W, H, out_stride, 1, out_format, out.data };
  char what[160];
  snprintf(what, sizeof what, "%s in (stride %zu, start +%zu) -> %s out (stride %zu, start +%zu)",
           format_name(in_format), in_stride, in_off, format_name(out_format), out_stride, out_off);
  ht_status s = ht_run(ctx, &ii, &oi, &p);
  CHECK(s == want, "%s: %s, expected %s (%s)", what, ht_status_string(s), ht_status_string(want),
        ht_context_message(ctx));
  if (want != HT_OK) {
    const char *m = ht_context_message(ctx);
    CHECK(strstr(m, "stride") != NULL || strstr(m, "aligned") != NULL, "%s: message \"%s\" names neither", what, m);
    CHECK(untouched(&out, out_bytes, out_off), "%s: refused, but the output was written", what);
  } else {
    /* the same picture in tight, aligned rows */
    buffer tin = buffer_new(in_row * H, 0), tout = buffer_new(out_row * H, 0);
    fill(tin.data, in_row, in_format, 1);
    ht_image ti = { W, H, in_row, 1, in_format, tin.data }, to = { W, H, out_row, 1, out_format, tout.data };
    CHECK(ht_run(ctx, &ti, &to, &p) == HT_OK, "%s: tight run: %s", what, ht_context_message(ctx));
    for (int y = 0; y < H; y++)
      CHECK(memcmp(out.data + (size_t)y * out_stride, tout.data + (size_t)y * out_row, out_row) == 0,
            "%s: row %d differs from the tight run", what, y);
    free(tin.block);
    free(tout.block);
  }
  free(in.block);
  free(out.block);
}

static void test_strides(void)
{
  ht_context *ctx = ht_context_new();
  ht_context_set_backend(ctx, HT_BACKEND_CPU);
  const ht_format wide[] = { HT_FORMAT_U16, HT_FORMAT_F32 };
  for (size_t k = 0; k < 2; k++) {
    const ht_format f = wide[k];
    const size_t n = sample_bytes(f);
    for (size_t pad = 0; pad <= 2 * n; pad++) /* input strides: whole samples only */
      stride_case(ctx, f, pad, 0, HT_FORMAT_U8, 0, 0, pad % n == 0 ? HT_OK : HT_ERR_INVALID_ARGUMENT);
    for (size_t off = 1; off < n; off++) /* input starts between samples */
      stride_case(ctx, f, 0, off, HT_FORMAT_U8, 0, 0, HT_ERR_INVALID_ARGUMENT);
  }
  for (size_t pad = 0; pad <= 4; pad++) /* 16-bit output */
    stride_case(ctx, HT_FORMAT_U8, 0, 0, HT_FORMAT_U16, pad, 0, pad % 2 == 0 ? HT_OK : HT_ERR_INVALID_ARGUMENT);
  stride_case(ctx, HT_FORMAT_U8, 0, 0, HT_FORMAT_U16, 0, 1, HT_ERR_INVALID_ARGUMENT);
  /* bytes and bits need no alignment */
  for (size_t pad = 0; pad <= 3; pad++)
    for (size_t off = 0; off <= 3; off += 3) {
      stride_case(ctx, HT_FORMAT_U8, pad, off, HT_FORMAT_U8, pad, off, HT_OK);
      stride_case(ctx, HT_FORMAT_U8, pad, off, HT_FORMAT_BIT1, pad, off, HT_OK);
      stride_case(ctx, HT_FORMAT_F32, 4 * pad, 0, HT_FORMAT_U8, pad, off, HT_OK);
    }

  /* ht_run_plane takes 16-bit rows the same way */
  {
    buffer in = buffer_new((size_t)W * 2 * H + H, 0);
    uint8_t out[W * H];
    ht_params p;
    ht_params_init(&p);
    memset(in.data, 0x40, (size_t)W * 2 * H + H);
    ht_status s = ht_run_plane(ctx, (const uint16_t *)(const void *)in.data, (size_t)W * 2 + 1, out, W, W, H, &p);
    CHECK(s == HT_ERR_INVALID_ARGUMENT && strstr(ht_context_message(ctx), "stride"),
          "ht_run_plane with an odd stride: %s (%s)", ht_status_string(s), ht_context_message(ctx));
    s = ht_run_plane(ctx, (const uint16_t *)(const void *)in.data, (size_t)W * 2 + 2, out, W, W, H, &p);
    CHECK(s == HT_OK, "ht_run_plane with a padded even stride: %s", ht_context_message(ctx));
    free(in.block);
  }
  /* a stride whose span overflows, and an output inside the input,
   * refused before anything is read or written */
  {
    uint8_t in[W * H], out[W * H];
    memset(in, 0x80, sizeof in);
    ht_params p;
    ht_params_init(&p);
    ht_image ii = { W, H, SIZE_MAX, 1, HT_FORMAT_U8, in };
    ht_image oi = { W, H, W, 1, HT_FORMAT_U8, out };
    ht_status s = ht_run(ctx, &ii, &oi, &p);
    CHECK(s == HT_ERR_INVALID_ARGUMENT && strstr(ht_context_message(ctx), "stride"),
          "stride SIZE_MAX: %s (%s)", ht_status_string(s), ht_context_message(ctx));
    ii.stride = SIZE_MAX / 2 + 1;
    s = ht_run(ctx, &ii, &oi, &p);
    CHECK(s == HT_ERR_INVALID_ARGUMENT, "stride SIZE_MAX / 2 + 1: %s", ht_status_string(s));
    uint16_t plane[W * H];
    for (int i = 0; i < W * H; i++)
      plane[i] = (uint16_t)(i * 37);
    s = ht_run_plane(ctx, plane, (size_t)W * 2, (uint8_t *)plane + W, W, W, H / 2, &p);
    CHECK(s == HT_ERR_INVALID_ARGUMENT && strstr(ht_context_message(ctx), "overlaps"),
          "ht_run_plane with its output inside its input: %s (%s)", ht_status_string(s), ht_context_message(ctx));
  }
  /* and ht_run_band, through the same check */
  {
    buffer in = buffer_new((size_t)W * 4 * H + 3 * H, 0);
    uint8_t out[W * H];
    ht_params p;
    ht_params_init(&p);
    fill(in.data, (size_t)W * 4 + 3, HT_FORMAT_U8, 4);
    ht_image ii = { W, H, (size_t)W * 4 + 3, 1, HT_FORMAT_F32, in.data }, oi = { W, H, W, 1, HT_FORMAT_U8, out };
    ht_band band = { 0, NULL, NULL };
    ht_status s = ht_run_band(ctx, &ii, &oi, &p, &band);
    CHECK(s == HT_ERR_INVALID_ARGUMENT && strstr(ht_context_message(ctx), "stride"),
          "ht_run_band with a float stride of 4w+3: %s (%s)", ht_status_string(s), ht_context_message(ctx));
    free(in.block);
  }
  ht_context_free(ctx);
}

/* -------------------------------------------------------- filter text */

/* text -> parse -> format -> parse: the two parsed filters are the same
 * (Q12 weights and derived fields included), and formatting the second
 * gives the same text. */
static void round_trip(const char *text, const char *what)
{
  ht_filter f, g;
  char err[256], t1[1024], t2[1024];
  ht_status s = ht_filter_parse(text, &f, err, sizeof err);
  CHECK(s == HT_OK, "%s: \"%s\" does not parse: %s", what, text, err);
  if (s != HT_OK)
    return;
  s = ht_filter_format(&f, t1, sizeof t1);
  CHECK(s == HT_OK, "%s: \"%s\" parses but does not format", what, text);
  if (s != HT_OK)
    return;
  s = ht_filter_parse(t1, &g, err, sizeof err);
  CHECK(s == HT_OK, "%s: formatted \"%s\" does not parse back: %s", what, t1, err);
  if (s != HT_OK)
    return;
  CHECK(ht_test_same_filter(&f, &g) && memcmp(&f, &g, sizeof f) == 0, "%s: \"%s\" and its formatted \"%s\" differ", what,
        text, t1);
  CHECK(ht_filter_format(&g, t2, sizeof t2) == HT_OK && strcmp(t1, t2) == 0, "%s: \"%s\" formats as \"%s\"", what,
        t1, t2);
}

/* The filter must not format: HT_ERR_INVALID_ARGUMENT and "". */
static void refused(const ht_filter *f, size_t size, const char *what)
{
  char buf[1024];
  memset(buf, 'x', sizeof buf);
  ht_status s = ht_filter_format(f, buf, size);
  CHECK(s == HT_ERR_INVALID_ARGUMENT && buf[0] == '\0', "%s: status %s, text \"%.60s\"", what, ht_status_string(s),
        s == HT_OK ? buf : "");
}

static void test_filter_text(void)
{
  char err[256], text[1024];

  /* the divisor a string leaves implicit may be above a million (the
   * issue's case) and up to 31 weights of a million (the most the grid
   * holds); written out, it parses */
  round_trip("- * 1000000 1000000; 1000000", "implicit divisor 3000000");
  {
    size_t n = 0;
    n += (size_t)snprintf(text + n, sizeof text - n, "- - - - * 1000000 1000000 1000000 1000000");
    for (int r = 0; r < 3; r++) {
      n += (size_t)snprintf(text + n, sizeof text - n, ";");
      for (int c = 0; c < 9; c++)
        n += (size_t)snprintf(text + n, sizeof text - n, " 1000000");
    }
    round_trip(text, "implicit divisor 31000000");
    ht_filter f;
    CHECK(ht_filter_parse(text, &f, err, sizeof err) == HT_OK && f.den == 31000000, "31 weights of a million");
  }
  /* explicit divisors up to the limit the header states */
  snprintf(text, sizeof text, "- * 7; 3 5 1 / %d", HT_FILTER_MAX_DIVISOR);
  round_trip(text, "explicit divisor at the limit");
  {
    ht_filter f;
    snprintf(text, sizeof text, "- * 7; 3 5 1 / %d", HT_FILTER_MAX_DIVISOR + 1);
    CHECK(ht_filter_parse(text, &f, err, sizeof err) == HT_ERR_BAD_COEFFICIENTS && strstr(err, "divisor too large"),
          "divisor above the limit: %s", err);
    snprintf(text, sizeof text, "- * %d", HT_FILTER_MAX_WEIGHT + 1);
    CHECK(ht_filter_parse(text, &f, err, sizeof err) == HT_ERR_BAD_COEFFICIENTS && strstr(err, "weight too large"),
          "weight above the limit: %s", err);
  }
  /* the documentation's examples and every built-in filter */
  round_trip("- * 7; 3 5 1 / 16", "Floyd-Steinberg");
  round_trip("- - * 7 5; 3 5 7 5 3; 1 3 5 3 1 / 48", "Jarvis-Judice-Ninke");
  round_trip("- * 1 1; 1 1 1; - 1 / 8", "Atkinson");
  round_trip("* 3; 3 2 / 8", "false Floyd-Steinberg");
  round_trip("*; 1", "straight down");
  round_trip("* 0 0 0 1; 0; 0; 0 / 2", "trailing zero rows");
  for (int i = 0; i < test_nbuiltin(); i++) {
    const ht_filter *b = test_builtin(i);
    CHECK(ht_filter_format(b, text, sizeof text) == HT_OK, "%s does not format", b->name);
    round_trip(text, b->name);
  }

  /* random filters over the whole grid: random weights (small, large,
   * zero), the divisor implicit or explicit between the sum and the
   * limit */
  uint64_t s = 2026;
  for (int k = 0; k < 20000; k++) {
    int left = (int)(rng_next(&s) % 5), right = (int)(rng_next(&s) % 5), down = (int)(rng_next(&s) % 4);
    int scale = (int)(rng_next(&s) % 3); /* weights up to 9, 9999 or the limit */
    size_t n = 0;
    long long sum = 0;
    for (int dy = 0; dy <= down; dy++) {
      if (dy)
        n += (size_t)snprintf(text + n, sizeof text - n, ";");
      for (int dx = -left; dx <= right; dx++) {
        if (dy == 0 && dx < 0) {
          n += (size_t)snprintf(text + n, sizeof text - n, " -");
          continue;
        }
        if (dy == 0 && dx == 0) {
          n += (size_t)snprintf(text + n, sizeof text - n, " *");
          continue;
        }
        uint64_t r = rng_next(&s);
        long long v = r % 4 == 0 ? 0
                      : scale == 0 ? (long long)(r >> 8) % 10
                      : scale == 1 ? (long long)(r >> 8) % 10000
                                   : HT_FILTER_MAX_WEIGHT - (long long)((r >> 8) % 3);
        if (dy > 0 && r % 7 == 1) {
          n += (size_t)snprintf(text + n, sizeof text - n, " -"); /* "no weight" below */
          continue;
        }
        sum += v;
        n += (size_t)snprintf(text + n, sizeof text - n, " %lld", v);
      }
    }
    if (sum == 0)
      continue; /* refused: all weights zero */
    if (rng_next(&s) % 2) {
      long long den = sum + (long long)(rng_next(&s) % (unsigned long long)(HT_FILTER_MAX_DIVISOR - sum + 1));
      if (rng_next(&s) % 4 == 0)
        den = sum; /* exactly the sum, written out */
      snprintf(text + n, sizeof text - n, " / %lld", den);
    }
    char what[32];
    snprintf(what, sizeof what, "random filter %d", k);
    round_trip(text, what);
  }

  /* A filter built by hand formats from its taps, not from reach fields
   * it may not have filled in. */
  {
    ht_filter f;
    memset(&f, 0, sizeof f);
    f.den = 10;
    f.ntaps = 3;
    f.taps[0] = (ht_tap){ 2, 0, 4, 0 };
    f.taps[1] = (ht_tap){ -3, 2, 5, 0 };
    f.taps[2] = (ht_tap){ 0, 1, 1, 0 };
    ht_filter g;
    CHECK(ht_filter_format(&f, text, sizeof text) == HT_OK, "hand-made filter does not format");
    CHECK(ht_filter_parse(text, &g, err, sizeof err) == HT_OK && ht_test_same_filter(&f, &g),
          "hand-made filter: \"%s\" stands for another filter (%s)", text, err);
  }

  /* What the syntax cannot hold is refused and nothing is written. */
  {
    const ht_filter *fs = ht_filter_builtin(HT_FILTER_FLOYD_STEINBERG);
    ht_filter f = *fs;
    f.taps[0].num = HT_FILTER_MAX_WEIGHT + 1;
    f.den = HT_FILTER_MAX_DIVISOR;
    refused(&f, 1024, "a weight above the limit");
    f = *fs;
    f.den = HT_FILTER_MAX_DIVISOR + 1;
    refused(&f, 1024, "a divisor above the limit");
    f = *fs;
    f.den = 0;
    refused(&f, 1024, "divisor 0");
    f = *fs;
    f.den = 15;
    refused(&f, 1024, "weights summing to more than the divisor");
    f = *fs;
    f.taps[1].num = -3;
    refused(&f, 1024, "a negative weight");
    f = *fs;
    f.taps[2] = f.taps[1];
    refused(&f, 1024, "two weights at one place");
    f = *fs;
    f.taps[0].dx = 0;
    refused(&f, 1024, "a weight on the current pixel");
    f = *fs;
    f.taps[0].dx = -1;
    refused(&f, 1024, "a weight on a pixel already processed");
    f = *fs;
    f.taps[3].dx = 5;
    refused(&f, 1024, "a weight out of reach");
    f = *fs;
    f.taps[3].dy = 4;
    refused(&f, 1024, "a weight too far down");
    f = *fs;
    f.ntaps = 0;
    refused(&f, 1024, "no weights");
    f = *fs;
    for (int i = 0; i < f.ntaps; i++)
      f.taps[i].num = 0;
    refused(&f, 1024, "all weights zero");
    f = *fs;
    f.ntaps = HT_FILTER_MAX_TAPS + 1;
    refused(&f, 1024, "too many taps");
    refused(fs, 8, "a buffer too short");
    refused(NULL, 1024, "no filter");
    CHECK(ht_filter_format(fs, NULL, 64) == HT_ERR_INVALID_ARGUMENT, "NULL buffer");
    CHECK(ht_filter_format(fs, text, 0) == HT_ERR_INVALID_ARGUMENT, "size 0");
  }
}

/* ----------------------------------------------------------- rounding */

static void test_rounding(void)
{
  const int32_t lo = -65536, hi = 131071;
  long bad_levels = 0, bad_q = 0, bad_binary = 0;
  for (int32_t L = 2; L <= 256; L++) {
    /* level(i, L): i * 65535 / (L - 1) rounded half up, checked as
     * |level * (L - 1) - i * 65535| <= (L - 1) / 2, a tie going up */
    for (int32_t i = 0; i < L; i++) {
      const int64_t lv = ht_fx_level(i, L), d = 2 * (lv * (L - 1) - (int64_t)i * HT_FX_ONE);
      if (d > L - 1 || d < -(L - 1) || d == -(L - 1))
        bad_levels++;
    }
    /* q(v, L): the number of midpoints (i + 1/2) * 65535 / (L - 1),
     * i = 0 .. L-2, strictly below v. v rises, so the count only grows. */
    int32_t q = 0;
    for (int32_t v = lo; v <= hi; v++) {
      while (q < L - 1 && 2 * (int64_t)v * (L - 1) > (2 * (int64_t)q + 1) * HT_FX_ONE)
        q++;
      const int32_t code = ht_fx_quantize(v, L);
      if (code != q && bad_q++ < 10)
        fprintf(stderr, "L %d, v %d: the document's rule gives level %d, ht_fx_quantize %d\n", L, v, q, code);
      if (L == 2 && ht_fx_binary(v) != q && bad_binary++ < 10)
        fprintf(stderr, "v %d: the document's rule gives level %d, ht_fx_binary %d\n", v, q, ht_fx_binary(v));
    }
  }
  CHECK(bad_levels == 0, "%ld level values are not i * 65535 / (L - 1) rounded half up", bad_levels);
  CHECK(bad_q == 0, "%ld (levels, value) pairs differ from docs/arithmetic.md's rule", bad_q);
  CHECK(bad_binary == 0, "%ld values: ht_fx_binary differs from the rule for 2 levels", bad_binary);
  /* the document's example */
  CHECK(ht_fx_quantize(16384, 3) == 1 && ht_fx_level(1, 3) == 32768, "L = 3, v = 16384: level %d",
        ht_fx_quantize(16384, 3));
}

int main(int argc, char **argv)
{
  const char *part = argc > 1 ? argv[1] : "all";
  bool all = strcmp(part, "all") == 0, known = all;
  if (all || strcmp(part, "strides") == 0) {
    known = true;
    test_strides();
  }
  if (all || strcmp(part, "filter-text") == 0) {
    known = true;
    test_filter_text();
  }
  if (all || strcmp(part, "rounding") == 0) {
    known = true;
    test_rounding();
  }
  if (!known) {
    fprintf(stderr, "usage: test-rules [strides|filter-text|rounding|all]\n");
    return 2;
  }
  return test_finish("test-rules");
}

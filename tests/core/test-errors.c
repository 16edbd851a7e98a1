/* Every bad input gets its status and a one-line message naming the
 * problem, and the output is left untouched (checked with a sentinel).
 * Sizes beyond the limits are refused before anything is read, so they
 * are tested with a small buffer standing in for a huge image. */
#include "ht-test.h"

#include <math.h>

#define OUT_W 16
#define OUT_H 8
#define SENTINEL 0x5A

static uint8_t out_buf[OUT_W * OUT_H * 8];

static void reset_out(void) { memset(out_buf, SENTINEL, sizeof out_buf); }

static bool out_untouched(void)
{
  for (size_t i = 0; i < sizeof out_buf; i++)
    if (out_buf[i] != SENTINEL)
      return false;
  return true;
}

/* Runs `what`, which must give `want` and a message containing `needle`. */
#define EXPECT(ctx, call, want, needle, what)                                                        \
  do {                                                                                               \
    reset_out();                                                                                     \
    ht_status s_ = (call);                                                                           \
    const char *m_ = ht_context_message(ctx);                                                        \
    CHECK(s_ == (want), "%s: status \"%s\", expected \"%s\" (message: %s)", what, ht_status_string(s_), \
          ht_status_string(want), m_);                                                               \
    CHECK(strstr(m_, needle) != NULL, "%s: message \"%s\" does not mention \"%s\"", what, m_, needle); \
    CHECK(strchr(m_, '\n') == NULL, "%s: message is not one line", what);                           \
    CHECK(out_untouched(), "%s: the output buffer was written", what);                              \
  } while (0)

static ht_image gray8(void *data, int64_t w, int64_t h)
{
  ht_image im = { w, h, (size_t)w, 1, HT_FORMAT_U8, data };
  return im;
}

static void image_errors(ht_context *ctx)
{
  static uint8_t in_buf[OUT_W * OUT_H * 16];
  memset(in_buf, 128, sizeof in_buf);
  ht_params p;
  ht_params_init(&p);
  ht_image in = gray8(in_buf, OUT_W, OUT_H), out = gray8(out_buf, OUT_W, OUT_H);
  ht_image bad;

  /* NULL pointers */
  reset_out();
  CHECK(ht_run(NULL, &in, &out, &p) == HT_ERR_INVALID_ARGUMENT, "NULL context");
  CHECK(out_untouched(), "NULL context: output written");
  EXPECT(ctx, ht_run(ctx, NULL, &out, &p), HT_ERR_INVALID_ARGUMENT, "input", "NULL input image");
  EXPECT(ctx, ht_run(ctx, &in, NULL, &p), HT_ERR_INVALID_ARGUMENT, "output", "NULL output image");
  EXPECT(ctx, ht_run(ctx, &in, &out, NULL), HT_ERR_INVALID_ARGUMENT, "parameters", "NULL parameters");
  bad = gray8(NULL, OUT_W, OUT_H);
  EXPECT(ctx, ht_run(ctx, &bad, &out, &p), HT_ERR_INVALID_ARGUMENT, "no pixel data", "NULL input data");
  EXPECT(ctx, ht_run_plane(ctx, NULL, OUT_W * 2, out_buf, OUT_W, OUT_W, OUT_H, &p), HT_ERR_INVALID_ARGUMENT,
         "no pixel data", "plane: NULL input");
  {
    uint16_t plane[OUT_W * OUT_H] = { 0 };
    EXPECT(ctx, ht_run_plane(ctx, plane, OUT_W * 2, NULL, OUT_W, OUT_W, OUT_H, &p), HT_ERR_INVALID_ARGUMENT,
           "no pixel data", "plane: NULL output");
    EXPECT(ctx, ht_run_plane(ctx, plane, OUT_W * 2, out_buf, OUT_W, OUT_W, OUT_H, NULL), HT_ERR_INVALID_ARGUMENT,
           "parameters", "plane: NULL parameters");
  }

  /* zero, negative and too large sizes */
  const int64_t sizes[][2] = { { 0, 5 }, { 5, 0 }, { -1, 5 }, { 5, -7 }, { 0, 0 } };
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    ht_image a = gray8(in_buf, sizes[i][0], sizes[i][1]), b = gray8(out_buf, sizes[i][0], sizes[i][1]);
    a.stride = b.stride = OUT_W;
    char what[64];
    snprintf(what, sizeof what, "size %lldx%lld", (long long)sizes[i][0], (long long)sizes[i][1]);
    EXPECT(ctx, ht_run(ctx, &a, &b, &p), HT_ERR_BAD_SIZE, "no pixels", what);
  }
  const int64_t huge[][2] = { { HT_MAX_SIDE + 1, 1 }, { 1, HT_MAX_SIDE + 1 }, { HT_MAX_SIDE, HT_MAX_SIDE } };
  for (size_t i = 0; i < sizeof huge / sizeof huge[0]; i++) {
    /* the data pointers are small buffers: validation must refuse the
     * size before reading or writing anything */
    ht_image a = gray8(in_buf, huge[i][0], huge[i][1]), b = gray8(out_buf, huge[i][0], huge[i][1]);
    char what[80];
    snprintf(what, sizeof what, "size %lldx%lld", (long long)huge[i][0], (long long)huge[i][1]);
    EXPECT(ctx, ht_run(ctx, &a, &b, &p), HT_ERR_BAD_SIZE, "larger than", what);
    EXPECT(ctx, ht_run_plane(ctx, (const uint16_t *)(const void *)in_buf, (size_t)huge[i][0] * 2, out_buf,
                             (size_t)huge[i][0], huge[i][0], huge[i][1], &p),
           HT_ERR_BAD_SIZE, "larger than", what);
  }

  /* NaN and infinity, anywhere; the last pixel of the last row too */
  static float fin[OUT_W * OUT_H];
  const int spots[] = { 0, OUT_W + 3, OUT_W * OUT_H - 1, OUT_W * (OUT_H - 1) };
  const float bads[] = { NAN, INFINITY, -INFINITY };
  for (size_t si = 0; si < sizeof spots / sizeof spots[0]; si++)
    for (size_t bi = 0; bi < 3; bi++) {
      for (int i = 0; i < OUT_W * OUT_H; i++)
        fin[i] = 0.5f;
      fin[spots[si]] = bads[bi];
      ht_image a = { OUT_W, OUT_H, OUT_W * sizeof(float), 1, HT_FORMAT_F32, fin };
      char what[64], needle[64];
      snprintf(what, sizeof what, "float %s at pixel %d", bi == 0 ? "NaN" : "infinity", spots[si]);
      snprintf(needle, sizeof needle, "(%d, %d) is %s", spots[si] % OUT_W, spots[si] / OUT_W,
               bi == 0 ? "NaN" : "infinite");
      EXPECT(ctx, ht_run(ctx, &a, &out, &p), HT_ERR_BAD_PIXEL, needle, what);
    }

  /* levels out of range */
  ht_params q = p;
  q.levels = 1;
  EXPECT(ctx, ht_run(ctx, &in, &out, &q), HT_ERR_INVALID_ARGUMENT, "levels", "levels 1");
  q.levels = 257;
  EXPECT(ctx, ht_run(ctx, &in, &out, &q), HT_ERR_INVALID_ARGUMENT, "levels", "levels 257");

  /* 1-bit output needs two levels */
  ht_image bit = { OUT_W, OUT_H, OUT_W / 8, 1, HT_FORMAT_BIT1, out_buf };
  q = p;
  q.levels = 3;
  EXPECT(ctx, ht_run(ctx, &in, &bit, &q), HT_ERR_INVALID_ARGUMENT, "1-bit", "BIT1 output with 3 levels");

  /* wrong channel counts */
  ht_image o3 = { OUT_W, OUT_H, OUT_W * 3, 3, HT_FORMAT_U8, out_buf };
  EXPECT(ctx, ht_run(ctx, &in, &o3, &p), HT_ERR_INVALID_ARGUMENT, "channel", "gray in, 3 channels out");
  ht_image i3 = { OUT_W, OUT_H, OUT_W * 3, 3, HT_FORMAT_U8, in_buf };
  ht_image o2 = { OUT_W, OUT_H, OUT_W * 2, 2, HT_FORMAT_U8, out_buf };
  EXPECT(ctx, ht_run(ctx, &i3, &o2, &p), HT_ERR_INVALID_ARGUMENT, "channel", "RGB luma in, 2 channels out");
  /* 5 output channels are cmyk's inks and alpha, for no other run; 6 for none */
  ht_image o5 = { OUT_W, OUT_H, OUT_W * 5, 5, HT_FORMAT_U8, out_buf };
  EXPECT(ctx, ht_run(ctx, &in, &o5, &p), HT_ERR_INVALID_ARGUMENT, "channel", "5 output channels");
  ht_image o6 = { OUT_W, OUT_H, OUT_W * 6, 6, HT_FORMAT_U8, out_buf };
  EXPECT(ctx, ht_run(ctx, &in, &o6, &p), HT_ERR_INVALID_ARGUMENT, "1 to 5", "6 output channels");
  ht_image i5 = { OUT_W, OUT_H, OUT_W * 5, 5, HT_FORMAT_U8, in_buf };
  EXPECT(ctx, ht_run(ctx, &i5, &o5, &p), HT_ERR_INVALID_ARGUMENT, "1 to 4", "5 input channels");

  /* size mismatch, short stride */
  ht_image small = gray8(out_buf, OUT_W - 1, OUT_H);
  EXPECT(ctx, ht_run(ctx, &in, &small, &p), HT_ERR_INVALID_ARGUMENT, "input is", "output size differs");
  ht_image shortrow = gray8(in_buf, OUT_W, OUT_H);
  shortrow.stride = OUT_W - 1;
  EXPECT(ctx, ht_run(ctx, &shortrow, &out, &p), HT_ERR_INVALID_ARGUMENT, "stride", "short stride");

  /* serpentine has no wavefront form */
  q = p;
  q.scan = HT_SCAN_SERPENTINE;
  q.variant = HT_VARIANT_WAVEFRONT;
  EXPECT(ctx, ht_run(ctx, &in, &out, &q), HT_ERR_UNSUPPORTED, "serpentine", "serpentine with wavefront");
  q.variant = HT_VARIANT_EC_RC;
  EXPECT(ctx, ht_run(ctx, &in, &out, &q), HT_ERR_UNSUPPORTED, "serpentine", "serpentine with ec-rc");

  /* unknown variant number */
  q = p;
  q.variant = (ht_variant)1000; /* far from every range of variants */
  EXPECT(ctx, ht_run(ctx, &in, &out, &q), HT_ERR_INVALID_ARGUMENT, "variant", "unknown variant");

  /* a filter table that points back at processed pixels, or sums above 1 */
  q = p;
  q.filter.taps[0].dx = 0; /* (0, 0): the current pixel itself */
  EXPECT(ctx, ht_run(ctx, &in, &out, &q), HT_ERR_BAD_COEFFICIENTS, "weight 1", "tap at the current pixel");
  q = p;
  q.filter.taps[2].q = 4096;
  EXPECT(ctx, ht_run(ctx, &in, &out, &q), HT_ERR_BAD_COEFFICIENTS, "sum", "weights above 1");

  /* backend cuda on a machine without a usable GPU */
  ht_context *gpu = ht_context_new();
  if (gpu) {
    ht_context_set_backend(gpu, HT_BACKEND_CUDA);
    reset_out();
    ht_status s = ht_run(gpu, &in, &out, &p);
    if (s == HT_OK) {
      printf("note: backend cuda ran here (a GPU is usable); the no-GPU case is not checked\n");
    } else {
      const char *m = ht_context_message(gpu);
      CHECK(s == HT_ERR_NO_GPU, "backend cuda: status \"%s\" (message: %s)", ht_status_string(s), m);
      CHECK(strstr(m, "cuda") != NULL || strstr(m, "GPU") != NULL, "backend cuda: message \"%s\"", m);
      CHECK(out_untouched(), "backend cuda: output written");
    }
    ht_context_free(gpu);
  }
}

/* Malformed coefficient strings: the status, and the 1-based position of
 * the offending character in the message. */
static void coefficient_errors(void)
{
  static const struct {
    const char *text;
    int pos;
    const char *needle;
  } cases[] = {
    { "- -; 1 2", 4, "'*'" },              /* first row without '*'          */
    { "- 7", 3, "before '*'" },            /* a weight where '*' should be    */
    { "3 * 7; 1 1 1", 1, "before '*'" },   /* weight before '*'              */
    { "- * 7; 3 5 1 / 0", 16, "positive" },
    { "- * 7; 3 5 1 / -16", 16, "positive" },
    { "- * 7; 3 5 1 / x", 16, "number" },
    { "- * 1 1 1 1 1", 13, "too large" },  /* 5 columns right of '*'         */
    { "- - - - - * 1; 1", 16, "too large" }, /* 5 left: the weight below it */
    { "- * 1; 1; 1; 1; 1", 15, "too large" }, /* a fourth row below          */
    { "- * x; 1 1 1", 5, "unexpected" },
    { "- * 7.5; 3 5 1", 5, "whole number" },
    { "- * 7; 3 5 1 / 15", 16, "more than the divisor" },
    { "- * 7; 3 -5 1", 10, "negative" },
    { "- * 0; 0 0 0", 13, "zero" },
    { "", 1, "empty" },
    { "- * 7;; 3 5 1", 7, "empty row" },
    { "- * 7; 3 * 1", 10, "first row only" },
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ht_filter f;
    memset(&f, 0x77, sizeof f);
    ht_filter before = f;
    char err[256];
    ht_status s = ht_filter_parse(cases[i].text, &f, err, sizeof err);
    char pos[32];
    snprintf(pos, sizeof pos, "position %d:", cases[i].pos);
    CHECK(s == HT_ERR_BAD_COEFFICIENTS, "\"%s\": status %s", cases[i].text, ht_status_string(s));
    CHECK(strstr(err, pos) != NULL, "\"%s\": message \"%s\" lacks \"%s\"", cases[i].text, err, pos);
    CHECK(strstr(err, cases[i].needle) != NULL, "\"%s\": message \"%s\" lacks \"%s\"", cases[i].text, err,
          cases[i].needle);
    CHECK(memcmp(&f, &before, sizeof f) == 0, "\"%s\": the output filter was written", cases[i].text);
  }
  char err[64];
  CHECK(ht_filter_parse(NULL, NULL, err, sizeof err) == HT_ERR_INVALID_ARGUMENT, "NULL string");
}

int main(void)
{
  ht_context *ctx = ht_context_new();
  if (!ctx)
    return 99;
  ht_context_set_backend(ctx, HT_BACKEND_CPU);
  image_errors(ctx);
  coefficient_errors();
  ht_context_free(ctx);
  return test_finish("test-errors");
}

/* Rules of the public API, each checked on its own (one part per
 * argument):
 *
 *   strides   16-bit and float images whose stride or start is not a
 *             whole number of samples are refused (HT_ERR_INVALID_ARGUMENT,
 *             halftone.h), before anything is written; 8-bit and 1-bit
 *             images may start and stride at any byte, and padded rows
 *             give the same bits as tight ones.
 */
#include "ht-test.h"

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

int main(int argc, char **argv)
{
  const char *part = argc > 1 ? argv[1] : "all";
  bool all = strcmp(part, "all") == 0, known = all;
  if (all || strcmp(part, "strides") == 0) {
    known = true;
    test_strides();
  }
  if (!known) {
    fprintf(stderr, "usage: test-rules [strides|all]\n");
    return 2;
  }
  return test_finish("test-rules");
}

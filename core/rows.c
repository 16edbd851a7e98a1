/* Row load and store for every input and output format (rows.h). */
#include "rows.h"
#include "shared/srgb.h"

#include <math.h>
#include <string.h>

/* f * 65535 rounded to a float, then to the nearest integer, ties to
 * even (lrintf in the default rounding mode); 0 for NaN and below 0,
 * HT_FX_ONE from 1 on. Branch-free so that rows of floats vectorise: the
 * product is exact in double and rounded to float by the cast (which no
 * multiply-add contraction crosses), and adding 1.5 * 2^23 leaves the
 * rounded integer in a float whose unit in the last place is 1 (exact
 * for values below 2^22). */
static inline int32_t fx_from_f32(float f)
{
  float x = f > 0.0f ? f : 0.0f;
  x = x < 1.0f ? x : 1.0f;
  const float y = (float)((double)x * (double)HT_FX_ONE);
  return (int32_t)((y + 12582912.0f) - 12582912.0f);
}

static inline int32_t sample_fx(const ht_rows *r, const uint8_t *row, int64_t x, int c)
{
  size_t i = (size_t)x * (size_t)r->in_channels + (size_t)c;
  switch (r->in_format) {
  case HT_FORMAT_U8: return ht_fx_from_u8(row[i]);
  case HT_FORMAT_U16: return ((const uint16_t *)(const void *)row)[i];
  case HT_FORMAT_F32: return fx_from_f32(((const float *)(const void *)row)[i]);
  default: return 0;
  }
}

/* Rec. 709 luma of the stored values, weights in 1/65536 summing to 1. */
static inline int32_t luma_fx(int32_t r, int32_t g, int32_t b)
{
  /* stored values are 0..65535, so the sum stays below 65536 * 65535 +
   * 32768 < 2^32: 32-bit unsigned arithmetic is exact and vectorises */
  return (int32_t)((13933u * (uint32_t)r + 46871u * (uint32_t)g + 4732u * (uint32_t)b + 32768u) >> 16);
}

static void load_row(const ht_rows *r, int64_t y, int64_t x0, int64_t n, int32_t *dst)
{
  const uint8_t *row = r->in + (size_t)y * r->in_stride;
  if (r->linear) { /* decoded sample by sample; the luma is then true luminance */
    for (int64_t i = 0; i < n; i++)
      dst[i] = r->in_channel >= 0 ? ht_srgb_decode(sample_fx(r, row, x0 + i, r->in_channel))
                                  : luma_fx(ht_srgb_decode(sample_fx(r, row, x0 + i, 0)),
                                            ht_srgb_decode(sample_fx(r, row, x0 + i, 1)),
                                            ht_srgb_decode(sample_fx(r, row, x0 + i, 2)));
    return;
  }
  if (r->in_channel >= 0) {
    if (r->in_format == HT_FORMAT_U8 && r->in_channels == 1) {
      row += x0;
      for (int64_t i = 0; i < n; i++) /* the hot case: let it vectorise */
        dst[i] = ht_fx_from_u8(row[i]);
      return;
    }
    if (r->in_format == HT_FORMAT_U8) { /* one channel of 8-bit RGB(A): colour modes, cmyk */
      const size_t ch = (size_t)r->in_channels;
      const uint8_t *p = row + (size_t)x0 * ch + (size_t)r->in_channel;
      for (int64_t i = 0; i < n; i++, p += ch)
        dst[i] = ht_fx_from_u8(*p);
      return;
    }
    for (int64_t i = 0; i < n; i++)
      dst[i] = sample_fx(r, row, x0 + i, r->in_channel);
    return;
  }
  /* Luma. 8-bit RGB(A) and float RGB(A), what GIMP layers hold, get
   * their own loops: the per-sample format switch costs more than the
   * halftone itself (the GEGL op's bands, BENCHMARKS.md). Same values. */
  const size_t ch = (size_t)r->in_channels;
  if (r->in_format == HT_FORMAT_U8) {
    const uint8_t *p = row + (size_t)x0 * ch;
    for (int64_t i = 0; i < n; i++, p += ch)
      dst[i] = luma_fx(ht_fx_from_u8(p[0]), ht_fx_from_u8(p[1]), ht_fx_from_u8(p[2]));
    return;
  }
  if (r->in_format == HT_FORMAT_F32) {
    const float *p = (const float *)(const void *)row + (size_t)x0 * ch;
    for (int64_t i = 0; i < n; i++, p += ch)
      dst[i] = luma_fx(fx_from_f32(p[0]), fx_from_f32(p[1]), fx_from_f32(p[2]));
    return;
  }
  for (int64_t i = 0; i < n; i++)
    dst[i] = luma_fx(sample_fx(r, row, x0 + i, 0), sample_fx(r, row, x0 + i, 1), sample_fx(r, row, x0 + i, 2));
}

static void store_row(const ht_rows *r, int64_t y, int64_t x0, int64_t n, const uint8_t *lv)
{
  uint8_t *row = r->out + (size_t)y * r->out_stride;
  switch (r->out_format) {
  case HT_FORMAT_U8:
    if (r->out_channels == 1) {
      row += x0;
      for (int64_t i = 0; i < n; i++)
        row[i] = (uint8_t)r->lut[lv[i]];
    } else {
      /* locals: a byte store may alias r's fields, which would be read
       * again at every pixel */
      const size_t ch = (size_t)r->out_channels;
      const uint16_t *lut = r->lut;
      uint8_t *o = row + (size_t)x0 * ch + (size_t)r->out_channel;
      for (int64_t i = 0; i < n; i++, o += ch)
        *o = (uint8_t)lut[lv[i]];
    }
    break;
  case HT_FORMAT_U16: {
    uint16_t *o = (uint16_t *)(void *)row;
    for (int64_t i = 0; i < n; i++)
      o[(size_t)(x0 + i) * (size_t)r->out_channels + (size_t)r->out_channel] = r->lut[lv[i]];
    break;
  }
  case HT_FORMAT_BIT1: {
    row += x0 >> 3; /* x0 is a multiple of 8 */
    int64_t i = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* 1-bit output means levels == 2, so every index is 0 or 1: flip the
     * eight low bits of eight bytes and gather them, first pixel to the
     * most significant bit, with one multiply. */
    for (; i + 8 <= n; i += 8) {
      uint64_t v;
      memcpy(&v, lv + i, 8);
      v = ~v & UINT64_C(0x0101010101010101);
      row[i >> 3] = (uint8_t)((v * UINT64_C(0x8040201008040201)) >> 56);
    }
#endif
    for (; i + 8 <= n; i += 8) {
      unsigned b = 0;
      for (int k = 0; k < 8; k++)
        b = (b << 1) | (lv[i + k] == 0);
      row[i >> 3] = (uint8_t)b;
    }
    if (i < n) { /* the end of the row */
      const int64_t is = i;
      unsigned b = 0;
      int k = 0;
      for (; i < n; i++, k++)
        b = (b << 1) | (lv[i] == 0);
      row[is >> 3] = (uint8_t)(b << (8 - k));
    }
    break;
  }
  case HT_FORMAT_F32:
    break;
  }
}

static void set_lut(ht_rows *r, bool indices)
{
  int L = r->levels;
  int32_t max = r->out_format == HT_FORMAT_U16 ? 65535 : 255;
  for (int q = 0; q < 256; q++) {
    if (indices)
      r->lut[q] = (uint16_t)q;
    else if (q < L)
      r->lut[q] = (uint16_t)((2 * q * max + (L - 1)) / (2 * (L - 1)));
    else
      r->lut[q] = (uint16_t)max;
  }
}

void ht_rows_set_linear(ht_rows *r, bool inks, bool indices)
{
  r->linear = true;
  if (indices || r->out_format == HT_FORMAT_BIT1)
    return; /* indices, or two levels: 0 and full scale either way */
  const int L = r->levels;
  const int32_t max = r->out_format == HT_FORMAT_U16 ? 65535 : 255;
  for (int q = 0; q < L && q < 256; q++)
    r->lut[q] = (uint16_t)(inks ? max - ht_srgb_encode(ht_fx_level(L - 1 - q, L), max)
                                : ht_srgb_encode(ht_fx_level(q, L), max));
}

void ht_rows_init(ht_rows *r, const ht_image *in, int in_channel, const ht_image *out, int out_channel,
                  int levels, bool indices)
{
  memset(r, 0, sizeof *r);
  r->width = in->width;
  r->height = in->height;
  r->load = load_row;
  r->store = store_row;
  r->in = in->data;
  r->in_stride = in->stride;
  r->in_channels = in->channels;
  r->in_channel = in_channel;
  r->in_format = in->format;
  r->out = out->data;
  r->out_stride = out->stride;
  r->out_channels = out->channels;
  r->out_channel = out_channel;
  r->out_format = out->format;
  r->levels = levels;
  set_lut(r, indices);
}

void ht_rows_copy_alpha(const ht_image *in, ht_image *out)
{
  int ci = in->channels - 1, co = out->channels - 1;
  for (int64_t y = 0; y < in->height; y++) {
    const uint8_t *ri = (const uint8_t *)in->data + (size_t)y * in->stride;
    uint8_t *ro = (uint8_t *)out->data + (size_t)y * out->stride;
    if (in->format == HT_FORMAT_U8 && out->format == HT_FORMAT_U8) {
      /* (v * 257 + 128) / 257 is v: a plain byte copy */
      const size_t si = (size_t)in->channels, so = (size_t)out->channels;
      const uint8_t *a = ri + ci;
      uint8_t *b = ro + co;
      for (int64_t x = 0; x < in->width; x++, a += si, b += so)
        *b = *a;
      continue;
    }
    for (int64_t x = 0; x < in->width; x++) {
      size_t ii = (size_t)x * (size_t)in->channels + (size_t)ci;
      size_t io = (size_t)x * (size_t)out->channels + (size_t)co;
      int32_t a;
      switch (in->format) {
      case HT_FORMAT_U8: a = ht_fx_from_u8(ri[ii]); break;
      case HT_FORMAT_U16: a = ((const uint16_t *)(const void *)ri)[ii]; break;
      default: a = fx_from_f32(((const float *)(const void *)ri)[ii]); break;
      }
      if (out->format == HT_FORMAT_U8)
        ro[io] = (uint8_t)((a + 128) / 257);
      else
        ((uint16_t *)(void *)ro)[io] = (uint16_t)a;
    }
  }
}


/* Checks of the caller's images (image.h). */
#include "image.h"
#include "job.h"

#include <math.h>

size_t ht_format_row_bytes(ht_format format, int64_t width, int channels)
{
  if (width <= 0 || channels <= 0)
    return 0;
  switch (format) {
  case HT_FORMAT_U8: return (size_t)width * (size_t)channels;
  case HT_FORMAT_U16: return (size_t)width * (size_t)channels * 2;
  case HT_FORMAT_F32: return (size_t)width * (size_t)channels * 4;
  case HT_FORMAT_BIT1: return ((size_t)width * (size_t)channels + 7) / 8;
  }
  return 0;
}

size_t ht_format_sample_bytes(ht_format format)
{
  switch (format) {
  case HT_FORMAT_U16: return 2;
  case HT_FORMAT_F32: return 4;
  case HT_FORMAT_U8:
  case HT_FORMAT_BIT1: return 1;
  }
  return 1;
}

ht_status ht_image_check(const ht_image *im, const char *what, bool output, char *msg)
{
  if (!im || !im->data) {
    ht_set_msg(msg, "%s image: no pixel data", what);
    return HT_ERR_INVALID_ARGUMENT;
  }
  if (im->width <= 0 || im->height <= 0) {
    ht_set_msg(msg, "%s image: size %lldx%lld has no pixels", what, (long long)im->width, (long long)im->height);
    return HT_ERR_BAD_SIZE;
  }
  if (im->width > HT_MAX_SIDE || im->height > HT_MAX_SIDE || im->width * im->height > HT_MAX_PIXELS) {
    ht_set_msg(msg, "%s image: size %lldx%lld is larger than the supported %lld pixels a side / %lld in all", what,
               (long long)im->width, (long long)im->height, (long long)HT_MAX_SIDE, (long long)HT_MAX_PIXELS);
    return HT_ERR_BAD_SIZE;
  }
  /* an output has one channel more than any input can: cmyk's four inks
   * beside the input's alpha (ht_output_layout says which count a run needs) */
  const int most = output ? 5 : 4;
  if (im->channels < 1 || im->channels > most) {
    ht_set_msg(msg, "%s image: %d channels (1 to %d supported)", what, im->channels, most);
    return HT_ERR_INVALID_ARGUMENT;
  }
  if ((int)im->format < 0 || im->format > HT_FORMAT_BIT1 || (!output && im->format == HT_FORMAT_BIT1) ||
      (output && im->format == HT_FORMAT_F32)) {
    ht_set_msg(msg, "%s image: unsupported sample format", what);
    return HT_ERR_INVALID_ARGUMENT;
  }
  const size_t row = ht_format_row_bytes(im->format, im->width, im->channels);
  if (im->stride < row) {
    ht_set_msg(msg, "%s image: stride %zu is shorter than a row (%zu bytes)", what, im->stride, row);
    return HT_ERR_INVALID_ARGUMENT;
  }
  /* The span of the rows, (height - 1) * stride + row, must be an address
   * range: a stride near SIZE_MAX wraps it, and the rows' addresses with it. */
  if ((size_t)(im->height - 1) > (SIZE_MAX - row) / im->stride ||
      (size_t)(im->height - 1) * im->stride + row > (size_t)(UINTPTR_MAX - (uintptr_t)im->data)) {
    ht_set_msg(msg, "%s image: stride %zu times %lld rows does not fit the address space", what, im->stride,
               (long long)im->height);
    return HT_ERR_INVALID_ARGUMENT;
  }
  /* 16-bit and float samples are read and written as uint16_t and float:
   * every row must start on a whole sample, or the loads and stores are
   * misaligned (undefined behaviour in C, and slower or faulting on some
   * machines). */
  const size_t sample = ht_format_sample_bytes(im->format);
  if (sample > 1 && im->stride % sample != 0) {
    ht_set_msg(msg, "%s image: stride %zu is not a multiple of the %zu-byte sample", what, im->stride, sample);
    return HT_ERR_INVALID_ARGUMENT;
  }
  if (sample > 1 && (uintptr_t)im->data % sample != 0) {
    ht_set_msg(msg, "%s image: pixel data not aligned to its %zu-byte samples", what, sample);
    return HT_ERR_INVALID_ARGUMENT;
  }
  return HT_OK;
}

ht_status ht_image_check_floats(const ht_image *in, char *msg)
{
  for (int64_t y = 0; y < in->height; y++) {
    const float *row = (const float *)(const void *)((const uint8_t *)in->data + (size_t)y * in->stride);
    size_t n = (size_t)in->width * (size_t)in->channels;
    for (size_t i = 0; i < n; i++)
      if (!isfinite(row[i])) {
        ht_set_msg(msg, "input pixel (%zu, %lld) is %s; nothing was written", i / (size_t)in->channels, (long long)y,
                   isnan(row[i]) ? "NaN" : "infinite");
        return HT_ERR_BAD_PIXEL;
      }
  }
  return HT_OK;
}

bool ht_images_overlap(const ht_image *a, const ht_image *b)
{
  const uint8_t *ab = a->data, *ae = ab + (size_t)(a->height - 1) * a->stride +
                                         ht_format_row_bytes(a->format, a->width, a->channels);
  const uint8_t *bb = b->data, *be = bb + (size_t)(b->height - 1) * b->stride +
                                         ht_format_row_bytes(b->format, b->width, b->channels);
  return ab < be && bb < ae;
}

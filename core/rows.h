/* Where an algorithm's rows come from and go to (rows.c).
 *
 * Algorithms see only this, so they work for every input and output
 * format, channel count and plane with memory that grows with the width,
 * never with the pixel count. */
#ifndef HT_ROWS_H
#define HT_ROWS_H

#include "halftone.h"
#include "shared/fixed.h"

typedef struct ht_rows ht_rows;
struct ht_rows {
  int64_t width, height;
  /* Columns x0 .. x0 + n - 1 of row y as HT_FX values, to dst[0 .. n).
   * May be called from several threads at once for different rows. */
  void (*load)(const ht_rows *r, int64_t y, int64_t x0, int64_t n, int32_t *dst);
  /* Level indices of columns x0 .. x0 + n - 1 of row y. For 1-bit output
   * x0 is a multiple of 8, and so is n unless the span ends the row. May
   * be called from several threads at once for different rows. */
  void (*store)(const ht_rows *r, int64_t y, int64_t x0, int64_t n, const uint8_t *levels);
  /* Source */
  const uint8_t *in;
  size_t in_stride;
  int in_channels;
  int in_channel;      /* channel to read, or -1 for luma             */
  ht_format in_format;
  /* Sink */
  uint8_t *out;
  size_t out_stride;
  int out_channels;
  int out_channel;
  ht_format out_format;
  int levels;
  uint16_t lut[256];   /* level index -> stored output value        */
  /* Linear light (ht_params.space): every sample decoded by
   * core/shared/srgb.h before the luma or the method sees it, and lut
   * holds the stored values nearest each level's light. The fast paths
   * that read `in` or fill `out` themselves take only rows where this is
   * false. */
  bool linear;
};

/* Rows of plane `in_channel` of `in` (-1: the Rec. 709 luma of its first
 * three channels) into channel `out_channel` of `out`, with `levels`
 * levels. `indices`: store level indices as they are (ht_run_plane)
 * instead of evenly spaced sample values. */
void ht_rows_init(ht_rows *r, const ht_image *in, int in_channel, const ht_image *out, int out_channel,
                  int levels, bool indices);

/* Makes `r` (after ht_rows_init) read and write linear light: the
 * levels evenly spaced in light, written as the stored values nearest
 * (for ink planes, ink = maxval - the stored value of the light left).
 * `indices` as for ht_rows_init. */
void ht_rows_set_linear(ht_rows *r, bool inks, bool indices);

/* Copies the last channel of `in` (alpha) into the last channel of `out`. */
void ht_rows_copy_alpha(const ht_image *in, ht_image *out);

#endif

/* Checks of the caller's images (image.c): sizes, strides, formats,
 * sample alignment, overlap and float samples, before anything is
 * written. */
#ifndef HT_IMAGE_H
#define HT_IMAGE_H

#include "halftone.h"

/* Bytes of one sample: 2 for U16, 4 for F32, 1 for U8 and BIT1 (whose
 * rows need no alignment). */
size_t ht_format_sample_bytes(ht_format format);
/* HT_OK, or a status with a one-line message naming `what` in msg
 * (HT_MSG_MAX bytes). */
ht_status ht_image_check(const ht_image *im, const char *what, bool output, char *msg);
/* HT_ERR_BAD_PIXEL where a float sample is NaN or infinite. */
ht_status ht_image_check_floats(const ht_image *in, char *msg);
bool ht_images_overlap(const ht_image *a, const ht_image *b);

#endif

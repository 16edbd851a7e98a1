/* Checks of the caller's images (image.c): sizes, strides, formats,
 * overlap and float samples, before anything is written. */
#ifndef HT_IMAGE_H
#define HT_IMAGE_H

#include "halftone.h"

/* HT_OK, or a status with a one-line message naming `what` in msg
 * (HT_MSG_MAX bytes). */
ht_status ht_image_check(const ht_image *im, const char *what, bool output, char *msg);
/* HT_ERR_BAD_PIXEL where a float sample is NaN or infinite. */
ht_status ht_image_check_floats(const ht_image *in, char *msg);
bool ht_images_overlap(const ht_image *a, const ht_image *b);

#endif

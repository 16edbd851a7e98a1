/* Ordered dithering (core/ordered/): each pixel against a threshold of
 * its own from a matrix tiled over the plane, no error carried, so that
 * rows are independent and any split of them over threads gives the
 * same bits. */
#ifndef HT_ORDERED_H
#define HT_ORDERED_H

#include "../job.h"
#include "../rows.h"

/* Bayer's matrix of side ht_params.mask_size (bayer.c). */
ht_status ht_bayer_run(ht_job *job, const ht_rows *rows);

#endif

/* Ordered dithering and thresholding (core/ordered/): each pixel's level
 * from its own value and place alone, no error carried, so that rows are
 * independent and any split of them over threads gives the same bits. */
#ifndef HT_ORDERED_H
#define HT_ORDERED_H

#include "../job.h"
#include "../rows.h"

/* The levels lv[0 .. w) of row y from its values in[0 .. w) (HT_FX);
 * ctx is the method's own, read-only. Called from several threads at
 * once for different rows. */
typedef void (*ht_ordered_row_fn)(const void *ctx, const ht_job *job, int64_t y, const int32_t *in, uint8_t *lv,
                                  int64_t w);

/* Every row of the plane through `fn`, on the job's threads (ordered.c). */
ht_status ht_ordered_run(ht_job *job, const ht_rows *rows, ht_ordered_row_fn fn, const void *ctx);

/* Bayer's matrix of side ht_params.mask_size (bayer.c). */
ht_status ht_bayer_run(ht_job *job, const ht_rows *rows);
/* Each pixel to its nearest level (threshold.c). */
ht_status ht_threshold_run(ht_job *job, const ht_rows *rows);

#endif

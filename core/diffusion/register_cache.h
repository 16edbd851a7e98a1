/* What ED-RC and EC-RC (ed_rc.c, ec_rc.c) run with: the plane's row
 * buffers, the filter as a weight box, the level table, and `nerr` rows
 * of errors, whose meaning is each method's, of `stride` values: the
 * width and HT_RC_PAD columns either side, which the sliding windows
 * read or write past the image's edges. */
#ifndef HT_DIFFUSION_REGISTER_CACHE_H
#define HT_DIFFUSION_REGISTER_CACHE_H

#include "diffusion.h"
#include "footprint.h"
#include "levels.h"

#include <stdlib.h>
#include <string.h>

#define HT_RC_PAD 8 /* >= 4, the widest reach of a filter */

typedef struct {
  const ht_rows *rows;
  ht_job *job;
  ht_weight_box bx;
  int levels;
  ht_level_table lt;
  int32_t *in;
  uint8_t *lv;
  int32_t *err; /* the method's error rows; zeros at first */
  size_t stride;
} ht_rc;

/* False where memory ran out (the message is in job->msg); close *c
 * either way. */
static inline bool ht_rc_open(ht_rc *c, ht_job *job, const ht_rows *rows, size_t nerr)
{
  memset(c, 0, sizeof *c);
  c->rows = rows;
  c->job = job;
  c->levels = job->levels;
  ht_weight_box_of(&job->filter, &c->bx);
  c->stride = (size_t)rows->width + 2 * HT_RC_PAD;
  c->in = ht_alloc(job, (size_t)rows->width, sizeof *c->in);
  c->lv = ht_alloc(job, (size_t)rows->width, 1);
  c->err = ht_alloc(job, nerr, c->stride * sizeof *c->err);
  const bool lt_ok = ht_level_table_init(&c->lt, job, c->levels);
  return c->in && c->lv && c->err && lt_ok;
}

static inline void ht_rc_close(ht_rc *c)
{
  free(c->in);
  free(c->lv);
  free(c->err);
  ht_level_table_free(&c->lt);
}

#endif

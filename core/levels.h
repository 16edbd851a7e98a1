/* The rounding step shared by the fast variants (ED-RC, EC-RC, the
 * wavefront): level values, and for more than two levels a table of
 * ht_fx_quantize over 0..HT_FX_ONE, so that no pixel needs a division
 * (levels.c). The result is ht_fx_quantize's, bit for bit. */
#ifndef HT_LEVELS_H
#define HT_LEVELS_H

#include "job.h"

typedef struct {
  int32_t value[256];
  uint8_t *lut; /* levels > 2 only */
} ht_level_table;

/* false (job->msg set) when the table cannot be allocated */
bool ht_level_table_init(ht_level_table *t, ht_job *job, int levels);
void ht_level_table_free(ht_level_table *t);

/* Rounds v (core/shared/fixed.h rules), stores the level index, returns the error. */
static inline __attribute__((always_inline)) int32_t
ht_level_round(const bool binary, const ht_level_table *t, int32_t v, uint8_t *lv)
{
  int32_t q;
  if (binary) {
    q = ht_fx_binary(v);
    *lv = (uint8_t)q;
    return q ? v - HT_FX_ONE : v;
  }
  /* the table holds ht_fx_quantize of every clamped value (ht_fx_quantize
   * clamps to 0 and L-1 itself), so this is the same level */
  q = t->lut[v < 0 ? 0 : v > HT_FX_ONE ? HT_FX_ONE : v];
  *lv = (uint8_t)q;
  return v - t->value[q];
}

#endif

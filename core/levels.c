/* The rounding step of the fast variants (levels.h). */
#include "levels.h"

#include <stdlib.h>
#include <string.h>

/* The table of ht_fx_quantize over 0..HT_FX_ONE, filled a run of equal
 * levels at a time (the function is monotonic): its run ends are found by
 * bisection with ht_fx_quantize itself, about 16 calls per level instead
 * of 65536 divisions, which matters for small images. */
static void fill_quantize_lut(uint8_t *lut, int levels)
{
  for (int32_t v = 0; v <= HT_FX_ONE;) {
    int32_t q = ht_fx_quantize(v, levels), lo = v, hi = HT_FX_ONE + 1;
    while (lo + 1 < hi) { /* quantize(lo) == q, quantize(hi) != q or hi past the end */
      int32_t mid = lo + (hi - lo) / 2;
      if (ht_fx_quantize(mid, levels) == q)
        lo = mid;
      else
        hi = mid;
    }
    memset(lut + v, q, (size_t)(hi - v));
    v = hi;
  }
}

bool ht_level_table_init(ht_level_table *t, ht_job *job, int levels)
{
  memset(t, 0, sizeof *t);
  for (int i = 0; i < levels; i++)
    t->value[i] = ht_fx_level(i, levels);
  if (levels == 2)
    return true;
  t->lut = ht_alloc(job, (size_t)HT_FX_ONE + 1, 1);
  if (!t->lut)
    return false;
  fill_quantize_lut(t->lut, levels);
  return true;
}

void ht_level_table_free(ht_level_table *t)
{
  free(t->lut);
  t->lut = NULL;
}

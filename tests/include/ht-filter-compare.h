/* Filter comparison shared by the rules test and the filter fuzz target
 * (header only, no test state, so the fuzz build can take it alone). */
#ifndef HT_FILTER_COMPARE_H
#define HT_FILTER_COMPARE_H

#include "halftone.h"

#include <stdbool.h>

/* Whether two filters have the same divisor and the same non-zero
 * weights at the same places, whatever the order of their taps: the
 * parser may list taps in any order and keep zero weights. */
static inline bool ht_test_same_filter(const ht_filter *a, const ht_filter *b)
{
  if (a->den != b->den)
    return false;
  int na = 0, nb = 0;
  for (int i = 0; i < a->ntaps; i++) {
    if (a->taps[i].num == 0)
      continue;
    na++;
    bool found = false;
    for (int j = 0; j < b->ntaps && !found; j++)
      found = b->taps[j].dx == a->taps[i].dx && b->taps[j].dy == a->taps[i].dy && b->taps[j].num == a->taps[i].num;
    if (!found)
      return false;
  }
  for (int j = 0; j < b->ntaps; j++)
    nb += b->taps[j].num != 0;
  return na == nb;
}

#endif

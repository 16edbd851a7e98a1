/* What the library knows of a filter beyond the public API (filters.c). */
#ifndef HT_FILTER_H
#define HT_FILTER_H

#include "halftone.h"

/* Fills reach_* and delay from the taps: of a parsed filter, and of the
 * built-in ones when their table is first used. */
void ht_filter_derive(ht_filter *f);

/* true when every backend can run `f`; else false with a one-line reason
 * in msg (HT_MSG_MAX bytes). */
bool ht_filter_check(const ht_filter *f, char *msg);

/* The list HT_LIST_FILTERS (names.c serves it). */
const ht_choice *ht_filter_choices(int *count);

#endif

/* What the library knows of its parameters' description beyond the
 * public API (describe.c), for ht_params_init and ht_check. */
#ifndef HT_DESCRIBE_H
#define HT_DESCRIBE_H

#include "halftone.h"

/* Whether the run that `p` describes uses parameter `id` (its
 * algorithm, colour mode and the values of the parameters a use depends
 * on). */
bool ht_params_use(const ht_params *p, ht_param_id id);

/* Sets every parameter of `p` to its default (ht_params_init). */
void ht_params_defaults(ht_params *p);

/* Whether every number of `p` lies in its parameter's range; else
 * HT_ERR_INVALID_ARGUMENT and the reason in `why`. */
ht_status ht_params_check_ranges(const ht_params *p, char *why, size_t n);

#endif

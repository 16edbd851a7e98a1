/* What the library knows of its description beyond the public API
 * (describe.c): the method rows, for names.c's lists and context.c's
 * checks. */
#ifndef HT_DESCRIBE_H
#define HT_DESCRIBE_H

#include "halftone.h"

#define HT_METHOD_MAX_USES 12

/* A parameter a method uses: for algorithm `algorithm` of the method
 * only (or any: -1), in the colour modes `colors`, and where `when_values`
 * is not 0 only while parameter `when` has one of those values (bit 1 <<
 * value). */
typedef struct {
  ht_param_id id;
  int algorithm;
  unsigned colors;
  ht_param_id when;
  unsigned when_values;
} method_use;

typedef struct {
  ht_choice choice;  /* value (ht_method), name, label, help: HT_LIST_METHODS */
  int algorithm;     /* its HT_LIST_ALGORITHMS value, or -1             */
  unsigned caps;     /* HT_MCAP_*                                       */
  unsigned colors;   /* the colour modes it takes                       */
  method_use uses[HT_METHOD_MAX_USES]; /* ended by id 0 (the algorithm,
                                           which every method uses)     */
} method_row;

/* The rows, in ht_method order. */
const method_row *ht_method_rows(int *count);
/* The row of method `m`, or NULL. */
const method_row *ht_method_row(ht_method m);

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

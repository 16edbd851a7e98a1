/* The method rows (methods.c): what the library knows of each method
 * beyond the public API, for the lists, the description and the checks. */
#ifndef HT_METHODS_H
#define HT_METHODS_H

#include "halftone.h"

#define HT_METHOD_MAX_USES 12

/* A use's algorithm that is any of the method's. */
#define HT_ANY_ALGORITHM -1

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

/* HT_LIST_METHODS and HT_LIST_ALGORITHMS (names.c serves them). */
const ht_choice *ht_method_choices(int *count);
const ht_choice *ht_algorithm_choices(int *count);

#endif

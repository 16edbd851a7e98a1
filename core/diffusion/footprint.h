/* The filter footprints that the fast kernels are compiled for, in one
 * list shared by ED-RC, EC-RC and the wavefront.
 *
 * A footprint is how far a filter reaches: L columns left and R right
 * of the current pixel, D rows down. The kernels are written once for a
 * footprint whose L, R, D are compile-time constants (so GCC unrolls the
 * windows and keeps them in registers) and with the weights as a dense
 * box (a missing tap has weight 0, and ht_fx_term(e, 0) == 0). A run
 * takes the first footprint of the list that contains its filter's; the
 * last one, the largest, contains every filter.
 *
 * A kernel file instantiates itself with HT_FOOTPRINTS(X): X(L, R, D) is
 * expanded once per footprint, in the order of the list, so that a table
 * built the same way is indexed by ht_footprint_of(). */
#ifndef HT_FOOTPRINT_H
#define HT_FOOTPRINT_H

#include "halftone.h"

/* cheapest first, then the catch-all (numbers, not names: kernel files
 * paste them into function names) */
#define HT_FOOTPRINTS(X)                                    \
  X(1, 1, 1) /* Floyd-Steinberg, Sierra Lite          */    \
  X(2, 2, 1) /* Burkes, Sierra-2                      */    \
  X(1, 2, 2) /* Atkinson                              */    \
  X(2, 2, 2) /* Jarvis-Judice-Ninke, Stucki, Sierra-3 */    \
  X(4, 4, 3) /* any filter                            */
_Static_assert(HT_FILTER_MAX_LEFT == 4 && HT_FILTER_MAX_RIGHT == 4 && HT_FILTER_MAX_DOWN == 3,
               "the last footprint must take any filter");

#define HT_FOOTPRINT_PLUS_ONE(L, R, D) +1
enum { HT_FOOTPRINT_COUNT = 0 HT_FOOTPRINTS(HT_FOOTPRINT_PLUS_ONE) };

typedef struct {
  int index; /* in the list */
  int left, right, down;
} ht_footprint;

/* The first footprint of the list that contains filter f's reach. */
static inline ht_footprint ht_footprint_of(const ht_filter *f)
{
#define HT_FOOTPRINT_ENTRY(L, R, D) { 0, L, R, D },
  static const ht_footprint list[HT_FOOTPRINT_COUNT] = { HT_FOOTPRINTS(HT_FOOTPRINT_ENTRY) };
#undef HT_FOOTPRINT_ENTRY
  int i = 0;
  while (i + 1 < HT_FOOTPRINT_COUNT &&
         (f->reach_left > list[i].left || f->reach_right > list[i].right || f->reach_down > list[i].down))
    i++;
  ht_footprint fp = list[i];
  fp.index = i;
  return fp;
}

/* A filter's weights as the dense box the kernels read:
 * q[dy][HT_FILTER_MAX_LEFT + dx], 0 where the filter has no tap. */
#define HT_BOX_WIDTH (HT_FILTER_MAX_LEFT + HT_FILTER_MAX_RIGHT + 1)
typedef struct {
  int32_t q[HT_FILTER_MAX_DOWN + 1][HT_BOX_WIDTH];
} ht_weight_box;

static inline void ht_weight_box_of(const ht_filter *f, ht_weight_box *box)
{
  for (int dy = 0; dy <= HT_FILTER_MAX_DOWN; dy++)
    for (int k = 0; k < HT_BOX_WIDTH; k++)
      box->q[dy][k] = 0;
  for (int t = 0; t < f->ntaps; t++)
    box->q[f->taps[t].dy][HT_FILTER_MAX_LEFT + f->taps[t].dx] = f->taps[t].q;
}

#endif

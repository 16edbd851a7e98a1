/* How far a search is, from its round and the fraction of that round:
 * the same figure on the CPU (core/search/schedule.c) and the GPU
 * (cuda/search/run.cu), so a front end's bar and time left mean the same
 * on both.
 *
 * Without a round limit the rounds take measured shares of the whole
 * (windows searched per round over all rounds; DBS on data/coffee.png,
 * LES m = 2 on data/sample.png: about 3.3 rounds' worth of windows in 9
 * rounds, the first 30 %, the second 28 %): the first round searches
 * every window, later ones only what the skip map left unsettled.
 * Rounds beyond the table halve what is left. With a limit, round r
 * covers (r .. r + 1) / max_rounds.
 *
 * Copyright (C) 2026 the GEGL Halftone authors. GPL-3.0-or-later.
 */
#ifndef HT_SHARED_SEARCH_PROGRESS_H
#define HT_SHARED_SEARCH_PROGRESS_H

#include <math.h>
#include <stdint.h>

/* done in 0..1 of `total` steps, never `total` itself (the run's end says
 * that) */
static inline int64_t ht_search_progress(int max_rounds, int round, double f, int64_t total)
{
  static const double share[] = { 0.30, 0.28, 0.21, 0.12, 0.055, 0.02, 0.008 };
  const int table = (int)(sizeof share / sizeof share[0]);
  double done;
  if (max_rounds)
    done = (round + f) / max_rounds;
  else {
    double before = 0.0, part;
    for (int r = 0; r < round && r < table; r++)
      before += share[r];
    if (round < table)
      part = share[round];
    else {
      before = 1.0 - ldexp(1.0 - before, -(round - table));
      part = 0.5 * (1.0 - before);
    }
    done = before + part * f;
  }
  int64_t v = (int64_t)(done * (double)total);
  return v < 0 ? 0 : v >= total ? total - 1 : v;
}

#endif

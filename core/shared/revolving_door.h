/* The combinations C(n, t) in revolving-door order: each differs from
 * the one before in two positions, one element out and one in (Knuth,
 * TAOCP 4A, 7.2.1.3, Algorithm R). PES lists its candidates this way
 * (Kouge et al., Sec. IV-C: "any two adjacent numbers in each resorted
 * list differ only at most two positions"), so that a step costs two
 * flips. The order is that of the recursive definition
 *   R(n, t) = R(n - 1, t), then R(n - 1, t - 1) reversed, each with n - 1,
 * which tests/core/test-search.c checks, with the two-position rule.
 * Header only, for the C tests and the CUDA PES kernel (cuda/search/pes.cu),
 * which sets HT_RD_MAX_N to its largest window. */
#ifndef HT_SEARCH_REVOLVING_DOOR_H
#define HT_SEARCH_REVOLVING_DOOR_H

#include <stdbool.h>
#include <stdint.h>

#if defined(__CUDACC__)
#define HT_RD_FN __host__ __device__ static inline
#else
#define HT_RD_FN static inline
#endif

#ifndef HT_RD_MAX_N
#define HT_RD_MAX_N 32 /* the largest n */
#endif

typedef struct {
  int n, t;
  int c[HT_RD_MAX_N + 2]; /* c[1..t] the elements, increasing; c[t + 1] = n */
} ht_rd;

/* The first combination, {0 .. t - 1}, as a bit mask (0 <= t <= n <=
 * HT_RD_MAX_N). */
HT_RD_FN uint32_t ht_rd_first(ht_rd *g, int n, int t)
{
  g->n = n;
  g->t = t;
  for (int j = 1; j <= t; j++)
    g->c[j] = j - 1;
  g->c[t + 1] = n;
  return t >= 32 ? 0xffffffffu : (1u << t) - 1;
}

/* The next combination: false after the last; else *out leaves and *in
 * enters. */
HT_RD_FN bool ht_rd_next(ht_rd *g, int *out, int *in)
{
  const int t = g->t;
  int *c = g->c, j;
  if (t == 0 || t == g->n)
    return false;
  if (t == 1) {
    if (c[1] + 1 >= g->n)
      return false;
    *out = c[1]++;
    *in = c[1];
    return true;
  }
  if (t & 1) { /* R3, odd t */
    if (c[1] + 1 < c[2]) {
      *out = c[1]++;
      *in = c[1];
      return true;
    }
    j = 2;
  } else { /* R3, even t */
    if (c[1] > 0) {
      *out = c[1]--;
      *in = c[1];
      return true;
    }
    j = 2;
    goto r5;
  }
  for (;;) {
    /* R4: c[j] = c[j - 1] + 1; try to decrease c[j] */
    if (c[j] >= j) {
      *out = c[j];
      *in = j - 2;
      c[j] = c[j - 1];
      c[j - 1] = j - 2;
      return true;
    }
    j++;
  r5: /* R5: c[j - 1] = j - 2; try to increase c[j] */
    if (c[j] + 1 < c[j + 1]) {
      *out = j - 2;
      *in = c[j] + 1;
      c[j - 1] = c[j];
      c[j]++;
      return true;
    }
    j++;
    if (j > t)
      return false;
  }
}

#endif

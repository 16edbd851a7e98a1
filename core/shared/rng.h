/* The one random-number generator of every backend: counter-based.
 *
 * A method that draws random numbers (a random initial halftone, weights
 * perturbed per pixel) asks for the number of (seed, plane, x, y, draw):
 * a pure function of where it is used, not of which thread, block or
 * process gets there first or how many numbers were drawn before. So the
 * sequential code, the threads, the CUDA kernels and the MPI ranks draw
 * the same numbers, and a band of an image draws what the whole image
 * draws there.
 *
 * The function is Philox4x32-10 (Salmon, Moraes, Dror, Shaw, "Parallel
 * Random Numbers: As Easy as 1, 2, 3", SC11): the counter is (x, y,
 * plane, draw), the key is the 64-bit seed. It passes TestU01's BigCrush,
 * needs only 32-bit multiplies (fast on the GPU), and its published
 * known answers are checked by tests/core/test-arith.c. docs/arithmetic.md
 * says how numbers are turned into choices.
 *
 * Included by C and by CUDA code (HT_FX_INLINE from fixed.h).
 */
#ifndef HT_RNG_H
#define HT_RNG_H

#include "fixed.h"

#include <stdint.h>

#define HT_PHILOX_M0 0xD2511F53u
#define HT_PHILOX_M1 0xCD9E8D57u
#define HT_PHILOX_W0 0x9E3779B9u /* key increments: the golden ratio, sqrt(3) - 1 */
#define HT_PHILOX_W1 0xBB67AE85u

/* Philox4x32 with 10 rounds, in place on ctr. */
HT_FX_INLINE void ht_philox4x32_10(uint32_t ctr[4], uint32_t k0, uint32_t k1)
{
  for (int r = 0; r < 10; r++) {
    if (r > 0) {
      k0 += HT_PHILOX_W0;
      k1 += HT_PHILOX_W1;
    }
    const uint64_t p0 = (uint64_t)HT_PHILOX_M0 * ctr[0];
    const uint64_t p1 = (uint64_t)HT_PHILOX_M1 * ctr[2];
    const uint32_t c1 = ctr[1], c3 = ctr[3];
    ctr[0] = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
    ctr[1] = (uint32_t)p1;
    ctr[2] = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
    ctr[3] = (uint32_t)p0;
  }
}

/* Four independent 32-bit numbers for (seed, plane, x, y, draw). x and y
 * are the pixel's column and row in the whole image; `draw` numbers the
 * blocks of four that one pixel may need. */
HT_FX_INLINE void ht_rng4(uint64_t seed, uint32_t plane, uint32_t x, uint32_t y, uint32_t draw, uint32_t out[4])
{
  out[0] = x;
  out[1] = y;
  out[2] = plane;
  out[3] = draw;
  ht_philox4x32_10(out, (uint32_t)seed, (uint32_t)(seed >> 32));
}

/* The first of them: one number per pixel and plane. */
HT_FX_INLINE uint32_t ht_rng(uint64_t seed, uint32_t plane, uint32_t x, uint32_t y)
{
  uint32_t r[4];
  ht_rng4(seed, plane, x, y, 0, r);
  return r[0];
}

/* A number in 0 .. n - 1 (n >= 1) from a 32-bit r: floor(r * n / 2^32),
 * with no division and the same on every backend. */
HT_FX_INLINE uint32_t ht_rng_below(uint32_t r, uint32_t n) { return (uint32_t)(((uint64_t)r * n) >> 32); }

/* A value 0 .. HT_FX_ONE from a 32-bit r (a threshold in the units of
 * fixed.h): floor(r * (HT_FX_ONE + 1) / 2^32). */
HT_FX_INLINE int32_t ht_rng_fx(uint32_t r) { return (int32_t)ht_rng_below(r, HT_FX_ONE + 1); }

#endif

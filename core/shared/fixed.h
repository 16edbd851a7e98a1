/* The one definition of the arithmetic every backend shares.
 *
 * Every error-diffusion backend (ED, EC, the register-caching forms, the
 * threaded wavefront, the CUDA kernels and the MPI tool) includes this
 * header and uses nothing else for pixel arithmetic, which is why they
 * give bit-identical output. docs/arithmetic.md explains the choices.
 *
 *  Values   int32, full scale HT_FX_ONE = 65535 (a 16-bit sample as is;
 *           an 8-bit sample v becomes v * 257, a float f becomes
 *           round(clamp(f, 0, 1) * 65535)).
 *  Weights  Q12: the weight num/den is stored as q = round(num*4096/den);
 *           custom filters get their rounding corrected so that the q
 *           sum equals round(sum(num)*4096/den) (largest remainders).
 *  Terms    the share of error e that one tap passes on is
 *           ht_fx_term(e, q) = floor((e * q + 2048) / 4096), computed with
 *           an arithmetic shift. Diffusion adds that term to the target;
 *           collection adds the same term at the target: integer sums do
 *           not depend on order, so both forms agree bit for bit.
 *  Levels   L evenly spaced levels; level i has value
 *           ht_fx_level(i, L) = floor((2*i*65535 + L - 1) / (2*(L - 1))).
 *  Rounding a value v goes to the nearest level; a value exactly halfway
 *           goes to the lower one (the paper's "a <= 1/2 -> 0").
 *  Edges    error pushed outside the image is dropped (Kasagi et al.
 *           Sec. II: the values outside are taken as zero).
 *  Range    custom weights are non-negative and sum to at most 1, so
 *           |e| stays near 65535 / 2 and e * q fits in 32 bits.
 */
#ifndef HT_FIXED_H
#define HT_FIXED_H

#include <stdint.h>

#define HT_FX_ONE 65535
#define HT_Q_BITS 12
#define HT_Q_ONE (1 << HT_Q_BITS)
#define HT_Q_HALF (1 << (HT_Q_BITS - 1))

/* Q12 weight of num/den, rounded half up: usable in constant tables. */
#define HT_Q(num, den) ((int32_t)((2 * (num) * HT_Q_ONE + (den)) / (2 * (den))))

#if defined(__CUDACC__)
#define HT_FX_INLINE __host__ __device__ static inline
#else
#define HT_FX_INLINE static inline
#endif

HT_FX_INLINE int32_t ht_fx_term(int32_t e, int32_t q)
{
  /* >> on a negative int is arithmetic on every compiler we target
   * (gcc, clang, nvcc); it is floor division by 4096. */
  return (e * q + HT_Q_HALF) >> HT_Q_BITS;
}

/* A Q12 weight q scaled by the strength s (Q12, 0..4096, ht_params
 * .strength): floor((q * s + 2048) / 4096). The host scales the filter's
 * and the inter-plane weights once per run, so every backend diffuses
 * with the same scaled integers; s = 4096 leaves q as it is, s = 0 makes
 * every weight 0 (plain rounding to the nearest level). */
HT_FX_INLINE int32_t ht_fx_scale_q(int32_t q, int32_t s) { return (q * s + HT_Q_HALF) >> HT_Q_BITS; }

/* The strength in Q12, rounded half up as the inter-plane weights are. */
#define HT_FX_STRENGTH_Q(strength) ((int32_t)((strength) * HT_Q_ONE + 0.5))

HT_FX_INLINE int32_t ht_fx_from_u8(uint8_t v) { return (int32_t)v * 257; }

HT_FX_INLINE int32_t ht_fx_level(int32_t i, int32_t levels)
{
  return (int32_t)((2 * (int64_t)i * HT_FX_ONE + levels - 1) / (2 * (int64_t)(levels - 1)));
}

/* Binary threshold: 1 (white) when v is above half of full scale. */
HT_FX_INLINE int32_t ht_fx_binary(int32_t v) { return v > HT_FX_ONE / 2; }

/* Nearest of `levels` levels (ties to the lower one), clamped. */
HT_FX_INLINE int32_t ht_fx_quantize(int32_t v, int32_t levels)
{
  if (v <= 0)
    return 0;
  int64_t q = (2 * (int64_t)v * (levels - 1) + HT_FX_ONE - 1) / (2 * (int64_t)HT_FX_ONE);
  return q > levels - 1 ? levels - 1 : (int32_t)q;
}

#endif

/* AVX2 pieces the SIMD kernels share: the gray wavefront's diagonal
 * kernel (diffusion/wavefront_diagonal.c) and the colour fast kernel
 * (color/pd_diagonal.c). Both keep one row of a band per lane and turn
 * row-major tiles into lane-major ones and back; include this only where
 * the x86 intrinsics are (those files' own checks). */
#ifndef HT_SIMD_H
#define HT_SIMD_H

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#define HT_AVX2_INLINE static inline __attribute__((always_inline, target("avx2")))

/* 8 x 8 int32 transpose in registers: r[k] holds row k (8 columns); o[c]
 * gets column c (r is overwritten). */
HT_AVX2_INLINE void ht_transpose8r(__m256i r[8], __m256i o[8])
{
  __m256i t[8];
  for (int k = 0; k < 8; k += 2) {
    t[k] = _mm256_unpacklo_epi32(r[k], r[k + 1]);
    t[k + 1] = _mm256_unpackhi_epi32(r[k], r[k + 1]);
  }
  for (int k = 0; k < 8; k += 4) {
    r[k] = _mm256_unpacklo_epi64(t[k], t[k + 2]);
    r[k + 1] = _mm256_unpackhi_epi64(t[k], t[k + 2]);
    r[k + 2] = _mm256_unpacklo_epi64(t[k + 1], t[k + 3]);
    r[k + 3] = _mm256_unpackhi_epi64(t[k + 1], t[k + 3]);
  }
  for (int k = 0; k < 4; k++) {
    o[k] = _mm256_permute2x128_si256(r[k], r[k + 4], 0x20);
    o[k + 4] = _mm256_permute2x128_si256(r[k], r[k + 4], 0x31);
  }
}

/* The same from src (row stride ss) to dst (row stride ds), both 32-byte
 * aligned. */
HT_AVX2_INLINE void ht_transpose8(const int32_t *src, size_t ss, int32_t *dst, size_t ds)
{
  __m256i r[8], o[8];
  for (int k = 0; k < 8; k++)
    r[k] = _mm256_load_si256((const __m256i *)(const void *)(src + (size_t)k * ss));
  ht_transpose8r(r, o);
  for (int k = 0; k < 8; k++)
    _mm256_store_si256((__m256i *)(void *)(dst + (size_t)k * ds), o[k]);
}

#endif

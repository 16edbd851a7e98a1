/* Helpers of the cuda suite (public API of core/halftone.h only). */
#ifndef HT_CUDA_TEST_H
#define HT_CUDA_TEST_H

#include "halftone.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SKIP 77

static int failures;

#define CHECK(cond, ...)                                                          \
  do {                                                                            \
    if (!(cond)) {                                                                \
      fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);    \
      fprintf(stderr, __VA_ARGS__);                                               \
      fputc('\n', stderr);                                                        \
      failures++;                                                                 \
    }                                                                             \
  } while (0)

static inline void *xmalloc(size_t n)
{
  void *p = malloc(n ? n : 1);
  if (!p) {
    fprintf(stderr, "out of memory (%zu bytes)\n", n);
    exit(99);
  }
  return p;
}

static inline uint64_t rng_next(uint64_t *s)
{
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 0x2545F4914F6CDD1DULL;
}

/* Noise, ramps and flat runs: errors of every sign and size. */
static inline void fill_random(uint8_t *p, size_t stride, int64_t w, int64_t h, int bytes, uint64_t seed)
{
  uint64_t s = seed * 0x9E3779B97F4A7C15ULL + 7;
  int mode = (int)(rng_next(&s) % 3);
  for (int64_t y = 0; y < h; y++)
    for (int64_t x = 0; x < w; x++) {
      uint64_t r = rng_next(&s);
      uint32_t v;
      if (mode == 0)
        v = (uint32_t)(r >> 48);
      else if (mode == 1)
        v = (uint32_t)((x * 65535 / (w > 1 ? w - 1 : 1) + (int64_t)(r >> 58) * 64 + y * 37) & 0xffff);
      else
        v = (r >> 60) < 3 ? (uint32_t)(r >> 48) : (uint32_t)((y * 7 + x / 13) * 1021 % 65536);
      uint8_t *row = p + (size_t)y * stride;
      if (bytes == 1)
        row[x] = (uint8_t)(v >> 8);
      else
        ((uint16_t *)(void *)row)[x] = (uint16_t)v;
    }
}

/* Binary 8-bit PGM (P5, maxval 255); NULL on failure. */
static inline uint8_t *read_pgm(const char *path, int64_t *w, int64_t *h)
{
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  int W = 0, H = 0, M = 0;
  uint8_t *p = NULL;
  if (fscanf(f, "P5 %d %d %d", &W, &H, &M) == 3 && M == 255 && W > 0 && H > 0 && fgetc(f) != EOF) {
    p = xmalloc((size_t)W * (size_t)H);
    if (fread(p, 1, (size_t)W * (size_t)H, f) != (size_t)W * (size_t)H) {
      free(p);
      p = NULL;
    }
  }
  fclose(f);
  *w = W;
  *h = H;
  return p;
}

#endif

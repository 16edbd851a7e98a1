/* Helpers shared by the C tests of the core and cuda suites (header
 * only): checks that count failures (ht-check.h), memory, deterministic
 * random images, a PGM reader and a progress watcher. */
#ifndef HT_TEST_H
#define HT_TEST_H

#include "halftone.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ht-check.h"

static inline void *xmalloc(size_t n)
{
  void *p = malloc(n ? n : 1);
  if (!p) {
    fprintf(stderr, "test: out of memory (%zu bytes)\n", n);
    exit(99); /* 99: hard error in Meson's test protocol */
  }
  return p;
}

/* A progress callback's record for the cancel tests: calls seen, the
 * call (1-based) on which to cancel (0: never), the last fraction and
 * whether one went back or left 0..1. */
typedef struct {
  int calls, cancel_at;
  double last;
  bool backwards;
} watch;

static inline bool on_progress(double fraction, void *user)
{
  watch *wt = (watch *)user;
  wt->calls++;
  if (fraction < wt->last || fraction < 0 || fraction > 1)
    wt->backwards = true;
  wt->last = fraction;
  return wt->cancel_at == 0 || wt->calls < wt->cancel_at;
}

/* xorshift64*: deterministic random numbers, no global state */
static inline uint64_t rng_next(uint64_t *s)
{
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 0x2545F4914F6CDD1DULL;
}

/* Random 16-bit plane mixing noise, smooth ramps and flat runs, so that
 * errors of every sign and size occur. */
static inline uint16_t *random_plane(int64_t w, int64_t h, uint64_t seed)
{
  uint16_t *p = xmalloc((size_t)(w * h) * sizeof *p);
  uint64_t s = seed * 0x9E3779B97F4A7C15ULL + 1;
  int mode = (int)(rng_next(&s) % 3);
  for (int64_t y = 0; y < h; y++)
    for (int64_t x = 0; x < w; x++) {
      uint64_t r = rng_next(&s);
      uint16_t v;
      if (mode == 0)
        v = (uint16_t)(r >> 48);
      else if (mode == 1)
        v = (uint16_t)((x * 65535 / (w > 1 ? w - 1 : 1) + (int64_t)(r >> 58) * 64 + y * 37) & 0xffff);
      else
        v = (uint16_t)((r >> 60) < 3 ? r >> 48 : (uint64_t)((y * 7 + x / 13) * 1021 % 65536));
      p[y * w + x] = v;
    }
  return p;
}

/* The same kinds of picture into a caller's buffer of 8-bit (bytes 1,
 * the high byte) or 16-bit samples. */
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

/* Reads a binary 8-bit PGM (P5, maxval 255). Returns NULL and prints
 * why on failure. */
static inline uint8_t *read_pgm(const char *path, int64_t *w, int64_t *h)
{
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "cannot open %s\n", path);
    return NULL;
  }
  char magic[3] = { 0 };
  long fw = 0, fh = 0, maxv = 0;
  int c;
  if (fread(magic, 1, 2, f) != 2 || strcmp(magic, "P5") != 0)
    goto bad;
  long *fields[3] = { &fw, &fh, &maxv };
  for (int i = 0; i < 3; i++) {
    c = fgetc(f);
    while (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '#') {
      if (c == '#')
        while (c != '\n' && c != EOF)
          c = fgetc(f);
      c = fgetc(f);
    }
    if (c < '0' || c > '9')
      goto bad;
    while (c >= '0' && c <= '9') {
      *fields[i] = *fields[i] * 10 + (c - '0');
      if (*fields[i] > 1000000)
        goto bad;
      c = fgetc(f);
    }
  }
  if (fw <= 0 || fh <= 0 || maxv != 255)
    goto bad;
  /* exactly one whitespace byte (already read into c) precedes the data */
  uint8_t *data = xmalloc((size_t)(fw * fh));
  if (fread(data, 1, (size_t)(fw * fh), f) != (size_t)(fw * fh)) {
    free(data);
    goto bad;
  }
  fclose(f);
  *w = fw;
  *h = fh;
  return data;
bad:
  fprintf(stderr, "%s is not an 8-bit binary PGM (P5, maxval 255)\n", path);
  fclose(f);
  return NULL;
}

/* The lists a test walks through are the library's (ht_choices), never a
 * count fixed at a version or a hand list of rows: a filter or an
 * implementation added to the library is tested by its row alone. */

/* The built-in filters: the entries of HT_LIST_FILTERS other than custom,
 * in the list's order. */
static inline int test_nbuiltin(void)
{
  int n, k = 0;
  const ht_choice *c = ht_choices(HT_LIST_FILTERS, &n);
  for (int i = 0; i < n; i++)
    k += c[i].value != HT_FILTER_CUSTOM;
  return k;
}

/* The i-th of them, 0 <= i < test_nbuiltin(). */
static inline const ht_filter *test_builtin(int i)
{
  int n;
  const ht_choice *c = ht_choices(HT_LIST_FILTERS, &n);
  for (int k = 0; k < n; k++)
    if (c[k].value != HT_FILTER_CUSTOM && i-- == 0) {
      const ht_filter *f = ht_filter_builtin((ht_filter_id)c[k].value);
      if (!f) {
        fprintf(stderr, "the filter list's %s (%d) is no built-in filter\n", c[k].name, c[k].value);
        exit(1);
      }
      return f;
    }
  fprintf(stderr, "test_builtin(%d): the list has %d built-in filters\n", i, test_nbuiltin());
  exit(99);
}

/* The filters a test walks through: every built-in one, then the test's
 * own custom texts. */
static inline int test_nfilters(int ncustom) { return test_nbuiltin() + ncustom; }

static inline ht_filter test_filter_at(int i, const char *const *customs)
{
  const int nb = test_nbuiltin();
  ht_filter f;
  if (i < nb) {
    f = *test_builtin(i);
  } else {
    char err[256];
    ht_status s = ht_filter_parse(customs[i - nb], &f, err, sizeof err);
    CHECK(s == HT_OK, "custom filter %d: %s", i, err);
  }
  return f;
}

/* The implementations of HT_LIST_VARIANTS (auto left out) that compute
 * `method` on `backend`, in the list's order: the first `max` into vs;
 * returns how many there are. */
#define TEST_MAX_VARIANTS 64
static inline int test_variants(ht_method method, ht_backend backend, ht_variant *vs, int max)
{
  int n, k = 0;
  const ht_choice *c = ht_choices(HT_LIST_VARIANTS, &n);
  for (int i = 0; i < n; i++) {
    const ht_variant v = (ht_variant)c[i].value;
    if (v == HT_VARIANT_AUTO || ht_variant_backend(v) != backend || ht_variant_method(v) != (int)method)
      continue;
    if (k < max)
      vs[k] = v;
    k++;
  }
  return k;
}

#endif

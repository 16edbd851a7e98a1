/* The checks of the C and CUDA tests (tests/include/ht-test.h, and
 * tests/cuda/test-arith.cu, which nvcc compiles as C++): a failed check
 * prints where and why and counts; test_finish gives the exit status. */
#ifndef HT_CHECK_H
#define HT_CHECK_H

#include <stdio.h>

#define SKIP 77

static int test_failures;

#define CHECK(cond, ...)                                                     \
  do {                                                                       \
    if (!(cond)) {                                                           \
      fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                          \
      fputc('\n', stderr);                                                   \
      test_failures++;                                                       \
    }                                                                        \
  } while (0)

/* Exits 1 when a check failed; prints a summary line either way. */
static inline int test_finish(const char *name)
{
  if (test_failures) {
    fprintf(stderr, "%s: %d check(s) failed\n", name, test_failures);
    return 1;
  }
  printf("%s: all checks passed\n", name);
  return 0;
}

#endif

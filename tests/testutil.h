/* Minimal assertion helpers: each EXPECT counts; main returns test_report(). */
#ifndef CUSP_TESTUTIL_H
#define CUSP_TESTUTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int tu_pass, tu_fail;

#define EXPECT(cond, ...)                                                 \
  do {                                                                    \
    if (cond) {                                                           \
      tu_pass++;                                                          \
    } else {                                                              \
      tu_fail++;                                                          \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                \
      fprintf(stderr, __VA_ARGS__);                                       \
      fprintf(stderr, "\n");                                              \
    }                                                                     \
  } while (0)

static inline double tu_maxabs(const double *a, int n) {
  double m = 0;
  for (int i = 0; i < n; i++) m = fmax(m, fabs(a[i]));
  return m;
}

/* |a - b|inf / max(|b|inf, floor). */
static inline double tu_relerr(const double *a, const double *b, int n, double floor) {
  double d = 0;
  for (int i = 0; i < n; i++) d = fmax(d, fabs(a[i] - b[i]));
  return d / fmax(tu_maxabs(b, n), floor);
}

/* Deterministic uniform in [-1, 1] from the xorshift state *s (nonzero):
 * a test that owns its state draws the same numbers whatever ran before. */
static inline double tu_rand_r(unsigned long long *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return (double)(*s >> 11) / (double)(1ull << 53) * 2 - 1;
}

/* Deterministic uniform in [-1, 1], one sequence shared by the whole
 * program: what a test draws depends on what ran before it. */
static inline double tu_rand(void) {
  static unsigned long long s = 0x9E3779B97F4A7C15ull;
  return tu_rand_r(&s);
}

static inline int test_report(const char *name) {
  printf("%s: %d passed, %d failed\n", name, tu_pass, tu_fail);
  return tu_fail ? 1 : 0;
}

#endif

/* Small helpers shared by the command-line programs (apps/ and bench/). */
#ifndef CUSP_CLI_UTIL_H
#define CUSP_CLI_UTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Writes s as a JSON string (escaping quotes, backslashes, control chars). */
static inline void json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\')
      fprintf(f, "\\%c", ch);
    else if (ch < 0x20)
      fprintf(f, "\\u%04x", ch);
    else
      fputc(ch, f);
  }
  fputc('"', f);
}

/* A number on stdout as JSON, exactly (17 digits); JSON has no inf or nan:
 * they become null. */
static inline void json_number(double x) {
  if (isfinite(x)) printf("%.17g", x);
  else printf("null");
}

static inline void json_array(const double *x, int n) {
  putchar('[');
  for (int i = 0; i < n; i++) {
    if (i) printf(", ");
    json_number(x[i]);
  }
  putchar(']');
}

/* The whole of s as a finite number > 0; returns 0, or -1 leaving out alone. */
static inline int parse_positive(const char *s, double *out) {
  char *end;
  double x = strtod(s, &end);
  if (end == s || *end || !isfinite(x) || x <= 0) return -1;
  *out = x;
  return 0;
}

/* Monotonic wall clock, seconds. */
static inline double wall_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static inline int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Linear-interpolated quantile of a sorted array (NAN when empty). */
static inline double quantile(const double *x, int n, double p) {
  if (n <= 0) return NAN;
  double r = p * (n - 1);
  int i = (int)floor(r);
  if (i >= n - 1) return x[n - 1];
  return x[i] + (r - i) * (x[i + 1] - x[i]);
}

#endif

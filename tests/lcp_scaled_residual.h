/* Dumped contact LCPs read, and an answer checked from the data alone,
 * independently of the library's own acceptance test (sb_lcp_check):
 * shared by the tests of Lemke on dumped contact LCPs. */
#ifndef CUSP_LCP_SCALED_RESIDUAL_H
#define CUSP_LCP_SCALED_RESIDUAL_H

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "lcp.h"

#ifndef CUSP_LCP_DATA
#define CUSP_LCP_DATA "tests/data/lcp"
#endif

/* The dump NAME in $CUSP_LCP_DATA (else CUSP_LCP_DATA): n, M, q (the
 * caller frees them) and qs = max(1, max_i |q_i|). 0, or -1 with the
 * reader's message in error. */
static inline int read_dumped_lcp(const char *name, int *n, double **M, double **q, double *qs, char *error,
                                  int error_size) {
  const char *dir = getenv("CUSP_LCP_DATA") && *getenv("CUSP_LCP_DATA") ? getenv("CUSP_LCP_DATA") : CUSP_LCP_DATA;
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  if (sb_lcp_read_dat(path, n, M, q, error, error_size)) return -1;
  *qs = 1;
  for (int i = 0; i < *n; i++) *qs = fabs((*q)[i]) > *qs ? fabs((*q)[i]) : *qs;
  return 0;
}

/* max_i |min(z_i, w_i)| / max(qs, s_i) in long double, w_i and
 * s_i = |q_i| + sum_j |M_ij z_j| summed in long double; -1 when z < 0. */
static inline double scaled_residual(int n, const double *M, const double *q, const double *z, double qs) {
  double worst = 0;
  for (int i = 0; i < n; i++) {
    if (z[i] < 0) return -1;
    long double w = q[i], s = fabsl((long double)q[i]);
    for (int j = 0; j < n; j++) {
      long double t = (long double)M[(size_t)j * n + i] * z[j];
      w += t;
      s += fabsl(t);
    }
    long double m = (long double)z[i] < w ? (long double)z[i] : w;
    double r = (double)(fabsl(m) / (s > qs ? s : qs));
    worst = r > worst ? r : worst;
  }
  return worst;
}

#endif

/* An LCP answer checked from the data alone, independently of the
 * library's own acceptance test (sb_lcp_check): shared by the tests of
 * Lemke on dumped contact LCPs. */
#ifndef CUSP_LCP_SCALED_RESIDUAL_H
#define CUSP_LCP_SCALED_RESIDUAL_H

#include <math.h>
#include <stddef.h>

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

/* Points of the ball-rotation MPCC off its rest guess, shared by the tests
 * that compare its derivatives with differences. */
#ifndef PLAN_MPCC_POINTS_H
#define PLAN_MPCC_POINTS_H
#include <stdlib.h>

#include "mpcc.h"
#include "testutil.h"

/* One knot's state S = [q, v, omega, quat] moved by tu_rand draws. */
static inline void move_state(double *s, int n) {
  for (int i = 0; i < n; i++) { s[i] += 0.01 * tu_rand(); s[n + i] = 0.2 * tu_rand(); }
  for (int i = 0; i < 3; i++) s[2 * n + i] = tu_rand();
  for (int i = 0; i < 4; i++) s[2 * n + 3 + i] += 0.1 * tu_rand();
}

/* A fixed point (tu_rand's seed) off rest. The contact geometry is smoothed at a scale of 1e-6
 * (EPS_SDF: the capped cylinder's rim and faces), where second differences mean nothing; this point
 * keeps the disk away from those kinks (a draw of S_0 before the later knots' put one step's
 * disk near one: entries of 1e7 on both sides). S_0 is moved too, so that v_k != 0 in every step
 * (the Hessian does not look at the bounds). The caller frees it. */
static inline double *point_off_rest(plan_mpcc *p, const plan_mpcc_params *P) {
  int n = plan_mpcc_n(p), B = plan_mpcc_block(p);
  double *z = malloc(sizeof(double) * plan_mpcc_nvars(p));
  plan_mpcc_rest_guess(p, z);
  for (int k = 1; k <= P->N; k++) move_state(z + (size_t)k * B, n);
  for (int k = 0; k < P->N; k++)
    for (int i = 2 * n + 7; i < B; i++) z[(size_t)k * B + i] = 1 + tu_rand();   /* tau, fz, ft, gamma, zeta */
  move_state(z, n);
  return z;
}
#endif

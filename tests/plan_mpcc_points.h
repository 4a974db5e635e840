/* Points of the ball-rotation MPCC off its rest guess, shared by the tests
 * that compare its derivatives with differences. */
#ifndef PLAN_MPCC_POINTS_H
#define PLAN_MPCC_POINTS_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
/* The dynamic stage's Hessian of one step against second differences, one
 * group of rows at a time (in mpcc.h's order), so that a wrong small term
 * cannot hide behind another group's large ones. */
static inline void expect_hessian_by_row_groups(plan_mpcc *p, const plan_mpcc_params *P, const double *z) {
  int n = plan_mpcc_n(p), d = P->d, m = plan_mpcc_nconstraints(p, 1);
  int o = 2 * n + 7;   /* arm, q update, ball, quaternion; then gap, gap fz, cone, cone gamma, slips, ft slips,
                          (contact at the start) margin */
  struct { const char *name; int first, count; } group[] = {
      {"arm's implicit step", 0, n}, {"ball's rotation", 2 * n, 3}, {"quaternion update", 2 * n + 3, 4},
      {"gap", o, 1}, {"gap fz", o + 1, 1}, {"cone gamma", o + 3, 1}, {"slips", o + 4, d}, {"ft slips", o + 4 + d, d},
      {"margin (contact at the start)", o + 4 + 2 * d, P->contact_at_start && P->margin_rows != PLAN_MARGIN_OFF ? 1 : 0}};
  double *lambda = malloc(sizeof(double) * m);
  for (size_t g = 0; g < sizeof group / sizeof group[0]; g++) {
    if (!group[g].count) continue;
    memset(lambda, 0, sizeof(double) * m);
    for (int i = 0; i < group[g].count; i++) lambda[group[g].first + i] = 1 + tu_rand();
    double e = plan_mpcc_hessian_error(p, z, lambda, 0, 1);
    EXPECT(e < 1e-3, "the %s rows' Hessian vs second differences: %g", group[g].name, e);
    printf("the %s rows alone: Hessian vs second differences %.3g\n", group[g].name, e);
  }
  free(lambda);
}
/* The same, on a problem of one step (N = 1, T = 0.04) with P's other parameters. Returns 0, or -1
 * when the problem cannot be made (an EXPECT has failed then). */
static inline int expect_one_step_hessian_by_row_groups(plan_mpcc_params P) {
  P.N = 1;
  P.T = 0.04;
  char err[256];
  plan_mpcc *p = plan_mpcc_create(&P, err, sizeof err);
  EXPECT(p != NULL, "create (one step): %s", err);
  if (!p) return -1;
  double *z = point_off_rest(p, &P);
  expect_hessian_by_row_groups(p, &P, z);
  free(z);
  plan_mpcc_free(p);
  return 0;
}
#endif

/* The MPCC's Hessian of the Lagrangian (exact_hessian): the matrix IPOPT
 * gets, assembled from its triplets, against second differences of
 * sigma f + lambda . g computed from the plain constraint rows, over every
 * pair of variables of a 2-step instance at a point off rest (moving arm,
 * spinning ball, forces in every direction), random multipliers, both
 * stages, and the objective's part alone (lambda = 0). A wrong block, a missing entry in the pattern or a wrong
 * symmetrization shows as a difference of order one. */
#include <string.h>

#include "mpcc.h"
#include "testutil.h"

int main(void) {
  plan_mpcc_params P = plan_mpcc_rotate_task(0);
  P.N = 2;
  P.T = 0.08;
  P.angle = 0.1;
  char err[256];
  plan_mpcc *p = plan_mpcc_create(&P, err, sizeof err);
  EXPECT(p != NULL, "create: %s", err);
  if (!p) return test_report("plan_mpcc_hessian");
  int nv = plan_mpcc_nvars(p), n = plan_mpcc_n(p), B = plan_mpcc_block(p);
  double *z = malloc(sizeof(double) * nv);
  plan_mpcc_rest_guess(p, z);
  for (int k = 1; k * B < nv; k++) {
    double *s = z + (size_t)k * B;
    for (int i = 0; i < n; i++) { s[i] += 0.01 * tu_rand(); s[n + i] = 0.2 * tu_rand(); }
    for (int i = 0; i < 3; i++) s[2 * n + i] = tu_rand();
    for (int i = 0; i < 4; i++) s[2 * n + 3 + i] += 0.1 * tu_rand();
  }
  for (int k = 0; k < P.N; k++)
    for (int i = 2 * n + 7; i < B; i++) z[(size_t)k * B + i] = 1 + tu_rand();   /* tau, fz, ft, gamma, zeta */
  for (int dynamic = 0; dynamic < 2; dynamic++) {
    int m = plan_mpcc_nconstraints(p, dynamic);
    double *lambda = malloc(sizeof(double) * m);
    for (int i = 0; i < m; i++) lambda[i] = tu_rand();
    double e = plan_mpcc_hessian_error(p, z, lambda, 0.7, dynamic);
    EXPECT(e < 1e-3, "%s stage: Hessian of the Lagrangian vs second differences: %g",
           dynamic ? "dynamic" : "kinematic", e);
    printf("%s stage: Hessian vs second differences %.3g\n", dynamic ? "dynamic" : "kinematic", e);
    /* the objective's part alone (its entries are small beside the constraints') */
    memset(lambda, 0, sizeof(double) * m);
    e = plan_mpcc_hessian_error(p, z, lambda, 1.0, dynamic);
    EXPECT(e < 1e-3, "%s stage: the objective's Hessian vs second differences: %g", dynamic ? "dynamic" : "kinematic", e);
    printf("%s stage: objective's Hessian vs second differences %.3g\n", dynamic ? "dynamic" : "kinematic", e);
    free(lambda);
  }
  free(z);
  plan_mpcc_free(p);
  return test_report("plan_mpcc_hessian");
}

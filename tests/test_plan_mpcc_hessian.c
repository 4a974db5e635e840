/* The MPCC's Hessian of the Lagrangian (exact_hessian): the matrix IPOPT
 * gets, assembled from its triplets, against second differences of
 * sigma f + lambda . g computed from the plain constraint rows, over every
 * pair of variables at a point off rest (moving arm, spinning ball, forces
 * in every direction):
 *  - a 2-step instance with random multipliers on every row, both stages,
 *    and the objective's part alone (lambda = 0): a wrong block, an entry
 *    missing from the pattern or a step's states shared wrongly with the
 *    next show as a difference of order one;
 *  - a 1-step instance, one group of rows at a time (the arm's implicit
 *    step, the ball's rotation, the quaternion update, the gap and its
 *    product with fz, the cone's product with gamma, the slips and their
 *    products with ft): each group's terms measured against that group's
 *    own scale, so a wrong small term (the gap's coupling of q_{k+1} with fz
 *    beside the arm's 1e4 entries) cannot hide behind the large ones. */
#include <string.h>

#include "mpcc.h"
#include "plan_mpcc_points.h"
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
  double *z = point_off_rest(p, &P);
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
  plan_mpcc_free(p);

  /* the penalty form (the products' sum as one row per step, rho zeta in the objective: the last
     solve of penalty_from) and a terminal weight other than the paper's, at the same point (the
     variables are the same; another draw could put the disk near a kink) */
  P.penalty = 100;
  P.terminal_weight = 1000;
  p = plan_mpcc_create(&P, err, sizeof err);
  EXPECT(p != NULL, "create: %s", err);
  if (!p) return test_report("plan_mpcc_hessian");
  for (int dynamic = 0; dynamic < 2; dynamic++) {
    int m = plan_mpcc_nconstraints(p, dynamic);
    double *lambda = malloc(sizeof(double) * m);
    for (int i = 0; i < m; i++) lambda[i] = tu_rand();
    double e = plan_mpcc_hessian_error(p, z, lambda, 0.7, dynamic);
    EXPECT(e < 1e-3, "penalty form, %s stage: Hessian vs second differences: %g", dynamic ? "dynamic" : "kinematic", e);
    printf("penalty form, terminal weight 1000, %s stage: Hessian vs second differences %.3g\n",
           dynamic ? "dynamic" : "kinematic", e);
    free(lambda);
  }
  free(z);
  plan_mpcc_free(p);
  P.penalty = 0;
  P.terminal_weight = 100;

  /* one step, one group of rows at a time, in mpcc.h's order */
  expect_one_step_hessian_by_row_groups(P);
  return test_report("plan_mpcc_hessian");
}

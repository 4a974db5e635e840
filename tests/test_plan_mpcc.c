/* The ball-rotation MPCC on a short horizon: IPOPT's optimality status, and
 * independent checks of the answer: the arm's motion replayed step by step
 * with the simulator's integrator (sb_step_prepare / commit), the
 * complementarity and Scholtes products recomputed from the contact
 * geometry, the unit quaternion; the objective's gradient against
 * differences; the inverse-dynamics warm start against sb_step. */
#include <string.h>

#include "mpcc.h"
#include "testutil.h"

static plan_mpcc_params small_task(void) {
  plan_mpcc_params P = plan_mpcc_rotate_task(0);
  P.N = 5;
  P.T = 0.2;         /* the paper's step, h = 0.04 s */
  P.angle = 0.2;     /* reachable in 5 steps */
  P.eps = 1e-7;      /* the paper's relaxation, reached by the homotopy from eps_start = 1e-3 */
  P.tol = 1e-6;
  P.max_iter = 400;
  P.max_iter_kinematic = 200;
  P.acceptable_tol = 0;   /* IPOPT's defaults: the test requires full success (status 0) */
  P.acceptable_iter = 0;
  P.lbfgs_memory = 6;  /* IPOPT's default: fewer iterations than the task's 20 on this short instance */
  return P;
}

static void test_gradient(plan_mpcc *p, const double *z0) {
  int nv = plan_mpcc_nvars(p);
  double *z = malloc(sizeof(double) * nv), *g = malloc(sizeof(double) * nv);
  memcpy(z, z0, sizeof(double) * nv);
  for (int i = 0; i < nv; i++) z[i] += 0.01 * tu_rand();
  plan_mpcc_objective(p, z, g);
  double worst = 0;
  for (int i = 0; i < nv; i++) {
    double x0 = z[i], dx = 1e-6;
    z[i] = x0 + dx;
    double fp = plan_mpcc_objective(p, z, NULL);
    z[i] = x0 - dx;
    double fm = plan_mpcc_objective(p, z, NULL);
    z[i] = x0;
    worst = fmax(worst, fabs((fp - fm) / (2 * dx) - g[i]) / fmax(1, fabs(g[i])));
  }
  EXPECT(worst < 1e-6, "objective gradient vs central differences: %g", worst);
  free(z);
  free(g);
}

/* The Jacobian's shortcuts (terms shared across columns, nu's linear columns
 * from the disk point's Jacobian) against plain differences of every row, at a
 * point off rest: moving arm, spinning ball, forces in every direction. */
static void test_jacobian(plan_mpcc *p, const double *z0) {
  int nv = plan_mpcc_nvars(p), n = plan_mpcc_n(p), B = plan_mpcc_block(p);
  double *z = malloc(sizeof(double) * nv);
  memcpy(z, z0, sizeof(double) * nv);
  for (int k = 1; k * B < nv; k++) {
    double *s = z + (size_t)k * B;
    for (int i = 0; i < n; i++) { s[i] += 0.01 * tu_rand(); s[n + i] = 0.2 * tu_rand(); }
    for (int i = 0; i < 3; i++) s[2 * n + i] = tu_rand();
    if ((k + 1) * B <= nv)
      for (int i = 2 * n + 7; i < B; i++) s[i] = 1 + tu_rand();   /* tau, fz, ft, gamma, zeta */
  }
  for (int dynamic = 0; dynamic < 2; dynamic++) {
    double e = plan_mpcc_jacobian_error(p, z, dynamic);
    EXPECT(e < 1e-6, "%s stage: Jacobian vs differences of the rows: %g", dynamic ? "dynamic" : "kinematic", e);
  }
  free(z);
}

/* The dynamic stage from z (the kinematic stage's answer, tau by inverse dynamics): IPOPT's
 * status, and the answer checked independently. */
static void check_dynamic_stage(plan_mpcc *p, const plan_mpcc_params *Pp, double *z, const char *hessian) {
  plan_mpcc_params P = *Pp;
  double gap, fz;
  plan_mpcc_stage dyn;
  int rc = plan_mpcc_solve(p, 1, z, &dyn);
  printf("%s: dynamic: status %d, %d iterations, %.2f s, quaternion error %.3g, complementarity %.3g\n", hessian,
         dyn.status, dyn.iterations, dyn.solve_s, dyn.quaternion_error, dyn.complementarity);
  /* Solve_Succeeded: the KKT conditions hold to tol, the rows to eps / 10 */
  EXPECT(rc == 0 && dyn.status == 0, "%s: dynamic stage: IPOPT status %d (0: optimal)", hessian, dyn.status);
  double r = plan_mpcc_step_residual(p, z);
  EXPECT(r < 1e-7, "planned motion vs sb_step: residual %g", r);
  EXPECT(dyn.constraint_violation < 1e-6, "constraint violation %g", dyn.constraint_violation);
  /* complementarity recomputed: every product within eps, no side negative beyond tolerance */
  double worst_product = 0, most_negative = 0, max_force = 0;
  for (int k = 0; k < P.N; k++) {
    plan_mpcc_contact(p, z, k, &gap, &fz, NULL);
    worst_product = fmax(worst_product, gap * fz);
    most_negative = fmin(most_negative, fmin(gap, fz));
    max_force = fmax(max_force, fz);
  }
  /* IPOPT holds the rows to constr_viol_tol = eps / 10 */
  EXPECT(worst_product <= 1.1 * P.eps * (1 + 1e-9), "gap * fz = %g > 1.1 eps = %g", worst_product, 1.1 * P.eps);
  EXPECT(most_negative > -1e-6, "a gap or normal force is negative: %g", most_negative);
  double prod;
  plan_mpcc_complementarity_measures(p, z, &prod);
  EXPECT(prod <= 1.1 * P.eps * (1 + 1e-9), "largest complementarity product %g > 1.1 eps %g", prod, 1.1 * P.eps);
  EXPECT(dyn.complementarity < sqrt(P.eps), "complementarity %g above sqrt(eps)", dyn.complementarity);
  EXPECT(prod <= 1e-6, "complementarity products %g above the issue's 1e-6", prod);
  EXPECT(dyn.homotopy_steps == 5, "%d relaxations (1e-3 .. 1e-7: 5)", dyn.homotopy_steps);
  EXPECT(max_force > 0.01, "the disk never pushes the ball (max fz %g)", max_force);
  /* the ball turned towards the target: better than not moving at all (error sin^2(angle/2)) */
  double still = sin(0.5 * P.angle) * sin(0.5 * P.angle);
  EXPECT(dyn.quaternion_error < 0.1 * still, "quaternion error %g vs %g without motion", dyn.quaternion_error, still);
  /* unit quaternion along the plan */
  int n = plan_mpcc_n(p), B = plan_mpcc_block(p);
  double qn = 0;
  for (int i = 0; i < 4; i++) qn += z[(size_t)P.N * B + 2 * n + 3 + i] * z[(size_t)P.N * B + 2 * n + 3 + i];
  EXPECT(fabs(qn - 1) < 1e-8, "|quat_N|^2 = %.12g", qn);
}

/* Each relaxation reports the form it was solved in: the penalty form's
 * rho throughout when it is the only form, Scholtes' (0) down to
 * penalty_from and rho for the last solve when both are asked. */
static void test_relaxation_forms(void) {
  for (int hybrid = 0; hybrid < 2; hybrid++) {
    plan_mpcc_params P = small_task();
    P.penalty = 100;
    if (hybrid) P.penalty_from = 1e-5;
    P.max_iter_relaxed = 10; /* what is checked is what each solve reports, not where it got */
    P.max_iter_kinematic = 100;
    char err[256];
    plan_mpcc *p = plan_mpcc_create(&P, err, sizeof err);
    EXPECT(p != NULL, "create with penalty %g: %s", P.penalty, err);
    if (!p) continue;
    double *z = malloc(sizeof(double) * plan_mpcc_nvars(p));
    plan_mpcc_rest_guess(p, z);
    plan_mpcc_stage kin;
    plan_mpcc_solve(p, 0, z, &kin);
    int nr = kin.homotopy_steps < PLAN_MPCC_MAX_RELAXATIONS ? kin.homotopy_steps : PLAN_MPCC_MAX_RELAXATIONS;
    EXPECT(nr >= (hybrid ? 2 : 1), "%s: %d relaxations recorded", hybrid ? "penalty_from" : "penalty", nr);
    for (int i = 0; i < nr; i++) {
      double want = !hybrid || i == nr - 1 ? P.penalty : 0;
      EXPECT(kin.relaxation[i].penalty == want, "%s: relaxation %d of %d (eps %g) reports penalty %g, solved with %g",
             hybrid ? "penalty_from" : "penalty", i, nr, kin.relaxation[i].eps, kin.relaxation[i].penalty, want);
    }
    free(z);
    plan_mpcc_free(p);
  }
}

int main(void) {
  plan_mpcc_params P = small_task();
  char err[256];
  plan_mpcc *p = plan_mpcc_create(&P, err, sizeof err);
  EXPECT(p != NULL, "create: %s", err);
  if (!p) return test_report("plan_mpcc");
  int nv = plan_mpcc_nvars(p);
  double *z = malloc(sizeof(double) * nv);
  plan_mpcc_rest_guess(p, z);
  test_gradient(p, z);
  test_jacobian(p, z);
  double gap, fz;
  plan_mpcc_contact(p, z, 0, &gap, &fz, NULL);
  EXPECT(gap > 0.015 && gap < 0.025, "rest gap %g: the disk hangs about 2 cm from the ball", gap);

  plan_mpcc_stage kin;
  plan_mpcc_solve(p, 0, z, &kin);
  printf("kinematic: status %d, %d iterations, %.2f s, quaternion error %.3g\n", kin.status,
         kin.iterations, kin.solve_s, kin.quaternion_error);
  /* the warm start's controls make every arm step exact under sb_step */
  plan_mpcc_inverse_dynamics(p, z);
  double r0 = plan_mpcc_step_residual(p, z);
  EXPECT(r0 < 1e-12, "inverse dynamics vs sb_step: residual %g", r0);

  double *z_warm = malloc(sizeof(double) * nv);
  memcpy(z_warm, z, sizeof(double) * nv);
  check_dynamic_stage(p, &P, z, "L-BFGS");
  /* the same warm start with the exact Hessian of the Lagrangian in every relaxation */
  plan_mpcc_free(p);
  P.exact_hessian = 1;
  p = plan_mpcc_create(&P, err, sizeof err);
  EXPECT(p != NULL, "create: %s", err);
  if (p) check_dynamic_stage(p, &P, z_warm, "exact Hessian");
  free(z_warm);
  free(z);
  plan_mpcc_free(p);
  test_relaxation_forms();
  return test_report("plan_mpcc");
}

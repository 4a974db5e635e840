/* The paper's two-stage warm start (plan_mpcc_params.kinematic_effort): the
 * kinematic stage's effort term against differences (gradient, and the
 * Lagrangian's Hessian with it), and the two stages on a short horizon
 * about x with the simulator's contact, where the kinematic stage without
 * the effort wanders to its cap (its inverse dynamics' controls every one
 * beyond the bound) and the dynamic stage from it ends with complementarity
 * 8e-5 (docs/planning.md, session 19). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpcc.h"
#include "testutil.h"

static plan_mpcc_params short_task(void) {
  plan_mpcc_params P = plan_mpcc_rotate_task(0);
  P.N = 10;
  P.T = 0.4;
  P.angle = 0.15;
  P.contact_at_start = 1;
  P.max_iter_kinematic = 1000;
  P.max_iter_relaxed = 60;
  P.exact_hessian = 2;
  P.kinematic_effort = 1;
  P.polish = 1;   /* as cusp-plan */
  return P;
}

/* The objective's gradient in the kinematic stage (the effort included) against central differences. */
static void test_effort_gradient(void) {
  plan_mpcc_params P = short_task();
  P.N = 3;
  char err[256];
  plan_mpcc *p = plan_mpcc_create(&P, err, sizeof err);
  EXPECT(p != NULL, "create: %s", err);
  if (!p) return;
  int nv = plan_mpcc_nvars(p);
  double *z = malloc(sizeof(double) * nv), *g = malloc(sizeof(double) * nv);
  plan_mpcc_rest_guess(p, z);
  for (int i = 0; i < nv; i++) z[i] += 0.01 * tu_rand();
  /* the stage is set by a call that names it (plan_mpcc_step_rows: kinematic) */
  double r[256];
  plan_mpcc_step_rows(p, z, 0, 0, r);
  double f0 = plan_mpcc_objective(p, z, g), worst = 0;
  for (int i = 0; i < nv; i++) {
    double s = 1e-6 * (1 + fabs(z[i])), zi = z[i];
    z[i] = zi + s;
    double fp = plan_mpcc_objective(p, z, NULL);
    z[i] = zi - s;
    double fm = plan_mpcc_objective(p, z, NULL);
    z[i] = zi;
    double fd = (fp - fm) / (2 * s);
    worst = fmax(worst, fabs(g[i] - fd) / fmax(1, fabs(fd)));
  }
  EXPECT(worst < 1e-6, "kinematic objective's gradient vs differences: %g (objective %g)", worst, f0);
  /* the effort prices the arm's motion: moving one velocity of a middle knot costs */
  int B = plan_mpcc_block(p), n = plan_mpcc_n(p);
  plan_mpcc_params Q = P;
  Q.kinematic_effort = 0;
  plan_mpcc *q = plan_mpcc_create(&Q, err, sizeof err);
  EXPECT(q != NULL, "create: %s", err);
  if (q) {
    plan_mpcc_step_rows(q, z, 0, 0, r);
    double with = plan_mpcc_objective(p, z, NULL), without = plan_mpcc_objective(q, z, NULL);
    z[B + n] += 0.05;
    double dwith = plan_mpcc_objective(p, z, NULL) - with, dwithout = plan_mpcc_objective(q, z, NULL) - without;
    EXPECT(dwith > 100 * fabs(dwithout), "a velocity's change costs %g with the effort, %g without", dwith, dwithout);
    plan_mpcc_free(q);
  }
  /* the objective's part of the Hessian IPOPT gets (the effort's block among the others): zero multipliers */
  int m = plan_mpcc_nconstraints(p, 0);
  double *lambda = calloc((size_t)m, sizeof(double));
  double herr = plan_mpcc_hessian_gradient_error(p, z, lambda, 0.7, 0, 1e-6);
  EXPECT(herr < 1e-4, "kinematic stage's Hessian (effort included) vs the gradient's differences: %g", herr);
  free(lambda);
  free(z);
  free(g);
  plan_mpcc_free(p);
}

/* The two stages as cusp-plan --warm runs them. Returns the dynamic stage's plan_mpcc_solve code. */
static int warm_start(const plan_mpcc_params *P, plan_mpcc_stage *kin, plan_mpcc_stage *dyn, double *max_tau) {
  char err[256];
  plan_mpcc *p = plan_mpcc_create(P, err, sizeof err);
  EXPECT(p != NULL, "create: %s", err);
  if (!p) return -2;
  int nv = plan_mpcc_nvars(p), n = plan_mpcc_n(p), B = plan_mpcc_block(p);
  double *z = malloc(sizeof(double) * nv);
  plan_mpcc_rest_guess(p, z);
  plan_mpcc_solve(p, 0, z, kin);
  plan_mpcc_inverse_dynamics(p, z);
  *max_tau = 0;
  for (int k = 0; k < P->N; k++)
    for (int i = 0; i < n; i++) *max_tau = fmax(*max_tau, fabs(z[(size_t)k * B + 2 * n + 7 + i]));
  int rc = plan_mpcc_solve(p, 1, z, dyn);
  free(z);
  plan_mpcc_free(p);
  return rc;
}

static void test_warm_start_converges(void) {
  plan_mpcc_params P = short_task();
  plan_mpcc_stage kin = {0}, dyn = {0};
  double max_tau = INFINITY;
  int rc = warm_start(&P, &kin, &dyn, &max_tau);
  printf("warm start: kinematic status %d after %d iterations, max |tau| %.3g; dynamic %d (%d), %d iterations, "
         "quaternion error %.3g, complementarity %.3g\n", kin.status, kin.iterations, max_tau, rc, dyn.status,
         dyn.iterations, dyn.quaternion_error, dyn.complementarity);
  EXPECT(kin.status == 0 || kin.status == 1, "the kinematic stage converges: status %d after %d iterations",
         kin.status, kin.iterations);
  EXPECT(max_tau < P.tau_bound, "its inverse dynamics' controls within their bound: %g", max_tau);
  EXPECT(rc == 0, "the dynamic stage converges: status %d after %d iterations", dyn.status, dyn.iterations);
  EXPECT(dyn.complementarity < 1e-6, "complementarity %g", dyn.complementarity);
  EXPECT(dyn.quaternion_error < 3e-5, "quaternion error %g", dyn.quaternion_error);
  EXPECT(dyn.constraint_violation < 1e-6, "constraint violation %g", dyn.constraint_violation);
}

int main(void) {
  test_effort_gradient();
  test_warm_start_converges();
  return test_report("plan_mpcc_warm");
}

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
 * from the disk point's Jacobian, the closest point's tangent) against
 * Richardson extrapolation of plain differences of every row, at a point off
 * rest: moving arm, spinning ball, forces in every direction. The bound is
 * the Jacobian's own truncation (steps 1e-6 through rows that curve on the
 * 1e-3 scale of the arm's coordinates); a wrong shortcut errs by O(1). */
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
    EXPECT(e < 2e-5, "%s stage: Jacobian vs differences of the rows: %g", dynamic ? "dynamic" : "kinematic", e);
  }
  free(z);
}

/* The q_{k+1} columns of step k's Jacobian block (as IPOPT gets it) against
 * Richardson extrapolation (steps hd, hd/2, hd/4; error O(hd^6)) of central
 * differences of the plain rows: the largest |J - J_ref| over a row, relative
 * to max(1, the row's largest |J_ref|). The same for the reference against
 * itself at 2.5 times its step (spread). */
static int q1_reference(plan_mpcc *p, double *z, int k, double hd, double *ref);
static double q1_derivative_error(plan_mpcc *p, double *z, int k, double hd, double *spread) {
  int n = plan_mpcc_n(p), B = plan_mpcc_block(p), C = 2 * B;   /* >= block + state */
  double *val = malloc(sizeof(double) * 128 * C), *ref = malloc(sizeof(double) * 128 * n), *ref2 = malloc(sizeof(double) * 128 * n);
  int R = q1_reference(p, z, k, hd, ref);
  q1_reference(p, z, k, 2.5 * hd, ref2);
  int cols = plan_mpcc_step_jacobian_block(p, z, k, 1, val);
  double worst = 0;
  *spread = 0;
  for (int r = 0; r < R; r++) {
    double scale = 1;   /* as plan_mpcc_jacobian_error: absolute for rows whose q_{k+1} entries are small */
    for (int i = 0; i < n; i++) scale = fmax(scale, fabs(ref[r * n + i]));
    for (int i = 0; i < n; i++) {
      worst = fmax(worst, fabs(val[(size_t)r * cols + B + i] - ref[r * n + i]) / scale);
      *spread = fmax(*spread, fabs(ref2[r * n + i] - ref[r * n + i]) / scale);
    }
  }
  free(val);
  free(ref);
  free(ref2);
  return worst;
}

/* Richardson's reference for the q_{k+1} columns into ref (R x n); returns R. */
static int q1_reference(plan_mpcc *p, double *z, int k, double hd, double *ref) {
  int n = plan_mpcc_n(p), B = plan_mpcc_block(p);
  double rp[128], rm[128], d[3][128];   /* rows per step: 2 n + 11 + 2 d <= 128 for the task (n = 9, d = 10) */
  int R = plan_mpcc_step_rows(p, z, k, 1, rp);
  for (int i = 0; i < n; i++) {
    double *x = z + (size_t)(k + 1) * B + i, x0 = *x;
    for (int s = 0; s < 3; s++) {
      double dx = hd / (1 << s);
      *x = x0 + dx;
      plan_mpcc_step_rows(p, z, k, 1, rp);
      *x = x0 - dx;
      plan_mpcc_step_rows(p, z, k, 1, rm);
      *x = x0;
      for (int r = 0; r < R; r++) d[s][r] = (rp[r] - rm[r]) / (2 * dx);
    }
    for (int r = 0; r < R; r++) {
      double d1 = (4 * d[1][r] - d[0][r]) / 3, d2 = (4 * d[2][r] - d[1][r]) / 3;
      ref[r * n + i] = (16 * d2 - d1) / 15;
    }
  }
  return R;
}

/* Derivatives where the end disk's rim touches the ball. The ball is placed
 * (in the disk's frame at the rest pose) to touch the rim at 40 degrees
 * between the face and the side, and then level with the face, touching
 * where the side meets the rim: there the contact point and the normal turn
 * (the distance is C1, they are not), smoothed over sqrt(EPS_SDF). The
 * Jacobian's central differences must resolve that smoothing, or IPOPT
 * linearizes the contact (arm, ball and slip rows) with errors of order 1
 * there. Forces, velocities and spin nonzero, so every row depends on
 * q_{k+1}. The reference is checked against itself at another step. */
static void test_rim_derivatives(void) {
  plan_mpcc_params P = small_task();
  char err[256];
  plan_mpcc *p0 = plan_mpcc_create(&P, err, sizeof err);
  EXPECT(p0 != NULL, "create: %s", err);
  if (!p0) return;
  int nv = plan_mpcc_nvars(p0), n = plan_mpcc_n(p0), B = plan_mpcc_block(p0), d = P.d;
  double *z = malloc(sizeof(double) * nv), pos[3], Rd[9];
  plan_mpcc_rest_guess(p0, z);
  plan_mpcc_disk_pose(p0, z + B, pos, Rd);
  plan_mpcc_free(p0);
  const double a = 40 * M_PI / 180, rb = P.ball_radius, rd = P.disk_radius, hz = P.disk_half_thickness, rf = 1e-3;
  /* the sharp disk, then the disk with a 1 mm fillet: on the fillet's torus, and where it meets the side */
  const struct { const char *name; double fillet, wl[3]; } place[] = {
    {"rim, 40 degrees", 0, {rd + rb * cos(a), 0, hz + rb * sin(a)}},
    {"side-rim switch, 0.3 um above the face", 0, {rd + rb, 0, hz + 3e-7}},
    {"side-rim switch, 3 um above the face", 0, {rd + rb, 0, hz + 3e-6}},
    {"fillet, 40 degrees", rf, {rd - rf + (rb + rf) * cos(a), 0, hz - rf + (rb + rf) * sin(a)}},
    {"side-fillet switch, 0.3 um above", rf, {rd + rb, 0, hz - rf + 3e-7}},
  };
  for (int c = 0; c < 5; c++) {
    P.disk_fillet = place[c].fillet;
    for (int i = 0; i < 3; i++)
      P.ball_center[i] = pos[i] + Rd[i * 3] * place[c].wl[0] + Rd[i * 3 + 1] * place[c].wl[1] + Rd[i * 3 + 2] * place[c].wl[2];
    plan_mpcc *p = plan_mpcc_create(&P, err, sizeof err);
    EXPECT(p != NULL, "create: %s", err);
    if (!p) continue;
    plan_mpcc_rest_guess(p, z);
    double *s1 = z + B, *u = z + 2 * n + 7;   /* S_1; U_0: tau, fz, ft, gamma */
    for (int i = 0; i < n; i++) s1[n + i] = 0.1 * (i % 3 - 1);   /* v_1 */
    for (int i = 0; i < 3; i++) s1[2 * n + i] = 0.5 * (i + 1);     /* omega_1 */
    u[n] = 1;
    for (int j = 0; j < d; j++) u[n + 1 + j] = 0.05 * (j + 1);
    u[n + 1 + d] = 0.1;
    double gap, fz;
    plan_mpcc_contact(p, z, 0, &gap, &fz, NULL);
    EXPECT(fabs(gap) < 1e-6, "%s: the ball touches the disk (gap %g)", place[c].name, gap);
    double spread, e = q1_derivative_error(p, z, 0, 4e-8, &spread);
    printf("rim derivatives, %s: Jacobian vs Richardson %.2g (the reference at 2.5 times the step: %.2g)\n",
           place[c].name, e, spread);
    EXPECT(spread < 1e-5, "%s: Richardson's reference moves by %g with its step", place[c].name, spread);
    EXPECT(e < 1e-3, "%s: the Jacobian's q columns vs Richardson extrapolation: %g", place[c].name, e);
    plan_mpcc_free(p);
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

/* Bad parameters are refused with a message naming the parameter and its
 * value (a zero-thickness disk used to be blamed on the fillet). */
static void test_bad_parameters(void) {
  char error[256];
  plan_mpcc_params P = small_task();
  P.disk_half_thickness = 0;
  EXPECT(!plan_mpcc_create(&P, error, sizeof error), "a disk of zero thickness is accepted");
  EXPECT(strstr(error, "disk half thickness (m) > 0, got 0"), "zero thickness: %s", error);
  P = small_task();
  P.ball_mass = -1;
  EXPECT(!plan_mpcc_create(&P, error, sizeof error), "a negative ball mass is accepted");
  EXPECT(strstr(error, "ball mass (kg) > 0, got -1"), "negative mass: %s", error);
  P = small_task();
  P.disk_fillet = P.disk_half_thickness;
  EXPECT(!plan_mpcc_create(&P, error, sizeof error), "a fillet as large as the half thickness is accepted");
  EXPECT(strstr(error, "disk fillet"), "fillet: %s", error);
  P = small_task();
  P.T = NAN;
  EXPECT(!plan_mpcc_create(&P, error, sizeof error), "a NaN horizon is accepted");
  EXPECT(strstr(error, "T (horizon, s) > 0, got nan"), "NaN horizon: %s", error);
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "rim")) {  /* the derivative checks alone */
    test_rim_derivatives();
    return test_report("plan_mpcc");
  }
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
  test_bad_parameters();
  test_relaxation_forms();
  test_rim_derivatives();
  return test_report("plan_mpcc");
}

/* The MPCC's initial guesses and IPOPT's options file:
 * - the off-axis guess for the task about y (whose rest contact lies on the
 *   rotation axis) touches the ball (gap 0 from the contact geometry) with a
 *   normal far from the axis, holds q within its bounds, and ends with the
 *   ball at the target orientation; the tasks about x and z keep the rest
 *   contact (its normal is perpendicular to their axes);
 * - a stray ./ipopt.opt is not read, a file named in ipopt_options is, and
 *   one named in ipopt_options_last in the homotopy's last relaxation only;
 * - the coarse-to-fine start: a plan solved on 5 steps, interpolated onto 15
 *   (two fine knots between each pair of coarse ones), keeps the
 *   coarse positions where the grids meet (up to the move onto the ball's
 *   surface of the knots that push on it, which none cuts into) and the
 *   coarse forces over each
 *   coarse step; its arm motion replays with sb_step, its quaternions are
 *   unit ones composed by the ball's own angular velocities (recomputed here),
 *   its final orientation is the coarse plan's to the interpolation's error;
 *   and the fine solve from it converges. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mpcc.h"
#include "testutil.h"

static void test_offaxis(void) {
  char err[256];
  for (int run = 0; run < 4; run++) {   /* x, y, z; then y with the contact 90 degrees round */
    int axis = run < 3 ? run : 1;
    plan_mpcc_params P = plan_mpcc_rotate_task(axis);
    P.N = 20;
    if (run == 3) P.offaxis_angle = 0.5 * M_PI;
    plan_mpcc *p = plan_mpcc_create(&P, err, sizeof err);
    EXPECT(p != NULL, "create: %s", err);
    if (!p) return;
    EXPECT(plan_mpcc_needs_offaxis(p) == (axis == 1), "axis %d: needs_offaxis %d", axis, plan_mpcc_needs_offaxis(p));
    if (axis != 1) { plan_mpcc_free(p); continue; }
    int nv = plan_mpcc_nvars(p), n = plan_mpcc_n(p), B = plan_mpcc_block(p);
    double *z = malloc(sizeof(double) * nv), normal[3];
    double lever = plan_mpcc_offaxis_guess(p, z, normal);
    /* 45 degrees round from a rest normal perpendicular-ish to y: lever sin(45 deg) or more; at 90
       degrees the contact is on the ball's side, perpendicular to the axis */
    EXPECT(lever > (run == 3 ? 0.99 : 0.69), "off-axis guess (%s): lever %g of the radius",
           run == 3 ? "90 deg" : "45 deg", lever);
    double gap, fz, nk[3], worst_gap = 0, worst_q = 0, rest_gap;
    plan_mpcc_contact(p, z, 0, &rest_gap, &fz, NULL);
    /* at 45 degrees the disk approaches from outside; at 90 the straight path in q from the rest pose
       cuts through the ball (an infeasible start, which IPOPT's first relaxation repairs) */
    if (run < 3) EXPECT(rest_gap > 1e-3, "the disk approaches: not yet touching after the first step (gap %g)", rest_gap);
    for (int k = P.N / 10; k < P.N; k++) {
      plan_mpcc_contact(p, z, k, &gap, &fz, nk);
      worst_gap = fmax(worst_gap, fabs(gap));
      double dn = 0;
      for (int i = 0; i < 3; i++) dn = fmax(dn, fabs(nk[i] - normal[i]));
      EXPECT(dn < 1e-6, "step %d: contact normal differs from the chosen one by %g", k, dn);
      EXPECT(fabs(nk[1]) < 0.75, "step %d: normal's y component %g (the axis)", k, nk[1]);
    }
    EXPECT(worst_gap < 1e-7, "the held pose touches the ball: |gap| up to %g", worst_gap);
    for (int k = 0; k <= P.N; k++)
      for (int i = 0; i < n; i++) worst_q = fmax(worst_q, fabs(z[(size_t)k * B + i]));
    EXPECT(worst_q <= P.q_bound, "q within its bound %g: %g", P.q_bound, worst_q);
    EXPECT(plan_mpcc_quaternion_error(p, z) < 1e-12, "the guess ends at the target (error %g)",
           plan_mpcc_quaternion_error(p, z));
    free(z);
    plan_mpcc_free(p);
  }
}

/* One relaxation of a 3-step task, capped at a few iterations; an options
 * file with max_cpu_time 1e-9 stops IPOPT at once (Maximum_CpuTime_Exceeded). */
static int solve_status_relaxations(const char *options, const char *options_last, plan_mpcc_stage *s, int relaxations) {
  plan_mpcc_params P = plan_mpcc_rotate_task(0);
  P.N = 3;
  P.T = 0.12;
  P.angle = 0.1;
  P.eps_start = relaxations > 1 ? P.eps * pow(10, relaxations - 1) : P.eps;
  P.eps_factor = 0.1;
  P.max_iter = 3 * relaxations;
  P.max_iter_relaxed = 3;
  P.ipopt_options = options;
  P.ipopt_options_last = options_last;
  char err[256];
  plan_mpcc *p = plan_mpcc_create(&P, err, sizeof err);
  if (!p) return 999;
  double *z = malloc(sizeof(double) * plan_mpcc_nvars(p));
  plan_mpcc_rest_guess(p, z);
  plan_mpcc_solve(p, 1, z, s);
  free(z);
  plan_mpcc_free(p);
  return s->status;
}
static int solve_status(const char *options) {
  plan_mpcc_stage s;
  return solve_status_relaxations(options, NULL, &s, 1);
}

static void test_options_file(void) {
  char dir[] = "/tmp/cusp_ipopt_optXXXXXX", cwd[4096];
  if (!mkdtemp(dir) || !getcwd(cwd, sizeof cwd)) { EXPECT(0, "temporary directory"); return; }
  EXPECT(chdir(dir) == 0, "chdir %s", dir);
  FILE *f = fopen("ipopt.opt", "w");
  EXPECT(f != NULL, "write %s/ipopt.opt", dir);
  if (f) { fprintf(f, "max_cpu_time 1e-9\n"); fclose(f); }
  int stray = solve_status(NULL), named = solve_status("ipopt.opt");
  /* Maximum_CpuTime_Exceeded is -4 */
  EXPECT(stray != -4, "a stray ./ipopt.opt was read (status %d)", stray);
  EXPECT(named == -4, "the named options file was not read (status %d, expected -4)", named);
  /* three relaxations (1e-5, 1e-6, 1e-7): the last-relaxation file stops the last one only */
  plan_mpcc_stage s;
  solve_status_relaxations(NULL, "ipopt.opt", &s, 3);
  EXPECT(s.homotopy_steps == 3, "%d relaxations (3 expected)", s.homotopy_steps);
  EXPECT(s.relaxation[0].status != -4 && s.relaxation[1].status != -4 && s.relaxation[2].status == -4,
         "ipopt_options_last: relaxation statuses %d, %d, %d (only the last -4)", s.relaxation[0].status,
         s.relaxation[1].status, s.relaxation[2].status);
  remove("ipopt.opt");
  EXPECT(chdir(cwd) == 0, "chdir back");
  rmdir(dir);
}

/* Hamilton product and exponential of a rotation vector (w x y z), written here, not taken from mpcc.c. */
static void qmul(const double a[4], const double b[4], double o[4]) {
  o[0] = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
  o[1] = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
  o[2] = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
  o[3] = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
}
static void qexp(const double th[3], double o[4]) {
  double a = sqrt(th[0] * th[0] + th[1] * th[1] + th[2] * th[2]);
  o[0] = cos(0.5 * a);
  for (int i = 0; i < 3; i++) o[i + 1] = a > 0 ? sin(0.5 * a) / a * th[i] : 0.5 * th[i];
}

static void test_coarse_to_fine(void) {
  plan_mpcc_params C = plan_mpcc_rotate_task(0);   /* test_plan_mpcc's short task about x */
  C.N = 5;
  C.T = 0.2;
  C.angle = 0.2;
  C.tol = 1e-6;
  C.max_iter = 600;
  C.max_iter_relaxed = 60;   /* cusp-plan's setting for the task about x */
  C.exact_hessian = 2;
  plan_mpcc_params P = C;
  P.N = 15;
  char err[256];
  plan_mpcc *c = plan_mpcc_create(&C, err, sizeof err), *p = plan_mpcc_create(&P, err, sizeof err);
  EXPECT(c && p, "create: %s", err);
  if (!c || !p) { plan_mpcc_free(c); plan_mpcc_free(p); return; }
  int n = plan_mpcc_n(p), B = plan_mpcc_block(p), Bc = plan_mpcc_block(c), ns = 2 * n + 7;
  double *zc = malloc(sizeof(double) * plan_mpcc_nvars(c)), *z = malloc(sizeof(double) * plan_mpcc_nvars(p));
  plan_mpcc_rest_guess(c, zc);
  plan_mpcc_stage cs, fs;
  EXPECT(plan_mpcc_solve(c, 1, zc, &cs) == 0, "coarse plan: IPOPT status %d", cs.status);
  EXPECT(plan_mpcc_interpolate(p, z, c, zc, err, sizeof err) == 0, "interpolate: %s", err);
  double hc = C.T / C.N, h = P.T / P.N;
  /* where the grids meet (every third fine knot) the positions are the coarse ones, or, where the
     fine plan pushes, the coarse ones moved onto the ball by about their gap (the coarse plan's
     gap there is at most eps / fz, not 0) */
  for (int k = 0; k <= P.N; k += 3) {
    int j = k / 3;
    double dq = 0, gap = 0, gapc = 0, fz;
    for (int i = 0; i < n; i++) dq = fmax(dq, fabs(z[(size_t)k * B + i] - zc[(size_t)j * Bc + i]));
    if (k > 0) {
      plan_mpcc_contact(p, z, k - 1, &gap, &fz, NULL);
      plan_mpcc_contact(c, zc, j - 1, &gapc, &fz, NULL);
    }
    EXPECT(dq < 1e-12 || (fabs(gap) < 1e-9 && dq < 100 * fabs(gapc)),
           "fine knot %d (t = %g) vs coarse knot %d: |dq| %g (fine gap %g, coarse gap %g)", k, k * h, j, dq, gap, gapc);
  }
  /* no fine knot inside the ball, and every one whose step pushes on it touches it */
  for (int k = 0; k < P.N; k++) {
    double gap, fz;
    plan_mpcc_contact(p, z, k, &gap, &fz, NULL);
    EXPECT(gap > -1e-9 && (fz == 0 || fabs(gap) < 1e-9), "fine step %d: gap %g with fz %g", k, gap, fz);
  }
  /* the forces of the coarse step that holds each fine step's midpoint */
  for (int k = 0; k < P.N; k++) {
    int j = (int)((k + 0.5) * h / hc);
    double gap, fz, fzc;
    plan_mpcc_contact(p, z, k, &gap, &fz, NULL);
    plan_mpcc_contact(c, zc, j, &gap, &fzc, NULL);
    EXPECT(fz == fzc, "fine step %d: fz %g, coarse step %d's %g", k, fz, j, fzc);
  }
  /* the arm through the simulator's integrator (tau by inverse dynamics) */
  double r = plan_mpcc_step_residual(p, z);
  EXPECT(r < 1e-10, "interpolated start vs sb_step: residual %g", r);
  /* unit quaternions, each the previous one turned by h omega_{k+1} */
  double worst_norm = 0, worst_comp = 0;
  for (int k = 0; k < P.N; k++) {
    const double *s0 = z + (size_t)k * B, *s1 = s0 + B;
    double th[3] = {h * s1[2 * n], h * s1[2 * n + 1], h * s1[2 * n + 2]}, e[4], qn[4], nn = 0;
    qexp(th, e);
    qmul(e, s0 + 2 * n + 3, qn);
    for (int i = 0; i < 4; i++) { worst_comp = fmax(worst_comp, fabs(qn[i] - s1[2 * n + 3 + i])); nn += s1[2 * n + 3 + i] * s1[2 * n + 3 + i]; }
    worst_norm = fmax(worst_norm, fabs(sqrt(nn) - 1));
  }
  EXPECT(worst_norm < 1e-12, "quaternion norms off 1 by up to %g", worst_norm);
  EXPECT(worst_comp < 1e-12, "quat_{k+1} vs exp(h omega_{k+1}) quat_k: %g", worst_comp);
  /* the ball turned by the same impulses ends near the coarse plan's orientation: the fine
     angular velocity follows the forces step by step where the coarse one jumps once per coarse
     step, a lag of about half a coarse step of the final spin */
  const double *qf = z + (size_t)P.N * B + 2 * n + 3, *qcf = zc + (size_t)C.N * Bc + 2 * n + 3;
  double dot = 0;
  for (int i = 0; i < 4; i++) dot += qf[i] * qcf[i];
  double angle = 2 * acos(fmin(1, fabs(dot)));
  EXPECT(angle < 0.1 * C.angle, "the start's final orientation is %g rad from the coarse plan's (task %g rad)", angle,
         C.angle);
  EXPECT(z[ns] == z[ns] && fabs(z[(size_t)B * P.N]) <= P.q_bound, "finite and within bounds");
  /* the fine solve from it */
  int rc = plan_mpcc_solve(p, 1, z, &fs);
  double prod;
  plan_mpcc_complementarity_measures(p, z, &prod);
  EXPECT(rc == 0, "fine solve from the coarse plan: IPOPT status %d", fs.status);
  EXPECT(prod <= 1.1 * P.eps, "fine solve: complementarity product %g", prod);
  EXPECT(plan_mpcc_step_residual(p, z) < 1e-7, "fine solve vs sb_step: %g", plan_mpcc_step_residual(p, z));
  EXPECT(fs.quaternion_error < 0.1 * (1 - cos(0.5 * P.angle) * cos(0.5 * P.angle)), "fine solve: quaternion error %g",
         fs.quaternion_error);
  /* a plan of another horizon is refused, naming T */
  plan_mpcc_params W = C;
  W.T = 0.3;
  plan_mpcc *w = plan_mpcc_create(&W, err, sizeof err);
  err[0] = 0;
  EXPECT(w && plan_mpcc_interpolate(p, z, w, zc, err, sizeof err) == -1 && strstr(err, "T = 0.3"),
         "a coarse plan of T = 0.3 for a task of T = 0.2: '%s'", err);
  plan_mpcc_free(w);
  free(z);
  free(zc);
  plan_mpcc_free(c);
  plan_mpcc_free(p);
}

int main(void) {
  test_coarse_to_fine();
  test_offaxis();
  test_options_file();
  return test_report("plan_mpcc_guess");
}

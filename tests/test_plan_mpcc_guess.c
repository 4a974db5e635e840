/* The MPCC's initial guesses and IPOPT's options file:
 * - the off-axis guess for the task about y (whose rest contact lies on the
 *   rotation axis) touches the ball (gap 0 from the contact geometry) with a
 *   normal far from the axis, holds q within its bounds, and ends with the
 *   ball at the target orientation; the tasks about x and z keep the rest
 *   contact (its normal is perpendicular to their axes);
 * - a stray ./ipopt.opt is not read, a file named in ipopt_options is. */
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
static int solve_status(const char *options) {
  plan_mpcc_params P = plan_mpcc_rotate_task(0);
  P.N = 3;
  P.T = 0.12;
  P.angle = 0.1;
  P.eps_start = P.eps;
  P.max_iter = 3;
  P.ipopt_options = options;
  char err[256];
  plan_mpcc *p = plan_mpcc_create(&P, err, sizeof err);
  if (!p) return 999;
  double *z = malloc(sizeof(double) * plan_mpcc_nvars(p));
  plan_mpcc_rest_guess(p, z);
  plan_mpcc_stage s;
  plan_mpcc_solve(p, 1, z, &s);
  free(z);
  plan_mpcc_free(p);
  return s.status;
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
  remove("ipopt.opt");
  EXPECT(chdir(cwd) == 0, "chdir back");
  rmdir(dir);
}

int main(void) {
  test_offaxis();
  test_options_file();
  return test_report("plan_mpcc_guess");
}

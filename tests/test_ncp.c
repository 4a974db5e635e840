/* The smoothed NCP contact model (softbody/ncp.h) against what does not
 * come from it:
 *   - frictionless random problems: as the smoothing goes to zero the
 *     impulses converge to Lemke's exact LCP solution (lcp.h), the exact
 *     problem's residual falls with the smoothing, and the smoothed
 *     complementarity is the analytic one (s lambda_n v_n = e^2)
 *   - a point mass on a plane and on an incline through the contact problem:
 *     the same impulses as the LCP model's (sb_contact_solve) on the same
 *     assembled problem, sticking and sliding (the slip along a pyramid
 *     direction, where the pyramid and the cone agree), and about two Newton
 *     iterations per step with the warm start. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contact.h"
#include "lcp.h"
#include "ncp.h"
#include "point_mass_incline.h"
#include "testutil.h"

#define G_ACC PM_G

/* W = J J^T + 0.1 I (3nc x 3nc, SPD) for random J. */
static void random_spd(int m3, double *W) {
  double *J = malloc(sizeof(double) * m3 * m3);
  for (int k = 0; k < m3 * m3; k++) J[k] = tu_rand();
  for (int a = 0; a < m3; a++)
    for (int b = 0; b < m3; b++) {
      double s = a == b ? 0.1 : 0;
      for (int k = 0; k < m3; k++) s += J[k * m3 + a] * J[k * m3 + b] / m3;
      W[b * m3 + a] = s;
    }
  free(J);
}

static void test_frictionless_limit(void) {
  sb_ncp_work *w = sb_ncp_work_create(10);
  sb_lcp_work *lw = sb_lcp_work_create(10);
  double worst_final = 0;
  for (int t = 0; t < 40; t++) {
    int nc = 1 + t % 10, m3 = 3 * nc;
    double W[900], b[30], mu[10], lam[30], Wn[100], bn[10], zn[10];
    random_spd(m3, W);
    for (int i = 0; i < nc; i++) {
      mu[i] = 0;
      for (int a = 0; a < 3; a++) b[3 * i + a] = 0.5 * tu_rand();
      for (int j = 0; j < nc; j++) Wn[j * nc + i] = W[(3 * j + 2) * m3 + 3 * i + 2];
      bn[i] = b[3 * i + 2];
    }
    /* the exact normal LCP (friction-free: the tangential rows carry no impulse) */
    sb_lcp_options lo = sb_lcp_default_options();
    sb_lcp_info li;
    memset(zn, 0, sizeof zn);
    EXPECT(sb_lcp_solve_with(lw, SB_LCP_LEMKE, nc, Wn, bn, zn, NULL, &lo, &li) == SB_LCP_SOLVED, "lemke %d", t);
    double zmax = fmax(tu_maxabs(zn, nc), 1e-3), prev_err = HUGE_VAL, prev_nat = HUGE_VAL;
    double eps[] = {1e-2, 1e-4, 1e-6, 1e-8};
    for (int e = 0; e < 4; e++) {
      sb_ncp_options o = sb_ncp_default_options();
      o.smoothing = eps[e];
      o.tol = 1e-12;
      o.warm_start = 0;
      o.regularization = 0; /* W is positive definite here: the exact limit */
      sb_ncp_info info;
      int rc = sb_ncp_solve(w, nc, W, b, mu, lam, &o, &info);
      EXPECT(rc == 0, "problem %d, e = %g: %s", t, eps[e], info.message);
      double err = 0;
      for (int i = 0; i < nc; i++) {
        err = fmax(err, fabs(lam[3 * i + 2] - zn[i]) / zmax);
        err = fmax(err, fmax(fabs(lam[3 * i]), fabs(lam[3 * i + 1])) / zmax);
      }
      EXPECT(err <= prev_err * 1.0001 + 1e-12, "problem %d: error %g at e = %g above %g at the larger e", t, err,
             eps[e], prev_err);
      EXPECT(info.natural_residual <= prev_nat * 1.0001 + 1e-12, "problem %d: exact residual rose to %g", t,
             info.natural_residual);
      prev_err = err;
      prev_nat = info.natural_residual;
      /* the smoothing's complementarity: s lambda_n v_n = e^2 at every contact */
      for (int i = 0; i < nc; i++) {
        double vn = b[3 * i + 2], s = (W[(3 * i) * m3 + 3 * i] + W[(3 * i + 1) * m3 + 3 * i + 1] +
                                       W[(3 * i + 2) * m3 + 3 * i + 2]) / 3;
        for (int k = 0; k < m3; k++) vn += W[k * m3 + 3 * i + 2] * lam[k];
        double prod = s * lam[3 * i + 2] * vn;
        EXPECT(fabs(prod - eps[e] * eps[e]) <= 1e-6 * eps[e] * eps[e] + 2e-12 * (s * fabs(lam[3 * i + 2]) + fabs(vn)),
               "problem %d contact %d: s lambda_n v_n = %g, e^2 = %g", t, i, prod, eps[e] * eps[e]);
      }
    }
    EXPECT(prev_err <= 1e-6, "problem %d: at e = 1e-8 the impulses differ from Lemke's by %g", t, prev_err);
    worst_final = fmax(worst_final, prev_err);
  }
  printf("frictionless: at e = 1e-8 m/s the impulses agree with Lemke's to %.3g (relative)\n", worst_final);
  sb_lcp_work_free(lw);
  sb_ncp_work_free(w);
}

/* A point mass on a plane tilted by theta through the contact problem, the
 * NCP and the LCP model each on the same assembled problem every step. */
static void run_incline(double theta, double mu, int nsteps, double *accel, double *max_diff, double *iters_mean,
                        double *natural) {
  char err[256];
  double h = 1e-3, m = 2.0;
  sb_contact_problem *P = sb_contact_create(1, 1, 3, 16, err, sizeof err);
  sb_ncp_work *w = sb_ncp_work_create(1);
  double lam[3] = {0, 0, 0}, v0 = 0, vd = 0;
  pm_incline s;
  pm_incline_init(&s, theta, mu, m, h, 0, 3);
  int iters = 0;
  *max_diff = 0;
  *natural = 0;
  for (int step = 0; step < nsteps; step++) {
    EXPECT(pm_incline_problem(&s, P, err, sizeof err) == 0, "incline problem: %s", err);
    /* the LCP's answer on this problem (16 directions; the slip is along t1 = D_0) */
    sb_contact_options lo = sb_contact_default_options();
    lo.directions = 16;
    lo.warm_start = 0;
    EXPECT(sb_contact_solve(P, h, &lo, NULL, err, sizeof err) == 0, "lcp: %s", err);
    double lcp_imp[3];
    sb_contact_result(P, 0, lcp_imp, NULL, NULL, NULL);
    const double *W, *u, *gv;
    EXPECT(sb_contact_assemble(P, h, &lo, &W, &u, &gv, err, sizeof err) == 1, "assemble: %s", err);
    double b[3] = {u[0], u[1], u[2] + gv[0]};
    sb_ncp_options o = sb_ncp_default_options();
    sb_ncp_info info;
    EXPECT(sb_ncp_solve(w, 1, W, b, &mu, lam, &o, &info) == 0, "ncp step %d: %s", step, info.message);
    if (step > 0) iters += info.iterations;
    *natural = fmax(*natural, info.natural_residual);
    sb_contact_apply_impulses(P, lam, 4, 1);
    double imp[3];
    sb_contact_result(P, 0, imp, NULL, NULL, NULL);
    double d = 0;
    for (int a = 0; a < 3; a++) d = fmax(d, fabs(imp[a] - lcp_imp[a]));
    *max_diff = fmax(*max_diff, d / (m * G_ACC * h));
    vd = pm_incline_advance(&s, P);
    if (step == 0) v0 = vd;
  }
  *accel = (vd - v0) / (h * (nsteps - 1));
  *iters_mean = (double)iters / (nsteps - 1);
  sb_ncp_work_free(w);
  sb_contact_free(P);
}

static void test_incline_against_lcp(void) {
  double mu = 0.5, thetas[] = {0, 0.3, atan(0.5) - 0.02, atan(0.5) + 0.02, 0.8};
  for (int t = 0; t < 5; t++) {
    double th = thetas[t], acc, diff, it, nat;
    run_incline(th, mu, 500, &acc, &diff, &it, &nat);
    double expect = tan(th) < mu ? 0 : G_ACC * (sin(th) - mu * cos(th));
    EXPECT(fabs(acc - expect) <= 1e-4 * G_ACC, "theta %g: acceleration %g, expected %g", th, acc, expect);
    EXPECT(diff <= 1e-4, "theta %g: NCP and LCP impulses differ by %g of m g h", th, diff);
    EXPECT(it <= 2.5, "theta %g: %.2f Newton iterations per warm-started step", th, it);
    EXPECT(nat <= 1e-5, "theta %g: exact residual %g m/s", th, nat);
    printf("incline %.3f rad, mu %.2f: acceleration %.6g (expected %.6g), |ncp - lcp| %.2g of m g h, "
           "%.2f iterations per step, exact residual %.2g m/s\n", th, mu, acc, expect, diff, it, nat);
  }
}

static void test_bad_input(void) {
  sb_ncp_work *w = sb_ncp_work_create(1);
  double W[9] = {0}, b[3] = {0, 0, -1}, mu = 0.5, lam[3];
  sb_ncp_info info;
  EXPECT(sb_ncp_solve(w, 1, W, b, &mu, lam, NULL, &info) == -1 && strstr(info.message, "trace"),
         "zero Delassus refused: %s", info.message);
  sb_ncp_options o = sb_ncp_default_options();
  o.smoothing = 0;
  W[0] = W[4] = W[8] = 1;
  EXPECT(sb_ncp_solve(w, 1, W, b, &mu, lam, &o, &info) == -1 && strstr(info.message, "smoothing"),
         "zero smoothing refused: %s", info.message);
  sb_ncp_work_free(w);
}

int main(void) {
  test_frictionless_limit();
  test_incline_against_lcp();
  test_bad_input();
  return test_report("ncp");
}

/* The SAP contact model (softbody/sap.h) against what does not come from it:
 *   - the projection: its KKT conditions (the cone, the dual cone, zero
 *     complementarity in R's norm) and G against finite differences
 *   - random problems (full-rank and rank-deficient W) from random starts:
 *     the optimality conditions of the dual problem min 1/2 g^T (W + R) g +
 *     g^T (vfree - vhat) over the cones, the cost never increasing, the same
 *     impulses from every start
 *   - a point mass resting on a plane and on an incline through the contact
 *     problem (sb_contact_assemble / sb_contact_apply_impulses): the spring's
 *     static deflection m g cos(theta) / k, sticking below tan(theta) = mu with
 *     the regularization's creep sigma g h sin(theta) (Rt = sigma / m, the
 *     impulse m g h sin(theta)), sliding above with acceleration g (sin(theta)
 *     - mu cos(theta)). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contact.h"
#include "point_mass_incline.h"
#include "sap.h"
#include "testutil.h"

#define G_ACC PM_G

/* y = -R^-1 (vc - vhat); u = R (gamma - y) must lie in the dual cone
 * {mu |u_t| <= u_n}, gamma in the cone, gamma . u = 0. */
static void check_projection_kkt(double mu, const double R[3], const double vhat[3], const double vc[3]) {
  double g[3], u[3];
  sb_sap_impulse(mu, R, vhat, vc, g, NULL);
  for (int a = 0; a < 3; a++) u[a] = R[a] * g[a] + (vc[a] - vhat[a]);
  double scale = fabs(vc[0]) + fabs(vc[1]) + fabs(vc[2]) + fabs(vhat[2]) + 1e-12;
  EXPECT(hypot(g[0], g[1]) <= mu * g[2] + 1e-12 * fabs(g[2]) + 1e-300 && g[2] >= 0,
         "projection: gamma (%g %g %g) outside the cone mu = %g", g[0], g[1], g[2], mu);
  EXPECT(mu * hypot(u[0], u[1]) <= u[2] + 1e-10 * scale, "projection: u (%g %g %g) outside the dual cone", u[0], u[1],
         u[2]);
  double gu = g[0] * u[0] + g[1] * u[1] + g[2] * u[2];
  EXPECT(fabs(gu) <= 1e-10 * scale * (fabs(g[0]) + fabs(g[1]) + fabs(g[2]) + 1e-12),
         "projection: complementarity %g", gu);
}

static void test_projection(void) {
  for (int t = 0; t < 2000; t++) {
    double mu = t % 7 == 0 ? 0 : 1.5 * fabs(tu_rand());
    double R[3], vhat[3] = {0, 0, 0.3 * tu_rand()}, vc[3];
    R[0] = R[1] = pow(10, -4 + 3 * fabs(tu_rand()));
    R[2] = pow(10, -4 + 3 * fabs(tu_rand()));
    for (int a = 0; a < 3; a++) vc[a] = tu_rand();
    check_projection_kkt(mu, R, vhat, vc);
    /* G = -d gamma / d vc by central differences, away from the region boundaries */
    double g[3], G[9];
    int region = sb_sap_impulse(mu, R, vhat, vc, g, G);
    double Gfd[9], worst = 0, gmax = 0;
    int same = 1;
    for (int b = 0; b < 3; b++) {
      double vp[3], vm[3], gp[3], gm[3], dv = 1e-7;
      memcpy(vp, vc, sizeof vp);
      memcpy(vm, vc, sizeof vm);
      vp[b] += dv;
      vm[b] -= dv;
      same &= sb_sap_impulse(mu, R, vhat, vp, gp, NULL) == region;
      same &= sb_sap_impulse(mu, R, vhat, vm, gm, NULL) == region;
      for (int a = 0; a < 3; a++) Gfd[3 * b + a] = -(gp[a] - gm[a]) / (2 * dv);
    }
    if (!same) continue;
    for (int k = 0; k < 9; k++) {
      worst = fmax(worst, fabs(G[k] - Gfd[k]));
      gmax = fmax(gmax, fabs(G[k]));
    }
    EXPECT(worst <= 1e-5 * fmax(gmax, 1), "G vs finite differences: %g of %g (region %d)", worst, gmax, region);
    EXPECT(fabs(G[3] - G[1]) <= 1e-12 * gmax && fabs(G[6] - G[2]) <= 1e-12 * gmax &&
               fabs(G[7] - G[5]) <= 1e-12 * gmax, "G symmetric");
  }
}

/* W = J M^-1 J^T for random J (3nc x nv) and SPD M; rank min(3nc, nv). */
static void random_delassus(int nc, int nv, double *W) {
  int m3 = 3 * nc;
  double *J = malloc(sizeof(double) * m3 * nv), *L = calloc((size_t)nv * nv, sizeof(double));
  for (int k = 0; k < m3 * nv; k++) J[k] = tu_rand();
  /* M^-1 = L L^T with L lower triangular, positive diagonal */
  for (int j = 0; j < nv; j++)
    for (int i = j; i < nv; i++) L[j * nv + i] = i == j ? 0.5 + fabs(tu_rand()) : 0.3 * tu_rand();
  for (int a = 0; a < m3; a++)
    for (int b = 0; b < m3; b++) {
      double s = 0;
      for (int k = 0; k < nv; k++) {
        double la = 0, lb = 0; /* (J L)_ak, (J L)_bk */
        for (int i = k; i < nv; i++) {
          la += J[i * m3 + a] * L[k * nv + i];
          lb += J[i * m3 + b] * L[k * nv + i];
        }
        s += la * lb;
      }
      W[b * m3 + a] = s;
    }
  free(J);
  free(L);
}

/* The dual problem's optimality: gamma in the cones, u = (W + R) gamma +
 * vfree - vhat in the dual cones, gamma . u = 0 (per contact); returns the
 * worst violation relative to the velocity scale. */
static double dual_kkt(int nc, const double *W, const double *vfree, const double *R, const double *vhat,
                       const double *mu, const double *gamma, double vscale) {
  int m3 = 3 * nc;
  double worst = 0;
  for (int i = 0; i < nc; i++) {
    double u[3];
    const double *g = gamma + 3 * i;
    for (int a = 0; a < 3; a++) {
      int row = 3 * i + a;
      u[a] = R[row] * gamma[row] + vfree[row] - vhat[row];
      for (int k = 0; k < m3; k++) u[a] += W[k * m3 + row] * gamma[k];
    }
    double gs = fabs(g[0]) + fabs(g[1]) + fabs(g[2]);
    double wi = (W[(3 * i) * m3 + 3 * i] + W[(3 * i + 1) * m3 + 3 * i + 1] + W[(3 * i + 2) * m3 + 3 * i + 2]) / 3;
    worst = fmax(worst, fmax(0, hypot(g[0], g[1]) - mu[i] * g[2]) * wi / vscale);
    worst = fmax(worst, fmax(0, mu[i] * hypot(u[0], u[1]) - u[2]) / vscale);
    worst = fmax(worst, fabs(g[0] * u[0] + g[1] * u[1] + g[2] * u[2]) / (vscale * fmax(gs, 1e-300)));
  }
  return worst;
}

static void test_random_problems(void) {
  sb_sap_work *w = sb_sap_work_create(12);
  EXPECT(w != NULL, "work");
  int worst_iter = 0;
  for (int t = 0; t < 60; t++) {
    int nc = 1 + t % 12, nv = t % 3 == 0 ? 2 + t % 5 : 3 * nc + 2; /* every third rank-deficient */
    int m3 = 3 * nc;
    double *W = malloc(sizeof(double) * m3 * m3), vfree[36], R[36], vhat[36], mu[12], x[36], gamma[36],
           first[36];
    random_delassus(nc, nv, W);
    double h = 1e-3, vscale = 0;
    for (int i = 0; i < nc; i++) {
      mu[i] = i % 4 == 0 ? 0 : fabs(tu_rand());
      double phi0 = 2e-3 * tu_rand();
      /* W_ii: the 3 x 3 block at (3i, 3i) of leading dimension m3 */
      double Wii[9];
      for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) Wii[3 * b + a] = W[(3 * i + b) * m3 + 3 * i + a];
      sb_sap_contact_params(h, 1e4 * pow(10, 2 * fabs(tu_rand())), 5 * fabs(tu_rand()), 1e-3, phi0, Wii, R + 3 * i,
                            vhat + 3 * i);
      for (int a = 0; a < 3; a++) {
        vfree[3 * i + a] = 0.5 * tu_rand();
        vscale = fmax(vscale, fabs(vfree[3 * i + a]));
      }
      vscale = fmax(vscale, fabs(vhat[3 * i + 2]));
    }
    for (int start = 0; start < 4; start++) {
      sb_sap_options o = sb_sap_default_options();
      o.rel_tol = 1e-10;
      o.warm_start = start > 0;
      for (int k = 0; k < m3; k++) x[k] = start == 0 ? 0 : pow(10, 3 * start - 4) * tu_rand() * 10;
      sb_sap_info info;
      int rc = sb_sap_solve(w, nc, W, vfree, R, vhat, mu, x, gamma, &o, &info);
      EXPECT(rc == 0 && info.converged, "problem %d start %d: %s", t, start, info.message);
      worst_iter = info.iterations > worst_iter ? info.iterations : worst_iter;
      int nh;
      const double *hist = sb_sap_cost_history(w, &nh);
      for (int k = 1; k < nh; k++)
        EXPECT(hist[k] <= hist[k - 1] + 1e-12 * fabs(hist[k - 1]) + 1e-300, "problem %d start %d: cost rose %g -> %g",
               t, start, hist[k - 1], hist[k]);
      double kkt = dual_kkt(nc, W, vfree, R, vhat, mu, gamma, vscale);
      EXPECT(kkt <= 1e-6, "problem %d start %d: dual optimality violated by %g", t, start, kkt);
      /* the gradient reported is the one at the answer: recompute it */
      double cost = sb_sap_cost(w, nc, W, vfree, R, vhat, mu, x);
      EXPECT(fabs(cost - info.cost) <= 1e-12 * fmax(1e-12, fabs(cost)), "cost reported %g, recomputed %g", info.cost,
             cost);
      if (start == 0)
        memcpy(first, gamma, m3 * sizeof(double));
      else
        EXPECT(tu_relerr(gamma, first, m3, 1e-9) <= 1e-6, "problem %d: start %d ends elsewhere (%g)", t, start,
               tu_relerr(gamma, first, m3, 1e-9));
    }
    free(W);
  }
  printf("random problems: at most %d Newton iterations (tol 1e-10, starts up to 1e8 off)\n", worst_iter);
  sb_sap_work_free(w);
}

/* A point mass m on a plane tilted by theta (normal (-sin, 0, cos)), one
 * contact through the contact problem; steps n times and returns the final
 * downhill speed, the mean downhill speed over the last half, the gap. */
typedef struct {
  double speed, creep, gap, accel;
  int max_iterations;
  double iterations_mean;
} incline_result;

static incline_result run_incline(double theta, double mu, double k, double sigma, double h, int n) {
  incline_result res = {0};
  char err[256];
  sb_contact_problem *P = sb_contact_create(1, 1, 3, 4, err, sizeof err);
  sb_sap_work *w = sb_sap_work_create(1);
  double m = 2.0, x[3] = {0, 0, 0}, gamma[3];
  pm_incline s;
  pm_incline_init(&s, theta, mu, m, h, -m * G_ACC * cos(theta) / k, 7); /* starts at the static deflection */
  double s0 = 0, s_half = 0, v_half = 0;
  int iters = 0;
  for (int step = 0; step < n; step++) {
    EXPECT(pm_incline_problem(&s, P, err, sizeof err) == 0, "incline problem: %s", err);
    const double *W, *u;
    EXPECT(sb_contact_assemble(P, h, NULL, &W, &u, NULL, err, sizeof err) == 1, "assemble: %s", err);
    double R[3], vhat[3];
    sb_sap_contact_params(h, k, 0, sigma, s.gap, W, R, vhat);
    sb_contact_warm_impulse(P, s.id, x);
    sb_sap_info info;
    EXPECT(sb_sap_solve(w, 1, W, u, R, vhat, &mu, x, gamma, NULL, &info) == 0, "incline step %d: %s", step,
           info.message);
    iters += info.iterations;
    res.max_iterations = info.iterations > res.max_iterations ? info.iterations : res.max_iterations;
    sb_contact_apply_impulses(P, gamma, 4, 1);
    double sd = pm_incline_advance(&s, P);
    s0 += h * sd;
    if (step == n / 2 - 1) {
      s_half = s0;
      v_half = sd;
    }
    res.speed = sd;
  }
  res.creep = (s0 - s_half) / (h * (n - n / 2));
  res.accel = (res.speed - v_half) / (h * (n - n / 2));
  res.gap = s.gap;
  res.iterations_mean = (double)iters / n;
  sb_sap_work_free(w);
  sb_contact_free(P);
  return res;
}

static void test_block_on_plane_and_incline(void) {
  double k = 1e4, sigma = 1e-3, h = 1e-3, mu = 0.5, m = 2.0;
  /* flat: rests at m g / k, no creep */
  incline_result flat = run_incline(0, mu, k, sigma, h, 2000);
  EXPECT(fabs(-flat.gap - m * G_ACC / k) <= 1e-3 * m * G_ACC / k, "flat: penetration %g, m g / k = %g", -flat.gap,
         m * G_ACC / k);
  EXPECT(fabs(flat.creep) <= 1e-12, "flat: creep %g", flat.creep);
  printf("flat: penetration %.6g m (m g / k = %.6g), creep %.3g m/s, %.2f iterations per step (max %d)\n", -flat.gap,
         m * G_ACC / k, flat.creep, flat.iterations_mean, flat.max_iterations);
  /* below tan(theta) = mu: sticks, creeping at sigma g h sin(theta) */
  double below[] = {0.2, 0.4, atan(mu) - 0.02};
  for (int t = 0; t < 3; t++) {
    double th = below[t];
    incline_result r = run_incline(th, mu, k, sigma, h, 2000);
    double creep = sigma * G_ACC * h * sin(th);
    EXPECT(fabs(r.creep - creep) <= 1e-3 * creep, "theta %g: creep %.6g, sigma g h sin = %.6g", th, r.creep, creep);
    EXPECT(fabs(-r.gap - m * G_ACC * cos(th) / k) <= 1e-3 * m * G_ACC * cos(th) / k, "theta %g: penetration %g", th,
           -r.gap);
    EXPECT(r.max_iterations <= 3, "theta %g: %d Newton iterations in a step of a resting contact", th,
           r.max_iterations);
    printf("incline %.3f rad (tan %.3f < mu %.2f): creep %.6g m/s (sigma g h sin = %.6g), %.2f iterations per step\n",
           th, tan(th), mu, r.creep, creep, r.iterations_mean);
  }
  /* above: slides with g (sin - mu cos) */
  double above[] = {atan(mu) + 0.02, 0.7, 1.0};
  for (int t = 0; t < 3; t++) {
    double th = above[t];
    incline_result r = run_incline(th, mu, k, sigma, h, 400);
    double acc = G_ACC * (sin(th) - mu * cos(th));
    EXPECT(fabs(r.accel - acc) <= 1e-3 * acc, "theta %g: acceleration %.6g, g (sin - mu cos) = %.6g", th, r.accel,
           acc);
    printf("incline %.3f rad (tan %.3f > mu): acceleration %.6g m/s^2 (g (sin - mu cos) = %.6g)\n", th, tan(th),
           r.accel, acc);
  }
}

/* A box (the scene of tests/contact_scenes.h: 2 kg, half extents 0.2 x
 * 0.15 x 0.1 m, rotational inertia included) on a plane tilted by theta,
 * four contacts at its bottom corners, stepped with its own velocity. At
 * rest every corner creeps at the same speed v with Rt_i = sigma w_i, w_i =
 * trace(W_ii) / 3 (the same at the four corners by symmetry), so the four
 * friction impulses v / Rt_i balance m g h sin(theta): v = sigma w m g h
 * sin(theta) / 4, with W_ii = I / m + [r]x Iw^-1 [r]x^T computed here; the
 * springs carry m g cos(theta): a mean penetration of m g cos(theta) / (4 k). */
static void test_box_incline(void) {
  double theta = 0.2, mu = 0.5, k = 1e4, d = 10, sigma = 1e-3, h = 1e-3, m = 2.0;
  double a = 0.2, b = 0.15, c = 0.1, Ib[3] = {m * (b * b + c * c) / 3, m * (a * a + c * c) / 3, m * (a * a + b * b) / 3};
  double ct = cos(theta), st = sin(theta), R[9] = {ct, 0, st, 0, 1, 0, -st, 0, ct}; /* about y */
  double nrm[3] = {R[2], R[5], R[8]}, down[3] = {R[0], R[3], R[6]};
  if (down[2] > 0)
    for (int q = 0; q < 3; q++) down[q] = -down[q];
  double M[36] = {0}, Iinv[9];
  for (int q = 0; q < 3; q++) M[7 * q] = m;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      double v = 0, vi = 0;
      for (int q = 0; q < 3; q++) {
        v += R[3 * i + q] * Ib[q] * R[3 * j + q];
        vi += R[3 * i + q] / Ib[q] * R[3 * j + q];
      }
      M[(3 + i) * 6 + 3 + j] = v;
      Iinv[3 * i + j] = vi;
    }
  double r[4][3], jac[4][18], gap[4];
  for (int i = 0; i < 4; i++) {
    double local[3] = {i % 2 ? a : -a, i / 2 ? b : -b, -c};
    for (int q = 0; q < 3; q++) r[i][q] = R[3 * q] * local[0] + R[3 * q + 1] * local[1] + R[3 * q + 2] * local[2];
    double J[18] = {1, 0, 0, 0, r[i][2], -r[i][1], 0, 1, 0, -r[i][2], 0, r[i][0], 0, 0, 1, r[i][1], -r[i][0], 0};
    memcpy(jac[i], J, sizeof J);
    gap[i] = -m * G_ACC * ct / (4 * k);
  }
  /* w = trace(I / m + [r]x Iinv [r]x^T) / 3 = (3 / m + tr(Iinv) |r|^2 - r^T Iinv r) / 3 */
  double rr = 0, rIr = 0, trI = Iinv[0] + Iinv[4] + Iinv[8];
  for (int p = 0; p < 3; p++) {
    rr += r[0][p] * r[0][p];
    for (int q = 0; q < 3; q++) rIr += r[0][p] * Iinv[3 * p + q] * r[0][q];
  }
  double w = (3 / m + trI * rr - rIr) / 3, creep = sigma * w * m * G_ACC * h * st / 4;
  char err[256];
  sb_contact_problem *P = sb_contact_create(4, 1, 6, 4, err, sizeof err);
  sb_sap_work *work = sb_sap_work_create(4);
  double v[6] = {0}, x[12] = {0}, gamma[12], Rr[12], vhat[12], mus[4] = {mu, mu, mu, mu}, dist = 0, pen = 0;
  int n = 4000, iters = 0;
  for (int step = 0; step < n; step++) {
    double vfree[6] = {v[0], v[1], v[2] - G_ACC * h, v[3], v[4], v[5]};
    sb_contact_clear(P);
    int body = sb_contact_add_dense(P, 6, M, vfree, err, sizeof err);
    for (int i = 0; i < 4; i++) {
      sb_contact ct4;
      memset(&ct4, 0, sizeof ct4);
      ct4.side[0].body = body;
      ct4.side[0].jac = jac[i];
      ct4.side[1].body = -1;
      memcpy(ct4.normal, nrm, sizeof nrm);
      memcpy(ct4.tangent, down, sizeof down);
      ct4.gap = gap[i];
      ct4.friction = mu;
      ct4.id = i;
      sb_contact_add(P, &ct4, err, sizeof err);
    }
    const double *W, *u;
    EXPECT(sb_contact_assemble(P, h, NULL, &W, &u, NULL, err, sizeof err) == 4, "box: %s", err);
    for (int i = 0; i < 4; i++) {
      double Wii[9];
      for (int p = 0; p < 3; p++)
        for (int q = 0; q < 3; q++) Wii[3 * q + p] = W[(3 * i + q) * 12 + 3 * i + p];
      if (step == 0)
        EXPECT(fabs((Wii[0] + Wii[4] + Wii[8]) / 3 - w) <= 1e-12 * w, "box: corner %d trace(W_ii) / 3 = %.15g, "
               "analytic %.15g", i, (Wii[0] + Wii[4] + Wii[8]) / 3, w);
      sb_sap_contact_params(h, k, d, sigma, gap[i], Wii, Rr + 3 * i, vhat + 3 * i);
      sb_contact_warm_impulse(P, i, x + 3 * i);
    }
    sb_sap_info info;
    EXPECT(sb_sap_solve(work, 4, W, u, Rr, vhat, mus, x, gamma, NULL, &info) == 0, "box step %d: %s", step,
           info.message);
    iters += info.iterations;
    sb_contact_apply_impulses(P, gamma, 4, 1);
    sb_contact_body_velocity(P, body, v);
    for (int i = 0; i < 4; i++) {
      double vr[3];
      sb_contact_relative_velocity(P, i, vr);
      gap[i] += h * (vr[0] * nrm[0] + vr[1] * nrm[1] + vr[2] * nrm[2]);
    }
    if (step >= n / 2) {
      dist += h * (v[0] * down[0] + v[1] * down[1] + v[2] * down[2]);
      pen = -(gap[0] + gap[1] + gap[2] + gap[3]) / 4;
    }
  }
  double measured = dist / (h * (n - n / 2)), pen_expect = m * G_ACC * ct / (4 * k);
  printf("box on incline %.2f rad, 4 corners: creep %.6g m/s (sigma w m g h sin / 4 = %.6g), mean penetration "
         "%.6g m (m g cos / 4k = %.6g), %.2f Newton iterations per step\n", theta, measured, creep, pen, pen_expect,
         (double)iters / n);
  EXPECT(fabs(measured - creep) <= 0.01 * creep, "box: creep %.6g, analytic %.6g", measured, creep);
  EXPECT(fabs(pen - pen_expect) <= 0.01 * pen_expect, "box: penetration %.6g, analytic %.6g", pen, pen_expect);
  sb_sap_work_free(work);
  sb_contact_free(P);
}

static void test_bad_input(void) {
  sb_sap_work *w = sb_sap_work_create(2);
  double W[36] = {0}, vf[6] = {0}, R[6] = {1, 1, 1, 1, 1, 1}, vh[6] = {0}, mu[2] = {0.5, 0.5}, x[6], g[6];
  for (int k = 0; k < 6; k++) W[7 * k] = 1;
  R[4] = 0;
  sb_sap_info info;
  EXPECT(sb_sap_solve(w, 2, W, vf, R, vh, mu, x, g, NULL, &info) == -1 && strstr(info.message, "regularization"),
         "R = 0 refused: %s", info.message);
  R[4] = 1;
  W[5] = NAN;
  EXPECT(sb_sap_solve(w, 2, W, vf, R, vh, mu, x, g, NULL, &info) == -1 && strstr(info.message, "Delassus"),
         "NaN in W refused: %s", info.message);
  W[5] = 0;
  EXPECT(sb_sap_solve(w, 3, W, vf, R, vh, mu, x, g, NULL, &info) == -1 && strstr(info.message, "workspace"),
         "too many contacts refused: %s", info.message);
  sb_sap_work_free(w);
}

int main(void) {
  test_projection();
  test_random_problems();
  test_block_on_plane_and_incline();
  test_box_incline();
  test_bad_input();
  return test_report("sap");
}

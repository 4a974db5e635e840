/* The complementarity polish (plan/mpcc_polish.h) on a short horizon.
 *
 * 0. The pairs it fixes are the rows' pairs (products, bounds, no overlap).
 * 1. The same relaxed solve without and with the polish (the solve is
 *    deterministic, so the first is the relaxed plan the second polished):
 *    the polished plan's complementarity recomputed from the contact geometry
 *    (max |min(a, b)| over every pair, and gap against fz step by step from
 *    plan_mpcc_contact) at IPOPT's row tolerance, not Scholtes' sqrt(eps);
 *    its motion replayed with the simulator's integrator (sb_step); the
 *    Scholtes NLP's rows and bounds still hold (the tightened NLP's feasible
 *    set lies inside the relaxed one), so its objective cannot fall below the
 *    relaxed optimum's (beyond IPOPT's tolerance), and the ball still turns.
 *    On the steps without contact gamma is the least value its slip rows
 *    allow (mpcc_polish.c, tighten), not a point along its free ray.
 * 2. A tightened NLP with no solution: a plan that claims a normal force at
 *    the first step while the disk hangs 2 cm from the ball makes the polish
 *    fix that gap to zero, and a velocity bound too small to close 2 cm in
 *    one step makes it infeasible. The polish must fail and leave the plan
 *    bit for bit as it was.
 * 3. An iteration cap of none on the polish of a relaxed solution: it fails,
 *    and the solve's plan and figures are the unpolished solve's.
 * 4. The last relaxation stopped by its own cap (max_iter_last) at a
 *    feasible point: the polish runs from there and its converged answer is
 *    the plan (complementary to IPOPT's tolerance, the rows and sb_step
 *    holding), while the stage still reports the relaxation's status
 *    (Maximum_Iterations_Exceeded, relaxed_capped); a cap that leaves the
 *    point infeasible skips the polish and the stage fails.
 * 5. The same on the task about y as cusp-plan's y defaults solve it (the
 *    disk first moved to the ball's side, terminal weight 300, the last
 *    relaxation capped at 20) on 20 steps of 0.04 s: polished to a converged,
 *    complementary plan that turns the ball. */
#include <string.h>

#include "mpcc.h"
#include "mpcc_polish.h"
#include "testutil.h"

#define STAGE_BUDGET 4   /* test 4's stage budget: spent in the first relaxation (which needs tens) */

static plan_mpcc_params small_task(void) {
  plan_mpcc_params P = plan_mpcc_rotate_task(0);
  P.N = 5;
  P.T = 0.2;         /* the paper's step, h = 0.04 s */
  P.angle = 0.2;
  P.eps = 1e-7;
  P.tol = 1e-6;
  /* the dynamic stage's budget: its path's length follows the round-off (over 400 on one OpenBLAS kernel,
     docs/contact_scaling.md, session 21), and a budget is not what these tests are about */
  P.max_iter = 3000;
  P.max_iter_kinematic = 200;
  P.acceptable_tol = 0;
  P.acceptable_iter = 0;
  P.lbfgs_memory = 6;
  P.exact_hessian = 2;
  return P;
}

/* The kinematic stage, then the dynamic stage from it (tau by inverse
 * dynamics), as cusp-plan --warm does. Returns plan_mpcc_solve's code. */
static int plan(const plan_mpcc_params *P, double *z, plan_mpcc_stage *dyn, double *step_residual) {
  char err[256];
  plan_mpcc *p = plan_mpcc_create(P, err, sizeof err);
  EXPECT(p != NULL, "create: %s", err);
  if (!p) return -1;
  plan_mpcc_rest_guess(p, z);
  plan_mpcc_stage kin;
  plan_mpcc_solve(p, 0, z, &kin);
  plan_mpcc_inverse_dynamics(p, z);
  int rc = plan_mpcc_solve(p, 1, z, dyn);
  *step_residual = plan_mpcc_step_residual(p, z);
  plan_mpcc_free(p);
  return rc;
}

/* max |min(gap, fz)| and the most negative gap or fz, step by step. */
static double normal_complementarity(const plan_mpcc_params *P, const double *z, double *most_negative) {
  char err[256];
  plan_mpcc *p = plan_mpcc_create(P, err, sizeof err);
  double worst = INFINITY;
  *most_negative = -INFINITY;
  if (!p) return worst;
  worst = 0;
  *most_negative = 0;
  for (int k = 0; k < P->N; k++) {
    double gap, fz;
    plan_mpcc_contact(p, z, k, &gap, &fz, NULL);
    worst = fmax(worst, fabs(fmin(gap, fz)));
    *most_negative = fmin(*most_negative, fmin(gap, fz));
  }
  plan_mpcc_free(p);
  return worst;
}

/* On the steps without force (fz and every ft zero), the largest of gamma's
 * excess over the least value its slip rows D_j nu + gamma >= 0 allow (the
 * smallest slip row where gamma > 0), and their number in *off. */
static double gamma_excess(const plan_mpcc_params *P, const double *z, int *off) {
  char err[256];
  plan_mpcc *p = plan_mpcc_create(P, err, sizeof err);
  *off = 0;
  if (!p) return INFINITY;
  int nv = plan_mpcc_nvars(p), m = plan_mpcc_nconstraints(p, 1), np = P->N * (2 + P->d);
  double *b = malloc(sizeof(double) * (2 * (size_t)nv + 3 * (size_t)m)), worst = 0;
  int *idx = malloc(sizeof(int) * 3 * (size_t)np);
  double *xl = b, *xu = xl + nv, *gl = xu + nv, *gu = gl + m, *g = gu + m;
  plan_mpcc_nlp_bounds(p, 1, xl, xu, gl, gu);
  plan_mpcc_nlp_rows(p, z, g);
  plan_mpcc_complementarity_pairs(p, idx, idx + np, idx + 2 * np);
  for (int e = 0; e < np; e += 2 + P->d) {
    int forceless = z[idx[2 * np + e]] == 0;
    for (int j = 0; j < P->d; j++) forceless &= z[idx[2 * np + e + 2 + j]] == 0;
    if (!forceless) continue;
    double gamma = z[idx[2 * np + e + 1]], least = INFINITY;
    for (int j = 0; j < P->d; j++) least = fmin(least, g[idx[e + 2 + j]]);
    (*off)++;
    if (gamma > 0) worst = fmax(worst, fabs(least));
  }
  free(b);
  free(idx);
  plan_mpcc_free(p);
  return worst;
}

static void test_polish_relaxed(double **z_relaxed_out, int *nv_out, plan_mpcc_stage *relaxed_out) {
  plan_mpcc_params P = small_task();
  char err[256];
  plan_mpcc *p = plan_mpcc_create(&P, err, sizeof err);
  if (!p) { EXPECT(0, "create: %s", err); return; }
  int nv = plan_mpcc_nvars(p);
  plan_mpcc_free(p);
  double *zr = malloc(sizeof(double) * nv), *zp = malloc(sizeof(double) * nv);
  plan_mpcc_stage relaxed, polished;
  double res_r, res_p;
  int rc = plan(&P, zr, &relaxed, &res_r);
  EXPECT(rc == 0, "relaxed solve: IPOPT status %d", relaxed.status);
  EXPECT(relaxed.polish.status == PLAN_MPCC_POLISH_OFF, "polish ran though not asked for (status %d)", relaxed.polish.status);
  P.polish = 1;
  P.polish_certify = 1;
  rc = plan(&P, zp, &polished, &res_p);
  const plan_mpcc_polish_result *r = &polished.polish;
  printf("relaxed: complementarity %.3g (products %.3g), objective %.9f, quaternion error %.3g\n",
         relaxed.complementarity, relaxed.complementarity_product, relaxed.objective, relaxed.quaternion_error);
  printf("polish: %s, IPOPT %d in %d iterations, %.2f s; fixed %d rows, %d variables; complementarity %.3g -> %.3g, "
         "objective %.9f -> %.9f; %d biactive (%d with a negative multiplier, min %.3g); relaxed NLP: IPOPT %d in %d "
         "iterations, objective %.9f, complementarity %.3g; stationarity %s\n",
         plan_mpcc_polish_status_name(r->status), r->ipopt_status, r->iterations, r->solve_s, r->fixed_rows,
         r->fixed_vars, r->complementarity_before, r->complementarity_after, r->objective_before, r->objective_after,
         r->biactive, r->biactive_negative, r->min_biactive_multiplier, r->rnlp_status, r->rnlp_iterations,
         r->rnlp_objective, r->rnlp_complementarity, plan_mpcc_stationarity_name(r->stationarity));
  EXPECT(rc == 0, "polished solve: status %d", polished.status);
  EXPECT(r->status == PLAN_MPCC_POLISH_ACCEPTED, "polish not accepted: %s (IPOPT %d)", plan_mpcc_polish_status_name(r->status),
         r->ipopt_status);
  /* before the polish, the same relaxed solution as the run without it */
  EXPECT(r->complementarity_before == relaxed.complementarity, "complementarity before the polish %.17g, relaxed solve's %.17g",
         r->complementarity_before, relaxed.complementarity);
  EXPECT(relaxed.complementarity > 1e-6, "the relaxed plan is already complementary (%g): the test shows nothing",
         relaxed.complementarity);
  /* every pair of the polished plan, recomputed from the contact geometry */
  /* the fixed sides hold to IPOPT's tolerance on its scaled rows (the relaxed plan: 4e-5 here); the goal is 1e-6 */
  EXPECT(polished.complementarity <= 1e-7, "polished max |min(a, b)| = %g > 1e-7", polished.complementarity);
  EXPECT(polished.complementarity_product <= 1e-9, "polished max a b = %g", polished.complementarity_product);
  EXPECT(r->fixed_rows + r->fixed_vars + r->implied_rows == P.N * (2 + P.d), "%d + %d + %d pairs fixed or implied of %d",
         r->fixed_rows, r->fixed_vars, r->implied_rows, P.N * (2 + P.d));
  double neg, cn = normal_complementarity(&P, zp, &neg);
  EXPECT(cn <= 1e-7, "gap against fz: max |min| %g", cn);
  EXPECT(neg >= -1e-8, "a gap or normal force below zero: %g", neg);
  /* a step without contact leaves gamma (the slip speed) free in the MPCC above the least value its slip rows
     allow; the polished plan takes that value, the friction LCP's answer, not wherever IPOPT stopped */
  int off;
  double ge = gamma_excess(&P, zp, &off);
  EXPECT(off >= 1 && ge <= 1e-12, "steps without contact: %d, gamma above its least value by %g", off, ge);
  /* the motion is still the simulator's, and the Scholtes NLP's rows and bounds hold */
  EXPECT(res_p < 1e-7, "polished plan vs sb_step: residual %g", res_p);
  /* unscaled: IPOPT stops on its gradient-scaled rows, and the largest is the ball's angular-velocity row
   * (rad/s; times h = 0.04 s, an angle of 1.5e-8 rad) */
  EXPECT(polished.constraint_violation < 1e-6, "polished plan: NLP constraint violation %g", polished.constraint_violation);
  /* a restriction of the relaxed NLP: no better than its optimum */
  EXPECT(r->objective_after >= r->objective_before - 1e-6 * (1 + fabs(r->objective_before)),
         "objective fell from %.12g to %.12g", r->objective_before, r->objective_after);
  double still = sin(0.5 * P.angle) * sin(0.5 * P.angle);
  EXPECT(polished.quaternion_error < 0.1 * still, "polished quaternion error %g vs %g without motion",
         polished.quaternion_error, still);
  EXPECT(r->stationarity != PLAN_MPCC_STATIONARY_UNKNOWN, "stationarity not classified");
  /* the relaxed NLP runs exactly when IPOPT's multipliers leave the stationarity open; when it certifies,
     it found no lower objective than the plan's (or a complementary plan that is lower: then the plan's) */
  EXPECT((r->rnlp_status != PLAN_MPCC_RNLP_NOT_RUN) == (r->biactive_negative > 0), "relaxed NLP run %d with %d negative "
         "multipliers", r->rnlp_status != PLAN_MPCC_RNLP_NOT_RUN, r->biactive_negative);
  if (r->rnlp_certified)
    EXPECT(r->rnlp_objective >= r->objective_after - 1e-6 * (1 + fabs(r->objective_after)),
           "certified, yet the relaxed NLP's objective %.12g is below the plan's %.12g", r->rnlp_objective,
           r->objective_after);
  EXPECT(polished.solve_s >= r->solve_s, "the stage's time %g leaves out the polish's %g", polished.solve_s, r->solve_s);
  *z_relaxed_out = zr;
  *nv_out = nv;
  *relaxed_out = relaxed;
  free(zp);
}

/* The pairs the polish fixes are the rows' pairs: at a point with every
 * force and velocity nonzero, each product row is its side row times its
 * variable, and every pair's side row and variable appear once. */
static void test_pairs(void) {
  plan_mpcc_params P = small_task();
  char err[256];
  plan_mpcc *p = plan_mpcc_create(&P, err, sizeof err);
  if (!p) { EXPECT(0, "create: %s", err); return; }
  int nv = plan_mpcc_nvars(p), m = plan_mpcc_nconstraints(p, 1), np = P.N * (2 + P.d);
  double *z = malloc(sizeof(double) * (5 * (size_t)nv + 3 * (size_t)m));
  double *xl = z + nv, *xu = xl + nv, *gl = xu + nv, *gu = gl + m, *g = gu + m;
  int *idx = malloc(sizeof(int) * 3 * (size_t)np), *seen = calloc((size_t)m + nv, sizeof(int));
  plan_mpcc_rest_guess(p, z);
  unsigned long long seed = 0x2545F4914F6CDD1Dull;
  for (int i = plan_mpcc_block(p); i < nv; i++) z[i] += 0.5 * tu_rand_r(&seed);
  plan_mpcc_nlp_bounds(p, 1, xl, xu, gl, gu);
  plan_mpcc_nlp_rows(p, z, g);
  int got = plan_mpcc_complementarity_pairs(p, idx, idx + np, idx + 2 * np);
  EXPECT(got == np, "%d pairs, expected N (2 + d) = %d", got, np);
  double worst = 0;
  int dup = 0, bounds = 0;
  for (int e = 0; e < got; e++) {
    int ra = idx[e], rp = idx[np + e], vb = idx[2 * np + e];
    worst = fmax(worst, fabs(g[rp] - g[ra] * z[vb]) / fmax(1e-12, fabs(g[rp])));
    dup += seen[ra]++ + seen[rp]++ + seen[m + vb]++;
    /* Scholtes' rows: the side a >= 0, the product <= eps; the variable b >= 0 */
    bounds += gl[ra] != 0 || gu[ra] < 1e19 || gu[rp] != P.eps || xl[vb] != 0;
  }
  EXPECT(worst < 1e-12, "a product row is not its side row times its variable: relative %g", worst);
  EXPECT(dup == 0, "%d rows or variables in two pairs", dup);
  EXPECT(bounds == 0, "%d pairs whose bounds are not a >= 0, a b <= eps, b >= 0", bounds);
  free(z);
  free(idx);
  free(seen);
  plan_mpcc_free(p);
}

/* 2: a tightened NLP without a solution. */
static void test_infeasible(void) {
  plan_mpcc_params P = small_task();
  P.v_bound = 1e-3;   /* |q_1 - q_0| <= h v_bound = 4e-5 per coordinate: the disk cannot close 2 cm */
  P.polish = 1;
  char err[256];
  plan_mpcc *p = plan_mpcc_create(&P, err, sizeof err);
  if (!p) { EXPECT(0, "create: %s", err); return; }
  int nv = plan_mpcc_nvars(p), n = plan_mpcc_n(p);
  double *z = malloc(sizeof(double) * nv), *z0 = malloc(sizeof(double) * nv);
  plan_mpcc_rest_guess(p, z);
  double gap, fz;
  plan_mpcc_contact(p, z, 0, &gap, &fz, NULL);
  z[(size_t)2 * n + 7 + n] = 1;   /* fz_0 = 1 N > gap_0: the polish fixes gap_0 = 0 */
  memcpy(z0, z, sizeof(double) * nv);
  plan_mpcc_polish_result r;
  int rc = plan_mpcc_polish(p, z, NULL, &r);
  printf("infeasible polish: %s, IPOPT %d after %d iterations (gap_0 %.4g m), violation %.3g\n",
         plan_mpcc_polish_status_name(r.status), r.ipopt_status, r.iterations, gap, r.constraint_violation);
  EXPECT(gap > 0.015, "the rest gap %g", gap);
  EXPECT(rc == -1 && r.status == PLAN_MPCC_POLISH_FAILED, "the infeasible polish reports %s (IPOPT %d)",
         plan_mpcc_polish_status_name(r.status), r.ipopt_status);
  EXPECT(r.ipopt_status != 0 && r.ipopt_status != 1, "IPOPT claims success (%d) on an infeasible NLP", r.ipopt_status);
  EXPECT(r.fixed_rows >= 1, "no row fixed (%d)", r.fixed_rows);
  EXPECT(!memcmp(z, z0, sizeof(double) * nv), "the failed polish changed the plan");
  EXPECT(r.complementarity_after == r.complementarity_before, "complementarity after a failed polish %g, before %g",
         r.complementarity_after, r.complementarity_before);
  free(z);
  free(z0);
  plan_mpcc_free(p);
}

/* 3: the polish stopped by its iteration cap leaves the solve's plan and
 * figures those of the solve without it. The cap allows no iteration: a
 * cap of 1 fails only where IPOPT's first step leaves the dual infeasibility
 * above its tolerance, which near the relaxed point it may not (a Newton
 * step from sides of 4e-5), so the test would follow the round-off; the
 * start point violates the fixed sides by the relaxed plan's
 * complementarity (> 1e-6, test 1), far above the rows' tolerance. */
static void test_capped(const double *z_relaxed, int nv, const plan_mpcc_stage *relaxed) {
  plan_mpcc_params P = small_task();
  P.polish = 1;
  P.polish_max_iter = -1;
  double *z = malloc(sizeof(double) * nv), res;
  plan_mpcc_stage dyn;
  plan(&P, z, &dyn, &res);
  printf("capped polish: %s, IPOPT %d after %d iterations, the tightened NLP's start violated by %.3g\n",
         plan_mpcc_polish_status_name(dyn.polish.status), dyn.polish.ipopt_status, dyn.polish.iterations,
         dyn.polish.constraint_violation);
  EXPECT(dyn.polish.status == PLAN_MPCC_POLISH_FAILED && dyn.polish.iterations == 0,
         "polish capped at no iteration: %s after %d iterations", plan_mpcc_polish_status_name(dyn.polish.status),
         dyn.polish.iterations);
  EXPECT(dyn.polish.constraint_violation > 1e-6, "the tightened NLP's start point is feasible (%g): the test shows "
         "nothing", dyn.polish.constraint_violation);
  EXPECT(!memcmp(z, z_relaxed, sizeof(double) * nv), "a failed polish changed the plan");
  EXPECT(dyn.complementarity == relaxed->complementarity && dyn.quaternion_error == relaxed->quaternion_error,
         "the figures after a failed polish (%g, %g) are not the relaxed plan's (%g, %g)", dyn.complementarity,
         dyn.quaternion_error, relaxed->complementarity, relaxed->quaternion_error);
  free(z);
}

/* 4: the polish from a last relaxation stopped at its cap. The cap is half
 * the iterations the same last relaxation takes uncapped (without the
 * polish, which leaves it uncapped), measured first: how many that is
 * follows the round-off (OpenBLAS's kernel, the mass matrix's summation
 * order: docs/contact_scaling.md, session 21), and a fixed cap at or above
 * it tests nothing. */
static void test_polish_capped_relaxation(void) {
  plan_mpcc_params P = small_task();
  P.polish = 0;
  double *z = NULL, res;
  char err[256];
  plan_mpcc *p = plan_mpcc_create(&P, err, sizeof err);
  if (!p) { EXPECT(0, "create: %s", err); return; }
  z = malloc(sizeof(double) * plan_mpcc_nvars(p));
  plan_mpcc_free(p);
  plan_mpcc_stage dyn;
  int rc = plan(&P, z, &dyn, &res);
  int nr = dyn.homotopy_steps, uncapped = dyn.relaxation[nr - 1].iterations, last_cap = uncapped / 2;
  printf("uncapped last relaxation: %d iterations, IPOPT %d, rc %d\n", uncapped, dyn.status, rc);
  EXPECT(rc == 0 && uncapped >= 2, "the uncapped solve: rc %d, its last relaxation %d iterations (a cap needs 2)", rc,
         uncapped);
  if (last_cap < 1) last_cap = 1;
  P.polish = 1;
  P.max_iter_last = last_cap;
  rc = plan(&P, z, &dyn, &res);
  const plan_mpcc_polish_result *r = &dyn.polish;
  nr = dyn.homotopy_steps;
  printf("capped last relaxation (%d iterations, IPOPT %d, relaxed violation %.3g): polish %s, IPOPT %d after %d "
         "iterations; complementarity %.3g -> %.3g, quaternion error %.3g, sb_step %.3g\n",
         dyn.relaxation[nr - 1].iterations, dyn.status, dyn.relaxed_violation, plan_mpcc_polish_status_name(r->status),
         r->ipopt_status, r->iterations, r->complementarity_before, dyn.complementarity, dyn.quaternion_error, res);
  EXPECT(dyn.relaxation[nr - 1].iterations == last_cap && dyn.status == -1 && dyn.relaxed_capped,
         "the last relaxation was not stopped by its cap (%d iterations, status %d, capped %d)",
         dyn.relaxation[nr - 1].iterations, dyn.status, dyn.relaxed_capped);
  EXPECT(r->complementarity_before > 1e-6, "the capped point is already complementary (%g): the test shows nothing",
         r->complementarity_before);
  EXPECT(rc == 0 && r->status == PLAN_MPCC_POLISH_ACCEPTED, "polish from the capped point: rc %d, %s (IPOPT %d)", rc,
         plan_mpcc_polish_status_name(r->status), r->ipopt_status);
  EXPECT(dyn.complementarity <= 1e-7, "polished max |min(a, b)| = %g", dyn.complementarity);
  EXPECT(res < 1e-7, "polished plan vs sb_step: residual %g", res);
  EXPECT(dyn.constraint_violation < 1e-6, "polished plan: NLP constraint violation %g", dyn.constraint_violation);
  double still = sin(0.5 * P.angle) * sin(0.5 * P.angle);
  EXPECT(dyn.quaternion_error < 0.1 * still, "polished quaternion error %g vs %g without motion", dyn.quaternion_error,
         still);
  /* one iteration of the last relaxation leaves it far from feasible: no polish, and the stage fails */
  P.max_iter_last = 1;
  P.max_iter_relaxed = 1;
  rc = plan(&P, z, &dyn, &res);
  printf("last relaxation capped at 1 (relaxations capped at 1): relaxed violation %.3g, polish %s, rc %d\n",
         dyn.relaxed_violation, plan_mpcc_polish_status_name(dyn.polish.status), rc);
  EXPECT(dyn.relaxed_capped && dyn.relaxed_violation > 1e-4, "capped at 1: capped %d, violation %g", dyn.relaxed_capped,
         dyn.relaxed_violation);
  EXPECT(rc == -1 && dyn.polish.status == PLAN_MPCC_POLISH_SKIPPED, "an infeasible capped point: rc %d, polish %s", rc,
         plan_mpcc_polish_status_name(dyn.polish.status));
  /* without the polish the cap has nothing to hand its point to: the last relaxation runs on */
  P.max_iter_relaxed = small_task().max_iter_relaxed;   /* the uncapped solve's, which this one must repeat */
  P.max_iter_last = last_cap;
  P.polish = 0;
  rc = plan(&P, z, &dyn, &res);
  nr = dyn.homotopy_steps;
  printf("no polish, last relaxation's cap %d: %d iterations, IPOPT %d, rc %d\n", last_cap,
         dyn.relaxation[nr - 1].iterations, dyn.status, rc);
  EXPECT(dyn.relaxation[nr - 1].iterations == uncapped && !dyn.relaxed_capped,
         "without the polish the last relaxation was capped (%d iterations, capped %d)", dyn.relaxation[nr - 1].iterations,
         dyn.relaxed_capped);
  /* the stage's budget spent before the last relaxation is not the last relaxation's cap */
  P.polish = 1;
  P.max_iter = STAGE_BUDGET;
  rc = plan(&P, z, &dyn, &res);
  nr = dyn.homotopy_steps;
  printf("stage budget %d: %d relaxations, the last at eps %.1e after %d iterations, capped %d, rc %d\n", STAGE_BUDGET, nr,
         dyn.relaxation[nr - 1].eps, dyn.relaxation[nr - 1].iterations, dyn.relaxed_capped, rc);
  EXPECT(dyn.relaxation[nr - 1].eps > P.eps && !dyn.relaxed_capped && rc == -1,
         "a budget spent at eps %g (not the last relaxation's %g) was taken as its cap (capped %d, rc %d)",
         dyn.relaxation[nr - 1].eps, P.eps, dyn.relaxed_capped, rc);
  free(z);
}

/* 5: about y, cusp-plan's y defaults on a short horizon. */
static void test_polish_capped_y(void) {
  plan_mpcc_params P = plan_mpcc_rotate_task(1);
  P.N = 20;
  P.T = 0.8;
  P.angle = 0.31416;
  P.max_iter_relaxed = 40;
  P.max_iter_last = 20;   /* uncapped, this instance's last relaxation takes 54 */
  P.max_iter = 400;
  P.exact_hessian = 2;
  P.terminal_weight = 300;
  P.offaxis_angle = 90 * M_PI / 180;
  P.polish = 1;
  char err[256];
  plan_mpcc *p = plan_mpcc_create(&P, err, sizeof err);
  if (!p) { EXPECT(0, "create: %s", err); return; }
  double *z = malloc(sizeof(double) * plan_mpcc_nvars(p)), normal[3];
  plan_mpcc_rest_guess(p, z);
  double lever = plan_mpcc_offaxis_guess(p, z, normal);
  EXPECT(lever > 0.9, "off-axis guess: lever %g", lever);
  plan_mpcc_inverse_dynamics(p, z);
  plan_mpcc_stage dyn;
  int rc = plan_mpcc_solve(p, 1, z, &dyn);
  double res = plan_mpcc_step_residual(p, z);
  const plan_mpcc_polish_result *r = &dyn.polish;
  printf("about y, last relaxation capped at %d: polish %s, IPOPT %d after %d iterations; complementarity %.3g -> %.3g, "
         "quaternion error %.3g, sb_step %.3g, %.2f CPU s\n", dyn.relaxation[dyn.homotopy_steps - 1].iterations,
         plan_mpcc_polish_status_name(r->status), r->ipopt_status, r->iterations, r->complementarity_before,
         dyn.complementarity, dyn.quaternion_error, res, dyn.solve_s);
  /* whether the last relaxation reaches its cap of 20 or converges before it follows the round-off (it
     converges on one OpenBLAS kernel): the plan's outcome is asserted, the capped path is test 4's */
  EXPECT(rc == 0 && r->status == PLAN_MPCC_POLISH_ACCEPTED, "about y: rc %d, polish %s (IPOPT %d)", rc,
         plan_mpcc_polish_status_name(r->status), r->ipopt_status);
  EXPECT(dyn.complementarity <= 1e-7, "about y: max |min(a, b)| = %g", dyn.complementarity);
  EXPECT(res < 1e-7, "about y: plan vs sb_step: residual %g", res);
  EXPECT(dyn.constraint_violation < 1e-6, "about y: NLP constraint violation %g", dyn.constraint_violation);
  /* at rest the error would be sin^2(angle / 2) = 0.024 */
  EXPECT(dyn.quaternion_error < 2e-5, "about y: quaternion error %g", dyn.quaternion_error);
  free(z);
  plan_mpcc_free(p);
}

/* cusp-plan --hessian lbfgs: with exact_hessian 0 the polish is limited-memory too (issue 18's "the
 * Hessian exact or limited-memory"), and it still makes the short plan complementary; with exact_hessian 2
 * the same plan evaluates the Hessian (the counter is not stuck at 0). */
static void test_polish_limited_memory(void) {
  long evaluations[2] = {-1, -1};
  for (int exact = 0; exact <= 2; exact += 2) {
    plan_mpcc_params P = small_task();
    P.exact_hessian = exact;
    P.polish = 1;
    char err[256];
    plan_mpcc *p = plan_mpcc_create(&P, err, sizeof err);
    if (!p) { EXPECT(0, "create: %s", err); return; }
    double *z = malloc(sizeof(double) * plan_mpcc_nvars(p));
    plan_mpcc_rest_guess(p, z);
    plan_mpcc_stage kin, dyn;
    plan_mpcc_solve(p, 0, z, &kin);
    plan_mpcc_inverse_dynamics(p, z);
    int rc = plan_mpcc_solve(p, 1, z, &dyn);
    evaluations[exact / 2] = plan_mpcc_hessian_evaluations(p);
    const plan_mpcc_polish_result *r = &dyn.polish;
    printf("exact_hessian %d: status %d, polish %s (IPOPT %d in %d iterations), complementarity %.3g -> %.3g, "
           "quaternion error %.3g, %ld Hessian evaluations\n", exact, dyn.status, plan_mpcc_polish_status_name(r->status),
           r->ipopt_status, r->iterations, r->complementarity_before, dyn.complementarity, dyn.quaternion_error,
           evaluations[exact / 2]);
    if (exact == 0) {
      EXPECT(rc == 0, "limited memory throughout: status %d", dyn.status);
      EXPECT(r->status == PLAN_MPCC_POLISH_ACCEPTED, "limited-memory polish not accepted: %s (IPOPT %d)",
             plan_mpcc_polish_status_name(r->status), r->ipopt_status);
      EXPECT(r->iterations > 0 && dyn.complementarity <= 1e-7 && r->complementarity_before > 1e-6,
             "limited-memory polish: %d iterations, complementarity %g -> %g", r->iterations, r->complementarity_before,
             dyn.complementarity);
      double still = sin(0.5 * P.angle) * sin(0.5 * P.angle);
      EXPECT(dyn.quaternion_error < 0.1 * still, "limited memory: quaternion error %g vs %g without motion",
             dyn.quaternion_error, still);
    }
    free(z);
    plan_mpcc_free(p);
  }
  EXPECT(evaluations[0] == 0, "exact_hessian 0: the Hessian evaluated %ld times (the polish's?)", evaluations[0]);
  EXPECT(evaluations[1] > 0, "exact_hessian 2: no Hessian evaluation counted");
}

int main(void) {
  double *z_relaxed = NULL;
  int nv = 0;
  plan_mpcc_stage relaxed;
  test_pairs();
  test_polish_relaxed(&z_relaxed, &nv, &relaxed);
  test_infeasible();
  if (z_relaxed) test_capped(z_relaxed, nv, &relaxed);
  test_polish_capped_relaxation();
  test_polish_capped_y();
  test_polish_limited_memory();
  free(z_relaxed);
  return test_report("plan_mpcc_polish");
}

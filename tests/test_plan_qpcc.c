/* QPCC (seed 002): the jumping particle, its "cannot jump" twin, and a
 * sliding particle whose static-contact QP is infeasible (the MLCP guess).
 * Expected values are the seed's closed forms, not the solver's output. */
#include <string.h>

#include "qpcc.h"
#include "testutil.h"

enum { N3 = 3, D4 = 4 };
static const double m = 1.5, h = 0.01, grav = 9.81, mu = 0.6;

/* A particle on the ground y = 0: velocity (vx, vy, vz), one contact with
 * normal +y and the pyramid +x, -x, +z, -z; one control pushing along +y. */
typedef struct {
  double M[9], A[3], f[3], N[3], D[12], mu[1], u_lb[1], u_ub[1], H[16];
  plan_qpcc p;
} particle;

static void particle_init(particle *s, double f_ub, double push_x) {
  memset(s, 0, sizeof *s);
  for (int i = 0; i < 3; i++) s->M[i * 3 + i] = m;
  s->A[1] = h;                             /* control force along N, times the step */
  s->f[0] = h * push_x;                    /* m v^n = 0 plus the step's external impulse */
  s->f[1] = -h * m * grav;
  s->N[1] = 1;
  const double dirs[4][3] = {{1, 0, 0}, {-1, 0, 0}, {0, 0, 1}, {0, 0, -1}};
  for (int k = 0; k < 4; k++)
    for (int r = 0; r < 3; r++) s->D[r * 4 + k] = dirs[k][r];
  s->mu[0] = mu;
  s->u_lb[0] = 0;
  s->u_ub[0] = f_ub;
  s->H[3 * 4 + 3] = -2;                    /* G = -f^2: jump as high as possible */
  s->p = (plan_qpcc){.n = 3, .nu = 1, .nc = 1, .d = 4, .h = h, .M = s->M, .A = s->A, .f = s->f,
                     .N = s->N, .D = s->D, .mu = s->mu, .u_lb = s->u_lb, .u_ub = s->u_ub,
                     .H = s->H};
}

/* ||M v - f - A u - h (N fn + D ft)||inf, recomputed here. */
static double dynamics_residual(const particle *s, const double *x) {
  const double *v = x, u = x[3], fn = x[4], *ft = x + 5;
  double r = 0;
  for (int i = 0; i < 3; i++) {
    double ri = m * v[i] - s->f[i] - s->A[i] * u - h * s->N[i] * fn;
    for (int k = 0; k < 4; k++) ri -= h * s->D[i * 4 + k] * ft[k];
    r = fmax(r, fabs(ri));
  }
  return r;
}

/* max |min(a, b)| over the pairs, and the most negative side, recomputed here. */
static void pair_check(const double *x, double *comp, double *neg) {
  const double *v = x, fn = x[4], *ft = x + 5, lam = x[9];
  double a[6] = {fn, ft[0], ft[1], ft[2], ft[3], lam};
  double b[6] = {v[1], v[0] + lam, -v[0] + lam, v[2] + lam, -v[2] + lam,
                 mu * fn - ft[0] - ft[1] - ft[2] - ft[3]};
  *comp = 0;
  *neg = 0;
  for (int k = 0; k < 6; k++) {
    *comp = fmax(*comp, fabs(fmin(a[k], b[k])));
    *neg = fmin(*neg, fmin(a[k], b[k]));
  }
}

static void test_jump(void) {
  particle s;
  double f_ub = 2 * m * grav;
  particle_init(&s, f_ub, 0);
  int nx = plan_qpcc_nx(&s.p);
  EXPECT(nx == 10, "nx = %d", nx);
  double x[10], first[10], comp, neg;
  unsigned char spec[6];
  plan_qpcc_info info;
  plan_qpcc_status st = plan_qpcc_solve(&s.p, NULL, x, first, spec, &info);
  EXPECT(st == PLAN_QPCC_SOLVED, "status %s: %s", plan_qpcc_status_name(st), info.message);
  /* seed 002: the first (static) QP's minimizer is (0, |m g|, 0, 0, 0) */
  EXPECT(tu_maxabs(first, 3) < 1e-7, "first QP v = (%g, %g, %g)", first[0], first[1], first[2]);
  EXPECT(fabs(first[3] - m * grav) < 1e-6, "first QP f = %.9g, expected m g = %.9g", first[3], m * grav);
  EXPECT(tu_maxabs(first + 4, 6) < 1e-6, "first QP contact forces not 0 (fn %g)", first[4]);
  /* the optimum: f = f_ub, the contact breaks, found by the 2nd QP */
  EXPECT(fabs(info.fval + f_ub * f_ub) < 1e-6 * f_ub * f_ub, "f* = %.12g, expected %.12g", info.fval, -f_ub * f_ub);
  EXPECT(fabs(x[3] - f_ub) < 1e-7 * f_ub, "f = %.12g, expected f_ub = %.12g", x[3], f_ub);
  double vy = h / m * (f_ub - m * grav);
  EXPECT(fabs(x[1] - vy) < 1e-9, "vy = %.12g, expected %.12g", x[1], vy);
  EXPECT(fabs(x[0]) < 1e-9 && fabs(x[2]) < 1e-9, "tangential v (%g, %g)", x[0], x[2]);
  EXPECT(tu_maxabs(x + 4, 6) < 1e-7, "contact forces / slack not 0 after the break");
  EXPECT(spec[0] == 1, "normal pair not pivoted to separation (spec %d)", spec[0]);
  EXPECT(info.best_iteration == 2, "optimum found at iteration %d, expected 2", info.best_iteration);
  EXPECT(!info.used_mlcp_guess, "static contact was feasible");
  EXPECT(dynamics_residual(&s, x) < 1e-9, "dynamics residual %g", dynamics_residual(&s, x));
  pair_check(x, &comp, &neg);
  EXPECT(comp < 1e-7 && neg > -1e-7, "complementarity %g, most negative side %g", comp, neg);
  printf("jump: f* = %.12g (expected %.12g), found at iteration %d of %d visited, %d QPs solved\n",
         info.fval, -f_ub * f_ub, info.best_iteration, info.visited, info.solved_qps);
}

/* f_ub below the weight: the particle cannot leave, the ground carries the rest. */
static void test_cannot_jump(void) {
  particle s;
  double f_ub = 0.5 * m * grav;
  particle_init(&s, f_ub, 0);
  double x[10], comp, neg;
  plan_qpcc_info info;
  plan_qpcc_status st = plan_qpcc_solve(&s.p, NULL, x, NULL, NULL, &info);
  EXPECT(st == PLAN_QPCC_SOLVED, "status %s: %s", plan_qpcc_status_name(st), info.message);
  EXPECT(fabs(x[3] - f_ub) < 1e-7 * f_ub, "f = %.12g, expected %.12g", x[3], f_ub);
  EXPECT(tu_maxabs(x, 3) < 1e-9, "the particle moved: v = (%g, %g, %g)", x[0], x[1], x[2]);
  EXPECT(fabs(x[4] - (m * grav - f_ub)) < 1e-6, "fn = %.12g, expected %.12g", x[4], m * grav - f_ub);
  EXPECT(dynamics_residual(&s, x) < 1e-9, "dynamics residual %g", dynamics_residual(&s, x));
  pair_check(x, &comp, &neg);
  EXPECT(comp < 1e-7 && neg > -1e-7, "complementarity %g, most negative side %g", comp, neg);
}

/* A horizontal push of 2 mu m g cannot be held by static friction: the
 * static QP is infeasible, the MLCP guess (u = 0) slides along +x with
 * Coulomb friction mu m g. */
static void test_sliding_guess(void) {
  particle s;
  double push = 2 * mu * m * grav;
  particle_init(&s, 0, push);
  s.H[3 * 4 + 3] = 0;
  double x[10], comp, neg;
  unsigned char spec[6];
  plan_qpcc_info info;
  plan_qpcc_status st = plan_qpcc_solve(&s.p, NULL, x, NULL, spec, &info);
  EXPECT(st == PLAN_QPCC_SOLVED || st == PLAN_QPCC_MAX_QPS, "status %s: %s", plan_qpcc_status_name(st), info.message);
  EXPECT(info.used_mlcp_guess, "static contact should be infeasible");
  double vx = h / m * (push - mu * m * grav);
  EXPECT(fabs(x[0] - vx) < 1e-8, "vx = %.12g, expected %.12g", x[0], vx);
  EXPECT(fabs(x[1]) < 1e-9 && fabs(x[2]) < 1e-9, "vy %g vz %g", x[1], x[2]);
  EXPECT(fabs(x[4] - m * grav) < 1e-6, "fn = %.12g, expected m g", x[4]);
  EXPECT(fabs(x[6] - mu * m * grav) < 1e-6, "friction along -x = %.12g, expected mu m g", x[6]);
  EXPECT(fabs(x[9] - vx) < 1e-8, "lambda = %.12g, expected the sliding speed %.12g", x[9], vx);
  EXPECT(dynamics_residual(&s, x) < 1e-9, "dynamics residual %g", dynamics_residual(&s, x));
  pair_check(x, &comp, &neg);
  EXPECT(comp < 1e-7 && neg > -1e-7, "complementarity %g, most negative side %g", comp, neg);
}

/* The normal offset bn = gap / h (the simulator's gap stabilization): a
 * particle 1 mm above the ground falling at 5 cm/s, no control. Its free
 * velocity after the step, v* = -0.05 - h g, would cover more than the gap:
 * the contact acts and stops it exactly at the ground (v_y = -gap / h,
 * fn = m (v_y - v*) / h); from 2 mm it does not reach the ground and falls
 * freely. */
static void test_gap_offset(void) {
  const double v0 = -0.05, vstar = v0 - h * grav;
  for (int k = 0; k < 2; k++) {
    double gap = k == 0 ? 1e-3 : 2e-3, bn = gap / h;
    particle s;
    particle_init(&s, 0, 0);
    s.H[3 * 4 + 3] = 0;
    s.f[1] = m * v0 - h * m * grav;
    s.p.bn = &bn;
    double x[10], cond[6];
    plan_qpcc_info info;
    plan_qpcc_status st = plan_qpcc_solve(&s.p, NULL, x, NULL, NULL, &info);
    EXPECT(st == PLAN_QPCC_SOLVED || st == PLAN_QPCC_MAX_QPS, "gap %g: status %s: %s", gap,
           plan_qpcc_status_name(st), info.message);
    double vy = k == 0 ? -bn : vstar, fn = k == 0 ? m * (vy - vstar) / h : 0;
    EXPECT(fabs(x[1] - vy) < 1e-8, "gap %g: vy = %.12g, expected %.12g", gap, x[1], vy);
    EXPECT(fabs(x[4] - fn) < 1e-6, "gap %g: fn = %.12g, expected %.12g", gap, x[4], fn);
    plan_qpcc_conditions(&s.p, x, cond);
    EXPECT(fabs(cond[0] - (x[1] + bn)) < 1e-12, "gap %g: the normal condition %g is not v_y + bn", gap, cond[0]);
    EXPECT(cond[0] > -1e-8 && fabs(fmin(cond[0], x[4])) < 1e-7, "gap %g: normal pair (%g, %g)", gap, x[4], cond[0]);
    EXPECT(dynamics_residual(&s, x) < 1e-9, "gap %g: dynamics residual %g", gap, dynamics_residual(&s, x));
  }
}

/* The objective on the normal force (force control): the particle at rest
 * on the ground, a control along +y in [-100, 100] N and the objective
 * 1/2 (fn - F)^2 with F = 2 m g: the control pushes down with m g - F. */
static void test_force_objective(void) {
  particle s;
  particle_init(&s, 100, 0);
  s.H[3 * 4 + 3] = 0;
  s.u_lb[0] = -100;
  double F = 2 * m * grav, Hfn = 1, gfn = -F, x[10];
  s.p.Hfn = &Hfn;
  s.p.gfn = &gfn;
  plan_qpcc_info info;
  plan_qpcc_status st = plan_qpcc_solve(&s.p, NULL, x, NULL, NULL, &info);
  EXPECT(st == PLAN_QPCC_SOLVED || st == PLAN_QPCC_MAX_QPS, "status %s: %s", plan_qpcc_status_name(st), info.message);
  EXPECT(fabs(x[4] - F) < 1e-6, "fn = %.12g, expected F = %.12g", x[4], F);
  EXPECT(fabs(x[3] - (m * grav - F)) < 1e-6, "u = %.12g, expected m g - F = %.12g", x[3], m * grav - F);
  EXPECT(tu_maxabs(x, 3) < 1e-9, "the particle moved: v = (%g, %g, %g)", x[0], x[1], x[2]);
  EXPECT(fabs(info.fval - (0.5 * F * F - F * F)) < 1e-6 * F * F, "G = %.12g, expected -F^2/2", info.fval);
}

static void test_bad_input(void) {
  particle s;
  particle_init(&s, 1, 0);
  s.p.h = -1;
  double x[10];
  plan_qpcc_info info;
  EXPECT(plan_qpcc_solve(&s.p, NULL, x, NULL, NULL, &info) == PLAN_QPCC_BAD_INPUT, "h < 0 accepted");
  EXPECT(strstr(info.message, "h = -1") != NULL, "message '%s' does not name h", info.message);
  particle_init(&s, 1, 0);
  s.mu[0] = -0.1;
  plan_qpcc_solve(&s.p, NULL, x, NULL, NULL, &info);
  EXPECT(info.status == PLAN_QPCC_BAD_INPUT && strstr(info.message, "mu[0]"), "mu < 0: %s", info.message);
}

int main(void) {
  test_jump();
  test_cannot_jump();
  test_sliding_guess();
  test_gap_offset();
  test_force_objective();
  test_bad_input();
  return test_report("plan_qpcc");
}

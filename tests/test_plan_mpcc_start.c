/* The MPCC with the simulator's contact (contact_at_start, mpcc.h): the
 * contact geometry at q_k, nu at (q_k, v_{k+1}, omega_{k+1}), the gap row
 * s(g_k) + h n_k . nu. Its derivatives against differences of the plain rows:
 *  - the constraint Jacobian IPOPT gets (its shortcuts: which columns move the
 *    geometry, the closest point's and the stabilization's tangents) against
 *    Richardson extrapolation, both stages, at points off rest where the disk
 *    is clear of the ball (s(g) = g) and where it cuts into it (s = 0.2 g): a
 *    Jacobian that still moved the geometry with q_{k+1} errs by O(1);
 *  - the exact Hessian of the Lagrangian against second differences, with
 *    random multipliers on every row and one group of rows at a time (the
 *    gap row now couples q_k, v_{k+1}, omega_{k+1} and fz).
 * The rows themselves: the gap row against the LCP's normal row written out
 * by hand from the contact point's motion (a disk point and the ball's
 * surface point, moved by differences of positions). The simulator's own
 * check is python/tests/test_plan_contact_start.py. */
#include <string.h>

#include "../plugin/margin.h"
#include "mpcc.h"
#include "plan_mpcc_points.h"
#include "testutil.h"

/* Moves every knot's q along the gap's gradient until its gap is target (Newton on the gap). */
static void set_gaps(plan_mpcc *p, const plan_mpcc_params *P, double *z, double target) {
  int n = plan_mpcc_n(p), B = plan_mpcc_block(p);
  double gap, fz, normal[3];
  for (int k = 0; k < P->N; k++) {
    double *q = z + (size_t)k * B;
    for (int it = 0; it < 30; it++) {
      /* plan_mpcc_contact reports the gap at knot k + 1: take knot k's through a step k - 1 view */
      double g[64], gg = 0;
      double *qk1 = z + (size_t)(k + 1) * B, save[64];
      memcpy(save, qk1, sizeof(double) * n);
      memcpy(qk1, q, sizeof(double) * n);
      plan_mpcc_contact(p, z, k, &gap, &fz, normal);
      if (fabs(gap - target) < 1e-12) { memcpy(qk1, save, sizeof(double) * n); break; }
      for (int c = 0; c < n; c++) {
        double q0 = qk1[c], gp, gm;
        qk1[c] = q0 + 1e-7;
        plan_mpcc_contact(p, z, k, &gp, &fz, normal);
        qk1[c] = q0 - 1e-7;
        plan_mpcc_contact(p, z, k, &gm, &fz, normal);
        qk1[c] = q0;
        g[c] = (gp - gm) / 2e-7;
        gg += g[c] * g[c];
      }
      memcpy(qk1, save, sizeof(double) * n);
      for (int c = 0; c < n; c++) q[c] -= (gap - target) * g[c] / gg;
    }
  }
}

/* The ball centre's height in knot k's disk frame (wl_z: beyond the half thickness the closest point
   lies on a face or its rim, within it on the side). */
static double centre_height(plan_mpcc *p, const plan_mpcc_params *P, const double *q) {
  double pos[3], R[9], w[3];
  plan_mpcc_disk_pose(p, q, pos, R);
  for (int i = 0; i < 3; i++) w[i] = P->ball_center[i] - pos[i];
  return R[2] * w[0] + R[5] * w[1] + R[8] * w[2];
}

/* Moves every knot's q (Newton, minimum norm) until the ball centre's height in the disk frame is
   target. */
static void set_heights(plan_mpcc *p, const plan_mpcc_params *P, double *z, double target) {
  int n = plan_mpcc_n(p), B = plan_mpcc_block(p);
  for (int k = 0; k <= P->N; k++) {
    double *q = z + (size_t)k * B;
    for (int it = 0; it < 30; it++) {
      double wz = centre_height(p, P, q), g[64], gg = 0;
      if (fabs(wz - target) < 1e-12) break;
      for (int c = 0; c < n; c++) {
        double q0 = q[c];
        q[c] = q0 + 1e-7;
        double wp = centre_height(p, P, q);
        q[c] = q0 - 1e-7;
        double wm = centre_height(p, P, q);
        q[c] = q0;
        g[c] = (wp - wm) / 2e-7;
        gg += g[c] * g[c];
      }
      for (int c = 0; c < n; c++) q[c] -= (wz - target) * g[c] / gg;
    }
  }
}

/* The pyramid from a friction reference (friction_reference, the simulator's sb_contact_frame): the
 * slips' rows turn with the normal through the projection of the reference, so their q_k columns
 * (Jacobian) and their (q_k, q_k), (q_k, v_{k+1}), (q_k, ft) pairs (Hessian) carry the basis's
 * derivatives; against differences of the plain rows, with every multiplier and with the slips'
 * groups alone. A reference near the rest normal, or not finite, is refused by name. */
static void expect_friction_reference(plan_mpcc_params P) {
  char err[256];
  P.N = 2;
  P.T = 0.08;
  P.friction_reference[0] = 0.3;   /* off the world axes: every component of the basis moves */
  P.friction_reference[1] = 0.2;
  P.friction_reference[2] = 1;
  plan_mpcc *p = plan_mpcc_create(&P, err, sizeof err);
  EXPECT(p != NULL, "create with a friction reference: %s", err);
  if (!p) return;
  /* the Jacobian clear of the ball and 1 mm into it; the Hessian clear and 1 mm away (1 mm into the
     ball its second differences at this point's draws miss by 2e-3 to 8e-3 with either basis: the
     gap row's, above) */
  double *z = point_off_rest(p, &P);
  for (int pass = 0; pass < 3; pass++) {
    const char *where = pass == 0 ? "clear" : pass == 1 ? "penetrating" : "1 mm away";
    if (pass) set_gaps(p, &P, z, pass == 1 ? -1e-3 : 1e-3);
    for (int dynamic = 0; dynamic < 2; dynamic++) {
      if (pass < 2) {
        double e = plan_mpcc_jacobian_error(p, z, dynamic);
        EXPECT(e < 1e-4, "friction reference, %s, %s stage: Jacobian vs differences of the rows: %g", where,
               dynamic ? "dynamic" : "kinematic", e);
        printf("friction reference, %s, %s stage: Jacobian vs differences %.3g\n", where,
               dynamic ? "dynamic" : "kinematic", e);
      }
      if (pass == 1) continue;
      int m = plan_mpcc_nconstraints(p, dynamic);
      double *lambda = malloc(sizeof(double) * m);
      for (int i = 0; i < m; i++) lambda[i] = tu_rand();
      double e = plan_mpcc_hessian_error(p, z, lambda, 0.7, dynamic);
      EXPECT(e < 1e-3, "friction reference, %s, %s stage: Hessian vs second differences: %g", where,
             dynamic ? "dynamic" : "kinematic", e);
      printf("friction reference, %s, %s stage: Hessian vs second differences %.3g\n", where,
             dynamic ? "dynamic" : "kinematic", e);
      free(lambda);
    }
  }
  expect_hessian_by_row_groups(p, &P, z);
  free(z);
  plan_mpcc_free(p);

  /* the rest normal is about -y: a reference 10 degrees off it, and one not finite */
  P.friction_reference[0] = 0;
  P.friction_reference[1] = -1;
  P.friction_reference[2] = tan(10 * M_PI / 180);
  p = plan_mpcc_create(&P, err, sizeof err);
  EXPECT(!p && strstr(err, "friction reference") && strstr(err, "rest contact's normal"),
         "a reference 10 degrees from the rest normal: refused naming it (%s)", p ? "accepted" : err);
  plan_mpcc_free(p);
  P.friction_reference[2] = NAN;
  p = plan_mpcc_create(&P, err, sizeof err);
  EXPECT(!p && strstr(err, "friction reference"), "a reference not finite: refused naming it (%s)",
         p ? "accepted" : err);
  plan_mpcc_free(p);
}

/* The disk's speed at knot k as the simulator's swept margin reads it (plugin/narrowphase.c,
 * disk_motion and approach_speed): its centre's speed plus its angular speed across its axis times
 * its bounding radius, here from the disk's poses at q_k +- dt v_k (central differences), not from
 * the planner's twist. */
static double disk_speed(plan_mpcc *p, const plan_mpcc_params *P, const double *q, const double *v) {
  int n = plan_mpcc_n(p);
  double qp[64], qm[64], pp[3], Rp[9], pm[3], Rm[9], p0[3], R0[9], dt = 1e-6, c2 = 0;
  for (int i = 0; i < n; i++) { qp[i] = q[i] + dt * v[i]; qm[i] = q[i] - dt * v[i]; }
  plan_mpcc_disk_pose(p, qp, pp, Rp);
  plan_mpcc_disk_pose(p, qm, pm, Rm);
  plan_mpcc_disk_pose(p, q, p0, R0);
  for (int i = 0; i < 3; i++) c2 += (pp[i] - pm[i]) * (pp[i] - pm[i]) / (4 * dt * dt);
  /* R0^T dR/dt = [w]x in the disk's axes: w_x = (R^T dR)_21, w_y = (R^T dR)_02 */
  double W[9];
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++) {
      W[3 * a + b] = 0;
      for (int i = 0; i < 3; i++) W[3 * a + b] += R0[3 * i + a] * (Rp[3 * i + b] - Rm[3 * i + b]) / (2 * dt);
    }
  double wx = W[7], wy = W[2];
  double rbound = sqrt(P->disk_radius * P->disk_radius + P->disk_half_thickness * P->disk_half_thickness);
  return sqrt(c2) + rbound * sqrt(wx * wx + wy * wy);
}

/* The margin row fz_k (g_k - margin) <= eps (contact_at_start: no force from beyond the simulator's
 * speculative margin at the step's start, mpcc.h):
 *  - at rest (v_k = 0, the simulator's margin CUSP_MARGIN), z's step 0 of the session 20 warm plan
 *    (fz 0.229 N from the rest gap of 20 mm) violates it; 3 mm from the ball it holds;
 *  - the margin the row implies, g_k - row / fz_k, against plugin/margin.h's cusp_swept_margin at
 *    the disk's speed taken from pose differences: below it (never a contact the simulator would
 *    not look for) by at most the smoothing (MARGIN_WIDTH + 2 h SPEED_WIDTH (1 + rbound)), at
 *    speeds below the swept margin's switch (62.5 mm/s), past it, and past the allowance's cap
 *    (0.5 m/s);
 *  - its Jacobian and Hessian (the row alone) against differences of the plain rows at those
 *    speeds: v_k's columns move the margin through the disk's body Jacobian, a path no other row
 *    takes. */
static void expect_margin_row(void) {
  plan_mpcc_params P = plan_mpcc_rotate_task(2);
  P.N = 2;
  P.T = 0.08;
  P.contact_at_start = 1;
  P.margin_rows = PLAN_MARGIN_ALL;
  char err[256];
  plan_mpcc *p = plan_mpcc_create(&P, err, sizeof err);
  EXPECT(p != NULL, "create (z): %s", err);
  if (!p) return;
  int n = plan_mpcc_n(p), B = plan_mpcc_block(p), R = plan_mpcc_nconstraints(p, 1) / P.N;
  double h = P.T / P.N, *z = malloc(sizeof(double) * plan_mpcc_nvars(p)), r[256], gap, fz, normal[3];
  plan_mpcc_rest_guess(p, z);
  z[(2 * n + 7) + n] = 0.229;   /* fz_0: after S_0 (2 n + 7) and tau_0 (n) */
  plan_mpcc_step_rows(p, z, 0, 1, r);
  /* the gap at q_0: step 0's geometry is at q_0 with the contact at the start; plan_mpcc_contact
     reports q_1's, which the rest guess keeps at q_0 */
  plan_mpcc_contact(p, z, 0, &gap, &fz, normal);
  double implied = gap - r[R - 1] / 0.229;
  EXPECT(gap > 0.019 && r[R - 1] > 1e-3, "at rest 20 mm away (gap %g m), fz 0.229 N: margin row %g (eps 1e-7)", gap,
         r[R - 1]);
  EXPECT(implied <= CUSP_MARGIN && implied >= CUSP_MARGIN - 0.5e-4 - 1e-6,
         "at rest: the row's margin %.9g m, the simulator's %g", implied, CUSP_MARGIN);
  printf("at rest, gap %.4g m, fz 0.229 N: margin row %.4g, its margin %.9g m (CUSP_MARGIN %g)\n", gap, r[R - 1],
         implied, CUSP_MARGIN);
  set_gaps(p, &P, z, 3e-3);
  plan_mpcc_step_rows(p, z, 0, 1, r);
  EXPECT(r[R - 1] < 0, "at rest 3 mm away: margin row %g (allowed)", r[R - 1]);

  /* moving: each knot's v along a random direction scaled to the disk speed wanted */
  double *base = point_off_rest(p, &P);
  const double speeds[] = {0.03, 0.1, 0.3, 1.0};
  double rbound = sqrt(P.disk_radius * P.disk_radius + P.disk_half_thickness * P.disk_half_thickness);
  double slack = 1e-4 + 2 * h * 1e-3 * (1 + rbound) + 1e-9;   /* MARGIN_WIDTH + 2 h SPEED_WIDTH (1 + rbound) */
  for (int si = 0; si < 4; si++) {
    memcpy(z, base, sizeof(double) * plan_mpcc_nvars(p));
    for (int k = 0; k < P.N; k++) {
      double *q = z + (size_t)k * B, *v = q + n, sp = disk_speed(p, &P, q, v);
      for (int i = 0; i < n; i++) v[i] *= speeds[si] / sp;
      double sharp = cusp_swept_margin(h, disk_speed(p, &P, q, v));
      /* knot k's gap through a step k - 1 view (as set_gaps), the row of step k */
      double *qk1 = z + (size_t)(k + 1) * B, save[64];
      memcpy(save, qk1, sizeof(double) * n);
      memcpy(qk1, q, sizeof(double) * n);
      plan_mpcc_contact(p, z, k, &gap, &fz, normal);
      memcpy(qk1, save, sizeof(double) * n);
      plan_mpcc_step_rows(p, z, k, 1, r);
      double m = gap - r[R - 1] / fz;
      EXPECT(m <= sharp + 1e-9 && m >= sharp - slack, "disk speed %g m/s, knot %d: the row's margin %.9g m, the simulator's %.9g",
             speeds[si], k, m, sharp);
      printf("disk speed %g m/s, knot %d: the row's margin %.9g m, cusp_swept_margin %.9g m\n", speeds[si], k, m, sharp);
    }
    int m = plan_mpcc_nconstraints(p, 1);
    double *lambda = calloc(m, sizeof(double));
    for (int k = 0; k < P.N; k++) lambda[k * R + R - 1] = 1 + tu_rand();
    for (int dynamic = 0; dynamic < 2; dynamic++) {
      double e = plan_mpcc_jacobian_error(p, z, dynamic);
      EXPECT(e < 1e-4, "disk speed %g m/s, %s stage: Jacobian vs differences of the rows: %g", speeds[si],
             dynamic ? "dynamic" : "kinematic", e);
      int md = plan_mpcc_nconstraints(p, dynamic), Rd = md / P.N;
      double *ld = calloc(md, sizeof(double));
      for (int k = 0; k < P.N; k++) ld[k * Rd + Rd - 1] = lambda[k * R + R - 1];
      double e2 = plan_mpcc_hessian_error(p, z, ld, 0, dynamic);
      double e3 = plan_mpcc_hessian_gradient_error(p, z, ld, 0, dynamic, 1e-7);
      EXPECT(e2 < 1e-3 && e3 < 1e-3,
             "disk speed %g m/s, %s stage: the margin rows' Hessian vs second differences %g, vs the gradient's %g",
             speeds[si], dynamic ? "dynamic" : "kinematic", e2, e3);
      printf("disk speed %g m/s, %s stage: Jacobian vs differences %.3g; margin rows' Hessian vs second differences "
             "%.3g, vs the gradient's differences %.3g\n", speeds[si], dynamic ? "dynamic" : "kinematic", e, e2, e3);
      free(ld);
    }
    free(lambda);
  }
  free(base);
  free(z);
  plan_mpcc_free(p);
}

/* PLAN_MARGIN_LAZY's mark (plan_mpcc_margin_mark) on constructed plans of the z task at rest (margin
 * CUSP_MARGIN): session 20's step 0 (0.229 N from 20 mm) is marked, once; a step pushing with less than
 * 1e-3 of the plan's largest force is not, nor one pushing from 3 mm. */
static void expect_margin_mark(void) {
  plan_mpcc_params P = plan_mpcc_rotate_task(2);
  P.N = 2;
  P.T = 0.08;
  P.contact_at_start = 1;
  P.margin_rows = PLAN_MARGIN_LAZY;
  char err[256];
  plan_mpcc *p = plan_mpcc_create(&P, err, sizeof err);
  EXPECT(p != NULL, "create (z, lazy): %s", err);
  if (!p) return;
  int n = plan_mpcc_n(p), B = plan_mpcc_block(p), fz = 2 * n + 7 + n;   /* after S_k and tau_k */
  double *z = malloc(sizeof(double) * plan_mpcc_nvars(p));
  plan_mpcc_rest_guess(p, z);
  const unsigned char *mask = plan_mpcc_margin_mask(p);
  z[fz] = 0.229;
  int added = plan_mpcc_margin_mark(p, z);
  EXPECT(added == 1 && mask[0] && !mask[1], "0.229 N from 20 mm on step 0: %d marked, mask %d %d", added, mask[0],
         mask[1]);
  added = plan_mpcc_margin_mark(p, z);
  EXPECT(added == 0, "marked again: %d", added);
  plan_mpcc_free(p);

  p = plan_mpcc_create(&P, err, sizeof err);
  EXPECT(p != NULL, "create (z, lazy): %s", err);
  if (!p) { free(z); return; }
  mask = plan_mpcc_margin_mask(p);
  z[fz] = 0.229;
  z[B + fz] = 300;   /* step 0's force below 1e-3 of the largest */
  added = plan_mpcc_margin_mark(p, z);
  EXPECT(added == 1 && !mask[0] && mask[1], "0.229 N and 300 N from 20 mm: %d marked, mask %d %d", added, mask[0],
         mask[1]);
  plan_mpcc_free(p);

  p = plan_mpcc_create(&P, err, sizeof err);
  EXPECT(p != NULL, "create (z, lazy): %s", err);
  if (!p) { free(z); return; }
  mask = plan_mpcc_margin_mask(p);
  set_gaps(p, &P, z, 3e-3);
  z[fz] = z[B + fz] = 0.229;
  added = plan_mpcc_margin_mark(p, z);
  EXPECT(added == 0 && !mask[0] && !mask[1], "0.229 N from 3 mm: %d marked", added);
  printf("lazy margin mark: 20 mm marked, 3 mm and a force below 1e-3 of the largest not\n");
  plan_mpcc_free(p);
  free(z);
}

/* PLAN_MARGIN_LAZY on a plan that pushes (0.38 N) from within the margin only (x, N = 5, T = 0.2, angle
 * 0.2, cold; cusp-plan's solver settings): no step is marked, no solve follows, and the plan is
 * PLAN_MARGIN_OFF's to the bit (the same NLP, so the same IPOPT path). */
static void expect_lazy_equals_off(void) {
  plan_mpcc_params P = plan_mpcc_rotate_task(0);
  P.N = 5;
  P.T = 0.2;
  P.angle = 0.2;
  P.contact_at_start = 1;
  P.friction_reference[0] = 1;   /* cusp-plan's with the start contact about x */
  P.friction_reference[1] = P.friction_reference[2] = 0;
  P.exact_hessian = 2;
  P.polish = 1;
  P.max_iter = 3000;
  P.tol = 1e-8;
  char err[256];
  double *z[2] = {NULL, NULL}, largest = 0;
  plan_mpcc_stage out[2];
  int rc[2] = {-1, -1}, nv = 0;
  for (int lazy = 0; lazy < 2; lazy++) {
    P.margin_rows = lazy ? PLAN_MARGIN_LAZY : PLAN_MARGIN_OFF;
    plan_mpcc *p = plan_mpcc_create(&P, err, sizeof err);
    EXPECT(p != NULL, "create (x, %s): %s", lazy ? "lazy" : "off", err);
    if (!p) break;
    nv = plan_mpcc_nvars(p);
    z[lazy] = malloc(sizeof(double) * nv);
    plan_mpcc_rest_guess(p, z[lazy]);
    rc[lazy] = plan_mpcc_solve(p, 1, z[lazy], &out[lazy]);
    for (int k = 0; k < P.N && lazy == 0; k++) {
      double gap, fz, normal[3];
      plan_mpcc_contact(p, z[0], k, &gap, &fz, normal);
      largest = fmax(largest, fz);
    }
    plan_mpcc_free(p);
  }
  if (z[0] && z[1]) {
    EXPECT(rc[0] == 0 && rc[1] == 0, "the solves: %d (off), %d (lazy)", rc[0], rc[1]);
    EXPECT(largest > 0.1, "the plan pushes: largest fz %g N", largest);
    EXPECT(out[1].margin_steps_added == 0 && out[1].margin_resolves == 0, "lazy: %d steps marked, %d more solves",
           out[1].margin_steps_added, out[1].margin_resolves);
    EXPECT(out[0].iterations == out[1].iterations && out[0].objective == out[1].objective &&
               !memcmp(z[0], z[1], sizeof(double) * nv),
           "lazy vs off: %d vs %d iterations, objective %.17g vs %.17g", out[1].iterations, out[0].iterations,
           out[1].objective, out[0].objective);
    printf("lazy vs off (x, N = 5): largest fz %.3g N, %d steps marked, %d iterations both, objective %.9g\n", largest,
           out[1].margin_steps_added, out[1].iterations, out[1].objective);
  }
  free(z[0]);
  free(z[1]);
}

int main(void) {
  plan_mpcc_params P = plan_mpcc_rotate_task(0);
  P.N = 3;
  P.T = 0.12;
  P.angle = 0.1;
  P.contact_at_start = 1;
  P.margin_rows = PLAN_MARGIN_ALL;
  char err[256];
  plan_mpcc *p = plan_mpcc_create(&P, err, sizeof err);
  EXPECT(p != NULL, "create: %s", err);
  if (!p) return test_report("plan_mpcc_start");
  int n = plan_mpcc_n(p), B = plan_mpcc_block(p);

  /* the Jacobian: clear of the ball (gaps of millimetres), then cutting into it by 1 mm at
     every knot but the fixed first */
  double *z = point_off_rest(p, &P);
  for (int pass = 0; pass < 2; pass++) {
    if (pass) set_gaps(p, &P, z, -1e-3);
    for (int dynamic = 0; dynamic < 2; dynamic++) {
      double e = plan_mpcc_jacobian_error(p, z, dynamic);
      EXPECT(e < 1e-4, "%s, %s stage: Jacobian vs differences of the rows: %g", pass ? "penetrating" : "clear",
             dynamic ? "dynamic" : "kinematic", e);
      printf("%s, %s stage: Jacobian vs differences %.3g\n", pass ? "penetrating" : "clear",
             dynamic ? "dynamic" : "kinematic", e);
    }
  }

  /* the gap row by hand: g_k + h n_k . (dx/dt - omega x r_ball) along q_k + t v_{k+1} (x the
     disk's material point at the contact, its velocity by central differences; n . (omega x
     r_ball) = 0); with penetration g_k < 0 the stabilized 0.2 g_k; the dynamic stage's rows: arm
     n, kinematics n, ball 3, quaternion 4, then the gap row */
  for (int k = 1; k < P.N; k++) {
    double r[128], gap, fz, normal[3], pos0[3], R0[9], pos1[3], R1[9];
    int R = plan_mpcc_step_rows(p, z, k, 1, r);
    (void)R;
    /* knot k's own geometry: plan_mpcc_contact of step k - 1 */
    plan_mpcc_contact(p, z, k - 1, &gap, &fz, normal);
    const double *qk = z + (size_t)k * B, *v1 = z + (size_t)(k + 1) * B + n, *om1 = v1 + n;
    double qe[64], qm[64], pos2[3], R2[9], dt = 1e-6;   /* central differences along v_{k+1} */
    for (int i = 0; i < n; i++) { qe[i] = qk[i] + dt * v1[i]; qm[i] = qk[i] - dt * v1[i]; }
    plan_mpcc_disk_pose(p, qk, pos0, R0);
    plan_mpcc_disk_pose(p, qe, pos1, R1);
    plan_mpcc_disk_pose(p, qm, pos2, R2);
    /* the contact point as a material point of the disk: ball centre + (R + gap) n */
    double x[3], xl[3], x1[3], x2[3], rb[3], vd[3], oxr[3];
    for (int i = 0; i < 3; i++) {
      rb[i] = (P.ball_radius + gap) * normal[i];
      x[i] = P.ball_center[i] + rb[i];
    }
    for (int i = 0; i < 3; i++)
      xl[i] = R0[0 + i] * (x[0] - pos0[0]) + R0[3 + i] * (x[1] - pos0[1]) + R0[6 + i] * (x[2] - pos0[2]);
    for (int i = 0; i < 3; i++) {
      x1[i] = pos1[i] + R1[3 * i] * xl[0] + R1[3 * i + 1] * xl[1] + R1[3 * i + 2] * xl[2];
      x2[i] = pos2[i] + R2[3 * i] * xl[0] + R2[3 * i + 1] * xl[1] + R2[3 * i + 2] * xl[2];
      vd[i] = (x1[i] - x2[i]) / (2 * dt);
    }
    oxr[0] = om1[1] * rb[2] - om1[2] * rb[1];
    oxr[1] = om1[2] * rb[0] - om1[0] * rb[2];
    oxr[2] = om1[0] * rb[1] - om1[1] * rb[0];
    double vn = 0;
    for (int i = 0; i < 3; i++) vn += normal[i] * (vd[i] - oxr[i]);
    double h = P.T / P.N, row = (gap >= 0 ? gap : 0.2 * gap) + h * vn;
    double planned = r[2 * n + 7];
    EXPECT(fabs(planned - row) < 1e-10, "step %d: gap row %.9g, the LCP's normal row by hand %.9g", k, planned, row);
    printf("step %d: gap %.3g, gap row %.9g, by hand %.9g\n", k, gap, planned, row);
  }
  free(z);

  /* the exact Hessian: 2 steps, random multipliers, both stages */
  plan_mpcc_free(p);
  P.N = 2;
  P.T = 0.08;
  p = plan_mpcc_create(&P, err, sizeof err);
  EXPECT(p != NULL, "create: %s", err);
  if (!p) return test_report("plan_mpcc_start");
  z = point_off_rest(p, &P);
  /* clear of the ball, then cutting into it by 1 mm and clear of it by 1 mm at every knot (the
     disk's velocity in the gap row curves with q_k, the second differences' step with it) */
  for (int pass = 0; pass < 3; pass++) {
    if (pass) set_gaps(p, &P, z, pass == 1 ? -1e-3 : 1e-3);
    for (int dynamic = 0; dynamic < 2; dynamic++) {
      int m = plan_mpcc_nconstraints(p, dynamic);
      double *lambda = malloc(sizeof(double) * m);
      for (int i = 0; i < m; i++) lambda[i] = tu_rand();
      double e = plan_mpcc_hessian_error(p, z, lambda, 0.7, dynamic);
      const char *where = pass == 0 ? "clear" : pass == 1 ? "penetrating" : "1 mm away";
      EXPECT(e < 1e-3, "%s, %s stage: Hessian of the Lagrangian vs second differences: %g", where,
             dynamic ? "dynamic" : "kinematic", e);
      printf("%s, %s stage: Hessian vs second differences %.3g\n", where, dynamic ? "dynamic" : "kinematic", e);
      free(lambda);
    }
  }
  free(z);

  /* micrometre gaps, as a sustained contact leaves them at every step's start: there the Hessian's
     tangent of the stabilization must be the row's own (the blend exactly linear outside |g| < w);
     against differences of the Lagrangian's gradient at steps small enough to stay on one side
     of the blend (second differences of the rows at 1e-5 would cross it) */
  z = point_off_rest(p, &P);
  for (int pass = 0; pass < 2; pass++) {
    double target = pass ? -3e-6 : 3e-6;
    set_gaps(p, &P, z, target);
    int m = plan_mpcc_nconstraints(p, 1), rows = m / P.N;
    double *lambda = calloc(m, sizeof(double));   /* the gap rows alone (after arm, q update, ball, quaternion) */
    for (int k = 0; k < P.N; k++) lambda[k * rows + 2 * n + 7] = 1 + tu_rand();
    double e = plan_mpcc_hessian_gradient_error(p, z, lambda, 0.7, 1, 1e-7);
    EXPECT(e < 1e-3, "gaps of %g m, dynamic stage: Hessian vs differences of the Lagrangian's gradient: %g", target, e);
    printf("gaps of %g m: Hessian vs differences of the Lagrangian's gradient %.3g\n", target, e);
    free(lambda);
  }
  free(z);
  plan_mpcc_free(p);

  /* the disk's side near its face's edge: the task about y puts the disk beside the ball (the
     off-axis guess), the centre 50 um inside the half thickness, so the Hessian's differences of
     the closest point (steps of 1e-5 in q) would cross from the side to the rim; with the feature
     of the base point held they give the side's curvature (against differences of the Lagrangian's
     gradient, which take the closest point's map by its tangent) */
  {
    plan_mpcc_params Y = plan_mpcc_rotate_task(1);
    Y.N = 2;
    Y.T = 0.08;
    Y.angle = 0.05;
    Y.contact_at_start = 1;
    Y.margin_rows = PLAN_MARGIN_ALL;
    plan_mpcc *py = plan_mpcc_create(&Y, err, sizeof err);
    EXPECT(py != NULL, "create (y): %s", err);
    if (!py) return test_report("plan_mpcc_start");
    int ny = plan_mpcc_n(py), By = plan_mpcc_block(py), m = plan_mpcc_nconstraints(py, 1);
    double *zy = malloc(sizeof(double) * plan_mpcc_nvars(py)), normal[3], *lambda = malloc(sizeof(double) * m);
    double lever = plan_mpcc_offaxis_guess(py, zy, normal);
    EXPECT(lever > 0, "the off-axis guess about y: lever %g", lever);
    for (int k = 0; k <= Y.N; k++) {   /* moving, with forces, so that every row's multiplier counts */
      double *s = zy + (size_t)k * By;
      for (int i = 0; i < ny; i++) s[ny + i] = 0.05 * tu_rand();
      if (k < Y.N)
        for (int i = 2 * ny + 7; i < By; i++) s[i] = 1 + tu_rand();
    }
    set_heights(py, &Y, zy, Y.disk_half_thickness - 5e-5);
    double gap, fz;   /* knot 1's closest point on the side: the centre beyond the disk's radius */
    plan_mpcc_contact(py, zy, 0, &gap, &fz, normal);
    double pos[3], R[9], w[3], rho2 = 0;
    plan_mpcc_disk_pose(py, zy + By, pos, R);
    for (int i = 0; i < 3; i++) w[i] = Y.ball_center[i] - pos[i];
    for (int j = 0; j < 2; j++) {
      double c = R[j] * w[0] + R[3 + j] * w[1] + R[6 + j] * w[2];
      rho2 += c * c;
    }
    EXPECT(sqrt(rho2) > Y.disk_radius + 0.01, "knot 1: the centre %g m from the disk's axis", sqrt(rho2));
    printf("knot 1: centre %.4g m from the axis, gap %.3g m\n", sqrt(rho2), gap);
    for (int i = 0; i < m; i++) lambda[i] = tu_rand();
    double e = plan_mpcc_hessian_gradient_error(py, zy, lambda, 0.7, 1, 1e-7);
    EXPECT(e < 0.05, "beside the face's edge: Hessian vs differences of the Lagrangian's gradient: %g", e);
    printf("50 um from the side's edge (height %.6g, half thickness %g): Hessian vs differences of the gradient %.3g\n",
           centre_height(py, &Y, zy + By), Y.disk_half_thickness, e);
    free(lambda);
    free(zy);
    plan_mpcc_free(py);
  }

  /* one step, one group of rows at a time */
  expect_one_step_hessian_by_row_groups(P);

  expect_friction_reference(P);
  expect_margin_row();
  expect_margin_mark();
  expect_lazy_equals_off();
  return test_report("plan_mpcc_start");
}

/* The friction pyramid's directions against the direction a contact slides
 * or pulls in (softbody/contact.c, align_friction_frames).
 *
 * The LCP's friction is a pyramid of r directions inscribed in the Coulomb
 * cone: exact along its directions, down to mu fn cos(pi / r) between them,
 * and a contact sliding between two of them gets its friction from the nearer
 * one, so it also veers. Sliding or pulling off the pyramid's directions is
 * the ordinary case (a world-axis frame and a slide at 30 degrees to it), so
 * with the option align_friction the solve turns each contact's first
 * direction onto the friction it is about to need. Checked against the
 * analytic answers, with no tangent hint (what the plugin's narrow phase
 * gives):
 *   - a box sliding on a level plane at 30 degrees to the world axes loses
 *     exactly mu g h of speed a step and keeps its heading, for r = 3, 4, 8
 *     (a world-axis pyramid: 0.87 mu g with r = 4, veering);
 *   - a box on an incline whose downhill is 30 degrees off the world axes,
 *     at tan(theta) = 0.98 mu, stays still (exact Coulomb sticking; a
 *     world-axis pyramid with r = 4 holds only 0.73 mu and lets it slide), and
 *     at tan(theta) = 1.02 mu slides with g (sin - mu cos) exactly;
 *   - (default options) a point mass resting on a nearly level plane whose normal wobbles
 *     across the diagonal (where a frame from the world axis least aligned
 *     with n flips between x and y every step) sticks, and the warm start
 *     is last step's friction turned into the new axes. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "contact.h"
#include "testutil.h"

#define G 9.81
#define H 1e-3

/* A box (2 kg, 0.4 x 0.3 x 0.2 m; 6 dof: world linear and angular velocity)
 * on a plane through the origin with unit normal n, 4 contacts at the corners
 * of its bottom face (ids 0..3), no tangent hint; the box's axes: a (along
 * the plane), n x a, n. Returns the body index, -1 on error. */
static int box_on_plane(sb_contact_problem *P, const double n[3], const double a[3], const double v[6], double mu,
                        char *err, int errsize) {
  double hx = 0.2, hy = 0.15, hz = 0.1, mass = 2.0;
  double b[3] = {n[1] * a[2] - n[2] * a[1], n[2] * a[0] - n[0] * a[2], n[0] * a[1] - n[1] * a[0]};
  double R[9];   /* columns a, b, n */
  for (int k = 0; k < 3; k++) R[3 * k] = a[k], R[3 * k + 1] = b[k], R[3 * k + 2] = n[k];
  double Ib[3] = {mass * (hy * hy + hz * hz) / 3, mass * (hx * hx + hz * hz) / 3, mass * (hx * hx + hy * hy) / 3};
  double M[36] = {0};
  for (int k = 0; k < 3; k++) M[7 * k] = mass;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      double s = 0;
      for (int k = 0; k < 3; k++) s += R[3 * i + k] * Ib[k] * R[3 * j + k];
      M[(3 + i) * 6 + 3 + j] = s;
    }
  double vfree[6];
  for (int k = 0; k < 6; k++) vfree[k] = v[k];
  vfree[2] -= G * H;
  int body = sb_contact_add_dense(P, 6, M, vfree, err, errsize);
  if (body < 0) return -1;
  for (int i = 0; i < 4; i++) {
    double local[3] = {i % 2 ? hx : -hx, i / 2 ? hy : -hy, -hz}, r[3];
    for (int k = 0; k < 3; k++) r[k] = R[3 * k] * local[0] + R[3 * k + 1] * local[1] + R[3 * k + 2] * local[2];
    double jac[18] = {1, 0, 0, 0, r[2], -r[1],
                      0, 1, 0, -r[2], 0, r[0],
                      0, 0, 1, r[1], -r[0], 0};
    sb_contact c;
    memset(&c, 0, sizeof c);
    c.side[0].body = body;
    c.side[0].jac = jac;
    c.side[1].body = -1;
    memcpy(c.normal, n, 3 * sizeof(double));
    c.friction = mu;
    c.id = i;
    if (sb_contact_add(P, &c, err, errsize) < 0) return -1;
  }
  return body;
}

static double dot(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static void test_slide_at_30_degrees(void) {
  char err[256];
  double mu = 0.5, v0 = 1.0, phi = 30 * M_PI / 180;
  double up[3] = {0, 0, 1}, x[3] = {1, 0, 0}, dir[3] = {cos(phi), sin(phi), 0}, side[3] = {-sin(phi), cos(phi), 0};
  int rs[3] = {3, 4, 8};
  for (int ri = 0; ri < 3; ri++) {
    sb_contact_problem *P = sb_contact_create(4, 1, 6, 8, err, sizeof err);
    sb_contact_options o = sb_contact_default_options();
    o.align_friction = 1;
    o.directions = rs[ri];
    double v[6] = {v0 * dir[0], v0 * dir[1], 0, 0, 0, 0};
    double worst = 0, lateral = 0, spin = 0;
    int steps = 100;
    for (int step = 0; step < steps; step++) {
      sb_contact_clear(P);
      int body = box_on_plane(P, up, x, v, mu, err, sizeof err);
      EXPECT(body == 0, "slide: %s", err);
      sb_contact_info info;
      EXPECT(sb_contact_solve(P, H, &o, &info, err, sizeof err) == 0, "slide r = %d step %d: %s", rs[ri], step, err);
      double speed = dot(v, dir);
      sb_contact_body_velocity(P, body, v);
      /* each step takes mu g h off the speed */
      double lost = speed - dot(v, dir);
      worst = fmax(worst, fabs(lost - mu * G * H) / (mu * G * H));
      lateral = fmax(lateral, fabs(dot(v, side)));
      spin = fmax(spin, tu_maxabs(v + 3, 3));
    }
    EXPECT(worst <= 1e-9, "r = %d: the speed lost per step is off mu g h by %.3e (relative)", rs[ri], worst);
    EXPECT(lateral <= 1e-9 * mu * G * H && spin <= 1e-9 * mu * G * H && fabs(v[2]) <= 1e-9 * mu * G * H,
           "r = %d: the box veers (lateral %g m/s), spins (%g rad/s) or leaves the plane (%g m/s)", rs[ri], lateral,
           spin, v[2]);
    /* a pyramid from the world axes gives the friction of its direction nearest -v */
    double sector = 2 * M_PI / rs[ri], off = fmod(phi + M_PI, sector);
    printf("box sliding at 30 deg to the world axes, r = %d: deceleration mu g to %.1e, lateral speed %.1e m/s "
           "(a world-axis pyramid: %.3f mu g)\n", rs[ri], worst, lateral, cos(fmin(off, sector - off)));
    sb_contact_free(P);
  }
}

static void test_incline_at_30_degrees(void) {
  char err[256];
  double mu = 0.5, psi = 30 * M_PI / 180;
  /* downhill at psi to x in plan: the plane tilts by theta about the horizontal axis across it */
  double across[3] = {-sin(psi), cos(psi), 0};
  for (int sliding = 0; sliding < 2; sliding++) {
    double theta = atan((sliding ? 1.02 : 0.98) * mu);
    double n[3] = {sin(theta) * cos(psi), sin(theta) * sin(psi), cos(theta)};  /* leans toward downhill */
    double down[3] = {cos(theta) * cos(psi), cos(theta) * sin(psi), -sin(theta)};
    for (int r = 4; r <= 8; r += 4) {
      sb_contact_problem *P = sb_contact_create(4, 1, 6, 8, err, sizeof err);
      sb_contact_options o = sb_contact_default_options();
    o.align_friction = 1;
      o.directions = r;
      double v[6] = {0}, worst = 0, stray = 0;
      int steps = 50;
      for (int step = 0; step < steps; step++) {
        sb_contact_clear(P);
        int body = box_on_plane(P, n, across, v, mu, err, sizeof err);
        EXPECT(body == 0, "incline: %s", err);
        EXPECT(sb_contact_solve(P, H, &o, NULL, err, sizeof err) == 0, "incline r = %d step %d: %s", r, step, err);
        double before = dot(v, down);
        sb_contact_body_velocity(P, body, v);
        double gain = dot(v, down) - before, expect = sliding ? G * H * (sin(theta) - mu * cos(theta)) : 0;
        worst = fmax(worst, fabs(gain - expect));
        double off[3];
        for (int k = 0; k < 3; k++) off[k] = v[k] - dot(v, down) * down[k];
        stray = fmax(stray, fmax(tu_maxabs(off, 3), tu_maxabs(v + 3, 3)));
      }
      double scale = G * H * sin(theta);
      EXPECT(worst <= 1e-9 * scale, "incline tan = %.2f mu, r = %d: speed gained per step off the analytic by %g m/s "
             "(%s)", sliding ? 1.02 : 0.98, r, worst, sliding ? "h g (sin - mu cos)" : "0: it must stick");
      EXPECT(stray <= 1e-9 * scale, "incline r = %d: velocity off the downhill line %g", r, stray);
      printf("incline 30 deg off the axes, tan(theta) = %.2f mu, r = %d: %s, per-step speed error %.1e m/s\n",
             sliding ? 1.02 : 0.98, r, sliding ? "slides" : "sticks", worst);
      sb_contact_free(P);
    }
  }
}

/* A point mass resting on a plane whose normal tilts by 0.05 rad toward the
 * diagonal, alternately a little nearer x and nearer y: a frame from the
 * world axis least aligned with n turns by 90 degrees every step. The warm
 * start (sb_contact_warm_impulse, what the sap and ncp models start from, in
 * the axes the new contact is added with) must be last step's friction,
 * turned into the new axes, not last step's coordinates in the old ones. */
static void test_wobbling_normal(void) {
  char err[256];
  double mu = 0.5, m = 1.0, M[9] = {m, 0, 0, 0, m, 0, 0, 0, m}, jac[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  sb_contact_problem *P = sb_contact_create(1, 1, 3, 4, err, sizeof err);
  sb_contact_options o = sb_contact_default_options();
  double v[3] = {0, 0, 0}, moved = 0, last[3] = {0, 0, 0}, worst = 0;
  int cold_late = 0, steps = 40;
  for (int step = 0; step < steps; step++) {
    double a = step % 2 ? 0.037 : 0.034, b = step % 2 ? 0.034 : 0.037, len = sqrt(1 + a * a + b * b);
    double n[3] = {a / len, b / len, 1 / len};
    double vfree[3] = {v[0], v[1], v[2] - G * H};
    sb_contact_clear(P);
    int body = sb_contact_add_dense(P, 3, M, vfree, err, sizeof err);
    sb_contact c;
    memset(&c, 0, sizeof c);
    c.side[0].body = body;
    c.side[0].jac = jac;
    c.side[1].body = -1;
    memcpy(c.normal, n, sizeof n);
    c.friction = mu;
    c.id = 7;
    EXPECT(sb_contact_add(P, &c, err, sizeof err) == 0, "wobble: %s", err);
    double lam[3], R[9], warm_t[3], last_t[3]; /* last: the last step's friction impulse (world) */
    if (step > 0) {
      EXPECT(sb_contact_warm_impulse(P, 7, lam) == 1, "wobble step %d: no warm start", step);
      sb_contact_result(P, 0, NULL, NULL, R, NULL);
      /* the friction (world) of the warm start and of the last step */
      for (int k = 0; k < 3; k++) {
        warm_t[k] = R[3 * k] * lam[0] + R[3 * k + 1] * lam[1];
        last_t[k] = last[k];
      }
      double d[3] = {warm_t[0] - last_t[0], warm_t[1] - last_t[1], warm_t[2] - last_t[2]};
      worst = fmax(worst, tu_maxabs(d, 3) / tu_maxabs(last_t, 3));
    }
    sb_contact_info info;
    EXPECT(sb_contact_solve(P, H, &o, &info, err, sizeof err) == 0, "wobble step %d: %s", step, err);
    if (step > 0) cold_late += info.cold_solves;
    double fn, Rl[9];
    sb_contact_result(P, 0, last, &fn, Rl, NULL);
    for (int k = 0; k < 3; k++) last[k] -= fn * Rl[3 * k + 2];
    sb_contact_body_velocity(P, body, v);
    moved = fmax(moved, tu_maxabs(v, 3));
  }
  EXPECT(moved <= 1e-12, "wobbling normal: the resting mass moves (%g m/s)", moved);
  /* the normals of two steps differ by 4e-3 rad: so do their tangent planes */
  EXPECT(worst <= 1e-2, "wobbling normal: the warm start's friction is off the last step's by %.3g (relative)",
         worst);
  printf("wobbling normal: sticks (|v| <= %.1e m/s), warm-start friction within %.1e of the last step's, "
         "%d cold solves after the first step\n", moved, worst, cold_late);
  sb_contact_free(P);
}

/* The frame of a contact added with a friction reference e (sb_contact.tangent, sb_contact_frame):
 * checked against t1 = (n x e) x n / |n x e| and t2 = n x e / |n x e|, the projection of e on the
 * tangent plane written another way, along normals that cross the place where the default frame
 * (no reference) switches its world axis (|n_x| passes |n_z|): there the default's t1 turns by 90
 * degrees in one step, the reference's by about the normal's own turn. A reference along the normal
 * gives the default frame. */
static void test_reference_frame(void) {
  char err[256];
  double m = 1.0, M[9] = {m, 0, 0, 0, m, 0, 0, 0, m}, jac[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  sb_contact_problem *P = sb_contact_create(1, 1, 3, 10, err, sizeof err);
  const double e[3] = {0.6, 0.9, 3.0};   /* any length; off the axes */
  double worst = 0, turn_ref = 0, turn_default = 0, dn_max = 0, last_ref[3] = {0}, last_def[3] = {0}, last_n[3] = {0};
  int steps = 41;
  for (int step = 0; step < steps; step++) {
    double a = 0.03 + 0.02 * step / (steps - 1), b = 0.04, len = sqrt(a * a + 1 + b * b);
    double n[3] = {a / len, -1 / len, b / len}, vfree[3] = {0, 0, 0}, R[9], R0[9];
    for (int pass = 0; pass < 2; pass++) {   /* with the reference, then without */
      sb_contact_clear(P);
      int body = sb_contact_add_dense(P, 3, M, vfree, err, sizeof err);
      sb_contact c;
      memset(&c, 0, sizeof c);
      c.side[0].body = body;
      c.side[0].jac = jac;
      c.side[1].body = -1;
      memcpy(c.normal, n, sizeof n);
      c.friction = 0.5;
      if (pass == 0) memcpy(c.tangent, e, sizeof e);
      EXPECT(sb_contact_add(P, &c, err, sizeof err) == 0, "reference frame: %s", err);
      sb_contact_result(P, 0, NULL, NULL, pass ? R0 : R, NULL);
    }
    double nxe[3] = {n[1] * e[2] - n[2] * e[1], n[2] * e[0] - n[0] * e[2], n[0] * e[1] - n[1] * e[0]};
    double l = sqrt(nxe[0] * nxe[0] + nxe[1] * nxe[1] + nxe[2] * nxe[2]);
    double t1[3] = {(nxe[1] * n[2] - nxe[2] * n[1]) / l, (nxe[2] * n[0] - nxe[0] * n[2]) / l,
                    (nxe[0] * n[1] - nxe[1] * n[0]) / l};
    for (int k = 0; k < 3; k++) {
      worst = fmax(worst, fabs(R[3 * k] - t1[k]));
      worst = fmax(worst, fabs(R[3 * k + 1] - nxe[k] / l));
      worst = fmax(worst, fabs(R[3 * k + 2] - n[k]));
    }
    if (step > 0) {
      double dr = 0, dd = 0, dn = 0;
      for (int k = 0; k < 3; k++) {
        dr += (R[3 * k] - last_ref[k]) * (R[3 * k] - last_ref[k]);
        dd += (R0[3 * k] - last_def[k]) * (R0[3 * k] - last_def[k]);
        dn += (n[k] - last_n[k]) * (n[k] - last_n[k]);
      }
      turn_ref = fmax(turn_ref, sqrt(dr));
      turn_default = fmax(turn_default, sqrt(dd));
      dn_max = fmax(dn_max, sqrt(dn));
    }
    for (int k = 0; k < 3; k++) {
      last_ref[k] = R[3 * k];
      last_def[k] = R0[3 * k];
      last_n[k] = n[k];
    }
  }
  EXPECT(worst <= 1e-15, "reference frame: t1, t2, n off the projection of the reference by %.3g", worst);
  EXPECT(turn_default > 1, "reference frame: the sweep does not cross the default frame's switch (t1 turns %.3g)",
         turn_default);
  EXPECT(turn_ref <= 2 * dn_max, "reference frame: t1 turns %.3g in a step where the normal turns %.3g", turn_ref,
         dn_max);
  /* a reference along the normal: the default frame */
  {
    double n[3] = {0.6, 0, 0.8}, vfree[3] = {0, 0, 0}, R[2][9], d = 0;
    for (int pass = 0; pass < 2; pass++) {
      sb_contact_clear(P);
      int body = sb_contact_add_dense(P, 3, M, vfree, err, sizeof err);
      sb_contact c;
      memset(&c, 0, sizeof c);
      c.side[0].body = body;
      c.side[0].jac = jac;
      c.side[1].body = -1;
      memcpy(c.normal, n, sizeof n);
      for (int k = 0; k < 3 && pass == 0; k++) c.tangent[k] = 2 * n[k];
      EXPECT(sb_contact_add(P, &c, err, sizeof err) == 0, "reference along n: %s", err);
      sb_contact_result(P, 0, NULL, NULL, R[pass], NULL);
    }
    for (int k = 0; k < 9; k++) d = fmax(d, fabs(R[0][k] - R[1][k]));
    EXPECT(d == 0, "a reference along the normal: the frame differs from the default's by %.3g", d);
  }
  printf("reference frame: t1, t2 = the projection of the reference to %.1e; largest turn of t1 a step %.3g "
         "(the normal's %.3g; the default frame's %.3g)\n", worst, turn_ref, dn_max, turn_default);
  sb_contact_free(P);
}

int main(void) {
  test_reference_frame();
  test_slide_at_30_degrees();
  test_incline_at_30_degrees();
  test_wobbling_normal();
  printf("%d passed, %d failed\n", tu_pass, tu_fail);
  return tu_fail != 0;
}

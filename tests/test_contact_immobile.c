/* Contacts that no impulse moves (contact.c, drop_immobile_kept): a point
 * fixed to the world (a disk at a static mount) pressed into a surface. Its
 * normal row of the LCP is w_n = b_n < 0 whatever the impulses, so kept it
 * made the LCP unsolvable, and the damped problem then divided by its
 * W_nn = 0 and applied no impulse at all.
 *   1. A block sliding and falling onto three contacts, with such a point
 *      among them (exactly fixed, and moved by 1e-8 of the block's
 *      mobility): solved, the point left out and counted, no pass answered
 *      by the damped problem, and the block's velocity and the three
 *      contacts' impulses those of the problem without the point. Under
 *      every stage-1 setting (rank selection on and off, the screen on and
 *      off) and both of the LCP's matrices (stored, operator), cold and warm.
 *   2. The damped problem with a contact of positive but subnormal mobility
 *      (rank_tol 0 keeps it): its gamma weight mu^2 / (rho W_nn) overflowed
 *      and the fallback refused its own matrix; now a bounded answer.
 *   3. The tiled rope clamped at the floor's height
 *      (bench/scenes/rope_plane_tiled.xml): its first disk's contacts are
 *      immobile, and no pass of its first steps needs the damped problem. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "contact_scenes.h"
#include "plugin_testutil.h"

#ifndef CUSP_SOURCE_DIR
#define CUSP_SOURCE_DIR "."
#endif

static const double H = 1e-3;

/* The 3 x 6 Jacobian (row-major) of a point at r on a 6-dof body (its
 * velocity v + omega x r = v - r^ omega), scaled by s. */
static void point_jacobian(const double r[3], double s, double jac[18]) {
  memset(jac, 0, 18 * sizeof *jac);
  double rhat[9] = {0, -r[2], r[1], r[2], 0, -r[0], -r[1], r[0], 0};
  for (int i = 0; i < 3; i++) {
    jac[6 * i + i] = s;
    for (int j = 0; j < 3; j++) jac[6 * i + 3 + j] = -s * rhat[3 * i + j];
  }
}

typedef struct {
  sb_contact_problem *P;
  int immobile_at; /* the fixed point's contact index, or -1 */
} block_problem;

/* A unit-mass block (unit inertia) moving at 0.3 m/s along x and falling at
 * 0.5 m/s onto three contacts under it (mu 0.5); with_point: a fourth
 * contact, second of the four, at a point moved by the block with a
 * Jacobian scaled by point_scale (0: fixed to the world), 1 cm into the
 * floor. */
static block_problem block_make(int with_point, double point_scale) {
  block_problem b = {NULL, -1};
  char err[256] = "";
  b.P = sb_contact_create(4, 1, 6, 4, err, sizeof err);
  EXPECT(b.P != NULL, "create: %s", err);
  double M[36], vf[6] = {0.3, 0, -0.5, 0, 0, 0};
  unit_mass(M);
  sb_contact_add_dense(b.P, 6, M, vf, err, sizeof err);
  const double corner[3][3] = {{0.1, 0, -0.1}, {-0.05, 0.08, -0.1}, {-0.05, -0.08, -0.1}};
  double jac[4][18], unused[18];
  long id = 1;
  for (int k = 0; k < 3; k++) {
    if (with_point && k == 1) {
      double r[3] = {0, 0, -0.1};
      point_jacobian(r, point_scale, jac[3]);
      sb_contact c = unit_point_contact(unused, 0, 0.5);
      c.side[0].jac = jac[3];
      c.gap = -0.01;
      c.id = 100;
      EXPECT(sb_contact_add(b.P, &c, err, sizeof err) >= 0, "add the fixed point: %s", err);
      b.immobile_at = 1;
    }
    point_jacobian(corner[k], 1, jac[k]);
    sb_contact c = unit_point_contact(unused, 0, 0.5);
    c.side[0].jac = jac[k];
    c.id = id++;
    EXPECT(sb_contact_add(b.P, &c, err, sizeof err) >= 0, "add corner %d: %s", k, err);
  }
  return b;
}

/* Index of corner k in a problem with or without the point. */
static int corner_index(const block_problem *b, int k) {
  return b->immobile_at >= 0 && k >= b->immobile_at ? k + 1 : k;
}

static void test_block_with_fixed_point(double point_scale, int rank_selection, int screen, int matrix) {
  char what[160];
  snprintf(what, sizeof what, "fixed point (mobility %g): rank_selection %d, screen %d, lcp_matrix %s",
           point_scale * point_scale, rank_selection, screen, matrix ? "operator" : "stored");
  sb_contact_options o = sb_contact_default_options();
  o.rank_selection = rank_selection;
  o.screen = screen;
  o.lcp_from_operator = matrix ? SB_CONTACT_LCP_OPERATOR : SB_CONTACT_LCP_STORED;
  block_problem with = block_make(1, point_scale), without = block_make(0, 0);
  for (int solve = 0; solve < 2; solve++) { /* cold, then warm from the first answer */
    char err[256] = "";
    sb_contact_info info, ref;
    int rc = sb_contact_solve(with.P, H, &o, &info, err, sizeof err);
    EXPECT(rc == 0 && info.lcp.status == SB_LCP_SOLVED, "%s, solve %d: not solved: %s", what, solve, err);
    EXPECT(sb_contact_solve(without.P, H, &o, &ref, err, sizeof err) == 0, "%s: the reference: %s", what, err);
    EXPECT(info.immobile == 1 && ref.immobile == 0, "%s, solve %d: %d immobile contacts counted (1 expected), %d "
           "without the point", what, solve, info.immobile, ref.immobile);
    EXPECT(info.rank_passes == ref.rank_passes, "%s, solve %d: %d stage-1 passes, %d without the point", what, solve,
           info.rank_passes, ref.rank_passes);
    EXPECT(info.damped_passes == 0, "%s, solve %d: %d passes answered by the damped problem (%s)", what, solve,
           info.damped_passes, info.lcp.message);
    double imp[3], fn;
    int kept;
    sb_contact_result(with.P, with.immobile_at, imp, &fn, NULL, &kept);
    EXPECT(!kept && imp[0] == 0 && imp[1] == 0 && imp[2] == 0, "%s, solve %d: the fixed point is kept (%d) or "
           "gets an impulse (%g %g %g)", what, solve, kept, imp[0], imp[1], imp[2]);
    double v[6], vref[6], dv = 0, di = 0, fsum = 0;
    sb_contact_body_velocity(with.P, 0, v);
    sb_contact_body_velocity(without.P, 0, vref);
    for (int k = 0; k < 6; k++) dv = fmax(dv, fabs(v[k] - vref[k]));
    for (int k = 0; k < 3; k++) {
      double a[3], b[3];
      sb_contact_result(with.P, corner_index(&with, k), a, NULL, NULL, NULL);
      sb_contact_result(without.P, k, b, NULL, NULL, NULL);
      for (int q = 0; q < 3; q++) di = fmax(di, fabs(a[q] - b[q]));
      fsum += b[2];
    }
    /* the block lands: the corners carry its 0.5 N s of falling momentum */
    EXPECT(fsum > 0.4 && dv <= 1e-9 && di <= 1e-9, "%s, solve %d: the block's velocity differs by %.3g m/s and "
           "the corners' impulses by %.3g N s from the problem without the point (normal load %.3g N s)", what,
           solve, dv, di, fsum);
  }
  sb_contact_free(with.P);
  sb_contact_free(without.P);
}

/* Two opposite normals at one point (infeasible, as test_contact's
 * test_infeasible: the damped problem answers) and a third contact whose
 * point moves with the block scaled by 1e-155: W_nn = 1e-310, subnormal but
 * positive, so rank_tol 0 keeps it. */
static void test_damped_subnormal_mobility(void) {
  char err[256] = "";
  sb_contact_problem *P = sb_contact_create(3, 1, 6, 4, err, sizeof err);
  double M[36], vf[6] = {0}, jac[18], tiny[18], r[3] = {0, 0, 0};
  unit_mass(M);
  sb_contact_add_dense(P, 6, M, vf, err, sizeof err);
  sb_contact c = unit_point_contact(jac, 3, 0.5);
  c.gap = -0.01;
  sb_contact_add(P, &c, err, sizeof err);
  c.normal[2] = -1;
  sb_contact_add(P, &c, err, sizeof err);
  point_jacobian(r, 1e-155, tiny);
  double unused[18];
  sb_contact t = unit_point_contact(unused, 0, 0.5);
  t.side[0].jac = tiny;
  t.gap = -0.01;
  sb_contact_add(P, &t, err, sizeof err);
  sb_contact_options o = sb_contact_default_options();
  o.rank_selection = 0;
  o.rank_tol = 0;
  sb_contact_info info;
  sb_contact_solve(P, H, &o, &info, err, sizeof err);
  EXPECT(info.damped_passes >= 1 && info.immobile == 0, "subnormal mobility: %d damped passes, %d immobile (the "
         "damped problem should answer, the contact stay in)", info.damped_passes, info.immobile);
  EXPECT(strstr(info.lcp.message, "applied the damped answer") != NULL, "subnormal mobility: the damped problem "
         "did not answer: %s", info.lcp.message);
  /* its bound (test_infeasible): 2 |b| over the two opposite normals */
  for (int i = 0; i < 2; i++) {
    double fn;
    sb_contact_result(P, i, NULL, &fn, NULL, NULL);
    EXPECT(isfinite(fn) && fn >= 0 && fn <= 4 * sqrt(2.0), "subnormal mobility: contact %d's normal impulse %.3g "
           "N s beyond the damped bound", i, fn);
  }
  sb_contact_free(P);
}

static void test_clamped_rope(void) {
  const char *path = CUSP_SOURCE_DIR "/bench/scenes/rope_plane_tiled.xml";
  mjModel *m = load(path, NULL, 0);
  mjData *d = m ? attach(m) : NULL;
  int steps = 0, damped = 0, with_immobile = 0, unsolved = 0;
  while (d && steps < 8) {
    mj_step(m, d);
    const cusp_step_report *r = cusp_report(m, d);
    steps++;
    damped += r->info.damped_passes;
    with_immobile += r->info.immobile > 0;
    unsolved += !r->solved;
  }
  printf("clamped tiled rope, %d steps: %d with immobile contacts, %d passes answered by the damped problem, %d "
         "unsolved\n", steps, with_immobile, damped, unsolved);
  EXPECT(steps == 8 && with_immobile == steps && damped == 0 && unsolved == 0, "clamped rope: %d of %d steps saw "
         "the clamped disk's contacts as immobile; %d damped passes; %d unsolved steps", with_immobile, steps,
         damped, unsolved);
  if (d) EXPECT(state_finite(m, d), "clamped rope: finite state");
  finish(m, d);
}

int main(void) {
  for (int s = 0; s < 2; s++)
    for (int rank = 0; rank < 2; rank++)
      for (int screen = 0; screen < 2; screen++)
        for (int matrix = 0; matrix < 2; matrix++) test_block_with_fixed_point(s ? 1e-8 : 0, rank, screen, matrix);
  test_damped_subnormal_mobility();
  test_clamped_rope();
  return test_report("contact_immobile");
}

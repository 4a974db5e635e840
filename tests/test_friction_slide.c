/* A soft arm sliding on a plane off its friction pyramid's directions, in a
 * MuJoCo scene (tests/data/scenes/friction_slide.xml): the arm lies on the
 * floor on a carriage that translates freely and is pushed at 30 degrees to
 * the world axes. cusp's lcp contact gives each disk a friction pyramid whose
 * directions come from the normal (world x first for a vertical normal), so
 * the slide runs between two of them. With align_friction (the default) the
 * pyramid's first direction turns onto the friction each contact needs, and
 * the answer must be Coulomb's, checked against the analytic slide:
 *   - every sliding contact's friction is mu fn (cusp_contact_force), and
 *     opposes the motion;
 *   - the floor carries carriage and arm (sum fn = M g) and so the whole
 *     system decelerates at mu g along its motion, without veering.
 * A pyramid of d directions fixed 30 degrees off the slip gives at most
 * mu fn cos(30 deg) for d = 3, 4 (and veers): align_friction 0 must show that,
 * so the checks can fail. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cusp.h"
#include "plugin_testutil.h"

#define SCENE(name) CUSP_SOURCE_DIR "/tests/data/scenes/" name

typedef struct {
  double coulomb;   /* worst | |f_t| / (mu fn) - 1 | over sliding contacts and steps */
  double least;     /* least |f_t| / (mu fn) */
  double heading;   /* worst sine between a contact's friction and -v */
  double decel;     /* deceleration along the motion over the window, / (mu g) */
  double lateral;   /* velocity across the initial motion at the end of the window, m/s */
  double support;   /* sum fn / (M g) at the window's end */
  int contacts;     /* sliding contacts checked */
} slide_result;

static slide_result slide(int pyramid, int align) {
  slide_result res = {0, INFINITY, 0, 0, 0, 0, 0};
  char pyr[8];
  snprintf(pyr, sizeof pyr, "%d", pyramid);
  cusp_override ov[2] = {{"arm", "align_friction", align ? "1" : "0"}, {"arm", "pyramid", pyr}};
  mjModel *m = load(SCENE("friction_slide.xml"), ov, 2);
  if (!m) return res;
  mjData *d = attach(m);
  if (!d) {
    mj_deleteModel(m);
    return res;
  }
  double mu = 0.5, g = -m->opt.gravity[2], h = m->opt.timestep;
  double mass = cusp_total_mass(m, d, 0) + m->body_mass[mj_name2id(m, mjOBJ_BODY, "carriage")];
  int jx = m->jnt_dofadr[mj_name2id(m, mjOBJ_JOINT, "x")], jy = m->jnt_dofadr[mj_name2id(m, mjOBJ_JOINT, "y")];
  while (d->time < 0.5) mj_step(m, d); /* settle on the floor */
  const double phi = 30 * M_PI / 180, v0 = 1.0, dir[2] = {cos(phi), sin(phi)};
  d->qvel[jx] = v0 * dir[0];
  d->qvel[jy] = v0 * dir[1];
  /* the window: after the arm's response to the friction's onset has died
   * out, before the slide stops (v0 / (mu g) = 0.2 s) */
  const double t_start = d->time, w0 = 0.05, w1 = 0.15;
  double v_w0 = 0, sum_fn = 0;
  while (d->time < t_start + w1 - 0.5 * h) {
    mj_step(m, d);
    double vx = d->qvel[jx], vy = d->qvel[jy], speed = hypot(vx, vy);
    if (fabs(d->time - (t_start + w0)) < 0.5 * h) v_w0 = vx * dir[0] + vy * dir[1];
    const cusp_contact_report *c;
    int n = cusp_contacts(m, d, &c);
    sum_fn = 0;
    for (int k = 0; k < n; k++) {
      double F[3];
      if (cusp_contact_force(m, d, k, F)) continue;
      double fn = F[0] * c[k].normal[0] + F[1] * c[k].normal[1] + F[2] * c[k].normal[2], ft[3];
      for (int q = 0; q < 3; q++) ft[q] = F[q] - fn * c[k].normal[q];
      sum_fn += fn;
      double ftn = sqrt(ft[0] * ft[0] + ft[1] * ft[1] + ft[2] * ft[2]);
      if (fn < 1e-3 * mass * g || d->time < t_start + w0) continue;
      res.contacts++;
      res.coulomb = fmax(res.coulomb, fabs(ftn / (mu * fn) - 1));
      res.least = fmin(res.least, ftn / (mu * fn));
      /* the contact points move with the carriage (the arm only flexes slowly) */
      double along = ft[0] * vx + ft[1] * vy, cross = ft[0] * vy - ft[1] * vx;
      res.heading = fmax(res.heading, along < 0 ? fabs(cross) / (ftn * speed) : 1);
    }
  }
  double v_w1 = d->qvel[jx] * dir[0] + d->qvel[jy] * dir[1];
  res.decel = (v_w0 - v_w1) / (w1 - w0) / (mu * g);
  res.lateral = -d->qvel[jx] * dir[1] + d->qvel[jy] * dir[0];
  res.support = sum_fn / (mass * g);
  finish(m, d);
  return res;
}

int main(void) {
  const int pyramids[3] = {3, 4, 8};
  for (int i = 0; i < 3; i++) {
    int r = pyramids[i];
    slide_result a = slide(r, 1), f = slide(r, 0);
    printf("arm sliding at 30 deg, pyramid %d: aligned: friction / (mu fn) off by %.2e (%d contacts), %.2e rad off "
           "the slip, deceleration %.7f mu g, lateral %.2e m/s, support %.6f M g; fixed: friction >= %.4f mu fn "
           "(cos(pi/%d) = %.4f), deceleration %.4f mu g, lateral %.2e m/s\n",
           r, a.coulomb, a.contacts, a.heading, a.decel, a.lateral, a.support, f.least, r, cos(M_PI / r), f.decel,
           f.lateral);
    EXPECT(a.contacts > 100 && fabs(a.support - 1) < 1e-3, "pyramid %d: the floor carries the arm and carriage "
           "while they slide (%d contacts, sum fn = %.6f M g)", r, a.contacts, a.support);
    EXPECT(a.coulomb < 1e-9, "pyramid %d: every sliding contact's friction is mu fn (off by %.3g)", r, a.coulomb);
    EXPECT(a.heading < 1e-9 && fabs(a.lateral) < 1e-9, "pyramid %d: friction opposes the motion (%.3g rad off) "
           "and the arm does not veer (%.3g m/s across)", r, a.heading, a.lateral);
    /* the stiff arm rides with the carriage: what is left is its creep, damping / stiffness = 1.3 ms */
    EXPECT(fabs(a.decel - 1) < 1e-4, "pyramid %d: the system decelerates at mu g (%.7f mu g)", r, a.decel);
    EXPECT(f.least < 0.95 && f.decel < 0.95, "pyramid %d, align_friction 0: a pyramid fixed 30 degrees off the slip "
           "falls short of Coulomb's (friction >= %.4f mu fn, deceleration %.4f mu g)", r, f.least, f.decel);
  }
  return test_report("friction_slide");
}

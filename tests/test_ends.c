/* A rod's far end held (keys end, end_body; plugin/ends.c): bilateral rows
 * solved with the contacts in one problem. Every check compares with
 * something independent of the code under test:
 *
 * 1. Clamped-clamped beam under its own weight (Euler-Bernoulli): midspan
 *    deflection w L^4 / (384 E I), and each end carrying half the weight.
 * 2. A pinned pendulum: a stiff rod on a light free-jointed mount, its far
 *    end pinned to the world, swinging at small amplitude: the period of the
 *    compound pendulum 2 pi sqrt(I_pivot / (m g d)), and energy that does not
 *    grow.
 * 3. Drift: a pinned and a clamped end under gravity for many seconds stay
 *    on their anchor; a mocap end_body moved along a circle is followed with
 *    the lag the rows predict (its last move over h their velocity).
 * 4. Clamp to a body with degrees of freedom (zero gravity): the impulse on
 *    the body equals the impulse on the rod, so the total momentum of rod,
 *    mount and body stays what it was.
 * 5. Copies and resets are exact with a held end. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chain.h"
#include "config.h"
#include "cusp.h"
#include "instances.h"
#include "mocap_circle.h"
#include "plugin_testutil.h"

/* ---------- 1. clamped-clamped beam ---------- */

static const char *beam_fmt =
    "<mujoco model=\"beam\">\n"
    "  <option timestep=\"%g\"/>\n"
    "  <extension><plugin plugin=\"cusp.softbody\"><instance name=\"rod\">\n"
    "    <config key=\"model\" value=\"cosserat\"/>\n"
    "    <config key=\"sections\" value=\"%d\"/>\n"
    "    <config key=\"length\" value=\"%g\"/>\n"
    "    <config key=\"radius\" value=\"%g\"/>\n"
    "    <config key=\"density\" value=\"%g\"/>\n"
    "    <config key=\"young\" value=\"%g\"/>\n"
    "    <config key=\"viscosity\" value=\"%g\"/>\n"
    "    <config key=\"strains\" value=\"kx ky ez\"/>\n"
    "    <config key=\"disks\" value=\"0\"/>\n"
    "    <config key=\"actuated\" value=\"none\"/>\n"
    "    <config key=\"end\" value=\"%s\"/>\n"
    "  </instance></plugin></extension>\n"
    "  <worldbody>\n"
    "    <body name=\"base\" pos=\"0 0 1\" euler=\"0 90 0\"><plugin instance=\"rod\"/></body>\n"
    "  </worldbody>\n"
    "</mujoco>\n";

static void clamped_beam(int sections, double *rel_err, double *reaction_err) {
  const double L = 1.0, r = 0.01, rho = 1000, E = 1e10, g = 9.81, h = 1e-3;
  char xml[4096];
  snprintf(xml, sizeof xml, beam_fmt, h, sections, L / sections, r, rho, E, 1e7, "clamp");
  mjData *d;
  mjModel *m = load_text_attached("beam", xml, &d);
  if (!m) return;
  double mass = cusp_total_mass(m, d, 0), w = mass * g / L, I = M_PI * pow(r, 4) / 4;
  double expect = w * pow(L, 4) / (384 * E * I);
  step_until(m, d, 1.0);
  double mid[3], tip[3], R[9], reac[6];
  cusp_backbone_point(m, d, 0, L / 2, mid, R);
  cusp_tip_pose(m, d, 0, tip, NULL);
  cusp_end_reaction(m, d, 0, reac);
  double defl = 1.0 - mid[2];
  *rel_err = fabs(defl - expect) / expect;
  *reaction_err = fabs(reac[2] - 0.5 * mass * g) / (0.5 * mass * g);
  printf("beam N=%d: midspan deflection %.6e m (Euler-Bernoulli %.6e, rel err %.2e); end reaction %.6e N "
         "(half the weight %.6e); tip at (%.3g %.3g %.3g); moment %.4e (w L^2/12 = %.4e)\n",
         sections, defl, expect, *rel_err, reac[2], 0.5 * mass * g, tip[0] - L, tip[1], tip[2] - 1, reac[4],
         w * L * L / 12);
  /* the clamp's moment: w L^2 / 12 (statics of the clamped-clamped beam) */
  EXPECT(fabs(fabs(reac[4]) - w * L * L / 12) < 1e-3 * w * L * L / 12 && fabs(reac[3]) + fabs(reac[5]) < 1e-9,
         "beam N=%d: end moment (%g %g %g), w L^2/12 = %g about y", sections, reac[3], reac[4], reac[5], w * L * L / 12);
  const cusp_step_report *rep = cusp_report(m, d);
  EXPECT(rep->nan_events == 0 && rep->solves > 0, "beam: %ld NaN events, %ld solves", rep->nan_events, rep->solves);
  finish(m, d);
}

/* ---------- 2. pinned pendulum ---------- */

static const char *pendulum_fmt =
    "<mujoco model=\"pendulum\">\n"
    "  <option timestep=\"%g\"/>\n"
    "  <extension><plugin plugin=\"cusp.softbody\"><instance name=\"rod\">\n"
    "    <config key=\"model\" value=\"cosserat\"/>\n"
    "    <config key=\"sections\" value=\"2\"/>\n"
    "    <config key=\"length\" value=\"%g\"/>\n"
    "    <config key=\"radius\" value=\"%g\"/>\n"
    "    <config key=\"density\" value=\"%g\"/>\n"
    "    <config key=\"young\" value=\"1e10\"/>\n"
    "    <config key=\"strains\" value=\"kx ky ez\"/>\n"
    "    <config key=\"disks\" value=\"0\"/>\n"
    "    <config key=\"actuated\" value=\"none\"/>\n"
    "    <config key=\"end\" value=\"pin\"/>\n"
    "  </instance></plugin></extension>\n"
    "  <worldbody>\n"
    "    <body name=\"mount\" pos=\"%.17g 0 %.17g\" euler=\"0 %.17g 0\">\n"
    "      <freejoint/>\n"
    "      <inertial pos=\"0 0 0\" mass=\"%g\" diaginertia=\"%g %g %g\"/>\n"
    "      <plugin instance=\"rod\"/>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "</mujoco>\n";

/* Energy of the rod (cusp_energy: absolute twists, so with the mount's
 * motion) and of the mount body (its mass at its origin: inertial pos 0). */
static double pendulum_energy(const mjModel *m, const mjData *d, double mb, double Ib) {
  double k, gr, el;
  cusp_energy(m, d, 0, &k, &gr, &el);
  const double *v = d->qvel, g = -m->opt.gravity[2];
  double e = k + gr + el + 0.5 * mb * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) + mb * g * d->qpos[2];
  return e + 0.5 * Ib * (v[3] * v[3] + v[4] * v[4] + v[5] * v[5]);
}

static void pinned_pendulum(void) {
  const double L = 0.5, r = 0.01, rho = 1000, mb = 0.02, Ib = 1e-6, th0 = 0.05, h = 1e-3, g = 9.81;
  /* hanging from its far end at (0, 0, 1), tilted by th0 about y */
  char xml[4096];
  snprintf(xml, sizeof xml, pendulum_fmt, h, L / 2, r, rho, L * sin(th0), 1 - L * cos(th0), -th0 * 180 / M_PI, mb,
           Ib, Ib, Ib);
  mjData *d;
  mjModel *m = load_text_attached("pendulum", xml, &d);
  if (!m) return;
  double mr = cusp_total_mass(m, d, 0);
  /* the compound pendulum about the pin: a solid cylinder (L^2/3 + r^2/4 about
   * its end) and the mount at distance L */
  double Ip = mr * (L * L / 3 + r * r / 4) + mb * L * L + Ib, dcom = (mr * L / 2 + mb * L) / (mr + mb);
  double T = 2 * M_PI * sqrt(Ip / ((mr + mb) * g * dcom)) * (1 + th0 * th0 / 16);
  double e0 = pendulum_energy(m, d, mb, Ib), emax = e0, emin = e0;
  double prev_x = d->qpos[0], t_cross[16], e_cross[16];
  int ncross = 0;
  double drift = 0;
  while (d->time < 5.5 * T && ncross < 16) {
    mj_step(m, d);
    double x = d->qpos[0];
    double e = pendulum_energy(m, d, mb, Ib), tip[3];
    if (prev_x < 0 && x >= 0) { /* upward crossing, interpolated */
      e_cross[ncross] = e;
      t_cross[ncross++] = d->time - h * x / (x - prev_x);
    }
    prev_x = x;
    emax = fmax(emax, e);
    emin = fmin(emin, e);
    mj_kinematics(m, d); /* the mount where the step left it */
    cusp_tip_pose(m, d, 0, tip, NULL);
    drift = fmax(drift, sqrt(tip[0] * tip[0] + tip[1] * tip[1] + (tip[2] - 1) * (tip[2] - 1)));
  }
  double period = ncross >= 2 ? (t_cross[ncross - 1] - t_cross[0]) / (ncross - 1) : 0;
  double swing = (mr + mb) * g * dcom * (1 - cos(th0)); /* the swing's energy */
  printf("pendulum: period %.6f s over %d swings (compound pendulum %.6f s, rel err %.2e); energy max %+.3e min "
         "%+.3e J of the swing's %.3e J; tip off its pin at most %.2e m\n",
         period, ncross - 1, T, fabs(period - T) / T, emax - e0, emin - e0, swing, drift);
  /* semi-implicit Euler at h = T / 1400 and the stiff rod's flexibility
   * shift the period by well under 0.1 %; a wrong inertia or a pin that
   * gives (a rod hanging from a spring) far more */
  EXPECT(ncross >= 5 && fabs(period - T) < 2e-3 * T, "pendulum: period %.6f s, compound pendulum %.6f s", period, T);
  /* no energy created: semi-implicit Euler's energy oscillates within a
   * swing by O(h) (0.2 % here) but has no trend; measured a period apart
   * it must not grow, and little is lost to the step and the stabilization */
  double trend = ncross >= 2 ? e_cross[ncross - 1] - e_cross[0] : 1;
  printf("pendulum: energy a period apart: %+.3e J over %d periods\n", trend, ncross - 1);
  EXPECT(emax - e0 < 0.01 * swing && e0 - emin < 0.01 * swing && trend < 1e-4 * swing && trend > -0.01 * swing,
         "pendulum: energy within [%+.3e, %+.3e] J, %+.3e J over %d periods, the swing holds %.3e J", emin - e0,
         emax - e0, trend, ncross - 1, swing);
  EXPECT(drift < 1e-5, "pendulum: the pinned tip left its anchor by %.3e m", drift);
  finish(m, d);
}

/* ---------- 3. a held end does not drift ---------- */

/* A soft rod (E = 1 MPa: it sags by a good part of its length) held at
 * both ends, swinging and settling under gravity for T seconds: the tip's
 * distance from its anchor (where it started, (L, 0, 1)) at most. */
static double drift(const char *end, double T, double *transient) {
  const double L = 0.6, h = 1e-3;
  char xml[4096];
  snprintf(xml, sizeof xml, beam_fmt, h, 4, L / 4, 0.01, 1000.0, 1e6, 2e4, end);
  mjModel *m = load_text("drift", xml);
  if (!m) return INFINITY;
  mjData *d = attach(m);
  if (!d) {
    finish(m, NULL);
    return INFINITY;
  }
  double worst = 0, mid[3];
  *transient = 0;
  while (d->time < T - 0.5 * h) {
    mj_step(m, d);
    double tip[3];
    cusp_tip_pose(m, d, 0, tip, NULL);
    double e = sqrt((tip[0] - L) * (tip[0] - L) + tip[1] * tip[1] + (tip[2] - 1) * (tip[2] - 1));
    if (d->time < 1) *transient = fmax(*transient, e);
    else worst = fmax(worst, e);
  }
  cusp_backbone_point(m, d, 0, L / 2, mid, NULL);
  printf("drift: end %s: tip off its anchor at most %.3e m in the first second, %.3e m from 1 to %g s; "
         "midspan sagged %.3f m\n", end, *transient, worst, T, 1 - mid[2]);
  EXPECT(1 - mid[2] > 0.01, "drift: end %s: the rod sags (%g m)", end, 1 - mid[2]);
  EXPECT(cusp_report(m, d)->nan_events == 0, "drift: end %s: NaN events", end);
  finish(m, d);
  return worst;
}

/* A mocap end_body moved along a circle (the rod's far end clamped to
 * it): the tip follows with the lag its rows predict (mocap_circle.h), its
 * axes stay the handle's, and the offset is gone once the handle stops. */
static const char *mocap_fmt =
    "<mujoco model=\"mocap\">\n"
    "  <option timestep=\"0.001\"/>\n"
    "  <extension><plugin plugin=\"cusp.softbody\"><instance name=\"rod\">\n"
    "    <config key=\"model\" value=\"cosserat\"/>\n"
    "    <config key=\"sections\" value=\"3\"/>\n"
    "    <config key=\"length\" value=\"0.15\"/>\n"
    "    <config key=\"radius\" value=\"0.01\"/>\n"
    "    <config key=\"young\" value=\"1e6\"/>\n"
    "    <config key=\"viscosity\" value=\"2e4\"/>\n"
    "    <config key=\"strains\" value=\"kx ky kz ez\"/>\n"
    "    <config key=\"disks\" value=\"1\"/>\n"
    "    <config key=\"actuated\" value=\"none\"/>\n"
    "    <config key=\"end\" value=\"clamp\"/>\n"
    "    <config key=\"end_body\" value=\"handle\"/>\n"
    "  </instance></plugin></extension>\n"
    "  <worldbody>\n"
    "    <body name=\"base\" pos=\"0 0 1\" euler=\"0 90 0\"><plugin instance=\"rod\"/></body>\n"
    "    <body name=\"handle\" mocap=\"true\" pos=\"0.45 0 1\">\n"
    "      <geom type=\"box\" size=\"0.01 0.02 0.02\" contype=\"0\" conaffinity=\"0\"/>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "</mujoco>\n";

static void tip_of_rod0(const mjModel *m, mjData *d, double p[3], double q[4]) {
  cusp_tip_pose(m, d, 0, p, q);
}

static void mocap_follow(void) {
  mjData *d;
  mjModel *m = load_text_attached("mocap", mocap_fmt, &d);
  if (!m) return;
  mocap_circle_result r = mocap_circle_follow(m, d, tip_of_rod0);
  printf("mocap: handle at %.3f m/s: tip trails by %.4e m on average, %.4e at most (the rows predict %.4e; "
         "seen standing still: %.4e); axes off by %.2e\n",
         r.speed, r.lag, r.lag_max, r.expect, r.still, r.orient);
  /* the rows' prediction is the stabilization's share; the linearized step
   * of the point's motion adds another second-order term (measured: the mean
   * lag 1.2 times the prediction), and a handle seen standing still would
   * leave it r.still, 300 times more */
  EXPECT(r.lag < 2 * r.expect && r.lag_max < 3 * r.expect,
         "mocap: tip trails by %.4e (at most %.4e), predicted %.4e", r.lag, r.lag_max, r.expect);
  EXPECT(r.orient < 1e-3, "mocap: the clamped tip's axes left the handle's by %.2e", r.orient);
  EXPECT(r.rest_off < 1e-9, "mocap: 2 s after the handle stopped the tip is %.3e m off", r.rest_off);
  finish(m, d);
}

/* ---------- 4. clamped to a body with degrees of freedom ---------- */

static const char *body_fmt =
    "<mujoco model=\"body\">\n"
    "  <option timestep=\"%g\" gravity=\"0 0 0\"/>\n"
    "  <extension><plugin plugin=\"cusp.softbody\"><instance name=\"rod\">\n"
    "    <config key=\"model\" value=\"cosserat\"/>\n"
    "    <config key=\"sections\" value=\"3\"/>\n"
    "    <config key=\"length\" value=\"0.15\"/>\n"
    "    <config key=\"radius\" value=\"0.01\"/>\n"
    "    <config key=\"young\" value=\"1e6\"/>\n"
    "    <config key=\"strains\" value=\"kx ky kz ez\"/>\n"
    "    <config key=\"disks\" value=\"0\"/>\n"
    "    <config key=\"actuated\" value=\"none\"/>\n"
    "    <config key=\"end\" value=\"%s\"/>\n"
    "    <config key=\"end_body\" value=\"block\"/>\n"
    "  </instance></plugin></extension>\n"
    "  <worldbody>\n"
    "    <body name=\"mount\" pos=\"0 0 1\" euler=\"0 90 0\">\n"
    "      <freejoint/>\n"
    "      <inertial pos=\"0 0 0\" mass=\"0.5\" diaginertia=\"2e-3 2e-3 2e-3\"/>\n"
    "      <plugin instance=\"rod\"/>\n"
    "    </body>\n"
    "    <body name=\"block\" pos=\"0.5 0 1\">\n"
    "      <freejoint/>\n"
    "      <inertial pos=\"0 0 0\" mass=\"0.3\" diaginertia=\"1e-3 1e-3 1e-3\"/>\n"
    "      <geom type=\"box\" size=\"0.04 0.02 0.02\" contype=\"0\" conaffinity=\"0\"/>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "</mujoco>\n";

static void cross3(const double a[3], const double b[3], double c[3]) {
  c[0] = a[1] * b[2] - a[2] * b[1];
  c[1] = a[2] * b[0] - a[0] * b[2];
  c[2] = a[0] * b[1] - a[1] * b[0];
}

/* Linear momentum P and angular momentum L about the world origin of a
 * free body with its com at its origin and a spherical inertia I. */
static void body_momentum(const mjModel *m, const mjData *d, int body, double P[3], double L[3]) {
  int q = m->jnt_qposadr[m->body_jntadr[body]], v = m->jnt_dofadr[m->body_jntadr[body]];
  double mass = m->body_mass[body], I = m->body_inertia[3 * body], w[3], R[9];
  mju_quat2Mat(R, d->qpos + q + 3);
  mju_mulMatVec3(w, R, d->qvel + v + 3);
  for (int k = 0; k < 3; k++) P[k] = mass * d->qvel[v + k];
  cross3(d->qpos + q, P, L);
  for (int k = 0; k < 3; k++) L[k] += I * w[k];
}

/* The same for the rod, node by node at its state on the mount's current
 * pose and twist (an own copy of its chain), added to P and L. */
static void rod_momentum(const mjModel *m, mjData *d, sb_model *arm, sb_work *w, int mount, double P[3], double L[3]) {
  double tw[6], tmp[3];
  mj_objectVelocity(m, d, mjOBJ_XBODY, mount, tw, 1);
  memcpy(arm->base.R, d->xmat + 9 * mount, sizeof arm->base.R);
  memcpy(arm->base.p, d->xpos + 3 * mount, sizeof arm->base.p);
  sb_set_base_motion(arm, tw, NULL);
  const double *q, *v;
  cusp_soft_state(m, d, 0, &q, &v);
  sb_kinematics(arm, w, q, v);
  for (int k = 0; k < arm->nnode; k++) {
    double hk[6], ha[3], hl[3];
    sb_mat6_vec(arm->node[k].inertia, w->eta + 6 * k, hk);
    const sb_pose *g = &w->g[k];
    mju_mulMatVec3(ha, g->R, hk);
    mju_mulMatVec3(hl, g->R, hk + 3);
    cross3(g->p, hl, tmp);
    for (int i = 0; i < 3; i++) {
      P[i] += hl[i];
      L[i] += ha[i] + tmp[i];
    }
  }
}

/* Zero gravity: the block spins and drifts, yanking the rod and its free
 * mount. (a) Step by step the block's momentum changes by exactly the
 * opposite of the impulse cusp reports on the rod's tip (MuJoCo integrates
 * the block; cusp_end_reaction is the solve's multiplier): the impulse on
 * the body equals the impulse on the rod. (b) Mount, rod and block together
 * keep their momentum: only internal forces act. */
static void clamp_to_body(const char *end, double h, double *balance, double *dP, double *dL) {
  char xml[4096];
  snprintf(xml, sizeof xml, body_fmt, h, end);
  mjModel *m = load_text("body", xml);
  *balance = *dP = *dL = INFINITY;
  if (!m) return;
  mjData *d = attach(m);
  if (!d) {
    finish(m, NULL);
    return;
  }
  int block = mj_name2id(m, mjOBJ_BODY, "block"), mount = mj_name2id(m, mjOBJ_BODY, "mount");
  int bv = m->jnt_dofadr[m->body_jntadr[block]];
  d->qvel[bv + 1] = 0.3;  /* along y */
  d->qvel[bv + 2] = -0.2; /* along z */
  d->qvel[bv + 3] = 2.0;  /* spin about its own x */
  d->qvel[bv + 5] = 1.0;
  mj_forward(m, d);
  sb_model *arm = instance_model(m, 0);
  if (!arm) {
    finish(m, d);
    return;
  }
  sb_work *w = sb_work_create(arm);
  double P0[3], L0[3], Pm[3], Lm[3];
  body_momentum(m, d, block, P0, L0);
  double pscale = sqrt(P0[0] * P0[0] + P0[1] * P0[1] + P0[2] * P0[2]);
  double lscale = sqrt(L0[0] * L0[0] + L0[1] * L0[1] + L0[2] * L0[2]);
  body_momentum(m, d, mount, Pm, Lm);
  for (int k = 0; k < 3; k++) {
    P0[k] += Pm[k];
    L0[k] += Lm[k];
  }
  rod_momentum(m, d, arm, w, mount, P0, L0);
  double worst = 0, fmaxn = 0, ep = 0, el = 0, moved = 0, stray = 0;
  const double T = 0.5;
  while (d->time < T - 0.5 * h) {
    double Pb0[3], Lb0[3], Pb1[3], Lb1[3], reac[6], anchor_r[3];
    body_momentum(m, d, block, Pb0, Lb0);
    /* the anchor: 0.05 m behind the block's origin along its x axis */
    double R[9], off[3] = {-0.05, 0, 0};
    int bq = m->jnt_qposadr[m->body_jntadr[block]];
    mju_quat2Mat(R, d->qpos + bq + 3);
    mju_mulMatVec3(anchor_r, R, off);
    double w0[3];
    memcpy(w0, d->qvel + bv + 3, sizeof w0);
    mj_step(m, d);
    cusp_end_reaction(m, d, 0, reac);
    body_momentum(m, d, block, Pb1, Lb1);
    /* about the block's origin at the step's start: dP = -F h and
     * d(L about that point) = -(M + r x F) h (spherical inertia: no
     * gyroscopic torque; P moves that point's moment by p0 x dP) */
    double e = 0;
    for (int k = 0; k < 3; k++) e = fmax(e, fabs(Pb1[k] - Pb0[k] + reac[k] * h));
    /* angular, in the block's axes at the step's start (MuJoCo's free joint
     * keeps its angular velocity in body axes): I dw = -R^T (M + r x F) h */
    double rf[3], tau[3], tau_b[3], I = m->body_inertia[3 * block];
    cross3(anchor_r, reac, rf);
    for (int k = 0; k < 3; k++) tau[k] = -(reac[3 + k] + rf[k]);
    mju_mulMatTVec3(tau_b, R, tau);
    for (int k = 0; k < 3; k++) e = fmax(e, fabs(I * (d->qvel[bv + 3 + k] - w0[k]) - tau_b[k] * h) / 0.05);
    worst = fmax(worst, e);
    double tip[3], anc[3];
    mj_kinematics(m, d); /* the mount where the step left it: cusp_tip_pose reads its xpos */
    cusp_tip_pose(m, d, 0, tip, NULL);
    mju_quat2Mat(R, d->qpos + bq + 3);
    mju_mulMatVec3(anc, R, off);
    double gap = 0;
    for (int k = 0; k < 3; k++) gap += (tip[k] - anc[k] - d->qpos[bq + k]) * (tip[k] - anc[k] - d->qpos[bq + k]);
    stray = fmax(stray, sqrt(gap));
    fmaxn = fmax(fmaxn, sqrt(reac[0] * reac[0] + reac[1] * reac[1] + reac[2] * reac[2]) * h);
    moved = fmax(moved, fabs(d->xpos[3 * mount + 1]));
  }
  double P[3], L[3];
  body_momentum(m, d, block, P, L);
  body_momentum(m, d, mount, Pm, Lm);
  for (int k = 0; k < 3; k++) {
    P[k] += Pm[k];
    L[k] += Lm[k];
  }
  rod_momentum(m, d, arm, w, mount, P, L);
  for (int k = 0; k < 3; k++) {
    ep = fmax(ep, fabs(P[k] - P0[k]));
    el = fmax(el, fabs(L[k] - L0[k]));
  }
  *balance = worst / fmaxn;
  *dP = ep / pscale;
  *dL = el / lscale;
  printf("clamp to a body (%s, h %g): block momentum vs reported impulse per step off by %.2e (angular: per "
         "0.05 m lever) of the largest impulse %.2e N*s; total |dP| %.2e of %.2e, |dL| %.2e of %.2e over %g s; the "
         "mount moved %.3f m; tip off its anchor at most %.2e m\n",
         end, h, worst, fmaxn, ep, pscale, el, lscale, T, moved, stray);
  EXPECT(moved > 1e-3, "clamp to a body: the block pulled the rod and its mount along (%g m)", moved);
  EXPECT(stray < 1e-5, "clamp to a body (%s, h %g): the tip strayed %.3e m from its anchor on the block", end, h, stray);
  EXPECT(cusp_report(m, d)->nan_events == 0, "clamp to a body: NaN events");
  sb_work_free(w);
  sb_model_free(arm);
  finish(m, d);
}

/* ---------- 4b. with a contact in the same problem ---------- */

/* A ball at rest on the middle of a clamped-clamped soft rod: the ball's
 * contact and the clamp are one mixed problem (the ball, a body with
 * degrees of freedom, in it too). Statics by symmetry: the far end carries
 * half of the rod's and the ball's weight; the ball rests on the rod.
 * The ball slides in the rod's vertical plane only: free, it would sit on
 * the rod's top like a ball on a cylinder, an unstable equilibrium
 * sideways (growth rate sqrt(5/7 g / (r + R)), about 11/s), so whether it
 * stayed would depend on the solver's last bits. */
static void ball_on_clamped_rod(void) {
  const char *xml =
      "<mujoco model=\"ball\">\n"
      "  <option timestep=\"0.001\"/>\n"
      "  <extension><plugin plugin=\"cusp.softbody\"><instance name=\"rod\">\n"
      "    <config key=\"model\" value=\"cosserat\"/>\n"
      "    <config key=\"sections\" value=\"4\"/>\n"
      "    <config key=\"length\" value=\"0.15\"/>\n"
      "    <config key=\"radius\" value=\"0.01\"/>\n"
      "    <config key=\"young\" value=\"2e6\"/>\n"
      "    <config key=\"viscosity\" value=\"2e4\"/>\n"
      "    <config key=\"strains\" value=\"kx ky kz ez\"/>\n"
      "    <config key=\"disks\" value=\"4\"/>\n"
      "    <config key=\"disk_radius\" value=\"0.015\"/>\n"
      "    <config key=\"actuated\" value=\"none\"/>\n"
      "    <config key=\"end\" value=\"clamp\"/>\n"
      "  </instance></plugin></extension>\n"
      "  <worldbody>\n"
      "    <body name=\"base\" pos=\"-0.3 0 0.8\" euler=\"0 90 0\"><plugin instance=\"rod\"/></body>\n"
      "    <body name=\"ball\" pos=\"0 0 0.86\">\n"
      "      <joint name=\"bx\" type=\"slide\" axis=\"1 0 0\"/><joint name=\"bz\" type=\"slide\" axis=\"0 0 1\"/>\n"
      "      <geom type=\"sphere\" size=\"0.04\" mass=\"0.05\"/></body>\n"
      "  </worldbody>\n"
      "</mujoco>\n";
  mjData *d;
  mjModel *m = load_text_attached("ball", xml, &d);
  if (!m) return;
  step_until(m, d, 3.0);
  double reac[6], g = -m->opt.gravity[2], mr = cusp_total_mass(m, d, 0), mb = 0.05;
  cusp_end_reaction(m, d, 0, reac);
  int ball = mj_name2id(m, mjOBJ_BODY, "ball");
  const double *bv = d->qvel + m->jnt_dofadr[m->body_jntadr[ball]]; /* x, z */
  double expect = 0.5 * (mr + mb) * g, speed = sqrt(bv[0] * bv[0] + bv[1] * bv[1]);
  double bx = d->xpos[3 * ball];
  const cusp_step_report *rep = cusp_report(m, d);
  printf("ball on a clamped rod: end reaction %.6f N (half of rod and ball %.6f N), ball at x = %.2e m, speed "
         "%.1e m/s, %d contacts (%d kept), deepest %.2e m\n",
         reac[2], expect, bx, speed, rep->ncontact, rep->nkept, rep->max_penetration);
  /* The ball rocks slowly in the rod's dip (nothing damps its rolling but
   * the rod), millimetres off the middle: a point load P at x from the
   * middle of a clamped-clamped beam shifts the end's share by 1.5 P x / L
   * (from P a^2 (3L - 2a) / L^3). Without the contact in the problem the
   * end would carry 0.245 N less; a clamp that gave, less still. */
  double tol = 1.5 * mb * g * fabs(bx) / 0.6 + 1e-3 * expect;
  EXPECT(fabs(reac[2] - expect) < tol && speed < 1e-2 && rep->nkept > 0 && rep->max_penetration < 1e-4,
         "ball on a clamped rod: end reaction %.6f N, half the weight %.6f N; ball speed %.2e, %d kept, %.2e m deep",
         reac[2], expect, speed, rep->nkept, rep->max_penetration);
  EXPECT(rep->solves == rep->converged && rep->nan_events == 0, "ball on a clamped rod: %ld of %ld solves converged",
         rep->converged, rep->solves);
  finish(m, d);
}

/* ---------- 5. copies and resets ---------- */

/* The mocap-held rod: a copy taken mid-run and the original step on
 * identically, and a reset replays the first run bit for bit (the anchor is
 * part of the model; nothing of the constraint is history). */
static void copies_exact(void) {
  mjData *d;
  mjModel *m = load_text_attached("copy", mocap_fmt, &d);
  if (!m) return;
  mjtNum *first = NULL; /* the first run's end */
  mjData *c = NULL;
  for (int run = 0; run < 2; run++) {
    for (int k = 0; k < 400; k++) {
      d->mocap_pos[2] = 1 - 0.05 * sin(0.01 * k);
      mj_step(m, d);
      if (run == 0 && k == 199) c = mj_copyData(NULL, m, d);
      if (run == 0 && k >= 200) {
        c->mocap_pos[2] = d->mocap_pos[2];
        mj_step(m, c);
      }
    }
    if (run == 0) {
      first = integration_state(m, d);
      EXPECT(c && same_integration_state(m, c, first), "copy: a copy taken at step 200 steps on differently");
      mj_resetData(m, d);
      mj_forward(m, d);
    } else {
      EXPECT(same_integration_state(m, d, first), "reset: the run after mj_resetData differs from the first");
    }
  }
  /* a live switch to a model without the held end is refused, naming both keys */
  char err[512] = "", val[64] = "";
  int rc = cusp_set(m, d, 0, "contact", "sap", err, sizeof err);
  cusp_get(m, d, 0, "contact", val, sizeof val);
  EXPECT(rc != 0 && strstr(err, "\"end\"") && strstr(err, "\"contact\"") && strstr(err, "sap") && !strcmp(val, "lcp"),
         "cusp_set contact=sap with a clamped end: rc %d, \"%s\", contact now %s", rc, err, val);
  double reac[6];
  EXPECT(cusp_end_reaction(m, d, 0, reac) == 0 && cusp_end_reaction(m, d, 1, reac) == -1,
         "cusp_end_reaction: instance 0 held, no instance 1");
  if (c) mj_deleteData(c);
  free(first);
  finish(m, d);
}

int main(void) {
  copies_exact();
  ball_on_clamped_rod();
  double bal, dP, dL, bal4, dP4, dL4, balp, dPp, dLp;
  clamp_to_body("clamp", 1e-3, &bal, &dP, &dL);
  clamp_to_body("clamp", 2.5e-4, &bal4, &dP4, &dL4);
  clamp_to_body("pin", 1e-3, &balp, &dPp, &dLp);
  /* (a) to rounding; (b) the implicit mount coupling takes positions and
   * velocity products at the step's start (first order, as
   * tests/test_mount.c finds for a free mount): the drift is about 1e-3 at
   * 1 ms and falls with h (by 4.5 from 1 to 0.25 ms) */
  EXPECT(bal < 1e-12 && bal4 < 1e-12 && balp < 1e-12,
         "clamp to a body: the block's momentum change differs from the reported impulse by %.2e / %.2e / %.2e", bal,
         bal4, balp);
  EXPECT(dP < 3e-3 && dL < 3e-3 && dPp < 3e-3 && dLp < 3e-3 && dP4 < 0.4 * dP && dL4 < 0.4 * dL,
         "clamp to a body: total momentum drift |dP| %.2e, |dL| %.2e at 1 ms (pin %.2e %.2e), %.2e %.2e at 0.25 ms", dP,
         dL, dPp, dLp, dP4, dL4);
  double tp, tc, dp = drift("pin", 20, &tp), dc = drift("clamp", 20, &tc);
  /* The rows hold the tip's velocity at the end of each step; the tip's
   * position is not linear in the coordinates, so a swinging rod's tip
   * strays by O(h^2 |v|^2 curvature) per step, which the stabilization
   * takes back at the rate alpha: micrometres while the rod falls and
   * swings, nothing once it settles. Without stabilization those errors
   * add up (a drift); without the rows the tip falls by centimetres. */
  EXPECT(tp < 1e-4 && tc < 1e-4 && dp < 1e-9 && dc < 1e-9,
         "drift: tip off its anchor by pin %.3e / clamp %.3e m while settling, pin %.3e / clamp %.3e m after", tp, tc,
         dp, dc);
  mocap_follow();
  pinned_pendulum();
  double e8, r8, e16, r16;
  clamped_beam(8, &e8, &r8);
  clamped_beam(16, &e16, &r16);
  /* Piecewise constant strain converges to Euler-Bernoulli at second order
   * in the section length (the errors fall by 4 from 8 to 16 sections), so
   * the 16-section deflection is within 2 % (measured 1.6 %) and the
   * Richardson extrapolation (4 d16 - d8) / 3 within 1e-3 of w L^4/(384 EI).
   * A wrong end condition is off by far more: a pinned-pinned beam sags
   * 5 times as much, a clamp that gives (rotation free) as well. The
   * reaction is statics: half the weight by symmetry, to rounding. */
  EXPECT(e16 < 0.02, "clamped beam: 16 sections off Euler-Bernoulli by %.3e", e16);
  double ratio = e8 / e16, rich = fabs((4 * (1 - e16) - (1 - e8)) / 3 - 1);
  EXPECT(ratio > 3.6 && ratio < 4.4 && rich < 1e-3,
         "clamped beam: error ratio 8/16 sections %.3f (second order: 4), extrapolated off by %.3e", ratio, rich);
  EXPECT(r8 < 1e-6 && r16 < 1e-6, "clamped beam: end reaction off half the weight by %.2e, %.2e", r8, r16);
  return test_report("ends");
}

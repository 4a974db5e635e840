/* An arm on a mount with degrees of freedom (issue 19 items 2 and 8): the
 * plugin's coupling of MuJoCo's mount with the soft step must be the one
 * linearly implicit system of mount + arm.
 *
 * 1. Against one chain: the same robot built in the softbody core as one
 *    chain (a rigid prismatic or revolute segment carrying the mount's mass
 *    and inertia, then the arm's sections) and stepped as one system by
 *    sb_step. MuJoCo's semi-implicit Euler on the mount is that step's
 *    rigid part (no stiffness or damping on the joint), so the two
 *    discretizations are the same equations solved two ways (one Cholesky
 *    of the whole system here, MuJoCo's factorization of the mount's
 *    Schur complement there): the trajectories agree to rounding, for a
 *    light and a heavy mount, at h = 1 ms and 0.1 ms. An explicit
 *    coupling is off by O(h) there (or diverges, for the light mount).
 * 2. A free-jointed mount of 1, 10, 100 kg: no instability, and total
 *    linear and angular momentum of mount + arm (zero gravity, only
 *    internal actuation) conserved to the scheme's first-order drift,
 *    which shrinks with h.
 * 3. Constraints on mount and arm: a 1 kg mount carried into a joint limit
 *    (MuJoCo's constraint, which sees the arm's inertia in the mass matrix)
 *    and an arm carried into a wall (cusp's LCP, which sees mount and arm
 *    as one body): mount and arm stop together, without penetrating, and
 *    the momentum they lose is the constraint's impulse.
 * 4. Soft-soft contact on free mounts (docs/soft_soft_mount.md): the
 *    contact has the MuJoCo system as a third participant, so the LCP sees
 *    the mount's mobility at it. A rod on a light or a low-inertia free
 *    mount dropped 2 mm across a clamped rod rests on it (the partitioned
 *    contact blew up at each of these, or threw the mount centimetres up);
 *    and two free-mounted rods colliding in zero gravity keep the total
 *    momentum of mounts and arms to the scheme's first-order drift; two
 *    arms on one slide rest on each other. The
 *    sap and ncp models solve on the same coupled problem: the drop
 *    completes with them too (it blew up with both, on a rod or a capsule,
 *    while they saw the arm on a mount moving as at the step's start). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chain.h"
#include "config.h"
#include "cusp.h"
#include "instances.h"
#include "plugin_testutil.h"

static const char *scene_fmt =
    "<mujoco model=\"mount\">\n"
    "  <option timestep=\"%g\" gravity=\"0 0 0\"/>\n"
    "  <extension><plugin plugin=\"cusp.softbody\"><instance name=\"arm\">\n"
    "    <config key=\"disks\" value=\"3\"/>\n"
    "  </instance></plugin></extension>\n"
    "  <worldbody>\n"
    "    <body name=\"mount\" pos=\"0.1 -0.2 1\" euler=\"%s\">\n"
    "      %s\n"
    "      <inertial pos=\"%s\" mass=\"%g\" diaginertia=\"%g %g %g\"/>\n"
    "      <plugin instance=\"arm\"/>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "</mujoco>\n";

static mjModel *load_scene(const char *name, double h, const char *euler, const char *joint, const char *ipos,
                           double mass) {
  char xml[2048];
  snprintf(xml, sizeof xml, scene_fmt, h, euler, joint, ipos, mass, 0.002 * mass, 0.003 * mass, 0.004 * mass);
  return load_text(name, xml);
}

/* The chambers driven from t = 0.2 s (a bend out of the joint's plane and
 * an elongation), as ctrl: generalized forces ctrl * gear on the arm. */
static const struct { const char *name; double ctrl; } drive[] = {{"arm/s1c1", 20}, {"arm/s2c2", 12}, {"arm/s3c3", 6}};
#define NDRIVE 3
#define T_DRIVE 0.2

static void set_drive(const mjModel *m, mjData *d, double *tau_arm) {
  for (int k = 0; k < NDRIVE; k++) {
    int a = mj_name2id(m, mjOBJ_ACTUATOR, drive[k].name);
    double u = d->time >= T_DRIVE - 1e-12 ? drive[k].ctrl : 0;
    if (a < 0) continue;
    d->ctrl[a] = u;
    if (tau_arm) {
      /* the coordinate sXcY is 3 (X-1) + (Y-1) */
      int sec = drive[k].name[5] - '1', ch = drive[k].name[7] - '1';
      double lo = m->actuator_ctrlrange[2 * a], hi = m->actuator_ctrlrange[2 * a + 1];
      tau_arm[3 * sec + ch] = fmin(hi, fmax(lo, u)) * m->actuator_gear[6 * a];
    }
  }
}

/* ---------- 1. against one chain ---------- */

typedef enum { MOUNT_SLIDE, MOUNT_HINGE } mount_kind;

static void compare_one_chain(mount_kind kind, double mass, double h, double T) {
  const char *label = kind == MOUNT_SLIDE ? "slide" : "hinge";
  /* slide along a tilted axis; hinge 0.1 m below the mount's origin, the
   * mount's com 0.02 m off it: the arm swings about the hinge */
  const char *joint = kind == MOUNT_SLIDE ? "<joint name=\"j\" type=\"slide\" axis=\"1 0.3 0.2\"/>"
                                          : "<joint name=\"j\" type=\"hinge\" axis=\"0 1 0.2\" pos=\"0 0 -0.1\"/>";
  const char *ipos = kind == MOUNT_SLIDE ? "0 0 0" : "0.02 0 0";
  mjModel *m = load_scene(label, h, "20 -10 30", joint, ipos, mass);
  if (!m) return;
  mjData *d = attach(m);
  if (!d) {
    finish(m, NULL);
    return;
  }
  cusp_instance_config *cfg = instance_config(m, 0);
  if (!cfg) {
    finish(m, d);
    return;
  }
  char err[512];

  /* the reference: [joint with the mount's body, the arm's sections] */
  sb_segment_params seg[CUSP_MAX_SECTIONS + 1];
  sb_chain_params cp;
  cusp_config_chain(cfg, seg + 1, &cp);
  int body = mj_name2id(m, mjOBJ_BODY, "mount"), jnt = mj_name2id(m, mjOBJ_JOINT, "j");
  const double *R = d->xmat + 9 * body, *P = d->xpos + 3 * body; /* at qpos = 0 */
  seg[0] = sb_segment_default(kind == MOUNT_SLIDE ? SB_SEG_PRISMATIC : SB_SEG_REVOLUTE);
  memcpy(seg[0].axis, m->jnt_axis + 3 * jnt, sizeof seg[0].axis); /* body axes */
  seg[0].link_mass = m->body_mass[body];
  /* the joint frame: the body's axes at the joint's anchor */
  const double *anchor = m->jnt_pos + 3 * jnt;
  for (int a = 0; a < 3; a++) seg[0].link_com[a] = m->body_ipos[3 * body + a] - anchor[a];
  /* MuJoCo's inertia is about the com in the inertial frame's axes: back to body axes */
  double iq[9], Rc[9];
  mju_quat2Mat(iq, m->body_iquat + 4 * body);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      double x = 0;
      for (int k = 0; k < 3; k++) x += iq[3 * i + k] * m->body_inertia[3 * body + k] * iq[3 * j + k];
      Rc[3 * i + j] = x;
    }
  seg[0].link_inertia[0] = Rc[0];
  seg[0].link_inertia[1] = Rc[4];
  seg[0].link_inertia[2] = Rc[8];
  seg[0].link_inertia[3] = Rc[1];
  seg[0].link_inertia[4] = Rc[2];
  seg[0].link_inertia[5] = Rc[5];
  seg[1].placement = sb_pose_identity();
  for (int a = 0; a < 3; a++) seg[1].placement.p[a] = -anchor[a]; /* the arm starts at the body's origin */
  cp.nseg += 1;
  cp.seg = seg;
  memcpy(cp.base.R, R, sizeof cp.base.R);
  for (int a = 0; a < 3; a++) cp.base.p[a] = P[a] + R[3 * a] * anchor[0] + R[3 * a + 1] * anchor[1] + R[3 * a + 2] * anchor[2];
  memset(cp.gravity, 0, sizeof cp.gravity);
  sb_model *ref = sb_model_create(&cp, err, sizeof err);
  EXPECT(ref != NULL, "reference chain: %s", err);
  if (!ref) {
    free(cfg);
    finish(m, d);
    return;
  }
  sb_state *rs = sb_state_create(ref);
  sb_work *rw = sb_work_create(ref);
  int n = ref->n;
  double *tau = calloc(n, sizeof(double));
  double eq = 0, ev = 0, scale_q = 0, scale_v = 0, ejq = 0, ejv = 0, jq_max = 0, jv_max = 0;
  int ok = 1, steps = 0;
  while (d->time < T - 0.5 * h && ok) {
    memset(tau, 0, sizeof(double) * n);
    set_drive(m, d, tau + 1);
    mj_step(m, d);
    ok = sb_step(ref, rs, rw, tau, h, NULL, NULL, err, sizeof err) == 0;
    EXPECT(ok, "%s %g kg h %g: reference step: %s", label, mass, h, err);
    steps++;
    const double *q, *v;
    cusp_soft_state(m, d, 0, &q, &v);
    for (int i = 0; i < n - 1; i++) {
      eq = fmax(eq, fabs(q[i] - rs->q[1 + i]));
      ev = fmax(ev, fabs(v[i] - rs->v[1 + i]));
      scale_q = fmax(scale_q, fabs(rs->q[1 + i]));
      scale_v = fmax(scale_v, fabs(rs->v[1 + i]));
    }
    ejq = fmax(ejq, fabs(d->qpos[0] - rs->q[0]));
    ejv = fmax(ejv, fabs(d->qvel[0] - rs->v[0]));
    jq_max = fmax(jq_max, fabs(rs->q[0]));
    jv_max = fmax(jv_max, fabs(rs->v[0]));
  }
  /* compute adds the arm's inertia to d->M once per position stage: a
   * forward pass that skips that stage (finite differences do) must give
   * the same accelerations as a full one */
  double *qacc = calloc(m->nv, sizeof(double));
  mj_forward(m, d);
  memcpy(qacc, d->qacc, sizeof(double) * m->nv);
  mj_forwardSkip(m, d, mjSTAGE_POS, 0);
  mj_forwardSkip(m, d, mjSTAGE_POS, 0);
  EXPECT(!memcmp(qacc, d->qacc, sizeof(double) * m->nv), "%s %g kg h %g: qacc %.17g after forward, %.17g after "
         "forwardSkip(POS) twice", label, mass, h, qacc[0], d->qacc[0]);
  free(qacc);
  const cusp_step_report *rep = cusp_report(m, d);
  EXPECT(d->warning[mjWARN_BADQACC].number == 0 && rep->nan_events == 0,
         "%s %g kg h %g: MuJoCo's instability warning %d, NaN events %ld", label, mass, h,
         d->warning[mjWARN_BADQACC].number, rep->nan_events);
  /* the same equations: only rounding separates them (the arm moves by
   * centimetres and the joint by 0.01 (1 kg) or 1e-4 (100 kg) in these runs: the checks below
   * also make sure something happened) */
  double tol = 1e-9;
  EXPECT(scale_q > 1e-3 && jq_max > (mass > 10 ? 1e-5 : 1e-3), "%s %g kg h %g: the arm (%g) and the mount (%g) moved", label, mass, h,
         scale_q, jq_max);
  EXPECT(eq <= tol * fmax(scale_q, 1) && ev <= tol * fmax(scale_v, 1) && ejq <= tol * fmax(jq_max, 1) &&
             ejv <= tol * fmax(jv_max, 1),
         "%s %g kg h %g: plugin vs one chain after %d steps: arm q %.2e (of %.2e) v %.2e (of %.2e), "
         "joint q %.2e (of %.2e) v %.2e (of %.2e)",
         label, mass, h, steps, eq, scale_q, ev, scale_v, ejq, jq_max, ejv, jv_max);
  printf("%s mount %5g kg, h %g: vs one chain over %d steps: arm q %.1e (of %.1e), v %.1e (of %.1e); "
         "joint q %.1e (of %.1e), v %.1e (of %.1e)\n",
         label, mass, h, steps, eq, scale_q, ev, scale_v, ejq, jq_max, ejv, jv_max);
  free(tau);
  sb_work_free(rw);
  sb_state_free(rs);
  sb_model_free(ref);
  free(cfg);
  finish(m, d);
}

/* ---------- 2. a free-jointed mount: momentum ---------- */

static void cross3(const double a[3], const double b[3], double c[3]) {
  c[0] = a[1] * b[2] - a[2] * b[1];
  c[1] = a[2] * b[0] - a[0] * b[2];
  c[2] = a[0] * b[1] - a[1] * b[0];
}

/* Total linear momentum P and angular momentum L about the world origin of
 * the mount and the arm (the arm's nodes at its state, on the mount's
 * current pose and twist, from an own copy of its chain), and the norms of
 * the arm's part of each. */
static void momentum_of(const mjModel *m, mjData *d, int inst, sb_model *arm, sb_work *w, int body, double P[3],
                        double L[3], double *Parm, double *Larm) {
  double vel[6], r[3], I[9], iw[3], tmp[3];
  mj_objectVelocity(m, d, mjOBJ_BODY, body, vel, 0); /* [w; v] of the com, world */
  const double *xi = d->xipos + 3 * body, *Ri = d->ximat + 9 * body, *Ip = m->body_inertia + 3 * body;
  double mass = m->body_mass[body];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) I[3 * i + j] = Ri[3 * i] * Ip[0] * Ri[3 * j] + Ri[3 * i + 1] * Ip[1] * Ri[3 * j + 1] +
                                             Ri[3 * i + 2] * Ip[2] * Ri[3 * j + 2];
  for (int i = 0; i < 3; i++) {
    P[i] = mass * vel[3 + i];
    iw[i] = I[3 * i] * vel[0] + I[3 * i + 1] * vel[1] + I[3 * i + 2] * vel[2];
  }
  cross3(xi, P, tmp);
  for (int i = 0; i < 3; i++) L[i] = iw[i] + tmp[i];
  double Pm[3], Lm[3];
  memcpy(Pm, P, sizeof Pm);
  memcpy(Lm, L, sizeof Lm);
  /* the arm: h = I6 eta per node, [angular about the node origin; linear], node axes */
  double tw[6];
  mj_objectVelocity(m, d, mjOBJ_XBODY, body, tw, 1);
  for (int a = 0; a < 9; a++) arm->base.R[a] = d->xmat[9 * body + a];
  for (int a = 0; a < 3; a++) arm->base.p[a] = d->xpos[3 * body + a];
  sb_set_base_motion(arm, tw, NULL);
  const double *q, *v;
  cusp_soft_state(m, d, inst, &q, &v);
  sb_kinematics(arm, w, q, v);
  for (int k = 0; k < arm->nnode; k++) {
    double hk[6], ha[3], hl[3];
    sb_mat6_vec(arm->node[k].inertia, w->eta + 6 * k, hk);
    const sb_pose *g = &w->g[k];
    for (int i = 0; i < 3; i++) {
      ha[i] = g->R[3 * i] * hk[0] + g->R[3 * i + 1] * hk[1] + g->R[3 * i + 2] * hk[2];
      hl[i] = g->R[3 * i] * hk[3] + g->R[3 * i + 1] * hk[4] + g->R[3 * i + 2] * hk[5];
    }
    for (int i = 0; i < 3; i++) r[i] = g->p[i];
    cross3(r, hl, tmp);
    for (int i = 0; i < 3; i++) {
      P[i] += hl[i];
      L[i] += ha[i] + tmp[i];
    }
  }
  double pa = 0, la = 0;
  for (int i = 0; i < 3; i++) {
    pa += (P[i] - Pm[i]) * (P[i] - Pm[i]);
    la += (L[i] - Lm[i]) * (L[i] - Lm[i]);
  }
  *Parm = sqrt(pa);
  *Larm = sqrt(la);
}

static void momentum(const mjModel *m, mjData *d, sb_model *arm, sb_work *w, int body, double P[3], double L[3],
                     double *Parm, double *Larm) {
  momentum_of(m, d, 0, arm, w, body, P, L, Parm, Larm);
}

/* Drift of P and L over T, relative to the largest momentum the arm
 * carried on the way. */
static void free_mount(double mass, double h, double T, double *dP, double *dL) {
  char name[64];
  snprintf(name, sizeof name, "free%g", mass);
  mjModel *m = load_scene(name, h, "0 0 0", "<freejoint/>", "0 0 0", mass);
  *dP = *dL = INFINITY;
  if (!m) return;
  mjData *d = attach(m);
  if (!d) {
    finish(m, NULL);
    return;
  }
  /* a spin and a drift to start with: the arm's base twist and velocity
   * products are in play from the first step */
  d->qvel[0] = 0.05;
  d->qvel[1] = -0.02;
  d->qvel[3] = 0.4;
  d->qvel[4] = -0.3;
  d->qvel[5] = 0.2;
  mj_forward(m, d);
  sb_model *arm = instance_model(m, 0);
  if (!arm) {
    finish(m, d);
    return;
  }
  sb_work *w = sb_work_create(arm);
  int body = mj_name2id(m, mjOBJ_BODY, "mount");
  double P0[3], L0[3], P[3], L[3], pmax = 0, lmax = 0, ep = 0, el = 0;
  double pm, lm;
  momentum(m, d, arm, w, body, P0, L0, &pm, &lm);
  int ok = 1;
  while (d->time < T - 0.5 * h && ok) {
    set_drive(m, d, NULL);
    mj_step(m, d);
    ok = d->warning[mjWARN_BADQACC].number == 0 && cusp_report(m, d)->nan_events == 0;
    mj_forward(m, d);
    momentum(m, d, arm, w, body, P, L, &pm, &lm);
    pmax = fmax(pmax, pm);
    lmax = fmax(lmax, lm);
    double e1 = 0, e2 = 0;
    for (int i = 0; i < 3; i++) {
      e1 += (P[i] - P0[i]) * (P[i] - P0[i]);
      e2 += (L[i] - L0[i]) * (L[i] - L0[i]);
    }
    ep = fmax(ep, sqrt(e1));
    el = fmax(el, sqrt(e2));
  }
  EXPECT(ok, "free mount %g kg h %g: unstable at t = %g (MuJoCo warning %d, NaN events %ld)", mass, h, d->time,
         d->warning[mjWARN_BADQACC].number, cusp_report(m, d)->nan_events);
  *dP = ep / pmax;
  *dL = el / lmax;
  printf("free mount %5g kg, h %g: %g s: |dP| %.2e (the arm's largest |P| %.2e), |dL| %.2e (of %.2e)\n", mass, h, T,
         ep, pmax, el, lmax);
  sb_work_free(w);
  sb_model_free(arm);
  finish(m, d);
}

static void test_free_mount(void) {
  double masses[] = {1, 10, 100};
  for (int k = 0; k < 3; k++) {
    double p1, l1, p2, l2;
    free_mount(masses[k], 1e-3, 1.0, &p1, &l1);
    free_mount(masses[k], 1e-4, 1.0, &p2, &l2);
    /* semi-implicit Euler conserves neither exactly: the drift is O(h)
     * (M(q) changes over the step), so it must be small at 1 ms and shrink
     * with h; a coupling that lost the arm's inertia or load would drift by
     * O(1) of the momentum the drive moves */
    EXPECT(p1 <= 2e-2 && l1 <= 2e-2, "free mount %g kg, h 1 ms: relative drift P %.2e, L %.2e", masses[k], p1, l1);
    EXPECT(p2 <= 0.3 * p1 + 1e-12 && l2 <= 0.3 * l1 + 1e-12,
           "free mount %g kg: drift does not shrink with h (P %.2e -> %.2e, L %.2e -> %.2e)", masses[k], p1, p2, l1, l2);
  }
}

/* ---------- 3. constraints ---------- */

static const char *stop_fmt =
    "<mujoco model=\"stop\">\n"
    "  <option timestep=\"0.001\" gravity=\"0 0 0\"/>\n"
    "  <extension><plugin plugin=\"cusp.softbody\"><instance name=\"arm\">\n"
    "    <config key=\"disks\" value=\"3\"/>\n"
    "  </instance></plugin></extension>\n"
    "  <worldbody>\n"
    "    %s\n"
    "    <body name=\"mount\" pos=\"0 0 1\" euler=\"180 0 0\">\n"
    "      <joint name=\"j\" type=\"slide\" axis=\"1 0 0\" %s/>\n"
    "      <inertial pos=\"0 0 0\" mass=\"1\" diaginertia=\"0.002 0.002 0.002\"/>\n"
    "      <plugin instance=\"arm\"/>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "</mujoco>\n";

/* The mount at 0.5 m/s along x into a joint limit at x = 0.1 (limit) or
 * the arm into a wall at x = 0.25 (wall). */
static void test_stop(int wall) {
  const char *label = wall ? "arm into a wall" : "mount into its joint limit";
  char xml[2048];
  snprintf(xml, sizeof xml, stop_fmt, wall ? "<geom name=\"wall\" type=\"box\" size=\"0.05 0.5 0.5\" pos=\"0.3 0 0.8\"/>" : "",
           wall ? "" : "limited=\"true\" range=\"-1 0.1\"");
  mjData *d;
  mjModel *m = load_text_attached("stop", xml, &d);
  if (!m) return;
  sb_model *arm = instance_model(m, 0);
  if (!arm) {
    finish(m, d);
    return;
  }
  sb_work *w = sb_work_create(arm);
  int body = mj_name2id(m, mjOBJ_BODY, "mount");
  d->qvel[0] = 0.5;
  mj_forward(m, d);
  double P0[3], P[3], L[3], pa, la, impulse = 0, maxpen = 0, t_hit = -1;
  momentum(m, d, arm, w, body, P0, L, &pa, &la);
  int ok = 1;
  while (d->time < 0.8 && ok) {
    mj_step(m, d);
    const cusp_step_report *rep = cusp_report(m, d);
    ok = d->warning[mjWARN_BADQACC].number == 0 && rep->nan_events == 0;
    /* what stopped them: the limit's generalized force (mj_step's, over
     * the step), or the wall's impulses on the disks */
    impulse += wall ? 0 : m->opt.timestep * d->qfrc_constraint[0];
    const cusp_contact_report *c;
    int nc = cusp_contacts(m, d, &c);
    for (int k = 0; k < nc; k++) impulse += c[k].impulse[0];
    if (t_hit < 0 && (nc > 0 || d->qfrc_constraint[0] != 0)) t_hit = d->time;
    maxpen = fmax(maxpen, rep->max_penetration);
  }
  mj_forward(m, d);
  momentum(m, d, arm, w, body, P, L, &pa, &la);
  EXPECT(ok && t_hit > 0, "%s: unstable at t = %g (MuJoCo warning %d) or no hit (%g)", label, d->time,
         d->warning[mjWARN_BADQACC].number, t_hit);
  /* the carriage at rest against the stop; at the wall, where every disk
   * touches, the arm too (at the limit the arm swings on, being soft) */
  EXPECT(fabs(d->qvel[0]) <= 0.01 && (!wall || fabs(P[0]) <= 1e-6 * P0[0]),
         "%s: mount velocity %g m/s, momentum left %g of %g N s", label, d->qvel[0], P[0], P0[0]);
  /* the impulse that stopped them is the momentum they lost (the drift of
   * the scheme is ~1e-3 of the momentum, as for the free mount) */
  EXPECT(fabs(P[0] - P0[0] - impulse) <= 5e-3 * P0[0], "%s: momentum change %g N s vs the stop's impulse %g N s", label,
         P[0] - P0[0], impulse);
  if (wall) EXPECT(maxpen <= 1e-4, "%s: penetration %g m", label, maxpen);
  printf("%s (1 kg mount, 2 kg arm, 0.5 m/s): hit at %.3f s, momentum %.4f -> %.2e N s, stop's impulse %.4f N s, "
         "mount at %.2e m/s, penetration %.1e m\n",
         label, t_hit, P0[0], P[0], impulse, d->qvel[0], maxpen);
  sb_work_free(w);
  sb_model_free(arm);
  finish(m, d);
}

/* ---------- 4. soft-soft contact on free mounts ---------- */

/* a cosserat rod: name, sections, each section's length, Young's modulus, disks, their thickness, contact model */
#define ROD_FMT                                                                                              \
  "<instance name=\"%s\"><config key=\"model\" value=\"cosserat\"/><config key=\"sections\" value=\"%d\"/>"   \
  "<config key=\"length\" value=\"%g\"/><config key=\"radius\" value=\"0.005\"/>"                             \
  "<config key=\"density\" value=\"1000\"/><config key=\"young\" value=\"%g\"/>"                              \
  "<config key=\"strains\" value=\"kx ky kz ex ey ez\"/><config key=\"disks\" value=\"%d\"/>"                 \
  "<config key=\"disk_radius\" value=\"0.005\"/><config key=\"disk_thickness\" value=\"%g\"/>"                \
  "<config key=\"contact\" value=\"%s\"/><config key=\"actuated\" value=\"none\"/></instance>"

/* A rod of up_len hanging along +y from body "up" (its mount, free: mass,
 * inertia) at y = -2.5 cm, 2 mm above a rod of low_len along +x from body
 * "low" (clamped to the world at x = -0.1, or on a free mount of the same
 * mass and inertia), crossing it 2.5 cm from the mount and 9.5 cm from the
 * clamp; 4 and 8 sections. */
static mjModel *crossing(const char *name, const char *contact, double h, double gravity, double mass, double inertia,
                         int low_free, double low_len, double up_len) {
  char rods[2048], xml[4096];
  int at = snprintf(rods, sizeof rods, ROD_FMT, "low", 8, low_len / 8, 1e7, 8, low_len / 8, contact);
  snprintf(rods + at, sizeof rods - at, ROD_FMT, "up", 4, up_len / 4, 1e7, 4, up_len / 4, contact);
  char low_joint[160] = "";
  if (low_free)
    snprintf(low_joint, sizeof low_joint,
             "<freejoint/><inertial pos=\"0 0 0\" mass=\"%g\" diaginertia=\"%g %g %g\"/>", mass, inertia, inertia,
             inertia);
  snprintf(xml, sizeof xml,
           "<mujoco model=\"%s\"><option timestep=\"%g\" gravity=\"0 0 %g\"/>"
           "<extension><plugin plugin=\"cusp.softbody\">%s</plugin></extension><worldbody>"
           "<body name=\"low\" pos=\"-0.1 0 0\" euler=\"0 90 0\">%s<plugin instance=\"low\"/></body>"
           "<body name=\"up\" pos=\"-0.005 -0.025 0.012\" euler=\"-90 0 0\"><freejoint/>"
           "<inertial pos=\"0 0 0\" mass=\"%g\" diaginertia=\"%g %g %g\"/><plugin instance=\"up\"/></body>"
           "</worldbody></mujoco>",
           name, h, gravity, rods, low_joint, mass, inertia, inertia, inertia);
  return load_text(name, xml);
}

/* One step; whether it stayed stable (no MuJoCo instability warning, no
 * NaN event), and into *loaded whether an arm pushed on another arm, with
 * the deepest contact gap into *deepest. */
static int step_soft_soft(const mjModel *m, mjData *d, int *loaded, double *deepest) {
  mj_step(m, d);
  const cusp_contact_report *c;
  int nc = cusp_contacts(m, d, &c);
  *loaded = 0;
  for (int k = 0; k < nc; k++) {
    *loaded |= c[k].other_instance >= 0 && c[k].normal_impulse > 0;
    *deepest = fmin(*deepest, c[k].gap);
  }
  return d->warning[mjWARN_BADQACC].number == 0 && cusp_report(m, d)->nan_events == 0;
}

/* Dropped across the clamped rod: 0.3 s without MuJoCo's instability
 * warning or a NaN event, the mount never rising, no deep penetration. */
static void test_soft_soft_drop(const char *contact, double h, double mass, double inertia, double low_len,
                                double up_len) {
  char label[160];
  snprintf(label, sizeof label, "%s: a %g m rod on a %g kg, %g kg m^2 free mount onto a %g m rod at h %g", contact, up_len,
           mass, inertia, low_len, h);
  mjModel *m = crossing("softsoft", contact, h, -9.81, mass, inertia, 0, low_len, up_len);
  if (!m) return;
  mjData *d = attach(m);
  if (!d) {
    finish(m, NULL);
    return;
  }
  int up = mj_name2id(m, mjOBJ_BODY, "up"), ok = 1, soft_soft = 0;
  double z0 = m->body_pos[3 * up + 2], rise = 0, deepest = 0;
  while (d->time < 0.3 - 0.5 * h && ok) {
    int touching;
    ok = step_soft_soft(m, d, &touching, &deepest);
    soft_soft += touching;
    rise = fmax(rise, d->xpos[3 * up + 2] - z0);
  }
  EXPECT(ok, "%s: unstable at t = %g (MuJoCo warning %d, NaN events %ld)", label, d->time,
         d->warning[mjWARN_BADQACC].number, cusp_report(m, d)->nan_events);
  EXPECT(soft_soft >= 10, "%s: the rods pushed on each other in %d steps only", label, soft_soft);
  /* dropped from 2 mm, a mount lighter than its rod rises only as the rod
   * seesaws over the crossing (on a rigid capsule, up to 13 mm); the
   * partitioned contact threw such mounts metres up */
  EXPECT(rise <= 2e-2, "%s: the mount rose %g m", label, rise);
  EXPECT(deepest >= -1e-3, "%s: penetration %g m", label, -deepest);
  printf("%s: %d steps loaded soft-soft, mount rise %.2e m, deepest %.2e m\n", label, soft_soft, rise, -deepest);
  finish(m, d);
}

/* Two free-mounted rods colliding in zero gravity: the upper mount moving
 * down at 0.3 m/s. Drifts of the total momentum P (and L about the
 * origin) of both mounts and arms, relative to P0 (and P0 times the long
 * rod's length), while the contact hands a good part of it to the lower. */
static void soft_soft_momentum(double h, double *dp, double *dl) {
  double mass = 0.02, inertia = 1e-6;
  *dp = *dl = INFINITY;
  mjModel *m = crossing("softsoft_momentum", "lcp", h, 0, mass, inertia, 1, 1.6, 0.2);
  if (!m) return;
  mjData *d = attach(m);
  if (!d) {
    finish(m, NULL);
    return;
  }
  int body[2] = {mj_name2id(m, mjOBJ_BODY, "low"), mj_name2id(m, mjOBJ_BODY, "up")};
  int inst[2] = {cusp_instance_find(m, "low"), cusp_instance_find(m, "up")};
  sb_model *arm[2] = {instance_model(m, inst[0]), instance_model(m, inst[1])};
  if (!arm[0] || !arm[1]) {
    sb_model_free(arm[0]);
    sb_model_free(arm[1]);
    finish(m, d);
    return;
  }
  sb_work *w[2] = {sb_work_create(arm[0]), sb_work_create(arm[1])};
  d->qvel[m->body_dofadr[body[1]] + 2] = -0.3;
  mj_forward(m, d);
  double P0[3] = {0, 0, 0}, L0[3] = {0, 0, 0}, ep = 0, el = 0, plow = 0;
  int ok = 1, soft_soft = 0;
  for (int step = -1; d->time < 0.15 - 0.5 * h && ok; step++) {
    if (step >= 0) {
      int touching;
      double deepest = 0;
      ok = step_soft_soft(m, d, &touching, &deepest);
      soft_soft += touching;
      mj_forward(m, d);
    }
    double P[3] = {0, 0, 0}, L[3] = {0, 0, 0}, Pk[3], Lk[3], pa, la;
    for (int k = 0; k < 2; k++) {
      momentum_of(m, d, inst[k], arm[k], w[k], body[k], Pk, Lk, &pa, &la);
      for (int i = 0; i < 3; i++) {
        P[i] += Pk[i];
        L[i] += Lk[i];
      }
      if (k == 0) plow = fmax(plow, sqrt(Pk[0] * Pk[0] + Pk[1] * Pk[1] + Pk[2] * Pk[2]));
    }
    if (step < 0) {
      memcpy(P0, P, sizeof P0);
      memcpy(L0, L, sizeof L0);
    }
    double e1 = 0, e2 = 0;
    for (int i = 0; i < 3; i++) {
      e1 += (P[i] - P0[i]) * (P[i] - P0[i]);
      e2 += (L[i] - L0[i]) * (L[i] - L0[i]);
    }
    ep = fmax(ep, sqrt(e1));
    el = fmax(el, sqrt(e2));
  }
  double p0 = fabs(P0[2]);
  EXPECT(ok, "colliding free mounts, h %g: unstable at t = %g", h, d->time);
  EXPECT(soft_soft >= 5 && plow >= 0.3 * p0, "colliding free mounts, h %g: %d loaded steps handed %g of %g N s on", h,
         soft_soft, plow, p0);
  *dp = ep / p0;
  *dl = el / (0.2 * p0);
  printf("colliding free mounts (%g kg, %g kg m^2), h %g: %d steps loaded soft-soft, the lower took %.3g of %.3g N s; "
         "drift |dP| %.2e, |dL| %.2e N m s\n",
         mass, inertia, h, soft_soft, plow, p0, ep, el);
  for (int k = 0; k < 2; k++) {
    sb_work_free(w[k]);
    sb_model_free(arm[k]);
  }
  finish(m, d);
}

/* Two arms on one mount: a slide along x carrying a stiff rod (a) along +x
 * and, 12 mm above it, a soft one (b) along +y crossing a at both their
 * middles, in gravity. b sags onto a: soft-soft contact between arms whose
 * mount shares nearly cancel, with a light or a heavy slide in the coupled
 * coordinates. b rests on a, loaded, without sinking into it. */
static void test_two_arms_one_mount(double h, double mass, double inertia) {
  char rods[2048], xml[4096], label[96];
  snprintf(label, sizeof label, "two arms on a %g kg slide at h %g", mass, h);
  int at = snprintf(rods, sizeof rods, ROD_FMT, "a", 8, 0.2 / 8, 1e8, 8, 0.2 / 8, "lcp");
  snprintf(rods + at, sizeof rods - at, ROD_FMT, "b", 8, 0.2 / 8, 1e6, 8, 0.2 / 8, "lcp");
  snprintf(xml, sizeof xml,
           "<mujoco model=\"two_arms\"><option timestep=\"%g\" gravity=\"0 0 -9.81\"/>"
           "<extension><plugin plugin=\"cusp.softbody\">%s</plugin></extension><worldbody>"
           "<body name=\"mount\" pos=\"0 0 1\"><joint type=\"slide\" axis=\"1 0 0\"/>"
           "<inertial pos=\"0 0 0\" mass=\"%g\" diaginertia=\"%g %g %g\"/>"
           "<body name=\"ma\" euler=\"0 90 0\"><plugin instance=\"a\"/></body>"
           "<body name=\"mb\" pos=\"0.1 -0.1 0.012\" euler=\"-90 0 0\"><plugin instance=\"b\"/></body></body>"
           "</worldbody></mujoco>",
           h, rods, mass, inertia, inertia, inertia);
  mjModel *m = load_text("two_arms", xml);
  if (!m) return;
  mjData *d = attach(m);
  if (!d) {
    finish(m, NULL);
    return;
  }
  int ok = 1, loaded = 0, steps = 0;
  double deepest = 0;
  while (ok && d->time < 0.3 - 0.5 * h) {
    int touching;
    ok = step_soft_soft(m, d, &touching, &deepest);
    steps++;
    loaded += touching;
  }
  EXPECT(ok, "%s: unstable at t = %g", label, d->time);
  EXPECT(loaded >= steps / 2, "%s: b rested on a in %d of %d steps", label, loaded, steps);
  EXPECT(deepest >= -5e-4, "%s: penetration %g m", label, -deepest);
  printf("%s: b on a in %d of %d steps, deepest %.2e m, the slide at %.2e m/s\n", label, loaded, steps, -deepest,
         d->qvel[0]);
  finish(m, d);
}

static void test_two_arms(void) {
  test_two_arms_one_mount(1e-2, 0.01, 1e-7);
  test_two_arms_one_mount(1e-3, 0.01, 1e-7);
  test_two_arms_one_mount(1e-2, 1, 1e-3);
  test_two_arms_one_mount(1e-3, 1, 1e-3);
}

static void test_colliding_mounts(void) {
  double p1, l1, p2, l2;
  soft_soft_momentum(1e-3, &p1, &l1);
  soft_soft_momentum(1e-4, &p2, &l2);
  /* first order in h, as the free mount alone (part 2): small at 1 ms and
   * shrinking with h; an impulse the mounts missed or took twice would
   * move O(1) of P0 at any h */
  EXPECT(p1 <= 3e-2 && l1 <= 0.2, "colliding free mounts, h 1 ms: relative drift P %.2e, L %.2e", p1, l1);
  EXPECT(p2 <= 0.5 * p1 && l2 <= 0.5 * l1, "colliding free mounts: drift does not shrink with h (P %.2e -> %.2e, "
         "L %.2e -> %.2e)", p1, p2, l1, l2);
}

int main(void) {
  test_stop(0);
  test_stop(1);
  double masses[] = {1, 100};
  for (int k = 0; k < 2; k++)
    for (int kind = 0; kind < 2; kind++) {
      compare_one_chain((mount_kind)kind, masses[k], 1e-3, 0.5);
      compare_one_chain((mount_kind)kind, masses[k], 1e-4, 0.3);
    }
  test_free_mount();
  /* a 5 cm rod onto a 20 cm one, and (session 27's scene) a 20 cm rod onto a 1.6 m one */
  test_soft_soft_drop("lcp", 0.01, 1e-4, 1e-9, 0.2, 0.05);
  test_soft_soft_drop("lcp", 0.01, 1e-3, 1e-9, 0.2, 0.05);
  test_soft_soft_drop("lcp", 0.002, 0.1, 1e-9, 1.6, 0.2);
  test_soft_soft_drop("lcp", 0.01, 0.1, 1e-9, 1.6, 0.2);
  test_soft_soft_drop("lcp", 0.01, 10, 1e-9, 1.6, 0.2);
  test_soft_soft_drop("lcp", 0.01, 1e-4, 1e-6, 1.6, 0.2);
  /* sap and ncp solve on the same coupled problem's Delassus operator */
  test_soft_soft_drop("sap", 0.01, 0.1, 1e-9, 1.6, 0.2);
  test_soft_soft_drop("sap", 0.01, 1e-4, 1e-6, 1.6, 0.2);
  test_soft_soft_drop("ncp", 0.01, 0.1, 1e-9, 1.6, 0.2);
  test_soft_soft_drop("ncp", 0.01, 1e-4, 1e-6, 1.6, 0.2);
  test_colliding_mounts();
  test_two_arms();
  return test_report("mount");
}

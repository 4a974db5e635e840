/* A rod's far end held by a mocap body that the caller drives (the key
 * end_body on a mocap body, or on a body below one): MuJoCo gives a mocap
 * body no velocity, so the end's rows take the body's last move over h as
 * the anchor's velocity, as a mocap mount's twist is taken (plugin/ends.c,
 * plugin/mount.c). Seen standing still, the anchor was followed with the
 * stabilization's lag while a mocap mount was seen moving:
 *
 * 1. Mount and far end both clamped to mocap bodies moved sideways together
 *    at a steady 0.1 m/s (zero gravity): the rod moves as a rigid body, so
 *    its tip sits on the handle after every step and the end carries no
 *    load. Seen standing still, the tip trailed by v h / alpha = 5e-4 m and
 *    the end pulled the rod along.
 * 2. The twist experiment's clamp (cosseratbench, bench/cosseratbench_compare.py):
 *    the far end clamped to a carriage sliding along the rod's axis on a
 *    mocap body turned steadily about that axis, the mount fixed: the end's
 *    axes turn with the clamp's (a lag of w h / alpha seen
 *    standing still); the held point's mocap pose is plugin state, so a copy
 *    taken mid-run steps on bit for bit and a reset replays the run.
 * 3. The held point off its mocap body's axis: the far end clamped to a grip
 *    that is a child of a mocap hub at the mount's place, the grip a rod's
 *    length out along x; mount and hub turned steadily together about world
 *    z through the origin. The hub's origin stands still, so the whole of the
 *    end's anchor velocity is the w x (p_anchor - p_hub) term: the rod turns
 *    rigidly and its tip sits on the grip after every step. Seen standing
 *    still (or with that term's sign or frame wrong) the tip trails by
 *    w L h / alpha or more.
 *
 * A mocap body set far away in one step (a teleport) is not a motion: its
 * move over h would be a velocity of tens of m/s, which the rows and the
 * mount's twist then carry into the step. A jump is a change of the
 * velocity beyond key teleport_speed (ends.c's cusp_mocap_jumped), and the
 * rows' pull to a far anchor is held to key pull_speed:
 * 4. The handle of 1 jumped 2 cm sideways at rest (20 m/s over h): the end
 *    is pulled to it by the stabilization alone, alpha of the distance a
 *    step, never past it. Taken as a velocity, the end went 22.35 mm along
 *    the jump, 2.35 mm past the handle. The message gives the move (0.02 m),
 *    the turn and the change of velocity (20 m/s) apart, to 4 digits.
 * 5. A mocap mount turned by 90 degrees in one step, the far end free: the
 *    arm rides on it rigidly, at rest. Taken as a velocity (1571 rad/s), the
 *    rod was flung out.
 * 6. The handle jumped 0.3 m (1.5 rod lengths): the rows' pull, alpha of
 *    the distance over h (60 m/s), is held to pull_speed (the rows' cap,
 *    softbody/bilateral.c): no NaN, the end reaches the handle and not past it. Taken
 *    as a velocity (300 m/s), the rod blew up within 15 steps (a 0.1 m jump
 *    too). A rod dragged farther than it can stretch at all (here about 2.5
 *    times its length, driven steadily at 1 m/s as well) fails as driven.
 * 7. mj_resetData and mj_resetDataKeyframe (mocap bodies elsewhere than at
 *    the last step) start at rest: no velocity from the reset's jump.
 * 8. 6 with a second rod lying on a floor, of another stabilization: one
 *    coupled solve uses the alpha of its first instance in contact (the
 *    lying rod), and the pull's cap must hold for that alpha. Capped with
 *    the held rod's own alpha (1 against the solve's 0.2), the rows pushed
 *    the end away from its anchor and the step blew up (3e19 m).
 * 9. A steady fast drive is a motion, not a jump: mount and handle of 1 spun
 *    rigidly about world z, ramped up to 26 rad/s over 0.2 s (handle speed
 *    5.2 m/s; the old test, speed + |w| L = 10.4 m/s above teleport_speed,
 *    called every step a jump, dropped the velocity and the tip trailed by
 *    26 mm). The tip follows the handle within twice the circle's
 *    4 R sin^2(w h / 2) / alpha (tests/mocap_circle.h). A 2 cm jump of the
 *    handle in the steady spin is still a jump, that step alone; a copy
 *    (mj_copyData) and a saved state (mj_getState, mj_setState) taken right
 *    after it step on bit for bit (the last moves are plugin state).
 * 10. A jump is a note, not a failure, and hides none: 4's rod lying on a
 *    floor with key contact_capacity too small for its contacts, its handle
 *    jumped. The report's message in the jump step says the contacts
 *    dropped (the jump's note, written first, suppressed it before). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_testutil.h"

#define ROD_FREE_KEYS                                              \
  "    <config key=\"model\" value=\"cosserat\"/>\n"               \
  "    <config key=\"sections\" value=\"8\"/>\n"                   \
  "    <config key=\"length\" value=\"0.025\"/>\n"                 \
  "    <config key=\"radius\" value=\"0.005\"/>\n"                 \
  "    <config key=\"density\" value=\"1000\"/>\n"                 \
  "    <config key=\"young\" value=\"1e6\"/>\n"                    \
  "    <config key=\"viscosity\" value=\"0\"/>\n"                  \
  "    <config key=\"strains\" value=\"kx ky kz ex ey ez\"/>\n"    \
  "    <config key=\"disks\" value=\"1\"/>\n"                      \
  "    <config key=\"contact\" value=\"lcp\"/>\n"                  \
  "    <config key=\"actuated\" value=\"none\"/>\n"
#define ROD_KEYS ROD_FREE_KEYS "    <config key=\"end\" value=\"clamp\"/>\n"

/* a 0.2 m rod along +x from the mount (its z axis turned onto x) */
static const char *both_xml =
    "<mujoco model=\"both_driven\">\n"
    "  <option timestep=\"0.001\" gravity=\"0 0 0\"/>\n"
    "  <extension><plugin plugin=\"cusp.softbody\"><instance name=\"rod\">\n" ROD_KEYS
    "    <config key=\"end_body\" value=\"handle\"/>\n"
    "  </instance></plugin></extension>\n"
    "  <worldbody>\n"
    "    <body name=\"mount\" pos=\"0 0 0\" euler=\"0 90 0\" mocap=\"true\"><plugin instance=\"rod\"/></body>\n"
    "    <body name=\"handle\" mocap=\"true\" pos=\"0.2 0 0\"/>\n"
    "  </worldbody>\n"
    "</mujoco>\n";

static double dist3(const double *a, const double *b) {
  return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
}

static void both_ends_driven(void) {
  mjData *d;
  mjModel *m = load_text_attached("both_driven", both_xml, &d);
  if (!m) return;
  const double v = 0.1, h = m->opt.timestep, alpha = 0.2;
  int mount = m->body_mocapid[mj_name2id(m, mjOBJ_BODY, "mount")];
  int handle = m->body_mocapid[mj_name2id(m, mjOBJ_BODY, "handle")];
  double lag = 0, load = 0;
  for (int k = 0; k < 300; k++) {
    /* one motion for both: each at its pose at the step's start */
    d->mocap_pos[3 * mount + 1] = d->mocap_pos[3 * handle + 1] = v * d->time;
    mj_step(m, d);
    /* the tip where the mount is now, against the handle now: the rod's
     * place relative to its two ends, whatever the time either is read at */
    double tip[3], reac[6];
    cusp_tip_pose(m, d, 0, tip, NULL);
    cusp_end_reaction(m, d, 0, reac);
    if (k >= 10) { /* past the first moves from rest (the motion's start is seen one step late) */
      lag = fmax(lag, dist3(tip, d->mocap_pos + 3 * handle));
      load = fmax(load, sqrt(reac[0] * reac[0] + reac[1] * reac[1] + reac[2] * reac[2]));
    }
  }
  const cusp_step_report *r = cusp_report(m, d);
  printf("both ends driven at %.2f m/s: tip off the handle at most %.3e m (seen standing still: v h / alpha = "
         "%.3e m), end load at most %.3e N\n",
         v, lag, v * h / alpha, load);
  EXPECT(r && r->nan_events == 0, "both ends driven: NaN events");
  EXPECT(lag < 1e-9, "both ends driven: the tip trails the handle by %.3e m (rounding expected)", lag);
  EXPECT(load < 1e-6, "both ends driven: the end pulls the rigidly moving rod with %.3e N", load);
  finish(m, d);
}

/* the clamp turns about x (the rod's axis); its carriage slides along x */
static const char *twist_xml =
    "<mujoco model=\"twist_clamp\">\n"
    "  <option timestep=\"0.01\" gravity=\"0 0 0\"/>\n"
    "  <extension><plugin plugin=\"cusp.softbody\"><instance name=\"rod\">\n" ROD_KEYS
    "    <config key=\"end_body\" value=\"carriage\"/>\n"
    "  </instance></plugin></extension>\n"
    "  <worldbody>\n"
    "    <body name=\"mount\" pos=\"0 0 0\" euler=\"0 90 0\"><plugin instance=\"rod\"/></body>\n"
    "    <body name=\"clamp\" mocap=\"true\" pos=\"0.2 0 0\">\n"
    "      <body name=\"carriage\"><joint type=\"slide\" axis=\"1 0 0\"/>\n"
    "        <inertial pos=\"0 0 0\" mass=\"0.01\" diaginertia=\"1e-6 1e-6 1e-6\"/></body>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "</mujoco>\n";

/* The angle of the tip's frame about x relative to its start, and how far
 * its axes are from a pure turn about x. */
static double tip_turn(const mjModel *m, mjData *d, double *off_axis) {
  double p[3], q[4], R[9];
  cusp_tip_pose(m, d, 0, p, q);
  mju_quat2Mat(R, q);
  /* the tip's z (the rod's tangent) stays along world x; its x axis starts along -z */
  double ax[3] = {R[0], R[3], R[6]}, z[3] = {R[2], R[5], R[8]};
  *off_axis = fabs(z[0] - 1) + fabs(ax[0]);
  return atan2(ax[1], -ax[2]);
}

static void turn_clamp(mjData *d, double w) {
  double a = w * d->time;
  d->mocap_quat[0] = cos(0.5 * a);
  d->mocap_quat[1] = sin(0.5 * a);
  d->mocap_quat[2] = d->mocap_quat[3] = 0;
}

static void twist_clamp_turned(void) {
  mjData *d;
  mjModel *m = load_text_attached("twist_clamp", twist_xml, &d);
  if (!m) return;
  const double w = 0.5, h = m->opt.timestep, alpha = 0.2;
  double lag = 0, off = 0;
  int nsteps = 200;
  mjData *c = NULL;
  mjtNum *first = NULL; /* the first run's end */
  for (int run = 0; run < 2; run++) {
    for (int k = 0; k < nsteps; k++) {
      turn_clamp(d, w); /* at its pose at the step's start */
      mj_step(m, d);
      if (run == 0 && k == 99) c = mj_copyData(NULL, m, d);
      if (run == 0 && c && k >= 100) {
        turn_clamp(c, w);
        mj_step(m, c);
      }
      double o, turn = tip_turn(m, d, &o);
      if (run == 0 && k >= 50) { /* past the start from rest and the rod's twisting transient */
        lag = fmax(lag, fabs(turn - w * d->time));
        off = fmax(off, o);
      }
    }
    if (run == 0) {
      first = integration_state(m, d);
      EXPECT(c && same_integration_state(m, c, first), "twist clamp: a copy taken at step 100 steps on differently");
      mj_resetData(m, d);
      mj_forward(m, d);
    } else {
      EXPECT(same_integration_state(m, d, first), "twist clamp: the run after mj_resetData differs from the first");
    }
  }
  printf("twist clamp turned at %.2f rad/s: the tip's turn off the clamp's at most %.3e rad (seen standing still: "
         "w h / alpha = %.3e rad), axes off x by %.2e\n",
         w, lag, w * h / alpha, off);
  EXPECT(lag < 1e-6, "twist clamp: the tip's turn lags the clamp's by %.3e rad", lag);
  EXPECT(off < 1e-6, "twist clamp: the tip's axes left the turn about x by %.2e", off);
  if (c) mj_deleteData(c);
  free(first);
  finish(m, d);
}

/* mount and hub at the origin, the grip (held) a rod's length out along the hub's x */
static const char *swing_xml =
    "<mujoco model=\"swung_off_axis\">\n"
    "  <option timestep=\"0.001\" gravity=\"0 0 0\"/>\n"
    "  <extension><plugin plugin=\"cusp.softbody\"><instance name=\"rod\">\n" ROD_KEYS
    "    <config key=\"end_body\" value=\"grip\"/>\n"
    "  </instance></plugin></extension>\n"
    "  <worldbody>\n"
    "    <body name=\"mount\" pos=\"0 0 0\" euler=\"0 90 0\" mocap=\"true\"><plugin instance=\"rod\"/></body>\n"
    "    <body name=\"hub\" mocap=\"true\" pos=\"0 0 0\">\n"
    "      <body name=\"grip\" pos=\"0.2 0 0\"/>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "</mujoco>\n";

/* mocap body `id` at its start pose (p0, q0) turned by angle a about world z through the origin */
static void swing_mocap(mjData *d, int id, const double p0[3], const double q0[4], double a) {
  double qz[4] = {cos(0.5 * a), 0, 0, sin(0.5 * a)};
  mju_mulQuat(d->mocap_quat + 4 * id, qz, q0);
  d->mocap_pos[3 * id + 0] = cos(a) * p0[0] - sin(a) * p0[1];
  d->mocap_pos[3 * id + 1] = sin(a) * p0[0] + cos(a) * p0[1];
  d->mocap_pos[3 * id + 2] = p0[2];
}

static void held_off_axis_swung(void) {
  mjData *d;
  mjModel *m = load_text_attached("swung_off_axis", swing_xml, &d);
  if (!m) return;
  const double w = 0.5, L = 0.2, h = m->opt.timestep, alpha = 0.2;
  int grip = mj_name2id(m, mjOBJ_BODY, "grip");
  int mount = m->body_mocapid[mj_name2id(m, mjOBJ_BODY, "mount")];
  int hub = m->body_mocapid[mj_name2id(m, mjOBJ_BODY, "hub")];
  double pm[3], qm[4], ph[3], qh[4];
  memcpy(pm, d->mocap_pos + 3 * mount, sizeof pm);
  memcpy(qm, d->mocap_quat + 4 * mount, sizeof qm);
  memcpy(ph, d->mocap_pos + 3 * hub, sizeof ph);
  memcpy(qh, d->mocap_quat + 4 * hub, sizeof qh);
  double lag = 0, load = 0, swept = 0;
  for (int k = 0; k < 600; k++) {
    /* one turn for both, each at its pose at the step's start */
    double a = w * d->time;
    swing_mocap(d, mount, pm, qm, a);
    swing_mocap(d, hub, ph, qh, a);
    mj_step(m, d); /* d->xpos: the grip where the hub was set, as the mount's pose the tip is read in */
    double tip[3], reac[6];
    cusp_tip_pose(m, d, 0, tip, NULL);
    cusp_end_reaction(m, d, 0, reac);
    if (k >= 10) { /* past the first moves from rest (the motion's start is seen one step late) */
      lag = fmax(lag, dist3(tip, d->xpos + 3 * grip));
      load = fmax(load, sqrt(reac[0] * reac[0] + reac[1] * reac[1] + reac[2] * reac[2]));
    }
    swept = a;
  }
  /* The anchor's velocity is held constant over a step: followed along the
   * tangent for h, the held point drifts off the circle by the order of the
   * chord's sagitta L (w h)^2 / 2 a step, which the stabilization, closing a
   * fraction alpha a step, holds at the order of L (w h)^2 / (2 alpha): a
   * residual second order in w h, far below the first-order lag of an anchor
   * seen standing still or with w x r's sign or frame wrong (2 w L h / alpha
   * for a flipped sign). The bound is 3x that second-order estimate. */
  const double first_order = w * L * h / alpha, second_order = L * (w * h) * (w * h) / (2 * alpha);
  const cusp_step_report *r = cusp_report(m, d);
  printf("held end swung off its mocap body's axis at %.2f rad/s (%.3f rad swept): tip off the grip at most %.3e m "
         "(seen standing still: w L h / alpha = %.3e m; the tangent's second-order drift L (w h)^2 / (2 alpha) = "
         "%.3e m), end load at most %.3e N\n",
         w, swept, lag, first_order, second_order, load);
  EXPECT(r && r->nan_events == 0, "held end swung: NaN events");
  EXPECT(lag < 3 * second_order, "held end swung: the tip trails the grip by %.3e m (bound %.3e m)", lag,
         3 * second_order);
  finish(m, d);
}

/* The rod's largest generalized speed. */
static double max_speed(const mjModel *m, const mjData *d) {
  const double *q, *v;
  int n = cusp_soft_state(m, d, 0, &q, &v);
  double x = 0;
  for (int i = 0; i < n; i++) x = isfinite(v[i]) && isfinite(q[i]) ? fmax(x, fabs(v[i])) : INFINITY;
  return x;
}

/* 4 and 6: both_xml's handle (mount standing) jumped by `jump` along y after
 * 5 steps at rest; nsteps after it. The tip's farthest along y over the
 * steps after the jump, its distance to the handle at the end, the report's
 * message at the jump and the NaN events. */
static void handle_jumped(double jump, int nsteps, double *farthest, double *final, char *message, int *nan_events) {
  mjData *d;
  *farthest = *final = NAN;
  message[0] = 0;
  mjModel *m = load_text_attached("handle_jumped", both_xml, &d);
  if (!m) return;
  int handle = m->body_mocapid[mj_name2id(m, mjOBJ_BODY, "handle")];
  for (int k = 0; k < 5; k++) mj_step(m, d);
  d->mocap_pos[3 * handle + 1] += jump;
  *farthest = -INFINITY;
  for (int k = 0; k < nsteps; k++) {
    mj_step(m, d);
    if (k == 0) snprintf(message, 256, "%s", cusp_report(m, d)->message);
    double tip[3];
    cusp_tip_pose(m, d, 0, tip, NULL);
    *farthest = fmax(*farthest, isfinite(tip[1]) ? tip[1] : INFINITY);
    double dist = dist3(tip, d->mocap_pos + 3 * handle);
    *final = dist;
  }
  *nan_events = (int)cusp_report(m, d)->nan_events;
  finish(m, d);
}

static void jumps_of_the_handle(void) {
  const double alpha = 0.2;
  double farthest, final;
  int nan;
  char message[256];
  handle_jumped(0.02, 80, &farthest, &final, message, &nan);
  printf("handle jumped 2 cm in one step: the tip went %.6f m along the jump at most (taken as a velocity: 0.02235 "
         "m, at most (1 + alpha) x 0.02 = %.3f m), %.2e m off the handle after 80 steps\n  the step's message: %s\n",
         farthest, (1 + alpha) * 0.02, final, message);
  EXPECT(farthest <= 0.02 + 1e-9, "handle jumped 2 cm: the end went %.6f m, past the handle", farthest);
  EXPECT(final < 0.01 * 0.02, "handle jumped 2 cm: the end %.2e m off the handle after 80 steps", final);
  EXPECT(strstr(message, "teleport_speed") && strstr(message, "handle") && strstr(message, "key \"end\""),
         "handle jumped 2 cm: the message does not name the key, the body and the held point: %s", message);
  EXPECT(strstr(message, "moved 0.02 m and turned 0 rad") && strstr(message, "by 20 m/s and 0 rad/s"),
         "handle jumped 2 cm: the message does not give the move and the change apart: %s", message);
  EXPECT(nan == 0, "handle jumped 2 cm: %d NaN events", nan);
  /* pulled at key pull_speed (10 m/s, 1 cm a step) over most of the way,
   * not at alpha 0.3 m / h = 60 m/s; the undamped rod rings on around it */
  handle_jumped(0.3, 600, &farthest, &final, message, &nan);
  printf("handle jumped 0.3 m (1.5 rod lengths): the tip went %.6f m along the jump at most, %.2e m off the handle "
         "after 600 steps, %d NaN events\n",
         farthest, final, nan);
  EXPECT(nan == 0 && isfinite(final), "handle jumped 0.3 m: NaN events (%d) or a non-finite tip", nan);
  EXPECT(farthest <= 0.3 * (1 + 1e-3) && final < 0.01 * 0.3,
         "handle jumped 0.3 m: the end went %.6f m, and ends %.2e m off it", farthest, final);
}

static const char *free_mount_xml =
    "<mujoco model=\"mount_jumped\">\n"
    "  <option timestep=\"0.001\" gravity=\"0 0 0\"/>\n"
    "  <extension><plugin plugin=\"cusp.softbody\"><instance name=\"rod\">\n" ROD_FREE_KEYS
    "  </instance></plugin></extension>\n"
    "  <worldbody>\n"
    "    <body name=\"mount\" pos=\"0 0 0\" euler=\"0 90 0\" mocap=\"true\"><plugin instance=\"rod\"/></body>\n"
    "  </worldbody>\n"
    "</mujoco>\n";

/* 5: the mount turned by 90 degrees about world z in one step. */
static void mount_turned_at_once(void) {
  mjData *d;
  mjModel *m = load_text_attached("mount_jumped", free_mount_xml, &d);
  if (!m) return;
  int mount = m->body_mocapid[mj_name2id(m, mjOBJ_BODY, "mount")];
  for (int k = 0; k < 5; k++) mj_step(m, d);
  double qz[4] = {cos(M_PI / 4), 0, 0, sin(M_PI / 4)}, q0[4];
  memcpy(q0, d->mocap_quat + 4 * mount, sizeof q0);
  mju_mulQuat(d->mocap_quat + 4 * mount, qz, q0);
  double speed = 0, off = 0;
  char message[256] = "";
  for (int k = 0; k < 20; k++) {
    mj_step(m, d);
    if (k == 0) snprintf(message, sizeof message, "%s", cusp_report(m, d)->message);
    speed = fmax(speed, max_speed(m, d));
    double tip[3], there[3] = {0, 0.2, 0};
    cusp_tip_pose(m, d, 0, tip, NULL);
    off = fmax(off, dist3(tip, there));
  }
  printf("mount turned 90 degrees in one step: the rod's largest generalized speed after it %.3e, its tip at most "
         "%.3e m off the turned rod's (0, 0.2, 0)\n",
         speed, off);
  EXPECT(speed < 1e-9, "mount turned at once: the rod moves (generalized speed %.3e)", speed);
  EXPECT(off < 1e-9, "mount turned at once: the tip %.3e m off where the turned rod's is", off);
  /* a pure turn: no move, pi/2 in the step, a change of 1571 rad/s over the rod's 0.2 m */
  EXPECT(strstr(message, "its mount") && strstr(message, "moved 0 m and turned 1.571 rad") &&
             strstr(message, "1571 rad/s (times lever 0.2 m)"),
         "mount turned at once: the message does not give the turn apart: %s", message);
  finish(m, d);
}

/* 7: resets. both_xml with a keyframe whose mocap bodies are set below. */
static void resets_start_at_rest(void) {
  char xml[4096];
  snprintf(xml, sizeof xml, "%s", both_xml);
  char *end = strstr(xml, "</mujoco>");
  snprintf(end, sizeof xml - (size_t)(end - xml), "  <keyframe><key name=\"moved\"/></keyframe>\n</mujoco>\n");
  mjData *d;
  mjModel *m = load_text_attached("reset_jumps", xml, &d);
  if (!m) return;
  int mount = m->body_mocapid[mj_name2id(m, mjOBJ_BODY, "mount")];
  int handle = m->body_mocapid[mj_name2id(m, mjOBJ_BODY, "handle")];
  /* the key: mount and handle 0.3 m along y, the rod between them as at the start */
  m->key_mpos[3 * mount + 1] = m->key_mpos[3 * handle + 1] = 0.3;
  for (int which = 0; which < 2; which++) {
    for (int k = 0; k < 100; k++) { /* driven at 0.1 m/s: the last move is plugin state */
      d->mocap_pos[3 * mount + 1] = d->mocap_pos[3 * handle + 1] = 0.1 * d->time;
      mj_step(m, d);
    }
    if (which == 0)
      mj_resetData(m, d);
    else
      mj_resetDataKeyframe(m, d, 0);
    mj_forward(m, d);
    double speed = 0, off = 0;
    for (int k = 0; k < 5; k++) {
      mj_step(m, d);
      speed = fmax(speed, max_speed(m, d));
      double tip[3];
      cusp_tip_pose(m, d, 0, tip, NULL);
      off = fmax(off, dist3(tip, d->mocap_pos + 3 * handle));
    }
    const char *name = which ? "mj_resetDataKeyframe (mocap bodies 0.3 m away)" : "mj_resetData";
    printf("after %s: the rod's largest generalized speed %.3e, its tip %.3e m off the handle\n", name, speed, off);
    EXPECT(speed < 1e-12 && off < 1e-9, "after %s: the rod moves (speed %.3e, tip %.3e m off the handle)", name,
           speed, off);
  }
  finish(m, d);
}

/* 8: a rod lying on a floor (stabilization alpha_lying; first, so its
 * contacts set the solve's alpha) and both_xml's clamped rod (alpha_held),
 * whose handle jumps 0.3 m. */
static void jump_beside_another_alpha(double alpha_lying, double alpha_held) {
  char xml[4096];
  snprintf(xml, sizeof xml,
           "<mujoco model=\"two_alphas\">\n"
           "  <option timestep=\"0.001\" gravity=\"0 0 0\"/>\n"
           "  <extension><plugin plugin=\"cusp.softbody\">\n"
           "  <instance name=\"lying\">\n" ROD_FREE_KEYS "    <config key=\"stabilization\" value=\"%g\"/>\n"
           "  </instance>\n"
           "  <instance name=\"rod\">\n" ROD_KEYS "    <config key=\"end_body\" value=\"handle\"/>\n"
           "    <config key=\"stabilization\" value=\"%g\"/>\n"
           "  </instance></plugin></extension>\n"
           "  <worldbody>\n"
           "    <geom name=\"floor\" type=\"plane\" pos=\"0 0 -0.1\" size=\"2 2 0.01\"/>\n"
           "    <body name=\"lmount\" pos=\"0 0.5 -0.093\" euler=\"0 90 0\"><plugin instance=\"lying\"/></body>\n"
           "    <body name=\"mount\" pos=\"0 0 0\" euler=\"0 90 0\" mocap=\"true\"><plugin instance=\"rod\"/></body>\n"
           "    <body name=\"handle\" mocap=\"true\" pos=\"0.2 0 0\"/>\n"
           "  </worldbody>\n"
           "</mujoco>\n",
           alpha_lying, alpha_held);
  mjData *d;
  mjModel *m = load_text_attached("two_alphas", xml, &d);
  if (!m) return;
  int handle = m->body_mocapid[mj_name2id(m, mjOBJ_BODY, "handle")];
  for (int k = 0; k < 5; k++) mj_step(m, d);
  int contacts = cusp_report(m, d)->ncontact;
  const double jump = 0.3;
  d->mocap_pos[3 * handle + 1] += jump;
  double farthest = -INFINITY, final = NAN;
  for (int k = 0; k < 600; k++) {
    mj_step(m, d);
    double tip[3];
    cusp_tip_pose(m, d, 1, tip, NULL);
    farthest = fmax(farthest, isfinite(tip[1]) ? tip[1] : INFINITY);
    final = dist3(tip, d->mocap_pos + 3 * handle);
  }
  int nan = (int)cusp_report(m, d)->nan_events;
  printf("handle jumped %.1f m beside a lying rod in contact (%d contacts; stabilization %g lying, %g held): the tip "
         "went %.6f m along the jump at most, %.2e m off the handle after 600 steps, %d NaN events\n",
         jump, contacts, alpha_lying, alpha_held, farthest, final, nan);
  EXPECT(contacts > 0, "two alphas: the lying rod has no contact, so it does not lead the solve");
  EXPECT(nan == 0 && isfinite(final), "two alphas %g/%g: NaN events (%d) or a non-finite tip", alpha_lying,
         alpha_held, nan);
  EXPECT(farthest <= jump * (1 + 1e-3) && final < 0.01 * jump,
         "two alphas %g/%g: the end went %.6f m, and ends %.2e m off the handle", alpha_lying, alpha_held, farthest,
         final);
  finish(m, d);
}

/* mount (its initial orientation q0) and handle of both_xml turned by
 * angle th about world z through the origin; the handle raised by lift */
static void spin_both(const mjModel *m, mjData *d, const double q0[4], double th, double lift) {
  int mount = m->body_mocapid[mj_name2id(m, mjOBJ_BODY, "mount")];
  int handle = m->body_mocapid[mj_name2id(m, mjOBJ_BODY, "handle")];
  double qz[4] = {cos(0.5 * th), 0, 0, sin(0.5 * th)};
  mju_mulQuat(d->mocap_quat + 4 * mount, qz, q0);
  d->mocap_pos[3 * handle] = 0.2 * cos(th);
  d->mocap_pos[3 * handle + 1] = 0.2 * sin(th);
  d->mocap_pos[3 * handle + 2] = lift;
  memcpy(d->mocap_quat + 4 * handle, qz, sizeof qz);
}

static double spin_angle(double t, double w, double ramp) {
  return t < ramp ? 0.5 * w * t * t / ramp : 0.5 * w * ramp + w * (t - ramp);
}

static void spun_rigidly(void) {
  mjData *d;
  mjModel *m = load_text_attached("spun", both_xml, &d);
  if (!m) return;
  const double w = 26, ramp = 0.2, h = m->opt.timestep, alpha = 0.2, R = 0.2, jump = 0.02;
  const int nsteps = 400, jump_step = 300, ncopy = 30;
  int handle = m->body_mocapid[mj_name2id(m, mjOBJ_BODY, "handle")];
  double q0[4];
  memcpy(q0, d->mocap_quat + 4 * m->body_mocapid[mj_name2id(m, mjOBJ_BODY, "mount")], sizeof q0);
  int jumps = 0, jump_seen = 0, jumps_after = 0;
  double lag = 0;
  mjData *copy = NULL, *restored = NULL;
  for (int k = 0; k < nsteps; k++) {
    double lift = k >= jump_step ? jump : 0;
    spin_both(m, d, q0, spin_angle(d->time, w, ramp), lift);
    mj_step(m, d);
    int jumped = strstr(cusp_report(m, d)->message, "teleport_speed") != NULL;
    if (k < jump_step) jumps += jumped;
    if (k == jump_step) jump_seen = jumped;
    if (k > jump_step) jumps_after += jumped;
    double tip[3];
    cusp_tip_pose(m, d, 0, tip, NULL);
    if (d->time > ramp + 0.05 && k < jump_step) lag = fmax(lag, dist3(tip, d->mocap_pos + 3 * handle));
    if (k == jump_step) {
      copy = mj_copyData(NULL, m, d);
      mjtNum *saved = integration_state(m, d);
      restored = attach(m);
      if (restored && saved) mj_setState(m, restored, saved, mjSTATE_INTEGRATION);
      free(saved);
    }
    if (k > jump_step && k <= jump_step + ncopy && copy && restored) {
      spin_both(m, copy, q0, spin_angle(copy->time, w, ramp), lift);
      mj_step(m, copy);
      spin_both(m, restored, q0, spin_angle(restored->time, w, ramp), lift);
      mj_step(m, restored);
      if (k == jump_step + ncopy) {
        mjtNum *now = integration_state(m, d);
        EXPECT(now && same_integration_state(m, copy, now), "spun: a copy taken after the jump steps on differently");
        EXPECT(now && same_integration_state(m, restored, now),
               "spun: a state saved after the jump (mj_getState, mj_setState) steps on differently");
        free(now);
      }
    }
  }
  double circle = 4 * R * sin(0.5 * w * h) * sin(0.5 * w * h) / alpha;
  int nan = (int)cusp_report(m, d)->nan_events;
  printf("mount and handle spun rigidly at %.0f rad/s (handle %.1f m/s): %d of %d steps called jumps, the tip off "
         "the handle at most %.3e m (circle's 4 R sin^2(w h/2) / alpha = %.3e m); a %.0f mm jump in the spin %s, %d "
         "steps after it called jumps, %d NaN events\n",
         w, w * R, jumps, jump_step, lag, circle, 1e3 * jump, jump_seen ? "seen" : "NOT seen", jumps_after, nan);
  EXPECT(jumps == 0, "spun: %d steps of a steady drive called jumps", jumps);
  EXPECT(lag < 2 * circle, "spun: the tip trails the handle by %.3e m", lag);
  EXPECT(jump_seen && jumps_after == 0, "spun: the jump in the spin seen %d, %d steps after it called jumps",
         jump_seen, jumps_after);
  EXPECT(nan == 0, "spun: %d NaN events", nan);
  if (copy) mj_deleteData(copy);
  if (restored) mj_deleteData(restored);
  finish(m, d);
}

static void jump_hides_no_failure(void) {
  char xml[4096];
  snprintf(xml, sizeof xml, "%s", both_xml);
  char *at = strstr(xml, "  </instance>");
  char tail[4096];
  snprintf(tail, sizeof tail, "%s", at);
  snprintf(at, sizeof xml - (size_t)(at - xml), "    <config key=\"contact_capacity\" value=\"2\"/>\n%s", tail);
  at = strstr(xml, "  <worldbody>\n") + strlen("  <worldbody>\n");
  snprintf(tail, sizeof tail, "%s", at);
  snprintf(at, sizeof xml - (size_t)(at - xml),
           "    <geom name=\"floor\" type=\"plane\" pos=\"0 0 -0.0052\" size=\"1 1 0.01\"/>\n%s", tail);
  mjData *d;
  mjModel *m = load_text_attached("jump_on_floor", xml, &d);
  if (!m) return;
  int handle = m->body_mocapid[mj_name2id(m, mjOBJ_BODY, "handle")];
  for (int k = 0; k < 5; k++) mj_step(m, d);
  char before[256];
  snprintf(before, sizeof before, "%s", cusp_report(m, d)->message);
  d->mocap_pos[3 * handle + 1] += 0.02;
  mj_step(m, d);
  const char *message = cusp_report(m, d)->message;
  printf("handle jumped on a floor with contacts dropped: the step before says \"%.60s...\"; the jump step \"%.60s...\"\n",
         before, message);
  EXPECT(strstr(before, "contact_capacity exceeded"), "jump on a floor: the scene drops no contacts: %s", before);
  EXPECT(strstr(message, "contact_capacity exceeded"), "jump on a floor: the jump step's message hides the dropped "
         "contacts: %s", message);
  finish(m, d);
}

int main(void) {
  jump_hides_no_failure();
  spun_rigidly();
  jump_beside_another_alpha(0.2, 1.0);
  jump_beside_another_alpha(0.5, 0.2);
  jumps_of_the_handle();
  mount_turned_at_once();
  resets_start_at_rest();
  both_ends_driven();
  twist_clamp_turned();
  held_off_axis_swung();
  return test_report("driven_ends");
}

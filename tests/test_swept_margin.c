/* Contacts are looked for within a margin of their surfaces; a pair that
 * closes more than that margin in one step used to be passed through unseen
 * (cosseratbench's twist at half the adapter's step: a rod snapping onto
 * itself at 1.5 m/s, 0.025 s steps, a disk found deeper than its radius
 * inside another disk of the same rod, docs/twist.md). The margin now grows
 * with the pair's approach speed at the step's start times h
 * (plugin/narrowphase.c).
 *
 * 1. A rod hanging from a carriage on a vertical slide, thrown down at
 *    3 m/s onto a 4 mm plate with 10 ms steps (3 cm a step, the plate
 *    first 1 cm below its end disk at a step's start): it must stop on the
 *    plate, not end up below it.
 * 2. The same with two rods: the thrown rod onto a rod clamped at both ends
 *    across its path (the twist's case: disk against disk).
 * Before the change both went through: the plate's top passed by the end
 * disk's centre by 1.3 cm, and the rod passed by a disk 9 mm deep in the
 * struck rod's (the plugin's message) and was thrown 0.83 m back up.
 * 3. Face on: in 1 (a box) and onto a plane, the end disk arrives flat and
 *    is stopped in a step whose start found it within the swept margin only.
 *    Such a pair kept its nearest contact alone, one rim point, and the disk
 *    was turned over by the impulse there; it now keeps every contact within
 *    the fixed margin of the nearest, its face, and must not tilt beyond
 *    rounding, nor go into the plane.
 * 4. Very fast: thrown at 30 and 100 m/s (0.3 and 1 m a step) onto a plate
 *    1.5 travels below: beyond the travel plus the bounded allowance
 *    (CUSP_SWEEP_ALLOWANCE) but within twice the travel (the unbounded
 *    margin), so no contact at the first step; the disks must still not go
 *    through it (found at the next step), at most the four of each disk's
 *    face a step.
 * 5. A rod tiled by its disks (the tube-plane path) carried sideways fast
 *    over a plane 1 cm below its surface: passing by, not approaching, so no
 *    contact, as the other swept paths filter; carried down onto it, it is
 *    found and stopped.
 * 6. From rest: a free rod tiled by its disks (its inner disks on the
 *    tube-plane path, its end disks on MuJoCo's), at rest 6 mm (more than
 *    CUSP_MARGIN) above a plane under gravity at 40 ms steps. Implicit Euler
 *    carries a body at rest by g h^2 = 15.7 mm in its first step: with the
 *    margin of its speed at the step's start alone (0) the plane was not
 *    looked for and the rod fell 9.7 mm into it in that step (as
 *    cosseratbench's crossing at 4x its adapter's step did through the other
 *    rope: python/tests/test_tube_contact.py). The margin now counts what
 *    gravity adds within the step: the rod must come to rest on the plane,
 *    no contact found deeper than PENETRATION_TOL. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plugin_testutil.h"

#define FALLING_ROD                                                \
  "    <instance name=\"rod\">\n"                                  \
  "    <config key=\"model\" value=\"cosserat\"/>\n"               \
  "    <config key=\"sections\" value=\"4\"/>\n"                   \
  "    <config key=\"length\" value=\"0.025\"/>\n"                 \
  "    <config key=\"radius\" value=\"0.005\"/>\n"                 \
  "    <config key=\"density\" value=\"1000\"/>\n"                 \
  "    <config key=\"young\" value=\"1e7\"/>\n"                    \
  "    <config key=\"viscosity\" value=\"0\"/>\n"                  \
  "    <config key=\"strains\" value=\"kx ky kz ex ey ez\"/>\n"    \
  "    <config key=\"disks\" value=\"1\"/>\n"                      \
  "    <config key=\"disk_radius\" value=\"0.005\"/>\n"           \
  "    <config key=\"disk_thickness\" value=\"0.005\"/>\n"         \
  "    <config key=\"contact\" value=\"lcp\"/>\n"                  \
  "    <config key=\"actuated\" value=\"none\"/>\n"                \
  "    </instance>\n"

/* the rod hangs down from z = 0.2 (its end disk's centre at z = 0.1); the
 * carriage slides along z */
#define CARRIAGE                                                                             \
  "    <body name=\"carriage\" pos=\"0 0 0.2\" quat=\"0 1 0 0\">\n"                          \
  "      <joint type=\"slide\" axis=\"0 0 1\"/>\n"                                           \
  "      <inertial pos=\"0 0 0\" mass=\"0.05\" diaginertia=\"1e-5 1e-5 1e-5\"/>\n"          \
  "      <plugin instance=\"rod\"/>\n"                                                       \
  "    </body>\n"

static const char *plate_xml =
    "<mujoco model=\"thrown_on_plate\">\n"
    "  <option timestep=\"0.01\" gravity=\"0 0 0\"/>\n"
    "  <extension><plugin plugin=\"cusp.softbody\">\n" FALLING_ROD "  </plugin></extension>\n"
    "  <worldbody>\n"
    "    <geom name=\"plate\" type=\"box\" pos=\"0 0 0.0805\" size=\"0.05 0.05 0.002\"/>\n" CARRIAGE
    "  </worldbody>\n"
    "</mujoco>\n";

/* the struck rod: along x at z = 0.0775 (its surface's top 1 cm below the
 * thrown rod's end disk at the second step's start), clamped at both ends */
static const char *rods_xml =
    "<mujoco model=\"thrown_on_rod\">\n"
    "  <option timestep=\"0.01\" gravity=\"0 0 0\"/>\n"
    "  <extension><plugin plugin=\"cusp.softbody\">\n" FALLING_ROD
    "    <instance name=\"beam\">\n"
    "    <config key=\"model\" value=\"cosserat\"/>\n"
    "    <config key=\"sections\" value=\"8\"/>\n"
    "    <config key=\"length\" value=\"0.025\"/>\n"
    "    <config key=\"radius\" value=\"0.005\"/>\n"
    "    <config key=\"density\" value=\"1000\"/>\n"
    "    <config key=\"young\" value=\"1e7\"/>\n"
    "    <config key=\"viscosity\" value=\"0\"/>\n"
    "    <config key=\"strains\" value=\"kx ky kz ex ey ez\"/>\n"
    "    <config key=\"disks\" value=\"3\"/>\n"
    "    <config key=\"disk_radius\" value=\"0.005\"/>\n"
    "    <config key=\"disk_thickness\" value=\"0.008\"/>\n"
    "    <config key=\"contact\" value=\"lcp\"/>\n"
    "    <config key=\"actuated\" value=\"none\"/>\n"
    "    <config key=\"end\" value=\"clamp\"/>\n"
    "    </instance>\n"
    "  </plugin></extension>\n"
    "  <worldbody>\n" CARRIAGE
    "    <body name=\"beam_mount\" pos=\"-0.1 0 0.0775\" euler=\"0 90 0\"><plugin instance=\"beam\"/></body>\n"
    "  </worldbody>\n"
    "</mujoco>\n";

/* The thrown rod's tip height after 20 steps, the lowest it reached, how
 * far it ends above the struck rod's midpoint (instance 1, if any), and
 * whether a step reported a disk passing through another body. */
static void throw_down(const char *name, const char *xml, double *tip_z, double *lowest, double *above, int *passed) {
  *tip_z = *lowest = *above = NAN;
  *passed = 0;
  mjData *d;
  mjModel *m = load_text_attached(name, xml, &d);
  if (!m) return;
  d->qvel[0] = 3.0; /* the carriage is turned over: its slide axis points down */
  *lowest = INFINITY;
  for (int k = 0; k < 20; k++) {
    mj_step(m, d);
    double p[3];
    cusp_tip_pose(m, d, 0, p, NULL);
    *lowest = fmin(*lowest, p[2]);
    const cusp_step_report *r = cusp_report(m, d);
    if (r && r->message[0]) *passed = 1;
  }
  double p[3], mid[3];
  cusp_tip_pose(m, d, 0, p, NULL);
  *tip_z = p[2];
  if (cusp_backbone_point(m, d, 1, 0.1, mid, NULL) == 0) *above = p[2] - mid[2];
  finish(m, d);
}

/* The end disk's axis off vertical (rad): the tip frame's z axis against world z. */
static double tip_tilt(const mjModel *m, const mjData *d) {
  double p[3], q[4], R[9];
  cusp_tip_pose(m, d, 0, p, q);
  mju_quat2Mat(R, q);
  return sqrt(R[2] * R[2] + R[5] * R[5]);
}

typedef struct {
  double lowest;       /* the tip's lowest height, m */
  double tilt;         /* the tip's largest tilt over the first four steps (the impact's), rad */
  int most_contacts;   /* the most contacts of a step */
  int first_contacts;  /* the first step's */
  double deepest;      /* the least gap of a contact, m (< 0: penetration) */
  int passed;          /* a step reported a disk passing through */
} throw_result;

/* The rod of scene xml (the carriage's slide first dof) thrown down at
 * speed for nsteps steps. */
static throw_result throw_at(const char *name, const char *xml, double speed, int nsteps) {
  throw_result t = {.lowest = NAN, .tilt = NAN};
  mjData *d;
  mjModel *m = load_text_attached(name, xml, &d);
  if (!m) return t;
  d->qvel[0] = speed;
  t.lowest = t.deepest = INFINITY;
  t.tilt = 0;
  for (int k = 0; k < nsteps; k++) {
    mj_step(m, d);
    double p[3];
    cusp_tip_pose(m, d, 0, p, NULL);
    t.lowest = fmin(t.lowest, p[2]);
    if (k < 4) t.tilt = fmax(t.tilt, tip_tilt(m, d));
    const cusp_step_report *r = cusp_report(m, d);
    if (r && strstr(r->message, "deeper than")) t.passed = 1; /* a disk deeper than its radius */
    const cusp_contact_report *c;
    int n = cusp_contacts(m, d, &c);
    if (n > t.most_contacts) t.most_contacts = n;
    if (k == 0) t.first_contacts = n;
    for (int i = 0; i < n; i++) t.deepest = fmin(t.deepest, c[i].gap);
  }
  finish(m, d);
  return t;
}

/* The falling rod over geoms (MJCF) at 10 ms steps. */
static void falling_scene(char *xml, size_t n, const char *young, const char *geoms) {
  snprintf(xml, n,
           "<mujoco model=\"falling\">\n"
           "  <option timestep=\"0.01\" gravity=\"0 0 0\"/>\n"
           "  <extension><plugin plugin=\"cusp.softbody\">\n"
           "    <instance name=\"rod\">\n"
           "    <config key=\"model\" value=\"cosserat\"/>\n"
           "    <config key=\"sections\" value=\"4\"/>\n"
           "    <config key=\"length\" value=\"0.025\"/>\n"
           "    <config key=\"radius\" value=\"0.005\"/>\n"
           "    <config key=\"density\" value=\"1000\"/>\n"
           "    <config key=\"young\" value=\"%s\"/>\n"
           "    <config key=\"viscosity\" value=\"0\"/>\n"
           "    <config key=\"strains\" value=\"kx ky kz ex ey ez\"/>\n"
           "    <config key=\"disks\" value=\"1\"/>\n"
           "    <config key=\"disk_radius\" value=\"0.005\"/>\n"
           "    <config key=\"disk_thickness\" value=\"0.005\"/>\n"
           "    <config key=\"contact\" value=\"lcp\"/>\n"
           "    <config key=\"actuated\" value=\"none\"/>\n"
           "    </instance>\n"
           "  </plugin></extension>\n"
           "  <worldbody>\n%s" CARRIAGE "  </worldbody>\n"
           "</mujoco>\n",
           young, geoms);
}

/* 3: face on, onto the box plate of 1 and onto a plane. */
static void face_on(void) {
  throw_result t = throw_at("face_on_plate", plate_xml, 3.0, 20);
  printf("face on onto a 4 mm plate at 3 m/s: tilt at most %.3e rad over the impact, lowest tip %.5f m (top 0.0825)\n",
         t.tilt, t.lowest);
  EXPECT(t.tilt < 1e-9, "face on onto the plate: the end disk tilted %.3e rad (a one-sided impulse)", t.tilt);
  char xml[4096];
  /* the plane 4.5 cm below the disk's face (at 0.0975): at the second step's
   * start 1.5 cm, within the swept margin only, where it is stopped */
  falling_scene(xml, sizeof xml, "1e7", "    <geom type=\"plane\" pos=\"0 0 0.0525\" size=\"0.1 0.1 0.01\"/>\n");
  t = throw_at("face_on_plane", xml, 3.0, 20);
  printf("face on onto a plane at 3 m/s: tilt at most %.3e rad over the impact, deepest contact gap %.2e m\n", t.tilt,
         t.deepest);
  EXPECT(t.tilt < 1e-9, "face on onto the plane: the end disk tilted %.3e rad (a one-sided impulse)", t.tilt);
  EXPECT(t.deepest > -1e-6 && !t.passed, "face on onto the plane: a disk %.2e m into the plane", -t.deepest);
}

/* 4: very fast: a plate 1.5 travels below the end disk's face. */
static void very_fast(void) {
  const double speeds[] = {30.0, 100.0}, h = 0.01, face = 0.0975;
  for (int i = 0; i < 2; i++) {
    double travel = speeds[i] * h, top = face - 1.5 * travel;
    char geoms[512], xml[4096];
    snprintf(geoms, sizeof geoms, "    <geom name=\"plate\" type=\"box\" pos=\"0 0 %.6f\" size=\"0.05 0.05 0.002\"/>\n",
             top - 0.002);
    falling_scene(xml, sizeof xml, "1e9", geoms);
    throw_result t = throw_at("very_fast", xml, speeds[i], 10);
    printf("thrown at %.0f m/s (%.2f m a step) onto a plate %.3f m below: %d contacts at the first step (the margin "
           "%.3f m, unbounded %.3f m), at most %d a step (9 disks), deepest gap %.2e m\n",
           speeds[i], travel, face - top, t.first_contacts, travel + 0.02, 2 * travel, t.most_contacts, t.deepest);
    EXPECT(t.first_contacts == 0, "thrown at %.0f m/s: %d contacts with a plate beyond the travel and its allowance",
           speeds[i], t.first_contacts);
    EXPECT(t.deepest > -1e-4 && !t.passed, "thrown at %.0f m/s: a disk %.4f m into the plate", speeds[i], -t.deepest);
    EXPECT(t.most_contacts <= 4 * 9, "thrown at %.0f m/s: %d contacts in a step (4 per disk face)", speeds[i],
           t.most_contacts);
  }
}

/* 5: a rod tiled by its disks (the tube-plane path) on a mocap mount carried
 * at 2 m/s (2 cm a step, 10 ms; the margin 4 cm), its surface 3 cm over a
 * plane: along y (passing by) no contact may be kept; down (approaching, 1
 * cm over it at the second step's start) it is found there. Returns the most
 * contacts of the steps after the first (which sees the mount standing
 * still). */
static int tube_carried(const double dir[3]) {
  static const char *xml =
      "<mujoco model=\"tube_over_plane\">\n"
      "  <option timestep=\"0.01\" gravity=\"0 0 0\"/>\n"
      "  <extension><plugin plugin=\"cusp.softbody\"><instance name=\"tube\">\n"
      "    <config key=\"model\" value=\"cosserat\"/>\n"
      "    <config key=\"sections\" value=\"4\"/>\n"
      "    <config key=\"length\" value=\"0.025\"/>\n"
      "    <config key=\"radius\" value=\"0.005\"/>\n"
      "    <config key=\"density\" value=\"1000\"/>\n"
      "    <config key=\"young\" value=\"1e7\"/>\n"
      "    <config key=\"strains\" value=\"kx ky kz ex ey ez\"/>\n"
      "    <config key=\"disks\" value=\"4\"/>\n"
      "    <config key=\"disk_radius\" value=\"0.005\"/>\n"
      "    <config key=\"disk_thickness\" value=\"0.005000000005\"/>\n"
      "    <config key=\"contact\" value=\"lcp\"/>\n"
      "    <config key=\"actuated\" value=\"none\"/>\n"
      "  </instance></plugin></extension>\n"
      "  <worldbody>\n"
      "    <geom name=\"floor\" type=\"plane\" size=\"1 1 0.01\"/>\n"
      "    <body name=\"mount\" mocap=\"true\" pos=\"0 0 0.035\" euler=\"0 90 0\"><plugin instance=\"tube\"/></body>\n"
      "  </worldbody>\n"
      "</mujoco>\n";
  mjData *d;
  mjModel *m = load_text_attached("tube_over_plane", xml, &d);
  if (!m) return -1;
  const double v = 2.0, p0[3] = {0, 0, 0.035};
  int most = 0, nsteps = dir[2] < 0 ? 2 : 6;
  for (int k = 0; k < nsteps; k++) {
    for (int a = 0; a < 3; a++) d->mocap_pos[a] = p0[a] + v * d->time * dir[a];
    mj_step(m, d);
    int n = cusp_contacts(m, d, NULL);
    if (k >= 1 && n > most) most = n;
  }
  finish(m, d);
  return most;
}

static void tube_plane_closing(void) {
  const double along_y[3] = {0, 1, 0}, down[3] = {0, 0, -1};
  int passing = tube_carried(along_y), approaching = tube_carried(down);
  printf("a tiled rod carried at 2 m/s 3 cm over a plane: %d contacts passing by, %d approaching\n", passing,
         approaching);
  EXPECT(passing == 0, "a tiled rod passing over a plane keeps %d contacts found by the swept margin only", passing);
  EXPECT(approaching > 0, "a tiled rod carried down onto a plane: no contact found");
}

/* 6: from rest under gravity at a large step. */
#define REST_STEP 0.04
#define REST_GAP 0.006        /* m: the surfaces' gap at the start, > CUSP_MARGIN, < g h^2 */
#define REST_RADIUS 0.005
/* m: deepest contact gap allowed. The speculative row keeps a gap closing
 * within the step at >= 0 at the step's end, to the LCP's tolerance and the
 * linearization of the contact point's motion (the rod lands flat, so its
 * motion is near a translation): far below the 15.7 mm a step carries it,
 * and 1/500 of the rod's radius. */
#define PENETRATION_TOL 1e-5

#define TILED_ROD                                                        \
  "    <instance name=\"rod\">\n"                                       \
  "    <config key=\"model\" value=\"cosserat\"/>\n"                   \
  "    <config key=\"sections\" value=\"4\"/>\n"                       \
  "    <config key=\"length\" value=\"0.025\"/>\n"                     \
  "    <config key=\"radius\" value=\"0.005\"/>\n"                     \
  "    <config key=\"density\" value=\"1000\"/>\n"                     \
  "    <config key=\"young\" value=\"1e7\"/>\n"                        \
  "    <config key=\"strains\" value=\"kx ky kz ex ey ez\"/>\n"        \
  "    <config key=\"disks\" value=\"4\"/>\n"                          \
  "    <config key=\"disk_radius\" value=\"0.005\"/>\n"                \
  "    <config key=\"disk_thickness\" value=\"0.005000000005\"/>\n"    \
  "    <config key=\"contact\" value=\"lcp\"/>\n"                      \
  "    <config key=\"actuated\" value=\"none\"/>\n"                      \
  "    </instance>\n"

/* the free rod along x from x = 0, its mount a light free body */
#define FREE_MOUNT_FMT                                                                          \
  "    <body name=\"mount\" pos=\"0 0 %.6f\" euler=\"0 90 0\"><freejoint/>\n"                 \
  "      <inertial pos=\"0 0 0\" mass=\"1e-4\" diaginertia=\"1e-9 1e-9 1e-9\"/>\n"               \
  "      <plugin instance=\"rod\"/></body>\n"

typedef struct {
  double deepest;  /* the least gap of a contact found over the run (< 0: penetration), m */
  double lowest;   /* the least height of the free rod's surface (its mid point's centreline less its radius) */
  double last;     /* that height at the end */
  int passed;      /* a step reported a disk deeper than its radius */
} rest_result;

/* The free rod of xml (instance 0) stepped nsteps from rest; heights of its
 * mid point's underside above z = 0. */
static rest_result fall_from_rest(const char *name, const char *xml, int nsteps) {
  rest_result t = {.deepest = NAN, .lowest = NAN, .last = NAN};
  mjData *d;
  mjModel *m = load_text_attached(name, xml, &d);
  if (!m) return t;
  t.deepest = t.lowest = INFINITY;
  for (int k = 0; k < nsteps; k++) {
    mj_step(m, d);
    const cusp_step_report *r = cusp_report(m, d);
    if (r && strstr(r->message, "deeper than")) t.passed = 1;
    const cusp_contact_report *c;
    int n = cusp_contacts(m, d, &c);
    for (int i = 0; i < n; i++) t.deepest = fmin(t.deepest, c[i].gap);
    double mid[3];
    cusp_backbone_point(m, d, 0, 0.5 * cusp_total_length(m, 0), mid, NULL);
    t.last = mid[2] - REST_RADIUS;
    t.lowest = fmin(t.lowest, t.last);
  }
  finish(m, d);
  return t;
}

static void from_rest(void) {
  char xml[4096], mount[512];
  const double g = 9.81, travel = g * REST_STEP * REST_STEP;
  /* onto a plane: its surface REST_GAP above z = 0 */
  snprintf(mount, sizeof mount, FREE_MOUNT_FMT, REST_RADIUS + REST_GAP);
  snprintf(xml, sizeof xml,
           "<mujoco model=\"rest_over_plane\">\n"
           "  <option timestep=\"%g\" gravity=\"0 0 %g\"/>\n"
           "  <extension><plugin plugin=\"cusp.softbody\">\n" TILED_ROD "  </plugin></extension>\n"
           "  <worldbody>\n    <geom name=\"floor\" type=\"plane\" size=\"1 1 0.01\"/>\n%s  </worldbody>\n"
           "</mujoco>\n",
           REST_STEP, -g, mount);
  rest_result t = fall_from_rest("rest_over_plane", xml, 25);
  printf("a free tiled rod at rest %.3f m above a plane, %.0f ms steps (g h^2 = %.4f m): deepest contact gap %.2e m, "
         "its underside at least %.2e m above the plane, %.2e m at the end (1 s)%s\n",
         REST_GAP, 1e3 * REST_STEP, travel, t.deepest, t.lowest, t.last,
         t.passed ? "; a disk was reported deeper than its radius" : "");
  EXPECT(!t.passed && t.deepest > -PENETRATION_TOL && t.lowest > -PENETRATION_TOL,
         "a rod at rest over a plane fell into it in a %.0f ms step: contact gap %.2e m, underside %.2e m%s",
         1e3 * REST_STEP, t.deepest, t.lowest, t.passed ? " (deeper than its radius)" : "");
  EXPECT(fabs(t.last) < 1e-4, "a rod at rest over a plane does not come to rest on it: %.2e m above it after 1 s",
         t.last);
}

int main(void) {
  from_rest();
  face_on();
  very_fast();
  tube_plane_closing();
  double z, low, above;
  int passed;
  throw_down("thrown_on_plate", plate_xml, &z, &low, &above, &passed);
  printf("rod thrown at 3 m/s onto a 4 mm plate (top z = 0.0825), 10 ms steps: tip at z = %.4f m after 20 steps, "
         "lowest %.4f m%s\n",
         z, low, passed ? "; a step reported a disk passing through" : "");
  /* the end disk's centre stops above the plate's top (it rests half its
   * thickness above it; the rod, compressed by the impact, springs back) */
  EXPECT(low > 0.0825 && !passed, "thrown on the plate: the tip went down to z = %.4f, through the plate (top 0.0825)",
         low);
  EXPECT(z > 0.0825, "thrown on the plate: the tip ends at z = %.4f, below the plate's top 0.0825", z);
  throw_down("thrown_on_rod", rods_xml, &z, &low, &above, &passed);
  printf("rod thrown at 3 m/s onto a clamped rod, 10 ms steps: tip at z = %.4f m after 20 steps, %.4f m above the "
         "struck rod's midpoint then%s\n",
         z, above, passed ? "; a step reported a disk passing through" : "");
  /* the struck rod gives under the impact; the thrown one stays on its side
   * of it: at least the two radii (0.01 m) above its axis, to rounding */
  EXPECT(!passed && above > 0.01 - 1e-3, "thrown on the rod: the tip ends %.4f m above the struck rod's midpoint%s",
         above, passed ? " (a disk passed through)" : "");
  return test_report("swept_margin");
}

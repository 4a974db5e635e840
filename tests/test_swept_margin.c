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
 * struck rod's (the plugin's message) and was thrown 0.83 m back up. */
#include <math.h>
#include <stdio.h>

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

int main(void) {
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

/* A rod that starts with its disks deep inside a floor is pushed out without
 * diverging.
 *
 * The rod (8 Cosserat sections of 25 mm, radius 5 mm, E = 1e6 Pa, no
 * viscosity, no gravity) is clamped 7 mm above a floor, and its contact
 * disks keep the default radius of 3 cm: every disk starts 23 mm inside the
 * floor, the clamp's own disk for good. The stabilization asks for alpha of
 * that depth a step, 11.5 m/s at alpha = 0.5, which the clamped rod can only
 * meet by whipping; uncapped, the run diverged within 20 to 80 steps for
 * alpha 0.45 to 0.8 (soft velocities past 1e20, the tip 1e16 m away, no
 * error reported on most). With the push-out capped (key push_speed,
 * 1 m/s by default) each alpha's run stays a rod: its tip within 1.5 of its
 * lengths of the clamp at every step (it whips, and stretches up to 11 %),
 * the state finite, no disk deeper than it started and the mobile disks
 * out of the floor by the end.
 *
 * Without the cap (push_speed 1e4 m/s), where the run diverges: the plugin
 * says so (a message, counted as a NaN event), and no soft state it keeps
 * holds an entry MuJoCo would call bad (beyond mjMAXVAL, mj_isBad): the
 * diverged step is not committed. Before that check the run reached 1e20
 * with every entry finite and no message. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plugin_testutil.h"

#define ROD_LENGTH 0.2
#define START_DEPTH 0.023 /* the disks' radius 0.03 less the clamp's height 0.007 above the floor */
#define STEPS 600

/* The scene at alpha with the push-out cap push_speed (a key value). */
static void rod_xml(char *xml, size_t size, double alpha, const char *push_speed) {
  snprintf(xml, size,
           "<mujoco model=\"deep_start\">\n"
           "  <option timestep=\"0.001\" gravity=\"0 0 0\"/>\n"
           "  <extension><plugin plugin=\"cusp.softbody\"><instance name=\"rod\">\n"
           "    <config key=\"model\" value=\"cosserat\"/>\n"
           "    <config key=\"sections\" value=\"8\"/>\n"
           "    <config key=\"length\" value=\"0.025\"/>\n"
           "    <config key=\"radius\" value=\"0.005\"/>\n"
           "    <config key=\"density\" value=\"1000\"/>\n"
           "    <config key=\"young\" value=\"1e6\"/>\n"
           "    <config key=\"viscosity\" value=\"0\"/>\n"
           "    <config key=\"strains\" value=\"kx ky kz ex ey ez\"/>\n"
           "    <config key=\"disks\" value=\"1\"/>\n"
           "    <config key=\"contact\" value=\"lcp\"/>\n"
           "    <config key=\"actuated\" value=\"none\"/>\n"
           "    <config key=\"stabilization\" value=\"%g\"/>\n"
           "    <config key=\"push_speed\" value=\"%s\"/>\n"
           "  </instance></plugin></extension>\n"
           "  <worldbody>\n"
           "    <geom name=\"floor\" type=\"plane\" pos=\"0 0 -0.1\" size=\"2 2 0.01\"/>\n"
           "    <body name=\"mount\" pos=\"0 0.5 -0.093\" euler=\"0 90 0\"><plugin instance=\"rod\"/></body>\n"
           "  </worldbody>\n"
           "</mujoco>\n",
           alpha, push_speed);
}

static void run_alpha(double alpha, const char *push_speed) {
  char xml[2048];
  rod_xml(xml, sizeof xml, alpha, push_speed);
  mjData *d;
  mjModel *m = load_text_attached("deep_start", xml, &d);
  if (!m) return;
  const double mount[3] = {0, 0.5, -0.093};
  double farthest = 0, deepest = 0, last_depth = 0;
  int finite = 1, step = 0;
  for (; step < STEPS && finite; step++) {
    mj_step(m, d);
    double tip[3];
    cusp_tip_pose(m, d, 0, tip, NULL);
    double r = sqrt((tip[0] - mount[0]) * (tip[0] - mount[0]) + (tip[1] - mount[1]) * (tip[1] - mount[1]) +
                    (tip[2] - mount[2]) * (tip[2] - mount[2]));
    finite = state_finite(m, d) && isfinite(r);
    farthest = fmax(farthest, finite ? r : INFINITY);
    /* the mobile disks' deepest penetration (the clamp's disk stays at START_DEPTH) */
    const cusp_contact_report *c;
    int nc = cusp_contacts(m, d, &c);
    last_depth = 0;
    for (int i = 0; i < nc; i++)
      if (c[i].disk > 0) last_depth = fmax(last_depth, -c[i].gap);
    deepest = fmax(deepest, last_depth);
  }
  printf("rod clamped 23 mm into a floor, alpha %g, push_speed %s: %d steps, tip at most %.3f m from the clamp, "
         "mobile disks at most %.4f m deep, %.4f m at the end, %ld NaN events\n",
         alpha, push_speed, step, farthest, deepest, last_depth, (long)cusp_report(m, d)->nan_events);
  EXPECT(finite && cusp_report(m, d)->nan_events == 0, "alpha %g: the state went non-finite at step %d", alpha,
         step);
  EXPECT(farthest <= ROD_LENGTH * 1.5, "alpha %g: the tip went %.3g m from the clamp of a %.2f m rod", alpha,
         farthest, ROD_LENGTH);
  EXPECT(deepest <= START_DEPTH * 1.05, "alpha %g: a disk went %.4f m deep, deeper than the %.3f m it started",
         alpha, deepest, START_DEPTH);
  EXPECT(last_depth < 0.5 * START_DEPTH, "alpha %g: the disks were not pushed out (%.4f m deep at the end)", alpha,
         last_depth);
  mj_deleteData(d);
  mj_deleteModel(m);
}

/* The largest entry of instance 0's soft state (q and v). */
static double largest_state(const mjModel *m, const mjData *d) {
  const double *q, *v;
  int n = cusp_soft_state(m, d, 0, &q, &v);
  double big = n > 0 ? 0 : INFINITY;
  for (int i = 0; i < n; i++) big = fmax(big, fmax(fabs(q[i]), fabs(v[i])));
  return big;
}

/* alpha 0.51 uncapped diverged within 20 steps: said, and not kept. */
static void divergence_is_refused(void) {
  char xml[2048];
  rod_xml(xml, sizeof xml, 0.51, "1e4");
  mjData *d;
  mjModel *m = load_text_attached("deep_start_uncapped", xml, &d);
  if (!m) return;
  double largest = 0;
  int said = 0;
  for (int step = 0; step < STEPS; step++) {
    mj_step(m, d);
    largest = fmax(largest, largest_state(m, d));
    said |= strstr(cusp_report(m, d)->message, "diverged") != NULL;
  }
  long events = (long)cusp_report(m, d)->nan_events;
  printf("uncapped, alpha 0.51: the largest soft state entry kept %.3g, divergence said: %s, %ld events\n", largest,
         said ? "yes" : "no", events);
  EXPECT(largest <= mjMAXVAL, "uncapped: a soft state entry of %.3g was kept (MuJoCo's bound %g)", largest, mjMAXVAL);
  EXPECT(said && events > 0, "uncapped: the divergence was not reported (message seen: %d, events %ld)", said, events);
  mj_deleteData(d);
  mj_deleteModel(m);
}

int main(void) {
  const double alphas[] = {0.2, 0.45, 0.49, 0.5, 0.51, 0.8};
  for (size_t k = 0; k < sizeof alphas / sizeof alphas[0]; k++) run_alpha(alphas[k], "1");
  divergence_is_refused();
  return test_report("deep_start");
}

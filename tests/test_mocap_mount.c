/* A rod on a mocap mount driven at a steady speed: MuJoCo gives a mocap body
 * no velocity (the caller moves it between steps), so the plugin takes its
 * last move over the step as its twist. Lowered onto a plane, the rod's end
 * disk must then stay out of the floor: seen standing still, the mount
 * carried the rod one move per step into it after the LCP had settled the
 * contacts, and the depth grew to move / stabilization (2 mm here; the
 * cosseratbench pile's end disk, docs/contact_scaling.md). */
#include <math.h>
#include <stdio.h>

#include "plugin_testutil.h"

static const char *scene =
    "<mujoco model=\"mocap_mount\">\n"
    "  <option timestep=\"0.001\" gravity=\"0 0 -9.81\"/>\n"
    "  <extension><plugin plugin=\"cusp.softbody\"><instance name=\"rod\">\n"
    "    <config key=\"model\" value=\"cosserat\"/>\n"
    "    <config key=\"sections\" value=\"10\"/>\n"
    "    <config key=\"length\" value=\"0.01\"/>\n"
    "    <config key=\"radius\" value=\"0.0025\"/>\n"
    "    <config key=\"density\" value=\"1000\"/>\n"
    "    <config key=\"young\" value=\"1e6\"/>\n"
    "    <config key=\"viscosity\" value=\"0\"/>\n"
    "    <config key=\"strains\" value=\"kx ky kz ex ey ez\"/>\n"
    "    <config key=\"disks\" value=\"2\"/>\n"
    "    <config key=\"disk_radius\" value=\"0.0025\"/>\n"
    "    <config key=\"disk_thickness\" value=\"0.005\"/>\n"
    "    <config key=\"friction\" value=\"0.3\"/>\n"
    "    <config key=\"contact\" value=\"lcp\"/>\n"
    "    <config key=\"actuated\" value=\"none\"/>\n"
    "  </instance></plugin></extension>\n"
    "  <worldbody>\n"
    "    <geom type=\"plane\" size=\"0 0 1\"/>\n"
    "    <body name=\"mount\" pos=\"0 0 0.1065\" quat=\"0 1 0 0\" mocap=\"true\"><plugin instance=\"rod\"/></body>\n"
    "  </worldbody>\n"
    "</mujoco>\n";

/* The rod hangs with its end disk's face 4 mm over the plane; the mount
 * goes down 0.4 mm a step (0.4 m/s). Returns the deepest contact over the
 * 15 steps after the first loaded one, and that step's normal load. */
static void lowered_onto_plane(double *deepest, double *load, int *touched_at) {
  *deepest = -1;
  *load = 0;
  *touched_at = -1;
  mjData *d;
  mjModel *m = load_text_attached("mocap_mount", scene, &d);
  if (!m) return;
  const double z0 = 0.1065, speed = 0.4, h = m->opt.timestep;
  *deepest = 0;
  for (int k = 0; k < 60; k++) {
    d->mocap_pos[2] = z0 - speed * (k + 1) * h;
    mj_step(m, d);
    const cusp_step_report *r = cusp_report(m, d);
    if (!r) break;
    if (*touched_at < 0) {
      const cusp_contact_report *c;
      int n = cusp_contacts(m, d, &c);
      for (int i = 0; i < n; i++)
        if (c[i].normal_impulse > 0) {
          *touched_at = k;
          *load = c[i].normal_impulse / h;
        }
    }
    if (*touched_at >= 0 && r->max_penetration > *deepest) *deepest = r->max_penetration;
    if (*touched_at >= 0 && k >= *touched_at + 15) break;
  }
  mj_deleteData(d);
  mj_deleteModel(m);
}

int main(void) {
  double deepest, load;
  int touched;
  lowered_onto_plane(&deepest, &load, &touched);
  printf("mocap mount lowered onto a plane: first load at step %d (%.3e N), deepest contact over 15 steps %.3e m\n",
         touched, load, deepest);
  EXPECT(touched >= 0 && load > 0, "the end disk never pressed on the plane (first load at step %d)", touched);
  /* Stiff contact held by an LCP: to rounding. Without the mount's velocity
   * the depth is 0.4, 0.71, 0.97 ... mm (-> 2 mm). */
  EXPECT(deepest >= 0 && deepest < 1e-6, "the end disk went %.3e m into the plane under a mount driven at 0.4 m/s",
         deepest);
  return test_report("mocap_mount");
}

/* The rigid side of the lcp contact problem under MuJoCo's implicit dof
 * damping (plugin/rigid_damping.c): a damped pendulum's bob swung into the
 * base disk of an arm on a static mount (no gravity: the disk stays where
 * it is). At every step where the contact carries an impulse, the LCP's
 * normal row must hold for the velocity MuJoCo actually integrated:
 *   u_n + stab = 0,  u_n = n . (0 - v_bob) at the contact point,
 * v_bob = J(point) qvel after mj_step (the kinematics of the step's start,
 * which mj_step leaves in d), stab = g/h for a gap g >= 0 and alpha g/h for
 * a penetration. This is plain arithmetic on MuJoCo's result, not the
 * solver's own velocity. Solving with M where MuJoCo solves with
 * M + h diag(damping) misses it by the share h D / (I + h D) of the bob's
 * closing speed. (cusp refuses RK4, which would need M itself.) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "plugin_testutil.h"

#define TOL 1e-9 /* m/s: the LCP is solved to round-off */

static const char *SCENE_FMT =
    "<mujoco model=\"damped_pendulum\">\n"
    "  <option timestep=\"0.01\" integrator=\"%s\" gravity=\"0 0 0\"><flag eulerdamp=\"%s\"/></option>\n"
    "  <extension><plugin plugin=\"cusp.softbody\"><instance name=\"arm\">\n"
    "    <config key=\"disks\" value=\"0\"/><config key=\"contact\" value=\"lcp\"/>\n"
    "    <config key=\"friction\" value=\"0.5\"/>\n"
    "  </instance></plugin></extension>\n"
    "  <worldbody>\n"
    "    <body name=\"mount\" pos=\"0 0 1\" euler=\"0 90 0\"><plugin instance=\"arm\"/></body>\n"
    "    <body name=\"pendulum\" pos=\"-0.06 0 1.1\">\n"
    "      <joint name=\"hinge\" type=\"hinge\" axis=\"0 1 0\" damping=\"%g\"/>\n"
    "      <geom name=\"rod\" type=\"capsule\" fromto=\"0 0 0 0 0 -0.08\" size=\"0.003\" mass=\"0\"\n"
    "            contype=\"0\" conaffinity=\"0\"/>\n"
    "      <geom name=\"bob\" type=\"sphere\" pos=\"0 0 -0.1\" size=\"0.02\" mass=\"0.05\"/>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "  <actuator><motor name=\"motor\" joint=\"hinge\" gear=\"2\" damping=\"%g\"/></actuator>\n"
    "</mujoco>\n";

/* Swings the bob into the base disk; returns the largest |u_n + stab| over
 * the steps whose contact with the bob carried a normal impulse, and their
 * count in *nactive. */
/* damping: the joint's; motor_damping: its motor's (gear 2: the joint gets
 * 4 times it, mj_actuatorDamping). */
static double worst_normal_row(const char *integrator, const char *eulerdamp, double damping, double motor_damping,
                               int *nactive) {
  char xml[4096];
  snprintf(xml, sizeof xml, SCENE_FMT, integrator, eulerdamp, damping, motor_damping);
  mjData *d;
  mjModel *m = load_text_attached("rigid_damping", xml, &d);
  *nactive = 0;
  if (!m) return INFINITY;
  cusp_instance_config *cfg = instance_config(m, 0);
  int bob = mj_name2id(m, mjOBJ_GEOM, "bob"), body = m->geom_bodyid[bob];
  double worst = 0, jac[3 * 8];
  EXPECT(m->nv == 1 && cfg && cfg->disk[0].s == 0, "the pendulum is the only dof and disk 0 the base disk");
  d->qvel[0] = -4; /* the bob at 0.4 m/s towards the disk's back face */
  for (int step = 0; step < 40 && cfg; step++) {
    d->qfrc_applied[0] = -4 * (damping + 4 * motor_damping) - 0.02; /* the approach speed against the damping; then a press */
    mj_step(m, d);
    const cusp_contact_report *c;
    int nc = cusp_contacts(m, d, &c);
    for (int k = 0; k < nc; k++) {
      if (c[k].other_geom != bob || c[k].normal_impulse <= 0) continue;
      EXPECT(c[k].disk == 0, "%s: the bob touches disk %d, not the base disk", integrator, c[k].disk);
      mj_jac(m, d, jac, NULL, c[k].pos, body);
      double v[3] = {jac[0] * d->qvel[0], jac[1] * d->qvel[0], jac[2] * d->qvel[0]};
      double un = -(c[k].normal[0] * v[0] + c[k].normal[1] * v[1] + c[k].normal[2] * v[2]);
      double g = c[k].gap, h = m->opt.timestep, stab = g >= 0 ? g / h : cfg->stabilization * g / h;
      worst = fmax(worst, fabs(un + stab));
      (*nactive)++;
    }
  }
  free(cfg);
  mj_deleteData(d);
  mj_deleteModel(m);
  return worst;
}

int main(void) {
  /* I = 0.05 (0.1)^2 + 2/5 0.05 (0.02)^2 = 5.08e-4 kg m^2: h D / I = 0.98 at D = 0.05 */
  const char *integrators[] = {"Euler", "implicitfast", "implicit"};
  for (int i = 0; i < 3; i++) {
    int nactive;
    double worst = worst_normal_row(integrators[i], "enable", 0.05, 0, &nactive);
    printf("%-12s damping 0.05: %d active contact steps, max |u_n + stab| = %.3g m/s\n", integrators[i], nactive,
           worst);
    EXPECT(nactive >= 5, "%s: the bob hits and keeps pressing (%d active steps)", integrators[i], nactive);
    EXPECT(worst < TOL, "%s: the normal row holds for MuJoCo's velocity (%.3g m/s)", integrators[i], worst);
  }
  /* Euler without damping, and with mjDSBL_EULERDAMP: MuJoCo integrates
   * the damping explicitly there, and the problem keeps M */
  const char *eulerdamp[] = {"enable", "disable"};
  const double damping[] = {0, 0.05};
  for (int i = 0; i < 2; i++) {
    int nactive;
    double worst = worst_normal_row("Euler", eulerdamp[i], damping[i], 0, &nactive);
    printf("Euler eulerdamp %s, damping %g: %d active contact steps, max |u_n + stab| = %.3g m/s\n", eulerdamp[i],
           damping[i], nactive, worst);
    EXPECT(nactive >= 5 && worst < TOL, "Euler, eulerdamp %s, damping %g: %d active steps, %.3g m/s", eulerdamp[i],
           damping[i], nactive, worst);
  }
  /* the damping a motor lends its joint (actuator damping times gear^2) */
  for (int i = 0; i < 2; i++) {
    int nactive;
    double worst = worst_normal_row(integrators[i], "enable", 0, 0.0125, &nactive);
    printf("%-12s motor damping 0.0125, gear 2: %d active contact steps, max |u_n + stab| = %.3g m/s\n",
           integrators[i], nactive, worst);
    EXPECT(nactive >= 5 && worst < TOL, "%s, motor damping: %d active steps, %.3g m/s", integrators[i], nactive, worst);
  }
  return test_report("rigid_damping");
}

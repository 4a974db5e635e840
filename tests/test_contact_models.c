/* contact=sap and contact=ncp inside mj_step (issue 17 item 1): soft-rigid
 * (a free box resting on the arm: the impulses balance its weight, what
 * MuJoCo receives is minus the soft side's; the arm falling onto a box and
 * the floor; the tip on a slope sliding without friction and holding with
 * mu = 1), soft-soft (two arms), the touched bodies' own contacts (a ball
 * squeezed against the floor), a copied mjData continuing bit for bit (the
 * warm start is plugin state) and the live switch lcp -> sap -> ncp -> lcp.
 * SAP is compliant: a resting contact sinks, by at most the weight it
 * carries over its stiffness. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cusp.h"
#include "plugin_testutil.h"

#define SCENE(name) CUSP_SOURCE_DIR "/tests/data/scenes/" name

static const char *const implicit_models[2] = {"sap", "ncp"};

/* The scene with its instance "arm" on contact model `model`, and its data;
 * NULL (a test failure said) when it does not load. */
static mjModel *load_arm_on(const char *scene, const char *model, mjData **d) {
  cusp_override ov = {"arm", "contact", model};
  mjModel *m = load(scene, &ov, 1);
  *d = m ? attach(m) : NULL;
  return m;
}

/* A run that stayed finite and whose solves (more than min_solves) nearly
 * all converged. */
static void expect_sound(const char *model, const char *what, run_stats st, long min_solves) {
  EXPECT(st.finite && st.nan_events == 0, "%s %s: finite", model, what);
  EXPECT(st.solves > min_solves && st.converged >= 0.99 * st.solves, "%s %s: %ld/%ld converged", model, what,
         st.converged, st.solves);
}

/* A free box on the arm: at rest the normal impulses on it sum to its
 * weight times h, and MuJoCo's qfrc_passive holds exactly that. */
static void test_box_on_arm(const char *model) {
  mjData *d;
  mjModel *m = load_arm_on(SCENE("coupling_box_on_arm.xml"), model, &d);
  if (!m) return;
  int box = mj_name2id(m, mjOBJ_BODY, "box"), box_geom = mj_name2id(m, mjOBJ_GEOM, "box");
  run_stats st = run_until(m, d, 2.0, 0.2);
  double weight = m->body_mass[box] * fabs(m->opt.gravity[2]), weight_h = weight * m->opt.timestep;
  double worst = 0, speed = 0, mismatch = 0, deepest = 0;
  int zdof = m->jnt_dofadr[m->body_jntadr[box]] + 2;
  for (int k = 0; k < 200; k++) {
    mj_step(m, d);
    const cusp_contact_report *c;
    int nc = cusp_contacts(m, d, &c);
    double up = 0;
    for (int i = 0; i < nc; i++)
      if (c[i].other_geom == box_geom) {
        up -= c[i].impulse[2];
        deepest = fmax(deepest, -c[i].gap);
      }
    worst = fmax(worst, fabs(up - weight_h) / weight_h);
    mismatch = fmax(mismatch, fabs(d->qfrc_passive[zdof] * m->opt.timestep - up) / weight_h);
    double v[6];
    mj_objectVelocity(m, d, mjOBJ_BODY, box, v, 0);
    speed = fmax(speed, sqrt(v[3] * v[3] + v[4] * v[4] + v[5] * v[5]));
  }
  double k = 1e5; /* sap_stiffness's default: no contact of the box sinks more than its whole weight does */
  printf("box on arm (%s): impulses within %.3g%% of m g h, box speed < %.3g mm/s, deepest %.3g mm "
         "(m g / k = %.3g mm), %ld/%ld converged\n", model, 100 * worst, 1e3 * speed, 1e3 * deepest,
         1e3 * weight / k, st.converged, st.solves);
  expect_sound(model, "box on arm", st, 1000);
  EXPECT(worst <= 0.01, "%s box on arm: impulses = weight * h within 1%% (worst %.3g%%)", model, 100 * worst);
  EXPECT(speed < 1e-3, "%s box on arm: at rest (%.3g mm/s)", model, 1e3 * speed);
  EXPECT(mismatch < 1e-9, "%s box on arm: MuJoCo got minus the soft side's impulse (%.3g)", model, mismatch);
  if (!strcmp(model, "sap"))
    EXPECT(deepest > 0 && deepest <= 1.01 * weight / k, "sap box on arm: deepest %.3g mm, weight / k %.3g mm",
           1e3 * deepest, 1e3 * weight / k);
  else
    EXPECT(deepest <= 1e-4, "ncp box on arm: penetration %.3g mm", 1e3 * deepest);
  finish(m, d);
}

/* The arm swings down onto a static box and the floor. */
static void test_fall(const char *model) {
  mjData *d;
  mjModel *m = load_arm_on(SCENE("coupling_fall.xml"), model, &d);
  if (!m) return;
  run_stats st = run_until(m, d, 2.0, 0);
  double tip[3];
  cusp_tip_pose(m, d, 0, tip, NULL);
  printf("fall (%s): %ld/%ld converged, max penetration %.3g mm, tip z %.4f\n", model, st.converged, st.solves,
         1e3 * st.max_pen, tip[2]);
  expect_sound(model, "fall", st, 100);
  EXPECT(st.max_pen <= 2e-3, "%s fall: max penetration %.3g mm", model, 1e3 * st.max_pen);
  EXPECT(tip[2] > -2e-3, "%s fall: the tip stays above the floor (z = %g)", model, tip[2]);
  finish(m, d);
}

/* The tip on a 20 degree slope slides downhill (+x) with mu = 0 and holds with mu = 1. */
static void test_slope(const char *model) {
  double moved[2];
  for (int k = 0; k < 2; k++) {
    cusp_override ov[2] = {{"arm", "friction", k ? "1" : "0"}, {"arm", "contact", model}};
    run_stats st;
    moved[k] = tip_travel_x(SCENE("coupling_incline.xml"), ov, 2, 0.3, 1.3, &st);
    if (isnan(moved[k])) return;
    printf("slope (%s), mu %s: tip moved %.3g mm downhill in 1 s, %ld/%ld converged\n", model, ov[0].value,
           1e3 * moved[k], st.converged, st.solves);
    EXPECT(st.finite && st.solves > 500, "%s slope: in contact (%ld solves)", model, st.solves);
  }
  EXPECT(moved[0] > 5e-3, "%s slope: frictionless tip slides downhill (%.3g mm)", model, 1e3 * moved[0]);
  EXPECT(fabs(moved[1]) < 0.1 * moved[0], "%s slope: with mu = 1 it holds (%.3g mm)", model, 1e3 * moved[1]);
}

/* Two arms pressing on each other. */
static void test_soft_soft(const char *model) {
  cusp_override ov[2] = {{"left", "contact", model}, {"right", "contact", model}};
  mjModel *m = load(SCENE("coupling_soft_soft.xml"), ov, 2);
  if (!m) return;
  mjData *d = attach(m);
  double normal_sum = 0, deepest = 0;
  long pair_steps = 0;
  while (d->time < 2) {
    mj_step(m, d);
    const cusp_contact_report *c;
    int n = cusp_contacts(m, d, &c), pair = 0;
    for (int i = 0; i < n; i++)
      if (c[i].other_instance >= 0 && c[i].other_instance != c[i].instance) {
        pair = 1;
        normal_sum += c[i].normal_impulse;
        deepest = fmax(deepest, -c[i].gap);
      }
    pair_steps += pair;
  }
  const cusp_step_report *r = cusp_report(m, d);
  printf("soft-soft (%s): %ld steps in contact, normal impulse sum %.3g N s, penetration %.3g mm, %ld/%ld "
         "converged\n", model, pair_steps, normal_sum, 1e3 * deepest, r->converged, r->solves);
  run_stats st = {.solves = r->solves, .converged = r->converged, .nan_events = r->nan_events,
                  .finite = state_finite(m, d)};
  expect_sound(model, "soft-soft", st, 0);
  EXPECT(pair_steps > 300 && normal_sum > 0, "%s soft-soft: the arms touch (%ld steps)", model, pair_steps);
  EXPECT(deepest <= 2e-3, "%s soft-soft: penetration %.3g mm", model, 1e3 * deepest);
  finish(m, d);
}

/* A ball squeezed against the floor by the arm: the ball's floor contact
 * joins the problem (a touched body's own contact). */
static void test_squeeze(const char *model) {
  mjData *d;
  mjModel *m = load_arm_on(SCENE("coupling_squeeze.xml"), model, &d);
  if (!m) return;
  int ball = mj_name2id(m, mjOBJ_BODY, "ball");
  double lowest = HUGE_VAL;
  run_stats st = {0};
  while (d->time < 1.0) {
    st = run_until(m, d, d->time + m->opt.timestep, 0);
    if (ball >= 0) lowest = fmin(lowest, d->xpos[3 * ball + 2]);
    if (!st.finite) break;
  }
  double radius = ball >= 0 ? m->geom_size[3 * m->body_geomadr[ball]] : 0;
  printf("squeeze (%s): ball centre lowest at %.4f m (radius %.4f), %ld/%ld converged\n", model, lowest, radius,
         st.converged, st.solves);
  EXPECT(ball >= 0 && st.finite && st.nan_events == 0, "%s squeeze: finite", model);
  EXPECT(lowest > radius - 2e-3, "%s squeeze: the ball sinks into the floor (centre %.4f, radius %.4f)", model,
         lowest, radius);
  finish(m, d);
}

/* The warm start lives in the plugin state: mj_copyData mid-run continues
 * bit for bit (the box on the arm, and the ball pushed along the table). */
static void test_copy_data(const char *model, const char *scene) {
  mjData *d;
  mjModel *m = load_arm_on(scene, model, &d);
  if (!m) return;
  for (int k = 0; k < 400; k++) mj_step(m, d);
  mjData *c = mj_copyData(NULL, m, d);
  for (int k = 0; k < 300; k++) {
    mj_step(m, d);
    mj_step(m, c);
  }
  int same = c && !memcmp(d->qpos, c->qpos, sizeof(mjtNum) * m->nq) && !memcmp(d->qvel, c->qvel, sizeof(mjtNum) * m->nv) &&
             !memcmp(d->plugin_state, c->plugin_state, sizeof(mjtNum) * m->npluginstate);
  EXPECT(same, "%s %s: mj_copyData at 0.4 s, 0.3 s more: not the same bits", model, scene);
  EXPECT(cusp_report(m, d)->solves > 300, "%s %s: the copy ran through contact solves", model, scene);
  if (c) mj_deleteData(c);
  finish(m, d);
}

/* Arms of two implicit models in one scene: each model solves its own
 * contacts, the later one from the velocities the earlier one left. */
static void test_mixed_models(void) {
  cusp_override ov[2] = {{"left", "contact", "lcp"}, {"right", "contact", "sap"}};
  mjModel *m = load(SCENE("coupling_soft_soft.xml"), ov, 2);
  if (!m) return;
  mjData *d = attach(m);
  long pair_steps = 0;
  while (d->time < 2) {
    mj_step(m, d);
    const cusp_contact_report *c;
    int n = cusp_contacts(m, d, &c), pair = 0;
    for (int i = 0; i < n; i++) pair |= c[i].other_instance >= 0 && c[i].other_instance != c[i].instance;
    pair_steps += pair;
  }
  const cusp_step_report *r = cusp_report(m, d);
  printf("soft-soft, lcp and sap arms: %ld steps in contact, %ld/%ld converged\n", pair_steps, r->converged,
         r->solves);
  EXPECT(state_finite(m, d) && r->nan_events == 0 && pair_steps > 300, "lcp + sap arms: finite, touching (%ld)",
         pair_steps);
  finish(m, d);
}

/* A box across two arms of different implicit models: at rest, the normal
 * impulses of both problems on it sum to its weight times h (solved
 * separately from the same free velocity, each would hold it up alone).
 * layer: arm a's surface_layer. */
static void test_box_on_two_models(const char *ma, const char *mb, const char *layer) {
  cusp_override ov[3] = {{"a", "contact", ma}, {"b", "contact", mb}, {"a", "surface_layer", layer}};
  mjModel *m = load(SCENE("coupling_box_on_two_arms.xml"), ov, 3);
  if (!m) return;
  mjData *d = attach(m);
  int box = mj_name2id(m, mjOBJ_BODY, "box"), box_geom = mj_name2id(m, mjOBJ_GEOM, "box");
  run_until(m, d, 2.0, 0);
  double weight_h = m->body_mass[box] * fabs(m->opt.gravity[2]) * m->opt.timestep, worst = 0, speed = 0;
  double share[2] = {0, 0};
  for (int k = 0; k < 200; k++) {
    mj_step(m, d);
    const cusp_contact_report *c;
    int nc = cusp_contacts(m, d, &c);
    double up = 0;
    for (int i = 0; i < nc; i++)
      if (c[i].other_geom == box_geom) {
        up -= c[i].impulse[2];
        share[c[i].instance] -= c[i].impulse[2] / (200 * weight_h);
      }
    worst = fmax(worst, fabs(up - weight_h) / weight_h);
    double v[6];
    mj_objectVelocity(m, d, mjOBJ_BODY, box, v, 0);
    speed = fmax(speed, sqrt(v[3] * v[3] + v[4] * v[4] + v[5] * v[5]));
  }
  printf("box on two arms (%s, %s): impulses within %.3g%% of m g h (shares %.2f, %.2f), box speed < %.3g mm/s\n",
         ma, mb, 100 * worst, share[0], share[1], 1e3 * speed);
  EXPECT(state_finite(m, d) && worst <= 0.01, "box on %s + %s arms: impulses = weight * h within 1%% (%.3g%%)", ma,
         mb, 100 * worst);
  EXPECT(speed < 1e-3, "box on %s + %s arms: at rest (%.3g mm/s)", ma, mb, 1e3 * speed);
  finish(m, d);
}

/* cusp_set switches the model while running; every model keeps stepping. */
static void test_live_switch(void) {
  mjModel *m = load(SCENE("coupling_box_on_arm.xml"), NULL, 0);
  if (!m) return;
  mjData *d = attach(m);
  char err[256];
  const char *seq[] = {"lcp", "sap", "ncp", "lcp", "ncp", "sap"};
  for (int k = 0; k < 6; k++) {
    EXPECT(cusp_set(m, d, 0, "contact", seq[k], err, sizeof err) == 0, "set contact %s: %s", seq[k], err);
    long before = cusp_report(m, d)->solves;
    run_stats st = run_until(m, d, d->time + 0.3, 0);
    const cusp_step_report *r = cusp_report(m, d);
    EXPECT(st.finite && st.nan_events == 0 && st.solves > before, "after switching to %s: finite, solving (%ld)",
           seq[k], st.solves - before);
    EXPECT(r->info.lcp.iterations >= 0 && r->info.ncontact > 0, "%s: the report shows the solve", seq[k]);
  }
  EXPECT(cusp_set(m, d, 0, "sap_stiffness", "2e5", err, sizeof err) == 0, "sap_stiffness is live: %s", err);
  EXPECT(cusp_set(m, d, 0, "ncp_smoothing", "1e-5", err, sizeof err) == 0, "ncp_smoothing is live: %s", err);
  finish(m, d);
}

int main(void) {
  for (int i = 0; i < 2; i++) {
    test_box_on_arm(implicit_models[i]);
    test_fall(implicit_models[i]);
    test_slope(implicit_models[i]);
    test_soft_soft(implicit_models[i]);
    test_squeeze(implicit_models[i]);
    test_copy_data(implicit_models[i], SCENE("coupling_box_on_arm.xml"));
    test_copy_data(implicit_models[i], SCENE("repro_push_box_table.xml"));
  }
  test_mixed_models();
  test_box_on_two_models("sap", "sap", "1e-8");
  /* The two models solved one after the other (the sap from the velocities
   * the lcp left) hold this box in two ways: at rest, or creeping with a
   * kick every 0.1 s where the lcp side's load moves between disks. Which
   * one the landing reaches depends on the gap term's last digits: with the
   * default surface layer (1e-8, or 1e-10 alike) the cycle, and the state
   * of that run at 1.9 s, set into the model without the layer, cycles too
   * (docs/contact_scaling.md, session 36). The rest is checked with the
   * paper's gap term; the cycle is a defect of the split, open. */
  test_box_on_two_models("lcp", "sap", "0");
  test_box_on_two_models("sap", "ncp", "1e-8");
  test_live_switch();
  return test_report("contact_models");
}

/* Soft-rigid coupling inside mj_step (issue 4's tests): penetration and
 * convergence of the arm falling onto a plane and a box, sticking and
 * sliding, a free box resting on the arm (impulses = weight), a pushed ball,
 * a ball squeezed against the floor, viewer semantics, several instances and
 * models in one process. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "cusp.h"
#include "instances.h"
#include "plugin_testutil.h"

#define SCENE(name) CUSP_SOURCE_DIR "/tests/data/scenes/" name

/* MuJoCo's warnings while a test runs (mju_user_warning). */
static int nwarning, nthrough; /* all of them; those saying disks pass through each other */
static char last_warning[1024];
static void record_warning(const char *msg) {
  nwarning++;
  nthrough += strstr(msg, "pass through each other") != NULL;
  snprintf(last_warning, sizeof last_warning, "%s", msg);
}

/* Center depth of point p inside an axis-aligned box (center c, half sizes
 * h): its distance to the nearest face, < 0 outside. */
static double box_depth(const double p[3], const double c[3], const double h[3]) {
  double depth = INFINITY;
  for (int a = 0; a < 3; a++) depth = fmin(depth, h[a] - fabs(p[a] - c[a]));
  return depth;
}

/* An arm mounted inside a solid box (issue 19 item 2): the plugin says so in
 * words before the first step (the mj_forward after mj_makeData) naming the
 * instance, the disk, the geom and the depth, once through mju_warning and
 * in every step's report while it lasts; the depth is the deepest contact's,
 * at least as deep as that disk's centre is inside the box (geometry alone).
 * An arm lying on the floor in contact says nothing. */
static void test_inside_solid(void) {
  void (*saved)(const char *) = mju_user_warning;
  mju_user_warning = record_warning;
  nwarning = 0;
  mjModel *m = load(SCENE("arm_inside_box.xml"), NULL, 0);
  mjData *d = m ? attach(m) : NULL;
  if (d) {
    EXPECT(nwarning == 1, "%d warnings after mj_forward, expected 1: %s", nwarning, last_warning);
    const cusp_step_report *r = cusp_report(m, d);
    const cusp_contact_report *c;
    int nc = cusp_contacts(m, d, &c), deepest = -1;
    for (int k = 0; k < nc; k++)
      if (deepest < 0 || c[k].gap < c[deepest].gap) deepest = k;
    EXPECT(deepest >= 0, "no soft contact inside the box");
    if (deepest >= 0) {
      char disk[64], depth[32];
      snprintf(disk, sizeof disk, "disk %d (body \"arm/disk%d\")", c[deepest].disk, c[deepest].disk);
      snprintf(depth, sizeof depth, "is %.3g m inside", -c[deepest].gap);
      const char *words[] = {"instance \"arm\"", disk, depth, "geom \"block\"", "inside a solid"};
      for (int w = 0; w < 5; w++) {
        EXPECT(strstr(last_warning, words[w]), "warning lacks '%s': %s", words[w], last_warning);
        EXPECT(strstr(r->message, words[w]), "report message lacks '%s': %s", words[w], r->message);
      }
      const double center[3] = {0, 0, 0.5}, half[3] = {0.5, 0.5, 0.5};
      char body[64];
      snprintf(body, sizeof body, "arm/disk%d", c[deepest].disk);
      int b = mj_name2id(m, mjOBJ_BODY, body);
      EXPECT(b >= 0, "no body %s", body);
      if (b >= 0) {
        double inside = box_depth(d->xpos + 3 * b, center, half), reach = hypot(0.03, 0.005);
        EXPECT(inside > 0.03 && -c[deepest].gap >= inside - 1e-9 && -c[deepest].gap <= inside + reach + 1e-9,
               "%s: centre %.4f m inside the box, contact depth %.4f m", body, inside, -c[deepest].gap);
      }
    }
    for (int k = 0; k < 3; k++) mj_step(m, d);
    EXPECT(nwarning == 1, "%d warnings after 3 more steps: said once while it lasts", nwarning);
    EXPECT(strstr(cusp_report(m, d)->message, "inside a solid"), "report after 3 steps: \"%s\"",
           cusp_report(m, d)->message);
    mj_resetData(m, d);
    mj_forward(m, d);
    EXPECT(nwarning == 2, "%d warnings after a reset, expected a second one", nwarning);
  }
  finish(m, d);

  /* an arm curled through itself from its initial state (found by
   * fuzz_keys with chamber elongations of metres, now refused; within the
   * plausible range the tightest curl, every chamber 1 at +L and two at
   * -L/2, with 10 disks a section): disks deep inside disks. So many
   * overlapping disks also overflow the contact capacity, which warns too. */
  nwarning = nthrough = 0;
  const cusp_override curl[] = {{"arm", "self_contact", "1"},
                                {"arm", "disks", "10"},
                                {"arm", "disk_radius", "0.03"},
                                {"arm", "initial", "0.15 -0.075 -0.075 0.15 -0.075 -0.075 0.15 -0.075 -0.075"}};
  m = load(SCENE("arm.xml"), curl, 4);
  d = m ? attach(m) : NULL;
  if (d) {
    const char *msg = cusp_report(m, d)->message;
    const cusp_contact_report *c;
    int nc = cusp_contacts(m, d, &c);
    double deepest = 0;
    for (int k = 0; k < nc; k++) deepest = fmax(deepest, -c[k].gap);
    char depth[32];
    snprintf(depth, sizeof depth, "is %.3g m inside disk ", deepest);
    EXPECT(nthrough == 1 && strstr(msg, "pass through each other") && strstr(msg, depth) &&
               strstr(msg, "of instance \"arm\"") && deepest > 0.035,
           "arm curled through itself: %d warnings of it, deepest %.4g m, message \"%s\"", nthrough, deepest, msg);
  }
  finish(m, d);

  nwarning = 0;
  m = load(SCENE("coupling_lying.xml"), NULL, 0);
  d = m ? attach(m) : NULL;
  if (d) {
    int touched = 0, quiet = 1;
    for (int k = 0; k < 300; k++) {
      mj_step(m, d);
      touched |= cusp_report(m, d)->ncontact > 0;
      quiet &= cusp_report(m, d)->message[0] == 0;
    }
    EXPECT(touched && quiet && nwarning == 0, "arm lying on the floor: contacts %d, message \"%s\", %d warnings",
           touched, cusp_report(m, d)->message, nwarning);
  }
  finish(m, d);
  mju_user_warning = saved;
}

/* 1. The arm swings down onto a static box and the floor. */
static void test_fall(void) {
  mjModel *m = load(SCENE("coupling_fall.xml"), NULL, 0);
  if (!m) return;
  mjData *d = attach(m);
  run_stats st = run_until(m, d, 2.0, 0);
  const double *q;
  int n = cusp_soft_state(m, d, 0, &q, NULL);
  double tip[3];
  cusp_tip_pose(m, d, 0, tip, NULL);
  printf("fall: %ld solves, %ld converged, max penetration %.3g mm, max contacts %d, tip (%.3f %.3f %.3f)\n",
         st.solves, st.converged, 1e3 * st.max_pen, st.max_contacts, tip[0], tip[1], tip[2]);
  EXPECT(st.finite && st.nan_events == 0 && n > 0, "fall: finite state, no NaN events (%ld)", st.nan_events);
  EXPECT(st.solves > 100, "fall: the arm reached the obstacles (%ld contact solves)", st.solves);
  EXPECT(st.converged >= 0.99 * st.solves, "fall: convergence %ld/%ld >= 99%%", st.converged, st.solves);
  EXPECT(st.max_pen <= 1e-3, "fall: max penetration %.3g mm <= 1 mm", 1e3 * st.max_pen);
  EXPECT(tip[2] > -1e-3, "fall: the tip stays above the floor (z = %g)", tip[2]);
  finish(m, d);
}

/* 2. Sticking: the arm lying on the floor with mu = 1 keeps its tip. */
static void test_stick(void) {
  mjModel *m = load(SCENE("coupling_lying.xml"), NULL, 0);
  if (!m) return;
  mjData *d = attach(m);
  run_until(m, d, 0.5, 0); /* settle */
  double t0[3], t1[3];
  cusp_tip_pose(m, d, 0, t0, NULL);
  run_stats st = run_until(m, d, 5.5, 0);
  cusp_tip_pose(m, d, 0, t1, NULL);
  double drift = hypot(t1[0] - t0[0], t1[1] - t0[1]);
  printf("stick: tip drift %.3g mm over 5 s (tip z %.4f), max penetration %.3g mm, %ld/%ld converged\n",
         1e3 * drift, t1[2], 1e3 * st.max_pen, st.converged, st.solves);
  EXPECT(st.finite && st.nan_events == 0, "stick: finite");
  EXPECT(drift <= 1e-4, "stick: tip drift %.3g mm <= 0.1 mm", 1e3 * drift);
  EXPECT(st.max_pen <= 1e-3, "stick: penetration %.3g mm", 1e3 * st.max_pen);
  EXPECT(st.converged >= 0.99 * st.solves && st.solves > 1000, "stick: convergence %ld/%ld", st.converged, st.solves);
  finish(m, d);
}

/* 2b. Sliding: the tip on a 20 degree slope slides downhill (+x) with
 * mu = 0 and holds with mu = 1. */
static void test_slide(void) {
  double moved[2];
  for (int k = 0; k < 2; k++) {
    cusp_override ov = {"arm", "friction", k ? "1" : "0"};
    run_stats st;
    moved[k] = tip_travel_x(SCENE("coupling_incline.xml"), &ov, 1, 0.3, 1.3, &st);
    if (isnan(moved[k])) return;
    printf("slope, mu %s: tip moved %.3g mm along +x (downhill) in 1 s, %ld contact solves, max penetration %.3g mm\n",
           ov.value, 1e3 * moved[k], st.solves, 1e3 * st.max_pen);
    EXPECT(st.finite && st.solves > 500, "slope mu %s: in contact (%ld solves)", ov.value, st.solves);
    EXPECT(st.max_pen <= 1e-3, "slope mu %s: penetration %.3g mm", ov.value, 1e3 * st.max_pen);
  }
  EXPECT(moved[0] > 5e-3, "slope: frictionless tip slides downhill (%.3g mm)", 1e3 * moved[0]);
  EXPECT(fabs(moved[1]) < 0.1 * moved[0], "slope: with mu = 1 it holds (%.3g mm)", 1e3 * moved[1]);
}

/* 3. A free box on the arm: at rest, the normal impulses on it sum to its
 * weight times h; the rigid side gets the opposite of the soft side. */
static void test_box_on_arm(void) {
  mjModel *m = load(SCENE("coupling_box_on_arm.xml"), NULL, 0);
  if (!m) return;
  mjData *d = attach(m);
  int box = mj_name2id(m, mjOBJ_BODY, "box"), box_geom = mj_name2id(m, mjOBJ_GEOM, "box");
  run_stats st = run_until(m, d, 2.0, 0.2);
  double weight_h = m->body_mass[box] * fabs(m->opt.gravity[2]) * m->opt.timestep;
  double worst = 0, speed = 0, mismatch = 0;
  int zdof = m->jnt_dofadr[m->body_jntadr[box]] + 2; /* free joint: world translation first */
  for (int k = 0; k < 200; k++) {
    mj_step(m, d);
    const cusp_contact_report *c;
    int nc = cusp_contacts(m, d, &c);
    double up = 0;
    for (int i = 0; i < nc; i++)
      if (c[i].other_geom == box_geom) up -= c[i].impulse[2]; /* the box gets minus the soft side's */
    worst = fmax(worst, fabs(up - weight_h) / weight_h);
    /* what MuJoCo was given: the scene has no springs, so qfrc_passive is cusp's alone */
    mismatch = fmax(mismatch, fabs(d->qfrc_passive[zdof] * m->opt.timestep - up) / weight_h);
    double v[6];
    mj_objectVelocity(m, d, mjOBJ_BODY, box, v, 0);
    speed = fmax(speed, sqrt(v[3] * v[3] + v[4] * v[4] + v[5] * v[5]));
  }
  printf("box on arm: per-step normal impulse on the box within %.3g%% of m g h, box speed < %.3g mm/s, "
         "box z %.4f, max penetration %.3g mm\n",
         100 * worst, 1e3 * speed, d->xpos[3 * box + 2], 1e3 * st.max_pen);
  EXPECT(st.finite && st.nan_events == 0, "box on arm: finite");
  EXPECT(worst <= 0.01, "box on arm: impulses = weight * h within 1%% (worst %.3g%%)", 100 * worst);
  EXPECT(speed < 1e-3, "box on arm: at rest (%.3g mm/s)", 1e3 * speed);
  EXPECT(mismatch < 1e-9, "box on arm: MuJoCo received minus the soft side's impulse (mismatch %.3g of m g h)",
         mismatch);
  EXPECT(st.max_pen <= 1e-3, "box on arm: penetration %.3g mm", 1e3 * st.max_pen);

  finish(m, d);
}

/* 3b. A free ball on the floor pushed by the tip moves along the push. */
static void test_push(void) {
  mjModel *m = load(SCENE("coupling_push.xml"), NULL, 0);
  if (!m) return;
  mjData *d = attach(m);
  int ball = mj_name2id(m, mjOBJ_BODY, "ball"), ball_geom = mj_name2id(m, mjOBJ_GEOM, "ball");
  double ball0[3], tip0[3], tip_hit[3] = {0, 0, 0}, hit_time = -1, pen = 0, push[3] = {0, 0, 0};
  mju_copy3(ball0, d->xpos + 3 * ball);
  run_until(m, d, 0.3, 0); /* settled, before the ramp */
  cusp_tip_pose(m, d, 0, tip0, NULL);
  long solves0 = cusp_report(m, d)->solves, conv0 = cusp_report(m, d)->converged;
  while (d->time < 2.5) {
    mj_step(m, d);
    const cusp_contact_report *c;
    int nc = cusp_contacts(m, d, &c);
    for (int i = 0; i < nc; i++) {
      if (c[i].other_geom != ball_geom) continue;
      pen = fmax(pen, -c[i].gap);
      for (int k = 0; k < 3; k++) push[k] -= c[i].impulse[k]; /* on the ball */
      if (hit_time < 0 && c[i].normal_impulse > 0) {
        hit_time = d->time;
        cusp_tip_pose(m, d, 0, tip_hit, NULL);
      }
    }
    if (!state_finite(m, d)) break;
  }
  EXPECT(state_finite(m, d), "push: finite state at %.3f s", d->time);
  double sweep[2] = {tip_hit[0] - tip0[0], tip_hit[1] - tip0[1]};
  double moved[3] = {d->xpos[3 * ball] - ball0[0], d->xpos[3 * ball + 1] - ball0[1], d->xpos[3 * ball + 2] - ball0[2]};
  double ns = hypot(sweep[0], sweep[1]), nm = hypot(moved[0], moved[1]);
  double along = ns > 0 && nm > 0 ? (sweep[0] * moved[0] + sweep[1] * moved[1]) / (ns * nm) : 0;
  double along_push = nm > 0 ? (push[0] * moved[0] + push[1] * moved[1]) / (hypot(push[0], push[1]) * nm) : 0;
  const cusp_step_report *r = cusp_report(m, d);
  double conv = (double)(r->converged - conv0) / fmax(1, r->solves - solves0);
  printf("push: tip reached the ball at %.3f s after sweeping %.1f mm; the ball moved %.1f mm (cos to the sweep "
         "%.5f, to the impulse %.5f), z %+.3f mm, penetration %.3g mm, %.1f%% converged\n",
         hit_time, 1e3 * ns, 1e3 * nm, along, along_push, 1e3 * moved[2], 1e3 * pen, 100 * conv);
  EXPECT(hit_time > 0.3, "push: the tip reaches the ball during the ramp (at %.3f s)", hit_time);
  EXPECT(nm > 0.03, "push: the ball moves (%.1f mm)", 1e3 * nm);
  EXPECT(along > 0.99 && along_push > 0.99, "push: the ball moves along the push (cos %.5f, %.5f)", along,
         along_push);
  EXPECT(fabs(moved[2]) < 1e-3, "push: the ball stays on the floor (dz %.3g mm)", 1e3 * moved[2]);
  EXPECT(pen < 1e-3, "push: penetration %.3g mm", 1e3 * pen);
  EXPECT(conv >= 0.99, "push: %.1f%% of the solves converged", 100 * conv);
  finish(m, d);
}

/* 3c. The arm loads its mount: a carriage on a vertical spring settles where
 * the spring carries the carriage and the whole arm; a carriage pushed
 * sideways drags the arm, which lags and swings behind it. */
static void test_mount_load(void) {
  mjModel *m = load(SCENE("coupling_mount_spring.xml"), NULL, 0);
  if (!m) return;
  mjData *d = attach(m);
  run_stats st = run_until(m, d, 4.0, 0);
  int carriage = mj_name2id(m, mjOBJ_BODY, "carriage");
  double k = m->jnt_stiffness[0], g = -m->opt.gravity[2];
  double arm_mass = 1.17 + 0.54 + 0.265; /* the instance's default masses */
  double z_expect = 1 - (m->body_mass[carriage] + arm_mass) * g / k, z = d->xpos[3 * carriage + 2];
  printf("mount load: carriage settles at z = %.6f m, spring carrying carriage + arm predicts %.6f (without "
         "the arm %.6f)\n", z, z_expect, 1 - m->body_mass[carriage] * g / k);
  EXPECT(st.finite && fabs(z - z_expect) < 1e-3 * (1 - z_expect), "mount load: z %.6f vs %.6f", z, z_expect);
  EXPECT(fabs(d->qvel[0]) < 1e-4, "mount load: settled (%.3g m/s)", d->qvel[0]);
  finish(m, d);
}

/* 4. A ball squeezed between the tip and the floor stays put. The squeeze
 * force is kept below the rolling instability of a ball under a flat plate
 * (the ball's line of action tilts by x/4r, a negative lateral stiffness
 * F/4r that the hanging arm no longer resists at about 8 N). */
static void test_squeeze(void) {
  mjModel *m = load(SCENE("coupling_squeeze.xml"), NULL, 0);
  if (!m) return;
  mjData *d = attach(m);
  int ball = mj_name2id(m, mjOBJ_BODY, "ball"), ball_geom = mj_name2id(m, mjOBJ_GEOM, "ball");
  run_until(m, d, 1.0, 0);
  double speed = 0, floor_pen = 0, start[3], drift = 0, squeeze = 0, balance = 0;
  mju_copy3(start, d->xpos + 3 * ball);
  double weight = -m->body_mass[ball] * m->opt.gravity[2];
  run_stats st = {0};
  int touching = 1;
  for (int k = 0; k < 1000; k++) {
    mj_step(m, d);
    double v[6];
    mj_objectVelocity(m, d, mjOBJ_BODY, ball, v, 0);
    speed = fmax(speed, sqrt(v[3] * v[3] + v[4] * v[4] + v[5] * v[5]));
    drift = fmax(drift, mju_dist3(start, d->xpos + 3 * ball));
    for (int i = 0; i < d->ncon; i++) floor_pen = fmax(floor_pen, -d->contact[i].dist);
    st.max_pen = fmax(st.max_pen, cusp_report(m, d)->max_penetration);
    const cusp_contact_report *c;
    int nc = cusp_contacts(m, d, &c);
    double fn = 0;
    for (int i = 0; i < nc; i++)
      if (c[i].other_geom == ball_geom) fn += c[i].normal_impulse / m->opt.timestep;
    touching &= fn > 3 * weight;
    squeeze = fmax(squeeze, fn);
    /* the floor's share, applied with the tip's through qfrc_passive, holds
     * the ball against the tip's push and its weight */
    int dof = m->jnt_dofadr[m->body_jntadr[ball]];
    balance = fmax(balance, fabs(d->qfrc_passive[dof + 2] - weight));
  }
  printf("squeeze: tip force %.3g N (ball weight %.3g N), ball drift %.3g mm, speed < %.3g mm/s, "
         "tip-ball penetration %.3g mm, ball-floor %.3g mm, net vertical force - weight %.3g N\n",
         squeeze, weight, 1e3 * drift, 1e3 * speed, 1e3 * st.max_pen, 1e3 * floor_pen, balance);
  EXPECT(touching, "squeeze: the tip presses the ball with more than 3x its weight every step");
  EXPECT(speed < 1e-3, "squeeze: the ball stays still (speed %.3g mm/s)", 1e3 * speed);
  EXPECT(drift < 0.1e-3, "squeeze: the ball stays in place (drift %.3g mm)", 1e3 * drift);
  EXPECT(balance < 1e-3 * weight, "squeeze: cusp's forces on the ball balance its weight (off by %.3g N)", balance);
  EXPECT(st.max_pen < 1e-3 && floor_pen < 1e-3, "squeeze: penetration %.3g / %.3g mm", 1e3 * st.max_pen,
         1e3 * floor_pen);
  finish(m, d);
}

/* 4b. Penalty contact at rest (issue 19 item 16). The arm lying on the
 * floor with contact penalty must come to rest as the lcp arm does: an
 * explicit penalty force chattered there (tip speed up to 0.1 m/s, sign
 * flipping every step, 2 mm of creep over 20 s). The bounds: regularized
 * friction is viscous below its slip speed eps = 1 mm/s, so a tangential
 * load t below mu fn creeps at eps t / (mu fn) and never stops exactly;
 * 1 % of eps is far below any chatter and far above that creep here. */
static void test_penalty_rest(void) {
  const cusp_override ov[] = {{"arm", "contact", "penalty"}};
  mjModel *m = load(SCENE("coupling_lying.xml"), ov, 1);
  if (!m) return;
  mjData *d = attach(m);
  run_until(m, d, 1.0, 0); /* settle */
  double start[3], prev[3], tip[3], vprev[3] = {0, 0, 0}, speed = 0;
  int flips = 0;
  cusp_tip_pose(m, d, 0, start, NULL);
  mju_copy3(prev, start);
  run_stats st = {0};
  while (d->time < 21 - 0.5 * m->opt.timestep) {
    mj_step(m, d);
    cusp_tip_pose(m, d, 0, tip, NULL);
    double v[3];
    for (int k = 0; k < 3; k++) v[k] = (tip[k] - prev[k]) / m->opt.timestep;
    speed = fmax(speed, mju_norm3(v));
    flips += mju_dot3(v, vprev) < 0 && mju_norm3(v) > 1e-6; /* a reversal faster than a micron per second */
    mju_copy3(vprev, v);
    mju_copy3(prev, tip);
    st.max_pen = fmax(st.max_pen, cusp_report(m, d)->max_penetration);
  }
  double creep = mju_dist3(start, tip);
  printf("penalty at rest: tip speed < %.3g mm/s over 1..21 s, %d reversals, creep %.3g mm, max penetration "
         "%.3g mm\n", 1e3 * speed, flips, 1e3 * creep, 1e3 * st.max_pen);
  EXPECT(state_finite(m, d), "penalty at rest: finite");
  EXPECT(speed < 1e-5, "penalty at rest: tip speed %.3g mm/s >= 1%% of the slip speed", 1e3 * speed);
  EXPECT(flips == 0, "penalty at rest: the tip reverses %d times", flips);
  EXPECT(creep < 0.02e-3, "penalty at rest: creep %.3g mm over 20 s", 1e3 * creep);
  finish(m, d);
}

/* 4c. Penalty depth against its closed form: no gravity, the arm hangs
 * straight onto a plane touching its end disk's face, every chamber pushes
 * with F. With the tip load P the straight arm's chamber equations are
 * F - K l - P/3 = 0 (the tip moves by the mean elongation of each section,
 * 3 l in all) and P = n k (3 l) over the disk face's n contacts, so the
 * depth is 3 F / (K + n k). The implicit force must settle there (the
 * damper carries nothing at rest). */
static void test_penalty_press(void) {
  mjModel *m = load(SCENE("penalty_press.xml"), NULL, 0);
  if (!m) return;
  mjData *d = attach(m);
  run_stats st = run_until(m, d, 3.0, 0);
  cusp_instance_config cfg;
  char err[256] = "";
  double K = 0, k = 0, F = 6; /* the scene's schedule */
  if (cusp_instance_read(m, 0, &cfg, err, sizeof err) == 0) {
    K = cfg.stiffness[0]; /* one value: every chamber */
    k = cfg.penalty_stiffness;
  }
  const cusp_contact_report *c;
  int nc = cusp_contacts(m, d, &c), n = 0;
  double deepest = 0, shallowest = INFINITY, load = 0;
  for (int i = 0; i < nc; i++) {
    if (c[i].normal_impulse <= 0) continue;
    n++;
    deepest = fmax(deepest, -c[i].gap);
    shallowest = fmin(shallowest, -c[i].gap);
    load += c[i].normal_impulse / m->opt.timestep;
  }
  double expect = 3 * F / (K + n * k);
  printf("penalty press: %d contacts, depth %.6g..%.6g mm, closed form 3F/(K + n k) = %.6g mm; tip load %.6g N "
         "(n k depth %.6g N)\n", n, 1e3 * shallowest, 1e3 * deepest, 1e3 * expect, load, n * k * deepest);
  EXPECT(st.finite && n >= 1 && K > 0 && k > 0, "penalty press: %d loaded contacts (K %g, k %g) %s", n, K, k, err);
  EXPECT(fabs(deepest - expect) < 1e-3 * expect && fabs(shallowest - expect) < 1e-3 * expect,
         "penalty press: depth %.6g..%.6g mm, closed form %.6g mm", 1e3 * shallowest, 1e3 * deepest, 1e3 * expect);
  finish(m, d);
}

/* 5. A paused viewer calls mj_forward repeatedly: compute runs, nothing
 * advances, and the run continues exactly as if it had not been paused;
 * mj_resetData returns the arm to the scene's initial state. */
static void test_viewer_semantics(void) {
  mjModel *m = load(SCENE("coupling_fall.xml"), NULL, 0), *m2 = load(SCENE("coupling_fall.xml"), NULL, 0);
  if (!m || !m2) return;
  mjData *d = attach(m), *d2 = attach(m2);
  const double *q, *q2;
  int n = cusp_soft_state(m, d, 0, &q, NULL);
  cusp_soft_state(m2, d2, 0, &q2, NULL);
  double q0[CUSP_MAX_COORDS], q1[CUSP_MAX_COORDS];
  memcpy(q0, q, n * sizeof(double));
  for (int k = 0; k < 300; k++) {
    mj_step(m, d);
    mj_step(m2, d2);
  }
  memcpy(q1, q, n * sizeof(double));
  long steps = cusp_report(m, d)->steps;
  for (int k = 0; k < 10; k++) mj_forward(m, d);
  double same = 0;
  for (int i = 0; i < n; i++) same = fmax(same, fabs(q[i] - q1[i]));
  EXPECT(same == 0 && cusp_report(m, d)->steps == steps && steps == 300,
         "paused: 10 mj_forward do not advance (%ld -> %ld steps, q moved %g)", steps, cusp_report(m, d)->steps, same);
  for (int k = 0; k < 200; k++) {
    mj_step(m, d);
    mj_step(m2, d2);
  }
  double diff = 0;
  for (int i = 0; i < n; i++) diff = fmax(diff, fabs(q[i] - q2[i]));
  for (int i = 0; i < m->nq; i++) diff = fmax(diff, fabs(d->qpos[i] - d2->qpos[i]));
  EXPECT(diff == 0, "a pause (10 mj_forward) leaves the trajectory unchanged (differs by %g)", diff);
  double moved = 0;
  for (int i = 0; i < n; i++) moved = fmax(moved, fabs(q1[i] - q0[i]));
  EXPECT(moved > 1e-3, "the arm moved before the reset (%g)", moved);
  mj_resetData(m, d);
  diff = 0;
  for (int i = 0; i < n; i++) diff = fmax(diff, fabs(q[i] - q0[i]));
  EXPECT(diff == 0 && cusp_report(m, d)->steps == 0,
         "reset: the soft state restarts from the scene's initial state (differs by %g)", diff);
  finish(m2, d2);
  finish(m, d);
}

/* 6. Two instances in one scene; two models (and datas) in one process,
 * stepped interleaved, give exactly what each gives alone. */
static void test_many(void) {
  mjModel *m = load(SCENE("two_arms.xml"), NULL, 0);
  if (m) {
    mjData *d = attach(m);
    run_stats st = run_until(m, d, 0.5, 0);
    int ok = cusp_instance_count(m) == 2;
    for (int i = 0; i < 2 && ok; i++) {
      const double *q;
      int n = cusp_soft_state(m, d, i, &q, NULL);
      double moved = 0;
      for (int k = 0; k < n; k++) moved = fmax(moved, fabs(q[k]));
      ok = n > 0 && moved > 1e-4 && st.finite;
    }
    EXPECT(ok, "two instances in one scene both advance");
        mj_deleteData(d);
    /* the rod's mount hangs under the hinged crane and its disks start
     * inside the crane's box: parent filter as in MuJoCo, then without it
     * every disk but the base one may touch the crane */
    int crane = m->body_geomadr[mj_name2id(m, mjOBJ_BODY, "crane")], rod = cusp_instance_find(m, "rod");
    for (int filter = 1; filter >= 0; filter--) {
      if (!filter) m->opt.disableflags |= mjDSBL_FILTERPARENT;
      d = attach(m);
      int with_crane = 0, base_disk = 0;
      for (int k = 0; k < 50; k++) {
        mj_step(m, d);
        const cusp_contact_report *c;
        int nc = cusp_contacts(m, d, &c);
        for (int i = 0; i < nc; i++)
          if (c[i].instance == rod && c[i].other_geom == crane) {
            with_crane++;
            base_disk += c[i].disk == 0;
          }
      }
      if (filter) EXPECT(with_crane == 0, "parent filter: no rod contact with the crane (%d)", with_crane);
      else EXPECT(with_crane > 0 && base_disk == 0, "no parent filter: rod disks touch the crane (%d), the base "
                  "disk never (%d)", with_crane, base_disk);
            mj_deleteData(d);
    }
    mj_deleteModel(m);
  }
  mjModel *a = load(SCENE("coupling_fall.xml"), NULL, 0), *b = load(SCENE("coupling_lying.xml"), NULL, 0);
  mjModel *a2 = load(SCENE("coupling_fall.xml"), NULL, 0);
  if (!a || !b || !a2) return;
  mjData *da = attach(a), *db = attach(b), *da2 = attach(a2);
  for (int k = 0; k < 500; k++) {
    mj_step(a, da);
    mj_step(b, db);
  }
  for (int k = 0; k < 500; k++) mj_step(a2, da2);
  const double *qa, *qa2;
  int n = cusp_soft_state(a, da, 0, &qa, NULL);
  cusp_soft_state(a2, da2, 0, &qa2, NULL);
  double diff = 0;
  for (int k = 0; k < n; k++) diff = fmax(diff, fabs(qa[k] - qa2[k]));
  EXPECT(diff == 0, "two models in one process: interleaved run equals the lone run (differs by %g)", diff);
  finish(a, da);
  finish(b, db);
  finish(a2, da2);
}

/* Live switches (the viewer's keys): every live key reads back what was set;
 * switching to penalty stops the LCP solves; non-live and unknown keys are
 * refused with a message. */
static void test_live_keys(void) {
  mjModel *m = load(SCENE("coupling_fall.xml"), NULL, 0);
  if (!m) return;
  mjData *d = attach(m);
  static const char *const kv[][2] = {{"contact", "penalty"}, {"contact", "lcp"}, {"solver", "lemke"},
                                      {"solver", "fb"}, {"fallback", "0"}, {"fallback", "1"}, {"conditioning", "ruiz tikhonov"}, {"conditioning", "none"},
                                      {"conditioning", "qr ruiz tikhonov"}, {"eps_rank", "1e-05"},
                                      {"ruiz_iterations", "7"}, {"tikhonov", "1e-08"}, {"stabilization", "0.5"},
                                      {"friction", "0.75"}, {"pyramid", "3"}, {"penalty_stiffness", "20000"},
                                      {"penalty_damping", "30"}};
  char err[256], got[256];
  for (size_t k = 0; k < sizeof kv / sizeof kv[0]; k++) {
    int ok = cusp_set(m, d, 0, kv[k][0], kv[k][1], err, sizeof err) == 0 && cusp_get(m, d, 0, kv[k][0], got, sizeof got) == 0;
    int same = ok && (!strcmp(got, kv[k][1]) || strtod(got, NULL) == strtod(kv[k][1], NULL));
    EXPECT(same, "live key %s = %s reads back as %s (%s)", kv[k][0], kv[k][1], ok ? got : "-", ok ? "" : err);
  }
  EXPECT(cusp_set(m, d, 0, "sections", "2", err, sizeof err) < 0 && strstr(err, "sections"), "non-live key: %s", err);
  EXPECT(cusp_get(m, d, 0, "nope", got, sizeof got) < 0 && strstr(got, "nope"), "unknown key: %s", got);
  EXPECT(cusp_get(m, d, 5, "contact", got, sizeof got) < 0 && strstr(got, "5"), "bad instance: %s", got);
  cusp_set(m, d, 0, "contact", "penalty", err, sizeof err);
  run_until(m, d, 1.0, 0);
  long solves = cusp_report(m, d)->solves;
  EXPECT(solves == 0 && cusp_report(m, d)->ncontact > 0, "penalty: contacts (%d) without LCP solves (%ld)",
         cusp_report(m, d)->ncontact, solves);
  cusp_set(m, d, 0, "contact", "lcp", err, sizeof err);
  run_until(m, d, 1.1, 0);
  EXPECT(cusp_report(m, d)->solves > 0, "back to lcp: solves again");
  finish(m, d);
}

/* Deepest point of disk b's surface inside disk a (m, >= 0), from the
 * cylinders' geometry: b's rims and faces sampled (rims every 3.75 degrees,
 * faces on 8 rings), each point's depth below a's nearest surface. MuJoCo's
 * own cylinder-cylinder function is no independent judge here: at margin 0
 * it reports 7 mm of depth for disks that touch (4.0.1, convex collision),
 * where any positive margin and this sampling find none. */
static double disk_inclusion(const mjModel *m, const mjData *d, int a, int b) {
  const double *pa = d->geom_xpos + 3 * a, *Ra = d->geom_xmat + 9 * a;
  const double *pb = d->geom_xpos + 3 * b, *Rb = d->geom_xmat + 9 * b;
  double ra = m->geom_size[3 * a], ha = m->geom_size[3 * a + 1];
  double rb = m->geom_size[3 * b], hb = m->geom_size[3 * b + 1], deepest = 0;
  for (int iz = 0; iz <= 8; iz++)
    for (int ir = 0; ir <= 8; ir++) {
      if (iz != 0 && iz != 8 && ir != 8) continue; /* the surface only */
      for (int it = 0; it < 96; it++) {
        double rr = rb * ir / 8.0, t = 2 * M_PI * it / 96;
        double l[3] = {rr * cos(t), rr * sin(t), -hb + 2 * hb * iz / 8.0}, w[3], q[3];
        for (int i = 0; i < 3; i++) w[i] = pb[i] + Rb[3 * i] * l[0] + Rb[3 * i + 1] * l[1] + Rb[3 * i + 2] * l[2];
        for (int i = 0; i < 3; i++)
          q[i] = Ra[i] * (w[0] - pa[0]) + Ra[3 + i] * (w[1] - pa[1]) + Ra[6 + i] * (w[2] - pa[2]);
        deepest = fmax(deepest, fmin(ra - hypot(q[0], q[1]), ha - fabs(q[2])));
      }
    }
  return deepest;
}

static double disk_overlap(const mjModel *m, const mjData *d, int g1, int g2) {
  return fmax(disk_inclusion(m, d, g1, g2), disk_inclusion(m, d, g2, g1));
}

/* Disk pairs of one instance at least min_apart disks apart: deepest
 * overlap over a run of T s, and how many of cusp's contacts joined two
 * disks of it. */
static double self_overlap_run(const char *scene, const char *self_contact, int min_apart, double T,
                               long *self_contacts, long *solves, long *converged) {
  const cusp_override ov[] = {{"arm", "self_contact", self_contact}};
  mjModel *m = load(scene, ov, 1);
  if (!m) return NAN;
  mjData *d = attach(m);
  int geom[64], nd = 0;
  char name[64];
  for (; nd < 64; nd++) {
    snprintf(name, sizeof name, "arm/disk%d", nd);
    if ((geom[nd] = mj_name2id(m, mjOBJ_GEOM, name)) < 0) break;
  }
  double deepest = 0;
  *self_contacts = 0;
  while (d->time < T) {
    mj_step(m, d);
    /* mj_step leaves the geoms at the step's start; cusp moved the mocap disks */
    mj_kinematics(m, d);
    for (int a = 0; a < nd; a++)
      for (int b = a + min_apart; b < nd; b++) deepest = fmax(deepest, disk_overlap(m, d, geom[a], geom[b]));
    const cusp_contact_report *c;
    int n = cusp_contacts(m, d, &c);
    for (int i = 0; i < n; i++) *self_contacts += c[i].other_instance == c[i].instance;
  }
  *solves = cusp_report(m, d)->solves;
  *converged = cusp_report(m, d)->converged;
  finish(m, d);
  return deepest;
}

/* Self-contact: a curling arm's distal disks land on its proximal ones. */
static void test_self_contact(void) {
  long nself_on, nself_off, solves, converged, s2, c2;
  double on = self_overlap_run(SCENE("coupling_self.xml"), "1", 2, 2, &nself_on, &solves, &converged);
  double off = self_overlap_run(SCENE("coupling_self.xml"), "0", 2, 2, &nself_off, &s2, &c2);
  printf("self-contact: deepest overlap of non-adjacent disks %.3g mm with it, %.3g mm without; %ld contact "
         "steps, %ld/%ld converged\n", 1e3 * on, 1e3 * off, nself_on, converged, solves);
  /* depth inside a disk is at most its half thickness: reaching 80 % of it
   * means the disks pass through each other */
  double half = 0.5 * 0.01;
  EXPECT(off > 0.8 * half, "the curl never brings disks together (overlap %g m without self-contact)", off);
  EXPECT(nself_off == 0, "self contacts reported with self_contact off");
  EXPECT(nself_on > 100, "only %ld self contacts with self_contact on", nself_on);
  EXPECT(on <= 2e-3, "disks overlap by %g m with self-contact on", on);
  EXPECT(solves > 0 && converged >= 0.99 * solves, "%ld/%ld self-contact solves converged", converged, solves);
}

/* Self-contact in a uniform curl (issue 19 item 5): one section curls
 * into a ring, and neighbouring disks meet first (self_curl.xml says why);
 * pair selection once skipped neighbours, and they passed through each
 * other by 3 mm of a 5 mm half thickness with self-contact on. */
static void test_self_curl(void) {
  long nself_on, nself_off, solves, converged, s2, c2;
  double on = self_overlap_run(SCENE("self_curl.xml"), "1", 1, 1, &nself_on, &solves, &converged);
  double off = self_overlap_run(SCENE("self_curl.xml"), "0", 1, 1, &nself_off, &s2, &c2);
  printf("self-contact curl: deepest overlap of any two disks %.3g mm with it, %.3g mm without; %ld contacts, "
         "%ld/%ld converged\n", 1e3 * on, 1e3 * off, nself_on, converged, solves);
  double half = 0.5 * 0.01;
  EXPECT(off > 0.5 * half, "self curl: the disks never meet without self-contact (%.3g mm)", 1e3 * off);
  EXPECT(on <= 0.1e-3, "self curl: disks overlap by %.3g mm with self-contact on", 1e3 * on);
  EXPECT(solves > 0 && converged >= 0.99 * solves, "self curl: %ld/%ld solves converged", converged, solves);
}

/* Two instances: one arm bends into the other, which only the contact moves. */
static void test_soft_soft(void) {
  mjModel *m = load(SCENE("coupling_soft_soft.xml"), NULL, 0);
  if (!m) return;
  mjData *d = attach(m);
  double rest[3], quat[4], tip[3], moved = 0, deepest = 0, normal_sum = 0;
  mj_forward(m, d);
  cusp_tip_pose(m, d, 1, rest, quat);
  long pair_steps = 0;
  while (d->time < 2) {
    mj_step(m, d);
    const cusp_contact_report *c;
    int n = cusp_contacts(m, d, &c), pair = 0;
    for (int i = 0; i < n; i++)
      if (c[i].other_instance >= 0 && c[i].other_instance != c[i].instance) {
        pair = 1;
        deepest = fmax(deepest, -c[i].gap);
        normal_sum += c[i].normal_impulse;
      }
    pair_steps += pair;
    cusp_tip_pose(m, d, 1, tip, quat);
    moved = fmax(moved, sqrt(pow(tip[0] - rest[0], 2) + pow(tip[1] - rest[1], 2) + pow(tip[2] - rest[2], 2)));
  }
  const cusp_step_report *r = cusp_report(m, d);
  printf("soft-soft: %ld steps in contact, normal impulse sum %.3g N s, passive arm's tip moved up to %.1f mm, "
         "penetration %.3g mm, %ld/%ld converged\n", pair_steps, normal_sum, 1e3 * moved, 1e3 * deepest,
         r->converged, r->solves);
  EXPECT(pair_steps > 300 && normal_sum > 0, "the arms barely touch: %ld steps, impulse %g", pair_steps,
         normal_sum);
  EXPECT(moved > 3e-3, "the passive arm does not feel the contact (tip moved %g m)", moved);
  EXPECT(deepest <= 1e-3, "arm-arm penetration %g m", deepest);
  EXPECT(r->solves > 0 && r->converged >= 0.99 * r->solves, "%ld/%ld converged", r->converged, r->solves);
  finish(m, d);
}

/* The cost of one read of the clock the step reports with (CLOCK_MONOTONIC):
 * a step's stages leave a few reads untimed between them, and on a virtual
 * machine without a fast clock a read takes microseconds. */
static double clock_read_us(void) {
  enum { READS = 1000 };
  struct timespec a, b, t;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (int i = 0; i < READS; i++) clock_gettime(CLOCK_MONOTONIC, &t);
  clock_gettime(CLOCK_MONOTONIC, &b);
  return ((b.tv_sec - a.tv_sec) * 1e6 + (b.tv_nsec - a.tv_nsec) * 1e-3) / READS;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Undamped, weightless, touching nothing: returns the energy lost over T at
 * step h and checks the stage timings of every step on the way. */
static double energy_loss(double h, double T, double *e_max, double *kin_max, int *timing_ok) {
  const cusp_override ov[] = {{"arm", "damping", "0"}, {"arm", "initial", "0.02 0 0 0 0 0 0 0 0"}};
  mjModel *m = load(SCENE("arm.xml"), ov, 2);
  if (!m) return NAN;
  for (int a = 0; a < 3; a++) m->opt.gravity[a] = 0;
  m->opt.timestep = h;
  mjData *d = attach(m);
  double kin, grav, el, e0;
  cusp_energy(m, d, 0, &kin, &grav, &el);
  e0 = kin + grav + el;
  *e_max = e0;
  *kin_max = 0;
  *timing_ok = 1;
  enum { MAX_STEPS = 1024 };
  double covered[MAX_STEPS], gaps_us = 8 * clock_read_us();
  int steps = 0;
  while (d->time < T - 0.5 * h) {
    mj_step(m, d);
    cusp_energy(m, d, 0, &kin, &grav, &el);
    *e_max = fmax(*e_max, kin + grav + el);
    *kin_max = fmax(*kin_max, kin);
    const cusp_step_report *r = cusp_report(m, d);
    /* disjoint intervals of one clock, so their sum never exceeds the total
     * whatever the machine does; the slack is the rounding of its
     * microsecond readings (about 1e10, so ulps of 1e-6) */
    double parts = r->dynamics_us + r->collision_us + r->assembly_us + r->conditioning_us + r->solve_us;
    if (!(r->dynamics_us > 0 && r->collision_us >= 0 && r->assembly_us >= 0 && r->conditioning_us >= 0 &&
          r->solve_us >= 0 && parts <= r->total_us + 1e-3)) {
      if (*timing_ok)
        printf("timings: dynamics %g collision %g assembly %g conditioning %g solve %g total %g us\n",
               r->dynamics_us, r->collision_us, r->assembly_us, r->conditioning_us, r->solve_us, r->total_us);
      *timing_ok = 0;
    }
    if (steps < MAX_STEPS && r->total_us > 0) covered[steps++] = (parts + gaps_us) / r->total_us;
  }
  /* That the stages cover the step is judged on the median step: a single
   * step preempted between two stages (seen on CI: 34 of 72 us) must not
   * fail it, while a stage left out of the report lowers every step (here the
   * median is 0.996, with the untimed clock reads counted as covered). */
  qsort(covered, steps, sizeof covered[0], cmp_double);
  double median = steps ? covered[steps / 2] : 0;
  if (!(median >= 0.9)) {
    printf("timings: the stages cover a median %.3f of the step's total over %d steps\n", median, steps);
    *timing_ok = 0;
  }
  cusp_energy(m, d, 0, &kin, &grav, &el);
  finish(m, d);
  return e0 - (kin + grav + el);
}

/* cusp_energy against the closed form; the integrator's energy error is of
 * first order in h; the step's stage timings add up. */
static void test_energy_and_timing(void) {
  const double k = 265, e0 = 0.02, e_start = 0.5 * k * e0 * e0;
  const cusp_override ov[] = {{"arm", "initial", "0.02 0 0 0 0 0 0 0 0"}};
  mjModel *m = load(SCENE("arm.xml"), ov, 1);
  if (!m) return;
  mjData *d = attach(m);
  double kin, grav, el;
  EXPECT(cusp_energy(m, d, 0, &kin, &grav, &el) == 0, "cusp_energy failed");
  /* one chamber stretched by e0, the chambers' springs in parallel */
  EXPECT(fabs(el - e_start) < 1e-12, "elastic energy %.15g J, one stretched chamber has %.15g", el, e_start);
  EXPECT(fabs(kin) < 1e-15, "kinetic energy %g J at rest", kin);
  EXPECT(cusp_energy(m, d, 7, &kin, &grav, &el) == -1, "cusp_energy accepts a bad instance");
  finish(m, d);

  double emax1, emax2, kmax1, kmax2;
  int ok1, ok2;
  double loss1 = energy_loss(0.0005, 0.1, &emax1, &kmax1, &ok1);
  double loss2 = energy_loss(0.00025, 0.1, &emax2, &kmax2, &ok2);
  printf("energy: undamped swing loses %.3g J (h = 0.5 ms) and %.3g J (h = 0.25 ms) of %.3g J in 0.1 s\n", loss1,
         loss2, e_start);
  EXPECT(kmax1 > 0.2 * e_start, "the stretched arm never swings (max kinetic %g J of %g)", kmax1, e_start);
  EXPECT(emax1 <= e_start * (1 + 1e-9) && emax2 <= e_start * (1 + 1e-9),
         "energy grows without damping: %.12g, %.12g > %.12g J", emax1, emax2, e_start);
  EXPECT(loss1 > 0 && loss2 > 0 && loss1 / loss2 > 1.6 && loss1 / loss2 < 2.5,
         "energy error not first order in h: loss %g J at 0.5 ms, %g J at 0.25 ms", loss1, loss2);
  EXPECT(ok1 && ok2, "stage timings negative, or not adding up to the step's total");
}

/* Inputs as MuJoCo users give them (issue 14, item 5). A force in
 * xfrc_applied of a disk body (the stock viewer's mouse perturbation) acts
 * on the arm exactly as cusp_apply_force at that disk's arc length; the
 * scene's schedule and a ctrl the user sets add (cusp never writes ctrl):
 * schedule + u equals the schedule shifted by u, to rounding. */
static void test_inputs(void) {
  mjModel *m = load(SCENE("coupling_push.xml"), NULL, 0);
  if (!m) return;
  mjData *a = attach(m), *b = attach(m);
  int disk = mj_name2id(m, mjOBJ_BODY, "arm/disk5"), inst = -1;
  double s_arc = -1, f[3] = {0.4, -0.3, 0.2}, t[3] = {0, 0.01, 0};
  EXPECT(disk >= 0 && cusp_disk_of_body(m, disk, &inst, &s_arc) == 0 && inst == 0 && s_arc > 0,
         "arm/disk5 is a soft disk (instance %d, s %g)", inst, s_arc);
  char err[256] = "";
  EXPECT(cusp_apply_force(m, b, 0, s_arc, f, t, err, sizeof err) == 0, "cusp_apply_force: %s", err);
  for (int k = 0; k < 3; k++) {
    a->xfrc_applied[6 * disk + k] = f[k];
    a->xfrc_applied[6 * disk + 3 + k] = t[k];
  }
  const double *qa, *qb;
  int n = cusp_soft_state(m, a, 0, &qa, NULL);
  cusp_soft_state(m, b, 0, &qb, NULL);
  for (int k = 0; k < 200; k++) {
    mj_step(m, a);
    mj_step(m, b);
  }
  double diff = 0, moved = 0;
  for (int i = 0; i < n; i++) {
    diff = fmax(diff, fabs(qa[i] - qb[i]));
    moved = fmax(moved, fabs(qa[i]));
  }
  /* to rounding: the arc length goes through a sum over sections and back */
  EXPECT(diff <= 1e-12 * moved && moved > 1e-4,
         "xfrc_applied on a disk = cusp_apply_force there (differs by %g, moved %g)", diff, moved);
  /* the force reaches the arm: the same run without it differs */
  mjData *c = attach(m);
  for (int k = 0; k < 200; k++) mj_step(m, c);
  const double *qc;
  cusp_soft_state(m, c, 0, &qc, NULL);
  double effect = 0;
  for (int i = 0; i < n; i++) effect = fmax(effect, fabs(qa[i] - qc[i]));
  EXPECT(effect > 1e-5, "the applied force moves the arm (%g)", effect);
  mj_deleteData(a);
  mj_deleteData(b);
  mj_deleteData(c);
  mj_deleteModel(m);

  /* schedule + user ctrl = the schedule shifted by u */
  const double u = 2.5;
  const cusp_override shifted[] = {
      {"arm", "schedule", "s2c2 0.3 2.5 1.3 8.5; s2c3 0.3 2.5 1.3 -3.5; s3c2 0.3 0 1.3 6; s3c3 0.3 0 1.3 -6"}};
  mjModel *m1 = load(SCENE("coupling_push.xml"), NULL, 0), *m2 = load(SCENE("coupling_push.xml"), shifted, 1);
  if (!m1 || !m2) return;
  mjData *d1 = attach(m1), *d2 = attach(m2);
  int a1 = mj_name2id(m1, mjOBJ_ACTUATOR, "arm/s2c2"), a2 = mj_name2id(m1, mjOBJ_ACTUATOR, "arm/s2c3");
  EXPECT(a1 >= 0 && a2 >= 0, "the chambers are actuators arm/s2c2, arm/s2c3");
  d1->ctrl[a1] = u;
  d1->ctrl[a2] = u;
  for (int k = 0; k < 800; k++) {
    mj_step(m1, d1);
    mj_step(m2, d2);
  }
  EXPECT(d1->ctrl[a1] == u && d1->ctrl[a2] == u, "cusp leaves the user's ctrl as set (%g %g)", d1->ctrl[a1],
         d1->ctrl[a2]);
  const double *q1, *q2;
  n = cusp_soft_state(m1, d1, 0, &q1, NULL);
  cusp_soft_state(m2, d2, 0, &q2, NULL);
  diff = 0;
  double scale = 0;
  for (int i = 0; i < n; i++) {
    diff = fmax(diff, fabs(q1[i] - q2[i]));
    scale = fmax(scale, fabs(q2[i]));
  }
  EXPECT(diff <= 1e-9 * fmax(scale, 1e-3), "schedule + ctrl %g = shifted schedule (differs by %g of %g)", u, diff,
         scale);
  finish(m1, d1);
  finish(m2, d2);
}

int main(void) {
  /* first: the other tests must not depend on what ran before them (a read of
   * MuJoCo's unset contact tangents once made them) */
  test_many();
  test_fall();
  test_stick();
  test_slide();
  test_box_on_arm();
  test_push();
  test_mount_load();
  test_squeeze();
  test_penalty_rest();
  test_penalty_press();
  test_viewer_semantics();
  test_inputs();
  test_live_keys();
  test_energy_and_timing();
  test_self_contact();
  test_self_curl();
  test_soft_soft();
  test_inside_solid();
  return test_report("coupling");
}

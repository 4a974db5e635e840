/* cusp-press: the QPCC (seed 002) as a one-step contact-aware force
 * controller (plan/press.h) in a MuJoCo scene: each step it solves the QPCC
 * of the arm's implicit step and the end disk's contact with the ball for the
 * chamber forces that press the ball with the commanded normal force.
 *   cusp-press [--scene mjcf/press_ball.xml] [--force F] [--seconds S] [--json]
 * Reports the normal force the simulation (cusp's lcp contact) gives over
 * the last quarter of the run (mean, min, max) against the command, and the
 * QPCC's own figures. Exit code 0 ran (the JSON says how close), 1 the
 * simulation or a QPCC failed, 2 bad arguments or scene. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli_util.h"
#include "press_loop.h"

static int usage(const char *msg) {
  if (msg) fprintf(stderr, "cusp-press: %s\n", msg);
  fprintf(stderr, "usage: cusp-press [--scene mjcf/press_ball.xml] [--force N] [--seconds s] [--json]\n");
  return 2;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

int main(int argc, char **argv) {
  const char *scene = "mjcf/press_ball.xml";
  double force = 2, seconds = 3;
  int json = 0;
  for (int i = 1; i < argc; i++) {
    int more = i + 1 < argc;
    if (!strcmp(argv[i], "--scene") && more) scene = argv[++i];
    else if (!strcmp(argv[i], "--force") && more) {
      if (parse_positive(argv[++i], &force) || force > 100) return usage("--force needs a number in (0, 100] N");
    } else if (!strcmp(argv[i], "--seconds") && more) {
      if (parse_positive(argv[++i], &seconds) || seconds > 1e4) return usage("--seconds needs a number in (0, 1e4]");
    } else if (!strcmp(argv[i], "--json")) json = 1;
    else {
      char msg[200];
      snprintf(msg, sizeof msg, "unknown or incomplete option '%s'", argv[i]);
      return usage(msg);
    }
  }
  char err[1024] = "";
  mjModel *m = cusp_load(scene, err, sizeof err);
  if (!m) { fprintf(stderr, "cusp-press: %s\n", err); return 2; }
  mjData *d = mj_makeData(m);
  if (!d) { fprintf(stderr, "cusp-press: mj_makeData: %s\n", cusp_last_error()); mj_deleteModel(m); return 2; }
  mj_forward(m, d);
  press_loop L;
  plan_press_params prm = plan_press_default_params();
  if (press_loop_init(&L, m, &prm, err, sizeof err)) {
    fprintf(stderr, "cusp-press: %s: %s\n", scene, err);
    mj_deleteData(d);
    mj_deleteModel(m);
    return 2;
  }
  int steps = (int)(seconds / m->opt.timestep + 0.5), tail = steps / 4, rc = 0, nt = 0;
  double sum = 0, lo = INFINITY, hi = -INFINITY, ctl_s = 0, ctl_max = 0, touch = -1;
  for (int k = 0; k < steps; k++) {
    double t0 = now_s();
    plan_qpcc_status st = press_loop_step(&L, m, d, force);
    double dt = now_s() - t0;
    if (getenv("CUSP_PRESS_TRACE")) {
      double tip[3], quat[4];
      cusp_tip_pose(m, d, 0, tip, quat);
      fprintf(stderr, "step %d: qpcc %s, fn %.4g (sim %.4g), tip z %.5f, u0 %.4g u6 %.4g, %.1f ms, %d QPs\n", k,
              plan_qpcc_status_name(st), L.fn_predicted, press_loop_normal_force(&L, m, d), tip[2], L.u[0],
              L.u[6], 1e3 * dt, L.visited);
    }
    ctl_s += dt;
    ctl_max = dt > ctl_max ? dt : ctl_max;
    double f = press_loop_normal_force(&L, m, d);
    if (touch < 0 && f > 0) touch = d->time;
    const cusp_step_report *r = cusp_report(m, d);
    if (!r || r->nan_events || r->message[0]) {
      fprintf(stderr, "cusp-press: step %d: %s\n", k, r ? r->message : cusp_last_error());
      rc = 1;
      break;
    }
    if (k >= steps - tail) {
      sum += f;
      nt++;
      lo = f < lo ? f : lo;
      hi = f > hi ? f : hi;
    }
  }
  if (L.qpcc_failures) rc = 1;
  double mean = nt ? sum / nt : NAN;
  if (json) {
    printf("{\"scene\": \"%s\", \"status\": \"%s\", \"command_N\": ", scene, rc ? "failed" : "ran");
    json_number(force);
    printf(", \"steady_normal_force_N\": {\"mean\": ");
    json_number(mean);
    printf(", \"min\": ");
    json_number(lo);
    printf(", \"max\": ");
    json_number(hi);
    printf(", \"window_s\": ");
    json_number(nt * m->opt.timestep);
    printf("}, \"relative_error\": ");
    json_number((mean - force) / force);
    printf(", \"qpcc_predicted_N\": ");
    json_number(L.fn_predicted);
    printf(", \"first_contact_s\": ");
    json_number(touch);
    printf(", \"qpcc_failures\": %d, \"control_ms\": {\"mean\": ", L.qpcc_failures);
    json_number(1e3 * ctl_s / steps);
    printf(", \"max\": ");
    json_number(1e3 * ctl_max);
    printf("}, \"steps\": %d}\n", steps);
  } else {
    printf("press %s with %.3g N: steady normal force %.4g N (min %.4g, max %.4g), QPCC %.4g N, "
           "%d QPCC failures, %.2f ms per control step\n", scene, force, mean, lo, hi, L.fn_predicted,
           L.qpcc_failures, 1e3 * ctl_s / steps);
  }
  plan_press_free(L.ctl);
  mj_deleteData(d);
  mj_deleteModel(m);
  return rc;
}

/* The QPCC (seed 002) as a one-step force controller (plan/press.h) in a
 * MuJoCo scene (mjcf/press_ball.xml): the arm falls onto a fixed ball and
 * presses it; the normal force the simulator's own contact solve (cusp's lcp
 * model, not the QPCC) reports must settle at the commanded value, for two
 * commands on either side of the force the arm's weight alone gives (ctrl =
 * 0, measured here too: the controller must move the force away from it). */
#include <string.h>

#include "plugin_testutil.h"
#include "press_loop.h"

#define SCENE CUSP_SOURCE_DIR "/mjcf/press_ball.xml"

static char failure[240];

/* Mean, min and max of the ball's normal force over the last `window` s of
 * `seconds` s: controlled (f_cmd > 0) or with ctrl = 0. */
static int run(double f_cmd, double seconds, double window, double *mean, double *lo, double *hi,
               int *failures, double *max_penetration) {
  mjModel *m = load(SCENE, NULL, 0);
  mjData *d = m ? attach(m) : NULL;
  if (!d) { finish(m, d); return -1; }
  press_loop L;
  char err[256];
  plan_press_params prm = plan_press_default_params();
  int rc = press_loop_init(&L, m, &prm, err, sizeof err);
  EXPECT(rc == 0, "press_loop_init: %s", err);
  if (rc) { finish(m, d); return -1; }
  int steps = (int)(seconds / m->opt.timestep + 0.5), from = steps - (int)(window / m->opt.timestep + 0.5), n = 0;
  double sum = 0;
  *lo = INFINITY;
  *hi = -INFINITY;
  *max_penetration = 0;
  for (int k = 0; k < steps; k++) {
    if (f_cmd > 0) press_loop_step(&L, m, d, f_cmd);
    else mj_step(m, d);
    const cusp_step_report *r = cusp_report(m, d);
    EXPECT(r && !r->nan_events && !r->message[0], "step %d: %s", k, r ? r->message : "no report");
    if (k >= from) {
      double f = press_loop_normal_force(&L, m, d);
      sum += f;
      n++;
      *lo = fmin(*lo, f);
      *hi = fmax(*hi, f);
      *max_penetration = fmax(*max_penetration, r ? r->max_penetration : 0);
    }
  }
  *mean = sum / n;
  *failures = L.qpcc_failures;
  snprintf(failure, sizeof failure, "%s", L.failure);
  plan_press_free(L.ctl);
  finish(m, d);
  return 0;
}

int main(void) {
  double mean, lo, hi, pen, rest;
  int failures;
  /* the arm's weight alone: it falls about 25 mm onto the ball and rests (settled by 2.5 s) */
  if (run(0, 3.0, 0.5, &rest, &lo, &hi, &failures, &pen)) return test_report("plan_press");
  printf("ctrl = 0: resting normal force %.4f N (%.4f .. %.4f)\n", rest, lo, hi);
  EXPECT(rest > 0.05, "the falling arm does not reach the ball (force %g)", rest);
  const double commands[2] = {0.25, 2.0};
  EXPECT(rest > 1.2 * commands[0] && rest < commands[1] / 1.2,
         "the commands %g and %g N should lie on either side of the resting force %g N", commands[0], commands[1], rest);
  for (int i = 0; i < 2; i++) {
    double f = commands[i];
    if (run(f, 1.2, 0.2, &mean, &lo, &hi, &failures, &pen)) break;
    printf("command %.4f N: steady normal force %.4f N (%.4f .. %.4f), %d QPCC failures, penetration %.2g m\n",
           f, mean, lo, hi, failures, pen);
    /* the controller and the simulator share the arm's model and step, so the
       force holds to the contact solve's tolerance; 1 % leaves room for the
       disk's contact point (the controller's geometry vs MuJoCo's collision) */
    EXPECT(fabs(mean - f) <= 0.01 * f, "command %g N: steady normal force %g N", f, mean);
    EXPECT(hi - lo <= 0.02 * f, "command %g N: the force varies %g .. %g N in steady state", f, lo, hi);
    EXPECT(failures == 0, "command %g N: %d QPCC solves failed (%s)", f, failures, failure);
  }
  return test_report("plan_press");
}

/* A material point held to a mocap handle that is moved on a circle: how
 * far the point trails the handle, against what the hold's rows predict.
 * MuJoCo's semantics: the pose a mocap body has when mj_step is called is
 * its pose at the step's start (d->time), so the handle is put at a(t)
 * before the step from t, and after it the point is compared with a(t + h),
 * where the handle is at the step's end. The rows take the handle's last
 * move over h as its velocity (plugin/ends.c) and remove a fraction alpha of
 * the remaining offset per step: e_{k+1} = (1 - alpha) e_k - (dp_{k+1} -
 * dp_k), so the point trails by |dp_{k+1} - dp_k| / alpha, the change of the
 * handle's move between steps (4 R sin^2(w h / 2) on a circle of radius R at
 * angular speed w: second order in h); a handle seen standing still (the
 * rows' velocity 0) left it v h / alpha behind. Once the handle stops and
 * the rod settles, the offset is gone. */
#ifndef CUSP_TEST_MOCAP_CIRCLE_H
#define CUSP_TEST_MOCAP_CIRCLE_H

#include <math.h>

#include "plugin_testutil.h"

/* Where the held point is now (world frame); q (may be NULL) its
 * orientation, w x y z. */
typedef void (*held_point_fn)(const mjModel *m, mjData *d, double p[3], double q[4]);

typedef struct {
  double speed;     /* the handle's speed on the circle, m/s */
  double expect;    /* the predicted steady lag, m */
  double still;     /* the steady lag of a handle seen standing still, v h / alpha, m */
  double lag;       /* the mean lag past the start-up transient, m */
  double lag_max;   /* the largest lag past the start-up transient, m */
  double orient;    /* the largest departure of the point's axes from the start's (see below) */
  double rest_off;  /* the offset 2 s after the handle stopped, m */
} mocap_circle_result;

/* The handle (mocap body 0, starting at its model position, on a circle of
 * radius 0.05 m in the x-z plane through that start, at half a turn a
 * second for 2 s), then 2 s at rest. orient is measured for a point whose
 * axes start with local z along world x (q = (cos 45°, 0, sin 45°, 0)):
 * the departure of q from that rotation's invariants. */
static inline mocap_circle_result mocap_circle_follow(const mjModel *m, mjData *d, held_point_fn point) {
  const double R = 0.05, w = 2 * M_PI * 0.5, h = m->opt.timestep, alpha = 0.2, T = 2.0;
  const double c0[3] = {d->mocap_pos[0], d->mocap_pos[1], d->mocap_pos[2] - R};
  mocap_circle_result r = {0};
  double lag_sum = 0;
  int nlag = 0;
  while (d->time < T - 0.5 * h) {
    /* the handle at its pose at the step's start, then the step */
    double a = w * d->time;
    d->mocap_pos[0] = c0[0] + R * sin(a);
    d->mocap_pos[2] = c0[2] + R * cos(a);
    mj_step(m, d);
    /* where the handle is at the step's end */
    double p[3], q[4], e = 0, end[3] = {c0[0] + R * sin(w * d->time), d->mocap_pos[1], c0[2] + R * cos(w * d->time)};
    point(m, d, p, q);
    for (int k = 0; k < 3; k++) e += (p[k] - end[k]) * (p[k] - end[k]);
    e = sqrt(e);
    if (d->time > 0.5) { /* past the start-up transient (the first moves from rest) */
      r.lag_max = fmax(r.lag_max, e);
      lag_sum += e;
      nlag++;
    }
    r.orient = fmax(r.orient, fabs(q[0] * q[0] + q[2] * q[2] - 1) + fabs(2 * (q[0] * q[2] + q[1] * q[3]) - 1));
  }
  r.speed = R * w;
  r.expect = 4 * R * sin(0.5 * w * h) * sin(0.5 * w * h) / alpha;
  r.still = r.speed * h / alpha;
  r.lag = nlag ? lag_sum / nlag : 0;
  step_until(m, d, T + 2);
  double p[3], q[4], e = 0;
  point(m, d, p, q);
  for (int k = 0; k < 3; k++) e += (p[k] - d->mocap_pos[k]) * (p[k] - d->mocap_pos[k]);
  r.rest_off = sqrt(e);
  return r;
}

#endif

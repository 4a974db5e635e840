/* The QPCC force controller (plan/press.h) closing the loop around a MuJoCo
 * scene: the arm is instance 0, the pressed body the geom `ball` (a sphere);
 * the controller's model is the CUSP preset arm on the scene's mount. Shared
 * by cusp-press and its test. */
#ifndef CUSP_PRESS_LOOP_H
#define CUSP_PRESS_LOOP_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cusp.h"
#include "press.h"
#include "presets.h"

typedef struct {
  plan_press *ctl;
  int seg;            /* the controller model's last segment and its end: the end disk */
  double s, disk_radius, disk_half_thickness;
  int ball_geom;
  double u[64];
  int qpcc_failures;  /* steps whose QPCC gave no control (the previous one was kept) */
  double fn_predicted;/* the last QPCC's normal force */
  int visited;        /* QPs the last QPCC visited */
  char failure[240];  /* the first failed QPCC's message */
} press_loop;

/* The controller for the scene m (its mount body `mount`). Returns 0, or -1 with a message. */
static inline int press_loop_init(press_loop *L, const mjModel *m, const plan_press_params *prm, char *error,
                                  int error_size) {
  memset(L, 0, sizeof *L);
  L->ball_geom = mj_name2id(m, mjOBJ_GEOM, "ball");
  int mount = mj_name2id(m, mjOBJ_BODY, "mount");
  if (L->ball_geom < 0 || m->geom_type[L->ball_geom] != mjGEOM_SPHERE || mount < 0 || m->nu > 64) {
    snprintf(error, error_size, "press: the scene needs a sphere geom 'ball', a body 'mount' and <= 64 actuators");
    return -1;
  }
  sb_cusp_arm arm;
  sb_preset_cusp_arm(&arm);
  arm.chain.seg = arm.seg;
  /* the preset hangs with local z down (R = diag(1, -1, -1)), as the scenes' mount (euler 180 0 0) */
  for (int i = 0; i < 3; i++) arm.chain.base.p[i] = m->body_pos[3 * mount + i];
  L->seg = arm.chain.nseg - 1;
  L->s = arm.seg[L->seg].length;
  L->disk_radius = 0.03;
  L->disk_half_thickness = 0.005;
  L->ctl = plan_press_create(&arm.chain, prm, error, error_size);
  if (!L->ctl) return -1;
  if (m->nu != arm.chain.nseg * 3) {
    snprintf(error, error_size, "press: the scene has %d actuators, the arm %d chambers", (int)m->nu, arm.chain.nseg * 3);
    plan_press_free(L->ctl);
    L->ctl = NULL;
    return -1;
  }
  return 0;
}

/* The contact of the end disk (a cylinder on the tip frame) with the ball:
 * the disk point closest to the ball's centre and the unit normal from the
 * ball towards it; returns the gap. */
static inline double press_loop_contact(const press_loop *L, const mjModel *m, const mjData *d, double point[3],
                                        double normal[3]) {
  double tip[3], quat[4], R[9];
  cusp_tip_pose(m, d, 0, tip, quat);
  mju_quat2Mat(R, quat);
  const double *c = d->geom_xpos + 3 * L->ball_geom;
  double w[3], wl[3];
  for (int i = 0; i < 3; i++) w[i] = c[i] - tip[i];
  for (int i = 0; i < 3; i++) wl[i] = R[0 * 3 + i] * w[0] + R[3 + i] * w[1] + R[6 + i] * w[2];
  double rho = sqrt(wl[0] * wl[0] + wl[1] * wl[1]), scale = rho > L->disk_radius ? L->disk_radius / rho : 1;
  double xl[3] = {wl[0] * scale, wl[1] * scale, fmax(-L->disk_half_thickness, fmin(wl[2], L->disk_half_thickness))};
  double dist = 0;
  for (int i = 0; i < 3; i++) {
    point[i] = tip[i] + R[3 * i] * xl[0] + R[3 * i + 1] * xl[1] + R[3 * i + 2] * xl[2];
    normal[i] = point[i] - c[i];
    dist += normal[i] * normal[i];
  }
  dist = sqrt(dist);
  for (int i = 0; i < 3; i++) normal[i] /= dist;
  return dist - m->geom_size[3 * L->ball_geom];
}

/* One controlled step: the QPCC's chamber forces into d->ctrl, then mj_step.
 * Returns the QPCC's status. */
static inline plan_qpcc_status press_loop_step(press_loop *L, const mjModel *m, mjData *d, double f_cmd) {
  const double *q, *v;
  cusp_soft_state(m, d, 0, &q, &v);
  double point[3], normal[3], fn = NAN;
  double gap = press_loop_contact(L, m, d, point, normal);
  plan_qpcc_info info;
  plan_qpcc_status st = plan_press_control(L->ctl, q, v, m->opt.timestep, L->seg, L->s, point, normal, gap, f_cmd,
                                           L->u, &fn, &info);
  L->visited = info.visited;
  if (st == PLAN_QPCC_SOLVED || st == PLAN_QPCC_MAX_QPS) L->fn_predicted = fn;
  else if (L->qpcc_failures++ == 0)
    snprintf(L->failure, sizeof L->failure, "t = %.4f s: %s: %.150s", d->time, plan_qpcc_status_name(st), info.message);
  for (int i = 0; i < m->nu; i++) d->ctrl[i] = L->u[i];
  mj_step(m, d);
  return st;
}

/* The normal force the ball pushes the arm with in the last step (N): the
 * reported contact impulses with the ball over the step. */
static inline double press_loop_normal_force(const press_loop *L, const mjModel *m, const mjData *d) {
  const cusp_contact_report *c;
  int nc = cusp_contacts(m, d, &c);
  double f = 0;
  for (int i = 0; i < nc; i++)
    if (c[i].other_geom == L->ball_geom) f += c[i].normal_impulse / m->opt.timestep;
  return f;
}

#endif

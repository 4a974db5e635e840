/* QPCC (seed 002) as a one-step contact-aware force controller of a soft arm:
 * each control step, the arm's next velocity v, its actuator forces u, and the
 * contact's normal force fn, friction ft (a pyramid of d directions) and slack
 * solve the QPCC of plan/qpcc.h built from the arm's linearly implicit step
 * (sb_step's, the simulator's own):
 *   M~ v = M~ v0 - h e(q0, v0) + h u + h (N fn + D ft)
 *   e = c(q0, v0) + K (q0 + h v0) + D v0,   M~ = M + h D + h^2 K
 * with N = J^T n and D = J^T [t_1 .. t_d] the contact's generalized normal and
 * friction directions at the contact point, the normal condition
 * N^T v + gap / h >= 0 (alpha gap / h for a penetration: the simulator's gap
 * stabilization, so a disk short of the ball is not held as if touching), and
 * the objective
 *   1/2 w_force (fn - f_cmd)^2 + 1/2 w_u |u|^2 + 1/2 w_v |v|^2.
 * Every coordinate is actuated (u = the generalized force, N for the
 * chambers of a pcc arm, as the plugin's actuators with gear 1). */
#ifndef PLAN_PRESS_H
#define PLAN_PRESS_H

#include "chain.h"
#include "qpcc.h"

typedef struct {
  double mu;               /* friction of the contact */
  int d;                   /* friction directions (3..16) */
  double w_force, w_u, w_v;/* objective weights */
  double u_lb, u_ub;       /* actuator bounds (every coordinate) */
  double stabilization;    /* fraction of a penetration removed per step (the plugin's key, 0.2) */
} plan_press_params;

/* mu 0.6, d 4, w_force 1, w_u 1e-4, w_v 1e-2, u in [-100, 100], stabilization 0.2. */
plan_press_params plan_press_default_params(void);

typedef struct plan_press plan_press;

/* The controller's own model of the arm (a copy of chain). NULL and a message on failure. */
plan_press *plan_press_create(const sb_chain_params *chain, const plan_press_params *prm, char *error,
                              int error_size);
void plan_press_free(plan_press *c);

/* One control step from (q, v) with step h: the contact acts at the world
 * point `point` of the arm's frame (seg, s) with unit normal `normal` (world,
 * the direction of the normal force on the arm), at signed distance gap (m). Writes u (n) and the QPCC's
 * predicted normal force; returns the QPCC status (PLAN_QPCC_SOLVED or
 * PLAN_QPCC_MAX_QPS: u is the best QP's; otherwise u is left unchanged). */
plan_qpcc_status plan_press_control(plan_press *c, const double *q, const double *v, double h, int seg,
                                    double s, const double point[3], const double normal[3], double gap,
                                    double f_cmd, double *u, double *fn, plan_qpcc_info *info);

#endif

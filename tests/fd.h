/* Finite-difference helpers for the kinematics tests. */
#ifndef CUSP_FD_H
#define CUSP_FD_H

#include "se3.h"

/* Body twist vee(g^-1 dg) from poses at +-eps: the reference every
 * Jacobian is checked against. */
static inline void fd_twist(const sb_pose *g, const sb_pose *gp, const sb_pose *gm, double eps, double t[6]) {
  double dR[9], W[9], dp[3];
  for (int i = 0; i < 9; i++) dR[i] = (gp->R[i] - gm->R[i]) / (2 * eps);
  sb_matmul_tn(3, 3, 3, g->R, dR, W);
  sb_vee3(W, t);
  for (int i = 0; i < 3; i++) dp[i] = (gp->p[i] - gm->p[i]) / (2 * eps);
  for (int i = 0; i < 3; i++) t[3 + i] = g->R[i] * dp[0] + g->R[3 + i] * dp[1] + g->R[6 + i] * dp[2];
}

#endif

/* The penalty contact model, the baseline paper 000 argues against: a
 * normal spring-damper on the penetration and regularized Coulomb friction.
 *
 * Linearly implicit, as the chain's own springs and dampers (chain.h) and
 * MuJoCo's soft constraints are: over a step of h the force on a contact is
 * taken at the end of the step, f(g + h u+_n, u+), linearized about the
 * step's start, f ~ F - H (u+ - u), with u the relative velocity of the
 * contact point. An explicit penalty force (the state at the step's start)
 * chatters at rest: the regularized friction is a viscous damper of
 * mu fn / slip_speed (thousands of N*s/m for a disk's load), far beyond
 * what an explicit step of a few grams of disk takes, and the spring
 * k = 1e4 N/m is too. F goes into the step's generalized force, h J^T H J
 * into its matrix M~, so the friction settles the contact instead of
 * overshooting it every step. */
#ifndef SB_PENALTY_H
#define SB_PENALTY_H

#include "chain.h"

typedef struct {
  double stiffness;    /* N/m on the penetration depth */
  double damping;      /* N*s/m on the approach speed */
  double friction;     /* Coulomb mu */
  double slip_speed;   /* m/s below which friction is proportional to the slip (regularization) */
} sb_penalty_params;

/* World force F on side 0 of a contact over a step of h (normal from side 1
 * into side 0, gap < 0 penetrating, v_rel = velocity of side 0 minus side 1
 * at the step's start), and H (3 x 3, row-major, symmetric positive
 * semidefinite): the force at the step's end is F - H (u+ - v_rel).
 *   normal    fn = k (-g - h vn) - c vn: the spring at the gap the step ends
 *             with (as K (q + h v) in chain.h), H_n = (h k + c) n n^T
 *   friction  -mu fn vt / sqrt(|vt|^2 + eps^2), H_t = its velocity gradient
 *             mu fn (P / s - vt vt^T / s^3), s = sqrt(|vt|^2 + eps^2),
 *             P the tangent projector; fn is held over the step (its
 *             coupling to the friction, not symmetric, stays explicit)
 * Zero force and H when the contact is separated (g >= 0) or separates
 * within the step (fn <= 0): the normal part never pulls at the step's
 * start. h = 0 gives the explicit force of the state at the step's start. */
void sb_penalty_force(const sb_penalty_params *p, const double normal[3], double gap, const double v_rel[3],
                      double h, double force[3], double H[9]);

/* Adds h J^T H J to w->Mt_add (the next sb_step_prepare puts it into M~),
 * J the world velocity Jacobian (3 x n) of the point at world offset r from
 * the frame origin of (seg, s), at the last kinematics; with seg_b >= 0, of
 * that point relative to the point r_b of (seg_b, s_b) of the same chain
 * (self-contact: J = J_a - J_b). The first call after a prepare starts the
 * sum from zero. Returns 0, or -1 as sb_add_world_wrench. */
int sb_penalty_add_implicit(const sb_model *m, sb_work *w, int seg, double s, const double r[3], int seg_b,
                            double s_b, const double r_b[3], const double H[9], double h);

#endif

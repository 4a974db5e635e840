/* The complementarity polish of the ball-rotation MPCC (mpcc.h): Scholtes'
 * relaxation a b <= eps leaves both sides of a pair as large as sqrt(eps)
 * (3e-4 at eps = 1e-7). After the last relaxation, each pair's active side
 * is identified (the smaller of a and b) and the tightened NLP (TNLP) is
 * solved: the same NLP with that side fixed to zero (a row side, gap, cone
 * or slip, as the equality a = 0; a variable side, fz, gamma or ft, by its
 * bounds; on a step whose fz is fixed, its friction as the LCP has it at
 * zero normal force: ft = 0, gamma the least its slip rows allow), the
 * other side kept >= 0 and the product rows dropped, started
 * from the relaxed primal-dual point (the product's multiplier moved onto
 * the fixed row: d(a b) = b da at a = 0). Its solution is feasible for the
 * MPCC itself: a b = 0 to IPOPT's row tolerance. The signs of the
 * multipliers of the pairs left with both sides zero (biactive) tell which
 * stationarity the point has (mpcc.h, plan_mpcc_stationarity). When the
 * TNLP does not converge (or its answer is worse in complementarity), the
 * relaxed plan is kept, untouched.
 *
 * Also here: the access to the NLP the polish needs, defined in mpcc.c. */
#ifndef PLAN_MPCC_POLISH_H
#define PLAN_MPCC_POLISH_H

#include "mpcc.h"

/* Polishes z (the dynamic stage's relaxed solution at prm.eps, Scholtes'
 * form) from the multipliers mult of its last solve (IPOPT's lambda, z_L,
 * z_U; NULL: cold multipliers). z is overwritten only when the polish is
 * accepted (out->status). Returns 0 accepted, -1 not. */
int plan_mpcc_polish(plan_mpcc *p, double *z, const double *mult, plan_mpcc_polish_result *out);

/* Name of a stationarity class ("strong", "M", "C", "weak", "unknown") and of a polish status. */
const char *plan_mpcc_stationarity_name(plan_mpcc_stationarity s);
const char *plan_mpcc_polish_status_name(plan_mpcc_polish_status s);

/* ---- the NLP, for the polish (mpcc.c) ---- */
const plan_mpcc_params *plan_mpcc_params_of(const plan_mpcc *p);
/* Sets the stage and writes the NLP's bounds at prm.eps: variables xl, xu
 * (plan_mpcc_nvars), rows gl, gu (plan_mpcc_nconstraints). */
void plan_mpcc_nlp_bounds(plan_mpcc *p, int dynamic, double *xl, double *xu, double *gl, double *gu);
/* The rows g of the stage last set, at z. */
void plan_mpcc_nlp_rows(plan_mpcc *p, const double *z, double *g);
/* The complementarity pairs of the stage last set (Scholtes' form): per
 * step, (gap, fz), (cone, gamma), (slip_j, ft_j): the row index of the side
 * a >= 0, of its product a b <= eps, and the variable index of b. Returns
 * their number (N (2 + d)), or -1 in the penalty form. */
int plan_mpcc_complementarity_pairs(const plan_mpcc *p, int *row_side, int *row_product, int *var_side);
/* The pyramid's direction j (0 .. d - 1) in the contact's tangent basis (t1, t2): D_j = c[0] t1 + c[1] t2,
 * so slip row j is c . nu_t + gamma with nu_t the slip velocity's components in that basis. */
void plan_mpcc_slip_direction(const plan_mpcc *p, int j, double c[2]);
/* r = grad f + J^T lambda at z (the stage last set). 0, or -1 out of memory. */
int plan_mpcc_lagrangian_gradient(plan_mpcc *p, const double *z, const double *lambda, double *r);
/* One IPOPT solve of the stage last set within the bounds given, with the
 * exact Hessian (L-BFGS when prm.exact_hessian is 0), warm-started from z and mult (m + 2 nvars: lambda, z_L,
 * z_U), both overwritten; the rows held to prm.eps / 10. Adds its
 * iterations, returns IPOPT's status. */
int plan_mpcc_nlp_solve(plan_mpcc *p, const double *xl, const double *xu, const double *gl, const double *gu,
                        int max_iter, double *z, double *mult, int *iterations, double *obj);

#endif

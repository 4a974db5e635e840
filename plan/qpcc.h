/* Contact-aware control as a QP with complementarity constraints (seed 002,
 * Tan, Turk & Liu's QPCC solver):
 *   min  G(v, u) = 1/2 [v;u]^T H [v;u] + g^T [v;u]  (+ a separable term on fn)
 *   s.t. u_lb <= u <= u_ub
 *        M v = f + A u + h (N fn + D ft)                      (dynamics)
 *        0 <= fn     _|_  N^T v + bn             >= 0         (per contact)
 *        0 <= ft     _|_  D^T v + E lambda       >= 0         (d directions)
 *        0 <= lambda _|_  mu fn - E^T ft         >= 0
 * v: n velocities after the step, u: nu controls, fn: nc normal forces, ft:
 * nc*d friction forces along a pyramid of d directions per contact, lambda: nc
 * slacks (the sliding speed). E sums a contact's d directions.
 *
 * The solver enumerates QPs, each fixing one side of every complementarity
 * pair (a "CCSpec": spec[k] = 1 makes the pair's variable 0 and its
 * condition >= 0; spec[k] = 0 makes the variable >= 0 and the condition 0),
 * best first from a priority queue, starting from static contact and
 * pivoting pairs whose both sides vanish at a QP's minimizer (seed 002,
 * Algorithms 1 and 2). */
#ifndef PLAN_QPCC_H
#define PLAN_QPCC_H

#include "qp.h"

typedef struct {
  int n, nu, nc, d;
  double h;              /* time step scaling the contact forces */
  const double *M;       /* n x n row-major */
  const double *A;       /* n x nu row-major (NULL when nu = 0) */
  const double *f;       /* n */
  const double *N;       /* n x nc row-major: column i = normal of contact i in v's coordinates */
  const double *D;       /* n x (nc*d) row-major: columns i*d .. i*d+d-1 = contact i's directions */
  const double *mu;      /* nc */
  const double *u_lb, *u_ub;  /* nu */
  const double *H;       /* (n+nu) x (n+nu) row-major, symmetric (NULL: zero) */
  const double *g;       /* n+nu (NULL: zero) */
  /* An objective on the normal forces as well, for force control (NULL: none):
   * + sum_i 1/2 Hfn[i] fn_i^2 + gfn[i] fn_i */
  const double *Hfn, *gfn; /* nc */
  /* Offsets of the normal conditions (NULL: zero): N^T v + bn >= 0. bn = gap / h
   * is the simulator's gap stabilization: a contact at a distance acts only
   * if it would close within the step. */
  const double *bn;        /* nc */
} plan_qpcc;

/* Variable layout of x: v | u | fn | ft | lambda. */
int plan_qpcc_nx(const plan_qpcc *p);
/* Number of complementarity pairs: nc (normal) + nc*d (friction) + nc (cone). */
int plan_qpcc_npairs(const plan_qpcc *p);

typedef struct {
  int max_qps;           /* visited QPs before stopping (default 64) */
  double zero_tol;       /* a side of a pair is "0" when |value| <= zero_tol (default 1e-6) */
} plan_qpcc_options;

plan_qpcc_options plan_qpcc_default_options(void);

typedef enum {
  PLAN_QPCC_SOLVED = 0,     /* the queue emptied: no pivot improves on the best QP */
  PLAN_QPCC_MAX_QPS,        /* max_qps QPs visited; best found so far returned */
  PLAN_QPCC_NO_FEASIBLE,    /* neither static contact nor the MLCP guess gave a feasible QP */
  PLAN_QPCC_BAD_INPUT
} plan_qpcc_status;

typedef struct {
  plan_qpcc_status status;
  double fval;           /* G at x */
  int visited;           /* QPs dequeued (iterations of Algorithm 1) */
  int solved_qps;        /* QPs solved */
  int best_iteration;    /* 1-based iteration of Algorithm 1 that found the returned x */
  int used_mlcp_guess;   /* static contact was infeasible; started from the MLCP with u = 0 */
  double complementarity;/* max over pairs of |min(variable, condition)| at x */
  char message[200];
} plan_qpcc_info;

/* x: plan_qpcc_nx entries, the minimizer on return (when a feasible QP was
 * found). first_x (may be NULL): the minimizer of the first QP, for checks.
 * spec (may be NULL): npairs entries, the CCSpec of the returned x. */
plan_qpcc_status plan_qpcc_solve(const plan_qpcc *p, const plan_qpcc_options *opt, double *x,
                                 double *first_x, unsigned char *spec, plan_qpcc_info *info);

/* The conditions (right-hand sides of the pairs, bn included) at x: npairs entries. */
void plan_qpcc_conditions(const plan_qpcc *p, const double *x, double *cond);

const char *plan_qpcc_status_name(plan_qpcc_status s);

#endif

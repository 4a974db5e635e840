/* A dense quadratic program solved by IPOPT (interior point, exact constant
 * Hessian):
 *   min  1/2 x^T H x + c^T x
 *   s.t. a_lo <= A x <= a_hi,   x_lo <= x <= x_hi
 * Bounds at or beyond +-PLAN_INF are infinite; a_lo = a_hi (x_lo = x_hi) is an
 * equality (a fixed variable). H may be indefinite: the answer is then a
 * local minimizer (a KKT point IPOPT accepts), the global one when H is
 * positive semidefinite. */
#ifndef PLAN_QP_H
#define PLAN_QP_H

#define PLAN_INF 1e20

typedef struct {
  int nx, m;
  const double *H;            /* nx x nx, row-major, symmetric (NULL: zero) */
  const double *c;            /* nx (NULL: zero) */
  const double *A;            /* m x nx, row-major */
  const double *a_lo, *a_hi;  /* m */
  const double *x_lo, *x_hi;  /* nx */
} plan_qp;

typedef enum {
  PLAN_QP_SOLVED = 0,     /* IPOPT: Solve_Succeeded (or Solved_To_Acceptable_Level) */
  PLAN_QP_INFEASIBLE,     /* IPOPT: Infeasible_Problem_Detected */
  PLAN_QP_FAILED,         /* any other IPOPT status (see ipopt_status) */
  PLAN_QP_BAD_INPUT       /* sizes, non-finite data, crossed bounds, out of memory */
} plan_qp_status;

typedef struct {
  plan_qp_status status;
  int ipopt_status;       /* IPOPT's ApplicationReturnStatus */
  int iterations;         /* IPOPT iterations */
  double fval;            /* objective at x */
  double tol;             /* IPOPT's tol (default 1e-10) */
  char message[200];      /* why not solved */
} plan_qp_info;

/* x: nx entries, the starting point on entry (NULL rows of A allowed: the
 * sparsity handed to IPOPT is that of A's non-zero entries), the answer on
 * return. Returns info->status. Quiet (IPOPT print_level 0). */
plan_qp_status plan_qp_solve(const plan_qp *qp, double *x, plan_qp_info *info);

const char *plan_qp_status_name(plan_qp_status s);

#endif

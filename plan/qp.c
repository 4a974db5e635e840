/* plan_qp_solve: the QP handed to IPOPT's C interface, with the constant
 * Jacobian and Hessian declared so (IPOPT evaluates them once). */
#include "qp.h"

#include <IpStdCInterface.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const plan_qp *qp;
  int njac, nhess;
  int *jrow, *jcol;   /* non-zeros of A */
  int *hrow, *hcol;   /* non-zeros of H's lower triangle */
  int iterations;
} qp_eval;

static Bool qp_f(Index n, Number *x, Bool new_x, Number *obj, UserDataPtr ud) {
  (void)new_x;
  const plan_qp *qp = ((qp_eval *)ud)->qp;
  double f = 0;
  for (int i = 0; i < n; i++) {
    if (qp->c) f += qp->c[i] * x[i];
    if (qp->H) {
      double hx = 0;
      for (int j = 0; j < n; j++) hx += qp->H[i * n + j] * x[j];
      f += 0.5 * x[i] * hx;
    }
  }
  *obj = f;
  return TRUE;
}

static Bool qp_grad(Index n, Number *x, Bool new_x, Number *g, UserDataPtr ud) {
  (void)new_x;
  const plan_qp *qp = ((qp_eval *)ud)->qp;
  for (int i = 0; i < n; i++) {
    double gi = qp->c ? qp->c[i] : 0;
    if (qp->H)
      for (int j = 0; j < n; j++) gi += qp->H[i * n + j] * x[j];
    g[i] = gi;
  }
  return TRUE;
}

static Bool qp_g(Index n, Number *x, Bool new_x, Index m, Number *g, UserDataPtr ud) {
  (void)new_x;
  const plan_qp *qp = ((qp_eval *)ud)->qp;
  for (int r = 0; r < m; r++) {
    double s = 0;
    for (int j = 0; j < n; j++) s += qp->A[r * n + j] * x[j];
    g[r] = s;
  }
  return TRUE;
}

static Bool qp_jac(Index n, Number *x, Bool new_x, Index m, Index nele, Index *irow, Index *jcol,
                   Number *val, UserDataPtr ud) {
  (void)x; (void)new_x; (void)m;
  const qp_eval *e = ud;
  for (int k = 0; k < nele; k++) {
    if (val) val[k] = e->qp->A[e->jrow[k] * n + e->jcol[k]];
    else { irow[k] = e->jrow[k]; jcol[k] = e->jcol[k]; }
  }
  return TRUE;
}

static Bool qp_hess(Index n, Number *x, Bool new_x, Number obj_factor, Index m, Number *lambda,
                    Bool new_lambda, Index nele, Index *irow, Index *jcol, Number *val,
                    UserDataPtr ud) {
  (void)x; (void)new_x; (void)m; (void)lambda; (void)new_lambda;
  const qp_eval *e = ud;
  for (int k = 0; k < nele; k++) {
    if (val) val[k] = obj_factor * e->qp->H[e->hrow[k] * n + e->hcol[k]];
    else { irow[k] = e->hrow[k]; jcol[k] = e->hcol[k]; }
  }
  return TRUE;
}

static Bool qp_progress(Index mode, Index iter, Number obj, Number inf_pr, Number inf_du, Number mu,
                        Number d_norm, Number reg, Number alpha_du, Number alpha_pr, Index ls,
                        UserDataPtr ud) {
  (void)mode; (void)obj; (void)inf_pr; (void)inf_du; (void)mu; (void)d_norm; (void)reg;
  (void)alpha_du; (void)alpha_pr; (void)ls;
  ((qp_eval *)ud)->iterations = iter;
  return TRUE;
}

const char *plan_qp_status_name(plan_qp_status s) {
  switch (s) {
    case PLAN_QP_SOLVED: return "solved";
    case PLAN_QP_INFEASIBLE: return "infeasible";
    case PLAN_QP_FAILED: return "failed";
    case PLAN_QP_BAD_INPUT: return "bad_input";
  }
  return "unknown";
}

static plan_qp_status qp_bad(plan_qp_info *info, const char *msg) {
  info->status = PLAN_QP_BAD_INPUT;
  snprintf(info->message, sizeof info->message, "%s", msg);
  return info->status;
}

/* First bad entry of the data, or NULL. */
static const char *qp_check(const plan_qp *qp, char *buf, size_t len) {
  int n = qp->nx, m = qp->m;
  if (n < 1 || m < 0) { snprintf(buf, len, "qp: nx = %d, m = %d (need nx >= 1, m >= 0)", n, m); return buf; }
  if (!qp->x_lo || !qp->x_hi || (m > 0 && (!qp->A || !qp->a_lo || !qp->a_hi))) return "qp: missing bounds or A";
  for (int i = 0; i < n * n && qp->H; i++)
    if (!isfinite(qp->H[i])) { snprintf(buf, len, "qp: H[%d] = %g is not finite", i, qp->H[i]); return buf; }
  for (int i = 0; i < n; i++) {
    if (qp->c && !isfinite(qp->c[i])) { snprintf(buf, len, "qp: c[%d] = %g is not finite", i, qp->c[i]); return buf; }
    if (isnan(qp->x_lo[i]) || isnan(qp->x_hi[i]) || qp->x_lo[i] > qp->x_hi[i]) {
      snprintf(buf, len, "qp: bounds of x[%d] = [%g, %g]", i, qp->x_lo[i], qp->x_hi[i]);
      return buf;
    }
  }
  for (int r = 0; r < m; r++) {
    for (int j = 0; j < n; j++)
      if (!isfinite(qp->A[r * n + j])) { snprintf(buf, len, "qp: A[%d][%d] is not finite", r, j); return buf; }
    if (isnan(qp->a_lo[r]) || isnan(qp->a_hi[r]) || qp->a_lo[r] > qp->a_hi[r]) {
      snprintf(buf, len, "qp: bounds of row %d = [%g, %g]", r, qp->a_lo[r], qp->a_hi[r]);
      return buf;
    }
  }
  return NULL;
}

plan_qp_status plan_qp_solve(const plan_qp *qp, double *x, plan_qp_info *info) {
  memset(info, 0, sizeof *info);
  info->tol = 1e-10;
  info->fval = NAN;
  char buf[200];
  const char *bad = qp_check(qp, buf, sizeof buf);
  if (bad) return qp_bad(info, bad);
  int n = qp->nx, m = qp->m;
  qp_eval e = {.qp = qp};
  for (int k = 0; k < m * n; k++) e.njac += qp->A[k] != 0;
  for (int i = 0; i < n && qp->H; i++)
    for (int j = 0; j <= i; j++) e.nhess += qp->H[i * n + j] != 0;
  e.jrow = malloc(sizeof(int) * (2 * e.njac + 2 * e.nhess + 2));
  if (!e.jrow) return qp_bad(info, "qp: out of memory");
  e.jcol = e.jrow + e.njac;
  e.hrow = e.jcol + e.njac;
  e.hcol = e.hrow + e.nhess;
  int k = 0;
  for (int r = 0; r < m; r++)
    for (int j = 0; j < n; j++)
      if (qp->A[r * n + j] != 0) { e.jrow[k] = r; e.jcol[k] = j; k++; }
  k = 0;
  for (int i = 0; i < n && qp->H; i++)
    for (int j = 0; j <= i; j++)
      if (qp->H[i * n + j] != 0) { e.hrow[k] = i; e.hcol[k] = j; k++; }

  IpoptProblem p = CreateIpoptProblem(n, (double *)qp->x_lo, (double *)qp->x_hi, m,
                                      (double *)qp->a_lo, (double *)qp->a_hi, e.njac, e.nhess, 0,
                                      qp_f, qp_g, qp_grad, qp_jac, qp_hess);
  if (!p) { free(e.jrow); return qp_bad(info, "qp: IPOPT refused the problem (CreateIpoptProblem)"); }
  AddIpoptIntOption(p, "print_level", 0);
  AddIpoptStrOption(p, "sb", "yes");  /* no banner */
  AddIpoptStrOption(p, "option_file_name", "");  /* never a stray ./ipopt.opt */
  AddIpoptNumOption(p, "tol", info->tol);
  AddIpoptNumOption(p, "nlp_lower_bound_inf", -0.5 * PLAN_INF);
  AddIpoptNumOption(p, "nlp_upper_bound_inf", 0.5 * PLAN_INF);
  AddIpoptStrOption(p, "hessian_constant", "yes");
  AddIpoptStrOption(p, "jac_c_constant", "yes");
  AddIpoptStrOption(p, "jac_d_constant", "yes");
  AddIpoptStrOption(p, "mu_strategy", "adaptive");
  /* a friction pyramid's opposite directions make dependent equality rows (t.v = 0 and -t.v = 0
     when a contact sticks): IPOPT removes them before it starts */
  AddIpoptStrOption(p, "dependency_detector", "mumps");
  AddIpoptStrOption(p, "dependency_detection_with_rhs", "yes");
  /* exact bounds: the default relaxation (1e-8 relative) lets a control exceed its bound */
  AddIpoptNumOption(p, "bound_relax_factor", 0);
  SetIntermediateCallback(p, qp_progress);
  double obj = NAN;
  enum ApplicationReturnStatus st = IpoptSolve(p, x, NULL, &obj, NULL, NULL, NULL, &e);
  FreeIpoptProblem(p);
  free(e.jrow);
  info->ipopt_status = st;
  info->iterations = e.iterations;
  info->fval = obj;
  if (st == Solve_Succeeded || st == Solved_To_Acceptable_Level) {
    info->status = PLAN_QP_SOLVED;
  } else if (st == Infeasible_Problem_Detected) {
    info->status = PLAN_QP_INFEASIBLE;
    snprintf(info->message, sizeof info->message, "qp: IPOPT found the constraints infeasible");
  } else {
    info->status = PLAN_QP_FAILED;
    snprintf(info->message, sizeof info->message, "qp: IPOPT ended with status %d", st);
  }
  return info->status;
}

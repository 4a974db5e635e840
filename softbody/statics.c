/* Static equilibrium under gravity, actuation and dead point loads: a damped
 * Newton iteration whose tangent is K plus central differences of the
 * (smooth) gravity and load terms. Not on the step path: it allocates. */
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "chain.h"
#include "sb_util.h"

void sb_static_residual(const sb_model *m, sb_work *w, const double *q, const double *tau,
                        const sb_point_load *loads, int nload, double *r) {
  int n = m->n;
  sb_kinematics(m, w, q, NULL);
  sb_bias(m, w, r);
  for (int i = 0; i < n; i++) {
    double s = tau ? -tau[i] : 0;
    for (int j = 0; j < n; j++) s += m->K[i * n + j] * q[j];
    r[i] += s;
  }
  double *Q = w->tmp2;
  memset(Q, 0, n * sizeof(double));
  for (int l = 0; l < nload; l++)
    sb_add_world_wrench(m, w, loads[l].seg, loads[l].s, loads[l].force, loads[l].moment, Q);
  for (int i = 0; i < n; i++) r[i] -= Q[i];
}

static double norm_inf(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s = fmax(s, fabs(x[i]));
  return s;
}

static double norm2(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += x[i] * x[i];
  return sqrt(s);
}

int sb_static_solve(const sb_model *m, sb_work *w, const double *tau, const sb_point_load *loads,
                    int nload, double *q, double tol, int max_iter, double *residual, char *error,
                    int error_size) {
  int n = m->n, rc = -1;
  for (int l = 0; l < nload; l++)
    if (loads[l].seg < 0 || loads[l].seg >= m->nseg) {
      sb_errorf(error, error_size, "load %d: segment %d does not exist", l, loads[l].seg);
      return -1;
    }
  double *r = malloc(sizeof(double) * n), *rp = malloc(sizeof(double) * n),
         *rm = malloc(sizeof(double) * n), *Jt = malloc(sizeof(double) * n * n),
         *dq = malloc(sizeof(double) * n), *qt = malloc(sizeof(double) * n);
  lapack_int *piv = malloc(sizeof(lapack_int) * n);
  sb_static_residual(m, w, q, tau, loads, nload, r);
  double rn = norm2(r, n);
  for (int it = 0; it < max_iter && norm_inf(r, n) > tol; it++) {
    /* Tangent, column-major: K + d(gravity - loads)/dq by central differences. */
    for (int j = 0; j < n; j++) {
      double hstep = 1e-6 * fmax(1.0, fabs(q[j])), qj = q[j];
      q[j] = qj + hstep;
      sb_static_residual(m, w, q, tau, loads, nload, rp);
      q[j] = qj - hstep;
      sb_static_residual(m, w, q, tau, loads, nload, rm);
      q[j] = qj;
      for (int i = 0; i < n; i++) Jt[j * n + i] = (rp[i] - rm[i]) / (2 * hstep);
    }
    for (int i = 0; i < n; i++) dq[i] = -r[i];
    if (LAPACKE_dgesv_work(LAPACK_COL_MAJOR, n, 1, Jt, n, piv, dq, n)) {
      sb_errorf(error, error_size, "static tangent is singular at iteration %d", it);
      goto done;
    }
    /* Backtracking on |r|. */
    double alpha = 1, rnt = 0;
    for (int ls = 0; ls < 30; ls++, alpha *= 0.5) {
      for (int i = 0; i < n; i++) qt[i] = q[i] + alpha * dq[i];
      sb_static_residual(m, w, qt, tau, loads, nload, rp);
      rnt = norm2(rp, n);
      if (rnt < rn || rnt <= tol) break;
    }
    memcpy(q, qt, n * sizeof(double));
    memcpy(r, rp, n * sizeof(double));
    rn = rnt;
  }
  if (residual) *residual = norm_inf(r, n);
  if (norm_inf(r, n) <= tol)
    rc = 0;
  else
    sb_errorf(error, error_size, "static solve did not converge: residual %g > %g after %d iterations", norm_inf(r, n), tol, max_iter);
done:
  free(r); free(rp); free(rm); free(Jt); free(dq); free(qt); free(piv);
  return rc;
}

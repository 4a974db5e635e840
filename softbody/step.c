/* Linearly implicit Euler, DESIGN §3. The elastic force is taken at the end
 * of the step, K (q + h v+), linearized exactly (it is linear in q); note the
 * h K v term, which the shorthand of DESIGN §3 leaves out and without which
 * the stiffness would act on q + h (v+ - v) instead of q+. */
#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <string.h>

#include "chain.h"
#include "sb_util.h"

/* M~ = U U^T with U upper triangular, into U (n x n, column-major; the
 * strict lower triangle is scratch). A point's Jacobian is zero past the
 * coordinates proximal to it, and U^-1 keeps those zeros where the usual
 * L^-1 (M~ = L L^T) fills them: the contact code's whitened columns
 * (sb_step_half_solve) then cost their own length squared, not n^2. LAPACK
 * factors only L L^T, so U comes from the reversed matrix: P M~ P = R R^T
 * (P reverses the order, R lower), U = P R P. Returns LAPACK's info. */
static int factor_upper(int n, const double *Mt, double *U) {
  for (int j = 0; j < n; j++)
    for (int i = j; i < n; i++) U[(size_t)j * n + i] = Mt[(size_t)(n - 1 - i) * n + (n - 1 - j)];
  int info = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', n, U, n);
  if (info) return info;
  /* U[i][j] = R[n-1-i][n-1-j]: R's strict lower triangle onto the strict
   * upper one (free: dpotrf left it unread), the diagonal reversed */
  for (int j = 0; j < n; j++)
    for (int i = j + 1; i < n; i++) U[(size_t)(n - 1 - j) * n + (n - 1 - i)] = U[(size_t)j * n + i];
  for (int i = 0; i < n / 2; i++) {
    double t = U[(size_t)i * n + i];
    U[(size_t)i * n + i] = U[(size_t)(n - 1 - i) * n + (n - 1 - i)];
    U[(size_t)(n - 1 - i) * n + (n - 1 - i)] = t;
  }
  return 0;
}

/* The part of M~ (n x n, symmetric) that dpotrf's lower factorization
 * reads, column j from row j down, into L. The strict upper triangle is
 * left as it is: neither dpotrf nor the solves on its factor read it. */
static void lower_triangle_of(int n, const double *Mt, double *L) {
  for (int j = 0; j < n; j++) memcpy(L + (size_t)j * n + j, Mt + (size_t)j * n + j, (size_t)(n - j) * sizeof(double));
}

int sb_step_prepare(const sb_model *m, const sb_state *s, sb_work *w, const double *tau, double h,
                    char *error, int error_size) {
  int n = m->n;
  w->step_ready = 0;
  /* implicit force terms are for this prepare only, whatever happens to it */
  const double *Mt_add = w->has_Mt_add ? w->Mt_add : NULL;
  w->has_Mt_add = 0;
  if (!(isfinite(h) && h > 0)) {
    sb_errorf(error, error_size, "time step must be positive and finite (got %g)", h);
    return -1;
  }
  for (int i = 0; i < n; i++)
    if (!isfinite(s->q[i]) || !isfinite(s->v[i]) || (tau && !isfinite(tau[i]))) {
      sb_errorf(error, error_size, "non-finite %s[%d] at t = %g", !isfinite(s->q[i]) ? "q" : !isfinite(s->v[i]) ? "v" : "tau", i, s->t);
      return -1;
    }
  for (int i = 0; i < 6; i++)
    if (!isfinite(m->base_twist[i]) || !isfinite(m->base_acc[i])) {
      sb_errorf(error, error_size, "non-finite base %s[%d] at t = %g", isfinite(m->base_twist[i]) ? "acc" : "twist", i, s->t);
      return -1;
    }
  sb_kinematics(m, w, s->q, s->v);
  sb_mass_matrix(m, w, w->M);
  sb_bias(m, w, w->c);
  for (int i = 0; i < n; i++) {
    double r = (tau ? tau[i] : 0) - w->c[i];
    const double *Ki = m->K + (size_t)i * n, *Di = m->D + (size_t)i * n, *Mi = w->M + (size_t)i * n;
    double *Mti = w->Mt + (size_t)i * n;
    /* K and D are zero outside the row's span: there M~ is M and r is
     * unchanged, the same numbers as the whole row's sums */
    memcpy(Mti, Mi, n * sizeof(double));
    for (int j = m->kd_lo[i]; j < m->kd_hi[i]; j++) {
      r -= Ki[j] * (s->q[j] + h * s->v[j]) + Di[j] * s->v[j];
      Mti[j] = Mi[j] + h * Di[j] + h * h * Ki[j];
    }
    if (Mt_add)
      for (int j = 0; j < n; j++) Mti[j] += Mt_add[(size_t)i * n + j];
    w->rhs[i] = h * r;
  }
  w->factor_upper = n >= SB_STEP_UPPER_MIN;
  if (!w->factor_upper) lower_triangle_of(n, w->Mt, w->L);
  if (w->factor_upper ? factor_upper(n, w->Mt, w->L) : LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', n, w->L, n)) {
    sb_errorf(error, error_size, "M + hD + h^2K is not positive definite at t = %g", s->t);
    return -1;
  }
  memcpy(w->tmp, w->rhs, n * sizeof(double));
  sb_step_solve_mt_many(m, w, w->tmp, 1, n);
  for (int i = 0; i < n; i++) {
    w->vstar[i] = s->v[i] + w->tmp[i];
    if (!isfinite(w->vstar[i])) {
      sb_errorf(error, error_size, "free velocity is not finite at t = %g (coordinate %d)", s->t, i);
      return -1;
    }
  }
  w->h = h;
  w->step_ready = 1;
  return 0;
}

void sb_step_half_solve(const sb_model *m, const sb_work *w, int head, double *x, int ncol, int ld) {
  if (head <= 0 || ncol <= 0) return;
  if (w->factor_upper)
    cblas_dtrsm(CblasColMajor, CblasLeft, CblasUpper, CblasNoTrans, CblasNonUnit, head, ncol, 1.0, w->L, m->n, x, ld);
  else
    cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, m->n, ncol, 1.0, w->L, m->n, x, ld);
}

void sb_step_solve_mt_many(const sb_model *m, const sb_work *w, double *x, int ncol, int ld) {
  int n = m->n;
  if (n == 0 || ncol == 0) return;
  if (!w->factor_upper) {
    LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'L', n, ncol, w->L, n, x, ld);
    return;
  }
  if (ncol == 1) {
    cblas_dtrsv(CblasColMajor, CblasUpper, CblasNoTrans, CblasNonUnit, n, w->L, n, x, 1);
    cblas_dtrsv(CblasColMajor, CblasUpper, CblasTrans, CblasNonUnit, n, w->L, n, x, 1);
    return;
  }
  cblas_dtrsm(CblasColMajor, CblasLeft, CblasUpper, CblasNoTrans, CblasNonUnit, n, ncol, 1.0, w->L, n, x, ld);
  cblas_dtrsm(CblasColMajor, CblasLeft, CblasUpper, CblasTrans, CblasNonUnit, n, ncol, 1.0, w->L, n, x, ld);
}

void sb_step_solve_mt(const sb_model *m, sb_work *w, const double *rhs, double *x) {
  if (x != rhs) memcpy(x, rhs, m->n * sizeof(double));
  sb_step_solve_mt_many(m, w, x, 1, m->n);
}

int sb_step_commit(const sb_model *m, sb_state *s, sb_work *w, const double *impulse, char *error,
                   int error_size) {
  int n = m->n;
  if (!w->step_ready) {
    sb_errorf(error, error_size, "sb_step_commit called without a successful sb_step_prepare");
    return -1;
  }
  double *vn = w->tmp, *dv = w->tmp2;
  memcpy(vn, w->vstar, n * sizeof(double));
  if (impulse) {
    sb_step_solve_mt(m, w, impulse, dv);
    for (int i = 0; i < n; i++) vn[i] += dv[i];
  }
  for (int i = 0; i < n; i++)
    if (!isfinite(vn[i]) || !isfinite(s->q[i] + w->h * vn[i])) {
      sb_errorf(error, error_size, "step produced a non-finite velocity at t = %g (coordinate %d); state kept", s->t, i);
      return -1;
    }
  /* The load on the base over this step, by Newton-Euler at the step's
   * start with the acceleration taken; the kinematics are redone only if a
   * query moved them since prepare. */
  for (int i = 0; i < n; i++) w->qacc[i] = (vn[i] - s->v[i]) / w->h;
  if (w->want_base_wrench) {
    if (!w->kin_valid || !w->vel_valid || memcmp(w->q, s->q, n * sizeof(double)) ||
        memcmp(w->v, s->v, n * sizeof(double)))
      sb_kinematics(m, w, s->q, s->v);
    sb_base_wrench(m, w, w->qacc, w->base_wrench);
  }
  for (int i = 0; i < n; i++) {
    s->v[i] = vn[i];
    s->q[i] += w->h * vn[i];
  }
  s->t += w->h;
  w->step_ready = 0;
  return 0;
}

int sb_step(const sb_model *m, sb_state *s, sb_work *w, const double *tau, double h,
            sb_impulse_fn hook, void *user, char *error, int error_size) {
  if (sb_step_prepare(m, s, w, tau, h, error, error_size)) return -1;
  const double *p = NULL;
  if (hook) {
    memset(w->rhs, 0, m->n * sizeof(double));
    if (hook(user, m, s, w, w->rhs)) {
      if (error && error_size > 0 && !error[0]) sb_errorf(error, error_size, "contact hook failed at t = %g", s->t);
      w->step_ready = 0;
      return -1;
    }
    p = w->rhs;
  }
  return sb_step_commit(m, s, w, p, error, error_size);
}

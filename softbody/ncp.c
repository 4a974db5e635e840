/* The smoothed NCP contact model's solver (ncp.h): Newton on the slack
 * variables of seed 003. */
#include "ncp.h"

#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lcp_internal.h" /* sb_lcp_now_us */

#define SB_NCP_ARMIJO 1e-4
#define SB_NCP_MIN_STEP 1e-10
#define SB_NCP_MAX_SMOOTHING 1e-2 /* m/s: the continuation goes no smoother */

struct sb_ncp_work {
  int max_c;
  double *J;          /* 3nc x 3nc Newton matrix */
  int *ipiv;
  double *u, *ut, *du, *F, *Ft, *lam, *lamt, *dl, *dv, *s, *ubest;
};

sb_ncp_options sb_ncp_default_options(void) {
  sb_ncp_options o;
  memset(&o, 0, sizeof o);
  o.smoothing = 1e-6;
  o.friction_smoothing = 1e-3;
  o.regularization = 1e-8;
  o.tol = 1e-9;
  o.max_iterations = 50;
  o.warm_start = 1;
  return o;
}

void sb_ncp_work_free(sb_ncp_work *w) {
  if (!w) return;
  void *ptr[] = {w->J, w->ipiv, w->u, w->ut, w->du, w->F, w->Ft, w->lam, w->lamt, w->dl, w->dv, w->s, w->ubest};
  for (size_t k = 0; k < sizeof ptr / sizeof ptr[0]; k++) free(ptr[k]);
  free(w);
}

sb_ncp_work *sb_ncp_work_create(int max_contacts) {
  if (max_contacts < 1 || max_contacts > 100000) return NULL;
  sb_ncp_work *w = calloc(1, sizeof *w);
  if (!w) return NULL;
  w->max_c = max_contacts;
  size_t m3 = 3 * (size_t)max_contacts;
  int ok = 1;
#define ALLOC(ptr, count) ok &= ((ptr) = calloc((count), sizeof *(ptr))) != NULL
  ALLOC(w->J, m3 * m3);
  ALLOC(w->ipiv, m3);
  ALLOC(w->u, m3);
  ALLOC(w->ut, m3);
  ALLOC(w->du, m3);
  ALLOC(w->F, m3);
  ALLOC(w->Ft, m3);
  ALLOC(w->lam, m3);
  ALLOC(w->lamt, m3);
  ALLOC(w->dl, 9 * (size_t)max_contacts);
  ALLOC(w->dv, 9 * (size_t)max_contacts);
  ALLOC(w->s, max_contacts);
  ALLOC(w->ubest, m3);
#undef ALLOC
  if (!ok) {
    sb_ncp_work_free(w);
    return NULL;
  }
  return w;
}

/* CHKS smooth max(x, 0) and its derivative. */
static double fe(double x, double e) { return 0.5 * (x + sqrt(x * x + 4 * e * e)); }
static double fe_d(double x, double e) {
  double q = sqrt(x * x + 4 * e * e);
  return q > 0 ? 0.5 * (1 + x / q) : 0.5 * (1 + (x > 0) - (x < 0));
}

/* One contact: impulse lam (3) and velocity v (3) of the slack u (3, frame
 * t1 t2 n, m/s), and if dl, dv are not NULL their derivatives (3 x 3,
 * column-major). */
static void contact_maps(const double u[3], double s, double mu, double e, double et, double lam[3], double v[3],
                         double *dl, double *dv) {
  double fn = fe(u[2], e), fnd = fe_d(u[2], e);
  double a = mu * fn, r = hypot(u[0], u[1]);
  double g, gd_t = 0, gd_over_r = 0; /* min_e(1, t), g'(t) t, g'(t) / r */
  double uh[2] = {0, 0};
  if (r > 0 && a / r < 1e300) {
    double t = a / r, q = sqrt((1 - t) * (1 - t) + 4 * et * et * t / (1 + t));
    g = 0.5 * (1 + t - q);
    double gd = 0.5 * (1 - (-(1 - t) + 2 * et * et / ((1 + t) * (1 + t))) / q);
    gd_t = gd * t;
    gd_over_r = gd / r;
    uh[0] = u[0] / r;
    uh[1] = u[1] / r;
  } else if (a > 0) {
    g = 1; /* r -> 0 at a positive bound: sticking, g'(t) t and g'(t) / r vanish */
  } else {
    g = 0; /* no load and no slip: t = 0 */
  }
  lam[0] = -g * u[0] / s;
  lam[1] = -g * u[1] / s;
  lam[2] = fn / s;
  v[0] = (1 - g) * u[0];
  v[1] = (1 - g) * u[1];
  v[2] = fe(-u[2], e);
  if (!dl) return;
  memset(dl, 0, 9 * sizeof(double));
  memset(dv, 0, 9 * sizeof(double));
  for (int p = 0; p < 2; p++) {
    for (int q = 0; q < 2; q++) {
      double P = gd_t * uh[p] * uh[q];
      dl[3 * q + p] = -((p == q) * g - P) / s;
      dv[3 * q + p] = (p == q) * (1 - g) + P;
    }
    /* t = mu f(u_n) / r: d/du_n of g u_t is g'(t) mu f'(u_n) uh */
    double c = gd_over_r * mu * fnd * r * (r > 0 ? 1 : 0);
    dl[6 + p] = -c * uh[p] / s;
    dv[6 + p] = -c * uh[p];
  }
  dl[8] = fnd / s;
  dv[8] = -fe_d(-u[2], e);
}

/* F = b + W lam(u) - v(u) and lam; returns |F|^2. Derivatives if wanted. */
static double residual(sb_ncp_work *w, int nc, const double *W, const double *b, const double *mu,
                       const sb_ncp_options *opt, const double *u, double *lam, double *F, int derivatives) {
  int m3 = 3 * nc;
  for (int i = 0; i < nc; i++)
    contact_maps(u + 3 * i, w->s[i], mu[i], opt->smoothing, opt->friction_smoothing, lam + 3 * i, F + 3 * i,
                 derivatives ? w->dl + 9 * i : NULL, derivatives ? w->dv + 9 * i : NULL);
  for (int k = 0; k < m3; k++) F[k] = b[k] - F[k] + opt->regularization * w->s[k / 3] * lam[k];
  cblas_dgemv(CblasColMajor, CblasNoTrans, m3, m3, 1.0, W, m3, lam, 1, 1.0, F, 1);
  return cblas_ddot(m3, F, 1, F, 1);
}

static double max_abs(int n, const double *x) {
  double m = 0;
  for (int k = 0; k < n; k++) m = fmax(m, fabs(x[k]));
  return m;
}

double sb_ncp_natural_residual(int nc, const double *W, const double *b, const double *mu,
                               const double *lambda) {
  int m3 = 3 * nc;
  double res = 0;
  for (int i = 0; i < nc; i++) {
    double v[3], s = (W[(size_t)(3 * i) * m3 + 3 * i] + W[(size_t)(3 * i + 1) * m3 + 3 * i + 1] +
                      W[(size_t)(3 * i + 2) * m3 + 3 * i + 2]) / 3;
    for (int a = 0; a < 3; a++) {
      v[a] = b[3 * i + a];
      for (int k = 0; k < m3; k++) v[a] += W[(size_t)k * m3 + 3 * i + a] * lambda[k];
    }
    const double *l = lambda + 3 * i;
    res = fmax(res, fabs(fmin(s * l[2], v[2])));
    double y[2] = {s * l[0] - v[0], s * l[1] - v[1]}, rad = fmax(mu[i] * s * l[2], 0), len = hypot(y[0], y[1]);
    if (len > rad) {
      y[0] *= rad / len;
      y[1] *= rad / len;
    }
    res = fmax(res, hypot(s * l[0] - y[0], s * l[1] - y[1]));
  }
  return res;
}

int sb_ncp_solve(sb_ncp_work *w, int nc, const double *W, const double *b, const double *mu, double *lambda,
                 const sb_ncp_options *opt, sb_ncp_info *info) {
  double t0 = sb_lcp_now_us();
  sb_ncp_options def = sb_ncp_default_options();
  if (!opt) opt = &def;
  sb_ncp_info local;
  if (!info) info = &local;
  memset(info, 0, sizeof *info);
  int m3 = 3 * nc;
  if (nc < 0 || nc > w->max_c || !(opt->smoothing > 0) || !(opt->friction_smoothing > 0) || !(opt->tol > 0) ||
      opt->max_iterations < 1 || !(opt->regularization >= 0) || !isfinite(opt->regularization)) {
    snprintf(info->message, sizeof info->message,
             "ncp: out of range: contacts %d (max %d), smoothing %g, friction smoothing %g, tol %g "
             "(> 0), iterations %d (>= 1), regularization %g (>= 0)", nc, w->max_c, opt->smoothing,
             opt->friction_smoothing, opt->tol, opt->max_iterations, opt->regularization);
    return -1;
  }
  for (size_t k = 0; k < (size_t)m3 * m3; k++)
    if (!isfinite(W[k])) {
      snprintf(info->message, sizeof info->message, "ncp: Delassus entry %d is %g", (int)k, W[k]);
      return -1;
    }
  for (int i = 0; i < nc; i++) {
    w->s[i] = (W[(size_t)(3 * i) * m3 + 3 * i] + W[(size_t)(3 * i + 1) * m3 + 3 * i + 1] +
               W[(size_t)(3 * i + 2) * m3 + 3 * i + 2]) / 3;
    int bad = !(w->s[i] > 0) || !(mu[i] >= 0) || !isfinite(mu[i]);
    for (int a = 0; a < 3; a++) bad |= !isfinite(b[3 * i + a]);
    if (bad) {
      snprintf(info->message, sizeof info->message,
               "ncp: contact %d: Delassus trace / 3 = %g must be > 0, friction %g >= 0, free velocity finite", i,
               w->s[i], mu[i]);
      return -1;
    }
  }
  if (nc == 0) {
    info->converged = 1;
    return 0;
  }
  /* The start: u from the last impulses and the velocities they give now,
   * u_n = s lambda_n - v_n and u_t = v_t - s lambda_t, the identities the
   * maps keep exactly (f_e(x) - f_e(-x) = x); from zero impulses that is the
   * free velocity, what stops one contact alone. */
  for (int k = 0; k < m3; k++)
    if (!opt->warm_start || !isfinite(lambda[k])) memset(lambda, 0, m3 * sizeof(double));
  for (int k = 0; k < m3; k++) w->F[k] = b[k] + opt->regularization * w->s[k / 3] * lambda[k];
  cblas_dgemv(CblasColMajor, CblasNoTrans, m3, m3, 1.0, W, m3, lambda, 1, 1.0, w->F, 1);
  for (int i = 0; i < nc; i++) {
    double *u = w->u + 3 * i, s = w->s[i], *v = w->F + 3 * i;
    const double *l = lambda + 3 * i;
    u[0] = v[0] - s * l[0];
    u[1] = v[1] - s * l[1];
    u[2] = s * l[2] - v[2];
  }
  /* Newton on the smoothing asked for; where its line search fails (the
   * smoothed kinks are too sharp for the start) the smoothing grows a
   * hundredfold and shrinks back by as much each time Newton converges
   * there (a smoothing continuation). */
  sb_ncp_options cur = *opt;
  double phi = residual(w, nc, W, b, mu, &cur, w->u, w->lam, w->F, 1), best = phi;
  memcpy(w->ubest, w->u, m3 * sizeof(double));
  for (int it = 0;;) {
    int at_target = cur.smoothing == opt->smoothing;
    info->residual = max_abs(m3, w->F);
    if (info->residual <= (at_target ? opt->tol : fmax(opt->tol, cur.smoothing))) {
      if (at_target) {
        info->converged = 1;
        break;
      }
      cur.smoothing = fmax(opt->smoothing, cur.smoothing * 1e-2);
      phi = residual(w, nc, W, b, mu, &cur, w->u, w->lam, w->F, 1);
      continue;
    }
    if (it >= opt->max_iterations) {
      snprintf(info->message, sizeof info->message, "ncp: %d Newton iterations, residual %.3g m/s > %.3g", it,
               info->residual, opt->tol);
      break;
    }
    /* J = (W + delta S) dlam/du - dv/du, block columns per contact */
    for (int j = 0; j < nc; j++) {
      const double *dl = w->dl + 9 * j, *dv = w->dv + 9 * j;
      for (int q = 0; q < 3; q++) {
        double *col = w->J + (size_t)(3 * j + q) * m3;
        for (int row = 0; row < m3; row++) {
          const double *wr = W + row; /* W(row, 3j + p) = wr[(3j + p) m3] */
          col[row] = wr[(size_t)(3 * j) * m3] * dl[3 * q] + wr[(size_t)(3 * j + 1) * m3] * dl[3 * q + 1] +
                     wr[(size_t)(3 * j + 2) * m3] * dl[3 * q + 2];
        }
        for (int p = 0; p < 3; p++) col[3 * j + p] += opt->regularization * w->s[j] * dl[3 * q + p] - dv[3 * q + p];
      }
    }
    for (int k = 0; k < m3; k++) w->du[k] = -w->F[k];
    if (LAPACKE_dgesv_work(LAPACK_COL_MAJOR, m3, 1, w->J, m3, w->ipiv, w->du, m3)) {
      snprintf(info->message, sizeof info->message, "ncp: singular Newton matrix at iteration %d", it);
      break;
    }
    /* backtracking on |F|^2 (the Newton direction descends it: slope -2 |F|^2) */
    double step = 1, phit = phi;
    for (; step >= SB_NCP_MIN_STEP; step *= 0.5) {
      for (int k = 0; k < m3; k++) w->ut[k] = w->u[k] + step * w->du[k];
      phit = residual(w, nc, W, b, mu, &cur, w->ut, w->lamt, w->Ft, 0);
      if (isfinite(phit) && phit <= (1 - 2 * SB_NCP_ARMIJO * step) * phi) break;
    }
    info->iterations++;
    it++;
    if (step < SB_NCP_MIN_STEP) {
      if (cur.smoothing < SB_NCP_MAX_SMOOTHING) {
        cur.smoothing = fmin(SB_NCP_MAX_SMOOTHING, cur.smoothing * 1e2);
        phi = residual(w, nc, W, b, mu, &cur, w->u, w->lam, w->F, 1);
        continue;
      }
      snprintf(info->message, sizeof info->message, "ncp: line search failed at iteration %d, residual %.3g m/s",
               it, info->residual);
      break;
    }
    memcpy(w->u, w->ut, m3 * sizeof(double));
    phi = residual(w, nc, W, b, mu, &cur, w->u, w->lam, w->F, 1);
    if (at_target && phi < best) {
      best = phi;
      memcpy(w->ubest, w->u, m3 * sizeof(double));
    }
  }
  if (!info->converged) {
    memcpy(w->u, w->ubest, m3 * sizeof(double));
    residual(w, nc, W, b, mu, opt, w->u, w->lam, w->F, 0);
    info->residual = max_abs(m3, w->F);
  }
  memcpy(lambda, w->lam, m3 * sizeof(double));
  info->natural_residual = sb_ncp_natural_residual(nc, W, b, mu, lambda);
  info->time_us = sb_lcp_now_us() - t0;
  return info->converged ? 0 : -1;
}

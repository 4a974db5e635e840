/* The SAP contact model's solver (sap.h): Newton with exact line search on
 * the convex cost in contact space. */
#include "sap.h"

#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lcp.h" /* sb_lcp_now_us */
#include "lcp_internal.h"

#define SB_SAP_HISTORY 256   /* costs kept for sb_sap_cost_history */
#define SB_SAP_ALPHA_MAX 1.5 /* the line search looks beyond the full step, as the SAP paper's */
#define SB_SAP_BETA 1.0      /* near-rigid threshold: a contact period of beta h at the stiffest */

struct sb_sap_work {
  int max_c;
  double *H;      /* 3nc x 3nc Newton matrix I + G W */
  int *ipiv;
  double *G;      /* 9 per contact */
  double *wx, *wg, *vc, *r, *dx, *wdx, *vt, *gt;
  double history[SB_SAP_HISTORY];
  int nhistory;
};

sb_sap_options sb_sap_default_options(void) {
  sb_sap_options o;
  memset(&o, 0, sizeof o);
  o.rel_tol = 1e-6;
  o.abs_tol = 1e-14;
  o.max_iterations = 100;
  o.max_line_search = 60;
  o.warm_start = 1;
  return o;
}

void sb_sap_work_free(sb_sap_work *w) {
  if (!w) return;
  void *ptr[] = {w->H, w->ipiv, w->G, w->wx, w->wg, w->vc, w->r, w->dx, w->wdx, w->vt, w->gt};
  for (size_t k = 0; k < sizeof ptr / sizeof ptr[0]; k++) free(ptr[k]);
  free(w);
}

sb_sap_work *sb_sap_work_create(int max_contacts) {
  if (max_contacts < 1 || max_contacts > 100000) return NULL;
  sb_sap_work *w = calloc(1, sizeof *w);
  if (!w) return NULL;
  w->max_c = max_contacts;
  size_t m3 = 3 * (size_t)max_contacts;
  int ok = 1;
#define ALLOC(ptr, count) ok &= ((ptr) = calloc((count), sizeof *(ptr))) != NULL
  ALLOC(w->H, m3 * m3);
  ALLOC(w->ipiv, m3);
  ALLOC(w->G, 3 * m3);
  ALLOC(w->wx, m3);
  ALLOC(w->wg, m3);
  ALLOC(w->vc, m3);
  ALLOC(w->r, m3);
  ALLOC(w->dx, m3);
  ALLOC(w->wdx, m3);
  ALLOC(w->vt, m3);
  ALLOC(w->gt, m3);
#undef ALLOC
  if (!ok) {
    sb_sap_work_free(w);
    return NULL;
  }
  return w;
}

void sb_sap_contact_params(double h, double k, double d, double sigma, double phi0, const double Wii[9],
                           double R[3], double vhat[3]) {
  double wi = (Wii[0] + Wii[4] + Wii[8]) / 3;
  double tau = d * fmax(-phi0, 0); /* Hunt-Crossley at the step's penetration */
  double rn = 1 / (h * k * (h + tau));
  double rigid = SB_SAP_BETA * SB_SAP_BETA / (4 * M_PI * M_PI) * wi;
  if (rn < rigid) { /* near-rigid: the stiffest contact the step resolves, critically damped */
    rn = rigid;
    tau = SB_SAP_BETA * h / M_PI;
  }
  R[0] = R[1] = sigma * wi;
  R[2] = rn;
  vhat[0] = vhat[1] = 0;
  vhat[2] = -phi0 / (h + tau);
}

int sb_sap_impulse(double mu, const double R[3], const double vhat[3], const double vc[3], double gamma[3],
                   double G[9]) {
  /* in the scaled coordinates R^1/2 gamma the projection is the Euclidean
   * one onto a cone of slope mut */
  double st = sqrt(R[0]), sn = sqrt(R[2]);
  double y[3], ys[3];
  for (int a = 0; a < 3; a++) y[a] = -(vc[a] - vhat[a]) / R[a];
  ys[0] = st * y[0];
  ys[1] = st * y[1];
  ys[2] = sn * y[2];
  double mut = mu * st / sn, rt = hypot(ys[0], ys[1]);
  if (rt <= mut * ys[2]) { /* stiction: gamma = y, G = R^-1 */
    memcpy(gamma, y, 3 * sizeof(double));
    if (G) {
      memset(G, 0, 9 * sizeof(double));
      G[0] = 1 / R[0];
      G[4] = 1 / R[1];
      G[8] = 1 / R[2];
    }
    return 0;
  }
  if (mut * rt <= -ys[2]) { /* separation */
    memset(gamma, 0, 3 * sizeof(double));
    if (G) memset(G, 0, 9 * sizeof(double));
    return 2;
  }
  /* sliding: onto the cone's surface */
  double c = 1 / (1 + mut * mut), gn = (ys[2] + mut * rt) * c, t[2] = {ys[0] / rt, ys[1] / rt};
  gamma[0] = mut * gn * t[0] / st;
  gamma[1] = mut * gn * t[1] / st;
  gamma[2] = gn / sn;
  if (G) {
    /* G = R^-1/2 P' R^-1/2 with P' the projection's derivative */
    double P[9], s[3] = {st, st, sn}, q = mut * gn / rt;
    for (int a = 0; a < 2; a++)
      for (int b = 0; b < 2; b++) P[3 * b + a] = mut * mut * c * t[a] * t[b] + q * ((a == b) - t[a] * t[b]);
    for (int a = 0; a < 2; a++) P[6 + a] = P[3 * a + 2] = mut * c * t[a];
    P[8] = c;
    for (int a = 0; a < 3; a++)
      for (int b = 0; b < 3; b++) G[3 * b + a] = P[3 * b + a] / (s[a] * s[b]);
  }
  return 1;
}

/* gamma (and G if wanted) at every contact for vc; returns sum 1/2 gamma^T R gamma. */
static double impulses(int nc, const double *R, const double *vhat, const double *mu, const double *vc,
                       double *gamma, double *G) {
  double e = 0;
  for (int i = 0; i < nc; i++) {
    const double *Ri = R + 3 * i;
    double *g = gamma + 3 * i;
    sb_sap_impulse(mu[i], Ri, vhat + 3 * i, vc + 3 * i, g, G ? G + 9 * i : NULL);
    e += 0.5 * (Ri[0] * g[0] * g[0] + Ri[1] * g[1] * g[1] + Ri[2] * g[2] * g[2]);
  }
  return e;
}

double sb_sap_cost(sb_sap_work *w, int nc, const double *W, const double *vfree, const double *R,
                   const double *vhat, const double *mu, const double *x) {
  int m3 = 3 * nc;
  memcpy(w->vt, vfree, m3 * sizeof(double));
  cblas_dgemv(CblasColMajor, CblasNoTrans, m3, m3, 1.0, W, m3, x, 1, 1.0, w->vt, 1);
  double xwx = 0;
  for (int k = 0; k < m3; k++) xwx += x[k] * (w->vt[k] - vfree[k]);
  return 0.5 * xwx + impulses(nc, R, vhat, mu, w->vt, w->gt, NULL);
}

const double *sb_sap_cost_history(const sb_sap_work *w, int *n) {
  *n = w->nhistory;
  return w->history;
}

/* dl/dalpha and d2l/dalpha2 along dx at alpha: with wdx = W dx,
 * l(alpha) = 1/2 (x + alpha dx)^T W (x + alpha dx) + l_R(vc + alpha wdx). */
static void line_derivatives(sb_sap_work *w, int nc, const double *R, const double *vhat, const double *mu,
                             double a, double b0, double alpha, double *d1, double *d2) {
  int m3 = 3 * nc;
  for (int k = 0; k < m3; k++) w->vt[k] = w->vc[k] + alpha * w->wdx[k];
  double dg = 0, curv = 0;
  for (int i = 0; i < nc; i++) {
    double G[9], *g = w->gt + 3 * i;
    const double *u = w->wdx + 3 * i;
    sb_sap_impulse(mu[i], R + 3 * i, vhat + 3 * i, w->vt + 3 * i, g, G);
    dg += u[0] * g[0] + u[1] * g[1] + u[2] * g[2];
    for (int p = 0; p < 3; p++)
      for (int q = 0; q < 3; q++) curv += u[p] * G[3 * q + p] * u[q];
  }
  *d1 = b0 + alpha * a - dg;
  *d2 = a + curv;
}

/* The minimiser of the convex l(alpha) over [0, SB_SAP_ALPHA_MAX] by
 * safeguarded Newton (bisection when Newton leaves the bracket). */
static double exact_line_search(sb_sap_work *w, int nc, const double *R, const double *vhat, const double *mu,
                                double a, double b0, double d0, int max_iter, int *iters) {
  double lo = 0, hi = SB_SAP_ALPHA_MAX, d1, d2;
  line_derivatives(w, nc, R, vhat, mu, a, b0, hi, &d1, &d2);
  (*iters)++;
  if (d1 <= 0) return hi; /* still descending at the far end */
  double alpha = 1, tol = 1e-12 * fabs(d0);
  for (int it = 0; it < max_iter; it++) {
    line_derivatives(w, nc, R, vhat, mu, a, b0, alpha, &d1, &d2);
    (*iters)++;
    if (fabs(d1) <= tol) break;
    if (d1 < 0)
      lo = alpha;
    else
      hi = alpha;
    double next = d2 > 0 ? alpha - d1 / d2 : -1;
    alpha = next > lo && next < hi ? next : 0.5 * (lo + hi);
    if (hi - lo <= 1e-15 * SB_SAP_ALPHA_MAX) break;
  }
  return alpha;
}

static int bad_input(sb_sap_info *info, const char *what, int i, double v) {
  snprintf(info->message, sizeof info->message, "sap: %s %d is %g", what, i, v);
  return -1;
}

int sb_sap_solve(sb_sap_work *w, int nc, const double *W, const double *vfree, const double *R,
                 const double *vhat, const double *mu, double *x, double *gamma, const sb_sap_options *opt,
                 sb_sap_info *info) {
  double t0 = sb_lcp_now_us();
  sb_sap_options def = sb_sap_default_options();
  if (!opt) opt = &def;
  sb_sap_info local;
  if (!info) info = &local;
  memset(info, 0, sizeof *info);
  w->nhistory = 0;
  int m3 = 3 * nc;
  if (nc < 0 || nc > w->max_c) {
    snprintf(info->message, sizeof info->message, "sap: %d contacts, the workspace holds %d", nc, w->max_c);
    return -1;
  }
  if (!(opt->rel_tol > 0) || !(opt->abs_tol >= 0) || opt->max_iterations < 1 || opt->max_line_search < 1) {
    snprintf(info->message, sizeof info->message,
             "sap: options out of range (rel_tol %g > 0, abs_tol %g >= 0, iterations %d, line search %d >= 1)",
             opt->rel_tol, opt->abs_tol, opt->max_iterations, opt->max_line_search);
    return -1;
  }
  for (int i = 0; i < nc; i++) {
    if (!(mu[i] >= 0) || !isfinite(mu[i])) return bad_input(info, "friction of contact", i, mu[i]);
    for (int a = 0; a < 3; a++) {
      if (!(R[3 * i + a] > 0) || !isfinite(R[3 * i + a])) return bad_input(info, "regularization entry", 3 * i + a, R[3 * i + a]);
      if (!isfinite(vhat[3 * i + a])) return bad_input(info, "vhat entry", 3 * i + a, vhat[3 * i + a]);
      if (!isfinite(vfree[3 * i + a])) return bad_input(info, "free velocity entry", 3 * i + a, vfree[3 * i + a]);
    }
  }
  for (size_t k = 0; k < (size_t)m3 * m3; k++)
    if (!isfinite(W[k])) return bad_input(info, "Delassus entry", (int)k, W[k]);
  for (int k = 0; k < m3; k++)
    if (!opt->warm_start || !isfinite(x[k])) x[k] = 0;
  if (nc == 0) {
    info->converged = 1;
    info->time_us = sb_lcp_now_us() - t0;
    return 0;
  }
  for (int it = 0;; it++) {
    /* cost, impulses and gradient at x */
    cblas_dgemv(CblasColMajor, CblasNoTrans, m3, m3, 1.0, W, m3, x, 1, 0.0, w->wx, 1);
    for (int k = 0; k < m3; k++) w->vc[k] = vfree[k] + w->wx[k];
    double lr = impulses(nc, R, vhat, mu, w->vc, gamma, w->G);
    double xwx = cblas_ddot(m3, x, 1, w->wx, 1);
    info->cost = 0.5 * xwx + lr;
    if (w->nhistory < SB_SAP_HISTORY) w->history[w->nhistory++] = info->cost;
    cblas_dgemv(CblasColMajor, CblasNoTrans, m3, m3, 1.0, W, m3, gamma, 1, 0.0, w->wg, 1);
    double gwg = cblas_ddot(m3, gamma, 1, w->wg, 1), rwr = 0;
    for (int k = 0; k < m3; k++) {
      w->r[k] = x[k] - gamma[k];
      rwr += w->r[k] * (w->wx[k] - w->wg[k]);
    }
    info->gradient = sqrt(fmax(rwr, 0));
    info->gradient_bound = opt->abs_tol + opt->rel_tol * sqrt(fmax(fmax(xwx, gwg), 0));
    if (info->gradient <= info->gradient_bound) {
      info->converged = 1;
      break;
    }
    if (it >= opt->max_iterations) {
      snprintf(info->message, sizeof info->message,
               "sap: %d Newton iterations without convergence (gradient %.3g, bound %.3g)", it, info->gradient,
               info->gradient_bound);
      break;
    }
    /* Newton: (I + G W) dx = -(x - gamma) */
    double *H = w->H;
    for (int i = 0; i < nc; i++) {
      const double *G = w->G + 9 * i;
      for (int col = 0; col < m3; col++) {
        const double *wc = W + (size_t)col * m3 + 3 * i;
        double *hc = H + (size_t)col * m3 + 3 * i;
        for (int a = 0; a < 3; a++) hc[a] = G[a] * wc[0] + G[3 + a] * wc[1] + G[6 + a] * wc[2];
      }
    }
    for (int k = 0; k < m3; k++) {
      H[(size_t)k * m3 + k] += 1;
      w->dx[k] = -w->r[k];
    }
    if (LAPACKE_dgesv_work(LAPACK_COL_MAJOR, m3, 1, H, m3, w->ipiv, w->dx, m3)) {
      snprintf(info->message, sizeof info->message, "sap: the Newton matrix is singular at iteration %d", it);
      break;
    }
    /* exact line search along dx */
    cblas_dgemv(CblasColMajor, CblasNoTrans, m3, m3, 1.0, W, m3, w->dx, 1, 0.0, w->wdx, 1);
    double a = cblas_ddot(m3, w->dx, 1, w->wdx, 1), b0 = cblas_ddot(m3, w->wdx, 1, x, 1);
    double d0 = cblas_ddot(m3, w->wdx, 1, w->r, 1); /* dl/dalpha at 0 = dx^T W (x - gamma) */
    if (!(d0 < 0)) {
      snprintf(info->message, sizeof info->message,
               "sap: no descent left at iteration %d (slope %.3g; gradient %.3g, bound %.3g)", it, d0,
               info->gradient, info->gradient_bound);
      break;
    }
    double alpha = exact_line_search(w, nc, R, vhat, mu, a, b0, d0, opt->max_line_search,
                                     &info->line_search_iterations);
    for (int k = 0; k < m3; k++) x[k] += alpha * w->dx[k];
    info->iterations++;
  }
  info->time_us = sb_lcp_now_us() - t0;
  return info->converged ? 0 : -1;
}

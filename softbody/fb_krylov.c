/* The Fischer-Burmeister solver's linear algebra on an unformed M (issue 15,
 * item 1): its Newton and Levenberg-Marquardt steps through the solve's
 * entries' products, never forming or factoring an n x n matrix.
 *
 * FB's Jacobian is H = diag(a) + diag(b) M. On the contact LCP M is
 * per-contact blocks plus E^T W E, W the kept contacts' Delassus blocks
 * (3nk x 3nk, 3nk <= the dofs), so H less its diagonal blocks has rank at
 * most 3nk: with those blocks as the preconditioner, GMRES ends in at most
 * 3nk + 1 iterations in exact arithmetic (unrestarted; a round here is at
 * most FB_KRYLOV_RESTART), each one product through W, the Krylov form of a
 * capacitance (Woodbury) solve. The least-squares step of
 * the trust region, (H^T H + mu I) d = -H^T Phi, is CGLS on the same
 * products and M^T's. Both are solved to a relative residual, not exactly:
 * FB's line search and trust-region test judge the step they get (an
 * inexact Newton step that reduces |H d + Phi| at all is a descent
 * direction of FB's merit function, whose gradient is H^T Phi).
 *
 * Scratch: the workspace's n x n buffers, which FB's dense form uses for H
 * and H^T H (layout below). */
#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <string.h>

#include "lcp_internal.h"

/* GMRES's restart length at most, and its iterations per solve at most in
 * restarts of it: a friction LCP's H less its blocks has rank up to 3nk,
 * which the restarts cover in a few rounds at the sizes the operator path
 * runs (hundreds of kept contacts). */
#define FB_KRYLOV_RESTART 120
#define FB_KRYLOV_ROUNDS 4
/* CGLS iterations per least-squares step at most, and its relative
 * tolerance on the normal equations' residual */
#define FB_CGLS_MAX_ITER 400
#define FB_CGLS_TOL 1e-10

typedef struct {
  int m;                       /* GMRES's restart length */
  double *V;                   /* (m + 1) x n: the Krylov basis */
  double *Hh, *cs, *sn, *s, *y; /* GMRES's Hessenberg ((m + 1) x m), rotations, residuals, coefficients */
  double *a, *b;               /* H's diagonal coefficients */
  double *u, *r, *p, *t, *x;   /* n each: preconditioned vectors, residuals, directions, products */
  double *blk;                 /* the preconditioner: H's diagonal blocks, LU-factored */
} fb_krylov;

static int block_count(const sb_lcp_work *wk, int n) { return wk->fric_block ? wk->fric_nblock : n; }
static int block_size(const sb_lcp_work *wk, int c) { return wk->fric_block ? wk->fric_block[c] : 1; }

/* The layout: the Krylov basis in wk->H, GMRES's small arrays in wk->HtH,
 * the blocks' factors in wk->LU, the vectors in wk->T. HtH and LU are the
 * factor cache's slot 0, which FB's pivot step refills at the start of each
 * iteration and leaves invalid (it does not reuse), and T is Lemke's
 * tableau, idle while FB runs; everything here is set again each iteration
 * (sb_fb_krylov_jacobian). 0 when a problem is too small for it (below 5
 * unknowns: FB then forms M, which costs nothing there). */
static int layout(const sb_lcp_work *wk, int n, fb_krylov *k) {
  int restart = wk->krylov_restart > 0 ? wk->krylov_restart : FB_KRYLOV_RESTART;
  int m = n - 3 < restart ? n - 3 : restart;
  if (m < 1 || n < 5) return 0;
  k->m = m;
  k->V = wk->H;
  double *p = wk->HtH;
  k->Hh = p, p += (size_t)(m + 1) * m;
  k->cs = p, p += m;
  k->sn = p, p += m;
  k->s = p, p += m + 1;
  k->y = p;
  p = wk->T;
  k->a = p, p += n;
  k->b = p, p += n;
  k->u = p, p += n;
  k->r = p, p += n;
  k->p = p, p += n;
  k->t = p, p += n;
  k->x = p;
  k->blk = wk->LU;
  return 1;
}

int sb_fb_krylov_usable(const sb_lcp_work *wk, int n) {
  const sb_lcp_entries *e = wk->entries;
  fb_krylov k;
  return e && e->apply && e->apply_transposed && layout(wk, n, &k);
}

/* y = H x = a x + b (M x); y must not alias x. */
static void h_apply(const sb_lcp_work *wk, const fb_krylov *k, int n, const double *x, double *y) {
  wk->entries->apply(wk->entries->ctx, x, NULL, y);
  for (int i = 0; i < n; i++) y[i] = k->a[i] * x[i] + k->b[i] * y[i];
}

/* y = H^T x = a x + M^T (b x), through k->t; y must not alias x or k->t. */
static void ht_apply(const sb_lcp_work *wk, const fb_krylov *k, int n, const double *x, double *y) {
  for (int i = 0; i < n; i++) k->t[i] = k->b[i] * x[i];
  wk->entries->apply_transposed(wk->entries->ctx, k->t, y);
  for (int i = 0; i < n; i++) y[i] += k->a[i] * x[i];
}

/* H's diagonal entry i, a_i + b_i M_ii. */
static double h_diag(const sb_lcp_work *wk, const fb_krylov *k, int i) {
  return k->a[i] + k->b[i] * wk->entries->entry(wk->entries->ctx, i, i);
}

/* Each block of H, diag(a) + diag(b) M_cc, LU-factored in place (pivots in
 * wk->ipiv); a block the LU paths' test finds singular is kept as its
 * diagonal instead, each zero of it replaced by 1:
 * the preconditioner only has to be regular, GMRES corrects the rest. Its
 * kind, 1 LU or 0 diagonal, in wk->rv_rowpos (idle while FB runs). */
static void precondition(const sb_lcp_work *wk, const fb_krylov *k, int n) {
  const sb_lcp_entries *e = wk->entries;
  int nb = block_count(wk, n), set[64], *kind = wk->rv_rowpos, *piv = wk->ipiv;
  double *B = k->blk;
  for (int c = 0, o = 0; c < nb; c++) {
    int bs = block_size(wk, c);
    for (int i = 0; i < bs; i++) set[i] = o + i;
    if (e->principal) {
      e->principal(e->ctx, set, bs, B);
    } else {
      for (int j = 0; j < bs; j++)
        for (int i = 0; i < bs; i++) B[(size_t)j * bs + i] = e->entry(e->ctx, o + i, o + j);
    }
    for (int j = 0; j < bs; j++) {
      for (int i = 0; i < bs; i++) B[(size_t)j * bs + i] *= k->b[o + i];
      B[(size_t)j * bs + j] += k->a[o + j];
    }
    int info = LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, bs, bs, B, bs, piv + o);
    double umin = INFINITY, umax = 0;
    sb_lu_pivot_range(bs, B, &umin, &umax);
    kind[c] = info == 0 && sb_lu_pivots_regular(umin, umax);
    if (!kind[c])
      for (int i = 0; i < bs; i++) {
        double d = h_diag(wk, k, o + i);
        B[(size_t)i * bs + i] = d != 0 && isfinite(d) ? d : 1;
      }
    B += (size_t)bs * bs;
    o += bs;
  }
}

/* x = P^-1 x, P the blocks of precondition. */
static void precondition_solve(const sb_lcp_work *wk, const fb_krylov *k, int n, double *x) {
  int nb = block_count(wk, n), *kind = wk->rv_rowpos;
  const double *B = k->blk;
  for (int c = 0, o = 0; c < nb; c++) {
    int bs = block_size(wk, c);
    if (kind[c]) {
      LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, 'N', bs, 1, B, bs, wk->ipiv + o, x + o, bs);
    } else {
      for (int i = 0; i < bs; i++) x[o + i] /= B[(size_t)i * bs + i];
    }
    B += (size_t)bs * bs;
    o += bs;
  }
}

void sb_fb_krylov_jacobian(sb_lcp_work *wk, int n, const double *z, const double *w) {
  fb_krylov k;
  layout(wk, n, &k);
  for (int i = 0; i < n; i++) sb_fb_coefficients(z[i], w[i], &k.a[i], &k.b[i]);
  precondition(wk, &k, n);
}

/* A Givens rotation (c, s) taking (f, g) to (hypot, 0). */
static void givens(double f, double g, double *c, double *s) {
  double h = hypot(f, g);
  if (h == 0) {
    *c = 1;
    *s = 0;
  } else {
    *c = f / h;
    *s = g / h;
  }
}

/* Krylov vector j + 1 from H P^-1 v_j, orthogonalized against v_0..v_j by
 * classical Gram-Schmidt twice (two BLAS-2 passes, as stable as modified
 * Gram-Schmidt); its coefficients into column j of the Hessenberg. Returns
 * its norm before normalizing (0: the space is invariant). */
static double arnoldi_step(const sb_lcp_work *wk, const fb_krylov *k, int n, int j) {
  double *vj = k->V + (size_t)j * n, *vn = vj + n, *h = k->Hh + (size_t)j * (k->m + 1), *c = k->y;
  memcpy(k->u, vj, (size_t)n * sizeof(double));
  precondition_solve(wk, k, n, k->u);
  h_apply(wk, k, n, k->u, vn);
  memset(h, 0, (size_t)(j + 2) * sizeof(double));
  for (int pass = 0; pass < 2; pass++) {
    cblas_dgemv(CblasColMajor, CblasTrans, n, j + 1, 1.0, k->V, n, vn, 1, 0.0, c, 1);
    cblas_dgemv(CblasColMajor, CblasNoTrans, n, j + 1, -1.0, k->V, n, c, 1, 1.0, vn, 1);
    for (int i = 0; i <= j; i++) h[i] += c[i];
  }
  double nv = cblas_dnrm2(n, vn, 1);
  h[j + 1] = nv;
  if (nv > 0) cblas_dscal(n, 1 / nv, vn, 1);
  return nv;
}

double sb_fb_krylov_newton(sb_lcp_work *wk, int n, const double *phi, double eta, double *d) {
  fb_krylov k;
  layout(wk, n, &k);
  int m = k.m, ld = m + 1;
  double *r = k.r;
  wk->krylov_newton++;
  wk->krylov_iterations = 0;
  for (int i = 0; i < n; i++) r[i] = -phi[i];
  double beta0 = cblas_dnrm2(n, r, 1), beta = beta0;
  memset(d, 0, (size_t)n * sizeof(double));
  if (!(beta0 > 0)) return 0;
  int rounds = wk->krylov_rounds > 0 ? wk->krylov_rounds : FB_KRYLOV_ROUNDS;
  for (int round = 0; round < rounds && beta > eta * beta0; round++) {
    memcpy(k.V, r, (size_t)n * sizeof(double));
    cblas_dscal(n, 1 / beta, k.V, 1);
    memset(k.s, 0, (size_t)(m + 1) * sizeof(double));
    k.s[0] = beta;
    int used = 0;
    for (int j = 0; j < m; j++) {
      double nv = arnoldi_step(wk, &k, n, j);
      wk->krylov_iterations++;
      double *h = k.Hh + (size_t)j * ld;
      for (int i = 0; i < j; i++) {
        double t = k.cs[i] * h[i] + k.sn[i] * h[i + 1];
        h[i + 1] = -k.sn[i] * h[i] + k.cs[i] * h[i + 1];
        h[i] = t;
      }
      givens(h[j], h[j + 1], &k.cs[j], &k.sn[j]);
      h[j] = k.cs[j] * h[j] + k.sn[j] * h[j + 1];
      h[j + 1] = 0;
      k.s[j + 1] = -k.sn[j] * k.s[j];
      k.s[j] = k.cs[j] * k.s[j];
      used = j + 1;
      if (!(fabs(k.s[j + 1]) > eta * beta0) || nv == 0 || h[j] == 0) break;
    }
    /* the round's step P^-1 V y, y from the leading nu x nu triangle; where the preconditioner is
     * nearly singular its rounding can leave the true residual above the estimate, even above
     * the round's start: then the step of half as many vectors, and so on, the first that
     * lowers it taken (a trial in k.x, its residual in k.p, so d is never undone by
     * subtraction) */
    int nu = used;
    while (nu > 0 && k.Hh[(size_t)(nu - 1) * ld + nu - 1] == 0) nu--;
    double nb = INFINITY;
    for (; nu > 0; nu /= 2) {
      memcpy(k.y, k.s, (size_t)nu * sizeof(double));
      cblas_dtrsv(CblasColMajor, CblasUpper, CblasNoTrans, CblasNonUnit, nu, k.Hh, ld, k.y, 1);
      cblas_dgemv(CblasColMajor, CblasNoTrans, n, nu, 1.0, k.V, n, k.y, 1, 0.0, k.u, 1);
      precondition_solve(wk, &k, n, k.u);
      for (int i = 0; i < n; i++) k.x[i] = d[i] + k.u[i];
      h_apply(wk, &k, n, k.x, k.p);
      for (int i = 0; i < n; i++) k.p[i] = -phi[i] - k.p[i];
      nb = cblas_dnrm2(n, k.p, 1);
      if (nb < beta) break;
    }
    if (!(nu > 0 && nb < beta)) break; /* no step of this round lowers the residual */
    memcpy(d, k.x, (size_t)n * sizeof(double));
    memcpy(r, k.p, (size_t)n * sizeof(double));
    /* a round that did not lower the residual by a tenth meets a (nearly) singular H, as near a
     * sticking answer, whose dependent rows no further round resolves: FB's least-squares step
     * is the one for that, so stop with this descent direction */
    int stagnant = nb > 0.9 * beta;
    beta = nb;
    if (stagnant) break;
  }
  return beta / beta0;
}

double sb_fb_krylov_hth_scale(sb_lcp_work *wk, int n) {
  fb_krylov k;
  layout(wk, n, &k);
  double dmax = 0;
  for (int i = 0; i < n; i++) {
    double h = h_diag(wk, &k, i);
    dmax = fmax(dmax, h * h);
  }
  return dmax;
}

void sb_fb_krylov_least_squares(sb_lcp_work *wk, int n, const double *phi, double mu, double *d) {
  fb_krylov k;
  layout(wk, n, &k);
  double *r = k.r, *s = k.x, *p = k.p, *q = k.u;
  wk->krylov_least_squares++;
  memset(d, 0, (size_t)n * sizeof(double));
  for (int i = 0; i < n; i++) r[i] = -phi[i];
  ht_apply(wk, &k, n, r, s);
  memcpy(p, s, (size_t)n * sizeof(double));
  double gamma = cblas_ddot(n, s, 1, s, 1), gamma0 = gamma;
  for (int it = 0; it < FB_CGLS_MAX_ITER && gamma > FB_CGLS_TOL * FB_CGLS_TOL * gamma0; it++) {
    h_apply(wk, &k, n, p, q);
    double delta = cblas_ddot(n, q, 1, q, 1) + mu * cblas_ddot(n, p, 1, p, 1);
    if (!(delta > 0)) break;
    double alpha = gamma / delta;
    cblas_daxpy(n, alpha, p, 1, d, 1);
    cblas_daxpy(n, -alpha, q, 1, r, 1);
    ht_apply(wk, &k, n, r, s);
    cblas_daxpy(n, -mu, d, 1, s, 1);
    double gnew = cblas_ddot(n, s, 1, s, 1);
    if (!isfinite(gnew)) break;
    for (int i = 0; i < n; i++) p[i] = s[i] + gnew / gamma * p[i];
    gamma = gnew;
  }
}

void sb_fb_krylov_model(sb_lcp_work *wk, int n, const double *phi, const double *d, double *out) {
  fb_krylov k;
  layout(wk, n, &k);
  h_apply(wk, &k, n, d, out);
  for (int i = 0; i < n; i++) out[i] += phi[i];
}

/* The kept contacts' LCP as an operator on their Delassus blocks (kept_op.h). */
#include "kept_op.h"

#include <cblas.h>
#include <float.h>
#include <math.h>

void sb_kept_op_directions(sb_kept_op *op, int r) {
  op->r = r;
  for (int k = 0; k < r; k++) {
    op->Dx[k] = cos(2 * M_PI * k / r);
    op->Dy[k] = sin(2 * M_PI * k / r);
  }
}

/* E z per contact: the (t1, t2, n) impulse of its fn and betas. */
static void frame_impulses(const sb_kept_op *op, const double *z, double *lam) {
  int r = op->r, bs = r + 2;
  for (int a = 0; a < op->nk; a++) {
    const double *za = z + a * bs;
    double lx = 0, ly = 0;
    for (int l = 0; l < r; l++) {
      lx += op->Dx[l] * za[1 + l];
      ly += op->Dy[l] * za[1 + l];
    }
    lam[3 * a] = lx;
    lam[3 * a + 1] = ly;
    lam[3 * a + 2] = za[0];
  }
}

/* op->v = W E z: the kept contacts' frame velocities of z's impulses, the
 * product A z and A^T z share. */
static void frame_velocities(const sb_kept_op *op, const double *z) {
  int m3k = 3 * op->nk;
  frame_impulses(op, z, op->lam);
  cblas_dgemv(CblasColMajor, CblasNoTrans, m3k, m3k, 1.0, op->W, m3k, op->lam, 1, 0.0, op->v, 1);
}

void sb_kept_op_apply(const sb_kept_op *op, const double *z, const double *b, double *y) {
  int nk = op->nk, r = op->r, bs = r + 2;
  if (nk == 0) return;
  frame_velocities(op, z);
  for (int a = 0; a < nk; a++) {
    const double *za = z + a * bs, *va = op->v + 3 * a;
    const double *ba = b ? b + a * bs : NULL;
    double *ya = y + a * bs, gamma = za[bs - 1], sum_beta = 0;
    ya[0] = (ba ? ba[0] : 0) + va[2];
    for (int k = 0; k < r; k++) {
      ya[1 + k] = (ba ? ba[1 + k] : 0) + (op->Dx[k] * va[0] + op->Dy[k] * va[1]) + gamma;
      sum_beta += za[1 + k];
    }
    ya[bs - 1] = (ba ? ba[bs - 1] : 0) + (op->mu[a] * za[0] - sum_beta);
  }
}

/* y = A^T z: W is symmetric, so E^T W E is its own transpose and only the
 * per-contact couplings C turn around (gamma's row into the betas' columns
 * and fn's, the betas' rows into gamma's). */
void sb_kept_op_apply_transposed(const sb_kept_op *op, const double *z, double *y) {
  int nk = op->nk, r = op->r, bs = r + 2;
  if (nk == 0) return;
  frame_velocities(op, z);
  for (int a = 0; a < nk; a++) {
    const double *za = z + a * bs, *va = op->v + 3 * a;
    double *ya = y + a * bs, gamma_row = za[bs - 1], sum_beta = 0;
    ya[0] = va[2] + op->mu[a] * gamma_row;
    for (int k = 0; k < r; k++) {
      ya[1 + k] = (op->Dx[k] * va[0] + op->Dy[k] * va[1]) - gamma_row;
      sum_beta += za[1 + k];
    }
    ya[bs - 1] = sum_beta;
  }
}

void sb_kept_op_abs_apply(const sb_kept_op *op, const double *z, double *y) {
  int nk = op->nk, r = op->r, bs = r + 2, m3k = 3 * nk;
  double *lam = op->lam, *v = op->v;
  for (int a = 0; a < nk; a++) {
    const double *za = z + a * bs;
    double lx = 0, ly = 0;
    for (int l = 0; l < r; l++) {
      lx += fabs(op->Dx[l]) * fabs(za[1 + l]);
      ly += fabs(op->Dy[l]) * fabs(za[1 + l]);
    }
    lam[3 * a] = lx;
    lam[3 * a + 1] = ly;
    lam[3 * a + 2] = fabs(za[0]);
  }
  for (int i = 0; i < m3k; i++) v[i] = 0;
  for (int j = 0; j < m3k; j++)
    for (int i = 0; i < m3k; i++) v[i] += fabs(op->W[(size_t)j * m3k + i]) * lam[j];
  for (int a = 0; a < nk; a++) {
    const double *za = z + a * bs, *va = v + 3 * a;
    double *ya = y + a * bs, sum_beta = 0;
    ya[0] = va[2];
    for (int k = 0; k < r; k++) {
      ya[1 + k] = fabs(op->Dx[k]) * va[0] + fabs(op->Dy[k]) * va[1] + fabs(za[bs - 1]);
      sum_beta += fabs(za[1 + k]);
    }
    ya[bs - 1] = op->mu[a] * fabs(za[0]) + sum_beta;
  }
}

/* A's entries by the kind of their column (contact c, component kj: 0 fn,
 * 1..r the betas, r + 1 gamma) at row (contact a, component ki), with the
 * column's W columns (W1, W2: tangents, Wn: normal) given: the expressions
 * of the assembly (sb_kept_op_block_column), operand for operand, so the
 * same doubles. Each kind's rows of one contact (ta = 3 a) have their own
 * expression: the entries dispatch on ki, a whole column's loops call them
 * directly, without a branch per entry. */
static inline double fn_normal_row(const double *Wn, int ta) { return Wn[ta + 2]; }

static inline double fn_beta_row(const sb_kept_op *op, int k, const double *Wn, int ta) {
  return op->Dx[k] * Wn[ta] + op->Dy[k] * Wn[ta + 1];
}

static inline double beta_normal_row(const double *W1, const double *W2, int ta, double dxl, double dyl) {
  return W1[ta + 2] * dxl + W2[ta + 2] * dyl;
}

static inline double beta_beta_row(const sb_kept_op *op, int k, const double *W1, const double *W2, int ta,
                                   double dxl, double dyl) {
  double wx = op->Dx[k] * W1[ta] + op->Dy[k] * W1[ta + 1];
  double wy = op->Dx[k] * W2[ta] + op->Dy[k] * W2[ta + 1];
  return wx * dxl + wy * dyl;
}

static inline double gamma_column_entry(int r, int a, int ki, int c) {
  return a == c && ki > 0 && ki <= r ? 1 : 0; /* into the own betas */
}

static inline double fn_column_entry(const sb_kept_op *op, int a, int ki, int c, const double *Wn) {
  if (ki == op->r + 1) return a == c ? op->mu[a] : 0; /* gamma's row: mu fn */
  if (ki == 0) return fn_normal_row(Wn, 3 * a);
  return fn_beta_row(op, ki - 1, Wn, 3 * a);
}

static inline double beta_column_entry(const sb_kept_op *op, int a, int ki, int c, const double *W1,
                                       const double *W2, double dxl, double dyl) {
  if (ki == op->r + 1) return a == c ? -1 : 0; /* gamma's row: minus the betas */
  if (ki == 0) return beta_normal_row(W1, W2, 3 * a, dxl, dyl);
  return beta_beta_row(op, ki - 1, W1, W2, 3 * a, dxl, dyl);
}

/* W's three columns of contact c (tangent 1; tangent 2 and the normal follow). */
static inline const double *w_columns(const sb_kept_op *op, int c) {
  size_t m3k = 3 * (size_t)op->nk;
  return op->W + 3 * (size_t)c * m3k;
}

double sb_kept_op_entry(const sb_kept_op *op, int i, int j) {
  int r = op->r, bs = r + 2, a = i / bs, ki = i % bs, c = j / bs, kj = j % bs;
  size_t m3k = 3 * (size_t)op->nk;
  const double *W1 = w_columns(op, c);
  if (kj == bs - 1) return gamma_column_entry(r, a, ki, c);
  if (kj == 0) return fn_column_entry(op, a, ki, c, W1 + 2 * m3k);
  return beta_column_entry(op, a, ki, c, W1, W1 + m3k, op->Dx[kj - 1], op->Dy[kj - 1]);
}

/* Contact by contact, each kind's rows by their own expression; gamma's
 * row is zero but at the column's own contact. */
void sb_kept_op_column(const sb_kept_op *op, int j, double *out) {
  int r = op->r, bs = r + 2, nk = op->nk, c = j / bs, kj = j % bs, oc = c * bs;
  size_t m3k = 3 * (size_t)nk;
  const double *W1 = w_columns(op, c), *W2 = W1 + m3k, *Wn = W2 + m3k;
  if (kj == bs - 1) {
    for (int i = 0; i < nk * bs; i++) out[i] = 0;
    for (int k = 1; k <= r; k++) out[oc + k] = gamma_column_entry(r, c, k, c);
    return;
  }
  if (kj == 0) {
    for (int a = 0; a < nk; a++) {
      double *o = out + a * bs;
      o[0] = fn_normal_row(Wn, 3 * a);
      for (int k = 0; k < r; k++) o[1 + k] = fn_beta_row(op, k, Wn, 3 * a);
      o[bs - 1] = 0;
    }
    out[oc + bs - 1] = fn_column_entry(op, c, bs - 1, c, Wn);
    return;
  }
  double dxl = op->Dx[kj - 1], dyl = op->Dy[kj - 1];
  for (int a = 0; a < nk; a++) {
    double *o = out + a * bs;
    o[0] = beta_normal_row(W1, W2, 3 * a, dxl, dyl);
    for (int k = 0; k < r; k++) o[1 + k] = beta_beta_row(op, k, W1, W2, 3 * a, dxl, dyl);
    o[bs - 1] = 0;
  }
  out[oc + bs - 1] = beta_column_entry(op, c, bs - 1, c, W1, W2, dxl, dyl);
}

/* Stage 3's eps at the diagonal entry (j, j), or 0 there. */
static double tikhonov_at(const sb_kept_op_conditioned *s, int j) {
  return s->eps > 0 && (!s->mask || s->mask[j]) ? s->eps : 0;
}

double sb_kept_op_conditioned_entry(const void *ctx, int i, int j) {
  const sb_kept_op_conditioned *s = ctx;
  double a = sb_kept_op_entry(s->op, i, j);
  if (s->diag && i == j) a += s->diag[j];
  double v = a * s->dr[i] * s->dc[j];
  if (i == j && tikhonov_at(s, j) > 0) v += s->eps;
  return v;
}

void sb_kept_op_conditioned_column(const void *ctx, int j, double *out) {
  const sb_kept_op_conditioned *s = ctx;
  int n = sb_kept_op_size(s->op);
  sb_kept_op_column(s->op, j, out);
  if (s->diag) out[j] += s->diag[j];
  for (int i = 0; i < n; i++) out[i] = out[i] * s->dr[i] * s->dc[j];
  if (tikhonov_at(s, j) > 0) out[j] += s->eps;
}

/* Row i's contact and component along a set: ra and base = ra (r + 2)
 * follow an ascending set without a division each. Returns the component. */
static inline int row_component(int i, int bs, int *ra, int *base) {
  if (i < *base) { /* not ascending here */
    *ra = i / bs;
    *base = *ra * bs;
  }
  while (i >= *base + bs) {
    ++*ra;
    *base += bs;
  }
  return i - *base;
}

/* The column's contact and kind decided once, the rows' contacts followed
 * along them (row_component). */
void sb_kept_op_conditioned_column_rows(const void *ctx, int j, const int *rows, int nr, double *out) {
  const sb_kept_op_conditioned *s = ctx;
  const sb_kept_op *op = s->op;
  const double *dr = s->dr;
  int r = op->r, bs = r + 2, c = j / bs, kj = j % bs, ra = 0, base = 0;
  size_t m3k = 3 * (size_t)op->nk;
  const double *W1 = w_columns(op, c), *W2 = W1 + m3k, *Wn = W2 + m3k;
  double dcj = s->dc[j];
  if (kj == bs - 1) {
    for (int a = 0; a < nr; a++) {
      int i = rows[a], ki = row_component(i, bs, &ra, &base);
      out[a] = gamma_column_entry(r, ra, ki, c) * dr[i] * dcj;
    }
  } else if (kj == 0) {
    for (int a = 0; a < nr; a++) {
      int i = rows[a], ki = row_component(i, bs, &ra, &base);
      out[a] = fn_column_entry(op, ra, ki, c, Wn) * dr[i] * dcj;
    }
  } else {
    double dxl = op->Dx[kj - 1], dyl = op->Dy[kj - 1];
    for (int a = 0; a < nr; a++) {
      int i = rows[a], ki = row_component(i, bs, &ra, &base);
      out[a] = beta_column_entry(op, ra, ki, c, W1, W2, dxl, dyl) * dr[i] * dcj;
    }
  }
  if (s->diag) /* the diagonal (j, j), where rows holds j: its entry again, the compliance added first */
    for (int a = 0; a < nr; a++)
      if (rows[a] == j) out[a] = (sb_kept_op_entry(op, j, j) + s->diag[j]) * dr[j] * dcj;
  if (tikhonov_at(s, j) > 0)
    for (int a = 0; a < nr; a++)
      if (rows[a] == j) out[a] += s->eps;
}

void sb_kept_op_conditioned_principal(const void *ctx, const int *set, int na, double *out) {
  for (int b = 0; b < na; b++) sb_kept_op_conditioned_column_rows(ctx, set[b], set, na, out + (size_t)b * na);
}

void sb_kept_op_conditioned_apply(const void *ctx, const double *x, const double *b, double *y) {
  const sb_kept_op_conditioned *s = ctx;
  int n = sb_kept_op_size(s->op);
  for (int j = 0; j < n; j++) s->xs[j] = s->dc[j] * x[j];
  sb_kept_op_apply(s->op, s->xs, NULL, s->t);
  if (s->diag)
    for (int i = 0; i < n; i++) s->t[i] += s->diag[i] * s->xs[i];
  for (int i = 0; i < n; i++) {
    double v = (b ? b[i] : 0) + s->dr[i] * s->t[i];
    y[i] = tikhonov_at(s, i) > 0 ? v + s->eps * x[i] : v;
  }
}

void sb_kept_op_conditioned_apply_transposed(const void *ctx, const double *x, double *y) {
  const sb_kept_op_conditioned *s = ctx;
  int n = sb_kept_op_size(s->op);
  for (int i = 0; i < n; i++) s->xs[i] = s->dr[i] * x[i];
  sb_kept_op_apply_transposed(s->op, s->xs, s->t);
  if (s->diag)
    for (int j = 0; j < n; j++) s->t[j] += s->diag[j] * s->xs[j];
  for (int j = 0; j < n; j++) {
    double v = s->dc[j] * s->t[j];
    y[j] = tikhonov_at(s, j) > 0 ? v + s->eps * x[j] : v;
  }
}

/* The rounding of sb_kept_op_conditioned_apply's row i against the exact
 * sum over the conditioned entries: E z's sums of r products, W's of 3nk,
 * D_k . v and gamma's term (4), the entries' own expressions (4 roundings
 * from exact E^T W E, the diagonal's eps 1), b's and eps's additions (3):
 * each within gamma_K = K u / (1 - K u) of the sum of the terms' magnitudes,
 * which (|E|^T |W| |E| + |C|) |Dc x| bounds. Dr and Dc are powers of two, so
 * scaling rounds only where it underflows: x_j's term widened by the
 * smallest subnormal before the product, K of them after. */
void sb_kept_op_conditioned_apply_bound(const void *ctx, const double *x, const double *b, double *e) {
  const sb_kept_op_conditioned *s = ctx;
  const sb_kept_op *op = s->op;
  int n = sb_kept_op_size(op);
  /* the compliance: its product, its sum and its entry's own addition (3) */
  const double u = DBL_EPSILON / 2, K = 3.0 * op->nk + op->r + 16 + (s->diag ? 3 : 0), g = K * u / (1 - K * u);
  for (int j = 0; j < n; j++) s->xs[j] = x[j] != 0 ? s->dc[j] * fabs(x[j]) + DBL_TRUE_MIN : 0;
  sb_kept_op_abs_apply(op, s->xs, s->t);
  if (s->diag)
    for (int i = 0; i < n; i++) s->t[i] += fabs(s->diag[i]) * s->xs[i];
  for (int i = 0; i < n; i++) {
    double terms = (b ? fabs(b[i]) : 0) + s->dr[i] * s->t[i] + (tikhonov_at(s, i) > 0 ? s->eps * fabs(x[i]) : 0);
    e[i] = g * terms + K * (1 + s->dr[i]) * DBL_TRUE_MIN;
  }
}

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

void sb_kept_op_apply(const sb_kept_op *op, const double *z, const double *b, double *y) {
  int nk = op->nk, r = op->r, bs = r + 2, m3k = 3 * nk;
  if (nk == 0) return;
  frame_impulses(op, z, op->lam);
  cblas_dgemv(CblasColMajor, CblasNoTrans, m3k, m3k, 1.0, op->W, m3k, op->lam, 1, 0.0, op->v, 1);
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

/* The entry of row (contact a, component ki) and column (contact c,
 * component kj), components 0 fn, 1..r the betas, r + 1 gamma: the
 * expressions of contact.c's assemble_kept_matrix, operand for operand, so
 * the same doubles. */
static inline double entry_at(const sb_kept_op *op, int a, int ki, int c, int kj) {
  int r = op->r, bs = r + 2, m3k = 3 * op->nk;
  if (ki == bs - 1) { /* the gamma row: mu fn - sum beta, own contact only */
    if (a != c || kj == bs - 1) return 0;
    return kj == 0 ? op->mu[a] : -1;
  }
  if (kj == bs - 1) return a == c && ki > 0 ? 1 : 0; /* gamma's column: into the own betas */
  const double *W1 = op->W + (size_t)(3 * c) * m3k, *W2 = W1 + m3k, *Wn = W2 + m3k;
  int na = 3 * a + 2, ta = 3 * a;
  if (ki == 0 && kj == 0) return Wn[na];
  if (ki == 0) return W1[na] * op->Dx[kj - 1] + W2[na] * op->Dy[kj - 1];
  int k = ki - 1;
  if (kj == 0) return op->Dx[k] * Wn[ta] + op->Dy[k] * Wn[ta + 1];
  int l = kj - 1;
  double wx = op->Dx[k] * W1[ta] + op->Dy[k] * W1[ta + 1];
  double wy = op->Dx[k] * W2[ta] + op->Dy[k] * W2[ta + 1];
  return wx * op->Dx[l] + wy * op->Dy[l];
}

double sb_kept_op_entry(const sb_kept_op *op, int i, int j) {
  int bs = op->r + 2;
  return entry_at(op, i / bs, i % bs, j / bs, j % bs);
}

/* Contact by contact, each row contact's W entries read once for its r + 2
 * rows (entry_at reads them per entry): the same expressions as entry_at's,
 * operand for operand, so the same doubles. */
void sb_kept_op_column(const sb_kept_op *op, int j, double *out) {
  int r = op->r, bs = r + 2, c = j / bs, kj = j % bs, nk = op->nk, m3k = 3 * nk;
  const double *Dx = op->Dx, *Dy = op->Dy;
  if (kj == bs - 1) { /* gamma's column: 1 into its own contact's betas */
    for (int i = 0; i < nk * bs; i++) out[i] = 0;
    for (int k = 0; k < r; k++) out[c * bs + 1 + k] = 1;
    return;
  }
  const double *W1 = op->W + (size_t)(3 * c) * m3k, *W2 = W1 + m3k, *Wn = W2 + m3k;
  if (kj == 0) {
    for (int a = 0; a < nk; a++) {
      double *o = out + a * bs, wt1 = Wn[3 * a], wt2 = Wn[3 * a + 1];
      o[0] = Wn[3 * a + 2];
      for (int k = 0; k < r; k++) o[1 + k] = Dx[k] * wt1 + Dy[k] * wt2;
      o[bs - 1] = 0;
    }
    out[c * bs + bs - 1] = op->mu[c];
    return;
  }
  double dxl = Dx[kj - 1], dyl = Dy[kj - 1];
  for (int a = 0; a < nk; a++) {
    double *o = out + a * bs, w11 = W1[3 * a], w12 = W1[3 * a + 1], w21 = W2[3 * a], w22 = W2[3 * a + 1];
    o[0] = W1[3 * a + 2] * dxl + W2[3 * a + 2] * dyl;
    for (int k = 0; k < r; k++) {
      double wx = Dx[k] * w11 + Dy[k] * w12;
      double wy = Dx[k] * w21 + Dy[k] * w22;
      o[1 + k] = wx * dxl + wy * dyl;
    }
    o[bs - 1] = 0;
  }
  out[c * bs + bs - 1] = -1;
}

/* Stage 3's eps at the diagonal entry (j, j), or 0 there. */
static double tikhonov_at(const sb_kept_op_conditioned *s, int j) {
  return s->eps > 0 && (!s->mask || s->mask[j]) ? s->eps : 0;
}

double sb_kept_op_conditioned_entry(const void *ctx, int i, int j) {
  const sb_kept_op_conditioned *s = ctx;
  double v = sb_kept_op_entry(s->op, i, j) * s->dr[i] * s->dc[j];
  if (i == j && tikhonov_at(s, j) > 0) v += s->eps;
  return v;
}

void sb_kept_op_conditioned_column(const void *ctx, int j, double *out) {
  const sb_kept_op_conditioned *s = ctx;
  int n = sb_kept_op_size(s->op);
  sb_kept_op_column(s->op, j, out);
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

/* Column by column, the column's contact and component decided once:
 * entry_at's expressions for each kind of column, operand for operand, so
 * the same doubles. */
void sb_kept_op_conditioned_principal(const void *ctx, const int *set, int na, double *out) {
  const sb_kept_op_conditioned *s = ctx;
  const sb_kept_op *op = s->op;
  const double *Dx = op->Dx, *Dy = op->Dy, *dr = s->dr;
  int bs = op->r + 2;
  size_t m3k = 3 * (size_t)op->nk;
  for (int b = 0; b < na; b++) {
    int j = set[b], c = j / bs, kj = j % bs, ra = 0, base = 0;
    const double *W1 = op->W + 3 * (size_t)c * m3k, *W2 = W1 + m3k, *Wn = W2 + m3k;
    double *o = out + (size_t)b * na, dcj = s->dc[j];
    if (kj == bs - 1) { /* gamma's column: 1 into its own contact's betas */
      for (int a = 0; a < na; a++) {
        int ki = row_component(set[a], bs, &ra, &base);
        o[a] = (ra == c && ki > 0 && ki < bs - 1 ? 1 : 0) * dr[set[a]] * dcj;
      }
    } else if (kj == 0) { /* fn's column */
      for (int a = 0; a < na; a++) {
        int i = set[a], ki = row_component(i, bs, &ra, &base), ta = 3 * ra;
        double v = ki == bs - 1 ? (ra == c ? op->mu[ra] : 0)
                   : ki == 0    ? Wn[ta + 2]
                                : Dx[ki - 1] * Wn[ta] + Dy[ki - 1] * Wn[ta + 1];
        o[a] = v * dr[i] * dcj;
      }
    } else { /* beta_l's column */
      double dxl = Dx[kj - 1], dyl = Dy[kj - 1];
      for (int a = 0; a < na; a++) {
        int i = set[a], ki = row_component(i, bs, &ra, &base), ta = 3 * ra;
        double v;
        if (ki == bs - 1) {
          v = ra == c ? -1 : 0;
        } else if (ki == 0) {
          v = W1[ta + 2] * dxl + W2[ta + 2] * dyl;
        } else {
          double wx = Dx[ki - 1] * W1[ta] + Dy[ki - 1] * W1[ta + 1];
          double wy = Dx[ki - 1] * W2[ta] + Dy[ki - 1] * W2[ta + 1];
          v = wx * dxl + wy * dyl;
        }
        o[a] = v * dr[i] * dcj;
      }
    }
    if (tikhonov_at(s, j) > 0) o[b] += s->eps; /* the diagonal (j, j) */
  }
}

void sb_kept_op_conditioned_apply(const void *ctx, const double *x, const double *b, double *y) {
  const sb_kept_op_conditioned *s = ctx;
  int n = sb_kept_op_size(s->op);
  for (int j = 0; j < n; j++) s->xs[j] = s->dc[j] * x[j];
  sb_kept_op_apply(s->op, s->xs, NULL, s->t);
  for (int i = 0; i < n; i++) {
    double v = (b ? b[i] : 0) + s->dr[i] * s->t[i];
    y[i] = tikhonov_at(s, i) > 0 ? v + s->eps * x[i] : v;
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
  const double u = DBL_EPSILON / 2, K = 3.0 * op->nk + op->r + 16, g = K * u / (1 - K * u);
  for (int j = 0; j < n; j++) s->xs[j] = x[j] != 0 ? s->dc[j] * fabs(x[j]) + DBL_TRUE_MIN : 0;
  sb_kept_op_abs_apply(op, s->xs, s->t);
  for (int i = 0; i < n; i++) {
    double terms = (b ? fabs(b[i]) : 0) + s->dr[i] * s->t[i] + (tikhonov_at(s, i) > 0 ? s->eps * fabs(x[i]) : 0);
    e[i] = g * terms + K * (1 + s->dr[i]) * DBL_TRUE_MIN;
  }
}

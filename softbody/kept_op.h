/* The LCP of eq. (11)-(13) over the kept contacts as an operator on their
 * Delassus blocks, without its n x n matrix.
 *
 * With nk kept contacts and an r-direction pyramid the LCP has n = nk (r + 2)
 * unknowns per step (fn, beta_1..r, gamma per contact) and its matrix is
 *   A = E^T W E + C
 * W: the kept contacts' Delassus blocks (3nk x 3nk, contact frames t1, t2, n;
 * with held ends the bilateral Schur complement), E: fn -> the normal, beta_l
 * -> D_l = (cos 2 pi l / r, sin 2 pi l / r) in the tangent plane, gamma -> 0,
 * and C the per-contact couplings (+1 from gamma into each beta row, -1 from
 * each beta and mu from fn into the gamma row). A product A z through W costs
 * (3nk)^2 multiply-adds instead of n^2: (3 / (r + 2))^2 of it, a quarter at
 * the default r = 4.
 *
 * sb_kept_op_entry gives A's entries as contact.c's assembly writes them, the
 * same doubles bit for bit (the same products in the same order), so stages
 * that read single entries (principal submatrices, pivot columns, the scaling
 * sweeps) see the same matrix. Products (sb_kept_op_apply) sum in another
 * order than a dense product: their last bits differ, within the bound that
 * sb_kept_op_abs_apply gives the size of. docs/contact_factor_design.md has
 * the plan this is step 1 of. */
#ifndef SB_KEPT_OP_H
#define SB_KEPT_OP_H

#include <stddef.h>

#define SB_KEPT_OP_MAX_DIRECTIONS 16

typedef struct {
  int nk, r;                  /* kept contacts, pyramid directions (3..SB_KEPT_OP_MAX_DIRECTIONS) */
  const double *W;            /* 3nk x 3nk, column-major, leading dimension 3nk */
  const double *mu;           /* nk: each kept contact's friction coefficient */
  double Dx[SB_KEPT_OP_MAX_DIRECTIONS], Dy[SB_KEPT_OP_MAX_DIRECTIONS];
  double *lam, *v;            /* 3nk each: the products' scratch (impulses, then velocities) */
} sb_kept_op;

/* Unknowns of the LCP: nk (r + 2). */
static inline int sb_kept_op_size(const sb_kept_op *op) { return op->nk * (op->r + 2); }
/* Multiply-adds of one sb_kept_op_apply (W's product, the pyramids' O(n)), for
 * sb_lcp_entries.apply_cost. */
static inline double sb_kept_op_apply_cost(const sb_kept_op *op) {
  double m = 3.0 * op->nk;
  return m * m + 4.0 * sb_kept_op_size(op);
}

/* Sets the pyramid's directions D_l for r directions, as the assembly uses them. */
void sb_kept_op_directions(sb_kept_op *op, int r);

/* y = b + A z (b NULL: y = A z). y must not alias z. */
void sb_kept_op_apply(const sb_kept_op *op, const double *z, const double *b, double *y);

/* y = A^T z (y must not alias z): the transposed product, as the
 * operator's semismooth Newton fallback needs for its least-squares steps. */
void sb_kept_op_apply_transposed(const sb_kept_op *op, const double *z, double *y);

/* y = (|E|^T |W| |E| + |C|) |z|: what bounds the rounding of any way of
 * forming A z from W's entries, A's own included (a product of m terms is
 * within about m u times it, u the unit round-off). */
void sb_kept_op_abs_apply(const sb_kept_op *op, const double *z, double *y);

/* A's entry at row i, column j (0-based, < sb_kept_op_size). */
double sb_kept_op_entry(const sb_kept_op *op, int i, int j);

/* A's column j into out (sb_kept_op_size entries): sb_kept_op_entry's
 * doubles (the same expressions), in O(n). */
void sb_kept_op_column(const sb_kept_op *op, int j, double *out);

/* A's r + 2 columns of contact c into out (column-major, leading dimension
 * ld >= sb_kept_op_size): the assembly's expressions, operand for operand,
 * so sb_kept_op_entry's doubles, each row contact's pyramid products shared
 * by the contact's beta columns. r must be op->r; inline so that a caller
 * passing a constant (the default 4) has its loops unrolled. */
static inline void sb_kept_op_block_column(const sb_kept_op *op, int r, int c, double *out, size_t ld) {
  int bs = r + 2, nk = op->nk;
  size_t m3k = 3 * (size_t)nk;
  const double *Dx = op->Dx, *Dy = op->Dy;
  /* W's columns of contact c: tangent 1, tangent 2, normal */
  const double *W1 = op->W + 3 * (size_t)c * m3k, *W2 = W1 + m3k, *Wn = W2 + m3k;
  double *An = out, *Ag = out + (size_t)(bs - 1) * ld;
  double wx[SB_KEPT_OP_MAX_DIRECTIONS], wy[SB_KEPT_OP_MAX_DIRECTIONS];
  for (int a = 0; a < nk; a++) {
    int oa = a * bs, na = 3 * a + 2, ta = 3 * a;
    An[oa] = Wn[na];
    for (int k = 0; k < r; k++) {
      An[oa + 1 + k] = Dx[k] * Wn[ta] + Dy[k] * Wn[ta + 1];
      wx[k] = Dx[k] * W1[ta] + Dy[k] * W1[ta + 1];
      wy[k] = Dx[k] * W2[ta] + Dy[k] * W2[ta + 1];
    }
    An[oa + bs - 1] = 0;
    /* each beta column's rows of contact a, contiguous */
    for (int l = 0; l < r; l++) {
      double *col = out + (size_t)(1 + l) * ld + oa;
      col[0] = W1[na] * Dx[l] + W2[na] * Dy[l];
      for (int k = 0; k < r; k++) col[1 + k] = wx[k] * Dx[l] + wy[k] * Dy[l];
      col[bs - 1] = 0;
    }
    for (int k = 0; k < bs; k++) Ag[oa + k] = 0;
  }
  /* the contact's own couplings: gamma into its betas, its betas and mu fn into gamma's row */
  int oc = c * bs;
  for (int k = 0; k < r; k++) {
    Ag[oc + 1 + k] = 1;
    out[(size_t)(1 + k) * ld + oc + bs - 1] = -1;
  }
  An[oc + bs - 1] = op->mu[c];
}

/* The conditioned LCP's matrix, Dr (A + diag) Dc + eps diag(mask): A under stage 2's
 * scales (powers of two, so each entry is A's times dr_i dc_j exactly, as
 * Ruiz's sweeps leave it) and stage 3's eps on the masked diagonal (none
 * when eps <= 0). Its entries equal the conditioned copy's bit for bit
 * (barring subnormal products); as sb_lcp_entries (lcp.h) with the context
 * a sb_kept_op_conditioned. */
typedef struct {
  const sb_kept_op *op;
  const double *dr, *dc;  /* the row and column scales (sb_kept_op_size each) */
  const int *mask;        /* the diagonal entries eps is added to (NULL: all) */
  double eps;
  const double *diag;     /* optional (NULL: none): added to A's diagonal before the scales, as a
                             compliance added to A is (the contact's damped problem) */
  double *xs, *t;         /* sb_kept_op_size each: the products' scratch (Dc x, then A Dc x) */
} sb_kept_op_conditioned;

double sb_kept_op_conditioned_entry(const void *ctx, int i, int j);
void sb_kept_op_conditioned_column(const void *ctx, int j, double *out);
/* The principal block on a set of na indices (na x na, column-major). */
void sb_kept_op_conditioned_principal(const void *ctx, const int *set, int na, double *out);
/* Column j's entries at the nr rows rows[0..nr) (any order, fastest
 * ascending), into out. */
void sb_kept_op_conditioned_column_rows(const void *ctx, int j, const int *rows, int nr, double *out);
/* y = b + (Dr A Dc + eps diag(mask)) x through W (b NULL: none; b may be y,
 * y must not alias x), and e_i bounding |y_i - (b_i + sum_j M_ij x_j)| with
 * the sum exact over the conditioned entries' doubles M_ij (from
 * sb_kept_op_abs_apply: the product's rounding, and that of the entries
 * themselves, which the product does not form). */
void sb_kept_op_conditioned_apply(const void *ctx, const double *x, const double *b, double *y);
void sb_kept_op_conditioned_apply_bound(const void *ctx, const double *x, const double *b, double *e);
/* y = (Dr A Dc + eps diag(mask))^T x through W (y must not alias x). */
void sb_kept_op_conditioned_apply_transposed(const void *ctx, const double *x, double *y);

#endif

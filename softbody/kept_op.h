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

/* Sets the pyramid's directions D_l for r directions, as the assembly uses them. */
void sb_kept_op_directions(sb_kept_op *op, int r);

/* y = b + A z (b NULL: y = A z). y must not alias z. */
void sb_kept_op_apply(const sb_kept_op *op, const double *z, const double *b, double *y);

/* y = (|E|^T |W| |E| + |C|) |z|: what bounds the rounding of any way of
 * forming A z from W's entries, A's own included (a product of m terms is
 * within about m u times it, u the unit round-off). */
void sb_kept_op_abs_apply(const sb_kept_op *op, const double *z, double *y);

/* A's entry at row i, column j (0-based, < sb_kept_op_size). */
double sb_kept_op_entry(const sb_kept_op *op, int i, int j);

/* A's column j into out (sb_kept_op_size entries): sb_kept_op_entry's
 * doubles (the same expressions, entry_at), in O(n). */
void sb_kept_op_column(const sb_kept_op *op, int j, double *out);

/* The conditioned LCP's matrix, Dr A Dc + eps diag(mask): A under stage 2's
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
  double *xs, *t;         /* sb_kept_op_size each: the products' scratch (Dc x, then A Dc x) */
} sb_kept_op_conditioned;

double sb_kept_op_conditioned_entry(const void *ctx, int i, int j);
void sb_kept_op_conditioned_column(const void *ctx, int j, double *out);
/* The principal block on a set of na indices (na x na, column-major). */
void sb_kept_op_conditioned_principal(const void *ctx, const int *set, int na, double *out);
/* y = b + (Dr A Dc + eps diag(mask)) x through W (b NULL: none; b may be y,
 * y must not alias x), and e_i bounding |y_i - (b_i + sum_j M_ij x_j)| with
 * the sum exact over the conditioned entries' doubles M_ij (from
 * sb_kept_op_abs_apply: the product's rounding, and that of the entries
 * themselves, which the product does not form). */
void sb_kept_op_conditioned_apply(const void *ctx, const double *x, const double *b, double *y);
void sb_kept_op_conditioned_apply_bound(const void *ctx, const double *x, const double *b, double *e);

#endif

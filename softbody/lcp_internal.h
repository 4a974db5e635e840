/* The LCP workspace, shared by lcp.c (solvers) and condition.c (scaling). */
#ifndef SB_LCP_INTERNAL_H
#define SB_LCP_INTERNAL_H

#include <math.h>

#include "lcp.h"

/* A factorization of a principal submatrix M_AA, for reuse (lcp.c) */
#define SB_LCP_BORDER_MAX 8 /* indices a bordered factorization adds or removes */

typedef struct {
  double *F, *A;            /* the factor, and M_AA itself (na x na, column-major) */
  int *set, *piv, n, na, how, valid;
  /* how == 3, bordered (fb_factor_bordered in lcp.c): F and piv hold the LU
   * of M_CC for another set C (bset, nbase entries), and the set is C less
   * nrem indices (their places in C: rpos) plus nadd (dset); Y = M_CC^-1 [M_CD
   * alpha E_R] (nbase x (nadd + nrem)), S the LU of its Schur complement (spiv);
   * bpos: for each place of the set, its place in C, or -1 - its place in dset;
   * Mdc: the rows M_DC (nadd x nbase); border_scale: alpha, E_R's scale */
  double *Y, *S, *Mdc, border_scale;
  int *bset, *bpos, *dset, *rpos, *spiv, nbase, nadd, nrem;
} sb_lcp_factor;

struct sb_lcp_work {
  int nmax;
  /* solvers */
  double *w, *zbest, *ztry, *phi, *phitry, *g, *d, *da, *db, *rowbuf, *colbuf;
  double *H, *HtH;          /* FB: n x n each */
  double *T;                /* Lemke: condensed tableau n x (n + 2), column-major */
  int *basis, *nonbasis, *ties;
  double *LU;               /* Lemke polish and PGS local blocks */
  int *ipiv, *idx;
  double *zloc, *qloc;
  /* The warm pivot's last two factorizations of M_AA, each with its set, LU
   * pivots and kind (fb_factor's return): slot 0 in LU (M_AA in HtH), slot 1
   * in H (M_AA in T), both scratch of the chain's solvers, so valid only
   * until the chain runs; reused by a solve with opt->same_matrix. Two,
   * because a re-solve (the proximal step) mostly retraces both passes of
   * the solve before it. fc_next: the slot the next new set overwrites
   * (the one not used last). */
  sb_lcp_factor fc[2];
  int fc_next;
  /* The slot whose set solved the last warm pivot (its answer's active set,
   * degenerate indices included), or -1: a re-solve of the same matrix
   * tries that set first (resolve_on_solved_set in lcp.c). */
  int fc_solved;
  /* The blocks of sb_lcp_options.friction_blocks for the solve under way
   * (NULL: not a problem of friction pyramids). */
  const int *fric_block;
  int fric_nblock;
  long least_norm_factors;  /* least-norm factorizations so far (fb_factor's path 2): for tests */
  long factorizations;      /* the warm pivot's factorizations of a set so far (fb_factor,
                               fb_factor_bordered): for tests */
  long bordered_factors;    /* of them by fb_factor_bordered: for tests */
  long krylov_newton, krylov_least_squares; /* FB's steps on an unformed M so far (fb_krylov.c): for tests */
  int krylov_iterations;    /* GMRES's iterations in the last of them */
  /* for tests (0: the defaults): GMRES's restart length and rounds, and FB without its pivot
   * passes, so that its Newton and least-squares steps answer alone */
  int krylov_restart, krylov_rounds, fb_no_pivot;
  /* for tests: 1 makes the acceptance test on the entries' products take every row's terms
   * (check_given_w in lcp.c), as before the test took only the doubtful rows'; the rows it
   * passed without their terms so far */
  int check_all_terms;
  long rows_without_terms;
  int border;               /* sb_lcp_options.border_factors of the solve under way */
  /* The set that solved the last warm pivot (prev_na entries, of a problem of size prev_n; 0 when
   * that set was solved by least norm), kept across matrices: a warm solve of a new matrix of that
   * size adds it to its prediction (sb_lcp_options.warm_last_set) */
  int *prev_set, prev_na, prev_n;
  /* The size of the matrix last scanned finite (check_input in lcp.c), 0 after a non-finite one:
   * a same_matrix solve of that size does not scan it again */
  int finite_n;
  /* An unformed M (sb_lcp_entries.storage) formed there, by the solve under way or, for a
   * same_matrix solve, the last one */
  int formed;
  int warm_lemke;           /* the solve under way's sb_lcp_info.warm_lemke (run_one's Lemke) */
  int lemke_form;           /* sb_lcp_options.lemke_form of the solve under way */
  int lemke_ran;            /* the form lemke_core last ran in this solve, -1 none (sb_lcp_info.lemke_form) */
  /* Lemke in revised form (lemke_revised.c): each variable's slot (2n + 1), K's
   * columns (n + 1), each w's place in K0's rows (n + 1), each z's place in
   * K's columns (n + 1), each w's membership of K's rows (n); its factor's
   * other arrays live in the chain's scratch (the factor cache's and the
   * tableau's: sb_lemke_revised) */
  int *rv_slot, *rv_kcol, *rv_r0pos, *rv_colpos, *rv_rowpos;
  /* the last revised solve's largest relative residual |K x - b| of an
   * accepted solve with K, its refactorizations of K and its largest k: for
   * tests */
  double rv_worst_residual;
  long rv_refactors;
  int rv_kmax;
  /* sb_lcp_options.entries of the solve under way (NULL: M is read), a
   * column of them (n: the revised Lemke's, and row_terms'), and the bound
   * on their product's rounding (n: check_given_w's) */
  const sb_lcp_entries *entries;
  double *rv_col, *ebound;
  int *term_rows;           /* n: the rows whose terms flagged_row_terms takes */
  int *fric_dropped;        /* n flags: the betas the warm pivot's pass left out of its set
                               (sb_lcp_friction_set_basic) */
  /* regular_part (lcp.c): the set's positions in order of preference and each one's state (n),
   * and each column's largest entry (n) */
  int *regular_order, *regular_state;
  double *regular_colmax;
  int pivot_first_infeasible; /* the last fb_pivot_step's first trial: its infeasible indices, */
  int pivot_first_unloads;    /* and whether one is a loaded normal below zero (an unloading contact) */
  long regular_pivots;      /* warm solves answered by the pivot on regular sets: for tests */
  /* conditioning (condition.c) */
  double *Ms, *qs, *zs, *dr, *dc;
};

/* Whether the principal submatrix M_AA of a problem of friction pyramids
 * (sb_lcp_options.friction_blocks: nblock blocks [normal, beta_1 .. beta_r,
 * gamma], r = block - 2 directions D_k evenly spaced on the unit circle) is
 * singular by construction; in: n flags, the set A. Restricted to the set's
 * columns, a block's beta rows are D_k . (its two tangent rows) (+ gamma's
 * column, coefficient 1, when gamma is in the set), so they are dependent
 * when, without gamma, more than two betas or two opposite ones (k and
 * k + r/2) are in, or, with gamma, more than three (the points (D_k, 1) of a
 * circle: any three are independent, four are not). Ruiz's row and column
 * scaling keeps that and Tikhonov touches only the normal and gamma
 * diagonals, so the conditioned M_AA is within rounding of singular too. A
 * lying contact holding still with both betas of an opposite pair loaded is
 * the common case: the least-norm answer splits its tangential impulse
 * between them, which predicts the same set the next step. Sufficient, not
 * necessary: sets singular for other reasons (more rows than the dofs) are
 * not seen. */
int sb_lcp_friction_set_singular(int nblock, const int *block, const int *in);

/* Makes a set of a problem of friction pyramids basic where it is singular
 * by construction (sb_lcp_friction_set_singular's rule): in each such
 * block, keeps the betas nearest in angle to the block's friction impulse
 * at zref (sum of zref_k c_k D_k, c_k = -M(gamma, beta_k) > 0: the scaled
 * column's weight, so that the impulse is the physical one up to a factor
 * of the block) and takes the others out of the set (in = 0, dropped = 1):
 * without gamma, the nearest, and the nearest of the rest not opposite it
 * if any; with gamma, the three nearest. Their rows are combinations of the
 * kept ones over the set's columns, so the kept rows' w = 0 holds them at
 * w = 0 too, and z = 0 there: an answer of the whole set with a regular
 * matrix, one beta of an opposite pair left at zero. M: n x n, column-major;
 * dropped: n flags, all written. entries (may be NULL): M's, read instead.
 * Returns the count dropped. */
#define SB_LCP_FRICTION_MAX_R 62 /* directions of a pyramid: check_input's block limit 64, less two */
int sb_lcp_friction_set_basic(int nblock, const int *block, int n, const double *M, const sb_lcp_entries *entries,
                              const double *zref,
                              int *in, int *dropped);

/* The warm pivot's factorization of M_AA for a set (na ascending indices
 * of the n x n M, column-major) into the cache slot `slot` (M_AA into its
 * A): with border, by bordering the other slot's LU (fb_factor_bordered in
 * lcp.c) where that applies and passes its singularity test, else LU, else
 * least norm (only least norm when singular: the set is singular by
 * construction). Returns 0 on failure, 1 LU, 2 least norm, 3 bordered; the
 * slot records the set. sb_lcp_factor_solve solves M_AA x = b with it (b in
 * x on entry), returning 0 on a non-finite x or an empty slot, else the
 * kind. */
int sb_lcp_factor_set(sb_lcp_work *wk, int slot, int n, const double *M, const int *set, int na, int singular,
                      int border);
int sb_lcp_factor_solve(sb_lcp_work *wk, int slot, double *x);

/* A pivot smaller than this, relative to the largest entry of its column,
 * is left out of Lemke's start basis (lemke_start in lcp.c, and its revised
 * form). */
#define SB_LEMKE_START_PIVOT_TOL 1e-9

/* Lemke's ratio test, shared by its two forms: the rows (slots) whose basic
 * value bbar_i >= 0 reaches zero first as the entering variable grows, sign *
 * col being B^-1 a_entering (the basic values fall as sign col_i t; entries
 * within 1e-12 of the column's largest do not block), ties within 1e-12
 * relative kept; returns their count into ties (0: a secondary ray). */
int sb_lemke_ratio_test(int n, const double *col, double sign, const double *bbar, int *ties);
/* One column of the lexicographic rule among nt ties: keeps those whose
 * binv_i / (sign col_i) is smallest (binv: a column of B^-1 by row, entries
 * within 1e-11 of its largest read as zero); returns how many are kept. */
int sb_lemke_lexico_step(int n, const double *binv, const double *col, double sign, int *ties, int nt,
                         double *ratio_k);

/* Borders (rows and columns changed since K's last factorization) the
 * revised Lemke keeps at most (lemke_revised.c's cost model chooses fewer;
 * its scratch bounds them by n and by sqrt(SB_LCP_BORDER_MAX n) too). */
#define SB_LEMKE_BORDER_MAX 128

/* Lemke's method in revised form (lemke_revised.c): the contract of
 * lemke_core in lcp.c (cold, or from the complementary basis of the start
 * set; z, *pivots, *warm, the message), the same path in exact arithmetic,
 * O(k^2 + n k) a pivot instead of O(n^2), k the basic z's, with K factored
 * (block LU; a singular K at a refactorization ends it, SB_LCP_STALLED with
 * a message naming it). Uses the workspace's H, HtH, LU, T, d, da, db, g,
 * rowbuf, colbuf, zloc, ztry, phitry, basis, nonbasis, idx, ties, rv_* and
 * both factor cache slots' arrays, which it forgets (not qloc, phi, ipiv, w
 * or zbest). entries (may be NULL): M's entries as functions, read instead of
 * M (which may then be NULL): the same path bit for bit when they are M's
 * doubles, and M's columns are then held only for the basic z's (n k). */
sb_lcp_status sb_lemke_revised(sb_lcp_work *wk, int n, const double *M, int ldm, const sb_lcp_entries *entries,
                               const double *q, const int *start,
                               double *z, int max_pivots, int *pivots, int *warm, char *msg, int msg_size);

/* Wall clock in microseconds. */
double sb_lcp_now_us(void);

/* The smallest and largest |pivot| of the n x n LU factor F (the diagonal
 * of U), folded into *umin and *umax. */
static inline void sb_lu_pivot_range(int n, const double *F, double *umin, double *umax) {
  for (int k = 0; k < n; k++) {
    double u = fabs(F[(size_t)k * n + k]);
    *umin = u < *umin ? u : *umin;
    *umax = u > *umax ? u : *umax;
  }
}

/* The LU paths' singularity test: every pivot above 1e-11 of the largest. */
static inline int sb_lu_pivots_regular(double umin, double umax) { return umin > 1e-11 * umax; }

/* FB's Jacobian H = diag(a) + diag(b) M at (z_i, w_i): phi = sqrt(z^2 + w^2)
 * - z - w has a = z / |(z, w)| - 1, b = w / |(z, w)| - 1; at a degenerate
 * pair (0, 0) any (a, b) with |(a + 1, b + 1)| <= 1 is valid. */
static inline void sb_fb_coefficients(double z, double w, double *a, double *b) {
  double r = hypot(z, w);
  if (r > 1e-300) {
    *a = z / r - 1;
    *b = w / r - 1;
  } else {
    *a = *b = M_SQRT1_2 - 1;
  }
}

/* For tests: the acceptance test of a solve on unformed entries (apply and
 * apply_bound given), w = q + M z by their product, as a solve's check
 * leaves it (w then exact where the sum could not tell): returns 1 when z
 * passes, with the residual and the first bad row (-1 none). */
int sb_lcp_check_by_entries(sb_lcp_work *wk, int n, const sb_lcp_entries *entries, const double *q, const double *z,
                            double *w, double abs_tol, double rel_tol, double *residual, int *bad_row);

/* FB's steps on an unformed M through the solve's entries (fb_krylov.c):
 * usable when the entries have apply and apply_transposed and the
 * workspace holds the Krylov scratch at this size. jacobian sets H at
 * (z, w) and its block preconditioner; newton solves H d = -phi to the
 * relative residual eta and returns the one reached; hth_scale is the
 * largest squared diagonal entry of H (the scale of mu); least_squares
 * solves (H^T H + mu I) d = -H^T phi; model writes phi + H d. */
int sb_fb_krylov_usable(const sb_lcp_work *wk, int n);
void sb_fb_krylov_jacobian(sb_lcp_work *wk, int n, const double *z, const double *w);
double sb_fb_krylov_newton(sb_lcp_work *wk, int n, const double *phi, double eta, double *d);
double sb_fb_krylov_hth_scale(sb_lcp_work *wk, int n);
void sb_fb_krylov_least_squares(sb_lcp_work *wk, int n, const double *phi, double mu, double *d);
void sb_fb_krylov_model(sb_lcp_work *wk, int n, const double *phi, const double *d, double *out);

#endif

/* Lemke's complementary pivoting in revised form.
 *
 * The condensed tableau (lcp.c) updates all of B^-1 [I -M -d q], n x (n + 2)
 * entries, on every pivot. Its basis B, n columns of [I, -M, -d], is the
 * identity on the basic w's except for its structural block K: the rows R
 * whose w is nonbasic against the columns of the basic z's (and z0), k x k
 * with k = |R|. Only K^-1 need be kept, updated on each pivot in O(k^2) (a
 * border added or removed, a row or a column replaced), and the entering
 * variable's column B^-1 a_e comes from it and from M's columns of the basic
 * z's in O(k^2 + n k). On a contact LCP with many contacts of which few carry
 * load, k is a fraction of n (docs/contact_scaling.md).
 *
 * The path is the tableau's in exact arithmetic: the same entering rule (the
 * complement of the variable that left), the same ratio test and tolerances,
 * the same lexicographic tie rule on the rows of B^-1, the same slots (a
 * variable enters at the slot of the one that leaves), so the same vertex of
 * a degenerate problem is reached wherever round-off does not decide a tie.
 * Only the rounding differs.
 *
 * Experimental (sb_lcp_options.lemke_form): K^-1 is carried by explicit
 * updates, which are not backward stable. Through the nearly singular bases
 * of a rope's LCP on cosseratbench's pile (k above the dofs, K regular only
 * by the friction blocks and Tikhonov) its error grows to the size of its
 * entries and the path leaves the tableau's for an infeasible basis, where
 * the same path with each K solved afresh by LU ends on the tableau's answer
 * (docs/contact_scaling.md, session 25). A factored K with stable updates is
 * the step this form needs. */
#include <cblas.h>
#include <math.h>
#include <string.h>

#include "lcp_internal.h"
#include "sb_util.h"

/* Basis of Lemke's equation w - M z - d z0 = q, variables by id: w_i is i,
 * z_i is n + i, z0 is 2 n. */
typedef struct {
  int n, ldm, k;
  const double *M, *d;
  double *Kinv; /* k x k, column-major, leading dimension n: its rows are K's
                   columns (the basic z's), its columns K's rows (the
                   nonbasic w's) */
  double *Mc;   /* n x k, leading dimension n: M's column of each basic z
                   (d for z0), in K's column order */
  double *bbar, *uc, *uw, *dir, *y, *gath;
  int *basis;   /* slot -> id */
  int *slot;    /* id -> slot, -1 nonbasic */
  int *kcol;    /* K's column -> id (>= n) */
  int *krow;    /* K's row -> index of the w */
  int *colpos;  /* id - n -> K's column, -1 */
  int *rowpos;  /* index of a w -> K's row, -1 */
} revised_basis;

/* M's column of z_j (j = id - n), or the covering vector for z0. */
static const double *structural_column(const revised_basis *b, int id) {
  return id < 2 * b->n ? b->M + (size_t)(id - b->n) * b->ldm : b->d;
}

/* dir = B^-1 a_e by slot, a_e the column of variable e in [I, -M, -d]:
 * the basic z's part uc from K^-1 (K uc = a_e on the rows R), the basic
 * w's part uw = a_e + Mc uc (B's column of a basic z is -Mc's). */
static void direction(revised_basis *b, int e) {
  int n = b->n, k = b->k;
  double *uc = b->uc, *uw = b->uw;
  if (e < n) { /* w_e, nonbasic: e is one of the rows R */
    memcpy(uc, b->Kinv + (size_t)b->rowpos[e] * n, (size_t)k * sizeof(double));
    memset(uw, 0, (size_t)n * sizeof(double));
    uw[e] = 1;
  } else {
    const double *col = structural_column(b, e);
    for (int r = 0; r < k; r++) b->gath[r] = -col[b->krow[r]];
    if (k) cblas_dgemv(CblasColMajor, CblasNoTrans, k, k, 1.0, b->Kinv, n, b->gath, 1, 0.0, uc, 1);
    for (int i = 0; i < n; i++) uw[i] = -col[i];
  }
  if (k) cblas_dgemv(CblasColMajor, CblasNoTrans, n, k, 1.0, b->Mc, n, uc, 1, 1.0, uw, 1);
  for (int s = 0; s < n; s++) {
    int id = b->basis[s];
    b->dir[s] = id < n ? uw[id] : uc[b->colpos[id - n]];
  }
}

/* z0's column when it first enters: B^-1 (-d) = -1 in every slot, by the
 * choice of d (all ones for the cold basis, B 1 for a start basis), set
 * exactly as the tableau sets it. */
static void direction_of_covering(revised_basis *b) {
  for (int c = 0; c < b->k; c++) b->uc[c] = -1;
  for (int s = 0; s < b->n; s++) b->dir[s] = -1;
}

/* y = K^-T c, c the row of the structural columns at w_i's row
 * (-Mc's row i): the border a row i of K would add. */
static void row_through_inverse(revised_basis *b, int i) {
  int n = b->n, k = b->k;
  if (!k) return;
  for (int c = 0; c < k; c++) b->gath[c] = -b->Mc[(size_t)c * n + i];
  cblas_dgemv(CblasColMajor, CblasTrans, k, k, 1.0, b->Kinv, n, b->gath, 1, 0.0, b->y, 1);
}

/* The pivot on slot r for entering e, with dir = B^-1 a_e (direction):
 * the basic values move along dir, and K^-1 follows the change of K. */
static void revised_pivot(revised_basis *b, int r, int e) {
  int n = b->n, k = b->k, lv = b->basis[r];
  double pe = b->dir[r], t = b->bbar[r] / pe, *X = b->Kinv, *uc = b->uc, *y = b->y;
  for (int s = 0; s < n; s++) b->bbar[s] -= t * b->dir[s];
  b->bbar[r] = t;
  if (e >= n && lv < n) {
    /* K gains the row of w_lv and the column of e: the bordered inverse,
     * its Schur complement the pivot */
    row_through_inverse(b, lv);
    if (k) cblas_dger(CblasColMajor, k, k, 1.0 / pe, uc, 1, y, 1, X, n);
    for (int c = 0; c < k; c++) X[(size_t)k * n + c] = -uc[c] / pe;
    for (int j = 0; j < k; j++) X[(size_t)j * n + k] = -y[j] / pe;
    X[(size_t)k * n + k] = 1 / pe;
    memcpy(b->Mc + (size_t)k * n, structural_column(b, e), (size_t)n * sizeof(double));
    b->kcol[k] = e;
    b->colpos[e - n] = k;
    b->krow[k] = lv;
    b->rowpos[lv] = k;
    b->k = k + 1;
  } else if (e >= n) {
    /* K's column of lv becomes e's: K^-1 - (uc - e_p) K^-1(p, :) / uc_p */
    int p = b->colpos[lv - n];
    for (int j = 0; j < k; j++) y[j] = X[(size_t)j * n + p];
    uc[p] -= 1;
    cblas_dger(CblasColMajor, k, k, -1.0 / pe, uc, 1, y, 1, X, n);
    memcpy(b->Mc + (size_t)p * n, structural_column(b, e), (size_t)n * sizeof(double));
    b->kcol[p] = e;
    b->colpos[e - n] = p;
    b->colpos[lv - n] = -1;
  } else if (lv < n) {
    /* K's row of w_e becomes w_lv's: K^-1 + uc (K^-T c - e_q)^T / pe */
    int q = b->rowpos[e];
    row_through_inverse(b, lv);
    y[q] -= 1;
    cblas_dger(CblasColMajor, k, k, 1.0 / pe, uc, 1, y, 1, X, n);
    b->krow[q] = lv;
    b->rowpos[lv] = q;
    b->rowpos[e] = -1;
  } else {
    /* K loses the row of w_e and the column of lv: the inverse of what is
     * left is K^-1's Schur complement in its entry (p, q); the last row and
     * column then fill the gap */
    int p = b->colpos[lv - n], q = b->rowpos[e], last = k - 1;
    for (int j = 0; j < k; j++) y[j] = X[(size_t)j * n + p];
    cblas_dger(CblasColMajor, k, k, -1.0 / pe, uc, 1, y, 1, X, n);
    if (p != last) {
      for (int j = 0; j < k; j++) X[(size_t)j * n + p] = X[(size_t)j * n + last];
      memcpy(b->Mc + (size_t)p * n, b->Mc + (size_t)last * n, (size_t)n * sizeof(double));
      b->kcol[p] = b->kcol[last];
      b->colpos[b->kcol[p] - n] = p;
    }
    if (q != last) {
      memcpy(X + (size_t)q * n, X + (size_t)last * n, (size_t)k * sizeof(double));
      b->krow[q] = b->krow[last];
      b->rowpos[b->krow[q]] = q;
    }
    b->colpos[lv - n] = -1;
    b->rowpos[e] = -1;
    b->k = last;
  }
  b->basis[r] = e;
  b->slot[e] = r;
  b->slot[lv] = -1;
}

/* Column k of B^-1 by slot into out: a unit column for a basic w_k. */
static void inverse_column(revised_basis *b, int k, double *out) {
  if (b->rowpos[k] < 0) {
    memset(out, 0, (size_t)b->n * sizeof(double));
    out[b->slot[k]] = 1;
    return;
  }
  direction(b, k);
  memcpy(out, b->dir, (size_t)b->n * sizeof(double));
}

/* The start basis of a guess's set, as lemke_start in lcp.c builds it: z_i
 * for w_i in index order, passes until nothing more pivots in, an index whose
 * pivot is below LEMKE_START_PIVOT_TOL of its column left out; then the
 * covering vector d = B 1. Returns 0 when nothing pivoted in. */
static int revised_start(revised_basis *b, const int *start, double *d, int *pivots) {
  int n = b->n;
  for (int made = 1; made;) {
    made = 0;
    for (int i = 0; i < n; i++) {
      if (!start[i] || b->basis[i] != i) continue;
      direction(b, n + i);
      double big = 0;
      for (int s = 0; s < n; s++) big = fmax(big, fabs(b->dir[s]));
      if (!(fabs(b->dir[i]) > SB_LEMKE_START_PIVOT_TOL * big)) continue;
      revised_pivot(b, i, n + i);
      (*pivots)++;
      made = 1;
    }
  }
  if (*pivots == 0) return 0;
  for (int i = 0; i < n; i++) d[i] = b->rowpos[i] < 0 ? 1 : 0;
  for (int c = 0; c < b->k; c++) cblas_daxpy(n, -1.0, b->Mc + (size_t)c * n, 1, d, 1);
  return 1;
}

static void basic_z(const revised_basis *b, double *z) {
  int n = b->n;
  for (int s = 0; s < n; s++)
    if (b->basis[s] >= n && b->basis[s] < 2 * n) z[b->basis[s] - n] = fmax(b->bbar[s], 0);
}

sb_lcp_status sb_lemke_revised(sb_lcp_work *wk, int n, const double *M, int ldm, const double *q, const int *start,
                               double *z, int max_pivots, int *pivots, int *warm, char *msg, int msg_size) {
  revised_basis b = {.n = n, .ldm = ldm, .k = 0, .M = M, .d = wk->d, .Kinv = wk->H, .Mc = wk->T,
                     .bbar = wk->ztry, .uc = wk->rowbuf, .uw = wk->colbuf, .dir = wk->da, .y = wk->db,
                     .gath = wk->zloc, .basis = wk->basis, .slot = wk->rv_slot, .kcol = wk->rv_kcol,
                     .krow = wk->rv_krow, .colpos = wk->rv_colpos, .rowpos = wk->rv_rowpos};
  double *d = wk->d, *ratio_k = wk->g, *binv = wk->phitry;
  int *ties = wk->ties;
  *pivots = 0;
  if (warm) *warm = 0;
  for (int i = 0; i < n; i++) {
    z[i] = 0;
    d[i] = 1;
    b.bbar[i] = q[i];
    b.basis[i] = i;
    b.slot[i] = i;
    b.slot[n + i] = -1;
    b.colpos[i] = -1;
    b.rowpos[i] = -1;
  }
  b.slot[2 * n] = -1;
  b.colpos[n] = -1;
  int from_set = 0;
  for (int i = 0; start && i < n; i++) from_set |= start[i] != 0;
  if (from_set) {
    if (!revised_start(&b, start, d, pivots)) {
      sb_errorf(msg, msg_size, "lemke: no index of the guess's set pivots in (its M_SS singular)");
      return SB_LCP_STALLED;
    }
    if (warm) *warm = 1;
  }
  int rmin = 0;
  for (int i = 1; i < n; i++)
    if (b.bbar[i] <= b.bbar[rmin]) rmin = i; /* ties: the largest index is the lexicographic minimum */
  if (b.bbar[rmin] >= 0) {
    basic_z(&b, z);
    return SB_LCP_SOLVED;
  }
  direction_of_covering(&b);
  int row = rmin, ent = 2 * n;
  for (;;) {
    int leaving = b.basis[row];
    revised_pivot(&b, row, ent);
    (*pivots)++;
    if (leaving == 2 * n) break; /* z0 left the basis: complementary solution */
    if (*pivots >= max_pivots) {
      sb_errorf(msg, msg_size, "lemke: %d pivots without a solution", *pivots);
      return SB_LCP_MAX_ITER;
    }
    ent = leaving < n ? leaving + n : leaving - n;
    direction(&b, ent);
    int nt = sb_lemke_ratio_test(n, b.dir, 1.0, b.bbar, ties);
    if (nt == 0) {
      sb_errorf(msg, msg_size, "lemke: secondary ray after %d pivots (no solution found)", *pivots);
      return SB_LCP_RAY;
    }
    row = -1;
    for (int t = 0; t < nt; t++)
      if (b.basis[ties[t]] == 2 * n) row = ties[t]; /* let z0 leave when it can */
    /* the entering column is kept apart while B^-1's columns are formed */
    if (row < 0 && nt > 1) memcpy(b.y, b.dir, (size_t)n * sizeof(double));
    int spoiled = 0; /* dir overwritten by a column of B^-1 */
    for (int k = 0; row < 0 && k < n && nt > 1; k++) {
      spoiled |= b.rowpos[k] >= 0;
      inverse_column(&b, k, binv);
      nt = sb_lemke_lexico_step(n, binv, b.y, 1.0, ties, nt, ratio_k);
    }
    if (row < 0) row = ties[0];
    if (spoiled) direction(&b, ent); /* the entering column again, for the pivot */
  }
  basic_z(&b, z);
  return SB_LCP_SOLVED;
}

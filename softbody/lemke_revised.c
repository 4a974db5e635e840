/* Lemke's complementary pivoting in revised form.
 *
 * The condensed tableau (lcp.c) updates all of B^-1 [I -M -d q], n x (n + 2)
 * entries, on every pivot. Its basis B, n columns of [I, -M, -d], is the
 * identity on the basic w's except for its structural block K: the rows R
 * whose w is nonbasic against the columns of the basic z's (and z0), k x k
 * with k = |R|. Only K need be solved: the entering variable's column
 * B^-1 a_e is K^-1 of its rows R for the basic z's and M's columns of the
 * basic z's for the basic w's, O(k^2 + n k) a pivot, or O(k^2) plus one
 * product with M where the entries' product is cheaper than n k
 * (add_basic_columns). On a contact LCP with many contacts of which few
 * carry load, k is a fraction of n (docs/contact_scaling.md).
 *
 * The path is the tableau's in exact arithmetic: the same entering rule (the
 * complement of the variable that left), the same ratio test and tolerances,
 * the same lexicographic tie rule on the rows of B^-1, the same slots (a
 * variable enters at the slot of the one that leaves), so the same vertex of
 * a degenerate problem is reached wherever round-off does not decide a tie.
 * Only the rounding differs.
 *
 * How K is solved: block LU, as active-set QP codes do. At a refactorization
 * K0 = K is factored by LAPACK (partial pivoting, backward stable). A pivot
 * changes K by a row and a column added, removed or replaced; until the next
 * refactorization the current K is the bordered matrix [[K0, U], [V, C]]:
 * U's columns the added columns on K0's rows and a unit column for each K0
 * row removed (a free slack that absorbs that equation), V's rows the added
 * rows on K0's columns and a unit row for each K0 column removed (pinning
 * it to zero), C the added rows on the added columns. Y = K0^-1 U and the
 * Schur complement S = C - V Y (s x s, s the changes since K0) are kept, S
 * factored afresh when it changes; a border removed again is dropped, not
 * pinned. Every solve's residual on K's rows comes with the basic w's at no
 * cost and is checked: a solve that misses refactors. An explicit K^-1
 * updated by rank-one formulas, this form's first version, was not backward
 * stable and left the tableau's path through the nearly singular bases of a
 * rope's big LCP (docs/contact_scaling.md, sessions 25 and 26). */
#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <string.h>

#include "lcp_internal.h"
#include "sb_util.h"

/* A refactorization costs 2/3 k^3 flops; a pivot with s borders costs, beyond
 * its K0 solve (2 k^2, the same with none), about 6 k s (V's products with a
 * K0 solve, Y's with S's, a new border's row or column of S) and 2/3 s^3 (S's
 * LU). Over a cycle of p pivots, s growing from 0 to p, that is
 * 2/3 k^3 / p + 3 k p + p^3 / 6 a pivot, least where its derivative
 * -2/3 k^3 / p^2 + 3 k + p^2 / 2 changes sign: p grows as k^(3/4). Below
 * this many borders a refactorization is cheap whatever k. */
#define BORDER_CAP_MIN 8
/* A solve K x = b whose residual max |K x - b| on K's rows exceeds this
 * fraction of |b| + k max|K| |x| (all max norms) refactors K and solves
 * again: a backward-stable solve is near the rounding unit times a modest
 * growth, the bordered one loses accuracy when K0 was nearly singular. */
#define REFACTOR_RESIDUAL 1e-10

/* Basis of Lemke's equation w - M z - d z0 = q, variables by id: w_i is i,
 * z_i is n + i, z0 is 2 n. */
typedef struct {
  int n, ldm, k;
  const double *M, *d;
  /* M's entries as functions (sb_lcp_options.entries; NULL: M is read),
   * and the last column they gave that is not a basic z's (ecol_id's) */
  const sb_lcp_entries *ent;
  double *ecol;
  int ecol_id;
  double *Mc;   /* n x k, leading dimension n: M's column of each basic z
                   (d for z0), in K's column order kcol */
  double *xa;   /* n: the basic z's part of a direction scattered by index, for entries' apply */
  double *bbar, *uc, *uw, *dir;
  int *basis;   /* slot -> id */
  int *slot;    /* id -> slot, -1 nonbasic */
  int *kcol;    /* K's column -> id (>= n) */
  int *colpos;  /* id - n -> K's column, -1 */
  int *rowpos;  /* index of a w -> 1 when w is nonbasic (a row of K), else -1 */
  /* K0, the K of the last refactorization: its LU (k0 x k0, leading
   * dimension k0) and pivots, its rows (w's) and columns (ids), each w's
   * and id's place in them (-1 none), and which have left K since */
  int k0, *piv, *r0, *c0, *r0pos, *c0pos, *r0dead, *c0dead;
  double *F;
  /* the borders: s rows and s columns (sr, sc while a pivot changes them);
   * brow[t] a w (an added row) or -1 - j (K0's column j pinned); bcol[t] an id
   * (an added column) or -1 - i (the slack of K0's row i); Y (k0 x sc) and V
   * (the added rows on K0's columns, one k0-vector each), leading dimension
   * n; S (sr x sc, leading dimension lds, the cap's bound) and its LU Sf
   * (s x s) with spiv */
  int sr, sc, cap, lds, *brow, *bcol, *spiv;
  double *Y, *V, *S, *Sf;
  /* K0^-1 of the last solved column on K0's rows (yent, for yent_for; the
   * Y column a pivot that adds it needs), x0 the K0 part of the answer, rb
   * the borders' */
  double *yent, *x0, *rb;
  int yent_for;
  double kmax;  /* the largest |K0 entry|: max|K| of the residual check (the
                   borders' entries, from the same M, are left out) */
  double worst; /* the largest relative residual of an accepted solve */
  long refactors;
  int kmax_path; /* the largest k on the path */
  int *pivots;
  char *msg;
  int msg_size;
} revised_basis;

/* M's column of z_j (j = id - n), or the covering vector for z0. From
 * entries, a basic z's is its copy in Mc and another's is written into ecol,
 * valid until the next column of a nonbasic z is asked for. */
static const double *structural_column(revised_basis *b, int id) {
  int n = b->n;
  if (id == 2 * n) return b->d;
  if (!b->ent) return b->M + (size_t)(id - n) * b->ldm;
  int c = b->colpos[id - n];
  if (c >= 0) return b->Mc + (size_t)c * n;
  if (b->ecol_id != id) {
    b->ent->column(b->ent->ctx, id - n, b->ecol);
    b->ecol_id = id;
  }
  return b->ecol;
}

/* One entry (row i) of structural_column(b, id), without filling ecol: the
 * borders read single entries of columns that left K0. */
static double structural_entry(const revised_basis *b, int id, int i) {
  int n = b->n;
  if (id == 2 * n) return b->d[i];
  if (!b->ent) return b->M[(size_t)(id - n) * b->ldm + i];
  int c = b->colpos[id - n];
  if (c >= 0) return b->Mc[(size_t)c * n + i];
  if (b->ecol_id == id) return b->ecol[i];
  return b->ent->entry(b->ent->ctx, i, id - n);
}

/* Borders kept before K is factored afresh (BORDER_CAP_MIN's cost model),
 * at most bound. */
static int border_cap(int k, int bound) {
  double kk = k;
  int p = BORDER_CAP_MIN;
  while (p < bound && -2.0 / 3.0 * kk * kk * kk / ((double)p * p) + 3 * kk + 0.5 * p * p < 0) p++;
  return p < bound ? p : bound;
}

/* K0 := K: the rows and columns still in K0, then the added ones, factored
 * by LU; the borders emptied. Returns 0, or -1 with the message when K is
 * singular. */
static int refactor(revised_basis *b) {
  int n = b->n, k = b->k, nr = 0, nc = 0;
  for (int i = 0; i < b->k0; i++) b->r0pos[b->r0[i]] = -1;
  for (int j = 0; j < b->k0; j++) b->c0pos[b->c0[j] - n] = -1;
  for (int i = 0; i < b->k0; i++)
    if (!b->r0dead[i]) b->r0[nr++] = b->r0[i];
  for (int j = 0; j < b->k0; j++)
    if (!b->c0dead[j]) b->c0[nc++] = b->c0[j];
  for (int t = 0; t < b->sr; t++)
    if (b->brow[t] >= 0) b->r0[nr++] = b->brow[t];
  for (int t = 0; t < b->sc; t++)
    if (b->bcol[t] >= 0) b->c0[nc++] = b->bcol[t];
  if (nr != k || nc != k) {
    sb_errorf(b->msg, b->msg_size, "lemke (revised form): K's bookkeeping lost count (%d rows, %d columns, k = %d)",
              nr, nc, k);
    return -1;
  }
  double kmax = 0;
  for (int j = 0; j < k; j++) {
    const double *col = structural_column(b, b->c0[j]); /* a basic z's: no entry is computed */
    double *f = b->F + (size_t)j * k;
    for (int i = 0; i < k; i++) {
      f[i] = -col[b->r0[i]];
      kmax = fmax(kmax, fabs(f[i]));
    }
    b->c0pos[b->c0[j] - n] = j;
    b->c0dead[j] = 0;
  }
  for (int i = 0; i < k; i++) {
    b->r0pos[b->r0[i]] = i;
    b->r0dead[i] = 0;
  }
  b->k0 = k;
  b->sr = b->sc = 0;
  b->yent_for = -1;
  b->kmax = kmax;
  b->cap = border_cap(k, b->lds);
  b->refactors++;
  if (k) {
    int info = LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, k, k, b->F, k, b->piv);
    if (info) {
      sb_errorf(b->msg, b->msg_size,
                "lemke (revised form): the basis block K (%d x %d) is singular at its refactorization after %d "
                "pivots (dgetrf info %d)",
                k, k, *b->pivots, info);
      return -1;
    }
  }
  return 0;
}

/* The entering column's entries on K0's rows into x (K0's removed rows
 * included: their slacks absorb them, and so x is the Y column the entering
 * variable needs if it becomes an added column), then K0^-1 x. */
static void k0_solve_entering(revised_basis *b, int e, double *x) {
  int k0 = b->k0;
  if (e < b->n) {
    memset(x, 0, (size_t)k0 * sizeof(double));
    if (b->r0pos[e] >= 0) x[b->r0pos[e]] = 1;
  } else {
    const double *col = structural_column(b, e);
    for (int i = 0; i < k0; i++) x[i] = -col[b->r0[i]];
  }
  if (k0) LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, 'N', k0, 1, b->F, k0, b->piv, x, k0);
}

/* uc = K^-1 a_e on the rows R, by the bordered system: K0 solve, S solve,
 * one product with Y. Keeps K0^-1 a_e in yent. */
static void solve_entering(revised_basis *b, int e) {
  int n = b->n, k0 = b->k0, s = b->sc;
  double *y = b->yent, *x0 = b->x0, *rb = b->rb;
  k0_solve_entering(b, e, y);
  b->yent_for = e;
  memcpy(x0, y, (size_t)k0 * sizeof(double));
  if (s) {
    const double *col = e < n ? NULL : structural_column(b, e);
    for (int t = 0; t < s; t++) {
      int w = b->brow[t];
      if (w >= 0)
        rb[t] = (col ? -col[w] : w == e) - (k0 ? cblas_ddot(k0, b->V + (size_t)t * n, 1, y, 1) : 0);
      else
        rb[t] = -y[-1 - w];
    }
    LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, 'N', s, 1, b->Sf, s, b->spiv, rb, s);
    if (k0) cblas_dgemv(CblasColMajor, CblasNoTrans, k0, s, -1.0, b->Y, n, rb, 1, 1.0, x0, 1);
  }
  for (int j = 0; j < k0; j++)
    if (!b->c0dead[j]) b->uc[b->colpos[b->c0[j] - n]] = x0[j];
  for (int t = 0; t < s; t++)
    if (b->bcol[t] >= 0) b->uc[b->colpos[b->bcol[t] - n]] = rb[t];
}

/* uw += Mc uc. With entries whose apply costs fewer multiply-adds than the
 * n x k product (a contact LCP's kept operator: W's m x m product plus O(n)
 * for the pyramids, m three times the kept contacts, n = r + 2 times them),
 * through apply on uc scattered to the basic z's indices, the covering
 * vector's share (z0's column) added apart: item 1 of issue 15, the pivot
 * O(m^2 + k^2) instead of O(n k). The doubles differ from the formed
 * columns' product by rounding only. */
static void add_basic_columns(revised_basis *b, int k, const double *uc, double *uw) {
  int n = b->n;
  if (!(b->ent && b->ent->apply && b->ent->apply_cost > 0 && b->ent->apply_cost < (double)n * k)) {
    cblas_dgemv(CblasColMajor, CblasNoTrans, n, k, 1.0, b->Mc, n, uc, 1, 1.0, uw, 1);
    return;
  }
  double covering = 0;
  memset(b->xa, 0, (size_t)n * sizeof(double));
  for (int c = 0; c < k; c++) {
    int id = b->kcol[c];
    if (id == 2 * n)
      covering = uc[c];
    else
      b->xa[id - n] = uc[c];
  }
  b->ent->apply(b->ent->ctx, b->xa, uw, uw);
  if (covering != 0) cblas_daxpy(n, covering, b->d, 1, uw, 1);
}

/* dir = B^-1 a_e by slot, a_e the column of variable e in [I, -M, -d]:
 * the basic z's part uc from K (K uc = a_e on the rows R), the basic w's
 * part uw = a_e + Mc uc (B's column of a basic z is -Mc's), zero on the
 * rows R in exact arithmetic: its size there is the solve's residual. A
 * residual above REFACTOR_RESIDUAL refactors K and solves again. Returns 0,
 * or -1 with the message. */
static int direction(revised_basis *b, int e) {
  int n = b->n;
  double *uc = b->uc, *uw = b->uw;
  const double *col = e < n ? NULL : structural_column(b, e);
  for (int attempt = 0;; attempt++) {
    int k = b->k;
    solve_entering(b, e);
    if (col)
      for (int i = 0; i < n; i++) uw[i] = -col[i];
    else {
      memset(uw, 0, (size_t)n * sizeof(double));
      uw[e] = 1;
    }
    if (k) add_basic_columns(b, k, uc, uw);
    double res = 0, bmax = 0, xmax = 0;
    for (int i = 0; i < n; i++)
      if (b->rowpos[i] >= 0) {
        res = fmax(res, fabs(uw[i]));
        bmax = fmax(bmax, col ? fabs(col[i]) : i == e);
      }
    for (int c = 0; c < k; c++) xmax = fmax(xmax, fabs(uc[c]));
    double scale = bmax + k * b->kmax * xmax, rel = scale > 0 ? res / scale : res;
    if (rel <= REFACTOR_RESIDUAL || ((b->sc == 0 || attempt) && isfinite(rel))) {
      b->worst = fmax(b->worst, rel);
      break;
    }
    if (attempt) {
      sb_errorf(b->msg, b->msg_size, "lemke (revised form): a solve with K (k = %d) freshly factored is not finite",
                k);
      return -1;
    }
    if (refactor(b)) return -1;
  }
  for (int s = 0; s < n; s++) {
    int id = b->basis[s];
    b->dir[s] = id < n ? uw[id] : uc[b->colpos[id - n]];
  }
  return 0;
}

/* z0's column when it first enters: B^-1 (-d) = -1 in every slot, by the
 * choice of d (all ones for the cold basis, B 1 for a start basis), set
 * exactly as the tableau sets it. */
static void direction_of_covering(revised_basis *b) {
  for (int c = 0; c < b->k; c++) b->uc[c] = -1;
  for (int s = 0; s < b->n; s++) b->dir[s] = -1;
}

/* S's entry of border row r and border column t: C - V Y. */
static double schur_entry(const revised_basis *b, int r, int t) {
  int w = b->brow[r], id = b->bcol[t];
  const double *yt = b->Y + (size_t)t * b->n;
  double c = w >= 0 && id >= 0 ? -structural_entry(b, id, w) : 0;
  if (w < 0) return c - yt[-1 - w];
  return c - (b->k0 ? cblas_ddot(b->k0, b->V + (size_t)r * b->n, 1, yt, 1) : 0);
}

static void add_row_border(revised_basis *b, int w) {
  int r = b->sr++, n = b->n;
  b->brow[r] = w;
  if (w >= 0)
    for (int j = 0; j < b->k0; j++) b->V[(size_t)r * n + j] = -structural_entry(b, b->c0[j], w);
  for (int t = 0; t < b->sc; t++) b->S[r + (size_t)t * b->lds] = schur_entry(b, r, t);
}

/* ycol: K0^-1 of the column's entries on K0's rows. */
static void add_col_border(revised_basis *b, int id, const double *ycol) {
  int t = b->sc++;
  b->bcol[t] = id;
  memcpy(b->Y + (size_t)t * b->n, ycol, (size_t)b->k0 * sizeof(double));
  for (int r = 0; r < b->sr; r++) b->S[r + (size_t)t * b->lds] = schur_entry(b, r, t);
}

/* The last border row fills row r's place. */
static void drop_row_border(revised_basis *b, int r) {
  int last = --b->sr, n = b->n;
  if (r == last) return;
  b->brow[r] = b->brow[last];
  memcpy(b->V + (size_t)r * n, b->V + (size_t)last * n, (size_t)b->k0 * sizeof(double));
  for (int t = 0; t < b->sc; t++)
    b->S[r + (size_t)t * b->lds] = b->S[last + (size_t)t * b->lds];
}

static void drop_col_border(revised_basis *b, int t) {
  int last = --b->sc;
  if (t == last) return;
  b->bcol[t] = b->bcol[last];
  memcpy(b->Y + (size_t)t * b->n, b->Y + (size_t)last * b->n, (size_t)b->k0 * sizeof(double));
  memcpy(b->S + (size_t)t * b->lds, b->S + (size_t)last * b->lds,
         (size_t)b->sr * sizeof(double));
}

static int find_border(const int *list, int count, int v) {
  for (int t = 0; t < count; t++)
    if (list[t] == v) return t;
  return -1;
}

/* w_w becomes nonbasic: a K0 row removed comes back (its slack dropped),
 * another is a new border row. */
static void add_row(revised_basis *b, int w) {
  int i = b->r0pos[w];
  b->rowpos[w] = 1;
  if (i >= 0) {
    b->r0dead[i] = 0;
    drop_col_border(b, find_border(b->bcol, b->sc, -1 - i));
  } else
    add_row_border(b, w);
}

/* w_w becomes basic: a K0 row gets a slack (ycol: K0^-1 e_i), an added row is
 * dropped. */
static void remove_row(revised_basis *b, int w, const double *ycol) {
  int i = b->r0pos[w];
  b->rowpos[w] = -1;
  if (i >= 0) {
    b->r0dead[i] = 1;
    add_col_border(b, -1 - i, ycol);
  } else
    drop_row_border(b, find_border(b->brow, b->sr, w));
}

/* id becomes a basic z (or z0): K's new last column; a K0 column comes back
 * (its pin dropped), another is a new border column (ycol: K0^-1 of its
 * entries on K0's rows). */
static void add_col(revised_basis *b, int id, const double *ycol) {
  int n = b->n, k = b->k, j = b->c0pos[id - n];
  memcpy(b->Mc + (size_t)k * n, structural_column(b, id), (size_t)n * sizeof(double));
  b->kcol[k] = id;
  b->colpos[id - n] = k;
  b->k = k + 1;
  if (b->k > b->kmax_path) b->kmax_path = b->k;
  if (j >= 0) {
    b->c0dead[j] = 0;
    drop_row_border(b, find_border(b->brow, b->sr, -1 - j));
  } else
    add_col_border(b, id, ycol);
}

/* id leaves the basic z's: K's last column fills its place; a K0 column is
 * pinned, an added column dropped. */
static void remove_col(revised_basis *b, int id) {
  int n = b->n, p = b->colpos[id - n], last = b->k - 1, j = b->c0pos[id - n];
  if (p != last) {
    memcpy(b->Mc + (size_t)p * n, b->Mc + (size_t)last * n, (size_t)n * sizeof(double));
    b->kcol[p] = b->kcol[last];
    b->colpos[b->kcol[p] - n] = p;
  }
  b->colpos[id - n] = -1;
  b->k = last;
  if (j >= 0) {
    b->c0dead[j] = 1;
    add_row_border(b, -1 - j);
  } else
    drop_col_border(b, find_border(b->bcol, b->sc, id));
}

/* After a pivot's changes: S factored afresh, or K refactored when the
 * borders reach the cap or S is singular in floating point. */
static int settle_borders(revised_basis *b) {
  int s = b->sc;
  if (b->sr != s) {
    sb_errorf(b->msg, b->msg_size, "lemke (revised form): %d border rows against %d columns", b->sr, s);
    return -1;
  }
  if (s >= b->cap) return refactor(b);
  if (!s) return 0;
  for (int t = 0; t < s; t++)
    memcpy(b->Sf + (size_t)t * s, b->S + (size_t)t * b->lds, (size_t)s * sizeof(double));
  if (LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, s, s, b->Sf, s, b->spiv)) return refactor(b);
  return 0;
}

/* The pivot on slot r for entering e, with dir = B^-1 a_e (direction, or
 * direction_of_covering): the basic values move along dir, and K's factor
 * follows its change. Returns 0, or -1 with the message. */
static int revised_pivot(revised_basis *b, int r, int e) {
  int n = b->n, lv = b->basis[r];
  double pe = b->dir[r], t = b->bbar[r] / pe;
  for (int s = 0; s < n; s++) b->bbar[s] -= t * b->dir[s];
  b->bbar[r] = t;
  if (b->yent_for != e) { /* z0's first column is set, not solved */
    k0_solve_entering(b, e, b->yent);
    b->yent_for = e;
  }
  if (e >= n) {
    if (lv < n) add_row(b, lv);
    else remove_col(b, lv);
    add_col(b, e, b->yent);
  } else {
    remove_row(b, e, b->yent);
    if (lv < n) add_row(b, lv);
    else remove_col(b, lv);
  }
  b->yent_for = -1;
  b->basis[r] = e;
  b->slot[e] = r;
  b->slot[lv] = -1;
  return lv == 2 * n ? 0 : settle_borders(b); /* z0 leaving ends the path */
}

/* Column k of B^-1 by slot into out: a unit column for a basic w_k.
 * Returns 0, or -1 with the message. */
static int inverse_column(revised_basis *b, int k, double *out) {
  if (b->rowpos[k] < 0) {
    memset(out, 0, (size_t)b->n * sizeof(double));
    out[b->slot[k]] = 1;
    return 0;
  }
  if (direction(b, k)) return -1;
  memcpy(out, b->dir, (size_t)b->n * sizeof(double));
  return 0;
}

/* The start basis of a guess's set, as lemke_start in lcp.c builds it: z_i
 * for w_i in index order, passes until nothing more pivots in, an index whose
 * pivot is below LEMKE_START_PIVOT_TOL of its column left out; then the
 * covering vector d = B 1. Returns 1, 0 when nothing pivoted in, -1 with
 * the message on a failure of K's factor. */
static int revised_start(revised_basis *b, const int *start, double *d, int *pivots) {
  int n = b->n;
  for (int made = 1; made;) {
    made = 0;
    for (int i = 0; i < n; i++) {
      if (!start[i] || b->basis[i] != i) continue;
      if (direction(b, n + i)) return -1;
      double big = 0;
      for (int s = 0; s < n; s++) big = fmax(big, fabs(b->dir[s]));
      if (!(fabs(b->dir[i]) > SB_LEMKE_START_PIVOT_TOL * big)) continue;
      if (revised_pivot(b, i, n + i)) return -1;
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

/* The path's end: the factor's record for sb_lcp_work (rv_worst_residual,
 * rv_refactors, rv_kmax), then the status. */
static sb_lcp_status revised_end(sb_lcp_work *wk, const revised_basis *b, sb_lcp_status st) {
  wk->rv_worst_residual = b->worst;
  wk->rv_refactors = b->refactors;
  wk->rv_kmax = b->kmax_path;
  return st;
}

sb_lcp_status sb_lemke_revised(sb_lcp_work *wk, int n, const double *M, int ldm, const sb_lcp_entries *entries,
                               const double *q, const int *start, double *z, int max_pivots, int *pivots, int *warm,
                               char *msg, int msg_size) {
  /* The factor's arrays in the chain's scratch: the factor cache's (forgotten
   * here; the chain clears it before its solvers run, a direct call too) and
   * the tableau's. T holds Mc (n x k, k <= n) and, past it, two n-vectors; Y
   * and V take at most lds <= n columns of HtH and LU; S and Sf, lds x lds,
   * fit a cache slot's n x SB_LCP_BORDER_MAX arrays. */
  wk->fc[0].valid = wk->fc[1].valid = 0;
  wk->fc_next = 0;
  wk->fc_solved = -1;
  int lds = (int)sqrt((double)SB_LCP_BORDER_MAX * n);
  lds = lds < n ? lds : n;
  lds = lds < SB_LEMKE_BORDER_MAX ? lds : SB_LEMKE_BORDER_MAX;
  revised_basis b = {.n = n, .ldm = ldm, .k = 0, .M = M, .d = wk->d, .ent = entries, .ecol = wk->rv_col,
                     .ecol_id = -1, .Mc = wk->T, .xa = wk->ebound, .bbar = wk->ztry,
                     .uc = wk->rowbuf, .uw = wk->colbuf, .dir = wk->da, .basis = wk->basis, .slot = wk->rv_slot,
                     .kcol = wk->rv_kcol, .colpos = wk->rv_colpos, .rowpos = wk->rv_rowpos, .k0 = 0,
                     .piv = wk->fc[0].piv, .r0 = wk->fc[0].set, .c0 = wk->fc[1].set, .r0pos = wk->rv_r0pos,
                     .c0pos = wk->nonbasis, .r0dead = wk->fc[0].bset, .c0dead = wk->idx, .F = wk->H, .sr = 0,
                     .sc = 0, .lds = lds, .cap = border_cap(0, lds), .brow = wk->fc[1].bset, .bcol = wk->fc[1].bpos,
                     .spiv = wk->fc[1].piv, .Y = wk->HtH, .V = wk->LU, .S = wk->fc[0].Y, .Sf = wk->fc[0].Mdc,
                     .yent = wk->db, .x0 = wk->zloc, .rb = wk->T + (size_t)n * (n + 1), .yent_for = -1, .kmax = 0,
                     .worst = 0, .refactors = 0, .kmax_path = 0, .pivots = pivots, .msg = msg, .msg_size = msg_size};
  double *d = wk->d, *ratio_k = wk->g, *binv = wk->phitry, *col = wk->T + (size_t)n * n;
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
    b.r0pos[i] = -1;
    b.c0pos[i] = -1;
  }
  b.slot[2 * n] = -1;
  b.colpos[n] = -1;
  b.c0pos[n] = -1;
  int from_set = 0;
  for (int i = 0; start && i < n; i++) from_set |= start[i] != 0;
  if (from_set) {
    int got = revised_start(&b, start, d, pivots);
    if (got < 0) return revised_end(wk, &b, SB_LCP_STALLED);
    if (!got) {
      sb_errorf(msg, msg_size, "lemke: no index of the guess's set pivots in (its M_SS singular)");
      return revised_end(wk, &b, SB_LCP_STALLED);
    }
    if (warm) *warm = 1;
  }
  int rmin = 0;
  for (int i = 1; i < n; i++)
    if (b.bbar[i] <= b.bbar[rmin]) rmin = i; /* ties: the largest index is the lexicographic minimum */
  if (b.bbar[rmin] >= 0) {
    basic_z(&b, z);
    return revised_end(wk, &b, SB_LCP_SOLVED);
  }
  direction_of_covering(&b);
  int row = rmin, ent = 2 * n;
  for (;;) {
    int leaving = b.basis[row];
    if (revised_pivot(&b, row, ent)) return revised_end(wk, &b, SB_LCP_STALLED);
    (*pivots)++;
    if (leaving == 2 * n) break; /* z0 left the basis: complementary solution */
    if (*pivots >= max_pivots) {
      sb_errorf(msg, msg_size, "lemke: %d pivots without a solution", *pivots);
      return revised_end(wk, &b, SB_LCP_MAX_ITER);
    }
    ent = leaving < n ? leaving + n : leaving - n;
    if (direction(&b, ent)) return revised_end(wk, &b, SB_LCP_STALLED);
    int nt = sb_lemke_ratio_test(n, b.dir, 1.0, b.bbar, ties);
    if (nt == 0) {
      sb_errorf(msg, msg_size, "lemke: secondary ray after %d pivots (no solution found)", *pivots);
      return revised_end(wk, &b, SB_LCP_RAY);
    }
    row = -1;
    for (int t = 0; t < nt; t++)
      if (b.basis[ties[t]] == 2 * n) row = ties[t]; /* let z0 leave when it can */
    /* the entering column is kept apart while B^-1's columns are formed */
    if (row < 0 && nt > 1) memcpy(col, b.dir, (size_t)n * sizeof(double));
    int spoiled = 0; /* dir overwritten by a column of B^-1 */
    for (int k = 0; row < 0 && k < n && nt > 1; k++) {
      spoiled |= b.rowpos[k] >= 0;
      if (inverse_column(&b, k, binv)) return revised_end(wk, &b, SB_LCP_STALLED);
      nt = sb_lemke_lexico_step(n, binv, col, 1.0, ties, nt, ratio_k);
    }
    if (row < 0) row = ties[0];
    if (spoiled && direction(&b, ent)) return revised_end(wk, &b, SB_LCP_STALLED); /* for the pivot */
  }
  basic_z(&b, z);
  return revised_end(wk, &b, SB_LCP_SOLVED);
}

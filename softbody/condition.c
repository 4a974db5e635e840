/* The three conditioning stages of the CUSP paper (§III-D). */
#include "condition.h"

#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "lcp_internal.h"
#include "sb_util.h"
#include "sb_vector.h"

static int count_kept(int m, const int *keep) {
  int k = 0;
  for (int i = 0; i < m; i++) k += keep[i] != 0;
  return k;
}

int sb_rank_select_work_size(int N, int m) {
  /* reflector scalars, a copy of St, then LAPACK's blocked workspaces
   * (dgeqp3: 2 m + (m + 1) nb, dormqr: m nb) */
  int nb = 64;
  return m + N * m + 3 * N + 2 * m + (2 * m + 1) * nb + 8;
}

/* C <- H C for the one reflector H = I - tau v v^T (v[0] taken as 1; H^T = H)
 * of m rows, on n columns of leading dimension ld: what dormqr does for a
 * single reflector (its dorm2r path calls dlarf just so, the same doubles),
 * without the blocking query (ilaenv) that dormqr pays on every call.
 * work: n doubles. */
static void apply_reflector(int m, int n, double *v, double tau, double *C, int ld, double *work) {
  lapack_int lm = m, ln = n, one = 1, ldc = ld;
  double v0 = v[0];
  v[0] = 1;
  LAPACK_dlarf("L", &lm, &ln, v, &one, &tau, C, &ldc, work);
  v[0] = v0;
}

/* Marks as kept, among the `ncol` columns `cols` (leading dimension N), seen
 * from row r0 on, those whose |R_kk| exceeds tol; returns the number kept or
 * -1. pivoted: the column-pivoted QR (|R_kk| decreasing, so it stops at the
 * first small one). Otherwise greedy in the given order: a column is kept
 * when its part outside the span of the kept ones exceeds tol, and a dropped
 * column adds no reflector. (A plain QR in order would build a reflector from
 * a dependent column's round-off and rotate part of the next columns out of
 * sight: two contacts, then a third on their line, then an independent
 * fourth that it dropped.) force (greedy only, may be NULL): columns kept
 * even when dependent; they add no reflector. The independent kept columns'
 * reflectors end in the first `kept` columns (the return value), tau in tau.
 * work: n doubles, and GREEDY_PANEL (GREEDY_PANEL + the columns) for the
 * block form (else the loop). */
enum { GREEDY_PANEL = 16, GREEDY_MIN_ROWS = 32 };
static int qr_keep(int N, int r0, int ncol, double *cols, const int *colid, double tol, int pivoted,
                   const int *force, int *keep, double *tau, int *jpvt, double *work, int lwork) {
  int rows = N - r0;
  if (ncol == 0 || rows <= 0) return 0;
  if (pivoted) {
    for (int j = 0; j < ncol; j++) jpvt[j] = 0;
    if (LAPACKE_dgeqp3_work(LAPACK_COL_MAJOR, rows, ncol, cols + r0, N, jpvt, tau, work, lwork)) return -1;
    int kept = 0, kmax = rows < ncol ? rows : ncol;
    for (int k = 0; k < kmax && fabs(cols[r0 + (size_t)k * N + k]) > tol; k++) {
      keep[colid[jpvt[k] - 1]] = 1;
      kept++;
    }
    return kept;
  }
  /* Panels of GREEDY_PANEL columns, as dgeqrf's: within a panel a kept
   * column's reflector is applied at once to the panel's later columns (one
   * reflector product over them all: each column meets the same reflectors
   * in the same order as under a product of its own); after the panel, its
   * reflectors are applied to every later column together, in block form
   * (dlarft, dlarfb: matrix products where one reflector at a time makes a
   * rank-one update per reflector over all later columns, which dominated
   * stage 1 along an arm, about a hundred contacts in the priority group
   * and a dozen kept). Columns with trailing rows zero (a rod whitened by
   * its upper factor, the forced run ordered by rows) make one panel of all
   * the columns, one reflector at a time over all later columns as before:
   * dlarf applies each over the rows it fills only, which the block form
   * does not, and a reflector applied in two parts costs two calls; so do
   * fewer than GREEDY_MIN_ROWS rows, where the block form's short matrix
   * products cost more than the rank-one updates they replace. */
  int kept = 0, panel = rows >= GREEDY_MIN_ROWS ? GREEDY_PANEL : ncol;
  for (int j = 0; j < ncol && panel < ncol; j++)
    if (cols[(size_t)j * N + N - 1] == 0) panel = ncol;
  for (int p0 = 0; p0 < ncol; p0 += panel) {
    int p1 = panel < ncol - p0 ? p0 + panel : ncol, k0 = kept;
    for (int j = p0; j < p1; j++) {
      double *c = cols + (size_t)j * N + r0;
      if (kept == rows) { /* full rank: every later column depends */
        if (force && force[colid[j]]) keep[colid[j]] = 2;
        continue;
      }
      if (!(cblas_dnrm2(rows - kept, c + kept, 1) > tol)) {
        if (force && force[colid[j]]) keep[colid[j]] = 2; /* kept, but adds nothing to the span */
        continue;
      }
      LAPACKE_dlarfg_work(rows - kept, c + kept, c + kept + 1, 1, tau + kept);
      if (j + 1 < p1) apply_reflector(rows - kept, p1 - j - 1, c + kept, tau[kept], c + N + kept, N, work);
      if (j != kept) memcpy(cols + (size_t)kept * N + r0, c, (size_t)rows * sizeof(double));
      keep[colid[j]] = 1;
      kept++;
    }
    int nr = kept - k0, nlater = ncol - p1;
    if (nr == 0 || nlater == 0) continue;
    double *V = cols + (size_t)k0 * N + r0 + k0, *C = cols + (size_t)p1 * N + r0 + k0;
    int block = nr > 1 && (size_t)nr * (size_t)(nr + nlater) <= (size_t)lwork;
    for (int i = 0; block && i < nr; i++) block = V[(size_t)i * N + rows - k0 - 1] != 0;
    if (block) {
      double *T = work, *W = work + (size_t)nr * nr;
      if (LAPACKE_dlarft_work(LAPACK_COL_MAJOR, 'F', 'C', rows - k0, nr, V, N, tau + k0, T, nr) ||
          LAPACKE_dlarfb_work(LAPACK_COL_MAJOR, 'L', 'T', 'F', 'C', rows - k0, nlater, nr, V, N, T, nr, C, N, W,
                              nlater))
        return -1;
    } else {
      for (int i = 0; i < nr; i++)
        apply_reflector(rows - k0 - i, nlater, V + (size_t)i * N + i, tau[k0 + i], C + i, N, work);
    }
  }
  return kept;
}

/* C <- Q^T C for the k reflectors stored below the diagonal of the first
 * k columns of A (leading dimension N, tau theirs) on the n columns of C:
 * dormqr's product. dormqr applies up to 32 reflectors one by one
 * (dorm2r, dlarf on each), the doubles of the loop here; above, it blocks
 * them (dlarft, then dlarfb), whose setup grows as k^2 N whatever n is,
 * while the loop costs k N n and dlarf keeps to the rows a reflector
 * fills. So the loop also for few columns, dormqr for many. work: n
 * doubles for the loop; dormqr's lwork. Returns nonzero on a LAPACK
 * failure. */
static int apply_first_group_qt(int N, int k, double *A, const double *tau, int n, double *C, double *work,
                                int lwork) {
  enum { DORMQR_UNBLOCKED_UP_TO = 32, LOOP_COLUMNS_PER_REFLECTOR = 6 };
  if (k == 0 || n == 0) return 0;
  if (k > DORMQR_UNBLOCKED_UP_TO && LOOP_COLUMNS_PER_REFLECTOR * n > k)
    return LAPACKE_dormqr_work(LAPACK_COL_MAJOR, 'L', 'T', N, n, k, A, N, tau, C, N, work, lwork) != 0;
  for (int i = 0; i < k; i++) apply_reflector(N - i, n, A + (size_t)i * N + i, tau[i], C + i, N, work);
  return 0;
}

/* The rows column k of St fills: one past its last nonzero entry. */
static int filled_rows(int N, const double *column) {
  int h = N;
  while (h > 0 && column[h - 1] == 0) h--;
  return h;
}

/* Reorders the leading run of forced columns of colid[0..na) (those before
 * the first unforced one) by the rows they fill, fewest first, keeping the
 * order of equal ones; rows: work, na ints. The run is kept whatever its
 * order and the span it leaves to the columns after it is the same (where
 * the run holds a dependent column, up to round-off below the tolerance:
 * which of the run adds the reflector may differ), so the order matters
 * only to the cost: a column whose rows past its last filled
 * one are zero keeps them zero under the reflectors of columns filling no
 * more rows, so its own reflector stays within its rows, and dlarf, which
 * trims a reflector's trailing zeros, applies it over those rows only (a
 * rod whitened by its upper factor: the contact at element i fills the
 * rows of the elements up to i). With every row filled (a lower factor's
 * whitening), the order is left as it is. */
static void order_forced_run_by_rows(int N, int na, const double *St, const int *force, int *colid, int *rows) {
  int run = 0;
  while (run < na && force[colid[run]]) run++;
  for (int a = 0; a < run; a++) rows[a] = filled_rows(N, St + (size_t)colid[a] * N);
  for (int a = 1; a < run; a++) /* insertion sort, stable */
    for (int b = a; b > 0 && rows[b] < rows[b - 1]; b--) {
      int t = colid[b], h = rows[b];
      colid[b] = colid[b - 1];
      rows[b] = rows[b - 1];
      colid[b - 1] = t;
      rows[b - 1] = h;
    }
}

/* Column k of St (N x m) becomes the column colid[k] was, in place, one
 * cycle of the permutation at a time through one column of scratch (tmp):
 * a column already in its place is not moved and no column is moved twice
 * (gathering from a whole copy of St moves every column twice). seen: m
 * ints of scratch. */
static void permute_columns(int N, int m, double *St, const int *colid, int *seen, double *tmp) {
  size_t bytes = (size_t)N * sizeof(double);
  for (int k = 0; k < m; k++) seen[k] = colid[k] == k;
  for (int k = 0; k < m; k++) {
    if (seen[k]) continue;
    memcpy(tmp, St + (size_t)k * N, bytes);
    int j = k;
    for (;;) {
      seen[j] = 1;
      int from = colid[j];
      if (from == k) {
        memcpy(St + (size_t)j * N, tmp, bytes);
        break;
      }
      memcpy(St + (size_t)j * N, St + (size_t)from * N, bytes);
      j = from;
    }
  }
}

int sb_rank_select(int N, int m, double *St, const int *priority, const double *order, double eps,
                   int *keep, double *work, int lwork, int *iwork) {
  return sb_rank_select_forced(N, m, St, priority, order, NULL, eps, keep, work, lwork, iwork);
}

int sb_rank_select_forced(int N, int m, double *St, const int *priority, const double *order, const int *force,
                          double eps, int *keep, double *work, int lwork, int *iwork) {
  for (int k = 0; k < m; k++) keep[k] = 0;
  if (m == 0 || N == 0) return 0;
  /* priority group first (by decreasing order key when given), then the rest */
  int *colid = iwork, *jpvt = iwork + m;
  int na = 0;
  for (int k = 0; k < m; k++)
    if (priority && priority[k]) colid[na++] = k;
  if (order)
    for (int a = 1; a < na; a++) /* insertion sort: m is small */
      for (int b = a; b > 0 && order[colid[b]] > order[colid[b - 1]]; b--) {
        int t = colid[b];
        colid[b] = colid[b - 1];
        colid[b - 1] = t;
      }
  if (order && force) order_forced_run_by_rows(N, na, St, force, colid, jpvt);
  int nb = na;
  for (int k = 0; k < m; k++)
    if (!(priority && priority[k])) colid[nb++] = k;
  double *tau = work, *buf = work + m, *qwork = buf + (size_t)N * m;
  int qlwork = lwork - m - N * m;
  if (qlwork < 3 * N + 1 + m) return -1;
  permute_columns(N, m, St, colid, jpvt, buf);
  /* |R_11| of a single pivoted QR would be the largest column norm */
  double rmax = 0;
  for (int k = 0; k < m; k++) rmax = fmax(rmax, cblas_dnrm2(N, St + (size_t)k * N, 1));
  double tol = eps * rmax;
  int kept1 = qr_keep(N, 0, na, St, colid, tol, order == NULL, order ? force : NULL, keep, tau, jpvt, qwork, qlwork);
  if (kept1 < 0) return -1;
  int nrest = m - na;
  if (nrest == 0) return count_kept(m, keep);
  double *rest = St + (size_t)na * N;
  if (na > 0) {
    /* Remove from the second group what the first spans: apply Q^T of the
     * first group's kept reflectors (the first kept1 columns, either way)
     * and look only below the rows they fill. */
    if (apply_first_group_qt(N, kept1, St, tau, nrest, rest, qwork, qlwork)) return -1;
    int kept2 = qr_keep(N, kept1, nrest, rest, colid + na, tol, 1, NULL, keep, tau + kept1, jpvt, qwork, qlwork);
    return kept2 < 0 ? -1 : count_kept(m, keep);
  }
  int kept2 = qr_keep(N, 0, nrest, rest, colid, tol, 1, NULL, keep, tau, jpvt, qwork, qlwork);
  return kept2 < 0 ? -1 : count_kept(m, keep);
}

/* s^(-1/4), rounded to a power of two: scaling by powers of two is exact, so
 * the scaled problem is the problem (no rounding enters with Dr, Dc), and
 * the iteration reaches a fixed point, every row and column l2 norm within
 * [1/2, 2], in a few sweeps instead of creeping towards 1 (10 sweeps of
 * about 2 us at n = 48 where 3 or 4 now do). */
static double pow2_inv_fourth_root(double s) {
  if (!(s > 0) || !isfinite(s)) return 1;
  /* the exponent from the bits (frexp and ldexp were a fifth of Ruiz's
   * cost, called twice per row and column per sweep) */
  uint64_t bits;
  memcpy(&bits, &s, sizeof bits);
  int e, biased = (int)(bits >> 52); /* s > 0: no sign bit */
  if (biased == 0)
    frexp(s, &e); /* subnormal */
  else
    e = biased - 1022; /* s in [2^(e-1), 2^e) */
  /* round((e - 1) / 4) half up = floor((e + 1) / 4), e in -1073..1024 */
  int k = e + 1 >= 0 ? (e + 1) / 4 : -((-(e + 1) + 3) / 4);
  /* 2^-k, k in -256..256: a normal number */
  uint64_t out = (uint64_t)(1023 - k) << 52;
  double r;
  memcpy(&r, &out, sizeof r);
  return r;
}

int sb_ruiz_scale_ok(double s) {
  uint64_t bits;
  memcpy(&bits, &s, sizeof bits);
  int biased = (int)(bits >> 52); /* sign bit included: negative fails */
  return (bits & ((UINT64_C(1) << 52) - 1)) == 0 && biased >= 1023 - 64 && biased <= 1023 + 64;
}

/* The passes of a sweep over one column a (n entries), each with its
 * operands declared unaliased (restrict) so that the compiler vectorizes
 * them: the arithmetic and its order are the source's, entry by entry, so
 * the doubles are the same as the plain loops'. f, fnext: the row factors
 * and the next sweep's row sums of squares (work), never a column of A. */

/* f[i] += a[i]^2 (a row norm pass, one column) */
SB_CLONE_INLINE void col_add_squares(int n, const double *restrict a, double *restrict f) {
  for (int i = 0; i < n; i++) f[i] += a[i] * a[i];
}

/* a[i] = src[i], then f[i] += a[i]^2: the copy of a cold start's matrix
 * taken in its first row norm pass */
SB_CLONE_INLINE void col_copy_add_squares(int n, const double *restrict src, double *restrict a, double *restrict f) {
  for (int i = 0; i < n; i++) {
    a[i] = src[i];
    f[i] += a[i] * a[i];
  }
}

/* a[i] = src[i] * (dr[i] * cj), then f[i] += a[i]^2: a warm start's
 * scaling of a copy, taken in its first row norm pass */
SB_CLONE_INLINE void col_copy_start_add_squares(int n, const double *restrict src, double *restrict a,
                                                const double *restrict dr, double cj, double *restrict f) {
  for (int i = 0; i < n; i++) {
    a[i] = src[i] * (dr[i] * cj); /* powers of two: exact in either order */
    f[i] += a[i] * a[i];
  }
}

/* a[i] = src[i] * (dr[i] * cj): a column scaled into scratch */
SB_CLONE_INLINE void col_copy_start(int n, const double *restrict src, double *restrict a, const double *restrict dr,
                                    double cj) {
  for (int i = 0; i < n; i++) a[i] = src[i] * (dr[i] * cj); /* powers of two: exact in either order */
}

/* a[i] *= dr[i] * cj, then f[i] += a[i]^2 (a warm start's scaling) */
SB_CLONE_INLINE void col_start_add_squares(int n, double *restrict a, const double *restrict dr, double cj,
                                  double *restrict f) {
  for (int i = 0; i < n; i++) {
    a[i] *= dr[i] * cj; /* powers of two: exact in either order */
    f[i] += a[i] * a[i];
  }
}

/* rows scaled, a[i] *= f[i], and the column's sum of squares (four partial
 * sums: the add chain, not the arithmetic, bounds a single sum) */
SB_CLONE_INLINE double col_scale_rows(int n, double *restrict a, const double *restrict f) {
  sb_v4d s4 = {0, 0, 0, 0}; /* lane l: the entries i = l mod 4, in order */
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    sb_v4d x, y;
    memcpy(&x, a + i, sizeof x);
    memcpy(&y, f + i, sizeof y);
    x *= y;
    memcpy(a + i, &x, sizeof x);
    s4 += x * x;
  }
  for (; i < n; i++) {
    a[i] *= f[i];
    s4[0] += a[i] * a[i];
  }
  return (s4[0] + s4[1]) + (s4[2] + s4[3]);
}

/* col_scale_rows' sum of squares with every row factor 1, the same
 * doubles (a[i] * 1 is a[i]), taken while the column is in hand in a
 * sweep's row norm pass: where the row factors then all come out 1, the
 * column pass needs nothing else from the column. */
SB_CLONE_INLINE double col_squares(int n, const double *restrict a) {
  sb_v4d s4 = {0, 0, 0, 0};
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    sb_v4d x;
    memcpy(&x, a + i, sizeof x);
    s4 += x * x;
  }
  for (; i < n; i++) s4[0] += a[i] * a[i];
  return (s4[0] + s4[1]) + (s4[2] + s4[3]);
}

/* a[i] *= g, then fnext[i] += a[i]^2 */
SB_CLONE_INLINE void col_scale_add_squares(int n, double *restrict a, double g, double *restrict fnext) {
  for (int i = 0; i < n; i++) {
    a[i] *= g;
    fnext[i] += a[i] * a[i];
  }
}

SB_CLONE_INLINE void col_scale(int n, double *restrict a, double g) {
  for (int i = 0; i < n; i++) a[i] *= g;
}

/* A sweep's row factors from the rows' sums of squares in f (in place),
 * b scaled by them; 1 when one is not 1. dr takes them after the sweep's
 * column pass, which reads the scalings before them. */
static int row_factors(int n, double *f, double *b) {
  int changed = 0;
  for (int i = 0; i < n; i++) {
    f[i] = pow2_inv_fourth_root(f[i]);
    changed |= f[i] != 1;
    if (b) b[i] *= f[i];
  }
  return changed;
}

/* The sweeps, from the scalings in dr, dc (A and b not yet scaled by them;
 * all_one: they are all 1, nothing to apply). src (may be NULL): the
 * matrix, copied (and scaled from the start) into A in the first pass,
 * which then need not hold it on entry. work: 2n doubles, this sweep's
 * row factors and the next sweep's row norms. A sweep whose row factors
 * changed is not the last: the next one's row norms (the sums of squares of
 * the columns as this sweep leaves them, in column order, the same doubles
 * as a pass of their own) are then taken while each column is in hand, in
 * the pass that applies its scale. */
SB_WIDE_CLONES
static void ruiz_sweeps(int n, const double *src, double *A, double *b, double *dr, double *dc, int iterations,
                        double *work, int all_one) {
  double *f = work, *fnext = work + n;
  int have_next = 0;
  for (int it = 0; it < iterations; it++) {
    /* row norms, column by column (contiguous); on the first sweep from a
     * start the start's scaling is applied in the same pass */
    /* a row norm pass of its own also takes each column's sum of squares
     * (into fnext, free until the column pass) */
    int have_sums = !have_next;
    if (have_next) {
      memcpy(f, fnext, (size_t)n * sizeof(double));
    } else {
      for (int i = 0; i < n; i++) f[i] = 0;
      if (it == 0 && !all_one) {
        for (int i = 0; i < n; i++)
          if (b) b[i] *= dr[i];
        for (int j = 0; j < n; j++)
          if (src)
            col_copy_start_add_squares(n, src + (size_t)j * n, A + (size_t)j * n, dr, dc[j], f);
          else
            col_start_add_squares(n, A + (size_t)j * n, dr, dc[j], f);
      } else if (it == 0 && src) {
        for (int j = 0; j < n; j++) col_copy_add_squares(n, src + (size_t)j * n, A + (size_t)j * n, f);
      } else {
        for (int j = 0; j < n; j++) col_add_squares(n, A + (size_t)j * n, f);
      }
      for (int j = 0; j < n; j++) fnext[j] = col_squares(n, A + (size_t)j * n);
    }
    int changed = row_factors(n, f, b);
    if (!changed && have_sums) {
      /* every row factor 1: the columns' norms are in hand, and with no row
       * factor changed this sweep is the last or a fixed point */
      for (int j = 0; j < n; j++) {
        double g = pow2_inv_fourth_root(fnext[j]);
        if (g != 1) {
          changed = 1;
          dc[j] *= g;
          col_scale(n, A + (size_t)j * n, g);
        }
      }
      if (!changed) break;
      continue;
    }
    have_next = changed && it + 1 < iterations;
    if (have_next)
      for (int i = 0; i < n; i++) fnext[i] = 0;
    /* rows scaled, then the column's norm, then the column */
    for (int j = 0; j < n; j++) {
      double *a = A + (size_t)j * n;
      double g = pow2_inv_fourth_root(col_scale_rows(n, a, f));
      if (g != 1) {
        changed = 1;
        dc[j] *= g;
        if (have_next)
          col_scale_add_squares(n, a, g, fnext);
        else
          col_scale(n, a, g);
      } else if (have_next) {
        col_add_squares(n, a, fnext);
      }
    }
    for (int i = 0; i < n; i++) dr[i] *= f[i];
    if (!changed) break; /* a fixed point: every norm within [1/2, 2] */
  }
}

void sb_ruiz(int n, double *A, double *b, double *dr, double *dc, int iterations, double *work) {
  for (int i = 0; i < n; i++) dr[i] = dc[i] = 1;
  ruiz_sweeps(n, NULL, A, b, dr, dc, iterations, work, 1);
}

void sb_ruiz_copy(int n, const double *A, double *As, double *b, double *dr, double *dc, int iterations,
                  double *work) {
  for (int i = 0; i < n; i++) dr[i] = dc[i] = 1;
  if (iterations <= 0) {
    memcpy(As, A, (size_t)n * n * sizeof(double));
    return;
  }
  ruiz_sweeps(n, A, As, b, dr, dc, iterations, work, 1);
}

/* A warm start's scalings made valid (an entry out of range starts from
 * 1); 1 when they are all 1. */
static int ruiz_start(int n, double *dr, double *dc) {
  int all_one = 1;
  for (int i = 0; i < n; i++) {
    if (!sb_ruiz_scale_ok(dr[i])) dr[i] = 1;
    if (!sb_ruiz_scale_ok(dc[i])) dc[i] = 1;
    all_one &= dr[i] == 1 && dc[i] == 1;
  }
  return all_one;
}

void sb_ruiz_from(int n, double *A, double *b, double *dr, double *dc, int iterations, double *work) {
  int all_one = ruiz_start(n, dr, dc);
  if (iterations <= 0) { /* no sweep: the start's scaling is the scaling */
    for (int i = 0; i < n; i++) dr[i] = dc[i] = 1;
    return;
  }
  ruiz_sweeps(n, NULL, A, b, dr, dc, iterations, work, all_one);
}

void sb_ruiz_copy_from(int n, const double *A, double *As, double *b, double *dr, double *dc, int iterations,
                       double *work) {
  if (iterations <= 0) {
    for (int i = 0; i < n; i++) dr[i] = dc[i] = 1;
    memcpy(As, A, (size_t)n * n * sizeof(double));
    return;
  }
  int all_one = ruiz_start(n, dr, dc);
  ruiz_sweeps(n, A, As, b, dr, dc, iterations, work, all_one);
}

/* ruiz_sweeps without the scaled matrix: each sweep takes every column
 * from column() and scales it into a, the one column in hand, by the
 * scalings so far (powers of two: the doubles ruiz_sweeps holds in that
 * column, where nothing under- or overflows), then makes the same passes
 * over it in the same order. dr and dc take this sweep's factors after
 * its column pass, which reads the scalings the stored matrix holds then.
 * A sweep takes every column twice only where its row factors are not
 * all 1 and its row norms were not in hand (the last sweep's column pass
 * takes them where its row factors changed). */
SB_WIDE_CLONES
static void ruiz_sweeps_columns(int n, sb_ruiz_column_fn column, void *ctx, double *b, double *dr, double *dc,
                                int iterations, double *work, int all_one) {
  double *f = work, *fnext = work + n, *a = work + 2 * n, *scratch = work + 3 * n;
  int have_next = 0;
  for (int it = 0; it < iterations; it++) {
    int have_sums = !have_next; /* as in ruiz_sweeps */
    if (have_next) {
      memcpy(f, fnext, (size_t)n * sizeof(double));
    } else {
      for (int i = 0; i < n; i++) f[i] = 0;
      if (it == 0 && !all_one && b)
        for (int i = 0; i < n; i++) b[i] *= dr[i];
      for (int j = 0; j < n; j++) {
        col_copy_start_add_squares(n, column(ctx, j, scratch), a, dr, dc[j], f);
        fnext[j] = col_squares(n, a);
      }
    }
    int changed = row_factors(n, f, b);
    if (!changed && have_sums) { /* no column taken again */
      for (int j = 0; j < n; j++) {
        double g = pow2_inv_fourth_root(fnext[j]);
        if (g != 1) {
          changed = 1;
          dc[j] *= g;
        }
      }
      if (!changed) break;
      continue;
    }
    have_next = changed && it + 1 < iterations;
    if (have_next)
      for (int i = 0; i < n; i++) fnext[i] = 0;
    for (int j = 0; j < n; j++) {
      col_copy_start(n, column(ctx, j, scratch), a, dr, dc[j]);
      double g = pow2_inv_fourth_root(col_scale_rows(n, a, f));
      if (g != 1) {
        changed = 1;
        dc[j] *= g;
        if (have_next) col_scale_add_squares(n, a, g, fnext);
      } else if (have_next) {
        col_add_squares(n, a, fnext);
      }
    }
    for (int i = 0; i < n; i++) dr[i] *= f[i];
    if (!changed) break;
  }
}

void sb_ruiz_scales(int n, sb_ruiz_column_fn column, void *ctx, double *b, double *dr, double *dc,
                    int iterations, int from_start, double *work) {
  int all_one = 1;
  if (from_start && iterations > 0)
    all_one = ruiz_start(n, dr, dc);
  else
    for (int i = 0; i < n; i++) dr[i] = dc[i] = 1;
  if (iterations > 0) ruiz_sweeps_columns(n, column, ctx, b, dr, dc, iterations, work, all_one);
}

void sb_tikhonov(int n, double *A, const int *mask, double eps) {
  if (!(eps > 0)) return;
  for (int i = 0; i < n; i++)
    if (!mask || mask[i]) A[(size_t)i * n + i] += eps;
}

sb_lcp_status sb_lcp_condition_solve(sb_lcp_work *wk, int n, const double *M, const double *q,
                                     double *z, double *w, int ruiz_iterations, double tikhonov,
                                     const sb_lcp_options *opt, sb_lcp_info *info) {
  sb_lcp_options def = sb_lcp_default_options();
  if (!opt) opt = &def;
  sb_lcp_info local;
  if (!info) info = &local;
  double t0 = sb_lcp_now_us();
  /* let the solver validate sizes and values first, on the raw data */
  if (!wk || n < 1 || n > wk->nmax || !M || !q || !z) return sb_lcp_solve(wk, n, M, q, z, w, opt, info);
  for (size_t k = 0; k < (size_t)n * n; k++)
    if (!isfinite(M[k])) return sb_lcp_solve(wk, n, M, q, z, w, opt, info);
  for (int i = 0; i < n; i++)
    if (!isfinite(q[i])) return sb_lcp_solve(wk, n, M, q, z, w, opt, info);
  if (!(tikhonov >= 0) || !isfinite(tikhonov)) {
    memset(info, 0, sizeof *info);
    info->status = SB_LCP_BAD_INPUT;
    info->residual = INFINITY;
    sb_errorf(info->message, sizeof info->message, "tikhonov must be finite and >= 0 (got %g)", tikhonov);
    memset(z, 0, n * sizeof(double));
    if (w) memset(w, 0, n * sizeof(double));
    return info->status;
  }
  memcpy(wk->Ms, M, (size_t)n * n * sizeof(double));
  memcpy(wk->qs, q, n * sizeof(double));
  /* Lemke's tableau (n (n + 2) doubles) is free scratch until the solve */
  sb_ruiz(n, wk->Ms, wk->qs, wk->dr, wk->dc, ruiz_iterations > 0 ? ruiz_iterations : 0, wk->T);
  sb_tikhonov(n, wk->Ms, NULL, tikhonov);
  for (int i = 0; i < n; i++) wk->zs[i] = opt->warm_start && isfinite(z[i]) ? z[i] / wk->dc[i] : 0;
  sb_lcp_options scaled = *opt;
  scaled.entries = NULL; /* they are M's, not the scaled copy's */
  sb_lcp_status st = sb_lcp_solve(wk, n, wk->Ms, wk->qs, wk->zs, NULL, &scaled, info);
  for (int i = 0; i < n; i++) z[i] = wk->zs[i] * wk->dc[i];
  double *wv = wk->w;
  info->residual = sb_lcp_residual(n, M, q, z, wv, &info->complementarity);
  double maxq = 0;
  for (int i = 0; i < n; i++) maxq = fmax(maxq, fabs(q[i]));
  double accept = fmax(opt->tol > 0 ? opt->tol : 1e-12, 1e-9) * fmax(1, maxq);
  int bad;
  /* in the original variables and in finite arithmetic (sb_lcp_check): the
   * scaled problem's answer may overflow or cancel once unscaled */
  if (st == SB_LCP_SOLVED && !sb_lcp_check(n, M, q, z, wv, accept, 0, &info->residual, &bad, wk->qs)) {
    st = info->status = SB_LCP_STALLED;
    if (isfinite(info->residual))
      sb_errorf(info->message, sizeof info->message,
                "the conditioned problem was solved but the original residual is %.3g in row %d (> %.3g)",
                info->residual, bad, accept);
    else
      sb_errorf(info->message, sizeof info->message,
                "the conditioned problem was solved but in the original problem z or w = Mz + q is not "
                "finite in row %d (overflow)", bad);
  }
  int finite = isfinite(info->residual);
  for (int i = 0; i < n; i++) finite &= isfinite(z[i]) && isfinite(wv[i]);
  if (!finite) { /* never a non-finite z or w: z = 0, w = q */
    memset(z, 0, n * sizeof(double));
    info->residual = sb_lcp_residual(n, M, q, z, wv, &info->complementarity);
  }
  if (w) memcpy(w, wv, n * sizeof(double));
  info->time_us = sb_lcp_now_us() - t0;
  return st;
}

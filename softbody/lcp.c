/* LCP solvers: Fischer-Burmeister semismooth Newton with a Levenberg-Marquardt
 * trust region, Lemke's complementary pivoting, projected Gauss-Seidel, and
 * the fallback chain that strings them together. */
#include <cblas.h>
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lcp_internal.h"
#include "sb_util.h"

double sb_lcp_now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

sb_lcp_options sb_lcp_default_options(void) {
  sb_lcp_options o;
  memset(&o, 0, sizeof o);
  o.tol = 1e-12;
  o.max_iter = 100;
  o.max_pivots = 0;
  o.max_sweeps = 10000;
  o.nchain = 3;
  o.chain[0] = SB_LCP_LEMKE;
  o.chain[1] = SB_LCP_FB;
  o.chain[2] = SB_LCP_PGS;
  o.lemke_form = SB_LCP_LEMKE_AUTO;
  return o;
}

sb_lcp_work *sb_lcp_work_create(int nmax) {
  if (nmax < 1) return NULL;
  sb_lcp_work *w = calloc(1, sizeof *w);
  if (!w) return NULL;
  size_t n = (size_t)nmax, nn = n * n;
  w->nmax = nmax;
  double **vec[] = {&w->w, &w->zbest, &w->ztry, &w->phi, &w->phitry, &w->g, &w->d, &w->da,
                    &w->db, &w->colbuf, &w->zloc, &w->qloc, &w->qs, &w->zs, &w->dr, &w->dc, &w->rv_col,
                    &w->ebound, &w->regular_colmax};
  int ok = 1;
  for (size_t k = 0; k < sizeof vec / sizeof vec[0]; k++) ok &= (*vec[k] = calloc(n, sizeof(double))) != NULL;
  ok &= (w->rowbuf = calloc(n + 2, sizeof(double))) != NULL;
  ok &= (w->H = calloc(nn, sizeof(double))) != NULL;
  ok &= (w->HtH = calloc(nn, sizeof(double))) != NULL;
  ok &= (w->LU = calloc(nn, sizeof(double))) != NULL;
  ok &= (w->Ms = calloc(nn, sizeof(double))) != NULL;
  ok &= (w->T = calloc(n * (n + 2), sizeof(double))) != NULL;
  ok &= (w->basis = calloc(n, sizeof(int))) != NULL;
  ok &= (w->nonbasis = calloc(n + 1, sizeof(int))) != NULL;
  ok &= (w->ties = calloc(n, sizeof(int))) != NULL;
  ok &= (w->ipiv = calloc(n, sizeof(int))) != NULL;
  ok &= (w->idx = calloc(n, sizeof(int))) != NULL;
  ok &= (w->rv_slot = calloc(2 * n + 1, sizeof(int))) != NULL;
  ok &= (w->rv_kcol = calloc(n + 1, sizeof(int))) != NULL;
  ok &= (w->rv_r0pos = calloc(n + 1, sizeof(int))) != NULL;
  ok &= (w->rv_colpos = calloc(n + 1, sizeof(int))) != NULL;
  ok &= (w->rv_rowpos = calloc(n, sizeof(int))) != NULL;
  ok &= (w->fric_dropped = calloc(n, sizeof(int))) != NULL;
  ok &= (w->term_rows = calloc(n, sizeof(int))) != NULL;
  ok &= (w->prev_set = calloc(n, sizeof(int))) != NULL;
  ok &= (w->regular_order = calloc(n, sizeof(int))) != NULL;
  ok &= (w->regular_state = calloc(n, sizeof(int))) != NULL;
  for (int k = 0; k < 2; k++) {
    sb_lcp_factor *f = &w->fc[k];
    ok &= (f->set = calloc(n, sizeof(int))) != NULL;
    ok &= (f->piv = calloc(n, sizeof(int))) != NULL;
    ok &= (f->Y = calloc(n * SB_LCP_BORDER_MAX, sizeof(double))) != NULL;
    ok &= (f->S = calloc(SB_LCP_BORDER_MAX * SB_LCP_BORDER_MAX, sizeof(double))) != NULL;
    ok &= (f->Mdc = calloc(n * SB_LCP_BORDER_MAX, sizeof(double))) != NULL;
    ok &= (f->bset = calloc(n, sizeof(int))) != NULL;
    ok &= (f->bpos = calloc(n, sizeof(int))) != NULL;
    ok &= (f->dset = calloc(SB_LCP_BORDER_MAX, sizeof(int))) != NULL;
    ok &= (f->rpos = calloc(SB_LCP_BORDER_MAX, sizeof(int))) != NULL;
    ok &= (f->spiv = calloc(SB_LCP_BORDER_MAX, sizeof(int))) != NULL;
  }
  w->fc[0].F = w->LU;
  w->fc[0].A = w->HtH;
  w->fc[1].F = w->H;
  w->fc[1].A = w->T;
  w->fc_solved = -1;
  if (!ok) {
    sb_lcp_work_free(w);
    return NULL;
  }
  return w;
}

size_t sb_lcp_work_bytes(int nmax) {
  size_t n = nmax > 0 ? (size_t)nmax : 0;
  /* H, HtH, LU, Ms, T; 20 vectors; 14 int vectors and the revised Lemke's 6 n + 4 ints; per cache
   * slot the bordered factor's Y, Mdc, S and 2 int vectors, 3 short ones */
  size_t kb = SB_LCP_BORDER_MAX;
  return sizeof(sb_lcp_work) + sizeof(double) * (4 * n * n + n * (n + 2) + 20 * n + 2 + 2 * (2 * n * kb + kb * kb)) +
         sizeof(int) * (14 * n + 1 + 6 * n + 4 + 2 * (2 * n + 3 * kb));
}

void sb_lcp_work_free(sb_lcp_work *w) {
  if (!w) return;
  void *p[] = {w->w, w->zbest, w->ztry, w->phi, w->phitry, w->g, w->d, w->da, w->db, w->colbuf,
               w->zloc, w->qloc, w->qs, w->zs, w->dr, w->dc, w->rv_col, w->ebound, w->rowbuf, w->H, w->HtH, w->LU,
               w->Ms, w->T, w->basis, w->nonbasis, w->ties, w->ipiv, w->idx, w->rv_slot, w->rv_kcol, w->rv_r0pos, w->rv_colpos, w->rv_rowpos, w->fric_dropped, w->term_rows, w->prev_set, w->regular_order, w->regular_state, w->regular_colmax, w->fc[0].set, w->fc[0].piv,
               w->fc[1].set, w->fc[1].piv};
  for (size_t k = 0; k < sizeof p / sizeof p[0]; k++) free(p[k]);
  for (int k = 0; k < 2; k++) {
    sb_lcp_factor *f = &w->fc[k];
    void *b[] = {f->Y, f->S, f->Mdc, f->bset, f->bpos, f->dset, f->rpos, f->spiv};
    for (size_t j = 0; j < sizeof b / sizeof b[0]; j++) free(b[j]);
  }
  free(w);
}

int sb_lcp_work_size(const sb_lcp_work *w) { return w ? w->nmax : 0; }

const char *sb_lcp_solver_name(sb_lcp_solver s) {
  switch (s) {
    case SB_LCP_FB: return "fb";
    case SB_LCP_LEMKE: return "lemke";
    case SB_LCP_PGS: return "pgs";
    default: return "unknown";
  }
}

const char *sb_lcp_status_name(sb_lcp_status s) {
  switch (s) {
    case SB_LCP_SOLVED: return "solved";
    case SB_LCP_MAX_ITER: return "max_iter";
    case SB_LCP_RAY: return "ray";
    case SB_LCP_STALLED: return "stalled";
    case SB_LCP_BAD_INPUT: return "bad_input";
    default: return "unknown";
  }
}

int sb_lcp_solver_parse(const char *name, sb_lcp_solver *out) {
  for (int s = 0; s < SB_LCP_NSOLVERS; s++)
    if (name && !strcmp(name, sb_lcp_solver_name((sb_lcp_solver)s))) {
      *out = (sb_lcp_solver)s;
      return 0;
    }
  return -1;
}

/* ||min(z, w)||inf (INFINITY where NaN) and |z^T w| for a w already formed. */
static double residual_of(int n, const double *z, const double *w, double *complementarity) {
  double r = 0, c = 0;
  for (int i = 0; i < n; i++) {
    double m = fmin(z[i], w[i]);
    r = fmax(r, isnan(m) ? INFINITY : fabs(m));
    c += z[i] * w[i];
  }
  if (complementarity) *complementarity = fabs(c);
  return r;
}

double sb_lcp_residual(int n, const double *M, const double *q, const double *z, double *w,
                       double *complementarity) {
  memcpy(w, q, n * sizeof(double));
  cblas_dgemv(CblasColMajor, CblasNoTrans, n, n, 1.0, M, n, z, 1, 1.0, w, 1);
  return residual_of(n, z, w, complementarity);
}

/* x - x is 0 for every finite x and NaN for an infinity or a NaN, and a sum
 * of zeros stays 0: the sum is 0 exactly when all are finite. Two-lane
 * vectors (SSE2, the x86-64 baseline, or any target's equivalent): n^2
 * entries are checked per call, and the 64-bit bit test this replaces did not
 * vectorize without SSE4.1 (9 instructions an entry against about 2). */
typedef double sb_v2d __attribute__((vector_size(16)));
static int finite_entries(size_t n, const double *x) {
  sb_v2d a0 = {0, 0}, a1 = {0, 0};
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    sb_v2d u, v;
    memcpy(&u, x + i, sizeof u);
    memcpy(&v, x + i + 2, sizeof v);
    a0 += u - u;
    a1 += v - v;
  }
  double t = 0;
  for (; i < n; i++) t += x[i] - x[i];
  sb_v2d a = a0 + a1;
  return a[0] + a[1] + t == 0;
}

static int all_finite(int n, const double *x) { return finite_entries((size_t)n, x); }

/* The n x n matrix as one vector of n^2 entries: no column tails. */
static int matrix_finite(int n, const double *M) { return finite_entries((size_t)n * n, M); }

/* M's entry (i, j), from the solve's entries when it was given them (the
 * same doubles: sb_lcp_options.entries), else from M. */
static inline double m_entry(const sb_lcp_work *wk, int n, const double *M, int i, int j) {
  return wk && wk->entries ? wk->entries->entry(wk->entries->ctx, i, j) : M[(size_t)j * n + i];
}

/* Whether the solve's products are its entries' (apply), not M's. */
static inline int op_products(const sb_lcp_work *wk) { return wk && wk->entries && wk->entries->apply; }

/* w = q + M z: by the solve's entries' product when they have one (its own
 * order of summation, whose rounding check_given_w then bounds by their
 * apply_bound), else by M. */
static void m_product(const sb_lcp_work *wk, int n, const double *M, const double *q, const double *z, double *w) {
  if (op_products(wk)) {
    wk->entries->apply(wk->entries->ctx, z, q, w);
    return;
  }
  memcpy(w, q, (size_t)n * sizeof(double));
  cblas_dgemv(CblasColMajor, CblasNoTrans, n, n, 1.0, M, n, z, 1, 1.0, w, 1);
}

/* M for a solver that reads it stored (FB, PGS, Lemke's tableau): M itself,
 * or an unformed M (NULL) formed once in its entries' storage. */
static const double *stored_matrix(sb_lcp_work *wk, int n, const double *M) {
  if (M) return M;
  const sb_lcp_entries *e = wk->entries;
  if (!wk->formed) {
    for (int j = 0; j < n; j++) e->column(e->ctx, j, e->storage + (size_t)j * n);
    wk->formed = 1;
  }
  return e->storage;
}

/* sb_lcp_residual with the solve's product. */
static double residual_on(const sb_lcp_work *wk, int n, const double *M, const double *q, const double *z, double *w,
                          double *complementarity) {
  m_product(wk, n, M, q, z, w);
  return residual_of(n, z, w, complementarity);
}

/* ---------- the acceptance test of every "solved" ---------- */

/* q_i + sum_j M_ij z_j exactly, then rounded (to within 3 u): each double
 * is an integer of 53 bits times a power of two, so each product is an
 * integer of 106 bits (unsigned __int128) times one, added without rounding
 * to a fixed-point accumulator of 32-bit limbs spanning every product of two
 * doubles, 2^-2304 .. 2^2176. Used on the rows whose plain sum cannot be
 * trusted (cancellation of huge terms, where even a compensated sum, Dot2,
 * loses what q adds). */
#define EXACT_LIMBS 140
#define EXACT_BIAS 2304 /* the accumulator's bit k weighs 2^(k - EXACT_BIAS) */

static void exact_add(int64_t *acc, unsigned __int128 mag, int exp, int negative) {
  for (int part = 0; part < 2 && mag; part++, mag >>= 64, exp += 64) {
    uint64_t v = (uint64_t)mag;
    if (!v) continue;
    int o = exp + EXACT_BIAS, limb = o / 32;
    unsigned __int128 t = (unsigned __int128)v << (o % 32);
    for (int k = 0; k < 3; k++, t >>= 32) {
      int64_t chunk = (int64_t)(uint32_t)t;
      acc[limb + k] += negative ? -chunk : chunk;
    }
  }
}

/* x = m 2^e with m an integer below 2^53 (exact for every finite double) */
static uint64_t exact_split(double x, int *e) {
  int fe;
  double f = frexp(fabs(x), &fe);
  *e = fe - 53;
  return (uint64_t)ldexp(f, 53);
}

static double row_exact(const sb_lcp_work *wk, int n, const double *M, const double *q, const double *z, int i) {
  int64_t acc[EXACT_LIMBS] = {0};
  int e1, e2;
  uint64_t m1 = exact_split(q[i], &e1);
  exact_add(acc, m1, e1, q[i] < 0);
  for (int j = 0; j < n; j++) {
    if (z[j] == 0) continue;
    double m = m_entry(wk, n, M, i, j);
    if (m == 0) continue;
    m1 = exact_split(m, &e1);
    uint64_t m2 = exact_split(z[j], &e2);
    exact_add(acc, (unsigned __int128)m1 * m2, e1 + e2, (m < 0) != (z[j] < 0));
  }
  /* carries upwards: every limb in [0, 2^32) but the top one, which holds the sign */
  int negative = 0;
  for (int pass = 0; pass < 2; pass++) {
    for (int k = 0; k + 1 < EXACT_LIMBS; k++) {
      int64_t carry = acc[k] >> 32; /* floor */
      acc[k] -= carry * ((int64_t)1 << 32);
      acc[k + 1] += carry;
    }
    if (acc[EXACT_LIMBS - 1] >= 0) break;
    negative = 1; /* normalize |w| instead */
    for (int k = 0; k < EXACT_LIMBS; k++) acc[k] = -acc[k];
  }
  int top = EXACT_LIMBS - 1;
  while (top > 0 && acc[top] == 0) top--;
  double r = 0;
  for (int k = top; k >= 0 && k >= top - 2; k--) r += ldexp((double)acc[k], 32 * k - EXACT_BIAS);
  return negative ? -r : r;
}

static void row_terms(const sb_lcp_work *wk, int n, const double *restrict M, const double *restrict q,
                      const double *restrict z, double *restrict s);
static void listed_row_terms(const sb_lcp_work *wk, int n, const double *q, const double *z, const int *rows, int nr,
                             double *s);

/* Whether row i passes check_given_w's test without its terms s_i: from
 * the lower bound |q_i| + |w_i - q_i| - e_w <= s_i (|sum_j M_ij z_j| <=
 * sum_j |M_ij z_j|, w_i within e_w of the exact sum), the threshold is at
 * most the test's, and e <= abs_tol keeps the test from summing the row
 * exactly; apply_bound's e_w also bounds the row's terms, so they are
 * finite. A row that passes here passes the test with the same residual
 * and w_i; the others are tested as before. */
static int passes_without_terms(double q, double z, double w, double e, double abs_tol, double rel_tol) {
  const double u = DBL_EPSILON / 2;
  if (!isfinite(w) || !(e <= abs_tol)) return 0;
  double moved = fabs(w - q) * (1 - 2 * u) - e, lower = (fabs(q) + (moved > 0 ? moved : 0)) * (1 - 4 * u);
  double ri = fabs(fmin(z, w));
  return ri + e <= fmax(abs_tol, rel_tol * lower);
}

/* check_given_w's row terms for the solve's products (eb: apply_bound's
 * bounds, under added): only the rows passes_without_terms cannot pass get
 * theirs, from the entries' columns restricted to them (a contact LCP at its
 * answer: mostly none), where row_terms takes every column of z's support
 * whole. Rows left out hold -1 in s (terms are never negative). */
static void doubtful_row_terms(const sb_lcp_work *wk, int n, const double *q, const double *z, const double *w,
                               const double *eb, double under, double abs_tol, double rel_tol, double *s) {
  int nr = 0, *rows = wk->term_rows;
  for (int i = 0; i < n; i++) {
    s[i] = -1;
    if (!passes_without_terms(q[i], z[i], w[i], eb[i] + under, abs_tol, rel_tol)) rows[nr++] = i;
  }
  listed_row_terms(wk, n, q, z, rows, nr, s);
}

/* sb_lcp_check for a finite z whose w already holds Mz + q summed in floating
 * point, as a solver's last trial leaves it: by M in any order (the bound
 * below holds for every order of the n + 1 terms), or by the solve's
 * entries' product (m_product), whose rounding their apply_bound bounds. wk:
 * the solve's workspace, or NULL for M alone. */
static int check_given_w(sb_lcp_work *wk, int n, const double *M, const double *q, const double *z, double *w,
                         double abs_tol, double rel_tol, double *residual, int *bad_row, double *scratch) {
  *residual = INFINITY;
  if (bad_row) *bad_row = -1;
  double *s = scratch, *eb = op_products(wk) ? wk->ebound : NULL;
  /* gamma_{n+2} = (n + 2) u / (1 - (n + 2) u) bounds the relative rounding of
   * a sum of n + 1 products (and of s itself); each product may also lose
   * up to the smallest subnormal to underflow. */
  const double u = DBL_EPSILON / 2, g = (n + 2) * u / (1 - (n + 2) * u);
  const double under = (n + 2) * DBL_TRUE_MIN;
  int some_rows = eb && wk->entries->column_rows && !wk->check_all_terms;
  if (eb) wk->entries->apply_bound(wk->entries->ctx, z, q, eb);
  if (some_rows)
    doubtful_row_terms(wk, n, q, z, w, eb, under, abs_tol, rel_tol, s);
  else
    row_terms(wk, n, M, q, z, s);
  double r = 0;
  int ok = 1;
  for (int i = 0; i < n; i++) {
    if (some_rows && s[i] == -1) { /* passes_without_terms */
      r = fmax(r, fabs(fmin(z[i], w[i])));
      wk->rows_without_terms++;
      continue;
    }
    double si = s[i] * (1 + g);
    /* a term or partial sum that overflows cannot be verified: |w_i|'s
     * partial sums are bounded by s_i, so s_i finite means none did */
    if (!(si <= DBL_MAX) || !isfinite(w[i])) {
      if (ok && bad_row) *bad_row = i;
      ok = 0;
      r = INFINITY;
      continue;
    }
    double thr = fmax(abs_tol, rel_tol * si), e = (eb ? eb[i] : g * si) + under;
    double ri = fabs(fmin(z[i], w[i]));
    if (!(e <= abs_tol) || ri + e > thr) { /* the plain sum cannot tell: exactly */
      w[i] = row_exact(wk, n, M, q, z, i);
      e = 3 * u * fabs(w[i]) + 3 * DBL_TRUE_MIN;
      ri = fabs(fmin(z[i], w[i]));
    }
    if (!(ri + e <= thr)) {
      if (ok && bad_row) *bad_row = i;
      ok = 0;
    }
    r = fmax(r, ri);
  }
  *residual = r;
  return ok;
}

int sb_lcp_check(int n, const double *M, const double *q, const double *z, double *w, double abs_tol,
                 double rel_tol, double *residual, int *bad_row, double *scratch) {
  for (int i = 0; i < n; i++)
    if (!isfinite(z[i])) {
      *residual = INFINITY;
      if (bad_row) *bad_row = i;
      memset(w, 0, (size_t)n * sizeof(double));
      return 0;
    }
  memcpy(w, q, (size_t)n * sizeof(double));
  cblas_dgemv(CblasColMajor, CblasNoTrans, n, n, 1.0, M, n, z, 1, 1.0, w, 1);
  return check_given_w(NULL, n, M, q, z, w, abs_tol, rel_tol, residual, bad_row, scratch);
}

int sb_lcp_check_by_entries(sb_lcp_work *wk, int n, const sb_lcp_entries *entries, const double *q, const double *z,
                            double *w, double abs_tol, double rel_tol, double *residual, int *bad_row) {
  const sb_lcp_entries *was = wk->entries;
  wk->entries = entries;
  m_product(wk, n, NULL, q, z, w);
  int ok = check_given_w(wk, n, NULL, q, z, w, abs_tol, rel_tol, residual, bad_row, wk->da);
  wk->entries = was;
  return ok;
}

/* sb_lcp_check with the solve's product (m_product) and entries. */
static int check_on(sb_lcp_work *wk, int n, const double *M, const double *q, const double *z, double *w,
                    double abs_tol, double rel_tol, double *residual, int *bad_row, double *scratch) {
  if (bad_row) *bad_row = -1;
  if (!all_finite(n, z)) {
    *residual = INFINITY;
    if (bad_row)
      for (int i = 0; i < n; i++)
        if (!isfinite(z[i])) {
          *bad_row = i;
          break;
        }
    memset(w, 0, (size_t)n * sizeof(double));
    return 0;
  }
  m_product(wk, n, M, q, z, w);
  return check_given_w(wk, n, M, q, z, w, abs_tol, rel_tol, residual, bad_row, scratch);
}

/* sb_lcp_check of a pivot's answer z, whose w = Mz + q the pivot formed (wp, copied to w, where
 * the check may refine rows): the same verdict and w without a second product by M. */
static int check_pivot_answer(sb_lcp_work *wk, int n, const double *M, const double *q, const double *z,
                              const double *wp, double *w, double abs_tol, double rel_tol, double *residual,
                              double *scratch) {
  if (!all_finite(n, z)) {
    *residual = INFINITY;
    return 0;
  }
  memcpy(w, wp, (size_t)n * sizeof(double));
  return check_given_w(wk, n, M, q, z, w, abs_tol, rel_tol, residual, NULL, scratch);
}

static double complementarity(int n, const double *z, const double *w) {
  double c = 0;
  for (int i = 0; i < n; i++) c += z[i] * w[i];
  return fabs(c);
}

/* ---------- Fischer-Burmeister semismooth Newton, LM trust region ---------- */

/* phi(a, b) = sqrt(a^2 + b^2) - a - b: zero exactly when a, b >= 0, ab = 0. */
/* M NULL: an unformed M, w by the entries' product. */
static double fb_eval(const sb_lcp_work *wk, int n, const double *M, const double *q, const double *z, double *w,
                      double *phi) {
  if (M) {
    memcpy(w, q, n * sizeof(double));
    cblas_dgemv(CblasColMajor, CblasNoTrans, n, n, 1.0, M, n, z, 1, 1.0, w, 1);
  } else {
    m_product(wk, n, M, q, z, w);
  }
  double s = 0;
  for (int i = 0; i < n; i++) {
    phi[i] = hypot(z[i], w[i]) - z[i] - w[i];
    s += phi[i] * phi[i];
  }
  return 0.5 * s;
}

/* s_i = |q_i| + sum_j |M_ij z_j|: the size of the terms that make up w_i,
 * hence the floating-point yardstick for its residual. By columns, skipping
 * z_j = 0 (most of z at a solution). */
static void row_terms(const sb_lcp_work *wk, int n, const double *restrict M, const double *restrict q,
                      const double *restrict z, double *restrict s) {
  const sb_lcp_entries *ent = wk ? wk->entries : NULL;
  for (int i = 0; i < n; i++) s[i] = fabs(q[i]);
  for (int j = 0; j < n; j++) {
    double a = fabs(z[j]);
    if (a == 0) continue;
    if (ent) ent->column(ent->ctx, j, wk->rv_col);
    const double *restrict c = ent ? wk->rv_col : M + (size_t)j * n;
    for (int i = 0; i < n; i++) s[i] += fabs(c[i]) * a;
  }
}

/* row_terms' s_i for the rows listed in rows (nr of them, ascending) or
 * flagged in rows_in only (the others left as they were), from the entries'
 * columns restricted to those rows: the sums of row_term, in the same order
 * (the same numbers), where row_term pays a call of entry() per term. */
static void listed_row_terms(const sb_lcp_work *wk, int n, const double *q, const double *z, const int *rows, int nr,
                             double *s) {
  const sb_lcp_entries *ent = wk->entries;
  for (int r = 0; r < nr; r++) s[rows[r]] = fabs(q[rows[r]]);
  for (int j = 0; j < n && nr > 0; j++) {
    double a = fabs(z[j]);
    if (a == 0) continue;
    ent->column_rows(ent->ctx, j, rows, nr, wk->rv_col);
    for (int r = 0; r < nr; r++) s[rows[r]] += fabs(wk->rv_col[r]) * a;
  }
}

static void flagged_row_terms(sb_lcp_work *wk, int n, const double *q, const double *z, const int *rows_in,
                              double *s) {
  int nr = 0, *rows = wk->term_rows;
  for (int i = 0; i < n; i++)
    if (rows_in[i]) rows[nr++] = i;
  listed_row_terms(wk, n, q, z, rows, nr, s);
}

/* Row i of row_terms, summed in the same order (the same number). */
static double row_term(const sb_lcp_work *wk, int n, const double *M, const double *q, const double *z, int i) {
  double s = fabs(q[i]);
  for (int j = 0; j < n; j++) {
    double a = fabs(z[j]);
    if (a == 0) continue;
    s += fabs(m_entry(wk, n, M, i, j)) * a;
  }
  return s;
}

/* ||min(z, w)||inf; INFINITY when anything is NaN (no fmin/fmax: library calls here). */
static double min_residual(int n, const double *z, const double *w) {
  double r = 0;
  int nan = 0;
  for (int i = 0; i < n; i++) {
    double a = fabs(z[i] < w[i] ? z[i] : w[i]);
    nan |= isnan(z[i]) | isnan(w[i]);
    r = a > r ? a : r;
  }
  return nan ? INFINITY : r;
}

/* max(1, ||q||inf): the tolerance floor, enough to accept most answers. */
static double q_scale(int n, const double *q) {
  double r = 1;
  for (int i = 0; i < n; i++) r = fabs(q[i]) > r ? fabs(q[i]) : r;
  return r;
}

/* Every row within tolerance of its own terms, |min(z_i, w_i)| <= tol
 * max(qs, s_i), with r = ||min(z, w)||inf for the cheap test first. Row by
 * row, not against the largest s_i: a non-unique LCP may let one entry of z
 * run off along a ray of solutions (the sliding-speed bound of an unloaded
 * contact reached 1e9), and its terms must not loosen the rows it does not
 * enter. s: n scratch. */
static int within_tol(const sb_lcp_work *wk, int n, const double *M, const double *q, const double *z,
                      const double *w, double r, double tol, double qs, double *s) {
  if (r <= tol * qs) return 1;
  if (!(r < INFINITY)) return 0;
  if (wk && wk->entries && wk->entries->column_rows) {
    /* only a row beyond tol qs needs its terms: from the entries, whose
     * whole columns cost n entries each, the columns at those rows */
    int nr = 0, *rows = wk->term_rows;
    for (int i = 0; i < n; i++) {
      double a = fabs(z[i] < w[i] ? z[i] : w[i]);
      if (a > tol * qs) rows[nr++] = i;
      else s[i] = 0;
    }
    listed_row_terms(wk, n, q, z, rows, nr, s);
  } else {
    row_terms(wk, n, M, q, z, s);
  }
  for (int i = 0; i < n; i++) {
    double a = fabs(z[i] < w[i] ? z[i] : w[i]), t = s[i] > qs ? s[i] : qs;
    if (a > tol * t) return 0;
  }
  return 1;
}

/* The least-norm half of fb_factor: F = L of A A^T + eps I (eps = 1e-13
 * of its largest diagonal). Returns 2, or 0 when that fails. */
static int fb_factor_least_norm(sb_lcp_work *wk, sb_lcp_factor *f, int na) {
  const double *A = f->A;
  double *F = f->F;
  wk->least_norm_factors++;
  cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, na, na, 1.0, A, na, 0.0, F, na);
  double dmax = 0;
  for (int k = 0; k < na; k++) dmax = F[(size_t)k * na + k] > dmax ? F[(size_t)k * na + k] : dmax;
  if (!(dmax > 0)) return 0;
  for (int k = 0; k < na; k++) F[(size_t)k * na + k] += 1e-13 * dmax;
  if (LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', na, F, na)) return 0;
  return 2;
}


/* Solves A x = b for the na x na matrix A in f->A (b in x on entry). By
 * LU; when its pivots show A singular (dependent friction directions,
 * statically indeterminate sticking: any solution will do, but LU would give
 * one of huge norm and mixed signs), by the least-norm solution instead:
 * x = A^T y, (A A^T + eps I) y = b, Cholesky, refined twice, which removes
 * the eps bias from every direction well above sqrt(eps) (several times
 * cheaper than dgelsy, 3-5 us at n = 6-9). fb_factor factors (into f->F,
 * pivots in f->piv) and returns 0 on failure, 1 for LU, 2 for least
 * norm; fb_solve then solves, returning 0 on a non-finite x, else how (2:
 * A x = b only if the system is consistent). singular: the set is singular
 * by construction (sb_lcp_friction_set_singular), so LU is not tried: its
 * pivot test would reject the set, after costing about as much as the
 * least-norm factorization itself (fb_pivot_step makes such sets basic
 * first, so with friction blocks the least-norm path is left to sets
 * singular for other reasons: more rows than the bodies' dofs). */
/* The LU half of fb_factor: 1, or 0 when dgetrf fails or its pivots show
 * A singular. */
static int fb_factor_lu(sb_lcp_factor *f, int na) {
  const double *A = f->A;
  double *F = f->F;
  memcpy(F, A, (size_t)na * na * sizeof(double));
  int info = LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, na, na, F, na, f->piv);
  if (info < 0) return 0;
  double umin = INFINITY, umax = 0;
  sb_lu_pivot_range(na, F, &umin, &umax);
  return info == 0 && sb_lu_pivots_regular(umin, umax);
}

static int fb_factor(sb_lcp_work *wk, sb_lcp_factor *f, int na, int singular) {
  wk->factorizations++;
  if (singular) return fb_factor_least_norm(wk, f, na);
  return fb_factor_lu(f, na) ? 1 : fb_factor_least_norm(wk, f, na);
}

int sb_lcp_friction_set_singular(int nblock, const int *block, const int *in) {
  for (int b = 0, o = 0; block && b < nblock; o += block[b++]) {
    int r = block[b] - 2, count = 0, first = -1, second = -1;
    for (int k = 1; k <= r; k++)
      if (in[o + k]) {
        count++;
        if (first < 0) first = k;
        else if (second < 0) second = k;
      }
    int gamma = in[o + r + 1];
    if (gamma ? count > 3 : count > 2 || (count == 2 && r % 2 == 0 && second - first == r / 2)) return 1;
  }
  return 0;
}

/* The block's betas in the set, best first: by the cosine of their
 * direction's angle to the impulse f (fx, fy), then by their own impulse
 * zref_k c_k, then by index. */
static int beta_before(const double *cosf, const double *own, int a, int b) {
  if (cosf[a] != cosf[b]) return cosf[a] > cosf[b];
  if (own[a] != own[b]) return own[a] > own[b];
  return a < b;
}

int sb_lcp_friction_set_basic(int nblock, const int *block, int n, const double *M, const sb_lcp_entries *entries,
                              const double *zref, int *in, int *dropped) {
  int total = 0;
  memset(dropped, 0, (size_t)n * sizeof(int));
  for (int b = 0, o = 0; block && b < nblock; o += block[b++]) {
    int r = block[b] - 2, g = o + r + 1, count = 0, first = -1, second = -1;
    for (int k = 1; k <= r; k++)
      if (in[o + k]) {
        count++;
        if (first < 0) first = k;
        else if (second < 0) second = k;
      }
    int gamma = in[g];
    if (!(gamma ? count > 3 : count > 2 || (count == 2 && r % 2 == 0 && second - first == r / 2))) continue;
    /* the impulse of the block's betas in the set, and each one's share */
    double own[SB_LCP_FRICTION_MAX_R], cosf[SB_LCP_FRICTION_MAX_R], dx[SB_LCP_FRICTION_MAX_R],
        dy[SB_LCP_FRICTION_MAX_R], fx = 0, fy = 0;
    if (r > SB_LCP_FRICTION_MAX_R) continue; /* check_input refuses it */
    for (int k = 0; k < r; k++) {
      int i = o + 1 + k;
      double c = -(entries ? entries->entry(entries->ctx, g, i) : M[(size_t)i * n + g]);
      dx[k] = cos(2 * M_PI * k / r);
      dy[k] = sin(2 * M_PI * k / r);
      own[k] = in[i] && isfinite(zref[i]) ? zref[i] * (c > 0 ? c : 1) : 0;
      fx += own[k] * dx[k];
      fy += own[k] * dy[k];
    }
    double fl = hypot(fx, fy);
    for (int k = 0; k < r; k++) cosf[k] = fl > 0 ? (dx[k] * fx + dy[k] * fy) / fl : 0;
    /* keep: without gamma the best and the best of the rest not opposite it;
     * with gamma the best three */
    int keep[3], nkeep = 0, want = gamma ? 3 : 2;
    while (nkeep < want) {
      int best = -1;
      for (int k = 0; k < r; k++) {
        if (!in[o + 1 + k]) continue;
        int taken = 0;
        for (int m = 0; m < nkeep; m++) taken |= keep[m] == k || (!gamma && r % 2 == 0 && abs(keep[m] - k) == r / 2);
        if (!taken && (best < 0 || beta_before(cosf, own, k, best))) best = k;
      }
      if (best < 0) break;
      keep[nkeep++] = best;
    }
    for (int k = 0; k < r; k++) {
      int i = o + 1 + k, kept = 0;
      for (int m = 0; m < nkeep; m++) kept |= keep[m] == k;
      if (in[i] && !kept) {
        in[i] = 0;
        dropped[i] = 1;
        total++;
      }
    }
  }
  return total;
}

static int fb_solve_bordered(sb_lcp_work *wk, const sb_lcp_factor *f, int na, double *x);

static int fb_solve(sb_lcp_work *wk, const sb_lcp_factor *f, int na, int how, double *x) {
  const double *A = f->A, *F = f->F;
  if (how == 3) return fb_solve_bordered(wk, f, na, x) ? 3 : 0;
  if (how == 1) {
    LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, 'N', na, 1, F, na, f->piv, x, na);
    return all_finite(na, x);
  }
  double *b = wk->qloc, *y = wk->db;
  memcpy(b, x, (size_t)na * sizeof(double));
  memset(x, 0, (size_t)na * sizeof(double));
  for (int pass = 0; pass < 3; pass++) {
    memcpy(y, b, (size_t)na * sizeof(double));
    if (pass) cblas_dgemv(CblasColMajor, CblasNoTrans, na, na, -1.0, A, na, x, 1, 1.0, y, 1);
    LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'L', na, 1, F, na, y, na);
    cblas_dgemv(CblasColMajor, CblasTrans, na, na, 1.0, A, na, y, 1, 1.0, x, 1);
  }
  return all_finite(na, x) ? 2 : 0;
}

/* A factorization of M_BB for the set B (na, ascending) from the plain LU
 * of M_CC that another slot holds (base, how == 1, the same M), when B is C
 * less a few indices R plus a few D (k = |R| + |D| <= SB_LCP_BORDER_MAX and
 * under a third of C): M_BB x = r is the bordered system
 *   [M_CC alpha E_R M_CD] [x_C]   [r_C (0 on R)]
 *   [alpha E_R^T  0   0 ] [y  ] = [0           ]
 *   [M_DC         0 M_DD] [x_D]   [r_D         ]
 * (x_R = 0, the rows of R freed by y), solved by the Schur complement of
 * M_CC: O(k |C|^2) instead of |B|^3 for a new LU. The warm pivot's passes
 * mostly move a few indices (a pass adding the answer's degenerate ones).
 * The singularity test reads the pivots fb_factor_lu's does, against the
 * scale of M_BB (s: the largest of M_CC's pivots and of |M_CD|, |M_DC|,
 * |M_DD|), not the complement's own largest pivot (its pivots alone pass
 * whenever it is 1 x 1): M_CC's pivots and the complement's above 1e-11
 * s, and the complement's also clear of their rounding through M_CC^-1,
 * about DBL_EPSILON s g, g = s / (M_CC's smallest pivot) >= 1 (where M_CC
 * is ill-conditioned a singular M_BB's complement is that rounding, far
 * above 1e-11 s). The
 * complement's pivots may exceed s by far (C's block eliminated first, a
 * tiny pivot of M_CC whose direction D fills): that is not singularity and
 * does not count. With D alone they are the pivots of an LU of M_BB. For R,
 * E_R is scaled by alpha = M_CC's smallest pivot, which makes the
 * complement's block of R -alpha^2 (M_CC^-1)_RR: for one index, M_BB^-1 =
 * (M^-1)_BB - (M^-1)_Br (M^-1)_rB / (M^-1)_rr bounds M_BB's condition by
 * M_CC's times 1 + 1 / tau, tau = |(M^-1)_rr| / |M^-1|, and with |M^-1| ~
 * 1 / alpha that pivot is alpha tau: above 1e-11 s when (M_CC's pivot
 * ratio) / tau is within the plain test's 1e11 (alpha = s instead let a
 * removal from a moderately conditioned M_CC pass with M_BB's singular
 * values 1e15 apart). Into f: 3, or 0 (f untouched but scratch) where it
 * does not apply or the test fails. */
/* The complement's pivots must clear their own rounding, about
 * DBL_EPSILON s g (fb_factor_bordered), by 450 times: this many s g. */
#define BORDER_ROUNDING_MARGIN 1e-13
static int fb_factor_bordered(sb_lcp_work *wk, sb_lcp_factor *f, const sb_lcp_factor *base, int n, const double *M,
                              const int *set, int na) {
  if (!base->valid || base->how != 1 || base->n != n || f == base) return 0;
  int nc = base->na, nadd = 0, nrem = 0, i = 0, j = 0;
  const int *C = base->set;
  /* merge the two ascending sets */
  while (i < nc || j < na) {
    if (j >= na || (i < nc && C[i] < set[j])) {
      if (nrem == SB_LCP_BORDER_MAX) return 0;
      f->rpos[nrem++] = i++;
    } else if (i >= nc || set[j] < C[i]) {
      if (nadd == SB_LCP_BORDER_MAX) return 0;
      f->bpos[j] = -1 - nadd;
      f->dset[nadd++] = set[j++];
    } else {
      f->bpos[j++] = i++;
    }
  }
  int k = nadd + nrem;
  if (k == 0 || k > SB_LCP_BORDER_MAX || 3 * k > nc) return 0;
  double *Y = f->Y, *S = f->S, *Mdc = f->Mdc, bmin = INFINITY, scale = 0;
  sb_lu_pivot_range(nc, base->F, &bmin, &scale);
  /* Mdc = M_DC, Y's first nadd columns M_CD; scale: the largest of M_CC's
   * pivots and |M_DC|, |M_CD|, |M_DD| */
  for (int a = 0; a < nc; a++) {
    for (int r = 0; r < nadd; r++) {
      double v = m_entry(wk, n, M, f->dset[r], C[a]);
      Mdc[(size_t)a * nadd + r] = v;
      scale = fabs(v) > scale ? fabs(v) : scale;
    }
  }
  for (int c = 0; c < nadd; c++) {
    for (int a = 0; a < nc; a++) {
      double v = m_entry(wk, n, M, C[a], f->dset[c]);
      Y[(size_t)c * nc + a] = v;
      scale = fabs(v) > scale ? fabs(v) : scale;
    }
    for (int r = 0; r < nadd; r++) {
      double v = fabs(m_entry(wk, n, M, f->dset[r], f->dset[c]));
      scale = v > scale ? v : scale;
    }
  }
  double alpha = bmin;
  for (int c = 0; c < nrem; c++) {
    double *y = Y + (size_t)(nadd + c) * nc;
    memset(y, 0, (size_t)nc * sizeof(double));
    y[f->rpos[c]] = alpha;
  }
  /* Y = M_CC^-1 [M_CD alpha E_R] */
  if (LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, 'N', nc, k, base->F, nc, base->piv, Y, nc)) return 0;
  /* S = [M_DD 0; 0 0] - [M_DC; alpha E_R^T] Y */
  for (int c = 0; c < k; c++) {
    const double *y = Y + (size_t)c * nc;
    for (int r = 0; r < nadd; r++) {
      double v = c < nadd ? m_entry(wk, n, M, f->dset[r], f->dset[c]) : 0;
      for (int a = 0; a < nc; a++) v -= Mdc[(size_t)a * nadd + r] * y[a];
      S[(size_t)c * k + r] = v;
    }
    for (int r = 0; r < nrem; r++) S[(size_t)c * k + nadd + r] = -alpha * y[f->rpos[r]];
  }
  int info = LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, k, k, S, k, f->spiv);
  if (info) return 0;
  double smin = INFINITY, smax = 0, growth = scale > bmin ? scale / bmin : 1;
  sb_lu_pivot_range(k, S, &smin, &smax);
  if (!sb_lu_pivots_regular(bmin, scale) || !sb_lu_pivots_regular(smin, scale) || !(smin > BORDER_ROUNDING_MARGIN * scale * growth))
    return 0;
  f->border_scale = alpha;
  memcpy(f->F, base->F, (size_t)nc * nc * sizeof(double));
  memcpy(f->piv, base->piv, (size_t)nc * sizeof(int));
  memcpy(f->bset, C, (size_t)nc * sizeof(int));
  f->nbase = nc;
  f->nadd = nadd;
  f->nrem = nrem;
  wk->factorizations++;
  wk->bordered_factors++;
  return 3;
}

/* Solves M_BB x = b with fb_factor_bordered's factorization (b in x on
 * entry): u = M_CC^-1 r_C, t = S^-1 ([r_D; 0] - [M_DC; alpha E_R^T] u), x_C = u -
 * Y t, x_D = t's first nadd. Returns 0 on a non-finite x. */
static int fb_solve_bordered(sb_lcp_work *wk, const sb_lcp_factor *f, int na, double *x) {
  int nc = f->nbase, nadd = f->nadd, nrem = f->nrem, k = nadd + nrem;
  double *u = wk->qloc, t[SB_LCP_BORDER_MAX];
  memset(u, 0, (size_t)nc * sizeof(double));
  for (int b = 0; b < na; b++) {
    if (f->bpos[b] >= 0) u[f->bpos[b]] = x[b];
    else t[-1 - f->bpos[b]] = x[b];
  }
  LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, 'N', nc, 1, f->F, nc, f->piv, u, nc);
  for (int r = 0; r < nadd; r++)
    for (int a = 0; a < nc; a++) t[r] -= f->Mdc[(size_t)a * nadd + r] * u[a];
  for (int r = 0; r < nrem; r++) t[nadd + r] = -f->border_scale * u[f->rpos[r]];
  LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, 'N', k, 1, f->S, k, f->spiv, t, k);
  cblas_dgemv(CblasColMajor, CblasNoTrans, nc, k, -1.0, f->Y, nc, t, 1, 1.0, u, 1);
  for (int b = 0; b < na; b++) x[b] = f->bpos[b] >= 0 ? u[f->bpos[b]] : t[-1 - f->bpos[b]];
  return all_finite(na, x);
}

/* principal_submatrix's body, declared here for sb_lcp_factor_set */
static void principal_submatrix(const sb_lcp_work *wk, int n, const double *M, const int *set, int na, double *A);

int sb_lcp_factor_set(sb_lcp_work *wk, int slot, int n, const double *M, const int *set, int na, int singular,
                      int border) {
  sb_lcp_factor *f = &wk->fc[slot];
  principal_submatrix(wk, n, M, set, na, f->A);
  int how = border && !singular ? fb_factor_bordered(wk, f, &wk->fc[1 - slot], n, M, set, na) : 0;
  if (!how) how = fb_factor(wk, f, na, singular);
  f->valid = how != 0;
  if (f->valid) {
    memcpy(f->set, set, (size_t)na * sizeof(int));
    f->n = n;
    f->na = na;
    f->how = how;
  }
  return how;
}

int sb_lcp_factor_solve(sb_lcp_work *wk, int slot, double *x) {
  const sb_lcp_factor *f = &wk->fc[slot];
  return f->valid ? fb_solve(wk, f, f->na, f->how, x) : 0;
}

/* The cache slot holding a factorization of this set of this problem's
 * size, or -1. */
static int factor_cache_find(const sb_lcp_work *wk, int n, const int *set, int na) {
  for (int k = 0; k < 2; k++) {
    const sb_lcp_factor *c = &wk->fc[k];
    if (c->valid && c->n == n && c->na == na && !memcmp(c->set, set, (size_t)na * sizeof(int))) return k;
  }
  return -1;
}

/* M_AA (na x na, column-major) of the n x n M on the set (m_entry's). */
static void principal_submatrix(const sb_lcp_work *wk, int n, const double *M, const int *set, int na, double *A) {
  if (wk->entries && wk->entries->principal) {
    wk->entries->principal(wk->entries->ctx, set, na, A);
    return;
  }
  if (wk->entries) {
    for (int b = 0; b < na; b++)
      for (int a = 0; a < na; a++) A[(size_t)b * na + a] = m_entry(wk, n, M, set[a], set[b]);
    return;
  }
  for (int b = 0; b < na; b++) {
    const double *c = M + (size_t)set[b] * n;
    for (int a = 0; a < na; a++) A[(size_t)b * na + a] = c[set[a]];
  }
}

/* Forgets the cached factorizations (another matrix, or the chain's solvers
 * about to write their storage). */
static void factor_cache_clear(sb_lcp_work *wk) {
  wk->fc[0].valid = wk->fc[1].valid = 0;
  wk->fc_next = 0;
  wk->fc_solved = -1;
}

#define FB_STALL_ITERS 10
#define FB_PIVOT_PASSES 16 /* each costs an LU of the set: cheaper than a Newton step */
/* Passes from a warm start's set before the chain runs: the last step's set
 * is right or a swap away, or far off (a contact changed state), and then
 * the next passes mostly failed too (Scenario A: 3779 of 15597 pivot steps of
 * up to 16 passes solved, 7 us a pass at n = 48, where Lemke takes 24 us). */
#define WARM_PIVOT_PASSES 2

/* x = -(q + M z)_A over the set, from A = M_AA (column-major, na x na): z is
 * zero off the set for this purpose (the pass's right-hand side). By columns of
 * A, contiguous, each x_a still summed over b in increasing order: the same
 * numbers as a dot product per row. */
static void set_residual(int na, const double *restrict A, const int *set, const double *q, const double *z,
                         double *restrict x) {
  for (int a = 0; a < na; a++) x[a] = -q[set[a]];
  for (int b = 0; b < na; b++) {
    const double zb = z[set[b]], *restrict c = A + (size_t)b * na;
    for (int a = 0; a < na; a++) x[a] -= c[a] * zb;
  }
}

/* A pass's trial (zt, wt = q + M zt) with no infeasible index: its set's
 * small negative z (within the pass's tolerance) clipped to zero, w made
 * again from the clipped z, and the result kept in (z, w) only if it is within
 * the acceptance test. Returns 1 when kept. */
static int accept_clipped_trial(sb_lcp_work *wk, int n, const double *M, const double *q, const int *set, int na,
                                double *zt, double *wt, double *z, double *w, double tol, double qs) {
  int clipped = 0;
  for (int b = 0; b < na; b++)
    if (zt[set[b]] < 0) {
      zt[set[b]] = 0;
      clipped = 1;
    }
  if (clipped) {
    m_product(wk, n, M, q, zt, wt);
  }
  if (!within_tol(wk, n, M, q, zt, wt, min_residual(n, zt, wt), tol, qs, wk->da)) return 0;
  memcpy(z, zt, (size_t)n * sizeof(double));
  memcpy(w, wt, (size_t)n * sizeof(double));
  return 1;
}

/* The regular part of a singular set (fb_pivot_step's pivot on regular sets): the set's columns
 * in order of preference (those loaded in zref first, the most loaded first, then the others by
 * index), each kept when its pivot, after eliminating the columns kept before it, is regular
 * against its column's largest entry (sb_lu_pivots_regular, LU's test); repeated until none is
 * added, since a gamma's zero diagonal becomes a pivot once a beta of its block is in. A column
 * left out depends on the kept ones, so its impulse can be zero in the answer. A: na x na
 * (column-major); F: scratch of that size. Writes wk->regular_state[b] (1: kept) and returns how
 * many are left out. */
static int regular_part(sb_lcp_work *wk, int na, const double *restrict A, const int *set, const double *zref,
                        double *restrict F) {
  int *order = wk->regular_order, *keep = wk->regular_state, no = 0;
  double *colmax = wk->regular_colmax;
  memcpy(F, A, (size_t)na * na * sizeof(double));
  for (int b = 0; b < na; b++) {
    double big = 0;
    for (int a = 0; a < na; a++) big = fmax(big, fabs(A[(size_t)b * na + a]));
    colmax[b] = big;
    keep[b] = 0;
    if (!(zref[set[b]] > 0)) continue;
    int o = no++; /* insertion, most loaded first */
    for (; o > 0 && zref[set[order[o - 1]]] < zref[set[b]]; o--) order[o] = order[o - 1];
    order[o] = b;
  }
  for (int b = 0; b < na; b++)
    if (!(zref[set[b]] > 0)) order[no++] = b;
  int kept = 0;
  for (int added = 1; added;) {
    added = 0;
    for (int o = 0; o < na; o++) {
      int c = order[o];
      double pivot = F[(size_t)c * na + c];
      if (keep[c] || !sb_lu_pivots_regular(fabs(pivot), colmax[c])) continue;
      /* the columns still undecided less column c times their row-c entry over the pivot (the
       * kept ones are eliminated already: row c is zero there) */
      const double *restrict fc = F + (size_t)c * na;
      for (int j = 0; j < na; j++) {
        double *restrict fj = F + (size_t)j * na, m = fj[c] / pivot;
        if (keep[j] || j == c || m == 0) continue;
        for (int i = 0; i < na; i++) fj[i] -= fc[i] * m;
      }
      keep[c] = 1;
      kept++;
      added = 1;
    }
  }
  return na - kept;
}

/* The size of the largest friction block of the solve under way, 1 without blocks: the warm
 * start's pivot on regular sets is tried where the support's first trial had at most that many
 * infeasible indices, a contact's change (pivot_from_guess). */
static int largest_block(const sb_lcp_work *wk) {
  int big = 1;
  for (int b = 0; wk->fric_block && b < wk->fric_nblock; b++) big = wk->fric_block[b] > big ? wk->fric_block[b] : big;
  return big;
}

/* fb_pivot_step takes all rows' terms at once (row_terms, by columns of the
 * trial's support) instead of each doubtful row's (row_term) from this many
 * doubtful rows, and when they are at least 1/RATIO of the support: a row
 * reads n entries strided, the columns n each contiguous. */
#define ROW_TERMS_AT_ONCE_MIN 8
/* Passes without progress before the pivot on regular sets swaps one index at a time
 * (docs/contact_scaling.md, session 42) */
#define REGULAR_STALE_PASSES 5
#define ROW_TERMS_AT_ONCE_RATIO 4

/* Principal pivoting from the active set the iterate predicts, A = {i :
 * z_i - w_i > eps}: solve w_A = 0 with z elsewhere 0, then swap every
 * infeasible index (z_i < 0 in A, w_i < 0 outside; Judice-Pires block
 * pivoting, falling back to one index at a time when the count of
 * infeasibilities stops decreasing). Near the solution the predicted set is
 * right or a swap or two away long before Newton's tail has converged
 * (degenerate friction LCPs took tens of iterations to shave the last
 * digits), and from z = 0 it mostly solves contact LCPs outright. eps keeps
 * round-off (q of 1e-19 for a tangential velocity that is zero) out of the
 * set; infeasible means beyond round-off of the terms of w (the yardstick of
 * the final test). A start set already tried is not tried again. regular:
 * a set whose LU is singular is reduced to its regular part (regular_part)
 * instead of being solved by least norm, and a pass with fewer infeasible
 * indices than the pass before keeps the block swaps going. Writes
 * wk->pivot_first_infeasible (the first trial's count, n + 1 when there was
 * none). Returns 1 with z, w replaced when it solved the LCP to tolerance. */
static int fb_pivot_step(sb_lcp_work *wk, int n, const double *M, const double *q, double *z,
                         double *w, int *last_set, int *last_count, double tol, double qs, int max_passes,
                         int reuse, int regular, const int *extra, int nextra) {
  int *set = wk->ties, *in = wk->nonbasis, na = 0;
  wk->pivot_first_infeasible = n + 1;
  wk->pivot_first_unloads = 0;
  double eps = tol * qs, *x = wk->zloc, *zt = wk->ztry, *wt = wk->colbuf;
  for (int i = 0; i < n; i++)
    if ((in[i] = z[i] - w[i] > eps)) set[na++] = i;
  /* extra replaces a prediction within it (the same problem's next step, less its degenerate
   * indices); a prediction outside it is another problem's, or a step that changed */
  int within = nextra > 0;
  for (int a = 0, b = 0; within && a < na; a++) {
    while (b < nextra && extra[b] < set[a]) b++;
    within = b < nextra && extra[b] == set[a];
  }
  if (within) {
    for (int b = 0; b < nextra; b++) in[extra[b]] = 1;
    memcpy(set, extra, (size_t)nextra * sizeof(int));
    na = nextra;
  }
  if (na == *last_count && !memcmp(set, last_set, (size_t)na * sizeof(int))) return 0;
  memcpy(last_set, set, (size_t)na * sizeof(int));
  *last_count = na;
  int best = n + 1, previous = n + 1, stale = 0, *dropped = wk->fric_dropped, ndropped = 0, basic = 1,
      bordered_ok = 1;
  for (int pass = 0; pass < max_passes; pass++) {
    na = 0;
    for (int i = 0; i < n; i++)
      if (in[i]) set[na++] = i;
    /* x = z_A + dx, M_AA dx = -(q + M z)_A over the set: the least-norm
     * correction keeps nearest the iterate. With reuse, a factorization
     * of this set from the last solve of the same M (wk->fc) answers;
     * else the slot not used last takes it. Without, slot 0 (and no cache).
     * A set of friction pyramids singular by construction is made basic
     * (about the impulse of the iterate on pass 0, of the last trial after)
     * and factored as any set (LU, else least norm: singular for other
     * reasons too, more friction rows than the bodies' dofs). When its
     * answer is infeasible, or the reduced set cannot be solved, the pass
     * is repeated on the whole set, and the later passes of this solve keep
     * whole sets, as without the blocks: where the friction is statically indeterminate
     * across contacts the least-norm answer of the whole set spreads the
     * impulse and stays feasible where the basic one does not (the tiled
     * rope). A re-solve finds the whole set's factorization in the cache
     * and does not reduce it again. */
    int s = reuse ? factor_cache_find(wk, n, set, na) : -1, cached = s >= 0, how = 1;
    ndropped = 0;
    if (!cached && basic && wk->fric_block &&
        (ndropped = sb_lcp_friction_set_basic(wk->fric_nblock, wk->fric_block, n, M, wk->entries, pass ? zt : z, in,
                                             dropped))) {
      na = 0;
      for (int i = 0; i < n; i++)
        if (in[i]) set[na++] = i;
      s = reuse ? factor_cache_find(wk, n, set, na) : -1;
      cached = s >= 0;
    }
    if (reuse) {
      if (!cached) s = wk->fc_next;
      wk->fc_next = 1 - s;
    } else {
      factor_cache_clear(wk);
      s = 0;
    }
    sb_lcp_factor *f = &wk->fc[s];
    double *A = f->A;
    if (cached) {
      how = f->how;
    } else if (na > 0) {
      int singular = sb_lcp_friction_set_singular(wk->fric_nblock, wk->fric_block, in);
      how = sb_lcp_factor_set(wk, s, n, M, set, na, singular, reuse && wk->border && bordered_ok);
      f->valid &= reuse;
    }
    if (regular && how == 2 && na > 0) {
      /* the set's regular part (its scratch the slot's factor, factored again either way) */
      int left_out = regular_part(wk, na, A, set, pass ? zt : z, f->F);
      if (left_out > 0) {
        int kept = 0;
        for (int b = 0; b < na; b++) {
          if (wk->regular_state[b]) set[kept++] = set[b];
          else in[set[b]] = 0;
        }
        na = kept;
      }
      how = sb_lcp_factor_set(wk, s, n, M, set, na, left_out == 0, 0);
      f->valid &= reuse;
    }
    set_residual(na, A, set, q, z, x);
    if (na > 0) how = how ? fb_solve(wk, f, na, how, x) : 0;
    if (!how && ndropped) { /* the basic set could not be solved: this pass again, on the whole set */
      for (int i = 0; i < n; i++) in[i] |= dropped[i];
      basic = 0;
      pass--;
      continue;
    }
    if (!how) return 0;
    memset(zt, 0, (size_t)n * sizeof(double));
    for (int b = 0; b < na; b++) zt[set[b]] = x[b] + z[set[b]];
    m_product(wk, n, M, q, zt, wt);
    int ninf = 0, first = -1, *bad = wk->basis; /* LU pivots no longer needed */
    /* in the set: z < 0, or w_A != 0 (a least-norm solve of an inconsistent set);
     * beyond tol max(qs, the row's terms) >= tol qs, so only a row past
     * tol qs needs its terms */
    double e0 = tol * qs;
    int doubtful = 0, support = 0;
    for (int i = 0; i < n; i++) {
      bad[i] = in[i] ? zt[i] < -e0 || (how == 2 && fabs(wt[i]) > e0) : wt[i] < -e0;
      doubtful += bad[i];
      support += zt[i] != 0;
    }
    /* The doubtful rows' terms one by one (n reads each, strided) when they are
     * few, else all rows' at once by the columns of zt's support (contiguous):
     * the same doubles either way (row_term sums as row_terms does). From
     * entries, whose whole column costs n of them where a row costs the
     * support's: the columns restricted to the doubtful rows where the
     * entries give them, else row by row. */
    const double *terms = NULL;
    if (wk->entries && wk->entries->column_rows && doubtful > 0) {
      flagged_row_terms(wk, n, q, zt, bad, wk->da);
      terms = wk->da;
    } else if (!wk->entries && doubtful >= ROW_TERMS_AT_ONCE_MIN && ROW_TERMS_AT_ONCE_RATIO * doubtful >= support) {
      row_terms(wk, n, M, q, zt, wk->da);
      terms = wk->da;
    }
    for (int i = 0; i < n; i++) {
      if (bad[i]) {
        double e = terms ? terms[i] : row_term(wk, n, M, q, zt, i), ei = tol * (e > qs ? e : qs);
        bad[i] = in[i] ? zt[i] < -ei || (how == 2 && fabs(wt[i]) > ei) : wt[i] < -ei;
      }
      if (bad[i]) {
        ninf++;
        first = first < 0 ? i : first;
      }
    }
    if (pass == 0) {
      wk->pivot_first_infeasible = ninf;
      wk->pivot_first_unloads = 0; /* a loaded normal (a block's first index) below zero */
      for (int b = 0, o = 0; b < (wk->fric_block ? wk->fric_nblock : n); o += wk->fric_block ? wk->fric_block[b] : 1, b++)
        wk->pivot_first_unloads |= bad[o] && in[o];
    }
    if (ndropped && ninf) { /* the basic answer failed: this pass again, on the whole set */
      for (int i = 0; i < n; i++) in[i] |= dropped[i];
      basic = 0;
      pass--;
      continue;
    }
    if (ninf == 0) {
      int negatives = 0; /* on regular sets, the round-off negatives the acceptance clips (bad is free) */
      for (int b = 0; regular && b < na; b++) negatives += bad[set[b]] = zt[set[b]] < 0;
      if (!accept_clipped_trial(wk, n, M, q, set, na, zt, wt, z, w, tol, qs)) {
        /* A bordered factorization (the Schur complement of a few changed indices) is less
         * accurate than the set's own LU: where its feasible trial misses the tolerance, this
         * pass again with that LU (the 6- and 12-section arms: a cold solve each time) */
        if (how == 3) {
          f->valid = 0;
          bordered_ok = 0;
          pass--;
          continue;
        }
        /* On regular sets, where clipping the negatives is what missed the test (a slip of the
         * tolerance's size where they held it): those indices out, as a swap */
        if (!regular || !negatives) return 0;
        for (int i = 0; i < n; i++) in[i] &= !bad[i];
        continue;
      }
      if (reuse) {
        wk->fc_solved = f->valid ? s : -1;
        /* a regular set only (LU or bordered): a least-norm one is singular, and its union with the
         * next prediction too (the rod lying on a plane: the basic reduction drops what it adds) */
        wk->prev_na = how != 2 ? na : 0;
        if (how != 2) memcpy(wk->prev_set, set, (size_t)na * sizeof(int));
        wk->prev_n = n;
      }
      return 1;
    }
    /* On regular sets a pass with fewer infeasible indices than the one before is progress even
     * above the best, and more passes without it are allowed before the swaps go one index at a
     * time: the lying rod's count rises (the unloaded contact's neighbours take up friction, and
     * the rest of the rod slips slightly until they do) and then falls, and the rise spent
     * Judice and Pires' budget of three */
    if (ninf < best) {
      best = ninf;
      stale = 0;
    } else if (!(regular && ninf < previous)) {
      stale++;
    }
    previous = ninf;
    if (stale < (regular ? REGULAR_STALE_PASSES : 3)) {
      for (int i = 0; i < n; i++) in[i] ^= bad[i];
    } else {
      in[first] = !in[first]; /* Murty's least-index rule */
    }
  }
  return 0;
}

/* A re-solve of the same matrix (the proximal step: q moved by O(eps) on
 * the normals; sb_lcp_options.reuse_solved_set) from the last answer z:
 * the last warm pivot's solved set, kept factored (wk->fc_solved), is
 * mostly this answer's set too, where the set z - w > eps predicts leaves
 * out the degenerate indices (z = w = 0 at the last answer) and costs a
 * factorization and a pass to find them again. One pass on that set, x = z_A + dx with M_AA dx = -(q + M z)_A as
 * fb_pivot_step's pass computes it; accepted only where that pass would
 * accept the same trial without its row-terms allowance (z_A >= -tol qs,
 * w >= -tol qs off the set, and for a least-norm factor |w_A| <= tol qs),
 * clipped and tested alike, so the answer is the one that pass gives. The
 * cache is left as it was. Returns 1 with z, w replaced, else 0 (nothing
 * written but scratch). */
static int resolve_on_solved_set(sb_lcp_work *wk, int n, const double *M, const double *q, double *z, double *w,
                                 double tol, double qs) {
  if (wk->fc_solved < 0) return 0;
  const sb_lcp_factor *f = &wk->fc[wk->fc_solved];
  if (!f->valid || f->n != n) return 0;
  int na = f->na, how = f->how;
  const int *set = f->set;
  const double *A = f->A;
  double e0 = tol * qs, *x = wk->zloc, *zt = wk->ztry, *wt = wk->colbuf;
  if (na <= 0) return 0;
  set_residual(na, A, set, q, z, x);
  if (!fb_solve(wk, f, na, how, x)) return 0;
  memset(zt, 0, (size_t)n * sizeof(double));
  for (int b = 0; b < na; b++) zt[set[b]] = x[b] + z[set[b]];
  m_product(wk, n, M, q, zt, wt);
  for (int b = 0, i = 0; i < n; i++) {
    int in = b < na && set[b] == i;
    if (in ? zt[i] < -e0 || (how == 2 && fabs(wt[i]) > e0) : wt[i] < -e0) return 0;
    b += in;
  }
  return accept_clipped_trial(wk, n, M, q, set, na, zt, wt, z, w, tol, qs);
}

/* Passes of the warm start's second try (warm_pivot_from_support): a lying
 * rope's support is the answer's set or a few swaps from it. */
#define SUPPORT_PIVOT_PASSES 6
/* Passes of its third, on regular sets: the lying rod's needed up to nine
 * (docs/contact_scaling.md, session 42) */
#define REGULAR_PIVOT_PASSES 10

/* The warm start's second try, when the pivot from the guess's predicted set
 * {z_i - w_i > eps} failed: principal pivoting from the guess's support
 * {z_i > eps} alone, the last step's active set. Where a sticking set has more
 * friction rows than the bodies have dofs (a rope lying on a plane, three
 * contacts an element), the friction is statically indeterminate, and the
 * last answer does not hold this step's tangential velocities to round-off:
 * about half of every sticking contact's beta rows read a tiny negative
 * w = D_k . v_t at the guess, and the predicted set takes them in, a set with
 * no exact solution whose least-norm answer is infeasible in many rows. The
 * support leaves those out. zg: the guess (replaced on success, as
 * fb_pivot_step does; *wz then points at its Mz + q). Returns 1 when solved to
 * the pivot's own test (the caller still checks). */
static int warm_pivot_from_support(sb_lcp_work *wk, int n, const double *M, const double *q, double *zg,
                                   double tol, double qs, int passes, int regular, const double **wz) {
  double *w0 = wk->d; /* solve_fb's, free here: zero, so that the prediction is z alone */
  int last_count = -1;
  memset(w0, 0, (size_t)n * sizeof(double));
  *wz = w0;
  return fb_pivot_step(wk, n, M, q, zg, w0, wk->idx, &last_count, tol, qs, passes, 1, regular, NULL, 0);
}

/* The warm start's pivots from a guess zg (wg = M zg + q): from the set it
 * predicts (extra joining it, fb_pivot_step), then from its support, then
 * from its support on regular sets; 1 when one solves to the final test,
 * with zg the answer and wk->w its Mz + q (computed from that z), *rg its
 * residual.
 *
 * The third try is for sticking friction that is statically indeterminate
 * across contacts: on a rod lying along a plane, the betas of one direction
 * at every disk are largely combinations of the normals (the slip at a
 * disk's rim follows its neighbours' heights), so a set with them is
 * singular. Its least-norm answer spreads the impulse over the dependent
 * betas with mixed signs, slightly below zero, and the swaps that follow do
 * not reach a feasible set: where one disk unloads and its neighbours take
 * up its load and a little friction, the first two tries failed and Lemke
 * answered from zero. On each set's regular part (regular_part) the answers
 * are exact, and the swaps reach the set Lemke finds. The try follows the
 * others, so that it changes nothing they answered: where the friction must
 * spread to stay feasible (the tiled rope), the least-norm answer is the
 * one that solves. It runs only where the support's first trial unloads a
 * contact (a loaded normal below zero) and is a contact's change away (at
 * most a block's count of infeasible indices): elsewhere (the tiled rope
 * landing, whose first trials mostly load closing contacts) the try seldom
 * answered and its passes cost more than Lemke (docs/contact_scaling.md,
 * session 42). */
static int pivot_from_guess(sb_lcp_work *wk, int n, const double *M, const double *q, double *zg, double *wg,
                            int *last_count, double tol, double qs, const int *extra, int nextra, double *rg) {
  const double *wp = wg;
  int pivoted = fb_pivot_step(wk, n, M, q, zg, wg, wk->idx, last_count, tol, qs, WARM_PIVOT_PASSES, 1, 0, extra,
                              nextra) ||
                warm_pivot_from_support(wk, n, M, q, zg, tol, qs, SUPPORT_PIVOT_PASSES, 0, &wp);
  int regular = !pivoted && wk->pivot_first_unloads && wk->pivot_first_infeasible <= largest_block(wk);
  if (regular) pivoted = warm_pivot_from_support(wk, n, M, q, zg, tol, qs, REGULAR_PIVOT_PASSES, 1, &wp);
  int solved = pivoted && check_pivot_answer(wk, n, M, q, zg, wp, wk->w, tol * qs, tol, rg, wk->da);
  wk->regular_pivots += solved && regular;
  return solved;
}

/* FB's Newton direction d (H d = -Phi, H = Da + Db M at (z, w)): by LU of
 * the formed H (in wk->H, its factor in wk->HtH); on an unformed M by GMRES
 * through M's products (fb_krylov.c) to the relative residual eta. Returns
 * 1 with a descent direction, 0 when there is none (H singular, or GMRES
 * made no progress). */
static int fb_newton_direction(sb_lcp_work *wk, int n, const double *M, const double *z, const double *w,
                               const double *phi, double eta, double *d) {
  if (!M) {
    sb_fb_krylov_jacobian(wk, n, z, w);
    return sb_fb_krylov_newton(wk, n, phi, eta, d) < 1 && all_finite(n, d);
  }
  double *H = wk->H, *A = wk->HtH;
  for (int i = 0; i < n; i++) {
    double a, b;
    sb_fb_coefficients(z[i], w[i], &a, &b);
    for (int j = 0; j < n; j++) H[(size_t)j * n + i] = b * M[(size_t)j * n + i];
    H[(size_t)i * n + i] += a;
  }
  memcpy(A, H, (size_t)n * n * sizeof(double));
  if (LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, n, n, A, n, wk->ipiv)) return 0;
  for (int i = 0; i < n; i++) d[i] = -phi[i];
  LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, 'N', n, 1, A, n, wk->ipiv, d, n);
  return 1;
}

/* The Levenberg-Marquardt system (H^T H + mu I) d = -H^T Phi at the H of the
 * last fb_newton_direction: its parts that do not depend on mu, and mu's
 * scale (returned). Formed: H^T H once an iteration (n^3) into wk->HtH,
 * mirrored into its strict upper triangle (which Cholesky's lower factor
 * leaves untouched), its diagonal into wk->db, -H^T Phi's H^T Phi into
 * wk->g; the scale is H^T H's largest diagonal entry. Unformed: nothing to
 * form; the scale is H's largest diagonal entry squared. */
static double fb_lm_prepare(sb_lcp_work *wk, int n, const double *M, const double *phi) {
  if (!M) return sb_fb_krylov_hth_scale(wk, n);
  double *H = wk->H, *A = wk->HtH, dmax = 0;
  cblas_dgemv(CblasColMajor, CblasTrans, n, n, 1.0, H, n, phi, 1, 0.0, wk->g, 1);
  cblas_dsyrk(CblasColMajor, CblasLower, CblasTrans, n, n, 1.0, H, n, 0.0, A, n);
  for (int i = 0; i < n; i++) {
    wk->db[i] = A[(size_t)i * n + i];
    dmax = fmax(dmax, wk->db[i]);
  }
  for (int j = 0; j < n; j++)
    for (int i = j + 1; i < n; i++) A[(size_t)i * n + j] = A[(size_t)j * n + i];
  return dmax;
}

/* One Levenberg-Marquardt step for mu (retry: not the first mu of this
 * iteration): d, and the model Phi + H d into Hd. Formed: Cholesky of H^T H
 * + mu I, its lower triangle taken back from the mirror on a retry (O(n^2),
 * the same doubles); unformed: CGLS (fb_krylov.c). Returns 0 when there is
 * no step (Cholesky failed, or d not finite). */
static int fb_lm_step(sb_lcp_work *wk, int n, const double *M, const double *phi, double mu, int retry, double *d,
                      double *Hd) {
  if (!M) {
    sb_fb_krylov_least_squares(wk, n, phi, mu, d);
    if (!all_finite(n, d)) return 0;
    sb_fb_krylov_model(wk, n, phi, d, Hd);
    return 1;
  }
  double *A = wk->HtH;
  if (retry)
    for (int j = 0; j < n; j++)
      for (int i = j + 1; i < n; i++) A[(size_t)j * n + i] = A[(size_t)i * n + j];
  for (int i = 0; i < n; i++) A[(size_t)i * n + i] = wk->db[i] + mu;
  if (LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', n, A, n)) return 0;
  for (int i = 0; i < n; i++) d[i] = -wk->g[i];
  LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'L', n, 1, A, n, d, n);
  memcpy(Hd, phi, n * sizeof(double));
  cblas_dgemv(CblasColMajor, CblasNoTrans, n, n, 1.0, wk->H, n, d, 1, 1.0, Hd, 1);
  return 1;
}

/* Semismooth Newton on Phi(z) = phi(z, Mz + q) = 0. Each iteration first
 * tries the Newton direction H d = -Phi (H an element of the generalized
 * Jacobian) with an Armijo backtracking on |Phi|^2; when H is singular or
 * the search fails, Levenberg-Marquardt steps (H^T H + mu I) d = -H^T Phi with mu
 * adapted as a trust region (ratio of actual to predicted reduction).
 * M NULL: M unformed, read through the solve's entries' products alone
 * (fb_krylov.c). */
static sb_lcp_status solve_fb(sb_lcp_work *wk, int n, const double *M, const double *q, double *z,
                              double tol, int max_iter, int *iters, char *msg, int msg_size) {
  double *w = wk->w, *phi = wk->phi, *d = wk->d;
  double *zt = wk->ztry, *wt = wk->colbuf, *phit = wk->phitry, *Hd = wk->da;
  double psi = fb_eval(wk, n, M, q, z, w, phi), qs = q_scale(n, q);
  double lambda = 1e-6; /* mu = lambda * max diag(H^T H) */
  int it = 0, collapsed = 0, *last_set = wk->idx, last_count = -1, stagnant = 0, ref_it = 0;
  double psi_ref = psi, psi0 = psi;
  for (; it < max_iter && !collapsed && !stagnant; it++) {
    if (within_tol(wk, n, M, q, z, w, min_residual(n, z, w), tol, qs, zt)) break;
    /* Near a stationary point that is not a solution the merit function
     * creeps for the rest of the budget: give up when FB_STALL_ITERS
     * iterations have not halved it (linear convergence at a rate below
     * 0.93 still passes), so the caller can move on. */
    if (it - ref_it >= FB_STALL_ITERS) {
      stagnant = psi > 0.5 * psi_ref;
      psi_ref = psi;
      ref_it = it;
      if (stagnant) break;
    }
    if (!wk->fb_no_pivot &&
        fb_pivot_step(wk, n, M, q, z, w, last_set, &last_count, tol, qs, FB_PIVOT_PASSES, 0, 0, NULL, 0)) {
      *iters = it;
      return SB_LCP_SOLVED; /* z >= 0 exactly, w = Mz + q: nothing to polish */
    }
    /* Newton, to a forcing term that shrinks with |Phi| where solved
     * inexactly (superlinear convergence, as the exact step's near a solution) */
    double eta = fmax(1e-12, fmin(0.1, sqrt(psi / psi0)));
    if (fb_newton_direction(wk, n, M, z, w, phi, eta, d)) {
      /* Armijo backtracking: d is a descent direction, grad(psi) . d = -|Phi|^2
       * (or, solved inexactly to |H d + Phi| < |Phi|, still negative) */
      int accepted = 0;
      for (double t = 1; t > 1e-4 && !accepted; t *= 0.5) {
        for (int i = 0; i < n; i++) zt[i] = z[i] + t * d[i];
        double psit = fb_eval(wk, n, M, q, zt, wt, phit);
        if (isfinite(psit) && psit <= (1 - 2e-4 * t) * psi) {
          memcpy(z, zt, n * sizeof(double));
          memcpy(w, wt, n * sizeof(double));
          memcpy(phi, phit, n * sizeof(double));
          psi = psit;
          accepted = 1;
        }
      }
      if (accepted) {
        lambda = fmax(lambda / 4, 1e-16);
        continue;
      }
    }
    /* Levenberg-Marquardt, mu adapted as a trust region */
    double dmax = fb_lm_prepare(wk, n, M, phi);
    for (int retry = 0;; retry++) {
      double mu = lambda * fmax(dmax, 1e-300);
      int ok = fb_lm_step(wk, n, M, phi, mu, retry, d, Hd);
      double rho = -1, psit = INFINITY;
      if (ok) {
        double pred = psi - 0.5 * cblas_ddot(n, Hd, 1, Hd, 1);
        for (int i = 0; i < n; i++) zt[i] = z[i] + d[i];
        psit = fb_eval(wk, n, M, q, zt, wt, phit);
        if (pred > 0 && isfinite(psit)) rho = (psi - psit) / pred;
      }
      if (rho > 1e-4) {
        memcpy(z, zt, n * sizeof(double));
        memcpy(w, wt, n * sizeof(double));
        memcpy(phi, phit, n * sizeof(double));
        psi = psit;
        if (rho > 0.75) lambda = fmax(lambda / 4, 1e-16);
        else if (rho < 0.25) lambda *= 4;
        break;
      }
      lambda *= 4;
      if (lambda > 1e10) {
        collapsed = 1;
        break;
      }
    }
  }
  *iters = it;
  /* Newton ends with z within round-off of the orthant: put it inside
   * unless that costs accuracy */
  double res = min_residual(n, z, w);
  for (int i = 0; i < n; i++) zt[i] = fmax(z[i], 0);
  fb_eval(wk, n, M, q, zt, wt, phit);
  double rclip = min_residual(n, zt, wt);
  if (rclip <= res || within_tol(wk, n, M, q, zt, wt, rclip, tol, qs, phit)) {
    memcpy(z, zt, n * sizeof(double));
    memcpy(w, wt, n * sizeof(double));
    res = rclip;
  }
  if (within_tol(wk, n, M, q, z, w, res, tol, qs, phit)) return SB_LCP_SOLVED;
  if (stagnant) {
    sb_errorf(msg, msg_size, "fb: no progress over the last %d of %d iterations, residual %.3g",
              FB_STALL_ITERS, it, res);
    return SB_LCP_STALLED;
  }
  if (!collapsed) {
    sb_errorf(msg, msg_size, "fb: %d Newton iterations, residual %.3g", it, res);
    return SB_LCP_MAX_ITER;
  }
  sb_errorf(msg, msg_size, "fb: trust region collapsed after %d iterations (a stationary point of "
            "the merit function that is not a solution), residual %.3g", it, res);
  return SB_LCP_STALLED;
}

/* ---------- Lemke ---------- */

/* fmax(x, y) for a y that is not NaN, inline: a NaN x gives y, as fmax's
 * does (the library call costs more than the loops it sits in here). */
static inline double max_of(double x, double y) { return x > y ? x : y; }

int sb_lemke_ratio_test(int n, const double *col, double sign, const double *bbar, int *ties) {
  double cmax = 0;
  for (int i = 0; i < n; i++) cmax = max_of(fabs(col[i]), cmax);
  double ptol = 1e-12 * fmax(cmax, 1e-300);
  /* minimum ratio over rows that block (x_i decreases as the entering one grows) */
  double best = INFINITY;
  int nt = 0;
  for (int i = 0; i < n; i++) {
    double a = sign * col[i];
    if (a <= ptol) continue;
    double ratio = max_of(bbar[i], 0) / a;
    if (ratio < best * (1 - 1e-12) - 1e-300) {
      best = ratio;
      nt = 0;
      ties[nt++] = i;
    } else if (ratio <= best * (1 + 1e-12) + 1e-300) {
      ties[nt++] = i;
    }
  }
  return nt;
}

/* Lexicographic rule: smallest row of B^-1 / a among the ties. Entries of
 * B^-1 at round-off level relative to their column are zeros: left as they
 * are, their quotients decide ties wrongly and Lemke cycles. */
int sb_lemke_lexico_step(int n, const double *binv, const double *col, double sign, int *ties, int nt,
                         double *ratio_k) {
  double cmaxk = 0;
  for (int i = 0; i < n; i++) cmaxk = fmax(cmaxk, fabs(binv[i]));
  double zero = 1e-11 * fmax(cmaxk, 1e-300);
  double lo = INFINITY;
  for (int t = 0; t < nt; t++) {
    double bk = binv[ties[t]];
    ratio_k[t] = (fabs(bk) <= zero ? 0 : bk) / (sign * col[ties[t]]);
    lo = fmin(lo, ratio_k[t]);
  }
  int keep = 0;
  for (int t = 0; t < nt; t++)
    if (ratio_k[t] <= lo + 1e-11 * fabs(lo)) {
      ratio_k[keep] = ratio_k[t];
      ties[keep++] = ties[t];
    }
  return keep;
}

/* Condensed tableau x_B = bbar + T x_N over the variables w_0..w_{n-1}
 * (ids 0..n-1), z_0..z_{n-1} (n..2n-1) and the artificial z0 (2n); bbar is
 * column n + 1 of T so that a pivot is one rank-1 update. */
static double lemke_binv(const sb_lcp_work *wk, int n, int row, int k, const int *pos) {
  /* entry (row, k) of the basis inverse: the tableau column of w_k */
  int p = pos[k];
  if (p >= 0) return p == row ? 1.0 : 0.0;
  return -wk->T[(size_t)(-p - 1) * n + row];
}

/* One pivot of the tableau on (row, col): the basic variable of row leaves
 * for the nonbasic one of col; basis, nonbasis and pos follow. Returns the
 * id of the variable that left. */
static int lemke_pivot(sb_lcp_work *wk, int n, int row, int col) {
  double *T = wk->T, *rr = wk->rowbuf, *tc = wk->colbuf;
  int *basis = wk->basis, *nonb = wk->nonbasis, *pos = wk->idx;
  int nc = n + 2;
  double p = T[(size_t)col * n + row];
  for (int i = 0; i < n; i++) tc[i] = T[(size_t)col * n + i];
  for (int j = 0; j < nc; j++) rr[j] = -T[(size_t)j * n + row] / p;
  rr[col] = 1.0 / p;
  tc[row] = 0;
  for (int i = 0; i < n; i++) T[(size_t)col * n + i] = 0;
  cblas_dger(CblasColMajor, n, nc, 1.0, tc, 1, rr, 1, T, n);
  for (int j = 0; j < nc; j++) T[(size_t)j * n + row] = rr[j];
  int leaving = basis[row], entering = nonb[col];
  basis[row] = entering;
  nonb[col] = leaving;
  if (leaving < n) pos[leaving] = -(col + 1);
  if (entering < n) pos[entering] = row;
  return leaving;
}

/* The cold start's tableau: every w basic, x_B = q + M z + 1 z0. */
static void lemke_tableau(sb_lcp_work *wk, int n, const double *M, int ldm, const double *q) {
  double *T = wk->T;
  int bcol = n + 1;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) T[(size_t)j * n + i] = M[(size_t)j * ldm + i];
  for (int i = 0; i < n; i++) {
    T[(size_t)n * n + i] = 1.0; /* covering vector */
    T[(size_t)bcol * n + i] = q[i];
    wk->basis[i] = i;
    wk->idx[i] = i;
    wk->nonbasis[i] = n + i;
  }
  wk->nonbasis[n] = 2 * n;
}

/* The complementary basis of a guess's set as Lemke's start (warm_lemke):
 * z_i for w_i, i in the set (start: n flags), pivoted in one at a time in
 * index order, an index whose diagonal entry is small against its column
 * left for the next pass (a zero diagonal, gamma's, becomes nonzero once a
 * beta of its block is in). When every index left has a pivot too small
 * (M_SS singular: a contact's two opposite betas both loaded, as the
 * least-norm answers of a rope lying still have them), those stay out: the
 * start is the regular part of the set this order finds. Then the covering
 * vector is the one whose column in that basis is all ones, so z0 entering
 * at the most negative row makes every basic variable nonnegative: Lemke's
 * start from any complementary basis, the cold one being the set {}.
 * Returns 0 when no index of the set pivots in, else 1; *pivots counts the
 * pivots made. */
static int lemke_start(sb_lcp_work *wk, int n, const int *start, int *pivots) {
  double *T = wk->T;
  for (int made = 1; made;) {
    made = 0;
    for (int i = 0; i < n; i++) {
      if (!start[i] || wk->basis[i] != i) continue; /* z_i is in, or not wanted */
      const double *col = T + (size_t)i * n;
      double big = 0;
      for (int k = 0; k < n; k++) big = fmax(big, fabs(col[k]));
      if (!(fabs(col[i]) > SB_LEMKE_START_PIVOT_TOL * big)) continue; /* for a later pass, if any */
      lemke_pivot(wk, n, i, i); /* z_i (column i) for w_i (row i) */
      (*pivots)++;
      made = 1;
    }
  }
  if (*pivots == 0) return 0;
  for (int i = 0; i < n; i++) T[(size_t)n * n + i] = 1.0;
  return 1;
}

/* Lemke from the cold basis (start NULL) or from the complementary basis
 * of the flagged set (lemke_start; when no index of it pivots in,
 * SB_LCP_STALLED with z = 0: the caller runs the cold one). *warm (may be
 * NULL): 1 when Lemke ran from the set's basis. */
static sb_lcp_status lemke_tableau_core(sb_lcp_work *wk, int n, const double *M, int ldm, const double *q,
                                        const int *start, double *z, int max_pivots, int *pivots, int *warm,
                                        char *msg, int msg_size) {
  double *T = wk->T;
  int *basis = wk->basis, *nonb = wk->nonbasis, *ties = wk->ties;
  int *pos = wk->idx; /* w_k: >= 0 basic row, < 0 nonbasic column -(c + 1); only w ids */
  double *ratio_k = wk->g, *binv = wk->db;
  int bcol = n + 1;
  *pivots = 0;
  if (warm) *warm = 0;
  int from_set = 0;
  for (int i = 0; start && i < n; i++) from_set |= start[i] != 0;
  for (int i = 0; i < n; i++) z[i] = 0;
  const double *b = q; /* the basic variables' values, stride 1 */
  if (from_set) {
    lemke_tableau(wk, n, M, ldm, q);
    if (!lemke_start(wk, n, start, pivots)) {
      sb_errorf(msg, msg_size, "lemke: no index of the guess's set pivots in (its M_SS singular)");
      return SB_LCP_STALLED;
    }
    b = T + (size_t)bcol * n;
    if (warm) *warm = 1;
  }
  int rmin = 0;
  for (int i = 1; i < n; i++)
    if (b[i] <= b[rmin]) rmin = i; /* ties: the largest index is the lexicographic minimum */
  if (b[rmin] >= 0) {
    for (int i = 0; b != q && i < n; i++)
      if (basis[i] >= n && basis[i] < 2 * n) z[basis[i] - n] = fmax(b[i], 0);
    return SB_LCP_SOLVED;
  }
  if (b == q) lemke_tableau(wk, n, M, ldm, q);
  int row = rmin, col = n;
  for (;;) {
    int leaving = lemke_pivot(wk, n, row, col);
    (*pivots)++;
    if (leaving == 2 * n) break; /* z0 left the basis: complementary solution */
    if (*pivots >= max_pivots) {
      sb_errorf(msg, msg_size, "lemke: %d pivots without a solution", *pivots);
      return SB_LCP_MAX_ITER;
    }
    /* the complement of the leaving variable enters */
    int ent = leaving < n ? leaving + n : leaving - n;
    col = -1;
    for (int j = 0; j <= n; j++)
      if (nonb[j] == ent) col = j;
    const double *tcol = T + (size_t)col * n; /* -B^-1 a_entering */
    int nt = sb_lemke_ratio_test(n, tcol, -1.0, T + (size_t)bcol * n, ties);
    if (nt == 0) {
      sb_errorf(msg, msg_size, "lemke: secondary ray after %d pivots (no solution found)", *pivots);
      return SB_LCP_RAY;
    }
    row = -1;
    for (int t = 0; t < nt; t++)
      if (basis[ties[t]] == 2 * n) row = ties[t]; /* let z0 leave when it can */
    for (int k = 0; row < 0 && k < n && nt > 1; k++) {
      for (int i = 0; i < n; i++) binv[i] = lemke_binv(wk, n, i, k, pos);
      nt = sb_lemke_lexico_step(n, binv, tcol, -1.0, ties, nt, ratio_k);
    }
    if (row < 0) row = ties[0];
  }
  for (int i = 0; i < n; i++)
    if (basis[i] >= n && basis[i] < 2 * n) z[basis[i] - n] = fmax(T[(size_t)bcol * n + i], 0);
  return SB_LCP_SOLVED;
}

/* Lemke on the whole problem, in the form sb_lcp_options.lemke_form asks
 * for (auto: by the problem's size); the form run is kept for
 * sb_lcp_info.lemke_form. */
static sb_lcp_status lemke_core(sb_lcp_work *wk, int n, const double *M, int ldm, const double *q,
                                const int *start, double *z, int max_pivots, int *pivots, int *warm,
                                char *msg, int msg_size) {
  int form = wk->lemke_form;
  /* an unformed M (its entries only) stays unformed at any size: the
   * tableau would form it */
  if (form == SB_LCP_LEMKE_AUTO)
    form = n >= SB_LCP_LEMKE_AUTO_MIN_N || !M ? SB_LCP_LEMKE_REVISED : SB_LCP_LEMKE_TABLEAU;
  wk->lemke_ran = form;
  if (form == SB_LCP_LEMKE_REVISED)
    return sb_lemke_revised(wk, n, M, ldm, wk->entries, q, start, z, max_pivots, pivots, warm, msg, msg_size);
  if (!M) ldm = n;
  return lemke_tableau_core(wk, n, stored_matrix(wk, n, M), ldm, q, start, z, max_pivots, pivots, warm, msg,
                            msg_size);
}

/* Re-solves the complementary basis Lemke found, M_BB z_B = -q_B, from the
 * original data: removes the round-off accumulated over the pivots. */
static void lemke_polish(sb_lcp_work *wk, int n, const double *M, const double *q, double *z) {
  int *B = wk->ipiv, nb = 0; /* ipiv reused as the index set, then as pivots */
  int *set = wk->ties;
  for (int i = 0; i < n; i++)
    if (z[i] > 0) set[nb++] = i;
  if (nb == 0) return;
  double *A = wk->LU, *x = wk->zloc;
  principal_submatrix(wk, n, M, set, nb, A);
  for (int b = 0; b < nb; b++) x[b] = -q[set[b]];
  if (LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, nb, nb, A, nb, B)) return;
  LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, 'N', nb, 1, A, nb, B, x, nb);
  double *zt = wk->ztry, *wt = wk->colbuf;
  memset(zt, 0, n * sizeof(double));
  for (int b = 0; b < nb; b++) zt[set[b]] = fmax(x[b], 0);
  if (!all_finite(n, zt)) return;
  double r0 = residual_on(wk, n, M, q, z, wt, NULL);
  double r1 = residual_on(wk, n, M, q, zt, wt, NULL);
  if (r1 <= r0) memcpy(z, zt, n * sizeof(double));
}

/* One step of iterative refinement of Lemke's answer, for when it fails the
 * acceptance test by round-off: the tableau's entries carry the round-off of
 * every pivot relative to the largest entries of their columns, so a row
 * whose terms are small (a friction row of a nearly unloaded contact) can
 * end well above round-off of its own terms, and the one re-solve
 * lemke_polish makes does not help when M_SS (S: the support of z) is
 * singular or nearly so (dependent friction rows; Tikhonov regularizes only
 * the normals): its LU answer is any member of a family of solutions, far
 * from the complementary one in the rows outside S. The correction is
 * instead the least-norm one, M_SS dz = -(Mz + q)_S by dgelsy (complete
 * orthogonal factorization, rank by rcond), so it stays nearest Lemke's z
 * and leaves the rows outside S as they were up to O(|dz|). The answer
 * replaces z only when it passes the acceptance test. wk->T (the tableau,
 * no longer needed) is dgelsy's workspace. Returns 1 when z was replaced. */
#define LEMKE_REFINE_RCOND 1e-10
static int lemke_refine(sb_lcp_work *wk, int n, const double *M, const double *q, double *z, double tol,
                        double qs) {
  int *set = wk->ties, *jpvt = wk->ipiv, nb = 0;
  for (int i = 0; i < n; i++)
    if (z[i] > 0) set[nb++] = i;
  int lwork = n * (n + 2);
  if (nb == 0 || lwork < 2 * nb + 3 * nb + 1) return 0;
  double *A = wk->HtH, *dz = wk->zloc, *w = wk->colbuf, *zt = wk->ztry, rt;
  m_product(wk, n, M, q, z, w);
  principal_submatrix(wk, n, M, set, nb, A);
  for (int b = 0; b < nb; b++) {
    dz[b] = -w[set[b]];
    jpvt[b] = 0;
  }
  int rank;
  if (LAPACKE_dgelsy_work(LAPACK_COL_MAJOR, nb, nb, 1, A, nb, dz, nb, jpvt, LEMKE_REFINE_RCOND, &rank, wk->T, lwork))
    return 0;
  memcpy(zt, z, (size_t)n * sizeof(double));
  for (int b = 0; b < nb; b++) zt[set[b]] = fmax(z[set[b]] + dz[b], 0);
  if (!all_finite(n, zt)) return 0;
  if (!check_on(wk, n, M, q, zt, w, tol * qs, tol, &rt, NULL, wk->da)) return 0;
  memcpy(z, zt, (size_t)n * sizeof(double));
  return 1;
}

/* Lemke's answer made to pass the acceptance test when it misses by
 * round-off: the re-solve of its support (always, as before), then, only if
 * the answer still fails the test, the least-norm refinement and, if that
 * fails too, principal pivoting from the answer's active set (fb_pivot_step,
 * two passes: the set is right or a swap away). Each candidate is checked
 * by the same test as the chain's, sb_lcp_check in this problem, so the
 * meaning of "solved" is unchanged; what fails all three goes to the next
 * solver as before. */
static int lemke_finish(sb_lcp_work *wk, int n, const double *M, const double *q, double *z, double tol) {
  lemke_polish(wk, n, M, q, z);
  double r, qs = q_scale(n, q), *w = wk->w;
  if (check_on(wk, n, M, q, z, w, tol * qs, tol, &r, NULL, wk->da)) return 1;
  if (lemke_refine(wk, n, M, q, z, tol, qs)) return 1;
  int last_count = -1;
  m_product(wk, n, M, q, z, w);
  return fb_pivot_step(wk, n, M, q, z, w, wk->idx, &last_count, tol, qs, 2, 0, 0, NULL, 0) &&
         check_on(wk, n, M, q, z, w, tol * qs, tol, &r, NULL, wk->da);
}

/* An answer Lemke ended on that misses even a test LEMKE_BROKEN_FACTOR
 * times looser than the acceptance test (tol, 1e-12 by default, of its
 * rows' terms): not round-off but a breakdown, the pivots having followed
 * ratios that ill-conditioned bases computed wrongly. It is no
 * near-solution for FB or PGS to start from, so the perturbed retry treats
 * it as a ray; on large LCPs that is also far cheaper than the fallbacks,
 * which form and factor n x n matrices (docs/contact_scaling.md, session 37:
 * a lying rope's step, whose Lemke broke down so with some BLAS kernels).
 * An answer within the looser test still goes to the next solver (the
 * comment on LEMKE_RETRY_DELTA says why). */
#define LEMKE_BROKEN_FACTOR 1e3
static int lemke_broken(sb_lcp_work *wk, int n, const double *M, const double *q, const double *z, double tol) {
  double r, loose = LEMKE_BROKEN_FACTOR * tol;
  return !check_on(wk, n, M, q, z, wk->w, loose * q_scale(n, q), loose, &r, NULL, wk->da);
}

/* Lemke's path through a degenerate LCP. The contact LCPs are degenerate by
 * construction: the pyramid's opposite directions make w_beta_k + w_beta_k'
 * = 2 gamma exactly, so an unloaded contact has several basic variables at
 * zero at once and the ratio test ties. The lexicographic rule resolves
 * ties in exact arithmetic; in floating point it compares entries of B^-1
 * that carry the round-off of every pivot so far, and on the sliding arms
 * (issue 15) it chose leaving variables that led to a secondary ray on LCPs
 * that have a solution (Tikhonov on the normals and on gamma makes
 * z^T M z = 0, z >= 0 imply z = 0, so in exact arithmetic Lemke ends on no
 * secondary ray, whatever the positive covering vector or diagonal scaling;
 * FB solved every one of them). Which ties arise, and so whether the ray is
 * met, followed the last bits of the BLAS kernels. The classical remedy the
 * lexicographic rule stands for is a perturbation of q, here a finite one:
 * q_i + delta |q|inf rho_i with rho_i in [1, 2) distinct, so that no two
 * rows tie; Lemke on it, then its answer finished in the given problem
 * (lemke_finish: the support's re-solve, refinement, pivoting from its
 * active set) and accepted only by the same test as any other answer.
 * Tried after a ray or the pivot budget (cycling), the symptoms of
 * degeneracy, and after an answer that is off by far more than round-off
 * (lemke_broken), but not after an answer that failed the test by round-off:
 * that one keeps its fallback, because another solution of the same
 * non-unique LCP changed the motion a test checks (test_contact_force's
 * box on a ledge tipped after 15 steps instead of 31, with the perturbed
 * answer on 7 such solves). The first attempt's z is kept when no
 * perturbed attempt solves. wk->qloc holds the perturbed q (free until
 * lemke_finish, which does not read it before writing it), wk->phi the
 * first attempt's z (FB's, unused by Lemke). Returns the status, *pivots
 * accumulated.
 *
 * One perturbation is tried here: lemke_tie_broken already ran the cold
 * Lemke on q perturbed by LEMKE_TIE_DELTA before the plain attempt that
 * failed, and the same input takes the same path, so that delta is not
 * tried again. */
#define LEMKE_TIE_DELTA 1e-7
#define LEMKE_RETRY_DELTA 1e-9

/* Lemke on q + delta |q|inf rho (rho_i = 1 + frac(0.618... (i + 1)), distinct
 * for i < 2^26) into z, finished in the given problem; wk->qloc holds the
 * perturbed q. Returns 1 when the finished answer passes the test. */
static int lemke_on_perturbed(sb_lcp_work *wk, int n, const double *M, const double *q, const int *start,
                              double *z, double delta, int max_pivots, double tol, int *pivots, int *warm,
                              char *msg, int msg_size) {
  double qmax = 0, *qp = wk->qloc;
  for (int i = 0; i < n; i++) qmax = fmax(qmax, fabs(q[i]));
  for (int i = 0; i < n; i++) qp[i] = q[i] + delta * qmax * (1 + fmod(0.6180339887498949 * (i + 1), 1.0));
  int more = 0;
  sb_lcp_status st = lemke_core(wk, n, M, n, qp, start, z, max_pivots, &more, warm, msg, msg_size);
  *pivots += more;
  return st == SB_LCP_SOLVED && lemke_finish(wk, n, M, q, z, tol);
}

/* What made Lemke's first attempt fail, in words (lemke_perturbed's
 * messages): a ray, the pivot budget, or (run_one passes SB_LCP_STALLED for
 * it) an answer lemke_broken found broken. */
static const char *lemke_failure(sb_lcp_status first) {
  if (first == SB_LCP_RAY) return "secondary ray";
  if (first == SB_LCP_MAX_ITER) return "pivot budget exhausted";
  return "an answer off by more than round-off";
}

static sb_lcp_status lemke_perturbed(sb_lcp_work *wk, int n, const double *M, const double *q, double *z,
                                     sb_lcp_status first, int max_pivots, double tol, int *pivots, char *msg,
                                     int msg_size) {
  double *zfirst = wk->phi;
  memcpy(zfirst, z, (size_t)n * sizeof(double));
  if (lemke_on_perturbed(wk, n, M, q, NULL, z, LEMKE_RETRY_DELTA, max_pivots, tol, pivots, NULL, msg, msg_size)) {
    sb_errorf(msg, msg_size, "lemke: solved with q perturbed by %g |q| after %s", LEMKE_RETRY_DELTA,
              lemke_failure(first));
    return SB_LCP_SOLVED;
  }
  memcpy(z, zfirst, (size_t)n * sizeof(double));
  sb_errorf(msg, msg_size, "lemke: %s, and again with q perturbed by %g and %g |q| (no solution found)",
            lemke_failure(first), LEMKE_RETRY_DELTA, LEMKE_TIE_DELTA);
  return first;
}

/* Lemke's first attempt: on q perturbed by LEMKE_TIE_DELTA |q|inf rho
 * (lemke_on_perturbed), so that the ratio test's ties are broken by the
 * fixed, distinct rho_i and not by the tableau's round-off. Where the LCP
 * has many answers (a rod lying along a plane: sticking friction statically
 * indeterminate along the rod, opposite pyramid directions loaded
 * together), the unperturbed rule's choice of vertex followed the last bits
 * of M and q (one ulp of q changed the kept pairs of opposite directions,
 * and the warm starts of the following steps kept that answer's locked-in
 * friction). The answer is finished and tested in the given problem, as
 * every other answer. Where it fails, the plain Lemke runs as before; z is
 * left for it (zero: Lemke starts from nothing).
 *
 * start (n flags, may be NULL: sb_lcp_options.warm_lemke): first Lemke
 * from the complementary basis of that set (lemke_start) on q itself: from
 * near the answer a tie-breaking perturbation only moves the vertex found
 * by O(delta), which on the rope pile's LCPs the finish could not take back
 * to the given problem (docs/contact_scaling.md, session 23). Its budget
 * is the set's size plus n, the pivots a cold Lemke makes when every
 * variable enters about once: a path from near the answer that needs more
 * is cycling through the degenerate ties, and the cold attempt is then the
 * cheaper one. When no index of the set pivots in, or that path ends on a
 * ray, the budget or an answer that fails the test, the attempt without
 * start follows, as without the option. wk->warm_lemke records which
 * (sb_lcp_info.warm_lemke). Returns 1 when solved. */
static int lemke_tie_broken(sb_lcp_work *wk, int n, const double *M, const double *q, const int *start, double *z,
                            int max_pivots, double tol, int *pivots, char *msg, int msg_size) {
  if (start) {
    int warm = 0, budget = n;
    for (int i = 0; i < n; i++) budget += start[i] != 0;
    if (lemke_on_perturbed(wk, n, M, q, start, z, 0.0, budget < max_pivots ? budget : max_pivots, tol, pivots, &warm,
                           msg, msg_size)) {
      wk->warm_lemke = 3;
      msg[0] = 0;
      return 1;
    }
    wk->warm_lemke = warm ? 2 : 1;
  }
  if (lemke_on_perturbed(wk, n, M, q, NULL, z, LEMKE_TIE_DELTA, max_pivots, tol, pivots, NULL, msg, msg_size)) {
    msg[0] = 0;
    return 1;
  }
  memset(z, 0, (size_t)n * sizeof(double));
  return 0;
}

/* The guess's set {i : z_i > 0} as flags in wk->ipiv (read by lemke_start
 * only, before lemke_polish reuses ipiv), or NULL when it is empty. */
static const int *lemke_guess_set(sb_lcp_work *wk, int n, const double *z) {
  int *start = wk->ipiv, ns = 0;
  for (int i = 0; i < n; i++) ns += start[i] = z[i] > 0;
  return ns ? start : NULL;
}

/* ---------- projected Gauss-Seidel ---------- */

/* One sweep of PGS on an unformed M (NULL: the solve's entries), by columns:
 * w = q + M z is kept up to date, each block's move adding its columns
 * times the move (O(n) a column, as M's stored rows cost), so M is never
 * formed. The block's local problem reads its principal block. w is taken
 * afresh from the entries' product before the sweep, so the columns'
 * updates round over one sweep only. Returns 0, or -1 with msg set. */
static int pgs_sweep_by_columns(sb_lcp_work *wk, int n, const double *q, double *z, int nblock, const int *bsize,
                                char *msg, int msg_size) {
  double *w = wk->w, *col = wk->colbuf, *Mbb = wk->H;
  m_product(wk, n, NULL, q, z, w);
  for (int b = 0, o = 0; b < nblock; o += bsize ? bsize[b] : 1, b++) {
    int s = bsize ? bsize[b] : 1, set[64];
    double zl[64], *ql = wk->qloc;
    if (s > 64) {
      sb_errorf(msg, msg_size, "pgs: block %d has %d unknowns, above the 64 a local problem holds", b, s);
      return -1;
    }
    if (s == 1) {
      double d = m_entry(wk, n, NULL, o, o);
      if (!(d > 0)) {
        sb_errorf(msg, msg_size, "pgs: diagonal %d is %g, not positive (give blocks)", o, d);
        return -1;
      }
      zl[0] = fmax(0, z[o] - w[o] / d);
    } else {
      for (int i = 0; i < s; i++) set[i] = o + i;
      principal_submatrix(wk, n, NULL, set, s, Mbb);
      /* q_loc = (q + M z)_b - M_bb z_b */
      for (int i = 0; i < s; i++) {
        ql[i] = w[o + i];
        for (int j = 0; j < s; j++) ql[i] -= Mbb[(size_t)j * s + i] * z[o + j];
      }
      int piv;
      char lm[8];
      if (lemke_tableau_core(wk, s, Mbb, s, ql, NULL, zl, 50 * s + 100, &piv, NULL, lm, sizeof lm) != SB_LCP_SOLVED) {
        sb_errorf(msg, msg_size, "pgs: local problem of block %d (size %d) has no solution", b, s);
        return -1;
      }
    }
    for (int j = 0; j < s; j++) {
      double dz = zl[j] - z[o + j];
      if (dz == 0) continue;
      wk->entries->column(wk->entries->ctx, o + j, col);
      cblas_daxpy(n, dz, col, 1, w, 1);
      z[o + j] = zl[j];
    }
  }
  return 0;
}

static sb_lcp_status solve_pgs(sb_lcp_work *wk, int n, const double *M, const double *q, double *z,
                               const sb_lcp_options *opt, double tol, int *sweeps, char *msg,
                               int msg_size) {
  int nblock = opt->nblock, one = 1;
  const int *bsize = opt->block;
  if (nblock <= 0) {
    nblock = n;
    bsize = NULL;
  }
  double *w = wk->w;
  int sweep = 0, max_sweeps = opt->max_sweeps > 0 ? opt->max_sweeps : 10000;
  /* PGS converges linearly at best: one that cannot halve its residual in
   * 1/40 of its budget cannot gain the 12 decades tol asks within it, so it
   * stops there (a problem without solution kept it sweeping to the end) */
  int window = max_sweeps / 40 > 10 ? max_sweeps / 40 : 10, ref_sweep = 0;
  double r_ref = INFINITY;
  for (; sweep < max_sweeps; sweep++) {
    int o = 0;
    if (!M && pgs_sweep_by_columns(wk, n, q, z, nblock, bsize, msg, msg_size)) {
      *sweeps = sweep;
      return SB_LCP_STALLED;
    }
    for (int b = 0; b < nblock && M; b++) {
      int s = bsize ? bsize[b] : one;
      if (s == 1 && M[(size_t)o * n + o] > 0) {
        double wi = q[o] + cblas_ddot(n, M + o, n, z, 1);
        z[o] = fmax(0, z[o] - wi / M[(size_t)o * n + o]);
      } else if (s == 1) {
        sb_errorf(msg, msg_size, "pgs: diagonal %d is %g, not positive (give blocks)", o, M[(size_t)o * n + o]);
        *sweeps = sweep;
        return SB_LCP_STALLED;
      } else {
        /* exact local solve: q_loc = (q + M z)_b - M_bb z_b */
        double *ql = wk->qloc;
        for (int i = 0; i < s; i++) ql[i] = q[o + i] + cblas_ddot(n, M + o + i, n, z, 1);
        for (int i = 0; i < s; i++)
          for (int j = 0; j < s; j++) ql[i] -= M[(size_t)(o + j) * n + o + i] * z[o + j];
        double zl[64];
        int piv;
        char lm[8];
        if (s > 64 || lemke_tableau_core(wk, s, M + (size_t)o * n + o, n, ql, NULL, zl, 50 * s + 100, &piv, NULL, lm,
                                 sizeof lm) != SB_LCP_SOLVED) {
          sb_errorf(msg, msg_size, "pgs: local problem of block %d (size %d) has no solution", b, s);
          *sweeps = sweep;
          return SB_LCP_STALLED;
        }
        memcpy(z + o, zl, s * sizeof(double));
      }
      o += s;
    }
    double r = residual_on(wk, n, M, q, z, w, NULL);
    if (!isfinite(r)) break;
    if (within_tol(wk, n, M, q, z, w, r, tol, q_scale(n, q), wk->da)) {
      *sweeps = sweep + 1;
      return SB_LCP_SOLVED;
    }
    if (sweep == 0) {
      r_ref = r;
    } else if (sweep - ref_sweep >= window) {
      if (!(r <= 0.5 * r_ref)) {
        *sweeps = sweep + 1;
        sb_errorf(msg, msg_size, "pgs: no progress over the last %d of %d sweeps (the residual %.3g did not halve)",
                  window, sweep + 1, r);
        return SB_LCP_STALLED;
      }
      r_ref = r;
      ref_sweep = sweep;
    }
  }
  *sweeps = sweep;
  double r = residual_on(wk, n, M, q, z, w, NULL);
  sb_errorf(msg, msg_size, "pgs: %d sweeps, residual %.3g", sweep, r);
  return SB_LCP_MAX_ITER;
}

/* ---------- driver ---------- */

static sb_lcp_status check_input(sb_lcp_work *wk, int n, const double *M, const double *q,
                                 const double *z, const sb_lcp_options *opt, char *msg, int size) {
  if (!wk || !q || !z || !opt) {
    sb_errorf(msg, size, "lcp: missing workspace, vector or options");
    return SB_LCP_BAD_INPUT;
  }
  if (!M && !(opt->entries && opt->entries->apply && opt->entries->storage)) {
    sb_errorf(msg, size, "lcp: no matrix M (NULL), and no entries with apply and storage to form it from");
    return SB_LCP_BAD_INPUT;
  }
  if (n < 1 || n > wk->nmax) {
    sb_errorf(msg, size, "lcp: size %d outside 1..%d (the workspace size)", n, wk->nmax);
    return SB_LCP_BAD_INPUT;
  }
  /* same_matrix promises the matrix of the last solve: scanned then, if this workspace found it
   * finite at this size since a non-finite one (an O(n^2) pass a re-solve need not repeat) */
  if (!M) wk->finite_n = 0; /* an unformed M is the caller's to vouch for, and vouches for no stored one */
  if (M && !(opt->same_matrix && wk->finite_n == n)) {
    wk->finite_n = 0;
    if (!matrix_finite(n, M))
      for (size_t k = 0; k < (size_t)n * n; k++)
        if (!isfinite(M[k])) {
          sb_errorf(msg, size, "lcp: M(%d, %d) is not finite", (int)(k % n), (int)(k / n));
          return SB_LCP_BAD_INPUT;
        }
    wk->finite_n = n;
  }
  for (int i = 0; !all_finite(n, q) && i < n; i++)
    if (!isfinite(q[i])) {
      sb_errorf(msg, size, "lcp: q(%d) is not finite", i);
      return SB_LCP_BAD_INPUT;
    }
  /* budgets and tolerance: 0 is the default; beyond these a solve either
   * accepts anything or never ends */
  if (!(opt->tol == 0 || (opt->tol >= SB_LCP_TOL_MIN && opt->tol <= SB_LCP_TOL_MAX))) {
    sb_errorf(msg, size, "lcp: tol = %g outside [%g, %g] (0: the default 1e-12)", opt->tol, SB_LCP_TOL_MIN,
              SB_LCP_TOL_MAX);
    return SB_LCP_BAD_INPUT;
  }
  if (opt->lemke_form != SB_LCP_LEMKE_TABLEAU && opt->lemke_form != SB_LCP_LEMKE_REVISED &&
      opt->lemke_form != SB_LCP_LEMKE_AUTO) {
    sb_errorf(msg, size, "lcp: lemke_form = %d is not 0 (tableau), 1 (revised) or 2 (auto)", opt->lemke_form);
    return SB_LCP_BAD_INPUT;
  }
  if (opt->entries && (!opt->entries->entry || !opt->entries->column)) {
    sb_errorf(msg, size, "lcp: entries given without its %s function", opt->entries->entry ? "column" : "entry");
    return SB_LCP_BAD_INPUT;
  }
  if (opt->entries && !opt->entries->apply != !opt->entries->apply_bound) {
    sb_errorf(msg, size, "lcp: entries given with %s but without %s (both or neither)",
              opt->entries->apply ? "apply" : "apply_bound", opt->entries->apply ? "apply_bound" : "apply");
    return SB_LCP_BAD_INPUT;
  }
  const struct { const char *name; int value, max; } budget[] = {
      {"max_iter", opt->max_iter, SB_LCP_MAX_ITER_LIMIT},
      {"max_pivots", opt->max_pivots, SB_LCP_MAX_PIVOTS_LIMIT},
      {"max_sweeps", opt->max_sweeps, SB_LCP_MAX_SWEEPS_LIMIT}};
  for (int k = 0; k < 3; k++)
    if (budget[k].value < 0 || budget[k].value > budget[k].max) {
      sb_errorf(msg, size, "lcp: %s = %d outside [0, %d] (0: the default)", budget[k].name, budget[k].value,
                budget[k].max);
      return SB_LCP_BAD_INPUT;
    }
  if (opt->nblock > 0) {
    int sum = 0;
    for (int b = 0; b < opt->nblock; b++) {
      if (!opt->block || opt->block[b] < 1 || opt->block[b] > 64) {
        sb_errorf(msg, size, "lcp: PGS block %d has a size outside 1..64", b);
        return SB_LCP_BAD_INPUT;
      }
      sum += opt->block[b];
    }
    if (sum != n) {
      sb_errorf(msg, size, "lcp: PGS block sizes sum to %d, not n = %d", sum, n);
      return SB_LCP_BAD_INPUT;
    }
  }
  if (opt->friction_blocks) {
    if (opt->friction_blocks != 1 || opt->nblock < 1) {
      sb_errorf(msg, size, "lcp: friction_blocks = %d needs 1 and the blocks (nblock = %d)", opt->friction_blocks,
                opt->nblock);
      return SB_LCP_BAD_INPUT;
    }
    for (int b = 0; b < opt->nblock; b++)
      if (opt->block[b] < 3) {
        sb_errorf(msg, size, "lcp: friction block %d has size %d: a pyramid is a normal, at least one "
                  "direction and gamma (>= 3)", b, opt->block[b]);
        return SB_LCP_BAD_INPUT;
      }
  }
  return SB_LCP_SOLVED;
}

static sb_lcp_status run_one(sb_lcp_work *wk, sb_lcp_solver solver, int n, const double *M,
                             const double *q, double *z, int warm, const sb_lcp_options *opt,
                             double tol, int *iters, char *msg, int msg_size) {
  if (!warm || !all_finite(n, z)) memset(z, 0, n * sizeof(double));
  *iters = 0;
  switch (solver) {
    case SB_LCP_FB: /* an unformed M through its products where the entries have both (fb_krylov.c) */
      return solve_fb(wk, n, !M && sb_fb_krylov_usable(wk, n) ? NULL : stored_matrix(wk, n, M), q, z, tol,
                      opt->max_iter > 0 ? opt->max_iter : 100, iters, msg, msg_size);
    case SB_LCP_LEMKE: {
      int maxp = opt->max_pivots > 0 ? opt->max_pivots : 50 * n + 100;
      const int *start = warm && opt->warm_lemke ? lemke_guess_set(wk, n, z) : NULL;
      if (lemke_tie_broken(wk, n, M, q, start, z, maxp, tol, iters, msg, msg_size)) return SB_LCP_SOLVED;
      int tie_pivots = *iters;
      sb_lcp_status st = lemke_core(wk, n, M, n, q, NULL, z, maxp, iters, NULL, msg, msg_size);
      *iters += tie_pivots;
      int broken = st == SB_LCP_SOLVED && !lemke_finish(wk, n, M, q, z, tol) && lemke_broken(wk, n, M, q, z, tol);
      if (!broken && st != SB_LCP_RAY && st != SB_LCP_MAX_ITER) return st;
      return lemke_perturbed(wk, n, M, q, z, broken ? SB_LCP_STALLED : st, maxp, tol, iters, msg, msg_size);
    }
    case SB_LCP_PGS: /* an unformed M by its columns (pgs_sweep_by_columns), unless FB formed it */
      return solve_pgs(wk, n, M ? M : wk->formed ? wk->entries->storage : NULL, q, z, opt, tol, iters, msg,
                       msg_size);
    default:
      sb_errorf(msg, msg_size, "lcp: unknown solver %d", (int)solver);
      return SB_LCP_BAD_INPUT;
  }
}

static sb_lcp_status solve_chain_on(sb_lcp_work *wk, int nchain, const sb_lcp_solver *chain, int n,
                                    const double *M, const double *q, double *z, double *wout,
                                    const sb_lcp_options *opt, sb_lcp_info *info) {
  double t0 = sb_lcp_now_us();
  sb_lcp_info local;
  if (!info) info = &local;
  memset(info, 0, sizeof *info);
  info->lemke_form = -1;
  info->status = check_input(wk, n, M, q, z, opt, info->message, sizeof info->message);
  if (info->status != SB_LCP_SOLVED) {
    if (wk) {
      factor_cache_clear(wk);
      wk->formed = 0;
    }
    if (z && n > 0) memset(z, 0, n * sizeof(double));
    if (wout && n > 0) memset(wout, 0, n * sizeof(double));
    info->residual = INFINITY;
    info->time_us = sb_lcp_now_us() - t0;
    return info->status;
  }
  double tol = opt->tol > 0 ? opt->tol : 1e-12;
  double *zbest = wk->zbest, rbest = INFINITY, qs = q_scale(n, q), compl = 0;
  int best_iters = 0, have_best = 0;
  sb_lcp_status best_status = SB_LCP_STALLED;
  sb_lcp_solver best_solver = nchain > 0 ? chain[0] : SB_LCP_FB;
  char best_msg[sizeof info->message] = "", first_msg[sizeof info->message] = "";
  if (!opt->same_matrix) factor_cache_clear(wk);
  if (!opt->same_matrix || M) wk->formed = 0;
  wk->fric_block = opt->friction_blocks ? opt->block : NULL;
  wk->fric_nblock = opt->friction_blocks ? opt->nblock : 0;
  wk->border = opt->border_factors;
  wk->lemke_form = opt->lemke_form;
  int warm = opt->warm_start && all_finite(n, z);
  if (warm) memcpy(zbest, z, n * sizeof(double)); /* kept apart from the attempts */
  else memset(zbest, 0, n * sizeof(double));
  int cold = 0; /* this attempt repeats chain[k] from zero */
  int guess = 0;
  for (int i = 0; warm && !guess && i < n; i++) guess = z[i] != 0;
  if (guess) {
    /* The guess's active set first, whatever the chain: g and phitry are
     * not used by the pivot step */
    double *zg = wk->g, *wg = wk->phitry;
    int last_count = -1;
    memcpy(zg, z, n * sizeof(double));
    /* the re-solve on the last solved set reads the guess's z only (w is its
     * output): the guess's w = Mz + q is formed only when a pivot needs it */
    int reuse = opt->same_matrix && opt->reuse_solved_set;
    double rg;
    int tried = reuse && resolve_on_solved_set(wk, n, M, q, zg, wg, tol, qs);
    if (tried) memcpy(wk->w, wg, n * sizeof(double)); /* its Mz + q, as check_given_w takes it */
    int solved = tried && check_given_w(wk, n, M, q, zg, wk->w, tol * qs, tol, &rg, NULL, wk->da);
    if (!solved) { /* (back) to the guess, for the pivot from its set */
      memcpy(zg, z, n * sizeof(double));
      m_product(wk, n, M, q, zg, wg);
    }
    /* a new matrix of the same size: the set that solved the last one, by position, joins the
     * prediction (its degenerate indices, z = 0 there, the guess does not predict) */
    int prev = opt->warm_last_set && !opt->same_matrix && wk->prev_n == n ? wk->prev_na : 0;
    if (!solved) solved = pivot_from_guess(wk, n, M, q, zg, wg, &last_count, tol, qs, wk->prev_set, prev, &rg);
    if (!solved && opt->second_guess && all_finite(n, opt->second_guess)) {
      memcpy(zg, opt->second_guess, n * sizeof(double));
      m_product(wk, n, M, q, zg, wg);
      solved = pivot_from_guess(wk, n, M, q, zg, wg, &last_count, tol, qs, NULL, 0, &rg);
    }
    if (solved) {
      memcpy(z, zg, n * sizeof(double));
      if (wout) memcpy(wout, wk->w, n * sizeof(double));
      info->status = SB_LCP_SOLVED;
      info->solver = nchain > 0 ? chain[0] : SB_LCP_FB;
      info->attempts = 1;
      info->warm_pivot = 1;
      info->residual = rg;
      info->complementarity = complementarity(n, z, wk->w);
      sb_errorf(info->message, sizeof info->message, "solved by pivoting from the guess's active set");
      info->time_us = sb_lcp_now_us() - t0;
      return SB_LCP_SOLVED;
    }
  }
  factor_cache_clear(wk); /* the solvers below write LU, HtH, H and T */
  wk->warm_lemke = 0;
  wk->lemke_ran = -1;
  for (int k = 0; k < nchain; k++) {
    char msg[sizeof info->message] = "";
    int iters;
    if (k > 0) memcpy(z, zbest, n * sizeof(double));
    int from_guess = 0;
    for (int i = 0; warm && !cold && !from_guess && i < n; i++) from_guess = z[i] != 0;
    sb_lcp_status st = run_one(wk, chain[k], n, M, q, z, from_guess, opt, tol, &iters, msg, sizeof msg);
    info->attempts++;
    double r = all_finite(n, z) ? residual_on(wk, n, M, q, z, wk->w, &compl) : INFINITY;
    if (st == SB_LCP_SOLVED) {
      /* whatever the solver's own test said, in the caller's problem and
       * in finite arithmetic */
      int bad;
      if (!check_on(wk, n, M, q, z, wk->w, tol * qs, tol, &r, &bad, wk->da)) {
        if (isfinite(r))
          sb_errorf(msg, sizeof msg, "%s: ended with residual %.3g in row %d, above tolerance %.3g of its "
                    "row's terms", sb_lcp_solver_name(chain[k]), r, bad, tol);
        else
          sb_errorf(msg, sizeof msg, "%s: its answer cannot be verified: z or w = Mz + q is not finite "
                    "in row %d (overflow)", sb_lcp_solver_name(chain[k]), bad);
        st = SB_LCP_STALLED;
      }
      compl = complementarity(n, z, wk->w);
    }
    if (info->attempts == 1) memcpy(first_msg, msg, sizeof msg);
    if (st == SB_LCP_SOLVED || !have_best || r < rbest) {
      if (isfinite(r)) memcpy(zbest, z, n * sizeof(double));
      rbest = r;
      have_best = 1;
      best_status = st;
      best_solver = chain[k];
      best_iters = iters;
      memcpy(best_msg, msg, sizeof msg);
    }
    if (st == SB_LCP_SOLVED) {
      if (cold)
        sb_errorf(best_msg, sizeof best_msg, "solved by %s from zero after it failed from the guess (%s)",
                  sb_lcp_solver_name(chain[k]), first_msg);
      else if (info->attempts > 1)
        sb_errorf(best_msg, sizeof best_msg, "solved by %s after %s failed (%s)",
                  sb_lcp_solver_name(chain[k]), sb_lcp_solver_name(chain[0]), first_msg);
      break;
    }
    /* A guess can leave FB at a stationary point of its merit function that
     * is not a solution (friction LCPs are not P0): the last step's answer
     * when a contact changed state, say. From zero FB takes another path
     * (its first pivot step predicts the contacts that close), which solved
     * nearly all such steps of an arm pushing a box along a table; it is
     * tried before the next solver. */
    if (chain[k] == SB_LCP_FB && from_guess) {
      cold = 1;
      k--;
      continue;
    }
    cold = 0;
    warm = 1; /* later attempts start from the best iterate so far */
  }
  double *w = wk->w;
  if (best_status == SB_LCP_SOLVED) { /* z is zbest, and w its Mz + q */
    info->residual = rbest;
    info->complementarity = compl;
  } else {
    if (!isfinite(rbest)) memset(zbest, 0, n * sizeof(double));
    memcpy(z, zbest, n * sizeof(double));
    info->residual = residual_on(wk, n, M, q, z, w, &info->complementarity);
    if (!all_finite(n, w)) { /* w overflows at the best iterate: z = 0 keeps w = q finite */
      memset(z, 0, n * sizeof(double));
      info->residual = residual_on(wk, n, M, q, z, w, &info->complementarity);
    }
  }
  if (wout) memcpy(wout, w, n * sizeof(double));
  info->status = best_status;
  info->solver = best_solver;
  info->iterations = best_iters;
  info->warm_lemke = wk->warm_lemke;
  info->lemke_form = wk->lemke_ran;
  info->matrix_formed = wk->formed;
  memcpy(info->message, best_msg, sizeof info->message);
  info->time_us = sb_lcp_now_us() - t0;
  return info->status;
}

int sb_lcp_last_set(const sb_lcp_work *work, int n, int *in) {
  if (n > 0) memset(in, 0, (size_t)n * sizeof(int));
  if (!work || n <= 0 || n > work->nmax || work->prev_n != n) return 0;
  for (int b = 0; b < work->prev_na; b++) in[work->prev_set[b]] = 1;
  return work->prev_na;
}

void sb_lcp_set_last_set(sb_lcp_work *work, int n, const int *in) {
  if (!work) return;
  work->prev_n = n > 0 && n <= work->nmax ? n : 0;
  work->prev_na = 0;
  for (int i = 0; i < work->prev_n; i++)
    if (in[i]) work->prev_set[work->prev_na++] = i;
}

/* The chain with the options' entries in the workspace for the solve's
 * duration only: a later direct use of the workspace (sb_lcp_factor_set)
 * reads its own M. */
static sb_lcp_status solve_chain(sb_lcp_work *wk, int nchain, const sb_lcp_solver *chain, int n, const double *M,
                                 const double *q, double *z, double *wout, const sb_lcp_options *opt,
                                 sb_lcp_info *info) {
  if (wk) wk->entries = opt->entries;
  sb_lcp_status st = solve_chain_on(wk, nchain, chain, n, M, q, z, wout, opt, info);
  if (wk) wk->entries = NULL;
  return st;
}

sb_lcp_status sb_lcp_solve(sb_lcp_work *work, int n, const double *M, const double *q, double *z,
                           double *w, const sb_lcp_options *opt, sb_lcp_info *info) {
  sb_lcp_options def = sb_lcp_default_options();
  if (!opt) opt = &def;
  int nchain = opt->nchain;
  if (nchain < 1 || nchain > SB_LCP_MAX_CHAIN) {
    opt = &def;
    nchain = def.nchain;
  }
  return solve_chain(work, nchain, opt->chain, n, M, q, z, w, opt, info);
}

sb_lcp_status sb_lcp_solve_with(sb_lcp_work *work, sb_lcp_solver solver, int n, const double *M,
                                const double *q, double *z, double *w, const sb_lcp_options *opt,
                                sb_lcp_info *info) {
  sb_lcp_options def = sb_lcp_default_options();
  if (!opt) opt = &def;
  return solve_chain(work, 1, &solver, n, M, q, z, w, opt, info);
}

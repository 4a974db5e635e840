/* The kept contacts' LCP as an operator on their Delassus blocks
 * (softbody/kept_op.h; issue 15 item 1, steps 1 and 2 of
 * docs/contact_factor_design.md), checked on every step of contact scenes
 * against the dense matrix A that the solve still assembles:
 *   - every entry of the operator is A's, bit for bit;
 *   - its product A z (the step's answer, and a z of random signs and sizes)
 *     is a dense product's within the rounding bound of both, and its
 *     |A| |z| bounds the dense |A| |z|;
 *   - the physical check, which runs on the operator, finds the dense
 *     check's residual within that bound, and no step it accepted fails the
 *     dense check;
 *   - after a solve of a given dense LCP there is no operator.
 * Scenes: the box on an incline (r = 4, 6, 8; 4 to 16 contacts of one
 * face: dependent normals), the soft rod lying on a plane, and through the
 * plugin Scenario A, the 6-section arm sliding, and the rod clamped at both
 * ends carrying a ball (the bilateral Schur complement in W). */
#include <cblas.h>
#include <lapacke.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bench/cut_arm.h"
#include "../plugin/pipeline.h"
#include "../softbody/lcp_internal.h" /* sb_lemke_revised, on As and on the operator */
#include "contact_scenes.h"
#include "plugin_testutil.h"

#ifndef CUSP_SOURCE_DIR
#define CUSP_SOURCE_DIR "."
#endif

typedef struct {
  int steps, checked, entries, columns, solved, lemke_runs, lemke_pivots;
  double worst_product;  /* largest |op - dense| / bound over the products */
  double worst_residual; /* largest |residual - dense residual| / bound */
  double worst_apply;    /* largest |conditioned op - long double| / its bound */
  int product_solves;    /* chain solves with the operator's products */
  int apply_runs;        /* Lemke runs whose directions went through the operator's apply */
  long apply_calls;      /* the applies they made */
} tally;

static unsigned long long rng = 0x2545F4914F6CDD1Dull;

/* b + A z densely, w (n). */
static void dense_product(int n, const double *A, const double *b, const double *z, double *w) {
  memcpy(w, b, n * sizeof(double));
  cblas_dgemv(CblasColMajor, CblasNoTrans, n, n, 1.0, A, n, z, 1, 1.0, w, 1);
}

/* The rounding bound of the difference between the operator's b + A z and
 * the dense one: each sums at most n + 3nk + r + 12 terms whose magnitudes
 * are bounded by |b| + (|E|^T |W| |E| + |C|) |z|. Twice that many unit
 * round-offs: a wrong entry or product is off by far more. */
static void product_bound(const sb_kept_op *op, const double *b, const double *z, double *bound) {
  int n = sb_kept_op_size(op);
  sb_kept_op_abs_apply(op, z, bound);
  double k = 2.0 * (n + 3 * op->nk + op->r + 12) * DBL_EPSILON / 2;
  for (int i = 0; i < n; i++) bound[i] = k * (bound[i] + fabs(b[i]));
}

/* Lemke's revised form, cold, on the conditioned LCP (As, bs) read from As
 * and read from the operator's entries: the same pivots and the same raw
 * answer (the basic values, before any polish from As), bit for bit. */
static void lemke_both_ways(int n, const double *As, const double *bs, const sb_lcp_entries *cep, const char *what,
                            tally *t) {
  sb_lcp_entries ce_columns = *cep, *ce = &ce_columns;
  ce_columns.apply_cost = 0; /* the formed columns' product, as on As: the same doubles (apply: lemke_with_products) */
  sb_lcp_work *wk = sb_lcp_work_create(n);
  double *z = malloc(sizeof(double) * 2 * n);
  int piv[2];
  sb_lcp_status st[2];
  char msg[160];
  for (int k = 0; k < 2; k++)
    st[k] = sb_lemke_revised(wk, n, k ? NULL : As, n, k ? ce : NULL, bs, NULL, z + k * n, 50 * n + 100, &piv[k],
                             NULL, msg, sizeof msg);
  t->lemke_runs++;
  t->lemke_pivots += piv[0];
  EXPECT(st[0] == st[1] && piv[0] == piv[1] && memcmp(z, z + n, sizeof(double) * n) == 0,
         "%s, step %d: Lemke from As: %s after %d pivots; from the operator: %s after %d pivots; answers %s", what,
         t->steps, sb_lcp_status_name(st[0]), piv[0], sb_lcp_status_name(st[1]), piv[1],
         memcmp(z, z + n, sizeof(double) * n) ? "differ" : "equal");
  free(z);
  sb_lcp_work_free(wk);
}

static long apply_calls;
/* Over every scene: Lemke runs through apply, and those that ended otherwise than on As (another
 * status, or a raw answer off by more than lemke_with_products allows) */
static int apply_runs_all, apply_off_all;
static void counted_apply(const void *ctx, const double *x, const double *b, double *y) {
  apply_calls++;
  sb_kept_op_conditioned_apply(ctx, x, b, y);
}

/* Lemke's revised form with the basic columns' product through the
 * operator's apply (sb_lcp_entries.apply_cost, here 1 so that every
 * direction takes it, whatever k) against the same run on As: the same
 * status, an apply on each pivot's direction, and where As's run solved,
 * a raw answer (before any polish) that passes the dense test on As as
 * closely as As's own: a wrong scatter of the basic z's, or the covering
 * vector's column left out, sends the path elsewhere. Only the rounding
 * of that product differs, so the pivots may too, by ties, and on a
 * degenerate LCP (the box's dependent normals) a tie decided otherwise
 * may end the unperturbed path elsewhere, on a ray or a nearly singular
 * basis whose raw answer is off (the chain's finish and test are there
 * for that): main allows that on 5 % of all runs, where a wrong product
 * sends nearly every run astray. With OpenBLAS's Haswell kernels none
 * ends otherwise; with its Nehalem, Sandybridge, SkylakeX or Prescott
 * kernels 9 to 23 of 2264, all on the box held by 9 contacts of one face,
 * where the run on As itself ends on rays and singular bases as often. */
static void lemke_with_products(int n, const double *As, const double *bs, const sb_lcp_entries *ce, const char *what,
                                tally *t) {
  sb_lcp_entries ca = *ce;
  ca.apply = counted_apply;
  ca.apply_bound = sb_kept_op_conditioned_apply_bound;
  ca.apply_cost = 1;
  sb_lcp_work *wk = sb_lcp_work_create(n);
  double *z = malloc(sizeof(double) * 3 * n), *w = z + 2 * n, compl;
  int piv[2];
  sb_lcp_status st[2];
  char msg[160];
  long before = apply_calls;
  for (int k = 0; k < 2; k++)
    st[k] = sb_lemke_revised(wk, n, k ? NULL : As, n, k ? &ca : NULL, bs, NULL, z + k * n, 50 * n + 100, &piv[k],
                             NULL, msg, sizeof msg);
  long calls = apply_calls - before;
  t->apply_runs++;
  t->apply_calls += calls;
  EXPECT(calls >= piv[1] - 1, "%s, step %d: %ld applies over %d pivots: the directions did not use apply", what,
         t->steps, calls, piv[1]);
  double qs = 1, r[2] = {0, 0};
  for (int i = 0; i < n; i++) qs = fmax(qs, fabs(bs[i]));
  if (st[0] == SB_LCP_SOLVED && st[1] == SB_LCP_SOLVED)
    for (int k = 0; k < 2; k++) r[k] = sb_lcp_residual(n, As, bs, z + k * n, w, &compl);
  apply_runs_all++;
  if (st[0] != st[1] || !(r[1] <= fmax(1e3 * r[0], 1e-12 * qs))) {
    if (apply_off_all++ < 5)
      printf("%s, step %d: Lemke on As: %s (raw residual %.3g); with the operator's products: %s (%.3g): %s\n", what,
             t->steps, sb_lcp_status_name(st[0]), r[0], sb_lcp_status_name(st[1]), r[1], msg);
  }
  free(z);
  sb_lcp_work_free(wk);
}

/* Row i of b + M z in long double (*s; 64-bit significands, its own error
 * n 2^-63 of the terms' magnitudes), y_i's distance from it (*off), and
 * the slack allowed: the operator's bound e_i plus that error. */
static double row_slack(int n, const double *M, const double *b, const double *z, const double *y, const double *e,
                        int i, long double *s, double *off) {
  long double sum = b[i], mag = fabsl((long double)b[i]);
  for (int j = 0; j < n; j++) {
    sum += (long double)M[(size_t)j * n + i] * z[j];
    mag += fabsl((long double)M[(size_t)j * n + i] * z[j]);
  }
  *s = sum;
  *off = fabs((double)((long double)y[i] - sum));
  return e[i] + (double)(mag * (n + 2) * 0x1p-63L);
}

/* Over every scene: the acceptance test on the products, by the doubtful rows' terms against by
 * every row's (points tested, of them passed, rows passed without their terms, rows tested) */
static long terms_points_all, terms_passed_all, terms_skipped_all, terms_rows_all;

/* One point of check_terms_on_demand: both tests, compared; 0 when they differ. */
static int terms_agree(sb_lcp_work *wk, int n, const sb_lcp_entries *ca, const double *q, const double *z,
                       double abs_tol, double *w0, double *w1, const char *what, int step, const char *where) {
  const double tol = 1e-12;
  double r0, r1;
  int b0, b1;
  wk->check_all_terms = 1;
  int ok1 = sb_lcp_check_by_entries(wk, n, ca, q, z, w1, abs_tol, tol, &r1, &b1);
  wk->check_all_terms = 0;
  long skipped = wk->rows_without_terms;
  int ok0 = sb_lcp_check_by_entries(wk, n, ca, q, z, w0, abs_tol, tol, &r0, &b0);
  terms_points_all++;
  terms_passed_all += ok0;
  terms_skipped_all += wk->rows_without_terms - skipped;
  terms_rows_all += n;
  int same = ok0 == ok1 && b0 == b1 && memcmp(&r0, &r1, sizeof r0) == 0 && memcmp(w0, w1, sizeof(double) * n) == 0;
  EXPECT(same,
         "%s, step %d, %s: the test by the doubtful rows' terms says %d (residual %.17g, row %d), by every row's "
         "%d (%.17g, row %d), or w differs",
         what, step, where, ok0, r0, b0, ok1, r1, b1);
  return same;
}

/* The acceptance test on the conditioned operator's products (the solve's,
 * lcp_matrix operator) takes the terms sum_j |M_ij z_j| only of the rows a
 * lower bound from w cannot pass: against the test with every row's terms,
 * the same verdict, residual, first bad row and w (bit for bit), at the
 * chain's answer zs and at points moved off it by 1e-15 to 1e-9 of each
 * entry, half the zeros pushed by as much of zs's scale (rows pass and fail
 * there alike). */
static void check_terms_on_demand(int n, const double *As, const double *bs, const sb_lcp_entries *ca,
                                  const double *zs, const char *what, tally *t) {
  static const double moves[] = {0, 1e-15, 1e-13, 1e-12, 1e-11, 1e-9};
  double *z = malloc(sizeof(double) * 4 * n), *w0 = z + n, *w1 = w0 + n, *q = w1 + n, qs = 1, zmax = 0;
  sb_lcp_work *wk = sb_lcp_work_create(n);
  const double tol = 1e-12;
  for (int i = 0; i < n; i++) {
    qs = fmax(qs, fabs(bs[i]));
    zmax = fmax(zmax, fabs(zs[i]));
  }
  int same = 1;
  for (size_t k = 0; same && k < sizeof moves / sizeof moves[0]; k++) {
    for (int i = 0; i < n; i++) {
      double r = tu_rand_r(&rng); /* in [-1, 1) */
      z[i] = zs[i] != 0 ? zs[i] * (1 + moves[k] * r) : r > 0 ? moves[k] * zmax * r : 0;
    }
    char where[32];
    snprintf(where, sizeof where, "moved %.0e", moves[k]);
    same = terms_agree(wk, n, ca, bs, z, tol * qs, w0, w1, what, t->steps, where);
  }
  /* one row at a time at its threshold: q_i moved so that the row's residual is c times the
   * threshold max(abs_tol, tol s_i), c in [0.5, 2), s_i = |q_i| + sum_j |As_ij zs_j| (w_i = c thr
   * where zs_i > 0, -c thr where not); abs_tol the solve's tol qs, and 1e-2 and 1e-3 of it, where
   * the lower bound sets the threshold of rows whose terms' rounding is within abs_tol (those with
   * larger terms are summed exactly either way) */
  static const double floors[] = {1, 1e-2, 1e-3};
  for (int trial = 0; same && trial < 24; trial++) {
    int i = (int)((tu_rand_r(&rng) + 1) / 2 * n); /* tu_rand_r is in [-1, 1) */
    double c = 0.5 + 0.75 * (tu_rand_r(&rng) + 1), abs_tol = tol * qs * floors[trial % 3], si = 0, wi = bs[i];
    for (int j = 0; j < n; j++) {
      si += fabs(As[(size_t)j * n + i] * zs[j]);
      wi += As[(size_t)j * n + i] * zs[j];
    }
    memcpy(q, bs, sizeof(double) * n);
    q[i] -= wi; /* w_i = 0, then its residual: s_i with the new q_i */
    si += fabs(q[i]);
    double shift = (zs[i] > 0 ? 1 : -1) * c * fmax(abs_tol, tol * si);
    q[i] += shift;
    char where[64];
    snprintf(where, sizeof where, "row %d at %.2f of its threshold (abs_tol %.0e)", i, c, abs_tol);
    same = terms_agree(wk, n, ca, q, zs, abs_tol, w0, w1, what, t->steps, where);
  }
  sb_lcp_work_free(wk);
  free(z);
}

/* The conditioned operator's products (sb_kept_op_conditioned_apply, the
 * solve's with lcp_matrix operator) on the step's conditioned LCP (As, bs):
 *   - y = bs + As z for a z of random signs over six decades (cancellation in
 *     every row) and for the chain's answer, against the same sum in long
 *     double (64-bit significands: its own error, n 2^-63 of the terms, is
 *     far below the bound): within apply_bound plus that;
 *   - the chain on (As, bs) with those products, cold and then warm from its
 *     answer (the warm pivot's trials and checks through them): solved where
 *     the chain on As alone solved, and its answers pass the dense acceptance
 *     test on As (sb_lcp_check, which sums As's doubles by dgemv and exactly
 *     where that cannot tell), within 1 % of the tolerance: both certify the
 *     exact residual, up to the exact rows' 3 u. */
static void check_products(int n, const double *As, const double *bs, const sb_lcp_entries *ce, const char *what,
                           tally *t) {
  sb_lcp_entries ca = *ce;
  ca.apply = sb_kept_op_conditioned_apply;
  ca.apply_bound = sb_kept_op_conditioned_apply_bound;
  double *z = malloc(sizeof(double) * 6 * n), *y = z + n, *e = y + n, *zs = e + n, *zo = zs + n, *w = zo + n;
  sb_lcp_work *wk = sb_lcp_work_create(n);
  sb_lcp_options o = sb_lcp_default_options();
  sb_lcp_info info;
  sb_lcp_status st = SB_LCP_STALLED, sto = SB_LCP_STALLED;
  memset(zs, 0, sizeof(double) * n);
  st = sb_lcp_solve(wk, n, As, bs, zs, NULL, &o, &info);
  for (int pass = 0; pass < 2; pass++) {
    for (int i = 0; i < n; i++)
      z[i] = pass ? zs[i] : (2 * tu_rand_r(&rng) - 1) * pow(10, -6 * tu_rand_r(&rng));
    ca.apply(ca.ctx, z, bs, y);
    ca.apply_bound(ca.ctx, z, bs, e);
    for (int i = 0; i < n; i++) {
      long double s;
      double off, slack = row_slack(n, As, bs, z, y, e, i, &s, &off);
      t->worst_apply = fmax(t->worst_apply, off / fmax(slack, DBL_MIN));
      if (!(off <= slack)) {
        EXPECT(0, "%s, step %d, %s z: row %d of bs + As z: operator %.17g, long double %.17Lg, bound %.3g", what,
               t->steps, pass ? "the chain's" : "random", i, y[i], s, slack);
        break;
      }
    }
  }
  if (st == SB_LCP_SOLVED) check_terms_on_demand(n, As, bs, &ca, zs, what, t);
  o.entries = &ca;
  for (int warm = 0; warm < 2; warm++) {
    if (warm)
      memcpy(zo, zs, sizeof(double) * n);
    else
      memset(zo, 0, sizeof(double) * n);
    o.warm_start = warm;
    sto = sb_lcp_solve(wk, n, As, bs, zo, NULL, &o, &info);
    t->product_solves++;
    double r, qs = 1;
    for (int i = 0; i < n; i++) qs = fmax(qs, fabs(bs[i]));
    EXPECT(sto == SB_LCP_SOLVED || st != SB_LCP_SOLVED, "%s, step %d: the chain on As solved, with the operator's "
           "products (%s) %s: %s", what, t->steps, warm ? "warm" : "cold", sb_lcp_status_name(sto), info.message);
    if (sto == SB_LCP_SOLVED)
      EXPECT(sb_lcp_check(n, As, bs, zo, w, 1.01 * o.tol * qs, 1.01 * o.tol, &r, NULL, y),
             "%s, step %d: solved with the operator's products (%s), yet the dense test on As finds residual %.3g",
             what, t->steps, warm ? "warm" : "cold", r);
  }
  sb_lcp_work_free(wk);
  free(z);
}

/* Over every scene: FB alone, cold, on the stored As and on the unformed operator (runs, and
 * those each solved) */
static int fb_runs_all, fb_stored_solved_all, fb_operator_solved_all, fb_bare_stored_all, fb_bare_operator_all;
static long fb_newton_all, fb_least_squares_all;

/* Over every scene: the Krylov steps against dense LAPACK (runs; GMRES's largest iterations over
 * 3nk + 1, the rank bound; the Newton steps left above 1e-8 of |Phi| where LU's is within it; the
 * CGLS steps whose objective is off the dense optimum's by more than 1e-6 of |Phi|^2) */
static int krylov_runs_all, newton_loose_all, least_squares_off_all, restarted_loose_all;
static double krylov_rank_ratio_all;

/* r = Phi + H x (H formed, n x n); returns |r|. */
static double dense_model(int n, const double *H, const double *phi, const double *x, double *r) {
  memcpy(r, phi, sizeof(double) * n);
  cblas_dgemv(CblasColMajor, CblasNoTrans, n, n, 1.0, H, n, x, 1, 1.0, r, 1);
  return cblas_dnrm2(n, r, 1);
}

/* The largest row of |Phi| + |H| |x|: the size of the terms whose rounding
 * Phi + H x carries. */
static double model_terms(int n, const double *H, const double *phi, const double *x) {
  double mag = 0;
  for (int i = 0; i < n; i++) {
    double s = fabs(phi[i]);
    for (int j = 0; j < n; j++) s += fabs(H[(size_t)j * n + i] * x[j]);
    mag = fmax(mag, s);
  }
  return mag;
}

/* FB's Newton and least-squares steps on the unformed operator
 * (fb_krylov.c) at a random point (z, w) of every kind FB meets (active
 * z > 0 = w, inactive, both positive, the degenerate (0, 0)), against H
 * = diag(a) + diag(b) As formed here and LAPACK:
 *   - GMRES's d: the relative residual |H d + Phi| / |Phi| it reports is
 *     the dense one, and its iterations stay within the rank bound the
 *     preconditioner promises (3nk + 1: H less its blocks is diag(b) Dr
 *     E^T (W - W's blocks) E Dc, of rank <= 3nk), a few of rounding aside;
 *   - CGLS's d for (H^T H + mu I) d = -H^T Phi: its objective |H d + Phi|^2
 *     + mu |d|^2 against the dense solution's (dposv). */
static void krylov_against_dense(int n, const double *As, const sb_lcp_entries *ca, const int *blocks, int nk,
                                 const char *what, tally *t) {
  sb_lcp_work *wk = sb_lcp_work_create(n);
  double *z = malloc(sizeof(double) * 8 * n), *w = z + n, *phi = w + n, *d = phi + n, *a = d + n, *b = a + n,
         *r = b + n, *dd = r + n;
  double *H = malloc(sizeof(double) * n * n), *N = malloc(sizeof(double) * n * n);
  wk->entries = ca;
  wk->fric_block = blocks;
  wk->fric_nblock = nk;
  for (int i = 0; i < n; i++) {
    int kind = (int)(4 * tu_rand_r(&rng));
    z[i] = kind == 0 || kind == 2 ? tu_rand_r(&rng) : 0;
    w[i] = kind == 1 || kind == 2 ? tu_rand_r(&rng) : 0;
    phi[i] = 2 * tu_rand_r(&rng) - 1;
    sb_fb_coefficients(z[i], w[i], &a[i], &b[i]);
  }
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) H[(size_t)j * n + i] = b[i] * As[(size_t)j * n + i] + (i == j ? a[i] : 0);
  sb_fb_krylov_jacobian(wk, n, z, w);
  double rel = sb_fb_krylov_newton(wk, n, phi, 1e-10, d), nphi = cblas_dnrm2(n, phi, 1);
  double dense_rel = dense_model(n, H, phi, d, r) / nphi, mag = model_terms(n, H, phi, d);
  /* the dense LU's own step, for what a direct solve reaches at this point */
  memcpy(N, H, sizeof(double) * n * n);
  for (int i = 0; i < n; i++) dd[i] = -phi[i];
  int *ipiv = malloc(sizeof(int) * n);
  LAPACKE_dgesv(LAPACK_COL_MAJOR, n, 1, N, n, ipiv, dd, n);
  free(ipiv);
  double lu_rel = dense_model(n, H, phi, dd, r) / nphi;
  int bound = 3 * nk + 1;
  krylov_runs_all++;
  krylov_rank_ratio_all = fmax(krylov_rank_ratio_all, (double)wk->krylov_iterations / bound);
  newton_loose_all += !(dense_rel <= 1e-8) && lu_rel <= 1e-8;
  if (getenv("KRYLOV_TRACE"))
    printf("TRACE %s step %d n %d nk %d: gmres %.3g (dense %.3g) in %d its; LU %.3g\n", what, t->steps, n, nk, rel,
           dense_rel, wk->krylov_iterations, lu_rel);
  EXPECT(fabs(dense_rel - rel) <= 1e-6 * rel + 1e3 * n * DBL_EPSILON * mag / nphi, "%s, step %d: GMRES reports "
         "relative residual %.3g, the dense product %.3g", what, t->steps, rel, dense_rel);
  /* where H is ill-conditioned (LU's own step above 1e-8 of |Phi|) rounding adds iterations, as it loosens
   * both steps */
  EXPECT(lu_rel > 1e-8 || wk->krylov_iterations <= bound + 2, "%s, step %d: GMRES took %d iterations on a regular "
         "H (LU's relative residual %.3g), above 3nk + 1 = %d", what, t->steps, wk->krylov_iterations, lu_rel, bound);
  /* restarted: a quarter of the rank bound a round (the restart from the true residual; a wrong
   * restart vector, or a round's step undone inexactly, leaves it far off) */
  wk->krylov_restart = bound / 4 > 2 ? bound / 4 : 2;
  wk->krylov_rounds = 40;
  double rel_restarted = sb_fb_krylov_newton(wk, n, phi, 1e-10, d);
  wk->krylov_restart = wk->krylov_rounds = 0;
  double dense_restarted = dense_model(n, H, phi, d, r) / nphi;
  restarted_loose_all += !(dense_restarted <= 1e-8) && lu_rel <= 1e-8;
  EXPECT(fabs(dense_restarted - rel_restarted) <= 1e-6 * rel_restarted + 1e3 * n * DBL_EPSILON * mag / nphi,
         "%s, step %d: restarted GMRES reports relative residual %.3g, the dense product %.3g", what, t->steps,
         rel_restarted, dense_restarted);
  /* the least-squares step against dposv */
  double mu = 1e-6 * sb_fb_krylov_hth_scale(wk, n);
  sb_fb_krylov_least_squares(wk, n, phi, mu, d);
  cblas_dsyrk(CblasColMajor, CblasLower, CblasTrans, n, n, 1.0, H, n, 0.0, N, n);
  for (int i = 0; i < n; i++) N[(size_t)i * n + i] += mu;
  cblas_dgemv(CblasColMajor, CblasTrans, n, n, -1.0, H, n, phi, 1, 0.0, dd, 1);
  int info = LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', n, 1, N, n, dd, n);
  double f[2];
  for (int k = 0; k < 2; k++) {
    const double *x = k ? dd : d;
    double rn = dense_model(n, H, phi, x, r);
    f[k] = rn * rn + mu * cblas_ddot(n, x, 1, x, 1);
  }
  EXPECT(info == 0, "%s, step %d: dposv failed (%d)", what, t->steps, info);
  /* the trust region's model Phi + H d, as FB's ratio test reads it, against the dense product */
  sb_fb_krylov_model(wk, n, phi, d, dd);
  dense_model(n, H, phi, d, r);
  double model_off = 0, model_mag = model_terms(n, H, phi, d);
  for (int i = 0; i < n; i++) model_off = fmax(model_off, fabs(dd[i] - r[i]));
  EXPECT(model_off <= 1e3 * n * DBL_EPSILON * model_mag, "%s, step %d: the model Phi + H d off the dense product by "
         "%.3g (terms %.3g)", what, t->steps, model_off, model_mag);
  EXPECT(f[0] <= nphi * nphi, "%s, step %d: CGLS's step raises the objective above |Phi|^2: %.6g > %.6g", what,
         t->steps, f[0], nphi * nphi);
  least_squares_off_all += !(f[0] - f[1] <= 1e-6 * nphi * nphi);
  free(H);
  free(N);
  free(z);
  sb_lcp_work_free(wk);
}

/* FB alone (the chain's fallback), cold, on the conditioned LCP (As, bs)
 * stored and unformed (M NULL: its Newton and least-squares steps through
 * the operator's products, fb_krylov.c):
 *   - the operator's transposed product, y = As^T x for x of random signs
 *     over six decades, within rounding of the long double sum over As's
 *     doubles (a wrong coupling of gamma's row is off by O(1));
 *   - the unformed run forms nothing: storage, filled with NaN, stays so,
 *     and the solve says it formed no matrix;
 *   - where it solved, its answer passes the dense acceptance test on As.
 * main then compares how often each solved over all scenes: GMRES and
 * CGLS solve H's systems to a relative residual, so the two runs' paths
 * differ by more than rounding, but FB's own tests judge each step. */
static void fb_both_ways(int n, const double *As, const double *bs, const sb_lcp_entries *ce, const char *what,
                         tally *t) {
  const sb_kept_op_conditioned *cd = ce->ctx;
  int bsz = cd->op->r + 2, nk = n / bsz, *blocks = malloc(sizeof(int) * nk);
  for (int c = 0; c < nk; c++) blocks[c] = bsz;
  double *x = malloc(sizeof(double) * 5 * n), *y = x + n, *z0 = y + n, *z1 = z0 + n, *w = z1 + n;
  double *storage = malloc(sizeof(double) * n * n);
  for (size_t k = 0; k < (size_t)n * n; k++) storage[k] = NAN;
  for (int i = 0; i < n; i++) x[i] = (2 * tu_rand_r(&rng) - 1) * pow(10, -6 * tu_rand_r(&rng));
  sb_kept_op_conditioned_apply_transposed(cd, x, y);
  int far = 0;
  for (int j = 0; j < n; j++) {
    long double sum = 0, mag = 0;
    for (int i = 0; i < n; i++) {
      sum += (long double)As[(size_t)j * n + i] * x[i];
      mag += fabsl((long double)As[(size_t)j * n + i] * x[i]);
    }
    far += !(fabsl((long double)y[j] - sum) <= (long double)(4.0 * (n + 16) * DBL_EPSILON) * mag + DBL_MIN);
  }
  EXPECT(far == 0, "%s, step %d: %d rows of As^T x through the operator beyond rounding", what, t->steps, far);
  sb_lcp_entries ca = *ce;
  ca.apply = sb_kept_op_conditioned_apply;
  ca.apply_bound = sb_kept_op_conditioned_apply_bound;
  ca.apply_transposed = sb_kept_op_conditioned_apply_transposed;
  ca.storage = storage;
  sb_lcp_options o = sb_lcp_default_options();
  o.nchain = 1;
  o.chain[0] = SB_LCP_FB;
  o.nblock = nk;
  o.block = blocks;
  o.friction_blocks = 1;
  krylov_against_dense(n, As, &ca, blocks, nk, what, t);
  sb_lcp_work *wk = sb_lcp_work_create(n);
  sb_lcp_info info[2];
  memset(z0, 0, sizeof(double) * 2 * n);
  sb_lcp_status st0 = sb_lcp_solve(wk, n, As, bs, z0, NULL, &o, &info[0]);
  o.entries = &ca;
  sb_lcp_status st1 = sb_lcp_solve(wk, n, NULL, bs, z1, NULL, &o, &info[1]);
  fb_newton_all += wk->krylov_newton;
  fb_least_squares_all += wk->krylov_least_squares;
  int untouched = 1;
  for (size_t k = 0; k < (size_t)n * n && untouched; k++) untouched = isnan(storage[k]);
  EXPECT(untouched && !info[1].matrix_formed, "%s, step %d: FB on the unformed operator formed M (storage %s, "
         "matrix_formed %d)", what, t->steps, untouched ? "untouched" : "written", info[1].matrix_formed);
  fb_runs_all++;
  fb_stored_solved_all += st0 == SB_LCP_SOLVED;
  fb_operator_solved_all += st1 == SB_LCP_SOLVED;
  /* FB bare (no pivot passes): its Newton and least-squares steps alone, each way */
  wk->fb_no_pivot = 1;
  long ls0 = wk->krylov_least_squares;
  sb_lcp_status bare[2];
  for (int k = 0; k < 2; k++) {
    o.entries = k ? &ca : NULL;
    memset(z0, 0, sizeof(double) * n);
    bare[k] = sb_lcp_solve(wk, n, k ? NULL : As, bs, z0, NULL, &o, &info[0]);
    if (bare[k] == SB_LCP_SOLVED) {
      double r, qs = 1;
      for (int i = 0; i < n; i++) qs = fmax(qs, fabs(bs[i]));
      EXPECT(sb_lcp_check(n, As, bs, z0, w, 1.01 * o.tol * qs, 1.01 * o.tol, &r, NULL, y),
             "%s, step %d: FB bare %s solved, yet the dense test on As finds residual %.3g", what, t->steps,
             k ? "on the operator" : "on As", r);
    }
  }
  fb_bare_stored_all += bare[0] == SB_LCP_SOLVED;
  fb_bare_operator_all += bare[1] == SB_LCP_SOLVED;
  fb_least_squares_all += wk->krylov_least_squares - ls0;
  wk->fb_no_pivot = 0;
  if (st1 == SB_LCP_SOLVED) {
    double r, qs = 1;
    for (int i = 0; i < n; i++) qs = fmax(qs, fabs(bs[i]));
    EXPECT(sb_lcp_check(n, As, bs, z1, w, 1.01 * o.tol * qs, 1.01 * o.tol, &r, NULL, y),
           "%s, step %d: FB on the operator solved, yet the dense test on As finds residual %.3g", what, t->steps, r);
  }
  sb_lcp_work_free(wk);
  free(storage);
  free(blocks);
  free(x);
}

/* Every column of the operator, and of the conditioned operator that
 * Lemke reads (sb_contact_conditioned_entries), against A's and the
 * conditioned copy As's, bit for bit; the conditioned entry() on the
 * diagonal (where Tikhonov's eps is) and on the first row and column; its
 * principal blocks and its columns at a third of the rows. */
/* The conditioned operator with a compliance on A's diagonal (the contact
 * solve's damped problem on the operator, sb_kept_op_conditioned.diag):
 * its entries, columns, rows and principal blocks are Md's bit for bit, Md
 * being As with each diagonal entry made here from A's, (A_jj + d_j) dr_j
 * dc_j plus Tikhonov's eps where it applies; its product is within its
 * bound of the long double sum over Md, for z of random signs. */
static void check_compliance(int n, const double *A, const double *As, const double *bs, const sb_lcp_entries *ce,
                             const char *what, tally *t) {
  sb_kept_op_conditioned cd = *(const sb_kept_op_conditioned *)ce->ctx;
  double *d = malloc(sizeof(double) * 6 * n), *col = d + n, *z = col + n, *y = z + n, *e = y + n, *md = e + n;
  int *set = malloc(sizeof(int) * n), na = 0, differ = 0, far = 0;
  double *Md = malloc(sizeof(double) * n * n), *blk = malloc(sizeof(double) * n * n);
  memcpy(Md, As, sizeof(double) * n * n);
  for (int j = 0; j < n; j++) {
    d[j] = fabs(A[(size_t)j * n + j]) * pow(10, 2 * tu_rand_r(&rng) - 1) + 1e-3 * tu_rand_r(&rng);
    md[j] = (A[(size_t)j * n + j] + d[j]) * cd.dr[j] * cd.dc[j];
    if (cd.eps > 0 && (!cd.mask || cd.mask[j])) md[j] += cd.eps;
    Md[(size_t)j * n + j] = md[j];
  }
  cd.diag = d;
  for (int j = 0; j < n; j++) {
    sb_kept_op_conditioned_column(&cd, j, col);
    differ += memcmp(col, Md + (size_t)j * n, sizeof(double) * n) != 0;
    double ejj = sb_kept_op_conditioned_entry(&cd, j, j), e0j = sb_kept_op_conditioned_entry(&cd, 0, j);
    differ += memcmp(&ejj, &md[j], sizeof ejj) != 0 || memcmp(&e0j, &Md[(size_t)j * n], sizeof e0j) != 0;
  }
  for (int i = 0; i < n; i += 2) set[na++] = i;
  sb_kept_op_conditioned_principal(&cd, set, na, blk);
  for (int b = 0; b < na; b++)
    for (int a = 0; a < na; a++)
      differ += memcmp(&blk[(size_t)b * na + a], &Md[(size_t)set[b] * n + set[a]], sizeof(double)) != 0;
  for (int i = 0; i < n; i++) z[i] = (2 * tu_rand_r(&rng) - 1) * pow(10, -6 * tu_rand_r(&rng));
  sb_kept_op_conditioned_apply(&cd, z, bs, y);
  sb_kept_op_conditioned_apply_bound(&cd, z, bs, e);
  for (int i = 0; i < n; i++) {
    long double s;
    double off, slack = row_slack(n, Md, bs, z, y, e, i, &s, &off);
    t->worst_apply = fmax(t->worst_apply, off / fmax(slack, DBL_MIN));
    far += !(off <= slack);
  }
  EXPECT(differ == 0, "%s, step %d: %d entries, columns or blocks with the compliance differ from Md's", what,
         t->steps, differ);
  EXPECT(far == 0, "%s, step %d: %d rows of bs + Md z through the operator with the compliance beyond the bound",
         what, t->steps, far);
  free(d);
  free(set);
  free(Md);
  free(blk);
}

static void check_columns(const sb_contact_problem *P, const sb_kept_op *op, int n, const double *A, const char *what,
                          tally *t) {
  const double *As, *bs, *An, *bn;
  int nn;
  sb_contact_lcp(P, &nn, &An, &bn, &As, &bs);
  const sb_lcp_entries *ce = sb_contact_conditioned_entries(P);
  EXPECT(ce != NULL, "%s, step %d: no conditioned entries with an operator", what, t->steps);
  if (!ce) return;
  double *col = malloc(sizeof(double) * n);
  int differ = 0, cdiffer = 0, first_i = -1, first_j = -1;
  for (int j = 0; j < n; j++) {
    sb_kept_op_column(op, j, col);
    differ += memcmp(col, A + (size_t)j * n, sizeof(double) * n) != 0;
    ce->column(ce->ctx, j, col);
    for (int i = 0; i < n; i++)
      if (memcmp(&col[i], &As[(size_t)j * n + i], sizeof(double)) != 0 && cdiffer++ == 0) {
        first_i = i;
        first_j = j;
      }
    int rows[3] = {j, 0, j};
    int cols[3] = {j, j, 0};
    for (int k = 0; k < 3; k++) {
      double e = ce->entry(ce->ctx, rows[k], cols[k]);
      cdiffer += memcmp(&e, &As[(size_t)cols[k] * n + rows[k]], sizeof e) != 0;
    }
  }
  t->columns += n;
  /* principal blocks: every other index ascending, and the same set reversed */
  int *set = malloc(sizeof(int) * n), na = 0;
  double *blk = malloc(sizeof(double) * n * n);
  for (int i = 0; i < n; i += 2) set[na++] = i;
  for (int order = 0; order < 2; order++) {
    if (order)
      for (int a = 0; a < na / 2; a++) {
        int tmp = set[a];
        set[a] = set[na - 1 - a];
        set[na - 1 - a] = tmp;
      }
    ce->principal(ce->ctx, set, na, blk);
    for (int b = 0; b < na; b++)
      for (int a = 0; a < na; a++)
        cdiffer += memcmp(&blk[(size_t)b * na + a], &As[(size_t)set[b] * n + set[a]], sizeof(double)) != 0;
  }
  /* every column at every third row, descending (not the ascending order the rows' walk favours) */
  na = 0;
  for (int i = n - 1; i >= 0; i -= 3) set[na++] = i;
  for (int j = 0; j < n; j++) {
    ce->column_rows(ce->ctx, j, set, na, blk);
    for (int a = 0; a < na; a++)
      cdiffer += memcmp(&blk[a], &As[(size_t)j * n + set[a]], sizeof(double)) != 0;
  }
  free(set);
  free(blk);
  lemke_both_ways(n, As, bs, ce, what, t);
  lemke_with_products(n, As, bs, ce, what, t);
  check_products(n, As, bs, ce, what, t);
  check_compliance(n, A, As, bs, ce, what, t);
  fb_both_ways(n, As, bs, ce, what, t);
  EXPECT(differ == 0, "%s, step %d: %d of %d columns differ from A's", what, t->steps, differ, n);
  EXPECT(cdiffer == 0, "%s, step %d: %d conditioned entries differ from As's, first column's at (%d, %d): %.17g vs "
         "%.17g", what, t->steps, cdiffer, first_i, first_j,
         first_j >= 0 ? (ce->column(ce->ctx, first_j, col), col[first_i]) : 0.0,
         first_j >= 0 ? As[(size_t)first_j * n + first_i] : 0.0);
  free(col);
}

/* The checks on the last solve of P (see the top); tol: the solve's LCP
 * tolerance, which the physical check scales by max(1, |b|). */
static void check_solve(const sb_contact_problem *P, const sb_contact_info *info, double tol, const char *what,
                        tally *t) {
  t->steps++;
  int n;
  const double *A, *b;
  sb_contact_lcp(P, &n, &A, &b, NULL, NULL);
  const sb_kept_op *op = sb_contact_kept_operator(P);
  if (n == 0) {
    EXPECT(op == NULL, "%s, step %d: an operator without a kept contact", what, t->steps);
    return;
  }
  EXPECT(op != NULL && sb_kept_op_size(op) == n, "%s, step %d: the operator of %d unknowns (A: %d)", what, t->steps,
         op ? sb_kept_op_size(op) : -1, n);
  if (!op || sb_kept_op_size(op) != n) return;
  t->checked++;
  int differ = 0, first_i = -1, first_j = -1;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) {
      double e = sb_kept_op_entry(op, i, j);
      if (memcmp(&e, &A[(size_t)j * n + i], sizeof e) != 0 && differ++ == 0) {
        first_i = i;
        first_j = j;
      }
    }
  t->entries += n * n;
  EXPECT(differ == 0, "%s, step %d: %d of %d entries differ from A's, first (%d, %d): %.17g vs %.17g", what,
         t->steps, differ, n * n, first_i, first_j, differ ? sb_kept_op_entry(op, first_i, first_j) : 0.0,
         differ ? A[(size_t)first_j * n + first_i] : 0.0);
  check_columns(P, op, n, A, what, t);

  double *z = malloc(6 * sizeof(double) * n), *wo = z + n, *wd = wo + n, *bound = wd + n, *absd = bound + n,
         *zero = absd + n;
  memset(zero, 0, n * sizeof(double));
  const double *answer = sb_contact_lcp_answer(P);
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 0)
      memcpy(z, answer, n * sizeof(double));
    else /* random signs over six decades: cancellation in every row */
      for (int i = 0; i < n; i++) z[i] = (2 * tu_rand_r(&rng) - 1) * pow(10, -6 * tu_rand_r(&rng));
    sb_kept_op_apply(op, z, b, wo);
    dense_product(n, A, b, z, wd);
    product_bound(op, b, z, bound);
    for (int i = 0; i < n; i++) {
      double ratio = fabs(wo[i] - wd[i]) / fmax(bound[i], DBL_MIN);
      t->worst_product = fmax(t->worst_product, ratio);
      if (!(ratio <= 1)) {
        EXPECT(0, "%s, step %d, %s z: row %d: operator %.17g, dense %.17g, bound %.3g", what, t->steps,
               pass ? "random" : "the answer's", i, wo[i], wd[i], bound[i]);
        break;
      }
    }
    /* abs_apply bounds the dense |A| |z| (up to A's own rounding, 4 u) */
    sb_kept_op_abs_apply(op, z, bound);
    for (int i = 0; i < n; i++) {
      double s = 0;
      for (int j = 0; j < n; j++) s += fabs(A[(size_t)j * n + i]) * fabs(z[j]);
      absd[i] = s;
      if (!(s <= bound[i] * (1 + 4 * (n + 8) * DBL_EPSILON))) {
        EXPECT(0, "%s, step %d: row %d: |A||z| = %.17g above the operator's bound %.17g", what, t->steps, i, s,
               bound[i]);
        break;
      }
    }
  }
  /* the physical check: the dense residual of the answer the solve kept */
  dense_product(n, A, b, answer, wd);
  product_bound(op, b, answer, bound);
  double res = 0, slack = 0, qmax = 1;
  for (int i = 0; i < n; i++) {
    double m = fmin(answer[i], wd[i]);
    res = fmax(res, isnan(m) ? INFINITY : fabs(m));
    slack = fmax(slack, bound[i]);
    qmax = fmax(qmax, fabs(b[i]));
  }
  t->worst_residual = fmax(t->worst_residual, fabs(info->residual - res) / fmax(slack, DBL_MIN));
  EXPECT(fabs(info->residual - res) <= slack, "%s, step %d: physical residual %.17g, dense %.17g (bound %.3g)", what,
         t->steps, info->residual, res, slack);
  if (info->lcp.status == SB_LCP_SOLVED) {
    t->solved++;
    EXPECT(res <= fmax(tol, 1e-9) * qmax + slack, "%s, step %d: accepted, yet the dense residual is %.3g (> %.3g)",
           what, t->steps, res, fmax(tol, 1e-9) * qmax);
  }
  free(z);
}

static void report(const char *what, const tally *t) {
  printf("%-34s %5d steps, %5d with kept contacts (%d solved), %9d entries and %6d columns (plain and "
         "conditioned) equal, %d Lemke runs (%d pivots) alike; |op - dense| <= %.3f of the bound, residuals within "
         "%.3f of it; conditioned products within %.3f of their bound, %d chain solves on them; %d Lemke runs "
         "through apply (%ld applies)\n",
         what, t->steps, t->checked, t->solved, t->entries, t->columns, t->lemke_runs, t->lemke_pivots,
         t->worst_product, t->worst_residual, t->worst_apply, t->product_solves, t->apply_runs, t->apply_calls);
  EXPECT(t->checked > 0, "%s: no step had kept contacts", what);
  EXPECT(t->apply_calls > 0, "%s: no Lemke direction went through apply", what);
}

/* The box sliding down a 30 degree incline (mu 0.3) and sticking on a 10
 * degree one (mu 0.8), m contacts, r directions, 40 steps each: the box's
 * velocity carried over through its free velocity. */
static void test_block(void) {
  char err[256];
  int ms[] = {4, 9, 16}, rs[] = {4, 6, 8};
  for (unsigned im = 0; im < 3; im++)
    for (unsigned ir = 0; ir < 3; ir++)
      for (int slide = 0; slide < 2; slide++) {
        int m = ms[im], r = rs[ir];
        sb_contact_problem *P = sb_contact_create(m, 1, 6, r, err, sizeof err);
        EXPECT(P != NULL, "box problem: %s", err);
        if (!P) continue;
        sb_contact_options o = sb_contact_default_options();
        o.directions = r;
        double v[6] = {0}, h = 1e-3;
        char what[64];
        snprintf(what, sizeof what, "box %s, %d contacts, r = %d", slide ? "sliding" : "sticking", m, r);
        tally t;
        memset(&t, 0, sizeof t);
        for (int step = 0; step < 40; step++) {
          sb_contact_clear(P);
          scene_block s;
          double theta = slide ? M_PI / 6 : M_PI / 18, mu = slide ? 0.3 : 0.8;
          if (scene_block_fill_moving(P, &s, theta, mu, m, h, v, NULL, err, sizeof err) < 0) {
            EXPECT(0, "%s: %s", what, err);
            break;
          }
          sb_contact_info info;
          EXPECT(sb_contact_solve(P, h, &o, &info, err, sizeof err) == 0, "%s, step %d: %s", what, step, err);
          check_solve(P, &info, o.lcp.tol, what, &t);
          sb_contact_body_velocity(P, 0, v);
        }
        if (im == 2 && ir == 2) report(what, &t);
        EXPECT(t.checked == 40, "%s: %d of 40 steps checked", what, t.checked);
        sb_contact_free(P);
      }
}

/* The soft rod lying on the plane, 4 sections of 4 disks, 2 contacts a disk. */
static void test_rod(void) {
  char err[256];
  scene_rod rod;
  scene_rod_params(&rod, 4, 4, 2);
  sb_model *m = sb_model_create(&rod.chain, err, sizeof err);
  EXPECT(m != NULL, "rod model: %s", err);
  if (!m) return;
  sb_state *st = sb_state_create(m);
  sb_work *w = sb_work_create(m);
  int nc = rod.chain.ndisk * rod.per_disk;
  sb_contact_problem *P = sb_contact_create(nc, 1, m->n, 4, err, sizeof err);
  sb_contact_options o = sb_contact_default_options();
  tally t;
  memset(&t, 0, sizeof t);
  double h = 1e-3;
  for (int step = 0; step < 60; step++) {
    EXPECT(sb_step_prepare(m, st, w, NULL, h, err, sizeof err) == 0, "prepare: %s", err);
    sb_contact_clear(P);
    EXPECT(scene_rod_fill(P, &rod, m, w, 0.5, err, sizeof err) >= 0, "rod scene: %s", err);
    sb_contact_info info;
    EXPECT(sb_contact_solve(P, h, &o, &info, err, sizeof err) == 0, "rod, step %d: %s", step, err);
    check_solve(P, &info, o.lcp.tol, "rod lying, 32 contacts", &t);
    EXPECT(sb_step_commit(m, st, w, sb_contact_body_impulse(P, 0), err, sizeof err) == 0, "commit: %s", err);
  }
  report("rod lying, 32 contacts", &t);
  /* a given dense LCP (a replayed dump) has only A's doubles: no operator */
  int n;
  const double *A, *b;
  sb_contact_lcp(P, &n, &A, &b, NULL, NULL);
  double *Ac = malloc(sizeof(double) * ((size_t)n * n + 2 * n)), *bc = Ac + (size_t)n * n, *z = bc + n;
  memcpy(Ac, A, sizeof(double) * n * n);
  memcpy(bc, b, sizeof(double) * n);
  memset(z, 0, sizeof(double) * n);
  o.warm_start = 0;
  EXPECT(sb_contact_solve_lcp(P, n, 4, Ac, bc, z, &o, NULL, err, sizeof err) == 0, "replayed LCP: %s", err);
  EXPECT(sb_contact_kept_operator(P) == NULL, "an operator after a solve of a given dense LCP");
  free(Ac);
  sb_contact_free(P);
  sb_work_free(w);
  sb_state_free(st);
  sb_model_free(m);
}

/* Lemke reading the conditioned LCP from the operator (lcp_from_operator,
 * the default) against reading the assembled copy: the same doubles, so the
 * same path, and every step's answer equal bit for bit. The soft rod lying
 * (n about 100: Lemke's revised form), 60 steps from rest, with warm starts
 * after the first step (Lemke there and where the warm pivot fails) and
 * without (Lemke on every step);
 * each run must have run the revised form from the operator. */
static void test_lemke_on_operator(void) {
  char err[256];
  for (int warm = 0; warm < 2; warm++) {
    scene_rod rod;
    scene_rod_params(&rod, 4, 4, 2);
    sb_model *m[2];
    sb_state *st[2];
    sb_work *w[2];
    sb_contact_problem *P[2];
    int nc = rod.chain.ndisk * rod.per_disk, revised = 0, differ = 0, first = -1, steps = 60;
    for (int k = 0; k < 2; k++) {
      m[k] = sb_model_create(&rod.chain, err, sizeof err);
      EXPECT(m[k] != NULL, "rod model: %s", err);
      if (!m[k]) return;
      st[k] = sb_state_create(m[k]);
      w[k] = sb_work_create(m[k]);
      P[k] = sb_contact_create(nc, 1, m[k]->n, 4, err, sizeof err);
    }
    double h = 1e-3;
    for (int step = 0; step < steps; step++) {
      int n[2];
      for (int k = 0; k < 2; k++) {
        sb_contact_options o = sb_contact_default_options();
        o.lcp_from_operator = k == 0;
        /* the first step cold: from the unloaded contacts' sliding speeds alone (the guess a warm
         * start makes of a step without history) the warm pivot answers this rod on every step */
        o.warm_start = warm && step > 0;
        EXPECT(sb_step_prepare(m[k], st[k], w[k], NULL, h, err, sizeof err) == 0, "prepare: %s", err);
        sb_contact_clear(P[k]);
        EXPECT(scene_rod_fill(P[k], &rod, m[k], w[k], 0.5, err, sizeof err) >= 0, "rod scene: %s", err);
        sb_contact_info info;
        EXPECT(sb_contact_solve(P[k], h, &o, &info, err, sizeof err) == 0, "rod, step %d: %s", step, err);
        if (k == 0) revised += info.lcp.lemke_form == SB_LCP_LEMKE_REVISED;
        const double *A, *b;
        sb_contact_lcp(P[k], &n[k], &A, &b, NULL, NULL);
        EXPECT(sb_step_commit(m[k], st[k], w[k], sb_contact_body_impulse(P[k], 0), err, sizeof err) == 0,
               "commit: %s", err);
      }
      int same = n[0] == n[1] &&
                 memcmp(sb_contact_lcp_answer(P[0]), sb_contact_lcp_answer(P[1]), sizeof(double) * n[0]) == 0 &&
                 memcmp(st[0]->q, st[1]->q, sizeof(double) * m[0]->n) == 0;
      if (!same && differ++ == 0) first = step;
    }
    printf("Lemke on the operator, rod lying, warm start %d: %d of %d steps in the revised form, %d steps "
           "differ\n", warm, revised, steps, differ);
    EXPECT(differ == 0, "warm start %d: %d steps differ between Lemke on the operator and on the matrix, the first "
           "at step %d", warm, differ, first);
    EXPECT(revised >= (warm ? 1 : steps), "warm start %d: the revised Lemke ran on %d of %d steps", warm, revised,
           steps);
    for (int k = 0; k < 2; k++) {
      sb_contact_free(P[k]);
      sb_work_free(w[k]);
      sb_state_free(st[k]);
      sb_model_free(m[k]);
    }
  }
}

/* A scene through the plugin from t0 to t1, each step's coupled solve. */
static void test_scene(const char *what, const char *path, const cusp_override *ov, int nov, double t0, double t1) {
  mjModel *m = load(path, ov, nov);
  mjData *d = m ? attach(m) : NULL;
  if (!d) {
    finish(m, d);
    return;
  }
  tally t;
  memset(&t, 0, sizeof t);
  double tol = sb_lcp_default_options().tol;
  while (d->time < t1) {
    mj_step(m, d);
    if (d->time < t0) continue;
    const cusp_step_report *rep = cusp_report(m, d);
    cusp_runtime *r = cusp_runtime_of(m, d);
    if (!rep || !r || !r->lcp_ran) continue;
    check_solve(r->P, &rep->info, tol, what, &t);
  }
  report(what, &t);
  finish(m, d);
}

/* A scene for the two runs below: its file, the plugin instance the key
 * goes to, more keys (ov, nov), and the time the runs end. */
typedef struct {
  const char *what, *path, *instance;
  const cusp_override *ov;
  int nov;
  double t1;
  int fb_first; /* ov makes FB the chain's first solver */
  int may_part; /* a settling scene whose degenerate LCPs FB may answer by another solution on each path: the
                   states may part, and only the steps each path solved are compared */
} pair_scene;

/* The scene loaded twice, m[k], d[k] with lcp_matrix = value[k]. */
static void load_pair(const pair_scene *sc, const char *const value[2], mjModel *m[2], mjData *d[2]) {
  cusp_override o2[CUT_ARM_NKEYS + 1];
  for (int k = 0; k < 2; k++) {
    if (sc->nov) memcpy(o2, sc->ov, sizeof(cusp_override) * sc->nov); /* ov may be NULL when nov is 0 */
    o2[sc->nov] = (cusp_override){sc->instance, "lcp_matrix", value[k]};
    m[k] = load(sc->path, o2, sc->nov + 1);
    d[k] = m[k] ? attach(m[k]) : NULL;
  }
}

/* A scene through the plugin twice in lockstep, with key lcp_matrix
 * value[0] and value[1] that must compute the same doubles (stored and
 * entries: the conditioned LCP's entries read from the assembled matrix or
 * computed from W; auto and the path it takes at the scene's size):
 * MuJoCo's state and the plugin's equal bit for bit on every step to t1,
 * and the chain (not only the warm start) ran. The second run's passes that
 * read the LCP from the operator alone are counted into *operator_passes
 * (may be NULL), its stage-1 passes into *passes. */
static void test_scene_same_doubles(const pair_scene *sc, const char *const value[2], long *operator_passes,
                                    long *passes) {
  const char *what = sc->what;
  double t1 = sc->t1;
  mjModel *m[2];
  mjData *d[2];
  load_pair(sc, value, m, d);
  int steps = 0, differ = 0, first = -1;
  long cold = 0, solves = 0, op = 0, np = 0;
  while (d[0] && d[1] && d[0]->time < t1) {
    for (int k = 0; k < 2; k++) mj_step(m[k], d[k]);
    const cusp_step_report *rep = cusp_report(m[1], d[1]);
    if (rep) {
      cold += rep->info.cold_solves;
      solves += rep->info.solves;
      op += rep->info.operator_passes;
      np += rep->info.rank_passes;
    }
    int same = memcmp(d[0]->qpos, d[1]->qpos, sizeof(mjtNum) * m[0]->nq) == 0 &&
               memcmp(d[0]->qvel, d[1]->qvel, sizeof(mjtNum) * m[0]->nv) == 0 &&
               memcmp(d[0]->plugin_state, d[1]->plugin_state, sizeof(mjtNum) * m[0]->npluginstate) == 0;
    if (!same && differ++ == 0) first = steps;
    steps++;
  }
  printf("%-34s lcp_matrix %s and %s: %d steps, %ld solves (%ld by the chain), %d differ; %ld of %ld passes on the "
         "operator alone\n", what, value[0], value[1], steps, solves, cold, differ, op, np);
  EXPECT(steps > 0 && differ == 0, "%s: %d of %d steps differ between lcp_matrix %s and %s, the first at step %d",
         what, differ, steps, value[0], value[1], first);
  EXPECT(cold > 0, "%s: the chain never ran (%ld solves)", what, solves);
  if (operator_passes) *operator_passes = op;
  if (passes) *passes = np;
  for (int k = 0; k < 2; k++) finish(m[k], d[k]);
}

/* lcp_matrix auto (the default until session 41, now operator): stored's doubles where every pass is below
 * SB_CONTACT_LCP_AUTO_MIN_N unknowns (Scenario A, n <= 36), operator's where
 * the passes are above it (the tiled rope at 40 elements, n 800-880), and
 * the passes said so. */
static void test_auto_matrix(void) {
  static const char *const small[2] = {"stored", "auto"}, *const large[2] = {"operator", "auto"};
  static const cusp_override rope40 = {"rod0", "sections", "40"};
  const pair_scene a = {"Scenario A (auto)", CUSP_SOURCE_DIR "/mjcf/scenario_a.xml", "arm", NULL, 0, 0.6, 0, 0};
  const pair_scene rope = {"tiled rope of 40 elements (auto)", CUSP_SOURCE_DIR "/bench/scenes/rope_plane_tiled.xml",
                           "rod0", &rope40, 1, 0.0025, 0, 0};
  long op = -1, passes = 0;
  test_scene_same_doubles(&a, small, &op, &passes);
  EXPECT(op == 0 && passes > 0, "Scenario A under auto: %ld of %ld passes on the operator (none expected below %d "
         "unknowns)", op, passes, SB_CONTACT_LCP_AUTO_MIN_N);
  op = -1;
  test_scene_same_doubles(&rope, large, &op, &passes);
  EXPECT(passes > 0 && op == passes, "the 40-element rope under auto: %ld of %ld passes on the operator (all "
         "expected from %d unknowns)", op, passes, SB_CONTACT_LCP_AUTO_MIN_N);
}

/* A scene stepped with lcp_matrix stored, and each step also taken from the
 * same state (MuJoCo's and the plugin's) with lcp_matrix operator (the
 * products through W too, A and As unformed): both answers pass the same acceptance test, so
 * the states after the step differ by round-off, or where a degenerate LCP
 * has several solutions by another one's velocities, which stay within the
 * tolerance's reach: MuJoCo's velocities and the soft bodies' coordinates
 * and velocities within 1e-6 of their largest entry (a wrong product
 * accepts a wrong impulse, and its velocities are off by O(1)). With FB
 * first in the chain (fb_first), FB runs on the operator through its
 * products alone (fb_krylov.c), and solves to the same test. */
static void test_scene_operator_steps(const pair_scene *sc) {
  static const char *const value[2] = {"stored", "operator"};
  const char *what = sc->what;
  double t1 = sc->t1;
  mjModel *m[2];
  mjData *d[2];
  load_pair(sc, value, m, d);
  if (!d[0] || !d[1]) {
    for (int k = 0; k < 2; k++) finish(m[k], d[k]);
    return;
  }
  int spec = mjSTATE_INTEGRATION, size = mj_stateSize(m[0], spec), steps = 0, differ = 0;
  long formed = 0, passes = 0, fb_ran = 0, unsolved = 0;
  mjtNum *state = malloc(sizeof(mjtNum) * size);
  double worst = 0;
  while (d[0]->time < t1) {
    mj_getState(m[0], d[0], state, spec);
    mj_setState(m[1], d[1], state, spec);
    for (int k = 0; k < 2; k++) mj_step(m[k], d[k]);
    const cusp_step_report *rep = cusp_report(m[1], d[1]);
    if (rep) {
      formed += rep->info.matrices_formed;
      passes += rep->info.rank_passes;
      /* steps whose last pass the chain answered (not the warm pivot) with FB */
      fb_ran += rep->info.nvar > 0 && rep->info.cold_solves > 0 && rep->info.lcp.solver == SB_LCP_FB &&
                rep->info.lcp.warm_pivot == 0;
      const cusp_step_report *r0 = cusp_report(m[0], d[0]);
      unsolved += r0 && r0->info.lcp.status == SB_LCP_SOLVED && rep->info.lcp.status != SB_LCP_SOLVED;
    }
    double dv = 0, vmax = 0;
    for (int i = 0; i < m[0]->nv; i++) {
      dv = fmax(dv, fabs(d[0]->qvel[i] - d[1]->qvel[i]));
      vmax = fmax(vmax, fabs(d[0]->qvel[i]));
    }
    /* the soft bodies' coordinates and velocities (the rest of the plugin's state, the warm start's
     * record of which contacts carried impulse, may differ where a degenerate LCP's solutions do) */
    for (int in = 0; in < cusp_instance_count(m[0]); in++) {
      const double *q[2], *v[2];
      int ns = cusp_soft_state(m[0], d[0], in, &q[0], &v[0]);
      if (ns <= 0 || cusp_soft_state(m[1], d[1], in, &q[1], &v[1]) != ns) continue;
      for (int i = 0; i < ns; i++) {
        dv = fmax(dv, fmax(fabs(q[0][i] - q[1][i]), fabs(v[0][i] - v[1][i])));
        vmax = fmax(vmax, fmax(fabs(q[0][i]), fabs(v[0][i])));
      }
    }
    differ += dv > 0;
    worst = fmax(worst, dv / fmax(vmax, 1e-3));
    steps++;
  }
  printf("%-34s lcp_matrix operator from stored's states: %d steps, %d differ, at most by %.3g of the state's "
         "largest entry; the matrices formed on %ld of %ld passes; FB answered %ld steps; %ld unsolved on the "
         "operator alone\n", what, steps, differ, worst, formed, passes, fb_ran, unsolved);
  EXPECT(steps > 0 && (sc->may_part || worst <= 1e-6), "%s: a step with lcp_matrix operator from stored's state "
         "differs by %.3g of the state's largest entry", what, worst);
  EXPECT(unsolved == 0, "%s: %ld steps that stored solved, operator did not", what, unsolved);
  /* no solver reads a stored matrix on the operator: Lemke runs in its revised form on an unformed matrix at any
   * size, FB through the products (fb_krylov.c), PGS by the operator's columns, and the damped problem reads
   * the operator too */
  EXPECT(passes > 0 && formed == 0, "%s: lcp_matrix operator formed the n x n matrices on %ld of %ld passes", what,
         formed, passes);
  EXPECT(!sc->fb_first || fb_ran > 0, "%s: FB answered no step", what);
  free(state);
  for (int k = 0; k < 2; k++) finish(m[k], d[k]);
}

/* The default keys (no lcp_matrix): every stage-1 pass reads its LCP from
 * the operator and none forms the n x n matrices (issue 15, item 1, by
 * default since session 41), on Scenario A (n <= 36, where auto would form
 * them) and the rod lying on a plane (n about 500). */
static void test_default_is_operator(void) {
  const char *const scenes[2] = {CUSP_SOURCE_DIR "/mjcf/scenario_a.xml", CUSP_SOURCE_DIR "/bench/scenes/rod_plane.xml"};
  const double t1[2] = {1.0, 0.3};
  for (int k = 0; k < 2; k++) {
    mjModel *m = load(scenes[k], NULL, 0);
    mjData *d = m ? attach(m) : NULL;
    long passes = 0, op = 0, formed = 0, solved = 0, steps = 0;
    while (d && d->time < t1[k]) {
      mj_step(m, d);
      const cusp_step_report *r = cusp_report(m, d);
      if (!r) break;
      steps++;
      solved += r->solved;
      if (r->info.nvar == 0) continue;
      passes += r->info.rank_passes;
      op += r->info.operator_passes;
      formed += r->info.matrices_formed;
    }
    printf("%s, default keys: %ld steps (%ld solved), %ld of %ld passes on the operator, the matrices formed on %ld\n",
           scenes[k], steps, solved, op, passes, formed);
    EXPECT(steps > 0 && solved == steps, "%s, default keys: %ld of %ld steps solved", scenes[k], solved, steps);
    /* a screen pass repeats a stage-1 pass, counted once in rank_passes and each time in operator_passes */
    EXPECT(passes > 0 && op >= passes && formed == 0,
           "%s, default keys: %ld of %ld passes on the operator, the matrices formed on %ld", scenes[k], op, passes,
           formed);
    finish(m, d);
  }
}

int main(void) {
  test_default_is_operator();
  test_block();
  test_rod();
  test_lemke_on_operator();
  test_scene("Scenario A", CUSP_SOURCE_DIR "/mjcf/scenario_a.xml", NULL, 0, 0, 1.0);
  cut_arm_key keys[CUT_ARM_NKEYS];
  int nk = cut_arm_keys(6, 1, keys);
  cusp_override ov[CUT_ARM_NKEYS];
  for (int i = 0; i < nk; i++) ov[i] = (cusp_override){"arm", keys[i].key, keys[i].value};
  test_scene("6-section arm sliding", CUSP_SOURCE_DIR "/mjcf/scenario_a.xml", ov, nk, 1.5, 1.7);
  test_scene("rod clamped at both ends, ball", CUSP_SOURCE_DIR "/mjcf/demo_clamped_rod.xml", NULL, 0, 0.2, 0.6);
  { /* the key's words only */
    char err[1024] = "";
    cusp_override bad = {"arm", "lcp_matrix", "dense"};
    mjModel *mb = cusp_load_with(CUSP_SOURCE_DIR "/mjcf/scenario_a.xml", &bad, 1, err, sizeof err);
    EXPECT(!mb && strstr(err, "lcp_matrix") && strstr(err, "dense") && strstr(err, "operator"),
           "lcp_matrix=\"dense\" refused, naming the key, the value and the words (%s)", err);
    if (mb) mj_deleteModel(mb);
  }
  const pair_scene scenes[] = {
      {"Scenario A", CUSP_SOURCE_DIR "/mjcf/scenario_a.xml", "arm", NULL, 0, 1.0, 0, 0},
      {"6-section arm sliding", CUSP_SOURCE_DIR "/mjcf/scenario_a.xml", "arm", ov, nk, 1.7, 0, 0},
      {"rod of 80 elements lying", CUSP_SOURCE_DIR "/bench/scenes/rod_plane.xml", "arm", NULL, 0, 0.25, 0, 0},
      {"tiled rope settling", CUSP_SOURCE_DIR "/bench/scenes/rope_plane_tiled.xml", "rod0", NULL, 0, 0.1, 0, 0}};
  static const char *const entries[2] = {"stored", "entries"};
  for (unsigned k = 0; k < sizeof scenes / sizeof scenes[0]; k++) test_scene_same_doubles(&scenes[k], entries, NULL, NULL);
  test_auto_matrix();
  for (unsigned k = 0; k < sizeof scenes / sizeof scenes[0]; k++) test_scene_operator_steps(&scenes[k]);
  { /* FB first in the chain (the solver key): on the operator it runs through the products alone */
    static const cusp_override fb_arm = {"arm", "solver", "fb"}, fb_rope = {"rod0", "solver", "fb"};
    const pair_scene fb_scenes[] = {
        {"Scenario A, FB first", CUSP_SOURCE_DIR "/mjcf/scenario_a.xml", "arm", &fb_arm, 1, 0.5, 1, 0},
        {"tiled rope settling, FB first", CUSP_SOURCE_DIR "/bench/scenes/rope_plane_tiled.xml", "rod0", &fb_rope, 1,
         0.003, 1, 1}};
    for (unsigned k = 0; k < sizeof fb_scenes / sizeof fb_scenes[0]; k++) test_scene_operator_steps(&fb_scenes[k]);
  }
  printf("Lemke through apply: %d of %d runs ended otherwise than on As\n", apply_off_all, apply_runs_all);
  printf("FB alone, cold: %d of %d solved on As stored, %d on the unformed operator (%ld Newton steps by GMRES, "
         "%ld least-squares steps by CGLS); without its pivot passes %d on As, %d on the operator\n",
         fb_stored_solved_all, fb_runs_all, fb_operator_solved_all, fb_newton_all, fb_least_squares_all,
         fb_bare_stored_all, fb_bare_operator_all);
  EXPECT(fb_least_squares_all > 0 && fb_bare_operator_all >= fb_bare_stored_all - fb_runs_all / 20,
         "FB without its pivot passes: %d of %d solved on the operator, %d on As stored (%ld least-squares steps)",
         fb_bare_operator_all, fb_runs_all, fb_bare_stored_all, fb_least_squares_all);
  EXPECT(100 * restarted_loose_all <= 15 * krylov_runs_all, "restarted GMRES above 1e-8 of |Phi| on %d of %d "
         "regular steps (at most 15 %%)", restarted_loose_all, krylov_runs_all);
  printf("FB's Krylov steps against LAPACK: %d runs; GMRES at most %.3f of its rank bound 3nk + 1, %d Newton steps "
         "above 1e-8 of |Phi| (%d restarted every quarter of the bound); %d least-squares steps off the optimum by "
         "more than 1e-6 of |Phi|^2\n", krylov_runs_all, krylov_rank_ratio_all, newton_loose_all,
         restarted_loose_all, least_squares_off_all);
  EXPECT(krylov_runs_all > 0 && 100 * newton_loose_all <= krylov_runs_all && 100 * least_squares_off_all <=
         krylov_runs_all, "FB's Krylov steps: %d of %d Newton steps above 1e-8 of |Phi| where LU's is within it, %d "
         "least-squares steps off the optimum (at most 1 %% each)", newton_loose_all, krylov_runs_all,
         least_squares_off_all);
  printf("acceptance test on the products: %ld points, %ld passed; %ld of %ld rows passed without their terms\n",
         terms_points_all, terms_passed_all, terms_skipped_all, terms_rows_all);
  EXPECT(terms_passed_all > 0 && terms_passed_all < terms_points_all && 2 * terms_skipped_all > terms_rows_all,
         "acceptance test on the products: %ld of %ld points passed, %ld of %ld rows without their terms: both "
         "verdicts and mostly rows without terms expected", terms_passed_all, terms_points_all, terms_skipped_all,
         terms_rows_all);
  EXPECT(fb_runs_all > 0 && fb_operator_solved_all >= fb_stored_solved_all - fb_runs_all / 20,
         "FB on the unformed operator solved %d of %d, on As stored %d", fb_operator_solved_all, fb_runs_all,
         fb_stored_solved_all);
  EXPECT(apply_runs_all > 0 && 20 * apply_off_all <= apply_runs_all,
         "Lemke through apply: %d of %d runs ended otherwise than on As (a status, or a raw answer off)", apply_off_all,
         apply_runs_all);
  return test_report("kept_op");
}

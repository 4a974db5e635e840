/* The LCP solvers' guarantee, checked in exact rational arithmetic (GMP, an
 * oracle independent of the floating-point code under test): whatever the
 * data, a solve that reports "solved" returns a z whose EXACT residual
 * |min(z_i, (Mz + q)_i)| is within the documented tolerance, and no solve
 * ever returns a non-finite z or w. Adversarial problems: entries of 1e308,
 * 1e-308, subnormals, 1e154 (whose products overflow), cancellations of 1e20
 * against 8, every solver alone, the fallback chain, warm starts, and the
 * conditioned solve (Ruiz, Tikhonov) with its unscaling, and cusp-lcp's split solve. */
#include <gmp.h>
#include <stdlib.h>
#include <string.h>

#include "lcp.h"
#include "testutil.h"

#define NMAX 6

/* exact w_i = q_i + sum_j M_ij z_j and s_i = |q_i| + sum_j |M_ij z_j| */
static void exact_row(int n, const double *M, const double *q, const double *z, int i, mpq_t w, mpq_t s) {
  mpq_t t, a;
  mpq_inits(t, a, NULL);
  mpq_set_d(w, q[i]);
  mpq_abs(s, w);
  for (int j = 0; j < n; j++) {
    mpq_set_d(t, M[j * n + i]);
    mpq_set_d(a, z[j]);
    mpq_mul(t, t, a);
    mpq_add(w, w, t);
    mpq_abs(t, t);
    mpq_add(s, s, t);
  }
  mpq_clears(t, a, NULL);
}

/* Exact max_i |min(z_i, w_i)| - max(abs_tol, rel_tol s_i) > 0 ? Returns 1 when the claim
 * holds; *true_residual: the exact residual rounded to double. */
static int claim_holds(int n, const double *M, const double *q, const double *z, double abs_tol, double rel_tol,
                       double *true_residual) {
  mpq_t w, s, r, thr, zi;
  mpq_inits(w, s, r, thr, zi, NULL);
  int ok = 1;
  double worst = 0;
  for (int i = 0; i < n; i++) {
    exact_row(n, M, q, z, i, w, s);
    mpq_set_d(zi, z[i]);
    mpq_set(r, mpq_cmp(zi, w) < 0 ? zi : w);
    mpq_abs(r, r);
    worst = fmax(worst, mpq_get_d(r));
    mpq_set_d(thr, rel_tol);
    mpq_mul(thr, thr, s);
    mpq_t at;
    mpq_init(at);
    mpq_set_d(at, abs_tol);
    if (mpq_cmp(at, thr) > 0) mpq_set(thr, at);
    mpq_clear(at);
    if (mpq_cmp(r, thr) > 0) ok = 0;
  }
  *true_residual = worst;
  mpq_clears(w, s, r, thr, zi, NULL);
  return ok;
}

static unsigned long long rng = 0x2545F4914F6CDD1Dull;
static double uniform(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (double)(rng >> 11) / 9007199254740992.0;
}

static double adversarial_value(void) {
  static const double palette[] = {1e308, -1e308, 1e-308, -1e-308, 4.9e-324, 1e300, -1e300, 1e154,
                                   -1e154, 1e20, -1e20, 1, -1, 8, -8, 0};
  double r = uniform();
  if (r < 0.15) return 0;
  if (r < 0.45) return palette[(int)(uniform() * 16) % 16];
  return (2 * uniform() - 1) * pow(10, (int)(uniform() * 41) - 20);
}

static int all_finite(int n, const double *x) {
  for (int i = 0; i < n; i++)
    if (!isfinite(x[i])) return 0;
  return 1;
}

typedef struct {
  int solved, refused_by_check, false_claims, nonfinite;
} tally;

/* One solve, its claim checked exactly. how: 0..2 one solver, 3 the chain, 4 the chain from a
 * warm start, 5 conditioned (Ruiz 10), 6 conditioned without Ruiz, with Tikhonov 1e-8, 7 split
 * into zero rows and components (cusp-lcp's solve). */
static void solve_and_check(sb_lcp_work *wk, int n, const double *M, const double *q, int how, tally *t,
                            const char *label) {
  double z[NMAX], w[NMAX];
  sb_lcp_options opt = sb_lcp_default_options();
  sb_lcp_info info;
  sb_lcp_status st;
  for (int i = 0; i < n; i++) z[i] = fabs(adversarial_value());
  if (how < 3) {
    st = sb_lcp_solve_with(wk, (sb_lcp_solver)how, n, M, q, z, w, &opt, &info);
  } else if (how < 5) {
    opt.warm_start = how == 4;
    st = sb_lcp_solve(wk, n, M, q, z, w, &opt, &info);
  } else if (how < 7) {
    st = sb_lcp_condition_solve(wk, n, M, q, z, w, how == 5 ? 10 : 0, how == 5 ? 0 : 1e-8, &opt, &info);
  } else {
    st = sb_lcp_solve_split(n, M, q, z, w, 10, 0, &opt, &info, NULL, NULL);
  }
  if (!all_finite(n, z) || !all_finite(n, w) || isnan(info.residual)) {
    t->nonfinite++;
    fprintf(stderr, "%s (how %d): non-finite z or w returned\n", label, how);
  }
  if (strstr(info.message, "cannot be verified") || strstr(info.message, "not finite in row") ||
      strstr(info.message, "above tolerance") || strstr(info.message, "original residual"))
    t->refused_by_check++;
  if (st != SB_LCP_SOLVED) return;
  t->solved++;
  double qs = 1, true_res;
  for (int i = 0; i < n; i++) qs = fmax(qs, fabs(q[i]));
  /* the documented tests: sb_lcp_solve per row against its terms, the conditioned solve
   * absolutely against max(1, |q|inf) */
  int holds = how < 5 ? claim_holds(n, M, q, z, opt.tol * qs, opt.tol, &true_res)
                      : claim_holds(n, M, q, z, fmax(opt.tol, 1e-9) * qs, 0, &true_res);
  if (!holds) {
    t->false_claims++;
    fprintf(stderr, "%s (how %d): claimed solved with residual %.3g, exact residual %.3g\n", label, how,
            info.residual, true_res);
  } else if (!(fabs(info.residual - true_res) <= 1e-9 * qs + 1e-3 * true_res)) {
    t->false_claims++;
    fprintf(stderr, "%s (how %d): reported residual %.3g, exact %.3g (|q|inf %.3g)\n", label, how, info.residual,
            true_res, qs);
    if (getenv("CUSP_DUMP"))
      for (int k = 0; k < n * n + 2 * n; k++)
        fprintf(stderr, "%.17g%c", k < n * n ? M[k] : k < n * n + n ? q[k - n * n] : z[k - n * n - n], k % n == n - 1 ? '\n' : ' ');
  }
}

int main(void) {
  sb_lcp_work *wk = sb_lcp_work_create(NMAX);

  /* Overflow of w: z = (2, 0) solves it exactly, but w_1 = 1e308 * 2 + 1 is not a double.
   * Reported as not solved (it cannot be verified in finite arithmetic), z and w finite. */
  {
    double M[4] = {1, 1e308, 0, 1}, q[2] = {-2, 1}, z[2], w[2];
    sb_lcp_options opt = sb_lcp_default_options();
    sb_lcp_info info;
    for (int s = 0; s < 3; s++) {
      sb_lcp_status st = sb_lcp_solve_with(wk, (sb_lcp_solver)s, 2, M, q, z, w, &opt, &info);
      /* (Lemke alone ends on a ray: 1 is below its pivot tolerance next to 1e308) */
      EXPECT(st != SB_LCP_SOLVED && all_finite(2, z) && all_finite(2, w) &&
                 (s == SB_LCP_LEMKE || strstr(info.message, "row 1")),
             "overflowing w, %s: %s, w = (%g, %g), '%s'", sb_lcp_solver_name((sb_lcp_solver)s),
             sb_lcp_status_name(st), w[0], w[1], info.message);
    }
    sb_lcp_status st = sb_lcp_condition_solve(wk, 2, M, q, z, w, 10, 0, &opt, &info);
    EXPECT(st != SB_LCP_SOLVED && all_finite(2, z) && all_finite(2, w), "overflowing w, conditioned: %s, '%s'",
           sb_lcp_status_name(st), info.message);
  }

  /* Cancellation: w_0 = 3.76 z_0 - 2.38e17 z_1 + 7e-17, w_1 = 8 z_1 - 1. The exact
   * solution z_0 = 2.975e16 / 3.76 is no double: the nearest leaves |w_0| >= ~1, where
   * the plain sum says 0. The conditioned solve (absolute tolerance 1e-9) must not
   * claim it, and reports the true residual. */
  {
    double M[4] = {3.7604717893319783, 0, -2.380587692028171e+17, 8}, q[2] = {7.00531769373228e-17, -1};
    double z[2], w[2], true_res;
    sb_lcp_options opt = sb_lcp_default_options();
    sb_lcp_info info;
    sb_lcp_status st = sb_lcp_condition_solve(wk, 2, M, q, z, w, 10, 0, &opt, &info);
    claim_holds(2, M, q, z, 0, 0, &true_res);
    EXPECT(st != SB_LCP_SOLVED && true_res > 1e-3 && fabs(info.residual - true_res) <= 1e-6 * true_res,
           "cancellation: %s, reported residual %.6g, exact %.6g", sb_lcp_status_name(st), info.residual,
           true_res);
  }

  /* The reported residual is the exact one, rounded, even when two terms of 1.6e282
   * cancel over an entry of q of 0.005 (a compensated sum still lost it): the check
   * accepts the row (its terms are 3e282, the tolerance relative to them) and says
   * what the residual is. */
  {
    double M[4] = {1e300, 0, -1e300, 1}, q[2] = {-0.0049424351677475565, 0};
    double z[2] = {1.5809206225998124e-18, 1.5809206225998124e-18}, w[2], s[2], r;
    int ok = sb_lcp_check(2, M, q, z, w, 1e-12, 1e-12, &r, NULL, s);
    EXPECT(ok && r == 0.0049424351677475565 && w[0] == q[0],
           "cancellation of 1e282 terms: accepted %d, residual %.17g, w0 %.17g", ok, r, w[0]);
    EXPECT(!sb_lcp_check(2, M, q, z, w, 1e-9, 0, &r, NULL, s), "and refused against an absolute 1e-9");
  }

  /* The battery: every solve's claim checked exactly. */
  tally t = {0};
  char label[64];
  static double M[NMAX * NMAX], q[NMAX];
  for (int trial = 0; trial < 600; trial++) {
    int n = 1 + (int)(uniform() * NMAX) % NMAX;
    for (int k = 0; k < n * n; k++) M[k] = adversarial_value();
    if (trial % 2)
      for (int i = 0; i < n; i++) M[i * n + i] = fabs(M[i * n + i]) + 1;
    for (int i = 0; i < n; i++) q[i] = adversarial_value();
    if (trial % 5 == 0) /* a zero row: fixed, or no solution, before any solver */
      for (int j = 0; j < n; j++) M[j * n + trial % n] = 0;
    snprintf(label, sizeof label, "trial %d (n = %d)", trial, n);
    for (int how = 0; how < 8; how++) solve_and_check(wk, n, M, q, how, &t, label);
  }
  printf("adversarial LCPs: %d solved claims, %d answers refused by the final check, %d false claims, %d "
         "non-finite outputs\n",
         t.solved, t.refused_by_check, t.false_claims, t.nonfinite);
  EXPECT(t.false_claims == 0, "%d claims fail the exact check", t.false_claims);
  EXPECT(t.nonfinite == 0, "%d solves returned a non-finite z or w", t.nonfinite);
  /* the battery must exercise both sides: many claims, and answers the check refused */
  EXPECT(t.solved >= 1000 && t.refused_by_check >= 20, "coverage: %d claims, %d refusals", t.solved,
         t.refused_by_check);
  sb_lcp_work_free(wk);
  return test_report("lcp_guarantee");
}

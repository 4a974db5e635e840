/* libFuzzer harness: the .dat LCP reader (sb_lcp_read_dat), then every
 * solver on what it accepted, checking the solvers' promises (softbody/lcp.h)
 * on every result:
 *   - a refused file comes with a message;
 *   - z and w are finite, whatever the status;
 *   - "solved" holds in the original problem: the residual min(z, Mz + q),
 *     recomputed here in long double from the file's M and q, is within the
 *     documented tolerance (with a margin for the rounding of a double
 *     evaluation), and so is the residual the solver reported.
 * Inputs above FUZZ_SOLVE_MAX_N are only read: the solvers are O(n^3). */
#include <math.h>

#include "fuzz_input.h"
#include "lcp.h"

#define FUZZ_SOLVE_MAX_N 64

/* The solver's own tolerance times this margin: a double evaluation of
 * Mz + q may differ from the long double one by a few ulps of the row's
 * magnitude, which the scale already carries. */
#define ROUNDING_MARGIN 4.0

/* max_i |min(z_i, w_i)| / scale_i with w = Mz + q in long double; scale_i
 * = max(1, ||q||inf, |q_i| + sum_j |M_ij z_j|) (lcp.h's tolerance scale).
 * *w_gap: max_i |w_given_i - w_i| / scale_i, how far the returned w is from
 * Mz + q. */
static double scaled_residual(int n, const double *M, const double *q, const double *z, const double *w_given,
                              double *w_gap) {
  long double gap = 0;
  long double qmax = 0, worst = 0;
  for (int i = 0; i < n; i++) qmax = fmaxl(qmax, fabsl((long double)q[i]));
  for (int i = 0; i < n; i++) {
    long double w = q[i], mag = fabsl((long double)q[i]);
    for (int j = 0; j < n; j++) {
      long double t = (long double)M[i + (size_t)j * n] * z[j];
      w += t;
      mag += fabsl(t);
    }
    long double scale = fmaxl(1.0L, fmaxl(qmax, mag));
    long double r = fabsl(fminl((long double)z[i], w)) / scale;
    if (!(r <= worst)) worst = r; /* a NaN r makes worst NaN */
    long double g = fabsl((long double)w_given[i] - w) / scale;
    if (!(g <= gap)) gap = g;
  }
  *w_gap = (double)gap;
  return (double)worst;
}

static void check_result(const char *what, int n, const double *M, const double *q, const double *z,
                         const double *w, sb_lcp_status status, const sb_lcp_info *info, double tol) {
  for (int i = 0; i < n; i++) {
    FUZZ_CHECK(isfinite(z[i]), "%s: z[%d] = %g (status %s)", what, i, z[i], sb_lcp_status_name(status));
    FUZZ_CHECK(isfinite(w[i]), "%s: w[%d] = %g (status %s)", what, i, w[i], sb_lcp_status_name(status));
  }
  FUZZ_CHECK(info->status == status, "%s: returned %s, info says %s", what, sb_lcp_status_name(status),
             sb_lcp_status_name(info->status));
  if (status != SB_LCP_SOLVED) return;
  double w_gap;
  double r = scaled_residual(n, M, q, z, w, &w_gap);
  FUZZ_CHECK(r <= ROUNDING_MARGIN * tol, "%s: solved, but the recomputed scaled residual is %.3g (tolerance %.3g; "
             "reported residual %.3g)", what, r, tol, info->residual);
  FUZZ_CHECK(isfinite(info->residual), "%s: solved with a reported residual %g", what, info->residual);
  FUZZ_CHECK(w_gap <= ROUNDING_MARGIN * tol, "%s: solved, but the returned w is %.3g (scaled) away from Mz + q", what,
             w_gap);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = fuzz_input_file(data, size, ".dat");
  int n = 0;
  double *M = NULL, *q = NULL;
  char err[256];
  if (sb_lcp_read_dat(path, &n, &M, &q, err, sizeof err)) {
    FUZZ_CHECK(err[0], "the reader refused the file without a message");
    FUZZ_CHECK(!M && !q, "the reader refused the file but returned arrays");
    return 0;
  }
  FUZZ_CHECK(n >= 1 && M && q, "the reader accepted n = %d", n);
  for (size_t k = 0; k < (size_t)n * n; k++) FUZZ_CHECK(isfinite(M[k]), "the reader returned M[%zu] = %g", k, M[k]);
  for (int i = 0; i < n; i++) FUZZ_CHECK(isfinite(q[i]), "the reader returned q[%d] = %g", i, q[i]);
  if (n > FUZZ_SOLVE_MAX_N) goto done;

  double z[FUZZ_SOLVE_MAX_N], w[FUZZ_SOLVE_MAX_N];
  sb_lcp_work *work = sb_lcp_work_create(n);
  FUZZ_CHECK(work, "sb_lcp_work_create(%d) failed", n);
  sb_lcp_options opt = sb_lcp_default_options();
  sb_lcp_info info;
  /* each solver alone, cold and (FB, PGS) warm from a guess */
  for (int s = 0; s < SB_LCP_NSOLVERS; s++) {
    for (int warm = 0; warm < 2; warm++) {
      sb_lcp_options o = opt;
      o.warm_start = warm;
      for (int i = 0; i < n; i++) z[i] = warm ? (double)((i * 7 + 3) % 5) : 0.0;
      sb_lcp_status st = sb_lcp_solve_with(work, (sb_lcp_solver)s, n, M, q, z, w, &o, &info);
      char what[64];
      snprintf(what, sizeof what, "sb_lcp_solve_with(%s%s)", sb_lcp_solver_name((sb_lcp_solver)s),
               warm ? ", warm" : "");
      check_result(what, n, M, q, z, w, st, &info, o.tol);
    }
  }
  /* the default chain */
  for (int i = 0; i < n; i++) z[i] = 0;
  sb_lcp_status st = sb_lcp_solve(work, n, M, q, z, w, &opt, &info);
  check_result("sb_lcp_solve", n, M, q, z, w, st, &info, opt.tol);
  /* cusp-lcp's path: Ruiz (and Tikhonov) around the chain; solved is
   * promised in the original variables within max(tol, 1e-9) max(1, |q|inf) */
  for (int tk = 0; tk < 2; tk++) {
    for (int i = 0; i < n; i++) z[i] = 0;
    st = sb_lcp_condition_solve(work, n, M, q, z, w, 10, tk ? 1e-8 : 0.0, &opt, &info);
    check_result(tk ? "sb_lcp_condition_solve(ruiz, tikhonov)" : "sb_lcp_condition_solve(ruiz)", n, M, q, z, w, st,
                 &info, fmax(opt.tol, 1e-9));
  }
  sb_lcp_work_free(work);
done:
  free(M);
  free(q);
  return 0;
}

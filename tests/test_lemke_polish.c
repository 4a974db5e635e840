/* Lemke's answer and round-off (issue 15 item 3): a contact LCP of the
 * 12-section arm sliding down the incline (tests/data/lcp/
 * arm12_sliding_roundoff.dat, n = 90), on which Lemke's answer, with its one
 * re-solve of the support, failed the acceptance test by round-off under
 * every OpenBLAS kernel tried (Sandybridge, Haswell, Nehalem, Prescott:
 * residual a few times 1e-12 in a row whose terms are 1e-2, against the
 * tolerance 1e-12 of max(1, |q|), and the support's M_SS nearly singular), so
 * the chain fell back to FB. Lemke must now answer it itself, and the answer
 * is checked here independently of the library's test: w = M z + q summed
 * in long double, row by row against the row's own terms. Run by CTest
 * under the default kernel and Sandybridge's (lemke_polish_sandybridge). */
#include <float.h>
#include <string.h>

#include "lcp.h"
#include "lcp_scaled_residual.h"
#include "testutil.h"


int main(void) {
  char err[256];
  int n;
  double *M = NULL, *q = NULL, qs;
  if (read_dumped_lcp("arm12_sliding_roundoff.dat", &n, &M, &q, &qs, err, sizeof err)) {
    EXPECT(0, "%s", err);
    return test_report("lemke_polish");
  }
  sb_lcp_work *wk = sb_lcp_work_create(n);
  double *z = calloc(n, sizeof *z), *w = calloc(n, sizeof *w);
  sb_lcp_options opt = sb_lcp_default_options();
  sb_lcp_info info;

  /* Lemke alone: its own answer, made to pass by refinement */
  sb_lcp_status st = sb_lcp_solve_with(wk, SB_LCP_LEMKE, n, M, q, z, w, &opt, &info);
  EXPECT(st == SB_LCP_SOLVED, "lemke alone: %s (%s)", sb_lcp_status_name(st), info.message);
  double r = scaled_residual(n, M, q, z, qs);
  printf("lemke alone: %s, residual %.3g, %.3g of max(|q|, the row's terms) in long double\n",
         sb_lcp_status_name(st), info.residual, r);
  /* the library's tolerance plus the rounding of the long double sums */
  EXPECT(r >= 0 && r <= opt.tol + (n + 2) * LDBL_EPSILON,
         "lemke alone: scaled residual %.3g (z < 0 if -1) above tol %.3g", r, opt.tol);

  /* the default chain answers with its first solver: no fallback */
  memset(z, 0, n * sizeof *z);
  st = sb_lcp_solve(wk, n, M, q, z, w, &opt, &info);
  EXPECT(st == SB_LCP_SOLVED && info.solver == SB_LCP_LEMKE && info.attempts == 1,
         "chain: %s by %s in %d attempts (%s)", sb_lcp_status_name(st), sb_lcp_solver_name(info.solver),
         info.attempts, info.message);
  r = scaled_residual(n, M, q, z, qs);
  EXPECT(r >= 0 && r <= opt.tol + (n + 2) * LDBL_EPSILON,
         "chain: scaled residual %.3g above tol %.3g", r, opt.tol);

  /* the refinement must not claim what is not there: with the tolerance at
   * its floor the answer is either verified or refused with a message */
  opt.tol = SB_LCP_TOL_MIN;
  memset(z, 0, n * sizeof *z);
  st = sb_lcp_solve_with(wk, SB_LCP_LEMKE, n, M, q, z, w, &opt, &info);
  r = scaled_residual(n, M, q, z, qs);
  EXPECT(st != SB_LCP_SOLVED || (r >= 0 && r <= opt.tol + (n + 2) * LDBL_EPSILON),
         "tol %.3g: claimed solved with scaled residual %.3g", opt.tol, r);
  EXPECT(st == SB_LCP_SOLVED || strlen(info.message) > 0, "tol %.3g: refused without a message", opt.tol);

  free(z);
  free(w);
  free(M);
  free(q);
  sb_lcp_work_free(wk);
  return test_report("lemke_polish");
}

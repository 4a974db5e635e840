/* Lemke on a degenerate contact LCP (issue 15 items 3 and 4): a conditioned
 * contact LCP of the 12-section arm sliding down the incline
 * (tests/data/lcp/arm12_sliding_ray.dat, n = 96, 16 contacts), which has a
 * solution, but on which Lemke from zero with its floating-point
 * lexicographic ratio test ended on a secondary ray after 54 pivots under
 * every OpenBLAS kernel tried (Cooperlake, Sandybridge, Haswell, Nehalem,
 * Prescott), so the chain fell back to FB. The pyramid's opposite directions
 * make w_beta_k + w_beta_k' = 2 gamma, so unloaded contacts tie in the ratio
 * test by construction. Lemke must now answer it itself (after a ray it is
 * run again on a perturbed q and its answer finished in the given problem),
 * and the answer is checked here from the data alone: w = M z + q in long
 * double, row by row against the row's own terms. A problem with no solution
 * must still end on a ray, said in the message, not on a claim. Run by CTest
 * under the default kernel and Sandybridge's (lemke_degenerate_sandybridge). */
#include <float.h>
#include <string.h>

#include "lcp.h"
#include "lcp_scaled_residual.h"
#include "testutil.h"


static void test_dumped_ray(void) {
  char err[256];
  int n;
  double *M = NULL, *q = NULL, qs;
  if (read_dumped_lcp("arm12_sliding_ray.dat", &n, &M, &q, &qs, err, sizeof err)) {
    EXPECT(0, "%s", err);
    return;
  }
  sb_lcp_work *wk = sb_lcp_work_create(n);
  double *z = calloc(n, sizeof *z), *w = calloc(n, sizeof *w);
  sb_lcp_options opt = sb_lcp_default_options();
  sb_lcp_info info;

  sb_lcp_status st = sb_lcp_solve_with(wk, SB_LCP_LEMKE, n, M, q, z, w, &opt, &info);
  double r = scaled_residual(n, M, q, z, qs);
  printf("lemke alone: %s in %d pivots, %.3g of max(|q|, the row's terms) in long double (%s)\n",
         sb_lcp_status_name(st), info.iterations, r, info.message);
  EXPECT(st == SB_LCP_SOLVED, "lemke alone: %s (%s)", sb_lcp_status_name(st), info.message);
  EXPECT(r >= 0 && r <= opt.tol + (n + 2) * LDBL_EPSILON,
         "lemke alone: scaled residual %.3g (z < 0 if -1) above tol %.3g", r, opt.tol);
  /* a contact LCP's answer: some contact carries load */
  double fn = 0;
  for (int a = 0; a < n / 6; a++) fn += z[6 * a];
  EXPECT(fn > 0, "lemke alone: no normal impulse at all (sum %.3g)", fn);

  /* the default chain answers with its first solver: no fallback */
  memset(z, 0, n * sizeof *z);
  st = sb_lcp_solve(wk, n, M, q, z, w, &opt, &info);
  EXPECT(st == SB_LCP_SOLVED && info.solver == SB_LCP_LEMKE && info.attempts == 1,
         "chain: %s by %s in %d attempts (%s)", sb_lcp_status_name(st), sb_lcp_solver_name(info.solver),
         info.attempts, info.message);
  r = scaled_residual(n, M, q, z, qs);
  EXPECT(r >= 0 && r <= opt.tol + (n + 2) * LDBL_EPSILON, "chain: scaled residual %.3g above tol %.3g", r,
         opt.tol);
  free(z);
  free(w);
  free(M);
  free(q);
  sb_lcp_work_free(wk);
}

/* No solution: w = -z - 1 >= 0 cannot hold for z >= 0 (M = -I, q = -e; a
 * perturbed q keeps it infeasible). Lemke must end on its ray, and say so. */
static void test_infeasible_ray(void) {
  enum { N = 3 };
  double M[N * N] = {-1, 0, 0, 0, -1, 0, 0, 0, -1}, q[N] = {-1, -1, -1}, z[N] = {0}, w[N];
  sb_lcp_work *wk = sb_lcp_work_create(N);
  sb_lcp_options opt = sb_lcp_default_options();
  sb_lcp_info info;
  sb_lcp_status st = sb_lcp_solve_with(wk, SB_LCP_LEMKE, N, M, q, z, w, &opt, &info);
  printf("infeasible: %s (%s)\n", sb_lcp_status_name(st), info.message);
  EXPECT(st == SB_LCP_RAY, "infeasible: %s, not ray (%s)", sb_lcp_status_name(st), info.message);
  EXPECT(strstr(info.message, "perturbed") != NULL, "infeasible: the message '%s' does not say the perturbed q was tried",
         info.message);
  for (int i = 0; i < N; i++) EXPECT(isfinite(z[i]) && isfinite(w[i]), "infeasible: z or w not finite in row %d", i);
  sb_lcp_work_free(wk);
}

int main(void) {
  test_dumped_ray();
  test_infeasible_ray();
  return test_report("lemke_degenerate");
}

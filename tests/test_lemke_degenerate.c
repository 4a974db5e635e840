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

/* One ulp of relative noise on x, from a fixed xorshift stream. */
static double ulp_noise(unsigned long long *h, double x) {
  *h ^= *h << 13;
  *h ^= *h >> 7;
  *h ^= *h << 17;
  double u = (double)(*h >> 11) / 9007199254740992.0 * 2 - 1;
  return x * (1 + DBL_EPSILON * u);
}

/* The first contact LCP of a 10-element rod lying along a plane
 * (tests/data/lcp/rod10_lying.dat, n = 60: bench/scenes/rod_plane.xml with
 * sections = 10, step 1, before scaling), with the contact solve's Tikhonov
 * 1e-10 on the normal and gamma diagonals. Its answers are many: the
 * sticking friction along the rod is statically indeterminate and opposite
 * pyramid directions may be loaded together. Solved from zero by the
 * default chain (Lemke first), then again with q, and then M, carrying one
 * ulp of noise in every entry (8 streams each): the answer must be the same
 * up to round-off (1e-9 of its largest entry) and so must its support (the
 * entries above 1e-9 of it). Lemke's floating-point ratio test broke the
 * problem's ties by the tableau's round-off and moved to another vertex
 * under one ulp (about a third of the largest impulse apart). */
static void test_rod_ties(void) {
  char err[256];
  int n;
  double *M = NULL, *q = NULL, qs;
  if (read_dumped_lcp("rod10_lying.dat", &n, &M, &q, &qs, err, sizeof err)) {
    EXPECT(0, "%s", err);
    return;
  }
  enum { BS = 6, STREAMS = 8 };
  EXPECT(n == 60, "rod10_lying.dat: n = %d, not 60", n);
  for (int a = 0; a < n / BS; a++) {
    M[(size_t)(a * BS) * n + a * BS] += 1e-10;
    M[(size_t)(a * BS + BS - 1) * n + a * BS + BS - 1] += 1e-10;
  }
  sb_lcp_work *wk = sb_lcp_work_create(n);
  double *z0 = calloc(n, sizeof *z0), *z = calloc(n, sizeof *z), *w = calloc(n, sizeof *w);
  double *Mp = malloc((size_t)n * n * sizeof *Mp), *qp = malloc(n * sizeof *qp);
  sb_lcp_options opt = sb_lcp_default_options();
  sb_lcp_info info;
  sb_lcp_status st = sb_lcp_solve(wk, n, M, q, z0, w, &opt, &info);
  double r = scaled_residual(n, M, q, z0, qs), zmax = 0;
  EXPECT(st == SB_LCP_SOLVED && r >= 0 && r <= opt.tol + (n + 2) * LDBL_EPSILON,
         "rod ties: %s, scaled residual %.3g (%s)", sb_lcp_status_name(st), r, info.message);
  for (int i = 0; i < n; i++) zmax = fmax(zmax, z0[i]);
  EXPECT(zmax > 0, "rod ties: no impulse at all");
  int moved = 0, support = 0;
  double worst = 0;
  for (int which = 0; which < 2; which++)
    for (int s = 1; s <= STREAMS; s++) {
      unsigned long long h = 88172645463325252ULL + 7919ULL * s;
      memcpy(Mp, M, (size_t)n * n * sizeof *Mp);
      memcpy(qp, q, n * sizeof *qp);
      if (which == 0)
        for (int i = 0; i < n; i++) qp[i] = ulp_noise(&h, q[i]);
      else
        for (size_t k = 0; k < (size_t)n * n; k++) Mp[k] = ulp_noise(&h, M[k]);
      memset(z, 0, n * sizeof *z);
      st = sb_lcp_solve(wk, n, Mp, qp, z, w, &opt, &info);
      EXPECT(st == SB_LCP_SOLVED, "rod ties, %s stream %d: %s (%s)", which ? "M" : "q", s,
             sb_lcp_status_name(st), info.message);
      double d = 0;
      int differ = 0;
      for (int i = 0; i < n; i++) {
        d = fmax(d, fabs(z[i] - z0[i]));
        differ += (z[i] > 1e-9 * zmax) != (z0[i] > 1e-9 * zmax);
      }
      worst = fmax(worst, d / zmax);
      moved += d > 1e-9 * zmax;
      support += differ > 0;
    }
  printf("rod ties: %d of %d one-ulp perturbations moved the answer, %d its support (largest change %.3g of "
         "max z)\n", moved, 2 * STREAMS, support, worst);
  EXPECT(moved == 0, "rod ties: %d of %d one-ulp perturbations moved the answer by more than 1e-9 of its "
         "largest entry (up to %.3g)", moved, 2 * STREAMS, worst);
  EXPECT(support == 0, "rod ties: %d of %d one-ulp perturbations changed the answer's support", support,
         2 * STREAMS);
  free(z0);
  free(z);
  free(w);
  free(Mp);
  free(qp);
  free(M);
  free(q);
  sb_lcp_work_free(wk);
}

int main(void) {
  test_dumped_ray();
  test_infeasible_ray();
  test_rod_ties();
  return test_report("lemke_degenerate");
}

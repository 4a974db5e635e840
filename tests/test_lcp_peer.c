/* The peer test set (../shared/reference/lcp, from Siconos numerics): every
 * file is read, checked against Siconos' own reader, and solved by each cusp
 * solver alone and by the default chain. Whatever a solver calls "solved"
 * is verified here from the file data (w = Mz + q recomputed by this test).
 * Which problems have a solution is established without cusp's code: by
 * enumerating complementary bases (n <= 12) or by Siconos' Lemke with its
 * answer verified (larger n). Every problem known solvable must be solved
 * by cusp's Lemke. Data directory: CUSP_LCP_DATA (environment, else the
 * compile definition). */
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lcp.h"
#include "numerics/LCP_Solvers.h"
#include "numerics/LinearComplementarityProblem.h"
#include "numerics/NumericsMatrix.h"
#include "numerics/SolverOptions.h"
#include "numerics/lcp_cst.h"
#include "peer_set.h"
#include "testutil.h"

#ifndef CUSP_LCP_DATA
#define CUSP_LCP_DATA "tests/data/lcp"
#endif

#define NFILES PEER_NFILES

#define ENUM_MAX_N 12     /* 2^12 bases at most */
#define RES_TOL 1e-9      /* ||min(z, w)||inf <= RES_TOL * max(1, ||q||inf) */
#define ZNEG_TOL 1e-12    /* z >= -ZNEG_TOL * max(1, ||z||inf) */

enum { CFG_FB, CFG_LEMKE, CFG_PGS, CFG_CHAIN, NCFG };
static const char *const cfg_name[NCFG] = {"fb", "lemke", "pgs", "chain"};

/* Solvable problems on which Lemke's method itself (covering vector e)
 * ends on a secondary ray, whatever the tie-breaking: lcp_CPS_3, the
 * bimatrix game M = [0 A; B' 0] with A, B > 0 and q = -e. z0 enters at 1
 * with every w_i = 0; whichever w_r leaves, its complement z_r has zero
 * entries in the rows of r's own block (z0's row among them) and positive
 * ones in the other block, so nothing blocks it. */
static int lemke_ray_case(const char *file) { return !strcmp(file, "lcp_CPS_3.dat"); }

/* A candidate z checked from the data alone: w = Mz + q, residual, signs,
 * complementarity. Returns 1 when z solves the LCP; why[] says what fails. */
static int verify(int n, const double *M, const double *q, const double *z, double *residual, char *why,
                  size_t why_size) {
  double *w = malloc(sizeof(double) * n);
  double qinf = 0, zinf = 0, winf = 0, res = 0, zmin = INFINITY, wmin = INFINITY, ztw = 0;
  for (int i = 0; i < n; i++) {
    double s = q[i];
    for (int j = 0; j < n; j++) s += M[i + (size_t)j * n] * z[j];
    w[i] = s;
  }
  int finite = 1;
  for (int i = 0; i < n; i++) {
    finite &= isfinite(z[i]) && isfinite(w[i]);
    qinf = fmax(qinf, fabs(q[i]));
    zinf = fmax(zinf, fabs(z[i]));
    winf = fmax(winf, fabs(w[i]));
    res = fmax(res, fabs(fmin(z[i], w[i])));
    zmin = fmin(zmin, z[i]);
    wmin = fmin(wmin, w[i]);
    ztw += z[i] * w[i];
  }
  free(w);
  double scale = fmax(1, qinf), zscale = fmax(1, zinf);
  /* Each product z_i w_i has one factor within the tolerances above. */
  double ztw_tol = n * RES_TOL * zscale * fmax(scale, winf);
  if (residual) *residual = finite ? res : INFINITY;
  if (!finite) snprintf(why, why_size, "z or w not finite");
  else if (res > RES_TOL * scale) snprintf(why, why_size, "||min(z, w)||inf = %.3g > %.3g", res, RES_TOL * scale);
  else if (zmin < -ZNEG_TOL * zscale) snprintf(why, why_size, "min z = %.3g", zmin);
  else if (wmin < -RES_TOL * scale) snprintf(why, why_size, "min w = %.3g", wmin);
  else if (fabs(ztw) > ztw_tol) snprintf(why, why_size, "|z'w| = %.3g > %.3g", fabs(ztw), ztw_tol);
  else return 1;
  return 0;
}

/* Brute force: for each basis B solve M_BB z_B = -q_B (z = 0 off B) and
 * verify. Stops at the first solution. */
static int enumerate_bases(int n, const double *M, const double *q) {
  double *A = malloc(sizeof(double) * n * n), *z = malloc(sizeof(double) * n);
  lapack_int *ipiv = malloc(sizeof(lapack_int) * n);
  int idx[ENUM_MAX_N], found = 0;
  for (unsigned long mask = 0; mask < (1ul << n) && !found; mask++) {
    int k = 0;
    for (int i = 0; i < n; i++)
      if (mask >> i & 1) idx[k++] = i;
    memset(z, 0, sizeof(double) * n);
    if (k > 0) {
      for (int c = 0; c < k; c++) {
        for (int r = 0; r < k; r++) A[r + c * k] = M[idx[r] + (size_t)idx[c] * n];
      }
      double b[ENUM_MAX_N];
      for (int r = 0; r < k; r++) b[r] = -q[idx[r]];
      if (LAPACKE_dgesv(LAPACK_COL_MAJOR, k, 1, A, k, ipiv, b, k) != 0) continue; /* singular M_BB */
      for (int r = 0; r < k; r++) z[idx[r]] = b[r];
    }
    char why[128];
    found = verify(n, M, q, z, NULL, why, sizeof why);
  }
  free(A);
  free(z);
  free(ipiv);
  return found;
}

/* Siconos' lexicographic Lemke on the dense problem; its answer counts only
 * when verify() accepts it. Returns 1 (verified), 0 (no verified answer). */
static int siconos_lemke(int n, const double *M, const double *q, int *info_out, double *residual) {
  NumericsMatrix *Mn = NM_create(NM_DENSE, n, n);
  memcpy(Mn->matrix0, M, sizeof(double) * n * n);
  double *qc = malloc(sizeof(double) * n), *z = calloc(n, sizeof(double)), *w = calloc(n, sizeof(double));
  memcpy(qc, q, sizeof(double) * n);
  LinearComplementarityProblem problem = {n, Mn, qc};
  SolverOptions *options = solver_options_create(SICONOS_LCP_LEMKE);
  options->iparam[SICONOS_IPARAM_MAX_ITER] = 100 * n + 1000;
  int info = -1;
  lcp_lexicolemke(&problem, z, w, &info, options);
  char why[128];
  int ok = verify(n, M, q, z, residual, why, sizeof why);
  *info_out = info;
  solver_options_delete(options);
  free(options); /* Siconos 4.4's delete frees the members, not the struct */
  NM_free(Mn);
  free(qc);
  free(z);
  free(w);
  return ok;
}

/* Our reader against Siconos' (file -> NumericsMatrix -> dense): identical. */
static void compare_with_siconos_reader(const char *path, int n, const double *M, const double *q) {
  LinearComplementarityProblem *p = newLCP();
  linearComplementarity_newFromFilename(p, path);
  EXPECT(p->size == n && p->M && p->q, "%s: Siconos reads n = %d, cusp %d", path, p->size, n);
  if (p->size == n && p->M && p->q) {
    NumericsMatrix *dense = NM_create(NM_DENSE, n, n);
    NM_to_dense(p->M, dense);
    int same = 1;
    for (int k = 0; k < n * n; k++) same &= dense->matrix0[k] == M[k];
    for (int i = 0; i < n; i++) same &= p->q[i] == q[i];
    EXPECT(same, "%s: M or q differs from Siconos' reading", path);
    NM_free(dense);
  }
  freeLinearComplementarityProblem(p);
}

int main(void) {
  const char *dir = getenv("CUSP_LCP_DATA");
  if (!dir || !*dir) dir = CUSP_LCP_DATA;
  printf("peer LCP set from %s\n", dir);
  printf("%-36s %3s  %-22s", "file", "n", "known solvable");
  for (int c = 0; c < NCFG; c++) printf(" | %-26s", cfg_name[c]);
  printf(" | siconos lemke\n");

  sb_lcp_options opt = sb_lcp_default_options();
  int nknown = 0, nread = 0;
  for (int f = 0; f < NFILES; f++) {
    char path[1024], err[256];
    snprintf(path, sizeof path, "%s/%s", dir, peer_files[f]);
    int n;
    double *M, *q;
    int rc = sb_lcp_read_dat(path, &n, &M, &q, err, sizeof err);
    EXPECT(rc == 0, "cannot read %s: %s", path, err);
    if (rc) continue;
    nread++;
    compare_with_siconos_reader(path, n, M, q);

    /* Independent knowledge of solvability. Siconos' Lemke runs on every
     * file for the table; for n <= 12 only the enumeration decides. */
    int sic_info;
    double sic_res;
    int sic_ok = siconos_lemke(n, M, q, &sic_info, &sic_res);
    int known;
    const char *how;
    if (n <= ENUM_MAX_N) {
      known = enumerate_bases(n, M, q);
      how = known ? "yes (enumeration)" : "no basis (enumeration)";
    } else {
      known = sic_ok;
      how = known ? "yes (siconos lemke)" : "unknown";
    }
    nknown += known;
    printf("%-36s %3d  %-22s", peer_files[f], n, how);

    sb_lcp_work *work = sb_lcp_work_create(n);
    double *z = malloc(sizeof(double) * n), *w = malloc(sizeof(double) * n);
    sb_lcp_status status[NCFG];
    for (int c = 0; c < NCFG; c++) {
      sb_lcp_info info;
      memset(z, 0, sizeof(double) * n);
      status[c] = c == CFG_CHAIN ? sb_lcp_solve(work, n, M, q, z, w, &opt, &info)
                                 : sb_lcp_solve_with(work, (sb_lcp_solver)c, n, M, q, z, w, &opt, &info);
      double res;
      char why[128] = "";
      int ok = verify(n, M, q, z, &res, why, sizeof why);
      int finite = 1;
      for (int i = 0; i < n; i++) finite &= isfinite(z[i]) && isfinite(w[i]);
      EXPECT(finite, "%s/%s: non-finite z or w (status %s)", peer_files[f], cfg_name[c], sb_lcp_status_name(status[c]));
      EXPECT(info.status == status[c], "%s/%s: info.status differs from the return value", peer_files[f], cfg_name[c]);
      if (status[c] == SB_LCP_SOLVED) {
        EXPECT(ok, "%s/%s claims solved, but %s", peer_files[f], cfg_name[c], why);
        EXPECT(fabs(info.residual - res) <= 1e-12 * fmax(1, tu_maxabs(q, n)),
               "%s/%s: info.residual %.3g, recomputed %.3g", peer_files[f], cfg_name[c], info.residual, res);
      } else {
        EXPECT(info.message[0], "%s/%s: %s without a message", peer_files[f], cfg_name[c],
               sb_lcp_status_name(status[c]));
      }
      if (c != CFG_CHAIN)
        EXPECT(info.solver == (sb_lcp_solver)c, "%s/%s: info.solver is %s", peer_files[f], cfg_name[c],
               sb_lcp_solver_name(info.solver));
      char cell[64];
      snprintf(cell, sizeof cell, "%s%s%s %d %.1e", sb_lcp_status_name(status[c]), c == CFG_CHAIN ? "/" : "",
               c == CFG_CHAIN ? sb_lcp_solver_name(info.solver) : "", info.iterations, res);
      printf(" | %-26s", cell);
    }
    printf(" | info %d, %s %.1e\n", sic_info, sic_ok ? "verified" : "NOT a solution", sic_res);

    if (known && lemke_ray_case(peer_files[f])) {
      EXPECT(status[CFG_LEMKE] == SB_LCP_RAY, "%s: Lemke must end on its ray here, says %s", peer_files[f],
             sb_lcp_status_name(status[CFG_LEMKE]));
      EXPECT(status[CFG_CHAIN] == SB_LCP_SOLVED, "%s: solvable, the chain says %s", peer_files[f],
             sb_lcp_status_name(status[CFG_CHAIN]));
    } else if (known) {
      EXPECT(status[CFG_LEMKE] == SB_LCP_SOLVED, "%s: known solvable, cusp Lemke says %s", peer_files[f],
             sb_lcp_status_name(status[CFG_LEMKE]));
    }
    /* The chain runs FB then Lemke cold, as alone: it cannot do worse. */
    if (status[CFG_FB] == SB_LCP_SOLVED || status[CFG_LEMKE] == SB_LCP_SOLVED)
      EXPECT(status[CFG_CHAIN] == SB_LCP_SOLVED, "%s: FB or Lemke solves alone, the chain says %s", peer_files[f],
             sb_lcp_status_name(status[CFG_CHAIN]));
    free(z);
    free(w);
    sb_lcp_work_free(work);
    free(M);
    free(q);
  }
  EXPECT(nread == NFILES, "read %d of %d peer files", nread, NFILES);
  printf("%d of %d problems known solvable\n", nknown, NFILES);
  return test_report("lcp_peer");
}

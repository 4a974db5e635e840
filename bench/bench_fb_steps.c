/* The cost of one step of the Fischer-Burmeister fallback on a large
 * contact LCP, formed against on the operator (issue 15, item 1):
 *
 *   bench-fb-steps [--sections N] [--steps K] [--rounds R]
 *
 * The lying tiled rope (bench/scenes/rope_plane_tiled.xml, rod0.sections =
 * N, default 48) runs K steps (default 3: its early settling, where the
 * kept contacts are many) with lcp_matrix stored, so that the last step's
 * conditioned LCP (As, bs) is there formed as well as on the operator. At a
 * point (z, w) near the LCP's answer (as FB's iterates near it) and a fixed
 * Phi, each of FB's two linear steps is taken both ways:
 *   newton          H d = -Phi, H = diag(a) + diag(b) M: formed, H built
 *                   from As and LU-factored (dgetrf, dgetrs), as solve_fb
 *                   does on a stored M; on the operator, GMRES through W
 *                   (fb_krylov.c) to a relative residual of 1e-10
 *   least_squares   (H^T H + mu I) d = -H^T Phi, mu = 1e-6 of H's largest
 *                   diagonal entry squared: formed, H^T H by dsyrk and
 *                   Cholesky; on the operator, CGLS
 * Rounds interleave the four; each reports the median seconds with the
 * quartiles, and each answer's relative residual measured on the formed
 * matrices (|H d + Phi| / |Phi|; for least squares the objective's excess
 * over the Cholesky answer's, relative to |Phi|^2). Exit status 1 when a
 * step on the operator is not finite or is off its formed counterpart
 * (Newton: residual above 1e-6, where LU's is below 1e-8; least squares:
 * objective above |Phi|^2). Output: one JSON object on stdout. */
#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../plugin/pipeline.h"
#include "../softbody/lcp_internal.h"
#include "bench_util.h"
#include "plugin_testutil.h"

#ifndef CUSP_SOURCE_DIR
#define CUSP_SOURCE_DIR "."
#endif

enum { NEWTON_FORMED, NEWTON_OPERATOR, LSQ_FORMED, LSQ_OPERATOR, NJOBS };
static const char *const job_name[NJOBS] = {"newton_formed", "newton_operator", "least_squares_formed",
                                            "least_squares_operator"};

typedef struct {
  int n, nk;
  const double *As, *phi, *z, *w, *a, *b;
  double mu;
  sb_lcp_work *wk;
  double *H, *F, *d, *g;
  int *ipiv;
} problem;

static void run(problem *p, int job) {
  int n = p->n;
  double *H = p->H, *F = p->F, *d = p->d;
  switch (job) {
    case NEWTON_FORMED:
    case LSQ_FORMED:
      for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) H[(size_t)j * n + i] = p->b[i] * p->As[(size_t)j * n + i] + (i == j ? p->a[i] : 0);
      if (job == NEWTON_FORMED) {
        memcpy(F, H, sizeof(double) * n * n);
        for (int i = 0; i < n; i++) d[i] = -p->phi[i];
        LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, n, n, F, n, p->ipiv);
        LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, 'N', n, 1, F, n, p->ipiv, d, n);
      } else {
        cblas_dgemv(CblasColMajor, CblasTrans, n, n, -1.0, H, n, p->phi, 1, 0.0, d, 1);
        cblas_dsyrk(CblasColMajor, CblasLower, CblasTrans, n, n, 1.0, H, n, 0.0, F, n);
        for (int i = 0; i < n; i++) F[(size_t)i * n + i] += p->mu;
        LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', n, F, n);
        LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'L', n, 1, F, n, d, n);
      }
      break;
    case NEWTON_OPERATOR:
      sb_fb_krylov_jacobian(p->wk, n, p->z, p->w);
      sb_fb_krylov_newton(p->wk, n, p->phi, 1e-10, d);
      break;
    default:
      sb_fb_krylov_jacobian(p->wk, n, p->z, p->w);
      sb_fb_krylov_least_squares(p->wk, n, p->phi, p->mu, d);
  }
}

/* |H d + Phi|^2 (+ mu |d|^2 for least squares), H formed from As. */
static double objective(const problem *p, const double *d, int lsq) {
  int n = p->n;
  double s = 0;
  for (int i = 0; i < n; i++) {
    double r = p->phi[i] + p->a[i] * d[i], m = 0;
    for (int j = 0; j < n; j++) m += p->As[(size_t)j * n + i] * d[j];
    r += p->b[i] * m;
    s += r * r + (lsq ? p->mu * d[i] * d[i] : 0);
  }
  return s;
}

int main(int argc, char **argv) {
  int sections = 48, steps = 3, rounds = 7;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--sections") && i + 1 < argc) sections = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--steps") && i + 1 < argc) steps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: bench-fb-steps [--sections N] [--steps K] [--rounds R]\n");
      return 2;
    }
  }
  if (sections < 2 || steps < 1 || rounds < 1) {
    fprintf(stderr, "bench-fb-steps: --sections must be >= 2, --steps and --rounds >= 1\n");
    return 2;
  }
  char sec[32];
  snprintf(sec, sizeof sec, "%d", sections);
  cusp_override ov[2] = {{"rod0", "sections", sec}, {"rod0", "lcp_matrix", "stored"}};
  mjModel *m = load(CUSP_SOURCE_DIR "/bench/scenes/rope_plane_tiled.xml", ov, 2);
  mjData *d = m ? attach(m) : NULL;
  if (!d) {
    printf("{\"benchmark\": \"fb_steps\", \"completed\": false, \"error\": \"the scene did not load\"}\n");
    return 1;
  }
  for (int k = 0; k < steps; k++) mj_step(m, d);
  cusp_runtime *rt = cusp_runtime_of(m, d);
  int n = 0;
  const double *A, *b, *As, *bs;
  if (rt) sb_contact_lcp(rt->P, &n, &A, &b, &As, &bs);
  const sb_lcp_entries *ce = rt && n > 0 ? sb_contact_conditioned_entries(rt->P) : NULL;
  if (!ce) {
    printf("{\"benchmark\": \"fb_steps\", \"completed\": false, \"error\": \"no contact LCP after %d steps\"}\n", steps);
    finish(m, d);
    return 1;
  }
  const sb_kept_op_conditioned *cd = ce->ctx;
  int bsz = cd->op->r + 2, nk = n / bsz;
  int *blocks = malloc(sizeof(int) * nk);
  for (int c = 0; c < nk; c++) blocks[c] = bsz;
  sb_lcp_entries ca = *ce;
  ca.apply = sb_kept_op_conditioned_apply;
  ca.apply_bound = sb_kept_op_conditioned_apply_bound;
  ca.apply_transposed = sb_kept_op_conditioned_apply_transposed;
  problem p = {.n = n, .nk = nk, .As = As};
  double *vec = malloc(sizeof(double) * 8 * n);
  double *z = vec, *w = z + n, *phi = w + n, *a = phi + n, *bb = a + n, *dref = bb + n;
  p.d = dref + n;
  p.g = p.d + n;
  /* the point: the LCP's answer (Lemke, from zero) with each z_i and w_i moved by up to 1e-3 of
   * the answer's largest entry, as an FB iterate near it; Phi random */
  sb_lcp_work *lw = sb_lcp_work_create(n);
  sb_lcp_options lo = sb_lcp_default_options();
  lo.nblock = nk;
  lo.block = blocks;
  lo.friction_blocks = 1;
  sb_lcp_info linfo;
  memset(z, 0, sizeof(double) * n);
  sb_lcp_solve(lw, n, As, bs, z, w, &lo, &linfo);
  sb_lcp_work_free(lw);
  double zmax = 0;
  for (int i = 0; i < n; i++) zmax = fmax(zmax, fmax(fabs(z[i]), fabs(w[i])));
  unsigned long long seed = 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < n; i++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    double u1 = (double)((seed >> 11) & 0xFFFFF) / 0x100000, u2 = (double)((seed >> 31) & 0xFFFFF) / 0x100000;
    z[i] = fmax(0, z[i] + 1e-3 * zmax * (u1 - 0.5));
    w[i] = fmax(0, w[i] + 1e-3 * zmax * (u2 - 0.5));
    phi[i] = 2 * u1 - 1;
    sb_fb_coefficients(z[i], w[i], &a[i], &bb[i]);
  }
  p.z = z, p.w = w, p.phi = phi, p.a = a, p.b = bb;
  p.H = malloc(sizeof(double) * n * n);
  p.F = malloc(sizeof(double) * n * n);
  p.ipiv = malloc(sizeof(int) * n);
  p.wk = sb_lcp_work_create(n);
  p.wk->entries = &ca;
  p.wk->fric_block = blocks;
  p.wk->fric_nblock = nk;
  sb_fb_krylov_jacobian(p.wk, n, z, w);
  p.mu = 1e-6 * sb_fb_krylov_hth_scale(p.wk, n);

  /* the answers, checked on the formed matrices */
  double phi2 = cblas_ddot(n, phi, 1, phi, 1), quality[NJOBS];
  int gmres_iterations = 0, ok = 1;
  for (int job = 0; job < NJOBS; job++) {
    int lsq = job >= LSQ_FORMED;
    run(&p, job);
    if (job == NEWTON_OPERATOR) gmres_iterations = p.wk->krylov_iterations;
    double f = objective(&p, p.d, lsq);
    if (job == LSQ_FORMED) memcpy(dref, p.d, sizeof(double) * n);
    quality[job] = lsq ? (f - objective(&p, dref, 1)) / phi2 : sqrt(f / phi2);
    if (!isfinite(f)) ok = 0;
  }
  if (quality[NEWTON_FORMED] < 1e-8 && !(quality[NEWTON_OPERATOR] <= 1e-6)) ok = 0;
  if (!(quality[LSQ_OPERATOR] <= 1)) ok = 0;

  double *t = malloc(sizeof(double) * rounds * NJOBS);
  for (int r = 0; r < rounds; r++)
    for (int job = 0; job < NJOBS; job++) {
      fprintf(stderr, "bench-fb-steps: round %d/%d, %s\r", r + 1, rounds, job_name[job]);
      double t0 = now_s();
      run(&p, job);
      t[job * rounds + r] = now_s() - t0;
    }
  fprintf(stderr, "\n");
  char cpu[128];
  cpu_model(cpu, sizeof cpu);
  printf("{\"benchmark\": \"fb_steps\", \"cpu\": \"%s\", \"scene\": \"bench/scenes/rope_plane_tiled.xml\", "
         "\"sections\": %d, \"steps\": %d, \"n\": %d, \"kept\": %d, \"rank_bound\": %d, \"rounds\": %d, "
         "\"gmres_iterations\": %d, \"jobs\": {", cpu, sections, steps, n, nk, 3 * nk + 1, rounds, gmres_iterations);
  for (int job = 0; job < NJOBS; job++) {
    double *x = t + job * rounds;
    qsort(x, rounds, sizeof(double), cmp_double);
    printf("%s\"%s\": {\"median_s\": %.6g, \"q1_s\": %.6g, \"q3_s\": %.6g, \"%s\": %.3g}", job ? ", " : "",
           job_name[job], quantile(x, rounds, 0.5), quantile(x, rounds, 0.25), quantile(x, rounds, 0.75),
           job >= LSQ_FORMED ? "objective_excess" : "relative_residual", quality[job]);
  }
  printf("}, \"completed\": %s}\n", ok ? "true" : "false");
  free(t);
  free(p.H);
  free(p.F);
  free(p.ipiv);
  free(vec);
  free(blocks);
  sb_lcp_work_free(p.wk);
  finish(m, d);
  return ok ? 0 : 1;
}

/* cusp's LCP solvers against Siconos numerics 4.4 on the same matrices.
 *
 *   bench-lcp [--quick] [--tsv-file FILE] [--json-only] [--peer-dir DIR]
 *             [--batches R] [--batch-ms T] [--verbose-siconos]
 *
 * Solvers: cusp's FB (semismooth Newton, Fischer-Burmeister), Lemke and PGS
 * each alone (sb_lcp_solve_with) and the default chain FB -> Lemke -> PGS
 * (sb_lcp_solve); Siconos' lcp_lexicolemke, lcp_newton_FB (Newton with line
 * search on Fischer-Burmeister) and lcp_pgs (scalar projected Gauss-Seidel).
 * On contact LCPs cusp's PGS and chain get the per-contact blocks of size
 * r + 2 (opt.nblock / opt.block), as sb_contact_solve gives them.
 *
 * Problems:
 *   peer     the 20 files of ../shared/reference/lcp (Siconos' own test set),
 *            read by sb_lcp_read_dat;
 *   contact  LCPs assembled by sb_contact_solve for the scenes of
 *            tests/contact_scenes.h with m = 1 .. 64 contacts and r = 4:
 *              block_plane     rigid box on the flat plane, mu 0.5
 *              rod_plane       floating soft rod (PCS) on the flat plane, mu 0.5
 *              incline20_stick box on a 20 deg incline, mu 0.5 (sticks)
 *              incline35_slide box on a 35 deg incline, mu 0.5 (slides)
 *            each twice: "unconditioned" = the raw LCP (A, b), all m contacts,
 *            n = m (r + 2) (rank selection, Ruiz and Tikhonov off); and
 *            "conditioned" = the LCP sb_contact_solve solves with its default
 *            options (A_conditioned, b_conditioned: after rank selection,
 *            Ruiz and Tikhonov; n = kept (r + 2)).
 * Every solver runs on the very same (M, q). For the conditioned cases the
 * whole sb_contact_solve (assembly, conditioning, solve, proximal re-solve;
 * cold start) is timed as well ("pipeline").
 *
 * Verification: every answer of every solver is checked here from (M, q):
 * w = M z + q recomputed, residual ||min(z, w)||inf; solved means finite and
 * residual <= 1e-9 max(1, ||q||inf), whatever the solver says. Internal
 * inconsistencies make the exit status 1 (after the JSON is printed):
 * a cusp solver that says "solved" for an answer that fails this check, a
 * non-finite z or w from cusp, info.status != the return value, info.residual
 * != the recomputed residual (for solved answers), a timed repetition that
 * does not reproduce the checked answer bit for bit, an LCP whose size does
 * not match its contacts, an unreadable peer file. Siconos answers that fail
 * the check are counted (siconos_false_claims when it reported success), not
 * errors of this program.
 *
 * Timing (as bench-dynamics): each (problem, solver) pair is a job with its
 * own workspace. One untimed checked call, one calibration call, then
 * batches of K calls with K chosen so that a batch lasts about --batch-ms;
 * the R batches are interleaved round-robin over all jobs (one untimed call
 * before each batch), so load bursts from other processes spread over all
 * solvers. Per-call time of each batch; median, quartiles, min, max over the
 * batches. A job that fails verification, or whose single call exceeds
 * 100 ms, gets 3 batches of one call (without the untimed call when slow);
 * a slow failure is timed by its checked call alone (batches = 1). Every call starts from z = 0 (the
 * memset is inside the timed region for all solvers). Siconos keeps its
 * Newton workspace between calls (iparam PREALLOC), cusp its sb_lcp_work.
 *
 * Siconos settings: tolerance 1e-12 (its own error measure), Lemke at most
 * 100 n + 1000 pivots, Newton-FB 1000 iterations, PGS 10000 sweeps (cusp's
 * default sweep limit). Siconos' PGS divides by the diagonal: it refuses the
 * contact LCPs, whose slack rows (gamma) have a zero diagonal.
 *
 * Output: one JSON object on stdout; progress on stderr (none with
 * --json-only). Siconos' own printing is silenced: its stdout goes to
 * /dev/null (the JSON is written on a duplicate of the original stdout);
 * --verbose-siconos sends it to stderr and turns its verbosity on.
 * --tsv-file FILE writes one row per (contact case, solver) for
 * bench/plot_lcp.sh. --quick: m in {1, 4, 16}, 3 batches of one call
 * (smoke test, a few seconds).
 *
 * OpenBLAS is set to one thread unless OPENBLAS_NUM_THREADS is set. */
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "chain.h"
#include "contact.h"
#include "contact_scenes.h"
#include "lcp.h"
#include "numerics/LCP_Solvers.h"
#include "numerics/LinearComplementarityProblem.h"
#include "numerics/NumericsMatrix.h"
#include "numerics/NumericsVerbose.h"
#include "numerics/SolverOptions.h"
#include "numerics/lcp_cst.h"
#include "peer_set.h"

extern void openblas_set_num_threads(int num_threads);
extern int openblas_get_num_threads(void);

#ifndef CUSP_LCP_DATA
#define CUSP_LCP_DATA "tests/data/lcp"
#endif

#define RES_TOL 1e-9      /* solved: ||min(z, w)||inf <= RES_TOL max(1, ||q||inf) */
#define STEP_H 1e-3       /* contact time step */
#define DIRECTIONS 4      /* friction pyramid r */
#define MU 0.5
#define SLOW_MS 100.0     /* a call slower than this: 3 batches of one call */
#define SIC_TOL 1e-12
#define SIC_NEWTON_ITER 1000
#define SIC_PGS_SWEEPS 10000

#define NPEER PEER_NFILES

enum { S_FB, S_LEMKE, S_PGS, S_CHAIN, S_SIC_LEMKE, S_SIC_FB, S_SIC_PGS, NSOLV, S_PIPELINE = NSOLV };
static const char *const solver_key[NSOLV + 1] = {"fb", "lemke", "pgs", "chain", "siconos_lemke",
                                                   "siconos_newton_fb", "siconos_pgs", "pipeline"};
static int is_cusp(int s) { return s <= S_CHAIN; }
static int is_siconos(int s) { return s >= S_SIC_LEMKE && s < NSOLV; }

#define NSIZES 7
static const int k_contacts[NSIZES] = {1, 2, 4, 8, 16, 32, 64};
static const int k_quick_contacts[] = {1, 4, 16};
/* soft rod: sections, disks per section, contacts per disk for each m above */
static const int k_rod_cfg[NSIZES][3] = {{1, 1, 1}, {1, 2, 1}, {1, 4, 1}, {2, 4, 1},
                                         {4, 4, 1}, {8, 4, 1}, {8, 4, 2}};

enum { SC_BLOCK_PLANE, SC_ROD_PLANE, SC_INCLINE20, SC_INCLINE35, NSCENES };
static const char *const scene_key[NSCENES] = {"block_plane", "rod_plane", "incline20_stick", "incline35_slide"};
static const double scene_theta_deg[NSCENES] = {0, 0, 20, 35};

/* ---------------------------------------------------------------- timing */

static FILE *g_out;      /* the JSON (a duplicate of the original stdout) */
static FILE *g_log;      /* progress (g_err, or NULL with --json-only) */
static FILE *g_err;      /* the original stderr */
static int g_inconsistent;
static volatile double g_sink;

/* Median of the finite entries of x (n entries, copied). */
static double median_finite(const double *x, int n) {
  double *y = malloc(sizeof(double) * (n > 0 ? n : 1));
  int k = 0;
  for (int i = 0; i < n; i++)
    if (isfinite(x[i])) y[k++] = x[i];
  qsort(y, k, sizeof(double), cmp_double);
  double m = quantile(y, k, 0.5);
  free(y);
  return m;
}

typedef struct {
  double median_us, q1_us, q3_us, min_us, max_us, cpu_median_us;
  long calls_per_batch;
  int batches;
} bench_stat;

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...) {
  if (!g_log) return;
  va_list ap;
  va_start(ap, fmt);
  vfprintf(g_log, fmt, ap);
  va_end(ap);
  fflush(g_log);
}

/* An internal inconsistency: reported on stderr (always) and in the JSON. */
#define MAX_ISSUES 64
static char g_issues[MAX_ISSUES][200];
static int g_nissues;
static void inconsistency(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void inconsistency(const char *fmt, ...) {
  va_list ap;
  char buf[200];
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  fprintf(g_err ? g_err : stderr, "bench-lcp: INCONSISTENCY: %s\n", buf);
  if (g_nissues < MAX_ISSUES) snprintf(g_issues[g_nissues++], sizeof g_issues[0], "%s", buf);
  g_inconsistent++;
}

/* --------------------------------------------------------------- problems */

typedef struct {
  int kind;             /* 0 peer, 1 contact */
  char name[64];        /* peer file, or scene */
  int scene, contacts, kept, conditioned;
  int n;
  double *M, *q, qscale; /* column-major n x n; qscale = max(1, ||q||inf) */
  int nblock;
  int *blocks;
  /* pipeline (conditioned contact cases): the filled problem, its owners */
  sb_contact_problem *P;
  sb_model *model;
  sb_state *state;
  sb_work *work;
  int owns_pipeline;    /* frees P/model/... (the conditioned case of a pair) */
  sb_contact_info pipe_info;
  int pipe_rc;
} lcp_case;

typedef struct {
  lcp_case *c;
  int solver;
  /* cusp */
  sb_lcp_work *work;
  sb_lcp_options opt;
  sb_lcp_info info;
  sb_lcp_status status;
  /* siconos */
  NumericsMatrix *NM;
  double *qcopy;
  LinearComplementarityProblem lp;
  SolverOptions *so;
  int sic_info;
  /* pipeline */
  sb_contact_options copt;
  sb_contact_info cinfo;
  int crc;
  char err[256];
  double *z, *w, *z_checked;
  /* verification of the first call */
  int claimed, solved, iterations, code;
  double residual;
  char message[256];
  /* timing */
  long K;
  int R, slow, pretimed;
  double *us, *cpu;
  bench_stat st;
} job;

static void run_job(job *j) {
  lcp_case *c = j->c;
  int n = c->n;
  if (j->solver == S_PIPELINE) {
    j->crc = sb_contact_solve(c->P, STEP_H, &j->copt, &j->cinfo, j->err, sizeof j->err);
    g_sink += j->cinfo.residual;
    return;
  }
  memset(j->z, 0, sizeof(double) * n);
  switch (j->solver) {
    case S_FB:
    case S_LEMKE:
    case S_PGS:
      j->status = sb_lcp_solve_with(j->work, (sb_lcp_solver)j->solver, n, c->M, c->q, j->z, j->w, &j->opt, &j->info);
      break;
    case S_CHAIN:
      j->status = sb_lcp_solve(j->work, n, c->M, c->q, j->z, j->w, &j->opt, &j->info);
      break;
    case S_SIC_LEMKE:
      j->sic_info = -1;
      lcp_lexicolemke(&j->lp, j->z, j->w, &j->sic_info, j->so);
      break;
    case S_SIC_FB:
      j->sic_info = -1;
      lcp_newton_FB(&j->lp, j->z, j->w, &j->sic_info, j->so);
      break;
    case S_SIC_PGS:
      j->sic_info = -1;
      lcp_pgs(&j->lp, j->z, j->w, &j->sic_info, j->so);
      break;
  }
  g_sink += j->z[0];
}

/* ||min(z, Mz + q)||inf from the data alone (INFINITY if anything is not finite). */
static double verify_residual(const lcp_case *c, const double *z) {
  int n = c->n;
  double res = 0;
  for (int i = 0; i < n; i++) {
    double s = c->q[i];
    for (int k = 0; k < n; k++) s += c->M[i + (size_t)k * n] * z[k];
    if (!isfinite(s) || !isfinite(z[i])) return INFINITY;
    res = fmax(res, fabs(fmin(z[i], s)));
  }
  return res;
}

static const char *job_label(const job *j, char *buf, size_t size) {
  const lcp_case *c = j->c;
  if (c->kind == 0)
    snprintf(buf, size, "peer %s / %s", c->name, solver_key[j->solver]);
  else
    snprintf(buf, size, "%s m=%d %s n=%d / %s", c->name, c->contacts, c->conditioned ? "cond" : "raw", c->n,
             solver_key[j->solver]);
  return buf;
}

/* The first call: its answer is checked, and cusp's own report with it. */
static void check_first_call(job *j) {
  lcp_case *c = j->c;
  int n = c->n;
  char label[160];
  job_label(j, label, sizeof label);
  if (j->solver == S_PIPELINE) {
    j->claimed = j->crc == 0;
    j->solved = j->crc == 0;
    j->iterations = j->cinfo.lcp.iterations;
    j->residual = j->cinfo.residual;
    j->code = j->crc;
    snprintf(j->message, sizeof j->message, "%s", j->crc ? j->err : "");
    if (j->crc == 0 && j->cinfo.lcp.status != SB_LCP_SOLVED)
      inconsistency("%s: sb_contact_solve returned 0 with LCP status %s", label, sb_lcp_status_name(j->cinfo.lcp.status));
    return;
  }
  j->residual = verify_residual(c, j->z);
  j->solved = isfinite(j->residual) && j->residual <= RES_TOL * c->qscale;
  memcpy(j->z_checked, j->z, sizeof(double) * n);
  if (is_cusp(j->solver)) {
    j->claimed = j->status == SB_LCP_SOLVED;
    j->iterations = j->info.iterations;
    j->code = (int)j->status;
    snprintf(j->message, sizeof j->message, "%s", j->info.message);
    int finite = 1;
    for (int i = 0; i < n; i++) finite &= isfinite(j->z[i]) && isfinite(j->w[i]);
    if (!finite) inconsistency("%s: non-finite z or w (status %s)", label, sb_lcp_status_name(j->status));
    if (j->info.status != j->status)
      inconsistency("%s: info.status %s, returned %s", label, sb_lcp_status_name(j->info.status),
                    sb_lcp_status_name(j->status));
    if (j->claimed && !j->solved)
      inconsistency("%s: says solved, residual %.3g > %.3g (%g relative)", label, j->residual,
                    RES_TOL * c->qscale, j->residual / c->qscale);
    if (j->claimed && !(fabs(j->info.residual - j->residual) <= RES_TOL * c->qscale))
      inconsistency("%s: info.residual %.3g, recomputed %.3g", label, j->info.residual, j->residual);
    if (j->solver != S_CHAIN && j->info.solver != (sb_lcp_solver)j->solver)
      inconsistency("%s: answered by %s", label, sb_lcp_solver_name(j->info.solver));
  } else {
    j->claimed = j->sic_info == 0;
    j->iterations = j->so->iparam[SICONOS_IPARAM_ITER_DONE];
    j->code = j->sic_info;
    snprintf(j->message, sizeof j->message, "info %d, error %.3g", j->sic_info, j->so->dparam[SICONOS_DPARAM_RESIDU]);
  }
}

static void setup_job(job *j, lcp_case *c, int solver, int R) {
  memset(j, 0, sizeof *j);
  j->c = c;
  j->solver = solver;
  int n = c->n;
  j->z = calloc(n, sizeof(double));
  j->w = calloc(n, sizeof(double));
  j->z_checked = calloc(n, sizeof(double));
  j->us = calloc(R, sizeof(double));
  j->cpu = calloc(R, sizeof(double));
  if (is_cusp(solver)) {
    j->work = sb_lcp_work_create(n);
    j->opt = sb_lcp_default_options();
    j->opt.warm_start = 0;
    if (c->nblock > 0) {
      j->opt.nblock = c->nblock;
      j->opt.block = c->blocks;
    }
  } else if (is_siconos(solver)) {
    j->NM = NM_create(NM_DENSE, n, n);
    memcpy(j->NM->matrix0, c->M, sizeof(double) * n * n);
    j->qcopy = malloc(sizeof(double) * n);
    memcpy(j->qcopy, c->q, sizeof(double) * n);
    j->lp.size = n;
    j->lp.M = j->NM;
    j->lp.q = j->qcopy;
    int id = solver == S_SIC_LEMKE ? SICONOS_LCP_LEMKE : solver == S_SIC_FB ? SICONOS_LCP_NEWTON_FB_FBLSA : SICONOS_LCP_PGS;
    j->so = solver_options_create(id);
    j->so->dparam[SICONOS_DPARAM_TOL] = SIC_TOL;
    j->so->iparam[SICONOS_IPARAM_MAX_ITER] =
      solver == S_SIC_LEMKE ? 100 * n + 1000 : solver == S_SIC_FB ? SIC_NEWTON_ITER : SIC_PGS_SWEEPS;
    if (solver == S_SIC_FB) j->so->iparam[SICONOS_IPARAM_PREALLOC] = 1;
  } else {
    j->copt = sb_contact_default_options();
    j->copt.warm_start = 0;
  }
}

static void free_job(job *j) {
  free(j->z);
  free(j->w);
  free(j->z_checked);
  free(j->us);
  free(j->cpu);
  sb_lcp_work_free(j->work);
  if (j->so) {
    solver_options_delete(j->so);
    free(j->so); /* Siconos 4.4's delete frees the members, not the struct */
  }
  if (j->NM) NM_free(j->NM);
  free(j->qcopy);
}

/* Per-call wall and thread CPU time of one batch of K calls, microseconds. */
static void time_batch(job *j, double *wall_us, double *cpu_us) {
  if (!j->slow) run_job(j); /* untimed: back into the caches */
  double c0 = clock_s(CLOCK_THREAD_CPUTIME_ID), a = now_s();
  for (long k = 0; k < j->K; k++) run_job(j);
  double b = now_s(), d = clock_s(CLOCK_THREAD_CPUTIME_ID);
  *wall_us = 1e6 * (b - a) / (double)j->K;
  *cpu_us = 1e6 * (d - c0) / (double)j->K;
}

static bench_stat summarize(double *us, double *cpu, int R, long K) {
  qsort(us, R, sizeof(double), cmp_double);
  qsort(cpu, R, sizeof(double), cmp_double);
  bench_stat s;
  s.median_us = quantile(us, R, 0.5);
  s.q1_us = quantile(us, R, 0.25);
  s.q3_us = quantile(us, R, 0.75);
  s.min_us = us[0];
  s.max_us = us[R - 1];
  s.cpu_median_us = quantile(cpu, R, 0.5);
  s.calls_per_batch = K;
  s.batches = R;
  return s;
}

/* ------------------------------------------------------------ contact LCPs */

/* Fills the problem of scene sc with m contacts into a fresh sb_contact_problem. */
static int build_scene(lcp_case *c, int sc, int m, int size_index, char *err, int errsize) {
  c->scene = sc;
  c->contacts = m;
  if (sc == SC_ROD_PLANE) {
    scene_rod *rod = malloc(sizeof *rod);
    scene_rod_params(rod, k_rod_cfg[size_index][0], k_rod_cfg[size_index][1], k_rod_cfg[size_index][2]);
    int nc = rod->chain.ndisk * rod->per_disk;
    if (nc != m) {
      snprintf(err, errsize, "rod configuration gives %d contacts, wanted %d", nc, m);
      free(rod);
      return -1;
    }
    c->model = sb_model_create(&rod->chain, err, errsize);
    if (!c->model) {
      free(rod);
      return -1;
    }
    c->state = sb_state_create(c->model);
    c->work = sb_work_create(c->model);
    c->P = sb_contact_create(m, 1, c->model->n, DIRECTIONS, err, errsize);
    int rc = !c->P || sb_step_prepare(c->model, c->state, c->work, NULL, STEP_H, err, errsize) ||
             scene_rod_fill(c->P, rod, c->model, c->work, MU, err, errsize) < 0;
    free(rod);
    return rc ? -1 : 0;
  }
  c->P = sb_contact_create(m, 1, 6, DIRECTIONS, err, errsize);
  if (!c->P) return -1;
  scene_block sb;
  return scene_block_fill(c->P, &sb, scene_theta_deg[sc] * M_PI / 180, MU, m, STEP_H, err, errsize) < 0 ? -1 : 0;
}

/* Copies the LCP of the last solve: raw (A, b) or conditioned. */
static void take_lcp(lcp_case *c, sb_contact_problem *P, int conditioned) {
  int n;
  const double *A, *b, *Ac, *bc;
  sb_contact_lcp(P, &n, &A, &b, &Ac, &bc);
  c->n = n;
  c->M = malloc(sizeof(double) * (n > 0 ? (size_t)n * n : 1));
  c->q = malloc(sizeof(double) * (n > 0 ? n : 1));
  memcpy(c->M, conditioned ? Ac : A, sizeof(double) * n * n);
  memcpy(c->q, conditioned ? bc : b, sizeof(double) * n);
  double qi = 0;
  for (int i = 0; i < n; i++) qi = fmax(qi, fabs(c->q[i]));
  c->qscale = fmax(1, qi);
  c->nblock = n / (DIRECTIONS + 2);
  c->blocks = malloc(sizeof(int) * (c->nblock > 0 ? c->nblock : 1));
  for (int k = 0; k < c->nblock; k++) c->blocks[k] = DIRECTIONS + 2;
}

/* Builds the (unconditioned, conditioned) pair of scene sc with m contacts. */
static int make_contact_pair(lcp_case *raw, lcp_case *cond, int sc, int m, int size_index) {
  char err[256];
  memset(raw, 0, sizeof *raw);
  memset(cond, 0, sizeof *cond);
  if (build_scene(cond, sc, m, size_index, err, sizeof err)) {
    fprintf(g_err, "bench-lcp: %s m=%d: %s\n", scene_key[sc], m, err);
    return -1;
  }
  cond->kind = raw->kind = 1;
  snprintf(cond->name, sizeof cond->name, "%s", scene_key[sc]);
  snprintf(raw->name, sizeof raw->name, "%s", scene_key[sc]);
  raw->scene = sc;
  raw->contacts = m;
  cond->conditioned = 1;
  cond->owns_pipeline = 1;
  /* raw: conditioning off; Lemke alone (the assembled matrix is what counts) */
  sb_contact_options o = sb_contact_default_options();
  o.rank_selection = 0;
  o.ruiz_iterations = 0;
  o.tikhonov = 0;
  o.warm_start = 0;
  o.lcp.nchain = 1;
  o.lcp.chain[0] = SB_LCP_LEMKE;
  sb_contact_info info;
  sb_contact_solve(cond->P, STEP_H, &o, &info, err, sizeof err);
  take_lcp(raw, cond->P, 0);
  raw->kept = info.nkept;
  if (raw->n != m * (DIRECTIONS + 2) || info.nkept != m)
    inconsistency("%s m=%d raw: n = %d, kept %d; expected n = %d", scene_key[sc], m, raw->n, info.nkept,
                  m * (DIRECTIONS + 2));
  /* conditioned: the default pipeline, cold */
  o = sb_contact_default_options();
  o.warm_start = 0;
  cond->pipe_rc = sb_contact_solve(cond->P, STEP_H, &o, &cond->pipe_info, err, sizeof err);
  if (cond->pipe_rc) logf_("note: %s m=%d: sb_contact_solve: %s\n", scene_key[sc], m, err);
  take_lcp(cond, cond->P, 1);
  cond->kept = cond->pipe_info.nkept;
  if (cond->n != cond->kept * (DIRECTIONS + 2) || cond->kept < 0 || cond->kept > m)
    inconsistency("%s m=%d conditioned: n = %d with %d of %d contacts kept", scene_key[sc], m, cond->n, cond->kept, m);
  return 0;
}

static void free_case(lcp_case *c) {
  free(c->M);
  free(c->q);
  free(c->blocks);
  if (c->owns_pipeline) {
    sb_contact_free(c->P);
    sb_work_free(c->work);
    sb_state_free(c->state);
    sb_model_free(c->model);
  }
}

/* ----------------------------------------------------------------- output */

static void jnum(FILE *f, double x) {
  if (isfinite(x))
    fprintf(f, "%.6g", x);
  else
    fprintf(f, "null");
}

static const char *status_text(const job *j) {
  static char buf[32];
  if (is_cusp(j->solver)) return sb_lcp_status_name((sb_lcp_status)j->code);
  if (j->solver == S_PIPELINE) return j->code == 0 ? "solved" : "failed";
  snprintf(buf, sizeof buf, "info_%d", j->code);
  return buf;
}

static void json_job(FILE *o, const job *j) {
  fprintf(o, "\"%s\":{\"status\":", solver_key[j->solver]);
  json_string(o, status_text(j));
  fprintf(o, ",\"claims_solved\":%s,\"solved\":%s,\"iterations\":%d,\"residual\":", j->claimed ? "true" : "false",
          j->solved ? "true" : "false", j->iterations);
  jnum(o, j->residual);
  if (j->solver == S_PIPELINE) {
    /* sb_contact_info: residual of the unscaled, unregularized LCP (physical units) */
    fprintf(o, ",\"residual_units\":\"physical, unscaled LCP\",\"answered_by\":\"%s\",\"rank_passes\":%d",
            sb_lcp_solver_name(j->cinfo.lcp.solver), j->cinfo.rank_passes);
  } else {
    fprintf(o, ",\"residual_rel\":");
    jnum(o, j->residual / j->c->qscale);
  }
  if (j->message[0] && !j->solved) {
    fprintf(o, ",\"message\":");
    json_string(o, j->message);
  }
  if (j->solver == S_CHAIN) fprintf(o, ",\"answered_by\":\"%s\"", sb_lcp_solver_name(j->info.solver));
  fprintf(o, ",\"time_us_median\":");
  jnum(o, j->st.median_us);
  fprintf(o, ",\"q1\":");
  jnum(o, j->st.q1_us);
  fprintf(o, ",\"q3\":");
  jnum(o, j->st.q3_us);
  fprintf(o, ",\"min\":");
  jnum(o, j->st.min_us);
  fprintf(o, ",\"max\":");
  jnum(o, j->st.max_us);
  fprintf(o, ",\"cpu_median\":");
  jnum(o, j->st.cpu_median_us);
  fprintf(o, ",\"batches\":%d,\"calls_per_batch\":%ld}", j->st.batches, j->st.calls_per_batch);
}

/* Key comparison: FB on the conditioned LCPs against the fastest Siconos
 * solver that solves all LCPs of the reference set (conditioned or raw
 * matrices of the same scenes and sizes); jobs[case][solver]. */
typedef struct {
  int ref, ref_all, ncases, fb_solved, ref_solved, compared;
  double fb_rate, ref_rate, fb_median, ref_median, ratio_of_medians, median_ratio;
} key_cmp;

static key_cmp key_compare(job **jobs, lcp_case *cases, int ncase, int ref_conditioned) {
  key_cmp k;
  memset(&k, 0, sizeof k);
  k.ref = -1;
  int *cond_idx = malloc(sizeof(int) * ncase), *ref_idx = malloc(sizeof(int) * ncase);
  for (int i = 0; i < ncase; i++)
    if (cases[i].kind == 1 && cases[i].conditioned) {
      cond_idx[k.ncases] = i;
      /* the pair's other member is the neighbour */
      ref_idx[k.ncases] = ref_conditioned ? i : i - 1;
      k.ncases++;
    }
  double *t = malloc(sizeof(double) * (k.ncases + 1));
  int best_solved = -1;
  double best_time = INFINITY;
  for (int s = S_SIC_LEMKE; s < NSOLV; s++) {
    int ns = 0, nt = 0;
    for (int a = 0; a < k.ncases; a++) {
      const job *j = &jobs[ref_idx[a]][s];
      ns += j->solved;
      t[nt++] = j->st.median_us;
    }
    double med = median_finite(t, nt);
    if (ns > best_solved || (ns == best_solved && med < best_time)) {
      best_solved = ns;
      best_time = med;
      k.ref = s;
    }
  }
  k.ref_all = best_solved == k.ncases;
  k.ref_solved = best_solved;
  double *tf = malloc(sizeof(double) * (k.ncases + 1)), *tr = malloc(sizeof(double) * (k.ncases + 1)),
         *rr = malloc(sizeof(double) * (k.ncases + 1));
  for (int a = 0; a < k.ncases; a++) {
    const job *f = &jobs[cond_idx[a]][S_FB], *r = &jobs[ref_idx[a]][k.ref];
    k.fb_solved += f->solved;
    if (f->solved && r->solved) {
      tf[k.compared] = f->st.median_us;
      tr[k.compared] = r->st.median_us;
      rr[k.compared] = f->st.median_us / r->st.median_us;
      k.compared++;
    }
  }
  k.fb_rate = k.ncases ? (double)k.fb_solved / k.ncases : NAN;
  k.ref_rate = k.ncases ? (double)k.ref_solved / k.ncases : NAN;
  k.fb_median = median_finite(tf, k.compared);
  k.ref_median = median_finite(tr, k.compared);
  k.ratio_of_medians = k.fb_median / k.ref_median;
  k.median_ratio = median_finite(rr, k.compared);
  free(cond_idx);
  free(ref_idx);
  free(t);
  free(tf);
  free(tr);
  free(rr);
  return k;
}

static void json_key(FILE *o, const char *key, const key_cmp *k, int ref_conditioned) {
  char text[512];
  snprintf(text, sizeof text,
           "our FB with full conditioning solves %.1f%% of the %d contact LCPs; fastest Siconos solver %s "
           "(%s, on the %s matrices): %.1f%%; on the %d cases both solve, median FB time %.3g us vs %.3g us: "
           "ratio %.3g (median of per-case ratios %.3g)",
           100 * k->fb_rate, k->ncases, k->ref >= 0 ? solver_key[k->ref] : "none",
           k->ref_all ? "solves them all" : "NO Siconos solver solves them all; best success rate",
           ref_conditioned ? "same conditioned" : "raw unconditioned", 100 * k->ref_rate, k->compared, k->fb_median,
           k->ref_median, k->ratio_of_medians, k->median_ratio);
  fprintf(o, "\"%s\":{\"fb_success_rate\":", key);
  jnum(o, k->fb_rate);
  fprintf(o, ",\"cases\":%d,\"reference\":\"%s\",\"reference_matrices\":\"%s\",\"reference_solves_all\":%s,"
             "\"reference_success_rate\":",
          k->ncases, k->ref >= 0 ? solver_key[k->ref] : "none", ref_conditioned ? "conditioned" : "unconditioned",
          k->ref_all ? "true" : "false");
  jnum(o, k->ref_rate);
  fprintf(o, ",\"cases_compared\":%d,\"fb_median_time_us\":", k->compared);
  jnum(o, k->fb_median);
  fprintf(o, ",\"reference_median_time_us\":");
  jnum(o, k->ref_median);
  fprintf(o, ",\"ratio_of_medians\":");
  jnum(o, k->ratio_of_medians);
  fprintf(o, ",\"median_of_case_ratios\":");
  jnum(o, k->median_ratio);
  fprintf(o, ",\"text\":");
  json_string(o, text);
  fputc('}', o);
  logf_("%s\n", text);
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: bench-lcp [--quick] [--tsv-file FILE] [--json-only] [--peer-dir DIR]\n"
          "                 [--batches R] [--batch-ms T] [--verbose-siconos]\n"
          "  --quick            m in {1, 4, 16}, 3 batches of one call (smoke test)\n"
          "  --tsv-file FILE    per (contact case, solver) rows for bench/plot_lcp.sh\n"
          "  --json-only        no progress on stderr\n"
          "  --peer-dir DIR     the peer LCP files (default: $CUSP_LCP_DATA, else %s)\n"
          "  --batches R        timed batches (default 11; quick 3)\n"
          "  --batch-ms T       minimum batch duration (default 15 ms)\n"
          "  --verbose-siconos  let Siconos print (to stderr), verbosity on\n",
          CUSP_LCP_DATA);
}

int main(int argc, char **argv) {
  int quick = 0, json_only = 0, verbose_siconos = 0, R = 0;
  double batch_ms = 15;
  const char *tsv_file = NULL, *peer_dir = getenv("CUSP_LCP_DATA");
  if (!peer_dir || !*peer_dir) peer_dir = CUSP_LCP_DATA;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--quick"))
      quick = 1;
    else if (!strcmp(argv[i], "--json-only"))
      json_only = 1;
    else if (!strcmp(argv[i], "--verbose-siconos"))
      verbose_siconos = 1;
    else if (!strcmp(argv[i], "--tsv-file") && i + 1 < argc)
      tsv_file = argv[++i];
    else if (!strcmp(argv[i], "--peer-dir") && i + 1 < argc)
      peer_dir = argv[++i];
    else if (!strcmp(argv[i], "--batches") && i + 1 < argc)
      R = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--batch-ms") && i + 1 < argc)
      batch_ms = atof(argv[++i]);
    else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage(stdout);
      return 0;
    } else {
      usage(stderr);
      return 2;
    }
  }
  if (R <= 0) R = quick ? 3 : 11;
  if (!(batch_ms > 0)) batch_ms = 15;

  /* The JSON goes to a duplicate of stdout; fd 1 (Siconos' printf) to /dev/null. */
  fflush(stdout);
  int out_fd = dup(STDOUT_FILENO);
  g_out = out_fd >= 0 ? fdopen(out_fd, "w") : NULL;
  if (!g_out) {
    perror("bench-lcp: dup stdout");
    return 1;
  }
  int sink_fd = verbose_siconos ? dup(STDERR_FILENO) : open("/dev/null", O_WRONLY);
  if (sink_fd >= 0) {
    dup2(sink_fd, STDOUT_FILENO);
    close(sink_fd);
  }
  numerics_set_verbose(verbose_siconos ? 1 : 0);
  /* Siconos also prints on stderr (e.g. NM_LU_factorize when a Newton
   * matrix is singular): fd 2 goes to /dev/null while solvers run, and this
   * program's messages go to a duplicate of the original stderr. */
  int err_fd = dup(STDERR_FILENO);
  g_err = err_fd >= 0 ? fdopen(err_fd, "w") : NULL;
  if (!g_err) g_err = stderr;
  setvbuf(g_err, NULL, _IOLBF, 0);
  if (!verbose_siconos) {
    int null_fd = open("/dev/null", O_WRONLY);
    if (null_fd >= 0) {
      dup2(null_fd, STDERR_FILENO);
      close(null_fd);
    }
  }
  g_log = json_only ? NULL : g_err;

  const char *blas_env = getenv("OPENBLAS_NUM_THREADS");
  if (!blas_env || !*blas_env) openblas_set_num_threads(1);
  int blas_threads = openblas_get_num_threads();
  double t_start = now_s();

  /* Problems: the peer files, then (raw, conditioned) pairs per scene and size. */
  const int *sizes = quick ? k_quick_contacts : k_contacts;
  int nsizes = quick ? (int)(sizeof k_quick_contacts / sizeof k_quick_contacts[0]) : NSIZES;
  int maxcase = NPEER + 2 * NSCENES * NSIZES;
  lcp_case *cases = calloc(maxcase, sizeof(lcp_case));
  int ncase = 0, npeer_read = 0;
  for (int f = 0; f < NPEER; f++) {
    char path[1024], err[256];
    snprintf(path, sizeof path, "%s/%s", peer_dir, peer_files[f]);
    lcp_case *c = &cases[ncase];
    memset(c, 0, sizeof *c);
    if (sb_lcp_read_dat(path, &c->n, &c->M, &c->q, err, sizeof err)) {
      inconsistency("cannot read peer file %s: %s", path, err);
      continue;
    }
    snprintf(c->name, sizeof c->name, "%s", peer_files[f]);
    double qi = 0;
    for (int i = 0; i < c->n; i++) qi = fmax(qi, fabs(c->q[i]));
    c->qscale = fmax(1, qi);
    ncase++;
    npeer_read++;
  }
  logf_("peer set: %d of %d files from %s\n", npeer_read, NPEER, peer_dir);
  int first_contact = ncase;
  for (int sc = 0; sc < NSCENES; sc++)
    for (int k = 0; k < nsizes; k++) {
      int m = sizes[k], idx = 0;
      while (k_contacts[idx] != m) idx++;
      if (make_contact_pair(&cases[ncase], &cases[ncase + 1], sc, m, idx)) {
        inconsistency("cannot build %s with %d contacts", scene_key[sc], m);
        continue;
      }
      ncase += 2;
    }
  logf_("contact LCPs: %d (%d scenes x %d sizes x raw/conditioned)\n", ncase - first_contact, NSCENES, nsizes);

  /* Jobs: every solver on every problem, plus the pipeline of conditioned contact cases. */
  job **jobs = calloc(ncase, sizeof(job *));
  int njob = 0;
  for (int i = 0; i < ncase; i++) {
    jobs[i] = calloc(NSOLV + 1, sizeof(job));
    int ns = cases[i].kind == 1 && cases[i].conditioned ? NSOLV + 1 : NSOLV;
    for (int s = 0; s < ns; s++) {
      setup_job(&jobs[i][s], &cases[i], s, R);
      njob++;
    }
  }
  job **all = calloc(njob, sizeof(job *));
  int na = 0;
  for (int i = 0; i < ncase; i++) {
    int ns = cases[i].kind == 1 && cases[i].conditioned ? NSOLV + 1 : NSOLV;
    for (int s = 0; s < ns; s++) all[na++] = &jobs[i][s];
  }

  /* Checked first call, then calibration of K. */
  logf_("checking and calibrating %d jobs ...\n", njob);
  for (int a = 0; a < njob; a++) {
    job *j = all[a];
    char label[160];
    if (j->c->n == 0 && j->solver != S_PIPELINE) { /* nothing kept: trivially solved */
      j->K = 0;
      continue;
    }
    double c0 = clock_s(CLOCK_THREAD_CPUTIME_ID), t0 = now_s();
    run_job(j);
    double t1 = now_s() - t0, c1 = clock_s(CLOCK_THREAD_CPUTIME_ID) - c0;
    check_first_call(j);
    if (quick) {
      j->K = 1;
      j->R = R;
    } else if (!j->solved || 1e3 * t1 > SLOW_MS) {
      j->K = 1;
      j->R = R < 3 ? R : 3;
      j->slow = 1e3 * t1 > SLOW_MS;
      if (j->slow) logf_("slow: %s, %.3g ms per call\n", job_label(j, label, sizeof label), 1e3 * t1);
      if (j->slow && !j->solved) { /* a slow failure: its checked call is the only sample */
        j->R = 1;
        j->us[0] = 1e6 * t1;
        j->cpu[0] = 1e6 * c1;
        j->pretimed = 1;
      }
    } else {
      j->R = R;
      double target = 1e-3 * batch_ms;
      long K = (long)ceil(target / fmax(t1, 1e-9));
      if (K < 1) K = 1;
      for (int it = 0; it < 10; it++) {
        double a0 = now_s();
        for (long k = 0; k < K; k++) run_job(j);
        double el = now_s() - a0;
        if (el >= target) break;
        K = (long)ceil(1.2 * (double)K * target / fmax(el, 1e-9));
      }
      j->K = K;
    }
  }

  /* Interleaved timed batches. */
  for (int r = 0; r < R; r++) {
    logf_("\rround %d/%d", r + 1, R);
    for (int a = 0; a < njob; a++) {
      job *j = all[a];
      if (j->K > 0 && r < j->R && !j->pretimed) time_batch(j, &j->us[r], &j->cpu[r]);
    }
  }
  logf_("\n");

  /* Repetitions must reproduce the checked answer. */
  for (int a = 0; a < njob; a++) {
    job *j = all[a];
    char label[160];
    job_label(j, label, sizeof label);
    if (j->K == 0) {
      j->solved = j->claimed = 1;
      j->residual = 0;
      j->st = (bench_stat){0, 0, 0, 0, 0, 0, 0, 0};
      continue;
    }
    j->st = summarize(j->us, j->cpu, j->R, j->K);
    if (!(j->st.median_us > 0 && isfinite(j->st.max_us))) inconsistency("%s: timing %g us", label, j->st.median_us);
    if (j->pretimed) continue;
    if (is_cusp(j->solver)) {
      if ((int)j->status != j->code || memcmp(j->z, j->z_checked, sizeof(double) * j->c->n))
        inconsistency("%s: a repetition gave a different answer (status %s, first %s)", label,
                      sb_lcp_status_name(j->status), sb_lcp_status_name((sb_lcp_status)j->code));
    } else if (is_siconos(j->solver)) {
      if (memcmp(j->NM->matrix0, j->c->M, sizeof(double) * j->c->n * j->c->n) ||
          memcmp(j->qcopy, j->c->q, sizeof(double) * j->c->n))
        logf_("warning: %s modified its copy of M or q\n", label);
    } else if ((j->crc == 0) != (j->code == 0)) {
      inconsistency("%s: a repetition gave a different status", label);
    }
  }
  double elapsed = now_s() - t_start;
  /* Solvers are done: fd 2 back to the original stderr. */
  if (g_err != stderr) {
    fflush(g_err);
    dup2(fileno(g_err), STDERR_FILENO);
  }

  /* Progress table. */
  logf_("%-16s %3s %4s %-5s", "scene", "m", "n", "cond");
  for (int s = 0; s < NSOLV; s++) logf_(" %18s", solver_key[s]);
  logf_(" %12s\n", "pipeline");
  for (int i = first_contact; i < ncase; i++) {
    lcp_case *c = &cases[i];
    logf_("%-16s %3d %4d %-5s", c->name, c->contacts, c->n, c->conditioned ? "yes" : "no");
    for (int s = 0; s < NSOLV; s++) {
      job *j = &jobs[i][s];
      logf_(" %10.4g%-8s", j->st.median_us, j->solved ? " us" : " us FAIL");
    }
    if (c->conditioned) logf_(" %9.4g us%s", jobs[i][S_PIPELINE].st.median_us, jobs[i][S_PIPELINE].solved ? "" : " FAIL");
    logf_("\n");
  }

  /* --------------------------------------------------------------- JSON */
  FILE *o = g_out;
  char cpu_name[256];
  cpu_model(cpu_name, sizeof cpu_name);
  struct utsname un;
  int have_un = uname(&un) == 0;
  fprintf(o, "{\"benchmark\":\"bench-lcp\",\"mode\":\"%s\",\"machine\":{\"cpu_model\":", quick ? "quick" : "full");
  json_string(o, cpu_name);
  fprintf(o, ",\"online_cpus\":%ld,\"blas_threads\":%d,\"kernel\":", sysconf(_SC_NPROCESSORS_ONLN), blas_threads);
  json_string(o, have_un ? un.release : "unknown");
  fprintf(o, ",\"compiler\":");
#if defined(__clang__)
  json_string(o, "clang " __clang_version__);
#elif defined(__GNUC__)
  json_string(o, "gcc " __VERSION__);
#else
  json_string(o, "unknown");
#endif
#ifdef __OPTIMIZE__
  fprintf(o, ",\"optimized\":true");
#else
  fprintf(o, ",\"optimized\":false");
#endif
  fprintf(o, ",\"siconos\":\"numerics 4.4 (Debian libsiconos-numerics-dev)\"},");
  fprintf(o,
          "\"method\":{\"batches\":%d,\"min_batch_ms\":%g,\"slow_call_ms\":%g,\"statistic\":\"per-call wall time "
          "of each batch; median, quartiles, min, max over batches (interleaved round-robin over all jobs, one "
          "untimed call before each batch); failed or slow jobs: 3 batches of 1 call; slow failures: the checked call only (batches 1)\",\"start\":\"z = 0 every "
          "call\",\"solved\":\"finite and ||min(z, Mz+q)||inf <= %g max(1, ||q||inf), recomputed here\","
          "\"cusp\":{\"tol\":1e-12,\"fb_max_iter\":100,\"lemke_max_pivots\":\"50 n + 100\",\"pgs_max_sweeps\":10000,"
          "\"pgs_blocks\":\"contact LCPs: one block of r + 2 per contact; peer: scalar\"},"
          "\"siconos\":{\"tol\":%g,\"lemke_max_iter\":\"100 n + 1000\",\"newton_fb_max_iter\":%d,"
          "\"pgs_max_iter\":%d},\"contact\":{\"h_s\":%g,\"directions\":%d,\"mu\":%g,\"conditioned\":\"sb_contact_solve "
          "default options (rank selection 1e-6, Ruiz 10, Tikhonov 1e-10): A_conditioned, b_conditioned\","
          "\"unconditioned\":\"rank_selection 0, ruiz_iterations 0, tikhonov 0: A, b\",\"pipeline\":\"sb_contact_solve, "
          "default options, warm_start 0 (assembly + conditioning + solve + proximal re-solve)\"},"
          "\"runtime_s\":%.1f},",
          R, batch_ms, SLOW_MS, RES_TOL, SIC_TOL, SIC_NEWTON_ITER, SIC_PGS_SWEEPS, STEP_H, DIRECTIONS, MU, elapsed);

  fprintf(o, "\"peer\":[");
  for (int i = 0; i < first_contact; i++) {
    fprintf(o, "%s{\"file\":", i ? "," : "");
    json_string(o, cases[i].name);
    fprintf(o, ",\"n\":%d,\"solvers\":{", cases[i].n);
    for (int s = 0; s < NSOLV; s++) {
      if (s) fputc(',', o);
      json_job(o, &jobs[i][s]);
    }
    fprintf(o, "}}");
  }
  fprintf(o, "],\"contact\":[");
  for (int i = first_contact; i < ncase; i++) {
    lcp_case *c = &cases[i];
    fprintf(o, "%s{\"scene\":\"%s\",\"theta_deg\":%g,\"contacts\":%d,\"kept\":%d,\"n\":%d,\"conditioned\":%s,\"solvers\":{",
            i > first_contact ? "," : "", c->name, scene_theta_deg[c->scene], c->contacts, c->kept, c->n,
            c->conditioned ? "true" : "false");
    int ns = c->conditioned ? NSOLV + 1 : NSOLV;
    for (int s = 0; s < ns; s++) {
      if (s) fputc(',', o);
      json_job(o, &jobs[i][s]);
    }
    fprintf(o, "}}");
  }
  fprintf(o, "],");

  /* Summary: success rates and median times per solver, per conditioning. */
  fprintf(o, "\"summary\":{\"peer\":{");
  for (int s = 0; s < NSOLV; s++) {
    int ns = 0;
    double *t = malloc(sizeof(double) * (first_contact + 1));
    for (int i = 0; i < first_contact; i++) {
      ns += jobs[i][s].solved;
      t[i] = jobs[i][s].solved ? jobs[i][s].st.median_us : NAN;
    }
    fprintf(o, "%s\"%s\":{\"solved\":%d,\"files\":%d,\"median_time_us_solved\":", s ? "," : "", solver_key[s], ns,
            first_contact);
    jnum(o, median_finite(t, first_contact));
    fputc('}', o);
    free(t);
  }
  fprintf(o, "},\"contact\":{");
  double *t_all = malloc(sizeof(double) * (ncase + 1)), *t_sol = malloc(sizeof(double) * (ncase + 1));
  for (int cond = 1; cond >= 0; cond--) {
    fprintf(o, "%s\"%s\":{", cond ? "" : ",", cond ? "conditioned" : "unconditioned");
    for (int s = 0; s <= NSOLV; s++) {
      if (s == S_PIPELINE && !cond) continue;
      int nc = 0, ns = 0;
      for (int i = first_contact; i < ncase; i++) {
        if (cases[i].conditioned != cond) continue;
        const job *j = &jobs[i][s];
        t_all[nc] = j->K > 0 ? j->st.median_us : NAN;
        t_sol[nc] = j->solved && j->K > 0 ? j->st.median_us : NAN;
        ns += j->solved;
        nc++;
      }
      fprintf(o, "%s\"%s\":{\"solved\":%d,\"cases\":%d,\"success_rate\":", s ? "," : "", solver_key[s], ns, nc);
      jnum(o, nc ? (double)ns / nc : NAN);
      fprintf(o, ",\"median_time_us_solved\":");
      jnum(o, median_finite(t_sol, nc));
      fprintf(o, ",\"median_time_us_all\":");
      jnum(o, median_finite(t_all, nc));
      /* per number of contacts: median over the scenes of the solved cases */
      fprintf(o, ",\"median_time_us_solved_by_contacts\":{");
      for (int k = 0; k < nsizes; k++) {
        int nk = 0;
        for (int i = first_contact; i < ncase; i++)
          if (cases[i].conditioned == cond && cases[i].contacts == sizes[k])
            t_sol[nk++] = jobs[i][s].solved && jobs[i][s].K > 0 ? jobs[i][s].st.median_us : NAN;
        fprintf(o, "%s\"%d\":", k ? "," : "", sizes[k]);
        jnum(o, median_finite(t_sol, nk));
      }
      fprintf(o, "}}");
    }
    fputc('}', o);
  }
  free(t_all);
  free(t_sol);
  fprintf(o, "},");
  key_cmp kc = key_compare(jobs, cases, ncase, 1), ku = key_compare(jobs, cases, ncase, 0);
  json_key(o, "goal", &kc, 1);
  fputc(',', o);
  json_key(o, "goal_vs_siconos_on_raw", &ku, 0);
  int false_claims = 0;
  for (int a = 0; a < njob; a++)
    if (is_siconos(all[a]->solver) && all[a]->claimed && !all[a]->solved) false_claims++;
  fprintf(o, ",\"siconos_false_claims\":%d,\"inconsistencies\":%d,\"issues\":[", false_claims, g_inconsistent);
  for (int k = 0; k < g_nissues; k++) {
    if (k) fputc(',', o);
    json_string(o, g_issues[k]);
  }
  fprintf(o, "]}}\n");
  fflush(o);

  /* TSV for bench/plot_lcp.sh */
  if (tsv_file) {
    FILE *f = fopen(tsv_file, "w");
    if (!f) {
      fprintf(g_err, "bench-lcp: cannot write %s\n", tsv_file);
      g_inconsistent++;
    } else {
      fprintf(f, "# bench-lcp contact cases (%s run); times in microseconds per solve, median over batches\n",
              quick ? "quick" : "full");
      fprintf(f, "# goal\t%.4g\t%s\t%d\t%.4g\t%.4g\t%d\n", 100 * kc.fb_rate, kc.ref >= 0 ? solver_key[kc.ref] : "none",
              kc.ref_all, kc.ratio_of_medians, kc.median_ratio, kc.compared);
      for (int s = 0; s < NSOLV; s++) {
        int ns = 0;
        for (int i = 0; i < first_contact; i++) ns += jobs[i][s].solved;
        fprintf(f, "# peer\t%s\t%d\t%d\n", solver_key[s], ns, first_contact);
      }
      fprintf(f, "#scene\tcontacts\tn_raw\tn\tconditioned\tsolver\tsolved\titerations\tresidual_rel\tmedian_us\tq1_us"
                 "\tq3_us\tmin_us\tmax_us\n");
      for (int i = first_contact; i < ncase; i++) {
        lcp_case *c = &cases[i];
        int ns = c->conditioned ? NSOLV + 1 : NSOLV;
        for (int s = 0; s < ns; s++) {
          const job *j = &jobs[i][s];
          fprintf(f, "%s\t%d\t%d\t%d\t%d\t%s\t%d\t%d\t%.3g\t%.6g\t%.6g\t%.6g\t%.6g\t%.6g\n", c->name, c->contacts,
                  c->contacts * (DIRECTIONS + 2), c->n, c->conditioned, solver_key[s], j->solved, j->iterations,
                  j->residual / c->qscale, j->st.median_us, j->st.q1_us, j->st.q3_us, j->st.min_us, j->st.max_us);
        }
      }
      fclose(f);
    }
  }
  logf_("done in %.1f s (checksum %g); %d inconsistencies\n", now_s() - t_start, (double)g_sink, g_inconsistent);

  for (int a = 0; a < njob; a++) free_job(all[a]);
  for (int i = 0; i < ncase; i++) {
    free(jobs[i]);
    free_case(&cases[i]);
  }
  free(jobs);
  free(all);
  free(cases);
  fclose(g_out);
  return g_inconsistent ? 1 : 0;
}

/* Timing of the softbody dynamics.
 *
 *   bench-dynamics [--quick] [--tsv] [--tsv-file FILE]
 *
 * Measures
 *   1. the CUSP arm preset: one "M + bias" evaluation (kinematics with
 *      velocity, mass matrix, bias) and one implicit step (h = 1e-3 s);
 *   2. scaling with the number of segments N = 1 .. 64 for chains of PCC
 *      sections and of Cosserat PCS segments (all 6 strains):
 *        bias         sb_kinematics(q, v) + sb_bias, the recursive part
 *        kinematics   sb_kinematics(q, v) alone
 *        rnea         sb_bias alone (Newton-Euler passes) after kinematics
 *        mass_matrix  sb_mass_matrix alone after kinematics (dense n x n)
 *        step         sb_step, h = 1e-3 s
 *      with least-squares log-log slopes against nodes or segments.
 * Every figure is at a fixed pseudo-random non-zero state; the step is timed
 * from that same state each call (q, v, t restored, an O(n) copy).
 *
 * Method: each measurement has its own model workspace. It is warmed up,
 * then its batch size K is calibrated so that K calls last at least a
 * minimum time. The R timed batches are interleaved: round r runs one batch
 * of every measurement (after one untimed call to re-warm the caches), so a
 * burst of load from other processes spreads over all measurements instead
 * of spoiling one. For each measurement the per-call time of every batch is
 * kept; median, quartiles, min and max over the R batches are reported.
 *
 * Output: one JSON object on a single line on stdout (progress on stderr);
 * with --tsv, a tab-separated scaling table instead (for bench/plot_dynamics.sh);
 * --tsv-file FILE writes that table to FILE as well as printing the JSON.
 * --quick cuts repetitions (smoke test, about a second).
 *
 * OpenBLAS (used by the step's Cholesky factorization) is set to one thread
 * unless OPENBLAS_NUM_THREADS is set in the environment. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "chain.h"
#include "bench_util.h"
#include "presets.h"

/* OpenBLAS extensions (the build links libopenblas). */
extern void openblas_set_num_threads(int num_threads);
extern int openblas_get_num_threads(void);

#define NSIZES 7
static const int k_sizes[NSIZES] = {1, 2, 4, 8, 16, 32, 64};
#define LARGE_FROM 3 /* index of N = 8: slopes over N >= 8, past the fixed overheads */
#define STEP_H 1e-3
#define SEED 0x2545F4914F6CDD1Dull

/* State scales, uniform in [-scale, scale]. PCC: chamber elongations (m) and
 * their rates (m/s). PCS: curvature/torsion strains (1/m) and
 * stretch/shear strains (-), and their rates. */
#define PCC_Q 0.01
#define PCC_V 0.05
#define PCS_QK 0.5
#define PCS_QE 0.01
#define PCS_VK 1.0
#define PCS_VE 0.05

/* ---------------------------------------------------------------- timing */

typedef struct {
  int batches;        /* R */
  double batch_ms;    /* minimum batch duration */
  double warmup_ms;   /* warm-up duration per measurement */
  int warmup_calls;   /* and at least this many warm-up calls */
} bench_cfg;

typedef struct {
  double median_us, q1_us, q3_us, min_us, max_us;  /* wall clock (CLOCK_MONOTONIC) */
  double cpu_median_us, cpu_min_us, cpu_max_us;    /* thread CPU time (CLOCK_THREAD_CPUTIME_ID) */
  double offcpu_percent;                           /* 100 (1 - sum cpu / sum wall): time descheduled */
  long calls_per_batch;
  int batches;
} bench_stat;

typedef void (*bench_fn)(void *ctx);

static volatile double g_sink; /* keeps results observably used */

/* Warm-up, then the number of calls K for a batch of at least batch_ms. */
static long calibrate(bench_fn fn, void *ctx, const bench_cfg *cfg) {
  long calls = 0;
  double t0 = now_s(), t = t0;
  while (calls < cfg->warmup_calls || t - t0 < 1e-3 * cfg->warmup_ms) {
    fn(ctx);
    calls++;
    t = now_s();
  }
  double target = 1e-3 * cfg->batch_ms;
  long K = (long)ceil(target / fmax((t - t0) / (double)calls, 1e-9));
  if (K < 1) K = 1;
  for (int it = 0; it < 20; it++) {
    double a = now_s();
    for (long k = 0; k < K; k++) fn(ctx);
    double el = now_s() - a;
    if (el >= target) break;
    K = (long)ceil(1.2 * (double)K * target / fmax(el, 1e-9));
  }
  return K;
}

/* Per-call wall and thread CPU time of one batch of K calls, in microseconds. */
static void time_batch(bench_fn fn, void *ctx, long K, double *wall_us, double *cpu_us) {
  fn(ctx); /* untimed: bring this model back into the caches */
  double c = clock_s(CLOCK_THREAD_CPUTIME_ID), a = now_s();
  for (long k = 0; k < K; k++) fn(ctx);
  double b = now_s(), d = clock_s(CLOCK_THREAD_CPUTIME_ID);
  *wall_us = 1e6 * (b - a) / (double)K;
  *cpu_us = 1e6 * (d - c) / (double)K;
}

static bench_stat summarize(double *us, double *cpu, int R, long K) {
  double sw = 0, sc = 0;
  for (int r = 0; r < R; r++) {
    sw += us[r];
    sc += cpu[r];
  }
  qsort(us, R, sizeof(double), cmp_double);
  qsort(cpu, R, sizeof(double), cmp_double);
  bench_stat s;
  s.median_us = quantile(us, R, 0.5);
  s.q1_us = quantile(us, R, 0.25);
  s.q3_us = quantile(us, R, 0.75);
  s.min_us = us[0];
  s.max_us = us[R - 1];
  s.cpu_median_us = quantile(cpu, R, 0.5);
  s.cpu_min_us = cpu[0];
  s.cpu_max_us = cpu[R - 1];
  s.offcpu_percent = sw > 0 ? fmax(0, 100 * (1 - sc / sw)) : 0;
  s.calls_per_batch = K;
  s.batches = R;
  return s;
}

/* ------------------------------------------------------- benchmark bodies */

typedef struct {
  const sb_model *m;
  sb_work *w;
  sb_state *s;
  const double *q, *v; /* the fixed state */
  double *M, *c;
  int failed;
  char err[256];
} bench_ctx;

/* kinematics (with velocity) + bias */
static void run_bias(void *p) {
  bench_ctx *b = p;
  sb_kinematics(b->m, b->w, b->q, b->v);
  sb_bias(b->m, b->w, b->c);
  g_sink += b->c[0];
}

/* kinematics alone (with velocity) */
static void run_kin(void *p) {
  bench_ctx *b = p;
  sb_kinematics(b->m, b->w, b->q, b->v);
  g_sink += b->w->eta[0];
}

/* sb_bias alone (kinematics done at setup, this workspace is not shared) */
static void run_rnea(void *p) {
  bench_ctx *b = p;
  sb_bias(b->m, b->w, b->c);
  g_sink += b->c[0];
}

/* mass matrix alone (kinematics done at setup) */
static void run_mass(void *p) {
  bench_ctx *b = p;
  sb_mass_matrix(b->m, b->w, b->M);
  g_sink += b->M[0];
}

/* kinematics + mass matrix + bias */
static void run_m_bias(void *p) {
  bench_ctx *b = p;
  sb_kinematics(b->m, b->w, b->q, b->v);
  sb_mass_matrix(b->m, b->w, b->M);
  sb_bias(b->m, b->w, b->c);
  g_sink += b->M[0] + b->c[0];
}

/* one implicit step from the fixed state (q, v) */
static void run_step(void *p) {
  bench_ctx *b = p;
  int n = b->m->n;
  memcpy(b->s->q, b->q, sizeof(double) * n);
  memcpy(b->s->v, b->v, sizeof(double) * n);
  b->s->t = 0;
  if (sb_step(b->m, b->s, b->w, NULL, STEP_H, NULL, NULL, b->err, sizeof b->err)) b->failed = 1;
  g_sink += b->s->v[0];
}

/* --------------------------------------------------------------- models */

static unsigned long long g_rng = SEED;

/* Deterministic uniform in [-1, 1] (xorshift64). */
static double urand(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return (double)(g_rng >> 11) / (double)(1ull << 53) * 2 - 1;
}

static void random_state(const sb_model *m, double *q, double *v) {
  for (int i = 0; i < m->nseg; i++) {
    const sb_segment *sg = &m->seg[i];
    for (int j = 0; j < sg->ncol; j++) {
      double aq, av;
      if (sg->p.type == SB_SEG_PCC) {
        aq = PCC_Q;
        av = PCC_V;
      } else {
        int angular = sg->comp[j % sg->ncomp] < 3;
        aq = angular ? PCS_QK : PCS_QE;
        av = angular ? PCS_VK : PCS_VE;
      }
      q[sg->col0 + j] = aq * urand();
      v[sg->col0 + j] = av * urand();
    }
  }
}

/* Chain of N identical segments hanging down from (0, 0, 1) like the arm. */
static void chain_of(sb_segment_type type, int N, sb_segment_params *seg, sb_chain_params *chain) {
  for (int i = 0; i < N; i++) {
    sb_segment_params p = sb_segment_default(type);
    p.length = 0.05;
    p.slices = 4;
    if (type == SB_SEG_PCC) {
      p.mass = 0.1;
    } else {
      p.radius = 0.01;
      p.young = 1e6;
      p.strains = SB_STRAIN_ALL;
    }
    seg[i] = p;
  }
  memset(chain, 0, sizeof *chain);
  chain->nseg = N;
  chain->seg = seg;
  chain->base = sb_pose_identity();
  chain->base.R[4] = -1;
  chain->base.R[8] = -1;
  chain->base.p[2] = 1.0;
  chain->gravity[2] = -9.81;
}

/* A measurement: one function on one model, with a private workspace. */
typedef struct {
  char label[48];
  bench_fn fn;
  bench_ctx ctx;
  long K;
  double *us, *cpu; /* R batch times, wall and CPU */
  bench_stat *out;
} job;

#define MAX_MODELS (1 + 2 * NSIZES)
#define MAX_JOBS (2 + 2 * NSIZES * 5)

static sb_model *g_models[MAX_MODELS];
static double *g_states[MAX_MODELS];
static int g_nmodels;
static job g_jobs[MAX_JOBS];
static int g_njobs;

/* Builds a model and its random state; NULL (and a message) on failure. */
static sb_model *add_model(const sb_chain_params *chain, const char *name, const double **q, const double **v) {
  char err[256];
  sb_model *m = sb_model_create(chain, err, sizeof err);
  if (!m) {
    fprintf(stderr, "bench-dynamics: %s: %s\n", name, err);
    return NULL;
  }
  double *st = calloc(2 * (size_t)m->n, sizeof(double));
  random_state(m, st, st + m->n);
  g_models[g_nmodels] = m;
  g_states[g_nmodels++] = st;
  *q = st;
  *v = st + m->n;
  return m;
}

/* Adds a measurement; kinematics are evaluated once for the functions that
 * read them, and every model gets one checked step. */
static int add_job(const char *label, bench_fn fn, const sb_model *m, const double *q, const double *v,
                   bench_stat *out, int R) {
  job *j = &g_jobs[g_njobs++];
  snprintf(j->label, sizeof j->label, "%s", label);
  j->fn = fn;
  j->out = out;
  j->us = calloc(R, sizeof(double));
  j->cpu = calloc(R, sizeof(double));
  bench_ctx *c = &j->ctx;
  c->m = m;
  c->w = sb_work_create(m);
  c->s = sb_state_create(m);
  c->q = q;
  c->v = v;
  c->c = calloc(m->n, sizeof(double));
  c->M = calloc((size_t)m->n * m->n, sizeof(double));
  sb_kinematics(m, c->w, q, v);
  if (fn == run_step) {
    run_step(c);
    if (c->failed) {
      fprintf(stderr, "bench-dynamics: %s: step failed: %s\n", label, c->err);
      return -1;
    }
  }
  return 0;
}

static void free_all(void) {
  for (int i = 0; i < g_njobs; i++) {
    bench_ctx *c = &g_jobs[i].ctx;
    free(g_jobs[i].us);
    free(g_jobs[i].cpu);
    free(c->c);
    free(c->M);
    sb_state_free(c->s);
    sb_work_free(c->w);
  }
  for (int i = 0; i < g_nmodels; i++) {
    free(g_states[i]);
    sb_model_free(g_models[i]);
  }
}

/* ----------------------------------------------------------------- output */

static double slope_loglog(const double *x, const double *y, int n) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (int i = 0; i < n; i++) {
    double lx = log(x[i]), ly = log(y[i]);
    sx += lx;
    sy += ly;
    sxx += lx * lx;
    sxy += lx * ly;
  }
  double d = n * sxx - sx * sx;
  return d > 0 ? (n * sxy - sx * sy) / d : NAN;
}

static void json_stat(FILE *f, const char *key, const bench_stat *s) {
  fprintf(f,
          "\"%s\":{\"median_us\":%.4g,\"q1_us\":%.4g,\"q3_us\":%.4g,\"min_us\":%.4g,\"max_us\":%.4g,"
          "\"cpu_median_us\":%.4g,\"cpu_min_us\":%.4g,\"cpu_max_us\":%.4g,\"offcpu_percent\":%.1f,"
          "\"batches\":%d,\"calls_per_batch\":%ld}",
          key, s->median_us, s->q1_us, s->q3_us, s->min_us, s->max_us, s->cpu_median_us, s->cpu_min_us,
          s->cpu_max_us, s->offcpu_percent, s->batches, s->calls_per_batch);
}

typedef struct {
  int segments, dofs, nodes;
  bench_stat bias, kin, rnea, mass, step;
} scale_row;

typedef struct {
  const char *kind;
  sb_segment_type type;
  scale_row row[NSIZES];
  /* [0] from wall-clock medians, [1] from CPU-time medians; then over all N, over N >= 8 */
  double bias_nodes[2][2], kin_nodes[2][2], rnea_nodes[2][2], mass_seg[2][2], step_seg[2][2];
} scale_series;

static void fit_pair(const double *x, const double *y, double out[2]) {
  out[0] = slope_loglog(x, y, NSIZES);
  out[1] = slope_loglog(x + LARGE_FROM, y + LARGE_FROM, NSIZES - LARGE_FROM);
}

static double median_of(const bench_stat *b, int cpu) { return cpu ? b->cpu_median_us : b->median_us; }

static void fit_slopes(scale_series *s) {
  for (int cpu = 0; cpu < 2; cpu++) {
    double nodes[NSIZES], segs[NSIZES], b[NSIZES], kn[NSIZES], rn[NSIZES], mm[NSIZES], st[NSIZES];
    for (int i = 0; i < NSIZES; i++) {
      const scale_row *r = &s->row[i];
      nodes[i] = r->nodes;
      segs[i] = r->segments;
      b[i] = median_of(&r->bias, cpu);
      kn[i] = median_of(&r->kin, cpu);
      rn[i] = median_of(&r->rnea, cpu);
      mm[i] = median_of(&r->mass, cpu);
      st[i] = median_of(&r->step, cpu);
    }
    fit_pair(nodes, b, s->bias_nodes[cpu]);
    fit_pair(nodes, kn, s->kin_nodes[cpu]);
    fit_pair(nodes, rn, s->rnea_nodes[cpu]);
    fit_pair(segs, mm, s->mass_seg[cpu]);
    fit_pair(segs, st, s->step_seg[cpu]);
  }
}

static void write_tsv(FILE *f, const scale_series *ser, int nser, const bench_stat *arm_mb,
                      const bench_stat *arm_step, int quick) {
  fprintf(f, "# bench-dynamics scaling table (%s run); times in microseconds per call, median over batches\n",
          quick ? "quick" : "full");
  fprintf(f, "# cusp_arm\tm_plus_bias_median_us\t%.4g\tstep_median_us\t%.4g\n", arm_mb->median_us,
          arm_step->median_us);
  for (int cpu = 0; cpu < 2; cpu++)
    for (int k = 0; k < nser; k++)
      fprintf(f,
              "# %s\t%s\tbias_vs_nodes\t%.3f\tmass_matrix_vs_segments\t%.3f\tstep_vs_segments\t%.3f"
              "\tkinematics_vs_nodes\t%.3f\trnea_vs_nodes\t%.3f\n",
              cpu ? "slopes_cpu" : "slopes", ser[k].kind, ser[k].bias_nodes[cpu][0], ser[k].mass_seg[cpu][0],
              ser[k].step_seg[cpu][0], ser[k].kin_nodes[cpu][0], ser[k].rnea_nodes[cpu][0]);
  fprintf(f,
          "#kind\tsegments\tdofs\tnodes\tbias_median_us\tbias_min_us\tbias_max_us\tmass_median_us"
          "\tmass_min_us\tmass_max_us\tstep_median_us\tstep_min_us\tstep_max_us\tbias_per_node_ns"
          "\tkinematics_median_us\trnea_median_us\tbias_cpu_median_us\tmass_cpu_median_us\tstep_cpu_median_us\n");
  for (int k = 0; k < nser; k++)
    for (int i = 0; i < NSIZES; i++) {
      const scale_row *r = &ser[k].row[i];
      fprintf(f,
              "%s\t%d\t%d\t%d\t%.4g\t%.4g\t%.4g\t%.4g\t%.4g\t%.4g\t%.4g\t%.4g\t%.4g\t%.4g\t%.4g\t%.4g\t%.4g\t%.4g"
              "\t%.4g\n",
              ser[k].kind, r->segments, r->dofs, r->nodes, r->bias.median_us, r->bias.min_us, r->bias.max_us,
              r->mass.median_us, r->mass.min_us, r->mass.max_us, r->step.median_us, r->step.min_us,
              r->step.max_us, 1e3 * r->bias.median_us / r->nodes, r->kin.median_us, r->rnea.median_us,
              r->bias.cpu_median_us, r->mass.cpu_median_us, r->step.cpu_median_us);
    }
}

static void json_slopes(FILE *o, const char *key, const double s[2]) {
  fprintf(o, "\"%s\":%.3f,\"%s_N_ge_8\":%.3f", key, s[0], key, s[1]);
}

static void write_json(FILE *o, const scale_series *ser, int nser, const bench_stat *arm_mb,
                       const bench_stat *arm_step, int arm_n, int arm_nodes, const bench_cfg *cfg, int quick,
                       int blas_threads, double offcpu_all, double elapsed) {
  char cpu_name[256];
  cpu_model(cpu_name, sizeof cpu_name);
  struct utsname un;
  int have_un = uname(&un) == 0;
  struct timespec res;
  clock_getres(CLOCK_MONOTONIC, &res);
#ifdef __OPTIMIZE__
  const char *optimized = "true";
#else
  const char *optimized = "false";
#endif

  fprintf(o, "{\"benchmark\":\"bench-dynamics\",\"mode\":\"%s\",", quick ? "quick" : "full");
  fprintf(o, "\"machine\":{\"cpu_model\":");
  json_string(o, cpu_name);
  fprintf(o, ",\"online_cpus\":%ld,\"threads\":1,\"blas_threads\":%d,\"kernel\":", sysconf(_SC_NPROCESSORS_ONLN),
          blas_threads);
  json_string(o, have_un ? un.release : "unknown");
  fprintf(o, ",\"compiler\":");
#if defined(__clang__)
  json_string(o, "clang " __clang_version__);
#elif defined(__GNUC__)
  json_string(o, "gcc " __VERSION__);
#else
  json_string(o, "unknown");
#endif
  fprintf(o, ",\"optimized\":%s,\"timer\":\"CLOCK_MONOTONIC\",\"timer_resolution_ns\":%ld},", optimized,
          (long)res.tv_sec * 1000000000L + res.tv_nsec);
  fprintf(o,
          "\"method\":{\"batches\":%d,\"min_batch_ms\":%g,\"warmup_ms\":%g,\"schedule\":\"batches interleaved "
          "round-robin over all measurements, one untimed call before each batch\",\"statistic\":\"per-call "
          "time of each batch (batch time / calls_per_batch); median, quartiles, min, max over batches; "
          "*_us wall clock (CLOCK_MONOTONIC), cpu_*_us thread CPU time (CLOCK_THREAD_CPUTIME_ID, excludes "
          "time descheduled), offcpu_percent = 100 (1 - CPU / wall)\",\"offcpu_percent_all\":%.1f,"
          "\"step_h_s\":%g,\"step_state\":\"restored before each step\",\"seed\":%llu},",
          cfg->batches, cfg->batch_ms, cfg->warmup_ms, offcpu_all, STEP_H, (unsigned long long)SEED);
  fprintf(o,
          "\"state\":{\"distribution\":\"uniform in [-scale, scale]\",\"pcc_q_scale_m\":%g,"
          "\"pcc_v_scale_m_per_s\":%g,\"pcs_q_curvature_scale_per_m\":%g,\"pcs_q_stretch_scale\":%g,"
          "\"pcs_v_curvature_scale_per_m_s\":%g,\"pcs_v_stretch_scale_per_s\":%g},",
          PCC_Q, PCC_V, PCS_QK, PCS_QE, PCS_VK, PCS_VE);

  fprintf(o, "\"cusp_arm\":{\"dofs\":%d,\"nodes\":%d,", arm_n, arm_nodes);
  json_stat(o, "m_plus_bias", arm_mb);
  fputc(',', o);
  json_stat(o, "step", arm_step);
  fprintf(o, "},");

  fprintf(o,
          "\"scaling\":{\"segments\":[1,2,4,8,16,32,64],\"definitions\":{\"bias\":\"sb_kinematics(q, v) + "
          "sb_bias\",\"kinematics\":\"sb_kinematics(q, v) alone\",\"rnea\":\"sb_bias alone after "
          "kinematics\",\"mass_matrix\":\"sb_mass_matrix alone after kinematics\",\"step\":\"sb_step, h = 1e-3 "
          "s\",\"loglog_slopes\":\"least squares of log(median wall time) vs log(nodes) or log(segments), over "
          "all N and over N >= 8\",\"loglog_slopes_cpu\":\"the same from the thread CPU-time medians\"},");
  for (int k = 0; k < nser; k++) {
    fprintf(o, "\"%s\":{", ser[k].kind);
    if (ser[k].type == SB_SEG_PCC)
      fprintf(o, "\"segment\":{\"type\":\"PCC\",\"length_m\":0.05,\"mass_kg\":0.1,\"slices\":4},");
    else
      fprintf(o, "\"segment\":{\"type\":\"PCS\",\"strains\":\"all 6\",\"length_m\":0.05,\"radius_m\":0.01,"
                 "\"young_pa\":1e6,\"slices\":4},");
    fprintf(o, "\"rows\":[");
    for (int i = 0; i < NSIZES; i++) {
      const scale_row *r = &ser[k].row[i];
      fprintf(o, "%s{\"segments\":%d,\"dofs\":%d,\"nodes\":%d,", i ? "," : "", r->segments, r->dofs, r->nodes);
      json_stat(o, "bias", &r->bias);
      fputc(',', o);
      json_stat(o, "kinematics", &r->kin);
      fputc(',', o);
      json_stat(o, "rnea", &r->rnea);
      fputc(',', o);
      json_stat(o, "mass_matrix", &r->mass);
      fputc(',', o);
      json_stat(o, "step", &r->step);
      fprintf(o,
              ",\"bias_per_node_ns\":%.4g,\"kinematics_per_node_ns\":%.4g,\"rnea_per_node_ns\":%.4g,"
              "\"mass_matrix_per_dof2_ns\":%.4g}",
              1e3 * r->bias.median_us / r->nodes, 1e3 * r->kin.median_us / r->nodes,
              1e3 * r->rnea.median_us / r->nodes, 1e3 * r->mass.median_us / ((double)r->dofs * r->dofs));
    }
    fputc(']', o);
    for (int cpu = 0; cpu < 2; cpu++) {
      fprintf(o, ",\"%s\":{", cpu ? "loglog_slopes_cpu" : "loglog_slopes");
      json_slopes(o, "bias_vs_nodes", ser[k].bias_nodes[cpu]);
      fputc(',', o);
      json_slopes(o, "mass_matrix_vs_segments", ser[k].mass_seg[cpu]);
      fputc(',', o);
      json_slopes(o, "step_vs_segments", ser[k].step_seg[cpu]);
      fputc(',', o);
      json_slopes(o, "kinematics_vs_nodes", ser[k].kin_nodes[cpu]);
      fputc(',', o);
      json_slopes(o, "rnea_vs_nodes", ser[k].rnea_nodes[cpu]);
      fputc('}', o);
    }
    fprintf(o, "}%s", k + 1 < nser ? "," : "");
  }
  fprintf(o, "},\"total_runtime_s\":%.2f}\n", elapsed);
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: bench-dynamics [--quick] [--tsv] [--tsv-file FILE]\n"
          "  --quick          few repetitions (smoke test)\n"
          "  --tsv            print the scaling table as TSV instead of JSON\n"
          "  --tsv-file FILE  also write the TSV table to FILE\n");
}

int main(int argc, char **argv) {
  int quick = 0, tsv = 0;
  const char *tsv_file = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--quick"))
      quick = 1;
    else if (!strcmp(argv[i], "--tsv"))
      tsv = 1;
    else if (!strcmp(argv[i], "--tsv-file") && i + 1 < argc)
      tsv_file = argv[++i];
    else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage(stdout);
      return 0;
    } else {
      usage(stderr);
      return 2;
    }
  }
  const bench_cfg cfg = quick ? (bench_cfg){5, 0.5, 2, 2} : (bench_cfg){15, 5, 30, 5};
  const int R = cfg.batches;

  const char *blas_env = getenv("OPENBLAS_NUM_THREADS");
  if (!blas_env || !*blas_env) openblas_set_num_threads(1);
  int blas_threads = openblas_get_num_threads();

  double t_start = now_s();
  int status = 1;

  /* Models and measurements. */
  bench_stat arm_mb, arm_step;
  sb_cusp_arm arm;
  sb_preset_cusp_arm(&arm);
  const double *q, *v;
  const sb_model *am = add_model(&arm.chain, "cusp arm", &q, &v);
  if (!am) goto done;
  if (add_job("cusp arm M + bias", run_m_bias, am, q, v, &arm_mb, R) ||
      add_job("cusp arm step", run_step, am, q, v, &arm_step, R))
    goto done;

  scale_series ser[2] = {{.kind = "pcc", .type = SB_SEG_PCC}, {.kind = "pcs", .type = SB_SEG_PCS}};
  sb_segment_params seg[64];
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < NSIZES; i++) {
      int N = k_sizes[i];
      sb_chain_params chain;
      chain_of(ser[k].type, N, seg, &chain);
      char name[24];
      snprintf(name, sizeof name, "%s N=%d", ser[k].kind, N);
      const sb_model *m = add_model(&chain, name, &q, &v);
      if (!m) goto done;
      scale_row *r = &ser[k].row[i];
      r->segments = N;
      r->dofs = m->n;
      r->nodes = m->nnode;
      static const char *what[5] = {"bias", "kin", "rnea", "M", "step"};
      bench_fn fns[5] = {run_bias, run_kin, run_rnea, run_mass, run_step};
      bench_stat *outs[5] = {&r->bias, &r->kin, &r->rnea, &r->mass, &r->step};
      for (int f = 0; f < 5; f++) {
        char label[48];
        snprintf(label, sizeof label, "%s %s", name, what[f]);
        if (add_job(label, fns[f], m, q, v, outs[f], R)) goto done;
      }
    }

  /* Warm-up and batch sizes. */
  fprintf(stderr, "calibrating %d measurements ...\n", g_njobs);
  for (int j = 0; j < g_njobs; j++) g_jobs[j].K = calibrate(g_jobs[j].fn, &g_jobs[j].ctx, &cfg);

  /* Interleaved timed batches. */
  for (int r = 0; r < R; r++) {
    fprintf(stderr, "\rround %d/%d", r + 1, R);
    for (int j = 0; j < g_njobs; j++)
      time_batch(g_jobs[j].fn, &g_jobs[j].ctx, g_jobs[j].K, &g_jobs[j].us[r], &g_jobs[j].cpu[r]);
  }
  fprintf(stderr, "\n");
  for (int j = 0; j < g_njobs; j++) {
    if (g_jobs[j].ctx.failed) {
      fprintf(stderr, "bench-dynamics: %s: step failed: %s\n", g_jobs[j].label, g_jobs[j].ctx.err);
      goto done;
    }
    *g_jobs[j].out = summarize(g_jobs[j].us, g_jobs[j].cpu, R, g_jobs[j].K);
  }
  for (int k = 0; k < 2; k++) fit_slopes(&ser[k]);
  double elapsed = now_s() - t_start, sum_wall = 0, sum_cpu = 0;
  for (int j = 0; j < g_njobs; j++)
    for (int r = 0; r < R; r++) {
      sum_wall += g_jobs[j].us[r] * (double)g_jobs[j].K;
      sum_cpu += g_jobs[j].cpu[r] * (double)g_jobs[j].K;
    }
  double offcpu_all = sum_wall > 0 ? fmax(0, 100 * (1 - sum_cpu / sum_wall)) : 0;

  /* Progress summary. */
  fprintf(stderr, "cusp arm (n = %d, nodes = %d): M + bias %.3g us, step %.3g us (median)\n", am->n, am->nnode,
          arm_mb.median_us, arm_step.median_us);
  fprintf(stderr, "kind   N    n nodes   bias_us    kin_us   rnea_us      M_us   step_us  (median)\n");
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < NSIZES; i++) {
      const scale_row *r = &ser[k].row[i];
      fprintf(stderr, "%-4s %3d %4d %5d %9.4g %9.4g %9.4g %9.4g %9.4g\n", ser[k].kind, r->segments, r->dofs,
              r->nodes, r->bias.median_us, r->kin.median_us, r->rnea.median_us, r->mass.median_us,
              r->step.median_us);
    }
  fprintf(stderr, "done in %.1f s; descheduled %.1f%% of the timed batches (checksum %g)\n", elapsed, offcpu_all,
          (double)g_sink);

  if (tsv_file) {
    FILE *f = fopen(tsv_file, "w");
    if (!f) {
      perror(tsv_file);
      goto done;
    }
    write_tsv(f, ser, 2, &arm_mb, &arm_step, quick);
    fclose(f);
  }
  if (tsv)
    write_tsv(stdout, ser, 2, &arm_mb, &arm_step, quick);
  else
    write_json(stdout, ser, 2, &arm_mb, &arm_step, am->n, am->nnode, &cfg, quick, blas_threads, offcpu_all,
               elapsed);
  status = 0;
done:
  free_all();
  return status;
}

/* bench-contact: how the contact pipeline's cost scales (issue 15, item 3).
 *
 *   bench-contact [--rounds R] [--steps K] [--quick] [--case LABEL] [--src DIR]
 *                 [--lcp-matrix stored|entries|operator|auto] [--set KEY=VALUE]...
 *
 * Cases, each a scene stepped to the start of its window, then timed over
 * the window (a phase of the motion):
 *   scenario_a_{lcp,penalty}_{lying,sliding}  Scenario A (mjcf/scenario_a.xml)
 *        with contact=lcp and contact=penalty: lying t in [0.5, 1.0) s,
 *        sliding [1.5, 2.0) s (the actuation ramps from 1 to 2 s)
 *   arm{3,6,12}_{lying,sliding}  Scenario A's 0.45 m, 1.975 kg arm cut into
 *        n sections (chamber stiffness and damping x n/3: springs in series,
 *        the same pre-elongation strain, the distal two thirds actuated as
 *        in Scenario A; bench-eval scaling's arm), same windows
 *   arm24_{lying,sliding}  the same arm in 24 sections: run only when named
 *        by --case (the asymptote of the dofs exponent, under callgrind);
 *        not in the default run nor its exponent
 *   rod_{plane,free}  a Cosserat rod of 80 elements (240 coordinates) with a
 *        contact disk at each element's end, lying along a plane
 *        (bench/scenes/rod_plane.xml), and the same rod without the plane
 *        (rod_free.xml): t in [0.3, 0.6) s
 *   rope_plane_tiled  cosseratbench's pile rope, 24 elements tiled by 73 disks
 *        (r = 8: ten LCP unknowns a contact), lying on a plane
 *        (bench/scenes/rope_plane_tiled.xml): t in [0.1, 0.2) s; run only when
 *        named by --case
 * --lcp-matrix sets every case's key lcp_matrix (what the solve reads from
 * the kept contacts' operator; the scenes' default: operator); --set KEY=VALUE
 * (up to 8) any key of every case's soft instance, e.g. surface_layer=0.
 * The windows are cut into R rounds of equal steps (--steps K: K steps per
 * round from the window's start instead, e.g. a short window for callgrind); round r steps every
 * case's r-th block in turn, so a burst of load from other processes
 * spreads over all cases and the ratios of one round compare one machine
 * state. Per case: the median, quartiles and range over the rounds of the
 * per-step wall time, the soft dofs, mean contacts given and kept and LCP
 * size, steps that solved an LCP ("solves"), fallbacks (the first solver
 * failed) and their fraction, and the solver calls of those steps (every
 * stage-1 pass, proximal step, fallback: "lcp_solves") with the ones not
 * answered by the warm start's active set ("cold_solves"), and the steps
 * that made more than one stage-1 pass ("multipass_steps": a dropped
 * contact the first pass's impulses would close). Ratios:
 * median over the rounds of the per-round ratio (with quartiles): lcp /
 * penalty on Scenario A, rod on the plane / free, and per phase the
 * exponent of a least-squares fit of log step time against log dofs over
 * the three arms (medians).
 *
 * --case LABEL runs one case alone (for callgrind: when built with
 * valgrind's callgrind.h, only the timed window is instrumented, so
 *   valgrind --tool=callgrind --instr-atstart=no build/bench-contact --case X
 * counts the instructions of the window; bench/contact_instructions.sh does
 * that for every case).
 *
 * Output: one JSON object on one line on stdout, progress on stderr. Exit
 * code 0, 1 when a case went unstable (reported as not completed), 2 on bad
 * arguments or a scene that does not load. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../apps/mj_state.h"
#include "bench_util.h"
#include "cut_arm.h"
#include "cusp.h"

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define WINDOW_BEGIN() CALLGRIND_START_INSTRUMENTATION
#define WINDOW_END() CALLGRIND_STOP_INSTRUMENTATION
#endif
#endif
#ifndef WINDOW_BEGIN
#define WINDOW_BEGIN() ((void)0)
#define WINDOW_END() ((void)0)
#endif

#ifndef CUSP_SOURCE_DIR
#define CUSP_SOURCE_DIR "."
#endif

#define MAX_CASES 16

typedef struct {
  char label[48];
  const char *scene;      /* relative to the source directory */
  int sections;           /* > 0: the cut arm of n sections */
  int named_only;         /* run only when --case names it */
  const char *contact;    /* NULL: the scene's */
  const char *instance;   /* the plugin instance the keys go to (NULL: "arm") */
  double t0, t1;          /* timed window, s */
  /* run */
  mjModel *m;
  mjData *d;
  int dofs, steps_per_round, failed, nround;
  double *round_us;
  double sum_contacts, sum_kept, sum_nvar;
  long lcp_solves, cold_solves, multipass_steps;
  long nsteps, solves0, fallbacks0, solves, fallbacks;
  char error[1800];
} bench_case;

/* --set KEY=VALUE: keys set on every case's instance */
#define MAX_SETS 8
typedef struct {
  int n;
  char key[MAX_SETS][32], value[MAX_SETS][CUT_ARM_VALUE_LEN];
} key_sets;

static int load_case(bench_case *c, const char *src, const char *lcp_matrix, const key_sets *sets) {
  cut_arm_key ov[CUT_ARM_NKEYS + 2 + MAX_SETS];
  int nov = c->sections > 0 ? cut_arm_keys(c->sections, 1, ov) : 0;
  if (c->contact) {
    snprintf(ov[nov].key, 32, "contact");
    snprintf(ov[nov++].value, CUT_ARM_VALUE_LEN, "%s", c->contact);
  }
  if (lcp_matrix) {
    snprintf(ov[nov].key, 32, "lcp_matrix");
    snprintf(ov[nov++].value, CUT_ARM_VALUE_LEN, "%s", lcp_matrix);
  }
  for (int i = 0; i < sets->n; i++) {
    snprintf(ov[nov].key, 32, "%s", sets->key[i]);
    snprintf(ov[nov++].value, CUT_ARM_VALUE_LEN, "%s", sets->value[i]);
  }
  cusp_override co[CUT_ARM_NKEYS + 2 + MAX_SETS];
  for (int i = 0; i < nov; i++) co[i] = (cusp_override){c->instance ? c->instance : "arm", ov[i].key, ov[i].value};
  char path[1200];
  snprintf(path, sizeof path, "%s/%s", src, c->scene);
  c->m = cusp_load_with(path, co, nov, c->error, sizeof c->error);
  if (!c->m) return -1;
  c->d = mj_makeData(c->m);
  if (!c->d) {
    snprintf(c->error, sizeof c->error, "%s: mj_makeData failed: %s", path, cusp_last_error());
    return -1;
  }
  const double *q, *v;
  c->dofs = cusp_soft_state(c->m, c->d, 0, &q, &v);
  return 0;
}

static void print_stats(const double *x, int n) {
  double *s = malloc(sizeof(double) * (n ? n : 1));
  memcpy(s, x, sizeof(double) * n);
  qsort(s, n, sizeof(double), cmp_double);
  printf("{\"median\": ");
  json_number(n ? quantile(s, n, 0.5) : NAN);
  printf(", \"q1\": ");
  json_number(n ? quantile(s, n, 0.25) : NAN);
  printf(", \"q3\": ");
  json_number(n ? quantile(s, n, 0.75) : NAN);
  printf(", \"min\": ");
  json_number(n ? s[0] : NAN);
  printf(", \"max\": ");
  json_number(n ? s[n - 1] : NAN);
  printf("}");
  free(s);
}

static double median_of(const double *x, int n) {
  if (n <= 0) return NAN;
  double *s = malloc(sizeof(double) * n);
  memcpy(s, x, sizeof(double) * n);
  qsort(s, n, sizeof(double), cmp_double);
  double r = quantile(s, n, 0.5);
  free(s);
  return r;
}

static bench_case *find(bench_case *cs, int n, const char *label) {
  for (int i = 0; i < n; i++)
    if (!strcmp(cs[i].label, label)) return cs[i].m && !cs[i].failed ? &cs[i] : NULL;
  return NULL;
}

/* Per-round ratio a / b: median and quartiles over the rounds. */
static void print_ratio(const char *name, const bench_case *a, const bench_case *b, int R, int *first) {
  if (!a || !b) return;
  double *r = malloc(sizeof(double) * R);
  for (int k = 0; k < R; k++) r[k] = a->round_us[k] / b->round_us[k];
  printf("%s\"%s\": ", *first ? "" : ", ", name);
  *first = 0;
  print_stats(r, R);
  free(r);
}

/* Exponent p of step time ~ dofs^p over the given cases (least squares in logs). */
static double dof_exponent(bench_case **c, int n) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (int i = 0; i < n; i++) {
    double x = log(c[i]->dofs), y = log(median_of(c[i]->round_us, c[i]->nround));
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

int main(int argc, char **argv) {
  int R = 10, K = 0, quick = 0;
  const char *only = NULL, *src = CUSP_SOURCE_DIR, *lcp_matrix = NULL;
  key_sets sets = {0};
  for (int i = 1; i < argc; i++) {
    double x;
    if (!strcmp(argv[i], "--quick")) {
      quick = 1;
    } else if (!strcmp(argv[i], "--rounds") && i + 1 < argc && !parse_positive(argv[i + 1], &x) && x == floor(x) &&
               x <= 1000) {
      R = (int)x;
      i++;
    } else if (!strcmp(argv[i], "--steps") && i + 1 < argc && !parse_positive(argv[i + 1], &x) && x == floor(x) &&
               x <= 100000) {
      K = (int)x;
      i++;
    } else if (!strcmp(argv[i], "--case") && i + 1 < argc) {
      only = argv[++i];
    } else if (!strcmp(argv[i], "--src") && i + 1 < argc) {
      src = argv[++i];
    } else if (!strcmp(argv[i], "--lcp-matrix") && i + 1 < argc) {
      lcp_matrix = argv[++i]; /* the key's words are checked by the loader, which names them */
    } else if (!strcmp(argv[i], "--set") && i + 1 < argc) {
      const char *arg = argv[++i], *eq = strchr(arg, '='); /* the loader checks the key and its value */
      const char *why = sets.n == MAX_SETS ? "more than 8 of them"
                        : !eq || eq == arg ? "not KEY=VALUE"
                        : eq - arg >= 32 ? "the key is longer than 31 characters"
                        : strlen(eq + 1) >= CUT_ARM_VALUE_LEN ? "the value is longer than 1023 characters"
                        : NULL;
      if (why) {
        fprintf(stderr, "bench-contact: --set \"%s\": %s\n", arg, why);
        return 2;
      }
      snprintf(sets.key[sets.n], 32, "%.*s", (int)(eq - arg), arg);
      snprintf(sets.value[sets.n++], CUT_ARM_VALUE_LEN, "%s", eq + 1);
    } else {
      fprintf(stderr, "bench-contact: bad argument \"%s\"\n"
                      "usage: bench-contact [--rounds R] [--steps K] [--quick] [--case LABEL] [--src DIR] "
                      "[--lcp-matrix stored|entries|operator|auto] [--set KEY=VALUE]...\n", argv[i]);
      return 2;
    }
  }
  bench_case all[MAX_CASES];
  int n = 0;
  memset(all, 0, sizeof all);
  const char *phase[2] = {"lying", "sliding"};
  const double w0[2] = {0.5, 1.5};
  for (int p = 0; p < 2; p++)
    for (int k = 0; k < 2; k++) {
      bench_case *c = &all[n++];
      snprintf(c->label, sizeof c->label, "scenario_a_%s_%s", k ? "penalty" : "lcp", phase[p]);
      c->scene = "mjcf/scenario_a.xml";
      c->contact = k ? "penalty" : "lcp";
      c->t0 = w0[p];
      c->t1 = w0[p] + 0.5;
    }
  const int sections[3] = {3, 6, 12};
  for (int p = 0; p < 2; p++)
    for (int k = 0; k < 3; k++) {
      bench_case *c = &all[n++];
      snprintf(c->label, sizeof c->label, "arm%d_%s", sections[k], phase[p]);
      c->scene = "mjcf/scenario_a.xml";
      c->sections = sections[k];
      c->t0 = w0[p];
      c->t1 = w0[p] + 0.5;
    }
  for (int p = 0; p < 2; p++) {
    bench_case *c = &all[n++];
    snprintf(c->label, sizeof c->label, "arm24_%s", phase[p]);
    c->scene = "mjcf/scenario_a.xml";
    c->sections = 24;
    c->named_only = 1;
    c->t0 = w0[p];
    c->t1 = w0[p] + 0.5;
  }
  for (int k = 0; k < 2; k++) {
    bench_case *c = &all[n++];
    snprintf(c->label, sizeof c->label, "rod_%s", k ? "free" : "plane");
    c->scene = k ? "bench/scenes/rod_free.xml" : "bench/scenes/rod_plane.xml";
    c->t0 = 0.3;
    c->t1 = 0.6;
  }
  {
    bench_case *c = &all[n++];
    snprintf(c->label, sizeof c->label, "rope_plane_tiled");
    c->scene = "bench/scenes/rope_plane_tiled.xml";
    c->instance = "rod0";
    c->named_only = 1;
    c->t0 = 0.1;
    c->t1 = 0.2;
  }
  if (quick) { /* the smoke test: short windows early in the run */
    R = 2;
    for (int i = 0; i < n; i++) {
      all[i].t0 = 0.01;
      all[i].t1 = 0.02;
    }
  }
  bench_case *cs[MAX_CASES];
  int nc = 0;
  for (int i = 0; i < n; i++)
    if (only ? !strcmp(only, all[i].label) : !all[i].named_only) cs[nc++] = &all[i];
  if (nc == 0) {
    fprintf(stderr, "bench-contact: no case \"%s\"; cases:", only);
    for (int i = 0; i < n; i++) fprintf(stderr, " %s", all[i].label);
    fprintf(stderr, "\n");
    return 2;
  }
  for (int i = 0; i < nc; i++) {
    bench_case *c = cs[i];
    if (load_case(c, src, lcp_matrix, &sets)) {
      fprintf(stderr, "bench-contact: %s: %s\n", c->label, c->error);
      return 2;
    }
    double h = c->m->opt.timestep;
    int total = (int)floor((c->t1 - c->t0) / h + 0.5);
    c->steps_per_round = K > 0 ? K : total / R > 0 ? total / R : 1;
    c->t1 = c->t0 + c->steps_per_round * R * h;
    c->round_us = calloc(R, sizeof(double));
    fprintf(stderr, "bench-contact: %s: %d dofs, to t = %.2f s\n", c->label, c->dofs, c->t0);
    while (c->d->time < c->t0 - 0.5 * h && !c->failed) {
      mj_step(c->m, c->d);
      c->failed = !state_finite(c->m, c->d);
    }
    const cusp_step_report *rep = cusp_report(c->m, c->d);
    c->solves0 = rep ? rep->solves : 0;
    c->fallbacks0 = rep ? rep->fallbacks : 0;
  }
  for (int r = 0; r < R; r++) {
    for (int i = 0; i < nc; i++) {
      bench_case *c = cs[i];
      if (c->failed) continue;
      double t0 = now_s();
      WINDOW_BEGIN();
      for (int k = 0; k < c->steps_per_round; k++) {
        mj_step(c->m, c->d);
        /* a pointer's read: the step's own counts */
        const cusp_step_report *rep = cusp_report(c->m, c->d);
        if (rep) {
          c->sum_contacts += rep->ncontact;
          c->sum_kept += rep->nkept;
          c->sum_nvar += rep->info.nvar;
          c->lcp_solves += rep->info.solves;
          c->cold_solves += rep->info.cold_solves;
          c->multipass_steps += rep->info.rank_passes > 1;
        }
        c->nsteps++;
      }
      WINDOW_END();
      c->round_us[r] = 1e6 * (now_s() - t0) / c->steps_per_round;
      c->nround = r + 1;
      c->failed = !state_finite(c->m, c->d);
      const cusp_step_report *rep = cusp_report(c->m, c->d);
      if (rep) {
        c->solves = rep->solves - c->solves0;
        c->fallbacks = rep->fallbacks - c->fallbacks0;
      }
    }
    fprintf(stderr, "\rbench-contact: round %d/%d", r + 1, R);
  }
  fprintf(stderr, "\n");
  char cpu[256];
  cpu_model(cpu, sizeof cpu);
  int any_failed = 0;
  printf("{\"benchmark\": \"contact\", \"mujoco\": ");
  json_string(stdout, mj_versionString());
  printf(", \"cpu\": ");
  json_string(stdout, cpu);
  printf(", \"rounds\": %d, \"cases\": [", R);
  for (int i = 0; i < nc; i++) {
    bench_case *c = cs[i];
    any_failed |= c->failed;
    printf("%s{\"case\": ", i ? ", " : "");
    json_string(stdout, c->label);
    printf(", \"scene\": ");
    json_string(stdout, c->scene);
    printf(", \"completed\": %s, \"window_s\": [", c->failed ? "false" : "true");
    json_number(c->t0);
    printf(", ");
    json_number(c->t1);
    printf("], \"dofs\": %d, \"steps_per_round\": %d, \"step_us\": ", c->dofs, c->steps_per_round);
    print_stats(c->round_us, c->nround);
    printf(", \"mean_contacts\": ");
    json_number(c->nsteps ? c->sum_contacts / c->nsteps : NAN);
    printf(", \"mean_kept\": ");
    json_number(c->nsteps ? c->sum_kept / c->nsteps : NAN);
    printf(", \"mean_lcp_size\": ");
    json_number(c->nsteps ? c->sum_nvar / c->nsteps : NAN);
    printf(", \"solves\": %ld, \"fallbacks\": %ld, \"fallback_fraction\": ", c->solves, c->fallbacks);
    json_number(c->solves ? (double)c->fallbacks / c->solves : 0);
    printf(", \"lcp_solves\": %ld, \"cold_solves\": %ld, \"multipass_steps\": %ld}", c->lcp_solves, c->cold_solves,
           c->multipass_steps);
  }
  printf("], \"ratios\": {");
  int first = 1;
  for (int p = 0; p < 2; p++) {
    char a[64], b[64], name[64];
    snprintf(a, sizeof a, "scenario_a_lcp_%s", phase[p]);
    snprintf(b, sizeof b, "scenario_a_penalty_%s", phase[p]);
    snprintf(name, sizeof name, "lcp_over_penalty_%s", phase[p]);
    print_ratio(name, find(all, n, a), find(all, n, b), R, &first);
  }
  print_ratio("rod_plane_over_free", find(all, n, "rod_plane"), find(all, n, "rod_free"), R, &first);
  for (int p = 0; p < 2; p++) {
    bench_case *arms[3];
    int na = 0;
    for (int k = 0; k < 3; k++) {
      char l[64];
      snprintf(l, sizeof l, "arm%d_%s", sections[k], phase[p]);
      if ((arms[na] = find(all, n, l))) na++;
    }
    if (na < 2) continue;
    printf("%s\"dof_exponent_%s\": ", first ? "" : ", ", phase[p]);
    first = 0;
    json_number(dof_exponent(arms, na));
  }
  printf("}, \"completed\": %s}\n", any_failed ? "false" : "true");
  for (int i = 0; i < nc; i++) {
    mj_deleteData(cs[i]->d);
    mj_deleteModel(cs[i]->m);
    free(cs[i]->round_us);
  }
  return any_failed ? 1 : 0;
}

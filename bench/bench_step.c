/* Cost of one mj_step of whole scenes, measured together so that their
 * ratios come from one run on one machine state.
 *
 *   bench-step SCENE.xml [SCENE.xml ...] [--steps K] [--rounds R] [--warmup T] [--quick]
 *
 * Every scene (soft scenes through cusp_load, plain MuJoCo scenes too) is
 * loaded, stepped for T simulated seconds (warm-up: the arm lies or the
 * humanoid falls as in a normal run), then R rounds are timed: round r runs
 * K steps of every scene in turn, continuing each trajectory, so a burst of
 * load from other processes spreads over all scenes instead of spoiling
 * one. Per scene: median, quartiles, min and max over the rounds of the
 * per-step wall time, and for soft scenes the median of cusp's stage times
 * over the timed steps. A scene that goes unstable (non-finite state) is
 * reported as failed and the exit code is 1.
 *
 * Output: one JSON object on one line on stdout; progress on stderr. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../apps/mj_state.h"
#include "bench_util.h"
#include "cusp.h"

#define MAX_SCENES 16

typedef struct {
  const char *path;
  mjModel *m;
  mjData *d;
  double *round_us;           /* per-step time of each round */
  double *stage[6];           /* per timed step: dynamics, collision, assembly, conditioning, solve, total */
  int nstage;
  int failed;
} scene_t;

static const char *const stage_names[6] = {"dynamics", "collision", "assembly", "conditioning", "solve", "total"};

static void usage(FILE *f) {
  fprintf(f, "usage: bench-step SCENE.xml [SCENE.xml ...] [--steps K] [--rounds R] [--warmup SECONDS] [--quick]\n");
}

static void print_stats(const double *x, int n) {
  double *s = malloc(sizeof(double) * (n ? n : 1));
  memcpy(s, x, sizeof(double) * n);
  qsort(s, n, sizeof(double), cmp_double);
  printf("{\"median\": ");
  json_number(quantile(s, n, 0.5));
  printf(", \"q1\": ");
  json_number(quantile(s, n, 0.25));
  printf(", \"q3\": ");
  json_number(quantile(s, n, 0.75));
  printf(", \"min\": ");
  json_number(n ? s[0] : NAN);
  printf(", \"max\": ");
  json_number(n ? s[n - 1] : NAN);
  printf("}");
  free(s);
}

int main(int argc, char **argv) {
  int K = 200, R = 25, nscene = 0;
  double warmup = 1.0;
  scene_t sc[MAX_SCENES];
  memset(sc, 0, sizeof sc);
  for (int i = 1; i < argc; i++) {
    double x;
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(argv[i], "--quick")) {
      K = 20;
      R = 3;
      warmup = 0.05;
    } else if ((!strcmp(argv[i], "--steps") || !strcmp(argv[i], "--rounds")) && i + 1 < argc &&
               !parse_positive(argv[i + 1], &x) && x == floor(x) && x < 1e7) {
      if (argv[i][2] == 's') K = (int)x;
      else R = (int)x;
      i++;
    } else if (!strcmp(argv[i], "--warmup") && i + 1 < argc && !parse_positive(argv[i + 1], &x)) {
      warmup = x;
      i++;
    } else if (argv[i][0] != '-' && nscene < MAX_SCENES) {
      sc[nscene++].path = argv[i];
    } else {
      fprintf(stderr, "bench-step: bad argument \"%s\"\n", argv[i]);
      usage(stderr);
      return 2;
    }
  }
  if (nscene == 0) {
    usage(stderr);
    return 2;
  }
  for (int s = 0; s < nscene; s++) {
    char err[1024];
    sc[s].m = cusp_load(sc[s].path, err, sizeof err);
    if (!sc[s].m) {
      fprintf(stderr, "bench-step: %s\n", err);
      return 2;
    }
    sc[s].d = mj_makeData(sc[s].m);
    sc[s].round_us = calloc(R, sizeof(double));
    for (int k = 0; k < 6; k++) sc[s].stage[k] = calloc((size_t)R * K, sizeof(double));
    fprintf(stderr, "bench-step: %s warm-up %.2f s\n", sc[s].path, warmup);
    while (sc[s].d->time < warmup && !sc[s].failed) {
      mj_step(sc[s].m, sc[s].d);
      sc[s].failed = !state_finite(sc[s].m, sc[s].d);
    }
  }
  for (int r = 0; r < R; r++) {
    for (int s = 0; s < nscene; s++) {
      scene_t *c = &sc[s];
      if (c->failed) continue;
      double t0 = now_s();
      for (int k = 0; k < K; k++) mj_step(c->m, c->d);
      c->round_us[r] = 1e6 * (now_s() - t0) / K;
      c->failed = !state_finite(c->m, c->d);
      /* the stage times of the round's last step (reading each step would
       * time the reading too) */
      const cusp_step_report *rep = cusp_report(c->m, c->d);
      if (rep) {
        const double v[6] = {rep->dynamics_us, rep->collision_us, rep->assembly_us, rep->conditioning_us,
                             rep->solve_us, rep->total_us};
        for (int k = 0; k < 6; k++) c->stage[k][c->nstage] = v[k];
        c->nstage++;
      }
    }
    fprintf(stderr, "\rbench-step: round %d/%d", r + 1, R);
  }
  fprintf(stderr, "\n");
  char cpu[256];
  cpu_model(cpu, sizeof cpu);
  int any_failed = 0;
  printf("{\"benchmark\": \"step\", \"mujoco\": ");
  json_string(stdout, mj_versionString());
  printf(", \"cpu\": ");
  json_string(stdout, cpu);
  printf(", \"steps_per_round\": %d, \"rounds\": %d, \"warmup_s\": ", K, R);
  json_number(warmup);
  printf(", \"scenes\": [");
  for (int s = 0; s < nscene; s++) {
    scene_t *c = &sc[s];
    any_failed |= c->failed;
    printf("%s{\"scene\": ", s ? ", " : "");
    json_string(stdout, c->path);
    printf(", \"completed\": %s, \"nv\": %d, \"soft_instances\": %d, \"step_us\": ", c->failed ? "false" : "true",
           (int)c->m->nv, cusp_instance_count(c->m));
    print_stats(c->round_us, c->failed ? 0 : R);
    if (c->nstage) {
      printf(", \"stages_us\": {");
      for (int k = 0; k < 6; k++) {
        printf("%s\"%s\": ", k ? ", " : "", stage_names[k]);
        print_stats(c->stage[k], c->nstage);
      }
      printf("}");
    }
    printf("}");
  }
  printf("]");
  if (nscene > 1 && !sc[0].failed) {
    printf(", \"ratio_to_last\": [");
    double *a = malloc(sizeof(double) * R), *b = malloc(sizeof(double) * R);
    for (int s = 0; s < nscene; s++) {
      memcpy(a, sc[s].round_us, sizeof(double) * R);
      memcpy(b, sc[nscene - 1].round_us, sizeof(double) * R);
      qsort(a, R, sizeof(double), cmp_double);
      qsort(b, R, sizeof(double), cmp_double);
      printf("%s", s ? ", " : "");
      json_number(sc[s].failed || sc[nscene - 1].failed ? NAN : quantile(a, R, 0.5) / quantile(b, R, 0.5));
    }
    free(a);
    free(b);
    printf("]");
  }
  printf(", \"completed\": %s}\n", any_failed ? "false" : "true");
  for (int s = 0; s < nscene; s++) {
    mj_deleteData(sc[s].d);
    mj_deleteModel(sc[s].m);
    free(sc[s].round_us);
    for (int k = 0; k < 6; k++) free(sc[s].stage[k]);
  }
  return any_failed ? 1 : 0;
}

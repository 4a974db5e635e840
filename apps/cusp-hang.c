/* cusp-hang: the CUSP arm of paper 000 hanging under gravity from rest,
 * simulated with the implicit step; prints a short summary (or JSON). This
 * is the bundled default job until the MuJoCo viewer exists. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "chain.h"
#include "presets.h"
#include "cli_util.h"

static int usage(const char *msg) {
  if (msg) fprintf(stderr, "cusp-hang: %s\n", msg);
  fprintf(stderr, "usage: cusp-hang [--seconds T] [--timestep H] [--json]\n");
  return 2;
}

int main(int argc, char **argv) {
  double T = 5, h = 1e-3;
  int json = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--json")) json = 1;
    else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) { if (parse_positive(argv[++i], &T)) return usage("--seconds needs a positive number"); }
    else if (!strcmp(argv[i], "--timestep") && i + 1 < argc) { if (parse_positive(argv[++i], &h)) return usage("--timestep needs a positive number"); }
    else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) { usage(NULL); return 0; }
    else {
      char msg[256];
      snprintf(msg, sizeof msg, "unknown or incomplete argument '%s'", argv[i]);
      return usage(msg);
    }
  }
  if (h > T) return usage("--timestep is longer than --seconds");

  char err[256];
  sb_cusp_arm arm;
  sb_preset_cusp_arm(&arm);
  sb_model *m = sb_model_create(&arm.chain, err, sizeof err);
  if (!m) { fprintf(stderr, "cusp-hang: %s\n", err); return 1; }
  sb_state *s = sb_state_create(m);
  sb_work *w = sb_work_create(m);
  int steps = (int)lround(T / h), rc = 0;
  sb_pose tip;
  if (!json) printf("CUSP arm, 3 PCC sections (9 chamber coordinates), hanging from rest, h = %g s\n", h);
  double t0 = wall_seconds(), next_report = 0;
  for (int k = 0; k < steps; k++) {
    if (sb_step(m, s, w, NULL, h, NULL, NULL, err, sizeof err)) {
      fprintf(stderr, "cusp-hang: step %d failed: %s\n", k, err);
      rc = 1;
      break;
    }
    if (!json && s->t + 1e-12 >= next_report) {
      sb_kinematics(m, w, s->q, s->v);
      sb_point_kinematics(m, w, 2, 0.15, &tip, NULL, NULL, NULL);
      printf("  t = %5.2f s  tip z = %.6f m  max |dl/dt| = %.2e m/s\n", s->t, tip.p[2],
             fmax(fabs(s->v[0]), fmax(fabs(s->v[3]), fabs(s->v[6]))));
      next_report += T / 10;
    }
  }
  double wall = wall_seconds() - t0;
  double *r = calloc(m->n, sizeof(double)), res = 0;
  sb_static_residual(m, w, s->q, NULL, NULL, 0, r);
  for (int i = 0; i < m->n; i++) res = fmax(res, fabs(r[i]));
  sb_kinematics(m, w, s->q, s->v);
  sb_point_kinematics(m, w, 2, 0.15, &tip, NULL, NULL, NULL);
  double T_, V_, E_;
  sb_energy(m, w, &T_, &V_, &E_);
  if (json) {
    printf("{\"sim_time\": %.6g, \"steps\": %d, \"timestep\": %g, \"completed\": %s, \"wall_s\": %.6g, "
           "\"us_per_step\": %.4g, \"realtime_factor\": %.4g, \"tip_pos\": [%.9g, %.9g, %.9g], "
           "\"elongation_m\": [", s->t, steps, h, rc ? "false" : "true", wall, 1e6 * wall / steps, s->t / wall,
           tip.p[0], tip.p[1], tip.p[2]);
    for (int i = 0; i < m->n; i++) printf("%s%.9g", i ? ", " : "", s->q[i]);
    printf("], \"force_residual_N\": %.3g, \"energy_J\": {\"kinetic\": %.6g, \"gravity\": %.6g, \"elastic\": %.6g}}\n",
           res, T_, V_, E_);
  } else {
    printf("after %.2f s: tip at (%.6f, %.6f, %.6f) m, %.4f m below the base\n", s->t, tip.p[0], tip.p[1],
           tip.p[2], 1.0 - tip.p[2]);
    printf("section elongations: %.6f %.6f %.6f m (equal chambers: pure extension)\n", s->q[0], s->q[3], s->q[6]);
    printf("static force residual %.2e N; %d steps in %.3f s = %.2f us/step, %.0fx realtime\n", res, steps, wall,
           1e6 * wall / steps, s->t / wall);
  }
  free(r);
  sb_work_free(w);
  sb_state_free(s);
  sb_model_free(m);
  return rc;
}

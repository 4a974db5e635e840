/* cusp-sim: loads a scene (plain MuJoCo or with cusp soft arms), runs it
 * headless for a given simulated time and reports the outcome: a short
 * summary, or JSON on the last line of stdout. Optional per-step CSV log.
 * Exit code: 0 ran to the end, 1 the simulation failed (non-finite state,
 * MuJoCo instability warning, cusp NaN event), 2 bad arguments or input. */
#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <errno.h>
#include <sys/stat.h>

#include "cusp.h"
#include "cli_util.h"
#include "mj_state.h"

#define PROGRESS_WALL_S 2.0 /* seconds of wall time between progress lines */

/* The usage text: on stdout for --help (exit 0), on stderr after a bad
 * argument (exit 2). */
static int usage(FILE *out, const char *msg) {
  if (msg) fprintf(stderr, "cusp-sim: %s\n", msg);
  fprintf(out,
          "usage: cusp-sim SCENE.xml [--seconds T] [--timestep H] [--set INSTANCE.KEY=VALUE]...\n"
          "                [--log FILE.csv] [--dump-lcp DIR] [--max-penetration D] [--json]\n"
          "  --seconds T    simulated time, s (default 2)\n"
          "  --timestep H   overrides the scene's timestep, s\n"
          "  --set I.K=V    overrides key K of soft instance I (repeatable)\n"
          "  --log FILE     CSV, one row per step: contacts, the LCP, every soft tip and\n"
          "                 every free body's pose (units in the column names)\n"
          "  --dump-lcp DIR each step's contact LCP as DIR/step_NNNNNNN.dat (made if missing)\n"
          "  --max-penetration D  a soft contact deeper than D m fails the run (default 0.01:\n"
          "                 no contact model keeps a disk that deep; an arm inside a solid)\n"
          "  --json         print one JSON object as the last line\n"
          "exit code: 0 completed, 1 simulation failed, 2 bad arguments or input\n");
  return 2;
}

/* ---------- MuJoCo's global handlers ---------- */

/* MuJoCo's defaults write MUJOCO_LOG.TXT and exit on an error: neither suits
 * a batch tool. An error during the run jumps back to main so the summary
 * still gets printed; an error in mj_makeData (a soft instance's init refused
 * the model: cusp_last_error says why) jumps back too and is bad input. */
static int nwarning;
static jmp_buf error_jump;
static int error_jump_armed;
static char error_text[512];

static void on_warning(const char *msg) {
  nwarning++;
  fprintf(stderr, "cusp-sim: MuJoCo warning: %s\n", msg);
}

static void on_error(const char *msg) {
  fprintf(stderr, "cusp-sim: MuJoCo error: %s\n", msg);
  if (error_jump_armed) {
    snprintf(error_text, sizeof error_text, "MuJoCo error: %s", msg);
    error_jump_armed = 0;
    longjmp(error_jump, 1);
  }
  exit(1);
}

/* ---------- output helpers ---------- */

static void csv_field(FILE *f, const char *s, const char *suffix) {
  if (strpbrk(s, ",\"\n")) {
    fputc('"', f);
    for (; *s; s++) {
      if (*s == '"') fputc('"', f);
      fputc(*s, f);
    }
    fprintf(f, "%s\"", suffix);
  } else {
    fprintf(f, "%s%s", s, suffix);
  }
}

/* Statistics over the run; static so they survive a longjmp. */
static struct {
  long steps;
  double sim_time, wall_s;
  long sum_active, sum_mj_contacts;
  int max_active, max_kept, max_mj_contacts;
  long iter_solves; /* steps with a solve, and the sum of their iterations */
  long dumps;       /* LCP files written */
  long empty_solves; /* solves whose LCP had no variables: stage 1 left every contact out (all separating) */
  double sum_iterations, max_penetration, max_mj_penetration;
  char failure[600];
  /* per-step wall times, us: whole mj_step, then cusp's stages (NSTAGE) */
  double *step_us[7];
  long nsample, sample_cap, sample_stride;
} run;

#define NSTAGE 7
static const char *const stage_name[NSTAGE] = {"mj_step", "cusp", "dynamics", "collision", "assembly",
                                              "conditioning", "solve"};

static const char *run_dump_dir, *scene_name;
static double run_max_penetration = 0.01;

/* The step's contact LCP as DIR/step_NNNNNNN.dat; a failed write ends the run. */
static int dump_lcp(const mjModel *m, const mjData *d, const char *scene, long step) {
  const double *M, *q;
  int n = cusp_lcp(m, d, &M, &q);
  if (n <= 0) return 0;
  char path[4096], comment[512], err[512];
  snprintf(path, sizeof path, "%s/step_%07ld.dat", run_dump_dir, step);
  snprintf(comment, sizeof comment, "cusp-sim %s: contact LCP of step %ld (t = %.6f s), impulses, after rank "
           "selection, before scaling", scene, step, d->time);
  if (sb_lcp_write_dat(path, n, M, q, comment, err, sizeof err)) {
    snprintf(run.failure, sizeof run.failure, "--dump-lcp: %s", err);
    return -1;
  }
  run.dumps++;
  return 0;
}

/* Median, 10th and 90th percentile of a stage's samples (sorts them in
 * place; NAN when the stage has none, e.g. cusp's on a plain scene). */
static void stage_quantiles(int k, double out[3]) {
  long n = 0;
  double *x = run.step_us[k];
  for (long i = 0; i < run.nsample; i++)
    if (isfinite(x[i])) x[n++] = x[i];
  qsort(x, n, sizeof *x, cmp_double);
  out[0] = quantile(x, (int)n, 0.5);
  out[1] = quantile(x, (int)n, 0.1);
  out[2] = quantile(x, (int)n, 0.9);
}

/* Steps until nstep or the first failure, collecting statistics and the log. */
static void step_loop(const mjModel *m, mjData *d, FILE *log, long nstep, double T, double t0) {
  int ninst = cusp_instance_count(m);
  double next_progress = t0 + PROGRESS_WALL_S;
  long prev_solves = 0;
  while (run.steps < nstep) {
    double t_step = wall_seconds();
    mj_step(m, d);
    t_step = wall_seconds() - t_step;
    run.steps++;
    const cusp_step_report *r = cusp_report(m, d);
    if (run.nsample < run.sample_cap && run.steps % run.sample_stride == 0) {
      double v[NSTAGE] = {1e6 * t_step, NAN, NAN, NAN, NAN, NAN, NAN};
      if (r) {
        v[1] = r->total_us, v[2] = r->dynamics_us, v[3] = r->collision_us, v[4] = r->assembly_us;
        v[5] = r->conditioning_us, v[6] = r->solve_us;
      }
      for (int k = 0; k < NSTAGE; k++) run.step_us[k][run.nsample] = v[k];
      run.nsample++;
    }
    int active = r ? r->ncontact : 0, kept = r ? r->nkept : 0;
    int solved_now = r && r->solves > prev_solves;
    if (r) prev_solves = r->solves;
    run.sum_active += active;
    if (active > run.max_active) run.max_active = active;
    if (kept > run.max_kept) run.max_kept = kept;
    if (solved_now) {
      run.iter_solves++;
      run.sum_iterations += r->info.lcp.iterations;
      const double *lcp_M, *lcp_q;
      run.empty_solves += cusp_lcp(m, d, &lcp_M, &lcp_q) <= 0;
    }
    if (r && r->max_penetration > run.max_penetration) run.max_penetration = r->max_penetration;
    run.sum_mj_contacts += d->ncon;
    if (d->ncon > run.max_mj_contacts) run.max_mj_contacts = d->ncon;
    for (int c = 0; c < d->ncon; c++)
      if (-d->contact[c].dist > run.max_mj_penetration) run.max_mj_penetration = -d->contact[c].dist;

    /* MuJoCo resets d on a bad qacc, so sim_time keeps the last good time */
    if (!state_finite(m, d))
      snprintf(run.failure, sizeof run.failure, "non-finite qpos, qvel or qacc at step %ld", run.steps);
    else if (d->warning[mjWARN_BADQACC].number > 0 || d->warning[mjWARN_BADQVEL].number > 0 ||
             d->warning[mjWARN_BADQPOS].number > 0)
      snprintf(run.failure, sizeof run.failure, "MuJoCo reported an unstable state at step %ld", run.steps);
    else if (r && r->max_penetration > run_max_penetration)
      snprintf(run.failure, sizeof run.failure,
               "a soft contact %.3g m deep at step %ld (more than --max-penetration %g m: is an arm inside a solid, or "
               "did its contact fail?)", r->max_penetration, run.steps, run_max_penetration);
    else if (r && r->nan_events > 0)
      snprintf(run.failure, sizeof run.failure, "cusp reported %ld NaN event(s) by step %ld", r->nan_events,
               run.steps);
    else
      run.sim_time = d->time;

    if (run_dump_dir && solved_now && dump_lcp(m, d, scene_name, run.steps)) return;

    if (log) {
      fprintf(log, "%.10g,%d,%d,%d,", d->time, active, kept, solved_now ? r->info.lcp.iterations : 0);
      if (solved_now) fprintf(log, "%.6g", r->info.residual);
      fprintf(log, ",%.6g", r ? r->max_penetration : 0.0);
      for (int k = 0; k < ninst; k++) {
        double p[3] = {NAN, NAN, NAN}, q[4];
        cusp_tip_pose(m, d, k, p, q);
        fprintf(log, ",%.10g,%.10g,%.10g", p[0], p[1], p[2]);
      }
      /* free bodies from qpos: the state after this step (xpos lags by one) */
      for (int j = 0; j < m->njnt; j++)
        if (m->jnt_type[j] == mjJNT_FREE) {
          const double *x = d->qpos + m->jnt_qposadr[j];
          for (int k = 0; k < 7; k++) fprintf(log, ",%.10g", x[k]);
        }
      fputc('\n', log);
    }
    if (run.failure[0]) return;

    double t = wall_seconds();
    if (t >= next_progress) {
      fprintf(stderr, "cusp-sim: t = %.3f of %.3f s, %.2fx realtime\n", d->time, T, d->time / (t - t0));
      next_progress = t + PROGRESS_WALL_S;
    }
  }
}

/* setjmp lives in its own frame so that main's locals cannot be clobbered. */
static void guarded_loop(const mjModel *m, mjData *d, FILE *log, long nstep, double T, double t0) {
  if (setjmp(error_jump)) {
    snprintf(run.failure, sizeof run.failure, "%s", error_text);
    return;
  }
  error_jump_armed = 1;
  step_loop(m, d, log, nstep, T, t0);
  error_jump_armed = 0;
}

/* mj_makeData with MuJoCo's errors caught: NULL when it raised one (MuJoCo
 * has then freed what it made), with the reason in error_text. */
static mjData *guarded_make_data(const mjModel *m) {
  if (setjmp(error_jump)) return NULL;
  error_jump_armed = 1;
  mjData *d = mj_makeData(m);
  error_jump_armed = 0;
  if (!d) snprintf(error_text, sizeof error_text, "out of memory for mjData");
  return d;
}

static int has_dofs(const mjModel *m, int b) {
  return b > 0 && m->body_dofnum[b] > 0 && m->body_weldid[b] == b;
}

int main(int argc, char **argv) {
  const char *scene = NULL, *log_path = NULL, *dump_dir = NULL;
  double T = 2, h = 0;
  int json = 0, noverride = 0;
  cusp_override *overrides = calloc(argc, sizeof *overrides);
  char **copies = calloc(argc, sizeof *copies);
  if (!overrides || !copies) {
    fprintf(stderr, "cusp-sim: out of memory\n");
    return 2;
  }
  int rc = 2;
  mjModel *m = NULL;
  mjData *d = NULL;
  FILE *log = NULL;
  char msg[1024];

  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int has_value = i + 1 < argc;
    if (!strcmp(a, "--json")) json = 1;
    else if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout, NULL); rc = 0; goto done; }
    else if (!strcmp(a, "--seconds") || !strcmp(a, "--timestep") || !strcmp(a, "--set") ||
             !strcmp(a, "--log") || !strcmp(a, "--dump-lcp") || !strcmp(a, "--max-penetration")) {
      if (!has_value) {
        snprintf(msg, sizeof msg, "%s needs a value", a);
        usage(stderr, msg);
        goto done;
      }
      const char *v = argv[++i];
      if (!strcmp(a, "--seconds") && parse_positive(v, &T)) {
        snprintf(msg, sizeof msg, "--seconds needs a finite number > 0, not '%s'", v);
        usage(stderr, msg);
        goto done;
      } else if (!strcmp(a, "--timestep") && parse_positive(v, &h)) {
        snprintf(msg, sizeof msg, "--timestep needs a finite number > 0, not '%s'", v);
        usage(stderr, msg);
        goto done;
      } else if (!strcmp(a, "--max-penetration") && parse_positive(v, &run_max_penetration)) {
        snprintf(msg, sizeof msg, "--max-penetration needs a finite number > 0, not '%s'", v);
        usage(stderr, msg);
        goto done;
      } else if (!strcmp(a, "--log")) log_path = v;
      else if (!strcmp(a, "--dump-lcp")) dump_dir = v;
      else if (!strcmp(a, "--set")) {
        /* INSTANCE.KEY=VALUE: first '.', then the first '=' after it */
        char *c = copies[noverride] = strdup(v);
        char *dot = c ? strchr(c, '.') : NULL;
        char *eq = dot ? strchr(dot + 1, '=') : NULL;
        if (!c || !dot || !eq || dot == c || eq == dot + 1 || memchr(c, '=', dot - c)) {
          snprintf(msg, sizeof msg, "--set needs INSTANCE.KEY=VALUE, not '%s'", v);
          usage(stderr, msg);
          goto done;
        }
        *dot = *eq = 0;
        overrides[noverride++] = (cusp_override){c, dot + 1, eq + 1};
      }
    } else if (a[0] != '-' || !a[1]) {
      if (scene) {
        snprintf(msg, sizeof msg, "one scene only ('%s', then '%s')", scene, a);
        usage(stderr, msg);
        goto done;
      }
      scene = a;
    } else {
      snprintf(msg, sizeof msg, "unknown option '%s'", a);
      usage(stderr, msg);
      goto done;
    }
  }
  if (!scene) { usage(stderr, "no scene given"); goto done; }
  scene_name = scene;
  if (dump_dir) {
    struct stat st;
    if (mkdir(dump_dir, 0777) && (errno != EEXIST || stat(dump_dir, &st) || !S_ISDIR(st.st_mode))) {
      snprintf(msg, sizeof msg, "cusp-sim: --dump-lcp '%s' is not a directory that can be made", dump_dir);
      perror(msg);
      goto done;
    }
    run_dump_dir = dump_dir;
  }

  mju_user_warning = on_warning;
  mju_user_error = on_error;
  char err[1024] = "";
  m = cusp_load_with(scene, overrides, noverride, err, sizeof err);
  if (!m) {
    fprintf(stderr, "cusp-sim: %s\n", err[0] ? err : "cannot load the scene");
    goto done;
  }
  if (h > 0) m->opt.timestep = h;
  h = m->opt.timestep;
  if (!(h > 0) || !isfinite(h)) {
    fprintf(stderr, "cusp-sim: the scene's timestep %g is not a finite number > 0\n", h);
    goto done;
  }
  /* the plugin's init builds the soft instances; it refuses what it cannot run */
  d = guarded_make_data(m);
  if (!d) {
    const char *why = cusp_last_error();
    fprintf(stderr, "cusp-sim: %s\n", why[0] ? why : error_text);
    goto done;
  }

  int ninst = cusp_instance_count(m);
  if (log_path) {
    log = fopen(log_path, "w");
    if (!log) {
      snprintf(msg, sizeof msg, "cusp-sim: cannot write the log '%s'", log_path);
      perror(msg);
      goto done;
    }
    /* units in the names (s, m); the LCP residual ||min(z, w)||inf mixes
     * impulses (N*s) and velocities (m/s): no single unit */
    fprintf(log, "time_s,active_contacts,kept_contacts,iterations,residual,max_penetration_m");
    for (int k = 0; k < ninst; k++) {
      const char *axis[3] = {"_tip_x_m", "_tip_y_m", "_tip_z_m"};
      for (int j = 0; j < 3; j++) {
        fputc(',', log);
        csv_field(log, cusp_instance_name(m, k), axis[j]);
      }
    }
    for (int j = 0; j < m->njnt; j++) {
      if (m->jnt_type[j] != mjJNT_FREE) continue;
      int b = m->jnt_bodyid[j];
      const char *name = mj_id2name(m, mjOBJ_BODY, b);
      char fallback[32];
      if (!name || !name[0]) {
        snprintf(fallback, sizeof fallback, "body%d", b);
        name = fallback;
      }
      const char *part[7] = {"_x_m", "_y_m", "_z_m", "_qw", "_qx", "_qy", "_qz"};
      for (int k = 0; k < 7; k++) {
        fputc(',', log);
        csv_field(log, name, part[k]);
      }
    }
    fputc('\n', log);
  }

  /* Whole steps to reach T; the tolerance keeps T = k h from taking k + 1. */
  if (T / h > 1e12) {
    fprintf(stderr, "cusp-sim: %g s at a timestep of %g s is too many steps\n", T, h);
    goto done;
  }
  long nstep = (long)ceil(T / h - 1e-6);
  /* timing samples: every step up to a million, evenly strided beyond */
  run.sample_cap = nstep < 1000000 ? (nstep < 1 ? 1 : nstep) : 1000000;
  run.sample_stride = nstep > run.sample_cap ? (nstep + run.sample_cap - 1) / run.sample_cap : 1;
  for (int k = 0; k < NSTAGE; k++)
    if (!(run.step_us[k] = malloc(sizeof(double) * run.sample_cap))) {
      fprintf(stderr, "cusp-sim: out of memory for %ld timing samples\n", run.sample_cap);
      rc = 1;
      goto done;
    }
  double t0 = wall_seconds();
  guarded_loop(m, d, log, nstep < 1 ? 1 : nstep, T, t0);
  run.wall_s = wall_seconds() - t0;
  if (run.failure[0]) fprintf(stderr, "cusp-sim: simulation failed: %s\n", run.failure);
  rc = run.failure[0] ? 1 : 0;
  if (log) {
    int bad = ferror(log);
    bad |= fclose(log);
    log = NULL;
    if (bad) {
      fprintf(stderr, "cusp-sim: writing the log '%s' failed\n", log_path);
      rc = 1;
    }
  }

  /* mj_step leaves xpos/cvel at the state before its integration: recompute
   * them for the final qpos/qvel (no callbacks run here). */
  mj_kinematics(m, d);
  mj_comPos(m, d);
  mj_comVel(m, d);

  const cusp_step_report *r = cusp_report(m, d);
  long solves = r ? r->solves : 0, converged = r ? r->converged : 0;
  long fallbacks = r ? r->fallbacks : 0, nan_events = r ? r->nan_events : 0;
  double rate = solves ? (double)converged / solves : NAN;
  double mean_iter = run.iter_solves ? run.sum_iterations / run.iter_solves : NAN;
  double mean_active = run.steps ? (double)run.sum_active / run.steps : 0;
  double mean_mj = run.steps ? (double)run.sum_mj_contacts / run.steps : 0;
  double rtf = run.wall_s > 0 ? run.sim_time / run.wall_s : NAN;
  double stage_q[NSTAGE][3];
  for (int k = 0; k < NSTAGE; k++) stage_q[k][0] = stage_q[k][1] = stage_q[k][2] = NAN;
  for (int k = 0; k < NSTAGE && run.step_us[k]; k++) stage_quantiles(k, stage_q[k]);

  if (json) {
    printf("{\"scene\": ");
    json_string(stdout, scene);
    printf(", \"sim_time\": ");
    json_number(run.sim_time);
    printf(", \"target_time\": ");
    json_number(T);
    printf(", \"timestep\": ");
    json_number(h);
    printf(", \"steps\": %ld, \"wall_s\": ", run.steps);
    json_number(run.wall_s);
    printf(", \"realtime_factor\": ");
    json_number(rtf);
    printf(", \"completed\": %s, \"failure\": ", rc == 0 ? "true" : "false");
    if (run.failure[0]) json_string(stdout, run.failure);
    else printf("null");
    printf(", \"nan_events\": %ld, \"mujoco_warnings\": %d", nan_events, nwarning);
    printf(", \"contacts\": {\"max_active\": %d, \"mean_active\": ", run.max_active);
    json_number(mean_active);
    printf(", \"max_kept\": %d}", run.max_kept);
    printf(", \"lcp\": {\"solves\": %ld, \"converged\": %ld, \"convergence_rate\": ", solves, converged);
    json_number(rate);
    printf(", \"mean_iterations\": ");
    json_number(mean_iter);
    printf(", \"fallbacks\": %ld, \"dumped\": %ld, \"empty\": %ld}, \"max_penetration_m\": ", fallbacks, run.dumps,
           run.empty_solves);
    json_number(run.max_penetration);
    printf(", \"step_us\": {\"samples\": %ld", run.nsample);
    for (int k = 0; k < NSTAGE; k++) {
      printf(", ");
      json_string(stdout, stage_name[k]);
      printf(": {\"median\": ");
      json_number(stage_q[k][0]);
      printf(", \"p10\": ");
      json_number(stage_q[k][1]);
      printf(", \"p90\": ");
      json_number(stage_q[k][2]);
      printf("}");
    }
    printf("}");
    printf(", \"mujoco_contacts\": {\"max\": %d, \"mean\": ", run.max_mj_contacts);
    json_number(mean_mj);
    printf(", \"max_penetration_m\": ");
    json_number(run.max_mj_penetration);
    printf("}, \"bodies\": {");
    int first = 1;
    for (int b = 1; b < m->nbody; b++) {
      if (!has_dofs(m, b)) continue;
      const char *name = mj_id2name(m, mjOBJ_BODY, b);
      char fallback[32];
      if (!name || !name[0]) {
        snprintf(fallback, sizeof fallback, "body%d", b);
        name = fallback;
      }
      double vel[6];
      mj_objectVelocity(m, d, mjOBJ_BODY, b, vel, 0);
      printf("%s", first ? "" : ", ");
      first = 0;
      json_string(stdout, name);
      printf(": {\"pos\": ");
      json_array(d->xpos + 3 * b, 3);
      printf(", \"quat\": ");
      json_array(d->xquat + 4 * b, 4);
      printf(", \"linvel\": ");
      json_array(vel + 3, 3);
      printf("}");
    }
    printf("}, \"soft\": {");
    for (int k = 0; k < ninst; k++) {
      double p[3] = {NAN, NAN, NAN}, q4[4] = {NAN, NAN, NAN, NAN};
      const double *q = NULL, *v = NULL;
      cusp_tip_pose(m, d, k, p, q4);
      int n = cusp_soft_state(m, d, k, &q, &v);
      printf("%s", k ? ", " : "");
      json_string(stdout, cusp_instance_name(m, k));
      printf(": {\"tip_pos\": ");
      json_array(p, 3);
      printf(", \"tip_quat\": ");
      json_array(q4, 4);
      printf(", \"q\": ");
      json_array(q, n > 0 && q ? n : 0);
      printf("}");
    }
    printf("}}\n");
  } else {
    int nmoving = 0;
    for (int b = 1; b < m->nbody; b++) nmoving += has_dofs(m, b);
    printf("scene      %s (%d soft instance%s, %d bod%s with dofs)\n", scene, ninst, ninst == 1 ? "" : "s",
           nmoving, nmoving == 1 ? "y" : "ies");
    printf("simulated  %.4g of %.4g s in %ld steps of %g s: %s\n", run.sim_time, T, run.steps, h,
           rc == 0 ? "completed" : run.failure[0] ? run.failure : "failed");
    printf("wall time  %.3f s, %.3gx realtime\n", run.wall_s, rtf);
    printf("step       median %.1f us (p10 %.1f, p90 %.1f) for mj_step", stage_q[0][0], stage_q[0][1],
           stage_q[0][2]);
    if (isfinite(stage_q[1][0]))
      printf("; cusp %.1f us: dynamics %.1f, collision %.1f, assembly %.1f, conditioning %.1f, solve %.1f "
             "(stage medians)", stage_q[1][0], stage_q[2][0], stage_q[3][0], stage_q[4][0], stage_q[5][0],
             stage_q[6][0]);
    printf("\n");
    printf("contacts   soft: max %d active (mean %.2f), max %d kept, max penetration %.3g m; "
           "MuJoCo: max %d\n", run.max_active, mean_active, run.max_kept, run.max_penetration,
           run.max_mj_contacts);
    if (solves)
      printf("LCP        %ld solves, %.1f%% converged, %.1f mean iterations, %ld fallbacks\n", solves,
             100 * rate, mean_iter, fallbacks);
    for (int k = 0; k < ninst; k++) {
      double p[3] = {NAN, NAN, NAN}, q4[4];
      cusp_tip_pose(m, d, k, p, q4);
      printf("tip        %s at (%.6f, %.6f, %.6f) m\n", cusp_instance_name(m, k), p[0], p[1], p[2]);
    }
    if (nwarning) printf("warnings   %d from MuJoCo (on stderr)\n", nwarning);
  }

done:
  if (log) fclose(log);
  if (d) mj_deleteData(d);
  if (m) mj_deleteModel(m);
  for (int i = 0; i < argc; i++) free(copies[i]);
  for (int k = 0; k < NSTAGE; k++) free(run.step_us[k]);
  free(copies);
  free(overrides);
  return rc;
}

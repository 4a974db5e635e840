/* bench-eval: the evaluation of issue 6, run in-process on the cusp library.
 *
 *   bench-eval ablation|compare|perf|scaling [--fast] [--out DIR] [--src DIR] [--repeat N]
 *              [--list | --case K] [--save DIR]
 *
 * ablation  Scenario C of the CUSP paper: Scenario A at box angles 45/60 deg,
 *           3/6 disks per section, h = 0.1/1 ms, 8 conditioning subsets
 *           (64 runs), once with cusp's solver chain and once in the paper's
 *           setting (solver=fb, fallback=0: FB alone), then a sweep beyond
 *           the paper (12 disks, h = 2 ms; the chain only).
 * compare   lcp, penalty, the MuJoCo-native arm (contact=native), sap and ncp
 *           on Scenario A, Scenario B and the incline: penetration, tip
 *           creep, largest stable time step, energy drift, wall time, time
 *           per step, solver iterations per step.
 * perf      Scenario A at h = 1 ms: per-step time by stage, repeated runs.
 * scaling   step time against disks per section and number of sections.
 *
 * Each writes tab-separated tables into DIR (default .) for the report
 * (scripts/report.sh) and prints one JSON object as the last stdout line.
 * --fast runs a few configurations for short times (the test suite).
 * A command's work is a list of cases (ablation: one configuration;
 * compare: one scene and contact model with its step sweep and conservative
 * run; perf: one contact model's repeats; scaling: one point): --list prints
 * their number, --case K runs case K alone, writing the tables with that
 * case's rows only and the JSON object with that case's entry and totals
 * (cusp.evaluation runs the cases as a sweep and joins them into the tables
 * of the whole command). --save DIR writes each run's model, as set up for
 * the run, to DIR/LABEL.mjb and its final state (mjSTATE_FULLPHYSICS, one
 * %a double a line) to DIR/LABEL.state.
 * Exit code: 0 done (whatever the runs showed), 2 bad arguments or output. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench_util.h"
#include "cut_arm.h"
#include "cusp.h"
#include "../apps/mj_state.h"

#ifndef CUSP_SOURCE_DIR
#define CUSP_SOURCE_DIR "."
#endif

#define MAX_OV 64
#define PEN_LIMIT 0.010   /* m: the paper's success criterion */
#define KIN_LIMIT 10.0    /* J: "bounded energy" for the largest stable step */
#define BLOWUP_DIST 10.0  /* m from the origin: the arm has left the scene */
#define PROGRESS_S 5.0

/* ---------- MuJoCo's global handlers ---------- */

static jmp_buf error_jump;
static int error_armed, nwarning;
static char error_text[300];

static void on_warning(const char *msg) {
  if (nwarning++ == 0) fprintf(stderr, "bench-eval: MuJoCo warning: %s\n", msg);
}

static void on_error(const char *msg) {
  if (error_armed) {
    snprintf(error_text, sizeof error_text, "MuJoCo error: %s", msg);
    error_armed = 0;
    longjmp(error_jump, 1);
  }
  fprintf(stderr, "bench-eval: MuJoCo error: %s\n", msg);
  exit(2);
}

/* ---------- one run ---------- */

typedef struct {
  char key[48], value[640];
} kv;

typedef struct {
  char label[160];
  char scene[1100];
  kv ov[MAX_OV];
  int nov;
  double h;          /* s; 0: the scene's */
  double T;          /* simulated time to reach, s */
  double tilt_deg;   /* NAN: the scene's incline as it is */
  int no_contact;    /* contype = conaffinity = 0 on every geom */
  int energy;        /* track mechanical energy */
  double sample_dt;  /* > 0: keep an energy series at this spacing */
  double creep_t0, creep_t1; /* NAN: no creep window */
  int step_times;    /* keep per-step wall times and stage timings */
} spec;

enum { ST_DYN, ST_COL, ST_ASM, ST_COND, ST_SOLVE, ST_CUSP, ST_REST, NSTAGE, ST_STEP = NSTAGE, ST_FB };
static const char *const stage_name[NSTAGE] = {"dynamics", "collision", "assembly", "conditioning",
                                               "solve", "cusp_total", "mujoco_rest"};

typedef struct {
  int loaded;
  char error[700];
  int completed;
  char failure[320];
  double T, h, sim_time, completion;
  long steps;
  double wall_s;     /* sum of the mj_step calls only */
  long solves, converged, fallbacks;
  double conv_rate;  /* NAN without LCP solves */
  double max_pen, mean_pen;
  long contact_steps;
  double mean_contacts;
  double creep;      /* m, NAN without a window */
  double iter_sum;   /* iterations of the steps that solved a contact problem (cusp's coupled solve; */
  long iter_steps;   /* MuJoCo's solver for a native arm), and how many such steps */
  double e0, e_end, k_max, de_max;
  int nsample;
  double *s_t, *s_de, *s_k;
  int nst;           /* steps with timings */
  double *st[NSTAGE + 2]; /* per step: the stages, the whole mj_step (NSTAGE), 1 when the solve fell back (ST_FB) */
  int ndof, ndisk;
} result;

static void result_free(result *r) {
  free(r->s_t);
  free(r->s_de);
  free(r->s_k);
  for (int i = 0; i <= ST_FB; i++) free(r->st[i]);
  memset(r, 0, sizeof *r);
}

static void spec_init(spec *s, const char *scene, double T) {
  memset(s, 0, sizeof *s);
  snprintf(s->scene, sizeof s->scene, "%s", scene);
  s->T = T;
  s->tilt_deg = NAN;
  s->creep_t0 = s->creep_t1 = NAN;
}

/* Appends an override of instance "arm" (applied in order after the file's keys). */
static void spec_set(spec *s, const char *key, const char *fmt, ...) {
  if (s->nov >= MAX_OV) {
    fprintf(stderr, "bench-eval: more than %d overrides for %s\n", MAX_OV, s->label);
    exit(2);
  }
  kv *o = &s->ov[s->nov++];
  snprintf(o->key, sizeof o->key, "%s", key);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(o->value, sizeof o->value, fmt, ap);
  va_end(ap);
}

static void quat_mul(double out[4], const double a[4], const double b[4]) {
  double r[4];
  mju_mulQuat(r, a, b);
  memcpy(out, r, sizeof r);
}

/* Tilts a box incline to deg from horizontal: turns the world geom `geom`
 * and the world body `mount` together about the box's local x axis through
 * the centre of its top face, so the arm keeps its pose relative to the face
 * and only the face's angle to gravity changes. */
static int set_tilt(mjModel *m, const char *geom, const char *mount, double deg, char *err, int n) {
  int g = mj_name2id(m, mjOBJ_GEOM, geom), b = mj_name2id(m, mjOBJ_BODY, mount);
  if (g < 0 || b < 0) {
    snprintf(err, n, "tilt: the scene needs a geom \"%s\" and a body \"%s\"", geom, mount);
    return -1;
  }
  if (m->geom_type[g] != mjGEOM_BOX || m->geom_bodyid[g] != 0 || m->body_parentid[b] != 0) {
    snprintf(err, n, "tilt: \"%s\" must be a box in the worldbody and \"%s\" a child of it", geom, mount);
    return -1;
  }
  double R[9], c[3], axis[3], nrm[3];
  mju_quat2Mat(R, m->geom_quat + 4 * g);
  for (int k = 0; k < 3; k++) {
    axis[k] = R[3 * k];    /* local x */
    nrm[k] = R[3 * k + 2]; /* local z: the face normal */
    c[k] = m->geom_pos[3 * g + k] + m->geom_size[3 * g + 2] * nrm[k];
  }
  double now = acos(fmin(1, fmax(-1, nrm[2]))) * 180 / mjPI, delta = deg - now;
  /* turning about +axis by +delta may lower the face instead: take the sign that reaches deg */
  double q[4], nq[3];
  for (int sign = 1; sign >= -1; sign -= 2) {
    mju_axisAngle2Quat(q, axis, sign * delta * mjPI / 180);
    mju_rotVecQuat(nq, nrm, q);
    if (fabs(acos(fmin(1, fmax(-1, nq[2]))) * 180 / mjPI - deg) < 1e-6) break;
    if (sign == -1) {
      snprintf(err, n, "tilt: cannot turn \"%s\" to %g degrees", geom, deg);
      return -1;
    }
  }
  double *pos[2] = {m->geom_pos + 3 * g, m->body_pos + 3 * b};
  double *quat[2] = {m->geom_quat + 4 * g, m->body_quat + 4 * b};
  for (int i = 0; i < 2; i++) {
    double rel[3] = {pos[i][0] - c[0], pos[i][1] - c[1], pos[i][2] - c[2]}, rot[3];
    mju_rotVecQuat(rot, rel, q);
    for (int k = 0; k < 3; k++) pos[i][k] = c[k] + rot[k];
    quat_mul(quat[i], q, quat[i]);
    mju_normalize4(quat[i]);
  }
  m->geom_sameframe[g] = 0;
  m->body_sameframe[b] = 0;
  return 0;
}

/* Gravity energy MuJoCo counts for bodies that do not move by dynamics
 * (static, and the mocap disks cusp places): taken out of mj_energyPos. */
static double static_gravity_energy(const mjModel *m, const mjData *d) {
  double e = 0;
  for (int b = 1; b < m->nbody; b++)
    if (m->body_weldid[b] == 0 || m->body_mocapid[b] >= 0)
      e -= m->body_mass[b] * mju_dot3(m->opt.gravity, d->xipos + 3 * b);
  return e;
}

/* Instance i is simulated by cusp (not replaced by MuJoCo bodies: contact=native). */
static int cusp_simulated(const mjModel *m, const mjData *d, int i) {
  char contact[32] = "";
  return cusp_get(m, d, i, "contact", contact, sizeof contact) == 0 && strcmp(contact, "native") != 0;
}

/* Mechanical energy of the rigid bodies (d->energy of this mj_step, which
 * holds a native arm's links and springs) and of every instance cusp
 * simulates (cusp_energy, after the step); kinetic part in *kin. */
static double total_energy(const mjModel *m, const mjData *d, double *kin) {
  double e = d->energy[0] - static_gravity_energy(m, d) + d->energy[1];
  *kin = d->energy[1];
  for (int i = 0; i < cusp_instance_count(m); i++) {
    double k = 0, g = 0, el = 0;
    if (cusp_energy(m, d, i, &k, &g, &el) == 0) { /* -1 for a native arm: its links are in d->energy */
      e += k + g + el;
      *kin += k;
    }
  }
  return e;
}

/* The arm's tip: site INSTANCE/tip when the expansion made one (native arm),
 * else the centre of the last disk INSTANCE/disk{N-1} (instances.h naming). */
typedef struct {
  int site, geom;
} tip_ref;

static tip_ref find_tip(const mjModel *m, const char *inst) {
  tip_ref t = {-1, -1};
  char name[128];
  snprintf(name, sizeof name, "%s/tip", inst);
  t.site = mj_name2id(m, mjOBJ_SITE, name);
  for (int k = 0;; k++) {
    snprintf(name, sizeof name, "%s/disk%d", inst, k);
    int g = mj_name2id(m, mjOBJ_GEOM, name);
    if (g < 0) break;
    t.geom = g;
  }
  return t;
}

static int tip_position(const mjModel *m, const mjData *d, tip_ref t, double p[3]) {
  const double *x = t.site >= 0 ? d->site_xpos + 3 * t.site : t.geom >= 0 ? d->geom_xpos + 3 * t.geom : NULL;
  if (!x) return -1;
  for (int k = 0; k < 3; k++) p[k] = x[k];
  (void)m;
  return 0;
}

static double wall_progress_next;
static char save_dir[2048];

/* A run's label as a file name: [A-Za-z0-9.-], runs of anything else as one '_'. */
static void label_file(char *buf, size_t n, const char *label, const char *ext) {
  char name[200];
  size_t k = 0;
  for (const char *c = label; *c && k + 1 < sizeof name; c++) {
    int keep = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '.' ||
               *c == '-';
    if (keep) name[k++] = *c;
    else if (k == 0 || name[k - 1] != '_') name[k++] = '_';
  }
  name[k] = 0;
  snprintf(buf, n, "%s/%s%s", save_dir, name, ext);
}

static void save_model(const spec *sp, const mjModel *m) {
  char path[2400];
  label_file(path, sizeof path, sp->label, ".mjb");
  mj_saveModel(m, path, NULL, 0);
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "bench-eval: --save: cannot write %s\n", path);
    exit(2);
  }
  fclose(f);
}

static void save_state(const spec *sp, const mjModel *m, const mjData *d) {
  char path[2400];
  label_file(path, sizeof path, sp->label, ".state");
  int n = mj_stateSize(m, mjSTATE_FULLPHYSICS);
  double *x = malloc(sizeof(double) * (n ? n : 1));
  FILE *f = fopen(path, "w");
  if (!x || !f) {
    fprintf(stderr, "bench-eval: --save: cannot write %s\n", path);
    exit(2);
  }
  mj_getState(m, d, x, mjSTATE_FULLPHYSICS);
  for (int i = 0; i < n; i++) fprintf(f, "%a\n", x[i]);
  free(x);
  if (ferror(f) | fclose(f)) {
    fprintf(stderr, "bench-eval: --save: writing %s failed\n", path);
    exit(2);
  }
}

/* Steps until T or the first failure. setjmp has its own frame so that the
 * caller's locals survive a MuJoCo error. */
static void step_loop(const spec *sp, const mjModel *m, mjData *d, result *res, const char *arm_geom,
                      tip_ref tipg) {
  long nstep = (long)ceil(sp->T / res->h - 1e-6);
  if (nstep < 1) nstep = 1;
  long prev_steps = 0;
  double tip0[3] = {NAN, NAN, NAN}, tip1[3] = {NAN, NAN, NAN}, next_sample = 0, sum_pen = 0, sum_con = 0;
  int have0 = 0, have1 = 0;
  int ninst = cusp_instance_count(m);
  for (long s = 0; s < nstep; s++) {
    double t0 = now_s();
    mj_step(m, d);
    double dt = now_s() - t0;
    res->wall_s += dt;
    res->steps++;
    const cusp_step_report *r = cusp_report(m, d);
    int advanced = r && r->steps > prev_steps;
    if (r) prev_steps = r->steps;

    /* penetration: cusp's soft contacts, and MuJoCo's own for arm geoms (native arm) */
    double pen = r ? r->max_penetration : 0;
    int ncon = r ? r->ncontact : 0;
    for (int c = 0; c < d->ncon; c++) {
      const mjContact *con = &d->contact[c];
      if (!arm_geom[con->geom1] && !arm_geom[con->geom2]) continue;
      ncon++;
      if (-con->dist > pen) pen = -con->dist;
    }
    if (ncon > 0) {
      res->contact_steps++;
      sum_pen += pen;
    }
    sum_con += ncon;
    if (pen > res->max_pen) res->max_pen = pen;
    if (advanced && r->info.ncontact > 0) {
      res->iter_sum += r->info.lcp.iterations;
      res->iter_steps++;
    } else if (d->ncon > 0 && (ninst == 0 || !cusp_simulated(m, d, 0))) {
      res->iter_sum += d->solver_niter[0];
      res->iter_steps++;
    }

    if (sp->step_times && res->nst < nstep) {
      int k = res->nst++;
      if (advanced) {
        res->st[ST_DYN][k] = r->dynamics_us;
        res->st[ST_COL][k] = r->collision_us;
        res->st[ST_ASM][k] = r->assembly_us;
        res->st[ST_COND][k] = r->conditioning_us;
        res->st[ST_SOLVE][k] = r->solve_us;
        res->st[ST_CUSP][k] = r->total_us;
        res->st[ST_FB][k] = r->fallback;
      } else {
        for (int j = 0; j < ST_REST; j++) res->st[j][k] = 0;
        res->st[ST_FB][k] = 0;
      }
      res->st[ST_REST][k] = 1e6 * dt - res->st[ST_CUSP][k];
      res->st[NSTAGE][k] = 1e6 * dt;
    }

    /* failures: MuJoCo's, non-finite state (MuJoCo's or soft), cusp NaN events, blow-up */
    double tip[3] = {NAN, NAN, NAN};
    int have_tip = tip_position(m, d, tipg, tip) == 0;
    int soft_ok = 1;
    for (int i = 0; i < ninst && soft_ok; i++) {
      const double *q = NULL, *v = NULL;
      int n = cusp_soft_state(m, d, i, &q, &v);
      for (int j = 0; j < n && q && v; j++)
        if (!isfinite(q[j]) || !isfinite(v[j])) soft_ok = 0;
    }
    if (!state_finite(m, d))
      snprintf(res->failure, sizeof res->failure, "non-finite MuJoCo state at step %ld", res->steps);
    else if (d->warning[mjWARN_BADQACC].number > 0 || d->warning[mjWARN_BADQVEL].number > 0 ||
             d->warning[mjWARN_BADQPOS].number > 0)
      snprintf(res->failure, sizeof res->failure, "MuJoCo reported an unstable state at step %ld", res->steps);
    else if (r && r->nan_events > 0)
      snprintf(res->failure, sizeof res->failure, "cusp reported %ld NaN event(s) by step %ld", r->nan_events,
               res->steps);
    else if (!soft_ok)
      snprintf(res->failure, sizeof res->failure, "non-finite soft state at step %ld", res->steps);
    else if (have_tip && !(mju_norm3(tip) < BLOWUP_DIST))
      snprintf(res->failure, sizeof res->failure, "blow-up: the tip is %.3g m from the origin at step %ld",
               mju_norm3(tip), res->steps);
    if (res->failure[0]) break;
    res->sim_time = d->time;

    if (sp->energy) {
      double kin, e = total_energy(m, d, &kin);
      if (res->steps == 1) res->e0 = e;
      res->e_end = e;
      if (kin > res->k_max) res->k_max = kin;
      if (fabs(e - res->e0) > res->de_max) res->de_max = fabs(e - res->e0);
      if (sp->sample_dt > 0 && d->time >= next_sample - 1e-9 && res->s_t) {
        int k = res->nsample++;
        res->s_t[k] = d->time;
        res->s_de[k] = e - res->e0;
        res->s_k[k] = kin;
        next_sample += sp->sample_dt;
      }
    }
    if (have_tip && !have0 && d->time >= sp->creep_t0 - 1e-9) {
      memcpy(tip0, tip, sizeof tip0);
      have0 = 1;
    }
    if (have_tip && !have1 && d->time >= sp->creep_t1 - 1e-9) {
      memcpy(tip1, tip, sizeof tip1);
      have1 = 1;
    }
    double w = now_s();
    if (w >= wall_progress_next) {
      fprintf(stderr, "bench-eval:   %s: t = %.3f of %.3g s\n", sp->label, d->time, sp->T);
      wall_progress_next = w + PROGRESS_S;
    }
  }
  res->mean_pen = res->contact_steps ? sum_pen / res->contact_steps : 0;
  res->mean_contacts = res->steps ? sum_con / res->steps : 0;
  if (have0 && have1) res->creep = mju_dist3(tip0, tip1);
}

static void guarded_loop(const spec *sp, const mjModel *m, mjData *d, result *res, const char *arm_geom,
                         tip_ref tipg) {
  if (setjmp(error_jump)) {
    snprintf(res->failure, sizeof res->failure, "%s", error_text);
    return;
  }
  error_armed = 1;
  step_loop(sp, m, d, res, arm_geom, tipg);
  error_armed = 0;
}

/* mj_makeData with MuJoCo's errors caught (a refused init raises one, and
 * MuJoCo frees what it made): NULL then. */
static mjData *guarded_make_data(const mjModel *m) {
  if (setjmp(error_jump)) return NULL;
  error_armed = 1;
  mjData *d = mj_makeData(m);
  error_armed = 0;
  return d;
}

/* Loads, adjusts and runs one spec; res->loaded = 0 with res->error when
 * the scene cannot be loaded (e.g. contact=native before it exists). */
static void run(const spec *sp, result *res) {
  memset(res, 0, sizeof *res);
  res->T = sp->T;
  res->creep = res->conv_rate = NAN;
  cusp_override ov[MAX_OV];
  for (int i = 0; i < sp->nov; i++) ov[i] = (cusp_override){"arm", sp->ov[i].key, sp->ov[i].value};
  char err[700] = "";
  mjModel *m = cusp_load_with(sp->scene, ov, sp->nov, err, sizeof err);
  if (!m) {
    snprintf(res->error, sizeof res->error, "%s", err[0] ? err : "cannot load the scene");
    for (char *c = res->error; *c; c++)
      if (*c == '\t' || *c == '\n') *c = ' ';
    return;
  }
  mjData *d = NULL;
  char *arm_geom = NULL;
  if (sp->h > 0) m->opt.timestep = sp->h;
  res->h = m->opt.timestep;
  if (!isnan(sp->tilt_deg) && set_tilt(m, "incline", "mount", sp->tilt_deg, err, sizeof err)) {
    snprintf(res->error, sizeof res->error, "%s", err);
    goto done;
  }
  if (sp->no_contact)
    for (int g = 0; g < m->ngeom; g++) m->geom_contype[g] = m->geom_conaffinity[g] = 0;
  if (sp->energy) m->opt.enableflags |= mjENBL_ENERGY;
  if (save_dir[0]) save_model(sp, m);
  d = guarded_make_data(m); /* the plugin's init builds the arms */
  if (!d) {
    const char *why = cusp_last_error();
    snprintf(res->error, sizeof res->error, "%s", why[0] ? why : "mj_makeData failed");
    goto done;
  }
  const char *inst = cusp_instance_count(m) > 0 ? cusp_instance_name(m, 0) : "arm";
  char prefix[80];
  snprintf(prefix, sizeof prefix, "%s/", inst);
  tip_ref tipg = find_tip(m, inst);
  /* an expansion that takes the key but still builds the soft arm would be measured as lcp */
  for (int i = 0; i < sp->nov; i++)
    if (!strcmp(sp->ov[i].key, "contact") && !strcmp(sp->ov[i].value, "native") &&
        (tipg.site < 0 || (cusp_instance_count(m) > 0 && cusp_simulated(m, d, 0)))) {
      snprintf(res->error, sizeof res->error, "contact=native loaded, but the model has no native arm "
               "(no site %stip, or cusp still simulates the instance)", prefix);
      goto done;
    }
  res->loaded = 1;
  /* the arm's geoms: names "INSTANCE/..." (instances.h, native.h) */
  arm_geom = calloc(m->ngeom ? m->ngeom : 1, 1);
  if (!arm_geom) {
    snprintf(res->error, sizeof res->error, "out of memory");
    res->loaded = 0;
    goto done;
  }
  for (int g = 0; g < m->ngeom; g++) {
    const char *nm = mj_id2name(m, mjOBJ_GEOM, g);
    arm_geom[g] = nm && !strncmp(nm, prefix, strlen(prefix));
    if (arm_geom[g] && strstr(nm, "/disk")) res->ndisk++;
  }
  res->ndof = m->nv;
  for (int i = 0; i < cusp_instance_count(m); i++) {
    const double *q, *v;
    int n = cusp_simulated(m, d, i) ? cusp_soft_state(m, d, i, &q, &v) : 0;
    if (n > 0) res->ndof += n;
  }
  long nstep = (long)ceil(sp->T / res->h - 1e-6) + 1;
  if (sp->energy && sp->sample_dt > 0) {
    size_t ns = (size_t)(sp->T / sp->sample_dt) + 4;
    res->s_t = calloc(ns, sizeof(double));
    res->s_de = calloc(ns, sizeof(double));
    res->s_k = calloc(ns, sizeof(double));
  }
  if (sp->step_times)
    for (int j = 0; j <= ST_FB; j++) res->st[j] = calloc((size_t)nstep, sizeof(double));
  nwarning = 0;
  wall_progress_next = now_s() + PROGRESS_S;
  guarded_loop(sp, m, d, res, arm_geom, tipg);
  if (save_dir[0]) save_state(sp, m, d);
  const cusp_step_report *r = cusp_report(m, d);
  if (r) {
    res->solves = r->solves;
    res->converged = r->converged;
    res->fallbacks = r->fallbacks;
    if (r->solves) res->conv_rate = (double)r->converged / r->solves;
  }
  res->completion = fmin(1, res->sim_time / sp->T);
  res->completed = !res->failure[0];
  if (res->completed) res->completion = 1;
done:
  free(arm_geom);
  if (d) mj_deleteData(d);
  mj_deleteModel(m);
}

/* ---------- statistics ---------- */

static double median_of(const double *x, int n, double *q1, double *q3) {
  if (n <= 0) {
    if (q1) *q1 = NAN;
    if (q3) *q3 = NAN;
    return NAN;
  }
  double *s = malloc(sizeof(double) * n);
  if (!s) return NAN;
  memcpy(s, x, sizeof(double) * n);
  qsort(s, n, sizeof(double), cmp_double);
  double med = quantile(s, n, 0.5);
  if (q1) *q1 = quantile(s, n, 0.25);
  if (q3) *q3 = quantile(s, n, 0.75);
  free(s);
  return med;
}

static double mean_of(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += x[i];
  return n ? s / n : NAN;
}

/* ---------- output ---------- */

static char out_dir[2048] = ".";
static char src_dir[1024] = CUSP_SOURCE_DIR;
static int fast;
static int json_first;
static int only_case = -1; /* --case K: run case K alone */
static int listing;        /* --list: print the number of cases, run nothing */
static int json_entries;   /* entries printed in the command's list */

/* --list: the command's case count as one JSON line; returns 1 when listing. */
static int list_cases(const char *command, int n) {
  if (!listing) return 0;
  printf("{\"command\": \"%s\", \"fast\": %s, \"cases\": %d}\n", command, fast ? "true" : "false", n);
  return 1;
}

/* Case k is to run (every case without --case). */
static int selected(int k) { return only_case < 0 || only_case == k; }

/* --case K out of range: exit 2 naming the range. */
static void check_case(const char *command, int n) {
  if (only_case >= n) {
    fprintf(stderr, "bench-eval: --case %d: %s%s has cases 0..%d\n", only_case, command, fast ? " --fast" : "", n - 1);
    exit(2);
  }
}

/* The separator before an entry of the command's JSON list. */
static void json_entry(void) { printf("%s", json_entries++ ? ", " : ""); }

static FILE *open_table(const char *name, const char *header) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", out_dir, name);
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "bench-eval: cannot write %s: %s\n", path, strerror(errno));
    exit(2);
  }
  fprintf(f, "# bench-eval %s\n%s\n", fast ? "fast" : "full", header);
  return f;
}

static void close_table(FILE *f, const char *name) {
  if (ferror(f) | fclose(f)) {
    fprintf(stderr, "bench-eval: writing %s/%s failed\n", out_dir, name);
    exit(2);
  }
}

/* A TSV number: %.6g, or NaN (gnuplot and awk read both). */
static void tnum(FILE *f, double x, const char *sep) {
  if (isfinite(x)) fprintf(f, "%.6g%s", x, sep);
  else fprintf(f, "NaN%s", sep);
}

static void jkey(const char *k) {
  printf("%s\"%s\": ", json_first ? "" : ", ", k);
  json_first = 0;
}
static void jnum(const char *k, double x) {
  jkey(k);
  json_number(x);
}
static void jint(const char *k, long x) {
  jkey(k);
  printf("%ld", x);
}
static void jstr(const char *k, const char *s) {
  jkey(k);
  json_string(stdout, s);
}
static void jbegin(void) {
  putchar('{');
  json_first = 1;
}
static void jend(void) {
  putchar('}');
  json_first = 0;
}

static void scene_path(char *buf, size_t n, const char *rel) { snprintf(buf, n, "%s/%s", src_dir, rel); }

static void progress_line(int k, int n, const char *label, const result *r) {
  if (!r->loaded)
    fprintf(stderr, "bench-eval: [%d/%d] %s: not loaded: %s\n", k, n, label, r->error);
  else
    fprintf(stderr, "bench-eval: [%d/%d] %s: %s, %.2f s of %.2f s simulated in %.1f s\n", k, n, label,
            r->completed ? "completed" : r->failure, r->sim_time, r->T, r->wall_s);
}

/* ---------- ablation ---------- */

static const char *const cond_subsets[8] = {"none", "qr", "ruiz", "tikhonov", "qr ruiz", "qr tikhonov",
                                            "ruiz tikhonov", "qr ruiz tikhonov"};

/* Solver settings of the ablation: cusp's default pipeline (warm
 * active-set pivot, then Lemke -> FB -> PGS) and the paper's (FB alone:
 * no other solver after it fails, which then counts as not converged). */
enum { SET_CHAIN, SET_FB_ONLY };
static const char *const solver_setting[2] = {"chain", "fb-only"};

static int cmd_ablation(void) {
  typedef struct {
    const char *sweep;
    int setting;
    double angle;
    int disks;
    double h;
    int cond;
  } cfg;
  cfg list[200];
  int n = 0;
  double angles[2] = {45, 60};
  /* the paper's 64, in each solver setting */
  for (int set = SET_CHAIN; set <= SET_FB_ONLY; set++)
    for (int a = 0; a < 2; a++)
      for (int dk = 0; dk < 2; dk++)
        for (int hh = 0; hh < 2; hh++)
          for (int c = 0; c < 8; c++) {
            int disks = dk ? 6 : 3;
            double h = hh ? 1e-3 : 1e-4;
            /* fast: every mj_makeData costs a large workspace (slow under sanitizers), so 3 runs of
             * the chain and one of the paper's setting (the full pipeline) */
            int keep = disks == 3 && hh == 1 &&
                       (set == SET_CHAIN ? c == 7 || (c == 0 && a == 0) : c == 7 && a == 0);
            if (fast && !keep) continue;
            list[n++] = (cfg){"paper", set, angles[a], disks, h, c};
          }
  /* beyond the paper: 12 disks per section, h = 2 ms (with the paper's discretizations) */
  for (int a = 0; a < 2; a++)
    for (int v = 0; v < 4; v++)
      for (int c = 0; c < 8; c++) {
        int disks = v == 0 || v == 1 ? 12 : v == 2 ? 3 : 6;
        double h = v == 0 ? 1e-3 : 2e-3;
        if (fast && !(a == 0 && v == 1 && c == 7)) continue;
        list[n++] = (cfg){"beyond", SET_CHAIN, angles[a], disks, h, c};
      }
  double T = fast ? 0.4 : 3.0;
  if (list_cases("ablation", n)) return 0;
  check_case("ablation", n);
  char scene[1100];
  scene_path(scene, sizeof scene, "mjcf/scenario_a.xml");
  const char *name = "ablation.tsv";
  FILE *f = open_table(name, "sweep\tsolver\tangle_deg\tdisks\th_ms\tconditioning\tsuccess\tconvergence\t"
                             "max_pen_mm\tcompletion\twall_s\tsteps\tsolves\tfallbacks\tfailure");
  printf("{\"command\": \"ablation\", \"fast\": %s, \"target_s\": %g, \"runs\": [", fast ? "true" : "false", T);
  int full_ok = 0, full_n = 0, fbo_ok = 0, fbo_n = 0;
  for (int i = 0; i < n; i++) {
    if (!selected(i)) continue;
    const cfg *c = &list[i];
    spec sp;
    spec_init(&sp, scene, T);
    snprintf(sp.label, sizeof sp.label, "%s %s %g deg, %d disks, h %g ms, conditioning %s", c->sweep,
             solver_setting[c->setting], c->angle, c->disks, 1e3 * c->h, cond_subsets[c->cond]);
    sp.h = c->h;
    sp.tilt_deg = c->angle;
    spec_set(&sp, "disks", "%d", c->disks);
    spec_set(&sp, "conditioning", "%s", cond_subsets[c->cond]);
    if (c->setting == SET_FB_ONLY) {
      spec_set(&sp, "solver", "fb");
      spec_set(&sp, "fallback", "0");
    }
    result r;
    run(&sp, &r);
    progress_line(i + 1, n, sp.label, &r);
    double conv = isnan(r.conv_rate) ? 1 : r.conv_rate; /* no solve: nothing failed to converge */
    int success = r.loaded && conv >= 0.95 && r.max_pen < PEN_LIMIT && r.completion >= 0.8;
    if (c->setting == SET_CHAIN && c->cond == 7) {
      full_n++;
      full_ok += success;
    }
    if (c->setting == SET_FB_ONLY) {
      fbo_n++;
      fbo_ok += success;
    }
    fprintf(f, "%s\t%s\t%g\t%d\t%g\t%s\t%d\t", c->sweep, solver_setting[c->setting], c->angle, c->disks,
            1e3 * c->h, cond_subsets[c->cond], success);
    tnum(f, r.conv_rate, "\t");
    tnum(f, 1e3 * r.max_pen, "\t");
    tnum(f, r.completion, "\t");
    tnum(f, r.wall_s, "\t");
    fprintf(f, "%ld\t%ld\t%ld\t%s\n", r.steps, r.solves, r.fallbacks,
            !r.loaded ? r.error : r.failure[0] ? r.failure : "-");
    json_entry();
    jbegin();
    jstr("sweep", c->sweep);
    jstr("solver", solver_setting[c->setting]);
    jnum("angle_deg", c->angle);
    jint("disks", c->disks);
    jnum("h_s", c->h);
    jstr("conditioning", cond_subsets[c->cond]);
    jkey("success");
    printf("%s", success ? "true" : "false");
    jnum("convergence_rate", r.conv_rate);
    jnum("max_penetration_m", r.max_pen);
    jnum("completion", r.completion);
    jnum("wall_s", r.wall_s);
    jint("solves", r.solves);
    jint("fallbacks", r.fallbacks);
    jstr("failure", !r.loaded ? r.error : r.failure);
    jend();
    result_free(&r);
  }
  close_table(f, name);
  /* full_pipeline_*: the default chain with all three stages (paper sweep and beyond) */
  printf("], \"full_pipeline_success\": %d, \"full_pipeline_runs\": %d, \"fb_only_success\": %d, "
         "\"fb_only_runs\": %d}\n", full_ok, full_n, fbo_ok, fbo_n);
  return 0;
}

/* ---------- compare ---------- */

typedef struct {
  const char *name, *file;
  const char *friction;       /* override for the main runs, or NULL */
  double creep_t0, creep_t1, fast_t0, fast_t1;
} scene_def;

static const scene_def compare_scenes[3] = {
    {"scenario_a", "mjcf/scenario_a.xml", NULL, 0.8, 1.0, 0.2, 0.3},
    {"scenario_b", "mjcf/scenario_b.xml", NULL, 0.8, 1.0, 0.2, 0.3},
    {"incline", "tests/data/scenes/coupling_incline.xml", "1", 1.0, 3.0, 0.2, 0.3},
};
static const char *const models[3] = {"lcp", "penalty", "native"};
/* compare: also the implicit models of seeds 001 and 003 */
static const char *const compare_models[5] = {"lcp", "penalty", "native", "sap", "ncp"};

/* The override that takes the actuation away: no schedule for instance
 * "arm" (the key is one ';' list). */
static void add_no_actuation(spec *sp) { spec_set(sp, "schedule", "none"); }

static int cmd_compare(void) {
  double T = fast ? 0.3 : 3.0, Te = fast ? 0.2 : 3.0;
  double hs_full[6] = {0.5e-3, 1e-3, 2e-3, 5e-3, 10e-3, 20e-3}, hs_fast[1] = {1e-3};
  const double *hs = fast ? hs_fast : hs_full;
  int nh = fast ? 1 : 6;
  const char *mname = "compare.tsv", *sname = "compare_stable.tsv", *ename = "compare_energy.tsv";
  if (list_cases("compare", 3 * 5)) return 0;
  check_case("compare", 3 * 5);
  FILE *fm = open_table(mname, "scene\tmodel\tavailable\tcreep_window_s\tcompletion\tmax_pen_mm\tmean_pen_mm\t"
                               "creep_mm\twall_per_sim_s\tconvergence\tstable_h_ms\tenergy_drift_rel\t"
                               "energy_drift_J\tenergy_dev_rel\tnote\tmean_iterations\tus_per_step");
  FILE *fs = open_table(sname, "scene\tmodel\th_ms\tcompletion\tmax_pen_mm\tmax_kinetic_J\tstable\tfailure");
  FILE *fe = open_table(ename, "scene\tmodel\tt_s\tdE_J\tkinetic_J");
  printf("{\"command\": \"compare\", \"fast\": %s, \"target_s\": %g, \"rows\": [", fast ? "true" : "false", T);
  int total = 3 * 5 * (nh + 1), k = 0;
  for (int si = 0; si < 3; si++) {
    const scene_def *sd = &compare_scenes[si];
    char scene[1100];
    scene_path(scene, sizeof scene, sd->file);
    for (int mi = 0; mi < 5; mi++) {
      if (!selected(5 * si + mi)) {
        k += nh + 1;
        continue;
      }
      const char *model = compare_models[mi];
      result main_r;
      memset(&main_r, 0, sizeof main_r);
      int have_main = 0, loaded = 1;
      char note[800] = "-";
      double stable_h = NAN;
      int all_stable_below = 1;
      for (int j = 0; j < nh; j++) {
        spec sp;
        spec_init(&sp, scene, T);
        snprintf(sp.label, sizeof sp.label, "%s %s h %g ms", sd->name, model, 1e3 * hs[j]);
        sp.h = hs[j];
        sp.energy = 1;
        sp.creep_t0 = fast ? sd->fast_t0 : sd->creep_t0;
        sp.creep_t1 = fast ? sd->fast_t1 : sd->creep_t1;
        spec_set(&sp, "contact", "%s", model);
        if (sd->friction) spec_set(&sp, "friction", "%s", sd->friction);
        result r;
        if (!loaded) {
          k++;
          continue;
        }
        run(&sp, &r);
        progress_line(++k, total, sp.label, &r);
        if (!r.loaded) {
          loaded = 0;
          snprintf(note, sizeof note, "not loaded: %s", r.error);
          result_free(&r);
          continue;
        }
        int stable = r.completed && r.max_pen < PEN_LIMIT && r.k_max < KIN_LIMIT;
        if (stable && all_stable_below) stable_h = hs[j];
        if (!stable) all_stable_below = 0;
        fprintf(fs, "%s\t%s\t%g\t", sd->name, model, 1e3 * hs[j]);
        tnum(fs, r.completion, "\t");
        tnum(fs, 1e3 * r.max_pen, "\t");
        tnum(fs, r.k_max, "\t");
        fprintf(fs, "%d\t%s\n", stable,
                r.failure[0] ? r.failure : !stable ? (r.max_pen >= PEN_LIMIT ? "penetration" : "kinetic energy") : "-");
        if (fabs(hs[j] - 1e-3) < 1e-12) {
          main_r = r;
          have_main = 1;
        } else {
          result_free(&r);
        }
      }
      /* conservative variant: no damping, no friction, no actuation, no contact */
      result er;
      memset(&er, 0, sizeof er);
      er.e0 = NAN;
      if (loaded) {
        spec sp;
        spec_init(&sp, scene, Te);
        snprintf(sp.label, sizeof sp.label, "%s %s conservative", sd->name, model);
        sp.energy = 1;
        sp.no_contact = 1;
        sp.sample_dt = fast ? 0.01 : 0.02;
        spec_set(&sp, "contact", "%s", model);
        spec_set(&sp, "damping", "0");
        spec_set(&sp, "friction", "0");
        add_no_actuation(&sp);
        run(&sp, &er);
        progress_line(++k, total, sp.label, &er);
        for (int q = 0; q < er.nsample; q++) {
          fprintf(fe, "%s\t%s\t", sd->name, model);
          tnum(fe, er.s_t[q], "\t");
          tnum(fe, er.s_de[q], "\t");
          tnum(fe, er.s_k[q], "\n");
        }
      } else {
        k++;
      }
      double drift_rel = er.loaded && er.k_max > 0 ? (er.e_end - er.e0) / er.k_max : NAN;
      double dev_rel = er.loaded && er.k_max > 0 ? er.de_max / er.k_max : NAN;
      double drift_j = er.loaded ? er.e_end - er.e0 : NAN;
      if (er.loaded && !er.completed) snprintf(note, sizeof note, "conservative run failed: %s", er.failure);
      double wps = have_main && main_r.sim_time > 0 ? main_r.wall_s / main_r.sim_time : NAN;
      fprintf(fm, "%s\t%s\t%d\t%g-%g\t", sd->name, model, loaded, fast ? sd->fast_t0 : sd->creep_t0,
              fast ? sd->fast_t1 : sd->creep_t1);
      tnum(fm, have_main ? main_r.completion : NAN, "\t");
      tnum(fm, have_main ? 1e3 * main_r.max_pen : NAN, "\t");
      tnum(fm, have_main ? 1e3 * main_r.mean_pen : NAN, "\t");
      tnum(fm, have_main ? 1e3 * main_r.creep : NAN, "\t");
      tnum(fm, wps, "\t");
      tnum(fm, have_main ? main_r.conv_rate : NAN, "\t");
      tnum(fm, 1e3 * stable_h, "\t");
      tnum(fm, drift_rel, "\t");
      tnum(fm, drift_j, "\t");
      tnum(fm, dev_rel, "\t");
      double iters = have_main && main_r.iter_steps > 0 ? main_r.iter_sum / main_r.iter_steps : NAN;
      double us_step = have_main && main_r.steps > 0 ? 1e6 * main_r.wall_s / main_r.steps : NAN;
      fprintf(fm, "%s\t", have_main && main_r.failure[0] && !strcmp(note, "-") ? main_r.failure : note);
      tnum(fm, iters, "\t");
      tnum(fm, us_step, "\n");
      json_entry();
      jbegin();
      jstr("scene", sd->name);
      jstr("model", model);
      jkey("available");
      printf("%s", loaded ? "true" : "false");
      jnum("completion", have_main ? main_r.completion : NAN);
      jnum("max_penetration_m", have_main ? main_r.max_pen : NAN);
      jnum("mean_penetration_m", have_main ? main_r.mean_pen : NAN);
      jnum("creep_m", have_main ? main_r.creep : NAN);
      jnum("wall_per_sim_s", wps);
      jnum("largest_stable_h_s", stable_h);
      jnum("energy_drift_rel", drift_rel);
      jnum("energy_drift_J", drift_j);
      jnum("mean_iterations", iters);
      jnum("us_per_step", us_step);
      jstr("note", note);
      jend();
      result_free(&main_r);
      result_free(&er);
    }
  }
  close_table(fm, mname);
  close_table(fs, sname);
  close_table(fe, ename);
  printf("]}\n");
  return 0;
}

/* ---------- perf ---------- */

/* How cusp's named stages cover its compute, step by step: the median over
 * the steps cusp computed of (sum of the five stages) / cusp_total, and the
 * largest (sum - cusp_total), us. The stages are disjoint intervals inside
 * the compute measured with one clock, so the excess is at most rounding
 * whatever the machine's load (a stage counted twice shows); and a step
 * the scheduler interrupted is a minority, so the median share says how
 * much of the compute the stages name. NAN without such steps. */
static void stage_coverage(const result *r, double *share, double *excess) {
  double *ratio = malloc(sizeof(double) * (r->nst > 0 ? r->nst : 1));
  int n = 0;
  *excess = NAN;
  for (int k = 0; ratio && k < r->nst; k++) {
    double total = r->st[ST_CUSP][k];
    if (!(total > 0)) continue; /* no compute before this step's advance */
    double sum = 0;
    for (int j = 0; j < ST_CUSP; j++) sum += r->st[j][k];
    ratio[n++] = sum / total;
    *excess = n == 1 ? sum - total : fmax(*excess, sum - total);
  }
  *share = median_of(ratio, n, NULL, NULL);
  free(ratio);
}

static int cmd_perf(int repeat) {
  if (repeat < 1) repeat = fast ? 1 : 5;
  double T = fast ? 0.2 : 3.0;
  if (list_cases("perf", 3)) return 0;
  check_case("perf", 3);
  char scene[1100], cpu[256];
  scene_path(scene, sizeof scene, "mjcf/scenario_a.xml");
  cpu_model(cpu, sizeof cpu);
  const char *name = "perf.tsv", *rname = "perf_runs.tsv";
  FILE *f = open_table(name, "model\tavailable\trepeats\tmedian_us\tmin_us\tmax_us\tdynamics_us\tcollision_us\t"
                             "assembly_us\tconditioning_us\tsolve_us\tcusp_total_us\tmujoco_rest_us\t"
                             "mean_dynamics_us\tmean_collision_us\tmean_assembly_us\tmean_conditioning_us\t"
                             "mean_solve_us\tmean_mujoco_rest_us\tmean_step_us\trealtime_factor\tmean_contacts\tcompletion\t"
                             "convergence\tfallbacks\tfallback_steps\ttimed_steps\tmean_us_fallback_steps\t"
                             "mean_us_other_steps\tfallback_time_share\tstage_share_median\tstage_excess_max_us\tnote");
  FILE *fr = open_table(rname, "model\trepeat\tmedian_us\tq1_us\tq3_us\tmean_us\tcompleted");
  printf("{\"command\": \"perf\", \"fast\": %s, \"cpu\": ", fast ? "true" : "false");
  json_string(stdout, cpu);
  printf(", \"scene\": \"mjcf/scenario_a.xml\", \"h_s\": 0.001, \"target_s\": %g, \"repeats\": %d, \"models\": [",
         T, repeat);
  int k = 0;
  for (int mi = 0; mi < 3; mi++) {
    if (!selected(mi)) {
      k += repeat;
      continue;
    }
    double med[64], stage_med[NSTAGE][64], stage_mean[NSTAGE][64], step_mean[64], contacts[64], compl[64];
    long solves = 0, converged = 0, fallbacks = 0, fb_steps = 0, timed = 0;
    double fb_time = 0, other_time = 0; /* us, steps whose solve fell back and the others */
    double share = NAN, excess = NAN;   /* stage_coverage over the repeats: the least median share, the most excess */
    int nrep = 0, loaded = 1;
    char note[800] = "-";
    for (int rep = 0; rep < repeat && rep < 64 && loaded; rep++) {
      spec sp;
      spec_init(&sp, scene, T);
      snprintf(sp.label, sizeof sp.label, "perf %s repeat %d", models[mi], rep + 1);
      sp.h = 1e-3;
      sp.step_times = 1;
      spec_set(&sp, "contact", "%s", models[mi]);
      result r;
      run(&sp, &r);
      progress_line(++k, 3 * repeat, sp.label, &r);
      if (!r.loaded) {
        loaded = 0;
        snprintf(note, sizeof note, "not loaded: %s", r.error);
        result_free(&r);
        break;
      }
      double q1, q3;
      med[nrep] = median_of(r.st[NSTAGE], r.nst, &q1, &q3);
      step_mean[nrep] = mean_of(r.st[NSTAGE], r.nst);
      contacts[nrep] = r.mean_contacts;
      compl[nrep] = r.completion;
      for (int q = 0; q < r.nst; q++) {
        timed++;
        if (r.st[ST_FB][q] > 0) {
          fb_steps++;
          fb_time += r.st[ST_STEP][q];
        } else {
          other_time += r.st[ST_STEP][q];
        }
      }
      double rep_share, rep_excess;
      stage_coverage(&r, &rep_share, &rep_excess);
      share = nrep == 0 || rep_share < share ? rep_share : share;
      excess = nrep == 0 || rep_excess > excess ? rep_excess : excess;
      solves += r.solves;
      converged += r.converged;
      fallbacks += r.fallbacks;
      for (int j = 0; j < NSTAGE; j++) {
        stage_med[j][nrep] = median_of(r.st[j], r.nst, NULL, NULL);
        stage_mean[j][nrep] = mean_of(r.st[j], r.nst);
      }
      fprintf(fr, "%s\t%d\t", models[mi], rep + 1);
      tnum(fr, med[nrep], "\t");
      tnum(fr, q1, "\t");
      tnum(fr, q3, "\t");
      tnum(fr, step_mean[nrep], "\t");
      fprintf(fr, "%d\n", r.completed);
      if (!r.completed) snprintf(note, sizeof note, "repeat %d failed: %s", rep + 1, r.failure);
      nrep++;
      result_free(&r);
    }
    double lo = NAN, hi = NAN, m = NAN, sm[NSTAGE], smean[NSTAGE], mstep = NAN, mc = NAN;
    for (int j = 0; j < NSTAGE; j++) sm[j] = smean[j] = NAN;
    if (nrep > 0) {
      m = median_of(med, nrep, NULL, NULL);
      lo = hi = med[0];
      for (int q = 1; q < nrep; q++) {
        lo = fmin(lo, med[q]);
        hi = fmax(hi, med[q]);
      }
      for (int j = 0; j < NSTAGE; j++) {
        sm[j] = median_of(stage_med[j], nrep, NULL, NULL);
        smean[j] = median_of(stage_mean[j], nrep, NULL, NULL);
      }
      mstep = median_of(step_mean, nrep, NULL, NULL);
      mc = median_of(contacts, nrep, NULL, NULL);
    }
    double rtf = 1e3 / m; /* h = 1 ms = 1000 us of simulated time per step */
    fprintf(f, "%s\t%d\t%d\t", models[mi], loaded, nrep);
    tnum(f, m, "\t");
    tnum(f, lo, "\t");
    tnum(f, hi, "\t");
    for (int j = 0; j < NSTAGE; j++) tnum(f, sm[j], "\t");
    for (int j = 0; j < NSTAGE; j++)
      if (j != ST_CUSP) tnum(f, smean[j], "\t");
    tnum(f, mstep, "\t");
    tnum(f, rtf, "\t");
    tnum(f, mc, "\t");
    tnum(f, nrep ? median_of(compl, nrep, NULL, NULL) : NAN, "\t");
    tnum(f, solves ? (double)converged / solves : NAN, "\t");
    fprintf(f, "%ld\t%ld\t%ld\t", fallbacks, fb_steps, timed);
    tnum(f, fb_steps ? fb_time / fb_steps : NAN, "\t");
    tnum(f, timed > fb_steps ? other_time / (timed - fb_steps) : NAN, "\t");
    tnum(f, fb_time + other_time > 0 ? fb_time / (fb_time + other_time) : NAN, "\t");
    tnum(f, share, "\t");
    tnum(f, excess, "\t");
    fprintf(f, "%s\n", note);
    json_entry();
    jbegin();
    jstr("model", models[mi]);
    jkey("available");
    printf("%s", loaded ? "true" : "false");
    jint("repeats", nrep);
    jnum("median_step_us", m);
    jnum("min_median_us", lo);
    jnum("max_median_us", hi);
    for (int j = 0; j < NSTAGE; j++) {
      char key[64];
      snprintf(key, sizeof key, "%s_us", stage_name[j]);
      jnum(key, sm[j]);
    }
    jnum("realtime_factor", rtf);
    jstr("note", note);
    jend();
  }
  close_table(f, name);
  close_table(fr, rname);
  printf("]}\n");
  return 0;
}

/* ---------- scaling ---------- */

/* Scenario A's arm cut into n sections (bench/cut_arm.h). */
static void set_sections(spec *sp, int n) {
  cut_arm_key keys[CUT_ARM_NKEYS];
  int nk = cut_arm_keys(n, 1, keys);
  for (int k = 0; k < nk; k++) spec_set(sp, keys[k].key, "%s", keys[k].value);
}

static int cmd_scaling(void) {
  double T = fast ? 0.15 : 2.0; /* fall, lie, 1 s of sliding: longer costs minutes at 8 sections */
  int disks_full[4] = {3, 6, 12, 24}, disks_fast[1] = {3};
  int sect_full[8] = {1, 2, 3, 4, 5, 6, 7, 8}, sect_fast[1] = {2};
  const int *dl = fast ? disks_fast : disks_full, *sl = fast ? sect_fast : sect_full;
  int nd = fast ? 1 : 4, ns = fast ? 1 : 8;
  if (list_cases("scaling", 3 * (nd + ns))) return 0;
  check_case("scaling", 3 * (nd + ns));
  char scene[1100];
  scene_path(scene, sizeof scene, "mjcf/scenario_a.xml");
  const char *name = "scaling.tsv";
  FILE *f = open_table(name, "param\tvalue\tmodel\tavailable\tdofs\tdisks_total\tmedian_us\tq1_us\tq3_us\t"
                             "mean_contacts\tcompletion\trealtime_factor\tmean_us\tconvergence\tfallbacks\tnote");
  printf("{\"command\": \"scaling\", \"fast\": %s, \"target_s\": %g, \"rows\": [", fast ? "true" : "false", T);
  int total = 3 * (nd + ns), k = 0;
  for (int mi = 0; mi < 3; mi++) {
    int loaded = 1;
    for (int pass = 0; pass < 2; pass++) {
      int cnt = pass ? ns : nd;
      for (int i = 0; i < cnt; i++) {
        const char *param = pass ? "sections" : "disks";
        int value = pass ? sl[i] : dl[i];
        if (!selected(mi * (nd + ns) + pass * nd + i)) {
          k++;
          continue;
        }
        if (!loaded) {
          k++;
          continue;
        }
        spec sp;
        spec_init(&sp, scene, T);
        snprintf(sp.label, sizeof sp.label, "scaling %s %s = %d", models[mi], param, value);
        sp.h = 1e-3;
        sp.step_times = 1;
        spec_set(&sp, "contact", "%s", models[mi]);
        if (pass) set_sections(&sp, value);
        else spec_set(&sp, "disks", "%d", value);
        result r;
        run(&sp, &r);
        progress_line(++k, total, sp.label, &r);
        char note[800] = "-";
        if (!r.loaded) {
          loaded = strcmp(models[mi], "native") != 0; /* native: not built yet, skip its rows */
          snprintf(note, sizeof note, "not loaded: %s", r.error);
        } else if (!r.completed) {
          snprintf(note, sizeof note, "%s", r.failure);
        }
        double q1, q3, med = median_of(r.st[NSTAGE], r.nst, &q1, &q3);
        fprintf(f, "%s\t%d\t%s\t%d\t%d\t%d\t", param, value, models[mi], r.loaded, r.ndof, r.ndisk);
        tnum(f, med, "\t");
        tnum(f, q1, "\t");
        tnum(f, q3, "\t");
        tnum(f, r.mean_contacts, "\t");
        tnum(f, r.loaded ? r.completion : NAN, "\t");
        tnum(f, 1e3 / med, "\t");
        tnum(f, mean_of(r.st[NSTAGE], r.nst), "\t");
        tnum(f, r.conv_rate, "\t");
        fprintf(f, "%ld\t%s\n", r.fallbacks, note);
        json_entry();
        jbegin();
        jstr("param", param);
        jint("value", value);
        jstr("model", models[mi]);
        jkey("available");
        printf("%s", r.loaded ? "true" : "false");
        jint("dofs", r.ndof);
        jnum("median_step_us", med);
        jnum("mean_contacts", r.mean_contacts);
        jstr("note", note);
        jend();
        result_free(&r);
      }
    }
  }
  close_table(f, name);
  printf("]}\n");
  return 0;
}

/* ---------- main ---------- */

static int usage(const char *msg) {
  if (msg) fprintf(stderr, "bench-eval: %s\n", msg);
  fprintf(stderr,
          "usage: bench-eval ablation|compare|perf|scaling [--fast] [--out DIR] [--src DIR] [--repeat N]\n"
          "                  [--list | --case K] [--save DIR]\n"
          "  --fast      a few configurations, short runs (the test suite)\n"
          "  --list      print the command's number of cases (JSON), run nothing\n"
          "  --case K    run case K (0-based) alone: its rows in the tables, its entry in the JSON\n"
          "  --save DIR  write each run's model (LABEL.mjb) and final state (LABEL.state) into DIR\n"
          "  --out DIR   where the .tsv tables go (default .)\n"
          "  --src DIR   the cusp source tree holding mjcf/ and tests/data/ (default %s)\n"
          "  --repeat N  perf: runs per contact model (default 5, fast 1)\n",
          CUSP_SOURCE_DIR);
  return 2;
}

int main(int argc, char **argv) {
  const char *cmd = NULL;
  int repeat = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--fast")) fast = 1;
    else if (!strcmp(a, "--list")) listing = 1;
    else if (!strcmp(a, "--out") || !strcmp(a, "--src") || !strcmp(a, "--repeat") || !strcmp(a, "--case") ||
             !strcmp(a, "--save")) {
      if (i + 1 >= argc) {
        char msg[128];
        snprintf(msg, sizeof msg, "%s needs a value", a);
        return usage(msg);
      }
      const char *v = argv[++i];
      if (!strcmp(a, "--out")) snprintf(out_dir, sizeof out_dir, "%s", v);
      else if (!strcmp(a, "--src")) snprintf(src_dir, sizeof src_dir, "%s", v);
      else if (!strcmp(a, "--save")) snprintf(save_dir, sizeof save_dir, "%s", v);
      else if (!strcmp(a, "--case")) {
        char *end;
        long n = strtol(v, &end, 10);
        if (end == v || *end || n < 0 || n > 100000) return usage("--case needs a case number >= 0");
        only_case = (int)n;
      } else {
        char *end;
        long n = strtol(v, &end, 10);
        if (end == v || *end || n < 1 || n > 64) return usage("--repeat needs an integer in 1..64");
        repeat = (int)n;
      }
    } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(NULL);
      return 0;
    } else if (a[0] != '-' && !cmd) {
      cmd = a;
    } else {
      char msg[256];
      snprintf(msg, sizeof msg, "unexpected argument '%s'", a);
      return usage(msg);
    }
  }
  if (!cmd) return usage("no subcommand");
  if (listing && only_case >= 0) return usage("--list and --case exclude each other");
  struct stat st;
  if (save_dir[0] && mkdir(save_dir, 0777) && (errno != EEXIST || stat(save_dir, &st) || !S_ISDIR(st.st_mode))) {
    fprintf(stderr, "bench-eval: --save '%s' is not a directory that can be made\n", save_dir);
    return 2;
  }
  if (mkdir(out_dir, 0777) && (errno != EEXIST || stat(out_dir, &st) || !S_ISDIR(st.st_mode))) {
    fprintf(stderr, "bench-eval: --out '%s' is not a directory that can be made\n", out_dir);
    return 2;
  }
  mju_user_warning = on_warning;
  mju_user_error = on_error;
  if (!strcmp(cmd, "ablation")) return cmd_ablation();
  if (!strcmp(cmd, "compare")) return cmd_compare();
  if (!strcmp(cmd, "perf")) return cmd_perf(repeat);
  if (!strcmp(cmd, "scaling")) return cmd_scaling();
  char msg[256];
  snprintf(msg, sizeof msg, "unknown subcommand '%s'", cmd);
  return usage(msg);
}

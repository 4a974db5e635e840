/* The soft state lives where MuJoCo keeps state (issue 14, item 3): a copy,
 * a saved and restored state, a reset, a keyframe, a copied model and a
 * second thread reproduce a run bit for bit; a step whose compute did not
 * run commits nothing; RK4 and a disabled passive stage are refused at
 * load. Every comparison is exact (memcmp), because any state kept outside
 * mjData shows up as a difference somewhere in the trajectory. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "cusp.h"
#include "plugin_testutil.h"

#define SCENE(name) CUSP_SOURCE_DIR "/tests/data/scenes/" name
#define MJCF(name) CUSP_SOURCE_DIR "/mjcf/" name

/* Steps d n times. */
static void steps(const mjModel *m, mjData *d, int n) {
  for (int k = 0; k < n; k++) mj_step(m, d);
}

/* The first difference between two datas of one model: time, qpos, qvel,
 * act, plugin state; NULL when they agree to the bit. */
static const char *first_difference(const mjModel *m, const mjData *a, const mjData *b) {
  if (memcmp(&a->time, &b->time, sizeof a->time)) return "time";
  if (memcmp(a->qpos, b->qpos, sizeof(mjtNum) * m->nq)) return "qpos";
  if (memcmp(a->qvel, b->qvel, sizeof(mjtNum) * m->nv)) return "qvel";
  if (m->na && memcmp(a->act, b->act, sizeof(mjtNum) * m->na)) return "act";
  if (memcmp(a->plugin_state, b->plugin_state, sizeof(mjtNum) * m->npluginstate)) return "plugin_state";
  return NULL;
}

/* The soft arm made contacts and the run moved something, so an exact match
 * means something. */
static void expect_active(const mjModel *m, const mjData *d, const char *what) {
  const cusp_step_report *r = cusp_report(m, d);
  const double *v;
  int n = cusp_soft_state(m, d, 0, NULL, &v);
  double speed = 0;
  for (int i = 0; i < n; i++) speed = fmax(speed, fabs(v[i]));
  for (int i = 0; i < m->nv; i++) speed = fmax(speed, fabs(d->qvel[i]));
  EXPECT(r && r->steps > 0 && r->solves > 0 && speed > 0, "%s: something moves (%g) and contacts were solved (%ld)",
         what, speed, r ? r->solves : -1L);
}

/* The key align_friction=1: the warm start then also carries the
 * direction each contact's next pyramid starts from (its slip's or its
 * friction's), which must travel with the state. */
static const cusp_override align_on = {"arm", "align_friction", "1"};

/* mj_copyData mid-run: the copy continues exactly as the original. */
static void test_copy_data(const char *scene, const cusp_override *ov, int nov) {
  mjModel *m = load(scene, ov, nov);
  if (!m) return;
  mjData *d = attach(m);
  steps(m, d, 400);
  mjData *c = mj_copyData(NULL, m, d);
  EXPECT(c && cusp_report(m, c) && cusp_report(m, c)->steps == 400, "the copy has cusp data and the counters");
  steps(m, d, 300);
  steps(m, c, 300);
  const char *diff = first_difference(m, d, c);
  EXPECT(!diff, "%s: mj_copyData at 0.4 s, 0.3 s more: %s differs", scene, diff ? diff : "-");
  expect_active(m, d, "copy");
  mj_deleteData(c);
  finish(m, d);
}

/* mj_getState / mj_setState: a saved state replays the same steps. spec is
 * mjSTATE_FULLPHYSICS where MuJoCo has no constraint of its own to warm
 * start, mjSTATE_INTEGRATION otherwise (MuJoCo's own solver warm start is
 * outside FULLPHYSICS). */
static void test_get_set_state(const char *scene, int spec, const cusp_override *ov, int nov) {
  mjModel *m = load(scene, ov, nov);
  if (!m) return;
  mjData *d = attach(m), *ref = attach(m);
  steps(m, d, 350);
  int size = mj_stateSize(m, (unsigned)spec);
  mjtNum *saved = malloc(sizeof(mjtNum) * size);
  mj_getState(m, d, saved, (unsigned)spec);
  steps(m, d, 250);
  mj_copyData(ref, m, d); /* the end of the first run */
  steps(m, d, 100);       /* somewhere else entirely */
  mj_setState(m, d, saved, (unsigned)spec);
  steps(m, d, 250);
  const char *diff = first_difference(m, d, ref);
  EXPECT(!diff, "%s: state %s saved at 0.35 s, restored after 0.6 s, replayed: %s differs", scene,
         spec == mjSTATE_FULLPHYSICS ? "FULLPHYSICS" : "INTEGRATION", diff ? diff : "-");
  expect_active(m, d, "set state");
  free(saved);
  mj_deleteData(ref);
  finish(m, d);
}

/* mj_resetData (and a keyframe without plugin state) starts the run over. */
static void test_reset(const char *scene) {
  mjModel *m = load(scene, NULL, 0);
  if (!m) return;
  mjData *d = attach(m), *fresh = attach(m);
  steps(m, d, 300);
  mj_resetData(m, d);
  const char *diff = first_difference(m, d, fresh);
  EXPECT(!diff, "%s: mj_resetData gives the initial state (%s differs)", scene, diff ? diff : "-");
  steps(m, d, 300);
  steps(m, fresh, 300);
  diff = first_difference(m, d, fresh);
  EXPECT(!diff, "%s: the run after mj_resetData equals a fresh run (%s differs)", scene, diff ? diff : "-");
  mj_deleteData(fresh);
  finish(m, d);
}

static void test_keyframe(void) {
  mjModel *m = load(SCENE("state_keyframe.xml"), NULL, 0);
  if (!m) return;
  EXPECT(m->nkey == 1, "the scene has its keyframe");
  mjData *a = attach(m), *b = attach(m);
  steps(m, a, 200);
  mj_resetDataKeyframe(m, a, 0);
  mj_resetDataKeyframe(m, b, 0);
  EXPECT(a->time == m->key_time[0], "the keyframe's time (%g)", a->time);
  const char *diff = first_difference(m, a, b);
  EXPECT(!diff, "keyframe reset after a run equals one on a fresh data (%s differs)", diff ? diff : "-");
  steps(m, a, 300);
  steps(m, b, 300);
  diff = first_difference(m, a, b);
  EXPECT(!diff, "two runs from the keyframe agree (%s differs)", diff ? diff : "-");
  expect_active(m, a, "keyframe");
  mj_deleteData(b);
  finish(m, a);
}

/* mj_copyModel: a copied model carries its instances (they are the model's
 * plugin and its keys) and steps exactly as the original. */
static void test_copy_model(const char *scene) {
  mjModel *m = load(scene, NULL, 0);
  if (!m) return;
  mjModel *m2 = mj_copyModel(NULL, m);
  EXPECT(cusp_instance_count(m2) == cusp_instance_count(m) && cusp_instance_count(m) > 0,
         "the copied model has the instances (%d of %d)", cusp_instance_count(m2), cusp_instance_count(m));
  mjData *d = attach(m), *d2 = attach(m2);
  steps(m, d, 500);
  steps(m2, d2, 500);
  const char *diff = first_difference(m, d, d2);
  EXPECT(!diff, "%s: a copied model steps as the original (%s differs)", scene, diff ? diff : "-");
  expect_active(m2, d2, "copied model");
  mj_deleteData(d2);
  mj_deleteModel(m2);
  finish(m, d);
}

/* One model, a data per thread (what mujoco.rollout does): each thread's
 * run equals the same run on the main thread. */
typedef struct {
  const mjModel *m;
  mjData *d;
  int n;
} thread_job;

static void *thread_run(void *arg) {
  thread_job *j = arg;
  steps(j->m, j->d, j->n);
  return NULL;
}

static void test_threads(const char *scene) {
  mjModel *m = load(scene, NULL, 0);
  if (!m) return;
  mjData *ref = attach(m), *d[2] = {attach(m), attach(m)};
  steps(m, ref, 300);
  mj_copyData(d[0], m, ref);
  mj_copyData(d[1], m, ref);
  steps(m, ref, 400);
  pthread_t t[2];
  thread_job job[2];
  for (int k = 0; k < 2; k++) {
    job[k] = (thread_job){m, d[k], 400};
    pthread_create(&t[k], NULL, thread_run, &job[k]);
  }
  for (int k = 0; k < 2; k++) pthread_join(t[k], NULL);
  for (int k = 0; k < 2; k++) {
    const char *diff = first_difference(m, d[k], ref);
    EXPECT(!diff, "%s: thread %d's run equals the sequential one (%s differs)", scene, k, diff ? diff : "-");
  }
  mj_deleteData(d[0]);
  mj_deleteData(d[1]);
  finish(m, ref);
}

/* A step without a compute (passive stage disabled at run time) commits
 * nothing, says so in the report, and the arm continues from where it was
 * once compute runs again. */
static void test_advance_without_compute(void) {
  mjModel *m = load(SCENE("coupling_fall.xml"), NULL, 0);
  if (!m) return;
  mjData *d = attach(m);
  steps(m, d, 100);
  const double *q;
  int n = cusp_soft_state(m, d, 0, &q, NULL);
  double q0[CUSP_MAX_COORDS];
  memcpy(q0, q, sizeof(double) * n);
  int flags = m->opt.disableflags;
  m->opt.disableflags |= mjDSBL_SPRING | mjDSBL_DAMPER;
  steps(m, d, 5);
  m->opt.disableflags = flags;
  EXPECT(!memcmp(q0, q, sizeof(double) * n) && cusp_report(m, d)->skipped_advances == 5 &&
         cusp_report(m, d)->steps == 100,
         "5 steps without compute: q unchanged, 5 skipped advances (%ld), 100 committed (%ld)",
         cusp_report(m, d)->skipped_advances, cusp_report(m, d)->steps);
  steps(m, d, 5);
  EXPECT(cusp_report(m, d)->steps == 105, "compute again: steps commit (%ld)", cusp_report(m, d)->steps);
  finish(m, d);
}

/* A step that would leave a non-finite soft state (a finite but absurd
 * load) is not committed: nothing non-finite reaches plugin_state, the
 * mocap bodies or qfrc, and the report counts it. */
static void test_no_nan_at_the_boundary(void) {
  mjModel *m = load(SCENE("coupling_fall.xml"), NULL, 0);
  if (!m) return;
  mjData *d = attach(m);
  char err[256];
  double f[3] = {1e300, -1e300, 1e300};
  EXPECT(cusp_apply_force(m, d, 0, 0.4, f, NULL, err, sizeof err) == 0, "a finite force is accepted: %s", err);
  steps(m, d, 50);
  int finite = 1;
  for (int i = 0; i < m->npluginstate; i++) finite &= isfinite(d->plugin_state[i]);
  for (int i = 0; i < 3 * m->nmocap; i++) finite &= isfinite(d->mocap_pos[i]);
  for (int i = 0; i < 4 * m->nmocap; i++) finite &= isfinite(d->mocap_quat[i]);
  for (int i = 0; i < m->nv; i++) finite &= isfinite(d->qfrc_passive[i]) && isfinite(d->qpos[i]);
  EXPECT(finite && cusp_report(m, d)->nan_events > 0, "1e300 N on the tip: state, mocap and qfrc stay finite, "
         "%ld non-finite steps counted", cusp_report(m, d)->nan_events);
  finish(m, d);
}

/* What a model must not be: refused when the scene loads, with a message
 * that says why. */
static void test_refused_options(void) {
  static const struct {
    const char *key, *value, *message;
  } bad[] = {{"integrator", "RK4", "RK4"}, {"flag", "spring", "passive stage"}};
  for (int k = 0; k < 2; k++) {
    char path[256], err[1024] = "";
    snprintf(path, sizeof path, "%s/cusp_state_refused_%d.xml", P_tmpdir, k);
    FILE *f = fopen(path, "w");
    if (!f) continue;
    fprintf(f, "<mujoco>%s<extension><plugin plugin=\"cusp.softbody\"><instance name=\"arm\"/></plugin>"
            "</extension><worldbody><body pos=\"0 0 1\"><plugin instance=\"arm\"/></body></worldbody></mujoco>\n",
            k == 0 ? "<option integrator=\"RK4\"/>" : "<option><flag spring=\"disable\" damper=\"disable\"/></option>");
    fclose(f);
    mjModel *m = cusp_load(path, err, sizeof err);
    EXPECT(!m && strstr(err, bad[k].message), "%s %s refused: \"%s\"", bad[k].key, bad[k].value, err);
    /* by the expansion, before MuJoCo compiles: a failed init inside
     * mj_compile leaks the data MuJoCo made for it (found by fuzz_mjcf) */
    EXPECT(!strstr(err, "as expanded") && !strstr(err, "engine error"),
           "%s %s refused by the compile, not the expansion: \"%s\"", bad[k].key, bad[k].value, err);
    if (m) mj_deleteModel(m);
    remove(path);
  }
}

int main(void) {
  test_copy_data(SCENE("coupling_box_on_arm.xml"), NULL, 0);
  test_copy_data(SCENE("repro_push_box_table.xml"), NULL, 0);
  test_copy_data(SCENE("repro_push_box_table.xml"), &align_on, 1);
  test_get_set_state(SCENE("coupling_fall.xml"), mjSTATE_FULLPHYSICS, NULL, 0);
  test_get_set_state(SCENE("repro_push_box_table.xml"), mjSTATE_INTEGRATION, NULL, 0);
  test_get_set_state(SCENE("repro_push_box_table.xml"), mjSTATE_INTEGRATION, &align_on, 1);
  test_get_set_state(SCENE("coupling_fall.xml"), mjSTATE_FULLPHYSICS, &align_on, 1);
  test_reset(SCENE("coupling_box_on_arm.xml"));
  test_keyframe();
  test_copy_model(SCENE("coupling_box_on_arm.xml"));
  test_threads(SCENE("repro_push_box_table.xml"));
  test_advance_without_compute();
  test_no_nan_at_the_boundary();
  test_refused_options();
  return test_report("state");
}

/* Loading, making data for and freeing scenes in the MuJoCo-linked tests;
 * each failure is a test failure with the library's message. */
#ifndef CUSP_PLUGIN_TESTUTIL_H
#define CUSP_PLUGIN_TESTUTIL_H

#include <math.h>
#include <stdio.h>
#include <unistd.h>

#include <stdlib.h>
#include <string.h>

#include "../apps/mj_state.h"
#include "chain.h"
#include "cusp.h"
#include "instances.h"
#include "testutil.h"

static inline mjModel *load(const char *path, const cusp_override *ov, int nov) {
  char err[1024] = "";
  mjModel *m = cusp_load_with(path, ov, nov, err, sizeof err);
  EXPECT(m != NULL, "load %s: %s", path, err);
  return m;
}

/* A scene given as MJCF text: written to a file of its own (cusp_load
 * reads files, as mj_loadXML does), loaded, and the file removed. */
static inline mjModel *load_text(const char *name, const char *xml) {
  char path[256];
  snprintf(path, sizeof path, "/tmp/cusp_test_%s_%d.xml", name, (int)getpid());
  FILE *f = fopen(path, "w");
  int written = f && fputs(xml, f) >= 0;
  if (f) fclose(f);
  EXPECT(written, "write %s", path);
  mjModel *m = written ? load(path, NULL, 0) : NULL;
  remove(path);
  return m;
}

/* mj_makeData (the plugin's init builds the soft instances), then
 * mj_forward so that positions are there to read before the first step. */
static inline mjData *attach(const mjModel *m) {
  mjData *d = mj_makeData(m);
  if (d) mj_forward(m, d);
  EXPECT(d != NULL && (cusp_instance_count(m) == 0 || cusp_report(m, d) != NULL), "mj_makeData: %s",
         cusp_last_error());
  return d;
}

/* load_text, then attach: the model with its data in *d, or NULL (a test
 * failure said, nothing left allocated). */
static inline mjModel *load_text_attached(const char *name, const char *xml, mjData **d) {
  *d = NULL;
  mjModel *m = load_text(name, xml);
  if (!m) return NULL;
  *d = attach(m);
  if (!*d) {
    mj_deleteModel(m);
    return NULL;
  }
  return m;
}

/* The keys of instance i as the plugin read them (free() it), or NULL (a
 * test failure with the library's message). */
static inline cusp_instance_config *instance_config(const mjModel *m, int i) {
  cusp_instance_config *c = calloc(1, sizeof *c);
  char err[512] = "";
  int ok = c && cusp_instance_read(m, i, c, err, sizeof err) == 0;
  EXPECT(ok, "instance %d's keys: %s", i, c ? err : "out of memory");
  if (ok) return c;
  free(c);
  return NULL;
}

/* Instance i's arm rebuilt from its keys as a softbody model of its own
 * (cusp_config_chain): the chain the coupling tests measure the plugin's
 * against. NULL (a test failure with the message) when it cannot be made. */
static inline sb_model *instance_model(const mjModel *m, int i) {
  cusp_instance_config *cfg = instance_config(m, i);
  if (!cfg) return NULL;
  sb_segment_params seg[CUSP_MAX_SECTIONS];
  sb_chain_params cp;
  cusp_config_chain(cfg, seg, &cp);
  free(cfg);
  char err[512] = "";
  sb_model *arm = sb_model_create(&cp, err, sizeof err);
  EXPECT(arm != NULL, "instance %d's model: %s", i, err);
  return arm;
}

/* What run_until saw: the deepest penetration (from a time on), the most
 * soft contacts in a step, the report's totals at the end, and whether the
 * state stayed finite (it stops at the first step that is not). */
typedef struct {
  double max_pen;
  long solves, converged, nan_events;
  int max_contacts;
  int finite;
} run_stats;

/* Steps until time T, tracking penetration from `from` on. */
static inline run_stats run_until(const mjModel *m, mjData *d, double T, double from) {
  run_stats st = {.finite = 1};
  while (d->time < T - 0.5 * m->opt.timestep) {
    mj_step(m, d);
    const cusp_step_report *r = cusp_report(m, d);
    if (d->time >= from) st.max_pen = fmax(st.max_pen, r->max_penetration);
    if (r->ncontact > st.max_contacts) st.max_contacts = r->ncontact;
    if (!state_finite(m, d)) {
      st.finite = 0;
      break;
    }
  }
  const cusp_step_report *r = cusp_report(m, d);
  st.solves = r->solves;
  st.converged = r->converged;
  st.nan_events = r->nan_events;
  return st;
}

static inline void finish(mjModel *m, mjData *d) {
  if (d) mj_deleteData(d);
  if (m) mj_deleteModel(m);
}

/* How far instance 0's tip moves along x from t0 to t1 (m) in the scene
 * loaded with the overrides; *st: what run_until saw over that window.
 * NAN when the scene does not load (a test failure said). */
static inline double tip_travel_x(const char *path, const cusp_override *ov, int nov, double t0, double t1,
                                  run_stats *st) {
  *st = (run_stats){0};
  mjModel *m = load(path, ov, nov);
  if (!m) return NAN;
  mjData *d = attach(m);
  if (!d) {
    finish(m, NULL);
    return NAN;
  }
  run_until(m, d, t0, 0);
  double a[3], b[3];
  cusp_tip_pose(m, d, 0, a, NULL);
  *st = run_until(m, d, t1, 0);
  cusp_tip_pose(m, d, 0, b, NULL);
  finish(m, d);
  return b[0] - a[0];
}

/* Steps until time T (to within half a step). */
static inline void step_until(const mjModel *m, mjData *d, double T) {
  while (d->time < T - 0.5 * m->opt.timestep) mj_step(m, d);
}

/* d's state as MuJoCo defines what a step continues from
 * (mjSTATE_INTEGRATION: time, qpos, qvel, act, the plugin state, mocap,
 * warm start), in a new array of mj_stateSize numbers; freed by the caller. */
static inline mjtNum *integration_state(const mjModel *m, const mjData *d) {
  int n = mj_stateSize(m, mjSTATE_INTEGRATION);
  mjtNum *state = malloc(sizeof(mjtNum) * (n > 0 ? n : 1));
  if (state) mj_getState(m, d, state, mjSTATE_INTEGRATION);
  return state;
}

/* d continues from saved (an integration_state), bit for bit. */
static inline int same_integration_state(const mjModel *m, const mjData *d, const mjtNum *saved) {
  mjtNum *now = integration_state(m, d);
  int same = now && saved && !memcmp(now, saved, sizeof(mjtNum) * mj_stateSize(m, mjSTATE_INTEGRATION));
  free(now);
  return same;
}

#endif

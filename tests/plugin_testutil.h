/* Loading, making data for and freeing scenes in the MuJoCo-linked tests;
 * each failure is a test failure with the library's message. */
#ifndef CUSP_PLUGIN_TESTUTIL_H
#define CUSP_PLUGIN_TESTUTIL_H

#include "../apps/mj_state.h"
#include "cusp.h"
#include "testutil.h"

static inline mjModel *load(const char *path, const cusp_override *ov, int nov) {
  char err[1024] = "";
  mjModel *m = cusp_load_with(path, ov, nov, err, sizeof err);
  EXPECT(m != NULL, "load %s: %s", path, err);
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

static inline void finish(mjModel *m, mjData *d) {
  if (d) mj_deleteData(d);
  if (m) mj_deleteModel(m);
}

#endif

/* Loading, attaching and freeing scenes in the MuJoCo-linked tests; each
 * failure is a test failure with the library's message. */
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

static inline mjData *attach(const mjModel *m) {
  char err[512] = "";
  mjData *d = mj_makeData(m);
  EXPECT(cusp_attach(m, d, err, sizeof err) == 0, "attach: %s", err);
  return d;
}

static inline void finish(mjModel *m, mjData *d) {
  if (d) {
    cusp_detach(d);
    mj_deleteData(d);
  }
  if (m) cusp_delete_model(m);
}

#endif

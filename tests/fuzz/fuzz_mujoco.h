/* What the MuJoCo-side harnesses (fuzz_mjcf, fuzz_keys) share: MuJoCo's
 * error handlers, and loading a scene with cusp, making data and stepping
 * it while checking cusp's promises:
 *   - a refused scene comes with a message, and so does a refused init
 *     (cusp_last_error);
 *   - nothing non-finite reaches d->plugin_state or the disks' mocap poses,
 *     and the step report's numbers are finite.
 * MuJoCo's default error handler prints and exits: like cusp-sim, the
 * harness installs its own and jumps back (MuJoCo's library is not
 * instrumented; what it does with an error is its own). */
#ifndef CUSP_FUZZ_MUJOCO_H
#define CUSP_FUZZ_MUJOCO_H

#include <math.h>
#include <setjmp.h>

#include "cusp.h"
#include "fuzz_input.h"

#define FUZZ_STEPS 5
/* larger models are only loaded: a step of a huge scene is not what this looks for */
#define FUZZ_STEP_MAX_NV 400

static jmp_buf fuzz_error_jump;
static int fuzz_error_jump_armed;
static char fuzz_mujoco_error[512];

static void fuzz_on_error(const char *msg) {
  snprintf(fuzz_mujoco_error, sizeof fuzz_mujoco_error, "%s", msg);
  if (fuzz_error_jump_armed) {
    fuzz_error_jump_armed = 0;
    longjmp(fuzz_error_jump, 1);
  }
  fprintf(stderr, "fuzz: MuJoCo error outside a guarded call: %s\n", msg);
  abort();
}

static void fuzz_on_warning(const char *msg) { (void)msg; }

static void fuzz_mujoco_handlers(void) {
  mju_user_error = fuzz_on_error;
  mju_user_warning = fuzz_on_warning;
}

static void fuzz_all_finite(const char *what, const double *x, long n, long step) {
  for (long k = 0; k < n; k++)
    FUZZ_CHECK(isfinite(x[k]), "%s[%ld] = %g after step %ld", what, k, x[k], step);
}

static void fuzz_check_state(const mjModel *m, const mjData *d, long step) {
  fuzz_all_finite("d->plugin_state", d->plugin_state, m->npluginstate, step);
  fuzz_all_finite("d->mocap_pos", d->mocap_pos, 3L * m->nmocap, step);
  fuzz_all_finite("d->mocap_quat", d->mocap_quat, 4L * m->nmocap, step);
  const cusp_step_report *r = cusp_report(m, d);
  if (!r) return;
  FUZZ_CHECK(isfinite(r->max_penetration) && r->max_penetration >= 0, "report: max_penetration %g after step %ld",
             r->max_penetration, step);
  FUZZ_CHECK(memchr(r->message, 0, sizeof r->message), "report: message not terminated after step %ld", step);
  const cusp_contact_report *c;
  int nc = cusp_contacts(m, d, &c);
  FUZZ_CHECK(nc >= 0 && nc == r->ncontact, "%d contact reports, the report says %d", nc, r->ncontact);
  for (int k = 0; k < nc; k++) {
    fuzz_all_finite("contact pos", c[k].pos, 3, step);
    fuzz_all_finite("contact normal", c[k].normal, 3, step);
    fuzz_all_finite("contact impulse", c[k].impulse, 3, step);
    FUZZ_CHECK(isfinite(c[k].gap), "contact %d: gap %g after step %ld", k, c[k].gap, step);
  }
}

/* Set before a guarded call, freed after a jump. */
static mjModel *volatile fuzz_model;
static mjData *volatile fuzz_data;

static void fuzz_load_and_step(const char *path, const cusp_override *ov, int nov) {
  char err[1024] = "";
  fuzz_model = NULL;
  fuzz_data = NULL;
  fuzz_mujoco_error[0] = 0;
  if (setjmp(fuzz_error_jump)) {
    /* MuJoCo raised an error (a refused init raises one from mj_makeData,
     * which frees the data first): cusp must have said why when it was its init */
    if (fuzz_model && !fuzz_data && cusp_instance_count(fuzz_model) > 0 && strstr(fuzz_mujoco_error, "plugin"))
      FUZZ_CHECK(cusp_last_error()[0], "mj_makeData failed (%s) and cusp_last_error is empty", fuzz_mujoco_error);
    if (fuzz_data) mj_deleteData(fuzz_data);
    if (fuzz_model) mj_deleteModel(fuzz_model);
    return;
  }
  fuzz_error_jump_armed = 1;
  fuzz_model = cusp_load_with(path, ov, nov, err, sizeof err);
  mjModel *m = fuzz_model;
  if (!m) {
    fuzz_error_jump_armed = 0;
    FUZZ_CHECK(err[0], "cusp_load refused the scene without a message");
    return;
  }
  if (m->nv <= FUZZ_STEP_MAX_NV) {
    fuzz_data = mj_makeData(m);
    mjData *d = fuzz_data;
    if (!d) {
      fuzz_error_jump_armed = 0;
      FUZZ_CHECK(cusp_instance_count(m) == 0 || cusp_last_error()[0], "mj_makeData returned NULL without a reason");
      mj_deleteModel(m);
      return;
    }
    fuzz_check_state(m, d, 0);
    for (long k = 1; k <= FUZZ_STEPS; k++) {
      mj_step(m, d);
      fuzz_check_state(m, d, k);
    }
    mj_deleteData(d);
  }
  fuzz_error_jump_armed = 0;
  mj_deleteModel(m);
}

#endif

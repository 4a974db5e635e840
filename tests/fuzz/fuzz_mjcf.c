/* libFuzzer harness: a scene's text through cusp_load (parse, expansion of
 * the cusp.softbody instances with mjSpec, compile with the plugin's init),
 * then mj_makeData and a few mj_step, checking cusp's promises:
 *   - a refused scene comes with a message, and so does a refused init
 *     (cusp_last_error);
 *   - nothing non-finite reaches d->plugin_state or the disks' mocap poses,
 *     and the step report's numbers are finite.
 * MuJoCo's error handler would print and exit: like cusp-sim, the harness
 * installs its own and jumps back (MuJoCo's library is not instrumented;
 * what it does with an error is its own). */
#include <math.h>
#include <setjmp.h>

#include "cusp.h"
#include "fuzz_input.h"

#define FUZZ_STEPS 5
/* larger models are only loaded: a step of a huge scene is not what this looks for */
#define FUZZ_STEP_MAX_NV 400

static jmp_buf error_jump;
static int error_jump_armed;
static char mujoco_error[512];

static void on_error(const char *msg) {
  snprintf(mujoco_error, sizeof mujoco_error, "%s", msg);
  if (error_jump_armed) {
    error_jump_armed = 0;
    longjmp(error_jump, 1);
  }
  fprintf(stderr, "fuzz: MuJoCo error outside a guarded call: %s\n", msg);
  abort();
}

static void on_warning(const char *msg) { (void)msg; }

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  mju_user_error = on_error;
  mju_user_warning = on_warning;
  return 0;
}

static void all_finite(const char *what, const double *x, long n, long step) {
  for (long k = 0; k < n; k++)
    FUZZ_CHECK(isfinite(x[k]), "%s[%ld] = %g after step %ld", what, k, x[k], step);
}

static void check_state(const mjModel *m, const mjData *d, long step) {
  all_finite("d->plugin_state", d->plugin_state, m->npluginstate, step);
  all_finite("d->mocap_pos", d->mocap_pos, 3L * m->nmocap, step);
  all_finite("d->mocap_quat", d->mocap_quat, 4L * m->nmocap, step);
  const cusp_step_report *r = cusp_report(m, d);
  if (!r) return;
  FUZZ_CHECK(isfinite(r->max_penetration) && r->max_penetration >= 0, "report: max_penetration %g after step %ld",
             r->max_penetration, step);
  const cusp_contact_report *c;
  int nc = cusp_contacts(m, d, &c);
  FUZZ_CHECK(nc >= 0 && nc == r->ncontact, "%d contact reports, the report says %d", nc, r->ncontact);
  for (int k = 0; k < nc; k++) {
    all_finite("contact pos", c[k].pos, 3, step);
    all_finite("contact normal", c[k].normal, 3, step);
    all_finite("contact impulse", c[k].impulse, 3, step);
    FUZZ_CHECK(isfinite(c[k].gap), "contact %d: gap %g after step %ld", k, c[k].gap, step);
  }
}

/* Set before a guarded call, cleaned after a jump. */
static mjModel *volatile model;
static mjData *volatile data_;

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size) {
  const char *path = fuzz_input_file(bytes, size, ".xml");
  char err[1024] = "";
  model = NULL;
  data_ = NULL;
  mujoco_error[0] = 0;
  if (setjmp(error_jump)) {
    /* MuJoCo raised an error (a refused init raises one from mj_makeData):
     * cusp must have said why when it was its init */
    if (model && !data_ && cusp_instance_count(model) > 0 && strstr(mujoco_error, "plugin"))
      FUZZ_CHECK(cusp_last_error()[0], "mj_makeData failed (%s) and cusp_last_error is empty", mujoco_error);
    if (data_) mj_deleteData(data_);
    if (model) mj_deleteModel(model);
    return 0;
  }
  error_jump_armed = 1;
  model = cusp_load(path, err, sizeof err);
  if (!model) {
    error_jump_armed = 0;
    FUZZ_CHECK(err[0], "cusp_load refused the scene without a message");
    return 0;
  }
  mjModel *m = model;
  if (m->nv <= FUZZ_STEP_MAX_NV) {
    data_ = mj_makeData(m);
    mjData *d = data_;
    if (!d) {
      error_jump_armed = 0;
      FUZZ_CHECK(cusp_instance_count(m) == 0 || cusp_last_error()[0], "mj_makeData returned NULL without a reason");
      mj_deleteModel(m);
      return 0;
    }
    check_state(m, d, 0);
    for (long k = 1; k <= FUZZ_STEPS; k++) {
      mj_step(m, d);
      check_state(m, d, k);
    }
    mj_deleteData(d);
  }
  error_jump_armed = 0;
  mj_deleteModel(m);
  return 0;
}

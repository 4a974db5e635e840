/* The engine plugin cusp.softbody: its record, registered when libcusp.so
 * is loaded, and the callbacks MuJoCo calls (DESIGN §5). The first
 * cusp.softbody instance of a model (the lead) owns the runtime and the
 * whole state, since one contact problem couples every arm; the other
 * instances' callbacks do nothing. */
#include <stdio.h>
#include <string.h>

#include "instances.h"
#include "runtime.h"
#include "sb_util.h"
#include "visualize.h"

static _Thread_local char last_error[1024];

const char *cusp_last_error(void) { return last_error; }

/* Raises the init failure with cusp's own message: MuJoCo would only say
 * "plugin->init failed"; its compiler and Python turn this into the error
 * the user sees. */
static int fail_init(void) {
  mju_error("%s", last_error);
  return -1;
}

/* Soft disk bodies of instance i: the mocap bodies NAME/disk{k}, counted
 * by name (all nstate can see: the compiler asks for the state size before
 * it copies texts and keys' effects into the model); a native arm's links
 * carry the same names but are no mocap bodies and have no soft contacts. */
static int count_disks(const mjModel *m, int i) {
  const char *name = cusp_instance_name(m, i);
  char body[CUSP_NAME + 32];
  int k = 0;
  for (;; k++) {
    snprintf(body, sizeof body, "%s/disk%d", name ? name : "", k);
    int id = mj_name2id(m, mjOBJ_BODY, body);
    if (id < 0 || m->body_mocapid[id] < 0) break;
  }
  return k;
}

static int plugin_nstate(const mjModel *m, int instance) {
  if (cusp_expanding() || cusp_soft_instance(m, instance) != 0) return 0;
  int ninst = cusp_instance_count(m), ndisk = 0;
  for (int i = 0; i < ninst; i++) ndisk += count_disks(m, i);
  return cusp_state_size(ninst, ndisk);
}

static int plugin_init(const mjModel *m, mjData *d, int instance) {
  d->plugin_data[instance] = 0;
  last_error[0] = 0;
  if (cusp_expanding() || cusp_soft_instance(m, instance) != 0) return 0;
  if (mj_version() != mjVERSION_HEADER) {
    sb_errorf(last_error, sizeof last_error, "cusp.softbody was built for MuJoCo %d.%d.%d but runs with %s: "
              "rebuild cusp against this MuJoCo (scripts/setup.sh pins the release it supports)",
              mjVERSION_HEADER / 1000000, mjVERSION_HEADER / 1000 % 1000, mjVERSION_HEADER % 1000, mj_versionString());
    return fail_init();
  }
  if (cusp_check_model_options(m, last_error, sizeof last_error)) return fail_init();
  char err[1024];
  cusp_runtime *r = cusp_runtime_create(m, d, err, sizeof err);
  if (!r) {
    sb_errorf(last_error, sizeof last_error, "%s", err);
    return fail_init();
  }
  d->plugin_data[instance] = (uintptr_t)r;
  return 0;
}

static void plugin_destroy(mjData *d, int instance) {
  cusp_runtime_free((cusp_runtime *)d->plugin_data[instance]);
  d->plugin_data[instance] = 0;
}

static void plugin_reset(const mjModel *m, mjtNum *plugin_state, void *plugin_data, int instance) {
  if (!plugin_data || cusp_soft_instance(m, instance) != 0) return;
  cusp_runtime_reset(plugin_data, m->plugin_statenum[instance] > 0 ? plugin_state : NULL);
}

static void plugin_copy(mjData *dest, const mjModel *m, const mjData *src, int instance) {
  cusp_runtime *to = (cusp_runtime *)dest->plugin_data[instance];
  const cusp_runtime *from = (const cusp_runtime *)src->plugin_data[instance];
  (void)m;
  if (to && from) cusp_runtime_copy(to, from);
}

static void plugin_compute(const mjModel *m, mjData *d, int instance, int capability) {
  cusp_runtime *r = (cusp_runtime *)d->plugin_data[instance];
  if (!r) return;
  if (capability == mjPLUGIN_PASSIVE) cusp_runtime_compute(r, m, d);
  /* after MuJoCo's constraint solver: what cusp solved where MuJoCo's readers look */
  if (capability == mjPLUGIN_SENSOR) cusp_runtime_publish(r, m, d);
}

static void plugin_advance(const mjModel *m, mjData *d, int instance) {
  cusp_runtime *r = (cusp_runtime *)d->plugin_data[instance];
  if (r) cusp_runtime_advance(r, m, d);
}

mjPLUGIN_LIB_INIT(cusp_softbody) {
  mjpPlugin p;
  mjp_defaultPlugin(&p);
  p.name = CUSP_PLUGIN_NAME;
  p.attributes = cusp_config_keys(&p.nattribute);
  /* the sensor capability (with no sensors of its own) is the plugin's only
   * call after MuJoCo's constraint solver and before mj_step integrates */
  p.capabilityflags = mjPLUGIN_PASSIVE | mjPLUGIN_SENSOR;
  p.needstage = mjSTAGE_ACC;
  p.nstate = plugin_nstate;
  p.init = plugin_init;
  p.destroy = plugin_destroy;
  p.copy = plugin_copy;
  p.reset = plugin_reset;
  p.compute = plugin_compute;
  p.advance = plugin_advance;
  p.visualize = cusp_visualize;
  mjp_registerPlugin(&p);
}

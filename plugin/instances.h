/* The soft instances of a compiled model, as the plugin sees them (the
 * expansion's contract, DESIGN §5-6).
 *
 * cusp_expand_spec (expand.c) adds, per instance NAME (names are part of the
 * contract):
 *   worldbody/body  NAME/disk{k}  mocap, k = 0..ndisk-1 in arc-length order
 *                   (disk 0 at the base), at the arm's initial pose, holding
 *     geom          NAME/disk{k}  cylinder "disk_radius disk_thickness/2",
 *                   contype = conaffinity = 0 (MuJoCo's collision never sees it)
 *   site            NAME/act on NAME/disk0, the actuators' transmission
 *   actuator        NAME/COORD per actuated coordinate (general, site NAME/act,
 *                   gear "gear 0 0 0 0 0": a mocap body has no dofs, so
 *                   MuJoCo applies nothing; cusp reads d->ctrl), ctrlrange
 *   custom/text     cusp/NAME: "cusp-expanded 1" and then the overrides that
 *                   were applied at expansion, one "key=value" a line
 *   custom/numeric  cusp/NAME/arc: the total length, then each disk's arc
 *                   length from the base (m)
 * contact native instead emits MuJoCo links (native.h). The <extension>
 * element and <body><plugin instance> stay: they are the plugin. */
#ifndef CUSP_INSTANCES_H
#define CUSP_INSTANCES_H

#include <mujoco/mujoco.h>

#include "config.h"

#define CUSP_DISK_RGBA_INIT {0.95f, 0.55f, 0.15f, 1.0f}
#define CUSP_EXPANDED_MARK "cusp-expanded 1"

/* The plugin instance id (index of m->plugin) of soft instance i, or -1. */
int cusp_plugin_instance(const mjModel *m, int i);
/* The soft instance of plugin instance id, or -1 when it is not cusp's. */
int cusp_soft_instance(const mjModel *m, int plugin_instance);

/* Fills c for soft instance i of a compiled, expanded model: defaults, the
 * <config> keys (mj_getPluginConfig), the expansion's overrides (text
 * cusp/NAME), cusp_config_finish, and the MuJoCo ids of the generated
 * elements and the mount. Returns 0, or -1 with a message naming the
 * instance and key; a model that was not expanded gets a message that says
 * how to load it (cusp.load, cusp_load, cusp-expand). */
int cusp_instance_read(const mjModel *m, int i, cusp_instance_config *c, char *error, int error_size);

/* The numeric cusp/NAME/arc of soft instance i (total length, then each
 * disk's arc length) and its disk count; NULL when absent. No allocation. */
const double *cusp_instance_arcs(const mjModel *m, int i, int *ndisk);

/* What a model holding soft instances must not have: the RK4 integrator
 * (the soft step advances once per mj_step), springs and dampers both
 * disabled (MuJoCo then skips the passive stage, where the arms step) and a
 * timestep outside CUSP_TIMESTEP_MIN .. CUSP_TIMESTEP_MAX.
 * Returns 0, or -1 with a message that says why and what to change. The
 * plugin's init refuses them for any host; the expansion refuses them first,
 * so that cusp_load does not go through a failed init inside mj_compile
 * (MuJoCo 4.0.1 then leaks the data it made for the init, about 14 MB). */
int cusp_check_model_options(const mjModel *m, char *error, int error_size);
/* The plausible <option timestep> for soft arms, s (refused outside by
 * cusp_check_model_options, docs/keys.md). The soft step is implicit and
 * stays stable at long steps, which quasi-static runs use (a rod settling to
 * its equilibrium in a few dozen steps); a step longer than a second resolves
 * no motion at all. */
#define CUSP_TIMESTEP_MIN 1e-6
#define CUSP_TIMESTEP_MAX 1.0

/* While nonzero on this thread, the plugin's init and nstate do nothing: the
 * expansion compiles the raw scene once to read its keys. */
void cusp_set_expanding(int on);
int cusp_expanding(void);

#endif

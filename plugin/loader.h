/* The loader's side of the plugin: which soft instances a compiled model
 * carries. cusp_load (loader.c) records them in a registry keyed by the
 * mjModel; the runtime reads them at attach.
 *
 * The expanded MJCF, per instance NAME (names are part of the contract):
 *   worldbody/body  NAME/disk{k}  mocap="true", k = 0..ndisk-1 in arc-length
 *                   order (disk 0 at the base), holding
 *     geom          NAME/disk{k}  type cylinder, size "disk_radius
 *                   disk_thickness/2", contype = conaffinity = 0 (MuJoCo's
 *                   collision never sees it), rgba CUSP_DISK_RGBA
 *   site            NAME/act on NAME/disk0, the actuators' transmission
 *   actuator/general NAME/COORD for every actuated coordinate: site NAME/act
 *                   (a mocap body has no dofs, so MuJoCo applies nothing;
 *                   the runtime reads d->ctrl), gear "gear 0 0 0 0 0",
 *                   ctrllimited, ctrlrange
 * and the <extension> element and <plugin instance> children are removed. */
#ifndef CUSP_LOADER_H
#define CUSP_LOADER_H

#include <mujoco/mujoco.h>

#include "config.h"

#define CUSP_DISK_RGBA "0.95 0.55 0.15 1"

/* The instances of m (NULL, n = 0 when m did not come from cusp_load). */
const cusp_instance_config *cusp_model_instances(const mjModel *m, int *n);

#endif

/* Internal pieces of the expansion (expand.c) shared with the native arm
 * (native.c). The public entry points are in cusp.h. */
#ifndef CUSP_EXPAND_H
#define CUSP_EXPAND_H

#include <mujoco/mujoco.h>

#include "config.h"

/* One <general> actuator NAME/COORD per actuated coordinate of c, ctrl =
 * generalized force, with explicit gain and bias (a scene's defaults cannot
 * change actuator_force = ctrl): through the site `site` (gear "gear 0 0 0 0
 * 0") when it is not NULL, else through the tendon of the same name.
 * Returns 0, or -1 with a message. */
int cusp_spec_actuators(mjSpec *spec, const cusp_instance_config *c, const char *site,
                        char *error, int error_size);

/* The qpos and dof addresses of c's feedback joints in m (hinge or slide by
 * name). Returns 0, or -1 with a message naming the instance, key and
 * entry. Used by the expansion (on the raw compile) and cusp_instance_read. */
int cusp_resolve_feedback(const mjModel *m, cusp_instance_config *c, char *error, int error_size);
/* end_body's id in m (c->end_body_id; -1 when end is free) and each hold's
 * body (c->hold[i].body_id). 0, or -1 with a message naming the instance,
 * key (and entry) and body. */
int cusp_resolve_end_body(const mjModel *m, cusp_instance_config *c, char *error, int error_size);

#endif

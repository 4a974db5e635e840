/* The plugin's visualize callback: what MuJoCo cannot draw from the model
 * (the disks are model geoms and draw themselves). */
#ifndef CUSP_VISUALIZE_H
#define CUSP_VISUALIZE_H

#include <mujoco/mujoco.h>

/* Adds decor geoms to scn for every soft instance of m, once per scene (at
 * the call for the first soft instance; the calls for the others and for
 * other plugins' instances add nothing): the backbone as a tube of capsules;
 * with opt->flags[mjVIS_CONTACTPOINT] the soft contacts of the last compute
 * (kept: red, dropped by rank selection: violet with a short normal); with
 * opt->flags[mjVIS_CONTACTFORCE] each kept contact's force over the step,
 * normal part green, friction part yellow, scaled as MuJoCo scales contact
 * forces (vis.map.force / stat.meanmass). Stops at scn->maxgeom. No
 * allocation. instance is the plugin instance id MuJoCo passes. */
void cusp_visualize(const mjModel *m, mjData *d, const mjvOption *opt, mjvScene *scn, int instance);

#endif

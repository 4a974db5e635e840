/* The plugin's data (d->plugin_data of the lead instance): the soft models,
 * their workspaces and the coupled contact problem, rebuilt from the model
 * by init; and the step pipeline over them (DESIGN §5). Nothing here is
 * state: what the next step depends on is read from d->plugin_state at the
 * start of compute, and compute's result waits here until advance commits
 * it. */
#ifndef CUSP_RUNTIME_H
#define CUSP_RUNTIME_H

#include <mujoco/mujoco.h>

#include "cusp.h"
#include "state.h"

typedef struct cusp_runtime cusp_runtime;

/* Builds the runtime for m (every cusp.softbody instance) at d's current
 * kinematics. NULL with a message naming the instance and key. */
cusp_runtime *cusp_runtime_create(const mjModel *m, mjData *d, char *error, int error_size);
void cusp_runtime_free(cusp_runtime *r);

/* The lead's runtime and state block of d (NULL when m has no cusp
 * instance or d was made without cusp's init). */
cusp_runtime *cusp_runtime_of(const mjModel *m, const mjData *d);
double *cusp_state_of(const mjModel *m, const mjData *d);

/* Plugin callbacks of the lead instance. */
void cusp_runtime_compute(cusp_runtime *r, const mjModel *m, mjData *d);
void cusp_runtime_advance(cusp_runtime *r, const mjModel *m, mjData *d);
/* After MuJoCo's constraint solver (the plugin's sensor stage): the last
 * compute's contact forces into efc_force and touch sensors (contact_forces.c). */
void cusp_runtime_publish(cusp_runtime *r, const mjModel *m, mjData *d);
void cusp_runtime_reset(cusp_runtime *r, double *state);
/* dst takes src's reports (what visualize and cusp_report show); the state
 * itself came with mj_copyData. dst has no pending compute. */
void cusp_runtime_copy(cusp_runtime *dst, const cusp_runtime *src);

/* Reading (api.c). */
int cusp_runtime_ninst(const cusp_runtime *r);
/* The most friction directions the contact workspaces hold (the largest
 * pyramid at load); 0 when no arm has soft contacts. */
int cusp_runtime_max_directions(const cusp_runtime *r);
/* Contacts one step holds (0 without soft contacts) and, in *kept, how many of
 * them the lcp model's LCP holds after rank selection. */
int cusp_runtime_contact_capacity(const cusp_runtime *r, int *kept);
const cusp_instance_config *cusp_runtime_config(const cusp_runtime *r, int instance);
const cusp_step_report *cusp_runtime_report(const cusp_runtime *r);
int cusp_runtime_contacts(const cusp_runtime *r, const cusp_contact_report **contacts);
int cusp_runtime_pair_contacts(const cusp_runtime *r, const cusp_pair_contact **contacts);
/* The reaction of an instance's held point k (cusp_hold_reaction,
 * cusp_end_reaction: the key hold's entries in order, then the far end):
 * 0, or -1 when it has no point k. */
int cusp_runtime_held_reaction(const cusp_runtime *r, int instance, int k, double reaction[6]);
int cusp_runtime_lcp(const cusp_runtime *r, const double **M, const double **q);
/* The soft model and a workspace at the state's coordinates (kinematics of
 * the state q, base pose from d): for queries between steps. */
int cusp_runtime_kinematics(cusp_runtime *r, const mjModel *m, const mjData *d, int instance,
                            const sb_model **model, sb_work **work);
/* Coordinates of a native instance from MuJoCo's joints (scratch owned by r). */
int cusp_runtime_native_state(cusp_runtime *r, const mjModel *m, const mjData *d, int instance,
                              const double **q, const double **v);

#endif

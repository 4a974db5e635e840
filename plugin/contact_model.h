/* The soft contact models behind one interface (DESIGN §4): the value of
 * key contact picks an arm's model; a model is one file and one entry of
 * the table in contact_model.c. They take the same step: the contacts the
 * narrow phase found (r->meta, each tagged with its soft side's model), the
 * arms prepared for the soft step, the MuJoCo system at this instant.
 *
 *   forces    force models (penalty): forces from the state at the step's
 *             start, before the soft step is prepared: into the arms' tau and
 *             penalty_wrench (and their implicit terms into the arms' M~,
 *             work->Mt_add), and into qfrc_cusp for MuJoCo bodies
 *   impulses  implicit models (lcp, sap, ncp): solved together with the prepared soft
 *             step; they leave, per arm, has_impulse / impulse (J^T lambda) /
 *             contact_wrench, and for the MuJoCo system has_rigid_impulse /
 *             rigid_impulse, which the commit applies; return 1 when a
 *             problem ran, with its info and whether it converged
 *
 * Every model writes its contacts' impulse, normal impulse and kept flag
 * back into r->meta for the reports. */
#ifndef CUSP_CONTACT_MODEL_H
#define CUSP_CONTACT_MODEL_H

#include "pipeline.h"

typedef struct {
  cusp_contact_kind kind;   /* the key value's enum (config.h) */
  const char *name;         /* the key value */
  void (*forces)(cusp_runtime *r);
  int (*impulses)(cusp_runtime *r, double h, sb_contact_info *info, int *converged, double *collision_us);
} cusp_contact_model;

/* The models in the order compute runs them; ends with a NULL name. */
extern const cusp_contact_model cusp_contact_models[];

/* contact_penalty.c, contact_lcp.c, contact_sap.c, contact_ncp.c */
void cusp_penalty_forces(cusp_runtime *r);
int cusp_lcp_impulses(cusp_runtime *r, double h, sb_contact_info *info, int *converged, double *collision_us);
int cusp_sap_impulses(cusp_runtime *r, double h, sb_contact_info *info, int *converged, double *collision_us);
int cusp_ncp_impulses(cusp_runtime *r, double h, sb_contact_info *info, int *converged, double *collision_us);

#endif

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

/* ---------- contact_space.c: sap and ncp's common frame ---------- */

typedef struct {
  cusp_contact_kind model;
  const cusp_instance_config *cfg; /* the keys of the model's first arm in contact: the solve's */
  int m;                    /* contacts in the problem */
  int n;                    /* the movable ones: r->cidx (their indices), r->cW (their W, 3n x 3n) */
  const double *u;          /* free relative velocities of all m contacts (3m, contact frames) */
  const double *gv;         /* with gap_terms: the LCP's gap stabilization terms (m) */
  double *lambda;           /* 3m: the impulses applied (r->cvec) */
  double *vec;              /* CUSP_CVEC - 1 vectors of 3 max_contacts free for the model (after lambda) */
  double t0;
} cusp_contact_space;

/* Builds and assembles the model's problem and finds its movable contacts;
 * gap_terms: the model takes the LCP's gap stabilization (key
 * stabilization of the lead arm) as gv; else it treats gaps itself. Returns 0
 * when the model has no contact (nothing ran), 1 when ready, -1 when
 * assembly failed or the workspace is missing: then no impulse was applied,
 * *solved = 0 and r->message names the model (name) and why. */
int cusp_contact_space_begin(cusp_runtime *r, cusp_contact_kind model, const char *name, const void *workspace,
                             double h, int gap_terms, double *t_col, sb_contact_info *info, int *solved,
                             cusp_contact_space *cs);
/* The 3 x 3 diagonal block of movable contact a (column-major). */
void cusp_contact_space_block(const cusp_runtime *r, const cusp_contact_space *cs, int a, double Wii[9]);
/* The movable contacts' free relative velocities (u, 3n; without gap
 * terms), friction coefficients (mu, n) and warm-start impulses (warm, 3n:
 * the last step's by contact identity, else zero). */
void cusp_contact_space_gather(const cusp_runtime *r, const cusp_contact_space *cs, double *u, double *mu,
                               double *warm);
/* Applies impulse (3n, the movable contacts'; none at all when one is not
 * finite), keeps it as the warm start when keep_warm (a converged answer),
 * scatters the result and fills info's counts and total time. */
void cusp_contact_space_end(cusp_runtime *r, const cusp_contact_space *cs, const double *impulse, int keep_warm,
                            sb_contact_info *info);

#endif

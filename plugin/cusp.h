/* cusp: soft continuum arms in MuJoCo 2.2.2 scenes, with LCP contact.
 *
 *   char err[512];
 *   mjModel *m = cusp_load("scene.xml", err, sizeof err);   // MJCF + <extension>
 *   mjData *d = mj_makeData(m);
 *   cusp_attach(m, d, err, sizeof err);
 *   while (...) mj_step(m, d);        // the soft bodies advance inside
 *   cusp_detach(d);
 *   mj_deleteData(d);
 *   cusp_delete_model(m);
 *
 * cusp_attach installs MuJoCo's global callbacks (chaining to any the host
 * had installed) and keeps a registry keyed by mjData, so several models and
 * datas can live in one process. */
#ifndef CUSP_H
#define CUSP_H

#include <mujoco/mujoco.h>

#include "contact.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------- loading ---------- */

/* One override "INSTANCE.KEY=VALUE" applied on top of the file's keys. */
typedef struct {
  const char *instance, *key, *value;
} cusp_override;

/* Reads the scene (resolving <include>), expands the cusp.softbody extension
 * into disk bodies and actuators, and compiles it with mj_loadXML. Returns
 * NULL with a message naming the file, element and key on any error. */
mjModel *cusp_load(const char *path, char *error, int error_size);
mjModel *cusp_load_with(const char *path, const cusp_override *overrides, int noverride,
                        char *error, int error_size);

/* The expanded MJCF (malloc'd, caller frees), as compiled by cusp_load. */
char *cusp_expand(const char *path, const cusp_override *overrides, int noverride, char *error,
                  int error_size);

/* Frees a model from cusp_load (plain MuJoCo models: mj_deleteModel). */
void cusp_delete_model(mjModel *m);

/* Number of soft instances of a model from cusp_load (0 for others). */
int cusp_instance_count(const mjModel *m);
const char *cusp_instance_name(const mjModel *m, int instance);
int cusp_instance_find(const mjModel *m, const char *name);

/* ---------- attaching ---------- */

/* Starts simulating the soft instances of m inside mj_step/mj_forward on d.
 * Refuses the RK4 integrator. A model without instances attaches as a no-op
 * so apps can treat every scene alike. Returns 0 or -1 with a message. */
int cusp_attach(const mjModel *m, mjData *d, char *error, int error_size);
void cusp_detach(mjData *d);

/* ---------- reading ---------- */

typedef struct {
  int instance;          /* soft side (side 0) */
  int disk;
  int other_geom;        /* MuJoCo geom on side 1 (-1: none) */
  int other_instance;    /* >= 0 when side 1 is a soft disk */
  double pos[3];         /* world contact point on the soft surface, m */
  double normal[3];      /* from the other side into the soft side */
  double gap;            /* m, < 0 penetration */
  double impulse[3];     /* world impulse on the soft side over the step, N*s */
  double normal_impulse;
  int kept;              /* 1 unless dropped by rank selection */
} cusp_contact_report;

typedef struct {
  double time;           /* simulated time of the last advance */
  long steps;            /* advances since attach/reset */
  int ncontact, nkept;
  sb_contact_info info;  /* of the last coupled solve (lcp model) */
  int solved;            /* last solve converged (status solved); penalty: 1 */
  int fallback;          /* the solve needed more than the first solver */
  double max_penetration;/* m, >= 0, over the last step's contacts */
  long solves, converged, fallbacks, nan_events; /* totals since attach/reset */
  /* wall time of the last advance, microseconds, by stage: soft dynamics
   * (controls, prepare, commit, placing disks), narrow phase (disks and the
   * touched bodies' other contacts), assembly (rigid free velocity, contact
   * Jacobians, penalty forces, Delassus matrix), conditioning (stages 1-3),
   * solve (the LCP solver chain); total covers the whole advance */
  double dynamics_us, collision_us, assembly_us, conditioning_us, solve_us, total_us;
} cusp_step_report;

/* NULL when d is not attached. */
const cusp_step_report *cusp_report(const mjData *d);
int cusp_contacts(const mjData *d, const cusp_contact_report **contacts);

/* The last step's contact LCP w = M z + q (impulses), as solved after rank
 * selection and before scaling: column-major n x n, valid until the next
 * step. Returns n (0 when the step solved none), -1 when d is not attached. */
int cusp_lcp(const mjData *d, const double **M, const double **q);

/* Soft state of an instance: generalized coordinates and velocities (n),
 * tip pose in world. Returns n, or -1 for a bad instance. */
int cusp_soft_state(const mjData *d, int instance, const double **q, const double **v);
int cusp_tip_pose(const mjData *d, int instance, double pos[3], double quat[4]);
/* World pose of a point at arc length s (0..total length) on the backbone. */
int cusp_backbone_point(const mjData *d, int instance, double s, double pos[3], double mat[9]);
double cusp_total_length(const mjData *d, int instance);
/* Mechanical energy of an instance at its current state, J: kinetic,
 * gravitational (zero at the world origin's height) and elastic. Returns 0,
 * or -1 for a bad instance. */
int cusp_energy(const mjData *d, int instance, double *kinetic, double *gravity, double *elastic);

/* ---------- switching (viewer, sweeps) ---------- */

/* Changes one key of a running instance where that makes sense without
 * rebuilding (contact, solver, conditioning, eps_rank, ruiz_iterations,
 * tikhonov, stabilization, friction, pyramid, penalty_*). */
int cusp_set(mjData *d, int instance, const char *key, const char *value, char *error,
             int error_size);

/* Reads back a live key of a running instance (the keys cusp_set takes), as
 * cusp_set would accept it: "lcp", "fb", "qr ruiz", "none", "0.5", ...
 * Returns 0, or -1 with a message in value for a bad instance or key. */
int cusp_get(const mjData *d, int instance, const char *key, char *value, int value_size);

#ifdef __cplusplus
}
#endif

#endif

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
 * tip pose in world. Returns n, or -1 for a bad instance. Contact native
 * (MuJoCo links, plugin/native.h): q, v are the coordinates' tendon lengths
 * and rates at d's qpos, qvel, and the tip is the site INSTANCE/tip as
 * MuJoCo last placed it (after mj_step: the step's start; mj_kinematics
 * updates it). */
int cusp_soft_state(const mjData *d, int instance, const double **q, const double **v);
int cusp_tip_pose(const mjData *d, int instance, double pos[3], double quat[4]);
/* World pose of a point at arc length s (0..total length) on the backbone
 * (contact native: straight between the disk bodies, the nearer disk's axes). */
int cusp_backbone_point(const mjData *d, int instance, double s, double pos[3], double mat[9]);
double cusp_total_length(const mjData *d, int instance);
/* Mass of an instance's chain (distributed, disks and rigid links), kg; 0 for a bad instance. */
double cusp_total_mass(const mjData *d, int instance);

/* ---------- applied loads (mouse dragging, tests) ---------- */

/* Holds a world force (N) and moment (N*m) on the backbone of an instance at
 * arc length s (0..total length; the centre line, not the disk rim) through
 * every following advance until cleared: one load per instance, a new call
 * replaces it, force = torque = NULL clears it (so does a reset to time 0).
 * NULL for one of them means zero. It enters the soft step as J^T [m; f] at
 * the step's start pose, and a moving mount gets its share. Returns 0, or -1
 * with a message for a bad instance, s out of range, a non-finite value or
 * an instance with contact native (MuJoCo bodies: use xfrc_applied). */
int cusp_apply_force(mjData *d, int instance, double s, const double force[3], const double torque[3],
                     char *error, int error_size);
/* The soft instance and arc length (m from the base) of a generated disk
 * body (the mocap bodies INSTANCE/diskK). Returns 0, or -1 when body is not
 * a soft disk of m (the bodies of a contact native instance are not: they
 * are ordinary MuJoCo bodies). */
int cusp_disk_of_body(const mjModel *m, int body, int *instance, double *s);
/* Mechanical energy of an instance at its current state, J: kinetic,
 * gravitational (zero at the world origin's height) and elastic. Returns 0,
 * or -1 for a bad instance or one with contact native (MuJoCo's mj_energy*). */
int cusp_energy(const mjData *d, int instance, double *kinetic, double *gravity, double *elastic);

/* ---------- switching (viewer, sweeps) ---------- */

/* Changes one key of a running instance where that makes sense without
 * rebuilding (contact, solver, conditioning, eps_rank, ruiz_iterations,
 * tikhonov, stabilization, friction, pyramid, penalty_*). contact switches
 * between lcp and penalty only: to or from native (a different model, made
 * at load) is refused, and so is every other key on a native instance. */
int cusp_set(mjData *d, int instance, const char *key, const char *value, char *error,
             int error_size);

/* Reads back a live key of a running instance (the keys cusp_set takes), as
 * cusp_set would accept it: "lcp", "penalty", "native", "fb", "qr ruiz", "none", "0.5", ...
 * Returns 0, or -1 with a message in value for a bad instance or key. */
int cusp_get(const mjData *d, int instance, const char *key, char *value, int value_size);

#ifdef __cplusplus
}
#endif

#endif

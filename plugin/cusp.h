/* cusp: soft continuum arms as a MuJoCo engine plugin ("cusp.softbody").
 *
 * Loading libcusp.so registers the plugin (its load constructor calls
 * mjp_registerPlugin): link it, or mj_loadPluginLibrary("libcusp.so"), or
 * mujoco.mj_loadPluginLibrary from Python. A scene declares instances with
 * <extension><plugin plugin="cusp.softbody"><instance> and mounts each on a
 * body with <plugin instance="NAME"/>; cusp_load expands them (disk bodies,
 * geoms, sites, actuators, with mjSpec) and compiles:
 *
 *   char err[512];
 *   mjModel *m = cusp_load("scene.xml", err, sizeof err);
 *   mjData *d = mj_makeData(m);        // the plugin's init builds the arms
 *   while (...) mj_step(m, d);         // compute + advance inside
 *   mj_deleteData(d);
 *   mj_deleteModel(m);
 *
 * Everything the next step depends on is in d->plugin_state, so
 * mj_copyData, mj_getState/mj_setState, mj_resetData and rollouts are exact.
 * The functions below read and steer a running arm; they take the model
 * because d alone does not say which plugin instance is cusp's. */
#ifndef CUSP_H
#define CUSP_H

#include <mujoco/mujoco.h>

#include "contact.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CUSP_PLUGIN_NAME "cusp.softbody"

/* ---------- loading ---------- */

/* One override "INSTANCE.KEY=VALUE" applied on top of the file's keys. */
typedef struct {
  const char *instance, *key, *value;
} cusp_override;

/* Parses the scene with mj_parseXML, expands the cusp.softbody instances
 * (cusp_expand_spec) and compiles. Returns NULL with a message naming the
 * file, element and key on any error. Free with mj_deleteModel. */
mjModel *cusp_load(const char *path, char *error, int error_size);
mjModel *cusp_load_with(const char *path, const cusp_override *overrides, int noverride,
                        char *error, int error_size);

/* Adds the generated elements of every cusp.softbody instance to a parsed,
 * not yet expanded spec (what Python's cusp.load calls on MjSpec._address).
 * Returns 0, or -1 with a message. */
int cusp_expand_spec(mjSpec *spec, const cusp_override *overrides, int noverride, char *error,
                     int error_size);

/* The expanded scene as MJCF text (malloc'd, caller frees) that stock MuJoCo
 * tools load once libcusp.so is loaded. NULL with a message on error. */
char *cusp_expand(const char *path, const cusp_override *overrides, int noverride, char *error,
                  int error_size);

/* Soft instances of m (0 for a model without cusp.softbody instances). */
int cusp_instance_count(const mjModel *m);
const char *cusp_instance_name(const mjModel *m, int instance);
int cusp_instance_find(const mjModel *m, const char *name);

/* The message of the last failed init on this thread (mj_makeData raises
 * MuJoCo's generic "plugin->init failed"; this says why), "" if none. */
const char *cusp_last_error(void);

/* sizeof of a struct this header or contact.h declares, by its name
 * ("cusp_step_report", "cusp_contact_report", "cusp_pair_contact",
 * "sb_contact_info", "sb_lcp_info"); 0 for any other name. A binding that
 * mirrors them (the Python package's ctypes structures) checks its layout
 * against the library it loaded, so that an older or newer library is
 * refused by name instead of read field by field at the wrong offsets. */
size_t cusp_struct_size(const char *name);

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
  double time;           /* simulated time the last compute was for, s */
  long steps;            /* advances committed since the last reset */
  int ncontact, nkept;
  sb_contact_info info;  /* of the last coupled solve: lcp; or sap, ncp (lcp.iterations their Newton
                            iterations, residual SAP's gradient or the NCP's exact residual, no
                            conditioning; an ncp solve answered by SAP counts 2 attempts) */
  int solved;            /* last solve converged (status solved); penalty: 1 */
  int fallback;          /* the solve needed more than the first solver */
  double max_penetration;/* m, >= 0, over the last step's contacts */
  long solves, converged, fallbacks, nan_events; /* totals since the last reset */
  long skipped_advances; /* advances with no compute of the same state before them (not committed) */
  /* wall time of the last compute, microseconds, by stage: soft dynamics
   * (controls, prepare, commit, placing disks), narrow phase (disks and the
   * touched bodies' other contacts), assembly (rigid free velocity, contact
   * Jacobians, penalty forces, Delassus matrix), conditioning (stages 1-3),
   * solve (the LCP solver chain); total covers the whole compute */
  double dynamics_us, collision_us, assembly_us, conditioning_us, solve_us, total_us;
  /* "" when the last compute found nothing wrong and noticed nothing; else
   * why its state is not physical, in words: a soft disk deeper inside a geom
   * (or another disk) than its own radius, which contact cannot push out (an
   * arm mounted inside a solid), naming the instance, disk, geom and depth; a
   * failed soft step or contact solve; contacts dropped (contact_capacity).
   * When a disk first goes that deep, MuJoCo's mju_warning says it too. With
   * no failure it may hold a note of what the step noticed and went on with
   * (a mocap body's jump, key teleport_speed): a failure is always said
   * instead of a note, never hidden by one. */
  char message[256];
} cusp_step_report;

/* NULL when m has no soft instance or d has no cusp data. */
const cusp_step_report *cusp_report(const mjModel *m, const mjData *d);
int cusp_contacts(const mjModel *m, const mjData *d, const cusp_contact_report **contacts);
/* World force (N) on the soft side of cusp_contacts' contact `contact`: its
 * impulse over the time step. These contacts have no entry in d->contact
 * (soft disks are contype 0); touch sensors on the body they touch count
 * their normal force. Contacts between MuJoCo geoms that cusp solved (a body
 * touching a disk, with its own other contacts) are cusp_pair_contacts'.
 * 0, or -1 when there is no such contact. */
int cusp_contact_force(const mjModel *m, const mjData *d, int contact, double force[3]);

/* A contact between two MuJoCo geoms that cusp solved in its coupled
 * problem last compute (a body a soft disk touches, with its own other
 * contacts: a box pushed by an arm against a ledge), at cusp's point. Its
 * force is in MuJoCo's rows when MuJoCo gave the pair rows that step:
 * mujoco_contact is then the pair's contact in d->contact nearest to this
 * point, whose rows carry this force (summed with the pair's other contacts
 * gathered there), and mj_contactForce and touch sensors read it. Otherwise
 * (mujoco_contact = -1: MuJoCo had no contact of the pair, or only ones it
 * excluded, dist >= its include margin, with no rows; or rows MuJoCo kept
 * solving itself) it is in no row, and touch sensors count its normal
 * force here. So every contact force that acted is, once, in
 * mj_contactForce over d->contact, cusp_contacts, or a cusp_pair_contacts
 * entry with mujoco_contact = -1 (README, "Reading contact forces"). */
typedef struct {
  int geom[2];           /* MuJoCo geoms; the normal points from geom[0] to geom[1], as mjContact's */
  double pos[3];         /* world contact point, m */
  double normal[3];
  double gap;            /* m, < 0 penetration */
  double force[3];       /* world force on geom[1] over the last step, N (geom[0] gets the opposite) */
  double normal_force;   /* its normal part, N */
  int mujoco_contact;    /* index into d->contact whose efc rows carry this force, or -1: none does */
  int kept;              /* 1 unless dropped by rank selection */
} cusp_pair_contact;
/* The last compute's cusp_pair_contact entries (valid until the next
 * compute; copied by mj_copyData): returns how many. */
int cusp_pair_contacts(const mjModel *m, const mjData *d, const cusp_pair_contact **contacts);

/* The last compute's contact LCP w = M z + q (impulses), as solved after rank
 * selection and before scaling: column-major n x n, valid until the next
 * compute. Returns n (0 when the step solved none), -1 without cusp data. */
int cusp_lcp(const mjModel *m, const mjData *d, const double **M, const double **q);

/* Soft state of an instance: generalized coordinates and velocities (n),
 * pointers into d->plugin_state. Returns n, or -1 for a bad instance.
 * Contact native (MuJoCo links, plugin/native.h): the coordinates' tendon
 * lengths and rates at d's qpos, qvel (in a scratch buffer). */
int cusp_soft_state(const mjModel *m, const mjData *d, int instance, const double **q, const double **v);
/* World pose of the tip / of a point at arc length s (0..total length) on
 * the backbone at the current state, on the mount where d's last
 * kinematics put it (mj_forward, mj_step) (contact native: straight between the
 * disk bodies as MuJoCo last placed them, the nearer disk's axes). */
int cusp_tip_pose(const mjModel *m, const mjData *d, int instance, double pos[3], double quat[4]);
int cusp_backbone_point(const mjModel *m, const mjData *d, int instance, double s, double pos[3], double mat[9]);
double cusp_total_length(const mjModel *m, int instance);
/* The held end's reaction (keys end, end_body): the [force (3); moment (3)]
 * its anchor exerted on the tip over the last step, world axes, N and N*m
 * (the impulse over the step divided by h; moment 0 for a pin; end_body, if
 * it moves, got the opposite). Returns 0, or -1 for a bad instance or one
 * whose end is free (then zeros). */
int cusp_end_reaction(const mjModel *m, const mjData *d, int instance, double reaction[6]);
/* The reaction of held point `hold` (0-based entry of the key hold): the
 * [force (3); moment about the point (3)] its anchor exerted on the rod over
 * the last step, world axes, N and N*m, as cusp_end_reaction. Returns 0, or
 * -1 for a bad instance or an instance with fewer holds (then zeros). */
int cusp_hold_reaction(const mjModel *m, const mjData *d, int instance, int hold, double reaction[6]);
/* Mass of an instance's chain (distributed, disks and rigid links), kg; 0 for a bad instance. */
double cusp_total_mass(const mjModel *m, const mjData *d, int instance);
/* Mechanical energy of an instance at its current state, J: kinetic,
 * gravitational (zero at the world origin's height) and elastic. Returns 0,
 * or -1 for a bad instance or one with contact native (MuJoCo's mj_energy*). */
int cusp_energy(const mjModel *m, const mjData *d, int instance, double *kinetic, double *gravity, double *elastic);

/* ---------- applied loads ---------- */

/* Holds a world force (N) and moment (N*m) on the backbone of an instance at
 * arc length s through every following step until cleared (force = torque =
 * NULL clears; so does a reset). It is part of the plugin state. A force in
 * xfrc_applied of a disk body (the viewer's mouse perturbation) acts too,
 * at that disk, without this call. Returns 0, or -1 with a message for a
 * bad instance, s out of range, a non-finite value or contact native. */
int cusp_apply_force(const mjModel *m, mjData *d, int instance, double s, const double force[3],
                     const double torque[3], char *error, int error_size);
/* The soft instance and arc length (m from the base) of a generated disk
 * body (INSTANCE/diskK). Returns 0, or -1 when body is not a soft disk. */
int cusp_disk_of_body(const mjModel *m, int body, int *instance, double *s);

/* ---------- switching (viewer, sweeps) ---------- */

/* Changes a live key of a running instance (contact lcp|penalty, solver,
 * fallback, conditioning, eps_rank, ruiz_iterations, tikhonov,
 * stabilization, friction, pyramid, penalty_*): part of the plugin state, so
 * copies and saved states carry it; a reset returns to the model's value. */
int cusp_set(const mjModel *m, mjData *d, int instance, const char *key, const char *value,
             char *error, int error_size);
/* Reads back a live key as cusp_set would accept it. Returns 0, or -1 with a
 * message in value. */
int cusp_get(const mjModel *m, const mjData *d, int instance, const char *key, char *value, int value_size);

#ifdef __cplusplus
}
#endif

#endif

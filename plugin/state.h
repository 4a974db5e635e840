/* The layout of cusp's part of d->plugin_state (DESIGN §5): everything the
 * next step depends on, so that MuJoCo's copies, saved states and resets
 * carry the soft arms exactly. The first cusp.softbody instance of a model
 * (the lead) holds the whole block; the others hold none, because one
 * coupled contact problem spans every arm.
 *
 *   header    CUSP_STATE_HEADER doubles: a tag, then the counters
 *   per arm   CUSP_STATE_SLOT doubles (capacity CUSP_MAX_COORDS coordinates)
 *   warm      sb_contact_warm_capacity(contacts): the last solve's impulses and stage-2
 *             scales by contact id
 *
 * The size depends only on what nstate can see at compile time (the number
 * of instances and of their disk bodies, by name), not on the keys. */
#ifndef CUSP_STATE_H
#define CUSP_STATE_H

#include <mujoco/mujoco.h>

#include "config.h"

/* The slots of the keys that can change while running, in the state's
 * order; which key is live and its slot is the key table's (config.c). */
typedef enum {
  CUSP_LIVE_CONTACT, CUSP_LIVE_SOLVER, CUSP_LIVE_FALLBACK, CUSP_LIVE_CONDITIONING, CUSP_LIVE_EPS_RANK,
  CUSP_LIVE_RUIZ_ITERATIONS, CUSP_LIVE_TIKHONOV, CUSP_LIVE_STABILIZATION, CUSP_LIVE_FRICTION,
  CUSP_LIVE_PYRAMID, CUSP_LIVE_PENALTY_STIFFNESS, CUSP_LIVE_PENALTY_DAMPING, CUSP_LIVE_SAP_STIFFNESS,
  CUSP_LIVE_SAP_DISSIPATION, CUSP_LIVE_NCP_SMOOTHING, CUSP_NLIVE
} cusp_live_key;
/* The key of a live slot (from the key table), or NULL. */
const cusp_key *cusp_live_key_of(int slot);

/* One arm's view into the state. */
typedef struct {
  double *q, *v;            /* generalized coordinates and velocities */
  double *base_twist;       /* 6: the mount's twist [w; v] (its axes) at the last committed step */
  double *have_base_twist;  /* 1 when base_twist holds a step's value */
  double *feedback_start;   /* per feedback entry: the joint's value at the first step */
  double *have_feedback_start;
  double *load;             /* cusp_apply_force: active, section, s, force[3], torque[3] */
  double *live;             /* CUSP_NLIVE: the live keys' current values */
  double *mount_pose;       /* 12: a mocap mount's pose (R row-major, then p) at the last committed step */
  double *have_mount_pose;  /* 1 when mount_pose holds a step's value */
  double *held_pose;        /* 12 per held point (CUSP_MAX_HELD): the pose of the mocap body that carries
                               its anchor (R row-major, then p) at the last committed step */
  double *have_held_pose;   /* CUSP_MAX_HELD: 1 when that held point's held_pose holds a step's value */
  double *mount_move;       /* 12: a mocap mount's move over h at the last committed step, as a twist [w; v]
                               (its axes): as seen (0..5), then the last one taken as a motion (6..11) */
  double *held_move;        /* 12 per held point (CUSP_MAX_HELD): its mocap body's share of the anchor's
                               velocity [v; w] (world) at the last committed step: as seen, then the last
                               one taken as a motion (a jump's change is measured against both) */
} cusp_arm_state;

enum { CUSP_LOAD_ACTIVE, CUSP_LOAD_SECTION, CUSP_LOAD_S, CUSP_LOAD_FORCE, CUSP_LOAD_TORQUE = 6, CUSP_LOAD_SIZE = 9 };

/* The counters of cusp_step_report that are state (they continue in a copy). */
typedef enum {
  CUSP_COUNT_STEPS, CUSP_COUNT_SOLVES, CUSP_COUNT_CONVERGED, CUSP_COUNT_FALLBACKS, CUSP_COUNT_NAN_EVENTS,
  CUSP_COUNT_SKIPPED_ADVANCES, CUSP_NCOUNT
} cusp_counter;

#define CUSP_STATE_TAG 1847.0 /* first double of a cusp state block */
#define CUSP_STATE_HEADER (1 + CUSP_NCOUNT)
#define CUSP_MAX_HELD (CUSP_MAX_HOLDS + 1) /* the key hold's entries and the far end */
#define CUSP_STATE_SLOT \
  (2 * CUSP_MAX_COORDS + 6 + 1 + CUSP_MAX_COORDS + 1 + CUSP_LOAD_SIZE + CUSP_NLIVE + 12 + 1 + 13 * CUSP_MAX_HELD + 12 + 12 * CUSP_MAX_HELD)

/* Contacts the coupled problem holds for a model with ndisk soft disks in
 * all: room for several contacts per disk (a disk flat on a plane gives 4)
 * and for MuJoCo's contacts on the bodies the arms touch. */
#define CUSP_CONTACTS_PER_DISK 8
#define CUSP_CONTACTS_EXTRA 256
int cusp_max_contacts(int ndisk);

/* Doubles of the lead's state for ninst arms and ndisk disks. */
int cusp_state_size(int ninst, int ndisk);

/* Views of a state block (d->plugin_state + m->plugin_stateadr[lead]). */
double *cusp_state_counters(double *block);
cusp_arm_state cusp_state_arm(double *block, int arm);
double *cusp_state_warm(double *block, int ninst);

/* Live keys between the configuration and the state. */
void cusp_live_store(const cusp_instance_config *c, double *live);
void cusp_live_load(cusp_instance_config *c, const double *live);

#endif

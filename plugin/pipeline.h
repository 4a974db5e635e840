/* Inside the plugin's step (DESIGN §5): the runtime every stage works on,
 * and the stages of compute, each a named function in a file of its own:
 *
 *   controls.c        the arms' generalized inputs (ctrl + schedules + feedback)
 *   arm.c             disk placement, applied loads
 *   mount.c           a mount with dofs: its motion, and its implicit coupling with the arm
 *   narrowphase.c     the soft disks' contacts, and the touched bodies' own
 *   contact_model.h   the contact models (penalty: forces before the soft step;
 *                     lcp: impulses solved with it), one file each
 *   runtime.c         the pipeline itself: compute, advance, reset, copy
 *
 * Internal: nothing here is part of cusp.h. */
#ifndef CUSP_PIPELINE_H
#define CUSP_PIPELINE_H

#include <math.h>
#include <string.h>
#include <time.h>

#include "ncp.h"
#include "runtime.h"
#include "sap.h"

#include "margin.h"

/* vectors of 3 per contact the sap and ncp models keep (cusp_runtime.cvec) */
#define CUSP_CVEC 8

/* The most memory the contact workspaces of one model may take (the dense
 * LCP, the Delassus matrices of sap and ncp) is half the machine's physical
 * memory, and never less than this: a model that would need more is
 * refused at init, naming the keys that size them (docs/memory.md). */
#define CUSP_CONTACT_WORKSPACE_MIN ((size_t)1 << 30)
/* Contact workspaces up to this size hold every contact in the LCP, so that
 * every live conditioning (rank selection off included) runs; above it the
 * LCP holds what rank selection can keep, at most the dofs (runtime.c,
 * kept_contacts). A fixed size, not the machine's: a scene behaves the same
 * everywhere. */
#define CUSP_CONTACT_WORKSPACE_FULL ((size_t)1 << 30)

/* A material point of an arm held to a body (ends.c): an entry of the key
 * hold, or the far end (keys end, end_body). */
typedef struct {
  int rows;                 /* 3 (pin) or 6 (clamp) */
  int body_id;              /* the body it is held to (0: the world) */
  int section;              /* the point: its section and the arc length in it */
  double s;
  int entry;                /* the key hold's entry (1-based), or 0 for the key end (messages) */
  sb_pose anchor;           /* the anchor in the body's frame (from the initial configuration) */
  int mocap_body;           /* the mocap body that carries the anchor (body_id or its root), or -1 */
  double anchor_vel[6];     /* that mocap body's share of the anchor's world [linear; angular] velocity
                               at compute: its last move / h (ends.c, cusp_ends_mocap_motion) */
  double move[12];          /* that move as seen, and the last one taken as a motion, for the state */
  int index;                /* its constraint in this step's problem, or -1 */
  double reaction[6];       /* the anchor's [force; moment about the point] on the rod over the last
                               step, world (N, N*m) */
} cusp_held;

typedef struct {
  cusp_instance_config cfg; /* as read at init, with the live keys of the state being stepped */
  sb_model *model;
  sb_state *state;          /* scratch: the state's q, v at compute's start, the next ones after it */
  sb_work *work;
  double *tau;              /* this step's generalized input */
  int pbody;                /* body index in this step's contact problem, or -1 */
  sb_pose *disk_pose;       /* world, at the start of the step */
  double *disk_twist;       /* 6 per disk: body twist of the disk frame [w; v] (the penalty
                             * model's contact velocities, the narrow phase's swept margin) */
  double *disk_motion;      /* 4 per disk: world velocity of its centre and its rim's speed about it,
                             * at the step's start (narrow phase's scratch) */
  sb_pose *next_disk_pose;  /* the same at the state compute prepared: advance moves the mocap */
  double *next_disk_twist;  /* bodies there and swaps these with disk_pose, disk_twist */
  double live0[CUSP_NLIVE]; /* the live keys as the model sets them (what a reset returns to) */
  int moving_base;          /* the mount has degrees of freedom */
  int mocap_mount;          /* the mount is a mocap body: its velocity is its last move / h */
  double base_twist[6];     /* the mount's twist at compute (advance commits it) */
  double mount_move[12];    /* a mocap mount's last move over h: as seen, and the last one taken as a motion */
  /* the implicit coupling with such a mount (mount.c) */
  int mount_npath, *mount_path; /* the mount's dofs and their ancestors, mount first */
  double *mount_J;          /* 6 x npath: the mount's body Jacobian ([w; v], its axes) at compute */
  double *mount_qvel0;      /* npath: those dofs' velocities at compute */
  double *mount_B;          /* n x 6: sb_base_inertia's B */
  double *mount_X;          /* n x 6, column-major: Mt^-1 B */
  double *mount_J6;         /* 6 x n scratch: a disk's or a held point's frame Jacobian
                               (cusp_mount_share) */
  double mount_Meff[36];    /* the arm's effective inertia at its base */
  double mount_kappa[6];    /* the mount's velocity-product acceleration (base_acc of the soft step) */
  int mount_coupled;        /* compute coupled this step: advance finishes it */
  int mount_lcp;            /* its contacts are in this step's contact problems in the coupled coordinates */
  double feedback_start[CUSP_MAX_COORDS]; /* the feedback joints' values compute used */
  /* the work's kinematics are at placed_q, placed_v and placed_base: the
   * next compute reuses them when the state it starts from is exactly that */
  int disks_placed;
  sb_pose placed_base;
  double *placed_q, *placed_v;
  double penalty_wrench[6]; /* this step's explicit forces on the arm (penalty contacts, applied loads):
                               [moment about the base; force], world */
  /* what an implicit contact model solved for this arm (contact_model.h) */
  int has_impulse;
  double *impulse;          /* n: generalized contact impulse J^T lambda, N*s */
  double contact_wrench[6]; /* the contacts' world impulse as [moment about the base; impulse] */
  double *native_q, *native_v; /* contact native: the coordinates from MuJoCo's joints */
  /* the held points (ends.c): the key hold's entries in order, then the far end (key end) when held */
  int nheld;
  cusp_held held[CUSP_MAX_HELD];
} soft_t;

/* What a contact of this step joins (index-parallel to the problem's contacts). */
typedef struct {
  int inst, disk;           /* soft side 0; inst < 0: a MuJoCo contact of a touched body */
  int own_geom;             /* inst < 0: the touched body's geom (other_geom the geom it touches) */
  int other_geom, other_inst, other_disk;
  int pair_index;           /* which of the pair's contacts (warm-start identity) */
  cusp_contact_kind model;  /* the soft side's contact model (key contact) */
  int in_problem;           /* an implicit model took it into its problem */
  double pos[3], normal[3], gap;
  double impulse[3], fn;
  int kept;
  int carrier;              /* inst < 0: the MuJoCo contact whose rows carry its force, or -1 (cusp_pair_carrier) */
} contact_meta;

struct cusp_runtime {
  const mjModel *m;         /* the model and data of the callback being run */
  mjData *d;
  int ninst;
  soft_t *soft;
  sb_contact_problem *P;
  int max_contacts;         /* contacts one step holds: the arms' contact_capacity and the touched bodies' allowance */
  int max_kept;             /* of those, the most the lcp model's LCP holds after stage 1 (its dense matrices) */
  int rigid_contacts;       /* the touched bodies' allowance within max_contacts */
  int max_directions;       /* the largest pyramid the arms were loaded with: the workspaces' size */
  int warm_size;            /* doubles of the plugin state's warm start (cusp_max_contacts: at least max_contacts) */
  int nmeta;
  contact_meta *meta;
  mjPreContact *cbuf;       /* collision results of one pair */
  cusp_contact_report *reports;
  int nreport;
  cusp_pair_contact *pair_reports; /* the touched bodies' own contacts cusp solved */
  int npair_report;
  cusp_step_report rep;
  /* rigid side */
  double *vfree, *force, *qfrc_cusp, *jac, *jac2, *sqrt_inv_d;
  double *rigid_impulse;    /* nv: what an implicit model solved for the MuJoCo system */
  /* M + h diag(damping) factored (rigid_damping.c), and d->M's diagonal
   * while it is borrowed to factor it; rigid_damped: the rigid side's
   * solves use it this step */
  double *rigid_LD, *rigid_LDiagInv, *rigid_M_diag;
  int rigid_damped;
  int has_rigid_impulse;
  char *touched;            /* per body */
  char *held_tree;          /* per kinematic tree: a constraint MuJoCo keeps acts on it (contact_build.c) */
  int *geom_soft;           /* per geom: instance and disk of a soft disk, or -1 -1 */
  int *disk_partners;       /* per instance (ngeom apart), ascending: the geoms its disks are tested
                               against, all but its own disks (unless self_contact) and the disks of
                               instances before it (narrowphase.c) */
  int *ndisk_partners;      /* per instance: how many */
  int rigid_body;           /* problem body of the MuJoCo system, or -1 */
  int lcp_ran;              /* the last compute solved a coupled contact problem (lcp, sap or ncp;
                               cusp_lcp shows the LCP's) */
  /* the mass matrix around the mounts' coupling (mount.c) */
  double *mount_jac;        /* 12 x nv scratch */
  double *end_jac;          /* 6 x nv: a held point's anchor side (ends.c) */
  double *mount_M_pre, *mount_M_post; /* nC: d->M before and after compute added the arms' inertia */
  int mount_augmented;
  /* the sap and ncp models (contact_sap.c, contact_ncp.c): their solvers'
   * workspaces, and the problem restricted to the contacts they solve */
  sb_sap_work *sap;
  sb_ncp_work *ncp;
  double *cW;               /* 9 max_contacts^2: Delassus operator of those contacts */
  double *cvec;             /* CUSP_CVEC x 3 max_contacts: their vectors */
  int *cidx;                /* max_contacts: their indices in the problem */
  /* compute's result until advance commits it */
  int pending;
  double pending_time;
  double pending_count[CUSP_NCOUNT];
  char message[256];         /* why this compute failed or its state is not physical ("" if neither) */
  char note[256];            /* what this compute noticed and went on with (a mocap body's jump): the
                                report's message when message is "", never hiding a failure */
  int deep_warned;           /* a disk was found inside a solid and mju_warning said so (until it leaves) */
  int ndropped;              /* contacts this compute found beyond max_contacts (not solved) */
  int dropped_warned;        /* mju_warning said so (until a step drops none) */
  int yielded;               /* this compute left MuJoCo's rows of pairs it solved inactive */
  int forces_pending;        /* its contact forces are not yet in efc_force and touch sensors */
};

/* ---------- small helpers ---------- */

static inline void pose_from_body(const mjData *d, int body, sb_pose *g) {
  for (int k = 0; k < 9; k++) g->R[k] = d->xmat[9 * body + k];
  for (int k = 0; k < 3; k++) g->p[k] = d->xpos[3 * body + k];
}

static inline double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

static inline int all_finite(const double *x, int n) {
  for (int i = 0; i < n; i++)
    if (!isfinite(x[i])) return 0;
  return 1;
}

/* No entry bad by MuJoCo's own test (mj_isBad): each finite and within
 * mjMAXVAL, the largest value MuJoCo allows in qpos, qvel and qacc. A soft
 * state or a force beyond it is a divergence, not a motion: a run that blew
 * up reached 1e20 with every entry finite. */
static inline int none_bad(const double *x, int n) {
  for (int i = 0; i < n; i++)
    if (!(fabs(x[i]) <= mjMAXVAL)) return 0;
  return 1;
}

/* A body MuJoCo moves: it has degrees of freedom, or is welded to one that
 * has (mocap bodies, the disks among them, are their own weld bodies but
 * have none). */
static inline int body_is_rigid(const mjModel *m, int body) { return m->body_dofnum[m->body_weldid[body]] > 0; }

/* ---------- controls.c ---------- */

/* The arm's generalized input tau from its actuators' ctrl plus the scene's
 * schedule and feedback (cusp never writes d->ctrl: a ctrl the user sets
 * adds to them), clamped to ctrlrange, times gear; the feedback start
 * values it used wait in the arm for advance. */
void cusp_stage_controls(cusp_runtime *r, soft_t *s, const cusp_arm_state *st);
/* A native arm's schedule and feedback through its tendon actuators' moment
 * arms into qfrc_cusp (MuJoCo applies the ctrl itself). */
void cusp_native_controls(cusp_runtime *r, soft_t *s);

/* ---------- arm.c ---------- */

/* Disk world poses (and twists) at the arm's scratch state; the work's
 * kinematics end there. */
void cusp_arm_place_disks(const cusp_runtime *r, soft_t *s, sb_pose *pose, double *twist);
/* The disk geoms' MuJoCo frames from poses. */
void cusp_arm_write_geoms(cusp_runtime *r, const soft_t *s, const sb_pose *pose);
/* cusp_apply_force's load and xfrc_applied on the disk bodies, into tau. */
void cusp_arm_applied_loads(cusp_runtime *r, soft_t *s, const cusp_arm_state *st);
/* World velocity of, and offset in disk k's frame of, a world point. */
void cusp_arm_point_velocity(const soft_t *s, int k, const double p[3], double v[3]);
void cusp_arm_point_offset(const soft_t *s, int k, const double p[3], double off[3]);
/* Adds a world force at p to the arm's explicit wrench about its base. */
void cusp_arm_accumulate_wrench(soft_t *s, const double p[3], const double f[3]);

/* ---------- mount.c ---------- */

/* The mount's dof path and coupling workspace (-1: out of memory); free. */
int cusp_mount_create(const mjModel *m, soft_t *s);
void cusp_mount_free(soft_t *s);
/* 0 when MuJoCo's mass matrix stores every entry between the mount's path
 * dofs (it drops some for a "simple" body: the expansion marks mounts
 * simple="false"), else -1. */
int cusp_mount_check(const mjModel *m, const soft_t *s);
/* The mount's pose, twist, velocity-product acceleration and Jacobian into
 * the arm's base motion, before its step is prepared. */
void cusp_mount_motion(cusp_runtime *r, soft_t *s);
/* A mocap mount's twist: its move over the last committed step / h (zero
 * before one), as the base motion of the soft step; cusp_mount_mocap_commit
 * keeps its pose at the step's end. */
void cusp_mount_mocap_motion(cusp_runtime *r, soft_t *s, const cusp_arm_state *st, double h);
void cusp_mount_mocap_commit(cusp_runtime *r, const soft_t *s, cusp_arm_state *st);
/* After the arms' steps are prepared: each arm's effective inertia into
 * d->M (refactored) and its load at zero mount acceleration into
 * qfrc_passive, so that MuJoCo's own solve gives the coupled acceleration. */
void cusp_stage_mount_coupling(cusp_runtime *r, double h);
/* Before an implicit model's contacts are added: which coupled arms enter
 * its problem in the coupled coordinates (their free velocity and base twist
 * change for the step, once: an arm an earlier model took in stays); 1 when
 * any of its contacts or held points is on such an arm (the MuJoCo system is
 * then a body of it). */
int cusp_mount_lcp_prepare(cusp_runtime *r, cusp_contact_kind model);
/* For a contact of arm cm->inst (side 0): the mounts' part of its points'
 * motion. Against a rigid body or the world, onto side 1, which becomes
 * the MuJoCo system with Jacobian jac (3 x nv; the other rigid body's, if
 * any, already in it); against an arm (side 1 soft), as the contact's third
 * participant, the MuJoCo system with jac = side 0's share minus side 1's,
 * of each arm held in the coupled coordinates. 0 (also when neither arm is
 * coupled there), -1 without a point. */
int cusp_mount_lcp_side(cusp_runtime *r, const contact_meta *cm, sb_contact *sc, double *jac);
/* The mount's share of the motion of arm s's material frame at (section,
 * sarc) in the coupled coordinates: with v = u - X J_b qdot the frame moves
 * by G u + (G_b - G X) J_b qdot, and jb (rows x nv) gets (G_b - G X) J_b:
 * rows 0-2 the world velocity of the point at off in the frame's axes (NULL:
 * its origin), whose world position is point (NULL: the origin's), rows 3-5
 * (rows 6) the frame's angular velocity. 0, or -1 without a point there. */
int cusp_mount_share(cusp_runtime *r, soft_t *s, int section, double sarc, const double off[3],
                     const double point[3], int rows, double *jb);
/* The mount's share of the arm's contact impulse, into qfrc_cusp (arms the
 * LCP saw on a fixed mount only). */
void cusp_mount_contact_load(cusp_runtime *r, soft_t *s, double h);
/* In advance: the arm's step finished with the mount's integrated
 * acceleration. -1 when that leaves a non-finite state. */
int cusp_mount_finish(cusp_runtime *r, soft_t *s, double h);

/* ---------- contact_build.c ---------- */

/* The coupled problem of every contact of one implicit model in r->P: the
 * soft bodies, the MuJoCo system as one body when such a contact touches a
 * body with degrees of freedom (or an end is held to one), those contacts,
 * then the touched bodies' own contacts with the speculative margin (tagged
 * with the model), then the arms' held ends (ends.c). Returns the contacts
 * plus held ends in the problem (0: nothing of that model to solve); t_col
 * gets the time of the touched bodies' collisions. */
int cusp_contact_build(cusp_runtime *r, cusp_contact_kind model, double h, double *t_col);
/* The matrix MuJoCo's integrator will solve the rigid bodies' velocity
 * with, as far as it is dof damping (rigid_damping.c): factors
 * M + h diag(dD/dv) into r->rigid_LD when the integrator treats some dof's
 * damping implicitly (r->rigid_damped = 1), else leaves M (0). */
void cusp_rigid_damping_factor(cusp_runtime *r, double h);
/* x = A^-1 x and x = sqrt(D_A)^-1 L_A^-T x for ncol columns, A the matrix
 * above (M itself when r->rigid_damped is 0). */
void cusp_rigid_solve(cusp_runtime *r, double *x, int ncol);
void cusp_rigid_half_solve(cusp_runtime *r, double *x, int ncol);
/* The problem's result (after a solve or sb_contact_apply_impulses) into
 * r->meta (the model's contacts, in the order they were added), the arms
 * and the MuJoCo system. */
void cusp_contact_scatter(cusp_runtime *r, cusp_contact_kind model);
/* MuJoCo's constraint rows of the touched bodies' contacts the implicit
 * models solved this step (and whose bodies nothing else in MuJoCo's solve
 * acts on) aim at a reference acceleration no solve reaches, so MuJoCo's
 * solver leaves them inactive: the pair is solved once, not twice (issue 19
 * item 3). Run from the passive stage, after mj_makeConstraint and before
 * mj_referenceConstraint computes efc_aref from efc_pos and efc_KBIP. */
void cusp_yield_solved_contacts(cusp_runtime *r);

/* Did MuJoCo's contact i leave its rows to cusp's solve in the last compute? */
int cusp_contact_yielded(const cusp_runtime *r, int i);

/* ---------- contact_forces.c ---------- */

/* After MuJoCo's constraint solver (the sensor stage; advance when that did
 * not run): cusp's forces of the pairs whose rows yielded into those rows'
 * d->efc_force in MuJoCo's convention (mj_contactForce reads them), and the
 * normal forces of those and of the soft disks' contacts into the touch
 * sensors of the bodies they touch. Once per compute. */
void cusp_publish_contact_forces(cusp_runtime *r);
/* The MuJoCo contact whose rows carry the force of cusp's contact cm of a
 * touched body's pair (cm->inst < 0): the pair's yielded contact nearest to
 * cm->pos; -1 when the pair has none (MuJoCo listed no contact of it, or
 * excluded it with no rows, or kept solving it). After compute's yield. */
int cusp_pair_carrier(const cusp_runtime *r, const contact_meta *cm);

/* The contacts of an assembled problem (m, W column-major 3m x 3m) that
 * some impulse can move (trace of W_ii above 1e-12 of the largest; a disk at
 * a static mount is not), their indices into idx and their W into Wc (3n x
 * 3n); returns n. sap and ncp give the others no impulse. */
int cusp_movable_contacts(int m, const double *W, double *Wc, int *idx);

/* ---------- ends.c ---------- */

/* The arm's held points (keys hold, end) and their anchors in their bodies'
 * frames, from the initial configuration at qpos0 (init; after the model
 * and work exist). 0, or -1 with a message. */
int cusp_end_create(const mjModel *m, soft_t *s, char *error, int error_size);
/* Does any arm of this contact model hold a point? */
int cusp_ends_active(const cusp_runtime *r, cusp_contact_kind model);
/* 1 when a point of this model is held to a body with degrees of freedom
 * (marked touched: the MuJoCo system then joins the problem). */
int cusp_ends_need_rigid(cusp_runtime *r, cusp_contact_kind model);
/* The held points of this model's arms as bilateral constraints of r->P
 * (after every body); returns how many. */
int cusp_ends_add(cusp_runtime *r, cusp_contact_kind model);
/* After the solve: each such held point's reaction. */
void cusp_ends_scatter(cusp_runtime *r, cusp_contact_kind model);
/* The anchors' motion a mocap body gives them (MuJoCo gives it none): its
 * last move / h, from its pose at the last committed step in st (zero
 * before one), into each held point's anchor_vel; cusp_ends_mocap_commit
 * keeps those poses at the step's end. */
void cusp_ends_mocap_motion(cusp_runtime *r, soft_t *s, const cusp_arm_state *st, double h);
/* Whether mocap body `body`'s last move is a jump rather than a motion.
 * move[12] holds on entry, as [linear (m/s); angular (rad/s)] velocities of
 * the point it carries (a held anchor, the mount's origin), the move of the
 * last committed step as seen (0..5) and the last one taken as a motion
 * (6..11); vel (6, same order) is this step's. A jump changes the velocity:
 * |dv| + |dw| lever above key teleport_speed against both (a steady motion,
 * however fast, is no jump, and the step after a jump is measured against
 * the jump and against the motion before it). lever: the rod's rest length
 * for a mount and a clamp (a turn of the anchor turns the whole rod), 0 for
 * a pin (its rows see only the point's velocity, which holds the turn's
 * w x arm). On return move holds this step's (seen; taken), and a jump is
 * said in r->note, naming the instance, `what`, the body, the move and the
 * turn in the step, the change and the key's value. */
int cusp_mocap_jumped(cusp_runtime *r, const soft_t *s, const char *what, int body, const double vel[6],
                      double lever, double move[12]);
/* The rod's rest length, m. */
double cusp_rest_length(const soft_t *s);
void cusp_ends_mocap_commit(cusp_runtime *r, const soft_t *s, cusp_arm_state *st);

/* ---------- narrowphase.c ---------- */

/* Every soft disk's contacts into r->meta (speculative margin, MuJoCo's
 * collision functions, its parent filter, soft pairs once). */
void cusp_stage_narrow_phase(cusp_runtime *r);
/* At init, after geom_soft: each instance's disk_partners. */
void cusp_disk_partners(cusp_runtime *r);
/* MuJoCo's own pair rules for two non-soft geoms: the friction coefficient,
 * or -1 when MuJoCo would not collide them. */
double cusp_mujoco_pair_friction(const mjModel *m, int g1, int g2);
/* Appends a contact to r->meta; -1 when full. */
int cusp_add_meta(cusp_runtime *r, const contact_meta *cm);

#endif

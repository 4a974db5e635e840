/* Inside the plugin's step (DESIGN §5): the runtime every stage works on,
 * and the stages of compute, each a named function in a file of its own:
 *
 *   controls.c        the arms' generalized inputs (ctrl + schedules + feedback)
 *   arm.c             mount motion, disk placement, applied loads, the mount's load
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

#include "runtime.h"

/* Contacts are looked for this far before they touch (speculative: a gap g
 * acts only if it would close within the step). */
#define CUSP_MARGIN 0.005

typedef struct {
  cusp_instance_config cfg; /* as read at init, with the live keys of the state being stepped */
  sb_model *model;
  sb_state *state;          /* scratch: the state's q, v at compute's start, the next ones after it */
  sb_work *work;
  double *tau;              /* this step's generalized input */
  int pbody;                /* body index in this step's contact problem, or -1 */
  sb_pose *disk_pose;       /* world, at the start of the step */
  double *disk_twist;       /* 6 per disk: body twist of the disk frame (0 when no
                             * instance uses the penalty model, its only reader) */
  sb_pose *next_disk_pose;  /* the same at the state compute prepared: advance moves the mocap */
  double *next_disk_twist;  /* bodies there and swaps these with disk_pose, disk_twist */
  double live0[CUSP_NLIVE]; /* the live keys as the model sets them (what a reset returns to) */
  int moving_base;          /* the mount has degrees of freedom */
  double base_twist[6];     /* the mount's twist at compute (advance commits it) */
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
} soft_t;

/* What a contact of this step joins (index-parallel to the problem's contacts). */
typedef struct {
  int inst, disk;           /* soft side 0; inst < 0: a MuJoCo contact of a touched body */
  int other_geom, other_inst, other_disk;
  int pair_index;           /* which of the pair's contacts (warm-start identity) */
  cusp_contact_kind model;  /* the soft side's contact model (key contact) */
  int in_problem;           /* an implicit model took it into its problem */
  double pos[3], normal[3], gap;
  double impulse[3], fn;
  int kept;
} contact_meta;

struct cusp_runtime {
  const mjModel *m;         /* the model and data of the callback being run */
  mjData *d;
  int ninst;
  soft_t *soft;
  sb_contact_problem *P;
  int max_contacts;
  int nmeta;
  contact_meta *meta;
  mjPreContact *cbuf;       /* collision results of one pair */
  cusp_contact_report *reports;
  int nreport;
  cusp_step_report rep;
  /* rigid side */
  double *vfree, *force, *qfrc_cusp, *jac, *jac2, *sqrt_inv_d;
  double *rigid_impulse;    /* nv: what an implicit model solved for the MuJoCo system */
  int has_rigid_impulse;
  char *touched;            /* per body */
  int *geom_soft;           /* per geom: instance and disk of a soft disk, or -1 -1 */
  int rigid_body;           /* problem body of the MuJoCo system, or -1 */
  int lcp_ran;              /* the last compute solved a coupled LCP (cusp_lcp shows it) */
  /* compute's result until advance commits it */
  int pending;
  double pending_time;
  double pending_count[CUSP_NCOUNT];
  char message[256];
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

/* The mount's twist now and its rate since the last committed step. */
void cusp_arm_base_motion(cusp_runtime *r, soft_t *s, const cusp_arm_state *st, double h);
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
/* The arm's load on a mount with degrees of freedom, into qfrc_cusp. */
void cusp_arm_base_load(cusp_runtime *r, soft_t *s, double h);

/* ---------- narrowphase.c ---------- */

/* Every soft disk's contacts into r->meta (speculative margin, MuJoCo's
 * collision functions, its parent filter, soft pairs once). */
void cusp_stage_narrow_phase(cusp_runtime *r);
/* MuJoCo's own pair rules for two non-soft geoms: the friction coefficient,
 * or -1 when MuJoCo would not collide them. */
double cusp_mujoco_pair_friction(const mjModel *m, int g1, int g2);
/* Appends a contact to r->meta; -1 when full. */
int cusp_add_meta(cusp_runtime *r, const contact_meta *cm);

#endif

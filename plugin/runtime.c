/* The step pipeline of the plugin (DESIGN §5). compute (MuJoCo's passive
 * stage: positions, collisions and the factored mass matrix are ready) runs
 * the stages below and leaves the soft arms' next state in the runtime;
 * advance (after MuJoCo's integration) commits it into d->plugin_state and
 * moves the disk bodies. One coupled LCP per step holds every soft body, the
 * MuJoCo system as one body (M^-1 by mj_solveM, whitening by mj_solveM2),
 * the soft contacts, and the other contacts of the rigid bodies the soft
 * bodies touch (found by the same speculative narrow phase, so a ball
 * squeezed against the floor is known not to give way). The rigid side's
 * total impulse goes back to MuJoCo as qfrc_passive += J_r^T lambda / h;
 * MuJoCo's own solver then finds those contacts already at rest. */
#include "runtime.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collide.h"
#include "instances.h"
#include "native.h"
#include "penalty.h"
#include "sb_util.h"

/* Contacts are looked for this far before they touch (speculative: a gap g
 * acts only if it would close within the step). */
#define CUSP_MARGIN 0.005
#define CUSP_SLIP_SPEED 1e-3

typedef struct {
  cusp_instance_config cfg; /* as read at init, with the live keys of the state being stepped */
  sb_model *model;
  sb_state *state;          /* scratch: the state's q, v at compute's start, the next ones after it */
  sb_work *work;
  double *tau;              /* this step's generalized input */
  int pbody;                /* body index in this step's contact problem, or -1 */
  sb_pose *disk_pose;       /* world, at the start of the step */
  double *disk_twist;       /* 6 per disk: body twist of the disk frame */
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
  double penalty_wrench[6]; /* this step's penalty forces and applied loads on the arm: [moment about the base; force], world */
  double *native_q, *native_v; /* contact native: the coordinates from MuJoCo's joints */
} soft_t;

/* What a contact of this step joins (index-parallel to the problem's contacts). */
typedef struct {
  int inst, disk;           /* soft side 0; inst < 0: a MuJoCo contact of a touched body */
  int other_geom, other_inst, other_disk;
  int pair_index;           /* which of the pair's contacts (warm-start identity) */
  int penalty;
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
  char *touched;            /* per body */
  int *geom_soft;           /* per geom: instance and disk of a soft disk, or -1 -1 */
  int rigid_body;           /* problem body of the MuJoCo system, or -1 */
  int lcp_ran;              /* the last compute solved a coupled LCP */
  /* compute's result until advance commits it */
  int pending;
  double pending_time;
  double pending_count[CUSP_NCOUNT];
  char message[256];
};

/* ---------- small helpers ---------- */

static void pose_from_body(const mjData *d, int body, sb_pose *g) {
  for (int k = 0; k < 9; k++) g->R[k] = d->xmat[9 * body + k];
  for (int k = 0; k < 3; k++) g->p[k] = d->xpos[3 * body + k];
}

static double schedule_value(const cusp_schedule *s, double t) {
  if (s->nknot == 0) return 0;
  if (t <= s->t[0]) return s->u[0];
  for (int k = 1; k < s->nknot; k++)
    if (t <= s->t[k]) {
      double a = (t - s->t[k - 1]) / (s->t[k] - s->t[k - 1]);
      return s->u[k - 1] + a * (s->u[k] - s->u[k - 1]);
    }
  return s->u[s->nknot - 1];
}

/* schedule + kp (target(t) - q) - kd qdot, clamped to ctrlrange; the
 * schedule alone when the joint's state is not finite (MuJoCo diverged). */
static double feedback_value(const cusp_instance_config *c, const cusp_feedback *f, double start,
                             const mjData *d) {
  double t = d->time, base = f->schedule >= 0 ? schedule_value(&c->schedule[f->schedule], t) : 0;
  double target = f->target;
  if (f->ramped && t < f->ramp[1])
    target = t <= f->ramp[0] ? start : start + (t - f->ramp[0]) / (f->ramp[1] - f->ramp[0]) * (f->target - start);
  double u = base + f->kp * (target - d->qpos[f->qpos_adr]) - f->kd * d->qvel[f->dof_adr];
  if (!isfinite(u)) u = base;
  return fmin(fmax(u, c->ctrlrange[0]), c->ctrlrange[1]);
}

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

static int all_finite(const double *x, int n) {
  for (int i = 0; i < n; i++)
    if (!isfinite(x[i])) return 0;
  return 1;
}

cusp_runtime *cusp_runtime_of(const mjModel *m, const mjData *d) {
  int lead = cusp_plugin_instance(m, 0);
  if (lead < 0 || !d || lead >= d->nplugin) return NULL;
  return (cusp_runtime *)d->plugin_data[lead];
}

double *cusp_state_of(const mjModel *m, const mjData *d) {
  int lead = cusp_plugin_instance(m, 0);
  if (lead < 0 || !d || m->plugin_statenum[lead] < CUSP_STATE_HEADER) return NULL;
  return d->plugin_state + m->plugin_stateadr[lead];
}

/* The soft geoms' MuJoCo frames from the given disk poses, so that the
 * collision functions and rays see the state (mocap bodies are not part of
 * MuJoCo's physics state: after mj_setState they may lag). */
static void write_disk_geoms(cusp_runtime *r, const soft_t *s, const sb_pose *pose) {
  if (s->cfg.contact == CUSP_CONTACT_NATIVE) return; /* MuJoCo places its own bodies */
  for (int k = 0; k < s->cfg.ndisk; k++) {
    int geom = s->cfg.disk[k].geom_id;
    for (int a = 0; a < 9; a++) r->d->geom_xmat[9 * geom + a] = pose[k].R[a];
    for (int a = 0; a < 3; a++) r->d->geom_xpos[3 * geom + a] = pose[k].p[a];
  }
}

/* Disk world poses (and twists) at the soft scratch state: the kinematics
 * of the work end there. */
static void place_disks(const cusp_runtime *r, soft_t *s, sb_pose *pose, double *twist) {
  pose_from_body(r->d, s->cfg.base_body_id, &s->model->base);
  sb_kinematics(s->model, s->work, s->state->q, s->state->v);
  s->disks_placed = 1;
  s->placed_base = s->model->base;
  memcpy(s->placed_q, s->state->q, sizeof(double) * s->model->n);
  memcpy(s->placed_v, s->state->v, sizeof(double) * s->model->n);
  for (int k = 0; k < s->cfg.ndisk; k++) {
    const cusp_disk *dk = &s->cfg.disk[k];
    sb_point_kinematics(s->model, s->work, dk->section, dk->s, &pose[k], NULL, twist ? twist + 6 * k : NULL, NULL);
  }
}

/* World velocity of a point p on disk k. */
static void disk_point_velocity(const soft_t *s, int k, const double p[3], double v[3]) {
  const sb_pose *g = &s->disk_pose[k];
  const double *eta = s->disk_twist + 6 * k; /* [omega; v] in the disk frame */
  double w[3], vl[3], rel[3];
  for (int a = 0; a < 3; a++) {
    w[a] = g->R[3 * a] * eta[0] + g->R[3 * a + 1] * eta[1] + g->R[3 * a + 2] * eta[2];
    vl[a] = g->R[3 * a] * eta[3] + g->R[3 * a + 1] * eta[4] + g->R[3 * a + 2] * eta[5];
    rel[a] = p[a] - g->p[a];
  }
  v[0] = vl[0] + w[1] * rel[2] - w[2] * rel[1];
  v[1] = vl[1] + w[2] * rel[0] - w[0] * rel[2];
  v[2] = vl[2] + w[0] * rel[1] - w[1] * rel[0];
}

/* Offset of world point p in the frame of disk k. */
static void disk_offset(const soft_t *s, int k, const double p[3], double off[3]) {
  const sb_pose *g = &s->disk_pose[k];
  for (int a = 0; a < 3; a++)
    off[a] = g->R[a] * (p[0] - g->p[0]) + g->R[3 + a] * (p[1] - g->p[1]) + g->R[6 + a] * (p[2] - g->p[2]);
}


/* A body MuJoCo moves: it has degrees of freedom, or is welded to one that
 * has (mocap bodies, the disks among them, are their own weld bodies but
 * have none). */
static int body_is_rigid(const mjModel *m, int body) { return m->body_dofnum[m->body_weldid[body]] > 0; }

/* ---------- the MuJoCo system as a custom contact body ---------- */

static void rigid_solve(void *ctx, int ncol, double *x) {
  cusp_runtime *r = ctx;
  mj_solveM(r->m, r->d, x, x, ncol);
}

static void rigid_half_solve(void *ctx, int ncol, double *x) {
  cusp_runtime *r = ctx;
  mj_solveM2(r->m, r->d, x, x, r->sqrt_inv_d, ncol);
}

/* v + h M^-1 (every force MuJoCo will apply except constraints): the rigid
 * bodies' velocity if the soft contacts pushed nothing. */
static void rigid_free_velocity(cusp_runtime *r, double h) {
  const mjModel *m = r->m;
  mjData *d = r->d;
  int nv = m->nv;
  mj_rne(m, d, 0, r->force);
  mj_fwdActuation(m, d); /* recomputed identically by mj_step after this stage */
  for (int i = 0; i < nv; i++)
    r->force[i] = d->qfrc_passive[i] + d->qfrc_actuator[i] + d->qfrc_applied[i] - r->force[i];
  for (int b = 1; b < m->nbody; b++) {
    if (m->body_mocapid[b] >= 0) continue; /* soft disks: their load goes to the arm */
    const double *x = d->xfrc_applied + 6 * b;
    if (x[0] || x[1] || x[2] || x[3] || x[4] || x[5])
      mj_applyFT(m, d, x, x + 3, d->xipos + 3 * b, b, r->force);
  }
  mj_solveM(m, d, r->vfree, r->force, 1);
  for (int i = 0; i < nv; i++) r->vfree[i] = d->qvel[i] + h * r->vfree[i];
  for (int i = 0; i < nv; i++) r->sqrt_inv_d[i] = sqrt(d->qLDiagInv[i]);
}

/* ---------- stages ---------- */

/* The mount's twist now, and its rate over the last step (d->cacc is not
 * current in the passive stage): the soft step then carries the d'Alembert
 * forces of a moving mount, and contacts see the disks' absolute velocity. */
static void set_base_motion(cusp_runtime *r, soft_t *s, const cusp_arm_state *st, double h) {
  double acc[6] = {0, 0, 0, 0, 0, 0};
  pose_from_body(r->d, s->cfg.base_body_id, &s->model->base);
  mj_objectVelocity(r->m, r->d, mjOBJ_XBODY, s->cfg.base_body_id, s->base_twist, 1); /* [w; v], mount axes */
  if (*st->have_base_twist)
    for (int k = 0; k < 6; k++) acc[k] = (s->base_twist[k] - st->base_twist[k]) / h;
  sb_set_base_motion(s->model, s->base_twist, acc);
}

/* The arm's load on a mount with degrees of freedom: the chain's reaction at
 * its base for the step it took, corrected for the contact impulses and
 * penalty forces that came from outside rather than through the mount. */
static void apply_base_load(cusp_runtime *r, soft_t *s, double h, int lcp_ran) {
  double W[6], Wc[6];
  memcpy(W, s->work->base_wrench, sizeof W);
  if (lcp_ran && s->pbody >= 0 && sb_contact_body_wrench(r->P, s->pbody, s->model->base.p, Wc) == 0)
    for (int k = 0; k < 6; k++) W[k] += Wc[k] / h;
  for (int k = 0; k < 6; k++) W[k] += s->penalty_wrench[k];
  if (!all_finite(W, 6)) {
    r->pending_count[CUSP_COUNT_NAN_EVENTS]++;
    return;
  }
  mj_applyFT(r->m, r->d, W + 3, W, s->model->base.p, s->cfg.base_body_id, r->qfrc_cusp);
}

static void accumulate_wrench(soft_t *s, const double p[3], const double f[3]) {
  double rr[3] = {p[0] - s->model->base.p[0], p[1] - s->model->base.p[1], p[2] - s->model->base.p[2]};
  s->penalty_wrench[0] += rr[1] * f[2] - rr[2] * f[1];
  s->penalty_wrench[1] += rr[2] * f[0] - rr[0] * f[2];
  s->penalty_wrench[2] += rr[0] * f[1] - rr[1] * f[0];
  for (int a = 0; a < 3; a++) s->penalty_wrench[3 + a] += f[a];
}

/* A world force and moment at (section, s) into this step's generalized
 * force (at the kinematics place_disks just computed) and the base's share. */
static void apply_point_load(soft_t *s, int section, double s_arc, const double f[3], const double mo[3]) {
  sb_pose g;
  if (sb_point_kinematics(s->model, s->work, section, s_arc, &g, NULL, NULL, NULL)) return;
  sb_add_world_wrench(s->model, s->work, section, s_arc, f, mo, s->tau);
  accumulate_wrench(s, g.p, f);
  for (int a = 0; a < 3; a++) s->penalty_wrench[a] += mo[a];
}

/* The loads on the arm: cusp_apply_force's (state) and xfrc_applied on the
 * disk bodies (the viewer's mouse perturbation), at the disk's centre. */
static void stage_applied_loads(cusp_runtime *r, soft_t *s, const cusp_arm_state *st) {
  const double *ld = st->load;
  if (ld[CUSP_LOAD_ACTIVE] != 0)
    apply_point_load(s, (int)ld[CUSP_LOAD_SECTION], ld[CUSP_LOAD_S], ld + CUSP_LOAD_FORCE, ld + CUSP_LOAD_TORQUE);
  for (int k = 0; k < s->cfg.ndisk; k++) {
    const double *x = r->d->xfrc_applied + 6 * s->cfg.disk[k].body_id;
    if (!(x[0] || x[1] || x[2] || x[3] || x[4] || x[5]) || !all_finite(x, 6)) continue;
    apply_point_load(s, s->cfg.disk[k].section, s->cfg.disk[k].s, x, x + 3);
  }
}

/* The arm's generalized input: ctrl of its actuators plus the scene's
 * schedule and feedback (cusp never writes d->ctrl: a ctrl the user sets
 * adds to them), clamped to ctrlrange, times gear. */
static void stage_controls(cusp_runtime *r, soft_t *s, const cusp_arm_state *st) {
  const mjData *d = r->d;
  double u[CUSP_MAX_COORDS];
  for (int c = 0; c < s->cfg.ncoord; c++) {
    int act = s->cfg.actuator_id[c];
    u[c] = act >= 0 && isfinite(d->ctrl[act]) ? d->ctrl[act] : 0;
  }
  for (int q = 0; q < s->cfg.nschedule; q++) {
    const cusp_schedule *sc = &s->cfg.schedule[q];
    u[sc->coord] += schedule_value(sc, d->time);
  }
  for (int q = 0; q < s->cfg.nfeedback; q++) {
    const cusp_feedback *f = &s->cfg.feedback[q];
    s->feedback_start[q] = *st->have_feedback_start ? st->feedback_start[q] : d->qpos[f->qpos_adr];
    /* the feedback law includes its coordinate's schedule */
    double fb = feedback_value(&s->cfg, f, s->feedback_start[q], d);
    u[f->coord] += fb - (f->schedule >= 0 ? schedule_value(&s->cfg.schedule[f->schedule], d->time) : 0);
  }
  for (int c = 0; c < s->cfg.ncoord; c++) {
    if (s->cfg.actuator_id[c] < 0) { /* not actuated: no input */
      s->tau[c] = 0;
      continue;
    }
    s->tau[c] = s->cfg.gear * fmin(fmax(u[c], s->cfg.ctrlrange[0]), s->cfg.ctrlrange[1]);
  }
}

/* A native arm's inputs go through its tendon actuators: MuJoCo applies
 * ctrl; the scene's schedule and feedback are added here through the same
 * moment arms. */
static void native_controls(cusp_runtime *r, soft_t *s) {
  const mjModel *m = r->m;
  mjData *d = r->d;
  for (int c = 0; c < s->cfg.ncoord; c++) {
    int act = s->cfg.actuator_id[c];
    if (act < 0) continue;
    double user = isfinite(d->ctrl[act]) ? d->ctrl[act] : 0;
    double extra = s->tau[c] / s->cfg.gear - fmin(fmax(user, s->cfg.ctrlrange[0]), s->cfg.ctrlrange[1]);
    if (extra == 0 || !isfinite(extra)) continue;
    int row = m->actuator_outadr[act]; /* a tendon transmission has one force output */
    for (int k = d->moment_rowadr[row]; k < d->moment_rowadr[row] + d->moment_rownnz[row]; k++)
      r->qfrc_cusp[d->moment_colind[k]] += d->actuator_moment[k] * extra;
  }
}

static int add_meta(cusp_runtime *r, const contact_meta *cm) {
  if (r->nmeta >= r->max_contacts) return -1;
  r->meta[r->nmeta++] = *cm;
  return 0;
}

/* Soft contacts of instance i, disk k against everything it may touch. */
static void collide_disk(cusp_runtime *r, int i, int k) {
  const mjModel *m = r->m;
  soft_t *s = &r->soft[i];
  int a = s->cfg.disk[k].geom_id;
  for (int b = 0; b < m->ngeom; b++) {
    if (b == a) continue;
    int oi = r->geom_soft[2 * b], ok = r->geom_soft[2 * b + 1];
    if (oi >= 0) {
      if (oi < i) continue; /* each soft pair once */
      if (oi == i && (!s->cfg.self_contact || ok <= k + 1)) continue;
    } else {
      if (!(m->geom_contype[b] | m->geom_conaffinity[b])) continue;
      /* MuJoCo's parent filter: the arm is a child of its mount and of
       * whatever moves welded to it (a static mount is welded to the world
       * and its floor, so there only the mount itself). Without the filter
       * only the base disk, which can never leave the mount, is exempt. */
      int ob = m->geom_bodyid[b], base = s->cfg.base_body_id;
      int mount_group = ob == base || (m->body_weldid[base] && m->body_weldid[ob] == m->body_weldid[base]);
      if (mount_group && (k == 0 || !(m->opt.disableflags & mjDSBL_FILTERPARENT))) continue;
    }
    int n = cusp_collide_pair(m, r->d, a, b, CUSP_MARGIN + m->geom_margin[b], r->cbuf, mjMAXCONPAIR);
    for (int c = 0; c < n; c++) {
      const mjPreContact *con = &r->cbuf[c];
      contact_meta cm = {.inst = i, .disk = k, .other_geom = b, .other_inst = oi, .other_disk = ok,
                         .pair_index = c};
      cm.penalty = s->cfg.contact == CUSP_CONTACT_PENALTY;
      cm.gap = con->dist;
      /* the normal points from the disk to b; ours from b into the disk */
      for (int q = 0; q < 3; q++) {
        cm.normal[q] = -con->normal[q];
        cm.pos[q] = con->pos[q] - 0.5 * con->dist * con->normal[q];
      }
      if (add_meta(r, &cm)) return;
    }
  }
}

static void stage_narrow_phase(cusp_runtime *r) {
  for (int i = 0; i < r->ninst; i++)
    for (int k = 0; k < r->soft[i].cfg.ndisk && r->soft[i].cfg.contact != CUSP_CONTACT_NATIVE; k++)
      collide_disk(r, i, k);
}

/* Fills the side for the other geom of a soft contact. */
static void other_side(cusp_runtime *r, const contact_meta *cm, sb_contact_side *side, double *jac) {
  const mjModel *m = r->m;
  memset(side, 0, sizeof *side);
  side->body = -1;
  if (cm->other_inst >= 0) {
    soft_t *o = &r->soft[cm->other_inst];
    side->body = o->pbody;
    side->seg = o->cfg.disk[cm->other_disk].section;
    side->s = o->cfg.disk[cm->other_disk].s;
    disk_offset(o, cm->other_disk, cm->pos, side->offset);
    return;
  }
  int body = m->geom_bodyid[cm->other_geom];
  if (body_is_rigid(m, body) && r->rigid_body >= 0) {
    side->body = r->rigid_body;
    mj_jac(m, r->d, jac, NULL, cm->pos, body);
    side->jac = jac;
  }
}

static void stage_penalty_forces(cusp_runtime *r) {
  const mjModel *m = r->m;
  mjData *d = r->d;
  for (int c = 0; c < r->nmeta; c++) {
    contact_meta *cm = &r->meta[c];
    if (!cm->penalty) continue;
    soft_t *s = &r->soft[cm->inst];
    double v0[3], v1[3] = {0, 0, 0}, f[3];
    disk_point_velocity(s, cm->disk, cm->pos, v0);
    int body = cm->other_inst < 0 ? m->geom_bodyid[cm->other_geom] : 0;
    if (cm->other_inst >= 0) {
      disk_point_velocity(&r->soft[cm->other_inst], cm->other_disk, cm->pos, v1);
    } else if (body_is_rigid(m, body)) {
      mj_jac(m, d, r->jac, NULL, cm->pos, body);
      for (int a = 0; a < 3; a++) {
        v1[a] = 0;
        for (int j = 0; j < m->nv; j++) v1[a] += r->jac[a * m->nv + j] * d->qvel[j];
      }
    }
    double vrel[3] = {v0[0] - v1[0], v0[1] - v1[1], v0[2] - v1[2]};
    sb_penalty_params pp = {s->cfg.penalty_stiffness, s->cfg.penalty_damping, s->cfg.friction,
                            CUSP_SLIP_SPEED};
    sb_penalty_force(&pp, cm->normal, cm->gap, vrel, f);
    if (!all_finite(f, 3)) continue;
    const sb_pose *g = &s->disk_pose[cm->disk];
    double rr[3] = {cm->pos[0] - g->p[0], cm->pos[1] - g->p[1], cm->pos[2] - g->p[2]};
    double mo[3] = {rr[1] * f[2] - rr[2] * f[1], rr[2] * f[0] - rr[0] * f[2], rr[0] * f[1] - rr[1] * f[0]};
    sb_add_world_wrench(s->model, s->work, s->cfg.disk[cm->disk].section, s->cfg.disk[cm->disk].s, f, mo, s->tau);
    accumulate_wrench(s, cm->pos, f);
    double nf[3] = {-f[0], -f[1], -f[2]}, zero[3] = {0, 0, 0};
    if (cm->other_inst >= 0) {
      soft_t *o = &r->soft[cm->other_inst];
      const sb_pose *go = &o->disk_pose[cm->other_disk];
      double ro[3] = {cm->pos[0] - go->p[0], cm->pos[1] - go->p[1], cm->pos[2] - go->p[2]};
      double mo2[3] = {ro[1] * nf[2] - ro[2] * nf[1], ro[2] * nf[0] - ro[0] * nf[2], ro[0] * nf[1] - ro[1] * nf[0]};
      sb_add_world_wrench(o->model, o->work, o->cfg.disk[cm->other_disk].section, o->cfg.disk[cm->other_disk].s,
                          nf, mo2, o->tau);
      accumulate_wrench(o, cm->pos, nf);
    } else if (body_is_rigid(m, body)) {
      mj_applyFT(m, d, nf, zero, cm->pos, body, r->qfrc_cusp);
    }
    for (int a = 0; a < 3; a++) cm->impulse[a] = f[a] * m->opt.timestep;
    cm->fn = (f[0] * cm->normal[0] + f[1] * cm->normal[1] + f[2] * cm->normal[2]) * m->opt.timestep;
    cm->kept = 1;
  }
}

/* MuJoCo's own pair rules for two non-soft geoms: an explicit <pair> (with
 * its friction), else contype/conaffinity, not within one welded body, not
 * parent and child (world excepted), not an <exclude>d body pair. Returns
 * the friction coefficient, or -1 when MuJoCo would not collide them. */
static double mujoco_pair_friction(const mjModel *m, int g1, int g2) {
  for (int i = 0; i < m->npair; i++)
    if ((m->pair_geom1[i] == g1 && m->pair_geom2[i] == g2) || (m->pair_geom1[i] == g2 && m->pair_geom2[i] == g1))
      return m->pair_friction[5 * i];
  if (!((m->geom_contype[g1] & m->geom_conaffinity[g2]) || (m->geom_contype[g2] & m->geom_conaffinity[g1])))
    return -1;
  int b1 = m->geom_bodyid[g1], b2 = m->geom_bodyid[g2];
  int w1 = m->body_weldid[b1], w2 = m->body_weldid[b2];
  if (w1 == w2) return -1;
  if (!(m->opt.disableflags & mjDSBL_FILTERPARENT) && w1 && w2 &&
      (m->body_weldid[m->body_parentid[w1]] == w2 || m->body_weldid[m->body_parentid[w2]] == w1))
    return -1;
  int lo = b1 < b2 ? b1 : b2, hi = b1 < b2 ? b2 : b1;
  for (int i = 0; i < m->nexclude; i++)
    if (m->exclude_signature[i] == (lo << 16) + hi) return -1;
  return fmax(m->geom_friction[3 * g1], m->geom_friction[3 * g2]);
}

/* The touched rigid bodies' contacts with everything but soft disks, found
 * with the speculative margin and added to the coupled problem. Side 0 is
 * the other geom, side 1 the touched body's geom. MuJoCo's list only holds
 * pairs already within geom margin, so a squeezed ball lifting by a micron
 * would lose its floor in the LCP every few steps and be pushed through it. */
static void touched_body_contacts(cusp_runtime *r) {
  const mjModel *m = r->m;
  mjData *d = r->d;
  char err[256];
  if (m->opt.disableflags & mjDSBL_CONTACT) return;
  for (int body = 1; body < m->nbody; body++) {
    if (!r->touched[body]) continue;
    for (int g = m->body_geomadr[body]; g < m->body_geomadr[body] + m->body_geomnum[body]; g++) {
      for (int o = 0; o < m->ngeom; o++) {
        int ob = m->geom_bodyid[o];
        if (r->geom_soft[2 * o] >= 0 || ob == body) continue;
        if (r->touched[ob] && ob < body) continue; /* that pair was done from ob */
        double mu = mujoco_pair_friction(m, g, o);
        if (mu < 0) continue;
        int n = cusp_collide_pair(m, d, g, o, CUSP_MARGIN + fmax(m->geom_margin[g], m->geom_margin[o]),
                                  r->cbuf, mjMAXCONPAIR);
        for (int c = 0; c < n; c++) {
          const mjPreContact *con = &r->cbuf[c];
          sb_contact sc;
          memset(&sc, 0, sizeof sc);
          sc.side[0].body = body_is_rigid(m, ob) ? r->rigid_body : -1;
          sc.side[1].body = r->rigid_body;
          if (sc.side[0].body >= 0) {
            mj_jac(m, d, r->jac2, NULL, con->pos, ob);
            sc.side[0].jac = r->jac2;
          }
          mj_jac(m, d, r->jac, NULL, con->pos, body);
          sc.side[1].jac = r->jac;
          for (int q = 0; q < 3; q++) sc.normal[q] = con->normal[q];
          sc.gap = con->dist;
          sc.friction = mu;
          sc.id = 2 * (((long)g * m->ngeom + o) * mjMAXCONPAIR + c) + 1;
          contact_meta cm = {.inst = -1, .disk = -1, .other_geom = o, .other_inst = -1};
          if (r->nmeta >= r->max_contacts) return;
          if (sb_contact_add(r->P, &sc, err, sizeof err) < 0) continue;
          add_meta(r, &cm);
        }
      }
    }
  }
}

static sb_contact_options options_of(const cusp_instance_config *c) {
  sb_contact_options o = sb_contact_default_options();
  o.directions = c->pyramid;
  o.rank_selection = (c->conditioning & CUSP_COND_QR) != 0;
  o.rank_tol = c->eps_rank;
  o.ruiz_iterations = (c->conditioning & CUSP_COND_RUIZ) ? c->ruiz_iterations : 0;
  o.tikhonov = (c->conditioning & CUSP_COND_TIKHONOV) ? c->tikhonov : 0;
  o.stabilization = c->stabilization;
  o.lcp.nchain = 0;
  o.lcp.chain[o.lcp.nchain++] = c->solver;
  for (int s = 0; s < SB_LCP_NSOLVERS && c->fallback; s++)
    if (s != (int)c->solver) o.lcp.chain[o.lcp.nchain++] = (sb_lcp_solver)s;
  return o;
}

/* The coupled contact problem of the soft contacts (lcp model): soft
 * bodies, the MuJoCo system, the contacts and the touched bodies' own, then
 * assembly, conditioning and the solver chain. Returns 1 when it ran. */
static int stage_coupled_problem(cusp_runtime *r, int nsoft_contacts, double h, sb_contact_info *info,
                                 int *solved, double *t_col, double *t_asm) {
  const mjModel *m = r->m;
  char err[256];
  int nlcp = 0;
  for (int c = 0; c < nsoft_contacts; c++) nlcp += !r->meta[c].penalty;
  if (nlcp == 0) return 0;
  double t_mark = now_us();
  sb_contact_problem *P = r->P;
  sb_contact_clear(P);
  for (int i = 0; i < r->ninst; i++)
    r->soft[i].pbody = r->soft[i].cfg.contact == CUSP_CONTACT_NATIVE
                           ? -1
                           : sb_contact_add_soft(P, r->soft[i].model, r->soft[i].work, err, sizeof err);
  r->rigid_body = -1;
  int need_rigid = 0;
  for (int c = 0; c < nsoft_contacts; c++) {
    const contact_meta *cm = &r->meta[c];
    if (cm->penalty || cm->other_inst >= 0) continue;
    int body = m->geom_bodyid[cm->other_geom];
    if (body_is_rigid(m, body)) {
      need_rigid = 1;
      r->touched[body] = 1;
    }
  }
  if (need_rigid && m->nv > 0) {
    rigid_free_velocity(r, h);
    r->rigid_body = sb_contact_add_custom(P, m->nv, rigid_solve, rigid_half_solve, r, r->vfree, err, sizeof err);
  }
  /* one coupled solve: the first LCP instance in contact sets its options */
  int lead = 0;
  while (r->meta[lead].penalty) lead++;
  const sb_contact_options opt = options_of(&r->soft[r->meta[lead].inst].cfg);
  for (int c = 0; c < nsoft_contacts; c++) {
    contact_meta *cm = &r->meta[c];
    if (cm->penalty) continue;
    soft_t *s = &r->soft[cm->inst];
    sb_contact sc;
    memset(&sc, 0, sizeof sc);
    sc.side[0].body = s->pbody;
    sc.side[0].seg = s->cfg.disk[cm->disk].section;
    sc.side[0].s = s->cfg.disk[cm->disk].s;
    disk_offset(s, cm->disk, cm->pos, sc.side[0].offset);
    other_side(r, cm, &sc.side[1], r->jac);
    memcpy(sc.normal, cm->normal, sizeof sc.normal);
    sc.gap = cm->gap;
    sc.friction = s->cfg.friction;
    /* warm-start identity: even for the disks' contacts, odd for the touched bodies' own */
    sc.id = 2 * ((((long)cm->inst * CUSP_MAX_DISKS + cm->disk) * (m->ngeom + 1) + cm->other_geom) * mjMAXCONPAIR +
                 cm->pair_index);
    if (sb_contact_add(P, &sc, err, sizeof err) < 0) {
      cm->penalty = -1; /* not in the problem */
      cm->kept = 0;
    }
  }
  *t_asm += now_us() - t_mark;
  t_mark = now_us();
  if (r->rigid_body >= 0) touched_body_contacts(r);
  *t_col += now_us() - t_mark;
  int rc = sb_contact_solve(P, h, &opt, info, err, sizeof err);
  *solved = rc == 0 && info->lcp.status == SB_LCP_SOLVED;
  if (!*solved) sb_errorf(r->message, sizeof r->message, "contact solve: %s", err);
  /* results back into meta, in the order the contacts were added */
  int pc = 0;
  for (int c = 0; c < r->nmeta; c++) {
    contact_meta *cm = &r->meta[c];
    if (cm->penalty) continue;
    sb_contact_result(P, pc++, cm->impulse, &cm->fn, NULL, &cm->kept);
  }
  return 1;
}

/* The soft arms' next state into the scratch (advance commits it), the
 * rigid bodies' and mounts' share into qfrc_passive. */
static void stage_commit_scratch(cusp_runtime *r, int failed, double h) {
  const mjModel *m = r->m;
  int nv = m->nv;
  char err[256];
  for (int i = 0; i < r->ninst && !failed; i++) {
    soft_t *s = &r->soft[i];
    if (s->cfg.contact == CUSP_CONTACT_NATIVE) continue;
    const double *p = r->lcp_ran && s->pbody >= 0 ? sb_contact_body_impulse(r->P, s->pbody) : NULL;
    if (p && !all_finite(p, s->model->n)) {
      p = NULL;
      r->pending_count[CUSP_COUNT_NAN_EVENTS]++;
    }
    if (sb_step_commit(s->model, s->state, s->work, p, err, sizeof err)) {
      sb_errorf(r->message, sizeof r->message, "instance \"%s\": %s", s->cfg.name, err);
      r->pending_count[CUSP_COUNT_NAN_EVENTS]++;
    } else if (s->moving_base) {
      apply_base_load(r, s, h, r->lcp_ran);
    }
  }
  if (r->lcp_ran && r->rigid_body >= 0) {
    const double *p = sb_contact_body_impulse(r->P, r->rigid_body);
    if (all_finite(p, nv))
      for (int j = 0; j < nv; j++) r->qfrc_cusp[j] += p[j] / h;
    else
      r->pending_count[CUSP_COUNT_NAN_EVENTS]++;
  }
  if (!all_finite(r->qfrc_cusp, nv)) {
    memset(r->qfrc_cusp, 0, sizeof(double) * nv);
    r->pending_count[CUSP_COUNT_NAN_EVENTS]++;
  }
  for (int j = 0; j < nv; j++) r->d->qfrc_passive[j] += r->qfrc_cusp[j];
}

static void write_reports(cusp_runtime *r, int nsoft_contacts, const sb_contact_info *info) {
  cusp_step_report *rep = &r->rep;
  rep->ncontact = nsoft_contacts;
  rep->nkept = 0;
  rep->max_penetration = 0;
  r->nreport = 0;
  for (int c = 0; c < nsoft_contacts; c++) {
    const contact_meta *cm = &r->meta[c];
    cusp_contact_report *cr = &r->reports[r->nreport++];
    cr->instance = cm->inst;
    cr->disk = cm->disk;
    cr->other_geom = cm->other_inst >= 0 ? -1 : cm->other_geom;
    cr->other_instance = cm->other_inst;
    memcpy(cr->pos, cm->pos, sizeof cr->pos);
    memcpy(cr->normal, cm->normal, sizeof cr->normal);
    cr->gap = cm->gap;
    memcpy(cr->impulse, cm->impulse, sizeof cr->impulse);
    cr->normal_impulse = cm->fn;
    cr->kept = cm->kept;
    rep->nkept += cm->kept != 0;
    rep->max_penetration = fmax(rep->max_penetration, -cm->gap);
  }
  rep->info = *info;
}

/* ---------- compute / advance ---------- */

static void report_counters(cusp_runtime *r, const double *count) {
  r->rep.steps = (long)count[CUSP_COUNT_STEPS];
  r->rep.solves = (long)count[CUSP_COUNT_SOLVES];
  r->rep.converged = (long)count[CUSP_COUNT_CONVERGED];
  r->rep.fallbacks = (long)count[CUSP_COUNT_FALLBACKS];
  r->rep.nan_events = (long)count[CUSP_COUNT_NAN_EVENTS];
  r->rep.skipped_advances = (long)count[CUSP_COUNT_SKIPPED_ADVANCES];
}

void cusp_runtime_compute(cusp_runtime *r, const mjModel *m, mjData *d) {
  double *block = cusp_state_of(m, d);
  if (!block || block[0] != CUSP_STATE_TAG) return;
  r->m = m;
  r->d = d;
  double h = m->opt.timestep;
  int nv = m->nv;
  double t_start = now_us(), t_dyn = 0, t_col = 0, t_asm = 0, t_mark = t_start;
  r->nmeta = 0;
  memcpy(r->pending_count, cusp_state_counters(block), sizeof r->pending_count);
  memset(r->qfrc_cusp, 0, sizeof(double) * (nv ? nv : 1));
  memset(r->touched, 0, m->nbody);
  sb_contact_warm_load(r->P, cusp_state_warm(block, r->ninst));

  /* the state, controls, disk placement and applied loads of every arm */
  for (int i = 0; i < r->ninst; i++) {
    soft_t *s = &r->soft[i];
    cusp_arm_state st = cusp_state_arm(block, i);
    cusp_live_load(&s->cfg, st.live);
    memset(s->tau, 0, sizeof(double) * s->model->n);
    memset(s->penalty_wrench, 0, sizeof s->penalty_wrench);
    stage_controls(r, s, &st);
    if (s->cfg.contact == CUSP_CONTACT_NATIVE) { /* MuJoCo steps it: inputs only */
      native_controls(r, s);
      continue;
    }
    memcpy(s->state->q, st.q, sizeof(double) * s->model->n);
    memcpy(s->state->v, st.v, sizeof(double) * s->model->n);
    if (s->moving_base) set_base_motion(r, s, &st, h);
    /* the last advance left the work's kinematics at the state it committed:
     * reuse them when this state is exactly that and the mount has not moved */
    sb_pose base;
    pose_from_body(d, s->cfg.base_body_id, &base);
    if (!s->disks_placed || s->moving_base || memcmp(&base, &s->placed_base, sizeof base) ||
        memcmp(s->placed_q, st.q, sizeof(double) * s->model->n) ||
        memcmp(s->placed_v, st.v, sizeof(double) * s->model->n))
      place_disks(r, s, s->disk_pose, s->disk_twist);
    write_disk_geoms(r, s, s->disk_pose);
    stage_applied_loads(r, s, &st);
  }
  t_dyn += now_us() - t_mark;
  t_mark = now_us();
  stage_narrow_phase(r);
  int nsoft_contacts = r->nmeta;
  t_col += now_us() - t_mark;
  t_mark = now_us();
  stage_penalty_forces(r);
  t_asm += now_us() - t_mark;
  t_mark = now_us();

  char err[256];
  int failed = 0;
  for (int i = 0; i < r->ninst; i++) {
    soft_t *s = &r->soft[i];
    if (s->cfg.contact == CUSP_CONTACT_NATIVE) continue;
    if (sb_step_prepare(s->model, s->state, s->work, s->tau, h, err, sizeof err)) {
      sb_errorf(r->message, sizeof r->message, "instance \"%s\": %s", s->cfg.name, err);
      failed = 1;
    }
  }
  t_dyn += now_us() - t_mark;

  sb_contact_info info;
  memset(&info, 0, sizeof info);
  int solved = 1;
  r->lcp_ran = !failed && stage_coupled_problem(r, nsoft_contacts, h, &info, &solved, &t_col, &t_asm);
  double t_commit = now_us();

  stage_commit_scratch(r, failed, h);
  /* where the disks go at the next state (advance moves the mocap bodies) */
  for (int i = 0; i < r->ninst; i++) {
    soft_t *s = &r->soft[i];
    if (s->cfg.contact == CUSP_CONTACT_NATIVE) continue;
    if (failed) { /* the state stays: so do the disks */
      memcpy(s->next_disk_pose, s->disk_pose, sizeof(sb_pose) * s->cfg.ndisk);
      memcpy(s->next_disk_twist, s->disk_twist, sizeof(double) * 6 * s->cfg.ndisk);
    } else {
      place_disks(r, s, s->next_disk_pose, s->next_disk_twist);
    }
  }
  write_reports(r, nsoft_contacts, &info);

  double *count = r->pending_count;
  if (r->lcp_ran) {
    count[CUSP_COUNT_SOLVES]++;
    count[CUSP_COUNT_CONVERGED] += solved;
    count[CUSP_COUNT_FALLBACKS] += info.lcp.attempts > 1;
  }
  r->pending = 1;
  r->pending_time = d->time;

  cusp_step_report *rep = &r->rep;
  rep->time = d->time;
  report_counters(r, cusp_state_counters(block));
  double t_end = now_us();
  rep->total_us = t_end - t_start;
  rep->dynamics_us = t_dyn + (t_end - t_commit);
  rep->collision_us = t_col;
  rep->assembly_us = t_asm + info.assembly_us;
  rep->conditioning_us = info.conditioning_us;
  rep->solve_us = info.lcp.time_us;
  rep->solved = solved && !failed;
  rep->fallback = r->lcp_ran && info.lcp.attempts > 1;
}

/* The solve's warm start into the state, zeroing what a longer one left
 * behind: a state is then the same bits however it was reached. */
static void save_warm_start(cusp_runtime *r, double *warm) {
  int old = warm[0] > 0 ? 2 + (int)warm[0] * (1 + (int)warm[1] + 2) : 2;
  int now = sb_contact_warm_save(r->P, warm);
  if (old > now) memset(warm + now, 0, sizeof(double) * (old - now));
}

/* Commits what compute prepared when it was prepared for this state: the
 * step that just integrated started at pending_time (advance also runs
 * after steps without a compute: passive forces disabled, skipped stages). */
void cusp_runtime_advance(cusp_runtime *r, const mjModel *m, mjData *d) {
  double *block = cusp_state_of(m, d);
  if (!block || block[0] != CUSP_STATE_TAG) return;
  double *count = cusp_state_counters(block);
  if (!r->pending || d->time != r->pending_time + m->opt.timestep) {
    count[CUSP_COUNT_SKIPPED_ADVANCES]++;
    r->pending = 0;
    report_counters(r, count);
    return;
  }
  r->pending = 0;
  r->pending_count[CUSP_COUNT_STEPS]++;
  memcpy(count, r->pending_count, sizeof r->pending_count);
  for (int i = 0; i < r->ninst; i++) {
    soft_t *s = &r->soft[i];
    cusp_arm_state st = cusp_state_arm(block, i);
    if (s->cfg.nfeedback > 0) {
      memcpy(st.feedback_start, s->feedback_start, sizeof(double) * s->cfg.nfeedback);
      *st.have_feedback_start = 1;
    }
    if (s->cfg.contact == CUSP_CONTACT_NATIVE) continue;
    memcpy(st.q, s->state->q, sizeof(double) * s->model->n);
    memcpy(st.v, s->state->v, sizeof(double) * s->model->n);
    if (s->moving_base) {
      memcpy(st.base_twist, s->base_twist, sizeof s->base_twist);
      *st.have_base_twist = 1;
    }
    /* the disks where the soft state now is: MuJoCo draws and ray-casts them */
    sb_pose *pose = s->disk_pose;
    double *twist = s->disk_twist;
    s->disk_pose = s->next_disk_pose;
    s->disk_twist = s->next_disk_twist;
    s->next_disk_pose = pose;
    s->next_disk_twist = twist;
    for (int k = 0; k < s->cfg.ndisk; k++) {
      const sb_pose *g = &s->disk_pose[k];
      int mocap = s->cfg.disk[k].mocap_id;
      if (mocap < 0) continue;
      for (int a = 0; a < 3; a++) d->mocap_pos[3 * mocap + a] = g->p[a];
      mju_mat2Quat(d->mocap_quat + 4 * mocap, g->R);
    }
  }
  if (r->lcp_ran) save_warm_start(r, cusp_state_warm(block, r->ninst));
  report_counters(r, count);
}

void cusp_runtime_reset(cusp_runtime *r, double *state) {
  for (int i = 0; i < r->ninst; i++) r->soft[i].disks_placed = 0;
  r->pending = 0;
  r->lcp_ran = 0;
  r->nreport = 0;
  memset(&r->rep, 0, sizeof r->rep);
  if (!state) return;
  state[0] = CUSP_STATE_TAG;
  memset(cusp_state_counters(state), 0, CUSP_NCOUNT * sizeof(double));
  for (int i = 0; i < r->ninst; i++) {
    cusp_arm_state a = cusp_state_arm(state, i);
    memset(a.q, 0, CUSP_STATE_SLOT * sizeof(double));
    memcpy(a.q, r->soft[i].cfg.initial, r->soft[i].cfg.ncoord * sizeof(double));
    memcpy(a.live, r->soft[i].live0, sizeof r->soft[i].live0);
  }
  memset(cusp_state_warm(state, r->ninst), 0, sizeof(double) * sb_contact_warm_capacity(r->max_contacts));
}

void cusp_runtime_copy(cusp_runtime *dst, const cusp_runtime *src) {
  if (dst->ninst != src->ninst || dst->max_contacts != src->max_contacts) return; /* another model */
  dst->rep = src->rep;
  dst->nreport = src->nreport;
  memcpy(dst->reports, src->reports, sizeof(cusp_contact_report) * src->nreport);
  for (int i = 0; i < dst->ninst; i++) dst->soft[i].disks_placed = 0;
  dst->pending = 0;
  dst->lcp_ran = 0;
}

/* ---------- create / free ---------- */

void cusp_runtime_free(cusp_runtime *r) {
  if (!r) return;
  for (int i = 0; i < r->ninst && r->soft; i++) {
    soft_t *s = &r->soft[i];
    sb_work_free(s->work);
    sb_state_free(s->state);
    sb_model_free(s->model);
    void *ptr[] = {s->tau, s->disk_pose, s->disk_twist, s->next_disk_pose, s->next_disk_twist,
                   s->placed_q, s->placed_v, s->native_q, s->native_v};
    for (size_t k = 0; k < sizeof ptr / sizeof ptr[0]; k++) free(ptr[k]);
  }
  free(r->soft);
  sb_contact_free(r->P);
  void *ptr[] = {r->meta, r->cbuf, r->reports, r->vfree, r->force, r->qfrc_cusp, r->jac, r->jac2,
                 r->sqrt_inv_d, r->touched, r->geom_soft};
  for (size_t k = 0; k < sizeof ptr / sizeof ptr[0]; k++) free(ptr[k]);
  free(r);
}

cusp_runtime *cusp_runtime_create(const mjModel *m, mjData *d, char *error, int error_size) {
  int ninst = cusp_instance_count(m);
  cusp_runtime *r = calloc(1, sizeof *r);
  if (!r) goto oom;
  r->m = m;
  r->d = d;
  int nv = m->nv, ndisk = 0, ndof = nv;
  r->soft = calloc(ninst ? ninst : 1, sizeof *r->soft);
  if (!r->soft) goto oom;
  for (int i = 0; i < ninst; i++) {
    soft_t *s = &r->soft[i];
    r->ninst = i + 1;
    if (cusp_instance_read(m, i, &s->cfg, error, error_size)) {
      cusp_runtime_free(r);
      return NULL;
    }
    cusp_live_store(&s->cfg, s->live0);
    sb_segment_params seg[CUSP_MAX_SECTIONS];
    sb_chain_params cp;
    cusp_config_chain(&s->cfg, seg, &cp);
    for (int k = 0; k < 3; k++) cp.gravity[k] = m->opt.gravity[k];
    /* the base pose comes from the mount at every compute (init runs before
     * mj_resetData: d holds no positions yet) */
    char err[256];
    s->model = sb_model_create(&cp, err, sizeof err);
    if (!s->model) {
      sb_errorf(error, error_size, "instance \"%s\": %s", s->cfg.name, err);
      cusp_runtime_free(r);
      return NULL;
    }
    int n = s->model->n, nd = s->cfg.ndisk;
    s->state = sb_state_create(s->model);
    s->work = sb_work_create(s->model);
    s->tau = calloc(n, sizeof(double));
    s->placed_q = calloc(n, sizeof(double));
    s->placed_v = calloc(n, sizeof(double));
    s->native_q = calloc(n, sizeof(double));
    s->native_v = calloc(n, sizeof(double));
    s->disk_pose = calloc(nd ? nd : 1, sizeof(sb_pose));
    s->next_disk_pose = calloc(nd ? nd : 1, sizeof(sb_pose));
    s->disk_twist = calloc(6 * (size_t)(nd ? nd : 1), sizeof(double));
    s->next_disk_twist = calloc(6 * (size_t)(nd ? nd : 1), sizeof(double));
    if (!s->state || !s->work || !s->tau || !s->placed_q || !s->placed_v || !s->native_q || !s->native_v ||
        !s->disk_pose || !s->next_disk_pose || !s->disk_twist || !s->next_disk_twist)
      goto oom;
    if (n > CUSP_MAX_COORDS) {
      sb_errorf(error, error_size, "instance \"%s\": %d coordinates, at most %d", s->cfg.name, n, CUSP_MAX_COORDS);
      cusp_runtime_free(r);
      return NULL;
    }
    s->moving_base = body_is_rigid(m, s->cfg.base_body_id);
    s->work->want_base_wrench = s->moving_base;
    ndisk += nd;
    ndof += n;
  }
  r->max_contacts = cusp_max_contacts(ndisk);
  int lead = cusp_plugin_instance(m, 0);
  if (ninst > 0 && m->plugin_statenum[lead] != cusp_state_size(ninst, ndisk)) {
    sb_errorf(error, error_size, "cusp: the model's plugin state holds %d numbers, its instances need %d: "
              "the model was compiled for other instances or disks; expand the scene again",
              m->plugin_statenum[lead], cusp_state_size(ninst, ndisk));
    cusp_runtime_free(r);
    return NULL;
  }
  char err[256];
  if (ninst > 0) {
    r->P = sb_contact_create(r->max_contacts, ninst + 1, ndof, SB_CONTACT_MAX_DIRECTIONS, err, sizeof err);
    if (!r->P) {
      sb_errorf(error, error_size, "cusp: %s", err);
      cusp_runtime_free(r);
      return NULL;
    }
  }
  size_t nvv = nv ? nv : 1;
  r->meta = calloc(r->max_contacts, sizeof *r->meta);
  r->reports = calloc(r->max_contacts, sizeof *r->reports);
  r->cbuf = calloc(mjMAXCONPAIR, sizeof *r->cbuf);
  r->vfree = calloc(nvv, sizeof(double));
  r->force = calloc(nvv, sizeof(double));
  r->qfrc_cusp = calloc(nvv, sizeof(double));
  r->jac = calloc(3 * nvv, sizeof(double));
  r->jac2 = calloc(3 * nvv, sizeof(double));
  r->sqrt_inv_d = calloc(nvv, sizeof(double));
  r->touched = calloc(m->nbody, 1);
  r->geom_soft = malloc(sizeof(int) * 2 * (m->ngeom ? m->ngeom : 1));
  if (!r->meta || !r->reports || !r->cbuf || !r->vfree || !r->force || !r->qfrc_cusp || !r->jac ||
      !r->jac2 || !r->sqrt_inv_d || !r->touched || !r->geom_soft)
    goto oom;
  for (int g = 0; g < 2 * m->ngeom; g++) r->geom_soft[g] = -1;
  for (int i = 0; i < ninst; i++) /* native disks are ordinary MuJoCo geoms */
    for (int k = 0; k < r->soft[i].cfg.ndisk && r->soft[i].cfg.contact != CUSP_CONTACT_NATIVE; k++) {
      r->geom_soft[2 * r->soft[i].cfg.disk[k].geom_id] = i;
      r->geom_soft[2 * r->soft[i].cfg.disk[k].geom_id + 1] = k;
    }
  r->rigid_body = -1;
  return r;
oom:
  sb_errorf(error, error_size, "cusp: out of memory building the soft instances");
  cusp_runtime_free(r);
  return NULL;
}

/* ---------- reading ---------- */

int cusp_runtime_ninst(const cusp_runtime *r) { return r->ninst; }

const cusp_instance_config *cusp_runtime_config(const cusp_runtime *r, int instance) {
  return instance >= 0 && instance < r->ninst ? &r->soft[instance].cfg : NULL;
}

const cusp_step_report *cusp_runtime_report(const cusp_runtime *r) { return &r->rep; }

int cusp_runtime_contacts(const cusp_runtime *r, const cusp_contact_report **contacts) {
  if (contacts) *contacts = r->reports;
  return r->nreport;
}

int cusp_runtime_lcp(const cusp_runtime *r, const double **M, const double **q) {
  if (!r->lcp_ran || !r->P) return 0;
  int n;
  sb_contact_lcp(r->P, &n, M, q, NULL, NULL);
  return n;
}

int cusp_runtime_kinematics(cusp_runtime *r, const mjModel *m, const mjData *d, int instance,
                            const sb_model **model, sb_work **work) {
  double *block = cusp_state_of(m, d);
  if (!block || instance < 0 || instance >= r->ninst) return -1;
  soft_t *s = &r->soft[instance];
  cusp_arm_state st = cusp_state_arm(block, instance);
  pose_from_body(d, s->cfg.base_body_id, &s->model->base);
  sb_kinematics(s->model, s->work, st.q, st.v);
  s->disks_placed = 0; /* the work no longer holds the placement's kinematics */
  *model = s->model;
  *work = s->work;
  return 0;
}

int cusp_runtime_native_state(cusp_runtime *r, const mjModel *m, const mjData *d, int instance,
                              const double **q, const double **v) {
  if (instance < 0 || instance >= r->ninst) return -1;
  soft_t *s = &r->soft[instance];
  cusp_native_coords(m, d, &s->cfg, s->native_q, s->native_v);
  if (q) *q = s->native_q;
  if (v) *v = s->native_v;
  return s->model->n;
}

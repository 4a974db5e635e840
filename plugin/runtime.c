/* The coupling (DESIGN §5): soft instances advance inside MuJoCo's mj_step,
 * driven from mjcb_passive, where positions, collisions and the factored
 * mass matrix are ready. One coupled LCP per step holds every soft body, the
 * MuJoCo system as one body (M^-1 by mj_solveM, whitening by mj_solveM2),
 * the soft contacts, and the other contacts of the rigid bodies the soft
 * bodies touch (found by the same speculative narrow phase, so a ball
 * squeezed against the floor is known not to give way). The rigid side's
 * total impulse goes back to MuJoCo as qfrc_passive += J_r^T lambda / h;
 * MuJoCo's own solver then finds those contacts already at rest. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collide.h"
#include "cusp.h"
#include "loader.h"
#include "native.h"
#include "penalty.h"
#include "sb_util.h"

/* Contacts are looked for this far before they touch (speculative: a gap g
 * acts only if it would close within the step). */
#define CUSP_MARGIN 0.005
#define CUSP_MAX_RUNTIMES 64
#define CUSP_SLIP_SPEED 1e-3

typedef struct {
  cusp_instance_config cfg; /* runtime copy: some keys switch live */
  sb_model *model;
  sb_state *state;
  sb_work *work;
  double *tau;
  int pbody;                /* body index in this step's contact problem, or -1 */
  sb_pose *disk_pose;       /* world, at the start of the step */
  double *disk_twist;       /* 6 per disk: body twist of the disk frame */
  int moving_base;          /* the mount has degrees of freedom */
  double base_twist[6];     /* mount twist [w; v] in its axes at the last advance */
  int have_base_twist;
  int disks_placed;         /* disk_pose/twist and the work's kinematics are at the state and placed_base */
  sb_pose placed_base;
  double penalty_wrench[6]; /* this step's penalty forces and applied load on the arm: [moment about the base; force], world */
  /* cusp_apply_force: a world force and moment held at (load_seg, load_s) until cleared */
  int load_active, load_seg;
  double load_s, load_force[3], load_torque[3];
  double feedback_start[CUSP_MAX_COORDS]; /* each feedback joint's value at the first step: where its ramp starts */
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

typedef struct {
  const mjModel *m;
  mjData *d;
  int ninst;
  soft_t *soft;
  sb_contact_problem *P;
  int max_contacts;
  int nmeta;
  contact_meta *meta;
  mjContact *cbuf;          /* collision results of one pair */
  cusp_contact_report *reports;
  int nreport;
  cusp_step_report rep;
  /* rigid side */
  double *vfree, *force, *qfrc_cusp, *jac, *jac2;
  char *touched;            /* per body */
  int *geom_soft;           /* per geom: instance and disk of a soft disk, or -1 -1 */
  int rigid_body;           /* problem body of the MuJoCo system, or -1 */
  double last_time;
  int advanced;
  int lcp_ran;              /* the last advance solved a coupled LCP */
  char message[256];
} runtime;

static runtime *registry[CUSP_MAX_RUNTIMES];
static int nregistry;
static mjfGeneric host_passive;
static int callbacks_installed;

static runtime *find_runtime(const mjData *d) {
  for (int i = 0; i < nregistry; i++)
    if (registry[i]->d == d) return registry[i];
  return NULL;
}

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

static void reset_soft(runtime *r) {
  for (int i = 0; i < r->ninst; i++) {
    soft_t *s = &r->soft[i];
    sb_state_reset(s->model, s->state);
    for (int c = 0; c < s->cfg.ncoord; c++) s->state->q[c] = s->cfg.initial[c];
    s->have_base_twist = 0;
    s->disks_placed = 0;
    s->load_active = 0; /* as mj_resetData clears xfrc_applied */
    sb_set_base_motion(s->model, NULL, NULL);
  }
  memset(r->qfrc_cusp, 0, sizeof(double) * (r->m->nv ? r->m->nv : 1));
  r->rep.steps = r->rep.solves = r->rep.converged = r->rep.fallbacks = r->rep.nan_events = 0;
  r->advanced = 0;
  r->lcp_ran = 0;
}

/* The soft geoms' MuJoCo frames from the stored disk poses, so that the
 * collision functions and rays see them. */
static void write_disk_geoms(runtime *r, const soft_t *s) {
  if (s->cfg.contact == CUSP_CONTACT_NATIVE) return; /* MuJoCo places its own bodies */
  for (int k = 0; k < s->cfg.ndisk; k++) {
    int geom = s->cfg.disk[k].geom_id;
    for (int a = 0; a < 9; a++) r->d->geom_xmat[9 * geom + a] = s->disk_pose[k].R[a];
    for (int a = 0; a < 3; a++) r->d->geom_xpos[3 * geom + a] = s->disk_pose[k].p[a];
  }
}

/* Disk world poses and twists at the current soft state; with write_mocap
 * also the mocap bodies that MuJoCo draws. */
static void place_disks(runtime *r, soft_t *s, int write_mocap) {
  if (s->cfg.contact == CUSP_CONTACT_NATIVE) return;
  mjData *d = r->d;
  pose_from_body(d, s->cfg.base_body_id, &s->model->base);
  sb_kinematics(s->model, s->work, s->state->q, s->state->v);
  s->disks_placed = 1;
  s->placed_base = s->model->base;
  for (int k = 0; k < s->cfg.ndisk; k++) {
    const cusp_disk *dk = &s->cfg.disk[k];
    sb_pose *g = &s->disk_pose[k];
    sb_point_kinematics(s->model, s->work, dk->section, dk->s, g, NULL, s->disk_twist + 6 * k, NULL);
    if (write_mocap && dk->mocap_id >= 0) {
      for (int a = 0; a < 3; a++) d->mocap_pos[3 * dk->mocap_id + a] = g->p[a];
      mju_mat2Quat(d->mocap_quat + 4 * dk->mocap_id, g->R);
    }
  }
  write_disk_geoms(r, s);
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

static int body_is_rigid(const mjModel *m, int body) { return m->body_weldid[body] != 0; }

/* ---------- the MuJoCo system as a custom contact body ---------- */

static void rigid_solve(void *ctx, int ncol, double *x) {
  runtime *r = ctx;
  mj_solveM(r->m, r->d, x, x, ncol);
}

static void rigid_half_solve(void *ctx, int ncol, double *x) {
  runtime *r = ctx;
  mj_solveM2(r->m, r->d, x, x, ncol);
}

/* v + h M^-1 (every force MuJoCo will apply except constraints): the rigid
 * bodies' velocity if the soft contacts pushed nothing. */
static void rigid_free_velocity(runtime *r, double h) {
  const mjModel *m = r->m;
  mjData *d = r->d;
  int nv = m->nv;
  mj_rne(m, d, 0, r->force);
  mj_fwdActuation(m, d); /* recomputed identically by mj_step after this callback */
  for (int i = 0; i < nv; i++)
    r->force[i] = d->qfrc_passive[i] + d->qfrc_actuator[i] + d->qfrc_applied[i] - r->force[i];
  for (int b = 1; b < m->nbody; b++) {
    const double *x = d->xfrc_applied + 6 * b;
    if (x[0] || x[1] || x[2] || x[3] || x[4] || x[5])
      mj_applyFT(m, d, x, x + 3, d->xipos + 3 * b, b, r->force);
  }
  mj_solveM(m, d, r->vfree, r->force, 1);
  for (int i = 0; i < nv; i++) r->vfree[i] = d->qvel[i] + h * r->vfree[i];
}

/* ---------- one advance ---------- */

/* The mount's twist now, and its rate over the last step (d->cacc is not
 * current inside mjcb_passive): the soft step then carries the d'Alembert
 * forces of a moving mount, and contacts see the disks' absolute velocity. */
static void set_base_motion(runtime *r, soft_t *s, double h) {
  double tw[6], acc[6] = {0, 0, 0, 0, 0, 0};
  pose_from_body(r->d, s->cfg.base_body_id, &s->model->base);
  mj_objectVelocity(r->m, r->d, mjOBJ_XBODY, s->cfg.base_body_id, tw, 1); /* [w; v], mount axes */
  if (s->have_base_twist)
    for (int k = 0; k < 6; k++) acc[k] = (tw[k] - s->base_twist[k]) / h;
  memcpy(s->base_twist, tw, sizeof tw);
  s->have_base_twist = 1;
  sb_set_base_motion(s->model, tw, acc);
}

/* The arm's load on a mount with degrees of freedom: the chain's reaction at
 * its base for the step it took, corrected for the contact impulses and
 * penalty forces that came from outside rather than through the mount. */
static void apply_base_load(runtime *r, soft_t *s, double h, int lcp_ran) {
  double W[6], Wc[6];
  memcpy(W, s->work->base_wrench, sizeof W);
  if (lcp_ran && s->pbody >= 0 && sb_contact_body_wrench(r->P, s->pbody, s->model->base.p, Wc) == 0)
    for (int k = 0; k < 6; k++) W[k] += Wc[k] / h;
  for (int k = 0; k < 6; k++) W[k] += s->penalty_wrench[k];
  if (!all_finite(W, 6)) {
    r->rep.nan_events++;
    return;
  }
  mj_applyFT(r->m, r->d, W + 3, W, s->model->base.p, s->cfg.base_body_id, r->qfrc_cusp);
}

static int add_meta(runtime *r, const contact_meta *cm) {
  if (r->nmeta >= r->max_contacts) return -1;
  r->meta[r->nmeta++] = *cm;
  return 0;
}

/* Soft contacts of instance i, disk k against everything it may touch. */
static void collide_disk(runtime *r, int i, int k) {
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
      const mjContact *con = &r->cbuf[c];
      contact_meta cm = {.inst = i, .disk = k, .other_geom = b, .other_inst = oi, .other_disk = ok,
                         .pair_index = c};
      cm.penalty = s->cfg.contact == CUSP_CONTACT_PENALTY;
      cm.gap = con->dist;
      /* frame normal points from the disk to b; ours from b into the disk */
      for (int q = 0; q < 3; q++) {
        cm.normal[q] = -con->frame[q];
        cm.pos[q] = con->pos[q] - 0.5 * con->dist * con->frame[q];
      }
      if (add_meta(r, &cm)) return;
    }
  }
}

/* Fills the side for the other geom of a soft contact. */
static void other_side(runtime *r, const contact_meta *cm, sb_contact_side *side, double *jac) {
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

static void accumulate_wrench(soft_t *s, const double p[3], const double f[3]) {
  double rr[3] = {p[0] - s->model->base.p[0], p[1] - s->model->base.p[1], p[2] - s->model->base.p[2]};
  s->penalty_wrench[0] += rr[1] * f[2] - rr[2] * f[1];
  s->penalty_wrench[1] += rr[2] * f[0] - rr[0] * f[2];
  s->penalty_wrench[2] += rr[0] * f[1] - rr[1] * f[0];
  for (int a = 0; a < 3; a++) s->penalty_wrench[3 + a] += f[a];
}

/* The cusp_apply_force load into this step's generalized force (at the
 * kinematics place_disks just computed) and into the base's share. */
static void apply_load(soft_t *s) {
  sb_pose g;
  if (sb_point_kinematics(s->model, s->work, s->load_seg, s->load_s, &g, NULL, NULL, NULL)) return;
  sb_add_world_wrench(s->model, s->work, s->load_seg, s->load_s, s->load_force, s->load_torque, s->tau);
  accumulate_wrench(s, g.p, s->load_force);
  for (int a = 0; a < 3; a++) s->penalty_wrench[a] += s->load_torque[a];
}

static void penalty_forces(runtime *r) {
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
 * the other geom, side 1 the touched body's geom. */
static void touched_body_contacts(runtime *r) {
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
          const mjContact *con = &r->cbuf[c];
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
          for (int q = 0; q < 3; q++) sc.normal[q] = con->frame[q];
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

static void advance(runtime *r) {
  const mjModel *m = r->m;
  mjData *d = r->d;
  double h = m->opt.timestep;
  int nv = m->nv;
  double t_start = now_us(), t_dyn = 0, t_col = 0, t_asm = 0, t_mark = t_start;
  r->nmeta = 0;
  memset(r->qfrc_cusp, 0, sizeof(double) * (nv ? nv : 1));
  memset(r->touched, 0, m->nbody);

  /* controls: schedules and feedbacks write d->ctrl so every app shows the
   * same inputs; feedbacks read the joints at this step's start, as the
   * soft step does (a host's mjcb_control acts one step later) */
  for (int i = 0; i < r->ninst; i++) {
    soft_t *s = &r->soft[i];
    memset(s->tau, 0, sizeof(double) * s->model->n);
    memset(s->penalty_wrench, 0, sizeof s->penalty_wrench);
    for (int q = 0; q < s->cfg.nschedule; q++) {
      const cusp_schedule *sc = &s->cfg.schedule[q];
      int act = s->cfg.actuator_id[sc->coord];
      if (act >= 0) d->ctrl[act] = schedule_value(sc, d->time);
    }
    for (int q = 0; q < s->cfg.nfeedback; q++) {
      const cusp_feedback *f = &s->cfg.feedback[q];
      int act = s->cfg.actuator_id[f->coord];
      if (r->rep.steps == 0) s->feedback_start[q] = d->qpos[f->qpos_adr];
      if (act >= 0) d->ctrl[act] = feedback_value(&s->cfg, f, s->feedback_start[q], d);
    }
    for (int c = 0; c < s->cfg.ncoord; c++) {
      int act = s->cfg.actuator_id[c];
      if (act < 0) continue;
      double u = d->ctrl[act];
      if (!isfinite(u)) u = 0;
      u = fmin(fmax(u, s->cfg.ctrlrange[0]), s->cfg.ctrlrange[1]);
      s->tau[c] = s->cfg.gear * u;
    }
    if (s->cfg.contact == CUSP_CONTACT_NATIVE) continue; /* MuJoCo steps it: ctrl only */
    if (s->moving_base) set_base_motion(r, s, h);
    /* the last advance placed the disks at this state: redo the kinematics
     * only when the mount moved (a moving or mocap mount) */
    sb_pose base;
    pose_from_body(d, s->cfg.base_body_id, &base);
    if (!s->disks_placed || s->moving_base || memcmp(&base, &s->placed_base, sizeof base))
      place_disks(r, s, 0);
    else
      write_disk_geoms(r, s); /* MuJoCo's mocap round trip rounds them differently */
    if (s->load_active) apply_load(s);
  }

  /* narrow phase */
  t_dyn += now_us() - t_mark;
  t_mark = now_us();
  for (int i = 0; i < r->ninst; i++)
    for (int k = 0; k < r->soft[i].cfg.ndisk && r->soft[i].cfg.contact != CUSP_CONTACT_NATIVE; k++)
      collide_disk(r, i, k);
  int nsoft_contacts = r->nmeta;
  t_col += now_us() - t_mark;
  t_mark = now_us();

  penalty_forces(r);
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
  t_mark = now_us();

  /* the coupled LCP */
  int nlcp = 0;
  for (int c = 0; c < nsoft_contacts; c++) nlcp += !r->meta[c].penalty;
  sb_contact_info info;
  memset(&info, 0, sizeof info);
  int solved = 1, lcp_ran = 0;
  if (nlcp > 0 && !failed) {
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
    if (need_rigid && nv > 0) {
      rigid_free_velocity(r, h);
      r->rigid_body = sb_contact_add_custom(P, nv, rigid_solve, rigid_half_solve, r, r->vfree, err, sizeof err);
    }
    /* one coupled solve: the first LCP instance in contact sets its options */
    int lead = 0;
    while (r->meta[lead].penalty) lead++;
    const sb_contact_options opt = options_of(&r->soft[r->meta[lead].inst].cfg);
    /* index of each problem contact in meta: problem contacts are added in meta order */
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
    /* the touched rigid bodies' other contacts, found by our own narrow
     * phase with the speculative margin: MuJoCo's list only holds pairs
     * already within geom margin, so a squeezed ball lifting by a micron lost
     * its floor in the LCP every few steps and was pushed through it */
    t_asm += now_us() - t_mark;
    t_mark = now_us();
    if (r->rigid_body >= 0) touched_body_contacts(r);
    t_col += now_us() - t_mark;
    lcp_ran = 1;
    int rc = sb_contact_solve(P, h, &opt, &info, err, sizeof err);
    t_mark = now_us();
    solved = rc == 0 && info.lcp.status == SB_LCP_SOLVED;
    if (!solved) sb_errorf(r->message, sizeof r->message, "contact solve: %s", err);
    /* results back into meta, in the order the contacts were added */
    int pc = 0;
    for (int c = 0; c < r->nmeta; c++) {
      contact_meta *cm = &r->meta[c];
      if (cm->penalty) continue;
      sb_contact_result(P, pc++, cm->impulse, &cm->fn, NULL, &cm->kept);
    }
  }

  /* commit */
  double t_commit = now_us();
  t_asm += t_commit - t_mark;
  for (int i = 0; i < r->ninst && !failed; i++) {
    soft_t *s = &r->soft[i];
    if (s->cfg.contact == CUSP_CONTACT_NATIVE) continue;
    const double *p = lcp_ran && s->pbody >= 0 ? sb_contact_body_impulse(r->P, s->pbody) : NULL;
    if (p && !all_finite(p, s->model->n)) {
      p = NULL;
      r->rep.nan_events++;
    }
    if (sb_step_commit(s->model, s->state, s->work, p, err, sizeof err)) {
      sb_errorf(r->message, sizeof r->message, "instance \"%s\": %s", s->cfg.name, err);
      r->rep.nan_events++;
    } else if (s->moving_base) {
      apply_base_load(r, s, h, lcp_ran);
    }
  }
  if (lcp_ran && r->rigid_body >= 0) {
    const double *p = sb_contact_body_impulse(r->P, r->rigid_body);
    if (all_finite(p, nv))
      for (int j = 0; j < nv; j++) r->qfrc_cusp[j] += p[j] / h;
    else
      r->rep.nan_events++;
  }
  if (!all_finite(r->qfrc_cusp, nv)) {
    memset(r->qfrc_cusp, 0, sizeof(double) * nv);
    r->rep.nan_events++;
  }
  for (int j = 0; j < nv; j++) d->qfrc_passive[j] += r->qfrc_cusp[j];

  /* the disks where the soft state now is: MuJoCo draws and ray-casts them */
  for (int i = 0; i < r->ninst; i++) place_disks(r, &r->soft[i], 1);

  /* reports */
  cusp_step_report *rep = &r->rep;
  rep->time = d->time + h;
  rep->steps++;
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
  rep->info = info;
  double t_end = now_us();
  rep->total_us = t_end - t_start;
  rep->dynamics_us = t_dyn + (t_end - t_commit);
  rep->collision_us = t_col;
  rep->assembly_us = t_asm + info.assembly_us;
  rep->conditioning_us = info.conditioning_us;
  rep->solve_us = info.lcp.time_us;
  r->lcp_ran = lcp_ran;
  rep->solved = solved && !failed;
  rep->fallback = lcp_ran && info.lcp.attempts > 1;
  if (lcp_ran) {
    rep->solves++;
    rep->converged += solved;
    rep->fallbacks += rep->fallback;
  }
}

static void cusp_passive(const mjModel *m, mjData *d) {
  if (host_passive) host_passive(m, d);
  runtime *r = find_runtime(d);
  if (!r || r->m != m || r->ninst == 0) return;
  if (r->advanced && d->time < r->last_time) reset_soft(r);
  if (r->advanced && d->time == r->last_time) {
    /* the same instant again (a paused viewer): same forces, no advance */
    for (int j = 0; j < m->nv; j++) d->qfrc_passive[j] += r->qfrc_cusp[j];
    for (int i = 0; i < r->ninst; i++) write_disk_geoms(r, &r->soft[i]);
    return;
  }
  advance(r);
  r->last_time = d->time;
  r->advanced = 1;
}

/* ---------- attach / detach ---------- */

static void runtime_free(runtime *r) {
  if (!r) return;
  for (int i = 0; i < r->ninst && r->soft; i++) {
    soft_t *s = &r->soft[i];
    sb_work_free(s->work);
    sb_state_free(s->state);
    sb_model_free(s->model);
    free(s->tau);
    free(s->disk_pose);
    free(s->disk_twist);
  }
  free(r->soft);
  sb_contact_free(r->P);
  free(r->meta);
  free(r->cbuf);
  free(r->reports);
  free(r->vfree);
  free(r->force);
  free(r->qfrc_cusp);
  free(r->jac);
  free(r->jac2);
  free(r->touched);
  free(r->geom_soft);
  free(r);
}

int cusp_attach(const mjModel *m, mjData *d, char *error, int error_size) {
  if (!m || !d) {
    sb_errorf(error, error_size, "cusp_attach: model and data are required");
    return -1;
  }
  if (find_runtime(d)) {
    sb_errorf(error, error_size, "cusp_attach: this mjData is already attached");
    return -1;
  }
  if (m->opt.integrator == mjINT_RK4) {
    sb_errorf(error, error_size, "cusp_attach: the RK4 integrator is not supported (the soft step "
              "advances once per mj_step); use Euler or implicit in <option integrator=...>");
    return -1;
  }
  if (nregistry >= CUSP_MAX_RUNTIMES) {
    sb_errorf(error, error_size, "cusp_attach: more than %d attached mjData", CUSP_MAX_RUNTIMES);
    return -1;
  }
  int ninst = 0;
  const cusp_instance_config *cfg = cusp_model_instances(m, &ninst);
  runtime *r = calloc(1, sizeof *r);
  if (!r) goto oom;
  r->m = m;
  r->d = d;
  int nv = m->nv, ndisk = 0, ndof = nv;
  r->soft = calloc(ninst ? ninst : 1, sizeof *r->soft);
  if (!r->soft) goto oom;
  mj_kinematics(m, d); /* base body poses */
  r->ninst = ninst;
  for (int i = 0; i < ninst; i++) {
    soft_t *s = &r->soft[i];
    s->cfg = cfg[i];
    sb_segment_params seg[CUSP_MAX_SECTIONS];
    sb_chain_params cp;
    cusp_config_chain(&s->cfg, seg, &cp);
    for (int k = 0; k < 3; k++) cp.gravity[k] = m->opt.gravity[k];
    pose_from_body(d, s->cfg.base_body_id, &cp.base);
    char err[256];
    s->model = sb_model_create(&cp, err, sizeof err);
    if (!s->model) {
      sb_errorf(error, error_size, "instance \"%s\": %s", s->cfg.name, err);
      runtime_free(r);
      return -1;
    }
    s->state = sb_state_create(s->model);
    s->work = sb_work_create(s->model);
    s->tau = calloc(s->model->n, sizeof(double));
    s->disk_pose = calloc(s->cfg.ndisk, sizeof(sb_pose));
    s->disk_twist = calloc(6 * (size_t)s->cfg.ndisk, sizeof(double));
    if (!s->state || !s->work || !s->tau || !s->disk_pose || !s->disk_twist) goto oom;
    s->moving_base = m->body_weldid[s->cfg.base_body_id] != 0;
    s->work->want_base_wrench = s->moving_base;
    ndisk += s->cfg.ndisk;
    ndof += s->model->n;
  }
  /* room for several contacts per disk (a disk flat on a plane gives 4) and
   * for MuJoCo's contacts on the bodies the arms touch */
  r->max_contacts = 8 * ndisk + 256;
  int dirs = SB_CONTACT_MAX_DIRECTIONS;
  char err[256];
  if (ninst > 0) {
    r->P = sb_contact_create(r->max_contacts, ninst + 1, ndof, dirs, err, sizeof err);
    if (!r->P) {
      sb_errorf(error, error_size, "cusp_attach: %s", err);
      runtime_free(r);
      return -1;
    }
  }
  r->meta = calloc(r->max_contacts, sizeof *r->meta);
  r->reports = calloc(r->max_contacts, sizeof *r->reports);
  r->cbuf = calloc(mjMAXCONPAIR, sizeof *r->cbuf);
  size_t nvv = nv ? nv : 1;
  r->vfree = calloc(nvv, sizeof(double));
  r->force = calloc(nvv, sizeof(double));
  r->qfrc_cusp = calloc(nvv, sizeof(double));
  r->jac = calloc(3 * nvv, sizeof(double));
  r->jac2 = calloc(3 * nvv, sizeof(double));
  r->touched = calloc(m->nbody, 1);
  r->geom_soft = malloc(sizeof(int) * 2 * (m->ngeom ? m->ngeom : 1));
  if (!r->geom_soft) goto oom;
  for (int g = 0; g < 2 * m->ngeom; g++) r->geom_soft[g] = -1;
  for (int i = 0; i < ninst; i++) /* native disks are ordinary MuJoCo geoms */
    for (int k = 0; k < r->soft[i].cfg.ndisk && r->soft[i].cfg.contact != CUSP_CONTACT_NATIVE; k++) {
      r->geom_soft[2 * r->soft[i].cfg.disk[k].geom_id] = i;
      r->geom_soft[2 * r->soft[i].cfg.disk[k].geom_id + 1] = k;
    }
  if (!r->meta || !r->reports || !r->cbuf || !r->vfree || !r->force || !r->qfrc_cusp || !r->jac ||
      !r->jac2 || !r->touched)
    goto oom;
  r->rigid_body = -1;
  reset_soft(r);
  /* show the arm where it starts before the first step */
  for (int i = 0; i < ninst; i++) place_disks(r, &r->soft[i], 1);
  registry[nregistry++] = r;
  if (!callbacks_installed) {
    host_passive = mjcb_passive;
    mjcb_passive = cusp_passive;
    callbacks_installed = 1;
  }
  return 0;
oom:
  sb_errorf(error, error_size, "cusp_attach: out of memory");
  runtime_free(r);
  return -1;
}

void cusp_detach(mjData *d) {
  for (int i = 0; i < nregistry; i++)
    if (registry[i]->d == d) {
      runtime_free(registry[i]);
      registry[i] = registry[--nregistry];
      break;
    }
  if (nregistry == 0 && callbacks_installed) {
    if (mjcb_passive == cusp_passive) mjcb_passive = host_passive;
    host_passive = NULL;
    callbacks_installed = 0;
  }
}

/* ---------- reading ---------- */

const cusp_step_report *cusp_report(const mjData *d) {
  runtime *r = find_runtime(d);
  return r ? &r->rep : NULL;
}

int cusp_contacts(const mjData *d, const cusp_contact_report **contacts) {
  runtime *r = find_runtime(d);
  if (!r) {
    if (contacts) *contacts = NULL;
    return 0;
  }
  if (contacts) *contacts = r->reports;
  return r->nreport;
}

int cusp_lcp(const mjData *d, const double **M, const double **q) {
  runtime *r = find_runtime(d);
  if (M) *M = NULL;
  if (q) *q = NULL;
  if (!r) return -1;
  if (!r->lcp_ran || !r->P) return 0;
  int n;
  sb_contact_lcp(r->P, &n, M, q, NULL, NULL);
  return n;
}

static soft_t *soft_of(const mjData *d, int instance) {
  runtime *r = find_runtime(d);
  if (!r || instance < 0 || instance >= r->ninst) return NULL;
  return &r->soft[instance];
}

int cusp_soft_state(const mjData *d, int instance, const double **q, const double **v) {
  soft_t *s = soft_of(d, instance);
  if (!s) return -1;
  if (s->cfg.contact == CUSP_CONTACT_NATIVE) /* the coordinates of MuJoCo's joints */
    cusp_native_coords(find_runtime(d)->m, d, &s->cfg, s->state->q, s->state->v);
  if (q) *q = s->state->q;
  if (v) *v = s->state->v;
  return s->model->n;
}

double cusp_total_length(const mjData *d, int instance) {
  soft_t *s = soft_of(d, instance);
  if (!s) return 0;
  double L = 0;
  for (int i = 0; i < s->cfg.sections; i++) L += s->cfg.length[i];
  return L;
}

int cusp_energy(const mjData *d, int instance, double *kinetic, double *gravity, double *elastic) {
  soft_t *s = soft_of(d, instance);
  if (!s || s->cfg.contact == CUSP_CONTACT_NATIVE) return -1; /* native: MuJoCo's mj_energy* */
  /* the work's kinematics may belong to a query point (a contact); redo them
   * at the state, which is what the last advance left there anyway */
  pose_from_body(d, s->cfg.base_body_id, &s->model->base);
  sb_kinematics(s->model, s->work, s->state->q, s->state->v);
  sb_energy(s->model, s->work, kinetic, gravity, elastic);
  return 0;
}

/* A native arm's backbone: straight between consecutive disk bodies (where
 * MuJoCo last placed them), the frame of the nearer disk. */
static int native_backbone_point(const mjData *d, const soft_t *s, double s_arc, double pos[3], double mat[9]) {
  const cusp_instance_config *c = &s->cfg;
  double s0 = 0, s1 = 0, base = 0;
  int k = 1;
  for (; k < c->ndisk; k++) {
    if (c->disk[k].section != c->disk[k - 1].section) base += c->length[c->disk[k - 1].section];
    s0 = s1;
    s1 = base + c->disk[k].s;
    if (s_arc <= s1) break;
  }
  if (k == c->ndisk) k--;
  double a = s1 > s0 ? fmin(fmax((s_arc - s0) / (s1 - s0), 0), 1) : 0;
  const double *p0 = d->xpos + 3 * c->disk[k - 1].body_id, *p1 = d->xpos + 3 * c->disk[k].body_id;
  if (pos)
    for (int i = 0; i < 3; i++) pos[i] = (1 - a) * p0[i] + a * p1[i];
  if (mat) memcpy(mat, d->xmat + 9 * c->disk[a < 0.5 ? k - 1 : k].body_id, 9 * sizeof(double));
  return 0;
}

int cusp_backbone_point(const mjData *d, int instance, double s_arc, double pos[3], double mat[9]) {
  soft_t *s = soft_of(d, instance);
  if (!s || !isfinite(s_arc)) return -1;
  if (s->cfg.contact == CUSP_CONTACT_NATIVE) return native_backbone_point(d, s, s_arc, pos, mat);
  /* kinematics of the current state (the work holds the last step's) */
  sb_kinematics(s->model, s->work, s->state->q, NULL);
  int sec = 0;
  while (sec < s->cfg.sections - 1 && s_arc > s->cfg.length[sec]) s_arc -= s->cfg.length[sec++];
  s_arc = fmin(fmax(s_arc, 0), s->cfg.length[sec]);
  sb_pose g;
  if (sb_point_kinematics(s->model, s->work, sec, s_arc, &g, NULL, NULL, NULL)) return -1;
  if (pos) memcpy(pos, g.p, sizeof g.p);
  if (mat) memcpy(mat, g.R, sizeof g.R);
  return 0;
}

int cusp_tip_pose(const mjData *d, int instance, double pos[3], double quat[4]) {
  soft_t *s = soft_of(d, instance);
  if (s && s->cfg.contact == CUSP_CONTACT_NATIVE) { /* the tip site, as MuJoCo last placed it */
    int site = s->cfg.tip_site_id;
    if (pos) memcpy(pos, d->site_xpos + 3 * site, 3 * sizeof(double));
    if (quat) mju_mat2Quat(quat, d->site_xmat + 9 * site);
    return 0;
  }
  double mat[9];
  if (cusp_backbone_point(d, instance, cusp_total_length(d, instance), pos, mat)) return -1;
  if (quat) mju_mat2Quat(quat, mat);
  return 0;
}

/* ---------- applied loads (mouse dragging) ---------- */

int cusp_apply_force(mjData *d, int instance, double s_arc, const double force[3], const double torque[3],
                     char *error, int error_size) {
  soft_t *s = soft_of(d, instance);
  if (!s) {
    sb_errorf(error, error_size, "cusp_apply_force: no instance %d attached to this mjData", instance);
    return -1;
  }
  if (!force && !torque) {
    s->load_active = 0;
    return 0;
  }
  if (s->cfg.contact == CUSP_CONTACT_NATIVE) {
    sb_errorf(error, error_size, "cusp_apply_force: instance \"%s\" has contact native: its links are MuJoCo "
              "bodies, load them through xfrc_applied", s->cfg.name);
    return -1;
  }
  double L = cusp_total_length(d, instance);
  if (!isfinite(s_arc) || s_arc < 0 || s_arc > L * (1 + 1e-12)) {
    sb_errorf(error, error_size, "cusp_apply_force: instance \"%s\": arc length %g outside 0..%g m",
              s->cfg.name, s_arc, L);
    return -1;
  }
  double f[3] = {0, 0, 0}, t[3] = {0, 0, 0};
  if (force) memcpy(f, force, sizeof f);
  if (torque) memcpy(t, torque, sizeof t);
  if (!all_finite(f, 3) || !all_finite(t, 3)) {
    sb_errorf(error, error_size, "cusp_apply_force: instance \"%s\": the %s is not finite", s->cfg.name,
              all_finite(f, 3) ? "torque" : "force");
    return -1;
  }
  int sec = 0;
  while (sec < s->cfg.sections - 1 && s_arc > s->cfg.length[sec]) s_arc -= s->cfg.length[sec++];
  s->load_seg = sec;
  s->load_s = fmin(fmax(s_arc, 0), s->cfg.length[sec]);
  memcpy(s->load_force, f, sizeof f);
  memcpy(s->load_torque, t, sizeof t);
  s->load_active = 1;
  return 0;
}

int cusp_disk_of_body(const mjModel *m, int body, int *instance, double *s_arc) {
  int n = 0;
  const cusp_instance_config *cfg = cusp_model_instances(m, &n);
  for (int i = 0; i < n; i++)
    for (int k = 0; k < cfg[i].ndisk && cfg[i].contact != CUSP_CONTACT_NATIVE; k++)
      if (cfg[i].disk[k].body_id == body) {
        double s = cfg[i].disk[k].s;
        for (int j = 0; j < cfg[i].disk[k].section; j++) s += cfg[i].length[j];
        if (instance) *instance = i;
        if (s_arc) *s_arc = s;
        return 0;
      }
  return -1;
}

double cusp_total_mass(const mjData *d, int instance) {
  soft_t *s = soft_of(d, instance);
  return s ? s->model->total_mass : 0;
}

static const char *const live_keys[] = {"contact", "solver", "fallback", "conditioning", "eps_rank", "ruiz_iterations",
                                        "tikhonov", "stabilization", "friction", "pyramid",
                                        "penalty_stiffness", "penalty_damping"};

int cusp_get(const mjData *d, int instance, const char *key, char *value, int value_size) {
  soft_t *s = soft_of(d, instance);
  if (!s) {
    sb_errorf(value, value_size, "cusp_get: no instance %d attached to this mjData", instance);
    return -1;
  }
  const cusp_instance_config *c = &s->cfg;
  if (!key) key = "(null)";
  if (!strcmp(key, "contact")) {
    sb_errorf(value, value_size, "%s", c->contact == CUSP_CONTACT_PENALTY ? "penalty"
                                       : c->contact == CUSP_CONTACT_NATIVE ? "native" : "lcp");
  } else if (!strcmp(key, "solver")) {
    sb_errorf(value, value_size, "%s", sb_lcp_solver_name(c->solver));
  } else if (!strcmp(key, "conditioning")) {
    sb_errorf(value, value_size, "%s%s%s%s", c->conditioning & CUSP_COND_QR ? "qr " : "",
              c->conditioning & CUSP_COND_RUIZ ? "ruiz " : "", c->conditioning & CUSP_COND_TIKHONOV ? "tikhonov " : "",
              c->conditioning ? "" : "none");
    size_t len = strlen(value);
    if (len && value[len - 1] == ' ') value[len - 1] = 0;
  } else if (!strcmp(key, "ruiz_iterations")) {
    sb_errorf(value, value_size, "%d", c->ruiz_iterations);
  } else if (!strcmp(key, "fallback")) {
    sb_errorf(value, value_size, "%d", c->fallback);
  } else if (!strcmp(key, "pyramid")) {
    sb_errorf(value, value_size, "%d", c->pyramid);
  } else {
    const double *x = !strcmp(key, "eps_rank") ? &c->eps_rank : !strcmp(key, "tikhonov") ? &c->tikhonov
                    : !strcmp(key, "stabilization") ? &c->stabilization : !strcmp(key, "friction") ? &c->friction
                    : !strcmp(key, "penalty_stiffness") ? &c->penalty_stiffness
                    : !strcmp(key, "penalty_damping") ? &c->penalty_damping : NULL;
    if (!x) {
      sb_errorf(value, value_size, "cusp_get: \"%s\" is not a live key", key);
      return -1;
    }
    sb_errorf(value, value_size, "%.17g", *x);
  }
  return 0;
}

int cusp_set(mjData *d, int instance, const char *key, const char *value, char *error, int error_size) {
  const char *const *live = live_keys;
  soft_t *s = soft_of(d, instance);
  if (!s) {
    sb_errorf(error, error_size, "cusp_set: no instance %d attached to this mjData", instance);
    return -1;
  }
  int ok = 0;
  for (size_t k = 0; k < sizeof live_keys / sizeof live_keys[0]; k++) ok |= key && !strcmp(key, live[k]);
  if (!ok) {
    sb_errorf(error, error_size, "cusp_set: key \"%s\" cannot change while running (reload the scene)",
              key ? key : "(null)");
    return -1;
  }
  if (s->cfg.contact == CUSP_CONTACT_NATIVE && strcmp(key, "contact")) {
    sb_errorf(error, error_size, "cusp_set: instance \"%s\" has contact native: MuJoCo solves its "
              "contacts (geom friction, solref), so \"%s\" does not apply", s->cfg.name, key);
    return -1;
  }
  cusp_instance_config *tmp = malloc(sizeof *tmp);
  if (!tmp) {
    sb_errorf(error, error_size, "cusp_set: out of memory");
    return -1;
  }
  *tmp = s->cfg;
  int rc = cusp_config_set(tmp, key, value, error, error_size);
  if (!rc && (tmp->contact == CUSP_CONTACT_NATIVE) != (s->cfg.contact == CUSP_CONTACT_NATIVE)) {
    sb_errorf(error, error_size, "cusp_set: instance \"%s\": contact \"%s\" cannot be switched %s "
              "native while running: native is a different model (MuJoCo bodies and joints made at "
              "load); reload the scene with contact=%s (e.g. cusp-sim --set %s.contact=%s)", s->cfg.name,
              value, tmp->contact == CUSP_CONTACT_NATIVE ? "to" : "from", value, s->cfg.name, value);
    rc = -1;
  }
  if (!rc) s->cfg = *tmp; /* a live key sets its own field only: the copy differs in nothing else */
  free(tmp);
  return rc;
}

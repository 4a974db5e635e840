/* The soft arm's side of a step: where its disks are, and the loads
 * applied to it (its mount: mount.c). */
#include "pipeline.h"

void cusp_arm_accumulate_wrench(soft_t *s, const double p[3], const double f[3]) {
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
  cusp_arm_accumulate_wrench(s, g.p, f);
  for (int a = 0; a < 3; a++) s->penalty_wrench[a] += mo[a];
}

/* The loads on the arm: the keys tip_force and tip_torque, cusp_apply_force's
 * (state) and xfrc_applied on the disk bodies (the viewer's mouse
 * perturbation), at the disk's centre. */
void cusp_arm_applied_loads(cusp_runtime *r, soft_t *s, const cusp_arm_state *st) {
  const double *tf = s->cfg.tip_force, *tm = s->cfg.tip_torque;
  if (tf[0] || tf[1] || tf[2] || tm[0] || tm[1] || tm[2])
    apply_point_load(s, s->cfg.sections - 1, s->cfg.length[s->cfg.sections - 1], tf, tm);
  const double *ld = st->load;
  if (ld[CUSP_LOAD_ACTIVE] != 0)
    apply_point_load(s, (int)ld[CUSP_LOAD_SECTION], ld[CUSP_LOAD_S], ld + CUSP_LOAD_FORCE, ld + CUSP_LOAD_TORQUE);
  for (int k = 0; k < s->cfg.ndisk; k++) {
    const double *x = r->d->xfrc_applied + 6 * s->cfg.disk[k].body_id;
    if (!(x[0] || x[1] || x[2] || x[3] || x[4] || x[5]) || !all_finite(x, 6)) continue;
    apply_point_load(s, s->cfg.disk[k].section, s->cfg.disk[k].s, x, x + 3);
  }
}

/* The soft geoms' MuJoCo frames from the given disk poses, so that the
 * collision functions and rays see the state (mocap bodies are not part of
 * MuJoCo's physics state: after mj_setState they may lag). */
void cusp_arm_write_geoms(cusp_runtime *r, const soft_t *s, const sb_pose *pose) {
  if (s->cfg.contact == CUSP_CONTACT_NATIVE) return; /* MuJoCo places its own bodies */
  for (int k = 0; k < s->cfg.ndisk; k++) {
    int geom = s->cfg.disk[k].geom_id;
    for (int a = 0; a < 9; a++) r->d->geom_xmat[9 * geom + a] = pose[k].R[a];
    for (int a = 0; a < 3; a++) r->d->geom_xpos[3 * geom + a] = pose[k].p[a];
  }
}

/* The disks' twists serve the penalty model's contact velocities (of its
 * own disks and of the disks it touches) and the narrow phase's swept
 * margin (narrowphase.c): every arm that cusp steps needs them. */
static int disk_twists_needed(const cusp_runtime *r) {
  for (int i = 0; i < r->ninst; i++)
    if (r->soft[i].cfg.contact != CUSP_CONTACT_NATIVE) return 1;
  return 0;
}

void cusp_arm_place_disks(const cusp_runtime *r, soft_t *s, sb_pose *pose, double *twist) {
  if (twist && !disk_twists_needed(r)) {
    memset(twist, 0, sizeof(double) * 6 * s->cfg.ndisk);
    twist = NULL;
  }
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
void cusp_arm_point_velocity(const soft_t *s, int k, const double p[3], double v[3]) {
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
void cusp_arm_point_offset(const soft_t *s, int k, const double p[3], double off[3]) {
  const sb_pose *g = &s->disk_pose[k];
  for (int a = 0; a < 3; a++)
    off[a] = g->R[a] * (p[0] - g->p[0]) + g->R[3 + a] * (p[1] - g->p[1]) + g->R[6 + a] * (p[2] - g->p[2]);
}



/* A held far end (keys end, end_body): the last section's tip pinned
 * (position) or clamped (pose) to an anchor fixed in a MuJoCo body's frame,
 * solved as bilateral rows of the lcp model's coupled problem
 * (softbody/contact.h, "Bilateral constraints": eliminated by the Schur
 * complement of their block before the LCP, recovered after it).
 *
 * The anchor is where the tip is in the initial configuration (the key
 * `initial` at the mount's and end_body's poses at qpos0), in end_body's
 * frame; it is part of the model, not of the state, so copies and resets
 * stay exact. Each step the anchor is end_body's current pose times that
 * offset:
 *   world, or a body MuJoCo does not move   a fixed anchor
 *   a mocap body                            a prescribed motion: the rows aim
 *                                           at zero relative velocity and the
 *                                           pose error is removed at the rate
 *                                           `stabilization` per step (MuJoCo
 *                                           gives a mocap body no velocity), so
 *                                           the tip follows with a lag of
 *                                           (1 - alpha) / alpha * v * h at a
 *                                           steady speed v, and never drifts
 *   a body with degrees of freedom          coupled both ways: its point
 *                                           Jacobian (mj_jac) is the anchor's
 *                                           side, the impulse goes into its tree
 *                                           with the contacts' */
#include "pipeline.h"
#include "sb_util.h"

/* The world pose of body b at qpos0: its compiled frame chain (a free or
 * mocap body's initial pose; a hinge, slide or ball at its reference). */
static sb_pose body_pose_qpos0(const mjModel *m, int b) {
  if (b <= 0) return sb_pose_identity();
  sb_pose parent = body_pose_qpos0(m, m->body_parentid[b]), local;
  double R[9];
  mju_quat2Mat(R, m->body_quat + 4 * b);
  memcpy(local.R, R, sizeof R);
  memcpy(local.p, m->body_pos + 3 * b, sizeof local.p);
  return sb_pose_mul(&parent, &local);
}

int cusp_end_create(const mjModel *m, soft_t *s, char *error, int error_size) {
  const cusp_instance_config *c = &s->cfg;
  s->end_index = -1;
  memset(s->end_reaction, 0, sizeof s->end_reaction);
  if (c->end == CUSP_END_FREE || c->contact == CUSP_CONTACT_NATIVE) return 0;
  if (c->end_body_id < 0 || c->end_body_id >= m->nbody) {
    sb_errorf(error, error_size, "instance \"%s\": key \"end_body\": \"%s\" is not resolved", c->name, c->end_body);
    return -1;
  }
  /* the tip at the initial coordinates, with the mount at qpos0 */
  sb_model *model = s->model;
  sb_pose base_saved = model->base;
  model->base = body_pose_qpos0(m, c->base_body_id);
  sb_kinematics(model, s->work, c->initial, NULL);
  sb_pose tip;
  int rc = sb_point_kinematics(model, s->work, c->sections - 1, c->length[c->sections - 1], &tip, NULL, NULL, NULL);
  model->base = base_saved;
  if (rc) {
    sb_errorf(error, error_size, "instance \"%s\": key \"end\": no tip frame at section %d", c->name, c->sections);
    return -1;
  }
  sb_pose body = body_pose_qpos0(m, c->end_body_id);
  s->end_anchor = sb_pose_inv_mul(&body, &tip);
  return 0;
}

int cusp_ends_active(const cusp_runtime *r, cusp_contact_kind model) {
  for (int i = 0; i < r->ninst; i++)
    if (r->soft[i].cfg.end != CUSP_END_FREE && r->soft[i].cfg.contact == model) return 1;
  return 0;
}

int cusp_ends_need_rigid(cusp_runtime *r, cusp_contact_kind model) {
  int need = 0;
  for (int i = 0; i < r->ninst; i++) {
    const cusp_instance_config *c = &r->soft[i].cfg;
    if (c->end == CUSP_END_FREE || c->contact != model || !body_is_rigid(r->m, c->end_body_id)) continue;
    r->touched[c->end_body_id] = 1; /* its own contacts join the problem, as a touched body's */
    need = 1;
  }
  return need;
}

/* The mount's share of the tip frame's motion in the coupled coordinates
 * (mount.c, cusp_mount_lcp_side: there for a contact point, here for the
 * frame's linear and angular velocity): with v = u - X J_b qdot the tip
 * moves by G u + (G_b - G X) J_b qdot; jb6 (6 x nv, linear rows then
 * angular) gets (G_b - G X) J_b. */
static int mount_share(cusp_runtime *r, soft_t *s, double *jb6) {
  const mjModel *m = r->m;
  int nv = m->nv, n = s->model->n, np = s->mount_npath, seg = s->cfg.sections - 1;
  double J6[6 * CUSP_MAX_COORDS], Y[36], G[36];
  sb_pose g;
  if (sb_point_kinematics(s->model, s->work, seg, s->cfg.length[seg], &g, J6, NULL, NULL)) return -1;
  for (int i = 0; i < 6; i++) /* Y = J6 X: the frame's twist (own axes) per unit base twist through the arm */
    for (int a = 0; a < 6; a++) {
      double x = 0;
      for (int j = 0; j < n; j++) x += J6[i * n + j] * s->mount_X[a * n + j];
      Y[i * 6 + a] = x;
    }
  for (int a = 0; a < 6; a++) /* G: rows 0-2 the world linear velocity, 3-5 the angular one */
    for (int i = 0; i < 3; i++) {
      G[i * 6 + a] = g.R[3 * i] * Y[18 + a] + g.R[3 * i + 1] * Y[24 + a] + g.R[3 * i + 2] * Y[30 + a];
      G[(3 + i) * 6 + a] = g.R[3 * i] * Y[a] + g.R[3 * i + 1] * Y[6 + a] + g.R[3 * i + 2] * Y[12 + a];
    }
  mj_jac(m, r->d, jb6, jb6 + 3 * nv, g.p, s->cfg.base_body_id);
  for (int i = 0; i < 6; i++)
    for (int k = 0; k < np; k++) {
      double x = 0;
      for (int a = 0; a < 6; a++) x += G[i * 6 + a] * s->mount_J[a * np + k];
      jb6[i * nv + s->mount_path[k]] -= x;
    }
  return 0;
}

int cusp_ends_add(cusp_runtime *r, cusp_contact_kind model) {
  const mjModel *m = r->m;
  mjData *d = r->d;
  int nv = m->nv, added = 0;
  char err[256];
  for (int i = 0; i < r->ninst; i++) {
    soft_t *s = &r->soft[i];
    const cusp_instance_config *c = &s->cfg;
    s->end_index = -1;
    if (c->end == CUSP_END_FREE || c->contact != model || s->pbody < 0) continue;
    sb_bilateral e;
    memset(&e, 0, sizeof e);
    e.rows = c->end == CUSP_END_CLAMP ? 6 : 3;
    e.body = s->pbody;
    e.seg = c->sections - 1;
    e.s = c->length[e.seg];
    e.other = -1;
    sb_pose body = sb_pose_identity();
    if (c->end_body_id > 0) pose_from_body(d, c->end_body_id, &body);
    sb_pose anchor = sb_pose_mul(&body, &s->end_anchor);
    memcpy(e.anchor_pos, anchor.p, sizeof e.anchor_pos);
    memcpy(e.anchor_R, anchor.R, sizeof e.anchor_R);
    int rigid = c->end_body_id > 0 && body_is_rigid(m, c->end_body_id) && r->rigid_body >= 0;
    int coupled = s->mount_lcp == 1 && r->rigid_body >= 0;
    if (rigid || coupled) {
      memset(r->end_jac, 0, sizeof(double) * 6 * nv);
      if (rigid) mj_jac(m, d, r->end_jac, r->end_jac + 3 * nv, anchor.p, c->end_body_id);
      if (coupled) {
        if (mount_share(r, s, r->mount_jac)) continue;
        for (int k = 0; k < 6 * nv; k++) r->end_jac[k] -= r->mount_jac[k];
      }
      e.other = r->rigid_body;
      e.jac = r->end_jac;
    }
    s->end_index = sb_contact_add_bilateral(r->P, &e, err, sizeof err);
    if (s->end_index < 0) {
      sb_errorf(r->message, sizeof r->message, "instance \"%s\": key \"end\": %s", c->name, err);
      continue;
    }
    added++;
  }
  return added;
}

void cusp_ends_scatter(cusp_runtime *r, cusp_contact_kind model) {
  double h = r->m->opt.timestep;
  for (int i = 0; i < r->ninst; i++) {
    soft_t *s = &r->soft[i];
    if (s->cfg.contact != model) continue;
    memset(s->end_reaction, 0, sizeof s->end_reaction);
    if (s->end_index < 0 || sb_contact_bilateral_result(r->P, s->end_index, s->end_reaction, NULL, NULL)) continue;
    for (int k = 0; k < 6; k++) s->end_reaction[k] = isfinite(s->end_reaction[k]) ? s->end_reaction[k] / h : 0;
  }
}

/* Held points (keys hold; end, end_body): material points of the rod
 * pinned (position) or clamped (pose) to an anchor fixed in a MuJoCo body's
 * frame, solved as bilateral rows of the lcp model's coupled problem
 * (softbody/contact.h, "Bilateral constraints": eliminated by the Schur
 * complement of their block before the LCP, recovered after it; pivoted
 * Cholesky drops dependent rows, e.g. a pin where a clamp already is).
 *
 * A point is the backbone's frame at arc length S (the key hold's entries;
 * the far end, key end, is S = the rest length, held last). Its anchor is
 * where that frame is in the initial configuration (the key `initial` at the
 * mount's and the body's poses at qpos0), in the body's frame; it is part of
 * the model, not of the state, so copies and resets stay exact. Each step
 * the anchor is the body's current pose times that offset:
 *   world, or a body MuJoCo does not move   a fixed anchor
 *   a mocap body                            a prescribed motion: MuJoCo gives a
 *                                           mocap body no velocity, so the rows
 *                                           take its last move over h as the
 *                                           anchor's (cusp_ends_mocap_motion,
 *                                           the mount's rule in mount.c: exact at
 *                                           a steady motion, a change of speed
 *                                           seen one step late); what is left of
 *                                           the pose error is removed at the rate
 *                                           `stabilization` per step, so the
 *                                           point never drifts. A move whose
 *                                           velocity changed by more than
 *                                           `teleport_speed` is a jump, not a
 *                                           motion: it gives no velocity, and the
 *                                           point is pulled to the jumped anchor
 *                                           by that removal alone (a fraction
 *                                           alpha of the distance per step, at
 *                                           most at `pull_speed`: the rows' cap;
 *                                           never past it), as after a reset
 *   a body with degrees of freedom          coupled both ways: its point
 *                                           Jacobian (mj_jac) is the anchor's
 *                                           side, the impulse goes into its tree
 *                                           with the contacts'; below a mocap
 *                                           body (a carriage on a driven clamp)
 *                                           that body's move is added as above */
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

/* The mocap body that carries body b's frame, or -1: b itself or its root
 * (MuJoCo makes a mocap body a child of the world, so it is its subtree's
 * root). */
static int mocap_carrier(const mjModel *m, int b) {
  if (b <= 0) return -1;
  int root = m->body_rootid[b];
  return m->body_mocapid[root] >= 0 ? root : -1;
}

/* The held points of c in the order of soft_t.held: the key hold's
 * entries, then the far end. */
static int held_points(const cusp_instance_config *c, cusp_held *held) {
  int n = 0;
  for (int i = 0; i < c->nhold; i++, n++) {
    memset(&held[n], 0, sizeof held[n]);
    held[n].rows = c->hold[i].kind == CUSP_END_CLAMP ? 6 : 3;
    held[n].body_id = c->hold[i].body_id;
    held[n].section = c->hold[i].section;
    held[n].s = c->hold[i].s_local;
    held[n].entry = c->hold[i].entry;
  }
  if (c->end != CUSP_END_FREE) {
    memset(&held[n], 0, sizeof held[n]);
    held[n].rows = c->end == CUSP_END_CLAMP ? 6 : 3;
    held[n].body_id = c->end_body_id;
    held[n].section = c->sections - 1;
    held[n].s = c->length[c->sections - 1];
    n++;
  }
  return n;
}

/* "key \"end\"" or "key \"hold\", entry 2" */
static const char *held_key(const cusp_held *h, char *buf, size_t n) {
  if (h->entry > 0)
    snprintf(buf, n, "key \"hold\", entry %d", h->entry);
  else
    snprintf(buf, n, "key \"end\"");
  return buf;
}

int cusp_end_create(const mjModel *m, soft_t *s, char *error, int error_size) {
  const cusp_instance_config *c = &s->cfg;
  s->nheld = 0;
  if (c->contact == CUSP_CONTACT_NATIVE) return 0;
  int n = held_points(c, s->held);
  char key[48];
  for (int k = 0; k < n; k++)
    if (s->held[k].body_id < 0 || s->held[k].body_id >= m->nbody) {
      sb_errorf(error, error_size, "instance \"%s\": %s: its body is not resolved", c->name,
                held_key(&s->held[k], key, sizeof key));
      return -1;
    }
  if (n == 0) return 0;
  /* the points at the initial coordinates, with the mount at qpos0 */
  sb_model *model = s->model;
  sb_pose base_saved = model->base;
  model->base = body_pose_qpos0(m, c->base_body_id);
  sb_kinematics(model, s->work, c->initial, NULL);
  int rc = 0;
  for (int k = 0; k < n && !rc; k++) {
    cusp_held *h = &s->held[k];
    sb_pose point;
    rc = sb_point_kinematics(model, s->work, h->section, h->s, &point, NULL, NULL, NULL);
    if (rc) {
      sb_errorf(error, error_size, "instance \"%s\": %s: no frame at section %d, s = %g", c->name,
                held_key(h, key, sizeof key), h->section + 1, h->s);
      break;
    }
    sb_pose body = body_pose_qpos0(m, h->body_id);
    h->anchor = sb_pose_inv_mul(&body, &point);
    h->mocap_body = mocap_carrier(m, h->body_id);
    memset(h->anchor_vel, 0, sizeof h->anchor_vel);
    h->index = -1;
    memset(h->reaction, 0, sizeof h->reaction);
  }
  model->base = base_saved;
  if (rc) return -1;
  s->nheld = n;
  return 0;
}

int cusp_ends_active(const cusp_runtime *r, cusp_contact_kind model) {
  for (int i = 0; i < r->ninst; i++)
    if (r->soft[i].nheld > 0 && r->soft[i].cfg.contact == model) return 1;
  return 0;
}

int cusp_ends_need_rigid(cusp_runtime *r, cusp_contact_kind model) {
  int need = 0;
  for (int i = 0; i < r->ninst; i++) {
    const soft_t *s = &r->soft[i];
    if (s->cfg.contact != model) continue;
    for (int k = 0; k < s->nheld; k++) {
      int b = s->held[k].body_id;
      if (!body_is_rigid(r->m, b)) continue;
      r->touched[b] = 1; /* its own contacts join the problem, as a touched body's */
      need = 1;
    }
  }
  return need;
}

static void mat3_vec(const double R[9], const double x[3], double y[3]) {
  for (int i = 0; i < 3; i++) y[i] = R[3 * i] * x[0] + R[3 * i + 1] * x[1] + R[3 * i + 2] * x[2];
}

int cusp_ends_add(cusp_runtime *r, cusp_contact_kind model) {
  const mjModel *m = r->m;
  mjData *d = r->d;
  int nv = m->nv, added = 0;
  char err[256], key[48];
  for (int i = 0; i < r->ninst; i++) {
    soft_t *s = &r->soft[i];
    const cusp_instance_config *c = &s->cfg;
    for (int k = 0; k < s->nheld; k++) s->held[k].index = -1;
    if (c->contact != model || s->pbody < 0) continue;
    for (int k = 0; k < s->nheld; k++) {
      cusp_held *h = &s->held[k];
      sb_bilateral e;
      memset(&e, 0, sizeof e);
      e.rows = h->rows;
      e.body = s->pbody;
      e.seg = h->section;
      e.s = h->s;
      e.other = -1;
      sb_pose body = sb_pose_identity();
      if (h->body_id > 0) pose_from_body(d, h->body_id, &body);
      sb_pose anchor = sb_pose_mul(&body, &h->anchor);
      memcpy(e.anchor_pos, anchor.p, sizeof e.anchor_pos);
      memcpy(e.anchor_R, anchor.R, sizeof e.anchor_R);
      memcpy(e.anchor_vel, h->anchor_vel, sizeof e.anchor_vel);
      /* the rows' pull to the anchor, alpha of the error over h with the
       * solve's alpha (a jumped or far anchor: as fast as the jump), held
       * to the key's speed; the turn's so that a point a rod's length out
       * goes no faster (softbody/contact.h, "Bilateral constraints") */
      e.max_speed = c->pull_speed;
      e.max_turn = cusp_rest_length(s) > 0 ? c->pull_speed / cusp_rest_length(s) : 0;
      int rigid = h->body_id > 0 && body_is_rigid(m, h->body_id) && r->rigid_body >= 0;
      int coupled = s->mount_lcp == 1 && r->rigid_body >= 0;
      if (rigid || coupled) {
        memset(r->end_jac, 0, sizeof(double) * 6 * nv);
        if (rigid) mj_jac(m, d, r->end_jac, r->end_jac + 3 * nv, anchor.p, h->body_id);
        if (coupled) {
          if (cusp_mount_share(r, s, h->section, h->s, NULL, NULL, 6, r->mount_jac)) continue;
          for (int j = 0; j < 6 * nv; j++) r->end_jac[j] -= r->mount_jac[j];
        }
        e.other = r->rigid_body;
        e.jac = r->end_jac; /* copied into the problem's rows by sb_contact_add_bilateral */
      }
      h->index = sb_contact_add_bilateral(r->P, &e, err, sizeof err);
      if (h->index < 0) {
        sb_errorf(r->message, sizeof r->message, "instance \"%s\": %s: %s", c->name, held_key(h, key, sizeof key),
                  err);
        continue;
      }
      added++;
    }
  }
  return added;
}

void cusp_ends_scatter(cusp_runtime *r, cusp_contact_kind model) {
  double h = r->m->opt.timestep;
  for (int i = 0; i < r->ninst; i++) {
    soft_t *s = &r->soft[i];
    if (s->cfg.contact != model) continue;
    for (int k = 0; k < s->nheld; k++) {
      cusp_held *e = &s->held[k];
      memset(e->reaction, 0, sizeof e->reaction);
      if (e->index < 0 || sb_contact_bilateral_result(r->P, e->index, e->reaction, NULL, NULL)) continue;
      for (int a = 0; a < 6; a++) e->reaction[a] = isfinite(e->reaction[a]) ? e->reaction[a] / h : 0;
    }
  }
}

static double norm3(const double *x) { return sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]); }

/* |v - ref_v| and |w - ref_w| of two [linear; angular] velocities */
static void velocity_change(const double *vel, const double *ref, double *dv, double *dw) {
  double a[3], b[3];
  for (int k = 0; k < 3; k++) {
    a[k] = vel[k] - ref[k];
    b[k] = vel[3 + k] - ref[3 + k];
  }
  *dv = norm3(a);
  *dw = norm3(b);
}

int cusp_mocap_jumped(cusp_runtime *r, const soft_t *s, const char *what, int body, const double vel[6],
                      double lever, double move[12]) {
  double dv_seen, dw_seen, dv, dw;
  velocity_change(vel, move, &dv_seen, &dw_seen);
  velocity_change(vel, move + 6, &dv, &dw);
  double change_seen = dv_seen + dw_seen * lever, change = dv + dw * lever;
  if (change_seen < change) {
    change = change_seen;
    dv = dv_seen;
    dw = dw_seen;
  }
  int jumped = !(change <= s->cfg.teleport_speed); /* NaN too: the callers zero a non-finite velocity */
  memcpy(move, vel, 6 * sizeof(double));
  if (!jumped) {
    memcpy(move + 6, vel, 6 * sizeof(double));
    return 0;
  }
  const char *name = mj_id2name(r->m, mjOBJ_BODY, body);
  double h = r->m->opt.timestep;
  sb_errorf(r->note, sizeof r->note,
            "instance \"%s\": %s: mocap body \"%s\" moved %.4g m and turned %.4g rad in one step, a change of "
            "its velocity by %.4g m/s and %.4g rad/s (times lever %.4g m), above key \"teleport_speed\" %.4g m/s: "
            "a jump, given no velocity",
            s->cfg.name, what, name ? name : "(unnamed)", norm3(vel) * h, norm3(vel + 3) * h, dv, dw, lever,
            s->cfg.teleport_speed);
  return 1;
}

/* The rod's rest length, m: the reach of a turn carrying it rigidly. */
double cusp_rest_length(const soft_t *s) {
  double length = 0;
  for (int i = 0; i < s->cfg.sections; i++) length += s->cfg.length[i];
  return length;
}

/* The velocity of the anchor as carried by its mocap body: that body's
 * world angular velocity w = R_prev log(R_prev^T R) / h and origin velocity
 * (p - p_prev) / h, at the anchor's point p_a: [(p - p_prev) / h + w x (p_a
 * - p); w] (the mount's backward difference, cusp_mount_mocap_motion, as a
 * world twist: both ends moved by one motion are seen moving alike). */
void cusp_ends_mocap_motion(cusp_runtime *r, soft_t *s, const cusp_arm_state *st, double h) {
  for (int k = 0; k < s->nheld; k++) {
    cusp_held *e = &s->held[k];
    memset(e->anchor_vel, 0, sizeof e->anchor_vel);
    memcpy(e->move, st->held_move + 12 * k, sizeof e->move);
    if (e->mocap_body < 0 || st->have_held_pose[k] != 1 || !(h > 0)) {
      memset(e->move, 0, 6 * sizeof(double)); /* seen standing still: no move */
      continue;
    }
    const double *Rp = st->held_pose + 12 * k, *pp = Rp + 9;
    sb_pose now, body;
    pose_from_body(r->d, e->mocap_body, &now);
    pose_from_body(r->d, e->body_id, &body);
    sb_pose anchor = sb_pose_mul(&body, &e->anchor);
    double Rrel[9], w[3], wp[3];
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) Rrel[3 * i + j] = Rp[i] * now.R[j] + Rp[3 + i] * now.R[3 + j] + Rp[6 + i] * now.R[6 + j];
    sb_so3_log(Rrel, w);
    mat3_vec(Rp, w, wp);
    double *v = e->anchor_vel, *om = e->anchor_vel + 3, arm[3];
    for (int a = 0; a < 3; a++) {
      om[a] = wp[a] / h;
      arm[a] = anchor.p[a] - now.p[a];
    }
    v[0] = (now.p[0] - pp[0]) / h + om[1] * arm[2] - om[2] * arm[1];
    v[1] = (now.p[1] - pp[1]) / h + om[2] * arm[0] - om[0] * arm[2];
    v[2] = (now.p[2] - pp[2]) / h + om[0] * arm[1] - om[1] * arm[0];
    char key[48];
    double lever = e->rows == 6 ? cusp_rest_length(s) : 0;
    if (!all_finite(e->anchor_vel, 6)) {
      memset(e->anchor_vel, 0, sizeof e->anchor_vel);
      memset(e->move, 0, 6 * sizeof(double));
    } else if (cusp_mocap_jumped(r, s, held_key(e, key, sizeof key), e->mocap_body, e->anchor_vel, lever, e->move))
      memset(e->anchor_vel, 0, sizeof e->anchor_vel);
  }
}

void cusp_ends_mocap_commit(cusp_runtime *r, const soft_t *s, cusp_arm_state *st) {
  for (int k = 0; k < s->nheld; k++) {
    const cusp_held *e = &s->held[k];
    if (e->mocap_body < 0) continue;
    sb_pose now;
    pose_from_body(r->d, e->mocap_body, &now);
    memcpy(st->held_pose + 12 * k, now.R, 9 * sizeof(double));
    memcpy(st->held_pose + 12 * k + 9, now.p, 3 * sizeof(double));
    st->have_held_pose[k] = 1;
    memcpy(st->held_move + 12 * k, e->move, sizeof e->move);
  }
}

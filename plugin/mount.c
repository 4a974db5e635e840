/* An arm on a mount with degrees of freedom, coupled implicitly (issue 19
 * item 8): mount and arm advance as one linearly implicit system.
 *
 * Within the soft step the arm's acceleration is affine in the base's
 * acceleration a_b (base axes, J_b a_r + kappa: the mount's dofs' a_r and
 * the velocity product kappa = Jdot_b qvel):
 *   Mt a_q = r' - B J_b a_r        (r': the step's right side at a_b = kappa)
 * and the wrench the arm puts on its mount is
 *   W = W0 - Meff J_b a_r,  Meff = Mbb - B^T Mt^-1 B,
 * W0 the base wrench of the chain at a_q0 = Mt^-1 r' (sb_base_wrench).
 * Eliminating a_q leaves MuJoCo's own equation with the arm's effective
 * inertia added to the mass matrix,
 *   (M_r + J_b^T Meff J_b) a_r = f_mujoco + J_b^T W0,
 * an exact Schur complement. So compute adds J_b^T Meff J_b to d->M (and
 * refactors it) and J_b^T W0 to qfrc_passive; MuJoCo then solves for a_r
 * with everything it knows (actuators, its constraints: limits, contacts
 * of the mount, equalities; implicit damping), seeing the arm's inertia;
 * advance reads the a_r MuJoCo integrated and finishes the arm's step,
 * a_q = a_q0 - Mt^-1 B J_b a_r. A light mount then carries a heavy arm at
 * any step (the partitioned, explicit coupling was unstable: the added-mass
 * instability). */
#include <stdlib.h>

#include "pipeline.h"
#include "sb_util.h"

int cusp_mount_create(const mjModel *m, soft_t *s) {
  int n = s->model->n, nv = m->nv;
  s->mount_path = malloc(sizeof(int) * (nv ? nv : 1));
  s->mount_J = calloc(6 * (size_t)(nv ? nv : 1), sizeof(double));
  s->mount_qvel0 = calloc(nv ? nv : 1, sizeof(double));
  s->mount_B = calloc(6 * (size_t)n, sizeof(double));
  s->mount_X = calloc(6 * (size_t)n, sizeof(double));
  s->mount_J6 = calloc(6 * (size_t)n, sizeof(double));
  if (!s->mount_path || !s->mount_J || !s->mount_qvel0 || !s->mount_B || !s->mount_X || !s->mount_J6) return -1;
  /* the mount's dofs and their ancestors, from the mount up to the root:
   * the only columns of its Jacobian, and a chain in MuJoCo's tree */
  int weld = m->body_weldid[s->cfg.base_body_id];
  int dof = m->body_dofnum[weld] > 0 ? m->body_dofadr[weld] + m->body_dofnum[weld] - 1 : -1;
  s->mount_npath = 0;
  for (; dof >= 0; dof = m->dof_parentid[dof]) s->mount_path[s->mount_npath++] = dof;
  return 0;
}

int cusp_mount_check(const mjModel *m, const soft_t *s) {
  int np = s->mount_npath;
  for (int k = 0; k < np; k++) {
    int i = s->mount_path[k];
    if (m->M_rownnz[i] != np - k) return -1;
    for (int c = 0; c < np - k; c++)
      if (m->M_colind[m->M_rowadr[i] + c] != s->mount_path[np - 1 - c]) return -1;
  }
  return 0;
}

void cusp_mount_free(soft_t *s) {
  free(s->mount_path);
  free(s->mount_J);
  free(s->mount_qvel0);
  free(s->mount_B);
  free(s->mount_X);
  free(s->mount_J6);
}

static void mat3t_vec(const double R[9], const double x[3], double y[3]) {
  for (int i = 0; i < 3; i++) y[i] = R[i] * x[0] + R[3 + i] * x[1] + R[6 + i] * x[2];
}

/* The mount's pose, twist [w; v] and velocity-product acceleration kappa in
 * its own axes (sb_model's base motion), its Jacobian over the path dofs,
 * and the dofs' velocities at the step's start. */
void cusp_mount_motion(cusp_runtime *r, soft_t *s) {
  const mjModel *m = r->m;
  mjData *d = r->d;
  int nv = m->nv, body = s->cfg.base_body_id;
  double *jp = r->mount_jac, *jr = jp + 3 * nv, *jpd = jr + 3 * nv, *jrd = jpd + 3 * nv;
  pose_from_body(d, body, &s->model->base);
  mj_jacBody(m, d, jp, jr, body);
  mj_jacDot(m, d, jpd, jrd, d->xpos + 3 * body, body);
  double om[3] = {0, 0, 0}, vel[3] = {0, 0, 0}, al[3] = {0, 0, 0}, ac[3] = {0, 0, 0};
  const double *R = s->model->base.R;
  int np = s->mount_npath;
  for (int k = 0; k < np; k++) {
    int j = s->mount_path[k];
    double qv = d->qvel[j];
    s->mount_qvel0[k] = qv;
    double cr[3] = {jr[j], jr[nv + j], jr[2 * nv + j]}, cp[3] = {jp[j], jp[nv + j], jp[2 * nv + j]}, br[3], bp[3];
    mat3t_vec(R, cr, br);
    mat3t_vec(R, cp, bp);
    for (int a = 0; a < 3; a++) {
      s->mount_J[a * np + k] = br[a];
      s->mount_J[(3 + a) * np + k] = bp[a];
      om[a] += cr[a] * qv;
      vel[a] += cp[a] * qv;
      al[a] += jrd[a * nv + j] * qv;
      ac[a] += jpd[a * nv + j] * qv;
    }
  }
  /* body-axes twist derivative: [R^T alpha; R^T (a - w x v)] */
  double twist[6], kappa[6], wxv[3] = {om[1] * vel[2] - om[2] * vel[1], om[2] * vel[0] - om[0] * vel[2],
                                       om[0] * vel[1] - om[1] * vel[0]};
  for (int a = 0; a < 3; a++) ac[a] -= wxv[a];
  mat3t_vec(R, om, twist);
  mat3t_vec(R, vel, twist + 3);
  mat3t_vec(R, al, kappa);
  mat3t_vec(R, ac, kappa + 3);
  sb_set_base_motion(s->model, twist, kappa);
  memcpy(s->base_twist, twist, sizeof twist);
  memcpy(s->mount_kappa, kappa, sizeof kappa);
}

/* MuJoCo gives a mocap body no velocity: the caller moves it between steps.
 * Seen standing still, a mount fed at a steady speed carries the whole arm
 * into whatever its contacts hold it off, one move per step after the LCP
 * settled them (the depth settles at move / stabilization). Its last move
 * over h is the twist the step assumes for it: exact for a steady motion.
 * A move whose velocity changed by more than `teleport_speed` from the
 * last step's (cusp_mocap_jumped) is a jump: the
 * step takes no twist from it, and the arm, whose coordinates are relative
 * to its mount, is carried along rigidly. */
void cusp_mount_mocap_motion(cusp_runtime *r, soft_t *s, const cusp_arm_state *st, double h) {
  double twist[6] = {0, 0, 0, 0, 0, 0};
  memcpy(s->mount_move, st->mount_move, sizeof s->mount_move);
  memset(s->mount_move, 0, 6 * sizeof(double)); /* seen standing still unless a move is seen below */
  if (*st->have_mount_pose == 1 && h > 0) {
    sb_pose now;
    pose_from_body(r->d, s->cfg.base_body_id, &now);
    const double *Rp = st->mount_pose, *pp = st->mount_pose + 9;
    double Rrel[9], w[3], dp[3];
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) Rrel[3 * i + j] = Rp[i] * now.R[j] + Rp[3 + i] * now.R[3 + j] + Rp[6 + i] * now.R[6 + j];
    sb_so3_log(Rrel, w);
    for (int a = 0; a < 3; a++) dp[a] = now.p[a] - pp[a];
    mat3t_vec(now.R, dp, twist + 3);
    for (int a = 0; a < 3; a++) {
      twist[a] = w[a] / h;
      twist[3 + a] /= h;
    }
    double vel[6] = {twist[3], twist[4], twist[5], twist[0], twist[1], twist[2]}; /* [v; w], its axes */
    if (!all_finite(twist, 6))
      memset(twist, 0, sizeof twist);
    else if (cusp_mocap_jumped(r, s, "its mount", s->cfg.base_body_id, vel, cusp_rest_length(s), s->mount_move))
      memset(twist, 0, sizeof twist); /* a jump: the arm rides on it rigidly */
  }
  sb_set_base_motion(s->model, twist, NULL);
}

void cusp_mount_mocap_commit(cusp_runtime *r, const soft_t *s, cusp_arm_state *st) {
  sb_pose now;
  pose_from_body(r->d, s->cfg.base_body_id, &now);
  memcpy(st->mount_pose, now.R, 9 * sizeof(double));
  memcpy(st->mount_pose + 9, now.p, 3 * sizeof(double));
  *st->have_mount_pose = 1;
  memcpy(st->mount_move, s->mount_move, sizeof s->mount_move);
}

/* A wrench [moment; force] in the mount's axes into world axes. */
static void wrench_to_world(const double R[9], const double Wb[6], double Ww[6]) {
  for (int i = 0; i < 3; i++) {
    Ww[i] = R[3 * i] * Wb[0] + R[3 * i + 1] * Wb[1] + R[3 * i + 2] * Wb[2];
    Ww[3 + i] = R[3 * i] * Wb[3] + R[3 * i + 1] * Wb[4] + R[3 * i + 2] * Wb[5];
  }
}

/* One arm's coupling terms at the prepared step: X = Mt^-1 B, Meff, and
 * W0 (plus the arm's explicit external loads) into qfrc_passive. 0, or -1
 * when a term is not finite (nothing written). */
static int arm_coupling(cusp_runtime *r, soft_t *s, double h) {
  const sb_model *sm = s->model;
  sb_work *w = s->work;
  int n = sm->n;
  double Mbb[36], W[6];
  sb_base_inertia(sm, w, s->mount_B, Mbb);
  for (int i = 0; i < n; i++)
    for (int a = 0; a < 6; a++) s->mount_X[a * n + i] = s->mount_B[i * 6 + a]; /* column-major n x 6 */
  sb_step_solve_mt_many(sm, w, s->mount_X, 6, n);
  for (int a = 0; a < 6; a++)
    for (int b = 0; b < 6; b++) {
      double x = 0;
      for (int i = 0; i < n; i++) x += s->mount_B[i * 6 + a] * s->mount_X[b * n + i];
      s->mount_Meff[a * 6 + b] = Mbb[a * 6 + b] - x;
    }
  for (int a = 0; a < 6; a++) /* symmetric up to rounding: make it exactly so */
    for (int b = 0; b < a; b++) s->mount_Meff[a * 6 + b] = s->mount_Meff[b * 6 + a] =
        0.5 * (s->mount_Meff[a * 6 + b] + s->mount_Meff[b * 6 + a]);
  /* a_q0 = (v* - v)/h: the step's acceleration at a_b = kappa */
  for (int i = 0; i < n; i++) w->qacc[i] = (w->vstar[i] - s->state->v[i]) / h;
  if (sb_base_wrench(sm, w, w->qacc, W)) return -1;
  for (int k = 0; k < 6; k++) W[k] += s->penalty_wrench[k];
  if (!all_finite(W, 6) || !all_finite(s->mount_Meff, 36) || !all_finite(s->mount_X, 6 * n)) return -1;
  mj_applyFT(r->m, r->d, W + 3, W, sm->base.p, s->cfg.base_body_id, r->d->qfrc_passive);
  return 0;
}

/* J_b^T Meff J_b into d->M: rows and columns of the path dofs, which are
 * exactly a chain of MuJoCo's tree, so every entry is one M stores (row
 * path[k]: its ancestors path[np-1] .. path[k], in that order). */
static int add_inertia(cusp_runtime *r, const soft_t *s) {
  const mjModel *m = r->m;
  int np = s->mount_npath;
  const double *J = s->mount_J;
  double *MJ = r->mount_jac; /* 6 x np scratch: Meff J */
  for (int a = 0; a < 6; a++)
    for (int k = 0; k < np; k++) {
      double x = 0;
      for (int b = 0; b < 6; b++) x += s->mount_Meff[a * 6 + b] * J[b * np + k];
      MJ[a * np + k] = x;
    }
  for (int k = 0; k < np; k++) {
    int i = s->mount_path[k], adr = m->M_rowadr[i];
    if (m->M_rownnz[i] != np - k) return -1;
    for (int c = 0; c < np - k; c++) {
      int kj = np - 1 - c;
      if (m->M_colind[adr + c] != s->mount_path[kj]) return -1;
      double x = 0;
      for (int a = 0; a < 6; a++) x += J[a * np + k] * MJ[a * np + kj];
      r->d->M[adr + c] += x;
    }
  }
  return 0;
}

void cusp_stage_mount_coupling(cusp_runtime *r, double h) {
  const mjModel *m = r->m;
  mjData *d = r->d;
  int any = 0;
  for (int i = 0; i < r->ninst; i++) {
    soft_t *s = &r->soft[i];
    s->mount_coupled = 0;
    if (s->moving_base && s->cfg.contact != CUSP_CONTACT_NATIVE && s->work->step_ready) any = 1;
  }
  if (!any) return;
  /* a forward pass that skipped the position stage (mj_forwardSkip) left
   * d->M as the last compute augmented it: start again from MuJoCo's own */
  size_t nC = sizeof(double) * m->nC;
  if (r->mount_augmented && !memcmp(d->M, r->mount_M_post, nC)) memcpy(d->M, r->mount_M_pre, nC);
  memcpy(r->mount_M_pre, d->M, nC);
  for (int i = 0; i < r->ninst; i++) {
    soft_t *s = &r->soft[i];
    if (!s->moving_base || s->cfg.contact == CUSP_CONTACT_NATIVE || !s->work->step_ready) continue;
    if (arm_coupling(r, s, h)) {
      r->pending_count[CUSP_COUNT_NAN_EVENTS]++;
      sb_errorf(r->message, sizeof r->message, "instance \"%s\": the mount's coupling terms are not finite; "
                "the mount carries nothing this step", s->cfg.name);
      continue;
    }
    if (add_inertia(r, s)) {
      memcpy(d->M, r->mount_M_pre, nC); /* cannot happen with MuJoCo's tree layout: say so */
      sb_errorf(r->message, sizeof r->message, "instance \"%s\": the mount's dofs do not match MuJoCo's mass matrix layout",
                s->cfg.name);
      r->pending_count[CUSP_COUNT_NAN_EVENTS]++;
      break;
    }
    s->mount_coupled = 1;
  }
  mj_factorM(m, d);
  if (d->nefc) mj_projectConstraint(m, d); /* the dual solver's J M^-1 J^T with the arm's inertia */
  memcpy(r->mount_M_post, d->M, nC);
  r->mount_augmented = 1;
}

/* ---------- the arm's contacts ----------
 *
 * In the coordinates (qvel, u), u = v + X eta_b (eta_b = J_b qvel), the
 * kinetic energy of mount + arm separates: the mass matrix is
 * diag(M_r + J_b^T Meff J_b, Mt), the first block being d->M as compute
 * left it. A point of the arm then moves with
 *   G_q u + (G_b - G_q X) J_b qvel+ + G_b h kappa
 * (G_q: the point's Jacobian on the arm's coordinates, G_b: on the base's
 * twist), so its contacts are those of a soft body with free velocity
 * u* = v* + X eta_b and, on the MuJoCo system's side, of a point whose
 * Jacobian is (G_b - G_q X) J_b: the LCP sees the mount's and the arm's
 * inertia together and the mount's free acceleration, exactly. The same
 * coordinates hold for any number of coupled arms (the first block then
 * carries every arm's inertia, each arm its own u), so a contact between
 * two arms, or of an arm with itself, has the MuJoCo system as a third
 * participant: its Jacobian is side 0's mount share minus side 1's. An arm
 * whose contacts all stay out of the problems keeps the partitioned
 * treatment (cusp_mount_contact_load). The coordinates are the same for
 * every implicit model (lcp, sap, ncp: each solves on W = J M^-1 J^T of this
 * problem), and an arm taken into them stays there for the step. */

int cusp_mount_lcp_prepare(cusp_runtime *r, cusp_contact_kind model) {
  /* 2: taken into the coupled coordinates by this model's problem, 1: by an
   * earlier model's this step (its free velocity already shifted) */
  int any = 0;
  for (int c = 0; c < r->nmeta; c++) {
    const contact_meta *cm = &r->meta[c];
    if (cm->model != model || cm->inst < 0) continue;
    int side[2] = {cm->inst, cm->other_inst};
    for (int k = 0; k < 2; k++) {
      if (side[k] < 0) continue;
      soft_t *s = &r->soft[side[k]];
      if (s->mount_coupled && s->mount_lcp == 0) s->mount_lcp = 2;
      any |= s->mount_lcp != 0;
    }
  }
  for (int i = 0; i < r->ninst; i++) { /* a held point is solved in the coupled coordinates too */
    soft_t *s = &r->soft[i];
    if (s->mount_coupled && s->mount_lcp == 0 && s->nheld > 0 && s->cfg.contact == model) s->mount_lcp = 2;
  }
  for (int i = 0; i < r->ninst; i++) {
    soft_t *s = &r->soft[i];
    if (s->mount_lcp != 2) continue;
    s->mount_lcp = 1;
    int n = s->model->n;
    for (int j = 0; j < n; j++) {
      double x = 0;
      for (int a = 0; a < 6; a++) x += s->mount_X[a * n + j] * s->base_twist[a];
      s->work->vstar[j] += x;
    }
    sb_set_base_motion(s->model, NULL, s->mount_kappa); /* the twist moves to the MuJoCo side */
    r->touched[r->m->body_weldid[s->cfg.base_body_id]] = 1; /* its own contacts join the problem */
    any = 1;
  }
  return any;
}

int cusp_mount_share(cusp_runtime *r, soft_t *s, int section, double sarc, const double off[3],
                     const double point[3], int rows, double *jb) {
  const mjModel *m = r->m;
  int nv = m->nv, n = s->model->n, np = s->mount_npath;
  double *J6 = s->mount_J6, Y[36], G[36];
  sb_pose g;
  if (sb_point_kinematics(s->model, s->work, section, sarc, &g, J6, NULL, NULL)) return -1;
  /* Y = J6 X: the frame's twist (own axes) per unit base twist through the arm */
  for (int i = 0; i < 6; i++)
    for (int a = 0; a < 6; a++) {
      double x = 0;
      for (int j = 0; j < n; j++) x += J6[i * n + j] * s->mount_X[a * n + j];
      Y[i * 6 + a] = x;
    }
  /* G = G_q X: rows 0-2 the point's world velocity R (v + w x off), 3-5 the frame's angular one */
  for (int a = 0; a < 6; a++) {
    double w[3] = {Y[a], Y[6 + a], Y[12 + a]}, lin[3] = {Y[18 + a], Y[24 + a], Y[30 + a]};
    if (off) {
      lin[0] += w[1] * off[2] - w[2] * off[1];
      lin[1] += w[2] * off[0] - w[0] * off[2];
      lin[2] += w[0] * off[1] - w[1] * off[0];
    }
    for (int i = 0; i < 3; i++) {
      G[i * 6 + a] = g.R[3 * i] * lin[0] + g.R[3 * i + 1] * lin[1] + g.R[3 * i + 2] * lin[2];
      G[(3 + i) * 6 + a] = g.R[3 * i] * w[0] + g.R[3 * i + 1] * w[1] + g.R[3 * i + 2] * w[2];
    }
  }
  /* mj_jac of the point carried by the mount, minus G J_b */
  mj_jac(m, r->d, jb, rows == 6 ? jb + 3 * nv : NULL, point ? point : g.p, s->cfg.base_body_id);
  for (int i = 0; i < rows; i++)
    for (int k = 0; k < np; k++) {
      double x = 0;
      for (int a = 0; a < 6; a++) x += G[i * 6 + a] * s->mount_J[a * np + k];
      jb[i * nv + s->mount_path[k]] -= x;
    }
  return 0;
}

/* The mount's share of the world velocity of arm s's point at pos on disk
 * `disk` (3 x nv). */
static int point_mount_jac(cusp_runtime *r, soft_t *s, int disk, const double pos[3], double *jb) {
  double off[3];
  const cusp_disk *dk = &s->cfg.disk[disk];
  cusp_arm_point_offset(s, disk, pos, off);
  return cusp_mount_share(r, s, dk->section, dk->s, off, pos, 3, jb);
}

int cusp_mount_lcp_side(cusp_runtime *r, const contact_meta *cm, sb_contact *sc, double *jac) {
  soft_t *s = &r->soft[cm->inst], *o = cm->other_inst >= 0 ? &r->soft[cm->other_inst] : NULL;
  int own = s->mount_lcp, other = o && o->mount_lcp;
  if ((!own && !other) || r->rigid_body < 0) return 0;
  int nv = r->m->nv;
  double *jb = r->mount_jac, *jb_other = r->mount_jac + 3 * nv;
  if (own && point_mount_jac(r, s, cm->disk, cm->pos, jb)) return -1;
  if (!o) { /* onto the other side, which then is (also) the MuJoCo system */
    sb_contact_side *side = &sc->side[1];
    if (side->body != r->rigid_body) {
      memset(jac, 0, sizeof(double) * 3 * nv);
      side->body = r->rigid_body;
    }
    for (int k = 0; k < 3 * nv; k++) jac[k] -= jb[k];
    side->jac = jac;
    return 0;
  }
  if (other && point_mount_jac(r, o, cm->other_disk, cm->pos, jb_other)) return -1;
  for (int k = 0; k < 3 * nv; k++) jac[k] = (own ? jb[k] : 0) - (other ? jb_other[k] : 0);
  sc->coupled_body = r->rigid_body;
  sc->coupled_jac = jac;
  return 0;
}

/* The contact impulse p on an arm the LCP saw on a fixed mount acts on
 * the mount twice: directly, as the contacts' wrench about the base, and
 * through the arm's coupling, -B^T Mt^-1 p = -X^T p. (In the coupled
 * treatment the MuJoCo side's impulse holds both.) */
void cusp_mount_contact_load(cusp_runtime *r, soft_t *s, double h) {
  if (!s->mount_coupled || !s->has_impulse || s->mount_lcp) return;
  int n = s->model->n;
  double Xp[6], W[6];
  for (int a = 0; a < 6; a++) {
    double x = 0;
    for (int i = 0; i < n; i++) x += s->mount_X[a * n + i] * s->impulse[i];
    Xp[a] = x;
  }
  wrench_to_world(s->model->base.R, Xp, W);
  for (int k = 0; k < 6; k++) W[k] = (s->contact_wrench[k] - W[k]) / h;
  if (!all_finite(W, 6)) {
    r->pending_count[CUSP_COUNT_NAN_EVENTS]++;
    return;
  }
  mj_applyFT(r->m, r->d, W + 3, W, s->model->base.p, s->cfg.base_body_id, r->qfrc_cusp);
}

int cusp_mount_finish(cusp_runtime *r, soft_t *s, double h) {
  if (!s->mount_coupled) return 0;
  int n = s->model->n, np = s->mount_npath;
  /* v = u - X J_b qvel+ in the coupled contact coordinates, else
   * v* + Mt^-1 p - X J_b (qvel+ - qvel) */
  double db[6];
  for (int a = 0; a < 6; a++) {
    double x = s->mount_lcp ? s->base_twist[a] : 0;
    for (int k = 0; k < np; k++) x += s->mount_J[a * np + k] * (r->d->qvel[s->mount_path[k]] - s->mount_qvel0[k]);
    db[a] = x;
  }
  sb_set_base_motion(s->model, s->base_twist, s->mount_kappa);
  if (!all_finite(db, 6)) return -1;
  for (int i = 0; i < n; i++) {
    double dv = 0;
    for (int a = 0; a < 6; a++) dv += s->mount_X[a * n + i] * db[a];
    s->state->v[i] -= dv;
    s->state->q[i] -= h * dv;
  }
  return none_bad(s->state->q, n) && none_bad(s->state->v, n) ? 0 : -1;
}

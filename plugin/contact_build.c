/* The coupled contact problem of one implicit contact model (pipeline.h):
 * the soft arms, the MuJoCo system as one body, the model's contacts and the
 * touched bodies' own contacts, which lcp, sap and ncp each solve in their
 * own way (contact_lcp.c, contact_sap.c, contact_ncp.c). */
#include "collide.h"
#include "pipeline.h"
#include "sb_util.h"

/* The MuJoCo system as one custom body of the problem, whose mass matrix
 * is the one MuJoCo's integrator will solve its velocity with
 * (rigid_damping.c). */
static void rigid_solve(void *ctx, int ncol, double *x) { cusp_rigid_solve(ctx, x, ncol); }

static void rigid_half_solve(void *ctx, int ncol, double *x) { cusp_rigid_half_solve(ctx, x, ncol); }

/* The rigid bodies' velocity if the soft contacts pushed nothing. MuJoCo's
 * step gives v+ = v + h A^-1 (f + J^T lambda / h), A = M + h diag(b) where
 * the integrator treats dof damping implicitly (else M), f every force it
 * will apply but cusp's and the constraints', the explicit damping -b v
 * among them (in qfrc_passive); so v+ = v + h A^-1 f + A^-1 J^T lambda:
 * the free velocity is v + h A^-1 f and the impulse acts through A^-1. */
static void rigid_free_velocity(cusp_runtime *r, double h) {
  const mjModel *m = r->m;
  mjData *d = r->d;
  int nv = m->nv;
  cusp_rigid_damping_factor(r, h);
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
  memcpy(r->vfree, r->force, sizeof(double) * nv);
  cusp_rigid_solve(r, r->vfree, 1);
  for (int i = 0; i < nv; i++) r->vfree[i] = d->qvel[i] + h * r->vfree[i];
  /* An implicit model that ran before in this step (arms of several
   * models) already pushed the rigid bodies: this problem starts from the
   * velocity that left them (block Gauss-Seidel between the models), so a
   * body both touch is not held up against gravity twice. */
  if (r->has_rigid_impulse) {
    memcpy(r->force, r->rigid_impulse, sizeof(double) * nv);
    cusp_rigid_solve(r, r->force, 1);
    for (int i = 0; i < nv; i++) r->vfree[i] += r->force[i];
  }
  const double *inv_d = r->rigid_damped ? r->rigid_LDiagInv : d->qLDiagInv;
  for (int i = 0; i < nv; i++) r->sqrt_inv_d[i] = sqrt(inv_d[i]);
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
    cusp_arm_point_offset(o, cm->other_disk, cm->pos, side->offset);
    return;
  }
  int body = m->geom_bodyid[cm->other_geom];
  if (body_is_rigid(m, body) && r->rigid_body >= 0) {
    side->body = r->rigid_body;
    mj_jac(m, r->d, jac, NULL, cm->pos, body);
    side->jac = jac;
  }
}

/* The touched rigid bodies' contacts with everything but soft disks, found
 * with the speculative margin (side 0 the other geom, side 1 the touched
 * body's geom). MuJoCo's list only holds pairs already within geom margin,
 * so a squeezed ball lifting by a micron would lose its floor in the
 * problem every few steps and be pushed through it. */
static void touched_body_contacts(cusp_runtime *r, cusp_contact_kind model) {
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
        double mu = cusp_mujoco_pair_friction(m, g, o);
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
          contact_meta cm = {.inst = -1, .disk = -1, .own_geom = g, .other_geom = o, .other_inst = -1, .model = model,
                             .in_problem = 1, .gap = con->dist};
          for (int q = 0; q < 3; q++) {
            cm.pos[q] = con->pos[q];
            cm.normal[q] = con->normal[q];
          }
          if (r->nmeta >= r->max_contacts) {
            r->ndropped++; /* counted; the rest of the problem is solved without it */
            continue;
          }
          if (sb_contact_add(r->P, &sc, err, sizeof err) < 0) continue;
          cusp_add_meta(r, &cm);
        }
      }
    }
  }
}

int cusp_contact_build(cusp_runtime *r, cusp_contact_kind model, double h, double *t_col) {
  const mjModel *m = r->m;
  char err[256];
  int nsoft_contacts = r->nmeta, nmodel = 0;
  for (int c = 0; c < nsoft_contacts; c++) nmodel += r->meta[c].model == model;
  /* a held end is solved every step, contact or not */
  if ((nmodel == 0 && !cusp_ends_active(r, model)) || !r->P) return 0;
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
    if (cm->model != model || cm->other_inst >= 0) continue;
    int body = m->geom_bodyid[cm->other_geom];
    if (body_is_rigid(m, body)) {
      need_rigid = 1;
      r->touched[body] = 1;
    }
  }
  /* arms coupled to moving mounts enter the problem in the coupled coordinates (mount.c) */
  if (cusp_mount_lcp_prepare(r, model)) need_rigid = 1;
  if (cusp_ends_need_rigid(r, model)) need_rigid = 1;
  if (need_rigid && m->nv > 0) {
    rigid_free_velocity(r, h);
    r->rigid_body = sb_contact_add_custom(P, m->nv, rigid_solve, rigid_half_solve, r, r->vfree, err, sizeof err);
  }
  for (int c = 0; c < nsoft_contacts; c++) {
    contact_meta *cm = &r->meta[c];
    if (cm->model != model) continue;
    soft_t *s = &r->soft[cm->inst];
    sb_contact sc;
    memset(&sc, 0, sizeof sc);
    sc.side[0].body = s->pbody;
    sc.side[0].seg = s->cfg.disk[cm->disk].section;
    sc.side[0].s = s->cfg.disk[cm->disk].s;
    cusp_arm_point_offset(s, cm->disk, cm->pos, sc.side[0].offset);
    other_side(r, cm, &sc.side[1], r->jac);
    if (cusp_mount_lcp_side(r, cm, &sc, r->jac)) { /* no point there: solved without it, said so */
      if (!r->message[0])
        sb_errorf(r->message, sizeof r->message, "instance \"%s\": disk %d has no point for its mount's share of a "
                  "contact; the contact is left out this step", s->cfg.name, cm->disk);
      cm->in_problem = cm->kept = 0;
      continue;
    }
    memcpy(sc.normal, cm->normal, sizeof sc.normal);
    sc.gap = cm->gap;
    sc.friction = s->cfg.friction;
    memcpy(sc.tangent, s->cfg.friction_reference, sizeof sc.tangent);   /* zero: none */
    /* warm-start identity as the lcp model's: even for the disks' contacts, odd for the touched bodies' own */
    sc.id = 2 * ((((long)cm->inst * CUSP_MAX_DISKS + cm->disk) * (m->ngeom + 1) + cm->other_geom) * mjMAXCONPAIR +
                 cm->pair_index);
    cm->in_problem = sb_contact_add(P, &sc, err, sizeof err) >= 0;
    cm->kept = 0;
  }
  double t_mark = now_us();
  if (r->rigid_body >= 0) touched_body_contacts(r, model);
  *t_col += now_us() - t_mark;
  int n = 0;
  while (sb_contact_at(P, n)) n++;
  return n + cusp_ends_add(r, model);
}

void cusp_contact_scatter(cusp_runtime *r, cusp_contact_kind model) {
  sb_contact_problem *P = r->P;
  int pc = 0;
  for (int c = 0; c < r->nmeta; c++) {
    contact_meta *cm = &r->meta[c];
    if (cm->model != model || !cm->in_problem) continue;
    sb_contact_result(P, pc++, cm->impulse, &cm->fn, NULL, &cm->kept);
  }
  /* added to what a model that ran before in this step left (several models' arms) */
  for (int i = 0; i < r->ninst; i++) {
    soft_t *s = &r->soft[i];
    if (s->pbody < 0) continue;
    const double *p = sb_contact_body_impulse(P, s->pbody);
    double w[6];
    if (sb_contact_body_wrench(P, s->pbody, s->model->base.p, w)) memset(w, 0, sizeof w);
    for (int j = 0; j < s->model->n; j++) s->impulse[j] = (s->has_impulse ? s->impulse[j] : 0) + p[j];
    for (int j = 0; j < 6; j++) s->contact_wrench[j] = (s->has_impulse ? s->contact_wrench[j] : 0) + w[j];
    s->has_impulse = 1;
  }
  if (r->rigid_body >= 0) {
    const double *p = sb_contact_body_impulse(P, r->rigid_body);
    for (int j = 0; j < r->m->nv; j++) r->rigid_impulse[j] = (r->has_rigid_impulse ? r->rigid_impulse[j] : 0) + p[j];
    r->has_rigid_impulse = 1;
  }
}

/* A contact whose Delassus block is this small next to the largest one
 * cannot be moved by any impulse (a disk fixed at a static mount): it gets
 * none, rather than a regularization of zero. */
#define CUSP_IMMOVABLE 1e-12

int cusp_movable_contacts(int m, const double *W, double *Wc, int *idx) {
  int m3 = 3 * m, n = 0;
  double wmax = 0;
  for (int i = 0; i < m; i++) {
    const double *d = W + (size_t)(3 * i) * m3 + 3 * i;
    wmax = fmax(wmax, d[0] + d[m3 + 1] + d[2 * m3 + 2]);
  }
  for (int i = 0; i < m; i++) {
    const double *d = W + (size_t)(3 * i) * m3 + 3 * i;
    if (d[0] + d[m3 + 1] + d[2 * m3 + 2] > CUSP_IMMOVABLE * wmax) idx[n++] = i;
  }
  int n3 = 3 * n;
  for (int b = 0; b < n; b++)
    for (int q = 0; q < 3; q++) {
      const double *src = W + (size_t)(3 * idx[b] + q) * m3;
      double *dst = Wc + (size_t)(3 * b + q) * n3;
      for (int a = 0; a < n; a++) memcpy(dst + 3 * a, src + 3 * idx[a], 3 * sizeof(double));
    }
  return n;
}

/* A reference acceleration (m/s^2, separating) that no contact solve
 * reaches: a constraint row aiming at it is never active. */
#define CUSP_OUT_OF_REACH 1e10

/* Is the geom pair one of the touched bodies' contacts an implicit model
 * took into its problem this step? */
static int pair_solved(const cusp_runtime *r, int g0, int g1) {
  for (int c = 0; c < r->nmeta; c++) {
    const contact_meta *cm = &r->meta[c];
    if (cm->inst >= 0 || !cm->in_problem) continue;
    if ((cm->own_geom == g0 && cm->other_geom == g1) || (cm->own_geom == g1 && cm->other_geom == g0)) return 1;
  }
  return 0;
}

static int is_contact_row(int type) {
  return type == mjCNSTR_CONTACT_FRICTIONLESS || type == mjCNSTR_CONTACT_PYRAMIDAL || type == mjCNSTR_CONTACT_ELLIPTIC;
}

/* Is geom g on a kinematic tree a constraint MuJoCo keeps acts on? */
static int tree_held(const mjModel *m, const char *held_tree, int g) {
  int tree = m->body_treeid[m->geom_bodyid[g]];
  return tree >= 0 && held_tree[tree]; /* static geoms: never */
}

/* Does MuJoCo's contact i leave its rows to cusp's solve this step? */
static int contact_yields(const cusp_runtime *r, int i) {
  const mjContact *con = r->d->contact + i;
  return con->exclude == 0 && con->efc_address >= 0 && con->geom[0] >= 0 && con->geom[1] >= 0 &&
         !tree_held(r->m, r->held_tree, con->geom[0]) && !tree_held(r->m, r->held_tree, con->geom[1]) &&
         pair_solved(r, con->geom[0], con->geom[1]);
}

/* Marks the trees the rows MuJoCo keeps (those not of a yielding contact)
 * act on; returns 1 when a tree was newly marked. */
static int mark_held_trees(cusp_runtime *r) {
  const mjModel *m = r->m;
  const mjData *d = r->d;
  int nv = m->nv, sparse = mj_isSparse(m), changed = 0;
  for (int k = 0; k < d->nefc; k++) {
    if (is_contact_row(d->efc_type[k]) && contact_yields(r, d->efc_id[k])) continue;
    if (sparse) {
      for (int a = d->efc_J_rowadr[k]; a < d->efc_J_rowadr[k] + d->efc_J_rownnz[k]; a++) {
        int t = m->dof_treeid[d->efc_J_colind[a]];
        if (d->efc_J[a] != 0 && !r->held_tree[t]) r->held_tree[t] = changed = 1;
      }
    } else {
      for (int j = 0; j < nv; j++) {
        int t = m->dof_treeid[j];
        if (d->efc_J[(size_t)k * nv + j] != 0 && !r->held_tree[t]) r->held_tree[t] = changed = 1;
      }
    }
  }
  return changed;
}

void cusp_yield_solved_contacts(cusp_runtime *r) {
  const mjModel *m = r->m;
  mjData *d = r->d;
  if (d->nefc == 0 || d->ncon == 0) return;
  /* a contact whose bodies something else in MuJoCo's solve acts on (a
   * joint limit, an equality, a contact cusp did not see, of any body of
   * their trees) stays MuJoCo's as well: cusp's solve did not know that.
   * Held trees only grow, so this ends. */
  memset(r->held_tree, 0, m->ntree ? m->ntree : 1);
  while (mark_held_trees(r)) {
  }
  for (int k = 0; k < d->nefc; k++) {
    if (!is_contact_row(d->efc_type[k]) || !contact_yields(r, d->efc_id[k])) continue;
    double *kbip = d->efc_KBIP + 4 * k, ki = kbip[0] * kbip[2];
    kbip[1] = 0; /* aref = -B vel - K I (pos - margin): no velocity term */
    if (ki > 0) d->efc_pos[k] = d->efc_margin[k] + CUSP_OUT_OF_REACH / ki;
  }
}

int cusp_contact_yielded(const cusp_runtime *r, int i) { return r->yielded && contact_yields(r, i); }

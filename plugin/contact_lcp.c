/* The lcp contact model (paper 000): every lcp contact of every arm, the
 * MuJoCo system as one body and the touched bodies' own contacts in one
 * velocity-level LCP with the prepared soft step, conditioned and solved by
 * softbody/contact.h. The rigid side's total impulse goes back to MuJoCo as
 * qfrc_passive += J_r^T lambda / h; MuJoCo's own solver then finds those
 * contacts already at rest. */
#include "collide.h"
#include "contact_model.h"
#include "sb_util.h"

/* The MuJoCo system as one custom body of the problem. */
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
          contact_meta cm = {.inst = -1, .disk = -1, .other_geom = o, .other_inst = -1,
                             .model = CUSP_CONTACT_LCP, .in_problem = 1};
          if (r->nmeta >= r->max_contacts) return;
          if (sb_contact_add(r->P, &sc, err, sizeof err) < 0) continue;
          cusp_add_meta(r, &cm);
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

/* The coupled problem: soft bodies, the MuJoCo system, the lcp contacts
 * and the touched bodies' own, then assembly, conditioning and the solver
 * chain; the results into the arms, the rigid system and r->meta. */
int cusp_lcp_impulses(cusp_runtime *r, double h, sb_contact_info *info, int *solved, double *t_col) {
  const mjModel *m = r->m;
  char err[256];
  int nsoft_contacts = r->nmeta, nlcp = 0;
  for (int c = 0; c < nsoft_contacts; c++) nlcp += r->meta[c].model == CUSP_CONTACT_LCP;
  if (nlcp == 0) return 0;
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
    if (cm->model != CUSP_CONTACT_LCP || cm->other_inst >= 0) continue;
    int body = m->geom_bodyid[cm->other_geom];
    if (body_is_rigid(m, body)) {
      need_rigid = 1;
      r->touched[body] = 1;
    }
  }
  if (cusp_mount_lcp_prepare(r)) need_rigid = 1; /* arms coupled to moving mounts (mount.c) */
  if (need_rigid && m->nv > 0) {
    rigid_free_velocity(r, h);
    r->rigid_body = sb_contact_add_custom(P, m->nv, rigid_solve, rigid_half_solve, r, r->vfree, err, sizeof err);
  }
  /* one coupled solve: the first LCP instance in contact sets its options */
  int lead = 0;
  while (r->meta[lead].model != CUSP_CONTACT_LCP) lead++;
  const sb_contact_options opt = options_of(&r->soft[r->meta[lead].inst].cfg);
  for (int c = 0; c < nsoft_contacts; c++) {
    contact_meta *cm = &r->meta[c];
    if (cm->model != CUSP_CONTACT_LCP) continue;
    soft_t *s = &r->soft[cm->inst];
    sb_contact sc;
    memset(&sc, 0, sizeof sc);
    sc.side[0].body = s->pbody;
    sc.side[0].seg = s->cfg.disk[cm->disk].section;
    sc.side[0].s = s->cfg.disk[cm->disk].s;
    cusp_arm_point_offset(s, cm->disk, cm->pos, sc.side[0].offset);
    other_side(r, cm, &sc.side[1], r->jac);
    cusp_mount_lcp_side(r, cm, &sc.side[1], r->jac);
    memcpy(sc.normal, cm->normal, sizeof sc.normal);
    sc.gap = cm->gap;
    sc.friction = s->cfg.friction;
    /* warm-start identity: even for the disks' contacts, odd for the touched bodies' own */
    sc.id = 2 * ((((long)cm->inst * CUSP_MAX_DISKS + cm->disk) * (m->ngeom + 1) + cm->other_geom) * mjMAXCONPAIR +
                 cm->pair_index);
    cm->in_problem = sb_contact_add(P, &sc, err, sizeof err) >= 0;
    cm->kept = 0;
  }
  double t_mark = now_us();
  if (r->rigid_body >= 0) touched_body_contacts(r);
  *t_col += now_us() - t_mark;
  int rc = sb_contact_solve(P, h, &opt, info, err, sizeof err);
  *solved = rc == 0 && info->lcp.status == SB_LCP_SOLVED;
  if (!*solved) sb_errorf(r->message, sizeof r->message, "contact solve: %s", err);
  /* results back into meta, in the order the contacts were added */
  int pc = 0;
  for (int c = 0; c < r->nmeta; c++) {
    contact_meta *cm = &r->meta[c];
    if (cm->model != CUSP_CONTACT_LCP || !cm->in_problem) continue;
    sb_contact_result(P, pc++, cm->impulse, &cm->fn, NULL, &cm->kept);
  }
  /* ... and the impulses into the arms and the MuJoCo system */
  for (int i = 0; i < r->ninst; i++) {
    soft_t *s = &r->soft[i];
    if (s->pbody < 0) continue;
    memcpy(s->impulse, sb_contact_body_impulse(P, s->pbody), sizeof(double) * s->model->n);
    s->has_impulse = 1;
    if (sb_contact_body_wrench(P, s->pbody, s->model->base.p, s->contact_wrench)) memset(s->contact_wrench, 0, sizeof s->contact_wrench);
  }
  if (r->rigid_body >= 0) {
    memcpy(r->rigid_impulse, sb_contact_body_impulse(P, r->rigid_body), sizeof(double) * m->nv);
    r->has_rigid_impulse = 1;
  }
  return 1;
}


/* The penalty contact model (the baseline paper 000 argues against;
 * softbody/penalty.h): spring-damper normal and regularized Coulomb
 * friction, linearly implicit in each arm's own velocity: the force F at
 * the step's start goes into the arm's tau, h J^T H J into its M~ (the next
 * sb_step_prepare). The other side of a contact is held at its velocity at
 * the step's start: another arm gets -F and its own implicit term; a MuJoCo
 * body gets -F through qfrc_passive, explicit (MuJoCo's integrators do not
 * differentiate a plugin's passive force). */
#include "contact_model.h"
#include "penalty.h"

/* below this slip speed friction is proportional to the slip */
#define CUSP_SLIP_SPEED 1e-3

void cusp_penalty_forces(cusp_runtime *r) {
  const mjModel *m = r->m;
  mjData *d = r->d;
  double h = m->opt.timestep;
  for (int c = 0; c < r->nmeta; c++) {
    contact_meta *cm = &r->meta[c];
    if (cm->model != CUSP_CONTACT_PENALTY) continue;
    soft_t *s = &r->soft[cm->inst];
    double v0[3], v1[3] = {0, 0, 0}, f[3];
    cusp_arm_point_velocity(s, cm->disk, cm->pos, v0);
    int body = cm->other_inst < 0 ? m->geom_bodyid[cm->other_geom] : 0;
    if (cm->other_inst >= 0) {
      cusp_arm_point_velocity(&r->soft[cm->other_inst], cm->other_disk, cm->pos, v1);
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
    double H[9];
    sb_penalty_force(&pp, cm->normal, cm->gap, vrel, h, f, H);
    if (!all_finite(f, 3) || !all_finite(H, 9)) continue;
    const sb_pose *g = &s->disk_pose[cm->disk];
    double rr[3] = {cm->pos[0] - g->p[0], cm->pos[1] - g->p[1], cm->pos[2] - g->p[2]};
    double mo[3] = {rr[1] * f[2] - rr[2] * f[1], rr[2] * f[0] - rr[0] * f[2], rr[0] * f[1] - rr[1] * f[0]};
    int seg = s->cfg.disk[cm->disk].section;
    double arc = s->cfg.disk[cm->disk].s;
    sb_add_world_wrench(s->model, s->work, seg, arc, f, mo, s->tau);
    cusp_arm_accumulate_wrench(s, cm->pos, f);
    double nf[3] = {-f[0], -f[1], -f[2]}, zero[3] = {0, 0, 0};
    if (cm->other_inst >= 0) {
      soft_t *o = &r->soft[cm->other_inst];
      const sb_pose *go = &o->disk_pose[cm->other_disk];
      double ro[3] = {cm->pos[0] - go->p[0], cm->pos[1] - go->p[1], cm->pos[2] - go->p[2]};
      double mo2[3] = {ro[1] * nf[2] - ro[2] * nf[1], ro[2] * nf[0] - ro[0] * nf[2], ro[0] * nf[1] - ro[1] * nf[0]};
      int oseg = o->cfg.disk[cm->other_disk].section;
      double oarc = o->cfg.disk[cm->other_disk].s;
      sb_add_world_wrench(o->model, o->work, oseg, oarc, nf, mo2, o->tau);
      /* u = v0 - v1: the same H on the other arm's own velocity; within one
       * arm (self-contact) on the points' relative velocity */
      if (o == s)
        sb_penalty_add_implicit(s->model, s->work, seg, arc, rr, oseg, oarc, ro, H, h);
      else {
        sb_penalty_add_implicit(s->model, s->work, seg, arc, rr, -1, 0, NULL, H, h);
        sb_penalty_add_implicit(o->model, o->work, oseg, oarc, ro, -1, 0, NULL, H, h);
      }
      cusp_arm_accumulate_wrench(o, cm->pos, nf);
    } else {
      sb_penalty_add_implicit(s->model, s->work, seg, arc, rr, -1, 0, NULL, H, h);
      if (body_is_rigid(m, body)) mj_applyFT(m, d, nf, zero, cm->pos, body, r->qfrc_cusp);
    }
    for (int a = 0; a < 3; a++) cm->impulse[a] = f[a] * h;
    cm->fn = (f[0] * cm->normal[0] + f[1] * cm->normal[1] + f[2] * cm->normal[2]) * h;
    cm->kept = 1;
  }
}


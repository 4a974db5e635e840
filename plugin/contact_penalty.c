/* The penalty contact model (the baseline paper 000 argues against;
 * softbody/penalty.h): explicit spring-damper normal and regularized
 * Coulomb friction from the state at the step's start. */
#include "contact_model.h"
#include "penalty.h"

/* below this slip speed friction is proportional to the slip */
#define CUSP_SLIP_SPEED 1e-3

void cusp_penalty_forces(cusp_runtime *r) {
  const mjModel *m = r->m;
  mjData *d = r->d;
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
    sb_penalty_force(&pp, cm->normal, cm->gap, vrel, f);
    if (!all_finite(f, 3)) continue;
    const sb_pose *g = &s->disk_pose[cm->disk];
    double rr[3] = {cm->pos[0] - g->p[0], cm->pos[1] - g->p[1], cm->pos[2] - g->p[2]};
    double mo[3] = {rr[1] * f[2] - rr[2] * f[1], rr[2] * f[0] - rr[0] * f[2], rr[0] * f[1] - rr[1] * f[0]};
    sb_add_world_wrench(s->model, s->work, s->cfg.disk[cm->disk].section, s->cfg.disk[cm->disk].s, f, mo, s->tau);
    cusp_arm_accumulate_wrench(s, cm->pos, f);
    double nf[3] = {-f[0], -f[1], -f[2]}, zero[3] = {0, 0, 0};
    if (cm->other_inst >= 0) {
      soft_t *o = &r->soft[cm->other_inst];
      const sb_pose *go = &o->disk_pose[cm->other_disk];
      double ro[3] = {cm->pos[0] - go->p[0], cm->pos[1] - go->p[1], cm->pos[2] - go->p[2]};
      double mo2[3] = {ro[1] * nf[2] - ro[2] * nf[1], ro[2] * nf[0] - ro[0] * nf[2], ro[0] * nf[1] - ro[1] * nf[0]};
      sb_add_world_wrench(o->model, o->work, o->cfg.disk[cm->other_disk].section, o->cfg.disk[cm->other_disk].s,
                          nf, mo2, o->tau);
      cusp_arm_accumulate_wrench(o, cm->pos, nf);
    } else if (body_is_rigid(m, body)) {
      mj_applyFT(m, d, nf, zero, cm->pos, body, r->qfrc_cusp);
    }
    for (int a = 0; a < 3; a++) cm->impulse[a] = f[a] * m->opt.timestep;
    cm->fn = (f[0] * cm->normal[0] + f[1] * cm->normal[1] + f[2] * cm->normal[2]) * m->opt.timestep;
    cm->kept = 1;
  }
}


/* The arms' generalized inputs: the actuators' ctrl plus the scene's
 * schedules and feedback laws (config.h), as of this step's start. */
#include "pipeline.h"

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

void cusp_stage_controls(cusp_runtime *r, soft_t *s, const cusp_arm_state *st) {
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

/* MuJoCo applies a native arm's ctrl through its tendon actuators; the
 * scene's schedule and feedback go through the same moment arms. */
void cusp_native_controls(cusp_runtime *r, soft_t *s) {
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


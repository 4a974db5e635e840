/* The step pipeline of the plugin (DESIGN §5; stages in pipeline.h).
 * compute (MuJoCo's passive stage: positions, collisions and the factored
 * mass matrix are ready): controls, disk placement, narrow phase, the
 * contact models, the commit into scratch; advance (after MuJoCo's
 * integration) commits that into d->plugin_state and moves the disk
 * bodies. Nothing here is state: compute reads d->plugin_state and never
 * writes it, so a paused viewer's repeated mj_forward changes nothing. */
#include <stdlib.h>
#include <unistd.h>

#include "contact_model.h"
#include "instances.h"
#include "native.h"
#include "sb_util.h"

cusp_runtime *cusp_runtime_of(const mjModel *m, const mjData *d) {
  int lead = cusp_plugin_instance(m, 0);
  if (lead < 0 || !d || lead >= d->nplugin) return NULL;
  return (cusp_runtime *)d->plugin_data[lead];
}

double *cusp_state_of(const mjModel *m, const mjData *d) {
  int lead = cusp_plugin_instance(m, 0);
  if (lead < 0 || !d || m->plugin_statenum[lead] < CUSP_STATE_HEADER) return NULL;
  return d->plugin_state + m->plugin_stateadr[lead];
}

/* The soft arms' next state into the scratch (advance commits it), the
 * rigid bodies' and mounts' share into qfrc_passive. */
static void stage_commit(cusp_runtime *r, int failed, double h) {
  const mjModel *m = r->m;
  int nv = m->nv;
  char err[256];
  for (int i = 0; i < r->ninst && !failed; i++) {
    soft_t *s = &r->soft[i];
    if (s->cfg.contact == CUSP_CONTACT_NATIVE) continue;
    const double *p = s->has_impulse ? s->impulse : NULL;
    if (p && !none_bad(p, s->model->n)) {
      p = NULL;
      r->pending_count[CUSP_COUNT_NAN_EVENTS]++;
    }
    if (sb_step_commit(s->model, s->state, s->work, p, err, sizeof err)) {
      sb_errorf(r->message, sizeof r->message, "instance \"%s\": %s", s->cfg.name, err);
      r->pending_count[CUSP_COUNT_NAN_EVENTS]++;
    } else {
      cusp_mount_contact_load(r, s, h);
    }
  }
  if (r->has_rigid_impulse) {
    const double *p = r->rigid_impulse;
    if (none_bad(p, nv))
      for (int j = 0; j < nv; j++) r->qfrc_cusp[j] += p[j] / h;
    else
      r->pending_count[CUSP_COUNT_NAN_EVENTS]++;
  }
  int rigid_applied = r->has_rigid_impulse && none_bad(r->rigid_impulse, nv);
  if (!none_bad(r->qfrc_cusp, nv)) {
    memset(r->qfrc_cusp, 0, sizeof(double) * nv);
    r->pending_count[CUSP_COUNT_NAN_EVENTS]++;
    rigid_applied = 0;
  }
  for (int j = 0; j < nv; j++) r->d->qfrc_passive[j] += r->qfrc_cusp[j];
  /* the touched bodies' own contacts cusp's solve pushed are not MuJoCo's to push again */
  r->yielded = rigid_applied;
  if (rigid_applied) cusp_yield_solved_contacts(r);
  r->forces_pending = 1;
}

/* A disk deeper inside a geom (or another disk) than its own radius has its
 * centre in there: the contact's normal no longer points out and no
 * impulse within a step brings it back (an arm mounted inside a solid,
 * or driven into one). Says so in r->message naming the deepest such
 * contact, and through mju_warning when it first happens, so that every
 * host (C, Python, the viewer) hears it on the first step. */
static void stage_check_depth(cusp_runtime *r, int nsoft_contacts) {
  const contact_meta *deepest = NULL;
  double worst = 1; /* depth / disk radius */
  for (int c = 0; c < nsoft_contacts; c++) {
    const contact_meta *cm = &r->meta[c];
    if (cm->inst < 0) continue;
    double ratio = -cm->gap / r->soft[cm->inst].cfg.disk_radius;
    if (ratio > worst) {
      worst = ratio;
      deepest = cm;
    }
  }
  if (!deepest) {
    r->deep_warned = 0;
    return;
  }
  const cusp_instance_config *c = &r->soft[deepest->inst].cfg;
  char other[CUSP_NAME + 64];
  if (deepest->other_inst >= 0) {
    snprintf(other, sizeof other, "disk %d of instance \"%s\"", deepest->other_disk,
             r->soft[deepest->other_inst].cfg.name);
  } else {
    const char *g = mj_id2name(r->m, mjOBJ_GEOM, deepest->other_geom);
    if (g) snprintf(other, sizeof other, "geom \"%s\"", g);
    else snprintf(other, sizeof other, "geom %d (unnamed)", deepest->other_geom);
  }
  sb_errorf(r->message, sizeof r->message,
            "instance \"%s\": disk %d (body \"%s/disk%d\") is %.3g m inside %s at t = %g s, deeper than "
            "its radius %g m: %s, and contact cannot push it out",
            c->name, deepest->disk, c->name, deepest->disk, -deepest->gap, other, r->d->time, c->disk_radius,
            deepest->other_inst >= 0 ? "the disks pass through each other" : "the arm is inside a solid (is its mount?)");
  if (!r->deep_warned) mju_warning("cusp.softbody: %s", r->message);
  r->deep_warned = 1;
}

/* Contacts found beyond the workspace's capacity are not solved: a scene
 * that touches more than its arms' contact_capacity (and the touched
 * bodies' allowance) foresee must hear it, not lose contacts in silence.
 * MuJoCo's own convention for a full contact buffer: it keeps what fits,
 * counts mjWARN_CONTACTFULL in d->warning (lastinfo: the contacts found)
 * and warns once. The same here, with cusp's own text, which names the key
 * and the counts, in r->message (the report) and through mju_warning when
 * it first happens. */
static void stage_check_capacity(cusp_runtime *r) {
  if (!r->ndropped) {
    r->dropped_warned = 0;
    return;
  }
  char keys[384] = "";
  size_t len = 0;
  for (int i = 0; i < r->ninst && len < sizeof keys; i++) {
    const cusp_instance_config *c = &r->soft[i].cfg;
    if (c->contact == CUSP_CONTACT_NATIVE) continue;
    int w = snprintf(keys + len, sizeof keys - len, "%s\"%s\" %d (at most %d)", len ? ", " : "", c->name,
                     c->contacts, CUSP_CONTACTS_PER_DISK * c->ndisk);
    if (w < 0) break;
    len += (size_t)w;
  }
  char what[768];
  snprintf(what, sizeof what,
           "contact_capacity exceeded at t = %g s: %d contacts found, the workspaces hold %d; %d dropped, not "
           "solved this step (contact_capacity: %s; plus %d for the touched bodies' own contacts)",
           r->d->time, r->max_contacts + r->ndropped, r->max_contacts, r->ndropped, keys, r->rigid_contacts);
  if (!r->message[0]) sb_errorf(r->message, sizeof r->message, "%s", what); /* an earlier failure says more */
  mjWarningStat *w = &r->d->warning[mjWARN_CONTACTFULL];
  w->lastinfo = r->max_contacts + r->ndropped;
  w->number++;
  if (!r->dropped_warned) mju_warning("cusp.softbody: %s", what);
  r->dropped_warned = 1;
}

/* The touched bodies' own contacts the implicit models solved (r->meta
 * after the soft ones), each with the MuJoCo contact whose rows will carry
 * its force, if any (after stage_commit's yield). A force whose impulse was
 * not applied (non-finite) is 0: it did not act. */
static void write_pair_reports(cusp_runtime *r, int nsoft_contacts) {
  double h = r->m->opt.timestep;
  r->npair_report = 0;
  for (int c = nsoft_contacts; c < r->nmeta; c++) {
    contact_meta *cm = &r->meta[c];
    if (cm->inst >= 0 || !cm->in_problem) continue;
    cm->carrier = cusp_pair_carrier(r, cm);
    cusp_pair_contact *pc = &r->pair_reports[r->npair_report++];
    pc->geom[0] = cm->own_geom;
    pc->geom[1] = cm->other_geom;
    memcpy(pc->pos, cm->pos, sizeof pc->pos);
    memcpy(pc->normal, cm->normal, sizeof pc->normal);
    pc->gap = cm->gap;
    /* cm->impulse acts on side 0, other_geom (contact_build.c) */
    for (int q = 0; q < 3; q++) pc->force[q] = r->yielded ? cm->impulse[q] / h : 0;
    pc->normal_force = r->yielded ? cm->fn / h : 0;
    pc->mujoco_contact = cm->carrier;
    pc->kept = cm->kept;
  }
}

static void write_reports(cusp_runtime *r, int nsoft_contacts, const sb_contact_info *info) {
  cusp_step_report *rep = &r->rep;
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
  rep->info = *info;
  snprintf(rep->message, sizeof rep->message, "%s", r->message[0] ? r->message : r->note);
  write_pair_reports(r, nsoft_contacts);
}

/* ---------- compute / advance ---------- */

static void report_counters(cusp_runtime *r, const double *count) {
  r->rep.steps = (long)count[CUSP_COUNT_STEPS];
  r->rep.solves = (long)count[CUSP_COUNT_SOLVES];
  r->rep.converged = (long)count[CUSP_COUNT_CONVERGED];
  r->rep.fallbacks = (long)count[CUSP_COUNT_FALLBACKS];
  r->rep.nan_events = (long)count[CUSP_COUNT_NAN_EVENTS];
  r->rep.skipped_advances = (long)count[CUSP_COUNT_SKIPPED_ADVANCES];
}

/* Where the disks go at the arm's next state; 0 when that state or a disk
 * pose is not finite. */
static int stage_next_disks(cusp_runtime *r, soft_t *s) {
  int n = s->model->n;
  if (!none_bad(s->state->q, n) || !none_bad(s->state->v, n)) return 0;
  cusp_arm_place_disks(r, s, s->next_disk_pose, s->next_disk_twist);
  for (int k = 0; k < s->cfg.ndisk; k++)
    if (!all_finite(s->next_disk_pose[k].p, 3) || !all_finite(s->next_disk_pose[k].R, 9) ||
        !all_finite(s->next_disk_twist + 6 * k, 6))
      return 0;
  return 1;
}

void cusp_runtime_compute(cusp_runtime *r, const mjModel *m, mjData *d) {
  double *block = cusp_state_of(m, d);
  if (!block || block[0] != CUSP_STATE_TAG) return;
  r->m = m;
  r->d = d;
  double h = m->opt.timestep;
  int nv = m->nv;
  double t_start = now_us(), t_dyn = 0, t_col = 0, t_asm = 0, t_mark = t_start;
  r->nmeta = 0;
  r->has_rigid_impulse = 0;
  r->message[0] = r->note[0] = 0;
  memcpy(r->pending_count, cusp_state_counters(block), sizeof r->pending_count);
  memset(r->qfrc_cusp, 0, sizeof(double) * (nv ? nv : 1));
  memset(r->touched, 0, m->nbody);
  if (r->P) sb_contact_warm_load(r->P, cusp_state_warm(block, r->ninst));

  /* the state, controls, disk placement and applied loads of every arm */
  for (int i = 0; i < r->ninst; i++) {
    soft_t *s = &r->soft[i];
    cusp_arm_state st = cusp_state_arm(block, i);
    cusp_live_load(&s->cfg, st.live);
    memset(s->tau, 0, sizeof(double) * s->model->n);
    memset(s->penalty_wrench, 0, sizeof s->penalty_wrench);
    s->has_impulse = 0;
    s->mount_coupled = s->mount_lcp = 0;
    cusp_stage_controls(r, s, &st);
    if (s->cfg.contact == CUSP_CONTACT_NATIVE) { /* MuJoCo steps it: inputs only */
      cusp_native_controls(r, s);
      continue;
    }
    memcpy(s->state->q, st.q, sizeof(double) * s->model->n);
    memcpy(s->state->v, st.v, sizeof(double) * s->model->n);
    if (s->moving_base) cusp_mount_motion(r, s);
    if (s->mocap_mount) cusp_mount_mocap_motion(r, s, &st, m->opt.timestep);
    cusp_ends_mocap_motion(r, s, &st, m->opt.timestep);
    /* the last advance left the work's kinematics at the state it committed:
     * reuse them when this state is exactly that and the mount has not moved */
    sb_pose base;
    pose_from_body(d, s->cfg.base_body_id, &base);
    if (!s->disks_placed || s->moving_base || memcmp(&base, &s->placed_base, sizeof base) ||
        memcmp(s->placed_q, st.q, sizeof(double) * s->model->n) ||
        memcmp(s->placed_v, st.v, sizeof(double) * s->model->n))
      cusp_arm_place_disks(r, s, s->disk_pose, s->disk_twist);
    cusp_arm_write_geoms(r, s, s->disk_pose);
    cusp_arm_applied_loads(r, s, &st);
  }
  t_dyn += now_us() - t_mark;
  t_mark = now_us();
  cusp_stage_narrow_phase(r);
  int nsoft_contacts = r->nmeta;
  stage_check_depth(r, nsoft_contacts);
  t_col += now_us() - t_mark;
  t_mark = now_us();
  for (const cusp_contact_model *cm = cusp_contact_models; cm->name; cm++)
    if (cm->forces) cm->forces(r);
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
  if (!failed) cusp_stage_mount_coupling(r, h);
  t_dyn += now_us() - t_mark;

  /* the implicit models solve with the prepared soft step */
  sb_contact_info info;
  memset(&info, 0, sizeof info);
  info.lcp.lemke_form = -1; /* no Lemke ran unless a model's solve says so */
  int converged = 1;
  r->lcp_ran = 0;
  for (const cusp_contact_model *cm = cusp_contact_models; cm->name && !failed; cm++) {
    if (!cm->impulses) continue;
    double t0 = now_us(), touched_us = 0;
    int ran = cm->impulses(r, h, &info, &converged, &touched_us);
    r->lcp_ran |= ran; /* a coupled problem ran: its warm start is saved, its solve counted */
    t_col += touched_us;
    if (ran) t_asm += now_us() - t0 - touched_us - info.time_us;
  }
  stage_check_capacity(r); /* the narrow phase's and the touched bodies' contacts */
  double t_commit = now_us();

  stage_commit(r, failed, h);
  /* where the disks go at the next state (advance moves the mocap bodies;
   * an arm coupled to its mount is finished there, and placed then) */
  for (int i = 0; i < r->ninst; i++) {
    soft_t *s = &r->soft[i];
    if (s->cfg.contact == CUSP_CONTACT_NATIVE) continue;
    if (!failed && (s->mount_coupled || stage_next_disks(r, s))) continue;
    /* the state stays, and so do the disks: nothing non-finite or diverged reaches
     * d->plugin_state or the mocap bodies */
    if (!failed) {
      r->pending_count[CUSP_COUNT_NAN_EVENTS]++;
      sb_errorf(r->message, sizeof r->message,
                "instance \"%s\": the step left a non-finite or diverged state (an entry beyond MuJoCo's "
                "mjMAXVAL, 1e10); kept the last one",
                s->cfg.name);
    }
    cusp_arm_state st = cusp_state_arm(block, i);
    memcpy(s->state->q, st.q, sizeof(double) * s->model->n);
    memcpy(s->state->v, st.v, sizeof(double) * s->model->n);
    memcpy(s->next_disk_pose, s->disk_pose, sizeof(sb_pose) * s->cfg.ndisk);
    memcpy(s->next_disk_twist, s->disk_twist, sizeof(double) * 6 * s->cfg.ndisk);
  }
  write_reports(r, nsoft_contacts, &info);

  double *count = r->pending_count;
  if (r->lcp_ran) {
    count[CUSP_COUNT_SOLVES]++;
    count[CUSP_COUNT_CONVERGED] += converged;
    count[CUSP_COUNT_FALLBACKS] += info.lcp.attempts > 1;
  }
  r->pending = 1;
  r->pending_time = d->time;

  cusp_step_report *rep = &r->rep;
  rep->time = d->time;
  report_counters(r, cusp_state_counters(block));
  double t_end = now_us();
  rep->total_us = t_end - t_start;
  rep->dynamics_us = t_dyn + (t_end - t_commit);
  rep->collision_us = t_col;
  rep->assembly_us = t_asm + info.assembly_us;
  rep->conditioning_us = info.conditioning_us;
  rep->solve_us = info.lcp.time_us;
  rep->solved = converged && !failed;
  rep->fallback = r->lcp_ran && info.lcp.attempts > 1;
}

/* The solve's warm start into the state, zeroing what a longer one left
 * behind: a state is then the same bits however it was reached. */
static void save_warm_start(cusp_runtime *r, double *warm) {
  int old = warm[0] > 0 ? 2 + (int)warm[0] * (1 + (int)warm[1] + 2) : 2;
  int now = sb_contact_warm_save(r->P, warm);
  if (old > now) memset(warm + now, 0, sizeof(double) * (old - now));
}

/* Commits what compute prepared when it was prepared for this state: the
 * step that just integrated started at pending_time (advance also runs
 * after steps without a compute: passive forces disabled, skipped stages). */
void cusp_runtime_advance(cusp_runtime *r, const mjModel *m, mjData *d) {
  double *block = cusp_state_of(m, d);
  if (!block || block[0] != CUSP_STATE_TAG) return;
  r->m = m;
  r->d = d;
  double *count = cusp_state_counters(block);
  if (!r->pending || d->time != r->pending_time + m->opt.timestep) {
    count[CUSP_COUNT_SKIPPED_ADVANCES]++;
    r->pending = 0;
    for (int i = 0; i < r->ninst; i++) r->soft[i].mount_coupled = 0;
    report_counters(r, count);
    return;
  }
  cusp_publish_contact_forces(r); /* when the sensor stage did not run (sensors disabled or skipped) */
  r->pending = 0;
  r->pending_count[CUSP_COUNT_STEPS]++;
  memcpy(count, r->pending_count, sizeof r->pending_count);
  for (int i = 0; i < r->ninst; i++) {
    soft_t *s = &r->soft[i];
    cusp_arm_state st = cusp_state_arm(block, i);
    if (s->cfg.nfeedback > 0) {
      memcpy(st.feedback_start, s->feedback_start, sizeof(double) * s->cfg.nfeedback);
      *st.have_feedback_start = 1;
    }
    if (s->cfg.contact == CUSP_CONTACT_NATIVE) continue;
    if (s->mount_coupled && (cusp_mount_finish(r, s, m->opt.timestep) || !stage_next_disks(r, s))) {
      /* the state stays, and so do the disks */
      count[CUSP_COUNT_NAN_EVENTS]++;
      memcpy(s->state->q, st.q, sizeof(double) * s->model->n);
      memcpy(s->state->v, st.v, sizeof(double) * s->model->n);
      memcpy(s->next_disk_pose, s->disk_pose, sizeof(sb_pose) * s->cfg.ndisk);
      memcpy(s->next_disk_twist, s->disk_twist, sizeof(double) * 6 * s->cfg.ndisk);
    }
    s->mount_coupled = 0;
    memcpy(st.q, s->state->q, sizeof(double) * s->model->n);
    memcpy(st.v, s->state->v, sizeof(double) * s->model->n);
    if (s->moving_base) {
      memcpy(st.base_twist, s->base_twist, sizeof s->base_twist);
      *st.have_base_twist = 1;
    }
    if (s->mocap_mount) cusp_mount_mocap_commit(r, s, &st);
    cusp_ends_mocap_commit(r, s, &st);
    /* the disks where the soft state now is: MuJoCo draws and ray-casts
     * them. The bodies' and geoms' frames too, not only the mocap targets:
     * a viewer that steps once per frame reads xpos before the next
     * kinematics (its mouse spring would have zero length otherwise) */
    sb_pose *pose = s->disk_pose;
    double *twist = s->disk_twist;
    s->disk_pose = s->next_disk_pose;
    s->disk_twist = s->next_disk_twist;
    s->next_disk_pose = pose;
    s->next_disk_twist = twist;
    for (int k = 0; k < s->cfg.ndisk; k++) {
      const sb_pose *g = &s->disk_pose[k];
      int mocap = s->cfg.disk[k].mocap_id;
      if (mocap < 0) continue;
      for (int a = 0; a < 3; a++) d->mocap_pos[3 * mocap + a] = g->p[a];
      mju_mat2Quat(d->mocap_quat + 4 * mocap, g->R);
      int body = s->cfg.disk[k].body_id;
      memcpy(d->xpos + 3 * body, g->p, sizeof g->p);
      memcpy(d->xmat + 9 * body, g->R, sizeof g->R);
      memcpy(d->xquat + 4 * body, d->mocap_quat + 4 * mocap, 4 * sizeof(double));
      mju_mulMatVec3(d->xipos + 3 * body, g->R, m->body_ipos + 3 * body);
      for (int a = 0; a < 3; a++) d->xipos[3 * body + a] += g->p[a];
    }
    cusp_arm_write_geoms(r, s, s->disk_pose);
  }
  if (r->lcp_ran) save_warm_start(r, cusp_state_warm(block, r->ninst));
  report_counters(r, count);
}

void cusp_runtime_publish(cusp_runtime *r, const mjModel *m, mjData *d) {
  if (!r->pending || d->time != r->pending_time) return; /* no compute of this state before it */
  r->m = m;
  r->d = d;
  cusp_publish_contact_forces(r);
}

void cusp_runtime_reset(cusp_runtime *r, double *state) {
  for (int i = 0; i < r->ninst; i++) r->soft[i].disks_placed = r->soft[i].mount_coupled = 0;
  r->pending = 0;
  r->yielded = r->forces_pending = 0;
  r->lcp_ran = 0;
  r->nreport = r->npair_report = 0;
  r->deep_warned = 0;
  r->dropped_warned = 0;
  r->ndropped = 0;
  r->message[0] = r->note[0] = 0;
  r->mount_augmented = 0;
  memset(&r->rep, 0, sizeof r->rep);
  if (!state) return;
  state[0] = CUSP_STATE_TAG;
  memset(cusp_state_counters(state), 0, CUSP_NCOUNT * sizeof(double));
  for (int i = 0; i < r->ninst; i++) {
    cusp_arm_state a = cusp_state_arm(state, i);
    memset(a.q, 0, CUSP_STATE_SLOT * sizeof(double));
    memcpy(a.q, r->soft[i].cfg.initial, r->soft[i].cfg.ncoord * sizeof(double));
    memcpy(a.live, r->soft[i].live0, sizeof r->soft[i].live0);
  }
  memset(cusp_state_warm(state, r->ninst), 0, sizeof(double) * r->warm_size);
}

void cusp_runtime_copy(cusp_runtime *dst, const cusp_runtime *src) {
  if (dst->ninst != src->ninst || dst->max_contacts != src->max_contacts) return; /* another model */
  dst->rep = src->rep;
  dst->deep_warned = src->deep_warned;
  dst->dropped_warned = src->dropped_warned;
  dst->nreport = src->nreport;
  memcpy(dst->reports, src->reports, sizeof(cusp_contact_report) * src->nreport);
  dst->npair_report = src->npair_report;
  memcpy(dst->pair_reports, src->pair_reports, sizeof(cusp_pair_contact) * src->npair_report);
  for (int i = 0; i < dst->ninst; i++) dst->soft[i].disks_placed = 0;
  /* d->M came with mj_copyData: what compute added to it too */
  dst->mount_augmented = src->mount_augmented;
  if (src->mount_augmented) {
    memcpy(dst->mount_M_pre, src->mount_M_pre, sizeof(double) * src->m->nC);
    memcpy(dst->mount_M_post, src->mount_M_post, sizeof(double) * src->m->nC);
  }
  dst->pending = 0;
  dst->lcp_ran = 0;
  dst->yielded = dst->forces_pending = 0;
}

/* ---------- create / free ---------- */

void cusp_runtime_free(cusp_runtime *r) {
  if (!r) return;
  for (int i = 0; i < r->ninst && r->soft; i++) {
    soft_t *s = &r->soft[i];
    sb_work_free(s->work);
    sb_state_free(s->state);
    sb_model_free(s->model);
    cusp_mount_free(s);
    void *ptr[] = {s->tau, s->disk_pose, s->disk_twist, s->disk_motion, s->next_disk_pose, s->next_disk_twist,
                   s->placed_q, s->placed_v, s->native_q, s->native_v, s->impulse};
    for (size_t k = 0; k < sizeof ptr / sizeof ptr[0]; k++) free(ptr[k]);
  }
  free(r->soft);
  sb_contact_free(r->P);
  sb_sap_work_free(r->sap);
  sb_ncp_work_free(r->ncp);
  void *ptr[] = {r->cW, r->cvec, r->cidx, r->meta, r->cbuf, r->reports, r->pair_reports, r->vfree, r->force, r->qfrc_cusp, r->jac, r->jac2,
                 r->sqrt_inv_d, r->rigid_impulse, r->rigid_LD, r->rigid_LDiagInv, r->rigid_M_diag, r->touched, r->held_tree, r->geom_soft,
                 r->disk_partners, r->ndisk_partners,
                 r->mount_jac, r->mount_M_pre, r->mount_M_post, r->end_jac};
  for (size_t k = 0; k < sizeof ptr / sizeof ptr[0]; k++) free(ptr[k]);
  free(r);
}

/* The touched bodies' allowance: CUSP_CONTACTS_PER_DISK per rigid
 * (movable) collidable geom, at most CUSP_CONTACTS_EXTRA; with the arms'
 * contact_capacity (at most CUSP_CONTACTS_PER_DISK per disk) never more than
 * the plugin state's warm start keeps (cusp_max_contacts). */
static int rigid_contacts(const mjModel *m) {
  int nrigid = 0;
  for (int g = 0; g < m->ngeom; g++)
    nrigid += (m->geom_contype[g] | m->geom_conaffinity[g]) && body_is_rigid(m, m->geom_bodyid[g]);
  long extra = (long)CUSP_CONTACTS_PER_DISK * nrigid;
  return (int)(extra < CUSP_CONTACTS_EXTRA ? extra : CUSP_CONTACTS_EXTRA);
}

static size_t contact_workspace_bytes(int max_contacts, int max_kept, int ndof, int directions);

/* The contacts the lcp model's LCP holds after stage 1: every contact while
 * the workspaces sized so stay within CUSP_CONTACT_WORKSPACE_FULL (every
 * scene shipped: each live switch runs as before). Beyond it, when every
 * soft arm loads with rank selection (qr in its conditioning), what stage 1
 * keeps: an independent set of normals, at most the problem's dofs
 * (sb_contact_create_kept gives up what stage 1 adds beyond it when that
 * does not fit); a live switch that turns qr off is then refused (api.c). */
static int kept_contacts(const cusp_runtime *r, int ndof) {
  if (contact_workspace_bytes(r->max_contacts, r->max_contacts, ndof, r->max_directions) <= CUSP_CONTACT_WORKSPACE_FULL)
    return r->max_contacts;
  for (int i = 0; i < r->ninst; i++)
    if (r->soft[i].cfg.contact != CUSP_CONTACT_NATIVE && !(r->soft[i].cfg.conditioning & CUSP_COND_QR))
      return r->max_contacts;
  return ndof < r->max_contacts ? ndof : r->max_contacts;
}

/* The bytes of the contact workspaces create makes: the problem sized for
 * the largest loaded pyramid (a live switch above it is refused, api.c)
 * and the kept contacts, and the sap and ncp models' 3m x 3m matrices
 * (their Newton matrices and cW), which solve every contact. */
static size_t contact_workspace_bytes(int max_contacts, int max_kept, int ndof, int directions) {
  size_t mc = max_contacts;
  return sb_contact_workspace_bytes_kept(max_contacts, max_kept, ndof, directions) + 3 * 9 * mc * mc * sizeof(double);
}

/* Half the physical memory, at least CUSP_CONTACT_WORKSPACE_MIN: what a
 * model's contact workspaces may reserve (calloc touches only what the
 * step uses, but a larger reservation could never be used in full). */
static size_t contact_workspace_bound(void) {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  size_t half = pages > 0 && page > 0 ? (size_t)pages * (size_t)page / 2 : 0;
  return half > CUSP_CONTACT_WORKSPACE_MIN ? half : CUSP_CONTACT_WORKSPACE_MIN;
}

/* A model whose contact workspaces would exceed contact_workspace_bound
 * is refused with the keys that size them, per soft instance. */
static int contact_workspace_refused(const cusp_runtime *r, int ndisk, int ndof, char *error, int error_size) {
  size_t need = contact_workspace_bytes(r->max_contacts, r->max_kept, ndof, r->max_directions),
         bound = contact_workspace_bound();
  if (need <= bound) return 0;
  char who[512] = "";
  size_t len = 0;
  for (int i = 0; i < r->ninst && len < sizeof who; i++) {
    const cusp_instance_config *c = &r->soft[i].cfg;
    if (c->contact == CUSP_CONTACT_NATIVE) continue;
    int w = snprintf(who + len, sizeof who - len, "%s\"%s\" (contact_capacity=%d pyramid=%d: %d disks)",
                     len ? ", " : "", c->name, c->contacts, c->pyramid, c->ndisk);
    if (w < 0) break;
    len += (size_t)w;
  }
  sb_errorf(error, error_size,
            "cusp: the contact workspaces would take %.2f GiB, above the bound of %.2f GiB (half the physical "
            "memory, at least 1 GiB): %d contacts (the arms' contact_capacity, for %d soft disks, plus %d for "
            "the rigid bodies they touch), %d of them in the LCP after rank selection, with %d friction "
            "directions, sized by the keys contact_capacity and pyramid of %s; lower them, or give some arms "
            "contact=native",
            need / 1073741824.0, bound / 1073741824.0, r->max_contacts, ndisk, r->rigid_contacts, r->max_kept,
            r->max_directions, who);
  return 1;
}

cusp_runtime *cusp_runtime_create(const mjModel *m, mjData *d, char *error, int error_size) {
  int ninst = cusp_instance_count(m);
  cusp_runtime *r = calloc(1, sizeof *r);
  if (!r) goto oom;
  r->m = m;
  r->d = d;
  int nv = m->nv, ndisk = 0, ndof = nv;
  r->soft = calloc(ninst ? ninst : 1, sizeof *r->soft);
  if (!r->soft) goto oom;
  for (int i = 0; i < ninst; i++) {
    soft_t *s = &r->soft[i];
    r->ninst = i + 1;
    if (cusp_instance_read(m, i, &s->cfg, error, error_size)) {
      cusp_runtime_free(r);
      return NULL;
    }
    cusp_live_store(&s->cfg, s->live0);
    sb_segment_params seg[CUSP_MAX_SECTIONS];
    sb_chain_params cp;
    cusp_config_chain(&s->cfg, seg, &cp);
    for (int k = 0; k < 3; k++) cp.gravity[k] = m->opt.gravity[k];
    /* the base pose comes from the mount at every compute (init runs before
     * mj_resetData: d holds no positions yet) */
    char err[256];
    s->model = sb_model_create(&cp, err, sizeof err);
    if (!s->model) {
      sb_errorf(error, error_size, "instance \"%s\": %s", s->cfg.name, err);
      cusp_runtime_free(r);
      return NULL;
    }
    int n = s->model->n, nd = s->cfg.ndisk;
    s->state = sb_state_create(s->model);
    s->work = sb_work_create(s->model);
    s->tau = calloc(n, sizeof(double));
    s->placed_q = calloc(n, sizeof(double));
    s->placed_v = calloc(n, sizeof(double));
    s->native_q = calloc(n, sizeof(double));
    s->native_v = calloc(n, sizeof(double));
    s->impulse = calloc(n, sizeof(double));
    s->disk_pose = calloc(nd ? nd : 1, sizeof(sb_pose));
    s->next_disk_pose = calloc(nd ? nd : 1, sizeof(sb_pose));
    s->disk_twist = calloc(6 * (size_t)(nd ? nd : 1), sizeof(double));
    s->next_disk_twist = calloc(6 * (size_t)(nd ? nd : 1), sizeof(double));
    s->disk_motion = calloc(4 * (size_t)(nd ? nd : 1), sizeof(double));
    if (!s->disk_motion) goto oom;
    if (!s->state || !s->work || !s->tau || !s->placed_q || !s->placed_v || !s->native_q || !s->native_v || !s->impulse ||
        !s->disk_pose || !s->next_disk_pose || !s->disk_twist || !s->next_disk_twist)
      goto oom;
    if (n > CUSP_MAX_COORDS) {
      sb_errorf(error, error_size, "instance \"%s\": %d coordinates, at most %d", s->cfg.name, n, CUSP_MAX_COORDS);
      cusp_runtime_free(r);
      return NULL;
    }
    s->moving_base = body_is_rigid(m, s->cfg.base_body_id);
    s->mocap_mount = s->cfg.base_body_id > 0 && m->body_mocapid[s->cfg.base_body_id] >= 0;
    if (s->moving_base && cusp_mount_create(m, s)) goto oom;
    if (s->moving_base && s->cfg.contact != CUSP_CONTACT_NATIVE && cusp_mount_check(m, s)) {
      sb_errorf(error, error_size, "instance \"%s\": mounted on body \"%s\", which moves, whose mass matrix "
                "entries MuJoCo stores reduced (a \"simple\" body): load the scene with cusp_load/cusp.load, or give "
                "that body simple=\"false\"", s->cfg.name, mj_id2name(m, mjOBJ_BODY, s->cfg.base_body_id));
      cusp_runtime_free(r);
      return NULL;
    }
    if (cusp_end_create(m, s, error, error_size)) {
      cusp_runtime_free(r);
      return NULL;
    }
    if (s->moving_base && s->cfg.contact != CUSP_CONTACT_NATIVE && m->nflex > 0) {
      sb_errorf(error, error_size, "instance \"%s\": mounted on body \"%s\", which moves, in a model with flexes: "
                "MuJoCo's implicit flex metric would not see the arm's inertia; mount the arm on a fixed body or "
                "remove the flexes", s->cfg.name, mj_id2name(m, mjOBJ_BODY, s->cfg.base_body_id));
      cusp_runtime_free(r);
      return NULL;
    }
    if (s->cfg.contact != CUSP_CONTACT_NATIVE) { /* a native arm's contacts are MuJoCo's */
      ndisk += nd;
      ndof += n;
    }
  }
  r->rigid_contacts = rigid_contacts(m);
  r->max_contacts = r->rigid_contacts;
  for (int i = 0; i < ninst; i++)
    if (r->soft[i].cfg.contact != CUSP_CONTACT_NATIVE) r->max_contacts += r->soft[i].cfg.contacts;
  r->warm_size = sb_contact_warm_capacity(cusp_max_contacts(ndisk));
  r->max_directions = 3;
  for (int i = 0; i < ninst; i++)
    if (r->soft[i].cfg.contact != CUSP_CONTACT_NATIVE && r->soft[i].cfg.pyramid > r->max_directions)
      r->max_directions = r->soft[i].cfg.pyramid;
  r->max_kept = kept_contacts(r, ndof);
  int lead = cusp_plugin_instance(m, 0);
  if (ninst > 0 && m->plugin_statenum[lead] != cusp_state_size(ninst, ndisk)) {
    sb_errorf(error, error_size, "cusp: the model's plugin state holds %d numbers, its instances need %d: "
              "the model was compiled for other instances or disks; expand the scene again",
              m->plugin_statenum[lead], cusp_state_size(ninst, ndisk));
    cusp_runtime_free(r);
    return NULL;
  }
  char err[256];
  if (ndisk > 0 && contact_workspace_refused(r, ndisk, ndof, error, error_size)) {
    cusp_runtime_free(r);
    return NULL;
  }
  if (ndisk > 0) {
    r->P = sb_contact_create_kept(r->max_contacts, r->max_kept, ninst + 1, ndof, r->max_directions, err, sizeof err);
    int end_rows = 0;
    for (int i = 0; i < ninst; i++)
      for (int k = 0; k < r->soft[i].nheld; k++) end_rows += r->soft[i].held[k].rows;
    if (r->P && end_rows > 0 && sb_contact_reserve_bilateral(r->P, end_rows, err, sizeof err)) {
      sb_contact_free(r->P);
      r->P = NULL;
    }
    if (!r->P) {
      sb_errorf(error, error_size, "cusp: %s", err);
      cusp_runtime_free(r);
      return NULL;
    }
    /* the sap and ncp models' workspaces: any arm may switch to them while running */
    size_t mc = r->max_contacts;
    r->sap = sb_sap_work_create(r->max_contacts);
    r->ncp = sb_ncp_work_create(r->max_contacts);
    r->cW = calloc(9 * mc * mc, sizeof(double));
    r->cvec = calloc(CUSP_CVEC * 3 * mc, sizeof(double));
    r->cidx = calloc(mc, sizeof(int));
    if (!r->sap || !r->ncp || !r->cW || !r->cvec || !r->cidx) goto oom;
  }
  size_t nvv = nv ? nv : 1;
  r->meta = calloc(r->max_contacts, sizeof *r->meta);
  r->reports = calloc(r->max_contacts, sizeof *r->reports);
  r->pair_reports = calloc(r->max_contacts, sizeof *r->pair_reports);
  r->cbuf = calloc(mjMAXCONPAIR, sizeof *r->cbuf);
  r->vfree = calloc(nvv, sizeof(double));
  r->force = calloc(nvv, sizeof(double));
  r->qfrc_cusp = calloc(nvv, sizeof(double));
  r->jac = calloc(3 * nvv, sizeof(double));
  r->jac2 = calloc(3 * nvv, sizeof(double));
  r->sqrt_inv_d = calloc(nvv, sizeof(double));
  r->rigid_impulse = calloc(nvv, sizeof(double));
  r->rigid_LD = calloc(m->nC ? m->nC : 1, sizeof(double));
  r->rigid_LDiagInv = calloc(nvv, sizeof(double));
  r->rigid_M_diag = calloc(nvv, sizeof(double));
  r->touched = calloc(m->nbody, 1);
  r->held_tree = calloc(m->ntree ? m->ntree : 1, 1);
  r->mount_jac = calloc(12 * nvv, sizeof(double));
  r->end_jac = calloc(6 * nvv, sizeof(double));
  r->mount_M_pre = calloc(m->nC ? m->nC : 1, sizeof(double));
  r->mount_M_post = calloc(m->nC ? m->nC : 1, sizeof(double));
  r->geom_soft = malloc(sizeof(int) * 2 * (m->ngeom ? m->ngeom : 1));
  r->disk_partners = malloc(sizeof(int) * (size_t)(ninst ? ninst : 1) * (m->ngeom ? m->ngeom : 1));
  r->ndisk_partners = calloc(ninst ? ninst : 1, sizeof(int));
  if (!r->disk_partners || !r->ndisk_partners ||
      !r->meta || !r->reports || !r->pair_reports || !r->cbuf || !r->vfree || !r->force || !r->qfrc_cusp || !r->jac ||
      !r->jac2 || !r->sqrt_inv_d || !r->rigid_impulse || !r->rigid_LD || !r->rigid_LDiagInv || !r->rigid_M_diag || !r->touched || !r->held_tree || !r->geom_soft ||
      !r->mount_jac || !r->mount_M_pre || !r->mount_M_post || !r->end_jac)
    goto oom;
  for (int g = 0; g < 2 * m->ngeom; g++) r->geom_soft[g] = -1;
  for (int i = 0; i < ninst; i++) /* native disks are ordinary MuJoCo geoms */
    for (int k = 0; k < r->soft[i].cfg.ndisk && r->soft[i].cfg.contact != CUSP_CONTACT_NATIVE; k++) {
      r->geom_soft[2 * r->soft[i].cfg.disk[k].geom_id] = i;
      r->geom_soft[2 * r->soft[i].cfg.disk[k].geom_id + 1] = k;
    }
  cusp_disk_partners(r);
  r->rigid_body = -1;
  return r;
oom:
  sb_errorf(error, error_size, "cusp: out of memory building the soft instances");
  cusp_runtime_free(r);
  return NULL;
}

/* ---------- reading ---------- */

int cusp_runtime_ninst(const cusp_runtime *r) { return r->ninst; }

int cusp_runtime_max_directions(const cusp_runtime *r) { return r->P ? r->max_directions : 0; }

int cusp_runtime_contact_capacity(const cusp_runtime *r, int *kept) {
  if (kept) *kept = r->P ? r->max_kept : 0;
  return r->P ? r->max_contacts : 0;
}

const cusp_instance_config *cusp_runtime_config(const cusp_runtime *r, int instance) {
  return instance >= 0 && instance < r->ninst ? &r->soft[instance].cfg : NULL;
}

const cusp_step_report *cusp_runtime_report(const cusp_runtime *r) { return &r->rep; }

int cusp_runtime_contacts(const cusp_runtime *r, const cusp_contact_report **contacts) {
  if (contacts) *contacts = r->reports;
  return r->nreport;
}

int cusp_runtime_pair_contacts(const cusp_runtime *r, const cusp_pair_contact **contacts) {
  if (contacts) *contacts = r->pair_reports;
  return r->npair_report;
}

int cusp_runtime_held_reaction(const cusp_runtime *r, int instance, int k, double reaction[6]) {
  const soft_t *s = &r->soft[instance];
  if (k < 0 || k >= s->nheld) return -1;
  memcpy(reaction, s->held[k].reaction, 6 * sizeof(double));
  return 0;
}

int cusp_runtime_lcp(const cusp_runtime *r, const double **M, const double **q) {
  if (!r->lcp_ran || !r->P) return 0;
  int n;
  sb_contact_lcp(r->P, &n, M, q, NULL, NULL);
  return n;
}

int cusp_runtime_kinematics(cusp_runtime *r, const mjModel *m, const mjData *d, int instance,
                            const sb_model **model, sb_work **work) {
  double *block = cusp_state_of(m, d);
  if (!block || instance < 0 || instance >= r->ninst) return -1;
  soft_t *s = &r->soft[instance];
  cusp_arm_state st = cusp_state_arm(block, instance);
  pose_from_body(d, s->cfg.base_body_id, &s->model->base);
  sb_kinematics(s->model, s->work, st.q, st.v);
  s->disks_placed = 0; /* the work no longer holds the placement's kinematics */
  *model = s->model;
  *work = s->work;
  return 0;
}

int cusp_runtime_native_state(cusp_runtime *r, const mjModel *m, const mjData *d, int instance,
                              const double **q, const double **v) {
  if (instance < 0 || instance >= r->ninst) return -1;
  soft_t *s = &r->soft[instance];
  cusp_native_coords(m, d, &s->cfg, s->native_q, s->native_v);
  if (q) *q = s->native_q;
  if (v) *v = s->native_v;
  return s->model->n;
}

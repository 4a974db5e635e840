/* cusp's contact forces where MuJoCo's own readers look (pipeline.h).
 *
 * The pairs of the touched bodies' contacts that cusp solved have their
 * MuJoCo rows left inactive (cusp_yield_solved_contacts): MuJoCo's solver
 * gives them zero force and cusp's share goes in through qfrc_passive. So
 * that mj_contactForce and <touch> sensors report the force that acted,
 * cusp's forces are written into those rows' d->efc_force after MuJoCo's
 * constraint solver (the plugin's sensor stage, or advance when sensors are
 * disabled), exactly invertible by MuJoCo's decoding of the rows (pyramid
 * edges or elliptic components). qacc and qfrc_constraint are not touched:
 * they were computed before, and cusp's force is in qfrc_passive.
 *
 * Contacts of a soft disk have no d->contact entry (the disks are contype 0,
 * and an entry added after mj_makeConstraint would have no rows); touch
 * sensors on the rigid body they touch get their normal force here, with
 * MuJoCo's own zone test. Readers of them: cusp_contacts / cusp_contact_force. */
#include "pipeline.h"

int cusp_pair_carrier(const cusp_runtime *r, const contact_meta *cm) {
  const mjData *d = r->d;
  int nearest = -1;
  double best = INFINITY;
  for (int j = 0; j < d->ncon; j++) {
    const mjContact *cj = d->contact + j;
    if (!((cj->geom[0] == cm->own_geom && cj->geom[1] == cm->other_geom) ||
          (cj->geom[0] == cm->other_geom && cj->geom[1] == cm->own_geom)))
      continue;
    if (!cusp_contact_yielded(r, j)) continue;
    double dx = cj->pos[0] - cm->pos[0], dy = cj->pos[1] - cm->pos[1], dz = cj->pos[2] - cm->pos[2];
    double dist = dx * dx + dy * dy + dz * dz;
    if (dist < best) {
      best = dist;
      nearest = j;
    }
  }
  return nearest;
}

/* World force (N) that cusp's solved contacts of MuJoCo's contact i's geom
 * pair put on con->geom[1], summed over those whose carrier is i. cusp
 * finds the pair's contacts with a speculative margin, so its points can
 * differ from MuJoCo's; the pair's total force is kept. */
static void pair_force_on_geom1(const cusp_runtime *r, int i, double h, double F[3]) {
  const mjContact *con = r->d->contact + i;
  F[0] = F[1] = F[2] = 0;
  for (int c = 0; c < r->nmeta; c++) {
    const contact_meta *cm = &r->meta[c];
    if (cm->inst >= 0 || !cm->in_problem || cm->carrier != i) continue;
    /* cm->impulse is on side 0, the other geom (contact_build.c) */
    double sign = cm->other_geom == con->geom[1] ? 1 : -1;
    for (int q = 0; q < 3; q++) F[q] += sign * cm->impulse[q] / h;
  }
}

/* The rows of contact con that MuJoCo's mj_contactForce decodes into the
 * contact-frame force f = [normal, tangent 1, tangent 2] (net of adhesion):
 * elliptic rows are the components; pyramid edges p_2k, p_2k+1 with
 * sum p = normal and mu_k (p_2k - p_2k+1) = tangent k. Every reader of the
 * rows after the solver (mj_contactForce, and through it touch sensors,
 * cfrc_ext and the viewer) decodes them by that linear map, so any f is
 * given back exactly: pair k's share s_k of the normal sets the edges
 * (s_k +- u_k) / 2, u_k = tangent k / mu_k.
 *
 * Inside MuJoCo's pyramid (sum |u_k| <= normal) each pair gets |u_k| and an
 * equal part of the rest: all edges >= 0, as MuJoCo's own solver would give.
 * cusp's friction need not be inside it: its pyramid is turned about the
 * normal onto the friction (key align_friction), so a contact sliding
 * diagonally to MuJoCo's tangent axes carries mu fn, beyond MuJoCo's edge
 * (mu fn / sqrt 2 per axis there); and a pair's force gathered from cusp's
 * points onto one of MuJoCo's (pair_force_on_geom1) can exceed any one
 * cone. Then s_k = |u_k| normal / sum |u_k|: one edge of a pair negative,
 * by the least total, (sum |u_k| - normal) / 2. Clipping it instead would
 * report a force that did not act. MuJoCo's solver never sees these rows
 * (they are inactive, and its warm start recomputes efc_force from
 * qacc_warmstart). */
static void encode_rows(const mjModel *m, const mjContact *con, const double f_in[3], double *rows) {
  int dim = con->dim;
  double f[3] = {fmax(f_in[0], 0) + con->adhesion, f_in[1], f_in[2]};
  if (!mj_isPyramidal(m)) {
    for (int k = 0; k < dim; k++) rows[k] = k < 3 ? f[k] : 0;
    return;
  }
  if (dim == 1) {
    rows[0] = f[0];
    return;
  }
  double u[5] = {0}, used = 0;
  for (int k = 0; k < 2 && k < dim - 1; k++) {
    u[k] = con->friction[k] > 0 ? f[k + 1] / con->friction[k] : 0;
    used += fabs(u[k]);
  }
  double spare = used <= f[0] ? (f[0] - used) / (dim - 1) : 0, scale = used <= f[0] ? 1 : f[0] / used;
  for (int k = 0; k < dim - 1; k++) {
    double share = scale * fabs(u[k]) + spare;
    rows[2 * k] = 0.5 * (share + u[k]);
    rows[2 * k + 1] = 0.5 * (share - u[k]);
  }
}

/* Does MuJoCo's touch sensor zone of site `site` count a normal force at
 * point p whose ray (MuJoCo's convention: against the force on the
 * sensor's body) is `ray`? The same test as mj_sensorAcc's. */
static int in_touch_zone(const mjModel *m, const mjData *d, int site, const double p[3], const double ray[3]) {
  double dir[3] = {ray[0], ray[1], ray[2]};
  mju_normalize3(dir);
  return mju_rayGeom(d->site_xpos + 3 * site, d->site_xmat + 9 * site, m->site_size + 3 * site, p, dir,
                     m->site_type[site], NULL) >= 0;
}

/* Is sensor k a touch sensor MuJoCo computed this step (no history: a
 * delayed or sampled one reads its buffer)? */
static int live_touch_sensor(const mjModel *m, int k) {
  return m->sensor_type[k] == mjSENS_TOUCH && m->sensor_history[2 * k] <= 0;
}

/* Adds a normal force fn at p with ray `ray` to the touch sensors of body
 * (clamped by their cutoff as MuJoCo's are). */
static void add_to_touch(const mjModel *m, mjData *d, int body, const double p[3], const double ray[3], double fn) {
  for (int k = 0; k < m->nsensor; k++) {
    if (!live_touch_sensor(m, k)) continue;
    int site = m->sensor_objid[k];
    if (m->site_bodyid[site] != body || !in_touch_zone(m, d, site, p, ray)) continue;
    double *out = d->sensordata + m->sensor_adr[k];
    *out += fn;
    if (m->sensor_cutoff[k] > 0) *out = fmin(*out, m->sensor_cutoff[k]);
  }
}

/* One yielded contact: its rows get cusp's force; the touch sensors of its
 * bodies the difference to what MuJoCo's solver had given them. */
static void write_yielded_contact(cusp_runtime *r, int i, double h) {
  const mjModel *m = r->m;
  mjData *d = r->d;
  const mjContact *con = d->contact + i;
  double F[3], f[3], before[6], after[6];
  pair_force_on_geom1(r, i, h, F);
  for (int q = 0; q < 3; q++) f[q] = con->frame[3 * q] * F[0] + con->frame[3 * q + 1] * F[1] + con->frame[3 * q + 2] * F[2];
  mj_contactForce(m, d, i, before);
  encode_rows(m, con, f, d->efc_force + con->efc_address);
  mj_contactForce(m, d, i, after);
  if (!m->nsensor) return;
  for (int side = 0; side < 2; side++) {
    int body = m->geom_bodyid[con->geom[side]];
    double ray[3];
    for (int q = 0; q < 3; q++) ray[q] = side == 0 ? con->frame[q] : -con->frame[q];
    double delta = (after[0] > 0 ? after[0] : 0) - (before[0] > 0 ? before[0] : 0);
    if (delta != 0) add_to_touch(m, d, body, con->pos, ray, delta);
  }
}

/* A soft disk's contact with a MuJoCo geom, on that geom's body's touch
 * sensors: the force on the body is along -normal (the normal points from
 * it into the disk), so MuJoCo's ray is +normal. */
static void soft_contacts_to_touch(cusp_runtime *r, double h) {
  const mjModel *m = r->m;
  int has_touch = 0;
  for (int k = 0; k < m->nsensor && !has_touch; k++) has_touch = live_touch_sensor(m, k);
  if (!has_touch) return;
  for (int c = 0; c < r->nmeta; c++) {
    const contact_meta *cm = &r->meta[c];
    if (cm->inst < 0 || cm->other_inst >= 0 || cm->other_geom < 0 || cm->fn <= 0) continue;
    add_to_touch(m, r->d, m->geom_bodyid[cm->other_geom], cm->pos, cm->normal, cm->fn / h);
  }
}

/* A pair contact cusp solved whose force no MuJoCo row carries (carrier
 * -1), on the touch sensors of both geoms' bodies: the force on
 * own_geom (MuJoCo's geom[0] of cusp_pair_contact) is along -normal, so its
 * ray is +normal; other_geom's the opposite. */
static void rowless_pair_contacts_to_touch(cusp_runtime *r, double h) {
  const mjModel *m = r->m;
  for (int c = 0; c < r->nmeta; c++) {
    const contact_meta *cm = &r->meta[c];
    if (cm->inst >= 0 || !cm->in_problem || cm->carrier >= 0 || cm->fn <= 0) continue;
    double ray[3] = {-cm->normal[0], -cm->normal[1], -cm->normal[2]};
    add_to_touch(m, r->d, m->geom_bodyid[cm->own_geom], cm->pos, cm->normal, cm->fn / h);
    add_to_touch(m, r->d, m->geom_bodyid[cm->other_geom], cm->pos, ray, cm->fn / h);
  }
}

void cusp_publish_contact_forces(cusp_runtime *r) {
  if (!r->forces_pending) return;
  r->forces_pending = 0;
  const mjModel *m = r->m;
  mjData *d = r->d;
  double h = m->opt.timestep;
  if (r->yielded)
    for (int i = 0; i < d->ncon; i++)
      if (cusp_contact_yielded(r, i)) write_yielded_contact(r, i, h);
  if (m->nsensor && !(m->opt.disableflags & mjDSBL_SENSOR)) {
    soft_contacts_to_touch(r, h);
    if (r->yielded) rowless_pair_contacts_to_touch(r, h);
  }
}

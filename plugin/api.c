/* The public reading and steering functions of cusp.h over a running
 * model: they find the lead's runtime and state block in d. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "instances.h"
#include "native.h"
#include "runtime.h"
#include "sb_util.h"

size_t cusp_struct_size(const char *name) {
  static const struct {
    const char *name;
    size_t size;
  } sizes[] = {{"cusp_step_report", sizeof(cusp_step_report)},
               {"cusp_contact_report", sizeof(cusp_contact_report)},
               {"cusp_pair_contact", sizeof(cusp_pair_contact)},
               {"sb_contact_info", sizeof(sb_contact_info)},
               {"sb_lcp_info", sizeof(sb_lcp_info)}};
  for (size_t k = 0; name && k < sizeof sizes / sizeof sizes[0]; k++)
    if (!strcmp(name, sizes[k].name)) return sizes[k].size;
  return 0;
}

const cusp_step_report *cusp_report(const mjModel *m, const mjData *d) {
  cusp_runtime *r = m && d ? cusp_runtime_of(m, d) : NULL;
  return r ? cusp_runtime_report(r) : NULL;
}

int cusp_contacts(const mjModel *m, const mjData *d, const cusp_contact_report **contacts) {
  cusp_runtime *r = m && d ? cusp_runtime_of(m, d) : NULL;
  if (!r) {
    if (contacts) *contacts = NULL;
    return 0;
  }
  return cusp_runtime_contacts(r, contacts);
}

int cusp_contact_force(const mjModel *m, const mjData *d, int contact, double force[3]) {
  cusp_runtime *r = m && d ? cusp_runtime_of(m, d) : NULL;
  const cusp_contact_report *c = NULL;
  int n = r ? cusp_runtime_contacts(r, &c) : 0;
  if (!force || !c || contact < 0 || contact >= n) return -1;
  for (int q = 0; q < 3; q++) force[q] = c[contact].impulse[q] / m->opt.timestep;
  return 0;
}

int cusp_pair_contacts(const mjModel *m, const mjData *d, const cusp_pair_contact **contacts) {
  cusp_runtime *r = m && d ? cusp_runtime_of(m, d) : NULL;
  if (!r) {
    if (contacts) *contacts = NULL;
    return 0;
  }
  return cusp_runtime_pair_contacts(r, contacts);
}

int cusp_lcp(const mjModel *m, const mjData *d, const double **M, const double **q) {
  cusp_runtime *r = m && d ? cusp_runtime_of(m, d) : NULL;
  if (M) *M = NULL;
  if (q) *q = NULL;
  return r ? cusp_runtime_lcp(r, M, q) : -1;
}

/* The runtime, configuration and state of a valid instance, else NULL. */
static cusp_runtime *arm_of(const mjModel *m, const mjData *d, int instance, const cusp_instance_config **c,
                            cusp_arm_state *st) {
  cusp_runtime *r = m && d ? cusp_runtime_of(m, d) : NULL;
  double *block = r ? cusp_state_of(m, d) : NULL;
  if (!block || instance < 0 || instance >= cusp_runtime_ninst(r)) return NULL;
  if (c) *c = cusp_runtime_config(r, instance);
  if (st) *st = cusp_state_arm(block, instance);
  return r;
}

int cusp_soft_state(const mjModel *m, const mjData *d, int instance, const double **q, const double **v) {
  const cusp_instance_config *c;
  cusp_arm_state st;
  cusp_runtime *r = arm_of(m, d, instance, &c, &st);
  if (!r) return -1;
  if (c->contact == CUSP_CONTACT_NATIVE) return cusp_runtime_native_state(r, m, d, instance, q, v);
  if (q) *q = st.q;
  if (v) *v = st.v;
  return c->ncoord;
}

double cusp_total_length(const mjModel *m, int instance) {
  const double *arc = m ? cusp_instance_arcs(m, instance, NULL) : NULL;
  return arc ? arc[0] : 0;
}

static double length_of(const cusp_instance_config *c) {
  double L = 0;
  for (int i = 0; i < c->sections; i++) L += c->length[i];
  return L;
}

double cusp_total_mass(const mjModel *m, const mjData *d, int instance) {
  const sb_model *model;
  sb_work *work;
  cusp_runtime *r = arm_of(m, d, instance, NULL, NULL);
  if (!r || cusp_runtime_kinematics(r, m, d, instance, &model, &work)) return 0;
  return model->total_mass;
}

int cusp_energy(const mjModel *m, const mjData *d, int instance, double *kinetic, double *gravity, double *elastic) {
  const cusp_instance_config *c;
  const sb_model *model;
  sb_work *work;
  cusp_runtime *r = arm_of(m, d, instance, &c, NULL);
  if (!r || c->contact == CUSP_CONTACT_NATIVE) return -1; /* native: MuJoCo's mj_energy* */
  if (cusp_runtime_kinematics(r, m, d, instance, &model, &work)) return -1;
  sb_energy(model, work, kinetic, gravity, elastic);
  return 0;
}

/* A native arm's backbone: straight between consecutive disk bodies (where
 * MuJoCo last placed them), the frame of the nearer disk. */
static int native_backbone_point(const mjData *d, const cusp_instance_config *c, double s_arc, double pos[3],
                                 double mat[9]) {
  double s0 = 0, s1 = 0, base = 0;
  int k = 1;
  for (; k < c->ndisk; k++) {
    if (c->disk[k].section != c->disk[k - 1].section) base += c->length[c->disk[k - 1].section];
    s0 = s1;
    s1 = base + c->disk[k].s;
    if (s_arc <= s1) break;
  }
  if (k == c->ndisk) k--;
  double a = s1 > s0 ? fmin(fmax((s_arc - s0) / (s1 - s0), 0), 1) : 0;
  const double *p0 = d->xpos + 3 * c->disk[k - 1].body_id, *p1 = d->xpos + 3 * c->disk[k].body_id;
  if (pos)
    for (int i = 0; i < 3; i++) pos[i] = (1 - a) * p0[i] + a * p1[i];
  if (mat) memcpy(mat, d->xmat + 9 * c->disk[a < 0.5 ? k - 1 : k].body_id, 9 * sizeof(double));
  return 0;
}

int cusp_backbone_point(const mjModel *m, const mjData *d, int instance, double s_arc, double pos[3], double mat[9]) {
  const cusp_instance_config *c;
  const sb_model *model;
  sb_work *work;
  cusp_runtime *r = arm_of(m, d, instance, &c, NULL);
  if (!r || !isfinite(s_arc)) return -1;
  if (c->contact == CUSP_CONTACT_NATIVE) return native_backbone_point(d, c, s_arc, pos, mat);
  if (cusp_runtime_kinematics(r, m, d, instance, &model, &work)) return -1;
  int sec = 0;
  while (sec < c->sections - 1 && s_arc > c->length[sec]) s_arc -= c->length[sec++];
  s_arc = fmin(fmax(s_arc, 0), c->length[sec]);
  sb_pose g;
  if (sb_point_kinematics(model, work, sec, s_arc, &g, NULL, NULL, NULL)) return -1;
  if (pos) memcpy(pos, g.p, sizeof g.p);
  if (mat) memcpy(mat, g.R, sizeof g.R);
  return 0;
}

int cusp_tip_pose(const mjModel *m, const mjData *d, int instance, double pos[3], double quat[4]) {
  const cusp_instance_config *c;
  if (!arm_of(m, d, instance, &c, NULL)) return -1;
  if (c->contact == CUSP_CONTACT_NATIVE) { /* the tip site, as MuJoCo last placed it */
    int site = c->tip_site_id;
    if (pos) memcpy(pos, d->site_xpos + 3 * site, 3 * sizeof(double));
    if (quat) mju_mat2Quat(quat, d->site_xmat + 9 * site);
    return 0;
  }
  double mat[9];
  if (cusp_backbone_point(m, d, instance, length_of(c), pos, mat)) return -1;
  if (quat) mju_mat2Quat(quat, mat);
  return 0;
}

int cusp_end_reaction(const mjModel *m, const mjData *d, int instance, double reaction[6]) {
  const cusp_instance_config *c;
  if (reaction) memset(reaction, 0, 6 * sizeof(double));
  const cusp_runtime *r = arm_of(m, d, instance, &c, NULL);
  if (!r || c->end == CUSP_END_FREE || c->contact == CUSP_CONTACT_NATIVE) return -1;
  double out[6];
  if (cusp_runtime_held_reaction(r, instance, c->nhold, out)) return -1; /* the far end follows the holds */
  if (reaction) memcpy(reaction, out, sizeof out);
  return 0;
}

int cusp_hold_reaction(const mjModel *m, const mjData *d, int instance, int hold, double reaction[6]) {
  const cusp_instance_config *c;
  if (reaction) memset(reaction, 0, 6 * sizeof(double));
  const cusp_runtime *r = arm_of(m, d, instance, &c, NULL);
  if (!r || hold < 0 || hold >= c->nhold) return -1;
  double out[6];
  if (cusp_runtime_held_reaction(r, instance, hold, out)) return -1;
  if (reaction) memcpy(reaction, out, sizeof out);
  return 0;
}

/* ---------- applied loads ---------- */

int cusp_apply_force(const mjModel *m, mjData *d, int instance, double s_arc, const double force[3],
                     const double torque[3], char *error, int error_size) {
  const cusp_instance_config *c;
  cusp_arm_state st;
  if (!arm_of(m, d, instance, &c, &st)) {
    sb_errorf(error, error_size, "cusp_apply_force: no soft instance %d in this model and data", instance);
    return -1;
  }
  if (!force && !torque) {
    st.load[CUSP_LOAD_ACTIVE] = 0;
    return 0;
  }
  if (c->contact == CUSP_CONTACT_NATIVE) {
    sb_errorf(error, error_size, "cusp_apply_force: instance \"%s\" has contact native: its links are MuJoCo "
              "bodies, load them through xfrc_applied", c->name);
    return -1;
  }
  double L = length_of(c);
  if (!isfinite(s_arc) || s_arc < 0 || s_arc > L * (1 + 1e-12)) {
    sb_errorf(error, error_size, "cusp_apply_force: instance \"%s\": arc length %g outside 0..%g m", c->name, s_arc, L);
    return -1;
  }
  double f[3] = {0, 0, 0}, t[3] = {0, 0, 0};
  if (force) memcpy(f, force, sizeof f);
  if (torque) memcpy(t, torque, sizeof t);
  for (int k = 0; k < 3; k++)
    if (!isfinite(f[k]) || !isfinite(t[k])) {
      sb_errorf(error, error_size, "cusp_apply_force: instance \"%s\": the %s is not finite", c->name,
                isfinite(f[k]) ? "torque" : "force");
      return -1;
    }
  int sec = 0;
  while (sec < c->sections - 1 && s_arc > c->length[sec]) s_arc -= c->length[sec++];
  st.load[CUSP_LOAD_SECTION] = sec;
  st.load[CUSP_LOAD_S] = fmin(fmax(s_arc, 0), c->length[sec]);
  memcpy(st.load + CUSP_LOAD_FORCE, f, sizeof f);
  memcpy(st.load + CUSP_LOAD_TORQUE, t, sizeof t);
  st.load[CUSP_LOAD_ACTIVE] = 1;
  return 0;
}

/* ---------- live keys ---------- */

/* The key table's entry of a live key, else NULL. */
static const cusp_key *live_key(const char *key) {
  const cusp_key *k = cusp_key_find(key);
  return k && k->live ? k : NULL;
}

/* A copy of an arm's configuration with the live keys of its state (the
 * struct is large: on the heap); NULL with a message. */
static cusp_instance_config *live_config(const cusp_instance_config *c0, const cusp_arm_state *st, const char *who,
                                         char *error, int error_size) {
  cusp_instance_config *c = malloc(sizeof *c);
  if (!c) {
    sb_errorf(error, error_size, "%s: out of memory", who);
    return NULL;
  }
  *c = *c0;
  cusp_live_load(c, st->live);
  return c;
}

int cusp_get(const mjModel *m, const mjData *d, int instance, const char *key, char *value, int value_size) {
  const cusp_instance_config *c0;
  cusp_arm_state st;
  if (!arm_of(m, d, instance, &c0, &st)) {
    sb_errorf(value, value_size, "cusp_get: no soft instance %d in this model and data", instance);
    return -1;
  }
  const cusp_key *k = live_key(key);
  if (!k) {
    sb_errorf(value, value_size, "cusp_get: \"%s\" is not a live key", key ? key : "(null)");
    return -1;
  }
  cusp_instance_config *c = live_config(c0, &st, "cusp_get", value, value_size);
  if (!c) return -1;
  cusp_config_format(c, k, value, value_size); /* printed as the key table says */
  free(c);
  return 0;
}

int cusp_set(const mjModel *m, mjData *d, int instance, const char *key, const char *value, char *error,
             int error_size) {
  const cusp_instance_config *c0;
  cusp_arm_state st;
  const cusp_runtime *r = arm_of(m, d, instance, &c0, &st);
  if (!r) {
    sb_errorf(error, error_size, "cusp_set: no soft instance %d in this model and data", instance);
    return -1;
  }
  if (!live_key(key)) {
    sb_errorf(error, error_size, "cusp_set: key \"%s\" cannot change while running (reload the scene)",
              key ? key : "(null)");
    return -1;
  }
  if (c0->contact == CUSP_CONTACT_NATIVE && strcmp(key, "contact")) {
    sb_errorf(error, error_size, "cusp_set: instance \"%s\" has contact native: MuJoCo solves its "
              "contacts (geom friction, solref), so \"%s\" does not apply", c0->name, key);
    return -1;
  }
  cusp_instance_config *tmp = live_config(c0, &st, "cusp_set", error, error_size);
  if (!tmp) return -1;
  int was_native = tmp->contact == CUSP_CONTACT_NATIVE;
  int rc = cusp_config_set(tmp, key, value, error, error_size);
  if (!rc) rc = cusp_config_check_end(tmp, error, error_size); /* contact: a held end needs lcp */
  if (!rc && (tmp->contact == CUSP_CONTACT_NATIVE) != was_native) {
    sb_errorf(error, error_size, "cusp_set: instance \"%s\": contact \"%s\" cannot be switched %s "
              "native while running: native is a different model (MuJoCo bodies and joints made at "
              "load); reload the scene with contact=%s (e.g. cusp-sim --set %s.contact=%s)", c0->name,
              value, tmp->contact == CUSP_CONTACT_NATIVE ? "to" : "from", value, c0->name, value);
    rc = -1;
  }
  int max_directions = cusp_runtime_max_directions(r);
  if (!rc && max_directions && tmp->pyramid > max_directions) {
    sb_errorf(error, error_size, "cusp_set: instance \"%s\": pyramid %d is above %d, the largest pyramid "
              "of the scene's arms at load, for which the contact workspaces were sized; reload the scene "
              "with pyramid=%d (e.g. cusp-sim --set %s.pyramid=%d)", c0->name, tmp->pyramid, max_directions,
              tmp->pyramid, c0->name, tmp->pyramid);
    rc = -1;
  }
  int kept, capacity = cusp_runtime_contact_capacity(r, &kept);
  if (!rc && kept < capacity && !(tmp->conditioning & CUSP_COND_QR)) {
    sb_errorf(error, error_size, "cusp_set: instance \"%s\": conditioning without qr keeps every contact in the "
              "LCP, up to %d, but its workspaces were sized at load for the %d that rank selection (qr) keeps at "
              "most (the dofs); reload the scene with that conditioning (e.g. cusp-sim --set \"%s.conditioning=%s\")",
              c0->name, capacity, kept, c0->name, value);
    rc = -1;
  }
  if (!rc) cusp_live_store(tmp, st.live); /* a live key sets its own field only */
  free(tmp);
  return rc;
}

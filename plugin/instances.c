/* The soft instances of a compiled model (instances.h): which plugin
 * instances are cusp's, their keys (mj_getPluginConfig, then the overrides
 * the expansion recorded in the text cusp/NAME) and the MuJoCo ids of what
 * the expansion generated. Also the instance queries of cusp.h, which need
 * only the model. */
#include "instances.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cusp.h"
#include "expand.h"
#include "native.h"
#include "pipeline.h"
#include "sb_util.h"

static _Thread_local int expanding;

void cusp_set_expanding(int on) { expanding = on != 0; }
int cusp_expanding(void) { return expanding; }

static int is_cusp(const mjModel *m, int p) {
  const mjpPlugin *pl = mjp_getPluginAtSlot(m->plugin[p]);
  return pl && pl->name && !strcmp(pl->name, CUSP_PLUGIN_NAME);
}

int cusp_plugin_instance(const mjModel *m, int i) {
  if (!m || i < 0) return -1;
  for (int p = 0; p < m->nplugin; p++)
    if (is_cusp(m, p) && i-- == 0) return p;
  return -1;
}

int cusp_soft_instance(const mjModel *m, int plugin_instance) {
  if (!m || plugin_instance < 0 || plugin_instance >= m->nplugin || !is_cusp(m, plugin_instance))
    return -1;
  int i = 0;
  for (int p = 0; p < plugin_instance; p++) i += is_cusp(m, p);
  return i;
}

int cusp_instance_count(const mjModel *m) {
  int n = 0;
  for (int p = 0; m && p < m->nplugin; p++) n += is_cusp(m, p);
  return n;
}

const char *cusp_instance_name(const mjModel *m, int instance) {
  int p = cusp_plugin_instance(m, instance);
  return p < 0 ? NULL : mj_id2name(m, mjOBJ_PLUGIN, p);
}

int cusp_instance_find(const mjModel *m, const char *name) {
  if (!m || !name) return -1;
  int n = cusp_instance_count(m);
  for (int i = 0; i < n; i++) {
    const char *s = cusp_instance_name(m, i);
    if (s && !strcmp(s, name)) return i;
  }
  return -1;
}

const double *cusp_instance_arcs(const mjModel *m, int i, int *ndisk) {
  const char *name = cusp_instance_name(m, i);
  char num[CUSP_NAME + 16];
  if (!name) return NULL;
  snprintf(num, sizeof num, "cusp/%s/arc", name);
  int id = mj_name2id(m, mjOBJ_NUMERIC, num);
  if (id < 0 || m->numeric_size[id] < 1) return NULL;
  if (ndisk) *ndisk = m->numeric_size[id] - 1;
  return m->numeric_data + m->numeric_adr[id];
}

/* A soft disk is a mocap body INSTANCE/disk{k} (a native arm's links carry
 * the same names but are MuJoCo bodies with joints: not soft disks). */
int cusp_disk_of_body(const mjModel *m, int body, int *instance, double *s) {
  if (!m || body < 0 || body >= m->nbody || m->body_mocapid[body] < 0) return -1;
  const char *name = mj_id2name(m, mjOBJ_BODY, body);
  const char *slash = name ? strrchr(name, '/') : NULL;
  char *end;
  if (!slash || strncmp(slash, "/disk", 5)) return -1;
  long k = strtol(slash + 5, &end, 10);
  if (end == slash + 5 || *end || k < 0) return -1;
  int n = cusp_instance_count(m);
  for (int i = 0; i < n; i++) {
    const char *in = cusp_instance_name(m, i);
    int ndisk;
    const double *arc = cusp_instance_arcs(m, i, &ndisk);
    if (!in || strlen(in) != (size_t)(slash - name) || strncmp(in, name, (size_t)(slash - name)) || !arc ||
        k >= ndisk)
      continue;
    if (instance) *instance = i;
    if (s) *s = arc[1 + k];
    return 0;
  }
  return -1;
}

/* ---------- cusp_instance_read ---------- */

static int not_expanded(const char *name, char *error, int error_size) {
  sb_errorf(error, error_size,
            "instance \"%s\": the scene was not expanded: a cusp.softbody instance needs the "
            "disk bodies, geoms and actuators that cusp adds when it loads the scene. Load it "
            "with cusp_load (C) or cusp.load (Python), or run `cusp-expand SCENE.xml > "
            "out.xml` and open out.xml",
            name);
  return -1;
}

static int expand_again(const cusp_instance_config *c, const char *what, char *error,
                        int error_size) {
  sb_errorf(error, error_size,
            "instance \"%s\": the generated elements do not match the instance's keys (%s): "
            "the keys were changed after expansion; expand the original scene again "
            "(cusp-expand, cusp_load or cusp.load)",
            c->name, what);
  return -1;
}

/* The overrides text: "cusp-expanded 1", then "key=value" lines. */
static int read_overrides(cusp_instance_config *c, const char *text, char *error, int error_size) {
  size_t mark = strlen(CUSP_EXPANDED_MARK);
  if (strncmp(text, CUSP_EXPANDED_MARK, mark) || (text[mark] && text[mark] != '\n'))
    return sb_errorf(error, error_size,
                     "instance \"%s\": custom text \"cusp/%s\" does not start with \"%s\" (it "
                     "belongs to cusp's expansion; expand the original scene again)",
                     c->name, c->name, CUSP_EXPANDED_MARK),
           -1;
  const char *p = text + mark;
  while (*p) {
    if (*p == '\n') {
      p++;
      continue;
    }
    const char *end = strchr(p, '\n');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    char line[4096], msg[1024];
    if (len >= sizeof line)
      return sb_errorf(error, error_size, "instance \"%s\": text \"cusp/%s\": line too long",
                       c->name, c->name),
             -1;
    memcpy(line, p, len);
    line[len] = 0;
    char *eq = strchr(line, '=');
    if (!eq || eq == line)
      return sb_errorf(error, error_size,
                       "instance \"%s\": text \"cusp/%s\": \"%s\" is not key=value", c->name,
                       c->name, line),
             -1;
    *eq = 0;
    if (cusp_config_set(c, line, eq + 1, msg, sizeof msg))
      return sb_errorf(error, error_size, "%s (an override recorded in text \"cusp/%s\")", msg,
                       c->name),
             -1;
    p += len;
  }
  return 0;
}

/* Disk bodies and geoms, actuators of the mocap-disk expansion. */
static int resolve_disks(const mjModel *m, cusp_instance_config *c, char *error, int error_size) {
  char name[CUSP_NAME + 32], what[2 * CUSP_NAME + 160];
  for (int d = 0; d < c->ndisk; d++) {
    cusp_disk *k = &c->disk[d];
    snprintf(name, sizeof name, "%s/disk%d", c->name, d);
    k->body_id = mj_name2id(m, mjOBJ_BODY, name);
    k->geom_id = mj_name2id(m, mjOBJ_GEOM, name);
    k->mocap_id = k->body_id >= 0 ? m->body_mocapid[k->body_id] : -1;
    if (k->geom_id < 0 || k->mocap_id < 0 || m->geom_bodyid[k->geom_id] != k->body_id) {
      snprintf(what, sizeof what, "%d disks, but no mocap body and geom \"%s\"", c->ndisk, name);
      return expand_again(c, what, error, error_size);
    }
  }
  snprintf(name, sizeof name, "%s/disk%d", c->name, c->ndisk);
  if (mj_name2id(m, mjOBJ_BODY, name) >= 0) {
    snprintf(what, sizeof what, "%d disks, but there is a body \"%s\"", c->ndisk, name);
    return expand_again(c, what, error, error_size);
  }
  for (int i = 0; i < c->ncoord; i++) {
    snprintf(name, sizeof name, "%s/%s", c->name, c->coord[i]);
    int a = mj_name2id(m, mjOBJ_ACTUATOR, name);
    c->actuator_id[i] = c->actuated[i] ? a : -1;
    if (c->actuated[i] && a < 0) {
      snprintf(what, sizeof what, "coordinate %s is actuated, but there is no actuator \"%s\"",
               c->coord[i], name);
      return expand_again(c, what, error, error_size);
    }
    if (!c->actuated[i] && a >= 0) {
      snprintf(what, sizeof what, "coordinate %s is not actuated, but there is an actuator \"%s\"",
               c->coord[i], name);
      return expand_again(c, what, error, error_size);
    }
  }
  return 0;
}

int cusp_resolve_feedback(const mjModel *m, cusp_instance_config *c, char *error,
                          int error_size) {
  for (int i = 0; i < c->nfeedback; i++) {
    cusp_feedback *f = &c->feedback[i];
    int j = mj_name2id(m, mjOBJ_JOINT, f->joint);
    if (j < 0)
      return sb_errorf(error, error_size,
                       "instance \"%s\": key \"feedback\", entry %d (\"%s\"): no joint \"%s\" in "
                       "the model",
                       c->name, f->entry, f->text, f->joint),
             -1;
    if (m->jnt_type[j] != mjJNT_HINGE && m->jnt_type[j] != mjJNT_SLIDE)
      return sb_errorf(error, error_size,
                       "instance \"%s\": key \"feedback\", entry %d (\"%s\"): joint \"%s\" is a "
                       "%s joint; feedback needs a hinge or slide joint (one coordinate)",
                       c->name, f->entry, f->text, f->joint,
                       m->jnt_type[j] == mjJNT_BALL ? "ball" : "free"),
             -1;
    f->qpos_adr = m->jnt_qposadr[j];
    f->dof_adr = m->jnt_dofadr[j];
  }
  return 0;
}

int cusp_resolve_end_body(const mjModel *m, cusp_instance_config *c, char *error, int error_size) {
  c->end_body_id = -1;
  for (int i = 0; i < c->nhold; i++) {
    cusp_hold *hd = &c->hold[i];
    hd->body_id = mj_name2id(m, mjOBJ_BODY, hd->body);
    if (hd->body_id < 0)
      return sb_errorf(error, error_size, "instance \"%s\": key \"hold\", entry %d (\"%s\"): no body \"%s\" in the model",
                       c->name, hd->entry, hd->text, hd->body),
             -1;
  }
  if (c->end == CUSP_END_FREE) return 0;
  int b = mj_name2id(m, mjOBJ_BODY, c->end_body);
  if (b < 0)
    return sb_errorf(error, error_size, "instance \"%s\": key \"end_body\": no body \"%s\" in the model", c->name,
                     c->end_body),
           -1;
  c->end_body_id = b;
  return 0;
}

int cusp_instance_read(const mjModel *m, int i, cusp_instance_config *c, char *error,
                       int error_size) {
  sb_errorf(error, error_size, "%s", "");
  int p = cusp_plugin_instance(m, i);
  if (p < 0)
    return sb_errorf(error, error_size, "no cusp.softbody instance %d in the model", i), -1;
  const char *name = mj_id2name(m, mjOBJ_PLUGIN, p);
  if (!name) name = "";
  cusp_config_default(c);
  if (strlen(name) >= sizeof c->name)
    return sb_errorf(error, error_size, "instance \"%s\": name longer than %d characters", name,
                     (int)sizeof c->name - 1),
           -1;
  snprintf(c->name, sizeof c->name, "%s", name);

  char tname[CUSP_NAME + 8];
  snprintf(tname, sizeof tname, "cusp/%s", c->name);
  int text = mj_name2id(m, mjOBJ_TEXT, tname);
  if (text < 0) return not_expanded(c->name, error, error_size);

  int nkey;
  const char *const *keys = cusp_config_keys(&nkey);
  for (int k = 0; k < nkey; k++) {
    const char *v = mj_getPluginConfig(m, p, keys[k]);
    if (v && v[0] && cusp_config_set(c, keys[k], v, error, error_size)) return -1;
  }
  if (read_overrides(c, m->text_data + m->text_adr[text], error, error_size)) return -1;
  if (cusp_config_finish(c, error, error_size)) return -1;

  /* the mount: the body holding <plugin instance="NAME"/> */
  c->base_body_id = -1;
  for (int b = 0; b < m->nbody; b++)
    if (m->body_plugin[b] == p) {
      c->base_body_id = b;
      break;
    }
  if (c->base_body_id < 0)
    return sb_errorf(error, error_size,
                     "instance \"%s\" is not attached to any body (add <plugin instance=\"%s\"/> "
                     "to the base <body>)",
                     c->name, c->name),
           -1;
  const char *bname = mj_id2name(m, mjOBJ_BODY, c->base_body_id);
  snprintf(c->base_body, sizeof c->base_body, "%s", bname ? bname : "");

  if (c->contact == CUSP_CONTACT_NATIVE) {
    char msg[512];
    if (cusp_native_resolve(m, c, msg, sizeof msg))
      return sb_errorf(error, error_size,
                       "%s: the generated elements do not match the instance's keys; expand the "
                       "original scene again (cusp-expand, cusp_load or cusp.load)",
                       msg),
             -1;
  } else if (resolve_disks(m, c, error, error_size)) {
    return -1;
  }
  int narc;
  if (!cusp_instance_arcs(m, i, &narc) || narc != c->ndisk) {
    char what[CUSP_NAME + 96];
    snprintf(what, sizeof what, "%d disks, but the numeric \"cusp/%s/arc\" is missing or holds another count",
             c->ndisk, c->name);
    return expand_again(c, what, error, error_size);
  }
  if (cusp_resolve_end_body(m, c, error, error_size)) return -1;
  return cusp_resolve_feedback(m, c, error, error_size);
}

int cusp_check_model_options(const mjModel *m, char *error, int error_size) {
  double h = m->opt.timestep;
  if (!(h >= CUSP_TIMESTEP_MIN && h <= CUSP_TIMESTEP_MAX)) {
    sb_errorf(error, error_size, "cusp.softbody: <option timestep=\"%g\"> is out of range: outside the plausible "
              "range %g .. %g s of soft arms (the implicit soft step is stable at long steps, which quasi-static "
              "runs use, but a step above a second resolves no motion: gravity alone moves a body by g h^2 = %.2g m "
              "in it; below the range a simulated second takes millions of steps)",
              h, CUSP_TIMESTEP_MIN, CUSP_TIMESTEP_MAX, 9.81 * CUSP_TIMESTEP_MAX * CUSP_TIMESTEP_MAX);
    return -1;
  }
  if (m->opt.integrator == mjINT_RK4) {
    sb_errorf(error, error_size, "cusp.softbody: the RK4 integrator is not supported (the soft "
              "step advances once per mj_step); use Euler, implicit or implicitfast in <option integrator=...>");
    return -1;
  }
  if ((m->opt.disableflags & mjDSBL_SPRING) && (m->opt.disableflags & mjDSBL_DAMPER)) {
    sb_errorf(error, error_size, "cusp.softbody: springs and dampers are both disabled "
              "(<flag spring=\"disable\" damper=\"disable\"/>), so MuJoCo skips the passive stage where the "
              "soft arms step: enable one of them");
    return -1;
  }
  return 0;
}

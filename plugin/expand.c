/* Model expansion with mjSpec (DESIGN §5-6, instances.h): a scene's
 * cusp.softbody instances become disk bodies, geoms, a site and actuators
 * (contact native: MuJoCo links, native.h), plus the text cusp/NAME that
 * marks the model as expanded and records the overrides.
 *
 * C cannot read plugin config attributes from a spec, so the raw scene is
 * compiled once (with the plugin's init switched off, cusp_set_expanding)
 * and the keys are read with mj_getPluginConfig; the same compile gives the
 * mounts' initial poses, where the disks start. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain.h"
#include "cusp.h"
#include "expand.h"
#include "instances.h"
#include "native.h"
#include "sb_util.h"

static const float disk_rgba[4] = CUSP_DISK_RGBA_INIT;

/* MuJoCo writes numbers with 6 significant digits; these exported (private)
 * functions of the pinned release raise that to 17 so that the expanded MJCF
 * reloads to the very model cusp_load compiles. Weak: a release without them
 * still links, and writes 6 digits. */
extern int _mjPRIVATE__get_xml_precision(void) __attribute__((weak));
extern void _mjPRIVATE__set_xml_precision(int precision) __attribute__((weak));

/* A message into error; returns -1. */
__attribute__((format(printf, 3, 4))) static int fail(char *error, int error_size,
                                                      const char *fmt, ...) {
  if (error && error_size > 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(error, (size_t)error_size, fmt, ap);
    va_end(ap);
  }
  return -1;
}

/* ---------- small helpers ---------- */

static int set_name(mjSpec *spec, mjsElement *e, const char *name, char *error, int error_size) {
  if (mjs_setName(e, name) == 0) return 0;
  sb_errorf(error, error_size, "cannot name a generated element \"%s\": %s", name,
            mjs_getError(spec));
  return -1;
}

int cusp_spec_actuators(mjSpec *spec, const cusp_instance_config *c, const char *site,
                        char *error, int error_size) {
  char name[CUSP_NAME + 32];
  const mjsDefault *def = mjs_getSpecDefault(spec);
  for (int i = 0; i < c->ncoord; i++) {
    if (!c->actuated[i]) continue;
    snprintf(name, sizeof name, "%s/%s", c->name, c->coord[i]);
    mjsActuator *a = mjs_addActuator(spec, def);
    if (!a) return fail(error, error_size, "out of memory");
    if (set_name(spec, a->element, name, error, error_size)) return -1;
    a->type = mjACTUATOR_GENERAL;
    a->trntype = site ? mjTRN_SITE : mjTRN_TENDON;
    mjs_setString(a->target, site ? site : name);
    mjs_setString(a->refsite, "");
    memset(a->gear, 0, sizeof a->gear);
    a->gear[0] = c->gear;
    a->ctrllimited = mjLIMITED_TRUE;
    a->ctrlrange[0] = c->ctrlrange[0];
    a->ctrlrange[1] = c->ctrlrange[1];
    a->forcelimited = mjLIMITED_FALSE;
    a->actlimited = mjLIMITED_FALSE;
    a->dyntype = mjDYN_NONE;
    memset(a->dynprm, 0, sizeof a->dynprm);
    a->dynprm[0] = 1;
    a->gaintype = mjGAIN_FIXED;
    memset(a->gainprm, 0, sizeof a->gainprm);
    a->gainprm[0] = 1;
    a->biastype = mjBIAS_NONE;
    memset(a->biasprm, 0, sizeof a->biasprm);
    memset(a->damping, 0, sizeof a->damping);
    a->armature = 0;
    a->actdim = -1;
    a->actearly = 0;
    a->delay = 0;
    a->nsample = 0;
  }
  return 0;
}

/* A spec element of this type and name exists. */
static int taken(const mjSpec *spec, mjtObj type, const char *name) {
  return mjs_findElement(spec, type, name) != NULL;
}

static const char *type_word(mjtObj type) {
  switch (type) {
    case mjOBJ_BODY: return "body";
    case mjOBJ_GEOM: return "geom";
    case mjOBJ_SITE: return "site";
    case mjOBJ_JOINT: return "joint";
    case mjOBJ_TENDON: return "tendon";
    case mjOBJ_ACTUATOR: return "actuator";
    default: return "element";
  }
}

static int clash(const mjSpec *spec, mjtObj type, const char *name, const char *inst, char *error,
                 int error_size) {
  if (!taken(spec, type, name)) return 0;
  sb_errorf(error, error_size,
            "instance \"%s\": the scene already has %s %s named \"%s\", a name cusp "
            "generates for the instance (rename the scene's %s)",
            inst, type == mjOBJ_ACTUATOR ? "an" : "a", type_word(type), name, type_word(type));
  return -1;
}

/* Every name the expansion of c will add is free in spec. */
static int check_names(const mjSpec *spec, const cusp_instance_config *c, char *error,
                       int error_size) {
  static const char *const strain[6] = {"kx", "ky", "kz", "ex", "ey", "ez"};
  char name[CUSP_NAME + 32];
  int native = c->contact == CUSP_CONTACT_NATIVE;
  for (int k = 0; k < c->ndisk; k++) {
    snprintf(name, sizeof name, "%s/disk%d", c->name, k);
    if (clash(spec, mjOBJ_BODY, name, c->name, error, error_size) ||
        clash(spec, mjOBJ_GEOM, name, c->name, error, error_size))
      return -1;
    for (int j = 0; native && k > 0 && j < 6; j++) {
      snprintf(name, sizeof name, "%s/j%d%s", c->name, k, strain[j]);
      if (clash(spec, mjOBJ_JOINT, name, c->name, error, error_size)) return -1;
    }
  }
  snprintf(name, sizeof name, "%s/%s", c->name, native ? "tip" : "act");
  if (clash(spec, mjOBJ_SITE, name, c->name, error, error_size)) return -1;
  for (int i = 0; i < c->ncoord; i++) {
    snprintf(name, sizeof name, "%s/%s", c->name, c->coord[i]);
    if ((c->actuated[i] && clash(spec, mjOBJ_ACTUATOR, name, c->name, error, error_size)) ||
        (native && clash(spec, mjOBJ_TENDON, name, c->name, error, error_size)))
      return -1;
  }
  return 0;
}

/* ---------- one instance ---------- */

typedef struct {
  int plugin;          /* plugin instance id in the first compile */
  int body;            /* its mount's body id there */
  mjsBody *mount;      /* and in the spec */
  cusp_instance_config *c;
} instance;

/* The mocap disks at the arm's initial pose, their geoms, the site. */
static int add_disks(mjSpec *spec, const cusp_instance_config *c, const mjData *d, int mount,
                     char *error, int error_size) {
  sb_segment_params seg[CUSP_MAX_SECTIONS];
  sb_chain_params cp;
  cusp_config_chain(c, seg, &cp);
  char msg[256];
  sb_model *sm = sb_model_create(&cp, msg, sizeof msg);
  if (!sm) return fail(error, error_size, "instance \"%s\": %s", c->name, msg);
  sb_work *w = sb_work_create(sm);
  int rc = 0;
  if (!w) {
    rc = -1;
    sb_errorf(error, error_size, "out of memory");
  } else {
    memcpy(sm->base.R, d->xmat + 9 * mount, sizeof sm->base.R);
    memcpy(sm->base.p, d->xpos + 3 * mount, sizeof sm->base.p);
    sb_kinematics(sm, w, c->initial, NULL);
  }
  mjsBody *world = mjs_findBody(spec, "world");
  char name[CUSP_NAME + 32];
  for (int k = 0; !rc && k < c->ndisk; k++) {
    sb_pose g;
    if (sb_point_kinematics(sm, w, c->disk[k].section, c->disk[k].s, &g, NULL, NULL, NULL)) {
      rc = -1;
      sb_errorf(error, error_size, "instance \"%s\": no pose for disk %d", c->name, k);
      break;
    }
    snprintf(name, sizeof name, "%s/disk%d", c->name, k);
    mjsBody *b = mjs_addBody(world, mjs_getDefault(world->element));
    if (!b || set_name(spec, b->element, name, error, error_size)) {
      rc = -1;
      break;
    }
    b->mocap = 1;
    b->fuse = 0;
    memcpy(b->pos, g.p, sizeof b->pos);
    mju_mat2Quat(b->quat, g.R);
    b->alt.type = mjORIENTATION_QUAT;
    mjsGeom *geom = mjs_addGeom(b, mjs_getDefault(b->element));
    if (!geom || set_name(spec, geom->element, name, error, error_size)) {
      rc = -1;
      break;
    }
    geom->type = mjGEOM_CYLINDER;
    geom->size[0] = c->disk_radius;
    geom->size[1] = c->disk_thickness / 2;
    geom->contype = geom->conaffinity = 0;
    memcpy(geom->rgba, disk_rgba, sizeof geom->rgba);
    if (k == 0) {
      snprintf(name, sizeof name, "%s/act", c->name);
      mjsSite *s = mjs_addSite(b, mjs_getDefault(b->element));
      if (!s || set_name(spec, s->element, name, error, error_size)) rc = -1;
    }
  }
  sb_work_free(w);
  sb_model_free(sm);
  if (rc) return -1;
  snprintf(name, sizeof name, "%s/act", c->name);
  return cusp_spec_actuators(spec, c, name, error, error_size);
}

/* The text cusp/NAME: the mark, then this instance's overrides. */
static int add_text(mjSpec *spec, const cusp_instance_config *c, const cusp_override *ov, int nov,
                    char *error, int error_size) {
  size_t n = strlen(CUSP_EXPANDED_MARK) + 2;
  for (int i = 0; i < nov; i++)
    if (!strcmp(ov[i].instance, c->name)) n += strlen(ov[i].key) + strlen(ov[i].value) + 2;
  char *text = malloc(n);
  if (!text) return fail(error, error_size, "out of memory");
  size_t used = (size_t)snprintf(text, n, "%s\n", CUSP_EXPANDED_MARK);
  for (int i = 0; i < nov; i++)
    if (!strcmp(ov[i].instance, c->name))
      used += (size_t)snprintf(text + used, n - used, "%s=%s\n", ov[i].key, ov[i].value);
  char name[CUSP_NAME + 8];
  snprintf(name, sizeof name, "cusp/%s", c->name);
  mjsText *t = mjs_addText(spec);
  int rc = !t || set_name(spec, t->element, name, error, error_size) ? -1 : 0;
  if (!rc) mjs_setString(t->data, text);
  free(text);
  return rc;
}

/* The numeric cusp/NAME/arc: the arm's total length, then each disk's arc
 * length from the base (m), so that readers of a compiled model find them
 * without re-reading the keys (cusp_total_length, cusp_disk_of_body). */
static int add_arcs(mjSpec *spec, const cusp_instance_config *c, char *error, int error_size) {
  double arc[1 + CUSP_MAX_DISKS];
  arc[0] = 0;
  for (int i = 0; i < c->sections; i++) arc[0] += c->length[i];
  for (int k = 0; k < c->ndisk; k++) {
    arc[1 + k] = c->disk[k].s;
    for (int j = 0; j < c->disk[k].section; j++) arc[1 + k] += c->length[j];
  }
  char name[CUSP_NAME + 16];
  snprintf(name, sizeof name, "cusp/%s/arc", c->name);
  mjsNumeric *num = mjs_addNumeric(spec);
  if (!num || set_name(spec, num->element, name, error, error_size)) return -1;
  mjs_setDouble(num->data, arc, 1 + c->ndisk);
  num->size = 1 + c->ndisk;
  return 0;
}

/* ---------- the expansion ---------- */

static int check_overrides(const cusp_override *ov, int nov, char *error, int error_size) {
  if (nov > 0 && !ov) return fail(error, error_size, "%d overrides but no array", nov);
  for (int i = 0; i < nov; i++) {
    const cusp_override *o = &ov[i];
    if (!o->instance || !o->instance[0])
      return fail(error, error_size, "override %d (key \"%s\"): needs an instance name", i,
                       o->key ? o->key : "");
    if (!o->key || !o->key[0] || !o->value)
      return fail(error, error_size, "override %d (instance \"%s\"): needs a key and a value",
                       i, o->instance);
    if (strchr(o->key, '=') || strchr(o->key, '\n') || strchr(o->value, '\n'))
      return fail(error, error_size,
                       "override %s.%s: a key cannot hold '=' or a line break, nor a value a "
                       "line break",
                       o->instance, o->key);
  }
  return 0;
}

/* A spec that already holds an expansion: a text named cusp/... */
static int already_expanded(const mjSpec *spec) {
  for (mjsElement *e = mjs_firstElement((mjSpec *)spec, mjOBJ_TEXT); e;
       e = mjs_nextElement((mjSpec *)spec, e)) {
    const char *name = mjs_getString(mjs_getName(e));
    if (name && !strncmp(name, "cusp/", 5)) return 1;
  }
  return 0;
}

/* MuJoCo's compile error, with a word on cusp's keys when it refused one. */
static void compile_error(mjSpec *spec, char *error, int error_size) {
  const char *msg = mjs_getError(spec);
  if (!msg || !msg[0]) msg = "compile failed";
  const char *k = strstr(msg, "'plugin:");
  const char *e = k ? strchr(k + 8, '\'') : NULL;
  if (e && strstr(msg, CUSP_PLUGIN_NAME))
    sb_errorf(error, error_size, "unknown key \"%.*s\" of %s (MuJoCo: %s)", (int)(e - k - 8), k + 8,
              CUSP_PLUGIN_NAME, msg);
  else
    sb_errorf(error, error_size, "MuJoCo: %s", msg);
}

/* The expansion; *first receives the raw compile when it is the final model
 * (no instances to expand), else NULL. */
static int expand(mjSpec *spec, const cusp_override *ov, int nov, mjModel **first, char *error,
                  int error_size) {
  if (first) *first = NULL;
  if (!spec) return fail(error, error_size, "no spec");
  if (check_overrides(ov, nov, error, error_size)) return -1;
  if (already_expanded(spec)) {
    if (nov == 0) return 0; /* a no-op: an expanded file loads as it is */
    return fail(error, error_size,
                     "the scene is already expanded (it holds cusp's text elements): overrides "
                     "need the original scene");
  }

  int was = cusp_expanding();
  cusp_set_expanding(1);
  mjModel *m = mj_compile(spec, NULL);
  mjData *d = m ? mj_makeData(m) : NULL;
  cusp_set_expanding(was);
  if (!m) {
    compile_error(spec, error, error_size);
    return -1;
  }
  if (!d) {
    mj_deleteModel(m);
    return fail(error, error_size, "cannot make data for the scene");
  }
  mj_kinematics(m, d);

  int n = cusp_instance_count(m), rc = 0;
  instance *in = n ? calloc((size_t)n, sizeof *in) : NULL;
  if (n && !in) rc = fail(error, error_size, "out of memory");
  if (!rc && n > 0) rc = cusp_check_model_options(m, error, error_size);

  for (int i = 0; !rc && i < nov; i++)
    if (cusp_instance_find(m, ov[i].instance) < 0)
      rc = fail(error, error_size, "override %s.%s=%s: no cusp.softbody instance \"%s\"",
                     ov[i].instance, ov[i].key, ov[i].value, ov[i].instance);

  /* read and check everything before the spec changes */
  for (int i = 0; !rc && i < n; i++) {
    instance *I = &in[i];
    I->plugin = cusp_plugin_instance(m, i);
    const char *name = mj_id2name(m, mjOBJ_PLUGIN, I->plugin);
    if (!name || !name[0]) {
      rc = fail(error, error_size, "a cusp.softbody <instance> needs a name attribute");
      break;
    }
    if (strlen(name) + sizeof "/base" > CUSP_NAME) {
      rc = fail(error, error_size, "<instance name=\"%s\">: name longer than %d characters",
                     name, (int)(CUSP_NAME - sizeof "/base"));
      break;
    }
    cusp_instance_config *c = I->c = malloc(sizeof *c);
    if (!c) {
      rc = fail(error, error_size, "out of memory");
      break;
    }
    cusp_config_default(c);
    snprintf(c->name, sizeof c->name, "%s", name);
    int nkey;
    const char *const *keys = cusp_config_keys(&nkey);
    for (int k = 0; !rc && k < nkey; k++) {
      const char *v = mj_getPluginConfig(m, I->plugin, keys[k]);
      if (v && v[0] && cusp_config_set(c, keys[k], v, error, error_size)) rc = -1;
    }
    for (int k = 0; !rc && k < nov; k++) {
      char msg[1024];
      if (strcmp(ov[k].instance, name)) continue;
      if (cusp_config_set(c, ov[k].key, ov[k].value, msg, sizeof msg))
        rc = fail(error, error_size, "override %s.%s=%s: %s", ov[k].instance, ov[k].key,
                       ov[k].value, msg);
    }
    if (rc || cusp_config_finish(c, error, error_size) ||
        cusp_resolve_feedback(m, c, error, error_size) || cusp_resolve_end_body(m, c, error, error_size)) {
      rc = -1;
      break;
    }
    /* the mount */
    I->body = -1;
    for (int b = 0; b < m->nbody && !rc; b++) {
      if (m->body_plugin[b] != I->plugin) continue;
      if (I->body >= 0) {
        const char *b0 = mj_id2name(m, mjOBJ_BODY, I->body);
        const char *b1 = mj_id2name(m, mjOBJ_BODY, b);
        rc = fail(error, error_size,
                       "<plugin instance=\"%s\"> in body \"%s\": instance \"%s\" is already "
                       "attached to body \"%s\"",
                       name, b1 ? b1 : "(unnamed)", name, b0 ? b0 : "(unnamed)");
      }
      I->body = b;
    }
    if (!rc && I->body == 0)
      rc = fail(error, error_size,
                "<plugin instance=\"%s\"> must be inside a <body>, not <worldbody>", name);
    if (!rc && I->body < 0)
      rc = fail(error, error_size,
                     "instance \"%s\" is not attached to any body (add <plugin instance=\"%s\"/> "
                     "to the base <body>)",
                     name, name);
    for (mjsElement *e = mjs_firstElement(spec, mjOBJ_BODY); !rc && e && !I->mount;
         e = mjs_nextElement(spec, e))
      if (mjs_getId(e) == I->body) I->mount = mjs_asBody(e);
    if (!rc && !I->mount)
      rc = fail(error, error_size, "instance \"%s\": its mount body is not in the spec",
                     name);
    if (!rc) {
      const char *bname = mjs_getString(mjs_getName(I->mount->element));
      if (bname && bname[0]) {
        if (strlen(bname) >= sizeof c->base_body)
          rc = fail(error, error_size,
                         "<body name=\"%s\">: name longer than %d characters (holds instance "
                         "\"%s\")",
                         bname, (int)sizeof c->base_body - 1, name);
        else
          snprintf(c->base_body, sizeof c->base_body, "%s", bname);
      } else {
        snprintf(c->base_body, sizeof c->base_body, "%s/base", name);
        rc = clash(spec, mjOBJ_BODY, c->base_body, name, error, error_size);
      }
    }
    if (!rc) rc = check_names(spec, c, error, error_size);
    if (!rc) {
      char tname[CUSP_NAME + 8];
      snprintf(tname, sizeof tname, "cusp/%s", name);
      if (mjs_findElement(spec, mjOBJ_TEXT, tname))
        rc = fail(error, error_size, "instance \"%s\": the scene already has a text \"%s\"",
                       name, tname);
    }
  }

  /* now add */
  for (int i = 0; !rc && i < n; i++) {
    instance *I = &in[i];
    cusp_instance_config *c = I->c;
    const char *bname = mjs_getString(mjs_getName(I->mount->element));
    if ((!bname || !bname[0]) && set_name(spec, I->mount->element, c->base_body, error, error_size))
      rc = -1;
    else if (c->contact == CUSP_CONTACT_NATIVE)
      rc = cusp_native_emit(spec, I->mount, c, error, error_size);
    else {
      /* a mount that moves carries the arm's inertia in MuJoCo's mass
       * matrix (mount.c): keep its dofs' entries that MuJoCo would drop for
       * a "simple" body */
      I->mount->simple = 0;
      rc = add_disks(spec, c, d, I->body, error, error_size);
    }
    if (!rc) rc = add_text(spec, c, ov, nov, error, error_size);
    if (!rc) rc = add_arcs(spec, c, error, error_size);
  }

  for (int i = 0; in && i < n; i++) free(in[i].c);
  free(in);
  mj_deleteData(d);
  if (!rc && n == 0 && first)
    *first = m;
  else
    mj_deleteModel(m);
  return rc;
}

int cusp_expand_spec(mjSpec *spec, const cusp_override *overrides, int noverride, char *error,
                     int error_size) {
  sb_errorf(error, error_size, "%s", "");
  return expand(spec, overrides, noverride, NULL, error, error_size);
}

/* "PATH: message" into error. */
static void prefix_path(const char *path, char *error, int error_size) {
  if (!error || error_size <= 0) return;
  size_t n = strlen(error) + 1;
  char *msg = malloc(n);
  if (!msg) return;
  memcpy(msg, error, n);
  sb_errorf(error, error_size, "%s: %s", path, msg);
  free(msg);
}

static mjSpec *parse(const char *path, char *error, int error_size) {
  if (!path) return sb_errorf(error, error_size, "no scene file given"), NULL;
  char msg[1024] = "";
  mjSpec *spec = mj_parseXML(path, NULL, msg, sizeof msg);
  if (!spec) sb_errorf(error, error_size, "%s: %s", path, msg[0] ? msg : "cannot parse");
  return spec;
}

/* The expanded spec compiled (the plugin's init reads every instance);
 * NULL with "PATH: MuJoCo's message" and, when init failed, cusp's reason. */
static mjModel *compile_expanded(mjSpec *spec, const char *path, char *error, int error_size) {
  mjModel *m = mj_compile(spec, NULL);
  if (m) return m;
  const char *msg = mjs_getError(spec);
  sb_errorf(error, error_size, "%s (as expanded by cusp; cusp-expand shows that model): %s", path,
            msg && msg[0] ? msg : "compile failed");
  /* cusp's reason, unless MuJoCo's message already carries it (init raises
   * it as the error) */
  const char *why = cusp_last_error();
  if (why && why[0] && !(msg && strstr(msg, why)) && error && error_size > 0) {
    size_t k = strlen(error);
    if (k + 1 < (size_t)error_size) snprintf(error + k, (size_t)error_size - k, " (cusp: %s)", why);
  }
  return NULL;
}

mjModel *cusp_load_with(const char *path, const cusp_override *overrides, int noverride,
                        char *error, int error_size) {
  sb_errorf(error, error_size, "%s", "");
  mjSpec *spec = parse(path, error, error_size);
  if (!spec) return NULL;
  mjModel *m = NULL;
  if (expand(spec, overrides, noverride, &m, error, error_size)) {
    prefix_path(path, error, error_size);
  } else if (!m) {
    m = compile_expanded(spec, path, error, error_size);
  }
  mj_deleteSpec(spec);
  return m;
}

mjModel *cusp_load(const char *path, char *error, int error_size) {
  return cusp_load_with(path, NULL, 0, error, error_size);
}

/* MuJoCo's XML reader (tinyxml2) refuses elements nested deeper than 500,
 * and a native arm nests one body per disk: refuse to write a file that
 * would not load (cusp_load and cusp.load compile the spec and have no such
 * limit). Depth counts <mujoco>, <worldbody>, the bodies and a geom. */
#define XML_MAX_DEPTH 500 /* an element at depth 500 is refused already (measured) */

static int too_deep(mjSpec *spec, const char *path, char *error, int error_size) {
  mjsBody *world = mjs_findBody(spec, "world");
  for (mjsElement *e = mjs_firstElement(spec, mjOBJ_BODY); e; e = mjs_nextElement(spec, e)) {
    int depth = 3;
    mjsBody *b = mjs_asBody(e);
    while (b && b != world && depth <= XML_MAX_DEPTH) {
      mjsBody *p = mjs_getParent(b->element);
      if (p == b) break;
      b = p;
      depth++;
    }
    if (depth >= XML_MAX_DEPTH) {
      const char *name = mjs_getString(mjs_getName(e));
      return fail(error, error_size,
                  "%s: the expanded MJCF would nest the children of body \"%s\" %d levels "
                  "deep, and MuJoCo's XML reader accepts at most %d: a contact native arm nests "
                  "one body per disk, so use fewer disks or sections for a file (cusp_load and "
                  "cusp.load have no such limit)",
                  path, name ? name : "", depth, XML_MAX_DEPTH - 1);
    }
  }
  return 0;
}

/* MuJoCo writes a spec only as compiled: compile without the runtime (the
 * plugin's init off) and check every instance as init would read it. */
static int check_compiled(mjSpec *spec, const char *path, char *error, int error_size) {
  int was = cusp_expanding();
  cusp_set_expanding(1);
  mjModel *m = mj_compile(spec, NULL);
  cusp_set_expanding(was);
  if (!m) {
    const char *msg = mjs_getError(spec);
    return fail(error, error_size, "%s (as expanded by cusp): %s", path,
                msg && msg[0] ? msg : "compile failed");
  }
  int rc = 0, n = cusp_instance_count(m);
  cusp_instance_config *c = n ? malloc(sizeof *c) : NULL;
  if (n && !c) rc = fail(error, error_size, "out of memory");
  for (int i = 0; !rc && i < n; i++)
    if (cusp_instance_read(m, i, c, error, error_size)) {
      rc = -1;
      prefix_path(path, error, error_size);
    }
  free(c);
  mj_deleteModel(m);
  return rc;
}

char *cusp_expand(const char *path, const cusp_override *overrides, int noverride, char *error,
                  int error_size) {
  sb_errorf(error, error_size, "%s", "");
  mjSpec *spec = parse(path, error, error_size);
  if (!spec) return NULL;
  char *text = NULL;
  if (expand(spec, overrides, noverride, NULL, error, error_size)) {
    prefix_path(path, error, error_size);
  } else if (too_deep(spec, path, error, error_size) ||
             check_compiled(spec, path, error, error_size)) {
    /* the message says why */
  } else {
    char msg[1024] = "";
    int size = 1 << 16;
    for (int tries = 0; tries < 4; tries++) {
      text = malloc((size_t)size);
      if (!text) {
        sb_errorf(error, error_size, "out of memory");
        break;
      }
      msg[0] = 0;
      int prec = _mjPRIVATE__get_xml_precision ? _mjPRIVATE__get_xml_precision() : 0;
      if (_mjPRIVATE__set_xml_precision) _mjPRIVATE__set_xml_precision(17);
      int rc = mj_saveXMLString(spec, text, size, msg, sizeof msg);
      if (_mjPRIVATE__set_xml_precision && prec > 0) _mjPRIVATE__set_xml_precision(prec);
      if (rc == 0) break;
      free(text);
      text = NULL;
      if (rc < 0) {
        sb_errorf(error, error_size, "%s: cannot write the expanded MJCF: %s", path,
                  msg[0] ? msg : "mj_saveXMLString failed");
        break;
      }
      size = rc + 1;
    }
  }
  mj_deleteSpec(spec);
  return text;
}

/* MJCF loader (DESIGN §6): resolves <include>, expands the cusp.softbody
 * extension into mocap disk bodies and actuators (loader.h), compiles the
 * result with mj_loadXML through a VFS, and keeps the instances of every
 * model it made in a registry keyed by the mjModel. */
#include "loader.h"

#include <errno.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cusp.h"
#include "mjcf_emit.h"
#include "native.h"

#define PLUGIN_NAME "cusp.softbody"
#define MAX_INCLUDE_DEPTH 32

/* ---------- registry ---------- */

typedef struct {
  const mjModel *m;
  int n;
  cusp_instance_config *inst; /* stable while the model lives: the runtime keeps pointers */
} reg_entry;

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static reg_entry *reg;
static int nreg, capreg;

static int reg_add(const mjModel *m, cusp_instance_config *inst, int n) {
  pthread_mutex_lock(&reg_lock);
  if (nreg == capreg) {
    int cap = capreg ? 2 * capreg : 8;
    reg_entry *r = realloc(reg, (size_t)cap * sizeof *r);
    if (!r) {
      pthread_mutex_unlock(&reg_lock);
      return -1;
    }
    reg = r;
    capreg = cap;
  }
  reg[nreg++] = (reg_entry){m, n, inst};
  pthread_mutex_unlock(&reg_lock);
  return 0;
}

static reg_entry reg_get(const mjModel *m) {
  reg_entry e = {m, 0, NULL};
  if (!m) return e;
  pthread_mutex_lock(&reg_lock);
  for (int i = 0; i < nreg; i++)
    if (reg[i].m == m) e = reg[i];
  pthread_mutex_unlock(&reg_lock);
  return e;
}

const cusp_instance_config *cusp_model_instances(const mjModel *m, int *n) {
  reg_entry e = reg_get(m);
  if (n) *n = e.n;
  return e.inst;
}

int cusp_instance_count(const mjModel *m) { return reg_get(m).n; }

const char *cusp_instance_name(const mjModel *m, int instance) {
  reg_entry e = reg_get(m);
  return instance >= 0 && instance < e.n ? e.inst[instance].name : NULL;
}

int cusp_instance_find(const mjModel *m, const char *name) {
  reg_entry e = reg_get(m);
  for (int i = 0; name && i < e.n; i++)
    if (!strcmp(e.inst[i].name, name)) return i;
  return -1;
}

void cusp_delete_model(mjModel *m) {
  if (!m) return;
  cusp_instance_config *inst = NULL;
  pthread_mutex_lock(&reg_lock);
  for (int i = 0; i < nreg; i++)
    if (reg[i].m == m) {
      inst = reg[i].inst;
      reg[i] = reg[--nreg];
      break;
    }
  if (nreg == 0) { /* nothing left: give the array back (keeps leak checkers quiet) */
    free(reg);
    reg = NULL;
    capreg = 0;
  }
  pthread_mutex_unlock(&reg_lock);
  free(inst);
  mj_deleteModel(m);
}

/* ---------- one load ---------- */

typedef struct {
  xmlNodePtr node;
  char *file;
} origin;

typedef struct {
  const char *path; /* the scene file as given */
  xmlDocPtr doc;
  origin *org; /* top-level nodes copied from included files */
  int norg, caporg;
  char *stack[MAX_INCLUDE_DEPTH]; /* real paths of the files being included */
  int depth;
  cusp_instance_config *inst;
  xmlNodePtr *inst_elem, *inst_body;
  int ninst, capinst;
  int touched; /* the scene had extension or plugin elements */
  char *error;
  int error_size;
} loader;

static int set_error(char *error, int error_size, const char *fmt, ...) {
  if (error && error_size > 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(error, (size_t)error_size, fmt, ap);
    va_end(ap);
  }
  return -1;
}

/* "file:line" of a node: the included file it came from, else the scene. */
static void where(const loader *L, xmlNodePtr node, char *buf, size_t n) {
  const char *file = L->path;
  long line = node ? xmlGetLineNo(node) : -1;
  for (xmlNodePtr p = node; p && file == L->path; p = p->parent)
    for (int i = 0; i < L->norg; i++)
      if (L->org[i].node == p) {
        file = L->org[i].file;
        break;
      }
  if (line > 0)
    snprintf(buf, n, "%s:%ld", file, line);
  else
    snprintf(buf, n, "%s", file);
}

/* Error "file:line: message" about node. */
static int node_error(loader *L, xmlNodePtr node, const char *fmt, ...) {
  char loc[PATH_MAX + 32], msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  where(L, node, loc, sizeof loc);
  return set_error(L->error, L->error_size, "%s: %s", loc, msg);
}

static int is_elem(xmlNodePtr n, const char *name) {
  return n && n->type == XML_ELEMENT_NODE && !xmlStrcmp(n->name, (const xmlChar *)name);
}

/* Attribute value (malloc'd by libxml2, xmlFree) or NULL. */
static char *attr(xmlNodePtr n, const char *name) {
  return (char *)xmlGetProp(n, (const xmlChar *)name);
}

static char *read_file(const char *path, int *size, char *why, size_t nwhy) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(why, nwhy, "%s", strerror(errno));
    return NULL;
  }
  size_t n = 0, cap = 1 << 16;
  char *buf = malloc(cap);
  while (buf) {
    if (n == cap) {
      char *b = cap < (size_t)INT_MAX / 2 ? realloc(buf, 2 * cap) : NULL;
      if (!b) {
        free(buf);
        buf = NULL;
        snprintf(why, nwhy, "file too large");
        break;
      }
      buf = b;
      cap *= 2;
    }
    size_t k = fread(buf + n, 1, cap - n, f);
    n += k;
    if (k == 0) {
      if (ferror(f)) {
        snprintf(why, nwhy, "%s", strerror(errno ? errno : EIO));
        free(buf);
        buf = NULL;
      }
      break;
    }
  }
  if (!buf && !why[0]) snprintf(why, nwhy, "out of memory");
  fclose(f);
  *size = (int)n;
  return buf;
}

/* Keeps the first parse error: later ones are mostly consequences. */
typedef struct {
  int set, line;
  char msg[512];
} first_error;

static void keep_first_error(void *data, xmlErrorPtr e) {
  xmlParserCtxtPtr ctxt = data;
  first_error *f = ctxt ? ctxt->_private : NULL;
  if (!f || f->set || !e || e->level < XML_ERR_ERROR) return;
  f->set = 1;
  f->line = e->line;
  snprintf(f->msg, sizeof f->msg, "%s", e->message ? e->message : "not well-formed");
  size_t k = strlen(f->msg);
  while (k && (f->msg[k - 1] == '\n' || f->msg[k - 1] == '\r')) f->msg[--k] = 0;
}

/* Parses a file whose root must be <mujoco>; messages start with context. */
static xmlDocPtr parse_file(const char *path, const char *context, char *error, int error_size) {
  char why[256] = "";
  int size;
  char *text = read_file(path, &size, why, sizeof why);
  if (!text) {
    set_error(error, error_size, "%scannot read \"%s\": %s", context, path, why);
    return NULL;
  }
  xmlParserCtxtPtr ctxt = xmlNewParserCtxt();
  xmlDocPtr doc = NULL;
  if (!ctxt) {
    set_error(error, error_size, "%s%s: out of memory", context, path);
  } else {
    /* No network, no entity loading; errors are collected, not printed. */
    int opts = XML_PARSE_NONET | XML_PARSE_NOBLANKS | XML_PARSE_BIG_LINES | XML_PARSE_NOERROR |
               XML_PARSE_NOWARNING | XML_PARSE_NOCDATA;
    first_error first = {0, 0, "not well-formed"};
    ctxt->_private = &first;
    ctxt->sax->serror = keep_first_error;
    doc = xmlCtxtReadMemory(ctxt, text, size, path, NULL, opts);
    if (!doc && !first.set) keep_first_error(ctxt, xmlCtxtGetLastError(ctxt));
    if (!doc)
      set_error(error, error_size, "%s%s:%d: XML error: %s", context, path, first.line, first.msg);
    xmlFreeParserCtxt(ctxt);
  }
  free(text);
  if (doc) {
    xmlNodePtr root = xmlDocGetRootElement(doc);
    if (!is_elem(root, "mujoco")) {
      set_error(error, error_size, "%s%s: the root element is <%s>, expected <mujoco>", context,
                path, root ? (const char *)root->name : "(none)");
      xmlFreeDoc(doc);
      doc = NULL;
    }
  }
  return doc;
}

static char *dir_of(const char *path) {
  const char *slash = strrchr(path, '/');
  size_t n = slash ? (size_t)(slash - path + 1) : 0;
  char *d = malloc(n + 1);
  if (d) {
    memcpy(d, path, n);
    d[n] = 0;
  }
  return d;
}

static char *join(const char *dir, const char *file) {
  size_t a = strlen(dir), b = strlen(file);
  char *s = malloc(a + b + 1);
  if (s) {
    memcpy(s, dir, a);
    memcpy(s + a, file, b + 1);
  }
  return s;
}

static int add_origin(loader *L, xmlNodePtr node, const char *file) {
  if (L->norg == L->caporg) {
    int cap = L->caporg ? 2 * L->caporg : 16;
    origin *o = realloc(L->org, (size_t)cap * sizeof *o);
    if (!o) return -1;
    L->org = o;
    L->caporg = cap;
  }
  char *f = strdup(file);
  if (!f) return -1;
  L->org[L->norg++] = (origin){node, f};
  return 0;
}

static int expand_include(loader *L, xmlNodePtr inc, const char *file);

/* Expands the includes among the siblings first..end (exclusive) and below. */
static int expand_range(loader *L, xmlNodePtr first, xmlNodePtr end, const char *file) {
  for (xmlNodePtr n = first, next; n && n != end; n = next) {
    next = n->next;
    if (n->type != XML_ELEMENT_NODE) continue;
    if (is_elem(n, "include")) {
      if (expand_include(L, n, file)) return -1;
    } else if (expand_range(L, n->children, NULL, file)) {
      return -1;
    }
  }
  return 0;
}

/* Replaces <include file="..."/> by the children of the included <mujoco>.
 * The file is looked up next to the including file, then (MuJoCo's rule)
 * next to the scene. */
static int expand_include(loader *L, xmlNodePtr inc, const char *file) {
  char *name = attr(inc, "file");
  if (!name || !name[0]) {
    xmlFree(name);
    return node_error(L, inc, "<include> needs a file attribute");
  }
  char *path = NULL, *real = NULL;
  if (name[0] == '/') {
    path = strdup(name);
  } else {
    char *dir = dir_of(file);
    path = dir ? join(dir, name) : NULL;
    free(dir);
    if (path && access(path, F_OK) && file != L->path) {
      char *d0 = dir_of(L->path), *p0 = d0 ? join(d0, name) : NULL;
      free(d0);
      if (p0 && !access(p0, F_OK)) {
        free(path);
        path = p0;
      } else {
        free(p0);
      }
    }
  }
  int rc = -1;
  if (!path) {
    set_error(L->error, L->error_size, "out of memory");
    goto done;
  }
  real = realpath(path, NULL);
  if (!real) {
    node_error(L, inc, "<include file=\"%s\">: cannot read \"%s\": %s", name, path,
               strerror(errno));
    goto done;
  }
  for (int i = 0; i < L->depth; i++)
    if (!strcmp(L->stack[i], real)) {
      node_error(L, inc, "<include file=\"%s\">: include cycle (\"%s\" includes itself)", name,
                 path);
      goto done;
    }
  if (L->depth == MAX_INCLUDE_DEPTH) {
    node_error(L, inc, "<include file=\"%s\">: includes nested deeper than %d", name,
               MAX_INCLUDE_DEPTH);
    goto done;
  }
  char loc[PATH_MAX + 64], context[PATH_MAX + 128];
  where(L, inc, loc, sizeof loc);
  snprintf(context, sizeof context, "%s: <include file=\"%s\">: ", loc, name);
  xmlDocPtr sub = parse_file(path, context, L->error, L->error_size);
  if (!sub) goto done;
  xmlNodePtr first = NULL;
  for (xmlNodePtr k = xmlDocGetRootElement(sub)->children; k; k = k->next) {
    xmlNodePtr copy = xmlDocCopyNode(k, L->doc, 1);
    if (!copy || !xmlAddPrevSibling(inc, copy)) {
      xmlFreeNode(copy);
      xmlFreeDoc(sub);
      set_error(L->error, L->error_size, "out of memory");
      goto done;
    }
    if (!first) first = copy;
    if (copy->type == XML_ELEMENT_NODE && add_origin(L, copy, path)) {
      xmlFreeDoc(sub);
      set_error(L->error, L->error_size, "out of memory");
      goto done;
    }
  }
  xmlFreeDoc(sub);
  L->stack[L->depth++] = real;
  rc = expand_range(L, first, inc, path);
  L->depth--;
  if (!rc) {
    xmlUnlinkNode(inc);
    xmlFreeNode(inc);
  }
  /* the origin table keeps its own copy of path */
done:
  free(real);
  free(path);
  xmlFree(name);
  return rc;
}

static int find_instance(const loader *L, const char *name) {
  for (int i = 0; name && i < L->ninst; i++)
    if (!strcmp(L->inst[i].name, name)) return i;
  return -1;
}

static int add_instance(loader *L, xmlNodePtr elem) {
  char *name = attr(elem, "name");
  int rc = -1;
  if (!name || !name[0]) {
    node_error(L, elem, "<instance> needs a name attribute");
  } else if (strlen(name) + sizeof "/base" > CUSP_NAME) {
    node_error(L, elem, "<instance name=\"%s\">: name longer than %d characters", name,
               (int)(CUSP_NAME - sizeof "/base"));
  } else if (find_instance(L, name) >= 0) {
    node_error(L, elem, "<instance name=\"%s\">: an instance of that name already exists", name);
  } else {
    if (L->ninst == L->capinst) {
      int cap = L->capinst ? 2 * L->capinst : 4;
      cusp_instance_config *ci = realloc(L->inst, (size_t)cap * sizeof *ci);
      if (ci) L->inst = ci;
      xmlNodePtr *e = realloc(L->inst_elem, (size_t)cap * sizeof *e);
      if (e) L->inst_elem = e;
      xmlNodePtr *b = realloc(L->inst_body, (size_t)cap * sizeof *b);
      if (b) L->inst_body = b;
      if (!ci || !e || !b) {
        xmlFree(name);
        return set_error(L->error, L->error_size, "out of memory");
      }
      L->capinst = cap;
    }
    cusp_instance_config *c = &L->inst[L->ninst];
    cusp_config_default(c);
    snprintf(c->name, sizeof c->name, "%s", name);
    L->inst_elem[L->ninst] = elem;
    L->inst_body[L->ninst] = NULL;
    L->ninst++;
    rc = 0;
    for (xmlNodePtr k = elem->children; k && !rc; k = k->next) {
      if (k->type != XML_ELEMENT_NODE) continue;
      if (!is_elem(k, "config")) {
        rc = node_error(L, k, "<instance name=\"%s\">: unexpected <%s> (only <config>)", name,
                        (const char *)k->name);
        break;
      }
      char *key = attr(k, "key"), *value = attr(k, "value");
      char msg[1024];
      if (!key)
        rc = node_error(L, k, "instance \"%s\": <config> needs a key attribute", name);
      else if (!value)
        rc = node_error(L, k, "instance \"%s\": <config key=\"%s\"> needs a value attribute", name,
                        key);
      else if (cusp_config_set(c, key, value, msg, sizeof msg))
        rc = node_error(L, k, "%s", msg);
      xmlFree(key);
      xmlFree(value);
    }
  }
  xmlFree(name);
  return rc;
}

/* <extension><plugin plugin="cusp.softbody"><instance>... */
static int read_extension(loader *L, xmlNodePtr ext) {
  for (xmlNodePtr p = ext->children; p; p = p->next) {
    if (p->type != XML_ELEMENT_NODE) continue;
    if (!is_elem(p, "plugin"))
      return node_error(L, p, "<extension>: unexpected <%s> (only <plugin>)",
                        (const char *)p->name);
    char *name = attr(p, "plugin");
    if (!name || strcmp(name, PLUGIN_NAME)) {
      int rc =
          name ? node_error(L, p,
                            "<plugin plugin=\"%s\">: unknown plugin \"%s\" (cusp provides \"%s\")",
                            name, name, PLUGIN_NAME)
               : node_error(L, p, "<plugin> in <extension> needs a plugin attribute");
      xmlFree(name);
      return rc;
    }
    xmlFree(name);
    for (xmlNodePtr i = p->children; i; i = i->next) {
      if (i->type != XML_ELEMENT_NODE) continue;
      if (!is_elem(i, "instance"))
        return node_error(L, i, "<plugin plugin=\"%s\">: unexpected <%s> (only <instance>)",
                          PLUGIN_NAME, (const char *)i->name);
      if (add_instance(L, i)) return -1;
    }
  }
  return 0;
}

/* Every <plugin instance="..."/> in the tree: attach, then remove. */
static int attach_bodies(loader *L, xmlNodePtr node) {
  for (xmlNodePtr n = node->children, next; n; n = next) {
    next = n->next;
    if (n->type != XML_ELEMENT_NODE) continue;
    if (is_elem(n, "extension")) continue; /* read already, removed at the end */
    if (!is_elem(n, "plugin")) {
      if (attach_bodies(L, n)) return -1;
      continue;
    }
    L->touched = 1;
    char *name = attr(n, "instance");
    int k = find_instance(L, name), rc = 0;
    if (!name)
      rc = node_error(L, n, "<plugin> in <%s> needs an instance attribute",
                      (const char *)node->name);
    else if (!is_elem(node, "body"))
      rc = node_error(L, n, "<plugin instance=\"%s\"> must be inside a <body>, not <%s>", name,
                      (const char *)node->name);
    else if (k < 0)
      rc = node_error(L, n, "<plugin instance=\"%s\">: no such instance in <extension>", name);
    else if (L->inst_body[k])
      rc = node_error(
          L, n, "<plugin instance=\"%s\">: instance \"%s\" is already attached to body \"%s\"",
          name, name, L->inst[k].base_body);
    if (!rc) {
      cusp_instance_config *c = &L->inst[k];
      char *body = attr(node, "name");
      if (body && strlen(body) >= sizeof c->base_body) {
        rc = node_error(
            L, node, "<body name=\"%s\">: name longer than %d characters (holds instance \"%s\")",
            body, (int)sizeof c->base_body - 1, name);
      } else if (body && body[0]) {
        snprintf(c->base_body, sizeof c->base_body, "%s", body);
      } else {
        snprintf(c->base_body, sizeof c->base_body, "%.*s/base",
                 (int)(sizeof c->base_body - sizeof "/base"), c->name);
        xmlSetProp(node, (const xmlChar *)"name", (const xmlChar *)c->base_body);
      }
      xmlFree(body);
      L->inst_body[k] = node;
      xmlUnlinkNode(n);
      xmlFreeNode(n);
    }
    xmlFree(name);
    if (rc) return -1;
  }
  return 0;
}




static xmlNodePtr config_elem(xmlNodePtr inst, const char *msg);

/* The disk bodies, the site and the actuators of one instance; contact
 * native: the MuJoCo bodies, joints and tendons of native.h instead. */
static int generate(loader *L, int k) {
  const cusp_instance_config *c = &L->inst[k];
  xmlNodePtr root = xmlDocGetRootElement(L->doc);
  if (c->contact == CUSP_CONTACT_NATIVE) {
    char msg[1024];
    if (cusp_native_generate(root, L->inst_body[k], c, msg, sizeof msg))
      return node_error(L, config_elem(L->inst_elem[k], msg), "%s", msg);
    return 0;
  }
  xmlNodePtr world = cusp_mjcf_root_child(root, "worldbody");
  if (!world) return set_error(L->error, L->error_size, "out of memory");
  /* Start the disks at the base when its pose is plain; the runtime moves them at attach. */
  xmlNodePtr base = L->inst_body[k];
  char *pos = is_elem(base->parent, "worldbody") ? attr(base, "pos") : NULL;
  char name[CUSP_NAME + 32], size[64], r[32], h[32];
  cusp_mjcf_num(r, sizeof r, c->disk_radius);
  cusp_mjcf_num(h, sizeof h, c->disk_thickness / 2);
  snprintf(size, sizeof size, "%s %s", r, h);
  int rc = 0;
  for (int d = 0; d < c->ndisk && !rc; d++) {
    snprintf(name, sizeof name, "%s/disk%d", c->name, d);
    const char *battrs[] = {"name", name, "mocap", "true", "pos", pos ? pos : "0 0 0", NULL};
    const char *gattrs[] = {"name", name,           "type", "cylinder",    "size",
                            size,   "contype",      "0",    "conaffinity", "0",
                            "rgba", CUSP_DISK_RGBA, NULL};
    xmlNodePtr b = cusp_mjcf_child(world, "body", battrs);
    if (!b || !cusp_mjcf_child(b, "geom", gattrs)) rc = -1;
    if (!rc && d == 0) {
      snprintf(name, sizeof name, "%s/act", c->name);
      const char *sattrs[] = {"name", name, NULL};
      if (!cusp_mjcf_child(b, "site", sattrs)) rc = -1;
    }
  }
  xmlFree(pos);
  if (rc) return set_error(L->error, L->error_size, "out of memory");

  char site[CUSP_NAME + 8];
  snprintf(site, sizeof site, "%s/act", c->name);
  if (cusp_mjcf_actuators(root, c, site)) return set_error(L->error, L->error_size, "out of memory");
  return 0;
}

static void loader_free(loader *L) {
  for (int i = 0; i < L->norg; i++) free(L->org[i].file);
  free(L->org);
  free(L->inst);
  free(L->inst_elem);
  free(L->inst_body);
  if (L->doc) xmlFreeDoc(L->doc);
}

/* The last <config> of the key a message names (key "K"), else the instance. */
static xmlNodePtr config_elem(xmlNodePtr inst, const char *msg) {
  const char *k = strstr(msg, "key \""), *e = k ? strchr(k + 5, '"') : NULL;
  xmlNodePtr found = inst;
  if (!e) return inst;
  for (xmlNodePtr n = inst->children; n; n = n->next) {
    if (!is_elem(n, "config")) continue;
    char *key = attr(n, "key");
    if (key && strlen(key) == (size_t)(e - k - 5) && !strncmp(key, k + 5, (size_t)(e - k - 5)))
      found = n;
    xmlFree(key);
  }
  return found;
}

/* Reads, expands and checks the scene. On success L->doc is the document to
 * compile and L->inst the finished instances. */
static int expand(loader *L, const char *path, const cusp_override *ov, int nov) {
  if (!path) return set_error(L->error, L->error_size, "no scene file given");
  if (nov > 0 && !ov) return set_error(L->error, L->error_size, "%d overrides but no array", nov);
  xmlInitParser();
  L->path = path;
  L->doc = parse_file(path, "", L->error, L->error_size);
  if (!L->doc) return -1;
  xmlNodePtr root = xmlDocGetRootElement(L->doc);
  L->stack[0] = realpath(path, NULL);
  if (!L->stack[0]) return set_error(L->error, L->error_size, "%s: %s", path, strerror(errno));
  L->depth = 1;
  int rc = expand_range(L, root->children, NULL, path);
  free(L->stack[0]);
  L->depth = 0;
  if (rc) return -1;

  for (xmlNodePtr n = root->children, next; n; n = next) {
    next = n->next;
    if (!is_elem(n, "extension")) continue;
    L->touched = 1;
    if (read_extension(L, n)) return -1;
  }
  for (int i = 0; i < nov; i++) {
    const cusp_override *o = &ov[i];
    char msg[1024];
    int k = find_instance(L, o->instance);
    if (!o->key || !o->value)
      return set_error(L->error, L->error_size,
                       "override %d (instance \"%s\"): needs a key and a value", i,
                       o->instance ? o->instance : "");
    if (k < 0)
      return set_error(L->error, L->error_size, "override %s.%s=%s: no instance \"%s\" in %s",
                       o->instance ? o->instance : "", o->key, o->value,
                       o->instance ? o->instance : "", path);
    if (cusp_config_set(&L->inst[k], o->key, o->value, msg, sizeof msg))
      return set_error(L->error, L->error_size, "override %s.%s=%s: %s", o->instance, o->key,
                       o->value, msg);
  }
  for (int k = 0; k < L->ninst; k++) {
    char msg[1024];
    if (cusp_config_finish(&L->inst[k], msg, sizeof msg))
      return node_error(L, config_elem(L->inst_elem[k], msg), "%s", msg);
  }
  if (attach_bodies(L, root)) return -1;
  for (int k = 0; k < L->ninst; k++)
    if (!L->inst_body[k])
      return node_error(
          L, L->inst_elem[k],
          "instance \"%s\" is not attached to any body (add <plugin instance=\"%s\"/> "
          "to the base <body>)",
          L->inst[k].name, L->inst[k].name);
  for (int k = 0; k < L->ninst; k++)
    if (generate(L, k)) return -1;
  /* Only now: error messages above point into the instance elements. */
  for (xmlNodePtr n = root->children, next; n; n = next) {
    next = n->next;
    if (is_elem(n, "extension")) {
      xmlUnlinkNode(n);
      xmlFreeNode(n);
    }
  }
  return 0;
}

static char *dump(loader *L) {
  xmlChar *mem = NULL;
  int size = 0;
  xmlDocDumpFormatMemoryEnc(L->doc, &mem, &size, "UTF-8", 1);
  char *text = mem ? malloc((size_t)size + 1) : NULL;
  if (text) {
    memcpy(text, mem, (size_t)size);
    text[size] = 0;
  } else {
    set_error(L->error, L->error_size, "out of memory");
  }
  xmlFree(mem);
  return text;
}

char *cusp_expand(const char *path, const cusp_override *overrides, int noverride, char *error,
                  int error_size) {
  loader L;
  memset(&L, 0, sizeof L);
  L.error = error;
  L.error_size = error_size;
  set_error(error, error_size, "%s", "");
  char *text = expand(&L, path, overrides, noverride) ? NULL : dump(&L);
  loader_free(&L);
  return text;
}

/* Compiles text as if it were the file at path: the VFS holds it under the
 * base name of path, and mj_loadXML takes the model directory (meshdir,
 * textures, ...) from the directory part of the name it is given. */
static mjModel *compile(const char *path, const char *text, char *error, int error_size) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  if (!base[0] || strlen(base) >= mjMAXVFSNAME) {
    set_error(error, error_size, "%s: file name too long or empty", path);
    return NULL;
  }
  mjVFS *vfs = malloc(sizeof *vfs);
  if (!vfs) {
    set_error(error, error_size, "out of memory");
    return NULL;
  }
  mj_defaultVFS(vfs);
  size_t len = strlen(text);
  mjModel *m = NULL;
  int idx = -1;
  if (len < INT_MAX && !mj_makeEmptyFileVFS(vfs, path, (int)len)) idx = mj_findFileVFS(vfs, path);
  if (idx < 0) {
    set_error(error, error_size, "%s: cannot put the expanded MJCF in a VFS", path);
  } else {
    memcpy(vfs->filedata[idx], text, len);
    char msg[1024] = "";
    m = mj_loadXML(path, vfs, msg, sizeof msg);
    if (!m)
      set_error(error, error_size, "%s (as expanded by cusp; cusp_expand shows that text): %s",
                path, msg);
  }
  mj_deleteVFS(vfs);
  free(vfs);
  return m;
}

static int resolve_ids(const mjModel *m, const char *path, cusp_instance_config *c, char *error,
                       int error_size) {
  char name[CUSP_NAME + 32];
  c->base_body_id = mj_name2id(m, mjOBJ_BODY, c->base_body);
  if (c->base_body_id < 0)
    return set_error(error, error_size, "instance \"%s\": base body \"%s\" not in the model",
                     c->name, c->base_body);
  if (c->contact == CUSP_CONTACT_NATIVE) {
    char msg[512];
    if (cusp_native_resolve(m, c, msg, sizeof msg))
      return set_error(error, error_size, "%s: %s", path, msg);
  }
  for (int d = 0; d < c->ndisk && c->contact != CUSP_CONTACT_NATIVE; d++) {
    cusp_disk *k = &c->disk[d];
    snprintf(name, sizeof name, "%s/disk%d", c->name, d);
    k->body_id = mj_name2id(m, mjOBJ_BODY, name);
    k->geom_id = mj_name2id(m, mjOBJ_GEOM, name);
    k->mocap_id = k->body_id >= 0 ? m->body_mocapid[k->body_id] : -1;
    if (k->geom_id < 0 || k->mocap_id < 0)
      return set_error(error, error_size, "instance \"%s\": generated disk \"%s\" not in the model",
                       c->name, name);
  }
  for (int i = 0; i < c->ncoord && c->contact != CUSP_CONTACT_NATIVE; i++) {
    c->actuator_id[i] = -1;
    if (!c->actuated[i]) continue;
    snprintf(name, sizeof name, "%s/%s", c->name, c->coord[i]);
    c->actuator_id[i] = mj_name2id(m, mjOBJ_ACTUATOR, name);
    if (c->actuator_id[i] < 0)
      return set_error(error, error_size,
                       "instance \"%s\": generated actuator \"%s\" not in the model", c->name,
                       name);
  }
  /* feedback joints exist only in the compiled model */
  for (int i = 0; i < c->nfeedback; i++) {
    cusp_feedback *f = &c->feedback[i];
    int j = mj_name2id(m, mjOBJ_JOINT, f->joint);
    if (j < 0)
      return set_error(error, error_size, "%s: instance \"%s\": key \"feedback/%s\": no joint \"%s\" "
                       "in the model", path, c->name, f->name, f->joint);
    if (m->jnt_type[j] != mjJNT_HINGE && m->jnt_type[j] != mjJNT_SLIDE)
      return set_error(error, error_size, "%s: instance \"%s\": key \"feedback/%s\": joint \"%s\" is "
                       "a %s joint; feedback needs a hinge or slide joint (one coordinate)", path,
                       c->name, f->name, f->joint, m->jnt_type[j] == mjJNT_BALL ? "ball" : "free");
    f->qpos_adr = m->jnt_qposadr[j];
    f->dof_adr = m->jnt_dofadr[j];
  }
  return 0;
}

mjModel *cusp_load_with(const char *path, const cusp_override *overrides, int noverride,
                        char *error, int error_size) {
  loader L;
  memset(&L, 0, sizeof L);
  L.error = error;
  L.error_size = error_size;
  set_error(error, error_size, "%s", "");
  mjModel *m = NULL;
  if (expand(&L, path, overrides, noverride)) goto done;
  if (!L.touched) { /* a plain MuJoCo scene: MuJoCo reads it itself, unchanged */
    char msg[1024] = "";
    m = mj_loadXML(path, NULL, msg, sizeof msg);
    if (!m) set_error(error, error_size, "%s: %s", path, msg);
    goto done;
  }
  char *text = dump(&L);
  if (!text) goto done;
  m = compile(path, text, error, error_size);
  free(text);
  if (!m) goto done;
  for (int k = 0; k < L.ninst; k++)
    if (resolve_ids(m, path, &L.inst[k], error, error_size)) {
      mj_deleteModel(m);
      m = NULL;
      goto done;
    }
  if (L.ninst > 0) {
    if (reg_add(m, L.inst, L.ninst)) {
      set_error(error, error_size, "out of memory");
      mj_deleteModel(m);
      m = NULL;
      goto done;
    }
    L.inst = NULL; /* owned by the registry now */
  }
done:
  loader_free(&L);
  return m;
}

mjModel *cusp_load(const char *path, char *error, int error_size) {
  return cusp_load_with(path, NULL, 0, error, error_size);
}

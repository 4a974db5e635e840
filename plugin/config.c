/* Config keys of a cusp.softbody instance (config.h): parsing, validation,
 * and the derived coordinates and disks. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double default_mass[3] = {1.17, 0.54, 0.265};
static const char *const strain_names[6] = {"kx", "ky", "kz", "ex", "ey", "ez"};

/* "instance "NAME": key "KEY": <message>"; key may be NULL. */
static int fail(const cusp_instance_config *c, const char *key, char *error, int error_size,
                const char *fmt, ...) {
  if (!error || error_size <= 0) return -1;
  int k = key ? snprintf(error, (size_t)error_size, "instance \"%s\": key \"%s\": ", c->name, key)
              : snprintf(error, (size_t)error_size, "instance \"%s\": ", c->name);
  if (k >= 0 && k < error_size) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(error + k, (size_t)(error_size - k), fmt, ap);
    va_end(ap);
  }
  return -1;
}

/* Next whitespace-separated token of *p: its length (0 at the end). */
static int token(const char **p, const char **tok) {
  const char *s = *p;
  while (isspace((unsigned char)*s)) s++;
  const char *e = s;
  while (*e && !isspace((unsigned char)*e)) e++;
  *tok = s;
  *p = e;
  return (int)(e - s);
}

static int count_tokens(const char *v) {
  const char *t;
  int n = 0;
  while (token(&v, &t)) n++;
  return n;
}

static int tok_is(const char *t, int len, const char *word) {
  return (int)strlen(word) == len && strncmp(t, word, (size_t)len) == 0;
}

/* Strict number: the whole token, finite. */
static int parse_number(const char *t, int len, double *out) {
  char buf[64];
  if (len <= 0 || len >= (int)sizeof buf) return -1;
  memcpy(buf, t, (size_t)len);
  buf[len] = 0;
  char *end;
  double v = strtod(buf, &end);
  if (end == buf || *end || !isfinite(v)) return -1;
  *out = v;
  return 0;
}

/* Strict decimal integer token. */
static int parse_integer(const char *t, int len, long *out) {
  char buf[32];
  if (len <= 0 || len >= (int)sizeof buf) return -1;
  memcpy(buf, t, (size_t)len);
  buf[len] = 0;
  char *end;
  errno = 0;
  long v = strtol(buf, &end, 10);
  if (end == buf || *end || errno == ERANGE) return -1;
  *out = v;
  return 0;
}

/* Ranges: [lo, hi] with optional open ends; +-HUGE_VAL for none. */
typedef struct {
  double lo, hi;
  int lo_open, hi_open;
} range;

/* brace lists, not const objects: they also initialize the static key table */
#define POS \
  { 0, HUGE_VAL, 1, 0 }
#define NONNEG \
  { 0, HUGE_VAL, 0, 0 }
#define R_POS ((range)POS)
#define R_NONNEG ((range)NONNEG)
#define R_ANY ((range){-HUGE_VAL, HUGE_VAL, 0, 0})

static int in_range(double v, range r) {
  if (r.lo_open ? !(v > r.lo) : !(v >= r.lo)) return 0;
  if (r.hi_open ? !(v < r.hi) : !(v <= r.hi)) return 0;
  return 1;
}

static void range_text(range r, char *buf, size_t n) {
  if (isinf(r.hi) && isinf(r.lo))
    snprintf(buf, n, "any finite number");
  else if (isinf(r.hi))
    snprintf(buf, n, "must be %s %g", r.lo_open ? ">" : ">=", r.lo);
  else
    snprintf(buf, n, "must be in %c%g, %g%c", r.lo_open ? '(' : '[', r.lo, r.hi,
             r.hi_open ? ')' : ']');
}

/* One number in range r. */
static int set_real(cusp_instance_config *c, const char *key, const char *value, range r,
                    double *out, char *error, int error_size) {
  const char *p = value, *t;
  int len = token(&p, &t);
  double v;
  if (parse_number(t, len, &v) || count_tokens(p) != 0)
    return fail(c, key, error, error_size, "\"%s\" is not a number", value);
  if (!in_range(v, r)) {
    char why[96];
    range_text(r, why, sizeof why);
    return fail(c, key, error, error_size, "\"%s\" is out of range: %s", value, why);
  }
  *out = v;
  return 0;
}

static int set_int(cusp_instance_config *c, const char *key, const char *value, long lo, long hi,
                   int *out, char *error, int error_size) {
  const char *p = value, *t;
  int len = token(&p, &t);
  long v;
  if (parse_integer(t, len, &v) || count_tokens(p) != 0)
    return fail(c, key, error, error_size, "\"%s\" is not an integer", value);
  if (v < lo || v > hi)
    return fail(c, key, error, error_size, "\"%s\" is out of range: must be an integer in %ld..%ld",
                value, lo, hi);
  *out = (int)v;
  return 0;
}

/* Per-section list: one value or one per section (count checked by finish). */
static int set_list(cusp_instance_config *c, const char *key, const char *value, range r,
                    double *out, int *count, char *error, int error_size) {
  double v[CUSP_MAX_SECTIONS];
  int n = 0, len;
  const char *p = value, *t;
  while ((len = token(&p, &t))) {
    if (n == CUSP_MAX_SECTIONS)
      return fail(c, key, error, error_size, "\"%s\": more than %d values", value,
                  CUSP_MAX_SECTIONS);
    if (parse_number(t, len, &v[n]))
      return fail(c, key, error, error_size, "\"%.*s\" is not a number", len, t);
    if (!in_range(v[n], r)) {
      char why[96];
      range_text(r, why, sizeof why);
      return fail(c, key, error, error_size, "\"%.*s\" is out of range: %s", len, t, why);
    }
    n++;
  }
  if (n == 0) return fail(c, key, error, error_size, "\"%s\" is not a number", value);
  for (int i = 0; i < CUSP_MAX_SECTIONS; i++) out[i] = i < n ? v[i] : 0;
  *count = n;
  return 0;
}

static int set_text(cusp_instance_config *c, const char *key, const char *value, char *out,
                    size_t size, char *error, int error_size) {
  size_t n = strlen(value);
  if (n >= size)
    return fail(c, key, error, error_size, "value too long (%zu characters, at most %zu)", n,
                size - 1);
  memcpy(out, value, n + 1);
  return 0;
}

/* Syntax of "initial" (names are resolved by finish): numbers, or NAME=VALUE. */
static int check_initial(cusp_instance_config *c, const char *value, char *error, int error_size) {
  const char *p = value, *t;
  int len, pairs = strchr(value, '=') != NULL;
  while ((len = token(&p, &t))) {
    double v;
    if (pairs) {
      const char *eq = memchr(t, '=', (size_t)len);
      if (!eq || eq == t)
        return fail(c, "initial", error, error_size,
                    "\"%.*s\" is not NAME=VALUE (use either all numbers or all NAME=VALUE pairs)",
                    len, t);
      int vlen = len - (int)(eq + 1 - t);
      if (parse_number(eq + 1, vlen, &v))
        return fail(c, "initial", error, error_size, "\"%.*s\" is not a number", vlen, eq + 1);
    } else if (parse_number(t, len, &v)) {
      return fail(c, "initial", error, error_size, "\"%.*s\" is not a number", len, t);
    }
  }
  return 0;
}

/* ---------- list-valued keys: "schedule" and "feedback" ----------
 * entries separated by ';', each starting with a coordinate (name or
 * 1-based number, resolved by finish); "none" or "" = no entries. Setting
 * the key replaces the whole list. */

/* The entry's text for messages: trimmed, at most ~40 characters. */
static void entry_text(const char *e, int len, char *out, size_t n) {
  while (len > 0 && isspace((unsigned char)*e)) e++, len--;
  while (len > 0 && isspace((unsigned char)e[len - 1])) len--;
  if ((size_t)len < n)
    snprintf(out, n, "%.*s", len, e);
  else
    snprintf(out, n, "%.*s...", (int)n - 4, e);
}

/* "instance "NAME": key "KEY", entry K ("TEXT"): <message>" */
static int fail_entry(const cusp_instance_config *c, const char *key, int entry, const char *text,
                      char *error, int error_size, const char *fmt, ...) {
  if (!error || error_size <= 0) return -1;
  int k = snprintf(error, (size_t)error_size, "instance \"%s\": key \"%s\", entry %d (\"%s\"): ",
                   c->name, key, entry, text);
  if (k >= 0 && k < error_size) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(error + k, (size_t)(error_size - k), fmt, ap);
    va_end(ap);
  }
  return -1;
}

/* Splits value at ';' and calls parse(entry) for each non-blank entry, in
 * order, with its 1-based number; returns the number of entries or -1. */
typedef int (*entry_parser)(cusp_instance_config *c, int slot, int entry, const char *e, int len,
                            char *error, int error_size);

static int for_entries(cusp_instance_config *c, const char *key, const char *value, int max,
                       entry_parser parse, char *error, int error_size) {
  const char *p = value, *t;
  int len = token(&p, &t);
  if (len == 0 || (tok_is(t, len, "none") && count_tokens(p) == 0)) return 0;
  int n = 0, entry = 0;
  for (const char *e = value;;) {
    const char *semi = strchr(e, ';');
    int elen = semi ? (int)(semi - e) : (int)strlen(e);
    entry++;
    int blank = 1;
    for (int i = 0; i < elen; i++) blank &= isspace((unsigned char)e[i]) != 0;
    if (!blank) {
      if (n == max) {
        char text[48];
        entry_text(e, elen, text, sizeof text);
        return fail_entry(c, key, entry, text, error, error_size, "more than %d entries", max);
      }
      if (parse(c, n, entry, e, elen, error, error_size)) return -1;
      n++;
    }
    if (!semi) break;
    e = semi + 1;
  }
  return n;
}

/* The entry's first word, a coordinate name or number (checked by finish). */
static int entry_coord(cusp_instance_config *c, const char *key, int entry, const char *e, int len,
                       const char *form, char *name, size_t nname, const char **rest,
                       char *error, int error_size) {
  char text[48];
  entry_text(e, len, text, sizeof text);
  const char *t = e;
  while (t < e + len && isspace((unsigned char)*t)) t++;
  const char *w = t;
  while (w < e + len && !isspace((unsigned char)*w)) w++;
  if ((size_t)(w - t) >= nname)
    return fail_entry(c, key, entry, text, error, error_size,
                      "\"%.*s\" is not a coordinate name (expected %s)", (int)(w - t), t, form);
  memcpy(name, t, (size_t)(w - t));
  name[w - t] = 0;
  *rest = w;
  return 0;
}

static int parse_schedule(cusp_instance_config *c, int slot, int entry, const char *e, int len,
                          char *error, int error_size) {
  static const char form[] = "\"COORD t0 u0 t1 u1 ...\"";
  cusp_schedule s;
  memset(&s, 0, sizeof s);
  s.coord = -1;
  s.entry = entry;
  entry_text(e, len, s.text, sizeof s.text);
  const char *p;
  if (entry_coord(c, "schedule", entry, e, len, form, s.name, sizeof s.name, &p, error,
                  error_size))
    return -1;
  int n = 0, tl;
  const char *t;
  char buf[4096];
  int rlen = len - (int)(p - e);
  if (rlen >= (int)sizeof buf)
    return fail_entry(c, "schedule", entry, s.text, error, error_size, "entry too long");
  memcpy(buf, p, (size_t)rlen);
  buf[rlen] = 0;
  p = buf;
  while ((tl = token(&p, &t))) {
    double v;
    if (n == 2 * CUSP_MAX_KNOTS)
      return fail_entry(c, "schedule", entry, s.text, error, error_size, "more than %d knots",
                        CUSP_MAX_KNOTS);
    if (parse_number(t, tl, &v))
      return fail_entry(c, "schedule", entry, s.text, error, error_size,
                        "\"%.*s\" is not a number (expected %s)", tl, t, form);
    if (n % 2 == 0) {
      if (n > 0 && !(v > s.t[n / 2 - 1]))
        return fail_entry(c, "schedule", entry, s.text, error, error_size,
                          "times must be strictly increasing (%.*s after %g)", tl, t,
                          s.t[n / 2 - 1]);
      s.t[n / 2] = v;
    } else {
      s.u[n / 2] = v;
    }
    n++;
  }
  if (n == 0 || n % 2)
    return fail_entry(c, "schedule", entry, s.text, error, error_size,
                      "expected %s: the coordinate and an even count of numbers", form);
  s.nknot = n / 2;
  c->schedule[slot] = s;
  return 0;
}

static int parse_feedback(cusp_instance_config *c, int slot, int entry, const char *e, int len,
                          char *error, int error_size) {
  static const char form[] = "\"COORD JOINT kp kd target [ramp_start ramp_end]\"";
  cusp_feedback f;
  memset(&f, 0, sizeof f);
  f.coord = f.schedule = f.qpos_adr = f.dof_adr = -1;
  f.entry = entry;
  entry_text(e, len, f.text, sizeof f.text);
  const char *p;
  if (entry_coord(c, "feedback", entry, e, len, form, f.name, sizeof f.name, &p, error,
                  error_size))
    return -1;
  char buf[1024];
  int rlen = len - (int)(p - e);
  if (rlen >= (int)sizeof buf)
    return fail_entry(c, "feedback", entry, f.text, error, error_size, "entry too long");
  memcpy(buf, p, (size_t)rlen);
  buf[rlen] = 0;
  p = buf;
  int n = count_tokens(buf);
  if (n != 4 && n != 6)
    return fail_entry(c, "feedback", entry, f.text, error, error_size, "expected %s", form);
  const char *t;
  int tl = token(&p, &t);
  double num[5];
  if (parse_number(t, tl, &num[0]) == 0)
    return fail_entry(c, "feedback", entry, f.text, error, error_size,
                      "the second word must be a joint name (expected %s)", form);
  if (tl >= (int)sizeof f.joint)
    return fail_entry(c, "feedback", entry, f.text, error, error_size,
                      "joint name \"%.*s\" longer than %d characters", tl, t,
                      (int)sizeof f.joint - 1);
  memcpy(f.joint, t, (size_t)tl);
  for (int i = 0; i < n - 1; i++) {
    tl = token(&p, &t);
    if (parse_number(t, tl, &num[i]))
      return fail_entry(c, "feedback", entry, f.text, error, error_size,
                        "\"%.*s\" is not a number (expected %s)", tl, t, form);
  }
  f.kp = num[0];
  f.kd = num[1];
  f.target = num[2];
  if (n == 6) {
    if (!(num[3] < num[4]))
      return fail_entry(c, "feedback", entry, f.text, error, error_size,
                        "ramp %g .. %g: must have ramp_start < ramp_end", num[3], num[4]);
    f.ramped = 1;
    f.ramp[0] = num[3];
    f.ramp[1] = num[4];
  }
  c->feedback[slot] = f;
  return 0;
}

/* Parsed into a scratch copy first: a failed set leaves c unchanged. */
static int set_schedules(cusp_instance_config *c, const char *value, char *error, int error_size) {
  cusp_instance_config *tmp = malloc(sizeof *tmp);
  if (!tmp) return fail(c, "schedule", error, error_size, "out of memory");
  memcpy(tmp->name, c->name, sizeof tmp->name);
  int n = for_entries(tmp, "schedule", value, CUSP_MAX_COORDS, parse_schedule, error, error_size);
  if (n >= 0) {
    memcpy(c->schedule, tmp->schedule, (size_t)n * sizeof c->schedule[0]);
    c->nschedule = n;
  }
  free(tmp);
  return n < 0 ? -1 : 0;
}

static int set_feedbacks(cusp_instance_config *c, const char *value, char *error, int error_size) {
  cusp_instance_config *tmp = malloc(sizeof *tmp);
  if (!tmp) return fail(c, "feedback", error, error_size, "out of memory");
  memcpy(tmp->name, c->name, sizeof tmp->name);
  int n = for_entries(tmp, "feedback", value, CUSP_MAX_COORDS, parse_feedback, error, error_size);
  if (n >= 0) {
    memcpy(c->feedback, tmp->feedback, (size_t)n * sizeof c->feedback[0]);
    c->nfeedback = n;
  }
  free(tmp);
  return n < 0 ? -1 : 0;
}

/* Keys that are one number or one integer. */
typedef struct {
  const char *key;
  int integer;
  size_t offset;
  range r;
  long ilo, ihi;
} scalar_key;

#define REAL(k, ...) \
  { #k, 0, offsetof(cusp_instance_config, k), __VA_ARGS__, 0, 0 }
#define INT(k, lo, hi) \
  { #k, 1, offsetof(cusp_instance_config, k), {0, 0, 0, 0 }, lo, hi }

static const scalar_key scalar_keys[] = {
    INT(sections, 1, CUSP_MAX_SECTIONS),
    REAL(radius, POS),
    REAL(disk_radius, POS),
    REAL(disk_thickness, POS),
    REAL(chamber_radius, POS),
    INT(disks, 0, 64),
    REAL(young, POS),
    REAL(shear, NONNEG),
    REAL(density, POS),
    REAL(viscosity, NONNEG),
    REAL(friction, NONNEG),
    INT(pyramid, 3, 16),
    REAL(eps_rank, {0, 1, 1, 1}),
    INT(ruiz_iterations, 0, 100),
    REAL(tikhonov, NONNEG),
    REAL(stabilization, {0, 1, 1, 0}),
    REAL(penalty_stiffness, POS),
    REAL(penalty_damping, NONNEG),
};

/* Every key, once, in the order of config.h: what the plugin declares to
 * MuJoCo (which refuses any other key) and what cusp_config_set accepts. */
static const char *const all_keys[] = {
    "model",          "sections",        "length",        "mass",
    "radius",         "disk_radius",     "disk_thickness", "chamber_radius",
    "disks",          "stiffness",       "damping",       "young",
    "shear",          "density",         "viscosity",     "strains",
    "friction",       "pyramid",         "contact",       "native_joints",
    "solver",         "fallback",        "conditioning",  "eps_rank",
    "ruiz_iterations", "tikhonov",       "stabilization", "penalty_stiffness",
    "penalty_damping", "initial",        "actuated",      "gear",
    "ctrlrange",      "self_contact",    "schedule",      "feedback",
};

const char *const *cusp_config_keys(int *n) {
  if (n) *n = (int)(sizeof all_keys / sizeof all_keys[0]);
  return all_keys;
}

static int known_key(const char *key) {
  for (size_t i = 0; i < sizeof all_keys / sizeof all_keys[0]; i++)
    if (!strcmp(key, all_keys[i])) return 1;
  return 0;
}

void cusp_config_default(cusp_instance_config *c) {
  memset(c, 0, sizeof *c);
  c->model = CUSP_MODEL_PCC;
  c->sections = 3;
  c->length[0] = 0.15;
  c->nlength = 1;
  for (int i = 0; i < 3; i++) c->mass[i] = default_mass[i];
  c->nmass = 3;
  c->radius = 0.025;
  c->disk_radius = 0.03;
  c->disk_thickness = 0.01;
  c->chamber_radius = 0.015;
  c->disks = 6;
  c->stiffness[0] = 265;
  c->nstiffness = 1;
  c->damping[0] = 125;
  c->ndamping = 1;
  c->young = 1e6;
  c->shear = 0;
  c->density = 1000;
  c->viscosity = 0;
  c->strains = SB_KX | SB_KY | SB_EZ;
  c->friction = 0.5;
  c->pyramid = 4;
  c->contact = CUSP_CONTACT_LCP;
  c->native_joints = CUSP_NATIVE_SECTION;
  c->solver = SB_LCP_LEMKE;
  c->conditioning = CUSP_COND_QR | CUSP_COND_RUIZ | CUSP_COND_TIKHONOV;
  c->eps_rank = 1e-6;
  c->ruiz_iterations = 10;
  c->tikhonov = 1e-10;
  c->stabilization = 0.2;
  c->penalty_stiffness = 1e4;
  c->penalty_damping = 50;
  strcpy(c->actuated_text, "all");
  c->gear = 1;
  c->ctrlrange[0] = -100;
  c->ctrlrange[1] = 100;
  c->self_contact = 0;
  c->fallback = 1;
  c->nschedule = 0;
  c->nfeedback = 0;
  c->base_body_id = -1;
  /* The defaults are consistent, so derive coordinates and disks right away. */
  char unused[8];
  cusp_config_finish(c, unused, sizeof unused);
}

int cusp_config_set(cusp_instance_config *c, const char *key, const char *value, char *error,
                    int error_size) {
  if (!key) return fail(c, NULL, error, error_size, "config without a key");
  if (!known_key(key)) return fail(c, NULL, error, error_size, "unknown key \"%s\"", key);
  if (!value) return fail(c, key, error, error_size, "no value");
  const char *p = value, *t;
  int len;

  for (size_t i = 0; i < sizeof scalar_keys / sizeof scalar_keys[0]; i++) {
    const scalar_key *k = &scalar_keys[i];
    if (strcmp(key, k->key)) continue;
    void *field = (char *)c + k->offset;
    if (k->integer) return set_int(c, key, value, k->ilo, k->ihi, (int *)field, error, error_size);
    return set_real(c, key, value, k->r, (double *)field, error, error_size);
  }
  if (!strcmp(key, "gear")) { /* 0 would silently disconnect every actuator */
    double g;
    if (set_real(c, key, value, R_ANY, &g, error, error_size)) return -1;
    if (g == 0)
      return fail(c, key, error, error_size, "\"%s\" is out of range: must be nonzero", value);
    c->gear = g;
    return 0;
  }
  if (!strcmp(key, "length"))
    return set_list(c, key, value, R_POS, c->length, &c->nlength, error, error_size);
  if (!strcmp(key, "mass")) /* 0 = from density, cosserat only (checked by finish) */
    return set_list(c, key, value, R_NONNEG, c->mass, &c->nmass, error, error_size);
  if (!strcmp(key, "stiffness"))
    return set_list(c, key, value, R_NONNEG, c->stiffness, &c->nstiffness, error, error_size);
  if (!strcmp(key, "damping"))
    return set_list(c, key, value, R_NONNEG, c->damping, &c->ndamping, error, error_size);

  if (!strcmp(key, "model")) {
    len = token(&p, &t);
    int which = tok_is(t, len, "pcc") ? 0 : tok_is(t, len, "cosserat") ? 1 : -1;
    if (which < 0 || count_tokens(p))
      return fail(c, key, error, error_size, "\"%s\" is not one of: pcc cosserat", value);
    c->model = which ? CUSP_MODEL_COSSERAT : CUSP_MODEL_PCC;
    return 0;
  }
  /* contact: lcp and penalty are cusp's own soft-body contact (switchable
   * while running); native replaces the soft body by MuJoCo bodies at load
   * (plugin/native.h): rigid links, one per disk interval, on spring-damper
   * joints matched to the soft model's stiffness, damping and mass, touching
   * the scene through MuJoCo's own contact solver. native_joints: section =
   * the links of a section bend and stretch together (joint equality
   * constraints: the soft model's constant strain per section), free = every
   * link on its own springs (the pseudo-rigid chain of rigid-link soft-robot
   * simulators; a continuous rod of the same section stiffness in the limit). */
  if (!strcmp(key, "contact")) {
    len = token(&p, &t);
    int which = tok_is(t, len, "lcp")       ? CUSP_CONTACT_LCP
                : tok_is(t, len, "penalty") ? CUSP_CONTACT_PENALTY
                : tok_is(t, len, "native")  ? CUSP_CONTACT_NATIVE
                                            : -1;
    if (which < 0 || count_tokens(p))
      return fail(c, key, error, error_size, "\"%s\" is not one of: lcp penalty native", value);
    c->contact = (cusp_contact_kind)which;
    return 0;
  }
  if (!strcmp(key, "native_joints")) {
    len = token(&p, &t);
    int which = tok_is(t, len, "section") ? CUSP_NATIVE_SECTION
                : tok_is(t, len, "free")  ? CUSP_NATIVE_FREE
                                          : -1;
    if (which < 0 || count_tokens(p))
      return fail(c, key, error, error_size, "\"%s\" is not one of: section free", value);
    c->native_joints = (cusp_native_joints)which;
    return 0;
  }
  if (!strcmp(key, "solver")) {
    char buf[16] = "";
    len = token(&p, &t);
    sb_lcp_solver s;
    if (len > 0 && len < (int)sizeof buf) memcpy(buf, t, (size_t)len);
    if (len <= 0 || len >= (int)sizeof buf || count_tokens(p) || sb_lcp_solver_parse(buf, &s))
      return fail(c, key, error, error_size, "\"%s\" is not one of: fb lemke pgs", value);
    c->solver = s;
    return 0;
  }
  if (!strcmp(key, "strains")) {
    int mask = 0;
    while ((len = token(&p, &t))) {
      int j = 0;
      while (j < 6 && !tok_is(t, len, strain_names[j])) j++;
      if (j == 6)
        return fail(c, key, error, error_size, "\"%.*s\" is not a strain (kx ky kz ex ey ez)", len,
                    t);
      mask |= 1 << j;
    }
    if (!mask)
      return fail(c, key, error, error_size, "\"%s\": expected some of kx ky kz ex ey ez", value);
    c->strains = mask;
    return 0;
  }
  if (!strcmp(key, "conditioning")) {
    int mask = 0, none = 0, n = 0;
    while ((len = token(&p, &t))) {
      n++;
      if (tok_is(t, len, "none"))
        none = 1;
      else if (tok_is(t, len, "qr"))
        mask |= CUSP_COND_QR;
      else if (tok_is(t, len, "ruiz"))
        mask |= CUSP_COND_RUIZ;
      else if (tok_is(t, len, "tikhonov"))
        mask |= CUSP_COND_TIKHONOV;
      else
        return fail(c, key, error, error_size,
                    "\"%.*s\" is not a stage (qr ruiz tikhonov, or none)", len, t);
    }
    if (n == 0 || (none && n > 1))
      return fail(c, key, error, error_size, "\"%s\": expected \"none\" or any of qr ruiz tikhonov",
                  value);
    c->conditioning = mask;
    return 0;
  }
  if (!strcmp(key, "ctrlrange")) {
    double r[2];
    int n = 0;
    while ((len = token(&p, &t))) {
      if (n == 2 || parse_number(t, len, &r[n]))
        return fail(c, key, error, error_size, "\"%s\": expected two numbers \"lo hi\"", value);
      n++;
    }
    if (n != 2)
      return fail(c, key, error, error_size, "\"%s\": expected two numbers \"lo hi\"", value);
    if (!(r[0] < r[1]))
      return fail(c, key, error, error_size, "\"%s\" is out of range: must have lo < hi", value);
    c->ctrlrange[0] = r[0];
    c->ctrlrange[1] = r[1];
    return 0;
  }
  if (!strcmp(key, "self_contact") || !strcmp(key, "fallback")) {
    len = token(&p, &t);
    int v = tok_is(t, len, "1") || tok_is(t, len, "true")    ? 1
            : tok_is(t, len, "0") || tok_is(t, len, "false") ? 0
                                                             : -1;
    if (v < 0 || count_tokens(p))
      return fail(c, key, error, error_size, "\"%s\" is not one of: 0 1 (or false true)", value);
    *(!strcmp(key, "fallback") ? &c->fallback : &c->self_contact) = v;
    return 0;
  }
  if (!strcmp(key, "initial")) {
    if (check_initial(c, value, error, error_size)) return -1;
    return set_text(c, key, value, c->initial_text, sizeof c->initial_text, error, error_size);
  }
  if (!strcmp(key, "actuated")) {
    if (count_tokens(value) == 0)
      return fail(c, key, error, error_size,
                  "\"\": expected \"all\", \"none\" or coordinate names/numbers");
    return set_text(c, key, value, c->actuated_text, sizeof c->actuated_text, error, error_size);
  }
  if (!strcmp(key, "schedule")) return set_schedules(c, value, error, error_size);
  if (!strcmp(key, "feedback")) return set_feedbacks(c, value, error, error_size);

  return fail(c, NULL, error, error_size, "unknown key \"%s\"", key);
}

/* A coordinate by name or 1-based number; -1 if none. */
static int find_coord(const cusp_instance_config *c, const char *t, int len) {
  for (int i = 0; i < c->ncoord; i++)
    if (tok_is(t, len, c->coord[i])) return i;
  long k;
  if (!parse_integer(t, len, &k) && k >= 1 && k <= c->ncoord) return (int)k - 1;
  return -1;
}

static int bad_coord(const cusp_instance_config *c, const char *key, const char *t, int len,
                     char *error, int error_size) {
  return fail(c, key, error, error_size,
              "\"%.*s\" is not a coordinate of this instance (%s .. %s, or 1..%d)", len, t,
              c->coord[0], c->coord[c->ncoord - 1], c->ncoord);
}

static int finish_list(cusp_instance_config *c, const char *key, double *v, int n, char *error,
                       int error_size) {
  if (n == 1) {
    for (int i = 1; i < CUSP_MAX_SECTIONS; i++) v[i] = v[0];
    return 0;
  }
  if (n == c->sections) return 0;
  return fail(c, key, error, error_size, "%d values but sections is %d (give one value or %d)", n,
              c->sections, c->sections);
}

int cusp_config_finish(cusp_instance_config *c, char *error, int error_size) {
  if (c->sections < 1 || c->sections > CUSP_MAX_SECTIONS)
    return fail(c, "sections", error, error_size, "%d is out of range: must be in 1..%d",
                c->sections, CUSP_MAX_SECTIONS);
  /* fields may have been written directly: keep the arithmetic below in range */
  if (c->disks < 0 || c->disks > 64)
    return fail(c, "disks", error, error_size, "%d is out of range: must be in 0..64", c->disks);
  if (c->nschedule < 0 || c->nschedule > CUSP_MAX_COORDS)
    return fail(c, NULL, error, error_size, "%d schedules, at most %d", c->nschedule,
                CUSP_MAX_COORDS);
  if (c->nfeedback < 0 || c->nfeedback > CUSP_MAX_COORDS)
    return fail(c, NULL, error, error_size, "%d feedbacks, at most %d", c->nfeedback,
                CUSP_MAX_COORDS);
  if (finish_list(c, "length", c->length, c->nlength, error, error_size) ||
      finish_list(c, "mass", c->mass, c->nmass, error, error_size) ||
      finish_list(c, "stiffness", c->stiffness, c->nstiffness, error, error_size) ||
      finish_list(c, "damping", c->damping, c->ndamping, error, error_size))
    return -1;
  if (c->model == CUSP_MODEL_PCC)
    for (int i = 0; i < c->sections; i++)
      if (!(c->mass[i] > 0))
        return fail(c, "mass", error, error_size,
                    "section %d: %g is out of range: must be > 0 for model pcc "
                    "(0 = from density is for cosserat)",
                    i + 1, c->mass[i]);

  /* coordinates, in the chain's order */
  int per = 0, comp[6];
  if (c->model == CUSP_MODEL_PCC) {
    per = 3;
  } else {
    for (int j = 0; j < 6; j++)
      if (c->strains & (1 << j)) comp[per++] = j;
    if (per == 0) return fail(c, "strains", error, error_size, "no strain selected");
  }
  if (per * c->sections > CUSP_MAX_COORDS)
    return fail(c, NULL, error, error_size, "%d coordinates, at most %d", per * c->sections,
                CUSP_MAX_COORDS);
  c->ncoord = per * c->sections;
  memset(c->coord, 0, sizeof c->coord);
  for (int i = 0; i < c->sections; i++)
    for (int j = 0; j < per; j++) {
      char *name = c->coord[i * per + j];
      unsigned char si = (unsigned char)(i + 1); /* <= 16: lets the compiler see the fit */
      if (c->model == CUSP_MODEL_PCC)
        snprintf(name, sizeof c->coord[0], "s%uc%d", si, j + 1);
      else
        snprintf(name, sizeof c->coord[0], "s%u%s", si, strain_names[comp[j]]);
    }

  /* initial */
  const char *p = c->initial_text, *t;
  int len, n = 0;
  double q0[CUSP_MAX_COORDS] = {0};
  if (strchr(c->initial_text, '=')) {
    while ((len = token(&p, &t))) {
      const char *eq = memchr(t, '=', (size_t)len);
      if (!eq || eq == t)
        return fail(c, "initial", error, error_size, "\"%.*s\" is not NAME=VALUE", len, t);
      int k = find_coord(c, t, (int)(eq - t));
      if (k < 0) return bad_coord(c, "initial", t, (int)(eq - t), error, error_size);
      int vlen = len - (int)(eq + 1 - t);
      if (parse_number(eq + 1, vlen, &q0[k]))
        return fail(c, "initial", error, error_size, "\"%.*s\" is not a number", vlen, eq + 1);
    }
  } else {
    while ((len = token(&p, &t))) {
      double v;
      if (parse_number(t, len, &v))
        return fail(c, "initial", error, error_size, "\"%.*s\" is not a number", len, t);
      if (n < CUSP_MAX_COORDS) q0[n] = v;
      n++;
    }
    if (n != 0 && n != c->ncoord)
      return fail(c, "initial", error, error_size,
                  "%d values but the instance has %d coordinates (%s .. %s); "
                  "or use NAME=VALUE pairs",
                  n, c->ncoord, c->coord[0], c->coord[c->ncoord - 1]);
  }
  memcpy(c->initial, q0, sizeof q0);

  /* actuated */
  int act[CUSP_MAX_COORDS] = {0};
  p = c->actuated_text;
  len = token(&p, &t);
  if (tok_is(t, len, "all") && count_tokens(p) == 0) {
    for (int i = 0; i < c->ncoord; i++) act[i] = 1;
  } else if (!(tok_is(t, len, "none") && count_tokens(p) == 0)) {
    if (len == 0)
      return fail(c, "actuated", error, error_size,
                  "\"\": expected \"all\", \"none\" or coordinate names/numbers");
    p = c->actuated_text;
    while ((len = token(&p, &t))) {
      int k = find_coord(c, t, len);
      if (k < 0) return bad_coord(c, "actuated", t, len, error, error_size);
      act[k] = 1;
    }
  }
  memcpy(c->actuated, act, sizeof act);

  /* schedules */
  for (int i = 0; i < c->nschedule; i++) {
    cusp_schedule *s = &c->schedule[i];
    int k = find_coord(c, s->name, (int)strlen(s->name));
    if (k < 0)
      return fail_entry(c, "schedule", s->entry, s->text, error, error_size,
                        "no coordinate %s (this instance has %s .. %s, or 1..%d)", s->name,
                        c->coord[0], c->coord[c->ncoord - 1], c->ncoord);
    if (!c->actuated[k])
      return fail_entry(c, "schedule", s->entry, s->text, error, error_size,
                        "coordinate %s is not actuated (see key \"actuated\")", c->coord[k]);
    for (int j = 0; j < i; j++)
      if (c->schedule[j].coord == k)
        return fail_entry(c, "schedule", s->entry, s->text, error, error_size,
                          "coordinate %s already has a schedule (entry %d)", c->coord[k],
                          c->schedule[j].entry);
    for (int j = 0; j < s->nknot; j++)
      if (s->u[j] < c->ctrlrange[0] || s->u[j] > c->ctrlrange[1])
        return fail_entry(c, "schedule", s->entry, s->text, error, error_size,
                          "u = %g is outside ctrlrange [%g, %g]", s->u[j], c->ctrlrange[0],
                          c->ctrlrange[1]);
    s->coord = k;
  }

  /* feedbacks */
  for (int i = 0; i < c->nfeedback; i++) {
    cusp_feedback *f = &c->feedback[i];
    int k = find_coord(c, f->name, (int)strlen(f->name));
    if (k < 0)
      return fail_entry(c, "feedback", f->entry, f->text, error, error_size,
                        "no coordinate %s (this instance has %s .. %s, or 1..%d)", f->name,
                        c->coord[0], c->coord[c->ncoord - 1], c->ncoord);
    if (!c->actuated[k])
      return fail_entry(c, "feedback", f->entry, f->text, error, error_size,
                        "coordinate %s is not actuated (see key \"actuated\")", c->coord[k]);
    for (int j = 0; j < i; j++)
      if (c->feedback[j].coord == k)
        return fail_entry(c, "feedback", f->entry, f->text, error, error_size,
                          "coordinate %s already has a feedback (entry %d)", c->coord[k],
                          c->feedback[j].entry);
    f->coord = k;
    f->schedule = -1;
    for (int j = 0; j < c->nschedule; j++)
      if (c->schedule[j].coord == k) f->schedule = j;
  }

  /* disks: the base, then per section `disks` inside it and a plate at its end */
  int ndisk = 1 + c->sections * (c->disks + 1);
  if (ndisk > CUSP_MAX_DISKS)
    return fail(c, "disks", error, error_size,
                "%d disks per section give %d disks in all, at most %d", c->disks, ndisk,
                CUSP_MAX_DISKS);
  c->ndisk = 0;
  for (int i = 0; i < c->sections; i++)
    for (int k = (i == 0 ? 0 : 1); k <= c->disks + 1; k++) {
      cusp_disk *d = &c->disk[c->ndisk++];
      d->section = i;
      d->s = k == c->disks + 1 ? c->length[i] : c->length[i] * k / (c->disks + 1);
      d->body_id = d->geom_id = d->mocap_id = -1;
    }
  for (int i = 0; i < CUSP_MAX_COORDS; i++) c->actuator_id[i] = c->tendon_id[i] = -1;
  c->tip_site_id = -1;
  return 0;
}

void cusp_config_chain(const cusp_instance_config *c, sb_segment_params *seg,
                       sb_chain_params *chain) {
  for (int i = 0; i < c->sections; i++) {
    sb_segment_params *p = &seg[i];
    if (c->model == CUSP_MODEL_PCC) {
      *p = sb_segment_default(SB_SEG_PCC);
      p->chamber_radius = c->chamber_radius;
      p->chamber_stiffness = c->stiffness[i];
      p->chamber_damping = c->damping[i];
      p->slices = 4;
    } else {
      *p = sb_segment_default(SB_SEG_PCS);
      p->strains = c->strains;
      p->young = c->young;
      p->shear = c->shear;
      p->density = c->density;
      p->viscosity = c->viscosity;
    }
    p->length = c->length[i];
    p->mass = c->mass[i];
    p->radius = c->radius;
  }
  memset(chain, 0, sizeof *chain);
  chain->nseg = c->sections;
  chain->seg = seg;
  chain->ndisk = 0;
  chain->disk = NULL;
  chain->base = sb_pose_identity();
}

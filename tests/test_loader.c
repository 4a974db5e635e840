/* The config keys (plugin/config.c), the expansion with mjSpec
 * (plugin/expand.c: cusp_load, cusp_expand) and the instances a compiled
 * model carries (plugin/instances.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cusp.h"
#include "instances.h"
#include "native.h"
#include "state.h"
#include "testutil.h"

#define SCENES CUSP_SOURCE_DIR "/tests/data/scenes/"

static char tmpdir[] = "/tmp/cusp-test-loader-XXXXXX";
static char tmpfiles[64][512];
static int ntmp;

static const char *write_tmp(const char *name, const char *text) {
  char *p = tmpfiles[ntmp++];
  snprintf(p, 512, "%s/%s", tmpdir, name);
  FILE *f = fopen(p, "w");
  if (f) {
    fputs(text, f);
    fclose(f);
  }
  return p;
}

static int has(const char *s, const char *needle) { return s && needle && strstr(s, needle); }

/* A scene with one instance "arm" on body "mount" and the given <config>s. */
static const char *arm_scene(const char *name, const char *configs) {
  static char text[8192];
  snprintf(text, sizeof text,
           "<mujoco>\n"
           "  <extension>\n"
           "    <plugin plugin=\"cusp.softbody\">\n"
           "      <instance name=\"arm\">\n"
           "%s\n"
           "      </instance>\n"
           "    </plugin>\n"
           "  </extension>\n"
           "  <worldbody>\n"
           "    <body name=\"mount\" pos=\"0 0 1\"><plugin instance=\"arm\"/></body>\n"
           "  </worldbody>\n"
           "</mujoco>\n",
           configs);
  return write_tmp(name, text);
}

/* Loading fails with a NUL-terminated message containing each needle. */
static void expect_load_error(const char *path, const cusp_override *ov, int nov, const char *a,
                              const char *b, int line) {
  char err[1024];
  memset(err, 'x', sizeof err);
  mjModel *m = cusp_load_with(path, ov, nov, err, sizeof err);
  int terminated = memchr(err, 0, sizeof err) != NULL;
  EXPECT(!m, "line %d: %s loaded but should fail", line, path);
  EXPECT(terminated, "line %d: error not terminated", line);
  if (!terminated) return;
  EXPECT(err[0], "line %d: empty error", line);
  EXPECT(!a || has(err, a), "line %d: error \"%s\" lacks \"%s\"", line, err, a);
  EXPECT(!b || has(err, b), "line %d: error \"%s\" lacks \"%s\"", line, err, b);
  if (m) mj_deleteModel(m);
}
#define LOAD_ERROR(path, a, b) expect_load_error(path, NULL, 0, a, b, __LINE__)

/* ---------- config keys ---------- */

static cusp_instance_config *new_config(void) {
  cusp_instance_config *c = malloc(sizeof *c);
  cusp_config_default(c);
  snprintf(c->name, sizeof c->name, "arm");
  return c;
}

static int set(cusp_instance_config *c, const char *key, const char *value, char *err) {
  return cusp_config_set(c, key, value, err, 512);
}

/* cusp_config_set fails, and its message names the instance, key and each needle. */
static void expect_set_error(const char *key, const char *value, const char *a, const char *b,
                             int line) {
  cusp_instance_config *c = new_config();
  char err[512] = "";
  int rc = set(c, key, value, err);
  EXPECT(rc == -1, "line %d: %s=\"%s\" accepted", line, key, value);
  EXPECT(has(err, "instance \"arm\""), "line %d: \"%s\" does not name the instance", line, err);
  EXPECT(has(err, key), "line %d: \"%s\" does not name the key %s", line, err, key);
  EXPECT(!a || has(err, a), "line %d: \"%s\" lacks \"%s\"", line, err, a);
  EXPECT(!b || has(err, b), "line %d: \"%s\" lacks \"%s\"", line, err, b);
  free(c);
}
#define SET_ERROR(key, value, a, b) expect_set_error(key, value, a, b, __LINE__)

static void expect_set_ok(const char *key, const char *value, int line) {
  cusp_instance_config *c = new_config();
  char err[512] = "";
  EXPECT(set(c, key, value, err) == 0, "line %d: %s=\"%s\": %s", line, key, value, err);
  EXPECT(cusp_config_finish(c, err, 512) == 0, "line %d: finish: %s", line, err);
  free(c);
}
#define SET_OK(key, value) expect_set_ok(key, value, __LINE__)

static int builds(const cusp_instance_config *c, int *n, double *mass) {
  sb_segment_params seg[CUSP_MAX_SECTIONS];
  sb_chain_params chain;
  char err[256];
  cusp_config_chain(c, seg, &chain);
  sb_model *m = sb_model_create(&chain, err, sizeof err);
  if (!m) {
    fprintf(stderr, "sb_model_create: %s\n", err);
    return 0;
  }
  *n = m->n;
  *mass = m->total_mass;
  sb_model_free(m);
  return 1;
}

static void test_defaults(void) {
  cusp_instance_config *c = new_config();
  char err[512];
  EXPECT(cusp_config_finish(c, err, sizeof err) == 0, "finish defaults: %s", err);
  EXPECT(c->model == CUSP_MODEL_PCC && c->sections == 3, "model/sections");
  EXPECT(c->length[0] == 0.15 && c->length[2] == 0.15, "length");
  EXPECT(c->mass[0] == 1.17 && c->mass[1] == 0.54 && c->mass[2] == 0.265, "mass");
  EXPECT(c->radius == 0.025 && c->disk_radius == 0.03 && c->disk_thickness == 0.01, "radii");
  EXPECT(c->chamber_radius == 0.015 && c->disks == 6, "chamber_radius/disks");
  EXPECT(c->stiffness[2] == 265 && c->damping[2] == 125, "stiffness/damping");
  EXPECT(c->young == 1e6 && c->shear == 0 && c->density == 1000 && c->viscosity == 0, "material");
  EXPECT(c->strains == (SB_KX | SB_KY | SB_EZ), "strains");
  EXPECT(c->friction == 0.5 && c->pyramid == 4, "friction");
  EXPECT(c->contact == CUSP_CONTACT_LCP && c->solver == SB_LCP_LEMKE && c->fallback == 1, "contact/solver/fallback");
  EXPECT(c->conditioning == (CUSP_COND_QR | CUSP_COND_RUIZ | CUSP_COND_TIKHONOV), "conditioning");
  EXPECT(c->eps_rank == 1e-6 && c->ruiz_iterations == 10 && c->tikhonov == 1e-10, "cond params");
  EXPECT(c->stabilization == 0.2, "stabilization");
  EXPECT(c->surface_layer == 1e-8, "surface_layer");
  EXPECT(c->push_speed == 1, "push_speed");
  EXPECT(c->penalty_stiffness == 1e4 && c->penalty_damping == 50, "penalty");
  EXPECT(c->gear == 1 && c->ctrlrange[0] == -100 && c->ctrlrange[1] == 100, "gear/ctrlrange");
  EXPECT(c->self_contact == 0 && c->nschedule == 0, "self_contact/schedules");
  EXPECT(c->ncoord == 9, "ncoord %d", c->ncoord);
  EXPECT(
      !strcmp(c->coord[0], "s1c1") && !strcmp(c->coord[5], "s2c3") && !strcmp(c->coord[8], "s3c3"),
      "coord names %s %s %s", c->coord[0], c->coord[5], c->coord[8]);
  int all = 1;
  for (int i = 0; i < 9; i++) all &= c->actuated[i] == 1 && c->initial[i] == 0;
  EXPECT(all, "actuated all, initial 0");
  EXPECT(c->ndisk == 22, "ndisk %d", c->ndisk);
  /* disk 0 at the base; per section 6 inside and a plate at the end */
  EXPECT(c->disk[0].section == 0 && c->disk[0].s == 0, "disk 0");
  int ok = 1;
  for (int i = 0; i < 3; i++)
    for (int k = 1; k <= 7; k++) {
      const cusp_disk *d = &c->disk[1 + 7 * i + k - 1];
      ok &= d->section == i && fabs(d->s - 0.15 * k / 7) < 1e-15;
    }
  EXPECT(ok, "disk placement");
  int n;
  double mass;
  EXPECT(builds(c, &n, &mass) && n == 9 && fabs(mass - 1.975) < 1e-9, "chain n %d mass %g", n,
         mass);
  /* the default is already finished: a fresh one has the same coordinates */
  cusp_instance_config *d = malloc(sizeof *d);
  cusp_config_default(d);
  EXPECT(d->ncoord == 9 && d->ndisk == 22, "cusp_config_default derives coordinates");
  free(d);
  free(c);
}

static void test_set_errors(void) {
  SET_ERROR("stifness", "265", "unknown key", NULL);
  SET_ERROR("stiffness", "abc", "\"abc\" is not a number", NULL);
  SET_ERROR("friction", "1.5x", "\"1.5x\" is not a number", NULL);
  SET_ERROR("friction", "nan", "\"nan\" is not a number", NULL);
  SET_ERROR("friction", "inf", "\"inf\" is not a number", NULL);
  SET_ERROR("friction", "1e999", "is not a number", NULL);
  SET_ERROR("friction", "", "\"\" is not a number", NULL);
  SET_ERROR("friction", "  ", "is not a number", NULL);
  SET_ERROR("friction", "1 2", "is not a number", NULL);
  SET_ERROR("friction", "-1", "out of range", ">= 0");
  SET_ERROR("radius", "0", "out of range", "> 0");
  SET_ERROR("disk_radius", "-0.1", "out of range", "> 0");
  SET_ERROR("disk_thickness", "0", "out of range", NULL);
  SET_ERROR("chamber_radius", "0", "out of range", NULL);
  SET_ERROR("length", "0.1 -0.2", "\"-0.2\" is out of range", "> 0");
  SET_ERROR("length", "0.1 x", "\"x\" is not a number", NULL);
  SET_ERROR("length", "", "is not a number", NULL);
  SET_ERROR("mass", "-1", "out of range", NULL);
  char masses[2 * CUSP_MAX_SECTIONS + 8] = "";
  for (int i = 0; i <= CUSP_MAX_SECTIONS; i++) strcat(masses, "1 ");
  SET_ERROR("mass", masses, "more than 128", NULL);
  SET_ERROR("pyramid", "2", "out of range", "3..16");
  SET_ERROR("pyramid", "17", "out of range", "3..16");
  SET_ERROR("pyramid", "4.5", "not an integer", NULL);
  SET_ERROR("sections", "0", "1..128", NULL);
  SET_ERROR("sections", "129", "1..128", NULL);
  SET_ERROR("sections", "99999999999999999999", "not an integer", NULL);
  SET_ERROR("disks", "65", "0..64", NULL);
  SET_ERROR("disks", "-1", "0..64", NULL);
  SET_ERROR("stabilization", "0", "(0, 1]", NULL);
  SET_ERROR("stabilization", "1.5", "(0, 1]", NULL);
  SET_ERROR("eps_rank", "1", "(0, 1)", NULL);
  SET_ERROR("eps_rank", "0", "(0, 1)", NULL);
  SET_ERROR("ruiz_iterations", "101", "0..100", NULL);
  SET_ERROR("tikhonov", "-1e-9", ">= 0", NULL);
  SET_ERROR("surface_layer", "-1e-9", ">= 0", NULL);
  SET_ERROR("surface_layer", "nan", "surface_layer", NULL);
  SET_ERROR("push_speed", "0", "> 0", NULL);
  SET_ERROR("penalty_stiffness", "0", "> 0", NULL);
  SET_ERROR("penalty_damping", "-1", ">= 0", NULL);
  SET_ERROR("young", "0", "> 0", NULL);
  SET_ERROR("shear", "-1", ">= 0", NULL);
  SET_ERROR("density", "0", "> 0", NULL);
  SET_ERROR("viscosity", "-1", ">= 0", NULL);
  SET_ERROR("stiffness", "-265", ">= 0", NULL);
  SET_ERROR("damping", "-1", ">= 0", NULL);
  SET_ERROR("gear", "0", "nonzero", NULL);
  SET_ERROR("ctrlrange", "1 1", "lo < hi", NULL);
  SET_ERROR("ctrlrange", "2 1", "lo < hi", NULL);
  SET_ERROR("ctrlrange", "1", "two numbers", NULL);
  SET_ERROR("ctrlrange", "1 2 3", "two numbers", NULL);
  SET_ERROR("model", "pcs", "pcc cosserat", NULL);
  SET_ERROR("contact", "soft", "lcp penalty", NULL);
  SET_ERROR("solver", "newton", "fb lemke pgs", NULL);
  SET_ERROR("conditioning", "qr foo", "\"foo\"", NULL);
  SET_ERROR("conditioning", "none qr", "none", NULL);
  SET_ERROR("conditioning", "", "none", NULL);
  SET_ERROR("strains", "kx kq", "\"kq\"", NULL);
  SET_ERROR("strains", "", "kx", NULL);
  SET_ERROR("self_contact", "2", "0 1", NULL);
  SET_ERROR("fallback", "yes", "0 1", NULL);
  SET_ERROR("initial", "0 x", "\"x\" is not a number", NULL);
  SET_ERROR("initial", "s1c1=0.1 0.2", "NAME=VALUE", NULL);
  SET_ERROR("initial", "s1c1=abc", "\"abc\" is not a number", NULL);
  SET_ERROR("actuated", "", "all", NULL);
  SET_ERROR("schedule", "s1c1 0 1 0 2", "strictly increasing", "entry 1 (\"s1c1 0 1 0 2\")");
  SET_ERROR("schedule", "s1c1 0 1 1", "even", NULL);
  SET_ERROR("schedule", "s1c1", "even", NULL);
  SET_ERROR("schedule", "s1c1 0 nan", "\"nan\" is not a number", NULL);
  SET_ERROR("schedule", "0 1", "even", NULL); /* the coordinate forgotten: "0" is coordinate 0's name */
  SET_ERROR("schedule", "s1c1 0 1; s2c1 0 x", "entry 2 (\"s2c1 0 x\")", "\"x\" is not a number");
  SET_ERROR("schedule", "s1c1 0 1;; s2c1 0 1 2", "entry 3", "even");
  SET_ERROR("feedback", "s1c1 pivot 1 2", "COORD JOINT kp kd target", NULL);
  SET_ERROR("feedback", "s1c1 pivot 1 2 3 4", "COORD JOINT kp kd target", NULL);
  SET_ERROR("feedback", "s1c1 pivot 1 2 3 4 5 6", "COORD JOINT kp kd target", NULL);
  SET_ERROR("feedback", "s1c1", "COORD JOINT kp kd target", NULL);
  SET_ERROR("feedback", "s1c1 pivot 1 x 3", "\"x\" is not a number", NULL);
  SET_ERROR("feedback", "s1c1 pivot nan 0 1", "\"nan\" is not a number", NULL);
  SET_ERROR("feedback", "s1c1 pivot 1 0 1e999", "is not a number", NULL);
  SET_ERROR("feedback", "s1c1 1 2 3 4", "joint name", NULL); /* the joint forgotten */
  SET_ERROR("feedback", "pivot 1 0 1", "COORD JOINT", NULL); /* the coordinate forgotten */
  SET_ERROR("feedback", "s1c1 pivot 1 0 1 2 1", "ramp_start < ramp_end", NULL);
  SET_ERROR("feedback", "s1c1 pivot 1 0 1 1 1", "ramp_start < ramp_end", NULL);
  SET_ERROR("feedback", "s1c1 pivot 1 0 1; s1c2 pivot 1 0", "entry 2 (\"s1c2 pivot 1 0\")",
            "COORD JOINT");
  SET_ERROR("schedule/s1c1", "0 1", "unknown key \"schedule/s1c1\"", NULL); /* the old spelling */
  SET_ERROR("feedback/s1c1", "pivot 1 0 1", "unknown key", NULL);

  char many[4096] = "s1c1 ";
  for (int i = 0; i <= CUSP_MAX_KNOTS; i++) snprintf(many + strlen(many), 32, "%d 0 ", i);
  SET_ERROR("schedule", many, "more than 64 knots", "entry 1");
  char longjoint[128] = "s1c1 ";
  memset(longjoint + 5, 'j', 70);
  snprintf(longjoint + 75, sizeof longjoint - 75, " 1 0 1");
  SET_ERROR("feedback", longjoint, "longer than 63", NULL);
  char entries[4096] = "";
  for (int i = 0; i <= CUSP_MAX_ENTRIES; i++) snprintf(entries + strlen(entries), 32, "%d 0 0;", i + 1);
  SET_ERROR("schedule", entries, "more than 96 entries", NULL);

  SET_OK("ruiz_iterations", "0");
  SET_OK("ruiz_iterations", "100");
  SET_OK("stabilization", "1");
  SET_OK("friction", " 0 ");
  SET_OK("tikhonov", "0");
  SET_OK("surface_layer", "0");
  SET_OK("gear", "-2");
  SET_OK("self_contact", "true");
  SET_OK("fallback", "0");
  SET_OK("solver", "lemke");
  SET_OK("contact", "penalty");
  SET_OK("friction", "1e-1");
  SET_OK("feedback", "s1c1 pivot -2.5 0.5 1.57");
  SET_OK("feedback", " 9 slider 100 -1 0.02 0.5 1.5 ; s1c1 pivot -2.5 0.5 1.57;");
  SET_OK("feedback", "none");
  SET_OK("feedback", "");
  SET_OK("schedule", "s1c1 0 1; s2c2 0 1 1 2 ;");
  SET_OK("schedule", "none");

  /* a tiny error buffer is still terminated */
  cusp_instance_config *c = new_config();
  char small[8];
  memset(small, 'x', sizeof small);
  EXPECT(cusp_config_set(c, "stiffness", "abc", small, sizeof small) == -1, "small buffer");
  EXPECT(memchr(small, 0, sizeof small) != NULL, "small buffer not terminated");
  EXPECT(cusp_config_set(c, "stiffness", "abc", NULL, 0) == -1, "NULL buffer");
  EXPECT(cusp_config_set(c, NULL, "1", small, sizeof small) == -1, "NULL key");
  EXPECT(cusp_config_set(c, "friction", NULL, small, sizeof small) == -1, "NULL value");
  free(c);
}

static void test_lists(void) {
  char err[512];
  cusp_instance_config *c = new_config();
  /* lists before sections: resolved by finish */
  EXPECT(!set(c, "mass", "2", err) && !set(c, "length", "0.1 0.2 0.3 0.4 0.5", err) &&
             !set(c, "stiffness", "100 200 300 400 500", err) && !set(c, "sections", "5", err),
         "set: %s", err);
  EXPECT(cusp_config_finish(c, err, sizeof err) == 0, "finish: %s", err);
  int ok = 1;
  for (int i = 0; i < 5; i++)
    ok &= c->mass[i] == 2 && fabs(c->length[i] - 0.1 * (i + 1)) < 1e-15 &&
          c->stiffness[i] == 100 * (i + 1) && c->damping[i] == 125;
  EXPECT(ok, "per-section values");
  EXPECT(c->ncoord == 15 && c->ndisk == 36, "ncoord %d ndisk %d", c->ncoord, c->ndisk);
  EXPECT(fabs(c->disk[35].s - 0.5) < 1e-15 && c->disk[35].section == 4, "last plate");
  int n;
  double mass;
  EXPECT(builds(c, &n, &mass) && n == 15 && fabs(mass - 10) < 1e-9, "chain n %d mass %g", n, mass);
  /* finish is idempotent */
  EXPECT(cusp_config_finish(c, err, sizeof err) == 0 && c->ncoord == 15, "second finish: %s", err);
  /* wrong count */
  EXPECT(!set(c, "sections", "2", err), "sections 2");
  err[0] = 0;
  EXPECT(cusp_config_finish(c, err, sizeof err) == -1, "5 lengths for 2 sections accepted");
  EXPECT(has(err, "\"length\"") && has(err, "5 values") && has(err, "sections is 2"), "msg: %s",
         err);
  free(c);

  /* the default mass list is for 3 sections */
  c = new_config();
  set(c, "sections", "2", err);
  EXPECT(cusp_config_finish(c, err, sizeof err) == -1 && has(err, "\"mass\""),
         "default mass, 2 sections: %s", err);
  set(c, "mass", "0.5 0.25", err);
  EXPECT(cusp_config_finish(c, err, sizeof err) == 0 && c->mass[1] == 0.25 && c->ndisk == 15,
         "mass per section: %s", err);
  set(c, "mass", "0", err);
  EXPECT(cusp_config_finish(c, err, sizeof err) == -1 && has(err, "mass"), "pcc mass 0: %s", err);
  free(c);

  /* the largest arm fits, more disks do not */
  c = new_config();
  set(c, "sections", "16", err);
  set(c, "mass", "0.1", err);
  set(c, "disks", "30", err);
  EXPECT(cusp_config_finish(c, err, sizeof err) == 0 && c->ndisk == 1 + 16 * 31 && c->ncoord == 48,
         "16 sections 30 disks: %s", err);
  set(c, "disks", "64", err);
  EXPECT(cusp_config_finish(c, err, sizeof err) == -1 && has(err, "disks") && has(err, "1024"),
         "too many disks: %s", err);
  free(c);
}

/* An "initial" value accepted (ok), or refused with a message holding `says`. */
typedef struct {
  const char *value;
  int ok;
  const char *says;
} initial_case;

static void expect_initial(cusp_instance_config *c, const char *model, const initial_case *cases, size_t n) {
  char err[512];
  for (size_t k = 0; k < n; k++) {
    int rc = set(c, "initial", cases[k].value, err) ? -1 : cusp_config_finish(c, err, sizeof err);
    EXPECT(cases[k].ok ? rc == 0 : rc == -1 && has(err, "key \"initial\"") && has(err, cases[k].says),
           "%s initial %s: %s", model, cases[k].value, rc ? err : "accepted");
  }
}

static void test_coordinates(void) {
  char err[512];
  cusp_instance_config *c = new_config();
  set(c, "actuated", "s2c1 s3c2", err);
  EXPECT(cusp_config_finish(c, err, sizeof err) == 0, "finish: %s", err);
  int ok = 1;
  for (int i = 0; i < 9; i++) ok &= c->actuated[i] == (i == 3 || i == 7);
  EXPECT(ok, "actuated s2c1 s3c2");
  set(c, "actuated", "7 8", err);
  EXPECT(cusp_config_finish(c, err, sizeof err) == 0, "finish: %s", err);
  ok = 1;
  for (int i = 0; i < 9; i++) ok &= c->actuated[i] == (i == 6 || i == 7);
  EXPECT(ok, "actuated 7 8 = s3c1 s3c2");
  set(c, "actuated", "none", err);
  EXPECT(cusp_config_finish(c, err, sizeof err) == 0, "finish: %s", err);
  ok = 1;
  for (int i = 0; i < 9; i++) ok &= c->actuated[i] == 0;
  EXPECT(ok, "actuated none");
  set(c, "actuated", "s4c1", err);
  EXPECT(cusp_config_finish(c, err, sizeof err) == -1 && has(err, "\"actuated\"") &&
             has(err, "\"s4c1\""),
         "actuated s4c1: %s", err);
  set(c, "actuated", "10", err);
  EXPECT(cusp_config_finish(c, err, sizeof err) == -1 && has(err, "\"10\""), "actuated 10: %s",
         err);
  set(c, "actuated", "all", err);

  /* conditioning */
  set(c, "conditioning", "none", err);
  EXPECT(c->conditioning == 0, "conditioning none");
  set(c, "conditioning", "qr ruiz", err);
  EXPECT(c->conditioning == (CUSP_COND_QR | CUSP_COND_RUIZ), "conditioning qr ruiz");
  set(c, "conditioning", "tikhonov", err);
  EXPECT(c->conditioning == CUSP_COND_TIKHONOV, "conditioning tikhonov");

  /* initial */
  set(c, "initial", "0.01 0 0 0 0.02 0 0 0 -0.03", err);
  EXPECT(cusp_config_finish(c, err, sizeof err) == 0 && c->initial[0] == 0.01 &&
             c->initial[4] == 0.02 && c->initial[8] == -0.03,
         "initial positional: %s", err);
  set(c, "initial", "s2c2=0.02 9=-0.03", err);
  EXPECT(cusp_config_finish(c, err, sizeof err) == 0 && c->initial[0] == 0 &&
             c->initial[4] == 0.02 && c->initial[8] == -0.03,
         "initial pairs: %s", err);
  set(c, "initial", "0.01 0", err);
  EXPECT(cusp_config_finish(c, err, sizeof err) == -1 && has(err, "\"initial\"") &&
             has(err, "9 coordinates"),
         "initial count: %s", err);
  set(c, "initial", "s1kx=0.1", err);
  EXPECT(cusp_config_finish(c, err, sizeof err) == -1 && has(err, "\"s1kx\""), "initial name: %s",
         err);
  set(c, "initial", "", err);

  /* schedules: one key, entries "COORD t0 u0 ..." separated by ';' */
  EXPECT(!set(c, "schedule", "s1c1 0 0 1 10 2 -5; 8 0 1", err), "schedules: %s", err);
  EXPECT(cusp_config_finish(c, err, sizeof err) == 0, "finish: %s", err);
  EXPECT(c->nschedule == 2 && c->schedule[0].coord == 0 && c->schedule[0].nknot == 3 &&
             c->schedule[0].t[2] == 2 && c->schedule[0].u[2] == -5 && c->schedule[1].coord == 7 &&
             c->schedule[1].nknot == 1 && c->schedule[1].entry == 2 &&
             !strcmp(c->schedule[1].name, "8"),
         "schedule contents");
  set(c, "schedule", "s1c1 0 0 1 20", err); /* the key replaces the whole list */
  EXPECT(c->nschedule == 1 && c->schedule[0].nknot == 2 && c->schedule[0].u[1] == 20, "replace");
  set(c, "schedule", "s1c1 0 0; 8 0 1; s3c2 0 3", err); /* s3c2 is 8 */
  EXPECT(cusp_config_finish(c, err, sizeof err) == -1 && has(err, "already has a schedule") &&
             has(err, "key \"schedule\", entry 3 (\"s3c2 0 3\")") && has(err, "(entry 2)"),
         "dup: %s", err);
  EXPECT(!set(c, "schedule", "none", err) && c->nschedule == 0, "none empties the list");
  EXPECT(set(c, "schedule", "s1c1 0 1; s1c2 0 x", err) == -1 && c->nschedule == 0,
         "a failed set leaves the list alone");
  set(c, "schedule", "s1c1 0 0; 8 0 1", err);
  set(c, "actuated", "s1c1", err);
  EXPECT(cusp_config_finish(c, err, sizeof err) == -1 && has(err, "entry 2 (\"8 0 1\")") &&
             has(err, "not actuated"),
         "schedule on an unactuated coordinate: %s", err);
  set(c, "actuated", "all", err);
  set(c, "schedule", "s1c1 0 0 1 200", err);
  EXPECT(cusp_config_finish(c, err, sizeof err) == -1 && has(err, "ctrlrange"),
         "u out of range: %s", err);
  set(c, "schedule", "s1c1 0 0; s9c1 0 0", err);
  EXPECT(cusp_config_finish(c, err, sizeof err) == -1 &&
             has(err, "key \"schedule\", entry 2 (\"s9c1 0 0\"): no coordinate s9c1"),
         "unknown coord: %s", err);
  free(c);

  /* feedbacks: parsed values, the coordinate and its schedule resolved by finish */
  c = new_config();
  EXPECT(!set(c, "schedule", "s2c1 0 1 1 3", err) &&
             !set(c, "feedback", "s2c1 pivot 120 -4 1.5 0.5 3; 9 slide -7 0 0.25", err),
         "feedbacks: %s", err);
  EXPECT(cusp_config_finish(c, err, sizeof err) == 0, "finish: %s", err);
  const cusp_feedback *f = c->feedback;
  EXPECT(c->nfeedback == 2 && !strcmp(f[0].joint, "pivot") && f[0].kp == 120 && f[0].kd == -4 &&
             f[0].target == 1.5 && f[0].ramped && f[0].ramp[0] == 0.5 && f[0].ramp[1] == 3 &&
             f[0].coord == 3 && f[0].schedule == 0,
         "feedback contents");
  EXPECT(!strcmp(f[1].joint, "slide") && f[1].kp == -7 && f[1].target == 0.25 && !f[1].ramped &&
             f[1].coord == 8 && f[1].schedule == -1,
         "feedback without ramp or schedule");
  set(c, "feedback", "s2c1 pivot 120 -4 1.5 0.5 3; 9 hinge 1 0 0", err); /* replaces */
  EXPECT(c->nfeedback == 2 && !strcmp(c->feedback[1].joint, "hinge"), "feedback replaced");
  set(c, "feedback", "9 hinge 1 0 0; s3c3 pivot 1 0 0", err); /* the coordinate of 9 again */
  EXPECT(cusp_config_finish(c, err, sizeof err) == -1 && has(err, "entry 2 (\"s3c3 pivot 1 0 0\")") &&
             has(err, "already has a feedback"),
         "two feedbacks on one coordinate: %s", err);
  set(c, "feedback", "9 hinge 1 0 0", err);
  EXPECT(c->nfeedback == 1 && cusp_config_finish(c, err, sizeof err) == 0, "one left: %s", err);
  set(c, "actuated", "s2c1 s3c1", err);
  EXPECT(cusp_config_finish(c, err, sizeof err) == -1 && has(err, "key \"feedback\", entry 1") &&
             has(err, "not actuated"),
         "feedback on an unactuated coordinate: %s", err);
  set(c, "actuated", "all", err);
  set(c, "feedback", "s4c1 pivot 1 0 0", err);
  EXPECT(cusp_config_finish(c, err, sizeof err) == -1 &&
             has(err, "entry 1 (\"s4c1 pivot 1 0 0\"): no coordinate s4c1"),
         "feedback on an unknown coordinate: %s", err);
  free(c);

  /* the declared keys: each once, fewer than MuJoCo's 255, each one cusp_config_set knows */
  int nkey = 0;
  const char *const *keys = cusp_config_keys(&nkey);
  EXPECT(keys && nkey > 30 && nkey < 256, "%d declared keys", nkey);
  int unique = 1, known = 1;
  for (int i = 0; i < nkey; i++) {
    for (int j = 0; j < i; j++) unique &= strcmp(keys[i], keys[j]) != 0;
    c = new_config();
    err[0] = 0;
    set(c, keys[i], "?", err);
    known &= !has(err, "unknown key");
    if (has(err, "unknown key")) fprintf(stderr, "key %s: %s\n", keys[i], err);
    free(c);
  }
  EXPECT(unique && known, "declared keys unique (%d) and known (%d)", unique, known);

  /* cosserat */
  c = new_config();
  EXPECT(!set(c, "strains", "ez kx ky kz", err) && !set(c, "model", "cosserat", err) &&
             !set(c, "sections", "2", err) && !set(c, "mass", "0", err) &&
             !set(c, "radius", "0.01", err) && !set(c, "length", "0.2 0.3", err),
         "cosserat keys: %s", err);
  EXPECT(cusp_config_finish(c, err, sizeof err) == 0, "cosserat finish: %s", err);
  EXPECT(c->ncoord == 8, "cosserat ncoord %d", c->ncoord);
  const char *names[] = {"s1kx", "s1ky", "s1kz", "s1ez", "s2kx", "s2ky", "s2kz", "s2ez"};
  ok = 1;
  for (int i = 0; i < 8; i++) ok &= !strcmp(c->coord[i], names[i]);
  EXPECT(ok, "cosserat names in twist order");
  int n;
  double mass;
  EXPECT(builds(c, &n, &mass) && n == 8 && fabs(mass - 1000 * M_PI * 1e-4 * 0.5) < 1e-9,
         "cosserat chain n %d mass %g", n, mass);
  set(c, "strains", "kx ky kz ex ey ez", err);
  EXPECT(cusp_config_finish(c, err, sizeof err) == 0 && c->ncoord == 12 &&
             !strcmp(c->coord[11], "s2ez"),
         "all strains: %s", err);
  EXPECT(builds(c, &n, &mass) && n == 12, "6-strain chain builds");
  /* initial: each coordinate within its own plausible range (radius 0.02 m:
   * curvature within +-50 1/m; shear +-1; stretch ez -0.5 .. 1) */
  set(c, "radius", "0.02", err);
  const initial_case cosserat_initial[] = {
      {"s1kx=50 s2kz=-50 s1ex=1 s2ey=-1 s1ez=-0.5 s2ez=1", 1, NULL},
      {"s1kx=51", 0, "s1kx = 51 is out of range: outside the plausible range -50 .. 50 1/m"},
      {"s2kz=-50.5", 0, "radius 0.02 m"},
      {"s1ex=1.01", 0, "shear within +-1"},
      {"s2ez=-0.51", 0, "a stretch 1 + ez of 0.5 .. 2"},
      {"s2ez=1.1", 0, "-0.5 .. 1"},
  };
  expect_initial(c, "cosserat", cosserat_initial, sizeof cosserat_initial / sizeof cosserat_initial[0]);
  free(c);

  /* pcc: a chamber elongation within -0.5 .. 1 times its section's length */
  c = new_config();
  set(c, "length", "0.1 0.2 0.3", err);
  const initial_case pcc_initial[] = {
      {"s1c1=0.1 s1c2=-0.05 s2c3=0.2 s3c1=-0.15", 1, NULL},
      {"s1c1=0.1001", 0, "s1c1 = 0.1001 is out of range: outside the plausible range -0.05 .. 0.1 m"},
      {"s3c2=-0.16", 0, "-0.5 .. 1 times section 3's length 0.3 m"},
      {"0 0 0 0 0 0 0 0 100", 0, "s3c3 = 100"},
  };
  expect_initial(c, "pcc", pcc_initial, sizeof pcc_initial / sizeof pcc_initial[0]);
  free(c);
}

static cusp_instance_config *read_instance(const mjModel *m, int i);

/* ---------- the key table (issue 14 item 7, issue 19 items 1 and 4) ---------- */

/* cusp_config_keys, the live slots and the word lists agree with the table. */
static void test_key_table(void) {
  int n = 0, nn = 0;
  const cusp_key *k = cusp_keys(&n);
  const char *const *names = cusp_config_keys(&nn);
  EXPECT(n == 62 && nn == n, "%d keys, %d declared", n, nn);
  int same = 1, found = 1;
  for (int i = 0; i < n && i < nn; i++) {
    same &= !strcmp(names[i], k[i].name);
    found &= cusp_key_find(k[i].name) == &k[i];
  }
  EXPECT(same && found, "declared names are the table's, in its order");
  EXPECT(!cusp_key_find("nope") && !cusp_key_find(NULL), "unknown keys are not found");
  /* every live slot belongs to exactly one key; the state's order is kept */
  int slots[CUSP_NLIVE] = {0}, nlive = 0;
  for (int i = 0; i < n; i++)
    if (k[i].live) {
      nlive++;
      if (k[i].live >= 1 && k[i].live <= CUSP_NLIVE) slots[k[i].live - 1]++;
    }
  int once = nlive == CUSP_NLIVE;
  for (int s = 0; s < CUSP_NLIVE; s++) once &= slots[s] == 1 && cusp_live_key_of(s)->live == s + 1;
  EXPECT(once, "%d live keys, each slot once", nlive);
  EXPECT(!strcmp(cusp_live_key_of(CUSP_LIVE_CONTACT)->name, "contact") &&
             !strcmp(cusp_live_key_of(CUSP_LIVE_PENALTY_DAMPING)->name, "penalty_damping") &&
             !strcmp(cusp_live_key_of(CUSP_LIVE_FRICTION)->name, "friction") &&
             cusp_live_key_of(CUSP_NLIVE) == NULL && cusp_live_key_of(-1) == NULL,
         "live slots in the state's order");
  const cusp_key *solver = cusp_key_find("solver"), *strains = cusp_key_find("strains"),
                 *cond = cusp_key_find("conditioning");
  int words = solver->nwords == SB_LCP_NSOLVERS && strains->nwords == 6 && cond->nwords == 3;
  for (int i = 0; words && i < SB_LCP_NSOLVERS; i++)
    words &= !strcmp(solver->words[i], sb_lcp_solver_name((sb_lcp_solver)i));
  EXPECT(words, "solver words are sb_lcp_solver's");
  cusp_instance_config *c = new_config();
  char err[512];
  EXPECT(!set(c, "strains", "kx ez", err) && c->strains == (SB_KX | SB_EZ), "strain bits");
  EXPECT(!set(c, "conditioning", "ruiz", err) && c->conditioning == CUSP_COND_RUIZ, "stage bits");
  free(c);
  /* every key has a unit string, a one-line doc and a default for some model */
  int documented = 1;
  for (int i = 0; i < n; i++)
    documented &= k[i].unit && k[i].doc && k[i].doc[0] && !strchr(k[i].doc, '\n') &&
                  (k[i].def[0] || k[i].def[1]);
  EXPECT(documented, "every key documented");
}

/* A model's configuration: the defaults, with `model` set first. */
static cusp_instance_config *model_config(int cosserat) {
  cusp_instance_config *c = new_config();
  char err[512];
  if (cosserat) set(c, "model", "cosserat", err);
  return c;
}

/* Defaults per model are what the table says, and every value prints as
 * text that reads back to itself. */
static void test_key_defaults(void) {
  int n;
  const cusp_key *k = cusp_keys(&n);
  char err[512], a[4096], b[4096];
  for (int m = 0; m < 2; m++) {
    cusp_instance_config *c = model_config(m);
    EXPECT(cusp_config_finish(c, err, sizeof err) == 0, "model %d defaults finish: %s", m, err);
    for (int i = 0; i < n; i++) {
      if (!k[i].def[m]) continue;
      cusp_instance_config *d = model_config(m);
      EXPECT(set(d, k[i].name, k[i].def[m], err) == 0, "%s default \"%s\": %s", k[i].name,
             k[i].def[m], err);
      cusp_config_finish(d, err, sizeof err);
      EXPECT(cusp_config_format(c, &k[i], a, sizeof a) == 0 &&
                 cusp_config_format(d, &k[i], b, sizeof b) == 0 && !strcmp(a, b),
             "model %s: %s is \"%s\", the table says \"%s\" (\"%s\")", m ? "cosserat" : "pcc",
             k[i].name, a, k[i].def[m], b);
      free(d);
      /* round trip: the printed value sets the same value */
      d = model_config(m);
      EXPECT(set(d, k[i].name, a, err) == 0, "%s: printed \"%s\" does not read back: %s",
             k[i].name, a, err);
      cusp_config_format(d, &k[i], b, sizeof b);
      EXPECT(!strcmp(a, b), "%s: \"%s\" reads back as \"%s\"", k[i].name, a, b);
      free(d);
    }
    free(c);
  }
  /* the cosserat defaults: no pcc masses, density x volume */
  cusp_instance_config *c = model_config(1);
  EXPECT(cusp_config_finish(c, err, sizeof err) == 0 && c->nmass == 1 && c->mass[0] == 0 &&
             c->mass[2] == 0 && c->young == 1e6 && c->density == 1000,
         "cosserat defaults: mass %g (%d values) %s", c->mass[0], c->nmass, err);
  free(c);
  /* lists, schedules and feedbacks print and read back */
  c = new_config();
  EXPECT(!set(c, "sections", "2", err) && !set(c, "mass", "0.5 0.25", err) &&
             !set(c, "schedule", "s1c1 0 1 0.5 2; 5 0 -3", err) &&
             !set(c, "feedback", "s2c1 pivot 120 -4 1.5 0.5 3; s2c2 slide -7 0 0.25", err) &&
             !set(c, "initial", "s2c2=0.02", err) && !set(c, "actuated", "s1c1 s2c1 s2c2 5", err) &&
             !set(c, "ctrlrange", "-5 7.5", err) && !set(c, "conditioning", "none", err) &&
             cusp_config_finish(c, err, sizeof err) == 0,
         "configured: %s", err);
  static const char *const expect[][2] = {
      {"mass", "0.5 0.25"},       {"schedule", "s1c1 0 1 0.5 2; 5 0 -3"},
      {"feedback", "s2c1 pivot 120 -4 1.5 0.5 3; s2c2 slide -7 0 0.25"},
      {"initial", "s2c2=0.02"},   {"ctrlrange", "-5 7.5"},
      {"conditioning", "none"},   {"contact", "lcp"},
      {"friction", "0.5"},        {"fallback", "1"}};
  for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++) {
    cusp_config_format(c, cusp_key_find(expect[i][0]), a, sizeof a);
    EXPECT(!strcmp(a, expect[i][1]), "%s prints \"%s\", expected \"%s\"", expect[i][0], a,
           expect[i][1]);
    cusp_instance_config *d = new_config();
    EXPECT(!set(d, "sections", "2", err) && !set(d, expect[i][0], a, err), "%s: %s", a, err);
    cusp_config_format(d, cusp_key_find(expect[i][0]), b, sizeof b);
    EXPECT(!strcmp(a, b), "%s reads back as \"%s\"", a, b);
    free(d);
  }
  char tiny[6];
  EXPECT(cusp_config_format(c, cusp_key_find("schedule"), tiny, sizeof tiny) == -1 &&
             memchr(tiny, 0, sizeof tiny),
         "a value that does not fit: -1, terminated");
  free(c);
}

/* Issue 19 item 4: a Cosserat instance does not inherit the pcc arm's
 * masses; a pcc arm of another section count is told to set them. */
static void test_model_defaults(void) {
  char err[1024];
  cusp_instance_config *c = new_config();
  EXPECT(!set(c, "model", "cosserat", err) && !set(c, "sections", "10", err) &&
             !set(c, "density", "1200", err) && cusp_config_finish(c, err, sizeof err) == 0,
         "cosserat, 10 sections, density, no mass: %s", err);
  int nq;
  double mass;
  EXPECT(builds(c, &nq, &mass) && fabs(mass - 1200 * M_PI * 0.025 * 0.025 * 1.5) < 1e-9,
         "density x volume: %g kg", mass);
  /* model set last: the same */
  free(c);
  c = new_config();
  EXPECT(!set(c, "sections", "10", err) && !set(c, "model", "cosserat", err) &&
             cusp_config_finish(c, err, sizeof err) == 0,
         "model after sections: %s", err);
  /* a mass that is set is kept, whatever the model */
  EXPECT(!set(c, "mass", "0.1", err) && !set(c, "model", "pcc", err) &&
             !set(c, "model", "cosserat", err) && cusp_config_finish(c, err, sizeof err) == 0 &&
             c->mass[9] == 0.1,
         "set mass kept: %s", err);
  free(c);
  /* back to pcc, masses unset: pcc's 3-section default and a message that says so */
  c = new_config();
  set(c, "model", "cosserat", err);
  set(c, "sections", "10", err);
  EXPECT(cusp_config_finish(c, err, sizeof err) == 0, "cosserat: %s", err);
  set(c, "model", "pcc", err);
  EXPECT(cusp_config_finish(c, err, sizeof err) == -1 && has(err, "key \"mass\": not set") &&
             has(err, "model pcc") && has(err, "1.17 0.54 0.265") && has(err, "sections is 10"),
         "pcc, 10 sections, no mass: %s", err);
  set(c, "sections", "3", err);
  EXPECT(cusp_config_finish(c, err, sizeof err) == 0 && c->mass[0] == 1.17 && c->mass[2] == 0.265,
         "pcc, 3 sections: the CUSP arm's masses: %s", err);
  free(c);

  /* the scene of issue 19: loads and runs */
  const char *p = arm_scene("cosserat10.xml",
                            "<config key=\"model\" value=\"cosserat\"/>\n"
                            "<config key=\"sections\" value=\"10\"/>\n"
                            "<config key=\"length\" value=\"0.05\"/>\n"
                            "<config key=\"disks\" value=\"1\"/>\n"
                            "<config key=\"density\" value=\"1100\"/>");
  mjModel *m = cusp_load(p, err, sizeof err);
  EXPECT(m, "cosserat, 10 sections, density, no mass: %s", err);
  if (m) {
    cusp_instance_config *r = read_instance(m, 0);
    EXPECT(r && r->sections == 10 && r->mass[0] == 0 && r->ncoord == 30, "read back");
    free(r);
    mjData *d = mj_makeData(m);
    EXPECT(d, "mj_makeData: %s", cusp_last_error());
    if (d) {
      for (int i = 0; i < 20; i++) mj_step(m, d);
      EXPECT(fabs(cusp_total_mass(m, d, 0) - 1100 * M_PI * 0.025 * 0.025 * 0.5) < 1e-9,
             "total mass %g", cusp_total_mass(m, d, 0));
      mj_deleteData(d);
    }
    mj_deleteModel(m);
  }
  p = arm_scene("pcc10.xml", "<config key=\"sections\" value=\"10\"/>");
  LOAD_ERROR(p, "key \"mass\": not set", "sections is 10");
}

/* Issue 19 item 1: absurd numbers are refused, the message naming the
 * instance, key, value and range; the ends of each plausible range pass. */
static void test_plausible(void) {
  int n;
  const cusp_key *k = cusp_keys(&n);
  static const char *const absurd[] = {"1e308", "-1e308", "1e-308", "4.9e-324", "-4.9e-324"};
  char err[512];
  int nreal = 0;
  for (int i = 0; i < n; i++) {
    if (k[i].kind != CUSP_KEY_REAL && k[i].kind != CUSP_KEY_SECTIONS) continue;
    nreal++;
    for (size_t j = 0; j < sizeof absurd / sizeof absurd[0]; j++) {
      cusp_instance_config *c = new_config();
      err[0] = 0;
      int rc = set(c, k[i].name, absurd[j], err);
      char value[32];
      snprintf(value, sizeof value, "\"%s\"", absurd[j]);
      EXPECT(rc == -1 && has(err, "instance \"arm\"") && has(err, k[i].name) && has(err, value) &&
                 (has(err, "plausible range") || has(err, "must be")),
             "%s = %s: rc %d \"%s\"", k[i].name, absurd[j], rc, err);
      free(c);
    }
    /* -1: refused, but by gear (either sign) */
    cusp_instance_config *c = new_config();
    EXPECT((set(c, k[i].name, "-1", err) == 0) == !strcmp(k[i].name, "gear"), "%s = -1", k[i].name);
    free(c);
    /* the plausible range's ends pass (and 0 where it means something) */
    char lo[32], hi[32];
    snprintf(lo, sizeof lo, "%.17g", (k[i].flags & CUSP_KEY_MAGNITUDE) ? -k[i].phi : k[i].plo);
    snprintf(hi, sizeof hi, "%.17g", k[i].phi);
    c = new_config();
    EXPECT(set(c, k[i].name, lo, err) == 0 && set(c, k[i].name, hi, err) == 0 &&
               (!k[i].zero || set(c, k[i].name, "0", err) == 0),
           "%s: %s .. %s: %s", k[i].name, lo, hi, err);
    free(c);
  }
  EXPECT(nreal == 30, "%d number keys checked", nreal);

  /* the messages say the range */
  SET_ERROR("length", "1e308", "\"1e308\" is out of range: outside the plausible range 0.001 .. 10 m", NULL);
  SET_ERROR("length", "0.15 0.2 11", "\"11\" is out of range", "0.001 .. 10 m");
  SET_ERROR("mass", "1e-308", "plausible range 0 (cosserat: density x volume), or 0.0001 .. 1000 kg", NULL);
  SET_ERROR("mass", "4.9e-324", "\"4.9e-324\"", "0.0001 .. 1000 kg");
  SET_ERROR("radius", "1e308", "0.0001 .. 1 m", NULL);
  SET_ERROR("disk_radius", "4.9e-324", "0.0001 .. 1 m", NULL);
  SET_ERROR("disk_thickness", "2", "0.0001 .. 1 m", NULL);
  SET_ERROR("chamber_radius", "1e-308", "0.0001 .. 1 m", NULL);
  SET_ERROR("stiffness", "1e308", "0 (no spring), or 0.01 .. 1e7 N/m", NULL);
  SET_ERROR("damping", "4.9e-324", "0 (undamped), or 0.001 .. 1e6 N*s/m", NULL);
  SET_ERROR("young", "1e308", "100 .. 1e12 Pa", "steel");
  SET_ERROR("density", "4.9e-324", "1 .. 100000 kg/m^3", NULL);
  SET_ERROR("friction", "1e308", "0 (frictionless), or 0.0001 .. 10", NULL);
  SET_ERROR("tikhonov", "1e308", "0 (off), or 1e-16 .. 1e-6", "10,000 iterations");
  SET_ERROR("tikhonov", "4.9e-324", "1e-16 .. 1e-6", NULL);
  SET_ERROR("tikhonov", "1e-3", "1e-16 .. 1e-6", "stop converging");
  SET_ERROR("eps_rank", "1e-308", "1e-15 .. 0.1", NULL);
  SET_ERROR("penalty_stiffness", "1e308", "1 .. 1e8 N/m", NULL);
  SET_ERROR("penalty_stiffness", "4.9e-324", "1 .. 1e8 N/m", NULL);
  SET_ERROR("penalty_damping", "1e308", "1e6", NULL);
  SET_ERROR("gear", "1e308", "-1e6 .. -1e-6 or 1e-6 .. 1e6", NULL);
  SET_ERROR("gear", "-4.9e-324", "1e-6 .. 1e6", NULL);
  SET_ERROR("gear", "0", "nonzero", NULL);
  SET_ERROR("ctrlrange", "-1e308 1e308", "\"-1e308\" is out of range", "-1e6 .. 1e6");
  SET_ERROR("ctrlrange", "0 1e308", "\"1e308\"", "-1e6 .. 1e6");
  SET_ERROR("ctrlrange", "0 4.9e-324", "hi - lo must be at least 1e-06", NULL);
  SET_ERROR("ctrlrange", "-4.9e-324 0", "hi - lo", NULL);
  SET_ERROR("initial", "1e308 0 0 0 0 0 0 0 0", "\"1e308\"", "-100 .. 100");
  SET_ERROR("initial", "s1c1=-1e308", "\"-1e308\"", "-100 .. 100");
  SET_ERROR("feedback", "s1c1 pivot 1e308 0 1", "entry 1", "kp = 1e+308 is out of range");
  SET_ERROR("feedback", "s1c1 pivot 1 -1e7 1", "kd", "-1e+06 .. 1e+06");
  SET_ERROR("feedback", "s1c1 pivot 1 0 1e308", "target", "-1000 .. 1000");
  SET_ERROR("feedback", "s1c1 pivot 1 0 1 -1 2", "ramp_start", "0 .. 1e+06");
  /* integers: 2^31 and beyond, negatives, below the minimum */
  static const char *const ints[] = {"sections", "disks", "pyramid", "ruiz_iterations"};
  static const char *const bad[] = {"2147483648", "-2147483649", "4294967296", "-1", "1e3"};
  for (size_t i = 0; i < 4; i++)
    for (size_t j = 0; j < 5; j++) {
      cusp_instance_config *c = new_config();
      err[0] = 0;
      char value[32];
      snprintf(value, sizeof value, "\"%s\"", bad[j]);
      EXPECT(set(c, ints[i], bad[j], err) == -1 && has(err, ints[i]) && has(err, value) &&
                 (has(err, "must be an integer in") || has(err, "not an integer")),
             "%s = %s: %s", ints[i], bad[j], err);
      free(c);
    }
  SET_ERROR("sections", "2147483648", "must be an integer in 1..128", NULL);
  SET_ERROR("disks", "-1", "must be an integer in 0..64", NULL);

  /* at load: the file, instance, key, value and range */
  const char *p = arm_scene("absurd.xml", "<config key=\"length\" value=\"1e308\"/>");
  LOAD_ERROR(p, "absurd.xml: instance \"arm\": key \"length\": \"1e308\"", "0.001 .. 10 m");
  p = arm_scene("absurd_gear.xml", "<config key=\"gear\" value=\"4.9e-324\"/>");
  LOAD_ERROR(p, "key \"gear\": \"4.9e-324\"", "1e-6 .. 1e6");
  cusp_override ov[] = {{"arm", "penalty_stiffness", "1e308"}};
  expect_load_error(SCENES "arm.xml", ov, 1, "key \"penalty_stiffness\": \"1e308\"", "1 .. 1e8 N/m",
                    __LINE__);
}

/* ---------- the expansion ---------- */

static int name_id(const mjModel *m, int type, const char *name) {
  return mj_name2id(m, type, name);
}

/* Instance i of a compiled model as the plugin reads it (malloc'd; NULL
 * with the message printed). */
static cusp_instance_config *read_instance(const mjModel *m, int i) {
  cusp_instance_config *c = malloc(sizeof *c);
  char err[1024];
  if (c && cusp_instance_read(m, i, c, err, sizeof err) == 0) return c;
  fprintf(stderr, "cusp_instance_read %d: %s\n", i, err);
  free(c);
  return NULL;
}

static void test_arm_scene(void) {
  char err[1024] = "";
  mjModel *m = cusp_load(SCENES "arm.xml", err, sizeof err);
  EXPECT(m, "arm.xml: %s", err);
  if (!m) return;
  EXPECT(cusp_instance_count(m) == 1 && cusp_instance_find(m, "arm") == 0 &&
             cusp_instance_find(m, "nope") == -1 && !strcmp(cusp_instance_name(m, 0), "arm") &&
             cusp_instance_name(m, 1) == NULL && cusp_instance_name(m, -1) == NULL,
         "instance queries");
  EXPECT(cusp_plugin_instance(m, 0) == 0 && cusp_plugin_instance(m, 1) == -1 &&
             cusp_soft_instance(m, 0) == 0 && cusp_soft_instance(m, 1) == -1,
         "plugin <-> soft instance ids");
  cusp_instance_config *c = read_instance(m, 0);
  EXPECT(c, "cusp_instance_read");
  if (!c) {
    mj_deleteModel(m);
    return;
  }
  EXPECT(!strcmp(c->base_body, "mount") && c->base_body_id == name_id(m, mjOBJ_BODY, "mount") &&
             m->body_plugin[c->base_body_id] == 0,
         "base body %s %d", c->base_body, c->base_body_id);
  EXPECT(c->gear == 2 && c->disk_radius == 0.035 && c->ctrlrange[1] == 60, "keys read back");
  EXPECT(c->ndisk == 22 && m->nmocap == 22, "ndisk %d nmocap %d", c->ndisk, (int)m->nmocap);
  int ok = 1;
  for (int k = 0; k < c->ndisk; k++) {
    char name[64];
    snprintf(name, sizeof name, "arm/disk%d", k);
    int b = name_id(m, mjOBJ_BODY, name), g = name_id(m, mjOBJ_GEOM, name);
    const cusp_disk *d = &c->disk[k];
    ok &= b >= 0 && g >= 0 && d->body_id == b && d->geom_id == g &&
          m->body_mocapid[b] == d->mocap_id && d->mocap_id >= 0 && m->body_parentid[b] == 0 &&
          m->geom_bodyid[g] == b && m->geom_type[g] == mjGEOM_CYLINDER && m->geom_contype[g] == 0 &&
          m->geom_conaffinity[g] == 0 && fabs(m->geom_size[3 * g] - 0.035) < 1e-12 &&
          fabs(m->geom_size[3 * g + 1] - 0.006) < 1e-12 && fabs(m->geom_rgba[4 * g] - 0.95f) < 1e-6;
    int sec = k == 0 ? 0 : (k - 1) / 7, j = k == 0 ? 0 : (k - 1) % 7 + 1;
    ok &= d->section == sec && fabs(d->s - 0.15 * j / 7) < 1e-15;
    /* the straight arm hangs from the mount (turned 180 degrees about x) */
    double z = 1 - 0.15 * sec - 0.15 * j / 7;
    ok &= fabs(m->body_pos[3 * b + 2] - z) < 1e-12 && fabs(m->body_pos[3 * b]) < 1e-12;
    int inst = -1;
    double s = -1;
    ok &= cusp_disk_of_body(m, b, &inst, &s) == 0 && inst == 0 && fabs(s - (1 - z)) < 1e-12;
  }
  EXPECT(ok, "disk bodies, geoms, arc lengths and initial poses");
  EXPECT(cusp_disk_of_body(m, c->base_body_id, NULL, NULL) == -1 &&
             cusp_disk_of_body(m, -1, NULL, NULL) == -1 && cusp_disk_of_body(m, (int)m->nbody, NULL, NULL) == -1,
         "cusp_disk_of_body refuses other bodies");
  int site = name_id(m, mjOBJ_SITE, "arm/act");
  EXPECT(site >= 0 && m->site_bodyid[site] == c->disk[0].body_id, "site arm/act on disk 0");
  EXPECT(m->nu == 10, "nu %d (push + 9)", (int)m->nu);
  EXPECT(name_id(m, mjOBJ_ACTUATOR, "push") == 0, "the scene's actuator stays first");
  ok = 1;
  for (int i = 0; i < 9; i++) {
    char name[64];
    snprintf(name, sizeof name, "arm/s%dc%d", i / 3 + 1, i % 3 + 1);
    int a = name_id(m, mjOBJ_ACTUATOR, name);
    ok &= a >= 1 && c->actuator_id[i] == a && !strcmp(c->coord[i], name + 4) &&
          m->actuator_trntype[a] == mjTRN_SITE && m->actuator_trnid[2 * a] == site &&
          m->actuator_ctrllimited[a] && m->actuator_ctrlrange[2 * a] == -50 &&
          m->actuator_ctrlrange[2 * a + 1] == 60 && m->actuator_gear[6 * a] == 2 &&
          m->actuator_gear[6 * a + 1] == 0 && m->actuator_gainprm[mjNGAIN * a] == 1 &&
          m->actuator_biastype[a] == mjBIAS_NONE && m->actuator_dyntype[a] == mjDYN_NONE;
  }
  EXPECT(ok, "actuators arm/s1c1..s3c3");
  /* a mocap body has no dofs: MuJoCo applies nothing */
  EXPECT(m->nv == 1, "nv %d", (int)m->nv);
  /* the scene's own elements are kept, and the mark */
  EXPECT(name_id(m, mjOBJ_GEOM, "floor") >= 0 && name_id(m, mjOBJ_BODY, "cart") >= 0, "scene kept");
  int t = name_id(m, mjOBJ_TEXT, "cusp/arm");
  EXPECT(t >= 0 && !strcmp(m->text_data + m->text_adr[t], CUSP_EXPANDED_MARK "\n"),
         "text cusp/arm holds the mark");
  mjData *d = mj_makeData(m);
  EXPECT(d, "mj_makeData: %s", cusp_last_error());
  if (d) {
    mj_step(m, d);
    EXPECT(d->time > 0, "steps");
    mj_deleteData(d);
  }
  free(c);
  mj_deleteModel(m);
}

static void test_two_arms(void) {
  char err[1024] = "";
  mjModel *m = cusp_load(SCENES "two_arms.xml", err, sizeof err);
  EXPECT(m, "two_arms.xml: %s", err);
  if (!m) return;
  EXPECT(cusp_instance_count(m) == 2 && cusp_instance_find(m, "rod") == 1 &&
             !strcmp(cusp_instance_name(m, 0), "left"),
         "two instances");
  cusp_instance_config *c0 = read_instance(m, 0), *c1 = read_instance(m, 1);
  if (c0 && c1) {
    EXPECT(c0->ndisk == 1 + 1 * 2 && c1->ndisk == 1 + 2 * 4, "ndisk %d %d", c0->ndisk, c1->ndisk);
    EXPECT(m->nmocap == c0->ndisk + c1->ndisk, "nmocap");
    int none = 1;
    for (int i = 0; i < c0->ncoord; i++) none &= c0->actuator_id[i] == -1;
    EXPECT(none && name_id(m, mjOBJ_ACTUATOR, "left/s1c1") < 0, "left: actuated none");
    EXPECT(m->nu == 8 && c1->ncoord == 8, "nu %d rod ncoord %d", (int)m->nu, c1->ncoord);
    EXPECT(name_id(m, mjOBJ_ACTUATOR, "rod/s2kz") == c1->actuator_id[6] && c1->actuator_id[6] >= 0,
           "rod actuator");
    EXPECT(c1->initial[0] == 0.5 && c1->initial[7] == 0.01, "rod initial");
    EXPECT(c1->nschedule == 1 && c1->schedule[0].coord == 5 && !strcmp(c1->coord[5], "s2ky"),
           "rod schedule");
    EXPECT(!strcmp(c1->base_body, "rod_mount") &&
               c1->base_body_id == name_id(m, mjOBJ_BODY, "rod_mount"),
           "nested base body");
    /* the rod starts bent (s1kx = 0.5): its disks are off the mount's vertical */
    int b = c1->disk[c1->ndisk - 1].body_id;
    EXPECT(b >= 0 && fabs(m->body_pos[3 * b + 1]) > 1e-3, "initial pose of a bent rod");
  }
  free(c0);
  free(c1);
  mj_deleteModel(m);
}

static void test_includes(void) {
  char err[1024] = "";
  mjModel *m = cusp_load(SCENES "arm_include.xml", err, sizeof err);
  EXPECT(m, "arm_include.xml: %s", err);
  if (m) {
    cusp_instance_config *c = read_instance(m, 0);
    EXPECT(c && c->sections == 2 && c->mass[1] == 0.8 && c->ndisk == 7, "included keys");
    if (c)
      EXPECT(!strcmp(c->base_body, "arm/base") &&
                 c->base_body_id == name_id(m, mjOBJ_BODY, "arm/base"),
             "unnamed base body named %s", c->base_body);
    EXPECT(m->nu == 2 && name_id(m, mjOBJ_ACTUATOR, "arm/s2c1") >= 0 &&
               name_id(m, mjOBJ_ACTUATOR, "arm/s2c3") >= 0 && c && c->actuator_id[0] == -1,
           "actuated s2c1 s2c3: nu %d", (int)m->nu);
    EXPECT(name_id(m, mjOBJ_GEOM, "floor") >= 0, "included floor");
    free(c);
    mj_deleteModel(m);
  }
  m = cusp_load(SCENES "include_mujoco_rule.xml", err, sizeof err);
  EXPECT(m && name_id(m, mjOBJ_GEOM, "floor") >= 0, "include next to the scene (MuJoCo's rule): %s",
         err);
  if (m) mj_deleteModel(m);
  LOAD_ERROR(SCENES "include_missing.xml", "no_such_file.xml", "line 2");
  LOAD_ERROR(SCENES "include_cycle.xml", "cycle_a.xml", "already included");

  /* a key error inside an included file names the scene, instance and key */
  write_tmp("keys_bad.xml", "<mujoco>\n  <config key=\"friction\" value=\"-1\"/>\n</mujoco>\n");
  const char *p = arm_scene("inc_bad.xml", "<include file=\"keys_bad.xml\"/>");
  LOAD_ERROR(p, "inc_bad.xml: instance \"arm\": key \"friction\"", ">= 0");
  /* an include whose root is not <mujoco> */
  write_tmp("notmujoco.xml", "<worldbody/>\n");
  p = write_tmp("inc_root.xml", "<mujoco><include file=\"notmujoco.xml\"/></mujoco>");
  LOAD_ERROR(p, "inc_root.xml", "mujoco");
  p = write_tmp("inc_nofile.xml", "<mujoco><include/></mujoco>");
  LOAD_ERROR(p, "inc_nofile.xml", "file");
  p = write_tmp("inc_self.xml", "<mujoco><include file=\"inc_self.xml\"/></mujoco>");
  LOAD_ERROR(p, "inc_self.xml", "already included");
}

static void test_assets(void) {
  char err[1024] = "";
  mjModel *m = cusp_load(SCENES "mesh_arm.xml", err, sizeof err);
  EXPECT(m && m->nmesh == 1, "mesh_arm.xml (absolute path): %s", err);
  if (m) mj_deleteModel(m);
  /* relative path from another working directory */
  char cwd[4096];
  if (getcwd(cwd, sizeof cwd) && chdir(CUSP_SOURCE_DIR "/tests") == 0) {
    m = cusp_load("data/scenes/mesh_arm.xml", err, sizeof err);
    EXPECT(m && m->nmesh == 1 && cusp_instance_count(m) == 1, "mesh_arm.xml (relative): %s", err);
    if (m) mj_deleteModel(m);
    EXPECT(chdir(cwd) == 0, "chdir back");
  }
}

static void compare_plain(const char *path) {
  char err[1024] = "", err2[1024] = "";
  mjModel *a = cusp_load(path, err, sizeof err);
  mjModel *b = mj_loadXML(path, NULL, err2, sizeof err2);
  EXPECT(a && b, "%s: cusp \"%s\" mujoco \"%s\"", path, err, err2);
  if (a && b)
    EXPECT(a->nbody == b->nbody && a->ngeom == b->ngeom && a->nv == b->nv && a->nu == b->nu &&
               a->nmesh == b->nmesh && a->ntext == b->ntext,
           "%s: same model", path);
  if (a) {
    EXPECT(cusp_instance_count(a) == 0 && cusp_plugin_instance(a, 0) == -1, "%s: no instances",
           path);
    mj_deleteModel(a);
  }
  if (b) mj_deleteModel(b);
}

static void test_plain(void) {
  compare_plain(SCENES "plain.xml");
  compare_plain(SCENES "unstable_rigid.xml");
}

/* The sizes two compiles of one scene must share. */
static int same_sizes(const mjModel *a, const mjModel *b) {
  return a->nq == b->nq && a->nv == b->nv && a->nu == b->nu && a->nbody == b->nbody &&
         a->ngeom == b->ngeom && a->nsite == b->nsite && a->njnt == b->njnt &&
         a->nmocap == b->nmocap && a->ntendon == b->ntendon && a->neq == b->neq &&
         a->nexclude == b->nexclude && a->nplugin == b->nplugin && a->ntext == b->ntext &&
         a->nmesh == b->nmesh && a->npluginstate == b->npluginstate;
}

/* cusp_expand's text loads with plain mj_loadXML (libcusp.so is loaded: this
 * program links it) into the model cusp_load makes. */
static void expect_reload(const char *scene, const cusp_override *ov, int nov, const char *name) {
  char err[1024] = "";
  char *text = cusp_expand(scene, ov, nov, err, sizeof err);
  EXPECT(text, "cusp_expand %s: %s", scene, err);
  if (!text) return;
  const char *p = write_tmp(name, text);
  free(text);
  mjModel *a = mj_loadXML(p, NULL, err, sizeof err);
  EXPECT(a, "%s: expanded text does not load with mj_loadXML: %s", scene, err);
  mjModel *b = cusp_load_with(scene, ov, nov, err, sizeof err);
  EXPECT(b, "cusp_load %s: %s", scene, err);
  if (a && b) {
    EXPECT(same_sizes(a, b), "%s: reloaded expansion differs in size (nbody %d/%d nu %d/%d nq %d/%d)",
           scene, (int)a->nbody, (int)b->nbody, (int)a->nu, (int)b->nu, (int)a->nq, (int)b->nq);
    double diff = 0;
    for (int i = 0; same_sizes(a, b) && i < 3 * a->nbody; i++)
      diff = fmax(diff, fabs(a->body_pos[i] - b->body_pos[i]));
    for (int i = 0; same_sizes(a, b) && i < a->nq; i++)
      diff = fmax(diff, fabs(a->qpos0[i] - b->qpos0[i]));
    for (int i = 0; same_sizes(a, b) && i < a->nbody; i++)
      diff = fmax(diff, fabs(a->body_mass[i] - b->body_mass[i]));
    EXPECT(diff < 1e-15, "%s: reloaded expansion differs by %g", scene, diff);
    int ok = 1;
    for (int i = 0; i < cusp_instance_count(b); i++) {
      cusp_instance_config *c = read_instance(a, i);
      ok &= c != NULL;
      free(c);
    }
    EXPECT(ok, "%s: the reloaded expansion's instances read", scene);
    mjData *d = mj_makeData(a);
    EXPECT(d, "%s: mj_makeData of the reloaded expansion: %s", scene, cusp_last_error());
    if (d) {
      mj_step(a, d);
      mj_deleteData(d);
    }
    /* and cusp_load of the expanded file is that model again (no second expansion) */
    mjModel *e = cusp_load(p, err, sizeof err);
    EXPECT(e && same_sizes(e, b), "%s: cusp_load of the expanded file: %s", scene, err);
    if (e) mj_deleteModel(e);
  }
  if (a) mj_deleteModel(a);
  if (b) mj_deleteModel(b);
}

static void test_expand(void) {
  char err[1024] = "";
  char *text = cusp_expand(SCENES "arm.xml", NULL, 0, err, sizeof err);
  EXPECT(text, "cusp_expand: %s", err);
  if (!text) return;
  EXPECT(has(text, "\"arm/disk0\"") && has(text, "\"arm/disk21\"") && !has(text, "arm/disk22") &&
             has(text, "\"arm/act\"") && has(text, "\"arm/s3c3\"") && has(text, "mocap=\"true\""),
         "generated names");
  EXPECT(has(text, "<extension") && has(text, "plugin=\"cusp.softbody\"") &&
             has(text, "<plugin instance=\"arm\"") && has(text, "\"cusp/arm\"") &&
             has(text, CUSP_EXPANDED_MARK),
         "the plugin and the mark stay");
  free(text);
  expect_reload(SCENES "arm.xml", NULL, 0, "expanded_arm.xml");
  expect_reload(SCENES "two_arms.xml", NULL, 0, "expanded_two.xml");
  /* asset paths stay relative to the scene's directory: the file goes next to them */
  char assets[600];
  snprintf(assets, sizeof assets, "%s/assets", tmpdir);
  EXPECT(symlink(SCENES "assets", assets) == 0, "symlink %s", assets);
  expect_reload(SCENES "mesh_arm.xml", NULL, 0, "expanded_mesh.xml");
  unlink(assets);
  cusp_override ov[] = {{"arm", "sections", "2"}, {"arm", "mass", "0.5"},
                        {"arm", "schedule", "s1c1 0 0 1 5; s2c2 0 1"}};
  expect_reload(SCENES "arm.xml", ov, 3, "expanded_ov.xml");
  cusp_override nat[] = {{"arm", "contact", "native"}, {"arm", "initial", "s1c1=0.01 s3c2=-0.02"}};
  expect_reload(SCENES "arm.xml", nat, 2, "expanded_native.xml");

  text = cusp_expand(SCENES "arm_include.xml", NULL, 0, err, sizeof err);
  EXPECT(text && !has(text, "<include") && has(text, "\"floor\"") && has(text, "arm/base"),
         "expanded includes: %s", err);
  free(text);
  text = cusp_expand(SCENES "include_cycle.xml", NULL, 0, err, sizeof err);
  EXPECT(!text && has(err, "cycle_a.xml"), "expand error: %s", err);
  free(text);

  /* expanding an expanded spec adds nothing; with overrides it is an error */
  mjSpec *spec = mj_parseXML(SCENES "arm.xml", NULL, err, sizeof err);
  EXPECT(spec, "mj_parseXML: %s", err);
  if (spec) {
    EXPECT(cusp_expand_spec(spec, NULL, 0, err, sizeof err) == 0, "expand_spec: %s", err);
    EXPECT(cusp_expand_spec(spec, NULL, 0, err, sizeof err) == 0, "again: %s", err);
    cusp_override g[] = {{"arm", "gear", "3"}};
    EXPECT(cusp_expand_spec(spec, g, 1, err, sizeof err) == -1 && has(err, "already expanded"),
           "again with overrides: %s", err);
    mjModel *m = mj_compile(spec, NULL);
    EXPECT(m && m->nmocap == 22 && m->nu == 10 && m->ntext == 1, "no duplicates: %s",
           m ? "" : mjs_getError(spec));
    if (m) mj_deleteModel(m);
    mj_deleteSpec(spec);
  }
  EXPECT(cusp_expand_spec(NULL, NULL, 0, err, sizeof err) == -1, "NULL spec");
}

/* A raw scene opened with plain MuJoCo fails in init and says how to load it. */
static void test_raw_scene(void) {
  char err[1024] = "";
  mjModel *m = mj_loadXML(SCENES "arm.xml", NULL, err, sizeof err);
  EXPECT(!m, "a raw scene loaded with mj_loadXML");
  if (m) mj_deleteModel(m);
  const char *why = cusp_last_error();
  EXPECT(has(why, "not expanded") && has(why, "cusp_load") && has(why, "cusp.load") &&
             has(why, "cusp-expand") && has(why, "instance \"arm\""),
         "cusp_last_error: \"%s\"", why);
  EXPECT(has(err, "not expanded") || has(err, "init"), "mj_loadXML's message: \"%s\"", err);

  /* an expanded file whose keys were changed afterwards: expand again */
  char *text = cusp_expand(SCENES "arm.xml", NULL, 0, err, sizeof err);
  EXPECT(text, "cusp_expand: %s", err);
  if (!text) return;
  char *k = strstr(text, "key=\"disks\" value=\"6\"");
  EXPECT(k, "disks key in the expanded text");
  if (k) {
    k[strlen("key=\"disks\" value=\"")] = '5';
    const char *p = write_tmp("edited.xml", text);
    m = mj_loadXML(p, NULL, err, sizeof err);
    EXPECT(!m && has(cusp_last_error(), "expand") && has(cusp_last_error(), "again") &&
               has(cusp_last_error(), "arm/disk"),
           "edited disks: \"%s\"", cusp_last_error());
    if (m) mj_deleteModel(m);
    /* cusp_load treats the file as expanded and reports the same */
    LOAD_ERROR(p, "edited.xml", "again");
  }
  free(text);
}

static void test_overrides(void) {
  char err[1024] = "";
  cusp_override ov[] = {
      {"arm", "mass", "1"}, {"arm", "sections", "2"}, {"arm", "actuated", "none"}};
  mjModel *m = cusp_load_with(SCENES "arm.xml", ov, 3, err, sizeof err);
  EXPECT(m, "overrides: %s", err);
  if (m) {
    cusp_instance_config *c = read_instance(m, 0);
    EXPECT(c && c->sections == 2 && c->ndisk == 15 && m->nmocap == 15 && m->nu == 1 &&
               c->mass[1] == 1,
           "overrides applied");
    int t = name_id(m, mjOBJ_TEXT, "cusp/arm");
    EXPECT(t >= 0 && !strcmp(m->text_data + m->text_adr[t],
                             CUSP_EXPANDED_MARK "\nmass=1\nsections=2\nactuated=none\n"),
           "overrides recorded: \"%s\"", t >= 0 ? m->text_data + m->text_adr[t] : "");
    free(c);
    mj_deleteModel(m);
  }
  /* overrides win over the file's keys */
  cusp_override g[] = {{"arm", "gear", "3"}};
  m = cusp_load_with(SCENES "arm.xml", g, 1, err, sizeof err);
  EXPECT(m && m->actuator_gear[6 * name_id(m, mjOBJ_ACTUATOR, "arm/s1c1")] == 3,
         "gear override: %s", err);
  if (m) mj_deleteModel(m);
  cusp_override bad1[] = {{"leg", "mass", "1"}};
  expect_load_error(SCENES "arm.xml", bad1, 1, "\"leg\"", "override", __LINE__);
  cusp_override bad2[] = {{"arm", "masss", "1"}};
  expect_load_error(SCENES "arm.xml", bad2, 1, "unknown key \"masss\"", "instance \"arm\"", __LINE__);
  cusp_override bad3[] = {{"arm", "mass", "1.5x"}};
  expect_load_error(SCENES "arm.xml", bad3, 1, "\"1.5x\" is not a number", "mass", __LINE__);
  cusp_override bad4[] = {{"arm", NULL, "1"}};
  expect_load_error(SCENES "arm.xml", bad4, 1, "key", NULL, __LINE__);
  cusp_override bad5[] = {{NULL, "mass", "1"}};
  expect_load_error(SCENES "arm.xml", bad5, 1, "instance", NULL, __LINE__);
  cusp_override bad7[] = {{"arm", "mass", "1\n2"}};
  expect_load_error(SCENES "arm.xml", bad7, 1, "line break", NULL, __LINE__);
  /* an override that breaks consistency: caught by finish */
  cusp_override bad6[] = {{"arm", "sections", "2"}};
  expect_load_error(SCENES "arm.xml", bad6, 1, "\"mass\"", "sections is 2", __LINE__);
  /* overrides on a plain scene have no instance */
  expect_load_error(SCENES "plain.xml", ov, 1, "\"arm\"", NULL, __LINE__);
}

static void test_errors(void) {
  const char *p;
  p = arm_scene("unknown_key.xml", "<config key=\"stifness\" value=\"265\"/>");
  LOAD_ERROR(p, "unknown_key.xml", "unknown key \"stifness\"");
  p = arm_scene("range.xml", "<config key=\"friction\" value=\"-1\"/>");
  LOAD_ERROR(p, "key \"friction\"", ">= 0");
  p = arm_scene("malformed.xml", "<config key=\"stiffness\" value=\"1.5x\"/>");
  LOAD_ERROR(p, "key \"stiffness\": \"1.5x\" is not a number", "malformed.xml");
  p = arm_scene("nan.xml", "<config key=\"damping\" value=\"nan\"/>");
  LOAD_ERROR(p, "\"nan\" is not a number", "damping");
  p = arm_scene("count.xml", "<config key=\"sections\" value=\"2\"/>");
  LOAD_ERROR(p, "count.xml: instance \"arm\"", "sections is 2");
  p = arm_scene("count2.xml",
                "<config key=\"sections\" value=\"2\"/>\n<config key=\"mass\" value=\"1 2 3\"/>");
  LOAD_ERROR(p, "count2.xml: instance \"arm\": key \"mass\": 3 values", "sections is 2");
  p = arm_scene("dupkey.xml",
                "<config key=\"mass\" value=\"1\"/>\n<config key=\"mass\" value=\"2\"/>");
  LOAD_ERROR(p, "duplicate config key: mass", "line 6");
  p = arm_scene("sched.xml", "<config key=\"schedule\" value=\"s1c1 0 0 1 5; s9c1 0 1\"/>");
  LOAD_ERROR(p, "sched.xml: instance \"arm\": key \"schedule\", entry 2 (\"s9c1 0 1\"): no coordinate s9c1",
             NULL);
  /* the soft step's plausible timestep (issue 19's spirit: a scene at h = 3 s loaded and ran) */
  const char *timesteps[] = {"3.001", "1.001", "1e-07"};
  for (int k = 0; k < 3; k++) {
    char name[64], body[512];
    snprintf(name, sizeof name, "timestep%d.xml", k);
    snprintf(body, sizeof body,
             "<mujoco><option timestep=\"%s\"/><extension><plugin plugin=\"cusp.softbody\"><instance "
             "name=\"arm\"/></plugin></extension>\n<worldbody><body name=\"mount\" pos=\"0 0 1\"><plugin "
             "instance=\"arm\"/></body></worldbody></mujoco>",
             timesteps[k]);
    p = write_tmp(name, body);
    char says[64];
    snprintf(says, sizeof says, "<option timestep=\"%s\"> is out of range", timesteps[k]);
    LOAD_ERROR(p, says, "1e-06 .. 1 s");
  }
  p = arm_scene("nokey.xml", "<config value=\"1\"/>");
  LOAD_ERROR(p, "nokey.xml", "key");
  p = arm_scene("novalue.xml", "<config key=\"mass\"/>");
  LOAD_ERROR(p, "novalue.xml", "value");

  p = write_tmp(
      "missing_instance.xml",
      "<mujoco><worldbody><body name=\"b\"><plugin instance=\"arm\"/></body></worldbody></mujoco>");
  LOAD_ERROR(p, "missing_instance.xml", "arm");
  p = write_tmp("unattached.xml",
                "<mujoco><extension><plugin plugin=\"cusp.softbody\"><instance "
                "name=\"arm\"/></plugin></extension>\n"
                "<worldbody/></mujoco>");
  LOAD_ERROR(p, "unattached.xml: instance \"arm\" is not attached to any body", "<plugin instance");
  p = write_tmp("twice.xml",
                "<mujoco><extension><plugin plugin=\"cusp.softbody\"><instance "
                "name=\"arm\"/></plugin></extension>\n"
                "<worldbody><body name=\"a\"><plugin instance=\"arm\"/></body>\n"
                "<body name=\"b\"><plugin instance=\"arm\"/></body></worldbody></mujoco>");
  LOAD_ERROR(p, "already attached to body \"a\"", "twice.xml");
  p = write_tmp("inworld.xml",
                "<mujoco><extension><plugin plugin=\"cusp.softbody\"><instance "
                "name=\"arm\"/></plugin></extension>\n"
                "<worldbody><plugin instance=\"arm\"/></worldbody></mujoco>");
  LOAD_ERROR(p, "inworld.xml", "must be inside a <body>, not <worldbody>");
  p = write_tmp("noinstattr.xml", "<mujoco><worldbody><body><plugin/></body></worldbody></mujoco>");
  LOAD_ERROR(p, "noinstattr.xml", NULL);
  p = write_tmp(
      "otherplugin.xml",
      "<mujoco><extension><plugin plugin=\"nobody.plugin\"/></extension></mujoco>");
  LOAD_ERROR(p, "nobody.plugin", "otherplugin.xml");
  p = write_tmp("noplugin.xml", "<mujoco><extension><plugin/></extension></mujoco>");
  LOAD_ERROR(p, "noplugin.xml", NULL);
  p = write_tmp("dup.xml",
                "<mujoco><extension><plugin plugin=\"cusp.softbody\"><instance name=\"arm\"/>\n"
                "<instance name=\"arm\"/></plugin></extension></mujoco>");
  LOAD_ERROR(p, "dup.xml", "arm");
  char longname[200];
  memset(longname, 'a', 100);
  longname[100] = 0;
  char text[1024];
  snprintf(text, sizeof text,
           "<mujoco><extension><plugin plugin=\"cusp.softbody\"><instance name=\"%s\"/></plugin>"
           "</extension><worldbody><body><plugin instance=\"%s\"/></body></worldbody></mujoco>",
           longname, longname);
  p = write_tmp("longname.xml", text);
  LOAD_ERROR(p, "longer than", "longname.xml");

  LOAD_ERROR(SCENES "no_such_scene.xml", "no_such_scene.xml", NULL);
  LOAD_ERROR(SCENES, "scenes", NULL); /* a directory */
  p = write_tmp("badxml.xml", "<mujoco>\n<worldbody>\n</mujoco>\n");
  LOAD_ERROR(p, "badxml.xml", "Line number");
  p = write_tmp("notmj.xml", "<foo/>");
  LOAD_ERROR(p, "notmj.xml", "\'foo\'");
  p = write_tmp("emptyfile.xml", "");
  LOAD_ERROR(p, "emptyfile.xml", NULL);
  LOAD_ERROR(NULL, "no scene", NULL);
  /* MuJoCo's own compile errors come back with the file name */
  p = write_tmp("mjerror.xml",
                "<mujoco><extension><plugin plugin=\"cusp.softbody\"><instance "
                "name=\"arm\"/></plugin></extension>\n"
                "<worldbody><body name=\"m\"><plugin instance=\"arm\"/><geom type=\"sphere\" "
                "size=\"-1\"/></body></worldbody></mujoco>");
  LOAD_ERROR(p, "mjerror.xml", NULL);
  /* a plain scene with a MuJoCo error */
  p = write_tmp("mjplain.xml",
                "<mujoco><worldbody><geom type=\"nosuchtype\"/></worldbody></mujoco>");
  LOAD_ERROR(p, "mjplain.xml", NULL);
  /* a name clash with the generated disks */
  p = write_tmp(
      "clash.xml",
      "<mujoco><extension><plugin plugin=\"cusp.softbody\"><instance "
      "name=\"arm\"/></plugin></extension>\n"
      "<worldbody><body name=\"arm/disk3\"><plugin instance=\"arm\"/></body></worldbody></mujoco>");
  LOAD_ERROR(p, "clash.xml", "a body named \"arm/disk3\"");
  p = write_tmp(
      "clash2.xml",
      "<mujoco><extension><plugin plugin=\"cusp.softbody\"><instance "
      "name=\"arm\"/></plugin></extension>\n"
      "<worldbody><body name=\"m\"><plugin instance=\"arm\"/><site name=\"s\"/></body></worldbody>\n"
      "<actuator><general name=\"arm/s2c2\" site=\"s\"/></actuator></mujoco>");
  LOAD_ERROR(p, "clash2.xml", "an actuator named \"arm/s2c2\"");

  /* small and missing error buffers */
  char small[8];
  memset(small, 'x', sizeof small);
  mjModel *m = cusp_load(SCENES "include_cycle.xml", small, sizeof small);
  EXPECT(!m && memchr(small, 0, sizeof small) && strlen(small) == 7, "error_size 8: \"%s\"", small);
  m = cusp_load(SCENES "include_cycle.xml", NULL, 0);
  EXPECT(!m, "NULL error buffer");
  char one[1] = {'x'};
  m = cusp_load(p, one, 1);
  EXPECT(!m && one[0] == 0, "error_size 1");
  char *t = cusp_expand(SCENES "no_such_scene.xml", NULL, 0, small, sizeof small);
  EXPECT(!t && memchr(small, 0, sizeof small), "expand with a small buffer");

  /* a successful load clears the buffer */
  char err[64] = "stale";
  m = cusp_load(SCENES "plain.xml", err, sizeof err);
  EXPECT(m && err[0] == 0, "error cleared on success: \"%s\"", err);
  if (m) mj_deleteModel(m);

  EXPECT(cusp_instance_count(NULL) == 0 && cusp_instance_find(NULL, "arm") == -1 &&
             cusp_instance_name(NULL, 0) == NULL && cusp_plugin_instance(NULL, 0) == -1 &&
             cusp_soft_instance(NULL, 0) == -1 && cusp_disk_of_body(NULL, 0, NULL, NULL) == -1,
         "NULL model queries");
}

/* contact = native: MuJoCo links, joints, tendons, equalities and excludes
 * (native.h), their names and ids as the plugin reads them. */
static void test_native(void) {
  char err[1024] = "";
  cusp_override ov[] = {{"arm", "contact", "native"}, {"arm", "actuated", "s1c1 s3c3"}};
  mjModel *m = cusp_load_with(SCENES "arm.xml", ov, 2, err, sizeof err);
  EXPECT(m, "native: %s", err);
  if (!m) return;
  cusp_instance_config *c = read_instance(m, 0);
  EXPECT(c && c->contact == CUSP_CONTACT_NATIVE, "native read");
  if (c) {
    int mount = name_id(m, mjOBJ_BODY, "mount"), ok = 1;
    for (int k = 0; k < c->ndisk; k++) {
      char name[64];
      snprintf(name, sizeof name, "arm/disk%d", k);
      int b = name_id(m, mjOBJ_BODY, name);
      ok &= b >= 0 && c->disk[k].body_id == b && c->disk[k].mocap_id == -1 &&
            m->body_parentid[b] == (k == 0 ? mount : c->disk[k - 1].body_id) &&
            m->body_jntnum[b] == (k == 0 ? 0 : 3) && m->geom_contype[c->disk[k].geom_id] == 1;
      if (k > 0) {
        snprintf(name, sizeof name, "arm/j%dkx", k);
        int j = name_id(m, mjOBJ_JOINT, name);
        ok &= j >= 0 && m->jnt_type[j] == mjJNT_HINGE && m->jnt_bodyid[j] == b &&
              m->jnt_stiffness[j] == 0 && m->dof_damping[m->jnt_dofadr[j]] > 0;
        snprintf(name, sizeof name, "arm/j%dez", k);
        j = name_id(m, mjOBJ_JOINT, name);
        ok &= j >= 0 && m->jnt_type[j] == mjJNT_SLIDE;
      }
    }
    EXPECT(ok, "native bodies and joints");
    EXPECT(m->nmocap == 0 && m->ntendon == 9 && m->nu == 3 && name_id(m, mjOBJ_SITE, "arm/tip") ==
                                                                 c->tip_site_id,
           "nmocap %d ntendon %d nu %d", (int)m->nmocap, (int)m->ntendon, (int)m->nu);
    ok = 1;
    for (int i = 0; i < 9; i++) {
      ok &= c->tendon_id[i] >= 0 && m->tendon_num[c->tendon_id[i]] == 7 * 2 + 7 &&
            m->tendon_stiffness[c->tendon_id[i]] > 0;
      int a = c->actuator_id[i];
      ok &= (i == 0 || i == 8) ? a >= 0 && m->actuator_trntype[a] == mjTRN_TENDON &&
                                     m->actuator_trnid[2 * a] == c->tendon_id[i]
                               : a == -1;
    }
    EXPECT(ok, "tendons and actuators");
    /* section mode: per section 6 later links tied to the first, 3 joints each */
    EXPECT(m->neq == 3 * 6 * 3, "neq %d", (int)m->neq);
    /* every pair of the 22 bodies and the mount, but the welded disk 0 */
    EXPECT(m->nexclude == 23 * 22 / 2 - 1, "nexclude %d", (int)m->nexclude);
    mjData *d = mj_makeData(m);
    EXPECT(d, "native mj_makeData: %s", cusp_last_error());
    if (d) {
      for (int k = 0; k < 20; k++) mj_step(m, d);
      EXPECT(d->time > 0 && isfinite(d->qpos[0]), "native steps");
      mj_deleteData(d);
    }
  }
  free(c);
  mj_deleteModel(m);

  /* a native chain too deep for MuJoCo's XML reader: cusp_load compiles it,
   * cusp_expand says why it writes no file */
  cusp_override deep[] = {{"arm", "contact", "native"}, {"arm", "sections", "16"},
                          {"arm", "mass", "0.05"}, {"arm", "disks", "30"}};
  cusp_set_expanding(1); /* the compile only: no runtime for 497 links */
  m = cusp_load_with(SCENES "arm.xml", deep, 4, err, sizeof err);
  cusp_set_expanding(0);
  EXPECT(m && m->nbody == 3 + 16 * 31 + 1, "deep native chain compiles: %s", err);
  if (m) mj_deleteModel(m);
  char *text = cusp_expand(SCENES "arm.xml", deep, 4, err, sizeof err);
  EXPECT(!text && has(err, "XML reader") && has(err, "cusp_load"), "deep expansion: %s", err);
  free(text);
}

/* A one-section arm far above three jointed bodies: a hinge pendulum, a
 * slider and a ball joint; `configs` goes into the instance. */
static const char *joint_scene(const char *name, const char *configs) {
  static char text[4096];
  snprintf(text, sizeof text,
           "<mujoco>\n"
           "  <extension><plugin plugin=\"cusp.softbody\"><instance name=\"arm\">\n"
           "    <config key=\"sections\" value=\"1\"/><config key=\"mass\" value=\"0.2\"/>\n"
           "    <config key=\"ctrlrange\" value=\"-5 5\"/>\n"
           "%s\n"
           "  </instance></plugin></extension>\n"
           "  <worldbody>\n"
           "    <body name=\"mount\" pos=\"0 0 1\"><plugin instance=\"arm\"/></body>\n"
           "    <body pos=\"1 0 0.5\"><joint name=\"hinge\" type=\"hinge\" axis=\"0 1 0\"/>\n"
           "      <geom type=\"capsule\" fromto=\"0 0 0 0.2 0 0\" size=\"0.02\"/></body>\n"
           "    <body pos=\"-1 0 0.5\"><joint name=\"slider\" type=\"slide\" axis=\"1 0 0\"/>\n"
           "      <geom type=\"box\" size=\"0.05 0.05 0.05\"/></body>\n"
           "    <body pos=\"0 1 0.5\"><joint name=\"globe\" type=\"ball\"/>\n"
           "      <geom type=\"sphere\" size=\"0.05\"/></body>\n"
           "  </worldbody>\n"
           "</mujoco>\n",
           configs);
  return write_tmp(name, text);
}

/* The key "feedback": load errors, then the law itself. */
static void test_feedback(void) {
  const char *p;
  p = joint_scene("fb_badjoint.xml", "<config key=\"feedback\" value=\"s1c1 hnige 1 0 0\"/>");
  LOAD_ERROR(p, "fb_badjoint.xml",
             "key \"feedback\", entry 1 (\"s1c1 hnige 1 0 0\"): no joint \"hnige\"");
  p = joint_scene("fb_ball.xml",
                  "<config key=\"feedback\" value=\"s1c1 hinge 1 0 0; s1c2 globe 1 0 0\"/>");
  LOAD_ERROR(p, "entry 2 (\"s1c2 globe 1 0 0\"): joint \"globe\" is a ball joint", "hinge or slide");
  p = joint_scene("fb_malformed.xml", "<config key=\"feedback\" value=\"s1c1 hinge 1 0\"/>");
  LOAD_ERROR(p, "fb_malformed.xml: instance \"arm\": key \"feedback\", entry 1",
             "COORD JOINT kp kd target");
  p = joint_scene("fb_unactuated.xml", "<config key=\"actuated\" value=\"s1c2\"/>\n"
                                      "<config key=\"feedback\" value=\"s1c1 hinge 1 0 0\"/>");
  LOAD_ERROR(p, "key \"feedback\", entry 1", "not actuated");
  p = joint_scene("fb_ok.xml", "");
  cusp_override bad1[] = {{"arm", "feedback", "s1c1 hinge 1 x 0"}};
  expect_load_error(p, bad1, 1, "\"x\" is not a number", "feedback", __LINE__);
  cusp_override bad2[] = {{"arm", "feedback", "s1c3 slider 1 0 0 1 2 3"}};
  expect_load_error(p, bad2, 1, "feedback", "COORD JOINT kp kd target", __LINE__);
  cusp_override bad3[] = {{"arm", "feedback", "s1c3 nosuch 1 0 0"}};
  expect_load_error(p, bad3, 1, "no joint \"nosuch\"", NULL, __LINE__);

  /* the law: input = ctrl + schedule(t) + kp (target(t) - q) - kd qdot,
   * clamped to ctrlrange, from the joint state at the step's start. Checked
   * against the same scene without schedule and feedback whose ctrl a host
   * sets to the law recomputed from MuJoCo's state alone: the two runs agree,
   * and cusp leaves the first run's ctrl as it was. */
  p = joint_scene("fb_law.xml",
                  "<config key=\"schedule\" value=\"s1c1 0 1 0.2 2\"/>\n"
                  "<config key=\"feedback\" value=\"s1c1 hinge 3 0.5 0.8 0.1 0.3;\n"
                  "    s1c2 slider -40 2 0.1; s1c3 hinge 500 0 10\"/>");
  char err[1024] = "";
  cusp_override off[] = {{"arm", "schedule", "none"}, {"arm", "feedback", "none"}};
  mjModel *m = cusp_load(p, err, sizeof err), *m2 = cusp_load_with(p, off, 2, err, sizeof err);
  EXPECT(m && m2, "fb_law.xml: %s", err);
  mjData *d = m ? mj_makeData(m) : NULL, *d2 = m2 ? mj_makeData(m2) : NULL;
  EXPECT(!m || !m2 || (d && d2), "mj_makeData: %s", cusp_last_error());
  if (d && d2) {
    int a1 = name_id(m, mjOBJ_ACTUATOR, "arm/s1c1"), a2 = name_id(m, mjOBJ_ACTUATOR, "arm/s1c2"),
        a3 = name_id(m, mjOBJ_ACTUATOR, "arm/s1c3");
    int jh = name_id(m, mjOBJ_JOINT, "hinge"), js = name_id(m, mjOBJ_JOINT, "slider");
    int qh = m->jnt_qposadr[jh], vh = m->jnt_dofadr[jh], qs = m->jnt_qposadr[js],
        vs = m->jnt_dofadr[js];
    for (int pass = 0; pass < 2; pass++) {
      /* a start away from qpos0: the ramp starts from the value at the first step */
      double start = pass ? -0.2 : 0.4;
      mjData *dd[2] = {d, d2};
      for (int i = 0; i < 2; i++) {
        mj_resetData(i ? m2 : m, dd[i]);
        dd[i]->qpos[qh] = start;
        dd[i]->qvel[vh] = 0.3;
        dd[i]->qpos[qs] = 0.05;
        dd[i]->qvel[vs] = -0.2;
      }
      double worst = 0;
      int untouched = 1, saturated = 1, ramp_seen = 0;
      for (int k = 0; k < 200; k++) {
        double t = d2->time, q = d2->qpos[qh], v = d2->qvel[vh], x = d2->qpos[qs],
               xv = d2->qvel[vs];
        double sched = t >= 0.2 ? 2 : 1 + t / 0.2;
        double target = t <= 0.1 ? start : t >= 0.3 ? 0.8 : start + (t - 0.1) / 0.2 * (0.8 - start);
        double u1 = sched + 3 * (target - q) - 0.5 * v, u2 = -40 * (0.1 - x) - 2 * xv;
        double u3 = 500 * (10 - q);
        saturated &= u3 > 5;
        ramp_seen |= t > 0.1 && t < 0.3 && fabs(u1) < 5;
        d2->ctrl[a1] = fmin(fmax(u1, -5), 5);
        d2->ctrl[a2] = fmin(fmax(u2, -5), 5);
        d2->ctrl[a3] = fmin(fmax(u3, -5), 5);
        mj_step(m, d);
        mj_step(m2, d2);
        untouched &= d->ctrl[a1] == 0 && d->ctrl[a2] == 0 && d->ctrl[a3] == 0;
        const double *sq, *sv, *sq2, *sv2;
        int n = cusp_soft_state(m, d, 0, &sq, &sv), n2 = cusp_soft_state(m2, d2, 0, &sq2, &sv2);
        for (int i = 0; n == 3 && n2 == 3 && i < 3; i++) worst = fmax(worst, fabs(sq[i] - sq2[i]));
        if (n != 3 || n2 != 3) worst = INFINITY;
        worst = fmax(worst, fabs(d->qpos[qh] - d2->qpos[qh]));
      }
      EXPECT(worst < 1e-9, "pass %d: the feedback run differs from the law by %g", pass, worst);
      EXPECT(untouched, "pass %d: cusp leaves ctrl alone", pass);
      EXPECT(saturated, "pass %d: the third feedback saturates (clamped to ctrlrange)", pass);
      EXPECT(ramp_seen, "pass %d: the ramp was checked unclamped", pass);
    }
  }
  mj_deleteData(d);
  mj_deleteData(d2);
  if (m) mj_deleteModel(m);
  if (m2) mj_deleteModel(m2);
}

/* Several models at once: each carries its own instances. */
static void test_models(void) {
  char err[1024];
  mjModel *m[6];
  for (int i = 0; i < 6; i++)
    m[i] = cusp_load(i % 2 ? SCENES "two_arms.xml" : SCENES "arm.xml", err, sizeof err);
  int ok = 1;
  for (int i = 0; i < 6; i++) ok &= m[i] && cusp_instance_count(m[i]) == (i % 2 ? 2 : 1);
  EXPECT(ok, "six models");
  mj_deleteModel(m[2]);
  mj_deleteModel(m[3]);
  ok = 1;
  for (int i = 0; i < 6; i++)
    if (i != 2 && i != 3) ok &= cusp_instance_count(m[i]) == (i % 2 ? 2 : 1);
  EXPECT(ok, "others intact after deletes");
  /* a copied model is the same soft model */
  mjModel *copy = m[1] ? mj_copyModel(NULL, m[1]) : NULL;
  cusp_instance_config *c = copy ? read_instance(copy, 1) : NULL;
  EXPECT(c && c->ndisk == 9 && !strcmp(c->name, "rod"), "copied model's instances");
  free(c);
  if (copy) mj_deleteModel(copy);
  for (int i = 0; i < 6; i++)
    if (i != 2 && i != 3 && m[i]) mj_deleteModel(m[i]);
}

int main(void) {
  if (!mkdtemp(tmpdir)) {
    perror("mkdtemp");
    return 1;
  }
  test_defaults();
  test_set_errors();
  test_lists();
  test_coordinates();
  test_key_table();
  test_key_defaults();
  test_plausible();
  test_arm_scene();
  test_two_arms();
  test_includes();
  test_assets();
  test_plain();
  test_expand();
  test_raw_scene();
  test_overrides();
  test_errors();
  test_native();
  test_feedback();
  test_models();
  test_model_defaults();
  for (int i = 0; i < ntmp; i++) remove(tmpfiles[i]);
  rmdir(tmpdir);
  return test_report("loader");
}

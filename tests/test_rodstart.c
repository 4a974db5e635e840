/* A Cosserat rod's start and end loads (issue 16 item 1): the keys
 * centerline, rest_arc, tip_force and tip_torque, and rods of many sections.
 *
 * Every check is against something the code under test does not produce:
 * the polyline sampled here at the sections' rest arcs, a circle's
 * curvature, the bending moment E I kappa and the axial force
 * E A (l / l0 - 1) that hold a curved or stretched rod still, Euler-Bernoulli's
 * F L^3 / (3 E I) with the piecewise-constant-curvature discretization's own
 * error 1 / (4 N^2), and the large-deflection elastica integrated here by
 * shooting (itself checked against Bisshopp and Drucker's table). */
#include <string.h>
#include <unistd.h>

#include "chain.h"
#include "config.h"
#include "plugin_testutil.h"

static int has(const char *s, const char *part) { return s && strstr(s, part) != NULL; }

/* ---------- helpers ---------- */

static cusp_instance_config *rod_config(void) {
  cusp_instance_config *c = malloc(sizeof *c);
  cusp_config_default(c);
  snprintf(c->name, sizeof c->name, "rod");
  char err[512];
  EXPECT(cusp_config_set(c, "model", "cosserat", err, sizeof err) == 0, "model: %s", err);
  return c;
}

static int set(cusp_instance_config *c, const char *key, const char *value) {
  char err[512];
  int rc = cusp_config_set(c, key, value, err, sizeof err);
  EXPECT(rc == 0, "%s=%.60s: %s", key, value, err);
  return rc;
}

/* "x y z, ..." of n points */
static char *points_text(const double *p, int n) {
  char *s = malloc((size_t)n * 80 + 1);
  s[0] = 0;
  for (int i = 0; i < n; i++)
    sprintf(s + strlen(s), "%s%.17g %.17g %.17g", i ? ", " : "", p[3 * i], p[3 * i + 1], p[3 * i + 2]);
  return s;
}

static char *numbers_text(const double *x, int n) {
  char *s = malloc((size_t)n * 26 + 1);
  s[0] = 0;
  for (int i = 0; i < n; i++) sprintf(s + strlen(s), "%s%.17g", i ? " " : "", x[i]);
  return s;
}

/* The point at rest arc s of the polyline, written here apart from the
 * library's: the piece whose rest arcs bracket s, linearly. */
static void sample(const double *p, const double *arc, int n, double s, double out[3]) {
  int j = 0;
  while (j < n - 2 && s > arc[j + 1]) j++;
  double f = (s - arc[j]) / (arc[j + 1] - arc[j]);
  for (int a = 0; a < 3; a++) out[a] = (1 - f) * p[3 * j + a] + f * p[3 * (j + 1) + a];
}

/* The chain of c (base at the identity), its kinematics at q. */
typedef struct {
  sb_segment_params seg[CUSP_MAX_SECTIONS];
  sb_model *m;
  sb_work *w;
} chain_t;

static int chain_make(const cusp_instance_config *c, chain_t *ch, const sb_pose *base) {
  sb_chain_params cp;
  char err[256];
  cusp_config_chain(c, ch->seg, &cp);
  if (base) cp.base = *base;
  ch->m = sb_model_create(&cp, err, sizeof err);
  EXPECT(ch->m, "sb_model_create: %s", err);
  ch->w = ch->m ? sb_work_create(ch->m) : NULL;
  return ch->w ? 0 : -1;
}

static void chain_free(chain_t *ch) {
  sb_work_free(ch->w);
  sb_model_free(ch->m);
}

/* The coordinate index of strain name in section i, or -1. */
static int coord(const cusp_instance_config *c, int section, const char *strain) {
  char name[16];
  snprintf(name, sizeof name, "s%d%s", section + 1, strain);
  for (int k = 0; k < c->ncoord; k++)
    if (!strcmp(c->coord[k], name)) return k;
  return -1;
}

/* ---------- the centerline start ---------- */

/* A space curve (not planar, with torsion) leaving the origin along z: the
 * chain's section ends land on the polyline's points at the sections' rest
 * arc lengths, to round-off; the torsion coordinate stays zero. */
static void test_nodes_on_polyline(void) {
  enum { NP = 41 };
  double p[3 * NP], arc[NP];
  p[0] = p[1] = p[2] = 0;
  for (int j = 1; j < NP; j++) { /* a straight lead-in along z, then a twisted curve */
    double u = 2.0 * (j - 1) / (NP - 2);
    p[3 * j] = 0.1 * (1 - cos(u));
    p[3 * j + 1] = 0.03 * u * u * u;
    p[3 * j + 2] = 0.02 + 0.1 * sin(u);
  }
  arc[0] = 0;
  for (int j = 1; j < NP; j++) {
    double dx = p[3 * j] - p[3 * j - 3], dy = p[3 * j + 1] - p[3 * j - 2], dz = p[3 * j + 2] - p[3 * j - 1];
    arc[j] = arc[j - 1] + sqrt(dx * dx + dy * dy + dz * dz);
  }
  const char *strains[] = {"kx ky ez", "kx ky kz ex ey ez"};
  const int sections[] = {7, 24};
  for (int v = 0; v < 2; v++) {
    cusp_instance_config *c = rod_config();
    char *txt = points_text(p, NP), err[512], num[16];
    set(c, "centerline", txt);
    set(c, "strains", strains[v]);
    snprintf(num, sizeof num, "%d", sections[v]);
    set(c, "sections", num);
    int ok = cusp_config_finish(c, err, sizeof err) == 0;
    EXPECT(ok, "finish: %s", err);
    chain_t ch;
    if (ok && chain_make(c, &ch, NULL) == 0) {
      sb_kinematics(ch.m, ch.w, c->initial, NULL);
      double worst = 0, L = arc[NP - 1];
      for (int i = 0; i < c->sections; i++) {
        sb_pose g;
        double want[3];
        sb_point_kinematics(ch.m, ch.w, i, c->length[i], &g, NULL, NULL, NULL);
        sample(p, arc, NP, L * (i + 1) / c->sections, want);
        for (int a = 0; a < 3; a++) worst = fmax(worst, fabs(g.p[a] - want[a]));
      }
      EXPECT(worst < 1e-12 * L, "%s, %d sections: the nodes are %.3g m off the polyline", strains[v], c->sections,
             worst);
      EXPECT(fabs(c->length[0] * c->sections - L) < 1e-14 * L, "rest length %g, the polyline's %g",
             c->length[0] * c->sections, L);
      double twist = 0;
      for (int i = 0; i < c->sections; i++)
        for (int k = 0; k < 3; k++) {
          int j = coord(c, i, (const char *[]){"kz", "ex", "ey"}[k]);
          if (j >= 0) twist = fmax(twist, fabs(c->initial[j]));
        }
      EXPECT(twist == 0, "%s: torsion and shears %g, expected exactly 0 (parallel transport)", strains[v], twist);
      /* the config reads back to the same centerline */
      char *back = malloc(1 << 16);
      const cusp_key *k = cusp_key_find("centerline");
      EXPECT(cusp_config_format(c, k, back, 1 << 16) == 0 && !strcmp(back, txt), "centerline reads back: %.80s",
             back);
      free(back);
      chain_free(&ch);
    }
    free(txt);
    free(c);
  }
}

/* Points of a circle of radius R through the origin, tangent to z there,
 * bending about the unit axis b (perpendicular to z), with their arc
 * lengths: every section is that circle's arc, kappa = 1 / R about b, no
 * stretch. */
static void test_arc_curvature(void) {
  const double R = 0.35, b[3] = {0.6, -0.8, 0}; /* bends toward b x z = (-0.8, -0.6, 0) */
  enum { N = 9 };
  double p[3 * (N + 1)], arc[N + 1], dphi = 1.7 / N;
  for (int j = 0; j <= N; j++) {
    double phi = j * dphi, n[3] = {b[1], -b[0], 0}; /* b x z */
    for (int a = 0; a < 3; a++) p[3 * j + a] = R * (1 - cos(phi)) * n[a];
    p[3 * j + 2] = R * sin(phi);
    arc[j] = R * phi;
  }
  cusp_instance_config *c = rod_config();
  char *pt = points_text(p, N + 1), *ra = numbers_text(arc, N + 1), err[512];
  set(c, "centerline", pt);
  set(c, "rest_arc", ra);
  set(c, "sections", "9");
  EXPECT(cusp_config_finish(c, err, sizeof err) == 0, "finish: %s", err);
  double worst = 0, stretch = 0;
  for (int i = 0; i < N; i++) {
    worst = fmax(worst, fabs(c->initial[coord(c, i, "kx")] - b[0] / R));
    worst = fmax(worst, fabs(c->initial[coord(c, i, "ky")] - b[1] / R));
    stretch = fmax(stretch, fabs(c->initial[coord(c, i, "ez")]));
  }
  EXPECT(worst < 1e-12 / R, "curvature off 1/R = %g about b by %.3g 1/m", 1 / R, worst);
  EXPECT(stretch < 1e-13, "the circle's own arc lengths: stretch %.3g, expected 0", stretch);
  /* more sections than points: the nodes are on the chords, curvature varies, still exact at the nodes */
  set(c, "sections", "20");
  EXPECT(cusp_config_finish(c, err, sizeof err) == 0, "finish, 20 sections: %s", err);
  free(pt);
  free(ra);
  free(c);
}

/* ---------- scenes ---------- */

static char scene_path[256];

/* A scene of one rod on a body at the origin (euler as given), no gravity
 * unless asked, with the extra config lines. */
static mjModel *rod_scene(const char *euler, const char *gravity, const char *config, char *err, int size) {
  snprintf(scene_path, sizeof scene_path, "/tmp/cusp_rodstart_%d.xml", (int)getpid());
  FILE *f = fopen(scene_path, "w");
  if (!f) return NULL;
  fprintf(f,
          "<mujoco><option timestep=\"0.001\" gravity=\"%s\"/>\n"
          "<extension><plugin plugin=\"cusp.softbody\"><instance name=\"rod\">\n"
          "<config key=\"model\" value=\"cosserat\"/><config key=\"actuated\" value=\"none\"/>\n%s\n"
          "</instance></plugin></extension>\n"
          "<worldbody><body name=\"mount\" euler=\"%s\"><plugin instance=\"rod\"/></body></worldbody></mujoco>\n",
          gravity, config, euler);
  fclose(f);
  mjModel *m = cusp_load_with(scene_path, NULL, 0, err, size);
  unlink(scene_path);
  return m;
}

#define CFG(k, v) "<config key=\"" k "\" value=\"" v "\"/>"

/* max |q - q0| over the run and the tip's displacement */
typedef struct {
  double dq, dtip;
  int finite;
} drift_t;

static drift_t run_still(mjModel *m, mjData *d, int steps) {
  drift_t r = {0, 0, 1};
  const double *q, *v;
  int n = cusp_soft_state(m, d, 0, &q, &v);
  double *q0 = malloc(sizeof(double) * n), tip0[3], tip[3], quat[4];
  memcpy(q0, q, sizeof(double) * n);
  cusp_tip_pose(m, d, 0, tip0, quat);
  for (int s = 0; s < steps; s++) mj_step(m, d);
  cusp_soft_state(m, d, 0, &q, &v);
  for (int i = 0; i < n; i++) {
    r.dq = fmax(r.dq, fabs(q[i] - q0[i]));
    r.finite &= isfinite(q[i]);
  }
  cusp_tip_pose(m, d, 0, tip, quat);
  for (int a = 0; a < 3; a++) r.dtip = fmax(r.dtip, fabs(tip[a] - tip0[a]));
  free(q0);
  return r;
}

/* A rod started on a circular arc holds it under the tip moment E I kappa
 * about the binormal (the bending moment of beam theory), and springs back
 * without it: the curved start's elastic force is the beam's. */
static void test_arc_held_by_moment(void) {
  const double R = 0.2, E = 2e6, r = 0.01, I = M_PI * r * r * r * r / 4, M = E * I / R;
  enum { N = 8 };
  double p[3 * (N + 1)], arc[N + 1];
  for (int j = 0; j <= N; j++) { /* bends toward +x: about +y */
    double phi = 1.2 * j / N;
    p[3 * j] = R * (1 - cos(phi));
    p[3 * j + 1] = 0;
    p[3 * j + 2] = R * sin(phi);
    arc[j] = R * phi;
  }
  char *pt = points_text(p, N + 1), *ra = numbers_text(arc, N + 1);
  for (int held = 1; held >= 0; held--) {
    char config[4096], err[1024] = "";
    snprintf(config, sizeof config,
             CFG("sections", "8") CFG("radius", "0.01") CFG("young", "2e6") CFG("disks", "0")
                 "<config key=\"centerline\" value=\"%s\"/><config key=\"rest_arc\" value=\"%s\"/>"
                 "<config key=\"tip_torque\" value=\"0 %.17g 0\"/>",
             pt, ra, held ? M : 0.0);
    mjModel *m = rod_scene("0 0 0", "0 0 0", config, err, sizeof err);
    EXPECT(m, "load: %s", err);
    mjData *d = m ? attach(m) : NULL;
    if (d && held) { /* the disk bodies MuJoCo holds start on the arc's points (one per section end) */
      double worst = 0;
      for (int k = 0; k <= N; k++) {
        char name[32];
        snprintf(name, sizeof name, "rod/disk%d", k);
        int b = mj_name2id(m, mjOBJ_BODY, name);
        EXPECT(b >= 0, "no body %s", name);
        for (int a = 0; b >= 0 && a < 3; a++) worst = fmax(worst, fabs(d->xpos[3 * b + a] - p[3 * k + a]));
      }
      EXPECT(worst < 1e-12, "the disks start %.3g m off the centerline's points", worst);
    }
    if (d) {
      drift_t dr = run_still(m, d, 300);
      if (held)
        EXPECT(dr.finite && dr.dq < 1e-9 && dr.dtip < 1e-10,
               "the arc under E I kappa moved: |dq| %.3g, tip %.3g m in 0.3 s", dr.dq, dr.dtip);
      else
        EXPECT(dr.dtip > 1e-3, "without the moment the arc should spring back (tip moved %.3g m)", dr.dtip);
    }
    finish(m, d);
  }
  free(pt);
  free(ra);
}

/* A straight rod started stretched (rest_arc shorter than the centerline)
 * is held by the axial tip force E A (l / l0 - 1) and contracts without it. */
static void test_stretch_held_by_force(void) {
  const double E = 1e6, r = 0.01, A = M_PI * r * r, l = 0.5, l0 = 0.4, F = E * A * (l / l0 - 1);
  for (int held = 1; held >= 0; held--) {
    char config[2048], err[1024] = "";
    snprintf(config, sizeof config,
             CFG("sections", "5") CFG("radius", "0.01") CFG("young", "1e6") CFG("disks", "1")
                 CFG("centerline", "0 0 0, 0 0 0.2, 0 0 0.5") CFG("rest_arc", "0 0.16 0.4")
                 "<config key=\"tip_force\" value=\"%.17g 0 %.17g\"/>",
             0.0, held ? F : 0.0);
    mjModel *m = rod_scene("0 0 0", "0 0 0", config, err, sizeof err);
    EXPECT(m, "load: %s", err);
    mjData *d = m ? attach(m) : NULL;
    if (d) {
      double tip[3], quat[4];
      cusp_tip_pose(m, d, 0, tip, quat);
      EXPECT(fabs(tip[2] - l) < 1e-12, "starts at the centerline's end: tip z %.17g, want %g", tip[2], l);
      drift_t dr = run_still(m, d, 300);
      if (held)
        EXPECT(dr.finite && dr.dq < 1e-9 && dr.dtip < 1e-10,
               "the stretched rod under E A (l/l0 - 1) = %g N moved: |dq| %.3g, tip %.3g m", F, dr.dq, dr.dtip);
      else
        EXPECT(dr.dtip > 1e-3, "without the force the stretched rod should contract (tip moved %.3g m)", dr.dtip);
    }
    finish(m, d);
  }
}

/* A soft rod hanging under its own weight, started at the exact elastic
 * hanging shape: each point at z(s) = s + rho g (L s - s^2 / 2) / E below
 * the mount (tension rho g A (L - s) over E A), given as the centerline with
 * the rest arcs s. The linear tension makes a section's constant stretch
 * its midpoint's, which reaches the exact points: the rod stays where it
 * starts (to 1e-9). Started unstretched at the same rest length, it drops. */
static void test_hanging_stretched(void) {
  const double L = 1, E = 1e5, rho = 1000, g = 9.81;
  enum { N = 10 };
  double p[3 * (N + 1)], arc[N + 1];
  for (int j = 0; j <= N; j++) {
    double s = L * j / N;
    p[3 * j] = p[3 * j + 1] = 0;
    p[3 * j + 2] = s + rho * g * (L * s - s * s / 2) / E;
    arc[j] = s;
  }
  char *pt = points_text(p, N + 1), *ra = numbers_text(arc, N + 1);
  for (int stretched = 1; stretched >= 0; stretched--) {
    char config[4096], err[1024] = "";
    snprintf(config, sizeof config,
             CFG("sections", "10") CFG("radius", "0.01") CFG("young", "1e5") CFG("density", "1000")
                 CFG("disks", "0") "<config key=\"centerline\" value=\"%s\"/>%s%s%s",
             stretched ? pt : "0 0 0, 0 0 1", stretched ? "<config key=\"rest_arc\" value=\"" : "",
             stretched ? ra : "", stretched ? "\"/>" : "");
    mjModel *m = rod_scene("180 0 0", "0 0 -9.81", config, err, sizeof err);
    EXPECT(m, "load: %s", err);
    mjData *d = m ? attach(m) : NULL;
    if (d) {
      double tip[3], quat[4];
      cusp_tip_pose(m, d, 0, tip, quat);
      if (stretched)
        EXPECT(fabs(tip[2] + p[3 * N + 2]) < 1e-12, "starts at the hanging tip: z %.17g, want %.17g", tip[2],
               -p[3 * N + 2]);
      drift_t dr = run_still(m, d, 300);
      if (stretched)
        EXPECT(dr.finite && dr.dq < 1e-9 && dr.dtip < 1e-9,
               "the rod started in its hanging equilibrium moved: |dq| %.3g, tip %.3g m", dr.dq, dr.dtip);
      else
        EXPECT(dr.dtip > 1e-3, "started unstretched the rod should drop (tip moved %.3g m)", dr.dtip);
    }
    finish(m, d);
  }
  free(pt);
  free(ra);
}

/* ---------- the cantilever ---------- */

/* Static tip deflection (world -z) of a cantilever along world +x with a
 * downward tip force F (the keys' chain, sb_static_solve). */
static double cantilever_static(int sections, const char *strains, double L, double r, double E, double F,
                                double *tip_x) {
  cusp_instance_config *c = rod_config();
  char num[32], err[512];
  snprintf(num, sizeof num, "%d", sections);
  set(c, "sections", num);
  snprintf(num, sizeof num, "%.17g", L / sections);
  set(c, "length", num);
  snprintf(num, sizeof num, "%.17g", r);
  set(c, "radius", num);
  snprintf(num, sizeof num, "%.17g", E);
  set(c, "young", num);
  set(c, "strains", strains);
  EXPECT(cusp_config_finish(c, err, sizeof err) == 0, "finish: %s", err);
  sb_pose base = sb_pose_identity(); /* z -> x: 90 deg about y */
  double R[9] = {0, 0, 1, 0, 1, 0, -1, 0, 0};
  memcpy(base.R, R, sizeof R);
  chain_t ch;
  double defl = NAN;
  if (chain_make(c, &ch, &base) == 0) {
    int n = ch.m->n;
    double *q = calloc(n, sizeof(double)), *tau = calloc(n, sizeof(double)), res;
    sb_point_load load = {.seg = sections - 1, .s = L / sections, .force = {0, 0, -F}};
    /* continuation in the load: Newton from the straight rod under the full load can miss the elastica */
    int rc = 0;
    for (int k = 1; k <= 8 && !rc; k++) {
      load.force[2] = -F * k / 8;
      rc = sb_static_solve(ch.m, ch.w, tau, &load, 1, q, 1e-10 * F * L, 200, &res, err, sizeof err);
    }
    EXPECT(rc == 0, "static solve, %d sections: %s (residual %g)", sections, err, res);
    sb_kinematics(ch.m, ch.w, q, NULL);
    sb_pose g;
    sb_point_kinematics(ch.m, ch.w, sections - 1, L / sections, &g, NULL, NULL, NULL);
    defl = -g.p[2];
    if (tip_x) *tip_x = g.p[0];
    free(q);
    free(tau);
    chain_free(&ch);
  }
  free(c);
  return defl;
}

/* The elastica of a cantilever with a tip load P perpendicular to it, by
 * shooting on kappa(0) (RK4 in s on x' = cos t, z' = sin t, t' = k,
 * k' = (P / E I) cos t; t(0) = 0, k(L) = 0): tip (x, -z) / L for alpha =
 * P L^2 / (E I). */
static void elastica(double alpha, double *x_tip, double *defl);

/* cosseratbench's cantilever (r/L = 0.02, deflection 2 % of L) against
 * Euler-Bernoulli, F L^3/(3 E I): within 1 % at 20 sections. The discrete
 * rod's own error is the projection of the curvature F (L - s) / (E I) onto
 * constants per section, 1 / (4 N^2) of the deflection (the sum of
 * L_i var_i(L - s) over L^3 / 3): against the elastica (which holds the
 * geometric nonlinearity, 4e-4 here) the error is that, to a few percent. */
static void test_cantilever_small(void) {
  const double L = 1, r = 0.02, E = 1e6, I = M_PI * r * r * r * r / 4, F = 7.5e-3, eb = F * L * L * L / (3 * E * I);
  double xe, de;
  elastica(F * L * L / (E * I), &xe, &de);
  de *= L;
  printf("cantilever F L^3/(3EI) = %.6g m, elastica %.6g m: sections, deflection, error vs F L^3/(3EI), "
         "vs the elastica, 1/(4N^2)\n", eb, de);
  for (int N = 5; N <= 80; N *= 2) {
    double d = cantilever_static(N, "kx ky ez", L, r, E, F, NULL), e = fabs(d / eb - 1), ee = 1 - d / de;
    printf("  %2d  %.9g  %.3e  %.3e  %.3e\n", N, d, e, ee, 1 / (4.0 * N * N));
    EXPECT(fabs(ee * 4 * N * N - 1) < 0.05, "%d sections: error %.3e against the elastica, the discretization's %.3e",
           N, ee, 1 / (4.0 * N * N));
    if (N == 20) EXPECT(e < 0.01, "20 sections: %.3g %% off F L^3/(3EI)", 100 * e);
  }
}

/* The elastica of a cantilever with a tip load P perpendicular to it, by
 * shooting on kappa(0) (RK4 in s on x' = cos t, z' = sin t, t' = k,
 * k' = (P / E I) cos t; t(0) = 0, k(L) = 0): tip (x, -z) / L for alpha =
 * P L^2 / (E I). */
static void elastica(double alpha, double *x_tip, double *defl) {
  enum { STEPS = 4000 }; /* RK4: errors of order (1/STEPS)^4 */
  double lo = -alpha, hi = 0, y[4];
  for (int it = 0; it < 64; it++) { /* bisection to round-off */
    double k0 = (lo + hi) / 2, h = 1.0 / STEPS;
    y[0] = y[1] = y[2] = 0;
    y[3] = k0;
    for (int s = 0; s < STEPS; s++) {
      double k[4][4], t[4];
      for (int st = 0; st < 4; st++) {
        double c = st == 0 ? 0 : st == 3 ? 1 : 0.5;
        for (int a = 0; a < 4; a++) t[a] = y[a] + (st ? c * h * k[st - 1][a] : 0);
        k[st][0] = cos(t[2]);
        k[st][1] = sin(t[2]);
        k[st][2] = t[3];
        k[st][3] = alpha * cos(t[2]);
      }
      for (int a = 0; a < 4; a++) y[a] += h / 6 * (k[0][a] + 2 * k[1][a] + 2 * k[2][a] + k[3][a]);
    }
    if (y[3] > 0) hi = k0; else lo = k0;
  }
  *x_tip = y[0];
  *defl = -y[1];
}

static void test_cantilever_elastica(void) {
  double x1, d1;
  elastica(1, &x1, &d1);
  /* Bisshopp & Drucker (1945): alpha = 1, deflection 0.30172 L, tip 0.05643 L short of L */
  EXPECT(fabs(d1 - 0.30172) < 5e-5 && fabs(1 - x1 - 0.05643) < 5e-5, "the reference elastica: %.5f, %.5f", d1,
         1 - x1);
  const double alpha = 2, L = 0.5, r = 0.005, E = 1e7, I = M_PI * r * r * r * r / 4, P = alpha * E * I / (L * L);
  double xr, dr;
  elastica(alpha, &xr, &dr);
  printf("elastica alpha = %g: tip (%.6f, %.6f) L; sections, error of the tip position / L\n", alpha, xr, -dr);
  double prev = 0;
  for (int N = 5; N <= 40; N *= 2) {
    double x, d = cantilever_static(N, "kx ky", L, r, E, P, &x);
    double e = hypot(x / L - xr, d / L - dr);
    printf("  %2d  %.3e\n", N, e);
    if (prev > 0) EXPECT(e < prev / 3, "%d sections: error %.3e did not fall from %.3e", N, e, prev);
    if (N == 40) EXPECT(e < 2e-4, "40 sections: tip %.3e L off the elastica", e);
    prev = e;
  }
}

/* Through the plugin: a damped cantilever under tip_force settles where the
 * static solution of the same rod is (the load enters the step, and the
 * step's fixed point is the equilibrium). */
static void test_cantilever_plugin(void) {
  const double L = 0.2, r = 0.005, E = 1e7, F = 0.05;
  double ref = cantilever_static(10, "kx ky ez", L, r, E, F, NULL);
  char err[1024] = "";
  mjModel *m = rod_scene("0 90 0", "0 0 0",
                         CFG("sections", "10") CFG("length", "0.02") CFG("radius", "0.005") CFG("young", "1e7")
                             CFG("viscosity", "2e5") CFG("disks", "0") CFG("tip_force", "0 0 -0.05"),
                         err, sizeof err);
  EXPECT(m, "load: %s", err);
  mjData *d = m ? attach(m) : NULL;
  if (d) {
    for (int i = 0; i < 4000; i++) mj_step(m, d);
    double tip[3], quat[4];
    cusp_tip_pose(m, d, 0, tip, quat);
    EXPECT(fabs(-tip[2] / ref - 1) < 1e-6, "settled tip deflection %.9g m, static %.9g m", -tip[2], ref);
    printf("plugin cantilever: settled %.9g m, static %.9g m, F L^3/(3EI) %.9g m\n", -tip[2], ref,
           F * L * L * L / (3 * E * M_PI * pow(r, 4) / 4));
  }
  finish(m, d);
}

/* ---------- the keys' errors ---------- */

static void expect_finish_error(const char *const *kv, int nkv, const char *a, const char *b) {
  cusp_instance_config *c = rod_config();
  char err[512] = "";
  int rc = 0;
  for (int i = 0; i + 1 < nkv && !rc; i += 2) rc = cusp_config_set(c, kv[i], kv[i + 1], err, sizeof err);
  if (!rc) rc = cusp_config_finish(c, err, sizeof err);
  EXPECT(rc == -1, "%s=%s ... accepted", kv[0], kv[1]);
  EXPECT(has(err, "instance \"rod\"") && (!a || has(err, a)) && (!b || has(err, b)), "\"%s\" lacks \"%s\" / \"%s\"",
         err, a ? a : "", b ? b : "");
  free(c);
}
#define FINISH_ERROR(a, b, ...)                                                    \
  do {                                                                             \
    const char *kv_[] = {__VA_ARGS__};                                             \
    expect_finish_error(kv_, (int)(sizeof kv_ / sizeof kv_[0]), a, b);             \
  } while (0)

static void test_errors(void) {
  FINISH_ERROR("key \"centerline\"", "origin", "centerline", "0.1 0 0, 0.1 0 1");
  FINISH_ERROR("key \"centerline\"", "behind", "centerline", "0 0 0, 0 0 -1");
  FINISH_ERROR("key \"centerline\"", "at least 2", "centerline", "0 0 0");
  FINISH_ERROR("key \"centerline\"", "point 2", "centerline", "0 0 0, 0 0");
  FINISH_ERROR("key \"centerline\"", "plausible", "centerline", "0 0 0, 0 0 1e5");
  FINISH_ERROR("key \"centerline\"", "initial", "initial", "s1kx=1", "centerline", "0 0 0, 0 0 1");
  FINISH_ERROR("key \"centerline\"", "cosserat", "model", "pcc", "centerline", "0 0 0, 0 0 0.45");
  FINISH_ERROR("key \"centerline\"", "coincide", "centerline", "0 0 0, 0 0 0.5, 0 0 0.5");
  FINISH_ERROR("key \"centerline\"", "behind", "centerline", "0 0 0, 0 0 0.5, 0 0 0.2", "rest_arc", "0 0.5 0.8",
               "sections", "2");
  FINISH_ERROR("key \"rest_arc\"", "3 points", "centerline", "0 0 0, 0 0 0.5, 0 0 0.6", "rest_arc", "0 0.5");
  FINISH_ERROR("key \"rest_arc\"", "without a centerline", "rest_arc", "0 0.5");
  FINISH_ERROR("key \"rest_arc\"", "increase", "rest_arc", "0 0.5 0.4");
  FINISH_ERROR("key \"rest_arc\"", "0", "rest_arc", "0.1 0.5");
  FINISH_ERROR("key \"length\"", "unset length", "centerline", "0 0 0, 0 0 0.6", "length", "0.1");
  FINISH_ERROR("the last value of rest_arc", "0.5", "centerline", "0 0 0, 0 0 0.6", "rest_arc", "0 0.5", "length",
               "0.1");
  FINISH_ERROR("key \"strains\"", "lacks ez", "centerline", "0 0 0, 0 0 0.6", "rest_arc", "0 0.5", "strains",
               "kx ky");
  FINISH_ERROR("key \"strains\"", "lacks ky", "centerline", "0 0 0, 0 0 0.3, 0.1 0 0.5", "strains", "kx ez");
  FINISH_ERROR("key \"tip_force\"", "three numbers", "tip_force", "1 2");
  FINISH_ERROR("key \"tip_force\"", "plausible", "tip_force", "0 0 1e7");
  FINISH_ERROR("key \"tip_torque\"", "three numbers", "tip_torque", "0 0 x");
  FINISH_ERROR("key \"tip_force\"", "native", "contact", "native", "tip_force", "0 0 1");
  /* a straight centerline needs no bending strain, and its own lengths no stretch */
  cusp_instance_config *c = rod_config();
  char err[512];
  set(c, "centerline", "0 0 0, 0 0 0.3, 0 0 0.6,");
  set(c, "strains", "kx");
  EXPECT(cusp_config_finish(c, err, sizeof err) == 0 && fabs(c->length[2] - 0.2) < 1e-15,
         "straight centerline with strains kx: %s", err);
  free(c);
  /* sections of given lengths sit at their own rest arcs: a uniform 20 % stretch is 0.2 in each */
  c = rod_config();
  set(c, "sections", "3");
  set(c, "length", "0.1 0.2 0.3");
  set(c, "centerline", "0 0 0, 0 0 0.3, 0 0 0.72");
  set(c, "rest_arc", "0 0.25 0.6");
  int ok = cusp_config_finish(c, err, sizeof err) == 0;
  EXPECT(ok, "per-section lengths: %s", err);
  for (int i = 0; ok && i < 3; i++)
    EXPECT(fabs(c->initial[coord(c, i, "ez")] - 0.2) < 1e-14 && fabs(c->length[i] - 0.1 * (i + 1)) < 1e-15,
           "section %d: stretch %.17g (0.2), length %g", i + 1, c->initial[coord(c, i, "ez")], c->length[i]);
  free(c);
}

/* ---------- many sections ---------- */

/* A 100-element rod with a disk at every section end loads, falls under
 * gravity for 100 steps and stays finite; a centerline of 100 sections
 * starts it bent. */
static void test_hundred_sections(void) {
  char err[1024] = "";
  mjModel *m = rod_scene("0 90 0", "0 0 -9.81",
                         CFG("sections", "100") CFG("length", "0.01") CFG("radius", "0.005") CFG("young", "1e7")
                             CFG("disks", "0") CFG("disk_radius", "0.006") CFG("disk_thickness", "0.002"),
                         err, sizeof err);
  EXPECT(m, "100 sections: %s", err);
  mjData *d = m ? attach(m) : NULL;
  if (d) {
    EXPECT(cusp_total_length(m, 0) > 0.999 && cusp_total_length(m, 0) < 1.001, "length %g",
           cusp_total_length(m, 0));
    drift_t dr = run_still(m, d, 100);
    const cusp_step_report *rep = cusp_report(m, d);
    EXPECT(dr.finite && dr.dtip > 1e-4 && rep && rep->nan_events == 0, "100 sections fell: tip moved %g, %s",
           dr.dtip, rep ? rep->message : "");
  }
  finish(m, d);
}

int main(void) {
  test_nodes_on_polyline();
  test_arc_curvature();
  test_errors();
  test_arc_held_by_moment();
  test_stretch_held_by_force();
  test_hanging_stretched();
  test_cantilever_small();
  test_cantilever_elastica();
  test_cantilever_plugin();
  test_hundred_sections();
  return test_report("rodstart");
}

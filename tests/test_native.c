/* contact = native (plugin/native.h): the soft arm emitted as rigid MuJoCo
 * links on spring-damper joints. Checked against independent references:
 * the soft PCC arm run through cusp (statics under gravity and chamber
 * forces, converging at second order as disks grow; a step response),
 * closed-form PCC arcs and K^-1 tau (no gravity; PCC and Cosserat), the
 * Euler-Bernoulli cantilever (free joints), the continuum's mass and moment
 * of inertia (MuJoCo's subtree masses and mass matrix), MuJoCo's own
 * kinematics of the straight chain (the initial pose written through joint
 * refs), MuJoCo's contact (resting on a plane), the error paths, and every
 * mjcf/ scene run native. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lapacke.h>

#include "cusp.h"
#include "plugin_testutil.h"

static char tmpdir[] = "/tmp/cusp-test-native-XXXXXX";

/* The CUSP arm (config defaults: 3 sections of 0.15 m, 1.17/0.54/0.265 kg,
 * K = 265 N/m, B = 125 N*s/m, chambers at d = 0.015 m) on a mount at 1 m
 * whose local z points along world +x (a horizontal cantilever); `keys` adds
 * <config> lines, `world` more worldbody elements. Returns the file path. */
static const char *scene(const char *name, const char *option, const char *keys, const char *mount,
                         const char *world) {
  static char path[8][256];
  static int slot;
  char *p = path[slot++ % 8];
  snprintf(p, sizeof path[0], "%s/%s.xml", tmpdir, name);
  FILE *f = fopen(p, "w");
  if (!f) return p;
  fprintf(f,
          "<mujoco model=\"%s\">\n"
          "  <option %s/>\n"
          "  <extension><plugin plugin=\"cusp.softbody\"><instance name=\"arm\">\n%s\n"
          "  </instance></plugin></extension>\n"
          "  <worldbody>\n%s\n"
          "    <body name=\"mount\" %s><plugin instance=\"arm\"/></body>\n"
          "  </worldbody>\n"
          "</mujoco>\n",
          name, option, keys, world, mount);
  fclose(f);
  return p;
}

#define HORIZONTAL "pos=\"0 0 1\" xyaxes=\"0 1 0 0 0 1\""

/* Tip after the state settles: steps to T, then reports the tip and how far
 * it moved over the last 0.1 s. Native tips are read after mj_kinematics
 * (MuJoCo's positions lag one step behind mj_step's integration). */
typedef struct {
  double tip[3], drift, q[3 * 16];
  int n, finite;
  long nan_events;
} settled;

static void tip_now(const mjModel *m, mjData *d, double tip[3]) {
  char contact[16] = "";
  cusp_get(m, d, 0, "contact", contact, sizeof contact);
  if (!strcmp(contact, "native")) mj_kinematics(m, d);
  cusp_tip_pose(m, d, 0, tip, NULL);
}

static settled settle(const char *path, const cusp_override *ov, int nov, double T) {
  settled r;
  memset(&r, 0, sizeof r);
  mjModel *m = load(path, ov, nov);
  if (!m) return r;
  mjData *d = attach(m);
  double before[3] = {0, 0, 0};
  r.finite = 1;
  while (d->time < T - 0.5 * m->opt.timestep && r.finite) {
    mj_step(m, d);
    if (!state_finite(m, d)) r.finite = 0;
    if (fabs(d->time - (T - 0.1)) < 0.5 * m->opt.timestep) tip_now(m, d, before);
  }
  tip_now(m, d, r.tip);
  r.drift = sqrt(pow(r.tip[0] - before[0], 2) + pow(r.tip[1] - before[1], 2) + pow(r.tip[2] - before[2], 2));
  const double *q;
  r.n = cusp_soft_state(m, d, 0, &q, NULL);
  for (int i = 0; i < r.n && i < 48; i++) r.q[i] = q[i];
  r.nan_events = cusp_report(m, d)->nan_events;
  finish(m, d);
  return r;
}

static double dist3(const double a[3], const double b[3]) {
  return sqrt(pow(a[0] - b[0], 2) + pow(a[1] - b[1], 2) + pow(a[2] - b[2], 2));
}

/* ---------- closed-form PCC ---------- */

/* End pose of a PCC section (chamber radius d, chambers at 90/210/330 deg,
 * length L) with chamber elongations l: curvature from the chamber lengths
 * l_j = L (d (kx sin psi_j - ky cos psi_j) + e), then the SE(3) exponential
 * of [w = L k; v = L (1 + e) z] with w _|_ v, composed onto (R, p). */
static void pcc_section(double L, double d, const double l[3], double R[9], double p[3]) {
  double kx = 0, ky = 0, e = 0;
  for (int j = 0; j < 3; j++) {
    double psi = M_PI / 2 + 2 * M_PI * j / 3;
    /* sum_j sin^2 = sum_j cos^2 = 3/2, sum_j sin cos = sum_j sin = sum_j cos = 0 */
    kx += l[j] * sin(psi) / (1.5 * L * d);
    ky += -l[j] * cos(psi) / (1.5 * L * d);
    e += l[j] / (3 * L);
  }
  double w[3] = {L * kx, L * ky, 0}, v[3] = {0, 0, L * (1 + e)}, phi = hypot(w[0], w[1]);
  double a = phi > 1e-12 ? sin(phi) / phi : 1, b = phi > 1e-12 ? (1 - cos(phi)) / (phi * phi) : 0.5;
  double c = phi > 1e-12 ? (phi - sin(phi)) / (phi * phi * phi) : 1.0 / 6;
  double W[9] = {0, -w[2], w[1], w[2], 0, -w[0], -w[1], w[0], 0}, W2[9], Rl[9], V[9], pl[3];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      W2[3 * i + j] = 0;
      for (int k = 0; k < 3; k++) W2[3 * i + j] += W[3 * i + k] * W[3 * k + j];
    }
  for (int i = 0; i < 9; i++) {
    Rl[i] = (i % 4 == 0) + a * W[i] + b * W2[i];
    V[i] = (i % 4 == 0) + b * W[i] + c * W2[i];
  }
  for (int i = 0; i < 3; i++) pl[i] = V[3 * i] * v[0] + V[3 * i + 1] * v[1] + V[3 * i + 2] * v[2];
  double Rn[9];
  for (int i = 0; i < 3; i++) {
    p[i] += R[3 * i] * pl[0] + R[3 * i + 1] * pl[1] + R[3 * i + 2] * pl[2];
    for (int j = 0; j < 3; j++) Rn[3 * i + j] = R[3 * i] * Rl[j] + R[3 * i + 1] * Rl[3 + j] + R[3 * i + 2] * Rl[6 + j];
  }
  memcpy(R, Rn, sizeof Rn);
}

/* Tip of the 3-section arm with chamber elongations q (9) from the
 * horizontal mount (local z = world x, local x = world y, local y = world z). */
static void pcc_tip(const double *q, double tip[3]) {
  double R[9] = {0, 0, 1, 1, 0, 0, 0, 1, 0}, p[3] = {0, 0, 1};
  for (int i = 0; i < 3; i++) pcc_section(0.15, 0.015, q + 3 * i, R, p);
  memcpy(tip, p, sizeof p);
}

/* ---------- tests ---------- */

/* Mass: MuJoCo's subtree masses are the section masses and the mass beyond
 * each joint; the first joint's mass-matrix entry is the moment of inertia
 * of the continuum beyond it (line density lambda, cross-section r^2/4). */
static void test_mass(void) {
  const char *path = scene("mass", "gravity=\"0 0 0\"", "", HORIZONTAL, "");
  const double mass[3] = {1.17, 0.54, 0.265}, L = 0.15, r = 0.025;
  for (int disks = 2; disks <= 8; disks += 6) {
    char dv[8];
    snprintf(dv, sizeof dv, "%d", disks);
    cusp_override ov[2] = {{"arm", "contact", "native"}, {"arm", "disks", dv}};
    mjModel *m = load(path, ov, 2);
    if (!m) return;
    mjData *d = attach(m);
    int N = disks + 1, b0 = mj_name2id(m, mjOBJ_BODY, "arm/disk0");
    double total = mass[0] + mass[1] + mass[2];
    EXPECT(b0 >= 0 && fabs(m->body_subtreemass[b0] - total) < 1e-12 * total,
           "mass (N = %d): subtree %.15g kg = section masses %.15g kg", N, b0 >= 0 ? m->body_subtreemass[b0] : NAN,
           total);
    /* beyond joint k of section 2 (body disk(N + k)): half its interval and the rest */
    for (int k = 1; k <= N; k++) {
      char name[32];
      snprintf(name, sizeof name, "arm/disk%d", N + k);
      int b = mj_name2id(m, mjOBJ_BODY, name);
      double expect = mass[1] * (N - k + 0.5) / N + mass[2];
      EXPECT(b >= 0 && fabs(m->body_subtreemass[b] - expect) < 1e-12, "mass (N = %d): beyond joint %d of section 2: "
             "%.15g kg, expected %.15g", N, k, b >= 0 ? m->body_subtreemass[b] : NAN, expect);
    }
    /* first hinge (about local x at s = l/2): int lambda ((s - l/2)^2 + r^2/4) ds over s > l/2 */
    double l = L / N, s0 = l / 2, inertia = 0;
    for (int i = 0; i < 3; i++) {
      double lam = mass[i] / L, a = fmax(i * L, s0) - s0, b = (i + 1) * L - s0;
      inertia += lam * ((b * b * b - a * a * a) / 3 + r * r / 4 * (b - a));
    }
    mj_forward(m, d);
    double *M = calloc((size_t)m->nv * m->nv, sizeof(double));
    mj_fullM(m, d, M);
    int j = mj_name2id(m, mjOBJ_JOINT, "arm/j1kx");
    double got = j >= 0 ? M[m->jnt_dofadr[j] * (m->nv + 1)] : NAN;
    printf("mass (N = %d): %.6g kg, first hinge inertia %.9g kg m^2 (continuum %.9g)\n", N,
           m->body_subtreemass[b0], got, inertia);
    EXPECT(fabs(got - inertia) < 1e-10 * inertia, "mass (N = %d): inertia about the first hinge %.12g = %.12g",
           N, got, inertia);
    EXPECT(fabs(cusp_total_mass(m, d, 0) - total) < 1e-12, "mass: cusp_total_mass %.15g", cusp_total_mass(m, d, 0));
    free(M);
    finish(m, d);
  }
}

/* Initial shape: the bent, stretched start of key "initial" is written with
 * joint refs; MuJoCo's kinematics of the straight chain at the same joint
 * values (and at other values) must give the same body poses, and the
 * tendons read back the initial elongations. */
static void test_initial(void) {
  const char *q0 = "0.02 -0.01 0.005 0.01 0.03 -0.02 0.015 0.015 0.015";
  char keys[256];
  snprintf(keys, sizeof keys, "<config key=\"initial\" value=\"%s\"/>", q0);
  const char *bent = scene("initial_bent", "gravity=\"0 0 0\"", keys, HORIZONTAL, "");
  const char *straight = scene("initial_straight", "gravity=\"0 0 0\"", "", HORIZONTAL, "");
  cusp_override ov[2] = {{"arm", "contact", "native"}, {"arm", "disks", "6"}};
  mjModel *mb = load(bent, ov, 2), *ms = load(straight, ov, 2);
  if (!mb || !ms) {
    finish(mb, NULL);
    finish(ms, NULL);
    return;
  }
  mjData *db = attach(mb), *ds = attach(ms);
  EXPECT(mb->nq == ms->nq && mb->nbody == ms->nbody, "initial: same structure");
  double worst = 0;
  for (int trial = 0; trial < 2 && mb->nq == ms->nq; trial++) {
    /* trial 0: at qpos0; trial 1: both moved by the same random dq */
    for (int i = 0; i < mb->nq; i++) {
      double dq = trial ? 0.2 * tu_rand() : 0;
      db->qpos[i] = mb->qpos0[i] + dq;
      ds->qpos[i] = mb->qpos0[i] + dq; /* the bent model's joint values, on the straight chain */
    }
    mj_kinematics(mb, db);
    mj_kinematics(ms, ds);
    for (int b = 1; b < mb->nbody; b++) {
      for (int k = 0; k < 3; k++) worst = fmax(worst, fabs(db->xpos[3 * b + k] - ds->xpos[3 * b + k]));
      for (int k = 0; k < 9; k++) worst = fmax(worst, fabs(db->xmat[9 * b + k] - ds->xmat[9 * b + k]));
    }
  }
  printf("initial: bent-as-written vs straight chain at the same joint values: max difference %.3g\n", worst);
  EXPECT(worst < 1e-12, "initial: written pose = straight chain at the refs (max difference %.3g)", worst);
  /* tendons at qpos0 = initial elongations */
  mj_resetData(mb, db);
  mj_kinematics(mb, db);
  const double *q;
  int n = cusp_soft_state(mb, db, 0, &q, NULL);
  double want[9], err = 0;
  sscanf(q0, "%lf %lf %lf %lf %lf %lf %lf %lf %lf", want, want + 1, want + 2, want + 3, want + 4, want + 5,
         want + 6, want + 7, want + 8);
  for (int i = 0; i < 9 && n == 9; i++) err = fmax(err, fabs(q[i] - want[i]));
  EXPECT(n == 9 && err < 1e-14, "initial: tendon lengths = initial elongations (n = %d, max error %.3g)", n, err);
  /* the start pose converges to the closed-form arcs at second order */
  double arc[3], e[3];
  pcc_tip(want, arc);
  for (int i = 0; i < 3; i++) {
    char dv[8];
    snprintf(dv, sizeof dv, "%d", (4 << i) - 1);
    cusp_override o2[2] = {{"arm", "contact", "native"}, {"arm", "disks", dv}};
    mjModel *m = load(bent, o2, 2);
    e[i] = INFINITY;
    if (!m) continue;
    mjData *d = attach(m);
    mj_kinematics(m, d);
    double tip[3];
    cusp_tip_pose(m, d, 0, tip, NULL);
    e[i] = dist3(tip, arc);
    printf("initial: N = %2d: native start tip %.4g mm from the closed-form arcs\n", 4 << i, 1e3 * e[i]);
    finish(m, d);
  }
  EXPECT(e[1] < e[0] / 3 && e[2] < e[1] / 3 && e[2] < 0.5e-3,
         "initial: start tip converges at second order to the arcs (%.3g, %.3g, %.3g mm)", 1e3 * e[0], 1e3 * e[1],
         1e3 * e[2]);
  finish(mb, db);
  finish(ms, ds);
}

/* Static equilibrium of a native model by Newton on MuJoCo's own forces:
 * qfrc_passive + qfrc_actuator - qfrc_bias = 0 at qvel = 0, in the reduced
 * coordinates of the model's joint equalities (a tied joint follows its
 * master, so ideal ties contribute nothing to G^T f). It tests the emitted
 * model itself (geometry, springs, masses, tendons), free of the transient
 * dynamics and of MuJoCo's soft-constraint slack. ctrl is as given (the
 * callers give a scene's schedule values at t = 0, or no schedule at all, so
 * the plugin's controls stage agrees). Returns the residual norm. */
static double native_statics(const mjModel *m, mjData *d, const double *ctrl) {
  int nq = m->nq, *master = malloc(sizeof(int) * nq), nx = 0, *xi = malloc(sizeof(int) * nq);
  for (int j = 0; j < m->njnt; j++) master[j] = j;
  for (int e = 0; e < m->neq; e++)
    if (m->eq_type[e] == mjEQ_JOINT && m->eq_obj2id[e] >= 0) master[m->eq_obj1id[e]] = m->eq_obj2id[e];
  for (int j = 0; j < m->njnt; j++) xi[j] = master[j] == j ? nx++ : -1;
  for (int j = 0; j < m->njnt; j++) xi[j] = xi[master[j]];
  double *x = calloc(nx, sizeof(double)), *r = calloc(nx, sizeof(double)), *J = calloc((size_t)nx * nx, sizeof(double));
  double *r2 = calloc(nx, sizeof(double)), *dx = calloc(nx, sizeof(double));
  for (int j = 0; j < m->njnt; j++) x[xi[j]] = m->qpos0[m->jnt_qposadr[j]];
  mj_resetData(m, d);
  for (int i = 0; i < m->nu; i++) d->ctrl[i] = ctrl ? ctrl[i] : 0;
  /* r = G^T (passive + actuator - bias) at q = G x */
  #define RESID(xv, out)                                                                      \
    do {                                                                                     \
      for (int j = 0; j < m->njnt; j++) d->qpos[m->jnt_qposadr[j]] = (xv)[xi[j]];           \
      mju_zero(d->qvel, m->nv);                                                              \
      mj_forward(m, d);                                                                      \
      mju_zero(out, nx);                                                                     \
      for (int j = 0; j < m->njnt; j++) {                                                    \
        int v = m->jnt_dofadr[j];                                                            \
        (out)[xi[j]] += d->qfrc_passive[v] + d->qfrc_actuator[v] - d->qfrc_bias[v];          \
      }                                                                                      \
    } while (0)
  double norm = INFINITY;
  for (int it = 0; it < 50; it++) {
    RESID(x, r);
    norm = sqrt(mju_dot(r, r, nx));
    if (norm < 1e-11) break;
    for (int c = 0; c < nx; c++) {
      double h = 1e-7, keep = x[c];
      x[c] = keep + h;
      RESID(x, r2);
      x[c] = keep - h;
      RESID(x, dx);
      x[c] = keep;
      for (int i = 0; i < nx; i++) J[i * nx + c] = (r2[i] - dx[i]) / (2 * h);
    }
    for (int i = 0; i < nx; i++) dx[i] = -r[i];
    lapack_int *piv = malloc(sizeof(lapack_int) * nx);
    int info = LAPACKE_dgesv(LAPACK_ROW_MAJOR, nx, 1, J, nx, piv, dx, 1);
    free(piv);
    if (info) break;
    /* backtracking: large sags start far from the straight pose */
    double step = 1, n0 = norm;
    for (int k = 0; k < 30; k++, step *= 0.5) {
      for (int i = 0; i < nx; i++) r2[i] = x[i] + step * dx[i];
      RESID(r2, r);
      if (sqrt(mju_dot(r, r, nx)) < n0) break;
    }
    for (int i = 0; i < nx; i++) x[i] += step * dx[i];
  }
  RESID(x, r);
  norm = sqrt(mju_dot(r, r, nx));
  #undef RESID
  mj_kinematics(m, d);
  free(master);
  free(xi);
  free(x);
  free(r);
  free(J);
  free(r2);
  free(dx);
  return norm;
}

/* Native statics tip: loads path with contact native (disks, joints), solves
 * the equilibrium with the actuators at ctrl (by coordinate name). */
static int native_static_tip(const char *path, int disks, const char *joints, const char *const *act,
                             const double *u, int nact, double tip[3], double *q, double *resid) {
  char dv[8];
  snprintf(dv, sizeof dv, "%d", disks);
  cusp_override ov[3] = {{"arm", "contact", "native"}, {"arm", "disks", dv}, {"arm", "native_joints", joints}};
  mjModel *m = load(path, ov, 3);
  if (!m) return -1;
  mjData *d = mj_makeData(m);
  double *ctrl = calloc(m->nu ? m->nu : 1, sizeof(double));
  for (int i = 0; i < nact; i++) {
    char name[32];
    snprintf(name, sizeof name, "arm/%s", act[i]);
    int a = mj_name2id(m, mjOBJ_ACTUATOR, name);
    EXPECT(a >= 0, "actuator %s", name);
    if (a >= 0) ctrl[a] = u[i];
  }
  *resid = native_statics(m, d, ctrl);
  /* the tip site and the coordinates, through the public API of an attached copy */
  mjData *d2 = attach(m);
  mju_copy(d2->qpos, d->qpos, m->nq);
  mj_kinematics(m, d2);
  cusp_tip_pose(m, d2, 0, tip, NULL);
  const double *qq;
  int n = cusp_soft_state(m, d2, 0, &qq, NULL);
  for (int i = 0; q && i < n; i++) q[i] = qq[i];
  free(ctrl);
  mj_deleteData(d);
  finish(m, d2);
  return 0;
}

/* Statics against the soft PCC arm run through cusp: the horizontal
 * cantilever sagging under gravity, then also under constant chamber forces
 * (bending both ways and elongation). Both models have constant strain per
 * section (native_joints section); the native one discretizes each arc into
 * N links at the interval midpoints, a midpoint rule whose tip error is
 * O(L (kappa l)^2): it must shrink 4x per doubling of N. */
#define STIFF "<config key=\"stiffness\" value=\"2000\"/><config key=\"damping\" value=\"340\"/>" \
              "<config key=\"mass\" value=\"0.05 0.03 0.02\"/>"
#define FORCES \
  "<config key=\"schedule\" value=\"s1c1 0 10; s2c2 0 8; s3c1 0 10; s3c2 0 10; s3c3 0 10\"/>"
static const char *const force_act[5] = {"s1c1", "s2c2", "s3c1", "s3c2", "s3c3"};
static const double force_u[5] = {10, 8, 10, 10, 10};

static void test_statics(void) {
  /* a stiffer, lighter arm than the CUSP one, whose bending damping is 1e-3
   * of critical for its gravity swing (the soft reference would not settle
   * within a test): K = 2000 N/m and 0.1 kg sag the tip ~8 cm; B / K = 0.17 s
   * damps the lowest mode (~12 rad/s) critically, so 3 s settle it */
  for (int c = 0; c < 2; c++) {
    const char *what = c ? "gravity+forces" : "gravity";
    const char *path = scene(c ? "statics_forces" : "statics_gravity", "timestep=\"0.001\"", c ? STIFF FORCES : STIFF,
                             HORIZONTAL, "");
    cusp_override ov = {"arm", "contact", "lcp"};
    settled soft = settle(path, &ov, 1, 3);
    printf("statics %s: soft tip (%.6f %.6f %.6f), moved %.3g mm in the last 0.1 s\n", what, soft.tip[0],
           soft.tip[1], soft.tip[2], 1e3 * soft.drift);
    EXPECT(soft.finite && soft.drift < 1e-6, "statics %s: the soft reference settled (%.3g mm)", what, 1e3 * soft.drift);
    EXPECT(soft.tip[2] < 1 - 0.05, "statics %s: a large deflection (tip z = %.4f, mount at 1)", what, soft.tip[2]);
    /* the native reference takes the chamber forces as the ctrl of MuJoCo's
     * actuators, in the scene without the schedule (cusp adds a scene's
     * schedule to ctrl: both would double the forces) */
    const char *npath = scene(c ? "statics_forces_ctrl" : "statics_gravity_ctrl", "timestep=\"0.001\"", STIFF,
                              HORIZONTAL, "");
    const int disks[4] = {2, 5, 11, 23};
    double err[4], qerr = 0;
    for (int i = 0; i < 4; i++) {
      double tip[3] = {NAN, NAN, NAN}, q[9], resid = NAN;
      native_static_tip(npath, disks[i], "section", force_act, force_u, c ? 5 : 0, tip, q, &resid);
      err[i] = dist3(tip, soft.tip);
      if (i == 3)
        for (int k = 0; k < 9; k++) qerr = fmax(qerr, fabs(q[k] - soft.q[k]));
      printf("statics %s, N = %2d: native tip (%.6f %.6f %.6f), %.4g mm from the soft tip (residual %.2g N)\n",
             what, disks[i] + 1, tip[0], tip[1], tip[2], 1e3 * err[i], resid);
      EXPECT(resid < 1e-9, "statics %s, N = %d: equilibrium found (residual %.3g)", what, disks[i] + 1, resid);
    }
    EXPECT(err[0] < 1e-3, "statics %s: N = 3 within 1 mm of the soft tip (%.3g mm)", what, 1e3 * err[0]);
    for (int i = 1; i < 4; i++)
      EXPECT(err[i] < err[i - 1] / 3, "statics %s: error shrinks ~4x per doubling (N = %d: %.3g mm, N = %d: %.3g mm)",
             what, disks[i - 1] + 1, 1e3 * err[i - 1], disks[i] + 1, 1e3 * err[i]);
    EXPECT(qerr < 1e-5 * 0.15, "statics %s, N = 24: chamber coordinates (tendons) match the soft q (max %.3g m)", what,
           qerr);
  }
}

/* Chamber forces alone (no gravity, the CUSP arm): K q = tau exactly (the
 * tendon springs of section mode, the joint springs of free mode summed
 * through the tendon map), and the tip converges to the closed-form arcs. */
static void test_forces(void) {
  const char *path = scene("forces", "gravity=\"0 0 0\"", "", HORIZONTAL, "");
  const char *act[6] = {"s1c1", "s1c2", "s2c3", "s3c1", "s3c2", "s3c3"};
  /* ~0.8 rad of bending per section: the asymptotic regime from N = 3 on */
  const double u[6] = {5, -2, 4, 2, 2, 2}, K = 265;
  double qa[9] = {5 / K, -2 / K, 0, 0, 0, 4 / K, 2 / K, 2 / K, 2 / K}, arc[3];
  pcc_tip(qa, arc);
  for (int mode = 0; mode < 2; mode++) {
    const char *joints = mode ? "free" : "section";
    double e[3], qerr = 0;
    for (int i = 0; i < 3; i++) {
      double tip[3] = {NAN, NAN, NAN}, q[9], resid = NAN;
      native_static_tip(path, (3 << i) - 1, joints, act, u, 6, tip, q, &resid);
      e[i] = dist3(tip, arc);
      for (int k = 0; k < 9; k++) qerr = fmax(qerr, fabs(q[k] - qa[k]));
      printf("forces (%s), N = %2d: tip %.4g mm from the arcs, residual %.2g\n", joints, 3 << i, 1e3 * e[i], resid);
    }
    EXPECT(qerr < 1e-9, "forces (%s): tendon lengths = K^-1 tau (max error %.3g m)", joints, qerr);
    EXPECT(e[1] < e[0] / 3 && e[2] < e[1] / 3 && e[2] < 0.5e-3,
           "forces (%s): tip converges at second order to the arcs (%.3g, %.3g, %.3g mm)", joints, 1e3 * e[0],
           1e3 * e[1], 1e3 * e[2]);
  }
}

/* Cosserat: a moment on strain s1kx bends section 1 to K^-1 tau with
 * K = L E I (I = pi r^4 / 4), and the tip turns by that curvature times L. */
static void test_cosserat(void) {
  const char *path = scene("cosserat", "gravity=\"0 0 0\"",
                           "<config key=\"model\" value=\"cosserat\"/><config key=\"strains\" value=\"kx ky ez\"/>",
                           HORIZONTAL, "");
  const char *act[1] = {"s1kx"};
  const double u[1] = {0.01}, r = 0.025, kappa = 0.01 / (0.15 * 1e6 * M_PI * r * r * r * r / 4);
  for (int mode = 0; mode < 2; mode++) {
    const char *joints = mode ? "free" : "section";
    double tip[3], q[9] = {0}, resid = NAN;
    native_static_tip(path, 5, joints, act, u, 1, tip, q, &resid);
    /* closed form: section 1 an arc of curvature kappa about local x (as the
     * chamber lengths L d kappa sin psi_j would give), then straight */
    double ql[9] = {0}, arc[3];
    for (int j = 0; j < 3; j++) ql[j] = 0.15 * 0.015 * kappa * sin(M_PI / 2 + 2 * M_PI * j / 3);
    pcc_tip(ql, arc);
    printf("cosserat (%s): s1kx = %.9g 1/m (K^-1 tau %.9g), tip %.3g um from the arc, residual %.2g\n", joints,
           q[0], kappa, 1e6 * dist3(tip, arc), resid);
    EXPECT(dist3(tip, arc) < 1e-6, "cosserat (%s): tip on the arc (%.3g um)", joints, 1e6 * dist3(tip, arc));
    EXPECT(fabs(q[0] - kappa) < 1e-9 * kappa && fabs(q[1]) < 1e-12 && fabs(q[2]) < 1e-12,
           "cosserat (%s): mean strains = K^-1 tau (kx %.9g vs %.9g)", joints, q[0], kappa);
  }
}

/* Free joints are a pseudo-rigid rod with the section's bending stiffness
 * EI = 1.5 K L d^2 (the PCC energy 1/2 K sum l_j^2 at constant curvature):
 * under a small gravity load its tip deflection must converge to the
 * Euler-Bernoulli cantilever's, delta = int_0^L M(s) (L - s) / EI(s) ds. */
static void test_free_beam(void) {
  const char *path = scene("beam", "", "<config key=\"stiffness\" value=\"1e7\"/>", HORIZONTAL, "");
  const double mass[3] = {1.17, 0.54, 0.265}, L = 0.15, d = 0.015, g = 9.81, EI = 1.5 * 1e7 * L * d * d;
  /* M(s) = int_s^3L q(x) (x - s) dx, q = m_i g / L on section i; Simpson on a fine grid */
  int n = 30000;
  double delta = 0, h = 3 * L / n;
  for (int k = 0; k <= n; k++) {
    double s = k * h, M = 0;
    for (int i = 0; i < 3; i++) {
      double a = fmax(i * L, s), b = (i + 1) * L;
      if (b > a) M += mass[i] * g / L * ((b - s) * (b - s) - (a - s) * (a - s)) / 2;
    }
    double w = (k == 0 || k == n) ? 1 : (k % 2 ? 4 : 2);
    delta += w * M * (3 * L - s) / EI * h / 3;
  }
  double e[3];
  for (int i = 0; i < 3; i++) {
    double tip[3] = {NAN, NAN, NAN}, resid = NAN;
    native_static_tip(path, (3 << i) - 1, "free", NULL, NULL, 0, tip, NULL, &resid);
    double sag = 1 - tip[2];
    e[i] = fabs(sag - delta);
    printf("beam (free), N = %2d: tip sag %.6g mm, Euler-Bernoulli %.6g mm\n", 3 << i, 1e3 * sag, 1e3 * delta);
  }
  EXPECT(e[2] < 0.01 * delta && e[1] < e[0] / 3 && e[2] < e[1] / 3,
         "beam (free): sag converges at second order to Euler-Bernoulli (errors %.3g, %.3g, %.3g of %.3g mm)",
         1e3 * e[0], 1e3 * e[1], 1e3 * e[2], 1e3 * delta);
}

/* Dynamics through cusp: the schedules act through the tendon actuators'
 * moment arms as their ctrl would (cusp adds them to ctrl, as for the soft
 * arm), and mj_step settles at the static equilibrium of MuJoCo's actuators
 * driven by the same forces as ctrl (a scene without the schedule). */
static void test_settle(void) {
  const char *path = scene("settle", "timestep=\"0.001\"", STIFF FORCES, HORIZONTAL, "");
  const char *cpath = scene("settle_ctrl", "timestep=\"0.001\"", STIFF, HORIZONTAL, "");
  const char *modes[2][2] = {{"section", "2"}, {"free", "5"}};
  for (int k = 0; k < 2; k++) {
    cusp_override ov[3] = {{"arm", "contact", "native"}, {"arm", "disks", modes[k][1]}, {"arm", "native_joints", modes[k][0]}};
    settled dyn = settle(path, ov, 3, 3);
    double tip[3] = {NAN, NAN, NAN}, resid = NAN;
    native_static_tip(cpath, atoi(modes[k][1]), modes[k][0], force_act, force_u, 5, tip, NULL, &resid);
    double e = dist3(tip, dyn.tip);
    printf("settle (%s, N = %d): mj_step tip %.3g mm from the static solution, moved %.3g mm in the last 0.1 s\n",
           modes[k][0], atoi(modes[k][1]) + 1, 1e3 * e, 1e3 * dyn.drift);
    EXPECT(dyn.finite && dyn.nan_events == 0 && e < 0.05e-3 && dyn.drift < 0.05e-3,
           "settle (%s): at the equilibrium within 0.05 mm (%.3g mm, drift %.3g mm)", modes[k][0], 1e3 * e,
           1e3 * dyn.drift);
  }
  /* the schedule's forces reach the tendons as the same ctrl would: one step
   * with the schedule (ctrl left at 0: cusp never writes it) against one with
   * ctrl = the forces and no schedule, and against no input at all */
  cusp_override ov[2] = {{"arm", "contact", "native"}, {"arm", "disks", "2"}};
  mjModel *m = load(path, ov, 2), *mc = load(cpath, ov, 2);
  if (!m || !mc) {
    finish(m, NULL);
    finish(mc, NULL);
    return;
  }
  mjData *d = attach(m), *dc = attach(mc), *d0 = attach(mc);
  for (int i = 0; i < 5; i++) {
    char name[32];
    snprintf(name, sizeof name, "arm/%s", force_act[i]);
    int a = mj_name2id(mc, mjOBJ_ACTUATOR, name);
    EXPECT(a >= 0, "actuator %s", name);
    if (a >= 0) dc->ctrl[a] = force_u[i];
  }
  mj_step(m, d);
  mj_step(mc, dc);
  mj_step(mc, d0);
  int a = mj_name2id(m, mjOBJ_ACTUATOR, "arm/s1c1"), t = mj_name2id(m, mjOBJ_TENDON, "arm/s1c1");
  EXPECT(a >= 0 && t >= 0 && m->actuator_trntype[a] == mjTRN_TENDON && m->actuator_trnid[2 * a] == t,
         "settle: actuator arm/s1c1 drives tendon arm/s1c1");
  double diff = 0, scale = 0, effect = 0;
  for (int i = 0; i < m->nv && m->nv == mc->nv; i++) {
    diff = fmax(diff, fabs(d->qacc[i] - dc->qacc[i]));
    scale = fmax(scale, fabs(dc->qacc[i]));
    effect = fmax(effect, fabs(dc->qacc[i] - d0->qacc[i]));
  }
  printf("settle: first step's qacc, schedule vs ctrl: max difference %.3g (max |qacc| %.3g, effect of the forces %.3g)\n",
         diff, scale, effect);
  EXPECT(a >= 0 && d->ctrl[a] == 0, "settle: cusp leaves ctrl as the user set it (%g)", a >= 0 ? d->ctrl[a] : NAN);
  EXPECT(m->nv == mc->nv && diff <= 1e-10 * scale && effect > 1e3 * diff,
         "settle: the schedule acts as ctrl through the tendons (qacc differs by %.3g of %.3g; the forces change it by %.3g)",
         diff, scale, effect);
  mj_deleteData(dc);
  mj_deleteData(d0);
  finish(mc, NULL);
  finish(m, d);
}

/* Dynamics: a step of chamber forces (no gravity, light damping B = 5 so
 * the arm rings) moves the native arm (section mode, 7 links per section)
 * like the soft one: same configuration space, mass and stiffness; what
 * remains is the lumping of the inertia into links (O(1/N^2)) and the two
 * first-order integrators (cusp's linearly implicit Euler, MuJoCo's
 * semi-implicit Euler), a fraction of a mm here against a tip travel of
 * 5 cm; 1 mm is the bound. */
static void test_step_response(void) {
  const char *path = scene("step", "timestep=\"0.001\" gravity=\"0 0 0\"",
                           "<config key=\"damping\" value=\"5\"/><config key=\"schedule\" value=\"s1c1 0 3; s3c2 0 2\"/>",
                           HORIZONTAL, "");
  cusp_override ov[2][1] = {{{"arm", "contact", "lcp"}}, {{"arm", "contact", "native"}}};
  double tips[2][12][3];
  for (int k = 0; k < 2; k++) {
    mjModel *m = load(path, ov[k], 1);
    if (!m) return;
    mjData *d = attach(m);
    for (int i = 0; i < 12; i++) {
      while (d->time < 0.05 * (i + 1) - 0.5 * m->opt.timestep) mj_step(m, d);
      tip_now(m, d, tips[k][i]);
    }
    finish(m, d);
  }
  double worst = 0, travel = 0;
  for (int i = 0; i < 12; i++) {
    worst = fmax(worst, dist3(tips[0][i], tips[1][i]));
    travel = fmax(travel, dist3(tips[0][i], tips[0][0]));
  }
  printf("step response: native tip within %.3g mm of the soft tip over 0.6 s (soft tip travel %.3g mm)\n",
         1e3 * worst, 1e3 * travel);
  EXPECT(travel > 0.03 && worst < 1e-3, "step response: native follows the soft arm within 1 mm (%.3g mm, travel %.3g mm)",
         1e3 * worst, 1e3 * travel);
}

/* MuJoCo's contact: the CUSP arm, mounted 8 cm over a plane, sags onto it
 * and rests; the contacts are MuJoCo's (cusp solves none). MuJoCo's default
 * soft contact lets a resting body sink ~(1 - d) g / (d k) ~ 0.2 mm (d 0.95,
 * k = 1 / (0.95 * 0.02 s)^2), so 2 mm (the soft scenes' bound) is generous. */
static void test_contact(void) {
  const char *path = scene("contact", "timestep=\"0.001\"", "",
                           "pos=\"0 0 0.08\" xyaxes=\"0 1 0 0 0 1\"",
                           "    <geom name=\"floor\" type=\"plane\" size=\"2 2 0.1\"/>");
  cusp_override ov = {"arm", "contact", "native"};
  mjModel *m = load(path, &ov, 1);
  if (!m) return;
  mjData *d = attach(m);
  int floor = mj_name2id(m, mjOBJ_GEOM, "floor"), finite = 1, arm_contacts = 0;
  double pen = 0, before[3] = {0, 0, 0};
  while (d->time < 3 && finite) {
    mj_step(m, d);
    finite = state_finite(m, d);
    arm_contacts = 0;
    for (int c = 0; c < d->ncon; c++) {
      const mjContact *con = &d->contact[c];
      int other = con->geom1 == floor ? con->geom2 : con->geom2 == floor ? con->geom1 : -1;
      const char *name = other >= 0 ? mj_id2name(m, mjOBJ_GEOM, other) : NULL;
      if (name && !strncmp(name, "arm/disk", 8)) {
        arm_contacts++;
        if (d->time > 0.5) pen = fmax(pen, -con->dist);
      }
    }
    if (fabs(d->time - 2.9) < 0.5e-3) tip_now(m, d, before);
  }
  double tip[3];
  tip_now(m, d, tip);
  const cusp_step_report *r = cusp_report(m, d);
  printf("contact: %d arm-floor contacts at 3 s, max penetration %.3g mm after 0.5 s, tip z %.4f m, moved %.3g mm "
         "in the last 0.1 s\n", arm_contacts, 1e3 * pen, tip[2], 1e3 * dist3(tip, before));
  EXPECT(finite && r->nan_events == 0, "contact: finite state, no NaN events");
  EXPECT(arm_contacts >= 3, "contact: the arm lies on the floor (%d contacts)", arm_contacts);
  EXPECT(r->solves == 0 && r->ncontact == 0, "contact: MuJoCo solved them, cusp none (%ld solves)", r->solves);
  EXPECT(pen < 2e-3, "contact: penetration %.3g mm < 2 mm", 1e3 * pen);
  EXPECT(fabs(tip[2] - 0.03) < 3e-3, "contact: the tip disk rests on its rim (z = %.4f, disk radius 0.03)", tip[2]);
  EXPECT(dist3(tip, before) < 0.5e-3, "contact: at rest (moved %.3g mm in 0.1 s)", 1e3 * dist3(tip, before));
  finish(m, d);
}

/* The API on a native instance, and what is refused. */
static void test_errors(void) {
  const char *path = scene("errors", "", "", HORIZONTAL, "");
  char err[1024] = "", value[64] = "";
  cusp_override ov = {"arm", "contact", "native"};
  mjModel *m = load(path, &ov, 1);
  mjModel *ml = load(path, NULL, 0);
  if (!m || !ml) {
    finish(m, NULL);
    finish(ml, NULL);
    return;
  }
  mjData *d = attach(m), *dl = attach(ml);
  EXPECT(cusp_get(m, d, 0, "contact", value, sizeof value) == 0 && !strcmp(value, "native"), "cusp_get contact: \"%s\"",
         value);
  EXPECT(cusp_set(ml, dl, 0, "contact", "native", err, sizeof err) == -1 && strstr(err, "reload") && strstr(err, "native"),
         "cusp_set contact lcp -> native refused: %s", err);
  cusp_get(ml, dl, 0, "contact", value, sizeof value);
  EXPECT(!strcmp(value, "lcp"), "lcp instance unchanged (%s)", value);
  EXPECT(cusp_set(m, d, 0, "contact", "lcp", err, sizeof err) == -1 && strstr(err, "reload"),
         "cusp_set contact native -> lcp refused: %s", err);
  EXPECT(cusp_set(m, d, 0, "contact", "penalty", err, sizeof err) == -1, "cusp_set contact native -> penalty refused");
  EXPECT(cusp_set(m, d, 0, "contact", "native", err, sizeof err) == 0, "cusp_set contact native -> native: %s", err);
  EXPECT(cusp_set(m, d, 0, "solver", "lemke", err, sizeof err) == -1 && strstr(err, "native") && strstr(err, "solver"),
         "cusp_set solver on a native instance refused: %s", err);
  double f[3] = {0, 0, 1};
  EXPECT(cusp_apply_force(m, d, 0, 0.2, f, NULL, err, sizeof err) == -1 && strstr(err, "native"),
         "cusp_apply_force on a native instance refused: %s", err);
  double ke, pe, ee;
  EXPECT(cusp_energy(m, d, 0, &ke, &pe, &ee) == -1, "cusp_energy: -1 for a native instance (MuJoCo's energy applies)");
  int b = mj_name2id(m, mjOBJ_BODY, "arm/disk3"), inst = -2;
  EXPECT(b >= 0 && cusp_disk_of_body(m, b, &inst, NULL) == -1, "native bodies are not cusp-driven disks");
  double p0[3], p1[3];
  mj_kinematics(m, d);
  EXPECT(cusp_backbone_point(m, d, 0, 0, p0, NULL) == 0 && cusp_backbone_point(m, d, 0, 0.45, p1, NULL) == 0 &&
             fabs(p1[0] - p0[0] - 0.45) < 1e-9,
         "backbone of the straight native arm spans 0.45 m along +x (%.6g)", p1[0] - p0[0]);
  finish(m, d);
  finish(ml, dl);

  struct {
    const char *key, *value, *want[2];
  } bad[] = {{"contact", "nativ", {"lcp penalty native", "contact"}},
             {"native_joints", "rigid", {"section free", "native_joints"}},
             {"disks", "65", {"0..64", "disks"}}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    cusp_override o[2] = {{"arm", "contact", "native"}, {"arm", bad[i].key, bad[i].value}};
    mjModel *mb = cusp_load_with(path, o, 2, err, sizeof err);
    EXPECT(!mb && strstr(err, bad[i].want[0]) && strstr(err, bad[i].want[1]), "%s=%s refused: %s", bad[i].key,
           bad[i].value, err);
    finish(mb, NULL);
  }
  /* contact native nests one body per disk. MuJoCo 2.2.2's XML reader
   * stopped at 100 levels, so 96 disks were refused; mjSpec and MuJoCo
   * 4.0.1's reader have no such limit: 306 nested disks (5 sections x 61 +
   * 1) compile, step, and their expanded MJCF loads in stock MuJoCo */
  cusp_override o[4] = {{"arm", "contact", "native"}, {"arm", "sections", "5"}, {"arm", "disks", "60"},
                        {"arm", "mass", "0.5"}};
  mjModel *mm = cusp_load_with(path, o, 4, err, sizeof err);
  EXPECT(mm != NULL, "306 nested disks load (%s)", err);
  if (mm) {
    mjData *dd = attach(mm);
    for (int i = 0; i < 10; i++) mj_step(mm, dd);
    EXPECT(state_finite(mm, dd), "306 nested disks: 10 steps finite");
    char *xml = cusp_expand(path, o, 4, err, sizeof err), xpath[300];
    EXPECT(xml != NULL, "cusp_expand of 306 nested disks: %s", err);
    snprintf(xpath, sizeof xpath, "%s/deep_expanded.xml", tmpdir);
    FILE *f = xml ? fopen(xpath, "w") : NULL;
    if (f) {
      fputs(xml, f);
      fclose(f);
      mjModel *mx = mj_loadXML(xpath, NULL, err, sizeof err);
      EXPECT(mx && mx->nbody == mm->nbody, "stock mj_loadXML of the expanded 306 disks: %s (nbody %d, %d)", err,
             mx ? (int)mx->nbody : -1, (int)mm->nbody);
      if (mx) mj_deleteModel(mx);
    }
    free(xml);
    finish(mm, dd);
  }
}

/* Every scene of mjcf/ with all its instances native: loads, attaches and
 * steps 0.3 s with finite states and readable tips and coordinates. */
static void test_scenes(void) {
  const char *names[] = {"ball_rotation", "compare_penalty", "default", "demo_moving_base", "demo_pass_ball",
                         "demo_pin_ball", "demo_rod_pegs", "scenario_a", "scenario_b"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    char path[512], err[1024] = "";
    snprintf(path, sizeof path, "%s/mjcf/%s.xml", CUSP_SOURCE_DIR, names[i]);
    if (access(path, R_OK)) continue;
    mjModel *m0 = load(path, NULL, 0);
    if (!m0) continue;
    cusp_override ov[8];
    int n = cusp_instance_count(m0);
    for (int k = 0; k < n && k < 8; k++) ov[k] = (cusp_override){cusp_instance_name(m0, k), "contact", "native"};
    mjModel *m = cusp_load_with(path, ov, n, err, sizeof err);
    EXPECT(m != NULL, "scene %s native: %s", names[i], err);
    if (m) {
      mjData *d = attach(m);
      int finite = 1;
      while (d->time < 0.3 && finite) {
        mj_step(m, d);
        finite = state_finite(m, d);
      }
      double tip[3] = {NAN, NAN, NAN};
      const double *q;
      mj_kinematics(m, d);
      int ok = 1;
      for (int k = 0; k < n; k++) {
        ok &= cusp_tip_pose(m, d, k, tip, NULL) == 0 && isfinite(tip[0] + tip[1] + tip[2]);
        ok &= cusp_soft_state(m, d, k, &q, NULL) > 0 && isfinite(q[0]);
      }
      EXPECT(finite && ok && cusp_report(m, d)->nan_events == 0 && !d->warning[mjWARN_BADQACC].number,
             "scene %s native: 0.3 s finite, tips and coordinates readable", names[i]);
      finish(m, d);
    }
    finish(m0, NULL);
  }
}

int main(void) {
  if (!mkdtemp(tmpdir)) {
    perror("mkdtemp");
    return 1;
  }
  test_mass();
  test_initial();
  test_statics();
  test_forces();
  test_cosserat();
  test_free_beam();
  test_settle();
  test_step_response();
  test_contact();
  test_errors();
  test_scenes();
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  if (system(cmd)) fprintf(stderr, "could not remove %s\n", tmpdir);
  return test_report("native");
}

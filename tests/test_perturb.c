/* Loads applied to soft arms (cusp_apply_force, the viewer's soft dragging):
 * a hanging CUSP arm settles under a tip force where the static solver puts
 * it, the displacement follows the force and is linear in it, the measured
 * compliance obeys Maxwell-Betti reciprocity between two points, a moment
 * matches the statics too, clearing the load brings the arm back, a mount on
 * a spring carries the applied force, bad arguments are refused, disk bodies
 * map to their arc lengths, xfrc_applied on a disk body (the stock viewer's
 * mouse perturbation) acts as cusp_apply_force there, and stepping with a
 * load allocates nothing (in libcusp.so's code: tests/cusp_alloc_count.h). */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cusp_alloc_count.h"

#include "cusp.h"
#include "instances.h"
#include "plugin_testutil.h"

/* The CUSP arm (paper values, the config defaults) hanging from a fixed mount. */
static const char HANG[] =
    "<mujoco model='hang'>\n"
    "  <option timestep='0.005'/>\n"
    "  <extension><plugin plugin='cusp.softbody'><instance name='arm'>\n"
    "    <config key='disks' value='4'/>\n"
    "  </instance></plugin></extension>\n"
    "  <worldbody>\n"
    "    <body name='mount' pos='0 0 1' euler='180 0 0'><plugin instance='arm'/></body>\n"
    "  </worldbody>\n"
    "</mujoco>\n";

/* The same arm under a 1 kg carriage on a horizontal slide with a spring. */
#define SLIDE_K 2000.0
static const char SLIDE[] =
    "<mujoco model='slide'>\n"
    "  <option timestep='0.005'/>\n"
    "  <extension><plugin plugin='cusp.softbody'><instance name='arm'>\n"
    "    <config key='disks' value='1'/>\n"
    "  </instance></plugin></extension>\n"
    "  <worldbody>\n"
    "    <body name='carriage' pos='0 0 1'>\n"
    "      <joint name='x' type='slide' axis='1 0 0' stiffness='2000' damping='300'/>\n"
    "      <geom type='box' size='0.05 0.05 0.02' mass='1' contype='0' conaffinity='0'/>\n"
    "      <body name='mount' euler='180 0 0'><plugin instance='arm'/></body>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "</mujoco>\n";

static char tmpdir[64];

/* Steps until the soft and rigid velocities stay below tol (or T_max more
 * seconds pass); returns the largest velocity seen over the last step. */
static double settle(const mjModel *m, mjData *d, double tol, double T_max) {
  double t_end = d->time + T_max, vmax = INFINITY;
  while (d->time < t_end) {
    mj_step(m, d);
    const double *v;
    int n = cusp_soft_state(m, d, 0, NULL, &v);
    vmax = tu_maxabs(v, n);
    for (int j = 0; j < m->nv; j++) vmax = fmax(vmax, fabs(d->qvel[j]));
    if (vmax < tol) break;
  }
  return vmax;
}

static void point(const mjModel *m, const mjData *d, double s, double p[3]) {
  EXPECT(cusp_backbone_point(m, d, 0, s, p, NULL) == 0, "backbone point at s = %g", s);
}

static double dist3(const double a[3], const double b[3]) {
  return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
}

/* Settled pose of the point at s_meas under a load at s_load (force f,
 * torque t; both NULL: no load). */
static void settled_point(const mjModel *m, mjData *d, double s_load, const double f[3], const double t[3],
                          double s_meas, double p[3]) {
  char err[256] = "";
  EXPECT(cusp_apply_force(m, d, 0, s_load, f, t, err, sizeof err) == 0, "apply: %s", err);
  double v = settle(m, d, 1e-9, 40);
  EXPECT(v < 1e-9, "settled (max velocity %.3g)", v);
  point(m, d, s_meas, p);
}

/* Independent reference: the static equilibrium of a chain built from the
 * instance's configuration, with the same world load as a dead load, by the
 * softbody statics solver (damped Newton, no time stepping). */
static void static_tip(const mjModel *m, const mjData *d, const sb_point_load *load, double tip[3]) {
  cusp_instance_config *cfg = instance_config(m, 0);
  for (int k = 0; k < 3; k++) tip[k] = NAN; /* what a failed reference says */
  if (!cfg) return;
  sb_segment_params seg[CUSP_MAX_SECTIONS];
  sb_chain_params cp;
  cusp_config_chain(cfg, seg, &cp);
  for (int k = 0; k < 3; k++) cp.gravity[k] = m->opt.gravity[k];
  int base = cfg->base_body_id;
  free(cfg);
  for (int k = 0; k < 9; k++) cp.base.R[k] = d->xmat[9 * base + k];
  for (int k = 0; k < 3; k++) cp.base.p[k] = d->xpos[3 * base + k];
  char err[256] = "";
  sb_model *sm = sb_model_create(&cp, err, sizeof err);
  EXPECT(sm != NULL, "static model: %s", err);
  if (!sm) return;
  sb_work *w = sb_work_create(sm);
  double *q = calloc(sm->n, sizeof(double)), res = 0;
  int rc = sb_static_solve(sm, w, NULL, load, load ? 1 : 0, q, 1e-11, 100, &res, err, sizeof err);
  EXPECT(rc == 0, "static solve: residual %.3g: %s", res, err);
  sb_kinematics(sm, w, q, NULL);
  int last = sm->nseg - 1;
  sb_pose g;
  sb_point_kinematics(sm, w, last, sm->seg[last].p.length, &g, NULL, NULL, NULL);
  memcpy(tip, g.p, sizeof g.p);
  free(q);
  sb_work_free(w);
  sb_model_free(sm);
}

static void test_tip_force(void) {
  mjModel *m = load_text("hang", HANG);
  if (!m) return;
  mjData *d = attach(m);
  double L = cusp_total_length(m, 0), p0[3], ps[3];
  cusp_instance_config *cfg = instance_config(m, 0);
  if (!cfg) {
    finish(m, d);
    return;
  }
  int last = cfg->sections - 1;
  double last_len = cfg->length[last];
  free(cfg);

  /* at rest without load: where the statics say */
  settled_point(m, d, 0, NULL, NULL, L, p0);
  static_tip(m, d, NULL, ps);
  printf("rest: tip (%.6f %.6f %.6f), statics (%.6f %.6f %.6f)\n", p0[0], p0[1], p0[2], ps[0], ps[1], ps[2]);
  EXPECT(dist3(p0, ps) < 1e-7, "rest: tip %.3g m from the static equilibrium", dist3(p0, ps));

  /* a small horizontal tip force: statics, direction, linearity */
  const double F = 0.05;
  double f1[3] = {F, 0, 0}, f2[3] = {2 * F, 0, 0}, fm[3] = {-F, 0, 0}, p1[3], p2[3], pm[3];
  settled_point(m, d, L, f1, NULL, L, p1);
  sb_point_load ld = {last, last_len, {F, 0, 0}, {0, 0, 0}};
  static_tip(m, d, &ld, ps);
  double d1[3] = {p1[0] - p0[0], p1[1] - p0[1], p1[2] - p0[2]}, n1 = sqrt(mju_dot3(d1, d1));
  printf("tip force %.2f N: tip moved (%.4g %.4g %.4g) mm; statics differ by %.3g um\n", F, 1e3 * d1[0],
         1e3 * d1[1], 1e3 * d1[2], 1e6 * dist3(p1, ps));
  EXPECT(d1[0] > 0.95 * n1 && n1 > 1e-3, "tip force: the tip moves along +x (%.4g of %.4g mm)", 1e3 * d1[0],
         1e3 * n1);
  EXPECT(dist3(p1, ps) < 1e-3 * n1, "tip force: settled tip %.3g um from the statics (displacement %.4g mm)",
         1e6 * dist3(p1, ps), 1e3 * n1);
  settled_point(m, d, L, f2, NULL, L, p2);
  settled_point(m, d, L, fm, NULL, L, pm);
  double k1 = F / d1[0], k2 = 2 * F / (p2[0] - p0[0]), km = -F / (pm[0] - p0[0]);
  printf("tip stiffness from +F, 2F, -F: %.6g %.6g %.6g N/m\n", k1, k2, km);
  EXPECT(fabs(k2 - k1) < 0.02 * k1, "linearity: stiffness at 2F %.6g vs F %.6g N/m", k2, k1);
  /* +F and -F bracket the tangent stiffness: their mean is second order */
  double kc = 2 * F / (p1[0] - pm[0]);
  EXPECT(fabs(k1 - km) < 0.02 * kc && fabs(0.5 * (k1 + km) - kc) < 0.01 * kc,
         "linearity: stiffness at +F %.6g, -F %.6g, central %.6g N/m", k1, km, kc);

  /* a moment about y at the tip: statics again */
  double t1[3] = {0, 0.02, 0}, pt[3];
  settled_point(m, d, L, NULL, t1, L, pt);
  sb_point_load lt = {last, last_len, {0, 0, 0}, {0, 0.02, 0}};
  static_tip(m, d, &lt, ps);
  printf("tip moment 0.02 N m: tip moved %.4g mm; statics differ by %.3g um\n", 1e3 * dist3(pt, p0),
         1e6 * dist3(pt, ps));
  EXPECT(dist3(pt, p0) > 1e-3 && dist3(pt, ps) < 1e-3 * dist3(pt, p0), "tip moment: %.3g um from the statics",
         1e6 * dist3(pt, ps));

  /* cleared: back to rest */
  double pc[3];
  settled_point(m, d, 0, NULL, NULL, L, pc);
  printf("cleared: tip %.3g um from the rest pose\n", 1e6 * dist3(pc, p0));
  /* the slowest mode creeps: "settled" leaves ~1e-7 m, far below the excursions */
  EXPECT(dist3(pc, p0) < 1e-4 * dist3(pt, p0), "cleared: tip %.3g um from rest after %.4g mm", 1e6 * dist3(pc, p0),
         1e3 * dist3(pt, p0));
  finish(m, d);
}

/* Maxwell-Betti: for a conservative structure the point compliance is
 * symmetric, dx_mid / dF_tip = dx_tip / dF_mid. A load put at the wrong arc
 * length, or a moment where a force belongs, breaks it. Central differences
 * remove the second-order terms. */
static void test_reciprocity(void) {
  mjModel *m = load_text("hang", HANG);
  if (!m) return;
  mjData *d = attach(m);
  double L = cusp_total_length(m, 0), a = 0.45 * L, F = 0.1;
  double fp[3] = {F, 0, 0}, fn[3] = {-F, 0, 0}, pp[3], pn[3];
  settled_point(m, d, L, fp, NULL, a, pp);
  settled_point(m, d, L, fn, NULL, a, pn);
  double c_a_tip = (pp[0] - pn[0]) / (2 * F);
  settled_point(m, d, a, fp, NULL, L, pp);
  settled_point(m, d, a, fn, NULL, L, pn);
  double c_tip_a = (pp[0] - pn[0]) / (2 * F);
  printf("reciprocity: dx(s=%.3f)/dF(tip) = %.6g m/N, dx(tip)/dF(s=%.3f) = %.6g m/N\n", a, c_a_tip, a, c_tip_a);
  EXPECT(c_a_tip > 0 && fabs(c_a_tip - c_tip_a) < 1e-3 * c_a_tip, "reciprocity: %.6g vs %.6g m/N", c_a_tip,
         c_tip_a);
  /* and the tip is more compliant than the midpoint (loaded at itself) */
  double ptip[3];
  settled_point(m, d, L, fp, NULL, L, ptip);
  settled_point(m, d, L, fn, NULL, L, pn);
  double c_tip_tip = (ptip[0] - pn[0]) / (2 * F);
  EXPECT(c_tip_tip > c_tip_a, "compliance: tip-tip %.6g > tip-mid %.6g m/N", c_tip_tip, c_tip_a);
  finish(m, d);
}

/* The mount's share: a horizontal force on the tip of an arm hanging from a
 * carriage on a horizontal spring moves the carriage by F / k at rest. */
static void test_mount_share(void) {
  mjModel *m = load_text("slide", SLIDE);
  if (!m) return;
  mjData *d = attach(m);
  double L = cusp_total_length(m, 0);
  double v = settle(m, d, 1e-9, 40), x0 = d->qpos[0];
  EXPECT(v < 1e-9 && fabs(x0) < 1e-9, "slide: at rest at x = %.3g (velocity %.3g)", x0, v);
  double F = 3, f[3] = {F, 0, 0};
  char err[256] = "";
  EXPECT(cusp_apply_force(m, d, 0, L, f, NULL, err, sizeof err) == 0, "slide: %s", err);
  v = settle(m, d, 1e-9, 40);
  double x = d->qpos[0] - x0;
  printf("mount share: carriage moved %.6g mm under %.1f N, F/k = %.6g mm\n", 1e3 * x, F, 1e3 * F / SLIDE_K);
  EXPECT(v < 1e-9 && fabs(x - F / SLIDE_K) < 1e-3 * F / SLIDE_K, "mount share: %.6g vs %.6g mm", 1e3 * x,
         1e3 * F / SLIDE_K);
  finish(m, d);
}

static void test_errors_and_disks(void) {
  mjModel *m = load_text("hang", HANG);
  if (!m) return;
  mjData *d = attach(m);
  double L = cusp_total_length(m, 0), f1[3] = {1, 0, 0}, bad[3] = {0, NAN, 0};
  char err[256] = "";
  EXPECT(cusp_apply_force(m, d, 1, L, f1, NULL, err, sizeof err) == -1 && strstr(err, "instance 1"),
         "bad instance refused: %s", err);
  err[0] = 0;
  EXPECT(cusp_apply_force(m, d, 0, 1.5 * L, f1, NULL, err, sizeof err) == -1 && strstr(err, "arc length"),
         "s beyond the tip refused: %s", err);
  err[0] = 0;
  EXPECT(cusp_apply_force(m, d, 0, -0.01, f1, NULL, err, sizeof err) == -1 && strstr(err, "arc length"),
         "negative s refused: %s", err);
  err[0] = 0;
  EXPECT(cusp_apply_force(m, d, 0, L, bad, NULL, err, sizeof err) == -1 && strstr(err, "force"),
         "NaN force refused: %s", err);
  err[0] = 0;
  EXPECT(cusp_apply_force(m, d, 0, L, NULL, bad, err, sizeof err) == -1 && strstr(err, "torque"),
         "NaN torque refused: %s", err);
  /* nothing was applied: the arm hangs like the statics without load */
  settle(m, d, 1e-9, 40);
  double p[3], ps[3];
  point(m, d, L, p);
  static_tip(m, d, NULL, ps);
  EXPECT(dist3(p, ps) < 1e-7, "refused loads left no trace (%.3g um)", 1e6 * dist3(p, ps));

  /* every disk body maps to the arc length where MuJoCo draws it */
  int ndisk = 0, inst = -1;
  double s = -1, s_prev = -1, s_first = -1;
  for (int b = 0; b < m->nbody; b++) {
    if (cusp_disk_of_body(m, b, &inst, &s)) continue;
    ndisk++;
    double bp[3];
    point(m, d, s, bp);
    EXPECT(inst == 0 && dist3(bp, d->xpos + 3 * b) < 1e-9, "disk body %d: s = %g, %.3g um from the backbone",
           b, s, 1e6 * dist3(bp, d->xpos + 3 * b));
    EXPECT(s > s_prev, "disk bodies in arc-length order (%g after %g)", s, s_prev);
    if (s_first < 0) s_first = s;
    s_prev = s;
  }
  int mount = mj_name2id(m, mjOBJ_BODY, "mount");
  EXPECT(cusp_disk_of_body(m, mount, &inst, &s) == -1 && cusp_disk_of_body(m, 0, NULL, NULL) == -1,
         "mount and world are not disks");
  EXPECT(ndisk > 3 && fabs(s_first) < 1e-12 && fabs(s_prev - L) < 1e-12, "%d disks from s = %g to %g (L = %g)",
         ndisk, s_first, s_prev, L);
  printf("disks: %d disk bodies, s = %g .. %g m\n", ndisk, s_first, s_prev);
  finish(m, d);

  /* contact native: the links are MuJoCo bodies, refused with a message */
  char path[128];
  snprintf(path, sizeof path, "%s/native.xml", tmpdir);
  FILE *f = fopen(path, "w");
  if (f) fputs(HANG, f), fclose(f);
  cusp_override native = {"arm", "contact", "native"};
  m = cusp_load_with(path, &native, 1, err, sizeof err);
  remove(path);
  EXPECT(m != NULL, "native: %s", err);
  if (!m) return;
  d = attach(m);
  err[0] = 0;
  EXPECT(cusp_apply_force(m, d, 0, L, f1, NULL, err, sizeof err) == -1 && strstr(err, "native"),
         "native instance refused: %s", err);
  finish(m, d);
}

/* The stock viewer's mouse perturbation writes xfrc_applied on a disk body:
 * the arm settles where cusp_apply_force at that disk's arc length puts it
 * (and where the statics put that load). */
static void test_xfrc(void) {
  mjModel *m = load_text("hang", HANG);
  if (!m) return;
  mjData *d = attach(m);
  double L = cusp_total_length(m, 0), s = -1, p0[3], px[3], pa[3];
  int tip = -1, inst = -1;
  for (int b = 0; b < m->nbody; b++)
    if (!cusp_disk_of_body(m, b, &inst, &s) && fabs(s - L) < 1e-12) tip = b;
  EXPECT(tip >= 0, "a disk body at the tip");
  if (tip < 0) {
    finish(m, d);
    return;
  }
  settled_point(m, d, 0, NULL, NULL, L, p0);
  const double F = 0.05, f[3] = {0, F, 0};
  d->xfrc_applied[6 * tip + 1] = F;
  double v = settle(m, d, 1e-9, 40);
  point(m, d, L, px);
  EXPECT(v < 1e-9, "xfrc: settled (max velocity %.3g)", v);
  d->xfrc_applied[6 * tip + 1] = 0;
  settled_point(m, d, L, f, NULL, L, pa);
  double moved = dist3(px, p0);
  printf("xfrc_applied %.2f N on the tip disk: tip moved %.4g mm, %.3g um from cusp_apply_force's\n", F,
         1e3 * moved, 1e6 * dist3(px, pa));
  EXPECT(px[1] - p0[1] > 0.95 * moved && moved > 1e-3, "xfrc: the tip moves along +y (%.4g of %.4g mm)",
         1e3 * (px[1] - p0[1]), 1e3 * moved);
  EXPECT(dist3(px, pa) < 1e-3 * moved, "xfrc: %.3g um from cusp_apply_force at the tip (displacement %.4g mm)",
         1e6 * dist3(px, pa), 1e3 * moved);
  finish(m, d);
}

/* mj_step with a load held allocates nothing in cusp's code. */
static void test_noalloc(void) {
  mjModel *m = load_text("hang", HANG);
  if (!m) return;
  mjData *d = attach(m);
  double L = cusp_total_length(m, 0), f[3] = {0.5, -0.2, 0.1}, t[3] = {0, 0.01, 0};
  char err[256];
  int disk = -1; /* a disk body for a mouse perturbation every other step */
  for (int b = m->nbody - 1; b > 0 && disk < 0; b--)
    if (!cusp_disk_of_body(m, b, NULL, NULL)) disk = b;
  EXPECT(disk > 0, "noalloc: a disk body");
  long before = allocs;
  for (int i = 0; i < 200; i++) {
    cusp_apply_force(m, d, 0, L * (i % 10) / 9.0, f, t, err, sizeof err);
    if (disk > 0) d->xfrc_applied[6 * disk] = i % 2 ? 0.3 : 0;
    mj_step(m, d);
  }
  cusp_apply_force(m, d, 0, 0, NULL, NULL, err, sizeof err);
  mj_step(m, d);
  EXPECT(allocs == before, "noalloc: %ld allocations in 201 steps with a load and xfrc_applied", allocs - before);
  EXPECT(cusp_report(m, d)->nan_events == 0, "noalloc: no NaN events");
  finish(m, d);
}

int main(void) {
  EXPECT(alloc_count_start() > 0, "libcusp.so's code found in the process");
  snprintf(tmpdir, sizeof tmpdir, "/tmp/cusp-perturb-XXXXXX");
  if (!mkdtemp(tmpdir)) {
    fprintf(stderr, "cannot create a temporary directory\n");
    return 1;
  }
  test_errors_and_disks();
  test_tip_force();
  test_reciprocity();
  test_mount_share();
  test_xfrc();
  test_noalloc();
  rmdir(tmpdir);
  return test_report("perturb");
}

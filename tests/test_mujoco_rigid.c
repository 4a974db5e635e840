/* Cross-check against MuJoCo: an all-rigid chain of revolute joints built
 * both in softbody and as an equivalent MJCF model. The mass matrix and the
 * bias c(q, v) (Coriolis, centrifugal, gravity) must agree with MuJoCo's
 * mj_fullM and mj_rne(flg_acc = 0) to 1e-9 relative.
 *
 * Translation: the softbody base pose is a fixed MJCF body; each revolute
 * segment is a nested body whose pos/quat is the segment placement (the
 * joint frame relative to the previous joint frame), with a hinge at the
 * body origin along the (pre-normalized) axis and an <inertial> at the link
 * com. Each link inertia is built as Q diag(d) Q^T (off-diagonal in the
 * joint frame); the main model gives MuJoCo quat = Q and diaginertia = d,
 * which it stores as is. A second model gives the same tensor as
 * fullinertia; MuJoCo diagonalizes that with its Jacobi mju_eig3, which stops
 * once a rotation's cosine exceeds 1 - 1e-12 (angles below ~1.4e-6 rad), so
 * its compiled inertia is only ~1e-7 accurate: that model is compared with a
 * correspondingly looser tolerance. (MuJoCo 4.0.1 compiles it to ~1e-14; the
 * looser tolerances stay, since they hold for every release we may pin.)
 * MuJoCo 4.0.1: mj_fullM(m, d, dst) reads d's sparse inertia itself. */
#include <mujoco/mujoco.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chain.h"
#include "se3.h"
#include "testutil.h"

#define NLINK 6
#define TOL 1e-9

static sb_pose make_pose(double rx, double ry, double rz, double x, double y, double z) {
  double w[3] = {rx, ry, rz};
  sb_pose g;
  sb_so3_exp(w, g.R);
  g.p[0] = x;
  g.p[1] = y;
  g.p[2] = z;
  return g;
}

/* Row-major rotation matrix -> unit quaternion (w x y z), Shepperd's method:
 * pick the largest of 4w^2, 4x^2, 4y^2, 4z^2 to divide by. */
static void mat2quat(const double R[9], double q[4]) {
  double tr = R[0] + R[4] + R[8];
  if (tr >= R[0] && tr >= R[4] && tr >= R[8]) {
    double s = 2 * sqrt(1 + tr); /* 4w */
    q[0] = 0.25 * s;
    q[1] = (R[7] - R[5]) / s;
    q[2] = (R[2] - R[6]) / s;
    q[3] = (R[3] - R[1]) / s;
  } else if (R[0] >= R[4] && R[0] >= R[8]) {
    double s = 2 * sqrt(1 + R[0] - R[4] - R[8]); /* 4x */
    q[0] = (R[7] - R[5]) / s;
    q[1] = 0.25 * s;
    q[2] = (R[1] + R[3]) / s;
    q[3] = (R[2] + R[6]) / s;
  } else if (R[4] >= R[8]) {
    double s = 2 * sqrt(1 + R[4] - R[0] - R[8]); /* 4y */
    q[0] = (R[2] - R[6]) / s;
    q[1] = (R[1] + R[3]) / s;
    q[2] = 0.25 * s;
    q[3] = (R[5] + R[7]) / s;
  } else {
    double s = 2 * sqrt(1 + R[8] - R[0] - R[4]); /* 4z */
    q[0] = (R[3] - R[1]) / s;
    q[1] = (R[2] + R[6]) / s;
    q[2] = (R[5] + R[7]) / s;
    q[3] = 0.25 * s;
  }
  double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  for (int i = 0; i < 4; i++) q[i] /= n;
}

/* Inertia about the com: Q diag(d) Q^T with Q = exp(w), returned as
 * xx yy zz xy xz yz. Principal moments obeying the triangle inequality make
 * it physically valid for both softbody and MuJoCo. */
static void make_inertia(double d0, double d1, double d2, double wx, double wy, double wz,
                         double I[6], double Q[9]) {
  double w[3] = {wx, wy, wz}, d[3] = {d0, d1, d2}, F[9];
  sb_so3_exp(w, Q);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      double s = 0;
      for (int k = 0; k < 3; k++) s += Q[3 * i + k] * d[k] * Q[3 * j + k];
      F[3 * i + j] = s;
    }
  I[0] = F[0];
  I[1] = F[4];
  I[2] = F[8];
  I[3] = F[1];
  I[4] = F[2];
  I[5] = F[5];
}

static void normalize3(double a[3]) {
  double n = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
  for (int i = 0; i < 3; i++) a[i] /= n;
}

/* Appends formatted text to buf (size cap), tracking the length. */
static void append(char *buf, size_t cap, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void append(char *buf, size_t cap, size_t *len, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(buf + *len, cap - *len, fmt, ap);
  va_end(ap);
  if (k < 0 || (size_t)k >= cap - *len) {
    fprintf(stderr, "MJCF buffer too small\n");
    exit(2);
  }
  *len += (size_t)k;
}

static void append_pose(char *buf, size_t cap, size_t *len, const sb_pose *g) {
  double q[4];
  mat2quat(g->R, q);
  append(buf, cap, len, "pos=\"%.17g %.17g %.17g\" quat=\"%.17g %.17g %.17g %.17g\"", g->p[0],
         g->p[1], g->p[2], q[0], q[1], q[2], q[3]);
}

/* Principal data of a link inertia: axes (rotation, joint frame) and moments. */
typedef struct {
  double Q[9], d[3];
} principal_inertia;

/* The MJCF equivalent of the softbody chain; with pi != NULL the inertias are
 * given as quat + diaginertia, else as fullinertia. */
static void write_mjcf(const sb_chain_params *c, const principal_inertia *pi, char *buf,
                       size_t cap) {
  size_t len = 0;
  append(buf, cap, &len,
         "<mujoco model=\"cusp_rigid_chain\">\n"
         "  <compiler angle=\"radian\" inertiafromgeom=\"false\" balanceinertia=\"false\"/>\n"
         "  <option gravity=\"%.17g %.17g %.17g\" integrator=\"Euler\" timestep=\"0.001\"/>\n"
         "  <worldbody>\n"
         "    <body name=\"base\" ",
         c->gravity[0], c->gravity[1], c->gravity[2]);
  append_pose(buf, cap, &len, &c->base);
  append(buf, cap, &len, ">\n");
  for (int i = 0; i < c->nseg; i++) {
    const sb_segment_params *s = &c->seg[i];
    append(buf, cap, &len, "%*s<body name=\"link%d\" ", 6 + 2 * i, "", i);
    append_pose(buf, cap, &len, &s->placement);
    append(buf, cap, &len, ">\n");
    append(buf, cap, &len,
           "%*s<joint name=\"j%d\" type=\"hinge\" pos=\"0 0 0\" axis=\"%.17g %.17g %.17g\" "
           "armature=\"0\" damping=\"0\" stiffness=\"0\" limited=\"false\"/>\n",
           8 + 2 * i, "", i, s->axis[0], s->axis[1], s->axis[2]);
    append(buf, cap, &len, "%*s<inertial pos=\"%.17g %.17g %.17g\" mass=\"%.17g\" ", 8 + 2 * i,
           "", s->link_com[0], s->link_com[1], s->link_com[2], s->link_mass);
    if (pi) {
      double q[4];
      mat2quat(pi[i].Q, q);
      append(buf, cap, &len, "quat=\"%.17g %.17g %.17g %.17g\" diaginertia=\"%.17g %.17g %.17g\"/>\n",
             q[0], q[1], q[2], q[3], pi[i].d[0], pi[i].d[1], pi[i].d[2]);
    } else {
      append(buf, cap, &len, "fullinertia=\"%.17g %.17g %.17g %.17g %.17g %.17g\"/>\n",
             s->link_inertia[0], s->link_inertia[1], s->link_inertia[2], s->link_inertia[3],
             s->link_inertia[4], s->link_inertia[5]);
    }
  }
  for (int i = c->nseg - 1; i >= 0; i--) append(buf, cap, &len, "%*s</body>\n", 6 + 2 * i, "");
  append(buf, cap, &len, "    </body>\n  </worldbody>\n</mujoco>\n");
}

static mjModel *load_mjcf(const char *xml) {
  char path[] = "/tmp/cusp_mujoco_rigid_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return NULL;
  size_t n = strlen(xml);
  ssize_t k = write(fd, xml, n);
  close(fd);
  mjModel *mm = NULL;
  if (k == (ssize_t)n) {
    char err[1000] = "";
    mm = mj_loadXML(path, NULL, err, sizeof err);
    if (!mm) fprintf(stderr, "mj_loadXML: %s\n", err);
  }
  remove(path);
  return mm;
}

/* Largest |R_sb - R_quat| after the quaternion round trip: the MJCF frames
 * really are the softbody placements. */
static double quat_roundtrip_err(const double R[9]) {
  double q[4], Rq[9];
  mat2quat(R, q);
  mju_quat2Mat(Rq, q);
  double e = 0;
  for (int i = 0; i < 9; i++) e = fmax(e, fabs(Rq[i] - R[i]));
  return e;
}

/* Largest relative error of MuJoCo's compiled link inertias (body_iquat,
 * body_inertia) against the softbody tensors; bodies 0, 1 = world, base. */
static double compiled_inertia_err(const mjModel *mm, const sb_segment_params *seg) {
  double e = 0;
  for (int i = 0; i < NLINK; i++) {
    int b = i + 2;
    double Q[9], F[9];
    mju_quat2Mat(Q, mm->body_iquat + 4 * b);
    for (int r = 0; r < 3; r++)
      for (int c = 0; c < 3; c++) {
        double s = 0;
        for (int k = 0; k < 3; k++) s += Q[3 * r + k] * mm->body_inertia[3 * b + k] * Q[3 * c + k];
        F[3 * r + c] = s;
      }
    double full[6] = {F[0], F[4], F[8], F[1], F[2], F[5]};
    e = fmax(e, tu_relerr(full, seg[i].link_inertia, 6, 1e-12));
  }
  return e;
}

typedef struct {
  double M, bias, gravity, frame;
} worst_errors;

/* Compares softbody with a MuJoCo model at ntrial states: trial 0 has q = 0,
 * trial 1 v = 0 (pure gravity), trial 2 q = v = 0, the rest random. */
static worst_errors compare(const char *label, const sb_model *m, sb_work *w, const mjModel *mm,
                            double tol, int ntrial) {
  enum { n = NLINK };
  worst_errors we = {0, 0, 0, 0};
  mjData *d = mj_makeData(mm);
  double q[n], v[n], Msb[n * n], Mmj[n * n], csb[n], cmj[n];
  for (int t = 0; t < ntrial; t++) {
    for (int i = 0; i < n; i++) {
      q[i] = (t == 0 || t == 2) ? 0 : M_PI * tu_rand();
      v[i] = (t == 1 || t == 2) ? 0 : 3 * tu_rand();
    }
    sb_kinematics(m, w, q, v);
    sb_mass_matrix(m, w, Msb);
    sb_bias(m, w, csb);

    mj_resetData(mm, d);
    for (int i = 0; i < n; i++) {
      d->qpos[i] = q[i];
      d->qvel[i] = v[i];
    }
    mj_forward(mm, d);
    mj_fullM(mm, d, Mmj);
    mj_rne(mm, d, 0, cmj); /* flg_acc = 0: c(q, v), qacc ignored */

    /* every link frame (softbody joint frame = MuJoCo body frame) */
    double fe = 0;
    for (int k = 0; k < n; k++) {
      sb_pose g;
      sb_point_kinematics(m, w, k, 0, &g, NULL, NULL, NULL);
      const double *xp = d->xpos + 3 * (k + 2), *xm = d->xmat + 9 * (k + 2);
      for (int i = 0; i < 3; i++) fe = fmax(fe, fabs(g.p[i] - xp[i]));
      for (int i = 0; i < 9; i++) fe = fmax(fe, fabs(g.R[i] - xm[i]));
    }
    EXPECT(fe < 1e-12, "%s trial %d: link frames differ from MuJoCo by %.3g", label, t, fe);

    double eM = tu_relerr(Msb, Mmj, n * n, 1e-12);
    double ec = tu_relerr(csb, cmj, n, 1e-12);
    double eb = tu_relerr(cmj, d->qfrc_bias, n, 1e-12);
    EXPECT(eM <= tol, "%s trial %d: mass matrix rel err %.3g", label, t, eM);
    EXPECT(ec <= tol, "%s trial %d: bias rel err %.3g", label, t, ec);
    EXPECT(eb <= 1e-14, "%s trial %d: mj_rne(flg_acc=0) differs from qfrc_bias by %.3g", label, t,
           eb);
    if (eM > tol || ec > tol)
      for (int i = 0; i < n; i++)
        fprintf(stderr, "  c_sb %+.16e  c_mj %+.16e  M_sb(i,i) %.16e  M_mj(i,i) %.16e\n", csb[i],
                cmj[i], Msb[i * n + i], Mmj[i * n + i]);
    we.frame = fmax(we.frame, fe);
    we.M = fmax(we.M, eM);
    if (t == 1 || t == 2)
      we.gravity = fmax(we.gravity, ec);
    else
      we.bias = fmax(we.bias, ec);
  }
  mj_deleteData(d);
  printf("%s: worst relative errors M %.3g, bias %.3g, gravity-only bias %.3g; frames %.3g\n",
         label, we.M, we.bias, we.gravity, we.frame);
  return we;
}

int main(void) {
  sb_segment_params seg[NLINK];
  principal_inertia pi[NLINK];
  /* placements: rotations about several axes, offsets in all directions */
  const double pl[NLINK][6] = {
      {0.4, -0.7, 1.1, 0.05, -0.02, 0.10},  {-1.3, 0.5, 0.2, 0.00, 0.12, 0.03},
      {2.0, 1.0, -0.6, -0.07, 0.04, 0.15},  {0.0, 2.9, 0.3, 0.11, 0.00, -0.05},
      {-0.2, -0.3, -2.5, 0.02, -0.09, 0.08}, {3.0, 0.1, 0.1, -0.04, 0.06, 0.12},
  };
  const double ax[NLINK][3] = {
      {0.3, -0.2, 1.0}, {1.0, 0.4, -0.3}, {-0.2, 1.0, 0.5},
      {0.7, 0.7, 0.1},  {0.0, -0.6, 0.8}, {0.5, -0.9, -0.4},
  };
  const double mass[NLINK] = {1.2, 0.9, 0.7, 0.55, 0.4, 0.3};
  const double com[NLINK][3] = {
      {0.02, -0.01, 0.06}, {0.05, 0.03, -0.01}, {-0.03, 0.04, 0.07},
      {0.00, 0.06, 0.02},  {0.01, -0.05, 0.04}, {0.04, 0.02, 0.03},
  };
  const double inr[NLINK][6] = {/* principal moments, then the principal-axes rotation */
                                {4e-3, 5e-3, 6e-3, 0.3, 0.8, -0.5},
                                {2e-3, 3e-3, 4e-3, -1.0, 0.2, 0.7},
                                {1.5e-3, 2.5e-3, 3.5e-3, 0.5, -0.4, 1.2},
                                {1e-3, 1.2e-3, 2e-3, 2.0, 0.3, 0.1},
                                {6e-4, 9e-4, 1.1e-3, -0.6, -0.9, 0.4},
                                {3e-4, 5e-4, 7e-4, 0.1, 1.5, -1.1}};
  for (int i = 0; i < NLINK; i++) {
    seg[i] = sb_segment_default(SB_SEG_REVOLUTE);
    seg[i].placement = make_pose(pl[i][0], pl[i][1], pl[i][2], pl[i][3], pl[i][4], pl[i][5]);
    memcpy(seg[i].axis, ax[i], sizeof ax[i]);
    normalize3(seg[i].axis);
    seg[i].link_mass = mass[i];
    memcpy(seg[i].link_com, com[i], sizeof com[i]);
    memcpy(pi[i].d, inr[i], sizeof pi[i].d);
    make_inertia(inr[i][0], inr[i][1], inr[i][2], inr[i][3], inr[i][4], inr[i][5],
                 seg[i].link_inertia, pi[i].Q);
    EXPECT(fabs(seg[i].link_inertia[3]) > 1e-5 && fabs(seg[i].link_inertia[4]) > 1e-5 &&
               fabs(seg[i].link_inertia[5]) > 1e-5,
           "link %d inertia should have off-diagonal terms", i);
  }
  sb_chain_params cp = {0};
  cp.nseg = NLINK;
  cp.seg = seg;
  cp.base = make_pose(0.3, -0.5, 0.9, 0.2, -0.1, 1.0);
  cp.gravity[2] = -9.81;

  double qerr = quat_roundtrip_err(cp.base.R);
  for (int i = 0; i < NLINK; i++) {
    qerr = fmax(qerr, quat_roundtrip_err(seg[i].placement.R));
    qerr = fmax(qerr, quat_roundtrip_err(pi[i].Q));
  }
  EXPECT(qerr < 1e-14, "rotation -> quaternion round trip error %.3g", qerr);

  char err[256];
  sb_model *m = sb_model_create(&cp, err, sizeof err);
  EXPECT(m != NULL, "sb_model_create: %s", err);
  if (!m) return test_report("mujoco_rigid");
  EXPECT(m->n == NLINK, "softbody n = %d, expected %d", m->n, NLINK);
  sb_work *w = sb_work_create(m);
  printf("MuJoCo %s\n", mj_versionString());

  static char xml[16384];
  /* main model: inertias as quat + diaginertia, stored exactly */
  write_mjcf(&cp, pi, xml, sizeof xml);
  mjModel *mm = load_mjcf(xml);
  EXPECT(mm != NULL, "MJCF model failed to load:\n%s", xml);
  if (mm) {
    EXPECT(mm->nv == NLINK && mm->nq == NLINK && mm->nbody == NLINK + 2,
           "MuJoCo nq = %d, nv = %d, nbody = %d", (int)mm->nq, (int)mm->nv, (int)mm->nbody);
    double ie = compiled_inertia_err(mm, seg);
    printf("diaginertia model: compiled inertia rel err %.3g\n", ie);
    EXPECT(ie < 1e-13, "diaginertia model: MuJoCo's compiled inertia differs by %.3g", ie);
    compare("diaginertia model", m, w, mm, TOL, 12);
    mj_deleteModel(mm);
  }

  /* the same tensors as fullinertia: limited by MuJoCo's mju_eig3 (see top) */
  write_mjcf(&cp, NULL, xml, sizeof xml);
  mm = load_mjcf(xml);
  EXPECT(mm != NULL, "MJCF model failed to load:\n%s", xml);
  if (mm) {
    double ie = compiled_inertia_err(mm, seg);
    printf("fullinertia model: compiled inertia rel err %.3g\n", ie);
    EXPECT(ie < 1e-6, "fullinertia model: MuJoCo's compiled inertia differs by %.3g", ie);
    compare("fullinertia model", m, w, mm, 1e-7, 6);
    mj_deleteModel(mm);
  }

  sb_work_free(w);
  sb_model_free(m);
  return test_report("mujoco_rigid");
}

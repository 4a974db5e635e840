/* A moving base: a chain C on a base with prescribed motion must behave as
 * the fixed-base chain C' = [joint(s) driving that motion, C] (bias, mass
 * matrix, inverse dynamics, and the base load as the joints' forces); point
 * twists and accelerations match finite differences of poses when the base
 * and q both move; the load at rest is the weight; the contact LCP sees the
 * base's motion in the free relative velocity. */
#include <string.h>

#include "chain.h"
#include "contact.h"
#include "presets.h"
#include "testutil.h"
#include "zoo.h"

#define NPRE_MAX 2

/* C' = prefix joints, then the segments and disks of C (disks renumbered). */
typedef struct {
  sb_segment_params seg[7 + NPRE_MAX];
  sb_disk_params disk[4];
  sb_chain_params chain;
} prefixed;

static void build_prefixed(prefixed *P, const zoo_chain *z, const sb_segment_params *pre, int npre) {
  for (int i = 0; i < npre; i++) P->seg[i] = pre[i];
  for (int i = 0; i < z->chain.nseg; i++) P->seg[npre + i] = z->seg[i];
  for (int d = 0; d < z->chain.ndisk; d++) {
    P->disk[d] = z->disk[d];
    P->disk[d].segment += npre;
  }
  P->chain = z->chain;
  P->chain.nseg = z->chain.nseg + npre;
  P->chain.seg = P->seg;
  P->chain.disk = P->disk;
}

static void mat3_vec(const double R[9], const double x[3], double y[3]) {
  for (int i = 0; i < 3; i++) y[i] = R[3 * i] * x[0] + R[3 * i + 1] * x[1] + R[3 * i + 2] * x[2];
}

static double dot3(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static void cross3(const double a[3], const double b[3], double c[3]) {
  c[0] = a[1] * b[2] - a[2] * b[1];
  c[1] = a[2] * b[0] - a[0] * b[2];
  c[2] = a[0] * b[1] - a[1] * b[0];
}

/* C on a base driven by the first npre joints of C' (at q'[0..npre), v', a'):
 * the base pose, twist and acceleration are those of C' segment npre-1's
 * joint frame. Compares c, M, ID on C's coordinates and the base load
 * projected on each prefix joint's axis with that joint's force. */
static void check_equivalence(const char *name, const sb_segment_params *pre, int npre) {
  char err[256];
  zoo_chain z;
  memset(&z, 0, sizeof z); /* zoo_build leaves gravity x, y */
  zoo_build(&z, 1);
  prefixed P;
  build_prefixed(&P, &z, pre, npre);
  sb_model *mp = sb_model_create(&P.chain, err, sizeof err);
  EXPECT(mp != NULL, "%s: C': %s", name, err);
  if (!mp) return;
  sb_work *wp = sb_work_create(mp);
  int np = mp->n;
  double emax[4] = {0, 0, 0, 0}; /* M, c, ID, joint force */
  double *qp = calloc(np, sizeof(double)), *vp = calloc(np, sizeof(double)), *ap = calloc(np, sizeof(double)),
         *tp = calloc(np, sizeof(double)), *cp = calloc(np, sizeof(double)), *Mp = calloc(np * np, sizeof(double)),
         *Jp = calloc(6 * np, sizeof(double));
  for (int rep = 0; rep < 4; rep++) {
    zoo_random_q(mp, qp, 1, tu_rand);
    zoo_random_q(mp, vp, 3, tu_rand);
    zoo_random_q(mp, ap, 20, tu_rand);
    for (int j = 0; j < npre; j++) {
      qp[j] = 0.5 * tu_rand();
      vp[j] = 2 * tu_rand();
      ap[j] = 10 * tu_rand();
    }
    if (rep == 0)
      for (int j = 0; j < npre; j++) ap[j] = 0; /* bias alone: velocity terms of the base */
    sb_kinematics(mp, wp, qp, vp);
    sb_mass_matrix(mp, wp, Mp);
    sb_bias(mp, wp, cp);
    sb_inverse_dynamics(mp, wp, ap, tp);
    sb_pose gb;
    double eta[6], dJv[6], acc[6];
    sb_point_kinematics(mp, wp, npre - 1, 0, &gb, Jp, eta, dJv);
    for (int i = 0; i < 6; i++) {
      acc[i] = dJv[i];
      for (int j = 0; j < np; j++) acc[i] += Jp[i * np + j] * ap[j];
    }

    /* C on the moving base */
    z.chain.base = gb;
    sb_model *m = sb_model_create(&z.chain, err, sizeof err);
    EXPECT(m != NULL && m->n == np - npre, "%s: C: %s", name, err);
    if (!m) break;
    sb_set_base_motion(m, eta, acc);
    sb_work *w = sb_work_create(m);
    int n = m->n;
    double *c = calloc(n, sizeof(double)), *t = calloc(n, sizeof(double)), *M = calloc(n * n, sizeof(double)),
           *ref = calloc(n * n, sizeof(double));
    sb_kinematics(m, w, qp + npre, vp + npre);
    sb_mass_matrix(m, w, M);
    sb_bias(m, w, c);
    sb_inverse_dynamics(m, w, ap + npre, t);

    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) ref[i * n + j] = Mp[(npre + i) * np + npre + j];
    double e = tu_relerr(M, ref, n * n, 0);
    EXPECT(e <= 1e-12, "%s rep %d: mass matrix block rel err %g", name, rep, e);
    emax[0] = fmax(emax[0], e);
    /* c of C = c' + M'[C, prefix] a'_prefix: the base acceleration's inertia */
    for (int i = 0; i < n; i++) {
      ref[i] = cp[npre + i];
      for (int j = 0; j < npre; j++) ref[i] += Mp[(npre + i) * np + j] * ap[j];
    }
    e = tu_relerr(c, ref, n, 1e-9);
    EXPECT(e <= 1e-10, "%s rep %d: bias rel err %g (|c| %g)", name, rep, e, tu_maxabs(ref, n));
    emax[1] = fmax(emax[1], e);
    e = tu_relerr(t, tp + npre, n, 1e-9);
    EXPECT(e <= 1e-10, "%s rep %d: inverse dynamics rel err %g", name, rep, e);
    emax[2] = fmax(emax[2], e);

    /* The base's inertia coupling: B J_pre = M'[C, prefix], and with
     * massless prefix links J_pre^T Mbb J_pre = M'[prefix, prefix] */
    double *Bc = calloc(6 * n, sizeof(double)), Mbb[36];
    sb_base_inertia(m, w, Bc, Mbb);
    double eB = 0, eMbb = 0, sB = 0, sMbb = 0;
    for (int j = 0; j < npre; j++) {
      for (int i = 0; i < n; i++) {
        double x = 0;
        for (int a = 0; a < 6; a++) x += Bc[i * 6 + a] * Jp[a * np + j];
        eB = fmax(eB, fabs(x - Mp[(npre + i) * np + j]));
        sB = fmax(sB, fabs(Mp[(npre + i) * np + j]));
      }
      for (int k = 0; k < npre; k++) {
        double x = 0;
        for (int a = 0; a < 6; a++)
          for (int b = 0; b < 6; b++) x += Jp[a * np + j] * Mbb[a * 6 + b] * Jp[b * np + k];
        eMbb = fmax(eMbb, fabs(x - Mp[j * np + k]));
        sMbb = fmax(sMbb, fabs(Mp[j * np + k]));
      }
    }
    EXPECT(eB <= 1e-12 * fmax(sB, 1e-3) && eMbb <= 1e-12 * sMbb, "%s rep %d: base coupling B err %g (of %g), Mbb err %g (of %g)",
           name, rep, eB, sB, eMbb, sMbb);
    emax[1] = fmax(emax[1], fmax(eB / fmax(sB, 1e-3), eMbb / sMbb));
    free(Bc);

    /* The load on the base, on each prefix joint's axis (through the base
     * origin for a revolute: the last prefix joint's frame is the base) */
    double W[6];
    EXPECT(sb_base_wrench(m, w, ap + npre, W) == 0, "%s: base wrench", name);
    for (int j = 0; j < npre; j++) {
      sb_pose gj;
      sb_point_kinematics(mp, wp, j, 0, &gj, NULL, NULL, NULL);
      double ax[3], r[3], mo[3], rxf[3];
      mat3_vec(gj.R, mp->seg[j].p.axis, ax);
      double proj;
      if (pre[j].type == SB_SEG_PRISMATIC) {
        proj = dot3(ax, W + 3);
      } else {
        /* moment about the joint origin */
        for (int k = 0; k < 3; k++) r[k] = gb.p[k] - gj.p[k];
        cross3(r, W + 3, rxf);
        for (int k = 0; k < 3; k++) mo[k] = W[k] + rxf[k];
        proj = dot3(ax, mo);
      }
      double scale = fmax(fabs(tp[j]), 1);
      emax[3] = fmax(emax[3], fabs(-proj - tp[j]) / scale);
      EXPECT(fabs(-proj - tp[j]) <= 1e-10 * scale, "%s rep %d: joint %d force %.15g vs -axis . base load %.15g",
             name, rep, j, tp[j], -proj);
    }
    free(c);
    free(t);
    free(M);
    free(ref);
    sb_work_free(w);
    sb_model_free(m);
    z.chain.base = P.chain.base;
  }
  printf("%s: rel err M %.1e, c %.1e, ID %.1e, joint force vs base load %.1e\n", name, emax[0], emax[1],
         emax[2], emax[3]);
  free(qp); free(vp); free(ap); free(tp); free(cp); free(Mp); free(Jp);
  sb_work_free(wp);
  sb_model_free(mp);
}

static void test_equivalence(void) {
  sb_segment_params pre[2];
  /* a carriage on a slide */
  pre[0] = sb_segment_default(SB_SEG_PRISMATIC);
  pre[0].axis[0] = 0.3; pre[0].axis[1] = -0.5; pre[0].axis[2] = 0.8;
  check_equivalence("prismatic base", pre, 1);
  /* a turntable: centrifugal, Coriolis and Euler terms of the base */
  pre[0] = sb_segment_default(SB_SEG_REVOLUTE);
  pre[0].axis[0] = 0.2; pre[0].axis[1] = 0.9; pre[0].axis[2] = -0.4;
  check_equivalence("revolute base", pre, 1);
  /* both, with the arm off the turntable axis: a general 6D base motion */
  pre[0] = sb_segment_default(SB_SEG_PRISMATIC);
  pre[0].axis[0] = 1; pre[0].axis[1] = 0.2;
  pre[1] = sb_segment_default(SB_SEG_REVOLUTE);
  pre[1].axis[0] = 0.1; pre[1].axis[1] = 0.3; pre[1].axis[2] = 1;
  pre[1].placement = zoo_pose(0.4, -0.3, 0.2, 0.05, 0.1, -0.07);
  check_equivalence("slide + turntable base", pre, 2);
}

/* World pose of C at time t when the base moves as B0 exp(t xi + t^2/2 zeta)
 * (twist xi, acceleration zeta at t = 0) and q = q0 + t v0 + t^2/2 a0. */
static sb_pose pose_at(sb_model *m, sb_work *w, const sb_pose *B0, const double xi[6], const double zeta[6],
                       const double *q0, const double *v0, const double *a0, double *q, double t, int seg,
                       double s) {
  double Om[6];
  for (int i = 0; i < 6; i++) Om[i] = t * xi[i] + 0.5 * t * t * zeta[i];
  sb_pose E = sb_se3_exp(Om);
  m->base = sb_pose_mul(B0, &E);
  for (int i = 0; i < m->n; i++) q[i] = q0[i] + t * v0[i] + 0.5 * t * t * a0[i];
  sb_kinematics(m, w, q, NULL);
  sb_pose g;
  sb_point_kinematics(m, w, seg, s, &g, NULL, NULL, NULL);
  return g;
}

static void test_point_twists(void) {
  char err[256];
  zoo_chain z;
  memset(&z, 0, sizeof z); /* zoo_build leaves gravity x, y */
  zoo_build(&z, 1);
  sb_model *m = sb_model_create(&z.chain, err, sizeof err);
  EXPECT(m != NULL, "zoo: %s", err);
  if (!m) return;
  sb_work *w = sb_work_create(m);
  int n = m->n;
  double *q0 = calloc(n, sizeof(double)), *v0 = calloc(n, sizeof(double)), *a0 = calloc(n, sizeof(double)),
         *q = calloc(n, sizeof(double)), *J = calloc(6 * n, sizeof(double));
  sb_pose B0 = m->base;
  double xi[6], zeta[6];
  for (int i = 0; i < 6; i++) {
    xi[i] = 1.5 * tu_rand();
    zeta[i] = 5 * tu_rand();
  }
  zoo_random_q(m, q0, 1, tu_rand);
  zoo_random_q(m, v0, 2, tu_rand);
  zoo_random_q(m, a0, 5, tu_rand);
  double ev = 0, ew = 0, ea = 0, ealpha = 0;
  int npt = 0;
  for (int seg = 0; seg < m->nseg; seg++) {
    int soft = m->seg[seg].p.type <= SB_SEG_PCC;
    for (int k = 0; k < (soft ? 3 : 1); k++) {
      double s = soft ? m->seg[seg].p.length * (k == 0 ? 0 : k == 1 ? 0.37 : 1) : 0;
      /* analytic at t = 0 */
      m->base = B0;
      sb_set_base_motion(m, xi, zeta);
      sb_kinematics(m, w, q0, v0);
      sb_pose g;
      double eta[6], dJv[6], acc[6];
      sb_point_kinematics(m, w, seg, s, &g, J, eta, dJv);
      /* d/dt eta = Ad(g^-1 base) zeta + J a + dJv */
      double A[36], az[6];
      sb_pose rel = sb_pose_inv_mul(&g, &m->base);
      sb_Ad(&rel, A);
      sb_mat6_vec(A, zeta, az);
      for (int i = 0; i < 6; i++) {
        acc[i] = az[i] + dJv[i];
        for (int j = 0; j < n; j++) acc[i] += J[i * n + j] * a0[j];
      }
      double vw[3], ww[3], alw[3], aw[3], c[3];
      mat3_vec(g.R, eta + 3, vw);
      mat3_vec(g.R, eta, ww);
      mat3_vec(g.R, acc, alw);
      cross3(eta, eta + 3, c); /* classical: d/dt (R v_b) = R (v_b' + w_b x v_b) */
      for (int i = 0; i < 3; i++) c[i] += acc[3 + i];
      mat3_vec(g.R, c, aw);
      /* finite differences of the world pose, base and q moving */
      sb_set_base_motion(m, NULL, NULL);
      double h = 1e-5, h2 = 2e-4;
      sb_pose gp = pose_at(m, w, &B0, xi, zeta, q0, v0, a0, q, h, seg, s);
      sb_pose gm = pose_at(m, w, &B0, xi, zeta, q0, v0, a0, q, -h, seg, s);
      sb_pose g0 = pose_at(m, w, &B0, xi, zeta, q0, v0, a0, q, 0, seg, s);
      sb_pose gpp = pose_at(m, w, &B0, xi, zeta, q0, v0, a0, q, h2, seg, s);
      sb_pose gmm = pose_at(m, w, &B0, xi, zeta, q0, v0, a0, q, -h2, seg, s);
      double W[9], Wd[9];
      for (int i = 0; i < 9; i++) Wd[i] = (gp.R[i] - gm.R[i]) / (2 * h);
      sb_matmul(3, 3, 3, Wd, (double[9]){g0.R[0], g0.R[3], g0.R[6], g0.R[1], g0.R[4], g0.R[7], g0.R[2], g0.R[5], g0.R[8]}, W);
      double wfd[3] = {W[7], W[2], W[3]};
      for (int i = 0; i < 3; i++) {
        double vfd = (gp.p[i] - gm.p[i]) / (2 * h), afd = (gpp.p[i] - 2 * g0.p[i] + gmm.p[i]) / (h2 * h2);
        ev = fmax(ev, fabs(vfd - vw[i]) / fmax(1, fabs(vw[i])));
        ew = fmax(ew, fabs(wfd[i] - ww[i]) / fmax(1, fabs(ww[i])));
        ea = fmax(ea, fabs(afd - aw[i]) / fmax(1, fabs(aw[i])));
      }
      /* angular acceleration: central difference of the world angular velocity */
      double wpl[3], wmi[3];
      for (int sgn = 0; sgn < 2; sgn++) {
        double t = sgn ? -h2 : h2, Om[6];
        for (int i = 0; i < 6; i++) Om[i] = t * xi[i] + 0.5 * t * t * zeta[i];
        /* body twist of B0 exp(Om(t)): T(Om) dOm/dt */
        double dOm[6], tw[6];
        for (int i = 0; i < 6; i++) dOm[i] = xi[i] + t * zeta[i];
        sb_se3_tangent_apply(Om, dOm, tw);
        sb_pose E = sb_se3_exp(Om);
        m->base = sb_pose_mul(&B0, &E);
        sb_set_base_motion(m, tw, NULL);
        double *vt = calloc(n, sizeof(double));
        for (int i = 0; i < n; i++) {
          q[i] = q0[i] + t * v0[i] + 0.5 * t * t * a0[i];
          vt[i] = v0[i] + t * a0[i];
        }
        sb_kinematics(m, w, q, vt);
        free(vt);
        sb_pose gt;
        double et[6];
        sb_point_kinematics(m, w, seg, s, &gt, NULL, et, NULL);
        mat3_vec(gt.R, et, sgn ? wmi : wpl);
      }
      for (int i = 0; i < 3; i++) {
        double alfd = (wpl[i] - wmi[i]) / (2 * h2);
        ealpha = fmax(ealpha, fabs(alfd - alw[i]) / fmax(1, fabs(alw[i])));
      }
      npt++;
    }
  }
  EXPECT(ev <= 1e-7, "point linear velocity vs central FD over %d points: %g", npt, ev);
  EXPECT(ew <= 1e-7, "point angular velocity vs central FD: %g", ew);
  EXPECT(ea <= 1e-5, "point linear acceleration vs second difference: %g", ea);
  EXPECT(ealpha <= 1e-6, "point angular acceleration vs FD of the twist: %g", ealpha);
  printf("point twists (%d points): lin %.2e ang %.2e, acc lin %.2e ang %.2e\n", npt, ev, ew, ea, ealpha);

  /* The world-axes setter: classical quantities -> body twist and its derivative. */
  m->base = B0;
  double om[3], vl[3], al[3], ac[3], c[3];
  mat3_vec(B0.R, xi, om);
  mat3_vec(B0.R, xi + 3, vl);
  mat3_vec(B0.R, zeta, al);
  cross3(xi, xi + 3, c);
  for (int i = 0; i < 3; i++) c[i] += zeta[3 + i];
  mat3_vec(B0.R, c, ac);
  sb_set_base_motion_world(m, om, vl, al, ac);
  double e1 = tu_relerr(m->base_twist, xi, 6, 1), e2 = tu_relerr(m->base_acc, zeta, 6, 1);
  EXPECT(e1 <= 1e-14 && e2 <= 1e-14, "sb_set_base_motion_world: twist err %g, acc err %g", e1, e2);
  free(q0); free(v0); free(a0); free(q); free(J);
  sb_work_free(w);
  sb_model_free(m);
}

/* Load at rest = weight through the com: (r_com x M g; M g). */
static void check_static_load(const char *name, const sb_chain_params *cp) {
  char err[256];
  sb_model *m = sb_model_create(cp, err, sizeof err);
  EXPECT(m != NULL, "%s: %s", name, err);
  if (!m) return;
  sb_work *w = sb_work_create(m);
  int n = m->n;
  double *q = calloc(n, sizeof(double));
  for (int rep = 0; rep < 3; rep++) {
    zoo_random_q(m, q, rep == 0 ? 0 : 1, tu_rand);
    sb_kinematics(m, w, q, NULL);
    double W[6], com[3] = {0, 0, 0}, Mt = 0;
    EXPECT(sb_base_wrench(m, w, NULL, W) == 0, "%s: base wrench", name);
    for (int k = 0; k < m->nnode; k++) {
      double x[3];
      sb_pose_apply(&w->g[k], m->node[k].com, x);
      for (int i = 0; i < 3; i++) com[i] += m->node[k].mass * x[i];
      Mt += m->node[k].mass;
    }
    double f[3], r[3], mo[3], ref[6];
    for (int i = 0; i < 3; i++) {
      f[i] = Mt * m->gravity[i];
      r[i] = com[i] / Mt - m->base.p[i];
    }
    cross3(r, f, mo);
    memcpy(ref, mo, sizeof mo);
    memcpy(ref + 3, f, sizeof f);
    double ef = tu_relerr(W + 3, f, 3, 0), em = tu_relerr(W, mo, 3, 1e-12);
    EXPECT(fabs(Mt - m->total_mass) <= 1e-14 * Mt, "%s: total mass", name);
    EXPECT(ef <= 1e-10 && em <= 1e-10, "%s q rep %d: load force rel err %g (%g N), moment rel err %g", name, rep,
           ef, W[5], em);
  }
  free(q);
  sb_work_free(w);
  sb_model_free(m);
}

/* The hanging CUSP arm settles: the step's recorded load tends to its weight.
 * On a carriage accelerating at a, the statics (c(q, 0) carries base_acc)
 * give the tilted relative equilibrium, where steps stay and the carriage
 * feels M (g - a). */
static void test_step_load(void) {
  char err[256];
  sb_cusp_arm arm;
  sb_preset_cusp_arm(&arm);
  sb_model *m = sb_model_create(&arm.chain, err, sizeof err);
  sb_state *s = sb_state_create(m);
  sb_work *w = sb_work_create(m);
  w->want_base_wrench = 1;
  double acc_w[3] = {1.5, 0, 0};
  for (int phase = 0; phase < 2; phase++) {
    /* phase 1: constant world acceleration of the carriage; the base frame's
     * classical acceleration, no rotation */
    sb_set_base_motion_world(m, NULL, NULL, NULL, phase ? acc_w : NULL);
    int ok = 1;
    if (phase) {
      double res;
      EXPECT(sb_static_solve(m, w, NULL, NULL, 0, s->q, 1e-10, 50, &res, err, sizeof err) == 0,
             "static solve on the accelerating carriage: %s (residual %g)", err, res);
      memset(s->v, 0, sizeof(double) * m->n);
    }
    for (int k = 0; k < (phase ? 200 : 4000) && ok; k++) ok = sb_step(m, s, w, NULL, 2e-3, NULL, NULL, err, sizeof err) == 0;
    EXPECT(ok, "cusp step: %s", err);
    double ref[3];
    for (int i = 0; i < 3; i++) ref[i] = m->total_mass * (m->gravity[i] - (phase ? acc_w[i] : 0));
    double e = tu_relerr(w->base_wrench + 3, ref, 3, 0);
    EXPECT(e <= (phase ? 1e-9 : 1e-6), "cusp step phase %d: recorded load force (%g %g %g) vs M (g - a) (%g %g %g): rel err %g",
           phase, w->base_wrench[3], w->base_wrench[4], w->base_wrench[5], ref[0], ref[1], ref[2], e);
    /* the base's acceleration tilts the arm: the load is not just below the base */
    if (phase) EXPECT(fabs(s->q[0] - s->q[1]) > 1e-4, "cusp arm bends on the accelerating carriage");
  }
  /* A turntable: the base 0.2 m off a vertical axis spinning at W. Body
   * twists are constant (gravity is symmetric about the axis), so the pose
   * may stay put: statics with v = NULL must include the base twist
   * (centrifugal), steps must stay there, and the load is M (g - a_com)
   * with a_com = W x (W x r_com). */
  double W[3] = {0, 0, 2.5}, vel[3], cen[3];
  m->base.p[0] = 0.2;
  cross3(W, m->base.p, vel);
  cross3(W, vel, cen); /* the base origin's classical (centripetal) acceleration */
  sb_set_base_motion_world(m, W, vel, NULL, cen);
  EXPECT(tu_maxabs(m->base_acc, 6) <= 1e-15, "turntable: constant body twist");
  double res;
  EXPECT(sb_static_solve(m, w, NULL, NULL, 0, s->q, 1e-10, 50, &res, err, sizeof err) == 0,
         "static solve on the turntable: %s (residual %g)", err, res);
  memset(s->v, 0, sizeof(double) * m->n);
  int ok = 1;
  for (int k = 0; k < 200 && ok; k++) ok = sb_step(m, s, w, NULL, 2e-3, NULL, NULL, err, sizeof err) == 0;
  double qa = tu_maxabs(w->qacc, m->n), com[3] = {0, 0, 0}, wr[3], acom[3], ref[3];
  EXPECT(ok && qa <= 1e-8, "turntable: relative equilibrium kept (|qacc| %g): %s", qa, ok ? "" : err);
  sb_kinematics(m, w, s->q, NULL);
  for (int k = 0; k < m->nnode; k++) {
    double x[3];
    sb_pose_apply(&w->g[k], m->node[k].com, x);
    for (int i = 0; i < 3; i++) com[i] += m->node[k].mass * x[i] / m->total_mass;
  }
  cross3(W, com, wr);
  cross3(W, wr, acom);
  for (int i = 0; i < 3; i++) ref[i] = m->total_mass * (m->gravity[i] - acom[i]);
  double e = tu_relerr(w->base_wrench + 3, ref, 3, 0);
  EXPECT(e <= 1e-8 && hypot(com[0], com[1]) > 0.2 + 1e-3, "turntable: load (%g %g %g) vs M (g - a_com) (%g %g %g): "
         "rel err %g (arm flung out to r = %g)", w->base_wrench[3], w->base_wrench[4], w->base_wrench[5], ref[0],
         ref[1], ref[2], e, hypot(com[0], com[1]));
  sb_work_free(w);
  sb_state_free(s);
  sb_model_free(m);
}

static void test_static_load(void) {
  sb_cusp_arm arm;
  sb_preset_cusp_arm(&arm);
  check_static_load("cusp arm", &arm.chain);
  zoo_chain z;
  memset(&z, 0, sizeof z); /* zoo_build leaves gravity x, y */
  zoo_build(&z, 1);
  check_static_load("zoo chain", &z.chain);
  test_step_load();
}

/* A soft rod with a disk on a base moving toward a static plane below it. */
static void test_contact_velocity(void) {
  char err[256];
  sb_segment_params seg = sb_segment_default(SB_SEG_PCS);
  seg.length = 0.1; seg.radius = 0.01; seg.young = 1e6; seg.strains = SB_STRAIN_BENDING | SB_EZ;
  sb_disk_params disk = {0, 0.1, 0.05, 0.03, 0.005};
  sb_chain_params cp;
  memset(&cp, 0, sizeof cp);
  cp.nseg = 1;
  cp.seg = &seg;
  cp.ndisk = 1;
  cp.disk = &disk;
  cp.base = zoo_pose(0.3, 2.9, 0.2, 0.02, -0.01, 0.2); /* rod pointing roughly down */
  sb_model *m = sb_model_create(&cp, err, sizeof err);
  sb_state *s = sb_state_create(m);
  sb_work *w = sb_work_create(m);
  sb_contact_problem *P = sb_contact_create(4, 1, m->n, 4, err, sizeof err);
  double h = 1e-3, V = 0.7;
  double normal[3] = {0, 0, 1};
  for (int cs = 0; cs < 3; cs++) {
    /* 0: translation toward the plane; 1: plus a rotation of the base;
     * 2: also accelerating (the LCP uses the base's end-of-step velocity) */
    double om[3] = {0, 0, 0}, vel[3] = {0.1, -0.05, -V}, al[3] = {0, 0, 0}, ac[3] = {0, 0, 0};
    if (cs >= 1) { om[0] = 0.8; om[1] = -0.4; om[2] = 1.1; }
    if (cs >= 2) { al[1] = 3; ac[2] = -20; ac[0] = 4; }
    sb_set_base_motion_world(m, om, vel, al, ac);
    sb_state_reset(m, s);
    EXPECT(sb_step_prepare(m, s, w, NULL, h, err, sizeof err) == 0, "prepare: %s", err);
    /* the contact point: the disk's bottom rim, in the disk frame */
    sb_pose g;
    double *J = calloc(6 * m->n, sizeof(double));
    sb_point_kinematics(m, w, 0, 0.1, &g, J, NULL, NULL);
    double x[3] = {0.03, 0, 0}, xw[3], r[3];
    sb_contact c;
    memset(&c, 0, sizeof c);
    c.side[0].body = sb_contact_add_soft(P, m, w, err, sizeof err);
    c.side[0].seg = 0;
    c.side[0].s = 0.1;
    memcpy(c.side[0].offset, x, sizeof x);
    c.side[1].body = -1;
    memcpy(c.normal, normal, sizeof normal);
    c.gap = 0;
    c.friction = 0.5;
    c.id = -1;
    EXPECT(sb_contact_add(P, &c, err, sizeof err) == 0, "contact add: %s", err);
    sb_contact_options o = sb_contact_default_options();
    int rc = sb_contact_solve(P, h, &o, NULL, err, sizeof err);
    EXPECT(rc == 0, "contact solve: %s", err);
    int nv;
    const double *b;
    sb_contact_lcp(P, &nv, NULL, &b, NULL, NULL);
    /* expected: the point's world velocity with the coordinates at v*
     * (J v*) plus the base's rigid motion at the end of the step */
    sb_pose_apply(&g, x, xw);
    double eta[6] = {0}, vp[3], vq[3], wxr[3];
    for (int i = 0; i < 6; i++)
      for (int j = 0; j < m->n; j++) eta[i] += J[i * m->n + j] * w->vstar[j];
    cross3(eta, x, wxr);
    for (int i = 0; i < 3; i++) wxr[i] += eta[3 + i];
    mat3_vec(g.R, wxr, vq);
    for (int i = 0; i < 3; i++) r[i] = xw[i] - m->base.p[i];
    /* the rigid point's world velocity at the end of the step, v + h a
     * with a = a_o + alpha x r + w x (w x r) */
    double wr[3], ar[3], wwr[3];
    cross3(om, r, wr);
    cross3(al, r, ar);
    cross3(om, wr, wwr);
    for (int i = 0; i < 3; i++) vp[i] = vel[i] + wr[i] + h * (ac[i] + ar[i] + wwr[i]) + vq[i];
    double expect = dot3(normal, vp);
    /* exact without acceleration or rotation; else to O(h^2) (a frame that
     * forgot its turn by h w would be off by h |w x v| ~ 1e-3 here) */
    double tol = cs == 0 ? 1e-12 : 5e-5;
    EXPECT(nv > 0 && fabs(b[0] - expect) <= tol, "case %d: LCP normal free velocity %.15g, expected %.15g", cs,
           nv > 0 ? b[0] : NAN, expect);
    if (cs == 0) EXPECT(fabs(b[0] - (-V + dot3(normal, vq))) <= 1e-12 && fabs(dot3(normal, vq)) <= 1e-12,
                        "case 0: free normal velocity %.15g is the base's -V = %g", b[0], -V);
    /* after the solve the contact no longer approaches; the impulse is the
     * body's contact wrench */
    double vr[3], imp[3], Wc[6], fn;
    sb_contact_relative_velocity(P, 0, vr);
    sb_contact_result(P, 0, imp, &fn, NULL, NULL);
    EXPECT(dot3(normal, vr) >= -1e-9 && fn > 0, "case %d: post-solve normal velocity %g, impulse %g", cs,
           dot3(normal, vr), fn);
    EXPECT(sb_contact_body_wrench(P, c.side[0].body, m->base.p, Wc) == 0, "body wrench");
    double mo[3];
    cross3(r, imp, mo);
    double ew = fmax(tu_relerr(Wc + 3, imp, 3, 1e-12), tu_relerr(Wc, mo, 3, 1e-12));
    EXPECT(ew <= 1e-12, "case %d: contact body wrench rel err %g", cs, ew);
    free(J);
    sb_contact_clear(P);
    w->step_ready = 0;
  }
  sb_contact_free(P);
  sb_work_free(w);
  sb_state_free(s);
  sb_model_free(m);
}

int main(void) {
  test_equivalence();
  test_point_twists();
  test_static_load();
  test_contact_velocity();
  return test_report("base_motion");
}

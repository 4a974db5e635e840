/* Kinematics of every segment type against central finite differences of the
 * pose: body Jacobians and the velocity-product term dJ/dt v, at random,
 * straight and nearly straight (1e-9) configurations; PLS against PCS and
 * against a fine reference (Magnus order); PCC extension. */
#include <string.h>

#include "chain.h"
#include "fd.h"
#include "testutil.h"
#include "zoo.h"


static double worst_jac, worst_dj;
static int proximal_points; /* points whose Jacobian has zero distal columns */
static int parts_points;    /* points past the first unit (sb_point_jacobian_parts with c0 > 0) */
static double worst_parts;  /* A Jend + Jloc against the full J, relative to its largest entry */

static void check_point(const sb_model *m, sb_work *w, const double *q, const double *v, int seg,
                        double s, const char *what) {
  int n = m->n;
  double *J = malloc(sizeof(double) * 6 * n), *Jp = malloc(sizeof(double) * 6 * n),
         *Jm = malloc(sizeof(double) * 6 * n), *qq = malloc(sizeof(double) * n);
  sb_pose g, gp, gm;
  double eta[6], dJv[6];
  sb_kinematics(m, w, q, v);
  EXPECT(sb_point_kinematics(m, w, seg, s, &g, J, eta, dJv) == 0, "point query %d %g", seg, s);
  {
    /* a repeated query (the next contact point of the same disk) is answered
     * from the last one: the same numbers, with or without dJv; the FD
     * checks below, which re-query the point after new kinematics passes,
     * fail if that answer outlives the kinematics it came from */
    double *J2 = malloc(sizeof(double) * 6 * n), eta2[6], dJv2[6];
    sb_pose g2;
    sb_point_kinematics(m, w, seg, s, &g2, J2, eta2, NULL);
    int same = !memcmp(J2, J, sizeof(double) * 6 * n) && !memcmp(&g2, &g, sizeof g) && !memcmp(eta2, eta, sizeof eta);
    sb_point_kinematics(m, w, seg, s, NULL, J2, NULL, dJv2);
    same &= !memcmp(J2, J, sizeof(double) * 6 * n) && !memcmp(dJv2, dJv, sizeof dJv);
    EXPECT(same, "%s: a repeated point query at seg %d s %g answers differently", what, seg, s);
    free(J2);
  }
  {
    /* head and full queries share that answer in either order: a full query
     * answers all of J (its zeros written over whatever J held), a head
     * query its first sb_point_columns columns and leaves the rest of J as
     * it was, its view (sb_point_kinematics_view) points at those columns;
     * each first after a kinematics pass and each repeated */
    double *J2 = malloc(sizeof(double) * 6 * n), sentinel = 12345.0;
    int c = sb_point_columns(m, seg, s), ok = 1, nc = -1;
    for (int order = 0; order < 2; order++) {
      sb_kinematics(m, w, q, v);
      /* first the chain's far end (nonzero in every column), so that the
       * kept answer's columns past c are not this point's zeros */
      sb_point_kinematics(m, w, m->nseg - 1, m->seg[m->nseg - 1].p.length, NULL, J2, NULL, NULL);
      for (int rep = 0; rep < 2; rep++)
        for (int k = 0; k < 2; k++) {
          int head = (k == 0) == (order == 0);
          for (int i = 0; i < 6 * n; i++) J2[i] = sentinel;
          if (head) {
            /* a head query and its view without a copy (the same columns
             * and pose), the view first after the far end's query once */
            for (int t = 0; t < 2; t++) {
              if ((t == 0) == (rep == 0)) {
                const double *Jv = NULL;
                sb_pose gv;
                nc = -1;
                ok &= sb_point_kinematics_view(m, w, seg, s, &gv, &Jv, &nc) == 0 && nc == c && Jv != NULL;
                for (int i = 0; i < 6 && Jv; i++)
                  for (int j = 0; j < c; j++) ok &= Jv[i * n + j] == J[i * n + j];
                ok &= !memcmp(&gv, &g, sizeof g);
              } else {
                for (int i = 0; i < 6 * n; i++) J2[i] = sentinel;
                ok &= sb_point_kinematics_head(m, w, seg, s, NULL, J2, &nc) == 0 && nc == c;
                for (int i = 0; i < 6; i++)
                  for (int j = 0; j < n; j++) ok &= J2[i * n + j] == (j < c ? J[i * n + j] : sentinel);
              }
            }
          } else {
            ok &= sb_point_kinematics(m, w, seg, s, NULL, J2, NULL, NULL) == 0;
            ok &= !memcmp(J2, J, sizeof(double) * 6 * n);
          }
        }
    }
    EXPECT(ok, "%s: head and full point queries at seg %d s %g disagree (%d columns)", what, seg, s, c);
    free(J2);
  }
  {
    /* the Jacobian in parts (the contact rows' form): A Jend over the
     * previous units' columns (A = Ad(g^-1 gend)) plus the unit's own, against the full J that
     * the FD check below tests; asked after another point's full query,
     * repeated, after a view of the same point (which must not read the
     * parts as its J) and again after the view (which must not be taken for
     * the parts) */
    double *J2 = malloc(sizeof(double) * 6 * n), big = 0, err = 0;
    int c = sb_point_columns(m, seg, s), ok = 1;
    for (int i = 0; i < 6 * n; i++) big = fmax(big, fabs(J[i]));
    sb_kinematics(m, w, q, v);
    sb_point_kinematics(m, w, m->nseg - 1, m->seg[m->nseg - 1].p.length, NULL, J2, NULL, NULL);
    for (int t = 0; t < 4; t++) {
      if (t == 2) {
        const double *Jv = NULL;
        int nc = -1;
        ok &= sb_point_kinematics_view(m, w, seg, s, NULL, &Jv, &nc) == 0 && nc == c && Jv != NULL;
        for (int i = 0; i < 6 && Jv; i++)
          for (int j = 0; j < c; j++) ok &= Jv[i * n + j] == J[i * n + j];
        continue;
      }
      sb_point_parts pp;
      sb_pose gq;
      memset(&pp, 0, sizeof pp);
      ok &= sb_point_jacobian_parts(m, w, seg, s, &gq, &pp) == 0 && pp.ncol == c && pp.c0 >= 0 && pp.c0 <= c &&
            pp.l0 >= 0 && pp.l0 <= pp.c0;
      ok &= !memcmp(&gq, &g, sizeof g) && (pp.c0 == 0) == (pp.gend == NULL) && (pp.c0 == 0) == (pp.Jend == NULL);
      if (!ok) break;
      double A[36];
      if (pp.gend) {
        sb_pose rel = sb_pose_inv_mul(&gq, pp.gend);
        sb_Ad(&rel, A);
      }
      for (int i = 0; i < 6; i++)
        for (int j = 0; j < c; j++) {
          double x = j >= pp.l0 ? pp.Jloc[i * n + j] : 0;
          if (j < pp.c0)
            for (int a = 0; a < 6; a++) x += A[6 * i + a] * pp.Jend[a * n + j];
          err = fmax(err, fabs(x - J[i * n + j]));
        }
      if (t == 0) parts_points += pp.c0 > 0;
    }
    worst_parts = fmax(worst_parts, err / fmax(big, 1e-300));
    EXPECT(ok && err <= 1e-14 * big, "%s: the Jacobian in parts at seg %d s %g: %g off (largest %g), queries %s", what,
           seg, s, err, big, ok ? "agree" : "disagree");
    free(J2);
  }
  {
    /* the contact assembly skips the columns past sb_point_columns: they
     * must be exactly zero (the chain's triangular structure), and the FD
     * Jacobian below checks that the others are right */
    int nz = sb_point_columns(m, seg, s), zero = nz >= 1 && nz <= n;
    for (int i = 0; i < 6; i++)
      for (int j = nz; j < n && zero; j++) zero = J[i * n + j] == 0;
    EXPECT(zero, "%s: point Jacobian at seg %d s %g is nonzero past its %d proximal columns", what, seg, s, nz);
    proximal_points += nz < n;
  }
  /* Column by column against the pose. */
  double fdJ[6 * 64], eps = 1e-6;
  for (int j = 0; j < n; j++) {
    memcpy(qq, q, sizeof(double) * n);
    qq[j] += eps;
    sb_kinematics(m, w, qq, NULL);
    sb_point_kinematics(m, w, seg, s, &gp, NULL, NULL, NULL);
    qq[j] -= 2 * eps;
    sb_kinematics(m, w, qq, NULL);
    sb_point_kinematics(m, w, seg, s, &gm, NULL, NULL, NULL);
    double t[6];
    fd_twist(&g, &gp, &gm, eps, t);
    for (int i = 0; i < 6; i++) fdJ[i * n + j] = t[i];
  }
  double e = tu_relerr(J, fdJ, 6 * n, 1e-3);
  worst_jac = fmax(worst_jac, e);
  EXPECT(e <= 1e-6, "%s: Jacobian at seg %d s %g vs FD: rel err %g", what, seg, s, e);
  /* Twist = J v, and dJ/dt v = d/dt (J(q + t v) v) at t = 0. */
  double Jv[6] = {0};
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < n; j++) Jv[i] += J[i * n + j] * v[j];
  EXPECT(tu_relerr(eta, Jv, 6, 1e-3) < 1e-12, "%s: twist = J v at seg %d s %g", what, seg, s);
  /* a query for the twist alone takes a shorter path (one tangent product) */
  double eta_only[6];
  sb_pose g_only;
  sb_kinematics(m, w, q, v);
  EXPECT(sb_point_kinematics(m, w, seg, s, &g_only, NULL, eta_only, NULL) == 0, "twist-only query %d %g", seg, s);
  EXPECT(tu_relerr(eta_only, Jv, 6, 1e-3) < 1e-12 && !memcmp(&g_only, &g, sizeof g),
         "%s: twist-only query differs from the full one at seg %d s %g", what, seg, s);
  double h = 1e-6;
  for (int j = 0; j < n; j++) qq[j] = q[j] + h * v[j];
  sb_kinematics(m, w, qq, NULL);
  sb_point_kinematics(m, w, seg, s, NULL, Jp, NULL, NULL);
  for (int j = 0; j < n; j++) qq[j] = q[j] - h * v[j];
  sb_kinematics(m, w, qq, NULL);
  sb_point_kinematics(m, w, seg, s, NULL, Jm, NULL, NULL);
  double fd[6] = {0};
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < n; j++) fd[i] += (Jp[i * n + j] - Jm[i * n + j]) * v[j] / (2 * h);
  e = tu_relerr(dJv, fd, 6, 1e-3);
  worst_dj = fmax(worst_dj, e);
  EXPECT(e <= 1e-6, "%s: dJ/dt v at seg %d s %g vs FD: rel err %g", what, seg, s, e);
  free(J); free(Jp); free(Jm); free(qq);
}

static void check_all_points(const sb_model *m, sb_work *w, const double *q, const double *v, const char *what) {
  for (int i = 0; i < m->nseg; i++) {
    const sb_segment *sg = &m->seg[i];
    if (sg->p.type == SB_SEG_PCS || sg->p.type == SB_SEG_PLS || sg->p.type == SB_SEG_PCC) {
      double L = sg->p.length;
      double ss[] = {0, 0.137 * L, m->node[sg->node0 + 1].s1, 0.5 * L, 0.71 * L, L};
      for (size_t k = 0; k < sizeof ss / sizeof ss[0]; k++) check_point(m, w, q, v, i, ss[k], what);
    } else {
      check_point(m, w, q, v, i, 0, what);
    }
  }
}

/* Tip pose of a single PLS rod with a strain field given by nodal values. */
static sb_pose pls_tip(int elements, int slices, const double *nodal /* 3 x (elements+1) at 1/12 spacing */) {
  sb_segment_params s = sb_segment_default(SB_SEG_PLS);
  s.length = 0.3; s.elements = elements; s.slices = slices; s.strains = SB_KX | SB_KY | SB_EZ;
  sb_chain_params c = {0};
  c.nseg = 1; c.seg = &s; c.base = sb_pose_identity();
  char err[256];
  sb_model *m = sb_model_create(&c, err, sizeof err);
  sb_work *w = sb_work_create(m);
  double q[3 * 257];
  /* sample the reference piecewise linear field (12 pieces) at this model's nodes */
  for (int e = 0; e <= elements; e++) {
    double x = 12.0 * e / elements;
    int i = (int)floor(x);
    if (i >= 12) i = 11;
    double t = x - i;
    for (int c3 = 0; c3 < 3; c3++) q[3 * e + c3] = (1 - t) * nodal[3 * i + c3] + t * nodal[3 * (i + 1) + c3];
  }
  sb_kinematics(m, w, q, NULL);
  sb_pose g;
  sb_point_kinematics(m, w, 0, 0.3, &g, NULL, NULL, NULL);
  sb_work_free(w);
  sb_model_free(m);
  return g;
}

static double pose_dist(const sb_pose *a, const sb_pose *b) {
  double d = 0;
  for (int i = 0; i < 3; i++) d = fmax(d, fabs(a->p[i] - b->p[i]));
  for (int i = 0; i < 9; i++) d = fmax(d, 0.3 * fabs(a->R[i] - b->R[i]));
  return d;
}

int main(void) {
  char err[256];
  zoo_chain z;
  zoo_build(&z, 1);
  sb_model *m = sb_model_create(&z.chain, err, sizeof err);
  EXPECT(m != NULL, "zoo model: %s", err);
  if (!m) return test_report("kinematics");
  sb_work *w = sb_work_create(m);
  int n = m->n;
  double *q = calloc(n, sizeof(double)), *v = calloc(n, sizeof(double));

  for (int rep = 0; rep < 3; rep++) {
    zoo_random_q(m, q, 1, tu_rand);
    zoo_random_q(m, v, 3, tu_rand);
    check_all_points(m, w, q, v, "random");
  }
  memset(q, 0, sizeof(double) * n);
  zoo_random_q(m, v, 3, tu_rand);
  check_all_points(m, w, q, v, "straight");
  zoo_random_q(m, q, 1e-9, tu_rand);
  check_all_points(m, w, q, v, "curvature 1e-9");
  printf("worst relative error: Jacobian %.3g, dJ/dt v %.3g\n", worst_jac, worst_dj);
  /* the zoo's proximal segments' points do not depend on the distal ones */
  EXPECT(proximal_points > 0, "no point Jacobian with zero distal columns: the structure check checked nothing");
  printf("Jacobian in parts: %d points past the first unit, worst %.3g of the largest entry\n", parts_points,
         worst_parts);
  EXPECT(parts_points > 0, "no point past the first unit: the parts check checked no A Jend");
  EXPECT(sb_point_columns(m, -1, 0) == n && sb_point_columns(m, 0, -1) == n && sb_point_columns(m, 0, 1e3) == n &&
             sb_point_columns(m, m->nseg, 0) == n,
         "sb_point_columns of a bad point claims structure (%d)", sb_point_columns(m, 0, -1));

  /* PLS with a constant strain field is exactly PCS. */
  {
    sb_segment_params a = sb_segment_default(SB_SEG_PCS), b = sb_segment_default(SB_SEG_PLS);
    a.length = b.length = 0.3;
    a.strains = b.strains = SB_STRAIN_ALL;
    b.elements = 5;
    sb_chain_params ca = {0}, cb = {0};
    ca.nseg = cb.nseg = 1; ca.seg = &a; cb.seg = &b; ca.base = cb.base = sb_pose_identity();
    sb_model *ma = sb_model_create(&ca, err, sizeof err), *mb = sb_model_create(&cb, err, sizeof err);
    sb_work *wa = sb_work_create(ma), *wb = sb_work_create(mb);
    double xi[6] = {3, -2, 1.5, 0.1, -0.05, 0.2}, qb[36];
    for (int e = 0; e <= 5; e++) memcpy(qb + 6 * e, xi, sizeof xi);
    sb_kinematics(ma, wa, xi, NULL);
    sb_kinematics(mb, wb, qb, NULL);
    for (double s = 0; s <= 0.3; s += 0.0375) {
      sb_pose ga, gb;
      sb_point_kinematics(ma, wa, 0, s, &ga, NULL, NULL, NULL);
      sb_point_kinematics(mb, wb, 0, s, &gb, NULL, NULL, NULL);
      EXPECT(pose_dist(&ga, &gb) < 1e-13, "PLS constant strain = PCS at s=%g: %g", s, pose_dist(&ga, &gb));
    }
    sb_work_free(wa); sb_work_free(wb); sb_model_free(ma); sb_model_free(mb);
  }

  /* Magnus step: error against a fine reference falls as h^4. */
  {
    double nodal[3 * 13];
    for (int i = 0; i < 13; i++) {
      nodal[3 * i] = 6 * sin(0.7 * i);
      nodal[3 * i + 1] = 5 * cos(0.4 * i + 1);
      nodal[3 * i + 2] = 0.1 * sin(i);
    }
    sb_pose ref = pls_tip(12, 32, nodal);
    double e1 = pose_dist(&ref, (sb_pose[]){pls_tip(12, 2, nodal)});
    double e2 = pose_dist(&ref, (sb_pose[]){pls_tip(12, 4, nodal)});
    double order = log(e1 / e2) / log((2 + 1.0) / (4 + 1.0));
    /* slices k -> k+1 steps per element */
    order = log(e1 / e2) / log(5.0 / 3.0);
    printf("Magnus: tip error %.3g (3 steps/element), %.3g (5 steps/element), observed order %.2f\n", e1, e2, order);
    EXPECT(order > 3.5, "Magnus step order %.2f < 3.5", order);
  }

  /* PCC: equal chamber elongations give pure extension. */
  {
    sb_segment_params s = sb_segment_default(SB_SEG_PCC);
    s.length = 0.15;
    sb_chain_params c = {0};
    c.nseg = 1; c.seg = &s; c.base = sb_pose_identity();
    sb_model *mp = sb_model_create(&c, err, sizeof err);
    sb_work *wp = sb_work_create(mp);
    double ql[3] = {0.012, 0.012, 0.012};
    sb_kinematics(mp, wp, ql, NULL);
    sb_pose g;
    sb_point_kinematics(mp, wp, 0, 0.15, &g, NULL, NULL, NULL);
    double expect[3] = {0, 0, 0.162};
    EXPECT(tu_relerr(g.p, expect, 3, 1) < 1e-14, "PCC equal elongation: tip (%g %g %g)", g.p[0], g.p[1], g.p[2]);
    double I9[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    EXPECT(tu_relerr(g.R, I9, 9, 1) < 1e-14, "PCC equal elongation: no rotation");
    /* Unequal elongations: each chamber line (offset d at angle psi) has the commanded length. */
    double ql2[3] = {0.01, -0.004, 0.002};
    sb_kinematics(mp, wp, ql2, NULL);
    for (int j = 0; j < 3; j++) {
      double psi = s.chamber_angle + 2 * M_PI * j / 3, len = 0, prev[3];
      int N = 2000;
      for (int k = 0; k <= N; k++) {
        sb_pose gk;
        sb_point_kinematics(mp, wp, 0, 0.15 * k / N, &gk, NULL, NULL, NULL);
        double off[3] = {s.chamber_radius * cos(psi), s.chamber_radius * sin(psi), 0}, x[3];
        sb_pose_apply(&gk, off, x);
        if (k) len += sqrt(pow(x[0] - prev[0], 2) + pow(x[1] - prev[1], 2) + pow(x[2] - prev[2], 2));
        memcpy(prev, x, sizeof x);
      }
      EXPECT(fabs(len - (0.15 + ql2[j])) < 1e-7, "PCC chamber %d length %.9f vs %.9f", j, len, 0.15 + ql2[j]);
    }
    sb_work_free(wp);
    sb_model_free(mp);
  }
  free(q); free(v);
  sb_work_free(w);
  sb_model_free(m);
  return test_report("kinematics");
}

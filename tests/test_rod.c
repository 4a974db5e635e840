/* Cosserat rods against analytic beams: cantilever under its own weight
 * (wL^4/8EI), a pure end moment 2 pi EI / L closing the rod into a circle,
 * and large tip-load deflections against the planar elastica, solved here
 * independently by shooting. */
#include <string.h>

#include "chain.h"
#include "testutil.h"

/* Horizontal rod: base rotated +90 deg about y, so local z = world x and
 * bending under a load along world z is about local y. */
static sb_pose horizontal_base(void) {
  sb_pose g = sb_pose_identity();
  double w[3] = {0, M_PI / 2, 0};
  sb_so3_exp(w, g.R);
  return g;
}

typedef struct {
  sb_segment_params seg[64];
  sb_chain_params chain;
} rod;

/* N PCS pieces, or one PLS segment with N elements. */
static void rod_build(rod *r, int pls, int N, double L, double radius, double E, double density, int strains) {
  memset(r, 0, sizeof *r);
  int nseg = pls ? 1 : N;
  for (int i = 0; i < nseg; i++) {
    sb_segment_params *p = &r->seg[i];
    *p = sb_segment_default(pls ? SB_SEG_PLS : SB_SEG_PCS);
    p->length = pls ? L : L / N;
    p->elements = N;
    p->radius = radius;
    p->young = E;
    p->density = density;
    p->strains = strains;
    p->slices = 3;
  }
  r->chain.nseg = nseg;
  r->chain.seg = r->seg;
  r->chain.base = horizontal_base();
}

static int tip_segment(const rod *r) { return r->chain.nseg - 1; }

/* A dead force/moment (world axes) at the free end. */
static sb_point_load tip_load(const rod *r, double fx, double fz, double my) {
  sb_point_load ld = {0};
  ld.seg = tip_segment(r);
  ld.s = r->seg[ld.seg].length;
  ld.force[0] = fx;
  ld.force[2] = fz;
  ld.moment[1] = my;
  return ld;
}

static sb_pose solve_tip(const rod *r, const sb_point_load *loads, int nload, double *q_inout,
                         sb_model **mout, double *resid) {
  char err[256];
  sb_model *m = sb_model_create(&r->chain, err, sizeof err);
  EXPECT(m != NULL, "rod model: %s", err);
  sb_work *w = sb_work_create(m);
  double *q = calloc(m->n, sizeof(double));
  if (q_inout) memcpy(q, q_inout, sizeof(double) * m->n);
  int rc = sb_static_solve(m, w, NULL, loads, nload, q, 1e-9, 50, resid, err, sizeof err);
  EXPECT(rc == 0, "static solve: %s", err);
  sb_kinematics(m, w, q, NULL);
  sb_pose tip;
  const sb_segment *sg = &m->seg[tip_segment(r)];
  sb_point_kinematics(m, w, tip_segment(r), sg->p.length, &tip, NULL, NULL, NULL);
  if (q_inout) memcpy(q_inout, q, sizeof(double) * m->n);
  free(q);
  sb_work_free(w);
  if (mout)
    *mout = m;
  else
    sb_model_free(m);
  return tip;
}

/* Planar elastica, L = EI = 1, tip load alpha downward: EI th'' = P cos th,
 * th(0) = 0, th'(1) = 0. Returns the tip (x, y) for initial curvature k0. */
static void elastica_shoot(double alpha, double k0, double *thp_end, double *x, double *y) {
  int N = 4000;
  double h = 1.0 / N, s[4] = {0, k0, 0, 0}; /* th, th', x, y */
  for (int i = 0; i < N; i++) {
    double k[4][4], t[4];
    for (int r = 0; r < 4; r++) {
      for (int j = 0; j < 4; j++) t[j] = s[j] + (r == 0 ? 0 : (r == 3 ? h : 0.5 * h)) * (r ? k[r - 1][j] : 0);
      k[r][0] = t[1];
      k[r][1] = alpha * cos(t[0]);
      k[r][2] = cos(t[0]);
      k[r][3] = sin(t[0]);
    }
    for (int j = 0; j < 4; j++) s[j] += h / 6 * (k[0][j] + 2 * k[1][j] + 2 * k[2][j] + k[3][j]);
  }
  *thp_end = s[1];
  *x = s[2];
  *y = s[3];
}

static void elastica_tip(double alpha, double *x, double *y) {
  /* th'(1) is increasing in k0; bracket and bisect. */
  double lo = -alpha - 1, hi = 0, e, xx, yy;
  for (int it = 0; it < 200; it++) {
    double mid = 0.5 * (lo + hi);
    elastica_shoot(alpha, mid, &e, &xx, &yy);
    if (e > 0) hi = mid; else lo = mid;
  }
  elastica_shoot(alpha, 0.5 * (lo + hi), &e, x, y);
}

int main(void) {
  /* 1. Cantilever under its own weight, small deflection. */
  {
    double L = 0.5, r = 0.005, E = 1e10, rho = 1000, g = 9.81;
    double A = M_PI * r * r, I = M_PI * pow(r, 4) / 4, wload = rho * A * g;
    double expect = wload * pow(L, 4) / (8 * E * I);
    int configs[2][2] = {{0, 24}, {1, 8}};
    for (int c = 0; c < 2; c++) {
      rod rd;
      rod_build(&rd, configs[c][0], configs[c][1], L, r, E, rho, SB_KX | SB_KY | SB_KZ | SB_EZ);
      rd.chain.gravity[2] = -g;
      double res;
      sb_pose tip = solve_tip(&rd, NULL, 0, NULL, NULL, &res);
      double defl = -tip.p[2];
      double rel = fabs(defl - expect) / expect;
      printf("cantilever %s x%d: tip deflection %.6e m, wL^4/8EI %.6e m, rel err %.2e (residual %.1e)\n",
             configs[c][0] ? "PLS" : "PCS", configs[c][1], defl, expect, rel, res);
      EXPECT(rel <= 0.01, "cantilever deflection off by %.3g%%", 100 * rel);
    }
  }

  /* 2. End moment 2 pi EI / L: a circle, the tip back at the base. */
  {
    double L = 0.3, r = 0.004, E = 2e6;
    double I = M_PI * pow(r, 4) / 4;
    for (int pls = 0; pls <= 1; pls++) {
      rod rd;
      rod_build(&rd, pls, pls ? 4 : 8, L, r, E, 1000, SB_STRAIN_ALL);
      /* world y = local y: bends in the xz plane */
      sb_point_load ld = tip_load(&rd, 0, 0, 2 * M_PI * E * I / L);
      double res;
      sb_pose tip = solve_tip(&rd, &ld, 1, NULL, NULL, &res);
      double gap = sqrt(tip.p[0] * tip.p[0] + tip.p[1] * tip.p[1] + tip.p[2] * tip.p[2]);
      printf("end moment 2 pi EI/L (%s): tip to base %.3e L\n", pls ? "PLS" : "PCS", gap / L);
      EXPECT(gap <= 1e-6 * L, "circle: tip is %.3g L from the base", gap / L);
      double Rb[9];
      memcpy(Rb, rd.chain.base.R, sizeof Rb);
      EXPECT(tu_relerr(tip.R, Rb, 9, 1) <= 1e-6, "circle: tip frame returns to the base frame");
    }
  }

  /* 2b. Axial tip force: elongation P L / (E A) (shear and bending idle). */
  {
    double L = 0.3, r = 0.004, E = 2e6, A = M_PI * r * r, P = 1e-3 * E * A;
    for (int pls = 0; pls <= 1; pls++) {
      rod rd;
      rod_build(&rd, pls, pls ? 4 : 8, L, r, E, 1000, SB_STRAIN_ALL);
      sb_point_load ld = tip_load(&rd, P, 0, 0); /* world x = the rod axis */
      double res;
      sb_pose tip = solve_tip(&rd, &ld, 1, NULL, NULL, &res);
      double expect = P * L / (E * A), got = tip.p[0] - L;
      printf("axial force (%s): elongation %.6e m, PL/EA %.6e m\n", pls ? "PLS" : "PCS", got, expect);
      EXPECT(fabs(got - expect) <= 1e-6 * expect, "axial elongation %.9g vs PL/EA %.9g", got, expect);
    }
  }

  /* 3. Large deflection: tip load P with P L^2 / EI = 1, 3, 10. */
  {
    double L = 0.4, r = 0.003, E = 5e6;
    double EI = E * M_PI * pow(r, 4) / 4;
    rod rd;
    rod_build(&rd, 0, 32, L, r, E, 1000, SB_STRAIN_BENDING);
    double *q = calloc(64, sizeof(double));
    double alphas[] = {1, 3, 10};
    for (int a = 0; a < 3; a++) {
      double xe, ye;
      elastica_tip(alphas[a], &xe, &ye);
      /* continuation from the previous load, in a few increments */
      double prev = a ? alphas[a - 1] : 0;
      sb_pose tip;
      double res = 0;
      for (int k = 1; k <= 4; k++) {
        double al = prev + (alphas[a] - prev) * k / 4;
        sb_point_load ld = tip_load(&rd, 0, -al * EI / (L * L), 0);
        tip = solve_tip(&rd, &ld, 1, q, NULL, &res);
      }
      double dx = tip.p[0] - L * xe, dz = tip.p[2] - L * ye;
      double err = sqrt(dx * dx + dz * dz), defl = L * sqrt((1 - xe) * (1 - xe) + ye * ye);
      printf("elastica PL^2/EI = %g: tip (%.6f, %.6f) L, shooting (%.6f, %.6f) L, error %.3f%% of L (%.3f%% of deflection)\n",
             alphas[a], tip.p[0] / L, tip.p[2] / L, xe, ye, 100 * err / L, 100 * err / defl);
      EXPECT(err <= 0.005 * defl, "elastica alpha=%g: tip error %.3g%% of the deflection", alphas[a], 100 * err / defl);
    }
    free(q);
  }
  return test_report("rod");
}

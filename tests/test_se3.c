/* SE(3) algebra against independent definitions: matrix exponential series,
 * commutators of 4x4 matrices, central finite differences. */
#include <string.h>

#include "se3.h"
#include "fd.h"
#include "testutil.h"

/* exp of a 4x4 matrix by scaling and squaring of its Taylor series. */
static void expm4(const double A[16], double E[16]) {
  double nrm = 0;
  for (int i = 0; i < 16; i++) nrm = fmax(nrm, fabs(A[i]));
  int sq = 0;
  while (nrm > 0.05) { nrm *= 0.5; sq++; }
  double B[16], T[16], P[16];
  for (int i = 0; i < 16; i++) B[i] = A[i] / pow(2, sq);
  memset(E, 0, 16 * sizeof(double));
  memset(T, 0, sizeof T);
  for (int i = 0; i < 4; i++) E[5 * i] = T[5 * i] = 1;
  for (int k = 1; k < 30; k++) {
    sb_matmul(4, 4, 4, T, B, P);
    for (int i = 0; i < 16; i++) { T[i] = P[i] / k; E[i] += T[i]; }
  }
  for (int s = 0; s < sq; s++) {
    sb_matmul(4, 4, 4, E, E, P);
    memcpy(E, P, sizeof P);
  }
}

static void pose4(const sb_pose *g, double G[16]) {
  memset(G, 0, 16 * sizeof(double));
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) G[4 * i + j] = g->R[3 * i + j];
    G[4 * i + 3] = g->p[i];
  }
  G[15] = 1;
}

static void rand6(double x[6], double ang, double lin) {
  for (int i = 0; i < 3; i++) { x[i] = ang * tu_rand(); x[3 + i] = lin * tu_rand(); }
}


static void check_tangent(const double Om[6], const char *what) {
  double d[6], T[36], fd[6], Td[6];
  rand6(d, 1, 1);
  double eps = 1e-6;
  double Op[6], Omn[6];
  for (int i = 0; i < 6; i++) { Op[i] = Om[i] + eps * d[i]; Omn[i] = Om[i] - eps * d[i]; }
  sb_pose g = sb_se3_exp(Om), gp = sb_se3_exp(Op), gm = sb_se3_exp(Omn);
  fd_twist(&g, &gp, &gm, eps, fd);
  sb_se3_tangent(Om, T);
  sb_mat6_vec(T, d, Td);
  EXPECT(tu_relerr(Td, fd, 6, 1) < 1e-8, "tangent vs FD (%s): %g", what, tu_relerr(Td, fd, 6, 1));
  /* Against the defining series sum (-ad)^k/(k+1)! (converges for any angle). */
  double x[6], u[6], ser[6];
  rand6(x, 1, 1);
  memcpy(u, x, sizeof u);
  memcpy(ser, x, sizeof ser);
  double f = 1;
  for (int k = 1; k < 60; k++) {
    sb_ad_apply(Om, u, u);
    f *= -1.0 / (k + 1);
    for (int i = 0; i < 6; i++) ser[i] += f * u[i];
  }
  double Tx[6];
  sb_se3_tangent_apply(Om, x, Tx);
  EXPECT(tu_relerr(Tx, ser, 6, 1) < 1e-12, "tangent vs series (%s): %g", what, tu_relerr(Tx, ser, 6, 1));
  /* Derivative of the tangent operator. */
  double a[6], b[6], dT[6], fdT[6];
  sb_se3_tangent_apply(Op, x, a);
  sb_se3_tangent_apply(Omn, x, b);
  for (int i = 0; i < 6; i++) fdT[i] = (a[i] - b[i]) / (2 * eps);
  sb_se3_tangent_deriv_apply(Om, d, x, dT);
  EXPECT(tu_relerr(dT, fdT, 6, 1e-3) < 1e-7, "tangent derivative vs FD (%s): %g", what, tu_relerr(dT, fdT, 6, 1e-3));
}

/* sb_Ad_matmul (the AVX2 clone on a machine that has it) against the
 * generic product sb_matmul, bit for bit, at every column count a chain
 * asks for and past them (vector bodies and remainders), with row strides
 * longer than the columns: the entries past n are not touched. */
static void check_Ad_matmul(void) {
  enum { NMAX = 41, LDB = NMAX + 3, LDC = NMAX + 5 };
  static double B[6 * LDB], Bc[6 * NMAX], C[6 * LDC], Cref[6 * NMAX];
  int differ = 0, touched = 0;
  for (int n = 1; n <= NMAX; n++) {
    double xi[6], X[36];
    rand6(xi, 2, 1);
    sb_pose g = sb_se3_exp(xi);
    sb_Ad(&g, X);
    for (int i = 0; i < 6; i++)
      for (int j = 0; j < LDB; j++) B[i * LDB + j] = j < n ? tu_rand() : NAN;
    for (int i = 0; i < 6; i++)
      for (int j = 0; j < n; j++) Bc[i * n + j] = B[i * LDB + j];
    for (int i = 0; i < 6 * LDC; i++) C[i] = -7;
    sb_Ad_matmul(X, n, B, LDB, C, LDC);
    sb_matmul(6, 6, n, X, Bc, Cref);
    for (int i = 0; i < 6; i++)
      for (int j = 0; j < LDC; j++) {
        if (j < n) differ += C[i * LDC + j] != Cref[i * n + j];
        else touched += C[i * LDC + j] != -7;
      }
  }
  EXPECT(differ == 0 && touched == 0, "Ad_matmul against sb_matmul: %d entries differ, %d past n written", differ,
         touched);
}

int main(void) {
  /* exp against the matrix exponential, log round trip, at many angles. */
  double angles[] = {0, 1e-12, 1e-9, 1e-5, 1e-2, 0.5, 1.1999, 1.2, 1.2001, 2.5, 3.0, M_PI - 1e-6, M_PI};
  for (size_t a = 0; a < sizeof angles / sizeof angles[0]; a++)
    for (int rep = 0; rep < 5; rep++) {
      double xi[6], X[16], E[16], G[16];
      rand6(xi, 1, 1);
      double nw = sqrt(xi[0] * xi[0] + xi[1] * xi[1] + xi[2] * xi[2]);
      for (int i = 0; i < 3; i++) xi[i] *= angles[a] / nw;
      sb_hat6(xi, X);
      expm4(X, E);
      sb_pose g = sb_se3_exp(xi);
      pose4(&g, G);
      EXPECT(tu_relerr(G, E, 16, 1) < 1e-13, "exp vs expm at angle %g: %g", angles[a], tu_relerr(G, E, 16, 1));
      double back[6];
      sb_se3_log(&g, back);
      if (angles[a] < M_PI - 1e-3) {
        EXPECT(tu_relerr(back, xi, 6, 1) < 1e-9, "log(exp) at angle %g: %g", angles[a], tu_relerr(back, xi, 6, 1));
      } else {
        /* At pi the axis sign is ambiguous: compare the poses. */
        sb_pose g2 = sb_se3_exp(back);
        double G2[16];
        pose4(&g2, G2);
        EXPECT(tu_relerr(G2, G, 16, 1) < 1e-7, "exp(log) at angle %g: %g", angles[a], tu_relerr(G2, G, 16, 1));
      }
      check_tangent(xi, "sweep");
    }

  /* hat/vee, Ad, ad, coadjoints against their matrix definitions. */
  for (int rep = 0; rep < 20; rep++) {
    double xi[6], eta[6], X[16], back[6];
    rand6(xi, 2, 1);
    rand6(eta, 2, 1);
    sb_hat6(xi, X);
    sb_vee6(X, back);
    EXPECT(tu_relerr(back, xi, 6, 1) == 0, "hat/vee round trip");
    sb_pose g = sb_se3_exp(eta);
    double G[16], Gi[16], T1[16], T2[16], A[36], Ax[6], ref[6];
    pose4(&g, G);
    sb_pose gi = sb_pose_inv(&g);
    pose4(&gi, Gi);
    sb_matmul(4, 4, 4, G, X, T1);
    sb_matmul(4, 4, 4, T1, Gi, T2);
    sb_vee6(T2, ref);
    sb_Ad(&g, A);
    sb_mat6_vec(A, xi, Ax);
    EXPECT(tu_relerr(Ax, ref, 6, 1) < 1e-14, "Ad_g xi = vee(g xi^ g^-1)");
    double Ai[36], I6[36];
    sb_Ad_inv(&g, Ai);
    sb_matmul(6, 6, 6, A, Ai, I6);
    for (int i = 0; i < 6; i++) I6[7 * i] -= 1;
    EXPECT(tu_maxabs(I6, 36) < 1e-14, "Ad_g Ad_g^-1 = I");
    double Y[16], XY[16], YX[16], adv[6], adm[36], adm_v[6];
    sb_hat6(eta, Y);
    sb_matmul(4, 4, 4, X, Y, XY);
    sb_matmul(4, 4, 4, Y, X, YX);
    for (int i = 0; i < 16; i++) XY[i] -= YX[i];
    sb_vee6(XY, ref);
    sb_ad_apply(xi, eta, adv);
    sb_ad(xi, adm);
    sb_mat6_vec(adm, eta, adm_v);
    EXPECT(tu_relerr(adv, ref, 6, 1) < 1e-14 && tu_relerr(adm_v, ref, 6, 1) < 1e-14, "ad_xi eta = [xi, eta]");
    double F[6], cA[36], cF[6], coad[6];
    rand6(F, 1, 1);
    sb_coAd(&g, cA);
    sb_mat6_vec(cA, F, cF);
    double p1 = 0, p2 = 0;
    for (int i = 0; i < 6; i++) { p1 += cF[i] * Ax[i]; p2 += F[i] * xi[i]; }
    EXPECT(fabs(p1 - p2) < 1e-13 * (1 + fabs(p2)), "coAd preserves power");
    sb_coad_apply(xi, F, coad);
    p1 = p2 = 0;
    for (int i = 0; i < 6; i++) { p1 += coad[i] * eta[i]; p2 += F[i] * adv[i]; }
    EXPECT(fabs(p1 - p2) < 1e-13 * (1 + fabs(p2)), "coad is the dual of ad");
    /* SO(3) left Jacobian: p of exp is Jl v. */
    double Jl[9], pv[3];
    sb_so3_jl(eta, Jl);
    for (int i = 0; i < 3; i++) pv[i] = Jl[3 * i] * eta[3] + Jl[3 * i + 1] * eta[4] + Jl[3 * i + 2] * eta[5];
    EXPECT(tu_relerr(pv, g.p, 3, 1) < 1e-14, "Jl v = p");
  }
  check_Ad_matmul();
  return test_report("se3");
}

/* Dynamics: mass matrix properties and the direct sum of J^T M J, inverse
 * vs forward dynamics, gravity as the gradient of the potential, the power
 * balance (dM/dt - 2C skew), and the order of the energy error of the
 * linearly implicit Euler step. */
#include <lapacke.h>
#include <string.h>

#include "chain.h"
#include "presets.h"
#include "testutil.h"
#include "zoo.h"

static double total_energy(const sb_model *m, sb_work *w, const double *q, const double *v) {
  double T, V, E;
  sb_kinematics(m, w, q, v);
  sb_energy(m, w, &T, &V, &E);
  return T + V + E;
}


static void check_model(const sb_model *m, const char *name) {
  int n = m->n;
  sb_work *w = sb_work_create(m);
  double *q = calloc(n, sizeof(double)), *v = calloc(n, sizeof(double)), *tau = calloc(n, sizeof(double)),
         *a = calloc(n, sizeof(double)), *t2 = calloc(n, sizeof(double)), *M = calloc(n * n, sizeof(double)),
         *Md = calloc(n * n, sizeof(double)), *J = calloc(6 * n, sizeof(double)), *ev = calloc(n, sizeof(double)),
         *c = calloc(n, sizeof(double)), *c0 = calloc(n, sizeof(double)), *qq = calloc(n, sizeof(double)),
         *Mp = calloc(n * n, sizeof(double)), *Mm = calloc(n * n, sizeof(double));
  for (int rep = 0; rep < 4; rep++) {
    zoo_random_q(m, q, rep == 0 ? 0 : 1, tu_rand);
    zoo_random_q(m, v, 3, tu_rand);
    for (int i = 0; i < n; i++) tau[i] = tu_rand();
    sb_kinematics(m, w, q, v);
    sb_mass_matrix(m, w, M);

    /* Symmetric positive definite. */
    double asym = 0;
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) asym = fmax(asym, fabs(M[i * n + j] - M[j * n + i]));
    EXPECT(asym <= 1e-14 * tu_maxabs(M, n * n), "%s: M symmetric (asym %g)", name, asym);
    memcpy(Md, M, sizeof(double) * n * n);
    LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'N', 'U', n, Md, n, ev);
    EXPECT(ev[0] > 0, "%s: M positive definite (min eig %g, max %g)", name, ev[0], ev[n - 1]);

    /* Direct sum over the mass-carrying points: sum_k J_k^T I_k J_k. */
    memset(Md, 0, sizeof(double) * n * n);
    for (int k = 0; k < m->nnode; k++) {
      const sb_node *nd = &m->node[k];
      int soft = m->seg[nd->seg].p.type <= SB_SEG_PCC;
      sb_point_kinematics(m, w, nd->seg, soft ? nd->s1 : 0, NULL, J, NULL, NULL);
      double *IJ = calloc(6 * n, sizeof(double));
      sb_matmul(6, 6, n, nd->inertia, J, IJ);
      for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
          for (int r = 0; r < 6; r++) Md[i * n + j] += J[r * n + i] * IJ[r * n + j];
      free(IJ);
    }
    double e = tu_relerr(M, Md, n * n, 0);
    EXPECT(e <= 1e-10, "%s: recursive M vs direct sum J^T M J: rel err %g", name, e);

    /* Kinetic energy from node twists equals v^T M v / 2. */
    double T, Vg, Ve, vMv = 0;
    sb_energy(m, w, &T, &Vg, &Ve);
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) vMv += v[i] * M[i * n + j] * v[j];
    EXPECT(fabs(T - 0.5 * vMv) <= 1e-12 * fabs(T), "%s: kinetic energy %g vs v'Mv/2 %g", name, T, 0.5 * vMv);

    /* ID(q, v, FD(q, v, tau)) = tau. */
    EXPECT(sb_forward_dynamics(m, w, tau, a) == 0, "%s: forward dynamics", name);
    sb_inverse_dynamics(m, w, a, t2);
    /* Relative to the largest of the terms that cancel in M a = tau - c - Kq - Dv,
     * the products |M_ij a_j| among them: with cond(M) near 1e9 they reach
     * 1e6 where tau is 5, and the round-off of the solve, which depends on
     * the BLAS kernel (2.5x between OpenBLAS's Prescott and Cooperlake), is
     * a few ulps of them. */
    double tscale = tu_maxabs(tau, n);
    sb_bias(m, w, c);
    tscale = fmax(tscale, tu_maxabs(c, n));
    for (int i = 0; i < n; i++) {
      double kd = 0, ma = 0;
      for (int j = 0; j < n; j++) {
        kd += m->K[i * n + j] * q[j] + m->D[i * n + j] * v[j];
        ma += fabs(M[i * n + j] * a[j]);
      }
      tscale = fmax(tscale, fmax(fabs(kd), ma));
    }
    e = 0;
    for (int i = 0; i < n; i++) e = fmax(e, fabs(t2[i] - tau[i]) / tscale);
    EXPECT(e <= 1e-13, "%s: ID(FD(tau)) = tau: rel err %g", name, e);

    /* Gravity force is the gradient of the potential energy. */
    sb_kinematics(m, w, q, NULL);
    sb_bias(m, w, c0);
    double *gfd = calloc(n, sizeof(double));
    for (int j = 0; j < n; j++) {
      double hs = 1e-6, Ep, Em;
      memcpy(qq, q, sizeof(double) * n);
      qq[j] += hs;
      sb_kinematics(m, w, qq, NULL);
      sb_energy(m, w, NULL, &Ep, NULL);
      qq[j] -= 2 * hs;
      sb_kinematics(m, w, qq, NULL);
      sb_energy(m, w, NULL, &Em, NULL);
      gfd[j] = (Ep - Em) / (2 * hs);
    }
    e = tu_relerr(c0, gfd, n, 1e-6);
    EXPECT(e <= 1e-7, "%s: gravity force vs dV/dq: rel err %g", name, e);
    free(gfd);

    /* The velocity terms from the Christoffel symbols of M (finite
     * differences): c - g = sum_jk (dM_ij/dq_k - 1/2 dM_jk/dq_i) v_j v_k. */
    {
      double *dM = calloc((size_t)n * n * n, sizeof(double)), *cv = calloc(n, sizeof(double));
      double hs = 1e-6;
      for (int k = 0; k < n; k++) {
        memcpy(qq, q, sizeof(double) * n);
        qq[k] += hs;
        sb_kinematics(m, w, qq, NULL);
        sb_mass_matrix(m, w, Mp);
        qq[k] -= 2 * hs;
        sb_kinematics(m, w, qq, NULL);
        sb_mass_matrix(m, w, Mm);
        for (int i = 0; i < n * n; i++) dM[(size_t)k * n * n + i] = (Mp[i] - Mm[i]) / (2 * hs);
      }
      for (int i = 0; i < n; i++) {
        double s = 0;
        for (int j = 0; j < n; j++)
          for (int k = 0; k < n; k++)
            s += (dM[(size_t)k * n * n + i * n + j] - 0.5 * dM[(size_t)i * n * n + j * n + k]) * v[j] * v[k];
        cv[i] = s;
      }
      sb_kinematics(m, w, q, v);
      sb_bias(m, w, c);
      sb_kinematics(m, w, q, NULL);
      sb_bias(m, w, c0);
      for (int i = 0; i < n; i++) c[i] -= c0[i];
      double ec = tu_relerr(c, cv, n, 1e-9);
      EXPECT(ec <= 1e-6, "%s: Coriolis/centrifugal vs Christoffel symbols of M: rel err %g", name, ec);
      free(dM);
      free(cv);
    }

    /* Power balance identity: v^T dM/dt v = 2 v^T (c(q,v) - c(q,0)). */
    sb_kinematics(m, w, q, v);
    sb_bias(m, w, c);
    double hs = 1e-6;
    for (int i = 0; i < n; i++) qq[i] = q[i] + hs * v[i];
    sb_kinematics(m, w, qq, NULL);
    sb_mass_matrix(m, w, Mp);
    for (int i = 0; i < n; i++) qq[i] = q[i] - hs * v[i];
    sb_kinematics(m, w, qq, NULL);
    sb_mass_matrix(m, w, Mm);
    double lhs = 0, rhs = 0, scale = 0;
    for (int i = 0; i < n; i++) {
      rhs += 2 * v[i] * (c[i] - c0[i]);
      scale += fabs(v[i] * c[i]) + fabs(v[i] * c0[i]);
      for (int j = 0; j < n; j++) lhs += v[i] * (Mp[i * n + j] - Mm[i * n + j]) / (2 * hs) * v[j];
    }
    EXPECT(fabs(lhs - rhs) <= 1e-6 * fmax(scale, fabs(lhs)), "%s: v'dM/dt v = 2 v'(c - g): %g vs %g", name, lhs, rhs);
  }

  /* Power balance along the trajectory through (q, v): dE/dt = v^T (tau - D v),
   * with dE/dt by central differences of E along (v, a). */
  for (int rep = 0; rep < 3; rep++) {
    zoo_random_q(m, q, 1, tu_rand);
    zoo_random_q(m, v, 1, tu_rand);
    for (int i = 0; i < n; i++) tau[i] = 0.1 * tu_rand();
    sb_kinematics(m, w, q, v);
    sb_forward_dynamics(m, w, tau, a);
    double P = 0, Pscale = 0, hs = 1e-6;
    for (int i = 0; i < n; i++) {
      double Dv = 0;
      for (int j = 0; j < n; j++) Dv += m->D[i * n + j] * v[j];
      P += v[i] * (tau[i] - Dv);
      Pscale += fabs(v[i] * tau[i]) + fabs(v[i] * Dv);
    }
    double *vv = calloc(n, sizeof(double));
    for (int i = 0; i < n; i++) { qq[i] = q[i] + hs * v[i]; vv[i] = v[i] + hs * a[i]; }
    double Ep = total_energy(m, w, qq, vv);
    for (int i = 0; i < n; i++) { qq[i] = q[i] - hs * v[i]; vv[i] = v[i] - hs * a[i]; }
    double Em = total_energy(m, w, qq, vv), dE = (Ep - Em) / (2 * hs);
    EXPECT(fabs(dE - P) <= 1e-6 * Pscale, "%s: dE/dt %.10g vs power v'(tau - Dv) %.10g", name, dE, P);
    free(vv);
  }
  free(q); free(v); free(tau); free(a); free(t2); free(M); free(Md); free(J); free(ev);
  free(c); free(c0); free(qq); free(Mp); free(Mm);
  sb_work_free(w);
}

/* Energy error of an undamped, unactuated CUSP arm after 2 s. */
static double energy_drift(double h) {
  sb_cusp_arm arm;
  sb_preset_cusp_arm(&arm);
  for (int i = 0; i < SB_CUSP_SECTIONS; i++) arm.seg[i].chamber_damping = 0;
  /* Horizontal base so that gravity bends the arm. */
  double wv[3] = {0, M_PI / 2, 0};
  sb_so3_exp(wv, arm.chain.base.R);
  char err[256];
  sb_model *m = sb_model_create(&arm.chain, err, sizeof err);
  sb_state *s = sb_state_create(m);
  sb_work *w = sb_work_create(m);
  s->q[0] = 0.01; s->q[1] = -0.005; s->q[4] = 0.008;
  double E0 = total_energy(m, w, s->q, s->v);
  int steps = (int)lround(2.0 / h);
  for (int k = 0; k < steps; k++)
    if (sb_step(m, s, w, NULL, h, NULL, NULL, err, sizeof err)) {
      fprintf(stderr, "step failed: %s\n", err);
      break;
    }
  double E1 = total_energy(m, w, s->q, s->v);
  sb_work_free(w); sb_state_free(s); sb_model_free(m);
  return fabs(E1 - E0);
}

int main(void) {
  char err[256];
  zoo_chain z;
  zoo_build(&z, 1);
  sb_model *m = sb_model_create(&z.chain, err, sizeof err);
  EXPECT(m != NULL, "zoo: %s", err);
  if (m) check_model(m, "zoo");
  sb_model_free(m);
  zoo_build(&z, 0);
  m = sb_model_create(&z.chain, err, sizeof err);
  if (m) check_model(m, "soft-only");
  sb_model_free(m);
  sb_cusp_arm arm;
  sb_preset_cusp_arm(&arm);
  m = sb_model_create(&arm.chain, err, sizeof err);
  if (m) check_model(m, "cusp-arm");
  sb_model_free(m);

  /* Implicit Euler removes O(h w^2 t) of a mode's energy: the error is first
   * order once h w_max^2 T << 1 (w_max = 140 rad/s here), i.e. h < 1e-4 s;
   * at millisecond steps the fast modes are simply damped out. */
  double hs[] = {5e-5, 2.5e-5, 1.25e-5}, errs[3];
  for (int i = 0; i < 3; i++) errs[i] = energy_drift(hs[i]);
  for (int i = 0; i < 3; i++) printf("energy error after 2 s, h = %g: %.4g J\n", hs[i], errs[i]);
  for (int i = 1; i < 3; i++) {
    double order = log(errs[i - 1] / errs[i]) / log(2);
    printf("observed order h=%g -> %g: %.3f\n", hs[i - 1], hs[i], order);
    EXPECT(order > 0.85 && order < 1.15, "energy error order %.3f, expected 1 (first-order integrator)", order);
  }
  return test_report("dynamics");
}

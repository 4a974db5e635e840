/* The matrix the rigid side of the coupled contact problem solves with.
 *
 * cusp's impulse reaches MuJoCo as qfrc_passive += J^T lambda / h, and
 * MuJoCo's integrator then solves for the velocity. Euler (unless
 * mjDSBL_EULERDAMP or mjDSBL_DAMPER) and implicit / implicitfast do not
 * solve with M: they treat dof damping implicitly,
 *   v+ = v + h A^-1 (qfrc_smooth + qfrc_constraint),
 *   A  = M + h diag(b_i),  b_i = d(damping force of dof i)/d v_i at v,
 * (mj_EulerSkip's qH; the dof part of implicit's M - h qDeriv) where
 * qfrc_smooth holds qfrc_passive with its explicit -b v and cusp's J^T
 * lambda / h. So v+ = v + h A^-1 f + A^-1 J^T lambda, f every force but
 * cusp's and the constraints' (contact_build.c's rigid_free_velocity): the
 * problem's rigid body must have A as its mass matrix, or its
 * complementarity holds for a velocity MuJoCo does not produce.
 *
 * A is factored by MuJoCo's own mj_factorM (the same additions in the same
 * order as mj_EulerSkip, so the same bits as its qH) into cusp's buffers:
 * d->M's diagonal is borrowed and restored, and d->qLD / d->qLDiagInv point
 * at cusp's factor only for the length of a call, so MuJoCo's later stages
 * see their own M and factor. Not included (the problem keeps M for them):
 * implicit's other qDeriv terms (tendon damping J^T b J, velocity-dependent
 * actuator forces, fluid and flex damping, and, for implicit, the bias
 * forces' derivative), and implicitfast's gyroscopic term of standalone free
 * bodies (mjd_freeMhat); a model with sleep enabled is factored in full. */
#include "pipeline.h"

/* Does the integrator solve dof damping implicitly? */
static int damping_is_implicit(const mjModel *m) {
  if (m->opt.disableflags & mjDSBL_DAMPER) return 0;
  if (m->opt.integrator == mjINT_EULER) return !(m->opt.disableflags & mjDSBL_EULERDAMP);
  return m->opt.integrator == mjINT_IMPLICIT || m->opt.integrator == mjINT_IMPLICITFAST;
}

/* b_i as MuJoCo linearizes it: the dof's damping plus what the actuators of
 * its joint lend it (gear^2 times theirs, mj_actuatorDamping), the
 * polynomial differentiated at |v| (mjd_xPolyForce, odd), summed in
 * MuJoCo's order so that the result has its bits. */
static double damping_slope(const mjModel *m, const mjData *d, int i) {
  int jnt = m->dof_jntid[i], act = m->jnt_actuatorid[jnt];
  double poly[mjNPOLY], lend = 0;
  for (int k = 0; k < mjNPOLY; k++) poly[k] = m->dof_dampingpoly[mjNPOLY * i + k];
  for (int a = 0; a < m->nactuator && act != -1; a++) {
    if (act >= 0 && a != act) continue; /* act < -1: every actuator of the joint */
    if (act < -1 && (m->actuator_trnid[2 * a] != jnt ||
                     (m->actuator_trntype[a] != mjTRN_JOINT && m->actuator_trntype[a] != mjTRN_JOINTINPARENT)))
      continue;
    double g = m->actuator_gear[6 * m->actuator_outadr[a]], gear2 = g * g;
    lend += m->actuator_damping[a] * gear2;
    for (int k = 0; k < mjNPOLY; k++) poly[k] += m->actuator_dampingpoly[mjNPOLY * a + k] * gear2;
  }
  double x = fabs(d->qvel[i]), slope = m->dof_damping[i] + lend, xpow = 1;
  for (int k = 0; k < mjNPOLY; k++) {
    xpow *= x;
    slope += (k + 2) * poly[k] * xpow;
  }
  return slope;
}

/* d->qLD / d->qLDiagInv <-> cusp's factor of A. */
static void swap_factor(cusp_runtime *r) {
  mjData *d = r->d;
  double *ld = d->qLD, *inv = d->qLDiagInv;
  d->qLD = r->rigid_LD;
  d->qLDiagInv = r->rigid_LDiagInv;
  r->rigid_LD = ld;
  r->rigid_LDiagInv = inv;
}

void cusp_rigid_damping_factor(cusp_runtime *r, double h) {
  const mjModel *m = r->m;
  mjData *d = r->d;
  int nv = m->nv, any = 0;
  r->rigid_damped = 0;
  if (!damping_is_implicit(m)) return;
  /* the slopes wait in rigid_LDiagInv, which the factorization overwrites */
  for (int i = 0; i < nv; i++) {
    r->rigid_LDiagInv[i] = damping_slope(m, d, i);
    if (r->rigid_LDiagInv[i] != 0) any = 1;
  }
  if (!any) return; /* A = M: the problem keeps MuJoCo's factor, bit for bit */
  for (int i = 0; i < nv; i++) {
    int diag = m->M_rowadr[i] + m->M_rownnz[i] - 1;
    r->rigid_M_diag[i] = d->M[diag];
    d->M[diag] += h * r->rigid_LDiagInv[i];
  }
  swap_factor(r);
  mj_factorM(m, d);
  swap_factor(r);
  for (int i = 0; i < nv; i++) d->M[m->M_rowadr[i] + m->M_rownnz[i] - 1] = r->rigid_M_diag[i];
  r->rigid_damped = 1;
}

void cusp_rigid_solve(cusp_runtime *r, double *x, int ncol) {
  if (r->rigid_damped) swap_factor(r);
  mj_solveM(r->m, r->d, x, x, ncol);
  if (r->rigid_damped) swap_factor(r);
}

void cusp_rigid_half_solve(cusp_runtime *r, double *x, int ncol) {
  if (r->rigid_damped) swap_factor(r);
  mj_solveM2(r->m, r->d, x, x, r->sqrt_inv_d, ncol);
  if (r->rigid_damped) swap_factor(r);
}

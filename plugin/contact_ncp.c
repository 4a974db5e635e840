/* The ncp contact model (seed 003; softbody/ncp.h): every ncp contact of
 * every arm, the MuJoCo system and the touched bodies' own contacts as one
 * smoothed NCP with the exact friction cone on the assembled Delassus
 * operator, with the LCP's gap stabilization, warm-started from the last
 * step's impulses by contact identity. */
#include "contact_model.h"
#include "sb_util.h"

/* An iterate that did not converge can be anything (at h = 20 ms on
 * Scenario A one threw the arm away). The step applies SAP's answer on the
 * same problem instead, at its near-rigid limit: Newton on a convex cost,
 * bounded by the velocity change the step asked for. b: SAP's free
 * velocities on return; lam: its impulses. Returns 1 when SAP converged. */
static int sap_near_rigid(cusp_runtime *r, const cusp_contact_space *cs, double h, double *b, const double *mu,
                           double *lam) {
  int n = cs->n, n3 = 3 * n;
  double *R = lam + n3, *vhat = R + n3, *x = vhat + n3, *gamma = x + n3;
  for (int a = 0; a < n; a++) {
    double Wii[9];
    cusp_contact_space_block(r, cs, a, Wii);
    sb_sap_contact_params(h, HUGE_VAL, 0, 1e-3, sb_contact_at(r->P, r->cidx[a])->gap, Wii, R + 3 * a, vhat + 3 * a);
    memcpy(b + 3 * a, cs->u + 3 * r->cidx[a], 3 * sizeof(double)); /* SAP's own gap term replaces the LCP's */
  }
  sb_sap_options so = sb_sap_default_options();
  so.warm_start = 0;
  sb_sap_info si;
  int rc = sb_sap_solve(r->sap, n, r->cW, b, R, vhat, mu, x, gamma, &so, &si);
  memcpy(lam, gamma, n3 * sizeof(double));
  return rc == 0;
}

int cusp_ncp_impulses(cusp_runtime *r, double h, sb_contact_info *info, int *solved, double *t_col) {
  cusp_contact_space cs;
  int ready = cusp_contact_space_begin(r, CUSP_CONTACT_NCP, "ncp", r->ncp, h, 1, t_col, info, solved, &cs);
  if (ready <= 0) return ready < 0;
  const cusp_instance_config *c = cs.cfg;
  int n = cs.n, n3 = 3 * n;
  double *b = cs.vec, *mu = b + n3, *lam = mu + n;
  cusp_contact_space_gather(r, &cs, b, mu, lam);
  for (int a = 0; a < n; a++) b[3 * a + 2] += cs.gv[r->cidx[a]];
  sb_ncp_options o = sb_ncp_default_options();
  o.smoothing = c->ncp_smoothing;
  o.friction_smoothing = c->ncp_friction_smoothing;
  o.tol = c->ncp_tolerance;
  o.max_iterations = c->ncp_iterations;
  sb_ncp_info ni;
  int rc = sb_ncp_solve(r->ncp, n, r->cW, b, mu, lam, &o, &ni);
  *solved = rc == 0;
  /* SAP's converged answer is the next step's warm start too: a cold start
   * is what the NCP failed from (in the bridging scene, dropping it after
   * one transient failure left 2481 of 2501 steps to the fallback) */
  int warm = *solved;
  if (!*solved) {
    warm = sap_near_rigid(r, &cs, h, b, mu, lam);
    if (!r->message[0])
      sb_errorf(r->message, sizeof r->message, "contact ncp (%d contacts): %.150s; applied SAP's near-rigid answer",
                n, ni.message);
  }
  cusp_contact_space_end(r, &cs, lam, warm, info);
  info->residual = ni.natural_residual;
  info->lcp.status = *solved ? SB_LCP_SOLVED : SB_LCP_MAX_ITER;
  info->lcp.attempts = *solved ? 1 : 2; /* the SAP fallback counts as a fallback */
  info->lcp.iterations = ni.iterations;
  info->lcp.residual = ni.residual;
  info->lcp.time_us = ni.time_us;
  snprintf(info->lcp.message, sizeof info->lcp.message, "%.150s", ni.message);
  return 1;
}

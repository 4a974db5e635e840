/* The ncp contact model (seed 003; softbody/ncp.h): every ncp contact of
 * every arm, the MuJoCo system and the touched bodies' own contacts as one
 * smoothed NCP with the exact friction cone on the assembled Delassus
 * operator, with the LCP's gap stabilization, warm-started from the last
 * step's impulses by contact identity. */
#include "contact_model.h"
#include "sb_util.h"

int cusp_ncp_impulses(cusp_runtime *r, double h, sb_contact_info *info, int *solved, double *t_col) {
  double t0 = now_us();
  int m = cusp_contact_build(r, CUSP_CONTACT_NCP, h, t_col);
  if (m == 0) return 0;
  memset(info, 0, sizeof *info);
  info->ncontact = m;
  char err[256];
  /* one coupled solve: the first ncp arm in contact sets the parameters */
  int lead = 0;
  while (r->meta[lead].model != CUSP_CONTACT_NCP) lead++;
  const cusp_instance_config *c = &r->soft[r->meta[lead].inst].cfg;
  sb_contact_options co = sb_contact_default_options();
  co.stabilization = c->stabilization;
  const double *W, *u, *gv;
  double *lambda = r->cvec;
  memset(lambda, 0, sizeof(double) * 3 * m);
  if (sb_contact_assemble(r->P, h, &co, &W, &u, &gv, err, sizeof err) < 0 || !r->ncp) {
    sb_errorf(r->message, sizeof r->message, "contact ncp: %s", r->ncp ? err : "no workspace");
    *solved = 0;
    sb_contact_apply_impulses(r->P, lambda, c->pyramid, 0);
    cusp_contact_scatter(r, CUSP_CONTACT_NCP);
    return 1;
  }
  info->assembly_us = now_us() - t0;
  int n = cusp_movable_contacts(m, W, r->cW, r->cidx), n3 = 3 * n;
  double *b = r->cvec + 3 * m, *mu = b + n3, *lam = mu + n;
  for (int a = 0; a < n; a++) {
    int i = r->cidx[a];
    const sb_contact *sc = sb_contact_at(r->P, i);
    memcpy(b + 3 * a, u + 3 * i, 3 * sizeof(double));
    b[3 * a + 2] += gv[i];
    mu[a] = sc->friction;
    sb_contact_warm_impulse(r->P, sc->id, lam + 3 * a);
  }
  sb_ncp_options o = sb_ncp_default_options();
  o.smoothing = c->ncp_smoothing;
  o.friction_smoothing = c->ncp_friction_smoothing;
  o.tol = c->ncp_tolerance;
  o.max_iterations = c->ncp_iterations;
  sb_ncp_info ni;
  int rc = sb_ncp_solve(r->ncp, n, r->cW, b, mu, lam, &o, &ni);
  *solved = rc == 0;
  if (!*solved) {
    /* An iterate that did not converge can be anything (at h = 20 ms on
     * Scenario A one threw the arm away). The step applies SAP's answer on
     * the same problem instead, at its near-rigid limit: Newton on a convex
     * cost, bounded by the velocity change the step asked for. */
    double *R = lam + n3, *vhat = R + n3, *x = vhat + n3, *gamma = x + n3;
    for (int a = 0; a < n; a++) {
      double Wii[9];
      for (int q = 0; q < 3; q++)
        for (int p = 0; p < 3; p++) Wii[3 * q + p] = r->cW[(size_t)(3 * a + q) * n3 + 3 * a + p];
      sb_sap_contact_params(h, HUGE_VAL, 0, 1e-3, sb_contact_at(r->P, r->cidx[a])->gap, Wii, R + 3 * a, vhat + 3 * a);
      memcpy(b + 3 * a, u + 3 * r->cidx[a], 3 * sizeof(double)); /* SAP's own gap term replaces the LCP's */
    }
    sb_sap_options so = sb_sap_default_options();
    so.warm_start = 0;
    sb_sap_info si;
    sb_sap_solve(r->sap, n, r->cW, b, R, vhat, mu, x, gamma, &so, &si);
    memcpy(lam, gamma, n3 * sizeof(double));
    if (!r->message[0])
      sb_errorf(r->message, sizeof r->message, "contact ncp (%d contacts): %.150s; applied SAP's near-rigid answer",
                n, ni.message);
  }
  int finite = all_finite(lam, n3); /* never a non-finite impulse */
  for (int a = 0; a < n && finite; a++) memcpy(lambda + 3 * r->cidx[a], lam + 3 * a, 3 * sizeof(double));
  sb_contact_apply_impulses(r->P, lambda, c->pyramid, *solved);
  cusp_contact_scatter(r, CUSP_CONTACT_NCP);
  info->nkept = n;
  info->nvar = n3;
  info->residual = ni.natural_residual;
  info->lcp.status = *solved ? SB_LCP_SOLVED : SB_LCP_MAX_ITER;
  info->lcp.attempts = *solved ? 1 : 2; /* the SAP fallback counts as a fallback */
  info->lcp.iterations = ni.iterations;
  info->lcp.residual = ni.residual;
  info->lcp.time_us = ni.time_us;
  snprintf(info->lcp.message, sizeof info->lcp.message, "%.150s", ni.message);
  info->time_us = now_us() - t0;
  return 1;
}

/* The sap contact model (seed 001; softbody/sap.h): every sap contact of
 * every arm, the MuJoCo system and the touched bodies' own contacts as one
 * convex SAP problem on the assembled Delassus operator, warm-started from
 * the last step's impulses by contact identity. */
#include "contact_model.h"
#include "sb_util.h"

int cusp_sap_impulses(cusp_runtime *r, double h, sb_contact_info *info, int *solved, double *t_col) {
  cusp_contact_space cs;
  int ready = cusp_contact_space_begin(r, CUSP_CONTACT_SAP, "sap", r->sap, h, 0, t_col, info, solved, &cs);
  if (ready <= 0) return ready < 0;
  const cusp_instance_config *c = cs.cfg;
  int n = cs.n, n3 = 3 * n;
  double *vf = cs.vec, *R = vf + n3, *vhat = R + n3, *mu = vhat + n3, *x = mu + n, *gamma = x + n3;
  cusp_contact_space_gather(r, &cs, vf, mu, x); /* x = gamma at the optimum */
  for (int a = 0; a < n; a++) {
    double Wii[9];
    cusp_contact_space_block(r, &cs, a, Wii);
    double gap = sb_contact_at(r->P, r->cidx[a])->gap;
    sb_sap_contact_params(h, c->sap_stiffness, c->sap_dissipation, c->sap_sigma, gap, Wii, R + 3 * a, vhat + 3 * a);
  }
  sb_sap_options o = sb_sap_default_options();
  o.rel_tol = c->sap_tolerance;
  o.max_iterations = c->sap_iterations;
  sb_sap_info si;
  int rc = sb_sap_solve(r->sap, n, r->cW, vf, R, vhat, mu, x, gamma, &o, &si);
  /* a solve that stopped early still lowered the cost: its impulses are bounded */
  *solved = rc == 0;
  if (!*solved && !r->message[0]) sb_errorf(r->message, sizeof r->message, "contact sap (%d contacts): %s", n, si.message);
  cusp_contact_space_end(r, &cs, gamma, *solved, info);
  info->residual = si.gradient;
  info->lcp.status = *solved ? SB_LCP_SOLVED : SB_LCP_MAX_ITER;
  info->lcp.attempts = 1;
  info->lcp.iterations = si.iterations;
  info->lcp.residual = si.gradient;
  info->lcp.time_us = si.time_us;
  snprintf(info->lcp.message, sizeof info->lcp.message, "%s", si.message);
  return 1;
}

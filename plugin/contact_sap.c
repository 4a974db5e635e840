/* The sap contact model (seed 001; softbody/sap.h): every sap contact of
 * every arm, the MuJoCo system and the touched bodies' own contacts as one
 * convex SAP problem on the assembled Delassus operator, warm-started from
 * the last step's impulses by contact identity. */
#include "contact_model.h"
#include "sb_util.h"

int cusp_sap_impulses(cusp_runtime *r, double h, sb_contact_info *info, int *solved, double *t_col) {
  double t0 = now_us();
  int m = cusp_contact_build(r, CUSP_CONTACT_SAP, h, t_col);
  if (m == 0) return 0;
  memset(info, 0, sizeof *info);
  info->ncontact = m;
  char err[256];
  /* one coupled solve: the first sap arm in contact sets the parameters */
  int lead = 0;
  while (r->meta[lead].model != CUSP_CONTACT_SAP) lead++;
  const cusp_instance_config *c = &r->soft[r->meta[lead].inst].cfg;
  const double *W, *u;
  double *lambda = r->cvec;
  memset(lambda, 0, sizeof(double) * 3 * m);
  if (sb_contact_assemble(r->P, h, NULL, &W, &u, NULL, err, sizeof err) < 0 || !r->sap) {
    sb_errorf(r->message, sizeof r->message, "contact sap: %s", r->sap ? err : "no workspace");
    *solved = 0;
    sb_contact_apply_impulses(r->P, lambda, c->pyramid, 0);
    cusp_contact_scatter(r, CUSP_CONTACT_SAP);
    return 1;
  }
  info->assembly_us = now_us() - t0;
  int n = cusp_movable_contacts(m, W, r->cW, r->cidx), n3 = 3 * n;
  double *vf = r->cvec + 3 * m, *R = vf + n3, *vhat = R + n3, *mu = vhat + n3, *x = mu + n, *gamma = x + n3;
  for (int a = 0; a < n; a++) {
    int i = r->cidx[a];
    const sb_contact *sc = sb_contact_at(r->P, i);
    double Wii[9];
    for (int q = 0; q < 3; q++)
      for (int p = 0; p < 3; p++) Wii[3 * q + p] = r->cW[(size_t)(3 * a + q) * n3 + 3 * a + p];
    sb_sap_contact_params(h, c->sap_stiffness, c->sap_dissipation, c->sap_sigma, sc->gap, Wii, R + 3 * a,
                          vhat + 3 * a);
    mu[a] = sc->friction;
    memcpy(vf + 3 * a, u + 3 * i, 3 * sizeof(double));
    sb_contact_warm_impulse(r->P, sc->id, x + 3 * a); /* x = gamma at the optimum */
  }
  sb_sap_options o = sb_sap_default_options();
  o.rel_tol = c->sap_tolerance;
  o.max_iterations = c->sap_iterations;
  sb_sap_info si;
  int rc = sb_sap_solve(r->sap, n, r->cW, vf, R, vhat, mu, x, gamma, &o, &si);
  /* a solve that stopped early still lowered the cost: its impulses are bounded */
  int finite = all_finite(gamma, n3);
  for (int a = 0; a < n && finite; a++) memcpy(lambda + 3 * r->cidx[a], gamma + 3 * a, 3 * sizeof(double));
  *solved = rc == 0;
  if (!*solved && !r->message[0]) sb_errorf(r->message, sizeof r->message, "contact sap (%d contacts): %s", n, si.message);
  sb_contact_apply_impulses(r->P, lambda, c->pyramid, *solved);
  cusp_contact_scatter(r, CUSP_CONTACT_SAP);
  info->nkept = n;
  info->nvar = n3;
  info->residual = si.gradient;
  info->lcp.status = *solved ? SB_LCP_SOLVED : SB_LCP_MAX_ITER;
  info->lcp.attempts = 1;
  info->lcp.iterations = si.iterations;
  info->lcp.residual = si.gradient;
  info->lcp.time_us = si.time_us;
  snprintf(info->lcp.message, sizeof info->lcp.message, "%s", si.message);
  info->time_us = now_us() - t0;
  return 1;
}

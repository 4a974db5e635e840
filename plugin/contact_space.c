/* What the models that solve on the Delassus operator in contact space (sap,
 * ncp) do alike before and after their solver (contact_model.h): the coupled
 * problem built and assembled, its movable contacts, and the impulses back
 * into the arms, the MuJoCo system and the reports. */
#include "contact_model.h"
#include "sb_util.h"

int cusp_contact_space_begin(cusp_runtime *r, cusp_contact_kind model, const char *name, const void *workspace,
                             double h, int gap_terms, double *t_col, sb_contact_info *info, int *solved,
                             cusp_contact_space *cs) {
  memset(cs, 0, sizeof *cs);
  cs->t0 = now_us();
  cs->model = model;
  cs->m = cusp_contact_build(r, model, h, t_col);
  if (cs->m == 0) return 0;
  memset(info, 0, sizeof *info);
  info->ncontact = cs->m;
  /* one coupled solve: the first arm of the model in contact sets the parameters */
  int lead = 0;
  while (r->meta[lead].model != model) lead++;
  cs->cfg = &r->soft[r->meta[lead].inst].cfg;
  cs->lambda = r->cvec;
  memset(cs->lambda, 0, sizeof(double) * 3 * cs->m);
  sb_contact_options co = sb_contact_default_options();
  co.stabilization = cs->cfg->stabilization;
  co.push_speed = cs->cfg->push_speed;
  const double *W;
  char err[256];
  if (sb_contact_assemble(r->P, h, gap_terms ? &co : NULL, &W, &cs->u, gap_terms ? &cs->gv : NULL, err, sizeof err) < 0 ||
      !workspace) {
    sb_errorf(r->message, sizeof r->message, "contact %s: %s", name, workspace ? err : "no workspace");
    *solved = 0;
    sb_contact_apply_impulses(r->P, cs->lambda, cs->cfg->pyramid, 0);
    cusp_contact_scatter(r, model);
    return -1;
  }
  info->assembly_us = now_us() - cs->t0;
  cs->n = cusp_movable_contacts(cs->m, W, r->cW, r->cidx);
  cs->vec = r->cvec + 3 * cs->m;
  return 1;
}

void cusp_contact_space_block(const cusp_runtime *r, const cusp_contact_space *cs, int a, double Wii[9]) {
  int n3 = 3 * cs->n;
  for (int q = 0; q < 3; q++)
    for (int p = 0; p < 3; p++) Wii[3 * q + p] = r->cW[(size_t)(3 * a + q) * n3 + 3 * a + p];
}

void cusp_contact_space_gather(const cusp_runtime *r, const cusp_contact_space *cs, double *u, double *mu,
                               double *warm) {
  for (int a = 0; a < cs->n; a++) {
    int i = r->cidx[a];
    const sb_contact *sc = sb_contact_at(r->P, i);
    memcpy(u + 3 * a, cs->u + 3 * i, 3 * sizeof(double));
    mu[a] = sc->friction;
    sb_contact_warm_impulse(r->P, sc->id, warm + 3 * a);
  }
}

void cusp_contact_space_end(cusp_runtime *r, const cusp_contact_space *cs, const double *impulse, int keep_warm,
                            sb_contact_info *info) {
  int n = cs->n;
  /* never a non-finite impulse: a solve that produced one applies none */
  if (all_finite(impulse, 3 * n))
    for (int a = 0; a < n; a++) memcpy(cs->lambda + 3 * r->cidx[a], impulse + 3 * a, 3 * sizeof(double));
  sb_contact_apply_impulses(r->P, cs->lambda, cs->cfg->pyramid, keep_warm);
  cusp_contact_scatter(r, cs->model);
  info->nkept = n;
  info->nvar = 3 * n;
  info->time_us = now_us() - cs->t0;
}

/* The lcp contact model (paper 000): every lcp contact of every arm, the
 * MuJoCo system as one body and the touched bodies' own contacts in one
 * velocity-level LCP with the prepared soft step (gathered by
 * contact_build.c), conditioned and solved by softbody/contact.h. The rigid
 * side's total impulse goes back to MuJoCo as qfrc_passive += J_r^T lambda / h;
 * MuJoCo's own solver then finds those contacts already at rest. */
#include "contact_model.h"
#include "sb_util.h"

static sb_contact_options options_of(const cusp_instance_config *c) {
  sb_contact_options o = sb_contact_default_options();
  o.directions = c->pyramid;
  o.align_friction = c->align_friction;
  o.rank_selection = (c->conditioning & CUSP_COND_QR) != 0;
  o.rank_tol = c->eps_rank;
  o.ruiz_iterations = (c->conditioning & CUSP_COND_RUIZ) ? c->ruiz_iterations : 0;
  o.tikhonov = (c->conditioning & CUSP_COND_TIKHONOV) ? c->tikhonov : 0;
  o.stabilization = c->stabilization;
  o.surface_layer = c->surface_layer;
  o.push_speed = c->push_speed;
  o.lcp.warm_lemke = c->warm_lemke;
  o.lcp.lemke_form = c->lemke_form;
  o.lcp_from_operator = c->lcp_matrix;
  o.lcp.nchain = 0;
  o.lcp.chain[o.lcp.nchain++] = c->solver;
  for (int s = 0; s < SB_LCP_NSOLVERS && c->fallback; s++)
    if (s != (int)c->solver) o.lcp.chain[o.lcp.nchain++] = (sb_lcp_solver)s;
  return o;
}

/* The coupled problem, then assembly, conditioning and the solver chain; the
 * results into the arms, the rigid system and r->meta. */
int cusp_lcp_impulses(cusp_runtime *r, double h, sb_contact_info *info, int *solved, double *t_col) {
  if (cusp_contact_build(r, CUSP_CONTACT_LCP, h, t_col) == 0) return 0;
  /* one coupled solve: the first LCP instance in contact sets its options
   * (with no contact, the first one holding a point) */
  int lead = -1;
  for (int c = 0; c < r->nmeta && lead < 0; c++)
    if (r->meta[c].model == CUSP_CONTACT_LCP && r->meta[c].inst >= 0) lead = r->meta[c].inst;
  for (int i = 0; i < r->ninst && lead < 0; i++)
    if (r->soft[i].cfg.contact == CUSP_CONTACT_LCP && r->soft[i].nheld > 0) lead = i;
  if (lead < 0) lead = 0;
  const sb_contact_options opt = options_of(&r->soft[lead].cfg);
  char err[256];
  int rc = sb_contact_solve(r->P, h, &opt, info, err, sizeof err);
  *solved = rc == 0 && info->lcp.status == SB_LCP_SOLVED;
  /* an earlier stage's words (an arm inside a solid) say more than the solve that follows from them */
  if (!*solved && !r->message[0]) sb_errorf(r->message, sizeof r->message, "contact solve: %s", err);
  cusp_contact_scatter(r, CUSP_CONTACT_LCP);
  cusp_ends_scatter(r, CUSP_CONTACT_LCP);
  return 1;
}

/* The QPCC force controller (press.h). */
#include "press.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct plan_press {
  plan_press_params prm;
  sb_model *model;
  sb_work *work;
  int n, nx;
  /* the QPCC's arrays, sized at creation */
  double *M, *A, *f, *N, *D, *H, *ulb, *uub, *x, *e;
  double Hfn, gfn;
};

plan_press_params plan_press_default_params(void) {
  return (plan_press_params){.mu = 0.6, .d = 4, .w_force = 1, .w_u = 1e-4, .w_v = 1e-2, .u_lb = -100, .u_ub = 100,
                             .stabilization = 0.2};
}

plan_press *plan_press_create(const sb_chain_params *chain, const plan_press_params *prm, char *error, int error_size) {
  if (prm->d < 3 || prm->d > 16 || !(prm->mu >= 0) || !(prm->w_force > 0) || !(prm->w_u >= 0) ||
      !(prm->w_v >= 0) || !(prm->u_lb < prm->u_ub)) {
    snprintf(error, error_size,
             "press: bad parameters (d = %d in 3..16, mu = %g >= 0, w_force = %g > 0, w_u = %g >= 0, "
             "w_v = %g >= 0, u_lb = %g < u_ub = %g)", prm->d, prm->mu, prm->w_force, prm->w_u, prm->w_v,
             prm->u_lb, prm->u_ub);
    return NULL;
  }
  plan_press *c = calloc(1, sizeof *c);
  if (!c) { snprintf(error, error_size, "press: out of memory"); return NULL; }
  c->prm = *prm;
  c->model = sb_model_create(chain, error, error_size);
  if (!c->model) { free(c); return NULL; }
  c->work = sb_work_create(c->model);
  int n = c->n = c->model->n, d = prm->d;
  c->nx = 2 * n + d + 2;
  size_t sz = (size_t)n * n * 2 + n + n + (size_t)n * d + (size_t)(2 * n) * (2 * n) + 2 * n + (size_t)c->nx + n;
  c->M = calloc(sz, sizeof(double));
  if (!c->work || !c->M) { snprintf(error, error_size, "press: out of memory"); plan_press_free(c); return NULL; }
  c->A = c->M + (size_t)n * n;
  c->f = c->A + (size_t)n * n;
  c->N = c->f + n;
  c->D = c->N + n;
  c->H = c->D + (size_t)n * d;
  c->ulb = c->H + (size_t)(2 * n) * (2 * n);
  c->uub = c->ulb + n;
  c->x = c->uub + n;
  c->e = c->x + c->nx;
  for (int i = 0; i < n; i++) {
    c->ulb[i] = prm->u_lb;
    c->uub[i] = prm->u_ub;
    c->H[(size_t)i * 2 * n + i] = prm->w_v;
    c->H[(size_t)(n + i) * 2 * n + n + i] = prm->w_u;
  }
  return c;
}

void plan_press_free(plan_press *c) {
  if (!c) return;
  sb_work_free(c->work);
  sb_model_free(c->model);
  free(c->M);
  free(c);
}

static void cross3(const double a[3], const double b[3], double o[3]) {
  o[0] = a[1] * b[2] - a[2] * b[1];
  o[1] = a[2] * b[0] - a[0] * b[2];
  o[2] = a[0] * b[1] - a[1] * b[0];
}

/* Adds J^T F for a world force F at the world point x of the frame (seg, s) to Q. */
static void point_force(plan_press *c, int seg, double s, const double frame_p[3], const double x[3],
                        const double F[3], double *Q) {
  double r[3] = {x[0] - frame_p[0], x[1] - frame_p[1], x[2] - frame_p[2]}, mo[3];
  cross3(r, F, mo);
  sb_add_world_wrench(c->model, c->work, seg, s, F, mo, Q);
}

plan_qpcc_status plan_press_control(plan_press *c, const double *q, const double *v, double h, int seg,
                                    double s, const double point[3], const double normal[3], double gap,
                                    double f_cmd, double *u, double *fn, plan_qpcc_info *info) {
  const sb_model *m = c->model;
  int n = c->n, d = c->prm.d;
  memset(info, 0, sizeof *info);
  double nn = sqrt(normal[0] * normal[0] + normal[1] * normal[1] + normal[2] * normal[2]);
  if (!(h > 0) || !(nn > 0) || seg < 0 || seg >= m->nseg || !isfinite(f_cmd) || !isfinite(gap)) {
    snprintf(info->message, sizeof info->message,
             "press: h = %g, |normal| = %g, seg = %d of %d, f_cmd = %g, gap = %g", h, nn, seg, m->nseg, f_cmd, gap);
    info->status = PLAN_QPCC_BAD_INPUT;
    return info->status;
  }
  sb_kinematics(m, c->work, q, v);
  sb_mass_matrix(m, c->work, c->M);
  sb_bias(m, c->work, c->e);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      c->M[i * n + j] += h * m->D[i * n + j] + h * h * m->K[i * n + j];
      c->e[i] += m->K[i * n + j] * (q[j] + h * v[j]) + m->D[i * n + j] * v[j];
    }
  for (int i = 0; i < n; i++) {
    double s0 = 0;
    for (int j = 0; j < n; j++) s0 += c->M[i * n + j] * v[j];
    c->f[i] = s0 - h * c->e[i];
    for (int j = 0; j < n; j++) c->A[i * n + j] = i == j ? h : 0;
  }
  /* the contact's directions: the normal and d tangents around it */
  sb_pose g;
  sb_point_kinematics(m, c->work, seg, s, &g, NULL, NULL, NULL);
  double nz[3] = {normal[0] / nn, normal[1] / nn, normal[2] / nn}, t1[3], t2[3];
  double ref[3] = {fabs(nz[0]) < 0.9 ? 1 : 0, fabs(nz[0]) < 0.9 ? 0 : 1, 0};
  cross3(nz, ref, t1);
  double t1n = sqrt(t1[0] * t1[0] + t1[1] * t1[1] + t1[2] * t1[2]);
  for (int i = 0; i < 3; i++) t1[i] /= t1n;
  cross3(nz, t1, t2);
  double *col = c->x;  /* scratch, n entries */
  memset(col, 0, sizeof(double) * n);
  point_force(c, seg, s, g.p, point, nz, col);
  for (int i = 0; i < n; i++) c->N[i] = col[i];
  for (int k = 0; k < d; k++) {
    double th = 2 * M_PI * k / d, dir[3];
    for (int i = 0; i < 3; i++) dir[i] = cos(th) * t1[i] + sin(th) * t2[i];
    memset(col, 0, sizeof(double) * n);
    point_force(c, seg, s, g.p, point, dir, col);
    for (int i = 0; i < n; i++) c->D[i * d + k] = col[i];
  }
  double Hfn = c->prm.w_force, gfn = -c->prm.w_force * f_cmd, mu = c->prm.mu;
  double bn = (gap >= 0 ? gap : c->prm.stabilization * gap) / h;
  plan_qpcc p = {.n = n, .nu = n, .nc = 1, .d = d, .h = h, .M = c->M, .A = c->A, .f = c->f, .N = c->N,
                 .D = c->D, .mu = &mu, .u_lb = c->ulb, .u_ub = c->uub, .H = c->H, .g = NULL,
                 .Hfn = &Hfn, .gfn = &gfn, .bn = &bn};
  plan_qpcc_options opt = plan_qpcc_default_options();
  plan_qpcc_status st = plan_qpcc_solve(&p, &opt, c->x, NULL, NULL, info);
  if (st == PLAN_QPCC_SOLVED || st == PLAN_QPCC_MAX_QPS) {
    memcpy(u, c->x + n, sizeof(double) * n);
    if (fn) *fn = c->x[2 * n];
  }
  return st;
}

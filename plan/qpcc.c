/* plan_qpcc_solve: seed 002's Algorithms 1 (best-first search over QPs) and 2
 * (pivoting the complementarity pairs of each contact). */
#include "qpcc.h"

#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lcp.h"

int plan_qpcc_nx(const plan_qpcc *p) { return p->n + p->nu + p->nc * (p->d + 2); }
int plan_qpcc_npairs(const plan_qpcc *p) { return p->nc * (p->d + 2); }

plan_qpcc_options plan_qpcc_default_options(void) {
  return (plan_qpcc_options){.max_qps = 64, .zero_tol = 1e-6};
}

const char *plan_qpcc_status_name(plan_qpcc_status s) {
  switch (s) {
    case PLAN_QPCC_SOLVED: return "solved";
    case PLAN_QPCC_MAX_QPS: return "max_qps";
    case PLAN_QPCC_NO_FEASIBLE: return "no_feasible_qp";
    case PLAN_QPCC_BAD_INPUT: return "bad_input";
  }
  return "unknown";
}

/* Offsets of the blocks of x. */
typedef struct { int v, u, fn, ft, lam, nx, npairs; } qpcc_layout;

static qpcc_layout layout_of(const plan_qpcc *p) {
  qpcc_layout L;
  L.v = 0;
  L.u = p->n;
  L.fn = L.u + p->nu;
  L.ft = L.fn + p->nc;
  L.lam = L.ft + p->nc * p->d;
  L.nx = L.lam + p->nc;
  L.npairs = p->nc * (p->d + 2);
  return L;
}

/* Index in x of the variable of pair k (normal pairs, then friction, then cone). */
static int pair_variable(const plan_qpcc *p, const qpcc_layout *L, int k) {
  if (k < p->nc) return L->fn + k;
  if (k < p->nc + p->nc * p->d) return L->ft + (k - p->nc);
  return L->lam + (k - p->nc - p->nc * p->d);
}

/* Row k of the condition matrix C (npairs x nx): the pair's condition is C_k x. */
static void condition_row(const plan_qpcc *p, const qpcc_layout *L, int k, double *row) {
  int n = p->n, nc = p->nc, d = p->d;
  memset(row, 0, sizeof(double) * L->nx);
  if (k < nc) {
    for (int j = 0; j < n; j++) row[L->v + j] = p->N[j * nc + k];
  } else if (k < nc + nc * d) {
    int c = k - nc, i = c / d;
    for (int j = 0; j < n; j++) row[L->v + j] = p->D[j * nc * d + c];
    row[L->lam + i] = 1;
  } else {
    int i = k - nc - nc * d;
    row[L->fn + i] = p->mu[i];
    for (int j = 0; j < d; j++) row[L->ft + i * d + j] = -1;
  }
}

/* The constant of pair k's condition: bn for the normal pairs. */
static double condition_offset(const plan_qpcc *p, int k) {
  return k < p->nc && p->bn ? p->bn[k] : 0;
}

void plan_qpcc_conditions(const plan_qpcc *p, const double *x, double *cond) {
  qpcc_layout L = layout_of(p);
  double *row = malloc(sizeof(double) * L.nx);
  if (!row) { for (int k = 0; k < L.npairs; k++) cond[k] = NAN; return; }
  for (int k = 0; k < L.npairs; k++) {
    condition_row(p, &L, k, row);
    double s = 0;
    for (int j = 0; j < L.nx; j++) s += row[j] * x[j];
    cond[k] = s + condition_offset(p, k);
  }
  free(row);
}

static const char *qpcc_check(const plan_qpcc *p, char *buf, size_t len) {
  if (p->n < 1 || p->nu < 0 || p->nc < 0 || p->d < 0 || (p->nc > 0 && p->d < 1)) {
    snprintf(buf, len, "qpcc: n = %d, nu = %d, nc = %d, d = %d (need n >= 1, d >= 1 with contacts)",
             p->n, p->nu, p->nc, p->d);
    return buf;
  }
  if (!(p->h > 0) || !isfinite(p->h)) { snprintf(buf, len, "qpcc: h = %g (need > 0)", p->h); return buf; }
  if (!p->M || !p->f || (p->nu && (!p->A || !p->u_lb || !p->u_ub)) || (p->nc && (!p->N || !p->D || !p->mu)))
    return "qpcc: a required array (M, f, A, u bounds, N, D, mu) is NULL";
  for (int i = 0; i < p->nc; i++)
    if (!(p->mu[i] >= 0) || !isfinite(p->mu[i])) { snprintf(buf, len, "qpcc: mu[%d] = %g (need >= 0)", i, p->mu[i]); return buf; }
  return NULL;
}

/* The QP of one CCSpec, in buffers owned by the solver. */
typedef struct {
  qpcc_layout L;
  double *H, *c, *A, *a_lo, *a_hi, *x_lo, *x_hi;
  plan_qp qp;
} qp_builder;

static int builder_init(qp_builder *b, const plan_qpcc *p) {
  b->L = layout_of(p);
  int nx = b->L.nx, m = p->n + b->L.npairs, nvu = p->n + p->nu;
  double *all = calloc((size_t)nx * nx + nx + (size_t)m * nx + 2 * m + 2 * nx, sizeof(double));
  if (!all) return -1;
  b->H = all;
  b->c = b->H + (size_t)nx * nx;
  b->A = b->c + nx;
  b->a_lo = b->A + (size_t)m * nx;
  b->a_hi = b->a_lo + m;
  b->x_lo = b->a_hi + m;
  b->x_hi = b->x_lo + nx;
  for (int i = 0; i < nvu; i++) {
    for (int j = 0; j < nvu && p->H; j++) b->H[i * nx + j] = p->H[i * nvu + j];
    b->c[i] = p->g ? p->g[i] : 0;
  }
  const qpcc_layout *L = &b->L;
  for (int i = 0; i < p->nc; i++) {
    if (p->Hfn) b->H[(size_t)(L->fn + i) * nx + L->fn + i] = p->Hfn[i];
    if (p->gfn) b->c[L->fn + i] = p->gfn[i];
  }
  /* dynamics rows: M v - A u - h N fn - h D ft = f */
  int n = p->n, nc = p->nc, nd = p->nc * p->d;
  for (int r = 0; r < n; r++) {
    double *row = b->A + (size_t)r * nx;
    for (int j = 0; j < n; j++) row[L->v + j] = p->M[r * n + j];
    for (int j = 0; j < p->nu; j++) row[L->u + j] = -p->A[r * p->nu + j];
    for (int j = 0; j < nc; j++) row[L->fn + j] = -p->h * p->N[r * nc + j];
    for (int j = 0; j < nd; j++) row[L->ft + j] = -p->h * p->D[r * nd + j];
    b->a_lo[r] = b->a_hi[r] = p->f[r];
  }
  for (int k = 0; k < L->npairs; k++) condition_row(p, L, k, b->A + (size_t)(n + k) * nx);
  for (int j = 0; j < nx; j++) { b->x_lo[j] = -PLAN_INF; b->x_hi[j] = PLAN_INF; }
  for (int j = 0; j < p->nu; j++) { b->x_lo[L->u + j] = p->u_lb[j]; b->x_hi[L->u + j] = p->u_ub[j]; }
  b->qp = (plan_qp){.nx = nx, .m = m, .H = b->H, .c = b->c, .A = b->A, .a_lo = b->a_lo,
                    .a_hi = b->a_hi, .x_lo = b->x_lo, .x_hi = b->x_hi};
  return 0;
}

/* spec[k] = 1: variable = 0, condition >= 0; spec[k] = 0: variable >= 0, condition = 0. */
static void builder_apply(qp_builder *b, const plan_qpcc *p, const unsigned char *spec) {
  for (int k = 0; k < b->L.npairs; k++) {
    int var = pair_variable(p, &b->L, k), row = p->n + k;
    b->x_lo[var] = 0;
    b->x_hi[var] = spec[k] ? 0 : PLAN_INF;
    double off = condition_offset(p, k);
    b->a_lo[row] = -off;
    b->a_hi[row] = spec[k] ? PLAN_INF : -off;
  }
}

/* Static contact (seed 002): every contact pushes (fn >= 0, N^T v = 0), sticks
 * (ft >= 0, D^T v + E lambda = 0) with lambda = 0 inside the cone. */
static void static_contact_spec(const plan_qpcc *p, unsigned char *spec) {
  int nc = p->nc, nd = p->nc * p->d;
  for (int k = 0; k < nc + nd; k++) spec[k] = 0;
  for (int i = 0; i < nc; i++) spec[nc + nd + i] = 1;
}

/* The mixed LCP of the dynamics and the pairs with u = 0, reduced to an LCP in
 * (fn, ft, lambda) through M^-1 (LAPACKE_dgesv), solved by cusp's LCP
 * solvers; the spec takes the side that is zero. Returns 0 or -1. */
static int mlcp_spec(const plan_qpcc *p, unsigned char *spec, char *msg, size_t len) {
  int n = p->n, nc = p->nc, nd = nc * p->d, nz = nc * (p->d + 2), nr = 1 + nc + nd;
  double *rhs = malloc(sizeof(double) * ((size_t)n * n + (size_t)n * nr + (size_t)nz * nz + 3 * nz));
  lapack_int *piv = malloc(sizeof(lapack_int) * n);
  sb_lcp_work *work = sb_lcp_work_create(nz);
  int rc = -1;
  if (!rhs || !piv || !work) { snprintf(msg, len, "qpcc: out of memory for the MLCP guess"); goto done; }
  double *Mc = rhs + (size_t)n * nr, *W = Mc + (size_t)n * n, *q = W + (size_t)nz * nz, *z = q + nz, *w = z + nz;
  /* columns of rhs: f, h N, h D (row-major n x nr) */
  for (int r = 0; r < n; r++) {
    rhs[r * nr] = p->f[r];
    for (int j = 0; j < nc; j++) rhs[r * nr + 1 + j] = p->h * p->N[r * nc + j];
    for (int j = 0; j < nd; j++) rhs[r * nr + 1 + nc + j] = p->h * p->D[r * nd + j];
  }
  memcpy(Mc, p->M, sizeof(double) * n * n);
  lapack_int info = LAPACKE_dgesv(LAPACK_ROW_MAJOR, n, nr, Mc, n, piv, rhs, nr);
  if (info != 0) { snprintf(msg, len, "qpcc: M is singular (dgesv info %d)", (int)info); goto done; }
  /* Conditions = C_v (Minv f + Minv h [N D] [fn; ft]) + C_z z, with C's rows from condition_row */
  qpcc_layout L = layout_of(p);
  double *row = malloc(sizeof(double) * L.nx);
  if (!row) { snprintf(msg, len, "qpcc: out of memory"); goto done; }
  for (int k = 0; k < nz; k++) {
    condition_row(p, &L, k, row);
    double qk = 0;
    for (int j = 0; j < n; j++) qk += row[j] * rhs[j * nr];
    q[k] = qk + condition_offset(p, k);
    for (int c = 0; c < nz; c++) {
      double wkc = row[L.fn + c];  /* direct dependence on (fn, ft, lambda) */
      if (c < nc + nd)
        for (int j = 0; j < n; j++) wkc += row[j] * rhs[j * nr + 1 + c];
      W[c * nz + k] = wkc;  /* column-major for sb_lcp */
    }
  }
  free(row);
  sb_lcp_options o = sb_lcp_default_options();
  o.tol = 1e-10;
  sb_lcp_info li;
  memset(z, 0, sizeof(double) * nz);
  if (sb_lcp_solve(work, nz, W, q, z, w, &o, &li) != SB_LCP_SOLVED) {
    snprintf(msg, len, "qpcc: the MLCP with u = 0 was not solved (%s: %.100s)", sb_lcp_status_name(li.status), li.message);
    goto done;
  }
  for (int k = 0; k < nz; k++) spec[k] = z[k] <= w[k];
  rc = 0;
done:
  free(rhs);
  free(piv);
  sb_lcp_work_free(work);
  return rc;
}

typedef struct {
  unsigned char *spec;
  double *x;
  double fval;
} qp_node;

typedef struct {
  qp_node *v;
  int len, cap;
} node_list;

static int list_find(const node_list *l, const unsigned char *spec, int np) {
  for (int i = 0; i < l->len; i++)
    if (!memcmp(l->v[i].spec, spec, np)) return i;
  return -1;
}

static int list_push(node_list *l, qp_node node) {
  if (l->len == l->cap) {
    int cap = l->cap ? 2 * l->cap : 16;
    qp_node *v = realloc(l->v, sizeof(qp_node) * cap);
    if (!v) return -1;
    l->v = v;
    l->cap = cap;
  }
  l->v[l->len++] = node;
  return 0;
}

static void node_free(qp_node *n) { free(n->spec); free(n->x); }

typedef struct {
  const plan_qpcc *p;
  qp_builder b;
  node_list queue, visited;
  int solved;
} qpcc_search;

/* Solves the QP of spec; a feasible one joins the queue. Returns -1 on out of memory. */
static int solve_and_enqueue(qpcc_search *s, const unsigned char *spec) {
  int np = s->b.L.npairs, nx = s->b.L.nx;
  if (list_find(&s->visited, spec, np) >= 0 || list_find(&s->queue, spec, np) >= 0) return 0;
  qp_node node = {.spec = malloc(np ? np : 1), .x = calloc(nx, sizeof(double))};
  if (!node.spec || !node.x) { node_free(&node); return -1; }
  memcpy(node.spec, spec, np);
  builder_apply(&s->b, s->p, spec);
  plan_qp_info qi;
  plan_qp_solve(&s->b.qp, node.x, &qi);
  s->solved++;
  if (qi.status != PLAN_QP_SOLVED) { node_free(&node); return 0; }
  node.fval = qi.fval;
  return list_push(&s->queue, node);
}

/* Algorithm 2: the children of a visited QP, pivoting each contact's pairs whose two sides vanish. */
static int enqueue_children(qpcc_search *s, const qp_node *qp, double tol, unsigned char *child,
                            double *cond) {
  const plan_qpcc *p = s->p;
  const qpcc_layout *L = &s->b.L;
  int nc = p->nc, d = p->d, nd = nc * d, np = L->npairs;
  plan_qpcc_conditions(p, qp->x, cond);
  for (int i = 0; i < nc; i++) {
    /* as Algorithm 2 reads: a contact's friction pivot builds on its normal pivot */
    memcpy(child, qp->spec, np);
    int id = i;
    if (qp->spec[id] && fabs(cond[id]) <= tol) {          /* separating with zero normal speed: touch */
      child[id] = 0;
      if (solve_and_enqueue(s, child)) return -1;
    } else if (!qp->spec[id] && fabs(qp->x[L->fn + i]) <= tol) {  /* touching with zero force: break */
      child[id] = 1;
      if (solve_and_enqueue(s, child)) return -1;
    }
    int cone = nc + nd + i;
    if (qp->spec[cone] && fabs(cond[cone]) <= tol) {      /* sticking on the cone's boundary: slide */
      child[cone] = 0;
      /* slide along the direction most aligned with the static friction force D ft */
      int best = 0;
      double best_dot = -INFINITY;
      for (int k = 0; k < d; k++) {
        double dot = 0;
        for (int r = 0; r < p->n; r++) {
          double fr = 0;
          for (int j = 0; j < d; j++) fr += p->D[r * nd + i * d + j] * qp->x[L->ft + i * d + j];
          dot += fr * p->D[r * nd + i * d + k];
        }
        if (dot > best_dot) { best_dot = dot; best = k; }
      }
      for (int k = 0; k < d; k++) child[nc + i * d + k] = k != best;
      if (solve_and_enqueue(s, child)) return -1;
    } else if (!qp->spec[cone] && fabs(qp->x[L->lam + i]) <= tol) {  /* sliding speed 0: stick */
      child[cone] = 1;
      for (int k = 0; k < d; k++) child[nc + i * d + k] = 0;
      if (solve_and_enqueue(s, child)) return -1;
    }
  }
  return 0;
}

static double complementarity_at(const plan_qpcc *p, const double *x, double *cond) {
  qpcc_layout L = layout_of(p);
  plan_qpcc_conditions(p, x, cond);
  double c = 0;
  for (int k = 0; k < L.npairs; k++) c = fmax(c, fabs(fmin(x[pair_variable(p, &L, k)], cond[k])));
  return c;
}

plan_qpcc_status plan_qpcc_solve(const plan_qpcc *p, const plan_qpcc_options *opt, double *x,
                                 double *first_x, unsigned char *spec_out, plan_qpcc_info *info) {
  memset(info, 0, sizeof *info);
  info->fval = INFINITY;
  plan_qpcc_options o = opt ? *opt : plan_qpcc_default_options();
  char buf[200];
  const char *bad = qpcc_check(p, buf, sizeof buf);
  if (!bad && (o.max_qps < 1 || !(o.zero_tol >= 0))) bad = "qpcc: options need max_qps >= 1 and zero_tol >= 0";
  if (bad) {
    info->status = PLAN_QPCC_BAD_INPUT;
    snprintf(info->message, sizeof info->message, "%s", bad);
    return info->status;
  }
  qpcc_search s = {.p = p};
  if (builder_init(&s.b, p)) {
    info->status = PLAN_QPCC_BAD_INPUT;
    snprintf(info->message, sizeof info->message, "qpcc: out of memory");
    return info->status;
  }
  int np = s.b.L.npairs, nx = s.b.L.nx;
  unsigned char *spec = malloc(np + 1), *child = malloc(np + 1);
  double *cond = malloc(sizeof(double) * (np + 1));
  int oom = !spec || !child || !cond;
  if (!oom) {
    static_contact_spec(p, spec);
    oom = solve_and_enqueue(&s, spec) != 0;
  }
  if (!oom && s.queue.len == 0 && np > 0) {
    /* seed 002: static contact may contradict the dynamics; start from the MLCP with u = 0 */
    if (mlcp_spec(p, spec, info->message, sizeof info->message) == 0) {
      info->used_mlcp_guess = 1;
      oom = solve_and_enqueue(&s, spec) != 0;
    }
  }
  if (!oom && s.queue.len && first_x) memcpy(first_x, s.queue.v[0].x, sizeof(double) * nx);
  int best = -1;
  qp_node best_node = {0};
  while (!oom && s.visited.len < o.max_qps && s.queue.len > 0) {
    int head = 0;
    for (int i = 1; i < s.queue.len; i++)
      if (s.queue.v[i].fval < s.queue.v[head].fval) head = i;
    qp_node node = s.queue.v[head];
    s.queue.v[head] = s.queue.v[--s.queue.len];
    if (list_push(&s.visited, node)) { node_free(&node); oom = 1; break; }
    if (node.fval < info->fval) {
      info->fval = node.fval;
      best = s.visited.len - 1;
      best_node = node;
      info->best_iteration = s.visited.len;
    }
    if (enqueue_children(&s, &node, o.zero_tol, child, cond)) oom = 1;
  }
  info->visited = s.visited.len;
  info->solved_qps = s.solved;
  if (oom) {
    info->status = PLAN_QPCC_BAD_INPUT;
    snprintf(info->message, sizeof info->message, "qpcc: out of memory");
  } else if (best < 0) {
    info->status = PLAN_QPCC_NO_FEASIBLE;
    if (!info->message[0])
      snprintf(info->message, sizeof info->message, "qpcc: the static-contact QP is infeasible");
  } else {
    memcpy(x, best_node.x, sizeof(double) * nx);
    if (spec_out) memcpy(spec_out, best_node.spec, np);
    info->complementarity = complementarity_at(p, x, cond);
    info->status = s.queue.len == 0 ? PLAN_QPCC_SOLVED : PLAN_QPCC_MAX_QPS;
    if (info->status == PLAN_QPCC_MAX_QPS)
      snprintf(info->message, sizeof info->message, "qpcc: stopped after %d QPs with %d still queued",
               s.visited.len, s.queue.len);
  }
  for (int i = 0; i < s.queue.len; i++) node_free(&s.queue.v[i]);
  for (int i = 0; i < s.visited.len; i++) node_free(&s.visited.v[i]);
  free(s.queue.v);
  free(s.visited.v);
  free(s.b.H);
  free(spec);
  free(child);
  free(cond);
  return info->status;
}

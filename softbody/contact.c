/* Contact LCP assembly (CUSP paper eq. 8-13) over soft, dense and custom
 * bodies, conditioning (condition.c) and solve (lcp.c). */
#include "contact.h"

#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bilateral.h"
#include "condition.h"
#include "kept_op.h"
#include "lcp_internal.h"
#include "sb_util.h"
#include "sb_vector.h"

_Static_assert(SB_KEPT_OP_MAX_DIRECTIONS >= SB_CONTACT_MAX_DIRECTIONS, "the operator holds every pyramid a problem takes");

typedef enum { BODY_SOFT, BODY_DENSE, BODY_CUSTOM } body_kind;

/* A failed solve keeps its best iterate within this relative physical
 * residual (1000 times the convergence tolerance: micrometres per second at
 * contact speeds of 1 m/s); beyond it the damped problem answers (rho). */
#define SB_CONTACT_NEAR_TOL 1e-6
#define SB_CONTACT_DAMPING 1.0
#define SB_CONTACT_DAMPING_FLOOR 1e-12

typedef struct {
  body_kind kind;
  int nv, off;             /* its coordinates in the stacked velocity */
  const sb_model *m;       /* soft */
  sb_work *w;
  double *L;               /* dense: Cholesky factor (lower, column-major) */
  sb_body_apply_fn solve, half_solve;
  void *ctx;
} body_t;

struct sb_contact_problem {
  int max_c, max_b, max_dof, max_r;
  int max_k;               /* contacts the LCP holds after stage 1 (sb_contact_create_kept) */
  int nb, nc, ndof;
  size_t pool_used;
  body_t *bodies;
  double *pool;            /* dense factors */
  double *vfree;           /* stacked free velocities (dense/custom copied; soft filled at solve) */
  sb_contact *c;
  double *frame;           /* 9 per contact: world columns t1 t2 n, row-major */
  double *vstatic;         /* 3 per contact, contact frame: velocity the coordinates do not
                              carry (static sides' prescribed motion, soft bases' motion) */
  double *point;           /* 6 per contact: world point of each soft side (for wrenches) */
  double *Jt;              /* ndof x 3 max_c: column 3i + k = row k (t1, t2, n) of contact i */
  double *Y;               /* M^-1 Jt */
  double *W;               /* 3m x 3m Delassus in contact frames */
  double *u, *uf;          /* 3m: free and final relative velocities (contact frame) */
  double *scratch;
  double *St, *qrwork;
  int lqrwork, *iwork, *prio, *keep, *kept;
  int nvar_cap;
  double *A, *b, *As, *bs, *z, *zs, *wv, *dr, *dc, *lambda, *p, *pv;
  double *ruizw; /* stage 2's scratch, 4 nvar */
  double *ruiz_block; /* nvar (max_r + 2): stage 2's columns of A where A is not formed (kept_columns) */
  int *normal_mask, *blocks;
  sb_lcp_work *lcp;
  long *prev_id;
  double *prev_z;
  double *prev_t1;         /* 3 per warm-start entry: the first friction direction (world) of its
                              pyramid: the one it was solved in, or with align_friction the one the
                              next solve starts from (save_next_direction) */
  double *prev_dr, *prev_dc; /* r + 2 each per warm-start entry: its variables' stage-2 scales, where
                              the next step's Ruiz sweeps start (powers of two) */
  int *prev_in;            /* r + 2 per warm-start entry: 1 where the variable was in the set that
                              solved the last warm pivot (sb_lcp_last_set), which the next step's
                              first prediction joins (warm_last_set) */
  int *last_in;            /* the last pass's flags of that set, out of the LCP work */
  int nprev, prev_r;
  double *order;           /* stage-1 order keys for the re-selection passes */
  int order_active;
  int *force;              /* stage-1 columns kept even when dependent (last step's loaded contacts) */
  int *keep_prev;          /* the selection before a union pass */
  int pass_nk;             /* the contacts whose answer the pass before a union pass left (0: none) */
  int *pass_kept;          /* max_k: those contacts, in order */
  double *pass_z;          /* their answer, r + 2 each (physical units): the union pass's guess */
  double *z2, *zs2;        /* nvar each: a pass's second guess, in physical units and scaled (or none:
                              has_z2 0) */
  int has_z2;
  int keep_given;          /* the pass solves p->keep as it stands (a union pass): no selection */
  int kept_dependent;      /* the last pass kept contacts whose normals depend on the others' */
  int directions;          /* r of the last solve */
  int nvar;
  double *stabv;           /* per contact gap term added to the normal row */
  sb_bilateral_work *bil;  /* bilateral constraints (bilateral.c), when reserved */
  int *admit;              /* screen: the contacts stage 1 may keep this step (screen_open) */
  int *screen_int;         /* 7 per contact: screen_rank_select's gathered columns and flags */
  double *screen_order;    /* its gathered order keys */
  int screening;           /* the screen is on for this solve */
  double *wn;              /* ndof x max_c (leading dimension max_dof): contact i's whitened normal
                              F^-1 J_n^T as stage 1 computed it this step (before the bilateral
                              projection), for kept_delassus */
  int *wn_ok;              /* per contact: wn holds it for this step */
  int *immobile;           /* per contact: no impulse moves its normal this step (drop_immobile_kept) */
  double mobility_max;     /* the largest normal mobility |(I - P_e) F^-1 J_n^T|^2 seen this step */
  int *head;               /* 3 per contact: how many leading rows of each participant's body block
                              its Jacobian fills (side 0, side 1, the third participant; a soft
                              side: the coordinates proximal to its point, which its whitened
                              columns keep; other bodies: all) */
  int *colc;               /* 3 max_c: the contact of each column kept_delassus whitens */
  int *order_head;         /* 3 max_c: those columns ordered by their rows in a body (body_apply) */
  int *count_head;         /* max_dof + 1: the counting sort's counts */
  double *basic;           /* basic_loads' scratch: 2 max_k^2 + 6 max_k */
  int *basic_int;          /* and its 2 max_k indices */
  double *prev_scale;      /* max_k: each kept contact's load factor in the recorded answer */
  sb_kept_op op;           /* the last solve's LCP on W (kept_op.h): valid when op_valid */
  int op_valid;            /* 0 after a solve of a given dense LCP (sb_contact_solve_lcp) */
  double *kept_mu;         /* max_k: the kept contacts' friction coefficients, for op */
  sb_kept_op_conditioned cond; /* op under the last conditioning (dr, dc, normal_mask, tikhonov) */
  sb_lcp_entries cond_entries; /* cond as sb_lcp_entries: what the solve reads (lcp_from_operator) */
  double *cond_x, *cond_t;     /* max n each: cond's products' scratch */
  double *damp_diag;           /* max n: the damped problem's compliance (damped_fallback) */
  int lcp_matrix;              /* the pass's lcp_from_operator, SB_CONTACT_LCP_AUTO resolved by its size */
  int A_formed, As_formed;     /* 0: the last solve read its LCP from op alone (lcp_from_operator
                                  SB_CONTACT_LCP_OPERATOR) and left A or As unwritten (form_matrices) */
};

sb_contact_options sb_contact_default_options(void) {
  sb_contact_options o;
  memset(&o, 0, sizeof o);
  o.directions = 4;
  o.rank_selection = 1;
  o.rank_tol = 1e-6;
  o.ruiz_iterations = 10;
  o.tikhonov = 1e-10;
  o.stabilization = 0.2;
  o.push_speed = 1;
  o.speculative = 1;
  o.warm_start = 1;
  o.rank_refine = 2;
  o.proximal_steps = 1;
  o.screen = 1;
  o.lcp_from_operator = SB_CONTACT_LCP_OPERATOR;
  o.lcp = sb_lcp_default_options();
  return o;
}

void sb_contact_free(sb_contact_problem *p) {
  if (!p) return;
  void *ptr[] = {p->bodies, p->pool, p->vfree, p->c, p->frame, p->vstatic, p->point, p->Jt, p->Y, p->W,
                 p->u, p->uf, p->scratch, p->St, p->qrwork, p->iwork, p->prio, p->keep, p->kept,
                 p->A, p->b, p->As, p->bs, p->z, p->zs, p->wv, p->ruizw, p->ruiz_block, p->dr, p->dc, p->lambda,
                 p->p,
                 p->pv, p->normal_mask, p->blocks, p->prev_id, p->prev_z, p->prev_t1, p->prev_dr, p->prev_dc, p->prev_in, p->last_in, p->stabv, p->order, p->force, p->keep_prev,
                 p->pass_kept, p->pass_z, p->z2, p->zs2,
                 p->admit, p->screen_int, p->screen_order, p->wn, p->wn_ok, p->immobile, p->head, p->colc,
                 p->order_head, p->count_head, p->basic, p->basic_int, p->prev_scale,
                 p->kept_mu, p->op.lam, p->op.v, p->cond_x, p->cond_t, p->damp_diag};
  for (size_t k = 0; k < sizeof ptr / sizeof ptr[0]; k++) free(ptr[k]);
  sb_lcp_work_free(p->lcp);
  sb_bilateral_work_free(p->bil);
  free(p);
}

size_t sb_contact_workspace_bytes_kept(int max_contacts, int max_kept, int max_dof, int max_directions) {
  size_t mc = max_contacts > 0 ? (size_t)max_contacts : 0, nd = max_dof > 0 ? (size_t)max_dof : 0, m3 = 3 * mc;
  size_t mk = max_kept > 0 ? (size_t)max_kept : 0;
  size_t nvar = mc * (size_t)(max_directions + 2), nvark = mk * (size_t)(max_directions + 2);
  /* the arrays sb_contact_create_kept allocates, in its order (bodies apart) */
  size_t doubles = nd * nd + nd + 9 * mc + m3 + 2 * m3 + 2 * nd * m3 + m3 * m3 + 2 * m3 + 6 * nd + nd * m3 +
                   nd * mc + (size_t)sb_rank_select_work_size(max_dof, max_contacts) + 2 * nvark * nvark +
                   14 * nvark + nvark * (size_t)(max_directions + 2) + m3 + 2 * nd + nvar + m3 + 2 * mc + mc + nd * mc +
                   2 * nvar /* ..., screen_order, wn, prev_dr, prev_dc */
                   + 7 * mk /* kept_mu, op.lam, op.v */
                   + 3 * nvark; /* pass_z, z2, zs2 */
  size_t ints = 2 * mc + 3 * mc + nvark + mc + 8 * mc + mc + mc + 3 * mc + 3 * mc + 3 * mc + nd + 1 + nvar + nvark +
                mk;
  /* ... wn_ok, immobile, head, colc, order_head, count_head, prev_in, last_in, pass_kept */
  return sizeof(sb_contact_problem) + sizeof(sb_contact) * mc + sizeof(long) * mc + sizeof(double) * doubles +
         sizeof(int) * ints + sb_lcp_work_bytes((int)nvark);
}

size_t sb_contact_workspace_bytes(int max_contacts, int max_dof, int max_directions) {
  return sb_contact_workspace_bytes_kept(max_contacts, max_contacts, max_dof, max_directions);
}

sb_contact_problem *sb_contact_create(int max_contacts, int max_bodies, int max_dof,
                                      int max_directions, char *error, int error_size) {
  return sb_contact_create_kept(max_contacts, max_contacts, max_bodies, max_dof, max_directions, error, error_size);
}

sb_contact_problem *sb_contact_create_kept(int max_contacts, int max_kept, int max_bodies, int max_dof,
                                           int max_directions, char *error, int error_size) {
  if (max_contacts < 1 || max_bodies < 1 || max_dof < 1 || max_directions < 3 ||
      max_directions > SB_CONTACT_MAX_DIRECTIONS || max_contacts > 100000 || max_dof > 100000 ||
      max_kept < 1 || max_kept > max_contacts) {
    sb_errorf(error, error_size,
              "contact problem capacity: contacts %d, kept %d (within 1..contacts), bodies %d, dof %d must be "
              ">= 1 and directions %d within 3..%d",
              max_contacts, max_kept, max_bodies, max_dof, max_directions, SB_CONTACT_MAX_DIRECTIONS);
    return NULL;
  }
  sb_contact_problem *p = calloc(1, sizeof *p);
  if (!p) goto oom;
  p->max_c = max_contacts;
  p->max_k = max_kept;
  p->max_b = max_bodies;
  p->max_dof = max_dof;
  p->max_r = max_directions;
  size_t mc = max_contacts, nd = max_dof, m3 = 3 * mc;
  size_t nvar = mc * (max_directions + 2), nvark = (size_t)max_kept * (max_directions + 2);
  p->nvar_cap = (int)nvark;
  p->lqrwork = sb_rank_select_work_size(max_dof, max_contacts);
  int ok = 1;
#define ALLOC(ptr, count) ok &= ((ptr) = calloc((count), sizeof *(ptr))) != NULL
  ALLOC(p->bodies, max_bodies);
  ALLOC(p->pool, nd * nd);
  ALLOC(p->vfree, nd);
  ALLOC(p->c, mc);
  ALLOC(p->frame, 9 * mc);
  ALLOC(p->vstatic, m3);
  ALLOC(p->point, 2 * m3);
  ALLOC(p->Jt, nd * m3);
  ALLOC(p->Y, nd * m3);
  ALLOC(p->W, m3 * m3);
  ALLOC(p->u, m3);
  ALLOC(p->uf, m3);
  ALLOC(p->scratch, nd * m3);
  ALLOC(p->St, nd * mc);
  ALLOC(p->qrwork, p->lqrwork);
  ALLOC(p->iwork, 2 * mc);
  ALLOC(p->prio, mc);
  ALLOC(p->keep, mc);
  ALLOC(p->kept, mc);
  ALLOC(p->A, nvark * nvark);
  ALLOC(p->As, nvark * nvark);
  ALLOC(p->b, nvark);
  ALLOC(p->bs, nvark);
  ALLOC(p->z, nvark);
  ALLOC(p->zs, nvark);
  ALLOC(p->wv, nvark);
  ALLOC(p->ruizw, 4 * nvark);
  ALLOC(p->ruiz_block, nvark * (max_directions + 2));
  ALLOC(p->dr, nvark);
  ALLOC(p->dc, nvark);
  ALLOC(p->cond_x, nvark);
  ALLOC(p->cond_t, nvark);
  ALLOC(p->damp_diag, nvark);
  ALLOC(p->normal_mask, nvark);
  ALLOC(p->blocks, mc);
  ALLOC(p->lambda, m3);
  ALLOC(p->p, nd);
  ALLOC(p->pv, nd);
  ALLOC(p->prev_id, mc);
  ALLOC(p->prev_z, nvar);
  ALLOC(p->prev_t1, m3);
  ALLOC(p->stabv, mc);
  ALLOC(p->order, mc);
  ALLOC(p->force, mc);
  ALLOC(p->keep_prev, mc);
  ALLOC(p->admit, mc);
  ALLOC(p->screen_int, 7 * mc);
  ALLOC(p->screen_order, mc);
  ALLOC(p->wn, nd * mc);
  ALLOC(p->wn_ok, mc);
  ALLOC(p->immobile, mc);
  ALLOC(p->head, 3 * mc);
  ALLOC(p->colc, m3);
  ALLOC(p->order_head, m3);
  ALLOC(p->count_head, nd + 1);
  ALLOC(p->prev_dr, nvar);
  ALLOC(p->prev_dc, nvar);
  ALLOC(p->prev_in, nvar);
  ALLOC(p->last_in, nvark);
  ALLOC(p->pass_kept, max_kept);
  ALLOC(p->pass_z, nvark);
  ALLOC(p->z2, nvark);
  ALLOC(p->zs2, nvark);
  ALLOC(p->basic, 2 * (size_t)max_kept * max_kept + 6 * (size_t)max_kept);
  ALLOC(p->basic_int, 2 * (size_t)max_kept);
  ALLOC(p->prev_scale, max_kept);
  ALLOC(p->kept_mu, max_kept);
  ALLOC(p->op.lam, 3 * (size_t)max_kept);
  ALLOC(p->op.v, 3 * (size_t)max_kept);
#undef ALLOC
  if (!ok) goto oom;
  p->lcp = sb_lcp_work_create((int)nvark);
  if (!p->lcp) goto oom;
  return p;
oom:
  sb_contact_free(p);
  sb_errorf(error, error_size, "out of memory for a contact problem of %d contacts (%d kept), %d dof, r = %d",
            max_contacts, max_kept, max_dof, max_directions);
  return NULL;
}

void sb_contact_clear(sb_contact_problem *p) {
  p->nb = p->nc = p->ndof = 0;
  p->pool_used = 0;
  p->nvar = 0;
  sb_bilateral_clear(p->bil);
}

static int add_body(sb_contact_problem *p, int nv, char *error, int error_size) {
  if (p->nb >= p->max_b) {
    sb_errorf(error, error_size, "contact problem: more than %d bodies", p->max_b);
    return -1;
  }
  if (nv < 1 || p->ndof + nv > p->max_dof) {
    sb_errorf(error, error_size, "contact problem: body of %d coordinates does not fit (%d of %d used)",
              nv, p->ndof, p->max_dof);
    return -1;
  }
  /* a new body changes the stacked coordinates: contacts must come after */
  if (p->nc > 0 || sb_bilateral_count(p->bil) > 0) {
    sb_errorf(error, error_size, "contact problem: add every body before the first contact");
    return -1;
  }
  body_t *b = &p->bodies[p->nb];
  memset(b, 0, sizeof *b);
  b->nv = nv;
  b->off = p->ndof;
  p->ndof += nv;
  return p->nb++;
}

int sb_contact_add_soft(sb_contact_problem *p, const sb_model *m, sb_work *w, char *error,
                        int error_size) {
  if (!m || !w) {
    sb_errorf(error, error_size, "contact problem: soft body without model or workspace");
    return -1;
  }
  int k = add_body(p, m->n, error, error_size);
  if (k < 0) return -1;
  p->bodies[k].kind = BODY_SOFT;
  p->bodies[k].m = m;
  p->bodies[k].w = w;
  return k;
}

int sb_contact_add_dense(sb_contact_problem *p, int nv, const double *M, const double *vfree,
                         char *error, int error_size) {
  if (!M || !vfree) {
    sb_errorf(error, error_size, "contact problem: dense body without mass matrix or free velocity");
    return -1;
  }
  for (int i = 0; i < nv * nv; i++)
    if (!isfinite(M[i])) {
      sb_errorf(error, error_size, "contact problem: dense body mass matrix entry %d is not finite", i);
      return -1;
    }
  for (int i = 0; i < nv; i++)
    if (!isfinite(vfree[i])) {
      sb_errorf(error, error_size, "contact problem: dense body free velocity %d is not finite", i);
      return -1;
    }
  int k = add_body(p, nv, error, error_size);
  if (k < 0) return -1;
  body_t *b = &p->bodies[k];
  b->kind = BODY_DENSE;
  b->L = p->pool + p->pool_used;
  p->pool_used += (size_t)nv * nv;
  memcpy(b->L, M, (size_t)nv * nv * sizeof(double)); /* symmetric: row/column order agree */
  memcpy(p->vfree + b->off, vfree, nv * sizeof(double));
  if (LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', nv, b->L, nv)) {
    p->nb--;
    p->ndof -= nv;
    p->pool_used -= (size_t)nv * nv;
    sb_errorf(error, error_size, "contact problem: dense body mass matrix is not positive definite");
    return -1;
  }
  return k;
}

int sb_contact_add_custom(sb_contact_problem *p, int nv, sb_body_apply_fn solve,
                          sb_body_apply_fn half_solve, void *ctx, const double *vfree, char *error,
                          int error_size) {
  if (!solve || !half_solve || !vfree) {
    sb_errorf(error, error_size, "contact problem: custom body needs solve, half_solve and vfree");
    return -1;
  }
  for (int i = 0; i < nv; i++)
    if (!isfinite(vfree[i])) {
      sb_errorf(error, error_size, "contact problem: custom body free velocity %d is not finite", i);
      return -1;
    }
  int k = add_body(p, nv, error, error_size);
  if (k < 0) return -1;
  body_t *b = &p->bodies[k];
  b->kind = BODY_CUSTOM;
  b->solve = solve;
  b->half_solve = half_solve;
  b->ctx = ctx;
  memcpy(p->vfree + b->off, vfree, nv * sizeof(double));
  return k;
}

static double dot3(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

/* Contact frame (contact.h): columns t1, t2, n (world), row-major R[3 * row + col]. */
void sb_contact_frame(const double n[3], const double hint[3], double R[9]) {
  double t1[3], t2[3];
  double hn = dot3(hint, n);
  for (int k = 0; k < 3; k++) t1[k] = hint[k] - hn * n[k];
  double len = sqrt(dot3(t1, t1));
  if (len < 1e-9) {
    /* the world axis least aligned with n, made orthogonal */
    int a = 0;
    for (int k = 1; k < 3; k++)
      if (fabs(n[k]) < fabs(n[a])) a = k;
    double e[3] = {0, 0, 0};
    e[a] = 1;
    double en = n[a];
    for (int k = 0; k < 3; k++) t1[k] = e[k] - en * n[k];
    len = sqrt(dot3(t1, t1));
  }
  for (int k = 0; k < 3; k++) t1[k] /= len;
  t2[0] = n[1] * t1[2] - n[2] * t1[1];
  t2[1] = n[2] * t1[0] - n[0] * t1[2];
  t2[2] = n[0] * t1[1] - n[1] * t1[0];
  for (int k = 0; k < 3; k++) {
    R[3 * k + 0] = t1[k];
    R[3 * k + 1] = t2[k];
    R[3 * k + 2] = n[k];
  }
}

/* c_k[j] += (a_k . J6_lin[j] - b_k . J6_ang[j]), j < nz, k < 3: a soft
 * side's three contact-direction rows (J6: the point's 6 x n Jacobian,
 * angular rows first; a_k = sign u_k, b_k = sign (u_k x r), a row of ab per
 * direction). One pass over the columns loads each Jacobian column once for
 * the three rows; the sign in the coefficients gives the same doubles as
 * sign times the row (negation is exact and rounds symmetrically). The
 * operands are unaliased (restrict) so that the loop runs over j in vector
 * lanes (four with AVX2); each entry's sum is the one it always was. */
SB_WIDE_CLONES
static void add_soft_rows(int nz, const double *restrict J6, int n, const double ab[18], double *restrict c0,
                          double *restrict c1, double *restrict c2) {
  const double *J0 = J6, *J1 = J6 + n, *J2 = J6 + 2 * n, *J3 = J6 + 3 * n, *J4 = J6 + 4 * n, *J5 = J6 + 5 * n;
  double a00 = ab[0], a01 = ab[1], a02 = ab[2], b00 = ab[3], b01 = ab[4], b02 = ab[5];
  double a10 = ab[6], a11 = ab[7], a12 = ab[8], b10 = ab[9], b11 = ab[10], b12 = ab[11];
  double a20 = ab[12], a21 = ab[13], a22 = ab[14], b20 = ab[15], b21 = ab[16], b22 = ab[17];
  for (int j = 0; j < nz; j++) {
    double j0 = J0[j], j1 = J1[j], j2 = J2[j], j3 = J3[j], j4 = J4[j], j5 = J5[j];
    c0[j] += ((a00 * j3 - b00 * j0) + (a01 * j4 - b01 * j1)) + (a02 * j5 - b02 * j2);
    c1[j] += ((a10 * j3 - b10 * j0) + (a11 * j4 - b11 * j1)) + (a12 * j5 - b12 * j2);
    c2[j] += ((a20 * j3 - b20 * j0) + (a21 * j4 - b21 * j1)) + (a22 * j5 - b22 * j2);
  }
}

/* The row of direction d for a point at r in a frame with rotation Rg, as
 * coefficients of the frame's (v, omega): d . Rg (v + omega x r) =
 * u . v - (u x r) . omega, u = Rg^T d; written signed into ab (6), u out. */
static void frame_row(const double *Rg, const double d[3], const double r[3], double sign, double *ab, double u[3]) {
  double uxr[3];
  for (int a = 0; a < 3; a++) u[a] = Rg[a] * d[0] + Rg[3 + a] * d[1] + Rg[6 + a] * d[2];
  uxr[0] = u[1] * r[2] - u[2] * r[1];
  uxr[1] = u[2] * r[0] - u[0] * r[2];
  uxr[2] = u[0] * r[1] - u[1] * r[0];
  for (int a = 0; a < 3; a++) {
    ab[a] = sign * u[a];
    ab[3 + a] = sign * uxr[a];
  }
}

/* Adds sign * (contact-frame rows of jac, the point-velocity Jacobian of a
 * dense or custom body: 3 x nv row-major) into the columns 3i..3i+2 of Jt;
 * participant: 0, 1 (the sides) or 2 (the third), whose head it sets. */
static int add_jacobian_rows(sb_contact_problem *p, int i, int participant, int body, const double *jac,
                             double sign, const double R[9], char *error, int error_size) {
  const body_t *b = &p->bodies[body];
  size_t ld = p->max_dof;
  double *col = p->Jt + (size_t)3 * i * ld;
  if (!jac) {
    sb_errorf(error, error_size, "contact %d: %sbody %d needs a point Jacobian (jac)", i,
              participant == 2 ? "the third participant, " : "", body);
    return -1;
  }
  for (int j = 0; j < 3 * b->nv; j++)
    if (!isfinite(jac[j])) {
      sb_errorf(error, error_size, "contact %d: Jacobian entry %d of %sbody %d is not finite", i, j,
                participant == 2 ? "the third participant, " : "", body);
      return -1;
    }
  p->head[3 * i + participant] = b->nv;
  for (int k = 0; k < 3; k++) {
    double *c = col + k * ld + b->off;
    for (int j = 0; j < b->nv; j++)
      c[j] += sign * (R[k] * jac[j] + R[3 + k] * jac[b->nv + j] + R[6 + k] * jac[2 * b->nv + j]);
  }
  return 0;
}

/* Adds sign * (contact-frame rows of the side's point-velocity Jacobian) into
 * the columns 3i..3i+2 of Jt. */
static int add_side(sb_contact_problem *p, int i, const sb_contact_side *sd, double sign,
                    const double R[9], char *error, int error_size) {
  double *col = p->Jt + (size_t)3 * i * p->max_dof;
  size_t ld = p->max_dof;
  int s = sign > 0 ? 0 : 1;
  p->head[3 * i + s] = 0;
  if (sd->body < 0) {
    for (int k = 0; k < 3; k++) {
      double d[3] = {R[k], R[3 + k], R[6 + k]};
      p->vstatic[3 * i + k] += sign * dot3(d, sd->velocity);
    }
    return 0;
  }
  const body_t *b = &p->bodies[sd->body];
  if (b->kind == BODY_SOFT) {
    sb_pose g;
    /* the point's Jacobian is zero past the coordinates proximal to it */
    int n = b->nv, nz;
    sb_point_parts pp;
    if (sb_point_jacobian_parts(b->m, b->w, sd->seg, sd->s, &g, &pp)) {
      sb_errorf(error, error_size, "contact %d: no point at segment %d, s = %g on soft body %d", i,
                sd->seg, sd->s, sd->body);
      return -1;
    }
    nz = pp.ncol;
    p->head[3 * i + s] = nz;
    const double *r = sd->offset;
    double vb[3];
    sb_frame_base_velocity(b->m, b->w, &g, r, vb, NULL);
    double *pt = p->point + 6 * i + (sign > 0 ? 0 : 3);
    sb_pose_apply(&g, r, pt);
    double ab[18], abe[18], re[3];
    if (pp.c0 > 0) { /* the point in the previous unit's end frame */
      double x[3] = {pt[0] - pp.gend->p[0], pt[1] - pp.gend->p[1], pt[2] - pp.gend->p[2]};
      for (int a = 0; a < 3; a++)
        re[a] = pp.gend->R[a] * x[0] + pp.gend->R[3 + a] * x[1] + pp.gend->R[6 + a] * x[2];
    }
    for (int k = 0; k < 3; k++) {
      double d[3] = {R[k], R[3 + k], R[6 + k]}, u[3];
      frame_row(g.R, d, r, sign, ab + 6 * k, u);
      p->vstatic[3 * i + k] += sign * dot3(u, vb);
      if (pp.c0 > 0) frame_row(pp.gend->R, d, re, sign, abe + 6 * k, u); /* the proximal columns' */
    }
    double *c0 = col + b->off, *c1 = col + ld + b->off, *c2 = col + 2 * ld + b->off;
    if (pp.c0 > 0) add_soft_rows(pp.c0, pp.Jend, n, abe, c0, c1, c2);
    add_soft_rows(nz - pp.l0, pp.Jloc + pp.l0, n, ab, c0 + pp.l0, c1 + pp.l0, c2 + pp.l0);
    return 0;
  }
  return add_jacobian_rows(p, i, s, sd->body, sd->jac, sign, R, error, error_size);
}

int sb_contact_add(sb_contact_problem *p, const sb_contact *c, char *error, int error_size) {
  int i = p->nc;
  if (i >= p->max_c) {
    sb_errorf(error, error_size, "contact problem: more than %d contacts", p->max_c);
    return -1;
  }
  double nn = sqrt(dot3(c->normal, c->normal));
  if (!(isfinite(nn) && nn > 1e-12)) {
    sb_errorf(error, error_size, "contact %d: normal must be finite and nonzero", i);
    return -1;
  }
  if (!isfinite(c->gap) || !(c->friction >= 0) || !isfinite(c->friction)) {
    sb_errorf(error, error_size, "contact %d: gap (%g) must be finite and friction (%g) finite and >= 0",
              i, c->gap, c->friction);
    return -1;
  }
  for (int k = 0; k < 3; k++)
    if (!isfinite(c->tangent[k]) || !isfinite(c->side[0].velocity[k]) || !isfinite(c->side[1].velocity[k]) ||
        !isfinite(c->side[0].offset[k]) || !isfinite(c->side[1].offset[k])) {
      sb_errorf(error, error_size, "contact %d: tangent, offset and velocity must be finite", i);
      return -1;
    }
  for (int s = 0; s < 2; s++)
    if (c->side[s].body < -1 || c->side[s].body >= p->nb) {
      sb_errorf(error, error_size, "contact %d: side %d names body %d, but the problem has %d", i, s,
                c->side[s].body, p->nb);
      return -1;
    }
  if (c->side[0].body < 0 && c->side[1].body < 0) {
    sb_errorf(error, error_size, "contact %d: both sides are the static world", i);
    return -1;
  }
  if (c->coupled_jac && (c->coupled_body < 0 || c->coupled_body >= p->nb)) {
    sb_errorf(error, error_size, "contact %d: the third participant names body %d, but the problem has %d", i,
              c->coupled_body, p->nb);
    return -1;
  }
  if (c->coupled_jac && p->bodies[c->coupled_body].kind == BODY_SOFT) {
    sb_errorf(error, error_size, "contact %d: the third participant, body %d, is soft: it must be dense or custom",
              i, c->coupled_body);
    return -1;
  }
  sb_contact *cc = &p->c[i];
  *cc = *c;
  cc->side[0].jac = cc->side[1].jac = NULL;
  cc->coupled_jac = NULL;
  if (!c->coupled_jac) cc->coupled_body = -1;
  p->head[3 * i + 2] = 0;
  for (int k = 0; k < 3; k++) cc->normal[k] = c->normal[k] / nn;
  double *R = p->frame + 9 * i;
  sb_contact_frame(cc->normal, c->tangent, R);
  for (int k = 0; k < 3; k++) {
    memset(p->Jt + (size_t)(3 * i + k) * p->max_dof, 0, p->max_dof * sizeof(double));
    p->vstatic[3 * i + k] = 0;
  }
  if (add_side(p, i, &c->side[0], 1.0, R, error, error_size) ||
      add_side(p, i, &c->side[1], -1.0, R, error, error_size) ||
      (c->coupled_jac && add_jacobian_rows(p, i, 2, c->coupled_body, c->coupled_jac, 1.0, R, error, error_size)))
    return -1;
  return p->nc++;
}

/* Whether body k's whitened columns keep its Jacobians' zeros past their
 * proximal coordinates: a soft body whose step factored M~ = U U^T. */
static int keeps_heads(const sb_contact_problem *p, int k) {
  return p->bodies[k].kind == BODY_SOFT && p->bodies[k].w->factor_upper;
}

/* The body of contact i's participant s: its sides (0, 1) and the third
 * (2; -1 when it has none, as for the static world). */
static int participant_body(const sb_contact_problem *p, int i, int s) {
  return s < 2 ? p->c[i].side[s].body : p->c[i].coupled_body;
}

/* How many leading rows of body k's block contact i's Jacobian fills. */
static int head_in(const sb_contact_problem *p, int i, int k) {
  int h = 0;
  for (int s = 0; s < 3; s++)
    if (participant_body(p, i, s) == k && p->head[3 * i + s] > h) h = p->head[3 * i + s];
  return h;
}

/* The rows of the stacked velocity contact i's whitened columns can fill:
 * past them they are zero (a soft body's U^-1 keeps its Jacobian's zeros). */
static int rows_of(const sb_contact_problem *p, int i) {
  int r = 0;
  for (int s = 0; s < 3; s++) {
    int k = participant_body(p, i, s);
    int h = k < 0 ? 0 : keeps_heads(p, k) ? p->head[3 * i + s] : p->bodies[k].nv;
    if (k >= 0 && p->bodies[k].off + h > r) r = p->bodies[k].off + h;
  }
  return r;
}

/* x <- F^-1 x on soft body b's rows (blk) for columns of contacts cc: the
 * columns gathered into p->scratch in order of the rows they fill (a
 * counting sort), solved HALF_SOLVE_CHUNK at a time over the longest of
 * them (one call packs the triangle once for the chunk), only their filled
 * rows copied out and back. */
#define HALF_SOLVE_CHUNK 16
static void half_solve_by_rows(sb_contact_problem *p, const body_t *b, double *blk, int ncol, int ld,
                               const int *cc) {
  int k = (int)(b - p->bodies), nv = b->nv, *cnt = p->count_head, *ord = p->order_head;
  memset(cnt, 0, (size_t)(nv + 1) * sizeof(int));
  for (int j = 0; j < ncol; j++) cnt[head_in(p, cc[j], k)]++;
  for (int h = 0, at = 0; h <= nv; h++) {
    int c = cnt[h];
    cnt[h] = at;
    at += c;
  }
  for (int j = 0; j < ncol; j++) ord[cnt[head_in(p, cc[j], k)]++] = j;
  int first = 0; /* the columns that fill no row of this body stay zero */
  while (first < ncol && head_in(p, cc[ord[first]], k) == 0) first++;
  for (int c0 = first; c0 < ncol; c0 += HALF_SOLVE_CHUNK) {
    int c1 = c0 + HALF_SOLVE_CHUNK < ncol ? c0 + HALF_SOLVE_CHUNK : ncol;
    int rows = head_in(p, cc[ord[c1 - 1]], k);
    for (int j = c0; j < c1; j++) {
      int h = head_in(p, cc[ord[j]], k);
      double *dst = p->scratch + (size_t)(j - c0) * rows;
      memcpy(dst, blk + (size_t)ord[j] * ld, h * sizeof(double));
      memset(dst + h, 0, (size_t)(rows - h) * sizeof(double));
    }
    sb_step_half_solve(b->m, b->w, rows, p->scratch, c1 - c0, rows);
    for (int j = c0; j < c1; j++)
      memcpy(blk + (size_t)ord[j] * ld, p->scratch + (size_t)(j - c0) * rows,
             head_in(p, cc[ord[j]], k) * sizeof(double));
  }
}

/* x <- M^-1 x (which = 0) or F^-1 x (which = 1) on the rows of body b, for
 * ncol columns of leading dimension ld. With cc (which = 1), column j is a
 * Jacobian row of contact cc[j]: a soft body then solves only the rows that
 * contact fills, runs of columns of one length at once. */
static void body_apply(sb_contact_problem *p, const body_t *b, int which, double *x, int ncol, int ld,
                       const int *cc) {
  double *blk = x + b->off;
  if (b->kind == BODY_SOFT) {
    if (!which) {
      sb_step_solve_mt_many(b->m, b->w, blk, ncol, ld);
      return;
    }
    if (!cc || !keeps_heads(p, (int)(b - p->bodies))) {
      sb_step_half_solve(b->m, b->w, b->nv, blk, ncol, ld);
      return;
    }
    half_solve_by_rows(p, b, blk, ncol, ld, cc);
    return;
  }
  if (b->kind == BODY_CUSTOM) {
    /* custom functions want contiguous nv x ncol */
    for (int j = 0; j < ncol; j++) memcpy(p->scratch + (size_t)j * b->nv, blk + (size_t)j * ld, b->nv * sizeof(double));
    (which ? b->half_solve : b->solve)(b->ctx, ncol, p->scratch);
    for (int j = 0; j < ncol; j++) memcpy(blk + (size_t)j * ld, p->scratch + (size_t)j * b->nv, b->nv * sizeof(double));
    return;
  }
  const double *L = b->L;
  if (which)
    cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, b->nv, ncol, 1.0, L, b->nv, blk, ld);
  else
    LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'L', b->nv, ncol, L, b->nv, blk, ld);
}

static void apply_all(sb_contact_problem *p, int which, double *x, int ncol, int ld, const int *cc) {
  for (int k = 0; k < p->nb; k++) body_apply(p, &p->bodies[k], which, x, ncol, ld, cc);
}

static void bilateral_apply(void *ctx, int which, double *x, int ncol, int ld) {
  apply_all(ctx, which, x, ncol, ld, NULL);
}

/* w = A z + b over the kept contacts' LCP (n), through the operator on W
 * when the problem was assembled from it. */
static void kept_lcp_product(sb_contact_problem *p, int n, const double *z, double *w) {
  if (p->op_valid) {
    sb_kept_op_apply(&p->op, z, p->b, w);
  } else {
    memcpy(w, p->b, n * sizeof(double));
    cblas_dgemv(CblasColMajor, CblasNoTrans, n, n, 1.0, p->A, n, z, 1, 1.0, w, 1);
  }
}

/* The sliding-speed bound gamma of a contact that carries no load (fn = 0,
 * beta = 0: a speculative or separating contact) is not determined by the
 * LCP: any gamma >= max_k -(D_k . vt) solves it. Solvers may return any of
 * them, and warm-started from the last step they drift along that ray (to
 * 1e9 within a few hundred steps). At every exact solution gamma is the
 * smallest value that keeps w_beta >= 0 (sticking: 0, sliding: -D_k . vt of
 * the active k), so that value is chosen: only round-off changes elsewhere.
 * D_k . vt is computed with gamma left out (w_k - gamma would lose it to
 * cancellation when gamma is large). Gamma enters only its own contact's
 * beta rows, with coefficient 1. w = A z + b (n) is updated, through the
 * operator on W when the problem was assembled from it: a quarter of the
 * dense product's work at r = 4. */
static void canonical_gamma(sb_contact_problem *p, int n, int nk, int bs, double *z, double *w) {
  for (int a = 0; a < nk; a++) z[a * bs + bs - 1] = 0;
  kept_lcp_product(p, n, z, w);
  for (int a = 0; a < nk; a++) {
    int o = a * bs;
    double g = 0;
    for (int k = 1; k < bs - 1; k++) g = fmax(g, -w[o + k]);
    for (int k = 1; k < bs - 1; k++) w[o + k] += g;
    z[o + bs - 1] = g;
  }
}

/* The warm guess of each kept contact that carries no normal impulse in it
 * (new this step, or unloaded in the last answer): no friction, and gamma
 * its sliding speed now, max(0, max_k -D_k . vt) at the guess's impulses:
 * the value canonical_gamma gives every answer that leaves it unloaded. Left
 * at the last step's gamma (zero for a new contact), a contact that now
 * slides has a beta row with w < 0 at the guess, which predicts that beta
 * into the warm pivot's set: a friction impulse without a normal one, which
 * no answer has, and the pass on that set fails across the whole arm (a
 * 12-section arm creeping down the incline went cold whenever stage 1 kept
 * another unloaded contact). Loaded contacts keep their guess. w: n doubles
 * of scratch. */
static void guess_unloaded_gamma(sb_contact_problem *p, int n, int nk, int bs, double *z, double *w) {
  int unloaded = 0;
  for (int a = 0; a < nk; a++) {
    double *za = z + (size_t)a * bs;
    if (za[0] > 0) continue;
    memset(za, 0, bs * sizeof(double));
    unloaded = 1;
  }
  if (!unloaded) return;
  kept_lcp_product(p, n, z, w);
  for (int a = 0; a < nk; a++) {
    int o = a * bs;
    if (z[o] > 0) continue;
    double g = 0;
    for (int k = 1; k < bs - 1; k++) g = fmax(g, -w[o + k]);
    z[o + bs - 1] = g;
  }
}

/* sb_lcp_residual's figures for a w that is already A z + b (canonical_gamma
 * updates it): the same test without a second n x n product. */
static double residual_at(int n, const double *z, const double *w, double *complementarity) {
  double r = 0, c = 0;
  for (int i = 0; i < n; i++) {
    double m = fmin(z[i], w[i]);
    r = fmax(r, isnan(m) ? INFINITY : fabs(m));
    c += z[i] * w[i];
  }
  *complementarity = fabs(c);
  return r;
}

static void count_solve(sb_contact_info *info, const sb_lcp_info *solve) {
  info->solves++;
  info->cold_solves += !solve->warm_pivot;
  info->fallback_solves += solve->attempts > 1;
  info->warm_lemke_starts += solve->warm_lemke >= 2;
  info->warm_lemke_solved += solve->warm_lemke == 3;
}

/* Stage 2's view of A where A is not formed: its columns from op, a
 * contact's r + 2 at once (the sweeps take them in order, and its beta
 * columns share their pyramid products), held in block. */
typedef struct {
  const sb_kept_op *op;
  double *block; /* n x (r + 2): contact c's columns */
  int c;
} kept_columns;

SB_WIDE_CLONES
static const double *kept_op_column(void *ctx, int j, double *scratch) {
  (void)scratch;
  kept_columns *k = ctx;
  const sb_kept_op *op = k->op;
  int bs = op->r + 2, n = sb_kept_op_size(op), c = j / bs;
  if (c != k->c) {
    if (op->r == 4)
      sb_kept_op_block_column(op, 4, c, k->block, n);
    else
      sb_kept_op_block_column(op, op->r, c, k->block, n);
    k->c = c;
  }
  return k->block + (size_t)(j - c * bs) * n;
}

/* A's diagonal entry (k, k) and its entry (i, j), from A where it was
 * formed, else from op (the same doubles). */
static double kept_entry(const sb_contact_problem *p, int n, int i, int j) {
  return p->A_formed ? p->A[(size_t)j * n + i] : sb_kept_op_entry(&p->op, i, j);
}

/* Stage 2's view of the damped matrix on the operator: A's column with the
 * compliance on its diagonal, in scratch (the columns' block is kept for
 * the next column and must stay A's). */
typedef struct {
  kept_columns columns;
  const double *diag;
} damped_columns;

static const double *damped_column(void *ctx, int j, double *scratch) {
  damped_columns *d = ctx;
  int n = sb_kept_op_size(d->columns.op);
  memcpy(scratch, kept_op_column(&d->columns, j, NULL), (size_t)n * sizeof(double));
  scratch[j] += d->diag[j];
  return scratch;
}

/* Impulses of a step whose LCP did not solve. The best iterate of the chain
 * is kept when it nearly solves the physical problem (residual within
 * SB_CONTACT_NEAR_TOL max(1, |b|)). Far from it the iterate can be anything:
 * an infeasible problem (a disk pressed into two opposite faces) solved after
 * Tikhonov gives impulses of order demand / eps_W, 1e10 N s, that throw
 * bodies. The damped problem answers instead: a compliant contact, A + rho
 * Delta on the impulses (Delta = diag of the Delassus block, rho =
 * SB_CONTACT_DAMPING) and mu^2 / (rho Delta_n) on each gamma (+ 1e-6 / (rho
 * Delta_n) so that mu = 0 still fixes it). Its matrix is positive definite:
 * the beta-gamma couplings cancel in x^T A x and the gamma weight dominates
 * mu fn gamma. So it has one solution, the chain finds it, and z^T w = 0
 * bounds it by the demand, |Delta^(1/2) x| <= (2 / rho)
 * |Delta^(-1/2) b| over the impulses x: about half the velocity change the
 * step asked for, with fn >= 0 and friction beyond the cone by at most the
 * gamma term. If even that fails the contacts apply nothing this step.
 * Delta is floored at SB_CONTACT_DAMPING_FLOOR of its largest entry: a row
 * without mobility (a friction direction that no impulse moves; an
 * immobile normal never gets here, drop_immobile_kept) would otherwise
 * leave the matrix semidefinite, and its gamma weight infinite.
 * Stages 2 and 3 are redone afterwards so that As (where A is formed) and
 * the scales show the real problem. On the operator (A unformed) the damped
 * matrix is op's with the compliance added to its diagonal: no matrix is
 * formed unless a solver that reads a stored one runs. Returns 1 when that
 * formed it. */
static int damped_fallback(sb_contact_problem *p, int n, int nk, int bs, const sb_contact_options *opt,
                           sb_contact_info *info) {
  const double rho = SB_CONTACT_DAMPING;
  info->damped_passes++;
  /* A unformed (the pass reads its LCP from op): so is the damped matrix,
   * op's with the compliance as its diagonal */
  int on_op = !p->A_formed;
  const double *b = p->b;
  double *d = p->damp_diag;
  double dmax = 0;
  for (int a = 0; a < nk; a++)
    for (int k = a * bs; k < a * bs + bs - 1; k++) dmax = fmax(dmax, kept_entry(p, n, k, k));
  double floor = SB_CONTACT_DAMPING_FLOOR * dmax;
  for (int a = 0; a < nk; a++) {
    int o = a * bs, g = o + bs - 1;
    double mu = kept_entry(p, n, g, o), dn = fmax(kept_entry(p, n, o, o), floor);
    for (int k = o; k < g; k++) d[k] = rho * fmax(kept_entry(p, n, k, k), floor);
    d[g] = (mu * mu + 1e-6) / (rho * dn);
  }
  memcpy(p->bs, b, n * sizeof(double));
  sb_lcp_options lo = opt->lcp;
  lo.warm_start = 0;
  lo.nblock = nk;
  lo.block = p->blocks;
  const double *Ms = p->As;
  sb_kept_op_conditioned damped = {.op = &p->op, .dr = p->dr, .dc = p->dc, .eps = 0, .diag = d,
                                   .xs = p->cond_x, .t = p->cond_t};
  sb_lcp_entries entries = {.ctx = &damped, .entry = sb_kept_op_conditioned_entry,
                            .column = sb_kept_op_conditioned_column,
                            .principal = sb_kept_op_conditioned_principal,
                            .column_rows = sb_kept_op_conditioned_column_rows,
                            .apply = sb_kept_op_conditioned_apply,
                            .apply_bound = sb_kept_op_conditioned_apply_bound,
                            .apply_transposed = sb_kept_op_conditioned_apply_transposed,
                            .apply_cost = sb_kept_op_apply_cost(&p->op), .storage = p->As};
  if (on_op) {
    damped_columns columns = {{&p->op, p->ruiz_block, -1}, d};
    sb_ruiz_scales(n, damped_column, &columns, p->bs, p->dr, p->dc, opt->ruiz_iterations, 0, p->ruizw);
    Ms = NULL;
    lo.entries = &entries;
  } else {
    memcpy(p->As, p->A, (size_t)n * n * sizeof(double));
    for (int k = 0; k < n; k++) p->As[(size_t)k * n + k] += d[k];
    sb_ruiz(n, p->As, p->bs, p->dr, p->dc, opt->ruiz_iterations, p->ruizw);
    lo.entries = NULL; /* As is A damped, not the conditioned operator */
  }
  memset(p->zs, 0, n * sizeof(double));
  sb_lcp_status st = SB_LCP_BAD_INPUT; /* no mobility at all, or none finite: nothing to damp */
  int formed = 0;
  if (dmax > 0 && isfinite(dmax)) {
    sb_lcp_info dinfo;
    st = sb_lcp_solve(p->lcp, n, Ms, p->bs, p->zs, NULL, &lo, &dinfo);
    formed = on_op && dinfo.matrix_formed;
    count_solve(info, &dinfo);
    info->lcp.iterations += dinfo.iterations;
    info->lcp.attempts += dinfo.attempts;
    info->lcp.time_us += dinfo.time_us;
  }
  for (int k = 0; k < n; k++) p->z[k] = st == SB_LCP_SOLVED ? p->zs[k] * p->dc[k] : 0;
  canonical_gamma(p, n, nk, bs, p->z, p->wv);
  info->residual = residual_at(n, p->z, p->wv, &info->complementarity);
  size_t len = strlen(info->lcp.message);
  snprintf(info->lcp.message + len, sizeof info->lcp.message - len, "%s%s (its physical residual %.3g)",
           len ? "; applied " : "applied ", st == SB_LCP_SOLVED ? "the damped answer" : "no impulse", info->residual);
  /* stages 2 and 3 of the real problem again, cold, as the stored path
   * redoes them (the same scales) */
  memcpy(p->bs, b, n * sizeof(double));
  if (on_op) {
    kept_columns columns = {&p->op, p->ruiz_block, -1};
    sb_ruiz_scales(n, kept_op_column, &columns, p->bs, p->dr, p->dc, opt->ruiz_iterations, 0, p->ruizw);
    p->As_formed = 0; /* As holds the damped matrix, if anything */
  } else {
    sb_ruiz_copy(n, p->A, p->As, p->bs, p->dr, p->dc, opt->ruiz_iterations, p->ruizw);
    sb_tikhonov(n, p->As, p->normal_mask, opt->tikhonov);
    p->As_formed = 1;
  }
  return formed;
}

/* The kept operator under the conditioning now in p->dr, p->dc (stage 2)
 * and opt's Tikhonov on p->normal_mask (stage 3): As's entries, and with
 * lcp_from_operator 2 its products. */
static void condition_operator(sb_contact_problem *p, const sb_contact_options *opt) {
  p->cond = (sb_kept_op_conditioned){.op = &p->op, .dr = p->dr, .dc = p->dc, .mask = p->normal_mask,
                                     .eps = opt->tikhonov, .xs = p->cond_x, .t = p->cond_t};
  int products = p->lcp_matrix == SB_CONTACT_LCP_OPERATOR;
  p->cond_entries = (sb_lcp_entries){.ctx = &p->cond, .entry = sb_kept_op_conditioned_entry,
                                     .column = sb_kept_op_conditioned_column,
                                     .principal = sb_kept_op_conditioned_principal,
                                     .column_rows = sb_kept_op_conditioned_column_rows,
                                     .apply = products ? sb_kept_op_conditioned_apply : NULL,
                                     .apply_bound = products ? sb_kept_op_conditioned_apply_bound : NULL,
                                     .apply_transposed = products ? sb_kept_op_conditioned_apply_transposed : NULL,
                                     .apply_cost = products ? sb_kept_op_apply_cost(&p->op) : 0,
                                     .storage = p->As};
}

/* Stages 2 and 3, the solve, the proximal correction, the physical check
 * and, if it failed, the damped fallback, for the LCP assembled in p->A, p->b
 * (nk contacts of bs = r + 2 variables; normal_mask and blocks set). zwarm:
 * a guess in physical units (n, may be p->z) or NULL. warm_scales: stage 2
 * starts from the scales in p->dr, p->dc (the last step's, by contact
 * identity; a fixed point costs one sweep where a cold start takes three or
 * four), else from 1. The answer, in physical units, is left in p->z. */
static void solve_assembled(sb_contact_problem *p, int n, int nk, int bs, const double *zwarm, int warm_scales,
                            const sb_contact_options *opt, sb_contact_info *info) {
  const double *A = p->A, *b = p->b;
  /* A unformed: the solve reads the conditioned LCP from op alone, As is
   * formed only if a solver that reads a stored matrix runs */
  int unformed = !p->A_formed;
  memcpy(p->bs, b, n * sizeof(double));
  kept_columns columns = {&p->op, p->ruiz_block, -1};
  if (unformed)
    sb_ruiz_scales(n, kept_op_column, &columns, p->bs, p->dr, p->dc, opt->ruiz_iterations, warm_scales, p->ruizw);
  else if (warm_scales)
    sb_ruiz_copy_from(n, A, p->As, p->bs, p->dr, p->dc, opt->ruiz_iterations, p->ruizw);
  else
    sb_ruiz_copy(n, A, p->As, p->bs, p->dr, p->dc, opt->ruiz_iterations, p->ruizw);
  if (!unformed) sb_tikhonov(n, p->As, p->normal_mask, opt->tikhonov);
  p->As_formed = !unformed;
  const double *Ms = unformed ? NULL : p->As;
  for (int i = 0; i < n; i++) p->zs[i] = zwarm && isfinite(zwarm[i]) ? zwarm[i] / p->dc[i] : 0;
  for (int i = 0; i < n && zwarm && p->has_z2; i++) p->zs2[i] = p->z2[i] / p->dc[i];
  sb_lcp_options lo = opt->lcp;
  condition_operator(p, opt);
  lo.entries = p->op_valid && p->lcp_matrix != SB_CONTACT_LCP_STORED ? &p->cond_entries : NULL;
  lo.warm_start = zwarm != NULL;
  lo.nblock = nk;
  lo.block = p->blocks;
  lo.friction_blocks = 1; /* eq. (11)-(13)'s pyramids: the warm pivot knows their singular sets */
  lo.border_factors = 1;  /* a pass adding the answer's degenerate indices borders the last set's LU */
  lo.warm_last_set = 1;   /* the last step's solved set, degenerate indices included, joins the guess's */
  lo.second_guess = zwarm && p->has_z2 ? p->zs2 : NULL;
  sb_lcp_solve(p->lcp, n, Ms, p->bs, p->zs, NULL, &lo, &info->lcp);
  lo.second_guess = NULL;
  p->has_z2 = 0;
  count_solve(info, &info->lcp);
  p->As_formed |= info->lcp.matrix_formed;
  /* Proximal correction: solving (A + eps I_N) z = ... - eps I_N z_prev
   * again removes the O(eps) bias Tikhonov leaves in the normal velocities. */
  for (int k = 0; k < opt->proximal_steps && opt->tikhonov > 0 && info->lcp.status == SB_LCP_SOLVED; k++) {
    for (int i = 0; i < n; i++) p->wv[i] = p->bs[i] - (p->normal_mask[i] ? opt->tikhonov * p->zs[i] : 0);
    memcpy(p->z, p->zs, n * sizeof(double)); /* kept if the correction fails */
    sb_lcp_info pinfo;
    lo.warm_start = 1;
    lo.same_matrix = 1; /* As as the solve above: its active set's factorization is reused */
    lo.reuse_solved_set = 1; /* and tried first: q moved by O(eps) only */
    sb_lcp_solve(p->lcp, n, Ms, p->wv, p->zs, NULL, &lo, &pinfo);
    count_solve(info, &pinfo);
    p->As_formed |= pinfo.matrix_formed;
    info->lcp.iterations += pinfo.iterations;
    info->lcp.time_us += pinfo.time_us;
    if (pinfo.status != SB_LCP_SOLVED) {
      memcpy(p->zs, p->z, n * sizeof(double));
      break;
    }
    info->lcp.residual = pinfo.residual;
    info->lcp.complementarity = pinfo.complementarity;
  }
  for (int k = 0; k < n; k++) p->z[k] = p->zs[k] * p->dc[k];
  canonical_gamma(p, n, nk, bs, p->z, p->wv);
  info->residual = residual_at(n, p->z, p->wv, &info->complementarity);
  /* Solved means solved in the physical problem: a conditioned or
   * regularized solve of an infeasible one (a disk that no impulse can
   * move out of a body) must not count. */
  double qmax = 1;
  for (int i = 0; i < n; i++) qmax = fmax(qmax, fabs(b[i]));
  double tol = fmax(opt->lcp.tol, 1e-9) * qmax;
  if (info->lcp.status == SB_LCP_SOLVED && !(info->residual <= tol)) {
    info->lcp.status = SB_LCP_STALLED;
    snprintf(info->lcp.message, sizeof info->lcp.message,
             "the conditioned LCP was solved, but the physical residual is %.3g (> %.3g)", info->residual, tol);
  }
  int damped_formed = 0;
  if (info->lcp.status != SB_LCP_SOLVED && !(info->residual <= SB_CONTACT_NEAR_TOL * qmax))
    damped_formed = damped_fallback(p, n, nk, bs, opt, info);
  info->matrices_formed += p->op_valid && p->lcp_matrix == SB_CONTACT_LCP_OPERATOR &&
                           (p->A_formed || p->As_formed || damped_formed);
}

/* The normal row's gap term for a gap g (m) at step h. A gap closes within
 * the step (g / h, speculative); a penetration deeper than the surface
 * layer is pushed out at alpha of its excess a step, at most at push_speed;
 * one within the layer is left where it is (docs/contact_scaling.md,
 * session 36).
 * - The layer is what lets a resting contact rest: with the term's kink at
 *   g = 0 itself (layer 0, the paper's), a contact that the last step's
 *   linearization left a nanometre in is pushed out and one left a
 *   nanometre above is unloaded, so a rope lying on a plane jitters and its
 *   loads move from disk to disk every step, each move a cold solve.
 * - The cap keeps a contact found deep (a body placed inside another) from
 *   being thrown out at alpha of a centimetre a millisecond: a rod clamped
 *   with its disks 23 mm inside a floor was pushed out at 11.5 m/s, whipped,
 *   and diverged. */
static double gap_term(double g, double h, const sb_contact_options *opt) {
  if (g >= 0) return opt->speculative ? g / h : 0;
  double excess = g + opt->surface_layer;
  if (!(excess < 0)) return 0;
  double push = opt->stabilization * excess / h;
  return push < -opt->push_speed ? -opt->push_speed : push;
}

static int valid_gap_options(const sb_contact_options *opt) {
  return isfinite(opt->surface_layer) && opt->surface_layer >= 0 && opt->push_speed > 0;
}

/* Normal velocity plus gap term of contact i before any impulse: < 0 closes
 * within the step. */
/* The contacts' free relative velocities in their frames, u = J vfree plus the static bodies'
 * part, as one product by the rows (a dot product per row cost more in calls than in
 * arithmetic at the arms' sizes). */
static void free_velocities(sb_contact_problem *p) {
  int m3 = 3 * p->nc;
  if (m3 == 0) return;
  memcpy(p->u, p->vstatic, (size_t)m3 * sizeof(double));
  if (p->ndof > 0)
    cblas_dgemv(CblasColMajor, CblasTrans, p->ndof, m3, 1.0, p->Jt, p->max_dof, p->vfree, 1, 1.0, p->u, 1);
}

static double closing_speed(const sb_contact_problem *p, int i) { return p->u[3 * i + 2] + p->stabv[i]; }

/* Stage 1's force-blind priority: the contacts that close within the step. */
static void closing_first(sb_contact_problem *p) {
  for (int i = 0; i < p->nc; i++) p->prio[i] = closing_speed(p, i) < 0;
}

/* Where the last step's answer holds the contact with this id, or -1. */
int sb_contact_warm_capacity(int max_contacts) {
  return 2 + max_contacts * (1 + 3 + 2 * (SB_CONTACT_MAX_DIRECTIONS + 2));
}

/* A variable's two stage-2 scales (powers of two) as one double, exactly:
 * 256 (e_r + 64) + (e_c + 64) for the exponents within -64..64 that a warm
 * Ruiz start accepts (sb_ruiz_scale_ok; any other scale starts from 1 anyway,
 * so it is kept as 1). The state then holds them in the room of one. The
 * exponents are read and written as bits: this runs for every saved
 * variable at every step (the host saves and loads the warm start around
 * each one), where frexp, ldexp and fmod cost more than the sweep saved on
 * a small arm. */
static int scale_exponent(double s) {
  if (!sb_ruiz_scale_ok(s)) return 0;
  uint64_t bits;
  memcpy(&bits, &s, sizeof bits);
  return (int)(bits >> 52) - 1023; /* sb_ruiz_scale_ok: positive, a power of two */
}

static double pow2_of(int e) {
  uint64_t bits = (uint64_t)(e + 1023) << 52; /* e within -64..64: a normal number */
  double s;
  memcpy(&s, &bits, sizeof s);
  return s;
}

/* Added to a packed pair of scales (below 256 * 129) where the variable
 * was in the last solved set (prev_in): the state keeps the flag in the
 * same double, exactly. */
#define LAST_SET_FLAG 65536.0

static double pack_scales(double dr, double dc) {
  return 256.0 * (scale_exponent(dr) + 64) + (scale_exponent(dc) + 64);
}

/* The inverse; a value pack_scales cannot have written (a state from
 * elsewhere) gives 1 and 1: a cold start. So does 0, which pack_scales
 * writes only for 2^-64 and 2^-64, so that a block a host zeroed starts
 * cold rather than at the most extreme scales. */
static void unpack_scales(double v, double *dr, double *dc) {
  *dr = *dc = 1;
  if (!(v > 0 && v < 256.0 * 129) || v != (double)(int)v) return;
  int iv = (int)v, er = (iv >> 8) - 64, ec = (iv & 255) - 64;
  if (ec > 64) return;
  *dr = pow2_of(er);
  *dc = pow2_of(ec);
}

int sb_contact_warm_save(const sb_contact_problem *p, double *out) {
  int bs = p->prev_r + 2, k = 2;
  out[0] = p->nprev;
  out[1] = p->prev_r;
  for (int i = 0; i < p->nprev; i++) {
    out[k++] = (double)p->prev_id[i];
    memcpy(out + k, p->prev_t1 + 3 * i, 3 * sizeof(double));
    k += 3;
    memcpy(out + k, p->prev_z + (size_t)i * bs, bs * sizeof(double));
    k += bs;
    for (int v = 0; v < bs; v++) {
      size_t e = (size_t)i * bs + v;
      out[k++] = pack_scales(p->prev_dr[e], p->prev_dc[e]) + (p->prev_in[e] ? LAST_SET_FLAG : 0);
    }
  }
  return k;
}

void sb_contact_warm_load(sb_contact_problem *p, const double *in) {
  int n = (int)in[0], r = (int)in[1], bs = r + 2, k = 2;
  /* a count or an r this problem cannot hold is no warm start (a state
   * written for another model) */
  if (!(in[0] >= 0) || n > p->max_c || r < 0 || r > p->max_r) n = 0;
  p->nprev = n;
  p->prev_r = n > 0 ? r : 0;
  for (int i = 0; i < n; i++) {
    p->prev_id[i] = (long)in[k++];
    memcpy(p->prev_t1 + 3 * i, in + k, 3 * sizeof(double));
    k += 3;
    memcpy(p->prev_z + (size_t)i * bs, in + k, bs * sizeof(double));
    k += bs;
    for (int v = 0; v < bs; v++) {
      size_t e = (size_t)i * bs + v;
      double x = in[k++];
      p->prev_in[e] = x >= LAST_SET_FLAG;
      unpack_scales(p->prev_in[e] ? x - LAST_SET_FLAG : x, p->prev_dr + e, p->prev_dc + e);
    }
  }
}

static int previous_index(const sb_contact_problem *p, long id) {
  for (int k = 0; k < p->nprev && id >= 0; k++)
    if (p->prev_id[k] == id) return k;
  return -1;
}

/* Turns contact i's tangent axes about its normal: t1 <- c t1 + s t2,
 * t2 = n x t1 <- c t2 - s t1 (c^2 + s^2 = 1), with everything already
 * expressed in them (Jacobian rows, static and free velocities). */
static void turn_tangents(sb_contact_problem *p, int i, double c, double s) {
  size_t ld = p->max_dof;
  double *j1 = p->Jt + (size_t)3 * i * ld, *j2 = j1 + ld;
  cblas_drot(p->ndof, j1, 1, j2, 1, c, s);
  double *pairs[2] = {p->vstatic + 3 * i, p->u + 3 * i};
  for (int k = 0; k < 2; k++) {
    double a = pairs[k][0], b = pairs[k][1];
    pairs[k][0] = c * a + s * b;
    pairs[k][1] = c * b - s * a;
  }
  double *R = p->frame + 9 * i;
  for (int r = 0; r < 3; r++) {
    double a = R[3 * r], b = R[3 * r + 1];
    R[3 * r] = c * a + s * b;
    R[3 * r + 1] = c * b - s * a;
  }
}

/* A world direction d in contact i's tangent axes, normalized: 0 when d is
 * (nearly) along the normal. */
static int tangent_coordinates(const sb_contact_problem *p, int i, const double d[3], double *c, double *s) {
  const double *R = p->frame + 9 * i;
  double a = R[0] * d[0] + R[3] * d[1] + R[6] * d[2], b = R[1] * d[0] + R[4] * d[1] + R[7] * d[2];
  double len = hypot(a, b);
  if (!(len > 1e-6)) return 0;
  *c = a / len;
  *s = b / len;
  return 1;
}

/* A contact slides when its tangential speed after the solve exceeds this
 * (m/s): far above what the solvers leave at a sticking contact (their
 * physical acceptance is 1e-9 of max(1, |b|)), far below any slide whose
 * friction direction matters. */
#define SLIDING_SPEED 1e-6

/* The friction pyramid is the cone only along its directions: between two
 * of them it holds mu fn cos(pi / r) at worst, and a contact sliding between
 * them is pushed sideways, toward the nearer one (a block sliding at 30
 * degrees to t1 with r = 4: 0.87 mu g, veering). So each contact's first
 * direction t1 is turned, before the solve, onto the friction it is about to
 * need:
 *   - a contact that carried friction or slid last step: the direction its
 *     answer was saved in (save_next_direction): against its slip while it
 *     slides fast, else along the friction it carried (what sticking took,
 *     or what a slow slide met);
 *   - a new contact, or one without friction last step: against its free
 *     tangential velocity u_t, the sliding or pull to come, unless u_t is
 *     lost in round-off;
 *   - else the last step's t1 of the same contact (continuous in time); a new
 *     contact keeps sb_contact_frame's.
 * u_t is not used for a contact that carried friction: on a rope held by
 * many contacts it is the small difference of large forces, and its
 * direction is not the slip's (a capstan rope turned onto it crept off the
 * cylinder at 0.96 of the threshold, docs/capstan.md). A new t1 within 1e-6
 * rad of the last step's keeps the last one (the warm start then stands as
 * it was). */
static void align_friction_frames(sb_contact_problem *p) {
  for (int i = 0; i < p->nc; i++) {
    if (p->c[i].friction == 0) continue;
    const double *u = p->u + 3 * i;
    int k = previous_index(p, p->c[i].id);
    double cp = 1, sp = 0, c = 1, s = 0, tol = 1e-9 * fmax(fabs(u[2]), 1e-3);
    int carried = k >= 0 && tangent_coordinates(p, i, p->prev_t1 + 3 * k, &cp, &sp), want = 0;
    if (carried && p->prev_r >= 3) {
      int r = p->prev_r;
      const double *zp = p->prev_z + (size_t)k * (r + 2);
      double a = 0, b = 0;
      for (int l = 0; l < r; l++) {
        a += cos(2 * M_PI * l / r) * zp[1 + l];
        b += sin(2 * M_PI * l / r) * zp[1 + l];
      }
      double ft = hypot(a, b);
      /* it carried friction or slid: its saved t1 is where save_next_direction pointed it */
      if ((ft > 1e-9 * fabs(zp[0]) && ft > 0) || zp[r + 1] > SLIDING_SPEED) {
        c = cp;
        s = sp;
        want = 1;
      }
    }
    double ut = hypot(u[0], u[1]);
    if (!want && ut > tol) {
      c = -u[0] / ut;
      s = -u[1] / ut;
      want = 1;
    }
    if (want) {
      /* sin of the angle from the carried t1 to the new one */
      if (carried && fabs(cp * s - sp * c) < 1e-6 && cp * c + sp * s > 0) c = cp, s = sp;
    } else if (carried) {
      c = cp;
      s = sp;
    }
    if (c != 1 || s != 0) turn_tangents(p, i, c, s);
  }
}

/* A sliding contact's pyramid follows its slip only while the slip is this
 * many times what the step's impulses changed its tangential velocity by:
 * the direction is taken one step late, and where the friction itself sets
 * the slip (a slide about to stop, a box spinning down) following it
 * overshoots, step after step (a box starting down an incline: the spin's
 * slip grew 13-fold a step from round-off while under about h mu g). */
#define SLIP_TRACKING 4

/* For align_friction: the saved answer of contact ia (t1 world, z = [fn,
 * beta (r), gamma]) re-expressed in the axes the next step should start
 * from (align_friction_frames takes the saved t1 when the contact carried
 * friction or slid):
 *   - sliding faster than SLIP_TRACKING times its velocity change: t1
 *     against its slip after the solve (Coulomb: friction opposes the slip),
 *     and the guess a steady slide repeats: the friction's magnitude on t1
 *     alone, gamma the sliding speed (the bound max_l -d_l . v_t, along t1),
 *     so that the warm start's active set stands. The friction's own
 *     direction would not do: a pyramid's sliding friction sits on a
 *     vertex, so turned onto it the pyramid keeps its first direction while
 *     the slip turns away by up to pi / r (a box yawing as it slides);
 *   - else, carrying friction: t1 along it (what sticking took, or a slow
 *     slide met), beta the same friction vector in these axes (pyramid_of);
 *   - else as solved. */
static void pyramid_of(const double lt[2], int r, double *beta);
static void save_next_direction(const sb_contact_problem *p, int ia, int r, double *t1, double *z) {
  const double *v = p->uf + 3 * ia, *u = p->u + 3 * ia, *R = p->frame + 9 * ia;
  double a = 0, b = 0, c, s, lt[2];
  for (int l = 0; l < r; l++) {
    a += cos(2 * M_PI * l / r) * z[1 + l];
    b += sin(2 * M_PI * l / r) * z[1 + l];
  }
  double speed = hypot(v[0], v[1]), change = hypot(v[0] - u[0], v[1] - u[1]), ft = hypot(a, b);
  if (speed > SLIDING_SPEED && speed > SLIP_TRACKING * change) {
    /* the answer a steady slide repeats: its friction on t1, gamma its speed */
    c = -v[0] / speed;
    s = -v[1] / speed;
    memset(z + 1, 0, r * sizeof(double));
    z[1] = ft;
    z[r + 1] = speed;
    for (int k = 0; k < 3; k++) t1[k] = c * R[3 * k] + s * R[3 * k + 1];
    return;
  }
  if (!(ft > 1e-9 * fabs(z[0]) && ft > 0)) return;
  c = a / ft;
  s = b / ft;
  /* the new axes are (c, s) and (-s, c) in the solved ones */
  lt[0] = c * a + s * b;
  lt[1] = c * b - s * a;
  pyramid_of(lt, r, z + 1);
  for (int k = 0; k < 3; k++) t1[k] = c * R[3 * k] + s * R[3 * k + 1];
}

/* The warm start of kept contact ia (entry k of the last step, r
 * directions) in its current axes: as saved when the axes are the saved
 * ones, else its friction impulse turned into them. */
static void warm_guess(const sb_contact_problem *p, int ia, int k, int r, double *z) {
  int bs = r + 2;
  const double *zp = p->prev_z + (size_t)k * bs;
  memcpy(z, zp, bs * sizeof(double));
  double c, s;
  if (!tangent_coordinates(p, ia, p->prev_t1 + 3 * k, &c, &s) || (c > 0 && fabs(s) <= 1e-12)) return;
  double a = 0, b = 0, lt[2];
  for (int l = 0; l < r; l++) {
    a += cos(2 * M_PI * l / r) * zp[1 + l];
    b += sin(2 * M_PI * l / r) * zp[1 + l];
  }
  /* the saved axes are (c, s) and (-s, c) in the current ones */
  lt[0] = c * a - s * b;
  lt[1] = s * a + c * b;
  pyramid_of(lt, r, z + 1);
}

/* The lower half of W = G^T G (G = p->Y, the kept contacts' whitened
 * columns) by blocks of contacts: a block pair's product runs over the rows
 * both blocks can fill (rows_of) only, so where the contacts lie along a
 * chain in order of their proximal coordinates (a rod on a plane) most of
 * the zero rows are never read. */
#define DELASSUS_BLOCK 8
static void delassus_lower(sb_contact_problem *p, int nk) {
  int ld = p->max_dof, m3k = 3 * nk;
  double *W = p->W;
  int skips = 0;
  for (int k = 0; k < p->nb; k++) skips |= keeps_heads(p, k);
  if (!skips) { /* no rows to skip: W as one product */
    cblas_dsyrk(CblasColMajor, CblasLower, CblasTrans, m3k, p->ndof, 1.0, p->Y, ld, 0.0, W, m3k);
    return;
  }
  for (int a0 = 0; a0 < nk; a0 += DELASSUS_BLOCK) {
    int a1 = a0 + DELASSUS_BLOCK < nk ? a0 + DELASSUS_BLOCK : nk, ra = 0;
    for (int a = a0; a < a1; a++) ra = rows_of(p, p->kept[a]) > ra ? rows_of(p, p->kept[a]) : ra;
    const double *Ga = p->Y + (size_t)(3 * a0) * ld;
    double *Wd = W + (size_t)(3 * a0) * m3k + 3 * a0;
    for (int c0 = 0; c0 <= a0; c0 += DELASSUS_BLOCK) {
      int c1 = c0 + DELASSUS_BLOCK < nk ? c0 + DELASSUS_BLOCK : nk, rc = 0;
      for (int c = c0; c < c1; c++) rc = rows_of(p, p->kept[c]) > rc ? rows_of(p, p->kept[c]) : rc;
      int rows = ra < rc ? ra : rc;
      double *Wb = W + (size_t)(3 * c0) * m3k + 3 * a0;
      if (rows == 0) {
        for (int j = 0; j < 3 * (c1 - c0); j++) memset(Wb + (size_t)j * m3k, 0, 3 * (a1 - a0) * sizeof(double));
      } else if (c0 == a0) {
        cblas_dsyrk(CblasColMajor, CblasLower, CblasTrans, 3 * (a1 - a0), rows, 1.0, Ga, ld, 0.0, Wd, m3k);
      } else {
        cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, 3 * (a1 - a0), 3 * (c1 - c0), rows, 1.0, Ga, ld,
                    p->Y + (size_t)(3 * c0) * ld, ld, 0.0, Wb, m3k);
      }
    }
  }
}

/* The Delassus blocks of the kept contacts, W_k = J_k M~^-1 J_k^T (3 nk x
 * 3 nk, column-major, in the order of p->kept), into p->W. Only the kept
 * contacts: stage 1 keeps at most about the rank of the normals (the
 * bodies' dofs), so this is O(dofs^2 nk) where the product over every
 * contact was O(dofs m^2), and m runs to hundreds along a lying rod. W is
 * G_k^T G_k with G_k = F^-1 J_k^T (M~ = F F^T, F the bodies' Cholesky or
 * half_solve factor): one triangular solve instead of the two of M~^-1, and
 * a symmetric rank-k product (dsyrk, the lower half, mirrored) instead of
 * a general one. Its last bits differ from J_k^T (M~^-1 J_k^T); the
 * degenerate LCPs that once followed them (a block on a plane with dozens of
 * dependent contacts, the 12-section arm sliding) no longer do since Lemke
 * breaks its ties by perturbation. The normal columns of G_k are stage 1's
 * when it whitened them this step (keep_whitened_normals): only the tangent
 * rows are solved then, two thirds of the columns. Y is overwritten. */
static void kept_delassus(sb_contact_problem *p, int nk) {
  int N = p->ndof, ld = p->max_dof, m3k = 3 * nk, ns = 0;
  /* the columns stage 1 has not whitened this step, packed at the front of
   * Y and solved at once ... */
  for (int a = 0; a < nk; a++) {
    int ia = p->kept[a];
    for (int k = 0; k < (p->wn_ok[ia] ? 2 : 3); k++) {
      p->colc[ns] = ia;
      memcpy(p->Y + (size_t)(ns++) * ld, p->Jt + (size_t)(3 * ia + k) * ld, N * sizeof(double));
    }
  }
  apply_all(p, 1, p->Y, ns, ld, p->colc);
  /* ... then spread to their places (t1, t2, n per contact, from the last:
   * a column only moves up) with stage 1's normals put in between */
  for (int a = nk - 1; a >= 0; a--) {
    int ia = p->kept[a], cached = p->wn_ok[ia];
    double *dst = p->Y + (size_t)(3 * a) * ld;
    if (cached) memcpy(dst + 2 * (size_t)ld, p->wn + (size_t)ia * ld, N * sizeof(double));
    for (int k = cached ? 1 : 2; k >= 0; k--) {
      ns--;
      if (ns != 3 * a + k) memcpy(dst + (size_t)k * ld, p->Y + (size_t)ns * ld, N * sizeof(double));
    }
  }
  delassus_lower(p, nk);
  double *W = p->W;
  for (int j = 0; j < m3k; j++)
    for (int i = j + 1; i < m3k; i++) W[(size_t)i * m3k + j] = W[(size_t)j * m3k + i];
  /* held ends: the kept contacts see the Schur complement of the bilateral block */
  sb_bilateral_schur_kept(p->bil, 3 * p->nc, nk, p->kept, p->W);
}

/* Relative velocities after the impulses, every contact: u + J M~^-1 p
 * with p = J^T lambda (already in p->p), O(dofs m) instead of W lambda over
 * all contacts. pv is overwritten. */
static void final_velocities(sb_contact_problem *p) {
  int N = p->ndof, ld = p->max_dof, m3 = 3 * p->nc;
  int rows = 0, held = 0;
  sb_bilateral_rank(p->bil, &rows, &held);
  /* with held ends u is the Schur complement's and p carries E^T lambda_e
   * too: start from the unconstrained free velocity instead */
  if (held > 0) {
    memcpy(p->uf, p->vstatic, m3 * sizeof(double));
    if (N == 0 || m3 == 0) return;
    memcpy(p->pv, p->p, N * sizeof(double));
    apply_all(p, 0, p->pv, 1, ld, NULL);
    cblas_daxpy(N, 1.0, p->vfree, 1, p->pv, 1);
    cblas_dgemv(CblasColMajor, CblasTrans, N, m3, 1.0, p->Jt, ld, p->pv, 1, 1.0, p->uf, 1);
    return;
  }
  memcpy(p->uf, p->u, m3 * sizeof(double));
  if (N == 0 || m3 == 0) return;
  memcpy(p->pv, p->p, N * sizeof(double));
  apply_all(p, 0, p->pv, 1, ld, NULL);
  cblas_dgemv(CblasColMajor, CblasTrans, N, m3, 1.0, p->Jt, ld, p->pv, 1, 1.0, p->uf, 1);
}

/* Eq. (11)-(13)'s matrix over the kept contacts from their Delassus
 * blocks (p->op: W, the directions, mu) into p->A (n = nk (r + 2),
 * column-major), block column by block column. Every entry is written: no
 * clearing pass. r is a constant where assemble_kept_A calls it with 4, the
 * default: the loops of sb_kept_op_block_column then unroll. */
static inline void assemble_kept_matrix(sb_contact_problem *p, int nk, int r) {
  size_t n = (size_t)nk * (r + 2);
  for (int c = 0; c < nk; c++) sb_kept_op_block_column(&p->op, r, c, p->A + (size_t)c * (r + 2) * n, n);
}

/* W and mu finite, so A's entries are (short of an overflow no physical
 * Delassus block reaches): the solve's scan of A, where A is not formed. */
static int kept_op_finite(const sb_contact_problem *p) {
  size_t m3k = 3 * (size_t)p->op.nk;
  for (size_t k = 0; k < m3k * m3k; k++)
    if (!isfinite(p->op.W[k])) return 0;
  for (int a = 0; a < p->op.nk; a++)
    if (!isfinite(p->op.mu[a])) return 0;
  return 1;
}

/* A over the kept contacts, from op's blocks. */
SB_WIDE_CLONES
static void assemble_kept_A(sb_contact_problem *p) {
  if (p->op.r == 4)
    assemble_kept_matrix(p, p->op.nk, 4);
  else
    assemble_kept_matrix(p, p->op.nk, p->op.r);
  p->A_formed = 1;
}

/* Eq. (11)-(13) over the kept contacts: b, the normal mask of stage 3, the
 * blocks, and A (assemble_kept_matrix) unless the solve will read it from
 * op alone (unformed). */
static void assemble_kept_lcp(sb_contact_problem *p, int nk, int r, const double *Dx, const double *Dy,
                              int unformed) {
  int bs = r + 2;
  p->A_formed = 0;
  if (!unformed) assemble_kept_A(p);
  for (int a = 0; a < nk; a++) {
    int ia = p->kept[a], oa = a * bs;
    double *b = p->b;
    b[oa] = p->u[3 * ia + 2] + p->stabv[ia];
    for (int k = 0; k < r; k++) b[oa + 1 + k] = Dx[k] * p->u[3 * ia] + Dy[k] * p->u[3 * ia + 1];
    b[oa + bs - 1] = 0;
    /* Stage 3 regularizes the normal and the sliding-speed bound gamma: an
     * unloaded sliding contact (fn = beta = 0, gamma > 0) has w_gamma = 0
     * whatever gamma is, a zero row in every Newton matrix (FB then stalls
     * on the arm sliding along a table with disks just above it); + eps
     * gamma in w_gamma fixes gamma, at the price of a friction O(eps gamma)
     * that the proximal step removes like the normal's bias. */
    for (int k = 0; k < bs; k++) p->normal_mask[oa + k] = k == 0 || k == bs - 1;
    p->blocks[a] = bs;
  }
}

/* ---------- The screen: stage 1 among the contacts that may act ----------
 * A rope lying in folds has most of its disks within the speculative margin
 * of disks a few places along it, separating or at rest: contacts that
 * carry no load, yet each is an independent normal that stage 1 keeps, and
 * each with a tangential slip costs the solver pivots for its friction and
 * sliding-speed rows (a falling, piling rope: hundreds of them, minutes a
 * step). With the screen, stage 1 chooses among the contacts that may
 * act only; the others are dropped contacts like the dependent ones, and the
 * check after each pass (a dropped contact that the impulses close) lets
 * any of them in and solves the pass again, so none is lost. */

/* Whether the screen is on, and which contacts stage 1 may keep: those
 * loaded in the last step's answer, and those not separating faster than the
 * fastest one closes (their free normal velocity plus gap term). */
static void screen_open(sb_contact_problem *p, const sb_contact_options *opt) {
  int m = p->nc, bs = p->prev_r + 2;
  p->screening = opt->screen != 0;
  if (!p->screening) return;
  double fastest = 0;
  for (int i = 0; i < m; i++) fastest = fmax(fastest, -closing_speed(p, i));
  for (int i = 0; i < m; i++) {
    int k = opt->warm_start && p->prev_r == opt->directions ? previous_index(p, p->c[i].id) : -1;
    p->admit[i] = closing_speed(p, i) <= fastest || (k >= 0 && p->prev_z[(size_t)k * bs] > 0);
  }
}

/* Keeps stage 1's whitened normals (St: N x ncol, leading dimension N;
 * column j is contact ids[stride j], or j without ids) for kept_delassus,
 * which then solves only the kept contacts' tangent rows. */
static void keep_whitened_normals(sb_contact_problem *p, int ncol, const double *St, const int *ids, int stride) {
  int N = p->ndof;
  for (int j = 0; j < ncol; j++) {
    int i = ids ? ids[(size_t)stride * j] : j;
    memcpy(p->wn + (size_t)i * p->max_dof, St + (size_t)j * N, N * sizeof(double));
    p->wn_ok[i] = 1;
  }
}

/* ---------- Contacts that no impulse moves ----------
 * A disk fixed at a static mount, or at a point a held end clamps, has a
 * normal without mobility: its whitened, projected column
 * (I - P_e) F^-1 J_n^T is zero, so are its W_nn and its normal row of A, and
 * the LCP reads w_n = b_n whatever the impulses. Kept, it makes the LCP
 * unsolvable wherever it closes (b_n < 0: the first disk of a rope clamped
 * at the floor's height, nanometres into it), and the damped problem then
 * divided by its W_nn; dropped but counted as a dropped contact that
 * closes, it failed every pass's check and sent each step through every
 * pass. Such a contact is left out of the LCP and of those checks, and
 * counted (sb_contact_info.immobile): no impulse there could change any
 * velocity, so the LCP loses nothing it could have answered. Stage 1's
 * zero decides it: a squared norm within rank_tol^2 of the largest seen
 * this step, which a column alone never passes in stage 1's QR. */
static int immobile_mobility(const sb_contact_problem *p, double mobility, double rank_tol) {
  return mobility <= rank_tol * rank_tol * p->mobility_max; /* NaN: not immobile, the solve names it */
}

/* Stage 1's columns (St: N x ncol, whitened and projected; column j is
 * contact ids[stride j], or j without ids): their squared norms are the
 * contacts' normal mobilities. */
static void note_column_mobility(sb_contact_problem *p, int ncol, const double *St, const int *ids, int stride,
                                 double rank_tol) {
  int N = p->ndof;
  for (int j = 0; j < ncol; j++) {
    const double *c = St + (size_t)j * N;
    p->mobility_max = fmax(p->mobility_max, cblas_ddot(N, c, 1, c, 1));
  }
  for (int j = 0; j < ncol; j++) {
    const double *c = St + (size_t)j * N;
    if (immobile_mobility(p, cblas_ddot(N, c, 1, c, 1), rank_tol)) p->immobile[ids ? ids[(size_t)stride * j] : j] = 1;
  }
}

/* The kept contacts' mobilities from their Delassus blocks (W_nn, the
 * bilateral Schur complement's), for the sets stage 1 did not choose (a
 * union pass, the forced ones, rank selection off): the immobile ones are
 * marked and taken out of keep. Returns how many. */
static int drop_immobile_kept(sb_contact_problem *p, int nk, double rank_tol) {
  size_t m3k = 3 * (size_t)nk;
  int dropped = 0;
  for (int a = 0; a < nk; a++) p->mobility_max = fmax(p->mobility_max, p->W[(3 * a + 2) * (m3k + 1)]);
  for (int a = 0; a < nk; a++) {
    int ia = p->kept[a];
    if (!immobile_mobility(p, p->W[(3 * a + 2) * (m3k + 1)], rank_tol)) continue;
    p->immobile[ia] = 1;
    p->keep[ia] = 0;
    dropped++;
  }
  return dropped;
}

/* p->kept from p->keep; returns their number. */
static int list_kept(sb_contact_problem *p) {
  int nk = 0;
  for (int i = 0; i < p->nc; i++)
    if (p->keep[i]) p->kept[nk++] = i;
  return nk;
}

/* Stage 1 over the admitted contacts only: their whitened normals as the
 * columns of St (N x admitted), their priorities, order keys and forced
 * flags gathered alongside, and the selection scattered back to keep (the
 * others 0). The whitening and the QR then cost O(N admitted), not O(N m).
 * Returns the number kept, or -1 on a LAPACK failure. */
static int screen_rank_select(sb_contact_problem *p, const sb_contact_options *opt) {
  int m = p->nc, N = p->ndof, ld = p->max_dof, na = 0;
  for (int i = 0; i < m; i++) {
    p->keep[i] = 0;
    if (!p->admit[i]) continue;
    int *at = p->screen_int + 4 * (size_t)na; /* contact, priority, forced, kept */
    at[0] = i;
    at[1] = p->prio[i];
    at[2] = p->force[i];
    p->screen_order[na] = p->order[i];
    memcpy(p->St + (size_t)na * N, p->Jt + (size_t)(3 * i + 2) * ld, N * sizeof(double));
    p->colc[na++] = i;
  }
  if (na == 0) return 0;
  apply_all(p, 1, p->St, na, N, p->colc);
  keep_whitened_normals(p, na, p->St, p->screen_int, 4);
  sb_bilateral_project(p->bil, N, ld, na, p->St);
  note_column_mobility(p, na, p->St, p->screen_int, 4, opt->rank_tol);
  /* the flags as the selection reads them: contiguous per kind */
  int *prio = p->screen_int + 4 * (size_t)m, *force = prio + m, *keep = force + m;
  for (int j = 0; j < na; j++) {
    prio[j] = p->screen_int[4 * j + 1];
    force[j] = p->screen_int[4 * j + 2];
  }
  int kept = sb_rank_select_forced(N, na, p->St, prio, p->order_active ? p->screen_order : NULL, force,
                                   opt->rank_tol, keep, p->qrwork, p->lqrwork, p->iwork);
  for (int j = 0; j < na && kept >= 0; j++) p->keep[p->screen_int[4 * j]] = keep[j];
  return kept;
}

/* After a pass: contact i's final normal velocity plus its gap term, and
 * whether that closes it within the step. */
static double final_normal_speed(const sb_contact_problem *p, int i) { return p->uf[3 * i + 2] + p->stabv[i]; }

static int closes_after_pass(const sb_contact_problem *p, int i, double vtol) {
  return !p->immobile[i] && final_normal_speed(p, i) < -vtol;
}

/* After a pass: lets in the left-out contacts that its impulses close
 * within the step. Returns how many: the pass is then solved again. */
static int screen_admit_closing(sb_contact_problem *p, double vtol) {
  int admitted = 0;
  for (int i = 0; i < p->nc && p->screening; i++)
    if (!p->admit[i] && closes_after_pass(p, i, vtol)) {
      p->admit[i] = 1;
      admitted++;
    }
  return admitted;
}

/* The answer of a pass that a union pass follows, kept for that union's
 * guess (guess_from_last_pass); none where the pass was not solved. */
static void keep_pass_answer(sb_contact_problem *p, const sb_contact_info *info) {
  int nk = info->nkept, bs = p->directions + 2;
  p->pass_nk = info->lcp.status == SB_LCP_SOLVED && p->nvar == nk * bs ? nk : 0;
  if (p->pass_nk == 0) return;
  memcpy(p->pass_kept, p->kept, nk * sizeof(int));
  memcpy(p->pass_z, p->z, (size_t)nk * bs * sizeof(double));
}

/* A union pass's guesses: the pass before it answered all its contacts but
 * the closing ones this step, so its answer comes first, the closing ones
 * unloaded, and the last step's answer (in p->z on entry) second, in p->z2.
 * From the last step's answer alone, nine in ten of the lying rod's union
 * passes went cold: their first pass had moved loads between disks, which
 * the last step's answer does not know. From the first pass's alone, a
 * sliding 12-section arm's union went cold where the last step's answered
 * it, and the arm went on with another contact kept. Both lists are in
 * contact order. */
static void guess_from_last_pass(sb_contact_problem *p, int nk, int bs) {
  if (p->pass_nk == 0) return;
  memcpy(p->z2, p->z, (size_t)nk * bs * sizeof(double));
  p->has_z2 = 1;
  for (int a = 0, b = 0; a < nk; a++) {
    while (b < p->pass_nk && p->pass_kept[b] < p->kept[a]) b++;
    if (b < p->pass_nk && p->pass_kept[b] == p->kept[a])
      memcpy(p->z + (size_t)a * bs, p->pass_z + (size_t)b * bs, bs * sizeof(double));
    else
      memset(p->z + (size_t)a * bs, 0, bs * sizeof(double));
  }
}

/* A union pass: the next pass solves this pass's kept contacts and every
 * contact that would close, as given (keep_given: no selection); keep_prev
 * holds this pass's set for going back, and pass_z its answer. */
static void keep_closing_too(sb_contact_problem *p, const sb_contact_info *info, double vtol) {
  keep_pass_answer(p, info);
  memcpy(p->keep_prev, p->keep, p->nc * sizeof(int));
  for (int i = 0; i < p->nc; i++) p->keep[i] |= closes_after_pass(p, i, vtol);
  p->keep_given = 1;
}

/* Contacts the screen leaves out now. */
static int screen_count(const sb_contact_problem *p) {
  int out = 0;
  for (int i = 0; i < p->nc && p->screening; i++) out += !p->admit[i];
  return out;
}

/* What a pass of n unknowns reads its LCP from: lcp_from_operator, with
 * SB_CONTACT_LCP_AUTO decided by the size (SB_CONTACT_LCP_AUTO_MIN_N). */
static int lcp_matrix_for(int lcp_from_operator, int n) {
  if (lcp_from_operator != SB_CONTACT_LCP_AUTO) return lcp_from_operator;
  return n >= SB_CONTACT_LCP_AUTO_MIN_N ? SB_CONTACT_LCP_OPERATOR : SB_CONTACT_LCP_STORED;
}

/* Stage 1 with the current priorities, then assembly of eq. (11)-(13) over
 * the kept contacts, stages 2 and 3, and the solve; fills lambda and p. */
static int select_and_solve(sb_contact_problem *p, const sb_contact_options *opt,
                            sb_contact_info *info, char *error, int error_size) {
  int m = p->nc, N = p->ndof, ld = p->max_dof, r = opt->directions, m3 = 3 * m;
  memset(p->lambda, 0, m3 * sizeof(double));
  memset(p->p, 0, N * sizeof(double));
  int nk = 0;
  for (int attempt = 0;; attempt++) {
    if (opt->rank_selection && !p->keep_given && p->screening) {
      if (screen_rank_select(p, opt) < 0) {
        sb_errorf(error, error_size, "contact solve: rank-revealing QR failed");
        return -1;
      }
    } else if (opt->rank_selection && !p->keep_given) {
      for (int i = 0; i < m; i++) {
        memcpy(p->St + (size_t)i * N, p->Jt + (size_t)(3 * i + 2) * ld, N * sizeof(double));
        p->colc[i] = i;
      }
      apply_all(p, 1, p->St, m, N, p->colc);
      keep_whitened_normals(p, m, p->St, NULL, 0);
      sb_bilateral_project(p->bil, N, ld, m, p->St);
      note_column_mobility(p, m, p->St, NULL, 0, opt->rank_tol);
      if (sb_rank_select_forced(N, m, p->St, p->prio, p->order_active ? p->order : NULL, p->force, opt->rank_tol,
                                p->keep, p->qrwork, p->lqrwork, p->iwork) < 0) {
        sb_errorf(error, error_size, "contact solve: rank-revealing QR failed");
        return -1;
      }
    } else if (!opt->rank_selection) {
      for (int i = 0; i < m; i++) p->keep[i] = !p->screening || p->admit[i];
    }
    nk = 0;
    p->kept_dependent = p->keep_given || !opt->rank_selection;
    for (int i = 0; i < m; i++) {
      p->kept_dependent |= p->keep[i] == 2; /* forced, dependent (sb_rank_select_forced) */
      p->keep[i] = p->keep[i] != 0 && !p->immobile[i];
      nk += p->keep[i];
    }
    if (nk <= p->max_k) break;
    /* More kept contacts than the LCP holds (sb_contact_create_kept): give
     * up what stage 1 adds beyond an independent set, which is at most the
     * dofs. A union pass is answered as an unsolvable union is (the caller
     * goes back to the last pass's set); the last step's loaded contacts lose
     * their forced place (a selection as without them). */
    int forced = 0;
    for (int i = 0; i < m && p->order_active; i++) forced |= p->force[i];
    if (p->keep_given) {
      info->nkept = nk;
      info->nvar = p->nvar = 0;
      info->lcp.status = SB_LCP_BAD_INPUT;
      snprintf(info->lcp.message, sizeof info->lcp.message,
               "the union pass kept %d contacts, above the %d the LCP workspaces hold", nk, p->max_k);
      return 0;
    }
    if (opt->rank_selection && forced && attempt == 0) {
      for (int i = 0; i < m; i++) p->force[i] = 0;
      continue;
    }
    sb_errorf(error, error_size,
              "contact solve: stage 1 kept %d of %d contacts, above the %d the LCP workspaces hold%s", nk, m,
              p->max_k, opt->rank_selection ? "" : " (rank selection is off: every contact is kept)");
    return -1;
  }
  nk = list_kept(p);
  if (nk > 0) {
    kept_delassus(p, nk);
    if (drop_immobile_kept(p, nk, opt->rank_tol) > 0 && (nk = list_kept(p)) > 0) kept_delassus(p, nk);
  }
  info->nkept = nk;
  int bs = r + 2, n = nk * bs;
  p->nvar = n;
  p->directions = r;
  info->nvar = n;
  sb_kept_op_directions(&p->op, r);
  const double *Dx = p->op.Dx, *Dy = p->op.Dy;
  p->op_valid = 0;
  if (n > 0) {
    for (int a = 0; a < nk; a++) p->kept_mu[a] = p->c[p->kept[a]].friction;
    p->op.nk = nk;
    p->op.W = p->W;
    p->op.mu = p->kept_mu;
    p->op_valid = 1;
    /* Assemble eq. (11)-(13) over the kept contacts */
    p->lcp_matrix = lcp_matrix_for(opt->lcp_from_operator, n);
    info->operator_passes += p->lcp_matrix == SB_CONTACT_LCP_OPERATOR;
    assemble_kept_lcp(p, nk, r, Dx, Dy, p->lcp_matrix == SB_CONTACT_LCP_OPERATOR && kept_op_finite(p));
    /* warm start by contact identity (physical units, in z until the solve) */
    for (int a = 0; a < nk; a++) {
      int ia = p->kept[a], found = opt->warm_start && p->prev_r == r ? previous_index(p, p->c[ia].id) : -1;
      if (found >= 0) {
        warm_guess(p, ia, found, r, p->z + a * bs);
        memcpy(p->dr + a * bs, p->prev_dr + (size_t)found * bs, bs * sizeof(double));
        memcpy(p->dc + a * bs, p->prev_dc + (size_t)found * bs, bs * sizeof(double));
      } else {
        memset(p->z + a * bs, 0, bs * sizeof(double));
        for (int v = 0; v < bs; v++) p->dr[a * bs + v] = p->dc[a * bs + v] = 1;
      }
    }
    p->has_z2 = 0;
    if (opt->warm_start && p->keep_given) guess_from_last_pass(p, nk, bs);
    if (opt->warm_start) guess_unloaded_gamma(p, n, nk, bs, p->z, p->wv);
    if (p->has_z2) guess_unloaded_gamma(p, n, nk, bs, p->z2, p->wv);
    solve_assembled(p, n, nk, bs, opt->warm_start ? p->z : NULL, opt->warm_start, opt, info);
    /* impulses: contact frame (t1, t2, n) per contact, then generalized */
    for (int a = 0; a < nk; a++) {
      int ia = p->kept[a], oa = a * bs;
      double lx = 0, ly = 0;
      for (int k = 0; k < r; k++) {
        lx += Dx[k] * p->z[oa + 1 + k];
        ly += Dy[k] * p->z[oa + 1 + k];
      }
      p->lambda[3 * ia] = lx;
      p->lambda[3 * ia + 1] = ly;
      p->lambda[3 * ia + 2] = p->z[oa];
    }
    cblas_dgemv(CblasColMajor, CblasNoTrans, N, m3, 1.0, p->Jt, ld, p->lambda, 1, 0.0, p->p, 1);
  } else {
    info->lcp.status = SB_LCP_SOLVED;
  }
  sb_bilateral_recover(p->bil, N, ld, m3, p->lambda, p->p);
  return 0;
}

/* ---------- The recorded answer, reduced to a basic one ----------
 * Where the loaded contacts' impulses are dependent (a union pass over
 * thirty contacts along a sliding arm), the LCP's answer is not unique: the
 * same physical impulse J^T lambda can be spread over more or fewer of them,
 * and which spread the solver returns follows round-off. The next step's
 * stage 1 forces every contact this answer loads, and the warm start keeps
 * the spread, so the kept count would follow that round-off for as long as
 * the contacts last. A Caratheodory step removes the choice: each loaded
 * contact's impulse keeps its direction (normal and friction in the same
 * ratio, so its friction cone and sliding direction are untouched) and only
 * its magnitude moves, along a null vector of the columns c_a = J^T lambda_a
 * (their Gram matrix lambda_a^T W_ab lambda_b, W the kept Delassus blocks
 * with the bilateral Schur complement), until a load reaches zero; repeated
 * while the loaded columns are dependent. The velocities, and with them
 * every complementarity condition, stay as they were: another answer of the
 * same LCP, in which a contact carries load only where the others cannot
 * carry its share. Only the recorded answer (the next step's warm start and
 * forced set) is reduced; the impulse applied is the solver's.
 * Sets p->prev_scale[a], the factor of kept contact a's load (1 where
 * unchanged). tol: the pivot below which a column of the normalized Gram
 * matrix counts as dependent (the square of stage 1's relative tolerance). */
static void basic_loads(sb_contact_problem *p, int nk, double tol) {
  int m3k = 3 * nk, nl = 0, K = p->max_k;
  int *loaded = p->basic_int, *live = p->basic_int + K;
  double *gram = p->basic, *chol = gram + (size_t)K * K, *norm = chol + (size_t)K * K;
  double *t = norm + K, *v = t + K, *work = v + K; /* work: 2 K, then K pivots */
  lapack_int *lpiv = (lapack_int *)(work + 2 * K);
  double *scale = p->prev_scale;
  for (int a = 0; a < nk; a++) {
    scale[a] = 1;
    if (p->lambda[3 * p->kept[a] + 2] > 0) loaded[nl++] = a;
  }
  if (nl < 2) return;
  for (int j = 0; j < nl; j++) {
    const double *fj = p->lambda + 3 * p->kept[loaded[j]];
    for (int i = 0; i <= j; i++) {
      const double *fi = p->lambda + 3 * p->kept[loaded[i]];
      const double *Wij = p->W + (size_t)(3 * loaded[j]) * m3k + 3 * loaded[i];
      double g = 0;
      for (int c = 0; c < 3; c++) {
        const double *col = Wij + (size_t)c * m3k;
        g += fj[c] * (fi[0] * col[0] + fi[1] * col[1] + fi[2] * col[2]);
      }
      gram[(size_t)j * nl + i] = gram[(size_t)i * nl + j] = g;
    }
  }
  for (int i = 0; i < nl; i++) {
    norm[i] = sqrt(fmax(gram[(size_t)i * nl + i], 0));
    if (!(norm[i] > 0 && isfinite(norm[i]))) return; /* a load that moves nothing: leave the answer */
  }
  for (int j = 0; j < nl; j++)
    for (int i = 0; i < nl; i++) gram[(size_t)j * nl + i] /= norm[i] * norm[j];
  int n = nl;
  for (int q = 0; q < nl; q++) {
    live[q] = q;
    t[q] = norm[q]; /* the weight of normalized column q: load factor times its norm */
  }
  while (n > 1) {
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) chol[(size_t)j * n + i] = gram[(size_t)live[j] * nl + live[i]];
    lapack_int rank = 0;
    if (LAPACKE_dpstrf_work(LAPACK_COL_MAJOR, 'L', n, chol, n, lpiv, &rank, tol, work) < 0 || rank >= n) break;
    /* the first dependent column d = C_1 y, y = L11^-T l (l: its row of L):
     * null vector v = (y, -1) over the pivoted columns */
    for (int k = 0; k < rank; k++) v[k] = chol[rank + (size_t)k * n];
    cblas_dtrsv(CblasColMajor, CblasLower, CblasTrans, CblasNonUnit, rank, chol, n, v, 1);
    v[rank] = -1;
    /* the shorter of the two directions that keeps every weight >= 0 */
    double up = INFINITY, down = INFINITY;
    int qup = -1, qdown = -1;
    for (int k = 0; k <= rank; k++) {
      int q = lpiv[k] - 1;
      double w = t[live[q]];
      if (v[k] > 0 && w / v[k] < up) up = w / v[k], qup = k;
      if (v[k] < 0 && w / -v[k] < down) down = w / -v[k], qdown = k;
    }
    double step = up <= down ? up : -down;
    int zero = up <= down ? qup : qdown;
    if (zero < 0 || !isfinite(step)) break;
    for (int k = 0; k <= rank; k++) {
      int q = live[lpiv[k] - 1];
      t[q] = k == zero ? 0 : fmax(t[q] - step * v[k], 0);
    }
    int out = lpiv[zero] - 1;
    live[out] = live[--n];
  }
  for (int q = 0; q < nl; q++) scale[loaded[q]] = t[q] / norm[q];
}

int sb_contact_solve(sb_contact_problem *p, double h, const sb_contact_options *opt,
                     sb_contact_info *info, char *error, int error_size) {
  double t0 = sb_lcp_now_us();
  sb_contact_options def = sb_contact_default_options();
  if (!opt) opt = &def;
  sb_contact_info local;
  if (!info) info = &local;
  memset(info, 0, sizeof *info);
  info->lcp.lemke_form = -1;
  int m = p->nc, N = p->ndof, ld = p->max_dof, r = opt->directions;
  info->ncontact = m;
  memset(p->p, 0, N * sizeof(double));
  memset(p->lambda, 0, 3 * m * sizeof(double));
  for (int k = 0; k < m; k++) p->keep[k] = p->wn_ok[k] = p->immobile[k] = 0;
  p->mobility_max = 0;
  p->nvar = 0;
  /* the last step's solved set from the warm start (the saved entries in the order of the last
   * pass's kept contacts, so by position), not from what the LCP work kept since: a copied or
   * restored state solves as the original; passes after the first read this step's own */
  sb_lcp_set_last_set(p->lcp, p->nprev * (p->prev_r + 2), p->prev_in);
  if (!(isfinite(h) && h > 0)) {
    sb_errorf(error, error_size, "contact solve: time step must be positive and finite (got %g)", h);
    return -1;
  }
  if (r < 3 || r > p->max_r) {
    sb_errorf(error, error_size, "contact solve: %d friction directions, outside 3..%d", r, p->max_r);
    return -1;
  }
  if (!(opt->rank_tol >= 0 && opt->rank_tol < 1) || !(opt->tikhonov >= 0) || !isfinite(opt->tikhonov) ||
      !(opt->stabilization >= 0 && opt->stabilization <= 1) || !valid_gap_options(opt) || opt->ruiz_iterations < 0 ||
      opt->lcp_from_operator < SB_CONTACT_LCP_STORED || opt->lcp_from_operator > SB_CONTACT_LCP_AUTO) {
    sb_errorf(error, error_size,
              "contact solve: options out of range (rank_tol %g in [0, 1), tikhonov %g >= 0, "
              "stabilization %g in [0, 1], surface_layer %g m finite and >= 0, push_speed %g m/s > 0, "
              "ruiz_iterations %d >= 0, lcp_from_operator %d in 0..3)",
              opt->rank_tol, opt->tikhonov, opt->stabilization, opt->surface_layer, opt->push_speed,
              opt->ruiz_iterations, opt->lcp_from_operator);
    return -1;
  }
  for (int k = 0; k < p->nb; k++) {
    body_t *b = &p->bodies[k];
    if (b->kind != BODY_SOFT) continue;
    if (!b->w->step_ready) {
      sb_errorf(error, error_size, "contact solve: soft body %d has no prepared step (call sb_step_prepare)", k);
      return -1;
    }
    memcpy(p->vfree + b->off, b->w->vstar, b->nv * sizeof(double));
  }
  if (m == 0) {
    /* the bilateral constraints alone (if any): lambda_e = -W_ee^-1 u_e */
    sb_bilateral_eliminate(p->bil, N, ld, p->vfree, h, opt->stabilization, bilateral_apply, p, 0, NULL, NULL, NULL);
    sb_bilateral_recover(p->bil, N, ld, 0, NULL, p->p);
    info->lcp.status = SB_LCP_SOLVED;
    info->time_us = sb_lcp_now_us() - t0;
    return 0;
  }
  int m3 = 3 * m;
  /* free relative velocities (contact frame) and gap terms */
  free_velocities(p);
  if (opt->align_friction) align_friction_frames(p);
  for (int i = 0; i < m; i++) p->stabv[i] = gap_term(p->c[i].gap, h, opt);
  /* bilateral constraints: the contacts' free velocities become their
   * Schur complement's (the Delassus blocks follow over the kept contacts,
   * kept_delassus) */
  sb_bilateral_eliminate(p->bil, N, ld, p->vfree, h, opt->stabilization, bilateral_apply, p, m3, p->Jt, NULL, p->u);
  info->assembly_us = sb_lcp_now_us() - t0;

  closing_first(p);
  screen_open(p, opt);
  p->order_active = 0;
  p->keep_given = 0;
  for (int i = 0; i < m; i++) p->force[i] = 0;
  double vtol = 0;
  for (int i = 0; i < m; i++) vtol = fmax(vtol, fabs(closing_speed(p, i)));
  vtol = 1e-9 * fmax(vtol, 1e-3);
  /* The pivoted QR is blind to forces: on a box pushed along a table it kept
   * contacts that then separated and dropped ones that penetrated, and a
   * second pass (a second solve) followed on 95 % of the steps. The last
   * step's loads know better: contacts that carried load come first,
   * heaviest first, and are kept even when they depend on the others (the
   * union pass below may have needed them; the recorded answer is a basic
   * one, basic_loads, so a dependent contact is loaded there only where the
   * others cannot carry its share, not wherever a non-unique spread put
   * load), then the closing ones, fastest first, where they widen the span. */
  int warm_order = 0;
  if (opt->warm_start && opt->rank_selection && p->nprev > 0 && p->prev_r == r) {
    int bs = r + 2;
    double lmax = 0, vmax = 0;
    for (int i = 0; i < m; i++) {
      int k = previous_index(p, p->c[i].id);
      p->order[i] = k >= 0 ? fmax(p->prev_z[(size_t)k * bs], 0) : 0; /* last step's load */
      lmax = fmax(lmax, p->order[i]);
      vmax = fmax(vmax, -closing_speed(p, i));
    }
    if (lmax > 0) {
      for (int i = 0; i < m; i++) {
        double vn = closing_speed(p, i);
        p->prio[i] |= p->order[i] > 0;
        p->force[i] = p->order[i] > 0;
        p->order[i] = p->order[i] > 0 ? 2 + p->order[i] / lmax /* in (2, 3] */
                      : vn < 0        ? -vn / vmax             /* in (0, 1] */
                                      : 0;
      }
      p->order_active = warm_order = 1;
    }
  }
  /* A warm order that fails gets, as its next pass, its own set with every
   * contact that would close (warm_union), and when that union is unsolvable
   * or still leaves one closing, the force-blind selection. */
  int passes = 1 + 2 * warm_order + (opt->rank_selection && opt->rank_refine > 0 ? opt->rank_refine : 0);
  int warm_union = 0; /* this pass is that union */
  double lcp_us = 0;  /* every pass's solves: a pass's info replaces the last's */
  for (int pass = 0; pass < passes; pass++) {
    info->rank_passes = pass + 1;
    info->lcp.time_us = 0;
    if (select_and_solve(p, opt, info, error, error_size)) return -1;
    lcp_us += info->lcp.time_us;
    info->lcp.time_us = lcp_us;
    if (p->keep_given && !warm_union && info->lcp.status != SB_LCP_SOLVED) {
      /* the union made the problem unsolvable (a disk pressed between
       * two opposite faces): back to the last pass's independent set */
      memcpy(p->keep, p->keep_prev, m * sizeof(int));
      info->rank_passes = pass + 2;
      info->lcp.time_us = 0;
      if (select_and_solve(p, opt, info, error, error_size)) return -1;
      lcp_us += info->lcp.time_us;
      info->lcp.time_us = lcp_us;
    }
    /* Stage 1 is blind to forces: a dependent contact dropped in favour of
     * one that then separates may penetrate. Give priority to the contacts
     * that carry load or would penetrate, and select again. An unsolvable
     * warm union counts as failed the same way. */
    int violated = warm_union && info->lcp.status != SB_LCP_SOLVED;
    if (!violated) {
      final_velocities(p);
      if (!p->keep_given && screen_admit_closing(p, vtol) > 0) {
        info->screen_passes++;
        pass--; /* the same pass again, with them */
        continue;
      }
      for (int i = 0; i < m && !violated; i++) violated = !p->keep[i] && closes_after_pass(p, i, vtol);
    }
    if (!violated || (p->keep_given && !warm_union) || pass + 1 == passes) break;
    for (int i = 0; i < m; i++) p->force[i] = 0;
    if (warm_union) { /* stale loads (contacts came and went): select as without them */
      warm_union = p->keep_given = 0;
      closing_first(p);
      p->order_active = 0;
      continue;
    }
    if (warm_order && pass == 0) {
      /* On a rod lying along a plane, the last step's loaded contacts are
       * about one per disk, and a disk the last answer left unloaded is kept
       * by neither contact yet closes: the warm order fails on every step, and
       * the force-blind pass that followed answered with a set whose loads
       * failed again on the next. Keeping the warm set and the closing ones
       * together answers at once; the kept normals may then be dependent,
       * as in the union pass below. */
      keep_closing_too(p, info, vtol);
      warm_union = 1;
      continue;
    }
    if (pass + 2 == passes) {
      /* Re-selection can fail for good: a dropped contact whose normal is
       * a combination of kept ones with mixed signs is pushed through its
       * surface when one of those separates (a sliding arm: most steps, at
       * up to a centimetre per second, however the independent set was
       * re-chosen). The last pass keeps them too: the kept normals are then
       * dependent, which stage 3 and the proximal step are there for. */
      keep_closing_too(p, info, vtol);
      continue;
    }
    /* next pass: contacts that would penetrate first (deepest first), then
     * the loaded ones, heaviest first, taken in that order */
    for (int i = 0; i < m; i++) {
      double vn = final_normal_speed(p, i);
      int violating = !p->keep[i] && closes_after_pass(p, i, vtol);
      p->prio[i] = violating || (p->keep[i] && p->lambda[3 * i + 2] > 0);
      p->order[i] = violating ? 1e100 * (1 - vn / vtol) : p->lambda[3 * i + 2];
    }
    p->order_active = 1;
  }
  p->keep_given = 0;
  p->order_active = 0;
  /* The next step starts from this step's answer, the last pass's: an
   * earlier pass kept other contacts (re-selection swaps loaded ones in),
   * and the last pass started from it left FB stuck far more often (an arm
   * pushing a box along a table: 44 % of the steps, 29 % like this). A
   * failed solve leaves no guess. */
  p->nprev = 0;
  p->prev_r = r;
  /* where stage 1 kept independent normals only, the loaded set already is */
  for (int a = 0; a < info->nkept; a++) p->prev_scale[a] = 1;
  if (info->lcp.status == SB_LCP_SOLVED && p->nvar > 0 && p->kept_dependent)
    basic_loads(p, info->nkept, opt->rank_tol * opt->rank_tol);
  if (p->nvar > 0) sb_lcp_last_set(p->lcp, p->nvar, p->last_in);
  for (int a = 0; a < info->nkept && info->lcp.status == SB_LCP_SOLVED; a++) {
    int ia = p->kept[a], bs = r + 2;
    if (p->c[ia].id < 0) continue;
    for (int v = 0; v < bs; v++) p->prev_in[(size_t)p->nprev * bs + v] = p->nvar > 0 && p->last_in[a * bs + v];
    p->prev_id[p->nprev] = p->c[ia].id;
    double *zp = p->prev_z + (size_t)p->nprev * bs;
    memcpy(zp, p->z + a * bs, bs * sizeof(double));
    for (int k = 0; k + 1 < bs && p->nvar > 0; k++) zp[k] *= p->prev_scale[a]; /* the load, not gamma */
    memcpy(p->prev_dr + (size_t)p->nprev * bs, p->dr + a * bs, bs * sizeof(double));
    memcpy(p->prev_dc + (size_t)p->nprev * bs, p->dc + a * bs, bs * sizeof(double));
    for (int k = 0; k < 3; k++) p->prev_t1[3 * p->nprev + k] = p->frame[9 * ia + 3 * k];
    if (opt->align_friction)
      save_next_direction(p, ia, r, p->prev_t1 + 3 * p->nprev, p->prev_z + (size_t)p->nprev * bs);
    p->nprev++;
  }
  info->screened = screen_count(p);
  p->screening = 0;
  info->dropped_min_vn = 0;
  for (int i = 0; i < m; i++) {
    info->immobile += p->immobile[i];
    if (!p->keep[i] && !p->immobile[i]) info->dropped_min_vn = fmin(info->dropped_min_vn, final_normal_speed(p, i));
  }
  info->time_us = sb_lcp_now_us() - t0;
  info->conditioning_us = fmax(0, info->time_us - info->assembly_us - info->lcp.time_us);
  if (info->lcp.status != SB_LCP_SOLVED) {
    sb_errorf(error, error_size, "contact LCP (%d contacts, %d variables) not solved: %s", m, p->nvar,
              info->lcp.message);
    return -1;
  }
  return 0;
}

int sb_contact_solve_lcp(sb_contact_problem *p, int n, int directions, const double *A, const double *b,
                         double *z, const sb_contact_options *opt, sb_contact_info *info, char *error,
                         int error_size) {
  double t0 = sb_lcp_now_us();
  sb_contact_options def = sb_contact_default_options();
  if (!opt) opt = &def;
  sb_contact_info local;
  if (!info) info = &local;
  memset(info, 0, sizeof *info);
  info->lcp.lemke_form = -1;
  int bs = directions + 2;
  if (!A || !b || !z || directions < 3 || directions > p->max_r || n < bs || n % bs || n > p->nvar_cap ||
      n / bs > p->max_k) {
    sb_errorf(error, error_size,
              "contact LCP: %d variables are not whole contacts of r + 2 = %d (r within 3..%d), or exceed "
              "the capacity %d (%d contacts), or data is missing", n, bs, p->max_r, p->nvar_cap, p->max_k);
    return -1;
  }
  for (size_t k = 0; k < (size_t)n * n; k++)
    if (!isfinite(A[k])) {
      sb_errorf(error, error_size, "contact LCP: A(%d, %d) is not finite", (int)(k % n), (int)(k / n));
      return -1;
    }
  for (int i = 0; i < n; i++)
    if (!isfinite(b[i]) || (opt->warm_start && !isfinite(z[i]))) {
      sb_errorf(error, error_size, "contact LCP: b(%d) or the guess z(%d) is not finite", i, i);
      return -1;
    }
  int nk = n / bs;
  memcpy(p->A, A, (size_t)n * n * sizeof(double));
  memcpy(p->b, b, n * sizeof(double));
  for (int i = 0; i < n; i++) p->normal_mask[i] = i % bs == 0 || i % bs == bs - 1;
  for (int a = 0; a < nk; a++) p->blocks[a] = bs;
  p->nvar = n;
  p->directions = directions;
  p->op_valid = 0; /* only A's doubles are known */
  p->A_formed = 1;
  info->ncontact = info->nkept = nk;
  info->nvar = n;
  info->rank_passes = 0;
  solve_assembled(p, n, nk, bs, opt->warm_start ? z : NULL, 0, opt, info);
  memcpy(z, p->z, n * sizeof(double));
  info->time_us = sb_lcp_now_us() - t0;
  if (info->lcp.status != SB_LCP_SOLVED) {
    sb_errorf(error, error_size, "contact LCP (%d variables) not solved: %s", n, info->lcp.message);
    return -1;
  }
  return 0;
}

const double *sb_contact_body_impulse(const sb_contact_problem *p, int body) {
  return p->p + p->bodies[body].off;
}

void sb_contact_body_velocity(sb_contact_problem *p, int body, double *v) {
  const body_t *b = &p->bodies[body];
  memset(p->pv, 0, p->ndof * sizeof(double));
  memcpy(p->pv + b->off, p->p + b->off, b->nv * sizeof(double));
  body_apply(p, b, 0, p->pv, 1, p->max_dof, NULL);
  for (int j = 0; j < b->nv; j++) v[j] = p->vfree[b->off + j] + p->pv[b->off + j];
}

void sb_contact_result(const sb_contact_problem *p, int contact, double impulse[3],
                       double *normal_impulse, double frame[9], int *kept) {
  const double *R = p->frame + 9 * contact, *l = p->lambda + 3 * contact;
  if (impulse)
    for (int k = 0; k < 3; k++) impulse[k] = R[3 * k] * l[0] + R[3 * k + 1] * l[1] + R[3 * k + 2] * l[2];
  if (normal_impulse) *normal_impulse = l[2];
  if (frame) memcpy(frame, R, 9 * sizeof(double));
  if (kept) *kept = p->keep[contact];
}

void sb_contact_relative_velocity(sb_contact_problem *p, int contact, double v[3]) {
  const double *R = p->frame + 9 * contact, *u = p->uf + 3 * contact;
  for (int k = 0; k < 3; k++) v[k] = R[3 * k] * u[0] + R[3 * k + 1] * u[1] + R[3 * k + 2] * u[2];
}

int sb_contact_body_wrench(const sb_contact_problem *p, int body, const double point[3],
                           double wrench[6]) {
  memset(wrench, 0, 6 * sizeof(double));
  if (body < 0 || body >= p->nb || p->bodies[body].kind != BODY_SOFT) return -1;
  for (int i = 0; i < p->nc; i++)
    for (int sd = 0; sd < 2; sd++) {
      if (p->c[i].side[sd].body != body) continue;
      const double *R = p->frame + 9 * i, *l = p->lambda + 3 * i, *x = p->point + 6 * i + 3 * sd;
      double f[3], r[3];
      for (int k = 0; k < 3; k++) {
        f[k] = (sd ? -1 : 1) * (R[3 * k] * l[0] + R[3 * k + 1] * l[1] + R[3 * k + 2] * l[2]);
        r[k] = x[k] - point[k];
      }
      wrench[0] += r[1] * f[2] - r[2] * f[1];
      wrench[1] += r[2] * f[0] - r[0] * f[2];
      wrench[2] += r[0] * f[1] - r[1] * f[0];
      for (int k = 0; k < 3; k++) wrench[3 + k] += f[k];
    }
  sb_bilateral_add_wrench(p->bil, body, point, wrench);
  return 0;
}

/* A and As as the stored path writes them, where the last solve read its
 * LCP from the operator alone: the same doubles (assemble_kept_matrix's,
 * and the conditioned operator's columns, test_kept_op). */
static void form_matrices(sb_contact_problem *p) {
  int n = p->nvar;
  if (n == 0 || !p->op_valid) return;
  if (!p->A_formed) assemble_kept_A(p);
  if (!p->As_formed)
    for (int j = 0; j < n; j++) p->cond_entries.column(p->cond_entries.ctx, j, p->As + (size_t)j * n);
  p->As_formed = 1;
}

void sb_contact_lcp(const sb_contact_problem *p, int *n, const double **A, const double **b,
                    const double **A_conditioned, const double **b_conditioned) {
  /* forming what the solve left unformed changes no value a caller sees: a cache */
  form_matrices((sb_contact_problem *)p);
  if (n) *n = p->nvar;
  if (A) *A = p->A;
  if (b) *b = p->b;
  if (A_conditioned) *A_conditioned = p->As;
  if (b_conditioned) *b_conditioned = p->bs;
}

const sb_lcp_entries *sb_contact_conditioned_entries(const sb_contact_problem *p) {
  return sb_contact_kept_operator(p) ? &p->cond_entries : NULL;
}

const sb_kept_op *sb_contact_kept_operator(const sb_contact_problem *p) {
  return p->op_valid && p->nvar > 0 ? &p->op : NULL;
}

const double *sb_contact_lcp_answer(const sb_contact_problem *p) { return p->z; }

/* ---------- the assembled problem for the other contact models ----------
 * (sap, ncp: contact.h, "The assembled problem"). The assembly repeats the
 * first lines of sb_contact_solve on purpose: that solve interleaves it with
 * its own timing and checks. */

int sb_contact_assemble(sb_contact_problem *p, double h, const sb_contact_options *opt, const double **W,
                        const double **u, const double **gap_velocity, char *error, int error_size) {
  sb_contact_options def = sb_contact_default_options();
  if (!opt) opt = &def;
  int m = p->nc, N = p->ndof, ld = p->max_dof, m3 = 3 * m;
  p->nvar = 0;
  p->op_valid = 0; /* W is overwritten with every contact's blocks */
  if (sb_bilateral_count(p->bil) > 0) {
    sb_errorf(error, error_size, "contact assembly: the problem holds bilateral constraints, which only "
              "sb_contact_solve solves (the other models do not take them)");
    return -1;
  }
  if (!(isfinite(h) && h > 0) || !(opt->stabilization >= 0 && opt->stabilization <= 1) || !valid_gap_options(opt)) {
    sb_errorf(error, error_size,
              "contact assembly: time step %g must be positive, stabilization %g in [0, 1], surface_layer %g m "
              "finite and >= 0 and push_speed %g m/s > 0",
              h, opt->stabilization, opt->surface_layer, opt->push_speed);
    return -1;
  }
  for (int k = 0; k < p->nb; k++) {
    body_t *b = &p->bodies[k];
    if (b->kind != BODY_SOFT) continue;
    if (!b->w->step_ready) {
      sb_errorf(error, error_size, "contact assembly: soft body %d has no prepared step (call sb_step_prepare)", k);
      return -1;
    }
    memcpy(p->vfree + b->off, b->w->vstar, b->nv * sizeof(double));
  }
  free_velocities(p);
  for (int i = 0; i < m; i++) p->stabv[i] = gap_term(p->c[i].gap, h, opt);
  if (m > 0) {
    for (int c = 0; c < m3; c++) memcpy(p->Y + (size_t)c * ld, p->Jt + (size_t)c * ld, N * sizeof(double));
    apply_all(p, 0, p->Y, m3, ld, NULL);
    cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, m3, m3, N, 1.0, p->Jt, ld, p->Y, ld, 0.0, p->W, m3);
  }
  if (W) *W = p->W;
  if (u) *u = p->u;
  if (gap_velocity) *gap_velocity = p->stabv;
  return m;
}

const sb_contact *sb_contact_at(const sb_contact_problem *p, int contact) {
  return contact >= 0 && contact < p->nc ? &p->c[contact] : NULL;
}

const double *sb_contact_rows(const sb_contact_problem *p, int contact, int *ld) {
  if (ld) *ld = p->max_dof;
  return contact >= 0 && contact < p->nc ? p->Jt + (size_t)3 * contact * p->max_dof : NULL;
}

/* A friction impulse as pyramid coefficients: the two directions D_k,
 * D_k+1 of r around it, nonnegative. */
static void pyramid_of(const double lt[2], int r, double *beta) {
  memset(beta, 0, r * sizeof(double));
  double len = hypot(lt[0], lt[1]);
  if (!(len > 0)) return;
  double sector = 2 * M_PI / r, th = atan2(lt[1], lt[0]);
  if (th < 0) th += 2 * M_PI;
  int k = (int)(th / sector) % r, k1 = (k + 1) % r;
  double a0 = k * sector, a1 = (k + 1) * sector;
  /* [D_k D_k+1] beta = lt: Cramer's rule, sin(a1 - a0) = sin(sector) > 0 */
  double det = sin(a1 - a0);
  beta[k] = fmax(0, (lt[0] * sin(a1) - lt[1] * cos(a1)) / det);
  beta[k1] = fmax(0, (lt[1] * cos(a0) - lt[0] * sin(a0)) / det);
}

void sb_contact_apply_impulses(sb_contact_problem *p, const double *lambda, int directions, int keep_warm) {
  int m = p->nc, N = p->ndof, ld = p->max_dof, m3 = 3 * m;
  memcpy(p->lambda, lambda, m3 * sizeof(double));
  for (int i = 0; i < m; i++) p->keep[i] = 1;
  memset(p->p, 0, N * sizeof(double));
  if (m > 0) cblas_dgemv(CblasColMajor, CblasNoTrans, N, m3, 1.0, p->Jt, ld, p->lambda, 1, 0.0, p->p, 1);
  memcpy(p->uf, p->u, m3 * sizeof(double));
  if (m > 0) cblas_dgemv(CblasColMajor, CblasNoTrans, m3, m3, 1.0, p->W, m3, p->lambda, 1, 1.0, p->uf, 1);
  p->nprev = 0;
  if (!keep_warm || directions < 3 || directions > p->max_r) return;
  int bs = directions + 2;
  p->prev_r = directions;
  for (int i = 0; i < m; i++) {
    if (p->c[i].id < 0) continue;
    double *z = p->prev_z + (size_t)p->nprev * bs;
    z[0] = lambda[3 * i + 2];
    pyramid_of(lambda + 3 * i, directions, z + 1);
    z[bs - 1] = 0;
    for (int v = 0; v < bs; v++) p->prev_dr[(size_t)p->nprev * bs + v] = p->prev_dc[(size_t)p->nprev * bs + v] = 1;
    for (int k = 0; k < 3; k++) p->prev_t1[3 * p->nprev + k] = p->frame[9 * i + 3 * k];
    p->prev_id[p->nprev++] = p->c[i].id;
  }
}

int sb_contact_warm_impulse(const sb_contact_problem *p, long id, double lambda[3]) {
  int k = previous_index(p, id);
  lambda[0] = lambda[1] = lambda[2] = 0;
  if (k < 0) return 0;
  int r = p->prev_r, bs = r + 2;
  const double *z = p->prev_z + (size_t)k * bs;
  for (int l = 0; l < r; l++) {
    lambda[0] += cos(2 * M_PI * l / r) * z[1 + l];
    lambda[1] += sin(2 * M_PI * l / r) * z[1 + l];
  }
  lambda[2] = z[0];
  /* in the axes of this step's contact of that id, when they differ */
  double c, s;
  for (int i = 0; i < p->nc; i++)
    if (p->c[i].id == id && tangent_coordinates(p, i, p->prev_t1 + 3 * k, &c, &s)) {
      double a = lambda[0], b = lambda[1];
      lambda[0] = c * a - s * b;
      lambda[1] = s * a + c * b;
      break;
    }
  return 1;
}

/* ---------- bilateral constraints (bilateral.c) ---------- */

int sb_contact_reserve_bilateral(sb_contact_problem *p, int max_rows, char *error, int error_size) {
  if (max_rows < 1 || max_rows > 6000) {
    sb_errorf(error, error_size, "contact problem: %d bilateral rows reserved, must be within 1..6000", max_rows);
    return -1;
  }
  sb_bilateral_work_free(p->bil);
  p->bil = sb_bilateral_work_create(max_rows, p->max_dof, p->max_c);
  if (!p->bil) {
    sb_errorf(error, error_size, "out of memory for %d bilateral rows", max_rows);
    return -1;
  }
  return 0;
}

int sb_contact_add_bilateral(sb_contact_problem *p, const sb_bilateral *e, char *error, int error_size) {
  if (!p->bil) {
    sb_errorf(error, error_size, "bilateral constraint: no rows reserved (sb_contact_reserve_bilateral)");
    return -1;
  }
  if (e->body < 0 || e->body >= p->nb || p->bodies[e->body].kind != BODY_SOFT) {
    sb_errorf(error, error_size, "bilateral constraint: body %d is not a soft body of the problem", e->body);
    return -1;
  }
  if (e->other < -1 || e->other >= p->nb || e->other == e->body) {
    sb_errorf(error, error_size, "bilateral constraint: anchor body %d is not another body of the problem (or -1)",
              e->other);
    return -1;
  }
  const body_t *b = &p->bodies[e->body];
  const body_t *o = e->other >= 0 ? &p->bodies[e->other] : NULL;
  return sb_bilateral_add(p->bil, e, b->m, b->w, b->off, o ? o->off : 0, o ? o->nv : 0, error, error_size);
}

int sb_contact_bilateral_count(const sb_contact_problem *p) { return sb_bilateral_count(p->bil); }

int sb_contact_bilateral_result(const sb_contact_problem *p, int k, double impulse[6], double point[3],
                                double error[6]) {
  return sb_bilateral_get(p->bil, k, impulse, point, error);
}

void sb_contact_bilateral_rank(const sb_contact_problem *p, int *rows, int *rank) {
  sb_bilateral_rank(p->bil, rows, rank);
}

/* Bilateral constraints of a contact problem (contact.h, "Bilateral
 * constraints"): their rows, and their elimination before the LCP by the
 * Schur complement of the bilateral block, factored by pivoted Cholesky. */
#include "bilateral.h"

#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sb_util.h"

/* Pivots of the bilateral block below this fraction of its largest diagonal
 * entry are dependent rows (round-off on W_ee is about 1e-16 of it; a row
 * no coordinate moves is exactly 0). */
#define SB_BILATERAL_RANK_TOL 1e-10

typedef struct {
  int rows, body, off;     /* its rows are off..off+rows-1 */
  double R[9];             /* anchor axes, row-major */
  double point[3];         /* the soft point, world */
  double cap[2];           /* the correction's caps: linear m/s, angular rad/s (+inf: none) */
} con_t;

struct sb_bilateral_work {
  int max_rows, max_dof, max_c3;
  int nc, ne, rank;
  con_t *con;
  double *Et;              /* ld x max_rows: the rows as columns over the stacked coordinates */
  double *estatic;         /* per row: relative velocity the coordinates do not carry */
  double *eerr;            /* per row: position (m) or rotation (rad) error */
  double *Yk, *Gk;         /* ld x rank: M~^-1 E^T and F^-1 E^T of the kept rows */
  double *Wee, *L;         /* max_rows^2: the block, and its pivoted factor */
  int *piv, *kept;
  double *ue;              /* kept rows: free velocity + stabilization */
  double *corr;            /* per row: the stabilization's velocity alpha e / h, capped */
  double *Wce;             /* m3 x rank: the contacts' coupling to the kept rows */
  double *X;               /* rank x max(m3, ...): scratch for W_ee^-1 solves */
  double *lam;             /* per row, the last multipliers (0 for dropped rows) */
  double *J6, *work;
};

sb_bilateral_work *sb_bilateral_work_create(int max_rows, int max_dof, int max_contacts) {
  if (max_rows < 1 || max_dof < 1 || max_contacts < 0) return NULL;
  sb_bilateral_work *b = calloc(1, sizeof *b);
  if (!b) return NULL;
  b->max_rows = max_rows;
  b->max_dof = max_dof;
  b->max_c3 = 3 * max_contacts;
  size_t mr = max_rows, nd = max_dof, c3 = b->max_c3 > 0 ? b->max_c3 : 1;
  int ok = 1;
#define ALLOC(ptr, count) ok &= ((ptr) = calloc((count), sizeof *(ptr))) != NULL
  ALLOC(b->con, mr);
  ALLOC(b->Et, nd * mr);
  ALLOC(b->estatic, mr);
  ALLOC(b->eerr, mr);
  ALLOC(b->Yk, nd * mr);
  ALLOC(b->Gk, nd * mr);
  ALLOC(b->Wee, mr * mr);
  ALLOC(b->L, mr * mr);
  ALLOC(b->piv, mr);
  ALLOC(b->kept, mr);
  ALLOC(b->ue, mr);
  ALLOC(b->corr, mr);
  ALLOC(b->Wce, c3 * mr);
  ALLOC(b->X, mr * (c3 > nd ? c3 : nd));
  ALLOC(b->lam, mr);
  ALLOC(b->J6, 6 * nd);
  ALLOC(b->work, 2 * mr);
#undef ALLOC
  if (!ok) {
    sb_bilateral_work_free(b);
    return NULL;
  }
  return b;
}

void sb_bilateral_work_free(sb_bilateral_work *b) {
  if (!b) return;
  void *ptr[] = {b->con, b->Et, b->estatic, b->eerr, b->Yk, b->Gk, b->Wee, b->L, b->piv, b->kept,
                 b->ue, b->corr, b->Wce, b->X, b->lam, b->J6, b->work};
  for (size_t k = 0; k < sizeof ptr / sizeof ptr[0]; k++) free(ptr[k]);
  free(b);
}

void sb_bilateral_clear(sb_bilateral_work *b) {
  if (b) b->nc = b->ne = b->rank = 0;
}

int sb_bilateral_count(const sb_bilateral_work *b) { return b ? b->nc : 0; }
int sb_bilateral_rows(const sb_bilateral_work *b) { return b ? b->ne : 0; }

static double dot3(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static int pose_finite(const sb_pose *g) {
  int ok = 1;
  for (int a = 0; a < 9; a++) ok &= isfinite(g->R[a]);
  for (int a = 0; a < 3; a++) ok &= isfinite(g->p[a]);
  return ok;
}

/* A base without motion (twist and acceleration exactly zero), with finite
 * poses, offset and step: every term of sb_frame_base_velocity is then a
 * product of a zero and a finite factor, and its sums, started from +0, are
 * +0. Most arms sit on a fixed mount, and the contact build asks this for
 * every contact side. */
static int base_at_rest(const sb_model *m, const sb_pose *g, const double r[3], double hb) {
  int rest = isfinite(hb) && isfinite(r[0]) && isfinite(r[1]) && isfinite(r[2]);
  for (int a = 0; a < 6; a++) rest &= m->base_twist[a] == 0 && m->base_acc[a] == 0;
  return rest && pose_finite(g) && pose_finite(&m->base);
}

void sb_frame_base_velocity(const sb_model *m, const sb_work *w, const sb_pose *g, const double r[3],
                            double vb[3], double wb[3]) {
  /* The base's motion moves the point with the coordinates frozen. The
   * LCP's velocities are those at the end of the step: the point frame's
   * twist then is Ad(g^-1 base) (eta_b + h a_b), in that frame's axes at
   * t + h, which turned by h omega since t (the axes J and the contact
   * frame use): vb = (1 + h omega^) (v + omega x r) to first order. */
  double hb = w->step_ready ? w->h : 0, eb[6], et[6], e0[6], Ab[36], lin[3], ang[3];
  if (base_at_rest(m, g, r, hb)) { /* the sums below, all of zeros: +0 */
    for (int a = 0; a < 3; a++) {
      vb[a] = 0;
      if (wb) wb[a] = 0;
    }
    return;
  }
  for (int a = 0; a < 6; a++) eb[a] = m->base_twist[a] + hb * m->base_acc[a];
  sb_pose rel = sb_pose_inv_mul(g, &m->base);
  sb_Ad(&rel, Ab);
  sb_mat6_vec(Ab, eb, et);
  sb_mat6_vec(Ab, m->base_twist, e0);
  lin[0] = et[3] + et[1] * r[2] - et[2] * r[1];
  lin[1] = et[4] + et[2] * r[0] - et[0] * r[2];
  lin[2] = et[5] + et[0] * r[1] - et[1] * r[0];
  for (int a = 0; a < 3; a++) ang[a] = et[a];
  vb[0] = lin[0] + hb * (e0[1] * lin[2] - e0[2] * lin[1]);
  vb[1] = lin[1] + hb * (e0[2] * lin[0] - e0[0] * lin[2]);
  vb[2] = lin[2] + hb * (e0[0] * lin[1] - e0[1] * lin[0]);
  if (wb) {
    wb[0] = ang[0] + hb * (e0[1] * ang[2] - e0[2] * ang[1]);
    wb[1] = ang[1] + hb * (e0[2] * ang[0] - e0[0] * ang[2]);
    wb[2] = ang[2] + hb * (e0[0] * ang[1] - e0[1] * ang[0]);
  }
}

int sb_bilateral_add(sb_bilateral_work *b, const sb_bilateral *e, const sb_model *m, sb_work *w, int soft_off,
                     int other_off, int other_nv, char *error, int error_size) {
  if (e->rows != 3 && e->rows != 6) {
    sb_errorf(error, error_size, "bilateral constraint: %d rows; 3 (pin) or 6 (clamp)", e->rows);
    return -1;
  }
  if (b->ne + e->rows > b->max_rows) {
    sb_errorf(error, error_size, "bilateral constraint: more than the %d rows reserved", b->max_rows);
    return -1;
  }
  for (int k = 0; k < 3; k++)
    if (!isfinite(e->anchor_pos[k]) || !isfinite(e->anchor_vel[k]) || !isfinite(e->anchor_vel[3 + k])) {
      sb_errorf(error, error_size, "bilateral constraint: anchor position and velocity must be finite");
      return -1;
    }
  if (!(e->max_speed >= 0) || !(e->max_turn >= 0)) {
    sb_errorf(error, error_size, "bilateral constraint: correction caps %g m/s, %g rad/s; >= 0 (0: none)",
              e->max_speed, e->max_turn);
    return -1;
  }
  for (int k = 0; k < 9; k++)
    if (!isfinite(e->anchor_R[k])) {
      sb_errorf(error, error_size, "bilateral constraint: anchor axes must be finite");
      return -1;
    }
  if (e->other >= 0) {
    if (!e->jac) {
      sb_errorf(error, error_size, "bilateral constraint: the anchor's body %d needs a 6 x nv Jacobian", e->other);
      return -1;
    }
    for (int j = 0; j < 6 * other_nv; j++)
      if (!isfinite(e->jac[j])) {
        sb_errorf(error, error_size, "bilateral constraint: Jacobian entry %d of body %d is not finite", j, e->other);
        return -1;
      }
  }
  sb_pose g;
  int n = m->n;
  if (sb_point_kinematics(m, w, e->seg, e->s, &g, b->J6, NULL, NULL)) {
    sb_errorf(error, error_size, "bilateral constraint: no point at segment %d, s = %g", e->seg, e->s);
    return -1;
  }
  const double zero[3] = {0, 0, 0};
  double vb[3], wb[3];
  sb_frame_base_velocity(m, w, &g, zero, vb, wb);
  con_t *c = &b->con[b->nc];
  c->rows = e->rows;
  c->body = e->body;
  c->off = b->ne;
  memcpy(c->R, e->anchor_R, sizeof c->R);
  memcpy(c->point, g.p, sizeof c->point);
  c->cap[0] = e->max_speed > 0 ? e->max_speed : INFINITY;
  c->cap[1] = e->max_turn > 0 ? e->max_turn : INFINITY;
  size_t ld = b->max_dof;
  /* errors in the anchor's axes: R_a^T (p - p_a), log(R_a^T R_g) */
  double dp[3], Rrel[9], rot[3];
  for (int k = 0; k < 3; k++) dp[k] = g.p[k] - e->anchor_pos[k];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      double x = 0;
      for (int a = 0; a < 3; a++) x += e->anchor_R[3 * a + i] * g.R[3 * a + j];
      Rrel[3 * i + j] = x;
    }
  sb_so3_log(Rrel, rot);
  for (int row = 0; row < e->rows; row++) {
    int k = row % 3, angular = row >= 3;
    double *col = b->Et + (size_t)(b->ne + row) * ld;
    memset(col, 0, ld * sizeof(double));
    double ak[3] = {e->anchor_R[k], e->anchor_R[3 + k], e->anchor_R[6 + k]}, u[3];
    for (int a = 0; a < 3; a++) u[a] = g.R[a] * ak[0] + g.R[3 + a] * ak[1] + g.R[6 + a] * ak[2];
    /* soft side: a_k . R_g (J6 rows), linear rows 3..5, angular rows 0..2 */
    const double *J = b->J6 + (angular ? 0 : 3 * n);
    for (int j = 0; j < n; j++) col[soft_off + j] = u[0] * J[j] + u[1] * J[n + j] + u[2] * J[2 * n + j];
    double est = dot3(u, angular ? wb : vb);
    if (e->other >= 0) {
      const double *jr = e->jac + (size_t)(angular ? 3 : 0) * other_nv;
      for (int j = 0; j < other_nv; j++)
        col[other_off + j] -= ak[0] * jr[j] + ak[1] * jr[other_nv + j] + ak[2] * jr[2 * other_nv + j];
    }
    est -= dot3(ak, e->anchor_vel + (angular ? 3 : 0));
    b->estatic[b->ne + row] = est;
    b->eerr[b->ne + row] = angular ? rot[k] : dot3(ak, dp);
    b->lam[b->ne + row] = 0;
  }
  b->ne += e->rows;
  return b->nc++;
}

/* Each row's stabilization alpha e_k / h into b->corr, a constraint's
 * position and orientation parts each scaled as a vector to its cap. */
static void capped_corrections(sb_bilateral_work *b, double h, double alpha) {
  for (int c = 0; c < b->nc; c++) {
    const con_t *k = &b->con[c];
    for (int part = 0; part * 3 < k->rows; part++) {
      const double *err = b->eerr + k->off + 3 * part;
      double *corr = b->corr + k->off + 3 * part;
      double speed = alpha * sqrt(dot3(err, err)) / h, scale = speed > k->cap[part] ? k->cap[part] / speed : 1;
      for (int a = 0; a < 3; a++) corr[a] = scale * alpha * err[a] / h;
    }
  }
}

void sb_bilateral_eliminate(sb_bilateral_work *b, int N, int ld, const double *vfree, double h, double alpha,
                            sb_bilateral_apply_fn apply, void *ctx, int m3, const double *Jt, double *W, double *u) {
  if (!b) return;
  int ne = b->ne;
  b->rank = 0;
  if (ne == 0) return;
  /* W_ee = E M~^-1 E^T */
  for (int r = 0; r < ne; r++) memcpy(b->Yk + (size_t)r * ld, b->Et + (size_t)r * ld, N * sizeof(double));
  apply(ctx, 0, b->Yk, ne, ld);
  cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, ne, ne, N, 1.0, b->Et, ld, b->Yk, ld, 0.0, b->Wee, ne);
  double dmax = 0;
  for (int r = 0; r < ne; r++) dmax = fmax(dmax, b->Wee[(size_t)r * ne + r]);
  if (!(dmax > 0) || !isfinite(dmax)) return; /* nothing moves the rows (or non-finite): no impulse */
  /* its largest independent set of rows: pivoted Cholesky */
  for (int i = 0; i < ne; i++)
    for (int j = 0; j < ne; j++) /* symmetric up to round-off: take the mean */
      b->L[(size_t)j * ne + i] = 0.5 * (b->Wee[(size_t)j * ne + i] + b->Wee[(size_t)i * ne + j]);
  int rank = 0;
  lapack_int info = LAPACKE_dpstrf_work(LAPACK_COL_MAJOR, 'L', ne, b->L, ne, b->piv, &rank,
                                        SB_BILATERAL_RANK_TOL * dmax, b->work);
  if (info < 0 || rank <= 0) return;
  b->rank = rank;
  for (int i = 0; i < rank; i++) b->kept[i] = b->piv[i] - 1;
  capped_corrections(b, h, alpha);
  /* the kept rows' free velocity (stabilized) and their M~^-1 E^T, F^-1 E^T */
  for (int i = 0; i < rank; i++) {
    int r = b->kept[i];
    const double *col = b->Et + (size_t)r * ld;
    b->ue[i] = cblas_ddot(N, col, 1, vfree, 1) + b->estatic[r] + b->corr[r];
    memcpy(b->Gk + (size_t)i * ld, col, N * sizeof(double));
  }
  /* Yk holds every row's M~^-1 E^T: keep the kept ones, in kept order */
  for (int i = 0; i < rank; i++) memcpy(b->X + (size_t)i * ld, b->Yk + (size_t)b->kept[i] * ld, N * sizeof(double));
  for (int i = 0; i < rank; i++) memcpy(b->Yk + (size_t)i * ld, b->X + (size_t)i * ld, N * sizeof(double));
  apply(ctx, 1, b->Gk, rank, ld);
  if (m3 == 0) return;
  /* W_ce = J M~^-1 E^T; W -= W_ce W_ee^-1 W_ec, u -= W_ce W_ee^-1 u_e */
  cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, m3, rank, N, 1.0, Jt, ld, b->Yk, ld, 0.0, b->Wce, m3);
  if (W) {
    for (int c = 0; c < m3; c++)
      for (int i = 0; i < rank; i++) b->X[(size_t)c * rank + i] = b->Wce[(size_t)i * m3 + c];
    LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'L', rank, m3, b->L, ne, b->X, rank);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m3, m3, rank, -1.0, b->Wce, m3, b->X, rank, 1.0, W, m3);
  }
  /* W - W_ce X is symmetric in exact arithmetic: keep it so for the solvers */
  for (int j = 0; W && j < m3; j++)
    for (int i = j + 1; i < m3; i++) {
      double s = 0.5 * (W[(size_t)j * m3 + i] + W[(size_t)i * m3 + j]);
      W[(size_t)j * m3 + i] = W[(size_t)i * m3 + j] = s;
    }
  for (int i = 0; i < rank; i++) b->work[i] = b->ue[i];
  LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'L', rank, 1, b->L, ne, b->work, rank);
  cblas_dgemv(CblasColMajor, CblasNoTrans, m3, rank, -1.0, b->Wce, m3, b->work, 1, 1.0, u, 1);
}

void sb_bilateral_schur_kept(sb_bilateral_work *b, int m3, int nk, const int *kept, double *W) {
  if (!b || b->rank == 0 || nk == 0) return;
  int rank = b->rank, m3k = 3 * nk;
  /* X = W_ee^-1 W_ek over the kept contacts' rows of W_ce */
  for (int a = 0; a < nk; a++)
    for (int k = 0; k < 3; k++)
      for (int i = 0; i < rank; i++)
        b->X[(size_t)(3 * a + k) * rank + i] = b->Wce[(size_t)i * m3 + 3 * kept[a] + k];
  LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'L', rank, m3k, b->L, b->ne, b->X, rank);
  /* W_kk -= W_ke X (W_ke: the same rows of W_ce, a few columns: rank <= 6 per held end) */
  for (int j = 0; j < m3k; j++)
    for (int a = 0; a < nk; a++)
      for (int k = 0; k < 3; k++) {
        const double *wce = b->Wce + 3 * kept[a] + k;
        double s = 0;
        for (int i = 0; i < rank; i++) s += wce[(size_t)i * m3] * b->X[(size_t)j * rank + i];
        W[(size_t)j * m3k + 3 * a + k] -= s;
      }
  for (int j = 0; j < m3k; j++)
    for (int i = j + 1; i < m3k; i++) {
      double s = 0.5 * (W[(size_t)j * m3k + i] + W[(size_t)i * m3k + j]);
      W[(size_t)j * m3k + i] = W[(size_t)i * m3k + j] = s;
    }
}

void sb_bilateral_project(sb_bilateral_work *b, int N, int ld, int m, double *St) {
  if (!b) return;
  int rank = b->rank;
  if (rank == 0 || m == 0) return;
  /* St -= G_k W_kk^-1 G_k^T St (G_k^T G_k = W_kk) */
  cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, rank, m, N, 1.0, b->Gk, ld, St, N, 0.0, b->X, rank);
  LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'L', rank, m, b->L, b->ne, b->X, rank);
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, N, m, rank, -1.0, b->Gk, ld, b->X, rank, 1.0, St, N);
}

void sb_bilateral_recover(sb_bilateral_work *b, int N, int ld, int m3, const double *lambda, double *p) {
  if (!b) return;
  for (int r = 0; r < b->ne; r++) b->lam[r] = 0;
  int rank = b->rank;
  if (rank == 0) return;
  double *y = b->work;
  for (int i = 0; i < rank; i++) y[i] = b->ue[i];
  if (m3 > 0 && lambda) cblas_dgemv(CblasColMajor, CblasTrans, m3, rank, 1.0, b->Wce, m3, lambda, 1, 1.0, y, 1);
  LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'L', rank, 1, b->L, b->ne, y, rank);
  for (int i = 0; i < rank; i++) {
    double l = -y[i];
    if (!isfinite(l)) l = 0; /* never a non-finite impulse */
    b->lam[b->kept[i]] = l;
    cblas_daxpy(N, l, b->Et + (size_t)b->kept[i] * ld, 1, p, 1);
  }
}

static void con_impulse(const sb_bilateral_work *b, const con_t *c, double f[3], double mo[3]) {
  for (int a = 0; a < 3; a++) {
    f[a] = mo[a] = 0;
    for (int k = 0; k < 3; k++) {
      f[a] += c->R[3 * a + k] * b->lam[c->off + k];
      if (c->rows == 6) mo[a] += c->R[3 * a + k] * b->lam[c->off + 3 + k];
    }
  }
}

void sb_bilateral_add_wrench(const sb_bilateral_work *b, int body, const double point[3], double wrench[6]) {
  for (int i = 0; b && i < b->nc; i++) {
    const con_t *c = &b->con[i];
    if (c->body != body) continue;
    double f[3], mo[3], r[3];
    con_impulse(b, c, f, mo);
    for (int k = 0; k < 3; k++) r[k] = c->point[k] - point[k];
    wrench[0] += r[1] * f[2] - r[2] * f[1] + mo[0];
    wrench[1] += r[2] * f[0] - r[0] * f[2] + mo[1];
    wrench[2] += r[0] * f[1] - r[1] * f[0] + mo[2];
    for (int k = 0; k < 3; k++) wrench[3 + k] += f[k];
  }
}

int sb_bilateral_get(const sb_bilateral_work *b, int k, double impulse[6], double point[3], double error[6]) {
  if (!b || k < 0 || k >= b->nc) return -1;
  const con_t *c = &b->con[k];
  if (impulse) con_impulse(b, c, impulse, impulse + 3);
  if (point) memcpy(point, c->point, sizeof c->point);
  if (error) {
    memset(error, 0, 6 * sizeof(double));
    for (int r = 0; r < c->rows; r++) error[r] = b->eerr[c->off + r];
  }
  return 0;
}

void sb_bilateral_rank(const sb_bilateral_work *b, int *rows, int *rank) {
  if (rows) *rows = b ? b->ne : 0;
  if (rank) *rank = b ? b->rank : 0;
}

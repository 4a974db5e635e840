/* Recursive dynamics over the node chain: inverse dynamics by a
 * Newton-Euler pass, the mass matrix by composite inertias aggregated per
 * unit, energies and external loads. Everything is linear in the number of
 * nodes except the dense n x n blocks of M. */
#include <lapacke.h>
#include <math.h>
#include <string.h>

#include "chain.h"

/* Newton-Euler: tau = sum S^T F for accelerations a (NULL = 0), no elastic
 * terms; tau may be NULL (then only w->F, the subtree wrenches). The base
 * acceleration A0 is the base's own (d'Alembert) plus gravity as an upward
 * acceleration; the base twist is already in the node twists. */
static void rnea(const sb_model *m, sb_work *w, const double *a, double *tau) {
  int K = m->nnode;
  double A0[6];
  for (int i = 0; i < 3; i++) {
    A0[i] = m->base_acc[i];
    A0[3 + i] = m->base_acc[3 + i] - (m->base.R[i] * m->gravity[0] + m->base.R[3 + i] * m->gravity[1] +
                                      m->base.R[6 + i] * m->gravity[2]);
  }
  for (int k = 0; k < K; k++) {
    const sb_node *nd = &m->node[k];
    double *A = w->acc + 6 * k, *F = w->F + 6 * k;
    sb_mat6_vec(w->X + 36 * k, k ? w->acc + 6 * (k - 1) : A0, A);
    const double *S = w->S + nd->soff, *bt = w->bterm + 6 * k, *eta = w->eta + 6 * k;
    for (int i = 0; i < 6; i++) {
      A[i] += bt[i];
      if (a)
        for (int j = 0; j < nd->ncol; j++) A[i] += S[i * nd->ncol + j] * a[nd->col0 + j];
    }
    double h[6], c[6];
    sb_mat6_vec(nd->inertia, eta, h);
    sb_coad_apply(eta, h, c);
    sb_mat6_vec(nd->inertia, A, F);
    for (int i = 0; i < 6; i++) F[i] -= c[i];
  }
  if (tau) memset(tau, 0, m->n * sizeof(double));
  for (int k = K - 1; k >= 0; k--) {
    const sb_node *nd = &m->node[k];
    double *F = w->F + 6 * k;
    const double *S = w->S + nd->soff;
    for (int j = 0; j < nd->ncol && tau; j++) {
      double s = 0;
      for (int i = 0; i < 6; i++) s += S[i * nd->ncol + j] * F[i];
      tau[nd->col0 + j] += s;
    }
    if (k) {
      double t[6], *Fparent = w->F + 6 * (k - 1);
      sb_mat6t_vec(w->X + 36 * k, F, t);
      for (int i = 0; i < 6; i++) Fparent[i] += t[i];
    }
  }
}

void sb_bias(const sb_model *m, sb_work *w, double *c) { rnea(m, w, NULL, c); }

int sb_base_wrench(const sb_model *m, sb_work *w, const double *a, double wrench_world[6]) {
  if (!w->kin_valid) return -1;
  rnea(m, w, a, NULL);
  /* F_0 (node 0 axes, about its origin) is what the base supplies to the
   * chain; X_0^T moves it to the base frame; the load is its opposite. */
  double Fb[6];
  sb_mat6t_vec(w->X, w->F, Fb);
  const double *R = m->base.R;
  for (int i = 0; i < 3; i++) {
    wrench_world[i] = -(R[3 * i] * Fb[0] + R[3 * i + 1] * Fb[1] + R[3 * i + 2] * Fb[2]);
    wrench_world[3 + i] = -(R[3 * i] * Fb[3] + R[3 * i + 1] * Fb[4] + R[3 * i + 2] * Fb[5]);
  }
  return 0;
}

void sb_inverse_dynamics(const sb_model *m, sb_work *w, const double *a, double *tau) {
  int n = m->n;
  rnea(m, w, a, tau);
  for (int i = 0; i < n; i++) {
    double s = 0;
    for (int j = 0; j < n; j++) s += m->K[i * n + j] * w->q[j] + m->D[i * n + j] * w->v[j];
    tau[i] += s;
  }
}

void sb_mass_matrix(const sb_model *m, sb_work *w, double *M) {
  int n = m->n, K = m->nnode;
  memset(M, 0, (size_t)n * n * sizeof(double));
  for (int k = 0; k < K; k++) memcpy(w->Ic + 36 * k, m->node[k].inertia, 36 * sizeof(double));
  for (int k = K - 1; k > 0; k--) {
    double B[36];
    sb_Ad_congruence(w->X + 36 * k, w->Ic + 36 * k, B);
    for (int i = 0; i < 36; i++) w->Ic[36 * (k - 1) + i] += B[i];
  }
  double W[6 * 12], W2[6 * 12], IS[6 * 12], B[12 * 12];
  for (int u = 0; u < m->nunit; u++) {
    const sb_unit *un = &m->unit[u];
    int nc = un->ncol;
    if (!nc) continue;
    /* P_b = Ic_b S_b + X_{b+1}^T P_{b+1} within the unit. */
    for (int b = un->node1; b >= un->node0; b--) {
      const sb_node *nd = &m->node[b];
      double *P = w->P + nd->soff;
      const double *S = w->S + nd->soff, *Ic = w->Ic + 36 * b;
      sb_matmul(6, 6, nc, Ic, S, IS);
      memcpy(P, IS, 6 * nc * sizeof(double));
      if (b < un->node1) {
        sb_Ad_matmul_tn(w->X + 36 * (b + 1), nc, w->P + m->node[b + 1].soff, W);
        for (int i = 0; i < 6 * nc; i++) P[i] += W[i];
      }
      /* M_UU += S^T P + P^T S - S^T Ic S */
      for (int i = 0; i < nc; i++)
        for (int j = 0; j < nc; j++) {
          double s = 0;
          for (int r = 0; r < 6; r++)
            s += S[r * nc + i] * P[r * nc + j] + P[r * nc + i] * S[r * nc + j] - S[r * nc + i] * IS[r * nc + j];
          M[(un->col0 + i) * n + un->col0 + j] += s;
        }
    }
    if (u == 0) continue;
    /* Cross blocks with every earlier unit: W moves from unit to unit. */
    sb_Ad_matmul_tn(w->X + 36 * un->node0, nc, w->P + m->node[un->node0].soff, W);
    for (int v = u - 1; v >= 0; v--) {
      const sb_unit *uv = &m->unit[v];
      int nv = uv->ncol;
      if (nv) {
        sb_matmul_tn(nv, 6, nc, w->Jpart + m->node[uv->node1].soff, W, B);
        for (int i = 0; i < nv; i++)
          for (int j = 0; j < nc; j++) {
            M[(uv->col0 + i) * n + un->col0 + j] += B[i * nc + j];
            M[(un->col0 + j) * n + uv->col0 + i] += B[i * nc + j];
          }
      }
      if (v) {
        sb_Ad_matmul_tn(w->Xu + 36 * v, nc, W, W2);
        memcpy(W, W2, 6 * nc * sizeof(double));
      }
    }
  }
}

/* The base's rows and columns of the mass matrix of the chain on a free
 * base, from what the composite-inertia pass left: P at a unit's first
 * node is the wrench its columns' unit accelerations need there, so moved
 * to the base frame it is B^T's block of those columns; the whole chain's
 * composite inertia Ic_0 moved to the base is Mbb. */
void sb_base_inertia(const sb_model *m, sb_work *w, double *B, double Mbb[36]) {
  int n = m->n;
  double W[6 * 12], Wb[6 * 12], A[36];
  memset(B, 0, (size_t)n * 6 * sizeof(double));
  for (int u = 0; u < m->nunit; u++) {
    const sb_unit *un = &m->unit[u];
    int nc = un->ncol;
    if (!nc) continue;
    sb_matmul_tn(6, 6, nc, w->X + 36 * un->node0, w->P + m->node[un->node0].soff, W);
    const sb_pose *gprev = un->node0 ? &w->g[un->node0 - 1] : &m->base;
    sb_pose rel = sb_pose_inv_mul(gprev, &m->base);
    sb_Ad(&rel, A);
    sb_matmul_tn(6, 6, nc, A, W, Wb);
    for (int a = 0; a < 6; a++)
      for (int j = 0; j < nc; j++) B[(un->col0 + j) * 6 + a] += Wb[a * nc + j]; /* PLS units share columns */
  }
  if (m->nnode > 0) sb_Ad_congruence(w->X, w->Ic, Mbb);
  else memset(Mbb, 0, 36 * sizeof(double));
}

int sb_forward_dynamics(const sb_model *m, sb_work *w, const double *tau, double *a) {
  int n = m->n;
  sb_mass_matrix(m, w, w->L);
  sb_bias(m, w, w->c);
  for (int i = 0; i < n; i++) {
    double s = tau ? tau[i] : 0;
    s -= w->c[i];
    for (int j = 0; j < n; j++) s -= m->K[i * n + j] * w->q[j] + m->D[i * n + j] * w->v[j];
    a[i] = s;
  }
  if (LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', n, w->L, n)) return -1;
  LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'L', n, 1, w->L, n, a, n);
  return 0;
}

void sb_energy(const sb_model *m, sb_work *w, double *kinetic, double *gravity, double *elastic) {
  double T = 0, V = 0, E = 0;
  int n = m->n;
  for (int k = 0; k < m->nnode; k++) {
    const sb_node *nd = &m->node[k];
    const double *eta = w->eta + 6 * k;
    double h[6];
    sb_mat6_vec(nd->inertia, eta, h);
    for (int i = 0; i < 6; i++) T += 0.5 * eta[i] * h[i];
    double x[3];
    sb_pose_apply(&w->g[k], nd->com, x);
    V -= nd->mass * (m->gravity[0] * x[0] + m->gravity[1] * x[1] + m->gravity[2] * x[2]);
  }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) E += 0.5 * w->q[i] * m->K[i * n + j] * w->q[j];
  if (kinetic) *kinetic = T;
  if (gravity) *gravity = V;
  if (elastic) *elastic = E;
}

int sb_add_world_wrench(const sb_model *m, sb_work *w, int seg, double s, const double f[3],
                        const double mo[3], double *Q) {
  sb_pose g;
  if (sb_point_kinematics(m, w, seg, s, &g, w->J6n, NULL, NULL)) return -1;
  double wr[6];
  for (int i = 0; i < 3; i++) {
    wr[i] = g.R[i] * mo[0] + g.R[3 + i] * mo[1] + g.R[6 + i] * mo[2];
    wr[3 + i] = g.R[i] * f[0] + g.R[3 + i] * f[1] + g.R[6 + i] * f[2];
  }
  int n = m->n;
  for (int j = 0; j < n; j++) {
    double sum = 0;
    for (int i = 0; i < 6; i++) sum += w->J6n[i * n + j] * wr[i];
    Q[j] += sum;
  }
  return 0;
}

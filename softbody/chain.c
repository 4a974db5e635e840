#include "chain.h"

#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sb_util.h"

/* OpenBLAS API (libopenblas-dev): its threads only add spin-waiting on the
 * small dense systems of a soft body. */
void openblas_set_num_threads(int num_threads);

sb_segment_params sb_segment_default(sb_segment_type type) {
  sb_segment_params p;
  memset(&p, 0, sizeof p);
  p.type = type;
  p.placement = sb_pose_identity();
  p.length = 0.1;
  p.radius = 0.01;
  p.density = 1000;
  p.slices = 5;
  p.strains = SB_STRAIN_ALL;
  p.elements = 4;
  p.young = 1e6;
  p.chamber_radius = 0.01;
  p.chamber_angle = 0.5 * M_PI;
  p.chamber_stiffness = 265;
  p.chamber_damping = 125;
  p.axis[0] = 1;
  return p;
}

static int is_soft(sb_segment_type t) { return t == SB_SEG_PCS || t == SB_SEG_PLS || t == SB_SEG_PCC; }

static const char *type_name(sb_segment_type t) {
  switch (t) {
    case SB_SEG_PCS: return "pcs";
    case SB_SEG_PLS: return "pls";
    case SB_SEG_PCC: return "pcc";
    case SB_SEG_REVOLUTE: return "revolute";
    case SB_SEG_PRISMATIC: return "prismatic";
    case SB_SEG_FIXED: return "fixed";
  }
  return "?";
}

static int finite_all(const double *x, int n) {
  for (int i = 0; i < n; i++)
    if (!isfinite(x[i])) return 0;
  return 1;
}

static int pose_ok(const sb_pose *g) {
  if (!finite_all(g->R, 9) || !finite_all(g->p, 3)) return 0;
  double RtR[9];
  sb_matmul_tn(3, 3, 3, g->R, g->R, RtR);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      if (fabs(RtR[3 * i + j] - (i == j)) > 1e-9) return 0;
  double det = g->R[0] * (g->R[4] * g->R[8] - g->R[5] * g->R[7]) -
               g->R[1] * (g->R[3] * g->R[8] - g->R[5] * g->R[6]) +
               g->R[2] * (g->R[3] * g->R[7] - g->R[4] * g->R[6]);
  return det > 0;
}

/* Checks a value and writes "segment i (type): key ..." on failure. */
#define CHECK(cond, ...)                                    \
  do {                                                      \
    if (!(cond)) {                                          \
      sb_errorf(error, error_size, __VA_ARGS__);            \
      return -1;                                            \
    }                                                       \
  } while (0)

static int validate_segment(int i, const sb_segment_params *p, char *error, int error_size) {
  const char *t = type_name(p->type);
  CHECK(p->type >= SB_SEG_PCS && p->type <= SB_SEG_FIXED, "segment %d: unknown type %d", i, (int)p->type);
  CHECK(pose_ok(&p->placement), "segment %d (%s): placement is not a finite proper rotation and translation", i, t);
  if (is_soft(p->type)) {
    CHECK(isfinite(p->length) && p->length > 0, "segment %d (%s): length must be positive and finite (got %g)", i, t, p->length);
    CHECK(isfinite(p->radius) && p->radius >= 0, "segment %d (%s): radius must be >= 0 and finite (got %g)", i, t, p->radius);
    CHECK(isfinite(p->mass) && p->mass >= 0, "segment %d (%s): mass must be >= 0 and finite (got %g)", i, t, p->mass);
    CHECK(isfinite(p->density) && p->density >= 0, "segment %d (%s): density must be >= 0 and finite (got %g)", i, t, p->density);
    CHECK(p->slices >= 1 && p->slices <= 32, "segment %d (%s): slices must be in 1..32 (got %d)", i, t, p->slices);
  }
  if (p->type == SB_SEG_PCS || p->type == SB_SEG_PLS) {
    CHECK(p->strains > 0 && p->strains <= SB_STRAIN_ALL, "segment %d (%s): strains mask must select 1..6 components (got %d)", i, t, p->strains);
    CHECK(p->radius > 0, "segment %d (%s): radius must be positive for a material rod (got %g)", i, t, p->radius);
    CHECK(isfinite(p->young) && p->young > 0, "segment %d (%s): young must be positive and finite (got %g)", i, t, p->young);
    CHECK(isfinite(p->shear) && p->shear >= 0, "segment %d (%s): shear must be >= 0 and finite (got %g)", i, t, p->shear);
    CHECK(isfinite(p->viscosity) && p->viscosity >= 0, "segment %d (%s): viscosity must be >= 0 and finite (got %g)", i, t, p->viscosity);
  }
  if (p->type == SB_SEG_PLS)
    CHECK(p->elements >= 1 && p->elements <= 256, "segment %d (pls): elements must be in 1..256 (got %d)", i, p->elements);
  if (p->type == SB_SEG_PCC) {
    CHECK(isfinite(p->chamber_radius) && p->chamber_radius > 0, "segment %d (pcc): chamber_radius must be positive and finite (got %g)", i, p->chamber_radius);
    CHECK(isfinite(p->chamber_angle), "segment %d (pcc): chamber_angle must be finite", i);
    CHECK(isfinite(p->chamber_stiffness) && p->chamber_stiffness >= 0, "segment %d (pcc): chamber_stiffness must be >= 0 and finite (got %g)", i, p->chamber_stiffness);
    CHECK(isfinite(p->chamber_damping) && p->chamber_damping >= 0, "segment %d (pcc): chamber_damping must be >= 0 and finite (got %g)", i, p->chamber_damping);
  }
  if (!is_soft(p->type)) {
    CHECK(finite_all(p->axis, 3), "segment %d (%s): axis must be finite", i, t);
    CHECK(p->type == SB_SEG_FIXED || sqrt(p->axis[0] * p->axis[0] + p->axis[1] * p->axis[1] + p->axis[2] * p->axis[2]) > 1e-12,
          "segment %d (%s): axis must be nonzero", i, t);
    CHECK(isfinite(p->link_mass) && p->link_mass >= 0, "segment %d (%s): link_mass must be >= 0 and finite (got %g)", i, t, p->link_mass);
    CHECK(finite_all(p->link_com, 3) && finite_all(p->link_inertia, 6), "segment %d (%s): link_com and link_inertia must be finite", i, t);
    CHECK(isfinite(p->joint_stiffness) && p->joint_stiffness >= 0, "segment %d (%s): joint_stiffness must be >= 0 and finite", i, t);
    CHECK(isfinite(p->joint_damping) && p->joint_damping >= 0, "segment %d (%s): joint_damping must be >= 0 and finite", i, t);
    /* The inertia about the com must be positive semidefinite. */
    double Ic[9] = {p->link_inertia[0], p->link_inertia[3], p->link_inertia[4],
                    p->link_inertia[3], p->link_inertia[1], p->link_inertia[5],
                    p->link_inertia[4], p->link_inertia[5], p->link_inertia[2]};
    double ev[3];
    LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'N', 'U', 3, Ic, 3, ev);
    CHECK(ev[0] >= -1e-12 * (fabs(ev[2]) + 1e-300), "segment %d (%s): link_inertia is not positive semidefinite", i, t);
  }
  return 0;
}

/* Gauss-Legendre nodes and weights on [0,1] by Golub-Welsch. */
static void gauss_legendre(int n, double *x, double *wt) {
  double d[32], e[32], Z[32 * 32];
  for (int i = 0; i < n; i++) d[i] = 0;
  for (int k = 1; k < n; k++) e[k - 1] = k / sqrt(4.0 * k * k - 1);
  LAPACKE_dstev(LAPACK_COL_MAJOR, 'V', n, d, e, Z, n);
  for (int i = 0; i < n; i++) {
    x[i] = 0.5 * (d[i] + 1);
    wt[i] = Z[i * n] * Z[i * n]; /* 2 v0^2 on [-1,1], halved on [0,1] */
  }
}

static void rigid_inertia(double mass, const double c[3], const double Icom[9], double Isp[36]) {
  double C[9], CC[9];
  sb_hat3(c, C);
  sb_matmul(3, 3, 3, C, C, CC);
  memset(Isp, 0, 36 * sizeof(double));
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      Isp[6 * i + j] = Icom[3 * i + j] - mass * CC[3 * i + j];
      Isp[6 * i + 3 + j] = mass * C[3 * i + j];
      Isp[6 * (3 + i) + j] = -mass * C[3 * i + j];
    }
  for (int i = 0; i < 3; i++) Isp[6 * (3 + i) + 3 + i] = mass;
}

typedef struct {
  double s, inertia[36], mass, com[3];
} item;

static int cmp_item(const void *a, const void *b) {
  double d = ((const item *)a)->s - ((const item *)b)->s;
  return (d > 0) - (d < 0);
}

static void add_inertia(item *it, const double Isp[36], double mass, const double com[3]) {
  double mt = it->mass + mass;
  for (int i = 0; i < 3; i++) it->com[i] = mt > 0 ? (it->mass * it->com[i] + mass * com[i]) / mt : 0;
  it->mass = mt;
  for (int i = 0; i < 36; i++) it->inertia[i] += Isp[i];
}

/* Section stiffness and damping densities, diag over [kx ky kz ex ey ez]. */
static void section_matrices(const sb_segment_params *p, double k[6], double d[6]) {
  double r = p->radius, A = M_PI * r * r, Ia = M_PI * r * r * r * r / 4, J = 2 * Ia;
  double E = p->young, G = p->shear > 0 ? p->shear : p->young / 3, eta = p->viscosity;
  double kk[6] = {E * Ia, E * Ia, G * J, G * A, G * A, E * A};
  double dd[6] = {eta * Ia, eta * Ia, eta * J, eta * A, eta * A, eta * A};
  memcpy(k, kk, sizeof kk);
  memcpy(d, dd, sizeof dd);
}

static int build_segment_basis(sb_segment *sg, int idx, char *error, int error_size) {
  const sb_segment_params *p = &sg->p;
  memset(sg->Phi, 0, sizeof sg->Phi);
  sg->ncomp = 0;
  if (p->type == SB_SEG_PCS || p->type == SB_SEG_PLS) {
    for (int c = 0; c < 6; c++)
      if (p->strains & (1 << c)) sg->comp[sg->ncomp++] = c;
    for (int j = 0; j < sg->ncomp; j++) sg->Phi[sg->comp[j] * sg->ncomp + j] = 1;
    sg->ncol = p->type == SB_SEG_PCS ? sg->ncomp : sg->ncomp * (p->elements + 1);
  } else if (p->type == SB_SEG_PCC) {
    /* Chamber j at angle psi_j, radius d: dl_j = L (d (kx sin psi - ky cos psi) + (ez - 1)). */
    double C[9], Ci[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    lapack_int piv[3];
    for (int j = 0; j < 3; j++) {
      double psi = p->chamber_angle + 2 * M_PI * j / 3;
      C[3 * j] = p->length * p->chamber_radius * sin(psi);
      C[3 * j + 1] = -p->length * p->chamber_radius * cos(psi);
      C[3 * j + 2] = p->length;
    }
    if (LAPACKE_dgesv(LAPACK_ROW_MAJOR, 3, 3, C, 3, piv, Ci, 3) != 0) {
      sb_errorf(error, error_size, "segment %d (pcc): chamber geometry is singular", idx);
      return -1;
    }
    static const int rows[3] = {0, 1, 5};
    for (int r = 0; r < 3; r++)
      for (int j = 0; j < 3; j++) sg->Phi[rows[r] * 3 + j] = Ci[3 * r + j];
    sg->ncol = 3;
  } else if (p->type == SB_SEG_FIXED) {
    sg->ncol = 0;
  } else {
    sg->ncol = 1;
  }
  return 0;
}

sb_model *sb_model_create(const sb_chain_params *cp, char *error, int error_size) {
  sb_errorf(error, error_size, "%s", "");
  if (!cp) {
    sb_errorf(error, error_size, "chain parameters are NULL");
    return NULL;
  }
  if (cp->nseg < 1 || !cp->seg) {
    sb_errorf(error, error_size, "chain needs at least one segment (got %d)", cp->nseg);
    return NULL;
  }
  if (cp->ndisk < 0 || (cp->ndisk > 0 && !cp->disk)) {
    sb_errorf(error, error_size, "disk list is inconsistent (ndisk = %d)", cp->ndisk);
    return NULL;
  }
  if (!pose_ok(&cp->base)) {
    sb_errorf(error, error_size, "base pose is not a finite proper rotation and translation");
    return NULL;
  }
  if (!finite_all(cp->gravity, 3)) {
    sb_errorf(error, error_size, "gravity must be finite");
    return NULL;
  }
  for (int i = 0; i < cp->nseg; i++)
    if (validate_segment(i, &cp->seg[i], error, error_size)) return NULL;
  for (int d = 0; d < cp->ndisk; d++) {
    const sb_disk_params *dk = &cp->disk[d];
    if (dk->segment < 0 || dk->segment >= cp->nseg || !is_soft(cp->seg[dk->segment].type)) {
      sb_errorf(error, error_size, "disk %d: segment %d is not a soft segment of the chain", d, dk->segment);
      return NULL;
    }
    double L = cp->seg[dk->segment].length;
    if (!(isfinite(dk->s) && dk->s >= 0 && dk->s <= L)) {
      sb_errorf(error, error_size, "disk %d: s = %g is outside [0, %g] of segment %d", d, dk->s, L, dk->segment);
      return NULL;
    }
    if (!(isfinite(dk->mass) && dk->mass >= 0 && isfinite(dk->radius) && dk->radius >= 0 &&
          isfinite(dk->thickness) && dk->thickness >= 0)) {
      sb_errorf(error, error_size, "disk %d: mass, radius and thickness must be >= 0 and finite", d);
      return NULL;
    }
  }

  openblas_set_num_threads(1);
  sb_model *m = calloc(1, sizeof *m);
  m->nseg = cp->nseg;
  m->seg = calloc(cp->nseg, sizeof *m->seg);
  m->base = cp->base;
  memcpy(m->gravity, cp->gravity, sizeof m->gravity);

  /* Basis, columns, and an upper bound on nodes. */
  int maxnode = 0;
  for (int i = 0; i < cp->nseg; i++) {
    sb_segment *sg = &m->seg[i];
    sg->p = cp->seg[i];
    if (!is_soft(sg->p.type)) {
      double a = sqrt(sg->p.axis[0] * sg->p.axis[0] + sg->p.axis[1] * sg->p.axis[1] + sg->p.axis[2] * sg->p.axis[2]);
      for (int j = 0; j < 3; j++) sg->p.axis[j] = a > 0 ? sg->p.axis[j] / a : 0;
    }
    if (build_segment_basis(sg, i, error, error_size)) {
      sb_model_free(m);
      return NULL;
    }
    sg->col0 = m->n;
    m->n += sg->ncol;
    int pieces = sg->p.type == SB_SEG_PLS ? sg->p.elements : 1;
    maxnode += is_soft(sg->p.type) ? pieces * (sg->p.slices + 1) : 1;
  }
  maxnode += cp->ndisk;
  if (m->n == 0) {
    sb_errorf(error, error_size, "chain has no generalized coordinates (only fixed joints)");
    sb_model_free(m);
    return NULL;
  }

  m->node = calloc(maxnode, sizeof *m->node);
  m->unit = calloc(maxnode, sizeof *m->unit);
  item *items = calloc(maxnode, sizeof *items);
  double gx[32], gw[32];

  for (int i = 0; i < cp->nseg; i++) {
    sb_segment *sg = &m->seg[i];
    const sb_segment_params *p = &sg->p;
    sg->node0 = m->nnode;
    if (!is_soft(p->type)) {
      sb_node *nd = &m->node[m->nnode++];
      nd->seg = i;
      nd->element = -1;
      nd->G = p->placement;
      nd->col0 = sg->col0;
      nd->ncol = sg->ncol;
      double Icom[9] = {p->link_inertia[0], p->link_inertia[3], p->link_inertia[4],
                        p->link_inertia[3], p->link_inertia[1], p->link_inertia[5],
                        p->link_inertia[4], p->link_inertia[5], p->link_inertia[2]};
      rigid_inertia(p->link_mass, p->link_com, Icom, nd->inertia);
      nd->mass = p->link_mass;
      memcpy(nd->com, p->link_com, sizeof nd->com);
      sg->nnode = 1;
      continue;
    }
    /* Soft: Gauss slices per piece, piece ends, and lumped disks, merged by s. */
    double L = p->length, rhoA = p->mass > 0 ? p->mass / L : p->density * M_PI * p->radius * p->radius;
    double r2 = p->radius * p->radius;
    double line[6] = {rhoA * r2 / 4, rhoA * r2 / 4, rhoA * r2 / 2, rhoA, rhoA, rhoA};
    memcpy(sg->line_inertia, line, sizeof line);
    int pieces = p->type == SB_SEG_PLS ? p->elements : 1, nit = 0;
    double zero3[3] = {0, 0, 0};
    gauss_legendre(p->slices, gx, gw);
    for (int e = 0; e < pieces; e++) {
      double a = L * e / pieces, le = L / pieces;
      for (int k = 0; k < p->slices; k++) {
        item *it = &items[nit++];
        memset(it, 0, sizeof *it);
        it->s = a + le * gx[k];
        double Isp[36] = {0};
        for (int c = 0; c < 6; c++) Isp[7 * c] = line[c] * le * gw[k];
        add_inertia(it, Isp, rhoA * le * gw[k], zero3);
      }
      item *it = &items[nit++];
      memset(it, 0, sizeof *it);
      it->s = (e == pieces - 1) ? L : a + le;
    }
    for (int d = 0; d < cp->ndisk; d++) {
      const sb_disk_params *dk = &cp->disk[d];
      if (dk->segment != i) continue;
      item *it = &items[nit++];
      memset(it, 0, sizeof *it);
      it->s = dk->s;
      double mI = dk->mass, r = dk->radius, th = dk->thickness;
      double Icom[9] = {mI * (3 * r * r + th * th) / 12, 0, 0, 0, mI * (3 * r * r + th * th) / 12, 0, 0, 0, mI * r * r / 2};
      double Isp[36];
      rigid_inertia(mI, zero3, Icom, Isp);
      add_inertia(it, Isp, mI, zero3);
    }
    qsort(items, nit, sizeof *items, cmp_item);
    double prev = 0;
    for (int k = 0; k < nit; k++) {
      sb_node *last = m->nnode > sg->node0 ? &m->node[m->nnode - 1] : NULL;
      if (last && fabs(items[k].s - last->s1) <= 1e-12 * L) {
        /* coincident items share one node */
        double mt = last->mass + items[k].mass;
        for (int c = 0; c < 3; c++) last->com[c] = 0;
        last->mass = mt;
        for (int c = 0; c < 36; c++) last->inertia[c] += items[k].inertia[c];
        continue;
      }
      sb_node *nd = &m->node[m->nnode++];
      nd->seg = i;
      nd->s0 = prev;
      nd->s1 = items[k].s;
      prev = nd->s1;
      nd->G = (nd == &m->node[sg->node0]) ? p->placement : sb_pose_identity();
      memcpy(nd->inertia, items[k].inertia, sizeof nd->inertia);
      nd->mass = items[k].mass;
      if (p->type == SB_SEG_PLS) {
        int e = (int)floor(0.5 * (nd->s0 + nd->s1) / (L / pieces));
        if (e >= pieces) e = pieces - 1;
        nd->element = e;
        nd->col0 = sg->col0 + e * sg->ncomp;
        nd->ncol = 2 * sg->ncomp;
      } else {
        nd->element = -1;
        nd->col0 = sg->col0;
        nd->ncol = sg->ncol;
      }
    }
    sg->nnode = m->nnode - sg->node0;
  }
  free(items);

  for (int k = 0; k < m->nnode; k++) {
    sb_pose id = sb_pose_identity();
    m->node[k].G_identity = !memcmp(&m->node[k].G, &id, sizeof id);
  }

  /* Units: maximal runs of nodes with the same columns. */
  for (int k = 0; k < m->nnode; k++) {
    sb_node *nd = &m->node[k];
    sb_unit *u = m->nunit ? &m->unit[m->nunit - 1] : NULL;
    if (!u || u->col0 != nd->col0 || u->ncol != nd->ncol || m->node[k - 1].seg != nd->seg) {
      u = &m->unit[m->nunit++];
      u->node0 = k;
      u->col0 = nd->col0;
      u->ncol = nd->ncol;
    }
    u->node1 = k;
    nd->unit = m->nunit - 1;
    nd->soff = m->stotal;
    m->stotal += 6 * nd->ncol;
    if (nd->ncol > m->maxcol) m->maxcol = nd->ncol;
    m->total_mass += nd->mass;
  }

  for (int u = 0; u < m->nunit; u++) {
    sb_unit *un = &m->unit[u];
    un->cend = u ? un[-1].cend : 0;
    if (un->col0 + un->ncol > un->cend) un->cend = un->col0 + un->ncol;
  }

  /* Constant stiffness and damping. */
  int n = m->n;
  m->K = calloc((size_t)n * n, sizeof(double));
  m->D = calloc((size_t)n * n, sizeof(double));
  for (int i = 0; i < m->nseg; i++) {
    sb_segment *sg = &m->seg[i];
    const sb_segment_params *p = &sg->p;
    int c0 = sg->col0;
    if (p->type == SB_SEG_PCS || p->type == SB_SEG_PLS) {
      double ks[6], ds[6];
      section_matrices(p, ks, ds);
      int nc = sg->ncomp, pieces = p->type == SB_SEG_PLS ? p->elements : 1;
      double le = p->length / pieces;
      /* PLS: exact integral of the hat functions, le [[1/3 1/6] [1/6 1/3]]. */
      double w[2][2] = {{le / 3, le / 6}, {le / 6, le / 3}};
      for (int e = 0; e < pieces; e++)
        for (int a = 0; a < (p->type == SB_SEG_PLS ? 2 : 1); a++)
          for (int b = 0; b < (p->type == SB_SEG_PLS ? 2 : 1); b++) {
            double f = p->type == SB_SEG_PLS ? w[a][b] : p->length;
            for (int j = 0; j < nc; j++) {
              int r = c0 + (e + a) * nc + j, c = c0 + (e + b) * nc + j;
              if (p->type == SB_SEG_PCS) r = c = c0 + j;
              m->K[r * n + c] += f * ks[sg->comp[j]];
              m->D[r * n + c] += f * ds[sg->comp[j]];
            }
          }
    } else if (p->type == SB_SEG_PCC) {
      for (int j = 0; j < 3; j++) {
        m->K[(c0 + j) * n + c0 + j] = p->chamber_stiffness;
        m->D[(c0 + j) * n + c0 + j] = p->chamber_damping;
      }
    } else if (sg->ncol == 1) {
      m->K[c0 * n + c0] = p->joint_stiffness;
      m->D[c0 * n + c0] = p->joint_damping;
    }
  }
  /* each row's nonzero span: a section's stiffness couples its own
   * coordinates only, so the step's n x n loops over K and D need not */
  m->kd_lo = calloc(n ? n : 1, sizeof(int));
  m->kd_hi = calloc(n ? n : 1, sizeof(int));
  if (!m->kd_lo || !m->kd_hi) {
    sb_errorf(error, error_size, "out of memory (stiffness spans of %d coordinates)", n);
    sb_model_free(m);
    return NULL;
  }
  for (int i = 0; i < n; i++) {
    int lo = n, hi = 0;
    for (int j = 0; j < n; j++)
      if (m->K[i * n + j] != 0 || m->D[i * n + j] != 0) {
        if (j < lo) lo = j;
        hi = j + 1;
      }
    m->kd_lo[i] = lo < hi ? lo : 0;
    m->kd_hi[i] = hi;
  }
  return m;
}

void sb_model_free(sb_model *m) {
  if (!m) return;
  free(m->seg);
  free(m->node);
  free(m->unit);
  free(m->K);
  free(m->D);
  free(m->kd_lo);
  free(m->kd_hi);
  free(m);
}

sb_state *sb_state_create(const sb_model *m) {
  sb_state *s = calloc(1, sizeof *s);
  s->q = calloc(m->n, sizeof(double));
  s->v = calloc(m->n, sizeof(double));
  return s;
}

void sb_state_reset(const sb_model *m, sb_state *s) {
  s->t = 0;
  memset(s->q, 0, m->n * sizeof(double));
  memset(s->v, 0, m->n * sizeof(double));
}

void sb_state_free(sb_state *s) {
  if (!s) return;
  free(s->q);
  free(s->v);
  free(s);
}

sb_work *sb_work_create(const sb_model *m) {
  sb_work *w = calloc(1, sizeof *w);
  int n = m->n, K = m->nnode, U = m->nunit;
  w->n = n;
  w->q = calloc(n, sizeof(double));
  w->v = calloc(n, sizeof(double));
  w->g = calloc(K, sizeof(sb_pose));
  w->X = calloc((size_t)36 * K, sizeof(double));
  w->S = calloc(m->stotal + 1, sizeof(double));
  w->Jpart = calloc(m->stotal + 1, sizeof(double));
  w->P = calloc(m->stotal + 1, sizeof(double));
  w->eta = calloc((size_t)6 * K, sizeof(double));
  w->nu = calloc((size_t)6 * K, sizeof(double));
  w->bterm = calloc((size_t)6 * K, sizeof(double));
  w->vp = calloc((size_t)6 * K, sizeof(double));
  w->acc = calloc((size_t)6 * K, sizeof(double));
  w->F = calloc((size_t)6 * K, sizeof(double));
  w->Ic = calloc((size_t)36 * K, sizeof(double));
  w->Xu = calloc((size_t)36 * U, sizeof(double));
  w->Jend = calloc((size_t)6 * n * U, sizeof(double));
  w->M = calloc((size_t)n * n, sizeof(double));
  w->Mt = calloc((size_t)n * n, sizeof(double));
  w->Mt_add = calloc((size_t)n * n, sizeof(double));
  w->J3n = calloc((size_t)3 * n, sizeof(double));
  w->L = calloc((size_t)n * n, sizeof(double));
  w->c = calloc(n, sizeof(double));
  w->vstar = calloc(n, sizeof(double));
  w->rhs = calloc(n, sizeof(double));
  w->tmp = calloc(n, sizeof(double));
  w->tmp2 = calloc(n, sizeof(double));
  w->J6n = calloc((size_t)6 * n, sizeof(double));
  w->last_J = calloc((size_t)6 * n, sizeof(double));
  w->qacc = calloc(n, sizeof(double));
  return w;
}

void sb_work_free(sb_work *w) {
  if (!w) return;
  double *arrs[] = {w->q, w->v, w->X, w->S, w->Jpart, w->P, w->eta, w->nu, w->bterm, w->vp,
                    w->acc, w->F, w->Ic, w->Xu, w->Jend, w->M, w->Mt, w->Mt_add, w->J3n, w->L, w->c, w->vstar,
                    w->rhs, w->tmp, w->tmp2, w->J6n, w->last_J, w->qacc};
  for (size_t i = 0; i < sizeof arrs / sizeof arrs[0]; i++) free(arrs[i]);
  free(w->g);
  free(w);
}

/* PLS basis on element e at arc length s: Phi (6 x 2*ncomp) = [(1-t) B, t B]. */
static void pls_phi(const sb_segment *sg, int e, double s, double *Phi) {
  double le = sg->p.length / sg->p.elements, t = (s - e * le) / le;
  int nc = sg->ncomp, w = 2 * nc;
  memset(Phi, 0, 6 * w * sizeof(double));
  for (int j = 0; j < nc; j++) {
    Phi[sg->comp[j] * w + j] = 1 - t;
    Phi[sg->comp[j] * w + nc + j] = t;
  }
}

/* Om(q) of the step from s0 to s1 (soft) or the joint (rigid), its Jacobian
 * Omq (6 x ncol), and Omqq = d2Om/dq2 [v, v] (when v != NULL). q and v are
 * the step's own columns. */
static void step_eval(const sb_segment *sg, int element, double s0, double s1, const double *q,
                      const double *v, double Om[6], double *Omq, double Omqq[6]) {
  const sb_segment_params *p = &sg->p;
  double h = s1 - s0;
  memset(Om, 0, 6 * sizeof(double));
  if (Omqq) memset(Omqq, 0, 6 * sizeof(double));
  switch (p->type) {
    case SB_SEG_PCS:
    case SB_SEG_PCC: {
      int nc = sg->ncol;
      for (int i = 0; i < 6; i++) {
        double x = (i == 5);
        for (int j = 0; j < nc; j++) {
          x += sg->Phi[i * nc + j] * q[j];
          Omq[i * nc + j] = h * sg->Phi[i * nc + j];
        }
        Om[i] = h * x;
      }
      return;
    }
    case SB_SEG_PLS: {
      /* 4th-order Magnus for g' = g xi^: Om = h/2 (xa + xb) + sqrt(3) h^2/12 ad_xa xb. */
      int w = 2 * sg->ncomp;
      double Pa[6 * 12], Pb[6 * 12], xa[6], xb[6], k = sqrt(3.0) * h * h / 12;
      double sa = s0 + h * (0.5 - sqrt(3.0) / 6), sb = s0 + h * (0.5 + sqrt(3.0) / 6);
      pls_phi(sg, element, sa, Pa);
      pls_phi(sg, element, sb, Pb);
      for (int i = 0; i < 6; i++) {
        xa[i] = (i == 5);
        xb[i] = (i == 5);
        for (int j = 0; j < w; j++) {
          xa[i] += Pa[i * w + j] * q[j];
          xb[i] += Pb[i * w + j] * q[j];
        }
      }
      double c[6];
      sb_ad_apply(xa, xb, c);
      for (int i = 0; i < 6; i++) Om[i] = 0.5 * h * (xa[i] + xb[i]) + k * c[i];
      for (int j = 0; j < w; j++) {
        double ca[6], cb[6], ta[6], tb[6];
        for (int i = 0; i < 6; i++) {
          ca[i] = Pa[i * w + j];
          cb[i] = Pb[i * w + j];
        }
        sb_ad_apply(xa, cb, ta);
        sb_ad_apply(xb, ca, tb);
        for (int i = 0; i < 6; i++) Omq[i * w + j] = 0.5 * h * (ca[i] + cb[i]) + k * (ta[i] - tb[i]);
      }
      if (v && Omqq) {
        double da[6] = {0}, db[6] = {0};
        for (int i = 0; i < 6; i++)
          for (int j = 0; j < w; j++) {
            da[i] += Pa[i * w + j] * v[j];
            db[i] += Pb[i * w + j] * v[j];
          }
        sb_ad_apply(da, db, c);
        for (int i = 0; i < 6; i++) Omqq[i] = 2 * k * c[i];
      }
      return;
    }
    case SB_SEG_REVOLUTE:
    case SB_SEG_PRISMATIC: {
      int off = p->type == SB_SEG_REVOLUTE ? 0 : 3;
      for (int i = 0; i < 6; i++) Omq[i] = 0;
      for (int i = 0; i < 3; i++) {
        Om[off + i] = p->axis[i] * q[0];
        Omq[off + i] = p->axis[i];
      }
      return;
    }
    case SB_SEG_FIXED:
      return;
  }
}

/* One step from a parent frame: pose, Ad(parent->child), S = T(Om) Omq, and
 * with v: nu = S v, bterm = dS/dt v (= dT[Om'] Om' + T Omqq). */
typedef struct {
  sb_pose grel;
  double X[36];
  double nu[6], zeta[6];
} step_out;

/* G == NULL: the identity (most nodes), skipping a product that changes
 * nothing. S == NULL asks only for grel, X and nu (a pose and twist query): nu is then
 * T(Om) Om-dot in one tangent product instead of ncol, and zeta is skipped;
 * with S, zeta (the costliest term) only when want_zeta. */
static void step_frame(const sb_segment *sg, int element, double s0, double s1, const sb_pose *G,
                       int ncol, const double *q, const double *v, double *S, int want_zeta, step_out *o) {
  double Om[6], Omq[6 * 12], Omqq[6];
  want_zeta = want_zeta && v && S;
  step_eval(sg, element, s0, s1, q, v, Om, Omq, want_zeta ? Omqq : NULL);
  sb_pose E = sb_se3_exp(Om);
  o->grel = G ? sb_pose_mul(G, &E) : E;
  sb_Ad_inv(&o->grel, o->X);
  if (!S && !v) { /* a pose query: no tangent operator needed */
    memset(o->nu, 0, sizeof o->nu);
    memset(o->zeta, 0, sizeof o->zeta);
    return;
  }
  sb_tangent T;
  sb_tangent_init(&T, Om);
  if (!S) {
    memset(o->zeta, 0, sizeof o->zeta);
    double Omd[6] = {0};
    for (int i = 0; i < 6; i++)
      for (int j = 0; j < ncol; j++) Omd[i] += Omq[i * ncol + j] * v[j];
    sb_tangent_apply(&T, Omd, o->nu);
    return;
  }
  for (int j = 0; j < ncol; j++) {
    double col[6], tc[6];
    for (int i = 0; i < 6; i++) col[i] = Omq[i * ncol + j];
    sb_tangent_apply(&T, col, tc);
    for (int i = 0; i < 6; i++) S[i * ncol + j] = tc[i];
  }
  if (!v) return;
  double Omd[6] = {0};
  for (int i = 0; i < 6; i++) {
    o->nu[i] = 0;
    for (int j = 0; j < ncol; j++) {
      Omd[i] += Omq[i * ncol + j] * v[j];
      o->nu[i] += S[i * ncol + j] * v[j];
    }
  }
  if (!want_zeta) {
    memset(o->zeta, 0, sizeof o->zeta);
    return;
  }
  double a[6], b[6];
  sb_tangent_deriv_apply(&T, Omd, Omd, a);
  sb_tangent_apply(&T, Omqq, b);
  for (int i = 0; i < 6; i++) o->zeta[i] = a[i] + b[i];
}

void sb_set_base_motion(sb_model *m, const double twist[6], const double acc[6]) {
  for (int i = 0; i < 6; i++) {
    m->base_twist[i] = twist ? twist[i] : 0;
    m->base_acc[i] = acc ? acc[i] : 0;
  }
}

void sb_set_base_motion_world(sb_model *m, const double omega[3], const double vel[3],
                              const double alpha[3], const double accel[3]) {
  static const double z[3] = {0, 0, 0};
  const double *R = m->base.R;
  double t[6], a[6];
  /* base axes: x_b = R^T x_w */
  for (int i = 0; i < 3; i++) {
    const double *src[4] = {omega ? omega : z, vel ? vel : z, alpha ? alpha : z, accel ? accel : z};
    double *dst[4] = {t + i, t + 3 + i, a + i, a + 3 + i};
    for (int k = 0; k < 4; k++) *dst[k] = R[i] * src[k][0] + R[3 + i] * src[k][1] + R[6 + i] * src[k][2];
  }
  /* d/dt (R^T v) = R^T a - w_b x v_b: the body-fixed derivative */
  double c[3] = {t[1] * t[5] - t[2] * t[4], t[2] * t[3] - t[0] * t[5], t[0] * t[4] - t[1] * t[3]};
  for (int i = 0; i < 3; i++) a[3 + i] -= c[i];
  sb_set_base_motion(m, t, a);
}

void sb_kinematics(const sb_model *m, sb_work *w, const double *q, const double *v) {
  int n = m->n;
  /* a step asks for the same kinematics up to three times (disk placement,
   * dynamics, base load): reuse them when every input is unchanged */
  if (w->kin_valid && q != w->q && v != w->v && w->vel_valid == (v != NULL) &&
      !memcmp(w->q, q, n * sizeof(double)) && (!v || !memcmp(w->v, v, n * sizeof(double))) &&
      !memcmp(&w->kin_base, &m->base, sizeof m->base) &&
      !memcmp(w->kin_base_twist, m->base_twist, sizeof w->kin_base_twist))
    return;
  memcpy(w->q, q, n * sizeof(double));
  if (v)
    memcpy(w->v, v, n * sizeof(double));
  else
    memset(w->v, 0, n * sizeof(double));
  w->vel_valid = v != NULL;
  static const double zero6[6] = {0};
  for (int k = 0; k < m->nnode; k++) {
    const sb_node *nd = &m->node[k];
    const sb_segment *sg = &m->seg[nd->seg];
    const sb_pose *gp = k ? &w->g[k - 1] : &m->base;
    /* absolute twists start at the base's; velocity products start at 0
     * (the base's own acceleration enters the dynamics through A0) */
    const double *etap = k ? w->eta + 6 * (k - 1) : m->base_twist, *vpp = k ? w->vp + 6 * (k - 1) : zero6;
    double *S = w->S + nd->soff, *X = w->X + 36 * k;
    step_out o;
    step_frame(sg, nd->element, nd->s0, nd->s1, nd->G_identity ? NULL : &nd->G, nd->ncol, q + nd->col0, v ? v + nd->col0 : NULL, S, 1, &o);
    w->g[k] = sb_pose_mul(gp, &o.grel);
    memcpy(X, o.X, sizeof o.X);
    /* Unit-local Jacobian. */
    double *Jp = w->Jpart + nd->soff;
    if (k == m->unit[nd->unit].node0) {
      memcpy(Jp, S, 6 * nd->ncol * sizeof(double));
    } else {
      sb_Ad_matmul(X, nd->ncol, w->Jpart + m->node[k - 1].soff, nd->ncol, Jp, nd->ncol);
      for (int i = 0; i < 6 * nd->ncol; i++) Jp[i] += S[i];
    }
    double *eta = w->eta + 6 * k, *nu = w->nu + 6 * k, *bt = w->bterm + 6 * k, *vpk = w->vp + 6 * k;
    if (v) {
      double t[6];
      sb_mat6_vec(X, etap, eta);
      for (int i = 0; i < 6; i++) eta[i] += o.nu[i];
      memcpy(nu, o.nu, sizeof o.nu);
      sb_ad_apply(eta, nu, t);
      for (int i = 0; i < 6; i++) bt[i] = o.zeta[i] + t[i];
      sb_mat6_vec(X, vpp, vpk);
      for (int i = 0; i < 6; i++) vpk[i] += bt[i];
    } else {
      sb_mat6_vec(X, etap, eta); /* q' = 0: rigid motion with the base */
      memset(nu, 0, 6 * sizeof(double));
      memset(bt, 0, 6 * sizeof(double));
      memset(vpk, 0, 6 * sizeof(double));
    }
  }
  /* Ad across each unit, for the mass matrix and the Jacobian queries. */
  for (int u = 0; u < m->nunit; u++) {
    const sb_unit *un = &m->unit[u];
    const sb_pose *gprev = un->node0 ? &w->g[un->node0 - 1] : &m->base;
    sb_pose rel = sb_pose_inv_mul(&w->g[un->node1], gprev);
    sb_Ad(&rel, w->Xu + 36 * u);
  }
  w->kin_valid = 1;
  w->jend_valid = 0;
  w->last_valid = 0;
  w->kin_base = m->base;
  memcpy(w->kin_base_twist, m->base_twist, sizeof w->kin_base_twist);
}


/* Per unit: Ad across it and the full Jacobian at its last node. Costs
 * units x n, so it is built on the first Jacobian query after a kinematics
 * pass, not in the pass itself (the dynamics do not need it). */
static void unit_jacobians(const sb_model *m, sb_work *w) {
  int n = m->n;
  int cmax = 0;
  for (int u = 0; u < m->nunit; u++) {
    const sb_unit *un = &m->unit[u];
    const double *Xu = w->Xu + 36 * u;
    double *J = w->Jend + (size_t)6 * n * u;
    /* the previous unit's Jend is zero past cmax: so is Xu times it */
    int c0 = u ? cmax : 0;
    if (u) sb_Ad_matmul(Xu, cmax, w->Jend + (size_t)6 * n * (u - 1), n, J, n);
    for (int i = 0; i < 6; i++) memset(J + (size_t)i * n + c0, 0, (size_t)(n - c0) * sizeof(double));
    const double *Jp = w->Jpart + m->node[un->node1].soff;
    for (int i = 0; i < 6; i++)
      for (int j = 0; j < un->ncol; j++) J[i * n + un->col0 + j] += Jp[i * un->ncol + j];
    if (un->col0 + un->ncol > cmax) cmax = un->col0 + un->ncol;
  }
  w->jend_valid = 1;
}

/* Node k's Jacobian in the first ncol columns of J's 6 rows (leading
 * dimension n), ncol at least its unit's cend: the node's columns all lie
 * there, and J past them is not touched. */
/* The first column of a unit's own part of a point Jacobian: the unit's
 * nodes may share columns with the previous unit (a PLS element's strain
 * interpolates the previous node's coefficients), so it may lie before the
 * previous unit's cend. */
static int parts_l0(const sb_model *m, const sb_node *nd) {
  int c0 = m->unit[nd->unit - 1].cend;
  return nd->col0 < c0 ? nd->col0 : c0;
}

/* parts: the proximal columns (Ad(node <- previous unit's end) Jend) are
 * left to the caller (sb_point_jacobian_parts); J is then written from
 * parts_l0 on. */
static void node_jacobian_head_a(const sb_model *m, sb_work *w, int k, double *J, int ncol, int parts) {
  int n = m->n;
  if (!w->jend_valid) unit_jacobians(m, w);
  const sb_node *nd = &m->node[k];
  int c0 = parts && nd->unit > 0 ? parts_l0(m, nd) : 0;
  for (int i = 0; i < 6; i++) memset(J + (size_t)i * n + c0, 0, (ncol - c0) * sizeof(double));
  if (nd->unit > 0 && !parts) {
    /* Jend of the previous unit is zero past its columns: so is A Jend */
    sb_pose rel = sb_pose_inv_mul(&w->g[k], &w->g[m->unit[nd->unit].node0 - 1]);
    double A[36];
    sb_Ad(&rel, A);
    sb_Ad_matmul(A, m->unit[nd->unit - 1].cend, w->Jend + (size_t)6 * n * (nd->unit - 1), n, J, n);
  }
  const double *Jp = w->Jpart + nd->soff;
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < nd->ncol; j++) J[i * n + nd->col0 + j] += Jp[i * nd->ncol + j];
}

static void node_jacobian_head(const sb_model *m, sb_work *w, int k, double *J, int ncol) {
  node_jacobian_head_a(m, w, k, J, ncol, 0);
}

void sb_node_jacobian(const sb_model *m, sb_work *w, int k, double *J) { node_jacobian_head(m, w, k, J, m->n); }

/* The node whose unit holds arc length *s of segment seg, with *s clamped
 * into the segment (0 on a rigid one), or -1 when seg or *s is out of range.
 * point_query and point_node must agree on it. */
static int point_locate(const sb_model *m, int seg, double *s) {
  if (seg < 0 || seg >= m->nseg) return -1;
  const sb_segment *sg = &m->seg[seg];
  int k = sg->node0;
  if (!is_soft(sg->p.type)) {
    *s = 0;
    return k;
  }
  double L = sg->p.length, tol = 1e-12 * L;
  if (!(*s >= -tol && *s <= L + tol)) return -1;
  if (*s < 0) *s = 0;
  if (*s > L) *s = L;
  while (k < sg->node0 + sg->nnode - 1 && m->node[k].s1 < *s - tol) k++;
  return k;
}

/* J, when asked for, in its first ncol columns only (ncol at least the unit's
 * cend: the rest of the point Jacobian is zero and J there is not touched). */
static int point_query_a(const sb_model *m, sb_work *w, int seg, double s, sb_pose *g, double *J, int ncol,
                         double eta[6], double dJv[6], int parts) {
  int k = point_locate(m, seg, &s);
  if (k < 0) return -1;
  const sb_segment *sg = &m->seg[seg];
  int n = m->n;
  const sb_node *nd = &m->node[k];
  int at_node = !is_soft(sg->p.type) || fabs(nd->s1 - s) <= 1e-12 * sg->p.length;
  if (at_node) {
    if (g) *g = w->g[k];
    if (J) node_jacobian_head_a(m, w, k, J, ncol, parts);
    if (eta) memcpy(eta, w->eta + 6 * k, 6 * sizeof(double));
    if (dJv) memcpy(dJv, w->vp + 6 * k, 6 * sizeof(double));
    return 0;
  }
  /* Partial step from the parent of node k to s. */
  static const double zero6[6] = {0};
  const sb_pose *gp = k ? &w->g[k - 1] : &m->base;
  double S[6 * 12];
  step_out o;
  const double *vv = w->vel_valid && (J || eta || dJv) ? w->v + nd->col0 : NULL;
  step_frame(sg, nd->element, nd->s0, s, nd->G_identity ? NULL : &nd->G, nd->ncol, w->q + nd->col0, vv, J || dJv ? S : NULL, dJv != NULL, &o);
  sb_pose gs = sb_pose_mul(gp, &o.grel);
  if (g) *g = gs;
  if (J) {
    /* J = Ad(s <- unit start) Jend(previous unit) + Ad(s <- parent)
     * Jpart(parent) + S: one 6 x 6 product over the proximal columns, not
     * two (the parent node's Jacobian, then its transport to s) */
    const sb_unit *un = &m->unit[nd->unit];
    int c0 = 0;
    if (nd->unit > 0) {
      if (!w->jend_valid) unit_jacobians(m, w);
      c0 = m->unit[nd->unit - 1].cend;
      if (!parts) {
        sb_pose rel = sb_pose_inv_mul(&gs, &w->g[un->node0 - 1]);
        double A[36];
        sb_Ad(&rel, A);
        sb_Ad_matmul(A, c0, w->Jend + (size_t)6 * n * (nd->unit - 1), n, J, n);
      }
    }
    int l0 = parts && nd->unit > 0 ? parts_l0(m, nd) : c0;
    for (int i = 0; i < 6; i++) memset(J + (size_t)i * n + l0, 0, (ncol - l0) * sizeof(double));
    if (k > un->node0) {
      double T[6 * 12];
      sb_Ad_matmul(o.X, nd->ncol, w->Jpart + m->node[k - 1].soff, nd->ncol, T, nd->ncol);
      for (int i = 0; i < 6 * nd->ncol; i++) S[i] += T[i];
    }
    for (int i = 0; i < 6; i++)
      for (int j = 0; j < nd->ncol; j++) J[i * n + nd->col0 + j] += S[i * nd->ncol + j];
  }
  if (!eta && !dJv) return 0;
  const double *etap = k ? w->eta + 6 * (k - 1) : m->base_twist, *vpp = k ? w->vp + 6 * (k - 1) : zero6;
  double e[6];
  sb_mat6_vec(o.X, etap, e);
  for (int i = 0; i < 6; i++) e[i] += vv ? o.nu[i] : 0;
  if (eta) memcpy(eta, e, sizeof e);
  if (dJv) {
    if (!vv) {
      memset(dJv, 0, 6 * sizeof(double));
    } else {
      double t[6];
      sb_mat6_vec(o.X, vpp, dJv);
      sb_ad_apply(e, o.nu, t);
      for (int i = 0; i < 6; i++) dJv[i] += o.zeta[i] + t[i];
    }
  }
  return 0;
}

static int point_query(const sb_model *m, sb_work *w, int seg, double s, sb_pose *g, double *J, int ncol,
                       double eta[6], double dJv[6]) {
  return point_query_a(m, w, seg, s, g, J, ncol, eta, dJv, 0);
}

/* The node point_query reaches, or -1. */
static int point_node(const sb_model *m, int seg, double s) { return point_locate(m, seg, &s); }

/* point_query's J: at a node, the node's (zero past the previous unit's cend
 * and its own columns); between nodes, Ad times the parent node's plus the
 * step's own columns. Both lie within the unit's cend. */
int sb_point_columns(const sb_model *m, int seg, double s) {
  int k = point_node(m, seg, s);
  return k < 0 ? m->n : m->unit[m->node[k].unit].cend;
}

/* A Jacobian query is repeated for every contact point of a disk (two on its
 * rim, four flat, in a row) and for every wrench at a penalty contact point
 * (four in a row): the last one's answer is kept until the next kinematics
 * pass, and a repeat is a copy of the same numbers. Only the Jacobian's
 * first sb_point_columns columns are computed; full: J's columns past them
 * are cleared (otherwise not touched). A full query keeps all of J, so that
 * its repeats are one copy (row by row, with the columns counted again,
 * they cost more than the full copy they replaced); a head query keeps its
 * columns only (a long rod's contact rows are mostly zeros). */
static int point_kinematics(const sb_model *m, sb_work *w, int seg, double s, sb_pose *g, double *J,
                            double eta[6], double dJv[6], int full, int *ncol) {
  int n = m->n;
  if (!J) return point_query(m, w, seg, s, g, NULL, 0, eta, dJv);
  int c;
  if (w->last_valid && !w->last_parts && w->last_seg == seg && w->last_s == s && (!dJv || w->last_has_dJv)) {
    c = w->last_cols;
    if (g) *g = w->last_g;
    if (full && w->last_full) {
      memcpy(J, w->last_J, (size_t)6 * n * sizeof(double));
    } else {
      for (int i = 0; i < 6; i++) memcpy(J + (size_t)i * n, w->last_J + (size_t)i * n, c * sizeof(double));
      if (full && c < n)
        for (int i = 0; i < 6; i++) memset(J + (size_t)i * n + c, 0, (size_t)(n - c) * sizeof(double));
    }
    if (eta) memcpy(eta, w->last_eta, sizeof w->last_eta);
    if (dJv) memcpy(dJv, w->last_dJv, sizeof w->last_dJv);
  } else {
    c = sb_point_columns(m, seg, s);
    w->last_valid = 0;
    if (point_query(m, w, seg, s, &w->last_g, J, c, w->last_eta, dJv)) return -1;
    if (full) {
      if (c < n)
        for (int i = 0; i < 6; i++) memset(J + (size_t)i * n + c, 0, (size_t)(n - c) * sizeof(double));
      memcpy(w->last_J, J, (size_t)6 * n * sizeof(double));
    } else {
      for (int i = 0; i < 6; i++) memcpy(w->last_J + (size_t)i * n, J + (size_t)i * n, c * sizeof(double));
    }
    if (dJv) memcpy(w->last_dJv, dJv, sizeof w->last_dJv);
    w->last_valid = 1;
    w->last_parts = 0;
    w->last_seg = seg;
    w->last_s = s;
    w->last_has_dJv = dJv != NULL;
    w->last_cols = c;
    w->last_full = full;
    if (g) *g = w->last_g;
    if (eta) memcpy(eta, w->last_eta, sizeof w->last_eta);
  }
  if (ncol) *ncol = c;
  return 0;
}

int sb_point_kinematics(const sb_model *m, sb_work *w, int seg, double s, sb_pose *g,
                        double *J, double eta[6], double dJv[6]) {
  return point_kinematics(m, w, seg, s, g, J, eta, dJv, 1, NULL);
}

int sb_point_kinematics_head(const sb_model *m, sb_work *w, int seg, double s, sb_pose *g, double *J,
                             int *ncol) {
  return point_kinematics(m, w, seg, s, g, J, NULL, NULL, 0, ncol);
}

/* Marks the work's kept point answer (last_g, last_J) as a head query of
 * (seg, s) over c columns: a view (parts 0) or parts (1). */
static void keep_point_answer(sb_work *w, int seg, double s, int c, int parts) {
  w->last_valid = 1;
  w->last_parts = parts;
  w->last_seg = seg;
  w->last_s = s;
  w->last_has_dJv = 0;
  w->last_cols = c;
  w->last_full = 0;
}

int sb_point_kinematics_view(const sb_model *m, sb_work *w, int seg, double s, sb_pose *g, const double **J,
                             int *ncol) {
  if (!(w->last_valid && !w->last_parts && w->last_seg == seg && w->last_s == s)) {
    /* a head query computed straight into the kept answer (point_kinematics
     * computes into the caller's J and copies it there) */
    int c = sb_point_columns(m, seg, s);
    w->last_valid = 0;
    if (point_query(m, w, seg, s, &w->last_g, w->last_J, c, w->last_eta, NULL)) return -1;
    keep_point_answer(w, seg, s, c, 0);
  }
  if (g) *g = w->last_g;
  *J = w->last_J;
  if (ncol) *ncol = w->last_cols;
  return 0;
}

int sb_point_jacobian_parts(const sb_model *m, sb_work *w, int seg, double s, sb_pose *g, sb_point_parts *pp) {
  if (!(w->last_valid && w->last_parts && w->last_seg == seg && w->last_s == s)) {
    int c = sb_point_columns(m, seg, s);
    w->last_valid = 0;
    if (point_query_a(m, w, seg, s, &w->last_g, w->last_J, c, w->last_eta, NULL, 1)) return -1;
    int k = point_node(m, seg, s), u = m->node[k].unit;
    w->last_c0 = u > 0 ? m->unit[u - 1].cend : 0;
    w->last_l0 = u > 0 ? parts_l0(m, &m->node[k]) : 0;
    keep_point_answer(w, seg, s, c, 1);
  }
  if (g) *g = w->last_g;
  int u = w->last_c0 > 0;
  pp->c0 = w->last_c0;
  pp->l0 = w->last_l0;
  const sb_node *nd = &m->node[point_node(m, seg, s)];
  pp->gend = u ? &w->g[m->unit[nd->unit].node0 - 1] : NULL;
  pp->Jend = u ? w->Jend + (size_t)6 * m->n * (nd->unit - 1) : NULL;
  pp->Jloc = w->last_J;
  pp->ncol = w->last_cols;
  return 0;
}

/* The MuJoCo-native arm (native.h): rigid links on spring-damper joints,
 * added to the scene's mjSpec from the soft model's own K, D, Phi and line
 * inertia. */
#include "native.h"

#include <lapacke.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expand.h"
#include "sb_util.h"

static const char *const strain_names[6] = {"kx", "ky", "kz", "ex", "ey", "ez"};

/* Equality solref/solimp of section mode: as hard a tie as MuJoCo allows
 * (d = 0.9999; refsafe raises the time constant to 2 timesteps), so the
 * static slack (1 - d) / d * a0 / k is 1e-3 of MuJoCo's default softness.
 * Caveat (measured with MuJoCo 2.2.2): the constraint force is solved with the joint
 * damping explicit, then Euler/implicit integrate that damping implicitly;
 * along the ties this cancels the joint damping and scales the tie's spring
 * and damper by m / (m + h b) (link inertia m, joint damping b). For the
 * CUSP arm at h = 1 ms and 7 links per section that is ~0.1 and the ties
 * hold to ~1e-5; arms with much lighter links, heavier damping or finer
 * chains ring slightly along the ties unless the timestep shrinks. */
static const double native_eq_solref[mjNREF] = {0.002, 1};
static const double native_eq_solimp[mjNIMP] = {0.9999, 0.9999, 0.001, 0.5, 2};
static const float native_rgba[4] = CUSP_NATIVE_RGBA_INIT;

/* One section of the soft model in strain space. */
typedef struct {
  int ncomp, comp[6];  /* strains (twist indices) = joints per link, in order */
  double T[36];        /* q = T xi (ncol x ncomp, row-major; square) */
  double xi0[6];       /* initial strain deviation */
  double k[6], b[6];   /* joint stiffness (free mode) and damping per strain */
  double kq[6];        /* section mode: tendon stiffness per coordinate (K's diagonal) */
  double L;            /* section rest length */
  int N;               /* links (disk intervals) */
  double line[6];      /* softbody's line inertia: per metre, diagonal */
} section;

static int fail(const cusp_instance_config *c, const char *key, char *error, int error_size,
                const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (key)
    sb_errorf(error, error_size, "instance \"%s\": key \"%s\": %s", c->name, key, msg);
  else
    sb_errorf(error, error_size, "instance \"%s\": contact native: %s", c->name, msg);
  return -1;
}


/* Rotation about local axis a (0, 1, 2) by t, row-major. */
static void rot_axis(int a, double t, double R[9]) {
  double c = cos(t), s = sin(t);
  memset(R, 0, 9 * sizeof(double));
  int i = (a + 1) % 3, j = (a + 2) % 3;
  R[4 * a] = 1;
  R[3 * i + i] = c;
  R[3 * i + j] = -s;
  R[3 * j + i] = s;
  R[3 * j + j] = c;
}

static void mat3_mul(const double A[9], const double B[9], double C[9]) {
  double t[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) t[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
  memcpy(C, t, sizeof t);
}

/* The sections in strain space, from softbody's model of the instance. */
static int build_sections(const cusp_instance_config *c, section *sec, char *error, int error_size) {
  sb_segment_params seg[CUSP_MAX_SECTIONS];
  sb_chain_params cp;
  cusp_config_chain(c, seg, &cp);
  char err[256];
  sb_model *m = sb_model_create(&cp, err, sizeof err);
  if (!m) return fail(c, NULL, error, error_size, "%s", err);
  int n = m->n, rc = 0;
  for (int i = 0; i < c->sections && !rc; i++) {
    const sb_segment *sg = &m->seg[i];
    section *S = &sec[i];
    int nc = sg->ncol, c0 = sg->col0;
    memset(S, 0, sizeof *S);
    S->L = sg->p.length;
    S->N = c->disks + 1;
    memcpy(S->line, sg->line_inertia, sizeof S->line);
    /* the strains Phi reaches: its nonzero rows */
    for (int r = 0; r < 6; r++) {
      int any = 0;
      for (int j = 0; j < nc; j++) any |= sg->Phi[r * nc + j] != 0;
      if (any) S->comp[S->ncomp++] = r;
    }
    if (S->ncomp != nc) {
      rc = fail(c, NULL, error, error_size, "section %d: %d coordinates move %d strains (not a 1:1 map)",
                i + 1, nc, S->ncomp);
      break;
    }
    double P[36], Tm[36];
    lapack_int piv[6];
    for (int a = 0; a < nc; a++)
      for (int j = 0; j < nc; j++) {
        P[a * nc + j] = sg->Phi[S->comp[a] * nc + j];
        Tm[a * nc + j] = a == j;
      }
    if (LAPACKE_dgesv(LAPACK_ROW_MAJOR, nc, nc, P, nc, piv, Tm, nc) != 0) {
      rc = fail(c, NULL, error, error_size, "section %d: the coordinate-to-strain map is singular", i + 1);
      break;
    }
    memcpy(S->T, Tm, sizeof Tm);
    /* xi0 = Phi_sel q0 */
    for (int a = 0; a < nc; a++) {
      S->xi0[a] = 0;
      for (int j = 0; j < nc; j++) S->xi0[a] += sg->Phi[S->comp[a] * nc + j] * c->initial[c0 + j];
    }
    /* S = T^T K T, D likewise: the section's energy in strain space */
    for (int which = 0; which < 2 && !rc; which++) {
      const double *K = which ? m->D : m->K;
      double St[36];
      for (int a = 0; a < nc; a++)
        for (int b2 = 0; b2 < nc; b2++) {
          double s = 0;
          for (int p = 0; p < nc; p++)
            for (int q = 0; q < nc; q++) s += S->T[p * nc + a] * K[(c0 + p) * n + c0 + q] * S->T[q * nc + b2];
          St[a * nc + b2] = s;
        }
      for (int a = 0; a < nc && !rc; a++)
        for (int b2 = 0; b2 < nc; b2++)
          if (a != b2 && fabs(St[a * nc + b2]) > 1e-9 * sqrt(fabs(St[a * nc + a] * St[b2 * nc + b2])) + 1e-300)
            rc = fail(c, NULL, error, error_size,
                      "section %d: the %s couples strains %s and %s, and MuJoCo's joint springs are "
                      "diagonal", i + 1, which ? "damping" : "stiffness", strain_names[S->comp[a]],
                      strain_names[S->comp[b2]]);
      for (int a = 0; a < nc; a++) (which ? S->b : S->k)[a] = St[a * nc + a] * S->N / (S->L * S->L);
    }
    /* section mode puts K itself on the coordinate tendons: needs it diagonal */
    for (int a = 0; a < nc && !rc; a++) {
      S->kq[a] = m->K[(c0 + a) * n + c0 + a];
      for (int b2 = 0; b2 < nc && !rc; b2++)
        if (a != b2 && m->K[(c0 + a) * n + c0 + b2] != 0 && c->native_joints == CUSP_NATIVE_SECTION)
          rc = fail(c, "native_joints", error, error_size,
                    "section %d: the stiffness couples coordinates %s and %s, and MuJoCo's tendon "
                    "springs are diagonal (use native_joints free)", i + 1, c->coord[c0 + a],
                    c->coord[c0 + b2]);
    }
  }
  sb_model_free(m);
  return rc;
}

/* Adds a piece of rod [z0, z1] (body z) of line inertia `line` to the
 * running mass, first moment and second moments about the body origin. */
static void add_piece(const double line[6], double z0, double z1, double *mass, double *mz,
                      double I0[3]) {
  double len = z1 - z0, lam = line[3];
  if (!(len > 0)) return;
  double zc = 0.5 * (z0 + z1), m = lam * len;
  *mass += m;
  *mz += m * zc;
  /* about the origin: cross-section part + lam * int z^2 */
  double z2 = lam * (z1 * z1 * z1 - z0 * z0 * z0) / 3;
  I0[0] += line[0] * len + z2;
  I0[1] += line[1] * len + z2;
  I0[2] += line[2] * len;
}

/* An element's name; -1 with a message when MuJoCo refuses it. */
static int set_name(mjsElement *e, const char *name, char *error, int error_size) {
  if (mjs_setName(e, name) == 0) return 0;
  sb_errorf(error, error_size, "cannot name a generated element \"%s\": %s", name,
            mjs_getError(mjs_getSpec(e)));
  return -1;
}

#define OOM(e) \
  if (!(e)) return sb_errorf(error, error_size, "out of memory"), -1

int cusp_native_emit(mjSpec *spec, mjsBody *base, const cusp_instance_config *c, char *error,
                     int error_size) {
  section sec[CUSP_MAX_SECTIONS];
  if (build_sections(c, sec, error, error_size)) return -1;
  /* hinge refs are in the scene's angle unit (<compiler angle>) */
  double unit = spec->compiler.degree ? 180 / M_PI : 1;

  /* interval k (k >= 1) lies between disks k-1 and k, in disk k's section */
  double lint[CUSP_MAX_DISKS];
  lint[0] = 0;
  for (int k = 1; k < c->ndisk; k++)
    lint[k] = c->disk[k].section == c->disk[k - 1].section ? c->disk[k].s - c->disk[k - 1].s : c->disk[k].s;

  char name[CUSP_NAME + 32];
  mjsBody *parent = base, *tip = NULL;
  for (int k = 0; k < c->ndisk; k++) {
    const section *S = &sec[c->disk[k].section];
    double pos[3] = {0, 0, 0}, R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    double axis[6][3], anchor[6][3], j0[6];
    /* joint order: rotations then slides, the whole sequence reversed on
     * every other link. Each order errs at first order in the joint size (the
     * torsion a b / 2 that Rx(a) Ry(b) adds over exp(a x + b y); an interval's
     * stretch placed all after or all before its turn), and the two orders
     * err oppositely, so alternating them leaves O(l^2) per link */
    int ord[6], no = 0;
    for (int a2 = 0; a2 < S->ncomp; a2++)
      if (S->comp[a2] < 3) ord[no++] = a2;
    for (int a2 = 0; a2 < S->ncomp; a2++)
      if (S->comp[a2] >= 3) ord[no++] = a2;
    for (int i = 0; k % 2 == 0 && i < no / 2; i++) {
      int t = ord[i];
      ord[i] = ord[no - 1 - i];
      ord[no - 1 - i] = t;
    }
    if (k > 0) {
      /* Straight chain: body at (0,0,l) from its parent, joint j a local
       * transform Y_j(q) (rotation about the anchor a = (0,0,-l/2), or a
       * translation). Written at the refs r: W = S Y_1(r_1) .. Y_n(r_n), and
       * joint j gets the axis and anchor of Y_j conjugated by
       * C_j = Y_{j+1}(r_{j+1}) .. Y_n(r_n), so that MuJoCo's sequence
       * W X_1(q_1 - r_1) .. X_n(q_n - r_n) equals S Y_1(q_1) .. Y_n(q_n). */
      double l = lint[k], a0[3] = {0, 0, -0.5 * l};
      double Yr[6][9], Yp[6][3];
      for (int o = 0; o < no; o++) {
        int a2 = ord[o], cj = S->comp[a2];
        j0[a2] = S->xi0[a2] * l;
        if (cj < 3) {
          rot_axis(cj, j0[a2], Yr[o]);
          for (int i = 0; i < 3; i++) Yp[o][i] = a0[i] - (Yr[o][3 * i] * a0[0] + Yr[o][3 * i + 1] * a0[1] + Yr[o][3 * i + 2] * a0[2]);
        } else {
          rot_axis(0, 0, Yr[o]);
          for (int i = 0; i < 3; i++) Yp[o][i] = i == cj - 3 ? j0[a2] : 0;
        }
      }
      /* C_j from the back; W = S C_0 */
      double CR[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, Cp[3] = {0, 0, 0};
      for (int o = no - 1; o >= 0; o--) {
        int a2 = ord[o], cj = S->comp[a2];
        for (int i = 0; i < 3; i++) { /* axis = CR^T e, anchor = CR^T (a - Cp) */
          axis[a2][i] = CR[3 * (cj % 3) + i];
          anchor[a2][i] = CR[i] * (a0[0] - Cp[0]) + CR[3 + i] * (a0[1] - Cp[1]) + CR[6 + i] * (a0[2] - Cp[2]);
        }
        double nR[9], np[3]; /* C <- Y_o C */
        mat3_mul(Yr[o], CR, nR);
        for (int i = 0; i < 3; i++) np[i] = Yr[o][3 * i] * Cp[0] + Yr[o][3 * i + 1] * Cp[1] + Yr[o][3 * i + 2] * Cp[2] + Yp[o][i];
        memcpy(CR, nR, sizeof nR);
        memcpy(Cp, np, sizeof np);
      }
      memcpy(R, CR, sizeof CR);
      for (int i = 0; i < 3; i++) pos[i] = Cp[i] + (i == 2 ? l : 0);
    }
    snprintf(name, sizeof name, "%s/disk%d", c->name, k);
    /* children take their parent's defaults, as in MJCF */
    mjsBody *body = mjs_addBody(parent, mjs_getDefault(parent->element));
    OOM(body);
    if (set_name(body->element, name, error, error_size)) return -1;
    memcpy(body->pos, pos, sizeof pos);
    mju_mat2Quat(body->quat, R);
    body->alt.type = mjORIENTATION_QUAT;
    body->fuse = 0; /* the runtime finds every link by name */
    const mjsDefault *def = mjs_getDefault(body->element);

    for (int o = 0; k > 0 && o < S->ncomp; o++) {
      char jname[CUSP_NAME + 32];
      int a2 = ord[o], cj = S->comp[a2];
      snprintf(jname, sizeof jname, "%s/j%d%s", c->name, k, strain_names[cj]);
      mjsJoint *j = mjs_addJoint(body, def);
      OOM(j);
      if (set_name(j->element, jname, error, error_size)) return -1;
      j->type = cj < 3 ? mjJNT_HINGE : mjJNT_SLIDE;
      memcpy(j->pos, anchor[a2], sizeof j->pos);
      memcpy(j->axis, axis[a2], sizeof j->axis);
      j->ref = cj < 3 ? unit * j0[a2] : j0[a2];
      j->springref = 0;
      /* section mode: the springs sit on the tendons (below), so the links'
       * relative motions, which the equalities remove, carry no explicit
       * spring stiff enough to need a smaller timestep */
      memset(j->stiffness, 0, sizeof j->stiffness);
      j->stiffness[0] = c->native_joints == CUSP_NATIVE_SECTION ? 0 : S->k[a2];
      memset(j->damping, 0, sizeof j->damping);
      j->damping[0] = S->b[a2];
      j->springyield = 0;
      j->springdamper[0] = j->springdamper[1] = 0;
      j->armature = 0;
      j->frictionloss = 0;
      j->limited = mjLIMITED_FALSE;
      j->actfrclimited = mjLIMITED_FALSE;
    }

    /* material: from the middle of interval k to the middle of interval k+1 */
    double mass = 0, mz = 0, I0[3] = {0, 0, 0};
    if (k > 0) add_piece(S->line, -0.5 * lint[k], 0, &mass, &mz, I0);
    if (k + 1 < c->ndisk) add_piece(sec[c->disk[k + 1].section].line, 0, 0.5 * lint[k + 1], &mass, &mz, I0);
    double zc = mass > 0 ? mz / mass : 0;
    if (mass > 0) {
      body->explicitinertial = 1;
      body->mass = mass;
      body->ipos[0] = body->ipos[1] = 0;
      body->ipos[2] = zc;
      body->iquat[0] = 1;
      body->iquat[1] = body->iquat[2] = body->iquat[3] = 0;
      body->ialt.type = mjORIENTATION_QUAT;
      body->inertia[0] = I0[0] - mass * zc * zc;
      body->inertia[1] = I0[1] - mass * zc * zc;
      body->inertia[2] = I0[2];
    }

    mjsGeom *g = mjs_addGeom(body, def);
    OOM(g);
    if (set_name(g->element, name, error, error_size)) return -1;
    g->type = mjGEOM_CYLINDER;
    g->size[0] = c->disk_radius;
    g->size[1] = c->disk_thickness / 2;
    g->contype = g->conaffinity = 1;
    g->condim = 3;
    g->friction[0] = c->friction;
    g->friction[1] = 0.005;
    g->friction[2] = 0.0001;
    g->margin = g->gap = 0;
    memcpy(g->rgba, native_rgba, sizeof g->rgba);
    parent = tip = body;
  }
  snprintf(name, sizeof name, "%s/tip", c->name);
  OOM(tip);
  mjsSite *site = mjs_addSite(tip, mjs_getDefault(tip->element));
  OOM(site);
  if (set_name(site->element, name, error, error_size)) return -1;

  /* one fixed tendon per coordinate: q = T xi_mean */
  const mjsDefault *def0 = mjs_getSpecDefault(spec);
  for (int i = 0, col = 0; i < c->sections; i++) {
    const section *S = &sec[i];
    for (int q = 0; q < S->ncomp; q++, col++) {
      snprintf(name, sizeof name, "%s/%s", c->name, c->coord[col]);
      mjsTendon *t = mjs_addTendon(spec, def0);
      OOM(t);
      if (set_name(t->element, name, error, error_size)) return -1;
      t->limited = mjLIMITED_FALSE;
      memset(t->stiffness, 0, sizeof t->stiffness);
      t->stiffness[0] = c->native_joints == CUSP_NATIVE_SECTION ? S->kq[q] : 0;
      t->springlength[0] = t->springlength[1] = 0;
      memset(t->damping, 0, sizeof t->damping);
      t->frictionloss = 0;
      t->springyield = 0;
      t->armature = 0;
      for (int k = 1; k < c->ndisk; k++) {
        if (c->disk[k].section != i) continue;
        for (int a2 = 0; a2 < S->ncomp; a2++) {
          double coef = S->T[q * S->ncomp + a2] / S->L;
          if (coef == 0) continue;
          char jname[CUSP_NAME + 32];
          snprintf(jname, sizeof jname, "%s/j%d%s", c->name, k, strain_names[S->comp[a2]]);
          OOM(mjs_wrapJoint(t, jname, coef));
        }
      }
    }
  }

  if (cusp_spec_actuators(spec, c, NULL, error, error_size)) return -1;

  if (c->native_joints == CUSP_NATIVE_SECTION) {
    int first = 1;
    for (int k = 1; k < c->ndisk; k++) {
      if (c->disk[k].section != c->disk[k - 1].section || k == 1) {
        first = k;
        continue;
      }
      const section *S = &sec[c->disk[k].section];
      for (int a2 = 0; a2 < S->ncomp; a2++) {
        char j1[CUSP_NAME + 32], j2[CUSP_NAME + 32];
        snprintf(j1, sizeof j1, "%s/j%d%s", c->name, k, strain_names[S->comp[a2]]);
        snprintf(j2, sizeof j2, "%s/j%d%s", c->name, first, strain_names[S->comp[a2]]);
        mjsEquality *e = mjs_addEquality(spec, def0);
        OOM(e);
        e->type = mjEQ_JOINT;
        e->objtype = mjOBJ_JOINT;
        e->active = 1;
        mjs_setString(e->name1, j1);
        mjs_setString(e->name2, j2);
        memset(e->data, 0, sizeof e->data);
        e->data[1] = 1; /* polycoef 0 1 0 0 0 */
        memcpy(e->solref, native_eq_solref, sizeof native_eq_solref);
        memcpy(e->solimp, native_eq_solimp, sizeof native_eq_solimp);
      }
    }
  }

  /* the soft arm never touches its mount, nor itself unless self_contact */
  const char *mount = mjs_getString(mjs_getName(base->element));
  for (int i = -1; i < c->ndisk; i++)
    for (int j = i + 1; j < c->ndisk; j++) {
      if (c->self_contact && i >= 0 && j > i + 1) continue;
      if (i < 0 && j == 0) continue; /* welded together */
      char b1[CUSP_NAME + 32], b2[CUSP_NAME + 32];
      if (i < 0)
        snprintf(b1, sizeof b1, "%s", mount);
      else
        snprintf(b1, sizeof b1, "%s/disk%d", c->name, i);
      snprintf(b2, sizeof b2, "%s/disk%d", c->name, j);
      mjsExclude *x = mjs_addExclude(spec);
      OOM(x);
      mjs_setString(x->bodyname1, b1);
      mjs_setString(x->bodyname2, b2);
    }
  return 0;
}

int cusp_native_resolve(const mjModel *m, cusp_instance_config *c, char *error, int error_size) {
  char name[CUSP_NAME + 32];
  for (int k = 0; k < c->ndisk; k++) {
    cusp_disk *dk = &c->disk[k];
    snprintf(name, sizeof name, "%s/disk%d", c->name, k);
    dk->body_id = mj_name2id(m, mjOBJ_BODY, name);
    dk->geom_id = mj_name2id(m, mjOBJ_GEOM, name);
    dk->mocap_id = -1;
    if (dk->body_id < 0 || dk->geom_id < 0)
      return sb_errorf(error, error_size, "instance \"%s\": generated body \"%s\" not in the model",
                       c->name, name), -1;
  }
  for (int i = 0; i < c->ncoord; i++) {
    snprintf(name, sizeof name, "%s/%s", c->name, c->coord[i]);
    c->tendon_id[i] = mj_name2id(m, mjOBJ_TENDON, name);
    c->actuator_id[i] = c->actuated[i] ? mj_name2id(m, mjOBJ_ACTUATOR, name) : -1;
    if (c->tendon_id[i] < 0 || (c->actuated[i] && c->actuator_id[i] < 0))
      return sb_errorf(error, error_size, "instance \"%s\": generated tendon/actuator \"%s\" not in "
                       "the model", c->name, name), -1;
  }
  snprintf(name, sizeof name, "%s/tip", c->name);
  c->tip_site_id = mj_name2id(m, mjOBJ_SITE, name);
  if (c->tip_site_id < 0)
    return sb_errorf(error, error_size, "instance \"%s\": generated site \"%s\" not in the model",
                     c->name, name), -1;
  return 0;
}

void cusp_native_coords(const mjModel *m, const mjData *d, const cusp_instance_config *c,
                        double *q, double *v) {
  for (int i = 0; i < c->ncoord; i++) {
    int t = c->tendon_id[i], w0 = t >= 0 ? m->tendon_adr[t] : 0, w1 = t >= 0 ? w0 + m->tendon_num[t] : 0;
    double x = 0, xd = 0;
    for (int w = w0; w < w1; w++) {
      int j = m->wrap_objid[w];
      x += m->wrap_prm[w] * d->qpos[m->jnt_qposadr[j]];
      xd += m->wrap_prm[w] * d->qvel[m->jnt_dofadr[j]];
    }
    if (q) q[i] = x;
    if (v) v[i] = xd;
  }
}

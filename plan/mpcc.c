/* The ball-rotation MPCC (mpcc.h): transcription, derivatives, IPOPT. */
#include "mpcc.h"

#include <IpStdCInterface.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../plugin/margin.h"
#include "arm_cache.h"
#include "contact.h"
#include "mpcc_polish.h"
#include "presets.h"

#include <cblas.h>
#include <lapacke.h>

#define EPS_SDF 1e-12   /* the paper's smoothing of |.| and max(.,.) */
/* contact_at_start: the LCP's gap stabilization s(g) (g, or 0.2 g when penetrating; contact.c's
 * default) blended over |g| < this width (m) into a twice differentiable function: it errs by at
 * most 0.15 of it, at g = 0, well under the LCP's own tolerance on the normal velocity times h */
#define STAB_WIDTH 1e-7
#define STAB_FACTOR 0.2
/* contact_at_start, the simulator's margin (start_margin): its sharp max, min and norms smoothed over
 * these widths, each from below (a margin at most MARGIN_WIDTH + 2 h SPEED_WIDTH (1 + the disk's
 * bounding radius) short of the simulator's), wide enough that the Hessian's differences (steps of
 * 1e-5 in q and v) stay on one side of their curvature */
#define MARGIN_WIDTH 1e-4   /* m */
#define SPEED_WIDTH 1e-3    /* m/s */
/* friction_reference: the least angle (rad) between it and the rest contact's normal (either sign) */
#define FRICTION_REFERENCE_MIN_ANGLE (30 * M_PI / 180)
/* A last relaxation stopped at its cap is polished only when its point
 * violates the relaxed NLP by at most this (IPOPT's default constr_viol_tol):
 * the polish starts at a point near the relaxed feasible set, not at one
 * the relaxation had still to repair. */
#define CAPPED_FEASIBLE 1e-4

/* What the arm rows take from the step's start (q_k, v_k): M~, the free
 * terms e = c + K (q + h v) + D v, and the map JW (n x 6) of a world wrench
 * [force; moment about the disk origin] to generalized forces. */
typedef struct {
  double *Mt, *e, *JW;
} arm_terms;

typedef struct hessian_cache hessian_cache;

struct plan_mpcc {
  plan_mpcc_params prm;
  sb_cusp_arm arm;
  sb_model *model;
  sb_work *work;
  int n, ns, nu, B;      /* arm dofs, state and control block sizes, B = ns + nu */
  int nvar;
  double h;
  double q_init[64];
  double target[4];      /* target quaternion */
  double n_rest[3], t1_rest[3];  /* the contact normal at rest and a tangent there: the friction basis's origin */
  double ball_inertia;
  /* kinematic_effort: tau's estimate C x, x = [v_k; q_{k+1} - q_rest; v_{k+1}] (the column order of
     z), from the arm rows linearized at rest (n x 3n), and the effort's Hessian 2 C^T C (3n x 3n) */
  double *effort_C, *effort_H;
  double effort_force;   /* kinematic_effort: the weight of fz^2 and ft_j^2 (1e-2 |J^T|^2 at rest, per axis) */
  int dynamic;           /* stage being solved */
  int nrow;              /* rows per step in that stage */
  double *Mt, *c, *tmp;   /* n x n, n, n scratch */
  double *zp, *rp, *rm;  /* scratch for differences */
  double Jpoint[6 * 64], dnu_dv[3 * 64];
  struct {               /* on: contact_geometry replaces closest_point's map wl -> xl by its tangent at wl0
                          * (step_jacobian's q_{k+1} columns) */
    int on;
    double wl0[3], xl0[3], J[9];
  } xl_tangent;
  struct {               /* on: the closest point by the sharp formula of the feature (face, side or rim)
                          * the Hessian's base point lies on, continued across the features' switches
                          * (hessian_step: its differences would cross them, see closest_point_on_feature) */
    int on, radial, axial;   /* the centre beyond the disk's radius, beyond its half thickness */
  } feature_frozen;
  struct {               /* on: the gap row's stabilization s(g) replaced by its tangent at g0 (the same
                          * columns, contact_at_start: s curves over STAB_WIDTH, below the steps) */
    int on;
    double g0, s0, ds;
  } stab_tangent;
  arm_terms terms, terms_fixed;  /* arm terms of the current evaluation, and of the Jacobian's base point */
  /* the arm terms and the disk point's kinematics by state (arm_point_at), shared by the rows, the
     Jacobian and the Hessian of a step and of its neighbour; NULL: off, every evaluation afresh */
  arm_cache *ac;
  int ac_capacity;
  struct {               /* the disk point's pose and body Jacobian of the last contact_geometry, when it
                          * came from the cache (the work's kinematics are then not at its state) */
    int valid;
    sb_pose g;
    double J[6 * 64];
  } geo_point;
  struct {               /* exact Hessian: the pattern of a step's block, per stage (0: kinematic) */
    int npairs[2], *pair[2];   /* (a, b), a >= b, block columns */
    int *used[2];              /* C flags: the column is in some pair */
  } hess;
  struct hessian_cache *hc;
  int exact_now;         /* the relaxation being solved uses the exact Hessian (prm.exact_hessian) */
  int last_now;          /* it is the homotopy's last relaxation (prm.ipopt_options_last) */
  int iterations;
  long hessian_evaluations;   /* cb_h's value calls (plan_mpcc_hessian_evaluations) */
  double eval_s;         /* CPU time inside the constraint, Jacobian and Hessian callbacks */
  int margin_active;     /* PLAN_MARGIN_LAZY: some step's margin row is bounded (margin_mask) */
  unsigned char *margin_mask;  /* PLAN_MARGIN_LAZY: N flags, the steps whose margin row is bounded */
  int margin_probe;      /* step_geometry computes the margin's twist though the rows are off */
};

int plan_mpcc_n(const plan_mpcc *p) { return p->n; }
int plan_mpcc_block(const plan_mpcc *p) { return p->B; }
int plan_mpcc_nvars(const plan_mpcc *p) { return p->nvar; }
long plan_mpcc_hessian_evaluations(const plan_mpcc *p) { return p->hessian_evaluations; }

/* Complementarity rows per step: Scholtes, the 2 + d "a >= 0" rows and the
 * 2 + d products a b <= eps; penalty, the 2 + d "a >= 0" rows and one row
 * sum(a b) - zeta_k = 0 (zeta_k carries the products into the objective). */
static int complementarity_rows(const plan_mpcc *p) {
  return p->prm.penalty > 0 ? 2 + p->prm.d + 1 : 4 + 2 * p->prm.d;
}
/* contact_at_start: the margin row (margin_row), after the complementarity rows (penalty: before the
   products' sum, which stays last) */
/* margin_possible: the rows may be in the NLP (its scratch is sized for them); margin_on: they are,
   on every step (PLAN_MARGIN_LAZY: once a plan pushed from beyond the margin, bounded on the masked
   steps only, row_bounds) */
static int margin_possible(const plan_mpcc *p) { return p->prm.contact_at_start && p->prm.margin_rows != PLAN_MARGIN_OFF; }
static int margin_on(const plan_mpcc *p) {
  return margin_possible(p) && (p->prm.margin_rows != PLAN_MARGIN_LAZY || p->margin_active);
}
static int margin_rows(const plan_mpcc *p) { return margin_on(p) ? 1 : 0; }
static int rows_per_step(const plan_mpcc *p, int dynamic) {
  return (dynamic ? p->n : 0) + p->n + 3 + 4 + complementarity_rows(p) + margin_rows(p);
}
int plan_mpcc_nconstraints(const plan_mpcc *p, int dynamic) { return p->prm.N * rows_per_step(p, dynamic); }
/* The most rows a step can have (dynamic stage, Scholtes' form: penalty_from switches forms within
 * a stage): the size of the per-step scratch. */
static int rows_per_step_max(const plan_mpcc *p) { return 2 * p->n + 3 + 4 + 4 + 2 * p->prm.d + margin_possible(p); }

plan_mpcc_params plan_mpcc_rotate_task(int axis) {
  plan_mpcc_params r = {.N = 100, .T = 4.0, .mu = 0.6, .d = 10, .eps = 1e-7, .eps_start = 1e-3, .eps_factor = 0.1, .max_iter_relaxed = 300,
                        .angle = 0.5 * M_PI,
                        .ball_center = {0, 0.1, 0.7}, .ball_radius = 0.05, .ball_mass = 0.1,
                        .ball_damping = 0.002, .disk_radius = 0.03, .disk_half_thickness = 0.005,
                        .q_bound = 0.06, .v_bound = 2, .tau_bound = 100, .force_bound = 100,
                        .omega_bound = 20, .terminal_weight = 100, .lbfgs_memory = 20, .max_iter = 3000, .max_iter_kinematic = 300, .max_seconds = 0, .tol = 1e-8,
                        /* with the limited-memory Hessian the last relaxation's dual infeasibility
                           stalls at a few 1e-6 (docs/planning.md, session 12): IPOPT's default
                           acceptable level (1e-6 over 15 iterations) is never met and its
                           restoration phase then fails; the rows keep their eps tolerance */
                        .acceptable_tol = 1e-5, .acceptable_iter = 5, .verbose = 0};
  r.axis[axis < 0 || axis > 2 ? 0 : axis] = 1;
  return r;
}

/* ---- quaternions (w x y z) ---- */
static void quat_mul(const double a[4], const double b[4], double o[4]) {
  o[0] = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
  o[1] = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
  o[2] = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
  o[3] = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
}

/* exp of a rotation vector th: [cos(|th|/2), sin(|th|/2)/|th| th]; Taylor
 * series below |th| = 1e-3, so it stays smooth at 0 (the paper, IV-B (ii)). */
static void quat_exp(const double th[3], double o[4]) {
  double a2 = th[0] * th[0] + th[1] * th[1] + th[2] * th[2], c, s;
  if (a2 < 1e-6) {
    c = 1 - a2 / 8 + a2 * a2 / 384;
    s = 0.5 - a2 / 48 + a2 * a2 / 3840;
  } else {
    double a = sqrt(a2);
    c = cos(0.5 * a);
    s = sin(0.5 * a) / a;
  }
  o[0] = c;
  for (int i = 0; i < 3; i++) o[i + 1] = s * th[i];
}

static void cross3(const double a[3], const double b[3], double o[3]) {
  o[0] = a[1] * b[2] - a[2] * b[1];
  o[1] = a[2] * b[0] - a[0] * b[2];
  o[2] = a[0] * b[1] - a[1] * b[0];
}
static double dot3(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static double smax(double a, double b) { return 0.5 * (a + b + sqrt((a - b) * (a - b) + EPS_SDF)); }
static double smin(double a, double b) { return 0.5 * (a + b - sqrt((a - b) * (a - b) + EPS_SDF)); }

/* Contact geometry after a step: the end disk at (q, v), the ball rotating
 * at omega. */
typedef struct {
  double gap;
  double n[3];          /* unit normal, from the ball towards the disk */
  double x[3];          /* contact point on the disk (world) */
  double r_disk[3];     /* x - disk origin (world) */
  double r_ball[3];     /* the ball's contact point - its centre: R n, or x - centre = (R + gap) n
                         * (contact_at_start: the simulator's one point for both bodies) */
  double nu[3];         /* velocity of x relative to the ball's surface point */
  double D[3 * 16];     /* friction directions (d <= 16), world */
  double rho, wz;       /* the ball centre in the disk frame: distance from the axis, height (which
                         * feature of the capped cylinder is closest: face, side or rim) */
  double wl[3];         /* the ball centre in the disk frame */
  double R[9];          /* the disk's rotation (world, row-major; its local z the axis) */
  double eta0[6];       /* contact_at_start: the disk frame's body twist [w; v] at v_k, the step's start */
} contact_geom;

/* The point of the capped cylinder (the end disk: radius rd, half thickness
 * hz, local z its axis) closest to wl, in the disk's frame, with the
 * paper's smoothed |.|, min and max. Its derivative dxl/dwl (3 x 3,
 * row-major) when J is not NULL. The smoothing rounds the switches between
 * face, side and rim over a width sqrt(EPS_SDF): there xl turns from
 * following wl to staying put (and the contact normal with it) within about
 * a micrometre, so differences of the rows at the Jacobian's steps (1e-6)
 * cannot resolve it; the Jacobian takes this map's derivative from J. */
static void closest_point_sharp(double rd, double hz, const double wl[3], double xl[3], double *J) {
  double rho = sqrt(wl[0] * wl[0] + wl[1] * wl[1] + EPS_SDF);
  double rho_c = smin(rho, rd);
  double m = smin(wl[2], hz), z_c = smax(-hz, m);
  xl[0] = wl[0] * rho_c / rho;
  xl[1] = wl[1] * rho_c / rho;
  xl[2] = z_c;
  if (!J) return;
  /* d smin(a, b) / da = (1 - (a - b) / s) / 2, d smax(a, b) / db = (1 + (b - a) / s) / 2, s = sqrt((a - b)^2 + EPS_SDF) */
  double drc = 0.5 * (1 - (rho - rd) / sqrt((rho - rd) * (rho - rd) + EPS_SDF));   /* d rho_c / d rho */
  double dm = 0.5 * (1 - (wl[2] - hz) / sqrt((wl[2] - hz) * (wl[2] - hz) + EPS_SDF));
  double dzc = 0.5 * (1 + (m + hz) / sqrt((m + hz) * (m + hz) + EPS_SDF));
  double drho[2] = {wl[0] / rho, wl[1] / rho}, f = rho_c / rho, df = (drc - f) / rho;  /* d (rho_c / rho) / d rho */
  for (int i = 0; i < 2; i++) {
    for (int j = 0; j < 2; j++) J[i * 3 + j] = (i == j ? f : 0) + wl[i] * df * drho[j];
    J[i * 3 + 2] = 0;
  }
  J[6] = J[7] = 0;
  J[8] = dzc * dm;
}

/* The same for the disk with its rims rounded by a fillet of radius rf
 * (0 <= rf < min(rd, hz)): the capped cylinder (rd - rf, hz - rf) grown by
 * a ball of radius rf, so the closest point is the inner cylinder's xi moved
 * by rf towards wl. Where the ball presses the rim the contact point and the
 * normal then turn over the fillet's millimetre instead of the smoothing's
 * micrometre (docs/planning.md, session 16). rf = 0: the sharp disk. */
static void closest_point(double rd, double hz, double rf, const double wl[3], double xl[3], double *J) {
  if (!(rf > 0)) {
    closest_point_sharp(rd, hz, wl, xl, J);
    return;
  }
  double xi[3], Ji[9], d[3], dn = 0;
  closest_point_sharp(rd - rf, hz - rf, wl, xi, J ? Ji : NULL);
  for (int i = 0; i < 3; i++) { d[i] = wl[i] - xi[i]; dn += d[i] * d[i]; }
  dn = sqrt(dn + EPS_SDF);   /* the ball's centre is a radius away: never near 0 */
  double u[3] = {d[0] / dn, d[1] / dn, d[2] / dn};
  for (int i = 0; i < 3; i++) xl[i] = xi[i] + rf * u[i];
  if (!J) return;
  /* dxl = dxi + rf (I - u u^T) / |d| (dwl - dxi) */
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      double a = 0;
      for (int l = 0; l < 3; l++) a += ((i == l) - u[i] * u[l]) * ((l == j) - Ji[l * 3 + j]);
      J[i * 3 + j] = Ji[i * 3 + j] + rf * a / dn;
    }
}

/* The sharp disk's closest point on one feature, continued beyond it: radial, the rim's circle
 * (else the point's own distance from the axis); axial, the face on wl's side (else wl's height).
 * Face, side and rim are each smooth, where the smoothed map turns from one to the next within
 * sqrt(EPS_SDF): the Hessian's differences, whose steps in q move wl far more than that, would
 * cross the switch within their reach of it and return entries of order 1 / step
 * (docs/planning.md, session 18). Frozen at the base point's feature they give that feature's
 * curvature, as the Jacobian's tangent gives its slope. */
static void closest_point_on_feature(double rd, double hz, int radial, int axial, const double wl[3], double xl[3]) {
  double rho = sqrt(wl[0] * wl[0] + wl[1] * wl[1] + EPS_SDF), f = radial ? rd / rho : 1;
  xl[0] = wl[0] * f;
  xl[1] = wl[1] * f;
  xl[2] = axial ? (wl[2] >= 0 ? hz : -hz) : wl[2];
}

/* The pyramid's d directions (D, 3 per direction) at unit normal n. */
static void contact_basis(const plan_mpcc *p, const double n[3], double *D) {
  const plan_mpcc_params *P = &p->prm;
  double t1[3], t2[3];
  if (P->friction_reference[0] || P->friction_reference[1] || P->friction_reference[2]) {
    /* the simulator's frame with the same reference (the plugin's key friction_reference), so a slide
       between two directions meets the same pyramid in the plan and in the replay */
    double R[9];
    sb_contact_frame(n, P->friction_reference, R);
    for (int i = 0; i < 3; i++) { t1[i] = R[3 * i]; t2[i] = R[3 * i + 1]; }
  } else {
    /* the rest basis carried by the shortest rotation from n_rest to n (Rodrigues: R t = c t + k x t
       + (k . t) k / (1 + c), k = n_rest x n, c = n_rest . n), smooth everywhere but the far pole
       -n_rest, where the arm cannot reach */
    double k[3], kxt[3], nt = 0, c = dot3(p->n_rest, n);
    cross3(p->n_rest, n, k);
    cross3(k, p->t1_rest, kxt);
    double kt = dot3(k, p->t1_rest) / fmax(1 + c, 1e-12);
    for (int i = 0; i < 3; i++) { t1[i] = c * p->t1_rest[i] + kxt[i] + kt * k[i]; nt += t1[i] * t1[i]; }
    nt = sqrt(nt);
    for (int i = 0; i < 3; i++) t1[i] /= nt;
    cross3(n, t1, t2);
  }
  for (int j = 0; j < P->d; j++) {
    double c[2];
    plan_mpcc_slip_direction(p, j, c);
    for (int i = 0; i < 3; i++) D[3 * j + i] = c[0] * t1[i] + c[1] * t2[i];
  }
}

/* The arm terms at (q, v) (M~, e, JW) and the disk point's pose g, body Jacobian J (6 x n) and
 * twist eta there, from one kinematics pass; JW column by column from sb_add_world_wrench on unit
 * wrenches. g and eta (NULL: not wanted) are the disk's end node's, copied whatever else is asked
 * (sb_point_kinematics), so contact_geometry's own query gives the same bits. */
static void arm_terms_compute(plan_mpcc *p, const double *q, const double *v, double *Mt, double *e,
                              double *JW, sb_pose *g, double *J, double *eta) {
  int n = p->n;
  double h = p->h;
  const sb_model *m = p->model;
  sb_kinematics(m, p->work, q, v);
  sb_mass_matrix(m, p->work, Mt);
  sb_bias(m, p->work, e);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      Mt[i * n + j] += h * m->D[i * n + j] + h * h * m->K[i * n + j];
      e[i] += m->K[i * n + j] * (q[j] + h * v[j]) + m->D[i * n + j] * v[j];
    }
  /* sb_add_world_wrench of the six unit wrenches from one point Jacobian: a world force f at the
     disk origin is the body wrench [0; R^T f], a moment mo is [R^T mo; 0] */
  int last = m->nseg - 1;
  sb_point_kinematics(m, p->work, last, m->seg[last].p.length, g, J, eta, NULL);
  for (int j = 0; j < n; j++)
    for (int c = 0; c < 3; c++) {
      double force = 0, moment = 0;
      for (int i = 0; i < 3; i++) {
        force += J[(3 + i) * n + j] * g->R[3 * c + i];
        moment += J[i * n + j] * g->R[3 * c + i];
      }
      JW[j * 6 + c] = force;
      JW[j * 6 + 3 + c] = moment;
    }
}

/* An arm_cache entry's layout: M~ (n x n), e (n), JW (n x 6), the disk point's J (6 x n), its pose
 * (12 doubles: R, p) and twist (6). */
enum { ARM_POINT_MT, ARM_POINT_E, ARM_POINT_JW, ARM_POINT_J, ARM_POINT_G, ARM_POINT_ETA, ARM_POINT_END };
static int arm_point_offset(const plan_mpcc *p, int part) {
  int n = p->n;
  const int size[ARM_POINT_END] = {n * n, n, 6 * n, 6 * n, (int)(sizeof(sb_pose) / sizeof(double)), 6};
  int o = 0;
  for (int i = 0; i < part; i++) o += size[i];
  return o;
}

/* The cache's entry at (q, v), computed there on a miss. */
static const double *arm_point_at(plan_mpcc *p, const double *q, const double *v) {
  double *e = arm_cache_find(p->ac, q, v);
  if (e) return e;
  e = arm_cache_insert(p->ac, q, v);
  sb_pose g;
  arm_terms_compute(p, q, v, e + arm_point_offset(p, ARM_POINT_MT), e + arm_point_offset(p, ARM_POINT_E),
                    e + arm_point_offset(p, ARM_POINT_JW), &g, e + arm_point_offset(p, ARM_POINT_J),
                    e + arm_point_offset(p, ARM_POINT_ETA));
  memcpy(e + arm_point_offset(p, ARM_POINT_G), &g, sizeof g);
  return e;
}

/* contact_geometry takes its kinematics from the cache: in the dynamic stage with the contact at the
 * step's end, where step k's geometry is at (q_{k+1}, v_{k+1}), the state step k + 1's arm terms are
 * at, and its differences in q_{k+1} are those step k + 1's take in q_{k+1} (the same columns, the
 * same steps). Elsewhere nothing would reuse the arm terms a miss computes. */
static int geometry_cached(const plan_mpcc *p) { return p->ac && p->dynamic && !p->prm.contact_at_start; }

static void contact_geometry(plan_mpcc *p, const double *q, const double *v, const double *omega,
                             contact_geom *G) {
  const plan_mpcc_params *P = &p->prm;
  sb_pose g;
  double eta[6];
  p->geo_point.valid = geometry_cached(p);
  if (p->geo_point.valid) {
    const double *e = arm_point_at(p, q, v);
    memcpy(&g, e + arm_point_offset(p, ARM_POINT_G), sizeof g);
    memcpy(eta, e + arm_point_offset(p, ARM_POINT_ETA), sizeof eta);
    p->geo_point.g = g;
    memcpy(p->geo_point.J, e + arm_point_offset(p, ARM_POINT_J), sizeof(double) * 6 * p->n);
  } else {
    int last = p->model->nseg - 1;
    sb_kinematics(p->model, p->work, q, v);
    sb_point_kinematics(p->model, p->work, last, p->model->seg[last].p.length, &g, NULL, eta, NULL);
  }
  /* the ball centre in the disk frame; closest point of the capped cylinder */
  double w[3], wl[3];
  for (int i = 0; i < 3; i++) w[i] = P->ball_center[i] - g.p[i];
  for (int i = 0; i < 3; i++) wl[i] = g.R[0 * 3 + i] * w[0] + g.R[3 + i] * w[1] + g.R[6 + i] * w[2];
  double xl[3];
  if (p->xl_tangent.on) {  /* the Jacobian's q_{k+1} columns: the map's tangent, exact at wl0 */
    for (int i = 0; i < 3; i++) {
      xl[i] = p->xl_tangent.xl0[i];
      for (int j = 0; j < 3; j++) xl[i] += p->xl_tangent.J[i * 3 + j] * (wl[j] - p->xl_tangent.wl0[j]);
    }
  } else if (p->feature_frozen.on) {
    closest_point_on_feature(P->disk_radius, P->disk_half_thickness, p->feature_frozen.radial,
                             p->feature_frozen.axial, wl, xl);
  } else {
    closest_point(P->disk_radius, P->disk_half_thickness, P->disk_fillet, wl, xl, NULL);
  }
  memcpy(G->R, g.R, sizeof G->R);
  memset(G->eta0, 0, sizeof G->eta0);   /* step_geometry's, with the contact at the start */
  G->rho = sqrt(wl[0] * wl[0] + wl[1] * wl[1] + EPS_SDF);
  G->wz = wl[2];
  memcpy(G->wl, wl, sizeof G->wl);
  for (int i = 0; i < 3; i++) {
    G->r_disk[i] = g.R[i * 3] * xl[0] + g.R[i * 3 + 1] * xl[1] + g.R[i * 3 + 2] * xl[2];
    G->x[i] = g.p[i] + G->r_disk[i];
  }
  double dx[3], dist2 = 0;
  for (int i = 0; i < 3; i++) { dx[i] = G->x[i] - P->ball_center[i]; dist2 += dx[i] * dx[i]; }
  double dist = sqrt(dist2 + EPS_SDF);
  G->gap = dist - P->ball_radius;
  /* the bodies meet at their surfaces' points (the paper's), or (contact_at_start) both at the
     disk's point, where the plugin's narrow phase puts the contact and the simulator takes both
     bodies' Jacobians: with a speculative gap of millimetres the ball's lever arm is R + gap */
  double lever = P->ball_radius + (P->contact_at_start ? G->gap : 0);
  for (int i = 0; i < 3; i++) {
    G->n[i] = dx[i] / dist;
    G->r_ball[i] = lever * G->n[i];
  }
  /* velocity of x: the frame's twist [w; v] in its own axes, to world */
  double wb[3], vb[3], ww[3], vw[3], wxr[3], oxr[3];
  for (int i = 0; i < 3; i++) { wb[i] = eta[i]; vb[i] = eta[3 + i]; }
  for (int i = 0; i < 3; i++) {
    ww[i] = g.R[i * 3] * wb[0] + g.R[i * 3 + 1] * wb[1] + g.R[i * 3 + 2] * wb[2];
    vw[i] = g.R[i * 3] * vb[0] + g.R[i * 3 + 1] * vb[1] + g.R[i * 3 + 2] * vb[2];
  }
  cross3(ww, G->r_disk, wxr);
  cross3(omega, G->r_ball, oxr);
  for (int i = 0; i < 3; i++) G->nu[i] = vw[i] + wxr[i] - oxr[i];
  contact_basis(p, G->n, G->D);
}

/* d nu / d v (3 x n, row-major) at the kinematics of the last
 * contact_geometry: nu is linear in v (the disk point's velocity J(q) v),
 * so the Jacobian's v_{k+1} columns need no kinematics pass of their own. */
static void contact_velocity_jacobian(plan_mpcc *p, const contact_geom *G, double *dnu) {
  int n = p->n, last = p->model->nseg - 1;
  sb_pose g;
  double *J = p->Jpoint;
  if (p->geo_point.valid) {
    g = p->geo_point.g;
    memcpy(J, p->geo_point.J, sizeof(double) * 6 * n);
  } else {
    sb_point_kinematics(p->model, p->work, last, p->model->seg[last].p.length, &g, J, NULL, NULL);
  }
  for (int c = 0; c < n; c++) {
    double wb[3] = {J[0 * n + c], J[1 * n + c], J[2 * n + c]}, vb[3] = {J[3 * n + c], J[4 * n + c], J[5 * n + c]};
    double ww[3], vw[3], wxr[3];
    for (int i = 0; i < 3; i++) {
      ww[i] = g.R[i * 3] * wb[0] + g.R[i * 3 + 1] * wb[1] + g.R[i * 3 + 2] * wb[2];
      vw[i] = g.R[i * 3] * vb[0] + g.R[i * 3 + 1] * vb[1] + g.R[i * 3 + 2] * vb[2];
    }
    cross3(ww, G->r_disk, wxr);
    for (int i = 0; i < 3; i++) dnu[i * n + c] = vw[i] + wxr[i];
  }
}

/* Views of the blocks of z. */
typedef struct { const double *q, *v, *om, *quat; } state_view;
typedef struct { const double *tau; double fz; const double *ft; double gamma, zeta; } control_view;

/* The contact geometry of a step from S_k to S_{k+1}: at q_{k+1} (the paper's), or at q_k
 * (contact_at_start: the simulator's), the disk point moving at J v_{k+1}, the ball at omega_{k+1}. */
static void step_geometry(plan_mpcc *p, const state_view *S0, const state_view *S1, contact_geom *G) {
  if (!p->prm.contact_at_start) {
    contact_geometry(p, S1->q, S1->v, S1->om, G);
    return;
  }
  /* The LCP's rows see the ball at omega_{k+1} of the ball rows, (I + h D) omega_{k+1} = I omega_k
     + h tau: the plugin solves the rigid side with M + h D where MuJoCo's step damps implicitly
     (plugin/rigid_damping.c). */
  contact_geometry(p, S0->q, S1->v, S1->om, G);
  if (!margin_on(p) && !p->margin_probe) return;
  /* the twist at v_k for the margin (start_margin), from the same kinematics at q_k */
  int n = p->n, last = p->model->nseg - 1;
  double J[6 * 64];
  sb_pose g;
  sb_point_kinematics(p->model, p->work, last, p->model->seg[last].p.length, &g, J, NULL, NULL);
  for (int i = 0; i < 6; i++) {
    G->eta0[i] = 0;
    for (int c = 0; c < n; c++) G->eta0[i] += J[i * n + c] * S0->v[c];
  }
}

/* The simulator's margin at the step's start (plugin/narrowphase.c, margin.h): the pair is looked
 * for within cusp_swept_margin(h, speed), speed the disk centre's speed plus its rim's (its angular
 * speed across its axis times its bounding radius, MuJoCo's geom_rbound of the cylinder; the
 * ball's motion is not counted, as for any MuJoCo geom), at v_k. Here max(CUSP_MARGIN, reach) and
 * the norms smoothed from below (MARGIN_WIDTH, SPEED_WIDTH), so the plan never counts on a contact
 * the simulator would not look for. (The simulator keeps a pair found beyond CUSP_MARGIN only when
 * it closes fast enough; that refinement is not modelled: docs/planning.md, session 21.) The
 * simulator's speed also counts what gravity may add within the step (h |g|, narrowphase.c's
 * gravity_closing), and keeps a pair found in that band only when gravity closes it; the plan
 * leaves both out, so its margin stays within the simulator's (at rest CUSP_MARGIN, within which
 * the simulator keeps every contact; docs/cosseratbench_variants.md, session 27). */
static double soft_norm(double a2) { return sqrt(a2 + SPEED_WIDTH * SPEED_WIDTH) - SPEED_WIDTH; }
static double soft_min(double a, double b) {
  return 0.5 * (a + b - sqrt((a - b) * (a - b) + MARGIN_WIDTH * MARGIN_WIDTH));
}
static double start_margin(const plan_mpcc *p, const contact_geom *G) {
  const plan_mpcc_params *P = &p->prm;
  const double *w = G->eta0, *v = G->eta0 + 3;
  double rbound = sqrt(P->disk_radius * P->disk_radius + P->disk_half_thickness * P->disk_half_thickness);
  double speed = soft_norm(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) + rbound * soft_norm(w[0] * w[0] + w[1] * w[1]);
  double travel = p->h * speed, reach = travel + soft_min(travel, CUSP_SWEEP_ALLOWANCE);
  /* max(a, b) from below: a + b - min(a, b), less the smoothing's reach */
  return CUSP_MARGIN + reach - soft_min(CUSP_MARGIN, reach) - 0.5 * MARGIN_WIDTH;
}

/* contact_at_start: the row fz_k (g_k - margin) <= eps: no normal force (and so no friction) from
 * beyond the simulator's margin. */
static double margin_row(const plan_mpcc *p, const contact_geom *G, double fz) {
  return fz * (G->gap - start_margin(p, G));
}

/* s(g) of the gap row (mpcc.h) and its derivative: g above the blend, 0.2 g below it, and within
 * |g| < w a slope rising from 0.2 to 1 by a smoothstep, so s is C^2 and exactly linear outside the
 * blend. (A blend with unbounded support, 0.6 g + 0.4 sqrt(g^2 + w^2), curves as 0.4 w^2 / |g|^3
 * far outside it, at the micrometre gaps a sustained contact leaves, where the Hessian takes s by
 * its tangent; docs/planning.md, session 18.) */
static double stabilized_gap(double g, double *ds) {
  const double w = STAB_WIDTH, lo = STAB_FACTOR;
  if (g >= w) {
    if (ds) *ds = 1;
    return g;
  }
  if (g <= -w) {
    if (ds) *ds = lo;
    return lo * g;
  }
  double t = (g + w) / (2 * w);   /* s' = lo + (1 - lo) (3 t^2 - 2 t^3), s(-w) = -lo w */
  if (ds) *ds = lo + (1 - lo) * t * t * (3 - 2 * t);
  return lo * g + (1 - lo) * 2 * w * t * t * t * (1 - 0.5 * t);
}

/* The row complementary to fz: the gap at the step's end, or (contact_at_start) the LCP's normal
 * row s(g_k) + h n_k . nu. */
static double gap_row(const plan_mpcc *p, const contact_geom *G) {
  if (!p->prm.contact_at_start) return G->gap;
  double s = p->stab_tangent.on ? p->stab_tangent.s0 + p->stab_tangent.ds * (G->gap - p->stab_tangent.g0)
                                : stabilized_gap(G->gap, NULL);
  return s + p->h * dot3(G->n, G->nu);
}

static state_view state_at(const plan_mpcc *p, const double *z, int k) {
  const double *s = z + (size_t)k * p->B;
  return (state_view){s, s + p->n, s + 2 * p->n, s + 2 * p->n + 3};
}
static control_view control_at(const plan_mpcc *p, const double *z, int k) {
  const double *u = z + (size_t)k * p->B + p->ns;
  return (control_view){u, u[p->n], u + p->n + 1, u[p->n + 1 + p->prm.d], u[p->n + 2 + p->prm.d]};
}

/* World contact force on the arm. */
static void contact_force(const plan_mpcc *p, const contact_geom *G, const control_view *U, double F[3]) {
  for (int i = 0; i < 3; i++) {
    F[i] = U->fz * G->n[i];
    for (int j = 0; j < p->prm.d; j++) F[i] += U->ft[j] * G->D[3 * j + i];
  }
}

/* The arm terms at S_k (from the cache, when on: a hit is the bits arm_terms_compute gave there). */
static void arm_terms_at(plan_mpcc *p, const state_view *S0, arm_terms *A) {
  int n = p->n;
  if (!p->ac) {
    sb_pose g;
    double J[6 * 64];
    arm_terms_compute(p, S0->q, S0->v, A->Mt, A->e, A->JW, &g, J, NULL);
    return;
  }
  const double *e = arm_point_at(p, S0->q, S0->v);
  memcpy(A->Mt, e + arm_point_offset(p, ARM_POINT_MT), sizeof(double) * n * n);
  memcpy(A->e, e + arm_point_offset(p, ARM_POINT_E), sizeof(double) * n);
  memcpy(A->JW, e + arm_point_offset(p, ARM_POINT_JW), sizeof(double) * 6 * n);
}

/* The arm terms at S_k whose q_k is base's: M~ and JW depend on q_k alone,
 * so a velocity's perturbation needs only the bias again. */
static void arm_terms_velocity(plan_mpcc *p, const state_view *S0, const arm_terms *base, arm_terms *A) {
  int n = p->n;
  const sb_model *m = p->model;
  sb_kinematics(m, p->work, S0->q, S0->v);
  sb_bias(m, p->work, A->e);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) A->e[i] += m->K[i * n + j] * (S0->q[j] + p->h * S0->v[j]) + m->D[i * n + j] * S0->v[j];
  if (A != base) {
    memcpy(A->Mt, base->Mt, sizeof(double) * n * n);
    memcpy(A->JW, base->JW, sizeof(double) * n * 6);
  }
}

/* The arm rows without tau: M~ (v1 - v0) + h e - h JW [F; r x F]. */
static void arm_rows_without_tau(plan_mpcc *p, const arm_terms *A, const state_view *S0,
                                 const state_view *S1, const contact_geom *G, const double F[3],
                                 double *r) {
  int n = p->n;
  double w[6];
  memcpy(w, F, sizeof(double) * 3);
  cross3(G->r_disk, F, w + 3);
  for (int i = 0; i < n; i++) {
    double s = 0, q = 0;
    for (int j = 0; j < n; j++) s += A->Mt[i * n + j] * (S1->v[j] - S0->v[j]);
    for (int c = 0; c < 6; c++) q += A->JW[i * 6 + c] * w[c];
    r[i] = s + p->h * (A->e[i] - q);
  }
}

/* All rows of step k, in the order of mpcc.h. */
/* G (may be NULL: computed) is the step's contact geometry (step_geometry), A (may be
 * NULL: computed) the arm terms at S_k: the Jacobian passes them when the
 * perturbed column leaves them unchanged. */
static void step_rows_with(plan_mpcc *p, const double *z, int k, const contact_geom *Gc,
                           const arm_terms *Ac, double *r) {
  const plan_mpcc_params *P = &p->prm;
  int n = p->n, d = P->d;
  double h = p->h;
  state_view S0 = state_at(p, z, k), S1 = state_at(p, z, k + 1);
  control_view U = control_at(p, z, k);
  contact_geom Gl;
  if (!Gc) {
    step_geometry(p, &S0, &S1, &Gl);
    Gc = &Gl;
  }
  const contact_geom G = *Gc;
  double F[3];
  contact_force(p, &G, &U, F);
  int o = 0;
  if (p->dynamic) {
    if (!Ac) {
      arm_terms_at(p, &S0, &p->terms);
      Ac = &p->terms;
    }
    arm_rows_without_tau(p, Ac, &S0, &S1, &G, F, r);
    for (int i = 0; i < n; i++) r[i] -= h * U.tau[i];
    o = n;
  }
  for (int i = 0; i < n; i++) r[o + i] = S1.q[i] - S0.q[i] - h * S1.v[i];
  o += n;
  double mF[3] = {-F[0], -F[1], -F[2]}, tb[3];
  cross3(G.r_ball, mF, tb);
  /* divided by the ball's inertia (1e-4 kg m^2): rows of order omega, like the others */
  for (int i = 0; i < 3; i++)
    r[o + i] = (S1.om[i] - S0.om[i]) - h / p->ball_inertia * (tb[i] - P->ball_damping * S1.om[i]);
  o += 3;
  double hw[3] = {h * S1.om[0], h * S1.om[1], h * S1.om[2]}, e[4], qn[4];
  quat_exp(hw, e);
  quat_mul(e, S0.quat, qn);
  for (int i = 0; i < 4; i++) r[o + i] = S1.quat[i] - qn[i];
  o += 4;
  double cone = P->mu * U.fz;
  for (int j = 0; j < d; j++) cone -= U.ft[j];
  double phi = gap_row(p, &G);
  if (P->penalty > 0) {
    double products = phi * U.fz + cone * U.gamma;
    r[o++] = phi;
    r[o++] = cone;
    for (int j = 0; j < d; j++) {
      double s = dot3(G.D + 3 * j, G.nu) + U.gamma;
      r[o++] = s;
      products += U.ft[j] * s;
    }
    if (margin_on(p)) r[o++] = margin_row(p, &G, U.fz);
    r[o] = products - U.zeta;
    return;
  }
  r[o++] = phi;
  r[o++] = phi * U.fz;
  r[o++] = cone;
  r[o++] = cone * U.gamma;
  for (int j = 0; j < d; j++) {
    double s = dot3(G.D + 3 * j, G.nu) + U.gamma;
    r[o + j] = s;
    r[o + d + j] = U.ft[j] * s;
  }
  if (margin_on(p)) r[o + 2 * d] = margin_row(p, &G, U.fz);
}

static void step_rows(plan_mpcc *p, const double *z, int k, double *r) {
  step_rows_with(p, z, k, NULL, NULL, r);
}

/* The margin row's upper bound on step k: eps, or (PLAN_MARGIN_LAZY, a step not in the mask) none */
static double margin_bound(const plan_mpcc *p, int k) {
  return p->prm.margin_rows == PLAN_MARGIN_LAZY && !p->margin_mask[k] ? 2e19 : p->prm.eps;
}

static void row_bounds(const plan_mpcc *p, double *lo, double *hi) {
  int R = p->nrow, n = p->n, d = p->prm.d;
  for (int k = 0; k < p->prm.N; k++) {
    double *l = lo + (size_t)k * R, *u = hi + (size_t)k * R;
    int o = 0;
    int neq = (p->dynamic ? n : 0) + n + 3 + 4;
    for (; o < neq; o++) l[o] = u[o] = 0;
    if (p->prm.penalty > 0) {  /* gap, cone, slips >= 0; sum of products = zeta */
      for (int j = 0; j < 2 + d; j++, o++) { l[o] = 0; u[o] = 2e19; }
      if (margin_on(p)) { l[o] = -2e19; u[o++] = margin_bound(p, k); }   /* margin */
      l[o] = u[o] = 0;
      continue;
    }
    /* gap, gap fz, cone, cone gamma */
    l[o] = 0; u[o++] = 2e19;
    l[o] = -2e19; u[o++] = p->prm.eps;
    l[o] = 0; u[o++] = 2e19;
    l[o] = -2e19; u[o++] = p->prm.eps;
    for (int j = 0; j < d; j++) { l[o + j] = 0; u[o + j] = 2e19; l[o + d + j] = -2e19; u[o + d + j] = p->prm.eps; }
    if (margin_on(p)) { l[o + 2 * d] = -2e19; u[o + 2 * d] = margin_bound(p, k); }   /* margin */
  }
}

static void var_bounds(const plan_mpcc *p, double *lo, double *hi) {
  const plan_mpcc_params *P = &p->prm;
  int n = p->n, d = P->d;
  for (int k = 0; k <= P->N; k++) {
    double *l = lo + (size_t)k * p->B, *u = hi + (size_t)k * p->B;
    for (int i = 0; i < n; i++) { l[i] = -P->q_bound; u[i] = P->q_bound; }
    for (int i = 0; i < n; i++) { l[n + i] = -P->v_bound; u[n + i] = P->v_bound; }
    for (int i = 0; i < 3; i++) { l[2 * n + i] = -P->omega_bound; u[2 * n + i] = P->omega_bound; }
    for (int i = 0; i < 4; i++) { l[2 * n + 3 + i] = -1.5; u[2 * n + 3 + i] = 1.5; }
    if (k == 0) {  /* the initial state */
      for (int i = 0; i < n; i++) l[i] = u[i] = p->q_init[i];
      for (int i = n; i < p->ns; i++) l[i] = u[i] = 0;
      l[2 * n + 3] = u[2 * n + 3] = 1;
    }
    if (k == P->N) break;
    l += p->ns;
    u += p->ns;
    for (int i = 0; i < n; i++) {
      l[i] = p->dynamic ? -P->tau_bound : 0;
      u[i] = p->dynamic ? P->tau_bound : 0;
    }
    for (int j = 0; j < d + 1; j++) { l[n + j] = 0; u[n + j] = P->force_bound; }
    l[n + d + 1] = 0;
    u[n + d + 1] = 2e19;
    /* zeta: the products' sum under the penalty, unused (fixed) under Scholtes */
    l[n + d + 2] = P->penalty > 0 ? -2e19 : 0;
    u[n + d + 2] = P->penalty > 0 ? 2e19 : 0;
  }
}

/* ---- objective (eq. 20), J_quat(q, t) = 1 - (q . t)^2 ---- */
double plan_mpcc_objective(const plan_mpcc *p, const double *z, double *grad) {
  const plan_mpcc_params *P = &p->prm;
  int n = p->n, N = P->N;
  double h = p->h, f = 0;
  if (grad) memset(grad, 0, sizeof(double) * p->nvar);
  for (int k = 0; k < N; k++) {
    const double *s0 = z + (size_t)k * p->B, *u = s0 + p->ns, *s1 = s0 + p->B;
    double *g0 = grad ? grad + (size_t)k * p->B : NULL, *gu = g0 ? g0 + p->ns : NULL, *g1 = g0 ? g0 + p->B : NULL;
    const double *quat = s1 + 2 * n + 3;
    double qt = 0, qq = 0;
    for (int i = 0; i < 4; i++) { qt += quat[i] * p->target[i]; qq += quat[i] * quat[i]; }
    double w_quat = 10 * h + (k == N - 1 ? p->prm.terminal_weight : 0);
    f += w_quat * (1 - qt * qt) + 10 * h * (qq - 1) * (qq - 1);
    double fz = u[n];
    f += -1e-3 * h * fz;
    if (g1) {
      for (int i = 0; i < 4; i++)
        g1[2 * n + 3 + i] += -2 * w_quat * qt * p->target[i] + 40 * h * (qq - 1) * quat[i];
      gu[n] += -1e-3 * h;
    }
    if (k > 0) {
      double fz_prev = z[(size_t)(k - 1) * p->B + p->ns + n], dfz = fz - fz_prev;
      f += 0.2 * h * dfz * dfz;
      if (grad) { gu[n] += 0.4 * h * dfz; grad[(size_t)(k - 1) * p->B + p->ns + n] -= 0.4 * h * dfz; }
    }
    for (int i = 0; i < n + 3; i++) {
      int o = i < n ? n + i : 2 * n + (i - n);  /* v, then omega */
      double dv = s1[o] - s0[o];
      f += 1e-3 * h * dv * dv;
      if (grad) { g1[o] += 2e-3 * h * dv; g0[o] -= 2e-3 * h * dv; }
    }
    for (int i = 0; i < n; i++) {
      f += 1e-2 * h * u[i] * u[i];
      if (gu) gu[i] += 2e-2 * h * u[i];
    }
    if (P->penalty > 0) {
      f += P->penalty * u[n + P->d + 2];
      if (gu) gu[n + P->d + 2] += P->penalty;
    }
    if (!p->dynamic && P->kinematic_effort) {
      double x[3 * 64];   /* 1e-2 h tau^2 with tau ~ C x (plan_mpcc_create) */
      for (int i = 0; i < n; i++) { x[i] = s0[n + i]; x[n + i] = s1[i] - p->q_init[i]; x[2 * n + i] = s1[n + i]; }
      for (int i = 0; i < n; i++) {
        const double *c = p->effort_C + (size_t)i * 3 * n;
        double t = 0;
        for (int j = 0; j < 3 * n; j++) t += c[j] * x[j];
        f += 1e-2 * h * t * t;
        if (g0)
          for (int j = 0; j < n; j++) {
            g0[n + j] += 2e-2 * h * t * c[j];
            g1[j] += 2e-2 * h * t * c[n + j];
            g1[n + j] += 2e-2 * h * t * c[2 * n + j];
          }
      }
      double w = p->effort_force * h;   /* the contact force's share of tau */
      f += w * fz * fz;
      if (gu) gu[n] += 2 * w * fz;
      for (int j = 0; j < P->d; j++) {
        f += w * u[n + 1 + j] * u[n + 1 + j];
        if (gu) gu[n + 1 + j] += 2 * w * u[n + 1 + j];
      }
    }
  }
  return f;
}

/* ---- IPOPT callbacks ---- */
static Bool cb_f(Index nv, Number *x, Bool nx, Number *obj, UserDataPtr ud) {
  (void)nv; (void)nx;
  *obj = plan_mpcc_objective(ud, x, NULL);
  return isfinite(*obj);
}
static Bool cb_grad(Index nv, Number *x, Bool nx, Number *g, UserDataPtr ud) {
  (void)nv; (void)nx;
  plan_mpcc_objective(ud, x, g);
  return TRUE;
}
static double cpu_now(void);
static Bool cb_g(Index nv, Number *x, Bool nx, Index m, Number *g, UserDataPtr ud) {
  (void)nv; (void)nx; (void)m;
  plan_mpcc *p = ud;
  double t0 = cpu_now();
  for (int k = 0; k < p->prm.N; k++) step_rows(p, x, k, g + (size_t)k * p->nrow);
  p->eval_s += cpu_now() - t0;
  for (int i = 0; i < m; i++)
    if (!isfinite(g[i])) return FALSE;
  return TRUE;
}

/* nu after moving block column c (v_{k+1} or omega_{k+1}: nu is linear in both) by delta; P is
   d nu / d v_{k+1}; with contact_at_start, v_k's column moves the twist at v_k (linear in it) by
   the disk frame's body Jacobian J (6 x n) instead. */
static void shift_nu(const plan_mpcc *p, contact_geom *G, const double *P, const double *J, int c, double delta) {
  int n = p->n, v1 = p->B + n, om1 = p->B + 2 * n;
  if (margin_on(p) && c >= n && c < 2 * n) {
    for (int i = 0; i < 6; i++) G->eta0[i] += delta * J[i * n + (c - n)];
    return;
  }
  if (c >= v1 && c < om1) {
    for (int i = 0; i < 3; i++) G->nu[i] += delta * P[i * n + (c - v1)];
    return;
  }
  if (!(c >= om1 && c < om1 + 3)) return;
  double e[3] = {0}, exr[3];   /* nu = ... - omega_{k+1} x r_ball */
  e[c - om1] = delta;
  cross3(e, G->r_ball, exr);
  for (int i = 0; i < 3; i++) G->nu[i] -= exr[i];
}

/* Step k's Jacobian (R x C, row-major) by central differences over its
 * column block [k B, k B + B + ns) of zp, which it perturbs and restores. */
static void step_jacobian(plan_mpcc *p, double *zp, int k, double *val) {
  int R = p->nrow, C = p->B + p->ns;
  state_view S0 = state_at(p, zp, k), S1 = state_at(p, zp, k + 1);
  contact_geom G, Gv;
  step_geometry(p, &S0, &S1, &G);
  contact_velocity_jacobian(p, &G, p->dnu_dv);
  memcpy(p->xl_tangent.wl0, G.wl, sizeof G.wl);
  closest_point(p->prm.disk_radius, p->prm.disk_half_thickness, p->prm.disk_fillet, G.wl, p->xl_tangent.xl0,
                p->xl_tangent.J);
  p->stab_tangent.g0 = G.gap;
  p->stab_tangent.s0 = stabilized_gap(G.gap, &p->stab_tangent.ds);
  if (p->dynamic) arm_terms_at(p, &S0, &p->terms_fixed);
  int v1 = p->B + p->n, om1 = p->B + 2 * p->n, quat1 = om1 + 3;
  /* the columns of the positions the geometry is taken at: q_{k+1}, or q_k (contact_at_start) */
  int geo0 = p->prm.contact_at_start ? 0 : p->B;
  for (int c = 0; c < C; c++) {
    int col = k * p->B + c;
    /* only q_k, v_k change the arm terms at S_k, only the geometry's positions and v_{k+1},
       omega_{k+1} the geometry: the other columns reuse them */
    int moves_geometry = c >= geo0 && c < geo0 + p->n;
    const contact_geom *Gc = moves_geometry ? NULL : &G;
    /* nu moves linearly, the rest of the geometry stays: v_{k+1}, omega_{k+1}; and (contact_at_start)
       v_k the twist at the step's start, which the margin reads */
    if ((c >= v1 && c < quat1) || (margin_on(p) && c >= p->n && c < 2 * p->n)) Gc = &Gv;
    const arm_terms *Ac = c < p->n ? NULL : &p->terms_fixed;
    int velocity = p->dynamic && c >= p->n && c < 2 * p->n;
    if (velocity) Ac = &p->terms;
    double x0 = zp[col], dx = 1e-6 * (1 + fabs(x0));
    /* the geometry's sharp maps (the closest point, the stabilization's blend) by their derivatives */
    p->xl_tangent.on = moves_geometry;
    p->stab_tangent.on = moves_geometry && p->prm.contact_at_start;
    for (int side = 0; side < 2; side++) {
      zp[col] = side ? x0 - dx : x0 + dx;
      if (Gc == &Gv) {
        Gv = G;
        shift_nu(p, &Gv, p->dnu_dv, p->Jpoint, c, side ? -dx : dx);
      }
      if (velocity) {
        state_view Sp = state_at(p, zp, k);
        arm_terms_velocity(p, &Sp, &p->terms_fixed, &p->terms);
      }
      step_rows_with(p, zp, k, Gc, p->dynamic ? Ac : NULL, side ? p->rm : p->rp);
    }
    zp[col] = x0;
    p->xl_tangent.on = p->stab_tangent.on = 0;
    for (int r = 0; r < R; r++) val[(size_t)r * C + c] = (p->rp[r] - p->rm[r]) / (2 * dx);
  }
}

static Bool cb_jac(Index nv, Number *x, Bool nx, Index m, Index nele, Index *irow, Index *jcol,
                   Number *val, UserDataPtr ud) {
  (void)nx; (void)m; (void)nele;
  plan_mpcc *p = ud;
  int R = p->nrow, C = p->B + p->ns;
  size_t e = 0;
  if (!val) {
    for (int k = 0; k < p->prm.N; k++)
      for (int r = 0; r < R; r++)
        for (int c = 0; c < C; c++, e++) { irow[e] = k * R + r; jcol[e] = k * p->B + c; }
    return TRUE;
  }
  double t0 = cpu_now();
  memcpy(p->zp, x, sizeof(double) * nv);
  for (int k = 0; k < p->prm.N; k++) step_jacobian(p, p->zp, k, val + (size_t)k * R * C);
  p->eval_s += cpu_now() - t0;
  for (size_t i = 0; i < (size_t)p->prm.N * R * C; i++)
    if (!isfinite(val[i])) return FALSE;
  return TRUE;
}

/* ---- Hessian of the Lagrangian: sigma f + lambda . g ----
 * The constraints' part, step by step, inside the transcription's sparsity: L_k = lambda_k . g_k
 * is linear in most pairs of the step's columns; the pairs where it is not (column_kind,
 * kinds_couple: read off the rows of mpcc.h) get second differences of L_k, computed from the
 * plain rows with their expensive parts evaluated once per perturbed column: the arm terms at
 * S_k (q_k, v_k), the contact geometry at its positions (q_{k+1}, or q_k with contact_at_start;
 * nu is linear in v_{k+1} and omega_{k+1}, so their
 * perturbations move nu through d nu / d v and r_ball alone). Off the
 * diagonal the symmetric formula
 *   H_ab = [L(+a+b) + L(-a-b) - L(+a) - L(-a) - L(+b) - L(-b) + 2 L] / (2 da db)  (error O(d^2))
 * costs two evaluations per pair beyond the single perturbations; it is exact where L is
 * bilinear in the pair (the products a b, the quaternion's quat_k). Then the objective's
 * entries, analytic: per knot the quaternion's 4 x 4, the velocity differences' (v, omega at k
 * and k+1), tau's diagonal, and fz_k's coupling to fz_{k-1}. IPOPT adds duplicates (the
 * states shared by neighbouring steps). */
enum { K_Q0, K_V0, K_OM0, K_QUAT0, K_TAU, K_FZ, K_FT, K_GAMMA, K_ZETA, K_Q1, K_V1, K_OM1, K_QUAT1 };

static int column_kind(const plan_mpcc *p, int c) {
  int n = p->n, d = p->prm.d, ns = p->ns;
  if (c >= p->B) return K_Q1 + column_kind(p, c - p->B);   /* S_{k+1}: the same order as S_k */
  if (c < n) return K_Q0;
  if (c < 2 * n) return K_V0;
  if (c < 2 * n + 3) return K_OM0;
  if (c < ns) return K_QUAT0;
  if (c < ns + n) return K_TAU;
  if (c == ns + n) return K_FZ;
  if (c < ns + n + 1 + d) return K_FT;
  return c == ns + n + 1 + d ? K_GAMMA : K_ZETA;
}

/* Whether a step's rows couple two kinds of column nonlinearly; geo: the kind of the positions
   the contact geometry is taken at (K_Q1, or K_Q0 with contact_at_start); margin: the margin rows'
   pairs (margin_on) */
static int kinds_couple(int a, int b, int dynamic, int geo, int margin) {
  if (a > b) { int t = a; a = b; b = t; }
#define PAIR(x, y) ((a == (x) && b == (y)) || (a == (y) && b == (x)))
  /* arm rows: M~(q_k) (v_{k+1} - v_k) + h e(q_k, v_k) - h JW(q_k) w(geometry, fz, ft) */
  if (dynamic && a == K_Q0 && (b == K_Q0 || b == K_V0 || b == K_FZ || b == K_FT || b == K_V1 || b == geo)) return 1;
  if (dynamic && a == K_V0 && b == K_V0) return 1;
  /* ball rows (r_ball x F), the gap and gap fz, the arm's w: the geometry times the forces */
  if (PAIR(K_FZ, geo) || PAIR(K_FT, geo)) return 1;
  if ((a == K_FZ || a == K_FT) && b == K_GAMMA) return 1;   /* cone gamma, ft_j (... + gamma) */
  /* slips D . nu(geometry, v_{k+1}, omega_{k+1}), and their products with ft; with the contact
     at the start the gap row has n . nu too, and its product with fz */
  if (a == K_FT && (b == K_V1 || b == K_OM1)) return 1;
  if (geo == K_Q0 && a == K_FZ && (b == K_V1 || b == K_OM1)) return 1;
  if (PAIR(geo, geo) || PAIR(geo, K_V1) || PAIR(geo, K_OM1)) return 1;
  /* with the contact at the start, the margin row fz_k (g_k - margin(q_k, v_k)) */
  if (margin && ((a == K_V0 && (b == K_V0 || b == K_FZ)) || (a == K_Q0 && b == K_V0))) return 1;
  /* quat_{k+1} - exp(h omega_{k+1}) quat_k */
  if ((a == K_QUAT0 || a == K_OM1) && b == K_OM1) return 1;
#undef PAIR
  return 0;
}

/* The kind of the positions the contact geometry is taken at, and their first block column. */
static int geometry_kind(const plan_mpcc *p) { return p->prm.contact_at_start ? K_Q0 : K_Q1; }
static int geometry_column(const plan_mpcc *p) { return p->prm.contact_at_start ? 0 : p->B; }

/* The pairs (a >= b, block columns) of a stage's pattern, into pair (NULL: count only). */
static int hessian_pairs(const plan_mpcc *p, int dynamic, int *pair) {
  int C = p->B + p->ns, np = 0;
  for (int a = 0; a < C; a++)
    for (int b = 0; b <= a; b++)
      if (kinds_couple(column_kind(p, a), column_kind(p, b), dynamic, geometry_kind(p), margin_on(p))) {
        if (pair) { pair[2 * np] = a; pair[2 * np + 1] = b; }
        np++;
      }
  return np;
}

/* kinematic_effort's entries in the kinematic stage: the lower triangle of x = [v_k; q_{k+1}; v_{k+1}]'s
   block, then (ft_j, ft_j) */
static int effort_nnz(const plan_mpcc *p) {
  return !p->dynamic && p->prm.kinematic_effort ? 3 * p->n * (3 * p->n + 1) / 2 + p->prm.d : 0;
}
/* z's column of the effort's x_a in step k's block starting at s0 */
static int effort_column(const plan_mpcc *p, int s0, int a) {
  int n = p->n;
  return a < n ? s0 + n + a : a < 2 * n ? s0 + p->B + (a - n) : s0 + p->B + n + (a - 2 * n);
}
static int hessian_objective_nnz(const plan_mpcc *p) {
  int n = p->n;
  return p->prm.N * (10 + 3 * (n + 3) + n + 1 + effort_nnz(p)) + (p->prm.N - 1) * 2;
}
static size_t hessian_nnz(const plan_mpcc *p) {
  return (size_t)p->prm.N * p->hess.npairs[p->dynamic] + (size_t)hessian_objective_nnz(p);
}

static void hessian_structure(const plan_mpcc *p, Index *ir, Index *jc) {
  int n = p->n, N = p->prm.N, np = p->hess.npairs[p->dynamic];
  const int *pair = p->hess.pair[p->dynamic];
  size_t e = 0;
  for (int k = 0; k < N; k++)
    for (int i = 0; i < np; i++, e++) { ir[e] = k * p->B + pair[2 * i]; jc[e] = k * p->B + pair[2 * i + 1]; }
  for (int k = 0; k < N; k++) {
    int s0 = k * p->B, s1 = s0 + p->B, u = s0 + p->ns, q1 = s1 + 2 * n + 3;
    for (int a = 0; a < 4; a++)
      for (int b = 0; b <= a; b++, e++) { ir[e] = q1 + a; jc[e] = q1 + b; }
    for (int i = 0; i < n + 3; i++) {
      int o = i < n ? n + i : 2 * n + (i - n);
      ir[e] = s0 + o; jc[e++] = s0 + o;
      ir[e] = s1 + o; jc[e++] = s1 + o;
      ir[e] = s1 + o; jc[e++] = s0 + o;
    }
    for (int i = 0; i < n; i++, e++) { ir[e] = u + i; jc[e] = u + i; }
    ir[e] = u + n; jc[e++] = u + n;
    if (k > 0) {
      int fz_prev = s0 - p->B + p->ns + n;
      ir[e] = fz_prev; jc[e++] = fz_prev;
      ir[e] = u + n; jc[e++] = fz_prev;
    }
    if (effort_nnz(p)) {   /* duplicates of existing entries are summed by IPOPT */
      for (int a = 0; a < 3 * n; a++)   /* x's columns increase with a */
        for (int b = 0; b <= a; b++, e++) { ir[e] = effort_column(p, s0, a); jc[e] = effort_column(p, s0, b); }
      for (int j = 0; j < p->prm.d; j++) { ir[e] = u + n + 1 + j; jc[e++] = u + n + 1 + j; }
    }
  }
}

/* The heavy parts of a step's rows at single perturbations of its columns. */
struct hessian_cache {
  double *dx, *Ls, *r0, L0;      /* steps (C), L_k at +- dx (2 C), the unmoved rows (R) and L_k there */
  arm_terms A0, Afresh, *Aq;     /* at S_k; at q_k +- dx (Aq[s n + i], s = 0: +, 1: -) */
  double *Mpp;                   /* M~ at a (q_k, q_k) pair's (+, +) */
  double *dM, *d2M;              /* d M / d q_i (dM[(i n + r) n + c]), d2 M / d q_i d q_l (d2M[((i n + l) n + r) n + c]) */
  contact_geom G0, *Gq;          /* the step's; with the geometry's positions (q_{k+1}, or q_k) +- dx */
  double *P0, *Pq;               /* d nu / d v_{k+1} (3 x n) there */
  double *J0, *Jq;               /* the disk frame's body Jacobian (6 x n) there (contact_at_start: v_k's shift) */
  double *lm;                    /* scratch multipliers (R): the margin row's alone (margin_pair) */
};

static const arm_terms *cached_arm(const plan_mpcc *p, int c, int sign) {
  return &p->hc->Aq[(sign < 0 ? p->n : 0) + c];
}

/* The pairs of (q_k, v_k) columns whose second derivatives come from the mass matrix's: the bias
   is c(q, v) = g(q) + Gamma(q)[v, v] with the Christoffel symbols of M (the base does not move),
   Gamma_kij = (d_j M_ki + d_i M_kj - d_k M_ij) / 2, so no evaluation of the bias at moved
   velocities is needed (arm_velocity_pair). */
static int pair_from_mass_derivatives(int ka, int kb) {
  return (ka == K_V0 && (kb == K_Q0 || kb == K_V0)) || (kb == K_V0 && ka == K_Q0);
}


/* L_k - lambda_k . g_k(z) at z with block column a moved by sa dx_a and (b >= 0) b by sb dx_b;
   the arm terms and the geometry from the cache when only one column moves them. */
static double lagrangian_moved(plan_mpcc *p, double *zp, int k, const double *lambda, int a, int sa, int b, int sb) {
  hessian_cache *H = p->hc;
  int n = p->n, base = k * p->B;
  int ka = a >= 0 ? column_kind(p, a) : -1, kb = b >= 0 ? column_kind(p, b) : -1;
  double xa = a >= 0 ? zp[base + a] : 0, xb = b >= 0 ? zp[base + b] : 0;
  if (a >= 0) zp[base + a] += sa * H->dx[a];
  if (b >= 0) zp[base + b] += sb * H->dx[b];
  const arm_terms *A = NULL;
  if (p->dynamic) {   /* v_k is never moved here (pair_from_mass_derivatives) */
    if (ka == K_Q0 && kb == K_Q0) {
      state_view S0 = state_at(p, zp, k);
      arm_terms_at(p, &S0, &H->Afresh);
      A = &H->Afresh;
    } else {
      A = ka == K_Q0 ? cached_arm(p, a, sa) : kb == K_Q0 ? cached_arm(p, b, sb) : &H->A0;
    }
  }
  contact_geom G;
  int geo = geometry_kind(p);
  if (ka == geo && kb == geo) {
    state_view S0 = state_at(p, zp, k), S1 = state_at(p, zp, k + 1);
    step_geometry(p, &S0, &S1, &G);
  } else {
    int c = ka == geo ? a : kb == geo ? b : -1, s = ka == geo ? sa : sb;
    int slot = (s < 0 ? n : 0) + c - geometry_column(p);
    const double *P = c >= 0 ? H->Pq + (size_t)slot * 3 * n : H->P0;
    const double *J = c >= 0 ? H->Jq + (size_t)slot * 6 * n : H->J0;
    G = c >= 0 ? H->Gq[slot] : H->G0;
    int start = margin_on(p);
    if (ka == K_V1 || ka == K_OM1 || (start && ka == K_V0)) shift_nu(p, &G, P, J, a, sa * H->dx[a]);
    if (kb == K_V1 || kb == K_OM1 || (start && kb == K_V0)) shift_nu(p, &G, P, J, b, sb * H->dx[b]);
  }
  step_rows_with(p, zp, k, &G, A, p->rp);
  if (a >= 0) zp[base + a] = xa;
  if (b >= 0) zp[base + b] = xb;
  double L = 0;   /* relative to the unmoved rows: the differences lose less to rounding */
  for (int r = 0; r < p->nrow; r++) L += lambda[r] * (p->rp[r] - H->r0[r]);
  return L;
}

/* The second differences' step (times 1 + |x|): the contact at the step's start puts the
   disk's velocity J(q_k) v_{k+1} into the gap row, whose q_k pairs curve faster than the end
   contact's rows: the larger step truncates them visibly (docs/planning.md, session 17). */
static double hessian_step_size(const plan_mpcc *p) { return p->prm.contact_at_start ? 1e-5 : 3e-5; }

/* The cache of step k at zp, and L_k at the single perturbations of the pattern's columns. */
static void hessian_prepare_step(plan_mpcc *p, double *zp, int k, const double *lambda) {
  hessian_cache *H = p->hc;
  int n = p->n, C = p->B + p->ns, base = k * p->B;
  const int *used = p->hess.used[p->dynamic];
  for (int c = 0; c < C; c++) H->dx[c] = hessian_step_size(p) * (1 + fabs(zp[base + c]));
  state_view S0 = state_at(p, zp, k), S1 = state_at(p, zp, k + 1);
  if (p->dynamic) arm_terms_at(p, &S0, &H->A0);
  p->feature_frozen.on = 0;
  step_geometry(p, &S0, &S1, &H->G0);
  /* the sharp disk's features held for the differences (the fillet's map is smooth over its radius) */
  p->feature_frozen.radial = H->G0.rho >= p->prm.disk_radius;
  p->feature_frozen.axial = fabs(H->G0.wz) >= p->prm.disk_half_thickness;
  p->feature_frozen.on = !(p->prm.disk_fillet > 0);
  if (p->feature_frozen.on) step_geometry(p, &S0, &S1, &H->G0);   /* the base on the same map */
  contact_velocity_jacobian(p, &H->G0, H->P0);
  memcpy(H->J0, p->Jpoint, sizeof(double) * 6 * n);
  int g0 = geometry_column(p);
  /* the stabilization's blend by its tangent at the step's gap (until hessian_step ends): its
     curvature lives within STAB_WIDTH of g = 0, far below the differences' reach, where their
     quotients would be of order 1 / step instead of the blend's derivative */
  p->stab_tangent.g0 = H->G0.gap;
  p->stab_tangent.s0 = stabilized_gap(H->G0.gap, &p->stab_tangent.ds);
  p->stab_tangent.on = p->prm.contact_at_start;
  step_rows_with(p, zp, k, &H->G0, p->dynamic ? &H->A0 : NULL, H->r0);
  for (int s = 0; s < 2; s++)
    for (int i = 0; i < n; i++) {
      int slot = s * n + i;
      double sign = s ? -1 : 1, x0;
      if (p->dynamic && used[i]) {
        x0 = zp[base + i];
        zp[base + i] += sign * H->dx[i];
        arm_terms_at(p, &S0, &H->Aq[slot]);
        zp[base + i] = x0;
      }
      if (used[g0 + i]) {
        x0 = zp[base + g0 + i];
        zp[base + g0 + i] += sign * H->dx[g0 + i];
        step_geometry(p, &S0, &S1, &H->Gq[slot]);
        contact_velocity_jacobian(p, &H->Gq[slot], H->Pq + (size_t)slot * 3 * n);
        memcpy(H->Jq + (size_t)slot * 6 * n, p->Jpoint, sizeof(double) * 6 * n);
        zp[base + g0 + i] = x0;
      }
    }
  H->L0 = 0;
  for (int c = 0; c < C; c++)
    if (used[c]) {
      H->Ls[c] = lagrangian_moved(p, zp, k, lambda, c, 1, -1, 0);
      H->Ls[C + c] = lagrangian_moved(p, zp, k, lambda, c, -1, -1, 0);
    }
}

/* The arm rows' lambda_a . (M~(q_k) (v_{k+1} - v_k) + h e(q_k, v_k)) differentiated twice, in
   (v_k, q_k) or (v_k, v_k) (block columns a = n + j > b): from M's derivatives (the cache's dM,
   d2M) through the Christoffel symbols, e's other terms being linear. */
static double arm_velocity_pair(const plan_mpcc *p, const double *lambda, const double *v0, int a, int b) {
  const hessian_cache *H = p->hc;
  int n = p->n, nn = n * n, j = a - n;
  double h = p->h, s = 0;
  if (b >= n) {   /* (v_j, v_i): h lambda . d2 c / dv_i dv_j = h sum_k lambda_k 2 Gamma_kij */
    int i = b - n;
    for (int k = 0; k < n; k++)
      s += lambda[k] * (H->dM[j * nn + k * n + i] + H->dM[i * nn + k * n + j] - H->dM[k * nn + i * n + j]);
    return h * s;
  }
  int i = b;      /* (v_j, q_i): -d_i (M^T lambda)_j + h d_i (sum_l 2 lambda . Gamma_.jl v_l) */
  for (int k = 0; k < n; k++) s -= lambda[k] * H->dM[i * nn + k * n + j];
  double c = 0;
  for (int l = 0; l < n; l++) {
    const double *d_il = H->d2M + (size_t)(i * n + l) * nn, *d_ij = H->d2M + (size_t)(i * n + j) * nn;
    double t = 0;
    for (int k = 0; k < n; k++) t += lambda[k] * (d_il[k * n + j] + d_ij[k * n + l] - H->d2M[(size_t)(i * n + k) * nn + j * n + l]);
    c += v0[l] * t;
  }
  return s + h * c;
}

/* contact_at_start, dynamic stage: the margin row's part of a (v_k, q_k) or (v_k, v_k) pair (block
   columns a >= b), which arm_velocity_pair leaves out (it reads the arm rows alone): differences of
   that row alone (lagrangian_moved is relative to the unmoved rows, so its L0 is 0). */
static double margin_pair(plan_mpcc *p, double *zp, int k, const double *lambda, int a, int b) {
  hessian_cache *H = p->hc;
  int R = p->nrow, row = p->prm.penalty > 0 ? R - 2 : R - 1;
  if (!margin_on(p) || lambda[row] == 0) return 0;
  memset(H->lm, 0, sizeof(double) * R);
  H->lm[row] = lambda[row];
  double da = H->dx[a], db = H->dx[b];
  if (a == b) return (lagrangian_moved(p, zp, k, H->lm, a, 1, -1, 0) + lagrangian_moved(p, zp, k, H->lm, a, -1, -1, 0)) / (da * da);
  return (lagrangian_moved(p, zp, k, H->lm, a, 1, b, 1) - lagrangian_moved(p, zp, k, H->lm, a, 1, b, -1) -
          lagrangian_moved(p, zp, k, H->lm, a, -1, b, 1) + lagrangian_moved(p, zp, k, H->lm, a, -1, b, -1)) /
         (4 * da * db);
}

/* The constraints' part of step k, in hessian_pairs' order. */
static void hessian_step(plan_mpcc *p, double *zp, int k, const double *lambda, double *v) {
  hessian_cache *H = p->hc;
  int C = p->B + p->ns, np = p->hess.npairs[p->dynamic];
  const int *pair = p->hess.pair[p->dynamic];
  int n = p->n, nn = n * n;
  hessian_prepare_step(p, zp, k, lambda);
  if (p->dynamic)   /* M's first and pure second derivatives from the single perturbations of q_k */
    for (int i = 0; i < n; i++) {
      const double *Mp = H->Aq[i].Mt, *Mm = H->Aq[n + i].Mt, *M0 = H->A0.Mt;
      double di = H->dx[i];
      for (int j = 0; j < nn; j++) {
        H->dM[i * nn + j] = (Mp[j] - Mm[j]) / (2 * di);
        H->d2M[(size_t)(i * n + i) * nn + j] = (Mp[j] - 2 * M0[j] + Mm[j]) / (di * di);
      }
    }
  for (int e = 0; e < np; e++) {
    int a = pair[2 * e], b = pair[2 * e + 1], ka = column_kind(p, a), kb = column_kind(p, b);
    double da = H->dx[a], db = H->dx[b];
    if (p->dynamic && pair_from_mass_derivatives(ka, kb)) {   /* after every (q_k, q_k) pair: a >= n */
      v[e] = arm_velocity_pair(p, lambda, zp + (size_t)k * p->B + n, a, b) + margin_pair(p, zp, k, lambda, a, b);
      continue;
    }
    if (a == b) {
      v[e] = (H->Ls[a] - 2 * H->L0 + H->Ls[C + a]) / (da * da);
      continue;
    }
    double Lpp = lagrangian_moved(p, zp, k, lambda, a, 1, b, 1);
    int mass_pair = p->dynamic && ka == K_Q0 && kb == K_Q0;   /* (the kinematic stage's come from the geometry) */
    if (mass_pair) memcpy(H->Mpp, H->Afresh.Mt, sizeof(double) * nn);   /* keep M(++) */
    double Lmm = lagrangian_moved(p, zp, k, lambda, a, -1, b, -1);
    double sum = Lpp + Lmm - H->Ls[a] - H->Ls[C + a] - H->Ls[b] - H->Ls[C + b] + 2 * H->L0;
    v[e] = sum / (2 * da * db);
    if (mass_pair) {
      const double *Mpp = H->Mpp, *Mmm = H->Afresh.Mt, *M0 = H->A0.Mt;
      const double *Mpa = H->Aq[a].Mt, *Mma = H->Aq[n + a].Mt, *Mpb = H->Aq[b].Mt, *Mmb = H->Aq[n + b].Mt;
      for (int j = 0; j < nn; j++) {
        double d2 = (Mpp[j] + Mmm[j] - Mpa[j] - Mma[j] - Mpb[j] - Mmb[j] + 2 * M0[j]) / (2 * da * db);
        H->d2M[(size_t)(a * n + b) * nn + j] = H->d2M[(size_t)(b * n + a) * nn + j] = d2;
      }
    }
  }
  p->stab_tangent.on = 0;
  p->feature_frozen.on = 0;
}

/* The objective's second derivatives (eq. 20, plan_mpcc_objective), in hessian_structure's order. */
static void hessian_objective(const plan_mpcc *p, const double *z, double sigma, double *v) {
  int n = p->n, N = p->prm.N;
  double h = p->h;
  size_t e = 0;
  for (int k = 0; k < N; k++) {
    const double *quat = z + (size_t)(k + 1) * p->B + 2 * n + 3;
    double qt = 0, qq = 0;
    for (int i = 0; i < 4; i++) { qt += quat[i] * p->target[i]; qq += quat[i] * quat[i]; }
    double w_quat = 10 * h + (k == N - 1 ? p->prm.terminal_weight : 0);
    /* w (1 - (q.t)^2) + 10 h (q.q - 1)^2 */
    for (int a = 0; a < 4; a++)
      for (int b = 0; b <= a; b++, e++)
        v[e] = sigma * (-2 * w_quat * p->target[a] * p->target[b] + 80 * h * quat[a] * quat[b] +
                        (a == b ? 40 * h * (qq - 1) : 0));
    for (int i = 0; i < n + 3; i++) {  /* 1e-3 h (s1 - s0)^2 */
      v[e++] = sigma * 2e-3 * h;
      v[e++] = sigma * 2e-3 * h;
      v[e++] = -sigma * 2e-3 * h;
    }
    for (int i = 0; i < n; i++) v[e++] = sigma * 2e-2 * h;   /* 1e-2 h tau^2 */
    v[e++] = (k > 0 ? sigma * 0.4 * h : 0) + (effort_nnz(p) ? sigma * 2 * p->effort_force * h : 0);  /* 0.2 h (fz_k - fz_{k-1})^2 */
    if (k > 0) { v[e++] = sigma * 0.4 * h; v[e++] = -sigma * 0.4 * h; }
    if (effort_nnz(p)) {
      for (int a = 0; a < 3 * n; a++)
        for (int b = 0; b <= a; b++) v[e++] = sigma * 1e-2 * h * p->effort_H[a * 3 * n + b];
      for (int j = 0; j < p->prm.d; j++) v[e++] = sigma * 2 * p->effort_force * h;
    }
  }
}

static Bool cb_h(Index nv, Number *x, Bool nx, Number of, Index m, Number *l, Bool nl, Index ne,
                 Index *ir, Index *jc, Number *v, UserDataPtr ud) {
  (void)nx; (void)m; (void)nl; (void)ne;
  plan_mpcc *p = ud;
  if (!p->exact_now) return FALSE;
  if (!v) { hessian_structure(p, ir, jc); return TRUE; }
  size_t step_nnz = (size_t)p->hess.npairs[p->dynamic];
  p->hessian_evaluations++;
  double t0 = cpu_now();
  memcpy(p->zp, x, sizeof(double) * nv);
  for (int k = 0; k < p->prm.N; k++) hessian_step(p, p->zp, k, l + (size_t)k * p->nrow, v + (size_t)k * step_nnz);
  hessian_objective(p, x, of, v + (size_t)p->prm.N * step_nnz);
  p->eval_s += cpu_now() - t0;
  for (size_t i = 0; i < hessian_nnz(p); i++)
    if (!isfinite(v[i])) return FALSE;
  return TRUE;
}

/* The Hessian IPOPT gets (cb_h), as the full symmetric nv x nv matrix H (the caller's, zeroed here). */
static int hessian_matrix(plan_mpcc *p, const double *z, const double *lambda, double sigma, double *H) {
  int nv = p->nvar, m = p->prm.N * p->nrow, exact = p->exact_now, ok = 0;
  size_t nnz = hessian_nnz(p);
  Index *ir = malloc(sizeof(Index) * 2 * nnz), *jc = ir ? ir + nnz : NULL;
  double *v = malloc(sizeof(double) * nnz), *x = malloc(sizeof(double) * nv);
  if (ir && v && x) {
    memcpy(x, z, sizeof(double) * nv);
    memset(H, 0, sizeof(double) * (size_t)nv * nv);
    p->exact_now = 1;
    cb_h(nv, x, TRUE, sigma, m, (Number *)lambda, TRUE, (Index)nnz, ir, jc, NULL, p);
    ok = cb_h(nv, x, TRUE, sigma, m, (Number *)lambda, TRUE, (Index)nnz, NULL, NULL, v, p);
    p->exact_now = exact;
    for (size_t e = 0; ok && e < nnz; e++) {  /* duplicates add */
      H[(size_t)ir[e] * nv + jc[e]] += v[e];
      if (ir[e] != jc[e]) H[(size_t)jc[e] * nv + ir[e]] += v[e];
    }
  }
  free(ir); free(v); free(x);
  return ok ? 0 : -1;
}

/* Row-wise relative: the arm's coordinates give entries up to 1e5 beside small ones, whose
   differences carry the large ones' truncation error. */
static double hessian_mismatch(int nv, const double *H, const double *F) {
  double worst = 0;
  for (int i = 0; i < nv; i++) {
    double scale = 1;
    for (int j = 0; j < nv; j++) scale = fmax(scale, fabs(F[(size_t)i * nv + j]));
    for (int j = 0; j < nv; j++) worst = fmax(worst, fabs(H[(size_t)i * nv + j] - F[(size_t)i * nv + j]) / scale);
  }
  return worst;
}

double plan_mpcc_hessian_error(plan_mpcc *p, const double *z, const double *lambda, double sigma, int dynamic) {
  p->dynamic = dynamic;
  p->nrow = rows_per_step(p, dynamic);
  int nv = p->nvar, m = p->prm.N * p->nrow;
  double *H = malloc(sizeof(double) * (size_t)nv * nv), *F = calloc((size_t)nv * nv, sizeof(double));
  double *x = malloc(sizeof(double) * nv), *g = malloc(sizeof(double) * m);
  double worst = INFINITY, dx = hessian_step_size(p);
  if (!H || !F || !x || !g || hessian_matrix(p, z, lambda, sigma, H)) goto done;
  memcpy(x, z, sizeof(double) * nv);
  /* second differences of the Lagrangian sigma f + lambda . g, g from the plain rows (no Jacobian) */
  for (int i = 0; i < nv; i++)
    for (int j = 0; j <= i; j++) {
      double L[4];
      for (int s = 0; s < 4; s++) {
        double xi = x[i], xj = x[j];
        x[i] += s & 1 ? -dx : dx;
        x[j] += s & 2 ? -dx : dx;
        L[s] = sigma * plan_mpcc_objective(p, x, NULL);
        for (int k = 0; k < p->prm.N; k++) step_rows(p, x, k, g + (size_t)k * p->nrow);
        for (int r = 0; r < m; r++) L[s] += lambda[r] * g[r];
        x[i] = xi;
        x[j] = xj;
      }
      F[(size_t)i * nv + j] = F[(size_t)j * nv + i] = (L[0] - L[1] - L[2] + L[3]) / (4 * dx * dx);
    }
  worst = hessian_mismatch(nv, H, F);
done:
  free(H); free(F); free(x); free(g);
  return worst;
}

double plan_mpcc_hessian_gradient_error(plan_mpcc *p, const double *z, const double *lambda, double sigma,
                                        int dynamic, double step) {
  p->dynamic = dynamic;
  p->nrow = rows_per_step(p, dynamic);
  int nv = p->nvar;
  double *H = malloc(sizeof(double) * (size_t)nv * nv), *F = malloc(sizeof(double) * (size_t)nv * nv);
  double *x = malloc(sizeof(double) * nv), *gp = malloc(sizeof(double) * nv), *gm = malloc(sizeof(double) * nv);
  double *fp = malloc(sizeof(double) * nv), *fm = malloc(sizeof(double) * nv);
  double worst = INFINITY;
  if (!H || !F || !x || !gp || !gm || !fp || !fm || hessian_matrix(p, z, lambda, sigma, H)) goto done;
  memcpy(x, z, sizeof(double) * nv);
  for (int j = 0; j < nv; j++) {
    double x0 = x[j], e = step * (1 + fabs(x0));
    x[j] = x0 + e;
    if (plan_mpcc_lagrangian_gradient(p, x, lambda, gp)) goto done;
    plan_mpcc_objective(p, x, fp);
    x[j] = x0 - e;
    if (plan_mpcc_lagrangian_gradient(p, x, lambda, gm)) goto done;
    plan_mpcc_objective(p, x, fm);
    x[j] = x0;
    /* the gradient's objective term has weight 1: sigma's by removing (1 - sigma) of it */
    for (int i = 0; i < nv; i++)
      F[(size_t)i * nv + j] = (gp[i] - gm[i] - (1 - sigma) * (fp[i] - fm[i])) / (2 * e);
  }
  for (int i = 0; i < nv; i++)   /* the differences' symmetric part */
    for (int j = 0; j < i; j++)
      F[(size_t)i * nv + j] = F[(size_t)j * nv + i] = 0.5 * (F[(size_t)i * nv + j] + F[(size_t)j * nv + i]);
  worst = hessian_mismatch(nv, H, F);
done:
  free(H); free(F); free(x); free(gp); free(gm); free(fp); free(fm);
  return worst;
}

double plan_mpcc_jacobian_error(plan_mpcc *p, const double *z, int dynamic) {
  p->dynamic = dynamic;
  p->nrow = rows_per_step(p, dynamic);
  int R = p->nrow, C = p->B + p->ns, nv = p->nvar;
  size_t nele = (size_t)p->prm.N * R * C;
  double *val = malloc(sizeof(double) * nele), *x = malloc(sizeof(double) * nv);
  double *rp = malloc(sizeof(double) * 2 * R), *rm = rp + R;
  if (!val || !x || !rp) { free(val); free(x); free(rp); return INFINITY; }
  memcpy(x, z, sizeof(double) * nv);
  double worst = cb_jac(nv, x, TRUE, p->prm.N * R, (Index)nele, NULL, NULL, val, p) ? 0 : INFINITY;
  /* Richardson extrapolation of central differences at dx, dx/2, dx/4 (error O(dx^6)): the
     Jacobian's own differences (step 1e-6) carry truncation errors of 1e-6 where the
     closest point's map curves on the millimetre scale (its tangent in the Jacobian does not) */
  double *d3 = malloc(sizeof(double) * 3 * R);
  if (!d3) worst = INFINITY;
  for (int k = 0; d3 && k < p->prm.N; k++)
    for (int c = 0; c < C; c++) {
      int col = k * p->B + c;
      double x0 = x[col];
      for (int s = 0; s < 3; s++) {
        double dx = 1e-5 * (1 + fabs(x0)) / (1 << s);
        x[col] = x0 + dx;
        step_rows(p, x, k, rp);
        x[col] = x0 - dx;
        step_rows(p, x, k, rm);
        for (int r = 0; r < R; r++) d3[s * R + r] = (rp[r] - rm[r]) / (2 * dx);
      }
      x[col] = x0;
      for (int r = 0; r < R; r++) {
        double d1 = (4 * d3[R + r] - d3[r]) / 3, d2 = (4 * d3[2 * R + r] - d3[R + r]) / 3;
        double fd = (16 * d2 - d1) / 15, a = val[(size_t)k * R * C + (size_t)r * C + c];
        worst = fmax(worst, fabs(a - fd) / fmax(1, fabs(fd)));
      }
    }
  free(d3);
  free(val);
  free(x);
  free(rp);
  return worst;
}

static Bool cb_progress(Index mode, Index iter, Number obj, Number inf_pr, Number inf_du, Number mu,
                        Number d_norm, Number reg, Number a_du, Number a_pr, Index ls, UserDataPtr ud) {
  (void)a_du;
  plan_mpcc *p = ud;
  p->iterations = iter;
  /* reg: IPOPT's Hessian regularization (inertia correction) of the step, ls its line-search trials */
  if (p->prm.verbose)
    fprintf(stderr, "%s iter %4d%s  obj %+.6e  inf_pr %.2e  inf_du %.2e  mu %.1e  |d| %.2e  alpha %.2e  reg %.1e  ls %d\n",
            p->dynamic ? "dynamic" : "kinematic", iter, mode ? "r" : " ", obj, inf_pr, inf_du, mu,
            d_norm, a_pr, reg, (int)ls);
  return TRUE;
}

/* The pattern of both stages and the cache of hessian_step. Returns 0, or -1 out of memory. */
/* The pattern of a step's block, both stages (from margin_on at the call) */
static int hessian_patterns(plan_mpcc *p) {
  int C = p->B + p->ns;
  for (int dynamic = 0; dynamic < 2; dynamic++) {
    free(p->hess.pair[dynamic]);
    free(p->hess.used[dynamic]);
    int np = hessian_pairs(p, dynamic, NULL);
    p->hess.npairs[dynamic] = np;
    p->hess.pair[dynamic] = malloc(sizeof(int) * 2 * (size_t)np);
    p->hess.used[dynamic] = calloc((size_t)C, sizeof(int));
    if (!p->hess.pair[dynamic] || !p->hess.used[dynamic]) return -1;
    hessian_pairs(p, dynamic, p->hess.pair[dynamic]);
    for (int e = 0; e < np; e++) {   /* the columns some second difference moves */
      int a = p->hess.pair[dynamic][2 * e], b = p->hess.pair[dynamic][2 * e + 1];
      if (dynamic && pair_from_mass_derivatives(column_kind(p, a), column_kind(p, b))) continue;
      p->hess.used[dynamic][a] = p->hess.used[dynamic][b] = 1;
    }
  }
  return 0;
}

static int hessian_cache_create(plan_mpcc *p) {
  int n = p->n, C = p->B + p->ns, R = rows_per_step_max(p);
  if (hessian_patterns(p)) return -1;
  hessian_cache *H = p->hc = calloc(1, sizeof *H);
  if (!H) return -1;
  int narm = 2 * n + 2;   /* Aq (+ and -), A0, Afresh */
  size_t arm_size = (size_t)n * n + 7 * (size_t)n;
  size_t n3 = (size_t)n * n * n;
  H->dx = malloc(sizeof(double) * (3 * (size_t)C + 2 * (size_t)R + 9 * (size_t)n * (2 * n + 1) + narm * arm_size + n3 +
                                   n3 * n + (size_t)n * n));
  H->Aq = malloc(sizeof(arm_terms) * 2 * (size_t)n);
  H->Gq = malloc(sizeof(contact_geom) * 2 * (size_t)n);
  if (!H->dx || !H->Aq || !H->Gq) return -1;
  H->Ls = H->dx + C;
  H->r0 = H->Ls + 2 * C;
  H->P0 = H->r0 + R;
  H->Pq = H->P0 + 3 * n;
  H->J0 = H->Pq + 6 * (size_t)n * n;
  H->Jq = H->J0 + 6 * n;
  H->lm = H->Jq + 12 * (size_t)n * n;
  H->dM = H->lm + R;
  H->d2M = H->dM + n3;
  H->Mpp = H->d2M + n3 * n;
  double *a = H->Mpp + (size_t)n * n;
  arm_terms *all[2 * 64 + 2];
  for (int i = 0; i < 2 * n; i++) all[i] = &H->Aq[i];
  all[2 * n] = &H->A0;
  all[2 * n + 1] = &H->Afresh;
  for (int i = 0; i < narm; i++, a += arm_size) {
    all[i]->Mt = a;
    all[i]->e = a + n * n;
    all[i]->JW = a + n * n + n;
  }
  return 0;
}

static void hessian_cache_free(plan_mpcc *p) {
  for (int dynamic = 0; dynamic < 2; dynamic++) { free(p->hess.pair[dynamic]); free(p->hess.used[dynamic]); }
  if (!p->hc) return;
  free(p->hc->dx);
  free(p->hc->Aq);
  free(p->hc->Gq);
  free(p->hc);
}

/* ---- setup ---- */
/* Names the first parameter out of its range (a NaN is out of every range). */
static int params_valid(const plan_mpcc_params *P, char *error, int error_size) {
  const struct { const char *name; double value; int ok; } check[] = {
    {"N (steps) >= 1", P->N, P->N >= 1},
    {"T (horizon, s) > 0", P->T, P->T > 0},
    {"mu >= 0", P->mu, P->mu >= 0},
    {"d (friction directions) in 3..16", P->d, P->d >= 3 && P->d <= 16},
    {"eps > 0", P->eps, P->eps > 0},
    {"margin rows: 0 (off), 1 (all) or 2 (lazy)", P->margin_rows,
     P->margin_rows == PLAN_MARGIN_OFF || P->margin_rows == PLAN_MARGIN_ALL || P->margin_rows == PLAN_MARGIN_LAZY},
    {"ball radius (m) > 0", P->ball_radius, P->ball_radius > 0},
    {"ball mass (kg) > 0", P->ball_mass, P->ball_mass > 0},
    {"disk radius (m) > 0", P->disk_radius, P->disk_radius > 0},
    {"disk half thickness (m) > 0", P->disk_half_thickness, P->disk_half_thickness > 0},
    {"disk fillet (m) >= 0 and below the disk's radius and half thickness", P->disk_fillet,
     P->disk_fillet >= 0 && P->disk_fillet < fmin(P->disk_radius, P->disk_half_thickness)},
  };
  for (size_t i = 0; i < sizeof check / sizeof check[0]; i++)
    if (!check[i].ok) {
      snprintf(error, error_size, "mpcc: %s, got %g", check[i].name, check[i].value);
      return 0;
    }
  const double *e = P->friction_reference;
  double len = sqrt(dot3(e, e));
  if (!isfinite(len) || (len > 0 && len < 1e-6)) {   /* the plugin key's rule (plugin/config.c) */
    snprintf(error, error_size, "mpcc: friction reference (%g, %g, %g): finite, and 0 0 0 (none) or of length "
             ">= 1e-6, got length %g", e[0], e[1], e[2], len);
    return 0;
  }
  return 1;
}

plan_mpcc *plan_mpcc_create(const plan_mpcc_params *prm, char *error, int error_size) {
  const plan_mpcc_params *P = prm;
  if (!params_valid(P, error, error_size)) return NULL;
  double an = sqrt(dot3(P->axis, P->axis));
  if (!(an > 0) || !isfinite(P->angle)) {
    snprintf(error, error_size, "mpcc: rotation axis (%g, %g, %g) or angle %g", P->axis[0], P->axis[1],
             P->axis[2], P->angle);
    return NULL;
  }
  plan_mpcc *p = calloc(1, sizeof *p);
  if (!p) { snprintf(error, error_size, "mpcc: out of memory"); return NULL; }
  p->prm = *P;
  sb_preset_cusp_arm(&p->arm);
  p->arm.chain.seg = p->arm.seg;
  p->arm.chain.base.p[2] = 1.167;   /* mjcf/ball_rotation.xml's mount */
  p->model = sb_model_create(&p->arm.chain, error, error_size);
  if (!p->model) { free(p); return NULL; }
  p->work = sb_work_create(p->model);
  p->n = p->model->n;
  if (!p->work || p->n > 64) { snprintf(error, error_size, "mpcc: workspace (n = %d)", p->n); plan_mpcc_free(p); return NULL; }
  p->ns = 2 * p->n + 7;
  p->nu = p->n + P->d + 3;
  p->B = p->ns + p->nu;
  p->nvar = P->N * p->B + p->ns;
  p->h = P->T / P->N;
  p->ball_inertia = 0.4 * P->ball_mass * P->ball_radius * P->ball_radius;
  for (int i = 0; i < 3; i++) p->target[i + 1] = sin(0.5 * P->angle) * P->axis[i] / an;
  p->target[0] = cos(0.5 * P->angle);
  p->n_rest[1] = -1;   /* until the rest geometry below */
  p->t1_rest[0] = 1;
  int n = p->n, R = rows_per_step_max(p);
  p->Mt = malloc(sizeof(double) * (n * n + 3 * n + 2 * (n * n + 7 * n)));
  p->zp = malloc(sizeof(double) * (p->nvar + 2 * R));
  p->margin_mask = calloc((size_t)P->N, 1);
  if (!p->Mt || !p->zp || !p->margin_mask || hessian_cache_create(p)) { snprintf(error, error_size, "mpcc: out of memory"); plan_mpcc_free(p); return NULL; }
  /* the arm cache holds what reuse needs: the constraints' states (N + 1) and the Jacobian's
     single differences of each (2 n) until the Jacobian reads them after the constraints at the
     same point, and two steps' worth of the Hessian's (the base, 2 n single and n (n - 1) paired
     differences) while step k + 1 reads step k's */
  p->ac_capacity = (P->N + 1) * (2 * n + 1) + 2 * (n * n + n + 1);
  p->ac = arm_cache_create(n, arm_point_offset(p, ARM_POINT_END), p->ac_capacity);
  if (!p->ac) { snprintf(error, error_size, "mpcc: out of memory (arm cache of %d states)", p->ac_capacity); plan_mpcc_free(p); return NULL; }
  p->c = p->Mt + n * n;
  p->tmp = p->c + n;
  p->terms.Mt = p->tmp + n;
  p->terms.e = p->terms.Mt + n * n;
  p->terms.JW = p->terms.e + n;
  p->terms_fixed.Mt = p->terms.JW + 6 * n;
  p->terms_fixed.e = p->terms_fixed.Mt + n * n;
  p->terms_fixed.JW = p->terms_fixed.e + n;
  p->rp = p->zp + p->nvar;
  p->rm = p->rp + R;
  double zero[64] = {0}, res;
  if (sb_static_solve(p->model, p->work, zero, NULL, 0, p->q_init, 1e-10, 100, &res, error, error_size)) {
    plan_mpcc_free(p);
    return NULL;
  }
  contact_geom G;
  contact_geometry(p, p->q_init, zero, zero, &G);
  memcpy(p->n_rest, G.n, sizeof G.n);
  /* the world x axis made tangent (y should the rest normal lie along x) */
  double tn = 0;
  for (int axis = 0; axis < 2 && !(tn > 1e-6); axis++) {
    double na = p->n_rest[axis];
    tn = 0;
    for (int i = 0; i < 3; i++) { p->t1_rest[i] = (i == axis) - na * p->n_rest[i]; tn += p->t1_rest[i] * p->t1_rest[i]; }
  }
  for (int i = 0; i < 3; i++) p->t1_rest[i] /= sqrt(tn);
  /* friction_reference: the basis turns fast where the normal nears the reference, and every plan's
     contact starts at the rest normal (and wanders further): a reference this close to it is a mistake */
  double fr = sqrt(dot3(P->friction_reference, P->friction_reference));
  if (fr > 0 && fabs(dot3(P->friction_reference, p->n_rest)) > cos(FRICTION_REFERENCE_MIN_ANGLE) * fr) {
    snprintf(error, error_size, "mpcc: friction reference (%g, %g, %g) within %g degrees of the rest contact's "
             "normal +-(%.3f, %.3f, %.3f): its tangent projection, the pyramid's first direction, would turn "
             "fast where the contact goes; take a direction far from the task's normals",
             P->friction_reference[0], P->friction_reference[1], P->friction_reference[2],
             FRICTION_REFERENCE_MIN_ANGLE * 180 / M_PI, p->n_rest[0], p->n_rest[1], p->n_rest[2]);
    plan_mpcc_free(p);
    return NULL;
  }
  /* kinematic_effort: the arm rows linearized at rest (c(q_rest, 0) + K q_rest = 0, c's change with q
     and v dropped), with q_{k+1} = q_k + h v_{k+1}: tau = M (v_{k+1} - v_k) / h + K (q_{k+1} - q_rest)
     + D v_{k+1} - J^T F; the contact force's part through the disk's Jacobian at rest, averaged over
     the three directions of a world force, as a weight on the forces (its direction is the
     geometry's, which the objective does not see) */
  p->effort_C = malloc(sizeof(double) * 3 * n * n);
  p->effort_H = malloc(sizeof(double) * 9 * n * n);
  if (!p->effort_C || !p->effort_H) { snprintf(error, error_size, "mpcc: out of memory"); plan_mpcc_free(p); return NULL; }
  sb_kinematics(p->model, p->work, p->q_init, zero);
  sb_mass_matrix(p->model, p->work, p->Mt);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double *c = p->effort_C + (size_t)i * 3 * n, m = p->Mt[i * n + j] / p->h;
      c[j] = -m;
      c[n + j] = p->model->K[i * n + j];
      c[2 * n + j] = m + p->model->D[i * n + j];
    }
  for (int a = 0; a < 3 * n; a++)
    for (int b = 0; b < 3 * n; b++) {
      double t = 0;
      for (int i = 0; i < n; i++) t += p->effort_C[i * 3 * n + a] * p->effort_C[i * 3 * n + b];
      p->effort_H[a * 3 * n + b] = 2 * t;
    }
  state_view S = {p->q_init, zero, zero, NULL};
  arm_terms_at(p, &S, &p->terms);
  double jf = 0;
  for (int j = 0; j < n; j++)
    for (int c = 0; c < 3; c++) jf += p->terms.JW[j * 6 + c] * p->terms.JW[j * 6 + c];
  p->effort_force = 1e-2 * jf / 3;
  return p;
}

void plan_mpcc_free(plan_mpcc *p) {
  if (!p) return;
  sb_work_free(p->work);
  sb_model_free(p->model);
  free(p->Mt);
  free(p->zp);
  free(p->effort_C);
  free(p->effort_H);
  hessian_cache_free(p);
  arm_cache_free(p->ac);
  free(p->margin_mask);
  free(p);
}

int plan_mpcc_set_arm_cache(plan_mpcc *p, int on) {
  arm_cache_free(p->ac);
  p->ac = on ? arm_cache_create(p->n, arm_point_offset(p, ARM_POINT_END), p->ac_capacity) : NULL;
  p->geo_point.valid = 0;
  return on && !p->ac ? -1 : 0;
}

void plan_mpcc_arm_cache_counts(const plan_mpcc *p, long *hits, long *misses) {
  if (hits) *hits = 0;
  if (misses) *misses = 0;
  if (p->ac) arm_cache_counts(p->ac, hits, misses);
}

void plan_mpcc_rest_guess(const plan_mpcc *p, double *z) {
  memset(z, 0, sizeof(double) * p->nvar);
  for (int k = 0; k <= p->prm.N; k++) {
    double *s = z + (size_t)k * p->B;
    memcpy(s, p->q_init, sizeof(double) * p->n);
    s[2 * p->n + 3] = 1;
  }
}

/* Damped Gauss-Newton on the arm's coordinates q (from q_init, |q_i| <=
 * 0.9 q_bound) for the disk touching the ball (gap 0) with the contact
 * normal n_c: 4 residuals, n unknowns, the step -J^T (J J^T + lambda I)^-1 r
 * (minimum norm: the pose stays near the rest pose). Returns the residual's
 * norm at q. */
static double touch_pose(plan_mpcc *p, const double n_c[3], double *q) {
  int n = p->n;
  double zero[64] = {0}, J[4 * 64], r[4], rp[4], rm[4], A[16], lambda = 1e-6;
  contact_geom G;
  memcpy(q, p->q_init, sizeof(double) * n);
  double norm = INFINITY;
  for (int it = 0; it < 100; it++) {
    contact_geometry(p, q, zero, zero, &G);
    r[0] = G.gap;
    for (int i = 0; i < 3; i++) r[1 + i] = G.n[i] - n_c[i];
    norm = sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + r[3] * r[3]);
    if (norm < 1e-10) break;
    for (int c = 0; c < n; c++) {
      double q0 = q[c], dq = 1e-7;
      q[c] = q0 + dq;
      contact_geometry(p, q, zero, zero, &G);
      rp[0] = G.gap;
      memcpy(rp + 1, G.n, sizeof G.n);
      q[c] = q0 - dq;
      contact_geometry(p, q, zero, zero, &G);
      rm[0] = G.gap;
      memcpy(rm + 1, G.n, sizeof G.n);
      q[c] = q0;
      for (int i = 0; i < 4; i++) J[i * n + c] = (rp[i] - rm[i]) / (2 * dq);
    }
    /* A = J J^T + lambda I (4 x 4), then y = A^-1 r and dq = -J^T y */
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, 4, 4, n, 1, J, n, J, n, 0, A, 4);
    for (int i = 0; i < 4; i++) A[i * 4 + i] += lambda;
    double y[4] = {r[0], r[1], r[2], r[3]};
    if (LAPACKE_dposv(LAPACK_ROW_MAJOR, 'L', 4, 1, A, 4, y, 1)) break;
    double bound = 0.9 * p->prm.q_bound;
    for (int c = 0; c < n; c++) {
      double step = 0;
      for (int i = 0; i < 4; i++) step -= J[i * n + c] * y[i];
      q[c] = fmin(fmax(q[c] + step, -bound), bound);
    }
  }
  return norm;
}

int plan_mpcc_needs_offaxis(const plan_mpcc *p) {
  double a[3], an = sqrt(dot3(p->prm.axis, p->prm.axis));
  for (int i = 0; i < 3; i++) a[i] = p->prm.axis[i] / an;
  return fabs(dot3(a, p->n_rest)) > 0.5;
}

double plan_mpcc_offaxis_guess(plan_mpcc *p, double *z, double normal[3]) {
  const plan_mpcc_params *P = &p->prm;
  int n = p->n, N = P->N;
  double a[3], an = sqrt(dot3(P->axis, P->axis)), t2[3];
  for (int i = 0; i < 3; i++) a[i] = P->axis[i] / an;
  cross3(p->n_rest, p->t1_rest, t2);
  /* candidates 45 degrees round the ball from the rest contact, towards +-t1 and +-t2; of those
     the disk reaches, the one whose normal is farthest from the axis (the longest lever) */
  const double *dirs[2] = {p->t1_rest, t2};
  double best = -1, q_c[64], q_try[64], n_best[3] = {0};
  for (int c = 0; c < 4; c++) {
    double sgn = c % 2 ? -1 : 1, n_c[3];
    double ang = P->offaxis_angle > 0 ? P->offaxis_angle : 0.25 * M_PI;
    for (int i = 0; i < 3; i++) n_c[i] = cos(ang) * p->n_rest[i] + sin(ang) * sgn * dirs[c / 2][i];
    double res = touch_pose(p, n_c, q_try);
    double lever = sqrt(fmax(0, 1 - dot3(n_c, a) * dot3(n_c, a)));
    double score = res < 1e-6 ? lever : -1;
    if (score > best) { best = score; memcpy(q_c, q_try, sizeof(double) * n); memcpy(n_best, n_c, sizeof n_c); }
  }
  if (normal) memcpy(normal, n_best, sizeof n_best);
  plan_mpcc_rest_guess(p, z);
  if (best < 0) return -1;
  /* the disk moves to q_c over the first tenth of the horizon (smoothstep), then holds; the
     ball turns about the axis over the rest, its angular velocity the difference of angles */
  int k_c = N / 10 > 1 ? N / 10 : 1;
  if (k_c >= N) k_c = N - 1;
  double theta_prev = 0;
  for (int k = 1; k <= N; k++) {
    double *s = z + (size_t)k * p->B, *s_prev = s - p->B;
    double u = k >= k_c ? 1 : (double)k / k_c, w = u * u * (3 - 2 * u);
    for (int i = 0; i < n; i++) {
      s[i] = p->q_init[i] + w * (q_c[i] - p->q_init[i]);
      s[n + i] = (s[i] - s_prev[i]) / p->h;
    }
    double ub = k <= k_c || N == k_c ? 0 : (double)(k - k_c) / (N - k_c), wb = ub * ub * (3 - 2 * ub);
    double theta = P->angle * wb, rot[3], e[4];
    for (int i = 0; i < 3; i++) { s[2 * n + i] = (theta - theta_prev) / p->h * a[i]; rot[i] = theta * a[i]; }
    quat_exp(rot, e);
    memcpy(s + 2 * n + 3, e, sizeof e);
    theta_prev = theta;
  }
  return best;
}

void plan_mpcc_inverse_dynamics(plan_mpcc *p, double *z) {
  for (int k = 0; k < p->prm.N; k++) {  /* positions from the velocities, as sb_step_commit does */
    double *q0 = z + (size_t)k * p->B, *q1 = q0 + p->B, *v1 = q1 + p->n;
    for (int i = 0; i < p->n; i++) q1[i] = q0[i] + p->h * v1[i];
  }
  for (int k = 0; k < p->prm.N; k++) {
    state_view S0 = state_at(p, z, k), S1 = state_at(p, z, k + 1);
    control_view U = control_at(p, z, k);
    contact_geom G;
    step_geometry(p, &S0, &S1, &G);
    double F[3];
    contact_force(p, &G, &U, F);
    arm_terms_at(p, &S0, &p->terms);
    arm_rows_without_tau(p, &p->terms, &S0, &S1, &G, F, p->tmp);
    double *tau = z + (size_t)k * p->B + p->ns;
    for (int i = 0; i < p->n; i++) tau[i] = p->tmp[i] / p->h;
  }
}

/* ---- coarse-to-fine start ---- */

/* The coarse plan's arm positions at time t: cubic Hermite between its knots,
 * tangents by central differences of the knots (one-sided at the last knot,
 * zero at the first: the arm starts at rest), so the fine knots that fall on
 * coarse ones keep their positions and the fine velocities (differences of
 * the fine positions) vary smoothly instead of jumping once per coarse step. */
static void coarse_position(const plan_mpcc *c, const double *zc, double t, double *q) {
  int Nc = c->prm.N, n = c->n, B = c->B;
  double s = t / c->h;
  int j = (int)floor(s);
  if (j > Nc - 1) j = Nc - 1;
  if (j < 0) j = 0;
  double u = fmin(fmax(s - j, 0), 1), u2 = u * u, u3 = u2 * u;
  double h00 = 2 * u3 - 3 * u2 + 1, h10 = u3 - 2 * u2 + u, h01 = 3 * u2 - 2 * u3, h11 = u3 - u2;
  const double *q0 = zc + (size_t)j * B, *q1 = q0 + B;
  for (int i = 0; i < n; i++) {
    double m0 = j == 0 ? 0 : 0.5 * (q1[i] - q0[i - B]);
    double m1 = j + 1 == Nc ? q1[i] - q0[i] : 0.5 * (q1[i + B] - q0[i]);
    q[i] = h00 * q0[i] + h10 * m0 + h01 * q1[i] + h11 * m1;
  }
}

/* Moves q (minimum-norm Gauss-Newton steps on the gap alone, within the q
 * bounds) until the disk touches the ball: an interpolated pose between two
 * touching ones cuts into the ball or leaves it, where the coarse plan
 * pushes throughout. */
static void touch_gap(plan_mpcc *p, double *q) {
  int n = p->n;
  double zero[64] = {0}, g[64], bound = p->prm.q_bound;
  contact_geom G;
  for (int it = 0; it < 20; it++) {
    contact_geometry(p, q, zero, zero, &G);
    double gap = G.gap, gg = 0;
    if (fabs(gap) < 1e-10) return;
    for (int c = 0; c < n; c++) {
      double q0 = q[c], dq = 1e-7, gp, gm;
      q[c] = q0 + dq;
      contact_geometry(p, q, zero, zero, &G);
      gp = G.gap;
      q[c] = q0 - dq;
      contact_geometry(p, q, zero, zero, &G);
      gm = G.gap;
      q[c] = q0;
      g[c] = (gp - gm) / (2 * dq);
      gg += g[c] * g[c];
    }
    if (!(gg > 0)) return;
    for (int c = 0; c < n; c++) q[c] = fmin(fmax(q[c] - gap * g[c] / gg, -bound), bound);
  }
}

int plan_mpcc_interpolate(plan_mpcc *p, double *z, const plan_mpcc *coarse, const double *zc, char *error,
                          int error_size) {
  const plan_mpcc_params *P = &p->prm;
  int n = p->n, N = P->N, d = P->d;
  if (coarse->n != n || coarse->prm.d != d || fabs(coarse->prm.T - P->T) > 1e-12 * P->T) {
    snprintf(error, error_size,
             "mpcc: coarse plan (n = %d, d = %d, T = %g) does not match the task (n = %d, d = %d, T = %g)",
             coarse->n, coarse->prm.d, coarse->prm.T, n, d, P->T);
    return -1;
  }
  double h = p->h, bound = P->q_bound;
  plan_mpcc_rest_guess(p, z);
  /* forces (not impulses: the rows multiply them by h), friction and gamma: those of the coarse
     step holding the fine step's midpoint */
  for (int k = 0; k < N; k++) {
    int j = (int)floor((k + 0.5) * h / coarse->h);
    if (j > coarse->prm.N - 1) j = coarse->prm.N - 1;
    const double *uc = zc + (size_t)j * coarse->B + coarse->ns;
    double *u = z + (size_t)k * p->B + p->ns;
    memcpy(u + n, uc + n, sizeof(double) * (size_t)(d + 3));
  }
  /* positions; those cutting into the ball, or pushing on it, moved onto its surface */
  double zero[64] = {0};   /* the arm's velocities (n <= 64) and the ball's, at rest for the geometry */
  for (int k = 1; k <= N; k++) {
    double *s = z + (size_t)k * p->B;
    coarse_position(coarse, zc, k * h, s);
    for (int i = 0; i < n; i++) s[i] = fmin(fmax(s[i], -bound), bound);
    contact_geom G;
    contact_geometry(p, s, zero, zero, &G);
    if (G.gap < 0 || control_at(p, z, k - 1).fz > 0) touch_gap(p, s);
  }
  for (int k = 1; k <= N; k++) {   /* velocities as sb_step_commit's q+ = q + h v+ needs */
    double *s = z + (size_t)k * p->B, *s_prev = s - p->B;
    for (int i = 0; i < n; i++) s[n + i] = (s[i] - s_prev[i]) / h;
  }
  /* the ball driven by those forces through its own rows (implicit in omega through the damping),
     so its rows hold and the quaternion stays a unit one */
  for (int k = 0; k < N; k++) {
    state_view S0 = state_at(p, z, k), S1 = state_at(p, z, k + 1);
    control_view U = control_at(p, z, k);
    contact_geom G;
    contact_geometry(p, P->contact_at_start ? S0.q : S1.q, S1.v, zero, &G);
    double F[3], mF[3], tb[3];
    contact_force(p, &G, &U, F);
    for (int i = 0; i < 3; i++) mF[i] = -F[i];
    cross3(G.r_ball, mF, tb);
    double *s0 = z + (size_t)k * p->B, *s1 = s0 + p->B, hw[3], e[4];
    for (int i = 0; i < 3; i++) {
      s1[2 * n + i] = (s0[2 * n + i] + h / p->ball_inertia * tb[i]) / (1 + h / p->ball_inertia * P->ball_damping);
      hw[i] = h * s1[2 * n + i];
    }
    quat_exp(hw, e);
    quat_mul(e, s0 + 2 * n + 3, s1 + 2 * n + 3);
    /* gamma at least the fine slip speed along every friction direction (the rows D^T nu + gamma
       >= 0): the fine disk and ball velocities are not the coarse ones */
    step_geometry(p, &S0, &S1, &G);
    double *gamma = z + (size_t)k * p->B + p->ns + n + 1 + d;
    for (int j = 0; j < d; j++) *gamma = fmax(*gamma, -dot3(G.D + 3 * j, G.nu));
  }
  plan_mpcc_inverse_dynamics(p, z);   /* tau: the arm rows hold along these states and forces */
  return 0;
}

int plan_mpcc_coarse_guess(plan_mpcc *p, const plan_mpcc_params *coarse_prm, int offaxis, double *z,
                           plan_mpcc_stage *out, char *error, int error_size) {
  memset(out, 0, sizeof *out);
  plan_mpcc *c = plan_mpcc_create(coarse_prm, error, error_size);
  if (!c) return -1;
  double *zc = malloc(sizeof(double) * (size_t)c->nvar);
  if (!zc) {
    snprintf(error, error_size, "mpcc: out of memory (coarse plan of %d variables)", c->nvar);
    plan_mpcc_free(c);
    return -1;
  }
  plan_mpcc_rest_guess(c, zc);
  if (offaxis && plan_mpcc_offaxis_guess(c, zc, NULL) >= 0) plan_mpcc_inverse_dynamics(c, zc);
  int converged = plan_mpcc_solve(c, 1, zc, out) == 0;
  int rc = plan_mpcc_interpolate(p, z, c, zc, error, error_size);
  free(zc);
  plan_mpcc_free(c);
  return rc ? -1 : converged ? 0 : 1;
}

static double wall_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* The process's CPU time: the figure to compare on a shared machine (wall time grows with the load). */
static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* Where a relaxation's dual infeasibility sits (stderr, with prm.diagnose): the
 * gradient of the Lagrangian r = grad f + J^T lambda - z_L + z_U at IPOPT's
 * final primal-dual point (unscaled), its largest |r| per kind of variable and
 * the step where it occurs; the largest |lambda| per group of rows; and the
 * pairs whose both sides are below sqrt(eps) (biactive: Scholtes' multipliers
 * are not unique there). */
static void diagnose_dual(plan_mpcc *p, double eps, const double *x, const double *mult) {
  int nv = p->nvar, N = p->prm.N, R = p->nrow, C = p->B + p->ns, n = p->n, d = p->prm.d;
  int m = N * R;
  double *r = calloc((size_t)nv + (size_t)N * R * C, sizeof(double));
  if (!r) return;
  double *val = r + nv;
  plan_mpcc_objective(p, x, r);
  memcpy(p->zp, x, sizeof(double) * nv);
  for (int k = 0; k < N; k++) step_jacobian(p, p->zp, k, val + (size_t)k * R * C);
  for (int k = 0; k < N; k++)
    for (int i = 0; i < R; i++)
      for (int c = 0; c < C; c++) r[k * p->B + c] += val[((size_t)k * R + i) * C + c] * mult[k * R + i];
  for (int j = 0; j < nv; j++) r[j] += -mult[m + j] + mult[m + nv + j];
  static const char *kind_name[] = {"q", "v", "omega", "quat", "tau", "fz", "ft", "gamma", "zeta"};
  double worst[9] = {0};
  int at[9] = {0};
  for (int j = p->B; j < nv; j++) {  /* S_0 is fixed */
    int kind = column_kind(p, j % p->B);
    if (fabs(r[j]) > worst[kind]) { worst[kind] = fabs(r[j]); at[kind] = j / p->B; }
  }
  fprintf(stderr, "diagnose eps %.1e: |grad L| by variable (max, at knot):", eps);
  for (int i = 0; i < 9; i++) fprintf(stderr, " %s %.1e@%d", kind_name[i], worst[i], at[i]);
  /* multipliers by row group, in step_rows_with's order */
  const char *gname[] = {"arm", "kin", "ball", "quat", "gap", "gap.fz", "cone", "cone.gamma", "slip", "ft.slip", "margin"};
  int gsize[] = {p->dynamic ? n : 0, n, 3, 4, 1, 1, 1, 1, d, d, margin_rows(p)};
  int ngroups = p->prm.penalty > 0 ? 4 : 11;
  fprintf(stderr, "\ndiagnose eps %.1e: |lambda| by rows (max, at step):", eps);
  for (int g = 0, o = 0; g < ngroups; o += gsize[g], g++) {
    double w = 0;
    int wk = 0;
    for (int k = 0; k < N; k++)
      for (int i = 0; i < gsize[g]; i++)
        if (fabs(mult[k * R + o + i]) > w) { w = fabs(mult[k * R + o + i]); wk = k; }
    if (gsize[g]) fprintf(stderr, " %s %.1e@%d", gname[g], w, wk);
  }
  /* biactive pairs: both sides below sqrt(eps) */
  double small = sqrt(eps);
  int bi_gap = 0, bi_cone = 0, bi_slip = 0, touching = 0, face = 0, side = 0, rim = 0, kink = 0;
  double rd = p->prm.disk_radius, hz = p->prm.disk_half_thickness, near = 1e-4;
  for (int k = 0; k < N; k++) {
    state_view S0 = state_at(p, x, k), S1 = state_at(p, x, k + 1);
    control_view U = control_at(p, x, k);
    contact_geom G;
    step_geometry(p, &S0, &S1, &G);
    double cone = p->prm.mu * U.fz;
    for (int j = 0; j < d; j++) cone -= U.ft[j];
    touching += G.gap < small;
    if (G.gap < small) {  /* the closest feature of the disk, or within 0.1 mm of a switch between two */
      double dr = G.rho - rd, dz = fabs(G.wz) - hz;
      if (fabs(dr) < near || fabs(dz) < near) kink++;
      else if (dr < 0) face++;
      else if (dz < 0) side++;
      else rim++;
    }
    bi_gap += gap_row(p, &G) < small && U.fz < small;
    bi_cone += cone < small && U.gamma < small;
    for (int j = 0; j < d; j++) bi_slip += U.ft[j] < small && dot3(G.D + 3 * j, G.nu) + U.gamma < small;
  }
  fprintf(stderr, "\ndiagnose eps %.1e: steps touching %d of %d (on the disk's face %d, side %d, rim %d, within 0.1 mm "
          "of a switch between them %d); biactive pairs: gap %d, cone %d, slip %d (of %d)\n",
          eps, touching, N, face, side, rim, kink, bi_gap, bi_cone, bi_slip, N * d);
  free(r);
}

static int ipopt_solve(plan_mpcc *p, double eps, double tol, int max_iter, double max_seconds, int warm,
                       double *z, double *xl, double *xu, double *gl, double *gu, double *g,
                       double *mult, int *iterations, double *obj);

/* One IPOPT solve at relaxation eps from z (and the multipliers in mult when
 * warm, which it updates). Returns IPOPT's status; adds its iterations. */
static int solve_at_eps(plan_mpcc *p, double eps, double tol, int max_iter, double max_seconds, int warm,
                        double *z, double *xl, double *xu, double *gl, double *gu, double *g,
                        double *mult, int *iterations, double *obj) {
  double eps_saved = p->prm.eps;
  p->prm.eps = eps;
  row_bounds(p, gl, gu);
  p->prm.eps = eps_saved;
  int st = ipopt_solve(p, eps, tol, max_iter, max_seconds, warm, z, xl, xu, gl, gu, g, mult, iterations, obj);
  if (p->prm.diagnose) diagnose_dual(p, eps, z, mult);
  return st;
}

/* One IPOPT solve of the current stage within the bounds given; eps sets the
 * rows' tolerance. */
static int ipopt_solve(plan_mpcc *p, double eps, double tol, int max_iter, double max_seconds, int warm,
                       double *z, double *xl, double *xu, double *gl, double *gu, double *g,
                       double *mult, int *iterations, double *obj) {
  int nv = p->nvar, m = p->prm.N * p->nrow;
  int nele = p->prm.N * p->nrow * (p->B + p->ns);
  IpoptProblem ip = CreateIpoptProblem(nv, xl, xu, m, gl, gu, nele, p->exact_now ? (int)hessian_nnz(p) : 0, 0, cb_f, cb_g, cb_grad, cb_jac, cb_h);
  if (!ip) return Invalid_Problem_Definition;
  AddIpoptIntOption(ip, "print_level", p->prm.derivative_test ? 4 : 0);
  AddIpoptStrOption(ip, "sb", "yes");
  /* IPOPT reads ./ipopt.opt unless told otherwise: a stray file in the caller's directory would
     change the plan silently; only a file the caller names is read */
  const char *file = p->last_now && p->prm.ipopt_options_last ? p->prm.ipopt_options_last : p->prm.ipopt_options;
  AddIpoptStrOption(ip, "option_file_name", (char *)(file ? file : ""));
  AddIpoptStrOption(ip, "hessian_approximation", p->exact_now ? "exact" : "limited-memory");
  if (!p->exact_now && p->prm.lbfgs_memory > 0) AddIpoptIntOption(ip, "limited_memory_max_history", p->prm.lbfgs_memory);
  if (p->prm.derivative_test && !warm) {
    AddIpoptStrOption(ip, "derivative_test", "first-order");
    AddIpoptNumOption(ip, "derivative_test_perturbation", 1e-9);
    AddIpoptNumOption(ip, "derivative_test_tol", 1e-4);
  }
  AddIpoptNumOption(ip, "tol", tol);
  /* IPOPT's default constraint tolerance (1e-4, acceptable 1e-2) would pass a product a b of
     many times eps: hold the rows to a tenth of the relaxation (eps for "acceptable") */
  AddIpoptNumOption(ip, "constr_viol_tol", fmin(1e-4, 0.1 * eps));
  AddIpoptNumOption(ip, "acceptable_constr_viol_tol", fmin(1e-2, eps));
  if (p->prm.acceptable_tol > 0) AddIpoptNumOption(ip, "acceptable_tol", p->prm.acceptable_tol);
  if (p->prm.acceptable_iter > 0) AddIpoptIntOption(ip, "acceptable_iter", p->prm.acceptable_iter);
  AddIpoptIntOption(ip, "max_iter", max_iter);
  if (max_seconds > 0) AddIpoptNumOption(ip, "max_cpu_time", max_seconds);
  AddIpoptStrOption(ip, "mu_strategy", "adaptive");
  AddIpoptNumOption(ip, "nlp_upper_bound_inf", 1e19);
  AddIpoptNumOption(ip, "nlp_lower_bound_inf", -1e19);
  if (warm == 2) {
    /* a primal point only (the previous solve's in another formulation, whose multipliers do
       not carry over, or a guess near a solution: warm_primal), barely pushed off the bounds */
    AddIpoptNumOption(ip, "bound_push", 1e-9);
    AddIpoptNumOption(ip, "bound_frac", 1e-9);
    AddIpoptNumOption(ip, "slack_bound_push", 1e-9);
    AddIpoptNumOption(ip, "slack_bound_frac", 1e-9);
    AddIpoptNumOption(ip, "mu_init", 1e-6);
  } else if (warm) {
    /* the previous relaxation's primal-dual point, barely pushed off the bounds */
    AddIpoptStrOption(ip, "warm_start_init_point", "yes");
    AddIpoptNumOption(ip, "warm_start_bound_push", 1e-9);
    AddIpoptNumOption(ip, "warm_start_bound_frac", 1e-9);
    AddIpoptNumOption(ip, "warm_start_slack_bound_push", 1e-9);
    AddIpoptNumOption(ip, "warm_start_slack_bound_frac", 1e-9);
    AddIpoptNumOption(ip, "warm_start_mult_bound_push", 1e-9);
    AddIpoptNumOption(ip, "mu_init", 1e-6);
  }
  SetIntermediateCallback(ip, cb_progress);
  p->iterations = 0;
  enum ApplicationReturnStatus st = IpoptSolve(ip, z, g, obj, mult, mult + m, mult + m + nv, p);
  FreeIpoptProblem(ip);
  *iterations += p->iterations;
  return st;
}

/* Records one solve of the stage in out->relaxation. */
static void record_relaxation(plan_mpcc_stage *out, double eps, double penalty, int st, int iterations,
                              double solve_s, double eval_s) {
  if (out->homotopy_steps < PLAN_MPCC_MAX_RELAXATIONS) {
    plan_mpcc_relaxation *r = &out->relaxation[out->homotopy_steps];
    r->eps = eps;
    r->penalty = penalty;
    r->status = st;
    r->iterations = iterations;
    r->solve_s = solve_s;
    r->eval_s = eval_s;
  }
  out->homotopy_steps++;
}

/* The penalty row of step k (sum of the products - zeta_k) vanishes when zeta_k is the products' sum. */
static void zeta_from_products(plan_mpcc *p, double *z) {
  for (int k = 0; k < p->prm.N; k++) {
    double *zeta = z + (size_t)k * p->B + p->ns + p->n + p->prm.d + 2;
    *zeta = 0;
    step_rows(p, z, k, p->rp);
    *zeta = p->rp[p->nrow - 1];
  }
}

/* The largest violation of the rows' bounds (gl, gu, at eps) and the
 * variables' (xl, xu) at z; g is scratch. */
static double relaxed_violation(plan_mpcc *p, const double *z, const double *xl, const double *xu, double *gl,
                                double *gu, double *g) {
  int m = p->prm.N * p->nrow;
  row_bounds(p, gl, gu);
  for (int k = 0; k < p->prm.N; k++) step_rows(p, z, k, g + (size_t)k * p->nrow);
  double v = 0;
  for (int i = 0; i < m; i++) v = fmax(v, fmax(gl[i] - g[i], g[i] - gu[i]));
  for (int i = 0; i < p->nvar; i++) v = fmax(v, fmax(xl[i] - z[i], z[i] - xu[i]));
  return v;
}

static int solve_stage(plan_mpcc *p, int dynamic, double *z, plan_mpcc_stage *out) {
  memset(out, 0, sizeof *out);
  p->dynamic = dynamic;
  /* penalty_from: Scholtes' homotopy down to penalty_from, then the penalty form (from that
     primal point) for the final solve */
  double rho = p->prm.penalty, weight = p->prm.terminal_weight;
  int hybrid = rho > 0 && p->prm.penalty_from > 0;
  /* terminal_weight_final: the homotopy at terminal_weight, then one more solve at the task's eps
     with the final weight, from that primal-dual point */
  int reweigh = !hybrid && p->prm.terminal_weight_final > 0 && p->prm.terminal_weight_final != weight;
  if (hybrid) p->prm.penalty = 0;
  p->nrow = rows_per_step(p, dynamic);
  int nv = p->nvar, m = p->prm.N * p->nrow;
  double *xl = malloc(sizeof(double) * (2 * (size_t)nv + 3 * (size_t)m + (size_t)m + 2 * (size_t)nv));
  if (!xl) {
    p->prm.penalty = rho; /* the planner keeps the form it was given */
    out->status = Insufficient_Memory;
    return -1;
  }
  double *xu = xl + nv, *gl = xu + nv, *gu = gl + m, *g = gu + m, *mult = g + m;
  memset(mult, 0, sizeof(double) * ((size_t)m + 2 * (size_t)nv));
  var_bounds(p, xl, xu);
  for (int i = 0; i < nv; i++) z[i] = fmin(fmax(z[i], xl[i]), xu[i]);
  /* Scholtes homotopy: eps_start, eps_start * eps_factor, ... down to eps,
   * each solve warm-started from the previous one's primal-dual point; the
   * intermediate relaxations need only be roughly solved */
  const plan_mpcc_params *P = &p->prm;
  double eps_end = hybrid ? fmax(P->penalty_from, P->eps) : P->eps;
  double eps = P->eps_start > eps_end && !(P->penalty > 0) ? P->eps_start : eps_end;
  double factor = P->eps_factor > 0 && P->eps_factor < 1 ? P->eps_factor : 0.1;
  int max_iter = dynamic ? P->max_iter : P->max_iter_kinematic, used = 0, st = 0, warm = P->warm_primal ? 2 : 0;
  double t0 = cpu_now(), wall0 = wall_now(), obj = NAN;
  int polish_follows = P->polish && dynamic && !hybrid && !(P->penalty > 0) && !reweigh;
  p->eval_s = 0;
  for (;;) {
    int last = eps <= eps_end * (1 + 1e-12), final = last && !hybrid && !reweigh;
    double left = P->max_seconds > 0 ? P->max_seconds - (cpu_now() - t0) : 0;
    if (P->max_seconds > 0 && left <= 0) { st = Maximum_CpuTime_Exceeded; break; }
    int cap = max_iter - used;
    if (cap < 1) { st = Maximum_Iterations_Exceeded; break; }
    if (!final && P->max_iter_relaxed > 0 && cap > P->max_iter_relaxed) cap = P->max_iter_relaxed;
    /* the last relaxation's own cap only where the polish can take its point on */
    if (last && polish_follows && P->max_iter_last > 0 && cap > P->max_iter_last) cap = P->max_iter_last;
    if (P->verbose) fprintf(stderr, "%s stage: eps %.1e\n", dynamic ? "dynamic" : "kinematic", eps);
    /* 2: L-BFGS for the rough intermediate relaxations, the exact Hessian for the final one */
    p->exact_now = P->exact_hessian == 1 || (P->exact_hessian == 2 && last);
    p->last_now = last;
    int used_before = used;
    double t_relax = cpu_now(), eval_before = p->eval_s;
    st = solve_at_eps(p, eps, final ? P->tol : fmax(P->tol, 1e-6), cap, left, warm, z, xl, xu, gl, gu, g, mult,
                      &used, &obj);
    record_relaxation(out, eps, p->prm.penalty, st, used - used_before, cpu_now() - t_relax, p->eval_s - eval_before);
    warm = st == Solve_Succeeded || st == Solved_To_Acceptable_Level || st == Maximum_Iterations_Exceeded;
    if (last) break;
    eps = fmax(eps * factor, eps_end);
  }
  if (reweigh && warm) {
    p->prm.terminal_weight = P->terminal_weight_final;
    double left = P->max_seconds > 0 ? P->max_seconds - (cpu_now() - t0) : 0;
    int cap = max_iter - used;
    if (cap < 1) st = Maximum_Iterations_Exceeded;
    else if (P->max_seconds > 0 && left <= 0) st = Maximum_CpuTime_Exceeded;
    else {
      if (P->verbose) fprintf(stderr, "%s stage: eps %.1e, terminal weight %g\n", dynamic ? "dynamic" : "kinematic",
                              eps_end, P->terminal_weight);
      p->exact_now = P->exact_hessian != 0;
      int used_before = used;
      double t_relax = cpu_now(), eval_before = p->eval_s;
      st = solve_at_eps(p, eps_end, P->tol, cap, left, 1, z, xl, xu, gl, gu, g, mult, &used, &obj);
      record_relaxation(out, eps_end, p->prm.penalty, st, used - used_before, cpu_now() - t_relax, p->eval_s - eval_before);
    }
  }
  if (hybrid && warm) {
    p->prm.penalty = rho;
    p->nrow = rows_per_step(p, dynamic);
    m = p->prm.N * p->nrow;
    var_bounds(p, xl, xu);
    zeta_from_products(p, z);
    memset(mult, 0, sizeof(double) * ((size_t)m + 2 * (size_t)nv));
    double left = P->max_seconds > 0 ? P->max_seconds - (cpu_now() - t0) : 0;
    int cap = max_iter - used;
    if (cap < 1) st = Maximum_Iterations_Exceeded;
    else if (P->max_seconds > 0 && left <= 0) st = Maximum_CpuTime_Exceeded;
    else {
      if (P->verbose) fprintf(stderr, "%s stage: penalty %.1e\n", dynamic ? "dynamic" : "kinematic", rho);
      p->exact_now = P->exact_hessian != 0;
      int used_before = used;
      double t_relax = cpu_now(), eval_before = p->eval_s;
      st = solve_at_eps(p, P->eps, P->tol, cap, left, 2, z, xl, xu, gl, gu, g, mult, &used, &obj);
      record_relaxation(out, P->eps, rho, st, used - used_before, cpu_now() - t_relax, p->eval_s - eval_before);
    }
  }
  int scholtes = !hybrid && !(P->penalty > 0);
  /* stopped by the last relaxation's own cap, not by the stage's budget running out before it */
  out->relaxed_capped = polish_follows && st == Maximum_Iterations_Exceeded && P->max_iter_last > 0 &&
                        out->homotopy_steps >= 1 && out->homotopy_steps <= PLAN_MPCC_MAX_RELAXATIONS &&
                        out->relaxation[out->homotopy_steps - 1].eps <= eps_end * (1 + 1e-12) &&
                        out->relaxation[out->homotopy_steps - 1].iterations >= P->max_iter_last;
  out->relaxed_violation = relaxed_violation(p, z, xl, xu, gl, gu, g);
  int converged = st == Solve_Succeeded || st == Solved_To_Acceptable_Level;
  if (P->polish && dynamic) {   /* the tightened NLP from the last relaxation's primal-dual point */
    /* a last relaxation stopped by its own cap where the crawl sits (docs/planning.md, session 16)
       is as good a start when its point is feasible: the polish's answer is judged on its own */
    int capped_feasible = out->relaxed_capped && out->relaxed_violation <= CAPPED_FEASIBLE;
    if ((converged || capped_feasible) && scholtes) {
      plan_mpcc_polish(p, z, mult, &out->polish);
      used += out->polish.iterations;
    } else {
      out->polish.status = PLAN_MPCC_POLISH_SKIPPED;
    }
  }
  int polished_capped = out->relaxed_capped && out->polish.status == PLAN_MPCC_POLISH_ACCEPTED;
  out->solve_s = cpu_now() - t0;
  out->wall_s = wall_now() - wall0;
  out->eval_s = p->eval_s;
  row_bounds(p, gl, gu);
  out->status = st;
  out->iterations = used;
  /* the plan's: the polished one's when the polish replaced the relaxed plan */
  out->objective = out->polish.status == PLAN_MPCC_POLISH_ACCEPTED ? out->polish.objective_after : obj;
  out->quaternion_error = plan_mpcc_quaternion_error(p, z);
  out->complementarity = plan_mpcc_complementarity_measures(p, z, &out->complementarity_product);
  double viol = 0;
  for (int k = 0; k < p->prm.N; k++) step_rows(p, z, k, g + (size_t)k * p->nrow);
  for (int i = 0; i < m; i++) viol = fmax(viol, fmax(gl[i] - g[i], g[i] - gu[i]));
  for (int i = 0; i < nv; i++) viol = fmax(viol, fmax(xl[i] - z[i], z[i] - xu[i]));
  out->constraint_violation = viol;
  free(xl);
  p->prm.penalty = rho;
  p->prm.terminal_weight = weight;
  return converged || polished_capped ? 0 : -1;
}

/* PLAN_MARGIN_LAZY: a step is marked when the plan pushes there with more than this fraction of its
   largest normal force, from beyond the margin; and at most this many solves follow the first */
#define LAZY_FORCE_FRACTION 1e-3
#define LAZY_MAX_RESOLVES 3

int plan_mpcc_margin_mark(plan_mpcc *p, const double *z) {
  int N = p->prm.N, added = 0;
  double largest = 0;
  for (int k = 0; k < N; k++) largest = fmax(largest, control_at(p, z, k).fz);
  if (!(largest > 0)) return 0;
  p->margin_probe = 1;
  for (int k = 0; k < N; k++) {
    if (p->margin_mask[k] || !(control_at(p, z, k).fz > LAZY_FORCE_FRACTION * largest)) continue;
    state_view S0 = state_at(p, z, k), S1 = state_at(p, z, k + 1);
    contact_geom G;
    step_geometry(p, &S0, &S1, &G);
    /* the row's own margin (start_margin), so that a marked step's row is violated by the plan */
    if (G.gap > start_margin(p, &G)) {
      p->margin_mask[k] = 1;
      added++;
    }
  }
  p->margin_probe = 0;
  return added;
}

const unsigned char *plan_mpcc_margin_mask(const plan_mpcc *p) { return p->margin_mask; }

/* The stage (solve_stage), and with PLAN_MARGIN_LAZY in the dynamic stage, while its plan pushes from
   beyond the margin on unmarked steps: those steps' rows bounded and the stage solved again, from the
   point it started from (its homotopy and polish as the first time). From the plan instead, its last
   relaxation (a primal warm start) or the whole homotopy did not converge on z warm within the CPU
   cap: the plan sits in the corner the new row cuts off (docs/planning.md, session 21). */
int plan_mpcc_solve(plan_mpcc *p, int dynamic, double *z, plan_mpcc_stage *out) {
  if (!dynamic || !p->prm.contact_at_start || p->prm.margin_rows != PLAN_MARGIN_LAZY) return solve_stage(p, dynamic, z, out);
  double *z0 = malloc(sizeof(double) * (size_t)p->nvar);
  if (!z0) {
    memset(out, 0, sizeof *out);
    out->status = Insufficient_Memory;
    return -1;
  }
  memcpy(z0, z, sizeof(double) * (size_t)p->nvar);
  int rc = solve_stage(p, dynamic, z, out);
  for (int round = 0; round < LAZY_MAX_RESOLVES; round++) {
    int added = plan_mpcc_margin_mark(p, z);
    if (!added) break;
    if (!p->margin_active) {
      p->margin_active = 1;   /* the rows (free on unmarked steps) and their Hessian pairs from now on */
      if (hessian_patterns(p)) { out->status = Insufficient_Memory; rc = -1; break; }
    }
    plan_mpcc_stage before = *out;
    memcpy(z, z0, sizeof(double) * (size_t)p->nvar);
    rc = solve_stage(p, 1, z, out);
    out->iterations += before.iterations;
    out->solve_s += before.solve_s;
    out->wall_s += before.wall_s;
    out->eval_s += before.eval_s;
    out->margin_steps_added = before.margin_steps_added + added;
    out->margin_resolves = before.margin_resolves + 1;
  }
  free(z0);
  return rc;
}

void plan_mpcc_set_start(plan_mpcc *p, double eps_start, int warm_primal) {
  p->prm.eps_start = eps_start;
  p->prm.warm_primal = warm_primal;
}

/* ---- the NLP as the complementarity polish sees it (mpcc_polish.h) ---- */
const plan_mpcc_params *plan_mpcc_params_of(const plan_mpcc *p) { return &p->prm; }

void plan_mpcc_nlp_bounds(plan_mpcc *p, int dynamic, double *xl, double *xu, double *gl, double *gu) {
  p->dynamic = dynamic;
  p->nrow = rows_per_step(p, dynamic);
  var_bounds(p, xl, xu);
  row_bounds(p, gl, gu);
}

void plan_mpcc_nlp_rows(plan_mpcc *p, const double *z, double *g) {
  for (int k = 0; k < p->prm.N; k++) step_rows(p, z, k, g + (size_t)k * p->nrow);
}

int plan_mpcc_complementarity_pairs(const plan_mpcc *p, int *row_side, int *row_product, int *var_side) {
  if (p->prm.penalty > 0) return -1;
  int n = p->n, d = p->prm.d, R = p->nrow, o = (p->dynamic ? n : 0) + n + 3 + 4, e = 0;
  for (int k = 0; k < p->prm.N; k++) {
    int r0 = k * R + o, u0 = k * p->B + p->ns;
    for (int j = 0; j < 2 + d; j++, e++) {
      if (j == 0) { row_side[e] = r0; row_product[e] = r0 + 1; var_side[e] = u0 + n; }              /* gap, fz */
      else if (j == 1) { row_side[e] = r0 + 2; row_product[e] = r0 + 3; var_side[e] = u0 + n + 1 + d; }  /* cone, gamma */
      else { row_side[e] = r0 + 4 + (j - 2); row_product[e] = r0 + 4 + d + (j - 2); var_side[e] = u0 + n + 1 + (j - 2); }  /* slip, ft */
    }
  }
  return e;
}

void plan_mpcc_slip_direction(const plan_mpcc *p, int j, double c[2]) {
  double th = 2 * M_PI * j / p->prm.d;
  c[0] = cos(th);
  c[1] = sin(th);
}

int plan_mpcc_lagrangian_gradient(plan_mpcc *p, const double *z, const double *lambda, double *r) {
  int R = p->nrow, C = p->B + p->ns;
  double *val = malloc(sizeof(double) * (size_t)R * C);
  if (!val) return -1;
  plan_mpcc_objective(p, z, r);
  memcpy(p->zp, z, sizeof(double) * p->nvar);
  for (int k = 0; k < p->prm.N; k++) {
    step_jacobian(p, p->zp, k, val);
    for (int i = 0; i < R; i++)
      for (int c = 0; c < C; c++) r[(size_t)k * p->B + c] += val[(size_t)i * C + c] * lambda[(size_t)k * R + i];
  }
  free(val);
  return 0;
}

int plan_mpcc_nlp_solve(plan_mpcc *p, const double *xl, const double *xu, const double *gl, const double *gu,
                        int max_iter, double *z, double *mult, int *iterations, double *obj) {
  int m = p->prm.N * p->nrow;
  double *b = malloc(sizeof(double) * (2 * (size_t)p->nvar + 3 * (size_t)m));
  if (!b) return Insufficient_Memory;
  double *xl_c = b, *xu_c = xl_c + p->nvar, *gl_c = xu_c + p->nvar, *gu_c = gl_c + m, *g = gu_c + m;
  memcpy(xl_c, xl, sizeof(double) * p->nvar);
  memcpy(xu_c, xu, sizeof(double) * p->nvar);
  memcpy(gl_c, gl, sizeof(double) * m);
  memcpy(gu_c, gu, sizeof(double) * m);
  /* near a solution, where the exact Hessian pays (docs/planning.md, session 13); the limited-memory
     Hessian when the homotopy never used the exact one (exact_hessian 0: limited memory throughout) */
  p->exact_now = p->prm.exact_hessian != 0;
  int st = ipopt_solve(p, p->prm.eps, p->prm.tol, max_iter, p->prm.max_seconds, 1, z, xl_c, xu_c, gl_c, gu_c, g,
                       mult, iterations, obj);
  free(b);
  return st;
}

double plan_mpcc_quaternion_error(const plan_mpcc *p, const double *z) {
  state_view S = state_at(p, z, p->prm.N);
  double qt = 0;
  for (int i = 0; i < 4; i++) qt += S.quat[i] * p->target[i];
  return 1 - qt * qt;
}

void plan_mpcc_contact(plan_mpcc *p, const double *z, int k, double *gap, double *fz, double normal[3]) {
  state_view S1 = state_at(p, z, k + 1);
  contact_geom G;
  contact_geometry(p, S1.q, S1.v, S1.om, &G);
  *gap = G.gap;
  if (normal) memcpy(normal, G.n, sizeof G.n);
  *fz = control_at(p, z, k).fz;
}

int plan_mpcc_step_rows(plan_mpcc *p, const double *z, int k, int dynamic, double *r) {
  p->dynamic = dynamic;
  p->nrow = rows_per_step(p, dynamic);
  step_rows(p, z, k, r);
  return p->nrow;
}

int plan_mpcc_hessian(plan_mpcc *p, const double *z, const double *lambda, double sigma, int dynamic, double *H) {
  p->dynamic = dynamic;
  p->nrow = rows_per_step(p, dynamic);
  return hessian_matrix(p, z, lambda, sigma, H);
}

int plan_mpcc_step_jacobian_block(plan_mpcc *p, const double *z, int k, int dynamic, double *val) {
  p->dynamic = dynamic;
  p->nrow = rows_per_step(p, dynamic);
  memcpy(p->zp, z, sizeof(double) * p->nvar);
  step_jacobian(p, p->zp, k, val);
  return p->B + p->ns;
}

void plan_mpcc_disk_pose(plan_mpcc *p, const double *q, double pos[3], double R[9]) {
  double zero[64] = {0};
  int last = p->model->nseg - 1;
  sb_pose g;
  sb_kinematics(p->model, p->work, q, zero);
  sb_point_kinematics(p->model, p->work, last, p->model->seg[last].p.length, &g, NULL, NULL, NULL);
  memcpy(pos, g.p, sizeof g.p);
  memcpy(R, g.R, sizeof g.R);
}

double plan_mpcc_complementarity(plan_mpcc *p, const double *z) {
  return plan_mpcc_complementarity_measures(p, z, NULL);
}

double plan_mpcc_complementarity_measures(plan_mpcc *p, const double *z, double *max_product) {
  double worst = 0, prod = 0;
  for (int k = 0; k < p->prm.N; k++) {
    state_view S0 = state_at(p, z, k), S1 = state_at(p, z, k + 1);
    control_view U = control_at(p, z, k);
    contact_geom G;
    step_geometry(p, &S0, &S1, &G);
    double cone = p->prm.mu * U.fz, phi = gap_row(p, &G);
    for (int j = 0; j < p->prm.d; j++) cone -= U.ft[j];
    worst = fmax(worst, fabs(fmin(phi, U.fz)));
    worst = fmax(worst, fabs(fmin(cone, U.gamma)));
    prod = fmax(prod, fmax(phi * U.fz, cone * U.gamma));
    for (int j = 0; j < p->prm.d; j++) {
      double s = dot3(G.D + 3 * j, G.nu) + U.gamma;
      worst = fmax(worst, fabs(fmin(U.ft[j], s)));
      prod = fmax(prod, U.ft[j] * s);
    }
  }
  if (max_product) *max_product = prod;
  return worst;
}

double plan_mpcc_step_residual(plan_mpcc *p, const double *z) {
  int n = p->n;
  sb_state *st = sb_state_create(p->model);
  if (!st) return INFINITY;
  double worst = 0, *impulse = p->tmp;
  char err[160];
  for (int k = 0; k < p->prm.N; k++) {
    state_view S0 = state_at(p, z, k), S1 = state_at(p, z, k + 1);
    control_view U = control_at(p, z, k);
    contact_geom G;
    step_geometry(p, &S0, &S1, &G);
    double F[3], mo[3];
    contact_force(p, &G, &U, F);
    for (int i = 0; i < 3; i++) F[i] *= p->h;  /* impulse */
    cross3(G.r_disk, F, mo);
    memcpy(st->q, S0.q, sizeof(double) * n);
    memcpy(st->v, S0.v, sizeof(double) * n);
    if (sb_step_prepare(p->model, st, p->work, U.tau, p->h, err, sizeof err)) { worst = INFINITY; break; }
    memset(impulse, 0, sizeof(double) * n);
    int last = p->model->nseg - 1;
    sb_add_world_wrench(p->model, p->work, last, p->model->seg[last].p.length, F, mo, impulse);
    if (sb_step_commit(p->model, st, p->work, impulse, err, sizeof err)) { worst = INFINITY; break; }
    for (int i = 0; i < n; i++)
      worst = fmax(worst, fmax(fabs(st->v[i] - S1.v[i]), fabs(st->q[i] - S1.q[i])));
  }
  sb_state_free(st);
  return worst;
}

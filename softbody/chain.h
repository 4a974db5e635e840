/* A soft (or mixed soft/rigid) serial chain fixed at a base frame.
 *
 * The chain is a list of segments; each one owns a contiguous block of the
 * generalized coordinates q:
 *   PCS  Cosserat piece with constant strain xi = xi* + Phi q over its
 *        length; q = the selected strain components (mask), in twist order.
 *   PLS  piecewise linear strain (paper 003): `elements` elements, q = the
 *        selected strain components at the elements+1 nodes (hat functions),
 *        poses integrated between quadrature nodes with a 4th-order Magnus step.
 *   PCC  constant-curvature section in actuator space: q = the elongations
 *        of three chambers (m, 0 at rest), a linear map to (kx, ky, ez).
 *   REVOLUTE / PRISMATIC / FIXED  a rigid joint (q = angle or offset) that
 *        carries a rigid link.
 * Strains are in the body frame of the rod cross-section, local z along the
 * rod; xi* = [0 0 0 0 0 1] is the straight, unstretched rod.
 *
 * Internally the chain is flattened into nodes: each node is a frame reached
 * from its parent by g = G exp(Om(q)) and carries a spatial inertia (a
 * quadrature slice, a lumped disk, a rigid link, or nothing). Dynamics are
 * recursive over nodes, so their cost is linear in the number of nodes. */
#ifndef SB_CHAIN_H
#define SB_CHAIN_H

#include "se3.h"

typedef enum {
  SB_SEG_PCS,
  SB_SEG_PLS,
  SB_SEG_PCC,
  SB_SEG_REVOLUTE,
  SB_SEG_PRISMATIC,
  SB_SEG_FIXED
} sb_segment_type;

/* Strain component bits, in twist order [kx ky kz ex ey ez]. */
enum {
  SB_KX = 1, SB_KY = 2, SB_KZ = 4, SB_EX = 8, SB_EY = 16, SB_EZ = 32,
  SB_STRAIN_BENDING = SB_KX | SB_KY,
  SB_STRAIN_ALL = 63
};

/* Parameters of one segment. Start from sb_segment_default(type). SI units. */
typedef struct {
  sb_segment_type type;
  sb_pose placement;   /* start frame relative to the previous segment's end (identity) */
  /* soft segments (PCS, PLS, PCC) */
  double length;       /* rest length, m */
  double radius;       /* cross-section radius for inertia and material stiffness, m */
  double mass;         /* kg; if > 0 overrides density (line density = mass/length) */
  double density;      /* kg/m^3, used when mass == 0 */
  int slices;          /* Gauss quadrature nodes per piece (PCS, PCC) or per element (PLS) */
  /* Cosserat material (PCS, PLS) */
  int strains;         /* SB_K?/SB_E? mask of the strains that are coordinates */
  int elements;        /* PLS: number of elements */
  double young;        /* E, Pa */
  double shear;        /* G, Pa; 0 means E/3 (incompressible) */
  double viscosity;    /* Kelvin-Voigt eta, Pa*s: damping = eta * diag(I, I, J, A, A, A) */
  /* PCC in actuator space */
  double chamber_radius;    /* distance of the chambers from the axis, m */
  double chamber_angle;     /* angle of chamber 1 about z, rad; the others at +120, +240 deg */
  double chamber_stiffness; /* K per chamber, N/m */
  double chamber_damping;   /* B per chamber, N*s/m */
  /* rigid joints */
  double axis[3];           /* joint axis in the joint frame (normalized on build) */
  double joint_stiffness;   /* N*m/rad or N/m about q = 0 */
  double joint_damping;
  double link_mass;         /* rigid link attached to the joint frame, kg */
  double link_com[3];       /* its centre of mass in the joint frame, m */
  double link_inertia[6];   /* about the com, joint-frame axes: xx yy zz xy xz yz, kg*m^2 */
} sb_segment_params;

/* A lumped rigid disk (solid cylinder, axis = local z) on a soft segment. */
typedef struct {
  int segment;
  double s;          /* arc length from the segment start, m */
  double mass;       /* kg */
  double radius;     /* m */
  double thickness;  /* m */
} sb_disk_params;

typedef struct {
  int nseg;
  const sb_segment_params *seg;
  int ndisk;
  const sb_disk_params *disk;
  sb_pose base;        /* world pose of the base frame */
  double gravity[3];   /* world, m/s^2 */
} sb_chain_params;

/* Defaults for a segment type (documented in chain.c). */
sb_segment_params sb_segment_default(sb_segment_type type);

typedef struct {
  int seg, unit;
  double s0, s1;       /* arc-length interval of the step that reaches this node */
  int element;         /* PLS element of the step, else -1 */
  sb_pose G;           /* constant transform applied before exp(Om) */
  int G_identity;      /* G is exactly the identity */
  int col0, ncol;      /* global columns the step depends on */
  int soff;            /* offset of this node's 6 x ncol blocks in the work arrays */
  double inertia[36];  /* spatial inertia in the node frame */
  double mass, com[3];
} sb_node;

/* A run of consecutive nodes that depend on the same columns. */
typedef struct {
  int node0, node1;    /* inclusive */
  int col0, ncol;
  int cend;            /* columns past this one are zero in the Jacobians of this and earlier units */
} sb_unit;

typedef struct {
  sb_segment_params p; /* validated copy (axis normalized, defaults resolved) */
  int col0, ncol;
  int node0, nnode;
  int ncomp;           /* PCS/PLS: number of strain components in the basis */
  int comp[6];         /* their twist indices */
  double Phi[6 * 6];   /* PCS/PCC: constant 6 x ncol basis; PLS: the 6 x ncomp B */
  double line_inertia[6]; /* spatial inertia per unit rest length, diagonal */
} sb_segment;

typedef struct {
  int n;               /* generalized coordinates */
  int nseg, nnode, nunit;
  sb_segment *seg;
  sb_node *node;
  sb_unit *unit;
  double *K, *D;       /* n x n stiffness and damping, constant */
  int *kd_lo, *kd_hi;  /* row i of K and D is zero outside columns [kd_lo[i], kd_hi[i]) */
  sb_pose base;
  /* Motion of the base frame, per-step inputs (0 after create; set with
   * sb_set_base_motion*): base_twist = [w; v] of the base in its own axes
   * (the node twists' convention), base_acc = its time derivative in those
   * axes = [alpha; a - w x v] with alpha, a the angular and classical linear
   * acceleration of the base origin, base axes. They enter the kinematics
   * (node twists are absolute) and the bias c(q, v) (d'Alembert forces), so
   * a step on a moving mount needs nothing else; Jacobians and M stay
   * relative to the base. */
  double base_twist[6], base_acc[6];
  double gravity[3];
  double total_mass;
  int maxcol;          /* widest unit */
  int stotal;          /* total size of the per-node 6 x ncol blocks */
} sb_model;

typedef struct {
  double t;
  double *q, *v;       /* n each */
} sb_state;

/* Preallocated workspace: everything the step loop touches. */
typedef struct {
  int n;
  double *q, *v;                  /* copy of the kinematics input */
  sb_pose *g;                     /* node world poses */
  double *X;                      /* 36 per node: Ad of parent->node */
  double *S, *Jpart;              /* per node 6 x ncol: motion subspace, unit-local Jacobian */
  double *eta, *nu;               /* 6 per node: twist, twist of the step (S v) */
  double *bterm, *vp;             /* 6 per node: local and accumulated velocity-product accel */
  double *acc, *F, *Ic, *P;       /* RNEA and CRBA scratch */
  double *Xu, *Jend;              /* per unit: 36, and 6 x n full Jacobian at its last node */
  double *M, *c, *Mt, *L;         /* n x n mass, bias, M~ and its factor F, M~ = F F^T
                                   * (column-major, sb_step_prepare): upper triangular U when
                                   * factor_upper, else the lower Cholesky factor */
  int factor_upper;               /* n >= SB_STEP_UPPER_MIN: L holds U (sb_step_half_solve) */
  double *Mt_add;                 /* n x n: implicit force terms the next sb_step_prepare adds to M~ */
  int has_Mt_add;                 /* Mt_add holds terms for the next prepare (which consumes them) */
  double *J3n;                    /* n x 3 scratch: a point Jacobian's transpose (penalty.h) */
  double *vstar, *rhs, *tmp, *tmp2;
  double *J6n;                    /* 6 x n scratch for point Jacobians */
  /* the last Jacobian query's answer (sb_point_kinematics), until the next kinematics pass */
  int last_valid, last_seg, last_has_dJv;
  int last_cols;                  /* its sb_point_columns */
  int last_full;                  /* last_J holds all n columns (zero past last_cols), not only those */
  int last_parts;                 /* last_J holds sb_point_jacobian_parts' own columns */
  int last_c0;                    /* with last_parts: the previous unit's cend (0 in the first unit) */
  int last_l0;                    /* with last_parts: Jloc's first column */
  double last_s;
  sb_pose last_g;
  double *last_J, last_eta[6], last_dJv[6];
  double *qacc;                   /* n: (v+ - v)/h of the last committed step */
  double base_wrench[6];          /* sb_base_wrench at qacc, set by sb_step_commit when asked: */
  int want_base_wrench;           /* 1: commit records base_wrench (one more Newton-Euler pass) */
  double h;
  int kin_valid, vel_valid, jend_valid, step_ready;
  sb_pose kin_base;               /* base pose and twist the kinematics were computed at */
  double kin_base_twist[6];
} sb_work;

/* Builds a model; returns NULL and writes a message naming the bad parameter. */
sb_model *sb_model_create(const sb_chain_params *params, char *error, int error_size);
void sb_model_free(sb_model *m);

/* State at rest (q = 0, v = 0, t = 0). */
sb_state *sb_state_create(const sb_model *m);
void sb_state_reset(const sb_model *m, sb_state *s);
void sb_state_free(sb_state *s);

sb_work *sb_work_create(const sb_model *m);
void sb_work_free(sb_work *w);

/* Base motion (see sb_model). twist, acc: base axes as documented there;
 * NULL means zero. Set the pose (m->base) first, then this, then step. */
void sb_set_base_motion(sb_model *m, const double twist[6], const double acc[6]);
/* The same from world-axes quantities of the base origin: angular velocity
 * omega, linear velocity vel, angular acceleration alpha and classical linear
 * acceleration accel (e.g. MuJoCo's mj_objectVelocity/mj_objectAcceleration
 * with flg_local = 0, as [rot; lin]). Uses m->base.R: set the pose first.
 * Any argument may be NULL (zero). */
void sb_set_base_motion_world(sb_model *m, const double omega[3], const double vel[3],
                              const double alpha[3], const double accel[3]);

/* Forward pass: node poses, Jacobian blocks, twists and velocity-product
 * terms. Twists are absolute: they start from m->base_twist. v == NULL means
 * q' = 0 (twists then come from the base motion alone, velocity products are
 * 0). Every query below reads the last call's result. */
void sb_kinematics(const sb_model *m, sb_work *w, const double *q, const double *v);

/* Pose, body Jacobian (6 x n, twist of the frame in its own coordinates),
 * twist, and velocity-product term dJ/dt*v at arc length s of a segment
 * (rigid segments: their joint frame). Any output may be NULL.
 * J is relative to the base (d twist / d v); eta is the absolute twist,
 *   eta = Ad(g^-1 base) base_twist + J v,
 * and the frame's acceleration (d/dt eta, own axes) is
 *   Ad(g^-1 base) base_acc + J a + dJv,
 * dJv including the velocity products of the base twist with v.
 * Returns 0, or -1 for a bad segment or s outside [0, length]. */
int sb_point_kinematics(const sb_model *m, sb_work *w, int seg, double s, sb_pose *g,
                        double *J, double eta[6], double dJv[6]);

/* Columns past the returned count are exactly zero in the point Jacobian of
 * sb_point_kinematics(m, w, seg, s): a point depends on the coordinates
 * proximal to it only (the chain's triangular structure). n for a bad
 * segment or s (no structure claimed). */
int sb_point_columns(const sb_model *m, int seg, double s);

/* sb_point_kinematics's pose and J, J in its first sb_point_columns(m, seg,
 * s) columns only (their count in *ncol): its rows (leading dimension n)
 * past them, where the full Jacobian is exactly zero, are not touched. For
 * callers that read no further (a contact's rows); skips clearing and
 * copying the zeros. */
int sb_point_kinematics_head(const sb_model *m, sb_work *w, int seg, double s, sb_pose *g, double *J,
                             int *ncol);
/* sb_point_kinematics_head's answer without a copy: *J points at the
 * work's kept Jacobian (6 rows, leading dimension n, the first *ncol
 * columns this point's), valid until the next point query or kinematics
 * pass. A disk's contact points repeat one query: each repeat reads the
 * same doubles where sb_point_kinematics_head copies them. */
int sb_point_kinematics_view(const sb_model *m, sb_work *w, int seg, double s, sb_pose *g, const double **J,
                             int *ncol);

/* The point Jacobian of sb_point_kinematics in two parts, not multiplied
 * out: over columns j < c0 (the previous unit's columns) J = Ad(g^-1 gend)
 * Jend, gend the previous unit's end pose and Jend that end's Jacobian (6
 * rows, leading dimension n): the proximal coordinates move the point with
 * that end, rigidly; plus over l0 <= j < ncol Jloc (6 rows, leading
 * dimension n, its columns before l0 not meaningful), l0 <= c0 (a unit whose
 * nodes share columns with the previous unit has both parts there). gend
 * and Jend are NULL when c0 = 0 (a point of the first unit; l0 = 0). A
 * contact row of the point is then, over the proximal columns, the same
 * direction's row of the end frame at the point's position there: 6
 * multiplications a column a row, and no 6 x 6 product over those columns at
 * a fresh point. Valid until the next point query or kinematics pass; a
 * repeat of the same point is a lookup. */
typedef struct {
  int c0, l0, ncol;
  const sb_pose *gend;
  const double *Jend, *Jloc;
} sb_point_parts;
int sb_point_jacobian_parts(const sb_model *m, sb_work *w, int seg, double s, sb_pose *g, sb_point_parts *pp);

/* Full 6 x n body Jacobian of node k. */
void sb_node_jacobian(const sb_model *m, sb_work *w, int k, double *J);

/* Mass matrix by composite inertias over nodes (n x n). */
void sb_mass_matrix(const sb_model *m, sb_work *w, double *M);
/* Bias c(q, v): Coriolis, centrifugal, gravity and the inertial forces of
 * the base motion (base_acc and base_twist), with v from the kinematics. */
void sb_bias(const sb_model *m, sb_work *w, double *c);
/* Inverse dynamics: tau = M a + c + K q + D v. */
void sb_inverse_dynamics(const sb_model *m, sb_work *w, const double *a, double *tau);
/* Forward dynamics: a = M^-1 (tau - c - K q - D v). Returns 0 or -1 (M not SPD). */
int sb_forward_dynamics(const sb_model *m, sb_work *w, const double *tau, double *a);

/* Energies at the last kinematics: kinetic (of the absolute twists, so it
 * includes the base motion), gravitational, elastic. */
void sb_energy(const sb_model *m, sb_work *w, double *kinetic, double *gravity, double *elastic);

/* Load of the chain on its base: the wrench the chain exerts on the base
 * frame (minus the wrench the base supplies to it), for accelerations a
 * (NULL = 0) at the last kinematics (q, v) and the current base motion.
 * wrench_world = [moment; force] (the twists' order), world axes, moment
 * about the base origin m->base.p. It is the Newton-Euler balance of the
 * whole chain: gravity + base-motion inertia + d/dt of the chain's momentum.
 * Every other external load on the chain (contact impulses, penalty forces,
 * sb_add_world_wrench loads) enters only through a, so it is attributed to
 * the base as well: when those loads act, add their world wrench about the
 * base origin (sb_contact_body_wrench / h for contact impulses) to get the
 * base's share alone. At rest under gravity it is (m_tot r_com x g; m_tot g).
 * Returns 0, or -1 without a kinematics pass. */
int sb_base_wrench(const sb_model *m, sb_work *w, const double *a, double wrench_world[6]);

/* The chain's inertia coupled to its base, from the last sb_mass_matrix
 * (sb_step_prepare calls it) at the current kinematics: with a
 * base acceleration a_b (base axes, as base_acc) the bias grows by B a_b
 * (B: n x 6 row-major) and the wrench the base supplies by Mbb a_b + B^T a
 * (Mbb: 6 x 6, the whole chain's spatial inertia at the base frame). So
 * [Mbb B^T; B M] is the mass matrix of the chain on a free base, and
 * Mbb - B^T Mt^-1 B the chain's effective inertia at its base within an
 * implicit step (what a mount coupled implicitly must carry). */
void sb_base_inertia(const sb_model *m, sb_work *w, double *B, double Mbb[36]);

/* Adds J^T wrench to Q for a force f and moment mo, both in world axes,
 * applied at the frame origin of (seg, s). Returns 0 or -1 as above. */
int sb_add_world_wrench(const sb_model *m, sb_work *w, int seg, double s, const double f[3],
                        const double mo[3], double *Q);

/* Linearly implicit Euler (elastic and viscous terms implicit):
 *   M~ = M + h D + h^2 K  (+ w->Mt_add when w->has_Mt_add: implicit external
 *                          force terms such as penalty contacts, penalty.h)
 *   M~ (v* - v) = h (tau - c(q,v) - K (q + h v) - D v)
 *   M~ (v+ - v*) = p        (p: generalized contact impulse, J^T lambda)
 *   q+ = q + h v+
 * prepare computes M~ (factored) and v*; solve_mt applies M~^-1 for the
 * contact code; commit advances the state, and stores a = (v+ - v)/h in
 * w->qacc and, if w->want_base_wrench, sb_base_wrench(a) at the step's
 * start (q, v) in w->base_wrench (mounts that move need it, fixed ones not). Errors leave the state unchanged. Base motion: set it
 * (sb_set_base_motion*) before prepare; c(q, v) then carries it. */
int sb_step_prepare(const sb_model *m, const sb_state *s, sb_work *w, const double *tau, double h,
                    char *error, int error_size);
void sb_step_solve_mt(const sb_model *m, sb_work *w, const double *rhs, double *x);
/* x <- M~^-1 x for ncol columns of leading dimension ld (n rows). */
void sb_step_solve_mt_many(const sb_model *m, const sb_work *w, double *x, int ncol, int ld);
/* x <- F^-1 x (M~ = F F^T, w->L) for ncol columns of leading dimension ld.
 * With w->factor_upper F = U is upper triangular and the columns may be
 * zero past their first head rows: only those rows are read and written
 * (the rest stay zero in U^-1 x), at head^2 per column. Otherwise, and for
 * any columns, head = n. */
void sb_step_half_solve(const sb_model *m, const sb_work *w, int head, double *x, int ncol, int ld);
/* From this many coordinates on sb_step_prepare factors M~ = U U^T (U upper
 * triangular), below it M~ = L L^T: there the contact code's gathers cost
 * more than the rows U lets it skip (docs/contact_scaling.md, session 16). */
#define SB_STEP_UPPER_MIN 64
int sb_step_commit(const sb_model *m, sb_state *s, sb_work *w, const double *impulse, char *error,
                   int error_size);

/* Contact hook: fill the generalized impulse p (n, zeroed) from w->vstar
 * and M~ (via sb_step_solve_mt). Return 0, or nonzero to abort the step. */
typedef int (*sb_impulse_fn)(void *user, const sb_model *m, const sb_state *s, sb_work *w,
                             double *p);
int sb_step(const sb_model *m, sb_state *s, sb_work *w, const double *tau, double h,
            sb_impulse_fn hook, void *user, char *error, int error_size);

/* A dead load: world force/moment at (seg, s). */
typedef struct {
  int seg;
  double s;
  double force[3], moment[3];
} sb_point_load;

/* Static equilibrium c(q,0) + K q = tau + sum J^T loads by damped Newton from
 * q (in/out). Returns 0 when |residual|inf <= tol, -1 otherwise. */
int sb_static_solve(const sb_model *m, sb_work *w, const double *tau, const sb_point_load *loads,
                    int nload, double *q, double tol, int max_iter, double *residual, char *error,
                    int error_size);

/* Static residual c(q,0) + K q - tau - sum J^T loads (n). */
void sb_static_residual(const sb_model *m, sb_work *w, const double *q, const double *tau,
                        const sb_point_load *loads, int nload, double *r);

#endif

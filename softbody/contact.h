/* Velocity-level frictional contact between soft chains and other bodies,
 * as the LCP of the CUSP paper (000_..., eq. 8-13), conditioned (condition.h)
 * and solved (lcp.h).
 *
 * A problem holds bodies and contacts for one time step. Bodies:
 *   soft   an sb chain after sb_step_prepare: M~ = M + hD + h^2 K (factored
 *          there), free velocity v* (the impulse moves it: M~ dv = J^T lambda);
 *          its points also move with the chain's base (m->base_twist +
 *          h m->base_acc, the end of the step), a velocity the impulses do
 *          not change, added to the free relative velocity
 *   dense  any body given by its (SPD) mass matrix and free velocity, e.g. a
 *          rigid body
 *   custom any body given by functions: x <- M^-1 x and x <- F^-1 x for some
 *          factor M = F F^T (MuJoCo: mj_solveM, mj_solveM2)
 * The static world is body -1. Each contact joins a point of side 0 to a
 * point of side 1; the normal points from side 1 into side 0, so the normal
 * velocity n . (v0 - v1) is positive when they separate.
 *
 * Per contact i the unknowns are z_i = [fn, beta_1..beta_r, gamma] (impulses,
 * N*s, and the sliding speed bound), with w_i = [vn + stab, D^T vt + gamma e,
 * mu fn - e^T beta]. Gap stabilization (DESIGN §3): the normal right-hand side
 * gets g/h for a gap g >= 0 (acts only if it would close within the step) and
 * alpha g/h for a penetration g < 0 (pushed out at rate alpha |g| / h). */
#ifndef SB_CONTACT_H
#define SB_CONTACT_H

#include "chain.h"
#include "kept_op.h"
#include "lcp.h"

#define SB_CONTACT_MAX_DIRECTIONS 16

typedef struct {
  int body;            /* problem body index, or -1 for the static world */
  /* soft body: the material point at arc length s of segment seg, offset in
   * that cross-section's frame (e.g. the rim of a disk) */
  int seg;
  double s;
  double offset[3];
  /* dense/custom body: 3 x nv row-major Jacobian of the point's world
   * velocity (not copied: must live until sb_contact_add returns) */
  const double *jac;
  /* static world: the point's prescribed world velocity (a moving obstacle) */
  double velocity[3];
} sb_contact_side;

typedef struct {
  sb_contact_side side[2];
  double normal[3];    /* world, unit (normalized on add), from side 1 into side 0 */
  double gap;          /* signed distance along the normal, m; < 0: penetration */
  double friction;     /* Coulomb coefficient mu >= 0 */
  double tangent[3];   /* optional friction reference: the pyramid's first direction is it
                          projected on the tangent plane (sb_contact_frame); zero: chosen
                          from the normal. With align_friction the LCP solve turns it */
  long id;             /* identity across steps for warm starts; < 0: none */
  /* optional third participant: a dense or custom body whose velocity also moves the two points
   * apart, e.g. the MuJoCo system carrying both sides' mounts (plugin/mount.c). coupled_jac:
   * 3 x nv row-major of that body, its share of the relative velocity v0 - v1 (the sides' signs
   * already folded in); NULL: none (coupled_body is then ignored). Read at the add, like jac. */
  int coupled_body;
  const double *coupled_jac;
} sb_contact;

/* sb_contact_options.lcp_from_operator: what the solve reads from the kept
 * contacts' operator instead of the assembled matrix */
enum { SB_CONTACT_LCP_STORED = 0, SB_CONTACT_LCP_ENTRIES = 1, SB_CONTACT_LCP_OPERATOR = 2, SB_CONTACT_LCP_AUTO = 3 };

/* SB_CONTACT_LCP_AUTO: a pass of at least this many LCP unknowns reads its LCP
 * from the operator (SB_CONTACT_LCP_OPERATOR), a smaller one from the formed
 * matrices (SB_CONTACT_LCP_STORED). Where the two paths' CPU time a step
 * crossed on the tiled rope, between 510 unknowns (operator 1.6 % slower)
 * and 1052 (1.7 % faster; bench/lcp_matrix_crossover.py, docs/contact_scaling.md,
 * session 34); from there on the matrices would also no longer fit a cache. */
#define SB_CONTACT_LCP_AUTO_MIN_N 768

typedef struct {
  int directions;          /* friction pyramid directions r, 3..16 (default 4) */
  int rank_selection;      /* stage 1 on/off (default 1) */
  double rank_tol;         /* eps_rank relative to |R_11| (default 1e-6) */
  int ruiz_iterations;     /* stage 2: 0 turns it off (default 10) */
  double tikhonov;         /* stage 3: eps_W on the scaled diagonal of the normals and of the
                              sliding-speed bounds gamma (default 1e-10; 0 off) */
  int proximal_steps;      /* re-solves that remove Tikhonov's O(eps_W) bias (default 1) */
  double stabilization;    /* alpha in (0, 1] for penetrations (default 0.2) */
  double surface_layer;    /* m >= 0: the depth a penetration may reach before the stabilization
                              pushes it out, at alpha (depth - surface_layer) / h beyond it (default
                              0: the paper's alpha depth / h; the plugin's key defaults to 1e-8).
                              With the gap term's kink at g = 0
                              (g / h above, alpha g / h below) resting contacts at g ~ 0 chatter:
                              pushed out, then unloaded as speculative ones, their loads and the
                              LCP's active set changing every step (contact.c, gap_term) */
  double push_speed;       /* m/s > 0 (default 1; INFINITY: none): the fastest the stabilization
                              pushes a penetration out. alpha depth / h grows with the depth found:
                              disks found centimetres deep were pushed out at metres a second, which
                              a clamped rod can only follow by whipping, and it diverged */
  int speculative;         /* gaps g > 0 enter as g/h (default 1); 0: as 0 */
  int warm_start;          /* start from the last solution of contacts with the same id */
  int align_friction;      /* turn each contact's first pyramid direction onto the friction it is
                              about to need: against its slip while it slides, else along the
                              friction it carried, else against its free slip (contact.c,
                              align_friction_frames), so the pyramid's friction is Coulomb's in
                              any direction; default 0: the frame from the normal and the
                              tangent hint, the paper's fixed pyramid (plugin key align_friction) */
  int rank_refine;         /* extra stage-1 passes when a dropped contact would penetrate (default 2);
                              the last keeps the violating contacts too (kept normals then dependent) */
  int screen;              /* stage 1 chooses among the contacts that may act, not every one
                              within the speculative margin: those closing within the step (or not
                              separating faster than the fastest one closes) and those loaded last
                              step. A left-out contact that the impulses would close is let in and
                              the pass solved again, so no contact is lost that would penetrate
                              (contact.c, screen_*). Default 1; 0: stage 1 over every contact */
  int lcp_from_operator;   /* SB_CONTACT_LCP_ENTRIES: the solve reads the conditioned LCP's entries
                              (Lemke's revised form its columns, the warm pivot and Lemke's finish
                              their principal blocks, the acceptance test its row terms) from the
                              kept contacts' operator (kept_op.h, sb_kept_op_conditioned) instead
                              of the assembled matrix: the same doubles, so the same answers bit for
                              bit. SB_CONTACT_LCP_OPERATOR: its products too (the warm pivot's
                              trials, Lemke's finish, the chain's checks), through W: another order
                              of summation, so answers that pass the same acceptance test but may
                              differ in the last bits, and where round-off decides a degenerate
                              LCP's tie, another of its solutions; and neither A nor its
                              conditioned copy is formed: stage 2 takes its scales from the
                              operator's columns (sb_ruiz_scales: the same doubles), and no
                              solver forms them (but Lemke's tableau where lemke_form asks for
                              it: its auto form is the revised one at every
                              size, FB runs through the operator's products, PGS by its columns,
                              and the damped fallback reads the operator with its compliance;
                              a pass that forms them all the same is counted in
                              sb_contact_info.matrices_formed) (issue 15, item 1;
                              docs/contact_factor_design.md; plugin key lcp_matrix).
                              SB_CONTACT_LCP_OPERATOR is the default: at Scenario A's and the
                              arms' sizes it costs 1-2 % more instructions than STORED and no
                              measurable time, and it keeps the hot path free of n x n matrices
                              at every size (sessions 40 and 41, docs/contact_scaling.md).
                              SB_CONTACT_LCP_STORED (0): from the formed matrices.
                              SB_CONTACT_LCP_AUTO: each pass OPERATOR from
                              SB_CONTACT_LCP_AUTO_MIN_N unknowns on, STORED below */
  sb_lcp_options lcp;      /* solver chain, tolerances */
} sb_contact_options;

typedef struct {
  sb_lcp_info lcp;         /* of the last stage-1 pass's conditioned solve, except time_us:
                              every solve of every pass */
  int ncontact, nkept;     /* contacts given, kept by stage 1 */
  int nvar;                /* LCP size after stage 1 */
  double residual;         /* ||min(z, w)||inf in physical units, unregularized, unscaled */
  double complementarity;
  double dropped_min_vn;   /* smallest normal velocity + gap term at dropped contacts, m/s (0 if none) */
  int rank_passes;         /* stage-1 selections made (1 unless a dropped contact would penetrate) */
  int solves;              /* LCP solves of the step: every stage-1 pass, proximal step, fallback */
  int cold_solves;         /* of those, the ones a solver of the chain answered, not the warm
                              start's active set (with warm_start, 0 in steady contact) */
  double time_us;          /* assembly + conditioning + solve */
  double assembly_us;      /* free velocities, gap terms, Delassus matrix */
  double conditioning_us;  /* stages 1-3 and unscaling: time_us - assembly_us - lcp.time_us */
  int screened;            /* contacts left out of stage 1 by the screen (separating) */
  int screen_passes;       /* passes solved again because a left-out contact would have closed */
  int warm_lemke_starts;   /* solves whose Lemke started from the warm start's basis
                              (sb_lcp_options.warm_lemke; sb_lcp_info.warm_lemke 2 or 3) */
  int warm_lemke_solved;   /* of those, the ones it solved (3) */
  int matrices_formed;     /* stage-1 passes whose conditioned LCP, which lcp_from_operator
                              SB_CONTACT_LCP_OPERATOR reads from the operator alone, was formed as
                              n x n matrices all the same: W was not finite, FB ran on an LCP
                              below 5 unknowns (fb_krylov.c), or Lemke's tableau form was asked
                              for (sb_lcp_options.lemke_form) */
  int immobile;            /* contacts left out because no impulse moves their normal (a disk fixed
                              at a static mount or where a held end clamps: its whitened, projected
                              normal within rank_tol of the largest; contact.c, drop_immobile_kept);
                              not in dropped_min_vn */
  int damped_passes;       /* passes whose LCP was not solved and that the damped problem answered
                              (or, where it failed too, no impulse); a later pass may still solve */
  int operator_passes;     /* passes that read their LCP from the operator alone
                              (SB_CONTACT_LCP_OPERATOR, or SB_CONTACT_LCP_AUTO at their size) */
  int fallback_solves;     /* solves whose chain ran more than one attempt (sb_lcp_info.attempts
                              > 1: its first attempt did not answer, whether or not a later one
                              did), which lcp, of the last pass only, does not show */
} sb_contact_info;

typedef struct sb_contact_problem sb_contact_problem;

sb_contact_options sb_contact_default_options(void);

/* Capacity: contacts, bodies, total velocity coordinates over all bodies,
 * largest r. NULL with a message if a size is bad or memory runs out. */
sb_contact_problem *sb_contact_create(int max_contacts, int max_bodies, int max_dof,
                                      int max_directions, char *error, int error_size);
/* The same with the LCP's own capacity: max_kept (1..max_contacts) contacts
 * after stage 1, which sizes its dense matrices ((max_kept (max_directions +
 * 2))^2 doubles each) while every contact keeps its Jacobian, its Delassus
 * row (for sb_contact_assemble) and its warm start. With rank selection,
 * stage 1 keeps an independent set of normals, at most the problem's dofs:
 * max_kept = min(max_contacts, max_dof) always holds it. The kept
 * contacts it adds beyond that set (last step's loaded ones, or the ones that
 * would penetrate) are given up first when they do not fit (a pass without
 * them); a step that still keeps more (rank selection off) fails with a
 * message naming both counts. sb_contact_create is max_kept = max_contacts. */
sb_contact_problem *sb_contact_create_kept(int max_contacts, int max_kept, int max_bodies, int max_dof,
                                           int max_directions, char *error, int error_size);
void sb_contact_free(sb_contact_problem *p);
/* The bytes sb_contact_create asks for with these capacities (its LCP's
 * dense matrices, (max_contacts (max_directions + 2))^2 doubles each,
 * dominate): what a host checks against its memory bound before creating. */
size_t sb_contact_workspace_bytes(int max_contacts, int max_dof, int max_directions);
/* The same for sb_contact_create_kept. */
size_t sb_contact_workspace_bytes_kept(int max_contacts, int max_kept, int max_dof, int max_directions);

/* Empties the problem (bodies and contacts) for a new step; keeps warm-start data. */
void sb_contact_clear(sb_contact_problem *p);

/* The warm start (the last solve's impulses by contact id) as a flat array,
 * for a host that keeps the state of a simulation outside the problem
 * (MuJoCo's plugin_state): [count, r, then per contact id, a first friction
 * direction t1 (world, 3), the r + 2 impulses in its pyramid and the r + 2
 * stage-2 (Ruiz) scales of its variables, where the next step's sweeps
 * start (each variable's row and column scale, powers of two, packed
 * exactly into one double)]: the axes it was solved in, or with
 * align_friction the ones its next solve starts from (against its slip, or
 * along its friction). The scales are state: a problem that loads what
 * another saved solves its next step bit for bit as that one does. capacity gives the doubles a problem of max_contacts needs;
 * save returns the doubles written; load takes what save wrote (a count of
 * 0, or an array of zeros, means no warm start). Ids are stored as doubles:
 * exact below 2^53. */
int sb_contact_warm_capacity(int max_contacts);
int sb_contact_warm_save(const sb_contact_problem *p, double *out);
void sb_contact_warm_load(sb_contact_problem *p, const double *in);

/* Each add returns the body index, or -1 with a message. The body's data is
 * read at solve time, so it must stay valid until then. */
int sb_contact_add_soft(sb_contact_problem *p, const sb_model *m, sb_work *w, char *error,
                        int error_size);
/* M: nv x nv SPD (copied and factored now), vfree: nv (copied). */
int sb_contact_add_dense(sb_contact_problem *p, int nv, const double *M, const double *vfree,
                         char *error, int error_size);
/* solve: x <- M^-1 x for ncol columns (nv x ncol, column-major); half_solve:
 * x <- F^-1 x for a factor M = F F^T. vfree: nv (copied). */
typedef void (*sb_body_apply_fn)(void *ctx, int ncol, double *x);
int sb_contact_add_custom(sb_contact_problem *p, int nv, sb_body_apply_fn solve,
                          sb_body_apply_fn half_solve, void *ctx, const double *vfree, char *error,
                          int error_size);

/* Adds a contact (its Jacobian rows are built now: soft bodies need their
 * kinematics from sb_step_prepare). Returns the contact index or -1. */
int sb_contact_add(sb_contact_problem *p, const sb_contact *c, char *error, int error_size);

/* A contact's frame, the columns t1, t2, n (world) of R (row-major, R[3 * row + col]), n unit:
 * t1 is the reference `hint` projected on the plane normal to n and made unit, which turns
 * smoothly with n wherever n stays away from +-hint; where the projection is shorter than 1e-9
 * (hint zero, or along n) t1 is the world axis least aligned with n made tangent (the frame of
 * a contact without a reference, which jumps where two of n's components pass each other);
 * t2 = n x t1. The pyramid's direction j of r is cos(2 pi j / r) t1 + sin(2 pi j / r) t2.
 * sb_contact_add takes a contact's frame from its normal and its `tangent`; a planner that
 * wants the simulator's pyramid calls this with the same reference (plan/mpcc.c). */
void sb_contact_frame(const double n[3], const double hint[3], double R[9]);

/* Assembles, conditions and solves. Returns 0 when the LCP is solved; else -1
 * with a message. The impulses of a failed solve are bounded: the chain's
 * best answer if its physical residual is within 1e-6 max(1, |b|), else the
 * answer of the damped (compliant) problem, else zero. Gamma of a contact
 * that carries no load is the least value its beta rows allow. */
int sb_contact_solve(sb_contact_problem *p, double h, const sb_contact_options *opt,
                     sb_contact_info *info, char *error, int error_size);

/* The solve of sb_contact_solve after stage 1, for an LCP given directly:
 * A (n x n, column-major) and b as sb_contact_solve assembles them (blocks
 * [fn, beta_1..beta_r, gamma] of r + 2 = directions + 2 per contact, e.g. a
 * file of cusp-sim --dump-lcp): stages 2 and 3, the solver chain, the
 * proximal step, the physical check and, when that fails, the damped
 * fallback. z (n): the guess when opt->warm_start, then the impulses. Uses
 * p as workspace (its last results are overwritten). 0 when solved, else -1
 * with a message (z then holds the impulses a failed step applies). */
int sb_contact_solve_lcp(sb_contact_problem *p, int n, int directions, const double *A, const double *b,
                         double *z, const sb_contact_options *opt, sb_contact_info *info, char *error,
                         int error_size);

/* Results of the last solve. */
const double *sb_contact_body_impulse(const sb_contact_problem *p, int body);  /* nv: sum J^T lambda */
/* v+ = vfree + M^-1 p for the body (nv into v). */
void sb_contact_body_velocity(sb_contact_problem *p, int body, double *v);
/* World impulse on side 0 (side 1 gets the opposite), its normal part, the
 * world contact frame (columns t1 t2 n, row-major 3x3), and whether stage 1
 * kept the contact. Any output may be NULL. */
void sb_contact_result(const sb_contact_problem *p, int contact, double impulse[3],
                       double *normal_impulse, double frame[9], int *kept);
/* Total contact impulse of the last solve on a soft body, as a world wrench
 * [moment about point; impulse] (N*m*s, N*s), e.g. about the base origin to
 * add (divided by h) to sb_base_wrench. Returns 0, or -1 (all zero) if body
 * is not a soft body of the problem. */
int sb_contact_body_wrench(const sb_contact_problem *p, int body, const double point[3],
                           double wrench[6]);
/* Relative velocity of the contact after the step (world, side 0 minus side 1). */
void sb_contact_relative_velocity(sb_contact_problem *p, int contact, double v[3]);

/* The assembled LCP before conditioning (kept contacts only), column-major,
 * and the stage-2 scalings: for tests and ablations. Where the last solve
 * read its LCP from the operator alone (lcp_from_operator
 * SB_CONTACT_LCP_OPERATOR), the matrices are formed here, the doubles the
 * stored path holds: a call costs O(n^2). */
void sb_contact_lcp(const sb_contact_problem *p, int *n, const double **A, const double **b,
                    const double **A_conditioned, const double **b_conditioned);

/* The last solve's LCP as an operator on the kept contacts' Delassus blocks
 * (kept_op.h): the same matrix as sb_contact_lcp's A, entry for entry. NULL
 * when the last solve had no kept contact, or solved a given dense LCP
 * (sb_contact_solve_lcp), or sb_contact_assemble ran after it. */
const sb_kept_op *sb_contact_kept_operator(const sb_contact_problem *p);
/* The last solve's answer z (sb_contact_lcp's n, physical units) with each
 * gamma the smallest that keeps its betas' w >= 0, as the physical check
 * tested it. */
const double *sb_contact_lcp_answer(const sb_contact_problem *p);
/* The last solve's conditioned LCP (sb_contact_lcp's A_conditioned) as
 * entries of the operator on W (sb_kept_op_conditioned), as Lemke reads it
 * with lcp_from_operator; NULL when sb_contact_kept_operator is. */
const sb_lcp_entries *sb_contact_conditioned_entries(const sb_contact_problem *p);

/* ---------- The assembled problem, for the other contact models ----------
 * sap and ncp (sap.h, ncp.h) solve the same assembled problem as the LCP in
 * their own way: they take the Delassus operator and the free velocities,
 * and give the impulses back.
 *
 * sb_contact_assemble: after the bodies and contacts are added, the free
 * relative velocities u (3m: contact i's (t1, t2, n) at 3i), the Delassus
 * operator W = J M~^-1 J^T (3m x 3m, column-major, the same frames) and the
 * LCP's normal gap term per contact (m: g/h, or alpha g/h when penetrating,
 * with opt's stabilization and speculative). Returns m, or -1 with a message
 * (a soft body without a prepared step, a bad h). The pointers stay valid
 * until the next assembly or solve. */
int sb_contact_assemble(sb_contact_problem *p, double h, const sb_contact_options *opt, const double **W,
                        const double **u, const double **gap_velocity, char *error, int error_size);
/* Contact i as stored (unit normal, gap, friction, id), or NULL. */
const sb_contact *sb_contact_at(const sb_contact_problem *p, int contact);
/* Contact i's Jacobian rows as sb_contact_add built them, or NULL: the
 * relative velocity along its frame's t1, t2, n per stacked coordinate,
 * three rows of *ld doubles each (the first ndof of them used). */
const double *sb_contact_rows(const sb_contact_problem *p, int contact, int *ld);
/* Makes lambda (3m, contact frames, as sb_contact_assemble's) the problem's
 * result: body impulses, sb_contact_result, relative velocities and
 * wrenches then report it (every contact kept). keep_warm: it becomes the
 * warm start by contact id, friction as r = directions pyramid
 * coefficients (what the LCP would start from too); else none is kept. */
void sb_contact_apply_impulses(sb_contact_problem *p, const double *lambda, int directions, int keep_warm);
/* The warm start's impulse (t1, t2, n) for a contact id, in the axes of
 * the problem's contact of that id (the saved ones if it has none): 1 when
 * there is one, else 0 and zeros. */
int sb_contact_warm_impulse(const sb_contact_problem *p, long id, double lambda[3]);

/* ---------- Bilateral constraints (bilateral.c) ----------
 * A soft chain's material frame (segment seg, arc length s: the section's
 * backbone frame there) held to an anchor frame of the world or of another
 * body of the problem, solved with the contacts in one problem (a mixed
 * LCP): pin = 3 rows, the frame's origin held; clamp = 6 rows, origin and
 * orientation. Rows are velocity level, in the anchor's axes a_k:
 *   a_k . (v_point - v_anchor) + alpha e_k / h = 0        (k = 0, 1, 2)
 *   a_k . (w_frame - w_anchor) + alpha r_k / h = 0        (clamp)
 * e = R_a^T (p_point - p_anchor), r = log(R_a^T R_frame) (rotation vector):
 * the position (and orientation) error is removed at the contacts'
 * stabilization rate alpha per step, so a held end does not drift.
 * max_speed and max_turn (> 0) cap that correction: alpha |e| / h at most
 * max_speed (m/s) and alpha |r| / h at most max_turn (rad/s), the error
 * vectors scaled as wholes (a far anchor, or one that jumped, is pulled at
 * the cap along its direction, and at alpha of the error a step once near).
 * The cap sits where alpha is applied (the solve's), so it holds whatever
 * alpha the problem is solved with.
 * The multipliers are eliminated before the LCP by the Schur complement of
 * the bilateral block W_ee = E M~^-1 E^T: the contacts see
 *   W' = W - W_ce W_ee^-1 W_ec,   u' = u - W_ce W_ee^-1 u_e
 * (and stage 1 the whitened normals projected off the constraints), so every
 * LCP solver and the conditioning are unchanged, and after the solve
 *   lambda_e = -W_ee^-1 (u_e + W_ec lambda_c).
 * A rank-deficient W_ee (a clamp on a straight rod without torsion: that row moves
 * nothing; two constraints that overdetermine a chain) keeps its largest
 * independent set of rows by pivoted Cholesky (dpstrf, pivots above 1e-10 of
 * the largest): the dependent rows get no impulse and are reported
 * (sb_contact_bilateral_rank). */
typedef struct {
  int rows;                /* 3: pin, 6: clamp */
  int body;                /* the soft body of the problem (side 0) */
  int seg;                 /* its material frame at arc length s of segment seg */
  double s;
  int other;               /* problem body of the anchor's side, or -1: the world */
  const double *jac;       /* other >= 0: 6 x nv row-major, the anchor point's world linear
                              velocity (3 rows) then the anchor's world angular velocity (3 rows)
                              per unit of that body's velocity (not copied: read at the add) */
  double anchor_pos[3];    /* the anchor frame now: origin, world */
  double anchor_R[9];      /* and axes (row-major, columns a_0 a_1 a_2) */
  double anchor_vel[6];    /* the anchor's prescribed world [linear; angular] velocity; other >= 0:
                              added to what jac gives (a body carried by a prescribed motion) */
  double max_speed;        /* > 0: the position correction's cap, m/s; 0 or +inf: none */
  double max_turn;         /* > 0: the orientation correction's cap, rad/s; 0 or +inf: none */
} sb_bilateral;

/* Room for max_rows bilateral rows (allocates; call once, not in a step).
 * 0, or -1 with a message. */
int sb_contact_reserve_bilateral(sb_contact_problem *p, int max_rows, char *error, int error_size);
/* Adds a constraint (after every body; its rows are built now: soft bodies
 * need sb_step_prepare's kinematics). Returns its index, or -1 with a message. */
int sb_contact_add_bilateral(sb_contact_problem *p, const sb_bilateral *e, char *error, int error_size);
/* Constraints in the problem. */
int sb_contact_bilateral_count(const sb_contact_problem *p);
/* The last solve's impulse of constraint k on its soft side, world:
 * [force (3); moment (3)] (N*s, N*m*s; the anchor's side gets the opposite;
 * moment 0 for a pin), the soft point (world), and the error the rows saw
 * (position m, then rotation rad, anchor axes). Any output may be NULL.
 * 0, or -1 for a bad k. */
int sb_contact_bilateral_result(const sb_contact_problem *p, int k, double impulse[6], double point[3],
                                double error[6]);
/* Rows given and rows kept by the pivoted Cholesky of the last solve. */
void sb_contact_bilateral_rank(const sb_contact_problem *p, int *rows, int *rank);

#endif

/* Planning through contact (CUSP paper, section IV): the MPCC of a soft arm
 * turning a ball with its end disk, by direct transcription, solved by IPOPT
 * with Scholtes relaxation.
 *
 * Decision variables, blocks in time order  S_0 U_0 S_1 U_1 ... U_{N-1} S_N:
 *   S_k = [q_k (n), v_k (n), omega_k (3, world), quat_k (4, w x y z)]
 *   U_k = [tau_k (n), fz_k, ft_k (d), gamma_k, zeta_k]
 * S_0 is fixed by bounds to the initial state. Constraints of step k read
 * S_k, U_k, S_{k+1} only (a contiguous column block):
 *   arm (dynamic stage only), sb_step's linearly implicit Euler:
 *     M~(q_k) (v_{k+1} - v_k) = h (tau_k - c(q_k, v_k) - K (q_k + h v_k) - D v_k)
 *                              + h J(q_k)^T W_k
 *     q_{k+1} = q_k + h v_{k+1}
 *   with W_k the wrench of the contact force F_k = fz n + D ft at the disk's
 *   contact point, M~ = M + h D + h^2 K;
 *   ball: I (omega_{k+1} - omega_k) = h (r_b x (-F_k) - D_b omega_{k+1}),
 *         quat_{k+1} = exp(h omega_{k+1}) (x) quat_k
 *   contact (eq. 19) at q_{k+1}, v_{k+1}, omega_{k+1}, Scholtes a b <= eps:
 *     phi >= 0, phi fz <= eps; mu fz - e^T ft >= 0, (mu fz - e^T ft) gamma <= eps;
 *     D^T nu_t + gamma e >= 0, ft_j (D_j^T nu_t + gamma) <= eps
 *   phi: the smoothed distance between the ball and the end disk (a capped
 *   cylinder of radius disk_radius and thickness 2 disk_half_thickness);
 *   nu_t: the disk point's velocity relative to the ball's surface point.
 * With contact_at_start the contact is the simulator's semi-implicit one
 * instead: point, normal, friction directions and r_disk, r_ball at q_k,
 * nu at (q_k, v_{k+1}, omega_{k+1}), and in place of phi the gap row
 *   s(g_k) + h n_k . nu,  s(g) = g for g >= 0, 0.2 g for g < 0
 * (the LCP's speculative row and its gap stabilization, times h; s blended
 * over 1e-7 m so the rows stay smooth); the rest of the rows as above; and, with margin_rows (not
 * PLAN_MARGIN_OFF), one more row, after them (the penalty form: before its products' sum), the
 * simulator's speculative margin:
 *   fz_k (g_k - margin_k) <= eps,  margin_k = cusp_swept_margin(h, disk speed at v_k)
 * (plugin/margin.h: the narrow phase makes no contact from farther at the step's start), smoothed
 * from below by at most about 0.2 mm; no force, and so no friction, from beyond it.
 * The kinematic stage drops the arm dynamics (tau fixed to 0; with
 * kinematic_effort its objective prices tau's estimate from the arm rows
 * linearized at rest instead); the dynamic stage starts from its solution
 * with tau from inverse dynamics.
 * Penalty formulation (penalty = rho > 0) instead of Scholtes': the rows
 * a >= 0 stay, the products leave the constraints as one row per step
 *   sum over the pairs of a b - zeta_k = 0,  objective + rho sum_k zeta_k
 * (an exact penalty for rho large enough; zeta_k is fixed to 0 otherwise).
 * The friction basis: with friction_reference set, the simulator's rule
 * (sb_contact_frame, the plugin's key friction_reference): t1 the reference
 * projected on the tangent plane, t2 = n x t1, smooth wherever the normal
 * stays away from the reference; else the rest contact's tangent basis
 * carried along the shortest rotation from the rest normal to the current
 * one (the simulator's default, the world axis least aligned with the
 * normal, jumps: docs/planning.md, sessions 17 and 20).
 * With contact_at_start, besides: both bodies meet at the disk's contact
 * point (the ball's lever arm (R + gap) n, as the plugin's narrow phase
 * puts it); the ball's velocity in nu is omega_{k+1}, which MuJoCo's step
 * (its damping implicit) and the plugin's LCP (the rigid side with M + h D)
 * agree on.
 * First derivatives: central differences inside each step's column block
 * (the exact sparsity of the transcription; objective gradient analytic),
 * the arm terms recomputed only for the columns that move them (q_k, v_k;
 * the mass matrix for q_k alone), the geometry only for the positions it is
 * taken at (q_{k+1}, or q_k with contact_at_start), and nu's
 * columns of v_{k+1}, omega_{k+1} from the disk point's Jacobian (nu is
 * linear in both); Hessian: IPOPT's limited-memory quasi-Newton, or
 * (exact_hessian) the Lagrangian's: per step, second differences of
 * lambda_k . g_k over the pairs of its columns where the rows are not linear
 * (the transcription's pattern), the arm terms and the contact geometry
 * computed once per moved column, the arm's (v_k, .) pairs from the mass
 * matrix's derivatives (Christoffel symbols); the objective's analytic. */
#ifndef PLAN_MPCC_H
#define PLAN_MPCC_H

#include "chain.h"

enum { PLAN_MARGIN_OFF = 0, PLAN_MARGIN_ALL = 1, PLAN_MARGIN_LAZY = 2 };   /* plan_mpcc_params.margin_rows */
typedef struct {
  int N;                  /* steps */
  double T;               /* horizon, s */
  double mu;              /* friction */
  int d;                  /* friction directions */
  double eps;             /* Scholtes relaxation; with penalty > 0, the rows' tolerance (eps / 10) */
  double penalty;         /* > 0: penalty formulation instead of Scholtes' (see below) */
  double penalty_from;    /* with penalty > 0: Scholtes' homotopy down to this eps first, then the
                           * penalty form from its primal point (0: the penalty form alone) */
  double eps_start;       /* homotopy: solve at eps_start, eps_start * eps_factor, ..., eps (<= eps: none) */
  double eps_factor;      /* in (0, 1) */
  int max_iter_relaxed;   /* iteration cap of each relaxation above eps (0: the stage's cap) */
  int max_iter_last;      /* iteration cap of the dynamic stage's last Scholtes relaxation when the polish
                           * follows it (0: the stage's cap; ignored without polish, in the penalty
                           * form and in the kinematic stage); a last relaxation stopped there is
                           * polished when its point is feasible (plan_mpcc_stage.relaxed_capped) */
  double axis[3];         /* rotation axis of the task (world) */
  double angle;           /* rad */
  double ball_center[3], ball_radius, ball_mass, ball_damping;
  double disk_radius, disk_half_thickness;
  double disk_fillet;     /* the planner's disk with its rims rounded by a fillet of this radius (m; 0: the
                           * sharp disk of the MJCF's cylinder); < min(disk_radius, disk_half_thickness) */
  double q_bound, v_bound, tau_bound, force_bound, omega_bound;
  int contact_at_start;   /* 0: the paper's contact (eq. 19) at the step's end, the exact gap phi(q_{k+1});
                           * 1: the simulator's (softbody/contact.c's LCP): geometry at q_k, the disk point
                           * moving at J(q_k) v_{k+1}, the gap linearized (see below) */
  int margin_rows;        /* with contact_at_start, the margin rows (above): PLAN_MARGIN_OFF none (the NLP
                           * without them), PLAN_MARGIN_ALL on every step, PLAN_MARGIN_LAZY the dynamic stage
                           * solved without them, then, while its plan pushes from beyond the margin on steps
                           * without the row, again with the row bounded on those steps (every step has the
                           * row then, free on the others), from the stage's start point (plan_mpcc_stage.margin_*) */
  double friction_reference[3]; /* world direction whose tangent projection is the pyramid's first direction
                           * (sb_contact_frame, the simulator's with the same key); 0 0 0: the carried basis */
  double offaxis_angle;   /* plan_mpcc_offaxis_guess's contact, rad round the ball from the rest contact (0: 45 deg) */
  double terminal_weight; /* of J_quat(quat_N) in eq. (20): the paper's 100 */
  double terminal_weight_final; /* > 0 and != terminal_weight: after the homotopy, one more solve at eps
                                 * with this weight, warm from its primal-dual point (0: none) */
  int lbfgs_memory;       /* IPOPT's limited_memory_max_history (0: its default, 6) */
  int exact_hessian;      /* the Lagrangian's Hessian (plan_mpcc_hessian_error) instead of L-BFGS:
                           * 0 never (the polish too: limited memory throughout), 1 in every relaxation,
                           * 2 in the last relaxation only (the polish takes the exact one with 1 and 2) */
  int warm_primal;        /* the first relaxation starts from z as a primal warm start (bounds barely
                           * pushed, a small initial barrier) instead of IPOPT's cold defaults: for a
                           * guess already near a solution (plan_mpcc_coarse_guess) */
  int max_iter;           /* IPOPT iterations of the dynamic stage */
  int max_iter_kinematic; /* of the kinematic stage (a warm start: need not converge) */
  int kinematic_effort;   /* the kinematic stage's objective adds eq. (20)'s control effort 1e-2 h |tau|^2 with tau
                           * its quasi-static estimate at the step's end, K (q_{k+1} - q_rest) + D v_{k+1}, and
                           * the contact force's 1e-2 h |J^T F|^2 with the disk's Jacobian at rest (a weight on
                           * fz^2 and ft_j^2): without them the kinematic arm's motion and the forces are
                           * unpriced and the stage is under-determined (docs/planning.md, session 19) */
  double max_seconds;     /* IPOPT max_cpu_time per stage (0: none) */
  double tol;             /* IPOPT tol */
  double acceptable_tol;  /* IPOPT acceptable_tol (0: its default, 1e-6) */
  int acceptable_iter;    /* IPOPT acceptable_iter (0: its default, 15) */
  int verbose;            /* progress lines (IPOPT iterations) on stderr */
  int diagnose;           /* after each relaxation, where the dual infeasibility and the large
                           * multipliers sit, and the biactive pairs (stderr) */
  int derivative_test;    /* IPOPT's first-order derivative checker at the start point (prints to stdout) */
  int polish;             /* after the last Scholtes relaxation of the dynamic stage, the tightened NLP
                           * (mpcc_polish.h): complementarity exact to IPOPT's tolerance */
  int polish_max_iter;    /* the tightened NLP's IPOPT iteration cap (0: 200; < 0: none, IPOPT only tests
                           * the start point, which a relaxed plan with a side off zero violates: a polish
                           * that fails whatever the round-off, for tests) */
  int polish_certify;     /* where a biactive pair's multiplier is negative, solve the relaxed NLP from the
                           * polished point to tell strong stationarity (mpcc_polish.h; costs about as
                           * much as the polish) */
  const char *ipopt_options; /* an IPOPT options file read after (and overriding) the solver's own
                              * options; NULL or "": none (IPOPT would otherwise read ./ipopt.opt) */
  const char *ipopt_options_last; /* read instead of ipopt_options in the last relaxation of the
                                   * homotopy only (its own barrier strategy; NULL: the same file) */
} plan_mpcc_params;

/* The paper's task about axis (0, 1, 2 = x, y, z): N = 100, T = 4 s, mu =
 * 0.6, d = 10, eps = 1e-7, ball r = 0.05 m at (0, 0.1, 0.7) m, 90 deg. */
plan_mpcc_params plan_mpcc_rotate_task(int axis);

#define PLAN_MPCC_MAX_RELAXATIONS 16
typedef struct {          /* one IPOPT solve of the homotopy */
  double eps;
  double penalty;           /* > 0: the penalty form's solve (rho), 0: Scholtes' at eps */
  int status, iterations;
  double solve_s, eval_s;   /* process CPU seconds */
} plan_mpcc_relaxation;

/* What the complementarity polish (mpcc_polish.h) did after the last relaxation. */
typedef enum {
  PLAN_MPCC_POLISH_OFF = 0,      /* not asked for */
  PLAN_MPCC_POLISH_SKIPPED,      /* no relaxed solution to polish (the relaxation failed, or the penalty form) */
  PLAN_MPCC_POLISH_ACCEPTED,     /* the tightened NLP converged: its solution replaced the relaxed plan */
  PLAN_MPCC_POLISH_FAILED        /* it did not: the relaxed plan is kept, untouched */
} plan_mpcc_polish_status;

/* Stationarity of the polished point as an MPCC, from the signs of the
 * multipliers of the pairs with both sides zero (biactive). */
typedef enum {
  PLAN_MPCC_STATIONARY_UNKNOWN = 0,  /* not polished */
  PLAN_MPCC_STATIONARY_STRONG,       /* both multipliers >= 0 on every biactive pair (no biactive pair: the
                                      * TNLP's KKT point is strongly stationary); B-stationary under MPEC-LICQ */
  PLAN_MPCC_STATIONARY_M,            /* each biactive pair: both >= 0, or one of them zero */
  PLAN_MPCC_STATIONARY_C,            /* each biactive pair: their product >= 0 */
  PLAN_MPCC_STATIONARY_WEAK          /* only the TNLP's KKT conditions (weakly stationary) */
} plan_mpcc_stationarity;

#define PLAN_MPCC_RNLP_NOT_RUN (-1000)
typedef struct {            /* with status OFF or SKIPPED, the other fields are 0 */
  plan_mpcc_polish_status status;
  int ipopt_status, iterations;
  double solve_s;               /* process CPU seconds of the polish (in the stage's solve_s) */
  int fixed_rows, fixed_vars;   /* pairs whose row side (gap, cone, slip), or variable side (fz, gamma, ft), was fixed to 0 */
  int implied_rows;             /* pairs whose row the polish frees because the other fixed sides imply it: a slip row
                                 * that is a combination of the step's fixed ones, and an open step's (fz fixed to 0)
                                 * cone and slip pairs (mpcc_polish.c, tighten) */
  int biactive_relaxed;         /* pairs with both sides below sqrt(eps) at the relaxed point */
  double complementarity_before, complementarity_after;   /* max |min(a, b)| */
  double product_before, product_after;                   /* max a b */
  double objective_before, objective_after;
  double constraint_violation;  /* of the tightened NLP at its last iterate */
  int biactive;                 /* pairs with both sides <= 1e-6 at the polished point */
  int biactive_negative;        /* of them, with a multiplier below -tolerance */
  double min_biactive_multiplier; /* the most negative multiplier of a biactive pair (0: none) */
  /* when some biactive multiplier is negative: the relaxed NLP (those pairs' sides only >= 0) from the
   * polished point (mpcc_polish.h) */
  int rnlp_status;              /* IPOPT's, or PLAN_MPCC_RNLP_NOT_RUN */
  int rnlp_iterations;          /* (in iterations) */
  double rnlp_objective, rnlp_complementarity;
  int rnlp_certified;           /* the relaxed NLP found no descent (stationarity strong by it, not by
                                 * the multipliers of the tightened NLP) */
  plan_mpcc_stationarity stationarity;
} plan_mpcc_polish_result;

typedef struct {
  int status;             /* IPOPT ApplicationReturnStatus */
  int iterations;         /* over all relaxations of the stage */
  int homotopy_steps;     /* IPOPT solves (relaxations) of the stage */
  double solve_s;         /* process CPU seconds (all threads of the process) */
  double wall_s;          /* wall clock seconds of the same solve */
  double eval_s;          /* of solve_s: CPU in the constraint, Jacobian and Hessian evaluations (the rest: IPOPT, MUMPS) */
  double objective;
  double quaternion_error;    /* 1 - (quat_N . target)^2 */
  double complementarity;     /* max over steps and pairs of |min(a, b)| */
  double complementarity_product; /* max over steps and pairs of a b (Scholtes: <= eps) */
  double constraint_violation;/* max violation of the NLP's constraints and bounds */
  plan_mpcc_relaxation relaxation[PLAN_MPCC_MAX_RELAXATIONS];  /* the first homotopy_steps of them */
  plan_mpcc_polish_result polish;  /* with prm.polish: the plan's figures above are the polished plan's when accepted */
  int relaxed_capped;     /* the last relaxation stopped at its iteration cap (status is then IPOPT's
                           * Maximum_Iterations_Exceeded, whatever the polish did) */
  double relaxed_violation; /* the relaxed NLP's constraint violation at the last relaxation's point */
  int margin_steps_added; /* PLAN_MARGIN_LAZY: steps whose margin row was bounded after a solve pushed from
                           * beyond the margin there */
  int margin_resolves;    /* PLAN_MARGIN_LAZY: solves after the first (the other figures sum over all, but
                           * relaxation[] and polish are the last solve's) */
} plan_mpcc_stage;

typedef struct plan_mpcc plan_mpcc;

/* The arm: the CUSP preset (sb_preset_cusp_arm) hung at (0, 0, 1.167) with
 * local z down, as mjcf/ball_rotation.xml. Starts at its static equilibrium
 * under gravity. NULL and a message on failure. */
plan_mpcc *plan_mpcc_create(const plan_mpcc_params *prm, char *error, int error_size);
void plan_mpcc_free(plan_mpcc *p);

int plan_mpcc_nvars(const plan_mpcc *p);
int plan_mpcc_nconstraints(const plan_mpcc *p, int dynamic);
/* How many times the Hessian of the Lagrangian was evaluated (values, not the pattern) since
 * plan_mpcc_create: 0 after solves with exact_hessian 0, polish included. */
long plan_mpcc_hessian_evaluations(const plan_mpcc *p);

/* Initial guess: the rest trajectory (cold start). */
void plan_mpcc_rest_guess(const plan_mpcc *p, double *z);
/* Initial guess with the disk touching the ball off the rotation axis: the
 * rest contact lies at the ball's -y pole, on the axis of the task about y,
 * where a tangential push has almost no lever. A small inverse-kinematics
 * solve (damped Gauss-Newton on q) finds a pose touching the ball 45 degrees
 * round from the rest contact (four directions tried; of those reached, the
 * normal farthest from the axis); the arm moves there over the first tenth
 * of the horizon and holds, the ball turns about the axis over the rest
 * (smoothstep in both), forces zero. Returns the chosen normal's distance
 * from the axis (sine of the angle, the lever over the radius), or -1 (z is
 * then the rest guess) when no candidate pose was reached. */
double plan_mpcc_offaxis_guess(plan_mpcc *p, double *z, double normal[3]);
/* 1 when the rest contact's normal is within 60 degrees of the rotation axis. */
int plan_mpcc_needs_offaxis(const plan_mpcc *p);
/* Re-integrates the positions of z from its velocities (q_{k+1} = q_k + h
 * v_{k+1}), then overwrites each tau_k with the one that makes the arm rows
 * of step k hold exactly (inverse dynamics along z's states and forces). */
void plan_mpcc_inverse_dynamics(plan_mpcc *p, double *z);
/* Coarse-to-fine start. plan_mpcc_interpolate fills z (p's variables) from
 * zc, a plan of the same task (T, d, arm) on coarse's grid: the arm's
 * positions by cubic Hermite interpolation of the coarse knots (within the
 * q bounds), those inside the ball or whose step pushes on it moved onto its
 * surface (minimum-norm Gauss-Newton on the gap), velocities their
 * differences (q_{k+1} = q_k + h v_{k+1}); the forces fz, ft and gamma of
 * the coarse step holding each fine step's midpoint (forces, so the impulse
 * over a coarse step is kept), gamma raised to the fine slip speed; the
 * ball integrated through its own rows under those forces (its quaternion a
 * unit one); tau by plan_mpcc_inverse_dynamics, so the arm, kinematic, ball
 * and quaternion rows hold and only the contact rows are left to the
 * solver. Returns 0, or -1 (message in error) when the tasks differ.
 * plan_mpcc_coarse_guess solves the task with coarse_prm (its N; the same
 * T) by the dynamic stage from rest or, with offaxis, from
 * plan_mpcc_offaxis_guess with inverse dynamics, and interpolates its
 * final iterate into z; out is the coarse solve. Returns 0 when the coarse
 * solve converged (IPOPT success or acceptable), 1 when it did not (z is
 * still its interpolation), -1 on an error (message in error). */
int plan_mpcc_interpolate(plan_mpcc *p, double *z, const plan_mpcc *coarse, const double *zc, char *error,
                          int error_size);
int plan_mpcc_coarse_guess(plan_mpcc *p, const plan_mpcc_params *coarse_prm, int offaxis, double *z,
                           plan_mpcc_stage *out, char *error, int error_size);
/* Solves one stage (dynamic = 0: kinematic) from z (in/out). Returns 0 when
 * IPOPT reports success (Solve_Succeeded or Solved_To_Acceptable_Level), or
 * when the last relaxation stopped at its cap (prm.max_iter_last) at a
 * feasible point and the polish converged from it (out->relaxed_capped, the
 * polish accepted: the plan is the tightened NLP's solution, out->status
 * stays the relaxation's Maximum_Iterations_Exceeded); -1 otherwise. */
int plan_mpcc_solve(plan_mpcc *p, int dynamic, double *z, plan_mpcc_stage *out);
/* PLAN_MARGIN_LAZY's mark (plan_mpcc_solve calls it after each dynamic solve): flags the steps of z that
 * push (fz above 1e-3 of z's largest) from farther than the margin row's margin and are not flagged yet;
 * returns how many. plan_mpcc_margin_mask: the N flags. */
int plan_mpcc_margin_mark(plan_mpcc *p, const double *z);
const unsigned char *plan_mpcc_margin_mask(const plan_mpcc *p);
/* The next stage's homotopy start and warm_primal (plan_mpcc_params): the dynamic stage after the
 * kinematic one starts from a point near a relaxed solution, not from rest. */
void plan_mpcc_set_start(plan_mpcc *p, double eps_start, int warm_primal);

/* Independent checks of a trajectory z:
 * the largest |v_{k+1} - v+| and |q_{k+1} - q+| where (q+, v+) is sb_step
 * (sb_step_prepare / sb_add_world_wrench / sb_step_commit) from (q_k, v_k)
 * with tau_k and the planned contact impulse; and the complementarity
 * recomputed from the contact geometry. */
double plan_mpcc_step_residual(plan_mpcc *p, const double *z);
double plan_mpcc_complementarity(plan_mpcc *p, const double *z);
/* The same, and the largest product a b over the pairs (may be NULL). */
double plan_mpcc_complementarity_measures(plan_mpcc *p, const double *z, double *max_product);
double plan_mpcc_quaternion_error(const plan_mpcc *p, const double *z);
/* The constraint Jacobian IPOPT gets (which reuses the arm terms, the
 * contact geometry and d nu / d v across columns) against Richardson
 * extrapolation of central differences (steps 1e-5, 5e-6, 2.5e-6 times
 * 1 + |x|) of the full rows of each step, column by column: the largest
 * |J - J_fd| / max(1, |J_fd|). Sets the stage (dynamic = 0: kinematic). */
double plan_mpcc_jacobian_error(plan_mpcc *p, const double *z, int dynamic);
/* The Hessian of the Lagrangian sigma f + lambda . g IPOPT gets with
 * exact_hessian (mpcc.h's header: second differences inside the pattern,
 * the arm's velocity pairs through M's derivatives, the objective's
 * analytic), as the full matrix assembled from its triplets, against second
 * differences of the Lagrangian from the plain rows (no Jacobian or Hessian
 * code): the largest |H_ij - H_fd,ij| / max(1, max_j |H_fd,ij|) over every
 * pair of variables (so an entry missing from the pattern shows too).
 * O(nvars^2) evaluations: small instances only. Sets the stage. */
double plan_mpcc_hessian_error(plan_mpcc *p, const double *z, const double *lambda, double sigma, int dynamic);
/* The same Hessian against central differences (steps step times 1 + |x|) of the Lagrangian's
 * gradient sigma grad f + J^T lambda, J the Jacobian IPOPT gets: one order of differences, so a
 * step small enough to stay on one side of the rows' switches (the gap stabilization's blend, the
 * capped cylinder's features) can be taken where second differences of the rows cannot. O(nvars)
 * Jacobians, O(nvars^2) memory: small instances only. Sets the stage. */
double plan_mpcc_hessian_gradient_error(plan_mpcc *p, const double *z, const double *lambda, double sigma,
                                        int dynamic, double step);
/* Step k's rows (mpcc.h's order) at z for the stage (dynamic = 0:
 * kinematic), into r; returns their number. With
 * plan_mpcc_step_jacobian_block, for checks of the derivatives IPOPT gets
 * against differences taken by the caller. */
int plan_mpcc_step_rows(plan_mpcc *p, const double *z, int k, int dynamic, double *r);
/* Step k's Jacobian block as IPOPT gets it: rows x (block + state) columns
 * (row-major; the columns S_k U_k S_{k+1} from k block), into val; returns
 * the number of columns. */
int plan_mpcc_step_jacobian_block(plan_mpcc *p, const double *z, int k, int dynamic, double *val);
/* The Hessian of the Lagrangian sigma f + lambda . g IPOPT gets with exact_hessian (the one
 * plan_mpcc_hessian_error checks) at z for the stage, as the full symmetric nvars x nvars matrix H
 * (row-major). Returns 0, or -1 (out of memory, or an entry not finite). */
int plan_mpcc_hessian(plan_mpcc *p, const double *z, const double *lambda, double sigma, int dynamic, double *H);
/* The store of the arm terms and the disk's kinematics by arm state (q, v) (arm_cache.h) that the
 * rows, the Jacobian and the Hessian share within a step and with its neighbour (step k's contact
 * geometry at the end is at step k + 1's state): on by default. 0: off, every evaluation computes
 * them afresh (the same bits: the cache is keyed on the state's exact bits). Switching empties it and
 * its counts. Returns 0, or -1 out of memory (the cache then off). */
int plan_mpcc_set_arm_cache(plan_mpcc *p, int on);
/* Its lookups since it was made or switched: hits and misses (either may be NULL; 0 when off). */
void plan_mpcc_arm_cache_counts(const plan_mpcc *p, long *hits, long *misses);
/* The end disk's pose at arm coordinates q: its centre and rotation (world,
 * row-major; its local z is the disk's axis). */
void plan_mpcc_disk_pose(plan_mpcc *p, const double *q, double pos[3], double R[9]);
/* Contact quantities of step k (after the step, whichever contact_at_start): gap, normal force, and
 * the unit normal from the ball's centre towards the disk (normal may be NULL). */
void plan_mpcc_contact(plan_mpcc *p, const double *z, int k, double *gap, double *fz, double normal[3]);
int plan_mpcc_n(const plan_mpcc *p);   /* arm coordinates */
int plan_mpcc_block(const plan_mpcc *p);   /* variables per step (S_k U_k) */
/* Eq. (20) with J_quat(q, t) = 1 - (q . t)^2 and the analytic gradient (grad may be NULL). */
double plan_mpcc_objective(const plan_mpcc *p, const double *z, double *grad);

#endif

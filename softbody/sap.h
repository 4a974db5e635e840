/* The SAP contact model (seed 001 and the SAP paper it builds on, Castro et
 * al. 2022): compliant contact with regularized friction as one
 * unconstrained convex problem in velocities, solved by Newton with an exact
 * line search.
 *
 * Per contact i, in its frame (t1, t2, n; n from side 1 into side 0, so the
 * normal velocity vn > 0 separates), a regularization R_i = diag(Rt, Rt, Rn)
 * and a bias vhat_i = (0, 0, vhat_n) make the impulse a function of the
 * contact velocity vc_i:
 *
 *   gamma_i(vc) = P_i(y),  y = -R_i^-1 (vc_i - vhat_i)
 *
 * with P_i the projection onto the friction cone {|gt| <= mu gn} in the norm
 * of R_i. In stiction (y inside the cone) gamma = y: a spring of compliance
 * Rn in the normal and a viscous tangential regularization Rt (the creep
 * speed of a contact holding a tangential impulse gt is Rt |gt|); sliding,
 * |gt| = mu gn; separating, gamma = 0.
 *
 * The problem: with the Delassus operator W = J A^-1 J^T (A = M~, the
 * implicit mass matrix) and the free contact velocity vfree, minimise over
 * velocities v
 *
 *   l(v) = 1/2 |v - v*|_A^2 + sum_i 1/2 gamma_i^T R_i gamma_i,  vc = J v
 *
 * whose gradient is A (v - v*) - J^T gamma(J v). The minimiser lies on
 * v = v* + A^-1 J^T x, so it is solved on x (3 per contact; x = gamma at the
 * optimum): vc = vfree + W x, l(x) = 1/2 x^T W x + sum 1/2 gamma^T R gamma,
 * and the Newton step of l in v is the image of
 *
 *   (I + G W) dx = -(x - gamma),   G = -d gamma / d vc (block diagonal, PSD)
 *
 * (exactly: (A + J^T G J) A^-1 J^T dx = J^T (I + G W) dx). The line search
 * minimises l along it exactly (safeguarded Newton on dl/dalpha), so the
 * cost never increases and Newton converges from any start (l is convex,
 * its Hessian A + J^T G J is positive definite). Converged when the
 * gradient's A^-1 norm |x - gamma|_W <= tol_abs + tol_rel max(|x|_W,
 * |gamma|_W): momentum balance to tol_rel of the momenta involved (the SAP
 * paper scales the gradient by diag(A)^-1/2; W's norm is the same idea
 * without needing A).
 *
 * Parameters of a compliant contact (sb_sap_contact_params): normal
 * stiffness k (N/m) with Hunt-Crossley dissipation d (s/m), f = k x (1 + d
 * xdot) for a penetration x. The convex form is linear in the velocity, so
 * the dissipation is taken at the penetration x0 at the step's start:
 * damping k d x0, a dissipation time scale tau = d x0, and
 *   Rn = 1 / (h k (h + tau)),  vhat_n = -phi0 / (h + tau)
 * (phi0 the signed gap, < 0 penetrating): then gn = h k (-phi0 - (h + tau)
 * vn), the impulse of the spring at the end of the step plus the damper.
 * Near-rigid contact (SAP, beta = 1): Rn is at least w_i / (4 pi^2), w_i =
 * trace(W_ii) / 3, and then tau = h / pi: a stiffer spring than the step can
 * resolve is replaced by the stiffest it can. Rt = sigma w_i (SAP's sigma,
 * default 1e-3).
 *
 * Nothing here allocates after sb_sap_work_create. */
#ifndef SB_SAP_H
#define SB_SAP_H

typedef struct {
  double rel_tol;        /* relative tolerance on the gradient (default 1e-6) */
  double abs_tol;        /* absolute, N*s in W's norm units (default 1e-14) */
  int max_iterations;    /* Newton iterations (default 100) */
  int max_line_search;   /* line-search iterations per Newton step (default 60) */
  int warm_start;        /* 1: x holds a guess on entry (the last step's impulses) */
} sb_sap_options;

typedef struct {
  int converged;
  int iterations;           /* Newton steps */
  int line_search_iterations; /* over all steps */
  double cost;              /* l at the answer (relative to l(v*) = sum 1/2 gamma^T R gamma at x = 0) */
  double gradient;          /* |x - gamma|_W at the answer */
  double gradient_bound;    /* what it had to fall below */
  double time_us;
  char message[160];        /* why not converged */
} sb_sap_info;

typedef struct sb_sap_work sb_sap_work;

sb_sap_options sb_sap_default_options(void);

/* Workspace for up to max_contacts contacts; NULL when out of memory. */
sb_sap_work *sb_sap_work_create(int max_contacts);
void sb_sap_work_free(sb_sap_work *w);

/* R (3) and vhat (3) of one contact, in the frame (t1, t2, n): h > 0 step, k
 * > 0 stiffness, d >= 0 Hunt-Crossley dissipation, sigma > 0, gap phi0 (m),
 * Wii the 3 x 3 diagonal block of W (column-major). */
void sb_sap_contact_params(double h, double k, double d, double sigma, double phi0, const double Wii[9],
                           double R[3], double vhat[3]);

/* The impulse of one contact for its velocity vc (frame t1, t2, n) and, if
 * G is not NULL, G = -d gamma / d vc (3 x 3, column-major, symmetric PSD).
 * Returns the region: 0 stiction, 1 sliding, 2 separation. */
int sb_sap_impulse(double mu, const double R[3], const double vhat[3], const double vc[3], double gamma[3],
                   double G[9]);

/* Solves the problem of nc contacts: W (3nc x 3nc, column-major, contact i
 * in rows 3i..3i+2 in the order t1, t2, n), vfree (3nc), R and vhat (3nc),
 * mu (nc). x (3nc): the guess if opt->warm_start (else zero), then the
 * answer; gamma (3nc): the impulses gamma(vfree + W x). Returns 0 when
 * converged; -1 when not (x and gamma then hold the last iterate, whose
 * cost is at most the start's) or for bad input (message in info). */
int sb_sap_solve(sb_sap_work *w, int nc, const double *W, const double *vfree, const double *R,
                 const double *vhat, const double *mu, double *x, double *gamma, const sb_sap_options *opt,
                 sb_sap_info *info);

/* The cost l(x) of that problem (uses the workspace). */
double sb_sap_cost(sb_sap_work *w, int nc, const double *W, const double *vfree, const double *R,
                   const double *vhat, const double *mu, const double *x);

/* The cost after every Newton step of the last solve: n + 1 values (the
 * start first); valid until the next solve. */
const double *sb_sap_cost_history(const sb_sap_work *w, int *n);

#endif

/* The smoothed NCP contact model (seed 003, section V): frictional contact
 * as a nonlinear complementarity problem with the exact Coulomb cone,
 * rewritten with one slack vector per contact as smooth equations and
 * solved by Newton.
 *
 * Per contact i, in its frame (t1, t2, n), the impulse lambda and the
 * velocity v = b + W lambda (b: free velocity plus the LCP's gap term on the
 * normal, W the Delassus operator) must satisfy
 *   0 <= lambda_n  perp  v_n >= 0
 *   |lambda_t| <= mu lambda_n, and lambda_t = -mu lambda_n v_t / |v_t| when v_t != 0
 * Seed 003 writes both through a slack u (eq. 18-24): lambda_n = f(u_n),
 * v_n = f(-u_n) with f(x) = max(x, 0), and lambda_t = -min(1, a/r) u_t,
 * v_t = (1 - min(1, a/r)) u_t with a = mu lambda_n, r = |u_t| (stick inside
 * the disk of radius a, slide on it). Here u is in velocity units: lambda =
 * (those) / s_i with s_i = trace(W_ii) / 3 (seed 003 leaves the units
 * open), and the nonsmooth pieces are smoothed with the Chen-Harker-Kanzow-
 * Smale function (instead of the seed's sigmoid), which keeps f(x) - f(-x) =
 * x exactly:
 *   f_e(x) = (x + sqrt(x^2 + 4 e^2)) / 2       so that  s lambda_n v_n = e^2
 *   min_e(1, t) = (1 + t - sqrt((1 - t)^2 + 4 et^2 t / (1 + t))) / 2,  t = a / r
 * (e: smoothing, m/s; et: friction smoothing, dimensionless; the factor
 * t / (1 + t) keeps min_e within [0, min(1, t)], so that an unloaded
 * contact has no friction and friction never pushes along the slip, with a
 * relative error of et^2 while sliding). As e, et -> 0
 * the equations become the exact NCP; the error of the smoothed answer is
 * O(e) in velocity (a resting contact sinks at about e^2 / (s lambda_n)).
 * Newton on F(u) = b + (W + delta S) lambda(u) - v(u) = 0 (S = diag(s_i))
 * with the analytic Jacobian and a backtracking line search on |F|^2,
 * warm-started from the last impulses. delta is a compliance: W of a soft
 * arm has rank at most its coordinates, far below 3 per contact, and a
 * sticking loaded contact's Jacobian block is -W / s, singular without it;
 * it changes a velocity by delta times the velocity change its impulse
 * makes (1e-8 of it by default).
 *
 * Nothing here allocates after sb_ncp_work_create. */
#ifndef SB_NCP_H
#define SB_NCP_H

typedef struct {
  double smoothing;           /* e, m/s (default 1e-6) */
  double friction_smoothing;  /* et (default 1e-3) */
  double regularization;      /* delta: W + delta diag(s) (default 1e-8; see below) */
  double tol;                 /* |F|inf, m/s, at which Newton stops (default 1e-9) */
  int max_iterations;         /* default 50 */
  int warm_start;             /* lambda holds the last impulses on entry */
} sb_ncp_options;

typedef struct {
  int converged;
  int iterations;
  double residual;            /* |F|inf of the smoothed equations, m/s */
  double natural_residual;    /* sb_ncp_natural_residual of the answer (the exact NCP), m/s */
  double time_us;
  char message[256];
} sb_ncp_info;

typedef struct sb_ncp_work sb_ncp_work;

sb_ncp_options sb_ncp_default_options(void);
sb_ncp_work *sb_ncp_work_create(int max_contacts);
void sb_ncp_work_free(sb_ncp_work *w);

/* Solves nc contacts: W (3nc x 3nc column-major, frames t1 t2 n), b (3nc),
 * mu (nc). lambda (3nc): the warm start if opt->warm_start, then the
 * impulses. Every W_ii must have a positive trace. 0 when converged; -1
 * when not (lambda then holds the iterate of least |F|) or bad input
 * (message in info). */
int sb_ncp_solve(sb_ncp_work *w, int nc, const double *W, const double *b, const double *mu, double *lambda,
                 const sb_ncp_options *opt, sb_ncp_info *info);

/* The residual of the exact (unsmoothed) problem at lambda, m/s: the
 * largest over contacts of |min(s lambda_n, v_n)| and |s lambda_t -
 * P(s lambda_t - v_t)|, P the projection onto the disk of radius mu s
 * lambda_n (Alart-Curnier), s = trace(W_ii) / 3. Zero exactly at a solution. */
double sb_ncp_natural_residual(int nc, const double *W, const double *b, const double *mu,
                               const double *lambda);

#endif

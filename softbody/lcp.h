/* Linear complementarity problems: find z with
 *   w = M z + q,  z >= 0,  w >= 0,  z^T w = 0
 * for a dense n x n matrix M stored column-major (LAPACK order, leading
 * dimension n). Three solvers behind one call, with a fallback chain:
 *   FB     semismooth Newton on the Fischer-Burmeister function with a
 *          Levenberg-Marquardt trust region (the CUSP paper's solver)
 *   LEMKE  complementary pivoting with a lexicographic ratio test (exact;
 *          reports ray termination), then an active-set polish by LU
 *   PGS    projected Gauss-Seidel, scalar or by blocks (a block that is not
 *          a positive scalar is solved exactly by Lemke: needed for friction
 *          blocks, whose slack variable has a zero diagonal)
 * A solve never writes a non-finite number into z or w. */
#ifndef SB_LCP_H
#define SB_LCP_H

typedef enum { SB_LCP_FB, SB_LCP_LEMKE, SB_LCP_PGS, SB_LCP_NSOLVERS } sb_lcp_solver;

typedef enum {
  SB_LCP_SOLVED = 0,
  SB_LCP_MAX_ITER,   /* iteration (pivot, sweep) limit reached */
  SB_LCP_RAY,        /* Lemke ended on a secondary ray: no solution found */
  SB_LCP_STALLED,    /* no more progress possible (trust region collapsed, zero pivot) */
  SB_LCP_BAD_INPUT   /* n < 1, n above the workspace size, non-finite data */
} sb_lcp_status;

#define SB_LCP_MAX_CHAIN 4

typedef struct {
  double tol;            /* solved when every |min(z_i, w_i)| <= tol * max(1, ||q||inf, |q_i| + sum_j |M_ij z_j|) */
  int max_iter;          /* FB Newton iterations (default 100) */
  int max_pivots;        /* Lemke pivots (default 50 n + 100) */
  int max_sweeps;        /* PGS sweeps (default 10000) */
  int warm_start;        /* z holds a guess on entry: principal pivoting from its active set
                            is tried first (two passes), then FB and PGS start from it */
  int nchain;            /* solvers tried in order until one solves (FB from a guess that
                            fails is retried from zero before the next) */
  sb_lcp_solver chain[SB_LCP_MAX_CHAIN];
  int nblock;            /* PGS blocks (0: scalar) */
  const int *block;      /* their sizes, summing to n */
} sb_lcp_options;

typedef struct {
  sb_lcp_status status;
  sb_lcp_solver solver;  /* the solver whose answer is returned */
  int attempts;          /* solvers tried */
  int iterations;        /* of the returned solver: Newton steps, pivots or sweeps */
  double residual;       /* ||min(z, w)||inf, with w recomputed from M and q */
  double complementarity;/* |z^T w| */
  double time_us;        /* wall time of the whole call */
  char message[160];     /* why not solved, or which fallback answered */
  int warm_pivot;        /* 1: answered by pivoting from the guess's active set (warm_start),
                            no solver of the chain ran */
} sb_lcp_info;

typedef struct sb_lcp_work sb_lcp_work;

/* Defaults: tol 1e-12, chain Lemke -> FB -> PGS. Lemke first because it
 * needs no guess: on the contact LCPs of Scenario A (n = 48) it costs about
 * 24 us and never failed, where FB from a stale guess stalled on 14 % of the
 * steps and then cost a millisecond. */
sb_lcp_options sb_lcp_default_options(void);

/* Workspace for problems of size up to nmax; NULL when out of memory. */
sb_lcp_work *sb_lcp_work_create(int nmax);
void sb_lcp_work_free(sb_lcp_work *w);
int sb_lcp_work_size(const sb_lcp_work *w);

/* Solves (M, q); z (in/out) and w (out, may be NULL) have n entries. Returns
 * info->status. On failure z holds the finite iterate with the smallest
 * residual over all attempts (or 0). Never allocates. */
sb_lcp_status sb_lcp_solve(sb_lcp_work *work, int n, const double *M, const double *q, double *z,
                           double *w, const sb_lcp_options *opt, sb_lcp_info *info);

/* One solver without fallback (same contract; FB from a guess is still
 * retried from zero when it fails). */
sb_lcp_status sb_lcp_solve_with(sb_lcp_work *work, sb_lcp_solver solver, int n, const double *M,
                                const double *q, double *z, double *w, const sb_lcp_options *opt,
                                sb_lcp_info *info);

/* ||min(z, Mz + q)||inf and |z^T (Mz + q)| (w: n scratch, filled with Mz + q). */
double sb_lcp_residual(int n, const double *M, const double *q, const double *z, double *w,
                       double *complementarity);

const char *sb_lcp_solver_name(sb_lcp_solver s);   /* "fb", "lemke", "pgs" */
const char *sb_lcp_status_name(sb_lcp_status s);   /* "solved", "max_iter", "ray", ... */
/* Parses "fb" | "lemke" | "pgs"; returns 0 or -1. */
int sb_lcp_solver_parse(const char *name, sb_lcp_solver *out);

/* (condition.c) Solves a plain LCP after stages 2 and 3 (Tikhonov on every diagonal entry)
 * and returns z, w (may be NULL) and info in the ORIGINAL variables. Solved
 * means the original residual is within max(opt->tol, 1e-9) * max(1, |q|inf). */
sb_lcp_status sb_lcp_condition_solve(sb_lcp_work *work, int n, const double *M, const double *q,
                                     double *z, double *w, int ruiz_iterations, double tikhonov,
                                     const sb_lcp_options *opt, sb_lcp_info *info);

/* Reads the peer set's .dat format (../shared/reference/lcp/README.md):
 * dense (storage 0) or sparse block (storage 1). On success returns 0 and
 * malloc'ed *M (n x n column-major) and *q; else -1 with a message. */
int sb_lcp_read_dat(const char *path, int *n, double **M, double **q, char *error, int error_size);

/* Writes M (n x n column-major) and q in the same format (dense), exactly
 * (17 digits), with an optional free-text comment after q. 0 or -1. */
int sb_lcp_write_dat(const char *path, int n, const double *M, const double *q, const char *comment,
                     char *error, int error_size);

#endif

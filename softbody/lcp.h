/* Linear complementarity problems: find z with
 *   w = M z + q,  z >= 0,  w >= 0,  z^T w = 0
 * for a dense n x n matrix M stored column-major (LAPACK order, leading
 * dimension n). Three solvers behind one call, with a fallback chain:
 *   FB     semismooth Newton on the Fischer-Burmeister function with a
 *          Levenberg-Marquardt trust region (the CUSP paper's solver)
 *   LEMKE  complementary pivoting with a lexicographic ratio test (exact;
 *          reports ray termination), then an active-set polish by LU; after
 *          a ray or the pivot budget, again on a slightly perturbed q (a
 *          degenerate problem's ties broken), its answer finished and
 *          tested in the given problem
 *   PGS    projected Gauss-Seidel, scalar or by blocks (a block that is not
 *          a positive scalar is solved exactly by Lemke: needed for friction
 *          blocks, whose slack variable has a zero diagonal)
 * A solve never writes a non-finite number into z or w. */
#ifndef SB_LCP_H
#define SB_LCP_H

#include <stddef.h>

typedef enum { SB_LCP_FB, SB_LCP_LEMKE, SB_LCP_PGS, SB_LCP_NSOLVERS } sb_lcp_solver;

typedef enum {
  SB_LCP_SOLVED = 0,
  SB_LCP_MAX_ITER,   /* iteration (pivot, sweep) limit reached */
  SB_LCP_RAY,        /* Lemke ended on a secondary ray: no solution found */
  SB_LCP_STALLED,    /* no more progress possible (trust region collapsed, zero pivot) */
  SB_LCP_BAD_INPUT   /* n < 1, n above the workspace size, non-finite data */
} sb_lcp_status;

#define SB_LCP_MAX_CHAIN 4

/* Plausible ranges of the options (a solve outside them is refused,
 * SB_LCP_BAD_INPUT naming the field): a looser tol accepts what is no
 * solution, a tighter one is below the rounding of w; the budgets bound a
 * failing solve's time (Murty's problem needs 2^n pivots: n = 23 fits). */
#define SB_LCP_TOL_MIN 1e-15
#define SB_LCP_TOL_MAX 1e-3
#define SB_LCP_MAX_ITER_LIMIT 10000
#define SB_LCP_MAX_PIVOTS_LIMIT 10000000
#define SB_LCP_MAX_SWEEPS_LIMIT 1000000

/* A matrix given by its entries instead of stored (an operator such as the
 * contact LCP's on its Delassus blocks, kept_op.h, under its conditioning):
 * column(ctx, j, out) writes the n entries of column j, entry(ctx, i, j) one
 * entry. They must be the stored matrix's doubles bit for bit: the solvers
 * that read the matrix's entries through them then take the same path as on
 * the stored matrix (Lemke's revised form its columns; the warm pivot and
 * Lemke's finish their principal blocks, bordered factors, friction sets;
 * the acceptance test its row terms and exact rows). With apply, the
 * products of the warm pivot, Lemke's finish and the chain's checks and
 * residuals are the operator's too: they sum in its order, so answers may
 * differ from the stored matrix's in the last bits, and the acceptance test
 * bounds their rounding by apply_bound instead of by the row terms. With
 * apply and storage, M may be NULL (an unformed matrix): Lemke's auto form
 * is then the revised one at every size, PGS sweeps by columns, and FB runs
 * through apply and apply_transposed when both are given (fb_krylov.c); a
 * solve fills storage from column() only before a solver that must read M
 * stored runs (Lemke's tableau, FB without apply_transposed), and never
 * otherwise; it does not scan the entries for non-finite ones, which the
 * caller vouches for. */
typedef struct {
  const void *ctx;
  double (*entry)(const void *ctx, int i, int j);
  void (*column)(const void *ctx, int j, double *out);
  /* optional (NULL: by entry): the principal block M_SS on na indices, na x na column-major */
  void (*principal)(const void *ctx, const int *set, int na, double *out);
  /* optional (NULL: by entry): column j's entries at the nr rows rows[0..nr) (any order), into out */
  void (*column_rows)(const void *ctx, int j, const int *rows, int nr, double *out);
  /* optional, both or neither (NULL: M's product): y = b + M x (b NULL: M x; y must not alias x; b may be y),
   * and e with e_i >= |y_i - (b_i + sum_j M_ij x_j)|, the sum exact over M's doubles: a bound
   * on apply's own rounding for that x and b */
  void (*apply)(const void *ctx, const double *x, const double *b, double *y);
  void (*apply_bound)(const void *ctx, const double *x, const double *b, double *e);
  /* optional (NULL: none): y = M^T x (y must not alias x). With apply, FB runs on an unformed M
     through the two products (fb_krylov.c) instead of forming it in storage */
  void (*apply_transposed)(const void *ctx, const double *x, double *y);
  double apply_cost; /* optional (0: unknown): multiply-adds of one apply, so that a solver holding
                       some of M's columns formed can choose apply over their product (Lemke's
                       revised form, with k basic columns: apply when cheaper than n k) */
  double *storage; /* optional: n x n doubles where an unformed M (NULL) is formed when a solver needs it */
} sb_lcp_entries;

typedef struct {
  double tol;            /* solved when every |min(z_i, w_i)| <= tol * max(1, ||q||inf, |q_i| + sum_j |M_ij z_j|)
                            (0: 1e-12) */
  int max_iter;          /* FB Newton iterations (default 100) */
  int max_pivots;        /* Lemke pivots (default 50 n + 100) */
  int max_sweeps;        /* PGS sweeps (default 10000; it stops earlier when 1/40 of them
                            did not halve its residual) */
  int warm_start;        /* z holds a guess on entry: principal pivoting from its active set
                            is tried first (two passes), then FB and PGS start from it */
  int nchain;            /* solvers tried in order until one solves (FB from a guess that
                            fails is retried from zero before the next) */
  sb_lcp_solver chain[SB_LCP_MAX_CHAIN];
  int same_matrix;       /* M is the matrix of the last solve with this workspace (a re-solve with
                            another q, e.g. a proximal step): the warm pivot reuses the
                            factorizations of the last two sets it solved with when a set is the
                            same (same answer, bit for bit), and M is not scanned for non-finite
                            entries again when this workspace found it finite at this size */
  int reuse_solved_set;  /* with same_matrix: first one pass on the set that solved the last warm
                            pivot (the answer's set, degenerate indices with z = w = 0 included),
                            from its factorization; a set the guess's z - w > eps predicts leaves
                            those out and costs a factorization and a pass more. The answer may
                            then be another solution of a degenerate LCP than without (they
                            differ by round-off where the LCP's solution is unique) */
  int border_factors;    /* 1: the warm pivot factors a set that adds or removes a few indices of
                            the set its other cached factorization holds by bordering that one
                            (the Schur complement of the changed indices, O(k na^2) instead of
                            na^3). The answers differ from the plain LU's by round-off; without
                            it a same_matrix re-solve equals an uncached one bit for bit */
  int warm_last_set;     /* a warm solve of a new matrix of the size of the last solve with this
                            workspace: the set that solved the last warm pivot (by position) joins
                            the set the guess predicts, which leaves out its degenerate indices */
  int nblock;            /* PGS blocks (0: scalar) */
  const int *block;      /* their sizes, summing to n */
  int friction_blocks;   /* 1: the blocks are friction pyramids [normal, beta_1 .. beta_r, gamma]
                            (size r + 2, r >= 1 directions evenly spaced, as sb_contact assembles
                            them): the pivoting's active sets that are singular by construction
                            (two opposite betas of a contact without its gamma, say) are made
                            basic, the dependent betas left at zero, and factored by LU (a basic
                            answer, where without the option the least-norm one splits the
                            impulse over the dependent betas) */
  int warm_lemke;        /* 1: when the warm pivot fails, Lemke in the chain (from a guess) first
                            starts from the guess's complementary basis (z_i basic where the guess
                            is positive, as much of that set as pivots in regularly; the covering
                            vector's column all ones in that basis) on q itself, with a budget of
                            the set's size plus n pivots; when nothing pivots in or that path does
                            not solve, the cold attempts follow as with 0. 0 (default): cold */
  int lemke_form;        /* how Lemke keeps its basis: SB_LCP_LEMKE_TABLEAU the condensed tableau,
                            O(n^2) a pivot; SB_LCP_LEMKE_REVISED the basis's structural block K
                            factored (block LU with refactorizations), O(k^2 + n k) a pivot, k the
                            basic z's: the same path in exact arithmetic; SB_LCP_LEMKE_AUTO
                            (default) the revised form on problems of at least
                            SB_LCP_LEMKE_AUTO_MIN_N unknowns and on an unformed M
                            (sb_lcp_entries.storage) of any size, the tableau below
                            (docs/contact_scaling.md, sessions 25 to 27) */
  const sb_lcp_entries *entries; /* M's entries as functions, equal to M's doubles (NULL: none):
                            read instead of M where sb_lcp_entries says (issue 15, item 1: a step
                            towards a solve that never stores M; docs/contact_factor_design.md).
                            Not passed on by sb_lcp_condition_solve, whose solve is of its own
                            scaled copy */
  const double *second_guess; /* with warm_start (NULL: none): another guess (n), whose active set is
                            pivoted from as the first's is (its predicted set, then its support)
                            when the first's pivots fail, before the chain runs (which starts from
                            the first); a solve it answers counts as warm_pivot */
} sb_lcp_options;

enum { SB_LCP_LEMKE_TABLEAU = 0, SB_LCP_LEMKE_REVISED = 1, SB_LCP_LEMKE_AUTO = 2 };

/* lemke_form auto's threshold. Below it the revised form's fixed costs (a
 * LAPACK factorization and solves of a small K every pivot, the border
 * bookkeeping) exceed the tableau's n^2 update; from it on, on contact LCPs,
 * the revised form counts fewer instructions (docs/contact_scaling.md,
 * session 27, measures where the two cross). */
#define SB_LCP_LEMKE_AUTO_MIN_N 30

typedef struct {
  sb_lcp_status status;
  sb_lcp_solver solver;  /* the solver whose answer is returned */
  int attempts;          /* solvers tried */
  int iterations;        /* of the returned solver: Newton steps, pivots or sweeps */
  double residual;       /* ||min(z, w)||inf, with w recomputed from M and q (exactly in
                            the rows where rounding could hide a residual; sb_lcp_check) */
  double complementarity;/* |z^T w| */
  double time_us;        /* wall time of the whole call */
  char message[160];     /* why not solved, or which fallback answered */
  int warm_pivot;        /* 1: answered by pivoting from the guess's active set (warm_start),
                            no solver of the chain ran */
  int warm_lemke;        /* warm_lemke's start: 0 not tried (option off, no guess, or Lemke not
                            run from one); 1 the guess's basis singular, Lemke ran cold; 2 Lemke
                            ran from it but did not solve, the cold Lemke followed; 3 solved from
                            it */
  int lemke_form;        /* the form Lemke ran in (SB_LCP_LEMKE_TABLEAU or _REVISED, auto
                            resolved by the problem's size; the last run of the call, or for a
                            problem split into parts the revised form if any part's ran it); -1
                            when Lemke did not run */
  int matrix_formed;     /* 1: M was given unformed (NULL, sb_lcp_entries.storage) and this solve,
                            or the one whose matrix a same_matrix solve reuses, formed it */
} sb_lcp_info;

typedef struct sb_lcp_work sb_lcp_work;

/* Defaults: tol 1e-12, chain Lemke -> FB -> PGS. Lemke first because it
 * needs no guess: on the contact LCPs of Scenario A (n = 48) it costs about
 * 24 us and never failed, where FB from a stale guess stalled on 14 % of the
 * steps and then cost a millisecond. */
sb_lcp_options sb_lcp_default_options(void);

/* Workspace for problems of size up to nmax; NULL when out of memory. */
sb_lcp_work *sb_lcp_work_create(int nmax);
/* The bytes sb_lcp_work_create(nmax) asks for (its dense n x n matrices dominate). */
size_t sb_lcp_work_bytes(int nmax);
void sb_lcp_work_free(sb_lcp_work *w);
int sb_lcp_work_size(const sb_lcp_work *w);

/* warm_last_set's last solved set, which the workspace keeps between
 * solves: sb_lcp_last_set writes it as flags into in (n entries) and
 * returns its size, or 0 (in all zero) when the set it holds is not of a
 * problem of size n; sb_lcp_set_last_set replaces it with the flagged
 * indices of a problem of size n (none: no set). A host whose state lives
 * elsewhere (a simulator's copies and restores) keeps the set in that state
 * and sets it before each solve, so the solve reads nothing the state does
 * not hold. */
int sb_lcp_last_set(const sb_lcp_work *work, int n, int *in);
void sb_lcp_set_last_set(sb_lcp_work *work, int n, const int *in);

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

/* The test every "solved" has passed, in the problem given and in finite
 * arithmetic: z finite, every product M_ij z_j and partial sum of w = Mz + q
 * finite (s_i = |q_i| + sum_j |M_ij z_j| <= DBL_MAX), and in every row
 *   |min(z_i, w_i)| + e_i <= max(abs_tol, rel_tol * s_i)
 * with e_i a rigorous bound on the rounding error of the computed w_i (rows
 * where the plain sum's bound could decide, or exceeds abs_tol, are
 * recomputed exactly, then rounded). So the exact residual of z is within the
 * tolerance whenever this returns 1. w (n, out): Mz + q; *residual: the
 * largest |min(z_i, w_i)| (INFINITY when not finite); *bad_row (may be NULL):
 * the first row that failed, or -1; scratch: n doubles. */
int sb_lcp_check(int n, const double *M, const double *q, const double *z, double *w, double abs_tol,
                 double rel_tol, double *residual, int *bad_row, double *scratch);

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

/* (lcp_split.c) The solve of a problem read from a file, at a cost that
 * follows what M holds rather than n: the unknowns a zero row of M decides
 * are fixed first (z_i = 0 when q_i > 0; no solution, SB_LCP_RAY, when
 * q_i < 0), the rest split into independent LCPs (the connected components
 * of M's nonzero pattern), each solved by sb_lcp_condition_solve with a
 * workspace of its own size. Solved means the whole z passes sb_lcp_check in
 * the original problem with sb_lcp_condition_solve's tolerance. Allocates
 * (O(n) plus the largest component's workspace); O(n^2) besides the
 * components' solves. ncomp, nleft (may be NULL): the components and the
 * unknowns left in them. */
sb_lcp_status sb_lcp_solve_split(int n, const double *M, const double *q, double *z, double *w,
                                 int ruiz_iterations, double tikhonov, const sb_lcp_options *opt,
                                 sb_lcp_info *info, int *ncomp, int *nleft);

/* The largest n sb_lcp_read_dat accepts: M is returned dense (128 MB at
 * this size); a larger n is refused naming the limit. */
#define SB_LCP_DAT_MAX_N 4096

/* Reads the peer set's .dat format (../shared/reference/lcp/README.md):
 * dense (storage 0) or sparse block (storage 1). On success returns 0 and
 * malloc'ed *M (n x n column-major) and *q; else -1 with a message. Files
 * above 1 GiB and n above SB_LCP_DAT_MAX_N are refused; every count is
 * checked against the tokens the file holds before memory is reserved for
 * it (a sparse M is calloc'ed: untouched pages cost no memory). */
int sb_lcp_read_dat(const char *path, int *n, double **M, double **q, char *error, int error_size);

/* Writes M (n x n column-major) and q in the same format (dense), exactly
 * (17 digits), with an optional free-text comment after q. 0 or -1. */
int sb_lcp_write_dat(const char *path, int n, const double *M, const double *q, const char *comment,
                     char *error, int error_size);

#endif

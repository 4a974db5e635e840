/* The friction-pyramid rules of the warm pivot (lcp_internal.h): the active
 * sets sb_lcp_friction_set_singular declares singular by construction are
 * singular in the conditioned LCP that sb_contact really solves, and the
 * ones it does not declare are not; sb_lcp_friction_set_basic reduces each
 * declared set to a regular one of the same rank (both checked by singular
 * values, LAPACK's dgesvd, independent of the rules); a sticking contact
 * whose guess loads both betas of an opposite pair is solved by the warm
 * pivot on LU, without the least-norm factorization, with one beta of the
 * pair left at zero, and the answer solves the LCP (checked here by plain
 * arithmetic); and a bad block description is refused with a message naming
 * it. */
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contact.h"
#include "lcp.h"
#include "lcp_internal.h"
#include "testutil.h"

#define NV 12
#define NC 3

/* A dense 12-dof body (M = B B^T + I) under NC point contacts with random
 * Jacobians and normal +z, mu = 0.5, solved once with r directions; returns
 * the problem (its conditioned LCP in sb_contact_lcp) or NULL. */
static sb_contact_problem *random_pyramids(int r, unsigned long long seed) {
  char err[256];
  sb_contact_problem *P = sb_contact_create(NC, 1, NV, r, err, sizeof err);
  if (!P) {
    fprintf(stderr, "%s\n", err);
    return NULL;
  }
  unsigned long long s = seed;
  double B[NV * NV], M[NV * NV], vfree[NV], jac[NC][3 * NV];
  for (int k = 0; k < NV * NV; k++) B[k] = tu_rand_r(&s);
  for (int i = 0; i < NV; i++)
    for (int j = 0; j < NV; j++) {
      double v = i == j;
      for (int k = 0; k < NV; k++) v += B[i * NV + k] * B[j * NV + k];
      M[i * NV + j] = v;
    }
  for (int i = 0; i < NV; i++) vfree[i] = 0.1 * tu_rand_r(&s);
  int ok = sb_contact_add_dense(P, NV, M, vfree, err, sizeof err) == 0;
  for (int c = 0; ok && c < NC; c++) {
    for (int k = 0; k < 3 * NV; k++) jac[c][k] = tu_rand_r(&s);
    sb_contact ct;
    memset(&ct, 0, sizeof ct);
    ct.side[0].body = 0;
    ct.side[0].jac = jac[c];
    ct.side[1].body = -1;
    ct.normal[2] = 1;
    ct.friction = 0.5;
    ct.id = c;
    ok = sb_contact_add(P, &ct, err, sizeof err) >= 0;
  }
  sb_contact_options opt = sb_contact_default_options();
  opt.directions = r;
  opt.screen = 0; /* every contact in the LCP, the separating ones too */
  sb_contact_info info;
  ok = ok && sb_contact_solve(P, 1e-3, &opt, &info, err, sizeof err) == 0;
  if (!ok) {
    fprintf(stderr, "random_pyramids: %s\n", err);
    sb_contact_free(P);
    return NULL;
  }
  return P;
}

/* sigma_min / sigma_max of A's principal submatrix on the flagged rows;
 * *rank: its singular values above 1e-10 sigma_max (when rank is not NULL). */
static double set_conditioning_rank(int n, const double *A, const int *in, int *rank);
static double set_conditioning(int n, const double *A, const int *in) { return set_conditioning_rank(n, A, in, NULL); }
static double set_conditioning_rank(int n, const double *A, const int *in, int *rank) {
  int set[NC * (SB_CONTACT_MAX_DIRECTIONS + 2)], na = 0;
  for (int i = 0; i < n; i++)
    if (in[i]) set[na++] = i;
  double S[NC * (SB_CONTACT_MAX_DIRECTIONS + 2) * NC * (SB_CONTACT_MAX_DIRECTIONS + 2)];
  double sv[NC * (SB_CONTACT_MAX_DIRECTIONS + 2)], superb[NC * (SB_CONTACT_MAX_DIRECTIONS + 2)];
  for (int b = 0; b < na; b++)
    for (int a = 0; a < na; a++) S[b * na + a] = A[(size_t)set[b] * n + set[a]];
  if (LAPACKE_dgesvd(LAPACK_COL_MAJOR, 'N', 'N', na, na, S, na, sv, NULL, 1, NULL, 1, superb)) return NAN;
  if (rank) {
    *rank = 0;
    for (int k = 0; k < na; k++) *rank += sv[k] > 1e-10 * sv[0];
  }
  return sv[na - 1] / sv[0];
}

/* Every subset of one block's betas, with and without its gamma, the
 * normals of all blocks in: the rule against the singular values. */
static void test_rule_against_svd(int r, unsigned long long seed) {
  sb_contact_problem *P = random_pyramids(r, seed);
  EXPECT(P != NULL, "r = %d: the contact problem solves", r);
  if (!P) return;
  int n;
  const double *A, *b, *Ac, *bc;
  sb_contact_lcp(P, &n, &A, &b, &Ac, &bc);
  int bs = r + 2, nb = n / bs, block[NC], flagged = 0, clear = 0;
  EXPECT(n == NC * bs, "r = %d: every contact kept (n = %d)", r, n);
  for (int k = 0; k < nb; k++) block[k] = bs;
  double worst_flagged = 0, worst_clear = 1, worst_basic = 1;
  for (int blk = 0; blk < nb && n == NC * bs; blk++)
    for (int mask = 1; mask < 1 << r; mask++)
      for (int gamma = 0; gamma < 2; gamma++) {
        int in[NC * (SB_CONTACT_MAX_DIRECTIONS + 2)] = {0}, count = 0;
        for (int k = 0; k < nb; k++) in[k * bs] = 1;
        for (int k = 0; k < r; k++) count += in[blk * bs + 1 + k] = (mask >> k) & 1;
        in[blk * bs + bs - 1] = gamma;
        double c = set_conditioning(n, Ac, in);
        if (sb_lcp_friction_set_singular(nb, block, in)) {
          flagged++;
          worst_flagged = fmax(worst_flagged, c);
          EXPECT(c < 1e-12, "r = %d, block %d, betas 0x%x, gamma %d: declared singular, but sigma_min / "
                 "sigma_max = %.3g", r, blk, mask, gamma, c);
          /* made basic about some impulse of the set's betas: regular, and of
           * the rank of the whole set (the dropped rows were combinations) */
          int rank, kept = 0, dropped[NC * (SB_CONTACT_MAX_DIRECTIONS + 2)], nd;
          double zr[NC * (SB_CONTACT_MAX_DIRECTIONS + 2)];
          unsigned long long zs = seed ^ (unsigned long long)(mask * 131 + gamma);
          set_conditioning_rank(n, Ac, in, &rank);
          for (int i = 0; i < n; i++) zr[i] = in[i] ? 1 + tu_rand_r(&zs) : 0;
          nd = sb_lcp_friction_set_basic(nb, block, n, Ac, NULL, zr, in, dropped);
          for (int i = 0; i < n; i++) kept += in[i];
          double cb = set_conditioning(n, Ac, in);
          worst_basic = fmin(worst_basic, cb);
          EXPECT(nd > 0 && !sb_lcp_friction_set_singular(nb, block, in) && cb > 1e-8 && kept == rank,
                 "r = %d, block %d, betas 0x%x, gamma %d: made basic, %d dropped, %d kept of rank %d, sigma_min / "
                 "sigma_max %.3g", r, blk, mask, gamma, nd, kept, rank, cb);
        } else {
          clear++;
          worst_clear = fmin(worst_clear, c);
          EXPECT(c > 1e-8, "r = %d, block %d, betas 0x%x, gamma %d (%d betas): not declared singular, but "
                 "sigma_min / sigma_max = %.3g", r, blk, mask, gamma, count, c);
        }
      }
  printf("r = %d: %d sets declared singular (largest sigma ratio %.2g; made basic, smallest %.2g), %d not "
         "(smallest %.2g)\n", r, flagged, worst_flagged, worst_basic, clear, worst_clear);
  EXPECT(flagged > 0 && clear > 0, "r = %d: both kinds of set seen", r);
  sb_contact_free(P);
}

/* A point mass (M = diag(2, 3, 1.5)) pressed onto a plane (normal +z) and
 * sliding along x at 0.2 m/s into a friction of mu = 1: it sticks, the
 * friction along -x, the y slip zero. Its conditioned LCP from sb_contact
 * is solved cold; then warm from a guess whose friction is split over both
 * betas of the opposite pair along x (kmax, kmax + r/2), as a least-norm
 * answer leaves it: the predicted set {normal, both betas} is singular by
 * construction. With friction_blocks the warm pivot makes it basic and
 * solves it on LU: no least-norm factorization, one beta of the pair at
 * zero; without, the least-norm answer keeps both loaded. Either answer is
 * checked by plain arithmetic: z >= 0, w = A z + b >= 0, z_i w_i = 0, each
 * to 1e-12 of the row's terms or of max(1, |b|), the solvers' yardstick. */
static int lcp_holds(int n, const double *A, const double *b, const double *z, double *worst) {
  int ok = 1;
  double qs = 1;
  *worst = 0;
  for (int i = 0; i < n; i++) qs = fmax(qs, fabs(b[i]));
  for (int i = 0; i < n; i++) {
    double w = b[i], s = fabs(b[i]);
    for (int j = 0; j < n; j++) {
      w += A[(size_t)j * n + i] * z[j];
      s += fabs(A[(size_t)j * n + i] * z[j]);
    }
    double e = fmax(-z[i], fmax(-w, fabs(fmin(z[i], w)))) / fmax(s, qs);
    *worst = fmax(*worst, e);
    ok &= e <= 1e-12;
  }
  return ok;
}

static void test_sticking_pair(int r) {
  char err[256];
  sb_contact_problem *P = sb_contact_create(1, 1, 3, r, err, sizeof err);
  EXPECT(P != NULL, "r = %d: problem created (%s)", r, P ? "" : err);
  if (!P) return;
  double M[9] = {2, 0, 0, 0, 3, 0, 0, 0, 1.5}, vfree[3] = {0.2, 0, -1}, jac[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  int ok = sb_contact_add_dense(P, 3, M, vfree, err, sizeof err) == 0;
  sb_contact ct;
  memset(&ct, 0, sizeof ct);
  ct.side[0].body = 0;
  ct.side[0].jac = jac;
  ct.side[1].body = -1;
  ct.normal[2] = 1;
  ct.tangent[0] = 1;
  ct.friction = 1;
  ct.id = 1;
  ok = ok && sb_contact_add(P, &ct, err, sizeof err) >= 0;
  sb_contact_options copt = sb_contact_default_options();
  copt.directions = r;
  sb_contact_info cinfo;
  ok = ok && sb_contact_solve(P, 1e-3, &copt, &cinfo, err, sizeof err) == 0;
  EXPECT(ok, "r = %d: the contact problem solves (%s)", r, ok ? "" : err);
  if (!ok) {
    sb_contact_free(P);
    return;
  }
  int n;
  const double *A, *b, *Ac, *bc;
  sb_contact_lcp(P, &n, &A, &b, &Ac, &bc);
  int bs = r + 2, block[1] = {bs};
  EXPECT(n == bs, "r = %d: one contact kept (n = %d)", r, n);
  sb_lcp_work *w = sb_lcp_work_create(n);
  double z0[SB_CONTACT_MAX_DIRECTIONS + 2] = {0}, zg[SB_CONTACT_MAX_DIRECTIONS + 2];
  double z[2][SB_CONTACT_MAX_DIRECTIONS + 2];
  sb_lcp_options o = sb_lcp_default_options();
  o.nblock = 1;
  o.block = block;
  sb_lcp_info info;
  EXPECT(n == bs && sb_lcp_solve(w, n, Ac, bc, z0, NULL, &o, &info) == SB_LCP_SOLVED, "r = %d: cold solve: %s", r,
         info.message);
  if (n != bs) {
    sb_lcp_work_free(w);
    sb_contact_free(P);
    return;
  }
  int kmax = 0;
  for (int k = 1; k < r; k++)
    if (z0[1 + k] > z0[1 + kmax]) kmax = k;
  int kopp = (kmax + r / 2) % r, nloaded = 0;
  for (int k = 0; k < r; k++) nloaded += z0[1 + k] > 0;
  EXPECT(z0[0] > 0 && z0[1 + kmax] > 0 && nloaded == 1 && z0[bs - 1] == 0,
         "r = %d: the mass sticks with its friction on one direction (%d loaded, fn %.3g, gamma %.3g)", r, nloaded,
         z0[0], z0[bs - 1]);
  memcpy(zg, z0, sizeof zg);
  zg[1 + kmax] += 0.5 * z0[1 + kmax];
  zg[1 + kopp] += 0.5 * z0[1 + kmax] * (-Ac[(size_t)(1 + kmax) * n + bs - 1]) / (-Ac[(size_t)(1 + kopp) * n + bs - 1]);
  int in[SB_CONTACT_MAX_DIRECTIONS + 2];
  for (int i = 0; i < n; i++) in[i] = zg[i] > 0;
  EXPECT(sb_lcp_friction_set_singular(1, block, in), "r = %d: the guess's set is singular by construction", r);
  o.warm_start = 1;
  for (int fb = 0; fb < 2; fb++) {
    memcpy(z[fb], zg, sizeof zg);
    o.friction_blocks = fb;
    long ln0 = w->least_norm_factors;
    sb_lcp_status st = sb_lcp_solve(w, n, Ac, bc, z[fb], NULL, &o, &info);
    long least_norm = w->least_norm_factors - ln0;
    double worst;
    int holds = lcp_holds(n, Ac, bc, z[fb], &worst);
    printf("r = %d, friction_blocks %d: warm pivot %d, least-norm factorizations %ld, betas of the pair %.3g and "
           "%.3g, LCP off by %.2g of its terms\n", r, fb, info.warm_pivot, least_norm, z[fb][1 + kmax],
           z[fb][1 + kopp], worst);
    EXPECT(st == SB_LCP_SOLVED && info.warm_pivot && holds, "r = %d, friction_blocks %d: solved by the warm pivot "
           "(%s), the LCP holds to %.2g", r, fb, info.message, worst);
    if (fb) {
      EXPECT(least_norm == 0, "r = %d: no least-norm factorization (%ld)", r, least_norm);
      EXPECT(z[fb][1 + kopp] == 0 && z[fb][1 + kmax] > 0, "r = %d: one beta of the pair at zero (%.3g, %.3g)", r,
             z[fb][1 + kmax], z[fb][1 + kopp]);
    } else {
      EXPECT(least_norm > 0 && z[fb][1 + kopp] > 0, "r = %d, without the blocks: the least-norm path splits the "
             "pair (%ld factorizations, %.3g)", r, least_norm, z[fb][1 + kopp]);
    }
  }
  /* the same friction either way: beta_kmax - beta_kopp (scaled by the columns' weights) */
  double ck = -Ac[(size_t)(1 + kmax) * n + bs - 1], co = -Ac[(size_t)(1 + kopp) * n + bs - 1];
  double f0 = z[0][1 + kmax] * ck - z[0][1 + kopp] * co, f1 = z[1][1 + kmax] * ck - z[1][1 + kopp] * co;
  EXPECT(fabs(f0 - f1) <= 1e-12 * fabs(f1) && fabs(z[0][0] - z[1][0]) <= 1e-12 * z[1][0],
         "r = %d: the same normal and net friction impulse (%.17g vs %.17g)", r, f0, f1);
  sb_lcp_work_free(w);
  sb_contact_free(P);
}

/* Sticking friction statically indeterminate across contacts: a body of RV dofs on RC contacts
 * whose first tangent row is, on every other contact, the difference of the next contact's normal
 * and its own (as a lying rod's axial slip at a disk follows the heights of its neighbours), so a
 * set with those betas and the normals is singular. Each problem is solved from zero, then its
 * free velocity is moved by 10 % and it is solved again from the first answer. Where the
 * predicted set and the support do not answer and a contact unloads, the pivot on regular sets
 * (pivot_from_guess) is tried before Lemke: it must answer some of those (12 of the 119 the
 * first tries do not answer, on five BLAS kernels, when written; without it all 119 were cold),
 * and every answer must hold. */
#define RC 8
#define RV 30
#define RB 6 /* a pyramid of 4 directions: normal, 4 betas, gamma */

static void regular_problem(unsigned long long seed, double *M, double *q0, double *q1) {
  unsigned long long s = seed;
  int n = RC * RB, ng = RC * (RB - 1);
  double L[RV * RV] = {0}, Jn[RC * RV], Jt1[RC * RV], Jt2[RC * RV], G[RC * (RB - 1) * RV], GL[RC * (RB - 1) * RV];
  for (int i = 0; i < RV; i++)
    for (int j = 0; j <= i; j++) L[i * RV + j] = (i == j) + 0.3 * tu_rand_r(&s);
  for (int c = 0; c < RC; c++)
    for (int j = 0; j < RV; j++) {
      Jn[c * RV + j] = (j == 0) + 0.3 * tu_rand_r(&s);
      Jt2[c * RV + j] = tu_rand_r(&s);
    }
  for (int c = 0; c < RC; c++)
    for (int j = 0; j < RV; j++)
      Jt1[c * RV + j] = c % 2 == 0 ? tu_rand_r(&s) : Jn[(c + 1) % RC * RV + j] - Jn[c * RV + j];
  /* G's rows per contact: the normal, then D_k . (t1, t2); the LCP's M = G L L^T G^T there */
  for (int c = 0; c < RC; c++) {
    memcpy(G + c * (RB - 1) * RV, Jn + c * RV, RV * sizeof(double));
    for (int k = 0; k < RB - 2; k++)
      for (int j = 0; j < RV; j++)
        G[(c * (RB - 1) + 1 + k) * RV + j] = cos(M_PI * k / 2) * Jt1[c * RV + j] + sin(M_PI * k / 2) * Jt2[c * RV + j];
  }
  for (int a = 0; a < ng; a++)
    for (int j = 0; j < RV; j++) {
      double v = 0;
      for (int k = j; k < RV; k++) v += G[a * RV + k] * L[k * RV + j];
      GL[a * RV + j] = v;
    }
  memset(M, 0, (size_t)n * n * sizeof(double));
  for (int a = 0; a < ng; a++)
    for (int b = 0; b < ng; b++) {
      double v = 0;
      for (int j = 0; j < RV; j++) v += GL[a * RV + j] * GL[b * RV + j];
      M[(size_t)(b / (RB - 1) * RB + b % (RB - 1)) * n + a / (RB - 1) * RB + a % (RB - 1)] = v;
    }
  for (int c = 0; c < RC; c++) { /* gamma: mu fn - sum beta >= 0, and + gamma in each beta's row */
    int g = c * RB + RB - 1;
    M[(size_t)(c * RB) * n + g] = 0.5;
    for (int k = 1; k <= RB - 2; k++) {
      M[(size_t)g * n + c * RB + k] = 1;
      M[(size_t)(c * RB + k) * n + g] = -1;
    }
  }
  double v0[RV], v1[RV];
  for (int j = 0; j < RV; j++) {
    v0[j] = -(j == 0) + 0.05 * tu_rand_r(&s);
    v1[j] = v0[j] + 0.1 * tu_rand_r(&s);
  }
  for (int a = 0; a < ng; a++) {
    double x0 = 0, x1 = 0;
    for (int j = 0; j < RV; j++) {
      x0 += G[a * RV + j] * v0[j];
      x1 += G[a * RV + j] * v1[j];
    }
    q0[a / (RB - 1) * RB + a % (RB - 1)] = x0;
    q1[a / (RB - 1) * RB + a % (RB - 1)] = x1;
  }
  for (int c = 0; c < RC; c++) q0[c * RB + RB - 1] = q1[c * RB + RB - 1] = 0;
}

static void test_regular_pivot(void) {
  enum { n = RC * RB };
  static double M[n * n];
  double q0[n], q1[n], z[n], worst_all = 0;
  int block[RC], warm = 0, regular = 0, cold = 0, unsolved = 0, wrong = 0;
  for (int c = 0; c < RC; c++) block[c] = RB;
  sb_lcp_work *w = sb_lcp_work_create(n);
  for (int seed = 1; seed <= 600; seed++) {
    regular_problem(1000 + seed, M, q0, q1);
    sb_lcp_options o = sb_lcp_default_options();
    o.friction_blocks = 1;
    o.nblock = RC;
    o.block = block;
    sb_lcp_info info;
    memset(z, 0, sizeof z);
    if (sb_lcp_solve(w, n, M, q0, z, NULL, &o, &info) != SB_LCP_SOLVED) {
      unsolved++;
      continue;
    }
    o.warm_start = 1;
    long before = w->regular_pivots;
    if (sb_lcp_solve(w, n, M, q1, z, NULL, &o, &info) != SB_LCP_SOLVED) {
      unsolved++;
      continue;
    }
    double worst;
    wrong += !lcp_holds(n, M, q1, z, &worst);
    worst_all = fmax(worst_all, worst);
    if (!info.warm_pivot) cold++;
    else if (w->regular_pivots > before) regular++;
    else warm++;
  }
  printf("friction dependent across contacts, 600 problems solved again from the last answer: %d by the first "
         "tries, %d by the pivot on regular sets, %d cold, %d unsolved; answers off by %.2g of their terms\n", warm,
         regular, cold, unsolved, worst_all);
  EXPECT(unsolved == 0 && wrong == 0, "every problem solved (%d not), every answer holds (%d not, %.2g)", unsolved,
         wrong, worst_all);
  EXPECT(regular >= 6, "the pivot on regular sets answered %d of the %d the first tries did not", regular,
         regular + cold);
  sb_lcp_work_free(w);
}

static void test_refusals(void) {
  sb_lcp_work *w = sb_lcp_work_create(6);
  double M[36] = {0}, q[6] = {-1, 0, 0, 0, 0, 0}, z[6] = {0};
  for (int k = 0; k < 6; k++) M[7 * k] = 1;
  sb_lcp_options o = sb_lcp_default_options();
  sb_lcp_info info;
  o.friction_blocks = 1;
  EXPECT(sb_lcp_solve(w, 6, M, q, z, NULL, &o, &info) == SB_LCP_BAD_INPUT && strstr(info.message, "friction_blocks"),
         "friction_blocks without blocks refused, naming it: %s", info.message);
  int two[3] = {2, 2, 2};
  o.nblock = 3;
  o.block = two;
  EXPECT(sb_lcp_solve(w, 6, M, q, z, NULL, &o, &info) == SB_LCP_BAD_INPUT && strstr(info.message, "friction block 0"),
         "a block of 2 refused, naming it: %s", info.message);
  int six[1] = {6};
  o.nblock = 1;
  o.block = six;
  o.friction_blocks = 2;
  EXPECT(sb_lcp_solve(w, 6, M, q, z, NULL, &o, &info) == SB_LCP_BAD_INPUT && strstr(info.message, "friction_blocks = 2"),
         "friction_blocks = 2 refused: %s", info.message);
  o.friction_blocks = 1;
  EXPECT(sb_lcp_solve(w, 6, M, q, z, NULL, &o, &info) == SB_LCP_SOLVED && fabs(z[0] - 1) < 1e-12,
         "a valid pyramid block solves: %s", info.message);
  sb_lcp_work_free(w);
}

int main(void) {
  test_rule_against_svd(3, 0x1234ull);
  test_rule_against_svd(4, 0x2345ull);
  test_rule_against_svd(6, 0x3456ull);
  test_sticking_pair(4);
  test_sticking_pair(6);
  test_sticking_pair(8);
  test_regular_pivot();
  test_refusals();
  return test_report("test_lcp_friction_sets");
}

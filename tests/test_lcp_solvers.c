/* The three LCP solvers on problems with a unique solution (P-matrices):
 * they must agree with each other and, for small sizes, with a brute-force
 * enumeration of complementary bases; plus degenerate problems, warm starts,
 * the fallback chain and the no-NaN contract. */
#include <float.h>
#include <lapacke.h>
#include <string.h>

#include "lcp.h"
#include "lcp_internal.h" /* the warm pivot's factorization count */
#include "testutil.h"

#define NMAX 80

/* Brute force: every index set B, solve M_BB z_B = -q_B, check signs. */
static int enumerate(int n, const double *M, const double *q, double *z) {
  double A[12 * 12], x[12];
  int piv[12];
  for (unsigned long set = 0; set < (1ul << n); set++) {
    int idx[12], nb = 0;
    for (int i = 0; i < n; i++)
      if (set >> i & 1) idx[nb++] = i;
    for (int a = 0; a < nb; a++) {
      for (int b = 0; b < nb; b++) A[b * nb + a] = M[idx[b] * n + idx[a]];
      x[a] = -q[idx[a]];
    }
    if (nb && LAPACKE_dgesv(LAPACK_COL_MAJOR, nb, 1, A, nb, piv, x, nb)) continue;
    double zz[12] = {0};
    int ok = 1;
    for (int a = 0; a < nb; a++) {
      if (x[a] < -1e-12) ok = 0;
      zz[idx[a]] = x[a];
    }
    for (int i = 0; i < n && ok; i++) {
      double w = q[i];
      for (int j = 0; j < n; j++) w += M[j * n + i] * zz[j];
      if (w < -1e-10) ok = 0;
    }
    if (ok) {
      memcpy(z, zz, n * sizeof(double));
      return 0;
    }
  }
  return -1;
}

typedef enum { SPD, DOMINANT, SCALED } kind;

/* Ms = B^T B / n + 0.1 I for a random B (scratch, n x n): symmetric positive
 * definite, so the LCP's solution is unique. */
static void random_spd(int n, double *B, double *Ms) {
  for (int i = 0; i < n * n; i++) B[i] = tu_rand();
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) {
      double sum = 0;
      for (int l = 0; l < n; l++) sum += B[l * n + i] * B[l * n + j];
      Ms[j * n + i] = sum / n + (i == j ? 0.1 : 0);
    }
}

static void make(kind k, int n, double *M, double *q) {
  double B[NMAX * NMAX];
  for (int i = 0; i < n * n; i++) B[i] = tu_rand();
  for (int i = 0; i < n; i++) q[i] = tu_rand() * 3;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) {
      double s = 0;
      switch (k) {
        case SPD:
          for (int l = 0; l < n; l++) s += B[l * n + i] * B[l * n + j];
          s += i == j ? 0.1 : 0;
          break;
        case DOMINANT: /* nonsymmetric, strictly diagonally dominant, positive diagonal */
          s = i == j ? n + 1.0 : B[j * n + i];
          break;
        case SCALED: /* Dl (SPD) Dr: still a P-matrix, nonsymmetric, scales 0.1..10 */
          for (int l = 0; l < n; l++) s += B[l * n + i] * B[l * n + j];
          s = (s + (i == j ? 0.1 : 0)) * pow(10, sin(7.0 * i)) * pow(10, cos(5.0 * j));
          break;
      }
      M[j * n + i] = s;
    }
}

/* ---------- the bordered factorization's singularity test ---------- */

/* Makes M_BB (B: nb indices of the n x n M) nearly singular: its smallest
 * singular value set to ratio times its largest (ratio 1: M unchanged). */
static void nearly_singular_block(int n, double *M, const int *B, int nb, double ratio) {
  if (ratio >= 1) return;
  double A[NMAX * NMAX], U[NMAX * NMAX], Vt[NMAX * NMAX], sv[NMAX], superb[NMAX];
  for (int b = 0; b < nb; b++)
    for (int a = 0; a < nb; a++) A[b * nb + a] = M[B[b] * n + B[a]];
  LAPACKE_dgesvd(LAPACK_COL_MAJOR, 'A', 'A', nb, nb, A, nb, sv, U, nb, Vt, nb, superb);
  sv[nb - 1] = ratio * sv[0];
  for (int b = 0; b < nb; b++)
    for (int a = 0; a < nb; a++) {
      double v = 0;
      for (int l = 0; l < nb; l++) v += U[l * nb + a] * sv[l] * Vt[b * nb + l];
      M[B[b] * n + B[a]] = v;
    }
}

typedef struct {
  int base_how, plain_how, bordered_how; /* sb_lcp_factor_set's kinds */
  double dx;                             /* |x_bordered - x_plain|inf / |x_plain|inf, both solved */
} border_trial;

/* Factors M_CC into slot 0 (plain), then M_BB into slot 1 bordered from it
 * and again plainly, and solves M_BB x = b (b random) both ways. */
static border_trial border_compare(sb_lcp_work *wk, int n, const double *M, const int *C, int nc, const int *B,
                                   int nb) {
  border_trial t = {0, 0, 0, INFINITY};
  double b[NMAX], xb[NMAX], xp[NMAX];
  for (int i = 0; i < nb; i++) b[i] = tu_rand();
  t.base_how = sb_lcp_factor_set(wk, 0, n, M, C, nc, 0, 0);
  t.bordered_how = sb_lcp_factor_set(wk, 1, n, M, B, nb, 0, 1);
  memcpy(xb, b, (size_t)nb * sizeof(double));
  int okb = sb_lcp_factor_solve(wk, 1, xb);
  t.plain_how = sb_lcp_factor_set(wk, 1, n, M, B, nb, 0, 0);
  memcpy(xp, b, (size_t)nb * sizeof(double));
  int okp = sb_lcp_factor_solve(wk, 1, xp);
  if (okb && okp) t.dx = tu_relerr(xb, xp, nb, 1e-300);
  return t;
}

/* The bordered factorization (sb_lcp_factor_set with border) must reject a
 * set wherever the plain LU would (fb_factor_lu's pivot test): its Schur
 * complement's pivots alone pass trivially when the complement is 1 x 1,
 * and a removal's complement is in units of M^-1. Targeted: M_BB nearly
 * singular (smallest singular value 1e-15 of the largest) with B = C + one
 * index and B = C - one index. Then random sets of a random matrix, C less
 * nrem indices plus nadd, 1 to |C| / 3 in all, with M_BB regular (as drawn), ill-conditioned
 * (1e-4) or nearly singular (1e-15): accepted in the first two cases, with
 * the plain path's solution, rejected in the third and wherever the plain
 * path rejects. */
static void test_bordered_singularity(sb_lcp_work *wk) {
  enum { n = 24 };
  static double M[n * n];
  /* targeted */
  for (int removal = 0; removal < 2; removal++) {
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) M[j * n + i] = tu_rand() + (i == j ? 3 : 0);
    int C[10], B[11], nc = 10, nb = 0;
    for (int i = 0; i < nc; i++) C[i] = i;
    for (int i = 0; i <= nc; i++)
      if (removal ? i != 4 && i < nc : 1) B[nb++] = i;
    nearly_singular_block(n, M, B, nb, 1e-15);
    border_trial t = border_compare(wk, n, M, C, nc, B, nb);
    EXPECT(t.base_how == 1 && t.plain_how == 2 && t.bordered_how != 3,
           "bordered singularity (%s): M_BB nearly singular, base LU %d, plain %d (want 1, 2: rejected), "
           "bordered %d (want not 3)", removal ? "C less one index" : "C plus one index", t.base_how, t.plain_how,
           t.bordered_how);
  }
  /* M_CC ill-conditioned (singular values 1e10 apart, its near null vectors u, v) and M_BB = [M_CC b;
   * c^T d] singular: b = M_CC y (y random, so u^T b = 0 and M_CC^-1 b = y is exact), c = v + random,
   * d = c^T y. M_CC^-1 b through M_CC's LU errs along v by about DBL_EPSILON 1e10 |y|, which c^T picks
   * up: the computed complement d - c^T M_CC^-1 b is that rounding, far above 1e-11 of M's scale. */
  {
    enum { nc = 10 };
    double A[nc * nc], U[nc * nc], Vt[nc * nc], sv[nc], superb[nc], y[nc];
    int C[nc], B[nc + 1];
    for (int i = 0; i < nc * nc; i++) A[i] = tu_rand() + (i % (nc + 1) == 0 ? 3 : 0);
    LAPACKE_dgesvd(LAPACK_COL_MAJOR, 'A', 'A', nc, nc, A, nc, sv, U, nc, Vt, nc, superb);
    sv[nc - 1] = 1e-10 * sv[0];
    memset(M, 0, sizeof M);
    for (int i = 0; i < nc; i++) y[i] = tu_rand();
    for (int b = 0; b < nc; b++)
      for (int a = 0; a < nc; a++) {
        double v = 0;
        for (int l = 0; l < nc; l++) v += U[l * nc + a] * sv[l] * Vt[b * nc + l];
        M[b * n + a] = v;
      }
    double d = 0;
    for (int a = 0; a < nc; a++) {
      double bv = 0, cv = Vt[a * nc + nc - 1] + 0.3 * tu_rand(); /* v = Vt's last row */
      for (int b = 0; b < nc; b++) bv += M[b * n + a] * y[b];
      M[nc * n + a] = bv;
      M[a * n + nc] = cv;
      d += cv * y[a];
    }
    M[nc * n + nc] = d;
    for (int i = 0; i <= nc; i++) {
      if (i < nc) C[i] = i;
      B[i] = i;
    }
    border_trial t = border_compare(wk, n, M, C, nc, B, nc + 1);
    EXPECT(t.base_how == 1 && t.plain_how == 2 && t.bordered_how != 3,
           "bordered singularity (M_CC's singular values 1e10 apart, M_BB singular): base LU %d, plain %d (want "
           "1, 2), bordered %d (want not 3)", t.base_how, t.plain_how, t.bordered_how);
  }
  /* random */
  int counted[3] = {0, 0, 0}, agree[3] = {0, 0, 0}, plain_missed = 0;
  double worst_dx = 0, ratios[3] = {1, 1e-4, 1e-15};
  for (int trial = 0; trial < 300; trial++) {
    int kind = trial % 3, in_c[n] = {0}, in_b[n], C[n], B[n], nc = 0, nb = 0;
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) M[j * n + i] = tu_rand() + (i == j ? 3 : 0);
    int want = 9 + (int)((tu_rand() + 1) * 4.5); /* 9..18 */
    while (nc < want) {
      int i = (int)((tu_rand() + 1) * 0.5 * n) % n;
      if (!in_c[i]) in_c[i] = 1, nc++;
    }
    memcpy(in_b, in_c, sizeof in_c);
    /* k = nrem + nadd moved indices, 1 .. |C| / 3 (where bordering applies) */
    int k = 1 + (int)((tu_rand() + 1) * 0.5 * (nc / 3)) % (nc / 3), nrem = (int)((tu_rand() + 1) * 0.5 * (k + 1)) % (k + 1),
        nadd = k - nrem;
    for (int r = 0; r < nrem;) {
      int i = (int)((tu_rand() + 1) * 0.5 * n) % n;
      if (in_b[i] && in_c[i]) in_b[i] = 0, r++;
    }
    for (int a = 0; a < nadd;) {
      int i = (int)((tu_rand() + 1) * 0.5 * n) % n;
      if (!in_b[i] && !in_c[i]) in_b[i] = 1, a++;
    }
    nc = 0;
    for (int i = 0; i < n; i++) {
      if (in_c[i]) C[nc++] = i;
      if (in_b[i]) B[nb++] = i;
    }
    nearly_singular_block(n, M, B, nb, ratios[kind]);
    border_trial t = border_compare(wk, n, M, C, nc, B, nb);
    if (t.base_how != 1) continue; /* the bordered path needs C's LU */
    counted[kind]++;
    /* plain LU's pivots need not reveal a singular value of 1e-15 (partial pivoting is not rank
     * revealing): the bordered test must reject what it rejects, and every nearly singular set */
    int accepted_plain = t.plain_how == 1, accepted_bordered = t.bordered_how == 3;
    agree[kind] += accepted_plain == accepted_bordered;
    plain_missed += kind == 2 && accepted_plain;
    EXPECT(accepted_bordered == (kind < 2) && (accepted_plain || !accepted_bordered),
           "bordered singularity trial %d (|C| %d, -%d +%d, M_BB's singular values %.0e apart): plain %d, "
           "bordered %d (want 3 when regular or ill-conditioned, not 3 when nearly singular or plain rejects)",
           trial, nc, nrem, nadd, 1 / ratios[kind], t.plain_how, t.bordered_how);
    if (accepted_plain && accepted_bordered) {
      worst_dx = fmax(worst_dx, t.dx * ratios[kind]);
      EXPECT(t.dx <= 1e-13 / ratios[kind], "bordered singularity trial %d: solutions differ by %.3g (x's norm)",
             trial, t.dx);
    }
  }
  EXPECT(counted[0] >= 90 && counted[1] >= 90 && counted[2] >= 90,
         "bordered singularity: too few trials with C's LU regular (%d, %d, %d of 100)", counted[0], counted[1],
         counted[2]);
  printf("bordered singularity: accept/reject as plain LU in %d/%d regular, %d/%d ill-conditioned, %d/%d nearly "
         "singular (plain LU accepted %d of those); solutions within %.2g x cond ratio\n", agree[0], counted[0],
         agree[1], counted[1], agree[2], counted[2], plain_missed, worst_dx);
}

/* ---------- warm_lemke: Lemke from the guess's complementary basis ---------- */

/* A contact LCP of m friction pyramids (r = 4: [lambda_n, beta_1..4, gamma]
 * per contact) with Delassus W = J J^T / ndof for a random 3m x ndof J
 * (ndof < 3m: rank-deficient, as a rope's contacts outnumber its dofs),
 * Tikhonov tik on the normal and gamma diagonals, free velocity v (3 per
 * contact: t1, t2, n); A column-major n x n, n = 6m. */
static void pyramid_lcp(int m, int ndof, const double *J, const double *v, double mu, double tik, double *W,
                        double *A, double *q) {
  static const double D[4][2] = {{1, 0}, {0, 1}, {-1, 0}, {0, -1}};
  int n = 6 * m, nw = 3 * m;
  memset(A, 0, sizeof(double) * n * n);
  for (int a = 0; a < nw; a++)
    for (int b = 0; b < nw; b++) {
      double s = 0;
      for (int k = 0; k < ndof; k++) s += J[a * ndof + k] * J[b * ndof + k];
      W[a * nw + b] = s / ndof;
    }
  for (int i = 0; i < m; i++)
    for (int j = 0; j < m; j++) {
      const double *Wij = W + 3 * i * nw + 3 * j; /* row 3i + c, column 3j + d: Wij[c * nw + d] */
      int ri = 6 * i, cj = 6 * j;
      A[cj * n + ri] += Wij[2 * nw + 2];
      for (int l = 0; l < 4; l++) A[(cj + 1 + l) * n + ri] += Wij[2 * nw] * D[l][0] + Wij[2 * nw + 1] * D[l][1];
      for (int k = 0; k < 4; k++) {
        A[cj * n + ri + 1 + k] += D[k][0] * Wij[2] + D[k][1] * Wij[nw + 2];
        for (int l = 0; l < 4; l++)
          A[(cj + 1 + l) * n + ri + 1 + k] += D[k][0] * (Wij[0] * D[l][0] + Wij[1] * D[l][1]) +
                                              D[k][1] * (Wij[nw] * D[l][0] + Wij[nw + 1] * D[l][1]);
      }
    }
  for (int i = 0; i < m; i++) {
    int r = 6 * i;
    A[r * n + r] += tik;
    A[(r + 5) * n + r + 5] += tik;
    for (int k = 0; k < 4; k++) {
      A[(r + 5) * n + r + 1 + k] = 1;  /* w_beta_k: ... + gamma */
      A[(r + 1 + k) * n + r + 5] = -1; /* w_gamma = mu lambda_n - sum beta */
    }
    A[r * n + r + 5] = mu;
    q[r] = v[3 * i + 2];
    for (int k = 0; k < 4; k++) q[r + 1 + k] = D[k][0] * v[3 * i] + D[k][1] * v[3 * i + 1];
    q[r + 5] = 0;
  }
}

/* A pyramid LCP's answer z as the contacts' impulses lam (t1, t2, n per
 * contact: the pyramid's directions summed) and their velocities
 * u = v + W lam. */
static void contact_velocities(int m, const double *W, const double *v, const double *z, double *lam, double *u) {
  static const double D[4][2] = {{1, 0}, {0, 1}, {-1, 0}, {0, -1}};
  int nw = 3 * m;
  for (int i = 0; i < m; i++) {
    const double *zi = z + 6 * i;
    lam[3 * i] = lam[3 * i + 1] = 0;
    for (int k = 0; k < 4; k++) {
      lam[3 * i] += D[k][0] * zi[1 + k];
      lam[3 * i + 1] += D[k][1] * zi[1 + k];
    }
    lam[3 * i + 2] = zi[0];
  }
  for (int a = 0; a < nw; a++) {
    u[a] = v[a];
    for (int b = 0; b < nw; b++) u[a] += W[a * nw + b] * lam[b];
  }
}

/* The step after: the LCP solved cold (z1), its velocities moved by up to
 * 0.1, then solved from z1 with warm_lemke 0 and 1 (the default chain, the
 * friction blocks given as contact.c gives them). Where the warm pivot
 * fails, Lemke from z1's basis must solve (warm_lemke 3) the same LCP (both
 * answers pass sb_lcp_check) to the same contact impulses and velocities
 * and, over the instances, with fewer pivots; the start pivots count. Then a start no index of which can
 * pivot in (the gammas alone: their diagonal is Tikhonov's 1e-10 against
 * the column's 1 and mu) must run the cold Lemke (warm_lemke 1) and return
 * exactly the answer, and pivot count, of the option off. */
static void test_warm_lemke(void) {
  enum { m = 20, ndof = 40, n = 6 * m };
  static double J[3 * m * ndof], W[9 * m * m], A[n * n], q[n], z1[n], z[2][n], w[n], da[n];
  double v[3 * m], v2[3 * m];
  int blocks[m];
  for (int i = 0; i < m; i++) blocks[i] = 6;
  unsigned long long seed = 12345;
  sb_lcp_work *wk = sb_lcp_work_create(n);
  sb_lcp_options o = sb_lcp_default_options();
  o.nblock = m;
  o.block = blocks;
  o.friction_blocks = 1;
  int cases = 0, sums[2] = {0, 0}, fewer = 0, solved_warm = 0;
  double worst_dz = 0, worst_dl = 0, worst_du = 0;
  for (int trial = 0; trial < 8; trial++) {
    for (int i = 0; i < 3 * m * ndof; i++) J[i] = tu_rand_r(&seed);
    for (int i = 0; i < m; i++) {
      v[3 * i] = 0.5 * tu_rand_r(&seed);
      v[3 * i + 1] = 0.5 * tu_rand_r(&seed);
      v[3 * i + 2] = -0.5 - 0.5 * fabs(tu_rand_r(&seed));
    }
    pyramid_lcp(m, ndof, J, v, 0.5, 1e-10, W, A, q);
    sb_lcp_info info;
    memset(z1, 0, sizeof z1);
    o.warm_start = 0;
    o.warm_lemke = 0;
    EXPECT(sb_lcp_solve(wk, n, A, q, z1, w, &o, &info) == SB_LCP_SOLVED, "warm_lemke %d: first LCP: %s", trial,
           info.message);
    for (int i = 0; i < 3 * m; i++) v2[i] = v[i] + 0.1 * tu_rand_r(&seed);
    pyramid_lcp(m, ndof, J, v2, 0.5, 1e-10, W, A, q);
    int piv[2], state[2], wp[2], ok[2];
    for (int use = 0; use < 2; use++) {
      o.warm_start = 1;
      o.warm_lemke = use;
      memcpy(z[use], z1, sizeof z1);
      ok[use] = sb_lcp_solve(wk, n, A, q, z[use], w, &o, &info) == SB_LCP_SOLVED;
      piv[use] = info.iterations;
      state[use] = info.warm_lemke;
      wp[use] = info.warm_pivot;
      double r;
      ok[use] &= sb_lcp_check(n, A, q, z[use], w, 1e-12, 1e-12, &r, NULL, da);
    }
    EXPECT(ok[0] && ok[1], "warm_lemke %d: a solve failed or its answer fails the check (off %d, on %d)", trial, ok[0],
           ok[1]);
    EXPECT(state[0] == 0, "warm_lemke %d: option off, yet sb_lcp_info.warm_lemke = %d", trial, state[0]);
    if (wp[0]) continue; /* the warm pivot answered: Lemke did not run */
    cases++;
    solved_warm += state[1] == 3;
    sums[0] += piv[0];
    sums[1] += piv[1];
    fewer += piv[1] < piv[0];
    double dz = 0, zmax = 0;
    for (int i = 0; i < n; i++) {
      dz = fmax(dz, fabs(z[0][i] - z[1][i]));
      zmax = fmax(zmax, fabs(z[0][i]));
    }
    worst_dz = fmax(worst_dz, dz / fmax(zmax, 1));
    double u[2][3 * m], lam[2][3 * m], du = 0, dl = 0, umax = 0, lmax = 0;
    for (int use = 0; use < 2; use++) contact_velocities(m, W, v2, z[use], lam[use], u[use]);
    for (int a = 0; a < 3 * m; a++) {
      du = fmax(du, fabs(u[0][a] - u[1][a]));
      dl = fmax(dl, fabs(lam[0][a] - lam[1][a]));
      umax = fmax(umax, fabs(u[0][a]));
      lmax = fmax(lmax, fabs(lam[0][a]));
    }
    worst_dl = fmax(worst_dl, dl / fmax(lmax, 1));
    worst_du = fmax(worst_du, du / fmax(umax, 1));
  }
  EXPECT(cases >= 2, "warm_lemke: the warm pivot failed on %d of 8 instances (want >= 2)", cases);
  EXPECT(solved_warm == cases, "warm_lemke: Lemke from the guess's basis solved %d of %d", solved_warm, cases);
  EXPECT(sums[1] < sums[0] && fewer >= 1, "warm_lemke: %d pivots from the guess's basis against %d cold (fewer on %d)",
         sums[1], sums[0], fewer);
  /* z itself need not agree: a sticking contact's friction may be split
   * between opposite directions (beta_k and beta_k+2 both positive) in any
   * proportion with the same impulse, and the two paths may end on two such
   * vertices (the revised form's warm path does, on one instance). Both
   * answers passed sb_lcp_check above; what the contacts see, the impulse
   * per contact and the contact velocities v + W lam, must agree. (With W
   * singular the impulse could in principle differ along W's null space
   * too; these instances' answers do not.) */
  EXPECT(worst_dl <= 1e-9 && worst_du <= 1e-9,
         "warm_lemke: the contact impulses differ by %.3g of max |lam|, the contact velocities by %.3g of max |u|",
         worst_dl, worst_du);
  printf("warm_lemke: %d instances where the warm pivot failed: %d pivots from the guess's basis, %d cold (fewer "
         "on %d); impulses within %.2g, velocities within %.2g (the pyramid variables z within %.2g)\n", cases,
         sums[1], sums[0], fewer, worst_dl, worst_du, worst_dz);

  /* a start that cannot pivot in: the cold Lemke, as with the option off */
  int piv[2], state[2], ok[2];
  for (int use = 0; use < 2; use++) {
    sb_lcp_info info;
    o.warm_start = 1;
    o.warm_lemke = use;
    for (int i = 0; i < n; i++) z[use][i] = i % 6 == 5 ? 1.0 : 0;
    ok[use] = sb_lcp_solve_with(wk, SB_LCP_LEMKE, n, A, q, z[use], w, &o, &info) == SB_LCP_SOLVED && !info.warm_pivot;
    piv[use] = info.iterations;
    state[use] = info.warm_lemke;
  }
  EXPECT(ok[0] && ok[1], "warm_lemke, singular start: not solved by Lemke (off %d, on %d)", ok[0], ok[1]);
  EXPECT(state[0] == 0 && state[1] == 1, "warm_lemke, singular start: sb_lcp_info.warm_lemke %d, %d (want 0, 1)",
         state[0], state[1]);
  EXPECT(piv[0] == piv[1] && memcmp(z[0], z[1], sizeof z[0]) == 0,
         "warm_lemke, singular start: %d pivots and an answer other than the cold Lemke's (%d pivots)", piv[1],
         piv[0]);
  printf("warm_lemke: a start of the gammas alone ran the cold Lemke (%d pivots, the same answer)\n", piv[1]);
  sb_lcp_work_free(wk);
}

/* ---------- Lemke in revised form against the tableau ---------- */

/* One problem solved by the whole Lemke of the chain (the tie-breaking
 * perturbation, the finish) with lemke_form 1 and 2; the revised core alone
 * (sb_lemke_revised, before any finish) on q itself. */
typedef struct {
  int ok[2], piv[2], core_ok, core_piv;
  double dz, core_res, core_backward; /* core_backward: |min(z, w)| / (|q| + |M| |z|), max norms */
} form_trial;

static form_trial compare_forms(sb_lcp_work *wk, int n, const double *M, const double *q, sb_lcp_options o,
                                double *z0, double *z1, double *w) {
  form_trial t = {{0, 0}, {0, 0}, 0, 0, 0, 0, 0};
  double *z[2] = {z0, z1};
  for (int f = 0; f < 2; f++) {
    sb_lcp_info info;
    o.lemke_form = f ? SB_LCP_LEMKE_REVISED : SB_LCP_LEMKE_TABLEAU;
    memset(z[f], 0, sizeof(double) * n);
    t.ok[f] = sb_lcp_solve_with(wk, SB_LCP_LEMKE, n, M, q, z[f], w, &o, &info) == SB_LCP_SOLVED;
    t.piv[f] = info.iterations;
  }
  t.dz = tu_relerr(z1, z0, n, 1);
  /* the core alone: its answer must be complementary before any finish */
  char msg[160];
  t.core_ok = sb_lemke_revised(wk, n, M, n, NULL, q, NULL, z1, 50 * n + 100, &t.core_piv, NULL, msg, sizeof msg) ==
              SB_LCP_SOLVED;
  double scale = fmax(1, tu_maxabs(q, n)), mnorm = 0;
  for (int i = 0; i < n; i++) {
    double wi = q[i], row = 0;
    for (int j = 0; j < n; j++) {
      wi += M[(size_t)j * n + i] * z1[j];
      row += fabs(M[(size_t)j * n + i]);
    }
    mnorm = fmax(mnorm, row);
    scale = fmax(scale, fabs(wi));
    t.core_res = fmax(t.core_res, fabs(fmin(z1[i], wi)));
  }
  t.core_backward = t.core_res / (tu_maxabs(q, n) + mnorm * tu_maxabs(z1, n));
  t.core_res /= scale;
  return t;
}

/* m contacts on ndof dofs: a random J (3 m x ndof) and contact velocities
 * approaching (normal -0.5 .. -1, tangential within 0.5). */
static void random_contacts(int m, int ndof, unsigned long long *seed, double *J, double *v) {
  for (int i = 0; i < 3 * m * ndof; i++) J[i] = tu_rand_r(seed);
  for (int i = 0; i < m; i++) {
    v[3 * i] = 0.5 * tu_rand_r(seed);
    v[3 * i + 1] = 0.5 * tu_rand_r(seed);
    v[3 * i + 2] = -0.5 - 0.5 * fabs(tu_rand_r(seed));
  }
}

/* The revised form must follow the tableau's path: on problems with a
 * unique answer (P-matrices: SPD, nonsymmetric dominant, badly scaled) the
 * same pivots and the same answer, and its core alone complementary to
 * round-off; on friction-pyramid LCPs of many contacts and few dofs (W of
 * rank ndof < 3 m: the contact case, degenerate by construction) the same
 * pivot count and answer where round-off decides no tie, and an answer that
 * passes the test always; and from a guess's basis (warm_lemke) the same
 * start and path. Then lemke_form outside its values is refused by name. */
/* A 1 x 1 matrix's entries (ctx: its one double), for the refusals below. */
static double one_entry(const void *ctx, int i, int j) {
  (void)i;
  (void)j;
  return *(const double *)ctx;
}
static void one_column(const void *ctx, int j, double *out) {
  (void)j;
  out[0] = *(const double *)ctx;
}
static void one_apply(const void *ctx, const double *x, const double *b, double *y) {
  y[0] = (b ? b[0] : 0) + *(const double *)ctx * x[0];
}

static void test_lemke_revised(void) {
  enum { NR = 240 };
  static double M[NR * NR], q[NR], z[2][NR], w[NR], J[NR * NR], W[NR * NR], da[NR];
  sb_lcp_work *wk = sb_lcp_work_create(NR);
  sb_lcp_options o = sb_lcp_default_options();
  int sizes[] = {7, 30, 80}, bad = 0, trials = 0;
  double worst_dz = 0, worst_res = 0;
  for (int kk = 0; kk < 3; kk++)
    for (int si = 0; si < 3; si++)
      for (int trial = 0; trial < 3; trial++) {
        int n = sizes[si];
        make((kind)kk, n, M, q);
        form_trial t = compare_forms(wk, n, M, q, o, z[0], z[1], w);
        trials++;
        bad += !(t.ok[0] && t.ok[1] && t.piv[0] == t.piv[1] && t.core_ok);
        worst_dz = fmax(worst_dz, t.dz);
        worst_res = fmax(worst_res, t.core_res);
      }
  EXPECT(bad == 0, "revised Lemke, P-matrices: %d of %d solves differ from the tableau's in status or pivots", bad,
         trials);
  EXPECT(worst_dz <= 1e-10, "revised Lemke, P-matrices: answers differ from the tableau's by %.3g", worst_dz);
  EXPECT(worst_res <= 1e-11, "revised Lemke, P-matrices: the core's answer is complementary only to %.3g",
         worst_res);
  printf("revised Lemke: %d P-matrix problems, the tableau's pivots, answers within %.2g, core residual %.2g\n",
         trials, worst_dz, worst_res);

  /* friction pyramids: 40 contacts, 4 directions, on 60 dofs (n = 240) */
  enum { m = 40, ndof = 60, n = 6 * m };
  int blocks[m];
  for (int i = 0; i < m; i++) blocks[i] = 6;
  o.nblock = m;
  o.block = blocks;
  o.friction_blocks = 1;
  unsigned long long seed = 777;
  int same = 0, solved = 0, nt = 6, sum[2] = {0, 0};
  double worst_same_dz = 0;
  for (int trial = 0; trial < nt; trial++) {
    double v[3 * m];
    random_contacts(m, ndof, &seed, J, v);
    pyramid_lcp(m, ndof, J, v, 0.5, 1e-10, W, M, q);
    form_trial t = compare_forms(wk, n, M, q, o, z[0], z[1], w);
    double r;
    int pass0 = t.ok[0] && sb_lcp_check(n, M, q, z[0], w, 1e-12, 1e-12, &r, NULL, da);
    memset(z[1], 0, sizeof z[1]);
    sb_lcp_info info;
    o.lemke_form = SB_LCP_LEMKE_REVISED;
    int pass1 = sb_lcp_solve_with(wk, SB_LCP_LEMKE, n, M, q, z[1], w, &o, &info) == SB_LCP_SOLVED &&
                sb_lcp_check(n, M, q, z[1], w, 1e-12, 1e-12, &r, NULL, da);
    solved += pass0 && pass1;
    sum[0] += t.piv[0];
    sum[1] += t.piv[1];
    if (t.piv[0] == t.piv[1]) {
      same++;
      worst_same_dz = fmax(worst_same_dz, t.dz);
    }
  }
  EXPECT(solved == nt, "revised Lemke, pyramids: %d of %d solved by both forms with answers that pass the test",
         solved, nt);
  EXPECT(same >= nt - 1, "revised Lemke, pyramids: the tableau's pivot count on %d of %d", same, nt);
  EXPECT(worst_same_dz <= 1e-8, "revised Lemke, pyramids: answers on the same path differ by %.3g", worst_same_dz);
  printf("revised Lemke: %d pyramid LCPs (n = %d, W of rank %d): %d on the tableau's path (%d against %d pivots), "
         "answers within %.2g\n", nt, n, ndof, same, sum[1], sum[0], worst_same_dz);

  /* from a guess's basis: the answer of a nearby problem */
  int warm_same = 0, warm_runs = 0;
  for (int trial = 0; trial < 8; trial++) {
    double v[3 * m];
    random_contacts(m, ndof, &seed, J, v);
    pyramid_lcp(m, ndof, J, v, 0.5, 1e-10, W, M, q);
    static double zg[n];
    sb_lcp_info info;
    o.lemke_form = SB_LCP_LEMKE_TABLEAU;
    o.warm_start = 0;
    memset(zg, 0, sizeof zg);
    sb_lcp_solve(wk, n, M, q, zg, w, &o, &info);
    for (int i = 0; i < 3 * m; i++) v[i] += 0.1 * tu_rand_r(&seed);
    pyramid_lcp(m, ndof, J, v, 0.5, 1e-10, W, M, q);
    int state[2], piv[2], ok[2];
    for (int f = 0; f < 2; f++) {
      o.lemke_form = f ? SB_LCP_LEMKE_REVISED : SB_LCP_LEMKE_TABLEAU;
      o.warm_start = 1;
      o.warm_lemke = 1;
      memcpy(z[f], zg, sizeof zg);
      double r;
      ok[f] = sb_lcp_solve_with(wk, SB_LCP_LEMKE, n, M, q, z[f], w, &o, &info) == SB_LCP_SOLVED &&
              sb_lcp_check(n, M, q, z[f], w, 1e-12, 1e-12, &r, NULL, da);
      state[f] = info.warm_lemke;
      piv[f] = info.iterations;
    }
    EXPECT(ok[0] && ok[1], "revised Lemke, warm %d: solved %d (tableau) %d (revised)", trial, ok[0], ok[1]);
    warm_runs += state[0] >= 2;
    warm_same += state[0] >= 2 && state[0] == state[1] && piv[0] == piv[1];
  }
  EXPECT(warm_runs >= 2 && warm_same >= warm_runs - 1,
         "revised Lemke, warm: %d of %d starts from the guess's basis follow the tableau's", warm_same, warm_runs);
  printf("revised Lemke: %d of %d starts from a guess's basis on the tableau's path\n", warm_same, warm_runs);

  o = sb_lcp_default_options();
  o.lemke_form = 3;
  sb_lcp_info info;
  double m1[1] = {1}, q1[1] = {-1}, z1[1], w1[1];
  EXPECT(sb_lcp_solve(wk, 1, m1, q1, z1, w1, &o, &info) == SB_LCP_BAD_INPUT && strstr(info.message, "lemke_form"),
         "lemke_form = 3 refused by name (%s)", info.message);
  o = sb_lcp_default_options();
  sb_lcp_entries half = {.ctx = m1, .entry = NULL, .column = NULL};
  o.entries = &half;
  EXPECT(sb_lcp_solve(wk, 1, m1, q1, z1, w1, &o, &info) == SB_LCP_BAD_INPUT && strstr(info.message, "entries") &&
             strstr(info.message, "entry function"),
         "entries without their functions refused by name (%s)", info.message);
  sb_lcp_entries no_bound = {.ctx = m1, .entry = one_entry, .column = one_column, .apply = one_apply};
  o.entries = &no_bound;
  EXPECT(sb_lcp_solve(wk, 1, m1, q1, z1, w1, &o, &info) == SB_LCP_BAD_INPUT && strstr(info.message, "apply_bound"),
         "entries with apply but without apply_bound refused by name (%s)", info.message);
  sb_lcp_work_free(wk);
}

/* A stored column-major matrix given as entries, with its products: a
 * plain sum in column order and the textbook bound gamma_{n+1} of the
 * terms' magnitudes on its rounding. */
typedef struct {
  const double *M;
  int n;
} dense_entries;

static double dense_entry(const void *ctx, int i, int j) {
  const dense_entries *d = ctx;
  return d->M[(size_t)j * d->n + i];
}
static void dense_column(const void *ctx, int j, double *out) {
  const dense_entries *d = ctx;
  memcpy(out, d->M + (size_t)j * d->n, sizeof(double) * d->n);
}
static void dense_column_rows(const void *ctx, int j, const int *rows, int nr, double *out) {
  const dense_entries *d = ctx;
  for (int a = 0; a < nr; a++) out[a] = d->M[(size_t)j * d->n + rows[a]];
}
static void dense_apply(const void *ctx, const double *x, const double *b, double *y) {
  const dense_entries *d = ctx;
  for (int i = 0; i < d->n; i++) {
    double s = b ? b[i] : 0;
    for (int j = 0; j < d->n; j++) s += d->M[(size_t)j * d->n + i] * x[j];
    y[i] = s;
  }
}
static void dense_apply_bound(const void *ctx, const double *x, const double *b, double *e) {
  const dense_entries *d = ctx;
  const double u = DBL_EPSILON / 2, g = (d->n + 1) * u / (1 - (d->n + 1) * u);
  for (int i = 0; i < d->n; i++) {
    double s = b ? fabs(b[i]) : 0;
    for (int j = 0; j < d->n; j++) s += fabs(d->M[(size_t)j * d->n + i] * x[j]);
    e[i] = g * s + (d->n + 1) * DBL_TRUE_MIN;
  }
}

/* The acceptance test's row terms excuse the rounding of large cancelling
 * terms, from the entries (their columns at the rows beyond tol qs) as from
 * M: w0 = 0.7 (z0 - z2 - 1), w1 = z1 - 1, w2 = -w0 has the ray of solutions
 * z0 = z2 + 1, z1 = 1. On the guess z2 = 1e9 / 3 + 0.02 on it, w0 and w2
 * are 0 exactly but their double sums 3e-8, far above tol max(1, |q|) =
 * 1e-12 and within tol of their terms (4.7e8): the warm pivot answers on
 * the guess's set, with M alone and with the entries alike. (Taking the
 * entries' terms at no row, Lemke answers instead, at z = (1, 1, 0).) */
static void test_row_terms_from_entries(void) {
  double M[9] = {0.7, 0, -0.7, 0, 1, 0, -0.7, 0, 0.7}, q[3] = {-0.7, -1, 0.7};
  dense_entries de = {M, 3};
  sb_lcp_entries ent = {.ctx = &de, .entry = dense_entry, .column = dense_column, .column_rows = dense_column_rows};
  sb_lcp_work *wk = sb_lcp_work_create(3);
  for (int e = 0; e < 2; e++) {
    double z2 = 1e9 / 3 + 0.02, z[3] = {z2 + 1, 1, z2}, w[3];
    sb_lcp_options o = sb_lcp_default_options();
    o.warm_start = 1;
    o.entries = e ? &ent : NULL;
    sb_lcp_info info;
    sb_lcp_status st = sb_lcp_solve(wk, 3, M, q, z, w, &o, &info);
    EXPECT(st == SB_LCP_SOLVED && info.warm_pivot && fabs(z[0] - z[2] - 1) <= 1e-6 && z[2] > 1e8,
           "row terms %s: %s, warm pivot %d, z = (%.17g, %.17g, %.17g) (the guess's ray, answered warm)",
           e ? "from the entries" : "from M", sb_lcp_status_name(st), info.warm_pivot, z[0], z[1], z[2]);
  }
  sb_lcp_work_free(wk);
}

/* An unformed matrix (M NULL, entries with apply and storage): the solvers
 * that read the matrix stored (FB, PGS, Lemke's tableau when asked for) find
 * it formed in storage, the others never touch storage, and each answer is
 * the one the same entries give with M stored, bit for bit where the same
 * solver runs. Lemke's auto form takes the revised form on an unformed M of
 * any size (n = 7: the tableau on M stored), whose answer agrees to the
 * tolerance. */
static void test_unformed_matrix(void) {
  static double M[NMAX * NMAX], S[NMAX * NMAX], q[NMAX], z[2][NMAX], w[NMAX];
  sb_lcp_work *wk = sb_lcp_work_create(NMAX);
  struct {
    int n, chain; /* chain: -1 the default chain, else the one solver */
    int forms;    /* 1: a solver that reads M stored runs */
    int form;     /* lemke_form */
    int block;    /* > 0: the blocks' size (sb_lcp_options.block), for PGS's local problems */
  } cases[] = {{80, SB_LCP_LEMKE, 0, SB_LCP_LEMKE_AUTO, 0}, {7, SB_LCP_LEMKE, 0, SB_LCP_LEMKE_AUTO, 0},
               {7, SB_LCP_LEMKE, 1, SB_LCP_LEMKE_TABLEAU, 0}, {40, SB_LCP_FB, 1, SB_LCP_LEMKE_AUTO, 0},
               {40, SB_LCP_PGS, 0, SB_LCP_LEMKE_AUTO, 0},  {40, SB_LCP_PGS, 0, SB_LCP_LEMKE_AUTO, 5},
               {80, -1, 0, SB_LCP_LEMKE_AUTO, 0}};
  int blocks[NMAX];
  for (unsigned c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    int n = cases[c].n;
    make(SPD, n, M, q);
    dense_entries de = {M, n};
    sb_lcp_entries ent = {.ctx = &de, .entry = dense_entry, .column = dense_column, .apply = dense_apply,
                          .apply_bound = dense_apply_bound, .storage = S};
    sb_lcp_options o = sb_lcp_default_options();
    o.entries = &ent;
    o.lemke_form = cases[c].form;
    o.nblock = cases[c].block ? n / cases[c].block : 0;
    for (int b = 0; b < o.nblock; b++) blocks[b] = cases[c].block;
    o.block = o.nblock ? blocks : NULL;
    sb_lcp_info info[2];
    sb_lcp_status st[2];
    for (int k = 0; k < 2; k++) {
      for (int i = 0; i < n * n; i++) S[i] = NAN;
      memset(z[k], 0, sizeof(double) * n);
      const double *Mk = k ? NULL : M;
      st[k] = cases[c].chain < 0 ? sb_lcp_solve(wk, n, Mk, q, z[k], w, &o, &info[k])
                                 : sb_lcp_solve_with(wk, (sb_lcp_solver)cases[c].chain, n, Mk, q, z[k], w, &o, &info[k]);
    }
    int stored = 1, untouched = 1;
    for (int i = 0; i < n * n; i++) {
      stored &= memcmp(&S[i], &M[i], sizeof(double)) == 0;
      untouched &= isnan(S[i]);
    }
    const char *what = cases[c].chain < 0 ? "the chain" : sb_lcp_solver_name((sb_lcp_solver)cases[c].chain);
    /* the same solver and form on both: bit for bit; auto's two forms at n = 7, and PGS by M's rows
     * or by the entries' columns (its w updated in another order): to the tolerance (M is positive
     * definite, so the answer is unique) */
    int both_forms = cases[c].chain == SB_LCP_LEMKE && n < SB_LCP_LEMKE_AUTO_MIN_N && cases[c].form == SB_LCP_LEMKE_AUTO;
    int close_only = both_forms || cases[c].chain == SB_LCP_PGS;
    double dz = 0, zmax = 0;
    for (int i = 0; i < n; i++) {
      dz = fmax(dz, fabs(z[0][i] - z[1][i]));
      zmax = fmax(zmax, fabs(z[0][i]));
    }
    EXPECT(st[0] == SB_LCP_SOLVED && st[1] == SB_LCP_SOLVED &&
               (close_only ? dz <= 1e-8 * zmax : !memcmp(z[0], z[1], sizeof(double) * n)),
           "unformed M, n = %d, %s: %s and %s, the answers differ by %.3g", n, what, sb_lcp_status_name(st[0]),
           sb_lcp_status_name(st[1]), dz);
    /* PGS by columns is PGS, Gauss-Seidel's order and all: its sweeps are the rows' (to one, where
     * the two round across the tolerance) */
    EXPECT(cases[c].chain != SB_LCP_PGS || abs(info[0].iterations - info[1].iterations) <= 1,
           "unformed M, n = %d, pgs (blocks of %d): %d sweeps by columns, %d by M's rows", n, cases[c].block,
           info[1].iterations, info[0].iterations);
    EXPECT(!both_forms || (info[0].lemke_form == SB_LCP_LEMKE_TABLEAU && info[1].lemke_form == SB_LCP_LEMKE_REVISED),
           "unformed M, n = %d: Lemke's auto form ran %d on M stored, %d unformed (expected the tableau, then the "
           "revised form)", n, info[0].lemke_form, info[1].lemke_form);
    EXPECT(info[1].matrix_formed == cases[c].forms && info[0].matrix_formed == 0,
           "unformed M, n = %d, %s: matrix_formed %d (stored M: %d), expected %d", n, what, info[1].matrix_formed,
           info[0].matrix_formed, cases[c].forms);
    EXPECT(cases[c].forms ? stored : untouched, "unformed M, n = %d, %s: storage %s", n, what,
           cases[c].forms ? "does not hold M's doubles" : "was written although no solver reads M stored");
    if (cases[c].chain == SB_LCP_FB) { /* a re-solve on the same matrix reuses the formed one */
      o.same_matrix = 1;
      for (int i = 0; i < n; i++) q[i] *= 0.5;
      for (int k = 0; k < 2; k++) {
        memset(z[k], 0, sizeof(double) * n);
        st[k] = sb_lcp_solve_with(wk, SB_LCP_FB, n, k ? NULL : M, q, z[k], w, &o, &info[k]);
      }
      EXPECT(st[1] == SB_LCP_SOLVED && info[1].matrix_formed && !memcmp(z[0], z[1], sizeof(double) * n),
             "unformed M, same_matrix re-solve by FB: %s, matrix_formed %d, answers %s", sb_lcp_status_name(st[1]),
             info[1].matrix_formed, memcmp(z[0], z[1], sizeof(double) * n) ? "differ" : "equal");
    }
  }
  sb_lcp_options o = sb_lcp_default_options();
  dense_entries de = {M, 1};
  sb_lcp_entries no_storage = {.ctx = &de, .entry = dense_entry, .column = dense_column, .apply = dense_apply,
                               .apply_bound = dense_apply_bound};
  o.entries = &no_storage;
  sb_lcp_info info;
  EXPECT(sb_lcp_solve(wk, 1, NULL, q, z[0], w, &o, &info) == SB_LCP_BAD_INPUT && strstr(info.message, "no matrix") &&
             strstr(info.message, "storage"),
         "an unformed M without storage refused by name (%s)", info.message);
  sb_lcp_work_free(wk);
}

/* sb_lcp_info.lemke_form names the form Lemke ran in: the one asked for;
 * with auto (the default) the tableau on a problem one unknown below
 * SB_LCP_LEMKE_AUTO_MIN_N and the revised form at it; -1 where Lemke did not
 * run (FB alone; a re-solve the guess's active set answers). */
static void test_lemke_form_reported(void) {
  enum { lo = SB_LCP_LEMKE_AUTO_MIN_N - 1, hi = SB_LCP_LEMKE_AUTO_MIN_N };
  _Static_assert(lo >= 1 && hi <= NMAX, "auto's threshold within the test's sizes");
  static double M[NMAX * NMAX], q[NMAX], z[NMAX], w[NMAX];
  sb_lcp_work *wk = sb_lcp_work_create(NMAX);
  sb_lcp_options o = sb_lcp_default_options();
  EXPECT(o.lemke_form == SB_LCP_LEMKE_AUTO, "the default lemke_form is %d, not auto", o.lemke_form);
  const struct { int form, n, ran; } cases[] = {
      {SB_LCP_LEMKE_TABLEAU, hi, SB_LCP_LEMKE_TABLEAU}, {SB_LCP_LEMKE_REVISED, lo, SB_LCP_LEMKE_REVISED},
      {SB_LCP_LEMKE_AUTO, lo, SB_LCP_LEMKE_TABLEAU},    {SB_LCP_LEMKE_AUTO, hi, SB_LCP_LEMKE_REVISED}};
  for (unsigned c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    sb_lcp_info info;
    make(SPD, cases[c].n, M, q);
    o.lemke_form = cases[c].form;
    o.warm_start = 0;
    memset(z, 0, sizeof z);
    EXPECT(sb_lcp_solve_with(wk, SB_LCP_LEMKE, cases[c].n, M, q, z, w, &o, &info) == SB_LCP_SOLVED &&
               info.lemke_form == cases[c].ran,
           "lemke_form %d, n = %d: %s, Lemke ran in form %d (want %d)", cases[c].form, cases[c].n,
           sb_lcp_status_name(info.status), info.lemke_form, cases[c].ran);
    /* the answer as the guess: its active set answers, Lemke does not run */
    o.warm_start = 1;
    EXPECT(sb_lcp_solve(wk, cases[c].n, M, q, z, w, &o, &info) == SB_LCP_SOLVED && info.warm_pivot &&
               info.lemke_form == -1,
           "lemke_form %d, n = %d, warm: warm pivot %d, lemke_form %d (want 1, -1)", cases[c].form, cases[c].n,
           info.warm_pivot, info.lemke_form);
  }
  sb_lcp_info info;
  o = sb_lcp_default_options();
  make(SPD, hi, M, q);
  memset(z, 0, sizeof z);
  EXPECT(sb_lcp_solve_with(wk, SB_LCP_FB, hi, M, q, z, w, &o, &info) == SB_LCP_SOLVED && info.lemke_form == -1,
         "FB alone: lemke_form %d (want -1)", info.lemke_form);
  printf("lemke_form: reported as run (auto: tableau at n = %d, revised at n = %d)\n", lo, hi);
  sb_lcp_work_free(wk);
}

/* sb_lcp_options.second_guess: where the first guess's pivots fail, the
 * second's active set answers before the chain runs (a union pass of the
 * contact pipeline tries its first pass's answer, then the last step's).
 * The first guess loads every index the answer leaves out and none it
 * loads; on the LCPs where neither the pivot from its predicted set nor
 * from its support repairs that in their passes (without the second guess
 * the chain answers), the second, the answer moved by 1e-9 of its size,
 * must answer warm. A non-finite second guess is ignored. */
static void test_second_guess(void) {
  enum { n = 60 };
  static double M[n * n], q[n], z[n], zref[n], bad[n], second[n], w[n];
  sb_lcp_work *wk = sb_lcp_work_create(n);
  sb_lcp_options o = sb_lcp_default_options();
  sb_lcp_info info;
  int tried = 0, cold_without = 0, warm_with = 0, same = 0, nan_ignored = 0;
  for (int trial = 0; trial < 120; trial++) {
    make(SPD, n, M, q);
    o.warm_start = 0;
    o.second_guess = NULL;
    memset(zref, 0, sizeof zref);
    if (sb_lcp_solve(wk, n, M, q, zref, w, &o, &info) != SB_LCP_SOLVED) continue;
    double zmax = 0;
    for (int i = 0; i < n; i++) zmax = fmax(zmax, zref[i]);
    for (int i = 0; i < n; i++) {
      bad[i] = zref[i] > 0 ? 0 : zmax;
      second[i] = zref[i] > 0 ? zref[i] * (1 + 1e-9 * sin(i + 1.0)) : 0;
    }
    tried++;
    o.warm_start = 1;
    memcpy(z, bad, sizeof z);
    if (sb_lcp_solve(wk, n, M, q, z, w, &o, &info) != SB_LCP_SOLVED || info.warm_pivot) continue;
    cold_without++;
    memcpy(z, bad, sizeof z);
    o.second_guess = second;
    int ok = sb_lcp_solve(wk, n, M, q, z, w, &o, &info) == SB_LCP_SOLVED && info.warm_pivot;
    warm_with += ok;
    same += ok && tu_relerr(z, zref, n, 1.0) <= 1e-9;
    second[0] = NAN;
    memcpy(z, bad, sizeof z);
    nan_ignored += sb_lcp_solve(wk, n, M, q, z, w, &o, &info) == SB_LCP_SOLVED && !info.warm_pivot;
  }
  printf("second guess: %d LCPs of %d unknowns, %d of them cold from the first guess alone; with the second, "
         "warm on %d (its answer on %d); a NaN in it ignored on %d\n", tried, n, cold_without, warm_with, same,
         nan_ignored);
  EXPECT(cold_without >= 5, "second guess: the bad first guess failed on %d of %d LCPs, too few to test",
         cold_without, tried);
  EXPECT(warm_with == cold_without && same == cold_without, "second guess: warm on %d, the answer on %d of %d",
         warm_with, same, cold_without);
  EXPECT(nan_ignored == cold_without, "second guess with a NaN: ignored on %d of %d", nan_ignored, cold_without);
  sb_lcp_work_free(wk);
}

/* Where an explicit K^-1 drifts: friction-pyramid LCPs of many contacts,
 * all approaching, on few dofs (W of rank ndof), Tikhonov 1e-12, so that the
 * basis block K grows past rank(W) and stays regular only by the pyramids'
 * couplings and Tikhonov: long paths through nearly singular bases. The
 * revised form must end where the tableau ends (its status and pivots, and
 * where it solves, its answer and a core answer complementary to round-off;
 * the tableau fails some of these too, and the same way), and every solve
 * with K it accepts must have a small residual
 * |K x - b| / (|b| + k max|K| |x|): a factor gone bad and not renewed shows
 * there, and as a path that leaves the tableau's. */
static void test_lemke_revised_drift(void) {
  enum { m = 60, ndof = 60, n = 6 * m };
  static double M[n * n], q[n], z[2][n], w[n], J[3 * m * ndof], W[9 * m * m];
  sb_lcp_work *wk = sb_lcp_work_create(n);
  sb_lcp_options o = sb_lcp_default_options();
  int blocks[m];
  for (int i = 0; i < m; i++) blocks[i] = 6;
  o.nblock = m;
  o.block = blocks;
  o.friction_blocks = 1;
  unsigned long long seed = 4242;
  int nt = 5, same = 0, solved = 0, core_ok = 0, kmax = 0, piv[2] = {0, 0};
  long refactors = 0;
  double worst_dz = 0, worst_res = 0, worst_kres = 0;
  for (int trial = 0; trial < nt; trial++) {
    double v[3 * m];
    random_contacts(m, ndof, &seed, J, v);
    pyramid_lcp(m, ndof, J, v, 0.5, 1e-12, W, M, q);
    form_trial t = compare_forms(wk, n, M, q, o, z[0], z[1], w);
    /* the pivots where the tableau solves: a failing chain's count (its
     * retries on perturbed q) is decided by round-off's ties and differs
     * between BLAS kernels */
    same += t.ok[0] == t.ok[1] && (!t.ok[0] || t.piv[0] == t.piv[1]);
    solved += t.ok[0];
    piv[0] += t.piv[0];
    piv[1] += t.piv[1];
    if (t.ok[0]) { /* where the tableau solves: its answer, and the core's complementary */
      core_ok += t.core_ok;
      worst_dz = fmax(worst_dz, t.dz);
      worst_res = fmax(worst_res, t.core_backward);
    }
    /* compare_forms ran the revised core last */
    worst_kres = fmax(worst_kres, wk->rv_worst_residual);
    kmax = wk->rv_kmax > kmax ? wk->rv_kmax : kmax;
    refactors += wk->rv_refactors;
  }
  EXPECT(kmax > ndof, "revised Lemke, drift: K reached only %d (want past rank(W) = %d)", kmax, ndof);
  EXPECT(same == nt,
         "revised Lemke, drift: %d of %d solves with the tableau's status and, where solved, pivots (%d against %d)",
         same, nt, piv[1], piv[0]);
  EXPECT(solved >= nt - 1, "revised Lemke, drift: the tableau solved only %d of %d", solved, nt);
  EXPECT(worst_dz <= 1e-8, "revised Lemke, drift: answers differ from the tableau's by %.3g", worst_dz);
  /* The core alone may end on a nearly singular basis (an answer of 1e8
   * where the tableau's is 1e3, on some BLAS kernels) and is then accurate
   * only to its conditioning; the chain's finish makes that answer
   * complementary. A factor gone bad shows in K's residual below, not here. */
  EXPECT(core_ok == solved && worst_res <= 1e-6,
         "revised Lemke, drift: the core solved %d of the tableau's %d, complementary to %.3g of |q| + |M||z|",
         core_ok, solved, worst_res);
  EXPECT(worst_kres <= 1e-10, "revised Lemke, drift: a solve with K accepted at residual %.3g", worst_kres);
  printf("revised Lemke, drift: %d pyramid LCPs (n = %d, W of rank %d, k up to %d): %d on the tableau's path "
         "(%d pivots; %d solved), answers within %.2g, the core's complementary to %.2g of |q| + |M||z|, K's residual at "
         "most %.2g, "
         "%ld refactorizations\n", nt, n, ndof, kmax, same, piv[0], solved, worst_dz, worst_res, worst_kres, refactors);
  sb_lcp_work_free(wk);
}

int main(void) {
  sb_lcp_work *wk = sb_lcp_work_create(NMAX);
  static double M[NMAX * NMAX], q[NMAX], z[3][NMAX], zref[NMAX], w[NMAX];
  sb_lcp_options opt = sb_lcp_default_options();
  opt.tol = 1e-13;
  int sizes[] = {1, 2, 3, 5, 8, 10, 12, 20, 40, 80};
  double worst_agree = 0, worst_enum = 0;
  for (int kk = 0; kk < 3; kk++)
    for (unsigned si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
      for (int trial = 0; trial < 4; trial++) {
        int n = sizes[si];
        make((kind)kk, n, M, q);
        sb_lcp_info info[3];
        int nsolver = kk == SCALED ? 2 : 3; /* PGS is not column-scaling invariant */
        for (int s = 0; s < nsolver; s++) {
          sb_lcp_status st = sb_lcp_solve_with(wk, (sb_lcp_solver)s, n, M, q, z[s], w, &opt, &info[s]);
          EXPECT(st == SB_LCP_SOLVED, "kind %d n %d trial %d: %s -> %s (%s)", kk, n, trial,
                 sb_lcp_solver_name((sb_lcp_solver)s), sb_lcp_status_name(st), info[s].message);
          double c, r = sb_lcp_residual(n, M, q, z[s], w, &c);
          /* the reported residual is recomputed exactly where rounding matters: within
           * the plain sum's rounding of it */
          EXPECT(r <= 1e-10 && fabs(r - info[s].residual) <= 1e-12, "kind %d n %d: %s residual %g (reported %g)", kk, n,
                 sb_lcp_solver_name((sb_lcp_solver)s), r, info[s].residual);
        }
        for (int s = 1; s < nsolver; s++) {
          double e = tu_relerr(z[s], z[0], n, 1.0);
          worst_agree = fmax(worst_agree, e);
          EXPECT(e <= 1e-8, "kind %d n %d trial %d: %s and fb differ by %g", kk, n, trial,
                 sb_lcp_solver_name((sb_lcp_solver)s), e);
        }
        if (n <= 12) {
          EXPECT(enumerate(n, M, q, zref) == 0, "enumeration finds the solution (kind %d n %d)", kk, n);
          double e = tu_relerr(z[1], zref, n, 1.0);
          worst_enum = fmax(worst_enum, e);
          EXPECT(e <= 1e-9, "kind %d n %d: lemke vs enumeration %g", kk, n, e);
        }
      }
  printf("P-matrix LCPs: solvers agree to %.2e, Lemke vs enumeration %.2e\n", worst_agree, worst_enum);

  /* Murty's exponential example for pivoting: 2^n - 1 pivots, unique solution e_n. */
  {
    int n = 8;
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) M[j * n + i] = i == j ? 1 : (i > j ? 2 : 0);
    for (int i = 0; i < n; i++) q[i] = -1;
    sb_lcp_info info;
    EXPECT(sb_lcp_solve_with(wk, SB_LCP_LEMKE, n, M, q, z[0], w, &opt, &info) == SB_LCP_SOLVED, "murty: %s", info.message);
    EXPECT(fabs(z[0][0] - 1) < 1e-12 && tu_maxabs(z[0] + 1, n - 1) < 1e-12, "murty solution is e_1");
  }

  /* Degenerate: q = 0 rows and duplicated constraints (a PSD, singular M). */
  {
    int n = 6;
    double v[6] = {1, 2, 1, 2, 1, 2};
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) M[j * n + i] = v[i] * v[j];
    for (int i = 0; i < n; i++) q[i] = i < 2 ? -1.0 : 0.0;
    for (int s = 0; s < 2; s++) {
      sb_lcp_info info;
      sb_lcp_status st = sb_lcp_solve_with(wk, (sb_lcp_solver)s, n, M, q, z[0], w, &opt, &info);
      EXPECT(st == SB_LCP_SOLVED && info.residual <= 1e-10, "degenerate PSD: %s %s %g",
             sb_lcp_solver_name((sb_lcp_solver)s), sb_lcp_status_name(st), info.residual);
    }
  }

  /* No solution: M = [-1], q = [-1]. Lemke ends on a ray, nobody claims success,
   * and z stays finite. */
  {
    double m1 = -1, q1 = -1, z1 = 7, w1;
    sb_lcp_info info;
    EXPECT(sb_lcp_solve_with(wk, SB_LCP_LEMKE, 1, &m1, &q1, &z1, &w1, &opt, &info) == SB_LCP_RAY,
           "unsolvable: lemke reports a ray (%s)", sb_lcp_status_name(info.status));
    EXPECT(sb_lcp_solve(wk, 1, &m1, &q1, &z1, &w1, &opt, &info) != SB_LCP_SOLVED && isfinite(z1) && isfinite(w1),
           "unsolvable: the chain does not claim success, z finite");
    EXPECT(info.attempts == 3 && info.message[0], "unsolvable: three attempts, a message (%d, '%s')",
           info.attempts, info.message);
  }

  /* Iteration budget: w0 + w1 = -2 whatever z, no solution, and PGS stays at residual 2.
   * It stops once a window of 1/40 of its budget brings no halving, instead of
   * sweeping to the end of the budget. */
  {
    double Mi[4] = {1, -1, -1, 1}, qi[2] = {-1, -1}, zi[2], wi[2];
    sb_lcp_info info;
    sb_lcp_status st = sb_lcp_solve_with(wk, SB_LCP_PGS, 2, Mi, qi, zi, wi, &opt, &info);
    EXPECT(st == SB_LCP_STALLED && info.iterations <= opt.max_sweeps / 40 + 2 && strstr(info.message, "no progress"),
           "pgs without progress stops: %s after %d sweeps, '%s'", sb_lcp_status_name(st), info.iterations,
           info.message);
  }

  /* Fallback: PGS alone stalls on a zero diagonal, the chain PGS -> Lemke solves. */
  {
    int n = 2;
    double Mz[4] = {0, -1, 1, 0}, qz[2] = {-1, 1}; /* M = [0 1; -1 0]: solution (1, 1) */
    sb_lcp_options o = opt;
    o.nchain = 2;
    o.chain[0] = SB_LCP_PGS;
    o.chain[1] = SB_LCP_LEMKE;
    sb_lcp_info info;
    EXPECT(sb_lcp_solve_with(wk, SB_LCP_PGS, n, Mz, qz, z[0], w, &o, &info) == SB_LCP_STALLED,
           "pgs on a zero diagonal stalls (%s)", sb_lcp_status_name(info.status));
    EXPECT(sb_lcp_solve(wk, n, Mz, qz, z[0], w, &o, &info) == SB_LCP_SOLVED && info.solver == SB_LCP_LEMKE &&
               info.attempts == 2 && info.residual <= 1e-12,
           "fallback to lemke: %s by %s, '%s'", sb_lcp_status_name(info.status), sb_lcp_solver_name(info.solver),
           info.message);
  }

  /* Warm start from the solution: FB and PGS stop at once. */
  {
    int n = 20;
    make(SPD, n, M, q);
    sb_lcp_info info;
    sb_lcp_solve_with(wk, SB_LCP_LEMKE, n, M, q, z[0], w, &opt, &info);
    sb_lcp_options o = opt;
    o.warm_start = 1;
    memcpy(z[1], z[0], n * sizeof(double));
    sb_lcp_solve_with(wk, SB_LCP_FB, n, M, q, z[1], w, &o, &info);
    EXPECT(info.status == SB_LCP_SOLVED && info.iterations <= 1, "fb warm start: %d iterations", info.iterations);
    memcpy(z[1], z[0], n * sizeof(double));
    sb_lcp_solve_with(wk, SB_LCP_PGS, n, M, q, z[1], w, &o, &info);
    EXPECT(info.status == SB_LCP_SOLVED && info.iterations <= 1, "pgs warm start: %d sweeps", info.iterations);
  }

  /* A guess whose active set solves the problem (last step's answer, q
   * moved a little) is finished by pivoting from that set before any
   * solver runs, exactly; a guess with the wrong set falls through to the
   * chain and still gets the answer. Checked against Lemke from zero. */
  {
    int n = 20;
    make(SPD, n, M, q);
    sb_lcp_info info;
    sb_lcp_solve_with(wk, SB_LCP_LEMKE, n, M, q, z[0], w, &opt, &info);
    double q2[NMAX];
    for (int i = 0; i < n; i++) q2[i] = q[i] * (1 + 1e-6 * ((i % 3) - 1));
    double zref[NMAX], zlem[NMAX];
    sb_lcp_solve_with(wk, SB_LCP_LEMKE, n, M, q2, zref, w, &opt, &info);
    int same_set = 1;
    for (int i = 0; i < n; i++) same_set &= (z[0][i] > 0) == (zref[i] > 0);
    EXPECT(same_set, "the perturbed problem keeps the active set (test premise)");
    sb_lcp_options o = opt;
    o.warm_start = 1;
    o.nchain = 1;
    o.chain[0] = SB_LCP_LEMKE;
    memcpy(zlem, z[0], n * sizeof(double));
    sb_lcp_status st = sb_lcp_solve(wk, n, M, q2, zlem, w, &o, &info);
    double dz = 0;
    for (int i = 0; i < n; i++) dz = fmax(dz, fabs(zlem[i] - zref[i]));
    EXPECT(st == SB_LCP_SOLVED && info.iterations == 0 && strstr(info.message, "active set") && dz < 1e-10,
           "guess with the right active set: %s, %d iterations, '%s', |z - z_lemke| %.3g",
           sb_lcp_status_name(st), info.iterations, info.message, dz);
    for (int i = 0; i < n; i++) zlem[i] = zref[i] > 0 ? 0 : 1; /* every index on the wrong side */
    st = sb_lcp_solve(wk, n, M, q2, zlem, w, &o, &info);
    dz = 0;
    for (int i = 0; i < n; i++) dz = fmax(dz, fabs(zlem[i] - zref[i]));
    EXPECT(st == SB_LCP_SOLVED && dz < 1e-10, "guess with the wrong active set: %s by %s, |z - z_lemke| %.3g",
           sb_lcp_status_name(st), sb_lcp_solver_name(info.solver), dz);
  }

  /* The warm pivot's answer is accepted on the w = Mz + q its own pass formed
   * (no second product by M): it must pass the independent sb_lcp_check, and
   * the w returned must be that check's, bit for bit. The guesses have the answer's
   * support with magnitudes off by a factor up to e^0.2 or e^2, so the set they
   * predict, {z - w > eps}, takes in rows of negative w: most are solved from
   * it, some only by the second try from the support {z > eps}, which leaves
   * its w in wk->d (made NaN before each solve, so finite there after a
   * warm pivot means that try answered). */
  {
    int n = 20, warm = 0, from_support = 0, failed = 0, trials = 300;
    double worst = 0;
    for (int t = 0; t < trials; t++) {
      make(SPD, n, M, q);
      sb_lcp_info info;
      double zg[NMAX], wl[NMAX], wc[NMAX], sc[NMAX], r, qs = 1;
      sb_lcp_solve_with(wk, SB_LCP_LEMKE, n, M, q, zg, wl, &opt, &info);
      for (int i = 0; i < n; i++) {
        zg[i] *= exp((t % 2 ? 2 : 0.2) * tu_rand()); /* off by up to e^0.2 or e^2 */
        qs = fmax(qs, fabs(q[i]));
      }
      sb_lcp_options o = opt;
      o.warm_start = 1;
      for (int i = 0; i < n; i++) wk->d[i] = NAN;
      sb_lcp_status st = sb_lcp_solve(wk, n, M, q, zg, wl, &o, &info);
      if (st != SB_LCP_SOLVED || !info.warm_pivot) continue;
      warm++;
      from_support += isfinite(wk->d[0]);
      int ok = sb_lcp_check(n, M, q, zg, wc, o.tol * qs, o.tol, &r, NULL, sc);
      double dw = 0;
      for (int i = 0; i < n; i++) dw = fmax(dw, fabs(wl[i] - wc[i]));
      worst = fmax(worst, dw);
      failed += !ok || memcmp(wl, wc, (size_t)n * sizeof(double)); /* the same product of the same z */
    }
    EXPECT(failed == 0, "warm pivot: %d of %d answers fail sb_lcp_check or return another w (off by up to %.3g)", failed, warm,
           worst);
    EXPECT(warm - from_support >= 10 && from_support >= 3,
           "warm pivot: %d answered from the predicted set, %d from the support (of %d): a path untested",
           warm - from_support, from_support, trials);
    printf("warm pivot answers: %d from the predicted set, %d from the support, checked "
           "(w off by at most %.3g)\n", warm - from_support, from_support, worst);
  }

  /* same_matrix: a re-solve of the same M with another q (the contact
   * pipeline's proximal step) reuses the warm pivot's factorization of its
   * active set; the answer must be the one a solve without that knowledge
   * gives, bit for bit, whether the set's block is regular (LU) or singular
   * (least norm: M = B B^T of rank 4 in 12). The reference runs in a
   * workspace of its own that has seen only the same first solve. */
  for (int singular = 0; singular < 2; singular++) {
    int n = 12;
    double y_singular[12];
    if (singular) {
      /* B > 0, and the solution y = B c (c = 1) on the set i % 3 != 0:
       * in the range of M_AA, so the least-norm solve finds it */
      double B[12 * 4];
      for (int i = 0; i < n * 4; i++) B[i] = 1.5 + tu_rand();
      for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
          double s = 0;
          for (int l = 0; l < 4; l++) s += B[l * n + i] * B[l * n + j];
          M[j * n + i] = s;
        }
      for (int i = 0; i < n; i++) {
        y_singular[i] = 0;
        for (int l = 0; l < 4 && i % 3; l++) y_singular[i] += B[l * n + i];
      }
      for (int i = 0; i < n; i++) {
        q[i] = i % 3 ? 0 : 0.5;
        for (int j = 0; j < n; j++) q[i] -= M[j * n + i] * y_singular[j];
      }
    } else {
      make(SPD, n, M, q);
    }
    sb_lcp_work *wref = sb_lcp_work_create(NMAX);
    sb_lcp_options o = opt;
    o.warm_start = 1;
    sb_lcp_info ia, ib;
    double za[NMAX], zb[NMAX], q3[NMAX];
    for (int i = 0; i < n; i++) za[i] = zb[i] = singular ? y_singular[i] : q[i] < 0 ? 1 : 0;
    sb_lcp_status sa = sb_lcp_solve(wk, n, M, q, za, w, &o, &ia);
    sb_lcp_status sb = sb_lcp_solve(wref, n, M, q, zb, w, &o, &ib);
    EXPECT(sa == sb && !memcmp(za, zb, n * sizeof(double)), "same_matrix premise: two workspaces agree");
    for (int i = 0; i < n; i++) q3[i] = q[i] - (za[i] > 0 ? 1e-8 * za[i] : 0); /* a proximal shift */
    o.same_matrix = 1;
    sa = sb_lcp_solve(wk, n, M, q3, za, w, &o, &ia);
    o.same_matrix = 0;
    sb = sb_lcp_solve(wref, n, M, q3, zb, w, &o, &ib);
    EXPECT(sa == sb && ia.warm_pivot == ib.warm_pivot && !memcmp(za, zb, n * sizeof(double)),
           "re-solve with same_matrix (%s block): %s (warm pivot %d) vs %s (warm pivot %d), bitwise %s",
           singular ? "singular" : "regular", sb_lcp_status_name(sa), ia.warm_pivot, sb_lcp_status_name(sb),
           ib.warm_pivot, memcmp(za, zb, n * sizeof(double)) ? "different" : "equal");
    EXPECT(sa == SB_LCP_SOLVED && ia.warm_pivot, "%s block: the re-solve is a warm pivot (%s)",
           singular ? "singular" : "regular", ia.message);
    printf("same_matrix re-solve, %s block: %s, warm pivot %d, equal to the uncached solve bit for bit\n",
           singular ? "singular" : "regular", sb_lcp_status_name(sa), ia.warm_pivot);
    sb_lcp_work_free(wref);
  }

  /* same_matrix over a chain of re-solves: the workspace keeps the
   * factorizations of the last two sets it solved with (a proximal re-solve
   * from the first solve's guess retraces both of its passes). Each re-solve,
   * from the first guess again, from the last answer, or from a guess of
   * mixed signs, must give what a workspace that caches nothing gives (the
   * reference re-solves with same_matrix = 0), bit for bit. */
  {
    int n = 16, trials = 12, equal = 0, warm = 0, total = 0;
    make(SPD, n, M, q);
    sb_lcp_work *wref = sb_lcp_work_create(NMAX);
    double zsol[NMAX];
    memset(zsol, 0, sizeof zsol);
    sb_lcp_solve(wref, n, M, q, zsol, w, &opt, NULL);
    for (int t = 0; t < trials; t++) {
      /* the answer with one or two entries moved to the other side: a set a swap or two away */
      double g[NMAX], za[NMAX], zb[NMAX], qt[NMAX];
      memcpy(g, zsol, n * sizeof(double));
      for (int j = 0; j < n; j++) g[j] *= 1 + 0.1 * tu_rand();
      for (int j = t % n; j < n; j += 9) g[j] = g[j] > 0 ? 0 : 0.1 * fabs(tu_rand());
      for (int k = 0; k < 4; k++) {
        /* k = 0: the first solve (no reuse); 1: the first guess again; 2: the last answer; 3: mixed */
        for (int i = 0; i < n; i++) {
          qt[i] = q[i] + (k ? 1e-6 * k * tu_rand() : 0);
          if (k <= 1) za[i] = g[i];
          else if (k == 3) za[i] = tu_rand() > 0 ? za[i] : 0;
          zb[i] = za[i];
        }
        sb_lcp_options o = opt;
        o.warm_start = 1;
        o.same_matrix = k > 0;
        sb_lcp_info ia, ib;
        sb_lcp_status sa = sb_lcp_solve(wk, n, M, qt, za, w, &o, &ia);
        o.same_matrix = 0;
        sb_lcp_status sb = sb_lcp_solve(wref, n, M, qt, zb, w, &o, &ib);
        total++;
        warm += ia.warm_pivot;
        equal += sa == sb && ia.warm_pivot == ib.warm_pivot && !memcmp(za, zb, n * sizeof(double));
        EXPECT(sa == SB_LCP_SOLVED, "re-solve chain, trial %d, solve %d: %s", t, k, sb_lcp_status_name(sa));
      }
    }
    EXPECT(equal == total, "re-solve chain: %d of %d re-solves equal to the uncached ones bit for bit", equal, total);
    EXPECT(warm >= trials, "re-solve chain: only %d of %d answered by the warm pivot (the cache untested)", warm,
           total);
    printf("same_matrix re-solve chains: %d of %d equal bit for bit to the uncached solve, %d by the warm pivot\n",
           equal, total, warm);
    sb_lcp_work_free(wref);
  }

  /* reuse_solved_set: a degenerate LCP (indices D with z = w = 0 at its
   * answer), solved warm from a guess that loads D, so that the warm pivot's
   * solved set is P u D. A re-solve from that answer whose q loads D a
   * little (as the arms' proximal steps do) predicts P alone (z - w = 0 on
   * D): without the option P is factored anew, found infeasible, and P u D
   * taken from the cache on the next pass; with it the re-solve is answered
   * from P u D's kept factorization at once, none new. Both answers solve
   * the LCP by plain arithmetic and are the same (one pass on the same set
   * from the same z; the solution is unique: M is positive definite). */
  {
    enum { n = 12, np = 4, nd = 3 };
    double Ms[n * n], qd[n], zstar[n], wstar[n], B[n * n], zr[2][n];
    long fresh[2] = {-1, -1};
    int warm_ok[2] = {0, 0};
    random_spd(n, B, Ms);
    for (int i = 0; i < n; i++) {
      zstar[i] = i < np ? 1 + 0.5 * fabs(tu_rand()) : 0;
      wstar[i] = i < np + nd ? 0 : 2 + fabs(tu_rand());
    }
    for (int i = 0; i < n; i++) {
      qd[i] = wstar[i];
      for (int j = 0; j < n; j++) qd[i] -= Ms[j * n + i] * zstar[j];
    }
    for (int use = 0; use < 2; use++) {
      sb_lcp_work *wr = sb_lcp_work_create(NMAX);
      sb_lcp_options o = opt;
      sb_lcp_info info;
      double *zz = zr[use], qt[n], ww[n];
      o.warm_start = 1;
      for (int i = 0; i < n; i++) zz[i] = i < np ? zstar[i] : i < np + nd ? 1 : 0;
      sb_lcp_solve(wr, n, Ms, qd, zz, ww, &o, &info);
      warm_ok[use] = info.status == SB_LCP_SOLVED && info.warm_pivot;
      /* q_P moved so that the answer moves by delta = (delta_P, 1e-8, 0) with
       * (M delta)_D = 0: q_D and w_D = 0 at the last answer stay, so D is
       * not predicted, and the answer loads D */
      double delta[n], Mdp[nd * np], rhs[np];
      memset(delta, 0, sizeof delta);
      memset(rhs, 0, sizeof rhs); /* dgels reads all np rows of B */
      for (int i = 0; i < nd; i++) {
        rhs[i] = 0;
        for (int j = 0; j < nd; j++) rhs[i] -= Ms[(np + j) * n + np + i] * 1e-8;
        for (int j = 0; j < np; j++) Mdp[j * nd + i] = Ms[j * n + np + i];
      }
      LAPACKE_dgels(LAPACK_COL_MAJOR, 'N', nd, np, 1, Mdp, nd, rhs, np); /* least-norm delta_P */
      for (int j = 0; j < np + nd; j++) delta[j] = j < np ? rhs[j] : 1e-8;
      for (int i = 0; i < n; i++) {
        qt[i] = qd[i];
        if (i < np)
          for (int j = 0; j < n; j++) qt[i] -= Ms[j * n + i] * delta[j];
      }
      o.same_matrix = 1;
      o.reuse_solved_set = use;
      long f0 = wr->factorizations;
      sb_lcp_solve(wr, n, Ms, qt, zz, ww, &o, &info);
      fresh[use] = wr->factorizations - f0;
      warm_ok[use] &= info.status == SB_LCP_SOLVED && info.warm_pivot;
      double worst = 0; /* the LCP by plain arithmetic: z >= 0, w = M z + q >= 0, z w = 0 */
      for (int i = 0; i < n; i++) {
        double wi = qt[i], terms = fabs(qt[i]);
        for (int j = 0; j < n; j++) {
          wi += Ms[j * n + i] * zz[j];
          terms += fabs(Ms[j * n + i] * zz[j]);
        }
        double e = fmax(fmax(-zz[i], -wi), fmin(fabs(zz[i]), fabs(wi))) / fmax(terms, 1);
        worst = fmax(worst, e);
      }
      EXPECT(worst <= 1e-12, "reuse_solved_set %d: the re-solve's answer violates the LCP by %.3g", use, worst);
      sb_lcp_work_free(wr);
    }
    double dz = 0;
    for (int i = 0; i < n; i++) dz = fmax(dz, fabs(zr[0][i] - zr[1][i]));
    EXPECT(warm_ok[0] && warm_ok[1], "reuse_solved_set: a solve or re-solve not answered by the warm pivot");
    EXPECT(fresh[0] >= 1 && fresh[1] == 0,
           "reuse_solved_set: the re-solve factored %ld sets without the option, %ld with (want >= 1, 0)",
           fresh[0], fresh[1]);
    EXPECT(dz <= 1e-12, "reuse_solved_set: the answers with and without differ by %.3g", dz);
    printf("reuse_solved_set: re-solve of a degenerate LCP factors %ld set(s) without, %ld with; answers "
           "within %.2g\n", fresh[0], fresh[1], dz);
  }

  /* border_factors: an LCP whose answer loads P u D (D one index), solved
   * warm from a guess that predicts P alone (w_D > 0 there): pass 0 factors
   * P, finds w_D < 0, and pass 1 takes P u D, which with the option is
   * bordered from P's LU (the Schur complement of D) instead of factored
   * anew. The
   * answer equals the plain LU's to round-off and solves the LCP by plain
   * arithmetic. */
  {
    enum { n = 40, np = 20, nd = 1 };
    double Ms[n * n], qd[n], zstar[n], g[n], B[n * n], zr[2][n];
    long bordered[2] = {-1, -1}, factored[2] = {-1, -1};
    int warm_ok[2] = {0, 0};
    random_spd(n, B, Ms);
    for (int i = 0; i < n; i++) {
      zstar[i] = i < np ? 1 + 0.5 * fabs(tu_rand()) : i < np + nd ? 0.01 : 0;
      qd[i] = i < np + nd ? 0 : 2 + fabs(tu_rand()); /* w* */
    }
    for (int i = 0; i < n; i++) /* q = w* - M z*, once every z* is drawn */
      for (int j = 0; j < n; j++) qd[i] -= Ms[j * n + i] * zstar[j];
    /* the guess: z*_P + delta_P, 0 elsewhere, with M_DP delta_P = M_DD z*_D + 0.01 (least norm), so
     * that w_D = 0.01 at the guess */
    double Mdp[nd * np], rhs[np];
    memset(rhs, 0, sizeof rhs); /* dgels reads all np rows of B */
    for (int i = 0; i < nd; i++) {
      rhs[i] = 0.01;
      for (int j = 0; j < nd; j++) rhs[i] += Ms[(np + j) * n + np + i] * zstar[np + j];
      for (int j = 0; j < np; j++) Mdp[j * nd + i] = Ms[j * n + np + i];
    }
    LAPACKE_dgels(LAPACK_COL_MAJOR, 'N', nd, np, 1, Mdp, nd, rhs, np);
    for (int i = 0; i < n; i++) g[i] = i < np ? zstar[i] + rhs[i] : 0;
    for (int use = 0; use < 2; use++) {
      sb_lcp_work *wr = sb_lcp_work_create(NMAX);
      sb_lcp_options o = opt;
      sb_lcp_info info;
      double *zz = zr[use], ww[n];
      o.warm_start = 1;
      o.border_factors = use;
      memcpy(zz, g, sizeof g);
      sb_lcp_solve(wr, n, Ms, qd, zz, ww, &o, &info);
      warm_ok[use] = info.status == SB_LCP_SOLVED && info.warm_pivot;
      bordered[use] = wr->bordered_factors;
      factored[use] = wr->factorizations;
      double worst = 0; /* the LCP by plain arithmetic */
      for (int i = 0; i < n; i++) {
        double wi = qd[i], terms = fabs(qd[i]);
        for (int j = 0; j < n; j++) {
          wi += Ms[j * n + i] * zz[j];
          terms += fabs(Ms[j * n + i] * zz[j]);
        }
        worst = fmax(worst, fmax(fmax(-zz[i], -wi), fmin(fabs(zz[i]), fabs(wi))) / fmax(terms, 1));
      }
      EXPECT(worst <= 1e-12, "border_factors %d: the answer violates the LCP by %.3g", use, worst);
      sb_lcp_work_free(wr);
    }
    double dz = 0, zmax = 0;
    for (int i = 0; i < n; i++) {
      dz = fmax(dz, fabs(zr[0][i] - zr[1][i]));
      zmax = fmax(zmax, fabs(zr[0][i]));
    }
    EXPECT(warm_ok[0] && warm_ok[1], "border_factors: a solve not answered by the warm pivot");
    EXPECT(factored[0] >= 2 && bordered[0] == 0 && bordered[1] >= 1,
           "border_factors: %ld factorizations, %ld bordered without the option; %ld, %ld with (want >= 2, 0; "
           "and >= 1 bordered)", factored[0], bordered[0], factored[1], bordered[1]);
    EXPECT(dz <= 1e-12 * zmax, "border_factors: the answers with and without differ by %.3g (max |z| %.3g)", dz,
           zmax);
    printf("border_factors: %ld of %ld factorizations bordered with the option (0 of %ld without); answers "
           "within %.2g of max |z| %.3g\n", bordered[1], factored[1], factored[0], dz, zmax);
  }

  /* warm_last_set: LCP 1's answer g loads P with D degenerate (z_D = w_D = 0), solved warm from g +
   * 0.01 e_D so that its solved set is P u D; LCP 2 (a new solve of the same size) needs P u D with
   * z_D = 0.01 and, at g, w_D = 0.01 > 0, so the guess predicts P alone: without the option pass 0
   * factors P and pass 1 P u D (2 factorizations), with it pass 0 takes P u D from the last solved
   * set (1). Both answers solve LCP 2 by plain arithmetic and agree. */
  {
    enum { n = 40, np = 20, nd = 1 };
    double Ms[n * n], q1[n], q2[n], z2s[n], g[n], B[n * n], zr[2][n];
    long factored[2] = {-1, -1};
    int ok[2] = {0, 0};
    random_spd(n, B, Ms);
    for (int i = 0; i < n; i++) {
      z2s[i] = i < np ? 1 + 0.5 * fabs(tu_rand()) : i < np + nd ? 0.01 : 0;
      q2[i] = i < np + nd ? 0 : 2 + fabs(tu_rand());
    }
    for (int i = 0; i < n; i++) /* q = w* - M z*, once every z* is drawn */
      for (int j = 0; j < n; j++) q2[i] -= Ms[j * n + i] * z2s[j];
    double Mdp[nd * np], rhs[np];
    memset(rhs, 0, sizeof rhs); /* dgels reads all np rows of B */
    for (int i = 0; i < nd; i++) {
      rhs[i] = 0.01;
      for (int j = 0; j < nd; j++) rhs[i] += Ms[(np + j) * n + np + i] * z2s[np + j];
      for (int j = 0; j < np; j++) Mdp[j * nd + i] = Ms[j * n + np + i];
    }
    LAPACKE_dgels(LAPACK_COL_MAJOR, 'N', nd, np, 1, Mdp, nd, rhs, np);
    for (int i = 0; i < n; i++) g[i] = i < np ? z2s[i] + rhs[i] : 0;
    for (int i = 0; i < n; i++) { /* LCP 1: w = 0 on P u D at g, 1 + ... elsewhere */
      q1[i] = i < np + nd ? 0 : 1 + fabs(tu_rand());
      for (int j = 0; j < n; j++) q1[i] -= Ms[j * n + i] * g[j];
    }
    for (int use = 0; use < 2; use++) {
      sb_lcp_work *wr = sb_lcp_work_create(NMAX);
      sb_lcp_options o = opt;
      sb_lcp_info info1, info2;
      double *zz = zr[use], ww[n];
      o.warm_start = 1;
      o.border_factors = 1;
      o.warm_last_set = use;
      memcpy(zz, g, sizeof g);
      zz[np] = 0.01;
      sb_lcp_solve(wr, n, Ms, q1, zz, ww, &o, &info1);
      long before = wr->factorizations;
      sb_lcp_solve(wr, n, Ms, q2, zz, ww, &o, &info2);
      factored[use] = wr->factorizations - before;
      ok[use] = info1.status == SB_LCP_SOLVED && info1.warm_pivot && info2.status == SB_LCP_SOLVED &&
                info2.warm_pivot;
      double worst = 0;
      for (int i = 0; i < n; i++) {
        double wi = q2[i], terms = fabs(q2[i]);
        for (int j = 0; j < n; j++) {
          wi += Ms[j * n + i] * zz[j];
          terms += fabs(Ms[j * n + i] * zz[j]);
        }
        worst = fmax(worst, fmax(fmax(-zz[i], -wi), fmin(fabs(zz[i]), fabs(wi))) / fmax(terms, 1));
      }
      EXPECT(worst <= 1e-12, "warm_last_set %d: the answer violates LCP 2 by %.3g", use, worst);
      sb_lcp_work_free(wr);
    }
    double dz = 0;
    for (int i = 0; i < n; i++) dz = fmax(dz, fabs(zr[0][i] - zr[1][i]));
    EXPECT(ok[0] && ok[1], "warm_last_set: a solve not answered by the warm pivot");
    EXPECT(factored[0] >= 2 && factored[1] == 1,
           "warm_last_set: LCP 2 factored %ld sets without the option, %ld with (want >= 2, 1)", factored[0],
           factored[1]);
    EXPECT(dz <= 1e-12, "warm_last_set: the answers with and without differ by %.3g", dz);
    printf("warm_last_set: LCP 2 factors %ld set(s) without, %ld with; answers within %.2g\n", factored[0],
           factored[1], dz);
  }

  /* A ray of solutions must not loosen the tolerance of the other rows.
   * w0 = z0 - 1, w1 = z1 + z2 - 1/2, w2 = -z1: z0 = 1, z1 = 0, and any
   * z2 >= 1/2 (the sliding-speed bound of an unloaded contact has such a
   * ray). From z = (1 + 1e-5, 0, 1e9) the residual is 1e-5, which the terms
   * of row 1 (1e9) would excuse; row 0's own terms (2) do not. */
  {
    int n = 3;
    double Mr[9] = {1, 0, 0, 0, 1, -1, 0, 1, 0}, qr[3] = {-1, -0.5, 0};
    sb_lcp_options o = opt;
    o.warm_start = 1;
    for (int s = 0; s < 2; s++) {
      double zr[3] = {1 + 1e-5, 0, 1e9}, wr[3];
      sb_lcp_info info;
      sb_lcp_status st = s ? sb_lcp_solve(wk, n, Mr, qr, zr, wr, &o, &info)
                           : sb_lcp_solve_with(wk, SB_LCP_FB, n, Mr, qr, zr, wr, &o, &info);
      double w0 = zr[0] - 1, w1 = zr[1] + zr[2] - 0.5, w2 = -zr[1];
      double res = fmax(fabs(fmin(zr[0], w0)), fmax(fabs(fmin(zr[1], w1)), fabs(fmin(zr[2], w2))));
      EXPECT(st == SB_LCP_SOLVED && fabs(zr[0] - 1) <= 1e-12 && res <= 1e-12,
             "solution ray (%s): z0 = 1 + %.3g, residual %.3g, %s", s ? "chain" : "fb", zr[0] - 1, res,
             sb_lcp_status_name(st));
    }
  }

  /* Bad input: sizes and non-finite data are refused with a message, z zeroed. */
  {
    double m2[4] = {1, 0, 0, 1}, q2[2] = {-1, -1}, z2[2] = {NAN, NAN}, w2[2];
    sb_lcp_info info;
    EXPECT(sb_lcp_solve(wk, 0, m2, q2, z2, w2, &opt, &info) == SB_LCP_BAD_INPUT && info.message[0], "n = 0 refused");
    static double mbig[(NMAX + 1) * (NMAX + 1)], qbig[NMAX + 1], zbig[NMAX + 1];
    zbig[0] = NAN;
    EXPECT(sb_lcp_solve(wk, NMAX + 1, mbig, qbig, zbig, NULL, &opt, &info) == SB_LCP_BAD_INPUT && zbig[0] == 0,
           "n above the workspace refused, z zeroed");
    m2[1] = NAN;
    EXPECT(sb_lcp_solve(wk, 2, m2, q2, z2, w2, &opt, &info) == SB_LCP_BAD_INPUT && strstr(info.message, "M(1, 0)"),
           "NaN in M named: '%s'", info.message);
    EXPECT(z2[0] == 0 && z2[1] == 0, "z zeroed on bad input");
    m2[1] = 0;
    q2[1] = INFINITY;
    EXPECT(sb_lcp_solve(wk, 2, m2, q2, z2, w2, &opt, &info) == SB_LCP_BAD_INPUT && strstr(info.message, "q(1)"),
           "Inf in q named: '%s'", info.message);
    q2[1] = -1;
    /* M's finiteness scan is skipped only for a same_matrix solve of the size this workspace last
     * scanned finite: not in a fresh workspace, not after a non-finite M (same_matrix promises the
     * last matrix, which was refused), not at another size */
    {
      sb_lcp_work *wf = sb_lcp_work_create(4);
      double m3[9] = {2, 0, 0, 0, 2, 0, 0, 0, 2}, q3[3] = {-1, -1, -1}, z3[3], w3[3];
      sb_lcp_options of = opt;
      of.same_matrix = 1;
      m3[5] = NAN;
      EXPECT(sb_lcp_solve(wf, 3, m3, q3, z3, w3, &of, &info) == SB_LCP_BAD_INPUT && strstr(info.message, "M(2, 1)"),
             "a fresh workspace scans M under same_matrix: '%s'", info.message);
      m3[5] = 0;
      of.same_matrix = 0;
      EXPECT(sb_lcp_solve(wf, 3, m3, q3, z3, w3, &of, &info) == SB_LCP_SOLVED, "finite M solved: %s", info.message);
      m3[5] = INFINITY;
      EXPECT(sb_lcp_solve(wf, 3, m3, q3, z3, w3, &of, &info) == SB_LCP_BAD_INPUT && strstr(info.message, "M(2, 1)"),
             "a non-finite M after a finite one (same_matrix = 0) named: '%s'", info.message);
      of.same_matrix = 1;
      EXPECT(sb_lcp_solve(wf, 3, m3, q3, z3, w3, &of, &info) == SB_LCP_BAD_INPUT && strstr(info.message, "M(2, 1)"),
             "same_matrix after a non-finite M still refuses it: '%s'", info.message);
      m3[5] = 0;
      of.same_matrix = 0;
      EXPECT(sb_lcp_solve(wf, 3, m3, q3, z3, w3, &of, &info) == SB_LCP_SOLVED, "finite M solved again: %s",
             info.message);
      of.same_matrix = 1;
      EXPECT(sb_lcp_solve(wf, 3, m3, q3, z3, w3, &of, &info) == SB_LCP_SOLVED, "same_matrix re-solve: %s",
             info.message);
      double m2n[4] = {1, NAN, 0, 1};
      EXPECT(sb_lcp_solve(wf, 2, m2n, q3, z3, w3, &of, &info) == SB_LCP_BAD_INPUT && strstr(info.message, "M(1, 0)"),
             "same_matrix at another size scans M: '%s'", info.message);
      sb_lcp_work_free(wf);
    }
    /* options outside their plausible ranges: a tol of 1e308 would accept anything, a budget
     * of INT_MAX sweeps never ends on a problem without solution */
    struct { const char *name; double tol; int iters, pivots, sweeps; } bad_opt[] = {
        {"tol", 1e308, 0, 0, 0}, {"tol", NAN, 0, 0, 0}, {"tol", -1, 0, 0, 0}, {"tol", 1e-300, 0, 0, 0},
        {"max_iter", 0, 2147483647, 0, 0}, {"max_pivots", 0, 0, -5, 0}, {"max_sweeps", 0, 0, 0, 2147483647}};
    for (unsigned k = 0; k < sizeof bad_opt / sizeof bad_opt[0]; k++) {
      sb_lcp_options ob = opt;
      ob.tol = bad_opt[k].tol;
      ob.max_iter = bad_opt[k].iters;
      ob.max_pivots = bad_opt[k].pivots;
      ob.max_sweeps = bad_opt[k].sweeps;
      EXPECT(sb_lcp_solve(wk, 2, m2, q2, z2, w2, &ob, &info) == SB_LCP_BAD_INPUT &&
                 strstr(info.message, bad_opt[k].name) && strstr(info.message, "outside"),
             "option %s out of range refused: '%s'", bad_opt[k].name, info.message);
    }
    sb_lcp_options o = opt;
    o.warm_start = 1;
    z2[0] = NAN;
    EXPECT(sb_lcp_solve(wk, 2, m2, q2, z2, w2, &o, &info) == SB_LCP_SOLVED && fabs(z2[0] - 1) < 1e-12,
           "a NaN warm start is ignored");
  }
  test_bordered_singularity(wk);
  sb_lcp_work_free(wk);
  test_warm_lemke();
  test_lemke_revised();
  test_lemke_form_reported();
  test_second_guess();
  test_lemke_revised_drift();
  test_unformed_matrix();
  test_row_terms_from_entries();
  return test_report("lcp_solvers");
}

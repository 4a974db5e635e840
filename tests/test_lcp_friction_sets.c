/* The friction-pyramid rule of the warm pivot (sb_lcp_friction_set_singular,
 * lcp_internal.h): the active sets it declares singular by construction are
 * singular in the conditioned LCP that sb_contact really solves, and the
 * ones it does not declare are not (checked by singular values, LAPACK's
 * dgesvd, independent of the rule); the option changes no answer (the same z,
 * bit for bit, as the LU attempt it skips); and a bad block description is
 * refused with a message naming it. */
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

/* sigma_min / sigma_max of A's principal submatrix on the flagged rows. */
static double set_conditioning(int n, const double *A, const int *in) {
  int set[NC * (SB_CONTACT_MAX_DIRECTIONS + 2)], na = 0;
  for (int i = 0; i < n; i++)
    if (in[i]) set[na++] = i;
  double S[NC * (SB_CONTACT_MAX_DIRECTIONS + 2) * NC * (SB_CONTACT_MAX_DIRECTIONS + 2)];
  double sv[NC * (SB_CONTACT_MAX_DIRECTIONS + 2)], superb[NC * (SB_CONTACT_MAX_DIRECTIONS + 2)];
  for (int b = 0; b < na; b++)
    for (int a = 0; a < na; a++) S[b * na + a] = A[(size_t)set[b] * n + set[a]];
  if (LAPACKE_dgesvd(LAPACK_COL_MAJOR, 'N', 'N', na, na, S, na, sv, NULL, 1, NULL, 1, superb)) return NAN;
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
  double worst_flagged = 0, worst_clear = 1;
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
        } else {
          clear++;
          worst_clear = fmin(worst_clear, c);
          EXPECT(c > 1e-8, "r = %d, block %d, betas 0x%x, gamma %d (%d betas): not declared singular, but "
                 "sigma_min / sigma_max = %.3g", r, blk, mask, gamma, count, c);
        }
      }
  printf("r = %d: %d sets declared singular (largest sigma ratio %.2g), %d not (smallest %.2g)\n", r, flagged,
         worst_flagged, clear, worst_clear);
  EXPECT(flagged > 0 && clear > 0, "r = %d: both kinds of set seen", r);
  sb_contact_free(P);
}

/* The conditioned LCP solved from a guess whose sticking contact carries
 * its tangential impulse on both betas of an opposite pair (the same
 * impulse, split as a least-norm answer splits it): the predicted set is
 * singular by construction; with friction_blocks the LU attempt is skipped,
 * and z must be the same to the bit. */
static void test_same_answer(void) {
  const int r = 4, bs = r + 2;
  sb_contact_problem *P = random_pyramids(r, 0x5eedull);
  EXPECT(P != NULL, "the contact problem solves");
  if (!P) return;
  int n;
  const double *A, *b, *Ac, *bc;
  sb_contact_lcp(P, &n, &A, &b, &Ac, &bc);
  sb_lcp_work *w = sb_lcp_work_create(n);
  double z0[NC * 6], z1[NC * 6], zg[NC * 6], wv[NC * 6];
  int block[NC];
  for (int k = 0; k < NC; k++) block[k] = bs;
  sb_lcp_options o = sb_lcp_default_options();
  o.nblock = NC;
  o.block = block;
  memset(zg, 0, sizeof zg);
  sb_lcp_info info;
  EXPECT(sb_lcp_solve(w, n, Ac, bc, zg, wv, &o, &info) == SB_LCP_SOLVED, "cold solve: %s", info.message);
  /* a loaded contact, both betas of the pair (1, 3) raised alike */
  int blk = -1;
  for (int k = 0; k < NC && blk < 0; k++)
    if (zg[k * bs] > 0) blk = k;
  EXPECT(blk >= 0, "a loaded contact");
  if (blk < 0) blk = 0;
  double lift = 0.25 * zg[blk * bs] + 1e-3;
  zg[blk * bs + 1] += lift;
  zg[blk * bs + 3] += lift;
  zg[blk * bs + bs - 1] = 0;
  int in[NC * 6];
  for (int i = 0; i < n; i++) in[i] = zg[i] - 0 > 0;
  EXPECT(sb_lcp_friction_set_singular(NC, block, in), "the guess's set is singular by construction");
  o.warm_start = 1;
  sb_lcp_info i0, i1;
  memcpy(z0, zg, sizeof zg);
  memcpy(z1, zg, sizeof zg);
  o.friction_blocks = 0;
  sb_lcp_status s0 = sb_lcp_solve(w, n, Ac, bc, z0, NULL, &o, &i0);
  o.friction_blocks = 1;
  sb_lcp_status s1 = sb_lcp_solve(w, n, Ac, bc, z1, NULL, &o, &i1);
  EXPECT(s0 == SB_LCP_SOLVED && s1 == SB_LCP_SOLVED, "both solved (%s; %s)", i0.message, i1.message);
  EXPECT(i0.warm_pivot == i1.warm_pivot, "the same path: warm pivot %d and %d", i0.warm_pivot, i1.warm_pivot);
  EXPECT(!memcmp(z0, z1, n * sizeof(double)), "the same z, bit for bit");
  printf("opposite betas loaded: warm pivot %d / %d, residual %.3g\n", i0.warm_pivot, i1.warm_pivot, i1.residual);
  sb_lcp_work_free(w);
  sb_contact_free(P);
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
  test_same_answer();
  test_refusals();
  return test_report("test_lcp_friction_sets");
}

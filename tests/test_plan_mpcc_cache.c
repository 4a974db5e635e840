/* The MPCC's arm cache (plan/arm_cache.h; mpcc.c's arm terms and disk kinematics by arm state):
 *  - the store alone: a value is found again only at its key's exact bits (one bit of q, or -0.0
 *    for 0.0 in v, misses), and when full an insertion drops the oldest entry only;
 *  - the MPCC on a short instance, both contact times, both stages: every step's rows, Jacobian
 *    block and the full Hessian with the cache on are bit for bit those with it off (the cache
 *    never serves terms of another state), and with the contact at the step's end the Jacobian's
 *    differences in q_{k+1} are served to step k + 1 (the neighbour's reuse the cache is for);
 *    a point moved by one bit of one q is computed afresh, again bit for bit. */
#include <stdint.h>
#include <string.h>

#include "arm_cache.h"
#include "mpcc.h"
#include "plan_mpcc_points.h"
#include "testutil.h"

static void flip_last_bit(double *x) {
  uint64_t b;
  memcpy(&b, x, sizeof b);
  b ^= 1;
  memcpy(x, &b, sizeof b);
}

static void expect_store(void) {
  arm_cache *c = arm_cache_create(3, 2, 4);
  EXPECT(c != NULL, "arm_cache_create(3, 2, 4)");
  if (!c) return;
  double q[3] = {0.1, -0.2, 0.3}, v[3] = {0, 1, 2};
  double *e = arm_cache_insert(c, q, v);
  e[0] = 7;
  e[1] = 8;
  const double *f = arm_cache_find(c, q, v);
  EXPECT(f == e && f[0] == 7 && f[1] == 8, "the stored key is found with its value");
  double q1[3], v1[3];
  memcpy(q1, q, sizeof q);
  flip_last_bit(&q1[2]);
  EXPECT(arm_cache_find(c, q1, v) == NULL, "one bit of q changed: a miss");
  memcpy(v1, v, sizeof v);
  v1[0] = -0.0;
  EXPECT(arm_cache_find(c, q, v1) == NULL, "-0.0 for 0.0 in v: a miss (bits, not values)");
  long hits, misses;
  arm_cache_counts(c, &hits, &misses);
  EXPECT(hits == 1 && misses == 2, "counts: %ld hits, %ld misses (want 1, 2)", hits, misses);
  /* 9 more keys through a store of 4: the last 4 stay, every earlier one is gone */
  for (int i = 1; i <= 9; i++) {
    q1[0] = i;
    arm_cache_insert(c, q1, v)[0] = i;
  }
  EXPECT(arm_cache_find(c, q, v) == NULL, "the first key dropped after 9 more insertions");
  for (int i = 1; i <= 9; i++) {
    q1[0] = i;
    f = arm_cache_find(c, q1, v);
    if (i > 5) EXPECT(f && f[0] == i, "key %d of the last 4 kept with its value", i);
    else EXPECT(f == NULL, "key %d (older than the last 4) dropped", i);
  }
  arm_cache_clear(c);
  q1[0] = 9;
  EXPECT(arm_cache_find(c, q1, v) == NULL, "cleared: nothing found");
  arm_cache_free(c);
}

/* All step rows, then all Jacobian blocks, then the Hessian of p at z (the solver's order), into
   out (rows, blocks, H); the cache's hits during the Jacobian into *jac_hits. */
static int evaluate(plan_mpcc *p, const plan_mpcc_params *P, const double *z, const double *lambda, int dynamic,
                    double *out, long *jac_hits) {
  int m = plan_mpcc_nconstraints(p, dynamic), R = m / P->N, C = plan_mpcc_block(p) + 2 * plan_mpcc_n(p) + 7;
  double *o = out;
  for (int k = 0; k < P->N; k++, o += R) plan_mpcc_step_rows(p, z, k, dynamic, o);
  long h0, h1;
  plan_mpcc_arm_cache_counts(p, &h0, NULL);
  for (int k = 0; k < P->N; k++, o += (size_t)R * C) plan_mpcc_step_jacobian_block(p, z, k, dynamic, o);
  plan_mpcc_arm_cache_counts(p, &h1, NULL);
  *jac_hits = h1 - h0;
  return plan_mpcc_hessian(p, z, lambda, 0.7, dynamic, o);
}

static void expect_same_bits(plan_mpcc_params P, const char *name) {
  char err[256];
  plan_mpcc *on = plan_mpcc_create(&P, err, sizeof err), *off = plan_mpcc_create(&P, err, sizeof err);
  EXPECT(on && off, "%s: create: %s", name, err);
  if (!on || !off) return;
  EXPECT(plan_mpcc_set_arm_cache(off, 0) == 0, "%s: the cache off", name);
  int n = plan_mpcc_n(on), B = plan_mpcc_block(on), nv = plan_mpcc_nvars(on);
  double *z = point_off_rest(on, &P);
  for (int dynamic = 0; dynamic < 2; dynamic++) {
    int m = plan_mpcc_nconstraints(on, dynamic), C = B + 2 * n + 7;
    size_t len = (size_t)m + (size_t)m * C + (size_t)nv * nv;
    double *a = malloc(sizeof(double) * len), *b = malloc(sizeof(double) * len), *lambda = malloc(sizeof(double) * m);
    for (int i = 0; i < m; i++) lambda[i] = tu_rand();
    long hits_on, hits_off, misses;
    int ra = evaluate(on, &P, z, lambda, dynamic, a, &hits_on), rb = evaluate(off, &P, z, lambda, dynamic, b, &hits_off);
    EXPECT(ra == 0 && rb == 0, "%s, %s stage: Hessians evaluated (%d, %d)", name, dynamic ? "dynamic" : "kinematic", ra, rb);
    size_t first = len;
    for (size_t i = 0; i < len && first == len; i++)
      if (memcmp(a + i, b + i, sizeof(double))) first = i;
    EXPECT(first == len, "%s, %s stage: cache on and off differ first at value %zu of %zu (%.17g vs %.17g)", name,
           dynamic ? "dynamic" : "kinematic", first, len, first < len ? a[first] : 0, first < len ? b[first] : 0);
    if (dynamic && !P.contact_at_start)   /* step k's 2 n + 1 geometry states are step k + 1's arm states */
      EXPECT(hits_on >= (long)(P.N - 1) * (2 * n + 1), "%s: the Jacobian's cache hits %ld, want >= %d", name, hits_on,
             (P.N - 1) * (2 * n + 1));
    /* one bit of one q moved: computed afresh there, the same bits as without the cache */
    double *z1 = malloc(sizeof(double) * nv);
    memcpy(z1, z, sizeof(double) * nv);
    flip_last_bit(&z1[B + 1]);
    plan_mpcc_arm_cache_counts(on, NULL, &misses);
    long misses0 = misses;
    evaluate(on, &P, z1, lambda, dynamic, a, &hits_on);
    evaluate(off, &P, z1, lambda, dynamic, b, &hits_off);
    plan_mpcc_arm_cache_counts(on, NULL, &misses);
    EXPECT(!memcmp(a, b, sizeof(double) * len), "%s, %s stage: one bit of q_1 moved: cache on and off differ", name,
           dynamic ? "dynamic" : "kinematic");
    if (dynamic) EXPECT(misses > misses0, "%s: one bit of q_1 moved: no miss (%ld)", name, misses - misses0);
    printf("%s, %s stage: cache on = off over %zu values; Jacobian's cache hits %ld\n", name,
           dynamic ? "dynamic" : "kinematic", len, hits_on);
    free(z1);
    free(a);
    free(b);
    free(lambda);
  }
  free(z);
  plan_mpcc_free(on);
  plan_mpcc_free(off);
}

int main(void) {
  expect_store();
  plan_mpcc_params P = plan_mpcc_rotate_task(1);
  P.N = 3;
  P.T = 0.12;
  P.angle = 0.1;
  expect_same_bits(P, "contact at the end");
  P.contact_at_start = 1;
  P.margin_rows = PLAN_MARGIN_ALL;
  expect_same_bits(P, "contact at the start, margin rows");
  return test_report("plan_mpcc_cache");
}

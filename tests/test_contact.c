/* Contact LCP physics: resting contact with rank-deficient normals (block
 * and disk-discretized soft rod, 4 to 64 contacts), friction on an incline
 * against the analytic answer, two bodies stacked, Ruiz invariance and
 * conditioning, and bad input. */
#include <lapacke.h>
#include <stdlib.h>
#include <string.h>

#include "condition.h"
#include "contact.h"
#include "contact_scenes.h"
#include "testutil.h"

static const double H = 1e-3;

#ifndef CUSP_LCP_DATA
#define CUSP_LCP_DATA "tests/data/lcp"
#endif

static sb_contact_options options_for(sb_lcp_solver s) {
  sb_contact_options o = sb_contact_default_options();
  o.lcp.nchain = 1;
  o.lcp.chain[0] = s;
  return o;
}

/* Numerical rank of the rows of a (rows x cols, row-major) by SVD. */
static int rank_of(int rows, int cols, const double *a) {
  double *c = malloc(sizeof(double) * rows * cols), s[512], sup[512];
  memcpy(c, a, sizeof(double) * rows * cols);
  LAPACKE_dgesvd(LAPACK_ROW_MAJOR, 'N', 'N', rows, cols, c, cols, s, NULL, 1, NULL, 1, sup);
  int rk = 0;
  for (int k = 0; k < (rows < cols ? rows : cols); k++)
    if (s[k] > 1e-9 * s[0]) rk++;
  free(c);
  return rk;
}

/* Normal Jacobian rows of the block contacts, built here from geometry. */
static void block_normal_rows(const scene_block *s, int m, double *Jn) {
  int cols = (int)ceil(sqrt((double)m)), rows = (m + cols - 1) / cols;
  for (int i = 0; i < m; i++) {
    int ix = i % cols, iy = i / cols;
    double local[3] = {cols > 1 ? -s->half[0] + 2 * s->half[0] * ix / (cols - 1) : 0,
                       rows > 1 ? -s->half[1] + 2 * s->half[1] * iy / (rows - 1) : 0, -s->half[2]};
    double r[3];
    for (int k = 0; k < 3; k++) r[k] = s->R[3 * k] * local[0] + s->R[3 * k + 1] * local[1] + s->R[3 * k + 2] * local[2];
    const double *n = s->normal;
    double rxn[3] = {r[1] * n[2] - r[2] * n[1], r[2] * n[0] - r[0] * n[2], r[0] * n[1] - r[1] * n[0]};
    for (int k = 0; k < 3; k++) {
      Jn[i * 6 + k] = n[k];
      Jn[i * 6 + 3 + k] = rxn[k]; /* n . (omega x r) = (r x n) . omega */
    }
  }
}

static void check_kept_rank(sb_contact_problem *P, int m, int ndof, const double *Jn, const char *what) {
  double *Jk = malloc(sizeof(double) * m * ndof);
  int nk = 0;
  for (int i = 0; i < m; i++) {
    int kept;
    sb_contact_result(P, i, NULL, NULL, NULL, &kept);
    if (kept) memcpy(Jk + nk++ * ndof, Jn + i * ndof, sizeof(double) * ndof);
  }
  int rk_all = rank_of(m, ndof, Jn), rk_kept = nk ? rank_of(nk, ndof, Jk) : 0;
  EXPECT(rk_kept == nk && nk == rk_all, "%s: kept %d contacts of rank %d; all %d have rank %d", what, nk, rk_kept,
         m, rk_all);
  free(Jk);
}

static double net_normal(sb_contact_problem *P, int m, const double normal[3]) {
  double sum = 0;
  for (int i = 0; i < m; i++) {
    double imp[3];
    sb_contact_result(P, i, imp, NULL, NULL, NULL);
    sum += imp[0] * normal[0] + imp[1] * normal[1] + imp[2] * normal[2];
  }
  return sum;
}

static double min_normal_velocity(sb_contact_problem *P, int m, const double normal[3]) {
  double lo = INFINITY;
  for (int i = 0; i < m; i++) {
    double v[3];
    sb_contact_relative_velocity(P, i, v);
    lo = fmin(lo, v[0] * normal[0] + v[1] * normal[1] + v[2] * normal[2]);
  }
  return lo;
}

static void test_block_resting(void) {
  char err[256];
  sb_contact_problem *P = sb_contact_create(64, 2, 12, 16, err, sizeof err);
  double worst = 0;
  for (int s = 0; s < 2; s++)
    for (int k = 2; k <= 8; k++) {
      int m = k * k;
      scene_block sc;
      sb_contact_clear(P);
      /* each block is a first step: the last one's loads, under the same
       * contact ids, belong to another block */
      sb_contact_warm_load(P, (const double[]){0, 0});
      EXPECT(scene_block_fill(P, &sc, 0, 0.5, m, H, err, sizeof err) == 0, "block scene: %s", err);
      sb_contact_options o = options_for((sb_lcp_solver)s);
      sb_contact_info info;
      int rc = sb_contact_solve(P, H, &o, &info, err, sizeof err);
      EXPECT(rc == 0, "block %d contacts, %s: %s", m, sb_lcp_solver_name((sb_lcp_solver)s), err);
      double Jn[64 * 6];
      block_normal_rows(&sc, m, Jn);
      check_kept_rank(P, m, 6, Jn, "block");
      /* the same step again, warm from its own answer: its loads are an
       * independent set, which the warm order keeps */
      rc = sb_contact_solve(P, H, &o, &info, err, sizeof err);
      EXPECT(rc == 0 && info.rank_passes == 1 && info.cold_solves == 0,
             "block %d contacts, %s, warm: %s, %d passes, %d of %d solves cold", m,
             sb_lcp_solver_name((sb_lcp_solver)s), rc ? err : "solved", info.rank_passes, info.cold_solves,
             info.solves);
      check_kept_rank(P, m, 6, Jn, "block, warm");
      double weight = sc.mass * SCENE_G * H, net = net_normal(P, m, sc.normal);
      worst = fmax(worst, fabs(net - weight) / weight);
      EXPECT(fabs(net - weight) <= 1e-9 * weight, "block %d contacts, %s: net normal impulse %.15g, weight*h %.15g",
             m, sb_lcp_solver_name((sb_lcp_solver)s), net, weight);
      EXPECT(min_normal_velocity(P, m, sc.normal) >= -1e-9 * SCENE_G * H, "block %d contacts: no contact penetrates (%g)", m,
             min_normal_velocity(P, m, sc.normal));
    }
  printf("block on a plane, 4..64 contacts: net normal impulse within %.2e of weight*h\n", worst);
  sb_contact_free(P);
}

static void test_rod_resting(void) {
  char err[256];
  int cfg[][3] = {{1, 4, 1}, {2, 3, 2}, {3, 4, 2}, {4, 4, 2}, {8, 4, 2}};
  double worst = 0;
  for (unsigned c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
    scene_rod rod;
    scene_rod_params(&rod, cfg[c][0], cfg[c][1], cfg[c][2]);
    sb_model *m = sb_model_create(&rod.chain, err, sizeof err);
    EXPECT(m != NULL, "rod model: %s", err);
    if (!m) continue;
    sb_state *st = sb_state_create(m);
    sb_work *w = sb_work_create(m);
    int nc = rod.chain.ndisk * rod.per_disk;
    sb_contact_problem *P = sb_contact_create(nc, 1, m->n, 4, err, sizeof err);
    EXPECT(sb_step_prepare(m, st, w, NULL, H, err, sizeof err) == 0, "prepare: %s", err);
    double *Jn = malloc(sizeof(double) * nc * m->n), *J6 = malloc(sizeof(double) * 6 * m->n);
    for (int s = 0; s < 2; s++) {
      sb_contact_clear(P);
      EXPECT(scene_rod_fill(P, &rod, m, w, 0.5, err, sizeof err) == 0, "rod scene: %s", err);
      sb_contact_options o = options_for((sb_lcp_solver)s);
      sb_contact_info info;
      EXPECT(sb_contact_solve(P, H, &o, &info, err, sizeof err) == 0, "rod %d contacts, %s: %s", nc,
             sb_lcp_solver_name((sb_lcp_solver)s), err);
      /* normal rows from the body Jacobian: world z velocity of each rim point */
      for (int i = 0; i < nc; i++) {
        int d = i / rod.per_disk;
        sb_pose g;
        sb_point_kinematics(m, w, rod.disk[d].segment, rod.disk[d].s, &g, J6, NULL, NULL);
        double off[3] = {rod.disk_radius, 0, 0};
        if (rod.per_disk > 1) off[2] = rod.disk_thickness * ((i % rod.per_disk) / (rod.per_disk - 1.0) - 0.5);
        for (int j = 0; j < m->n; j++) {
          double om[3] = {J6[j], J6[m->n + j], J6[2 * m->n + j]}, vb[3];
          for (int a = 0; a < 3; a++) vb[a] = J6[(3 + a) * m->n + j];
          vb[0] += om[1] * off[2] - om[2] * off[1];
          vb[1] += om[2] * off[0] - om[0] * off[2];
          vb[2] += om[0] * off[1] - om[1] * off[0];
          Jn[i * m->n + j] = g.R[6] * vb[0] + g.R[7] * vb[1] + g.R[8] * vb[2];
        }
      }
      check_kept_rank(P, nc, m->n, Jn, "rod");
      double up[3] = {0, 0, 1}, weight = m->total_mass * SCENE_G * H, net = net_normal(P, nc, up);
      worst = fmax(worst, fabs(net - weight) / weight);
      EXPECT(fabs(net - weight) <= 1e-9 * weight, "rod %d contacts (%d kept), %s: net normal impulse %.15g, weight*h %.15g",
             nc, info.nkept, sb_lcp_solver_name((sb_lcp_solver)s), net, weight);
      EXPECT(min_normal_velocity(P, nc, up) >= -1e-9 * SCENE_G * H, "rod %d contacts: no contact penetrates (%g)", nc,
             min_normal_velocity(P, nc, up));
    }
    free(Jn);
    free(J6);
    sb_contact_free(P);
    sb_work_free(w);
    sb_state_free(st);
    sb_model_free(m);
  }
  printf("soft rod on a plane, 4..64 contacts: net normal impulse within %.2e of weight*h\n", worst);
}

static void test_incline(void) {
  char err[256];
  sb_contact_problem *P = sb_contact_create(16, 1, 6, 16, err, sizeof err);
  double mu = 0.5;
  for (int s = 0; s < 2; s++)
    for (int sliding = 0; sliding < 2; sliding++) {
      double theta = sliding ? 35 * M_PI / 180 : 20 * M_PI / 180;
      scene_block sc;
      sb_contact_clear(P);
      scene_block_fill(P, &sc, theta, mu, 4, H, err, sizeof err);
      sb_contact_options o = options_for((sb_lcp_solver)s);
      sb_contact_info info;
      EXPECT(sb_contact_solve(P, H, &o, &info, err, sizeof err) == 0, "incline: %s", err);
      double v[6];
      sb_contact_body_velocity(P, 0, v);
      double along = v[0] * sc.downhill[0] + v[1] * sc.downhill[1] + v[2] * sc.downhill[2];
      double normal = v[0] * sc.normal[0] + v[1] * sc.normal[1] + v[2] * sc.normal[2];
      double expect = sliding ? H * SCENE_G * (sin(theta) - mu * cos(theta)) : 0;
      const char *name = sb_lcp_solver_name((sb_lcp_solver)s);
      if (sliding)
        EXPECT(fabs(along - expect) <= 1e-9 * expect, "%s: sliding speed %.15g, analytic h g (sin - mu cos) = %.15g", name,
               along, expect);
      else
        EXPECT(fabs(along) <= 1e-12 * SCENE_G * H, "%s: sticking, tangential speed %g", name, along);
      EXPECT(fabs(normal) <= 1e-9 * SCENE_G * H && fabs(v[1]) <= 1e-9 * SCENE_G * H && tu_maxabs(v + 3, 3) <= 1e-8 * SCENE_G * H,
             "%s: no normal, lateral or angular velocity (%g %g %g)", name, normal, v[1], tu_maxabs(v + 3, 3));
      for (int i = 0; i < 4; i++) {
        double u[3];
        sb_contact_relative_velocity(P, i, u);
        double t = u[0] * sc.downhill[0] + u[1] * sc.downhill[1] + u[2] * sc.downhill[2];
        EXPECT(sliding || fabs(t) <= 1e-12 * SCENE_G * H, "%s: contact %d sticks (%g)", name, i, t);
      }
      printf("incline %2.0f deg, %s: downhill speed %.12g (analytic %.12g), %d of 4 contacts kept, %d stage-1 passes\n",
             theta * 180 / M_PI, name, along, expect, info.nkept, info.rank_passes);
    }
  sb_contact_free(P);
}

/* Block A on block B on the ground: impulses balance weights, A and B stay at rest. */
static void test_stack(void) {
  char err[256];
  sb_contact_problem *P = sb_contact_create(8, 2, 12, 4, err, sizeof err);
  double mA = 1.0, mB = 3.0, Mi[2][36] = {{0}}, vf[6] = {0, 0, -SCENE_G * H, 0, 0, 0};
  for (int b = 0; b < 2; b++) {
    double mass = b ? mB : mA;
    for (int k = 0; k < 3; k++) Mi[b][7 * k] = mass;
    for (int k = 3; k < 6; k++) Mi[b][7 * k] = mass * 0.01;
  }
  int A = sb_contact_add_dense(P, 6, Mi[0], vf, err, sizeof err);
  int B = sb_contact_add_dense(P, 6, Mi[1], vf, err, sizeof err);
  double corners[4][2] = {{-0.1, -0.1}, {0.1, -0.1}, {-0.1, 0.1}, {0.1, 0.1}};
  for (int level = 0; level < 2; level++)
    for (int c = 0; c < 4; c++) {
      /* level 0: A's bottom (0.1 below A's com, 0.1 above B's) on B; level 1: B on the ground */
      double x = corners[c][0], y = corners[c][1];
      double j0[18] = {1, 0, 0, 0, -0.1, -y, 0, 1, 0, 0.1, 0, x, 0, 0, 1, y, -x, 0};
      double j1[18] = {1, 0, 0, 0, 0.1, -y, 0, 1, 0, -0.1, 0, x, 0, 0, 1, y, -x, 0};
      sb_contact ct;
      memset(&ct, 0, sizeof ct);
      ct.side[0].body = level ? B : A;
      ct.side[0].jac = j0;
      ct.side[1].body = level ? -1 : B;
      ct.side[1].jac = j1;
      ct.normal[2] = 1;
      ct.friction = 0.5;
      ct.id = level * 4 + c;
      EXPECT(sb_contact_add(P, &ct, err, sizeof err) >= 0, "stack contact: %s", err);
    }
  sb_contact_info info;
  EXPECT(sb_contact_solve(P, H, NULL, &info, err, sizeof err) == 0, "stack: %s", err);
  double top = 0, ground = 0;
  for (int i = 0; i < 8; i++) {
    double fn;
    sb_contact_result(P, i, NULL, &fn, NULL, NULL);
    if (i < 4) top += fn;
    else ground += fn;
  }
  EXPECT(fabs(top - mA * SCENE_G * H) <= 1e-9 * mA * SCENE_G * H, "A on B: %.15g vs %.15g", top, mA * SCENE_G * H);
  EXPECT(fabs(ground - (mA + mB) * SCENE_G * H) <= 1e-9 * (mA + mB) * SCENE_G * H, "B on ground: %.15g vs %.15g", ground,
         (mA + mB) * SCENE_G * H);
  double va[6], vb[6];
  sb_contact_body_velocity(P, A, va);
  sb_contact_body_velocity(P, B, vb);
  /* angular velocities: a contact velocity error over a 0.1 m lever */
  EXPECT(tu_maxabs(va, 3) <= 1e-9 * SCENE_G * H && tu_maxabs(vb, 3) <= 1e-9 * SCENE_G * H &&
             tu_maxabs(va + 3, 3) <= 1e-8 * SCENE_G * H && tu_maxabs(vb + 3, 3) <= 1e-8 * SCENE_G * H,
         "both blocks at rest (%g, %g; %s %d iterations, residual %g, %d kept)", tu_maxabs(va, 6), tu_maxabs(vb, 6),
         sb_lcp_solver_name(info.lcp.solver), info.lcp.iterations, info.residual, info.nkept);
  sb_contact_free(P);
}

/* 2-norm condition number of the normal-normal block of a column-major LCP matrix. */
static double normal_block_cond(int n, const double *A, int bs) {
  int k = n / bs;
  double *c = malloc(sizeof(double) * k * k), s[256], sup[256];
  for (int a = 0; a < k; a++)
    for (int b = 0; b < k; b++) c[b * k + a] = A[(size_t)(b * bs) * n + a * bs];
  LAPACKE_dgesvd(LAPACK_COL_MAJOR, 'N', 'N', k, k, c, k, s, NULL, 1, NULL, 1, sup);
  free(c);
  return s[0] / s[k - 1];
}

/* |min(z, A z + b)|inf / max(1, |b|inf): how far z is from solving the LCP (A, b). */
static double lcp_residual(int n, const double *A, const double *b, const double *z) {
  double worst = 0, bmax = tu_maxabs(b, n);
  for (int i = 0; i < n; i++) {
    double w = b[i];
    for (int j = 0; j < n; j++) w += A[(size_t)j * n + i] * z[j];
    worst = fmax(worst, fabs(fmin(z[i], w)));
  }
  return worst / fmax(1, bmax);
}

/* Stage 2 keeps the LCP's solutions (its scales are positive diagonals):
 * the rank-deficient rod (32 contacts on 4 sections) in 20 motions, each
 * contact LCP after stage 1 solved by Lemke alone, unscaled and after Ruiz.
 * Each scaled answer must solve the unscaled LCP (not equal the unscaled
 * answer: the friction of a slid contact can be split over the pyramid in
 * many ways, so the impulses of two right answers differ), and Ruiz must
 * not cost Lemke any problem it solved without (over 300 such motions
 * Lemke met a secondary ray on 26 unscaled, 4 scaled). The motions come
 * from the test's own generator: they do not depend on what other tests
 * drew before. */
static void test_ruiz(void) {
  enum { motions = 20 };
  char err[256];
  scene_rod rod;
  scene_rod_params(&rod, 4, 4, 2);
  sb_model *m = sb_model_create(&rod.chain, err, sizeof err);
  sb_state *st = sb_state_create(m);
  sb_work *w = sb_work_create(m);
  int nc = rod.chain.ndisk * rod.per_disk, nmax = nc * 6;
  sb_contact_problem *P = sb_contact_create(nc, 1, m->n, 4, err, sizeof err);
  double *A = malloc(sizeof(double) * nmax * nmax), *b = malloc(sizeof(double) * nmax), *z = malloc(sizeof(double) * nmax);
  unsigned long long rng = 0x243F6A8885A308D3ull;
  int solved[2] = {0, 0}, lost = 0, nk = 0;
  double worst = 0, cond[2] = {0, 0};
  for (int k = 0; k < motions; k++) {
    /* a little motion, so that some contacts separate and others slide */
    for (int i = 0; i < m->n; i++) st->v[i] = 0.05 * tu_rand_r(&rng);
    sb_step_prepare(m, st, w, NULL, H, err, sizeof err);
    sb_contact_clear(P);
    scene_rod_fill(P, &rod, m, w, 0.3, err, sizeof err);
    sb_contact_options o = options_for(SB_LCP_LEMKE);
    o.ruiz_iterations = 0;
    o.tikhonov = 0;
    o.warm_start = 0;
    o.screen = 0; /* the LCP over every contact stage 1 keeps: a motion that separates them all is still a problem */
    sb_contact_info info;
    sb_contact_solve(P, H, &o, &info, err, sizeof err); /* stage 1 and the assembled LCP */
    int n;
    const double *A0, *b0, *Ac;
    sb_contact_lcp(P, &n, &A0, &b0, NULL, NULL);
    EXPECT(n > 0 && n <= nmax, "ruiz motion %d: LCP of %d variables", k, n);
    if (n <= 0 || n > nmax) break;
    memcpy(A, A0, sizeof(double) * n * n);
    memcpy(b, b0, sizeof(double) * n);
    nk = info.nkept;
    int ok[2];
    for (int ruiz = 0; ruiz < 2; ruiz++) {
      o.ruiz_iterations = ruiz ? 10 : 0;
      memset(z, 0, sizeof(double) * n);
      ok[ruiz] = sb_contact_solve_lcp(P, n, 4, A, b, z, &o, &info, err, sizeof err) == 0 &&
                 info.lcp.status == SB_LCP_SOLVED;
      solved[ruiz] += ok[ruiz];
      if (ruiz && ok[ruiz]) worst = fmax(worst, lcp_residual(n, A, b, z));
      if (k == 0) {
        sb_contact_lcp(P, NULL, NULL, NULL, &Ac, NULL);
        cond[ruiz] = normal_block_cond(n, Ac, 6);
      }
    }
    lost += ok[0] && !ok[1];
  }
  EXPECT(solved[1] >= motions - 1, "Lemke solves the Ruiz-scaled LCPs (%d of %d)", solved[1], motions);
  EXPECT(worst <= 1e-9, "each Ruiz-scaled answer solves the unscaled LCP (residual %.3g of max(1, |b|))", worst);
  EXPECT(lost == 0, "Ruiz cost Lemke %d problems it solved unscaled", lost);
  EXPECT(cond[1] < cond[0], "Ruiz lowers the normal-block condition number: %.3g -> %.3g", cond[0], cond[1]);
  printf("rank-deficient rod (%d contacts, %d kept), %d motions: Lemke solved %d unscaled, %d after Ruiz; scaled "
         "answers solve the unscaled LCP to %.1e; normal block cond %.3g unscaled, %.3g after Ruiz (first motion)\n",
         nc, nk, motions, solved[0], solved[1], worst, cond[0], cond[1]);
  free(A);
  free(b);
  free(z);
  sb_contact_free(P);
  sb_work_free(w);
  sb_state_free(st);
  sb_model_free(m);
}

/* Stage 2 alone on a matrix with row and column scales over 12 decades:
 * the scales are powers of two, so the scaled matrix is exactly Dr A Dc
 * (bit for bit), every row and column l2 norm ends within [1/2, 2] (the
 * stopping rule), and it stops long before the iteration cap. */
static void test_ruiz_exact(void) {
  enum { n = 30 };
  static double A0[n * n], As[n * n], b0[n], bs[n], dr[n], dc[n], wk[2 * n];
  double rs[n], cs[n];
  for (int i = 0; i < n; i++) {
    rs[i] = pow(10, 6 * tu_rand());
    cs[i] = pow(10, 6 * tu_rand());
  }
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) A0[j * n + i] = rs[i] * cs[j] * (tu_rand() + (i == j ? 2 : 0));
  for (int i = 0; i < n; i++) b0[i] = rs[i] * tu_rand();
  memcpy(As, A0, sizeof As);
  memcpy(bs, b0, sizeof bs);
  sb_ruiz(n, As, bs, dr, dc, 1000, wk);
  int pow2 = 1, exact = 1, e;
  for (int i = 0; i < n; i++) pow2 &= frexp(dr[i], &e) == 0.5 && frexp(dc[i], &e) == 0.5;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) exact &= As[j * n + i] == dr[i] * A0[j * n + i] * dc[j];
  for (int i = 0; i < n; i++) exact &= bs[i] == dr[i] * b0[i];
  double lo = INFINITY, hi = 0;
  for (int k = 0; k < n; k++) {
    double r = 0, c = 0;
    for (int l = 0; l < n; l++) {
      r += As[l * n + k] * As[l * n + k];
      c += As[k * n + l] * As[k * n + l];
    }
    lo = fmin(lo, fmin(sqrt(r), sqrt(c)));
    hi = fmax(hi, fmax(sqrt(r), sqrt(c)));
  }
  EXPECT(pow2, "Ruiz scales are powers of two");
  EXPECT(exact, "the scaled matrix and vector are exactly Dr A Dc and Dr b");
  EXPECT(lo >= 0.5 && hi <= 2, "scaled row and column norms within [1/2, 2]: [%.3g, %.3g]", lo, hi);
  /* the same answer with a cap just above the sweeps needed: it stopped */
  int sweeps = 0;
  for (int it = 1; it <= 1000 && !sweeps; it++) {
    static double Ak[n * n], bk[n], drk[n], dck[n];
    memcpy(Ak, A0, sizeof Ak);
    memcpy(bk, b0, sizeof bk);
    sb_ruiz(n, Ak, bk, drk, dck, it, wk);
    if (!memcmp(drk, dr, sizeof drk) && !memcmp(dck, dc, sizeof dck)) sweeps = it;
  }
  EXPECT(sweeps > 0 && sweeps <= 20, "Ruiz reached its fixed point in %d sweeps", sweeps);
  printf("Ruiz on scales over 12 decades: norms in [%.3f, %.3f] after %d sweeps, exact powers of two\n", lo, hi,
         sweeps);
}

/* Row and column l2 norms of the n x n As: their smallest and largest. */
static void norm_range(int n, const double *As, double *lo, double *hi) {
  *lo = INFINITY;
  *hi = 0;
  for (int k = 0; k < n; k++) {
    double r = 0, c = 0;
    for (int l = 0; l < n; l++) {
      r += As[l * n + k] * As[l * n + k];
      c += As[k * n + l] * As[k * n + l];
    }
    *lo = fmin(*lo, fmin(sqrt(r), sqrt(c)));
    *hi = fmax(*hi, fmax(sqrt(r), sqrt(c)));
  }
}

/* Stage 2 warm (sb_ruiz_from), the scaled problem's quality as the cold
 * start's: (a) from the cold fixed point of the same matrix one sweep
 * returns it bit for bit (steady contact costs one sweep); (b) from the last
 * step's scales on the next step's matrix (every entry moved by up to 20 %):
 * powers of two, exactly Dr A Dc and Dr b, every norm within [1/2, 2], and
 * no more sweeps than the cold start; (c) a start holding what is no power of
 * two within 2^-64..2^64 (NaN, 0, -2, 3, 2^100, a subnormal) starts those
 * entries from 1 and still reaches an exact fixed point. */
/* Ruiz as the stopping test and the summation orders define it, written out
 * plainly (scalar loops, a fresh row-norm pass each sweep): each sweep scales
 * the rows by 2^-k, k = floor((e + 1) / 4) for a row's sum of squares s in
 * [2^(e-1), 2^e), the row sums taken column by column in column order; then
 * each column by the same power of its sum of squares taken in four
 * partial sums (rows i = l mod 4, the tail into the first) combined as
 * (s0 + s1) + (s2 + s3); it stops after a sweep that changed nothing. */
static double ref_pow2_inv_fourth_root(double s) {
  if (!(s > 0) || !isfinite(s)) return 1;
  int e;
  frexp(s, &e);
  int k = (int)floor((e + 1) / 4.0);
  return ldexp(1.0, -k);
}

/* The sweeps from the scalings in dr, dc (powers of two), applied first. */
static void ref_ruiz_sweeps(int n, double *A, double *b, double *dr, double *dc, int iterations) {
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) A[j * n + i] *= dr[i] * dc[j];
  for (int i = 0; b && i < n; i++) b[i] *= dr[i];
  for (int it = 0; it < iterations; it++) {
    int changed = 0;
    for (int i = 0; i < n; i++) {
      double s = 0;
      for (int j = 0; j < n; j++) s += A[j * n + i] * A[j * n + i];
      double f = ref_pow2_inv_fourth_root(s);
      changed |= f != 1;
      dr[i] *= f;
      if (b) b[i] *= f;
      for (int j = 0; j < n; j++) A[j * n + i] *= f;
    }
    for (int j = 0; j < n; j++) {
      double s4[4] = {0, 0, 0, 0};
      int m4 = n / 4 * 4;
      for (int i = 0; i < n; i++) s4[i < m4 ? i % 4 : 0] += A[j * n + i] * A[j * n + i];
      double g = ref_pow2_inv_fourth_root((s4[0] + s4[1]) + (s4[2] + s4[3]));
      changed |= g != 1;
      dc[j] *= g;
      for (int i = 0; i < n; i++) A[j * n + i] *= g;
    }
    if (!changed) break;
  }
}

static void ref_ruiz(int n, double *A, double *b, double *dr, double *dc, int iterations) {
  for (int i = 0; i < n; i++) dr[i] = dc[i] = 1;
  ref_ruiz_sweeps(n, A, b, dr, dc, iterations);
}

/* A column-major matrix's columns, as sb_ruiz_scales reads them. */
typedef struct {
  const double *A;
  int n, calls;
} stored_columns;

static const double *stored_column(void *ctx, int j, double *scratch) {
  stored_columns *c = ctx;
  c->calls++;
  if (j % 2) return c->A + (size_t)j * c->n; /* held */
  memcpy(scratch, c->A + (size_t)j * c->n, sizeof(double) * c->n); /* written */
  return scratch;
}

/* sb_ruiz and sb_ruiz_copy (vectorized, cloned for the CPU's vector unit)
 * against the plain sweeps above, bit for bit: sizes around the four-lane
 * blocks, entries over 12 decades, zero rows and columns, 0 to 10 sweeps;
 * sb_ruiz_copy leaves A as it was. (The scales see a sum only through its
 * exponent, so a sum in another order rarely shows here; a wrong scale, entry
 * or copy does.) sb_ruiz_scales, from A's columns, gives sb_ruiz_copy's and
 * sb_ruiz_copy_from's scales and b bit for bit, taking each column at most
 * twice a sweep. */
static void test_ruiz_copy(void) {
  enum { nmax = 45 };
  static double A[nmax * nmax], Ar[nmax * nmax], Aa[nmax * nmax], Ac[nmax * nmax], Ak[nmax * nmax];
  double b[nmax], br[nmax], ba[nmax], bc[nmax], bo[nmax], dr[4][nmax], dc[4][nmax], wk[4 * nmax];
  int obad = 0, ocases = 0, ocalls = 1;
  unsigned long long seed = 20261125;
  const int sizes[] = {1, 2, 3, 4, 5, 7, 8, 9, 30, 45};
  int bad = 0, cases = 0, untouched = 1;
  for (unsigned t = 0; t < sizeof sizes / sizeof sizes[0]; t++)
    for (int iters = 0; iters <= 10; iters += 5)
      for (int zeros = 0; zeros < 2; zeros++) {
        int n = sizes[t];
        for (int i = 0; i < n * n; i++) A[i] = (2 * tu_rand_r(&seed) - 1) * pow(10, 12 * tu_rand_r(&seed) - 6);
        for (int i = 0; i < n; i++) b[i] = 2 * tu_rand_r(&seed) - 1;
        if (zeros && n > 2) { /* an empty row and an empty column */
          for (int j = 0; j < n; j++) A[j * n + 1] = 0;
          for (int i = 0; i < n; i++) A[(n - 1) * n + i] = 0;
        }
        memcpy(Ar, A, sizeof(double) * n * n);
        memcpy(Aa, A, sizeof(double) * n * n);
        memcpy(Ak, A, sizeof(double) * n * n);
        memcpy(br, b, sizeof(double) * n);
        memcpy(ba, b, sizeof(double) * n);
        memcpy(bc, b, sizeof(double) * n);
        ref_ruiz(n, Ar, br, dr[0], dc[0], iters);
        sb_ruiz(n, Aa, ba, dr[1], dc[1], iters, wk);
        for (int i = 0; i < n * n; i++) Ac[i] = NAN; /* nothing read from the output */
        sb_ruiz_copy(n, Ak, Ac, bc, dr[2], dc[2], iters, wk);
        size_t sa = sizeof(double) * n * n, sv = sizeof(double) * n;
        memcpy(bo, b, sv);
        for (int i = 0; i < n; i++) dr[3][i] = dc[3][i] = 0x1p5; /* a cold start ignores them */
        stored_columns cols = {A, n, 0};
        sb_ruiz_scales(n, stored_column, &cols, bo, dr[3], dc[3], iters, 0, wk);
        obad += memcmp(bo, bc, sv) || memcmp(dr[3], dr[2], sv) || memcmp(dc[3], dc[2], sv);
        ocalls &= cols.calls <= 2 * n * (iters > 0 ? iters : 1);
        ocases++;
        bad += memcmp(Ar, Aa, sa) || memcmp(br, ba, sv) || memcmp(dr[0], dr[1], sv) || memcmp(dc[0], dc[1], sv);
        bad += memcmp(Ar, Ac, sa) || memcmp(br, bc, sv) || memcmp(dr[0], dr[2], sv) || memcmp(dc[0], dc[2], sv);
        untouched &= !memcmp(Ak, A, sa);
        cases++;
      }
  EXPECT(bad == 0, "sb_ruiz and sb_ruiz_copy equal the plain sweeps bit for bit (%d of %d cases differ)", bad,
         2 * cases);
  EXPECT(untouched, "sb_ruiz_copy leaves its input matrix as it was");
  /* sb_ruiz_copy_from = a copy, then sb_ruiz_from, from starts of powers
   * of two, ones, and entries no warm start accepts */
  const double odd[] = {NAN, 0, -2, 3, 0x1p100, INFINITY};
  bad = cases = 0;
  untouched = 1;
  for (unsigned t = 0; t < sizeof sizes / sizeof sizes[0]; t++)
    for (int iters = 0; iters <= 10; iters += 5)
      for (int start = 0; start < 3; start++) {
        int n = sizes[t];
        for (int i = 0; i < n * n; i++) A[i] = (2 * tu_rand_r(&seed) - 1) * pow(10, 12 * tu_rand_r(&seed) - 6);
        for (int i = 0; i < n; i++) {
          b[i] = 2 * tu_rand_r(&seed) - 1;
          dr[0][i] = start == 1 ? 1 : ldexp(1, (int)(40 * tu_rand_r(&seed)) - 20);
          dc[0][i] = start == 1 ? 1 : ldexp(1, (int)(40 * tu_rand_r(&seed)) - 20);
          if (start == 2 && i % 3 == 0) dr[0][i] = odd[i % 6];
          if (start == 2 && i % 4 == 1) dc[0][i] = odd[(i + 1) % 6];
        }
        memcpy(Aa, A, sizeof(double) * n * n);
        memcpy(Ak, A, sizeof(double) * n * n);
        memcpy(ba, b, sizeof(double) * n);
        memcpy(bc, b, sizeof(double) * n);
        memcpy(dr[1], dr[0], sizeof(double) * n);
        memcpy(dc[1], dc[0], sizeof(double) * n);
        memcpy(dr[2], dr[0], sizeof(double) * n);
        memcpy(dc[2], dc[0], sizeof(double) * n);
        sb_ruiz_from(n, Aa, ba, dr[1], dc[1], iters, wk);
        for (int i = 0; i < n * n; i++) Ac[i] = NAN;
        sb_ruiz_copy_from(n, Ak, Ac, bc, dr[2], dc[2], iters, wk);
        size_t sa = sizeof(double) * n * n, sv = sizeof(double) * n;
        memcpy(bo, b, sv);
        memcpy(dr[3], dr[0], sv);
        memcpy(dc[3], dc[0], sv);
        stored_columns cols = {A, n, 0};
        sb_ruiz_scales(n, stored_column, &cols, bo, dr[3], dc[3], iters, 1, wk);
        obad += memcmp(bo, bc, sv) || memcmp(dr[3], dr[2], sv) || memcmp(dc[3], dc[2], sv);
        ocalls &= cols.calls <= 2 * n * (iters > 0 ? iters : 1);
        ocases++;
        bad += memcmp(Aa, Ac, sa) || memcmp(ba, bc, sv) || memcmp(dr[1], dr[2], sv) || memcmp(dc[1], dc[2], sv);
        untouched &= !memcmp(Ak, A, sa);
        cases++;
      }
  EXPECT(bad == 0, "sb_ruiz_copy_from equals a copy and sb_ruiz_from bit for bit (%d of %d cases differ)", bad, cases);
  EXPECT(untouched, "sb_ruiz_copy_from leaves its input matrix as it was");
  EXPECT(obad == 0, "sb_ruiz_scales from the columns equals sb_ruiz_copy and sb_ruiz_copy_from bit for bit (%d of "
         "%d cases differ)", obad, ocases);
  EXPECT(ocalls, "sb_ruiz_scales takes each column at most twice a sweep");
}

/* Warm starts at and near the fixed point (each step's case: the last
 * step's scales, by contact identity), against the plain sweeps above from
 * the same start, bit for bit. A sweep whose row factors all come out 1
 * takes its column norms from its row norm pass: at the fixed point every
 * column is read once (sb_ruiz_scales' column() calls), not twice. */
static void test_ruiz_fixed_point(void) {
  enum { nmax = 45 };
  static double A[nmax * nmax], Ar[nmax * nmax], Ac[nmax * nmax];
  double b[nmax], br[nmax], bc[nmax], bo[nmax], d0r[nmax], d0c[nmax], dr[3][nmax], dc[3][nmax], wk[4 * nmax];
  unsigned long long seed = 20261205;
  const int sizes[] = {1, 2, 3, 4, 5, 7, 8, 9, 30, 45};
  int bad = 0, cases = 0, once = 0, at_fixed = 0;
  for (unsigned t = 0; t < sizeof sizes / sizeof sizes[0]; t++)
    for (int nudge = 0; nudge < 3; nudge++) {
      int n = sizes[t];
      size_t sa = sizeof(double) * n * n, sv = sizeof(double) * n;
      for (int i = 0; i < n * n; i++) A[i] = (2 * tu_rand_r(&seed) - 1) * pow(10, 8 * tu_rand_r(&seed) - 4);
      for (int i = 0; i < n; i++) b[i] = 2 * tu_rand_r(&seed) - 1;
      /* the fixed point, then (nudge > 0) a few of its scales off by 2^+-1 */
      memcpy(Ar, A, sa);
      ref_ruiz(n, Ar, NULL, d0r, d0c, 1000);
      for (int i = 0; nudge && i < n; i += 3) {
        d0r[i] *= nudge == 1 ? 2 : 0.5;
        d0c[(i + 1) % n] *= nudge == 1 ? 0.5 : 2;
      }
      memcpy(Ar, A, sa);
      memcpy(br, b, sv);
      memcpy(dr[0], d0r, sv);
      memcpy(dc[0], d0c, sv);
      ref_ruiz_sweeps(n, Ar, br, dr[0], dc[0], 10);
      memcpy(bc, b, sv);
      memcpy(dr[1], d0r, sv);
      memcpy(dc[1], d0c, sv);
      sb_ruiz_copy_from(n, A, Ac, bc, dr[1], dc[1], 10, wk);
      memcpy(bo, b, sv);
      memcpy(dr[2], d0r, sv);
      memcpy(dc[2], d0c, sv);
      stored_columns cols = {A, n, 0};
      sb_ruiz_scales(n, stored_column, &cols, bo, dr[2], dc[2], 10, 1, wk);
      bad += memcmp(Ar, Ac, sa) || memcmp(br, bc, sv) || memcmp(dr[0], dr[1], sv) || memcmp(dc[0], dc[1], sv);
      bad += memcmp(br, bo, sv) || memcmp(dr[0], dr[2], sv) || memcmp(dc[0], dc[2], sv);
      if (nudge == 0) {
        at_fixed++;
        once += cols.calls == n && !memcmp(dr[2], d0r, sv) && !memcmp(dc[2], d0c, sv);
      }
      cases++;
    }
  EXPECT(bad == 0, "warm Ruiz at and near the fixed point equals the plain sweeps bit for bit (%d of %d cases "
         "differ)", bad, 2 * cases);
  EXPECT(once == at_fixed, "sb_ruiz_scales at the fixed point keeps the scales and reads each column once (%d of %d "
         "cases)", once, at_fixed);
}

static void test_ruiz_warm(void) {
  enum { n = 30 };
  static double A0[n * n], A1[n * n], As[n * n], Ac[n * n], b0[n], b1[n], bs[n], bc[n];
  static double dr[n], dc[n], dr0[n], dc0[n], drc[n], dcc[n], wk[2 * n];
  double rs[n], cs[n];
  for (int i = 0; i < n; i++) {
    rs[i] = pow(10, 6 * tu_rand());
    cs[i] = pow(10, 6 * tu_rand());
  }
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) {
      A0[j * n + i] = rs[i] * cs[j] * (tu_rand() + (i == j ? 2 : 0));
      A1[j * n + i] = A0[j * n + i] * (1 + 0.2 * (2 * tu_rand() - 1));
    }
  for (int i = 0; i < n; i++) {
    b0[i] = rs[i] * tu_rand();
    b1[i] = b0[i] * (1 + 0.2 * (2 * tu_rand() - 1));
  }
  /* the cold fixed point of A0 */
  memcpy(Ac, A0, sizeof Ac);
  memcpy(bc, b0, sizeof bc);
  sb_ruiz(n, Ac, bc, dr0, dc0, 1000, wk);
  /* (a) */
  memcpy(As, A0, sizeof As);
  memcpy(bs, b0, sizeof bs);
  memcpy(dr, dr0, sizeof dr);
  memcpy(dc, dc0, sizeof dc);
  sb_ruiz_from(n, As, bs, dr, dc, 1, wk);
  EXPECT(!memcmp(As, Ac, sizeof As) && !memcmp(bs, bc, sizeof bs) && !memcmp(dr, dr0, sizeof dr) &&
             !memcmp(dc, dc0, sizeof dc),
         "warm Ruiz from the fixed point: one sweep gives the cold result bit for bit");
  /* (b) sweeps to the fixed point, cold and warm, on the next matrix */
  int sweeps[2] = {0, 0};
  for (int warm = 0; warm < 2; warm++) {
    for (int it = 1; it <= 1000 && !sweeps[warm]; it++) {
      memcpy(As, A1, sizeof As);
      memcpy(bs, b1, sizeof bs);
      memcpy(dr, dr0, sizeof dr);
      memcpy(dc, dc0, sizeof dc);
      if (warm)
        sb_ruiz_from(n, As, bs, dr, dc, it, wk);
      else
        sb_ruiz(n, As, bs, dr, dc, it, wk);
      /* a fixed point: one more sweep changes nothing */
      memcpy(Ac, As, sizeof Ac);
      memcpy(bc, bs, sizeof bc);
      memcpy(drc, dr, sizeof drc);
      memcpy(dcc, dc, sizeof dcc);
      static double one[n];
      for (int i = 0; i < n; i++) one[i] = 1;
      double d1[n], d2[n];
      memcpy(d1, one, sizeof d1);
      memcpy(d2, one, sizeof d2);
      sb_ruiz_from(n, Ac, bc, d1, d2, 1, wk);
      int fixed = !memcmp(Ac, As, sizeof Ac) && !memcmp(d1, one, sizeof d1) && !memcmp(d2, one, sizeof d2);
      if (fixed) sweeps[warm] = it;
    }
    int pow2 = 1, exact = 1, e;
    for (int i = 0; i < n; i++) pow2 &= frexp(dr[i], &e) == 0.5 && frexp(dc[i], &e) == 0.5;
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) exact &= As[j * n + i] == dr[i] * A1[j * n + i] * dc[j];
    for (int i = 0; i < n; i++) exact &= bs[i] == dr[i] * b1[i];
    double lo, hi;
    norm_range(n, As, &lo, &hi);
    EXPECT(pow2 && exact, "%s Ruiz on the next matrix: powers of two, exactly Dr A Dc and Dr b", warm ? "warm" : "cold");
    EXPECT(lo >= 0.5 && hi <= 2, "%s Ruiz: norms within [1/2, 2]: [%.3g, %.3g]", warm ? "warm" : "cold", lo, hi);
  }
  EXPECT(sweeps[0] > 0 && sweeps[1] > 0 && sweeps[1] <= sweeps[0],
         "warm Ruiz needs no more sweeps than cold: %d against %d", sweeps[1], sweeps[0]);
  /* (c) */
  const double bad[] = {NAN, 0, -2, 3, 0x1p100, 0x1p-1070, INFINITY, 0x1p-65};
  memcpy(As, A1, sizeof As);
  memcpy(bs, b1, sizeof bs);
  memcpy(dr, dr0, sizeof dr);
  memcpy(dc, dc0, sizeof dc);
  for (int k = 0; k < 8; k++) {
    dr[3 * k] = bad[k];
    dc[3 * k + 1] = bad[k];
    EXPECT(!sb_ruiz_scale_ok(bad[k]), "%g is no warm Ruiz scale", bad[k]);
  }
  EXPECT(sb_ruiz_scale_ok(0x1p-64) && sb_ruiz_scale_ok(0x1p64) && sb_ruiz_scale_ok(1) && sb_ruiz_scale_ok(0.25),
         "powers of two within 2^-64..2^64 are warm Ruiz scales");
  sb_ruiz_from(n, As, bs, dr, dc, 1000, wk);
  int pow2 = 1, exact = 1, e;
  for (int i = 0; i < n; i++) pow2 &= frexp(dr[i], &e) == 0.5 && frexp(dc[i], &e) == 0.5;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) exact &= As[j * n + i] == dr[i] * A1[j * n + i] * dc[j];
  double lo, hi;
  norm_range(n, As, &lo, &hi);
  EXPECT(pow2 && exact && lo >= 0.5 && hi <= 2,
         "warm Ruiz from a start with invalid entries: exact powers of two, norms [%.3g, %.3g]", lo, hi);
  printf("warm Ruiz: one sweep at the fixed point; on the next matrix %d sweeps warm against %d cold\n", sweeps[1],
         sweeps[0]);
}

static void test_bad_input(void) {
  char err[256] = "";
  EXPECT(sb_contact_create(0, 1, 6, 4, err, sizeof err) == NULL && strstr(err, "capacity"), "zero capacity: %s", err);
  EXPECT(sb_contact_create(4, 1, 6, 17, err, sizeof err) == NULL, "17 directions refused");
  sb_contact_problem *P = sb_contact_create(2, 1, 6, 4, err, sizeof err);
  double M[36] = {0}, vf[6] = {0}, jac[18] = {0};
  for (int k = 0; k < 6; k++) M[7 * k] = 1;
  M[0] = NAN;
  EXPECT(sb_contact_add_dense(P, 6, M, vf, err, sizeof err) < 0 && strstr(err, "not finite"), "NaN mass: %s", err);
  M[0] = -1;
  EXPECT(sb_contact_add_dense(P, 6, M, vf, err, sizeof err) < 0 && strstr(err, "positive definite"), "indefinite: %s", err);
  M[0] = 1;
  EXPECT(sb_contact_add_dense(P, 6, M, vf, err, sizeof err) == 0, "good body: %s", err);
  sb_contact c;
  memset(&c, 0, sizeof c);
  c.side[0].body = 0;
  c.side[0].jac = jac;
  c.side[1].body = -1;
  c.friction = 0.5;
  EXPECT(sb_contact_add(P, &c, err, sizeof err) < 0 && strstr(err, "normal"), "zero normal: %s", err);
  c.normal[2] = NAN;
  EXPECT(sb_contact_add(P, &c, err, sizeof err) < 0, "NaN normal refused");
  c.normal[2] = 1;
  c.gap = INFINITY;
  EXPECT(sb_contact_add(P, &c, err, sizeof err) < 0 && strstr(err, "gap"), "Inf gap: %s", err);
  c.gap = 0;
  c.friction = -1;
  EXPECT(sb_contact_add(P, &c, err, sizeof err) < 0 && strstr(err, "friction"), "negative friction: %s", err);
  c.friction = 0.5;
  c.side[0].body = 3;
  EXPECT(sb_contact_add(P, &c, err, sizeof err) < 0 && strstr(err, "body 3"), "bad body: %s", err);
  c.side[0].body = -1;
  EXPECT(sb_contact_add(P, &c, err, sizeof err) < 0 && strstr(err, "static"), "both static: %s", err);
  c.side[0].body = 0;
  jac[4] = INFINITY;
  EXPECT(sb_contact_add(P, &c, err, sizeof err) < 0 && strstr(err, "Jacobian"), "Inf Jacobian: %s", err);
  jac[4] = 0;
  EXPECT(sb_contact_add(P, &c, err, sizeof err) == 0 && sb_contact_add(P, &c, err, sizeof err) == 1, "two contacts");
  EXPECT(sb_contact_add(P, &c, err, sizeof err) < 0 && strstr(err, "more than 2"), "capacity: %s", err);
  EXPECT(sb_contact_solve(P, 0, NULL, NULL, err, sizeof err) < 0 && strstr(err, "time step"), "h = 0: %s", err);
  sb_contact_options o = sb_contact_default_options();
  o.directions = 2;
  EXPECT(sb_contact_solve(P, H, &o, NULL, err, sizeof err) < 0 && strstr(err, "directions"), "r = 2: %s", err);
  sb_contact_free(P);
  /* a soft body whose step was not prepared */
  scene_rod rod;
  scene_rod_params(&rod, 1, 2, 1);
  sb_model *m = sb_model_create(&rod.chain, err, sizeof err);
  sb_work *w = sb_work_create(m);
  P = sb_contact_create(2, 1, m->n, 4, err, sizeof err);
  sb_contact_add_soft(P, m, w, err, sizeof err);
  EXPECT(sb_contact_solve(P, H, NULL, NULL, err, sizeof err) < 0 && strstr(err, "sb_step_prepare"), "unprepared: %s", err);
  sb_contact_free(P);
  sb_work_free(w);
  sb_model_free(m);
}

/* An infeasible problem (one point pressed into two opposite faces, rank
 * selection off) is solvable only after Tikhonov: the solve must say it did
 * not solve the physical problem, and its residual must show why. */
static void test_infeasible(void) {
  char err[256] = "";
  sb_contact_problem *P = sb_contact_create(2, 1, 6, 4, err, sizeof err);
  double M[36], vf[6] = {0}, jac[18];
  unit_mass(M);
  sb_contact_add_dense(P, 6, M, vf, err, sizeof err);
  sb_contact c = unit_point_contact(jac, 3, 0.5); /* the point moves with the body's translation */
  c.gap = -0.01;
  sb_contact_add(P, &c, err, sizeof err);
  c.normal[2] = -1;
  sb_contact_add(P, &c, err, sizeof err);
  sb_contact_options o = sb_contact_default_options();
  o.rank_selection = 0;
  sb_contact_info info;
  EXPECT(sb_contact_solve(P, H, &o, &info, err, sizeof err) < 0 && strstr(err, "physical residual"),
         "infeasible: an error naming the physical residual: %s", err);
  EXPECT(info.lcp.status != SB_LCP_SOLVED && info.residual > 1e-3, "infeasible: not reported solved (status %d, "
         "physical residual %.3g, %s)", info.lcp.status, info.residual, info.lcp.message);
  const double *p = sb_contact_body_impulse(P, 0);
  int finite = 1;
  for (int k = 0; k < 6; k++) finite &= isfinite(p[k]);
  EXPECT(finite, "infeasible: finite impulses");
  /* What a failed step applies must be bounded by what it asked for: each
   * contact wants its unit mass pushed out at 0.2 * 0.01 m / h = 2 m/s, an
   * impulse of 2 N s, so |b| = 2 sqrt 2 over the two normals (no tangential
   * motion); the damped answer's bound is 2 |b| = 5.7 N s. Solved after
   * Tikhonov instead, the two would push against each other with ~2 / eps_W. */
  for (int i = 0; i < 2; i++) {
    double fn, imp[3];
    sb_contact_result(P, i, imp, &fn, NULL, NULL);
    EXPECT(fn >= 0 && fn <= 4 * sqrt(2.0) && fabs(imp[0]) + fabs(imp[1]) <= 1e-9,
           "infeasible: contact %d applies a bounded normal impulse (%.3g N s, <= %.3g), no friction", i, fn,
           4 * sqrt(2.0));
  }
  o.rank_selection = 1; /* stage 1 keeps one of the two opposite normals: solvable */
  EXPECT(sb_contact_solve(P, H, &o, &info, err, sizeof err) == 0 && info.lcp.status == SB_LCP_SOLVED && info.nkept == 1,
         "infeasible pair with rank selection: one kept and solved (%d kept, status %d)", info.nkept, info.lcp.status);
  sb_contact_free(P);
}

/* The damped problem on the operator (lcp_matrix operator: A is not
 * formed) answers as on the formed matrices: one point pressed into three
 * pairs of opposite faces, rank selection off, so all six are kept (36
 * unknowns: revised Lemke, which reads no stored matrix). The damped
 * problem has one solution, so the two answers differ by round-off only;
 * on the operator no n x n matrix is formed. */
static void test_infeasible_on_operator(void) {
  const double normals[6][3] = {{0, 0, 1}, {0, 0, -1}, {1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}};
  double fn[2][6], imp[2][6][3];
  for (int form = 0; form < 2; form++) {
    char err[256] = "";
    sb_contact_problem *P = sb_contact_create(6, 1, 6, 4, err, sizeof err);
    double M[36], vf[6] = {0.3, -0.2, 0.1, 0, 0, 0}, jac[18];
    unit_mass(M);
    sb_contact_add_dense(P, 6, M, vf, err, sizeof err);
    for (int i = 0; i < 6; i++) {
      sb_contact c = unit_point_contact(jac, 3, 0.5);
      memcpy(c.normal, normals[i], sizeof c.normal);
      c.gap = -0.01 * (1 + 0.1 * i);
      sb_contact_add(P, &c, err, sizeof err);
    }
    sb_contact_options o = sb_contact_default_options();
    o.rank_selection = 0;
    o.lcp_from_operator = form ? SB_CONTACT_LCP_OPERATOR : SB_CONTACT_LCP_STORED;
    sb_contact_info info;
    sb_contact_solve(P, H, &o, &info, err, sizeof err);
    EXPECT(info.nkept == 6 && info.damped_passes >= 1 && strstr(info.lcp.message, "applied the damped answer"),
           "infeasible, lcp_matrix %s: %d kept, %d damped passes (%s)", form ? "operator" : "stored", info.nkept,
           info.damped_passes, info.lcp.message);
    EXPECT(form ? info.operator_passes >= 1 && info.matrices_formed == 0 : info.operator_passes == 0,
           "infeasible, lcp_matrix %s: %d passes on the operator, %d formed the matrices", form ? "operator" : "stored",
           info.operator_passes, info.matrices_formed);
    for (int i = 0; i < 6; i++) sb_contact_result(P, i, imp[form][i], &fn[form][i], NULL, NULL);
    sb_contact_free(P);
  }
  double worst = 0, largest = 0;
  for (int i = 0; i < 6; i++) {
    largest = fmax(largest, fn[0][i]);
    worst = fmax(worst, fabs(fn[1][i] - fn[0][i]));
    for (int k = 0; k < 3; k++) worst = fmax(worst, fabs(imp[1][i][k] - imp[0][i][k]));
  }
  EXPECT(largest > 0.1 && worst <= 1e-9 * largest, "infeasible: the damped answers on the operator and on the "
         "formed matrices differ by %.3g N s (largest normal impulse %.3g N s)", worst, largest);
}

/* w = A z + b, computed here, and the worst |min(z_i, w_i)| relative to
 * max(1, |b|inf); *neg gets the most negative entry of z and w. */
static double lcp_check(int n, const double *A, const double *b, const double *z, double *w, double *neg) {
  double r = 0, bmax = 1, lo = 0;
  for (int i = 0; i < n; i++) {
    double s = b[i];
    for (int j = 0; j < n; j++) s += A[(size_t)j * n + i] * z[j];
    w[i] = s;
    r = fmax(r, fabs(fmin(z[i], s)));
    bmax = fmax(bmax, fabs(b[i]));
    lo = fmin(lo, fmin(z[i], s));
  }
  *neg = lo;
  return r / bmax;
}

/* Contact LCPs of the push-box scene (the arm lying on a table and pushing
 * a free box; tests/data/lcp/push_box_*.dat as the contact solve dumped
 * them) that the solve failed on before: degenerate friction (a Delassus
 * block of rank 15 over 50 to 55 impulses, unloaded disks sliding just above
 * the table, a contact at the stick-slip boundary; one of them defeats
 * Siconos' Lemke too). Solved from zero, and from a guess on the ray of
 * solutions the unloaded contacts' sliding-speed bound gamma has (1e6
 * instead of the sliding speed: still a solution): the answer must stay
 * within tolerance and bring gamma down to the smallest value the beta rows
 * allow (then one of them is 0). Residuals are computed here. */
static void test_push_box_lcps(void) {
  const int r = 4, bs = r + 2;
  for (int f = 1; f <= 3; f++) {
    char path[512], err[256] = "";
    snprintf(path, sizeof path, "%s/push_box_%d.dat", CUSP_LCP_DATA, f);
    int n = 0;
    double *A = NULL, *b = NULL;
    if (sb_lcp_read_dat(path, &n, &A, &b, err, sizeof err)) {
      EXPECT(0, "push_box_%d: %s", f, err);
      continue;
    }
    sb_contact_problem *P = sb_contact_create(n / bs, 1, 1, r, err, sizeof err);
    double *z = calloc(n, sizeof(double)), *w = malloc(n * sizeof(double)), neg;
    sb_contact_options o = sb_contact_default_options();
    o.warm_start = 0;
    sb_contact_info info;
    int rc = sb_contact_solve_lcp(P, n, r, A, b, z, &o, &info, err, sizeof err);
    double res0 = lcp_check(n, A, b, z, w, &neg);
    EXPECT(rc == 0 && res0 <= 1e-9 && neg >= -1e-9, "push_box_%d (n = %d) from zero: rc %d, residual %.3g, "
           "most negative z or w %.3g: %s", f, n, rc, res0, neg, err);
    int unloaded = 0;
    for (int c = 0; c < n / bs; c++) {
      double load = 0;
      for (int k = 0; k < bs - 1; k++) load += z[c * bs + k];
      if (load <= 1e-12) { /* N s: contact impulses here are 1e-4..1e-2 */
        z[c * bs + bs - 1] = 1e6;
        unloaded++;
      }
    }
    o.warm_start = 1;
    rc = sb_contact_solve_lcp(P, n, r, A, b, z, &o, &info, err, sizeof err);
    double res1 = lcp_check(n, A, b, z, w, &neg), slack = 0;
    for (int c = 0; c < n / bs; c++) {
      if (!(z[c * bs + bs - 1] > 0)) continue;
      double wmin = INFINITY;
      for (int k = 1; k < bs - 1; k++) wmin = fmin(wmin, w[c * bs + k]);
      slack = fmax(slack, wmin);
    }
    EXPECT(unloaded > 0 && rc == 0 && res1 <= 1e-9 && neg >= -1e-9 && slack <= 1e-9,
           "push_box_%d from %d gammas at 1e6: rc %d, residual %.3g, gamma above its least value by %.3g: %s", f,
           unloaded, rc, res1, slack, err);
    printf("push_box_%d: n = %d, residual %.2g from zero, %.2g from %d gammas at 1e6 (%s)\n", f, n, res0, res1,
           unloaded, info.lcp.message[0] ? info.lcp.message : "first solver");
    sb_contact_free(P);
    free(z);
    free(w);
    free(A);
    free(b);
  }
}

/* Stage 1 in a given order keeps a column when it is independent of the kept
 * ones: a dependent column in between must not hide the next independent one
 * (a plain QR in order built a reflector from its round-off and, with one
 * row left, never looked at the column after it). */
static void test_rank_select_order(void) {
  enum { N = 3, M = 5 };
  const double c0[N] = {0.9, -0.2, 0.4}, c1[N] = {0.1, 0.8, -0.3}, c3[N] = {-0.5, 0.35, 0.7};
  double St[N * M];
  for (int i = 0; i < N; i++) {
    St[0 * N + i] = c0[i];
    St[1 * N + i] = c1[i];
    St[2 * N + i] = 0.3 * c0[i] + 0.7 * c1[i]; /* in the span of the first two */
    St[3 * N + i] = c3[i];
    St[4 * N + i] = c3[i] + c0[i]; /* in the span of the kept ones */
  }
  const double order[M] = {5, 4, 3, 2, 1};
  const int all[M] = {1, 1, 1, 1, 1}, first3[M] = {1, 1, 1, 0, 0};
  int lwork = sb_rank_select_work_size(N, M), keep[M], iwork[2 * M];
  double *work = malloc(sizeof(double) * lwork), A[N * M];
  memcpy(A, St, sizeof A);
  int kept = sb_rank_select(N, M, A, all, order, 1e-9, keep, work, lwork, iwork);
  EXPECT(kept == 3 && keep[0] && keep[1] && !keep[2] && keep[3] && !keep[4],
         "ordered selection kept %d: %d %d %d %d %d, expected 1 1 0 1 0", kept, keep[0], keep[1], keep[2], keep[3],
         keep[4]);
  /* the same first group, the rest pivoted in its complement: c3 and c4
   * have the same part outside span(c0, c1), either may be kept */
  memcpy(A, St, sizeof A);
  kept = sb_rank_select(N, M, A, first3, order, 1e-9, keep, work, lwork, iwork);
  EXPECT(kept == 3 && keep[0] && keep[1] && !keep[2] && keep[3] + keep[4] == 1,
         "ordered first group then pivoted rest kept %d: %d %d %d %d %d", kept, keep[0], keep[1], keep[2], keep[3],
         keep[4]);
  free(work);
}

/* A small generator of its own, so that the test does not move rand()'s
 * sequence, which test_structured_assembly's figures assume. */
static double forced_rows_uniform(unsigned *state) {
  *state = *state * 1664525u + 1013904223u;
  return (double)(*state >> 8) / (double)(1u << 24) - 0.5;
}

/* Stage 1 on A, a copy of St's first m columns, against the selection the
 * test constructed: the number of flags that differ from expect (the
 * reflectors stay in A for the caller to read). */
static int select_against_expected(int N, int m, const double *St, double *A, const int *prio, const double *order,
                                   const int *force, const int *expect, int *keep, int *iwork, int *kept, int *want) {
  int lwork = sb_rank_select_work_size(N, m), wrong = 0;
  double *work = malloc(sizeof(double) * lwork);
  memcpy(A, St, sizeof(double) * N * m);
  *kept = sb_rank_select_forced(N, m, A, prio, order, force, 1e-9, keep, work, lwork, iwork);
  *want = 0;
  for (int k = 0; k < m; k++) {
    *want += expect[k];
    wrong += !keep[k] != !expect[k];
  }
  free(work);
  return wrong;
}

/* Stage 1's greedy selection over many dense columns (an arm whitened by
 * its lower factor: every column fills every row), as along an arm on a
 * plane: a hundred contacts in the priority group, a dozen independent.
 * The greedy QR takes the columns in panels and applies a panel's
 * reflectors to the later columns in block form; what must hold is the
 * greedy selection in key order: the independent columns kept wherever
 * they fall (first in a panel, last in one, several in one, one alone in a
 * later one), every column in the span of the kept ones before it dropped
 * unless forced (kept, adding nothing, flagged 2), and nothing else kept. */
static void test_rank_select_dense_panels(void) {
  enum { N = 36, M = 90, NIND = 12 };
  const int ind[NIND] = {0, 1, 2, 3, 15, 16, 17, 30, 47, 48, 70, 89}; /* key order = column order */
  const int forced_dependent = 40;
  unsigned seed = 777u;
  double *St = malloc(sizeof(double) * N * M), *A = malloc(sizeof(double) * N * M), order[M];
  int prio[M], force[M], keep[M], expect[M], iwork[2 * M];
  for (int j = 0, k = 0; j < M; j++) {
    int is_ind = k < NIND && ind[k] == j;
    for (int i = 0; i < N; i++) St[(size_t)j * N + i] = 0;
    if (is_ind) {
      for (int i = 0; i < N; i++) St[(size_t)j * N + i] = forced_rows_uniform(&seed);
      k++;
    } else { /* a combination of the independent columns before it, of norm about theirs */
      for (int a = 0; a < k; a++) {
        double c = forced_rows_uniform(&seed);
        for (int i = 0; i < N; i++) St[(size_t)j * N + i] += c * St[(size_t)ind[a] * N + i];
      }
    }
    prio[j] = 1;
    order[j] = M - j;
    force[j] = j == 0 || j == forced_dependent;
    expect[j] = is_ind || j == forced_dependent;
  }
  int kept, want, wrong = select_against_expected(N, M, St, A, prio, order, force, expect, keep, iwork, &kept, &want);
  EXPECT(kept == want && wrong == 0, "dense greedy selection in panels: kept %d of %d, %d flags wrong", kept, want,
         wrong);
  /* the forced dependent column is told apart (2), so that the caller knows
   * the kept normals are dependent (basic_loads runs only then); the forced
   * independent one is an ordinary kept column (1) */
  EXPECT(keep[forced_dependent] == 2 && keep[0] == 1, "forced columns' flags: dependent %d (want 2), independent %d "
         "(want 1)", keep[forced_dependent], keep[0]);
  free(A);
  free(St);
}

/* Stage 1 takes the first group's leading run of forced columns in the
 * order of the rows they fill (a rod whitened by its upper factor: the
 * contact at element i fills the rows of the elements up to i), so that
 * each reflector stays within its column's rows, and then the first group's
 * Q^T on the rest reflector by reflector (few rest columns) or by dormqr
 * (many). What must hold: the selection is the greedy one in order-key
 * order (every forced column kept; an unforced one kept when independent
 * of the kept ones before it in key order, which a forced column after it
 * is not), and the rest is kept where it is independent of the first
 * group. The reflectors left in St show the order: the i-th fills exactly
 * the rows of the i-th fewest-row column (in key order they fill all rows
 * from the first long column on). */
static void test_rank_select_forced_rows(void) {
  enum { N = 90, RUN = 40, EXTRA = 5, REST_MAX = 12, M = RUN + 1 + EXTRA + REST_MAX };
  for (int variant = 0; variant < 2; variant++) {
    int nrest = variant == 0 ? 3 : REST_MAX; /* the reflector loop, then dormqr */
    int m = RUN + 1 + EXTRA + nrest;
    unsigned seed = 12345u;
    double *St = calloc((size_t)N * M, sizeof(double)), *A = malloc(sizeof(double) * N * M), order[M];
    int prio[M], force[M], keep[M], expect[M], iwork[2 * M], h[RUN];
    /* the run: column j fills 2 (perm(j) + 1) rows, perm a shuffle */
    for (int j = 0; j < RUN; j++) h[j] = 2 * (j + 1);
    for (int j = RUN - 1; j > 0; j--) {
      int k = (int)((forced_rows_uniform(&seed) + 0.5) * (j + 1)) % (j + 1), t = h[j];
      h[j] = h[k];
      h[k] = t;
    }
    int col = 0;
    for (int j = 0; j < RUN; j++, col++) {
      for (int i = 0; i < h[j]; i++) St[(size_t)col * N + i] = forced_rows_uniform(&seed);
      St[(size_t)col * N + h[j] - 1] += 1; /* its last row clearly filled */
      force[col] = prio[col] = expect[col] = 1;
      order[col] = 100 - col;
    }
    /* a forced dependent column inside the run (key between its parts) */
    int dep = col++;
    for (int i = 0; i < N; i++) St[(size_t)dep * N + i] = 0.5 * St[3 * N + i] - 0.25 * St[7 * N + i];
    force[dep] = prio[dep] = expect[dep] = 1;
    order[dep] = 100 - 5.5;
    /* after the run, in key order: unforced dependent (dropped), unforced
     * d + run part (kept), forced d (kept, dependent: had it joined the run,
     * the column before would be dropped), unforced d - run part
     * (dropped), unforced new (kept); the forced d fills fewer rows than the
     * column before it, so the run must end at the first unforced column */
    double d[N], e[N];
    int longest = 0; /* the run's column of 80 rows; d fills 60, so that the
                        column d + it fills more rows than d */
    for (int j = 0; j < RUN; j++)
      if (h[j] > h[longest]) longest = j;
    for (int i = 0; i < N; i++) {
      d[i] = i < 60 ? forced_rows_uniform(&seed) : 0;
      e[i] = forced_rows_uniform(&seed);
    }
    const int extra_force[EXTRA] = {0, 0, 1, 0, 0}, extra_keep[EXTRA] = {0, 1, 1, 0, 1};
    for (int x = 0; x < EXTRA; x++, col++) {
      for (int i = 0; i < N; i++) {
        double run_part = St[0 * N + i] - 2 * St[11 * N + i];
        double v[EXTRA] = {run_part, d[i] + St[(size_t)longest * N + i], d[i], d[i] - St[20 * N + i], e[i]};
        St[(size_t)col * N + i] = v[x];
      }
      force[col] = extra_force[x];
      prio[col] = 1;
      expect[col] = extra_keep[x];
      order[col] = 50 - x;
    }
    /* the second group: a dependent column, then independent ones */
    for (int r = 0; r < nrest; r++, col++) {
      for (int i = 0; i < N; i++)
        St[(size_t)col * N + i] = r == 0 ? St[2 * N + i] + e[i] : (1 + 0.1 * r) * forced_rows_uniform(&seed);
      force[col] = prio[col] = 0;
      expect[col] = r != 0;
      order[col] = 0;
    }
    int kept, want, wrong = select_against_expected(N, m, St, A, prio, order, force, expect, keep, iwork, &kept, &want);
    EXPECT(kept == want && wrong == 0, "forced run by rows, %d rest columns: kept %d of %d, %d flags wrong", nrest,
           kept, want, wrong);
    int off_rows = 0;
    for (int i = 0; i < RUN; i++) {
      int filled = N;
      while (filled > 0 && A[(size_t)i * N + filled - 1] == 0) filled--;
      off_rows += filled != 2 * (i + 1);
    }
    EXPECT(off_rows == 0, "forced run's reflectors: %d of %d fill other rows than their columns", off_rows, RUN);
    free(A);
    free(St);
  }
}

/* Item 2 of issue 15: in steady sticking the step is solved from the last
 * step's active set, with no cold solve. A sticking set has more friction
 * rows than the bodies have freedoms (rank-deficient); Tikhonov's eps_W on
 * the scaled diagonal let such a set pass the pivot's singularity test, the
 * 1/eps_W-amplified answer failed the sign test, and every step ran Lemke
 * from zero and then the proximal re-solve. Scenes: the block held by
 * friction on a 20 degree incline (4 and 16 contacts, the same problem every
 * step), and the floating soft rod lying on the plane, time-stepped (its
 * problem changes a little every step as the rod settles). */

/* The answer recorded for the next step (warm start, stage 1's forced set)
 * is a basic one: a block on a plane, flat (theta 0) and tilted (0.2, sticking),
 * every contact of a grid kept (rank selection off), so the LCP's loads over
 * the dependent contacts are not unique. The recorded answer must carry the
 * applied answer's net wrench, keep each contact's force direction (a
 * scaled copy; the recorded pyramid's share already differs from the
 * applied one by about 1e-8 without the reduction), and load at most as many
 * contacts as the force columns J_a^T lambda_a can have rank, the block's 6
 * dofs. Without basic_loads the loads spread over 9 to 28 of the 9 to 36
 * contacts. */
static void test_recorded_answer_basic(void) {
  char err[256];
  sb_contact_problem *P = sb_contact_create(64, 2, 12, 16, err, sizeof err);
  int worst_loaded[2] = {0, 0};
  double worst_wrench = 0, worst_dir = 0;
  for (int tilt = 0; tilt < 2; tilt++)
    for (int k = 3; k <= 6; k++) {
      int m = k * k, cols = k;
      scene_block sc;
      sb_contact_clear(P);
      EXPECT(scene_block_fill(P, &sc, tilt ? 0.2 : 0, 0.5, m, H, err, sizeof err) == 0, "block scene: %s", err);
      sb_contact_options o = sb_contact_default_options();
      o.rank_selection = 0;
      sb_contact_info info;
      EXPECT(sb_contact_solve(P, H, &o, &info, err, sizeof err) == 0, "block %d contacts: %s", m, err);
      double applied[6] = {0}, recorded[6] = {0};
      int loaded = 0;
      for (int i = 0; i < m; i++) {
        double la[3], an, lr[3], R[9], fr[3];
        sb_contact_result(P, i, la, &an, R, NULL);
        EXPECT(sb_contact_warm_impulse(P, i, lr) == 1, "block %d contacts: contact %d has no recorded answer", m, i);
        for (int c = 0; c < 3; c++) fr[c] = R[3 * c] * lr[0] + R[3 * c + 1] * lr[1] + R[3 * c + 2] * lr[2];
        /* the contact point, as block_normal_rows places it */
        int ix = i % cols, iy = i / cols;
        double local[3] = {-sc.half[0] + 2 * sc.half[0] * ix / (cols - 1), -sc.half[1] + 2 * sc.half[1] * iy / (cols - 1),
                           -sc.half[2]},
               r[3];
        for (int c = 0; c < 3; c++) r[c] = sc.R[3 * c] * local[0] + sc.R[3 * c + 1] * local[1] + sc.R[3 * c + 2] * local[2];
        double wa[6] = {la[0], la[1], la[2], r[1] * la[2] - r[2] * la[1], r[2] * la[0] - r[0] * la[2], r[0] * la[1] - r[1] * la[0]};
        double wr[6] = {fr[0], fr[1], fr[2], r[1] * fr[2] - r[2] * fr[1], r[2] * fr[0] - r[0] * fr[2], r[0] * fr[1] - r[1] * fr[0]};
        for (int c = 0; c < 6; c++) {
          applied[c] += wa[c];
          recorded[c] += wr[c];
        }
        loaded += lr[2] > 0;
        if (lr[2] > 0) { /* a scaled copy: the friction's share of the normal, frame-free */
          double at = sqrt(fmax(la[0] * la[0] + la[1] * la[1] + la[2] * la[2] - an * an, 0));
          worst_dir = fmax(worst_dir, fabs(hypot(lr[0], lr[1]) / lr[2] - at / an));
        }
      }
      double d = 0, n = 0;
      for (int c = 0; c < 6; c++) {
        d = fmax(d, fabs(applied[c] - recorded[c]));
        n = fmax(n, fabs(applied[c]));
      }
      worst_loaded[tilt] = loaded > worst_loaded[tilt] ? loaded : worst_loaded[tilt];
      worst_wrench = fmax(worst_wrench, d / n);
      EXPECT(loaded >= 1 && loaded <= 6, "block %d contacts, theta %g: %d loaded in the recorded answer",
             m, tilt ? 0.2 : 0.0, loaded);
      EXPECT(d <= 1e-9 * n, "block %d contacts, theta %g: recorded net wrench differs by %g of %g", m,
             tilt ? 0.2 : 0.0, d, n);
    }
  EXPECT(worst_dir <= 1e-6, "recorded friction share differs from the applied one by %g", worst_dir);
  printf("recorded answer: at most %d (flat) / %d (tilted) loaded contacts of 9..36, net wrench within %.1e, "
         "friction share within %.1e\n",
         worst_loaded[0], worst_loaded[1], worst_wrench, worst_dir);
  sb_contact_free(P);
}

static void test_warm_sticking(void) {
  char err[256];
  sb_contact_problem *P = sb_contact_create(16, 1, 6, 4, err, sizeof err);
  sb_contact_options o = sb_contact_default_options();
  for (int m = 4; m <= 16; m += 12) {
    int cold = 0, solves = 0;
    for (int step = 0; step < 20; step++) {
      scene_block sc;
      sb_contact_clear(P);
      scene_block_fill(P, &sc, 20 * M_PI / 180, 0.5, m, H, err, sizeof err);
      sb_contact_info info;
      EXPECT(sb_contact_solve(P, H, &o, &info, err, sizeof err) == 0, "sticking block, %d contacts, step %d: %s", m,
             step, err);
      double v[6];
      sb_contact_body_velocity(P, 0, v);
      EXPECT(tu_maxabs(v, 6) <= 1e-9 * SCENE_G * H, "sticking block, %d contacts, step %d: at rest (|v| %g)", m, step,
             tu_maxabs(v, 6));
      if (step > 0) { /* the first step has no warm start */
        cold += info.cold_solves;
        solves += info.solves;
      }
    }
    EXPECT(cold == 0, "sticking block, %d contacts: %d of %d solves after the first step were cold", m, cold, solves);
    printf("sticking block on a 20 deg incline, %d contacts: %d cold of %d solves over 19 warm steps\n", m, cold,
           solves);
  }
  sb_contact_free(P);

  scene_rod rod;
  scene_rod_params(&rod, 3, 4, 2);
  sb_model *mdl = sb_model_create(&rod.chain, err, sizeof err);
  EXPECT(mdl != NULL, "rod model: %s", err);
  if (!mdl) return;
  sb_state *st = sb_state_create(mdl);
  sb_work *w = sb_work_create(mdl);
  int nc = rod.chain.ndisk * rod.per_disk;
  P = sb_contact_create(nc, 1, mdl->n, 4, err, sizeof err);
  int cold = 0, solves = 0, settle = 50, steps = 250;
  double vmax = 0;
  for (int step = 0; step < steps; step++) {
    EXPECT(sb_step_prepare(mdl, st, w, NULL, H, err, sizeof err) == 0, "rod prepare: %s", err);
    sb_contact_clear(P);
    scene_rod_fill(P, &rod, mdl, w, 1.0, err, sizeof err);
    sb_contact_info info;
    EXPECT(sb_contact_solve(P, H, &o, &info, err, sizeof err) == 0, "lying rod, step %d: %s", step, err);
    EXPECT(sb_step_commit(mdl, st, w, sb_contact_body_impulse(P, 0), err, sizeof err) == 0, "rod commit: %s", err);
    if (step >= settle) {
      cold += info.cold_solves;
      solves += info.solves;
      vmax = fmax(vmax, tu_maxabs(st->v, mdl->n));
    }
  }
  EXPECT(vmax <= 1e-6, "lying rod: at rest after %d steps (|v| up to %g)", settle, vmax);
  EXPECT(cold == 0, "lying rod (%d contacts, %d dof): %d of %d solves after step %d were cold", nc, mdl->n, cold, solves,
         settle);
  printf("lying soft rod, %d contacts, %d dof: %d cold of %d solves over steps %d..%d (|v| <= %.2g)\n", nc, mdl->n,
         cold, solves, settle, steps - 1, vmax);
  sb_contact_free(P);
  sb_work_free(w);
  sb_state_free(st);
  sb_model_free(mdl);
}

/* Stage 2 starts from the last step's scales of the same contacts, so they
 * are state: a problem that loads another's sb_contact_warm_save solves the
 * next step as the other does, bit for bit (its conditioned matrix As and
 * the impulses), which the impulses and directions alone do not give: the
 * same saved data with the scales replaced by values no warm start accepts
 * (a cold stage 2) conditions the same step differently. A lying soft rod,
 * every step from the second on, and the cold Ruiz's count of sweeps
 * against the warm one's (fewer, in steady contact). */
static void test_warm_scales_state(void) {
  char err[256];
  scene_rod rod;
  scene_rod_params(&rod, 3, 4, 2);
  sb_model *mdl = sb_model_create(&rod.chain, err, sizeof err);
  EXPECT(mdl != NULL, "rod model: %s", err);
  if (!mdl) return;
  sb_state *st = sb_state_create(mdl);
  sb_work *w = sb_work_create(mdl);
  int nc = rod.chain.ndisk * rod.per_disk, cap = sb_contact_warm_capacity(nc);
  sb_contact_problem *P[4];
  for (int k = 0; k < 4; k++) P[k] = sb_contact_create(nc, 1, mdl->n, 4, err, sizeof err);
  double *saved = calloc(cap, sizeof(double)), *zs = calloc(cap, sizeof(double)), *z0 = calloc(cap, sizeof(double));
  sb_contact_options o = sb_contact_default_options();
  int same = 0, differ = 0, zero_cold = 0, steps = 60, restored_steps = 0;
  for (int step = 0; step < steps; step++) {
    /* a step that changes from step to step (1 to 64 ms): M~ = M + h D +
     * h^2 K, and with it the Delassus matrix, moves enough that a cold
     * stage 2 and a warm one reach different fixed points */
    double h = H * (1 << (2 * (step % 4)));
    EXPECT(sb_step_prepare(mdl, st, w, NULL, h, err, sizeof err) == 0, "rod prepare: %s", err);
    if (step > 0) {
      int len = sb_contact_warm_save(P[0], saved);
      sb_contact_warm_load(P[1], saved);
      /* the scales as no warm start takes them: [count, r, per entry id, t1 (3), z (r + 2), scales (r + 2)] */
      memcpy(zs, saved, len * sizeof(double));
      int r = (int)saved[1], bs = r + 2;
      for (int e = 0, k = 2; e < (int)saved[0]; e++, k += 4 + 2 * bs)
        for (int v = 0; v < bs; v++) zs[k + 4 + bs + v] = -1;
      sb_contact_warm_load(P[2], zs);
      /* zeros where the scales go (a host's zeroed fields) are a cold start as well, not 2^-64 */
      memcpy(z0, zs, len * sizeof(double));
      for (int e = 0, k = 2; e < (int)saved[0]; e++, k += 4 + 2 * bs)
        for (int v = 0; v < bs; v++) z0[k + 4 + bs + v] = 0;
      sb_contact_warm_load(P[3], z0);
    }
    const double *As[4];
    int n[4];
    sb_contact_info info;
    for (int k = 0; k < 4; k++) {
      sb_contact_clear(P[k]);
      scene_rod_fill(P[k], &rod, mdl, w, 1.0, err, sizeof err);
      EXPECT(sb_contact_solve(P[k], h, &o, &info, err, sizeof err) == 0, "lying rod, step %d, problem %d: %s", step, k,
             err);
      sb_contact_lcp(P[k], &n[k], NULL, NULL, &As[k], NULL);
    }
    if (step > 0) {
      restored_steps++;
      same += n[1] == n[0] && !memcmp(As[1], As[0], sizeof(double) * n[0] * n[0]) &&
              !memcmp(sb_contact_body_impulse(P[1], 0), sb_contact_body_impulse(P[0], 0), sizeof(double) * mdl->n);
      differ += n[2] != n[0] || memcmp(As[2], As[0], sizeof(double) * n[0] * n[0]);
      zero_cold += n[3] == n[2] && !memcmp(As[3], As[2], sizeof(double) * n[2] * n[2]);
    }
    EXPECT(sb_step_commit(mdl, st, w, sb_contact_body_impulse(P[0], 0), err, sizeof err) == 0, "rod commit: %s", err);
  }
  EXPECT(same == restored_steps, "a problem restored from the warm save conditions and solves as the original, bit for "
         "bit (%d of %d steps)", same, restored_steps);
  EXPECT(differ > 0, "without the saved scales the same steps are conditioned differently (%d of %d steps)", differ,
         restored_steps);
  EXPECT(zero_cold == restored_steps, "zeroed scales start stage 2 cold, as invalid ones do (%d of %d steps)", zero_cold,
         restored_steps);
  printf("warm Ruiz scales as state, lying rod (%d contacts): restored = original on %d of %d steps; a cold stage 2 "
         "differs on %d\n", nc, same, restored_steps, differ);
  for (int k = 0; k < 4; k++) sb_contact_free(P[k]);
  free(saved);
  free(zs);
  free(z0);
  sb_work_free(w);
  sb_state_free(st);
  sb_model_free(mdl);
}

/* A soft body of 64 coordinates or more is factored M~ = U U^T (U upper
 * triangular), and the LCP's Delassus blocks are built from columns U^-1 J^T
 * solved over the rows each contact's Jacobian fills only, and W from blocks
 * of contacts over their common rows. Against the assembly's W (M~^-1 J^T
 * on every row at once, checked against the plain product by
 * test_structured_assembly): every normal and friction entry of the kept
 * contacts' LCP matrix, on a rod lying on a plane; and U U^T = M~. */
static void test_whitened_rows(void) {
  char err[256];
  scene_rod rod;
  scene_rod_params(&rod, 20, 2, 1); /* 6 + 3 x 20 coordinates */
  sb_model *m = sb_model_create(&rod.chain, err, sizeof err);
  EXPECT(m != NULL, "rod model: %s", err);
  if (!m) return;
  int n = m->n, nc = rod.chain.ndisk * rod.per_disk, m3 = 3 * nc;
  sb_state *st = sb_state_create(m);
  sb_work *w = sb_work_create(m);
  sb_contact_problem *P = sb_contact_create(nc, 1, n, 4, err, sizeof err);
  double *Wa = malloc(sizeof(double) * m3 * m3);
  int *kept = malloc(sizeof(int) * nc);
  EXPECT(n >= SB_STEP_UPPER_MIN, "the rod has %d coordinates, below %d", n, SB_STEP_UPPER_MIN);
  EXPECT(sb_step_prepare(m, st, w, NULL, H, err, sizeof err) == 0, "prepare: %s", err);
  EXPECT(w->factor_upper, "a rod of %d coordinates was not factored U U^T", n);
  double ef = 0, mmax = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double x = 0;
      for (int k = i > j ? i : j; k < n; k++) x += w->L[(size_t)k * n + i] * w->L[(size_t)k * n + j];
      ef = fmax(ef, fabs(x - w->Mt[(size_t)i * n + j]));
      mmax = fmax(mmax, fabs(w->Mt[(size_t)i * n + j]));
    }
  EXPECT(ef <= 1e-13 * mmax, "U U^T - M~ = %.3g (|M~| %.3g)", ef, mmax);
  /* the assembly's W, every contact */
  EXPECT(scene_rod_fill(P, &rod, m, w, 0.5, err, sizeof err) == 0, "rod scene: %s", err);
  const double *W, *u;
  EXPECT(sb_contact_assemble(P, H, NULL, &W, &u, NULL, err, sizeof err) == nc, "assemble: %s", err);
  memcpy(Wa, W, sizeof(double) * m3 * m3);
  /* the solve's kept blocks */
  sb_contact_clear(P);
  EXPECT(scene_rod_fill(P, &rod, m, w, 0.5, err, sizeof err) == 0, "rod scene: %s", err);
  sb_contact_options o = sb_contact_default_options();
  sb_contact_info info;
  EXPECT(sb_contact_solve(P, H, &o, &info, err, sizeof err) == 0, "solve: %s", err);
  int nk = 0;
  for (int i = 0; i < nc; i++) {
    int k = 0;
    sb_contact_result(P, i, NULL, NULL, NULL, &k);
    if (k) kept[nk++] = i;
  }
  int nl = 0, bs = o.directions + 2;
  const double *A, *b;
  sb_contact_lcp(P, &nl, &A, &b, NULL, NULL);
  EXPECT(nk >= 8 && nl == nk * bs, "kept %d contacts, LCP of %d", nk, nl);
  /* A's normal and friction rows and columns of kept contacts a, c are
   * d_x^T W_ac d_y with d = (0, 0, 1) for the normal, (cos, sin, 0) of the
   * pyramid's directions for a friction variable, in the same frames (the
   * first solve turns none) */
  double ew = 0, wmax = 0, d[SB_CONTACT_MAX_DIRECTIONS + 1][3];
  d[0][0] = d[0][1] = 0;
  d[0][2] = 1;
  for (int l = 0; l < o.directions; l++) {
    d[l + 1][0] = cos(2 * M_PI * l / o.directions);
    d[l + 1][1] = sin(2 * M_PI * l / o.directions);
    d[l + 1][2] = 0;
  }
  for (int a = 0; a < nk && nl == nk * bs; a++)
    for (int c = 0; c < nk; c++)
      for (int x = 0; x < bs - 1; x++)
        for (int y = 0; y < bs - 1; y++) {
          int i = kept[a], k = kept[c];
          double wa = 0;
          for (int r = 0; r < 3; r++)
            for (int t = 0; t < 3; t++) wa += d[x][r] * Wa[(size_t)(3 * k + t) * m3 + 3 * i + r] * d[y][t];
          double wl = A[(size_t)(c * bs + y) * nl + a * bs + x];
          wmax = fmax(wmax, fabs(wa));
          ew = fmax(ew, fabs(wa - wl));
        }
  EXPECT(ew <= 1e-12 * wmax, "kept Delassus entries against the assembly's: %.3g (largest %.3g)", ew, wmax);
  printf("whitened rows (rod, %d dofs, %d of %d contacts kept): U U^T - M~ %.2e, W %.2e (relative)\n", n, nk, nc,
         ef / mmax, ew / wmax);
  free(Wa);
  free(kept);
  sb_contact_free(P);
  sb_work_free(w);
  sb_state_free(st);
  sb_model_free(m);
}

/* A soft side's contribution to contact row k, entry j, as the assembly
 * formed it before its three rows went in one pass (sign times the row, the
 * terms summed from zero in this order): the new pass must give the same
 * doubles. */
static double soft_row_term(const double *J6, int n, int j, const sb_pose *g, const double r[3],
                            const double d[3], double sign) {
  double u[3], x[3];
  for (int a = 0; a < 3; a++) u[a] = g->R[a] * d[0] + g->R[3 + a] * d[1] + g->R[6 + a] * d[2];
  x[0] = u[1] * r[2] - u[2] * r[1];
  x[1] = u[2] * r[0] - u[0] * r[2];
  x[2] = u[0] * r[1] - u[1] * r[0];
  double v = 0;
  v += u[0] * J6[3 * n + j] - x[0] * J6[j];
  v += u[1] * J6[4 * n + j] - x[1] * J6[n + j];
  v += u[2] * J6[5 * n + j] - x[2] * J6[2 * n + j];
  return sign * v;
}

/* The contact rows of soft sides (sb_contact_rows): two curved, moving
 * floating rods touching each other and themselves at points between and at
 * nodes, in three contact frames. Each row against the world velocity of
 * the two points along the frame's axis, d . (R_g (v + omega x r)) of side 0
 * minus side 1's, from full point Jacobians (relative 1e-14). The rows are
 * formed from the point Jacobian in parts (a proximal part (A^T w)^T Jend),
 * so they equal the per-row sums over the full J (soft_row_term) up to the
 * association of the products: over the own columns bit for bit, and some
 * sides must have proximal columns. */
static void test_contact_rows(void) {
  char err[256];
  scene_rod rod;
  scene_rod_params(&rod, 4, 2, 1);
  sb_model *m[2];
  sb_state *st[2];
  sb_work *w[2];
  unsigned long long seed = 0x5DEECE66Dull;
  for (int b = 0; b < 2; b++) {
    m[b] = sb_model_create(&rod.chain, err, sizeof err);
    EXPECT(m[b] != NULL, "rod model: %s", err);
    if (!m[b]) return;
    st[b] = sb_state_create(m[b]);
    w[b] = sb_work_create(m[b]);
    for (int j = 0; j < m[b]->n; j++) {
      st[b]->q[j] = j < 6 ? 0.15 * tu_rand_r(&seed) : 2 * tu_rand_r(&seed);
      st[b]->v[j] = tu_rand_r(&seed);
    }
    EXPECT(sb_step_prepare(m[b], st[b], w[b], NULL, H, err, sizeof err) == 0, "prepare: %s", err);
  }
  int n = m[0]->n, nc = 24;
  sb_contact_problem *P = sb_contact_create(nc, 2, 2 * n, 4, err, sizeof err);
  for (int b = 0; b < 2; b++) EXPECT(sb_contact_add_soft(P, m[b], w[b], err, sizeof err) == b, "body: %s", err);
  /* frames whose axes are exact: normal, tangent hint, and t2 = n x t1 */
  static const double frames[3][3][3] = {{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}},
                                          {{0, 1, 0}, {0, 0, 1}, {1, 0, 0}},
                                          {{0, 0, 1}, {-1, 0, 0}, {0, -1, 0}}};
  sb_contact cs[24];
  for (int i = 0; i < nc; i++) {
    sb_contact *c = &cs[i];
    memset(c, 0, sizeof *c);
    const double (*F)[3] = frames[i % 3];
    for (int a = 0; a < 3; a++) {
      c->normal[a] = F[2][a];
      c->tangent[a] = F[0][a];
    }
    c->friction = 0.5;
    c->id = i;
    for (int sd = 0; sd < 2; sd++) {
      sb_contact_side *x = &c->side[sd];
      x->body = i % 4 == 3 ? 0 : sd; /* every fourth touches rod 0 twice */
      x->seg = 6 + (int)(2 * (tu_rand_r(&seed) + 1)) % 4;
      double t = 0.5 * (tu_rand_r(&seed) + 1);
      x->s = t < 0.2 ? 0.0 : t < 0.35 ? 0.05 : t < 0.5 ? 0.1 : 0.05 * (tu_rand_r(&seed) + 1); /* nodes and between */
      for (int a = 0; a < 3; a++) x->offset[a] = 0.02 * tu_rand_r(&seed);
    }
    EXPECT(sb_contact_add(P, c, err, sizeof err) == i, "contact %d: %s", i, err);
  }
  double *J6 = malloc(sizeof(double) * 6 * n), *want = malloc(sizeof(double) * 3 * 2 * n),
         *same = malloc(sizeof(double) * 3 * 2 * n);
  double worst = 0, scale = 0;
  int ld = 0, bits = 0, own = 0, proximal = 0;
  for (int i = 0; i < nc; i++) {
    const double *rows = sb_contact_rows(P, i, &ld);
    EXPECT(rows != NULL && ld >= 2 * n, "contact %d: no rows (ld %d)", i, ld);
    if (!rows) break;
    memset(want, 0, sizeof(double) * 3 * 2 * n);
    memset(same, 0, sizeof(double) * 3 * 2 * n);
    const double (*F)[3] = frames[i % 3];
    int c0[2] = {0, 0};
    for (int sd = 0; sd < 2; sd++) {
      const sb_contact_side *x = &cs[i].side[sd];
      double sign = sd ? -1 : 1;
      sb_pose g;
      sb_point_parts pp;
      EXPECT(sb_point_jacobian_parts(m[x->body], w[x->body], x->seg, x->s, &g, &pp) == 0, "parts query");
      if (pp.c0 > c0[x->body]) c0[x->body] = pp.c0; /* a self-contact: own columns past both sides' c0 */
      proximal += pp.c0 > 0;
      EXPECT(sb_point_kinematics(m[x->body], w[x->body], x->seg, x->s, &g, J6, NULL, NULL) == 0, "query");
      const double *r = x->offset;
      for (int j = 0; j < n; j++) {
        double om[3] = {J6[j], J6[n + j], J6[2 * n + j]}, vb[3], vw[3];
        for (int a = 0; a < 3; a++) vb[a] = J6[(3 + a) * n + j];
        vb[0] += om[1] * r[2] - om[2] * r[1];
        vb[1] += om[2] * r[0] - om[0] * r[2];
        vb[2] += om[0] * r[1] - om[1] * r[0];
        for (int a = 0; a < 3; a++) vw[a] = g.R[3 * a] * vb[0] + g.R[3 * a + 1] * vb[1] + g.R[3 * a + 2] * vb[2];
        for (int k = 0; k < 3; k++) {
          size_t e = (size_t)k * 2 * n + x->body * n + j;
          want[e] += sign * (F[k][0] * vw[0] + F[k][1] * vw[1] + F[k][2] * vw[2]);
          same[e] += soft_row_term(J6, n, j, &g, r, F[k], sign);
        }
      }
    }
    for (int k = 0; k < 3; k++)
      for (int j = 0; j < 2 * n; j++) {
        double got = rows[(size_t)k * ld + j], e = want[(size_t)k * 2 * n + j];
        worst = fmax(worst, fabs(got - e));
        scale = fmax(scale, fabs(e));
        own += j % n >= c0[j / n];
        bits += j % n >= c0[j / n] && got != same[(size_t)k * 2 * n + j];
      }
  }
  EXPECT(scale > 0.1 && worst <= 1e-14 * scale, "contact rows against the points' world velocities: %.3g (largest %.3g)",
         worst, scale);
  EXPECT(bits == 0, "%d row entries over the units' own columns differ from the per-row sums", bits);
  EXPECT(proximal > 0, "no side with proximal columns: the parts' (A^T w)^T Jend went untested");
  printf("contact rows (two rods, %d contacts, %d sides with proximal columns): %.2e relative to the world "
         "velocities, %d of %d own-column entries not bitwise equal\n",
         nc, proximal, worst / scale, bits, own);
  free(J6);
  free(want);
  free(same);
  sb_contact_free(P);
  for (int b = 0; b < 2; b++) {
    sb_work_free(w[b]);
    sb_state_free(st[b]);
    sb_model_free(m[b]);
  }
}

/* The assembly builds a contact's Jacobian rows over the coordinates
 * proximal to its point only (sb_point_columns). On random states of a
 * floating rod, curved and moving, the Delassus blocks and free velocities
 * it assembles equal the plain ones: full 6 x n point Jacobians, world
 * point-velocity rows, M~^-1 by the step's Cholesky factor. The contact
 * frames are the assembly's own, so the comparison is frame-free: the
 * normal entries, and the Frobenius norm of every 3 x 3 block. */
static void test_structured_assembly(void) {
  char err[256];
  scene_rod rod;
  scene_rod_params(&rod, 8, 4, 2);
  sb_model *m = sb_model_create(&rod.chain, err, sizeof err);
  EXPECT(m != NULL, "rod model: %s", err);
  if (!m) return;
  int n = m->n, nc = rod.chain.ndisk * rod.per_disk, m3 = 3 * nc;
  sb_state *st = sb_state_create(m);
  sb_work *w = sb_work_create(m);
  sb_contact_problem *P = sb_contact_create(nc, 1, n, 4, err, sizeof err);
  double *Jw = malloc(sizeof(double) * m3 * n), *X = malloc(sizeof(double) * m3 * n),
         *J6 = malloc(sizeof(double) * 6 * n), *Wp = malloc(sizeof(double) * m3 * m3);
  double worst_w = 0, worst_u = 0;
  int proximal = 0;
  for (int rep = 0; rep < 3; rep++) {
    for (int j = 0; j < n; j++) {
      st->q[j] = j < 6 ? 0.05 * (tu_rand() - 0.5) : 2 * (tu_rand() - 0.5);
      st->v[j] = 2 * (tu_rand() - 0.5);
    }
    EXPECT(sb_step_prepare(m, st, w, NULL, H, err, sizeof err) == 0, "prepare: %s", err);
    sb_contact_clear(P);
    EXPECT(scene_rod_fill(P, &rod, m, w, 0.5, err, sizeof err) == 0, "rod scene: %s", err);
    const double *W, *u;
    EXPECT(sb_contact_assemble(P, H, NULL, &W, &u, NULL, err, sizeof err) == nc, "assemble: %s", err);
    /* plain: world velocity of each rim point, every column */
    for (int i = 0; i < nc; i++) {
      const sb_contact *c = sb_contact_at(P, i);
      sb_pose g;
      sb_point_kinematics(m, w, c->side[0].seg, c->side[0].s, &g, J6, NULL, NULL);
      proximal += sb_point_columns(m, c->side[0].seg, c->side[0].s) < n;
      const double *r = c->side[0].offset;
      for (int j = 0; j < n; j++) {
        double om[3] = {J6[j], J6[n + j], J6[2 * n + j]}, vb[3];
        for (int a = 0; a < 3; a++) vb[a] = J6[(3 + a) * n + j];
        vb[0] += om[1] * r[2] - om[2] * r[1];
        vb[1] += om[2] * r[0] - om[0] * r[2];
        vb[2] += om[0] * r[1] - om[1] * r[0];
        for (int a = 0; a < 3; a++)
          Jw[(size_t)(3 * i + a) * n + j] = g.R[3 * a] * vb[0] + g.R[3 * a + 1] * vb[1] + g.R[3 * a + 2] * vb[2];
      }
    }
    memcpy(X, Jw, sizeof(double) * m3 * n);
    sb_step_solve_mt_many(m, w, X, m3, n);
    double wmax = 0, umax = 0;
    for (int a = 0; a < m3; a++)
      for (int b = 0; b < m3; b++) {
        double s = 0;
        for (int j = 0; j < n; j++) s += Jw[(size_t)a * n + j] * X[(size_t)b * n + j];
        Wp[(size_t)b * m3 + a] = s;
        wmax = fmax(wmax, fabs(s));
      }
    double ew = 0, eu = 0;
    for (int i = 0; i < nc; i++) {
      double up[3] = {0, 0, 0};
      for (int a = 0; a < 3; a++)
        for (int j = 0; j < n; j++) up[a] += Jw[(size_t)(3 * i + a) * n + j] * w->vstar[j];
      umax = fmax(umax, sqrt(up[0] * up[0] + up[1] * up[1] + up[2] * up[2]));
      eu = fmax(eu, fabs(u[3 * i + 2] - up[2]));
      eu = fmax(eu, fabs(sqrt(u[3 * i] * u[3 * i] + u[3 * i + 1] * u[3 * i + 1] + u[3 * i + 2] * u[3 * i + 2]) -
                         sqrt(up[0] * up[0] + up[1] * up[1] + up[2] * up[2])));
      for (int k = 0; k < nc; k++) {
        double fa = 0, fp = 0;
        for (int a = 0; a < 3; a++)
          for (int b = 0; b < 3; b++) {
            double x = W[(size_t)(3 * k + b) * m3 + 3 * i + a], y = Wp[(size_t)(3 * k + b) * m3 + 3 * i + a];
            fa += x * x;
            fp += y * y;
          }
        ew = fmax(ew, fabs(sqrt(fa) - sqrt(fp)));
        ew = fmax(ew, fabs(W[(size_t)(3 * k + 2) * m3 + 3 * i + 2] - Wp[(size_t)(3 * k + 2) * m3 + 3 * i + 2]));
      }
    }
    worst_w = fmax(worst_w, ew / wmax);
    worst_u = fmax(worst_u, eu / umax);
  }
  EXPECT(proximal > 0, "no contact point with zero distal columns: the structure was not exercised");
  EXPECT(worst_w <= 1e-13 && worst_u <= 1e-13,
         "structured assembly against the plain one: Delassus %.3g, free velocity %.3g (relative to the largest)",
         worst_w, worst_u);
  printf("structured assembly (rod, %d contacts, %d dofs) = plain: Delassus %.2e, free velocity %.2e\n", nc, n,
         worst_w, worst_u);
  free(Jw);
  free(X);
  free(J6);
  free(Wp);
  sb_contact_free(P);
  sb_work_free(w);
  sb_state_free(st);
  sb_model_free(m);
}

int main(void) {
  test_warm_sticking();
  test_rank_select_order();
  test_rank_select_forced_rows();
  test_rank_select_dense_panels();
  test_push_box_lcps();
  test_infeasible();
  test_infeasible_on_operator();
  test_block_resting();
  test_rod_resting();
  test_incline();
  test_stack();
  test_ruiz();
  test_ruiz_exact();
  test_ruiz_warm();
  test_ruiz_copy();
  test_ruiz_fixed_point();
  test_warm_scales_state();
  test_bad_input();
  test_whitened_rows();
  test_contact_rows();
  test_recorded_answer_basic();
  test_structured_assembly(); /* last: it draws random numbers the others' seeds assume */
  return test_report("contact");
}

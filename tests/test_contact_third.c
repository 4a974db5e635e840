/* A contact's third participant (sb_contact.coupled_body, coupled_jac): a
 * dense or custom body whose velocity also moves the two points apart, as
 * the MuJoCo system carrying two arms' mounts does (plugin/mount.c).
 *
 * 1. Folded: a rod point against a dense body D through jac Ja + Jb solves
 *    as the same contact with D on side 1 through Ja and D as the third
 *    participant through -Jb (its share of v0 - v1, the sign folded in):
 *    the same impulses and D's velocity to rounding.
 * 2. Between two rods, with D (the problem's last body) as the third
 *    participant: the solve's LCP has the normal entries of J M^-1 J^T
 *    formed densely (each rod's M~^-1 by its own solve of the identity, D's
 *    inverse by LAPACK), which it only has when the assembly counts D's rows
 *    among those the contact fills; D receives Jc^T f; the final normal
 *    velocities, computed from the rods' point Jacobians and D's velocity,
 *    are complementary to the normal impulses.
 * 3. Bad third participants are refused with messages naming the contact. */
#include <lapacke.h>
#include <string.h>

#include "contact.h"
#include "contact_scenes.h"
#include "testutil.h"

#define H 1e-3
#define ND 3 /* D's dofs */
#define NC 4 /* contacts */

typedef struct {
  sb_model *m[2];
  sb_state *st[2];
  sb_work *w[2];
  double MD[ND * ND], vD[ND], Jc[NC][3 * ND], Ja[NC][3 * ND], Jb[NC][3 * ND];
} scene;

static unsigned long long seed = 0x2545F4914F6CDD1Dull;

static int scene_make(scene *s) {
  char err[256];
  scene_rod rod;
  scene_rod_params(&rod, 20, 1, 1); /* n = 66: factored U U^T, whose columns keep their heads */
  for (int b = 0; b < 2; b++) {
    s->m[b] = sb_model_create(&rod.chain, err, sizeof err);
    EXPECT(s->m[b] != NULL, "rod model: %s", err);
    if (!s->m[b]) return -1;
    s->st[b] = sb_state_create(s->m[b]);
    s->w[b] = sb_work_create(s->m[b]);
    for (int j = 0; j < s->m[b]->n; j++) {
      s->st[b]->q[j] = j < 6 ? 0.1 * tu_rand_r(&seed) : 2 * tu_rand_r(&seed);
      s->st[b]->v[j] = tu_rand_r(&seed);
    }
    EXPECT(sb_step_prepare(s->m[b], s->st[b], s->w[b], NULL, H, err, sizeof err) == 0, "prepare: %s", err);
    EXPECT(s->w[b]->factor_upper, "rod %d (%d dofs) is not factored U U^T: the row skipping goes untested", b,
           s->m[b]->n);
  }
  double A[ND * ND];
  for (int k = 0; k < ND * ND; k++) A[k] = tu_rand_r(&seed);
  for (int i = 0; i < ND; i++)
    for (int j = 0; j < ND; j++) {
      double x = i == j ? 0.05 : 0;
      for (int k = 0; k < ND; k++) x += 0.1 * A[i * ND + k] * A[j * ND + k];
      s->MD[i * ND + j] = x;
    }
  for (int i = 0; i < ND; i++) s->vD[i] = 0.3 * tu_rand_r(&seed);
  for (int c = 0; c < NC; c++)
    for (int k = 0; k < 3 * ND; k++) {
      s->Jc[c][k] = tu_rand_r(&seed);
      s->Ja[c][k] = tu_rand_r(&seed);
      s->Jb[c][k] = tu_rand_r(&seed);
    }
  return 0;
}

static void scene_free(scene *s) {
  for (int b = 0; b < 2; b++) {
    sb_work_free(s->w[b]);
    sb_state_free(s->st[b]);
    sb_model_free(s->m[b]);
  }
}

static void random_point(sb_contact_side *x, int body) {
  x->body = body;
  x->seg = 6 + (int)(2 * (tu_rand_r(&seed) + 1)) % 4; /* near the base: short heads */
  x->s = 0.05 * (tu_rand_r(&seed) + 1);
  for (int a = 0; a < 3; a++) x->offset[a] = 0.01 * tu_rand_r(&seed);
}

static void random_normal(sb_contact *c) {
  double n[3] = {0.3 * tu_rand_r(&seed), 0.3 * tu_rand_r(&seed), 1};
  memcpy(c->normal, n, sizeof n);
}

/* The world velocity Jacobian (3 x n, row-major) of a rod's contact point. */
static void point_jacobian(const sb_model *m, sb_work *w, const sb_contact_side *x, double *Jw) {
  int n = m->n;
  double *J6 = malloc(sizeof(double) * 6 * n);
  sb_pose g;
  sb_point_kinematics(m, w, x->seg, x->s, &g, J6, NULL, NULL);
  const double *r = x->offset;
  for (int j = 0; j < n; j++) {
    double om[3] = {J6[j], J6[n + j], J6[2 * n + j]}, vb[3];
    for (int a = 0; a < 3; a++) vb[a] = J6[(3 + a) * n + j];
    vb[0] += om[1] * r[2] - om[2] * r[1];
    vb[1] += om[2] * r[0] - om[0] * r[2];
    vb[2] += om[0] * r[1] - om[1] * r[0];
    for (int a = 0; a < 3; a++) Jw[a * n + j] = g.R[3 * a] * vb[0] + g.R[3 * a + 1] * vb[1] + g.R[3 * a + 2] * vb[2];
  }
  free(J6);
}

static sb_contact_options options(void) {
  sb_contact_options o = sb_contact_default_options();
  o.rank_selection = 0; /* every contact in the LCP, in order */
  o.screen = 0;
  o.warm_start = 0;
  return o;
}

/* 1: D through Ja + Jb on side 1, against Ja on side 1 plus -Jb as the third participant. */
static void test_folded(scene *s) {
  char err[256];
  sb_contact_options opt = options();
  sb_contact_info info;
  double lam[2][NC][3], vD[2][ND];
  sb_contact cs[NC];
  for (int c = 0; c < NC; c++) {
    memset(&cs[c], 0, sizeof cs[c]);
    random_point(&cs[c].side[0], 0);
    random_normal(&cs[c]);
    cs[c].gap = -1e-4;
    cs[c].friction = 0.4;
    cs[c].id = c;
  }
  for (int form = 0; form < 2; form++) {
    sb_contact_problem *P = sb_contact_create(NC, 2, s->m[0]->n + ND, 4, err, sizeof err);
    EXPECT(sb_contact_add_soft(P, s->m[0], s->w[0], err, sizeof err) == 0, "rod: %s", err);
    int D = sb_contact_add_dense(P, ND, s->MD, s->vD, err, sizeof err);
    EXPECT(D == 1, "dense body: %s", err);
    double jside[NC][3 * ND], jthird[NC][3 * ND];
    for (int c = 0; c < NC; c++) {
      sb_contact x = cs[c];
      for (int k = 0; k < 3 * ND; k++) {
        jside[c][k] = form ? s->Ja[c][k] : s->Ja[c][k] + s->Jb[c][k];
        jthird[c][k] = -s->Jb[c][k];
      }
      x.side[1].body = D;
      x.side[1].jac = jside[c];
      if (form) {
        x.coupled_body = D;
        x.coupled_jac = jthird[c];
      }
      EXPECT(sb_contact_add(P, &x, err, sizeof err) == c, "contact %d (form %d): %s", c, form, err);
    }
    EXPECT(sb_contact_solve(P, H, &opt, &info, err, sizeof err) == 0, "solve (form %d): %s", form, err);
    for (int c = 0; c < NC; c++) sb_contact_result(P, c, lam[form][c], NULL, NULL, NULL);
    sb_contact_body_velocity(P, D, vD[form]);
    sb_contact_free(P);
  }
  double dl = tu_relerr(&lam[1][0][0], &lam[0][0][0], 3 * NC, 1e-12), dv = tu_relerr(vD[1], vD[0], ND, 1e-12);
  double fn = 0;
  for (int c = 0; c < NC; c++) fn += fabs(lam[0][c][0]) + fabs(lam[0][c][1]) + fabs(lam[0][c][2]);
  EXPECT(fn > 1e-8, "the folded problem pushes nothing (%.3g): the comparison tests nothing", fn);
  EXPECT(dl <= 1e-9 && dv <= 1e-9, "third participant against the folded side: impulses %.3g, D's velocity %.3g", dl,
         dv);
  printf("folded: impulses %.2e, D's velocity %.2e apart (total impulse %.3g N s)\n", dl, dv, fn);
}

/* 2: rod 0 against rod 1 with D as the third participant. */
static void test_soft_soft(scene *s) {
  char err[256];
  int n0 = s->m[0]->n, n1 = s->m[1]->n, N = n0 + n1 + ND;
  EXPECT(n0 <= 128 && n1 <= 128, "rods of %d and %d dofs: the velocity buffers below hold 128", n0, n1);
  if (n0 > 128 || n1 > 128) return;
  sb_contact_problem *P = sb_contact_create(NC, 3, N, 4, err, sizeof err);
  for (int b = 0; b < 2; b++) EXPECT(sb_contact_add_soft(P, s->m[b], s->w[b], err, sizeof err) == b, "rod: %s", err);
  int D = sb_contact_add_dense(P, ND, s->MD, s->vD, err, sizeof err);
  EXPECT(D == 2, "dense body: %s", err);
  sb_contact cs[NC];
  double *J = calloc((size_t)NC * N, sizeof(double)); /* n^T (J_0 - J_1 + Jc): the normal rows, world */
  double *Jp = malloc(sizeof(double) * 3 * (n0 > n1 ? n0 : n1));
  for (int c = 0; c < NC; c++) {
    sb_contact *x = &cs[c];
    memset(x, 0, sizeof *x);
    random_point(&x->side[0], 0);
    random_point(&x->side[1], c == NC - 1 ? 0 : 1); /* the last: rod 0 touching itself */
    random_normal(x);
    x->gap = c % 2 ? 1e-5 : -1e-4;
    x->friction = 0.4;
    x->id = c;
    x->coupled_body = D;
    x->coupled_jac = s->Jc[c];
    EXPECT(sb_contact_add(P, x, err, sizeof err) == c, "contact %d: %s", c, err);
    const double *nrm = sb_contact_at(P, c)->normal;
    for (int sd = 0; sd < 2; sd++) {
      int b = x->side[sd].body, nb = s->m[b]->n, off = b ? n0 : 0;
      point_jacobian(s->m[b], s->w[b], &x->side[sd], Jp);
      for (int j = 0; j < nb; j++)
        for (int a = 0; a < 3; a++) J[(size_t)c * N + off + j] += (sd ? -1 : 1) * nrm[a] * Jp[a * nb + j];
    }
    for (int j = 0; j < ND; j++)
      for (int a = 0; a < 3; a++) J[(size_t)c * N + n0 + n1 + j] += nrm[a] * s->Jc[c][a * ND + j];
  }
  /* M^-1 J_n^T, body by body */
  double *X = malloc(sizeof(double) * NC * N);
  for (int c = 0; c < NC; c++) {
    double *xc = X + (size_t)c * N;
    memcpy(xc, J + (size_t)c * N, sizeof(double) * N);
    sb_step_solve_mt_many(s->m[0], s->w[0], xc, 1, n0);
    sb_step_solve_mt_many(s->m[1], s->w[1], xc + n0, 1, n1);
    double MD[ND * ND];
    memcpy(MD, s->MD, sizeof MD);
    EXPECT(LAPACKE_dposv(LAPACK_ROW_MAJOR, 'L', ND, 1, MD, ND, xc + n0 + n1, 1) == 0, "D's solve");
  }
  sb_contact_options opt = options();
  sb_contact_info info;
  EXPECT(sb_contact_solve(P, H, &opt, &info, err, sizeof err) == 0, "solve: %s", err);
  EXPECT(info.nkept == NC, "kept %d of %d contacts", info.nkept, NC);
  int n;
  const double *A, *b;
  sb_contact_lcp(P, &n, &A, &b, NULL, NULL);
  int bs = n / NC;
  double ew = 0, wmax = 0, wthird = 0;
  for (int i = 0; i < NC; i++)
    for (int k = 0; k < NC; k++) {
      double ref = 0, third = 0;
      for (int j = 0; j < N; j++) ref += J[(size_t)i * N + j] * X[(size_t)k * N + j];
      for (int j = n0 + n1; j < N; j++) third += J[(size_t)i * N + j] * X[(size_t)k * N + j];
      ew = fmax(ew, fabs(A[(size_t)(k * bs) * n + i * bs] - ref));
      wmax = fmax(wmax, fabs(ref));
      wthird = fmax(wthird, fabs(third));
    }
  EXPECT(bs == 6 && wthird > 0.1 * wmax, "D's share of the Delassus operator (%.3g of %.3g) must matter", wthird, wmax);
  EXPECT(ew <= 1e-10 * wmax, "the LCP's normal entries against J M^-1 J^T formed densely: %.3g (largest %.3g)", ew,
         wmax);
  /* D's impulse is Jc^T f; the final normal velocities are complementary to the loads */
  const double *pD = sb_contact_body_impulse(P, D);
  double pref[ND] = {0}, vD[ND], v0[128], v1[128], comp = 0, pen = 0, load = 0;
  for (int c = 0; c < NC; c++) {
    double f[3];
    sb_contact_result(P, c, f, NULL, NULL, NULL);
    for (int j = 0; j < ND; j++)
      for (int a = 0; a < 3; a++) pref[j] += s->Jc[c][a * ND + j] * f[a];
  }
  double dp = tu_relerr(pD, pref, ND, 1e-12);
  EXPECT(dp <= 1e-12, "D's impulse against Jc^T f: %.3g", dp);
  sb_contact_body_velocity(P, D, vD);
  sb_contact_body_velocity(P, 0, v0);
  sb_contact_body_velocity(P, 1, v1);
  for (int c = 0; c < NC; c++) {
    double vn = 0, fn;
    for (int j = 0; j < n0; j++) vn += J[(size_t)c * N + j] * v0[j];
    for (int j = 0; j < n1; j++) vn += J[(size_t)c * N + n0 + j] * v1[j];
    for (int j = 0; j < ND; j++) vn += J[(size_t)c * N + n0 + n1 + j] * vD[j];
    double g = cs[c].gap, excess = g + opt.surface_layer;
    double term = g >= 0 ? g / H : excess < 0 ? opt.stabilization * excess / H : 0;
    sb_contact_result(P, c, NULL, &fn, NULL, NULL);
    load = fmax(load, fn);
    pen = fmax(pen, -(vn + term));
    comp = fmax(comp, fabs(fn * (vn + term)));
  }
  EXPECT(load > 1e-8, "no contact carries load (%.3g): complementarity tests nothing", load);
  EXPECT(pen <= 1e-8 && comp <= 1e-10, "final normal velocities: penetrating by %.3g m/s, complementarity %.3g", pen,
         comp);
  printf("soft-soft with a third participant: Delassus %.2e of %.3g (D's share %.3g), D's impulse %.2e, "
         "penetration %.2e m/s, complementarity %.2e\n",
         ew / wmax, wmax, wthird, dp, pen, comp);
  free(J);
  free(Jp);
  free(X);
  sb_contact_free(P);
}

/* 3: bad third participants. */
static void test_bad_third(scene *s) {
  char err[256];
  sb_contact_problem *P = sb_contact_create(NC, 3, s->m[0]->n + ND, 4, err, sizeof err);
  EXPECT(sb_contact_add_soft(P, s->m[0], s->w[0], err, sizeof err) == 0, "rod: %s", err);
  int D = sb_contact_add_dense(P, ND, s->MD, s->vD, err, sizeof err);
  sb_contact x;
  memset(&x, 0, sizeof x);
  random_point(&x.side[0], 0);
  x.side[1].body = -1;
  random_normal(&x);
  double jac[3 * ND];
  memcpy(jac, s->Jc[0], sizeof jac);
  x.coupled_jac = jac;
  struct {
    int body;
    double entry;
    const char *says;
  } bad[] = {{7, 0, "names body 7, but the problem has 2"},
             {-1, 0, "names body -1"},
             {0, 0, "is soft"},
             {D, NAN, "Jacobian entry 4 of the third participant, body 1 is not finite"}};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    x.coupled_body = bad[k].body;
    jac[4] = bad[k].entry ? bad[k].entry : s->Jc[0][4];
    err[0] = 0;
    EXPECT(sb_contact_add(P, &x, err, sizeof err) < 0 && strstr(err, bad[k].says) && strstr(err, "contact 0"),
           "bad third participant %zu: \"%s\" does not say \"%s\"", k, err, bad[k].says);
  }
  jac[4] = s->Jc[0][4];
  x.coupled_body = D;
  EXPECT(sb_contact_add(P, &x, err, sizeof err) == 0, "a good third participant after the bad ones: %s", err);
  x.coupled_jac = NULL;
  x.coupled_body = 12345; /* ignored without a Jacobian */
  EXPECT(sb_contact_add(P, &x, err, sizeof err) == 1, "no third participant (body ignored): %s", err);
  EXPECT(sb_contact_at(P, 1)->coupled_body == -1 && sb_contact_at(P, 0)->coupled_body == D &&
             sb_contact_at(P, 0)->coupled_jac == NULL,
         "stored third participants: %d and %d", sb_contact_at(P, 0)->coupled_body, sb_contact_at(P, 1)->coupled_body);
  sb_contact_free(P);
}

int main(void) {
  scene s;
  memset(&s, 0, sizeof s);
  if (scene_make(&s) == 0) {
    test_folded(&s);
    test_soft_soft(&s);
    test_bad_third(&s);
  }
  scene_free(&s);
  return test_report("contact_third");
}

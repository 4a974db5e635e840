/* Bilateral constraints of the contact problem (contact.h, bilateral.c)
 * against an independent formulation: the saddle-point (KKT) system
 *   [M~  E^T] [v+]   [M~ v*]
 *   [E    0 ] [-l] = [-b_e ]
 * solved densely with LAPACK (dgesv), the rows E built here from the chain's
 * point kinematics. With a contact in the same problem the answer must hold
 * the rows exactly and be complementary at the contact (a mixed LCP); a
 * rigid anchor body gets the opposite impulse; a rank-deficient block (a
 * clamp on a rod without torsion, a constraint given twice) keeps its
 * independent rows. */
#include <lapacke.h>
#include <stdlib.h>
#include <string.h>

#include "contact.h"
#include "testutil.h"

static const double H = 1e-3;

typedef struct {
  sb_segment_params seg[4];
  sb_chain_params chain;
  sb_model *m;
  sb_state *s;
  sb_work *w;
} rod_t;

/* A horizontal cosserat rod of 3 pieces (local z along world x), under
 * gravity, bent a little and moving, its step prepared. */
static void rod_make(rod_t *r, int strains, int bent) {
  memset(r, 0, sizeof *r);
  for (int i = 0; i < 3; i++) {
    r->seg[i] = sb_segment_default(SB_SEG_PCS);
    r->seg[i].length = 0.15;
    r->seg[i].radius = 0.01;
    r->seg[i].young = 1e6;
    r->seg[i].density = 1000;
    r->seg[i].strains = strains;
    r->seg[i].slices = 3;
  }
  r->chain.nseg = 3;
  r->chain.seg = r->seg;
  r->chain.base = sb_pose_identity();
  double w[3] = {0, M_PI / 2, 0};
  sb_so3_exp(w, r->chain.base.R);
  r->chain.base.p[2] = 1;
  r->chain.gravity[2] = -9.81;
  char err[256];
  r->m = sb_model_create(&r->chain, err, sizeof err);
  EXPECT(r->m != NULL, "rod: %s", err);
  r->s = sb_state_create(r->m);
  r->w = sb_work_create(r->m);
  for (int i = 0; i < r->m->n; i++) {
    r->s->q[i] = bent ? 0.3 * tu_rand() : 0;
    r->s->v[i] = 0.5 * tu_rand();
  }
  EXPECT(sb_step_prepare(r->m, r->s, r->w, NULL, H, err, sizeof err) == 0, "prepare: %s", err);
}

static void rod_free(rod_t *r) {
  sb_work_free(r->w);
  sb_state_free(r->s);
  sb_model_free(r->m);
}

/* The tip frame, and the rows of a constraint there in the anchor's axes R
 * (row-major, columns the axes): linear rows a_k . R_g J_lin, angular
 * a_k . R_g J_ang (n columns each, row-major into E). */
static sb_pose tip_rows(rod_t *r, int rows, const double R[9], double *E) {
  int n = r->m->n;
  double *J6 = malloc(sizeof(double) * 6 * n);
  sb_pose g;
  sb_point_kinematics(r->m, r->w, 2, 0.15, &g, J6, NULL, NULL);
  for (int row = 0; row < rows; row++) {
    int k = row % 3;
    const double *J = J6 + (row < 3 ? 3 * n : 0);
    for (int j = 0; j < n; j++) {
      double x = 0;
      for (int a = 0; a < 3; a++) {
        double u = 0; /* (R_g^T a_k)_a */
        for (int b = 0; b < 3; b++) u += g.R[3 * b + a] * R[3 * b + k];
        x += u * J[a * n + j];
      }
      E[row * n + j] = x;
    }
  }
  free(J6);
  return g;
}

/* M~ = F F^T from the prepared step (F upper or lower triangular). */
static void mtilde(const rod_t *r, double *M) {
  int n = r->m->n, up = r->w->factor_upper;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double x = 0;
      int k0 = up ? (i > j ? i : j) : 0, k1 = up ? n - 1 : (i < j ? i : j);
      for (int k = k0; k <= k1; k++) x += r->w->L[k * n + i] * r->w->L[k * n + j];
      M[i * n + j] = x;
    }
}

/* 1. Pin and clamp to the world, an anchor off the tip (a position and an
 * orientation error to remove): the problem's answer against the KKT
 * system's. With caps (max_speed m/s, max_turn rad/s; 0: none) below the
 * correction alpha e / h, the KKT's right side holds each error vector
 * scaled to its cap. */
static void against_kkt(int rows, double max_speed, double max_turn) {
  rod_t r;
  rod_make(&r, SB_KX | SB_KY | SB_KZ | SB_EZ, 1);
  int n = r.m->n, N = n + rows;
  double Ra[9], wv[3] = {0.02, -0.01, 0.03};
  sb_pose g0;
  sb_point_kinematics(r.m, r.w, 2, 0.15, &g0, NULL, NULL, NULL);
  double dR[9];
  sb_so3_exp(wv, dR);
  for (int i = 0; i < 3; i++) /* anchor axes: the tip's, turned a little */
    for (int j = 0; j < 3; j++) Ra[3 * i + j] = dR[3 * i] * g0.R[j] + dR[3 * i + 1] * g0.R[3 + j] + dR[3 * i + 2] * g0.R[6 + j];
  double E[6 * 64], *K = calloc((size_t)N * N, sizeof(double)), *rhs = calloc(N, sizeof(double));
  tip_rows(&r, rows, Ra, E);
  char err[256];
  sb_contact_problem *P = sb_contact_create(4, 2, 64, 4, err, sizeof err);
  EXPECT(P && sb_contact_reserve_bilateral(P, 12, err, sizeof err) == 0, "create: %s", err);
  int body = sb_contact_add_soft(P, r.m, r.w, err, sizeof err);
  sb_bilateral e;
  memset(&e, 0, sizeof e);
  e.rows = rows;
  e.body = body;
  e.seg = 2;
  e.s = 0.15;
  e.other = -1;
  memcpy(e.anchor_R, Ra, sizeof Ra);
  for (int k = 0; k < 3; k++) e.anchor_pos[k] = g0.p[k] + 0.001 * (k + 1);
  e.max_speed = max_speed;
  e.max_turn = max_turn;
  EXPECT(sb_contact_add_bilateral(P, &e, err, sizeof err) == 0, "add: %s", err);
  sb_contact_options opt = sb_contact_default_options();
  EXPECT(sb_contact_solve(P, H, &opt, NULL, err, sizeof err) == 0, "solve: %s", err);
  double *v = malloc(sizeof(double) * n);
  sb_contact_body_velocity(P, body, v);
  /* KKT: the errors as the rows see them, e = R_a^T (p - p_a), log(R_a^T R_g) */
  double M[64 * 64], Rrel[9], rot[3];
  mtilde(&r, M);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      double x = 0;
      for (int a = 0; a < 3; a++) x += Ra[3 * a + i] * g0.R[3 * a + j];
      Rrel[3 * i + j] = x;
    }
  sb_so3_log(Rrel, rot);
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < n; j++) K[i * N + j] = M[i * n + j];
    double x = 0;
    for (int j = 0; j < n; j++) x += M[i * n + j] * r.w->vstar[j];
    rhs[i] = x;
  }
  double dist = 0, scale[2] = {1, 1};
  for (int a = 0; a < 3; a++) dist += (g0.p[a] - e.anchor_pos[a]) * (g0.p[a] - e.anchor_pos[a]);
  double speed[2] = {opt.stabilization * sqrt(dist) / H,
                     opt.stabilization * sqrt(rot[0] * rot[0] + rot[1] * rot[1] + rot[2] * rot[2]) / H};
  double cap[2] = {max_speed, max_turn};
  for (int q = 0; q < 2; q++)
    if (cap[q] > 0 && speed[q] > cap[q]) scale[q] = cap[q] / speed[q];
  for (int k = 0; k < rows; k++) {
    for (int j = 0; j < n; j++) K[(n + k) * N + j] = K[j * N + n + k] = E[k * n + j];
    double err_k = 0;
    if (k < 3)
      for (int a = 0; a < 3; a++) err_k += Ra[3 * a + k] * (g0.p[a] - e.anchor_pos[a]);
    else
      err_k = rot[k - 3];
    rhs[n + k] = -scale[k >= 3] * opt.stabilization * err_k / H;
  }
  lapack_int *piv = malloc(sizeof(lapack_int) * N);
  EXPECT(LAPACKE_dgesv(LAPACK_ROW_MAJOR, N, 1, K, N, piv, rhs, 1) == 0, "KKT solve");
  double ev = 0, vmax = 0;
  for (int i = 0; i < n; i++) {
    ev = fmax(ev, fabs(v[i] - rhs[i]));
    vmax = fmax(vmax, fabs(rhs[i]));
  }
  double imp[6], errs[6];
  sb_contact_bilateral_result(P, 0, imp, NULL, errs);
  printf("bilateral %s (correction %.3g m/s, %.3g rad/s; caps %g, %g): v+ against the KKT system %.2e (of %.2e); "
         "errors seen %.2e m, %.2e rad\n",
         rows == 3 ? "pin" : "clamp", speed[0], speed[1], max_speed, max_turn, ev, vmax, errs[0],
         rows == 6 ? errs[3] : 0.0);
  EXPECT(ev < 1e-9 * fmax(vmax, 1), "bilateral %d rows: v+ off the KKT system's by %.3e", rows, ev);
  int nr, rk;
  sb_contact_bilateral_rank(P, &nr, &rk);
  EXPECT(nr == rows && rk == rows, "bilateral: %d rows, rank %d", nr, rk);
  free(v);
  free(piv);
  free(K);
  free(rhs);
  sb_contact_free(P);
  rod_free(&r);
}

/* 2. A clamp to a rigid body (dense, 6 dof: [v; w] of its com) plus a
 * penetrating contact of the rod's middle with the floor: the rows hold
 * exactly, the contact is complementary, and the body gets the opposite of
 * the rod's constraint impulse. */
static void mixed_with_body(void) {
  rod_t r;
  rod_make(&r, SB_KX | SB_KY | SB_KZ | SB_EZ, 1);
  int n = r.m->n;
  char err[256];
  sb_contact_problem *P = sb_contact_create(4, 2, 64, 4, err, sizeof err);
  sb_contact_reserve_bilateral(P, 6, err, sizeof err);
  int body = sb_contact_add_soft(P, r.m, r.w, err, sizeof err);
  double Mr[36] = {0}, vr[6] = {0.1, -0.2, 0.05, 0.3, 0.1, -0.4};
  double mass = 0.4, inertia = 2e-3;
  for (int k = 0; k < 3; k++) {
    Mr[7 * k] = mass;
    Mr[7 * (k + 3)] = inertia;
  }
  int rigid = sb_contact_add_dense(P, 6, Mr, vr, err, sizeof err);
  EXPECT(rigid == 1, "dense body: %s", err);
  /* the anchor: the tip's frame now, on the body whose com is 5 cm beyond */
  sb_pose g;
  sb_point_kinematics(r.m, r.w, 2, 0.15, &g, NULL, NULL, NULL);
  double rr[3] = {-0.05, 0, 0}; /* the anchor from the body's com */
  double jac[36] = {0};
  for (int k = 0; k < 3; k++) {
    jac[k * 6 + k] = 1;           /* linear rows: v + w x r = v - r^ w */
    jac[(3 + k) * 6 + 3 + k] = 1; /* angular rows */
  }
  double rhat[9] = {0, -rr[2], rr[1], rr[2], 0, -rr[0], -rr[1], rr[0], 0};
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) jac[i * 6 + 3 + j] = -rhat[3 * i + j];
  sb_contact ct;
  memset(&ct, 0, sizeof ct);
  ct.side[0].body = body;
  ct.side[0].seg = 1;
  ct.side[0].s = 0.075;
  ct.side[0].offset[0] = 0;
  ct.side[1].body = -1;
  ct.normal[2] = 1;
  ct.gap = -0.002;
  ct.friction = 0.5;
  EXPECT(sb_contact_add(P, &ct, err, sizeof err) == 0, "contact: %s", err);
  sb_bilateral e;
  memset(&e, 0, sizeof e);
  e.rows = 6;
  e.body = body;
  e.seg = 2;
  e.s = 0.15;
  e.other = rigid;
  e.jac = jac;
  memcpy(e.anchor_R, g.R, sizeof g.R);
  memcpy(e.anchor_pos, g.p, sizeof g.p);
  EXPECT(sb_contact_add_bilateral(P, &e, err, sizeof err) == 0, "add: %s", err);
  sb_contact_options opt = sb_contact_default_options();
  sb_contact_info info;
  EXPECT(sb_contact_solve(P, H, &opt, &info, err, sizeof err) == 0, "solve: %s", err);
  double v[64], vb[6], E[6 * 64];
  sb_contact_body_velocity(P, body, v);
  sb_contact_body_velocity(P, rigid, vb);
  tip_rows(&r, 6, g.R, E);
  double worst = 0, scale = 0;
  for (int k = 0; k < 6; k++) {
    /* row k: a_k . (tip velocity - anchor velocity), a_k the anchor's (the tip's) axis k % 3 */
    double x = 0, yk = 0;
    for (int j = 0; j < n; j++) x += E[k * n + j] * v[j];
    for (int q = 0; q < 3; q++) {
      double rowq = 0;
      for (int j = 0; j < 6; j++) rowq += jac[((k < 3 ? 0 : 3) + q) * 6 + j] * vb[j];
      yk += g.R[3 * q + k % 3] * rowq;
    }
    worst = fmax(worst, fabs(x - yk));
    scale = fmax(scale, fabs(yk));
  }
  /* the contact: normal velocity plus the gap term, against its impulse */
  double vrel[3], imp[3], fn;
  sb_contact_relative_velocity(P, 0, vrel);
  sb_contact_result(P, 0, imp, &fn, NULL, NULL);
  double stab = opt.stabilization * ct.gap / H, wn = vrel[2] + stab;
  /* the rigid body's momentum change is the opposite of the constraint's impulse on the rod */
  double bil[6], point[3], dP = 0;
  sb_contact_bilateral_result(P, 0, bil, point, NULL);
  for (int k = 0; k < 3; k++) dP = fmax(dP, fabs(mass * (vb[k] - vr[k]) + bil[k]));
  printf("bilateral with a contact and a body: rows held to %.2e (of %.2e m/s); contact fn %.4e N*s, w_n %.2e; "
         "body momentum vs impulse %.2e\n",
         worst, scale, fn, wn, dP);
  EXPECT(worst < 1e-9 * fmax(scale, 1), "mixed: the clamp's rows are off by %.3e", worst);
  EXPECT(fn > 0 && wn > -1e-9 && fabs(fn * wn) < 1e-12, "mixed: contact fn %.3e, w_n %.3e not complementary", fn, wn);
  EXPECT(dP < 1e-12, "mixed: the body's momentum change differs from the impulse by %.3e", dP);
  sb_contact_free(P);
  rod_free(&r);
}

/* 3. Rank deficiency: a clamp on a straight rod without torsion (its twist
 * row has no coordinate; bent, two bends can turn the tip about its axis)
 * keeps 5 rows; a pin given twice keeps 3 and answers as one. */
static void rank_deficient(void) {
  rod_t r;
  rod_make(&r, SB_KX | SB_KY | SB_EZ, 0); /* straight: bending alone cannot turn the tip about its axis */
  char err[256];
  sb_contact_problem *P = sb_contact_create(4, 2, 64, 4, err, sizeof err);
  sb_contact_reserve_bilateral(P, 12, err, sizeof err);
  int body = sb_contact_add_soft(P, r.m, r.w, err, sizeof err);
  sb_pose g;
  sb_point_kinematics(r.m, r.w, 2, 0.15, &g, NULL, NULL, NULL);
  sb_bilateral e;
  memset(&e, 0, sizeof e);
  e.rows = 6;
  e.body = body;
  e.seg = 2;
  e.s = 0.15;
  e.other = -1;
  memcpy(e.anchor_R, g.R, sizeof g.R);
  memcpy(e.anchor_pos, g.p, sizeof g.p);
  sb_contact_add_bilateral(P, &e, err, sizeof err);
  EXPECT(sb_contact_solve(P, H, NULL, NULL, err, sizeof err) == 0, "solve: %s", err);
  int nr, rk;
  sb_contact_bilateral_rank(P, &nr, &rk);
  EXPECT(nr == 6 && rk == 5, "clamp without torsion: %d rows, rank %d (expected 6, 5)", nr, rk);
  double v1[64], v2[64];
  sb_contact_body_velocity(P, body, v1);
  /* the tip's velocity is held: the rows with the velocity */
  double E[6 * 64], worst = 0;
  tip_rows(&r, 6, g.R, E);
  for (int k = 0; k < 6; k++) {
    double x = 0;
    for (int j = 0; j < r.m->n; j++) x += E[k * r.m->n + j] * v1[j];
    worst = fmax(worst, fabs(x));
  }
  EXPECT(worst < 1e-9, "clamp without torsion: tip twist %.3e after the solve", worst);
  /* a pin twice */
  sb_contact_clear(P);
  body = sb_contact_add_soft(P, r.m, r.w, err, sizeof err);
  e.rows = 3;
  sb_contact_add_bilateral(P, &e, err, sizeof err);
  sb_contact_solve(P, H, NULL, NULL, err, sizeof err);
  sb_contact_body_velocity(P, body, v1);
  sb_contact_clear(P);
  body = sb_contact_add_soft(P, r.m, r.w, err, sizeof err);
  sb_contact_add_bilateral(P, &e, err, sizeof err);
  sb_contact_add_bilateral(P, &e, err, sizeof err);
  EXPECT(sb_contact_solve(P, H, NULL, NULL, err, sizeof err) == 0, "pin twice: %s", err);
  sb_contact_body_velocity(P, body, v2);
  sb_contact_bilateral_rank(P, &nr, &rk);
  double d = 0;
  for (int j = 0; j < r.m->n; j++) d = fmax(d, fabs(v1[j] - v2[j]));
  printf("bilateral rank: clamp without torsion keeps %d of 6 rows (tip twist %.1e); a pin twice keeps %d of %d, "
         "answer as one pin to %.1e\n", 5, worst, rk, nr, d);
  EXPECT(nr == 6 && rk == 3 && d < 1e-9, "pin twice: %d rows rank %d, velocity off a single pin's by %.3e", nr, rk, d);
  /* bad input is refused with a message */
  e.rows = 4;
  EXPECT(sb_contact_add_bilateral(P, &e, err, sizeof err) < 0 && strstr(err, "rows"), "4 rows refused: %s", err);
  e.rows = 3;
  e.other = 5;
  EXPECT(sb_contact_add_bilateral(P, &e, err, sizeof err) < 0 && strstr(err, "anchor body"), "bad body: %s", err);
  e.other = -1;
  e.max_speed = -1;
  EXPECT(sb_contact_add_bilateral(P, &e, err, sizeof err) < 0 && strstr(err, "caps"), "negative cap: %s", err);
  e.max_speed = 0;
  e.max_turn = NAN;
  EXPECT(sb_contact_add_bilateral(P, &e, err, sizeof err) < 0 && strstr(err, "caps"), "NaN cap: %s", err);
  sb_contact_free(P);
  rod_free(&r);
}

int main(void) {
  against_kkt(3, 0, 0);
  against_kkt(6, 0, 0);
  against_kkt(3, 0.1, 0);  /* below the linear correction */
  against_kkt(6, 0.1, 1);  /* below both */
  against_kkt(6, 1e3, 1e3); /* above both: no change */
  mixed_with_body();
  rank_deficient();
  return test_report("bilateral");
}

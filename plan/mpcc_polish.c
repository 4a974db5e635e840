/* The complementarity polish of the ball-rotation MPCC (mpcc_polish.h). */
#include "mpcc_polish.h"

#include <IpStdCInterface.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A side this small at the polished point counts as zero when the pairs
 * with both sides zero are collected (the complementarity goal). */
#define POLISH_ZERO 1e-6
#define POLISH_MAX_ITER 200
#define NLP_INFINITY 2e19   /* beyond IPOPT's nlp_*_bound_inf (1e19, mpcc.c) */

static double cpu_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

const char *plan_mpcc_stationarity_name(plan_mpcc_stationarity s) {
  switch (s) {
    case PLAN_MPCC_STATIONARY_STRONG: return "strong";
    case PLAN_MPCC_STATIONARY_M: return "M";
    case PLAN_MPCC_STATIONARY_C: return "C";
    case PLAN_MPCC_STATIONARY_WEAK: return "weak";
    default: return "unknown";
  }
}

const char *plan_mpcc_polish_status_name(plan_mpcc_polish_status s) {
  switch (s) {
    case PLAN_MPCC_POLISH_SKIPPED: return "skipped";
    case PLAN_MPCC_POLISH_ACCEPTED: return "accepted";
    case PLAN_MPCC_POLISH_FAILED: return "failed";
    default: return "off";
  }
}

typedef enum {            /* what the polish holds of a pair (a, b) (tighten) */
  SIDE_VARIABLE = 0,      /* b = 0, a >= 0 */
  SIDE_ROW = 1,           /* a = 0, b >= 0 */
  SIDE_IMPLIED = 2,       /* a slip row, a combination of the step's fixed ones: a free, b >= 0 */
  SIDE_OPEN = 3           /* a free, b held (ft at 0, gamma at its value): the step's contact is open (fz = 0),
                           * or a slip row with ft = 0 that is a combination of the step's fixed rows */
} pair_side;

typedef struct {          /* the pairs of the dynamic stage and which side the polish fixed */
  int n;
  int *row_side, *row_product, *var_side;
  char *row_fixed;        /* a pair_side */
} pair_set;

/* Whether slip row c (its coefficients on (nu_t, gamma): c . nu_t + gamma, or c . nu_t alone when gamma is
 * fixed to 0) is independent of the k rows already fixed at the step, C. Any two slip directions that are
 * not opposite span the tangent plane, and any three distinct points (c, 1) of the unit circle span R^3,
 * so at most two rows (gamma fixed) or three (gamma free) are independent. */
static int slip_row_independent(const double C[3][2], int k, const double c[2], int gamma_fixed) {
  const double tol = 1e-9;
  if (k == 0) return 1;
  if (gamma_fixed) return k == 1 && fabs(C[0][0] * c[1] - C[0][1] * c[0]) > tol;
  if (k == 1) return fabs(C[0][0] - c[0]) + fabs(C[0][1] - c[1]) > tol;
  if (k == 2) {   /* det [C0 1; C1 1; c 1] */
    double det = (C[1][0] - C[0][0]) * (c[1] - C[0][1]) - (C[1][1] - C[0][1]) * (c[0] - C[0][0]);
    return fabs(det) > tol;
  }
  return 0;
}

/* The friction force of a closed step, sum ft_j D_j, written on the pyramid's facet it points through
 * (the two adjacent directions whose cone holds it): the one representation with at most two ft_j > 0,
 * and the one with the least sum, so the cone row mu fz - sum ft only gains. ft (d values) is
 * overwritten. */
static void facet_representation(plan_mpcc *p, int d, double *ft) {
  double t[2] = {0, 0}, c[2], c2[2];
  for (int j = 0; j < d; j++) {
    plan_mpcc_slip_direction(p, j, c);
    t[0] += ft[j] * c[0];
    t[1] += ft[j] * c[1];
  }
  for (int j = 0; j < d; j++) ft[j] = 0;
  if (t[0] == 0 && t[1] == 0) return;
  for (int j = 0; j < d; j++) {   /* t = alpha c_j + beta c_{j+1}, both >= 0 on t's facet */
    int j2 = (j + 1) % d;
    plan_mpcc_slip_direction(p, j, c);
    plan_mpcc_slip_direction(p, j2, c2);
    double det = c[0] * c2[1] - c[1] * c2[0];
    double alpha = (t[0] * c2[1] - t[1] * c2[0]) / det, beta = (c[0] * t[1] - c[1] * t[0]) / det;
    if (alpha >= 0 && beta >= 0) {
      ft[j] = alpha;
      ft[j2] = beta;
      return;
    }
  }
}

/* Fixes each pair's smaller side to zero in the bounds (xl, xu, gl, gu),
 * drops its product row, and moves the product's multiplier onto the fixed
 * row (d(a b) = b da + a db = b da at a = 0). z's fixed variables are set
 * to their value, 0. Two rules keep the tightened NLP's fixed rows
 * independent and its variables bounded (docs/planning.md, session 21):
 * - A step's slip rows gamma + D_j . nu are linear in three numbers, the
 *   slip velocity nu_t and gamma (two when gamma is fixed to 0). At a
 *   sticking contact the interior point spreads the friction force over
 *   every direction (all ft_j > 0, all slip rows 0), and the smaller-side
 *   rule would fix all d rows, d - 2 of them dependent, with the friction
 *   force's d - 2 free directions unpriced. So where two or more slip rows
 *   would be fixed, the force is first written on its facet
 *   (facet_representation: the same force), then only rows independent of
 *   those fixed before are fixed (largest ft_j first); a dependent row is a
 *   combination of rows held at 0, so it is 0 itself: its bounds are freed
 *   (SIDE_IMPLIED, or SIDE_OPEN where its ft_j is 0), and each pair stays
 *   complementary.
 * - Where fz is fixed to 0 the contact is open: the cone row holds every
 *   ft_j at 0, and gamma enters only the slip rows, which a large enough
 *   gamma always meets. Fixed as they are, the cone row is 0 = 0 with no free
 *   variable, and gamma is bounded only from below (the barrier pushes it
 *   up without end). So there the ft_j are fixed to 0, gamma to its value,
 *   the cone and slip rows freed, and settle_gamma restores the slip
 *   rows afterwards: the same feasible set for the rest of the plan. */
static void tighten(plan_mpcc *p, const pair_set *S, const double *g, double eps, double *z, double *xl, double *xu,
                    double *gl, double *gu, double *lambda, plan_mpcc_polish_result *out) {
  const plan_mpcc_params *P = plan_mpcc_params_of(p);
  int per = 2 + P->d;
  double small = sqrt(eps);
  for (int e = 0; e < S->n; e++) {
    int ra = S->row_side[e], vb = S->var_side[e];
    double a = g[ra], b = z[vb];
    out->biactive_relaxed += a < small && b < small;
    /* a tie (both zero, as wherever the disk is off the ball and the plan has no force) fixes the
       variable: a bound adds no row that could depend on the others */
    S->row_fixed[e] = a < b ? SIDE_ROW : SIDE_VARIABLE;
  }
  for (int e0 = 0; e0 + per <= S->n; e0 += per) {   /* a step's slip rows: only independent ones fixed */
    int gamma_fixed = S->row_fixed[e0 + 1] == SIDE_VARIABLE, k = 0, rows = 0;
    for (int j = 2; j < per; j++) rows += S->row_fixed[e0 + j] == SIDE_ROW;
    if (S->row_fixed[e0] == SIDE_ROW && rows >= 2) {   /* closed, friction spread: on its facet */
      double ft[16];   /* d <= 16 (mpcc.c) */
      for (int j = 2; j < per; j++) ft[j - 2] = z[S->var_side[e0 + j]];
      facet_representation(p, P->d, ft);
      for (int j = 2; j < per; j++) {
        int e = e0 + j;
        z[S->var_side[e]] = ft[j - 2];
        S->row_fixed[e] = g[S->row_side[e]] < ft[j - 2] ? SIDE_ROW : SIDE_VARIABLE;
      }
    }
    double C[3][2];
    for (;;) {
      int best = -1;   /* the undecided row-side pair with the largest ft */
      for (int j = 2; j < per; j++) {
        int e = e0 + j;
        if (S->row_fixed[e] == SIDE_ROW && (best < 0 || z[S->var_side[e]] > z[S->var_side[best]])) best = e;
      }
      if (best < 0) break;
      double c[2];
      plan_mpcc_slip_direction(p, best - e0 - 2, c);
      if (slip_row_independent(C, k, c, gamma_fixed)) {
        C[k][0] = c[0];
        C[k][1] = c[1];
        k++;
        S->row_fixed[best] = 4;   /* decided to fix: SIDE_ROW after the loop */
      } else {
        S->row_fixed[best] = SIDE_IMPLIED;
      }
    }
    for (int j = 2; j < per; j++) {
      int e = e0 + j;
      double c[2];
      plan_mpcc_slip_direction(p, j - 2, c);
      if (S->row_fixed[e] == 4) S->row_fixed[e] = SIDE_ROW;
      else if (S->row_fixed[e] == SIDE_VARIABLE && !slip_row_independent(C, k, c, gamma_fixed))
        S->row_fixed[e] = SIDE_OPEN;
    }
    if (S->row_fixed[e0] == SIDE_VARIABLE)
      for (int j = 1; j < per; j++) S->row_fixed[e0 + j] = SIDE_OPEN;
  }
  for (int e = 0; e < S->n; e++) {
    int ra = S->row_side[e], rp = S->row_product[e], vb = S->var_side[e];
    if (S->row_fixed[e] == SIDE_ROW) {
      gl[ra] = gu[ra] = 0;
      lambda[ra] += lambda[rp] * z[vb];
      out->fixed_rows++;
    } else if (S->row_fixed[e] == SIDE_IMPLIED || S->row_fixed[e] == SIDE_OPEN) {
      gl[ra] = -NLP_INFINITY;
      gu[ra] = NLP_INFINITY;
      lambda[ra] = 0;
      if (S->row_fixed[e] == SIDE_OPEN) {
        if (e % per != 1) z[vb] = 0;   /* ft; gamma keeps its value */
        xl[vb] = xu[vb] = z[vb];
      }
      out->implied_rows++;
    } else {
      xl[vb] = xu[vb] = z[vb] = 0;
      out->fixed_vars++;
    }
    gl[rp] = -NLP_INFINITY;
    gu[rp] = NLP_INFINITY;
    lambda[rp] = 0;
  }
}

/* After the solve: on each open step (fz fixed to 0, tighten), and on each
 * step the solve left with no force at all (fz and every ft zero) with gamma
 * free, gamma at the least value >= 0 that keeps the step's slip rows
 * gamma + D_j . nu >= 0. gamma enters no other row there, so that value is
 * the friction LCP's answer at zero normal force, and it does not depend on
 * how far the iterations drifted along gamma (which followed round-off).
 * Then the bounds tighten freed (open and implied rows, the open steps'
 * variables) are put back, so that the point is judged, and the relaxed NLP
 * started, on the MPCC's rows. g: the rows at z, updated. */
static void settle_gamma(plan_mpcc *p, const pair_set *S, int per, double *z, double *g, const double *xl0,
                         const double *xu0, double *xl, double *xu, double *gl, double *gu) {
  plan_mpcc_nlp_rows(p, z, g);
  for (int e0 = 0; e0 + per <= S->n; e0 += per) {
    int vg = S->var_side[e0 + 1], open = S->row_fixed[e0] == SIDE_VARIABLE, forceless = z[S->var_side[e0]] == 0;
    for (int j = 2; j < per; j++) forceless &= z[S->var_side[e0 + j]] == 0;
    if (!open && !(forceless && xl[vg] < xu[vg])) continue;
    double least = 0;
    for (int j = 2; j < per; j++) least = fmax(least, z[vg] - g[S->row_side[e0 + j]]);
    z[vg] = least;
  }
  for (int e = 0; e < S->n; e++) {
    int side = S->row_fixed[e], ra = S->row_side[e], vb = S->var_side[e];
    if (side != SIDE_OPEN && side != SIDE_IMPLIED) continue;
    gl[ra] = 0;
    gu[ra] = NLP_INFINITY;
    if (side == SIDE_OPEN) {
      xl[vb] = xl0[vb];
      xu[vb] = xu0[vb];
    }
  }
  plan_mpcc_nlp_rows(p, z, g);
}

/* The largest violation of the bounds (xl, xu, gl, gu) by z and its rows g. */
static double violation(int nv, int m, const double *z, const double *g, const double *xl, const double *xu,
                        const double *gl, const double *gu) {
  double v = 0;
  for (int i = 0; i < m; i++) v = fmax(v, fmax(gl[i] - g[i], g[i] - gu[i]));
  for (int i = 0; i < nv; i++) v = fmax(v, fmax(xl[i] - z[i], z[i] - xu[i]));
  return v;
}

/* The MPCC stationarity of the TNLP's KKT point z (rows g, multipliers
 * lambda): on each pair with both sides zero, nu_a = -lambda_a (the row
 * a >= 0 or a = 0; IPOPT's lambda is <= 0 at an active lower bound) and
 * nu_b = d(f + lambda . g)/d b (the bound b >= 0, or the fixed b, whose
 * multiplier IPOPT does not return). Strong: both >= 0 on every such pair;
 * M: each pair both >= 0 or one zero; C: each pair nu_a nu_b >= 0. */
static int classify(plan_mpcc *p, const pair_set *S, const double *z, const double *g, const double *lambda, int m,
                    double *r, plan_mpcc_polish_result *out) {
  if (plan_mpcc_lagrangian_gradient(p, z, lambda, r)) return -1;
  double lmax = 0;
  for (int i = 0; i < m; i++) lmax = fmax(lmax, fabs(lambda[i]));
  /* IPOPT's dual tolerance is relative to the multipliers' size */
  double tau = 1e-6 * fmax(1, lmax);
  plan_mpcc_stationarity worst = PLAN_MPCC_STATIONARY_STRONG;
  for (int e = 0; e < S->n; e++) {
    double a = g[S->row_side[e]], b = z[S->var_side[e]];
    if (!(fabs(a) <= POLISH_ZERO && fabs(b) <= POLISH_ZERO)) continue;
    double na = -lambda[S->row_side[e]], nb = r[S->var_side[e]];
    out->biactive++;
    out->min_biactive_multiplier = fmin(out->min_biactive_multiplier, fmin(na, nb));
    plan_mpcc_stationarity c;
    if (na >= -tau && nb >= -tau) c = PLAN_MPCC_STATIONARY_STRONG;
    else if (fabs(na) <= tau || fabs(nb) <= tau) c = PLAN_MPCC_STATIONARY_M;
    else if (na * nb >= 0) c = PLAN_MPCC_STATIONARY_C;
    else c = PLAN_MPCC_STATIONARY_WEAK;
    out->biactive_negative += c != PLAN_MPCC_STATIONARY_STRONG;
    if (c > worst) worst = c;
  }
  out->stationarity = worst;
  return 0;
}

/* Where the multipliers of the tightened NLP show a wrong sign on a pair
 * with both sides zero, they may still not be the only ones: the pyramid's
 * d slip rows span three directions, so where several are active their
 * multipliers are not unique (MPEC-LICQ fails), and a sign test on IPOPT's
 * choice proves nothing. The test that does not depend on the choice:
 * strong stationarity is the KKT conditions of the relaxed NLP (RNLP), the
 * tightened NLP with those pairs' both sides only >= 0. It is solved from
 * the polished point: if it finds no lower objective (beyond IPOPT's
 * tolerance), there is no first-order descent that the pairs' separation
 * would allow, and its sign-constrained multipliers certify the point. If
 * it finds a lower one, the plan is not certified and stays as it is: that
 * point may split its pairs otherwise, and nothing has classified it.
 * Returns 1 when certified. */
static int relaxed_nlp_check(plan_mpcc *p, const pair_set *S, const double *z, const double *g, const double *xl0,
                             const double *xu0, double *xl, double *xu, double *gl, double *gu, double *mult,
                             double *zr, plan_mpcc_polish_result *out) {
  int nv = plan_mpcc_nvars(p);
  for (int e = 0; e < S->n; e++) {
    int ra = S->row_side[e], vb = S->var_side[e];
    if (!(fabs(g[ra]) <= POLISH_ZERO && fabs(z[vb]) <= POLISH_ZERO)) continue;
    gl[ra] = 0;
    gu[ra] = NLP_INFINITY;
    xl[vb] = xl0[vb];
    xu[vb] = xu0[vb];
  }
  memcpy(zr, z, sizeof(double) * nv);
  double obj = NAN, prod;
  int it = 0, st = plan_mpcc_nlp_solve(p, xl, xu, gl, gu, POLISH_MAX_ITER, zr, mult, &it, &obj);
  out->rnlp_status = st;
  out->rnlp_iterations = it;
  out->iterations += it;
  out->rnlp_objective = obj;
  double comp = plan_mpcc_complementarity_measures(p, zr, &prod);
  out->rnlp_complementarity = comp;
  if (st != Solve_Succeeded && st != Solved_To_Acceptable_Level) return 0;
  double f = out->objective_after;
  return obj >= f - 1e-6 * (1 + fabs(f));   /* no descent: certified; a descent certifies nothing */
}

int plan_mpcc_polish(plan_mpcc *p, double *z, const double *mult_in, plan_mpcc_polish_result *out) {
  const plan_mpcc_params *P = plan_mpcc_params_of(p);
  double t0 = cpu_seconds();
  memset(out, 0, sizeof *out);
  out->status = PLAN_MPCC_POLISH_FAILED;
  out->rnlp_status = PLAN_MPCC_RNLP_NOT_RUN;
  out->complementarity_before = out->complementarity_after = plan_mpcc_complementarity_measures(p, z, &out->product_before);
  out->product_after = out->product_before;
  out->objective_before = out->objective_after = plan_mpcc_objective(p, z, NULL);
  int nv = plan_mpcc_nvars(p), m = plan_mpcc_nconstraints(p, 1), np = P->N * (2 + P->d);
  size_t nd = 9 * (size_t)nv + 5 * (size_t)m;
  double *buf = malloc(sizeof(double) * nd);
  int *ibuf = malloc(sizeof(int) * 3 * (size_t)np);
  char *fixed = malloc((size_t)np);
  if (!buf || !ibuf || !fixed) {
    free(buf); free(ibuf); free(fixed);
    out->ipopt_status = Insufficient_Memory;
    return -1;
  }
  double *xl = buf, *xu = xl + nv, *zt = xu + nv, *r = zt + nv, *mult = r + nv;   /* mult: m + 2 nv */
  double *gl = mult + m + 2 * (size_t)nv, *gu = gl + m, *g = gu + m, *gt = g + m;
  double *xl0 = gt + m, *xu0 = xl0 + nv, *zr = xu0 + nv;
  pair_set S = {np, ibuf, ibuf + np, ibuf + 2 * np, fixed};
  plan_mpcc_nlp_bounds(p, 1, xl, xu, gl, gu);
  memcpy(xl0, xl, sizeof(double) * nv);
  memcpy(xu0, xu, sizeof(double) * nv);
  if (plan_mpcc_complementarity_pairs(p, S.row_side, S.row_product, S.var_side) != np) {
    out->status = PLAN_MPCC_POLISH_SKIPPED;   /* the penalty form has no product rows to drop */
  } else {
    memcpy(zt, z, sizeof(double) * nv);
    if (mult_in) memcpy(mult, mult_in, sizeof(double) * ((size_t)m + 2 * (size_t)nv));
    else memset(mult, 0, sizeof(double) * ((size_t)m + 2 * (size_t)nv));
    plan_mpcc_nlp_rows(p, z, g);
    tighten(p, &S, g, P->eps, zt, xl, xu, gl, gu, mult, out);
    double obj = NAN;
    int cap = P->polish_max_iter > 0 ? P->polish_max_iter : P->polish_max_iter < 0 ? 0 : POLISH_MAX_ITER;
    int st = plan_mpcc_nlp_solve(p, xl, xu, gl, gu, cap, zt, mult, &out->iterations, &obj);
    out->ipopt_status = st;
    settle_gamma(p, &S, 2 + P->d, zt, gt, xl0, xu0, xl, xu, gl, gu);
    out->constraint_violation = violation(nv, m, zt, gt, xl, xu, gl, gu);
    double prod, comp = plan_mpcc_complementarity_measures(p, zt, &prod);
    if ((st == Solve_Succeeded || st == Solved_To_Acceptable_Level) && comp <= out->complementarity_before) {
      memcpy(z, zt, sizeof(double) * nv);
      out->status = PLAN_MPCC_POLISH_ACCEPTED;
      out->complementarity_after = comp;
      out->product_after = prod;
      out->objective_after = obj;
      classify(p, &S, zt, gt, mult, m, r, out);
      if (out->biactive_negative > 0 && P->polish_certify && relaxed_nlp_check(p, &S, z, gt, xl0, xu0, xl, xu, gl, gu, mult, zr, out)) {
        out->stationarity = PLAN_MPCC_STATIONARY_STRONG;
        out->rnlp_certified = 1;
      }
    }
    if (P->verbose) {
      fprintf(stderr, "polish: %d rows and %d variables fixed to 0, %d rows implied (%d pairs biactive below "
              "sqrt(eps)); IPOPT status %d "
              "after %d iterations; %s: complementarity %.2e -> %.2e (the tightened NLP's last iterate: %.2e, "
              "violation %.2e), objective %.6f -> %.6f; %d pairs biactive, %d of them with a multiplier < 0",
              out->fixed_rows, out->fixed_vars, out->implied_rows, out->biactive_relaxed, st, out->iterations - out->rnlp_iterations,
              plan_mpcc_polish_status_name(out->status), out->complementarity_before, out->complementarity_after, comp,
              out->constraint_violation, out->objective_before, out->objective_after, out->biactive,
              out->biactive_negative);
      if (out->rnlp_status != PLAN_MPCC_RNLP_NOT_RUN)
        fprintf(stderr, "; relaxed NLP: IPOPT status %d after %d iterations, objective %.9f, complementarity %.2e, %s",
                out->rnlp_status, out->rnlp_iterations, out->rnlp_objective, out->rnlp_complementarity,
                out->rnlp_certified ? "certifies" : "does not certify");
      fprintf(stderr, "; stationarity %s\n", plan_mpcc_stationarity_name(out->stationarity));
    }
  }
  out->solve_s = cpu_seconds() - t0;
  free(buf);
  free(ibuf);
  free(fixed);
  return out->status == PLAN_MPCC_POLISH_ACCEPTED ? 0 : -1;
}

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

typedef struct {          /* the pairs of the dynamic stage and which side the polish fixed */
  int n, per_step;        /* per step: (gap, fz), (cone, gamma), then the d (slip, ft) */
  int *row_side, *row_product, *var_side;
  char *side;             /* pair_side: which side the tightened NLP holds at zero */
} pair_set;

typedef enum {
  PAIR_VAR = 0,           /* b = 0 (variable) */
  PAIR_ROW = 1,           /* a = 0 (row) */
  PAIR_OFF_GAMMA = 2,     /* a step without contact's (cone, gamma): see tighten */
  PAIR_OFF_FT = 3         /* a step without contact's (slip, ft) */
} pair_side;

/* Fixes each pair's smaller side to zero in the bounds (xl, xu, gl, gu),
 * drops its product row, and moves the product's multiplier onto the fixed
 * row (d(a b) = b da + a db = b da at a = 0). z's fixed variables are set
 * to their value, 0.
 *
 * A step whose (gap, fz) fixes fz = 0 has no contact, and its friction pairs
 * are not fixed side by side: with fz = 0 the cone mu fz - sum ft >= 0 holds
 * every ft at zero, the cone's row is zero whatever the plan (an equality
 * with no derivative left once fz and ft are fixed), and gamma, which enters
 * only the slip rows D_j nu + gamma >= 0, can grow without bound at no cost.
 * That ray and that row leave the tightened NLP's solution and multipliers
 * not unique: how far IPOPT drifts along gamma, and the cone's multiplier
 * the stationarity reads, follow the iteration path and so the round-off.
 * There ft and gamma are fixed at zero and the cone and slip rows dropped
 * for the solve; settle_gamma then gives gamma the least value the slip rows
 * allow, the friction LCP's answer at zero normal force. */
static void tighten(const pair_set *S, const double *g, double eps, double *z, double *xl, double *xu, double *gl,
                    double *gu, double *lambda, plan_mpcc_polish_result *out) {
  double small = sqrt(eps);
  for (int e = 0; e < S->n; e++) {
    int ra = S->row_side[e], rp = S->row_product[e], vb = S->var_side[e];
    double a = g[ra], b = z[vb];
    int j = e % S->per_step;
    out->biactive_relaxed += a < small && b < small;
    /* a tie (both zero, as wherever the disk is off the ball and the plan has no force) fixes the
       variable: a bound adds no row that could depend on the others */
    if (j > 0 && S->side[e - j] == PAIR_VAR) {
      S->side[e] = j == 1 ? PAIR_OFF_GAMMA : PAIR_OFF_FT;
      xl[vb] = xu[vb] = z[vb] = 0;
      gl[ra] = -NLP_INFINITY;
      gu[ra] = NLP_INFINITY;
      lambda[ra] = 0;
      out->fixed_vars++;
    } else if (a < b) {
      S->side[e] = PAIR_ROW;
      gl[ra] = gu[ra] = 0;
      lambda[ra] += lambda[rp] * b;
      out->fixed_rows++;
    } else {
      S->side[e] = PAIR_VAR;
      xl[vb] = xu[vb] = z[vb] = 0;
      out->fixed_vars++;
    }
    gl[rp] = -NLP_INFINITY;
    gu[rp] = NLP_INFINITY;
    lambda[rp] = 0;
  }
}

/* On each step without contact (tighten), gamma at the least value >= 0
 * that keeps its slip rows D_j nu + gamma >= 0 (z's gamma is 0 there, so a
 * slip row's value is D_j nu), and the pairs' own bounds put back: gamma >= 0
 * and the cone and slip rows >= 0, which the point then meets, so that it is
 * judged, and the relaxed NLP started, on the MPCC's rows. The same least
 * value on a step the solve left with no force at all (fz and every ft at
 * zero, its gap held at zero instead) and gamma free: there too gamma
 * enters no row but the slip rows, and lowering it to that value keeps
 * them >= 0 and every product zero. g: the rows at z, updated. */
static void settle_gamma(plan_mpcc *p, const pair_set *S, double *z, double *g, const double *xl0, const double *xu0,
                         double *xl, double *xu, double *gl, double *gu) {
  plan_mpcc_nlp_rows(p, z, g);
  for (int e = 1; e < S->n; e += S->per_step) {
    int vb = S->var_side[e], off = S->side[e] == PAIR_OFF_GAMMA, forceless = z[S->var_side[e - 1]] == 0;
    for (int j = 1; j < S->per_step - 1; j++) forceless &= z[S->var_side[e + j]] == 0;
    if (!off && !(forceless && xl[vb] < xu[vb])) continue;
    double least = 0;
    for (int j = 1; j < S->per_step - 1; j++) least = fmax(least, -(g[S->row_side[e + j]] - z[vb]));
    z[vb] = least;
    if (!off) continue;
    xl[vb] = xl0[vb];
    xu[vb] = xu0[vb];
    for (int j = 0; j < S->per_step - 1; j++) {
      gl[S->row_side[e + j]] = 0;
      gu[S->row_side[e + j]] = NLP_INFINITY;
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
  pair_set S = {np, 2 + P->d, ibuf, ibuf + np, ibuf + 2 * np, fixed};
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
    tighten(&S, g, P->eps, zt, xl, xu, gl, gu, mult, out);
    double obj = NAN;
    int cap = P->polish_max_iter > 0 ? P->polish_max_iter : P->polish_max_iter < 0 ? 0 : POLISH_MAX_ITER;
    int st = plan_mpcc_nlp_solve(p, xl, xu, gl, gu, cap, zt, mult, &out->iterations, &obj);
    out->ipopt_status = st;
    settle_gamma(p, &S, zt, gt, xl0, xu0, xl, xu, gl, gu);
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
      fprintf(stderr, "polish: %d rows and %d variables fixed to 0 (%d pairs biactive below sqrt(eps)); IPOPT status %d "
              "after %d iterations; %s: complementarity %.2e -> %.2e (the tightened NLP's last iterate: %.2e, "
              "violation %.2e), objective %.6f -> %.6f; %d pairs biactive, %d of them with a multiplier < 0",
              out->fixed_rows, out->fixed_vars, out->biactive_relaxed, st, out->iterations - out->rnlp_iterations,
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

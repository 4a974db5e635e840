/* cusp-plan: planning through contact (CUSP paper, section IV) with the
 * MPCC of plan/mpcc.h: the soft arm turns the ball by 90 degrees about an
 * axis. Kinematic stage, then the dynamic stage warm-started from it (the
 * paper's two stages, the default with the paper's contact), or the dynamic
 * stage alone from rest (--cold; the default with --contact-time start). Progress (IPOPT iterations) on
 * stderr; with --json the last stdout line is one JSON object.
 * Exit code: 0 the dynamic stage converged (IPOPT success, or "acceptable":
 * its looser tolerances), or its last relaxation stopped at --last-iter and
 * the polish converged from there ("polished"; the JSON says which), 1 it
 * did not, 2 bad arguments. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "mpcc.h"
#include "mpcc_polish.h"

/* The settings that meet issue 18's goals on the paper's task about each axis, measured
 * (docs/planning.md, sessions 14 and 16); every option given on the command line overrides them. */
typedef struct {
  int relaxed_iter;        /* iteration cap of the intermediate relaxations */
  const char *hessian;
  const char *guess;
  double offaxis_deg;      /* with guess offaxis */
  double terminal_weight;
  const char *coarse_start; /* with guess coarse: the coarse plan's own start, rest or offaxis */
  int last_iter;           /* iteration cap of the last relaxation, then the polish from its point (0: none) */
  const char *margin_rows; /* with --contact-time start: off, all or lazy */
  double eps_factor;       /* the homotopy's eps factor (0: the task's, 0.1) */
} axis_defaults;
static const axis_defaults DEFAULTS[3] = {
    {60, "last", "rest", 45, 100, "rest", 0, "lazy", 0},       /* x */
    /* y with --cold: the contact on the ball's side, lever 1 about y; its last relaxation crawls, so it is
       stopped after 40 iterations and the polish converges from there (session 16) */
    {60, "last", "offaxis", 90, 300, "offaxis", 40, "lazy", 0},
    {60, "last", "rest", 45, 300, "rest", 0, "lazy", 0},       /* z */
};
/* With --contact-time start y takes x's settings, its last relaxation stopped after 100 iterations and
 * polished (its end-contact settings crawl there; docs/planning.md, session 18); x and z keep theirs. */
static const axis_defaults DEFAULT_Y_START = {60, "last", "rest", 45, 100, "rest", 100, "lazy", 0};
/* With --warm about y (end contact) the kinematic stage starts from the disk 45 degrees round the ball and
 * the dynamic stage's last relaxation is stopped after 30 iterations: from the cold start's 90 degrees (or 50,
 * 60) its capped point is infeasible or the polish fails from it. One setting measured to work, not a
 * principle: the 20-step task goes the other way (docs/planning.md, session 20). */
static const axis_defaults DEFAULT_Y_WARM = {60, "last", "offaxis", 45, 300, "offaxis", 30, "lazy", 0};
/* The same cell with --hessian lbfgs: with the task's eps factor 0.1 the 60-iteration intermediate relaxations
 * end far from their feasible sets and the last one (eps 1e-7) oscillates, then crawls, infeasible or polished in
 * vain wherever it is stopped; with 0.2 each ends nearer, the last one starts next to a point it circles without
 * converging, and the polish converges from its 30th iterate. One setting measured to work (0.3 does too, 0.15
 * not; docs/planning.md, session 25); x and z keep the task's factor, with which they are faster. */
static const axis_defaults DEFAULT_Y_WARM_LBFGS = {60, "lbfgs", "offaxis", 45, 300, "offaxis", 30, "lazy", 0.2};
/* With --warm --contact-time start about z the margin row is on every step: lazy's first plan pushes from
 * beyond the margin on one step and its second solve starts the dynamic stage again, where the row on every
 * step from the start costs one solve (docs/planning.md, session 24). */
static const axis_defaults DEFAULT_Z_WARM_START = {60, "last", "rest", 45, 300, "rest", 0, "all", 0};

/* With --contact-time start, the friction reference (the replay scene's rule, mjcf/ball_plan.xml) each
 * axis plans with: each is far from its task's normals (x: 90 degrees, y and z: 49 and 78), and each
 * is one its solve converged with at N = 100 where others stalled (docs/planning.md, session 20). */
static const char *const FRICTION_REFERENCE_START[3] = {"1,0,0", "1,0,1", "1,0,1"};

/* lbfgs: --hessian lbfgs was given */
static const axis_defaults *defaults_for(int axis, int contact_at_start, int warm, int lbfgs) {
  if (axis == 1 && warm && !contact_at_start) return lbfgs ? &DEFAULT_Y_WARM_LBFGS : &DEFAULT_Y_WARM;
  if (axis == 2 && warm && contact_at_start) return &DEFAULT_Z_WARM_START;
  return axis == 1 && contact_at_start ? &DEFAULT_Y_START : &DEFAULTS[axis];
}

static int usage(const char *msg) {
  if (msg) fprintf(stderr, "cusp-plan: %s\n", msg);
  fprintf(stderr,
          "usage: cusp-plan --task rotate --axis x|y|z [--cold | --warm] [--N n] [--T seconds] [--angle rad]\n"
          "                 [--eps e] [--eps-start e0] [--eps-factor f] [--relaxed-iter k] [--max-iter k] [--kin-iter k] [--max-seconds s] [--tol t]\n"
          "                 [--penalty rho [--penalty-from e] | --scholtes] [--lbfgs-memory k] [--guess auto|rest|offaxis|coarse] [--offaxis-angle deg]\n"
          "                 [--coarse-N n] [--coarse-start rest|offaxis] [--coarse-eps e] [--coarse-iter k] [--ipopt-options file] [--ipopt-options-last file] [--hessian lbfgs|exact|last]\n"
          "                 [--terminal-weight w] [--terminal-weight-final w] [--out trajectory.csv] [--json] [--quiet] [--derivative-test] [--diagnose]\n"
          "                 [--polish | --no-polish] [--polish-certify] [--last-iter k] [--disk-fillet m]\n"
          "                 [--contact-time end|start] [--kin-effort 0|1] [--kin-out file] [--dyn-eps-start e] [--dyn-warm-primal 0|1]\n"
          "                 [--friction-reference x,y,z|carried] [--margin-rows off|all|lazy]\n"
          "--margin-rows (with --contact-time start): off the NLP without the simulator's margin;\n"
          "  all the row fz_k (g_k - margin_k) <= eps on every step (no push from beyond the narrow phase's\n"
          "  speculative margin, plugin/margin.h; docs/planning.md, session 21; the default about z with --warm);\n"
          "  lazy (the default otherwise) the dynamic stage\n"
          "  without them, then again with the row on the steps its plan pushed on from beyond the margin\n"
          "  (up to 3 more solves of the dynamic stage, from its start; the JSON's margin_steps_added and\n"
          "  margin_resolves)\n"
          "--friction-reference: the pyramid's first direction is this world direction projected on the contact's\n"
          "  tangent plane (the simulator's rule with the arm's key friction_reference: mjcf/ball_plan.xml sets\n"
          "  1 0 1; the trajectory file records the reference, columns rx ry rz, and cusp.replay uses it); carried: the rest contact's basis carried along the\n"
          "  shortest rotation. Default with --contact-time start: 1,0,0 about x, 1,0,1 about y and z; with end,\n"
          "  carried\n"
          "--kin-effort: 1 (default) the kinematic stage's objective adds eq. (20)'s control effort with tau from\n"
          "  the arm rows linearized at rest and the contact force through the disk's Jacobian at rest (the arm's\n"
          "  motion and the forces priced; docs/planning.md, session 19); 0 the arm's motion free (before)\n"
          "--kin-out: the kinematic stage's plan, tau by inverse dynamics, written as --out writes the final one\n"
          "--dyn-eps-start, --dyn-warm-primal 1: the dynamic stage after the kinematic one starts its homotopy at\n"
          "  e, and from the kinematic point barely pushed off its bounds (default: the task's homotopy from 1e-3)\n"
          "--contact-time: end (default, the paper's eq. 19: the exact gap at the step's end) or start (the\n"
          "  simulator's LCP: geometry at the step's start, the gap linearized with the velocities after it, 0.2\n"
          "  gap stabilization when penetrating), so the plan is a trajectory cusp's simulator reproduces\n"
          "--penalty-from: Scholtes' homotopy down to eps = e, then the penalty form (rho) from that point\n"
          "--terminal-weight: the weight of the final quaternion error in eq. (20) (the paper's: 100)\n"
          "--terminal-weight-final: after the homotopy, one more solve at eps with this terminal weight\n"
          "--polish (default) / --no-polish: after the last relaxation, fix each complementarity pair's\n"
          "  smaller side to zero and solve that tightened NLP (exact complementarity; the relaxed plan is\n"
          "  kept if it fails)\n"
          "--last-iter: stop the dynamic stage's last relaxation after k iterations (0: at --max-iter) and\n"
          "  polish its point, if feasible; the JSON's status then says \"polished\" (the relaxation did not\n"
          "  converge, the tightened NLP did); ignored with --no-polish or --penalty\n"
          "--disk-fillet: the planner's disk with its rims rounded by a fillet of this radius (m; 0: sharp, as\n"
          "  the MJCF's cylinder)\n"
          "--polish-certify: where a biactive pair's multiplier of that NLP is negative, solve the relaxed\n"
          "  NLP from the polished point to tell whether it is strongly stationary (about the polish's cost)\n"
          "--diagnose: after each relaxation, where the dual infeasibility and the large multipliers\n"
          "  sit and how many complementarity pairs are biactive (stderr)\n"
          "--cold: the dynamic stage from rest; --warm: from the kinematic stage (the paper's two stages; the\n"
          "  default with the paper's contact, --cold the default with --contact-time start)\n"
          "--guess: the first stage's initial guess: rest, offaxis (the disk first moves to a\n"
          "  contact off the rotation axis), auto (offaxis when the rest contact lies near the axis, as\n"
          "  for y; with --cold only offaxis applies), coarse (the task solved first on --coarse-N steps,\n"
          "  default 20, from rest or the off-axis guess as --coarse-start says, its eps homotopy from\n"
          "  1e-3 down to --coarse-eps, default the task's eps, at most --coarse-iter iterations, default\n"
          "  --max-iter; then interpolated onto N; its CPU time counts in solve_s); --offaxis-angle: how far\n"
          "  round (degrees)\n"
          "--ipopt-options: an IPOPT options file read after cusp's options (no file is read otherwise);\n"
          "  --ipopt-options-last: read instead in the homotopy's last relaxation\n"
          "--hessian: lbfgs (IPOPT's limited-memory quasi-Newton in every solve, the polish's too), exact (the\n"
          "  Lagrangian's Hessian in every relaxation), last (lbfgs for the intermediate relaxations, exact for\n"
          "  the last one); with exact and last the polish takes the exact Hessian\n"
          "defaults: the paper's task, N = 100, T = 4 s, 90 deg, mu = 0.6, d = 10, eps = 1e-7, and per axis\n");
  /* x, y, z warm; the fourth: y with --cold; the fifth: y with --contact-time start; the sixth: z with --warm
     --contact-time start; the seventh: y warm with --hessian lbfgs */
  for (int a = 0; a < 7; a++) {
    int warm = a < 3 || a >= 5, axis = a < 3 ? a : a == 5 ? 2 : 1, start = a == 4 || a == 5;
    const axis_defaults *D = defaults_for(axis, start, warm, a == 6);
    fprintf(stderr, "  %c%s: %s --relaxed-iter %d --hessian %s --guess %s", 'x' + axis,
            a == 3 ? " with --cold" : start ? " with --contact-time start" : a == 6 ? " with --hessian lbfgs" : "",
            warm ? "--warm" : "--cold", D->relaxed_iter, D->hessian, D->guess);
    if (!strcmp(D->guess, "coarse")) fprintf(stderr, " --coarse-start %s", D->coarse_start);
    if (!strcmp(D->guess, "offaxis") || !strcmp(D->coarse_start, "offaxis")) fprintf(stderr, " --offaxis-angle %g", D->offaxis_deg);
    fprintf(stderr, " --terminal-weight %g", D->terminal_weight);
    if (D->last_iter > 0) fprintf(stderr, " --last-iter %d", D->last_iter);
    if (D->eps_factor > 0) fprintf(stderr, " --eps-factor %g", D->eps_factor);
    if (start) fprintf(stderr, " --margin-rows %s", D->margin_rows);
    fputc('\n', stderr);
  }
  fprintf(stderr, "exit code: 0 converged (or IPOPT-acceptable, or polished from a capped last relaxation), 1 not\n"
          "  converged, 2 bad arguments\n");
  return 2;
}

static void stage_json(const char *name, const plan_mpcc_stage *s, int ran) {
  printf("\"%s\": ", name);
  if (!ran) { printf("null"); return; }
  printf("{\"status\": %d, \"iterations\": %d, \"relaxations\": %d, \"solve_s\": ", s->status, s->iterations,
         s->homotopy_steps);
  json_number(s->solve_s);
  printf(", \"wall_s\": ");
  json_number(s->wall_s);
  printf(", \"eval_s\": ");
  json_number(s->eval_s);
  printf(", \"objective\": ");
  json_number(s->objective);
  printf(", \"quaternion_error\": ");
  json_number(s->quaternion_error);
  printf(", \"complementarity\": ");
  json_number(s->complementarity);
  printf(", \"complementarity_product\": ");
  json_number(s->complementarity_product);
  printf(", \"constraint_violation\": ");
  json_number(s->constraint_violation);
  printf(", \"relaxed_capped\": %s, \"relaxed_violation\": ", s->relaxed_capped ? "true" : "false");
  json_number(s->relaxed_violation);
  printf(", \"per_relaxation\": [");
  int nr = s->homotopy_steps < PLAN_MPCC_MAX_RELAXATIONS ? s->homotopy_steps : PLAN_MPCC_MAX_RELAXATIONS;
  for (int i = 0; i < nr; i++) {
    const plan_mpcc_relaxation *r = &s->relaxation[i];
    printf("%s{\"eps\": ", i ? ", " : "");
    json_number(r->eps);
    printf(", \"penalty\": ");
    json_number(r->penalty);
    printf(", \"status\": %d, \"iterations\": %d, \"solve_s\": ", r->status, r->iterations);
    json_number(r->solve_s);
    printf(", \"eval_s\": ");
    json_number(r->eval_s);
    printf("}");
  }
  printf("]}");
}

/* The complementarity polish (mpcc_polish.h): null when not asked for. */
static void polish_json(const plan_mpcc_polish_result *r) {
  printf("\"polish\": ");
  if (r->status == PLAN_MPCC_POLISH_OFF) { printf("null"); return; }
  if (r->status == PLAN_MPCC_POLISH_SKIPPED) {   /* no converged or feasible capped relaxation: nothing was polished */
    printf("{\"status\": \"skipped\"}");
    return;
  }
  printf("{\"status\": \"%s\", \"ipopt_status\": %d, \"iterations\": %d, \"solve_s\": ",
         plan_mpcc_polish_status_name(r->status), r->ipopt_status, r->iterations);
  json_number(r->solve_s);
  printf(", \"complementarity_before\": ");
  json_number(r->complementarity_before);
  printf(", \"complementarity_after\": ");
  json_number(r->complementarity_after);
  printf(", \"product_before\": ");
  json_number(r->product_before);
  printf(", \"product_after\": ");
  json_number(r->product_after);
  printf(", \"objective_before\": ");
  json_number(r->objective_before);
  printf(", \"objective_after\": ");
  json_number(r->objective_after);
  printf(", \"fixed_rows\": %d, \"fixed_variables\": %d, \"implied_rows\": %d, \"biactive_relaxed\": %d, "
         "\"tightened_violation\": ", r->fixed_rows, r->fixed_vars, r->implied_rows, r->biactive_relaxed);
  json_number(r->constraint_violation);
  printf(", \"biactive\": %d, \"biactive_negative\": %d, \"min_biactive_multiplier\": ", r->biactive,
         r->biactive_negative);
  json_number(r->min_biactive_multiplier);
  printf(", \"relaxed_nlp\": ");
  if (r->rnlp_status == PLAN_MPCC_RNLP_NOT_RUN) {
    printf("null");
  } else {
    printf("{\"ipopt_status\": %d, \"iterations\": %d, \"objective\": ", r->rnlp_status, r->rnlp_iterations);
    json_number(r->rnlp_objective);
    printf(", \"complementarity\": ");
    json_number(r->rnlp_complementarity);
    printf(", \"certified\": %s}", r->rnlp_certified ? "true" : "false");
  }
  /* strong: by IPOPT's multipliers, or (relaxed_nlp.certified) by the relaxed NLP; M, C, weak: the class of
     IPOPT's multipliers, which need not be unique where MPEC-LICQ fails */
  printf(", \"stationarity\": \"%s\"}", plan_mpcc_stationarity_name(r->stationarity));
}

/* One row per knot: t, q (n), v (n), omega (3), quat (4), then the step's
 * tau (n), fz, gap and the contact normal nx, ny, nz from the ball's centre
 * (empty on the last knot), then the friction reference rx, ry, rz the plan
 * was made with (0 0 0: the carried basis), on every row, so that a replay
 * builds the plan's pyramid without being told (cusp.replay). */
static int write_trajectory(const char *path, plan_mpcc *p, const plan_mpcc_params *P, const double *z) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  int n = plan_mpcc_n(p), ns = 2 * n + 7, B = plan_mpcc_block(p);
  fprintf(f, "t");
  for (int i = 0; i < n; i++) fprintf(f, ",q%d", i);
  for (int i = 0; i < n; i++) fprintf(f, ",v%d", i);
  fprintf(f, ",wx,wy,wz,qw,qx,qy,qz");
  for (int i = 0; i < n; i++) fprintf(f, ",tau%d", i);
  fprintf(f, ",fz,gap,nx,ny,nz,rx,ry,rz\n");
  const double *r = P->friction_reference;
  for (int k = 0; k <= P->N; k++) {
    fprintf(f, "%.9g", k * P->T / P->N);
    for (int i = 0; i < ns; i++) fprintf(f, ",%.17g", z[(size_t)k * B + i]);
    if (k < P->N) {
      for (int i = 0; i < n; i++) fprintf(f, ",%.17g", z[(size_t)k * B + ns + i]);
      double gap, fz, nrm[3];
      plan_mpcc_contact(p, z, k, &gap, &fz, nrm);
      fprintf(f, ",%.17g,%.17g,%.17g,%.17g,%.17g", fz, gap, nrm[0], nrm[1], nrm[2]);
    } else {
      for (int i = 0; i < n + 5; i++) fputc(',', f);
    }
    fprintf(f, ",%.17g,%.17g,%.17g\n", r[0], r[1], r[2]);
  }
  return fclose(f);
}

/* --guess coarse: the task on coarse_N steps (the dynamic stage from rest or the off-axis guess,
 * the homotopy from the task's eps_start whatever --eps-start says for the fine solve), its plan
 * interpolated into z. Returns 0, or -1 after saying why on stderr. */
static int coarse_guess(plan_mpcc *p, const plan_mpcc_params *P, int coarse_N, double coarse_eps, int coarse_iter,
                        const char *start, int quiet, double *z, plan_mpcc_stage *out) {
  plan_mpcc_params C = *P;
  C.N = coarse_N;
  C.eps_start = plan_mpcc_rotate_task(0).eps_start;
  if (coarse_eps > 0) C.eps = coarse_eps;
  if (coarse_iter > 0) C.max_iter = coarse_iter;
  C.warm_primal = 0;
  char err[256];
  int rc = plan_mpcc_coarse_guess(p, &C, !strcmp(start, "offaxis"), z, out, err, sizeof err);
  if (rc < 0) {
    fprintf(stderr, "cusp-plan: coarse guess: %s\n", err);
    return -1;
  }
  if (!quiet)
    fprintf(stderr, "coarse plan (N = %d, from %s): IPOPT status %d after %d iterations, %.2f CPU s, quaternion "
            "error %.3g%s\n", coarse_N, start, out->status, out->iterations, out->solve_s, out->quaternion_error,
            rc ? " (not converged: its last iterate interpolated)" : "");
  return 0;
}

int main(int argc, char **argv) {
  const char *task = NULL, *axis = NULL, *out = NULL, *guess = NULL, *ipopt_options = NULL, *hessian = NULL;
  const char *kin_out = NULL;
  const char *coarse_start = NULL, *ipopt_options_last = NULL, *contact_time = "end", *margin_rows = NULL, *friction_reference = NULL;
  int coarse_N = 20, coarse_iter = -1;
  double coarse_eps = -1;
  /* the kinematic stage's budget: with its effort it need not converge, only find the contact sequence;
     150 iterations (the homotopy to eps 1e-5) start the dynamic stage as well as 300 at half the cost
     (docs/planning.md, session 19) */
  int cold = -1, json = 0, quiet = 0, N = 100, max_iter = 3000, kin_iter = 150;
  double T = 4, angle = -1, eps = 1e-7, tol = 1e-8, max_seconds = 0, eps_start = -1, eps_factor = -1;
  int relaxed_iter = -1, last_iter = -1, derivative_test = 0, diagnose = 0, polish = 1, polish_certify = 0;
  double terminal_weight = -1, penalty_from = -1, offaxis_deg = -1, terminal_weight_final = -1;
  double penalty = -1, disk_fillet = -1;
  int lbfgs_memory = 0, kin_effort = 1, dyn_warm_primal = 0;
  double dyn_eps_start = -1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int more = i + 1 < argc;
    if (!strcmp(a, "--task") && more) task = argv[++i];
    else if (!strcmp(a, "--axis") && more) axis = argv[++i];
    else if (!strcmp(a, "--cold")) cold = 1;
    else if (!strcmp(a, "--warm")) cold = 0;
    else if (!strcmp(a, "--json")) json = 1;
    else if (!strcmp(a, "--quiet")) quiet = 1;
    else if (!strcmp(a, "--diagnose")) diagnose = 1;
    else if (!strcmp(a, "--polish")) polish = 1;
    else if (!strcmp(a, "--no-polish")) polish = 0;
    else if (!strcmp(a, "--polish-certify")) polish_certify = 1;
    else if (!strcmp(a, "--derivative-test")) derivative_test = 1;
    else if (!strcmp(a, "--out") && more) out = argv[++i];
    else if (!strcmp(a, "--guess") && more) guess = argv[++i];
    else if (!strcmp(a, "--hessian") && more) hessian = argv[++i];
    else if (!strcmp(a, "--ipopt-options") && more) ipopt_options = argv[++i];
    else if (!strcmp(a, "--ipopt-options-last") && more) ipopt_options_last = argv[++i];
    else if (!strcmp(a, "--coarse-start") && more) coarse_start = argv[++i];
    else if (!strcmp(a, "--kin-out") && more) kin_out = argv[++i];
    else if ((!strcmp(a, "--kin-effort") || !strcmp(a, "--dyn-warm-primal")) && more) {
      const char *v = argv[++i];
      if (strcmp(v, "0") && strcmp(v, "1")) {
        char msg[200];
        snprintf(msg, sizeof msg, "%s needs 0 or 1, got '%s'", a, v);
        return usage(msg);
      }
      *(!strcmp(a, "--kin-effort") ? &kin_effort : &dyn_warm_primal) = v[0] - '0';
    }
    else if (!strcmp(a, "--dyn-eps-start") && more) {
      if (parse_positive(argv[++i], &dyn_eps_start)) return usage("--dyn-eps-start needs a number > 0");
    }
    else if (!strcmp(a, "--contact-time") && more) contact_time = argv[++i];
    else if (!strcmp(a, "--margin-rows") && more) margin_rows = argv[++i];
    else if (!strcmp(a, "--friction-reference") && more) friction_reference = argv[++i];
    else if (!strcmp(a, "--coarse-eps") && more) {
      if (parse_positive(argv[++i], &coarse_eps)) return usage("--coarse-eps needs a number > 0");
    } else if (!strcmp(a, "--coarse-iter") && more) {
      char *end;
      long v = strtol(argv[++i], &end, 10);
      if (*end || v < 1 || v > 1000000) return usage("--coarse-iter needs an integer in 1..1000000");
      coarse_iter = (int)v;
    } else if (!strcmp(a, "--coarse-N") && more) {
      char *end;
      long v = strtol(argv[++i], &end, 10);
      if (*end || v < 1 || v > 100000) return usage("--coarse-N needs an integer in 1..100000");
      coarse_N = (int)v;
    }
    else if (!strcmp(a, "--N") && more) {
      char *end;
      long v = strtol(argv[++i], &end, 10);
      if (*end || v < 1 || v > 100000) return usage("--N needs an integer in 1..100000");
      N = (int)v;
    } else if (!strcmp(a, "--max-iter") && more) {
      char *end;
      long v = strtol(argv[++i], &end, 10);
      if (*end || v < 1 || v > 1000000) return usage("--max-iter needs an integer in 1..1000000");
      max_iter = (int)v;
    } else if (!strcmp(a, "--lbfgs-memory") && more) {
      char *end;
      long v = strtol(argv[++i], &end, 10);
      if (*end || v < 1 || v > 1000) return usage("--lbfgs-memory needs an integer in 1..1000");
      lbfgs_memory = (int)v;
    } else if (!strcmp(a, "--kin-iter") && more) {
      char *end;
      long v = strtol(argv[++i], &end, 10);
      if (*end || v < 1 || v > 1000000) return usage("--kin-iter needs an integer in 1..1000000");
      kin_iter = (int)v;
    } else if (!strcmp(a, "--max-seconds") && more) {
      if (parse_positive(argv[++i], &max_seconds)) return usage("--max-seconds needs a number > 0");
    } else if (!strcmp(a, "--T") && more) {
      if (parse_positive(argv[++i], &T)) return usage("--T needs a number > 0");
    } else if (!strcmp(a, "--angle") && more) {
      if (parse_positive(argv[++i], &angle)) return usage("--angle needs a number > 0 (rad)");
    } else if (!strcmp(a, "--eps") && more) {
      if (parse_positive(argv[++i], &eps)) return usage("--eps needs a number > 0");
    } else if (!strcmp(a, "--eps-start") && more) {
      if (parse_positive(argv[++i], &eps_start)) return usage("--eps-start needs a number > 0");
    } else if (!strcmp(a, "--eps-factor") && more) {
      if (parse_positive(argv[++i], &eps_factor) || eps_factor >= 1) return usage("--eps-factor needs a number in (0, 1)");
    } else if (!strcmp(a, "--last-iter") && more) {
      char *end;
      long v = strtol(argv[++i], &end, 10);
      if (*end || v < 0 || v > 1000000) return usage("--last-iter needs an integer in 0..1000000");
      last_iter = (int)v;
    } else if (!strcmp(a, "--relaxed-iter") && more) {
      char *end;
      long v = strtol(argv[++i], &end, 10);
      if (*end || v < 1 || v > 1000000) return usage("--relaxed-iter needs an integer in 1..1000000");
      relaxed_iter = (int)v;
    } else if (!strcmp(a, "--penalty") && more) {
      if (parse_positive(argv[++i], &penalty)) return usage("--penalty needs a number > 0");
    } else if (!strcmp(a, "--scholtes")) {
      penalty = 0;
    } else if (!strcmp(a, "--penalty-from") && more) {
      if (parse_positive(argv[++i], &penalty_from)) return usage("--penalty-from needs a number > 0 (an eps)");
    } else if (!strcmp(a, "--offaxis-angle") && more) {
      if (parse_positive(argv[++i], &offaxis_deg) || offaxis_deg >= 120) return usage("--offaxis-angle needs degrees in (0, 120)");
    } else if (!strcmp(a, "--terminal-weight-final") && more) {
      if (parse_positive(argv[++i], &terminal_weight_final)) return usage("--terminal-weight-final needs a number > 0");
    } else if (!strcmp(a, "--disk-fillet") && more) {
      char *end;
      disk_fillet = strtod(argv[++i], &end);
      if (*end || !(disk_fillet >= 0)) return usage("--disk-fillet needs a radius >= 0 (m)");
    } else if (!strcmp(a, "--terminal-weight") && more) {
      if (parse_positive(argv[++i], &terminal_weight)) return usage("--terminal-weight needs a number > 0");
    } else if (!strcmp(a, "--tol") && more) {
      if (parse_positive(argv[++i], &tol)) return usage("--tol needs a number > 0");
    } else {
      char msg[200];
      snprintf(msg, sizeof msg, "unknown or incomplete option '%s'", a);
      return usage(msg);
    }
  }
  if (!task || strcmp(task, "rotate")) return usage("--task rotate is required (the only task)");
  if (!axis || strlen(axis) != 1 || !strchr("xyz", axis[0])) return usage("--axis must be x, y or z");
  if (strcmp(contact_time, "end") && strcmp(contact_time, "start"))
    return usage("--contact-time must be end or start");
  int at_start = !strcmp(contact_time, "start");
  /* the simulator's contact plans from rest unless told: from the kinematic stage y fails with it and z
   * takes twice the cold start's time (docs/report.md) */
  if (cold < 0) cold = at_start;
  const axis_defaults *D = defaults_for(axis[0] - 'x', at_start, !cold, hessian && !strcmp(hessian, "lbfgs"));
  if (relaxed_iter < 0) relaxed_iter = D->relaxed_iter;
  if (last_iter < 0) last_iter = D->last_iter;
  if (!hessian) hessian = D->hessian;
  if (!guess) guess = D->guess;
  if (!coarse_start) coarse_start = D->coarse_start;
  if (offaxis_deg < 0) offaxis_deg = D->offaxis_deg;
  if (terminal_weight < 0) terminal_weight = D->terminal_weight;
  if (!margin_rows) margin_rows = D->margin_rows;
  if (strcmp(margin_rows, "off") && strcmp(margin_rows, "all") && strcmp(margin_rows, "lazy"))
    return usage("--margin-rows must be off, all or lazy");
  if (strcmp(hessian, "lbfgs") && strcmp(hessian, "exact") && strcmp(hessian, "last"))
    return usage("--hessian must be lbfgs, exact or last");
  if (strcmp(guess, "auto") && strcmp(guess, "rest") && strcmp(guess, "offaxis") && strcmp(guess, "coarse"))
    return usage("--guess must be auto, rest, offaxis or coarse");
  if (strcmp(coarse_start, "rest") && strcmp(coarse_start, "offaxis"))
    return usage("--coarse-start must be rest or offaxis");
  int coarse = !strcmp(guess, "coarse");
  if (coarse && coarse_N >= N) return usage("--guess coarse needs --coarse-N below --N");
  /* IPOPT ignores an options file it cannot open, and the plans are written after minutes of solving:
     both are checked now ("a": an existing output kept) */
  const char *files[4] = {ipopt_options, ipopt_options_last, out, kin_out};
  const char *names[4] = {"--ipopt-options", "--ipopt-options-last", "--out", "--kin-out"};
  for (int i = 0; i < 4; i++) {
    if (!files[i]) continue;
    int reading = i < 2;
    FILE *f = fopen(files[i], reading ? "r" : "a");
    if (!f) {
      char msg[300];
      snprintf(msg, sizeof msg, "%s: cannot %s '%s'", names[i], reading ? "read" : "write", files[i]);
      return usage(msg);
    }
    fclose(f);
  }
  plan_mpcc_params P = plan_mpcc_rotate_task(axis[0] - 'x');
  P.ipopt_options = ipopt_options;
  P.ipopt_options_last = ipopt_options_last;
  P.warm_primal = coarse;   /* the fine solve keeps the interpolated plan: no cold barrier start */
  P.exact_hessian = !strcmp(hessian, "exact") ? 1 : !strcmp(hessian, "last") ? 2 : 0;
  P.N = N;
  P.T = T;
  P.eps = eps;
  if (eps_start > 0) P.eps_start = eps_start;
  if (eps_factor < 0 && D->eps_factor > 0) eps_factor = D->eps_factor;
  if (eps_factor > 0) P.eps_factor = eps_factor;
  if (relaxed_iter > 0) P.max_iter_relaxed = relaxed_iter;
  P.max_iter_last = last_iter;
  P.tol = tol;
  if (penalty >= 0) P.penalty = penalty;
  if (penalty_from > 0) P.penalty_from = penalty_from;
  if (P.penalty_from > 0 && !(P.penalty > 0)) return usage("--penalty-from needs --penalty rho");
  if (lbfgs_memory > 0) P.lbfgs_memory = lbfgs_memory;
  P.max_iter = max_iter;
  P.max_iter_kinematic = kin_iter;
  P.kinematic_effort = kin_effort;
  P.max_seconds = max_seconds;
  P.verbose = !quiet;
  P.derivative_test = derivative_test;
  P.diagnose = diagnose;
  P.polish = polish;
  P.polish_certify = polish_certify;
  if (offaxis_deg > 0) P.offaxis_angle = offaxis_deg * M_PI / 180;
  if (terminal_weight > 0) P.terminal_weight = terminal_weight;
  if (terminal_weight_final > 0) P.terminal_weight_final = terminal_weight_final;
  if (angle > 0) P.angle = angle;
  if (disk_fillet >= 0) P.disk_fillet = disk_fillet;
  P.contact_at_start = !strcmp(contact_time, "start");
  P.margin_rows = !strcmp(margin_rows, "all") ? PLAN_MARGIN_ALL : !strcmp(margin_rows, "lazy") ? PLAN_MARGIN_LAZY
                                                                                              : PLAN_MARGIN_OFF;
  /* the replay scene's key (mjcf/ball_plan.xml): the plan's pyramid is then the simulator's */
  if (!friction_reference) friction_reference = P.contact_at_start ? FRICTION_REFERENCE_START[axis[0] - 'x'] : "carried";
  if (strcmp(friction_reference, "carried")) {
    char *end;
    const char *t = friction_reference;
    for (int c = 0; c < 3; c++) {
      P.friction_reference[c] = strtod(t, &end);
      if (end == t || (c < 2 ? *end != ',' : *end != 0) || !isfinite(P.friction_reference[c]))
        return usage("--friction-reference needs three numbers x,y,z or 'carried'");
      t = end + 1;
    }
  }
  char err[256];
  plan_mpcc *p = plan_mpcc_create(&P, err, sizeof err);
  if (!p) { fprintf(stderr, "cusp-plan: %s\n", err); return 2; }
  double *z = malloc(sizeof(double) * plan_mpcc_nvars(p));
  if (!z) { fprintf(stderr, "cusp-plan: out of memory\n"); plan_mpcc_free(p); return 1; }
  plan_mpcc_rest_guess(p, z);
  int offaxis = !strcmp(guess, "offaxis") || (!strcmp(guess, "auto") && !cold && plan_mpcc_needs_offaxis(p));
  double lever = -1, guess_normal[3] = {0};
  if (offaxis) {
    lever = plan_mpcc_offaxis_guess(p, z, guess_normal);
    if (lever < 0) {
      fprintf(stderr, "cusp-plan: no pose of the arm touches the ball off the rotation axis: starting from rest\n");
      offaxis = 0;
    } else if (!quiet) {
      fprintf(stderr, "off-axis guess: contact normal (%.3f, %.3f, %.3f), lever %.3f of the radius\n",
              guess_normal[0], guess_normal[1], guess_normal[2], lever);
    }
  }
  plan_mpcc_stage kin = {0}, dyn = {0}, coarse_stage = {0};
  if (cold && offaxis) plan_mpcc_inverse_dynamics(p, z);
  if (coarse && coarse_guess(p, &P, coarse_N, coarse_eps, coarse_iter, coarse_start, quiet, z, &coarse_stage)) {
    free(z);
    plan_mpcc_free(p);
    return 1;
  }
  if (!cold) {
    plan_mpcc_solve(p, 0, z, &kin);  /* from the coarse plan too, with --guess coarse --warm */
    if (!quiet) fprintf(stderr, "kinematic stage: IPOPT status %d after %d iterations, %.2f CPU s\n", kin.status, kin.iterations, kin.solve_s);
    plan_mpcc_inverse_dynamics(p, z);
    if (!quiet) {   /* how far the inverse dynamics' controls leave their bounds */
      int n = plan_mpcc_n(p), B = plan_mpcc_block(p), beyond = 0;
      double worst = 0;
      for (int k = 0; k < N; k++)
        for (int i = 0; i < n; i++) {
          double t = fabs(z[(size_t)k * B + 2 * n + 7 + i]);
          worst = fmax(worst, t);
          beyond += t > P.tau_bound;
        }
      fprintf(stderr, "inverse dynamics: max |tau| %.3g (bound %g), %d of %d beyond it\n", worst, P.tau_bound, beyond, N * n);
    }
    if (kin_out && write_trajectory(kin_out, p, &P, z)) fprintf(stderr, "cusp-plan: cannot write %s\n", kin_out);
    plan_mpcc_set_start(p, dyn_eps_start > 0 ? dyn_eps_start : P.eps_start, dyn_warm_primal ? 1 : P.warm_primal);
  }
  int rc = plan_mpcc_solve(p, 1, z, &dyn);
  if (dyn.margin_steps_added > 0)
    fprintf(stderr, "cusp-plan: the plan pushed from beyond the simulator's margin: margin rows added on %d steps, "
            "%d more solves\n", dyn.margin_steps_added, dyn.margin_resolves);
  double step_residual = plan_mpcc_step_residual(p, z);
  if (!quiet) fprintf(stderr, "dynamic stage: IPOPT status %d after %d iterations, %.2f CPU s\n", dyn.status, dyn.iterations, dyn.solve_s);
  if (out && write_trajectory(out, p, &P, z)) {
    fprintf(stderr, "cusp-plan: cannot write %s\n", out);
    rc = -1;
  }
  /* IPOPT's Solved_To_Acceptable_Level (1) meets its looser acceptable_* tolerances only; "polished": the
     last relaxation stopped at --last-iter (ipopt_status -1) and the tightened NLP converged from its point
     (polish.ipopt_status) */
  const char *status = rc != 0 ? "failed" : dyn.relaxed_capped ? "polished" : dyn.status == 0 ? "converged" : "acceptable";
  if (json) {
    printf("{\"task\": \"rotate\", \"axis\": \"%c\", \"start\": \"%s\", \"N\": %d, \"T\": ", axis[0],
           cold ? "cold" : "kinematic", N);
    json_number(T);
    printf(", \"hessian\": \"%s\", \"contact_time\": \"%s\", \"margin_rows\": \"%s\", \"friction_reference\": \"%s\", "
           "\"terminal_weight\": ",
           hessian, contact_time, P.contact_at_start ? margin_rows : "off", friction_reference);
    json_number(P.terminal_weight_final > 0 ? P.terminal_weight_final : P.terminal_weight);
    printf(", \"guess\": \"%s\", \"status\": \"%s\", \"ipopt_status\": %d, \"quaternion_error\": ",
           coarse ? "coarse" : offaxis ? "offaxis" : "rest", status, dyn.status);
    json_number(dyn.quaternion_error);
    printf(", \"complementarity\": ");
    json_number(dyn.complementarity);
    printf(", \"complementarity_product\": ");
    json_number(dyn.complementarity_product);
    printf(", \"step_residual\": ");
    json_number(step_residual);
    printf(", \"margin_steps_added\": %d, \"margin_resolves\": %d", dyn.margin_steps_added, dyn.margin_resolves);
    printf(", ");
    polish_json(&dyn.polish);
    printf(", \"iterations\": %d, \"solve_s\": {\"coarse\": ", coarse_stage.iterations + kin.iterations + dyn.iterations);
    json_number(coarse_stage.solve_s);
    printf(", \"kinematic\": ");
    json_number(cold ? 0 : kin.solve_s);
    printf(", \"dynamic\": ");
    json_number(dyn.solve_s);
    printf(", \"total\": ");
    json_number(coarse_stage.solve_s + kin.solve_s + dyn.solve_s);
    printf("}, \"solve_s_clock\": \"process CPU\", \"wall_s\": ");
    json_number(coarse_stage.wall_s + (cold ? 0 : kin.wall_s) + dyn.wall_s);
    printf(", ");
    stage_json("coarse", &coarse_stage, coarse);
    printf(", ");
    stage_json("kinematic", &kin, !cold);
    printf(", ");
    stage_json("dynamic", &dyn, 1);
    printf("}\n");
  } else {
    printf("rotate about %c (%s start): %s, quaternion error %.3g, complementarity %.3g, step residual %.3g, "
           "%.2f CPU s\n", axis[0], cold ? "cold" : "kinematic", status, dyn.quaternion_error,
           dyn.complementarity, step_residual, coarse_stage.solve_s + kin.solve_s + dyn.solve_s);
  }
  free(z);
  plan_mpcc_free(p);
  return rc == 0 ? 0 : 1;
}

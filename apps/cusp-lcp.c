/* cusp-lcp: solves one LCP file of the peer set's .dat format with the
 * cusp solvers (zero rows and independent parts split off first,
 * sb_lcp_solve_split; Ruiz equilibration and optional Tikhonov) and prints
 * the outcome, or JSON on the last line. Exit code: 0 solved, 1 not
 * solved, 2 bad arguments or unreadable input. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "lcp.h"

#define HUMAN_Z_MAX 20 /* entries of z printed without --json */

static int usage(const char *msg) {
  if (msg) fprintf(stderr, "cusp-lcp: %s\n", msg);
  fprintf(stderr,
          "usage: cusp-lcp FILE.dat [--solver fb|lemke|pgs] [--no-ruiz] [--tikhonov EPS]\n"
          "                    [--lemke-form tableau|revised|auto] [--json]\n"
          "  --solver X     only solver X (default: the chain lemke -> fb -> pgs)\n"
          "  --no-ruiz      skip Ruiz equilibration (default: 10 iterations)\n"
          "  --tikhonov EPS add EPS >= 0 to every diagonal entry of the scaled matrix (default 0)\n"
          "  --lemke-form F how Lemke keeps its basis: tableau (the condensed tableau), revised (the basis\n"
          "                 block K factored) or auto (default: revised on problems of at least\n"
          "                 %d unknowns, the tableau below; sb_lcp_options.lemke_form)\n"
          "  --json         print one JSON object as the last line (iterations: Lemke's pivots)\n"
          "exit code: 0 solved, 1 not solved, 2 bad arguments or unreadable file\n",
          SB_LCP_LEMKE_AUTO_MIN_N);
  return 2;
}

int main(int argc, char **argv) {
  const char *path = NULL;
  int json = 0, ruiz_iterations = 10, single = 0, lemke_form = SB_LCP_LEMKE_AUTO;
  double tikhonov = 0;
  sb_lcp_solver solver = SB_LCP_LEMKE;
  for (int i = 1; i < argc; i++) {
    char msg[256];
    if (!strcmp(argv[i], "--json")) json = 1;
    else if (!strcmp(argv[i], "--no-ruiz")) ruiz_iterations = 0;
    else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) { usage(NULL); return 0; }
    else if (!strcmp(argv[i], "--solver") && i + 1 < argc) {
      if (sb_lcp_solver_parse(argv[++i], &solver)) {
        snprintf(msg, sizeof msg, "unknown solver '%s' (fb, lemke or pgs)", argv[i]);
        return usage(msg);
      }
      single = 1;
    } else if (!strcmp(argv[i], "--lemke-form") && i + 1 < argc) {
      i++;
      if (!strcmp(argv[i], "tableau")) lemke_form = SB_LCP_LEMKE_TABLEAU;
      else if (!strcmp(argv[i], "revised")) lemke_form = SB_LCP_LEMKE_REVISED;
      else if (!strcmp(argv[i], "auto")) lemke_form = SB_LCP_LEMKE_AUTO;
      else {
        snprintf(msg, sizeof msg, "unknown --lemke-form '%s' (tableau, revised or auto)", argv[i]);
        return usage(msg);
      }
    } else if (!strcmp(argv[i], "--tikhonov") && i + 1 < argc) {
      char *end;
      tikhonov = strtod(argv[++i], &end);
      if (end == argv[i] || *end || !isfinite(tikhonov) || tikhonov < 0) {
        snprintf(msg, sizeof msg, "--tikhonov needs a finite number >= 0, not '%s'", argv[i]);
        return usage(msg);
      }
    } else if (argv[i][0] != '-') {
      if (path) {
        snprintf(msg, sizeof msg, "one file only ('%s', then '%s')", path, argv[i]);
        return usage(msg);
      }
      path = argv[i];
    } else {
      snprintf(msg, sizeof msg, "unknown or incomplete argument '%s'", argv[i]);
      return usage(msg);
    }
  }
  if (!path) return usage("no LCP file given");

  int n;
  double *M, *q;
  char err[256];
  if (sb_lcp_read_dat(path, &n, &M, &q, err, sizeof err)) {
    fprintf(stderr, "cusp-lcp: %s\n", err);
    return 2;
  }
  double *z = calloc(n, sizeof(double)), *w = calloc(n, sizeof(double));
  if (!z || !w) {
    fprintf(stderr, "cusp-lcp: out of memory for n = %d\n", n);
    free(M);
    free(q);
    free(z);
    free(w);
    return 2;
  }
  sb_lcp_options opt = sb_lcp_default_options();
  opt.lemke_form = lemke_form;
  if (single) {
    opt.nchain = 1;
    opt.chain[0] = solver;
  }
  sb_lcp_info info;
  int ncomp, nleft;
  sb_lcp_status status =
      sb_lcp_solve_split(n, M, q, z, w, ruiz_iterations, tikhonov, &opt, &info, &ncomp, &nleft);

  if (json) {
    printf("{\"file\": ");
    json_string(stdout, path);
    printf(", \"n\": %d, \"solver\": \"%s\", \"status\": \"%s\", \"attempts\": %d, \"iterations\": %d, \"residual\": ",
           n, sb_lcp_solver_name(info.solver), sb_lcp_status_name(status), info.attempts, info.iterations);
    json_number(info.residual);
    printf(", \"complementarity\": ");
    json_number(info.complementarity);
    printf(", \"time_us\": ");
    json_number(info.time_us);
    printf(", \"components\": %d, \"unknowns_left\": %d", ncomp, nleft);
    static const char *const forms[] = {"tableau", "revised", "auto"};
    printf(", \"lemke_form\": \"%s\"", forms[lemke_form]);
    /* the form Lemke ran in: auto resolved by the size; null when Lemke did not run */
    printf(", \"lemke_form_ran\": ");
    if (info.lemke_form >= 0) printf("\"%s\"", forms[info.lemke_form]);
    else printf("null");
    printf(", \"ruiz_iterations\": %d, \"tikhonov\": ", ruiz_iterations);
    json_number(tikhonov);
    printf(", \"message\": ");
    json_string(stdout, info.message);
    printf(", \"z\": [");
    for (int i = 0; i < n; i++) {
      if (i) printf(", ");
      json_number(z[i]);
    }
    printf("]}\n");
  } else {
    printf("file             %s\n", path);
    printf("n                %d (%d left in %d independent problems once zero rows fix theirs)\n", n, nleft, ncomp);
    printf("solver           %s (%d tried; Ruiz %d iterations, Tikhonov %g)\n", sb_lcp_solver_name(info.solver),
           info.attempts, ruiz_iterations, tikhonov);
    printf("status           %s%s%s\n", sb_lcp_status_name(status), info.message[0] ? ": " : "", info.message);
    printf("iterations       %d\n", info.iterations);
    printf("residual         %.3e  (||min(z, Mz + q)||inf)\n", info.residual);
    printf("complementarity  %.3e  (|z'w|)\n", info.complementarity);
    printf("time             %.1f us\n", info.time_us);
    printf("z               ");
    for (int i = 0; i < n && i < HUMAN_Z_MAX; i++) printf(" %.10g", z[i]);
    if (n > HUMAN_Z_MAX) printf(" ... (%d more; --json prints all)", n - HUMAN_Z_MAX);
    printf("\n");
  }
  free(M);
  free(q);
  free(z);
  free(w);
  return status == SB_LCP_SOLVED ? 0 : 1;
}

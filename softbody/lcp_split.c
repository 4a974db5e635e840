/* The solve of an LCP read from a file (cusp-lcp): its cost follows what the
 * problem holds, not the n it declares. A sparse .dat may declare n in the
 * thousands and hold a handful of entries; the dense solvers would then
 * work on an n x n problem made of zeros (a 10 KB file declaring n = 4000
 * took minutes and half a gigabyte). Two exact reductions come first:
 *   - a zero row of M decides its unknown: w_i = q_i whatever z, so z_i = 0
 *     when q_i > 0 (forced by complementarity) and there is no solution
 *     when q_i < 0. Removing z_i removes column i, which can empty further
 *     rows: repeated until none (a zero row with q_i = 0 leaves z_i free and
 *     stays).
 *   - the unknowns left split into independent LCPs, the connected
 *     components of M's nonzero pattern (M_ij != 0 or M_ji != 0 links i, j).
 * Each component is solved by sb_lcp_condition_solve with a workspace of
 * its own size; the whole answer passes sb_lcp_check in the original problem. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lcp_internal.h"
#include "sb_util.h"

static int find_root(int *parent, int i) {
  while (parent[i] != i) {
    parent[i] = parent[parent[i]];
    i = parent[i];
  }
  return i;
}

/* Fixes the unknowns zero rows decide; alive[i] = 1 for those left. Returns
 * -1 with *bad_row when a zero row has q_i < 0. count, queue: n ints. */
static int fix_zero_rows(int n, const double *M, const double *q, int *alive, int *count, int *queue,
                         int *bad_row) {
  int head = 0, tail = 0;
  for (int i = 0; i < n; i++) {
    alive[i] = 1;
    count[i] = 0;
  }
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) count[i] += M[(size_t)j * n + i] != 0;
  for (int i = 0; i < n; i++)
    if (count[i] == 0 && q[i] != 0) queue[tail++] = i;
  while (head < tail) {
    int i = queue[head++];
    if (q[i] < 0) {
      *bad_row = i;
      return -1;
    }
    alive[i] = 0; /* z_i = 0: column i leaves every row */
    const double *c = M + (size_t)i * n;
    for (int r = 0; r < n; r++)
      if (alive[r] && c[r] != 0 && --count[r] == 0 && q[r] != 0) queue[tail++] = r;
  }
  return 0;
}

sb_lcp_status sb_lcp_solve_split(int n, const double *M, const double *q, double *z, double *w,
                                 int ruiz_iterations, double tikhonov, const sb_lcp_options *opt,
                                 sb_lcp_info *info, int *ncomp_out, int *nleft_out) {
  sb_lcp_options def = sb_lcp_default_options();
  if (!opt) opt = &def;
  sb_lcp_info local;
  if (!info) info = &local;
  memset(info, 0, sizeof *info);
  info->residual = INFINITY;
  info->lemke_form = -1;
  /* the solver named when none runs (every unknown fixed, or no solution found before) */
  info->solver = opt->nchain >= 1 && opt->nchain <= SB_LCP_MAX_CHAIN ? opt->chain[0] : def.chain[0];
  if (ncomp_out) *ncomp_out = 0;
  if (nleft_out) *nleft_out = 0;
  double t0 = sb_lcp_now_us();
  if (n < 1 || !M || !q || !z) {
    info->status = SB_LCP_BAD_INPUT;
    sb_errorf(info->message, sizeof info->message, "lcp: size %d below 1, or no matrix, vector or z", n);
    return info->status;
  }
  int *iw = malloc(sizeof(int) * 4 * (size_t)n);
  double *wv = malloc(sizeof(double) * 2 * (size_t)n);
  sb_lcp_work *work = NULL;
  double *Mc = NULL, *qc = NULL, *zc = NULL;
  if (!iw || !wv) {
    info->status = SB_LCP_BAD_INPUT;
    sb_errorf(info->message, sizeof info->message, "lcp: out of memory for n = %d", n);
    goto done;
  }
  for (size_t k = 0; k < (size_t)n * n; k++)
    if (!isfinite(M[k])) {
      info->status = SB_LCP_BAD_INPUT;
      sb_errorf(info->message, sizeof info->message, "lcp: M(%d, %d) is not finite", (int)(k % n), (int)(k / n));
      goto done;
    }
  for (int i = 0; i < n; i++)
    if (!isfinite(q[i])) {
      info->status = SB_LCP_BAD_INPUT;
      sb_errorf(info->message, sizeof info->message, "lcp: q(%d) is not finite", i);
      goto done;
    }
  memset(z, 0, sizeof(double) * n);
  int *alive = iw, *parent = iw + n, *order = iw + 2 * n, *start = iw + 3 * n, bad = -1;
  if (fix_zero_rows(n, M, q, alive, parent, order, &bad)) {
    info->status = SB_LCP_RAY;
    sb_errorf(info->message, sizeof info->message,
              "no solution: row %d of M is zero (with the unknowns it forces to 0) and q(%d) = %.17g < 0, so "
              "w(%d) < 0 whatever z", bad, bad, q[bad], bad);
    goto verify;
  }
  /* components of the unknowns left */
  for (int i = 0; i < n; i++) parent[i] = i;
  for (int j = 0; j < n; j++) {
    if (!alive[j]) continue;
    const double *c = M + (size_t)j * n;
    for (int i = 0; i < n; i++)
      if (alive[i] && i != j && c[i] != 0) {
        int a = find_root(parent, i), b = find_root(parent, j);
        if (a != b) parent[a < b ? b : a] = a < b ? a : b;
      }
  }
  /* order: the unknowns left grouped by component (roots in increasing order) */
  int nleft = 0, ncomp = 0, kmax = 0;
  for (int i = 0; i < n; i++) start[i] = -1;
  for (int i = 0; i < n; i++)
    if (alive[i] && find_root(parent, i) == i) start[i] = ncomp++;
  {
    /* counting sort by component: sizes, offsets, placement */
    int *size = malloc(sizeof(int) * (size_t)(ncomp + 1));
    if (!size) {
      info->status = SB_LCP_BAD_INPUT;
      sb_errorf(info->message, sizeof info->message, "lcp: out of memory for n = %d", n);
      goto done;
    }
    memset(size, 0, sizeof(int) * (size_t)(ncomp + 1));
    for (int i = 0; i < n; i++)
      if (alive[i]) size[start[find_root(parent, i)] + 1]++;
    for (int c = 0; c < ncomp; c++) {
      kmax = size[c + 1] > kmax ? size[c + 1] : kmax;
      size[c + 1] += size[c];
    }
    for (int i = 0; i < n; i++)
      if (alive[i]) order[size[start[find_root(parent, i)]]++] = i;
    free(size);
    for (int i = 0; i < n; i++) nleft += alive[i];
  }
  if (ncomp_out) *ncomp_out = ncomp;
  if (nleft_out) *nleft_out = nleft;
  if (ncomp > 0) {
    work = sb_lcp_work_create(kmax);
    Mc = malloc(sizeof(double) * (size_t)kmax * kmax);
    qc = malloc(sizeof(double) * (size_t)kmax);
    zc = malloc(sizeof(double) * (size_t)kmax);
    if (!work || !Mc || !qc || !zc) {
      info->status = SB_LCP_BAD_INPUT;
      sb_errorf(info->message, sizeof info->message, "lcp: out of memory for a component of %d unknowns", kmax);
      goto done;
    }
  }
  /* the components, in order; order[] holds them contiguously */
  info->status = SB_LCP_SOLVED;
  for (int o = 0, c = 0; o < nleft; c++) {
    int root = find_root(parent, order[o]), k = 0;
    while (o + k < nleft && find_root(parent, order[o + k]) == root) k++;
    const int *idx = order + o;
    for (int b = 0; b < k; b++) {
      for (int a = 0; a < k; a++) Mc[(size_t)b * k + a] = M[(size_t)idx[b] * n + idx[a]];
      qc[b] = q[idx[b]];
    }
    sb_lcp_info ci;
    sb_lcp_status st = sb_lcp_condition_solve(work, k, Mc, qc, zc, NULL, ruiz_iterations, tikhonov, opt, &ci);
    for (int b = 0; b < k; b++) z[idx[b]] = zc[b];
    info->attempts = ci.attempts > info->attempts ? ci.attempts : info->attempts;
    info->iterations += ci.iterations;
    if (ci.lemke_form > info->lemke_form) info->lemke_form = ci.lemke_form; /* revised if any part's was */
    if (k == kmax) info->solver = ci.solver;
    if (st != SB_LCP_SOLVED) {
      info->status = st;
      info->solver = ci.solver;
      sb_errorf(info->message, sizeof info->message, "component %d of %d (%d unknowns, from %d): %s", c, ncomp,
                k, idx[0], ci.message);
      break;
    } else if (ci.message[0] && !info->message[0]) {
      sb_errorf(info->message, sizeof info->message, "%s", ci.message);
    }
    o += k;
  }
verify:;
  /* the whole answer in the original problem, as sb_lcp_condition_solve accepts one */
  double maxq = 0;
  for (int i = 0; i < n; i++) maxq = fmax(maxq, fabs(q[i]));
  double accept = fmax(opt->tol > 0 ? opt->tol : 1e-12, 1e-9) * fmax(1, maxq);
  int ok = sb_lcp_check(n, M, q, z, wv, accept, 0, &info->residual, &bad, wv + n);
  if (info->status == SB_LCP_SOLVED && !ok) {
    info->status = SB_LCP_STALLED;
    sb_errorf(info->message, sizeof info->message, "the components were solved but the whole problem's residual "
              "is %.3g in row %d (> %.3g)", info->residual, bad, accept);
  }
  if (!isfinite(info->residual)) { /* never a non-finite z or w */
    memset(z, 0, sizeof(double) * n);
    info->residual = sb_lcp_residual(n, M, q, z, wv, NULL);
  }
  double cpl = 0;
  for (int i = 0; i < n; i++) cpl += z[i] * wv[i];
  info->complementarity = fabs(cpl);
  if (w) memcpy(w, wv, sizeof(double) * n);
done:
  if (info->status == SB_LCP_BAD_INPUT) {
    memset(z, 0, sizeof(double) * n);
    if (w) memset(w, 0, sizeof(double) * n);
  }
  sb_lcp_work_free(work);
  free(Mc);
  free(qc);
  free(zc);
  free(iw);
  free(wv);
  info->time_us = sb_lcp_now_us() - t0;
  return info->status;
}

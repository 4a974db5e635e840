/* The LCP workspace, shared by lcp.c (solvers) and condition.c (scaling). */
#ifndef SB_LCP_INTERNAL_H
#define SB_LCP_INTERNAL_H

#include "lcp.h"

struct sb_lcp_work {
  int nmax;
  /* solvers */
  double *w, *zbest, *ztry, *phi, *phitry, *g, *d, *da, *db, *rowbuf, *colbuf;
  double *H, *HtH;          /* FB: n x n each */
  double *T;                /* Lemke: condensed tableau n x (n + 2), column-major */
  int *basis, *nonbasis, *ties;
  double *LU;               /* Lemke polish and PGS local blocks */
  int *ipiv, *idx;
  double *zloc, *qloc;
  /* The warm pivot's last factorization of M_AA (in LU, M_AA itself in HtH):
   * its set, LU pivots and kind (fb_factor's return); valid while nothing
   * else wrote LU or HtH, reused by a solve with opt->same_matrix. */
  int *fc_set, *fc_piv, fc_n, fc_na, fc_how, fc_valid;
  /* conditioning (condition.c) */
  double *Ms, *qs, *zs, *dr, *dc;
};

/* Wall clock in microseconds. */
double sb_lcp_now_us(void);

#endif

/* The LCP workspace, shared by lcp.c (solvers) and condition.c (scaling). */
#ifndef SB_LCP_INTERNAL_H
#define SB_LCP_INTERNAL_H

#include "lcp.h"

/* A factorization of a principal submatrix M_AA, for reuse (lcp.c) */
typedef struct {
  double *F, *A;            /* the factor, and M_AA itself (na x na, column-major) */
  int *set, *piv, n, na, how, valid;
} sb_lcp_factor;

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
  /* The warm pivot's last two factorizations of M_AA, each with its set, LU
   * pivots and kind (fb_factor's return): slot 0 in LU (M_AA in HtH), slot 1
   * in H (M_AA in T), both scratch of the chain's solvers, so valid only
   * until the chain runs; reused by a solve with opt->same_matrix. Two,
   * because a re-solve (the proximal step) mostly retraces both passes of
   * the solve before it. fc_next: the slot the next new set overwrites
   * (the one not used last). */
  sb_lcp_factor fc[2];
  int fc_next;
  /* conditioning (condition.c) */
  double *Ms, *qs, *zs, *dr, *dc;
};

/* Wall clock in microseconds. */
double sb_lcp_now_us(void);

#endif

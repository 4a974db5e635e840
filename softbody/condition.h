/* The three-stage conditioning of the CUSP paper (000_..., §III-D), each
 * stage usable on its own:
 *   1. inertial rank selection: column-pivoted QR of the whitened normal
 *      Jacobian S^T = (J_n L^-T)^T, keeping normals with |R_kk| > eps |R_11|
 *   2. Ruiz equilibration: A <- Dr A Dc, b <- Dr b with positive diagonal
 *      Dr, Dc from the l2 norms of rows and columns (complementarity is kept:
 *      w_s = Dr w, z = Dc z_s)
 *   3. Tikhonov: + eps on chosen diagonal entries (the normal impulses). */
#ifndef SB_CONDITION_H
#define SB_CONDITION_H

#include "lcp.h"

/* Stage 1. St is the N x m whitened normal Jacobian transposed (column k =
 * contact k), column-major, overwritten. Columns with priority[k] != 0 are
 * considered first, the others only in the complement of what the first
 * group spans, so a contact that must act (it closes within the step) is
 * never dropped for one that need not. Without `order` the first group is
 * column-pivoted (the paper's RRQR); with it, the first group is taken in
 * decreasing order[k] (e.g. load carried) and a column is kept when its part
 * outside the span of the kept columns before it exceeds the tolerance (a
 * dropped column does not count). Tolerance:
 * eps times the largest column norm (= |R_11| of a pivoted QR). keep[k] is set
 * to 1 or 0. work: sb_rank_select_work_size(N, m) doubles; iwork: 2m ints.
 * Returns the number kept, or -1 on a LAPACK failure. */
int sb_rank_select(int N, int m, double *St, const int *priority, const double *order, double eps,
                   int *keep, double *work, int lwork, int *iwork);
int sb_rank_select_work_size(int N, int m);
/* The same with force (m flags, may be NULL): with `order`, first-group
 * columns flagged are kept even when they depend on the kept ones before
 * them (they then widen nothing: later columns are tested against the span
 * of the independent ones); keep[k] is then 2, so that the caller knows its
 * kept columns are dependent. For contacts an earlier solve found necessary:
 * a dropped dependent contact can still be pushed through its surface
 * (its normal a combination of kept ones with mixed signs, one of which
 * separates). The first group's leading run of flagged columns (those
 * before its first unflagged one) is kept whatever its order and leaves the
 * same span, so it is taken in the order of the rows its columns fill
 * (fewest first): a column zero past its rows then keeps its reflector
 * within them, which is the cost of a rod whitened by its upper factor. */
int sb_rank_select_forced(int N, int m, double *St, const int *priority, const double *order, const int *force,
                          double eps, int *keep, double *work, int lwork, int *iwork);

/* Stage 2 on a column-major n x n matrix; dr, dc receive the total scalings,
 * powers of two (exact). Stops early when every row and column l2 norm is
 * within [1/2, 2]. work: 2n doubles of scratch. */
void sb_ruiz(int n, double *A, double *b, double *dr, double *dc, int iterations, double *work);

/* sb_ruiz on a copy: As = Dr A Dc (A untouched, As need not hold anything
 * on entry; the copy is taken in the first sweep's row norm pass instead
 * of a pass of its own). The same doubles as memcpy then sb_ruiz. */
void sb_ruiz_copy(int n, const double *A, double *As, double *b, double *dr, double *dc, int iterations,
                  double *work);

/* Stage 2 warm: the same sweeps and the same stopping test, started from the
 * scalings dr, dc hold on entry (e.g. the last step's, by contact identity)
 * instead of from 1. At a fixed point one sweep (the test) is all it costs,
 * where the cold start takes three or four. An entry that is not a power of
 * two within 2^-64..2^64 (a restored state from elsewhere, or a scale only
 * an extreme problem needs) starts from 1: the start can neither overflow
 * nor round. With iterations <= 0 no scaling at all, as sb_ruiz. work: 2n
 * doubles. */
void sb_ruiz_from(int n, double *A, double *b, double *dr, double *dc, int iterations, double *work);

/* sb_ruiz_from on a copy, as sb_ruiz_copy: As = Dr A Dc, the start's
 * scaling applied in the copy's pass (A untouched). The contact pipeline's
 * stage 2, started from the last step's scales of the same contacts. */
void sb_ruiz_copy_from(int n, const double *A, double *As, double *b, double *dr, double *dc, int iterations,
                       double *work);

/* A matrix's column j (n doubles): where it is held, or written into
 * scratch (n doubles) and scratch returned; ctx may keep a cache. */
typedef const double *(*sb_ruiz_column_fn)(void *ctx, int j, double *scratch);

/* Stage 2's scalings of a matrix given by its columns, which is never
 * stored: dr, dc and b the same doubles as sb_ruiz_copy_from's
 * (from_start: from the scalings dr, dc hold) or sb_ruiz_copy's (else),
 * wherever no scaled entry under- or overflows. Each sweep takes every
 * column once (twice in a sweep whose column factors changed after its row
 * factors did not). work: 4n doubles. */
void sb_ruiz_scales(int n, sb_ruiz_column_fn column, void *ctx, double *b, double *dr, double *dc,
                    int iterations, int from_start, double *work);

/* 1 when s is a power of two within 2^-64..2^64 (a valid warm Ruiz start). */
int sb_ruiz_scale_ok(double s);

/* Stage 3: A(i, i) += eps for every i with mask[i] != 0 (all when mask is NULL). */
void sb_tikhonov(int n, double *A, const int *mask, double eps);

#endif

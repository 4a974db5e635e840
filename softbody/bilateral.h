/* Internal to softbody/: the bilateral rows of a contact problem
 * (contact.h, "Bilateral constraints") and their elimination by the Schur
 * complement of the bilateral block, called from contact.c's solve. */
#ifndef SB_BILATERAL_H
#define SB_BILATERAL_H

#include "contact.h"

typedef struct sb_bilateral_work sb_bilateral_work;

/* x <- M~^-1 x (which = 0) or F^-1 x (which = 1) over the problem's stacked
 * coordinates, ncol columns of leading dimension ld (contact.c's apply_all). */
typedef void (*sb_bilateral_apply_fn)(void *ctx, int which, double *x, int ncol, int ld);

/* Rows for max_rows, over max_dof stacked coordinates (the leading
 * dimension of every column), against max_contacts contacts. NULL when out
 * of memory. */
sb_bilateral_work *sb_bilateral_work_create(int max_rows, int max_dof, int max_contacts);
void sb_bilateral_work_free(sb_bilateral_work *b);
void sb_bilateral_clear(sb_bilateral_work *b);
int sb_bilateral_count(const sb_bilateral_work *b);
int sb_bilateral_rows(const sb_bilateral_work *b);

/* The base's motion at a soft point frame g with offset r in it, at the end
 * of the step as the LCP's velocities are: the linear velocity in g's axes
 * (vb) and the angular one (wb; may be NULL) the coordinates do not carry. */
void sb_frame_base_velocity(const sb_model *m, const sb_work *w, const sb_pose *g, const double r[3],
                            double vb[3], double wb[3]);

/* Builds the rows of e: the soft side from m, w (kinematics of the prepared
 * step) at coordinates soft_off.., the anchor's side from e->jac at
 * other_off.. (other_nv columns). 0, or -1 with a message. */
int sb_bilateral_add(sb_bilateral_work *b, const sb_bilateral *e, const sb_model *m, sb_work *w, int soft_off,
                     int other_off, int other_nv, char *error, int error_size);

/* Before the LCP: the bilateral block W_ee and its pivoted Cholesky, then
 * the contacts' Delassus W (m3 x m3; NULL: left to sb_bilateral_schur_kept)
 * and free velocity u (m3) replaced by their Schur complements. Jt: N x m3 (columns of leading dimension ld),
 * vfree: N. */
void sb_bilateral_eliminate(sb_bilateral_work *b, int N, int ld, const double *vfree, double h, double alpha,
                            sb_bilateral_apply_fn apply, void *ctx, int m3, const double *Jt, double *W, double *u);
/* Before the LCP, after stage 1: the kept contacts' Delassus W (3 nk x 3
 * nk, in the order of kept) replaced by its Schur complement, with the
 * W_ce that sb_bilateral_eliminate computed over all m3 contact rows. */
void sb_bilateral_schur_kept(sb_bilateral_work *b, int m3, int nk, const int *kept, double *W);
/* Stage 1: the whitened normals St (N x m, leading dimension N) projected
 * off the whitened constraint rows (what the contacts can still move). */
void sb_bilateral_project(sb_bilateral_work *b, int N, int ld, int m, double *St);
/* After the LCP: lambda_e from the contacts' lambda (m3, may be NULL when
 * m3 = 0), and p (N) += E^T lambda_e. */
void sb_bilateral_recover(sb_bilateral_work *b, int N, int ld, int m3, const double *lambda, double *p);
/* The constraints' impulses on soft body `body` as a world wrench about
 * point, added to wrench ([moment; force]). */
void sb_bilateral_add_wrench(const sb_bilateral_work *b, int body, const double point[3], double wrench[6]);
int sb_bilateral_get(const sb_bilateral_work *b, int k, double impulse[6], double point[3], double error[6]);
void sb_bilateral_rank(const sb_bilateral_work *b, int *rows, int *rank);

#endif

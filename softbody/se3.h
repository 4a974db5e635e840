/* SE(3)/SO(3) algebra for strain-parametrized rods.
 *
 * Conventions used everywhere in softbody/:
 * - A twist or strain is a 6-vector [angular; linear] (ω, v), body frame.
 * - A pose is sb_pose {R row-major 3x3, p}: maps body to parent coordinates.
 * - 6x6 and 6xn matrices are row-major.
 * - Every function is smooth at zero angle: closed forms switch to Taylor
 *   series below a threshold, so no 0/0 is ever evaluated. */
#ifndef SB_SE3_H
#define SB_SE3_H

typedef struct {
  double R[9];
  double p[3];
} sb_pose;

/* Identity pose. */
sb_pose sb_pose_identity(void);
/* a*b (apply b, then a). */
sb_pose sb_pose_mul(const sb_pose *a, const sb_pose *b);
/* a^-1. */
sb_pose sb_pose_inv(const sb_pose *a);
/* a^-1 * b without forming the inverse. */
sb_pose sb_pose_inv_mul(const sb_pose *a, const sb_pose *b);
/* Point in body coordinates -> parent coordinates. */
void sb_pose_apply(const sb_pose *g, const double x[3], double out[3]);

/* so(3): 3-vector <-> skew matrix. */
void sb_hat3(const double w[3], double W[9]);
void sb_vee3(const double W[9], double w[3]);
/* se(3): 6-vector <-> 4x4 row-major matrix [w^ v; 0 0]. */
void sb_hat6(const double xi[6], double X[16]);
void sb_vee6(const double X[16], double xi[6]);

/* Rodrigues exponential and its inverse (robust up to and at angle pi). */
void sb_so3_exp(const double w[3], double R[9]);
void sb_so3_log(const double R[9], double w[3]);
/* Left Jacobian of SO(3), Jl(w) = sum w^^k/(k+1)!; so exp(xi).p = Jl(w) v. */
void sb_so3_jl(const double w[3], double J[9]);

sb_pose sb_se3_exp(const double xi[6]);
void sb_se3_log(const sb_pose *g, double xi[6]);

/* Adjoint Ad_g (6x6) and its inverse Ad_{g^-1}; Ad_g maps a body twist of
 * the frame g to the parent frame. */
void sb_Ad(const sb_pose *g, double A[36]);
void sb_Ad_inv(const sb_pose *g, double A[36]);
/* Coadjoint Ad*_g = Ad_{g^-1}^T: moves a wrench from body to parent frame. */
void sb_coAd(const sb_pose *g, double A[36]);

/* ad_xi (6x6), and its action on a vector without forming it. */
void sb_ad(const double xi[6], double A[36]);
void sb_ad_apply(const double xi[6], const double x[6], double out[6]);
/* Coadjoint ad*_xi F = ad_xi^T F (the dual action on a wrench). */
void sb_coad_apply(const double xi[6], const double F[6], double out[6]);

/* Tangent operator of the exponential: T(Om) = sum (-ad_Om)^k/(k+1)!, so
 * that exp(Om)^-1 d/dt exp(Om) = T(Om) dOm/dt. */
void sb_se3_tangent(const double Om[6], double T[36]);
void sb_se3_tangent_apply(const double Om[6], const double x[6], double out[6]);
/* Directional derivative of the tangent operator: (dT(Om)[d]) x. */
void sb_se3_tangent_deriv_apply(const double Om[6], const double d[6], const double x[6],
                                double out[6]);

/* The same with the scalar coefficients computed once for a given Om, for
 * repeated use (every column of a motion subspace). */
typedef struct {
  double Om[6];
  double c[5], d[5];
} sb_tangent;
void sb_tangent_init(sb_tangent *T, const double Om[6]);
void sb_tangent_apply(const sb_tangent *T, const double x[6], double out[6]);
void sb_tangent_deriv_apply(const sb_tangent *T, const double d[6], const double x[6], double out[6]);

/* Small dense helpers used across softbody/. C = A(m x k) * B(k x n). */
void sb_matmul(int m, int k, int n, const double *A, const double *B, double *C);
/* C = A^T * B with A (k x m), B (k x n). */
void sb_matmul_tn(int m, int k, int n, const double *A, const double *B, double *C);
void sb_mat6_vec(const double A[36], const double x[6], double y[6]);
/* C = X B (6 x n, row strides ldb and ldc), C = X^T B (B and C 6 x n) and
 * B = X^T A X for an X shaped like an adjoint, [R 0; P R] with an exactly
 * zero upper-right block: the same results as the generic products above, at
 * a fraction of their cost. C must not overlap B. */
void sb_Ad_matmul(const double X[36], int n, const double *B, int ldb, double *C, int ldc);
void sb_Ad_matmul_tn(const double X[36], int n, const double *B, double *C);
void sb_Ad_congruence(const double X[36], const double A[36], double B[36]);
void sb_mat6t_vec(const double A[36], const double x[6], double y[6]);

#endif

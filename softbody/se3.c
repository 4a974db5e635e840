#include "se3.h"

#include <math.h>
#include <string.h>

#include "sb_vector.h"

/* 1/n! for n = 0..40, the correctly rounded doubles (generated with Python's
 * exact fractions); the Taylor branches below read their coefficients here. */
static const double inv_fact[41] = {
  1.0,
  1.0,
  0.5,
  0.16666666666666666,
  0.041666666666666664,
  0.008333333333333333,
  0.001388888888888889,
  0.0001984126984126984,
  2.48015873015873e-05,
  2.7557319223985893e-06,
  2.755731922398589e-07,
  2.505210838544172e-08,
  2.08767569878681e-09,
  1.6059043836821613e-10,
  1.1470745597729725e-11,
  7.647163731819816e-13,
  4.779477332387385e-14,
  2.8114572543455206e-15,
  1.5619206968586225e-16,
  8.22063524662433e-18,
  4.110317623312165e-19,
  1.9572941063391263e-20,
  8.896791392450574e-22,
  3.868170170630684e-23,
  1.6117375710961184e-24,
  6.446950284384474e-26,
  2.4795962632247976e-27,
  9.183689863795546e-29,
  3.279889237069838e-30,
  1.1309962886447716e-31,
  3.7699876288159054e-33,
  1.216125041553518e-34,
  3.8003907548547434e-36,
  1.151633562077195e-37,
  3.387157535521162e-39,
  9.67759295863189e-41,
  2.6882202662866363e-42,
  7.265460179153071e-44,
  1.911963205040282e-45,
  4.902469756513544e-47,
  1.2256174391283858e-48
};

/* Below this angle the closed forms lose digits to cancellation (the tangent
 * coefficients divide by up to theta^7), so Taylor series are used; at
 * theta = 1.2 the 16-term series is exact to rounding. */
#define SERIES_ANGLE 1.2
#define SERIES_TERMS 16

sb_pose sb_pose_identity(void) {
  sb_pose g = {{1, 0, 0, 0, 1, 0, 0, 0, 1}, {0, 0, 0}};
  return g;
}

sb_pose sb_pose_mul(const sb_pose *a, const sb_pose *b) {
  sb_pose g;
  sb_matmul(3, 3, 3, a->R, b->R, g.R);
  sb_pose_apply(a, b->p, g.p);
  return g;
}

sb_pose sb_pose_inv(const sb_pose *a) {
  sb_pose g;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) g.R[3 * i + j] = a->R[3 * j + i];
  for (int i = 0; i < 3; i++)
    g.p[i] = -(g.R[3 * i] * a->p[0] + g.R[3 * i + 1] * a->p[1] + g.R[3 * i + 2] * a->p[2]);
  return g;
}

sb_pose sb_pose_inv_mul(const sb_pose *a, const sb_pose *b) {
  sb_pose g;
  sb_matmul_tn(3, 3, 3, a->R, b->R, g.R);
  double d[3] = {b->p[0] - a->p[0], b->p[1] - a->p[1], b->p[2] - a->p[2]};
  for (int i = 0; i < 3; i++) g.p[i] = a->R[i] * d[0] + a->R[3 + i] * d[1] + a->R[6 + i] * d[2];
  return g;
}

void sb_pose_apply(const sb_pose *g, const double x[3], double out[3]) {
  double y[3];
  for (int i = 0; i < 3; i++)
    y[i] = g->R[3 * i] * x[0] + g->R[3 * i + 1] * x[1] + g->R[3 * i + 2] * x[2] + g->p[i];
  memcpy(out, y, sizeof y);
}

void sb_hat3(const double w[3], double W[9]) {
  W[0] = 0;     W[1] = -w[2]; W[2] = w[1];
  W[3] = w[2];  W[4] = 0;     W[5] = -w[0];
  W[6] = -w[1]; W[7] = w[0];  W[8] = 0;
}

void sb_vee3(const double W[9], double w[3]) {
  w[0] = 0.5 * (W[7] - W[5]);
  w[1] = 0.5 * (W[2] - W[6]);
  w[2] = 0.5 * (W[3] - W[1]);
}

void sb_hat6(const double xi[6], double X[16]) {
  double W[9];
  sb_hat3(xi, W);
  memset(X, 0, 16 * sizeof(double));
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) X[4 * i + j] = W[3 * i + j];
    X[4 * i + 3] = xi[3 + i];
  }
}

void sb_vee6(const double X[16], double xi[6]) {
  double W[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) W[3 * i + j] = X[4 * i + j];
  sb_vee3(W, xi);
  for (int i = 0; i < 3; i++) xi[3 + i] = X[4 * i + 3];
}

static void cross3(const double a[3], const double b[3], double c[3]) {
  double t[3] = {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
  memcpy(c, t, sizeof t);
}

static double dot3(const double a[3], const double b[3]) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* sum_i (-1)^i t2^i / (2i+k)!: k=1 sin(t)/t, k=2 (1-cos t)/t^2, k=3 (t-sin t)/t^3. */
static double sinc_series(double t2, int k) {
  double sum = 0, pw = 1;
  for (int i = 0; i < SERIES_TERMS && 2 * i + k <= 40; i++, pw *= -t2) sum += pw * inv_fact[2 * i + k];
  return sum;
}

/* Coefficients of R = I + a w^ + b w^^2 and Jl = I + b w^ + c w^^2. */
static void so3_coeffs(double t, double *a, double *b, double *c) {
  if (t < SERIES_ANGLE) {
    double t2 = t * t;
    *a = sinc_series(t2, 1);
    *b = sinc_series(t2, 2);
    *c = sinc_series(t2, 3);
  } else {
    double s = sin(t), co = cos(t);
    *a = s / t;
    *b = (1 - co) / (t * t);
    *c = (t - s) / (t * t * t);
  }
}

static void poly_hat(const double w[3], double c1, double c2, double M[9]) {
  double W[9], W2[9];
  sb_hat3(w, W);
  sb_matmul(3, 3, 3, W, W, W2);
  for (int i = 0; i < 9; i++) M[i] = c1 * W[i] + c2 * W2[i];
  M[0] += 1; M[4] += 1; M[8] += 1;
}

void sb_so3_exp(const double w[3], double R[9]) {
  double a, b, c;
  so3_coeffs(sqrt(dot3(w, w)), &a, &b, &c);
  poly_hat(w, a, b, R);
}

void sb_so3_jl(const double w[3], double J[9]) {
  double a, b, c;
  so3_coeffs(sqrt(dot3(w, w)), &a, &b, &c);
  poly_hat(w, b, c, J);
}

void sb_so3_log(const double R[9], double w[3]) {
  double co = 0.5 * (R[0] + R[4] + R[8] - 1);
  if (co > 1) co = 1;
  if (co < -1) co = -1;
  double u[3] = {0.5 * (R[7] - R[5]), 0.5 * (R[2] - R[6]), 0.5 * (R[3] - R[1])}; /* sin(t) n */
  double s = sqrt(dot3(u, u));
  double t = atan2(s, co);
  if (co >= 0) {
    /* t <= pi/2: u is well conditioned; t/sin(t) by series near 0. */
    double f = (s > 1e-4) ? t / s : 1 + t * t / 6 + 7 * t * t * t * t / 360;
    for (int i = 0; i < 3; i++) w[i] = f * u[i];
    return;
  }
  /* Past pi/2 read the axis off the symmetric part, (R+R^T)/2 - cos t I =
   * (1 - cos t) n n^T, which stays well conditioned up to and at pi. */
  double B[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      B[3 * i + j] = (0.5 * (R[3 * i + j] + R[3 * j + i]) - (i == j ? co : 0)) / (1 - co);
  int k = 0;
  if (B[4] > B[0]) k = 1;
  if (B[8] > B[3 * k + k]) k = 2;
  double n[3], nk = sqrt(B[3 * k + k] > 0 ? B[3 * k + k] : 0);
  for (int i = 0; i < 3; i++) n[i] = (i == k) ? nk : B[3 * k + i] / nk;
  if (dot3(n, u) < 0)
    for (int i = 0; i < 3; i++) n[i] = -n[i];
  double nn = sqrt(dot3(n, n));
  for (int i = 0; i < 3; i++) w[i] = t * n[i] / nn;
}

sb_pose sb_se3_exp(const double xi[6]) {
  sb_pose g;
  double a, b, c, Jl[9];
  so3_coeffs(sqrt(dot3(xi, xi)), &a, &b, &c);
  poly_hat(xi, a, b, g.R);
  poly_hat(xi, b, c, Jl);
  for (int i = 0; i < 3; i++) g.p[i] = dot3(Jl + 3 * i, xi + 3);
  return g;
}

void sb_se3_log(const sb_pose *g, double xi[6]) {
  sb_so3_log(g->R, xi);
  double t = sqrt(dot3(xi, xi)), e;
  /* Jl^-1 = I - w^/2 + e w^^2. */
  if (t < 0.1) {
    double t2 = t * t;
    e = 1.0 / 12 + t2 * (1.0 / 720 + t2 * (1.0 / 30240 + t2 / 1209600));
  } else {
    e = 1 / (t * t) - cos(0.5 * t) / (2 * t * sin(0.5 * t));
  }
  double Ji[9];
  poly_hat(xi, -0.5, e, Ji);
  for (int i = 0; i < 3; i++) xi[3 + i] = dot3(Ji + 3 * i, g->p);
}

void sb_Ad(const sb_pose *g, double A[36]) {
  const double *R = g->R, *p = g->p;
  for (int j = 0; j < 3; j++) {
    /* p^ R: the sums of the 3x3 product without the hat's zero terms */
    A[18 + j] = -p[2] * R[3 + j] + p[1] * R[6 + j];
    A[24 + j] = p[2] * R[j] - p[0] * R[6 + j];
    A[30 + j] = -p[1] * R[j] + p[0] * R[3 + j];
  }
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      A[6 * i + j] = R[3 * i + j];
      A[6 * i + j + 3] = 0;
      A[6 * (i + 3) + j + 3] = R[3 * i + j];
    }
}

void sb_Ad_inv(const sb_pose *g, double A[36]) {
  sb_pose gi = sb_pose_inv(g);
  sb_Ad(&gi, A);
}

void sb_coAd(const sb_pose *g, double A[36]) {
  double Ai[36];
  sb_Ad_inv(g, Ai);
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < 6; j++) A[6 * i + j] = Ai[6 * j + i];
}

void sb_ad(const double xi[6], double A[36]) {
  double W[9], V[9];
  sb_hat3(xi, W);
  sb_hat3(xi + 3, V);
  memset(A, 0, 36 * sizeof(double));
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      A[6 * i + j] = W[3 * i + j];
      A[6 * (i + 3) + j + 3] = W[3 * i + j];
      A[6 * (i + 3) + j] = V[3 * i + j];
    }
}

/* sb_ad_apply's arithmetic, inlined where it runs in a loop */
static inline void ad_apply_inline(const double xi[6], const double x[6], double out[6]) {
  double a[3], b[3], c[3];
  cross3(xi, x, a);
  cross3(xi + 3, x, b);
  cross3(xi, x + 3, c);
  out[0] = a[0]; out[1] = a[1]; out[2] = a[2];
  out[3] = b[0] + c[0]; out[4] = b[1] + c[1]; out[5] = b[2] + c[2];
}

/* not inlined into sb_tangent_deriv_apply's unrolled loops: there the
 * inlined form took more instructions (callgrind) */
__attribute__((noinline)) void sb_ad_apply(const double xi[6], const double x[6], double out[6]) {
  ad_apply_inline(xi, x, out);
}

void sb_coad_apply(const double xi[6], const double F[6], double out[6]) {
  /* ad^T F = [-w x m - v x f; -w x f]. */
  double a[3], b[3], c[3];
  cross3(xi, F, a);
  cross3(xi + 3, F + 3, b);
  cross3(xi, F + 3, c);
  for (int i = 0; i < 3; i++) {
    out[i] = -a[i] - b[i];
    out[3 + i] = -c[i];
  }
}

/* T(Om) = I + sum_{k=1..4} c_k ad^k (ad_Om satisfies ad^5 = -2 t^2 ad^3 - t^4 ad),
 * with c_k = N_k(t) / (2 t^m_k), m = 2, 3, 4, 5:
 *   N1 = t sin t + 4 cos t - 4,   N2 = 4t - 5 sin t + t cos t,
 *   N3 = t sin t + 2 cos t - 2,   N4 = 2t - 3 sin t + t cos t,
 * and d_k = c_k'(t)/t, which is smooth at t = 0. Below SERIES_ANGLE both come
 * from the Taylor coefficients of c_k in t^2, tabulated here (exact fractions
 * rounded to double, generated with Python from the series of sin and cos). */
static const double tangent_series[4][17] = {
  {-0.5, 0.0, 0.001388888888888889, -4.96031746031746e-05, 8.267195767195768e-07, -8.35070279514724e-09, 5.735372798864862e-11, -2.867686399432431e-13, 1.093344487801036e-15, -3.288254098649732e-18, 8.007112253205516e-21, -1.6117375710961184e-23, 2.7275558895472774e-26, -3.9358670844838056e-29, 4.900983917460677e-32, -5.320547056796641e-35, 5.080736303281742e-38},
  {0.16666666666666666, 0.0, -0.0001984126984126984, 5.5114638447971785e-06, -7.515632515632516e-08, 6.423617534728645e-10, -3.823581865909908e-12, 1.6868743526073125e-14, -5.75444467263703e-17, 1.565835285071301e-19, -3.4813531535676156e-22, 6.446950284384473e-25, -1.01020588501751e-27, 1.357195546373726e-30, -1.5809625540195733e-33, 1.612286986908073e-36, -1.4516389437947836e-39},
  {-0.041666666666666664, 0.002777777777777778, -7.440476190476191e-05, 1.1022927689594355e-06, -1.043837849393405e-08, 6.882447358637835e-11, -3.3456341326711696e-13, 1.249536557486898e-15, -3.6992858609809485e-18, 8.896791392450573e-21, -1.77291132820573e-23, 2.975515515869757e-26, -4.263856008190789e-29, 5.277982680342268e-32, -5.700586132282115e-35, 5.419452056833859e-38, -4.569974452687282e-41},
  {0.008333333333333333, -0.0003968253968253968, 8.267195767195768e-06, -1.0020843354176688e-07, 8.029521918410807e-10, -4.58829823909189e-12, 1.9680200780418645e-14, -6.576508197299464e-17, 1.7615646957052136e-19, -3.868170170630684e-22, 7.091645312822921e-25, -1.1020427836554655e-27, 1.4702951752382032e-30, -1.7025750581749252e-33, 1.7274503431157927e-36, -1.5484148733811025e-39, 1.2351282304560222e-42}

};

void sb_tangent_init(sb_tangent *T, const double Om[6]) {
  memcpy(T->Om, Om, sizeof T->Om);
  double t = sqrt(dot3(Om, Om));
  if (t < SERIES_ANGLE) {
    double t2 = t * t;
    for (int k = 0; k < 4; k++) {
      const double *a = tangent_series[k];
      double sc = a[SERIES_TERMS - 1], sd = 2 * SERIES_TERMS * a[SERIES_TERMS];
      for (int j = SERIES_TERMS - 2; j >= 0; j--) {
        sc = sc * t2 + a[j];
        sd = sd * t2 + 2 * (j + 1) * a[j + 1];
      }
      T->c[k + 1] = sc;
      T->d[k + 1] = sd;
    }
    return;
  }
  static const int m[5] = {0, 2, 3, 4, 5};
  double s = sin(t), co = cos(t);
  double N[5] = {0, t * s + 4 * co - 4, 4 * t - 5 * s + t * co, t * s + 2 * co - 2, 2 * t - 3 * s + t * co};
  double dN[5] = {0, t * co - 3 * s, 4 - 4 * co - t * s, t * co - s, 2 - 2 * co - t * s};
  for (int k = 1; k <= 4; k++) {
    T->c[k] = N[k] / (2 * pow(t, m[k]));
    T->d[k] = (t * dN[k] - m[k] * N[k]) / (2 * pow(t, m[k] + 2));
  }
}

void sb_tangent_apply(const sb_tangent *T, const double x[6], double out[6]) {
  double u[6], y[6];
  memcpy(u, x, sizeof u);
  memcpy(y, x, sizeof y);
  for (int k = 1; k <= 4; k++) {
    ad_apply_inline(T->Om, u, u);
    for (int i = 0; i < 6; i++) y[i] += T->c[k] * u[i];
  }
  memcpy(out, y, sizeof y);
}

void sb_tangent_deriv_apply(const sb_tangent *T, const double dv[6], const double x[6], double out[6]) {
  double u[5][6], v[4][6], y[6] = {0};
  double wd = dot3(T->Om, dv);
  memcpy(u[0], x, sizeof u[0]);
  for (int k = 1; k <= 4; k++) sb_ad_apply(T->Om, u[k - 1], u[k]);
  for (int k = 1; k <= 4; k++)
    for (int i = 0; i < 6; i++) y[i] += T->d[k] * wd * u[k][i];
  /* d(ad^k)[dv] x = sum_{j<k} ad^j ad_dv ad^(k-1-j) x; summed over k with
   * the c_k this is sum_j ad^j w_j, w_j = sum_{k>j} c_k ad_dv u_{k-1-j},
   * evaluated as w_0 + ad(w_1 + ad(w_2 + ad w_3)): 11 ad products, not 24 */
  for (int m = 0; m < 4; m++) sb_ad_apply(dv, u[m], v[m]);
  double h[6] = {0};
  for (int j = 3; j >= 0; j--) {
    if (j < 3) sb_ad_apply(T->Om, h, h);
    for (int k = j + 1; k <= 4; k++)
      for (int i = 0; i < 6; i++) h[i] += T->c[k] * v[k - 1 - j][i];
  }
  for (int i = 0; i < 6; i++) y[i] += h[i];
  memcpy(out, y, sizeof y);
}

void sb_se3_tangent_apply(const double Om[6], const double x[6], double out[6]) {
  sb_tangent T;
  sb_tangent_init(&T, Om);
  sb_tangent_apply(&T, x, out);
}

void sb_se3_tangent(const double Om[6], double Tm[36]) {
  sb_tangent T;
  sb_tangent_init(&T, Om);
  double e[6], col[6];
  for (int j = 0; j < 6; j++) {
    memset(e, 0, sizeof e);
    e[j] = 1;
    sb_tangent_apply(&T, e, col);
    for (int i = 0; i < 6; i++) Tm[6 * i + j] = col[i];
  }
}

void sb_se3_tangent_deriv_apply(const double Om[6], const double dv[6], const double x[6],
                                double out[6]) {
  sb_tangent T;
  sb_tangent_init(&T, Om);
  sb_tangent_deriv_apply(&T, dv, x, out);
}

/* The product's sums, each from +0 in the order l = 0..k-1. */
static inline void matmul_sums(int m, int k, int n, const double *A, const double *B, double *C) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      double s = 0;
      for (int l = 0; l < k; l++) s += A[i * k + l] * B[l * n + j];
      C[i * n + j] = s;
    }
}

/* The shapes the kinematics and the mass matrix ask for most (3 x 3 poses,
 * 6 x 6 inertias times a node's columns) with their sizes known to the
 * compiler, which then unrolls the sums: the same sums, the same doubles. */
void sb_matmul(int m, int k, int n, const double *A, const double *B, double *C) {
  if (m == 3 && k == 3 && n == 3)
    matmul_sums(3, 3, 3, A, B, C);
  else if (m == 6 && k == 6)
    matmul_sums(6, 6, n, A, B, C);
  else
    matmul_sums(m, k, n, A, B, C);
}

static inline void matmul_tn_sums(int m, int k, int n, const double *A, const double *B, double *C) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      double s = 0;
      for (int l = 0; l < k; l++) s += A[l * m + i] * B[l * n + j];
      C[i * n + j] = s;
    }
}

/* As sb_matmul: the relative rotations of poses, the mass matrix's cross
 * blocks between two 3-column units (one per pair of units, the matrix's
 * quadratic part) and the base's 6-row blocks with their sizes known to the
 * compiler. */
void sb_matmul_tn(int m, int k, int n, const double *A, const double *B, double *C) {
  if (m == 3 && k == 3 && n == 3)
    matmul_tn_sums(3, 3, 3, A, B, C);
  else if (m == 3 && k == 6 && n == 3)
    matmul_tn_sums(3, 6, 3, A, B, C);
  else if (m == 6 && k == 6)
    matmul_tn_sums(6, 6, n, A, B, C);
  else
    matmul_tn_sums(m, k, n, A, B, C);
}

void sb_mat6_vec(const double A[36], const double x[6], double y[6]) {
  double t[6];
  for (int i = 0; i < 6; i++) {
    double s = 0;
    for (int j = 0; j < 6; j++) s += A[6 * i + j] * x[j];
    t[i] = s;
  }
  memcpy(y, t, sizeof t);
}

void sb_mat6t_vec(const double A[36], const double x[6], double y[6]) {
  double t[6];
  for (int i = 0; i < 6; i++) {
    double s = 0;
    for (int j = 0; j < 6; j++) s += A[6 * j + i] * x[j];
    t[i] = s;
  }
  memcpy(y, t, sizeof t);
}

/* The adjoint-shaped kernels: X = [R 0; P R] has an exactly zero upper-right
 * block (sb_Ad writes it so). They form the same sums as sb_matmul and
 * sb_matmul_tn, term by term in the same order, without the zero terms, so
 * the results are the same doubles; the fixed width 6 lets the compiler
 * unroll them and vectorize over the columns. sb_Ad_matmul, whose callers
 * pass many columns, also has an AVX2 clone (four lanes; both clones compute
 * the same doubles, sb_vector.h); sb_Ad_matmul_tn's few columns run slower
 * there. Outputs must not alias inputs. */
SB_WIDE_CLONES
void sb_Ad_matmul(const double X[36], int n, const double *restrict B, int ldb, double *restrict C, int ldc) {
  const double *B0 = B, *B1 = B + ldb, *B2 = B + 2 * ldb, *B3 = B + 3 * ldb, *B4 = B + 4 * ldb, *B5 = B + 5 * ldb;
  for (int i = 0; i < 3; i++) {
    const double *x = X + 6 * i;
    double *c = C + (size_t)i * ldc;
    for (int j = 0; j < n; j++) c[j] = x[0] * B0[j] + x[1] * B1[j] + x[2] * B2[j];
  }
  for (int i = 3; i < 6; i++) {
    const double *x = X + 6 * i;
    double *c = C + (size_t)i * ldc;
    for (int j = 0; j < n; j++)
      c[j] = x[0] * B0[j] + x[1] * B1[j] + x[2] * B2[j] + x[3] * B3[j] + x[4] * B4[j] + x[5] * B5[j];
  }
}

void sb_Ad_matmul_tn(const double X[36], int n, const double *restrict B, double *restrict C) {
  const double *B0 = B, *B1 = B + n, *B2 = B + 2 * n, *B3 = B + 3 * n, *B4 = B + 4 * n, *B5 = B + 5 * n;
  for (int i = 0; i < 3; i++) {
    double x0 = X[i], x1 = X[6 + i], x2 = X[12 + i], x3 = X[18 + i], x4 = X[24 + i], x5 = X[30 + i];
    double *c = C + (size_t)i * n;
    for (int j = 0; j < n; j++)
      c[j] = x0 * B0[j] + x1 * B1[j] + x2 * B2[j] + x3 * B3[j] + x4 * B4[j] + x5 * B5[j];
  }
  for (int i = 3; i < 6; i++) {
    double x3 = X[18 + i], x4 = X[24 + i], x5 = X[30 + i];
    double *c = C + (size_t)i * n;
    for (int j = 0; j < n; j++) c[j] = x3 * B3[j] + x4 * B4[j] + x5 * B5[j];
  }
}

void sb_Ad_congruence(const double X[36], const double A[36], double B[36]) {
  double AX[36];
  for (int i = 0; i < 6; i++) {
    const double *a = A + 6 * i;
    double *c = AX + 6 * i;
    for (int j = 0; j < 3; j++)
      c[j] = a[0] * X[j] + a[1] * X[6 + j] + a[2] * X[12 + j] + a[3] * X[18 + j] + a[4] * X[24 + j] +
             a[5] * X[30 + j];
    for (int j = 3; j < 6; j++) c[j] = a[3] * X[18 + j] + a[4] * X[24 + j] + a[5] * X[30 + j];
  }
  sb_Ad_matmul_tn(X, 6, AX, B);
}

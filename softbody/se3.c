#include "se3.h"

#include <math.h>
#include <string.h>

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
  double P[9], PR[9];
  sb_hat3(g->p, P);
  sb_matmul(3, 3, 3, P, g->R, PR);
  memset(A, 0, 36 * sizeof(double));
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      A[6 * i + j] = g->R[3 * i + j];
      A[6 * (i + 3) + j + 3] = g->R[3 * i + j];
      A[6 * (i + 3) + j] = PR[3 * i + j];
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

void sb_ad_apply(const double xi[6], const double x[6], double out[6]) {
  double a[3], b[3], c[3];
  cross3(xi, x, a);
  cross3(xi + 3, x, b);
  cross3(xi, x + 3, c);
  out[0] = a[0]; out[1] = a[1]; out[2] = a[2];
  out[3] = b[0] + c[0]; out[4] = b[1] + c[1]; out[5] = b[2] + c[2];
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
 * with c_k = N_k(t) / (2 t^m_k); dk = c_k'(t)/t, smooth at t = 0. */
static double coef_sin(int e) { return (e % 2 == 1) ? (((e - 1) / 2) % 2 ? -1 : 1) * inv_fact[e] : 0; }
static double coef_cos(int e) { return (e % 2 == 0) ? ((e / 2) % 2 ? -1 : 1) * inv_fact[e] : 0; }
static double coef_tsin(int e) { return e >= 1 ? coef_sin(e - 1) : 0; }
static double coef_tcos(int e) { return e >= 1 ? coef_cos(e - 1) : 0; }

/* Taylor coefficient of t^e in N_k. */
static double coef_num(int k, int e) {
  switch (k) {
    case 1: return coef_tsin(e) + 4 * coef_cos(e) - (e == 0 ? 4 : 0);
    case 2: return (e == 1 ? 4 : 0) - 5 * coef_sin(e) + coef_tcos(e);
    case 3: return coef_tsin(e) + 2 * coef_cos(e) - (e == 0 ? 2 : 0);
    default: return (e == 1 ? 2 : 0) - 3 * coef_sin(e) + coef_tcos(e);
  }
}

static void tangent_coeffs(double t, double c[5], double d[5]) {
  static const int m[5] = {0, 2, 3, 4, 5};
  if (t < SERIES_ANGLE) {
    double t2 = t * t;
    for (int k = 1; k <= 4; k++) {
      double sc = 0, sd = 0, pw = 1;
      for (int j = 0; j < SERIES_TERMS && m[k] + 2 * j <= 40; j++) {
        double a = 0.5 * coef_num(k, m[k] + 2 * j);
        sc += a * pw;
        if (j + 1 < SERIES_TERMS && m[k] + 2 * j + 2 <= 40) sd += 2 * (j + 1) * 0.5 * coef_num(k, m[k] + 2 * j + 2) * pw;
        pw *= t2;
      }
      c[k] = sc;
      d[k] = sd;
    }
    return;
  }
  double s = sin(t), co = cos(t);
  double N[5] = {0, t * s + 4 * co - 4, 4 * t - 5 * s + t * co, t * s + 2 * co - 2, 2 * t - 3 * s + t * co};
  double dN[5] = {0, t * co - 3 * s, 4 - 4 * co - t * s, t * co - s, 2 - 2 * co - t * s};
  for (int k = 1; k <= 4; k++) {
    c[k] = N[k] / (2 * pow(t, m[k]));
    d[k] = (t * dN[k] - m[k] * N[k]) / (2 * pow(t, m[k] + 2));
  }
}

void sb_se3_tangent_apply(const double Om[6], const double x[6], double out[6]) {
  double c[5], d[5], u[6], y[6];
  tangent_coeffs(sqrt(dot3(Om, Om)), c, d);
  memcpy(u, x, sizeof u);
  memcpy(y, x, sizeof y);
  for (int k = 1; k <= 4; k++) {
    sb_ad_apply(Om, u, u);
    for (int i = 0; i < 6; i++) y[i] += c[k] * u[i];
  }
  memcpy(out, y, sizeof y);
}

void sb_se3_tangent(const double Om[6], double T[36]) {
  double e[6], col[6];
  for (int j = 0; j < 6; j++) {
    memset(e, 0, sizeof e);
    e[j] = 1;
    sb_se3_tangent_apply(Om, e, col);
    for (int i = 0; i < 6; i++) T[6 * i + j] = col[i];
  }
}

void sb_se3_tangent_deriv_apply(const double Om[6], const double dv[6], const double x[6],
                                double out[6]) {
  double c[5], d[5], u[5][6], y[6] = {0};
  tangent_coeffs(sqrt(dot3(Om, Om)), c, d);
  double wd = dot3(Om, dv);
  memcpy(u[0], x, sizeof u[0]);
  for (int k = 1; k <= 4; k++) sb_ad_apply(Om, u[k - 1], u[k]);
  for (int k = 1; k <= 4; k++) {
    for (int i = 0; i < 6; i++) y[i] += d[k] * wd * u[k][i];
    /* d(ad^k)[dv] x = sum_j ad^j ad_dv ad^(k-1-j) x */
    for (int j = 0; j < k; j++) {
      double v[6];
      sb_ad_apply(dv, u[k - 1 - j], v);
      for (int r = 0; r < j; r++) sb_ad_apply(Om, v, v);
      for (int i = 0; i < 6; i++) y[i] += c[k] * v[i];
    }
  }
  memcpy(out, y, sizeof y);
}

void sb_matmul(int m, int k, int n, const double *A, const double *B, double *C) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      double s = 0;
      for (int l = 0; l < k; l++) s += A[i * k + l] * B[l * n + j];
      C[i * n + j] = s;
    }
}

void sb_matmul_tn(int m, int k, int n, const double *A, const double *B, double *C) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      double s = 0;
      for (int l = 0; l < k; l++) s += A[l * m + i] * B[l * n + j];
      C[i * n + j] = s;
    }
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

#include "penalty.h"

#include <math.h>
#include <string.h>

void sb_penalty_force(const sb_penalty_params *p, const double normal[3], double gap, const double v_rel[3],
                      double h, double force[3], double H[9]) {
  memset(force, 0, 3 * sizeof(double));
  memset(H, 0, 9 * sizeof(double));
  if (gap >= 0) return;
  double vn = normal[0] * v_rel[0] + normal[1] * v_rel[1] + normal[2] * v_rel[2];
  double fn = p->stiffness * (-gap - h * vn) - p->damping * vn;
  if (!(fn > 0)) return;
  double vt[3], speed2 = 0;
  for (int k = 0; k < 3; k++) {
    vt[k] = v_rel[k] - vn * normal[k];
    speed2 += vt[k] * vt[k];
  }
  /* |f_t| = mu fn |vt| / s: Coulomb when sliding, viscous near rest */
  double eps = fmax(p->slip_speed, 1e-12);
  double s = sqrt(speed2 + eps * eps), mu_fn = p->friction * fn;
  double hn = h * p->stiffness + p->damping;
  for (int a = 0; a < 3; a++) {
    force[a] = fn * normal[a] - mu_fn / s * vt[a];
    for (int b = 0; b <= a; b++) {
      double nn = normal[a] * normal[b], proj = (a == b) - nn;
      H[3 * a + b] = H[3 * b + a] = hn * nn + mu_fn * (proj / s - vt[a] * vt[b] / (s * s * s));
    }
  }
}

int sb_penalty_add_implicit(const sb_model *m, sb_work *w, int seg, double s, const double r[3], int seg_b,
                            double s_b, const double r_b[3], const double H[9], double h) {
  int n = m->n;
  if (!w->has_Mt_add) memset(w->Mt_add, 0, (size_t)n * n * sizeof(double));
  /* column a of J^T: the generalized force of a unit world force e_a at the
   * point (and of -e_a at the second one) */
  memset(w->J3n, 0, 3 * (size_t)n * sizeof(double));
  for (int a = 0; a < 3; a++) {
    double f[3] = {a == 0, a == 1, a == 2};
    double mo[3] = {r[1] * f[2] - r[2] * f[1], r[2] * f[0] - r[0] * f[2], r[0] * f[1] - r[1] * f[0]};
    if (sb_add_world_wrench(m, w, seg, s, f, mo, w->J3n + (size_t)a * n)) return -1;
    if (seg_b < 0) continue;
    double fb[3] = {-f[0], -f[1], -f[2]};
    double mb[3] = {r_b[1] * fb[2] - r_b[2] * fb[1], r_b[2] * fb[0] - r_b[0] * fb[2], r_b[0] * fb[1] - r_b[1] * fb[0]};
    if (sb_add_world_wrench(m, w, seg_b, s_b, fb, mb, w->J3n + (size_t)a * n)) return -1;
  }
  w->has_Mt_add = 1;
  const double *Jt = w->J3n;
  for (int i = 0; i < n; i++) {
    double row[3]; /* (J^T H)_i */
    for (int b = 0; b < 3; b++) row[b] = Jt[i] * H[b] + Jt[n + i] * H[3 + b] + Jt[2 * n + i] * H[6 + b];
    for (int j = 0; j < n; j++)
      w->Mt_add[(size_t)i * n + j] += h * (row[0] * Jt[j] + row[1] * Jt[n + j] + row[2] * Jt[2 * n + j]);
  }
  return 0;
}

#include "penalty.h"

#include <math.h>

void sb_penalty_force(const sb_penalty_params *p, const double normal[3], double gap,
                      const double v_rel[3], double force[3]) {
  force[0] = force[1] = force[2] = 0;
  if (gap >= 0) return;
  double vn = normal[0] * v_rel[0] + normal[1] * v_rel[1] + normal[2] * v_rel[2];
  double fn = fmax(0, -p->stiffness * gap - p->damping * vn);
  double vt[3], speed2 = 0;
  for (int k = 0; k < 3; k++) {
    vt[k] = v_rel[k] - vn * normal[k];
    speed2 += vt[k] * vt[k];
  }
  /* |f_t| = mu fn |vt| / sqrt(|vt|^2 + eps^2): Coulomb when sliding, viscous near rest */
  double eps = fmax(p->slip_speed, 1e-12);
  double scale = p->friction * fn / sqrt(speed2 + eps * eps);
  for (int k = 0; k < 3; k++) force[k] = fn * normal[k] - scale * vt[k];
}

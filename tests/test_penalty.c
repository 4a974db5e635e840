/* The linearly implicit penalty force (softbody/penalty.h): F and H against
 * finite differences of the force the step ends with, H symmetric positive
 * semidefinite, nothing when separated. */
#include <string.h>

#include "penalty.h"
#include "testutil.h"

/* The end-of-step force for a relative velocity u, with the normal force of
 * the friction law held at fn (what H linearizes): the spring at the gap
 * g + h u_n, the damper on u_n, regularized Coulomb friction on u_t. */
static void end_force(const sb_penalty_params *p, const double n[3], double g, double h, double fn, const double u[3],
                      double f[3]) {
  double un = n[0] * u[0] + n[1] * u[1] + n[2] * u[2], ut[3], s2 = 0;
  for (int k = 0; k < 3; k++) {
    ut[k] = u[k] - un * n[k];
    s2 += ut[k] * ut[k];
  }
  double fn_end = p->stiffness * (-g - h * un) - p->damping * un;
  double s = sqrt(s2 + p->slip_speed * p->slip_speed);
  for (int k = 0; k < 3; k++) f[k] = fn_end * n[k] - p->friction * fn / s * ut[k];
}

int main(void) {
  const sb_penalty_params p = {1e4, 50, 0.7, 1e-3};
  const double h = 1e-3;
  double worst_f = 0, worst_h = 0, worst_sym = 0, min_quad = INFINITY;
  for (int trial = 0; trial < 200; trial++) {
    double n[3] = {tu_rand(), tu_rand(), tu_rand()}, nn = 0;
    for (int k = 0; k < 3; k++) nn += n[k] * n[k];
    for (int k = 0; k < 3; k++) n[k] /= sqrt(nn);
    double g = -1e-3 * (0.05 + fabs(tu_rand())), v[3];
    /* slip speeds around the regularization's, approach and separation slow enough to stay in contact */
    for (int k = 0; k < 3; k++) v[k] = 3e-3 * tu_rand();
    double F[9], H[9];
    sb_penalty_force(&p, n, g, v, h, F, H);
    double fn = F[0] * n[0] + F[1] * n[1] + F[2] * n[2];
    if (fn <= 0) continue;
    double f0[3];
    end_force(&p, n, g, h, fn, v, f0);
    for (int k = 0; k < 3; k++) worst_f = fmax(worst_f, fabs(F[k] - f0[k]) / fabs(fn));
    for (int b = 0; b < 3; b++) {
      const double d = 1e-7;
      double up[3], um[3], fp[3], fm[3];
      memcpy(up, v, sizeof up);
      memcpy(um, v, sizeof um);
      up[b] += d;
      um[b] -= d;
      end_force(&p, n, g, h, fn, up, fp);
      end_force(&p, n, g, h, fn, um, fm);
      double scale = p.stiffness * h + p.damping + p.friction * fn / p.slip_speed;
      for (int a = 0; a < 3; a++) worst_h = fmax(worst_h, fabs(H[3 * a + b] + (fp[a] - fm[a]) / (2 * d)) / scale);
    }
    for (int a = 0; a < 3; a++)
      for (int b = 0; b < 3; b++) worst_sym = fmax(worst_sym, fabs(H[3 * a + b] - H[3 * b + a]));
    for (int r = 0; r < 10; r++) {
      double x[3] = {tu_rand(), tu_rand(), tu_rand()}, q = 0;
      for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) q += x[a] * H[3 * a + b] * x[b];
      min_quad = fmin(min_quad, q);
    }
  }
  printf("penalty: F vs the end-of-step force %.3g (of fn), H vs its finite differences %.3g, asymmetry %.3g, "
         "min x'Hx %.3g\n", worst_f, worst_h, worst_sym, min_quad);
  EXPECT(worst_f < 1e-12, "F is not the force at the step's end gap (%.3g)", worst_f);
  EXPECT(worst_h < 1e-6, "H is not minus the end force's velocity gradient (%.3g)", worst_h);
  EXPECT(worst_sym == 0 && min_quad >= 0, "H not symmetric positive semidefinite (%.3g, %.3g)", worst_sym, min_quad);

  /* separated, or separating within the step: no force, no implicit term */
  const double n[3] = {0, 0, 1}, still[3] = {0, 0, 0}, leaving[3] = {0, 0, 1};
  double F[9], H[9];
  sb_penalty_force(&p, n, 1e-4, still, h, F, H);
  EXPECT(tu_maxabs(F, 3) == 0 && tu_maxabs(H, 9) == 0, "a separated contact pushes");
  sb_penalty_force(&p, n, -1e-5, leaving, h, F, H);
  EXPECT(tu_maxabs(F, 3) == 0 && tu_maxabs(H, 9) == 0, "a contact leaving within the step pulls or pushes");
  /* at rest the force is the spring's, k times the depth */
  sb_penalty_force(&p, n, -2e-4, still, h, F, H);
  EXPECT(fabs(F[2] - 2) < 1e-12 && F[0] == 0 && F[1] == 0, "at rest, depth 0.2 mm: force %g N, k d = 2 N", F[2]);
  return test_report("penalty");
}

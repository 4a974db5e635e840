/* The CUSP arm (PCC in actuator space): hanging under gravity it settles, at
 * h = 2 ms, to the analytic equilibrium of a straight arm, each chamber of
 * section i carrying a third of the weight below its mid-length:
 *   K dl = g (m_i / 2 + sum_{k>i} m_k) / 3,
 * with a static force residual <= 1e-8. Swung from a bent pose it stays
 * bounded at h = 2 ms. (Known limit: c(q, v) is explicit in the step, so a
 * violent undamped swing, ~0.5 m/s chamber rates, gains energy and diverges
 * at h = 2 ms; the paper's damping removes it.) */
#include <string.h>

#include "chain.h"
#include "presets.h"
#include "testutil.h"

int main(void) {
  char err[256];
  sb_cusp_arm arm;
  sb_preset_cusp_arm(&arm);
  sb_model *m = sb_model_create(&arm.chain, err, sizeof err);
  EXPECT(m != NULL, "arm: %s", err);
  if (!m) return test_report("pcc");
  sb_state *s = sb_state_create(m);
  sb_work *w = sb_work_create(m);
  int n = m->n;
  EXPECT(n == 9, "CUSP arm has 9 chamber coordinates (got %d)", n);

  double h = 2e-3, vmax = 0;
  int steps = (int)(15.0 / h), ok = 1;
  for (int k = 0; k < steps && ok; k++) {
    ok = sb_step(m, s, w, NULL, h, NULL, NULL, err, sizeof err) == 0;
    for (int i = 0; i < n; i++) vmax = fmax(vmax, fabs(s->v[i]));
  }
  EXPECT(ok, "hanging arm step failed: %s", err);
  double *r = calloc(n, sizeof(double));
  sb_static_residual(m, w, s->q, NULL, NULL, 0, r);
  double res = tu_maxabs(r, n);
  printf("hanging arm after 15 s at h = 2 ms: force residual %.3e N, |v| %.3e, peak |v| %.3e\n", res,
         tu_maxabs(s->v, n), vmax);
  EXPECT(res <= 1e-8, "equilibrium force residual %.3g > 1e-8", res);

  double g = 9.81, K = 265, mass[3] = {1.17, 0.54, 0.265};
  for (int sec = 0; sec < 3; sec++) {
    double below = 0.5 * mass[sec];
    for (int k = sec + 1; k < 3; k++) below += mass[k];
    double expect = g * below / (3 * K);
    for (int j = 0; j < 3; j++) {
      double got = s->q[3 * sec + j];
      EXPECT(fabs(got - expect) <= 1e-9 * expect, "section %d chamber %d elongation %.12f, analytic %.12f", sec, j, got, expect);
    }
    printf("section %d: elongation %.9f m (analytic %.9f m)\n", sec + 1, s->q[3 * sec], expect);
  }

  /* Swing from a bent pose with chamber rates of 0.1 m/s, h = 2 ms: damped,
   * the energy never grows; undamped, it stays within 10 %. */
  for (int damped = 0; damped <= 1; damped++) {
    sb_cusp_arm a2;
    sb_preset_cusp_arm(&a2);
    if (!damped)
      for (int i = 0; i < 3; i++) a2.seg[i].chamber_damping = 0;
    sb_model *m2 = sb_model_create(&a2.chain, err, sizeof err);
    sb_state *s2 = sb_state_create(m2);
    sb_work *w2 = sb_work_create(m2);
    for (int i = 0; i < 9; i++) { s2->q[i] = 0.03 * ((i % 3) - 1); s2->v[i] = 0.1 * ((i % 2) ? 1 : -1); }
    double T, V, E, E0, Emax;
    sb_kinematics(m2, w2, s2->q, s2->v);
    sb_energy(m2, w2, &T, &V, &E);
    E0 = Emax = T + V + E;
    int fine = 1;
    for (int k = 0; k < 5000 && fine; k++) {
      fine = sb_step(m2, s2, w2, NULL, 2e-3, NULL, NULL, err, sizeof err) == 0;
      sb_kinematics(m2, w2, s2->q, s2->v);
      sb_energy(m2, w2, &T, &V, &E);
      Emax = fmax(Emax, T + V + E);
    }
    EXPECT(fine, "swing (%s) failed: %s", damped ? "damped" : "undamped", err);
    EXPECT(Emax <= E0 * (damped ? 1 + 1e-12 : 1.1), "swing (%s): energy grew from %g to %g", damped ? "damped" : "undamped", E0, Emax);
    printf("swing %s, 10 s at h = 2 ms: energy %.4f -> %.4f J (max %.4f)\n", damped ? "damped" : "undamped", E0, T + V + E, Emax);
    sb_work_free(w2); sb_state_free(s2); sb_model_free(m2);
  }

  free(r);
  sb_work_free(w);
  sb_state_free(s);
  sb_model_free(m);
  return test_report("pcc");
}

/* The normal row's gap term (softbody/contact.c gap_term) with the surface
 * layer L (sb_contact_options.surface_layer) and the push-out cap
 * (.push_speed): a point mass falling onto a plane for one step, its
 * velocity after the contact solve against the velocity the rule gives,
 * worked out here from the gap alone:
 *   - a gap g >= 0 closes within the step: v_n = -g / h where it lands;
 *   - a penetration within the layer is left where it is: v_n = 0;
 *   - a deeper one is pushed out at alpha of its excess: v_n = alpha (-g - L) / h;
 *   - with L = 0, the paper's alpha |g| / h from zero depth;
 *   - never faster than push_speed (a deep one: v_n = push_speed);
 *   - a gap too wide to close stays unloaded, in free fall.
 * The point slides along the plane too, so the tangential rows are solved
 * with it (a moving contact, friction below mu fn: it sticks), and the
 * options' layer is checked for bad values. */
#include <math.h>
#include <string.h>

#include "contact.h"
#include "testutil.h"

#define H 1e-3
#define G_ACC 9.81
#define MASS 0.3
#define LAYER 1e-4
#define ALPHA 0.2

/* The point's velocity after one contact solve at gap g with layer L and
 * push-out cap push; -1 on a failed solve. */
static int solve_at(double g, double layer, double push, const double vfree[3], double v[3], char *err, int size) {
  sb_contact_problem *P = sb_contact_create(1, 1, 3, 4, err, size);
  if (!P) return -1;
  double M[9] = {MASS, 0, 0, 0, MASS, 0, 0, 0, MASS};
  int D = sb_contact_add_dense(P, 3, M, vfree, err, size);
  static const double jac[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  sb_contact c;
  memset(&c, 0, sizeof c);
  c.side[0].body = D;
  c.side[0].jac = jac;
  c.side[1].body = -1;
  c.normal[2] = 1;
  c.gap = g;
  c.friction = 0.5;
  c.id = -1;
  int rc = D < 0 ? -1 : sb_contact_add(P, &c, err, size);
  sb_contact_options o = sb_contact_default_options();
  o.stabilization = ALPHA;
  o.surface_layer = layer;
  o.push_speed = push;
  sb_contact_info info;
  if (rc >= 0) rc = sb_contact_solve(P, H, &o, &info, err, size);
  if (rc >= 0 && info.lcp.status != SB_LCP_SOLVED) {
    snprintf(err, size, "status %d: %s", (int)info.lcp.status, info.lcp.message);
    rc = -1;
  }
  if (rc >= 0) sb_contact_body_velocity(P, D, v);
  sb_contact_free(P);
  return rc < 0 ? -1 : 0;
}

static void test_gap_terms(void) {
  const double vfree[3] = {2e-3, -1e-3, -G_ACC * H}; /* a slide the friction can stop */
  const double fast = 0.5; /* m/s: a push-out cap below alpha of a centimetre a step */
  struct {
    double g, layer, push, vn; /* gap, layer, push-out cap, the expected normal velocity after the step */
    int loaded;
    const char *what;
  } cases[] = {
      {0.2 * G_ACC * H * H, LAYER, fast, -0.2 * G_ACC * H, 1, "a gap closing within the step lands on the plane"},
      {2.0 * G_ACC * H * H, LAYER, fast, -G_ACC * H, 0, "a gap wider than the step's fall stays free"},
      {0, LAYER, fast, 0, 1, "at zero depth the point rests"},
      {-0.5 * LAYER, LAYER, fast, 0, 1, "within the layer the point rests"},
      {-LAYER, LAYER, fast, 0, 1, "at the layer's depth the point rests"},
      {-3 * LAYER, LAYER, fast, ALPHA * 2 * LAYER / H, 1, "deeper, alpha of the excess is pushed out"},
      {-0.5 * LAYER, 0, fast, ALPHA * 0.5 * LAYER / H, 1, "without a layer, alpha of the depth (the paper's)"},
      {-0.01, 0, fast, fast, 1, "a centimetre deep, pushed out at the cap, not at alpha 1 cm / h = 2 m/s"},
      {-0.01, LAYER, INFINITY, ALPHA * (0.01 - LAYER) / H, 1, "a centimetre deep, no cap: alpha of it a step"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    double v[3];
    char err[256] = "";
    int rc = solve_at(cases[k].g, cases[k].layer, cases[k].push, vfree, v, err, sizeof err);
    EXPECT(rc == 0, "%s: %s", cases[k].what, err);
    if (rc) continue;
    EXPECT(fabs(v[2] - cases[k].vn) <= 1e-9 * fmax(G_ACC * H, fabs(cases[k].vn)), "%s: v_n %.12g, expected %.12g",
           cases[k].what, v[2], cases[k].vn);
    /* loaded: sticking (the friction the slide needs, MASS |v_t| / h, is below mu fn) */
    double vt = hypot(v[0], v[1]), vt_free = hypot(vfree[0], vfree[1]);
    if (cases[k].loaded)
      EXPECT(vt <= 1e-9 * vt_free, "%s: slides at %.3g m/s, sticking expected", cases[k].what, vt);
    else
      EXPECT(fabs(vt - vt_free) <= 1e-12, "%s: unloaded, yet its slide changed to %.3g m/s", cases[k].what, vt);
  }
}

static void test_bad_options(void) {
  const double vfree[3] = {0, 0, -G_ACC * H};
  const double bad_layer[] = {-1e-9, NAN, INFINITY}, bad_push[] = {0, -1, NAN};
  for (size_t k = 0; k < sizeof bad_layer / sizeof bad_layer[0]; k++) {
    double v[3];
    char err[256] = "";
    EXPECT(solve_at(-1e-6, bad_layer[k], 1, vfree, v, err, sizeof err) < 0 && strstr(err, "surface_layer"),
           "surface_layer %g: \"%s\" does not refuse it by name", bad_layer[k], err);
  }
  for (size_t k = 0; k < sizeof bad_push / sizeof bad_push[0]; k++) {
    double v[3];
    char err[256] = "";
    EXPECT(solve_at(-1e-6, 0, bad_push[k], vfree, v, err, sizeof err) < 0 && strstr(err, "push_speed"),
           "push_speed %g: \"%s\" does not refuse it by name", bad_push[k], err);
  }
}

int main(void) {
  test_gap_terms();
  test_bad_options();
  return test_report("gap_term");
}

/* Bad parameters are refused with a message naming what is wrong; a step
 * with bad input leaves the state untouched. */
#include <string.h>

#include "chain.h"
#include "presets.h"
#include "testutil.h"

typedef void (*mutate_fn)(sb_cusp_arm *a, sb_disk_params *d);

static void zero_length(sb_cusp_arm *a, sb_disk_params *d) { (void)d; a->seg[1].length = 0; }
static void neg_mass(sb_cusp_arm *a, sb_disk_params *d) { (void)d; a->seg[0].mass = -1; }
static void nan_stiff(sb_cusp_arm *a, sb_disk_params *d) { (void)d; a->seg[2].chamber_stiffness = NAN; }
static void inf_damp(sb_cusp_arm *a, sb_disk_params *d) { (void)d; a->seg[2].chamber_damping = INFINITY; }
static void zero_chamber(sb_cusp_arm *a, sb_disk_params *d) { (void)d; a->seg[0].chamber_radius = 0; }
static void bad_slices(sb_cusp_arm *a, sb_disk_params *d) { (void)d; a->seg[0].slices = 0; }
static void bad_rotation(sb_cusp_arm *a, sb_disk_params *d) { (void)d; a->seg[1].placement.R[0] = 2; }
static void mirror(sb_cusp_arm *a, sb_disk_params *d) { (void)d; a->seg[1].placement.R[0] = -1; }
static void nan_base(sb_cusp_arm *a, sb_disk_params *d) { (void)d; a->chain.base.p[1] = NAN; }
static void nan_gravity(sb_cusp_arm *a, sb_disk_params *d) { (void)d; a->chain.gravity[0] = NAN; }
static void no_segments(sb_cusp_arm *a, sb_disk_params *d) { (void)d; a->chain.nseg = 0; }
static void disk_outside(sb_cusp_arm *a, sb_disk_params *d) { d->s = 0.2; a->chain.ndisk = 1; a->chain.disk = d; }
static void disk_segment(sb_cusp_arm *a, sb_disk_params *d) { d->segment = 7; a->chain.ndisk = 1; a->chain.disk = d; }
static void disk_mass(sb_cusp_arm *a, sb_disk_params *d) { d->mass = -0.1; a->chain.ndisk = 1; a->chain.disk = d; }
static void cosserat_young(sb_cusp_arm *a, sb_disk_params *d) {
  (void)d;
  a->seg[1] = sb_segment_default(SB_SEG_PCS);
  a->seg[1].young = 0;
}
static void cosserat_mask(sb_cusp_arm *a, sb_disk_params *d) {
  (void)d;
  a->seg[1] = sb_segment_default(SB_SEG_PCS);
  a->seg[1].strains = 64;
}
static void pls_elements(sb_cusp_arm *a, sb_disk_params *d) {
  (void)d;
  a->seg[1] = sb_segment_default(SB_SEG_PLS);
  a->seg[1].elements = 0;
}
static void zero_axis(sb_cusp_arm *a, sb_disk_params *d) {
  (void)d;
  a->seg[1] = sb_segment_default(SB_SEG_REVOLUTE);
  a->seg[1].axis[0] = 0;
}
static void bad_inertia(sb_cusp_arm *a, sb_disk_params *d) {
  (void)d;
  a->seg[1] = sb_segment_default(SB_SEG_REVOLUTE);
  a->seg[1].link_mass = 1;
  a->seg[1].link_inertia[0] = 1; a->seg[1].link_inertia[1] = 1; a->seg[1].link_inertia[2] = -1;
}
static void only_fixed(sb_cusp_arm *a, sb_disk_params *d) {
  (void)d;
  a->chain.nseg = 1;
  a->seg[0] = sb_segment_default(SB_SEG_FIXED);
}

int main(void) {
  struct { const char *name; mutate_fn f; const char *must_mention; } cases[] = {
    {"zero length", zero_length, "segment 1 (pcc): length"},
    {"negative mass", neg_mass, "segment 0 (pcc): mass"},
    {"NaN stiffness", nan_stiff, "chamber_stiffness"},
    {"Inf damping", inf_damp, "chamber_damping"},
    {"zero chamber radius", zero_chamber, "chamber_radius"},
    {"zero slices", bad_slices, "slices"},
    {"non-orthonormal placement", bad_rotation, "segment 1 (pcc): placement"},
    {"reflection placement", mirror, "placement"},
    {"NaN base", nan_base, "base pose"},
    {"NaN gravity", nan_gravity, "gravity"},
    {"no segments", no_segments, "at least one segment"},
    {"disk outside segment", disk_outside, "disk 0: s = 0.2"},
    {"disk on missing segment", disk_segment, "disk 0: segment 7"},
    {"disk negative mass", disk_mass, "disk 0: mass"},
    {"zero Young modulus", cosserat_young, "segment 1 (pcs): young"},
    {"bad strain mask", cosserat_mask, "strains"},
    {"PLS without elements", pls_elements, "elements"},
    {"zero joint axis", zero_axis, "axis"},
    {"indefinite link inertia", bad_inertia, "link_inertia"},
    {"no coordinates", only_fixed, "no generalized coordinates"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    sb_cusp_arm a;
    sb_preset_cusp_arm(&a);
    sb_disk_params d = {0, 0.05, 0.01, 0.03, 0.005};
    cases[i].f(&a, &d);
    char err[256] = "";
    sb_model *m = sb_model_create(&a.chain, err, sizeof err);
    EXPECT(m == NULL, "%s: accepted", cases[i].name);
    EXPECT(strstr(err, cases[i].must_mention) != NULL, "%s: message \"%s\" does not mention \"%s\"", cases[i].name, err, cases[i].must_mention);
    sb_model_free(m);
  }
  EXPECT(sb_model_create(NULL, NULL, 0) == NULL, "NULL parameters are refused without a buffer");

  /* Bad step input: error, state untouched. */
  sb_cusp_arm a;
  sb_preset_cusp_arm(&a);
  char err[256];
  sb_model *m = sb_model_create(&a.chain, err, sizeof err);
  sb_state *s = sb_state_create(m);
  sb_work *w = sb_work_create(m);
  double tau[9] = {0};
  s->q[0] = 0.01;
  tau[3] = NAN;
  EXPECT(sb_step(m, s, w, tau, 1e-3, NULL, NULL, err, sizeof err) != 0 && strstr(err, "tau[3]"), "NaN tau refused: %s", err);
  EXPECT(s->q[0] == 0.01 && s->t == 0, "state untouched after refused step");
  tau[3] = 0;
  EXPECT(sb_step(m, s, w, tau, 0, NULL, NULL, err, sizeof err) != 0 && strstr(err, "time step"), "zero h refused: %s", err);
  EXPECT(sb_step(m, s, w, tau, -1e-3, NULL, NULL, err, sizeof err) != 0, "negative h refused");
  EXPECT(sb_step_commit(m, s, w, NULL, err, sizeof err) != 0 && strstr(err, "without"), "commit without prepare refused: %s", err);
  /* Finite input whose forces overflow: refused, state untouched. */
  s->v[4] = 1e200;
  EXPECT(sb_step(m, s, w, NULL, 1e-3, NULL, NULL, err, sizeof err) != 0 && strstr(err, "not finite"), "overflowing velocity refused: %s", err);
  EXPECT(s->q[0] == 0.01 && s->v[4] == 1e200 && s->t == 0, "state untouched after overflow");
  s->v[4] = 0;
  double p[6];
  EXPECT(sb_point_kinematics(m, w, 5, 0, NULL, NULL, p, NULL) == -1, "bad segment in point query");
  EXPECT(sb_point_kinematics(m, w, 0, 0.3, NULL, NULL, p, NULL) == -1, "s beyond the segment in point query");
  sb_work_free(w);
  sb_state_free(s);
  sb_model_free(m);
  return test_report("validation");
}

/* The step loop allocates nothing: malloc/calloc/realloc from cusp's own
 * code are counted (linker --wrap) across many steps of the CUSP arm and of
 * a chain with every segment type, including point Jacobian queries. */
#include <stddef.h>
#include <string.h>

#include "chain.h"
#include "contact.h"
#include "contact_scenes.h"
#include "presets.h"
#include "testutil.h"
#include "zoo.h"

#include "alloc_count.h"

static void run(const sb_chain_params *cp, const char *name) {
  char err[256];
  sb_model *m = sb_model_create(cp, err, sizeof err);
  EXPECT(m != NULL, "%s: %s", name, err);
  if (!m) return;
  sb_state *s = sb_state_create(m);
  sb_work *w = sb_work_create(m);
  double *J = calloc(6 * m->n, sizeof(double));
  long before = allocs;
  int ok = 1;
  for (int k = 0; k < 500 && ok; k++) {
    ok = sb_step(m, s, w, NULL, 1e-3, NULL, NULL, err, sizeof err) == 0;
    sb_pose g;
    double eta[6], dJv[6];
    sb_kinematics(m, w, s->q, s->v);
    sb_point_kinematics(m, w, m->nseg - 1, 0, &g, J, eta, dJv);
  }
  EXPECT(ok, "%s: step failed: %s", name, err);
  EXPECT(allocs == before, "%s: %ld allocations in 500 steps", name, allocs - before);
  free(J);
  sb_work_free(w);
  sb_state_free(s);
  sb_model_free(m);
}

/* The contact step: prepare, fill the problem, solve (all three solvers
 * through the chain), commit. */
static void run_contact(void) {
  char err[256];
  scene_rod rod;
  scene_rod_params(&rod, 4, 4, 2);
  sb_model *m = sb_model_create(&rod.chain, err, sizeof err);
  sb_state *s = sb_state_create(m);
  sb_work *w = sb_work_create(m);
  int nc = rod.chain.ndisk * rod.per_disk;
  sb_contact_problem *P = sb_contact_create(nc, 1, m->n, 4, err, sizeof err);
  sb_contact_options o = sb_contact_default_options();
  long before = allocs;
  int ok = 1;
  for (int k = 0; k < 50 && ok; k++) {
    o.lcp.chain[0] = (sb_lcp_solver)(k % 3);
    ok = sb_step_prepare(m, s, w, NULL, 1e-3, err, sizeof err) == 0;
    sb_contact_clear(P);
    ok = ok && scene_rod_fill(P, &rod, m, w, 0.5, err, sizeof err) == 0;
    ok = ok && sb_contact_solve(P, 1e-3, &o, NULL, err, sizeof err) == 0;
    ok = ok && sb_step_commit(m, s, w, sb_contact_body_impulse(P, 0), err, sizeof err) == 0;
  }
  EXPECT(ok, "contact step failed: %s", err);
  EXPECT(allocs == before, "contact: %ld allocations in 50 steps", allocs - before);
  sb_contact_free(P);
  sb_work_free(w);
  sb_state_free(s);
  sb_model_free(m);
}

int main(void) {
  sb_cusp_arm arm;
  sb_preset_cusp_arm(&arm);
  run(&arm.chain, "cusp arm");
  zoo_chain z;
  zoo_build(&z, 1);
  run(&z.chain, "zoo");
  run_contact();
  EXPECT(allocs > 0, "the allocation counter sees cusp's allocations (%ld)", allocs);
  return test_report("noalloc");
}

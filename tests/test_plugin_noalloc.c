/* mj_step with soft instances attached allocates nothing in cusp's code:
 * malloc/calloc/realloc from cusp's own objects are counted (linker --wrap)
 * across steps of coupled scenes (soft-rigid with the touched bodies' other
 * contacts, penalty contact, the viewer's read calls). MuJoCo's own calls go
 * through its shared library and are not counted: mj_step uses its arena. */
#include <stddef.h>
#include <stdlib.h>

#include "cusp.h"
#include "testutil.h"

#define SCENE(name) CUSP_SOURCE_DIR "/tests/data/scenes/" name

#include "alloc_count.h"

static void run(const char *path, const cusp_override *ov, int nov, double T, const char *name) {
  char err[512] = "";
  mjModel *m = cusp_load_with(path, ov, nov, err, sizeof err);
  EXPECT(m != NULL, "%s: %s", name, err);
  if (!m) return;
  mjData *d = mj_makeData(m);
  long at_attach = allocs;
  EXPECT(cusp_attach(m, d, err, sizeof err) == 0, "%s: attach: %s", name, err);
  EXPECT(allocs > at_attach, "%s: the counter sees attach's allocations", name);
  long before = allocs, contact_steps = 0;
  while (d->time < T) {
    mj_step(m, d);
    const cusp_contact_report *c;
    contact_steps += cusp_contacts(d, &c) > 0;
    double p[3], q[4];
    for (int i = 0; i < cusp_instance_count(m); i++) {
      cusp_tip_pose(d, i, p, q);
      cusp_backbone_point(d, i, 0.5 * cusp_total_length(d, i), p, NULL);
    }
    const double *M, *b;
    cusp_lcp(d, &M, &b);
    (void)cusp_report(d);
  }
  mj_forward(m, d); /* a paused viewer */
  EXPECT(contact_steps > 0, "%s: the run has contacts", name);
  EXPECT(allocs == before, "%s: %ld allocations in %ld steps", name, allocs - before, (long)(T / m->opt.timestep));
  cusp_detach(d);
  mj_deleteData(d);
  cusp_delete_model(m);
}

int main(void) {
  run(SCENE("coupling_push.xml"), NULL, 0, 1.6, "push (lcp, touched body's floor contact)");
  run(SCENE("coupling_fall.xml"), NULL, 0, 1.0, "fall (lcp)");
  cusp_override pen = {"arm", "contact", "penalty"};
  run(SCENE("coupling_fall.xml"), &pen, 1, 1.0, "fall (penalty)");
  run(SCENE("coupling_squeeze.xml"), NULL, 0, 0.5, "squeeze");
  return test_report("plugin_noalloc");
}

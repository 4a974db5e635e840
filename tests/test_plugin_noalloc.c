/* mj_step with soft instances allocates nothing in cusp's code: the
 * malloc/calloc/realloc calls made from libcusp.so are counted
 * (tests/cusp_alloc_count.h) across steps of coupled scenes (soft-rigid with
 * the touched bodies' other contacts, penalty contact, the viewer's read
 * calls). MuJoCo's own calls are not counted: mj_step uses its arena. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdlib.h>

#include "cusp_alloc_count.h"

#include "cusp.h"
#include "testutil.h"

#define SCENE(name) CUSP_SOURCE_DIR "/tests/data/scenes/" name

static void run(const char *path, const cusp_override *ov, int nov, double T, const char *name) {
  char err[512] = "";
  mjModel *m = cusp_load_with(path, ov, nov, err, sizeof err);
  EXPECT(m != NULL, "%s: %s", name, err);
  if (!m) return;
  long at_init = allocs;
  mjData *d = mj_makeData(m); /* the plugin's init builds the arms */
  EXPECT(d != NULL && cusp_report(m, d) != NULL, "%s: mj_makeData: %s", name, cusp_last_error());
  if (!d) {
    mj_deleteModel(m);
    return;
  }
  EXPECT(allocs > at_init, "%s: the counter sees init's allocations", name);
  long before = allocs, contact_steps = 0;
  while (d->time < T) {
    mj_step(m, d);
    const cusp_contact_report *c;
    contact_steps += cusp_contacts(m, d, &c) > 0;
    double p[3], q[4];
    for (int i = 0; i < cusp_instance_count(m); i++) {
      cusp_tip_pose(m, d, i, p, q);
      cusp_backbone_point(m, d, i, 0.5 * cusp_total_length(m, i), p, NULL);
    }
    const double *M, *b;
    cusp_lcp(m, d, &M, &b);
    (void)cusp_report(m, d);
  }
  mj_forward(m, d); /* a paused viewer */
  EXPECT(contact_steps > 0, "%s: the run has contacts", name);
  EXPECT(allocs == before, "%s: %ld allocations in %ld steps", name, allocs - before, (long)(T / m->opt.timestep));
  mj_deleteData(d);
  mj_deleteModel(m);
}

int main(void) {
  EXPECT(alloc_count_start() > 0, "libcusp.so's code found in the process");
  run(SCENE("coupling_push.xml"), NULL, 0, 1.6, "push (lcp, touched body's floor contact)");
  run(SCENE("coupling_fall.xml"), NULL, 0, 1.0, "fall (lcp)");
  cusp_override pen = {"arm", "contact", "penalty"};
  run(SCENE("coupling_fall.xml"), &pen, 1, 1.0, "fall (penalty)");
  run(SCENE("coupling_squeeze.xml"), NULL, 0, 0.5, "squeeze");
  run(SCENE("rigid_damping.xml"), NULL, 0, 0.5, "damped pendulum on the base disk (M + h D factored)");
  /* held ends: clamped to the world with a ball on the rod, pinned, clamped to a free block */
  run(CUSP_SOURCE_DIR "/mjcf/demo_clamped_rod.xml", NULL, 0, 0.6, "end clamp (ball on the rod)");
  cusp_override pin = {"rod", "end", "pin"};
  run(CUSP_SOURCE_DIR "/mjcf/demo_clamped_rod.xml", &pin, 1, 0.6, "end pin (ball on the rod)");
  run(SCENE("ends_block.xml"), NULL, 0, 0.3, "end clamp to a free block");
  /* held points (key hold): interior pins and clamps beside the held end, and one to the free block */
  cusp_override holds = {"rod", "hold", "0.2 pin; 0.45 clamp; 0.45 pin"};
  run(CUSP_SOURCE_DIR "/mjcf/demo_clamped_rod.xml", &holds, 1, 0.6, "holds (ball on the rod)");
  cusp_override block_hold = {"rod", "hold", "0.15 pin block"};
  run(SCENE("ends_block.xml"), &block_hold, 1, 0.3, "hold to a free block");
  cusp_override sap = {"arm", "contact", "sap"}, ncp = {"arm", "contact", "ncp"};
  run(SCENE("coupling_push.xml"), &sap, 1, 1.6, "push (sap, touched body's floor contact)");
  run(SCENE("coupling_push.xml"), &ncp, 1, 1.6, "push (ncp, touched body's floor contact)");
  run(SCENE("coupling_fall.xml"), &sap, 1, 1.0, "fall (sap)");
  run(SCENE("coupling_fall.xml"), &ncp, 1, 1.0, "fall (ncp)");
  /* a rod started from a centerline, with a tip load and a tip moment (issue 16) */
  cusp_override moment = {"rod", "tip_torque", "0 0.01 0.002"};
  run(CUSP_SOURCE_DIR "/mjcf/demo_rod_cantilever.xml", &moment, 1, 0.3, "bent cantilever (tip_force, tip_torque)");
  return test_report("plugin_noalloc");
}

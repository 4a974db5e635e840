/* The contact workspaces' capacity (key contact_capacity, docs/memory.md):
 *   - sized for the contacts a step holds and, in the LCP, for every contact
 *     or (large workspaces) for the contacts rank selection keeps (at most
 *     the dofs), a scene steps bit for bit alike, with no allocation, whether
 *     the capacity is the default (8 per disk) or lowered to just above what
 *     the run touches, and whether the LCP is sized by the dofs or for every
 *     contact (the two runs side by side in this process: files written by
 *     an earlier library would tie the test to one machine's BLAS kernels);
 *   - a step that finds more contacts than the capacity solves what fits and
 *     says so: MuJoCo's mjWARN_CONTACTFULL (lastinfo: the contacts found) and
 *     the report's message naming the key and the counts, the count found
 *     being what the uncapped run finds at that step;
 *   - the LCP's kept capacity holds when stage 1 would keep more than the
 *     dofs (a rope with 30 dofs and more loaded contacts than that);
 *   - a live switch that turns rank selection off is refused when the LCP
 *     was sized for it, and the core refuses a kept set above its capacity
 *     with both counts. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cusp_alloc_count.h"

#include "contact.h"
#include "contact_scenes.h"
#include "cusp.h"
#include "runtime.h"
#include "testutil.h"

void openblas_set_num_threads(int num_threads); /* OpenBLAS: the runs compared must take the same kernels */

#define SRC(path) CUSP_SOURCE_DIR "/" path
#define ROPE SRC("tests/data/scenes/capacity_rope_pile.xml")
#define LOWER_STEPS 250 /* the rope's clamp descends for this many steps (the scene's comment) */

static mjModel *load_with(const char *path, const cusp_override *ov, int nov) {
  char err[1024] = "";
  mjModel *m = cusp_load_with(path, ov, nov, err, sizeof err);
  EXPECT(m != NULL, "load %s: %s", path, err);
  return m;
}

static mjData *make(const mjModel *m) {
  mjData *d = mj_makeData(m);
  EXPECT(d != NULL && cusp_report(m, d) != NULL, "mj_makeData: %s", cusp_last_error());
  return d;
}

/* One step; the rope's clamp lowered as the scene's comment says. */
static void step(const mjModel *m, mjData *d, int k, int lower, double z0) {
  if (lower && k < LOWER_STEPS) d->mocap_pos[2] = z0 - 0.4 * (k + 1) * m->opt.timestep;
  mj_step(m, d);
}

/* One run of the scene: loaded with the overrides, the LCP's sizing
 * checked (kept_below: sized below the contacts, by the dofs (1), or for all
 * of them (0)). */
static mjData *start_run(const char *what, const char *scene, const cusp_override *ov, int nov, int kept_below,
                         mjModel **model) {
  mjModel *m = load_with(scene, ov, nov);
  mjData *d = m ? make(m) : NULL;
  *model = d ? m : NULL;
  if (!d) {
    if (m) mj_deleteModel(m);
    return NULL;
  }
  int kept, capacity = cusp_runtime_contact_capacity(cusp_runtime_of(m, d), &kept);
  EXPECT((kept < capacity) == kept_below, "%s: the LCP is sized %s (%d kept of %d)", what,
         kept_below ? "below the contacts, by the dofs" : "for every contact", kept, capacity);
  return d;
}

/* The scene run twice side by side, with the overrides a and with b: every
 * step's state (qpos, qvel, plugin_state) the same bit for bit, no
 * allocation from libcusp.so in the steps, no contact dropped. */
static void same_runs(const char *what, const char *scene, const cusp_override *ova, int nova, int kept_below_a,
                      const cusp_override *ovb, int novb, int kept_below_b, int steps, int lower) {
  mjModel *m[2];
  mjData *d[2];
  d[0] = start_run(what, scene, ova, nova, kept_below_a, &m[0]);
  d[1] = start_run(what, scene, ovb, novb, kept_below_b, &m[1]);
  if (d[0] && d[1]) {
    double z0 = lower ? d[0]->mocap_pos[2] : 0;
    int max_contacts = 0, first_step = -1;
    long before = allocs;
    for (int k = 0; k < steps; k++) {
      for (int r = 0; r < 2; r++) step(m[r], d[r], k, lower, z0);
      const cusp_step_report *rep = cusp_report(m[0], d[0]);
      if (rep->ncontact > max_contacts) max_contacts = rep->ncontact;
      if (first_step < 0 && (memcmp(d[0]->qpos, d[1]->qpos, sizeof(double) * m[0]->nq) ||
                             memcmp(d[0]->qvel, d[1]->qvel, sizeof(double) * m[0]->nv) ||
                             memcmp(d[0]->plugin_state, d[1]->plugin_state, sizeof(double) * m[0]->npluginstate)))
        first_step = k;
    }
    EXPECT(allocs == before, "%s: %ld allocations in %d steps", what, allocs - before, 2 * steps);
    EXPECT(max_contacts > 0, "%s: the run has contacts", what);
    for (int r = 0; r < 2; r++)
      EXPECT(d[r]->warning[mjWARN_CONTACTFULL].number == 0, "%s: run %d: no contact dropped", what, r);
    EXPECT(first_step < 0, "%s: the two runs part at step %d", what, first_step);
    printf("# %s: %d steps, up to %d contacts: the same bits, no allocation\n", what, steps, max_contacts);
  }
  for (int r = 0; r < 2; r++)
    if (d[r]) {
      mj_deleteData(d[r]);
      mj_deleteModel(m[r]);
    }
}

/* The rope with a capacity of 10 beside the rope uncapped, in lockstep: up to
 * the first step that finds more than 10 both are the same; that step keeps
 * 10, says so with the uncapped run's count, and counts mjWARN_CONTACTFULL. */
static void exceeding(void) {
  cusp_override cap = {"rope", "contact_capacity", "10"};
  mjModel *m = load_with(ROPE, NULL, 0), *mc = load_with(ROPE, &cap, 1);
  mjData *d = m ? make(m) : NULL, *dc = mc ? make(mc) : NULL;
  if (!d || !dc) goto done;
  double z0 = d->mocap_pos[2];
  int dropped_at = -1;
  long before = allocs;
  for (int k = 0; k < 300 && dropped_at < 0; k++) {
    step(m, d, k, 1, z0);
    step(mc, dc, k, 1, z0);
    if (dc->warning[mjWARN_CONTACTFULL].number) dropped_at = k;
  }
  EXPECT(allocs == before, "capacity 10: no allocation in the steps that drop contacts (%ld)", allocs - before);
  EXPECT(dropped_at >= 0, "capacity 10: the rope finds more than 10 contacts within 300 steps");
  if (dropped_at < 0) goto done;
  const cusp_step_report *full = cusp_report(m, d), *capped = cusp_report(mc, dc);
  int found = -1, hold = -1, dropped = -1;
  EXPECT(strstr(capped->message, "contact_capacity exceeded") && strstr(capped->message, "\"rope\" 10") &&
             sscanf(capped->message, "contact_capacity exceeded at t = %*g s: %d contacts found, the workspaces "
                    "hold %d; %d dropped", &found, &hold, &dropped) == 3,
         "capacity 10: the report names the key, the instance's value and the counts: %s", capped->message);
  EXPECT(hold == 10 && found == full->ncontact && dropped == found - hold && found > hold,
         "capacity 10 at step %d: %d found (uncapped: %d), %d held, %d dropped", dropped_at, found, full->ncontact, hold,
         dropped);
  EXPECT(capped->ncontact == 10, "capacity 10: the step solved the 10 that fit (%d)", capped->ncontact);
  EXPECT(dc->warning[mjWARN_CONTACTFULL].lastinfo == full->ncontact,
         "mjWARN_CONTACTFULL's lastinfo is the contacts found (%d, uncapped %d)", dc->warning[mjWARN_CONTACTFULL].lastinfo,
         full->ncontact);
  for (int i = 0; i < mc->npluginstate; i++)
    if (!isfinite(dc->plugin_state[i])) {
      EXPECT(0, "capacity 10: plugin state %d is not finite", i);
      break;
    }
  printf("# capacity 10: step %d found %d contacts, kept 10: %s\n", dropped_at, found, capped->message);
done:
  if (d) mj_deleteData(d);
  if (dc) mj_deleteData(dc);
  if (m) mj_deleteModel(m);
  if (mc) mj_deleteModel(mc);
}

/* The rope with 3 strains per section (30 dofs) and 101 thin disks: 808
 * contacts of 6 variables would take beyond CUSP_CONTACT_WORKSPACE_FULL, so
 * the LCP holds 30. The heap touches up to about 500 contacts, and stage 1's
 * forced and union passes would keep more than 30 (the library before kept
 * up to 96 here); the step keeps within it, solves every step, allocates
 * nothing, and no disk sinks as deep as its radius (5 mm; the library
 * before: 4.0 mm, at the rope's end). */
static void kept_capacity_holds(void) {
  cusp_override ov[3] = {{"rope", "strains", "kx ky ez"}, {"rope", "disks", "9"}, {"rope", "disk_thickness", "0.003000001"}};
  mjModel *m = load_with(ROPE, ov, 3);
  mjData *d = m ? make(m) : NULL;
  if (!d) {
    if (m) mj_deleteModel(m);
    return;
  }
  int kept, capacity = cusp_runtime_contact_capacity(cusp_runtime_of(m, d), &kept);
  EXPECT(kept == 30, "30 dofs: the LCP holds 30 contacts (%d, of %d)", kept, capacity);
  double z0 = d->mocap_pos[2];
  long before = allocs;
  int most = 0, above_dofs = 0, unsolved = 0, finite = 1;
  double deepest = 0;
  for (int k = 0; k < 300; k++) {
    step(m, d, k, 1, z0);
    const cusp_step_report *rep = cusp_report(m, d);
    most = rep->info.nkept > most ? rep->info.nkept : most;
    above_dofs += rep->ncontact > 30;
    unsolved += !rep->solved;
    deepest = fmax(deepest, rep->max_penetration);
  }
  for (int i = 0; i < m->npluginstate; i++) finite &= isfinite(d->plugin_state[i]) != 0;
  EXPECT(allocs == before, "30 dofs: %ld allocations", allocs - before);
  EXPECT(above_dofs > 0, "30 dofs: steps with more contacts than dofs (%d)", above_dofs);
  EXPECT(most <= kept, "30 dofs: at most %d kept (%d)", kept, most);
  EXPECT(unsolved == 0 && finite, "30 dofs: every step solved (%d not), the state finite", unsolved);
  EXPECT(deepest < 0.005, "30 dofs: no disk sinks as deep as its radius (%.4g m)", deepest);
  printf("# 30 dofs: %d steps with more contacts than dofs, up to %d kept, deepest %.4g m\n", above_dofs, most, deepest);
  mj_deleteData(d);
  mj_deleteModel(m);
}

/* Rank selection off keeps every contact: refused live when the LCP was
 * sized by the dofs, allowed when it holds every contact (small
 * workspaces, or loaded without qr). */
static void live_switch(void) {
  char err[1024] = "";
  mjModel *m = load_with(SRC("mjcf/default.xml"), NULL, 0);
  mjData *d = m ? make(m) : NULL;
  if (d) {
    EXPECT(cusp_set(m, d, 0, "conditioning", "ruiz tikhonov", err, sizeof err) == 0,
           "default.xml: conditioning without qr live: %s", err);
    mj_deleteData(d);
  }
  if (m) mj_deleteModel(m);
  cusp_override p16[2] = {{"rope", "pyramid", "16"}, {"rope", "conditioning", "ruiz tikhonov"}};
  m = load_with(ROPE, p16, 1);
  d = m ? make(m) : NULL;
  if (d) {
    int kept, capacity = cusp_runtime_contact_capacity(cusp_runtime_of(m, d), &kept);
    char counts[96];
    snprintf(counts, sizeof counts, "up to %d, but its workspaces were sized at load for the %d", capacity, kept);
    EXPECT(cusp_set(m, d, 0, "conditioning", "ruiz tikhonov", err, sizeof err) != 0 && strstr(err, "qr") &&
               strstr(err, "conditioning") && strstr(err, counts),
           "pyramid 16: conditioning without qr refused live with the counts: %s", err);
    EXPECT(cusp_set(m, d, 0, "conditioning", "qr ruiz", err, sizeof err) == 0, "with qr accepted: %s", err);
    mj_deleteData(d);
  }
  if (m) mj_deleteModel(m);
  m = load_with(ROPE, p16, 2);
  d = m ? make(m) : NULL;
  if (d) {
    int kept, capacity = cusp_runtime_contact_capacity(cusp_runtime_of(m, d), &kept);
    EXPECT(kept == capacity, "loaded without qr: the LCP holds every contact (%d of %d)", kept, capacity);
    EXPECT(cusp_set(m, d, 0, "conditioning", "none", err, sizeof err) == 0, "loaded without qr: switch: %s", err);
    mj_deleteData(d);
  }
  if (m) mj_deleteModel(m);
}

/* The core: a kept capacity outside 1..contacts is refused; rank selection
 * off with more contacts than the LCP holds fails naming both counts. */
static void core_capacity(void) {
  char err[256] = "";
  EXPECT(sb_contact_create_kept(4, 5, 1, 6, 4, err, sizeof err) == NULL && strstr(err, "kept 5"),
         "kept above contacts refused: %s", err);
  EXPECT(sb_contact_create_kept(4, 0, 1, 6, 4, err, sizeof err) == NULL, "kept 0 refused");
  sb_contact_problem *P = sb_contact_create_kept(3, 1, 1, 6, 4, err, sizeof err);
  EXPECT(P != NULL, "create: %s", err);
  if (!P) return;
  double M[36], vf[6] = {0, 0, -1, 0, 0, 0}, jac[18];
  unit_mass(M);
  sb_contact_add_dense(P, 6, M, vf, err, sizeof err);
  sb_contact c = unit_point_contact(jac, 0, 0.5);
  sb_contact_add(P, &c, err, sizeof err);
  c.normal[0] = 1; /* a second, independent normal */
  c.normal[2] = 0;
  sb_contact_add(P, &c, err, sizeof err);
  sb_contact_options o = sb_contact_default_options();
  o.rank_selection = 0;
  sb_contact_info info;
  EXPECT(sb_contact_solve(P, 0.01, &o, &info, err, sizeof err) < 0 && strstr(err, "kept 2 of 2") &&
             strstr(err, "the 1 the LCP"),
         "rank selection off, 2 contacts, room for 1: refused with both counts: %s", err);
  sb_contact_free(P);
}

int main(void) {
  openblas_set_num_threads(1);
  EXPECT(alloc_count_start() > 0, "libcusp.so's code found in the process");
  /* small workspaces: the LCP holds every contact, whatever the capacity */
  cusp_override low = {"arm", "contact_capacity", "40"};
  same_runs("default.xml, contact_capacity default and 40", SRC("mjcf/default.xml"), NULL, 0, 0, &low, 1, 0, 300, 0);
  cusp_override push_low = {"arm", "contact_capacity", "40"};
  same_runs("demo_push_box.xml, contact_capacity default and 40", SRC("mjcf/demo_push_box.xml"), NULL, 0, 0,
            &push_low, 1, 0, 300, 0);
  cusp_override rope_low = {"rope", "contact_capacity", "70"};
  same_runs("rope pile, contact_capacity default and 70", ROPE, NULL, 0, 0, &rope_low, 1, 0, 300, 1);
  /* pyramid 16: 248 contacts of 18 variables would take beyond CUSP_CONTACT_WORKSPACE_FULL, so the
   * LCP holds the 60 dofs' worth; lowered to 70 contacts, every contact: the same bits */
  cusp_override p16[2] = {{"rope", "pyramid", "16"}, {"rope", "contact_capacity", "70"}};
  same_runs("rope pile, pyramid=16, LCP by the dofs and for every contact", ROPE, p16, 1, 1, p16, 2, 0, 300, 1);
  exceeding();
  kept_capacity_holds();
  live_switch();
  core_capacity();
  return test_report("contact_capacity");
}

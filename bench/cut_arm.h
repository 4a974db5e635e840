/* Scenario A's arm cut into n sections (issue 15's long arms), shared by the
 * benchmarks (bench/eval.c scaling, bench/bench_contact.c) and the tests
 * (tests/test_contact_scaling.c): the 0.45 m, 1.975 kg CUSP arm in n
 * sections of equal length and mass, chamber stiffness and damping scaled by
 * n/3 (springs in series: the same arm as a whole), the same pre-elongation
 * strain, and the distal two thirds of the sections ramped to 40 N from 1 to
 * 2 s. As cusp.softbody keys of one instance. */
#ifndef CUSP_CUT_ARM_H
#define CUSP_CUT_ARM_H

#include <stdio.h>
#include <string.h>

#define CUT_ARM_NKEYS 8
#define CUT_ARM_VALUE_LEN 1024 /* the schedule of 24 sections */

typedef struct {
  char key[32], value[CUT_ARM_VALUE_LEN];
} cut_arm_key;

/* The arm's CUT_ARM_NKEYS keys into o; actuated 0: no schedule ("none": it
 * also replaces a scene's schedule, which names the coordinates of 3
 * sections). Returns the count. */
static inline int cut_arm_keys(int n, int actuated, cut_arm_key *o) {
  int k = 0;
  snprintf(o[k].key, 32, "sections");
  snprintf(o[k++].value, CUT_ARM_VALUE_LEN, "%d", n);
  snprintf(o[k].key, 32, "length");
  snprintf(o[k++].value, CUT_ARM_VALUE_LEN, "%.10g", 0.45 / n);
  snprintf(o[k].key, 32, "mass");
  snprintf(o[k++].value, CUT_ARM_VALUE_LEN, "%.10g", 1.975 / n);
  snprintf(o[k].key, 32, "stiffness");
  snprintf(o[k++].value, CUT_ARM_VALUE_LEN, "%.10g", 265.0 * n / 3);
  snprintf(o[k].key, 32, "damping");
  snprintf(o[k++].value, CUT_ARM_VALUE_LEN, "%.10g", 125.0 * n / 3);
  char init[CUT_ARM_VALUE_LEN] = "", act[CUT_ARM_VALUE_LEN] = "", sched[CUT_ARM_VALUE_LEN] = "";
  for (int i = 0; i < 3 * n; i++) {
    size_t l = strlen(init);
    snprintf(init + l, sizeof init - l, "%s%.10g", i ? " " : "", 0.06 / n);
  }
  for (int s = 1; s <= n; s++) {
    if (3 * s <= n) continue; /* proximal third unactuated */
    for (int c = 1; c <= 3; c++) {
      size_t l = strlen(act);
      snprintf(act + l, sizeof act - l, "%ss%dc%d", act[0] ? " " : "", s, c);
      l = strlen(sched);
      snprintf(sched + l, sizeof sched - l, "%ss%dc%d 1 0 2 40", sched[0] ? "; " : "", s, c);
    }
  }
  snprintf(o[k].key, 32, "initial");
  snprintf(o[k++].value, CUT_ARM_VALUE_LEN, "%s", init);
  snprintf(o[k].key, 32, "schedule");
  snprintf(o[k++].value, CUT_ARM_VALUE_LEN, "%s", actuated && sched[0] ? sched : "none");
  snprintf(o[k].key, 32, "actuated");
  snprintf(o[k++].value, CUT_ARM_VALUE_LEN, "%s", act);
  return k;
}

#endif

/* MuJoCo-side checks shared by the apps that step scenes. */
#ifndef CUSP_MJ_STATE_H
#define CUSP_MJ_STATE_H

#include <math.h>
#include <mujoco/mujoco.h>

/* qpos, qvel and qacc hold finite numbers (MuJoCo's own warnings catch only
 * some blow-ups). */
static inline int state_finite(const mjModel *m, const mjData *d) {
  for (int i = 0; i < m->nq; i++)
    if (!isfinite(d->qpos[i])) return 0;
  for (int i = 0; i < m->nv; i++)
    if (!isfinite(d->qvel[i]) || !isfinite(d->qacc[i])) return 0;
  return 1;
}

#endif

/* Narrow phase for soft disks through MuJoCo's own collision table. */
#ifndef CUSP_COLLIDE_H
#define CUSP_COLLIDE_H

#include <mujoco/mujoco.h>

/* The broad phase of one pair: 0 only when geoms a and b are certainly
 * farther apart than margin (so MuJoCo's function would find nothing): their
 * bounding spheres (geom_rbound) do not meet, or the bounding sphere of one
 * does not reach the other's plane (half-space) or box. */
int cusp_may_touch(const mjModel *m, const mjData *d, int a, int b, double margin);

/* Contacts between geom a and geom b with MuJoCo's mjCOLLISIONFUNC, in the
 * order (a, b): normal from a to b, dist < 0 penetrating, whatever order the
 * table needs. Reads d->geom_xpos/xmat of both. Returns the count (<= max)
 * or 0 when the pair has no function or cusp_may_touch says it cannot touch. */
int cusp_collide_pair(const mjModel *m, mjData *d, int a, int b, double margin, mjPreContact *out, int max);

#endif

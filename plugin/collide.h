/* Narrow phase for soft disks through MuJoCo's own collision table. */
#ifndef CUSP_COLLIDE_H
#define CUSP_COLLIDE_H

#include <mujoco/mujoco.h>

/* Contacts between geom a and geom b with MuJoCo's mjCOLLISIONFUNC, in the
 * order (a, b): normal from a to b, dist < 0 penetrating, whatever order the
 * table needs. Reads d->geom_xpos/xmat of both. Returns the count (<= max)
 * or 0 when the pair has no function or the bounding spheres are farther
 * apart than margin. */
int cusp_collide_pair(const mjModel *m, mjData *d, int a, int b, double margin, mjPreContact *out, int max);

#endif

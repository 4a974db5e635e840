/* Narrow phase for soft disks through MuJoCo's own collision table. */
#ifndef CUSP_COLLIDE_H
#define CUSP_COLLIDE_H

#include <mujoco/mujoco.h>

/* The broad phase of one pair: 0 only when geoms a and b are certainly
 * farther apart than margin (so MuJoCo's function would find nothing): their
 * bounding spheres (geom_rbound) do not meet, or the bounding sphere of one
 * does not reach the other's plane (half-space) or box. */
int cusp_may_touch(const mjModel *m, const mjData *d, int a, int b, double margin);

/* A cylinder (a soft disk) against a box in closed form, where the box's face
 * is certainly the nearest feature: the cylinder's centre outside the face,
 * its shadow inside the face with a clearance at least its penetration. Then
 * the contacts are exact: the deepest rim point, or, as MuJoCo's multi-contact
 * gives them (within its 5.1 degree tolerances), the lowest point of both
 * caps when the cylinder rests on its rim and four rim points of the lower cap
 * when it lies flat; each point with its own distance, all of them when the
 * deepest is below margin.
 * MuJoCo's order and convention (normal from the cylinder to the box, pos
 * midway). Returns the count (<= 4), or -1 where the closed form does not
 * apply (the caller then uses MuJoCo's general function). */
int cusp_cylinder_box_face(const mjModel *m, const mjData *d, int cyl, int box, double margin, mjPreContact *out);

/* Two boxes touching face to face, in closed form: the reference face is the
 * face axis along which the boxes overlap least, the other box's face
 * nearest against it must lie flat on it (within MuJoCo's 5.1 degree flat
 * tolerance), no edge-edge axis off that plane may separate them farther,
 * and the two faces' shadows along its normal must overlap. Then the contacts are the corners of the incident face clipped to the
 * reference face (at most 8), each with its own distance along the
 * reference normal, those below margin. The point set changes continuously
 * with the pose: MuJoCo's box-box function gives one corner instead of four
 * for a box resting on another tilted by 1e-4 rad (its edge-edge test wins by
 * a second-order margin), and a compliant contact model sees its support
 * jump. MuJoCo's convention (normal from g1 to g2, pos midway). Returns the
 * count, or -1 where the closed form does not apply. */
int cusp_box_box_face(const mjModel *m, const mjData *d, int g1, int g2, double margin, mjPreContact *out);

/* Contacts between geom a and geom b with MuJoCo's mjCOLLISIONFUNC, in the
 * order (a, b): normal from a to b, dist < 0 penetrating, whatever order the
 * table needs. Reads d->geom_xpos/xmat of both. Returns the count (<= max)
 * or 0 when the pair has no function or cusp_may_touch says it cannot touch. */
int cusp_collide_pair(const mjModel *m, mjData *d, int a, int b, double margin, mjPreContact *out, int max);

#endif

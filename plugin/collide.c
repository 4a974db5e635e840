#include "collide.h"

#include <math.h>

/* Distance from point x to geom g's solid when g is a plane (signed, to its
 * infinite half-space, as MuJoCo's plane functions treat it) or a box (0
 * inside); -1 when g is neither. */
static double distance_to_plane_or_box(const mjModel *m, const mjData *d, int g, const double x[3]) {
  const mjtNum *p = d->geom_xpos + 3 * g, *R = d->geom_xmat + 9 * g, *size = m->geom_size + 3 * g;
  double r[3] = {x[0] - p[0], x[1] - p[1], x[2] - p[2]}, local[3];
  for (int k = 0; k < 3; k++) local[k] = R[k] * r[0] + R[3 + k] * r[1] + R[6 + k] * r[2];
  if (m->geom_type[g] == mjGEOM_PLANE) return local[2];
  if (m->geom_type[g] != mjGEOM_BOX) return -1;
  double s = 0;
  for (int k = 0; k < 3; k++) {
    double e = fabs(local[k]) - size[k];
    if (e > 0) s += e * e;
  }
  return sqrt(s);
}

int cusp_may_touch(const mjModel *m, const mjData *d, int a, int b, double margin) {
  int ta = m->geom_type[a], tb = m->geom_type[b];
  if (ta != mjGEOM_PLANE && tb != mjGEOM_PLANE) {
    double dx = d->geom_xpos[3 * a] - d->geom_xpos[3 * b];
    double dy = d->geom_xpos[3 * a + 1] - d->geom_xpos[3 * b + 1];
    double dz = d->geom_xpos[3 * a + 2] - d->geom_xpos[3 * b + 2];
    double reach = m->geom_rbound[a] + m->geom_rbound[b] + margin;
    if (dx * dx + dy * dy + dz * dz > reach * reach) return 0;
  }
  /* the bounding sphere of one against the exact plane or box of the other
   * (a box's bounding sphere reaches far past its faces) */
  for (int side = 0; side < 2; side++) {
    int g = side ? a : b, o = side ? b : a;
    int tg = m->geom_type[g], to = m->geom_type[o];
    if ((tg != mjGEOM_PLANE && tg != mjGEOM_BOX) || to == mjGEOM_PLANE) continue;
    if (distance_to_plane_or_box(m, d, g, d->geom_xpos + 3 * o) > m->geom_rbound[o] + margin) return 0;
  }
  return 1;
}

int cusp_collide_pair(const mjModel *m, mjData *d, int a, int b, double margin, mjPreContact *out, int max) {
  if (!cusp_may_touch(m, d, a, b, margin)) return 0;
  int swap = m->geom_type[a] > m->geom_type[b];
  int g1 = swap ? b : a, g2 = swap ? a : b;
  mjfCollision fn = mjCOLLISIONFUNC[m->geom_type[g1]][m->geom_type[g2]];
  if (!fn) return 0;
  mjPreContact buf[mjMAXCONPAIR];
  int n = fn(m, d, buf, g1, g2, margin);
  if (n > max) n = max;
  for (int i = 0; i < n; i++) {
    out[i] = buf[i];
    if (swap)
      for (int k = 0; k < 3; k++) {
        out[i].normal[k] = -buf[i].normal[k];
        out[i].tangent[k] = -buf[i].tangent[k];
      }
  }
  return n;
}

#include "collide.h"

int cusp_collide_pair(const mjModel *m, mjData *d, int a, int b, double margin, mjPreContact *out, int max) {
  int ta = m->geom_type[a], tb = m->geom_type[b];
  /* planes have rbound 0 and are infinite: no sphere test for them */
  if (ta != mjGEOM_PLANE && tb != mjGEOM_PLANE) {
    double dx = d->geom_xpos[3 * a] - d->geom_xpos[3 * b];
    double dy = d->geom_xpos[3 * a + 1] - d->geom_xpos[3 * b + 1];
    double dz = d->geom_xpos[3 * a + 2] - d->geom_xpos[3 * b + 2];
    double reach = m->geom_rbound[a] + m->geom_rbound[b] + margin;
    if (dx * dx + dy * dy + dz * dz > reach * reach) return 0;
  }
  int swap = ta > tb;
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

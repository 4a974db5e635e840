#include "collide.h"

#include <math.h>

int cusp_collide_pair(const mjModel *m, const mjData *d, int a, int b, double margin,
                      mjContact *out, int max) {
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
  mjContact buf[mjMAXCONPAIR];
  int n = fn(m, d, buf, g1, g2, margin);
  if (n > max) n = max;
  for (int i = 0; i < n; i++) {
    out[i] = buf[i];
    out[i].geom1 = a;
    out[i].geom2 = b;
    if (swap)
      for (int k = 0; k < 3; k++) out[i].frame[k] = -buf[i].frame[k];
  }
  return n;
}

/* A disk rim on a face is a line contact, but the convex (MPR) functions
 * return one point, which then wanders along the line from step to step and
 * rocks whatever rests there. Tilting geom a by a small angle about the two
 * tangent axes makes the support point jump to the ends of the flat feature;
 * the distinct points found are added (Bullet's perturbation method). */
int cusp_collide_pair_multi(const mjModel *m, mjData *d, int a, int b, double margin,
                            mjContact *out, int max) {
  int n = cusp_collide_pair(m, d, a, b, margin, out, max);
  int ta = m->geom_type[a], tb = m->geom_type[b];
  if (n != 1 || ta == mjGEOM_PLANE || tb == mjGEOM_PLANE || ta == mjGEOM_SPHERE || tb == mjGEOM_SPHERE)
    return n;
  const double angle = 2e-3;
  double R0[9], axis[2][3], sep = 0.05 * fmin(m->geom_rbound[a], m->geom_rbound[b]);
  for (int k = 0; k < 9; k++) R0[k] = d->geom_xmat[9 * a + k];
  for (int k = 0; k < 3; k++) {
    axis[0][k] = out[0].frame[3 + k];
    axis[1][k] = out[0].frame[6 + k];
  }
  mjContact extra;
  for (int t = 0; t < 4 && n < max; t++) {
    double q[4], rot[9], sgn = t & 1 ? -1 : 1;
    mju_axisAngle2Quat(q, axis[t >> 1], sgn * angle);
    mju_quat2Mat(rot, q);
    mju_mulMatMat(d->geom_xmat + 9 * a, rot, R0, 3, 3, 3);
    int got = cusp_collide_pair(m, d, a, b, margin, &extra, 1);
    if (got == 1) {
      int fresh = 1;
      for (int i = 0; i < n && fresh; i++)
        fresh = mju_dist3(out[i].pos, extra.pos) > sep;
      if (fresh) {
        /* keep the unperturbed normal: the tilt only picked the point */
        for (int k = 0; k < 9; k++) extra.frame[k] = out[0].frame[k];
        out[n++] = extra;
      }
    }
  }
  for (int k = 0; k < 9; k++) d->geom_xmat[9 * a + k] = R0[k];
  return n;
}

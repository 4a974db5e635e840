/* A chain with every segment type, lumped disks and non-trivial placements,
 * shared by the kinematics and dynamics tests. */
#ifndef CUSP_ZOO_H
#define CUSP_ZOO_H

#include "chain.h"

static inline sb_pose zoo_pose(double rx, double ry, double rz, double x, double y, double z) {
  double w[3] = {rx, ry, rz};
  sb_pose g;
  sb_so3_exp(w, g.R);
  g.p[0] = x; g.p[1] = y; g.p[2] = z;
  return g;
}

typedef struct {
  sb_segment_params seg[7];
  sb_disk_params disk[4];
  sb_chain_params chain;
} zoo_chain;

static inline void zoo_build(zoo_chain *z, int with_rigid) {
  int k = 0;
  sb_segment_params *s = z->seg;
  s[k] = sb_segment_default(SB_SEG_PCS);
  s[k].length = 0.2; s[k].radius = 0.02; s[k].young = 2e5; s[k].viscosity = 50; s[k].slices = 4;
  k++;
  if (with_rigid) {
    s[k] = sb_segment_default(SB_SEG_REVOLUTE);
    s[k].placement = zoo_pose(0.3, -0.2, 0.1, 0.01, 0.0, 0.02);
    s[k].axis[0] = 0.2; s[k].axis[1] = 1; s[k].axis[2] = 0.1;
    s[k].link_mass = 0.3; s[k].link_com[2] = 0.04; s[k].link_com[0] = 0.01;
    s[k].link_inertia[0] = 2e-4; s[k].link_inertia[1] = 3e-4; s[k].link_inertia[2] = 1e-4; s[k].link_inertia[3] = 1e-5;
    s[k].joint_stiffness = 2; s[k].joint_damping = 0.1;
    k++;
  }
  s[k] = sb_segment_default(SB_SEG_PLS);
  s[k].length = 0.25; s[k].radius = 0.015; s[k].young = 5e5; s[k].elements = 3; s[k].slices = 3;
  s[k].strains = SB_KX | SB_KY | SB_EZ;
  if (with_rigid) s[k].placement = zoo_pose(0, 0, 0.4, 0, 0, 0.08);
  k++;
  s[k] = sb_segment_default(SB_SEG_PCC);
  s[k].length = 0.15; s[k].mass = 0.5; s[k].radius = 0.025; s[k].chamber_radius = 0.015; s[k].slices = 4;
  k++;
  if (with_rigid) {
    s[k] = sb_segment_default(SB_SEG_PRISMATIC);
    s[k].axis[0] = 1; s[k].axis[2] = 0.5;
    s[k].link_mass = 0.1; s[k].link_com[1] = 0.02;
    s[k].link_inertia[0] = 1e-5; s[k].link_inertia[1] = 1e-5; s[k].link_inertia[2] = 1e-5;
    s[k].joint_stiffness = 50;
    k++;
    s[k] = sb_segment_default(SB_SEG_FIXED);
    s[k].placement = zoo_pose(-0.5, 0.2, 0, 0, 0.01, 0.03);
    s[k].link_mass = 0.05; s[k].link_com[2] = 0.01;
    s[k].link_inertia[0] = 1e-6; s[k].link_inertia[1] = 1e-6; s[k].link_inertia[2] = 1e-6;
    k++;
  }
  s[k] = sb_segment_default(SB_SEG_PCS);
  s[k].length = 0.1; s[k].radius = 0.01; s[k].young = 1e6; s[k].strains = SB_STRAIN_BENDING; s[k].slices = 3;
  k++;
  z->chain.nseg = k;
  z->chain.seg = z->seg;
  z->disk[0] = (sb_disk_params){0, 0.05, 0.02, 0.03, 0.005};
  z->disk[1] = (sb_disk_params){with_rigid ? 2 : 1, 0.0, 0.02, 0.03, 0.005};
  z->disk[2] = (sb_disk_params){with_rigid ? 2 : 1, 0.25, 0.02, 0.03, 0.005};
  z->disk[3] = (sb_disk_params){with_rigid ? 3 : 2, 0.07, 0.03, 0.03, 0.005};
  z->chain.ndisk = 4;
  z->chain.disk = z->disk;
  z->chain.base = zoo_pose(0.2, 0.1, -0.3, 0.1, -0.2, 1.0);
  z->chain.gravity[0] = z->chain.gravity[1] = 0; /* callers keep z on the stack */
  z->chain.gravity[2] = -9.81;
}

/* Random coordinates of a plausible size for each segment type. */
static inline void zoo_random_q(const sb_model *m, double *q, double scale, double (*rnd)(void)) {
  for (int i = 0; i < m->nseg; i++) {
    const sb_segment *sg = &m->seg[i];
    for (int j = 0; j < sg->ncol; j++) {
      double a;
      switch (sg->p.type) {
        case SB_SEG_PCC: a = 0.01; break;
        case SB_SEG_REVOLUTE: a = 1; break;
        case SB_SEG_PRISMATIC: a = 0.05; break;
        default: {
          int comp = sg->comp[j % sg->ncomp];
          a = comp < 3 ? 4 : 0.2;
        }
      }
      q[sg->col0 + j] = scale * a * rnd();
    }
  }
}

#endif

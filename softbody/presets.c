#include "presets.h"

#include <string.h>

void sb_preset_cusp_arm(sb_cusp_arm *arm) {
  static const double mass[SB_CUSP_SECTIONS] = {1.17, 0.54, 0.265};
  memset(arm, 0, sizeof *arm);
  for (int i = 0; i < SB_CUSP_SECTIONS; i++) {
    sb_segment_params *p = &arm->seg[i];
    *p = sb_segment_default(SB_SEG_PCC);
    p->length = 0.15;
    p->mass = mass[i];
    p->radius = 0.025;
    p->chamber_radius = 0.015;
    p->chamber_stiffness = 265;
    p->chamber_damping = 125;
    p->slices = 4;
  }
  arm->chain.nseg = SB_CUSP_SECTIONS;
  arm->chain.seg = arm->seg;
  arm->chain.base = sb_pose_identity();
  /* 180 deg about x: local z points down. */
  arm->chain.base.R[4] = -1;
  arm->chain.base.R[8] = -1;
  arm->chain.base.p[2] = 1.0;
  arm->chain.gravity[2] = -9.81;
}

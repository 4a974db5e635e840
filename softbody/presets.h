/* Ready-made chains used by apps, tests and benchmarks. */
#ifndef SB_PRESETS_H
#define SB_PRESETS_H

#include "chain.h"

#define SB_CUSP_SECTIONS 3

/* The CUSP arm of paper 000 (paper-figures.md): 3 PCC sections, L0 = 0.15 m,
 * masses 1.17/0.54/0.265 kg, K = 265 N/m, B = 125 N*s/m per chamber. Values
 * the paper does not give, chosen here: body radius 0.025 m (inertia),
 * chamber radius 0.015 m, chambers at 90/210/330 deg. The base hangs at
 * (0, 0, 1) m with local z pointing down (world -z). */
typedef struct {
  sb_segment_params seg[SB_CUSP_SECTIONS];
  sb_chain_params chain;
} sb_cusp_arm;

void sb_preset_cusp_arm(sb_cusp_arm *arm);

#endif

/* The speculative margin of the soft disks' narrow phase (narrowphase.c),
 * shared with the planner (plan/mpcc.c: its start contact pushes only
 * where the simulator would have made the contact). No MuJoCo here.
 *
 * Contacts are looked for this far before they touch (speculative: a gap g
 * acts only if it would close within the step), or farther, as far as the
 * pair's surfaces may travel towards each other in the step: their travel at
 * a bound on their approach speed over the step times h (the narrow phase's:
 * the speed at the step's start plus what gravity may add within the step,
 * narrowphase.c's gravity_closing; a body at rest falls g h^2 in a step),
 * plus as much again (a pair that speeds up within the step otherwise) but
 * at most CUSP_SWEEP_ALLOWANCE. A pair that closes a larger gap than the
 * margin in one step is otherwise passed through unseen (swept_reach). A
 * pair found by the swept margin only keeps its contacts within CUSP_MARGIN
 * of its nearest. */
#ifndef CUSP_MARGIN_H
#define CUSP_MARGIN_H

#include <math.h>

#define CUSP_MARGIN 0.005
#define CUSP_SWEEP_ALLOWANCE (4 * CUSP_MARGIN)

/* How far a pair whose surfaces approach each other at speed (a bound
 * over the step) may travel towards each other within step h: the travel h
 * speed, plus as much again for a pair that speeds up within the step, that
 * allowance capped at CUSP_SWEEP_ALLOWANCE. A margin must cover the travel
 * or the pair passes through unseen; beyond the travel only the allowance
 * is looked at, so a fast body does not pull in everything within twice its
 * travel. */
static inline double cusp_swept_reach(double h, double speed) {
  double travel = h * speed;
  return travel + fmin(travel, CUSP_SWEEP_ALLOWANCE);
}

/* The margin a pair is looked for within at step h when its surfaces
 * approach each other at most at speed (CUSP_MARGIN, cusp_swept_reach). */
static inline double cusp_swept_margin(double h, double speed) {
  double swept = cusp_swept_reach(h, speed);
  return swept > CUSP_MARGIN ? swept : CUSP_MARGIN;
}

#endif

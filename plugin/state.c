#include "state.h"

#include <string.h>

#include "contact.h"

const char *const cusp_live_key_names[CUSP_NLIVE] = {
    "contact", "solver", "fallback", "conditioning", "eps_rank", "ruiz_iterations", "tikhonov",
    "stabilization", "friction", "pyramid", "penalty_stiffness", "penalty_damping"};

/* room for several contacts per disk (a disk flat on a plane gives 4) and
 * for MuJoCo's contacts on the bodies the arms touch */
int cusp_max_contacts(int ndisk) { return 8 * ndisk + 256; }

int cusp_state_size(int ninst, int ndisk) {
  return CUSP_STATE_HEADER + ninst * CUSP_STATE_SLOT + sb_contact_warm_capacity(cusp_max_contacts(ndisk));
}

double *cusp_state_counters(double *block) { return block + 1; }

cusp_arm_state cusp_state_arm(double *block, int arm) {
  double *x = block + CUSP_STATE_HEADER + (size_t)arm * CUSP_STATE_SLOT;
  cusp_arm_state a;
  a.q = x;
  x += CUSP_MAX_COORDS;
  a.v = x;
  x += CUSP_MAX_COORDS;
  a.base_twist = x;
  x += 6;
  a.have_base_twist = x++;
  a.feedback_start = x;
  x += CUSP_MAX_COORDS;
  a.have_feedback_start = x++;
  a.load = x;
  x += CUSP_LOAD_SIZE;
  a.live = x;
  return a;
}

double *cusp_state_warm(double *block, int ninst) {
  return block + CUSP_STATE_HEADER + (size_t)ninst * CUSP_STATE_SLOT;
}

void cusp_live_store(const cusp_instance_config *c, double *live) {
  live[CUSP_LIVE_CONTACT] = c->contact;
  live[CUSP_LIVE_SOLVER] = c->solver;
  live[CUSP_LIVE_FALLBACK] = c->fallback;
  live[CUSP_LIVE_CONDITIONING] = c->conditioning;
  live[CUSP_LIVE_EPS_RANK] = c->eps_rank;
  live[CUSP_LIVE_RUIZ_ITERATIONS] = c->ruiz_iterations;
  live[CUSP_LIVE_TIKHONOV] = c->tikhonov;
  live[CUSP_LIVE_STABILIZATION] = c->stabilization;
  live[CUSP_LIVE_FRICTION] = c->friction;
  live[CUSP_LIVE_PYRAMID] = c->pyramid;
  live[CUSP_LIVE_PENALTY_STIFFNESS] = c->penalty_stiffness;
  live[CUSP_LIVE_PENALTY_DAMPING] = c->penalty_damping;
}

void cusp_live_load(cusp_instance_config *c, const double *live) {
  c->contact = (cusp_contact_kind)live[CUSP_LIVE_CONTACT];
  c->solver = (sb_lcp_solver)live[CUSP_LIVE_SOLVER];
  c->fallback = (int)live[CUSP_LIVE_FALLBACK];
  c->conditioning = (int)live[CUSP_LIVE_CONDITIONING];
  c->eps_rank = live[CUSP_LIVE_EPS_RANK];
  c->ruiz_iterations = (int)live[CUSP_LIVE_RUIZ_ITERATIONS];
  c->tikhonov = live[CUSP_LIVE_TIKHONOV];
  c->stabilization = live[CUSP_LIVE_STABILIZATION];
  c->friction = live[CUSP_LIVE_FRICTION];
  c->pyramid = (int)live[CUSP_LIVE_PYRAMID];
  c->penalty_stiffness = live[CUSP_LIVE_PENALTY_STIFFNESS];
  c->penalty_damping = live[CUSP_LIVE_PENALTY_DAMPING];
}

#include "state.h"

#include <string.h>

#include "contact.h"

const cusp_key *cusp_live_key_of(int slot) {
  int n;
  const cusp_key *k = cusp_keys(&n);
  for (int i = 0; slot >= 0 && slot < CUSP_NLIVE && i < n; i++)
    if (k[i].live == slot + 1) return &k[i];
  return NULL;
}

int cusp_max_contacts(int ndisk) { return CUSP_CONTACTS_PER_DISK * ndisk + CUSP_CONTACTS_EXTRA; }

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
  x += CUSP_NLIVE;
  a.mount_pose = x;
  x += 12;
  a.have_mount_pose = x++;
  a.held_pose = x;
  x += 12 * CUSP_MAX_HELD;
  a.have_held_pose = x;
  x += CUSP_MAX_HELD;
  a.mount_move = x;
  x += 12;
  a.held_move = x;
  return a;
}

double *cusp_state_warm(double *block, int ninst) {
  return block + CUSP_STATE_HEADER + (size_t)ninst * CUSP_STATE_SLOT;
}

/* The key table says which keys are live and where each one's slot is. */
void cusp_live_store(const cusp_instance_config *c, double *live) {
  int n;
  const cusp_key *k = cusp_keys(&n);
  for (int i = 0; i < n; i++)
    if (k[i].live) live[k[i].live - 1] = cusp_key_number(c, &k[i]);
}

void cusp_live_load(cusp_instance_config *c, const double *live) {
  int n;
  const cusp_key *k = cusp_keys(&n);
  for (int i = 0; i < n; i++)
    if (k[i].live) cusp_key_set_number(c, &k[i], live[k[i].live - 1]);
}

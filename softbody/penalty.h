/* The penalty contact model, the baseline paper 000 argues against: a
 * normal spring-damper on the penetration and regularized Coulomb friction.
 * Explicit: the force comes from the state at the start of the step. */
#ifndef SB_PENALTY_H
#define SB_PENALTY_H

typedef struct {
  double stiffness;    /* N/m on the penetration depth */
  double damping;      /* N*s/m on the approach speed */
  double friction;     /* Coulomb mu */
  double slip_speed;   /* m/s below which friction is proportional to the slip (regularization) */
} sb_penalty_params;

/* World force on side 0 of a contact (normal from side 1 into side 0, gap
 * < 0 penetrating, v_rel = velocity of side 0 minus side 1). Zero when
 * separated; the normal part never pulls. */
void sb_penalty_force(const sb_penalty_params *p, const double normal[3], double gap,
                      const double v_rel[3], double force[3]);

#endif

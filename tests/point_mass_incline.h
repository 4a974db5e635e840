/* A point mass on a plane tilted by theta about y, stepped through the
 * contact problem (softbody/contact.h) one contact a step: the normal
 * (-sin, 0, cos), the first tangent downhill. The contact-model tests (sap,
 * ncp) each solve its steps with their own solver between
 * pm_incline_problem and pm_incline_advance. */
#ifndef CUSP_POINT_MASS_INCLINE_H
#define CUSP_POINT_MASS_INCLINE_H

#include <math.h>
#include <string.h>

#include "contact.h"

#define PM_G 9.81

typedef struct {
  double m, h, mu;
  double M[9], jac[9];      /* m I, and the point's Jacobian I */
  double nrm[3], down[3];   /* the plane's normal, downhill along it */
  double v[3], gap;         /* the mass's velocity, the contact's gap */
  int body;                 /* in the problem of this step */
  long id;                  /* the contact's identity (warm start) */
} pm_incline;

static inline void pm_incline_init(pm_incline *s, double theta, double mu, double m, double h, double gap, long id) {
  memset(s, 0, sizeof *s);
  s->m = m;
  s->h = h;
  s->mu = mu;
  for (int k = 0; k < 3; k++) s->M[4 * k] = m, s->jac[4 * k] = 1;
  s->nrm[0] = -sin(theta), s->nrm[2] = cos(theta);
  s->down[0] = -cos(theta), s->down[2] = -sin(theta);
  s->gap = gap;
  s->id = id;
}

/* The step's problem: P cleared, the mass with its free velocity v - g h
 * e_z, the contact at the current gap. 0, or -1 with err. */
static inline int pm_incline_problem(pm_incline *s, sb_contact_problem *P, char *err, int err_size) {
  double vfree[3] = {s->v[0], s->v[1], s->v[2] - PM_G * s->h};
  sb_contact_clear(P);
  s->body = sb_contact_add_dense(P, 3, s->M, vfree, err, err_size);
  if (s->body < 0) return -1;
  sb_contact c;
  memset(&c, 0, sizeof c);
  c.side[0].body = s->body;
  c.side[0].jac = s->jac;
  c.side[1].body = -1;
  memcpy(c.normal, s->nrm, sizeof c.normal);
  memcpy(c.tangent, s->down, sizeof c.tangent);
  c.gap = s->gap;
  c.friction = s->mu;
  c.id = s->id;
  return sb_contact_add(P, &c, err, err_size) < 0 ? -1 : 0;
}

/* After sb_contact_apply_impulses: the mass's new velocity, the gap moved
 * by h times the normal relative velocity; returns the downhill speed. */
static inline double pm_incline_advance(pm_incline *s, sb_contact_problem *P) {
  sb_contact_body_velocity(P, s->body, s->v);
  double vr[3];
  sb_contact_relative_velocity(P, 0, vr);
  s->gap += s->h * (vr[0] * s->nrm[0] + vr[1] * s->nrm[1] + vr[2] * s->nrm[2]);
  return s->v[0] * s->down[0] + s->v[1] * s->down[1] + s->v[2] * s->down[2];
}

#endif

/* Contact problems shared by the tests and the benchmark:
 *   block  a rigid box (a dense 6-dof body: world linear and angular velocity)
 *          on a plane tilted by theta about y, with m contacts on a grid of its
 *          bottom face. theta = 0 is the flat plane.
 *   rod    a floating, disk-discretized soft rod (6 base joints, then PCS
 *          sections bending and stretching) lying on the flat plane, with
 *          `per_disk` contacts at the bottom rim of every disk.
 * Every contact lies in the same plane, so the normal Jacobian is
 * rank-deficient as soon as there are more contacts than the body has
 * out-of-plane freedoms. */
#ifndef CUSP_CONTACT_SCENES_H
#define CUSP_CONTACT_SCENES_H

#include <math.h>
#include <string.h>

#include "chain.h"
#include "contact.h"

#define SCENE_G 9.81

typedef struct {
  double mass, half[3];   /* box */
  double theta, mu;
  double R[9];            /* incline frame (columns: downhill, across, normal) */
  double downhill[3], normal[3];
} scene_block;

/* Adds the block (body index returned) and its m contacts to a cleared
 * problem: moving with v (6: world linear, angular; NULL: at rest), its
 * contacts at gaps gap (m; NULL: touching), identities 0..m-1. */
static inline int scene_block_fill_moving(sb_contact_problem *P, scene_block *s, double theta, double mu, int m,
                                          double h, const double *v, const double *gap, char *err, int errsize) {
  s->mass = 2.0;
  s->half[0] = 0.2;
  s->half[1] = 0.15;
  s->half[2] = 0.1;
  s->theta = theta;
  s->mu = mu;
  double c = cos(theta), sn = sin(theta);
  double R[9] = {c, 0, sn, 0, 1, 0, -sn, 0, c}; /* rotation about y by theta */
  memcpy(s->R, R, sizeof R);
  for (int k = 0; k < 3; k++) {
    s->downhill[k] = R[3 * k];
    s->normal[k] = R[3 * k + 2];
  }
  /* gravity along the plane's x axis points downhill: flip the axis if needed */
  if (s->downhill[2] > 0)
    for (int k = 0; k < 3; k++) s->downhill[k] = -s->downhill[k];
  double a = s->half[0], b = s->half[1], hc = s->half[2], mass = s->mass;
  double Ib[3] = {mass * (b * b + hc * hc) / 3, mass * (a * a + hc * hc) / 3, mass * (a * a + b * b) / 3};
  double M[36] = {0};
  for (int k = 0; k < 3; k++) M[7 * k] = mass;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      double v = 0;
      for (int k = 0; k < 3; k++) v += R[3 * i + k] * Ib[k] * R[3 * j + k];
      M[(3 + i) * 6 + 3 + j] = v;
    }
  double vfree[6] = {0, 0, -SCENE_G * h, 0, 0, 0};
  for (int k = 0; v && k < 6; k++) vfree[k] += v[k];
  int body = sb_contact_add_dense(P, 6, M, vfree, err, errsize);
  if (body < 0) return -1;
  int cols = (int)ceil(sqrt((double)m)), rows = (m + cols - 1) / cols;
  for (int i = 0; i < m; i++) {
    int ix = i % cols, iy = i / cols;
    double lx = cols > 1 ? -a + 2 * a * ix / (cols - 1) : 0;
    double ly = rows > 1 ? -b + 2 * b * iy / (rows - 1) : 0;
    double local[3] = {lx, ly, -hc}, r[3];
    for (int k = 0; k < 3; k++) r[k] = R[3 * k] * local[0] + R[3 * k + 1] * local[1] + R[3 * k + 2] * local[2];
    /* point velocity v + omega x r = [I | -hat(r)] [v; omega] */
    double jac[18] = {1, 0, 0, 0, r[2], -r[1],
                      0, 1, 0, -r[2], 0, r[0],
                      0, 0, 1, r[1], -r[0], 0};
    sb_contact c;
    memset(&c, 0, sizeof c);
    c.side[0].body = body;
    c.side[0].jac = jac;
    c.side[1].body = -1;
    memcpy(c.normal, s->normal, sizeof c.normal);
    memcpy(c.tangent, s->downhill, sizeof c.tangent);
    c.friction = mu;
    c.gap = gap ? gap[i] : 0;
    c.id = i;
    if (sb_contact_add(P, &c, err, errsize) < 0) return -1;
  }
  return body;
}

/* The block at rest, touching (the first step of a solve from rest). */
static inline int scene_block_fill(sb_contact_problem *P, scene_block *s, double theta, double mu, int m,
                                   double h, char *err, int errsize) {
  return scene_block_fill_moving(P, s, theta, mu, m, h, NULL, NULL, err, errsize);
}

typedef struct {
  sb_segment_params seg[6 + 20];
  sb_disk_params disk[20 * 8];
  sb_chain_params chain;
  int nsec, disks_per_sec, per_disk;
  double disk_radius, disk_thickness;
} scene_rod;

/* A floating soft rod along world x at disk-rim height 0: nsec PCS sections of
 * length 0.1 m (bending and stretching), disks_per_sec disks on each. */
static inline void scene_rod_params(scene_rod *r, int nsec, int disks_per_sec, int per_disk) {
  memset(r, 0, sizeof *r);
  r->nsec = nsec;
  r->disks_per_sec = disks_per_sec;
  r->per_disk = per_disk;
  r->disk_radius = 0.02;
  r->disk_thickness = 0.01;
  int k = 0;
  for (int j = 0; j < 6; j++) {
    r->seg[k] = sb_segment_default(j < 3 ? SB_SEG_PRISMATIC : SB_SEG_REVOLUTE);
    r->seg[k].axis[0] = j % 3 == 0;
    r->seg[k].axis[1] = j % 3 == 1;
    r->seg[k].axis[2] = j % 3 == 2;
    k++;
  }
  for (int j = 0; j < nsec; j++) {
    sb_segment_params *sp = &r->seg[k++];
    *sp = sb_segment_default(SB_SEG_PCS);
    sp->length = 0.1;
    sp->radius = 0.01;
    sp->density = 1100;
    sp->strains = SB_KX | SB_KY | SB_EZ;
    sp->young = 2e5;
    sp->viscosity = 50;
  }
  int nd = 0;
  for (int j = 0; j < nsec; j++)
    for (int d = 0; d < disks_per_sec; d++) {
      sb_disk_params *dp = &r->disk[nd++];
      dp->segment = 6 + j;
      dp->s = d + 1 == disks_per_sec ? 0.1 : 0.1 * (d + 1) / disks_per_sec;
      dp->mass = 0.02;
      dp->radius = r->disk_radius;
      dp->thickness = r->disk_thickness;
    }
  r->chain.nseg = k;
  r->chain.seg = r->seg;
  r->chain.ndisk = nd;
  r->chain.disk = r->disk;
  /* base frame: local z (the rod axis) along world x, local x pointing down;
   * the rim is at height 0 */
  double Rb[9] = {0, 0, 1, 0, 1, 0, -1, 0, 0};
  memcpy(r->chain.base.R, Rb, sizeof Rb);
  r->chain.base.p[0] = 0;
  r->chain.base.p[1] = 0;
  r->chain.base.p[2] = r->disk_radius;
  r->chain.gravity[2] = -SCENE_G;
}

/* Adds the rod (after sb_step_prepare) and its contacts to a cleared problem. */
static inline int scene_rod_fill(sb_contact_problem *P, const scene_rod *r, const sb_model *m, sb_work *w,
                          double mu, char *err, int errsize) {
  int body = sb_contact_add_soft(P, m, w, err, errsize);
  if (body < 0) return -1;
  int id = 0;
  for (int d = 0; d < r->chain.ndisk; d++)
    for (int c = 0; c < r->per_disk; c++) {
      sb_contact ct;
      memset(&ct, 0, sizeof ct);
      ct.side[0].body = body;
      ct.side[0].seg = r->disk[d].segment;
      ct.side[0].s = r->disk[d].s;
      ct.side[0].offset[0] = r->disk_radius; /* local x points down at rest */
      ct.side[0].offset[2] = r->per_disk > 1 ? r->disk_thickness * (c / (r->per_disk - 1.0) - 0.5) : 0;
      ct.side[1].body = -1;
      ct.normal[2] = 1;
      ct.friction = mu;
      ct.id = id++;
      if (sb_contact_add(P, &ct, err, errsize) < 0) return -1;
    }
  return body;
}

/* A point contact of body 0 against the world with friction mu and
 * normal +z, its 3 x 6 Jacobian (row-major) taking the body's coordinates
 * first .. first + 2 (jac: 18 doubles, zeroed and filled here, kept by c). */
static inline sb_contact unit_point_contact(double jac[18], int first, double mu) {
  sb_contact c;
  memset(&c, 0, sizeof c);
  memset(jac, 0, 18 * sizeof *jac);
  for (int a = 0; a < 3; a++) jac[6 * a + first + a] = 1;
  c.side[0].body = 0;
  c.side[0].jac = jac;
  c.side[1].body = -1;
  c.friction = mu;
  c.normal[2] = 1;
  return c;
}

/* The unit mass matrix of a 6-dof body (M: 36 doubles). */
static inline void unit_mass(double M[36]) {
  memset(M, 0, 36 * sizeof *M);
  for (int k = 0; k < 6; k++) M[7 * k] = 1;
}

#endif

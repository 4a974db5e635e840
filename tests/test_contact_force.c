/* MuJoCo's readers of contact force see what cusp solved: a box at rest
 * bridging the lying arm and a static ledge. Its ledge contacts are a pair
 * cusp solves (MuJoCo's rows for it are left inactive), its arm contacts
 * are soft contacts with no d->contact entry. At rest the forces on the box
 * balance its weight: mj_contactForce on the ledge contacts (decoded by
 * MuJoCo from efc_force, pyramidal and elliptic cones), cusp's pair contacts
 * no row carries, and cusp's soft contact forces must sum to m g, with a
 * real share on the ledge, and a touch sensor around the box must read m g.
 * Writing the forces must not change the motion (the same run with sensors
 * disabled is bit-identical, and then advance writes the rows). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cusp.h"
#include "plugin_testutil.h"

#define SCENE(name) CUSP_SOURCE_DIR "/tests/data/scenes/" name

typedef struct {
  double ledge[3];   /* world force on the box from MuJoCo's contacts of it (mj_contactForce) */
  double soft[3];    /* from the arm's disks (cusp_contact_force) */
  double rowless[3]; /* from cusp's pair contacts of the box that no MuJoCo row carries (cusp_pair_contacts) */
  double pair[3];    /* from every pair contact of the box cusp solved (carried by rows or not) */
  double touch;
  double normal;     /* the normal forces of all three (what the touch sensor sums) */
  int nledge;        /* MuJoCo's box-ledge contacts */
  int nledge_rows;   /* of those, with constraint rows */
  int npair, nrowless; /* cusp's pair contacts of the box, and those pushing with no row to carry them */
  double ledge_dist; /* the deepest of MuJoCo's box-ledge contacts (m; +inf without one) */
} box_forces;

static void measure(const mjModel *m, const mjData *d, box_forces *f) {
  int box = mj_name2id(m, mjOBJ_GEOM, "box"), ledge = mj_name2id(m, mjOBJ_GEOM, "ledge");
  memset(f, 0, sizeof *f);
  f->ledge_dist = INFINITY;
  for (int i = 0; i < d->ncon; i++) {
    const mjContact *con = d->contact + i;
    int on1 = con->geom[1] == box;
    if (!on1 && con->geom[0] != box) continue;
    double local[6], world[3];
    mj_contactForce(m, d, i, local);
    /* the force on geom[1] is frame^T local; geom[0] gets the opposite */
    mju_mulMatTVec3(world, con->frame, local);
    for (int q = 0; q < 3; q++) f->ledge[q] += on1 ? world[q] : -world[q];
    f->normal += fmax(local[0], 0);
    if (con->geom[0] == ledge || con->geom[1] == ledge) {
      f->nledge++;
      f->nledge_rows += con->efc_address >= 0;
      f->ledge_dist = fmin(f->ledge_dist, con->dist);
    }
  }
  const cusp_contact_report *c;
  int n = cusp_contacts(m, d, &c);
  for (int k = 0; k < n; k++) {
    double force[3];
    if (c[k].other_geom != box || cusp_contact_force(m, d, k, force)) continue;
    for (int q = 0; q < 3; q++) f->soft[q] -= force[q]; /* force is on the soft side */
    f->normal += fmax(c[k].normal_impulse / m->opt.timestep, 0);
  }
  const cusp_pair_contact *p;
  n = cusp_pair_contacts(m, d, &p);
  for (int k = 0; k < n; k++) {
    if (p[k].geom[0] != box && p[k].geom[1] != box) continue;
    double sign = p[k].geom[1] == box ? 1 : -1; /* force is on geom[1] */
    f->npair++;
    for (int q = 0; q < 3; q++) f->pair[q] += sign * p[k].force[q];
    if (p[k].mujoco_contact >= 0) continue;
    f->nrowless += p[k].normal_force > 0;
    f->normal += fmax(p[k].normal_force, 0);
    for (int q = 0; q < 3; q++) f->rowless[q] += sign * p[k].force[q];
  }
  f->touch = d->sensordata[m->sensor_adr[mj_name2id(m, mjOBJ_SENSOR, "touch")]];
}

static void check_balance(const char *what, const mjModel *m, const mjData *d) {
  box_forces f;
  measure(m, d, &f);
  double weight = m->body_mass[mj_name2id(m, mjOBJ_BODY, "box")] * -m->opt.gravity[2];
  double sum[3];
  for (int q = 0; q < 3; q++) sum[q] = f.ledge[q] + f.soft[q] + f.rowless[q];
  printf("%s: weight %.6f N; ledge (%d contacts, %d with rows) %.6f N, cusp's rowless ledge contacts (%d) %.6f N, "
         "arm %.6f N, sum (%.2g, %.2g, %.6f) N; touch %.6f N\n",
         what, weight, f.nledge, f.nledge_rows, f.ledge[2], f.nrowless, f.rowless[2], f.soft[2], sum[0], sum[1], sum[2],
         f.touch);
  /* at rest each step's contact impulse cancels m g h to the solver's
   * tolerance: far inside 0.1 % */
  const double tol = 1e-3 * weight;
  /* MuJoCo lists the resting box's corners only at distance < 0, and the
   * sign of the rest height is round-off, set by which of the LCP's
   * non-unique answers shares the weight among the corners: with none
   * listed, cusp's rowless contacts carry the ledge's share
   * (docs/contact_scaling.md, session 16) */
  EXPECT(f.nledge + f.nrowless > 0, "%s: the box touches the ledge in MuJoCo's contacts (%d) or cusp's rowless ones (%d)",
         what, f.nledge, f.nrowless);
  EXPECT(f.ledge[2] + f.rowless[2] > 0.1 * weight, "%s: the ledge pair carries a share (%.4g N of %.4g)", what,
         f.ledge[2] + f.rowless[2], weight);
  EXPECT(f.soft[2] > 0.1 * weight, "%s: the arm carries a share (%.4g N of %.4g)", what, f.soft[2], weight);
  EXPECT(fabs(sum[2] - weight) < tol, "%s: contact forces sum to the weight (%.6g N vs %.6g N)", what, sum[2],
         weight);
  EXPECT(hypot(sum[0], sum[1]) < tol, "%s: no net horizontal contact force (%.3g N)", what, hypot(sum[0], sum[1]));
  /* every normal here is vertical (box faces on a box and on flat disks) */
  EXPECT(fabs(f.touch - weight) < tol, "%s: touch sensor reads the weight (%.6g N vs %.6g N)", what, f.touch,
         weight);
}

static void test_bridging(const char *model, int cone) {
  char what[64];
  snprintf(what, sizeof what, "contact=%s, %s cone", model, cone == mjCONE_ELLIPTIC ? "elliptic" : "pyramidal");
  /* align_friction 1: the arm's and the ledge's pyramids turned onto their static friction, which
   * MuJoCo's pyramid in its own axes need not hold (0.204 N went missing when the rows clipped it) */
  cusp_override ov[2] = {{"arm", "contact", model}, {"arm", "align_friction", "1"}};
  mjModel *m = load(SCENE("contact_force_bridging.xml"), ov, 2);
  if (!m) return;
  m->opt.cone = cone;
  mjData *d = attach(m);
  mjModel *m_quiet = mj_copyModel(NULL, m);
  m_quiet->opt.disableflags |= mjDSBL_SENSOR;
  mjData *d_quiet = attach(m_quiet);
  if (!d || !d_quiet) return;
  int same = 1;
  while (d->time < 2.0) {
    mj_step(m, d);
    mj_step(m_quiet, d_quiet);
    same &= memcmp(d->qpos, d_quiet->qpos, sizeof(double) * m->nq) == 0 &&
            memcmp(d->qvel, d_quiet->qvel, sizeof(double) * m->nv) == 0;
  }
  EXPECT(same, "%s: the motion with sensors is the motion without, bit for bit", what);
  check_balance(what, m, d);
  /* mj_forward alone (a paused viewer, a user's query) publishes too */
  mj_forward(m, d);
  char again[96];
  snprintf(again, sizeof again, "%s, after mj_forward", what);
  check_balance(again, m, d);
  /* with sensors disabled advance writes the rows: mj_contactForce after mj_step */
  box_forces q;
  measure(m_quiet, d_quiet, &q);
  double weight = m->body_mass[mj_name2id(m, mjOBJ_BODY, "box")] * -m->opt.gravity[2];
  EXPECT(fabs(q.ledge[2] + q.rowless[2] + q.soft[2] - weight) < 1e-3 * weight && q.ledge[2] + q.rowless[2] > 0.1 * weight,
         "%s, sensors disabled: mj_contactForce after mj_step (ledge %.6g N + rowless %.6g N + arm %.6g N vs %.6g N)",
         what, q.ledge[2], q.rowless[2], q.soft[2], weight);
  mj_deleteData(d_quiet);
  mj_deleteModel(m_quiet);
  finish(m, d);
}

/* Does the scene of d with MuJoCo's contact-force flag on draw a normal
 * force arrow starting at each of cusp's pair contacts of the box that no
 * MuJoCo row carries (MuJoCo's own drawing shows only its rows' forces)?
 * Returns how many such contacts it found drawn; *missing those not. */
static int rowless_drawn(const mjModel *m, mjData *d, int *missing) {
  int box = mj_name2id(m, mjOBJ_GEOM, "box"), drawn = 0;
  mjvOption opt;
  mjvCamera cam;
  mjvScene scn;
  mjv_defaultOption(&opt);
  mjv_defaultFreeCamera(m, &cam);
  mjv_defaultScene(&scn);
  mjv_makeScene(m, &scn, 2000);
  opt.flags[mjVIS_CONTACTFORCE] = 1;
  mjv_updateScene(m, d, &opt, NULL, &cam, mjCAT_ALL, &scn);
  const cusp_pair_contact *p;
  int n = cusp_pair_contacts(m, d, &p);
  *missing = 0;
  for (int k = 0; k < n; k++) {
    if ((p[k].geom[0] != box && p[k].geom[1] != box) || p[k].mujoco_contact >= 0 || p[k].normal_force < 0.1) continue;
    int found = 0;
    for (int g = 0; g < scn.ngeom && !found; g++) {
      const mjvGeom *v = scn.geoms + g;
      found = v->type == mjGEOM_ARROW && v->category == mjCAT_DECOR && fabs(v->pos[0] - p[k].pos[0]) < 1e-6 &&
              fabs(v->pos[1] - p[k].pos[1]) < 1e-6 && fabs(v->pos[2] - p[k].pos[2]) < 1e-6;
    }
    drawn += found;
    *missing += !found;
  }
  mjv_freeScene(&scn);
  return drawn;
}

/* One ledge force on the box (F, world) at pos against the box's slip
 * there: folds | |f_t| - mu fn | / (mu max(fn, fn_floor)) and the sine
 * between f_t and -slip into coulomb and heading when the point slides
 * faster than min_slip. fn_floor: a corner that carries next to nothing of
 * the box's weight (a non-unique share of four coplanar corners) is held to
 * round-off of the box's forces, not of its own. Returns 1 when it did. */
static int coulomb_at(const mjModel *m, const mjData *d, const double F[3], const double n[3], const double pos[3],
                      double mu, double min_slip, double fn_floor, double *coulomb, double *heading) {
  int box = mj_name2id(m, mjOBJ_GEOM, "box");
  double jac[3 * 64], slip[3];
  if (m->nv > 64) return 0;
  mj_jac(m, d, jac, NULL, pos, m->geom_bodyid[box]);
  mju_mulMatVec(slip, jac, d->qvel, 3, m->nv);
  double fn = fabs(mju_dot3(F, n)), sn = mju_dot3(slip, n), ft[3], st[3];
  for (int q = 0; q < 3; q++) {
    ft[q] = F[q] - mju_dot3(F, n) * n[q];
    st[q] = slip[q] - sn * n[q];
  }
  double ftn = mju_norm3(ft), stn = mju_norm3(st);
  if (stn < min_slip || fn <= 0) return 0;
  *coulomb = fmax(*coulomb, fabs(ftn - mu * fn) / (mu * fmax(fn, fn_floor)));
  double c[3];
  mju_cross(c, ft, st);
  *heading = fmax(*heading, mju_dot3(ft, st) < 0 ? mju_norm3(c) / (ftn * stn) : 1);
  return 1;
}

/* The ledge contacts of the box after a step, each against its slip: the
 * worst | |f_t| / (mu fn) - 1 | and sine between f_t and -slip over the
 * contacts that slide faster than min_slip (slip: the box's point velocity
 * after the step in the step's kinematics, what the velocity-level LCP made
 * complementary). Every ledge force a user reads back that one cusp contact
 * carries: a MuJoCo row (mj_contactForce) onto which one loaded cusp pair
 * contact was gathered; and every loaded cusp pair contact by its own force
 * (cusp_pair_contacts), carried by a row or not, so that the check hangs
 * neither on how many of the face's corners MuJoCo lists (at distance
 * -+1e-16, by round-off) nor on how the box's weight is shared among its
 * coplanar corners (a non-unique LCP answer: two loaded corners gathered
 * onto one row leave that row a sum of two frictions). Returns how many
 * there were. */
static int ledge_coulomb(const mjModel *m, const mjData *d, double min_slip, double *coulomb, double *heading) {
  int box = mj_name2id(m, mjOBJ_GEOM, "box"), ledge = mj_name2id(m, mjOBJ_GEOM, "ledge"), sliding = 0;
  double fn_floor = 1e-6 * m->body_mass[m->geom_bodyid[box]] * -m->opt.gravity[2];
  const cusp_pair_contact *p;
  int np = cusp_pair_contacts(m, d, &p);
  for (int i = 0; i < d->ncon; i++) {
    const mjContact *con = d->contact + i;
    int on1 = con->geom[1] == box;
    if (!((con->geom[0] == box && con->geom[1] == ledge) || (on1 && con->geom[0] == ledge))) continue;
    /* only a row that carries one cusp contact: a row onto which several
     * were gathered carries the sum of their frictions, each against its
     * own slip (the box yaws) */
    int carried = 0;
    for (int k = 0; k < np; k++) carried += p[k].mujoco_contact == i && p[k].normal_force > 0;
    if (carried != 1) continue;
    double local[6], F[3];
    mj_contactForce(m, d, i, local);
    mju_mulMatTVec3(F, con->frame, local);
    if (!on1) mju_scl3(F, F, -1); /* on the box */
    /* MuJoCo's normal: the frame's first row */
    sliding += coulomb_at(m, d, F, con->frame, con->pos, con->friction[0], min_slip, fn_floor, coulomb, heading);
  }
  /* MuJoCo's friction of the pair (no <pair> in the scene): the larger of the two geoms' */
  double mu = fmax(m->geom_friction[3 * box], m->geom_friction[3 * ledge]);
  for (int k = 0; k < np; k++) {
    int on1 = p[k].geom[1] == box;
    if (!((p[k].geom[0] == box && p[k].geom[1] == ledge) || (on1 && p[k].geom[0] == ledge))) continue;
    if (!(p[k].normal_force > 0)) continue;
    double F[3];
    mju_copy3(F, p[k].force); /* on geom[1] */
    if (!on1) mju_scl3(F, F, -1);
    sliding += coulomb_at(m, d, F, p[k].normal, p[k].pos, mu, min_slip, fn_floor, coulomb, heading);
  }
  return sliding;
}

/* The box of the bridging scene pushed off its rest at 30 degrees to the
 * world axes (60 to MuJoCo's first tangent axis, world y for a vertical
 * normal), sliding (and turning: the arm's friction on one side yaws it)
 * over the ledge and the arm, then tipping over the ledge's edge, hopping
 * and landing on one corner. Checked at every step:
 *   - the forces applied: the box's momentum change m (v+ - v) equals
 *     h (m g + cusp's impulses on it, soft and every pair contact, + MuJoCo's
 *     own constraint force), to round-off, and the box never sinks into the
 *     ledge;
 *   - the forces a user reads back are those: mj_contactForce over
 *     d->contact + cusp_contacts + the cusp_pair_contacts no MuJoCo row
 *     carries, also on the steps where MuJoCo lists no contact of the pair,
 *     or only the corner cusp holds at distance 0+, which MuJoCo excludes
 *     (dist >= its include margin 0: no rows); before cusp_pair_contacts
 *     these steps were off by up to 1.07 of the weight (1.9 with
 *     align_friction 0); and the touch sensor sums their normal forces;
 *   - each sliding ledge contact's friction is Coulomb's, mu fn against its
 *     slip, which lies outside MuJoCo's own pyramid in its axes (up to
 *     |f_t1| + |f_t2| = sqrt 2 mu fn), so clipping the rows onto that pyramid
 *     (the encoding before) broke both.
 * With align_friction 0 (a pyramid fixed from the normal, its directions off
 * the slip) the balance holds but the friction is not Coulomb's: that case
 * must show the deficit, so the check can fail. CUSP_TEST_VERBOSE=1 prints
 * each step's MuJoCo and cusp ledge contacts. */
static void test_sliding_box(int cone, int align) {
  char what[96];
  snprintf(what, sizeof what, "sliding box, %s cone, align_friction %d", cone == mjCONE_ELLIPTIC ? "elliptic" : "pyramidal",
           align);
  cusp_override ov = {"arm", "align_friction", align ? "1" : "0"};
  mjModel *m = load(SCENE("contact_force_bridging.xml"), &ov, 1);
  if (!m) return;
  m->opt.cone = cone;
  mjData *d = attach(m);
  if (!d) {
    mj_deleteModel(m);
    return;
  }
  int box = mj_name2id(m, mjOBJ_BODY, "box"), adr = m->jnt_dofadr[m->body_jntadr[box]];
  double mass = m->body_mass[box], h = m->opt.timestep, weight = mass * -m->opt.gravity[2];
  while (d->time < 0.5) mj_step(m, d);
  const double phi = -30 * M_PI / 180, v0 = 0.5;
  d->qvel[adr] = v0 * cos(phi);
  d->qvel[adr + 1] = v0 * sin(phi);
  for (int k = 2; k < 6; k++) d->qvel[adr + k] = 0;
  double worst_balance = 0, worst_dynamics = 0, worst_touch = 0, coulomb = 0, heading = 0, deepest = INFINITY;
  /* The velocity-level LCP makes a corner's normal velocity close its gap
   * at most; its position then follows the box's rotation along an arc,
   * up to h^2 |w|^2 r / 2 off the straight step the LCP saw (r: the corner's
   * distance from the centre, |w|: the spin). A depth within that arc is
   * the time stepping's, not a force missing. sink: the deepest beyond it. */
  const double *bs = m->geom_size + 3 * mj_name2id(m, mjOBJ_GEOM, "box");
  double corner = sqrt(bs[0] * bs[0] + bs[1] * bs[1] + bs[2] * bs[2]), arc_prev = 0, sink = INFINITY;
  int sliding = 0, checked_steps = 0, rowless_steps = 0, rowless_only_steps = 0, drawn = 0, undrawn = 0;
  const int verbose = getenv("CUSP_TEST_VERBOSE") != NULL;
  for (int step = 0; step < 60; step++) {
    double v[3];
    for (int q = 0; q < 3; q++) v[q] = d->qvel[adr + q];
    double spin = mju_norm3(d->qvel + adr + 3);
    mj_step(m, d);
    spin = fmax(spin, mju_norm3(d->qvel + adr + 3));
    box_forces f;
    measure(m, d, &f);
    /* this step's contacts are the last step's positions: its arc */
    sink = fmin(sink, f.ledge_dist + arc_prev);
    arc_prev = 0.5 * h * h * spin * spin * corner;
    /* the box's frame origin is its centre of mass: m dv/dt = the sum of the forces. Read back
     * (what a user sees): mj_contactForce + cusp_contacts + the rowless cusp_pair_contacts.
     * Applied (the dynamics, not through any row): cusp's impulses, soft and every pair contact,
     * plus MuJoCo's own constraint force on the box's translation (rows it kept, if any). */
    double off = 0, off_dyn = 0;
    for (int q = 0; q < 3; q++) {
      double rate = mass * (d->qvel[adr + q] - v[q]) / h - mass * m->opt.gravity[q];
      off = fmax(off, fabs(rate - f.ledge[q] - f.soft[q] - f.rowless[q]) / weight);
      off_dyn = fmax(off_dyn, fabs(rate - f.soft[q] - f.pair[q] - d->qfrc_constraint[adr + q]) / weight);
    }
    worst_balance = fmax(worst_balance, off);
    worst_touch = fmax(worst_touch, fabs(f.touch - f.normal) / weight);
    worst_dynamics = fmax(worst_dynamics, off_dyn);
    rowless_steps += f.nrowless > 0;
    rowless_only_steps += f.nrowless > 0 && f.nledge_rows == 0;
    deepest = fmin(deepest, f.ledge_dist);
    if (f.nrowless > 0) {
      int missing;
      drawn += rowless_drawn(m, d, &missing);
      undrawn += missing;
    }
    if (verbose)
      printf("  step %2d: MuJoCo ledge contacts %d (rows %d, deepest %.3g m), cusp pair contacts %d (rowless pushing "
             "%d): rowless %.4g N, ledge rows %.4g N, arm %.4g N; read back off %.2e, applied off %.2e\n",
             step, f.nledge, f.nledge_rows, f.ledge_dist, f.npair, f.nrowless, f.rowless[2], f.ledge[2], f.soft[2],
             off, off_dyn);
    /* From the second step (the first starts from the static friction's
     * direction) to the 30th (then the box tips over the ledge's edge and
     * hops), on the rows that carry one cusp contact each (MuJoCo lists
     * the face's corners at distance -+1e-16 or not, by round-off; with
     * fewer, cusp's contacts of the pair are gathered onto its nearest point,
     * where the yawing box slips in another direction: sums of several
     * contacts' friction, left out by ledge_coulomb), and while the slide is fast against what friction takes
     * off in a step (mu g h = 0.01 m/s; slower, the pyramid stays on the
     * friction it carried, softbody/contact.c save_next_direction). The
     * pyramid follows each contact's slip one step late, and the box yaws:
     * up to 2e-3 rad measured; and a MuJoCo pair's contacts are known from
     * step to step by their place in the collision's output, which can swap
     * two corners, whose slips differ by the yaw across the face (8.6e-3 rad
     * measured). */
    if (step > 0 && step < 30) {
      int checked = ledge_coulomb(m, d, 0.05, &coulomb, &heading);
      sliding += checked;
      checked_steps += checked > 0;
    }
  }
  printf("%s: momentum balance over 60 steps %.2e of the weight read back (%d steps with a rowless cusp ledge force, "
         "%d with no ledge row at all), %.2e applied; touch sensor off by %.2e; deepest MuJoCo ledge contact %.3g m (%.3g beyond its corner's arc); "
         "%d sliding ledge contacts: friction / (mu fn) off by %.2e, off the slip by %.2e rad\n",
         what, worst_balance, rowless_steps, rowless_only_steps, worst_dynamics, worst_touch, deepest, sink, sliding, coulomb,
         heading);
  /* counted by steps, not rows: how many of the face's corners MuJoCo lists
   * (dist below 0 or not, at +-1e-16) and so how many rows carry one cusp
   * contact each follows round-off (1 to 4 a step across BLAS kernels) */
  EXPECT(checked_steps >= 20, "%s: the box slides on the ledge (a sliding contact checked on %d of steps 1-29, %d in all)",
         what, checked_steps, sliding);
  /* the box tips over the ledge's edge, hops, and lands on one corner that MuJoCo lists outside
   * its include margin (no rows) or not at all, while cusp's speculative contact holds it. How
   * many steps: whether MuJoCo lists the landed face's corners, at distance -+1e-17, is
   * round-off, and which of the non-unique LCP answers (the box on four coplanar corners and
   * the arm) the solver returns moves the hop: 3 to 41 steps measured across BLAS kernels, the
   * warm pivot's basic answers and the warm Ruiz start (docs/contact_scaling.md, session 15), so
   * the bound asks that the path is exercised, the balance checks above make it right */
  EXPECT(rowless_only_steps >= 1, "%s: steps where only cusp's contact holds the box on the ledge (%d)", what,
         rowless_only_steps);
  EXPECT(worst_dynamics < 1e-9, "%s: m dv/dt - m g = the forces cusp and MuJoCo applied (off by %.3g of the weight)",
         what, worst_dynamics);
  EXPECT(worst_balance < 1e-9, "%s: m dv/dt - m g = the contact forces read back, every step (off by %.3g of the weight)",
         what, worst_balance);
  EXPECT(worst_touch < 1e-9, "%s: the touch sensor sums the normal forces read back (off by %.3g of the weight)", what,
         worst_touch);
  EXPECT(drawn >= 1 && undrawn == 0, "%s: the rowless pair forces are drawn (%d drawn, %d not)", what, drawn, undrawn);
  /* had that corner's force not acted, the box would sink 0.3 mm into the ledge before MuJoCo's rows caught it */
  EXPECT(sink > -1e-9, "%s: the box never sinks into the ledge beyond the arc its corner turns on in a step (deepest "
         "%.3g m, %.3g beyond the arc)", what, deepest, sink);
  if (align) {
    EXPECT(coulomb < 1e-9 && heading < 2e-2, "%s: ledge friction = mu fn against the slip (off by %.3g, %.3g rad)",
           what, coulomb, heading);
  } else {
    /* the slip is 30 degrees off the fixed directions: sliding friction on the nearest one */
    EXPECT(heading > 0.3, "%s: a pyramid fixed off the slip turns the friction off it (%.3f rad)", what, heading);
  }
  finish(m, d);
}

int main(void) {
  test_sliding_box(mjCONE_PYRAMIDAL, 1);
  test_sliding_box(mjCONE_ELLIPTIC, 1);
  test_sliding_box(mjCONE_PYRAMIDAL, 0);
  test_bridging("lcp", mjCONE_PYRAMIDAL);
  test_bridging("lcp", mjCONE_ELLIPTIC);
  test_bridging("ncp", mjCONE_PYRAMIDAL);
  return test_report("contact_force");
}

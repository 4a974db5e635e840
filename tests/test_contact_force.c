/* MuJoCo's readers of contact force see what cusp solved: a box at rest
 * bridging the lying arm and a static ledge. Its ledge contacts are a pair
 * cusp solves (MuJoCo's rows for it are left inactive), its arm contacts
 * are soft contacts with no d->contact entry. At rest the forces on the box
 * balance its weight: mj_contactForce on the ledge contacts (decoded by
 * MuJoCo from efc_force, pyramidal and elliptic cones) plus cusp's soft
 * contact forces must sum to m g, with a real share on the ledge, and a
 * touch sensor around the box must read m g. Writing the forces must not
 * change the motion (the same run with sensors disabled is bit-identical,
 * and then advance writes the rows). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cusp.h"
#include "plugin_testutil.h"

#define SCENE(name) CUSP_SOURCE_DIR "/tests/data/scenes/" name

typedef struct {
  double ledge[3]; /* world force on the box from its ledge contacts (mj_contactForce) */
  double soft[3];  /* from the arm's disks (cusp_contact_force) */
  double touch;
  int nledge;
} box_forces;

static void measure(const mjModel *m, const mjData *d, box_forces *f) {
  int box = mj_name2id(m, mjOBJ_GEOM, "box"), ledge = mj_name2id(m, mjOBJ_GEOM, "ledge");
  memset(f, 0, sizeof *f);
  for (int i = 0; i < d->ncon; i++) {
    const mjContact *con = d->contact + i;
    int on1 = con->geom[1] == box;
    if (!((con->geom[0] == box && con->geom[1] == ledge) || (on1 && con->geom[0] == ledge))) continue;
    double local[6], world[3];
    mj_contactForce(m, d, i, local);
    /* the force on geom[1] is frame^T local; geom[0] gets the opposite */
    mju_mulMatTVec3(world, con->frame, local);
    for (int q = 0; q < 3; q++) f->ledge[q] += on1 ? world[q] : -world[q];
    f->nledge++;
  }
  const cusp_contact_report *c;
  int n = cusp_contacts(m, d, &c);
  for (int k = 0; k < n; k++) {
    double force[3];
    if (c[k].other_geom != box || cusp_contact_force(m, d, k, force)) continue;
    for (int q = 0; q < 3; q++) f->soft[q] -= force[q]; /* force is on the soft side */
  }
  f->touch = d->sensordata[m->sensor_adr[mj_name2id(m, mjOBJ_SENSOR, "touch")]];
}

static void check_balance(const char *what, const mjModel *m, const mjData *d) {
  box_forces f;
  measure(m, d, &f);
  double weight = m->body_mass[mj_name2id(m, mjOBJ_BODY, "box")] * -m->opt.gravity[2];
  double sum[3];
  for (int q = 0; q < 3; q++) sum[q] = f.ledge[q] + f.soft[q];
  printf("%s: weight %.6f N; ledge (%d contacts) %.6f N, arm %.6f N, sum (%.2g, %.2g, %.6f) N; touch %.6f N\n", what,
         weight, f.nledge, f.ledge[2], f.soft[2], sum[0], sum[1], sum[2], f.touch);
  /* at rest each step's contact impulse cancels m g h to the solver's
   * tolerance: far inside 0.1 % */
  const double tol = 1e-3 * weight;
  EXPECT(f.nledge > 0, "%s: the box touches the ledge in MuJoCo's contacts", what);
  EXPECT(f.ledge[2] > 0.1 * weight, "%s: mj_contactForce on the ledge pair carries a share (%.4g N of %.4g)", what,
         f.ledge[2], weight);
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
  cusp_override ov = {"arm", "contact", model};
  mjModel *m = load(SCENE("contact_force_bridging.xml"), &ov, 1);
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
  EXPECT(fabs(q.ledge[2] + q.soft[2] - weight) < 1e-3 * weight && q.ledge[2] > 0.1 * weight,
         "%s, sensors disabled: mj_contactForce after mj_step (ledge %.6g N + arm %.6g N vs %.6g N)", what,
         q.ledge[2], q.soft[2], weight);
  mj_deleteData(d_quiet);
  mj_deleteModel(m_quiet);
  finish(m, d);
}

int main(void) {
  test_bridging("lcp", mjCONE_PYRAMIDAL);
  test_bridging("lcp", mjCONE_ELLIPTIC);
  test_bridging("ncp", mjCONE_PYRAMIDAL);
  return test_report("contact_force");
}

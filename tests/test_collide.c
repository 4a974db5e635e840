/* The soft disks' broad phase (plugin/collide.c) against MuJoCo's own
 * collision functions: on random poses of a disk (cylinder) near a box, a
 * plane and a sphere, cusp_may_touch never rules out a pair that MuJoCo's
 * function finds in contact, cusp_collide_pair returns exactly MuJoCo's
 * contacts (in the pair's order), and the box and plane tests prune pairs
 * whose bounding spheres overlap (what the broad phase is for). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../plugin/collide.h"
#include "testutil.h"

static const char *xml =
    "<mujoco><worldbody>"
    "<geom name='floor' type='plane' size='2 2 0.1' pos='0 0 -0.3' euler='10 -5 0'/>"
    "<geom name='box' type='box' size='0.25 0.45 0.1' euler='-45 0 0'/>"
    "<geom name='ball' type='sphere' size='0.08' pos='0.6 0 0'/>"
    "<body name='d' mocap='true'><geom name='disk' type='cylinder' size='0.02 0.005'/></body>"
    "</worldbody></mujoco>";

static mjModel *load(void) {
  char path[] = "/tmp/cusp_test_collide_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return NULL;
  size_t n = strlen(xml);
  ssize_t k = write(fd, xml, n);
  close(fd);
  char err[1000] = "";
  mjModel *m = k == (ssize_t)n ? mj_loadXML(path, NULL, err, sizeof err) : NULL;
  if (!m) fprintf(stderr, "mj_loadXML: %s\n", err);
  remove(path);
  return m;
}

/* A random rotation (normalized random quaternion) at a random point of the
 * region around geom `near`, as the disk geom's frame. */
static void place_disk(const mjModel *m, mjData *d, int disk, int near, double spread) {
  double q[4] = {tu_rand(), tu_rand(), tu_rand(), tu_rand()};
  double nq = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  for (int k = 0; k < 4; k++) q[k] /= nq;
  mju_quat2Mat(d->geom_xmat + 9 * disk, q);
  const double *c = d->geom_xpos + 3 * near, *R = d->geom_xmat + 9 * near, *size = m->geom_size + 3 * near;
  double local[3];
  for (int k = 0; k < 3; k++) {
    double half = m->geom_type[near] == mjGEOM_PLANE ? (k < 2 ? 0.3 : 0) : size[k];
    if (m->geom_type[near] == mjGEOM_SPHERE) half = size[0];
    local[k] = tu_rand() * (half + spread);
  }
  for (int k = 0; k < 3; k++)
    d->geom_xpos[3 * disk + k] = c[k] + R[3 * k] * local[0] + R[3 * k + 1] * local[1] + R[3 * k + 2] * local[2];
}

int main(void) {
  mjModel *m = load();
  EXPECT(m != NULL, "model loads");
  if (!m) return test_report("collide");
  mjData *d = mj_makeData(m);
  mj_forward(m, d);
  int disk = mj_name2id(m, mjOBJ_GEOM, "disk");
  const char *others[3] = {"box", "floor", "ball"};
  for (int o = 0; o < 3; o++) {
    int b = mj_name2id(m, mjOBJ_GEOM, others[o]);
    int touching = 0, pruned_close = 0, sphere_overlap = 0, missed = 0, differ = 0;
    for (int trial = 0; trial < 20000; trial++) {
      place_disk(m, d, disk, b, 0.06);
      double margin = 0.005 * (1 + tu_rand());
      int swap = m->geom_type[disk] > m->geom_type[b];
      int g1 = swap ? b : disk, g2 = swap ? disk : b;
      mjPreContact raw[mjMAXCONPAIR], got[mjMAXCONPAIR];
      int nraw = mjCOLLISIONFUNC[m->geom_type[g1]][m->geom_type[g2]](m, d, raw, g1, g2, margin);
      int may = cusp_may_touch(m, d, disk, b, margin);
      int ngot = cusp_collide_pair(m, d, disk, b, margin, got, mjMAXCONPAIR);
      touching += nraw > 0;
      if (nraw > 0 && !may) missed++;
      /* what the bounding spheres alone would keep (planes: always) */
      double r = 0;
      for (int k = 0; k < 3; k++) r += pow(d->geom_xpos[3 * disk + k] - d->geom_xpos[3 * b + k], 2);
      int sphere = m->geom_type[b] == mjGEOM_PLANE || sqrt(r) <= m->geom_rbound[disk] + m->geom_rbound[b] + margin;
      sphere_overlap += sphere;
      if (sphere && !may) pruned_close++;
      if (!may) continue;
      if (ngot != nraw) {
        differ++;
        continue;
      }
      for (int c = 0; c < ngot; c++) {
        double sg = swap ? -1 : 1;
        int same = got[c].dist == raw[c].dist;
        for (int k = 0; k < 3; k++) same &= got[c].pos[k] == raw[c].pos[k] && got[c].normal[k] == sg * raw[c].normal[k];
        differ += !same;
      }
    }
    printf("disk vs %s: %d touching of 20000, bounding spheres overlap in %d, pruned among those %d\n", others[o],
           touching, sphere_overlap, pruned_close);
    EXPECT(touching > 500, "disk vs %s: the poses sample contact (%d)", others[o], touching);
    EXPECT(missed == 0, "disk vs %s: the broad phase ruled out %d pairs MuJoCo finds in contact", others[o], missed);
    EXPECT(differ == 0, "disk vs %s: %d contacts differ from MuJoCo's function", others[o], differ);
    if (m->geom_type[b] != mjGEOM_SPHERE)
      EXPECT(pruned_close > sphere_overlap / 10, "disk vs %s: the exact test prunes only %d of the %d pairs whose bounding spheres meet",
             others[o], pruned_close, sphere_overlap);
  }
  mj_deleteData(d);
  mj_deleteModel(m);
  return test_report("collide");
}

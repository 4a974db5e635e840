/* The soft disks' collision (plugin/collide.c) against MuJoCo's own
 * collision functions.
 * - Broad phase: on random poses of a disk (cylinder) near a box, a plane and
 *   a sphere, cusp_may_touch never rules out a pair that MuJoCo's function
 *   finds in contact, and the box and plane tests prune pairs whose bounding
 *   spheres overlap (what the broad phase is for).
 * - Narrow phase: cusp_collide_pair returns exactly MuJoCo's contacts, except
 *   disk against box face, where the closed form (cusp_cylinder_box_face) is
 *   checked against MuJoCo's libccd result on random poses lying flat, on the
 *   rim and tilted, on every face: the same deepest distance and normal, the
 *   same number of points (outside MuJoCo's 5.1 degree switching band), and
 *   away from flat the same points. */
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

static void unit(double v[3]) {
  double n = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  for (int k = 0; k < 3; k++) v[k] /= n;
}

/* Disk poses over a random face of the box: the axis near the face normal
 * (flat), near the face plane (on the rim) or anywhere, within a few mm of
 * touching, the centre over the face or past its edges. */
static void place_over_face(const mjModel *m, mjData *d, int disk, int box, double *tilt_deg) {
  const double *e = m->geom_size + 3 * box, *Rb = d->geom_xmat + 9 * box, *c = d->geom_xpos + 3 * box;
  double r = m->geom_size[3 * disk], h = m->geom_size[3 * disk + 1];
  int k = (int)(3 * (0.5 + 0.4999 * tu_rand()));
  double sg = tu_rand() > 0 ? 1 : -1, nl[3] = {0, 0, 0};
  nl[k] = sg;
  /* the axis: a random unit vector bent towards or away from the normal */
  double z[3] = {tu_rand(), tu_rand(), tu_rand()}, mode = tu_rand();
  unit(z);
  double a = z[0] * nl[0] + z[1] * nl[1] + z[2] * nl[2];
  if (mode < -1.0 / 3) { /* flat: within 10 degrees of the normal */
    for (int j = 0; j < 3; j++) z[j] = nl[j] + 0.18 * (z[j] - a * nl[j]) * fabs(tu_rand());
  } else if (mode < 1.0 / 3) { /* on the rim: within 10 degrees of the plane */
    double t[3];
    for (int j = 0; j < 3; j++) t[j] = z[j] - a * nl[j];
    unit(t);
    for (int j = 0; j < 3; j++) z[j] = t[j] + 0.18 * tu_rand() * nl[j];
  }
  unit(z);
  a = z[0] * nl[0] + z[1] * nl[1] + z[2] * nl[2];
  *tilt_deg = acos(fmin(1, fabs(a))) * 180 / M_PI;
  double x[3] = {tu_rand(), tu_rand(), tu_rand()}, xz = x[0] * z[0] + x[1] * z[1] + x[2] * z[2];
  for (int j = 0; j < 3; j++) x[j] -= xz * z[j];
  unit(x);
  double y[3] = {z[1] * x[2] - z[2] * x[1], z[2] * x[0] - z[0] * x[2], z[0] * x[1] - z[1] * x[0]};
  /* centre: over the face (sometimes past its edges), at a height giving a
   * distance in [-2 mm, 8 mm] */
  double pl[3];
  for (int j = 0; j < 3; j++) pl[j] = tu_rand() * (e[j] + 0.03);
  double gap = 0.003 + 0.005 * tu_rand();
  pl[k] = sg * (e[k] + h * fabs(a) + r * sqrt(fmax(0, 1 - a * a)) + gap);
  /* world: R_disk = Rb [x y z], p = c + Rb pl */
  double *R = d->geom_xmat + 9 * disk, *p = d->geom_xpos + 3 * disk;
  for (int i = 0; i < 3; i++) {
    double col[3][3] = {{x[0], x[1], x[2]}, {y[0], y[1], y[2]}, {z[0], z[1], z[2]}};
    for (int j = 0; j < 3; j++)
      R[3 * i + j] = Rb[3 * i] * col[j][0] + Rb[3 * i + 1] * col[j][1] + Rb[3 * i + 2] * col[j][2];
    p[i] = c[i] + Rb[3 * i] * pl[0] + Rb[3 * i + 1] * pl[1] + Rb[3 * i + 2] * pl[2];
  }
}

static void check_box_face(const mjModel *m, mjData *d, int disk, int box) {
  int closed = 0, fallback = 0, compared = 0, bad_dist = 0, bad_normal = 0, bad_count = 0, bad_point = 0;
  int by_count[5] = {0};
  double worst_dist = 0, worst_point = 0, worst_brute = 0;
  int bad_brute = 0;
  for (int trial = 0; trial < 30000; trial++) {
    double tilt;
    place_over_face(m, d, disk, box, &tilt);
    double margin = 0.005;
    mjPreContact ours[4], raw[mjMAXCONPAIR];
    int n = cusp_cylinder_box_face(m, d, disk, box, margin, ours);
    if (n < 0) {
      fallback++;
      continue;
    }
    closed++;
    by_count[n]++;
    int nraw = mjCOLLISIONFUNC[mjGEOM_CYLINDER][mjGEOM_BOX](m, d, raw, disk, box, margin);
    double dmin = INFINITY, rmin = INFINITY;
    for (int i = 0; i < n; i++) dmin = fmin(dmin, ours[i].dist);
    for (int i = 0; i < nraw; i++) rmin = fmin(rmin, raw[i].dist);
    /* near the margin either side may keep a point the other drops */
    if (fabs(fmin(dmin, margin) - margin) < 1e-4 || fabs(fmin(rmin, margin) - margin) < 1e-4) continue;
    compared++;
    if (!n || !nraw) {
      bad_count += n != nraw;
      continue;
    }
    int flat = n == 4;
    if (flat) {
      /* MuJoCo's four points sit on the lower rim at its own azimuths: each
       * between the rim's lowest and highest point (ours 0 and 2) */
      for (int i = 0; i < nraw; i++) {
        double lo = ours[0].dist - 1e-5, hi = ours[2].dist + 1e-5;
        bad_dist += raw[i].dist < lo || raw[i].dist > hi;
        worst_dist = fmax(worst_dist, fmax(lo - raw[i].dist, raw[i].dist - hi));
      }
    } else {
      worst_dist = fmax(worst_dist, fabs(dmin - rmin));
      bad_dist += fabs(dmin - rmin) > 1e-5;
    }

    double dot = 0;
    for (int j = 0; j < 3; j++) dot += ours[0].normal[j] * raw[0].normal[j];
    bad_normal += dot < 1 - 1e-6;
    /* the point count: away from MuJoCo's switching angles (5.1 degrees from
     * flat and from the rim) and with every point clear of the margin */
    int band = fabs(tilt - 5.1) < 0.5 || fabs(90 - tilt - 5.1) < 0.5, clear = 1;
    for (int i = 0; i < n; i++) clear &= ours[i].dist < margin - 1e-4;
    for (int i = 0; i < nraw; i++) clear &= raw[i].dist < margin - 1e-4;
    if (!band && clear) bad_count += n != nraw;
    /* ours are the caps' lowest rim points: found again by brute force over
     * 3600 points of each rim */
    if (n <= 2) {
      const double *p = d->geom_xpos + 3 * disk, *R = d->geom_xmat + 9 * disk;
      double r = m->geom_size[3 * disk], h = m->geom_size[3 * disk + 1];
      for (int i = 0; i < n; i++) {
        double q[3], best = INFINITY, arg[3] = {0, 0, 0};
        for (int j = 0; j < 3; j++) q[j] = ours[i].pos[j] - 0.5 * ours[i].dist * ours[i].normal[j];
        double zq = 0; /* which cap: the sign of q's axial offset */
        for (int j = 0; j < 3; j++) zq += (q[j] - p[j]) * R[3 * j + 2];
        double zeta = zq > 0 ? h : -h;
        for (int t = 0; t < 3600; t++) {
          double th = 2 * M_PI * t / 3600, x[3], lowness = 0;
          for (int j = 0; j < 3; j++) {
            x[j] = p[j] + zeta * R[3 * j + 2] + r * (cos(th) * R[3 * j] + sin(th) * R[3 * j + 1]);
            lowness += x[j] * ours[i].normal[j]; /* the normal points into the box */
          }
          if (-lowness < best) {
            best = -lowness;
            memcpy(arg, x, sizeof arg);
          }
        }
        double off = sqrt(pow(arg[0] - q[0], 2) + pow(arg[1] - q[1], 2) + pow(arg[2] - q[2], 2));
        worst_brute = fmax(worst_brute, off);
        bad_brute += off > 5e-5;
      }
    }
    /* away from flat MuJoCo's points are the same, up to the accuracy of its
     * penetration witnesses (EPA: the depth converges much faster than the
     * witness point slides on a face) */
    if (!band && clear && n == nraw && n <= 2)
      for (int i = 0; i < n; i++) {
        double best = INFINITY;
        for (int j = 0; j < nraw; j++) {
          double dd = 0;
          for (int q = 0; q < 3; q++) dd += pow(ours[i].pos[q] - raw[j].pos[q], 2);
          best = fmin(best, sqrt(dd));
        }
        worst_point = fmax(worst_point, best);
        bad_point += best > 1e-3;
      }
  }
  printf("disk vs box face: closed form on %d poses (%d fell back to libccd), %d compared; points 0/1/2/4: %d/%d/%d/%d; "
         "worst |dist - MuJoCo| %.2e m, worst point offset %.2e m from MuJoCo's, %.2e m from brute force\n",
         closed, fallback, compared, by_count[0], by_count[1], by_count[2], by_count[4], worst_dist, worst_point, worst_brute);
  EXPECT(closed > 10000 && fallback > 1000, "the poses exercise both the closed form (%d) and the fallback (%d)", closed, fallback);
  EXPECT(by_count[1] > 1000 && by_count[2] > 1000 && by_count[4] > 1000, "flat, rim and tilted poses all occur");
  EXPECT(bad_dist == 0, "%d poses with a deepest distance off MuJoCo's by more than 1e-5 m (worst %.2e)", bad_dist, worst_dist);
  EXPECT(bad_normal == 0, "%d poses with a normal off MuJoCo's", bad_normal);
  EXPECT(bad_count == 0, "%d poses with another number of points than MuJoCo's", bad_count);
  EXPECT(bad_point == 0, "%d points farther than 1 mm from MuJoCo's (worst %.2e)", bad_point, worst_point);
  EXPECT(bad_brute == 0, "%d points farther than 0.05 mm from the lowest rim point by brute force (worst %.2e)", bad_brute, worst_brute);
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
      mjPreContact face[4];
      if (m->geom_type[b] == mjGEOM_BOX && cusp_cylinder_box_face(m, d, disk, b, margin, face) >= 0) continue;
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
  check_box_face(m, d, disk, mj_name2id(m, mjOBJ_GEOM, "box"));
  mj_deleteData(d);
  mj_deleteModel(m);
  return test_report("collide");
}

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
 *   away from flat the same points.
 * - Box against box face to face (cusp_box_box_face), against brute force and
 *   geometry rather than MuJoCo (whose box-box function is what it replaces
 *   there): every point lies on both boxes' surfaces, the deepest distance is
 *   the lowest point of the incident face over the reference face found on a
 *   grid, the points span the faces' overlap (area against a grid count),
 *   and a box resting on a ledge keeps its four points under any tilt up to
 *   1e-2 rad (MuJoCo's function gives one corner at 1e-4 rad). */
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
    "<geom name='slab' type='box' size='0.2 0.05 0.03' pos='3 0 0' euler='20 -30 60'/>"
    "<body name='b' mocap='true'><geom name='brick' type='box' size='0.06 0.06 0.02'/></body>"
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

/* Signed distance from world point x to the surface of box g (< 0 inside). */
static double box_surface_distance(const mjModel *m, const mjData *d, int g, const double x[3]) {
  const double *c = d->geom_xpos + 3 * g, *R = d->geom_xmat + 9 * g, *e = m->geom_size + 3 * g;
  double out = 0, in = -INFINITY;
  for (int k = 0; k < 3; k++) {
    double l = R[k] * (x[0] - c[0]) + R[3 + k] * (x[1] - c[1]) + R[6 + k] * (x[2] - c[2]);
    double q = fabs(l) - e[k];
    in = fmax(in, q);
    if (q > 0) out += q * q;
  }
  return in > 0 ? sqrt(out) : in;
}

/* Places box `top` over face (k, sg) of box `base`: its own face -z against
 * that face, turned by yaw about the face normal, tilted by tilt (rad) about
 * a random in-plane axis, its centre offset in the plane by (ox, oy) (m) and
 * its lowest corner at height gap over the face's plane. */
static void place_box_on_face(const mjModel *m, mjData *d, int top, int base, int k, double sg, double yaw,
                              double tilt, double ox, double oy, double gap) {
  const double *c = d->geom_xpos + 3 * base, *Rb = d->geom_xmat + 9 * base, *e = m->geom_size + 3 * base;
  const double *et = m->geom_size + 3 * top;
  int a = (k + 1) % 3, b = (k + 2) % 3;
  double n[3], ta[3], tb[3];
  for (int i = 0; i < 3; i++) {
    n[i] = sg * Rb[3 * i + k];
    ta[i] = Rb[3 * i + a];
    tb[i] = Rb[3 * i + b];
  }
  /* the top box's axes before the tilt: x, y in the face plane, z = n */
  double x0[3], y0[3];
  for (int i = 0; i < 3; i++) {
    x0[i] = cos(yaw) * ta[i] + sin(yaw) * tb[i];
    y0[i] = -sin(yaw) * ta[i] + cos(yaw) * tb[i];
  }
  /* tilt about the in-plane unit axis w (Rodrigues) */
  double phi = M_PI * tu_rand(), w[3], axes[3][3];
  for (int i = 0; i < 3; i++) w[i] = cos(phi) * ta[i] + sin(phi) * tb[i];
  const double *v0[3] = {x0, y0, n};
  for (int j = 0; j < 3; j++) {
    const double *v = v0[j];
    double wv = w[0] * v[0] + w[1] * v[1] + w[2] * v[2];
    double cr[3] = {w[1] * v[2] - w[2] * v[1], w[2] * v[0] - w[0] * v[2], w[0] * v[1] - w[1] * v[0]};
    for (int i = 0; i < 3; i++) axes[j][i] = v[i] * cos(tilt) + cr[i] * sin(tilt) + w[i] * wv * (1 - cos(tilt));
  }
  double *R = d->geom_xmat + 9 * top, *p = d->geom_xpos + 3 * top;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) R[3 * i + j] = axes[j][i];
  /* the lowest corner's height over the face's plane fixes the centre's */
  double low = 0;
  for (int j = 0; j < 3; j++) low += et[j] * fabs(axes[j][0] * n[0] + axes[j][1] * n[1] + axes[j][2] * n[2]);
  for (int i = 0; i < 3; i++) p[i] = c[i] + (e[k] + low + gap) * n[i] + ox * ta[i] + oy * tb[i];
}

/* Height along n over the plane through point o of the lowest point of the
 * face (f, sg) of box g whose shadow along n falls inside face (k, sk) of
 * box r, found on an N x N grid of that face; also the shadow's area on
 * r's face (grid count). */
static void grid_face(const mjModel *m, const mjData *d, int g, int f, double sgf, int r, int k, double sk, int N,
                      double *lowest, double *area) {
  const double *cg = d->geom_xpos + 3 * g, *Rg = d->geom_xmat + 9 * g, *eg = m->geom_size + 3 * g;
  const double *cr = d->geom_xpos + 3 * r, *Rr = d->geom_xmat + 9 * r, *er = m->geom_size + 3 * r;
  int a = (f + 1) % 3, b = (f + 2) % 3, ra = (k + 1) % 3, rb = (k + 2) % 3;
  double n[3], o[3];
  for (int i = 0; i < 3; i++) {
    n[i] = sk * Rr[3 * i + k];
    o[i] = cr[i] + er[k] * n[i];
  }
  int inside = 0;
  *lowest = INFINITY;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      double s = (2.0 * i + 1) / N - 1, t = (2.0 * j + 1) / N - 1, x[3];
      for (int q = 0; q < 3; q++)
        x[q] = cg[q] + sgf * eg[f] * Rg[3 * q + f] + s * eg[a] * Rg[3 * q + a] + t * eg[b] * Rg[3 * q + b] - o[q];
      double h = x[0] * n[0] + x[1] * n[1] + x[2] * n[2];
      double u = x[0] * Rr[ra] + x[1] * Rr[3 + ra] + x[2] * Rr[6 + ra];
      double v = x[0] * Rr[rb] + x[1] * Rr[3 + rb] + x[2] * Rr[6 + rb];
      if (fabs(u) > er[ra] || fabs(v) > er[rb]) continue;
      inside++;
      *lowest = fmin(*lowest, h);
    }
  /* the grid's cells are the face's area / N^2, projected along n */
  double cosf = fabs(Rg[f] * n[0] + Rg[3 + f] * n[1] + Rg[6 + f] * n[2]);
  *area = inside * 4 * eg[a] * eg[b] / ((double)N * N) * cosf;
}

static void check_box_box(const mjModel *m, mjData *d, int slab, int brick) {
  int closed = 0, fallback = 0, off_surface = 0, bad_depth = 0, bad_area = 0, bad_normal = 0, area_checked = 0;
  double worst_surface = 0, worst_depth = 0, worst_area = 0;
  const int N = 400;
  for (int trial = 0; trial < 3000; trial++) {
    int k = (int)(3 * (0.5 + 0.4999 * tu_rand()));
    double sg = tu_rand() > 0 ? 1 : -1, u = tu_rand();
    /* tilts from 1e-7 rad to 4 degrees, log-uniform */
    double tilt = exp(log(1e-7) + (0.5 + 0.5 * tu_rand()) * (log(0.07) - log(1e-7)));
    const double *e = m->geom_size + 3 * slab;
    int a = (k + 1) % 3, b = (k + 2) % 3;
    double ox = tu_rand() * (e[a] + 0.04), oy = tu_rand() * (e[b] + 0.04), gap = -0.001 + 0.004 * (0.5 + 0.5 * u);
    place_box_on_face(m, d, brick, slab, k, sg, M_PI * tu_rand(), tilt, ox, oy, gap);
    double margin = 0.005;
    mjPreContact c[mjMAXCONPAIR];
    int n = cusp_box_box_face(m, d, slab, brick, margin, c);
    if (n < 0) {
      fallback++;
      continue;
    }
    closed++;
    if (n == 0) continue;
    /* the normal is one box's face normal (that box is the reference) */
    int ref = -1, rk = 0;
    double rs = 1;
    for (int bx = 0; bx < 2; bx++)
      for (int j = 0; j < 3; j++) {
        const double *R = d->geom_xmat + 9 * (bx ? brick : slab);
        double dot = (c[0].normal[0] * R[j] + c[0].normal[1] * R[3 + j] + c[0].normal[2] * R[6 + j]) * (bx ? -1 : 1);
        if (fabs(fabs(dot) - 1) < 1e-12) ref = bx, rk = j, rs = dot > 0 ? 1 : -1;
      }
    bad_normal += ref < 0;
    if (ref < 0) continue;
    double mind = INFINITY;
    for (int i = 0; i < n; i++) {
      double x1[3], x2[3];
      for (int q = 0; q < 3; q++) {
        x1[q] = c[i].pos[q] - 0.5 * c[i].dist * c[i].normal[q];
        x2[q] = c[i].pos[q] + 0.5 * c[i].dist * c[i].normal[q];
      }
      double s = fmax(fabs(box_surface_distance(m, d, slab, x1)), fabs(box_surface_distance(m, d, brick, x2)));
      worst_surface = fmax(worst_surface, s);
      off_surface += s > 1e-12;
      mind = fmin(mind, c[i].dist);
    }
    /* brute force: the incident box's face most nearly against the normal */
    int r = ref ? brick : slab, g = ref ? slab : brick, f = 0;
    const double *Rg = d->geom_xmat + 9 * g, *Rr = d->geom_xmat + 9 * r;
    double nref[3] = {rs * Rr[rk], rs * Rr[3 + rk], rs * Rr[6 + rk]}, best = 0;
    for (int j = 0; j < 3; j++) {
      double dot = Rg[j] * nref[0] + Rg[3 + j] * nref[1] + Rg[6 + j] * nref[2];
      if (fabs(dot) > fabs(best)) best = dot, f = j;
    }
    double lowest, area;
    grid_face(m, d, g, f, best > 0 ? -1 : 1, r, rk, rs, N, &lowest, &area);
    /* the grid misses the lowest corner (where the overlap's outline may form
     * an acute angle) by a few cells times the slope */
    const double *eg = m->geom_size + 3 * g;
    double cell = 2 * fmax(eg[(f + 1) % 3], eg[(f + 2) % 3]) / N, tol = 4 * cell * tan(tilt) + 1e-12;
    if (isfinite(lowest)) {
      double err = fabs(mind - lowest);
      worst_depth = fmax(worst_depth, err / tol);
      bad_depth += err > tol;
    }
    /* the polygon (in order; every corner kept with a margin of 1 m) spans
     * the faces' overlap: its area is the grid's */
    mjPreContact all[mjMAXCONPAIR];
    int na = cusp_box_box_face(m, d, slab, brick, 1.0, all);
    if (na >= 3) {
      double A = 0;
      for (int i = 0; i < na; i++) {
        const double *p = all[i].pos, *q = all[(i + 1) % na].pos;
        double cr[3] = {p[1] * q[2] - p[2] * q[1], p[2] * q[0] - p[0] * q[2], p[0] * q[1] - p[1] * q[0]};
        A += 0.5 * (cr[0] * nref[0] + cr[1] * nref[1] + cr[2] * nref[2]);
      }
      /* the grid's count is off by at most the cells the overlap's outline crosses */
      double perimeter = 4 * (eg[0] + eg[1] + eg[2]), err = fabs(fabs(A) - area), atol = perimeter * cell;
      area_checked++;
      worst_area = fmax(worst_area, err / atol);
      bad_area += err > atol;
    }
  }
  printf("box vs box face: closed form on %d poses (%d fell back), worst off-surface %.2e m, worst depth error %.2f "
         "of the grid's bound, area compared on %d poses, worst %.2f of the bound\n",
         closed, fallback, worst_surface, worst_depth, area_checked, worst_area);
  EXPECT(closed > 2000, "the closed form applies to most face-to-face poses (%d of 3000)", closed);
  EXPECT(bad_normal == 0, "%d normals not a face normal", bad_normal);
  EXPECT(off_surface == 0, "%d points off the boxes' surfaces (worst %.2e m)", off_surface, worst_surface);
  EXPECT(bad_depth == 0, "%d deepest distances off the grid's lowest point (worst %.2f of the bound)", bad_depth,
         worst_depth);
  EXPECT(area_checked > 500 && bad_area == 0, "%d of %d overlap areas off the grid's (worst %.2f of the bound)",
         bad_area, area_checked, worst_area);

  /* a brick bridging a ledge's edge (tests/data/scenes/coupling_box_bridging.xml),
   * tilted: four points at every tilt, each at its corner's height */
  int steady = 1, mujoco_other = 0;
  double worst_height = 0;
  for (double tilt = 1e-7; tilt <= 1e-2; tilt *= 1.4) {
    for (int rep = 0; rep < 8; rep++) {
      /* the slab's +z face, the brick 6 cm in from its edge: 5 cm of it on the slab */
      place_box_on_face(m, d, brick, slab, 2, 1, 1e-4 * tu_rand(), tilt, 0, -0.06, -5e-6);
      mjPreContact c[mjMAXCONPAIR], raw[mjMAXCONPAIR];
      int n = cusp_collide_pair(m, d, slab, brick, 0.005, c, mjMAXCONPAIR);
      int nraw = mjCOLLISIONFUNC[mjGEOM_BOX][mjGEOM_BOX](m, d, raw, slab, brick, 0.005);
      steady &= n == 4;
      mujoco_other += nraw != 4;
      for (int i = 0; i < n; i++) {
        double x2[3];
        for (int q = 0; q < 3; q++) x2[q] = c[i].pos[q] + 0.5 * c[i].dist * c[i].normal[q];
        worst_height = fmax(worst_height, fabs(box_surface_distance(m, d, brick, x2)));
      }
    }
  }
  printf("brick bridging a ledge, tilts 1e-7 .. 1e-2 rad: four points throughout: %s (MuJoCo's function: another "
         "count in %d poses), worst off-surface %.2e m\n",
         steady ? "yes" : "no", mujoco_other, worst_height);
  EXPECT(steady, "the bridging brick keeps four contact points at every tilt");
  EXPECT(worst_height < 1e-12, "the bridging brick's points on its surface (%.2e m)", worst_height);

  /* beside the slab's edge and above it (2 mm out, 1 mm up): the faces'
   * shadows miss, the nearest features are edges: MuJoCo's function answers */
  place_box_on_face(m, d, brick, slab, 2, 1, 0, 0, 0, 0, 0.001);
  const double *R = d->geom_xmat + 9 * slab, *e = m->geom_size + 3 * slab, *eb = m->geom_size + 3 * brick;
  for (int q = 0; q < 3; q++) d->geom_xpos[3 * brick + q] += (e[0] + eb[0] + 0.002) * R[3 * q];
  mjPreContact c[mjMAXCONPAIR], raw[mjMAXCONPAIR];
  int face = cusp_box_box_face(m, d, slab, brick, 0.005, c), n = cusp_collide_pair(m, d, slab, brick, 0.005, c, mjMAXCONPAIR);
  int nraw = mjCOLLISIONFUNC[mjGEOM_BOX][mjGEOM_BOX](m, d, raw, slab, brick, 0.005);
  int same = face == -1 && n == nraw;
  for (int i = 0; same && i < n; i++) same = c[i].dist == raw[i].dist;
  EXPECT(same, "edge past the face's rim: closed form %d (-1), %d points as MuJoCo's %d", face, n, nraw);
}

int main(void) {
  mjModel *m = load();
  EXPECT(m != NULL, "model loads");
  if (!m) return test_report("collide");
  mjData *d = mj_makeData(m);
  mj_forward(m, d);
  int disk = mj_name2id(m, mjOBJ_GEOM, "disk");
  check_box_box(m, d, mj_name2id(m, mjOBJ_GEOM, "slab"), mj_name2id(m, mjOBJ_GEOM, "brick"));
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

#include "collide.h"

#include <math.h>
#include <string.h>

/* Distance from point x to geom g's solid when g is a plane (signed, to its
 * infinite half-space, as MuJoCo's plane functions treat it) or a box (0
 * inside); -1 when g is neither. */
static double distance_to_plane_or_box(const mjModel *m, const mjData *d, int g, const double x[3]) {
  const mjtNum *p = d->geom_xpos + 3 * g, *R = d->geom_xmat + 9 * g, *size = m->geom_size + 3 * g;
  double r[3] = {x[0] - p[0], x[1] - p[1], x[2] - p[2]}, local[3];
  for (int k = 0; k < 3; k++) local[k] = R[k] * r[0] + R[3 + k] * r[1] + R[6 + k] * r[2];
  if (m->geom_type[g] == mjGEOM_PLANE) return local[2];
  if (m->geom_type[g] != mjGEOM_BOX) return -1;
  double s = 0;
  for (int k = 0; k < 3; k++) {
    double e = fabs(local[k]) - size[k];
    if (e > 0) s += e * e;
  }
  return sqrt(s);
}

int cusp_may_touch(const mjModel *m, const mjData *d, int a, int b, double margin) {
  int ta = m->geom_type[a], tb = m->geom_type[b];
  if (ta != mjGEOM_PLANE && tb != mjGEOM_PLANE) {
    double dx = d->geom_xpos[3 * a] - d->geom_xpos[3 * b];
    double dy = d->geom_xpos[3 * a + 1] - d->geom_xpos[3 * b + 1];
    double dz = d->geom_xpos[3 * a + 2] - d->geom_xpos[3 * b + 2];
    double reach = m->geom_rbound[a] + m->geom_rbound[b] + margin;
    if (dx * dx + dy * dy + dz * dz > reach * reach) return 0;
  }
  /* the bounding sphere of one against the exact plane or box of the other
   * (a box's bounding sphere reaches far past its faces) */
  for (int side = 0; side < 2; side++) {
    int g = side ? a : b, o = side ? b : a;
    int tg = m->geom_type[g], to = m->geom_type[o];
    if ((tg != mjGEOM_PLANE && tg != mjGEOM_BOX) || to == mjGEOM_PLANE) continue;
    if (distance_to_plane_or_box(m, d, g, d->geom_xpos + 3 * o) > m->geom_rbound[o] + margin) return 0;
  }
  return 1;
}

/* MuJoCo's multi-contact tolerances (engine_collision_gjk.h): a face whose
 * normal is within acos(0.996) = 5.1 degrees of the contact normal touches
 * flat, an edge within asin(0.0888) = 5.1 degrees of the contact plane lies
 * along it. */
#define FLAT_COS 0.996
#define EDGE_SIN 0.0888

int cusp_cylinder_box_face(const mjModel *m, const mjData *d, int cyl, int box, double margin, mjPreContact *out) {
  const mjtNum *c = d->geom_xpos + 3 * box, *Rb = d->geom_xmat + 9 * box, *e = m->geom_size + 3 * box;
  const mjtNum *p = d->geom_xpos + 3 * cyl, *Rc = d->geom_xmat + 9 * cyl;
  double r = m->geom_size[3 * cyl], h = m->geom_size[3 * cyl + 1];
  /* the disk's centre, axis and first radial axis in the box frame */
  double pl[3], zl[3], xl[3], dp[3] = {p[0] - c[0], p[1] - c[1], p[2] - c[2]};
  for (int j = 0; j < 3; j++) {
    pl[j] = Rb[j] * dp[0] + Rb[3 + j] * dp[1] + Rb[6 + j] * dp[2];
    zl[j] = Rb[j] * Rc[2] + Rb[3 + j] * Rc[5] + Rb[6 + j] * Rc[8];
    xl[j] = Rb[j] * Rc[0] + Rb[3 + j] * Rc[3] + Rb[6 + j] * Rc[6];
  }
  /* the face the centre is farthest outside of */
  int k = 0;
  for (int j = 1; j < 3; j++)
    if (fabs(pl[j]) - e[j] > fabs(pl[k]) - e[k]) k = j;
  double above = fabs(pl[k]) - e[k], sg = pl[k] >= 0 ? 1 : -1;
  if (!(above > 0)) return -1;
  /* clearance of the disk's shadow from the face's edges */
  double clear = INFINITY;
  for (int j = 0; j < 3; j++) {
    if (j == k) continue;
    double ext = h * fabs(zl[j]) + r * sqrt(fmax(0, 1 - zl[j] * zl[j]));
    clear = fmin(clear, e[j] - fabs(pl[j]) - ext);
  }
  /* a = cos(axis, face normal); the lowest point of a cap's rim is r along
   * the normal's in-plane part, downwards */
  double a = sg * zl[k], sa = sqrt(fmax(0, 1 - a * a));
  double depth = -(above - h * fabs(a) - r * sa);
  /* exact: the face's plane bounds the box, the shadow lies inside the face,
   * and a sideways escape shorter than the depth would leave the deepest
   * point inside the box (clear >= depth) */
  if (!(clear >= 0 && clear >= depth && depth <= e[k])) return -1;
  if (-depth >= margin) return 0;
  double nl[3] = {0, 0, 0}, u[4][3], zeta[4];
  nl[k] = sg;
  double down[3]; /* unit in the cap plane towards the face */
  if (sa > 1e-12) {
    for (int j = 0; j < 3; j++) down[j] = -(nl[j] - a * zl[j]) / sa;
  } else {
    memcpy(down, xl, sizeof down);
  }
  double low = a > 0 ? -h : h; /* the cap nearer the face */
  int np;
  if (fabs(a) > FLAT_COS && !mjDISABLED(mjDSBL_MULTICCD)) {
    /* flat on the face: four rim points of the lower cap span its support */
    double side[3] = {zl[1] * down[2] - zl[2] * down[1], zl[2] * down[0] - zl[0] * down[2],
                      zl[0] * down[1] - zl[1] * down[0]};
    for (int j = 0; j < 3; j++) {
      u[0][j] = down[j];
      u[1][j] = side[j];
      u[2][j] = -down[j];
      u[3][j] = -side[j];
    }
    for (int i = 0; i < 4; i++) zeta[i] = low;
    np = 4;
  } else if (fabs(a) < EDGE_SIN && !mjDISABLED(mjDSBL_MULTICCD)) {
    /* on its rim: the lowest point of each cap, the ends of the line the
     * rim rests on */
    for (int i = 0; i < 2; i++) memcpy(u[i], down, sizeof down);
    zeta[0] = -h;
    zeta[1] = h;
    np = 2;
  } else {
    memcpy(u[0], down, sizeof down);
    zeta[0] = low;
    np = 1;
  }
  int n = 0;
  for (int i = 0; i < np; i++) {
    double q[3];
    for (int j = 0; j < 3; j++) q[j] = pl[j] + zeta[i] * zl[j] + r * u[i][j];
    double dist = sg * q[k] - e[k];
    /* the points of a flat or rim contact go together, as in MuJoCo */
    if (np == 1 && dist >= margin) continue;
    q[k] -= 0.5 * sg * dist; /* midway between the rim point and the face */
    mjPreContact *o = &out[n++];
    o->dist = dist;
    for (int j = 0; j < 3; j++) {
      o->pos[j] = c[j] + Rb[3 * j] * q[0] + Rb[3 * j + 1] * q[1] + Rb[3 * j + 2] * q[2];
      o->normal[j] = -sg * Rb[3 * j + k]; /* from the disk into the box */
      o->tangent[j] = 0;
    }
  }
  return n;
}

/* Axis j of a geom's frame (a column of its row-major xmat). */
static void frame_axis(const mjtNum *R, int j, double u[3]) {
  u[0] = R[j];
  u[1] = R[3 + j];
  u[2] = R[6 + j];
}

static double dot3(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

/* Separation of two boxes along unit axis u (> 0: apart by that much along
 * u; < 0: overlapping by that much): |(c_b - c_a).u| minus both boxes'
 * half extents along u. */
static double box_separation(const double d[3], const double ua[3][3], const mjtNum *ea, const double ub[3][3],
                             const mjtNum *eb, const double u[3]) {
  double reach = 0;
  for (int j = 0; j < 3; j++) reach += ea[j] * fabs(dot3(ua[j], u)) + eb[j] * fabs(dot3(ub[j], u));
  return fabs(dot3(d, u)) - reach;
}

/* One Sutherland-Hodgman pass: keeps the part of polygon (x, y, z per vertex)
 * where sign * coordinate axis <= limit, z interpolated linearly. */
static int clip_polygon(const double in[][3], int n, int axis, double sign, double limit, double out[][3]) {
  int k = 0;
  for (int i = 0; i < n; i++) {
    const double *p = in[i], *q = in[(i + 1) % n];
    double fp = sign * p[axis] - limit, fq = sign * q[axis] - limit;
    if (fp <= 0) memcpy(out[k++], p, 3 * sizeof(double));
    if ((fp < 0 && fq > 0) || (fp > 0 && fq < 0)) {
      double t = fp / (fp - fq);
      for (int c = 0; c < 3; c++) out[k][c] = p[c] + t * (q[c] - p[c]);
      out[k][axis] = sign * limit; /* exactly on the edge */
      k++;
    }
  }
  return k;
}

int cusp_box_box_face(const mjModel *m, const mjData *d, int g1, int g2, double margin, mjPreContact *out) {
  const int g[2] = {g1, g2};
  const mjtNum *e[2] = {m->geom_size + 3 * g1, m->geom_size + 3 * g2};
  double u[2][3][3], dc[3];
  for (int b = 0; b < 2; b++)
    for (int j = 0; j < 3; j++) frame_axis(d->geom_xmat + 9 * g[b], j, u[b][j]);
  for (int k = 0; k < 3; k++) dc[k] = d->geom_xpos[3 * g2 + k] - d->geom_xpos[3 * g1 + k];
  /* the face axis along which the boxes are farthest apart (least overlap) */
  int ref = 0, k = 0;
  double best = -INFINITY;
  for (int b = 0; b < 2; b++)
    for (int j = 0; j < 3; j++) {
      double s = box_separation(dc, u[0], e[0], u[1], e[1], u[b][j]);
      if (s > best) {
        best = s, ref = b, k = j;
      }
    }
  if (best >= margin) return 0;
  /* normal of the reference face, from the reference box towards the other */
  double n[3];
  double towards = (ref == 0 ? 1 : -1) * dot3(dc, u[ref][k]) >= 0 ? 1 : -1;
  for (int c = 0; c < 3; c++) n[c] = towards * u[ref][k][c];
  /* an edge-edge axis separating them farther, away from that normal, makes
   * the contact an edge's: not a face's */
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++) {
      const double *p = u[0][a], *q = u[1][b];
      double x[3] = {p[1] * q[2] - p[2] * q[1], p[2] * q[0] - p[0] * q[2], p[0] * q[1] - p[1] * q[0]};
      double len = sqrt(dot3(x, x));
      if (len < 1e-6) continue; /* parallel edges: their plane is a face's */
      for (int c = 0; c < 3; c++) x[c] /= len;
      if (fabs(dot3(x, n)) >= FLAT_COS) continue; /* the same contact plane */
      if (box_separation(dc, u[0], e[0], u[1], e[1], x) > best) return -1;
    }
  /* the incident face: the other box's face most nearly against n, which
   * must lie flat on it (within MuJoCo's flat tolerance) */
  int inc = 1 - ref, f = 0;
  for (int j = 1; j < 3; j++)
    if (fabs(dot3(u[inc][j], n)) > fabs(dot3(u[inc][f], n))) f = j;
  double cosf = dot3(u[inc][f], n);
  if (fabs(cosf) < FLAT_COS) return -1;
  const double *cr = d->geom_xpos + 3 * g[ref], *ci = d->geom_xpos + 3 * g[inc];
  double face_r[3], face_i[3]; /* centres of the two faces */
  for (int c = 0; c < 3; c++) {
    face_r[c] = cr[c] + e[ref][k] * n[c];
    face_i[c] = ci[c] - (cosf > 0 ? 1 : -1) * e[inc][f] * u[inc][f][c];
  }
  /* the incident face's corners in the reference face's coordinates (two
   * in-plane axes and the height along n), clipped to the reference face */
  int ra = (k + 1) % 3, rb = (k + 2) % 3, ia = (f + 1) % 3, ib = (f + 2) % 3;
  double poly[2][8][3];
  const double corner[4][2] = {{1, 1}, {-1, 1}, {-1, -1}, {1, -1}};
  for (int v = 0; v < 4; v++) {
    double p[3];
    for (int c = 0; c < 3; c++)
      p[c] = face_i[c] + corner[v][0] * e[inc][ia] * u[inc][ia][c] + corner[v][1] * e[inc][ib] * u[inc][ib][c] -
             face_r[c];
    poly[0][v][0] = dot3(p, u[ref][ra]);
    poly[0][v][1] = dot3(p, u[ref][rb]);
    poly[0][v][2] = dot3(p, n);
  }
  int np = 4, cur = 0;
  const double lim[2] = {e[ref][ra], e[ref][rb]};
  for (int axis = 0; axis < 2 && np > 0; axis++)
    for (int sgn = -1; sgn <= 1 && np > 0; sgn += 2) {
      np = clip_polygon((const double(*)[3])poly[cur], np, axis, sgn, lim[axis], poly[1 - cur]);
      cur = 1 - cur;
    }
  /* the faces' shadows miss each other: the boxes are nearest elsewhere (an
   * edge past the face's rim), which MuJoCo's function finds */
  if (np == 0) return -1;
  /* the polygon's corners, each with its own height: drop repeated ones
   * (a corner on an edge of the reference face) */
  double tiny = 1e-9 * (e[ref][ra] + e[ref][rb]);
  int nout = 0;
  for (int v = 0; v < np; v++) {
    const double *p = poly[cur][v], *q = poly[cur][(v + 1) % np];
    if (np > 1 && fabs(p[0] - q[0]) <= tiny && fabs(p[1] - q[1]) <= tiny && fabs(p[2] - q[2]) <= tiny) continue;
    if (p[2] >= margin) continue;
    mjPreContact *o = &out[nout++];
    o->dist = p[2];
    for (int c = 0; c < 3; c++) {
      /* midway between the incident point and the reference face */
      o->pos[c] = face_r[c] + p[0] * u[ref][ra][c] + p[1] * u[ref][rb][c] + 0.5 * p[2] * n[c];
      o->normal[c] = ref == 0 ? n[c] : -n[c]; /* from g1 to g2 */
      o->tangent[c] = 0;
    }
  }
  return nout;
}

int cusp_collide_pair(const mjModel *m, mjData *d, int a, int b, double margin, mjPreContact *out, int max) {
  if (!cusp_may_touch(m, d, a, b, margin)) return 0;
  int swap = m->geom_type[a] > m->geom_type[b];
  int g1 = swap ? b : a, g2 = swap ? a : b;
  mjPreContact buf[mjMAXCONPAIR];
  int n = -1;
  if (m->geom_type[g1] == mjGEOM_CYLINDER && m->geom_type[g2] == mjGEOM_BOX)
    n = cusp_cylinder_box_face(m, d, g1, g2, margin, buf);
  if (m->geom_type[g1] == mjGEOM_BOX && m->geom_type[g2] == mjGEOM_BOX)
    n = cusp_box_box_face(m, d, g1, g2, margin, buf);
  if (n < 0) {
    mjfCollision fn = mjCOLLISIONFUNC[m->geom_type[g1]][m->geom_type[g2]];
    if (!fn) return 0;
    n = fn(m, d, buf, g1, g2, margin);
  }
  if (n > max) n = max;
  for (int i = 0; i < n; i++) {
    out[i] = buf[i];
    if (swap)
      for (int k = 0; k < 3; k++) {
        out[i].normal[k] = -buf[i].normal[k];
        out[i].tangent[k] = -buf[i].tangent[k];
      }
  }
  return n;
}

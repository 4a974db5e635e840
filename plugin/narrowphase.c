/* The soft disks' contacts: MuJoCo's collision functions (collide.h) on
 * the pairs MuJoCo itself would consider, with a speculative margin. */
#include "collide.h"
#include "pipeline.h"

int cusp_add_meta(cusp_runtime *r, const contact_meta *cm) {
  if (r->nmeta >= r->max_contacts) {
    r->ndropped++;
    return -1;
  }
  r->meta[r->nmeta++] = *cm;
  return 0;
}

/* Arc length of disk k from the arm's base, m. */
static double disk_arc(const cusp_instance_config *c, int k) {
  double arc = c->disk[k].s;
  for (int q = 0; q < c->disk[k].section; q++) arc += c->length[q];
  return arc;
}

static double dot3(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

/* Disk k's motion at the step's start for the swept margin: its centre's
 * world velocity (3) and its rim's speed about the centre (the last of the
 * 4 values): its angular speed across its axis (a disk turning about its
 * own axis, z of its geom, the cylinder's, moves no surface) times its
 * bounding radius. */
static void disk_motion(const mjModel *m, const soft_t *s, int k, double out[4]) {
  const double *eta = s->disk_twist + 6 * k, *R = s->disk_pose[k].R; /* [w; v], disk axes */
  for (int i = 0; i < 3; i++) out[i] = R[3 * i] * eta[3] + R[3 * i + 1] * eta[4] + R[3 * i + 2] * eta[5];
  out[3] = sqrt(eta[0] * eta[0] + eta[1] * eta[1]) * m->geom_rbound[s->cfg.disk[k].geom_id];
  if (!all_finite(out, 4)) memset(out, 0, 4 * sizeof(double));
}

/* A bound on how fast any point of disk a approaches any point of disk b
 * (b NULL: a MuJoCo geom, whose own motion is not counted, as MuJoCo's own
 * margin does not): their centres' relative speed plus both rims' speeds. */
static inline double approach_speed(const double a[4], const double *b) {
  double dv[3] = {a[0], a[1], a[2]}, rim = a[3];
  if (b) {
    for (int i = 0; i < 3; i++) dv[i] -= b[i];
    rim += b[3];
  }
  return sqrt(dv[0] * dv[0] + dv[1] * dv[1] + dv[2] * dv[2]) + rim;
}

/* What gravity may add within step h to the speed at which disk k of s
 * closes on the other side, along unit n (from the disk to the other side;
 * n NULL: along whichever normal adds most). A disk at rest that falls in the
 * step is carried g h^2 by it (implicit Euler), farther than the margin at a
 * large step, so its approach speed at the step's start alone would let it
 * pass through unseen. Each side's acceleration from gravity and what holds
 * it up lies between 0 (held) and its gravity g (falling): the closing
 * acceleration at most max(0, g_s.n) + max(0, -g_o.n), along the worst
 * normal max(|g_s|, |g_o|, |g_s - g_o|) (a convex function of the two
 * fractions, largest at a corner): |g| for a falling rod over a held one,
 * not 0 (two falling rods alone would cancel, but either may be held). A
 * MuJoCo geom's own motion is not counted (approach_speed). Other forces
 * (elastic, actuation, a moving mount's) are not bounded here. */
static double gravity_closing(const soft_t *s, const soft_t *o, const double *n, double h) {
  const double *gs = s->model->gravity, *go = o ? o->model->gravity : NULL;
  if (n) {
    double gain = fmax(0, dot3(gs, n));
    if (go) gain += fmax(0, -dot3(go, n));
    return isfinite(gain) ? h * gain : 0;
  }
  double gain = sqrt(dot3(gs, gs));
  if (go) {
    double dg[3] = {gs[0] - go[0], gs[1] - go[1], gs[2] - go[2]};
    gain = fmax(gain, fmax(sqrt(dot3(go, go)), sqrt(dot3(dg, dg))));
  }
  return isfinite(gain) ? h * gain : 0;
}

/* A pair found only by the swept margin (none of its n contacts within the
 * fixed one, base): the index of its nearest contact, else -1. */
static int swept_only(const mjPreContact *con, int n, double base) {
  int nearest = -1;
  for (int c = 0; c < n; c++) {
    if (con[c].dist < base) return -1;
    if (nearest < 0 || con[c].dist < con[nearest].dist) nearest = c;
  }
  return nearest;
}

/* Whether a pair found by the swept margin only is an approach to stop
 * within the step: at its nearest contact con (normal from disk k of s to
 * the other side: disk ok of o, or a MuJoCo geom, standing still), the
 * sides close at their speed along the normal at the step's start, plus
 * what gravity may add to it within the step (gravity_closing, as the
 * margin counts it), which over cusp_swept_reach would bring within the
 * fixed margin. The others (pairs passing by, or parting) are left out: a
 * snapping rod has hundreds of them within the swept margin. */
static int swept_pair_closes(const soft_t *s, int k, const soft_t *o, int ok, const mjPreContact *con, double base,
                             double h) {
  double va[3], vb[3] = {0, 0, 0};
  cusp_arm_point_velocity(s, k, con->pos, va);
  if (o) cusp_arm_point_velocity(o, ok, con->pos, vb);
  double closing = 0;
  for (int q = 0; q < 3; q++) closing += (va[q] - vb[q]) * con->normal[q];
  if (!isfinite(closing)) return 1;
  closing += gravity_closing(s, o, con->normal, h);
  return closing > 0 && con->dist - cusp_swept_reach(h, closing) < base;
}

/* Whether disk j of an arm may touch its disk k (j > k): self-contact
 * pair selection. Any two disks are a pair unless they already overlap
 * when the arm is straight (arc-length distance within a disk thickness),
 * neighbours included: in a uniform curl, disks j intervals apart meet on
 * their inner rims at a bend per interval of (j ds - thickness) / (j
 * radius), so neighbours meet first. A pair whose slabs are apart along
 * either disk's axis by more than the margin is left out before MuJoCo's
 * (convex, costly) cylinder-cylinder test. */
static int self_pair_may_touch(const cusp_runtime *r, const soft_t *s, int k, int j, double margin) {
  const cusp_instance_config *c = &s->cfg;
  if (!c->self_contact || fabs(disk_arc(c, j) - disk_arc(c, k)) <= c->disk_thickness) return 0;
  const mjModel *m = r->m;
  const mjData *d = r->d;
  int a = c->disk[k].geom_id, b = c->disk[j].geom_id;
  const double *pa = d->geom_xpos + 3 * a, *pb = d->geom_xpos + 3 * b;
  double dp[3] = {pb[0] - pa[0], pb[1] - pa[1], pb[2] - pa[2]};
  for (int side = 0; side < 2; side++) {
    const double *Ru = d->geom_xmat + 9 * (side ? b : a), *Rv = d->geom_xmat + 9 * (side ? a : b);
    double u[3] = {Ru[2], Ru[5], Ru[8]}, v[3] = {Rv[2], Rv[5], Rv[8]}; /* the disks' axes */
    double cosine = fabs(u[0] * v[0] + u[1] * v[1] + u[2] * v[2]), sine = sqrt(fmax(0, 1 - cosine * cosine));
    int g = side ? b : a, o = side ? a : b;
    /* half extents along u: the disk of axis u, and the other one tilted by the angle between them */
    double reach = m->geom_size[3 * g + 1] + m->geom_size[3 * o + 1] * cosine + m->geom_size[3 * o] * sine;
    if (fabs(u[0] * dp[0] + u[1] * dp[1] + u[2] * dp[2]) > reach + margin) return 0;
  }
  return 1;
}

/* Is disk k of s at one of its held points, held to body ob or to a body
 * welded to it? */
static int held_disk_pair(const mjModel *m, const soft_t *s, int k, int ob) {
  const cusp_disk *dk = &s->cfg.disk[k];
  for (int j = 0; j < s->nheld; j++) {
    const cusp_held *h = &s->held[j];
    int hb = h->body_id;
    if (h->section != dk->section || !(fabs(h->s - dk->s) <= 1e-9 * s->cfg.length[dk->section])) continue;
    if (ob == hb || (m->body_weldid[hb] && m->body_weldid[ob] == m->body_weldid[hb])) return 1;
  }
  return 0;
}

/* Disk k's axial coordinate of world point pos. */
static double disk_axial(const soft_t *s, int k, const double pos[3]) {
  const sb_pose *g = &s->disk_pose[k];
  double a = 0;
  for (int q = 0; q < 3; q++) a += (pos[q] - g->p[q]) * g->R[3 * q + 2];
  return a;
}

/* The rod's centreline point x and tangent t at the arc length *a further
 * on than its disk k, with *a cut back to the disk's thickness and to the
 * rod (where the end disks reach past the rod's ends), and axis the disk's
 * axis point at that *a. Returns 1 when *a needed no cut at the rod's ends,
 * 0 when it did, -1 when the point cannot be evaluated. */
static int centreline_at(const soft_t *s, int k, double *a, double x[3], double t[3], double axis[3]) {
  const cusp_instance_config *c = &s->cfg;
  if (c->contact == CUSP_CONTACT_NATIVE) return -1; /* MuJoCo places its disks: no kinematics here */
  double half = 0.5 * c->disk_thickness;
  *a = fmin(fmax(*a, -half), half);
  int sec = c->disk[k].section;
  double at = c->disk[k].s + *a;
  while (at < 0 && sec > 0) at += c->length[--sec];
  while (at > c->length[sec] && sec < c->sections - 1) at -= c->length[sec++];
  double clamped = fmin(fmax(at, 0), c->length[sec]);
  *a -= at - clamped;
  sb_pose p;
  if (sb_point_kinematics(s->model, s->work, sec, clamped, &p, NULL, NULL, NULL)) return -1;
  const sb_pose *g = &s->disk_pose[k];
  for (int q = 0; q < 3; q++) {
    x[q] = p.p[q];
    t[q] = p.R[3 * q + 2];
    axis[q] = g->p[q] + *a * g->R[3 * q + 2];
  }
  return at == clamped;
}

/* How far the rod's surface reaches beyond its disk k's along unit u, at
 * the section with centreline point x and tangent t whose arc length is
 * the disk's axis point axis: the centreline's departure from the axis, and
 * the section's rim against the disk's (tilted against each other, they
 * reach r sqrt(1 - (t.u)^2) along u). */
static double surface_beyond_disk(const cusp_runtime *r, const soft_t *s, int k, const double x[3],
                                  const double t[3], const double axis[3], const double u[3]) {
  const sb_pose *g = &s->disk_pose[k];
  double disk_axis[3] = {g->R[2], g->R[5], g->R[8]}, tu = dot3(t, u), du = dot3(disk_axis, u);
  double rim = r->m->geom_size[3 * s->cfg.disk[k].geom_id] * (sqrt(fmax(0, 1 - tu * tu)) - sqrt(fmax(0, 1 - du * du)));
  return (x[0] - axis[0]) * u[0] + (x[1] - axis[1]) * u[1] + (x[2] - axis[2]) * u[2] + rim;
}

/* Whether disk k is a piece of its rod's tube: as thick as the arc
 * length to each neighbour, to 1e-6 of it (disks meeting face to face, as
 * the cosseratbench adapter tiles a rod). Disks spaced apart, or
 * overlapping, are the arm's plates themselves. */
static int disk_tiles_tube(const soft_t *s, int k) {
  const cusp_instance_config *c = &s->cfg;
  if (c->contact == CUSP_CONTACT_NATIVE || c->ndisk < 2) return 0;
  double h = c->disk_thickness, arc = disk_arc(c, k);
  double before = k > 0 ? arc - disk_arc(c, k - 1) : h, after = k < c->ndisk - 1 ? disk_arc(c, k + 1) - arc : h;
  return fabs(before - h) <= 1e-6 * h && fabs(after - h) <= 1e-6 * h;
}

/* The gap between the rods' curved surfaces where MuJoCo found disk k of
 * s at gap dist from geom b (disk ok of instance o when o is not NULL),
 * along unit u from the disk to b, near pos. A disk that tiles its rod's
 * tube (disk_tiles_tube) is a straight piece of it, but the rod bends
 * inside it: its centreline leaves the disk's axis by about kappa a^2 / 2
 * at axial coordinate a (a chain of straight disks is a polygon of
 * tangents), and two rods crossing where their disks meet would rest that
 * sag nearer than a diameter apart. A tube is the points within its radius
 * of its centreline: between two rods tiled so, the distance of their
 * centrelines less both radii, at the arc lengths nearest each other
 * within the two disks (from pos's, one step of the tangent lines' nearest
 * points: crossing rods' centrelines are parted by more than a rod's sag
 * in the error pos's arc lengths leave); pos and normal (from the other
 * rod into this one) then become those of the tubes: the point midway
 * between their surfaces on the line of the centrelines' nearest points.
 * Against a rigid geom, a rod whose disks are spaced apart, or where pos
 * falls beyond a rod's end (the end disk's flat face), and within one rod
 * (whose tube, near itself, is always within a diameter of its centreline),
 * the disk's gap less how far each tiled rod's surface reaches beyond its
 * disk along the normal (surface_beyond_disk; pos and normal MuJoCo's). */
static double tube_gap(const cusp_runtime *r, const soft_t *s, int k, const soft_t *o, int ok, double pos[3],
                       double normal[3], const double u[3], double dist) {
  double a = disk_axial(s, k, pos), x[3], tx[3], ax[3];
  int on = disk_tiles_tube(s, k) ? centreline_at(s, k, &a, x, tx, ax) : -1;
  double b = o ? disk_axial(o, ok, pos) : 0, y[3], ty[3], ay[3];
  int on_other = o && disk_tiles_tube(o, ok) ? centreline_at(o, ok, &b, y, ty, ay) : -1;
  if (on == 1 && on_other == 1 && o != s) {
    double w[3] = {x[0] - y[0], x[1] - y[1], x[2] - y[2]};
    double c = dot3(tx, ty), d = dot3(tx, w), e = dot3(ty, w), den = 1 - c * c;
    if (den > 1e-8) { /* not parallel: the tangent lines' nearest points */
      a += (c * e - d) / den;
      b += (e - c * d) / den;
      if (centreline_at(s, k, &a, x, tx, ax) < 0 || centreline_at(o, ok, &b, y, ty, ay) < 0) return dist;
    }
    const double *size = r->m->geom_size;
    double rk = size[3 * s->cfg.disk[k].geom_id], ro = size[3 * o->cfg.disk[ok].geom_id];
    double apart[3] = {x[0] - y[0], x[1] - y[1], x[2] - y[2]}, length = sqrt(dot3(apart, apart));
    double gap = length - rk - ro;
    if (!isfinite(gap) || !(length > 1e-9 * (rk + ro))) return dist;
    /* the tubes' normal, and the point midway between their surfaces */
    for (int q = 0; q < 3; q++) {
      normal[q] = apart[q] / length;
      pos[q] = y[q] + (ro + 0.5 * gap) * normal[q];
    }
    return gap;
  }
  double beyond = on >= 0 ? surface_beyond_disk(r, s, k, x, tx, ax, u) : 0;
  if (on_other >= 0) {
    double v[3] = {-u[0], -u[1], -u[2]}; /* the other disk's way to this one */
    beyond += surface_beyond_disk(r, o, ok, y, ty, ay, v);
  }
  return isfinite(beyond) ? dist - beyond : dist;
}

/* Height above plane geom b (unit normal nrm through point p0) of the rod's
 * tube at axial coordinate *a of its disk k: the centreline's height less
 * the radius (a tube is the points within its radius of its centreline).
 * x: that centreline point. Returns centreline_at's answer (1: within the
 * rod, 0: cut at its end, -1: not evaluated). */
static int tube_height(const soft_t *s, int k, double radius, const double nrm[3], const double p0[3], double *a,
                       double x[3], double *height) {
  double t[3], axis[3];
  int on = centreline_at(s, k, a, x, t, axis);
  *height = (x[0] - p0[0]) * nrm[0] + (x[1] - p0[1]) * nrm[1] + (x[2] - p0[2]) * nrm[2] - radius;
  return on;
}

/* A disk that tiles its rod's tube (disk_tiles_tube) against a plane: one
 * contact, at the tube's lowest point over the disk's thickness, instead of
 * MuJoCo's cylinder-plane points on the straight disk's rims (two or more
 * per disk of a rod lying on the floor, each an independent normal for the
 * contact LCP, and the rims of a polygon of tangents, not the rod's
 * surface). The lowest point: of the centreline's heights at the disk's
 * two faces and middle, or the vertex of the parabola through them when
 * the middle is lowest (a rod curved up on both sides). Returns 1 when it
 * answered the pair (with no contact beyond margin), 0 when MuJoCo's
 * function must (the rod's end disks, whose flat faces reach past the rod;
 * a point that cannot be evaluated). */
static int tube_plane_contact(cusp_runtime *r, int i, int k, int b, double margin, double base) {
  soft_t *s = &r->soft[i];
  const mjModel *m = r->m;
  const double *R = r->d->geom_xmat + 9 * b, *p0 = r->d->geom_xpos + 3 * b;
  double nrm[3] = {R[2], R[5], R[8]}, radius = m->geom_size[3 * s->cfg.disk[k].geom_id];
  double half = 0.5 * s->cfg.disk_thickness, a[3] = {-half, 0, half}, x[3][3], height[3];
  for (int j = 0; j < 3; j++)
    if (tube_height(s, k, radius, nrm, p0, &a[j], x[j], &height[j]) != 1 || !isfinite(height[j])) return 0;
  int low = height[0] <= height[2] ? 0 : 2;
  double best = height[low], *at = x[low];
  double xv[3];
  double curvature = height[0] + height[2] - 2 * height[1]; /* > 0: the middle is a valley */
  if (height[1] < best && curvature > 0) {
    double av = 0.5 * half * (height[0] - height[2]) / curvature, hv; /* the parabola's vertex, within the disk */
    best = height[1];
    at = x[1];
    if (tube_height(s, k, radius, nrm, p0, &av, xv, &hv) == 1 && isfinite(hv) && hv < best) {
      best = hv;
      at = xv;
    }
  } else if (height[1] < best) {
    best = height[1];
    at = x[1];
  }
  if (best >= margin) return 1;
  contact_meta cm = {.inst = i, .disk = k, .other_geom = b, .other_inst = -1, .other_disk = -1, .pair_index = 0};
  cm.model = s->cfg.contact;
  cm.gap = best;
  for (int q = 0; q < 3; q++) {
    cm.normal[q] = nrm[q]; /* from the plane into the disk */
    cm.pos[q] = at[q] - (radius + 0.5 * best) * nrm[q]; /* midway between the tube and the plane */
  }
  if (best >= base) { /* found by the swept margin only: kept when it closes, as collide_disk's pairs */
    mjPreContact con = {.dist = best};
    for (int q = 0; q < 3; q++) {
      con.pos[q] = cm.pos[q];
      con.normal[q] = -nrm[q]; /* MuJoCo's way: from the disk to the plane */
    }
    if (!swept_pair_closes(s, k, NULL, -1, &con, base, r->m->opt.timestep)) return 1;
  }
  cusp_add_meta(r, &cm);
  return 1;
}

/* Soft contacts of instance i, disk k against everything it may touch. */
static void collide_disk(cusp_runtime *r, int i, int k) {
  const mjModel *m = r->m;
  soft_t *s = &r->soft[i];
  int a = s->cfg.disk[k].geom_id;
  double h = m->opt.timestep, *motion = s->disk_motion;
  const int *partner = r->disk_partners + (size_t)i * m->ngeom;
  for (int p = 0; p < r->ndisk_partners[i]; p++) {
    int b = partner[p];
    if (b == a) continue;
    int oi = r->geom_soft[2 * b], ok = r->geom_soft[2 * b + 1];
    if (oi >= 0 && (oi < i || (oi == i && ok <= k))) continue; /* each soft pair once */
    if (oi < 0) {
      if (!(m->geom_contype[b] | m->geom_conaffinity[b])) continue;
      /* MuJoCo's parent filter: the arm is a child of its mount and of
       * whatever moves welded to it (a static mount is welded to the world
       * and its floor, so there only the mount itself). Without the filter
       * only the base disk, which can never leave the mount, is exempt. */
      int ob = m->geom_bodyid[b], base = s->cfg.base_body_id;
      int mount_group = ob == base || (m->body_weldid[base] && m->body_weldid[ob] == m->body_weldid[base]);
      if (mount_group && (k == 0 || !(m->opt.disableflags & mjDSBL_FILTERPARENT))) continue;
      /* a disk at a held point is attached to the hold's body as the base
       * disk to the mount: a contact there (a clamp leaves it no motion) is
       * not one */
      if (held_disk_pair(m, s, k, ob)) continue;
    }
    /* after the cheap filters: every disk meets every geom here */
    const soft_t *os = oi >= 0 ? &r->soft[oi] : NULL;
    const double *other = os ? os->disk_motion + 4 * ok : NULL;
    double speed = approach_speed(motion + 4 * k, other) + gravity_closing(s, os, NULL, h);
    double margin = cusp_swept_margin(h, speed) + m->geom_margin[b];
    if (oi == i && !self_pair_may_touch(r, s, k, ok, margin)) continue;
    double base = CUSP_MARGIN + m->geom_margin[b];
    if (oi < 0 && m->geom_type[b] == mjGEOM_PLANE && disk_tiles_tube(s, k) &&
        tube_plane_contact(r, i, k, b, margin, base))
      continue;
    int n = cusp_collide_pair(m, r->d, a, b, margin, r->cbuf, mjMAXCONPAIR);
    /* an approach, not yet a touch: kept when its nearest contact closes,
     * with its contacts within the fixed margin of that one (a disk arriving
     * face on is held at its whole face, not at one rim point) */
    int only = margin > base ? swept_only(r->cbuf, n, base) : -1;
    if (only >= 0 && !swept_pair_closes(s, k, oi >= 0 ? &r->soft[oi] : NULL, ok, &r->cbuf[only], base, h)) continue;
    double farthest = only >= 0 ? r->cbuf[only].dist + CUSP_MARGIN : INFINITY;
    for (int c = 0; c < n; c++) {
      if (only >= 0 && !(r->cbuf[c].dist <= farthest)) continue;
      const mjPreContact *con = &r->cbuf[c];
      contact_meta cm = {.inst = i, .disk = k, .other_geom = b, .other_inst = oi, .other_disk = ok,
                         .pair_index = c};
      cm.model = s->cfg.contact;
      /* the normal points from the disk to b; ours from b into the disk */
      for (int q = 0; q < 3; q++) {
        cm.normal[q] = -con->normal[q];
        cm.pos[q] = con->pos[q] - 0.5 * con->dist * con->normal[q];
      }
      /* the gap between the rods' curved surfaces, not their straight disks' */
      cm.gap = tube_gap(r, s, k, oi >= 0 ? &r->soft[oi] : NULL, ok, cm.pos, cm.normal, con->normal, con->dist);
      cusp_add_meta(r, &cm); /* beyond the capacity: counted, and said after the stage */
    }
  }
}

/* The geoms collide_disk would not skip on their soft identity alone, in
 * its order (ascending): a disk's loop over them then costs the rigid geoms
 * and the other arms' disks, not its own arm's (a quadratic loop in the
 * disks when self-contact is off). The geom-dependent filters (contype,
 * parent, held points, self pairs) stay in collide_disk. */
void cusp_disk_partners(cusp_runtime *r) {
  const mjModel *m = r->m;
  for (int i = 0; i < r->ninst; i++) {
    int *partner = r->disk_partners + (size_t)i * m->ngeom, n = 0;
    for (int b = 0; b < m->ngeom; b++) {
      int oi = r->geom_soft[2 * b];
      if (oi < 0 || oi > i || (oi == i && r->soft[i].cfg.self_contact)) partner[n++] = b;
    }
    r->ndisk_partners[i] = n;
  }
}

void cusp_stage_narrow_phase(cusp_runtime *r) {
  r->ndropped = 0;
  for (int i = 0; i < r->ninst; i++)
    for (int k = 0; k < r->soft[i].cfg.ndisk; k++)
      if (r->soft[i].cfg.contact == CUSP_CONTACT_NATIVE)
        memset(r->soft[i].disk_motion + 4 * k, 0, 4 * sizeof(double)); /* MuJoCo moves it: not counted */
      else
        disk_motion(r->m, &r->soft[i], k, r->soft[i].disk_motion + 4 * k);
  for (int i = 0; i < r->ninst; i++)
    for (int k = 0; k < r->soft[i].cfg.ndisk && r->soft[i].cfg.contact != CUSP_CONTACT_NATIVE; k++)
      collide_disk(r, i, k);
}

/* An explicit <pair> (with its friction), else contype/conaffinity, not
 * within one welded body, not parent and child (world excepted), not an
 * <exclude>d body pair. */
double cusp_mujoco_pair_friction(const mjModel *m, int g1, int g2) {
  for (int i = 0; i < m->npair; i++)
    if ((m->pair_geom1[i] == g1 && m->pair_geom2[i] == g2) || (m->pair_geom1[i] == g2 && m->pair_geom2[i] == g1))
      return m->pair_friction[5 * i];
  if (!((m->geom_contype[g1] & m->geom_conaffinity[g2]) || (m->geom_contype[g2] & m->geom_conaffinity[g1])))
    return -1;
  int b1 = m->geom_bodyid[g1], b2 = m->geom_bodyid[g2];
  int w1 = m->body_weldid[b1], w2 = m->body_weldid[b2];
  if (w1 == w2) return -1;
  if (!(m->opt.disableflags & mjDSBL_FILTERPARENT) && w1 && w2 &&
      (m->body_weldid[m->body_parentid[w1]] == w2 || m->body_weldid[m->body_parentid[w2]] == w1))
    return -1;
  int lo = b1 < b2 ? b1 : b2, hi = b1 < b2 ? b2 : b1;
  for (int i = 0; i < m->nexclude; i++)
    if (m->exclude_signature[i] == (lo << 16) + hi) return -1;
  return fmax(m->geom_friction[3 * g1], m->geom_friction[3 * g2]);
}


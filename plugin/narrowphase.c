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

/* Soft contacts of instance i, disk k against everything it may touch. */
static void collide_disk(cusp_runtime *r, int i, int k) {
  const mjModel *m = r->m;
  soft_t *s = &r->soft[i];
  int a = s->cfg.disk[k].geom_id;
  for (int b = 0; b < m->ngeom; b++) {
    if (b == a) continue;
    int oi = r->geom_soft[2 * b], ok = r->geom_soft[2 * b + 1];
    double margin = CUSP_MARGIN + m->geom_margin[b];
    if (oi >= 0) {
      if (oi < i) continue; /* each soft pair once */
      if (oi == i && (ok <= k || !self_pair_may_touch(r, s, k, ok, margin))) continue;
    } else {
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
    int n = cusp_collide_pair(m, r->d, a, b, margin, r->cbuf, mjMAXCONPAIR);
    for (int c = 0; c < n; c++) {
      const mjPreContact *con = &r->cbuf[c];
      contact_meta cm = {.inst = i, .disk = k, .other_geom = b, .other_inst = oi, .other_disk = ok,
                         .pair_index = c};
      cm.model = s->cfg.contact;
      cm.gap = con->dist;
      /* the normal points from the disk to b; ours from b into the disk */
      for (int q = 0; q < 3; q++) {
        cm.normal[q] = -con->normal[q];
        cm.pos[q] = con->pos[q] - 0.5 * con->dist * con->normal[q];
      }
      cusp_add_meta(r, &cm); /* beyond the capacity: counted, and said after the stage */
    }
  }
}

void cusp_stage_narrow_phase(cusp_runtime *r) {
  r->ndropped = 0;
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


/* The plugin's visualize callback (visualize.h). */
#include "visualize.h"

#include <math.h>
#include <stdio.h>

#include "cusp.h"
#include "instances.h"

#define TUBE_SEGMENTS 48      /* capsules along each backbone */
#define TUBE_OF_DISK 0.55     /* tube radius / disk radius */
#define TUBE_RADIUS_NO_DISK 0.01

static const float TUBE_RGBA[4] = {0.35f, 0.62f, 0.78f, 1};
static const float CONTACT_RGBA[4] = {0.9f, 0.1f, 0.1f, 1};
static const float DROPPED_RGBA[4] = {0.7f, 0.2f, 1.0f, 1};
static const float NORMAL_RGBA[4] = {0.1f, 0.85f, 0.2f, 1};
static const float FRICTION_RGBA[4] = {1.0f, 0.9f, 0.1f, 1};

/* The next free geom of scn as a decor geom of the given colour, or NULL
 * when the scene is full. */
static mjvGeom *new_geom(mjvScene *scn, int type, const float rgba[4]) {
  if (scn->ngeom >= scn->maxgeom) return NULL;
  mjvGeom *g = scn->geoms + scn->ngeom++;
  mjv_initGeom(g, type, NULL, NULL, NULL, rgba);
  g->category = mjCAT_DECOR;
  g->objtype = mjOBJ_UNKNOWN;
  g->objid = -1;
  g->segid = -1;
  return g;
}

static int finite3(const double v[3]) { return isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]); }

/* A connector geom (capsule, cylinder, arrow) from a to b; 0, or -1 when
 * the scene is full. */
static int add_connector(mjvScene *scn, int type, const float rgba[4], double width, const double a[3],
                         const double b[3]) {
  mjvGeom *g = new_geom(scn, type, rgba);
  if (!g) return -1;
  mjv_connector(g, type, width, a, b);
  return 0;
}

/* The tube's radius for instance k: a fraction of its disk radius (the
 * generated geom NAME/disk0), or a fixed radius without such a geom. */
static double tube_radius(const mjModel *m, int k) {
  const char *name = cusp_instance_name(m, k);
  char disk[CUSP_NAME + 16];
  if (!name || snprintf(disk, sizeof disk, "%s/disk0", name) >= (int)sizeof disk) return TUBE_RADIUS_NO_DISK;
  int g = mj_name2id(m, mjOBJ_GEOM, disk);
  if (g < 0 || !(m->geom_size[3 * g] > 0)) return TUBE_RADIUS_NO_DISK;
  return TUBE_OF_DISK * m->geom_size[3 * g];
}

/* The backbone of instance k as a chain of capsules; -1 when the scene is full. */
static int add_tube(const mjModel *m, const mjData *d, mjvScene *scn, int k) {
  double L = cusp_total_length(m, k), r = tube_radius(m, k), prev[3], p[3];
  if (!(L > 0) || cusp_backbone_point(m, d, k, 0, prev, NULL) || !finite3(prev)) return 0;
  for (int i = 1; i <= TUBE_SEGMENTS; i++) {
    if (cusp_backbone_point(m, d, k, L * i / TUBE_SEGMENTS, p, NULL) || !finite3(p)) return 0;
    if (add_connector(scn, mjGEOM_CAPSULE, TUBE_RGBA, r, prev, p)) return -1;
    prev[0] = p[0], prev[1] = p[1], prev[2] = p[2];
  }
  return 0;
}

/* How contacts are drawn, from MuJoCo's visual options and statistics. */
typedef struct {
  int points, forces;
  double rad, half, width; /* MuJoCo's contact marker and force arrow sizes */
  double scale, maxlen;    /* m per N, and the longest arrow */
} contact_style;

/* One contact at pos with unit normal nrm, the force F (N) it put on the side
 * the normal points into and that force's normal part fn; -1 when the scene
 * is full. */
static int add_contact(mjvScene *scn, const contact_style *st, const double pos[3], const double nrm[3], int kept,
                       double fn, const double F[3]) {
  if (!finite3(pos) || !finite3(nrm)) return 0;
  double a[3], b[3];
  if (st->points) {
    for (int j = 0; j < 3; j++) a[j] = pos[j] - st->half * nrm[j], b[j] = pos[j] + st->half * nrm[j];
    if (add_connector(scn, mjGEOM_CYLINDER, kept ? CONTACT_RGBA : DROPPED_RGBA, st->rad, a, b)) return -1;
    if (!kept) {
      /* a dropped contact carries no force: its normal, of a fixed length */
      for (int j = 0; j < 3; j++) b[j] = pos[j] + 4 * st->rad * nrm[j];
      if (add_connector(scn, mjGEOM_ARROW, DROPPED_RGBA, 0.5 * st->width, pos, b)) return -1;
    }
  }
  if (!st->forces || !kept) return 0;
  /* normal and friction parts of the force */
  double dot = F[0] * nrm[0] + F[1] * nrm[1] + F[2] * nrm[2], ft[3], ftn = 0;
  for (int j = 0; j < 3; j++) ft[j] = F[j] - dot * nrm[j], ftn += ft[j] * ft[j];
  ftn = sqrt(ftn);
  double len = fmin(st->scale * fabs(fn), st->maxlen);
  if (isfinite(len) && len > 2 * st->width) {
    double sgn = fn < 0 ? -1 : 1;
    for (int j = 0; j < 3; j++) b[j] = pos[j] + sgn * len * nrm[j];
    if (add_connector(scn, mjGEOM_ARROW, NORMAL_RGBA, st->width, pos, b)) return -1;
  }
  len = fmin(st->scale * ftn, st->maxlen);
  if (isfinite(len) && len > 2 * st->width) {
    for (int j = 0; j < 3; j++) b[j] = pos[j] + len * ft[j] / ftn;
    if (add_connector(scn, mjGEOM_ARROW, FRICTION_RGBA, st->width, pos, b)) return -1;
  }
  return 0;
}

/* The contacts whose forces MuJoCo's own contact drawing does not show: the
 * soft contacts, and the pair contacts cusp solved that no MuJoCo row
 * carries (cusp_pair_contacts); -1 when the scene is full. */
static int add_contacts(const mjModel *m, const mjData *d, const mjvOption *opt, mjvScene *scn) {
  contact_style st = {.points = opt->flags[mjVIS_CONTACTPOINT], .forces = opt->flags[mjVIS_CONTACTFORCE]};
  if (!st.points && !st.forces) return 0;
  double h = m->opt.timestep;
  if (!(h > 0)) st.forces = 0;
  double meansize = m->stat.meansize > 0 ? m->stat.meansize : 0.05;
  /* MuJoCo's contact marker: a flat cylinder along the normal */
  st.rad = m->vis.scale.contactwidth * meansize;
  st.half = 0.5 * m->vis.scale.contactheight * meansize;
  st.width = m->vis.scale.forcewidth * meansize;
  /* MuJoCo's force arrows: vis.map.force metres per N per kg of mean mass,
   * clipped to half the scene's extent so a huge impulse stays on screen */
  st.scale = m->vis.map.force / (m->stat.meanmass > 0 ? m->stat.meanmass : 1);
  st.maxlen = fmax(0.5 * m->stat.extent, 0.05);
  const cusp_contact_report *c = NULL;
  int n = cusp_contacts(m, d, &c);
  for (int i = 0; i < n && c; i++) {
    double F[3] = {c[i].impulse[0] / h, c[i].impulse[1] / h, c[i].impulse[2] / h};
    if (add_contact(scn, &st, c[i].pos, c[i].normal, c[i].kept, c[i].normal_impulse / h, F)) return -1;
  }
  const cusp_pair_contact *p = NULL;
  n = cusp_pair_contacts(m, d, &p);
  for (int i = 0; i < n && p; i++)
    if (p[i].mujoco_contact < 0 && add_contact(scn, &st, p[i].pos, p[i].normal, p[i].kept, p[i].normal_force, p[i].force))
      return -1;
  return 0;
}

void cusp_visualize(const mjModel *m, mjData *d, const mjvOption *opt, mjvScene *scn, int instance) {
  if (!m || !d || !opt || !scn || cusp_soft_instance(m, instance) != 0) return;
  int ninst = cusp_instance_count(m);
  for (int k = 0; k < ninst; k++)
    if (add_tube(m, d, scn, k)) return;
  add_contacts(m, d, opt, scn);
}

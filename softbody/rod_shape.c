/* A rod's initial shape from a centerline (rod_shape.h). */
#include "rod_shape.h"

#include <math.h>
#include <string.h>

#include "sb_util.h"
#include "se3.h"

void sb_polyline_point(int npt, const double *pt, const double *arc, double s, double out[3]) {
  if (npt <= 1 || s <= arc[0]) {
    memcpy(out, pt, 3 * sizeof(double));
    return;
  }
  if (s >= arc[npt - 1]) {
    memcpy(out, pt + 3 * (npt - 1), 3 * sizeof(double));
    return;
  }
  int j = 0;
  while (j + 2 < npt && arc[j + 1] <= s) j++;
  double f = (s - arc[j]) / (arc[j + 1] - arc[j]);
  for (int a = 0; a < 3; a++) out[a] = pt[3 * j + a] + f * (pt[3 * (j + 1) + a] - pt[3 * j + a]);
}

/* theta / sin(theta) for the tangent-chord angle theta in [0, pi), from
 * sin(theta) = sw / d: the series where the quotient would lose digits. */
static double arc_over_chord(double theta, double sin_theta) {
  if (theta < 1e-4) return 1 + theta * theta / 6 + 7 * theta * theta * theta * theta / 360;
  return theta / sin_theta;
}

/* Above this tangent-chord angle (rad) the arc to the next node would be a
 * full turn less a sliver, reached by a node straight behind the tangent. */
#define MAX_CHORD_ANGLE (M_PI - 1e-9)

int sb_rod_shape_strains(int nsec, const double *L, const double *node, double *strain, double *frame,
                         char *error, int error_size) {
  double R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  if (frame) memcpy(frame, R, sizeof R);
  for (int i = 0; i < nsec; i++) {
    const double *x0 = node + 3 * i, *x1 = node + 3 * (i + 1);
    double t[3] = {R[2], R[5], R[8]}, c[3] = {x1[0] - x0[0], x1[1] - x0[1], x1[2] - x0[2]};
    double d = sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
    if (!(d > 0) || !isfinite(d)) {
      sb_errorf(error, error_size, "section %d: its end node coincides with its start node (%g %g %g): a section "
                "cannot end where it starts", i + 1, x0[0], x0[1], x0[2]);
      return -1;
    }
    double w[3] = {t[1] * c[2] - t[2] * c[1], t[2] * c[0] - t[0] * c[2], t[0] * c[1] - t[1] * c[0]};
    double sw = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]), cw = t[0] * c[0] + t[1] * c[1] + t[2] * c[2];
    double theta = atan2(sw, cw);
    if (theta > MAX_CHORD_ANGLE) {
      sb_errorf(error, error_size, "section %d: its end node (%g %g %g) lies straight behind its start (%g %g %g) "
                "against the rod's tangent there: no arc reaches it", i + 1, x1[0], x1[1], x1[2], x0[0], x0[1], x0[2]);
      return -1;
    }
    double ratio = arc_over_chord(theta, sw / d);
    /* k = (2 theta / L) (t x c) / |t x c| = (2 ratio / (d L)) (t x c): smooth at theta = 0 */
    double kw[3], kl[3], scale = 2 * ratio / (d * L[i]);
    for (int a = 0; a < 3; a++) kw[a] = scale * w[a];
    for (int a = 0; a < 3; a++) kl[a] = R[a] * kw[0] + R[3 + a] * kw[1] + R[6 + a] * kw[2];
    kl[2] = 0; /* t x c is perpendicular to t: no twist, only round-off */
    double *xi = strain + 6 * i;
    xi[0] = kl[0];
    xi[1] = kl[1];
    xi[2] = xi[3] = xi[4] = 0;
    xi[5] = d * ratio / L[i];
    double turn[3] = {kl[0] * L[i], kl[1] * L[i], 0}, E[9], Rn[9];
    sb_so3_exp(turn, E);
    sb_matmul(3, 3, 3, R, E, Rn);
    memcpy(R, Rn, sizeof R);
    if (frame) memcpy(frame + 9 * (i + 1), R, sizeof R);
  }
  return 0;
}

/* A rod's initial shape from a centerline: the strains of a piecewise-
 * constant-strain (PCS) chain that pass exactly through given points.
 *
 * The chain starts at its base frame (origin, tangent = local z). Section i
 * (rest length L_i) is a piece of constant strain xi = [k; 0 0 lambda]
 * (body frame, per unit rest length): with k perpendicular to z such a
 * piece is a circular arc (or a straight line) of length lambda L_i that
 * turns its tangent by |k| L_i about k. From node x_i with tangent t_i, the
 * one arc that reaches node x_{i+1} lies in the plane of t_i and the chord
 * c = x_{i+1} - x_i: if theta is the angle between t_i and c (the tangent-
 * chord angle), the arc turns by 2 theta about t_i x c and is |c| theta /
 * sin(theta) long. The torsion kz and the shears are zero, so the material
 * frame is carried from section to section by parallel transport (the rod
 * starts untwisted), and the next section starts from the frame the arc
 * ends in. */
#ifndef SB_ROD_SHAPE_H
#define SB_ROD_SHAPE_H

/* The point at rest arc length s of a polyline of npt points pt (x y z each)
 * whose rest arc lengths are arc (increasing, arc[0] = 0): linear between
 * the points it falls between (the rest arc is spread evenly along each
 * polyline piece); s outside [arc[0], arc[npt-1]] takes the end point. */
void sb_polyline_point(int npt, const double *pt, const double *arc, double s, double out[3]);

/* The strains of nsec sections of rest lengths L (m) that take the chain
 * from node[0] = the base origin with tangent z through node[1..nsec]
 * (3 each, base frame). strain receives 6 per section, [kx ky kz ex ey ez]
 * in the section's body frame per unit rest length (kz = ex = ey = 0; ez
 * is the stretch lambda, 1 = unstretched). frame (may be NULL) receives the
 * 9 entries (row-major) of the frame at each of the nsec + 1 nodes.
 * Returns 0, or -1 with a message naming the section when a node cannot be
 * reached by an arc: it coincides with the previous one, or lies straight
 * behind it (the chord points against the tangent). */
int sb_rod_shape_strains(int nsec, const double *L, const double *node, double *strain, double *frame,
                         char *error, int error_size);

#endif

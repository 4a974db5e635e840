/* The MuJoCo-native arm (config key contact = native): the expansion adds the
 * soft instance as ordinary MuJoCo bodies instead of cusp-driven mocap disks,
 * so that MuJoCo's own contact solver handles it (issue 6's comparison).
 *
 * Discretization: N = disks + 1 rigid links per section, one per disk
 * interval. Link k carries disk k at its origin (local z = the backbone
 * tangent there) and the material from the middle of the interval before it
 * to the middle of the interval after it; the links are joined at the
 * interval midpoints. A constant strain xi over an interval of length l is
 * then one joint turning/sliding by xi * l between two disk frames, which is
 * exactly the relative pose of consecutive disks of a constant-curvature
 * section up to the order of the joint rotations (O(l^2) per joint): the
 * polygon converges to the soft arm as disks grow.
 *
 * Joints per link: one per strain of the soft model, rotations (hinges
 * about local x, y, z) then slides, the whole order reversed on every other
 * link (each order errs at first order in the joint size, oppositely: the
 * torsion ab/2 of Rx(a) Ry(b) against exp(a x + b y), the stretch placed
 * after or before the turn; alternating leaves O(l^2)). PCC: kx ky ez = two
 * hinges and a slide (no torsion, no shear, as in PCC). Hinges, not a ball
 * joint: fixed tendons (the actuator map below) take only scalar joints, and
 * a ball's third rotation would be a torsion the soft model does not have.
 *
 * Matching (small deformations agree, and with native_joints section large
 * ones too): the soft model's generalized stiffness K (n x n, softbody's
 * own, in its coordinates q = T xi per section, T = Phi^-1) is
 * S = T^T K T per section in strain space; N equal joints j = xi * l
 * (l = L / N) store N/2 k j^2, so a joint gets k = S_cc N / L^2 (PCC: hinges
 * 1.5 K d^2 N, slide 3 K N; Cosserat: EI / l, EA / l). Damping D likewise,
 * on the joints (MuJoCo integrates joint damping implicitly; tendon damping
 * it does not under Euler). Masses and inertias integrate softbody's line
 * inertia (mass and cross-section inertia per unit length) over each link's
 * material, so body_subtreemass equals the section masses.
 *
 * Coordinates: every coordinate COORD is a fixed tendon INSTANCE/COORD whose
 * length is q = T xi_mean, xi_mean = (sum of the section's joints) / L: the
 * chamber elongation for PCC (coefficients d sin psi, -d cos psi, 1), the
 * mean strain for Cosserat. An actuated coordinate drives its tendon with a
 * <general> actuator INSTANCE/COORD (gear, ctrlrange as for the soft arm):
 * ctrl is still the generalized force on q, so schedules apply unchanged.
 *
 * native_joints section (default) ties each section's joints to its first
 * link's with joint equality constraints (constant strain per section: the
 * soft model's configuration space), and its springs are the soft K itself
 * on the coordinate tendons (stiffness K_aa, springlength 0), so the motions
 * the ties remove carry no spring stiff enough to need a smaller timestep;
 * free leaves every link on its own joint springs k (a pseudo-rigid rod with
 * the section's stiffness, e.g. EI = 1.5 K L d^2: differs from PCC under
 * loads that bend a section unevenly, such as gravity).
 *
 * Initial shape: key "initial" gives q0, hence xi0 and joint values
 * j0 = xi0 * l; the bodies are written in that pose with ref = j0 (so
 * qpos0 = j0 and mj_resetData returns to it; hinge refs in the spec's
 * angle unit, compiler.degree) and springref = 0 (the rest pose is straight). The
 * joint axes and anchors are written conjugated by the later joints' ref
 * transforms, so that MuJoCo's joint sequence reproduces the straight
 * chain's pose at j0 + dq exactly.
 *
 * Names (no mocap bodies and no INSTANCE/act site):
 *   body, geom  INSTANCE/disk{k}  (k = 0: welded to the mount, no joint)
 *   joint       INSTANCE/j{k}{kx|ky|kz|ex|ey|ez}  in body disk{k}, k >= 1
 *   site        INSTANCE/tip      on the last body
 *   tendon      INSTANCE/COORD    fixed, every coordinate
 *   actuator    INSTANCE/COORD    general, tendon transmission (actuated only)
 *   equality    joint, unnamed (section mode)
 *   contact/exclude  the instance's bodies pairwise (all pairs with
 *               self_contact 0, neighbours only with 1) and with the mount,
 *               as the soft arm never touches its mount or, by default, itself. */
#ifndef CUSP_NATIVE_H
#define CUSP_NATIVE_H

#include <mujoco/mujoco.h>

#include "config.h"

#define CUSP_NATIVE_RGBA_INIT {0.25f, 0.55f, 0.95f, 1.0f}

/* Adds instance c under its mount body `base` (which must be named) and its
 * tendons, actuators, equalities and excludes to spec. Elements take their
 * parent's default class, as MJCF children do. Returns 0, or -1 with a
 * message. */
int cusp_native_emit(mjSpec *spec, mjsBody *base, const cusp_instance_config *c, char *error,
                     int error_size);

/* Ids of the generated bodies, geoms, tendons, actuators and tip site of a
 * compiled native instance into c (disk mocap_id = -1). Returns 0 or -1. */
int cusp_native_resolve(const mjModel *m, cusp_instance_config *c, char *error, int error_size);

/* The coordinates q (tendon lengths) and their rates at d's qpos, qvel. */
void cusp_native_coords(const mjModel *m, const mjData *d, const cusp_instance_config *c,
                        double *q, double *v);

#endif

/* Config keys of a cusp.softbody instance (config.h): the key table and,
 * from it, defaults per model, parsing, validation, printing and the key
 * reference (docs/keys.md); the derived coordinates and disks. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>

#include "contact.h" /* SB_CONTACT_LCP_AUTO_MIN_N in lcp_matrix's text */
#include "rod_shape.h"
#include "state.h" /* the live keys' slots (cusp_live_key) */

static const char *const strain_names[6] = {"kx", "ky", "kz", "ex", "ey", "ez"}; /* SB_KX.. bits */

/* A strains mask as its words ("kx ky ez"). */
static const char *strain_text(int mask, char *buf, size_t n) {
  buf[0] = 0;
  for (int j = 0; j < 6; j++)
    if (mask & (1 << j)) snprintf(buf + strlen(buf), n - strlen(buf), "%s%s", buf[0] ? " " : "", strain_names[j]);
  return buf;
}

#define RANGE_MIN_WIDTH 1e-6 /* ctrlrange: hi - lo, the least an actuator can move in */

/* "instance "NAME": key "KEY": <message>"; key may be NULL. */
static int fail(const cusp_instance_config *c, const char *key, char *error, int error_size,
                const char *fmt, ...) {
  if (!error || error_size <= 0) return -1;
  int k = key ? snprintf(error, (size_t)error_size, "instance \"%s\": key \"%s\": ", c->name, key)
              : snprintf(error, (size_t)error_size, "instance \"%s\": ", c->name);
  if (k >= 0 && k < error_size) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(error + k, (size_t)(error_size - k), fmt, ap);
    va_end(ap);
  }
  return -1;
}

/* Next whitespace-separated token of *p: its length (0 at the end). */
static int token(const char **p, const char **tok) {
  const char *s = *p;
  while (isspace((unsigned char)*s)) s++;
  const char *e = s;
  while (*e && !isspace((unsigned char)*e)) e++;
  *tok = s;
  *p = e;
  return (int)(e - s);
}

static int count_tokens(const char *v) {
  const char *t;
  int n = 0;
  while (token(&v, &t)) n++;
  return n;
}

static int tok_is(const char *t, int len, const char *word) {
  return (int)strlen(word) == len && strncmp(t, word, (size_t)len) == 0;
}

/* Strict number: the whole token, finite. */
static int parse_number(const char *t, int len, double *out) {
  char buf[64];
  if (len <= 0 || len >= (int)sizeof buf) return -1;
  memcpy(buf, t, (size_t)len);
  buf[len] = 0;
  char *end;
  double v = strtod(buf, &end);
  if (end == buf || *end || !isfinite(v)) return -1;
  *out = v;
  return 0;
}

/* Strict decimal integer token. */
static int parse_integer(const char *t, int len, long *out) {
  char buf[32];
  if (len <= 0 || len >= (int)sizeof buf) return -1;
  memcpy(buf, t, (size_t)len);
  buf[len] = 0;
  char *end;
  errno = 0;
  long v = strtol(buf, &end, 10);
  if (end == buf || *end || errno == ERANGE) return -1;
  *out = v;
  return 0;
}

/* ---------- the key table ---------- */

#define FIELD(f) .offset = offsetof(cusp_instance_config, f)
#define GT0 .lo = 0, .lo_open = 1, .hi = HUGE_VAL
#define GE0 .lo = 0, .hi = HUGE_VAL
#define ANY .lo = -HUGE_VAL, .hi = HUGE_VAL
#define WORDS(w) .words = w, .nwords = (int)(sizeof w / sizeof w[0])
#define LIVE(slot) .live = 1 + (slot)
#define KEY_STR_(x) #x
#define KEY_STR(x) KEY_STR_(x) /* a macro's value in a doc string */

static const char *const w_model[] = {"pcc", "cosserat"};
static const char *const w_contact[] = {"lcp", "penalty", "native", "sap", "ncp"}; /* cusp_contact_kind */
static const char *const w_native_joints[] = {"section", "free"};
static const char *const w_solver[] = {"fb", "lemke", "pgs"}; /* sb_lcp_solver's order */
static const char *const w_lemke_form[] = {"tableau", "revised", "auto"}; /* SB_LCP_LEMKE_* */
static const char *const w_lcp_matrix[] = {"stored", "entries", "operator", "auto"}; /* SB_CONTACT_LCP_* */
static const char *const w_conditioning[] = {"qr", "ruiz", "tikhonov"}; /* CUSP_COND_* bits */
static const char *const w_end[] = {"free", "pin", "clamp"}; /* cusp_end_kind */

/* Every key, once, in declaration order: what the plugin declares to MuJoCo
 * (which refuses any other key) and what cusp_config_set accepts. Ranges
 * are chosen so that no soft-robot scene reaches them by accident while
 * 1e308, 1e-308, 4.9e-324 and 2^31 are refused (issue 19). */
static const cusp_key key_table[] = {
    {.name = "model", .kind = CUSP_KEY_ENUM, .unit = "", FIELD(model), WORDS(w_model),
     .def = {"pcc", "cosserat"},
     .doc = "the soft model: pcc = piecewise constant curvature, three chambers per section "
            "(the CUSP arm); cosserat = a Cosserat rod with piecewise constant strain. "
            "The default is pcc; the other keys' defaults follow the model"},
    {.name = "sections", .kind = CUSP_KEY_INT, .unit = "", FIELD(sections), .lo = 1,
     .hi = CUSP_MAX_SECTIONS, .def = {"3", "3"},
     .doc = "sections from the base to the tip (a cosserat rod's elements)"},
    {.name = "length", .kind = CUSP_KEY_SECTIONS, .unit = "m", FIELD(length),
     .count_offset = offsetof(cusp_instance_config, nlength), GT0, .plo = 1e-3, .phi = 10,
     .def = {"0.15", "0.15"},
     .doc = "rest length of each section: one value for all, or one per section (with a centerline: "
            "unset, the rod's rest length shared equally)"},
    {.name = "mass", .kind = CUSP_KEY_SECTIONS, .unit = "kg", FIELD(mass),
     .count_offset = offsetof(cusp_instance_config, nmass), GE0, .plo = 1e-4, .phi = 1e3,
     .zero = "cosserat: density x volume", .def = {"1.17 0.54 0.265", "0"},
     .doc = "mass of each section: one value for all, or one per section; pcc needs > 0. pcc's "
            "default is the 3-section CUSP arm (paper-figures.md): a pcc arm of another section "
            "count sets its masses"},
    {.name = "radius", .kind = CUSP_KEY_REAL, .unit = "m", FIELD(radius), GT0, .plo = 1e-4,
     .phi = 1, .def = {"0.025", "0.025"},
     .doc = "body radius: the sections' inertia; cosserat: the cross-section of stiffness and mass"},
    {.name = "disk_radius", .kind = CUSP_KEY_REAL, .unit = "m", FIELD(disk_radius), GT0,
     .plo = 1e-4, .phi = 1, .def = {"0.03", "0.03"}, .doc = "radius of the contact disks"},
    {.name = "disk_thickness", .kind = CUSP_KEY_REAL, .unit = "m", FIELD(disk_thickness), GT0,
     .plo = 1e-4, .phi = 1, .def = {"0.01", "0.01"}, .doc = "thickness of the contact disks"},
    {.name = "chamber_radius", .kind = CUSP_KEY_REAL, .unit = "m", FIELD(chamber_radius), GT0,
     .plo = 1e-4, .phi = 1, .def = {"0.015", NULL},
     .doc = "distance of the three chambers from the backbone (pcc)"},
    {.name = "disks", .kind = CUSP_KEY_INT, .unit = "", FIELD(disks), .lo = 0, .hi = 64,
     .def = {"6", "6"},
     .doc = "contact disks inside each section, besides the plate at its end and the base disk "
            "(at most 1024 disks in all; the contact workspaces grow with their square, "
            "docs/memory.md)"},
    {.name = "stiffness", .kind = CUSP_KEY_SECTIONS, .unit = "N/m", FIELD(stiffness),
     .count_offset = offsetof(cusp_instance_config, nstiffness), GE0, .plo = 1e-2, .phi = 1e7,
     .zero = "no spring", .def = {"265", NULL},
     .doc = "spring of each chamber, one value or one per section (pcc)"},
    {.name = "damping", .kind = CUSP_KEY_SECTIONS, .unit = "N*s/m", FIELD(damping),
     .count_offset = offsetof(cusp_instance_config, ndamping), GE0, .plo = 1e-3, .phi = 1e6,
     .zero = "undamped", .def = {"125", NULL},
     .doc = "damper of each chamber, one value or one per section (pcc)"},
    {.name = "young", .kind = CUSP_KEY_REAL, .unit = "Pa", FIELD(young), GT0, .plo = 1e2,
     .phi = 1e12, .def = {NULL, "1e6"}, .why = "from gels (100 Pa) to steel (2e11 Pa)",
     .doc = "Young's modulus of the rod (cosserat)"},
    {.name = "shear", .kind = CUSP_KEY_REAL, .unit = "Pa", FIELD(shear), GE0, .plo = 1e2,
     .phi = 1e12, .zero = "young/3, incompressible", .def = {NULL, "0"},
     .doc = "shear modulus of the rod (cosserat)"},
    {.name = "density", .kind = CUSP_KEY_REAL, .unit = "kg/m^3", FIELD(density), GT0, .plo = 1,
     .phi = 1e5, .def = {NULL, "1000"}, .why = "from foams to beyond the densest metal (22590 kg/m^3)",
     .doc = "density of the rod: its mass when mass is 0 (cosserat)"},
    {.name = "viscosity", .kind = CUSP_KEY_REAL, .unit = "Pa*s", FIELD(viscosity), GE0,
     .plo = 1e-3, .phi = 1e9, .zero = "none", .def = {NULL, "0"},
     .doc = "material viscosity: stress per strain rate (cosserat)"},
    {.name = "strains", .kind = CUSP_KEY_MASK, .unit = "", FIELD(strains), WORDS(strain_names),
     .def = {NULL, "kx ky ez"},
     .doc = "the strain coordinates of each section: curvatures kx ky kz (1/m), stretch and "
            "shears ex ey ez (cosserat)"},
    {.name = "friction", .kind = CUSP_KEY_REAL, .unit = "", FIELD(friction), GE0, .plo = 1e-4,
     .phi = 10, .zero = "frictionless", .def = {"0.5", "0.5"}, LIVE(CUSP_LIVE_FRICTION),
     .why = "measured Coulomb coefficients stay below about 2; 10 leaves room for adhesive skins",
     .doc = "Coulomb friction coefficient of the disks' contacts"},
    {.name = "pyramid", .kind = CUSP_KEY_INT, .unit = "", FIELD(pyramid), .lo = 3, .hi = 16,
     .def = {"4", "4"}, LIVE(CUSP_LIVE_PYRAMID), .doc = "friction directions of the friction pyramid; while running, at most the largest value the "
            "scene's arms were loaded with (the contact workspaces are sized for it)"},
    {.name = "align_friction", .kind = CUSP_KEY_FLAG, .unit = "", FIELD(align_friction), .def = {"0", "0"},
     .doc = "lcp contact: 1 turns each contact's first pyramid direction onto the friction it is about to "
            "need (against its slip while it slides, else along the friction it carried), so a slide or pull "
            "in any direction meets exactly mu fn; 0: fixed directions from the normal, the paper's pyramid "
            "(mu fn cos(pi/pyramid) at worst between directions, a sideways drift), which Lemke solves more "
            "reliably on long sliding arms (docs/capstan.md section 1)"},
    {.name = "friction_reference", .kind = CUSP_KEY_VECTOR, .unit = "", FIELD(friction_reference), ANY,
     .plo = 0, .phi = 1e6, .flags = CUSP_KEY_MAGNITUDE, .def = {"0 0 0", "0 0 0"},
     .doc = "a world direction \"x y z\" (any length) whose projection on a contact's tangent plane is "
            "its friction pyramid's first direction (sb_contact_frame): a pyramid that turns smoothly with "
            "the normal wherever the normal stays away from the direction, and that a planner can share "
            "(cusp-plan --friction-reference). 0 0 0 (default): the world axis least aligned with the "
            "normal, made tangent, which jumps where two of the normal's components pass each other. "
            "The lcp, sap and ncp contacts' frame (penalty has no pyramid); refused with contact native"},
    {.name = "contact", .kind = CUSP_KEY_ENUM, .unit = "", FIELD(contact), WORDS(w_contact),
     .def = {"lcp", "lcp"}, LIVE(CUSP_LIVE_CONTACT),
     .doc = "contact model: lcp (complementarity, paper 000), penalty (spring-damper), sap (Drake's "
            "convex compliant contact, seed 001) or ncp (smoothed NCP with the exact friction cone, "
            "seed 003), switchable while running; native = rigid links on spring joints in MuJoCo's "
            "own contact, at load only"},
    {.name = "native_joints", .kind = CUSP_KEY_ENUM, .unit = "", FIELD(native_joints),
     .def = {"section", "section"}, WORDS(w_native_joints),
     .doc = "contact native: the links of a section bend together (section) or each on its own "
            "springs (free)"},
    {.name = "solver", .kind = CUSP_KEY_ENUM, .unit = "", FIELD(solver), WORDS(w_solver),
     .def = {"lemke", "lemke"}, LIVE(CUSP_LIVE_SOLVER),
     .doc = "the first LCP solver of the fallback chain"},
    {.name = "fallback", .kind = CUSP_KEY_FLAG, .unit = "", FIELD(fallback), .def = {"1", "1"},
     LIVE(CUSP_LIVE_FALLBACK),
     .doc = "1: the other solvers follow when `solver` fails; 0: `solver` alone (the ablation)"},
    {.name = "warm_lemke", .kind = CUSP_KEY_FLAG, .unit = "", FIELD(warm_lemke), .def = {"0", "0"},
     .doc = "lcp contact: 1 starts Lemke, when the warm start's active set does not solve a step's LCP, "
            "from the warm start's complementary basis instead of from nothing (the part of that basis that "
            "pivots in; cold when none does or the warm path does not solve); fewer pivots on piles of rope "
            "lying still; each answer is verified, but with friction a lying rope's forces are not unique "
            "and the key may pick another valid one (docs/contact_scaling.md, session 23)"},
    {.name = "lemke_form", .kind = CUSP_KEY_ENUM, .unit = "", FIELD(lemke_form), WORDS(w_lemke_form),
     .def = {"auto", "auto"},
     .doc = "lcp contact: how Lemke keeps its basis: tableau (the condensed tableau, O(n^2) a pivot), "
            "revised (the basis's block over the k basic z's, factored by block LU, O(k^2 + n k) a pivot; "
            "the same pivoting rules, so the same path where round-off decides no tie; 1.4-4x fewer "
            "instructions on ropes' LCPs of hundreds of variables) or auto (revised on LCPs of at least "
            KEY_STR(SB_LCP_LEMKE_AUTO_MIN_N) " unknowns, the tableau below, where its fixed costs are the "
            "smaller, but on a pass that reads the operator alone (lcp_matrix), whose matrix the tableau "
            "would form; docs/contact_scaling.md, sessions 26 and 27)"},
    {.name = "lcp_matrix", .kind = CUSP_KEY_ENUM, .unit = "", FIELD(lcp_matrix), WORDS(w_lcp_matrix),
     .def = {"operator", "operator"},
     .doc = "lcp contact: what the solve reads from the kept contacts' Delassus blocks instead of the "
            "assembled n x n matrix: stored (nothing), entries (the conditioned LCP's entries that Lemke's "
            "revised form, the warm pivot and the acceptance test read: the same doubles, so the same answers "
            "bit for bit), operator (the entries and the products: another order of summation, so answers "
            "that pass the same acceptance test, equal up to round-off, and on a degenerate LCP possibly "
            "another of its solutions; the step then forms neither the matrix nor its conditioned copy, the "
            "fallback solvers FB and PGS included) or auto (each stage-1 pass operator from "
            KEY_STR(SB_CONTACT_LCP_AUTO_MIN_N) " unknowns on, where its time a step fell below stored's and "
            "the n x n matrices outgrow a cache, stored below, where it costs the least). The default, "
            "operator, keeps every step free of n x n matrices at 1-2 % more instructions than stored at a "
            "few dozen unknowns and no measurable time (issue 15, item 1; docs/contact_factor_design.md, "
            "docs/contact_scaling.md, sessions 34, 40 and 41)"},
    {.name = "conditioning", .kind = CUSP_KEY_MASK, .unit = "", FIELD(conditioning),
     WORDS(w_conditioning), .flags = CUSP_KEY_NONE,
     .def = {"qr ruiz tikhonov", "qr ruiz tikhonov"}, LIVE(CUSP_LIVE_CONDITIONING),
     .doc = "stages applied to each contact problem: rank selection (qr), Ruiz equilibration, "
            "Tikhonov regularization"},
    {.name = "eps_rank", .kind = CUSP_KEY_REAL, .unit = "", FIELD(eps_rank), .lo = 0, .hi = 1,
     .lo_open = 1, .hi_open = 1, .plo = 1e-15, .phi = 0.1, .def = {"1e-6", "1e-6"},
     LIVE(CUSP_LIVE_EPS_RANK),
     .why = "below machine precision rank selection keeps dependent normals; above 0.1 it drops "
            "independent ones",
     .doc = "rank selection's threshold, relative to |R11| of the pivoted QR"},
    {.name = "ruiz_iterations", .kind = CUSP_KEY_INT, .unit = "", FIELD(ruiz_iterations),
     .lo = 0, .hi = 100, .def = {"10", "10"}, LIVE(CUSP_LIVE_RUIZ_ITERATIONS),
     .doc = "sweeps of Ruiz equilibration"},
    {.name = "tikhonov", .kind = CUSP_KEY_REAL, .unit = "", FIELD(tikhonov), GE0, .plo = 1e-16,
     .phi = 1e-6, .zero = "off", .def = {"1e-10", "1e-10"}, LIVE(CUSP_LIVE_TIKHONOV),
     .why = "eps_W is added to an equilibrated diagonal of order 1 and one proximal re-solve "
            "leaves a bias of order eps_W^2, which the physical acceptance (1e-9 of |b|) must "
            "absorb: above about 1e-5 the contact solves stop converging (1e308 took 10,000 "
            "iterations per solve)",
     .doc = "Tikhonov regularization eps_W of the normal and sliding-bound diagonal"},
    {.name = "stabilization", .kind = CUSP_KEY_REAL, .unit = "", FIELD(stabilization), .lo = 0,
     .hi = 1, .lo_open = 1, .plo = 1e-3, .phi = 1, .def = {"0.2", "0.2"},
     LIVE(CUSP_LIVE_STABILIZATION), .doc = "fraction alpha of a penetration removed per step"},
    {.name = "push_speed", .kind = CUSP_KEY_REAL, .unit = "m/s", FIELD(push_speed), GT0, .plo = 1e-3,
     .phi = 1e4, .def = {"1", "1"},
     .why = "below 1 mm/s a penetration would linger for seconds; above 1e4 m/s nothing is held",
     .doc = "lcp and ncp contact: the fastest the stabilization pushes a penetration out (alpha depth / h "
            "otherwise, which grows with the depth found: a rod clamped with its disks 23 mm inside a "
            "floor was pushed out at 11.5 m/s, whipped and diverged; docs/contact_scaling.md, session "
            "36). Penetrations below push_speed h / alpha (5 mm at the defaults) are not affected"},
    {.name = "surface_layer", .kind = CUSP_KEY_REAL, .unit = "m", FIELD(surface_layer), GE0, .plo = 1e-10,
     .phi = 1e-4, .zero = "the paper's push-out from zero depth", .def = {"1e-8", "1e-8"},
     .why = "the layer only has to hold what a step's linearization leaves (nanometres on a rope at "
            "rest); above 0.1 mm a contact visibly sinks",
     .doc = "lcp contact: depth a penetration may reach before the stabilization pushes it out "
            "(at alpha of the excess a step), so that resting contacts rest: with 0 (the paper's term) a "
            "contact left a nanometre in is pushed out and one left above unloaded, and a rope lying on a "
            "plane jitters and re-solves its LCP cold every other step; with 1e-8 it rests, warm, 20x "
            "faster (docs/contact_scaling.md, session 36). The ncp model keeps the paper's term (its "
            "Newton stalled on contacts resting within the layer)"},
    {.name = "penalty_stiffness", .kind = CUSP_KEY_REAL, .unit = "N/m",
     FIELD(penalty_stiffness), GT0, .plo = 1, .phi = 1e8, .def = {"1e4", "1e4"},
     LIVE(CUSP_LIVE_PENALTY_STIFFNESS),
     .why = "from foam to a nearly rigid contact at millisecond steps",
     .doc = "contact spring of contact penalty"},
    {.name = "penalty_damping", .kind = CUSP_KEY_REAL, .unit = "N*s/m", FIELD(penalty_damping),
     GE0, .plo = 1e-3, .phi = 1e6, .zero = "undamped", .def = {"50", "50"},
     LIVE(CUSP_LIVE_PENALTY_DAMPING), .doc = "contact damper of contact penalty"},
    {.name = "sap_stiffness", .kind = CUSP_KEY_REAL, .unit = "N/m", FIELD(sap_stiffness), GT0, .plo = 1,
     .phi = 1e9, .def = {"1e5", "1e5"}, LIVE(CUSP_LIVE_SAP_STIFFNESS),
     .why = "from foam to steel-like; above what the step resolves SAP's near-rigid limit takes over",
     .doc = "contact sap: normal stiffness k of the compliant contact"},
    {.name = "sap_dissipation", .kind = CUSP_KEY_REAL, .unit = "s/m", FIELD(sap_dissipation), GE0,
     .plo = 1e-3, .phi = 1e3, .zero = "undamped (the implicit step still dissipates)", .def = {"10", "10"},
     LIVE(CUSP_LIVE_SAP_DISSIPATION),
     .doc = "contact sap: Hunt-Crossley dissipation d, f = k x (1 + d xdot), taken at the step's "
            "penetration (a damper k d x0)"},
    {.name = "sap_sigma", .kind = CUSP_KEY_REAL, .unit = "", FIELD(sap_sigma), GT0, .plo = 1e-6, .phi = 1,
     .def = {"1e-3", "1e-3"},
     .why = "sigma scales the friction regularization Rt = sigma w: a sticking contact creeps at "
            "Rt times its friction impulse",
     .doc = "contact sap: SAP's friction regularization sigma (Rt = sigma trace(W_ii) / 3)"},
    {.name = "sap_tolerance", .kind = CUSP_KEY_REAL, .unit = "", FIELD(sap_tolerance), GT0, .plo = 1e-12,
     .phi = 1e-2, .def = {"1e-6", "1e-6"},
     .doc = "contact sap: relative tolerance of Newton on the momentum balance"},
    {.name = "sap_iterations", .kind = CUSP_KEY_INT, .unit = "", FIELD(sap_iterations), .lo = 1, .hi = 1000,
     .def = {"100", "100"}, .doc = "contact sap: Newton iterations at most"},
    {.name = "ncp_smoothing", .kind = CUSP_KEY_REAL, .unit = "m/s", FIELD(ncp_smoothing), GT0, .plo = 1e-12,
     .phi = 1e-2, .def = {"1e-6", "1e-6"}, LIVE(CUSP_LIVE_NCP_SMOOTHING),
     .why = "the normal complementarity holds as s lambda_n v_n = e^2: above 1 cm/s contacts act "
            "before they touch",
     .doc = "contact ncp: smoothing e of the normal complementarity"},
    {.name = "ncp_friction_smoothing", .kind = CUSP_KEY_REAL, .unit = "", FIELD(ncp_friction_smoothing),
     GT0, .plo = 1e-9, .phi = 0.1, .def = {"1e-3", "1e-3"},
     .doc = "contact ncp: smoothing of the stick-slip switch (friction off by its square while sliding)"},
    {.name = "ncp_tolerance", .kind = CUSP_KEY_REAL, .unit = "m/s", FIELD(ncp_tolerance), GT0, .plo = 1e-14,
     .phi = 1e-3, .def = {"1e-9", "1e-9"}, .doc = "contact ncp: Newton stops at this residual"},
    {.name = "ncp_iterations", .kind = CUSP_KEY_INT, .unit = "", FIELD(ncp_iterations), .lo = 1, .hi = 1000,
     .def = {"50", "50"}, .doc = "contact ncp: Newton iterations at most"},
    {.name = "initial", .kind = CUSP_KEY_INITIAL, .unit = "m (pcc); 1/m, 1 (cosserat)",
     FIELD(initial_text), ANY, .plo = -100, .phi = 100, .def = {"", ""},
     .why = "no number beyond 100 is a coordinate of a real arm; each coordinate's own range "
            "(below) is checked once the model is known",
     .doc = "initial coordinates: one number per coordinate or NAME=VALUE pairs (s2c1=0.01); "
            "unset: straight"},
    {.name = "centerline", .kind = CUSP_KEY_POINTS, .unit = "m", FIELD(centerline),
     .count_offset = offsetof(cusp_instance_config, ncenterline), ANY, .plo = 0, .phi = 1e3,
     .flags = CUSP_KEY_MAGNITUDE, .def = {NULL, ""},
     .doc = "the rod's initial shape (cosserat), a polyline \"x y z, x y z, ...\" of 2 to 1024 points in "
            "the mount body's frame, the first at the mount's origin. The rod leaves its mount along the "
            "mount's z axis (its clamped base). The sections sit at equal rest arc length (or at the "
            "lengths `length` gives), each node on the polyline at its rest arc, and each section's "
            "initial strain is the circular arc that continues the tangent of the section before to the "
            "next node, stretched to reach it: the rod passes exactly through the nodes, untwisted "
            "(kz = 0: parallel transport). Point the mount's z along the polyline's tangent at its start "
            "(the first piece, for a polyline as fine as the sections or finer): a tangent off it makes "
            "the arcs' curvature alternate from section to section. Needs the strains the shape uses "
            "(kx ky to bend, ez to stretch); sets the initial strains, so not together with `initial`; "
            "the rest shape stays straight. Unset: straight along z"},
    {.name = "rest_arc", .kind = CUSP_KEY_NUMBERS, .unit = "m", FIELD(rest_arc),
     .count_offset = offsetof(cusp_instance_config, nrest_arc), GE0, .plo = 0, .phi = 1e3,
     .def = {NULL, ""},
     .doc = "the unstretched arc length to each centerline point, from 0, increasing, one per point: "
            "a rod that starts stretched (a cable hanging in equilibrium). Its last value is the rod's "
            "rest length (`length` unset, or agreeing with it). Unset: the polyline's own lengths "
            "(unstretched)"},
    {.name = "tip_force", .kind = CUSP_KEY_VECTOR, .unit = "N", FIELD(tip_force), ANY, .plo = 0,
     .phi = 1e6, .flags = CUSP_KEY_MAGNITUDE, .def = {"0 0 0", "0 0 0"},
     .doc = "a constant force \"fx fy fz\" in world axes at the tip (the end of the last section): "
            "its generalized force J^T f enters the implicit step's right-hand side. A dead load needs "
            "no stiffness term in the step matrix: the step's fixed points are the exact static "
            "equilibria, and its dependence on the shape is explicit like gravity's. A load at the "
            "base end is the mount body's (xfrc_applied)"},
    {.name = "tip_torque", .kind = CUSP_KEY_VECTOR, .unit = "N*m", FIELD(tip_torque), ANY, .plo = 0,
     .phi = 1e6, .flags = CUSP_KEY_MAGNITUDE, .def = {"0 0 0", "0 0 0"},
     .doc = "a constant moment \"tx ty tz\" in world axes at the tip, as `tip_force`"},
    {.name = "actuated", .kind = CUSP_KEY_ACTUATED, .unit = "", FIELD(actuated_text),
     .def = {"all", "all"},
     .doc = "coordinates driven by an actuator INSTANCE/COORD: all, none, or names/1-based numbers"},
    {.name = "gear", .kind = CUSP_KEY_REAL, .unit = "force/ctrl", FIELD(gear), ANY, .plo = 1e-6,
     .phi = 1e6, .flags = CUSP_KEY_NONZERO | CUSP_KEY_MAGNITUDE, .def = {"1", "1"},
     .why = "either sign; 0 is refused: it would disconnect every actuator",
     .doc = "generalized force per unit input of every actuator (N for pcc chambers)"},
    {.name = "ctrlrange", .kind = CUSP_KEY_RANGE, .unit = "ctrl", FIELD(ctrlrange), ANY,
     .plo = -1e6, .phi = 1e6, .def = {"-100 100", "-100 100"},
     .why = "hi - lo >= 1e-6: a range an actuator can move in",
     .doc = "control range of every actuator: the input (ctrl plus schedule or feedback) is "
            "clamped to it"},
    {.name = "self_contact", .kind = CUSP_KEY_FLAG, .unit = "", FIELD(self_contact),
     .def = {"0", "0"}, .doc = "1: contacts between the arm's own disks, neighbours included (any two that do not overlap "
            "when the arm is straight); 0: the arm passes through itself"},
    {.name = "contact_capacity", .kind = CUSP_KEY_INT, .unit = "", FIELD(contact_capacity), .lo = 0,
     .hi = CUSP_CONTACTS_PER_DISK * CUSP_MAX_DISKS, .zero = "8 per disk", .def = {"0", "0"},
     .doc = "the most contacts this arm's disks may hold in one step (against geoms, its own disks and "
            "the disks of the arms after it), at most 8 per disk (the plugin state's warm start holds that "
            "many); 0: 8 per disk. The contact workspaces are sized for the scene's total at load "
            "(docs/memory.md); a step that finds more solves what fits, drops the rest and says so "
            "(mjWARN_CONTACTFULL and the report's message, naming this key)"},
    {.name = "schedule", .kind = CUSP_KEY_SCHEDULE, .unit = "s, ctrl", FIELD(schedule),
     .def = {"none", "none"},
     .doc = "open-loop input added to the actuator's ctrl, piecewise linear in time, held "
            "outside the knots: entries "
            "\"COORD t0 u0 t1 u1 ...\" separated by ';'"},
    {.name = "feedback", .kind = CUSP_KEY_FEEDBACK, .unit = "ctrl/rad, ctrl*s/rad, rad, s",
     FIELD(feedback), .plo = 0, .phi = 1e6, .def = {"none", "none"},
     .why = "|kp|, |kd| <= 1e6 and |target| <= 1e3 (rad or m); ramps within 0 .. 1e6 s",
     .doc = "closed-loop input from a hinge or slide joint, added to the actuator's ctrl: "
            "entries \"COORD JOINT kp kd target "
            "[ramp_start ramp_end]\" separated by ';' (m for a slide)"},
    {.name = "end", .kind = CUSP_KEY_ENUM, .unit = "", FIELD(end), WORDS(w_end), .def = {"free", "free"},
     .doc = "the far end (the last section's tip): free; pin = its position held (rotation free); clamp = "
            "its position and orientation held; where it is in the initial configuration, fixed in "
            "`end_body`'s frame; solved with the contacts as equality rows of one problem (contact lcp only)"},
    {.name = "end_body", .kind = CUSP_KEY_BODY, .unit = "", FIELD(end_body), .def = {"world", "world"},
     .doc = "the MuJoCo body a pinned or clamped end is held to: world, a mocap body (a prescribed "
            "motion: move its mocap_pos/mocap_quat) or a body with joints (coupled both ways)"},
    {.name = "hold", .kind = CUSP_KEY_HOLD, .unit = "m", FIELD(hold), .def = {"none", "none"},
     .doc = "material points held, entries \"S pin|clamp [BODY]\" separated by ';' (at most 16): the "
            "backbone's point at arc length S from the base (0 < S <= the rest length; the point of "
            "cusp_backbone_point) held where it is in the initial configuration, fixed in BODY's frame "
            "(default world; a mocap body moves it, a body with joints is coupled both ways); pin = its "
            "position (MuJoCo's equality connect), clamp = position and orientation (weld). Each is 3 or 6 "
            "equality rows of the contact problem, solved exactly (no solref softness); dependent rows (a "
            "pin where a clamp is) are dropped. `end` is the hold at S = the rest length (contact lcp "
            "only)"},
    {.name = "teleport_speed", .kind = CUSP_KEY_REAL, .unit = "m/s", FIELD(teleport_speed), GT0, .plo = 1e-2,
     .phi = 1e4, .def = {"10", "10"},
     .why = "below 1 cm/s a slowly accelerated drive would be taken for jumps; above 1e4 m/s no jump would be seen",
     .doc = "a mocap mount, or a mocap body that carries a held point (keys `end_body`, `hold`), is "
            "given its last move over the step as its velocity (MuJoCo gives a mocap body none); a move "
            "whose velocity differs from the last step's by more than this (|dv| + |dw| times the rod's "
            "length; for a pin |dv| of the point alone, which holds the turn's w x arm) is a jump "
            "(teleport): that step takes no velocity from it, the arm rides on a jumped mount rigidly and "
            "a held point is pulled to its jumped anchor by its rows (key `pull_speed`). A steady "
            "motion, however fast, is no jump; the step after a jump is measured against the jump and "
            "against the motion before it. A reset (mj_resetData, a keyframe) starts with no velocity "
            "whatever the mocap bodies' poses"},
    {.name = "pull_speed", .kind = CUSP_KEY_REAL, .unit = "m/s", FIELD(pull_speed), GT0, .plo = 1e-3,
     .phi = 1e4, .def = {"10", "10"},
     .why = "below 1 mm/s a held point would crawl to its anchor; above 1e4 m/s the pull is not held at all",
     .doc = "a held point's rows (keys `end`, `hold`) remove its error from its anchor at `stabilization` "
            "of it per step, alpha |e| / h: after a jump of its anchor (or any far anchor) that is as fast "
            "as the jump. That correction is held to this speed (its turn to this over the rod's length), "
            "where the coupled solve's alpha forms it: a far anchor is approached at this speed, never "
            "passed"},
};

#define NKEY ((int)(sizeof key_table / sizeof key_table[0]))
_Static_assert(NKEY <= 64, "cusp_instance_config.given has 64 bits");
_Static_assert(NKEY < 256, "MuJoCo declares at most 255 attributes of a plugin");
_Static_assert(sizeof(cusp_model_kind) == sizeof(int) && sizeof(cusp_contact_kind) == sizeof(int) &&
                   sizeof(cusp_native_joints) == sizeof(int) && sizeof(sb_lcp_solver) == sizeof(int),
               "enum keys are stored as int");

const cusp_key *cusp_keys(int *n) {
  if (n) *n = NKEY;
  return key_table;
}

const cusp_key *cusp_key_find(const char *name) {
  for (int i = 0; name && i < NKEY; i++)
    if (!strcmp(name, key_table[i].name)) return &key_table[i];
  return NULL;
}

static const char *key_names[NKEY];
static once_flag key_names_once = ONCE_FLAG_INIT;
static void fill_key_names(void) {
  for (int i = 0; i < NKEY; i++) key_names[i] = key_table[i].name;
}

const char *const *cusp_config_keys(int *n) {
  call_once(&key_names_once, fill_key_names);
  if (n) *n = NKEY;
  return key_names;
}

static void *field_of(cusp_instance_config *c, const cusp_key *k) { return (char *)c + k->offset; }
static const void *cfield_of(const cusp_instance_config *c, const cusp_key *k) {
  return (const char *)c + k->offset;
}

/* ---------- ranges ---------- */

static int in_hard(const cusp_key *k, double v) {
  if (k->lo_open ? !(v > k->lo) : !(v >= k->lo)) return 0;
  if (k->hi_open ? !(v < k->hi) : !(v <= k->hi)) return 0;
  return !((k->flags & CUSP_KEY_NONZERO) && v == 0);
}

static int in_plausible(const cusp_key *k, double v) {
  if (v == 0 && k->zero) return 1;
  double a = (k->flags & CUSP_KEY_MAGNITUDE) ? fabs(v) : v;
  return a >= k->plo && a <= k->phi;
}

/* %g without the exponent's plus sign and leading zeros: 1e+07 -> 1e7, 1e-06 -> 1e-6 */
static const char *num(double v, char buf[32]) {
  char t[32];
  snprintf(t, sizeof t, "%g", v);
  char *e = strchr(t, 'e'), *o = buf;
  if (!e) return memcpy(buf, t, strlen(t) + 1);
  for (char *q = t; q <= e; q++) *o++ = *q;
  char *q = e + 1;
  if (*q == '-') *o++ = *q;
  if (*q == '+' || *q == '-') q++;
  while (*q == '0' && q[1]) q++;
  while ((*o++ = *q++)) {
  }
  return buf;
}

/* "> 0", ">= 0", "(0, 1]", "nonzero", "" (none) */
static void hard_text(const cusp_key *k, char *buf, size_t n) {
  char a[32], b[32];
  if (k->kind == CUSP_KEY_INT)
    snprintf(buf, n, "%s..%s", num(k->lo, a), num(k->hi, b));
  else if (k->flags & CUSP_KEY_NONZERO)
    snprintf(buf, n, "nonzero");
  else if (isinf(k->hi) && isinf(k->lo))
    snprintf(buf, n, "%s", "");
  else if (isinf(k->hi))
    snprintf(buf, n, "%s %s", k->lo_open ? ">" : ">=", num(k->lo, a));
  else
    snprintf(buf, n, "%c%s, %s%c", k->lo_open ? '(' : '[', num(k->lo, a), num(k->hi, b),
             k->hi_open ? ')' : ']');
}

/* "0.001 .. 10 m", "0 (undamped), or 0.001 .. 1e+06 N*s/m" */
static void plausible_text(const cusp_key *k, char *buf, size_t n) {
  char z[96] = "", u[48] = "";
  if (k->zero) snprintf(z, sizeof z, "0 (%s), or ", k->zero);
  if (k->unit[0] && k->kind != CUSP_KEY_INITIAL) snprintf(u, sizeof u, " %s", k->unit);
  char a[32], b[32], c[32], d[32];
  if ((k->flags & CUSP_KEY_MAGNITUDE) && k->plo == 0)
    snprintf(buf, n, "%s%s .. %s%s", z, num(-k->phi, a), num(k->phi, b), u);
  else if (k->flags & CUSP_KEY_MAGNITUDE)
    snprintf(buf, n, "%s%s .. %s or %s .. %s%s", z, num(-k->phi, a), num(-k->plo, b),
             num(k->plo, c), num(k->phi, d), u);
  else
    snprintf(buf, n, "%s%s .. %s%s", z, num(k->plo, a), num(k->phi, b), u);
}

/* A number of key k, as written (text, len): refused outside the hard and
 * the plausible range. entry > 0: inside that entry of a list key. */
static int check_number(cusp_instance_config *c, const cusp_key *k, const char *text, int len,
                        double v, char *error, int error_size) {
  char why[256];
  if (!in_hard(k, v)) {
    hard_text(k, why, sizeof why);
    return fail(c, k->name, error, error_size, "\"%.*s\" is out of range: must be %s", len, text,
                why);
  }
  if (!in_plausible(k, v)) {
    plausible_text(k, why, sizeof why);
    return fail(c, k->name, error, error_size,
                "\"%.*s\" is out of range: outside the plausible range %s%s%s%s", len, text, why,
                k->why ? " (" : "", k->why ? k->why : "", k->why ? ")" : "");
  }
  return 0;
}

/* The plausible initial coordinates, per coordinate (docs/keys.md). */
#define INITIAL_RANGE_TEXT                                                                        \
  "pcc: a chamber elongation of -0.5 .. 1 times its section's length; cosserat: curvature and "   \
  "twist (kx, ky, kz) within +-1/radius, shear (ex, ey) within +-1, stretch ez within -0.5 .. 1 " \
  "(a stretch of 0.5 .. 2)"

/* The plausible range of coordinate k of c (section k / per, component
 * comp), and why in words: a chamber cannot shorten by more than half of
 * its section nor more than double it; a rod bent or twisted tighter than
 * its own radius, sheared beyond 45 degrees or stretched outside 0.5 .. 2
 * is no shape of a real rod. */
static void initial_range(const cusp_instance_config *c, int k, int per, const int *comp, double *lo,
                          double *hi, char *why, size_t n) {
  int section = k / per;
  if (c->model == CUSP_MODEL_PCC) {
    double L = c->length[section];
    *lo = -0.5 * L;
    *hi = L;
    snprintf(why, n, "a chamber elongation of -0.5 .. 1 times section %d's length %g m", section + 1, L);
    return;
  }
  int j = comp[k % per];
  if (j < 3) {
    *hi = 1 / c->radius;
    *lo = -*hi;
    snprintf(why, n, "a curvature or twist within +-1/radius, radius %g m: bent tighter, the rod would wrap "
             "inside its own radius", c->radius);
  } else if (j < 5) {
    *lo = -1;
    *hi = 1;
    snprintf(why, n, "a shear within +-1, 45 degrees");
  } else {
    *lo = -0.5;
    *hi = 1;
    snprintf(why, n, "a stretch 1 + ez of 0.5 .. 2");
  }
}

/* Syntax of "initial" (names are resolved by finish): numbers, or NAME=VALUE. */
static int check_initial(cusp_instance_config *c, const cusp_key *k, const char *value, char *error,
                         int error_size) {
  const char *p = value, *t;
  int len, pairs = strchr(value, '=') != NULL;
  while ((len = token(&p, &t))) {
    double v;
    if (pairs) {
      const char *eq = memchr(t, '=', (size_t)len);
      if (!eq || eq == t)
        return fail(c, "initial", error, error_size,
                    "\"%.*s\" is not NAME=VALUE (use either all numbers or all NAME=VALUE pairs)",
                    len, t);
      int vlen = len - (int)(eq + 1 - t);
      if (parse_number(eq + 1, vlen, &v))
        return fail(c, "initial", error, error_size, "\"%.*s\" is not a number", vlen, eq + 1);
      if (check_number(c, k, eq + 1, vlen, v, error, error_size)) return -1;
    } else if (parse_number(t, len, &v)) {
      return fail(c, "initial", error, error_size, "\"%.*s\" is not a number", len, t);
    } else if (check_number(c, k, t, len, v, error, error_size)) {
      return -1;
    }
  }
  return 0;
}

/* ---------- list-valued keys: "schedule" and "feedback" ----------
 * entries separated by ';', each starting with a coordinate (name or
 * 1-based number, resolved by finish); "none" or "" = no entries. Setting
 * the key replaces the whole list. */

/* The entry's text for messages: trimmed, at most ~40 characters. */
static void entry_text(const char *e, int len, char *out, size_t n) {
  while (len > 0 && isspace((unsigned char)*e)) e++, len--;
  while (len > 0 && isspace((unsigned char)e[len - 1])) len--;
  if ((size_t)len < n)
    snprintf(out, n, "%.*s", len, e);
  else
    snprintf(out, n, "%.*s...", (int)n - 4, e);
}

/* "instance "NAME": key "KEY", entry K ("TEXT"): <message>" */
static int fail_entry(const cusp_instance_config *c, const char *key, int entry, const char *text,
                      char *error, int error_size, const char *fmt, ...) {
  if (!error || error_size <= 0) return -1;
  int k = snprintf(error, (size_t)error_size, "instance \"%s\": key \"%s\", entry %d (\"%s\"): ",
                   c->name, key, entry, text);
  if (k >= 0 && k < error_size) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(error + k, (size_t)(error_size - k), fmt, ap);
    va_end(ap);
  }
  return -1;
}

/* Splits value at ';' and calls parse(entry) for each non-blank entry, in
 * order, with its 1-based number; returns the number of entries or -1. */
typedef int (*entry_parser)(cusp_instance_config *c, int slot, int entry, const char *e, int len,
                            char *error, int error_size);

static int for_entries(cusp_instance_config *c, const char *key, const char *value, int max,
                       entry_parser parse, char *error, int error_size) {
  const char *p = value, *t;
  int len = token(&p, &t);
  if (len == 0 || (tok_is(t, len, "none") && count_tokens(p) == 0)) return 0;
  int n = 0, entry = 0;
  for (const char *e = value;;) {
    const char *semi = strchr(e, ';');
    int elen = semi ? (int)(semi - e) : (int)strlen(e);
    entry++;
    int blank = 1;
    for (int i = 0; i < elen; i++) blank &= isspace((unsigned char)e[i]) != 0;
    if (!blank) {
      if (n == max) {
        char text[48];
        entry_text(e, elen, text, sizeof text);
        return fail_entry(c, key, entry, text, error, error_size, "more than %d entries", max);
      }
      if (parse(c, n, entry, e, elen, error, error_size)) return -1;
      n++;
    }
    if (!semi) break;
    e = semi + 1;
  }
  return n;
}

/* The entry's first word, a coordinate name or number (checked by finish). */
static int entry_coord(cusp_instance_config *c, const char *key, int entry, const char *e, int len,
                       const char *form, char *name, size_t nname, const char **rest,
                       char *error, int error_size) {
  char text[48];
  entry_text(e, len, text, sizeof text);
  const char *t = e;
  while (t < e + len && isspace((unsigned char)*t)) t++;
  const char *w = t;
  while (w < e + len && !isspace((unsigned char)*w)) w++;
  if ((size_t)(w - t) >= nname)
    return fail_entry(c, key, entry, text, error, error_size,
                      "\"%.*s\" is not a coordinate name (expected %s)", (int)(w - t), t, form);
  memcpy(name, t, (size_t)(w - t));
  name[w - t] = 0;
  *rest = w;
  return 0;
}

static int parse_schedule(cusp_instance_config *c, int slot, int entry, const char *e, int len,
                          char *error, int error_size) {
  static const char form[] = "\"COORD t0 u0 t1 u1 ...\"";
  cusp_schedule s;
  memset(&s, 0, sizeof s);
  s.coord = -1;
  s.entry = entry;
  entry_text(e, len, s.text, sizeof s.text);
  const char *p;
  if (entry_coord(c, "schedule", entry, e, len, form, s.name, sizeof s.name, &p, error,
                  error_size))
    return -1;
  int n = 0, tl;
  const char *t;
  char buf[4096];
  int rlen = len - (int)(p - e);
  if (rlen >= (int)sizeof buf)
    return fail_entry(c, "schedule", entry, s.text, error, error_size, "entry too long");
  memcpy(buf, p, (size_t)rlen);
  buf[rlen] = 0;
  p = buf;
  while ((tl = token(&p, &t))) {
    double v;
    if (n == 2 * CUSP_MAX_KNOTS)
      return fail_entry(c, "schedule", entry, s.text, error, error_size, "more than %d knots",
                        CUSP_MAX_KNOTS);
    if (parse_number(t, tl, &v))
      return fail_entry(c, "schedule", entry, s.text, error, error_size,
                        "\"%.*s\" is not a number (expected %s)", tl, t, form);
    if (n % 2 == 0) {
      if (n > 0 && !(v > s.t[n / 2 - 1]))
        return fail_entry(c, "schedule", entry, s.text, error, error_size,
                          "times must be strictly increasing (%.*s after %g)", tl, t,
                          s.t[n / 2 - 1]);
      s.t[n / 2] = v;
    } else {
      s.u[n / 2] = v;
    }
    n++;
  }
  if (n == 0 || n % 2)
    return fail_entry(c, "schedule", entry, s.text, error, error_size,
                      "expected %s: the coordinate and an even count of numbers", form);
  s.nknot = n / 2;
  c->schedule[slot] = s;
  return 0;
}

#define FEEDBACK_MAX_TARGET 1e3 /* rad or m */
#define FEEDBACK_MAX_TIME 1e6   /* s */

static int parse_feedback(cusp_instance_config *c, int slot, int entry, const char *e, int len,
                          char *error, int error_size) {
  static const char form[] = "\"COORD JOINT kp kd target [ramp_start ramp_end]\"";
  cusp_feedback f;
  memset(&f, 0, sizeof f);
  f.coord = f.schedule = f.qpos_adr = f.dof_adr = -1;
  f.entry = entry;
  entry_text(e, len, f.text, sizeof f.text);
  const char *p;
  if (entry_coord(c, "feedback", entry, e, len, form, f.name, sizeof f.name, &p, error,
                  error_size))
    return -1;
  char buf[1024];
  int rlen = len - (int)(p - e);
  if (rlen >= (int)sizeof buf)
    return fail_entry(c, "feedback", entry, f.text, error, error_size, "entry too long");
  memcpy(buf, p, (size_t)rlen);
  buf[rlen] = 0;
  p = buf;
  int n = count_tokens(buf);
  if (n != 4 && n != 6)
    return fail_entry(c, "feedback", entry, f.text, error, error_size, "expected %s", form);
  const char *t;
  int tl = token(&p, &t);
  double num[5];
  if (parse_number(t, tl, &num[0]) == 0)
    return fail_entry(c, "feedback", entry, f.text, error, error_size,
                      "the second word must be a joint name (expected %s)", form);
  if (tl >= (int)sizeof f.joint)
    return fail_entry(c, "feedback", entry, f.text, error, error_size,
                      "joint name \"%.*s\" longer than %d characters", tl, t,
                      (int)sizeof f.joint - 1);
  memcpy(f.joint, t, (size_t)tl);
  for (int i = 0; i < n - 1; i++) {
    tl = token(&p, &t);
    if (parse_number(t, tl, &num[i]))
      return fail_entry(c, "feedback", entry, f.text, error, error_size,
                        "\"%.*s\" is not a number (expected %s)", tl, t, form);
  }
  /* plausible values (the key's table entry says why) */
  const cusp_key *k = cusp_key_find("feedback");
  static const char *const what[] = {"kp", "kd", "target", "ramp_start", "ramp_end"};
  for (int i = 0; i < n - 1; i++) {
    double lim = i < 2 ? k->phi : i == 2 ? FEEDBACK_MAX_TARGET : FEEDBACK_MAX_TIME;
    if (i < 3 ? !(fabs(num[i]) <= lim) : !(num[i] >= 0 && num[i] <= lim))
      return fail_entry(c, "feedback", entry, f.text, error, error_size,
                        "%s = %g is out of range: outside the plausible range %g .. %g (%s)",
                        what[i], num[i], i < 3 ? -lim : 0, lim, k->why);
  }
  f.kp = num[0];
  f.kd = num[1];
  f.target = num[2];
  if (n == 6) {
    if (!(num[3] < num[4]))
      return fail_entry(c, "feedback", entry, f.text, error, error_size,
                        "ramp %g .. %g: must have ramp_start < ramp_end", num[3], num[4]);
    f.ramped = 1;
    f.ramp[0] = num[3];
    f.ramp[1] = num[4];
  }
  c->feedback[slot] = f;
  return 0;
}

static int parse_hold(cusp_instance_config *c, int slot, int entry, const char *e, int len, char *error,
                      int error_size) {
  static const char form[] = "\"S pin|clamp [BODY]\"";
  cusp_hold hd;
  memset(&hd, 0, sizeof hd);
  hd.entry = entry;
  hd.section = hd.body_id = -1;
  entry_text(e, len, hd.text, sizeof hd.text);
  char buf[256];
  if (len >= (int)sizeof buf) return fail_entry(c, "hold", entry, hd.text, error, error_size, "entry too long");
  memcpy(buf, e, (size_t)len);
  buf[len] = 0;
  int n = count_tokens(buf);
  if (n != 2 && n != 3) return fail_entry(c, "hold", entry, hd.text, error, error_size, "expected %s", form);
  const char *p = buf, *t;
  int tl = token(&p, &t);
  if (parse_number(t, tl, &hd.s))
    return fail_entry(c, "hold", entry, hd.text, error, error_size,
                      "\"%.*s\" is not an arc length in m (expected %s)", tl, t, form);
  if (!(hd.s > 0))
    return fail_entry(c, "hold", entry, hd.text, error, error_size,
                      "S = %g is out of range: must be > 0 (the base, S = 0, is the mount's)", hd.s);
  tl = token(&p, &t);
  if (tok_is(t, tl, "pin"))
    hd.kind = CUSP_END_PIN;
  else if (tok_is(t, tl, "clamp"))
    hd.kind = CUSP_END_CLAMP;
  else
    return fail_entry(c, "hold", entry, hd.text, error, error_size, "\"%.*s\" is not one of: pin clamp", tl, t);
  snprintf(hd.body, sizeof hd.body, "world");
  if (n == 3) {
    tl = token(&p, &t);
    if (tl >= CUSP_NAME)
      return fail_entry(c, "hold", entry, hd.text, error, error_size, "body name \"%.*s\" longer than %d characters",
                        tl, t, CUSP_NAME - 1);
    memcpy(hd.body, t, (size_t)tl);
    hd.body[tl] = 0;
  }
  c->hold[slot] = hd;
  return 0;
}

/* A list key (schedule, feedback): its entries parsed into a scratch copy
 * first, so that a failed set leaves c unchanged; then the copy's list (at
 * byte offset list in the configuration, entries of elem bytes) into c's
 * and its length into *count. */
static int set_entry_list(cusp_instance_config *c, const char *key, const char *value, entry_parser parse,
                          size_t list, size_t elem, int *count, char *error, int error_size) {
  const char *p = value, *t;
  int len = token(&p, &t);
  if (len == 0 || (tok_is(t, len, "none") && count_tokens(p) == 0)) {
    *count = 0;
    return 0;
  }
  cusp_instance_config *tmp = malloc(sizeof *tmp);
  if (!tmp) return fail(c, key, error, error_size, "out of memory");
  memcpy(tmp->name, c->name, sizeof tmp->name);
  int n = for_entries(tmp, key, value, CUSP_MAX_ENTRIES, parse, error, error_size);
  if (n >= 0) {
    memcpy((char *)c + list, (const char *)tmp + list, (size_t)n * elem);
    *count = n;
  }
  free(tmp);
  return n < 0 ? -1 : 0;
}

static int set_holds(cusp_instance_config *c, const char *value, char *error, int error_size) {
  const char *p = value, *t;
  int len = token(&p, &t);
  if (len == 0 || (tok_is(t, len, "none") && count_tokens(p) == 0)) {
    c->nhold = 0;
    return 0;
  }
  /* for_entries writes into c->hold: a failed set puts the old list back */
  cusp_hold tmp[CUSP_MAX_HOLDS];
  int nold = c->nhold;
  memcpy(tmp, c->hold, sizeof tmp);
  int n = for_entries(c, "hold", value, CUSP_MAX_HOLDS, parse_hold, error, error_size);
  if (n < 0) {
    memcpy(c->hold, tmp, sizeof tmp);
    c->nhold = nold;
    return -1;
  }
  c->nhold = n;
  return 0;
}

/* ---------- setting a key ---------- */

static void words_text(const cusp_key *k, char *buf, size_t n) {
  buf[0] = 0;
  for (int i = 0; i < k->nwords; i++)
    snprintf(buf + strlen(buf), n - strlen(buf), "%s%s", i ? " " : "", k->words[i]);
}

static int set_real(cusp_instance_config *c, const cusp_key *k, const char *value, double *out,
                    char *error, int error_size) {
  const char *p = value, *t;
  int len = token(&p, &t);
  double v;
  if (parse_number(t, len, &v) || count_tokens(p) != 0)
    return fail(c, k->name, error, error_size, "\"%s\" is not a number", value);
  if (check_number(c, k, t, len, v, error, error_size)) return -1;
  *out = v;
  return 0;
}

static int set_int(cusp_instance_config *c, const cusp_key *k, const char *value, int *out,
                   char *error, int error_size) {
  const char *p = value, *t;
  int len = token(&p, &t);
  long v;
  if (parse_integer(t, len, &v) || count_tokens(p) != 0)
    return fail(c, k->name, error, error_size, "\"%s\" is not an integer", value);
  if (v < k->lo || v > k->hi)
    return fail(c, k->name, error, error_size, "\"%s\" is out of range: must be an integer in %g..%g",
                value, k->lo, k->hi);
  *out = (int)v;
  return 0;
}

/* Per-section list: one value or one per section (count checked by finish). */
static int set_sections(cusp_instance_config *c, const cusp_key *k, const char *value,
                        char *error, int error_size) {
  double v[CUSP_MAX_SECTIONS];
  int n = 0, len;
  const char *p = value, *t;
  while ((len = token(&p, &t))) {
    if (n == CUSP_MAX_SECTIONS)
      return fail(c, k->name, error, error_size, "\"%s\": more than %d values", value,
                  CUSP_MAX_SECTIONS);
    if (parse_number(t, len, &v[n]))
      return fail(c, k->name, error, error_size, "\"%.*s\" is not a number", len, t);
    if (check_number(c, k, t, len, v[n], error, error_size)) return -1;
    n++;
  }
  if (n == 0) return fail(c, k->name, error, error_size, "\"%s\" is not a number", value);
  double *out = field_of(c, k);
  for (int i = 0; i < CUSP_MAX_SECTIONS; i++) out[i] = i < n ? v[i] : 0;
  *(int *)((char *)c + k->count_offset) = n;
  return 0;
}

/* "x y z, x y z, ...": at least 2 and at most CUSP_MAX_POINTS points of
 * three numbers each; "" unsets. Parsed into scratch: a failed set leaves c
 * unchanged. */
static int set_points(cusp_instance_config *c, const cusp_key *k, const char *value, char *error,
                      int error_size) {
  int *count = (int *)((char *)c + k->count_offset);
  if (count_tokens(value) == 0) {
    *count = 0;
    return 0;
  }
  double *pt = malloc(sizeof(double) * 3 * CUSP_MAX_POINTS);
  if (!pt) return fail(c, k->name, error, error_size, "out of memory");
  int n = 0, rc = 0;
  for (const char *e = value; !rc;) {
    const char *comma = strchr(e, ',');
    int elen = comma ? (int)(comma - e) : (int)strlen(e);
    char piece[256];
    if (n == CUSP_MAX_POINTS) {
      rc = fail(c, k->name, error, error_size, "more than %d points", CUSP_MAX_POINTS);
      break;
    }
    if (elen >= (int)sizeof piece) {
      rc = fail(c, k->name, error, error_size, "point %d: \"%.40s...\" is not \"x y z\"", n + 1, e);
      break;
    }
    memcpy(piece, e, (size_t)elen);
    piece[elen] = 0;
    if (!comma && n > 0 && count_tokens(piece) == 0) break; /* a trailing comma */
    const char *p = piece, *t;
    int len, m = 0;
    while (!rc && (len = token(&p, &t))) {
      double v;
      if (m == 3 || parse_number(t, len, &v))
        rc = fail(c, k->name, error, error_size, "point %d: \"%s\" is not \"x y z\" (three numbers; points are "
                  "separated by commas)", n + 1, piece);
      else if (check_number(c, k, t, len, v, error, error_size))
        rc = -1;
      else
        pt[3 * n + m++] = v;
    }
    if (!rc && m != 3)
      rc = fail(c, k->name, error, error_size, "point %d: \"%s\" is not \"x y z\" (three numbers; points are "
                "separated by commas)", n + 1, piece);
    n++;
    if (!comma) break;
    e = comma + 1;
  }
  if (!rc && n < 2)
    rc = fail(c, k->name, error, error_size, "\"%s\": %d point, a polyline needs at least 2", value, n);
  if (!rc) {
    memcpy(field_of(c, k), pt, sizeof(double) * 3 * n);
    *count = n;
  }
  free(pt);
  return rc;
}

/* Numbers from 0, strictly increasing (rest_arc; the count is checked
 * against the centerline by finish); "" unsets. */
static int set_numbers(cusp_instance_config *c, const cusp_key *k, const char *value, char *error,
                       int error_size) {
  int *count = (int *)((char *)c + k->count_offset);
  double *pt = malloc(sizeof(double) * CUSP_MAX_POINTS);
  if (!pt) return fail(c, k->name, error, error_size, "out of memory");
  const char *p = value, *t;
  int n = 0, len, rc = 0;
  while (!rc && (len = token(&p, &t))) {
    double v;
    if (n == CUSP_MAX_POINTS)
      rc = fail(c, k->name, error, error_size, "more than %d values", CUSP_MAX_POINTS);
    else if (parse_number(t, len, &v))
      rc = fail(c, k->name, error, error_size, "\"%.*s\" is not a number", len, t);
    else if (check_number(c, k, t, len, v, error, error_size))
      rc = -1;
    else if (n == 0 && v != 0)
      rc = fail(c, k->name, error, error_size, "starts at %.*s: the arc length to the first point is 0", len, t);
    else if (n > 0 && !(v > pt[n - 1]))
      rc = fail(c, k->name, error, error_size, "value %d (%.*s) is not above value %d (%g): rest arc lengths "
                "increase strictly", n + 1, len, t, n, pt[n - 1]);
    else
      pt[n++] = v;
  }
  if (!rc && n == 1)
    rc = fail(c, k->name, error, error_size, "\"%s\": one value, a centerline has at least 2 points", value);
  if (!rc) {
    memcpy(field_of(c, k), pt, sizeof(double) * n);
    *count = n;
  }
  free(pt);
  return rc;
}

/* Exactly three numbers. */
static int set_vector(cusp_instance_config *c, const cusp_key *k, const char *value, char *error,
                      int error_size) {
  const char *p = value, *t;
  double v[3];
  int n = 0, len;
  while ((len = token(&p, &t))) {
    if (n == 3 || parse_number(t, len, &v[n]))
      return fail(c, k->name, error, error_size, "\"%s\": expected three numbers \"x y z\"", value);
    if (check_number(c, k, t, len, v[n], error, error_size)) return -1;
    n++;
  }
  if (n != 3) return fail(c, k->name, error, error_size, "\"%s\": expected three numbers \"x y z\"", value);
  memcpy(field_of(c, k), v, sizeof v);
  return 0;
}

static int set_text(cusp_instance_config *c, const char *key, const char *value, char *out,
                    size_t size, char *error, int error_size) {
  size_t n = strlen(value);
  if (n >= size)
    return fail(c, key, error, error_size, "value too long (%zu characters, at most %zu)", n,
                size - 1);
  memcpy(out, value, n + 1);
  return 0;
}

static int set_value(cusp_instance_config *c, const cusp_key *k, const char *value, char *error,
                     int error_size) {
  const char *p = value, *t;
  int len;
  char words[96];
  void *field = field_of(c, k);
  switch (k->kind) {
    case CUSP_KEY_ENUM: {
      len = token(&p, &t);
      int which = -1;
      for (int i = 0; i < k->nwords && which < 0; i++)
        if (tok_is(t, len, k->words[i])) which = i;
      if (which < 0 || count_tokens(p)) {
        words_text(k, words, sizeof words);
        return fail(c, k->name, error, error_size, "\"%s\" is not one of: %s", value, words);
      }
      *(int *)field = which;
      return 0;
    }
    case CUSP_KEY_INT:
      return set_int(c, k, value, field, error, error_size);
    case CUSP_KEY_FLAG: {
      len = token(&p, &t);
      int v = tok_is(t, len, "1") || tok_is(t, len, "true")    ? 1
              : tok_is(t, len, "0") || tok_is(t, len, "false") ? 0
                                                               : -1;
      if (v < 0 || count_tokens(p))
        return fail(c, k->name, error, error_size, "\"%s\" is not one of: 0 1 (or false true)",
                    value);
      *(int *)field = v;
      return 0;
    }
    case CUSP_KEY_REAL:
      return set_real(c, k, value, field, error, error_size);
    case CUSP_KEY_SECTIONS:
      return set_sections(c, k, value, error, error_size);
    case CUSP_KEY_MASK: {
      int mask = 0, none = 0, n = 0, nonable = (k->flags & CUSP_KEY_NONE) != 0;
      words_text(k, words, sizeof words);
      while ((len = token(&p, &t))) {
        n++;
        int j = 0;
        while (j < k->nwords && !tok_is(t, len, k->words[j])) j++;
        if (j < k->nwords)
          mask |= 1 << j;
        else if (nonable && tok_is(t, len, "none"))
          none = 1;
        else
          return fail(c, k->name, error, error_size, "\"%.*s\" is not one of: %s%s", len, t,
                      words, nonable ? ", or none" : "");
      }
      if (n == 0 || (none && n > 1) || (!nonable && !mask))
        return fail(c, k->name, error, error_size, "\"%s\": expected %sany of %s", value,
                    nonable ? "\"none\" or " : "", words);
      *(int *)field = mask;
      return 0;
    }
    case CUSP_KEY_RANGE: {
      double r[2];
      int n = 0;
      const char *tt[2] = {NULL, NULL};
      int tl[2] = {0, 0};
      while ((len = token(&p, &t))) {
        if (n == 2 || parse_number(t, len, &r[n]))
          return fail(c, k->name, error, error_size, "\"%s\": expected two numbers \"lo hi\"",
                      value);
        tt[n] = t;
        tl[n++] = len;
      }
      if (n != 2)
        return fail(c, k->name, error, error_size, "\"%s\": expected two numbers \"lo hi\"", value);
      if (!(r[0] < r[1]))
        return fail(c, k->name, error, error_size, "\"%s\" is out of range: must have lo < hi",
                    value);
      for (int i = 0; i < 2; i++)
        if (check_number(c, k, tt[i], tl[i], r[i], error, error_size)) return -1;
      if (!(r[1] - r[0] >= RANGE_MIN_WIDTH))
        return fail(c, k->name, error, error_size,
                    "\"%s\" is out of range: hi - lo must be at least %g", value, RANGE_MIN_WIDTH);
      double *out = field;
      out[0] = r[0];
      out[1] = r[1];
      return 0;
    }
    case CUSP_KEY_INITIAL:
      if (check_initial(c, k, value, error, error_size)) return -1;
      return set_text(c, k->name, value, field, sizeof c->initial_text, error, error_size);
    case CUSP_KEY_ACTUATED:
      if (count_tokens(value) == 0)
        return fail(c, k->name, error, error_size,
                    "\"\": expected \"all\", \"none\" or coordinate names/numbers");
      return set_text(c, k->name, value, field, sizeof c->actuated_text, error, error_size);
    case CUSP_KEY_SCHEDULE:
      return set_entry_list(c, "schedule", value, parse_schedule, offsetof(cusp_instance_config, schedule),
                            sizeof c->schedule[0], &c->nschedule, error, error_size);
    case CUSP_KEY_FEEDBACK:
      return set_entry_list(c, "feedback", value, parse_feedback, offsetof(cusp_instance_config, feedback),
                            sizeof c->feedback[0], &c->nfeedback, error, error_size);
    case CUSP_KEY_HOLD:
      return set_holds(c, value, error, error_size);
    case CUSP_KEY_BODY: {
      len = token(&p, &t);
      const char *name = t;
      int name_len = len;
      if (len == 0 || token(&p, &t) != 0)
        return fail(c, k->name, error, error_size, "\"%s\": expected one body name", value);
      if (name_len >= CUSP_NAME)
        return fail(c, k->name, error, error_size, "\"%s\": a name of at most %d characters", value,
                    CUSP_NAME - 1);
      memcpy(field, name, (size_t)name_len);
      ((char *)field)[name_len] = 0;
      return 0;
    }
    case CUSP_KEY_POINTS:
      return set_points(c, k, value, error, error_size);
    case CUSP_KEY_NUMBERS:
      return set_numbers(c, k, value, error, error_size);
    case CUSP_KEY_VECTOR:
      return set_vector(c, k, value, error, error_size);
  }
  return fail(c, k->name, error, error_size, "no parser for this key");
}

void cusp_config_default(cusp_instance_config *c) {
  memset(c, 0, sizeof *c);
  for (int i = 0; i < NKEY; i++) {
    const cusp_key *k = &key_table[i];
    set_value(c, k, k->def[0] ? k->def[0] : k->def[1], NULL, 0);
  }
  c->given = 0;
  c->base_body_id = -1;
  c->end_body_id = -1;
  /* The defaults are consistent, so derive coordinates and disks right away. */
  char unused[8];
  cusp_config_finish(c, unused, sizeof unused);
}

int cusp_config_set(cusp_instance_config *c, const char *key, const char *value, char *error,
                    int error_size) {
  if (!key) return fail(c, NULL, error, error_size, "config without a key");
  const cusp_key *k = cusp_key_find(key);
  if (!k) return fail(c, NULL, error, error_size, "unknown key \"%s\"", key);
  if (!value) return fail(c, key, error, error_size, "no value");
  if (set_value(c, k, value, error, error_size)) return -1;
  c->given |= 1ULL << (k - key_table);
  return 0;
}

/* The keys not set take the model's default (a cosserat rod does not
 * inherit the pcc arm's masses: issue 19). */
static void model_defaults(cusp_instance_config *c) {
  int m = c->model == CUSP_MODEL_COSSERAT;
  for (int i = 0; i < NKEY; i++) {
    const cusp_key *k = &key_table[i];
    if ((c->given >> i & 1) || k->offset == offsetof(cusp_instance_config, model)) continue;
    if (k->def[0] && k->def[1] && strcmp(k->def[0], k->def[1])) set_value(c, k, k->def[m], NULL, 0);
  }
}

/* ---------- printing a value ---------- */

/* Appends to out; -1 once it no longer fits. */
static int put(char *out, int size, int *at, const char *fmt, ...) {
  if (*at < 0 || *at >= size) return *at = -1;
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(out + *at, (size_t)(size - *at), fmt, ap);
  va_end(ap);
  if (k < 0 || k >= size - *at) return *at = -1;
  *at += k;
  return 0;
}

int cusp_config_format(const cusp_instance_config *c, const cusp_key *k, char *out, int size) {
  if (!out || size <= 0) return -1;
  out[0] = 0;
  if (!c || !k) return -1;
  int at = 0;
  const void *f = cfield_of(c, k);
  switch (k->kind) {
    case CUSP_KEY_ENUM: {
      int v = *(const int *)f;
      put(out, size, &at, "%s", v >= 0 && v < k->nwords ? k->words[v] : "?");
      break;
    }
    case CUSP_KEY_INT:
    case CUSP_KEY_FLAG:
      put(out, size, &at, "%d", *(const int *)f);
      break;
    case CUSP_KEY_REAL:
      put(out, size, &at, "%.17g", *(const double *)f);
      break;
    case CUSP_KEY_SECTIONS: {
      int n = *(const int *)((const char *)c + k->count_offset);
      for (int i = 0; i < n && i < CUSP_MAX_SECTIONS; i++)
        put(out, size, &at, "%s%.17g", i ? " " : "", ((const double *)f)[i]);
      break;
    }
    case CUSP_KEY_MASK: {
      int v = *(const int *)f, first = 1;
      for (int i = 0; i < k->nwords; i++)
        if (v & (1 << i)) {
          put(out, size, &at, "%s%s", first ? "" : " ", k->words[i]);
          first = 0;
        }
      if (first) put(out, size, &at, "none");
      break;
    }
    case CUSP_KEY_RANGE:
      put(out, size, &at, "%.17g %.17g", ((const double *)f)[0], ((const double *)f)[1]);
      break;
    case CUSP_KEY_INITIAL:
    case CUSP_KEY_ACTUATED:
    case CUSP_KEY_BODY:
      put(out, size, &at, "%s", (const char *)f);
      break;
    case CUSP_KEY_SCHEDULE:
      for (int i = 0; i < c->nschedule; i++) {
        const cusp_schedule *s = &c->schedule[i];
        put(out, size, &at, "%s%s", i ? "; " : "", s->name);
        for (int j = 0; j < s->nknot; j++) put(out, size, &at, " %.17g %.17g", s->t[j], s->u[j]);
      }
      if (!c->nschedule) put(out, size, &at, "none");
      break;
    case CUSP_KEY_FEEDBACK:
      for (int i = 0; i < c->nfeedback; i++) {
        const cusp_feedback *b = &c->feedback[i];
        put(out, size, &at, "%s%s %s %.17g %.17g %.17g", i ? "; " : "", b->name, b->joint, b->kp,
            b->kd, b->target);
        if (b->ramped) put(out, size, &at, " %.17g %.17g", b->ramp[0], b->ramp[1]);
      }
      if (!c->nfeedback) put(out, size, &at, "none");
      break;
    case CUSP_KEY_HOLD:
      for (int i = 0; i < c->nhold; i++) {
        const cusp_hold *hd = &c->hold[i];
        put(out, size, &at, "%s%.17g %s %s", i ? "; " : "", hd->s, w_end[hd->kind], hd->body);
      }
      if (!c->nhold) put(out, size, &at, "none");
      break;
    case CUSP_KEY_POINTS: {
      int n = *(const int *)((const char *)c + k->count_offset);
      const double *x = f;
      for (int i = 0; i < n; i++)
        put(out, size, &at, "%s%.17g %.17g %.17g", i ? ", " : "", x[3 * i], x[3 * i + 1], x[3 * i + 2]);
      break;
    }
    case CUSP_KEY_NUMBERS: {
      int n = *(const int *)((const char *)c + k->count_offset);
      for (int i = 0; i < n; i++) put(out, size, &at, "%s%.17g", i ? " " : "", ((const double *)f)[i]);
      break;
    }
    case CUSP_KEY_VECTOR: {
      const double *x = f;
      put(out, size, &at, "%.17g %.17g %.17g", x[0], x[1], x[2]);
      break;
    }
  }
  return at < 0 ? -1 : 0;
}

double cusp_key_number(const cusp_instance_config *c, const cusp_key *k) {
  const void *f = cfield_of(c, k);
  return k->kind == CUSP_KEY_REAL ? *(const double *)f : (double)*(const int *)f;
}

void cusp_key_set_number(cusp_instance_config *c, const cusp_key *k, double v) {
  void *f = field_of(c, k);
  if (k->kind == CUSP_KEY_REAL)
    *(double *)f = v;
  else
    *(int *)f = (int)v;
}

/* ---------- the key reference ---------- */

/* A Markdown table cell: '|' escaped. */
static void cell(FILE *out, const char *s) {
  for (; *s; s++) {
    if (*s == '|') fputc('\\', out);
    fputc(*s, out);
  }
}

static void value_syntax(const cusp_key *k, char *buf, size_t n) {
  char w[128] = "";
  for (int i = 0; i < k->nwords; i++)
    snprintf(w + strlen(w), sizeof w - strlen(w), "%s`%s`", i ? " " : "", k->words[i]);
  switch (k->kind) {
    case CUSP_KEY_ENUM: snprintf(buf, n, "one of %s", w); break;
    case CUSP_KEY_INT: snprintf(buf, n, "integer"); break;
    case CUSP_KEY_FLAG: snprintf(buf, n, "`0` or `1`"); break;
    case CUSP_KEY_REAL: snprintf(buf, n, "number"); break;
    case CUSP_KEY_SECTIONS: snprintf(buf, n, "number, or one per section"); break;
    case CUSP_KEY_MASK:
      snprintf(buf, n, "any of %s%s", w, k->flags & CUSP_KEY_NONE ? ", or `none`" : "");
      break;
    case CUSP_KEY_RANGE: snprintf(buf, n, "`lo hi`"); break;
    case CUSP_KEY_INITIAL: snprintf(buf, n, "numbers, or `NAME=VALUE` pairs"); break;
    case CUSP_KEY_ACTUATED: snprintf(buf, n, "`all`, `none`, or coordinates"); break;
    case CUSP_KEY_SCHEDULE: snprintf(buf, n, "`;`-separated entries, or `none`"); break;
    case CUSP_KEY_FEEDBACK: snprintf(buf, n, "`;`-separated entries, or `none`"); break;
    case CUSP_KEY_HOLD: snprintf(buf, n, "`;`-separated entries, or `none`"); break;
    case CUSP_KEY_BODY: snprintf(buf, n, "a body name, or `world`"); break;
    case CUSP_KEY_POINTS: snprintf(buf, n, "`x y z, x y z, ...`"); break;
    case CUSP_KEY_NUMBERS: snprintf(buf, n, "numbers"); break;
    case CUSP_KEY_VECTOR: snprintf(buf, n, "`x y z`"); break;
  }
}

static void default_cell(FILE *out, const cusp_key *k, int model) {
  const char *d = k->def[model];
  if (!d)
    fputs("—", out);
  else if (!d[0])
    fputs("(unset)", out);
  else {
    fprintf(out, "`%s`", d);
    if (k->zero && !strcmp(d, "0")) fprintf(out, " (%s)", k->zero);
  }
}

static void range_cells(FILE *out, const cusp_key *k) {
  char buf[256];
  switch (k->kind) {
    case CUSP_KEY_INT:
    case CUSP_KEY_REAL:
    case CUSP_KEY_SECTIONS:
      hard_text(k, buf, sizeof buf);
      fprintf(out, " %s |", buf[0] ? buf : "finite");
      break;
    case CUSP_KEY_RANGE: fputs(" lo < hi |", out); break;
    case CUSP_KEY_INITIAL: fputs(" one per coordinate, or names |", out); break;
    case CUSP_KEY_SCHEDULE: fputs(" times increasing, u within `ctrlrange` |", out); break;
    case CUSP_KEY_FEEDBACK: fputs(" a hinge or slide joint |", out); break;
    case CUSP_KEY_HOLD: fputs(" 0 < S <= the rest length; at most 16 entries |", out); break;
    case CUSP_KEY_BODY: fputs(" a body of the scene |", out); break;
    case CUSP_KEY_POINTS: fputs(" 2..1024 points, the first at the origin |", out); break;
    case CUSP_KEY_NUMBERS: fputs(" one per centerline point: 0, then increasing |", out); break;
    case CUSP_KEY_VECTOR: fputs(" finite |", out); break;
    default: fputs(" — |", out); break;
  }
  if (k->kind == CUSP_KEY_INITIAL) {
    fputc(' ', out);
    cell(out, INITIAL_RANGE_TEXT);
    fputs(" |", out);
  } else if (k->kind == CUSP_KEY_REAL || k->kind == CUSP_KEY_SECTIONS || k->kind == CUSP_KEY_RANGE ||
             k->kind == CUSP_KEY_POINTS || k->kind == CUSP_KEY_NUMBERS || k->kind == CUSP_KEY_VECTOR) {
    plausible_text(k, buf, sizeof buf);
    fputc(' ', out);
    cell(out, buf);
    if (k->kind == CUSP_KEY_RANGE || k->kind == CUSP_KEY_POINTS || k->kind == CUSP_KEY_NUMBERS ||
        k->kind == CUSP_KEY_VECTOR)
      fputs(" each", out);
    fputs(" |", out);
  } else if (k->kind == CUSP_KEY_FEEDBACK) {
    fputc(' ', out);
    cell(out, k->why);
    fputs(" |", out);
  } else {
    fputs(" — |", out);
  }
}

void cusp_keys_markdown(FILE *out) {
  fputs("# cusp.softbody keys\n\n"
        "<!-- Generated by `cusp-keys --markdown` from the key table in plugin/config.c. Do not\n"
        "     edit: the test loader_keys fails when this file differs from the program's output.\n"
        "     Regenerate: build/cusp-keys --markdown > docs/keys.md -->\n\n"
        "Every key of a cusp.softbody instance (DESIGN §6):\n\n"
        "```xml\n<instance name=\"arm\">\n  <config key=\"sections\" value=\"3\"/>\n</instance>\n"
        "```\n\n"
        "and of `--set INSTANCE.KEY=VALUE` (cusp-sim, cusp-expand, cusp.view) and `cusp_load_with`.\n\n"
        "- **Defaults follow the model**: the two default columns are a `pcc` and a `cosserat`\n"
        "  instance's; — means that model does not use the key. A cosserat rod does not inherit\n"
        "  the pcc arm's masses: it weighs density x volume unless `mass` is set.\n"
        "- **Range** is what a value must satisfy to mean anything; **plausible** is what a soft\n"
        "  robot can have (no scene reaches it by accident; 1e308, 1e-308, 4.9e-324 and 2^31 are\n"
        "  outside). A value outside either is refused when the scene loads, with a message\n"
        "  naming the instance, key, value and range, e.g.\n",
        out);
  cusp_instance_config *c = malloc(sizeof *c);
  if (c) {
    char msg[512];
    cusp_config_default(c);
    snprintf(c->name, sizeof c->name, "arm");
    cusp_config_set(c, "length", "1e308", msg, sizeof msg);
    fprintf(out, "  `%s`.\n", msg);
    free(c);
  }
  fputs("- **Live** keys change while running (`cusp_set`, `cusp.set`, the viewer's keys); the\n"
        "  others are fixed when the scene loads.\n"
        "- Per-section keys take one value for every section or one per section; coordinates are\n"
        "  named `s2c1` (pcc: section 2, chamber 1) or `s1kx` (cosserat: section 1, strain kx), or\n"
        "  numbered from 1.\n\n"
        "| key | value | unit | default pcc | default cosserat | range | plausible | live | meaning |\n"
        "|---|---|---|---|---|---|---|---|---|\n",
        out);
  for (int i = 0; i < NKEY; i++) {
    const cusp_key *k = &key_table[i];
    char buf[256];
    value_syntax(k, buf, sizeof buf);
    fprintf(out, "| `%s` | %s | ", k->name, buf);
    cell(out, k->unit[0] ? k->unit : "—");
    fputs(" | ", out);
    default_cell(out, k, 0);
    fputs(" | ", out);
    default_cell(out, k, 1);
    fputs(" |", out);
    range_cells(out, k);
    fprintf(out, " %s | ", k->live ? "yes" : "");
    cell(out, k->doc);
    if (k->why && k->kind != CUSP_KEY_FEEDBACK) {
      fputs(". Plausible: ", out);
      cell(out, k->why);
    }
    fputs(" |\n", out);
  }
}

/* A coordinate by name or 1-based number; -1 if none. */
static int find_coord(const cusp_instance_config *c, const char *t, int len) {
  for (int i = 0; i < c->ncoord; i++)
    if (tok_is(t, len, c->coord[i])) return i;
  long k;
  if (!parse_integer(t, len, &k) && k >= 1 && k <= c->ncoord) return (int)k - 1;
  return -1;
}

/* The coordinate a schedule or feedback entry names (key, its entry number
 * and text), which must exist and be actuated: its index, or -1 with the
 * message. */
static int entry_actuated_coord(const cusp_instance_config *c, const char *key, const char *name, int entry,
                                const char *text, char *error, int error_size) {
  int k = find_coord(c, name, (int)strlen(name));
  if (k < 0)
    return fail_entry(c, key, entry, text, error, error_size, "no coordinate %s (this instance has %s .. %s, or 1..%d)",
                      name, c->coord[0], c->coord[c->ncoord - 1], c->ncoord);
  if (!c->actuated[k])
    return fail_entry(c, key, entry, text, error, error_size, "coordinate %s is not actuated (see key \"actuated\")",
                      c->coord[k]);
  return k;
}

static int bad_coord(const cusp_instance_config *c, const char *key, const char *t, int len,
                     char *error, int error_size) {
  return fail(c, key, error, error_size,
              "\"%.*s\" is not a coordinate of this instance (%s .. %s, or 1..%d)", len, t,
              c->coord[0], c->coord[c->ncoord - 1], c->ncoord);
}

static int finish_list(cusp_instance_config *c, const char *key, double *v, int n, char *error,
                       int error_size) {
  if (n == 1) {
    for (int i = 1; i < CUSP_MAX_SECTIONS; i++) v[i] = v[0];
    return 0;
  }
  if (n == c->sections) return 0;
  const cusp_key *k = cusp_key_find(key);
  if (!(c->given >> (k - key_table) & 1))
    return fail(c, key, error, error_size,
                "not set, and its default for model %s (\"%s\") has %d values but sections is %d: "
                "set it (one value or %d)",
                key_table[0].words[c->model], k->def[c->model == CUSP_MODEL_COSSERAT], n,
                c->sections, c->sections);
  return fail(c, key, error, error_size, "%d values but sections is %d (give one value or %d)", n,
              c->sections, c->sections);
}

/* An integer field in its key's range (fields may have been written directly). */
static int check_int_field(cusp_instance_config *c, const char *key, int v, char *error,
                           int error_size) {
  const cusp_key *k = cusp_key_find(key);
  if (v < k->lo || v > k->hi)
    return fail(c, key, error, error_size, "%d is out of range: must be an integer in %g..%g", v,
                k->lo, k->hi);
  return 0;
}

int cusp_config_check_end(const cusp_instance_config *c, char *error, int error_size) {
  if (c->nhold > 0 && c->contact != CUSP_CONTACT_LCP)
    return fail(c, "hold", error, error_size,
                "%d held points need key \"contact\" lcp, not \"%s\": a hold is an equality row of the lcp "
                "model's problem (the penalty, sap, ncp and native models do not take it)",
                c->nhold, w_contact[c->contact]);
  if (c->end != CUSP_END_FREE && c->contact != CUSP_CONTACT_LCP)
    return fail(c, "end", error, error_size,
                "\"%s\" needs key \"contact\" lcp, not \"%s\": a held end is an equality row of the lcp "
                "model's problem (the penalty, sap, ncp and native models do not take it)",
                w_end[c->end], w_contact[c->contact]);
  if (c->end == CUSP_END_FREE && strcmp(c->end_body, "world"))
    return fail(c, "end_body", error, error_size,
                "\"%s\" is given but key \"end\" is free: set end to pin or clamp, or leave end_body out",
                c->end_body);
  return 0;
}

static int is_given(const cusp_instance_config *c, const char *key) {
  const cusp_key *k = cusp_key_find(key);
  return k && (c->given >> (k - key_table) & 1);
}

/* How far the centerline's first point may be from the mount's origin,
 * relative to the polyline's length: round-off of a coordinate change is
 * some 1e-15, anything above 1e-8 is a centerline in another frame. */
#define CENTERLINE_BASE_TOL 1e-8
/* A strain the shape needs below this (bending: radians per section; stretch:
 * relative) may be missing from strains: the rod then misses the nodes by
 * about this fraction of its length. */
#define CENTERLINE_STRAIN_TOL 1e-9

/* The keys centerline and rest_arc (config.h): checks, the section lengths
 * (unless length gives them) and the initial strains into q0 (in the
 * coordinates' order: comp[0..per-1] of each section). Returns 1 when the
 * centerline set q0, 0 when there is none, -1 with a message. */
static int finish_centerline(cusp_instance_config *c, const int *comp, int per, double *q0, char *error,
                             int error_size) {
  int np = c->ncenterline;
  if (np == 0) {
    if (c->nrest_arc > 0)
      return fail(c, "rest_arc", error, error_size, "given without a centerline: it holds one rest arc length per "
                  "centerline point (set centerline too, or unset rest_arc)");
    return 0;
  }
  if (c->model != CUSP_MODEL_COSSERAT)
    return fail(c, "centerline", error, error_size, "is for model cosserat (this instance is pcc): a pcc arm starts "
                "from `initial` chamber elongations");
  if (is_given(c, "initial"))
    return fail(c, "centerline", error, error_size, "given together with initial (\"%s\"): the centerline sets the "
                "initial strains; keep one of the two", c->initial_text);
  if (np < 2 || np > CUSP_MAX_POINTS)
    return fail(c, "centerline", error, error_size, "%d points, expected 2..%d", np, CUSP_MAX_POINTS);
  const double *pt = c->centerline;
  double arc[CUSP_MAX_POINTS];
  arc[0] = 0;
  for (int j = 1; j < np; j++) {
    double dx = pt[3 * j] - pt[3 * j - 3], dy = pt[3 * j + 1] - pt[3 * j - 2], dz = pt[3 * j + 2] - pt[3 * j - 1];
    double seg = sqrt(dx * dx + dy * dy + dz * dz);
    if (c->nrest_arc == 0 && !(seg > 0))
      return fail(c, "centerline", error, error_size, "points %d and %d coincide (%g %g %g): without rest_arc the "
                  "rest arc is the polyline's own length, which must grow from point to point", j, j + 1,
                  pt[3 * j], pt[3 * j + 1], pt[3 * j + 2]);
    arc[j] = arc[j - 1] + seg;
  }
  double span = arc[np - 1]; /* the polyline's own length */
  if (c->nrest_arc > 0) {
    if (c->nrest_arc != np)
      return fail(c, "rest_arc", error, error_size, "%d values but the centerline has %d points: give one rest arc "
                  "length per point", c->nrest_arc, np);
    memcpy(arc, c->rest_arc, sizeof(double) * np);
  }
  double length = arc[np - 1]; /* the rod's rest length */
  const char *whence = c->nrest_arc ? "the last value of rest_arc" : "the polyline's length (rest_arc is unset)";
  /* the base: the mount's origin (the tangent there is the mount's z axis:
   * the first section is the arc from it to the first node) */
  double r0 = sqrt(pt[0] * pt[0] + pt[1] * pt[1] + pt[2] * pt[2]);
  if (r0 > CENTERLINE_BASE_TOL * span)
    return fail(c, "centerline", error, error_size, "the first point (%.17g %.17g %.17g) is not the mount's origin: "
                "the rod starts at its mount; give the centerline in the mount body's frame, from 0 0 0",
                pt[0], pt[1], pt[2]);
  /* the sections' rest lengths */
  int ns = c->sections;
  if (is_given(c, "length")) {
    double total = 0;
    for (int i = 0; i < ns; i++) total += c->length[i];
    if (fabs(total - length) > 1e-9 * length)
      return fail(c, "length", error, error_size, "the sections add up to %.17g m, but the centerline's rest length "
                  "is %.17g m (%s): unset length (the sections then share the rest length equally), or make them "
                  "agree", total, length, whence);
  } else {
    double each = length / ns;
    const cusp_key *kl = cusp_key_find("length");
    if (!(each >= kl->plo && each <= kl->phi))
      return fail(c, "centerline", error, error_size, "a rest length of %g m (%s) in %d sections makes sections of "
                  "%g m, outside the plausible range of length (%g .. %g m): change sections or the centerline",
                  length, whence, ns, each, kl->plo, kl->phi);
    for (int i = 0; i < CUSP_MAX_SECTIONS; i++) c->length[i] = each;
    c->nlength = 1;
  }
  /* the nodes on the polyline at the sections' rest arcs, and the strains through them */
  double node[3 * (CUSP_MAX_SECTIONS + 1)] = {0}, strain[6 * CUSP_MAX_SECTIONS];
  double s = 0;
  for (int i = 0; i < ns; i++) {
    s += c->length[i];
    sb_polyline_point(np, pt, arc, i + 1 == ns ? length : s, node + 3 * (i + 1));
  }
  char why[256];
  if (sb_rod_shape_strains(ns, c->length, node, strain, NULL, why, sizeof why))
    return fail(c, "centerline", error, error_size, "%s (the nodes are the polyline's points at the sections' rest "
                "arc lengths)", why);
  static const double rest[6] = {0, 0, 0, 0, 0, 1};
  for (int i = 0; i < ns; i++) {
    double *xi = strain + 6 * i;
    for (int a = 0; a < 6; a++) xi[a] -= rest[a];
    for (int a = 0; a < 6; a++) {
      int have = 0;
      for (int j = 0; j < per; j++) have |= comp[j] == a;
      double size = a < 3 ? fabs(xi[a]) * c->length[i] : fabs(xi[a]);
      if (!have && size > CENTERLINE_STRAIN_TOL)
        return fail(c, "strains", error, error_size, "\"%s\" lacks %s, which the centerline needs: section %d %s "
                    "(%s = %.3g%s); add %s to strains", strain_text(c->strains, why, sizeof why), strain_names[a],
                    i + 1, a < 3 ? "bends" : "stretches", strain_names[a], xi[a],
                    a < 3 ? "" : ": the arc through its nodes is not as long as its rest length", strain_names[a]);
      if (!have) continue;
      int j = 0;
      while (comp[j] != a) j++;
      double lo, hi;
      char range_why[160];
      initial_range(c, i * per + j, per, comp, &lo, &hi, range_why, sizeof range_why);
      if (!(xi[a] >= lo && xi[a] <= hi))
        return fail(c, "centerline", error, error_size, "section %d needs %s = %g, outside the plausible range of "
                    "initial strains %g .. %g (%s)", i + 1, strain_names[a], xi[a], lo, hi, range_why);
    }
    for (int j = 0; j < per; j++) q0[i * per + j] = xi[comp[j]];
  }
  return 1;
}

int cusp_config_finish(cusp_instance_config *c, char *error, int error_size) {
  if (c->model != CUSP_MODEL_PCC && c->model != CUSP_MODEL_COSSERAT)
    return fail(c, "model", error, error_size, "%d is not a model", (int)c->model);
  model_defaults(c);
  if (cusp_config_check_end(c, error, error_size)) return -1;
  /* keep the arithmetic below in range */
  if (check_int_field(c, "sections", c->sections, error, error_size) ||
      check_int_field(c, "disks", c->disks, error, error_size))
    return -1;
  if (c->nschedule < 0 || c->nschedule > CUSP_MAX_ENTRIES)
    return fail(c, NULL, error, error_size, "%d schedules, at most %d", c->nschedule,
                CUSP_MAX_ENTRIES);
  if (c->nfeedback < 0 || c->nfeedback > CUSP_MAX_ENTRIES)
    return fail(c, NULL, error, error_size, "%d feedbacks, at most %d", c->nfeedback,
                CUSP_MAX_ENTRIES);
  if (finish_list(c, "length", c->length, c->nlength, error, error_size) ||
      finish_list(c, "mass", c->mass, c->nmass, error, error_size) ||
      finish_list(c, "stiffness", c->stiffness, c->nstiffness, error, error_size) ||
      finish_list(c, "damping", c->damping, c->ndamping, error, error_size))
    return -1;
  if (c->model == CUSP_MODEL_PCC)
    for (int i = 0; i < c->sections; i++)
      if (!(c->mass[i] > 0))
        return fail(c, "mass", error, error_size,
                    "section %d: %g is out of range: must be > 0 for model pcc "
                    "(0 = from density is for cosserat)",
                    i + 1, c->mass[i]);

  /* coordinates, in the chain's order */
  int per = 0, comp[6] = {0};
  if (c->model == CUSP_MODEL_PCC) {
    per = 3;
  } else {
    for (int j = 0; j < 6; j++)
      if (c->strains & (1 << j)) comp[per++] = j;
    if (per == 0) return fail(c, "strains", error, error_size, "no strain selected");
  }
  if (per * c->sections > CUSP_MAX_COORDS)
    return fail(c, NULL, error, error_size, "%d coordinates, at most %d", per * c->sections,
                CUSP_MAX_COORDS);
  c->ncoord = per * c->sections;
  memset(c->coord, 0, sizeof c->coord);
  for (int i = 0; i < c->sections; i++)
    for (int j = 0; j < per; j++) {
      char *name = c->coord[i * per + j];
      unsigned char si = (unsigned char)(i + 1); /* <= CUSP_MAX_SECTIONS: lets the compiler see the fit */
      if (c->model == CUSP_MODEL_PCC)
        snprintf(name, sizeof c->coord[0], "s%uc%d", si, j + 1);
      else
        snprintf(name, sizeof c->coord[0], "s%u%s", si, strain_names[comp[j]]);
    }

  /* initial: from the centerline, or as written */
  const char *p = c->initial_text, *t;
  int len, n = 0;
  double q0[CUSP_MAX_COORDS] = {0};
  int shaped = finish_centerline(c, comp, per, q0, error, error_size);
  if (shaped < 0) return -1;
  if (shaped) {
    /* q0 holds the centerline's strains */
  } else if (strchr(c->initial_text, '=')) {
    while ((len = token(&p, &t))) {
      const char *eq = memchr(t, '=', (size_t)len);
      if (!eq || eq == t)
        return fail(c, "initial", error, error_size, "\"%.*s\" is not NAME=VALUE", len, t);
      int k = find_coord(c, t, (int)(eq - t));
      if (k < 0) return bad_coord(c, "initial", t, (int)(eq - t), error, error_size);
      int vlen = len - (int)(eq + 1 - t);
      if (parse_number(eq + 1, vlen, &q0[k]))
        return fail(c, "initial", error, error_size, "\"%.*s\" is not a number", vlen, eq + 1);
    }
  } else {
    while ((len = token(&p, &t))) {
      double v;
      if (parse_number(t, len, &v))
        return fail(c, "initial", error, error_size, "\"%.*s\" is not a number", len, t);
      if (n < CUSP_MAX_COORDS) q0[n] = v;
      n++;
    }
    if (n != 0 && n != c->ncoord)
      return fail(c, "initial", error, error_size,
                  "%d values but the instance has %d coordinates (%s .. %s); "
                  "or use NAME=VALUE pairs",
                  n, c->ncoord, c->coord[0], c->coord[c->ncoord - 1]);
  }
  for (int k = 0; k < c->ncoord; k++) {
    double lo, hi;
    char why[160];
    initial_range(c, k, per, comp, &lo, &hi, why, sizeof why);
    if (!(q0[k] >= lo && q0[k] <= hi))
      return fail(c, "initial", error, error_size,
                  "%s = %g is out of range: outside the plausible range %g .. %g %s (%s)", c->coord[k], q0[k], lo,
                  hi, c->model == CUSP_MODEL_PCC ? "m" : comp[k % per] < 3 ? "1/m" : "", why);
  }
  memcpy(c->initial, q0, sizeof q0);

  /* actuated */
  int act[CUSP_MAX_COORDS] = {0};
  p = c->actuated_text;
  len = token(&p, &t);
  if (tok_is(t, len, "all") && count_tokens(p) == 0) {
    for (int i = 0; i < c->ncoord; i++) act[i] = 1;
  } else if (!(tok_is(t, len, "none") && count_tokens(p) == 0)) {
    if (len == 0)
      return fail(c, "actuated", error, error_size,
                  "\"\": expected \"all\", \"none\" or coordinate names/numbers");
    p = c->actuated_text;
    while ((len = token(&p, &t))) {
      int k = find_coord(c, t, len);
      if (k < 0) return bad_coord(c, "actuated", t, len, error, error_size);
      act[k] = 1;
    }
  }
  memcpy(c->actuated, act, sizeof act);

  /* schedules */
  for (int i = 0; i < c->nschedule; i++) {
    cusp_schedule *s = &c->schedule[i];
    int k = entry_actuated_coord(c, "schedule", s->name, s->entry, s->text, error, error_size);
    if (k < 0) return -1;
    for (int j = 0; j < i; j++)
      if (c->schedule[j].coord == k)
        return fail_entry(c, "schedule", s->entry, s->text, error, error_size,
                          "coordinate %s already has a schedule (entry %d)", c->coord[k],
                          c->schedule[j].entry);
    for (int j = 0; j < s->nknot; j++)
      if (s->u[j] < c->ctrlrange[0] || s->u[j] > c->ctrlrange[1])
        return fail_entry(c, "schedule", s->entry, s->text, error, error_size,
                          "u = %g is outside ctrlrange [%g, %g]", s->u[j], c->ctrlrange[0],
                          c->ctrlrange[1]);
    s->coord = k;
  }

  /* feedbacks */
  for (int i = 0; i < c->nfeedback; i++) {
    cusp_feedback *f = &c->feedback[i];
    int k = entry_actuated_coord(c, "feedback", f->name, f->entry, f->text, error, error_size);
    if (k < 0) return -1;
    for (int j = 0; j < i; j++)
      if (c->feedback[j].coord == k)
        return fail_entry(c, "feedback", f->entry, f->text, error, error_size,
                          "coordinate %s already has a feedback (entry %d)", c->coord[k],
                          c->feedback[j].entry);
    f->coord = k;
    f->schedule = -1;
    for (int j = 0; j < c->nschedule; j++)
      if (c->schedule[j].coord == k) f->schedule = j;
  }

  /* holds: the section holding each point (as cusp_backbone_point finds it) */
  double rest = 0;
  for (int i = 0; i < c->sections; i++) rest += c->length[i];
  for (int i = 0; i < c->nhold; i++) {
    cusp_hold *hd = &c->hold[i];
    /* a length written in decimal may sum to a few ulps short of S = the rest length */
    if (!(hd->s > 0 && hd->s <= rest * (1 + 1e-12)))
      return fail_entry(c, "hold", hd->entry, hd->text, error, error_size,
                        "S = %g m is out of range: must be in (0, %g], the rod's rest length", hd->s, rest);
    int sec = 0;
    double sl = hd->s;
    while (sec < c->sections - 1 && sl > c->length[sec]) sl -= c->length[sec++];
    hd->section = sec;
    hd->s_local = fmin(fmax(sl, 0), c->length[sec]);
  }

  /* tip loads: the soft step applies them (a native arm is MuJoCo's to step) */
  for (int j = 0; j < 2 && c->contact == CUSP_CONTACT_NATIVE; j++) {
    const double *v = j ? c->tip_torque : c->tip_force;
    if (v[0] || v[1] || v[2])
      return fail(c, j ? "tip_torque" : "tip_force", error, error_size, "%g %g %g on a contact native arm, whose "
                  "links MuJoCo steps: apply it to its tip link with xfrc_applied, or use another contact model",
                  v[0], v[1], v[2]);
  }

  /* friction_reference: a direction (its length is ignored), so one that round-off would turn */
  {
    const double *e = c->friction_reference;
    double len = sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2]);
    if (len > 0 && len < 1e-6)
      return fail(c, "friction_reference", error, error_size, "%g %g %g has length %g: a direction needs a "
                  "length of at least 1e-6 (0 0 0: no reference)", e[0], e[1], e[2], len);
    if (len > 0 && c->contact == CUSP_CONTACT_NATIVE)
      return fail(c, "friction_reference", error, error_size, "%g %g %g on a contact native arm, whose contacts "
                  "are MuJoCo's own (their frame is MuJoCo's): use another contact model", e[0], e[1], e[2]);
  }

  /* disks: the base, then per section `disks` inside it and a plate at its end */
  int ndisk = 1 + c->sections * (c->disks + 1);
  if (ndisk > CUSP_MAX_DISKS)
    return fail(c, "disks", error, error_size,
                "%d disks per section give %d disks in all, at most %d", c->disks, ndisk,
                CUSP_MAX_DISKS);
  if (c->contact_capacity > CUSP_CONTACTS_PER_DISK * ndisk)
    return fail(c, "contact_capacity", error, error_size,
                "%d is above %d, %d per disk of the arm's %d (the plugin state's warm start holds that many); "
                "0 gives %d", c->contact_capacity, CUSP_CONTACTS_PER_DISK * ndisk, CUSP_CONTACTS_PER_DISK, ndisk,
                CUSP_CONTACTS_PER_DISK * ndisk);
  c->contacts = c->contact_capacity ? c->contact_capacity : CUSP_CONTACTS_PER_DISK * ndisk;
  c->ndisk = 0;
  for (int i = 0; i < c->sections; i++)
    for (int k = (i == 0 ? 0 : 1); k <= c->disks + 1; k++) {
      cusp_disk *d = &c->disk[c->ndisk++];
      d->section = i;
      d->s = k == c->disks + 1 ? c->length[i] : c->length[i] * k / (c->disks + 1);
      d->body_id = d->geom_id = d->mocap_id = -1;
    }
  for (int i = 0; i < CUSP_MAX_COORDS; i++) c->actuator_id[i] = c->tendon_id[i] = -1;
  c->tip_site_id = -1;
  return 0;
}

void cusp_config_chain(const cusp_instance_config *c, sb_segment_params *seg,
                       sb_chain_params *chain) {
  for (int i = 0; i < c->sections; i++) {
    sb_segment_params *p = &seg[i];
    if (c->model == CUSP_MODEL_PCC) {
      *p = sb_segment_default(SB_SEG_PCC);
      p->chamber_radius = c->chamber_radius;
      p->chamber_stiffness = c->stiffness[i];
      p->chamber_damping = c->damping[i];
      p->slices = 4;
    } else {
      *p = sb_segment_default(SB_SEG_PCS);
      p->strains = c->strains;
      p->young = c->young;
      p->shear = c->shear;
      p->density = c->density;
      p->viscosity = c->viscosity;
    }
    p->length = c->length[i];
    p->mass = c->mass[i];
    p->radius = c->radius;
  }
  memset(chain, 0, sizeof *chain);
  chain->nseg = c->sections;
  chain->seg = seg;
  chain->ndisk = 0;
  chain->disk = NULL;
  chain->base = sb_pose_identity();
}

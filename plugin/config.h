/* One soft instance as declared in MJCF (DESIGN §6): every config key, with
 * its unit and default, parsed and validated; plus what the expansion
 * generated for it (disk bodies, actuators) and their MuJoCo ids once
 * compiled (instances.h). Shared by the expansion (expand.c), the instance
 * reader (instances.c) and the runtime.
 *
 * One key table (config.c, cusp_keys) drives all of it: the declared keys,
 * defaults per model, parsing, validation (hard and plausible ranges), the
 * live keys and their printing (cusp_get), and the key reference in
 * docs/keys.md (cusp-keys --markdown). The field comments below are a map,
 * the table is the truth. */
#ifndef CUSP_CONFIG_H
#define CUSP_CONFIG_H

#include <stddef.h>
#include <stdio.h>

#include "chain.h"
#include "lcp.h"

/* A Cosserat rod of up to 128 sections (cosseratbench runs 20-100 elements);
 * the contact workspaces, sized from the disks, refuse what would not fit in
 * memory (docs/memory.md). */
#define CUSP_MAX_SECTIONS 128
#define CUSP_MAX_DISKS 1024
#define CUSP_MAX_COORDS (6 * CUSP_MAX_SECTIONS)
#define CUSP_MAX_ENTRIES 96    /* entries of the list keys schedule and feedback */
#define CUSP_MAX_POINTS 1024   /* points of the key centerline */
#define CUSP_NAME 64
#define CUSP_MAX_KNOTS 64
#define CUSP_MAX_HOLDS 16      /* entries of the list key hold */

typedef enum { CUSP_MODEL_PCC, CUSP_MODEL_COSSERAT } cusp_model_kind;
typedef enum { CUSP_CONTACT_LCP, CUSP_CONTACT_PENALTY, CUSP_CONTACT_NATIVE, CUSP_CONTACT_SAP, CUSP_CONTACT_NCP } cusp_contact_kind;
typedef enum { CUSP_NATIVE_SECTION, CUSP_NATIVE_FREE } cusp_native_joints;
typedef enum { CUSP_END_FREE, CUSP_END_PIN, CUSP_END_CLAMP } cusp_end_kind;
enum { CUSP_COND_QR = 1, CUSP_COND_RUIZ = 2, CUSP_COND_TIKHONOV = 4 };

/* A contact candidate: a disk (cylinder, axis = the section's local z) on
 * the backbone. */
typedef struct {
  int section;           /* 0-based */
  double s;              /* arc length from the section start, m */
  /* after compile */
  int body_id, geom_id;  /* the generated mocap body and its cylinder geom */
  int mocap_id;
} cusp_disk;

/* Piecewise linear open-loop control of one actuator, added to its ctrl:
 * u(t) interpolates the knots, held constant outside them. */
typedef struct {
  char name[16];         /* COORD of the entry, as written (name or 1-based number) */
  int coord;             /* index into cusp_instance_config.coord (set by finish) */
  int entry;             /* 1-based position in the key's ';' list (messages) */
  char text[48];         /* the entry as written, shortened (messages) */
  int nknot;
  double t[CUSP_MAX_KNOTS], u[CUSP_MAX_KNOTS];
} cusp_schedule;

/* Closed-loop control of one actuator from a scalar MuJoCo joint (an entry
 * "COORD JOINT kp kd target [ramp_start ramp_end]" of the key "feedback"):
 *   input = ctrl + schedule(t) + kp (target(t) - qpos[JOINT]) - kd qvel[JOINT],
 * clamped to ctrlrange (plugin/controls.c; cusp never writes d->ctrl). target(t) is the joint's value at the first step until
 * ramp_start, then linear to `target` at ramp_end; without a ramp, `target`
 * from the first step on. Several coordinates may follow one joint with
 * different gains (a chamber pair with opposite signs steers a bend). Ball
 * and free joints are refused at load (no single angle): pivot on a hinge.
 * A proportional law stops short of the target by (holding ctrl) / kp. */
typedef struct {
  char name[16];          /* COORD of the entry, as written */
  int coord;              /* index into cusp_instance_config.coord (set by finish) */
  int entry;              /* 1-based position in the key's ';' list (messages) */
  char text[48];          /* the entry as written, shortened (messages) */
  int schedule;           /* index of the same coordinate's schedule, or -1 (set by finish) */
  char joint[CUSP_NAME];  /* a hinge (qpos in rad) or slide (m) joint of the scene */
  double kp;              /* N per rad (hinge) or per m (slide); any sign */
  double kd;              /* N*s per rad or per m; any sign */
  double target;          /* rad or m */
  int ramped;
  double ramp[2];         /* s, ramp[0] < ramp[1] when ramped */
  /* after compile (cusp_instance_read resolves the joint by name) */
  int qpos_adr, dof_adr;
} cusp_feedback;

/* A material point of the rod held to a MuJoCo body (an entry "S pin|clamp
 * [BODY]" of the key "hold"; plugin/ends.c): the backbone's point at arc
 * length S from the base (the same point as cusp_backbone_point's), where it
 * is in the initial configuration, fixed in BODY's frame. pin holds its
 * position (MuJoCo's equality connect), clamp its position and orientation
 * (weld). */
typedef struct {
  double s;               /* m from the base along the rest backbone, 0 < s <= the rod's rest length */
  cusp_end_kind kind;     /* CUSP_END_PIN or CUSP_END_CLAMP */
  char body[CUSP_NAME];   /* world (the default), a mocap body, or a body with joints */
  int entry;              /* 1-based position in the key's ';' list (messages) */
  char text[48];          /* the entry as written, shortened (messages) */
  /* set by finish: the section holding the point and the arc length in it */
  int section;
  double s_local;
  /* after compile (cusp_resolve_end_body) */
  int body_id;
} cusp_hold;

typedef struct {
  char name[CUSP_NAME];
  char base_body[CUSP_NAME]; /* the body holding <plugin instance="..."/> */

  /* keys (unit, default) */
  cusp_model_kind model;       /* model: pcc | cosserat (pcc) */
  int sections;                /* sections: 1..16 (3) */
  double length[CUSP_MAX_SECTIONS];  /* length: m, one value or one per section (0.15) */
  double mass[CUSP_MAX_SECTIONS];    /* mass: kg, one or per section (1.17 0.54 0.265); cosserat: 0 = use density */
  double radius;               /* radius: body radius for inertia/material, m (0.025) */
  double disk_radius;          /* disk_radius: m (0.03) */
  double disk_thickness;       /* disk_thickness: m (0.01) */
  double chamber_radius;       /* chamber_radius: m (0.015), pcc */
  int disks;                   /* disks: intermediate disks per section, 0..64 (6) */
  double stiffness[CUSP_MAX_SECTIONS]; /* stiffness: N/m per chamber, one or per section (265), pcc */
  double damping[CUSP_MAX_SECTIONS];   /* damping: N*s/m per chamber (125), pcc */
  double young;                /* young: Pa (1e6), cosserat */
  double shear;                /* shear: Pa (0 = young/3), cosserat */
  double density;              /* density: kg/m^3 (1000), cosserat when mass is 0 */
  double viscosity;            /* viscosity: Pa*s (0), cosserat */
  int strains;                 /* strains: cosserat coordinates, e.g. "kx ky kz ex ey ez" (kx ky ez) */
  double friction;             /* friction: Coulomb mu >= 0 (0.5) */
  int pyramid;                 /* pyramid: friction directions 3..16 (4) */
  int align_friction;          /* align_friction: 0 | 1 (0); lcp: the pyramid's first direction turned onto
                                  the friction each contact needs (sb_contact_options.align_friction) */
  double friction_reference[3]; /* friction_reference: world direction (0 0 0: none); the pyramid's first
                                  direction is it projected on each contact's tangent plane */
  cusp_contact_kind contact;   /* contact: lcp | penalty | native | sap | ncp (lcp); native = rigid
                                  links on spring joints, MuJoCo's contact (plugin/native.h) */
  cusp_native_joints native_joints; /* native_joints: section | free (section), native only */
  sb_lcp_solver solver;        /* solver: fb | lemke | pgs (lemke), first of the fallback chain */
  int fallback;                /* fallback: 0 | 1 (1); 0: only `solver` runs, no other solver after it
                                  fails (the paper's ablation setting) */
  int warm_lemke;              /* warm_lemke: 0 | 1 (0); lcp: Lemke starts from the warm start's
                                  complementary basis when the warm pivot fails
                                  (sb_lcp_options.warm_lemke) */
  int lemke_form;              /* lemke_form: tableau | revised | auto (auto); lcp: how Lemke keeps
                                  its basis (sb_lcp_options.lemke_form) */
  int lcp_matrix;              /* lcp_matrix: stored | entries | operator | auto (auto); lcp: what the solve
                                  reads from the kept operator (sb_contact_options.lcp_from_operator) */
  int conditioning;            /* conditioning: any of qr ruiz tikhonov, or none (qr ruiz tikhonov) */
  double eps_rank;             /* eps_rank: relative (1e-6) */
  int ruiz_iterations;         /* ruiz_iterations: 0..100 (10) */
  double tikhonov;             /* tikhonov: eps_W (1e-10) */
  double stabilization;        /* stabilization: alpha in (0, 1] (0.2) */
  double push_speed;           /* push_speed: m/s > 0 (1), the stabilization's fastest push-out (sb_contact_options) */
  double surface_layer;        /* surface_layer: m >= 0 (1e-8), a penetration left unpushed (sb_contact_options) */
  double teleport_speed;       /* teleport_speed: m/s (10); a mocap mount's or hold's velocity change beyond is a jump */
  double pull_speed;           /* pull_speed: m/s (10); the fastest a held point's rows pull it to its anchor */
  double penalty_stiffness;    /* penalty_stiffness: N/m (1e4) */
  double penalty_damping;      /* penalty_damping: N*s/m (50) */
  double sap_stiffness;        /* sap_stiffness: N/m (1e5) */
  double sap_dissipation;      /* sap_dissipation: Hunt-Crossley, s/m (10) */
  double sap_sigma;            /* sap_sigma: friction regularization (1e-3) */
  double sap_tolerance;        /* sap_tolerance: relative (1e-6) */
  int sap_iterations;          /* sap_iterations: Newton iterations (100) */
  double ncp_smoothing;        /* ncp_smoothing: m/s (1e-6) */
  double ncp_friction_smoothing; /* ncp_friction_smoothing: (1e-3) */
  double ncp_tolerance;        /* ncp_tolerance: m/s (1e-9) */
  int ncp_iterations;          /* ncp_iterations: Newton iterations (50) */
  double initial[CUSP_MAX_COORDS]; /* initial: q0 per coordinate, m (pcc) or strain offset (0) */
  int actuated[CUSP_MAX_COORDS];   /* actuated: coordinate names or "all" / "none" (all) */
  double gear;                 /* gear: ctrl -> generalized force factor (1) */
  double ctrlrange[2];         /* ctrlrange: N (-100 100); lo < hi */
  int self_contact;            /* self_contact: 0 | 1 (0) */
  int contact_capacity;        /* contact_capacity: the most contacts of this arm's disks in one step
                                  (0: CUSP_CONTACTS_PER_DISK per disk) */
  int nschedule;               /* schedule: "COORD t0 u0 t1 u1 ...; COORD ..." (s, N); none */
  cusp_schedule schedule[CUSP_MAX_ENTRIES];
  int nfeedback;               /* feedback: "COORD JOINT kp kd target [t0 t1]; ..." (N/rad, N*s/rad,
                                  rad, s); none */
  cusp_end_kind end;           /* end: free | pin | clamp (free): the last section's tip held (plugin/ends.c) */
  char end_body[CUSP_NAME];    /* end_body: the MuJoCo body the end is held to (world) */
  cusp_feedback feedback[CUSP_MAX_ENTRIES];
  int nhold;                   /* hold: "S pin|clamp [BODY]; ..." (m); none */
  cusp_hold hold[CUSP_MAX_HOLDS];
  int ncenterline;             /* centerline: "x y z, x y z, ..." (m, the mount's frame); unset: 0 */
  double centerline[3 * CUSP_MAX_POINTS];
  int nrest_arc;               /* rest_arc: one per centerline point, from 0 (m); unset: 0 */
  double rest_arc[CUSP_MAX_POINTS];
  double tip_force[3];         /* tip_force: N, world, constant (0 0 0) */
  double tip_torque[3];        /* tip_torque: N*m, world, constant (0 0 0) */

  /* as set; resolved by cusp_config_finish (they depend on sections, model, strains) */
  unsigned long long given;    /* bit i: key i of cusp_keys was set (not its default) */
  int nlength, nmass, nstiffness, ndamping;     /* values given: 1 or `sections` */
  char initial_text[2048], actuated_text[2048];

  /* derived by cusp_config_finish */
  int ncoord;                  /* generalized coordinates of the chain */
  char coord[CUSP_MAX_COORDS][16]; /* their names: pcc "s2c1" (section 2, chamber 1), cosserat "s1kx" */
  int ndisk;
  int contacts;                /* derived: contact_capacity, or CUSP_CONTACTS_PER_DISK per disk when 0 */
  cusp_disk disk[CUSP_MAX_DISKS];
  /* after compile */
  int base_body_id;
  int actuator_id[CUSP_MAX_COORDS]; /* -1 when the coordinate is not actuated */
  int tendon_id[CUSP_MAX_COORDS];   /* native: fixed tendon INSTANCE/COORD (the coordinate), else -1 */
  int tip_site_id;                  /* native: site INSTANCE/tip, else -1 */
  int end_body_id;                  /* end_body's id (0: the world), resolved by cusp_instance_read */
} cusp_instance_config;

/* ---------- the key table ---------- */

typedef enum {
  CUSP_KEY_ENUM,     /* one word of `words`; the field is an enum (int) holding its index */
  CUSP_KEY_INT,      /* an integer in [lo, hi] */
  CUSP_KEY_FLAG,     /* 0 | 1 (or false | true) */
  CUSP_KEY_REAL,     /* one number */
  CUSP_KEY_SECTIONS, /* one number, or one per section (count in count_offset) */
  CUSP_KEY_MASK,     /* any of `words` (bit i = words[i]); "none" when CUSP_KEY_NONE */
  CUSP_KEY_RANGE,    /* "lo hi", lo < hi, each number in the plausible range */
  CUSP_KEY_INITIAL,  /* one number per coordinate, or NAME=VALUE pairs (resolved by finish) */
  CUSP_KEY_ACTUATED, /* all | none | coordinate names or numbers (resolved by finish) */
  CUSP_KEY_SCHEDULE, /* "COORD t0 u0 t1 u1 ...; ..." */
  CUSP_KEY_FEEDBACK, /* "COORD JOINT kp kd target [ramp_start ramp_end]; ..." */
  CUSP_KEY_HOLD,     /* "S pin|clamp [BODY]; ..." */
  CUSP_KEY_BODY,     /* the name of a MuJoCo body (resolved after compile) */
  CUSP_KEY_POINTS,   /* "x y z, x y z, ..." (count in count_offset), each coordinate plausible */
  CUSP_KEY_NUMBERS,  /* numbers (count in count_offset), each plausible (resolved by finish) */
  CUSP_KEY_VECTOR    /* three numbers, each plausible */
} cusp_key_kind;

enum {
  CUSP_KEY_NONE = 1,      /* mask: "none" (no bit) is a value */
  CUSP_KEY_NONZERO = 2,   /* 0 is refused */
  CUSP_KEY_MAGNITUDE = 4  /* the plausible range bounds |value| (either sign) */
};

/* One config key. Numbers are refused outside the hard range (meaningless:
 * a negative mass) and outside the plausible range (a value no soft robot
 * has, e.g. a 1e308 m section: issue 19), each with a message naming the
 * instance, key, value and range. `zero` accepts 0 below the plausible
 * range, with that meaning. */
typedef struct {
  const char *name;
  cusp_key_kind kind;
  const char *unit;            /* "" when dimensionless */
  size_t offset;               /* the field in cusp_instance_config */
  size_t count_offset;         /* SECTIONS, POINTS, NUMBERS: the field counting the values given */
  const char *def[2];          /* default text per model (pcc, cosserat); NULL: the model does
                                  not use the key (the other model's text is stored) */
  const char *const *words;    /* ENUM and MASK: the words */
  int nwords;
  double lo, hi;               /* hard range (INT: the integers lo..hi) */
  int lo_open, hi_open;
  double plo, phi;             /* plausible range (REAL, SECTIONS, RANGE, INITIAL, FEEDBACK gains) */
  const char *zero;            /* non-NULL: 0 is accepted and means this */
  int flags;                   /* CUSP_KEY_NONE | CUSP_KEY_NONZERO | CUSP_KEY_MAGNITUDE */
  int live;                    /* 1 + its slot in the state's live block (state.h
                                  cusp_live_key); 0: fixed at load */
  const char *why;             /* why the plausible range, where not obvious; or NULL */
  const char *doc;             /* one line */
} cusp_key;

/* The table, in declaration order (n receives the count). */
const cusp_key *cusp_keys(int *n);
/* A key by name, or NULL. */
const cusp_key *cusp_key_find(const char *name);

/* Every config key's name, each once, in the table's order (n receives the
 * count, < 256: MuJoCo's cap on a plugin's declared attributes); the plugin
 * record declares these. */
const char *const *cusp_config_keys(int *n);

/* A key's current value of c as MJCF text (what cusp_config_set reads back
 * to the same value; reals with 17 digits). Returns 0, or -1 when it does
 * not fit (out is still terminated). */
int cusp_config_format(const cusp_instance_config *c, const cusp_key *k, char *out, int size);

/* The value of a scalar key (ENUM, INT, FLAG, REAL, MASK) as a double, and
 * back (the live keys' state slots). */
double cusp_key_number(const cusp_instance_config *c, const cusp_key *k);
void cusp_key_set_number(cusp_instance_config *c, const cusp_key *k, double v);

/* The key reference (docs/keys.md) as Markdown. */
void cusp_keys_markdown(FILE *out);

/* Defaults for every key (pcc's; a cosserat instance's differ where the
 * table says, applied by cusp_config_finish to the keys not set). */
void cusp_config_default(cusp_instance_config *c);

/* Sets one key from its MJCF string value; returns 0, or -1 with a message
 * naming the instance and key. Keys that depend on others (per-section
 * lists, coordinate names) are resolved by cusp_config_finish. */
int cusp_config_set(cusp_instance_config *c, const char *key, const char *value, char *error,
                    int error_size);

/* Applies the model's defaults to the keys not set, checks cross-key
 * consistency, derives coordinate names and disk placement. Idempotent.
 * Returns 0, or -1 with a message. */
int cusp_config_finish(cusp_instance_config *c, char *error, int error_size);

/* A held end or point (keys end, hold) is solved with the lcp contact model
 * only: 0, or -1 with a message naming both keys when contact is another
 * model. */
int cusp_config_check_end(const cusp_instance_config *c, char *error, int error_size);
/* The chain parameters of the instance (segments filled into seg, which must
 * hold `sections` entries), base pose identity, gravity from the caller. */
void cusp_config_chain(const cusp_instance_config *c, sb_segment_params *seg, sb_chain_params *chain);

#endif

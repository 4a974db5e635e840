/* The screen (sb_contact_options.screen, on by default): stage 1 chooses among the
 * contacts that may act, and a left-out contact that the impulses close is
 * let in, so no contact is lost that would penetrate.
 *
 * The lever: a heavy block falling at V onto the short arm (x = -1) of a
 * light bar resting on a pivot (x = 0), whose long arm's end (x = +3) sits a
 * gap g = 2 V h below a ceiling. Under the free motion the end rests, so its
 * gap term g/h = 2V is larger than the fastest closing speed (the block's,
 * V): screened. But the block turns the bar, and the end rises at about 3V:
 * it would pass through the ceiling unless the screen lets it in. Plus 3
 * contacts of a point mass flying away from the floor (separating at 10 m/s):
 * the screen acts whatever the problem's size (stage 1's re-selection
 * passes off, which would otherwise keep the end in a last pass). Checked: the end carries
 * load and does not penetrate; the impulses equal those of the unscreened
 * problem; the screen left out the flying contacts and solved again once;
 * the screened solve allocates nothing. */
#include <string.h>

#include "alloc_count.h"
#include "contact.h"
#include "testutil.h"

#define NFLY 3
#define V 1.0
#define H 1e-3

typedef struct {
  sb_contact_problem *P;
  int block, bar, fly;
  int end; /* the lever end's contact index */
} lever;

static int add_point(sb_contact_problem *P, int side0, const double *jac0, int side1, const double *jac1,
                     double nz, double gap, long id, char *err, int es) {
  sb_contact c;
  memset(&c, 0, sizeof c);
  c.side[0].body = side0;
  c.side[0].jac = jac0;
  c.side[1].body = side1;
  c.side[1].jac = jac1;
  c.normal[2] = nz;
  c.gap = gap;
  c.friction = 0.5;
  c.id = id;
  return sb_contact_add(P, &c, err, es);
}

static int build(lever *L, char *err, int es) {
  sb_contact_clear(L->P);
  double Mb[1] = {100.0}, vb[1] = {-V};                 /* block: vertical velocity */
  double Mr[4] = {0.1, 0, 0, 0.05}, vr[2] = {0, 0};     /* bar: centre's vertical velocity, turn rate */
  double Mf[1] = {1.0}, vf[1] = {10.0};                 /* flying point mass: vertical velocity */
  L->block = sb_contact_add_dense(L->P, 1, Mb, vb, err, es);
  L->bar = sb_contact_add_dense(L->P, 2, Mr, vr, err, es);
  L->fly = sb_contact_add_dense(L->P, 1, Mf, vf, err, es);
  if (L->block < 0 || L->bar < 0 || L->fly < 0) return -1;
  /* 3 x nv row-major world velocity Jacobians: only z moves; the bar's point
   * at x has vertical velocity vz + x w */
  static const double jblock[3] = {0, 0, 1}, jfly[3] = {0, 0, 1};
  static const double jshort[6] = {0, 0, 0, 0, 1, -1}, jpivot[6] = {0, 0, 0, 0, 1, 0}, jlong[6] = {0, 0, 0, 0, 1, 3};
  if (add_point(L->P, L->block, jblock, L->bar, jshort, 1, 0, 1, err, es) < 0) return -1; /* block on the short arm */
  if (add_point(L->P, L->bar, jpivot, -1, NULL, 1, 0, 2, err, es) < 0) return -1;         /* bar on the pivot */
  L->end = add_point(L->P, L->bar, jlong, -1, NULL, -1, 2 * V * H, 3, err, es);           /* long arm under the ceiling */
  if (L->end < 0) return -1;
  for (int k = 0; k < NFLY; k++)
    if (add_point(L->P, L->fly, jfly, -1, NULL, 1, 1e-3, 100 + k, err, es) < 0) return -1;
  return 0;
}

int main(void) {
  char err[256];
  lever L = {0};
  L.P = sb_contact_create(3 + NFLY, 3, 4, 4, err, sizeof err);
  EXPECT(L.P != NULL, "create: %s", err);
  EXPECT(allocs > 0, "the allocation counter sees the problem's allocations (%ld)", allocs);
  if (!L.P) return test_report("contact_screen");

  double lam[2][3 + NFLY], vend[2][3];
  sb_contact_info info[2];
  for (int screened = 0; screened < 2; screened++) {
    sb_contact_options o = sb_contact_default_options();
    o.warm_start = 0;
    o.rank_refine = 0; /* no re-selection passes: only the screen can let the end in */
    if (!screened) o.screen = 0; /* the default options screen */
    EXPECT(build(&L, err, sizeof err) == 0, "build: %s", err);
    long before = allocs;
    int rc = sb_contact_solve(L.P, H, &o, &info[screened], err, sizeof err);
    EXPECT(allocs == before, "screen %d: the solve made %ld allocations", screened, allocs - before);
    EXPECT(rc == 0, "screen %d: solve failed: %s", screened, err);
    for (int i = 0; i < 3 + NFLY; i++) sb_contact_result(L.P, i, NULL, &lam[screened][i], NULL, NULL);
    sb_contact_relative_velocity(L.P, L.end, vend[screened]);
  }
  /* the default options screened and left out the flying contacts; off, none */
  EXPECT(info[0].screened == 0 && info[0].screen_passes == 0, "screen off: %d screened, %d passes", info[0].screened,
         info[0].screen_passes);
  EXPECT(info[1].screened == NFLY, "screen on: %d contacts left out, expected the %d flying ones", info[1].screened,
         NFLY);
  EXPECT(info[1].screen_passes == 1, "screen on: %d passes solved again, expected 1 (the lever's end let in)",
         info[1].screen_passes);
  /* the lever's end is loaded and stays out of the ceiling: normal velocity
   * (from the ceiling into the bar, -z) plus gap term >= 0 */
  for (int s = 0; s < 2; s++) {
    double closing = -vend[s][2] + 2 * V;
    EXPECT(lam[s][L.end] > 0, "screen %d: the lever's end carries %g N s, expected a load", s, lam[s][L.end]);
    EXPECT(closing >= -1e-9, "screen %d: the lever's end closes at %g m/s beyond its gap", s, closing);
  }
  /* the same impulses as the unscreened problem: the jammed lever's answer is
   * unique (block stopped to 2V/3: the end rises g/h = 2V, the bar turns
   * 2V/3, the short arm sinks 2V/3) */
  EXPECT(tu_relerr(lam[1], lam[0], 3 + NFLY, 1e-12) < 1e-8, "screened impulses differ from unscreened by %g",
         tu_relerr(lam[1], lam[0], 3 + NFLY, 1e-12));
  double block_dv = lam[1][0] / 100.0; /* the block's velocity change: impulse / mass */
  EXPECT(fabs(-V + block_dv - (-2 * V / 3)) < 1e-8, "block ends at %g m/s, expected %g", -V + block_dv, -2 * V / 3);
  for (int k = 0; k < NFLY; k++) EXPECT(lam[1][3 + k] == 0, "flying contact %d carries %g", k, lam[1][3 + k]);
  sb_contact_free(L.P);
  return test_report("contact_screen");
}

"""A rope lying on a plane comes to rest within the surface layer, and its contact LCP is then solved warm.

bench/scenes/rope_plane_tiled.xml: cosseratbench's pile rope (24 elements, 144 dofs, three
disks an element, pyramid of 8, friction 0.3) clamped at one end and lying along a plane, so
a sticking set has more friction rows than the rope has dofs. With the paper's gap term
(a gap closes at g / h, a penetration is pushed out at alpha g / h: a kink at zero depth;
the key surface_layer at 0) it does not rest: the linearization leaves each disk a nanometre
in or out, the ones in are pushed out and the ones out unloaded, the rope jitters at up to
1e-4 m/s and its loads, and the LCP's active set, move from disk to disk, so about half the
solves run cold on every step (docs/contact_scaling.md, session 36). With the key's default,
1e-8 m (a penetration within the layer is left where it is), after the rope settles: its
centreline stands still (backbone points move less than 1e-9 m/s, measured from positions a
step apart, independently of the solver's report), every step is one stage-1 pass whose
solve and proximal re-solve both start from the last step's active set (no cold solve:
issue 15, item 2), and no disk sinks deeper than the layer. Each of the three checks fails
with the layer at 0."""
import pathlib

import mujoco
import numpy as np

import cusp

SCENE = pathlib.Path(__file__).resolve().parents[2] / "bench" / "scenes" / "rope_plane_tiled.xml"
SETTLE = 200  # steps; the default layer's run stood still from about step 110
WATCH = 50
LAYER = 1e-8  # m, the key's default


def _backbone(m, d, points):
  return np.array([cusp.backbone_point(m, d, "rod0", s)[0] for s in points])


def test_lying_rope_rests_and_solves_warm():
  m = cusp.load(str(SCENE))  # the default layer
  d = cusp.make_data(m)
  points = np.linspace(0, cusp.total_length(m, "rod0"), 49)
  for step in range(1, SETTLE + 1):
    mujoco.mj_step(m, d)
    assert cusp.report(m, d)["message"] == "", f"settling, step {step}"
  before = _backbone(m, d, points)
  fastest = 0.0
  for step in range(SETTLE + 1, SETTLE + WATCH + 1):
    mujoco.mj_step(m, d)
    r = cusp.report(m, d)
    info = r["info"]
    assert r["message"] == "", f"step {step}: {r['message']}"
    assert info["lcp"]["status_name"] == "solved", f"step {step}: {info['lcp']['status_name']}"
    assert info["nkept"] > 30, f"step {step}: {info['nkept']} contacts kept: the rope is not lying on the plane"
    assert info["rank_passes"] == 1 and info["cold_solves"] == 0, (
        f"step {step}: {info['rank_passes']} stage-1 passes, {info['cold_solves']} of {info['solves']} "
        "solves cold on a rope at rest")
    assert r["max_penetration"] <= LAYER * (1 + 1e-6), f"step {step}: a disk {r['max_penetration']} m deep"
    after = _backbone(m, d, points)
    fastest = max(fastest, float(np.linalg.norm(after - before, axis=1).max()) / m.opt.timestep)
    before = after
  assert fastest < 1e-9, f"the lying rope still moves at {fastest:.3g} m/s"

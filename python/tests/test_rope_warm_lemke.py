"""The key warm_lemke on a rope lying on a plane: the same physics with it on and off.

bench/scenes/rope_plane_tiled.xml: cosseratbench's pile rope (24 elements, 144 dofs, three
disks an element, pyramid of 8, friction 0.3) clamped at one end and lying along a plane,
more friction rows than dofs. Its warm pivot fails on most steps, so Lemke runs from the
last step's answer: with warm_lemke=1 from that answer's complementary basis
(softbody/lcp.c, lemke_start), else from nothing. Every step must solve either way, the
key must be reported (sb_contact_info.warm_lemke_starts, _solved: zero with the key off,
Lemke started and solved from the guess's basis on most steps with it on), and the rope
must lie the same. The two are different vertices of a degenerate LCP (the first attempt
from the guess's basis is on q itself, the cold one on q perturbed to break ties), whose
friction along a rope lying still is statically indeterminate: the strains differ at the
1e-4 level of their size, but the rope's centerline, tip and the load the plane carries
agree to round-off. The net friction at one step is not determined by the motion (the two
differ by a part of the load on single steps, the same before and after the contact
selection changed): it is held to Coulomb's bound, mu times the load, in both."""
import pathlib

import mujoco
import numpy as np

import cusp

SCENE = pathlib.Path(__file__).resolve().parents[2] / "bench" / "scenes" / "rope_plane_tiled.xml"
STEPS = 40
MU = 0.3  # the scene's friction


def _run(warm_lemke):
  m = cusp.load(str(SCENE), {"rod0.warm_lemke": warm_lemke})
  d = cusp.make_data(m)
  starts = solved = 0
  for step in range(1, STEPS + 1):
    mujoco.mj_step(m, d)
    r = cusp.report(m, d)
    assert r["message"] == "", f"warm_lemke={warm_lemke}, step {step}: {r['message']}"
    assert r["info"]["lcp"]["status_name"] == "solved", f"warm_lemke={warm_lemke}, step {step}: not solved"
    starts += r["info"]["warm_lemke_starts"]
    solved += r["info"]["warm_lemke_solved"]
  q, _ = cusp.soft_state(m, d, "rod0")
  tip, _ = cusp.tip_pose(m, d, "rod0")
  line = np.array([cusp.backbone_point(m, d, "rod0", s)[0] for s in np.linspace(0, 0.36, 49)])
  forces = np.array([c["force"] for c in cusp.contacts(m, d)])
  return {"starts": starts, "solved": solved, "q": q, "tip": tip, "line": line, "load": forces[:, 2].sum(),
          "friction": forces[:, :2].sum(axis=0)}


def test_warm_lemke_same_rope():
  off, on = _run(0), _run(1)
  assert off["starts"] == 0 and off["solved"] == 0, f"key off, yet {off['starts']} warm Lemke starts"
  assert on["starts"] >= STEPS // 2, f"key on: Lemke started from the guess's basis on {on['starts']} solves"
  assert on["solved"] >= on["starts"] // 2, f"key on: {on['solved']} of {on['starts']} warm starts solved"
  dline = np.abs(on["line"] - off["line"]).max()
  dtip = np.abs(on["tip"] - off["tip"]).max()
  assert dline <= 1e-9 and dtip <= 1e-9, f"the rope lies elsewhere: centerline {dline} m, tip {dtip} m"
  load = off["load"]
  assert load > 0 and abs(on["load"] - load) <= 1e-6 * load, f"plane load {on['load']} N against {load} N"
  dq = np.abs(on["q"] - off["q"]).max()
  assert dq <= 1e-3 * np.abs(off["q"]).max(), f"strains differ by {dq}"
  for run, name in ((off, "off"), (on, "on")):
    friction = np.hypot(*run["friction"])
    assert friction <= MU * run["load"], f"key {name}: net friction {friction} N above mu times the load {run['load']} N"

"""The key warm_lemke on a rope lying on a plane: the same physics with it on and off.

bench/scenes/rope_plane_tiled.xml: cosseratbench's pile rope (24 elements, 144 dofs, three
disks an element, pyramid of 8, friction 0.3) clamped at one end and lying along a plane,
more friction rows than dofs. Its warm pivot fails on most steps, so Lemke runs from the
last step's answer: with warm_lemke=1 from that answer's complementary basis
(softbody/lcp.c, lemke_start), else from nothing. Every step must solve either way, the
key must be reported (sb_contact_info.warm_lemke_starts, _solved: zero with the key off,
Lemke started and solved from the guess's basis on most steps with it on), and the rope
must lie the same: its coordinates, velocities and tip within round-off of the
statically indeterminate friction's choice, the plane carrying the same load."""
import pathlib

import mujoco
import numpy as np

import cusp

SCENE = pathlib.Path(__file__).resolve().parents[2] / "bench" / "scenes" / "rope_plane_tiled.xml"
STEPS = 40


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
  q, v = cusp.soft_state(m, d, "rod0")
  tip, _ = cusp.tip_pose(m, d, "rod0")
  load = sum(c["force"][2] for c in cusp.contacts(m, d))
  return {"starts": starts, "solved": solved, "q": q, "v": v, "tip": tip, "load": load}


def test_warm_lemke_same_rope():
  off, on = _run(0), _run(1)
  assert off["starts"] == 0 and off["solved"] == 0, f"key off, yet {off['starts']} warm Lemke starts"
  assert on["starts"] >= STEPS // 2, f"key on: Lemke started from the guess's basis on {on['starts']} solves"
  assert on["solved"] >= on["starts"] // 2, f"key on: {on['solved']} of {on['starts']} warm starts solved"
  dq = np.abs(on["q"] - off["q"]).max()
  dv = np.abs(on["v"] - off["v"]).max()
  dtip = np.abs(on["tip"] - off["tip"]).max()
  assert dq <= 1e-9 and dv <= 1e-7 and dtip <= 1e-9, f"the rope differs: q {dq}, v {dv}, tip {dtip} m"
  assert abs(on["load"] - off["load"]) <= 1e-6 * abs(off["load"]), f"plane load {on['load']} N against {off['load']} N"

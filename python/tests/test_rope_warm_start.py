"""The warm start of a rope lying on a plane with more friction rows than dofs.

bench/scenes/rope_plane_tiled.xml: cosseratbench's pile rope (three disks an element
tiling a 5 mm tube, pyramid of 8, friction 0.3), 24 elements clamped at one end and
lying straight along a plane: one contact per disk, 73 contacts on 144 dofs, so a
sticking set has more friction rows than dofs and the friction is statically
indeterminate. Once it has settled and stage 1 keeps the same contacts in one pass,
every LCP of a step must be answered from the last step's active set (issue 15, item 2):
before warm_pivot_from_support (softbody/lcp.c) the first solve of each such step was a
cold Lemke, because the set predicted from the guess took in about two more friction
rows a contact, where w = Mz + q was negative at the guess, and had no exact solution.
The physics is checked independently of the solver: the rope holds still, rests on the
plane without sinking into it, and the plane carries its weight but the clamp's share."""
import math
import pathlib

import mujoco
import numpy as np

import cusp

SCENE = pathlib.Path(__file__).resolve().parents[2] / "bench" / "scenes" / "rope_plane_tiled.xml"
STEPS = 48          # steps 44-48: settled, one stage-1 pass each
SETTLED = 40        # from here on the physics checks
MU = 0.3


def test_settled_rope_is_solved_from_the_last_active_set():
  m = cusp.load(str(SCENE))
  d = cusp.make_data(m)
  radius, density, sections, length = 0.0025, 1000.0, 24, 0.015
  rope = sections * length
  weight = density * math.pi * radius**2 * rope * 9.81
  one_pass_steps, cold_in_one_pass = 0, 0
  before = None
  for step in range(1, STEPS + 1):
    mujoco.mj_step(m, d)
    r = cusp.report(m, d)
    info = r["info"]
    assert r["message"] == "", f"step {step}: {r['message']}"
    # settling from rest on the plane: a few micrometres at first (3.3e-6 m at most), that the
    # stabilization takes back; settled, the depth left is 2.6e-8 m and shrinking
    depth_limit = 1e-5 if step < SETTLED else 1e-7
    assert r["max_penetration"] < depth_limit, f"step {step}: a disk {r['max_penetration']} m into the plane"
    if step < SETTLED:
      continue
    if info["rank_passes"] == 1:
      one_pass_steps += 1
      cold_in_one_pass += info["cold_solves"]
    floor = [c for c in cusp.contacts(m, d) if c["other_instance"] < 0 and c["normal_impulse"] > 0]
    # the plane carries the weight but the clamp's share (the first half element), no more
    carried = sum(c["force"][2] for c in floor)
    assert 0.95 * weight < carried < weight, f"step {step}: plane carries {carried} N of {weight} N"
    # every friction force within Coulomb's cone (the pyramid's vertices are on it), to the
    # solver's acceptance: a contact at the cone's edge came out 1.6e-5 of mu fn beyond it
    for c in floor:
      fn = c["normal_impulse"] / m.opt.timestep
      assert math.hypot(c["force"][0], c["force"][1]) <= MU * fn * (1 + 1e-4)
    points = np.array([cusp.backbone_point(m, d, "rod0", s)[0] for s in np.linspace(0, rope, 25)])
    if before is not None and info["rank_passes"] == 1:
      # holding still: no point of the rope slides more than 1e-7 m a step (1e-4 m/s)
      assert np.abs(points - before).max() < 1e-7, f"step {step}: the rope moved {np.abs(points - before).max()} m"
      assert np.all(np.abs(points[:, 2] - radius) < 1e-6), "the rope's centreline is off the plane's tube height"
    before = points
  assert one_pass_steps >= 3, f"only {one_pass_steps} settled steps with one stage-1 pass"
  assert cold_in_one_pass == 0, f"{cold_in_one_pass} cold solves in {one_pass_steps} settled steps"

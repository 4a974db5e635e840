"""The warm start of a rope sliding steadily with more contacts than its dofs hold.

bench/scenes/rope_belt_sliding.xml: cosseratbench's pile rope (three disks an element,
pyramid of 8, friction 0.3; 73 contacts on 144 dofs) clamped at one end and lying on a
1000 kg belt that slides under it at 0.05 m/s: every loaded contact slides at a constant
speed. In steady sliding every LCP of a step must be answered from the last step's active
set (issue 15, item 2): without warm_pivot_from_support (softbody/lcp.c) the set predicted
from the guess (z - w > eps) failed on 34 of the first 60 steps and a cold Lemke answered.
The physics is checked independently of the solver: the belt carries the rope's weight but
the clamp's share, every contact's friction is mu fn along the belt's motion (sliding
Coulomb), and the belt loses, by MuJoCo's own dynamics, the momentum that friction gives
the rope (Newton's third law across the coupling)."""
import math
import pathlib

import mujoco

import cusp

SCENE = pathlib.Path(__file__).resolve().parents[2] / "bench" / "scenes" / "rope_belt_sliding.xml"
STEPS = 40
STEADY = 11   # steps 1-3 take the rope's first contacts in; from here on it slides steadily
MU = 0.3
SPEED = 0.05


def test_sliding_rope_is_solved_from_the_last_active_set():
  m = cusp.load(str(SCENE))
  d = cusp.make_data(m)
  dof = m.jnt_dofadr[m.joint("belt").id]
  belt_mass = m.body("belt").mass[0]
  d.qvel[dof] = SPEED
  radius, density, sections, length = 0.0025, 1000.0, 24, 0.015
  weight = density * math.pi * radius**2 * sections * length * 9.81
  h = m.opt.timestep
  cold_steady = 0
  for step in range(1, STEPS + 1):
    v_before = d.qvel[dof]
    mujoco.mj_step(m, d)
    r = cusp.report(m, d)
    assert r["message"] == "", f"step {step}: {r['message']}"
    assert r["max_penetration"] < 1e-7, f"step {step}: a disk {r['max_penetration']} m into the belt"
    if step < STEADY:
      continue
    cold_steady += r["info"]["cold_solves"]
    loaded = [c for c in cusp.contacts(m, d) if c["normal_impulse"] > 0]
    carried = sum(c["force"][2] for c in loaded)
    # the belt carries the weight but the clamp's share (the first half element), no more
    assert 0.95 * weight < carried < weight, f"step {step}: the belt carries {carried} N of {weight} N"
    for c in loaded:
      fn = c["normal_impulse"] / h
      ft = math.hypot(c["force"][0], c["force"][1])
      # sliding: mu fn, along the belt's motion (the belt drags the rope in +x)
      assert abs(ft - MU * fn) <= 1e-9 * MU * fn, f"step {step}: friction {ft} N against mu fn {MU * fn} N"
      assert c["force"][0] > 0 and abs(c["force"][1]) <= 1e-9 * ft, f"step {step}: friction {c['force']} off +x"
    friction = sum(c["force"][0] for c in loaded)
    belt_loss = -belt_mass * (d.qvel[dof] - v_before) / h
    assert abs(belt_loss - friction) <= 1e-6 * friction, f"step {step}: belt lost {belt_loss} N, friction {friction} N"
  assert cold_steady == 0, f"{cold_steady} cold solves in steps {STEADY}-{STEPS} of steady sliding"

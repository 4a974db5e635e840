"""One friction pyramid in the plan and in the simulator: the arm's key
friction_reference (the pyramid's first direction is the reference projected
on the contact's tangent plane, sb_contact_frame) and cusp-plan's
--friction-reference (the same rule; by default 1,0,1 about z with --contact-time
start, as mjcf/ball_plan.xml sets the key).

A short plan about z (5 steps, 0.2 rad) slides on the ball on two steps (the
simulator's |ft| / fn 0.594 and 0.575, on the pyramid's boundary) while
its contact moves round the ball's -y pole along x, where the simulator's
default frame (the world axis least aligned with the normal) and the
planner's carried rest basis differ by about 90 degrees, an 18 degree
offset of the 10 directions. Measured (docs/planning.md, session 20):
- with the shared reference, its contact steps replay to 2.6e-11 m (arm)
  and 2.4e-7 rad/s (ball), as the x plan of test_plan_contact_start.py: the
  bounds are that test's, 1e-8 m, 1e-5 of the force, 1e-5 rad/s;
- planned with the carried basis, its step 3 misses by 1.8e-6 m and
  0.045 rad/s (the second test asserts more than 1e-3 rad/s);
- the shared-reference plan in the scene without the key agrees, the replay
  taking the plan's reference from its columns rx, ry, rz; without those
  columns it misses (the third test): both sides must take the rule.
The key's refusals name the key and the value; cusp-plan refuses a reference
near the rest contact's normal, naming the option's subject.
"""
import json
import os
import pathlib
import subprocess

import pytest

import cusp
from cusp.replay import one_step

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCENE = ROOT / "mjcf" / "ball_plan.xml"


def _app():
  lib = os.environ.get("CUSP_LIBRARY")
  app = (pathlib.Path(lib).parent if lib else ROOT / "build") / "cusp-plan"
  if not app.exists():
    pytest.skip("no cusp-plan next to libcusp.so (build it)")
  return app


def _plan(tmp_path_factory, reference):
  out = tmp_path_factory.mktemp("plan") / f"z5_{reference or 'default'}.csv"
  cmd = [str(_app()), "--task", "rotate", "--axis", "z", "--N", "5", "--T", "0.2", "--angle", "0.2",
         "--kin-iter", "200", "--max-iter", "3000", "--tol", "1e-6", "--quiet", "--json", "--warm",
         "--hessian", "lbfgs", "--relaxed-iter", "300", "--guess", "rest", "--kin-effort", "0",
         "--contact-time", "start", "--out", str(out)]
  if reference:
    cmd += ["--friction-reference", reference]
  r = subprocess.run(cmd, capture_output=True, text=True, timeout=600,
                     env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))
  assert r.returncode == 0, r.stderr[-2000:]
  summary = json.loads(r.stdout.strip().splitlines()[-1])
  assert summary["status"] in ("converged", "acceptable", "polished")
  assert summary["polish"]["status"] == "accepted", summary["polish"]
  assert summary["friction_reference"] == (reference or "1,0,1")
  return out


@pytest.fixture(scope="module")
def shared_plan(tmp_path_factory):
  return _plan(tmp_path_factory, None)


def _contact_steps(steps):
  return [s for s in steps if s["planned_force"] > 1e-3]


def test_shared_reference_replays_the_sliding_steps(shared_plan):
  steps = one_step(shared_plan, scene=SCENE)
  touch = _contact_steps(steps)
  assert len(touch) >= 2, [s["planned_force"] for s in steps]
  for s in touch:
    assert s["arm"] < 1e-8, s
    assert s["omega"] < 1e-5, s
    assert abs(s["force"] - s["planned_force"]) < 1e-5 * s["planned_force"], s
  for s in steps:
    if s not in touch:
      assert s["arm"] < 1e-9, s


def test_carried_basis_misses(tmp_path_factory):
  steps = one_step(_plan(tmp_path_factory, "carried"), scene=SCENE)
  assert max(s["omega"] for s in _contact_steps(steps)) > 1e-3


def _without_reference_columns(plan, out):
  rows = [line.rstrip("\n").split(",") for line in plan.read_text().splitlines()]
  keep = [i for i, h in enumerate(rows[0]) if h not in ("rx", "ry", "rz")]
  assert len(keep) == len(rows[0]) - 3, rows[0]
  out.write_text("".join(",".join(r[i] for i in keep) + "\n" for r in rows))
  return out


def test_plan_carries_its_reference(shared_plan, tmp_path):
  """In a scene without the key the replay takes the plan's reference from its columns rx, ry, rz
  and agrees; the same plan without those columns meets the scene's default pyramid and misses:
  both sides must take the rule, and the plan file is what tells the replay which."""
  text = SCENE.read_text()
  key = '<config key="friction_reference" value="1 0 1"/>'
  assert key in text
  scene = tmp_path / "ball_plan_no_reference.xml"
  scene.write_text(text.replace(key, ""))
  agree = _contact_steps(one_step(shared_plan, scene=scene))
  assert len(agree) >= 2 and max(s["omega"] for s in agree) < 1e-5, agree
  bare = _without_reference_columns(shared_plan, tmp_path / "bare.csv")
  assert max(s["omega"] for s in _contact_steps(one_step(bare, scene=scene))) > 1e-3


@pytest.mark.parametrize("value, words", [
    ("1e-9 0 0", "length"),
    ("nan 0 1", "friction_reference"),
    ("0 1", "three numbers"),
])
def test_key_refusals(value, words):
  with pytest.raises(ValueError) as e:
    cusp.load(SCENE, {"arm.friction_reference": value})
  assert "friction_reference" in str(e.value) and words in str(e.value), str(e.value)


def test_key_refused_with_native_contact():
  with pytest.raises(ValueError) as e:
    cusp.load(SCENE, {"arm.contact": "native"})
  assert "friction_reference" in str(e.value) and "native" in str(e.value), str(e.value)


def test_plan_refuses_a_reference_near_the_normal():
  r = subprocess.run([str(_app()), "--task", "rotate", "--axis", "z", "--N", "2", "--contact-time", "start",
                      "--friction-reference", "0,-1,0.1", "--json"], capture_output=True, text=True, timeout=120)
  assert r.returncode == 2, r.stderr[-1000:]
  assert "friction reference" in r.stderr and "rest contact's normal" in r.stderr, r.stderr[-1000:]
  r = subprocess.run([str(_app()), "--task", "rotate", "--axis", "z", "--friction-reference", "0,1"],
                     capture_output=True, text=True, timeout=120)
  assert r.returncode == 2 and "--friction-reference" in r.stderr, r.stderr[-1000:]

"""A short plan of cusp-plan replayed in MuJoCo (python -m cusp.replay).

Bounds, and why:
- Before the first planned contact the replay and the plan run the same
  integrator (sb_step's linearly implicit Euler, the plugin's soft step) from
  the same state with the same chamber forces, at the plan's step: they agree
  to what the plan leaves out, the Scholtes relaxation's force eps / gap
  (micronewtons) at a distance, far below 1e-6 m.
- After contact the two contact models differ (the plan: gap-force
  complementarity at the step's end on a smoothed disk; the simulator:
  velocity-level LCP on MuJoCo's cylinder), so the ball's torque differs. The
  arm does not notice: 0.1 N against 265 N/m chambers and 125 N*s/m dampers
  moves it by far less than 5 % of its planned motion. The ball turns the
  planned way, by at least a quarter of the plan's angle (measured: about
  two thirds), which a replay that ignored the controls or the contact
  would not (the ball stays at 0 without contact).
"""
import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _plan_app():
  lib = os.environ.get("CUSP_LIBRARY")
  build = pathlib.Path(lib).parent if lib else ROOT / "build"
  app = build / "cusp-plan"
  return app if app.exists() else None


@pytest.fixture(scope="module")
def short_plan(tmp_path_factory):
  app = _plan_app()
  if app is None:
    pytest.skip("no cusp-plan next to libcusp.so (build it)")
  out = tmp_path_factory.mktemp("plan") / "x5.csv"
  r = subprocess.run([str(app), "--task", "rotate", "--axis", "x", "--N", "5", "--T", "0.2", "--angle", "0.2",
                      "--kin-iter", "200", "--max-iter", "400", "--tol", "1e-6", "--quiet", "--json",
                      # the two-stage warm start with L-BFGS (not the N = 100 tasks' defaults)
                      "--warm", "--hessian", "lbfgs", "--relaxed-iter", "300", "--guess", "rest",
                      "--out", str(out)], capture_output=True, text=True, timeout=600,
                     env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))
  assert r.returncode == 0, r.stderr[-2000:]
  summary = json.loads(r.stdout.strip().splitlines()[-1])
  assert summary["status"] in ("converged", "acceptable")
  return out, summary


def test_replay_follows_the_plan(short_plan, tmp_path):
  plan, planned = short_plan
  tsv = tmp_path / "replay.tsv"
  r = subprocess.run([sys.executable, "-m", "cusp.replay", str(plan), "--scene", str(ROOT / "mjcf/ball_plan.xml"),
                      "--timestep", "plan", "--tsv", str(tsv), "--json"], capture_output=True, text=True,
                     timeout=600)
  assert r.returncode == 0, r.stderr[-2000:]
  s = json.loads(r.stdout.strip().splitlines()[-1])
  assert s["status"] == "ran" and s["knots"] == 6
  assert s["first_contact_knot"] >= 1, "the plan should start away from the ball"
  assert s["arm_error_before_contact"] < 1e-6, s
  assert s["max_arm_error"] < 0.05 * s["arm_motion"], s
  assert s["planned_angle"] > 0.15
  assert s["replayed_angle"] > 0.25 * s["planned_angle"], s
  assert s["final_angle_error"] < s["planned_angle"], s
  rows = [line.split("\t") for line in tsv.read_text().splitlines()[1:]]
  assert len(rows) == 6 and all(len(x) == 5 for x in rows)


def test_replay_refuses_a_bad_file(tmp_path):
  bad = tmp_path / "bad.csv"
  bad.write_text("a,b\n1,2\n")
  r = subprocess.run([sys.executable, "-m", "cusp.replay", str(bad)], capture_output=True, text=True, timeout=120)
  assert r.returncode == 2
  assert "not a cusp-plan trajectory" in r.stderr
  assert json.loads(r.stdout.strip().splitlines()[-1])["status"] == "error"


@pytest.mark.parametrize("option", ["--out", "--kin-out"])
def test_plan_refuses_an_unwritable_output_before_solving(tmp_path, option):
  app = _plan_app()
  if app is None:
    pytest.skip("no cusp-plan next to libcusp.so (build it)")
  target = tmp_path / "missing-dir" / "plan.csv"
  r = subprocess.run([str(app), "--task", "rotate", "--axis", "x", "--N", "5", "--T", "0.2", "--angle", "0.2",
                      "--warm", "--json", option, str(target)], capture_output=True, text=True, timeout=600,
                     env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))
  assert r.returncode == 2, r.stderr[-2000:]
  assert f"{option}: cannot write '{target}'" in r.stderr
  assert "stage: " not in r.stderr   # no stage ran ("kinematic stage: eps ..."): refused before the solve

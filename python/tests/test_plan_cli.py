"""cusp-plan's command-line contract (issue 18, item 6) on a 3-step task:
the last stdout line is one JSON object with the status, quaternion error,
complementarity, solve_s per stage and in total, and the iterations, which
are the stages' own; IPOPT's progress goes to stderr, one line per iteration
of each stage, and nothing but the JSON to stdout; --quiet silences it.
Without --cold or --warm the paper's contact runs the paper's two stages
(kinematic, then dynamic) and the simulator's contact runs cold.
"""
import json
import os
import pathlib
import re
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
TASK = ["--task", "rotate", "--axis", "x", "--N", "3", "--T", "0.12", "--angle", "0.05", "--json"]


def _run(*extra):
  lib = os.environ.get("CUSP_LIBRARY")
  app = (pathlib.Path(lib).parent if lib else ROOT / "build") / "cusp-plan"
  if not app.exists():
    pytest.skip("no cusp-plan next to libcusp.so (build it)")
  r = subprocess.run([str(app), *TASK, *extra], capture_output=True, text=True, timeout=600)
  assert r.returncode == 0, r.stderr[-2000:]
  return r


def test_default_runs_both_stages_and_reports_them():
  r = _run()
  lines = r.stdout.splitlines()
  assert len(lines) == 1, "stdout holds the JSON line only"
  d = json.loads(lines[-1])
  assert d["start"] == "kinematic"
  assert d["status"] in ("converged", "acceptable", "polished")
  assert d["quaternion_error"] < 1e-2  # 0.05 rad asked for in 3 steps: near, not exact
  assert 0 <= d["complementarity"] <= 1e-6
  s = d["solve_s"]
  assert s["kinematic"] > 0 and s["dynamic"] > 0
  assert s["total"] >= s["kinematic"] + s["dynamic"] - 1e-9
  kin, dyn = d["kinematic"]["iterations"], d["dynamic"]["iterations"]
  assert kin > 0 and dyn > 0 and d["iterations"] == kin + dyn
  # one progress line per iteration (and each relaxation's iteration 0) of each stage, on stderr
  assert len(re.findall(r"^kinematic iter +\d+ ", r.stderr, re.M)) >= kin
  assert len(re.findall(r"^dynamic iter +\d+ ", r.stderr, re.M)) >= dyn
  assert not re.search(r"(kinematic|dynamic) iter +\d", r.stdout)


def test_quiet_and_cold_defaults():
  r = _run("--quiet")
  assert not re.search(r"^(kinematic|dynamic) iter", r.stderr, re.M)
  cold = json.loads(_run("--quiet", "--cold").stdout.splitlines()[-1])
  assert cold["start"] == "cold" and cold["solve_s"]["kinematic"] == 0 and cold["kinematic"] is None
  start = json.loads(_run("--quiet", "--contact-time", "start").stdout.splitlines()[-1])
  assert start["start"] == "cold" and start["contact_time"] == "start"


def test_z_warm_start_contact_defaults_to_margin_rows_on_every_step():
  # z's own default with --warm --contact-time start (apps/cusp-plan.c, DEFAULT_Z_WARM_START); x keeps lazy,
  # and --margin-rows still overrides it
  def margin(axis, *extra):
    args = [a if a != "x" else axis for a in TASK]
    lib = os.environ.get("CUSP_LIBRARY")
    app = (pathlib.Path(lib).parent if lib else ROOT / "build") / "cusp-plan"
    if not app.exists():
      pytest.skip("no cusp-plan next to libcusp.so (build it)")
    r = subprocess.run([str(app), *args, "--quiet", "--contact-time", "start", *extra], capture_output=True,
                       text=True, timeout=600)
    assert r.stdout, r.stderr[-2000:]
    return json.loads(r.stdout.splitlines()[-1])["margin_rows"]

  assert margin("z", "--warm") == "all"
  assert margin("z", "--warm", "--margin-rows", "lazy") == "lazy"
  assert margin("z") == "lazy"  # cold: the default with the start contact
  assert margin("x", "--warm") == "lazy"



def test_y_warm_lbfgs_defaults_to_eps_factor_0_2():
  # y's own default with --warm (end contact) and --hessian lbfgs (apps/cusp-plan.c, DEFAULT_Y_WARM_LBFGS): the
  # homotopy's eps falls by 0.2 per relaxation, not the task's 0.1; the default Hessian, y cold, x with lbfgs and
  # --eps-factor given keep theirs
  lib = os.environ.get("CUSP_LIBRARY")
  app = (pathlib.Path(lib).parent if lib else ROOT / "build") / "cusp-plan"
  if not app.exists():
    pytest.skip("no cusp-plan next to libcusp.so (build it)")

  def eps_of(axis, *extra):
    args = [a if a != "x" else axis for a in TASK]
    r = subprocess.run([str(app), *args, "--quiet", *extra], capture_output=True, text=True, timeout=600)
    assert r.stdout, r.stderr[-2000:]
    return [e["eps"] for e in json.loads(r.stdout.splitlines()[-1])["dynamic"]["per_relaxation"]]

  tenth = pytest.approx([1e-3, 1e-4, 1e-5, 1e-6, 1e-7])
  assert eps_of("y", "--hessian", "lbfgs") == pytest.approx([1e-3, 2e-4, 4e-5, 8e-6, 1.6e-6, 3.2e-7, 1e-7])
  assert eps_of("y", "--hessian", "lbfgs", "--eps-factor", "0.1") == tenth
  assert eps_of("y") == tenth
  assert eps_of("y", "--cold", "--hessian", "lbfgs") == tenth
  assert eps_of("x", "--hessian", "lbfgs") == tenth
  usage = subprocess.run([str(app)], capture_output=True, text=True, timeout=60).stderr
  listed = [l for l in usage.splitlines() if l.strip().startswith("y with --hessian lbfgs:")]
  assert len(listed) == 1 and "--hessian lbfgs" in listed[0] and "--eps-factor 0.2" in listed[0]

"""cusp.sweep: a grid of cusp-sim cases as Ray tasks; rows for every case
(failures too), re-runs skip what is done, and a row's numbers are a serial
run's bit for bit."""
import csv
import json
import math
import os
import pathlib
import subprocess
import sys

import mujoco
import pytest

import cusp
import cusp.sweep as sweep

REPO = pathlib.Path(__file__).resolve().parents[2]
SCENE = str(REPO / "tests" / "data" / "scenes" / "coupling_fall.xml")
SECONDS = 0.05
GRID = {"arm.friction": [0.3, 0.8], "arm.disks": [3, 6]}
# wall-clock fields: the only ones two runs of one case may differ in
WALL = ("wall_s", "realtime_factor", "step_us")

ray = None


@pytest.fixture(scope="module")
def have_sim():
  if not os.access(sweep.cusp_sim_path(), os.X_OK):
    pytest.skip(f"no cusp-sim at {sweep.cusp_sim_path()}")


@pytest.fixture(scope="module")
def local_ray(have_sim):
  """A local Ray of 2 workers. Not under a sanitizer build: this process has
  the sanitizer runtimes preloaded, and Ray's own processes would inherit them."""
  if os.environ.get("CUSP_PYTEST_PRELOADED"):
    pytest.skip("Ray does not run with the sanitizer runtimes preloaded (the serial sweep test does)")
  global ray
  import ray as ray_module
  ray = ray_module
  ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
  yield
  ray.shutdown()


def test_serial_sweep_rows_and_bad_value(have_sim, tmp_path):
  # without Ray (runs under the sanitizer build too): a good case, a refused value
  rows = sweep.run(SCENE, grid={"arm.friction": [0.3, -1]}, seconds=SECONDS, out=tmp_path, serial=True,
                   progress=False)
  assert [r["status"] for r in rows] == ["completed", "bad_input"]
  assert physics(rows[0]["summary"]) == physics(direct({"arm.friction": "0.3"}))
  assert "must be >= 0" in rows[1]["message"]


def physics(summary):
  return {k: v for k, v in summary.items() if k not in WALL}


def direct(overrides):
  """The same case run serially by hand: cusp-sim, then its JSON."""
  cmd = [sweep.cusp_sim_path(), SCENE, "--json", "--seconds", repr(SECONDS)]
  for k, v in overrides.items():
    cmd += ["--set", f"{k}={v}"]
  p = subprocess.run(cmd, capture_output=True, text=True)
  assert p.returncode == 0, p.stderr
  return json.loads(p.stdout.splitlines()[-1])


def test_grid_rows_overrides_and_files(local_ray, tmp_path, capfd):
  rows = sweep.run(SCENE, grid=GRID, seconds=SECONDS, out=tmp_path)
  assert [r["overrides"] for r in rows] == [
      {"arm.friction": "0.3", "arm.disks": "3"}, {"arm.friction": "0.3", "arm.disks": "6"},
      {"arm.friction": "0.8", "arm.disks": "3"}, {"arm.friction": "0.8", "arm.disks": "6"}]
  for r in rows:
    assert r["status"] == "completed" and r["exit_code"] == 0 and r["message"] is None
    s = r["summary"]
    assert s["completed"] and s["steps"] == 50 and s["scene"] == SCENE
    # the overrides reached cusp-sim: the row is a direct run of the case
    assert physics(s) == physics(direct(r["overrides"]))
  err = capfd.readouterr().err
  assert "sweep: 4/4 done, 0 failed" in err and "cases/s" in err
  # the files: every row, every field of cusp-sim's summary
  saved = json.loads((tmp_path / "results.json").read_text())
  assert saved == rows
  with open(tmp_path / "results.csv", newline="") as fh:
    table = list(csv.DictReader(fh))
  assert len(table) == 4
  for r, t in zip(rows, table):
    assert t["status"] == "completed"
    assert t["arm.friction"] == r["overrides"]["arm.friction"]
    assert t["arm.disks"] == r["overrides"]["arm.disks"]
    assert float(t["soft.arm.tip_pos"] and json.loads(t["soft.arm.tip_pos"])[2]) == \
        r["summary"]["soft"]["arm"]["tip_pos"][2]
    assert float(t["sim_time"]) == r["summary"]["sim_time"]
    assert "step_us.mj_step.median" in t and "lcp.solves" in t and "mujoco_warnings" in t


def test_bad_value_is_a_row_with_the_library_message(local_ray, tmp_path):
  rows = sweep.run(SCENE, grid={"arm.friction": [0.3, -1], "arm.disks": [3, 6]}, seconds=SECONDS,
                   out=tmp_path)
  assert len(rows) == 4
  good = [r for r in rows if r["overrides"]["arm.friction"] == "0.3"]
  bad = [r for r in rows if r["overrides"]["arm.friction"] == "-1"]
  assert [r["status"] for r in good] == ["completed", "completed"]
  for r in bad:
    assert r["status"] == "bad_input" and r["exit_code"] == 2 and r["summary"] is None
    assert 'key "friction"' in r["message"] and "must be >= 0" in r["message"], r["message"]
  saved = json.loads((tmp_path / "results.json").read_text())
  assert sorted(r["status"] for r in saved) == ["bad_input", "bad_input", "completed", "completed"]


def test_rerun_skips_done_cases(local_ray, tmp_path, capfd):
  # two of the grid's four cases first, as a list of cases
  first = sweep.run(SCENE, cases=[{"arm.friction": 0.3, "arm.disks": 6}, {"arm.friction": 0.8, "arm.disks": 3}],
                    seconds=SECONDS, out=tmp_path)
  capfd.readouterr()
  again = sweep.run(SCENE, grid=GRID, seconds=SECONDS, out=tmp_path)
  err = capfd.readouterr().err
  assert "2 case(s) to run, 2 already in the output" in err, err
  assert len(again) == 4
  # the skipped cases are the first sweep's rows, untouched (wall times too)
  by = {r["case"]: r for r in again}
  for r in first:
    assert by[r["case"]] == r
  saved = json.loads((tmp_path / "results.json").read_text())
  assert len(saved) == 4
  sweep.run(SCENE, grid=GRID, seconds=SECONDS, out=tmp_path)
  assert "0 case(s) to run, 4 already in the output" in capfd.readouterr().err


def test_row_equals_serial_run_bit_for_bit(local_ray, tmp_path):
  rows = sweep.run(SCENE, grid=GRID, seconds=SECONDS, out=tmp_path)
  serial = sweep.run(SCENE, grid=GRID, seconds=SECONDS, serial=True, progress=False)
  for r, s in zip(rows, serial):
    assert physics(r["summary"]) == physics(s["summary"])
    assert physics(r["summary"]) == physics(direct(r["overrides"]))
  # and cusp-sim's numbers are the Python package's stepping of the same case
  for r in rows:
    m = cusp.load(SCENE, {k: v for k, v in r["overrides"].items()})
    d = mujoco.MjData(m)
    nstep = math.ceil(SECONDS / m.opt.timestep - 1e-6)
    for _ in range(nstep):
      mujoco.mj_step(m, d)
    mujoco.mj_forward(m, d)
    pos, quat = cusp.tip_pose(m, d, "arm")
    arm = r["summary"]["soft"]["arm"]
    assert list(pos) == arm["tip_pos"] and list(quat) == arm["tip_quat"]
    q, _ = cusp.soft_state(m, d, "arm")
    assert list(q) == arm["q"]


def test_cli(local_ray, tmp_path):
  # its own local Ray (the module's one is this process's): 2 workers
  ray.shutdown()
  try:
    p = subprocess.run([sys.executable, "-m", "cusp.sweep", SCENE, "--seconds", str(SECONDS),
                        "--set", "arm.friction=0.3,0.8", "--set", "arm.disks=3,6", "--out", str(tmp_path),
                        "--num-cpus", "2"], capture_output=True, text=True, timeout=300)
  finally:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
  assert p.returncode == 0, p.stderr
  assert "sweep: 4/4 done, 0 failed" in p.stderr
  saved = json.loads((tmp_path / "results.json").read_text())
  assert [r["status"] for r in saved] == ["completed"] * 4
  # the same cases as the Python call: a re-run through the API skips them all
  rows = sweep.run(SCENE, grid=GRID, seconds=SECONDS, out=tmp_path, progress=False)
  assert [r["case"] for r in rows] == [r["case"] for r in saved]
  p = subprocess.run([sys.executable, "-m", "cusp.sweep", SCENE, "--seconds", str(SECONDS),
                      "--set", "arm.friction=-1", "--out", str(tmp_path / "bad"), "--serial"],
                     capture_output=True, text=True, timeout=300)
  assert p.returncode == 1 and "1 failed" in p.stderr and "must be >= 0" in p.stderr, p.stderr


def test_crash_is_an_error_row_and_runs_again(local_ray, tmp_path):
  crash = tmp_path / "crashing-sim"
  crash.write_text("#!/bin/sh\nkill -SEGV $$\n")
  crash.chmod(0o755)
  out = tmp_path / "out"
  rows = sweep.run(SCENE, grid=GRID, seconds=SECONDS, out=out, cusp_sim=str(crash), progress=False)
  assert [r["status"] for r in rows] == ["error"] * 4
  assert all(r["exit_code"] == -11 and r["summary"] is None for r in rows)
  assert len(json.loads((out / "results.json").read_text())) == 4
  # error rows are not done: the next run runs them again, and they complete
  rows = sweep.run(SCENE, grid=GRID, seconds=SECONDS, out=out, progress=False)
  assert [r["status"] for r in rows] == ["completed"] * 4
  assert [r["status"] for r in json.loads((out / "results.json").read_text())] == ["completed"] * 4

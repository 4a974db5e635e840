"""cusp.evaluation: the evaluation report's bench-eval cases run as a
cusp.sweep sweep on Ray, joined into the serial bench-eval's tables and JSON
lines: the same physics numbers bit for bit (timings are measured, not
compared)."""
import json
import os
import pathlib
import subprocess

import pytest

import cusp.evaluation as ev

REPO = pathlib.Path(__file__).resolve().parents[2]
BENCH = ev.bench_eval_path()


@pytest.fixture(scope="module")
def have_bench():
  if not os.access(BENCH, os.X_OK):
    pytest.skip(f"no bench-eval at {BENCH}")


@pytest.fixture(scope="module")
def local_ray(have_bench):
  """One local Ray of 2 workers for the module's Ray tests (cusp.sweep uses a
  running Ray). Not under a sanitizer build: Ray's processes would inherit
  the preloaded sanitizer runtimes."""
  if os.environ.get("CUSP_PYTEST_PRELOADED"):
    pytest.skip("Ray does not run with the sanitizer runtimes preloaded (the serial tests do)")
  import ray
  ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
  yield
  ray.shutdown()


def serial(tmp, command):
  """The reference: bench-eval's own serial loop over every case, in one process."""
  p = subprocess.run([BENCH, command, "--fast", "--src", str(REPO), "--out", str(tmp)], capture_output=True,
                     text=True, env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})
  assert p.returncode == 0, p.stderr
  return json.loads(p.stdout.splitlines()[-1])


def physics(x):
  """x without its wall-clock fields."""
  if isinstance(x, dict):
    return {k: physics(v) for k, v in x.items() if not ev.is_timing(k)}
  if isinstance(x, list):
    return [physics(v) for v in x]
  return x


def table(path):
  """(header, rows) of a bench-eval table, every cell as written."""
  lines = path.read_text().splitlines()
  assert lines[0].startswith("# bench-eval ")
  return lines[1].split("\t"), [l.split("\t") for l in lines[2:]]


def assert_same_tables(ref_dir, got_dir, names):
  compared = set()
  for name in names:
    head, ref = table(ref_dir / name)
    head2, got = table(got_dir / name)
    assert head2 == head and len(got) == len(ref) > 0, name
    keep = [i for i, h in enumerate(head) if not ev.is_timing(h)]
    for k, (a, b) in enumerate(zip(ref, got)):
      assert [a[i] for i in keep] == [b[i] for i in keep], f"{name} row {k}: {a} vs {b}"
    compared |= {head[i] for i in keep}
  return compared


COMMAND_TABLES = {"ablation": ["ablation.tsv"], "compare": ["compare.tsv", "compare_stable.tsv", "compare_energy.tsv"],
                  "perf": ["perf.tsv", "perf_runs.tsv"], "scaling": ["scaling.tsv"]}


def test_timing_fields_are_only_wall_clock():
  for name in ("wall_s", "wall_per_sim_s", "us_per_step", "median_us", "mean_us_other_steps", "realtime_factor", "cpu"):
    assert ev.is_timing(name)
  for name in ("max_pen_mm", "max_penetration_m", "convergence", "completion", "steps", "solves", "fallbacks",
               "creep_mm", "stable_h_ms", "energy_drift_rel", "dE_J", "mean_contacts", "dofs", "h_s", "target_s", "mean_iterations"):
    assert not ev.is_timing(name)


def test_ray_sweep_equals_serial_run(local_ray, tmp_path):
  ref = tmp_path / "serial"
  lines = {c: serial(ref, c) for c in ev.COMMANDS}
  got = tmp_path / "sweep"
  ev.evaluate(got, bench=BENCH, fast=True, progress=False)
  compared = set()
  for c in ev.COMMANDS:
    mine = json.loads((got / f"{c}.json").read_text())
    # bit for bit: the JSON numbers are %.17g, and == compares the doubles
    assert physics(mine) == physics(lines[c]), c
    assert list(mine) == list(lines[c])
    compared |= assert_same_tables(ref, got, COMMAND_TABLES[c])
  # the comparison covers the physics columns (the timing filter took only timings)
  assert {"max_pen_mm", "convergence", "completion", "steps", "solves", "creep_mm", "stable_h_ms",
          "energy_drift_rel", "dE_J", "mean_contacts", "dofs", "fallbacks"} <= compared
  # one row per case in the sweep's results, all completed, each a Ray task's
  rows = json.loads((got / "sweep" / "results.json").read_text())
  n = {c: ev.case_count(BENCH, c, fast=True) for c in ev.COMMANDS}
  assert len(rows) == sum(n.values()) == 5 + 15 + 3 + 6
  assert all(r["status"] == "completed" for r in rows)
  assert "workers 2" in (got / "timing").read_text()


def test_serial_sweep_equals_serial_run(have_bench, tmp_path):
  # the same join without Ray (runs under the sanitizer build too)
  ref = tmp_path / "serial"
  line = serial(ref, "ablation")
  got = tmp_path / "sweep"
  ev.evaluate(got, commands=["ablation"], bench=BENCH, fast=True, serial=True, progress=False)
  mine = json.loads((got / "ablation.json").read_text())
  assert physics(mine) == physics(line)
  assert mine["full_pipeline_runs"] == line["full_pipeline_runs"] == 3     # totals summed over the cases
  assert_same_tables(ref, got, COMMAND_TABLES["ablation"])


def test_join_order_and_totals():
  def row(k, success):
    return {"status": "completed", "params": {"case": k},
            "summary": {"command": "ablation", "fast": True, "runs": [{"k": k}], "full_pipeline_success": success,
                        "full_pipeline_runs": 1},
            "tables": {"ablation.tsv": f"# bench-eval fast\nk\n{k}\n"}}
  line, tables = ev.join([row(0, 1), row(1, 0), row(2, 1)])
  assert line == {"command": "ablation", "fast": True, "runs": [{"k": 0}, {"k": 1}, {"k": 2}],
                  "full_pipeline_success": 2, "full_pipeline_runs": 3}
  assert tables == {"ablation.tsv": "# bench-eval fast\nk\n0\n1\n2\n"}
  odd = row(3, 1)
  odd["summary"]["fast"] = False
  with pytest.raises(ValueError, match="fast"):
    ev.join([row(0, 1), odd])
  failed = {**row(4, 1), "status": "error", "message": "bench-eval exited with -11"}
  with pytest.raises(ValueError, match="did not complete.*-11"):
    ev.join([row(0, 1), failed])


def test_case_out_of_range_is_a_bad_input_row(have_bench):
  n = ev.case_count(BENCH, "perf", fast=True)
  r = ev.run_bench_case(BENCH, "perf", n, fast=True)
  assert r["status"] == "bad_input" and r["exit_code"] == 2
  assert f"has cases 0..{n - 1}" in r["message"], r["message"]


# ---------- issue 20 item 4: serial, Ray workers and mujoco.rollout threads agree ----------

def test_serial_ray_and_rollout_give_the_same_states(local_ray, tmp_path):
  import numpy as np
  import cusp.sweep as sweep
  import cusp.throughput as tp
  # the fast ablation's first three cases: 45 deg none, 45 deg all three, 60 deg all three (3 disks, h 1 ms):
  # three models of one size in one rollout call, each its own tilt and keys
  cases = [0, 1, 2]
  rows_s, _ = tp.run_serial(BENCH, cases, True, tmp_path / "serial")
  with sweep.ray_session():   # the module's Ray
    rows_r, _ = tp.run_ray(BENCH, cases, True, tmp_path / "ray")
  nsteps = {k: round(r["summary"]["target_s"] / r["summary"]["runs"][0]["h_s"]) for k, r in zip(cases, rows_s)}
  assert set(nsteps.values()) == {400}
  final, _ = tp.run_rollout(tmp_path / "serial", cases, nsteps, threads=2)
  states = []
  for k, a, b in zip(cases, rows_s, rows_r):
    assert physics(a["summary"]) == physics(b["summary"])
    s = tp.read_state(tp._saved(tmp_path / "serial", k, ".state"))
    r = tp.read_state(tp._saved(tmp_path / "ray", k, ".state"))
    # bit for bit: MuJoCo's state and cusp's plugin state (its solve counters too)
    assert s.view(np.int64).tolist() == r.view(np.int64).tolist(), f"case {k}: Ray differs"
    assert s.view(np.int64).tolist() == final[k].view(np.int64).tolist(), f"case {k}: rollout differs"
    assert s[0] == pytest.approx(0.4)   # the state's time: the whole run, 400 steps of 1 ms
    states.append(s)
  # the cases are different runs (the comparison is not of equal things by construction)
  assert not np.array_equal(states[0], states[1]) and not np.array_equal(states[1], states[2])


def test_saved_model_runs_as_bench_eval_ran_it(have_bench, tmp_path):
  # the MJB bench-eval wrote, stepped here by mj_step: bench-eval's final state
  import mujoco
  import numpy as np
  import cusp.throughput as tp
  r = ev.run_bench_case(BENCH, "ablation", 2, fast=True, save=tmp_path)
  assert r["status"] == "completed"
  m = tp.load_saved_model(next(tmp_path.glob("*.mjb")))
  d = mujoco.MjData(m)
  for _ in range(400):
    mujoco.mj_step(m, d)
  full = mujoco.mjtState.mjSTATE_FULLPHYSICS.value
  x = np.empty(mujoco.mj_stateSize(m, full))
  mujoco.mj_getState(m, d, x, full)
  assert x.view(np.int64).tolist() == tp.read_state(next(tmp_path.glob("*.state"))).view(np.int64).tolist()
  # the tilt of case 2 (60 degrees) is in the model: the incline's face normal
  g = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, "incline")
  R = np.empty(9)
  mujoco.mju_quat2Mat(R, m.geom_quat[g])
  assert np.degrees(np.arccos(R[8])) == pytest.approx(60, abs=1e-9)


def test_throughput_table():
  import cusp.throughput as tp
  mode = lambda ts: {"seconds": ts, "median_s": sorted(ts)[1], "min_s": min(ts), "max_s": max(ts),
                     "cases_per_s": 64 / sorted(ts)[1], "steps_per_s": 1000 / sorted(ts)[1]}
  r = {"workers": 2, "threads": 2, "modes": {"serial": mode([100, 90, 110]), "ray": mode([50, 60, 55]),
                                             "rollout": mode([40, 45, 35])}}
  rows = tp.markdown(r).splitlines()
  assert len(rows) == 5
  assert rows[2].startswith("| serial") and "| 100, 90, 110 | 100 | 90–110 | 0.640 | 10 | 1.00× |" in rows[2]
  assert "| 55 | 50–60 |" in rows[3] and "1.82×" in rows[3]
  assert "| 40 | 35–45 |" in rows[4] and "2.50×" in rows[4]

"""cusp.sweep: parameter sweeps of a cusp scene on Ray, one task per case.

    import cusp.sweep
    rows = cusp.sweep.run("mjcf/default.xml",
                          grid={"arm.friction": [0.3, 0.8], "arm.disks": [3, 6]},
                          seconds=2, out="sweep-out")

or from a shell

    python -m cusp.sweep mjcf/default.xml --seconds 2 \\
        --set arm.friction=0.3,0.8 --set arm.disks=3,6 --out sweep-out

Every combination of the grid (or every case of a list of override dicts)
runs as its own Ray task: a local Ray instance by default, the cluster at
``address`` when given one. A task runs ``cusp-sim SCENE --json`` with the
case's ``--set``s, so a row holds every field of cusp-sim's JSON summary, the
physics is the C library's, and a case cannot take the others down with it.
Progress (done, failed, cases/s) goes to stderr. The results go to
OUT/results.json (one object per case, the summary as cusp-sim printed it)
and OUT/results.csv (one row per case, the summary flattened to dotted
columns, lists as JSON text); floats keep all their digits, so a row's
numbers are those of a serial cusp-sim run of the same case.

A case's ``status``: ``completed`` (cusp-sim exit 0), ``failed`` (exit 1:
the simulation failed; the summary says where), ``bad_input`` (exit 2: the
scene, a key or a value was refused; ``message`` is the library's), or
``error`` (the task did not finish: cusp-sim crashed, or Ray lost the
worker). Failures are rows too, never dropped and never ``completed``.
Re-running with the same OUT skips the cases already there, except those
with status ``error``, which run again.

cusp-sim is $CUSP_SIM, else the one beside the loaded libcusp.so, else
build/cusp-sim. On a cluster, the scene, cusp-sim and libcusp.so must be at
the same paths on every node (a shared file system).
"""

import argparse
import csv
import itertools
import json
import os
import pathlib
import subprocess
import sys
import time

__all__ = ["run", "run_tasks", "ray_session", "node_cpus", "cases_of", "run_case", "cusp_sim_path",
           "program_path", "add_run_arguments", "case_id", "STATUSES"]

STATUSES = ("completed", "failed", "bad_input", "error")
_EXIT_STATUS = {0: "completed", 1: "failed", 2: "bad_input"}
_PYTHON_DIR = str(pathlib.Path(__file__).resolve().parents[1])
_REPO = pathlib.Path(__file__).resolve().parents[2]


def program_path(name, env_var):
  """A program of the build: $ENV_VAR, else the one beside the loaded
  libcusp.so ($CUSP_LIBRARY), else build/NAME of this source tree."""
  env = os.environ.get(env_var)
  if env:
    return os.path.abspath(env)
  lib = os.environ.get("CUSP_LIBRARY")
  if lib:
    beside = pathlib.Path(lib).resolve().parent / name
    if beside.is_file():
      return str(beside)
  return str(_REPO / "build" / name)


def cusp_sim_path():
  """The cusp-sim to run: $CUSP_SIM, else beside libcusp.so, else build/cusp-sim."""
  return program_path("cusp-sim", "CUSP_SIM")


def _value_text(v):
  """An override value as cusp-sim's --set takes it."""
  if isinstance(v, bool):
    return "true" if v else "false"
  if isinstance(v, float):
    return repr(v)
  return str(v)


def cases_of(grid=None, cases=None):
  """The cases: every combination of grid {KEY: [values]} (the first key
  varies slowest), then the override dicts of cases; values as strings."""
  out = []
  if grid:
    keys = list(grid)
    for k in keys:
      if isinstance(grid[k], (str, bytes)) or not hasattr(grid[k], "__iter__"):
        raise ValueError(f"cusp.sweep: grid[{k!r}] must be a list of values")
    for combo in itertools.product(*(list(grid[k]) for k in keys)):
      out.append({k: _value_text(v) for k, v in zip(keys, combo)})
  for c in cases or []:
    out.append({k: _value_text(v) for k, v in dict(c).items()})
  for c in out:
    for k in c:
      inst, dot, key = k.partition(".")
      if not dot or not inst or not key or "=" in inst:
        raise ValueError(f"cusp.sweep: override key {k!r} must be INSTANCE.KEY")
  if not out:
    out.append({})
  return out


def case_id(scene, overrides, seconds, timestep=None, max_penetration=None):
  """What makes a case the same case: the scene's path, the run settings and
  the overrides in order (a JSON text)."""
  return json.dumps({"scene": str(scene), "seconds": seconds, "timestep": timestep,
                     "max_penetration": max_penetration,
                     "overrides": [[k, v] for k, v in overrides.items()]}, sort_keys=True)


def _command(cusp_sim, scene, overrides, seconds, timestep, max_penetration):
  cmd = [cusp_sim, str(scene), "--json", "--seconds", repr(float(seconds))]
  if timestep is not None:
    cmd += ["--timestep", repr(float(timestep))]
  if max_penetration is not None:
    cmd += ["--max-penetration", repr(float(max_penetration))]
  for k, v in overrides.items():
    cmd += ["--set", f"{k}={v}"]
  return cmd


def run_case(scene, overrides, seconds, timestep=None, max_penetration=None, cusp_sim=None, timeout=None):
  """One case, here and now: cusp-sim's summary and how it ended, as a row
  (without the case id). Used by the Ray task and by a serial sweep."""
  cusp_sim = cusp_sim or cusp_sim_path()
  cmd = _command(cusp_sim, scene, overrides, seconds, timestep, max_penetration)
  row = {"status": "error", "exit_code": None, "message": None, "summary": None}
  try:
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
  except (OSError, subprocess.TimeoutExpired) as e:
    row["message"] = f"cannot run {cusp_sim}: {e}"
    return row
  row["exit_code"] = p.returncode
  row["status"] = _EXIT_STATUS.get(p.returncode, "error")
  lines = [l for l in p.stdout.splitlines() if l.strip()]
  if lines and p.returncode in (0, 1):
    try:
      row["summary"] = json.loads(lines[-1])
    except ValueError:
      row["status"] = "error"
  said = [l[len("cusp-sim: "):] for l in p.stderr.splitlines() if l.startswith("cusp-sim: ")]
  if row["summary"] and row["summary"].get("failure"):
    row["message"] = row["summary"]["failure"]
  elif said:
    row["message"] = said[-1]
  elif row["status"] != "completed":
    row["message"] = (p.stderr.strip().splitlines() or [
        f"cusp-sim killed by signal {-p.returncode}" if p.returncode < 0 else
        f"cusp-sim exited with {p.returncode}"])[-1]
  if row["status"] == "completed" and not row["summary"]:
    row["status"], row["message"] = "error", "cusp-sim printed no JSON summary"
  return row


# ---------- the results files ----------

def _flatten(prefix, x, out):
  if isinstance(x, dict):
    for k, v in x.items():
      _flatten(f"{prefix}.{k}" if prefix else k, v, out)
  else:
    out[prefix] = x


def _cell(x):
  if x is None:
    return ""
  if isinstance(x, bool):
    return "true" if x else "false"
  if isinstance(x, float):
    return repr(x)
  if isinstance(x, (list, dict)):
    return json.dumps(x)
  return str(x)


def _write(out, rows):
  """OUT/results.json and OUT/results.csv, each replaced whole (write, rename)."""
  out = pathlib.Path(out)
  tmp = out / "results.json.tmp"
  tmp.write_text(json.dumps(rows, indent=1) + "\n")
  os.replace(tmp, out / "results.json")
  flat, columns = [], {}
  keys = []
  for r in rows:
    for k in _labels(r):
      if k not in keys:
        keys.append(k)
  for r in rows:
    f = {"case": r["case"], "status": r["status"], "exit_code": r["exit_code"], "message": r["message"]}
    for k in keys:
      f[k] = _labels(r).get(k)
    _flatten("", r["summary"] or {}, f)
    for k in f:
      columns.setdefault(k, None)
    flat.append(f)
  tmp = out / "results.csv.tmp"
  with open(tmp, "w", newline="") as fh:
    w = csv.writer(fh)
    w.writerow(list(columns))
    for f in flat:
      w.writerow([_cell(f.get(c)) for c in columns])
  os.replace(tmp, out / "results.csv")


def _read(out):
  path = pathlib.Path(out) / "results.json"
  if not path.is_file():
    return []
  rows = json.loads(path.read_text())
  if not isinstance(rows, list):
    raise ValueError(f"cusp.sweep: {path} is not a list of rows")
  return rows


# ---------- the sweep ----------

def _labels(row):
  """What a row's case varies: cusp-sim's overrides, or another runner's params."""
  return row.get("overrides") or row.get("params") or {}


def _ray_task():
  import ray

  @ray.remote(num_cpus=1, max_retries=0)
  def task(fn, args):
    return fn(*args)
  return task


class _Progress:
  def __init__(self, total, skipped, stream):
    self.total, self.skipped, self.stream = total, skipped, stream
    self.done = self.failed = 0
    self.t0 = time.perf_counter()

  def case(self, row):
    self.done += 1
    self.failed += row["status"] != "completed"
    if self.stream:
      dt = time.perf_counter() - self.t0
      what = ", ".join(f"{k}={v}" for k, v in _labels(row).items()) or "(no overrides)"
      tail = "" if row["status"] == "completed" else f": {row['message']}"
      print(f"sweep: {self.done}/{self.total} done, {self.failed} failed, "
            f"{self.done / dt if dt > 0 else 0:.2f} cases/s; {what} {row['status']}{tail}",
            file=self.stream, flush=True)

  def restart(self):
    self.t0 = time.perf_counter()

  def start(self):
    if self.stream:
      print(f"sweep: {self.total} case(s) to run, {self.skipped} already in the output", file=self.stream,
            flush=True)

  def end(self):
    self.seconds = time.perf_counter() - self.t0
    if self.stream:
      print(f"sweep: finished {self.done} case(s), {self.failed} not completed, in {self.seconds:.2f} s "
            f"({self.done / self.seconds if self.seconds > 0 else 0:.2f} cases/s)", file=self.stream, flush=True)


def run(scene, grid=None, cases=None, seconds=2.0, out=None, timestep=None, max_penetration=None,
        address=None, num_cpus=None, serial=False, cusp_sim=None, timeout=None, progress=True):
  """Runs every case of grid (all combinations) and cases (a list of
  override dicts) of scene for `seconds` of simulated time; returns the rows
  of this sweep's cases (the ones run now and the ones found in out), in case
  order. With out, writes out/results.json and out/results.csv (all rows
  there, also other sweeps' ones) and skips the cases already done.

  Ray: uses the running Ray if ray.init was called, else starts a local one
  (num_cpus workers, default all) or joins the cluster at address, and
  shuts down what it started. serial=True runs the cases one by one here,
  without Ray (the reference a Ray sweep must equal). A case that runs longer
  than timeout seconds is an error row. progress: True (stderr), a stream,
  or False (silent)."""
  scene = os.path.abspath(scene)
  if not os.path.isfile(scene):
    raise ValueError(f"cusp.sweep: scene {scene} is not a file")
  if not (float(seconds) > 0):
    raise ValueError(f"cusp.sweep: seconds must be > 0, not {seconds}")
  cusp_sim = os.path.abspath(cusp_sim) if cusp_sim else cusp_sim_path()
  if not os.access(cusp_sim, os.X_OK):
    raise ValueError(f"cusp.sweep: cusp-sim {cusp_sim} is not an executable (build it, or set CUSP_SIM)")
  settings = (seconds, timestep, max_penetration, cusp_sim, timeout)
  tasks = [{"case": case_id(scene, c, seconds, timestep, max_penetration),
            "row": {"scene": scene, "overrides": c}, "args": (scene, c, *settings)}
           for c in cases_of(grid, cases)]
  return run_tasks(tasks, run_case, out=out, address=address, num_cpus=num_cpus, serial=serial,
                   progress=progress)


def run_tasks(tasks, fn, out=None, address=None, num_cpus=None, serial=False, progress=True, cpus_per_case=1):
  """The sweep of any runner: tasks is a list of {"case": ID, "row": {...},
  "args": (...)}; fn(*args), run in a Ray task (or here when serial), returns
  the case's result ({"status", "exit_code", "message", "summary", ...}; a
  task that dies is an error row). A row is {"case": ID, **row, **result};
  the row's "overrides" or "params" dict names the case in the CSV's first
  columns and in the progress lines. Returns this sweep's rows in task order;
  out, re-runs and Ray as in run(). fn must be importable by the workers
  (a module-level function of the cusp package). cpus_per_case: the CPUs a
  case holds on Ray (all of a node's: it runs alone there)."""
  mine = {t["case"] for t in tasks}
  found = _read(out) if out is not None else []
  if out is not None:
    os.makedirs(out, exist_ok=True)
  others = [r for r in found if r.get("case") not in mine]      # other sweeps' rows stay as they are
  known = {r["case"]: r for r in found if r.get("case") in mine and r.get("status") != "error"}
  stale = {r["case"]: r for r in found if r.get("case") in mine and r.get("status") == "error"}
  pending, queued = [], set()
  for t in tasks:
    if t["case"] not in known and t["case"] not in queued:
      queued.add(t["case"])
      pending.append(t)

  def rows():   # the file's rows: the others, then this sweep's in case order
    seen, mine_rows = set(), []
    for t in tasks:
      r = known.get(t["case"]) or stale.get(t["case"])   # an error row stays until its re-run ends
      if r and t["case"] not in seen:
        seen.add(t["case"])
        mine_rows.append(r)
    return others + mine_rows

  stream = sys.stderr if progress is True else (progress or None)
  prog = _Progress(len(pending), len(tasks) - len(pending), stream)
  prog.start()
  last_write = [0.0]

  def record(t, result):
    row = {"case": t["case"], **t["row"], **result}
    known[t["case"]] = row
    prog.case(row)
    if out is not None and time.perf_counter() - last_write[0] > 1.0:
      _write(out, rows())
      last_write[0] = time.perf_counter()

  try:
    if serial or not pending:
      for t in pending:
        record(t, fn(*t["args"]))
    else:
      with ray_session(address, num_cpus):
        prog.restart()   # cases/s from here: Ray's startup is not the cases'
        _run_ray(pending, fn, record, cpus_per_case)
  finally:
    if out is not None:
      _write(out, rows())
    prog.end()
  return [known[t["case"]] for t in tasks]


class ray_session:
  """with ray_session(address, num_cpus): a Ray to submit to: the running
  one if ray.init was called, else a local one of num_cpus workers (default
  all CPUs), or the cluster at address; what it starts it shuts down. The
  workers find this package (PYTHONPATH) and this process's CUSP_LIBRARY."""

  def __init__(self, address=None, num_cpus=None):
    self.address, self.num_cpus, self.started = address, num_cpus, False

  def __enter__(self):
    import ray
    if not ray.is_initialized():
      env = {"PYTHONPATH": os.pathsep.join(p for p in (_PYTHON_DIR, os.environ.get("PYTHONPATH")) if p)}
      if os.environ.get("CUSP_LIBRARY"):
        env["CUSP_LIBRARY"] = os.path.abspath(os.environ["CUSP_LIBRARY"])
      kw = {"runtime_env": {"env_vars": env}, "log_to_driver": False}
      if self.address:
        ray.init(address=self.address, **kw)
      else:
        ray.init(num_cpus=self.num_cpus, include_dashboard=False, **kw)
      self.started = True
    return self

  def __exit__(self, *exc):
    if self.started:
      import ray
      ray.shutdown()


def node_cpus():
  """The CPUs of the largest node of the running Ray (a case asking for them all runs alone)."""
  import ray
  return max([int(n["Resources"].get("CPU", 0)) for n in ray.nodes() if n.get("Alive")] or [1]) or 1


def _run_ray(pending, fn, record, cpus_per_case):
  import ray
  task = _ray_task()
  if cpus_per_case != 1:
    task = task.options(num_cpus=cpus_per_case)
  refs = {task.remote(fn, t["args"]): t for t in pending}
  waiting = list(refs)
  while waiting:
    ready, waiting = ray.wait(waiting, num_returns=1)
    for ref in ready:
      t = refs[ref]
      try:
        result = ray.get(ref)
      except Exception as e:   # the task died (worker lost, killed): an error row, not lost
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        result = {"status": "error", "exit_code": None, "message": f"Ray task failed: {first}",
                  "summary": None}
      record(t, result)


# ---------- python -m cusp.sweep ----------

def add_run_arguments(ap):
  """Where and how the cases of a command-line sweep run (this one's and
  cusp.evaluation's): --address, --num-cpus, --serial, --timeout, taken by
  run() and run_tasks() under the same names."""
  ap.add_argument("--address", help="a Ray cluster's address (default: a local Ray instance)")
  ap.add_argument("--num-cpus", type=int, help="workers of the local Ray instance (default: all CPUs)")
  ap.add_argument("--serial", action="store_true", help="run the cases one by one here, without Ray")
  ap.add_argument("--timeout", type=float, help="a case running longer than this (wall s) is an error")


def main(argv=None):
  ap = argparse.ArgumentParser(prog="python -m cusp.sweep",
                               description="Runs every combination of --set values of a cusp scene, one "
                               "Ray task per case; writes OUT/results.csv and OUT/results.json.")
  ap.add_argument("scene")
  ap.add_argument("--seconds", type=float, default=2.0, help="simulated time per case, s (default 2)")
  ap.add_argument("--timestep", type=float, help="overrides the scene's timestep, s")
  ap.add_argument("--max-penetration", type=float, help="cusp-sim's --max-penetration, m")
  ap.add_argument("--set", action="append", default=[], metavar="I.K=V1,V2,...",
                  help="a grid axis: key K of soft instance I takes each value (repeatable)")
  ap.add_argument("--out", required=True, help="output directory (cases already there are skipped)")
  add_run_arguments(ap)
  a = ap.parse_args(argv)
  grid = {}
  for s in a.set:
    k, eq, v = s.partition("=")
    if not eq or "." not in k or not v:
      ap.error(f"--set needs INSTANCE.KEY=V1,V2,..., not '{s}'")
    grid.setdefault(k, []).extend(v.split(","))
  try:
    rows = run(a.scene, grid=grid, seconds=a.seconds, out=a.out, timestep=a.timestep,
               max_penetration=a.max_penetration, address=a.address, num_cpus=a.num_cpus,
               serial=a.serial, timeout=a.timeout)
  except ValueError as e:
    print(e, file=sys.stderr)
    return 2
  return 0 if all(r["status"] == "completed" for r in rows) else 1


if __name__ == "__main__":
  # through the package's module, so that Ray's workers find the runner by its name
  from cusp.sweep import main as _main
  sys.exit(_main())

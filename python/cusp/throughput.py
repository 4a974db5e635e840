"""cusp.throughput: how fast the ablation's configurations run serially, on
local Ray workers (cusp.sweep) and in mujoco.rollout threads, and that the
three give the same results.

    python -m cusp.throughput [--fast] [--cases 0-63] [--repeats 3] [--workers 2] [--threads 2]
                              [--out DIR] [--plot FILE.png]

The cases are bench-eval's ablation cases (``bench-eval ablation --list``;
cases 0-63 of the full run are the CUSP paper's Scenario C with cusp's solver
chain: 2 box angles x 2 disk counts x 2 time steps x 8 conditioning subsets,
3 s simulated each). Three ways to run them, timed over the whole batch:

serial   one case after another, each its own ``bench-eval ablation --case K``
         process (cusp.sweep's serial mode, no Ray);
ray      the same processes as Ray tasks on a local Ray of --workers workers
         (Ray's startup and its workers' first import are outside the timing:
         paid once per session, reported as ray_start_s);
rollout  ``mujoco.rollout`` with --threads threads over one model per case:
         the models bench-eval set up for the run (``--save``: cusp's
         expansion, the case's keys, time step and box tilt, saved as MJB),
         each from the state mj_makeData gives it, for the run's steps.
         rollout needs models of one size and one step count per call, so
         the cases go in groups (disks, time step), and in chunks of steps
         (the state of every step of a chunk is rollout's output; the next
         chunk starts from the last, which holds everything the next step
         depends on: cusp's part is d->plugin_state). Loading the MJB files
         is inside the timing, compiling the scene is not (bench-eval did it).

Identical results: every case's final mjSTATE_FULLPHYSICS state (MuJoCo's and
cusp's plugin state, whose counters hold the LCP solves, converged solves and
fallbacks) is compared bit for bit across the three, and with it the
ablation's rows of the serial and Ray runs (every non-timing field).

Prints one JSON line: per mode the wall times of the repeats, their median,
min and max, cases/s at the median; whether the results were identical.
The machine may be shared: read the spread before the medians (the 1-minute
load average after each repeat is recorded). With --out the JSON is written
after every repeat too.
"""

import argparse
import json
import math
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

import cusp  # noqa: F401  (registers cusp's plugin: the MJB models need it)
import mujoco
import mujoco.rollout

from cusp import evaluation, sweep

__all__ = ["run_serial", "run_ray", "run_rollout", "read_state", "load_saved_model", "measure", "plot", "markdown"]

FULL = mujoco.mjtState.mjSTATE_FULLPHYSICS.value
CHUNK_BYTES = 256 << 20   # rollout's state output per call


def _tasks(bench, cases, fast, save_root):
  save_root.mkdir(parents=True, exist_ok=True)
  return [{"case": json.dumps({"bench": bench, "command": "ablation", "case": k, "fast": fast,
                               "save": str(save_root)}),
           "row": {"params": {"command": "ablation", "case": k}},
           "args": (bench, "ablation", k, fast, str(evaluation._REPO), str(save_root / f"case-{k}"), None)}
          for k in cases]


def read_state(path):
  """A state bench-eval --save wrote (one %a double a line)."""
  return np.array([float.fromhex(l) for l in pathlib.Path(path).read_text().split()], dtype=np.float64)


def _saved(save_root, k, ext):
  files = sorted((save_root / f"case-{k}").glob(f"*{ext}"))
  if len(files) != 1:
    raise ValueError(f"cusp.throughput: case {k}: expected one {ext} in {save_root / f'case-{k}'}, found {len(files)}")
  return files[0]


def _plugin_slot():
  """This process's registry slot of cusp.softbody (MuJoCo's mjp_getPlugin,
  through libcusp.so's link to libmujoco: the Python bindings do not have it)."""
  import ctypes
  fn = cusp._lib.mjp_getPlugin
  fn.restype, fn.argtypes = ctypes.c_void_p, [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]
  slot = ctypes.c_int(-1)
  if not fn(b"cusp.softbody", ctypes.byref(slot)) or slot.value < 0:
    raise RuntimeError("cusp.throughput: cusp.softbody is not registered in this process")
  return slot.value


def load_saved_model(path):
  """A model bench-eval --save wrote. An MJB names a plugin by its slot in the
  writing process's registry (bench-eval registers cusp alone; Python's
  mujoco has its bundled plugins first), so every instance is pointed at
  cusp.softbody's slot here; the ablation's scenes hold cusp's instances only."""
  m = mujoco.MjModel.from_binary_path(str(path))
  m.plugin[:] = _plugin_slot()
  return m


def _check(rows):
  bad = [r for r in rows if r["status"] != "completed"]
  if bad:
    raise RuntimeError(f"cusp.throughput: case {bad[0]['params']} did not complete: {bad[0]['message']}")
  return rows


def run_serial(bench, cases, fast, save_root):
  """The cases one after another (cusp.sweep's serial mode); rows, seconds."""
  t0 = time.perf_counter()
  rows = sweep.run_tasks(_tasks(bench, cases, fast, save_root), evaluation.run_bench_case, serial=True,
                         progress=False)
  return _check(rows), time.perf_counter() - t0


def run_ray(bench, cases, fast, save_root):
  """The cases as Ray tasks on the running Ray; rows, seconds."""
  t0 = time.perf_counter()
  rows = sweep.run_tasks(_tasks(bench, cases, fast, save_root), evaluation.run_bench_case, progress=False)
  return _check(rows), time.perf_counter() - t0


def run_rollout(models_root, cases, nsteps, threads):
  """One model per case (models_root/case-K/*.mjb) rolled out by
  mujoco.rollout with `threads` threads for nsteps[K] steps from the state
  mj_makeData gives it; returns ({case: final state}, seconds)."""
  t0 = time.perf_counter()
  models = {k: load_saved_model(_saved(models_root, k, ".mjb")) for k in cases}
  groups = {}
  for k in cases:   # rollout: one size and one step count per call
    m = models[k]
    groups.setdefault((mujoco.mj_stateSize(m, FULL), m.nv, m.nsensordata, nsteps[k]), []).append(k)
  final = {}
  with mujoco.rollout.Rollout(nthread=threads) as pool:
    for (nstate, _, _, nstep), ks in groups.items():
      ms = [models[k] for k in ks]
      state = np.empty((len(ks), nstate))
      for i, m in enumerate(ms):
        d = mujoco.MjData(m)   # the plugin's init: the state bench-eval's run starts from
        mujoco.mj_getState(m, d, state[i], FULL)
      datas = [mujoco.MjData(ms[0]) for _ in range(max(1, threads))]
      chunk = max(1, min(nstep, CHUNK_BYTES // (8 * nstate * len(ks))))
      out = np.empty((len(ks), chunk, nstate))
      done = 0
      while done < nstep:
        n = min(chunk, nstep - done)
        buf = out if n == chunk else np.empty((len(ks), n, nstate))
        pool.rollout(ms, datas, state, nstep=n, state=buf)
        state = buf[:, -1].copy()
        done += n
      for i, k in enumerate(ks):
        final[k] = state[i]
  return final, time.perf_counter() - t0


def _warm_up(bench, fast, workers):
  import ray
  task = sweep._ray_task()
  ray.get([task.remote(evaluation.case_count, (bench, "ablation", fast)) for _ in range(2 * workers)])


def _bits(x):
  return np.ascontiguousarray(x, dtype=np.float64).view(np.int64)


def _same_state(a, b):
  return a.shape == b.shape and bool(np.array_equal(_bits(a), _bits(b)))


def _physics(x):
  if isinstance(x, dict):
    return {k: _physics(v) for k, v in x.items() if not evaluation.is_timing(k)}
  if isinstance(x, list):
    return [_physics(v) for v in x]
  return x


def measure(bench=None, cases=None, fast=False, repeats=3, workers=2, threads=2, work=None, progress=True,
            each_repeat=None):
  """Runs the three modes `repeats` times (interleaved, so the machine's
  load drifts over all three alike) and compares their results. Returns
  the JSON object main prints; each_repeat(object so far) after every repeat."""
  bench = os.path.abspath(bench or evaluation.bench_eval_path())
  n = evaluation.case_count(bench, "ablation", fast)
  cases = list(range(min(n, 64))) if cases is None else list(cases)
  if not cases or min(cases) < 0 or max(cases) >= n:
    raise ValueError(f"cusp.throughput: cases must be in 0..{n - 1}")
  own = work is None
  work = pathlib.Path(work or tempfile.mkdtemp(prefix="cusp-throughput-"))
  say = (lambda *a: print("throughput:", *a, file=sys.stderr, flush=True)) if progress else (lambda *a: None)
  times = {"serial": [], "ray": [], "rollout": []}
  identical, differ, loads = True, [], []
  t_ray0 = time.perf_counter()
  try:
    with sweep.ray_session(num_cpus=workers):
      _warm_up(bench, fast, workers)   # Ray starts its worker processes on first use: not the cases' time
      t_ray = time.perf_counter() - t_ray0
      for rep in range(repeats):
        shutil.rmtree(work, ignore_errors=True)
        rows_s, t = run_serial(bench, cases, fast, work / "serial")
        times["serial"].append(t)
        say(f"repeat {rep + 1}: serial {t:.1f} s")
        rows_r, t = run_ray(bench, cases, fast, work / "ray")
        times["ray"].append(t)
        say(f"repeat {rep + 1}: ray ({workers} workers) {t:.1f} s")
        target = rows_s[0]["summary"]["target_s"]
        nsteps = {}
        for k, r in zip(cases, rows_s):
          run = r["summary"]["runs"][0]
          nsteps[k] = max(1, math.ceil(target / run["h_s"] - 1e-6))
        final, t = run_rollout(work / "serial", cases, nsteps, threads)
        times["rollout"].append(t)
        say(f"repeat {rep + 1}: rollout ({threads} threads) {t:.1f} s")
        for k, a, b in zip(cases, rows_s, rows_r):
          s_serial = read_state(_saved(work / "serial", k, ".state"))
          s_ray = read_state(_saved(work / "ray", k, ".state"))
          same = (_physics(a["summary"]) == _physics(b["summary"]) and _same_state(s_serial, s_ray)
                  and _same_state(s_serial, final[k]))
          if not same:
            identical = False
            differ.append({"repeat": rep + 1, "case": k, "label": a["summary"]["runs"][0]})
        loads.append(os.getloadavg()[0])
        if each_repeat:
          each_repeat(_summary(times, nsteps, cases, fast, rep + 1, workers, threads, t_ray, identical, differ,
                               loads))
  finally:
    if own:
      shutil.rmtree(work, ignore_errors=True)
  return _summary(times, nsteps, cases, fast, repeats, workers, threads, t_ray, identical, differ, loads)


def _summary(times, nsteps, cases, fast, repeats, workers, threads, t_ray, identical, differ, loads):
  steps = sum(nsteps.values())
  modes = {}
  for mode, ts in times.items():
    med = float(np.median(ts))
    modes[mode] = {"seconds": ts, "median_s": med, "min_s": min(ts), "max_s": max(ts),
                   "cases_per_s": len(cases) / med, "steps_per_s": steps / med}
  cpu = ""
  try:
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "")
  except OSError:
    pass
  return {"command": "throughput", "fast": fast, "cases": len(cases), "case_list": cases, "steps": steps,
          "repeats": repeats, "workers": workers, "threads": threads, "cpus": os.cpu_count(), "cpu": cpu,
          "openblas_num_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
          "ray_start_s": t_ray, "modes": modes, "identical": identical, "differ": differ,
          "load_average_1min": loads}


def plot(result, path):
  """A bar per mode: cases/s at the median, the repeats' range as error bars (gnuplot)."""
  rows = []
  for mode, label in (("serial", "serial"), ("ray", f"Ray, {result['workers']} workers"),
                      ("rollout", f"rollout, {result['threads']} threads")):
    m = result["modes"][mode]
    n = result["cases"]
    rows.append(f'"{label}"\t{n / m["median_s"]}\t{n / m["max_s"]}\t{n / m["min_s"]}')
  with tempfile.NamedTemporaryFile("w", suffix=".dat", delete=False) as fh:
    fh.write("\n".join(rows) + "\n")
    dat = fh.name
  script = f"""
set terminal pngcairo size 640,400 enhanced font 'Sans,9'
set output '{path}'
set datafile separator "\\t"
set title "Ablation ({result['cases']} configurations{', fast' if result['fast'] else ', 3 s each'}): throughput\\n{{/*0.85 median of {result['repeats']} repeats; bars: the repeats' range; {result['cpus']} shared cores}}"
set style fill solid 0.8 border rgb "#333333"
set boxwidth 0.5
set yrange [0:*]
set ylabel "configurations per second"
set grid ytics lc rgb "#dddddd"
set xrange [-0.6:2.6]
plot '{dat}' using 0:2:xtic(1) with boxes lc rgb "#1f77b4" notitle, '' using 0:2:3:4 with yerrorbars lc rgb "black" pt 0 lw 1.5 notitle
"""
  subprocess.run(["gnuplot"], input=script, text=True, check=True)
  os.unlink(dat)


def markdown(result):
  """The measurement as a markdown table (docs/sweeps.md)."""
  serial = result["modes"]["serial"]["median_s"]
  lines = ["| mode | wall time per repeat (s) | median (s) | range (s) | configurations/s | steps/s | vs serial |",
           "|---|---|---|---|---|---|---|"]
  for mode, label in (("serial", "serial (one bench-eval process after another)"),
                      ("ray", f"Ray, {result['workers']} local workers"),
                      ("rollout", f"mujoco.rollout, {result['threads']} threads")):
    m = result["modes"][mode]
    lines.append(f"| {label} | {', '.join(f'{t:.0f}' for t in m['seconds'])} | {m['median_s']:.0f} | "
                 f"{m['min_s']:.0f}–{m['max_s']:.0f} | {m['cases_per_s']:.3f} | {m['steps_per_s']:.0f} | "
                 f"{serial / m['median_s']:.2f}× |")
  return "\n".join(lines) + "\n"


def _case_list(text):
  out = []
  for part in text.split(","):
    a, dash, b = part.partition("-")
    out += list(range(int(a), int(b) + 1)) if dash else [int(a)]
  return out


def main(argv=None):
  ap = argparse.ArgumentParser(prog="python -m cusp.throughput", description=__doc__.split("\n")[0])
  ap.add_argument("--bench", help="bench-eval (default $CUSP_BENCH_EVAL, else build/bench-eval)")
  ap.add_argument("--fast", action="store_true", help="bench-eval's fast ablation (short runs)")
  ap.add_argument("--cases", help="ablation cases, e.g. 0-63 (default: the first 64, the paper's with the chain)")
  ap.add_argument("--repeats", type=int, default=3)
  ap.add_argument("--workers", type=int, default=2, help="local Ray workers (default 2)")
  ap.add_argument("--threads", type=int, default=2, help="mujoco.rollout threads (default 2)")
  ap.add_argument("--out", help="also write the JSON line to this file")
  ap.add_argument("--plot", help="a PNG of the throughputs (gnuplot)")
  ap.add_argument("--from", dest="from_json", metavar="JSON",
                  help="measure nothing: print the markdown table of a JSON line written before (and --plot it)")
  a = ap.parse_args(argv)
  if a.from_json:
    r = json.loads(pathlib.Path(a.from_json).read_text())
    print(markdown(r), end="")
    if a.plot:
      plot(r, a.plot)
    return 0
  try:
    def save(partial):   # after every repeat: a long run interrupted keeps what it measured
      if a.out:
        pathlib.Path(a.out).write_text(json.dumps(partial) + "\n")
    r = measure(a.bench, _case_list(a.cases) if a.cases else None, a.fast, a.repeats, a.workers, a.threads,
                each_repeat=save)
  except ValueError as e:
    print(e, file=sys.stderr)
    return 2
  line = json.dumps(r)
  print(line)
  if a.out:
    pathlib.Path(a.out).write_text(line + "\n")
  if a.plot:
    plot(r, a.plot)
  return 0 if r["identical"] else 1


if __name__ == "__main__":
  from cusp.throughput import main as _main
  sys.exit(_main())

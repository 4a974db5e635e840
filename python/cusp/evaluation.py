"""cusp.evaluation: the evaluation report's measurements as cusp.sweep sweeps.

    python -m cusp.evaluation --out DIR [--fast] [--bench build/bench-eval]
        [--commands ablation,compare,perf,scaling] [--address A | --num-cpus N | --serial]

bench-eval (bench/eval.c) stays the physics and measurement engine: each of
its commands (ablation, compare, perf, scaling) is a list of cases
(``bench-eval CMD --list``), and ``bench-eval CMD --case K`` measures case K
alone. Here every case is a task of cusp.sweep.run_tasks (Ray: a local
instance by default, a cluster at an address, or one by one with --serial),
and the cases' rows are joined, in case order, into what the serial
``bench-eval CMD`` writes: DIR/CMD.json (its JSON line) and its tables
DIR/*.tsv. So the report (scripts/report.sh) reads the same files, with the
same physics numbers as the serial run bit for bit; the timing columns are
measured with other cases running beside them (perf's cases hold every CPU of
a node, so they run alone there; other agents' load is not ours to stop).
One row per case is kept in DIR/sweep/results.json and results.csv
(re-runs skip the cases done, as every cusp.sweep). DIR/timing: seconds per
command.
"""

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

from cusp import sweep

__all__ = ["COMMANDS", "bench_eval_path", "case_count", "run_bench_case", "join", "evaluate", "is_timing"]

COMMANDS = ("ablation", "compare", "perf", "scaling")
# the totals of a command's JSON line that count over its cases (summed when joining)
_TOTALS = ("full_pipeline_success", "full_pipeline_runs", "fb_only_success", "fb_only_runs")
_REPO = pathlib.Path(__file__).resolve().parents[2]
_TIMING = {"wall_s", "wall_per_sim_s", "us_per_step", "realtime_factor", "fallback_time_share", "stage_share_median",
           "cpu"}


def is_timing(name):
  """A column or JSON field of bench-eval's that is a wall-clock measurement
  (or the machine's name): the only ones a sweep's row may differ in from
  the serial run's."""
  return name in _TIMING or name.endswith("_us") or name.startswith("mean_us_")


def bench_eval_path():
  """$CUSP_BENCH_EVAL, else beside the loaded libcusp.so ($CUSP_LIBRARY), else build/bench-eval."""
  return sweep.program_path("bench-eval", "CUSP_BENCH_EVAL")


def _flags(fast, src, extra=()):
  return (["--fast"] if fast else []) + ["--src", str(src)] + list(extra)


def case_count(bench, command, fast=False, src=_REPO):
  """The number of cases of bench-eval COMMAND (its --list)."""
  p = subprocess.run([bench, command, "--list", *_flags(fast, src)], capture_output=True, text=True)
  if p.returncode != 0:
    raise ValueError(f"cusp.evaluation: {bench} {command} --list failed (exit {p.returncode}): {p.stderr.strip()}")
  return int(json.loads(p.stdout.splitlines()[-1])["cases"])


def run_bench_case(bench, command, k, fast=False, src=_REPO, save=None, timeout=None):
  """bench-eval COMMAND --case K in a scratch directory: a sweep result whose
  summary is the case's JSON object and whose tables are the files it wrote
  ({name: text}). status: completed (exit 0), bad_input (exit 2: its message),
  error (anything else, or no JSON)."""
  row = {"status": "error", "exit_code": None, "message": None, "summary": None, "tables": {}}
  extra = ["--save", str(save)] if save else []
  with tempfile.TemporaryDirectory(prefix="cusp-eval-") as tmp:
    cmd = [bench, command, "--case", str(k), "--out", tmp, *_flags(fast, src, extra)]
    try:
      p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=tmp)
    except (OSError, subprocess.TimeoutExpired) as e:
      row["message"] = f"cannot run {bench}: {e}"
      return row
    row["exit_code"] = p.returncode
    said = [l for l in p.stderr.splitlines() if l.startswith("bench-eval: ") and "[" not in l[:14]]
    if p.returncode != 0:
      row["status"] = "bad_input" if p.returncode == 2 else "error"
      row["message"] = (said or p.stderr.strip().splitlines() or [f"bench-eval exited with {p.returncode}"])[-1]
      return row
    try:
      row["summary"] = json.loads([l for l in p.stdout.splitlines() if l.strip()][-1])
    except (IndexError, ValueError):
      row["message"] = "bench-eval printed no JSON line"
      return row
    row["tables"] = {f.name: f.read_text() for f in sorted(pathlib.Path(tmp).glob("*.tsv"))}
    row["status"] = "completed"
  return row


def join(rows):
  """The serial run's output from its cases' rows (in case order): (the
  command's JSON object, {table: text}). The JSON: the first case's fields,
  its list (runs, rows or models) the cases' lists one after another, its
  totals summed; a table: the first case's two header lines, then every
  case's rows."""
  if not rows:
    raise ValueError("cusp.evaluation: no cases to join")
  bad = [r for r in rows if r["status"] != "completed"]
  if bad:
    raise ValueError(f"cusp.evaluation: {len(bad)} case(s) did not complete; first: "
                     f"{bad[0].get('params')}: {bad[0]['message']}")
  out = json.loads(json.dumps(rows[0]["summary"]))
  for r in rows[1:]:
    s = r["summary"]
    if list(s) != list(out):
      raise ValueError(f"cusp.evaluation: case {r.get('params')} has fields {list(s)}, case 0 {list(out)}")
    for k, v in s.items():
      if isinstance(v, list):
        out[k].extend(v)
      elif k in _TOTALS:
        out[k] += v
      elif v != out[k]:
        raise ValueError(f"cusp.evaluation: case {r.get('params')} says {k} = {v!r}, case 0 {out[k]!r}")
  tables = {}
  for name in rows[0]["tables"]:
    head = rows[0]["tables"][name].splitlines(keepends=True)[:2]
    body = []
    for r in rows:
      if name not in r["tables"]:
        raise ValueError(f"cusp.evaluation: case {r.get('params')} wrote no {name}")
      body += r["tables"][name].splitlines(keepends=True)[2:]
    tables[name] = "".join(head + body)
  return out, tables


def evaluate(out, commands=COMMANDS, bench=None, fast=False, src=_REPO, address=None, num_cpus=None,
             serial=False, progress=True, timeout=None):
  """Runs the commands' cases through cusp.sweep and writes out/CMD.json,
  out/*.tsv, out/timing and out/sweep/results.{json,csv}. Returns
  {command: seconds}."""
  bench = os.path.abspath(bench or bench_eval_path())
  if not os.access(bench, os.X_OK):
    raise ValueError(f"cusp.evaluation: bench-eval {bench} is not an executable (build it, or set CUSP_BENCH_EVAL)")
  for c in commands:
    if c not in COMMANDS:
      raise ValueError(f"cusp.evaluation: unknown command {c!r} (one of {', '.join(COMMANDS)})")
  out = pathlib.Path(out)
  out.mkdir(parents=True, exist_ok=True)
  src = os.path.abspath(src)
  took, workers = {}, 1
  session = sweep.ray_session(address, num_cpus) if not serial else None
  if session:
    session.__enter__()
  try:
    if session:
      import ray
      workers = int(ray.cluster_resources().get("CPU", 1))
    for command in commands:
      t0 = time.perf_counter()
      n = case_count(bench, command, fast, src)
      tasks = [{"case": json.dumps({"bench": bench, "command": command, "case": k, "fast": fast, "src": src}),
                "row": {"params": {"command": command, "case": k}},
                "args": (bench, command, k, fast, src, None, timeout)} for k in range(n)]
      if progress:
        print(f"evaluation: {command}: {n} case(s)", file=sys.stderr, flush=True)
      rows = sweep.run_tasks(tasks, run_bench_case, out=out / "sweep", serial=serial, progress=progress,
                             cpus_per_case=sweep.node_cpus() if session and command == "perf" else 1)
      line, tables = join(rows)
      for name, text in tables.items():
        (out / name).write_text(text)
      (out / f"{command}.json").write_text(json.dumps(line) + "\n")
      took[command] = time.perf_counter() - t0
  finally:
    if session:
      session.__exit__(None, None, None)
  with open(out / "timing", "w") as fh:
    for c, t in took.items():
      fh.write(f"{c} {t:.0f}\n")
    fh.write(f"workers {1 if serial else workers}\n")
  return took


def main(argv=None):
  ap = argparse.ArgumentParser(prog="python -m cusp.evaluation",
                               description="The evaluation report's measurements (bench-eval's cases) as "
                               "cusp.sweep sweeps; writes OUT/CMD.json and the tables the serial bench-eval writes.")
  ap.add_argument("--out", required=True, help="where the tables, CMD.json and sweep/ go")
  ap.add_argument("--fast", action="store_true", help="bench-eval's fast mode (a few short runs)")
  ap.add_argument("--bench", help="bench-eval (default $CUSP_BENCH_EVAL, else build/bench-eval)")
  ap.add_argument("--src", default=str(_REPO), help="the source tree holding mjcf/ (default this one)")
  ap.add_argument("--commands", default=",".join(COMMANDS), help="comma-separated (default all four)")
  sweep.add_run_arguments(ap)
  a = ap.parse_args(argv)
  try:
    evaluate(a.out, [c for c in a.commands.split(",") if c], a.bench, a.fast, a.src, a.address, a.num_cpus,
             a.serial, timeout=a.timeout)
  except ValueError as e:
    print(e, file=sys.stderr)
    return 1
  return 0


if __name__ == "__main__":
  from cusp.evaluation import main as _main
  sys.exit(_main())

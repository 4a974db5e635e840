"""Where `lcp_matrix=operator` (the LCP read from the kept contacts' Delassus blocks, no n x n
matrix formed) overtakes `stored` (A and its conditioned copy formed every pass): the CPU time a
step of each, on the same states, at several sizes of one scene.

For each value of the size key (default: the tiled rope's elements, rod0.sections), the scene is
loaded twice (lcp_matrix stored and operator), stepped --settle steps under stored, and its state
saved; then, --rounds times, each model steps --steps steps from that state, in alternating order,
timed by process CPU time. Per size: the LCP's mean size n (kept contacts x (pyramid + 2)) and,
per path, the median and range over the rounds of the CPU time a step; the median and range of
the per-round ratio operator / stored (the ratio of one round compares one machine state). One
JSON object per size on stdout (progress on stderr); exit code 1 if a run went non-finite.

  PYTHONPATH=python CUSP_LIBRARY=build/libcusp.so OPENBLAS_NUM_THREADS=1 \\
      .venv/bin/python bench/lcp_matrix_crossover.py --sizes 24 48 72
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import mujoco
import numpy

import cusp


def run_steps(model, data, state, steps):
  spec = mujoco.mjtState.mjSTATE_INTEGRATION
  mujoco.mj_setState(model, data, state, spec)
  nvar = 0
  t0 = time.process_time()
  for _ in range(steps):
    mujoco.mj_step(model, data)
    nvar += cusp.report(model, data)["info"]["nvar"]
  cpu = time.process_time() - t0
  out = numpy.empty(mujoco.mj_stateSize(model, spec))
  mujoco.mj_getState(model, data, out, spec)
  return cpu / steps, nvar / steps, bool(numpy.all(numpy.isfinite(out)))


def spread(values):
  return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def main() -> int:
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--scene", default="bench/scenes/rope_plane_tiled.xml")
  parser.add_argument("--size-key", default="rod0.sections", metavar="INSTANCE.KEY")
  parser.add_argument("--sizes", type=int, nargs="+", default=[24, 48, 72])
  parser.add_argument("--settle", type=int, default=100, help="steps before the timed ones (default 100)")
  parser.add_argument("--steps", type=int, default=20, help="timed steps a round and path (default 20)")
  parser.add_argument("--rounds", type=int, default=3)
  args = parser.parse_args()
  if args.steps < 1 or args.rounds < 1 or args.settle < 0:
    parser.error("--steps and --rounds at least 1, --settle at least 0")
  instance = args.size_key.partition(".")[0]
  spec = mujoco.mjtState.mjSTATE_INTEGRATION
  failed = 0
  for size in args.sizes:
    models, datas = {}, {}
    for path in ("stored", "operator"):
      models[path] = cusp.load(args.scene, {args.size_key: size, f"{instance}.lcp_matrix": path})
      datas[path] = cusp.make_data(models[path])
    for _ in range(args.settle):
      mujoco.mj_step(models["stored"], datas["stored"])
    state = numpy.empty(mujoco.mj_stateSize(models["stored"], spec))
    mujoco.mj_getState(models["stored"], datas["stored"], state, spec)
    cpu = {"stored": [], "operator": []}
    nvar = []
    finite = True
    for rnd in range(args.rounds):
      order = ("stored", "operator") if rnd % 2 == 0 else ("operator", "stored")
      for path in order:
        c, n, ok = run_steps(models[path], datas[path], state, args.steps)
        cpu[path].append(c)
        nvar.append(n)
        finite &= ok
      print(f"{args.size_key}={size} round {rnd + 1}/{args.rounds}: stored {cpu['stored'][-1] * 1e3:.2f} ms, "
            f"operator {cpu['operator'][-1] * 1e3:.2f} ms a step", file=sys.stderr, flush=True)
    ratios = [o / s for o, s in zip(cpu["operator"], cpu["stored"])]
    row = {"scene": args.scene, args.size_key: size, "n_mean": statistics.mean(nvar), "steps": args.steps,
           "rounds": args.rounds, "cpu_s_per_step": {p: spread(v) for p, v in cpu.items()},
           "operator_over_stored": spread(ratios), "completed": finite}
    print(json.dumps(row), flush=True)
    failed += not finite
  return 1 if failed else 0


if __name__ == "__main__":
  sys.exit(main())

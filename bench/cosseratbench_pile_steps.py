"""The cost of cosseratbench's pile with cusp, step by step: the adapter's scene (defaults:
speed 0.4 m/s, friction 0.3, E = 1e6 Pa, 100 elements), the clamp driven as the adapter
drives it, and per step one JSON line: time, wall seconds of mj_step, contacts, contacts
kept by stage 1, LCP variables, Lemke's pivots and the report's stage times (s). For a run
too slow to finish (docs/cosseratbench.md, the pile's paragraph): stop it when enough.

  PYTHONPATH=python CUSP_LIBRARY=build/libcusp.so OPENBLAS_NUM_THREADS=1 \\
      .venv/bin/python bench/cosseratbench_pile_steps.py --steps 100
"""
from __future__ import annotations

import argparse
import json
import sys
import time

import mujoco
from cosseratbench.registry import load_experiment

import cusp
from cusp.cosseratbench_adapter import CuspSolver, _load_text, _quat


def main() -> int:
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--steps", type=int, default=100)
  args = parser.parse_args()
  experiment = load_experiment("pile")
  scenario = experiment.build(**{p.name: p.default for p in experiment.parameters})
  solver = CuspSolver()
  xml, drive = solver.scene(scenario, n_elements=experiment.n_elements, n_frames=experiment.n_frames)
  dt, _ = solver._steps(scenario, experiment.n_frames)
  start = time.perf_counter()
  model = _load_text(xml)
  data = cusp.make_data(model)
  print(json.dumps({"load_s": time.perf_counter() - start, "time_step": dt,
                    "steps_in_run": round(scenario.duration / dt), "nv": model.nv}), flush=True)
  mocap = [(model.body(body).mocapid[0], origin, frame, motion) for body, origin, frame, motion in drive]
  for step in range(args.steps):
    for body, origin, frame, motion in mocap:
      displacement, rotation = motion.pose((step + 1) * dt)
      data.mocap_pos[body] = origin + displacement
      data.mocap_quat[body] = _quat(rotation @ frame)
    t0 = time.perf_counter()
    mujoco.mj_step(model, data)
    wall = time.perf_counter() - t0
    r = cusp.report(model, data)
    info = r["info"]
    print(json.dumps({
        "t": data.time, "wall_s": wall, "contacts": r["ncontact"], "kept": info["nkept"],
        "variables": info["nvar"], "pivots": info["lcp"]["iterations"], "solver": info["lcp"]["solver_name"],
        "dynamics_s": r["dynamics_us"] * 1e-6, "collision_s": r["collision_us"] * 1e-6,
        "assembly_s": r["assembly_us"] * 1e-6, "conditioning_s": r["conditioning_us"] * 1e-6,
        "solve_s": r["solve_us"] * 1e-6, "dropped": int(data.warning[mujoco.mjtWarning.mjWARN_CONTACTFULL].number),
        "message": r["message"]}), flush=True)
  return 0


if __name__ == "__main__":
  sys.exit(main())

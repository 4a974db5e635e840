"""Per step of a scene, how its contact LCP was solved: one JSON line per step with the
contacts, the contacts stage 1 kept, the LCP's variables, stage-1 passes, LCP solves and
how many of them were cold (not answered by the warm pivot from the last step's active
set) or needed the chain's fallbacks, the solver and its pivots, mj_step's wall time and
the deepest penetration; a summary line at the end. For the warm start's diagnosis (docs/contact_scaling.md,
session 14), e.g. the lying tiled rope:

  PYTHONPATH=python CUSP_LIBRARY=build/libcusp.so OPENBLAS_NUM_THREADS=1 \\
      .venv/bin/python bench/contact_solves_steps.py bench/scenes/rope_plane_tiled.xml 130
"""
from __future__ import annotations

import argparse
import json
import sys
import time

import mujoco

import cusp


def main() -> int:
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("scene")
  parser.add_argument("steps", type=int)
  parser.add_argument("--set", action="append", default=[], metavar="INSTANCE.KEY=VALUE")
  args = parser.parse_args()
  overrides = {}
  for item in args.set:
    key, sep, value = item.partition("=")
    if not sep:
      print(f"--set {item}: expected INSTANCE.KEY=VALUE", file=sys.stderr)
      return 2
    overrides[key] = value
  model = cusp.load(args.scene, overrides)
  data = cusp.make_data(model)
  totals = {"steps": 0, "solves": 0, "cold_solves": 0, "steps_all_warm": 0, "one_pass_steps": 0,
            "one_pass_cold_solves": 0, "fallback_solves": 0, "damped_passes": 0, "fallback_steps": 0, "wall_s": 0.0, "max_penetration": 0.0}
  for step in range(args.steps):
    t0 = time.perf_counter()
    mujoco.mj_step(model, data)
    wall = time.perf_counter() - t0
    r = cusp.report(model, data)
    info = r["info"]
    row = {"step": step + 1, "t": data.time, "wall_s": wall, "contacts": r["ncontact"], "kept": info["nkept"],
           "variables": info["nvar"], "rank_passes": info["rank_passes"], "solves": info["solves"],
           "cold_solves": info["cold_solves"], "fallback_solves": info["fallback_solves"],
           "damped_passes": info["damped_passes"],
           "immobile": info["immobile"], "screen_passes": info["screen_passes"], "solver": info["lcp"]["solver_name"],
           "pivots": info["lcp"]["iterations"], "max_penetration": r["max_penetration"], "message": r["message"]}
    print(json.dumps(row), flush=True)
    totals["steps"] += 1
    totals["solves"] += row["solves"]
    totals["cold_solves"] += row["cold_solves"]
    totals["steps_all_warm"] += row["cold_solves"] == 0
    totals["one_pass_steps"] += row["rank_passes"] == 1
    totals["fallback_solves"] += row["fallback_solves"]
    totals["damped_passes"] += row["damped_passes"]
    totals["one_pass_cold_solves"] += row["cold_solves"] if row["rank_passes"] == 1 else 0
    totals["fallback_steps"] += row["solver"] != "lemke"
    totals["wall_s"] += wall
    totals["max_penetration"] = max(totals["max_penetration"], row["max_penetration"])
  print(json.dumps({"summary": totals}), flush=True)
  return 0


if __name__ == "__main__":
  sys.exit(main())

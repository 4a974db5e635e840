"""The 12-section arm of tests/test_contact_scaling.c sliding down Scenario A's
incline (t 1.5..1.8 s) with align_friction off and on: the steps whose first
solver failed (fallbacks), unsolved steps, steps selected more than once, the
fastest closing dropped contact and the deepest penetration, as JSON.

    PYTHONPATH=python CUSP_LIBRARY=build/libcusp.so OPENBLAS_NUM_THREADS=1 \\
      .venv/bin/python bench/align_friction_slide.py [--sections 12]

The arm's keys are bench/cut_arm.h's (the test's), spelled out here."""
import argparse
import json
import os

import mujoco

import cusp


def cut_arm_keys(n, actuated=True):
  """bench/cut_arm.h cut_arm_keys: Scenario A's arm in n equal sections."""
  init = " ".join("%.10g" % (0.06 / n) for _ in range(3 * n))
  act, sched = [], []
  for s in range(1, n + 1):
    if 3 * s <= n:
      continue  # proximal third unactuated
    for c in range(1, 4):
      act.append(f"s{s}c{c}")
      sched.append(f"s{s}c{c} 1 0 2 40")
  return {"sections": str(n), "length": "%.10g" % (0.45 / n), "mass": "%.10g" % (1.975 / n),
          "stiffness": "%.10g" % (265.0 * n / 3), "damping": "%.10g" % (125.0 * n / 3), "initial": init,
          "schedule": "; ".join(sched) if actuated and sched else "none", "actuated": " ".join(act)}


def window(path, sections, align, t0=1.5, t1=1.8):
  ov = [("arm", k, v) for k, v in cut_arm_keys(sections).items()] + [("arm", "align_friction", str(align))]
  m = cusp.load(path, ov)
  d = cusp.make_data(m)
  w = {"align_friction": align, "steps": 0, "fallbacks": 0, "unsolved": 0, "multipass": 0, "solves": 0,
       "cold_solves": 0, "dropped_min_vn": 0.0, "max_penetration": 0.0}
  while d.time < t1:
    mujoco.mj_step(m, d)
    if d.time < t0:
      continue
    r = cusp.report(m, d)
    w["steps"] += 1
    w["fallbacks"] += int(r["fallback"])
    w["unsolved"] += int(not r["solved"])
    w["multipass"] += int(r["info"]["rank_passes"] > 1)
    w["solves"] += r["info"]["solves"]
    w["cold_solves"] += r["info"]["cold_solves"]
    w["dropped_min_vn"] = min(w["dropped_min_vn"], r["info"]["dropped_min_vn"])
    w["max_penetration"] = max(w["max_penetration"], r["max_penetration"])
  return w


def main():
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  ap.add_argument("--sections", type=int, default=12)
  ap.add_argument("--scene", default=os.path.join(os.path.dirname(__file__), "..", "mjcf", "scenario_a.xml"))
  a = ap.parse_args()
  runs = [window(a.scene, a.sections, align) for align in (0, 1)]
  print(json.dumps({"bench": "align_friction_slide", "sections": a.sections, "window_s": [1.5, 1.8], "runs": runs}))


if __name__ == "__main__":
  main()

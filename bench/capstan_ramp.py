"""cusp's capstan threshold, found quasi-statically: cosseratbench's capstan rope
(its scene as cusp.cosseratbench_adapter builds it) starts at an overhang that
holds, settles, and then a downward force at the heavy end grows slowly until the
rope slides. The threshold is the equivalent overhang (the force as rope weight,
w = rho A g per metre) at which the light end has risen `--slip` beyond its rise
at the start of the ramp, as a fraction of cosseratbench's flexible-rope threshold
h2* (cosseratbench.experiments.capstan.holding_overhang).

The bracket of fixed overhangs (bench/cosseratbench_compare.py) starts each rope
from cosseratbench's flexible-rope equilibrium, which a rope with bending
stiffness is not in: it settles by slipping where the friction is mobilized to the
limit, and a slip of d moves the overhangs by d each way, which near the threshold
carries the rope over it (at 0.97, about 3 mm of slip). The ramp reaches the
threshold from a settled, holding rope instead; a start that creeps while it
settles (a quarter of --slip or more) is reported with "settled": false and no
threshold.

  PYTHONPATH=python CUSP_LIBRARY=build/libcusp.so .venv/bin/python bench/capstan_ramp.py \
      [--elements 100] [--stiffness 1] [--start 0.9] [--rate 0.02]
prints one JSON line per run.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import time

import mujoco
import numpy as np

import cusp
import cusp.cosseratbench_adapter as ad
from cosseratbench.experiments import capstan as cb


def main() -> None:
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  ap.add_argument("--elements", type=int, nargs="+", default=[100])
  ap.add_argument("--stiffness", type=float, default=1.0,
                  help="bending stiffness as a multiple of the rope's, at the same weight and EA "
                       "(radius x sqrt(k), density and moduli / k)")
  ap.add_argument("--friction", type=float, default=0.3)
  ap.add_argument("--pyramid", type=int, default=ad.PYRAMID)
  ap.add_argument("--start", type=float, default=0.9, help="overhang to start from (fraction of h2*)")
  ap.add_argument("--settle", type=float, default=1.0, help="s before the ramp")
  ap.add_argument("--rate", type=float, default=0.02, help="overhang fraction added per second")
  ap.add_argument("--stop", type=float, default=1.03, help="end of the ramp (fraction of h2*)")
  ap.add_argument("--slip", type=float, default=1e-3, help="m of rise that counts as sliding")
  a = ap.parse_args()
  k = a.stiffness
  cb.RADIUS = float(cb.RADIUS * np.sqrt(k))
  cb.MATERIAL = dataclasses.replace(cb.MATERIAL, youngs_modulus=cb.MATERIAL.youngs_modulus / k,
                                    shear_modulus=cb.MATERIAL.shear_modulus / k,
                                    density=cb.MATERIAL.density / k)
  ad.PYRAMID = a.pyramid
  h2 = cb.holding_overhang(a.friction)
  w = cb.MATERIAL.density * np.pi * cb.RADIUS ** 2 * cb.GRAVITY
  for n in a.elements:
    t0 = time.time()
    scenario = cb.build(a.start, a.friction)
    solver = ad.CuspSolver()
    xml, _ = solver.scene(scenario, n_elements=n, n_frames=int(scenario.duration * 10) + 1)
    dt, _ = solver._steps(scenario, int(scenario.duration * 10) + 1)
    model = ad._load_text(xml)
    data = cusp.make_data(model)
    length = cusp.total_length(model, 0)
    mujoco.mj_forward(model, data)
    z0 = cusp.backbone_point(model, data, 0, 0.0)[0][2]
    steps_settle = int(round(a.settle / dt))
    steps_ramp = int(round((a.stop - a.start) / a.rate / dt))
    rise_settled, found, trace = None, None, []
    for step in range(steps_settle + steps_ramp):
      if step >= steps_settle:
        extra = a.rate * (step - steps_settle + 1) * dt * h2   # m of rope equivalent
        cusp.apply_force(model, data, 0, length, np.array([0.0, 0.0, -w * extra]))
      mujoco.mj_step(model, data)
      rise = cusp.backbone_point(model, data, 0, 0.0)[0][2] - z0
      if not np.isfinite(rise):
        raise FloatingPointError(f"non-finite state at step {step}")
      if step + 1 == steps_settle:
        rise_settled = rise
      if step % 50 == 0:
        trace.append(round(1e3 * rise, 4))
      if step >= steps_settle and rise - rise_settled > a.slip:
        found = a.start + a.rate * (step - steps_settle + 1) * dt
        break
    # a start that creeps while it settles (the flexible-rope start too near the
    # threshold for this rod) has already moved toward sliding: no measurement
    settled = bool(rise_settled is not None and rise_settled < 0.25 * a.slip)
    print(json.dumps({"elements": n, "stiffness_factor": k, "friction": a.friction, "pyramid": a.pyramid,
                      "start": a.start, "rate_per_s": a.rate, "time_step": dt, "settled": settled,
                      "settled_rise_mm": None if rise_settled is None else 1e3 * rise_settled,
                      "slides_at": found if settled else None, "rise_mm_every_50_steps": trace,
                      "wall_s": round(time.time() - t0, 1)}), flush=True)


if __name__ == "__main__":
  main()

"""cosseratbench's pile metrics on the frames bench/cosseratbench_pile_steps.py --frames wrote:
the experiment's own metric functions (pile height, footprint, contacts, settling residual) on the
last frames a step-by-step run reached, for a pile run too long for one process (resumed with
--load-state). Refuses frames that do not end at the scenario's duration, unless --partial, and
then says so in its output.

  PYTHONPATH=python .venv/bin/python bench/cosseratbench_pile_score.py FRAMES.npz
"""
from __future__ import annotations

import argparse
import json
import sys

import numpy
from cosseratbench.registry import load_experiment
from cosseratbench.trajectory import Trajectory


def main() -> int:
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("frames", help="the .npz bench/cosseratbench_pile_steps.py --frames wrote")
  parser.add_argument("--partial", action="store_true",
                      help="score frames that end before the scenario's duration (the state then)")
  args = parser.parse_args()
  experiment = load_experiment("pile")
  scenario = experiment.build(**{p.name: p.default for p in experiment.parameters})
  with numpy.load(args.frames) as data:
    times, positions = data["times"], data["positions"]
  if len(times) < 2:
    print(f"{args.frames}: {len(times)} frames; the settling residual needs the last two", file=sys.stderr)
    return 2
  frame = scenario.duration / (experiment.n_frames - 1)
  reached_end = abs(times[-1] - scenario.duration) < 0.5 * frame
  if not reached_end and not args.partial:
    print(f"{args.frames}: the frames end at t = {times[-1]:.4f} s, before the pile's duration "
          f"{scenario.duration:.4f} s (--partial to score that state)", file=sys.stderr)
    return 1
  if positions.shape[1] != experiment.n_elements + 1:
    print(f"{args.frames}: {positions.shape[1]} nodes a frame, the experiment has "
          f"{experiment.n_elements + 1}", file=sys.stderr)
    return 2
  # The pile's metrics read the nodes only; the directors are not recorded, so NaN stands for them.
  directors = numpy.full((len(times), positions.shape[1] - 1, 3), numpy.nan)
  trajectory = Trajectory(times, (positions,), (directors,))
  out = {"frames": len(times), "first_t": float(times[0]), "last_t": float(times[-1]),
         "duration": scenario.duration, "reached_end": bool(reached_end)}
  for name, metric in experiment.metrics.items():
    out[name] = metric(scenario, trajectory)
  print(json.dumps(out))
  return 0


if __name__ == "__main__":
  sys.exit(main())

"""Reproducer: cosseratbench's crossing at an even element count, where the ropes walk
sideways, and which way they walk follows the end the upper rope is mounted at.

With an even count a node of each rope lies at the crossing; with an odd count the middle
of an element does. A symmetric crossing has no preferred side: a walk whose sign flips
with the upper rope's mount end comes from the discretization, not the physics. What is
known of its cause: docs/cosseratbench_variants.md, crossing.

Prints, for each element count and mount order, the lower rope's middle node's sideways
(y) offset at the end of the run, in mm.

  CUSP_LIBRARY=build/libcusp.so PYTHONPATH=python OPENBLAS_NUM_THREADS=1 \\
    .venv/bin/python bench/cosseratbench_crossing_walk.py [--elements 50 51] [--duration 8]
"""

import argparse
import dataclasses

from cosseratbench.experiments import crossing

from cusp.cosseratbench_adapter import CuspSolver


def walk(n_elements: int, duration: float, reverse_upper: bool) -> float:
  """The lower rope's middle node's y at the end, in mm (0 by symmetry)."""
  scenario = crossing.crossing.scenario_for()
  lower, upper = scenario.rods
  if reverse_upper:
    upper = dataclasses.replace(upper, centerline=tuple(reversed(upper.centerline)))
  scenario = dataclasses.replace(scenario, rods=(lower, upper), duration=duration)
  frames = round(duration / 0.08) + 1
  trajectory = CuspSolver().run(scenario, n_elements=n_elements, n_frames=frames)
  return 1e3 * float(trajectory.positions[0][-1][n_elements // 2][1])


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--elements", type=int, nargs="+", default=[50, 51])
  parser.add_argument("--duration", type=float, default=8.0, help="s (the scenario's is 8)")
  args = parser.parse_args()
  for n in args.elements:
    for reverse in (False, True):
      mount = "far end" if reverse else "first point"
      print(f"{n} elements, upper rope mounted at its {mount}: lower rope's middle "
            f"{walk(n, args.duration, reverse):+.3f} mm sideways at {args.duration:g} s", flush=True)


if __name__ == "__main__":
  main()

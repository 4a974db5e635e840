"""How far the pile's rope passes into itself in a state bench/cosseratbench_pile_steps.py
saved: cosseratbench's max_rod_overlap rule (segments closer along the rope than
neighbour_elements skipped) on the chords between the 101 nodes, as the benchmark measures,
and on the rope itself, each element's arc sampled by --per-element chords. cusp's elements
are arcs of constant strain, so a chord between nodes lies up to L^2 kappa / 8 off the rope;
the second figure is the one the contact sees.

  CUSP_LIBRARY=build/libcusp.so PYTHONPATH=python .venv/bin/python \\
      bench/cosseratbench_pile_overlap.py STATE.npy
"""
from __future__ import annotations

import argparse
import json
import sys

import mujoco
import numpy
from cosseratbench.metrics import segment_distance
from cosseratbench.registry import load_experiment
from cosseratbench.scenario import neighbour_elements

import cusp
from cusp.cosseratbench_adapter import CuspSolver, _load_text
from cosseratbench_pile_steps import load_saved_state   # bench/, beside this script

CHUNK = 2_000_000   # segment pairs measured at once (memory)


def deepest_overlap(points: numpy.ndarray, apart: int, radius: float) -> tuple[float, int, int]:
  """The deepest overlap, in radii, of the polyline's segments at least ``apart`` apart, and
  the two segments."""
  first, second = numpy.triu_indices(len(points) - 1, k=apart)
  best, pair = numpy.inf, (-1, -1)
  for start in range(0, len(first), CHUNK):
    a, b = first[start:start + CHUNK], second[start:start + CHUNK]
    distance = segment_distance(points[a], points[a + 1], points[b], points[b + 1])
    j = int(numpy.argmin(distance))
    if distance[j] < best:
      best, pair = float(distance[j]), (int(a[j]), int(b[j]))
  return (2.0 * radius - best) / radius, *pair


def main() -> int:
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("state", help="a state bench/cosseratbench_pile_steps.py --save-state wrote")
  parser.add_argument("--per-element", type=int, default=20, help="chords sampling each element's arc")
  args = parser.parse_args()
  if args.per_element < 1:
    parser.error("--per-element must be at least 1")
  experiment = load_experiment("pile")
  scenario = experiment.build(**{p.name: p.default for p in experiment.parameters})
  rod, n = scenario.rods[0], experiment.n_elements
  xml, _ = CuspSolver().scene(scenario, n_elements=n, n_frames=experiment.n_frames)
  model = _load_text(xml)
  data = cusp.make_data(model)
  if (error := load_saved_state(model, data, args.state)) is not None:
    print(error, file=sys.stderr)
    return 2
  mujoco.mj_forward(model, data)
  instance = cusp.instance_names(model).index("rod0")
  length = cusp.total_length(model, instance)

  def polyline(per_element: int) -> numpy.ndarray:
    arc = numpy.linspace(0.0, length, n * per_element + 1)
    return numpy.array([cusp.backbone_point(model, data, instance, s)[0] for s in arc])

  apart = neighbour_elements(rod.radius, rod.length / n)
  chords, c1, c2 = deepest_overlap(polyline(1), apart, rod.radius)
  arcs, a1, a2 = deepest_overlap(polyline(args.per_element), apart * args.per_element, rod.radius)
  print(json.dumps({"t": data.time, "node_chords": {"overlap_radii": chords, "elements": [c1, c2]},
                    "arcs": {"overlap_radii": arcs, "elements": [a1 // args.per_element, a2 // args.per_element],
                             "chords_per_element": args.per_element}}))
  return 0


if __name__ == "__main__":
  sys.exit(main())

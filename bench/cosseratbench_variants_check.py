"""The catenary and crossing variants of a `cosseratbench run -v all` output directory,
scored against what their metrics leave out (docs/cosseratbench_variants.md):

- catenary: each variant's final nodes against the extensible elastica WITH bending
  (bench/cosseratbench_compare.py's bending_catenary, for that variant's rod and span),
  and cosseratbench's reference (no bending) against it too;
- crossing: the lift at the node lift_error reads, against the reference at that node's
  own material point (the compare script's crossing_lift_at_nodes rule, per variant).

  PYTHONPATH=python .venv/bin/python bench/cosseratbench_variants_check.py OUT [--solver cusp]
"""

import argparse
import json
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from cosseratbench_compare import bending_catenary  # noqa: E402


def _runs(out: pathlib.Path, experiment: str, solver: str):
  """(variant, result, trajectory path) of every completed run of the experiment."""
  for directory in sorted((out / experiment).iterdir()):
    result_path = directory / solver / "result.json"
    if not result_path.exists():
      continue
    result = json.loads(result_path.read_text())
    if result["outcome"] == "completed":
      yield directory.name, result, directory / solver / "trajectory.npz"


def catenary(out: pathlib.Path, solver: str) -> None:
  from cosseratbench import registry
  from cosseratbench.experiments.catenary import reference_curve
  from cosseratbench.metrics import max_distance_to_curve

  experiment = registry.load_experiment("catenary")
  print("| variant | shape_error | reference (no bending) vs with bending | solver vs with bending |")
  print("|---|---|---|---|")
  for name, result, trajectory in _runs(out, "catenary", solver):
    scenario = experiment.scenario_for(**result["values"])
    rod = scenario.rods[0]
    gravity = float(np.linalg.norm(scenario.gravity))
    span = rod.centerline[-1][0] - rod.centerline[0][0]
    shape = bending_catenary(rod, gravity, span)
    x, z = shape(np.linspace(0.0, rod.length, 20001))
    curve = np.stack([x, np.zeros_like(x), z], axis=1)
    reference = max_distance_to_curve(reference_curve(rod, gravity, span)[::4], curve) / rod.length
    nodes = np.load(trajectory)["rod0"][-1]
    x, z = shape(np.linspace(0.0, rod.length, len(nodes)))
    error = np.linalg.norm(nodes - np.stack([x, np.zeros_like(x), z], axis=1), axis=1).max() / rod.length
    print(f"| {name} | {result['metrics']['shape_error']:.3e} | {reference:.3e} | {error:.2e} |")


def crossing(out: pathlib.Path, solver: str) -> None:
  from cosseratbench import registry
  from cosseratbench.experiments import crossing as module

  experiment = registry.load_experiment("crossing")
  print("| variant | lift_error | at the node's material point | node's distance from the crossing (mm) |")
  print("|---|---|---|---|")
  for name, result, trajectory in _runs(out, "crossing", solver):
    scenario = experiment.scenario_for(**result["values"])
    youngs_modulus, drop = module._parameters(scenario)
    arc, _, upper = module._shapes(youngs_modulus, drop, 2 * module.RADIUS)
    lift = abs(upper[len(upper) // 2][2] + drop - module._mid_height(youngs_modulus, 0.0))
    nodes = np.load(trajectory)["rod1"][-1]
    k = len(nodes) // 2
    length = scenario.rods[1].length
    at = k / (len(nodes) - 1) * length
    error = abs(nodes[k][2] - np.interp(at, arc, upper[:, 2])) / lift
    print(f"| {name} | {result['metrics']['lift_error']:.3e} | {error:.2e} | {1e3 * abs(at - length / 2):.1f} |")


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("out", type=pathlib.Path, help="cosseratbench run's output directory (-o)")
  parser.add_argument("--solver", default="cusp")
  args = parser.parse_args()
  for experiment, table in (("catenary", catenary), ("crossing", crossing)):
    if (args.out / experiment).is_dir():
      print(f"\n{experiment}\n")
      table(args.out, args.solver)


if __name__ == "__main__":
  main()

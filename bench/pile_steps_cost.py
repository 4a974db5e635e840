"""Compare runs of bench/cosseratbench_pile_steps.py step by step: per run the steps it reached,
its process CPU seconds, Lemke's pivots and the largest LCP, over the steps all runs reached and
over each run's own steps, as JSON; with --plot, the cumulative CPU seconds against simulated time
and the LCP's size (a PNG).

  .venv/bin/python bench/pile_steps_cost.py revised=/work/pile27/steps.jsonl \\
      tableau=/work/pile27t/steps.jsonl --plot docs/pile_lemke_forms.png
"""
from __future__ import annotations

import argparse
import json
import sys


def read_steps(path: str) -> list[dict]:
  """The per-step lines of a pile_steps run (its first line is the run's header)."""
  with open(path) as f:
    rows = [json.loads(line) for line in f if line.strip()]
  return [r for r in rows if "t" in r]


def totals(rows: list[dict]) -> dict:
  return {"steps": len(rows), "t_end": rows[-1]["t"] if rows else 0.0,
          "cpu_s": sum(r["cpu_s"] for r in rows), "solve_s": sum(r["solve_s"] for r in rows),
          "pivots": sum(r["pivots"] for r in rows),
          "largest_lcp": max((r["variables"] for r in rows), default=0)}


def main() -> int:
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("runs", nargs="+", metavar="NAME=STEPS.jsonl")
  parser.add_argument("--plot", metavar="FILE.png")
  args = parser.parse_args()
  runs = {}
  for spec in args.runs:
    name, sep, path = spec.partition("=")
    if not sep or not name or not path:
      parser.error(f"{spec!r}: expected NAME=STEPS.jsonl")
    try:
      runs[name] = read_steps(path)
    except (OSError, json.JSONDecodeError) as e:
      print(f"{path}: {e}", file=sys.stderr)
      return 2
    if not runs[name]:
      print(f"{path}: no steps", file=sys.stderr)
      return 2
  common = min(len(rows) for rows in runs.values())
  print(json.dumps({"common_steps": common,
                    "over_common_steps": {n: totals(rows[:common]) for n, rows in runs.items()},
                    "whole_runs": {n: totals(rows) for n, rows in runs.items()}}, indent=1))
  if args.plot:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (cost, size) = plt.subplots(2, 1, sharex=True, figsize=(7, 6))
    for name, rows in runs.items():
      t = [r["t"] for r in rows]
      cumulative, acc = [], 0.0
      for r in rows:
        acc += r["cpu_s"]
        cumulative.append(acc)
      cost.plot(t, cumulative, label=f"{name} ({len(rows)} steps)")
      size.plot(t, [r["variables"] for r in rows], label=name, lw=0.6)
    cost.set_ylabel("cumulative CPU s")
    cost.legend()
    size.set_ylabel("LCP unknowns")
    size.set_xlabel("simulated time (s)")
    fig.suptitle("cosseratbench's pile with cusp, step by step")
    fig.tight_layout()
    fig.savefig(args.plot, dpi=90)
  return 0


if __name__ == "__main__":
  sys.exit(main())

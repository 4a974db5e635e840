"""Lemke's two forms (sb_lcp_options.lemke_form: the condensed tableau and the revised form with K
factored) on the same dumped contact LCPs (cusp-sim --dump-lcp DIR): per file, cusp-lcp --solver lemke
once per form, the status, pivots (iterations), the median of --repeats wall times the solver reports
(time_us), and max|z_tableau - z_revised| / max(max|z_tableau|, 1e-300); one JSON line per file, then a
summary line.

  OPENBLAS_NUM_THREADS=1 python3 bench/lemke_forms.py DIR --every 20 [--app build/cusp-lcp]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys


def solve(app: str, path: str, form: str, extra: list[str]) -> dict:
  run = subprocess.run([app, path, "--solver", "lemke", "--lemke-form", form, "--json", *extra],
                       capture_output=True, text=True, check=False)
  if run.returncode not in (0, 1):
    raise SystemExit(f"lemke_forms: {app} on {path} ({form}) exited {run.returncode}: {run.stderr.strip()}")
  return json.loads(run.stdout.strip().splitlines()[-1])


def main() -> int:
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("dir")
  parser.add_argument("--every", type=int, default=1, help="every Nth file of DIR, sorted")
  parser.add_argument("--repeats", type=int, default=3)
  parser.add_argument("--app", default="build/cusp-lcp")
  parser.add_argument("--tikhonov", default=None, help="cusp-lcp --tikhonov EPS for both forms")
  args = parser.parse_args()
  if args.every < 1 or args.repeats < 1:
    raise SystemExit("lemke_forms: --every and --repeats need integers >= 1")
  extra = ["--tikhonov", args.tikhonov] if args.tikhonov is not None else []
  files = sorted(f for f in os.listdir(args.dir) if f.endswith(".dat"))[::args.every]
  if not files:
    raise SystemExit(f"lemke_forms: no .dat file in {args.dir}")
  rows = []
  for name in files:
    path = os.path.join(args.dir, name)
    out = {}
    for form in ("tableau", "revised"):
      runs = [solve(args.app, path, form, extra) for _ in range(args.repeats)]
      out[form] = runs[0] | {"time_us": statistics.median(r["time_us"] for r in runs)}
    zt, zr = out["tableau"]["z"], out["revised"]["z"]
    scale = max(max((abs(v) for v in zt), default=0.0), 1e-300)
    row = {"file": name, "n": out["tableau"]["n"]}
    for form in ("tableau", "revised"):
      row[form] = {k: out[form][k] for k in ("status", "iterations", "time_us", "residual")}
    row["dz"] = max((abs(a - b) for a, b in zip(zt, zr)), default=0.0) / scale
    rows.append(row)
    print(json.dumps(row), flush=True)
  same = [r for r in rows if r["tableau"]["iterations"] == r["revised"]["iterations"]
          and r["tableau"]["status"] == r["revised"]["status"]]
  summary = {
    "files": len(rows),
    "n_median": statistics.median(r["n"] for r in rows),
    "solved": {f: sum(r[f]["status"] == "solved" for r in rows) for f in ("tableau", "revised")},
    "same_status_and_pivots": len(same),
    "pivots": {f: sum(r[f]["iterations"] for r in rows) for f in ("tableau", "revised")},
    "time_us_total": {f: sum(r[f]["time_us"] for r in rows) for f in ("tableau", "revised")},
    "dz_max_same_path": max((r["dz"] for r in same), default=0.0),
    "dz_max": max(r["dz"] for r in rows),
  }
  print(json.dumps({"summary": summary}))
  return 0


if __name__ == "__main__":
  sys.exit(main())

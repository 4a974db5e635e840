#!/usr/bin/env bash
# Issue 19 item 10: every solver key at each end of its range, as the key
# table states it (cusp-keys --markdown: the plausible range of tikhonov and
# eps_rank, the integer range of ruiz_iterations and pyramid), and each
# solver alone, is one where the contact solver works: Scenario A (an arm
# pressing on a table, 0.3 s) completes with every LCP solve converged and a
# bounded mean iteration count (iterations, not time: the machine is noisy).
# Before, tikhonov's range reached 0.1, where no solve converged.
# Usage: tests/test_solver_keys.sh CUSP_SIM CUSP_KEYS SRCDIR
set -u
SIM=${1:?usage: test_solver_keys.sh CUSP_SIM CUSP_KEYS SRCDIR}
KEYS=${2:?usage: test_solver_keys.sh CUSP_SIM CUSP_KEYS SRCDIR}
SRC=${3:?usage: test_solver_keys.sh CUSP_SIM CUSP_KEYS SRCDIR}
command -v python3 >/dev/null || { echo "python3 is needed to read the JSON"; exit 1; }
TMP=$(mktemp)
trap 'rm -f "$TMP"' EXIT
"$KEYS" --markdown >"$TMP" || { echo "FAIL $KEYS --markdown"; exit 1; }
python3 - "$SIM" "$SRC/mjcf/scenario_a.xml" "$TMP" <<'PY'
import json, re, subprocess, sys
sim, scene, table = sys.argv[1], sys.argv[2], sys.argv[3]
rows = {}
for line in open(table):
    cells = [c.strip() for c in line.split(" | ")]
    if len(cells) > 6 and cells[0].startswith("| `"):
        rows[cells[0][3:-1]] = cells
def plausible_ends(key):  # "0 (off), or 1e-16 .. 1e-6" or "1e-15 .. 0.1"
    m = re.search(r"([-0-9.e+]+) \.\. ([-0-9.e+]+)", rows[key][6])
    return [m.group(1), m.group(2)] + (["0"] if "0 (" in rows[key][6] else [])
def integer_ends(key):    # "3..16"
    m = re.fullmatch(r"(-?\d+)\.\.(-?\d+)", rows[key][5])
    return [m.group(1), m.group(2)]
cases = [[("tikhonov", v)] for v in plausible_ends("tikhonov")]
cases += [[("eps_rank", v)] for v in plausible_ends("eps_rank")]
cases += [[("ruiz_iterations", v)] for v in integer_ends("ruiz_iterations")]
cases += [[("pyramid", v)] for v in integer_ends("pyramid")]
cases += [[("solver", s), ("fallback", "0")] for s in ("lemke", "fb", "pgs")]
fail = 0
for case in cases:
    args = [sim, scene, "--seconds", "0.3", "--json"]
    for k, v in case:
        args += ["--set", "arm.%s=%s" % (k, v)]
    label = " ".join("%s=%s" % kv for kv in case)
    p = subprocess.run(args, capture_output=True, text=True)
    try:
        d = json.loads(p.stdout.strip().splitlines()[-1])
        l = d["lcp"]
        ok = d["completed"] and l["solves"] > 100 and l["converged"] == l["solves"] and l["mean_iterations"] <= 60
        what = "solves %d, converged %d, mean iterations %.1f, completed %s" % (
            l["solves"], l["converged"], l["mean_iterations"], d["completed"])
    except Exception as e:
        ok, what = False, "no JSON (%s): %s" % (e, p.stderr[-300:])
    print("%s %s: %s" % ("ok  " if ok else "FAIL", label, what))
    fail |= not ok
sys.exit(1 if fail else 0)
PY

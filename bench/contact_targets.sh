#!/usr/bin/env bash
# Issue 15's instruction-count targets on one build, in one run (callgrind,
# one OpenBLAS thread, so the figures do not depend on the machine's load):
#   the 80-element rod lying on a plane against the same rod in free fall,
#     per step = (count over 0.020 s - count over 0.012 s) / 8, which leaves
#     out the load and the first steps;
#   Scenario A's lcp step against its penalty step (1 s each);
#   the 3/6/12-section arms lying and sliding (bench/contact_instructions.sh)
#     and their exponents log(I12 / I3) / log 4 (dofs grow 4x).
# Usage: bench/contact_targets.sh [BUILD_DIR] [OUT_DIR]
# Prints one JSON object; OUT_DIR keeps the callgrind files for
# callgrind_annotate.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(cd "${1:-build}" && pwd)
out=${2:-$(mktemp -d)}
mkdir -p "$out"
command -v valgrind >/dev/null || { echo "contact_targets: valgrind is not installed" >&2; exit 2; }
export OPENBLAS_NUM_THREADS=1
grind() {  # OUT_NAME ARGS...
  local name=$1; shift
  valgrind --tool=callgrind --toggle-collect=mj_step --callgrind-out-file="$out/$name" \
    "$build/cusp-sim" "$@" --json > "$out/$name.json" 2> "$out/$name.err" ||
    { echo "contact_targets: cusp-sim $* failed:" >&2; tail -5 "$out/$name.err" >&2; exit 1; }
}
for s in plane free; do
  for T in 0.012 0.020; do grind "rod_$s.$T" "bench/scenes/rod_$s.xml" --seconds "$T"; done
done
for c in lcp penalty; do grind "scA_$c" mjcf/scenario_a.xml --seconds 1 --set "arm.contact=$c"; done
bench/contact_instructions.sh "$build" 30 arm3_lying arm6_lying arm12_lying \
  arm3_sliding arm6_sliding arm12_sliding > "$out/arms.json"
python3 - "$out" <<'PY'
import json, math, sys
out = sys.argv[1]
def total(name):
    with open(f"{out}/{name}") as f:
        for line in f:
            if line.startswith("totals:"):
                return int(line.split()[1])
    raise SystemExit(f"contact_targets: no totals in {out}/{name}")
r = {}
for s in ("plane", "free"):
    r[f"rod_{s}"] = (total(f"rod_{s}.0.020") - total(f"rod_{s}.0.012")) / 8
r["rod_ratio"] = r["rod_plane"] / r["rod_free"]
r["scenario_a_lcp"] = total("scA_lcp")
r["scenario_a_penalty"] = total("scA_penalty")
r["scenario_a_ratio"] = r["scenario_a_lcp"] / r["scenario_a_penalty"]
arms = json.load(open(f"{out}/arms.json"))["cases"]
r["arms"] = arms
for phase in ("lying", "sliding"):
    r[f"exponent_{phase}"] = math.log(arms[f"arm12_{phase}"] / arms[f"arm3_{phase}"]) / math.log(4)
r["callgrind_files"] = out
print(json.dumps(r))
PY

#!/usr/bin/env bash
# Instructions per step of bench-contact's cases, counted by callgrind over
# each case's timed window only (bench-contact starts and stops the
# instrumentation around it), one case per valgrind run. A count does not
# depend on the machine's load, so before/after comparisons on a shared
# machine use these.
# Usage: bench/contact_instructions.sh [BUILD_DIR] [STEPS] [CASE ...]
#   STEPS: steps counted per case (default 100, from the window's start)
#   BENCH_CONTACT_ARGS (environment): more arguments for bench-contact, e.g.
#   "--lcp-matrix operator"
# Prints one JSON object: {"steps": S, "cases": {"CASE": instructions per step, ...}}
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
steps=${2:-100}
shift $(( $# < 2 ? $# : 2 ))
cases=("$@")
if [ ${#cases[@]} -eq 0 ]; then
  cases=(scenario_a_lcp_lying scenario_a_penalty_lying scenario_a_lcp_sliding scenario_a_penalty_sliding
         arm3_lying arm6_lying arm12_lying arm3_sliding arm6_sliding arm12_sliding rod_plane rod_free)
fi
command -v valgrind >/dev/null || { echo "contact_instructions: valgrind is not installed" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '{"steps": %d, "cases": {' "$steps"
sep=""
for c in "${cases[@]}"; do
  OPENBLAS_NUM_THREADS=1 valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$tmp/$c.out" \
    "$build/bench-contact" --case "$c" --rounds 1 --steps "$steps" ${BENCH_CONTACT_ARGS:-} >/dev/null 2>"$tmp/$c.err" ||
    { echo "contact_instructions: $c failed:" >&2; tail -5 "$tmp/$c.err" >&2; exit 1; }
  ir=$(grep -m1 '^totals:' "$tmp/$c.out" | awk '{print $2}')
  printf '%s"%s": %s' "$sep" "$c" "$(awk -v a="$ir" -v b="$steps" 'BEGIN{printf "%.0f", a / b}')"
  sep=", "
  echo "contact_instructions: $c $((ir / steps)) per step" >&2
done
printf '}}\n'

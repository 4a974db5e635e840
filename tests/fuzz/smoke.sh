#!/usr/bin/env bash
# CI-sized fuzzing (ctest fuzz_smoke, in a CUSP_FUZZ build): each harness
# replays its committed corpus (tests/fuzz/corpus/HARNESS: seeds and the
# regression inputs of fixed bugs), then fuzzes a fixed number of inputs
# from a fixed seed (repeatable) in a scratch copy of the corpus.
# scripts/fuzz.sh is the long run.
# Usage: tests/fuzz/smoke.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=${1:?usage: smoke.sh BUILD_DIR SOURCE_DIR}
src=${2:?usage: smoke.sh BUILD_DIR SOURCE_DIR}
source "$src/tests/fuzz/options.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/cusp-fuzz-smoke.XXXXXX")
trap 'rm -rf "$work"' EXIT

# fuzzed inputs per harness: a few seconds each on a loaded two-core machine.
declare -A runs=([mjcf]=500 [keys]=300 [lcp]=3000)

for h in mjcf keys lcp; do
  corpus="$src/tests/fuzz/corpus/$h"
  echo "== fuzz_$h: replaying $(ls "$corpus" | wc -l) committed inputs =="
  fuzz_env "$h" "$build/fuzz_$h" -runs=0 "$(fuzz_flags "$h" "$src")" -artifact_prefix="$work/" "$corpus"
  echo "== fuzz_$h: ${runs[$h]} fuzzed inputs (seed 1) =="
  mkdir -p "$work/$h"
  cp "$corpus"/* "$work/$h/"
  fuzz_env "$h" "$build/fuzz_$h" -seed=1 -runs="${runs[$h]}" "$(fuzz_flags "$h" "$src")" -artifact_prefix="$work/" \
    "$work/$h"
done
echo "fuzz smoke: passed"

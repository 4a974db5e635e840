#!/usr/bin/env bash
# The long fuzzing run: builds the libFuzzer harnesses (clang, ASan + UBSan,
# CUSP_FUZZ=ON) into build-fuzz/ and fuzzes each for a time budget, starting
# from the committed corpus (tests/fuzz/corpus/HARNESS, never modified: the
# growing corpus lives in build-fuzz/corpus/HARNESS). A crash, leak,
# sanitizer report or failed check is saved in build-fuzz/artifacts/HARNESS
# and fuzzing goes on with the next seed until the budget is spent.
#
# Usage: scripts/fuzz.sh [--seconds N] [--thorough] [--replay-crashes] [mjcf] [keys] [lcp]
#   --seconds N        budget per harness (default 600)
#   --thorough         AddressSanitizer's heap checks also for fuzz_mjcf and fuzz_keys (slow:
#                      see tests/fuzz/options.sh)
#   --replay-crashes   only replay tests/fuzz/crashes/HARNESS/* (known crashes
#                      kept for the fixes) and say which still fail
# A fixed bug's input goes to tests/fuzz/corpus/HARNESS (the smoke test
# replays it), with a test of its own.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=600 replay=0 harnesses=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds=${2:?--seconds needs a number}; shift ;;
    --thorough) export CUSP_FUZZ_POISON_HEAP=1 ;;
    --replay-crashes) replay=1 ;;
    mjcf|keys|lcp) harnesses+=("$1") ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "fuzz.sh: unknown argument '$1' (--help)" >&2; exit 2 ;;
  esac
  shift
done
[ ${#harnesses[@]} -gt 0 ] || harnesses=(mjcf keys lcp)
source tests/fuzz/options.sh

CC=clang cmake -S . -B build-fuzz -DCUSP_WERROR=ON -DCUSP_FUZZ=ON > /dev/null
cmake --build build-fuzz -j"$(nproc)" --target fuzz_mjcf fuzz_keys fuzz_lcp

if [ $replay = 1 ]; then
  status=0
  for h in "${harnesses[@]}"; do
    for f in tests/fuzz/crashes/"$h"/*; do
      [ -f "$f" ] && [ "${f##*.}" != md ] || continue
      if fuzz_env "$h" build-fuzz/fuzz_"$h" "$f" > build-fuzz/replay.log 2>&1; then
        echo "fixed     $f"
      else
        echo "FAILS     $f: $(grep -m1 -E 'fuzz check failed|ERROR|runtime error' build-fuzz/replay.log || tail -n1 build-fuzz/replay.log)"
        status=1
      fi
    done
  done
  exit $status
fi

for h in "${harnesses[@]}"; do
  corpus=build-fuzz/corpus/$h artifacts=build-fuzz/artifacts/$h
  mkdir -p "$corpus" "$artifacts"
  end=$((SECONDS + seconds)) seed=1
  echo "== fuzz_$h for ${seconds} s (corpus $corpus, artifacts $artifacts) =="
  while [ $SECONDS -lt $end ]; do
    # -max_len: the seed scenes are a few kB
    fuzz_env "$h" build-fuzz/fuzz_"$h" -seed=$seed -max_total_time=$((end - SECONDS)) -timeout=60 -max_len=8192 \
      "$(fuzz_flags "$h" "$PWD")" -artifact_prefix="$artifacts/" -print_final_stats=1 \
      "$corpus" tests/fuzz/corpus/"$h" 2>&1 | tail -n 30 | grep -E 'fuzz check failed|ERROR|runtime error|Test unit written|stat::number_of_executed_units' || true
    seed=$((seed + 1))
  done
  echo "fuzz_$h: $(ls "$artifacts" | wc -l) artifact(s) in $artifacts"
done

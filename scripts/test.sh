#!/usr/bin/env bash
# Installs what is missing, builds with -Wall -Wextra -Werror, runs every
# test, then builds again with AddressSanitizer + UndefinedBehaviorSanitizer
# and runs every test once more, then builds the libFuzzer harnesses with
# clang (build-fuzz: the libraries and the two harnesses only) and runs
# their smoke test (tests/fuzz/smoke.sh; scripts/fuzz.sh is the long run).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --test
export OPENBLAS_NUM_THREADS=1

echo "== tests (release build) =="
scripts/build.sh build -DCUSP_REQUIRE_PEER=ON
ctest --test-dir build --output-on-failure

echo "== tests (AddressSanitizer + UndefinedBehaviorSanitizer) =="
scripts/build.sh build-asan -DCUSP_REQUIRE_PEER=ON -DCUSP_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
# OpenBLAS keeps its buffers for the life of the process: not our leaks.
ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions="$PWD/tests/lsan.supp" \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure

echo "== fuzz smoke (clang, libFuzzer + ASan + UBSan) =="
CC=clang cmake -S . -B build-fuzz -DCUSP_WERROR=ON -DCUSP_FUZZ=ON > /dev/null
cmake --build build-fuzz -j"$(nproc)" --target fuzz_mjcf fuzz_keys fuzz_lcp
ctest --test-dir build-fuzz -L fuzz --output-on-failure

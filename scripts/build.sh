#!/usr/bin/env bash
# Configures and builds cusp into build/ (or $1), warnings as errors.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-build}"; shift || true
cmake -S . -B "$dir" -DCUSP_WERROR=ON "$@" > /dev/null
cmake --build "$dir" -j"$(nproc)"

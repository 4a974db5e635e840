#!/usr/bin/env bash
# New user, main job: install what is missing, build, and simulate the CUSP
# arm hanging under gravity (the bundled default), printing a summary.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh build
./build/cusp-hang "$@"

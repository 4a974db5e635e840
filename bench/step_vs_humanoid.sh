#!/usr/bin/env bash
# Scenario A's mj_step against a humanoid's on the same MuJoCo, in one run
# (bench-step interleaves them). The humanoid is Gymnasium's MuJoCo asset
# (python/requirements.txt installs it). Extra arguments go to bench-step.
# Usage: bench/step_vs_humanoid.sh [BUILD_DIR] [bench-step options]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
[ $# -gt 0 ] && shift
humanoid=$(.venv/bin/python -c 'import gymnasium, os; print(os.path.join(os.path.dirname(gymnasium.__file__), "envs/mujoco/assets/humanoid.xml"))')
[ -f "$humanoid" ] || { echo "step_vs_humanoid: no humanoid.xml in gymnasium (scripts/setup.sh installs it)" >&2; exit 2; }
OPENBLAS_NUM_THREADS=1 exec "$build/bench-step" mjcf/scenario_a.xml "$humanoid" "$@"

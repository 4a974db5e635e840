#!/usr/bin/env bash
# Makes .venv-mujoco-cable: MuJoCo 3.17.0 (the last release with the cable
# plugin) and cosseratbench, the environment bench/cosseratbench_compare.py runs
# MuJoCo's cable in (python/requirements-mujoco-cable.txt). Rebuilt only when
# that list changed.
set -euo pipefail
cd "$(dirname "$0")/.."
py=${CUSP_PYTHON:-python3}
env=.venv-mujoco-cable
stamp=$env/.requirements
if [ ! -x $env/bin/python ] || ! cmp -s python/requirements-mujoco-cable.txt "$stamp"; then
  echo "setup_mujoco_cable: making $env"
  [ -x $env/bin/python ] || "$py" -m venv $env
  $env/bin/pip install -q --disable-pip-version-check -r python/requirements-mujoco-cable.txt
  cp python/requirements-mujoco-cable.txt "$stamp"
fi
echo "setup_mujoco_cable: MuJoCo $($env/bin/python -c 'import mujoco; print(mujoco.__version__)') in $env"

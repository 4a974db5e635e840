#!/usr/bin/env bash
# Installs what cusp needs: the Debian packages that are missing (with apt),
# then a project-local virtual environment .venv with the pinned PyPI
# packages of python/requirements.txt (MuJoCo's C library and headers come
# from its wheel), with the `cusp` Python package of python/ installed editable.
# Usage: scripts/setup.sh [--test]   (--test adds what tests and benchmarks need)
set -euo pipefail
cd "$(dirname "$0")/.."

runtime=(build-essential cmake pkg-config libopenblas-dev liblapacke-dev xvfb ffmpeg
         python3 python3-venv libgl1 libegl1 libosmesa6 coinor-libipopt-dev)
testing=(gnuplot libsiconos-numerics-dev clang libclang-rt-dev libpng-dev libxtst6 libgmp-dev)  # libxtst6: python/tools/viewer_shot.py types keys into the viewer; libclang-rt-dev: libFuzzer; libgmp-dev: exact rational residuals in test_lcp_solvers

want=("${runtime[@]}")
[ "${1:-}" = "--test" ] && want+=("${testing[@]}")

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all Debian packages present"
else
  echo "setup: installing ${missing[*]}"
  if [ "$(id -u)" -eq 0 ]; then sudo=(); else sudo=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The virtual environment: rebuilt only when the pinned list changed.
py=${CUSP_PYTHON:-python3}
stamp=.venv/.cusp-requirements
if [ ! -x .venv/bin/python ] || ! cmp -s python/requirements.txt "$stamp"; then
  echo "setup: making .venv with python/requirements.txt"
  [ -x .venv/bin/python ] || "$py" -m venv .venv
  .venv/bin/pip install -q --disable-pip-version-check -r python/requirements.txt
  cp python/requirements.txt "$stamp"
fi
# the cusp package of this work tree, installed editable (python/pyproject.toml:
# its cosseratbench solver entry point); only when missing or another tree's
site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
rm -f "$site/cusp-worktree.pth"   # what setup.sh wrote before the package had a pyproject
if ! grep -qxF "$PWD/python" "$site"/__editable__.cusp-*.pth 2>/dev/null; then
  .venv/bin/pip install -q --disable-pip-version-check --no-deps \
    --config-settings editable_mode=compat -e python
fi
echo "setup: MuJoCo $(.venv/bin/python -c 'import mujoco; print(mujoco.__version__)') in .venv"

#!/usr/bin/env bash
# New user, main job: install what is missing, build, and open the default
# scene (mjcf/default.xml) in MuJoCo's viewer with cusp loaded
# (python -m cusp.view). Without a display it renders instead: simulates
# 3 s, writes out/SCENE.mp4 and prints a summary. Extra arguments go to
# cusp.view, e.g. a scene path, --set arm.friction=0.8, --seconds 5.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh build
export CUSP_LIBRARY="$PWD/build/libcusp.so"
scene=mjcf/default.xml
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then scene=$1; shift; fi
if [ -z "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  echo "run: no display: rendering $scene to out/$(basename "$scene" .xml).mp4" >&2
fi
exec .venv/bin/python -m cusp.view "$scene" "$@"

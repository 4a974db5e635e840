#!/usr/bin/env bash
# New user, main job: install what is missing, build, and open the default
# scene (mjcf/default.xml) in cusp-view. Without a display it runs headless:
# simulates 3 s, writes out/default.mp4 (PNG frames without ffmpeg) and
# prints the summary. Extra arguments go to cusp-view, e.g. a scene path.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh build
scene=mjcf/default.xml
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then scene=$1; shift; fi
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  exec ./build/cusp-view "$scene" "$@"
fi
mkdir -p out
name=$(basename "$scene" .xml)
echo "run: no display, rendering $scene headless to out/$name.mp4" >&2
if command -v xvfb-run >/dev/null; then
  exec xvfb-run -a ./build/cusp-view "$scene" --headless --seconds 3 --video "out/$name.mp4" "$@"
fi
echo "run: no display and no xvfb-run (scripts/setup.sh --test installs it); running cusp-sim instead" >&2
exec ./build/cusp-sim "$scene" --seconds 3 "$@"

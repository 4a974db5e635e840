#!/usr/bin/env bash
# The README's pictures: renders every mjcf/ scene with the headless viewer
# (its start camera: the scene's "cusp_default" camera or the automatic
# view) at the moment that shows what the scene is about, as OUT/SCENE.png
# (640 x 400). Runs under xvfb-run when there is no display.
# Usage: scripts/pictures.sh [--out DIR] [--build DIR]   (defaults: docs/img, build)
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n 's/^# Usage: //p' "$0"; }
out=docs/img
build=build
while [ $# -gt 0 ]; do
  case $1 in
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    --build) build=${2:?--build needs a directory}; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "pictures: unknown option '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
view=$build/cusp-view
if [ ! -x "$view" ]; then
  echo "pictures: $view not found: build first (scripts/build.sh $build)" >&2
  exit 2
fi
run=()
if [ -z "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  if ! command -v xvfb-run >/dev/null; then
    echo "pictures: no display and no xvfb-run (apt-get install xvfb)" >&2
    exit 2
  fi
  run=(xvfb-run -a -s "-screen 0 1280x1024x24")
fi
mkdir -p "$out"
export OPENBLAS_NUM_THREADS=1

# scene, simulated seconds: the moment each picture shows (see README.md)
moments="default 2.5
scenario_a 2.0
scenario_b 2.0
ball_rotation 3.0
demo_pin_ball 2.0
demo_pass_ball 1.2
demo_push_box 2.0
demo_rod_pegs 0.5
demo_moving_base 0.1
compare_penalty 2.0"

fail=0
for scene in mjcf/*.xml; do
  name=$(basename "$scene" .xml)
  t=$(echo "$moments" | awk -v n="$name" '$1 == n { print $2 }')
  if [ -z "$t" ]; then
    t=2
    echo "pictures: $name has no moment in scripts/pictures.sh: using $t s" >&2
  fi
  png=$out/$name.png
  if "${run[@]}" "$view" "$scene" --headless --seconds "$t" --png "$png" --width 640 --height 400 --no-overlay \
    >/dev/null 2>"$out/.$name.err"; then
    echo "$png: $name at t = $t s ($(wc -c <"$png") bytes)"
    rm -f "$out/.$name.err"
  else
    echo "pictures: $name failed:" >&2
    sed 's/^/  | /' "$out/.$name.err" | tail -n 20 >&2
    rm -f "$out/.$name.err"
    fail=1
  fi
done
exit $fail

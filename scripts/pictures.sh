#!/usr/bin/env bash
# The README's pictures: renders every mjcf/ scene with the Python viewer's
# headless path (python -m cusp.view --png; its start camera: the scene's
# "cusp_default" camera or a free camera framing the arms) at the moment
# that shows what the scene is about, as DIR/SCENE.png (640 x 400).
# Writes out/img unless asked otherwise: --docs replaces the committed
# pictures in docs/img. --scene NAME (repeatable) renders only those scenes
# (mjcf/NAME.xml), e.g. one whose scene changed.
# Usage: scripts/pictures.sh [--out DIR | --docs] [--build DIR] [--scene NAME]...   (defaults: out/img, build, every scene)
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n 's/^# Usage: //p' "$0"; }
out=out/img
build=build
only=()
while [ $# -gt 0 ]; do
  case $1 in
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    --docs) out=docs/img; shift ;;
    --build) build=${2:?--build needs a directory}; shift 2 ;;
    --scene)
      only+=("${2:?--scene needs a scene name}")
      [ -f "mjcf/$2.xml" ] || { echo "pictures: no scene mjcf/$2.xml" >&2; exit 2; }
      shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "pictures: unknown option '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
lib=$build/libcusp.so
if [ ! -f "$lib" ]; then
  echo "pictures: $lib not found: build first (scripts/build.sh $build)" >&2
  exit 2
fi
if [ ! -x .venv/bin/python ]; then
  echo "pictures: .venv not found: run scripts/setup.sh" >&2
  exit 2
fi
export CUSP_LIBRARY="$PWD/$lib"
export OPENBLAS_NUM_THREADS=1
mkdir -p "$out"

# scene, simulated seconds: the moment each picture shows (see README.md)
moments="default 2.5
scenario_a 2.0
scenario_b 2.0
ball_rotation 3.0
demo_pin_ball 2.0
demo_pass_ball 1.2
demo_push_box 2.0
demo_rod_pegs 0.5
demo_clamped_rod 1.0
demo_moving_base 0.1
demo_rod_cantilever 1.0
compare_penalty 2.0"

fail=0
scenes=(mjcf/*.xml)
[ ${#only[@]} -gt 0 ] && scenes=("${only[@]/#/mjcf/}") && scenes=("${scenes[@]/%/.xml}")
for scene in "${scenes[@]}"; do
  name=$(basename "$scene" .xml)
  t=$(echo "$moments" | awk -v n="$name" '$1 == n { print $2 }')
  if [ -z "$t" ]; then
    t=2
    echo "pictures: $name has no moment in scripts/pictures.sh: using $t s" >&2
  fi
  png=$out/$name.png
  if .venv/bin/python -m cusp.view "$scene" --seconds "$t" --png "$png" --width 640 --height 400 --no-overlay \
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

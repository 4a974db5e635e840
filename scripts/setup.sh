#!/usr/bin/env bash
# Installs the Debian packages cusp needs, only those missing (xvfb and
# ffmpeg too: without a display the main command renders headless to video).
# Usage: scripts/setup.sh [--test]   (--test adds what tests and benchmarks need)
set -euo pipefail

runtime=(build-essential cmake pkg-config libmujoco-dev libopenblas-dev liblapacke-dev xvfb ffmpeg
         libglfw3-dev libxml2-dev libpng-dev)
testing=(gnuplot libsiconos-numerics-dev clang libmujoco-samples)

want=("${runtime[@]}")
[ "${1:-}" = "--test" ] && want+=("${testing[@]}")

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && { echo "setup: all packages present"; exit 0; }

echo "setup: installing ${missing[*]}"
if [ "$(id -u)" -eq 0 ]; then sudo=(); else sudo=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"

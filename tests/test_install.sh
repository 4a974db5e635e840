#!/usr/bin/env bash
# cmake --install puts the library, headers, CMake package and pkg-config
# file in a prefix; a host program built apart from the tree against each
# of them loads a scene and moves its arm.
# Usage: test_install.sh BUILD_DIR SOURCE_DIR [HOST_CFLAGS]
# (HOST_CFLAGS: the sanitizer flags of a sanitizer build, whose library
# needs its runtime in the host too)
set -euo pipefail
build=$1 src=$2 flags=${3:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" > /dev/null
for f in lib/libcusp.so include/cusp/cusp.h include/cusp/contact.h lib/cmake/cusp/cuspConfig.cmake lib/pkgconfig/cusp.pc; do
  [ -f "$tmp/prefix/$f" ] || { echo "FAIL: $f not installed"; exit 1; }
done
scene="$src/tests/data/scenes/coupling_fall.xml"

cmake -S "$src/examples/host" -B "$tmp/host" -DCMAKE_PREFIX_PATH="$tmp/prefix" -DCMAKE_C_FLAGS="$flags" > "$tmp/cmake.log" 2>&1 ||
  { cat "$tmp/cmake.log"; echo "FAIL: find_package(cusp)"; exit 1; }
cmake --build "$tmp/host" > "$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; echo "FAIL: host build (CMake)"; exit 1; }
"$tmp/host/cusp_host" "$scene" || { echo "FAIL: the CMake-built host"; exit 1; }

pc="$tmp/prefix/lib/pkgconfig"
cc -std=c11 $flags -o "$tmp/host_pc" "$src/examples/host/host.c" $(PKG_CONFIG_PATH="$pc" pkg-config --cflags --libs cusp) -lm ||
  { echo "FAIL: host build (pkg-config)"; exit 1; }
"$tmp/host_pc" "$scene" || { echo "FAIL: the pkg-config-built host"; exit 1; }
"$tmp/host_pc" /nonexistent.xml 2>/dev/null && { echo "FAIL: a missing scene was accepted"; exit 1; }
# every function the installed headers declare links (the whole softbody core is in the library)
cat > "$tmp/decl.c" <<'C'
#include <cusp.h>
int main(void) {
  void *f[] = {(void *)sb_lcp_read_dat, (void *)sb_lcp_write_dat, (void *)sb_static_solve, (void *)sb_contact_solve};
  return f[0] && f[1] && f[2] && f[3] ? 0 : 1;
}
C
cc -std=c11 $flags -o "$tmp/decl" "$tmp/decl.c" $(PKG_CONFIG_PATH="$pc" pkg-config --cflags --libs cusp) -lm ||
  { echo "FAIL: declared softbody functions do not link"; exit 1; }
"$tmp/decl" || { echo "FAIL: declared softbody functions"; exit 1; }
echo "install: 5 passed, 0 failed"

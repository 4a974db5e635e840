#!/usr/bin/env bash
# docs/keys.md is what `cusp-keys --markdown` prints now: the key reference
# cannot go stale. Usage: test_keys.sh CUSP_KEYS SOURCE_DIR
set -euo pipefail
app="$1"
doc="$2/docs/keys.md"
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
"$app" --markdown > "$out"
if ! diff -u "$doc" "$out"; then
  echo "FAIL: docs/keys.md differs from cusp-keys --markdown (the key table in plugin/config.c" >&2
  echo "      changed): regenerate with  $app --markdown > $doc" >&2
  exit 1
fi
"$app" --help | grep -q "usage: cusp-keys" || { echo "FAIL: --help" >&2; exit 1; }
if "$app" --bogus 2>/dev/null; then echo "FAIL: --bogus accepted" >&2; exit 1; fi
echo "keys: docs/keys.md is current ($(grep -c '^| `' "$doc") keys)"

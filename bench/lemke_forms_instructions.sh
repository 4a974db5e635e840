#!/usr/bin/env bash
# Lemke's two forms on the same LCP files by instruction count (callgrind,
# one OpenBLAS thread: the counts do not depend on the machine's load):
# per file, `cusp-lcp FILE --solver lemke --lemke-form F --tikhonov EPS`
# for F = tableau, revised, counted over sb_lcp_solve_split (the solve,
# not the file's reading), and within it Lemke's core alone (inclusive
# counts of lemke_tableau_core / sb_lemke_revised). Prints per file:
#   FILE n=N tableau=PIVOTS/STATUS/SOLVE/CORE revised=PIVOTS/STATUS/SOLVE/CORE
# Usage: bench/lemke_forms_instructions.sh BUILD_DIR TIKHONOV FILE.dat...
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 BUILD_DIR TIKHONOV FILE.dat..." >&2; exit 2; }
command -v valgrind >/dev/null || { echo "lemke_forms_instructions: valgrind is not installed" >&2; exit 2; }
app="$1/cusp-lcp"
tik=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in "$@"; do
  line="$f"
  for form in tableau revised; do
    OPENBLAS_NUM_THREADS=1 valgrind --tool=callgrind --toggle-collect=sb_lcp_solve_split \
      --callgrind-out-file="$tmp/cg" "$app" "$f" --solver lemke --lemke-form "$form" --tikhonov "$tik" --json \
      > "$tmp/json" 2> "$tmp/err" || [ $? -eq 1 ] ||
      { echo "lemke_forms_instructions: cusp-lcp on $f ($form) failed:" >&2; tail -3 "$tmp/err" >&2; exit 1; }
    solve=$(grep -m1 '^totals:' "$tmp/cg" | awk '{print $2}')
    core=$(callgrind_annotate --inclusive=yes "$tmp/cg" |
           awk '/\?\?\?:(lemke_tableau_core|sb_lemke_revised) /{gsub(",", "", $1); s += $1} END{print s + 0}')
    read -r n piv st < <(python3 -c 'import json, sys
d = json.loads(open(sys.argv[1]).read().splitlines()[-1])
print(d["n"], d["iterations"], d["status"])' "$tmp/json")
    [ "$form" = tableau ] && line="$line n=$n"
    line="$line $form=$piv/$st/$solve/$core"
  done
  echo "$line"
done

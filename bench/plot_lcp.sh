#!/usr/bin/env bash
# Plots of the bench-lcp results: cusp's LCP solvers against Siconos numerics
# on the contact LCPs of tests/contact_scenes.h.
#
#   bench/plot_lcp.sh [TSV] [OUT_PNG]
#
# TSV   the table written by `bench-lcp --tsv-file TSV`, or - for stdin.
#       Without TSV, runs "${BENCH:-build/bench-lcp} --json-only --tsv-file
#       <tmp> $BENCH_ARGS" (e.g. BENCH_ARGS=--quick).
# OUT   PNG to write (default bench-lcp.png).
#
# Panels: median solve time vs problem size for the conditioned LCPs (top
# left) and the raw, unconditioned ones (top right), one line per solver:
# the median over the 4 scenes of each solver's median time, counting only
# the cases it solves (bars: fastest..slowest such scene); x is the number
# of contacts m, i.e. the raw LCP size n = m (r + 2) = 6m (the conditioned
# size is smaller: rank selection drops dependent contacts). Bottom: success
# rate per solver, conditioned vs unconditioned contact LCPs (and the peer
# set). Needs bash, awk and gnuplot (pngcairo terminal, else png).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
data=${1:-}
out=${2:-bench-lcp.png}

command -v gnuplot >/dev/null || { echo "plot_lcp.sh: gnuplot not found" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [[ -z $data ]]; then
  bench=${BENCH:-$here/../build/bench-lcp}
  [[ -x $bench ]] || { echo "plot_lcp.sh: no $bench (build first, or set BENCH)" >&2; exit 1; }
  # shellcheck disable=SC2086  # BENCH_ARGS is a list of flags
  "$bench" --json-only --tsv-file "$tmp/in" ${BENCH_ARGS:-} >/dev/null || {
    echo "plot_lcp.sh: $bench reported a failure (plotting anyway)" >&2
  }
elif [[ $data == - ]]; then
  cat >"$tmp/in"
else
  [[ -r $data ]] || { echo "plot_lcp.sh: cannot read $data" >&2; exit 1; }
  cp -- "$data" "$tmp/in"
fi
grep -q $'^[a-z_0-9]*\t[0-9]' "$tmp/in" || { echo "plot_lcp.sh: no case rows in the input (a bench-lcp --tsv-file table?)" >&2; exit 1; }

solvers="fb lemke pgs chain siconos_lemke siconos_newton_fb siconos_pgs pipeline"

# Per solver and conditioning: contacts, raw size, median / min / max over
# the scenes of the solved cases' median times. Columns of the table:
# 1 scene 2 contacts 3 n_raw 4 n 5 conditioned 6 solver 7 solved 8 iterations
# 9 residual_rel 10 median_us 11 q1 12 q3 13 min 14 max
awk -F'\t' -v dir="$tmp" '
  function sort(a, n,   i, j, t) { for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t } }
  /^#/ || NF < 14 { next }
  {
    key = $6 SUBSEP $5 SUBSEP $2
    if (!(key in seen)) { seen[key] = 1; keys[++nk] = key; nraw[key] = $3 }
    cases[$6 SUBSEP $5]++
    if ($7 == 1) { cnt[key]++; t[key, cnt[key]] = $10; ok[$6 SUBSEP $5]++ }
  }
  END {
    for (k = 1; k <= nk; k++) {
      key = keys[k]; split(key, p, SUBSEP)
      n = cnt[key] + 0
      if (n == 0) continue
      for (i = 1; i <= n; i++) v[i] = t[key, i]
      sort(v, n)
      med = n % 2 ? v[(n + 1) / 2] : 0.5 * (v[n / 2] + v[n / 2 + 1])
      printf "%d\t%d\t%.6g\t%.6g\t%.6g\t%d\n", p[3], nraw[key], med, v[1], v[n], n >> (dir "/" p[1] "_" p[2] ".dat")
    }
    for (s in cases) {
      split(s, p, SUBSEP)
      printf "%s\t%s\t%d\t%d\n", p[1], p[2], ok[s] + 0, cases[s] >> (dir "/rates.raw")
    }
  }' "$tmp/in"
for s in $solvers; do
  for c in 0 1; do
    f=$tmp/${s}_$c.dat
    if [[ -s $f ]]; then sort -n -k1,1 "$f" -o "$f"; else printf '1\t6\tNaN\tNaN\tNaN\t0\n' >"$f"; fi
  done
done

# Display names (no underscores: gnuplot's enhanced text makes them subscripts).
pretty_fn='
  function pretty(k) {
    if (k == "fb") return "cusp FB"
    if (k == "lemke") return "cusp Lemke"
    if (k == "pgs") return "cusp PGS"
    if (k == "chain") return "cusp chain"
    if (k == "siconos_lemke") return "Siconos Lemke"
    if (k == "siconos_newton_fb") return "Siconos Newton-FB"
    if (k == "siconos_pgs") return "Siconos PGS"
    if (k == "pipeline") return "cusp full contact solve"
    return k
  }'

# Success rates (percent): solver, conditioned, unconditioned, peer.
awk -F'\t' -v list="$solvers" '
  FNR == NR { if ($2 == 1) c[$1] = 100 * $3 / $4; else u[$1] = 100 * $3 / $4; next }
  $1 == "# peer" { peer[$2] = 100 * $3 / $4 }
  END {
    n = split(list, s, " ")
    for (i = 1; i <= n; i++) {
      if (!(s[i] in c) && !(s[i] in u)) continue
      printf "%s\t%s\t%s\t%s\n", pretty(s[i]), (s[i] in c) ? c[s[i]] : "NaN", (s[i] in u) ? u[s[i]] : "NaN", (s[i] in peer) ? peer[s[i]] : "NaN"
    }
  }'"$pretty_fn" "$tmp/rates.raw" "$tmp/in" >"$tmp/rates.dat"

# Title: the key comparison (# goal: FB success %, reference, solves all, ratio of medians, median ratio, cases).
goal=$(awk -F'\t' "$pretty_fn"'
  $1 == "# goal" {
    ref = pretty($3)
    printf "FB on the conditioned contact LCPs: %.0f%% solved; vs fastest Siconos (%s, %s): time ratio %.2f (median of per-case ratios %.2f, %d cases)",
      $2, ref, $4 == 1 ? "solves all" : "does not solve all", $5, $6, $7 }' "$tmp/in")
mode=$(awk 'NR == 1 && /quick/ { print " — QUICK run"; exit }' "$tmp/in")

# y range: decades around all plotted minima and maxima
read -r ymin ymax < <(cat "$tmp"/*_[01].dat | awk -F'\t' '$3 != "NaN" { if (!lo || $4 < lo) lo = $4; if ($5 > hi) hi = $5 }
  END { printf "%g %g\n", 10 ^ int(log(lo) / log(10) - (lo < 1)), 10 ^ (int(log(hi) / log(10)) + 1) }')

term="pngcairo size 1400,1000 enhanced font 'Sans,11'"
gnuplot -e "set terminal" 2>&1 | grep -q pngcairo || term="png size 1400,1000"

d=$tmp
gnuplot <<EOF
set terminal $term
set output '$out'
set encoding utf8
set datafile separator "\t"
set multiplot title "cusp LCP solvers vs Siconos numerics 4.4 on contact LCPs$mode\n{/*0.8 r = 4 friction directions; 4 scenes: box on a plane, soft rod on a plane, box on a 20° (sticks) and 35° (slides) incline, μ = 0.5}\n{/*0.8 times: median over the scenes of each solver's median time per solve, solved cases only; bars: fastest..slowest scene}\n{/*0.85 $goal}" font ",12"
set style line 1 lc rgb "#1f77b4" lw 2 pt 7 ps 1.1
set style line 2 lc rgb "#2ca02c" lw 2 pt 5 ps 1.1
set style line 3 lc rgb "#9467bd" lw 2 pt 9 ps 1.2
set style line 4 lc rgb "#17becf" lw 1.5 dt 3 pt 1 ps 1.0
set style line 5 lc rgb "#d62728" lw 2 dt 2 pt 4 ps 1.1
set style line 6 lc rgb "#ff7f0e" lw 2 dt 2 pt 6 ps 1.1
set style line 7 lc rgb "#8c564b" lw 2 dt 2 pt 8 ps 1.1
set style line 8 lc rgb "#000000" lw 2 dt 4 pt 13 ps 1.1
set logscale xy
set xrange [0.8:80]
set yrange [$ymin:$ymax]
set xtics (1, 2, 4, 8, 16, 32, 64)
set format y "10^{%L}"
set grid xtics ytics lc rgb "#dddddd"
set xlabel "contacts m   (raw LCP size n = 6m)"
set ylabel "time per solve (µs)"
set key top left box opaque samplen 3 spacing 1.0 font ",9"

set origin 0, 0.36
set size 0.5, 0.52
set title "conditioned LCPs (rank selection + Ruiz + Tikhonov)"
plot \
  '$d/fb_1.dat' using 1:3:4:5 with yerrorlines ls 1 title "cusp FB", \
  '$d/lemke_1.dat' using 1:3:4:5 with yerrorlines ls 2 title "cusp Lemke", \
  '$d/pgs_1.dat' using 1:3:4:5 with yerrorlines ls 3 title "cusp PGS (blocks)", \
  '$d/chain_1.dat' using 1:3 with linespoints ls 4 title "cusp chain FB→Lemke→PGS", \
  '$d/siconos_lemke_1.dat' using 1:3:4:5 with yerrorlines ls 5 title "Siconos Lemke (lexico)", \
  '$d/siconos_newton_fb_1.dat' using 1:3:4:5 with yerrorlines ls 6 title "Siconos Newton-FB", \
  '$d/siconos_pgs_1.dat' using 1:3:4:5 with yerrorlines ls 7 title "Siconos PGS", \
  '$d/pipeline_1.dat' using 1:3:4:5 with yerrorlines ls 8 title "cusp full sb\\\\_contact\\\\_solve (assembly + cond. + solve)"

set origin 0.5, 0.36
set size 0.5, 0.52
set title "unconditioned (raw) LCPs, n = 6m"
plot \
  '$d/fb_0.dat' using 1:3:4:5 with yerrorlines ls 1 title "cusp FB", \
  '$d/lemke_0.dat' using 1:3:4:5 with yerrorlines ls 2 title "cusp Lemke", \
  '$d/pgs_0.dat' using 1:3:4:5 with yerrorlines ls 3 title "cusp PGS (blocks)", \
  '$d/chain_0.dat' using 1:3 with linespoints ls 4 title "cusp chain FB→Lemke→PGS", \
  '$d/siconos_lemke_0.dat' using 1:3:4:5 with yerrorlines ls 5 title "Siconos Lemke (lexico)", \
  '$d/siconos_newton_fb_0.dat' using 1:3:4:5 with yerrorlines ls 6 title "Siconos Newton-FB", \
  '$d/siconos_pgs_0.dat' using 1:3:4:5 with yerrorlines ls 7 title "Siconos PGS"

unset logscale
unset grid
set origin 0, 0
set size 1, 0.36
set title "success rate: answer re-verified here, ||min(z, Mz+q)||_∞ ≤ 10^{-9} max(1, ||q||_∞), whatever the solver reports"
set xrange [*:*]
set xtics auto
set xtics scale 0 font ",10"
unset xlabel
set ylabel "solved (%)"
set yrange [0:135]
set ytics 0, 20, 100
set format y "%g"
set grid ytics lc rgb "#dddddd"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border rgb "#333333"
set boxwidth 0.9
set key top center horizontal box opaque font ",10"
plot \
  '$d/rates.dat' using 2:xtic(1) lc rgb "#1f77b4" title "contact, conditioned", \
  '' using 3 lc rgb "#ff7f0e" title "contact, unconditioned", \
  '' using 4 lc rgb "#999999" title "peer set (Siconos test LCPs, 20)", \
  '' using (\$0 - 0.25):(\$2 + 4):(\$2 == \$2 ? sprintf("%.0f", \$2) : "") with labels font ",9" notitle, \
  '' using (\$0):(\$3 + 4):(\$3 == \$3 ? sprintf("%.0f", \$3) : "") with labels font ",9" notitle, \
  '' using (\$0 + 0.25):(\$4 + 4):(\$4 == \$4 ? sprintf("%.0f", \$4) : "") with labels font ",9" notitle
unset multiplot
EOF
echo "wrote $out" >&2

#!/usr/bin/env bash
# Log-log plot of the bench-dynamics scaling results: median time per call
# vs number of segments for the bias (kinematics + sb_bias), the mass matrix
# and a full step, PCC and PCS chains, with min..max bars over the batches.
#
#   bench/plot_dynamics.sh [DATA] [OUT_PNG]
#
# DATA  the table from `bench-dynamics --tsv` (or --tsv-file FILE), or the
#       one-line JSON that bench-dynamics prints by default (read with awk:
#       only that program's compact output is understood), or - for stdin.
#       Without DATA, runs "${BENCH:-build/bench-dynamics} --tsv $BENCH_ARGS"
#       (e.g. BENCH_ARGS=--quick).
# OUT   PNG to write (default bench-dynamics.png).
# Needs bash, awk and gnuplot (pngcairo terminal, else png).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
data=${1:-}
out=${2:-bench-dynamics.png}

command -v gnuplot >/dev/null || { echo "plot_dynamics.sh: gnuplot not found" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [[ -z $data ]]; then
  bench=${BENCH:-$here/../build/bench-dynamics}
  [[ -x $bench ]] || { echo "plot_dynamics.sh: no $bench (build first, or set BENCH)" >&2; exit 1; }
  # shellcheck disable=SC2086  # BENCH_ARGS is a list of flags
  "$bench" --tsv ${BENCH_ARGS:-} >"$tmp/in"
elif [[ $data == - ]]; then
  cat >"$tmp/in"
else
  [[ -r $data ]] || { echo "plot_dynamics.sh: cannot read $data" >&2; exit 1; }
  cp -- "$data" "$tmp/in"
fi

# JSON from bench-dynamics -> the same table as --tsv (the columns used here).
first=$(awk 'NF { print substr($1, 1, 1); exit }' "$tmp/in")
if [[ $first == "{" ]]; then
  awk '
    # number after "key": in s
    function num(s, key,   i) {
      i = index(s, "\"" key "\":")
      if (!i) return "nan"
      s = substr(s, i + length(key) + 3)
      match(s, /^[-+0-9.eE]+/)
      return substr(s, 1, RLENGTH)
    }
    # number after "field": inside the object "obj":{...} of s
    function sub_num(s, obj, field,   i) {
      i = index(s, "\"" obj "\":{")
      if (!i) return "nan"
      return num(substr(s, i), field)
    }
    /^\{/ {
      line = $0
      printf "# cusp_arm\tm_plus_bias_median_us\t%s\tstep_median_us\t%s\n",
        sub_num(substr(line, index(line, "\"cusp_arm\":{")), "m_plus_bias", "median_us"),
        sub_num(substr(line, index(line, "\"cusp_arm\":{")), "step", "median_us")
      nk = split("pcc pcs", kinds, " ")
      for (k = 1; k <= nk; k++) {
        i = index(line, "\"" kinds[k] "\":{\"segment\"")
        if (!i) continue
        sec = substr(line, i)
        j = index(sec, "\"loglog_slopes\":{")
        sl = substr(sec, j)
        printf "# slopes\t%s\tbias_vs_nodes\t%s\tmass_matrix_vs_segments\t%s\tstep_vs_segments\t%s\n",
          kinds[k], num(sl, "bias_vs_nodes"), num(sl, "mass_matrix_vs_segments"), num(sl, "step_vs_segments")
        rows = substr(sec, 1, j - 1)
        while ((i = index(rows, "{\"segments\":")) > 0) {
          rows = substr(rows, i + 1)
          e = index(rows, "{\"segments\":")
          r = e ? substr(rows, 1, e - 1) : rows
          printf "%s\t%s\t%s\t%s", kinds[k], num(r, "segments"), num(r, "dofs"), num(r, "nodes")
          printf "\t%s\t%s\t%s", sub_num(r, "bias", "median_us"), sub_num(r, "bias", "min_us"), sub_num(r, "bias", "max_us")
          printf "\t%s\t%s\t%s", sub_num(r, "mass_matrix", "median_us"), sub_num(r, "mass_matrix", "min_us"),
            sub_num(r, "mass_matrix", "max_us")
          printf "\t%s\t%s\t%s\n", sub_num(r, "step", "median_us"), sub_num(r, "step", "min_us"), sub_num(r, "step", "max_us")
        }
      }
    }' "$tmp/in" >"$tmp/table"
else
  cp "$tmp/in" "$tmp/table"
fi

# One file per chain kind; columns: 2 segments, 5-7 bias, 8-10 M, 11-13 step.
for kind in pcc pcs; do
  awk -F'\t' -v k="$kind" '$1 == k' "$tmp/table" >"$tmp/$kind.dat"
  [[ -s $tmp/$kind.dat ]] || { echo "plot_dynamics.sh: no $kind rows in the input" >&2; exit 1; }
done

# Title figures from the comment lines.
arm=$(awk -F'\t' '$1 == "# cusp_arm" { printf "CUSP arm (3 PCC): M + bias %.3g µs, step %.3g µs", $3, $5 }' "$tmp/table")
slopes=$(awk -F'\t' '$1 == "# slopes" {
    b = b sprintf("%s%s %.2f", b ? ", " : "", $2, $4)
    m = m sprintf("%s%s %.2f", m ? ", " : "", $2, $6) }
  END { if (b) printf "log-log slopes: bias vs nodes %s;  M vs N %s", b, m }' "$tmp/table")
# Guides: slope 1 through the PCC bias at N = 1, slope 2 through the PCS M at N = 64.
read -r g1 g2 < <(awk -F'\t' '$2 == 1 && $1 == "pcc" { b = $5 } $2 == 64 && $1 == "pcs" { m = $8 }
  END { printf "%s %s\n", b, m }' "$tmp/table")
# Lower y limit: the decade below the smallest minimum.
ymin=$(awk -F'\t' '($1 == "pcc" || $1 == "pcs") { for (c = 5; c <= 13; c++) if ($c > 0 && (!m || $c < m)) m = $c }
  END { printf "%g", 10 ^ int(log(m) / log(10) - (m < 1)) }' "$tmp/table")

# Per-segment dofs and nodes, from the N = 1 rows.
per_seg=$(awk -F'\t' '$2 == 1 && ($1 == "pcc" || $1 == "pcs") {
    t = t sprintf("%s%s: %d dofs, %d nodes", t ? "; " : "", toupper($1), $3, $4) }
  END { printf "per segment: %s", t }' "$tmp/table")

term="pngcairo size 1100,760 enhanced font 'Sans,11'"
gnuplot -e "set terminal" 2>&1 | grep -q pngcairo || term="png size 1100,760"

gnuplot <<EOF
set terminal $term
set output '$out'
set encoding utf8
set title "softbody dynamics: time per call vs chain length (median over batches, bars min..max)\n{/*0.85 $arm}\n{/*0.85 $slopes}"
set logscale xy
set xrange [0.8:80]
set yrange [$ymin:*]
set xtics (1, 2, 4, 8, 16, 32, 64)
set format y "10^{%L}"
set xlabel "segments N   ($per_seg)"
set ylabel "time per call (µs)"
set grid xtics ytics mytics lc rgb "#dddddd"
set key top left box opaque samplen 3 spacing 1.1
set style line 1 lc rgb "#1f77b4" lw 2 pt 7 ps 1.1
set style line 2 lc rgb "#d62728" lw 2 pt 5 ps 1.1
set style line 3 lc rgb "#2ca02c" lw 2 pt 9 ps 1.3
set style line 4 lc rgb "#1f77b4" lw 2 dt 2 pt 6 ps 1.1
set style line 5 lc rgb "#d62728" lw 2 dt 2 pt 4 ps 1.1
set style line 6 lc rgb "#2ca02c" lw 2 dt 2 pt 8 ps 1.3
lin(x) = $g1 * x
quad(x) = $g2 * (x / 64.0)**2
plot \
  '$tmp/pcc.dat' using 2:5:6:7 with yerrorlines ls 1 title "PCC bias (kinematics + sb\\\\_bias)", \
  '$tmp/pcc.dat' using 2:8:9:10 with yerrorlines ls 2 title "PCC mass matrix", \
  '$tmp/pcc.dat' using 2:11:12:13 with yerrorlines ls 3 title "PCC step (h = 1 ms)", \
  '$tmp/pcs.dat' using 2:5:6:7 with yerrorlines ls 4 title "PCS bias (kinematics + sb\\\\_bias)", \
  '$tmp/pcs.dat' using 2:8:9:10 with yerrorlines ls 5 title "PCS mass matrix", \
  '$tmp/pcs.dat' using 2:11:12:13 with yerrorlines ls 6 title "PCS step (h = 1 ms)", \
  lin(x) with lines lc rgb "#666666" dt 5 lw 1.5 title "∝ N", \
  quad(x) with lines lc rgb "#222222" dt 4 lw 1.5 title "∝ N^2"
EOF
echo "wrote $out" >&2

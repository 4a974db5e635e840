#!/usr/bin/env bash
# Planned vs replayed ball rotation of the planning tasks: one panel per
# replay TSV of `python -m cusp.replay PLAN.csv --tsv FILE` (columns t,
# planned_angle, replayed_angle, angle_error in rad), angles drawn in
# degrees: the plan's rotation angle, MuJoCo's open-loop replay, and the
# angle between the two orientations.
#
#   bench/plot_plan.sh OUT.png TITLE=FILE.tsv [TITLE=FILE.tsv ...]
#
# e.g. bench/plot_plan.sh docs/img/plan_replay.png x=x.tsv y=y.tsv z=z.tsv
# Needs gnuplot (pngcairo terminal, else png).
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: bench/plot_plan.sh OUT.png TITLE=FILE.tsv ..." >&2; exit 2; }
command -v gnuplot >/dev/null || { echo "plot_plan.sh: gnuplot not found" >&2; exit 1; }
out=$1
shift
for spec in "$@"; do
  f=${spec#*=}
  [[ -r $f ]] || { echo "plot_plan.sh: cannot read $f" >&2; exit 1; }
done
term=png
gnuplot -e "set terminal" 2>&1 | grep -q pngcairo && term=pngcairo
n=$#
{
  echo "set terminal $term size $((420 * n)),380 font ',10'"
  echo "set output '$out'"
  echo "set multiplot layout 1,$n"
  echo "set xlabel 't (s)'; set ylabel 'angle (deg)'; set key top left; set grid"
  echo "d = 180 / pi"
  for spec in "$@"; do
    title=${spec%%=*}
    f=${spec#*=}
    echo "set title 'rotation about $title'"
    echo "plot '$f' using 1:(\$2*d) skip 1 with linespoints lw 2 pt 7 ps 0.4 title 'plan (MPCC)', \\"
    echo "     '$f' using 1:(\$3*d) skip 1 with linespoints lw 2 pt 5 ps 0.4 title 'replay (MuJoCo, lcp)', \\"
    echo "     '$f' using 1:(\$4*d) skip 1 with lines dt 2 lw 1.5 title 'angle between them'"
  done
  echo "unset multiplot"
} | gnuplot
echo "wrote $out"

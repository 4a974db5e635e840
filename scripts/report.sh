#!/usr/bin/env bash
# The evaluation report of issue 6: ablation (the CUSP paper's Scenario C and
# a sweep beyond it), lcp vs penalty vs the MuJoCo-native arm, performance
# and scaling, measured by bench-eval's cases run as a cusp.sweep sweep on
# Ray (python -m cusp.evaluation; the same numbers as bench-eval's serial
# loop) and written as DIR/report.md with PNG plots (tables in DIR/data/).
#
#   scripts/report.sh [--fast] [--docs | --out DIR] [--build DIR] [--bench PATH]
#                     [--workers N | --address A | --serial] [--redraw] [--planning N]
#
# --fast      a few configurations, short runs (the test suite; < 1 min)
# --out DIR   where report.md, the PNGs and data/ go (default BUILD/report)
# --docs      write the committed report in docs/ (a full run only)
# --build DIR build tree to (re)build bench-eval in (default build/)
# --bench P   use this bench-eval (and the libcusp.so beside it) and build nothing
# --workers N cases at once on the local Ray (default 2)
# --address A run the cases on the Ray cluster at A
# --serial    bench-eval's own serial loop, without Ray (the reference)
# --redraw    run nothing: redraw the plots and report.md from DIR/data
# --planning N  also the planning tasks (bench/plan_eval.sh --N N: x, y, z, warm and
#             cold, the paper's contact and the simulator's, replayed in MuJoCo; and the
#             paper's cells with --hessian lbfgs); N = 100 is the paper's task (hours on a shared
#             machine; each solve capped at 150 CPU s). Without it a planning table already in DIR/data is kept.
# Needs bash, awk, gnuplot (pngcairo, else png), the Python environment
# (.venv, or $CUSP_PYTHON) with Ray and, to build, cmake.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
fast=0 redraw=0 out="" docs=0 build=$root/build bench="" workers=2 address="" serial=0 planning=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --fast) fast=1 ;;
    --docs) docs=1 ;;
    --redraw) redraw=1 ;;
    --serial) serial=1 ;;
    --out | --build | --bench | --workers | --address | --planning)
      [[ $# -ge 2 ]] || { echo "report.sh: $1 needs a value" >&2; exit 2; }
      case $1 in --out) out=$2 ;; --build) build=$2 ;; --bench) bench=$2 ;; --workers) workers=$2 ;;
        --address) address=$2 ;; --planning) planning=$2 ;; esac
      shift ;;
    -h | --help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "report.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
# docs/ holds the committed full report: only a full run asked for by name
# writes there (issue 19 item 6); everything else goes to the build tree
if [[ $docs == 1 ]]; then
  [[ -z $out ]] || { echo "report.sh: --docs and --out name two places; give one" >&2; exit 2; }
  [[ $fast == 0 ]] || { echo "report.sh: --docs holds the full report; a --fast one goes to --out DIR" >&2; exit 2; }
  out=$root/docs
fi
[[ -n $out ]] || out=$build/report
[[ $workers =~ ^[1-9][0-9]*$ ]] || { echo "report.sh: --workers needs a positive integer, not '$workers'" >&2; exit 2; }
[[ -z $planning || $planning =~ ^[1-9][0-9]*$ ]] || { echo "report.sh: --planning needs a positive integer, not '$planning'" >&2; exit 2; }
command -v gnuplot >/dev/null || { echo "report.sh: gnuplot not found (apt-get install gnuplot)" >&2; exit 1; }

mkdir -p "$out/data"
data=$out/data
mode=full
[[ $fast == 1 ]] && mode=fast
declare -A took
t_start=$(date +%s.%N)
if [[ $redraw == 1 ]]; then
  for cmd in ablation compare perf scaling; do
    [[ -s $data/$cmd.json ]] || { echo "report.sh: --redraw needs $data/$cmd.json (run without --redraw first)" >&2; exit 1; }
    took[$cmd]=$(awk -v c="$cmd" '$1 == c { print $2 }' "$data/timing" 2>/dev/null)
  done
  ran_on=$(awk '$1 == "ran" { $1 = ""; print substr($0, 2) }' "$data/timing" 2>/dev/null)
  mode=full fast=0
  grep -q '"fast": true' "$data/perf.json" && mode=fast fast=1
  t_bench=$(awk '$1 == "bench" { print $2 }' "$data/timing" 2>/dev/null)
  run_date=$(awk '$1 == "date" { $1 = ""; print substr($0, 2) }' "$data/timing" 2>/dev/null)
  load=$(awk '$1 == "load" { $1 = ""; print substr($0, 2) }' "$data/timing" 2>/dev/null)
else
  if [[ -z $bench ]]; then
    [[ -f $build/CMakeCache.txt ]] || cmake -S "$root" -B "$build" -DCUSP_WERROR=ON >/dev/null
    cmake --build "$build" --target bench-eval -j2 >/dev/null
    bench=$build/bench-eval
  fi
  [[ -x $bench ]] || { echo "report.sh: no bench-eval at $bench" >&2; exit 1; }
  bench=$(cd "$(dirname "$bench")" && pwd)/$(basename "$bench")
  export OPENBLAS_NUM_THREADS=1
  flag=()
  [[ $fast == 1 ]] && flag=(--fast)
  # only the evaluation's own files: docs/data also holds other reports' data
  # (cosseratbench.json, throughput.json)
  rm -f "$data"/{ablation,compare,compare_energy,compare_stable,perf,perf_runs,scaling}.tsv \
    "$data"/{ablation,compare,perf,scaling}.json "$data/timing"
  # the machine's load during the runs (other users' processes inflate every
  # time measured): the 1-minute load average every 10 s
  loads=$(mktemp)
  (while :; do cut -d' ' -f1 /proc/loadavg; sleep 10; done) >"$loads" 2>/dev/null &
  sampler=$!
  trap 'kill "$sampler" 2>/dev/null; rm -f "$loads"' EXIT
  if [[ $serial == 1 ]]; then
    for cmd in ablation compare perf scaling; do
      echo "report.sh: bench-eval $cmd ${flag[*]}" >&2
      t0=$(date +%s.%N)
      "$bench" "$cmd" "${flag[@]}" --src "$root" --out "$data" >"$data/$cmd.out" || {
        echo "report.sh: bench-eval $cmd failed" >&2; exit 1; }
      tail -n 1 "$data/$cmd.out" >"$data/$cmd.json"
      rm -f "$data/$cmd.out"
      took[$cmd]=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }')
    done
    ran_on="bench-eval's serial loop (one run at a time, no Ray)"
  else
    # the cases as a sweep: a fresh one (no rows of an older bench-eval reused)
    python=${CUSP_PYTHON:-$root/.venv/bin/python}
    [[ -x $python ]] || { echo "report.sh: no Python at $python (set CUSP_PYTHON, or run scripts/setup.sh)" >&2; exit 1; }
    rm -rf "$data/sweep"
    lib=$(dirname "$bench")/libcusp.so
    where=(--num-cpus "$workers")
    ran_on="cusp.sweep on a local Ray of $workers workers (python -m cusp.evaluation; perf's cases one at a time)"
    if [[ -n $address ]]; then
      where=(--address "$address")
      ran_on="cusp.sweep on the Ray cluster at $address (python -m cusp.evaluation; perf's cases alone on a node)"
    fi
    echo "report.sh: python -m cusp.evaluation ${flag[*]} ${where[*]}" >&2
    CUSP_LIBRARY=${CUSP_LIBRARY:-$lib} PYTHONPATH="$root/python${PYTHONPATH:+:$PYTHONPATH}" \
      "$python" -m cusp.evaluation "${flag[@]}" --bench "$bench" --src "$root" --out "$data" "${where[@]}" || {
      echo "report.sh: the evaluation sweep failed" >&2; exit 1; }
    for cmd in ablation compare perf scaling; do
      took[$cmd]=$(awk -v c="$cmd" '$1 == c { print $2 }' "$data/timing")
    done
  fi
  t_bench=$(awk -v a="$t_start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }')
  run_date=$(date -u '+%Y-%m-%d %H:%M UTC')
  kill "$sampler" 2>/dev/null || true
  wait "$sampler" 2>/dev/null || true
  load=$(sort -g "$loads" | awk -v n="$(nproc)" '{ v[NR] = $1 } END { if (NR) printf "%s %s %s", v[int((NR + 1) / 2)], v[NR], n }')
  rm -f "$loads"
  { for cmd in ablation compare perf scaling; do echo "$cmd ${took[$cmd]}"; done
    echo "bench $t_bench"; echo "date $run_date"; echo "ran $ran_on"; [[ -z $load ]] || echo "load $load"; } >"$data/timing"
  if [[ -n $planning ]]; then
    # each solve capped at 150 CPU s, as the committed table was made (docs/planning.md): a
    # task that does not converge then fails in bounded time instead of holding the report
    "$root/bench/plan_eval.sh" --N "$planning" --out "$data/planning" --build "$(dirname "$bench")" \
      -- --max-seconds 150 >&2 || {
      echo "report.sh: the planning tasks failed" >&2; exit 1; }
    cp "$data/planning/planning.md" "$data/planning.md"
    # the paper's cells again with a limited-memory Hessian in every solve (issue 18: the
    # Hessian exact or limited-memory), beside the default's second differences
    "$root/bench/plan_eval.sh" --N "$planning" --starts warm --contacts end --out "$data/planning_lbfgs" \
      --build "$(dirname "$bench")" -- --max-seconds 150 --hessian lbfgs >&2 || {
      echo "report.sh: the planning tasks with --hessian lbfgs failed" >&2; exit 1; }
    cp "$data/planning_lbfgs/planning.md" "$data/planning_lbfgs.md"
    [[ -s $data/planning/plan_replay.png ]] && cp "$data/planning/plan_replay.png" "$out/plan_replay.png"
    [[ -s $data/planning/plan_replay_start.png ]] && cp "$data/planning/plan_replay_start.png" "$out/plan_replay_start.png"
    [[ -s $data/planning/plan_replay_warm.png ]] && cp "$data/planning/plan_replay_warm.png" "$out/plan_replay_warm.png"
  fi
fi
flag=()
[[ $fast == 1 ]] && flag=(--fast)

# ---------- plots ----------
t_draw0=$(date +%s.%N)
term="pngcairo size 800,500 enhanced font 'Sans,9'"
gnuplot -e "set terminal" 2>&1 | grep -q pngcairo || term="png size 800,500"
tmp=$(mktemp -d)
trap '[[ -n ${KEEP_TMP:-} ]] || rm -rf "$tmp"' EXIT

# rows of a table without its comment and header lines
rows() { awk -F'\t' 'NR > 2' "$1"; }

# ablation.tsv columns: 1 sweep, 2 solver (chain | fb-only), 3 angle, 4 disks,
# 5 h (ms), 6 conditioning, 7 success, 8 convergence, 9 max pen. (mm),
# 10 completion, 11 wall (s), 12 steps, 13 solves, 14 fallbacks, 15 failure.
# A table from before the solver column would be misread: refuse it.
[[ $(sed -n 2p "$data/ablation.tsv" | cut -f2) == solver ]] || {
  echo "report.sh: $data/ablation.tsv has no solver column (an older bench-eval wrote it): run without --redraw" >&2; exit 1; }

# Ablation: successes per conditioning subset (of the configurations run):
# paper sweep with cusp's chain and in the paper's setting (FB only), and
# beyond; wall time and success per configuration.
subsets="none|qr|ruiz|tikhonov|qr ruiz|qr tikhonov|ruiz tikhonov|qr ruiz tikhonov"
rows "$data/ablation.tsv" | awk -F'\t' -v list="$subsets" '
  { g = $1 "/" $2; n[g, $6]++; ok[g, $6] += $7 }
  function pct(g, c) { return n[g, c] ? 100 * ok[g, c] / n[g, c] : "NaN" }
  END {
    k = split(list, s, "|")
    for (i = 1; i <= k; i++)
      printf "\"%s\"\t%s\t%s\t%s\t%d\t%d\t%d\n", s[i], pct("paper/chain", s[i]), pct("paper/fb-only", s[i]),
        pct("beyond/chain", s[i]), n["paper/chain", s[i]], n["paper/fb-only", s[i]], n["beyond/chain", s[i]]
  }' >"$tmp/abl_rate.dat"
# per configuration: x = subset index + an offset per group (the chain in the
# left part of each slot, FB only in the shaded right part), wall time, success;
# colour = time step, shape = disks per section (open 45°, filled 60°)
rows "$data/ablation.tsv" | awk -F'\t' -v list="$subsets" -v dir="$tmp" '
  BEGIN { k = split(list, s, "|"); for (i = 1; i <= k; i++) idx[s[i]] = i - 1 }
  {
    g = $1 "_" $2 "_" $3 "_" $4 "_" $5
    if (!(g in gi)) { gi[g] = $2 == "fb-only" ? nf++ : nc++; printf "%s\t%s\t%s\t%s\n", g, $3, $4, $5 >> (dir "/abl_groups") }
    x = $2 == "fb-only" ? idx[$6] + 0.1 + 0.3 * (gi[g] + 0.5) / 8 : idx[$6] - 0.4 + 0.45 * (gi[g] + 0.5) / 16
    printf "%g\t%s\t%s\n", x, ($11 > 1e-3 ? $11 : 1e-3), $7 >> (dir "/abl_" g ".dat")
  }'
abl_plot=""
while IFS=$'\t' read -r g angle disks h; do
  case $h in 0.1) lc='"#1f77b4"' ;; 1) lc='"#ff7f0e"' ;; *) lc='"#2ca02c"' ;; esac
  case $disks in 3) pt=4 ;; 6) pt=6 ;; 12) pt=8 ;; *) pt=12 ;; esac
  [[ $angle == 60 ]] && pt=$((pt + 1))
  abl_plot+="'$tmp/abl_$g.dat' using 1:2 with points pt $pt lc rgb $lc ps 0.8 notitle, "
  abl_plot+="'$tmp/abl_$g.dat' using 1:(\$3 == 0 ? \$2 : NaN) with points pt 2 ps 2 lc rgb 'red' notitle, "
done <"$tmp/abl_groups"

gnuplot <<EOF
set terminal $term
set output '$out/ablation.png'
set datafile separator "\t"
set multiplot layout 1, 2 title "Ablation (Scenario A, $mode run)" font ",10"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border rgb "#333333"
set boxwidth 0.9
set yrange [0:119]
set ytics 0, 20, 100
set ylabel "successful configurations (%)"
set xtics rotate by -35 font ",8" nomirror
set key top left horizontal font ",8"
set grid ytics lc rgb "#dddddd"
set key top left horizontal maxcols 3 font ",8" samplen 1
set title "success per conditioning subset\n{/*0.85 convergence ≥ 95 %, max penetration < 10 mm, completion ≥ 80 %}" font ",9"
plot '$tmp/abl_rate.dat' using 2:xtic(1) lc rgb "#1f77b4" title "paper, chain", \
     '' using 3 lc rgb "#d62728" title "paper, FB only", \
     '' using 4 lc rgb "#ff7f0e" title "beyond, chain"
unset style
do for [i = 0:7] { set object rectangle from i + 0.075, graph 0 to i + 0.425, graph 1 behind fillcolor rgb "#e8e8e8" fillstyle solid 1.0 noborder }
set title "wall time per configuration\n{/*0.85 left of each slot: chain; shaded: FB only (paper's setting); red ×: failed}" font ",9"
set logscale y
set yrange [*:*]
set ytics auto
set format y "%g"
set ylabel "wall time (s)"
set xrange [-0.5:7.5]
set xtics ("none" 0, "qr" 1, "ruiz" 2, "tikh." 3, "qr ruiz" 4, "qr tikh." 5, "ruiz tikh." 6, "all three" 7)
set key outside bottom center horizontal maxcols 4 font ",7" samplen 1
plot $abl_plot \
  NaN with points pt 7 lc rgb "#1f77b4" title "h 0.1 ms", NaN with points pt 7 lc rgb "#ff7f0e" title "h 1 ms", \
  NaN with points pt 7 lc rgb "#2ca02c" title "h 2 ms", NaN with points pt 4 lc rgb "black" title "3 disks", \
  NaN with points pt 6 lc rgb "black" title "6 disks", NaN with points pt 8 lc rgb "black" title "12 disks", \
  NaN with points pt 4 lc rgb "black" title "open: 45°", NaN with points pt 5 lc rgb "black" title "filled: 60°"
unset multiplot
EOF

# Comparison: one cluster per scene, one bar per contact model.
cmp_col() { # COLUMN -> scene, lcp, penalty, native, sap, ncp
  rows "$data/compare.tsv" | awk -F'\t' -v c="$1" '
    { v[$1, $2] = $c; if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 } }
    function x(a) { return a == "NaN" || a == "" ? -1 : a }
    END { for (i = 1; i <= n; i++) { s = order[i]; gsub(/_/, " ", s)
            printf "%s\t%s\t%s\t%s\t%s\t%s\n", s, x(v[order[i], "lcp"]), x(v[order[i], "penalty"]), x(v[order[i], "native"]),
                   x(v[order[i], "sap"]), x(v[order[i], "ncp"]) } }'
}
# two decades above a table's largest value, as 1eN (gnuplot cannot autoscale
# a histogram column that sits at the bottom of a log axis)
decade_above() { awk -F'\t' '{ for (i = 2; i <= NF; i++) if ($i + 0 > m) m = $i + 0 }
  END { e = m > 0 ? int(log(m) / log(10) + 1) : 0; printf "1e%d\n", (e < 0 ? 0 : e) + 1 }' "$1"; }
cmp_col 6 >"$tmp/cmp_pen.dat"
cmp_col 8 >"$tmp/cmp_creep.dat"
cmp_col 11 >"$tmp/cmp_h.dat"
cmp_col 9 >"$tmp/cmp_wall.dat"
# a decade (or 40 %) of headroom for the keys
pen_max=$(decade_above "$tmp/cmp_pen.dat") creep_max=$(decade_above "$tmp/cmp_creep.dat")
wall_max=$(awk -F'\t' '{ for (i = 2; i <= NF; i++) if ($i + 0 > m) m = $i + 0 } END { print (m > 0 ? 1.4 * m : 1) }' "$tmp/cmp_wall.dat")
gnuplot <<EOF
set terminal $term
set output '$out/compare.png'
set datafile separator "\t"
# missing values (-1; gnuplot drops NaN points, and a histogram column
# without points is an error) and zero sit at the bottom of the y range
v(x) = x > 1e-4 ? x : 1e-4
w(x) = x > 0.1 ? x : 0.1
z(x) = x > 0 ? x : 0
set multiplot layout 2, 2 title "the contact models and the MuJoCo-native arm ($mode run; no bar: zero, not measured or never stable)" font ",10"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border rgb "#333333"
set boxwidth 0.9
set key top left horizontal font ",8"
set grid ytics lc rgb "#dddddd"
set logscale y
set format y "10^{%L}"
set yrange [1e-4:$pen_max]
set title "max penetration (mm)" font ",9"
plot '$tmp/cmp_pen.dat' using (v(\$2)):xtic(1) lc rgb "#1f77b4" title "lcp", '' using (v(\$3)) lc rgb "#ff7f0e" title "penalty", '' using (v(\$4)) lc rgb "#2ca02c" title "native", '' using (v(\$5)) lc rgb "#d62728" title "sap", '' using (v(\$6)) lc rgb "#9467bd" title "ncp"
set yrange [1e-4:$creep_max]
set title "tip creep in the sticking window (mm)" font ",9"
plot '$tmp/cmp_creep.dat' using (v(\$2)):xtic(1) lc rgb "#1f77b4" title "lcp", '' using (v(\$3)) lc rgb "#ff7f0e" title "penalty", '' using (v(\$4)) lc rgb "#2ca02c" title "native", '' using (v(\$5)) lc rgb "#d62728" title "sap", '' using (v(\$6)) lc rgb "#9467bd" title "ncp"
set title "largest stable time step (ms; 20 = the largest tried)" font ",9"
set yrange [0.1:1000]
plot '$tmp/cmp_h.dat' using (w(\$2)):xtic(1) lc rgb "#1f77b4" title "lcp", '' using (w(\$3)) lc rgb "#ff7f0e" title "penalty", '' using (w(\$4)) lc rgb "#2ca02c" title "native", '' using (w(\$5)) lc rgb "#d62728" title "sap", '' using (w(\$6)) lc rgb "#9467bd" title "ncp"
set autoscale y
unset logscale y
set format y "%g"
set yrange [0:$wall_max]
set title "wall time per simulated second (s), h = 1 ms" font ",9"
plot '$tmp/cmp_wall.dat' using (z(\$2)):xtic(1) lc rgb "#1f77b4" title "lcp", '' using (z(\$3)) lc rgb "#ff7f0e" title "penalty", '' using (z(\$4)) lc rgb "#2ca02c" title "native", '' using (z(\$5)) lc rgb "#d62728" title "sap", '' using (z(\$6)) lc rgb "#9467bd" title "ncp"
unset multiplot
EOF

# Energy of the conservative variants: (E(t) - E(0)) / max kinetic energy.
rows "$data/compare_energy.tsv" | awk -F'\t' -v dir="$tmp" '
  # a series ends where its kinetic energy passes 10 J (the stability bound: a blow-up)
  { k = $1 "_" $2; keys[k] = 1; if (gone[k] || $5 >= 10) { gone[k] = 1; next }
    t[k, ++n[k]] = $3; de[k, n[k]] = $4; if ($5 > km[k]) km[k] = $5 }
  END { for (k in keys) for (i = 1; i <= n[k]; i++) printf "%s\t%s\n", t[k, i], (km[k] > 0 ? de[k, i] / km[k] : "NaN") > (dir "/en_" k ".dat") }'
en_plot() { # SCENE
  local s=$1 p="" m c
  for m in lcp penalty native; do
    case $m in lcp) c='"#1f77b4" lw 2' ;; penalty) c='"#ff7f0e" lw 2 dt 2' ;; native) c='"#2ca02c" lw 2' ;; esac
    [[ -s $tmp/en_${s}_$m.dat ]] && p+="'$tmp/en_${s}_$m.dat' using 1:2 with lines lc rgb $c title '$m', "
  done
  echo "${p}NaN notitle"
}
en_step=$(rows "$data/compare_energy.tsv" | awk -F'\t' '$3 > t { t = $3 } END { s = t / 3; m = 10 ^ int(log(s) / log(10) - (s < 1)); s = int(s / m + 0.5) * m; print (s > 0 ? s : 1) }')
gnuplot <<EOF
set terminal $term
set output '$out/energy.png'
set datafile separator "\t"
set multiplot layout 1, 3 title "Energy drift, conservative variants (no damping, friction, actuation or contact; $mode run)\n{/*0.8 (E(t) - E(0)) / max kinetic energy; lcp and penalty coincide without contact; a curve ends where a run blows up}" font ",10"
set xlabel "t (s)"
set xtics $en_step
set yrange [-1.05<*:*<1.05]
set grid lc rgb "#dddddd"
set key bottom left font ",8"
set title "scenario\\\\_a" font ",9"
set ylabel "relative energy change"
plot $(en_plot scenario_a)
unset ylabel
set title "scenario\\\\_b" font ",9"
plot $(en_plot scenario_b)
set title "incline" font ",9"
plot $(en_plot incline)
unset multiplot
EOF

# Performance: stacked mean stage times per contact model, median step time.
rows "$data/perf.tsv" | awk -F'\t' '{ printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", $1, $14, $15, $16, $17, $18, $19, $4 }' >"$tmp/perf.dat"
gnuplot <<EOF
set terminal $term
set output '$out/perf.png'
set datafile separator "\t"
set title "Scenario A, h = 1 ms: time per step by stage ($mode run)\n{/*0.8 bars: mean per stage (they add up to the mean step); points: median step time; line: the 50 µs target}" font ",10"
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border rgb "#333333"
set boxwidth 0.6
set ylabel "µs per step"
set yrange [0:*]
set grid ytics lc rgb "#dddddd"
set key outside right font ",8"
plot '$tmp/perf.dat' using 2:xtic(1) lc rgb "#1f77b4" title "soft dynamics", \
     '' using 3 lc rgb "#ff7f0e" title "collision", \
     '' using 4 lc rgb "#2ca02c" title "assembly", \
     '' using 5 lc rgb "#d62728" title "conditioning", \
     '' using 6 lc rgb "#9467bd" title "solve", \
     '' using 7 lc rgb "#8c564b" title "MuJoCo (rest of mj\\\\_step)", \
     '' using 0:8 with points pt 7 ps 1.5 lc rgb "black" title "median step", \
     50 with lines lc rgb "#d62728" dt 2 lw 2 title "target 50 µs"
EOF

# Scaling: median step time against disks per section and sections.
rows "$data/scaling.tsv" | awk -F'\t' -v dir="$tmp" '$4 == 1 { printf "%s\t%s\t%s\t%s\t%s\n", $2, $7, $8, $9, $5 >> (dir "/sc_" $1 "_" $3 ".dat") }'
sc_plot() { # PARAM
  local p="" m c
  for m in lcp penalty native; do
    case $m in lcp) c='"#1f77b4"' ;; penalty) c='"#ff7f0e"' ;; native) c='"#2ca02c"' ;; esac
    [[ -s $tmp/sc_${1}_$m.dat ]] && p+="'$tmp/sc_${1}_$m.dat' using 1:2:3:4 with yerrorlines lc rgb $c lw 2 pt 7 title '$m', "
  done
  echo "${p}NaN notitle"
}
gnuplot <<EOF
set terminal $term
set output '$out/scaling.png'
set datafile separator "\t"
set multiplot layout 1, 2 title "Scenario A at h = 1 ms: median time per step ($mode run; bars: quartiles over the steps)" font ",10"
set grid lc rgb "#dddddd"
set ylabel "µs per step"
set key top left font ",8"
set logscale xy
set xlabel "intermediate disks per section (3 sections)"
set xrange [2:32]
set xtics (3, 6, 12, 24)
plot $(sc_plot disks)
set xlabel "sections (6 disks each, same 0.45 m arm)"
set xrange [0.8:10]
set xtics (1, 2, 3, 4, 5, 6, 7, 8)
plot $(sc_plot sections)
unset multiplot
EOF

# ---------- report.md ----------
t_draw=$(awk -v a="$t_draw0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }')
cpu=$(sed -n 's/.*"cpu": "\([^"]*\)".*/\1/p' "$data/perf.json")
md=$out/report.md
{
cat <<EOF
# cusp evaluation report

Generated by \`scripts/report.sh${flag[*]:+ ${flag[*]}}\` on ${run_date:-?}, **$mode run**,
CPU: $cpu (one core per run, OPENBLAS_NUM_THREADS=1). The runs are bench-eval's cases, run by
${ran_on:-?}; they took ${t_bench} s
(ablation ${took[ablation]} s, compare ${took[compare]} s, perf ${took[perf]} s, scaling ${took[scaling]} s);
drawing the plots and this file ${t_draw} s more. Raw tables: \`data/*.tsv\` (and one JSON line per command in \`data/*.json\`).
Timings come from a shared machine: compare ratios measured in the same run, and read
the spread columns before trusting a single number.
EOF
# load: the median and largest 1-minute load average over the runs, and the cores
if [[ -n ${load:-} ]]; then
  read -r load_med load_max ncpu <<<"$load"
  echo "Load average during the runs: median $load_med, at most $load_max, on $ncpu cores."
  if awk -v l="$load_med" -v n="$ncpu" 'BEGIN { exit !(l > n) }'; then
    echo "**A loaded machine** (more runnable processes than cores): every time below is inflated, unevenly, by"
    echo "other users' processes; only the physics columns (penetration, creep, convergence, stability) are unaffected."
  fi
fi
echo

if [[ $mode == fast ]]; then
  echo "> **Fast mode**: a few configurations and short runs (0.15–0.4 s simulated), for the test suite."
  echo "> The numbers are not the report's; run \`scripts/report.sh\` for the full one."
  echo
fi

cat <<'EOF'
## Definitions

- **Scenes.** Scenario A (`mjcf/scenario_a.xml`: the CUSP arm falls onto a 45° box face, relaxes
  for 1 s, sections 2 and 3 ramp to 40 N from 1 to 2 s), Scenario B (`mjcf/scenario_b.xml`: two
  spheres, 3 disks per section, distal actuation), and the incline
  (`tests/data/scenes/coupling_incline.xml`: the arm hangs with its tip on a 20° plane; run here
  with μ = 1 so that friction must hold the tip). Runs last 3 s simulated unless said otherwise.
- **Box angle** (ablation): the incline box and the arm's mount are turned together about the
  box's x axis through the centre of its top face (`set_tilt` in `bench/eval.c`), so the arm
  starts in the same pose relative to the face and only the face's angle to gravity changes.
- **Time stepping**: cusp's linearly implicit Euler inside MuJoCo's Euler `mj_step`, at
  h = 0.1 ms and 1 ms (the paper's two integrators were semi-implicit Euler at 0.1 ms and RK23
  at 1 ms; cusp has one integrator, so the two settings are the two step sizes).
- **Conditioning subsets**: the config key `conditioning` (`none`, `qr` = inertial rank
  selection, `ruiz` = Ruiz equilibration, `tikhonov`, their pairs, and all three = the full
  pipeline).
- **Solver settings**: *chain*, cusp's default (`solver=lemke`, `fallback=1`): two
  principal-pivoting passes from the warm start's active set, then Lemke → FB → PGS until one
  converges; *FB only*, the paper's setting (`solver=fb`, `fallback=0`): the same pivot passes,
  then FB and no other solver. Every run outside the ablation's FB-only rows uses the chain.
- **Convergence rate**: converged coupled LCP solves / all solves (`cusp_report`: a solve
  converges when the physical residual is within 1e-9 max(1, |q|); with the chain, a later
  solver that converges counts; a step whose solvers all failed applies a bounded damped
  answer and counts as not converged). Runs without any solve count as 100 %.
- **Penetration**: per step the largest soft-contact penetration from `cusp_report`
  (`max_penetration`, −gap over the step's contacts); for the MuJoCo-native arm MuJoCo's own
  `d->contact[i].dist < 0` over contacts involving the arm's geoms (`arm/…`). *Max* is over the
  run; *mean* is the time average of the per-step maximum over the steps with a contact.
- **Completion**: fraction of the target simulated time reached before a failure: MuJoCo error
  or instability warning, non-finite MuJoCo or soft state, a cusp NaN event, or blow-up (the tip
  more than 10 m from the origin).
- **Success** (the paper's): convergence ≥ 95 %, max penetration < 10 mm, completion ≥ 80 %.
- **Tip creep**: distance the tip (centre of the last disk; the native arm's `arm/tip` site)
  moves over a window in which static friction should hold it: the incline with μ = 1 from 1 s
  to 3 s (after settling); Scenarios A and B from 0.8 to 1.0 s (lying on the box / upper sphere
  before actuation; these windows include what is left of the elastic relaxation, time
  constant B/K = 0.47 s, so they bound creep from above).
- **Largest stable time step**: h is swept over 0.5, 1, 2, 5, 10, 20 ms (3 s each); a run is
  stable when it completes, its max penetration is < 10 mm and its kinetic energy stays below
  10 J (some 30 times what the scenes reach at small steps). Reported: the largest h such that
  it and every smaller h in the sweep are stable (20 ms is the largest tried).
- **Energy drift**: on a conservative variant of each scene (chamber damping 0, friction 0, no
  actuation, every geom's contype/conaffinity 0: the arm swings freely from its pre-elongated
  or unstretched start), total mechanical energy E = rigid bodies (MuJoCo's `mj_energyPos` +
  `mj_energyVel` with `mjENBL_ENERGY`, minus the gravity term of static and mocap bodies) + the
  soft instances (`cusp_energy`: kinetic + gravity + elastic). Drift = (E(T) − E(0)) / max
  kinetic energy over the run (scale-free; E's zero depends on the gravity reference). The
  native arm's energy is all MuJoCo's (links and joint springs). Energy is sampled after each
  step (MuJoCo's part at the step's start, one step behind the soft part; the scenes' rigid
  bodies are static, so only the native arm has a MuJoCo part).
- **Wall time**: the sum of the `mj_step` calls only (measurement code excluded).
- **Per-step stages** (`cusp_step_report`): soft dynamics (controls, implicit-step
  preparation and commit, disk placement), collision (narrow phase of the disks and of the
  touched bodies' other contacts), assembly (rigid free velocity, contact Jacobians, penalty
  forces, Delassus matrix), conditioning (the three stages), solve (the LCP solver chain), and
  MuJoCo's rest of `mj_step` (step time − cusp's total).

EOF

# ---------- targets ----------
echo "## Targets"
echo
rows "$data/perf.tsv" >"$tmp/perf.rows"
rows "$data/ablation.tsv" >"$tmp/abl.rows"
awk -F'\t' '
  FILENAME ~ /perf/ { med[$1] = $4; lo[$1] = $5; hi[$1] = $6; av[$1] = $2; note[$1] = $33; done[$1] = $23
                      fbs[$1] = $26; tsteps[$1] = $27; fbmean[$1] = $28; othmean[$1] = $29; fbshare[$1] = $30
                      mean[$1] = $20; fbk[$1] = $25; runs[$1] = $3
                      for (j = 7; j <= 11; j++) st[$1, j] = $j; rest[$1] = $13; next }
  # the target is about cusp'"'"'s default pipeline: the chain rows
  $2 != "chain" { next }
  $6 == "qr ruiz tikhonov" { n++; ok += $7; if (!$7) bad = bad sprintf("%s %s°/%s disks/h %s ms (conv. %s, pen. %s mm, completion %s; %s); ", $1, $3, $4, $5, $8, $9, $10, $15) }
  # Scenario A as the perf runs it (45°, 6 disks, h = 1 ms), per conditioning subset
  $1 == "paper" && $3 == 45 && $4 == 6 && $5 == 1 { aw[$6] = $11; afb[$6] = $14; asol[$6] = $13; if (best == "" || $11 < aw[best]) best = $6 }
  END {
    print "| target | measured | met? | by how much, and why |"
    print "|---|---|---|---|"
    m = med["lcp"]
    names[7] = "soft dynamics"; names[8] = "collision"; names[9] = "assembly"; names[10] = "conditioning"; names[11] = "solve"
    why = ""
    for (j = 7; j <= 11; j++) why = why sprintf("%s %.0f µs, ", names[j], st["lcp", j])
    why = why sprintf("MuJoCo rest %.0f µs (medians per stage)", rest["lcp"])
    big = 7; for (j = 8; j <= 11; j++) if (st["lcp", j] > st["lcp", big]) big = j
    full = "qr ruiz tikhonov"
    tail = ""
    if (fbs["lcp"] > 0 && fbmean["lcp"] != "NaN")
      tail = sprintf(" %.0f %% of the run'"'"'s time is in the %d of %d steps (%.0f %%) whose solve needed more than Lemke (FB, PGS or the damped answer): %.0f µs each on average against %.0f µs for the others.", 100 * fbshare["lcp"], fbs["lcp"], tsteps["lcp"], 100 * fbs["lcp"] / tsteps["lcp"], fbmean["lcp"], othmean["lcp"])
    if (full in aw && best != "" && best != full)
      tail = tail sprintf(" In the ablation, this configuration ran in %.2f s with the full pipeline (%d fallbacks in %d solves) and in %.2f s with `%s` (%d fallbacks).", aw[full], afb[full], asol[full], aw[best], best, afb[best])
    if (m == "NaN") printf "| Scenario A ≤ 50 µs per step (median, one core) | not measured | – | %s |\n", note["lcp"]
    else printf "| Scenario A ≤ 50 µs per step (median, one core) | median %.0f µs (runs %.0f–%.0f); mean %.0f µs | %s | %s; largest stage: %s, %.0f µs (%.0f %% of the budget). %s.%s |\n", m, lo["lcp"], hi["lcp"], mean["lcp"], (m <= 50 ? "yes" : "**no**"), (m <= 50 ? "within" : sprintf("missed by %.0f µs (%.1f×; the mean by %.0f×)", m - 50, m / 50, mean["lcp"] / 50)), names[big], st["lcp", big], 100 * st["lcp", big] / 50, why, tail
    if (av["native"] != 1 || med["native"] == "NaN")
      printf "| cost ≤ MuJoCo-native arm, same scene, same run | lcp %.0f µs; native not measured | – | %s |\n", m, note["native"]
    else if (done["native"] < 1)
      printf "| cost ≤ MuJoCo-native arm, same scene, same run | lcp %.0f µs vs native %.0f µs over the %.0f %% of the run it completed | – | not comparable: the native arm did not complete Scenario A (%s) |\n", m, med["native"], 100 * done["native"], note["native"]
    else {
      okm = m <= med["native"]; oka = mean["lcp"] <= mean["native"]
      verdict = okm && oka ? "yes" : okm ? "**median only**" : oka ? "**mean only**" : "**no**"
      printf "| cost ≤ MuJoCo-native arm, same scene, same run | median: lcp %.0f µs vs native %.0f µs (ratio %.2f); mean (total wall time): lcp %.0f µs vs native %.0f µs (ratio %.2f) | %s | %s%s |\n", m, med["native"], m / med["native"], mean["lcp"], mean["native"], mean["lcp"] / mean["native"], verdict,
        (okm ? "the typical step is not slower" : sprintf("the typical step costs %.0f %% more", 100 * (m / med["native"] - 1))),
        (oka ? "; neither is the whole run." : sprintf("; the whole run costs %.0f %% more (%.0f %% of lcp'"'"'s time is in the %d steps whose solve fell back).", 100 * (mean["lcp"] / mean["native"] - 1), 100 * fbshare["lcp"], fbs["lcp"]))
    }
    printf "| full-pipeline ablation success 100 %% | %d / %d (paper sweep and beyond, default chain) | %s | %s |\n", ok, n, (ok == n && n > 0 ? "yes" : "**no**"), (ok == n ? "every configuration run with all three stages succeeds" : "failed: " bad)
  }' "$tmp/perf.rows" "$tmp/abl.rows"
echo
awk -F'\t' '$1 == "lcp" { c = $22 } END {
  print "Why the step costs what it does (the stage table below has the numbers). The soft dynamics"
  print "stage builds the arm'"'"'s dense mass matrix and bias by recursive passes over 4 Gauss slices per"
  print "section, factors the implicit M̃ = M + hD + h²K, and places the disks once, after the"
  print "commit (the next step reuses them); collision asks MuJoCo'"'"'s collision functions for every"
  print "disk against every contact geom of the scene; and with " (c == "NaN" ? "the" : sprintf("%.1f", c)) " soft contacts per step on"
  print "average (6 LCP unknowns each with the r = 4 pyramid) the coupled LCP is assembled densely,"
  print "rank-selected by column-pivoted QR, Ruiz-scaled and solved: two principal-pivoting passes"
  print "from the active set of the previous step'"'"'s answer (the warm start), and when they do not"
  print "settle it the chain Lemke → FB → PGS (FB and PGS only after Lemke fails). The"
  print "MuJoCo-native arm pays instead for its rigid links (disks + 1 per section, three joints each,"
  print "tied per section by joint equality constraints) in MuJoCo'"'"'s own dynamics and constraint solver."
  print ""
}' "$tmp/perf.rows"

# ---------- ablation ----------
cat <<EOF
## Ablation (Scenario C)

![ablation](ablation.png)

The paper's 64 configurations run twice, in two solver settings (the sweep beyond the paper
runs with the chain only):

- **chain** (cusp's default pipeline): two principal-pivoting passes from the active set of the
  warm start (the previous step's answer), then the chain Lemke → FB → PGS until one solver
  converges; only if all fail does the step apply a bounded damped answer (not converged).
- **FB only** (the paper's setting, \`solver=fb\`, \`fallback=0\`): the same warm active-set
  pivot, then FB alone (retried once from zero when it stalls from the guess); when it fails
  the step applies the damped answer and the solve counts as not converged.

*Fallbacks* count the solves that needed more than one attempt (chain: Lemke failed; FB only:
FB's restart from zero, or the damped answer).

The paper's claims (000_…): without Ruiz 41 % success (12/29); baseline 43 %; every
configuration with Ruiz succeeds; full pipeline 100 %. Here, over the configurations run:

EOF
awk -F'\t' '
  function add(key, set, s) { n[key, set]++; ok[key, set] += s; seen[key] = 1 }
  $1 == "paper" {
    ruiz = index($6, "ruiz") > 0
    add(ruiz ? "with Ruiz" : "without Ruiz", $2, $7)
    if ($6 == "none") add("baseline (none)", $2, $7)
    if ($6 == "qr ruiz tikhonov") add("full pipeline", $2, $7)
    add("all", $2, $7)
  }
  function cell(key, set) { return n[key, set] ? sprintf("%d / %d | %.0f %%", ok[key, set], n[key, set], 100 * ok[key, set] / n[key, set]) : "– | –" }
  END {
    print "| group (paper sweep) | chain: successes | rate | FB only: successes | rate | paper |"
    print "|---|---|---|---|---|---|"
    split("without Ruiz|baseline (none)|with Ruiz|full pipeline|all", g, "|")
    paper["without Ruiz"] = "41 % (12/29)"; paper["baseline (none)"] = "43 %"; paper["with Ruiz"] = "100 %"; paper["full pipeline"] = "100 %"; paper["all"] = "–"
    for (i = 1; i <= 5; i++) if (seen[g[i]]) printf "| %s | %s | %s | %s |\n", g[i], cell(g[i], "chain"), cell(g[i], "fb-only"), paper[g[i]]
  }' "$tmp/abl.rows"
echo
abl_table() { # SWEEP SOLVER
  awk -F'\t' -v sw="$1" -v so="$2" '
    BEGIN { print "| angle | disks | h (ms) | conditioning | success | convergence | max pen. (mm) | completion | wall (s) | fallbacks | failure |"
            print "|---|---|---|---|---|---|---|---|---|---|---|" }
    $1 == sw && $2 == so { printf "| %s° | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", $3, $4, $5, $6, ($7 ? "yes" : "**no**"),
                 ($8 == "NaN" ? "–" : sprintf("%.1f %%", 100 * $8)), ($9 == "NaN" ? "–" : sprintf("%.3g", $9)), sprintf("%.0f %%", 100 * $10), sprintf("%.1f", $11), $14, $15 }' "$tmp/abl.rows"
}
awk -F'\t' -v list="$subsets" '
  function med(a, n,   i, j, t) { for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
                                  return n ? (n % 2 ? a[(n + 1) / 2] : 0.5 * (a[n / 2] + a[n / 2 + 1])) : "NaN" }
  function wmed(set, c, h,   k, m, q, t) { k = set SUBSEP c SUBSEP h; m = nw[k]; for (q = 1; q <= m; q++) t[q] = w[k, q]; return med(t, m) }
  function f2(x) { return x == "NaN" ? "–" : sprintf("%.2f", x) }
  function frac(a, b) { return b ? sprintf("%d/%d", a, b) : "–" }
  {
    g = $1 "/" $2; n[g, $6]++; ok[g, $6] += $7
    # solves times the convergence rate: the converged solves
    unconv = $8 == "NaN" ? 0 : $13 - int($8 * $13 + 0.5)
    if ($2 == "chain") {
      fb[$6] += $14; sol[$6] += $13; allsol += $13; allfb += $14
      if ($8 != "NaN" && (minc == "" || $8 < minc)) minc = $8
      if ($1 == "paper") { cn++; cok += $7 }
    } else {
      osol[$6] += $13; ounc[$6] += unconv; oall += $13; oallunc += unconv; on++; ook += $7
      ruiz = index($6, "ruiz") > 0; rn[ruiz]++; rok[ruiz] += $7
      if (!$7) nfail[$6]++
      if ($8 != "NaN" && (ominc == "" || $8 < ominc)) { ominc = $8; ominw = sprintf("%s°, %s disks, h %s ms, `%s`", $3, $4, $5, $6) }
    }
    if ($1 == "paper") { k = $2 SUBSEP $6 SUBSEP $5; w[k, ++nw[k]] = $11 }
  }
  END {
    print "Per conditioning subset (wall time: median over the paper sweep'"'"'s 4 configurations at that h):"
    print ""
    print "| conditioning | paper sweep, chain | paper sweep, FB only | beyond, chain | chain: Lemke failed, the chain went on | FB only: solves not converged | wall s, chain, h = 0.1 / 1 ms | wall s, FB only, h = 0.1 / 1 ms |"
    print "|---|---|---|---|---|---|---|---|"
    k = split(list, sub_, "|")
    for (i = 1; i <= k; i++) {
      c = sub_[i]
      printf "| %s | %s | %s | %s | %s | %s | %s / %s | %s / %s |\n", c, frac(ok["paper/chain", c], n["paper/chain", c]), frac(ok["paper/fb-only", c], n["paper/fb-only", c]),
        frac(ok["beyond/chain", c], n["beyond/chain", c]), (sol[c] ? sprintf("%d of %d solves", fb[c], sol[c]) : "–"), (osol[c] ? sprintf("%d of %d solves", ounc[c], osol[c]) : "–"),
        f2(wmed("chain", c, "0.1")), f2(wmed("chain", c, "1")), f2(wmed("fb-only", c, "0.1")), f2(wmed("fb-only", c, "1"))
    }
    print ""
    printf "**Chain.** Over every configuration run with the chain, the lowest convergence rate was %s, and Lemke (after the warm active-set pivot) needed the rest of the chain in %d of %d solves (%.3f %%). ", (minc == "" ? "–" : sprintf("%.2f %%", 100 * minc)), allfb, allsol, (allsol ? 100 * allfb / allsol : 0)
    printf "%s", "A solve converges when any solver of the chain converges, so the subsets differ mainly in wall time and in how often Lemke needs the rest of the chain; "
    if (cn && cok == cn) printf "all %d paper configurations run succeed, so the paper'"'"'s failures without Ruiz are not reproduced with the chain.", cn
    else if (cn) printf "%d of %d paper configurations run succeed.", cok, cn
    few = ""
    for (i = 1; i <= k; i++) { c = sub_[i]; if (sol[c] && (few == "" || fb[c] < fb[few])) few = c }
    full = "qr ruiz tikhonov"
    if (few != "" && sol[full]) printf " Fewest fallbacks: `%s` (%d); the full pipeline: %d.", few, fb[few], fb[full]
    print ""
    print ""
    if (on) {
      printf "**FB only (the paper'"'"'s setting).** %d of %d configurations run succeed", ook, on
      if (rn[0]) printf "; without Ruiz %d of %d (%.0f %%; paper: 41 %%, 12/29)", rok[0], rn[0], 100 * rok[0] / rn[0]
      if (rn[1]) printf "; with Ruiz %d of %d (%.0f %%; paper: 100 %%)", rok[1], rn[1], 100 * rok[1] / rn[1]
      printf ". %d of %d solves did not converge (%.3f %%)", oallunc, oall, (oall ? 100 * oallunc / oall : 0)
      if (ominc != "") printf "; the lowest convergence rate was %.2f %% (%s)", 100 * ominc, ominw
      printf ". "
      fl = ""
      for (i = 1; i <= k; i++) { c = sub_[i]; if (nfail[c]) fl = fl sprintf("%s`%s` (%d of %d)", (fl == "" ? "" : ", "), c, nfail[c], n["paper/fb-only", c]) }
      if (fl != "") printf "Subsets with failures: %s.", fl
      else if (rn[0]) printf "No subset fails: %s, so the paper'"'"'s failures without Ruiz are not reproduced in its setting either (the warm active-set pivot runs in front of FB in both settings).", (oallunc ? sprintf("every run converged on at least %.2f %% of its solves (the criterion asks 95 %%)", 100 * ominc) : "FB alone converges on every solve")
      else printf "%s", "No configuration run fails."
      print ""
      print ""
    }
  }' "$tmp/abl.rows"
echo "### The paper's 64 configurations (chain)"
echo
abl_table paper chain
echo
echo "### The paper's setting: FB only on the same configurations"
echo
abl_table paper fb-only
echo
cat <<'EOF'
### Beyond the paper: 12 disks per section and h = 2 ms

12 disks per section at h = 1 and 2 ms, and the paper's 3 and 6 disks at h = 2 ms (chain).

EOF
abl_table beyond chain
echo
awk -F'\t' '{ n++; if (!$7) { f++; why = why sprintf("- %s, %s: %s°, %s disks, h %s ms, `%s`: convergence %s, max penetration %s mm, completion %s (%s)\n", $1, ($2 == "fb-only" ? "FB only" : $2), $3, $4, $5, $6, $8, $9, $10, $15) } }
  END { if (f) { printf "Failed configurations (%d of %d):\n\n%s\n", f, n, why } else printf "Every configuration run succeeded (%d of %d).\n\n", n, n }' "$tmp/abl.rows"

# ---------- comparison ----------
cat <<'EOF'
## lcp vs penalty vs sap vs ncp vs MuJoCo-native arm

![comparison](compare.png)

Main runs at h = 1 ms (the scenes' own step). The native arm is the expansion's MuJoCo
approximation of the same arm (`--set arm.contact=native`: rigid links on spring joints, MuJoCo's
own contact solver). Iterations per step that solved a contact problem: Lemke pivots after the
warm-started principal pivoting (lcp), Newton iterations (sap, ncp), MuJoCo's solver iterations
(native); penalty solves nothing. µs/step: the run's mean wall time per step.

EOF
rows "$data/compare.tsv" | awk -F'\t' '
  function f(x, fmt) { return x == "NaN" ? "–" : sprintf(fmt, x) }
  BEGIN { print "| scene | model | completion | max pen. (mm) | mean pen. (mm) | creep (mm) [window, s] | wall s / sim s | µs / step | iterations / step | solve conv. | largest stable h (ms) | energy drift (rel.) | energy drift (J) | note |"
          print "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|" }
  { if ($15 ~ /^conservative run failed/) $12 = $13 = "NaN"   # no drift of a blow-up
    printf "| %s | %s | %s | %s | %s | %s [%s] | %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, f(($5 == "NaN" ? "NaN" : 100 * $5), "%.0f %%"), f($6, "%.3g"), f($7, "%.3g"), f($8, "%.3g"), $4,
           f($9, "%.3f"), f($17, "%.0f"), f($16, "%.2f"), f(($10 == "NaN" ? "NaN" : 100 * $10), "%.1f %%"), f($11, "%g"), f($12, "%+.3f"), f($13, "%+.3g"), $15 }'
echo
echo "Time-step sweep (stability per h):"
echo
rows "$data/compare_stable.tsv" | awk -F'\t' '
  BEGIN { print "| scene | model | h (ms) | completion | max pen. (mm) | max kinetic (J) | stable | failure |"
          print "|---|---|---|---|---|---|---|---|" }
  { printf "| %s | %s | %s | %.0f %% | %.3g | %.3g | %s | %s |\n", $1, $2, $3, 100 * $4, $5, $6, ($7 ? "yes" : "**no**"), $8 }'
echo
cat <<'EOF'
![energy](energy.png)

Without contact, lcp and penalty are the same soft step, so their energy curves coincide; their
drift is the numerical damping of cusp's linearly implicit Euler step, not the contact model.
EOF
rows "$data/compare.tsv" | awk -F'\t' '
  $2 == "native" && $3 == 1 { s = s sep $1 ": " ($15 ~ /^conservative run failed/ ? "blew up: " substr($15, 26) : sprintf("%+.3f", $12)); sep = ", " }
  END { if (s != "") printf "The MuJoCo-native arm (MuJoCo'"'"'s Euler step, joint springs): relative drift %s.\n", s; print "" }'

# ---------- performance ----------
cat <<'EOF'
## Performance

![performance](perf.png)

Scenario A at h = 1 ms, every step of the run (falling, lying, sliding). Per contact model:
median over the repeated runs of each run's median step time, with the range of the runs'
medians; per stage the median over the steps (medians do not add up; the plot stacks means,
which do).

EOF
awk -F'\t' '
  function f(x, fmt) { return x == "NaN" ? "–" : sprintf(fmt, x) }
  BEGIN { print "| model | runs | median µs/step [range] | dynamics | collision | assembly | conditioning | solve | cusp total | MuJoCo rest | mean µs/step | realtime factor | mean contacts | completion | LCP conv. | fallbacks | note |"
          print "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|" }
  { printf "| %s | %s | %s [%s–%s] | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $3, f($4, "%.0f"), f($5, "%.0f"), f($6, "%.0f"),
      f($7, "%.1f"), f($8, "%.1f"), f($9, "%.1f"), f($10, "%.1f"), f($11, "%.1f"), f($12, "%.1f"), f($13, "%.1f"), f($20, "%.0f"), f($21, "%.2f"), f($22, "%.1f"),
      f(($23 == "NaN" ? "NaN" : 100 * $23), "%.0f %%"), f(($24 == "NaN" ? "NaN" : 100 * $24), "%.1f %%"), $25, $31 }' "$tmp/perf.rows"
echo
echo "Realtime factor = simulated time / wall time at the median step (h / median step time)."
echo
cat <<'EOF'
### Scaling

![scaling](scaling.png)

Runs of 2 s (fall, lying, and the first second of sliding). Disks: Scenario A with 3, 6, 12, 24
intermediate disks per section. Sections: the same 0.45 m,
1.975 kg arm cut into 1–8 equal sections (chamber stiffness and damping × n/3, springs in
series, so the arm as a whole is unchanged; the same pre-elongation strain; the distal two
thirds of the sections actuated as in Scenario A), 6 disks per section.

EOF
rows "$data/scaling.tsv" | awk -F'\t' '
  function f(x, fmt) { return x == "NaN" ? "–" : sprintf(fmt, x) }
  BEGIN { print "| varied | value | model | dofs | disks | median µs/step [q1–q3] | mean µs/step | mean contacts | LCP conv. | fallbacks | completion | realtime factor | note |"
          print "|---|---|---|---|---|---|---|---|---|---|---|---|---|" }
  { printf "| %s | %s | %s | %s | %s | %s [%s–%s] | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $5, $6, f($7, "%.0f"), f($8, "%.0f"), f($9, "%.0f"), f($13, "%.0f"), f($10, "%.1f"),
      f(($14 == "NaN" ? "NaN" : 100 * $14), "%.1f %%"), $15, f(($11 == "NaN" ? "NaN" : 100 * $11), "%.0f %%"), f($12, "%.2f"), $16 }'
echo
rows "$data/scaling.tsv" | awk -F'\t' '
  $4 == 1 { key = $1 SUBSEP $3
    if (!(key in lo) || $2 + 0 < lov[key]) { lo[key] = $7; lov[key] = $2 + 0 }
    if (!(key in hi) || $2 + 0 > hiv[key]) { hi[key] = $7; hiv[key] = $2 + 0; hm[key] = $13 }
    fb[key] += $15; seen[$1] = 1 }
  END {
    split("disks sections", ps, " ")
    for (p = 1; p <= 2; p++) {
      if (!(ps[p] in seen)) continue
      line = sprintf("From %s = %s to %s, the median step grows", ps[p], lov[ps[p] SUBSEP "lcp"], hiv[ps[p] SUBSEP "lcp"])
      split("lcp penalty native", ms, " ")
      sep = " "
      for (q = 1; q <= 3; q++) { key = ps[p] SUBSEP ms[q]; if (key in lo && lo[key] > 0) { line = line sprintf("%s%.1f× for %s (%.0f → %.0f µs)", sep, hi[key] / lo[key], ms[q], lo[key], hi[key]); sep = ", " } }
      key = ps[p] SUBSEP "lcp"
      if (key in fb) line = line sprintf("; lcp'"'"'s solves fell back %d times over these runs.", fb[key])
      print line
      print ""
    }
  }'
echo
if [[ -s $data/planning.md ]]; then
  echo "## Planning through contact"
  echo
  cat "$data/planning.md"
  echo
  [[ -s $out/plan_replay.png ]] && echo "![planned vs replayed ball angle](plan_replay.png)" && echo
  [[ -s $out/plan_replay_start.png ]] && echo "![planned vs replayed ball angle, the start contact](plan_replay_start.png)" && echo
  [[ -s $out/plan_replay_warm.png ]] && echo "![planned vs replayed ball angle, the paper's two stages](plan_replay_warm.png)" && echo
  if [[ -s $data/planning_lbfgs.md ]]; then
    echo "### The paper's cells with a limited-memory Hessian in every solve (--hessian lbfgs)"
    echo
    cat "$data/planning_lbfgs.md"
    echo
  fi
  echo "What the columns mean, and the paper's tasks at N = 100: docs/planning.md."
  echo
fi
} >"$md"

t_total=$(awk -v a="$t_start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }')
pngs=("$out"/*.png)
echo "report.sh: wrote $md and ${#pngs[@]} plots in ${t_total} s" >&2

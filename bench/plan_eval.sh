#!/usr/bin/env bash
# The planning tasks (CUSP paper, section IV; issue 18) as measured figures:
# rotate the ball about x, y and z with the kinematic warm start and cold,
# each with the paper's contact (at the step's end) and the simulator's
# (cusp-plan --contact-time start), replay each plan in MuJoCo (python -m
# cusp.replay, lcp contact, at the plan's step), and write
#   OUT/planning.tsv       one row per task, start and contact time: status, IPOPT status,
#                          quaternion error, max |min(a,b)|, max a b, sb_step
#                          residual, iterations, solve s (kinematic, dynamic,
#                          total), replay: planned / replayed angle, final
#                          angle error (rad)
#   OUT/planning.md        the same as a markdown table, with the command
#   OUT/plan_replay.png    planned vs replayed ball angle of the cold starts
#                          (cusp-plan's defaults about every axis)
#   OUT/plan_replay_start.png the same for the cold starts with the start contact
#   OUT/plan_replay_warm.png  the same for the paper's two stages (warm, end contact)
#   OUT/plan_AXIS_START[_contact_start].csv|json|tsv each run's trajectory, JSON
#                          line and replay (the suffix for the start contact)
#
#   bench/plan_eval.sh [--N n] [--out DIR] [--axes "x y z"] [--starts "warm cold"]
#                      [--contacts "end start"] [--build DIR] [-- extra cusp-plan options]
#
# --N n  steps (default 100, the paper's task: T = 4 s, 90 degrees); a
#        smaller N keeps the paper's step h = 0.04 s and its turning rate:
#        T = 0.04 N s and 90 N / 100 degrees.
# --contacts  the contact times (cusp-plan --contact-time) to plan with.
# Each N = 100 plan takes about a minute of CPU or more (up to the stage's
# cap about y and z with the warm start): keep N = 100 out of CI.
# Needs bash, awk, gnuplot, the Python environment (.venv or $CUSP_PYTHON).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
N=100 out="" axes="x y z" starts="warm cold" contacts="end start" build=$root/build
while [[ $# -gt 0 ]]; do
  case $1 in
    --N | --out | --axes | --starts | --contacts | --build)
      [[ $# -ge 2 ]] || { echo "plan_eval.sh: $1 needs a value" >&2; exit 2; }
      case $1 in --N) N=$2 ;; --out) out=$2 ;; --axes) axes=$2 ;; --starts) starts=$2 ;; --contacts) contacts=$2 ;; --build) build=$2 ;; esac
      shift ;;
    --) shift; break ;;
    -h | --help) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "plan_eval.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[[ $N =~ ^[1-9][0-9]*$ ]] || { echo "plan_eval.sh: --N needs a positive integer, not '$N'" >&2; exit 2; }
for c in $contacts; do
  [[ $c == end || $c == start ]] || { echo "plan_eval.sh: --contacts takes end and start, not '$c'" >&2; exit 2; }
done
out=${out:-$build/planning}
mkdir -p "$out"
app=$build/cusp-plan
[[ -x $app ]] || { echo "plan_eval.sh: no $app (build first)" >&2; exit 1; }
python=${CUSP_PYTHON:-$root/.venv/bin/python}
export OPENBLAS_NUM_THREADS=1 CUSP_LIBRARY=${CUSP_LIBRARY:-$build/libcusp.so}
export PYTHONPATH="$root/python${PYTHONPATH:+:$PYTHONPATH}"
T=$(awk -v n="$N" 'BEGIN { printf "%.10g", 0.04 * n }')
angle=$(awk -v n="$N" 'BEGIN { printf "%.17g", 2 * atan2(1, 1) * n / 100 }')
tsv=$out/planning.tsv
printf 'axis\tstart\tcontact\tstatus\tipopt\tquat_err\tcomp_min\tcomp_prod\tstep_res\titer\tkin_s\tdyn_s\ttotal_s\tplanned_rad\treplayed_rad\treplay_err_rad\n' >"$tsv"
field() { # JSON-LINE KEY [SUBKEY]
  "$python" -c 'import json, sys
d = json.loads(sys.argv[1])
for k in sys.argv[2:]:
  d = d.get(k) if isinstance(d, dict) else None
print("NaN" if d is None else d)' "$@"
}
plots=() plots_start=() plots_warm=()
for ax in $axes; do
  for start in $starts; do
    for contact in $contacts; do
      base=$out/plan_${ax}_$start
      [[ $contact == start ]] && base=${base}_contact_start
      flag=(--warm); [[ $start == cold ]] && flag=(--cold)
      flag+=(--contact-time "$contact")
      echo "plan_eval.sh: cusp-plan --task rotate --axis $ax ${flag[*]} --N $N --T $T --angle $angle $*" >&2
      "$app" --task rotate --axis "$ax" "${flag[@]}" --N "$N" --T "$T" --angle "$angle" --json --quiet \
        --out "$base.csv" "$@" >"$base.json" || true
      line=$(tail -n 1 "$base.json")
      [[ $line == "{"* ]] || { echo "plan_eval.sh: cusp-plan gave no JSON for $ax $start $contact" >&2; exit 1; }
      rline='{}'
      # the replay builds the plan's friction pyramid from the plan's own columns rx, ry, rz
      if "$python" -m cusp.replay "$base.csv" --scene "$root/mjcf/ball_plan.xml" --timestep plan --json \
          --tsv "$base.tsv" >"$base.replay" 2>/dev/null; then
        rline=$(tail -n 1 "$base.replay")
        if [[ $start == cold && $contact == end ]]; then plots+=("$ax=$base.tsv"); fi
        if [[ $start == cold && $contact == start ]]; then plots_start+=("$ax (start contact)=$base.tsv"); fi
        if [[ $start == warm && $contact == end ]]; then plots_warm+=("$ax (warm)=$base.tsv"); fi
      fi
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$ax" "$start" "$contact" \
        "$(field "$line" status)" "$(field "$line" ipopt_status)" "$(field "$line" quaternion_error)" \
        "$(field "$line" complementarity)" "$(field "$line" complementarity_product)" "$(field "$line" step_residual)" \
        "$(field "$line" iterations)" "$(field "$line" solve_s kinematic)" "$(field "$line" solve_s dynamic)" \
        "$(field "$line" solve_s total)" "$(field "$rline" planned_angle)" "$(field "$rline" replayed_angle)" \
        "$(field "$rline" final_angle_error)" >>"$tsv"
    done
  done
done
if [[ ${#plots[@]} -gt 0 ]]; then "$root/bench/plot_plan.sh" "$out/plan_replay.png" "${plots[@]}" >&2; fi
if [[ ${#plots_start[@]} -gt 0 ]]; then "$root/bench/plot_plan.sh" "$out/plan_replay_start.png" "${plots_start[@]}" >&2; fi
if [[ ${#plots_warm[@]} -gt 0 ]]; then "$root/bench/plot_plan.sh" "$out/plan_replay_warm.png" "${plots_warm[@]}" >&2; fi
{
  sel=""
  [[ $axes == "x y z" ]] || sel+=" --axes \"$axes\""
  [[ $starts == "warm cold" ]] || sel+=" --starts \"$starts\""
  [[ $contacts == "end start" ]] || sel+=" --contacts \"$contacts\""
  echo "Planning: \`bench/plan_eval.sh --N $N$sel${*:+ -- $*}\` (T = $T s, angle $(awk -v a="$angle" 'BEGIN { printf "%.1f", a * 45 / atan2(1, 1) }') deg, mu = 0.6, d = 10, eps = 1e-7), $(date -u '+%Y-%m-%d %H:%M UTC'), load average $(cut -d' ' -f1 /proc/loadavg) on $(nproc) cores."
  echo
  echo "| axis | start | contact | status (IPOPT) | quaternion error | max \\|min(a,b)\\| | max a·b | sb_step residual | iterations | solve s kin + dyn = total | replay: planned / replayed deg, angle between them |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
  awk -F'\t' 'NR > 1 { pi = 4 * atan2(1, 1)
    rep = ($14 == "NaN") ? "–" : sprintf("%.2f / %.2f, %.2g", $14 * 180 / pi, $15 * 180 / pi, $16 * 180 / pi)
    printf "| %s | %s | %s | %s (%s) | %.2g | %.2g | %.2g | %.2g | %s | %.1f + %.1f = %.1f | %s |\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, rep }' "$tsv"
} >"$out/planning.md"
cat "$out/planning.md"

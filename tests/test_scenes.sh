#!/usr/bin/env bash
# The project's scenes (mjcf/*.xml) in cusp-sim: every scene runs 2 s and
# must complete with LCP convergence >= 99 % and soft penetration <= 2 mm;
# then per-scene checks that the scene shows what it claims (positions from
# the JSON summary at 2 s and at a few earlier times).
# No python: the JSON is read with sed (cusp-sim prints it on one line).
# Usage: tests/test_scenes.sh APP SRCDIR
set -u

APP=${1:?usage: test_scenes.sh APP SRCDIR}
SRC=${2:?usage: test_scenes.sh APP SRCDIR}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail=0

ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }

# ---------- JSON fields (of the last stdout line) ----------
# lcp_rate LINE / max_pen LINE: numbers, or "null"
lcp_rate() { sed -n 's/.*"lcp": {[^}]*"convergence_rate": \([^,}]*\).*/\1/p' <<<"$1"; }
lcp_solves() { sed -n 's/.*"lcp": {"solves": \([0-9]*\).*/\1/p' <<<"$1"; }
# the first "max_penetration_m" is the soft contacts' (the second is MuJoCo's own)
max_pen() { grep -o '"max_penetration_m": [^,}]*' <<<"$1" | head -n 1 | sed 's/.*: //'; }
max_active() { sed -n 's/.*"contacts": {"max_active": \([0-9]*\).*/\1/p' <<<"$1"; }
# body_pos LINE NAME -> "x y z"; body_quat LINE NAME -> "w x y z"; tip_pos LINE INSTANCE -> "x y z"
body_pos() { sed -n "s/.*\"$2\": {\"pos\": \[\([^]]*\)\].*/\1/p" <<<"$1" | tr -d ','; }
body_quat() { sed -n "s/.*\"$2\": {\"pos\": \[[^]]*\], \"quat\": \[\([^]]*\)\].*/\1/p" <<<"$1" | tr -d ','; }
tip_pos() { sed -n "s/.*\"$2\": {\"tip_pos\": \[\([^]]*\)\].*/\1/p" <<<"$1" | tr -d ','; }

# check DESCRIPTION AWK-CONDITION VAR=VALUE...: awk decides; every value must
# be a number (an empty or null field fails).
check() {
  local what=$1 cond=$2
  shift 2
  local args=() v
  for v in "$@"; do
    if ! num "${v#*=}"; then bad "$what: '${v%%=*}' is not a number: '${v#*=}'"; return; fi
    args+=(-v "$v")
  done
  if awk "${args[@]}" "BEGIN { exit !($cond) }" 2>/dev/null; then ok "$what ($*)"
  else bad "$what ($*)"; fi
}
num() { awk -v x="$1" 'BEGIN { exit !(x ~ /^-?[0-9.]+([eE][-+]?[0-9]+)?$/) }'; }
# component I (1-based) of a space-separated triple/quad
comp() { awk -v i="$2" '{ print $i }' <<<"$1"; }

# run SCENE SECONDS: JSON line into $J (empty on failure to run)
run() {
  J=""
  "$APP" "$1" --seconds "$2" --json >"$TMP/out" 2>"$TMP/err"
  local rc=$?
  J=$(tail -n 1 "$TMP/out")
  return $rc
}

# ---------- every scene: 2 s, completed, LCP >= 99 %, penetration <= 2 mm ----------
declare -A J2
scenes=("$SRC"/mjcf/*.xml)
[ -e "${scenes[0]}" ] || { echo "FAIL no scene in $SRC/mjcf"; exit 1; }
for f in "${scenes[@]}"; do
  name=$(basename "$f" .xml)
  run "$f" 2
  rc=$?
  J2[$name]=$J
  case "$J" in *'"completed": true'*) c=1 ;; *) c=0 ;; esac
  if [ $rc -eq 0 ] && [ $c -eq 1 ]; then ok "$name: 2 s completed"
  else bad "$name: exit $rc, completed=$c: $(tail -n 3 "$TMP/err" | tr '\n' ' ')"; continue; fi
  rate=$(lcp_rate "$J") solves=$(lcp_solves "$J") pen=$(max_pen "$J")
  if [ "$solves" = "0" ]; then ok "$name: no LCP solve (no soft contact)"
  else check "$name: LCP convergence rate >= 0.99" 'r >= 0.99' "r=$rate"; fi
  check "$name: max soft penetration <= 2 mm" 'p <= 0.002' "p=$pen"
done

# ---------- what each scene claims ----------
have() { [ -n "${J2[$1]:-}" ] && [ -f "$SRC/mjcf/$1.xml" ]; }

# Scenario A: face centre F = (0, 0, 0.5), normal n = (0, .7071, .7071),
# downhill t = (0, .7071, -.7071). The arm lands and sticks (the tip moves
# < 3 mm from 0.9 s to 1.1 s), then slides >= 8 cm down the face by 2 s,
# staying on it (tip centre 2..4.5 cm from the face: disk radius 3 cm).
if have scenario_a; then
  f=$SRC/mjcf/scenario_a.xml
  run "$f" 0.9; a=$(tip_pos "$J" arm)
  run "$f" 1.0; b=$(tip_pos "$J" arm)
  run "$f" 1.1; c=$(tip_pos "$J" arm)
  d=$(tip_pos "${J2[scenario_a]}" arm)
  check "scenario_a: sticking, tip still from 0.9 s to 1.1 s" \
    'sqrt((y1-y0)^2 + (z1-z0)^2) < 0.003' "y0=$(comp "$a" 2)" "z0=$(comp "$a" 3)" "y1=$(comp "$c" 2)" "z1=$(comp "$c" 3)"
  check "scenario_a: sliding, tip moves >= 8 cm down the face from 1 s to 2 s" \
    '0.70711 * ((y1 - y0) - (z1 - z0)) >= 0.08' "y0=$(comp "$b" 2)" "z0=$(comp "$b" 3)" "y1=$(comp "$d" 2)" "z1=$(comp "$d" 3)"
  check "scenario_a: tip on the face at 2 s" '(h = 0.70711 * (y + z - 0.5)) >= 0.02 && h <= 0.045' \
    "y=$(comp "$d" 2)" "z=$(comp "$d" 3)"
fi

# Scenario B: lower sphere centre (0.40, 0, 0.79), radius 0.06. Contact
# first with the upper sphere (contacts while the tip is >= 10 cm from the
# lower sphere's centre, at 0.5 s and 1 s), then the tip disk on the lower
# sphere at 2 s (tip centre within 8 cm of its centre: radius 6 cm + disk).
if have scenario_b; then
  f=$SRC/mjcf/scenario_b.xml
  lower='sqrt((x - 0.40)^2 + (z - 0.79)^2)'
  for t in 0.5 1.0; do
    run "$f" $t; p=$(tip_pos "$J" arm)
    check "scenario_b: at $t s in contact (upper sphere), tip away from the lower sphere" \
      "n > 0 && $lower >= 0.10" "n=$(max_active "$J")" "x=$(comp "$p" 1)" "z=$(comp "$p" 3)"
  done
  p=$(tip_pos "${J2[scenario_b]}" arm)
  check "scenario_b: at 2 s the tip disk is on the lower sphere" "$lower <= 0.08" \
    "x=$(comp "$p" 1)" "z=$(comp "$p" 3)"
fi

# Ball rotation: a feedback law on the pivot (a hinge about -x) turns the
# ball to 90 degrees by 3 s and holds it. The angle comes from MuJoCo's body
# quaternion (w, x, 0, 0) = (cos(a/2), -sin(a/2), 0, 0). The proportional
# law stops short of the target by the chambers' holding force over kp
# (about 2 degrees here): 3 degrees of tolerance. At 4 s the ball is still
# (< 0.1 degree in the last 0.1 s: < 0.018 rad/s) and the run has the
# scene-wide contact quality. The loop is closed: another target through
# --set, same schedules, ends at that angle instead.
if have ball_rotation; then
  J=${J2[ball_rotation]}
  q=$(body_quat "$J" ball) p=$(body_pos "$J" ball)
  check "ball_rotation: ball still at its pivot" 'sqrt(x^2 + (y-0.1)^2 + (z-0.7)^2) < 0.001' \
    "x=$(comp "$p" 1)" "y=$(comp "$p" 2)" "z=$(comp "$p" 3)"
  # ball_angle JSON -> degrees about -x, in (-180, 180]
  ball_angle() {
    local q
    q=$(body_quat "$1" ball)
    awk -v w="$(comp "$q" 1)" -v x="$(comp "$q" 2)" 'BEGIN {
      if (w == "" || x == "") exit; a = -2 * atan2(x, w) * 45 / atan2(1, 1)
      if (a > 180) a -= 360; if (a <= -180) a += 360; printf "%.6f", a }'
  }
  f=$SRC/mjcf/ball_rotation.xml
  run "$f" 3.9; a39=$(ball_angle "$J")
  run "$f" 4; a4=$(ball_angle "$J")
  check "ball_rotation: at 4 s the ball is at the target 90 degrees (+-3)" 'a >= 87 && a <= 93' "a=$a4"
  check "ball_rotation: held still, < 0.1 degree from 3.9 s to 4 s" 'd < 0.1 && d > -0.1' \
    "d=$(awk -v a="$a4" -v b="$a39" 'BEGIN { print a - b }')"
  check "ball_rotation: 4 s at LCP convergence >= 0.99, penetration <= 2 mm" 'r >= 0.99 && p <= 0.002' \
    "r=$(lcp_rate "$J")" "p=$(max_pen "$J")"
  fb="pivot 192 4 0.7854 0.5 3" # 45 degrees, the scene's gains and ramp
  J=""
  "$APP" "$f" --seconds 4 --json --set "arm.feedback=s3c1 $fb; s2c1 $fb" \
    >"$TMP/out" 2>"$TMP/err" && J=$(tail -n 1 "$TMP/out")
  check "ball_rotation: closed loop, target 45 degrees via --set ends at 45 (+-3)" 'a >= 42 && a <= 48' \
    "a=$(ball_angle "$J")"
fi

# Push box: the box (from x = 0.24) is pushed >= 8 cm along +x, and no more
# than the arm can push it (3 sections x 7.5 cm of stroke, less the 3.5 cm gap
# to the tip: 19 cm), drifting < 4 cm sideways (the push is off the box's
# centre line: 18-25 mm at 2 s across OpenBLAS kernels), turned < 10 degrees about z
# (quaternion w >= cos 5 degrees), on the table.
if have demo_push_box; then
  p=$(body_pos "${J2[demo_push_box]}" box) q=$(body_quat "${J2[demo_push_box]}" box)
  check "demo_push_box: box pushed 8..19 cm along +x, < 4 cm sideways, upright, still on the table" \
    'x - 0.24 >= 0.08 && x - 0.24 <= 0.19 && y < 0.04 && y > -0.04 && (w >= 0.996 || w <= -0.996) && z > 0.445 && z < 0.455' \
    "x=$(comp "$p" 1)" "y=$(comp "$p" 2)" "z=$(comp "$p" 3)" "w=$(comp "$q" 1)"
fi

# Pin ball: the ball (from (0.04, 0, 0.04)) is held by the wall and rolled
# >= 4 cm along +y, turning (w <= 0.9), staying on the floor by the wall.
if have demo_pin_ball; then
  J=${J2[demo_pin_ball]}
  p=$(body_pos "$J" ball) q=$(body_quat "$J" ball)
  check "demo_pin_ball: ball rolled >= 4 cm along the wall" \
    'y >= 0.04 && x > 0 && x <= 0.041 && z < 0.042 && w <= 0.9 && w >= -0.9' \
    "x=$(comp "$p" 1)" "y=$(comp "$p" 2)" "z=$(comp "$p" 3)" "w=$(comp "$q" 1)"
fi

# Pass ball: struck by "left", the ball (from x = -0.07) crosses >= 17 cm and
# is stopped by "right" (whose end disk hangs at x = 0.25: ball centre < 0.22).
if have demo_pass_ball; then
  J=${J2[demo_pass_ball]}
  p=$(body_pos "$J" ball)
  check "demo_pass_ball: ball passed across and stopped by the right arm" \
    'x >= 0.10 && x < 0.22 && v < 0.05 && v > -0.05' "x=$(comp "$p" 1)" \
    "v=$(sed -n 's/.*"ball": {[^}]*"linvel": \[\([^,]*\),.*/\1/p' <<<"$J")"
fi

# Rod on pegs: the rod fell (tip from z = 0.8) and rests on the pegs
# (>= 2 contacts, tip held above 0.5 m, far out along +x).
if have demo_rod_pegs; then
  J=${J2[demo_rod_pegs]}
  p=$(tip_pos "$J" rod)
  check "demo_rod_pegs: rod draped on the pegs" 'n >= 2 && x > 0.45 && z > 0.5 && z < 0.7' \
    "n=$(max_active "$J")" "x=$(comp "$p" 1)" "z=$(comp "$p" 3)"
fi

# Clamped rod: the far end stays clamped where it started, (0.3, 0, 0.8), and
# the ball rests on the sagging rod between the posts (not on the floor).
if have demo_clamped_rod; then
  J=${J2[demo_clamped_rod]}
  p=$(tip_pos "$J" rod) b=$(body_pos "$J" ball)
  check "demo_clamped_rod: end held at its post, ball carried by the rod" \
    'tx > 0.29999 && tx < 0.30001 && tz > 0.79999 && tz < 0.80001 && bx > -0.25 && bx < 0.25 && bz > 0.78 && bz < 0.86' \
    "tx=$(comp "$p" 1)" "tz=$(comp "$p" 3)" "bx=$(comp "$b" 1)" "bz=$(comp "$b" 3)"
fi

# The bent cantilever under its 1 N tip load rests on the block (top at
# z = 0.2, x 0.27 .. 0.41): its tip disk (radius 8 mm) on the top; without
# the load's J^T f the rod would spring up, without contact fall to z = 0.11.
if have demo_rod_cantilever; then
  J=${J2[demo_rod_cantilever]}
  p=$(tip_pos "$J" rod)
  check "demo_rod_cantilever: tip resting on the block" 'n >= 1 && x > 0.27 && x < 0.41 && z > 0.2 && z < 0.215' \
    "n=$(max_active "$J")" "x=$(comp "$p" 1)" "z=$(comp "$p" 3)"
fi

# Moving base: the carriage reaches x = 0.25 and the arm follows it. While
# the carriage accelerates (t = 0.1 s) a hanging arm must lag behind it; a
# tip exactly under the carriage means the runtime ignores the base's motion
# (a known limitation: reported, not counted as a failure here).
if have demo_moving_base; then
  J=${J2[demo_moving_base]}
  p=$(body_pos "$J" carriage) tp=$(tip_pos "$J" arm)
  # the hanging arm is a lightly damped pendulum: still swinging at 2 s
  check "demo_moving_base: carriage at x = 0.25, arm swinging below it at 2 s" \
    'cx > 0.24 && cx < 0.26 && tx - cx < 0.05 && cx - tx < 0.05' "cx=$(comp "$p" 1)" "tx=$(comp "$tp" 1)"
  run "$SRC/mjcf/demo_moving_base.xml" 0.1
  p=$(body_pos "$J" carriage) tp=$(tip_pos "$J" arm)
  check "demo_moving_base: tip lags the accelerating carriage at 0.1 s" 'cx - tx > 0.005' \
    "cx=$(comp "$p" 1)" "tx=$(comp "$tp" 1)"
fi

# LCP vs penalty: both arms land, stick and slide down the face (>= 8 cm
# from 1 s to 2 s); both stay on it.
if have compare_penalty; then
  run "$SRC/mjcf/compare_penalty.xml" 1.0
  for inst in lcp penalty; do
    b=$(tip_pos "$J" $inst) d=$(tip_pos "${J2[compare_penalty]}" $inst)
    check "compare_penalty: $inst arm slides >= 8 cm down the face and stays on it" \
      '0.70711 * ((y1 - y0) - (z1 - z0)) >= 0.08 && (h = 0.70711 * (y1 + z1 - 0.5)) >= 0.015 && h <= 0.045' \
      "y0=$(comp "$b" 2)" "z0=$(comp "$b" 3)" "y1=$(comp "$d" 2)" "z1=$(comp "$d" 3)"
  done
fi

# Default scene: the block (from y = 0.156) stays put until the arm reaches
# it, then is shoved down the face.
if have default; then
  run "$SRC/mjcf/default.xml" 1.5
  a=$(body_pos "$J" box) b=$(body_pos "${J2[default]}" box)
  check "default: block nearly still until 1.5 s, then pushed down the face" \
    'y0 < 0.18 && y1 - y0 >= 0.025' "y0=$(comp "$a" 2)" "y1=$(comp "$b" 2)"
fi

[ $fail -eq 0 ] && echo "all scene checks passed"
exit $fail

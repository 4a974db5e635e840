#!/usr/bin/env bash
# cusp-view end to end under Xvfb: every scene of mjcf/ and models/ (when
# present) plus tests/data/scenes/arm.xml renders a PNG that is not blank and,
# for soft scenes, shows the disk colour where cusp-view says the arm is; a
# plain MuJoCo sample scene renders; the start camera (a scene's
# "cusp_default" camera, else the automatic view) shows each mjcf/ arm
# unobstructed; frames, video and the interactive viewer (scripted keys,
# scripted mouse drags of a soft disk and of a rigid body) work; bad input
# exits 2 with a message.
# Usage: tests/test_cusp_view.sh VIEW PNG_CHECK SRCDIR
set -u

VIEW=${1:?usage: test_cusp_view.sh VIEW PNG_CHECK SRCDIR}
CHECK=${2:?usage: test_cusp_view.sh VIEW PNG_CHECK SRCDIR}
SRC=${3:?usage: test_cusp_view.sh VIEW PNG_CHECK SRCDIR}
# absolute: the interactive run changes directory (screenshots land in cwd)
VIEW=$(cd "$(dirname "$VIEW")" && pwd)/$(basename "$VIEW")
CHECK=$(cd "$(dirname "$CHECK")" && pwd)/$(basename "$CHECK")
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }

if ! command -v xvfb-run >/dev/null; then
  echo "FAIL xvfb-run not found: the viewer tests need Xvfb (apt-get install xvfb)"
  exit 1
fi
# one X server per call; -a picks a free display so parallel tests coexist
XVFB=(xvfb-run -a -s "-screen 0 1280x1024x24")

# the disk colour, from its single definition in the plugin
rgba=$(sed -n 's/^#define CUSP_DISK_RGBA "\(.*\)".*/\1/p' "$SRC/plugin/loader.h")
DISK=$(echo "$rgba" | awk 'NF >= 3 { printf "%s,%s,%s", $1, $2, $3 }')
if [ -z "$DISK" ]; then
  echo "FAIL cannot read CUSP_DISK_RGBA from $SRC/plugin/loader.h"
  exit 1
fi

have_python=0
command -v python3 >/dev/null && have_python=1

# run CODE ARGS...: cusp-view under Xvfb; stdout in $TMP/out, stderr in $TMP/err
run() {
  local want=$1
  shift
  "${XVFB[@]}" "$VIEW" "$@" >"$TMP/out" 2>"$TMP/err"
  local got=$?
  if [ "$got" -eq "$want" ]; then ok "exit $got: cusp-view $*"; return 0; fi
  bad "exit $got, expected $want: cusp-view $*"
  sed 's/^/     | /' "$TMP/err" | tail -n 20
  return 1
}

# expect_error ARGS... PATTERN: exit 2 and stderr naming what was wrong (no X needed)
expect_error() {
  local pattern=${!#}
  local args=("${@:1:$#-1}")
  "$VIEW" "${args[@]}" >"$TMP/out" 2>"$TMP/err"
  local got=$?
  if [ "$got" -ne 2 ]; then bad "exit $got, expected 2: cusp-view ${args[*]}"; sed 's/^/     | /' "$TMP/err"
  elif ! grep -q -- "$pattern" "$TMP/err"; then bad "no message matching '$pattern': cusp-view ${args[*]}: $(head -c 300 "$TMP/err")"
  else ok "exit 2, message names '$pattern': cusp-view ${args[*]}"; fi
}

# json FIELD_EXPR: evaluates a Python expression on the last stdout line (d)
json() {
  tail -n 1 "$TMP/out" | python3 -c "import json, sys; d = json.loads(sys.stdin.read()); print($1)"
}

# jnum KEY: the first number after "KEY": on the last stdout line (no python needed)
jnum() {
  tail -n 1 "$TMP/out" | sed -n "s/.*\"$1\": \(-\{0,1\}[0-9.eE+-]*\).*/\1/p"
}

# near A B TOL: |A - B| <= TOL
near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d <= t) }'; }

json_contract() {
  if [ $have_python -eq 1 ]; then
    tail -n 1 "$TMP/out" | python3 -c '
import json, sys
d = json.loads(sys.stdin.read())
need = ["scene", "sim_time", "steps", "wall_s", "frames", "outputs", "completed", "nan_events"]
missing = [k for k in need if k not in d]
sys.exit("missing keys: " + " ".join(missing) if missing else 0)'
  else
    local line key
    line=$(tail -n 1 "$TMP/out")
    for key in scene sim_time steps wall_s frames outputs completed nan_events; do
      case "$line" in *"\"$key\":"*) ;; *) echo "missing key $key"; return 1 ;; esac
    done
  fi
}

# --- bad input: exit 2 with a message ---------------------------------------
cat >"$TMP/box.xml" <<'EOF'
<mujoco model="box">
  <worldbody>
    <light pos="0 0 2"/>
    <geom name="floor" type="plane" size="1 1 0.1" rgba=".3 .4 .5 1"/>
    <camera name="side" pos="0 -1 0.3" xyaxes="1 0 0 0 0.3 1"/>
    <body name="box" pos="0 0 0.2"><freejoint/><geom type="box" size="0.05 0.05 0.05" rgba=".8 .2 .2 1"/></body>
  </worldbody>
</mujoco>
EOF
printf '<mujoco><worldbody><geom type="sphere"></worldbody>\n' >"$TMP/broken.xml"
expect_error "$TMP/missing.xml" --headless --png "$TMP/x.png" "missing.xml"
expect_error "$TMP/broken.xml" --headless --png "$TMP/x.png" "broken.xml"
expect_error --headless --png "$TMP/x.png" "needs a scene"
expect_error "$TMP/box.xml" --headless "needs --png"
expect_error "$TMP/box.xml" --headless --png "$TMP/x.png" --width abc "width"
expect_error "$TMP/box.xml" --headless --png "$TMP/x.png" --seconds -1 "seconds"
expect_error "$TMP/box.xml" --headless --png "$TMP/x.png" --lookat 1,2 "lookat"
expect_error "$TMP/box.xml" --headless --png "$TMP/no/such/dir/x.png" "no/such/dir/x.png"
expect_error "$TMP/box.xml" --headless --png "$TMP/x.png" --camera nosuch "nosuch"
expect_error "$TMP/box.xml" --headless --png "$TMP/x.png" --frobnicate "frobnicate"
expect_error "$TMP/box.xml" --png "$TMP/x.png" "need --headless"
expect_error "$TMP/box.xml" --drag 1,2 "drag"
expect_error "$TMP/box.xml" --headless --png "$TMP/x.png" --drag 1,2,3,4 "not --headless"
expect_error "$SRC/tests/data/scenes/arm.xml" --headless --png "$TMP/x.png" --set arm.no_such_key=1 "no_such_key"

# no display: a message and exit 1, not a crash
env -u DISPLAY -u WAYLAND_DISPLAY "$VIEW" "$TMP/box.xml" --quit-after 1 >"$TMP/out" 2>"$TMP/err"
got=$?
if [ $got -eq 1 ] && grep -q "GLFW\|display" "$TMP/err"; then ok "no display: exit 1 with a message"
else bad "no display: exit $got: $(head -c 300 "$TMP/err")"; fi

# --- every scene renders ------------------------------------------------------
scenes=()
for f in "$SRC"/mjcf/*.xml "$SRC"/models/*.xml "$SRC"/tests/data/scenes/arm.xml; do
  [ -f "$f" ] && scenes+=("$f")
done
for f in "${scenes[@]}"; do
  name=$(basename "$f" .xml)
  png="$TMP/$name.png"
  "${XVFB[@]}" "$VIEW" "$f" --headless --seconds 1 --png "$png" --width 640 --height 480 --no-overlay --json \
    >"$TMP/out" 2>"$TMP/err"
  got=$?
  case "$f" in
    "$SRC"/models/*)
      # models/ holds fragments included by scenes: a fragment that is not a
      # scene on its own is reported, not failed
      if [ $got -eq 2 ]; then echo "skip $name: not a standalone scene: $(head -n 1 "$TMP/err")"; continue; fi ;;
  esac
  if [ $got -ne 0 ]; then bad "$f: exit $got"; sed 's/^/     | /' "$TMP/err" | tail -n 20; continue; fi
  if msg=$(json_contract 2>&1); then ok "$name: JSON summary"; else bad "$name: JSON: $msg"; fi
  if ! out=$("$CHECK" "$png" --min-stddev 5); then bad "$name: $out"; continue; fi
  ok "$name: image not blank (${out#*mean })"
  # soft scene (instances may come from an <include>d file): disk-coloured
  # pixels, inside each arm's projected box
  # mjcf/ scenes: the start camera must show each arm, not a corner of it.
  # 600 disk pixels at 640x480: default.xml's arm behind its incline, as
  # MuJoCo's default camera showed it, gave 349; unobstructed arms give 2000+
  need=20
  case "$f" in "$SRC"/mjcf/*) need=600 ;; esac
  if [ $have_python -eq 0 ]; then
    grep -q 'cusp.softbody' "$f" || continue
    out=$("$CHECK" "$png" --color "$DISK" --min-count $((need > 50 ? need : 50))) && ok "$name: disk colour present" ||
      bad "$name: $out"
    continue
  fi
  case "$f" in
    "$SRC"/mjcf/*)
      src=$(json 'd["camera"]["source"]')
      [ "$src" = cusp_default ] || [ "$src" = auto ] && ok "$name: start camera '$src'" ||
        bad "$name: start camera '$src', expected cusp_default or auto" ;;
  esac
  [ "$(json 'len(d["soft"])')" -gt 0 ] || continue
  boxes=$(json '"\n".join(k + " " + ",".join(str(round(x)) for x in s["bbox_pixels"]) for k, s in d["soft"].items() if s["bbox_pixels"])')
  if [ -z "$boxes" ]; then bad "$name: no soft instance in view of the default camera"; continue; fi
  out=$("$CHECK" "$png" --color "$DISK" --min-count 50) && ok "$name: ${out##* colour_pixels } disk-coloured pixels" ||
    bad "$name: $out"
  total=$(echo "$out" | sed -n 's/.*colour_pixels \([0-9]*\).*/\1/p')
  while read -r inst box; do
    [ -n "$inst" ] || continue
    # 3 px of slack around the projected box (antialiasing)
    grown=$(echo "$box" | awk -F, '{ printf "%d,%d,%d,%d", $1 - 3, $2 - 3, $3 + 3, $4 + 3 }')
    if out=$("$CHECK" "$png" --color "$DISK" --region "$grown" --min-region-count $need); then
      ok "$name: instance $inst: ${out##* in_region } disk pixels in its box $box"
    else
      bad "$name: instance $inst: $out"
    fi
    # arm.xml has nothing else of that colour: the projection must hold it all
    if [ "$name" = arm ]; then
      inside=$(echo "$out" | sed -n 's/.*in_region \([0-9]*\).*/\1/p')
      if [ "$((inside * 100))" -ge "$((total * 95))" ]; then ok "arm: $inside of $total disk pixels inside the projected box"
      else bad "arm: only $inside of $total disk pixels inside the projected box $box"; fi
    fi
  done <<<"$boxes"
done

# --- a plain MuJoCo scene from the samples package ----------------------------
crank=/usr/share/mujoco/model/slider_crank/slider_crank.xml
if [ ! -f "$crank" ]; then
  bad "$crank missing: install libmujoco-samples"
elif run 0 "$crank" --headless --seconds 1 --png "$TMP/crank.png" --width 640 --height 480 --json; then
  out=$("$CHECK" "$TMP/crank.png" --min-stddev 5) && ok "slider_crank: not blank" || bad "slider_crank: $out"
fi

# --- camera, frames, video, overlay and plots ---------------------------------
if run 0 "$TMP/box.xml" --headless --seconds 0.2 --png "$TMP/cam.png" --camera side --width 320 --height 240 --json; then
  [ $have_python -eq 0 ] || [ "$(json 'd["camera"]["type"]')" = fixed ] && ok "--camera side used" || bad "--camera: $(tail -n 1 "$TMP/out")"
  out=$("$CHECK" "$TMP/cam.png" --min-stddev 5) && ok "camera view not blank" || bad "camera: $out"
fi
if run 0 "$TMP/box.xml" --headless --seconds 0.2 --png "$TMP/ov.png" --azimuth 30 --elevation -20 --distance 1.5 \
  --lookat 0,0,0.1 --width 640 --height 480 --plots; then
  out=$("$CHECK" "$TMP/ov.png" --min-stddev 5) && ok "overlay and plots: not blank" || bad "overlay: $out"
fi
# a "cusp_default" camera becomes the start camera, as a free camera looking
# the same way: its xyaxes (x = (1,0,0), y = (0,0.342,0.940)) look along
# -(x cross y) = (0, 0.940, -0.342): azimuth 90, elevation -20 degrees
sed 's|<camera name="side"|<camera name="cusp_default" pos="0 -1 0.5" xyaxes="1 0 0 0 0.342 0.940"/><camera name="side"|' \
  "$TMP/box.xml" >"$TMP/box_default.xml"
if run 0 "$TMP/box_default.xml" --headless --seconds 0.1 --png "$TMP/cd.png" --width 320 --height 240 --json; then
  tail -n 1 "$TMP/out" | grep -q '"type": "free", "source": "cusp_default"' && ok "cusp_default camera used as a free camera" ||
    bad "cusp_default: $(tail -n 1 "$TMP/out" | grep -o '"camera": {[^}]*}')"
  near "$(jnum azimuth)" 90 0.01 && near "$(jnum elevation)" -20 0.01 && ok "cusp_default: azimuth 90, elevation -20" ||
    bad "cusp_default: azimuth $(jnum azimuth), elevation $(jnum elevation)"
fi
# --camera still names a fixed camera when cusp_default exists
if run 0 "$TMP/box_default.xml" --headless --seconds 0.1 --png "$TMP/cs.png" --camera side --width 320 --height 240 --json; then
  tail -n 1 "$TMP/out" | grep -q '"type": "fixed", "source": "option"' && ok "--camera side over cusp_default" ||
    bad "--camera side: $(tail -n 1 "$TMP/out" | grep -o '"camera": {[^}]*}')"
fi
# the automatic view: an arm with a wall on the side MuJoCo's default camera
# looks from (-y); the automatic camera finds a side where the arm shows,
# and forcing the view from -y (azimuth 90) shows that the check can tell
cat >"$TMP/walled.xml" <<'EOF'
<mujoco model="walled">
  <extension><plugin plugin="cusp.softbody"><instance name="arm"/></plugin></extension>
  <worldbody>
    <light pos="0 0 3"/>
    <geom name="floor" type="plane" size="2 2 0.1" rgba=".5 .5 .5 1"/>
    <geom name="wall" type="box" size="0.6 0.02 0.9" pos="0 -0.2 0.9" rgba=".3 .3 .6 1"/>
    <body name="mount" pos="0 0 1" euler="180 0 0"><plugin instance="arm"/></body>
  </worldbody>
</mujoco>
EOF
for view in auto behind; do
  extra=()
  [ $view = behind ] && extra=(--azimuth 90 --elevation -20)
  if run 0 "$TMP/walled.xml" --headless --seconds 0.1 --png "$TMP/walled_$view.png" --width 640 --height 480 \
    --no-overlay --json "${extra[@]}"; then
    n=$("$CHECK" "$TMP/walled_$view.png" --color "$DISK" | sed -n 's/.*colour_pixels \([0-9]*\).*/\1/p')
    if [ $view = auto ]; then
      tail -n 1 "$TMP/out" | grep -q '"source": "auto"' && [ "${n:-0}" -ge 600 ] &&
        ok "walled: the automatic camera shows the arm ($n disk pixels, azimuth $(jnum azimuth))" ||
        bad "walled: automatic camera: $n disk pixels, $(tail -n 1 "$TMP/out" | grep -o '"camera": {[^}]*}')"
    else
      [ "${n:-0}" -lt 100 ] && ok "walled: from behind the wall the arm is hidden ($n disk pixels)" ||
        bad "walled: from behind the wall $n disk pixels (the wall should hide the arm)"
    fi
  fi
done
arm="$SRC/tests/data/scenes/arm.xml"
if run 0 "$arm" --headless --seconds 0.5 --frames "$TMP/frames" --fps 10 --width 320 --height 240 --json; then
  n=$(ls "$TMP/frames" | grep -c '^frame_[0-9]*\.png$')
  if [ "$n" -ge 5 ] && [ "$n" -le 7 ]; then ok "--frames: $n frames for 0.5 s at 10 fps"; else bad "--frames: $n frames"; fi
  last=$(ls "$TMP/frames" | sort | tail -n 1)
  out=$("$CHECK" "$TMP/frames/$last" --min-stddev 5 --color "$DISK" --min-count 20) && ok "last frame shows the arm" ||
    bad "last frame: $out"
fi
if command -v ffmpeg >/dev/null; then
  if run 0 "$arm" --headless --seconds 0.5 --video "$TMP/arm.mp4" --fps 20 --width 321 --height 241 --json; then
    [ -s "$TMP/arm.mp4" ] && ok "--video wrote $(wc -c <"$TMP/arm.mp4") bytes (odd size padded)" || bad "--video: no file"
  fi
else
  echo "note ffmpeg not on PATH: only the PNG fallback of --video is tested"
fi
# without ffmpeg on PATH --video falls back to numbered PNG frames
if "${XVFB[@]}" env PATH=/nonexistent "$VIEW" "$arm" --headless --seconds 0.2 --video "$TMP/fb.mp4" --fps 10 \
   --width 160 --height 120 >"$TMP/out" 2>"$TMP/err"; then
  n=$(ls "$TMP/fb_frames" 2>/dev/null | grep -c '\.png$')
  [ "$n" -ge 2 ] && grep -q "ffmpeg" "$TMP/err" && ok "--video without ffmpeg: $n PNG frames in fb_frames/" ||
    bad "--video fallback: $n frames; $(cat "$TMP/err")"
else
  bad "--video fallback: exit $?: $(cat "$TMP/err")"
fi

# --- an unstable scene: exit 1, completed false --------------------------------
if run 1 "$SRC/tests/data/scenes/unstable_rigid.xml" --headless --seconds 10 --png "$TMP/u.png" --json; then
  tail -n 1 "$TMP/out" | grep -q '"completed": false' && ok "unstable: completed false" ||
    bad "unstable: $(tail -n 1 "$TMP/out")"
fi

# --- the interactive viewer, driven by scripted keys ---------------------------
# C contact model, S solver, 1 2 3 0 conditioning, P screenshot, V video on/off,
# G I F T ? toggles, - = slow motion, space pause, > step, < reset
soft=$arm
for f in "$SRC"/tests/data/scenes/coupling_squeeze.xml; do [ -f "$f" ] && soft=$f; done
mkdir -p "$TMP/shots"
( cd "$TMP/shots" && "${XVFB[@]}" "$VIEW" "$soft" --quit-after 1 --keys "CS123P0VGIFT?-=GIFT?V >><" >"$TMP/out" 2>"$TMP/err" )
got=$?
if [ $got -eq 0 ]; then ok "interactive run with scripted keys"; else bad "interactive: exit $got"; sed 's/^/     | /' "$TMP/err"; fi
for want in "contact = " "solver = " "conditioning = " "screenshot saved" "reset"; do
  grep -q "$want" "$TMP/err" && ok "interactive: '$want' reported" || bad "interactive: no '$want' in $(cat "$TMP/err")"
done
shot=$(ls "$TMP/shots"/*.png 2>/dev/null | head -n 1)
if [ -n "$shot" ]; then
  out=$("$CHECK" "$shot" --min-stddev 5 --color "$DISK" --min-count 50) && ok "screenshot shows the arm" || bad "screenshot: $out"
else
  bad "no screenshot written"
fi

# --- scripted mouse drags (--drag: double-click, then Ctrl + right drag) --------
# The arm of arm.xml seen from the front (azimuth 90: screen right = +x):
# the headless run says where the tip is in a 1280x800 image, the size of
# the viewer's window; dragging it 200 px right must pull the tip along +x.
cam=(--azimuth 90 --elevation 0 --distance 1.2 --lookat 0,0,0.5)
if run 0 "$arm" --headless --seconds 0.002 --png "$TMP/drag.png" --width 1280 --height 800 --json "${cam[@]}"; then
  px=$(tail -n 1 "$TMP/out" | sed -n 's/.*"tip_pixel": \[\([-0-9.e+]*\), \([-0-9.e+]*\)\].*/\1 \2/p')
  set -- $px
  if [ $# -ne 2 ]; then
    bad "drag: no tip pixel in $(tail -n 1 "$TMP/out")"
  else
    tx=$(printf '%.0f' "$1")
    ty=$(printf '%.0f' "$2")
    "${XVFB[@]}" "$VIEW" "$arm" "${cam[@]}" --drag "$tx,$ty,200,0" --quit-after 2 >"$TMP/out" 2>"$TMP/err"
    got=$?
    moved=$(sed -n 's/.*released "arm".*tip moved (\([-0-9.]*\), \([-0-9.]*\), \([-0-9.]*\)) mm.*/\1 \2 \3/p' "$TMP/err")
    if [ $got -eq 0 ] && grep -q 'selected soft arm "arm"' "$TMP/err" && [ -n "$moved" ] &&
      echo "$moved" | awk '{ ay = $2 < 0 ? -$2 : $2; exit !($1 > 20 && $1 > 5 * ay) }'; then
      ok "drag: pulling the tip disk 200 px right moved the tip by ($moved) mm"
    else
      bad "drag of the soft arm at ($tx, $ty): exit $got, tip moved '$moved'"
      sed 's/^/     | /' "$TMP/err" | tail -n 10
    fi
  fi
fi
# the rigid cart at (0.3, 0, 0.2), projected by hand: 400 / (1.2 tan 22.5 deg)
# = 804.7 px/m around the look-at point (0, 0, 0.5) at the image centre
"${XVFB[@]}" "$VIEW" "$arm" "${cam[@]}" --drag 881,641,100,0 --quit-after 1 >"$TMP/out" 2>"$TMP/err"
got=$?
moved=$(sed -n 's/.*released body cart: moved (\([-0-9.]*\), \([-0-9.]*\), \([-0-9.]*\)) mm.*/\1/p' "$TMP/err")
if [ $got -eq 0 ] && [ -n "$moved" ] && awk -v x="$moved" 'BEGIN { exit !(x > 20) }'; then
  ok "drag: the rigid cart moved $moved mm along +x"
else
  bad "drag of the cart: exit $got, moved '$moved'"
  sed 's/^/     | /' "$TMP/err" | tail -n 10
fi

[ $fail -eq 0 ] && echo "all cusp-view checks passed"
exit $fail

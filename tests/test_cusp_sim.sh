#!/usr/bin/env bash
# cusp-sim end to end: exit codes for bad input, a rigid MuJoCo scene (a box
# dropped on a plane), and a soft scene from tests/data/scenes when present.
# Usage: tests/test_cusp_sim.sh APP SRCDIR
set -u

APP=${1:?usage: test_cusp_sim.sh APP SRCDIR}
SRC=${2:?usage: test_cusp_sim.sh APP SRCDIR}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail=0

ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }

# expect_exit CODE ARGS...: runs the app, checks its exit code; stdout is
# kept in $TMP/out, stderr in $TMP/err.
expect_exit() {
  local want=$1
  shift
  "$APP" "$@" >"$TMP/out" 2>"$TMP/err"
  local got=$?
  if [ "$got" -eq "$want" ]; then ok "exit $got: cusp-sim $*"
  else bad "exit $got, expected $want: cusp-sim $*"; sed 's/^/     | /' "$TMP/err"; fi
}

# Python checks the JSON when it is there; otherwise grep for the keys.
have_python=0
command -v python3 >/dev/null && have_python=1

# json_last_line: the last stdout line is one JSON object with the contract's keys.
json_last_line() {
  if [ $have_python -eq 1 ]; then
    tail -n 1 "$TMP/out" | python3 -c '
import json, sys
d = json.loads(sys.stdin.read())
need = ["scene", "sim_time", "steps", "wall_s", "realtime_factor", "completed", "nan_events",
        "contacts", "lcp", "max_penetration_m", "bodies", "soft", "step_us"]
missing = [k for k in need if k not in d]
missing += ["contacts." + k for k in ["max_active", "mean_active", "max_kept"] if k not in d["contacts"]]
missing += ["lcp." + k for k in ["solves", "converged", "convergence_rate", "mean_iterations",
                                 "fallbacks"] if k not in d["lcp"]]
missing += ["step_us." + k for k in ["samples", "mj_step", "cusp", "dynamics", "collision", "assembly",
                                     "conditioning", "solve"] if k not in d["step_us"]]
if not missing and d["step_us"]["samples"] != d["steps"]:
    sys.exit("step_us.samples %s != steps %s" % (d["step_us"]["samples"], d["steps"]))
sys.exit("missing keys: " + " ".join(missing) if missing else 0)'
  else
    local line key
    line=$(tail -n 1 "$TMP/out")
    for key in scene sim_time steps wall_s realtime_factor completed nan_events contacts max_active \
               mean_active max_kept lcp solves converged convergence_rate mean_iterations fallbacks \
               max_penetration_m bodies soft step_us samples mj_step dynamics collision assembly \
               conditioning solve; do
      case "$line" in *"\"$key\":"*) ;; *) echo "missing key $key"; return 1 ;; esac
    done
    case "$line" in "{"*"}") ;; *) echo "not an object"; return 1 ;; esac
  fi
}

# --- bad input: exit 2 -----------------------------------------------------
cat >"$TMP/box.xml" <<'EOF'
<mujoco model="box on a plane">
  <option timestep="0.002"/>
  <worldbody>
    <geom name="floor" type="plane" size="1 1 0.1"/>
    <body name="box" pos="0 0 0.1">
      <freejoint/>
      <geom type="box" size="0.05 0.05 0.05" mass="1"/>
    </body>
  </worldbody>
</mujoco>
EOF
expect_exit 2
expect_exit 2 "$TMP/box.xml" --frobnicate
expect_exit 2 "$TMP/missing.xml"
expect_exit 2 "$TMP/box.xml" --seconds abc
expect_exit 2 "$TMP/box.xml" --seconds 1x
expect_exit 2 "$TMP/box.xml" --seconds 0
expect_exit 2 "$TMP/box.xml" --seconds
expect_exit 2 "$TMP/box.xml" --timestep -1
expect_exit 2 "$TMP/box.xml" --timestep nan
expect_exit 2 "$TMP/box.xml" --set novalue
expect_exit 2 "$TMP/box.xml" --set nokey=1
expect_exit 2 "$TMP/box.xml" --set arm.friction
expect_exit 2 "$TMP/box.xml" --set .friction=1
expect_exit 2 "$TMP/box.xml" --set arm.=1
expect_exit 2 "$TMP/box.xml" --set noinstance.friction=0.3   # the scene has no such instance
expect_exit 2 "$TMP/box.xml" --log "$TMP/no/such/dir/log.csv"

# --help: the usage on stdout, nothing on stderr, exit 0
expect_exit 0 --help
grep -q '^usage: cusp-sim SCENE.xml' "$TMP/out" && [ ! -s "$TMP/err" ] && ok "--help: usage on stdout" ||
  bad "--help: stdout '$(head -n 1 "$TMP/out")', stderr '$(head -n 1 "$TMP/err")'"

# --- rigid scene: the box falls 5 cm and comes to rest on the plane ----------
expect_exit 0 "$TMP/box.xml" --seconds 0.5 --json --log "$TMP/box.csv"
if msg=$(json_last_line 2>&1); then ok "JSON last line"; else bad "JSON last line: ${msg##*$'\n'}"; fi
# a run descheduled for 2 s prints a progress line; anything else is wrong
grep -v '^cusp-sim: t = ' "$TMP/err" >"$TMP/err.other"
[ -s "$TMP/err.other" ] && bad "stderr not empty for a short run: $(cat "$TMP/err.other")"
if [ $have_python -eq 1 ]; then
  z=$(tail -n 1 "$TMP/out" | python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); print(d["bodies"]["box"]["pos"][2] if d["completed"] else "nan")' 2>/dev/null)
else
  z=$(tail -n 1 "$TMP/out" | sed -n 's/.*"box": {"pos": \[[^,]*, [^,]*, \([^]]*\)\].*/\1/p')
fi
if awk -v z="$z" 'BEGIN { exit !(z + 0 == z && z > 0.049 && z < 0.051) }'; then
  ok "box at rest on the plane: z = $z (half-size 0.05)"
else
  bad "box z = '$z', expected 0.05 +- 0.001"
fi
rows=$(($(wc -l <"$TMP/box.csv") - 1))
if head -n 1 "$TMP/box.csv" | grep -q '^time_s,active_contacts,kept_contacts,iterations,residual,max_penetration_m,box_x_m,box_y_m,box_z_m,box_qw,box_qx,box_qy,box_qz$' &&
   [ "$rows" -eq 250 ]; then ok "CSV log: header (units, the free box's pose) and 250 rows"
else bad "CSV log: $rows rows, header '$(head -n 1 "$TMP/box.csv")'"; fi
# the log's last row is the state the JSON reports: time 0.5 s, the box at rest on the plane, upright
last=$(tail -n 1 "$TMP/box.csv")
if awk -F, -v z="$z" '{ exit !(NF == 13 && $1 > 0.4999 && $1 < 0.5001 && $9 - z < 1e-9 && z - $9 < 1e-9 && ($10 > 0.9999 || $10 < -0.9999)) }' <<<"$last"; then
  ok "CSV log: last row at 0.5 s, box z = the JSON's (1e-9 m), upright"
else bad "CSV log: last row '$last' (JSON z = $z)"; fi
expect_exit 0 "$TMP/box.xml" --seconds 0.1 --timestep 0.001
grep -q . "$TMP/out" && ok "human summary printed" || bad "no human summary"
expect_exit 0 "$TMP/box.xml" --seconds 0.1 --dump-lcp "$TMP/rigid_lcp"   # no soft contact: no files
[ -d "$TMP/rigid_lcp" ] && [ -z "$(ls "$TMP/rigid_lcp")" ] && ok "--dump-lcp: directory made, empty" ||
  bad "--dump-lcp on a rigid scene: $(ls "$TMP/rigid_lcp" 2>&1 | head -3)"
expect_exit 2 "$TMP/box.xml" --seconds 0.1 --dump-lcp "$TMP/box.xml"     # a file, not a directory
grep -q "box.xml" "$TMP/err" && ok "--dump-lcp onto a file names it" || bad "--dump-lcp message: $(cat "$TMP/err")"

# a soft scene with --timestep beyond the soft step's plausible range: the
# plugin's init refuses it (the expansion saw the scene's own 2 ms), naming the option
expect_exit 2 "$SRC/tests/data/scenes/arm.xml" --seconds 0.01 --timestep 1.5
grep -q 'timestep="1.5"> is out of range' "$TMP/err" && ok "--timestep 1.5 named" || bad "--timestep 1.5: $(cat "$TMP/err")"

# --- an unstable scene fails with exit 1 and completed=false -----------------
expect_exit 1 "$SRC/tests/data/scenes/unstable_rigid.xml" --seconds 10 --json
if tail -n 1 "$TMP/out" | grep -q '"completed": false'; then ok "unstable: completed false"
else bad "unstable: no \"completed\": false in '$(tail -n 1 "$TMP/out")'"; fi

# --- a soft scene (skipped until tests/data/scenes holds one) ----------------
# coupling_squeeze has soft contacts and a free body; any soft scene will do.
soft=""
for f in "$SRC"/tests/data/scenes/coupling_squeeze.xml "$SRC"/tests/data/scenes/*.xml; do
  [ -f "$f" ] && grep -q 'cusp.softbody' "$f" && { soft=$f; break; }
done
if [ -z "$soft" ]; then
  echo "skip soft scene: no scene with cusp.softbody in $SRC/tests/data/scenes"
else
  expect_exit 0 "$soft" --seconds 0.2 --json --log "$TMP/soft.csv"
  if msg=$(json_last_line 2>&1); then ok "soft JSON last line"; else bad "soft JSON last line: ${msg##*$'\n'}"; fi
  if [ $have_python -eq 1 ]; then
    inst=$(tail -n 1 "$TMP/out" | python3 -c '
import json, math, sys
d = json.loads(sys.stdin.read())
assert d["completed"] and d["nan_events"] == 0, "not completed"
assert d["soft"], "no soft instance in the JSON"
for name, s in d["soft"].items():
    assert len(s["tip_pos"]) == 3 and len(s["tip_quat"]) == 4 and s["q"], name
    assert all(x is not None and math.isfinite(x) for x in s["tip_pos"] + s["tip_quat"] + s["q"]), name
print(next(iter(d["soft"])))' 2>&1) && ok "soft: instance '$inst', finite tip and q" ||
      { bad "soft: JSON contents: ${inst##*$'\n'}"; inst=""; }
  else
    inst=$(tail -n 1 "$TMP/out" | sed -n 's/.*"soft": {"\([^"]*\)".*/\1/p')
  fi
  if [ -n "$inst" ]; then
    head -n 1 "$TMP/soft.csv" | grep -q ",${inst}_tip_x_m,${inst}_tip_y_m,${inst}_tip_z_m" &&
      ok "soft CSV has ${inst}_tip_x_m/y_m/z_m" || bad "soft CSV header: $(head -n 1 "$TMP/soft.csv")"
    expect_exit 0 "$soft" --seconds 0.05 --set "$inst.friction=0.3"
    # every solved step's LCP, readable by cusp-lcp, which solves it again; a
    # step whose contacts all separate (stage 1's screen leaves them out)
    # solves an LCP of no variables and writes no file: the JSON's "empty"
    expect_exit 0 "$soft" --seconds 0.4 --json --dump-lcp "$TMP/lcp"
    dumped=$(tail -n 1 "$TMP/out" | sed -n 's/.*"dumped": \([0-9]*\).*/\1/p')
    empty=$(tail -n 1 "$TMP/out" | sed -n 's/.*"empty": \([0-9]*\).*/\1/p')
    solves=$(tail -n 1 "$TMP/out" | sed -n 's/.*"lcp": {"solves": \([0-9]*\).*/\1/p')
    files=$(ls "$TMP/lcp" | wc -l)
    if [ -n "$dumped" ] && [ "$dumped" -gt 0 ] && [ "$dumped" = "$files" ] && [ -n "$empty" ] && [ -n "$solves" ] &&
       [ "$((dumped + empty))" = "$solves" ]; then
      ok "--dump-lcp: $files files, one per solve with variables ($empty of $solves solves had none)"
    else bad "--dump-lcp: dumped '$dumped', solves '$solves', files $files, solves with no variables '$empty'"; fi
    lcp_app="$(dirname "$APP")/cusp-lcp"
    last=$(ls "$TMP/lcp" | tail -n 1)
    if [ -x "$lcp_app" ] && [ -n "$last" ]; then
      "$lcp_app" "$TMP/lcp/$last" --json >"$TMP/lcp_out" 2>&1 && grep -q '"status": "solved"' "$TMP/lcp_out" &&
        ok "cusp-lcp solves the dumped $last" || bad "cusp-lcp on $last: $(tail -n 2 "$TMP/lcp_out")"
    else bad "no cusp-lcp next to cusp-sim, or no dump"; fi
    expect_exit 2 "$soft" --seconds 0.05 --set "$inst.no_such_key=1"
    # the plugin refuses RK4 (the soft step advances once per mj_step): bad input, named
    sed 's/<option /<option integrator="RK4" /' "$soft" >"$TMP/rk4.xml"
    if grep -q 'integrator="RK4"' "$TMP/rk4.xml"; then
      expect_exit 2 "$TMP/rk4.xml" --seconds 0.05
      grep -q 'RK4' "$TMP/err" && ok "RK4 refused with a message naming it" || bad "RK4 message: $(cat "$TMP/err")"
    else bad "no <option> in $soft to set RK4 on"; fi
  fi
fi
# an arm mounted inside a solid: the run fails on its first step and says why
inside="$SRC/tests/data/scenes/arm_inside_box.xml"
expect_exit 1 "$inside" --seconds 0.2 --json
grep -q 'deep at step 1' "$TMP/err" && tail -n 1 "$TMP/out" | grep -q '"completed": false' &&
  ok "arm inside a solid: failed at step 1, the depth named" || bad "arm inside a solid: $(cat "$TMP/err")"
# the plugin itself says it in words (MuJoCo's warning), whatever the host
grep -q 'instance "arm": disk [0-9]* (body "arm/disk[0-9]*") is 0.505 m inside geom "block"' "$TMP/err" &&
  ok "arm inside a solid: the plugin names the instance, disk, geom and depth" ||
  bad "arm inside a solid: no plugin warning: $(cat "$TMP/err")"
expect_exit 0 "$inside" --seconds 0.01 --max-penetration 2   # a bound the user chose
expect_exit 2 "$inside" --max-penetration -1
[ $fail -eq 0 ] && echo "all cusp-sim checks passed"
exit $fail

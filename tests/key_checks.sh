# Shared by the key-refusal scripts (sourced): refuse and runs check cusp-sim
# on $SCENE with --set overrides; a failure sets fail=1.

# refuse CASE... -- WORDS...: cusp-sim exits 2 and its message holds every word
refuse() {
  local args=() words=()
  while [ "$1" != "--" ]; do args+=(--set "$1"); shift; done
  shift
  words=("$@")
  out=$("$SIM" "$SCENE" --seconds 0.01 "${args[@]}" 2>&1)
  rc=$?
  local ok=1
  [ $rc -eq 2 ] || ok=0
  for w in "${words[@]}"; do case "$out" in *"$w"*) ;; *) ok=0 ;; esac; done
  if [ $ok -eq 1 ]; then echo "ok   refused ${args[*]}: $out"; else echo "FAIL ${args[*]}: exit $rc, expected 2 and [${words[*]}]: $out"; fail=1; fi
}
# runs CASE...: cusp-sim completes 0.05 s with the overrides
runs() {
  local args=()
  for a in "$@"; do args+=(--set "$a"); done
  out=$("$SIM" "$SCENE" --seconds 0.05 "${args[@]}" --json 2>&1)
  rc=$?
  if [ $rc -eq 0 ] && echo "$out" | tail -1 | grep -q '"completed": true'; then echo "ok   runs ${args[*]}"
  else echo "FAIL ${args[*]}: exit $rc: $(echo "$out" | tail -2)"; fail=1; fi
}

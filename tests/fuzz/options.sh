# Options shared by tests/fuzz/smoke.sh and scripts/fuzz.sh (sourced).
#
# fuzz_mjcf, fuzz_keys: each input builds the soft runtime twice (the compile's data and
# mj_makeData), and the contact workspaces are sized for the worst case
# (issue 19 item 12: blocks of about 0.5 GB). AddressSanitizer poisons and
# unpoisons the shadow of every such block, 2.5 s per input; with
# poison_heap=0 an input takes about 0.1 s but heap overflows and
# use-after-free go unseen (UBSan, stack and global checks stay).
# CUSP_FUZZ_POISON_HEAP=1 turns the heap checks back on (scripts/fuzz.sh
# --thorough); when the workspaces are sized from the model, make it the default.

fuzz_flags() { # HARNESS SOURCE_DIR: the dictionary and input size
  echo "-dict=$2/tests/fuzz/$1.dict"
}

fuzz_env() { # HARNESS COMMAND...: run with the sanitizers' options
  local h=$1; shift
  local asan="detect_leaks=1:allocator_may_return_null=1"
  if [ "$h" != lcp ] && [ "${CUSP_FUZZ_POISON_HEAP:-0}" != 1 ]; then asan="$asan:poison_heap=0"; fi
  ASAN_OPTIONS="$asan" UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 OPENBLAS_NUM_THREADS=1 "$@"
}

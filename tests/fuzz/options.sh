# Options shared by tests/fuzz/smoke.sh and scripts/fuzz.sh (sourced).
#
# fuzz_mjcf, fuzz_keys: each input builds the soft runtime twice (the compile's data and
# mj_makeData). With AddressSanitizer's heap poisoning an input costs about
# 2 s (system time on the shadow of large blocks, even with the contact
# workspaces sized from the model); with poison_heap=0 it takes about 0.1 s
# but heap overflows and use-after-free go unseen (UBSan, stack and global
# checks stay). CUSP_FUZZ_POISON_HEAP=1 turns the heap checks back on
# (scripts/fuzz.sh --thorough).

fuzz_flags() { # HARNESS SOURCE_DIR: the dictionary and input size
  echo "-dict=$2/tests/fuzz/$1.dict"
}

fuzz_env() { # HARNESS COMMAND...: run with the sanitizers' options
  local h=$1; shift
  local asan="detect_leaks=1:allocator_may_return_null=1"
  if [ "$h" != lcp ] && [ "${CUSP_FUZZ_POISON_HEAP:-0}" != 1 ]; then asan="$asan:poison_heap=0"; fi
  ASAN_OPTIONS="$asan" UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 OPENBLAS_NUM_THREADS=1 "$@"
}

#!/usr/bin/env bash
# The unit tests of every library under the sanitizers (docs/reliability.md): AddressSanitizer
# with UndefinedBehaviorSanitizer over trace, dispatch, the recorder's logic, the analyzer, the
# tuner and the inputs the fuzzers once failed on (tests/fixtures/fuzz); ThreadSanitizer over
# the collector's ring and store writer (with the thread that folds its WAL in), the recorder's logic, the analyzer's loading of stores
# on worker threads and the runtime's scheduler. Each builds, Debug and without the GUI, only
# the test targets, in a tree of its own: asan/ and tsan/ inside the build folder (or inside
# $SYNCOPATE_SANITIZE_DIR). Multi-process and simgpu tests stay in the normal suite: what they
# add is the preloaded library and mpirun, which a sanitizer does not follow across exec.
#   scripts/sanitize.sh [address|thread]...     (default: both)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
trees="${SYNCOPATE_SANITIZE_DIR:-${SYNCOPATE_BUILD_DIR:-$root/build}}"
cuda_root="${CUDAToolkit_ROOT:-/usr/local/cuda}"
export PATH="$cuda_root/bin:$PATH"
jobs="${SYNCOPATE_JOBS:-$(nproc)}"
kinds=("$@")
[ ${#kinds[@]} -eq 0 ] && kinds=(address thread)

configure() {  # dir sanitizers
  mkdir -p "$1"
  cmake -S "$root" -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DSYNCOPATE_SANITIZE="$2" -DSYNCOPATE_BUILD_GUI=OFF \
    -DCMAKE_UNITY_BUILD="${SYNCOPATE_UNITY_BUILD:-ON}" \
    -DSYNCOPATE_BUILD_BENCH=OFF ${SYNCOPATE_SANITIZE_CMAKE_ARGS:-} > "$1/configure.log" ||
    { cat "$1/configure.log"; exit 1; }
}
run() {  # dir test [gtest filter]
  echo "== $2 ${3:+($3)}"
  "$1/bin/$2" --gtest_brief=1 ${3:+--gtest_filter=$3}
}

# Every finding stops the test with a non-zero exit, leaks included.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:halt_on_error=1:strict_string_checks=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1"

for kind in "${kinds[@]}"; do
  case $kind in
    address)
      dir="$trees/asan"
      tests=(trace_tests dispatch_tests collector_unit_test analyzer_tests tuner_core_tests tuner_tests fuzz_replay_tests)
      configure "$dir" "address,undefined"
      cmake --build "$dir" -j "$jobs" --target "${tests[@]}"
      for t in "${tests[@]}"; do run "$dir" "$t"; done
      ;;
    thread)
      dir="$trees/tsan"
      configure "$dir" thread
      # dispatch/ is left to AddressSanitizer: its map of device memory is a sequence lock built
      # on atomic_thread_fence, which ThreadSanitizer does not model (GCC refuses to build it).
      cmake --build "$dir" -j "$jobs" --target trace_tests collector_unit_test analyzer_tests tuner_core_tests tuner_tests
      run "$dir" trace_tests 'SpscRing*:*Writer*:Crash*:WalCheckpoint*'
      run "$dir" collector_unit_test
      run "$dir" analyzer_tests 'LoadRun*:CriticalPath*'
      run "$dir" tuner_core_tests
      # The search's predictions side by side (the 64-rank search alone would take a minute here).
      run "$dir" tuner_tests 'Search.*-Search.SixtyFourRanksAreSearched'
      ;;
    *) echo "sanitize.sh: unknown sanitizer '$kind' (address or thread)" >&2; exit 2 ;;
  esac
done
echo "sanitize.sh: every sanitized test passed (${kinds[*]})"

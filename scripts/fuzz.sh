#!/usr/bin/env bash
# Fuzzes every input a user can hand Syncopate (docs/reliability.md, "Fuzzed inputs"): builds
# the libFuzzer executable with clang, AddressSanitizer and UndefinedBehaviorSanitizer in a tree
# of its own (fuzz/ inside the build folder, or $SYNCOPATE_FUZZ_DIR), makes the seed corpora and
# dictionaries (tests/fuzz/make_seeds.py: the real traces, read in place, and the project's own
# fixtures), then runs each target for SECONDS and prints, per target, the executions, crashes
# (aborts, sanitizer findings, allocations over 2 GB), timeouts (an input taking over 10 s) and
# coverage (edges reached). Corpora grow across runs in the tree's corpus/ folder; inputs that
# failed are kept in findings/<target>/ and belong, minimised, in tests/fixtures/fuzz/<target>/.
#   scripts/fuzz.sh [--json] SECONDS [TARGET...]      (exit 1 when anything crashed or timed out)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tree="${SYNCOPATE_FUZZ_DIR:-${SYNCOPATE_BUILD_DIR:-$root/build}/fuzz}"
shared="${SYNCOPATE_SHARED_DIR:-$root/../shared}"
cuda_root="${CUDAToolkit_ROOT:-/usr/local/cuda}"
export PATH="$cuda_root/bin:$PATH"
jobs="${SYNCOPATE_JOBS:-$(nproc)}"

json=0
if [ "${1:-}" = "--json" ]; then json=1; shift; fi
seconds="${1:-}"
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || [ "$seconds" -eq 0 ]; then
  echo "usage: scripts/fuzz.sh [--json] SECONDS [TARGET...]" >&2
  exit 2
fi
shift
say() { if [ $json -eq 0 ]; then echo "$@"; else echo "$@" >&2; fi; }

if ! command -v clang++ > /dev/null; then
  echo "fuzz.sh: libFuzzer comes with clang, which is not installed (apt-get install clang)" >&2
  exit 2
fi

mkdir -p "$tree"
say "fuzz.sh: building the fuzz targets in $tree"
cmake -S "$root" -B "$tree" -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSYNCOPATE_SANITIZE="fuzzer-no-link,address,undefined" \
  -DCMAKE_CXX_FLAGS="-fno-sanitize-recover=all" -DCMAKE_C_FLAGS="-fno-sanitize-recover=all" \
  -DSYNCOPATE_FUZZ=ON -DSYNCOPATE_WERROR=OFF -DSYNCOPATE_BUILD_GUI=OFF -DSYNCOPATE_BUILD_BENCH=OFF \
  > "$tree/configure.log" || { cat "$tree/configure.log" >&2; exit 1; }
cmake --build "$tree" -j "$jobs" --target syncopate_fuzz > "$tree/build.log" || { tail -40 "$tree/build.log" >&2; exit 1; }
fuzzer="$tree/bin/syncopate_fuzz"

python3 "$root/tests/fuzz/make_seeds.py" "$tree" "$root" "$shared"

targets=("$@")
[ ${#targets[@]} -eq 0 ] && mapfile -t targets < <(SYNCOPATE_FUZZ_TARGET=list "$fuzzer")

# Inputs that are files go to a folder in memory; each execution writes one.
scratch="${SYNCOPATE_FUZZ_SCRATCH:-/dev/shm}"
[ -d "$scratch" ] && [ -w "$scratch" ] || scratch="${TMPDIR:-/tmp}"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:allocator_may_return_null=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"

rows=()
failed=0
for t in "${targets[@]}"; do
  corpus="$tree/corpus/$t" findings="$tree/findings/$t/" log="$tree/logs/$t.log"
  rm -rf "$findings"  # this run's findings only; kept ones belong in tests/fixtures/fuzz
  mkdir -p "$corpus" "$findings" "$(dirname "$log")"
  say "fuzz.sh: $t for ${seconds} s"
  # Fork mode keeps fuzzing after a crash, a timeout or an out-of-memory, counting each.
  status=0
  TMPDIR="$scratch" SYNCOPATE_FUZZ_TARGET="$t" "$fuzzer" "$corpus" "$tree/seeds/$t" \
    -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 -max_total_time="$seconds" \
    -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 -dict="$tree/dictionaries/$t.dict" \
    -artifact_prefix="$findings" -print_final_stats=1 > "$log" 2>&1 || status=$?
  # The fork supervisor's last progress line: "#EXECS: cov: C ft: F corp: N ... oom/timeout/crash: O/T/C ..."
  line="$(grep -E '^#[0-9]+: cov:' "$log" | tail -1 || true)"
  if [ -z "$line" ]; then
    echo "fuzz.sh: $t did not start (exit $status); see $log" >&2
    tail -20 "$log" >&2
    exit 1
  fi
  execs="$(sed -E 's/^#([0-9]+):.*/\1/' <<< "$line")"
  cov="$(sed -E 's/.* cov: ([0-9]+).*/\1/' <<< "$line")"
  read -r ooms timeouts crashes < <(sed -E 's#.*oom/timeout/crash: ([0-9]+)/([0-9]+)/([0-9]+).*#\1 \2 \3#' <<< "$line")
  crashes=$((crashes + ooms))
  [ $((crashes + timeouts)) -gt 0 ] && failed=1
  rows+=("$t $execs $crashes $timeouts $cov")
done

if [ $json -eq 1 ]; then
  printf '{"seconds": %s, "targets": [' "$seconds"
  sep=""
  for r in "${rows[@]}"; do
    read -r name execs crashes timeouts cov <<< "$r"
    printf '%s{"name": "%s", "executions": %s, "crashes": %s, "timeouts": %s, "coverage": %s}' \
      "$sep" "$name" "$execs" "$crashes" "$timeouts" "$cov"
    sep=", "
  done
  printf ']}\n'
else
  printf '%-16s %12s %8s %9s %9s\n' target executions crashes timeouts coverage
  total=0 total_failures=0
  for r in "${rows[@]}"; do
    read -r name execs crashes timeouts cov <<< "$r"
    printf '%-16s %12s %8s %9s %9s\n' "$name" "$execs" "$crashes" "$timeouts" "$cov"
    total=$((total + execs)); total_failures=$((total_failures + crashes + timeouts))
  done
  echo "fuzz.sh: ${#rows[@]} targets, $total executions in ${seconds} s each, $total_failures crashes and timeouts (findings in $tree/findings)"
fi
exit $failed

#!/usr/bin/env bash
# Two builds of the preload library side by side, for changes to the recording hot path whose
# effect is smaller than the machine's drift between runs (docs/collector.md, "Figures"): the
# same collector_launch_bench recording launches on the null runtime (events backend, the TSC
# clock, a ring and an event pool that hold the whole burst, as run_overhead.sh's events-tsc:
# up to four records a launch, the elementwise kernel's),
# the libraries alternated ROUNDS times, so that a slow phase of the machine falls on both.
# Each round also runs the benchmark without a collector. A run's figure is the mean of the
# middle 90% of its calls less the timer's (finer than the clock's step, which moves medians in
# 10 ns steps here); a library's added cost is its figure less the round's run without one.
# Prints each round's added cost per launch for `old` and `new`, their averages and new / old.
#   bench/collector/compare_preloads.sh OLD.so NEW.so [ROUNDS] [CALLS]   (default 6, 200000)
# KERNEL=elementwise launches the kernel with an elementwise operation's parameters instead of
# the one without parameters. SYNCOPATE_BUILD_DIR says where the benchmark is (default build).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${SYNCOPATE_BUILD_DIR:-$root/build}"
[ $# -ge 2 ] || { echo "usage: compare_preloads.sh OLD.so NEW.so [ROUNDS] [CALLS]" >&2; exit 2; }
libraries=("$(realpath "$1")" "$(realpath "$2")")
rounds="${3:-6}"
calls="${4:-200000}"
bench="$build/bin/collector_launch_bench"
[ -x "$bench" ] || { echo "compare_preloads: $bench is not built" >&2; exit 2; }
for library in "${libraries[@]}"; do
  [ -f "$library" ] || { echo "compare_preloads: no library at $library" >&2; exit 2; }
done
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

# net [LIBRARY]: one run's mean less the timer's mean (no LIBRARY: without a collector), or
# nothing if the run printed no figure (it failed), did not record with LIBRARY (the loader
# refused it), or dropped records or left ops untimed (then it did not record every launch, and
# its figure would understate).
net() {
  local dir="$out/store-$RANDOM" line env=(LD_LIBRARY_PATH="$build/lib/bench-null")
  [ $# -gt 0 ] && env+=(LD_PRELOAD="$1" SYNCOPATE_OUTPUT_DIR="$dir" SYNCOPATE_BACKEND=events SYNCOPATE_HOST_CLOCK=tsc
                        SYNCOPATE_BUFFER_RECORDS=$((4 * calls + 4096)) SYNCOPATE_EVENT_PAIRS=$((calls + 1024)))
  line="$(env "${env[@]}" "$bench" --calls "$calls" --kernel "${KERNEL:-empty}" 2>/dev/null | grep '^launch_bench')"
  rm -rf "$dir"
  echo "$line" | awk -v recording="$([ $# -gt 0 ] && echo 1 || echo 0)" '
    { for (i = 1; i <= NF; ++i) { split($i, kv, "="); f[kv[1]] = kv[2] } }
    END { if (f["mean_ns"] != "" && f["recording"] == recording && f["records_dropped"] == "0" && f["ops_untimed"] == "0")
            printf "%.2f\n", f["mean_ns"] - f["timer_mean_ns"] }'
}

echo "old: ${libraries[0]}"
echo "new: ${libraries[1]}"
echo "ns added per recorded launch, $calls launches a run, kernel ${KERNEL:-empty}"
declare -a runs=("" "")
names=(old new)
for round in $(seq "$rounds"); do
  base="$(net)"
  [ -n "$base" ] || { echo "compare_preloads: the run without a collector printed no figure" >&2; exit 1; }
  line="$(printf '  round %-2s without collector %5.1f' "$round" "$base")"
  for which in 0 1; do
    figure="$(net "${libraries[$which]}")"
    [ -n "$figure" ] || { echo "compare_preloads: a run of ${libraries[$which]} did not record every launch" >&2; exit 1; }
    figure="$(awk -v f="$figure" -v b="$base" 'BEGIN { printf "%.1f", f - b }')"
    runs[$which]="${runs[$which]} $figure"
    line="$line  ${names[$which]} +$figure"
  done
  echo "$line"
done
awk -v old="${runs[0]}" -v new="${runs[1]}" 'BEGIN {
  n = split(old, x, " "); split(new, y, " "); for (i = 1; i <= n; ++i) { sx += x[i]; sy += y[i] }
  printf "average: old +%.1f ns, new +%.1f ns; new / old = %.2f\n", sx / n, sy / n, sy / sx }'

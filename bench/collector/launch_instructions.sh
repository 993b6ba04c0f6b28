#!/usr/bin/env bash
# The collector's instructions per intercepted launch, counted rather than timed
# (docs/collector.md, "Figures"): valgrind's callgrind counts what runs inside cudaLaunchKernel
# (the exported symbol and everything it calls) while collector_launch_bench launches on the
# null runtime (bench/collector/null_cudart.cpp), in each configuration of run_overhead.sh:
#   none      no collector (the null runtime's own instructions)
#   inert     the library preloaded, nothing asked of it
#   dormant   armed, not attached
#   events    recording, CUDA-event timing
#   events-elementwise  the same, launching a kernel with an elementwise operation's parameters
#             (three pointers and two numbers: the three pointers are recorded as its touches)
#             instead of one without parameters
# A count does not move with the machine's load or its clock source, so it shows what a change
# to the hot path saves where timings here cannot (their steps are 10 ns and their noise more).
# Each configuration runs twice, CALLS and 2 x CALLS launches; the difference divided by CALLS
# is one launch in steady state (start-up, the first launch's lookups and the event pool's
# first chunks cancel out). The recording configuration is also broken down by part, from the
# inclusive counts of the functions that make up a recorded launch, differenced the same way.
# The null runtime has no parameter query, so the collector learns the elementwise kernel's
# layout from its name, as it does on a runtime older than CUDA 12.4.
#   bench/collector/launch_instructions.sh [BUILD] [CALLS]      (default: build 20000)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
calls="${2:-20000}"
bench="$build/bin/collector_launch_bench"
preload="$build/lib/libsyncopate_preload.so"
command -v valgrind >/dev/null || { echo "launch_instructions: valgrind is not installed" >&2; exit 2; }
[ -x "$bench" ] || { echo "launch_instructions: $bench is not built" >&2; exit 2; }
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

# count CONFIG CALLS: runs the bench under callgrind; leaves its profile in $out/CONFIG-CALLS.cg.
count() {
  local config="$1" n="$2" env=(LD_LIBRARY_PATH="$build/lib/bench-null") kernel=empty
  case "$config" in
    none) ;;
    inert) env+=(LD_PRELOAD="$preload") ;;
    dormant) env+=(LD_PRELOAD="$preload" SYNCOPATE_OUTPUT_DIR="$out/store-$config-$n" SYNCOPATE_ARMED=1) ;;
    # Ring and event pool hold every launch of the longer run, as in run_overhead.sh (a dropped
    # or untimed launch runs fewer instructions than a recorded one), and are the same size in
    # both runs, so that making them is not counted per launch.
    events|events-elementwise)
            [ "$config" = events-elementwise ] && kernel=elementwise
            env+=(LD_PRELOAD="$preload" SYNCOPATE_OUTPUT_DIR="$out/store-$config-$n" SYNCOPATE_BACKEND=events
                  SYNCOPATE_BUFFER_RECORDS=$((4 * calls + 4096)) SYNCOPATE_EVENT_PAIRS=$((2 * calls + 1024))) ;;
  esac
  env "${env[@]}" valgrind --tool=callgrind --toggle-collect=cudaLaunchKernel \
    --callgrind-out-file="$out/$config-$n.cg" "$bench" --calls "$n" --kernel "$kernel" >/dev/null 2>"$out/$config-$n.log" ||
    { cat "$out/$config-$n.log" >&2; exit 1; }
}
total() { sed -n 's/^summary: *\([0-9]*\).*/\1/p; s/^totals: *\([0-9]*\).*/\1/p' "$1" | head -1; }

echo "instructions per cudaLaunchKernel (callgrind, null runtime, $calls and $((2 * calls)) launches)"
printf '  %-19s %11s %8s\n' config per_launch added
base=""
for config in none inert dormant events events-elementwise; do
  count "$config" "$calls"
  count "$config" $((2 * calls))
  per=$(( ($(total "$out/$config-$((2 * calls)).cg") - $(total "$out/$config-$calls.cg")) / calls ))
  [ -z "$base" ] && base="$per"
  printf '  %-19s %11d %8d\n' "$config" "$per" $((per - base))
done

# The recorded launch by part: inclusive counts of the functions named below (a part counts
# what it calls), per launch. A function the compiler inlined into its caller has no count of
# its own and is left out of the table.
inclusive() {  # PROFILE: "count function" per line, counts summed over the function's callers
  callgrind_annotate --inclusive=yes --threshold=100 "$1" 2>/dev/null |
    awk '/^ *[0-9,]+ / { n = $1; gsub(",", "", n); $1 = ""; if ($2 ~ /^\(/) $2 = ""; sub(/^ +/, ""); print n "\t" $0 }'
}
# Each part once per profile: the largest inclusive count among the lines naming it (callgrind
# lists a function once per source file it has code from).
by_part='
  function part(fn) {
    if (fn ~ /recordIssue</) return "recordIssue (the recording of the call, all of it)"
    if (fn ~ /EventTiming::begin/) return "events backend: a pair and its first cudaEventRecord"
    if (fn ~ /EventTiming::end/) return "events backend: the second cudaEventRecord"
    if (fn ~ /monotonicNs/) return "the two clock readings"
    if (fn ~ /issuedOp\(/) return "describing the op"
    if (fn ~ /launchedShape\(/) return "  the kernel and its launch shape (thread cache)"
    if (fn ~ /argumentRecordCount\(/) return "what the launch touches"
    if (fn ~ /Recorder::streamId\(/) return "the stream id (thread cache)"
    if (fn ~ /writeArgumentRecords\(/) return "the touches written to the ring"
    return ""
  }
  FNR == NR { p = part($2); if (p != "" && $1 > small[p]) small[p] = $1; next }
  { p = part($2); if (p != "" && $1 > large[p]) { large[p] = $1; if (!(p in seen)) { seen[p] = 1; order[++n] = p } } }
  END { for (i = 1; i <= n; ++i) printf "  %-55s %6d\n", order[i], (large[order[i]] - small[order[i]]) / calls }'
for config in events events-elementwise; do
  inclusive "$out/$config-$calls.cg" >"$out/small.parts"
  inclusive "$out/$config-$((2 * calls)).cg" >"$out/large.parts"
  echo "$config by part, per launch (inclusive: a part counts what it calls)"
  awk -F'\t' -v calls="$calls" "$by_part" "$out/small.parts" "$out/large.parts"
done

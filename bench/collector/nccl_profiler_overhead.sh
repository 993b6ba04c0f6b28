#!/usr/bin/env bash
# The cost of the collector's NCCL profiler plugin (docs/collector.md, "Figures"): ncclAllReduce
# on the null NCCL and null CUDA runtime (bench/collector/null_nccl.cpp, null_cudart.cpp),
# recording with the events backend, with NCCL_PROFILER_PLUGIN=none and with the collector as
# the plugin; the difference per call is what the plugin adds to one collective (7 callbacks:
# CollApi, Coll and KernelCh starts, the KernelCh stop state, 3 stops; 3 records).
#   bench/collector/nccl_profiler_overhead.sh [calls] [repeats]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${SYNCOPATE_BUILD_DIR:-$root/build}"
calls="${1:-20000}"
repeats="${2:-3}"
bench="$build/bin/collector_nccl_profiler_bench"
preload="$build/lib/libsyncopate_preload.so"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p"; }
run() {  # plugin-setting
  env LD_LIBRARY_PATH="$build/lib/bench-null" LD_PRELOAD="$preload" SYNCOPATE_OUTPUT_DIR="$out/run-$RANDOM$RANDOM" \
      SYNCOPATE_BACKEND=events NCCL_PROFILER_PLUGIN="$1" "$bench" --calls "$calls" 2>/dev/null | grep '^nccl_profiler_bench'
}

printf '%-8s %12s %12s %12s %12s %10s\n' repeat off_median plugin_median off_p99 plugin_p99 dropped
for r in $(seq "$repeats"); do
  off="$(run none)"
  on="$(run "$preload")"
  printf '%-8s %12s %12s %12s %12s %10s\n' "$r" "$(field median_ns <<<"$off")" "$(field median_ns <<<"$on")" \
    "$(field p99_ns <<<"$off")" "$(field p99_ns <<<"$on")" "$(field records_dropped <<<"$on")"
done

#!/usr/bin/env bash
# The cost of the preload library's NCCL tuner plugin per collective (docs/collector.md, "NCCL's
# tuner plugin"): getCollInfo timed without a plan (it leaves NCCL's choice) and with a plan of
# channel counts (bench/tuner/tuner_plugin_bench.cpp), side by side in one run.
#   bench/tuner/tuner_plugin_overhead.sh [calls] [repeats]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${SYNCOPATE_BUILD_DIR:-$root/build}"
calls="${1:-10000000}"
repeats="${2:-3}"
bench="$build/bin/tuner_plugin_bench"
preload="$build/lib/libsyncopate_preload.so"

field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p"; }
printf '%-8s %16s %16s %14s\n' repeat no_plan_ns plan_ns channels_set
for r in $(seq "$repeats"); do
  off="$(env -u SYNCOPATE_PLAN "$bench" "$preload" "$calls" 2>/dev/null)"
  on="$(env -u SYNCOPATE_PLAN "$bench" "$preload" "$calls" --plan 2>/dev/null)"
  printf '%-8s %16s %16s %14s\n' "$r" "$(field ns_per_call <<<"$off")" "$(field ns_per_call <<<"$on")" \
    "$(field channels_set <<<"$on")"
done

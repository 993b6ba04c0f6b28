#!/usr/bin/env bash
# The collector's cost per intercepted call and the event rate it sustains (docs/collector.md,
# "Figures"). Runs collector_launch_bench in each configuration, one process each:
#   none      no collector
#   inert     the library preloaded, nothing asked of it (a process that does not record)
#   dormant   armed, not attached (recording off, iteration markers watched)
#   events    recording, CUDA-event timing
#   cupti     recording, CUPTI timing (simgpu's libcupti; not on the null runtime)
#   events-vdso  as events, timestamps read through the vDSO's clock_gettime instead of the
#             TSC (SYNCOPATE_HOST_CLOCK=system; the same where the kernel neither keeps time with
#             the TSC nor offers it)
#   events-tsc   as events, timestamps read from the TSC wherever the processor's is invariant
#             (SYNCOPATE_HOST_CLOCK=tsc; the same as events where the kernel's clock is the TSC)
#   floor     no collector; the benchmark itself times each launch as cheaply as CUDA events
#             allow (collector_launch_bench --timing-floor: two readings of the processor's
#             counter, two cudaEventRecord, the readings kept): the part of a recorded launch's
#             cost that no collector timing it with events avoids; events-tsc less floor is
#             what the collector's own bookkeeping costs
# on two runtimes: the null runtime (bench/collector/null_cudart.cpp: the runtime costs ~nothing,
# so the difference is the collector's own cost) and simgpu. Then the highest launch rate that
# is recorded with no drop (one launching thread, then four), and the store's bytes per row.
# The recording configurations get a ring and an event pool large enough for the whole burst
# (SYNCOPATE_BUFFER_RECORDS, SYNCOPATE_EVENT_PAIRS): a call whose records are dropped, or whose
# op goes untimed, costs less than a recorded one, so a figure with drops would understate
# what recording costs. Each run also measures the timer's own cost (timer_ns, two readings
# with nothing between them); net_median is median - timer_ns, the call's own cost.
#   bench/collector/run_overhead.sh [calls]
# RUNTIMES chooses the runtimes (default "null simgpu"); `cuda` is the CUDA runtime the system's
# library path finds, a real GPU's (bench/gpu_check.sh). SUSTAINED=0 leaves out the sustained-rate
# and bytes-per-row part.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${SYNCOPATE_BUILD_DIR:-$root/build}"
calls="${1:-200000}"
bench="$build/bin/collector_launch_bench"
preload="$build/lib/libsyncopate_preload.so"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
# A launch of the benchmark's kernel (no parameters) is two records and one event pair.
ring_records=$((2 * calls + 4096)); [ "$ring_records" -gt $((1 << 24)) ] && ring_records=$((1 << 24))
event_pairs=$((calls + 1024)); [ "$event_pairs" -gt $((1 << 20)) ] && event_pairs=$((1 << 20))

# run RUNTIME-DIR CONFIG EXTRA-ARGS...: the bench's line, with the clock a recording run's store
# says its timestamps came from (host_clock=tsc or clock_gettime: a run whose counter was refused
# reads through the vDSO, and its figure is the vDSO's, whatever the configuration asked).
run() {
  local libs="$1" config="$2"; shift 2
  local env=(LD_LIBRARY_PATH="$libs") dir="$out/$config-$RANDOM" flags=()
  case "$config" in
    none) ;;
    floor) flags=(--timing-floor) ;;
    inert) env+=(LD_PRELOAD="$preload") ;;
    dormant) env+=(LD_PRELOAD="$preload" SYNCOPATE_OUTPUT_DIR="$out/$config" SYNCOPATE_ARMED=1) ;;
    events|cupti|events-vdso|events-tsc)
      env+=(LD_PRELOAD="$preload" SYNCOPATE_OUTPUT_DIR="$dir" SYNCOPATE_BACKEND="${config%-*}"
            SYNCOPATE_BUFFER_RECORDS="$ring_records" SYNCOPATE_EVENT_PAIRS="$event_pairs")
      [ "$config" = events-vdso ] && env+=(SYNCOPATE_HOST_CLOCK=system)
      [ "$config" = events-tsc ] && env+=(SYNCOPATE_HOST_CLOCK=tsc) ;;
  esac
  local line clock=""
  line="$(env "${env[@]}" "$bench" "$@" "${flags[@]}" 2>/dev/null | grep '^launch_bench')"
  if compgen -G "$dir/*.sqlite" >/dev/null; then
    clock=" host_clock=$(sqlite3 "$dir"/*.sqlite "select value from meta where key = 'host_clock'")"
  fi
  echo "$line$clock"
}

field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p"; }

echo "kernel clock source: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo unknown)" \
     "(events reads the TSC where the kernel keeps time with it or offers it, events-tsc wherever the processor's is invariant;" \
     "docs/collector.md, \"The host clock\")"
for runtime in ${RUNTIMES:-null simgpu}; do
  extra=()
  case "$runtime" in
    null) libs="$build/lib/bench-null"; configs="none inert dormant events events-vdso events-tsc floor" ;;
    simgpu) libs="$build/lib/simgpu"; configs="none inert dormant events cupti floor" ;;
    cuda) libs="${LD_LIBRARY_PATH:-}"; configs="none inert dormant events cupti floor"; extra=(--sync-every 256) ;;
    *) echo "run_overhead: unknown runtime '$runtime' (null, simgpu or cuda)" >&2; exit 2 ;;
  esac
  echo "runtime=$runtime calls=$calls (ns per cudaLaunchKernel, measured around each call)"
  printf '  %-11s %10s %10s %9s %11s %14s %14s %11s\n' config median_ns p99_ns timer_ns net_median added_median added_p99 \
    added_mean
  base_net=""; base_p99=""; base_mean=""
  for config in $configs; do
    line="$(run "$libs" "$config" --calls "$calls" "${extra[@]}")"
    median="$(echo "$line" | field median_ns)"; p99="$(echo "$line" | field p99_ns)"; timer="$(echo "$line" | field timer_ns)"
    net=$((median - timer))
    # The middle 90%'s means, the timer's subtracted alike: finer than the clock's step.
    net_mean="$(awk -v m="$(echo "$line" | field mean_ns)" -v t="$(echo "$line" | field timer_mean_ns)" 'BEGIN { print m - t }')"
    [ -z "$base_net" ] && { base_net="$net"; base_p99="$p99"; base_mean="$net_mean"; }
    printf '  %-11s %10s %10s %9s %11s %14s %14s %11.1f   %s\n' "$config" "$median" "$p99" "$timer" "$net" "$((net - base_net))" \
      "$((p99 - base_p99))" "$(awk -v a="$net_mean" -v b="$base_mean" 'BEGIN { print a - b }')" \
      "$(echo "$line" | grep -o 'records_dropped=[0-9]* ops_untimed=[0-9]*\( host_clock=[a-z_]*\)\?')"
  done
done

[ "${SUSTAINED:-1}" = 0 ] && exit 0

# sustained THREADS RATE: THREADS launching threads, each paced at RATE launches/s for at least
# two seconds (2x$calls launches each, more at high rates); prints the line and sets `whole` when
# every launch is in the store and nothing was dropped or left untimed.
sustained() {
  local threads="$1" rate="$2" n dir line dropped untimed ops
  n=$((calls * 2 > rate * 2 ? calls * 2 : rate * 2))
  dir="$out/rate-$threads-$rate"
  line="$(env LD_LIBRARY_PATH="$build/lib/bench-null" LD_PRELOAD="$preload" SYNCOPATE_OUTPUT_DIR="$dir" \
          SYNCOPATE_BACKEND=events "$bench" --threads "$threads" --calls "$n" --rate "$rate" 2>/dev/null | grep '^launch_bench')"
  dropped="$(echo "$line" | field records_dropped)"; untimed="$(echo "$line" | field ops_untimed)"
  ops="$(sqlite3 "$dir"/*.sqlite 'select count(*) from ops where kind = 1')"
  echo "  threads=$threads rate=$rate/s each ($((threads * rate))/s in all) calls=$((threads * n))" \
       "achieved=$(echo "$line" | field calls_per_s)/s records_dropped=$dropped ops_untimed=$untimed kernel_rows=$ops"
  whole=0
  if [ "$dropped" = 0 ] && [ "$untimed" = 0 ] && [ "$ops" = "$((threads * n))" ]; then whole=1; fi
}

echo "sustained rate (null runtime, events backend, one thread, paced calls, at least 2 s per rate):"
best=0
for rate in 25000 50000 75000 100000 150000 200000 300000 400000 500000 750000 1000000 1250000 1500000; do
  sustained 1 "$rate"
  if [ "$whole" = 1 ]; then best="$rate"; else break; fi
done
echo "  highest rate recorded whole: $best launches/s = $((best * 2)) records/s (an API call and its op each)"

echo "sustained rate, four launching threads (null runtime, events backend):"
sustained 4 250000
echo "  four threads at 250000 launches/s each recorded whole: $([ "$whole" = 1 ] && echo yes || echo no)"

store="$(ls "$out"/rate-1-25000/*.sqlite)"
rows="$(sqlite3 "$store" 'select (select count(*) from api_calls) + (select count(*) from ops) + (select count(*) from op_args) + (select count(*) from nvtx_ranges)')"
bytes="$(sqlite3 "$store" 'select page_count * page_size from pragma_page_count(), pragma_page_size()')"
echo "bytes per record in memory: 32 (trace/include/syncopate/trace/records.hpp; a launch is 2 records)"
echo "bytes per row on disk: $((bytes / rows)) ($bytes bytes, $rows rows, $store)"

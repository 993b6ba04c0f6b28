#!/usr/bin/env bash
# End-to-end slowdown of dp_trainer (4 ranks under mpirun, on simgpu) while the collector
# records it, for each timing backend (docs/collector.md, "Figures"). Runs alternate (without,
# events, cupti) so that load on the machine hits them alike; the figure is the ratio of the
# median of the runs' mean iteration times (dp_trainer's own `summary ... mean_ms=`, device
# time), with the whole run's wall time (start-up and the stores' closing included) beside it.
#   bench/collector/dp_trainer_slowdown.sh [rounds] [dp_trainer options...]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${SYNCOPATE_BUILD_DIR:-$root/build}"
rounds="${1:-3}"; shift || true
options=("$@")
[ ${#options[@]} -eq 0 ] && options=(--mode naive --iterations 10 --warmup 2)
export LD_LIBRARY_PATH="$build/lib/simgpu" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# The demo's machine profile (communication-heavy) unless another is given.
export SIMGPU_PROFILE="${SIMGPU_PROFILE:-$root/samples/dp_trainer/profiles/comm-heavy.json}"
mpirun=(mpirun -np 4 --oversubscribe --bind-to none --mca btl self,vader -x LD_LIBRARY_PATH -x SIMGPU_PROFILE)
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

mean_ms() { sed -n 's/^summary .* mean_ms=\([0-9.]*\).*/\1/p'; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

declare -A times walls
timed() {  # config command...: appends the run's mean_ms and wall seconds
  local config="$1"; shift
  local start end
  start="$(date +%s.%N)"
  times[$config]+="$("$@" 2>/dev/null | mean_ms) "
  end="$(date +%s.%N)"
  walls[$config]+="$(printf '%.2f' "$(echo "$end - $start" | bc -l)") "
}
for round in $(seq "$rounds"); do
  timed none "${mpirun[@]}" "$build/bin/dp_trainer" "${options[@]}"
  for backend in events cupti; do
    timed "$backend" "$build/bin/syncopate" record --backend "$backend" -o "$out/$backend-$round" -- \
      "${mpirun[@]}" "$build/bin/dp_trainer" "${options[@]}"
  done
done
base="$(echo "${times[none]}" | tr ' ' '\n' | grep . | median)"
echo "dp_trainer ${options[*]}, 4 ranks, $rounds rounds; mean iteration time per run (ms):"
for config in none events cupti; do
  m="$(echo "${times[$config]}" | tr ' ' '\n' | grep . | median)"
  printf '  %-7s mean_ms: %s median %s slowdown %+.2f%%   wall s: %s\n' "$config" "${times[$config]}" "$m" \
    "$(echo "($m / $base - 1) * 100" | bc -l)" "${walls[$config]}"
done

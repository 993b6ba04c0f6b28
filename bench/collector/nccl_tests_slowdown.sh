#!/usr/bin/env bash
# NVIDIA's nccl-tests (built by the build into build/nccl-tests) on simgpu, with and without
# `syncopate record` (docs/collector.md, "Figures"): the wall time of each whole run, start-up
# and the stores' closing included, in one process driving four devices and under mpirun
# (2 ranks x 2 devices). Runs alternate (without, with) so that load on the machine hits both
# alike; the figure is the ratio of the medians.
#   bench/collector/nccl_tests_slowdown.sh [rounds] [nccl-tests options...]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${SYNCOPATE_BUILD_DIR:-$root/build}"
rounds="${1:-3}"; shift || true
options=("$@")
[ ${#options[@]} -eq 0 ] && options=(-b 8 -e 16M -f 2 -w 5 -n 20)
export LD_LIBRARY_PATH="$build/lib/simgpu" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export SIMGPU_PROFILE="${SIMGPU_PROFILE:-$root/tests/collector/profiles/nccl_tests.json}"
mpirun=(mpirun -np 2 --oversubscribe --bind-to none --mca btl self,vader -x LD_LIBRARY_PATH -x SIMGPU_PROFILE)
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
seconds() {  # command...: the wall seconds it took; fails with it
  local start end
  start="$(date +%s.%N)"
  "$@" >/dev/null 2>&1
  end="$(date +%s.%N)"
  echo "$end - $start" | bc -l
}

echo "nccl-tests ${options[*]}, $rounds rounds: median wall seconds without and with syncopate record"
printf '%-16s %-14s %10s %10s %8s\n' test layout without with ratio
for test in all_reduce all_gather reduce_scatter broadcast sendrecv; do
  for layout in 1x4 2x2; do
    if [ "$layout" = 1x4 ]; then
      job=("$build/nccl-tests/single/${test}_perf" -g 4 "${options[@]}")
    else
      job=("${mpirun[@]}" "$build/nccl-tests/mpi/${test}_perf" -g 2 "${options[@]}")
    fi
    plain="" recorded=""
    for round in $(seq "$rounds"); do
      plain+="$(seconds "${job[@]}") "
      recorded+="$(seconds "$build/bin/syncopate" record -o "$out/$test-$layout-$round" -- "${job[@]}") "
    done
    p="$(echo "$plain" | tr ' ' '\n' | grep . | median)"
    r="$(echo "$recorded" | tr ' ' '\n' | grep . | median)"
    printf '%-16s %-14s %10.2f %10.2f %7.2fx\n' "$test" "$layout" "$p" "$r" "$(echo "$r / $p" | bc -l)"
  done
done

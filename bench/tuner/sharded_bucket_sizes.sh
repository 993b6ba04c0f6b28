#!/usr/bin/env bash
# A sharded optimizer's bucket size, predicted from one run and measured by re-running with each
# size (docs/tuner.md, "Sharded optimizers: bucket size"): framework_trainer's zero1 (gpt2-small-8k,
# micro-batch 32, both overlaps on) on four simulated H100s, recorded with buckets of FROM
# elements, tuned, then recorded once per size `tune` predicted; prints each size's predicted
# and measured step and the error. With `synchronous`, the job's collectives are PyTorch's
# synchronous ones (--process-group-stream, both overlaps off) and the sizes predicted with the
# overlaps `tune` recommends are re-run with those turned on (--overlap-grad-reduce,
# --overlap-param-gather).
#   bench/tuner/sharded_bucket_sizes.sh [FROM [synchronous]]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${SYNCOPATE_BUILD_DIR:-$root/build}"
from="${1:-60000000}"
overlaps=(--overlap-grad-reduce --overlap-param-gather)
[ "${2:-}" = synchronous ] && overlaps=(--process-group-stream)
export SIMGPU_PROFILE="$root/samples/framework_trainer/profiles/h100-4-hosts-400g.json"
export LD_LIBRARY_PATH="$build/lib/simgpu"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

record() {  # DIR BUCKET_SIZE [FLAGS...]
  local dir="$1" size="$2"
  shift 2
  "$build/bin/syncopate" record -o "$dir" -- mpirun -np 4 --oversubscribe --bind-to none --mca btl self,vader \
    "$build/bin/framework_trainer" --mode zero1 --config gpt2-small-8k --iterations 6 --warmup 1 --micro-batch 32 \
    "${overlaps[@]}" "$@" --bucket-size "$size" </dev/null >/dev/null 2>&1
  "$build/bin/syncopate" tune "$dir" --json 2>/dev/null | sed -n '/^{/,$p' >"$dir.json"
}

json() {  # FILE EXPRESSION over doc
  python3 -c 'import json, sys; doc = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

record "$work/from" "$from"
echo "recorded with --bucket-size $from: measured $(json "$work/from.json" 'round(doc["measured_iteration_ms"], 3)') ms," \
  "replayed $(json "$work/from.json" 'round(doc["replay_iteration_ms"], 3)') ms, its buckets rewritten" \
  "$(json "$work/from.json" 'round(doc["framework"]["sharded"]["bucket_size"]["recorded_buckets_rewritten_ms"], 3)') ms"
printf '%-12s %-48s %8s %14s %13s %9s\n' bucket_size with buckets predicted_ms measured_ms error
# `with` joined by "+" so that each row reads as four words.
json "$work/from.json" '"\n".join("%s %s %d %.3f" % (v["value"], v.get("with", "-").replace(", ", "+"), v["buckets"], v["predicted_iteration_ms"]) for v in doc["framework"]["sharded"]["bucket_size"]["values"])' |
  while read -r size with buckets predicted; do
    flags=()
    case "$with" in *overlap_grad_reduce=on*) flags+=(--overlap-grad-reduce) ;; esac
    case "$with" in *overlap_param_gather=on*) flags+=(--overlap-param-gather) ;; esac
    record "$work/$size$with" "$size" "${flags[@]}"
    measured="$(json "$work/$size$with.json" 'doc["measured_iteration_ms"]')"
    printf '%-12s %-48s %8s %14s %13.3f %+8.2f%%\n' "$size" "$with" "$buckets" "$predicted" "$measured" \
      "$(python3 -c "print(100 * ($measured / $predicted - 1))")"
  done

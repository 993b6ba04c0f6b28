#!/usr/bin/env bash
# Syncopate on a real GPU. 1. The collector: records one-rank DDP runs of samples/pytorch_ddp.py
# with the CUPTI backend and with the CUDA-event backend, traces the same steps with
# torch.profiler in a run of its own (CUPTI serves one client per process), and compares kernel
# counts and total kernel time (bench/gpu_check_compare.py). 2. The tuner's loop on the same
# sample: tune the events recording, re-run it under the plan through the interposed runtime, and
# compare predicted with measured (docs/tuner.md, "On a real GPU"): whether the plan applied to the
# end, the share of launches the runtime had to treat as barriers (kernel layouts read through
# cudaFuncGetParamInfo, as on simgpu), and the prediction's error. 3. torch.profiler's trace of
# the same steps, imported and tuned: the model's replay error on a real GPU's Kineto trace.
# 4. The collector's cost per launch on the real CUDA runtime (bench/collector/run_overhead.sh,
# RUNTIMES=cuda). 5. Where the build holds NVIDIA's nccl-tests (build/nccl-tests/single), each one
# recorded on the GPU: that it ends, how long it takes with and without the collector, and the
# collectives in its store. 6. The work-queue probe (bench/work_queues) with one queue and with
# CUDA's default: whether the GPU holds one stream's work behind another's as simgpu models
# CUDA_DEVICE_MAX_CONNECTIONS. Needs an NVIDIA GPU, its driver and PyTorch with CUDA; CI never runs it.
#   bench/gpu_check.sh [steps] [warmup]
# Exit 0 when both backends agree with torch.profiler (counts equal, total kernel time within 5%)
# and the tuner's loop ran to its comparison.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${SYNCOPATE_BUILD_DIR:-$root/build}"
python="${PYTHON:-python3}"
steps="${1:-20}"
warmup="${2:-5}"

fail() { echo "gpu_check: $*" >&2; exit 1; }
command -v nvidia-smi >/dev/null || fail "no nvidia-smi: this check needs a machine with an NVIDIA GPU and its driver"
nvidia-smi -L >/dev/null 2>&1 || fail "nvidia-smi sees no GPU"
"$python" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null ||
  fail "$python cannot use CUDA through PyTorch (install a CUDA build of torch, or set PYTHON)"
[ -x "$build/bin/syncopate" ] || fail "build syncopate first ($build/bin/syncopate is missing)"

out="${GPU_CHECK_DIR:-$(mktemp -d)}"
echo "gpu_check: results in $out"
nvidia-smi -L | head -1
"$python" -c 'import torch; print("torch", torch.__version__, "CUDA", torch.version.cuda, "NCCL", ".".join(map(str, torch.cuda.nccl.version())))'
sample=("$python" "$root/samples/pytorch_ddp.py" --steps "$steps" --warmup "$warmup")

# torch.profiler's own view of the measured steps, without the collector.
"${sample[@]}" --torch-profile "$out/torch_trace.json" > "$out/torch.log"
status=0
for backend in cupti events; do
  "$build/bin/syncopate" record --backend "$backend" -o "$out/$backend" -- "${sample[@]}" > "$out/$backend.log" 2>&1 ||
    fail "recording with --backend $backend failed (see $out/$backend.log)"
  used="$("$python" -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("select value from meta where key = '"'"'backend'"'"'").fetchone()[0])' "$out/$backend/rank-0.sqlite")"
  [ "$used" = "$backend" ] || echo "gpu_check: warning: asked for $backend, recorded with $used" >&2
  "$python" "$root/bench/gpu_check_compare.py" --store "$out/$backend/rank-0.sqlite" \
    --torch-trace "$out/torch_trace.json" --warmup "$warmup" --steps "$steps" --label "$backend" || status=1
  grep '^summary' "$out/$backend.log" | sed "s/^/$backend: /"
done
grep '^summary' "$out/torch.log" | sed 's/^/torch.profiler run: /'

# The tuner's loop. `tune` writes a plan only when one is predicted to gain --min-gain; on one GPU
# the all-reduces are local, so ask for any gain: what is checked is that a plan applies on a
# real GPU and that its prediction holds, not how much one rank can gain.
"$build/bin/syncopate" tune "$out/events" --min-gain 0 --json > "$out/tune.json" 2> "$out/tune.log" ||
  fail "tune failed on the events recording (see $out/tune.log)"
if [ -f "$out/events/plan.json" ]; then
  "$build/bin/syncopate" run --plan "$out/events/plan.json" -o "$out/tuned" --backend events -- "${sample[@]}" \
    > "$out/tuned.log" 2>&1 || fail "the run under the plan failed (see $out/tuned.log)"
  "$build/bin/syncopate" compare "$out/events" "$out/tuned" > "$out/compare.txt" 2>&1 ||
    fail "compare failed (see $out/compare.txt)"
  "$build/bin/syncopate" compare --json "$out/events" "$out/tuned" > "$out/compare.json" 2>/dev/null || true
  echo "tuner loop:"; cat "$out/compare.txt"
else
  echo "tuner loop: tune wrote no plan (see $out/tune.json)"; status=1
fi

# 3. A real GPU's Kineto trace, imported and tuned (docs/tuner.md, "On a real GPU").
if "$build/bin/syncopate" import kineto "$out/torch_trace.json" -o "$out/imported" > "$out/import.log" 2>&1 &&
   "$build/bin/syncopate" tune "$out/imported" --json > "$out/imported_tune.json" 2> "$out/imported_tune.log"; then
  "$python" -c 'import json, sys; t = json.load(open(sys.argv[1])); print("imported trace: replay_error", json.dumps(t.get("replay_error")), "recommendations", len(t.get("recommendations", [])))' "$out/imported_tune.json"
else
  echo "imported trace: import or tune failed (see $out/import.log, $out/imported_tune.log)"; status=1
fi

# 4. The collector's own cost per launch on the real runtime.
echo "collector cost per launch, real CUDA runtime:"
RUNTIMES=cuda SUSTAINED=0 SYNCOPATE_BUILD_DIR="$build" "$root/bench/collector/run_overhead.sh" 100000 || status=1

# 5. NVIDIA's nccl-tests on the GPU, without and with the collector.
if [ -d "$build/nccl-tests/single" ]; then
  echo "nccl-tests on one GPU (wall seconds without, with syncopate record; collectives in the store):"
  for test in all_reduce all_gather reduce_scatter broadcast sendrecv; do
    job=("$build/nccl-tests/single/${test}_perf" -g 1 -b 8 -e 64M -f 4 -w 5 -n 20)
    start="$(date +%s.%N)"; timeout 120 "${job[@]}" > "$out/$test.plain.log" 2>&1 || { echo "  $test: failed alone"; status=1; continue; }
    middle="$(date +%s.%N)"
    timeout 120 "$build/bin/syncopate" record -o "$out/nccl-$test" -- "${job[@]}" > "$out/$test.recorded.log" 2>&1 ||
      { echo "  $test: failed or hung under record (see $out/$test.recorded.log)"; status=1; continue; }
    end="$(date +%s.%N)"
    collectives="$("$python" -c 'import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); print(db.execute("select count(*) from ops where kind in (4, 5)").fetchone()[0], "".join(f", {n} {v}" for n, v in db.execute("select name, value from counters where name like '"'"'ops_%'"'"' and value != 0")))' "$(ls "$out/nccl-$test"/*.sqlite | head -1)")"
    "$python" -c 'import sys; a, b, c = map(float, sys.argv[1:4]); print(f"  {sys.argv[4]:<16} {b - a:7.2f} s {c - b:7.2f} s  collectives {sys.argv[5]}")' \
      "$start" "$middle" "$end" "$test" "$collectives"
  done
fi

# 6. Work queues on the real GPU, as simgpu models them (docs/simgpu.md, "Work queues").
echo "work queues (an event on a second stream, after a 10 ms kernel on the first):"
CUDA_DEVICE_MAX_CONNECTIONS=1 "$build/bin/work_queue_probe" || status=1
env -u CUDA_DEVICE_MAX_CONNECTIONS "$build/bin/work_queue_probe" || status=1
exit "$status"

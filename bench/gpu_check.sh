#!/usr/bin/env bash
# The collector on a real GPU (issue: "Real GPUs"): records one-rank DDP runs of
# samples/pytorch_ddp.py with the CUPTI backend and with the CUDA-event backend, traces the same
# steps with torch.profiler in a run of its own (CUPTI serves one client per process), and
# compares kernel counts and total kernel time (bench/gpu_check_compare.py). Needs an NVIDIA GPU,
# its driver and PyTorch with CUDA; CI never runs it.
#   bench/gpu_check.sh [steps] [warmup]
# Exit 0 when both backends agree with torch.profiler (counts equal, total kernel time within 5%).
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
  used="$(sqlite3 "$out/$backend/rank-0.sqlite" "select value from meta where key = 'backend'")"
  [ "$used" = "$backend" ] || echo "gpu_check: warning: asked for $backend, recorded with $used" >&2
  "$python" "$root/bench/gpu_check_compare.py" --store "$out/$backend/rank-0.sqlite" \
    --torch-trace "$out/torch_trace.json" --warmup "$warmup" --steps "$steps" --label "$backend" || status=1
  grep '^summary' "$out/$backend.log" | sed "s/^/$backend: /"
done
grep '^summary' "$out/torch.log" | sed 's/^/torch.profiler run: /'
exit "$status"

#!/bin/sh
# The critical path of every real trace of the shared folder (Kineto's .json.gz and Nsight's
# .sqlite under TRACES_DIR), next to what the path must agree with: how busy the GPU was and
# how long the host was blocked in synchronize calls, over the same windows (each analysed
# iteration's path, from its start to its last op's end). A path that calls a window host-bound
# while the GPU was busy through most of it and the host spent it blocked in syncs is a bug in
# the path, not a figure; docs/analyzer.md quotes this output and explains each row.
#
# Per trace: `syncopate import` (kineto or nsys), `syncopate analyze`, `syncopate export`; the
# figures are read from the export, whose slices share one time axis: the critical path's
# segments (their categories: the attribution), the GPU's ops (busy: the union of the kernels,
# copies, memsets and collectives of every stream, inside the path's windows) and the host's
# calls (blocked: the union of the synchronize calls, cudaDeviceSynchronize, cudaStreamSynchronize,
# cudaEventSynchronize and their driver forms, inside the same windows).
#
# Usage: bench/analyzer/critical_path_report.sh BUILD_DIR [TRACES_DIR]
set -eu
BUILD=$(cd "$1" && pwd)
TRACES=$(cd "${2:-$(dirname "$0")/../../../shared/traces}" && pwd)
SYNCOPATE=$BUILD/bin/syncopate
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

n=0
find "$TRACES" -name '*.json.gz' -o -name '*.sqlite' | sort | while read -r trace; do
  n=$((n + 1))
  run=$WORK/run-$n
  case "$trace" in
    *.sqlite) kind=nsys ;;
    *) kind=kineto ;;
  esac
  "$SYNCOPATE" import "$kind" "$trace" -o "$run" >/dev/null 2>&1 || { echo "${trace#"$TRACES"/}: import failed"; continue; }
  "$SYNCOPATE" analyze --no-save "$run" >/dev/null 2>&1 || { echo "${trace#"$TRACES"/}: analyze failed"; continue; }
  "$SYNCOPATE" export "$run" -o "$run.chrome.json" >/dev/null 2>&1 || { echo "${trace#"$TRACES"/}: export failed"; continue; }
  python3 - "${trace#"$TRACES"/}" "$run.chrome.json" <<'EOF'
import json, sys

name, chrome = sys.argv[1], sys.argv[2]
doc = json.load(open(chrome))
events = doc["traceEvents"] if isinstance(doc, dict) else doc
slices = [e for e in events if e.get("ph") == "X"]
path = [e for e in slices if e.get("pid") == -1]
BLOCKING = {"cudaDeviceSynchronize", "cudaThreadSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize",
            "cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize"}
GPU = {"compute", "memory", "communication"}
STREAM_TID = 1000000000  # the export's GPU stream tracks are tids from here on

def union(intervals):
    out = []
    for a, b in sorted(intervals):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out

def measure_inside(intervals, windows):
    total = 0.0
    for a, b in union(intervals):
        for wa, wb in windows:
            total += max(0.0, min(b, wb) - max(a, wa))
    return total

iterations = {}
for e in path:
    it = e["args"]["iteration"]
    a, b = iterations.get(it, (e["ts"], e["ts"] + e["dur"]))
    iterations[it] = (min(a, e["ts"]), max(b, e["ts"] + e["dur"]))
windows = union(iterations.values())
length = sum(b - a for a, b in windows)
if length <= 0:
    print(f"{name}: no critical path")
    sys.exit(0)
categories = {}
for e in path:
    categories[e["cat"]] = categories.get(e["cat"], 0.0) + e["dur"]
busy = measure_inside([(e["ts"], e["ts"] + e["dur"]) for e in slices
                       if e.get("pid", -1) >= 0 and e.get("tid", 0) >= STREAM_TID and e.get("cat") in GPU], windows)
blocked = measure_inside([(e["ts"], e["ts"] + e["dur"]) for e in slices
                          if e.get("pid", -1) >= 0 and e.get("tid", 0) < STREAM_TID and e.get("name") in BLOCKING], windows)
order = ["compute", "memory", "communication", "straggler_wait", "launch", "host", "sync", "idle"]
shares = " ".join(f"{c} {100 * categories.get(c, 0) / length:.1f}" for c in order if categories.get(c, 0) > 0)
print(f"{name}\n  {len(iterations)} iteration(s), path {length / 1e3:.3f} ms: {shares} (% of the path)\n"
      f"  GPU busy {100 * busy / length:.1f}%, host blocked in syncs {100 * blocked / length:.1f}% (of the same windows)")
EOF
done

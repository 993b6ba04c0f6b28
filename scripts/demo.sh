#!/usr/bin/env bash
# The main job on a fresh Debian machine: install, build, then run the sample data-parallel
# trainer on simgpu across 4 ranks, in both gradient synchronisation modes. By default the
# trainer models a GPT-1.3B step on 4 hosts linked at 400 Gb/s, where communication is half
# of the naive step (samples/dp_trainer/profiles/comm-heavy.json; docs/dp_trainer.md).
# Extra arguments go to dp_trainer (e.g. --iterations 20).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${SYNCOPATE_BUILD_DIR:-$root/build}"
export SIMGPU_PROFILE="${SIMGPU_PROFILE:-$root/samples/dp_trainer/profiles/comm-heavy.json}"
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
echo "== what the machine profile predicts ($SIMGPU_PROFILE)"
"$build/bin/dp_trainer" --predict --ranks 4 "$@"
echo "== naive: all-reduce after backward, on the compute stream"
"$root/scripts/run-on-simgpu.sh" -np 4 "$build/bin/dp_trainer" --mode naive "$@"
echo "== overlap: DDP-like buckets on a communication stream during backward"
"$root/scripts/run-on-simgpu.sh" -np 4 "$build/bin/dp_trainer" --mode overlap "$@"

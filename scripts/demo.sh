#!/usr/bin/env bash
# The main job on a fresh Debian machine: install, build, then run Syncopate's whole loop on
# simgpu with the sample trainer (`syncopate demo`): record dp_trainer in naive mode on 4
# simulated GPUs (a GPT-1.3B step on 4 hosts linked at 400 Gb/s, where communication is a third
# of the step: samples/dp_trainer/profiles/comm-heavy.json), analyse it, tune it, re-run the
# unchanged trainer with the plan, and compare. The runs are kept in ./syncopate-demo (or the
# directory given with -o). Extra arguments go to `syncopate demo` (e.g. --with-overlap, --json).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${SYNCOPATE_BUILD_DIR:-$root/build}"
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
output="syncopate-demo"
for arg in "$@"; do
  if [ "$arg" = "-o" ] || [ "$arg" = "--output" ]; then output=""; fi
done
if [ -n "$output" ]; then
  # A previous demo's runs make way for this one's.
  rm -rf "$output/baseline" "$output/tuned" "$output/overlap"
  set -- -o "$output" "$@"
fi
"$build/bin/syncopate" demo "$@"

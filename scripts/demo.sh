#!/usr/bin/env bash
# The main job on a fresh Debian machine: install, build, then run the sample data-parallel
# trainer on simgpu across 4 ranks, in both gradient synchronisation modes.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${SYNCOPATE_BUILD_DIR:-$root/build}"
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
"$root/scripts/run-on-simgpu.sh" -np 4 "$build/bin/dp_trainer" --mode naive "$@"
"$root/scripts/run-on-simgpu.sh" -np 4 "$build/bin/dp_trainer" --mode overlap "$@"

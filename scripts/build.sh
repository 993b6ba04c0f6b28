#!/usr/bin/env bash
# Configures and builds the project into build/ (or $SYNCOPATE_BUILD_DIR).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${SYNCOPATE_BUILD_DIR:-$root/build}"
cuda_root="${CUDAToolkit_ROOT:-/usr/local/cuda}"
export PATH="$cuda_root/bin:$PATH"
jobs="${SYNCOPATE_JOBS:-$(nproc)}"

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE="${SYNCOPATE_BUILD_TYPE:-RelWithDebInfo}" "$@"
cmake --build "$build" -j "$jobs"

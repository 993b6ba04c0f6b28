#!/usr/bin/env bash
# Configures and builds the project into build/ (or $SYNCOPATE_BUILD_DIR).
# A unity build by default (CMake joins each target's sources into a few files): header-only
# libraries (CLI11, nlohmann/json, GoogleTest, Qt's templates) are then compiled once per batch
# rather than once per file, which is most of a build from scratch on a small machine.
# SYNCOPATE_UNITY_BUILD=OFF builds file by file: quicker to rebuild after editing one file.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${SYNCOPATE_BUILD_DIR:-$root/build}"
cuda_root="${CUDAToolkit_ROOT:-/usr/local/cuda}"
export PATH="$cuda_root/bin:$PATH"
jobs="${SYNCOPATE_JOBS:-$(nproc)}"

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE="${SYNCOPATE_BUILD_TYPE:-RelWithDebInfo}" \
  -DCMAKE_UNITY_BUILD="${SYNCOPATE_UNITY_BUILD:-ON}" "$@"
cmake --build "$build" -j "$jobs"

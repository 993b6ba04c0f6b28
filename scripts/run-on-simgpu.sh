#!/usr/bin/env bash
# Runs a program (optionally under mpirun: first argument -np N) on simgpu instead of a GPU:
# simgpu's libcudart.so.13 / libnccl.so.2 come first on the library path.
#   scripts/run-on-simgpu.sh -np 4 build/bin/dp_trainer --mode naive
#   scripts/run-on-simgpu.sh build/bin/some_cuda_program
# SYNCOPATE_MPIEXEC and SYNCOPATE_MPIRUN_FLAGS (space-separated) replace mpirun and its flags
# (the test suite passes CMake's).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${SYNCOPATE_BUILD_DIR:-$root/build}"
export LD_LIBRARY_PATH="$build/lib/simgpu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if [ "${1:-}" = "-np" ]; then
  np="$2"; shift 2
  # Open MPI refuses root without these; 4 ranks on 2 cores need --oversubscribe.
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  read -ra flags <<< "${SYNCOPATE_MPIRUN_FLAGS:---oversubscribe --bind-to none --mca btl self,vader}"
  forward=(-x LD_LIBRARY_PATH)
  # Forwarded only when set: mpirun warns about an unset one.
  if [ -n "${SIMGPU_PROFILE+set}" ]; then forward+=(-x SIMGPU_PROFILE); fi
  exec "${SYNCOPATE_MPIEXEC:-mpirun}" -np "$np" "${flags[@]}" "${forward[@]}" "$@"
fi
exec "$@"

#!/usr/bin/env bash
# Installs every Debian package the build, the tests and the demo need.
# The CUDA 13 toolkit (nvcc, cudart/CUPTI/NVTX/NCCL headers) is not a Debian package; it is
# expected in /usr/local/cuda (or CUDAToolkit_ROOT) and checked here.
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config          # the build
  libgtest-dev libgmock-dev                 # unit and integration tests
  libbenchmark-dev                          # bench/
  valgrind                                  # bench/collector/launch_instructions.sh: instructions per launch
  libsqlite3-dev sqlite3                    # the run store (sqlite3: inspecting stores by hand)
  nlohmann-json3-dev                        # profiles, plans, meta.json, --json
  libcli11-dev                              # the syncopate command line
  libfmt-dev                                # formatted output in the tools
  libopenmpi-dev openmpi-bin                # samples bootstrap with MPI; multi-rank tests use mpirun
  libsimdjson-dev libdeflate-dev zlib1g-dev # fast import of Kineto .json.gz traces
  qt6-base-dev libgl-dev                    # the GUI (Qt 6 Widgets; Qt's Gui module needs GL headers)
  libiberty-dev                             # simgpu: kernel parameter layouts from mangled names
)

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  "${sudo_cmd[@]}" apt-get update
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all Debian packages present"
fi

cuda_root="${CUDAToolkit_ROOT:-/usr/local/cuda}"
if [ ! -x "$cuda_root/bin/nvcc" ] || [ ! -f "$cuda_root/include/nccl.h" ]; then
  echo "install-deps: the CUDA 13 toolkit (with NCCL headers) was not found in $cuda_root;" >&2
  echo "install-deps: install it from NVIDIA and set CUDAToolkit_ROOT if it lives elsewhere." >&2
  exit 1
fi

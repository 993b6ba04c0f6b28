#!/usr/bin/env bash
# Checks that every __global__ kernel in a CUDA program has a CPU implementation for simgpu:
# an exported `simgpu_cpu_<mangled kernel name>` (docs/simgpu.md, "Kernels: names, parameters,
# CPU implementations"). nvcc emits a host stub `__device_stub_<mangled kernel name>` per
# kernel; its mangled form is _Z<length>__device_stub_<kernel>..., from which the kernel's
# mangled name is cut out. A template kernel's host stub is instead a file-local function named
# like the kernel, with the internal-linkage marker L before the kernel's own name
# (_ZN2ns6deviceL4gemmI...); without the L it is the device name the binary registers, which
# stands among its strings.
set -euo pipefail
binary="$1"
plain=$(nm "$binary" | awk '$2 ~ /^[Tt]$/ && $3 ~ /^_Z[0-9]+__device_stub__Z/ {
  name = $3; sub(/^_Z/, "", name)
  match(name, /^[0-9]+/); len = substr(name, 1, RLENGTH) + 0
  id = substr(name, RLENGTH + 1, len)
  sub(/^__device_stub_/, "", id)
  print id }')
registered=$(strings -n 8 "$binary" | grep -E '^_Z[A-Za-z0-9_]+$' | sort -u)
templates=$(nm "$binary" | awk '$2 ~ /^[tT]$/ && $3 ~ /^_ZN.*L[0-9]+[A-Za-z_].*I/ && $3 !~ /[.]/ && $3 !~ /__device_stub/ {
  name = $3; sub(/L/, "", name); print name }' | grep -Fx -f <(printf '%s\n' "$registered") || true)
kernels=$(printf '%s\n%s\n' "$plain" "$templates" | grep -v '^$' | sort -u)
if [ -z "$kernels" ]; then
  echo "check_cpu_kernels: no kernels found in $binary" >&2
  exit 1
fi
exported=$(nm -D --defined-only "$binary" | awk '{print $3}')
missing=0
for kernel in $kernels; do
  if grep -qx "simgpu_cpu_$kernel" <<<"$exported"; then
    echo "ok      $kernel"
  else
    echo "MISSING simgpu_cpu_$kernel" >&2
    missing=1
  fi
done
exit $missing

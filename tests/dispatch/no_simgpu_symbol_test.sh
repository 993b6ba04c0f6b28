#!/bin/sh
# Fails when the preload library imports, exports or names (a string a dlsym could be given)
# anything of simgpu's: the product may only use what CUDA, NCCL and CUPTI offer.
set -eu
library="$1"
[ -f "$library" ] || { echo "no preload library at $library" >&2; exit 1; }
symbols=$(nm -D "$library")
[ -n "$symbols" ] || { echo "nm -D listed nothing for $library" >&2; exit 1; }
# The dynamic symbol table must hold what the test looks for, so that an empty search proves
# something: the interposed runtime's entry points.
echo "$symbols" | grep -q ' cudaLaunchKernel$' || { echo "nm -D $library lacks cudaLaunchKernel" >&2; exit 1; }
found=$( { echo "$symbols"; strings -a "$library"; } | grep -i 'simgpu' || true)
if [ -n "$found" ]; then
  echo "$library refers to simgpu:" >&2
  echo "$found" >&2
  exit 1
fi
echo "no simgpu name among $(echo "$symbols" | wc -l) dynamic symbols and the strings of $library"

#!/usr/bin/env bash
# How close `syncopate import kineto` + `syncopate analyze` comes to the floor of reading a
# gzip trace at all (docs/analyzer.md, "Benchmarks"): on each trace, side by side,
#   zcat      `zcat FILE > /dev/null`
#   inflate   libdeflate alone (build/bin/syncopate_inflate_floor: read and inflate, nothing else)
#   import    `syncopate import kineto FILE -o DIR` then `syncopate analyze DIR`
# run in turn REPEATS times (alternating, so that a busy machine slows all three alike), and
# the medians and their ratios printed. Wall time is taken with the shell's microsecond clock,
# CPU time (user + system, 10 ms resolution) with /usr/bin/time.
#
# HTA (Holistic Trace Analysis, Python) cannot run here; the ratio to it is computed from the
# time HTA took on df_index_resolver when measured side by side with this importer on an idle 2-core machine (3.9-4.2 s) and is printed as implied.
#
# Usage: bench/analyzer/import_floor.sh [BUILD_DIR] [REPEATS] [TRACE...]
#   (defaults: build, 11, HTA's largest test trace, df_index_resolver.json.gz)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
repeats="${2:-11}"
shift $(($# < 2 ? $# : 2))
traces=("$@")
[ ${#traces[@]} -gt 0 ] || traces=("$root/../shared/traces/kineto/df_index_resolver/df_index_resolver.json.gz")
syncopate="$build/bin/syncopate"
inflate="$build/bin/syncopate_inflate_floor"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

# timed NAME COMMAND: runs COMMAND (a shell line), appends "wall cpu" to $work/NAME.
timed() {
  local name="$1" line="$2" start end
  start=$EPOCHREALTIME
  /usr/bin/time -f "%U %S" -o "$work/cpu" sh -c "$line" >/dev/null 2>&1
  end=$EPOCHREALTIME
  awk -v s="$start" -v e="$end" '{ printf "%.4f %.2f\n", e - s, $1 + $2 }' "$work/cpu" >>"$work/$name"
}

for trace in "${traces[@]}"; do
  echo "== $(basename "$trace"): $(stat -c %s "$trace") bytes gzip, $(zcat "$trace" | wc -c) bytes of JSON;" \
       "$repeats alternating runs of each"
  : >"$work/zcat"; : >"$work/inflate"; : >"$work/import"
  for ((i = 0; i < repeats; i++)); do
    timed zcat "zcat '$trace'"
    timed inflate "'$inflate' '$trace'"
    rm -rf "$work/run"
    timed import "'$syncopate' import kineto '$trace' -o '$work/run' && '$syncopate' analyze '$work/run'"
  done
  [ -f "$work/run/analysis.json" ] || { echo "import_floor: the import or the analysis failed" >&2; exit 1; }
  for name in zcat inflate import; do
    wall=$(cut -d' ' -f1 "$work/$name" | median); cpu=$(cut -d' ' -f2 "$work/$name" | median)
    eval "${name}_wall=$wall ${name}_cpu=$cpu"
    printf '  %-8s median wall %.3f s, CPU %.2f s (walls: %s)\n' "$name" "$wall" "$cpu" \
      "$(cut -d' ' -f1 "$work/$name" | tr '\n' ' ')"
  done
  echo "  import + analyze / zcat:    wall $(ratio "$import_wall" "$zcat_wall")x, CPU $(ratio "$import_cpu" "$zcat_cpu")x"
  echo "  import + analyze / inflate: wall $(ratio "$import_wall" "$inflate_wall")x, CPU $(ratio "$import_cpu" "$inflate_cpu")x"
  if [ "$(basename "$trace")" = df_index_resolver.json.gz ]; then
    echo "  vs HTA (implied: HTA's 3.9-4.2 s measured side by side with this importer on an idle 2-core machine, not run here):" \
         "$(ratio 3.9 "$import_wall")-$(ratio 4.2 "$import_wall")x faster"
  fi
done
echo "machine load while measuring: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"

#!/bin/sh
# The analyzer's two whole-run benchmarks (docs/analyzer.md quotes their output):
#   1. `syncopate analyze` of a synthetic run of 10 million ops over 64 ranks: wall time and
#      peak memory (targets: under 10 s and 2 GB on the 2-core build machine);
#   2. `syncopate import kineto` + `syncopate analyze` of the largest real Kineto trace, timed
#      side by side with `zcat FILE > /dev/null` (target: at most 3x).
# Each measurement is repeated and the median reported, alternating the compared commands so
# that a busy machine slows both alike.
#
# Usage: bench/analyzer/run_benchmarks.sh BUILD_DIR [TRACES_DIR] [REPEATS]
set -eu
BUILD=$(cd "$1" && pwd)
TRACES=${2:-$(dirname "$0")/../../../shared/traces}
REPEATS=${3:-5}
SYNCOPATE=$BUILD/bin/syncopate
DATA=$BUILD/bench-data
mkdir -p "$DATA"
TIME=/usr/bin/time

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "== synthetic run: 10,000,000 ops over 64 ranks (8 hosts)"
if [ ! -f "$DATA/synthetic-10M/rank-63.sqlite" ]; then
  rm -rf "$DATA/synthetic-10M"
  "$BUILD/bin/syncopate_synthetic_run" "$DATA/synthetic-10M" 10000000 64 8
fi
du -sh "$DATA/synthetic-10M" | awk '{ print "stores on disk: " $1 }'
: >"$DATA/synthetic.times"
i=0
while [ "$i" -lt 3 ]; do
  $TIME -f "%e %M %U %S" -o "$DATA/t" "$SYNCOPATE" analyze "$DATA/synthetic-10M" >/dev/null 2>&1
  cat "$DATA/t" >>"$DATA/synthetic.times"
  i=$((i + 1))
done
echo "syncopate analyze: median wall $(cut -d' ' -f1 "$DATA/synthetic.times" | median) s," \
     "peak RSS $(cut -d' ' -f2 "$DATA/synthetic.times" | median) KB," \
     "CPU (user+sys) $(awk '{ print $3 + $4 }' "$DATA/synthetic.times" | median) s (wall of each run: $(cut -d' ' -f1 "$DATA/synthetic.times" | tr '\n' ' '))"
echo "machine load while measuring: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"

TRACE=$TRACES/kineto/df_index_resolver/df_index_resolver.json.gz
echo "== largest real trace: $(basename "$TRACE") ($(zcat "$TRACE" | wc -c) bytes of JSON)"
: >"$DATA/zcat.times"
: >"$DATA/import.times"
i=0
while [ "$i" -lt "$REPEATS" ]; do
  $TIME -f "%e %U %S" -o "$DATA/t" sh -c "zcat '$TRACE' > /dev/null"
  cat "$DATA/t" >>"$DATA/zcat.times"
  rm -rf "$DATA/kineto-run"
  $TIME -f "%e %U %S" -o "$DATA/t" sh -c "'$SYNCOPATE' import kineto '$TRACE' -o '$DATA/kineto-run' > /dev/null 2>&1 &&
                                     '$SYNCOPATE' analyze '$DATA/kineto-run' > /dev/null"
  cat "$DATA/t" >>"$DATA/import.times"
  i=$((i + 1))
done
Z=$(cut -d' ' -f1 "$DATA/zcat.times" | median)
I=$(cut -d' ' -f1 "$DATA/import.times" | median)
ZC=$(awk '{ print $2 + $3 }' "$DATA/zcat.times" | median)
IC=$(awk '{ print $2 + $3 }' "$DATA/import.times" | median)
echo "zcat FILE > /dev/null:                 median wall $Z s, CPU $ZC s (walls: $(cut -d' ' -f1 "$DATA/zcat.times" | tr '\n' ' '))"
echo "syncopate import kineto + analyze:     median wall $I s, CPU $IC s (walls: $(cut -d' ' -f1 "$DATA/import.times" | tr '\n' ' '))"
echo "ratio: wall $(echo "$I $Z" | awk '{ printf "%.2f", $1 / $2 }')x, CPU $(echo "$IC $ZC" | awk '{ printf "%.2f", $1 / $2 }')x"
echo "machine load while measuring: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"

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
  $TIME -f "%e %M" -o "$DATA/t" "$SYNCOPATE" analyze "$DATA/synthetic-10M" >/dev/null 2>&1
  cat "$DATA/t" >>"$DATA/synthetic.times"
  i=$((i + 1))
done
echo "syncopate analyze: median wall $(cut -d' ' -f1 "$DATA/synthetic.times" | median) s," \
     "peak RSS $(cut -d' ' -f2 "$DATA/synthetic.times" | median) KB (runs: $(cut -d' ' -f1 "$DATA/synthetic.times" | tr '\n' ' '))"

TRACE=$TRACES/kineto/df_index_resolver/df_index_resolver.json.gz
echo "== largest real trace: $(basename "$TRACE") ($(zcat "$TRACE" | wc -c) bytes of JSON)"
: >"$DATA/zcat.times"
: >"$DATA/import.times"
i=0
while [ "$i" -lt "$REPEATS" ]; do
  $TIME -f "%e" -o "$DATA/t" sh -c "zcat '$TRACE' > /dev/null"
  cat "$DATA/t" >>"$DATA/zcat.times"
  rm -rf "$DATA/kineto-run"
  $TIME -f "%e" -o "$DATA/t" sh -c "'$SYNCOPATE' import kineto '$TRACE' -o '$DATA/kineto-run' > /dev/null &&
                                     '$SYNCOPATE' analyze '$DATA/kineto-run' > /dev/null"
  cat "$DATA/t" >>"$DATA/import.times"
  i=$((i + 1))
done
Z=$(median <"$DATA/zcat.times")
I=$(median <"$DATA/import.times")
echo "zcat FILE > /dev/null:                 median $Z s (runs: $(tr '\n' ' ' <"$DATA/zcat.times"))"
echo "syncopate import kineto + analyze:     median $I s (runs: $(tr '\n' ' ' <"$DATA/import.times"))"
echo "ratio: $(echo "$I $Z" | awk '{ printf "%.2f", $1 / $2 }')x"

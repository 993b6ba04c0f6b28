#!/bin/sh
# End-to-end checks of `syncopate analyze|import|export`: exit codes and the sentences users see.
# Usage: cli_test.sh SYNCOPATE TRACES_DIR
set -u
SYNCOPATE=$1
TRACES=$2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
failures=0

. "$(dirname "$0")/../cli_expect.sh"

expect 1 "^syncopate analyze: .*$WORK/nope" -- "$SYNCOPATE" analyze "$WORK/nope"
mkdir "$WORK/empty"
expect 1 "holds no run store" -- "$SYNCOPATE" analyze "$WORK/empty"
mkdir "$WORK/garbage" && echo "hello, not a database" >"$WORK/garbage/rank-0.sqlite"
expect 1 "not a SQLite database" -- "$SYNCOPATE" analyze "$WORK/garbage"
expect nonzero "subcommand is required" -- "$SYNCOPATE"
expect 1 "^syncopate analyze: --distributed needs the processes of an MPI job: start it with mpirun or srun" -- \
  env -u OMPI_COMM_WORLD_SIZE -u PMI_SIZE -u PMIX_RANK "$SYNCOPATE" analyze "$WORK/garbage" --distributed
expect 0 "import" -- "$SYNCOPATE" --help

expect nonzero "excludes" -- "$SYNCOPATE" analyze "$WORK/garbage" --distributed --single-process

SMALL=$TRACES/kineto/nccl_parser_config/nccl_data.json.gz
[ -f "$SMALL" ] || { echo "FAIL: $SMALL, a shared trace these checks read, is missing"; failures=$((failures + 1)); }
if [ -f "$SMALL" ]; then
  expect 0 "imported 1 store" -- "$SYNCOPATE" import kineto "$SMALL" -o "$WORK/run"
  expect 1 "rank-0.sqlite: File exists" -- "$SYNCOPATE" import kineto "$SMALL" -o "$WORK/run"
  expect 0 "Per iteration" -- "$SYNCOPATE" analyze "$WORK/run"
  expect 0 '"overlap_ratio"' -- "$SYNCOPATE" analyze "$WORK/run" --json
  # A launcher's variables inherited by one process (a job's script analysing on one rank).
  expect 0 "Per iteration" -- env OMPI_COMM_WORLD_SIZE=4 "$SYNCOPATE" analyze --no-save --single-process "$WORK/run"
  [ -f "$WORK/run/analysis.json" ] && [ -f "$WORK/run/analysis.sqlite" ] || { echo "FAIL: results not saved"; failures=$((failures + 1)); }
  expect 1 "no rank has an NVTX range named 'no_such_step'" -- "$SYNCOPATE" analyze "$WORK/run" --iteration-marker no_such_step
  # The allocator's modes (cli/allocation_policy.hpp: freed memory kept or given back) change no
  # result: the same trace imported and analysed in each gives the same analysis.
  for mode in 0 1; do
    expect 0 "imported 1 store" -- env SYNCOPATE_KEEP_FREED_MEMORY=$mode "$SYNCOPATE" import kineto "$SMALL" -o "$WORK/mode$mode"
    expect 0 '"overlap_ratio"' -- env SYNCOPATE_KEEP_FREED_MEMORY=$mode "$SYNCOPATE" analyze "$WORK/mode$mode" --json
    sed "s|$WORK/mode$mode|RUN|g" "$WORK/out" >"$WORK/mode$mode.json"
  done
  cmp -s "$WORK/mode0.json" "$WORK/mode1.json" ||
    { echo "FAIL: the analysis differs between the allocator's modes"; failures=$((failures + 1)); }
  expect 0 "wrote $WORK/t.json" -- "$SYNCOPATE" export "$WORK/run" --format chrome -o "$WORK/t.json"
  expect 1 "unknown format 'svg'" -- "$SYNCOPATE" export "$WORK/run" --format svg -o "$WORK/t.svg"
  # Cut off mid-write: the complete events before the cut are imported, and both commands warn.
  head -c 100000 "$SMALL" >"$WORK/cut.json.gz"
  expect 0 "warning: the source trace was cut off while it was written (its text stops at byte [0-9]*, its gzip stream at compressed byte 100000 before its end)" -- "$SYNCOPATE" import kineto "$WORK/cut.json.gz" -o "$WORK/run2"
  expect 0 "rank-0.sqlite: import: the source trace was cut off" -- "$SYNCOPATE" analyze --no-save "$WORK/run2"
  # Damaged in the middle: refused.
  cp "$SMALL" "$WORK/damaged.json.gz"
  printf 'damaged!damaged!' | dd of="$WORK/damaged.json.gz" bs=1 seek=50000 conv=notrunc status=none
  expect 1 "not valid gzip (damaged at compressed byte" -- "$SYNCOPATE" import kineto "$WORK/damaged.json.gz" -o "$WORK/run4"
  if command -v sqlite3 >/dev/null; then
    cp -r "$WORK/run" "$WORK/future"
    sqlite3 "$WORK/future/rank-0.sqlite" "UPDATE meta SET value = '9.0' WHERE key = 'schema_version'"
    expect 1 "9.0" -- "$SYNCOPATE" analyze "$WORK/future"
  fi
else
  echo "FAIL: $SMALL is missing: the real-trace checks read the shared folder beside the repository in place"
  failures=$((failures + 1))
fi
expect 1 "not an SQLite database" -- "$SYNCOPATE" import nsys "$WORK/garbage/rank-0.sqlite" -o "$WORK/run3"

[ "$failures" -eq 0 ] && echo "all CLI checks passed" || echo "$failures CLI check(s) failed"
[ "$failures" -eq 0 ]

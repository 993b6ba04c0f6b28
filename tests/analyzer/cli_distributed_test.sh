#!/bin/sh
# `syncopate analyze` under mpirun, end to end: two processes, each analysing its own ranks and
# walking their legs of the critical path while the root takes only what they share, print and
# save what one process does, with the critical path and without it, on the synthetic run, the
# recorded and imported fixtures and a real two-rank PyTorch trace; a store one process cannot
# read leaves a partial analysis that names it; more processes than stores, or a share larger
# than --memory-limit with the critical path, is refused with a sentence and a non-zero exit.
# Without the critical path, a run (or a process's share) over its memory limit is analysed in
# batches of stores: the same results again.
# Usage: cli_distributed_test.sh SYNCOPATE SYNTHETIC_RUN TRACES MPIEXEC [MPIRUN_FLAGS...]
set -u
SYNCOPATE=$1 SYNTHETIC=$2 TRACES=$3 MPIEXEC=$4
shift 4
FIXTURES=$(cd "$(dirname "$0")/../fixtures" && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
failures=0

. "$(dirname "$0")/../cli_expect.sh"

"$SYNTHETIC" "$WORK/run" 16000 8 4 2>/dev/null || { echo "FAIL: the synthetic run could not be written"; exit 1; }
expect 0 "Per iteration" -- "$SYNCOPATE" analyze "$WORK/run"
mkdir "$WORK/single" && cp "$WORK/run/analysis.json" "$WORK/run/analysis.sqlite" "$WORK/single/"
expect 0 "Per iteration" -- "$MPIEXEC" "$@" -n 2 "$SYNCOPATE" analyze "$WORK/run"
for f in analysis.json analysis.sqlite; do
  cmp -s "$WORK/single/$f" "$WORK/run/$f" && echo "ok: $f of two processes equals one process's" ||
    { echo "FAIL: $f of two processes differs from one process's"; failures=$((failures + 1)); }
done
expect 0 "distributed analysis: 2 processes, stores read and analysed per process: 4 4, in batches: 1 1; the root's model of what the ranks share: [0-9.]* MiB; the critical path in [1-9][0-9]* legs over [1-9][0-9]* rounds; [0-9]* bytes exchanged; peak RSS per process (MB): [0-9]* [0-9]*$" -- \
  "$MPIEXEC" "$@" -n 2 "$SYNCOPATE" analyze "$WORK/run" --no-save --timings --distributed
expect nonzero "^syncopate analyze: 9 processes were started for the 8 stores of $WORK/run: start at most one process per store" -- \
  "$MPIEXEC" "$@" -n 9 "$SYNCOPATE" analyze "$WORK/run" --no-save
# A memory limit the model would pass (16016 ops and calls need 1.39 MiB, modelBytesEstimate):
# one process refuses the run before reading it. Under mpirun the limit is each process's: its 4
# stores fit 1000000 bytes, but not 600000 (3 stores of 2002 ops each, then 1), and the critical
# path walks a process's ranks at once, so every process refuses it and none is left waiting. A
# limit above the estimate, or none (0), analyses the run.
expect nonzero "^syncopate analyze: the run's 16016 GPU ops and 16016 API calls need about 1.39 MiB in one process (docs/analyzer.md, \"Memory\"), more than the 0.95 MiB it may use (--memory-limit): give a larger --memory-limit (0 for none)" -- \
  "$SYNCOPATE" analyze "$WORK/run" --no-save --memory-limit 1000000
expect 0 "Per iteration" -- "$MPIEXEC" "$@" -n 2 "$SYNCOPATE" analyze "$WORK/run" --no-save --memory-limit 1000000
expect nonzero "^syncopate analyze: process 0 of 2 on .*: its stores need 2 batches to fit 0.57 MiB (--memory-limit), and the critical path walks a process's ranks at once: start more processes, raise the limit, or analyse without the critical path (--no-critical-path)" -- \
  "$MPIEXEC" "$@" -n 2 "$SYNCOPATE" analyze "$WORK/run" --no-save --memory-limit 600000
expect 0 "Per iteration" -- "$SYNCOPATE" analyze "$WORK/run" --no-save --memory-limit 1500000
# Without the critical path, one process analyses a run over the limit in batches of stores that
# fit (3 of 3, 3 and 2 stores at 2002 ops each), and writes what a whole load writes; with it the
# refusal says so; a limit under one store's need is refused naming the store.
expect nonzero "or analyse it without the critical path (--no-critical-path), in batches of stores that fit" -- \
  "$SYNCOPATE" analyze "$WORK/run" --no-save --memory-limit 600000
"$SYNCOPATE" analyze "$WORK/run" --no-critical-path >"$WORK/whole.txt" 2>/dev/null
mkdir -p "$WORK/whole" && cp "$WORK/run/analysis.json" "$WORK/run/analysis.sqlite" "$WORK/whole/"
expect 0 "analysed in 3 batches of its stores, each store read twice" -- \
  "$SYNCOPATE" analyze "$WORK/run" --no-critical-path --memory-limit 600000
for f in analysis.json analysis.sqlite; do
  cmp -s "$WORK/whole/$f" "$WORK/run/$f" && echo "ok: $f of the run analysed in batches equals a whole load's" ||
    { echo "FAIL: $f of the run analysed in batches differs from a whole load's"; failures=$((failures + 1)); }
done
"$SYNCOPATE" analyze "$WORK/run" --no-critical-path --no-save --memory-limit 600000 2>/dev/null | cmp -s - "$WORK/whole.txt" &&
  echo "ok: the report of the run analysed in batches equals a whole load's" ||
  { echo "FAIL: the report of the run analysed in batches differs"; failures=$((failures + 1)); }
expect nonzero "^syncopate analyze: rank-0.sqlite alone, whose 2002 GPU ops and 2002 API calls need about" -- \
  "$SYNCOPATE" analyze "$WORK/run" --no-critical-path --no-save --memory-limit 100000
expect 0 "Per iteration" -- "$SYNCOPATE" analyze "$WORK/run" --no-save --memory-limit 0
# expect_same_ranks_apart MODE RUN: analysed by one process and by two, each of them analysing
# its own ranks, RUN's results and report are the same, with the critical path (MODE "path",
# walked in legs by the processes holding its ranks) or without it (MODE "no-path").
expect_same_ranks_apart() {
  case $1 in path) mode= ;; *) mode=--no-critical-path ;; esac
  run=$2
  shift 2
  "$SYNCOPATE" analyze "$run" $mode >"$WORK/one.txt" 2>/dev/null &&
    mkdir -p "$WORK/one" && cp "$run/analysis.json" "$run/analysis.sqlite" "$WORK/one/" ||
    { echo "FAIL: one process could not analyse $run"; failures=$((failures + 1)); return; }
  "$MPIEXEC" "$@" -n 2 "$SYNCOPATE" analyze "$run" $mode >"$WORK/two.txt" 2>"$WORK/two.err" ||
    { echo "FAIL: two processes could not analyse $run: $(cat "$WORK/two.err")"; failures=$((failures + 1)); return; }
  what="$(basename "$run") analysed rank by rank (${mode:-with the critical path})"
  for f in analysis.json analysis.sqlite; do
    cmp -s "$WORK/one/$f" "$run/$f" && echo "ok: $f of $what equals one process's" ||
      { echo "FAIL: $f of $what differs from one process's"; failures=$((failures + 1)); }
  done
  cmp -s "$WORK/one.txt" "$WORK/two.txt" && echo "ok: the report of $what equals one process's" ||
    { echo "FAIL: the report of $what differs"; failures=$((failures + 1)); }
}
# expect_same_in_batches RUN LIMIT: one process over LIMIT analyses RUN in 2 batches of its
# stores and writes and prints what a whole load does (--no-critical-path).
expect_same_in_batches() {
  "$SYNCOPATE" analyze "$1" --no-critical-path >"$WORK/whole.txt" 2>/dev/null
  mkdir -p "$WORK/whole" && cp "$1/analysis.json" "$1/analysis.sqlite" "$WORK/whole/"
  "$SYNCOPATE" analyze "$1" --no-critical-path --memory-limit "$2" >"$WORK/batches.txt" 2>"$WORK/batches.err"
  grep -q "analysed in 2 batches" "$WORK/batches.err" && echo "ok: $(basename "$1") analysed in 2 batches" ||
    { echo "FAIL: $(basename "$1") was not analysed in 2 batches: $(cat "$WORK/batches.err")"; failures=$((failures + 1)); }
  for f in analysis.json analysis.sqlite; do
    cmp -s "$WORK/whole/$f" "$1/$f" && echo "ok: $f of $(basename "$1") analysed in batches equals a whole load's" ||
      { echo "FAIL: $f of $(basename "$1") analysed in batches differs"; failures=$((failures + 1)); }
  done
  cmp -s "$WORK/whole.txt" "$WORK/batches.txt" && echo "ok: the report of $(basename "$1") analysed in batches equals a whole load's" ||
    { echo "FAIL: the report of $(basename "$1") analysed in batches differs"; failures=$((failures + 1)); }
}
expect_same_ranks_apart no-path "$WORK/run" "$@"
# The same with each process's 4 stores in 2 batches (3 stores, then 1): the results again.
expect 0 "stores read and analysed per process: 4 4, in batches: 2 2;" -- \
  "$MPIEXEC" "$@" -n 2 "$SYNCOPATE" analyze "$WORK/run" --no-critical-path --memory-limit 600000 --timings
for f in analysis.json analysis.sqlite; do
  cmp -s "$WORK/one/$f" "$WORK/run/$f" && echo "ok: $f of run analysed rank by rank in batches equals one process's" ||
    { echo "FAIL: $f of run analysed rank by rank in batches differs from one process's"; failures=$((failures + 1)); }
done
expect 0 "distributed analysis: 2 processes, stores read and analysed per process: 4 4, in batches: 1 1; the root's model of what the ranks share: [0-9.]* MiB; [0-9]* bytes exchanged; peak RSS per process (MB): [0-9]* [0-9]*$" -- \
  "$MPIEXEC" "$@" -n 2 "$SYNCOPATE" analyze "$WORK/run" --no-save --no-critical-path --timings
expect nonzero "^syncopate analyze: no rank has an NVTX range named 'NoSuchStep'" -- \
  "$MPIEXEC" "$@" -n 2 "$SYNCOPATE" analyze "$WORK/run" --no-save --no-critical-path --iteration-marker NoSuchStep
cp -r "$FIXTURES/dp_trainer/input" "$WORK/dp_trainer"
expect_same_ranks_apart path "$WORK/dp_trainer" "$@"
expect_same_ranks_apart no-path "$WORK/dp_trainer" "$@"
expect_same_in_batches "$WORK/dp_trainer" 40000
"$SYNCOPATE" import kineto -o "$WORK/kineto" "$FIXTURES/kineto/input/rank-0.json" "$FIXTURES/kineto/input/rank-1.json" >/dev/null 2>&1
expect_same_ranks_apart path "$WORK/kineto" "$@"
expect_same_ranks_apart no-path "$WORK/kineto" "$@"
"$SYNCOPATE" import kineto -o "$WORK/trace_filter" "$TRACES/kineto/trace_filter/sampled_rank-0.json.gz" \
  "$TRACES/kineto/trace_filter/sampled_rank-1.json.gz" >/dev/null 2>&1
expect_same_ranks_apart path "$WORK/trace_filter" "$@"
expect_same_ranks_apart no-path "$WORK/trace_filter" "$@"
expect_same_in_batches "$WORK/trace_filter" 120000

echo "not a store" >"$WORK/run/rank-7.sqlite"
expect 0 "rank-7.sqlite: the analysis is partial: the store of rank 7 (rank-7.sqlite) could not be read by the process it was given to (process 1 of 2 on" -- \
  "$MPIEXEC" "$@" -n 2 "$SYNCOPATE" analyze "$WORK/run" --no-save
expect 0 "rank-7.sqlite: the analysis is partial: the store of rank 7 (rank-7.sqlite) could not be read by the process it was given to (process 1 of 2 on" -- \
  "$MPIEXEC" "$@" -n 2 "$SYNCOPATE" analyze "$WORK/run" --no-save --no-critical-path
# Each process holds its own ranks to the limit, in batches of stores that fit (3 and 1 of its 4,
# the second process's 3 readable ones in 3), and a store alone over the limit ends every process.
expect 0 "stores read and analysed per process: 4 4, in batches: 2 1;" -- \
  "$MPIEXEC" "$@" -n 2 "$SYNCOPATE" analyze "$WORK/run" --no-save --no-critical-path --memory-limit 600000 --timings
expect nonzero "^syncopate analyze: process 0 of 2 on .*: rank-0.sqlite alone, whose 2002 GPU ops and 2002 API calls need about" -- \
  "$MPIEXEC" "$@" -n 2 "$SYNCOPATE" analyze "$WORK/run" --no-save --no-critical-path --memory-limit 100000

[ "$failures" -eq 0 ] && echo "all distributed CLI checks passed" || echo "$failures distributed CLI check(s) failed"
[ "$failures" -eq 0 ]

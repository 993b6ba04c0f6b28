#!/bin/sh
# Distributed analysis at scale (docs/analyzer.md, "Distributed analysis"): a synthetic run of
# RANKS ranks, 8 per host, each ITERATIONS iterations of 1000 ops with all-reduces matched across
# all ranks, analysed once by a plain `syncopate analyze` (the reference) and then under mpirun by
# 1 and 2 processes: two each analysing the ranks whose stores they read and walking their legs
# of the critical path while the root takes what the ranks share; one, alone, as a plain analyze.
# Per run: wall time, the peak RSS of the largest process and of each process, the bytes the
# processes exchanged, the root's merge (its phases that are not its own ranks') and its model of
# what the ranks share, and whether analysis.json and analysis.sqlite equal the reference's byte
# for byte. The same again without
# the critical path (the reference a plain `syncopate analyze --no-critical-path`). Then the GUI
# opened on those results (first frame, one rank expanded), and, for both, a model fitted to these
# runs and ones of RANKS/4 ranks by two processes, extrapolated to 16384 ranks on 2048 nodes (one
# process per node).
#
# Usage: bench/analyzer/scale_out.sh [--json] BUILD_DIR [RANKS [ITERATIONS]]   (default 1024 20)
# --json prints one object: {"ranks", "ops", "identical", "runs": [{"processes", "wall_s",
# "peak_rss_mb_per_process" (the largest), "peak_rss_mb_of_each_process", "bytes_exchanged",
# "root_merge_s", "root_model_mib", "path_legs", "path_rounds"}], "extrapolation": {...},
# "without_critical_path": {"identical", "runs": [...], "extrapolation": {...}}, "gui":
# {"first_frame_ms", "rank_expanded_ms", "peak_rss_mb"} (null without the GUI)}; the rest goes to
# stderr.
set -eu
json=no
if [ "${1:-}" = "--json" ]; then json=yes; shift; fi
BUILD=$(cd "$1" && pwd)
RANKS=${2:-1024}
ITERATIONS=${3:-20}
OPS=$((RANKS * ITERATIONS * 1000))
SYNCOPATE=$BUILD/bin/syncopate
# One allocator mode for every run: the fit below compares two run sizes, which the size rule of
# cli/allocation_policy.hpp would analyse in different modes (the smaller faster).
export SYNCOPATE_KEEP_FREED_MEMORY=0
MPIRUN="mpirun --oversubscribe --bind-to none --mca btl self,vader"
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
RUN=$BUILD/bench-data/scale-out-$RANKS-$ITERATIONS
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
say() { if [ "$json" = yes ]; then echo "$@" >&2; else echo "$@"; fi; }

if [ ! -f "$RUN/rank-$((RANKS - 1)).sqlite" ] || [ ! -f "$RUN/written" ]; then
  rm -rf "$RUN"
  "$BUILD/bin/syncopate_synthetic_run" "$RUN" "$OPS" "$RANKS" 8 2>"$WORK/synthetic.log" || { cat "$WORK/synthetic.log" >&2; exit 1; }
  touch "$RUN/written"
fi
say "== $RANKS ranks, $OPS ops ($ITERATIONS iterations of 1000 ops per rank, 8 ranks per host), stores: $(du -sh "$RUN" | cut -f1)"

# time_run NAME DIR COMMAND... -- FLAGS...: wall seconds and peak RSS (KB, the largest process of
# the tree) into $WORK/NAME.time, stderr (the --timings table) into $WORK/NAME.err.
time_run() {
  name=$1 dir=$2
  shift 2
  cmd=""
  while [ "$1" != "--" ]; do cmd="$cmd $1"; shift; done
  shift
  /usr/bin/time -f "%e %M" -o "$WORK/$name.time" $cmd analyze "$dir" --timings "$@" >/dev/null 2>"$WORK/$name.err" ||
    { cat "$WORK/$name.err" >&2; exit 1; }
}
wall() { cut -d' ' -f1 "$WORK/$1.time"; }
rss_mb() { echo $(($(cut -d' ' -f2 "$WORK/$1.time") / 1024)); }
bytes() { sed -n 's/.*; \([0-9]*\) bytes exchanged;.*/\1/p' "$WORK/$1.err"; }
each() { sed -n 's/.*peak RSS per process (MB): \(.*\)$/\1/p' "$WORK/$1.err"; }
legs() { sed -n 's/.*the critical path in \([0-9]*\) legs over \([0-9]*\) rounds.*/\1 \2/p' "$WORK/$1.err"; }
# The root's merge: its phases that are not its own ranks' (--timings).
merge_s() {
  awk '/^phase /,0 { if ($1 != "phase" && $1 != "total") print }' "$WORK/$1.err" |
    awk '!/^(list and assign stores|read and build own ranks|own ranks. iterations|own ranks. metrics|own ranks. path index) / { s += $(NF - 2) }
         END { printf "%.2f", s }'
}
own_s() { awk '/^(read and build own ranks|own ranks. iterations|own ranks. metrics|own ranks. path index) / { s += $(NF - 2) } END { printf "%.2f", s }' "$WORK/$1.err"; }
model_mib() { sed -n "s/.*the root's model of what the ranks share: \([0-9.]*\) MiB.*/\1/p" "$WORK/$1.err"; }

# measure MODE FLAGS...: the reference and the runs by 1 and 2 processes; sets $identical and $runs.
measure() {
  mode=$1
  shift
  rm -f "$RUN/analysis.json" "$RUN/analysis.sqlite"
  time_run "$mode-plain" "$RUN" "$SYNCOPATE" -- "$@"
  mkdir -p "$WORK/reference-$mode" && cp "$RUN/analysis.json" "$RUN/analysis.sqlite" "$WORK/reference-$mode/"
  say "plain syncopate analyze${*:+ $*}: wall $(wall "$mode-plain") s, peak RSS $(rss_mb "$mode-plain") MB"
  identical=true
  runs=""
  for p in 1 2; do
    name="$mode-mpi$p"
    rm -f "$RUN/analysis.json" "$RUN/analysis.sqlite"
    time_run "$name" "$RUN" $MPIRUN -n "$p" "$SYNCOPATE" -- "$@"
    same=true
    for f in analysis.json analysis.sqlite; do cmp -s "$WORK/reference-$mode/$f" "$RUN/$f" || same=false; done
    [ "$same" = true ] || identical=false
    if grep -q "^distributed analysis:" "$WORK/$name.err"; then
      path=$(legs "$name")
      say "mpirun -n $p syncopate analyze${*:+ $*}: wall $(wall "$name") s, peak RSS per process $(each "$name") MB, $(bytes "$name") bytes exchanged, the root's merge $(merge_s "$name") s and its model of the run $(model_mib "$name") MiB${path:+, the critical path in $(echo "$path" | cut -d' ' -f1) legs over $(echo "$path" | cut -d' ' -f2) rounds}, results identical to the plain run's: $same"
      runs="$runs${runs:+, }{\"processes\": $p, \"wall_s\": $(wall "$name"), \"peak_rss_mb_per_process\": $(rss_mb "$name"), \"peak_rss_mb_of_each_process\": [$(each "$name" | sed 's/^ //; s/ /, /g')], \"bytes_exchanged\": $(bytes "$name"), \"root_merge_s\": $(merge_s "$name"), \"root_model_mib\": $(model_mib "$name")${path:+, \"path_legs\": $(echo "$path" | cut -d' ' -f1), \"path_rounds\": $(echo "$path" | cut -d' ' -f2)}}"
    else  # one process analyses as a plain analyze does: nothing is shared
      say "mpirun -n $p syncopate analyze${*:+ $*}: wall $(wall "$name") s, peak RSS $(rss_mb "$name") MB (analysed as by a plain analyze), results identical to the plain run's: $same"
      runs="$runs${runs:+, }{\"processes\": $p, \"wall_s\": $(wall "$name"), \"peak_rss_mb_per_process\": $(rss_mb "$name"), \"peak_rss_mb_of_each_process\": [$(rss_mb "$name")], \"bytes_exchanged\": 0}"
    fi
  done
}

# The model, for 16384 ranks on 2048 nodes (one process per node), from the runs by two
# processes: each node's process reads and analyses its 8 ranks (at the root's pace for its own
# half of the run: its own-rank phases), the root's merge (its other phases) and its model of
# what the ranks share grow as a power of the ranks fitted to the run of RANKS and that of
# RANKS/4 ranks (at least 1: the root holds every rank's collectives, and the critical path's
# legs, counted in the merge, are walked by the processes at once but stitched by the root), and
# every process but the root sends its ranks' summaries, results and legs (bytes per rank from
# the run by two processes).
SMALL=$((RANKS / 4))
SMALL_RUN=$BUILD/bench-data/scale-out-$SMALL-$ITERATIONS
if [ ! -f "$SMALL_RUN/written" ]; then
  rm -rf "$SMALL_RUN"
  "$BUILD/bin/syncopate_synthetic_run" "$SMALL_RUN" $((SMALL * ITERATIONS * 1000)) "$SMALL" 8 2>"$WORK/synthetic.log" ||
    { cat "$WORK/synthetic.log" >&2; exit 1; }
  touch "$SMALL_RUN/written"
fi
# extrapolate MODE FLAGS...: prints the model's JSON object.
extrapolate() {
  mode=$1
  shift
  time_run "$mode-small" "$SMALL_RUN" $MPIRUN -n 2 "$SYNCOPATE" -- "$@"
  awk -v ranks_here="$RANKS" -v small="$SMALL" -v merge="$(merge_s "$mode-mpi2")" -v merge_small="$(merge_s "$mode-small")" \
    -v summary="$(model_mib "$mode-mpi2")" -v summary_small="$(model_mib "$mode-small")" -v own="$(own_s "$mode-mpi2")" \
    -v bytes2="$(bytes "$mode-mpi2")" 'BEGIN {
      ranks = 16384; nodes = 2048; scale = ranks / ranks_here
      k = (merge > 0.02 && merge_small > 0.02) ? log(merge / merge_small) / log(ranks_here / small) : 1; if (k < 1) k = 1
      km = (summary > 0.1 && summary_small > 0.1) ? log(summary / summary_small) / log(ranks_here / small) : 1; if (km < 1) km = 1
      own_s = own / (ranks_here / 2) * ranks / nodes; merge_s = merge * scale ^ k
      printf "{\"ranks\": %d, \"nodes\": %d, \"processes\": %d, \"wall_s\": %.0f, \"own_ranks_s_per_process\": %.2f, \"root_merge_s\": %.0f, \"root_merge_k\": %.2f, \"root_model_gib\": %.2f, \"root_model_k\": %.2f, \"bytes_exchanged\": %.0f}",
        ranks, nodes, nodes, own_s + merge_s, own_s, merge_s, k, summary * scale ^ km / 1024, km, bytes2 / (ranks_here / 2) * (ranks - ranks / nodes)
    }'
}

measure path
path_identical=$identical path_runs=$runs
path_extrapolation=$(extrapolate path)
say "extrapolated to 16384 ranks on 2048 nodes: $path_extrapolation"
measure no-path --no-critical-path
no_path_identical=$identical no_path_runs=$runs
no_path_extrapolation=$(extrapolate no-path --no-critical-path)
say "without the critical path, extrapolated to 16384 ranks on 2048 nodes: $no_path_extrapolation"
say "machine load while measuring: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"

# The GUI on the same run, opened on the results the analyses above wrote (docs/gui.md, "Opening
# a large run"): time to the first painted frame, to one rank's ops read and painted (rank 13,
# the straggler), and the window's peak RSS. gui_bench is built with the GUI (SYNCOPATE_BUILD_GUI).
gui='null'
if [ -x "$BUILD/bin/gui_bench" ]; then
  QT_QPA_PLATFORM=offscreen "$BUILD/bin/gui_bench" --dir "$RUN" --open summary --expand-rank 13 --frames 5 >"$WORK/gui.out" 2>"$WORK/gui.err" ||
    { cat "$WORK/gui.err" >&2; exit 1; }
  first=$(sed -n 's/^time to first paint: \([0-9]*\) ms wall.*/\1/p' "$WORK/gui.out")
  expanded=$(sed -n 's/^a rank expanded: *\([0-9]*\) ms.*/\1/p' "$WORK/gui.out")
  gui_rss=$(sed -n 's/^peak RSS: \([0-9]*\) MB/\1/p' "$WORK/gui.out")
  say "syncopate gui on the analysis results: first frame painted after $first ms, rank 13's ops read and painted in $expanded ms, peak RSS $gui_rss MB"
  gui="{\"first_frame_ms\": $first, \"rank_expanded_ms\": $expanded, \"peak_rss_mb\": $gui_rss}"
fi

if [ "$json" = yes ]; then
  echo "{\"ranks\": $RANKS, \"ops\": $OPS, \"identical\": $path_identical, \"runs\": [$path_runs], \"extrapolation\": $path_extrapolation, \"without_critical_path\": {\"identical\": $no_path_identical, \"runs\": [$no_path_runs], \"extrapolation\": $no_path_extrapolation}, \"gui\": $gui}"
fi

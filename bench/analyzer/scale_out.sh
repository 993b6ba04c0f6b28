#!/bin/sh
# Distributed analysis at scale (docs/analyzer.md, "Distributed analysis"): a synthetic run of
# RANKS ranks, 8 per host, each ITERATIONS iterations of 1000 ops with all-reduces matched across
# all ranks, analysed once by a plain `syncopate analyze` (the reference) and then under mpirun by
# 1 and 2 processes. Per run: wall time, the peak RSS of the largest process (the root, which
# builds the model) and of each process once its part of the load was done, the bytes the processes exchanged, and whether analysis.json and
# analysis.sqlite equal the reference's byte for byte. Then the GUI opened on those results (first
# frame, one rank expanded), and a model fitted to these runs and one of RANKS/4 ranks,
# extrapolated to 16384 ranks on 2048 nodes (one process per node). Then the same without the
# critical path, where each process analyses the ranks it read and the root only combines them
# (the reference a plain `syncopate analyze --no-critical-path`), with its own extrapolation.
#
# Usage: bench/analyzer/scale_out.sh [--json] BUILD_DIR [RANKS [ITERATIONS]]   (default 1024 20)
# --json prints one object: {"ranks", "ops", "identical", "runs": [{"processes", "wall_s",
# "peak_rss_mb_per_process" (the largest), "peak_rss_mb_of_each_process_after_loading",
# "bytes_exchanged"}], "gui": {"first_frame_ms", "rank_expanded_ms", "peak_rss_mb"} (null without
# the GUI), "extrapolation": {...}, "ranks_apart": {"identical", "runs": [{"processes", "wall_s",
# "peak_rss_mb_of_each_process", "bytes_exchanged", "root_merge_s", "root_model_mib"}],
# "extrapolation": {...}}}; the rest goes to stderr.
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

# time_run NAME COMMAND...: wall seconds and peak RSS (KB, the largest process of the tree) into
# $WORK/NAME.time, stderr (the --timings table) into $WORK/NAME.err.
time_run() {
  name=$1
  shift
  /usr/bin/time -f "%e %M" -o "$WORK/$name.time" "$@" analyze "$RUN" --timings >/dev/null 2>"$WORK/$name.err" ||
    { cat "$WORK/$name.err" >&2; exit 1; }
}
# The --timings table's columns: phase name (several words), wall s, CPU s, peak MB.
phase() { awk -v p="$2" '$0 ~ "^"p" " { print $(NF - 2) }' "$WORK/$1.err"; }

time_run plain "$SYNCOPATE"
mkdir "$WORK/reference" && cp "$RUN/analysis.json" "$RUN/analysis.sqlite" "$WORK/reference/"
say "plain syncopate analyze: wall $(cut -d' ' -f1 "$WORK/plain.time") s, peak RSS $(($(cut -d' ' -f2 "$WORK/plain.time") / 1024)) MB"
identical=true
runs=""
for p in 1 2; do
  rm -f "$RUN/analysis.json" "$RUN/analysis.sqlite"
  time_run "mpi$p" $MPIRUN -n "$p" "$SYNCOPATE"
  same=true
  for f in analysis.json analysis.sqlite; do cmp -s "$WORK/reference/$f" "$RUN/$f" || same=false; done
  [ "$same" = true ] || identical=false
  wall=$(cut -d' ' -f1 "$WORK/mpi$p.time")
  rss=$(($(cut -d' ' -f2 "$WORK/mpi$p.time") / 1024))
  bytes=$(sed -n 's/.*; \([0-9]*\) bytes exchanged;.*/\1/p' "$WORK/mpi$p.err")
  each=$(sed -n 's/.*peak RSS per process (MB): \(.*\)$/\1/p' "$WORK/mpi$p.err")
  say "mpirun -n $p syncopate analyze: wall $wall s, peak RSS of the largest process $rss MB (per process once its part of the load was done: $each MB), $bytes bytes exchanged, results identical to the plain run's: $same"
  say "  root's phases (wall s): reading and receiving stores into the model $(phase "mpi$p" 'read stores into rows'), the rest (build, align, analyse, write) $(awk '/^total / { t = $(NF - 2) } /^read stores into rows / { r = $(NF - 2) } END { printf "%.2f", t - r }' "$WORK/mpi$p.err")"
  runs="$runs${runs:+, }{\"processes\": $p, \"wall_s\": $wall, \"peak_rss_mb_per_process\": $rss, \"peak_rss_mb_of_each_process_after_loading\": [$(echo "$each" | sed 's/ /, /g')], \"bytes_exchanged\": $bytes}"
done

# Ranks analysed where they were read (--no-critical-path; docs/analyzer.md, "Distributed
# analysis"): each process builds the model of its own ranks and analyses them, and the root
# builds the run's model from the stores' summaries and combines the ranks' results. The
# reference is a plain `syncopate analyze --no-critical-path`. The root's merge is the sum of its
# phases that are not its own ranks' (--timings); its summary, the memory its model of the run
# holds (--timings says it).
# time_apart NAME DIR COMMAND...: as time_run, for DIR analysed without the critical path.
time_apart() {
  name=$1 dir=$2
  shift 2
  /usr/bin/time -f "%e %M" -o "$WORK/$name.time" "$@" analyze "$dir" --no-critical-path --timings >/dev/null 2>"$WORK/$name.err" ||
    { cat "$WORK/$name.err" >&2; exit 1; }
}
merge_s() {
  awk '/^(summary model|combine iterations|combine ranks|collectives|kernels|critical paths|report|save results|print) / { s += $(NF - 2) }
       END { printf "%.2f", s }' "$WORK/$1.err"
}
own_s() { awk '/^(read and build own ranks|own ranks. iterations|own ranks. metrics) / { s += $(NF - 2) } END { printf "%.2f", s }' "$WORK/$1.err"; }
model_mib() { sed -n "s/.*the root's model of what the ranks share: \([0-9.]*\) MiB.*/\1/p" "$WORK/$1.err"; }
rm -f "$RUN/analysis.json" "$RUN/analysis.sqlite"
time_apart apart0 "$RUN" "$SYNCOPATE"
mkdir "$WORK/reference-apart" && cp "$RUN/analysis.json" "$RUN/analysis.sqlite" "$WORK/reference-apart/"
say "ranks analysed where they were read (--no-critical-path); plain syncopate analyze --no-critical-path: wall $(cut -d' ' -f1 "$WORK/apart0.time") s, peak RSS $(($(cut -d' ' -f2 "$WORK/apart0.time") / 1024)) MB"
apart_identical=true
apart_runs=""
for p in 1 2; do
  rm -f "$RUN/analysis.json" "$RUN/analysis.sqlite"
  time_apart "apart$p" "$RUN" $MPIRUN -n "$p" "$SYNCOPATE"
  same=true
  for f in analysis.json analysis.sqlite; do cmp -s "$WORK/reference-apart/$f" "$RUN/$f" || same=false; done
  [ "$same" = true ] || apart_identical=false
  wall=$(cut -d' ' -f1 "$WORK/apart$p.time")
  bytes=$(sed -n 's/.*; \([0-9]*\) bytes exchanged;.*/\1/p' "$WORK/apart$p.err")
  each=$(sed -n 's/.*peak RSS per process (MB): \(.*\)$/\1/p' "$WORK/apart$p.err")
  say "mpirun -n $p syncopate analyze --no-critical-path: wall $wall s, peak RSS per process $each MB, $bytes bytes exchanged, the root's merge $(merge_s "apart$p") s and its model of the run $(model_mib "apart$p") MiB, results identical to the plain run's: $same"
  apart_runs="$apart_runs${apart_runs:+, }{\"processes\": $p, \"wall_s\": $wall, \"peak_rss_mb_of_each_process\": [$(echo "$each" | sed 's/ /, /g')], \"bytes_exchanged\": $bytes, \"root_merge_s\": $(merge_s "apart$p"), \"root_model_mib\": $(model_mib "apart$p")}"
done
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

# The model. Each phase of the root's work (its --timings table, one process) is measured at
# RANKS and at RANKS/4 ranks (same iterations) and grows as a power of the ranks fitted to the
# two: t(R) = t(RANKS) * (R / RANKS)^k, k = log(t(RANKS) / t(RANKS/4)) / log 4, at least 1. All of it is
# serial on the root, reading into the model included (the root turns every store's rows into
# the model; its own reads overlap that), so this bounds the root from above. Reading a store
# (timed on the root's read-ahead thread) is shared among the nodes, 8 stores each. The root's
# peak RSS is fitted the same way; the bytes exchanged are the rows of every store but the
# root's own (bytes per op from the run by two processes).
SMALL=$((RANKS / 4))
SMALL_RUN=$BUILD/bench-data/scale-out-$SMALL-$ITERATIONS
if [ ! -f "$SMALL_RUN/written" ]; then
  rm -rf "$SMALL_RUN"
  "$BUILD/bin/syncopate_synthetic_run" "$SMALL_RUN" $((SMALL * ITERATIONS * 1000)) "$SMALL" 8 2>"$WORK/synthetic.log" ||
    { cat "$WORK/synthetic.log" >&2; exit 1; }
  touch "$SMALL_RUN/written"
fi
/usr/bin/time -f "%e %M" -o "$WORK/small.time" $MPIRUN -n 1 "$SYNCOPATE" analyze "$SMALL_RUN" --timings >/dev/null 2>"$WORK/small.err" ||
  { cat "$WORK/small.err" >&2; exit 1; }
say "mpirun -n 1 syncopate analyze of $SMALL ranks (for the fit): wall $(cut -d' ' -f1 "$WORK/small.time") s, peak RSS $(($(cut -d' ' -f2 "$WORK/small.time") / 1024)) MB"
read_stat() { sed -n 's/.*the root read its stores in \([0-9.]*\) s.*/\1/p' "$WORK/$1.err"; }
phases() { awk '/^phase /,0 { if ($1 != "phase" && $1 != "total") { n = NF - 3; name = $1; for (i = 2; i <= n; ++i) name = name "_" $i; print name, $(NF - 2) } }' "$WORK/$1.err"; }
phases small >"$WORK/small.phases"
phases mpi1 >"$WORK/big.phases"
extrapolation=$(awk -v ops="$OPS" -v ranks_here="$RANKS" -v iters="$ITERATIONS" \
  -v read1="$(read_stat mpi1)" -v rss1="$(cut -d' ' -f2 "$WORK/mpi1.time")" -v rss_small="$(cut -d' ' -f2 "$WORK/small.time")" \
  -v bytes2="$(sed -n 's/.*; \([0-9]*\) bytes exchanged;.*/\1/p' "$WORK/mpi2.err")" '
  FNR == NR { small[$1] = $2; next }
  { big[$1] = $2; order[++n] = $1 }
  END {
    ranks = 16384; nodes = 2048; scale = ranks / ranks_here; ops_big = ranks * iters * 1000
    root = 0; top = ""
    for (i = 1; i <= n; ++i) {
      p = order[i]; t = big[p]; s = small[p]
      k = (t > 0.02 && s > 0.02) ? log(t / s) / log(4) : 1
      if (k < 1) k = 1  # the root handles every row: nothing of it grows slower than the rows (a lower k is noise)
      x[p] = t * scale ^ k; root += x[p]
      fit = fit sprintf("%s\"%s\": {\"s\": %.1f, \"k\": %.2f}", fit == "" ? "" : ", ", p, x[p], k)
    }
    read_s = read1 / ranks_here * ranks / nodes
    km = log(rss1 / rss_small) / log(4); if (km < 1) km = 1
    printf "{\"ranks\": %d, \"nodes\": %d, \"processes\": %d, \"ops\": %d, \"wall_s\": %.0f, \"store_reading_s_per_process\": %.2f, \"root_merge_s\": %.0f, \"root_rss_gb\": %.1f, \"root_rss_k\": %.2f, \"bytes_exchanged\": %.0f, \"root_phases\": {%s}}",
      ranks, nodes, nodes, ops_big, (read_s > root ? read_s : root), read_s, root, rss1 * scale ^ km / 1024 / 1024, km,
      bytes2 / (ops / 2) * ops_big * (nodes - 1) / nodes, fit
  }' "$WORK/small.phases" "$WORK/big.phases")
say "extrapolated to 16384 ranks on 2048 nodes (one process per node): $extrapolation"

# The same for ranks analysed where they were read: each node's process reads and analyses its 8
# ranks (its share of the one-process run's own-rank phases), the root's merge and its summary's
# memory grow as a power of the ranks fitted as above (at least 1: the summary holds every rank's
# collectives), and every process but the root sends its ranks' summaries and results (bytes per
# rank from the run by two processes).
time_apart small_apart "$SMALL_RUN" $MPIRUN -n 1 "$SYNCOPATE"
apart_extrapolation=$(awk -v ranks_here="$RANKS" -v small="$SMALL" -v merge="$(merge_s apart1)" -v merge_small="$(merge_s small_apart)" \
  -v summary="$(model_mib apart1)" -v summary_small="$(model_mib small_apart)" -v own="$(own_s apart1)" \
  -v bytes2="$(sed -n 's/.*; \([0-9]*\) bytes exchanged;.*/\1/p' "$WORK/apart2.err")" 'BEGIN {
    ranks = 16384; nodes = 2048; scale = ranks / ranks_here
    k = (merge > 0.02 && merge_small > 0.02) ? log(merge / merge_small) / log(ranks_here / small) : 1; if (k < 1) k = 1
    km = (summary > 0.1 && summary_small > 0.1) ? log(summary / summary_small) / log(ranks_here / small) : 1; if (km < 1) km = 1
    own_s = own / ranks_here * ranks / nodes; merge_s = merge * scale ^ k
    printf "{\"ranks\": %d, \"nodes\": %d, \"processes\": %d, \"wall_s\": %.0f, \"own_ranks_s_per_process\": %.2f, \"root_merge_s\": %.0f, \"root_merge_k\": %.2f, \"root_model_gib\": %.2f, \"root_model_k\": %.2f, \"bytes_exchanged\": %.0f}",
      ranks, nodes, nodes, own_s + merge_s, own_s, merge_s, k, summary * scale ^ km / 1024, km, bytes2 / (ranks_here / 2) * (ranks - ranks / nodes)
  }')
say "ranks analysed where they were read, extrapolated to 16384 ranks on 2048 nodes: $apart_extrapolation"
if [ "$json" = yes ]; then
  echo "{\"ranks\": $RANKS, \"ops\": $OPS, \"identical\": $identical, \"runs\": [$runs], \"gui\": $gui, \"extrapolation\": $extrapolation, \"ranks_apart\": {\"identical\": $apart_identical, \"runs\": [$apart_runs], \"extrapolation\": $apart_extrapolation}}"
fi

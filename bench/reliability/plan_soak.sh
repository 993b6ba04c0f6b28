#!/usr/bin/env bash
# Plan soak (docs/reliability.md, "Hung peers and wrong plans"): N re-runs with
# `syncopate run --plan PLAN --watchdog 2`, alternately of dp_trainer and of the runtime's test
# program tuner_grad_sync, each on 2, 3 or 4 ranks under mpirun on simgpu. Every plan is a real
# plan of that job (a recorded, untuned reference run tuned by plan_soak_plans) with random
# knobs. grad_sync also runs, at random, one of its variants that take the runtime down other
# paths with the same gradients: scattered buffers (fused through the fusion buffer), updates
# from a second thread, stream-ordered frees or a graph launch (barriers).
# Pairs of runs cycle through five faults: none; a rank that stalls 0.5-4 s, then goes on; a
# rank that exits; a rank whose call sequence diverges (an extra host sync between all-reduces);
# a wrong plan (the other program's, or the same program's at another rank count). A fault acts
# on a random rank after its backward of a random step, before that step's all-reduces. Each
# run ends as one of:
#   identical       exit 0, every rank 0, the reference's gradient checksums at every iteration,
#                   the plan applied to the end on every rank;
#   fell_back       the same, but the runtime fell back with a diagnostic (a fallback other
#                   than the set-up copies' legacy_stream, or the plan off on some rank);
#   watchdog_stops  the runtime stopped ranks with its error (status 3 and its sentence: the
#                   watchdog, or a dead peer found by an agreement or a failed all-reduce of the
#                   plan), every other rank ended 0 or as its fault says, and every checksum
#                   printed is the reference's;
#   error_stops     the same, but some rank stopped with the program's own error on NCCL's
#                   "remote process exited" (an error the runtime passed on to the program's
#                   next NCCL call), and ranks its MPI_Abort ended;
#   hangs           still alive after the reference's wall time + the stall + the watchdog +
#                   30 s: its whole session is killed (SIGKILL);
#   failures        anything else (a crash, an unexplained status, a checksum that differs, a
#                   process of the run left alive), each printed with its reason and the run
#                   kept for replay.
#   bench/reliability/plan_soak.sh [--json] [N]      (N defaults to 20; PLAN_SOAK_SEED=S replays)
# Prints a line per run and a summary line; --json prints only
# {"runs", "identical", "fell_back", "watchdog_stops", "error_stops", "hangs", "failures"}.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${SYNCOPATE_BUILD_DIR:-$root/build}"
json=false
if [ "${1:-}" = "--json" ]; then json=true; shift; fi
runs="${1:-20}"
seed="${PLAN_SOAK_SEED:-$RANDOM}"
RANDOM="$seed"
watchdog=2
say() { $json || echo "$@"; }
for bin in syncopate dp_trainer tuner_grad_sync plan_soak_plans; do
  [ -x "$build/bin/$bin" ] || { echo "plan_soak: build the project first (scripts/build.sh): no $bin" >&2; exit 1; }
done

export LD_LIBRARY_PATH="$build/lib/simgpu" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work="$(mktemp -d)"
kept="$(mktemp -d)"  # failed and hung runs, kept for replay
trap 'rm -rf "$work"; rmdir "$kept" 2>/dev/null || true' EXIT

# The jobs: small (seconds), 8 iterations so that `tune` has a window to model.
job_args() {  # program -> the program's command line in job[]
  case $1 in
    dp_trainer) job=("$build/bin/dp_trainer" --config gpt-125m --layers 6 --iterations 7 --warmup 1) ;;
    grad_sync) job=("$build/bin/tuner_grad_sync" --produce-cost 2000 --update-cost 200 --iterations 8) ;;
  esac
}
profile_of() {
  case $1 in
    dp_trainer) echo "$root/samples/dp_trainer/profiles/comm-heavy.json" ;;
    grad_sync) echo "$root/tests/tuner/profiles/grad_sync.json" ;;
  esac
}
# What a rank told to exit ends with (dp_trainer --exit-rank, grad_sync --stall-rank without
# --stall-resumes), and what a program exits with on an NCCL error.
exit_status_of() { case $1 in dp_trainer) echo 5 ;; grad_sync) echo 9 ;; esac; }
nccl_error_status_of() { case $1 in dp_trainer) echo 1 ;; grad_sync) echo 2 ;; esac; }

# mpirun as the runtime's end-to-end tests run it: no rank is ended for another's failure (each
# says why it stopped), and a shell around each rank writes its exit status to $exits/rank-R.
mpi_command() {  # ranks exits program args...
  local ranks=$1 exits=$2
  shift 2
  # shellcheck disable=SC2054  # "self,vader" is one argument
  cmd=(mpirun -np "$ranks" --oversubscribe --bind-to none --mca btl self,vader
    --mca orte_abort_on_non_zero_status 0 --mca orte_allowed_exit_without_sync 1 -x LD_LIBRARY_PATH -x SIMGPU_PROFILE
    /bin/sh -c "\"\$0\" \"\$@\"; echo \$? > '$exits/rank-'\$OMPI_COMM_WORLD_RANK" "$@")
}

checksums() { grep -a '^grad_checksum ' "$1" 2>/dev/null | sort -u || true; }
# How the runtime says it stopped a rank (docs/tuner.md, "The runtime": the watchdog, a peer
# failed, an all-reduce of the plan failed).
runtime_stops='waited [0-9]* s for the other ranks to agree\|an all-reduce the plan issued has not completed'
runtime_stops+='\|the agreement between ranks at a flush failed\|an all-reduce the plan issued failed'

# The untuned references and their random plans, per program and rank count.
declare -A ref_wall
for prog in dp_trainer grad_sync; do
  for ranks in 2 3 4; do
    ref="$work/ref-$prog-$ranks"
    mkdir -p "$ref.exits"
    job_args "$prog"
    mpi_command "$ranks" "$ref.exits" "${job[@]}"
    start=$(date +%s%N)
    SIMGPU_PROFILE="$(profile_of "$prog")" "$build/bin/syncopate" record -o "$ref" -- "${cmd[@]}" > "$ref.log" 2>&1 ||
      { echo "plan_soak: the reference run of $prog on $ranks ranks failed:" >&2; cat "$ref.log" >&2; exit 1; }
    ref_wall[$prog-$ranks]=$(( ($(date +%s%N) - start + 999999999) / 1000000000 ))
    "$build/bin/plan_soak_plans" "$ref" "$work/plans-$prog-$ranks" "$runs" "$((seed * 4 + ranks))" > "$ref.plans" ||
      { echo "plan_soak: no plans for $prog on $ranks ranks" >&2; exit 1; }
    say "reference $prog on $ranks ranks: ${ref_wall[$prog-$ranks]} s, $(checksums "$ref/job.log" | wc -l) checksums"
  done
done

identical=0 fell_back=0 watchdog_stops=0 error_stops=0 hangs=0 failures=0
kinds=(none stall exit diverge wrong_plan)
grad_sync_variants=("" --scattered "--thread-from 3" --stream-ordered --graph)
soak_start=$(date +%s)
for i in $(seq "$runs"); do
  if [ $((i % 2)) = 1 ]; then prog=dp_trainer other=grad_sync; else prog=grad_sync other=dp_trainer; fi
  kind=${kinds[$(( (i - 1) / 2 % 5 ))]}
  ranks=$(( 2 + RANDOM % 3 ))
  victim=$(( RANDOM % ranks ))
  step=$(( RANDOM % 8 ))  # any of the 8 iterations
  plan="$work/plans-$prog-$ranks/plan-$i.json"
  job_args "$prog"
  variant=""
  if [ "$prog" = grad_sync ]; then
    variant="${grad_sync_variants[RANDOM % ${#grad_sync_variants[@]}]}"
    # shellcheck disable=SC2206  # the variant's words are the program's arguments
    [ -n "$variant" ] && job+=($variant)
  fi
  fault=() stall_s=0 what="$kind"
  case $kind in
    stall)
      stall_ms=$(( 500 + RANDOM % 3501 ))
      stall_s=$(( (stall_ms + 999) / 1000 ))
      if [ "$prog" = dp_trainer ]; then
        fault=(--stall-rank "$victim" --stall-at-step "$step" --stall-ms "$stall_ms")
      else  # grad_sync stalls in whole seconds
        stall_ms=$(( stall_s * 1000 ))
        fault=(--stall-rank "$victim" --stall-iteration "$step" --stall-seconds "$stall_s" --stall-resumes)
      fi
      what="stall rank $victim at step $step for $stall_ms ms" ;;
    exit)
      if [ "$prog" = dp_trainer ]; then fault=(--exit-rank "$victim" --exit-at-step "$step")
      else fault=(--stall-rank "$victim" --stall-iteration "$step" --stall-seconds 0); fi
      what="rank $victim exits at step $step" ;;
    diverge)
      if [ "$prog" = dp_trainer ]; then fault=(--diverge-rank "$victim" --diverge-at-step "$step")
      else fault=(--diverge-rank "$victim"); fi  # from iteration 2
      what="rank $victim diverges" ;;
    wrong_plan)
      if [ $((RANDOM % 2)) = 0 ]; then
        plan="$work/plans-$other-$ranks/plan-$i.json" what="wrong plan ($other's)"
      else
        others=$(( 2 + (ranks - 1 + RANDOM % 2) % 3 ))  # another of 2, 3, 4
        plan="$work/plans-$prog-$others/plan-$i.json" what="wrong plan ($others ranks')"
      fi ;;
  esac
  run="$work/run-$i"
  mkdir -p "$run.exits"
  mpi_command "$ranks" "$run.exits" "${job[@]}" "${fault[@]}"
  limit=$(( ${ref_wall[$prog-$ranks]} + stall_s + watchdog + 30 ))
  SIMGPU_PROFILE="$(profile_of "$prog")" setsid "$build/bin/syncopate" run --plan "$plan" --watchdog "$watchdog" -o "$run" \
    -- "${cmd[@]}" > "$run.log" 2>&1 &
  pid=$!
  start=$(date +%s%N)
  while kill -0 "$pid" 2>/dev/null && [ $(( ($(date +%s%N) - start) / 1000000000 )) -lt "$limit" ]; do sleep 0.1; done
  hung=false
  if kill -0 "$pid" 2>/dev/null; then
    hung=true
    pkill -KILL -s "$pid" || true
  fi
  status=0
  { wait "$pid" || status=$?; } 2>/dev/null
  # A process of the run that outlives it by 2 s (a rank nobody waits for) is a failure too;
  # the ones mpirun killed as it left are only not yet reaped (zombies) for a moment.
  for _ in $(seq 20); do
    strays="$(pgrep -c -r D,R,S,T,t -s "$pid" || true)"
    [ "$strays" = 0 ] && break
    sleep 0.1
  done
  [ "$strays" = 0 ] || pkill -KILL -s "$pid" || true
  seconds=$(( ($(date +%s%N) - start) / 1000000 ))
  seconds="$((seconds / 1000)).$(printf '%03d' $((seconds % 1000)))"

  # Every checksum the run printed must be the reference's; all of them for a finished run.
  ref_sums="$(checksums "$work/ref-$prog-$ranks/job.log")"
  run_sums="$(checksums "$run/job.log")"
  wrong="$(comm -23 <(echo "$run_sums") <(echo "$ref_sums") | grep -c . || true)"
  complete=false
  [ "$run_sums" = "$ref_sums" ] && complete=true
  # Each rank's status, and whether the runtime said it stopped it.
  # A rank with no status was ended by mpirun: after the program's own NCCL error, dp_trainer
  # calls MPI_Abort, which ends every rank (mpirun says so, when it manages to under load).
  bad_ranks="" stopped=0 zeros=0 errors=0
  nccl_error=false
  grep -aq "^$prog: .*failed: remote process exited" "$run.log" && nccl_error=true
  for r in $(seq 0 $((ranks - 1))); do
    s="$(cat "$run.exits/rank-$r" 2>/dev/null || echo killed)"
    said=$(grep -ac "runtime (rank $r): \($runtime_stops\)" "$run.log" || true)
    if [ "$s" = 0 ]; then zeros=$((zeros + 1))
    elif [ "$s" = 3 ] && [ "$said" -ge 1 ]; then stopped=$((stopped + 1))
    elif [ "$kind" = exit ] && [ "$r" = "$victim" ] && [ "$s" = "$(exit_status_of "$prog")" ]; then :
    elif $nccl_error && { [ "$s" = "$(nccl_error_status_of "$prog")" ] || [ "$s" = killed ]; }; then errors=$((errors + 1))
    else bad_ranks+="rank $r: $s; "
    fi
  done
  applied="$(sed -n 's/^syncopate run: the plan was still applied at the end on \([0-9]*\) of \([0-9]*\) rank(s)$/\1 \2/p' "$run.log")"
  diagnostics="$(sed -n 's/^syncopate run: fallback \([a-z_]*\) happened .*/\1/p' "$run.log" | grep -v '^legacy_stream$' | sort -u | tr '\n' ' ' || true)"
  if $hung; then
    outcome=hang hangs=$((hangs + 1))
  elif [ "$strays" != 0 ]; then
    outcome="FAILURE: $strays process(es) of the run still alive after it ended"
  elif [ "$wrong" -gt 0 ]; then
    outcome="FAILURE: $wrong checksum(s) differ from the reference's"
  elif [ -n "$bad_ranks" ]; then
    outcome="FAILURE: unexplained exit status ($bad_ranks)"
  elif [ "$status" = 0 ] && [ "$zeros" = "$ranks" ] && $complete; then
    if [ -z "$diagnostics" ] && [ "$applied" = "$ranks $ranks" ]; then outcome=identical identical=$((identical + 1))
    else outcome="fell back (${diagnostics:-plan off }- applied on ${applied/ / of } ranks)" fell_back=$((fell_back + 1)); fi
  elif [ "$errors" -ge 1 ]; then
    passed_on=$(grep -ac "the application's next NCCL call reports it" "$run.log" || true)
    outcome="error stop ($stopped of $ranks ranks by the runtime, $errors by the program or its MPI_Abort;"
    outcome+=" $passed_on rank(s) passed on an all-reduce of the plan that failed)"
    error_stops=$((error_stops + 1))
  elif [ "$stopped" -ge 1 ]; then  # mpirun itself exits 0 here (no rank ends another)
    outcome="watchdog stop ($stopped of $ranks ranks)" watchdog_stops=$((watchdog_stops + 1))
  else
    outcome="FAILURE: exit $status, $zeros of $ranks ranks 0, checksums complete: $complete"
  fi
  case $outcome in
    FAILURE*) failures=$((failures + 1)); cp -r "$run" "$run.log" "$run.exits" "$kept/" ;;
    hang) cp -r "$run" "$run.log" "$run.exits" "$kept/" ;;
  esac
  say "run $i: $prog${variant:+ $variant}, $ranks ranks, $what, plan $(basename "$(dirname "$plan")")/$(basename "$plan"): $outcome (${seconds} s)"
  rm -rf "$run" "$run.log" "$run.exits"
done
wall=$(( $(date +%s) - soak_start ))
[ -z "$(ls -A "$kept")" ] || echo "plan_soak: failed and hung runs kept in $kept" >&2
if $json; then
  printf '{"runs": %d, "identical": %d, "fell_back": %d, "watchdog_stops": %d, "error_stops": %d, "hangs": %d, "failures": %d}\n' \
    "$runs" "$identical" "$fell_back" "$watchdog_stops" "$error_stops" "$hangs" "$failures"
else
  echo "summary: runs=$runs identical=$identical fell_back=$fell_back watchdog_stops=$watchdog_stops error_stops=$error_stops hangs=$hangs failures=$failures (seed $seed, ${wall} s)"
fi

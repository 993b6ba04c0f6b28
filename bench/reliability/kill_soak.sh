#!/usr/bin/env bash
# Kill soak (docs/reliability.md): N times, record dp_trainer on 4 ranks under mpirun on simgpu
# and SIGKILL, at a random moment once recording has begun, one rank (rounds 1, 4, 7, ...), all
# ranks (2, 5, 8, ...) or the launcher, mpirun (3, 6, 9, ...). Each round then checks every store
# with SQLite's integrity check, runs `syncopate analyze` on the run, and measures what each killed
# rank lost: the time from its last stored API call to the kill, on the store's own clock.
#   bench/reliability/kill_soak.sh [--json] [N]      (N defaults to 20)
# Prints a line per round and a summary line; --json prints only
# {"rounds", "stores", "readable", "analysed", "worst_loss_ms"}.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${SYNCOPATE_BUILD_DIR:-$root/build}"
json=false
if [ "${1:-}" = "--json" ]; then json=true; shift; fi
rounds="${1:-20}"
say() { $json || echo "$@"; }
command -v sqlite3 >/dev/null || { echo "kill_soak: needs the sqlite3 command (apt-get install sqlite3)" >&2; exit 1; }
[ -x "$build/bin/syncopate" ] && [ -x "$build/bin/dp_trainer" ] || { echo "kill_soak: build the project first (scripts/build.sh)" >&2; exit 1; }

export LD_LIBRARY_PATH="$build/lib/simgpu" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export SIMGPU_PROFILE="$root/samples/dp_trainer/profiles/comm-heavy.json"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

now_ns() { date +%s%N; }
# A store's own clock is CLOCK_MONOTONIC; meta.realtime_offset_ns is REALTIME - MONOTONIC.
loss_ms() {  # store kill_realtime_ns: ms from the store's last API call to the kill
  local offset last
  offset="$(sqlite3 "$1" "select value from meta where key = 'realtime_offset_ns'")"
  last="$(sqlite3 "$1" "select max(end_ns) from api_calls")"
  [ -n "$last" ] || { echo "n/a"; return; }
  echo "scale=1; ($2 - $offset - $last) / 1000000" | bc -l
}

stores_total=0 readable=0 analysed=0 worst=0
for round in $(seq "$rounds"); do
  case $(( (round - 1) % 3 )) in 0) victim=one ;; 1) victim=all ;; 2) victim=launcher ;; esac
  run="$work/run-$round"
  setsid "$build/bin/syncopate" record -o "$run" -- mpirun -np 4 --oversubscribe --bind-to none --mca btl self,vader \
    -x LD_LIBRARY_PATH -x SIMGPU_PROFILE "$build/bin/dp_trainer" --mode naive --iterations 200 --watchdog 10 \
    > "$work/log-$round" 2>&1 &
  record_pid=$!
  # Wait for all four stores, then a random 0.2-3 s more.
  for _ in $(seq 600); do
    [ "$(ls "$run"/rank-*.sqlite 2>/dev/null | wc -l)" -eq 4 ] && break
    sleep 0.05
  done
  sleep "$(printf '0.%03d' $((RANDOM % 1000)))"; sleep $((RANDOM % 3))
  ranks=($(pgrep -x dp_trainer -s "$record_pid" || true))
  killed=()
  case $victim in
    one) [ ${#ranks[@]} -gt 0 ] && killed=("${ranks[RANDOM % ${#ranks[@]}]}") ;;
    all) killed=("${ranks[@]}") ;;
    launcher) killed=($(pgrep -x mpirun -s "$record_pid" || true)) ;;
  esac
  killed_ranks=()
  for pid in "${killed[@]}"; do
    [ "$victim" != launcher ] && killed_ranks+=("$(tr '\0' '\n' < "/proc/$pid/environ" 2>/dev/null | sed -n 's/^OMPI_COMM_WORLD_RANK=//p')")
  done
  kill_ns="$(now_ns)"
  kill -KILL "${killed[@]}" 2>/dev/null || true
  # The survivors stop by their watchdog or their peers' failure; a round never waits past 60 s.
  for _ in $(seq 1200); do kill -0 "$record_pid" 2>/dev/null || break; sleep 0.05; done
  if kill -0 "$record_pid" 2>/dev/null; then
    say "round $round: still running 60 s after the kill; killing the rest"
    pkill -KILL -s "$record_pid" || true
  fi
  { wait "$record_pid" || true; } 2>/dev/null
  round_readable=0 round_stores=0 losses=""
  for store in "$run"/rank-*.sqlite; do
    round_stores=$((round_stores + 1))
    [ "$(sqlite3 "$store" 'pragma integrity_check' 2>/dev/null)" = ok ] && round_readable=$((round_readable + 1))
  done
  for r in "${killed_ranks[@]}"; do
    [ -f "$run/rank-$r.sqlite" ] || continue
    l="$(loss_ms "$run/rank-$r.sqlite" "$kill_ns")"
    losses+="rank $r ${l} ms; "
    [ "$l" != n/a ] && [ "$(echo "$l > $worst" | bc -l)" = 1 ] && worst="$l"
  done
  ok_analyse=no
  "$build/bin/syncopate" analyze "$run" --no-save > "$work/analyze-$round" 2>&1 && { ok_analyse=yes; analysed=$((analysed + 1)); }
  stores_total=$((stores_total + round_stores)); readable=$((readable + round_readable))
  say "round $round: killed $victim; stores readable $round_readable/$round_stores; analyze $ok_analyse; lost ${losses:-n/a (no rank killed)}"
  rm -rf "$run"
done
if $json; then
  printf '{"rounds": %d, "stores": %d, "readable": %d, "analysed": %d, "worst_loss_ms": %s}\n' \
    "$rounds" "$stores_total" "$readable" "$analysed" "$worst"
else
  echo "summary: rounds=$rounds stores readable=$readable/$stores_total analysed=$analysed/$rounds worst_loss_ms=$worst"
fi

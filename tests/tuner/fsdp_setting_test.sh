#!/bin/sh
# PyTorch FSDP's settings recommended in its own words, then checked by re-running the job with
# them (docs/tuner.md, "FSDP: prefetching and the rate limiter"): framework_trainer's fsdp as
# FSDP issues it (--fsdp-streams: all-gathers on an unshard stream, reduce-scatters on a
# post-backward stream) at full width and 4 blocks on four simulated GPUs, without the rate
# limiter, recorded with backward_prefetch=None: each unit's backward all-gather is then issued
# after the reduce-scatter before it, and NCCL runs it after that one. The report reads the three
# settings from the calls, recommends BACKWARD_PRE, and predicts BACKWARD_POST; the job re-run
# with each is within 8% of its prediction, and its own report reads the value it ran with and
# predicts None back within 8% of the first run.
# Usage: fsdp_setting_test.sh SYNCOPATE FRAMEWORK_TRAINER PROFILE SIMGPU_LIBRARY_DIR
. "$(dirname "$0")/framework_job.sh"

record() {  # NAME BACKWARD_PREFETCH: records and tunes into $WORK/NAME and $WORK/NAME.json
  expect 0 "syncopate record: 4 store" -- "$SYNCOPATE" record -o "$WORK/$1" -- mpirun -np 4 --oversubscribe \
    --bind-to none --mca btl self,vader "$TRAINER" --mode fsdp --config gpt2-small-8k --layers 4 --iterations 4 \
    --warmup 1 --micro-batch 32 --fsdp-streams --limit-all-gathers false --backward-prefetch "$2"
  expect 0 '"measured_iteration_ms"' -- "$SYNCOPATE" tune "$WORK/$1" --json
  cp "$WORK/out" "$WORK/$1.json"
}

record none none
python3 - "$WORK/none.json" <<'PY' || failures=$((failures + 1))
import json, sys
from tune_report import report
doc = report(sys.argv[1])
assert "PyTorch FSDP" in [f["name"] for f in doc["framework"]["detected"]], doc["framework"]["detected"]
fsdp = doc["framework"]["fsdp"]
# The root and 4 blocks gathered for forward, the 4 blocks again for backward (the root is kept),
# every unit's gradients reduce-scattered: 135.2 MiB of parameters a forward, padding included.
assert fsdp["found"] and fsdp["forward_gathers"] == 5 and fsdp["backward_gathers"] == 4, fsdp
assert fsdp["reduce_scatters"] == 5 and fsdp["parameter_bytes"] == 141723648, fsdp
assert fsdp["recorded"] == {"backward_prefetch": "None", "forward_prefetch": False, "limit_all_gathers": False}, fsdp
values = {r["value"]: r for r in fsdp["backward_prefetch"]}
assert values["None"]["predicted_iteration_ms"] == doc["replay_iteration_ms"], values
(setting,) = [r for r in doc["recommendations"] if r["setting"] == "backward_prefetch"]
assert setting == values["BACKWARD_PRE"] and setting["gain"] >= 0.02, setting
assert "backward_prefetch=BackwardPrefetch.BACKWARD_PRE" in setting["how_to_apply"], setting
assert "not_predicted" not in fsdp, fsdp
assert [r["value"] for r in fsdp["limit_all_gathers"]] == ["False", "True"], fsdp["limit_all_gathers"]
assert not [r for r in doc["recommendations"] if r["setting"] == "limit_all_gathers"], doc["recommendations"]
PY

# Each re-run against what the first run predicted for it, and what its own report reads and
# predicts back.
check() {  # NAME VALUE
  python3 - "$WORK/none.json" "$WORK/$1.json" "$2" <<'PY' || failures=$((failures + 1))
import json, sys
from tune_report import median_step, report as doc
before, after, value = doc(sys.argv[1]), doc(sys.argv[2]), sys.argv[3]
predicted = {r["value"]: r for r in before["framework"]["fsdp"]["backward_prefetch"]}[value]["predicted_iteration_ms"]
# Each run's step is the median of its modelled iterations (tune_report.py says why), each of
# them shown when it misses.
measured = median_step(after)
error = measured / predicted - 1
assert abs(error) < 0.08, (measured, predicted, after["replay_per_iteration"])
fsdp = after["framework"]["fsdp"]
assert fsdp["recorded"]["backward_prefetch"] == value, fsdp
assert not [r for r in after["recommendations"] if r["setting"] == "backward_prefetch"], after["recommendations"]
back = {r["value"]: r for r in fsdp["backward_prefetch"]}["None"]["predicted_iteration_ms"]
measured_before = median_step(before)
back_error = measured_before / back - 1
assert abs(back_error) < 0.08, (measured_before, back, before["replay_per_iteration"])
print("ok: %s predicted %.3f ms, measured %.3f ms (%+.2f%%); None predicted back %.3f ms, measured %.3f ms" % (
    value, predicted, measured, 100 * error, back, measured_before))
PY
}
record pre pre
check pre BACKWARD_PRE
record post post
check post BACKWARD_POST

finish

#!/bin/sh
# A sharded optimizer's overlaps recommended in the framework's words, then checked by re-running
# the job with them (docs/tuner.md, "Sharded optimizers: overlapping reduction and gathering"):
# framework_trainer's zero1 at full size on four simulated GPUs, recorded with every
# reduce-scatter after backward and every all-gather after the step, tuned, and recorded again
# with --overlap-grad-reduce (Megatron-LM's flag, DeepSpeed's overlap_comm), with
# --overlap-param-gather, and with both; each re-run's measured step is within 8% of what the
# first run predicted for it, and each re-run's own report sees what is on and recommends only
# what is still off. The same job with its collectives issued as PyTorch's synchronous ones
# (--process-group-stream: on the process group's stream, waited for at once) is seen so, and
# its predictions, made by moving those calls and waits, are within 8% of the same re-runs.
# Usage: sharded_setting_test.sh SYNCOPATE FRAMEWORK_TRAINER PROFILE SIMGPU_LIBRARY_DIR
. "$(dirname "$0")/framework_job.sh"

record() {  # NAME [TRAINER FLAGS...]: records and tunes into $WORK/NAME and $WORK/NAME.json
  name=$1
  shift
  expect 0 "syncopate record: 4 store" -- "$SYNCOPATE" record -o "$WORK/$name" -- mpirun -np 4 --oversubscribe \
    --bind-to none --mca btl self,vader "$TRAINER" --mode zero1 --config gpt2-small-8k --iterations 6 --warmup 1 \
    --micro-batch 32 "$@"
  expect 0 '"measured_iteration_ms"' -- "$SYNCOPATE" tune "$WORK/$name" --json
  cp "$WORK/out" "$WORK/$name.json"
}

record in_line
python3 - "$WORK/in_line.json" <<'PY' || failures=$((failures + 1))
import json, sys
from tune_report import report
doc = report(sys.argv[1])
sharded = doc["framework"]["sharded"]
# gpt2-small-8k's 17 buckets of 25 MiB (the first 1 MiB): 482 MB of gradients and of parameters.
assert sharded["found"] and sharded["reduce_scatters"] == 17 and sharded["all_gathers"] == 17, sharded
assert sharded["gradient_bytes"] == 481941504 and sharded["parameter_bytes"] == 481941504, sharded
assert sharded["reduce_scatters_issued"] == "in line" and sharded["all_gathers_issued"] == "in line", sharded
for name, flag in (("overlap_grad_reduce", "--overlap-grad-reduce"), ("overlap_param_gather", "--overlap-param-gather")):
    off, on = sharded[name]
    assert off["value"] == "off" and off["predicted_iteration_ms"] == doc["replay_iteration_ms"], (off, doc["replay_iteration_ms"])
    (setting,) = [r for r in doc["recommendations"] if r["setting"] == name]
    assert setting == on and on["value"] == "on" and on["gain"] >= 0.02, (setting, on)
    assert "Megatron-LM: " + flag in on["how_to_apply"], on
(reduce,) = [r for r in doc["recommendations"] if r["setting"] == "overlap_grad_reduce"]
assert '"overlap_comm": true' in reduce["how_to_apply"], reduce
both = sharded["both_on"]["predicted_iteration_ms"]
assert both < min(s[1]["predicted_iteration_ms"] for s in (sharded["overlap_grad_reduce"], sharded["overlap_param_gather"]))
PY

# Each re-run against what the first run predicted for it; what it shows on, and what it still
# recommends.
check() {  # NAME PREDICTION ON_REDUCE ON_GATHER
  python3 - "$WORK/in_line.json" "$WORK/$1.json" "$2" "$3" "$4" <<'PY' || failures=$((failures + 1))
import json, sys
from tune_report import report as doc
before, after = doc(sys.argv[1]), doc(sys.argv[2])
what, on = sys.argv[3], {"overlap_grad_reduce": sys.argv[4] == "on", "overlap_param_gather": sys.argv[5] == "on"}
sharded = before["framework"]["sharded"]
predicted = sharded["both_on"]["predicted_iteration_ms"] if what == "both" else sharded[what][1]["predicted_iteration_ms"]
measured = after["measured_iteration_ms"]
error = measured / predicted - 1
assert abs(error) < 0.08, (measured, predicted)
seen = after["framework"]["sharded"]
assert seen["found"] and seen["reduce_scatters"] == 17 and seen["all_gathers"] == 17, seen
issued = {"overlap_grad_reduce": "reduce_scatters_issued", "overlap_param_gather": "all_gathers_issued"}
for name, is_on in on.items():
    assert seen[name][0]["value"] == ("on" if is_on else "off"), (name, seen[name])
    assert seen[issued[name]] == ("overlapped" if is_on else "in line"), (name, seen)
    assert bool([r for r in after["recommendations"] if r["setting"] == name]) == (not is_on), (name, after["recommendations"])
print("ok: %s predicted %.3f ms, measured %.3f ms (%+.2f%%), against %.3f ms with neither" % (
    what, predicted, measured, 100 * error, before["measured_iteration_ms"]))
PY
}
record reduce --overlap-grad-reduce
check reduce overlap_grad_reduce on off
record gather --overlap-param-gather
check gather overlap_param_gather off on
record both --overlap-grad-reduce --overlap-param-gather
check both both on on

record group --process-group-stream
python3 - "$WORK/group.json" "$WORK/reduce.json" "$WORK/gather.json" "$WORK/both.json" <<'PY' || failures=$((failures + 1))
import json, sys
from tune_report import report as doc
group, reduce, gather, both = (doc(p) for p in sys.argv[1:])
sharded = group["framework"]["sharded"]
assert sharded["reduce_scatters_issued"] == "waited at once" and sharded["all_gathers_issued"] == "waited at once", sharded
assert "not_predicted" not in sharded, sharded
for name, run in (("overlap_grad_reduce", reduce), ("overlap_param_gather", gather), ("both", both)):
    predicted = sharded["both_on"]["predicted_iteration_ms"] if name == "both" else sharded[name][1]["predicted_iteration_ms"]
    measured = run["measured_iteration_ms"]
    error = measured / predicted - 1
    assert abs(error) < 0.08, (name, measured, predicted)
    print("ok: from synchronous collectives, %s predicted %.3f ms, measured %.3f ms (%+.2f%%)" % (name, predicted, measured, 100 * error))
PY

finish

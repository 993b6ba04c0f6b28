#!/bin/sh
# A sharded optimizer's bucket size recommended in the framework's words, then checked by
# re-running the job with it (docs/tuner.md, "Sharded optimizers: bucket size"): framework_trainer's
# zero1 at full size on four simulated GPUs, with both overlaps on (Megatron-LM's
# --overlap-grad-reduce and --overlap-param-gather) and buckets of 60 M elements (two: the last
# reduce-scatter after backward and the first all-gather before forward are exposed whole),
# tuned, and recorded again with the size `tune` recommends (the trainer's --bucket-size cuts
# buckets as Megatron-LM's --ddp-bucket-size does); the re-run's measured step is within 2% of the
# prediction, and its buckets are the ones predicted. The recorded buckets, rewritten as the other
# sizes are, replay the recorded run exactly.
# Usage: sharded_bucket_size_test.sh SYNCOPATE FRAMEWORK_TRAINER PROFILE SIMGPU_LIBRARY_DIR
. "$(dirname "$0")/framework_job.sh"

record() {  # NAME BUCKET_SIZE: records and tunes into $WORK/NAME and $WORK/NAME.json
  expect 0 "syncopate record: 4 store" -- "$SYNCOPATE" record -o "$WORK/$1" -- mpirun -np 4 --oversubscribe \
    --bind-to none --mca btl self,vader "$TRAINER" --mode zero1 --config gpt2-small-8k --iterations 6 --warmup 1 \
    --micro-batch 32 --overlap-grad-reduce --overlap-param-gather --bucket-size "$2"
  expect 0 '"measured_iteration_ms"' -- "$SYNCOPATE" tune "$WORK/$1" --json
  cp "$WORK/out" "$WORK/$1.json"
}

record large 60000000
size=$(python3 - "$WORK/large.json" <<'PY'
import json, sys
text = open(sys.argv[1]).read()
doc = json.loads(text[text.index("{"):])
sharded = doc["framework"]["sharded"]
assert sharded["found"] and sharded["reduce_scatters"] == 2 and sharded["all_gathers"] == 2, sharded
assert sharded["reduce_scatters_issued"] == "overlapped" and sharded["all_gathers_issued"] == "overlapped", sharded
sizes = sharded["bucket_size"]
rewritten = sizes["recorded_buckets_rewritten_ms"]
assert abs(rewritten / doc["replay_iteration_ms"] - 1) < 1e-6, (rewritten, doc["replay_iteration_ms"])
(setting,) = [r for r in doc["recommendations"] if r["setting"] == "bucket_size"]
assert setting in sizes["values"] and setting["gain"] >= 0.02, setting
assert setting["gain"] == max(v["gain"] for v in sizes["values"]), sizes
value = setting["value"]
assert "Megatron-LM: --ddp-bucket-size " + value in setting["how_to_apply"], setting
assert '"reduce_bucket_size": %s, "allgather_bucket_size": %s' % (value, value) in setting["how_to_apply"], setting
print(value)
PY
) || failures=$((failures + 1))
if [ -n "$size" ]; then
  record recommended "$size"
  python3 - "$WORK/large.json" "$WORK/recommended.json" <<'PY' || failures=$((failures + 1))
import json, sys
def doc(path):
    text = open(path).read()
    return json.loads(text[text.index("{"):])
before, after = doc(sys.argv[1]), doc(sys.argv[2])
(setting,) = [r for r in before["recommendations"] if r["setting"] == "bucket_size"]
measured = after["measured_iteration_ms"]
error = measured / setting["predicted_iteration_ms"] - 1
assert abs(error) < 0.02, (measured, setting)
assert after["framework"]["sharded"]["reduce_scatters"] == setting["buckets"], (after["framework"]["sharded"], setting)
# The re-run's own report: its size replays it, and nothing about the size is left to gain.
(same,) = [v for v in after["framework"]["sharded"]["bucket_size"]["values"] if v["value"] == setting["value"]]
assert abs(same["predicted_iteration_ms"] / after["replay_iteration_ms"] - 1) < 1e-6, (same, after["replay_iteration_ms"])
assert not [r for r in after["recommendations"] if r["setting"] == "bucket_size"], after["recommendations"]
print("ok: bucket_size=%s (%d buckets) predicted %.3f ms, measured %.3f ms (%+.2f%%), against %.3f ms with 60 M" % (
    setting["value"], setting["buckets"], setting["predicted_iteration_ms"], measured, 100 * error,
    before["measured_iteration_ms"]))
PY
fi

finish

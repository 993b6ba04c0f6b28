#!/bin/sh
# NCCL channel counts predicted, applied through NCCL's tuner plugin and measured
# (docs/tuner.md, "Channels"): framework_trainer's DDP at full size on four simulated GPUs whose
# profile gives each NCCL channel 12.5 GB/s of a 50 GB/s network, recorded with NCCL's default
# 16 channels; `tune` predicts the all-reduces on fewer channels (those of 16 MiB and more 1.2%
# faster on 4: they take fewer SMs from backward, as fast as before) and, asked for plans gaining
# 1%, writes a plan of channel counts and nccl_tuner.conf; `syncopate run --plan` applies it through the tuner plugin,
# the re-run's nccl_ops rows show the counts the plan named, and its measured step is within 8%
# of the prediction. NCCL_MAX_CTAS=4, recommended as well, is checked the same way.
# Usage: channels_test.sh SYNCOPATE FRAMEWORK_TRAINER PROFILE SIMGPU_LIBRARY_DIR
. "$(dirname "$0")/framework_job.sh"

JOB="mpirun -np 4 --oversubscribe --bind-to none --mca btl self,vader $TRAINER --mode ddp --config gpt2-small-8k \
--iterations 6 --warmup 1 --micro-batch 32"

# shellcheck disable=SC2086
expect 0 "syncopate record: 4 store" -- "$SYNCOPATE" record -o "$WORK/recorded" -- $JOB
expect 0 '"setting": "nccl_channels"' -- "$SYNCOPATE" tune "$WORK/recorded" --min-gain 0.01 --json
cp "$WORK/out" "$WORK/recorded.json"
python3 - "$WORK/recorded.json" "$WORK/recorded" <<'PY' || failures=$((failures + 1))
import json, os, sys
from tune_report import report
doc = report(sys.argv[1])
ch = doc["channels"]
assert ch["searched"] and ch["recorded_channels"] == 16 and ch["per_channel_bandwidth_gbps"] == 12.5, ch
(rule,) = ch["chosen"]
assert rule["collective"] == "AllReduce" and rule["channels"] == 4, ch["chosen"]
(rec,) = [r for r in doc["recommendations"] if r["setting"] == "nccl_channels"]
assert rec["value"] == "AllReduce on 4 channels" and rec["gain"] >= 0.01, rec
assert doc["plan"]["schedule"] == "as the program issues it" and doc["plan"]["channels"] == [rule], doc["plan"]
conf = open(os.path.join(sys.argv[2], "nccl_tuner.conf")).read().splitlines()
rows = [line for line in conf if line and not line.startswith("#")]
assert rows == ["allreduce,%d,%d,ring,simple,4,-1,4,-1,-1" % (rule["min_bytes"], rule["max_bytes"])], rows
PY

# shellcheck disable=SC2086
expect 0 "NCCL channel counts only" -- "$SYNCOPATE" run --plan "$WORK/recorded/plan.json" -o "$WORK/tuned" -- $JOB
expect 0 "nothing was reordered" -- "$SYNCOPATE" compare "$WORK/recorded" "$WORK/tuned"
expect 0 "schedule: the program's own, NCCL channels AllReduce on 4 channels" -- "$SYNCOPATE" compare "$WORK/recorded" "$WORK/tuned"
expect 0 '"measured_iteration_ms"' -- "$SYNCOPATE" tune "$WORK/tuned" --json
python3 - "$WORK/recorded.json" "$WORK/out" "$WORK/tuned" <<'PY' || failures=$((failures + 1))
import glob, json, sqlite3, sys
from tune_report import report as doc
before, after = doc(sys.argv[1]), doc(sys.argv[2])
(rule,) = before["channels"]["chosen"]
# Every all-reduce of the rule's sizes ran on the plan's count in the re-run, and every other
# collective on NCCL's own 16.
for store in sorted(glob.glob(sys.argv[3] + "/rank-*.sqlite")):
    rows = sqlite3.connect(store).execute(
        "SELECT s.value, c.bytes, n.channels FROM nccl_ops n JOIN strings s ON s.id = n.func_id "
        "JOIN collectives c ON c.correlation_id = n.correlation_id WHERE n.nccl_seq IS NOT NULL").fetchall()
    planned = [ch for func, size, ch in rows if func == "AllReduce" and rule["min_bytes"] <= size <= rule["max_bytes"]]
    others = [ch for func, size, ch in rows if not (func == "AllReduce" and rule["min_bytes"] <= size <= rule["max_bytes"])]
    assert planned and set(planned) == {4}, (store, set(planned))
    assert others and set(others) == {16}, (store, set(others))
predicted = before["plan"]["predicted_iteration_ms"]
measured = after["measured_iteration_ms"]
error = measured / predicted - 1
assert abs(error) < 0.08, (measured, predicted)
assert measured < before["measured_iteration_ms"], (measured, before["measured_iteration_ms"])
print("ok: AllReduce on 4 channels predicted %.3f ms, measured %.3f ms (%+.3f%%), against %.3f ms on 16" % (
    predicted, measured, 100 * error, before["measured_iteration_ms"]))
PY

# The same counts as users set them without Syncopate: NCCL_MAX_CTAS, recommended with its own
# prediction, and a re-run with it in the job's environment takes it.
cap=$(python3 - "$WORK/recorded.json" <<'PY'
import json, sys
from tune_report import report
doc = report(sys.argv[1])
(rec,) = [r for r in doc["recommendations"] if r["setting"] == "NCCL_MAX_CTAS"]
assert rec["value"] == "4" and rec["how_to_apply"].startswith("export NCCL_MAX_CTAS=4"), rec
assert [s["value"] for s in doc["framework"]["nccl"]["max_ctas"]] == ["1", "2", "4", "8"], doc["framework"]["nccl"]
print(rec["value"])
PY
) || failures=$((failures + 1))
if [ -n "$cap" ]; then
  # shellcheck disable=SC2086
  expect 0 "syncopate record: 4 store" -- env NCCL_MAX_CTAS="$cap" "$SYNCOPATE" record -o "$WORK/max_ctas" -- $JOB
  expect 0 '"measured_iteration_ms"' -- "$SYNCOPATE" tune "$WORK/max_ctas" --json
  python3 - "$WORK/recorded.json" "$WORK/out" "$WORK/max_ctas" <<'PY' || failures=$((failures + 1))
import glob, json, sqlite3, sys
from tune_report import report as doc
before, after = doc(sys.argv[1]), doc(sys.argv[2])
(rec,) = [r for r in before["recommendations"] if r["setting"] == "NCCL_MAX_CTAS"]
for store in sorted(glob.glob(sys.argv[3] + "/rank-*.sqlite")):
    counts = {c for (c,) in sqlite3.connect(store).execute("SELECT DISTINCT channels FROM nccl_ops WHERE nccl_seq IS NOT NULL")}
    assert counts == {4}, (store, counts)
measured = after["measured_iteration_ms"]
error = measured / rec["predicted_iteration_ms"] - 1
assert abs(error) < 0.08, (measured, rec)
print("ok: NCCL_MAX_CTAS=4 predicted %.3f ms, measured %.3f ms (%+.3f%%)" % (rec["predicted_iteration_ms"], measured, 100 * error))
PY
fi

finish

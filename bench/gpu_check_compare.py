#!/usr/bin/env python3
"""Compares what the collector recorded of samples/pytorch_ddp.py's measured steps with
torch.profiler's trace of the same steps (bench/gpu_check.sh runs both): kernel counts and total
kernel time, NCCL's kernels apart (the collector records them as collective ops).

    gpu_check_compare.py --store RUN/rank-0.sqlite --torch-trace trace.json --warmup W --steps N
                         [--label cupti] [--tolerance 0.05]

Prints one line per quantity and exits 1 if a count differs or a total time differs by more
than the tolerance (a fraction)."""

import argparse
import json
import sqlite3
import sys

KERNEL = 1
COLLECTIVE = 4


def store_figures(path, warmup, steps):
    """Kernels and collectives issued inside the measured ProfilerStep ranges."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    windows = []
    for name, start, end in db.execute(
            "select s.value, n.start_ns, n.end_ns from nvtx_ranges n join strings s on s.id = n.name_id "
            "where s.value like 'ProfilerStep#%'"):
        step = int(name.split("#", 1)[1].split()[0])
        if warmup <= step < warmup + steps:
            windows.append((start, end))
    if len(windows) != steps:
        raise SystemExit(f"gpu_check_compare: {path} holds {len(windows)} of the {steps} measured steps")
    counts = {KERNEL: 0, COLLECTIVE: 0}
    totals = {KERNEL: 0, COLLECTIVE: 0}
    for kind, issued, start, end in db.execute(
            "select o.kind, a.start_ns, o.start_ns, o.end_ns from ops o join api_calls a "
            "on a.correlation_id = o.correlation_id where o.kind in (?, ?)", (KERNEL, COLLECTIVE)):
        if any(s <= issued <= e for s, e in windows):
            counts[kind] += 1
            totals[kind] += end - start
    backend = db.execute("select value from meta where key = 'backend'").fetchone()[0]
    return counts, totals, backend


def torch_figures(path):
    """Kernels torch.profiler traced whose launch lies in one of its ProfilerStep ranges, as the
    store's are counted: its trace also holds kernels launched before its first active step
    that ran after it began (their launch is not in the trace)."""
    with open(path) as file:
        trace = json.load(file)
    events = trace.get("traceEvents", [])
    steps = [(e["ts"], e["ts"] + e.get("dur", 0)) for e in events
             if e.get("cat") == "user_annotation" and str(e.get("name", "")).startswith("ProfilerStep#")]
    launched = {e["args"]["correlation"]: e["ts"] for e in events
                if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})}
    counts = {"kernel": 0, "nccl": 0}
    totals = {"kernel": 0.0, "nccl": 0.0}
    outside = 0
    for event in events:
        if event.get("cat") != "kernel":
            continue
        at = launched.get(event.get("args", {}).get("correlation"))
        if at is None or not any(start <= at <= end for start, end in steps):
            outside += 1
            continue
        key = "nccl" if event.get("name", "").startswith("nccl") else "kernel"
        counts[key] += 1
        totals[key] += float(event.get("dur", 0.0)) * 1000.0  # microseconds -> ns
    return counts, totals, outside


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", required=True)
    parser.add_argument("--torch-trace", required=True)
    parser.add_argument("--warmup", type=int, required=True)
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("--label", default="")
    parser.add_argument("--tolerance", type=float, default=0.05)
    arguments = parser.parse_args()

    counts, totals, backend = store_figures(arguments.store, arguments.warmup, arguments.steps)
    reference_counts, reference_totals, outside = torch_figures(arguments.torch_trace)
    if outside:
        print(f"{arguments.label or backend}: torch.profiler's trace also has {outside} kernel(s) launched outside its steps, not counted")
    label = arguments.label or backend
    ok = True
    rows = [("kernels", counts[KERNEL], reference_counts["kernel"], totals[KERNEL], reference_totals["kernel"]),
            ("nccl", counts[COLLECTIVE], reference_counts["nccl"], totals[COLLECTIVE], reference_totals["nccl"])]
    for name, count, reference_count, total, reference_total in rows:
        relative = (total - reference_total) / reference_total if reference_total > 0 else 0.0
        print(f"{label}: {name} count {count} vs torch.profiler {reference_count}; "
              f"total {total / 1e6:.3f} ms vs {reference_total / 1e6:.3f} ms ({relative:+.2%})")
        if name == "kernels":
            ok &= count == reference_count and abs(relative) <= arguments.tolerance
    store = sqlite3.connect(arguments.store)
    untimed = ", ".join(f"{name} {value}" for name, value in store.execute(
        "select name, value from counters where name like 'ops_%' and value != 0 order by name"))
    print(f"{label}: ops counted untimed or without GPU activity: {untimed or 'none'}")
    unnamed = store.execute("select count(*) from ops o join strings s on s.id = o.name_id "
                            "where o.kind = 1 and s.value = '<unnamed kernel>'").fetchone()[0]
    unreadable = store.execute("select count(distinct correlation_id) from op_args where arg_index = 65535").fetchone()[0]
    print(f"{label}: kernels without a name {unnamed}, launches without a readable parameter layout {unreadable}")
    print(f"{label}: {'agrees' if ok else 'DIFFERS'} (backend {backend}, tolerance {arguments.tolerance:.0%})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

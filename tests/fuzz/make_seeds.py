#!/usr/bin/env python3
"""Seed corpora and dictionaries for scripts/fuzz.sh.

    make_seeds.py OUT SOURCE_DIR SHARED_DIR

Writes OUT/seeds/<target>/ (inputs to start from) and OUT/dictionaries/<target>.dict (the
format's keys, for libFuzzer's -dict). Seeds come from the real traces in SHARED_DIR/traces,
read in place (the small ones whole, parts of the larger ones), and from the project's own
fixtures and files: the recorded stores, the import inputs, the plan, the machine profile, and
the inputs the targets once failed on (tests/fixtures/fuzz), so that each campaign replays them
first under its memory limit.
Dictionaries are the string literals of the code that reads each format, so they follow the
readers as they change.
"""
import gzip
import json
import os
import re
import shutil
import sqlite3
import sys
import tempfile

OUT, SOURCE, SHARED = sys.argv[1], sys.argv[2], sys.argv[3]
KINETO = os.path.join(SHARED, "traces", "kineto")
FIXTURES = os.path.join(SOURCE, "tests", "fixtures")

# Small real traces used whole; larger ones give their first events (a seed of megabytes
# would make every execution slow).
WHOLE_TRACES = [
    "triton_example/triton_example.json.gz",
    "critical_path/cuda_event_sync/event_sync_trace.json.gz",
    "critical_path/cuda_event_sync_multi_stream/event_sync_trace.json.gz",
    "critical_path/simple_add/benchmark_result_493459_1694039959_trace.json.gz",
    "amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
]
PART_TRACES = [
    "trace_filter/sampled_rank-0.json.gz",
    "nccl_parser_config/nccl_data.json.gz",
    "ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
]
EVENTS_PER_PART = 300
ROWS_PER_TABLE = 200

# Where each format's reader lives: its string literals make the dictionary.
READERS = {
    "kineto": ["analyzer/src/import/kineto_trace.cpp", "analyzer/src/import/kineto_import.cpp",
               "analyzer/src/import/nccl_names.cpp"],
    "nsys_sqlite": ["analyzer/src/import/nsys_export.cpp", "analyzer/src/import/nsys_import.cpp",
                    "analyzer/src/import/nsys_sync_records.cpp"],
    "run_store": ["trace/src/schema.cpp", "trace/src/reader.cpp", "analyzer/src/run_loader.cpp"],
    "plan": ["tuner/src/plan.cpp", "tuner/src/knobs.cpp", "tuner/src/schedule_rules.cpp"],
    "machine_profile": ["simgpu/core/src/profile.cpp"],
    "run_meta": ["trace/src/run_dir.cpp"],
    "attach": ["collector/control_files/control_files.cpp"],
}
DICTIONARY_OF = {"kineto_json": "kineto", "kineto_gzip": "kineto", "nsys_sqlite": "nsys_sqlite",
                 "run_store": "run_store", "plan": "plan", "machine_profile": "machine_profile",
                 "run_meta": "run_meta", "attach_request": "attach", "attach_status": "attach"}
JSON_FORMATS = {"kineto", "plan", "machine_profile", "run_meta", "attach"}


def fresh_seeds():
    shutil.rmtree(os.path.join(OUT, "seeds"), ignore_errors=True)


def seed_dir(target):
    path = os.path.join(OUT, "seeds", target)
    os.makedirs(path, exist_ok=True)
    return path


def write(target, name, data):
    with open(os.path.join(seed_dir(target), name), "wb") as f:
        f.write(data)


def kineto_seeds():
    for rel in WHOLE_TRACES:
        raw = open(os.path.join(KINETO, rel), "rb").read()
        name = rel.replace("/", "-")
        write("kineto_gzip", name, raw)
        write("kineto_json", name[:-3], gzip.decompress(raw))
    for rel in PART_TRACES:
        doc = json.loads(gzip.decompress(open(os.path.join(KINETO, rel), "rb").read()))
        events = doc.get("traceEvents", [])
        # The first events of each kind, so that every kind the trace holds is in the seed.
        by_kind = {}
        for e in events:
            by_kind.setdefault((e.get("ph"), e.get("cat")), []).append(e)
        doc["traceEvents"] = [e for kind in by_kind.values() for e in kind[:EVENTS_PER_PART // max(1, len(by_kind)) + 1]]
        text = json.dumps(doc).encode()
        name = rel.split("/")[0] + "-part.json"
        write("kineto_json", name, text)
        write("kineto_gzip", name + ".gz", gzip.compress(text, 6))
    for f in sorted(os.listdir(os.path.join(FIXTURES, "kineto", "input"))):
        text = open(os.path.join(FIXTURES, "kineto", "input", f), "rb").read()
        write("kineto_json", "fixture-" + f, text)
        write("kineto_gzip", "fixture-" + f + ".gz", gzip.compress(text, 6))


def shrunk_database(source, target, name):
    """A copy of an SQLite file with the first ROWS_PER_TABLE rows of each table, vacuumed."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "copy.sqlite")
        shutil.copyfile(source, copy)
        db = sqlite3.connect(copy)
        db.execute("PRAGMA journal_mode = DELETE")
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
        for t in tables:
            try:
                db.execute(f'DELETE FROM "{t}" WHERE rowid NOT IN (SELECT rowid FROM "{t}" ORDER BY rowid LIMIT {ROWS_PER_TABLE})')
            except sqlite3.OperationalError:
                pass  # a table without rowid keeps all its rows
        db.commit()
        db.execute("VACUUM")
        db.close()
        write(target, name, open(copy, "rb").read())


def database_seeds():
    nsys_fixture = os.path.join(FIXTURES, "nsys", "input")
    for f in sorted(os.listdir(nsys_fixture)):
        write("nsys_sqlite", "fixture-" + f, open(os.path.join(nsys_fixture, f), "rb").read())
    shrunk_database(os.path.join(SHARED, "traces", "nsys", "cloverleaf", "perlmutter-cloverleaf-cuda.sqlite"),
                    "nsys_sqlite", "cloverleaf-part.sqlite")
    stores = os.path.join(FIXTURES, "dp_trainer", "input")
    for f in sorted(os.listdir(stores)):
        if f.endswith(".sqlite"):
            shrunk_database(os.path.join(stores, f), "run_store", "dp_trainer-" + f)


def document_seeds():
    for root, _, files in os.walk(FIXTURES):
        for f in files:
            if f == "meta.json":
                rel = os.path.relpath(root, FIXTURES).replace(os.sep, "-")
                write("run_meta", rel + ".json", open(os.path.join(root, f), "rb").read())
    profiles = os.path.join(SOURCE, "simgpu", "profiles")
    for f in sorted(os.listdir(profiles)):
        write("machine_profile", f, open(os.path.join(profiles, f), "rb").read())
    plans = os.path.join(SOURCE, "tests", "fuzz", "seeds", "plan")
    for f in sorted(os.listdir(plans)):
        write("plan", f, open(os.path.join(plans, f), "rb").read())
    # The shapes collector/include/syncopate/collector/control_files.hpp documents.
    write("attach_request", "iterations.json", b'{"id": 3, "first_iteration": 42, "iterations": 5}')
    write("attach_request", "seconds.json", b'{"id": 4, "first_iteration": -1, "seconds": 2.0}')
    write("attach_status", "waiting.json",
          b'{"pid": 1234, "host": "n1", "rank": 0, "state": "waiting", "request": 3, "iteration": 40,'
          b' "iterations_per_second": 9.5, "recorded_iterations": 0, "marker": "ProfilerStep",'
          b' "heartbeat_unix_ns": 1700000000000000000, "message": ""}')


LITERAL = re.compile(r'"((?:[^"\\\n]|\\.){1,48})"')


def dictionaries():
    os.makedirs(os.path.join(OUT, "dictionaries"), exist_ok=True)
    for target, fmt in DICTIONARY_OF.items():
        words = set()
        for rel in READERS[fmt]:
            for w in LITERAL.findall(open(os.path.join(SOURCE, rel), encoding="utf-8").read()):
                if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_ .#:-]*", w):
                    words.add(w)
        with open(os.path.join(OUT, "dictionaries", target + ".dict"), "w") as d:
            for w in sorted(words):
                # JSON formats match keys and string values with their quotes; SQL ones bare.
                entry = '\\"' + w + '\\"' if fmt in JSON_FORMATS else w
                d.write('"' + entry + '"\n')


def kept_inputs():
    """The inputs the targets once failed on start every campaign, under its memory limit."""
    kept = os.path.join(FIXTURES, "fuzz")
    for target in sorted(os.listdir(kept)):
        folder = os.path.join(kept, target)
        if os.path.isdir(folder):
            for f in sorted(os.listdir(folder)):
                write(target, "kept-" + f, open(os.path.join(folder, f), "rb").read())


fresh_seeds()
kept_inputs()
kineto_seeds()
database_seeds()
document_seeds()
dictionaries()

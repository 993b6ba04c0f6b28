#!/usr/bin/env python3
"""Torn stores handed to `syncopate analyze` (docs/reliability.md, "Cut-off traces and torn
stores"): a store is cut at page boundaries and in the middle of pages, and has its last pages
overwritten with 0xA5 bytes; each copy, alone in a run directory, is analysed with
`analyze --json --no-save` under a 3 GB address-space limit and a 30 s timeout. Prints one line
per copy: how it was torn, the exit code, the ops and API calls analysed and the tables warned
of as torn (or the error sentence). A crash or a hang fails the script.

    bench/reliability/tear_stores.py STORE [--every N] [--syncopate PATH]

--every N tears at every Nth page only (1 by default: every page).
"""
import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile


def analyse(syncopate, run):
    command = f"ulimit -v 3000000; exec '{syncopate}' analyze '{run}' --json --no-save"
    try:
        done = subprocess.run(["bash", "-c", command], capture_output=True, timeout=30)
    except subprocess.TimeoutExpired:
        return "hang", "no answer within 30 s"
    if done.returncode == 0:
        doc = json.loads(done.stdout)
        torn = sum(1 for d in doc.get("diagnostics", []) if d.get("message", "").startswith("the store is torn"))
        return 0, f"ops {doc['run']['ops']}, API calls {doc['run']['api_calls']}, torn tables {torn}"
    if done.returncode == 1:
        return 1, done.stderr.decode(errors="replace").strip().splitlines()[-1]
    return "crash", done.stderr.decode(errors="replace").strip().splitlines()[-1:]


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store", help="a store (rank-<R>.sqlite or pid-<P>.sqlite), closed")
    parser.add_argument("--every", type=int, default=1)
    parser.add_argument("--syncopate", default=os.path.join(root, "build", "bin", "syncopate"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        intact = os.path.join(scratch, "intact.sqlite")
        shutil.copy(args.store, intact)
        with sqlite3.connect(f"file:{intact}?mode=ro", uri=True) as db:
            page = db.execute("PRAGMA page_size").fetchone()[0]
        size = os.path.getsize(intact)
        pages = size // page
        torn_pages = range(pages - 1, 0, -args.every)
        tears = [(f"cut after page {p}", p * page, None) for p in torn_pages]
        tears += [(f"cut inside page {p + 1}", p * page + page // 2, None) for p in torn_pages]
        tears += [(f"pages {p + 1}-{pages} overwritten", None, p * page) for p in torn_pages]
        name = os.path.basename(args.store)
        bad = 0
        for how, cut, overwrite in tears:
            copy = os.path.join(scratch, "run")
            shutil.rmtree(copy, ignore_errors=True)
            os.makedirs(copy)
            data = open(intact, "rb").read()
            if cut is not None:
                data = data[:cut]
            else:
                data = data[:overwrite] + b"\xa5" * (size - overwrite)
            open(os.path.join(copy, name), "wb").write(data)
            code, what = analyse(args.syncopate, copy)
            bad += code not in (0, 1)
            print(f"{how:>28}: exit {code}  {what}")
    print(f"summary: {len(tears)} torn copies of {name} ({pages} pages of {page} bytes), {bad} crashes or hangs")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

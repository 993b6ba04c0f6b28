#!/usr/bin/env python3
"""Damaged stores handed to `syncopate analyze` (docs/reliability.md): N times, copy a run
directory, change 1-8 random bytes of one of its stores, and run `analyze --json --no-save` on the
copy under a 3 GB address-space limit and a 30 s timeout. Every outcome must be a result (exit 0)
or a clear error (exit 1); a crash, an abort or a hang is kept as an input to replay.

    bench/reliability/mutate_stores.py RUN_DIR N [--seed S] [--keep DIR] [--syncopate PATH]

Prints one line per failure and a summary line: tries, results, errors, crashes, hangs.
"""
import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", help="a run directory (rank-*.sqlite and meta.json)")
    parser.add_argument("tries", type=int)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", default="mutate-failures", help="where failing stores are kept")
    parser.add_argument("--syncopate", default=os.path.join(root, "build", "bin", "syncopate"))
    args = parser.parse_args()
    stores = sorted(f for f in os.listdir(args.run) if f.endswith(".sqlite"))
    if not stores:
        sys.exit(f"mutate_stores: {args.run} holds no store")
    rng = random.Random(args.seed)
    counts = {"results": 0, "errors": 0, "crashes": 0, "hangs": 0}
    with tempfile.TemporaryDirectory() as scratch:
        copy = os.path.join(scratch, "run")
        for attempt in range(args.tries):
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(args.run, copy)
            store = os.path.join(copy, rng.choice(stores))
            data = bytearray(open(store, "rb").read())
            for _ in range(rng.randint(1, 8)):
                data[rng.randrange(len(data))] = rng.randrange(256)
            open(store, "wb").write(data)
            command = f"ulimit -v 3000000; exec '{args.syncopate}' analyze '{copy}' --json --no-save"
            try:
                done = subprocess.run(["bash", "-c", command], capture_output=True, timeout=30)
                kind = {0: "results", 1: "errors"}.get(done.returncode, "crashes")
                detail = done.stderr.decode(errors="replace").strip().splitlines()[-1:] if kind == "crashes" else []
            except subprocess.TimeoutExpired:
                kind, detail = "hangs", ["no answer within 30 s"]
            counts[kind] += 1
            if kind in ("crashes", "hangs"):
                kept = os.path.join(args.keep, f"{kind}-seed{args.seed}-{attempt}")
                shutil.copytree(copy, kept)
                print(f"try {attempt}: {kind[:-1] if kind != 'crashes' else 'crash'} ({' '.join(detail)}); kept in {kept}")
    print("summary: tries={} results={results} errors={errors} crashes={crashes} hangs={hangs}".format(args.tries, **counts))
    sys.exit(1 if counts["crashes"] or counts["hangs"] else 0)


if __name__ == "__main__":
    main()

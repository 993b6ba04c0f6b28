#!/usr/bin/env python3
"""Kineto traces cut off mid-write handed to `syncopate import kineto` (docs/reliability.md,
"Cut-off traces and torn stores"). A trace (.json or .json.gz) is cut at N evenly spaced bytes
of its text (written as .json) and at N of its gzip stream (written as .json.gz); then, with
--mutate T, T copies cut at a random byte have 1-8 random bytes changed before the cut (of the
text, and every other try of the gzip stream). Each is
imported under a 3 GB address-space limit and a 30 s timeout. Prints one line per even cut: where
it falls, the exit code, the events imported (or the error sentence), the seconds taken; then a
summary of the random tries: results, refusals, crashes, hangs. A crash or a hang fails the script.

    bench/reliability/cut_traces.py TRACE N [--mutate T] [--seed S] [--syncopate PATH]
"""
import argparse
import gzip
import os
import random
import re
import subprocess
import sys
import tempfile
import time
import zlib


def imported(syncopate, file, out):
    command = f"ulimit -v 3000000; exec '{syncopate}' import kineto '{file}' -o '{out}'"
    start = time.monotonic()
    try:
        done = subprocess.run(["bash", "-c", command], capture_output=True, timeout=30)
    except subprocess.TimeoutExpired:
        return "hang", "no answer within 30 s", 30.0
    seconds = time.monotonic() - start
    if done.returncode == 0:
        events = re.search(rb"(\d+) source events", done.stdout)
        return 0, f"{int(events.group(1)) if events else '?'} events", seconds
    if done.returncode == 1:
        return 1, done.stderr.decode(errors="replace").strip().splitlines()[-1], seconds
    return "crash", " ".join(done.stderr.decode(errors="replace").strip().splitlines()[-1:]), seconds


def inflated_length(gz_prefix):
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    return len(d.decompress(gz_prefix))


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace", help="a Kineto trace, .json or .json.gz")
    parser.add_argument("cuts", type=int)
    parser.add_argument("--mutate", type=int, default=0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--syncopate", default=os.path.join(root, "build", "bin", "syncopate"))
    args = parser.parse_args()
    raw = open(args.trace, "rb").read()
    text = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
    compressed = raw if raw[:2] == b"\x1f\x8b" else gzip.compress(text)
    bad = 0
    with tempfile.TemporaryDirectory() as scratch:
        def run(name, data):
            file = os.path.join(scratch, name)
            open(file, "wb").write(data)
            out = os.path.join(scratch, "run-" + str(time.monotonic_ns()))
            return imported(args.syncopate, file, out)

        code, what, seconds = run("whole.json", text)
        print(f"whole text, {len(text)} bytes: exit {code}  {what}  {seconds:.2f} s")
        for i in range(1, args.cuts + 1):
            cut = len(text) * i // (args.cuts + 1)
            code, what, seconds = run("cut.json", text[:cut])
            bad += code not in (0, 1)
            print(f"text cut at byte {cut} ({100 * cut / len(text):.0f}%): exit {code}  {what}  {seconds:.2f} s")
        for i in range(1, args.cuts + 1):
            cut = len(compressed) * i // (args.cuts + 1)
            code, what, seconds = run("cut.json.gz", compressed[:cut])
            bad += code not in (0, 1)
            print(f"gzip cut at compressed byte {cut} (text byte {inflated_length(compressed[:cut])}): exit {code}  {what}  {seconds:.2f} s")
        rng = random.Random(args.seed)
        counts = {"results": 0, "refusals": 0, "crashes": 0, "hangs": 0}
        for attempt in range(args.mutate):
            source, name = (text, "mutated.json") if attempt % 2 == 0 else (compressed, "mutated.json.gz")
            data = bytearray(source[: rng.randrange(1, len(source))])
            for _ in range(rng.randint(1, 8)):
                data[rng.randrange(len(data))] = rng.randrange(256)
            code, what, _ = run(name, bytes(data))
            kind = {0: "results", 1: "refusals", "hang": "hangs"}.get(code, "crashes")
            counts[kind] += 1
            if kind in ("crashes", "hangs"):
                bad += 1
                kept = f"cut-traces-{kind}-seed{args.seed}-{attempt}-{name}"
                open(kept, "wb").write(data)
                print(f"try {attempt}: {kind} ({what}); kept in {kept}")
        if args.mutate:
            print("mutated: tries={} results={results} refusals={refusals} crashes={crashes} hangs={hangs}".format(args.mutate, **counts))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

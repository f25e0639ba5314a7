"""Collector pauses over a heap of committed offsets, with and without ``frozen_survivors``.

    python tests/benchmarks/bench_collector.py [--offsets 1000000] [--commits 2000000]

A heap like a loaded coordinator's (``--offsets`` committed offsets: the records' key and
value dataclasses in a dict), then ``--commits`` replacements in batches of 1,000 (each
batch lives a while, as requests in flight do). Every collection's pause is timed with
``gc.callbacks`` (``coordinator.server.collector.CollectorPauses``); the report gives the
full collections, how many paused over 20 ms and the longest, each way, each in a fresh
interpreter. Pauses are wall times (noisy on a busy machine) and, in brackets, the
collecting thread's CPU time; the full-collection count is not noisy.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

_CHILD = r'''
import gc, json, sys, time
from coordinator.server.collector import CollectorPauses, frozen_survivors
from storage.records import OffsetCommitKey, OffsetCommitValue
offsets_n, commits, freeze = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "1"
offsets = {}
for i in range(offsets_n):
    key = OffsetCommitKey(f"group-{i // 100}", "topic", i % 100)
    offsets[key] = OffsetCommitValue(offset=i, metadata="", commit_timestamp=i)
keys = list(offsets)
gc.collect()
pauses = CollectorPauses()
began = time.perf_counter()
with (frozen_survivors() if freeze else __import__("contextlib").nullcontext()):
    with pauses.registered():
        for start in range(0, commits, 1000):
            batch = [OffsetCommitValue(offset=n, metadata="", commit_timestamp=n)
                     for n in range(start, start + 1000)]
            for n, value in enumerate(batch, start):
                offsets[keys[n % offsets_n]] = value
elapsed = time.perf_counter() - began
print(json.dumps({"full": pauses.count[2], "over_20ms": pauses.long,
                  "over_20ms_cpu": pauses.long_cpu, "longest_ms": max(pauses.longest) * 1000,
                  "longest_cpu_ms": max(pauses.cpu_longest) * 1000,
                  "full_total_ms": pauses.total[2] * 1000, "seconds": elapsed}))
'''


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--offsets", type=int, default=1_000_000)
    parser.add_argument("--commits", type=int, default=2_000_000)
    args = parser.parse_args()
    print(f"{args.offsets:,} committed offsets, {args.commits:,} commits\n")
    print("| collector | full collections | pauses > 20 ms (CPU) | longest pause ms (CPU) | "
          "full collections' total ms | run s |\n|---|---:|---:|---:|---:|---:|")
    for label, freeze in (("CPython's default", "0"), ("frozen_survivors", "1")):
        done = subprocess.run([sys.executable, "-c", _CHILD, str(args.offsets),
                               str(args.commits), freeze], capture_output=True, text=True,
                              check=True)
        r = json.loads(done.stdout)
        print(f"| {label} | {r['full']} | {r['over_20ms']} ({r['over_20ms_cpu']}) | "
              f"{r['longest_ms']:.1f} ({r['longest_cpu_ms']:.1f}) | "
              f"{r['full_total_ms']:.0f} | {r['seconds']:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

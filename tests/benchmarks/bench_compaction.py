"""Compaction's memory and its effect on the event loop (issue 15 item 4, issue 14).

    python tests/benchmarks/bench_compaction.py [--records 1000000 2500000]

For each size, a log of offset commits (1000 groups x 16 partitions, so nearly every entry
is dead) is written in a child process; a second child opens it, resets its peak RSS
(``/proc/self/clear_refs``), compacts it in a worker thread while the main thread sleeps
1 ms at a time, and reports:

* the log's size and the compaction's wall time;
* the extra peak RSS the compaction took (VmHWM after, minus RSS before it);
* the longest the main thread waited beyond its 1 ms sleep while compaction ran (the
  stall a Trio loop in that process would see), and the p99 of those waits.

Each row runs in a fresh process, so one row's garbage does not hide the next one's peak.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GROUPS, PARTITIONS = 1000, 16


def _status(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise KeyError(field)


def write(path: str, records: int) -> None:
    from storage.log import Log
    from storage.records import OffsetCommitKey, OffsetCommitValue, Record

    def commit(i: int) -> Record:
        key = OffsetCommitKey(f"group-{i % GROUPS}", "orders", (i // GROUPS) % PARTITIONS)
        return Record(key, OffsetCommitValue(i, 3, "", 1_700_000_000_000 + i))

    with Log.open(path, fsync="never") as log:
        for start in range(0, records, 10_000):
            log.append([commit(i) for i in range(start, min(records, start + 10_000))])


def measure(path: str) -> dict[str, float]:
    from storage.compaction import CompactionPolicy, compact
    from storage.log import Log

    with Log.open(path, fsync="never") as log:
        size = sum(s.size for s in log.segments)
        before = _status("VmRSS")
        Path("/proc/self/clear_refs").write_text("5")  # VmHWM := VmRSS
        waits: list[float] = []
        done = threading.Event()
        result: list[object] = []

        def run() -> None:
            result.append(compact(log, CompactionPolicy()))
            done.set()

        began = time.perf_counter()
        worker = threading.Thread(target=run)
        worker.start()
        while not done.is_set():
            t = time.perf_counter()
            time.sleep(0.001)
            waits.append(time.perf_counter() - t - 0.001)
        worker.join()
        seconds = time.perf_counter() - began
        peak = _status("VmHWM")
    waits.sort()
    return {
        "log_mb": size / 1e6,
        "seconds": seconds,
        "extra_peak_mib": (peak - before) / 2**20,
        "max_stall_ms": waits[-1] * 1000 if waits else 0.0,
        "p99_stall_ms": waits[int(0.99 * (len(waits) - 1))] * 1000 if waits else 0.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, nargs="+", default=[1_000_000, 2_500_000])
    parser.add_argument("--child", nargs=2, metavar=("ACTION", "PATH"), help=argparse.SUPPRESS)
    parser.add_argument("--count", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    if args.child:
        action, path = args.child
        if action == "write":
            write(path, args.count)
        else:
            print(json.dumps(measure(path)))
        return
    print("| records | log | compaction | extra peak RSS | main thread max stall | p99 |")
    print("|---:|---:|---:|---:|---:|---:|")
    for records in args.records:
        with tempfile.TemporaryDirectory(prefix="bench-compaction-") as base:
            path = os.path.join(base, "log")
            me = [sys.executable, __file__]
            subprocess.run([*me, "--child", "write", path, "--count", str(records)],
                           check=True)
            out = subprocess.run([*me, "--child", "measure", path], check=True,
                                 capture_output=True, text=True).stdout
            r = json.loads(out.strip().splitlines()[-1])
            print(f"| {records:,} | {r['log_mb']:.1f} MB | {r['seconds']:.2f} s | "
                  f"{r['extra_peak_mib']:.0f} MiB | {r['max_stall_ms']:.1f} ms | "
                  f"{r['p99_stall_ms']:.2f} ms |", flush=True)


if __name__ == "__main__":
    main()

"""Storage benchmark: append throughput per fsync policy, replay speed, open time,
compaction. Prints a table. Run from the repo root:

    python tests/benchmarks/bench_storage.py            # 10^5 and 10^6 records
    python tests/benchmarks/bench_storage.py --huge     # also 10^7 (several minutes, ~700 MB)
    python tests/benchmarks/bench_storage.py --quick    # small sizes, for a smoke run

Offset records: 1000 groups x 16 partitions (16,000 keys), empty metadata, value v3 (what
Kafka clients' commits produce). Targets (issue 5): replay >= 500,000 records/s; open +
replay of a 10^6-record log <= 3 s.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from typing import NamedTuple, TypeVar

import trio

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from storage.async_log import open_async_log  # noqa: E402
from storage.compaction import compact  # noqa: E402
from storage.log import Log  # noqa: E402
from storage.policy import FsyncPolicy  # noqa: E402
from storage.records import OffsetCommitKey, OffsetCommitValue, Record  # noqa: E402

GROUPS, PARTITIONS = 1000, 16


def commit(i: int) -> Record:
    key = OffsetCommitKey(f"group-{i % GROUPS}", "orders", (i // GROUPS) % PARTITIONS)
    return Record(key, OffsetCommitValue(i, 3, "", 1_700_000_000_000 + i))


def directory_bytes(path: str) -> int:
    names = [n for n in os.listdir(path) if n.endswith(".log")]
    return sum(os.path.getsize(os.path.join(path, n)) for n in names)


def bench_append(base: str, policy: FsyncPolicy, batch: int, seconds: float) -> float:
    """Records/s of synchronous appends of ``batch`` records, for about ``seconds``."""
    path = os.path.join(base, f"append-{policy}-{batch}")
    records = [commit(i) for i in range(batch * 1000)]
    done = 0
    with Log.open(path, fsync=policy, fsync_interval_ms=100) as log:
        started = time.perf_counter()
        while time.perf_counter() - started < seconds:
            for j in range(0, len(records), batch):
                log.append(records[j : j + batch])
                done += batch
                if done % (batch * 50) == 0 and time.perf_counter() - started >= seconds:
                    break
        elapsed = time.perf_counter() - started
    shutil.rmtree(path)
    return done / elapsed


def bench_group_commit(
    base: str, connections: int, batch: int, seconds: float
) -> tuple[float, float]:
    """Commits/s (and fsyncs per commit) of ``connections`` concurrent appenders through
    AsyncLog under fsync=always."""
    path = os.path.join(base, f"group-{connections}-{batch}")
    result: list[float] = []

    async def main() -> None:
        async with open_async_log(path, fsync="always") as alog:
            deadline = trio.current_time() + seconds
            count = 0

            async def appender(n: int) -> None:
                nonlocal count
                i = n
                while trio.current_time() < deadline:
                    await alog.append([commit(i + k) for k in range(batch)])
                    count += 1
                    i += connections * batch

            started = time.perf_counter()
            async with trio.open_nursery() as nursery:
                for n in range(connections):
                    nursery.start_soon(appender, n * batch)
            elapsed = time.perf_counter() - started
            result.extend([count / elapsed, alog.log.fsync_count / max(count, 1)])

    trio.run(main)
    shutil.rmtree(path)
    return result[0], result[1]


def write_log(path: str, n: int) -> None:
    with Log.open(path, fsync="never") as log:
        for start in range(0, n, 10_000):
            log.append([commit(i) for i in range(start, min(n, start + 10_000))])


T = TypeVar("T")


class Timing(NamedTuple):
    wall: float  # seconds of wall-clock time
    cpu: float  # seconds of this process's CPU time (less sensitive to a busy machine)


def timed(fn: Callable[[], T]) -> tuple[Timing, T]:
    wall, cpu = time.perf_counter(), time.process_time()
    value = fn()
    return Timing(time.perf_counter() - wall, time.process_time() - cpu), value


def bench_replay(path: str, n: int) -> tuple[Timing, Timing]:
    """(open, replay) timings of a fresh Log object (page cache warm: the log was just
    written). The replay consumer only counts records."""
    open_t, log = timed(lambda: Log.open(path))

    def replay() -> int:
        count = 0
        for _ in log.replay():
            count += 1
        return count

    replay_t, count = timed(replay)
    log.close()
    assert count == n, (count, n)
    return open_t, replay_t


def fmt(t: Timing, n: int | None = None) -> str:
    text = f"{t.wall:7.2f} s wall, {t.cpu:7.2f} s CPU"
    if n:
        text += f" = {n / t.wall:11,.0f} rec/s wall, {n / t.cpu:11,.0f} rec/s CPU"
    return text


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--huge", action="store_true", help="also 10^7 records")
    parser.add_argument("--quick", action="store_true", help="small sizes only")
    parser.add_argument("--no-append", action="store_true", help="skip the append benchmarks")
    parser.add_argument("--dir", help="where to write (default: a temporary directory)")
    args = parser.parse_args()
    sizes = [10_000] if args.quick else [100_000, 1_000_000] + ([10_000_000] if args.huge else [])
    seconds = 0.5 if args.quick else 2.0
    base = tempfile.mkdtemp(prefix="kcoord-bench-", dir=args.dir)
    rows: list[tuple[str, str]] = []

    def row(name: str, value: str) -> None:
        rows.append((name, value))
        print(f"{name:<50} {value}", flush=True)

    try:
        load = os.getloadavg()[0]
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load {load:.1f}, {base}\n")
        policies: tuple[FsyncPolicy, ...] = ("always", "interval", "never")
        for policy in () if args.no_append else policies:
            for batch in (1, 32):
                rate = bench_append(base, policy, batch, seconds)
                row(f"append fsync={policy} batch={batch} (1 thread)", f"{rate:11,.0f} records/s")
        for connections in () if args.no_append else (1, 8, 64):
            rate, per = bench_group_commit(base, connections, 1, seconds)
            row(
                f"AsyncLog fsync=always, {connections} concurrent appenders",
                f"{rate:11,.0f} appends/s ({per:.2f} fsync/append)",
            )
        for n in sizes:
            path = os.path.join(base, f"log-{n}")
            write_t, _ = timed(partial(write_log, path, n))
            size = directory_bytes(path)
            row(f"write {n:,} (fsync=never, 10k/batch)", f"{fmt(write_t)}, {size / 1e6:,.1f} MB")
            open_t, replay_t = bench_replay(path, n)
            row(f"open {n:,}", fmt(open_t, n))
            row(f"replay {n:,}", fmt(replay_t, n))
            both = Timing(open_t.wall + replay_t.wall, open_t.cpu + replay_t.cpu)
            row(f"open + replay {n:,}", fmt(both, n))
            with Log.open(path) as log:
                compact_t, result = timed(partial(compact, log))
            assert result is not None
            row(
                f"compact {n:,} -> {result.entries_after:,} live",
                f"{fmt(compact_t)}, {result.bytes_before / 1e6:,.1f} MB -> "
                f"{result.bytes_after / 1e6:,.2f} MB",
            )
            open_t, replay_t = bench_replay(path, result.entries_after)
            after = Timing(open_t.wall + replay_t.wall, open_t.cpu + replay_t.cpu)
            row(f"open + replay after compacting {n:,}", fmt(after))
            shutil.rmtree(path)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print("\n| benchmark | result |\n|---|---|")
    for name, value in rows:
        print(f"| {name} | {' '.join(value.split())} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

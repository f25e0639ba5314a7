"""OffsetCommit throughput through a real ``kcoord serve``, per fsync policy.

    python tests/benchmarks/bench_commits.py [--seconds 3] [--repeats 3] [--inflight 8]
        [--fsync always,interval,never] [--connections 1,8] [--partitions 1,32]
        [--data-root DIR] [--fsyncs-per-commit]

For each fsync policy a fresh server (``--fsync POLICY``, its data directory under
``--data-root``, default the system temp dir) gets, per row, simple-group OffsetCommit v8
requests (generation -1, member "") with 1 or with 32 partitions each over 1 or 8
connections, each connection keeping up to ``--inflight`` requests outstanding (the server
submits a connection's next OffsetCommit while the previous one waits for its fsync, so
in-flight requests share fsyncs as well as hiding the round trip). Every connection commits
to its own group. A commit is one acknowledged request (every partition answered with
error code 0); the load generator is ``tests/durability/durability_support.CommitLoad``
(one thread, non-blocking sockets, pre-encoded frames, so it costs a few microseconds per
request).

Each row runs ``--repeats`` times for ``--seconds`` (after a 0.5 s warm-up) and reports the
median commits/s, offsets/s (commits x partitions), and median p50/p99 latency; then the
disk's raw fsync latency just before the row (a 100-byte append + fsync, median of 50, in
the data directory's file system), which bounds ``always`` (group commit lets one fsync
cover every pending commit of every connection), and the CPU pressure (Linux PSI
"some" avg10) just after it: on a shared machine, other processes' load shows there and
explains slow or noisy rows. The header gives the command, date and machine.

``--fsyncs-per-commit`` starts a server per row and stops it after the row: the fsyncs its
log counted (its "log closed" line) over the commits the row acknowledged.

Target (issue 5): ``--fsync always`` with 8 connections >= 5,000 commits/s.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import shlex
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "durability"))

from durability_support import CommitLoad, ConnSpec, ServerProcess

TOPIC = "bench"
TOPIC_PARTITIONS = 32
TARGET = 5000.0


@dataclass
class Row:
    fsync: str
    partitions: int
    connections: int
    inflight: int
    rates: list[float]
    p50s: list[float]
    p99s: list[float]
    errors: int
    disk_fsync_ms: float = float("nan")
    pressure: str = ""
    acked_total: int = 0  # every acknowledged commit of the row, warm-ups included
    fsyncs: int | None = None  # the server's fsyncs over the row (--fsyncs-per-commit)

    @property
    def rate(self) -> float:
        return statistics.median(self.rates)


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def fsync_latency_ms(directory: str, count: int = 200) -> float:
    """Median ms of a 100-byte O_APPEND write + fsync in ``directory``."""
    path = os.path.join(directory, "fsync-probe")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    samples = []
    try:
        for _ in range(count):
            began = time.perf_counter()
            os.write(fd, b"x" * 100)
            os.fsync(fd)
            samples.append(time.perf_counter() - began)
    finally:
        os.close(fd)
        os.unlink(path)
    return statistics.median(samples) * 1000


def cpu_pressure() -> str:
    """The share of the last 10 s some task waited for a CPU (Linux PSI), e.g. "12%"; a
    busy machine (other processes) shows here and explains slow, noisy rows."""
    try:
        with open("/proc/pressure/cpu") as f:
            fields = dict(kv.split("=") for kv in f.readline().split()[1:])
        return f"{float(fields['avg10']):.0f}%"
    except (OSError, KeyError, ValueError):
        return "n/a"


def specs(row_id: int, partitions: int, connections: int) -> list[ConnSpec]:
    if partitions == 1:
        return [
            ConnSpec(f"bench-{row_id}-{i}", TOPIC, (i % TOPIC_PARTITIONS,))
            for i in range(connections)
        ]
    return [
        ConnSpec(f"bench-{row_id}-{i}", TOPIC, tuple(range(partitions))) for i in range(connections)
    ]


def run_row(
    server: ServerProcess, row_id: int, partitions: int, connections: int, args: argparse.Namespace
) -> Row:
    row = Row(server.fsync, partitions, connections, args.inflight, [], [], [], 0)
    row.disk_fsync_ms = fsync_latency_ms(str(server.data_dir.parent), 50)
    for repeat in range(args.repeats):
        load = CommitLoad(
            server.port,
            specs(row_id, partitions, connections),
            inflight=args.inflight,
            start_offset=repeat * 10**9,
        )
        try:
            result = load.run(args.seconds, warmup=0.5)
        finally:
            load.close()
        row.rates.append(result.rate)
        row.p50s.append(result.latency_ms(0.5))
        row.p99s.append(result.latency_ms(0.99))
        row.errors += len(result.errors)
        row.acked_total += sum(conn.acked_seq for conn in load.conns)
        if result.errors:
            print(f"  errors: {result.errors[:3]}", file=sys.stderr)
    row.pressure = cpu_pressure()
    return row


def run_policy(
    root: Path,
    policy: str,
    row_id: int,
    partition_counts: list[int],
    connection_counts: list[int],
    args: argparse.Namespace,
) -> list[Row]:
    """The rows of one server (``--fsync policy``), printed as they finish."""
    server = ServerProcess(
        root / f"data-{policy}-{row_id}",
        fsync=policy,
        topics=[f"{TOPIC}:{TOPIC_PARTITIONS}"],
        log_level="info" if args.fsyncs_per_commit else "warning",
    )
    rows: list[Row] = []
    try:
        server.start()
        for partitions in partition_counts:
            for connections in connection_counts:
                row = run_row(server, row_id * 100 + len(rows), partitions, connections, args)
                rows.append(row)
                if args.fsyncs_per_commit:
                    server.stop()
                    row.fsyncs = closing_fsyncs(server.stderr())
                print_row(row)
    finally:
        server.kill()
        shutil.rmtree(server.data_dir, ignore_errors=True)
    return rows


def closing_fsyncs(stderr: str) -> int | None:
    """The fsync count of the server's "log closed" line (None without one)."""
    for line in reversed(stderr.splitlines()):
        if "log closed:" in line and " fsyncs" in line:
            return int(line.split(" appends, ")[1].split(" fsyncs")[0])
    return None


def print_row(row: Row) -> None:
    errors = f" ({row.errors} errors)" if row.errors else ""
    extra = ""
    if row.fsyncs is not None:
        extra = f" {row.fsyncs / max(row.acked_total, 1):.3f} |"
    print(
        f"| {row.fsync} | {row.partitions} | {row.connections} | {row.rate:,.0f}{errors} | "
        f"{row.rate * row.partitions:,.0f} | {statistics.median(row.p50s):.2f} | "
        f"{statistics.median(row.p99s):.2f} | {row.disk_fsync_ms:.2f} | "
        f"{row.pressure} |" + extra,
        flush=True,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--inflight", type=int, default=8, help="requests in flight per conn")
    parser.add_argument("--fsync", default="always,interval,never")
    parser.add_argument("--connections", default="1,8")
    parser.add_argument("--partitions", default="1,32")
    parser.add_argument("--data-root", default=None, help="where data directories go")
    parser.add_argument(
        "--fsyncs-per-commit",
        action="store_true",
        help="a fresh server per row, stopped after it; its 'log closed' line gives the "
        "fsyncs, divided by the row's acknowledged commits (warm-ups included)",
    )
    args = parser.parse_args()
    policies = args.fsync.split(",")
    connection_counts = [int(c) for c in args.connections.split(",")]
    partition_counts = [int(p) for p in args.partitions.split(",")]
    assert all(p in (1, TOPIC_PARTITIONS) for p in partition_counts), "partitions: 1 or 32"

    root = Path(tempfile.mkdtemp(prefix="kcoord-bench-commits-", dir=args.data_root))
    command = "python tests/benchmarks/bench_commits.py " + shlex.join(sys.argv[1:])
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    print(f"# {command.strip()}")
    print(
        f"# {now}; {platform.platform()}; {cpu_model()}, {os.cpu_count()} CPUs; "
        f"Python {platform.python_version()}"
    )
    try:
        load1 = f"load average {os.getloadavg()[0]:.1f}; "
    except OSError:
        load1 = ""
    print(f"# {load1}raw fsync latency in {root}: {fsync_latency_ms(str(root)):.2f} ms (median)")
    print(
        f"# {args.repeats} repeats x {args.seconds}s per row (+0.5s warm-up), median; "
        f"{args.inflight} requests in flight per connection"
    )
    print()
    extra = " fsyncs/commit |" if args.fsyncs_per_commit else ""
    print(
        "| fsync | partitions/commit | connections | commits/s | offsets/s | p50 ms | p99 ms "
        "| disk fsync ms | CPU pressure |" + extra
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|" + ("---:|" if extra else ""))
    rows: list[Row] = []
    row_id = 0
    for policy in policies:
        if not args.fsyncs_per_commit:  # one server for every row of the policy
            row_id += 1
            rows += run_policy(root, policy, row_id, partition_counts, connection_counts, args)
            continue
        for partitions in partition_counts:
            for connections in connection_counts:
                row_id += 1
                rows += run_policy(root, policy, row_id, [partitions], [connections], args)
    shutil.rmtree(root, ignore_errors=True)
    target_rows = [r for r in rows if r.fsync == "always" and r.connections == 8]
    print()
    for r in target_rows:
        verdict = "meets" if r.rate >= TARGET else "MISSES"
        print(
            f"# target: --fsync always, 8 connections, {r.partitions} partition(s)/commit: "
            f"{r.rate:,.0f} commits/s {verdict} >= {TARGET:,.0f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

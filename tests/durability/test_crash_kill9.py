"""Every acknowledged commit survives SIGKILL: a real ``kcoord serve`` (``--fsync always``,
and the default ``interval``) under commit load is killed at a random moment, restarted on
the same data directory, and every partition's committed offset is at least the last one
the server acknowledged.

The load: 8 connections, each committing increasing offsets to its own 2 partitions of a
16-partition topic (simple-group commits: generation -1, member "", which an Empty group
accepts), up to 4 requests in flight per connection, every answer with error code 0 counted
as an acknowledgement. The kill lands 0.3-1.5 s into the load (counted from the moment every
connection has had a first commit acknowledged); answers already on their way when it lands
are still read and counted. After each restart:

- committed >= last acknowledged, for every partition (a later, unacknowledged commit may
  have landed too) and committed <= last sent (nothing invented);
- the log loaded cleanly: stderr says ``coordinator loaded``, and has no error, traceback,
  corruption or recovery other than a torn-tail truncation.

Every second round also appends a torn entry (a prefix of one more, never acknowledged,
entry) to the last segment before the restart, as a kill in the middle of a write leaves
it: the restart must report one torn-tail truncation and load everything before it.

Kills chain on one data directory (each restart is the next round's server), so later
rounds also recover logs that earlier kills left. ``KCOORD_CRASH_SEED`` picks the kill times
(the seed is in every failure message and printed with ``-s``).

The kafka-python variant runs KafkaConsumers (``enable_auto_commit=False``, ``commit()`` in
a loop; two group members, two with manual assignment) in a subprocess, ``kp_committer.py``,
and kills the server once, 0.3-1.5 s after each of them had a commit acknowledged.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from durability_support import (
    REPO,
    CommitLoad,
    ConnSpec,
    ServerProcess,
    fetch_committed,
    load_report_problems,
    wait_for,
)

from storage.batch import EncodedBatch
from storage.directory import list_segments
from storage.records import OffsetCommitKey, OffsetCommitValue, Record

TOPIC = "crash"
CONNECTIONS = 8
PARTITIONS_PER_CONNECTION = 2
SPECS = [
    ConnSpec(
        f"crash-{i % 2}",
        TOPIC,
        tuple(range(i * PARTITIONS_PER_CONNECTION, (i + 1) * PARTITIONS_PER_CONNECTION)),
    )
    for i in range(CONNECTIONS)
]
GROUPS = sorted({spec.group for spec in SPECS})
PARTITIONS = CONNECTIONS * PARTITIONS_PER_CONNECTION

MakeServer = Callable[..., ServerProcess]


@pytest.fixture
def make_server(tmp_path: Path) -> Iterator[MakeServer]:
    """``make_server(**options)``: a ServerProcess on ``tmp_path/data``; every one of them
    is SIGKILLed at teardown, whatever happened."""
    made: list[ServerProcess] = []

    def make(**options: Any) -> ServerProcess:
        options.setdefault("topics", [f"{TOPIC}:{PARTITIONS}"])
        server = ServerProcess(tmp_path / "data", **options)
        made.append(server)
        return server

    yield make
    for server in made:
        server.kill()


def _seed() -> int:
    return int(os.environ.get("KCOORD_CRASH_SEED", time.time_ns() % 2**32))


def check_restart(
    server: ServerProcess,
    floor: dict[tuple[str, str, int], int],
    ceiling: dict[tuple[str, str, int], int],
    groups: list[str],
    context: str,
) -> dict[tuple[str, str, int], int]:
    """After a restart: the log loaded cleanly and every committed offset is within
    [last acknowledged, last sent]. The committed offsets."""
    committed = fetch_committed(server.port, groups)  # answered once the log is replayed
    wait_for(lambda: "coordinator loaded" in server.stderr(), 10, "the 'loaded' log line")
    problems = load_report_problems(server.stderr())
    assert not problems, f"{context}: the log did not load cleanly:\n" + "\n".join(problems)
    lost = {tp: (acked, committed.get(tp)) for tp, acked in floor.items()
            if committed.get(tp, -1) < acked}  # fmt: skip
    assert not lost, f"{context}: acknowledged commits lost {{tp: (acked, committed)}}: {lost}"
    invented = {tp: (off, ceiling.get(tp)) for tp, off in committed.items()
                if off > ceiling.get(tp, -1)}  # fmt: skip
    assert not invented, f"{context}: offsets never sent {{tp: (committed, sent)}}: {invented}"
    return committed


def tear_tail(data_dir: Path, rng: random.Random) -> int:
    """Make the last segment end the way a write cut short by the kill would leave it: with
    a prefix of one more entry (an unacknowledged commit of a huge offset, which must not
    load). Its length."""
    _, name = list_segments(os.listdir(data_dir))[-1]
    record = Record(OffsetCommitKey(GROUPS[0], TOPIC, 0), OffsetCommitValue(offset=2**62))
    entry = EncodedBatch.encode([record]).data
    torn = entry[: rng.randrange(1, len(entry))]
    with open(data_dir / name, "ab") as f:
        f.write(torn)
    return len(torn)


def kill_rounds(
    make_server: MakeServer, kills: int, seed: int, fsync: str | None = "always"
) -> list[str]:
    """``kills`` rounds of load + SIGKILL + restart + check on one data directory; a
    line of statistics per round. ``fsync`` None runs kcoord's default policy."""
    rng = random.Random(seed)
    server = make_server(fsync=fsync).start()
    floor: dict[tuple[str, str, int], int] = {}
    ceiling: dict[tuple[str, str, int], int] = {}
    start_offset = 0
    report = []
    for round_ in range(1, kills + 1):
        context = f"seed {seed}, round {round_}/{kills}"
        kill_after = rng.uniform(0.3, 1.5)
        load = CommitLoad(server.port, SPECS, inflight=4, start_offset=start_offset)
        try:
            result = load.run(kill_after, after_first_acks=True, kill=server.kill)
        finally:
            load.close()
        assert not result.errors, f"{context}: {result.errors[:5]}"
        acked = load.acked_offsets()
        assert len(acked) == PARTITIONS, f"{context}: only {len(acked)} partitions acknowledged"
        floor.update(acked)
        ceiling.update(load.sent_offsets())
        unacked = sum(ceiling[tp] - floor[tp] for tp in acked)
        torn_bytes = tear_tail(server.data_dir, rng) if round_ % 2 == 0 else 0
        server.start()
        committed = check_restart(server, floor, ceiling, GROUPS, context)
        beyond = sum(committed[tp] > floor[tp] for tp in floor)
        reports = [line for line in server.stderr().splitlines() if "torn tail" in line]
        if torn_bytes:
            assert any(
                f"dropped {torn_bytes} bytes" in line or f"dropped_bytes={torn_bytes}" in line
                for line in reports
            ), f"{context}: torn tail of {torn_bytes} bytes not reported: {reports}"
        torn = sum("log recovery" in line for line in reports)
        report.append(
            f"round {round_}: killed after {kill_after:.2f}s, {result.acked} commits acked "
            f"({result.rate:.0f}/s), {unacked} offsets sent unacked, {beyond} partitions "
            f"beyond their ack, startup {server.startup_s:.2f}s, torn tails {torn}"
        )
        start_offset = load.offset_for(load.max_seq) + 1
    status = server.stop()
    assert status == 0, f"seed {seed}: exit status {status} after SIGTERM:\n{server.stderr()}"
    dump = subprocess.run(
        [sys.executable, "-m", "coordinator", "log", "dump", str(server.data_dir)],
        capture_output=True, text=True, cwd=REPO, timeout=60,
    )  # fmt: skip
    assert dump.returncode == 0, f"seed {seed}: log dump found problems: {dump.stderr}"
    return report


# "default": kcoord's default policy (interval): SIGKILL keeps the page cache, so every
# acknowledged commit must survive it exactly as under "always".
FSYNC_MODES = pytest.mark.parametrize("fsync", ["always", None], ids=["always", "default"])


@FSYNC_MODES
def test_acknowledged_commits_survive_kill9(make_server: MakeServer, fsync: str | None) -> None:
    seed = _seed()
    report = kill_rounds(make_server, kills=1, seed=seed, fsync=fsync)
    print(f"seed {seed}\n" + "\n".join(report))


@pytest.mark.slow
@FSYNC_MODES
def test_acknowledged_commits_survive_kill9_long(
    make_server: MakeServer, fsync: str | None
) -> None:
    seed = _seed()
    report = kill_rounds(make_server, kills=24, seed=seed, fsync=fsync)
    print(f"seed {seed}\n" + "\n".join(report))


# ------------------------------------------------------------------ kafka-python

KP_GROUPS = {"kp-sub-0": "subscribe", "kp-sub-1": "subscribe",
             "kp-assign-0": "assign", "kp-assign-1": "assign"}  # fmt: skip


class KafkaPythonCommitters:
    """``kp_committer.py`` in a subprocess: a KafkaConsumer per group calling ``commit()``
    in a loop; its stdout lines are collected by a reader thread."""

    def __init__(self, port: int) -> None:
        self.lines: list[str] = []
        args = [sys.executable, str(Path(__file__).with_name("kp_committer.py")),
                f"127.0.0.1:{port}", TOPIC, str(PARTITIONS)]  # fmt: skip
        self.proc = subprocess.Popen(
            args + [f"{g}:{m}" for g, m in KP_GROUPS.items()],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            cwd=REPO,
        )
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def events(self, kind: str) -> dict[str, str]:
        """The last ``kind`` line's argument per group."""
        out = {}
        for line in list(self.lines):
            word, group, rest = [*line.split(" ", 2), "", ""][:3]
            if word == kind:
                out[group] = rest
        return out

    def wait(self, timeout: float) -> None:
        try:
            self.proc.wait(timeout)
        finally:
            self.kill()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self.reader.join(10)
        if self.proc.stdout is not None:
            self.proc.stdout.close()

    def offsets(self, kind: str) -> dict[tuple[str, str, int], int]:
        """{(group, topic, partition): last offset} for ``sent`` or ``ack``."""
        owns = self.events("owns")
        out = {}
        for group, offset in self.events(kind).items():
            for p in owns[group].split(","):
                out[(group, TOPIC, int(p))] = int(offset)
        return out


def test_acknowledged_kafka_python_commits_survive_kill9(make_server: MakeServer) -> None:
    seed = _seed()
    rng = random.Random(seed)
    server = make_server(fsync="always", config={"group.min.session.timeout.ms": "1000"})
    server.start()
    committers = KafkaPythonCommitters(server.port)
    try:
        wait_for(
            lambda: len(committers.events("ack")) == len(KP_GROUPS) or committers.events("failed"),
            45,
            "a first acknowledged commit from every consumer",
        )
        assert not committers.events("failed"), committers.events("failed")
        time.sleep(rng.uniform(0.3, 1.5))
        server.kill()
        committers.wait(30)  # every commit() fails once the server is gone, then it exits
    finally:
        committers.kill()
    failed = committers.events("failed")
    assert set(failed) == set(KP_GROUPS), f"not every consumer saw the kill: {failed}"
    floor = committers.offsets("ack")
    ceiling = committers.offsets("sent")
    assert len(floor) == len(KP_GROUPS) * PARTITIONS, committers.events("owns")
    server.start()
    check_restart(server, floor, ceiling, sorted(KP_GROUPS), f"seed {seed}")
    acks = committers.events("ack")
    print(f"seed {seed}: last acknowledged offset per consumer {acks}; errors {failed}")
    assert server.stop() == 0

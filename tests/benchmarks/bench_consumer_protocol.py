"""The consumer group protocol: steady-state ConsumerGroupHeartbeat/s in the core, memory per
consumer-protocol member, the raw ConsumerGroupHeartbeat rows over TCP beside the classic
Heartbeat rows in the same run and server (1x1, 1x32, 8x1), and the formation time of 1 and
16 confluent-kafka consumers with ``group.protocol=consumer`` (heartbeat interval 500 ms).
Tansu and librdkafka's mock are not compared: Tansu has no KIP-848, the mock no server side.

``python tests/benchmarks/bench_consumer_protocol.py [--members 100] [--seconds 2]``;
``--server-only [--checkout DIR]``: only the raw rows, kcoord run from ``DIR`` if given.
"""

from __future__ import annotations

import argparse
import socket
import struct
import sys
import time
import tracemalloc
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "coordinator" / "consumer"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import statistics
import tempfile

from bench_brokers import kcoord_broker, negotiate
from bench_load import ROWS, drive, heartbeat_frame, setup_group
from consumer_harness import ConsumerHarness

from coordinator.core.consumer.heartbeat import handle_consumer_group_heartbeat
from coordinator.core.messages import LocalContext

MEMBER_ID = "bench-member-0001"


def steady_heartbeats(members: int, seconds: float) -> float:
    """Heartbeats/s of a Stable group of ``members`` (no topic_partitions: nothing changes)."""
    h = ConsumerHarness(foo=(uuid.UUID(int=1), members * 2))
    for i in range(members):
        h.join(f"m{i}", ["foo"])
    # settle: every member reports what it owns until the group is Stable
    for _ in range(4):
        for mid, member in list(h.consumer_group().members.items()):
            parts = [(t, sorted(p)) for t, p in member.current.assigned_partitions.items()]
            h.consumer_heartbeat(mid, member.member_epoch, topic_partitions=parts)
    assert h.consumer_group().state == "Stable", h.consumer_group().state
    coordinator = h.coordinator
    ctx = LocalContext(api_version=1, client_id="c", client_host="/127.0.0.1")
    requests = [
        {"group_id": "fooup", "member_id": mid, "member_epoch": m.member_epoch,
         "instance_id": None, "rack_id": None, "rebalance_timeout_ms": -1,
         "subscribed_topic_names": None, "subscribed_topic_regex": None,
         "server_assignor": None, "topic_partitions": None}
        for mid, m in h.consumer_group().members.items()
    ]
    n = 0
    began = time.perf_counter()
    while time.perf_counter() - began < seconds:
        for request in requests:
            handle_consumer_group_heartbeat(coordinator, ctx, request, n, 0)  # type: ignore[arg-type]
            n += 1
    return n / (time.perf_counter() - began)


def memory_per_member(members: int) -> float:
    """Bytes the core holds per member (the group, its records in hard state), measured
    with tracemalloc around joins whose records are appended (``append_done``) and whose
    Results are then dropped, as the runtime does; the runtime's timers are not counted."""
    h = ConsumerHarness(foo=(uuid.UUID(int=1), members))
    coordinator = h.coordinator
    ctx = LocalContext(api_version=1, client_id="rdkafka", client_host="/127.0.0.1")
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for i in range(members):
        request = {
            "group_id": "fooup", "member_id": f"member-{i:06d}-0123456789", "member_epoch": 0,
            "instance_id": None, "rack_id": None, "rebalance_timeout_ms": 300000,
            "subscribed_topic_names": ["foo"], "subscribed_topic_regex": None,
            "server_assignor": None, "topic_partitions": [],
        }
        result = handle_consumer_group_heartbeat(coordinator, ctx, request, i, 0)  # type: ignore[arg-type]
        coordinator.append_done(result, 0)
        del result
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return (after - before) / members


def consumer_heartbeat_frame(port: int) -> tuple[bytes, int]:
    """Join one KIP-848 member over the wire; the frame of its steady-state heartbeat and
    the member epoch its answers must carry."""
    from bench_brokers import Session

    from wire import encode_request

    session = Session(port)
    joined = session.call(68, 1, {
        "group_id": "bench-848", "member_id": MEMBER_ID, "member_epoch": 0,
        "rebalance_timeout_ms": 60000, "subscribed_topic_names": ["bench"],
        "topic_partitions": []})
    assert joined.error_code == 0, joined
    owned = [{"topic_id": tp.topic_id, "partitions": list(tp.partitions)}
             for tp in joined.assignment.topic_partitions]
    acked = session.call(68, 1, {
        "group_id": "bench-848", "member_id": MEMBER_ID,
        "member_epoch": joined.member_epoch, "topic_partitions": owned})
    assert acked.error_code == 0, acked
    session.close()
    frame = encode_request(68, 1, 0, "bench", {
        "group_id": "bench-848", "member_id": MEMBER_ID,
        "member_epoch": acked.member_epoch})
    return frame, int(acked.member_epoch)


def steady_answer_check(
    port: int, frame: bytes, api_key: int, expect: Callable[[Any], bool]
) -> Callable[[bytes], bool]:
    """The per-answer check of a raw row, the same kind for both APIs: ``frame`` is sent
    once and its answer fully decoded (construct) and checked by ``expect``; every answer of
    the run must then be that answer byte for byte after its correlation id (error code,
    and for ConsumerGroupHeartbeat member id, epoch, interval and the null assignment)."""
    from bench_brokers import recv_frame

    from wire import decode_response

    version = struct.unpack_from(">h", frame, 6)[0]
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(frame)
        payload = recv_frame(sock)
    correlation_id, body = decode_response(api_key, version, payload)
    assert correlation_id == struct.unpack_from(">i", frame, 8)[0], correlation_id
    assert expect(body), body
    steady = payload[4:]

    def ok(payload: bytes) -> bool:
        return payload[4:] == steady

    return ok


def server_rows(seconds: float, repeats: int, checkout: str | None = None) -> None:
    """Classic Heartbeat and ConsumerGroupHeartbeat rows, alternating, one kcoord (run from
    ``checkout`` when given). Each answer is checked the same way in both rows: its
    correlation id (``bench_load.drive``) and the rest byte for byte
    (``steady_answer_check``). ``ratio`` is the ratio of the median rates; the pair ratios
    are those of each classic run and the consumer run next to it in time (each pair in
    the other order than the one before), which a machine whose load drifts skews less.
    The server's CPU time per answer (all its threads, from /proc, connection set-up and
    warm-up included) is the figure a busy machine skews least."""
    broker = kcoord_broker(tempfile.mkdtemp(prefix="kcoord-bench-848-"), "never", checkout)
    broker.argv += ["-c", "group.consumer.session.timeout.ms=600000",
                    "-c", "group.consumer.max.session.timeout.ms=600000"]
    broker.start()
    try:
        versions = negotiate(broker.port)
        member = setup_group(broker.port, versions, "bench-group")
        classic_frame, _ = heartbeat_frame(versions, member)
        classic = (classic_frame, steady_answer_check(
            broker.port, classic_frame, 12, lambda body: body.error_code == 0))
        modern_frame, epoch = consumer_heartbeat_frame(broker.port)
        modern = (modern_frame, steady_answer_check(
            broker.port, modern_frame, 68,
            lambda body: (body.error_code == 0 and body.member_id == MEMBER_ID
                          and body.member_epoch == epoch and body.assignment is None)))
        shapes = [(label, conns, inflight) for label, kind, _, conns, inflight in ROWS
                  if kind == "hb"]
        print("| shape | Heartbeat req/s (p50/p99 ms) | ConsumerGroupHeartbeat req/s "
              "(p50/p99 ms) | ratio | pair ratios, median (range) | server CPU us per "
              "answer, Heartbeat / ConsumerGroupHeartbeat (ratio) |")
        print("|---|---|---|---|---|---|")
        for label, conns, inflight in shapes:
            runs: dict[str, list[object]] = {"classic": [], "modern": []}
            cpu: dict[str, list[float]] = {"classic": [], "modern": []}
            pairs = [("classic", classic), ("modern", modern)]
            for _ in range(repeats):
                for name, (frame, ok) in pairs:
                    before = broker.cpu_seconds()
                    run = drive(broker.port, frame, connections=conns, inflight=inflight,
                                seconds=seconds, check=ok)  # type: ignore[arg-type]
                    runs[name].append(run)
                    cpu[name].append((broker.cpu_seconds() - before) * 1e6
                                     / max(run.answered, 1))
                pairs.reverse()  # each API goes first in every other pair: drift cancels
            pair_ratios = [m.rate / c.rate  # type: ignore[attr-defined]
                           for c, m in zip(runs["classic"], runs["modern"], strict=True)]
            cells = []
            rates = []
            for name in ("classic", "modern"):
                rs = runs[name]
                rate = statistics.median(r.rate for r in rs)  # type: ignore[attr-defined]
                p50 = statistics.median(r.p50_ms for r in rs)  # type: ignore[attr-defined]
                p99 = statistics.median(r.p99_ms for r in rs)  # type: ignore[attr-defined]
                errors = sum(r.errors for r in rs)  # type: ignore[attr-defined]
                rates.append(rate)
                cells.append(f"{rate:,.0f} ({p50:.2f}/{p99:.2f})"
                             + (f" {errors} errors" if errors else ""))
            cpu_classic = statistics.median(cpu["classic"])
            cpu_modern = statistics.median(cpu["modern"])
            print(f"| {label} | {cells[0]} | {cells[1]} | {rates[1] / rates[0]:.2f}x | "
                  f"{statistics.median(pair_ratios):.2f}x ({min(pair_ratios):.2f}-"
                  f"{max(pair_ratios):.2f}) | {cpu_classic:.1f} / {cpu_modern:.1f} "
                  f"({cpu_modern / cpu_classic:.2f}x) |")
    finally:
        broker.stop()


def formation(sizes: list[int]) -> None:
    """Seconds from the first subscribe until n confluent-kafka consumers cover 12
    partitions exactly (median of 3)."""
    import confluent_kafka

    for n in sizes:
        took = []
        for attempt in range(3):
            broker = kcoord_broker(tempfile.mkdtemp(prefix="kcoord-form-"), "always")
            broker.argv += ["-c", "group.consumer.heartbeat.interval.ms=500",
                            "-c", "group.consumer.min.heartbeat.interval.ms=500"]
            broker.start()
            assigned: list[set[int]] = []
            consumers = []
            try:
                began = time.perf_counter()
                for _ in range(n):
                    owned: set[int] = set()
                    assigned.append(owned)
                    c = confluent_kafka.Consumer({
                        "bootstrap.servers": f"127.0.0.1:{broker.port}",
                        "group.id": f"form-{n}-{attempt}", "group.protocol": "consumer"})

                    def on_assign(_: object, parts: list, owned: set[int] = owned) -> None:  # type: ignore[type-arg]
                        owned.update(p.partition for p in parts)

                    def on_revoke(_: object, parts: list, owned: set[int] = owned) -> None:  # type: ignore[type-arg]
                        owned.difference_update(p.partition for p in parts)

                    c.subscribe(["bench"], on_assign=on_assign, on_revoke=on_revoke)
                    consumers.append(c)
                want = min(n, 32)
                while True:
                    for c in consumers:
                        c.poll(0.01)
                    held = [p for a in assigned for p in a]
                    if (len(held) == 32 == len(set(held))
                            and sum(1 for a in assigned if a) == want):
                        break
                    if time.perf_counter() - began > 60:
                        raise RuntimeError("group did not form in 60 s")
                took.append(time.perf_counter() - began)
            finally:
                for c in consumers:
                    c.close()
                broker.stop()
        print(f"| formation, {n} consumer(s), 32 partitions | "
              f"{statistics.median(took):.2f} s (runs: {', '.join(f'{t:.2f}' for t in took)}) |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--members", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--core-only", action="store_true")
    parser.add_argument("--server-only", action="store_true",
                        help="only the raw Heartbeat / ConsumerGroupHeartbeat rows")
    parser.add_argument("--checkout", metavar="DIR",
                        help="with --server-only: run kcoord from this checkout (e.g. a git "
                             "worktree of the base commit)")
    args = parser.parse_args()
    if args.checkout and not args.server_only:
        parser.error("--checkout needs --server-only")
    if args.server_only:
        server_rows(args.seconds, args.repeats, args.checkout)
        return 0
    rate = steady_heartbeats(args.members, args.seconds)
    print(f"ConsumerGroupHeartbeat/s, {args.members} members, steady: {rate:,.0f}")
    print(f"memory per consumer-protocol member (1000 members): {memory_per_member(1000):,.0f} B")
    if not args.core_only:
        server_rows(args.seconds, args.repeats)
        formation([1, 16])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

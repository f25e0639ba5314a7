"""Raw-frame load for the server benchmarks: group setup, the load generator, the frames.

The load generator is one Python thread driving non-blocking sockets with pre-encoded
frames (only the correlation id is patched). Its own Python work per request is small, but
with the selector and socket calls it uses tens of microseconds of CPU per request (about
60 us in the Heartbeat-over-8-connections row), on the same cores as the broker.
:data:`ROWS` lists the rows bench_server.py measures.
"""

from __future__ import annotations

import selectors
import socket
import struct
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bench_brokers import PARTITIONS, TOPIC, Session

from wire import decode_response, encode_request


@dataclass
class Member:
    group: str
    member_id: str
    generation: int


def _create_topic_on(s: Session, versions: dict[int, int]) -> None:
    """CreateTopics of the benchmark topic over ``s`` (its answer is not checked)."""
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


def create_topic(port: int, versions: dict[int, int]) -> None:
    """Create the benchmark topic (kcoord already has it from --topic)."""
    s = Session(port)
    try:
        _create_topic_on(s, versions)
    finally:
        s.close()


def setup_group(port: int, versions: dict[int, int], group: str) -> Member:
    """Create the topic (Tansu) and a one-member Stable group; the member's identity."""
    s = Session(port)
    try:
        _create_topic_on(s, versions)
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
        member = Member(group, joined.member_id, joined.generation_id)
        heartbeat = _heartbeat(s, versions, member)
        assert heartbeat.error_code == 0, (synced, heartbeat)
        return member
    finally:
        s.close()


def _heartbeat(s: Session, versions: dict[int, int], m: Member) -> Any:
    """The answer to one Heartbeat of ``m`` on ``s``."""
    return s.call(12, min(versions[12], 4), {
        "group_id": m.group, "generation_id": m.generation, "member_id": m.member_id,
        "group_instance_id": None})


def renew(port: int, versions: dict[int, int], m: Member) -> None:
    """One Heartbeat of ``m`` (untimed), so that its session outlives the rows of the
    other brokers run between two of its own; raises if the member is gone."""
    s = Session(port)
    try:
        answer = _heartbeat(s, versions, m)
        assert answer.error_code == 0, answer
    finally:
        s.close()


# ------------------------------------------------------------------ load generator


@dataclass
class Run:
    rate: float
    p50_ms: float
    p99_ms: float
    errors: int
    #: Answers over the whole run, the warm-up included (``rate`` counts only the rest).
    answered: int = 0


def drive(
    port: int,
    template: bytes,
    *,
    connections: int,
    inflight: int,
    seconds: float,
    check: Callable[[bytes], bool],
) -> Run:
    """Keep ``inflight`` requests outstanding on each of ``connections``; count answers.
    An answer counts as an error unless it carries its request's correlation id (requests
    are numbered from 1 per connection and answered in order) and ``check`` accepts it."""
    sel = selectors.DefaultSelector()
    conns = []
    for _ in range(connections):
        sock = socket.create_connection(("127.0.0.1", port))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setblocking(False)
        state = {"sock": sock, "buf": bytearray(), "sent": deque(), "corr": 0, "answered": 0}
        conns.append(state)
        sel.register(sock, selectors.EVENT_READ, state)
    frame = bytearray(template)
    receive_view = memoryview(bytearray(1 << 20))
    latencies: list[float] = []
    done = 0
    total = 0
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
            # Into one buffer: recv(1 MiB) allocates 1 MiB for every read, however few bytes
            # come (about 18 us a read here, client CPU taken from the broker under test).
            size = state["sock"].recv_into(receive_view)
            if not size:
                raise RuntimeError("broker closed the connection")
            buf = state["buf"]
            buf += receive_view[:size]
            answered = 0
            pos = 0
            t = time.perf_counter()
            correlation = state["answered"]
            while len(buf) - pos >= 4:
                size = int.from_bytes(buf[pos : pos + 4], "big")
                if len(buf) - pos < 4 + size:
                    break
                payload = bytes(buf[pos + 4 : pos + 4 + size])
                pos += 4 + size
                # Answers come in request order: the n-th carries correlation id n.
                correlation += 1
                if payload[:4] != correlation.to_bytes(4, "big") or not check(payload):
                    errors += 1
                latencies.append(t - state["sent"].popleft())
                answered += 1
            del buf[:pos]
            state["answered"] = correlation
            done += answered
            total += answered
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
        answered=total,
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


def consumer_join_body(group: str, member_id: str, topic: str) -> dict[str, Any]:
    """A ConsumerGroupHeartbeat (KIP-848) joining ``group`` at member epoch 0 subscribed to
    ``topic``, with every field a client sends when it joins (owning nothing yet)."""
    return {
        "group_id": group,
        "member_id": member_id,
        "member_epoch": 0,
        "instance_id": None,
        "rack_id": None,
        "rebalance_timeout_ms": 30000,
        "subscribed_topic_names": [topic],
        "subscribed_topic_regex": None,
        "server_assignor": None,
        "topic_partitions": [],
    }


def consumer_steady_body(group: str, member_id: str, epoch: int) -> dict[str, Any]:
    """A member's ConsumerGroupHeartbeat when nothing changed: the member epoch only (every
    optional field null, the rebalance timeout -1), as a client sends it."""
    return {
        "group_id": group,
        "member_id": member_id,
        "member_epoch": epoch,
        "instance_id": None,
        "rack_id": None,
        "rebalance_timeout_ms": -1,
        "subscribed_topic_names": None,
        "subscribed_topic_regex": None,
        "server_assignor": None,
        "topic_partitions": None,
    }


def assigned_partitions(assignment: Any) -> list[dict[str, Any]]:
    """A ConsumerGroupHeartbeat answer's assignment (None: none) as the topic_partitions a
    member acknowledges it with."""
    return [
        {"topic_id": tp.topic_id, "partitions": sorted(tp.partitions)}
        for tp in (assignment.topic_partitions if assignment else [])
    ]


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
        body = consumer_join_body(group, str(uuid.uuid4()), TOPIC)
        joined = s.call(68, v, body)
        if joined.error_code != 0:
            return None
        body.update(member_id=joined.member_id, member_epoch=joined.member_epoch,
                    topic_partitions=assigned_partitions(joined.assignment))
        acked = s.call(68, v, body)
        if acked.error_code != 0:
            return None
    finally:
        s.close()
    steady = consumer_steady_body(group, body["member_id"], acked.member_epoch)
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

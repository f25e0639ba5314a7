"""Capture real Kafka clients' request frames as golden fixtures for tests/wire.

README: re-run from the repository root with
    . .venv/bin/activate && python tests/wire/capture/capture_broker.py
optionally with ``--clients kafka-python,aiokafka,confluent-kafka,kcat`` (a subset)
(needs kafka-python, ``pip install confluent-kafka aiokafka`` and ``apt-get install -y kcat``).
It rewrites ``tests/wire/fixtures/<client>.py``; the tests only read those files and never
need a client. Regenerate only on purpose (new client version, new API): then re-check
the explicit field assertions of tests/wire/test_golden_frames.py.

How it works: a small threaded TCP server on 127.0.0.1 (port 0) decodes every request with
``wire`` and answers with ``wire.encode_response`` just enough for each client to go
subscribe -> join -> sync -> fetch -> commit -> leave (one broker, node 1 = itself; one
topic ``t1`` with one partition holding 3 records; a toy one-member group per group id).
Every raw request frame (size prefix included) is recorded with the name of the client
being driven. Each client runs in its own subprocess (kcat as itself) with a hard timeout.
One frame per (api, version) per client is kept and written out with one hex chunk per
field and a comment naming the field and its value (pyca/tls style).
"""

from __future__ import annotations

import argparse
import contextlib
import re
import socket
import socketserver
import struct
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from io import BytesIO
from pathlib import Path
from typing import Any

import crc32c

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO))

import wire  # noqa: E402
from wire.header import REQUEST_HEADER, request_header_version  # noqa: E402
from wire.primitives import (  # noqa: E402
    read_exact,
    read_uvarint,
    read_varint,
    read_varlong,
)
from wire.schema import Field  # noqa: E402

FIXTURES = REPO / "tests" / "wire" / "fixtures"
NODE_ID = 1
TOPIC = "t1"
RECORDS = [b"golden-0", b"golden-1", b"golden-2"]
ERR_MEMBER_ID_REQUIRED = 79


def topic_id(name: str) -> uuid.UUID:
    return uuid.uuid5(uuid.NAMESPACE_URL, f"kcoord-capture/{name}")


# ---------------------------------------------------------------------------------------
# a v2 record batch (enough for consumers to see messages and commit them)
# ---------------------------------------------------------------------------------------


def _uvarint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _varint(value: int) -> bytes:
    return _uvarint((value << 1) ^ (value >> 63))


def record_batch(base_offset: int, values: list[bytes], timestamp_ms: int) -> bytes:
    records = b""
    for delta, value in enumerate(values):
        body = (
            b"\x00" + _varint(0) + _varint(delta) + _varint(-1)
            + _varint(len(value)) + value + _varint(0)
        )
        records += _varint(len(body)) + body
    after_crc = struct.pack(
        ">hiqqqhii", 0, len(values) - 1, timestamp_ms, timestamp_ms, -1, -1, -1, len(values)
    ) + records
    inner = struct.pack(">ibI", 0, 2, crc32c.crc32c(after_crc)) + after_crc
    return struct.pack(">qi", base_offset, len(inner)) + inner


BATCH = record_batch(0, RECORDS, 1_700_000_000_000)


# ---------------------------------------------------------------------------------------
# the broker
# ---------------------------------------------------------------------------------------


@dataclass
class Captured:
    client: str
    frame: bytes  # size prefix + payload
    api_key: int
    api_version: int
    correlation_id: int
    connection: int


@dataclass
class Group:
    generation: int = 0
    member_id: str | None = None
    protocol_type: str = "consumer"
    protocol: str = ""
    metadata: bytes = b""
    assignment: bytes = b""


@dataclass
class State:
    lock: threading.Lock = field(default_factory=threading.Lock)
    client: str = "unknown"
    frames: list[Captured] = field(default_factory=list)
    groups: dict[str, Group] = field(default_factory=dict)
    topics: dict[str, int] = field(default_factory=lambda: {TOPIC: 1})
    connections: int = 0
    port: int = 0
    errors: list[str] = field(default_factory=list)


class Handler(socketserver.BaseRequestHandler):
    server: CaptureServer

    def handle(self) -> None:
        state = self.server.state
        with state.lock:
            state.connections += 1
            conn = state.connections
        reader = wire.FrameReader()
        sock: socket.socket = self.request
        while True:
            try:
                data = sock.recv(65536)
            except OSError:
                return
            if not data:
                return
            reader.receive_data(data)
            while (payload := reader.next_frame()) is not wire.NEED_DATA:
                assert isinstance(payload, bytes)
                out = self.answer(conn, payload)
                if out is None:
                    return
                if out:
                    try:
                        sock.sendall(out)
                    except OSError:  # the client hung up first (close() during a fetch)
                        return

    def answer(self, conn: int, payload: bytes) -> bytes | None:
        state = self.server.state
        key, version, corr = wire.peek_request_header(payload)
        with state.lock:
            state.frames.append(
                Captured(state.client, wire.frame(payload), key, version, corr, conn)
            )
        try:
            req = wire.decode_request(payload)
        except wire.UnsupportedVersion:
            if key == 18:
                return wire.encode_unsupported_api_versions(corr)
            state.errors.append(f"{state.client}: unsupported api {key} v{version}")
            return None
        except wire.CorruptFrame as exc:
            state.errors.append(f"{state.client}: corrupt frame {exc}")
            return None
        handler = getattr(self, f"on_{req.spec.name}", None)
        if handler is None:
            state.errors.append(f"{state.client}: no handler for {req.spec.name}")
            return None
        body = handler(req, req.body, version)
        if body is None:  # acks=0 produce: no response
            return b""
        return wire.encode_response(key, version, corr, body)

    # -- one method per API ------------------------------------------------------------

    def on_ApiVersions(self, req: Any, b: Any, v: int) -> dict[str, Any]:
        return {"error_code": 0, "api_keys": wire.api_versions_keys()}

    def _topic(self, name: str | None, tid: Any = None) -> dict[str, Any]:
        state = self.server.state
        if name is None:
            name = next((t for t in state.topics if topic_id(t) == tid), None)
        if name is None:
            return {"error_code": 100, "name": None, "topic_id": tid, "partitions": []}
        count = state.topics.setdefault(name, 1)
        return {
            "error_code": 0, "name": name, "topic_id": topic_id(name), "is_internal": False,
            "partitions": [
                {"error_code": 0, "partition_index": p, "leader_id": NODE_ID,
                 "leader_epoch": 0, "replica_nodes": [NODE_ID], "isr_nodes": [NODE_ID],
                 "offline_replicas": []}
                for p in range(count)
            ],
        }

    def on_Metadata(self, req: Any, b: Any, v: int) -> dict[str, Any]:
        state = self.server.state
        if b.topics is None or (v == 0 and not b.topics):
            topics = [self._topic(t) for t in list(state.topics)]
        else:
            topics = [self._topic(t.name, t.topic_id) for t in b.topics]
        return {
            "brokers": [{"node_id": NODE_ID, "host": "127.0.0.1", "port": state.port,
                         "rack": None}],
            "cluster_id": "kcoord-capture", "controller_id": NODE_ID, "topics": topics,
        }

    def on_FindCoordinator(self, req: Any, b: Any, v: int) -> dict[str, Any]:
        port = self.server.state.port
        if v >= 4:
            return {"coordinators": [
                {"key": k, "node_id": NODE_ID, "host": "127.0.0.1", "port": port,
                 "error_code": 0, "error_message": None}
                for k in b.coordinator_keys
            ]}
        return {"error_code": 0, "error_message": None, "node_id": NODE_ID,
                "host": "127.0.0.1", "port": port}

    def on_JoinGroup(self, req: Any, b: Any, v: int) -> dict[str, Any]:
        state = self.server.state
        with state.lock:
            group = state.groups.setdefault(b.group_id, Group())
            if not b.member_id and v >= 4:
                group.member_id = f"{req.client_id or 'client'}-{b.group_id}-member-1"
                return {"error_code": ERR_MEMBER_ID_REQUIRED, "generation_id": -1,
                        "protocol_name": "" if v < 7 else None, "leader": "",
                        "member_id": group.member_id, "members": []}
            if not b.member_id:
                group.member_id = f"{req.client_id or 'client'}-{b.group_id}-member-1"
            else:
                group.member_id = b.member_id
            group.generation += 1
            group.protocol_type = b.protocol_type
            group.protocol = b.protocols[0].name
            group.metadata = b.protocols[0].metadata
            return {
                "error_code": 0, "generation_id": group.generation,
                "protocol_type": b.protocol_type, "protocol_name": group.protocol,
                "leader": group.member_id, "member_id": group.member_id,
                "members": [{"member_id": group.member_id,
                             "group_instance_id": b.group_instance_id,
                             "metadata": group.metadata}],
            }

    def on_SyncGroup(self, req: Any, b: Any, v: int) -> dict[str, Any]:
        state = self.server.state
        with state.lock:
            group = state.groups.setdefault(b.group_id, Group())
            for a in b.assignments:
                if a.member_id == b.member_id:
                    group.assignment = a.assignment
            return {"error_code": 0, "protocol_type": group.protocol_type,
                    "protocol_name": group.protocol, "assignment": group.assignment}

    def on_Heartbeat(self, req: Any, b: Any, v: int) -> dict[str, Any]:
        return {"error_code": 0}

    def on_LeaveGroup(self, req: Any, b: Any, v: int) -> dict[str, Any]:
        members = [{"member_id": m.member_id, "group_instance_id": m.group_instance_id,
                    "error_code": 0} for m in (b.members or [])]
        return {"error_code": 0, "members": members}

    def on_OffsetCommit(self, req: Any, b: Any, v: int) -> dict[str, Any]:
        return {"topics": [
            {"name": t.get("name"), "topic_id": t.get("topic_id"), "partitions": [
                {"partition_index": p.partition_index, "error_code": 0} for p in t.partitions
            ]} for t in b.topics
        ]}

    def _offsets(self, topics: Any) -> list[dict[str, Any]]:
        return [
            {"name": t.get("name"), "topic_id": t.get("topic_id"), "partitions": [
                {"partition_index": p, "committed_offset": -1, "committed_leader_epoch": -1,
                 "metadata": "", "error_code": 0} for p in t.partition_indexes
            ]} for t in (topics or [])
        ]

    def on_OffsetFetch(self, req: Any, b: Any, v: int) -> dict[str, Any]:
        if v >= 8:
            return {"groups": [
                {"group_id": g.group_id, "topics": self._offsets(g.topics), "error_code": 0}
                for g in b.groups
            ]}
        return {"topics": self._offsets(b.topics), "error_code": 0}

    def on_ListOffsets(self, req: Any, b: Any, v: int) -> dict[str, Any]:
        def offset(ts: int) -> int:
            return len(RECORDS) if ts == -1 else 0
        return {"topics": [
            {"name": t.name, "partitions": [
                {"partition_index": p.partition_index, "error_code": 0,
                 "old_style_offsets": [offset(p.timestamp)], "timestamp": -1,
                 "offset": offset(p.timestamp), "leader_epoch": 0}
                for p in t.partitions
            ]} for t in b.topics
        ]}

    def on_Fetch(self, req: Any, b: Any, v: int) -> dict[str, Any]:
        responses = []
        any_data = False
        for t in b.topics:
            parts = []
            for p in t.partitions:
                data = BATCH if p.partition == 0 and p.fetch_offset < len(RECORDS) else b""
                any_data = any_data or bool(data)
                hw = len(RECORDS) if p.partition == 0 else 0
                parts.append({
                    "partition_index": p.partition, "error_code": 0, "high_watermark": hw,
                    "last_stable_offset": hw, "log_start_offset": 0,
                    "aborted_transactions": [], "preferred_read_replica": -1,
                    "records": data,
                })
            responses.append({"topic": t.topic, "topic_id": t.topic_id, "partitions": parts})
        if not any_data:
            time.sleep(min(b.max_wait_ms, 200) / 1000)
        return {"error_code": 0, "session_id": 0, "responses": responses}

    def on_Produce(self, req: Any, b: Any, v: int) -> dict[str, Any] | None:
        if b.acks == 0:
            return None
        return {"responses": [
            {"name": t.name, "topic_id": t.topic_id, "partition_responses": [
                {"index": p.index, "error_code": 0, "base_offset": 0,
                 "log_append_time_ms": -1, "log_start_offset": 0, "record_errors": [],
                 "error_message": None}
                for p in t.partition_data
            ]} for t in b.topic_data
        ]}

    def on_InitProducerId(self, req: Any, b: Any, v: int) -> dict[str, Any]:
        return {"error_code": 0, "producer_id": 1000, "producer_epoch": 0}

    def on_CreateTopics(self, req: Any, b: Any, v: int) -> dict[str, Any]:
        state = self.server.state
        out = []
        for t in b.topics:
            count = t.num_partitions if t.num_partitions > 0 else 1
            state.topics.setdefault(t.name, count)
            out.append({"name": t.name, "topic_id": topic_id(t.name), "error_code": 0,
                        "error_message": None, "num_partitions": count,
                        "replication_factor": max(t.replication_factor, 1), "configs": []})
        return {"topics": out}

    def on_ListGroups(self, req: Any, b: Any, v: int) -> dict[str, Any]:
        groups = self.server.state.groups
        return {"error_code": 0, "groups": [
            {"group_id": g, "protocol_type": "consumer", "group_state": "Empty",
             "group_type": "classic"} for g in sorted(groups)
        ]}

    def on_DescribeGroups(self, req: Any, b: Any, v: int) -> dict[str, Any]:
        groups = self.server.state.groups
        out = []
        for gid in b.groups:
            g = groups.get(gid, Group())
            out.append({"error_code": 0, "error_message": None, "group_id": gid,
                        "group_state": "Empty", "protocol_type": g.protocol_type,
                        "protocol_data": g.protocol, "members": []})
        return {"groups": out}

    def on_DeleteGroups(self, req: Any, b: Any, v: int) -> dict[str, Any]:
        return {"results": [{"group_id": g, "error_code": 0} for g in b.groups_names]}

    def on_DeleteTopics(self, req: Any, b: Any, v: int) -> dict[str, Any]:
        names = list(b.topic_names or []) + [t.name for t in (b.topics or [])]
        return {"responses": [{"name": n, "error_code": 0} for n in names]}


class CaptureServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.state = State(port=self.server_address[1])


# ---------------------------------------------------------------------------------------
# the clients
# ---------------------------------------------------------------------------------------

KAFKA_PYTHON_CONSUMER = """
import sys, time
from kafka import KafkaConsumer
c = KafkaConsumer(bootstrap_servers=sys.argv[1], group_id="g-kafka-python",
                  client_id="kafka-python-golden", auto_offset_reset="earliest",
                  enable_auto_commit=False, heartbeat_interval_ms=1000)
c.subscribe(["t1"])
got, deadline = 0, time.time() + 15
while time.time() < deadline and got < 3:
    got += sum(len(v) for v in c.poll(timeout_ms=500).values())
end = time.time() + 2.5  # let a heartbeat or two go out
while time.time() < end:
    c.poll(timeout_ms=200)
c.commit()
c.close()
print("consumed", got)
"""

KAFKA_PYTHON_ADMIN = """
import sys
from kafka import KafkaProducer
from kafka.admin import KafkaAdminClient, NewTopic
p = KafkaProducer(bootstrap_servers=sys.argv[1], client_id="kafka-python-golden",
                  enable_idempotence=True, acks="all")
p.send("t1", b"hello").get(timeout=10)
p.close(timeout=5)
a = KafkaAdminClient(bootstrap_servers=sys.argv[1], client_id="kafka-python-golden")
a.create_topics([NewTopic("t2", 1, 1)])
print(a.list_groups())
print(a.describe_groups(["g-kafka-python"]))
print(a.delete_groups(["g-kafka-python"]))
a.close()
"""

AIOKAFKA_CONSUMER = """
import asyncio, sys, time
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

async def main():
    c = AIOKafkaConsumer("t1", bootstrap_servers=sys.argv[1], group_id="g-aiokafka",
                         client_id="aiokafka-golden", auto_offset_reset="earliest",
                         enable_auto_commit=False, heartbeat_interval_ms=1000)
    await c.start()
    got, deadline = 0, time.time() + 15
    while time.time() < deadline and got < 3:
        got += sum(len(v) for v in (await c.getmany(timeout_ms=500)).values())
    await asyncio.sleep(2.5)
    await c.commit()
    await c.stop()
    print("consumed", got)
    p = AIOKafkaProducer(bootstrap_servers=sys.argv[1], client_id="aiokafka-golden",
                         enable_idempotence=True)
    await p.start()
    await p.send_and_wait("t1", b"hello")
    await p.stop()
    a = AIOKafkaAdminClient(bootstrap_servers=sys.argv[1], client_id="aiokafka-golden")
    await a.start()
    await a.create_topics([NewTopic("t2", 1, 1)])
    print(await a.list_consumer_groups())
    print(await a.describe_consumer_groups(["g-aiokafka"]))
    await a.close()

asyncio.run(main())
"""

CONFLUENT_CONSUMER = """
import sys, time
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic
conf = {"bootstrap.servers": sys.argv[1], "client.id": "confluent-golden"}
c = Consumer({**conf, "group.id": "g-confluent", "auto.offset.reset": "earliest",
              "enable.auto.commit": False, "heartbeat.interval.ms": 1000,
              "session.timeout.ms": 10000})
c.subscribe(["t1"])
got, deadline = 0, time.time() + 15
while time.time() < deadline and got < 3:
    m = c.poll(0.5)
    if m is not None and m.error() is None:
        got += 1
end = time.time() + 2.5
while time.time() < end:
    c.poll(0.2)
c.commit(asynchronous=False)
c.close()
print("consumed", got)
p = Producer({**conf, "enable.idempotence": True})
p.produce("t1", b"hello")
p.flush(10)
a = AdminClient(conf)
for f in a.create_topics([NewTopic("t2", 1, 1)]).values():
    f.result(10)
print(a.list_consumer_groups().result(10))
for f in a.describe_consumer_groups(["g-confluent"]).values():
    print(f.result(10))
for f in a.delete_consumer_groups(["g-confluent"]).values():
    print(f.result(10))
"""


@dataclass(frozen=True)
class ClientRun:
    client: str
    argv: list[str]
    timeout: float
    stdin: str | None = None


def client_runs(bootstrap: str, names: list[str]) -> Iterator[ClientRun]:
    py = sys.executable
    table = {
        "kafka-python": [
            ClientRun("kafka-python", [py, "-c", KAFKA_PYTHON_CONSUMER, bootstrap], 40),
            ClientRun("kafka-python", [py, "-c", KAFKA_PYTHON_ADMIN, bootstrap], 40),
        ],
        "aiokafka": [ClientRun("aiokafka", [py, "-c", AIOKAFKA_CONSUMER, bootstrap], 50)],
        "confluent-kafka": [
            ClientRun("confluent-kafka", [py, "-c", CONFLUENT_CONSUMER, bootstrap], 50)
        ],
        "kcat": [ClientRun("kcat", [
            "kcat", "-b", bootstrap, "-G", "g-kcat", "-c", "3", "-q",
            "-X", "client.id=kcat-golden", "-X", "auto.offset.reset=earliest",
            "-X", "heartbeat.interval.ms=1000", "-X", "session.timeout.ms=10000", TOPIC,
        ], 30), ClientRun("kcat", [
            "kcat", "-b", bootstrap, "-P", "-t", TOPIC, "-X", "client.id=kcat-golden",
            "-X", "enable.idempotence=true",
        ], 30, stdin="hello\n")],
    }
    for name in names:
        yield from table[name]


def run_client(state: State, run: ClientRun) -> None:
    state.client = run.client
    print(f"--- {run.client}: {' '.join(a if len(a) < 60 else '<script>' for a in run.argv)}")
    proc = subprocess.Popen(run.argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.PIPE, text=True)
    try:
        out, _ = proc.communicate(run.stdin or "", timeout=run.timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        print(f"    (killed after {run.timeout}s)")
    print(textwrap.indent(out.strip()[-3000:], "    "))
    time.sleep(0.5)  # late frames (LeaveGroup on close) still belong to this client


# ---------------------------------------------------------------------------------------
# field-by-field annotation of a request frame
# ---------------------------------------------------------------------------------------

_FIXED = {"int8": ">b", "int16": ">h", "int32": ">i", "int64": ">q", "uint16": ">H",
          "uint32": ">I", "float64": ">d", "bool": ">?"}


class Annotator:
    """Walks a frame with the schema and yields (chunk bytes, comment) per field."""

    def __init__(self, data: bytes) -> None:
        self.io = BytesIO(data)
        self.chunks: list[tuple[bytes, str]] = []
        self.mark = 0

    def emit(self, comment: str) -> None:
        end = self.io.tell()
        chunk = self.io.getvalue()[self.mark:end]
        self.chunks.append((chunk, comment))
        self.mark = end

    def value(self, f: Field, version: int, flexible: bool, path: str) -> None:
        compact = flexible and f.compact
        kind = f.type
        if kind == "struct":
            self.struct(f.fields, version, flexible, path)
        elif kind.startswith("[]"):
            n = read_uvarint(self.io) - 1 if compact else struct.unpack(
                ">i", read_exact(self.io, 4))[0]
            if n < 0:
                self.emit(f"{path} = null")
                return
            self.emit(f"{path}: {n} element{'s' if n != 1 else ''}")
            element = kind[2:]
            for i in range(n):
                if element:
                    self.value(Field(f.name, element), version, flexible, f"{path}[{i}]")
                else:
                    self.struct(f.fields, version, flexible, f"{path}[{i}]")
        elif kind == "string":
            n = read_uvarint(self.io) - 1 if compact else struct.unpack(
                ">h", read_exact(self.io, 2))[0]
            if n < 0:
                self.emit(f"{path} = null")
            else:
                self.emit(f"{path} = {read_exact(self.io, n).decode()!r}")
        elif kind in ("bytes", "records"):
            n = read_uvarint(self.io) - 1 if compact else struct.unpack(
                ">i", read_exact(self.io, 4))[0]
            if n < 0:
                self.emit(f"{path} = null")
                return
            self.emit(f"{path}: {n} bytes")
            for i in range(0, n, 32):
                read_exact(self.io, min(32, n - i))
                self.emit(f"{path} [{i}:{min(i + 32, n)}]")
        elif kind == "uuid":
            self.emit_after(f"{path} = {uuid.UUID(bytes=read_exact(self.io, 16))}")
        elif kind in _FIXED:
            fmt = struct.Struct(_FIXED[kind])
            (v,) = fmt.unpack(read_exact(self.io, fmt.size))
            self.emit(f"{path} = {v!r}")
        elif kind == "varint":
            self.emit(f"{path} = {read_varint(self.io)}")
        elif kind == "varlong":
            self.emit(f"{path} = {read_varlong(self.io)}")
        elif kind == "uvarint":
            self.emit(f"{path} = {read_uvarint(self.io)}")
        else:
            raise ValueError(kind)

    def emit_after(self, comment: str) -> None:
        self.emit(comment)

    def struct(self, fields: tuple[Field, ...], version: int, flexible: bool,
               path: str) -> None:
        prefix = f"{path}." if path else ""
        tagged = {}
        for f in fields:
            if not f.present_in(version):
                continue
            if flexible and f.is_tagged_in(version):
                tagged[f.tag] = f
                continue
            self.value(f, version, flexible, prefix + f.name)
        if flexible:
            count = read_uvarint(self.io)
            self.emit(f"{prefix}tagged fields: {count}")
            for _ in range(count):
                tag = read_uvarint(self.io)
                size = read_uvarint(self.io)
                known = tagged.get(tag)
                self.emit(f"{prefix}tag {tag} ({known.name if known else 'unknown'}), "
                          f"{size} bytes")
                if known is not None:
                    self.value(known, version, flexible, prefix + known.name)
                else:
                    read_exact(self.io, size)
                    self.emit(f"{prefix}tag {tag} data")


def annotate(frame: bytes) -> list[tuple[bytes, str]]:
    a = Annotator(frame)
    (size,) = struct.unpack(">i", read_exact(a.io, 4))
    a.emit(f"size prefix = {size}")
    key, version, _ = wire.peek_request_header(frame[4:])
    spec = wire.lookup(key)
    assert spec is not None
    a.struct(REQUEST_HEADER.fields, request_header_version(spec, version),
             request_header_version(spec, version) >= 2, "")
    a.chunks[1] = (a.chunks[1][0], f"{a.chunks[1][1]} ({spec.name})")
    if a.chunks[-1][1].startswith("tagged fields"):
        a.chunks[-1] = (a.chunks[-1][0], f"header {a.chunks[-1][1]}")
    a.struct(spec.request.fields, version, spec.request.is_flexible(version), "")
    if a.io.tell() != len(frame):
        read_exact(a.io, len(frame) - a.io.tell())
        a.emit("!! trailing bytes not covered by the schema")
    return a.chunks


# ---------------------------------------------------------------------------------------
# output
# ---------------------------------------------------------------------------------------

# Which frame of an (api, version) to keep when a client sent several: the last one for
# APIs whose later requests carry more (JoinGroup after MEMBER_ID_REQUIRED has the member
# id, the second SyncGroup carries a real assignment, later Metadata asks for topics).
KEEP_LAST = {3, 11, 14}


def select(frames: list[Captured]) -> list[Captured]:
    chosen: dict[tuple[int, int], Captured] = {}
    for c in frames:
        k = (c.api_key, c.api_version)
        if k not in chosen or c.api_key in KEEP_LAST:
            chosen[k] = c
    return [chosen[k] for k in sorted(chosen)]


def module_name(client: str) -> str:
    return client.replace("-", "_")


def render(client: str, version: str, frames: list[Captured]) -> str:
    lines = [
        f'"""Request frames sent by {client} {version}, captured on 127.0.0.1 by',
        "tests/wire/capture/capture_broker.py (do not edit by hand; re-run the script).",
        "",
        "One entry per (api, version) the client sent. Each frame is the whole frame as",
        "sent on the socket, 4-byte size prefix included, one hex chunk per field.",
        '"""',
        "",
        "# ruff: noqa: E501",
        "",
        f"CLIENT = {client!r}",
        f"CLIENT_VERSION = {version!r}",
        "",
        "# (api name, api key, api version, correlation id) -> frame",
        "FRAMES: dict[tuple[str, int, int, int], bytes] = {",
    ]
    for c in frames:
        spec = wire.lookup(c.api_key)
        name = spec.name if spec else f"api{c.api_key}"
        lines.append(f"    # {client}: {name} v{c.api_version}, correlation id {c.correlation_id}")
        lines.append(f"    ({name!r}, {c.api_key}, {c.api_version}, {c.correlation_id}): "
                     "bytes.fromhex(")
        try:
            chunks = annotate(c.frame)
        except Exception as exc:  # not decodable: one raw chunk per 32 bytes
            chunks = [(c.frame[i:i + 32], f"raw ({exc})" if i == 0 else "raw")
                      for i in range(0, len(c.frame), 32)]
        for chunk, comment in chunks:
            if not chunk:
                continue
            lines.append(f'        "{chunk.hex()}"  # {comment}')
        lines.append("    ),")
    lines.append("}")
    return "\n".join(lines) + "\n"


def client_version(client: str) -> str:
    if client == "kcat":
        out = subprocess.run(["kcat", "-V"], capture_output=True, text=True).stdout
        m = re.search(r"Version (\S+) .*?librdkafka (\S+)", out)
        return f"{m.group(1)} (librdkafka {m.group(2)})" if m else "?"
    code = {
        "kafka-python": "import kafka; print(kafka.__version__)",
        "aiokafka": "import aiokafka; print(aiokafka.__version__)",
        "confluent-kafka": "import confluent_kafka as m; "
        "print(m.__version__, '(librdkafka', m.libversion()[0] + ')')",
    }[client]
    return subprocess.run([sys.executable, "-c", code], capture_output=True,
                          text=True).stdout.strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", default="kafka-python,aiokafka,confluent-kafka,kcat")
    parser.add_argument("--out", type=Path, default=FIXTURES)
    args = parser.parse_args()
    names = args.clients.split(",")

    server = CaptureServer()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    bootstrap = f"127.0.0.1:{server.state.port}"
    try:
        for run in client_runs(bootstrap, names):
            run_client(server.state, run)
    finally:
        server.shutdown()
        server.server_close()

    state = server.state
    args.out.mkdir(parents=True, exist_ok=True)
    for name in names:
        frames = [c for c in state.frames if c.client == name]
        chosen = select(frames)
        path = args.out / f"{module_name(name)}.py"
        path.write_text(render(name, client_version(name), chosen))
        seen = ", ".join(
            f"{wire.lookup(c.api_key).name if wire.lookup(c.api_key) else c.api_key}"
            f" v{c.api_version}" for c in chosen
        )
        print(f"{name}: {len(frames)} frames, {len(chosen)} kept -> {path}\n    {seen}")
    for err in state.errors:
        print("ERROR", err)
    return 1 if state.errors else 0


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())

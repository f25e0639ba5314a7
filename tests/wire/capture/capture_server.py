"""The capture broker's server side (used by capture_broker.py, which puts the repository
root on sys.path): a small threaded TCP server on 127.0.0.1 (port 0) that decodes every
request with ``wire``, records every raw request frame with the name of the client being
driven, and answers just enough for a client to go subscribe -> join -> sync -> fetch ->
commit -> leave (one broker, node 1 = itself; one topic ``t1`` with one partition holding
3 records in a v2 record batch; a toy one-member group per group id).
"""

from __future__ import annotations

import socket
import socketserver
import struct
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import crc32c

import wire
from wire.varint import encode_uvarint

NODE_ID = 1
TOPIC = "t1"
RECORDS = [b"golden-0", b"golden-1", b"golden-2"]
ERR_MEMBER_ID_REQUIRED = 79


def topic_id(name: str) -> uuid.UUID:
    return uuid.uuid5(uuid.NAMESPACE_URL, f"kcoord-capture/{name}")


# ---------------------------------------------------------------------------------------
# a v2 record batch (enough for consumers to see messages and commit them)
# ---------------------------------------------------------------------------------------


def _varint(value: int) -> bytes:
    return encode_uvarint((value << 1) ^ (value >> 63))


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

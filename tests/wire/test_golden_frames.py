"""Golden request frames from real clients (kafka-python, aiokafka, confluent-kafka, kcat).

The frames live in tests/wire/fixtures/<client>.py, captured once by
tests/wire/capture/capture_broker.py; nothing here needs a client. Every frame must:
(a) decode whole, to the values asserted explicitly below for the group-membership frames;
(b) come out of a FrameReader fed one byte at a time exactly at its last byte;
(c) come out of a FrameReader fed with the next frame's first bytes behind it, leaving
    those buffered;
(d) re-encode with ``encode_request`` to the very same bytes.
kio (an independent, Rust-backed codec) is used as a second reader of the same bytes.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import io
import struct
import sys
import uuid
from datetime import timedelta
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import wire
from wire.header import REQUEST_HEADER, request_header_version
from wire.schema import message_struct


def _load(name: str) -> ModuleType:
    """A helper module of tests/wire/fixtures, loaded by path under a unique name."""
    modname = f"kcoord_wire_fixtures_{name}"
    if modname not in sys.modules:
        path = Path(__file__).parent / "fixtures" / f"{name}.py"
        spec = importlib.util.spec_from_file_location(modname, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[modname] = module
        spec.loader.exec_module(module)
    return sys.modules[modname]


golden = _load("golden")
FRAMES = golden.load_golden_frames()
BY_KEY = {(g.client, g.api, g.api_version): g for g in FRAMES}


def frames_param() -> Any:
    return pytest.mark.parametrize("g", FRAMES, ids=[g.id for g in FRAMES])


# ---------------------------------------------------------------------------------------
# what was captured
# ---------------------------------------------------------------------------------------

CAPTURED = {
    "kafka-python": {
        "Produce": 9, "Fetch": 12, "ListOffsets": 11, "Metadata": 13, "OffsetCommit": 8,
        "OffsetFetch": 8, "FindCoordinator": 6, "JoinGroup": 7, "Heartbeat": 4,
        "LeaveGroup": 5, "SyncGroup": 5, "DescribeGroups": 6, "ListGroups": 5,
        "ApiVersions": 4, "CreateTopics": 7, "InitProducerId": 4, "DeleteGroups": 2,
    },
    "aiokafka": {
        "Produce": 7, "Fetch": 11, "ListOffsets": 3, "Metadata": 5, "OffsetCommit": 3,
        "OffsetFetch": 3, "FindCoordinator": 1, "JoinGroup": 5, "Heartbeat": 1,
        "LeaveGroup": 1, "SyncGroup": 3, "DescribeGroups": 3, "ListGroups": 1,
        "ApiVersions": 0, "CreateTopics": 3, "InitProducerId": 0,
    },
    "confluent-kafka": {
        "Produce": 10, "Fetch": 16, "ListOffsets": 7, "Metadata": 13, "OffsetCommit": 9,
        "OffsetFetch": 9, "FindCoordinator": 2, "JoinGroup": 5, "Heartbeat": 3,
        "LeaveGroup": 1, "SyncGroup": 3, "DescribeGroups": 5, "ListGroups": 5,
        "ApiVersions": 3, "CreateTopics": 4, "InitProducerId": 4, "DeleteGroups": 2,
    },
    "kcat": {
        "Produce": 7, "Fetch": 11, "ListOffsets": 2, "Metadata": 4, "OffsetCommit": 7,
        "OffsetFetch": 7, "FindCoordinator": 2, "JoinGroup": 5, "Heartbeat": 3,
        "LeaveGroup": 1, "SyncGroup": 3, "ApiVersions": 3, "InitProducerId": 4,
    },
}


def test_inventory() -> None:
    """The fixtures hold exactly the (client, api, version) set the capture produced
    (matching /work/shared/reference/clients.md, table 1), one frame each."""
    seen: dict[str, dict[str, int]] = {}
    for g in FRAMES:
        assert g.api not in seen.setdefault(g.client, {}), f"two {g.api} frames for {g.client}"
        seen[g.client][g.api] = g.api_version
    assert seen == CAPTURED


# ---------------------------------------------------------------------------------------
# (a) whole decoding
# ---------------------------------------------------------------------------------------


def _span(payload: bytes) -> tuple[int, int]:
    """(end of header, end of body) when the schemas read ``payload``: decode_request does
    not say how much it consumed, so this reads with the same compiled structs."""
    key, version, _ = wire.peek_request_header(payload)
    spec = wire.lookup(key)
    assert spec is not None
    stream = io.BytesIO(payload)
    message_struct(REQUEST_HEADER, request_header_version(spec, version)).parsefunc(stream, None)
    header_end = stream.tell()
    message_struct(spec.request, version).parsefunc(stream, None)
    return header_end, stream.tell()


@frames_param()
def test_decodes_whole(g: Any) -> None:
    req = wire.decode_request(g.payload)
    assert isinstance(req, wire.DecodedRequest)
    assert (req.api_key, req.api_version, req.correlation_id) == (
        g.api_key, g.api_version, g.correlation_id)
    assert req.spec.name == g.api
    assert req.client_id == g.client_id
    assert _span(g.payload)[1] == len(g.payload), "bytes left over after the body"


@frames_param()
def test_every_truncation_is_refused(g: Any) -> None:
    """Every strict prefix of the payload is a CorruptFrame (never a shorter message).
    Regression: a bool missing at the very end (Metadata v4-8, DescribeGroups v3-4,
    CreateTopics v1-4 end with one) used to decode as True: construct's compiled Flag
    reads ``io.read(1) != b'\\x00'`` without a length check."""
    accepted = []
    for n in range(len(g.payload)):
        try:
            wire.decode_request(g.payload[:n])
        except wire.CorruptFrame:
            continue
        accepted.append(n)
    assert accepted == [], f"prefixes of these lengths decoded: {accepted}"


# -- explicit field values of the group-membership frames ------------------------------

def _sub(version: int, *extra: str) -> bytes:
    """ConsumerProtocolSubscription for topic t1, no user data."""
    return bytes.fromhex(
        f"{version:04x}"  # version
        "00000001" "00027431"  # topics: ["t1"]
        "00000000"  # user_data: 0 bytes
        + "".join(extra)
    )


SUB_V0 = _sub(0)  # kafka-python, aiokafka
SUB_V1 = _sub(1, "00000000")  # kcat: owned_partitions: []
SUB_V3 = _sub(3, "00000000", "ffffffff", "0000")  # confluent: owned [], generation -1, rack ""
ASSIGN_T1_P0 = bytes.fromhex(  # ConsumerProtocolAssignment v0: t1 -> [0], no user data
    "0000" "00000001" "00027431" "00000001" "00000000" "00000000"
)


def _member(client_id: str, group: str) -> str:
    return f"{client_id}-{group}-member-1"  # the id the capture broker handed out


M_KP = _member("kafka-python-golden", "g-kafka-python")
M_AIO = _member("aiokafka-golden", "g-aiokafka")
M_CK = _member("confluent-golden", "g-confluent")
M_KCAT = _member("kcat-golden", "g-kcat")


def _commit(offset: int, epoch: int | None) -> dict[str, Any]:
    part: dict[str, Any] = {"partition_index": 0, "committed_offset": offset,
                            "committed_metadata": ""}
    if epoch is not None:
        part["committed_leader_epoch"] = epoch
    return {"name": "t1", "partitions": [part]}


EXPECTED: dict[tuple[str, str, int], tuple[int, dict[str, Any]]] = {
    # (client, api, version): (correlation id, fields)
    ("kafka-python", "ApiVersions", 4): (1, {
        "client_software_name": "kafka-python", "client_software_version": "3.0.12"}),
    ("kafka-python", "JoinGroup", 7): (5, {
        "group_id": "g-kafka-python", "session_timeout_ms": 45000,
        "rebalance_timeout_ms": 300000, "member_id": M_KP, "group_instance_id": None,
        "protocol_type": "consumer",
        "protocols": [{"name": "range", "metadata": SUB_V0},
                      {"name": "roundrobin", "metadata": SUB_V0}],
        "reason": None}),  # v7 has no reason: the default
    ("kafka-python", "SyncGroup", 5): (6, {
        "group_id": "g-kafka-python", "generation_id": 2, "member_id": M_KP,
        "group_instance_id": None, "protocol_type": "consumer", "protocol_name": "range",
        "assignments": [{"member_id": M_KP, "assignment": ASSIGN_T1_P0}]}),
    ("kafka-python", "Heartbeat", 4): (8, {
        "group_id": "g-kafka-python", "generation_id": 2, "member_id": M_KP,
        "group_instance_id": None}),
    ("kafka-python", "OffsetCommit", 8): (10, {
        "group_id": "g-kafka-python", "generation_id_or_member_epoch": 2, "member_id": M_KP,
        "group_instance_id": None, "topics": [_commit(3, -1)]}),
    ("kafka-python", "LeaveGroup", 5): (11, {
        "group_id": "g-kafka-python",
        "members": [{"member_id": M_KP, "group_instance_id": None, "reason": None}]}),
    ("kafka-python", "FindCoordinator", 6): (2, {
        "key_type": 0, "coordinator_keys": ["g-kafka-python"]}),
    ("kafka-python", "OffsetFetch", 8): (7, {
        "groups": [{"group_id": "g-kafka-python",
                    "topics": [{"name": "t1", "partition_indexes": [0]}]}],
        "require_stable": False}),

    ("aiokafka", "ApiVersions", 0): (1, {
        "client_software_name": "", "client_software_version": ""}),  # v0: defaults
    ("aiokafka", "JoinGroup", 5): (3, {
        "group_id": "g-aiokafka", "session_timeout_ms": 10000, "rebalance_timeout_ms": 10000,
        "member_id": M_AIO, "group_instance_id": None, "protocol_type": "consumer",
        "protocols": [{"name": "roundrobin", "metadata": SUB_V0}]}),
    ("aiokafka", "SyncGroup", 3): (4, {
        "group_id": "g-aiokafka", "generation_id": 1, "member_id": M_AIO,
        "group_instance_id": None,
        "assignments": [{"member_id": M_AIO, "assignment": ASSIGN_T1_P0}]}),
    ("aiokafka", "Heartbeat", 1): (6, {
        "group_id": "g-aiokafka", "generation_id": 1, "member_id": M_AIO}),
    ("aiokafka", "OffsetCommit", 3): (8, {
        "group_id": "g-aiokafka", "generation_id_or_member_epoch": 1, "member_id": M_AIO,
        "retention_time_ms": -1, "topics": [_commit(3, None)]}),
    ("aiokafka", "LeaveGroup", 1): (9, {"group_id": "g-aiokafka", "member_id": M_AIO}),
    ("aiokafka", "FindCoordinator", 1): (3, {"key": "g-aiokafka", "key_type": 0}),

    ("confluent-kafka", "ApiVersions", 3): (1, {
        "client_software_name": "confluent-kafka-python",
        "client_software_version": "2.16.1-rdkafka-2.16.0"}),
    ("confluent-kafka", "JoinGroup", 5): (4, {
        "group_id": "g-confluent", "session_timeout_ms": 10000,
        "rebalance_timeout_ms": 300000, "member_id": M_CK, "group_instance_id": None,
        "protocol_type": "consumer",
        "protocols": [{"name": "range", "metadata": SUB_V3},
                      {"name": "roundrobin", "metadata": SUB_V3}]}),
    ("confluent-kafka", "SyncGroup", 3): (6, {
        "group_id": "g-confluent", "generation_id": 1, "member_id": M_CK,
        "group_instance_id": None,
        "assignments": [{"member_id": M_CK, "assignment": ASSIGN_T1_P0}]}),
    ("confluent-kafka", "Heartbeat", 3): (7, {
        "group_id": "g-confluent", "generation_id": 1, "member_id": M_CK,
        "group_instance_id": None}),
    ("confluent-kafka", "OffsetCommit", 9): (11, {
        "group_id": "g-confluent", "generation_id_or_member_epoch": 1, "member_id": M_CK,
        "group_instance_id": None, "topics": [_commit(3, 0)]}),
    ("confluent-kafka", "LeaveGroup", 1): (12, {"group_id": "g-confluent", "member_id": M_CK}),
    ("confluent-kafka", "OffsetFetch", 9): (8, {
        "groups": [{"group_id": "g-confluent", "member_id": None, "member_epoch": -1,
                    "topics": [{"name": "t1", "partition_indexes": [0]}]}],
        "require_stable": True}),

    ("kcat", "ApiVersions", 3): (1, {
        "client_software_name": "librdkafka", "client_software_version": "2.0.2"}),
    ("kcat", "JoinGroup", 5): (4, {
        "group_id": "g-kcat", "session_timeout_ms": 10000, "rebalance_timeout_ms": 300000,
        "member_id": M_KCAT, "group_instance_id": None, "protocol_type": "consumer",
        "protocols": [{"name": "range", "metadata": SUB_V1},
                      {"name": "roundrobin", "metadata": SUB_V1}]}),
    ("kcat", "SyncGroup", 3): (6, {
        "group_id": "g-kcat", "generation_id": 1, "member_id": M_KCAT,
        "group_instance_id": None,
        "assignments": [{"member_id": M_KCAT, "assignment": ASSIGN_T1_P0}]}),
    ("kcat", "Heartbeat", 3): (7, {
        "group_id": "g-kcat", "generation_id": 1, "member_id": M_KCAT,
        "group_instance_id": None}),
    ("kcat", "OffsetCommit", 7): (9, {
        "group_id": "g-kcat", "generation_id_or_member_epoch": 1, "member_id": M_KCAT,
        "group_instance_id": None, "topics": [_commit(3, -1)]}),
    ("kcat", "LeaveGroup", 1): (10, {"group_id": "g-kcat", "member_id": M_KCAT}),
    ("kcat", "OffsetFetch", 7): (8, {
        "group_id": "g-kcat", "topics": [{"name": "t1", "partition_indexes": [0]}],
        "require_stable": True}),
}


def _assert_fields(actual: Any, expected: Any, path: str = "body") -> None:
    """``expected`` is a subset pattern: dict keys must exist and match, lists match
    element-wise, scalars by value and type (so True is not 1)."""
    if isinstance(expected, dict):
        for key, value in expected.items():
            assert key in actual, f"{path}.{key} missing"
            _assert_fields(actual[key], value, f"{path}.{key}")
    elif isinstance(expected, list):
        assert isinstance(actual, list), f"{path}: {actual!r} is not a list"
        assert len(actual) == len(expected), f"{path}: {actual!r}"
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            _assert_fields(a, e, f"{path}[{i}]")
    else:
        assert type(actual) is type(expected) and actual == expected, (
            f"{path}: {actual!r} != {expected!r}")


def test_every_client_has_annotated_group_frames() -> None:
    for client in CAPTURED:
        for api in ("ApiVersions", "JoinGroup", "SyncGroup", "Heartbeat", "OffsetCommit",
                    "LeaveGroup"):
            assert (client, api, CAPTURED[client][api]) in EXPECTED


@pytest.mark.parametrize("key", list(EXPECTED), ids=["-".join(map(str, k)) for k in EXPECTED])
def test_field_values(key: tuple[str, str, int]) -> None:
    g = BY_KEY[key]
    correlation_id, fields = EXPECTED[key]
    req = wire.decode_request(g.payload)
    assert req.correlation_id == correlation_id
    _assert_fields(req.body, fields)


# ---------------------------------------------------------------------------------------
# (b), (c) framing of the real frames
# ---------------------------------------------------------------------------------------


@frames_param()
def test_reader_one_byte_at_a_time(g: Any) -> None:
    reader = wire.FrameReader()
    for i, byte in enumerate(g.frame):
        reader.receive_data(bytes([byte]))
        got = reader.next_frame()
        if i < len(g.frame) - 1:
            assert got is wire.NEED_DATA, f"frame returned after {i + 1} bytes"
            assert reader.buffered == i + 1
        else:
            assert got == g.payload
    assert reader.buffered == 0
    assert reader.next_frame() is wire.NEED_DATA


@frames_param()
def test_reader_keeps_the_next_frames_first_bytes(g: Any) -> None:
    following = FRAMES[(FRAMES.index(g) + 1) % len(FRAMES)].frame
    for k in sorted({1, 3, 4, 5, 9, len(following) - 1}):
        reader = wire.FrameReader()
        reader.receive_data(g.frame + following[:k])
        assert reader.next_frame() == g.payload
        assert reader.next_frame() is wire.NEED_DATA
        assert reader.buffered == k
        reader.receive_data(following[k:])
        assert reader.next_frame() == following[4:]
        assert reader.buffered == 0


# ---------------------------------------------------------------------------------------
# (d) re-encoding
# ---------------------------------------------------------------------------------------


@frames_param()
def test_reencode_is_byte_identical(g: Any) -> None:
    # All captured frames re-encode byte for byte: no client writes a default-valued
    # tagged field or a non-canonical varint, so no frame needs the decode-equality
    # fallback. (Were one to, compare decode(encode(decode(frame))) with decode(frame).)
    req = wire.decode_request(g.payload)
    assert wire.encode_request(
        req.api_key, req.api_version, req.correlation_id, req.client_id, req.body
    ) == g.frame


# ---------------------------------------------------------------------------------------
# kio as a second, independent reader
# ---------------------------------------------------------------------------------------


def _compare_with_kio(kobj: Any, wval: Any, path: str, compared: list[str]) -> None:
    """Compare the fields kio and wire both name the same (kio renames a few, e.g.
    ``session_timeout`` as a timedelta; those are skipped)."""
    if dataclasses.is_dataclass(kobj):
        for f in dataclasses.fields(kobj):
            if f.name in wval:
                _compare_with_kio(getattr(kobj, f.name), wval[f.name], f"{path}.{f.name}",
                                  compared)
    elif isinstance(kobj, tuple):
        assert isinstance(wval, list) and len(wval) == len(kobj), path
        compared.append(f"{path}[:{len(kobj)}]")
        for i, (k, w) in enumerate(zip(kobj, wval, strict=True)):
            _compare_with_kio(k, w, f"{path}[{i}]", compared)
    elif isinstance(kobj, timedelta):
        assert wval == kobj // timedelta(milliseconds=1), path
        compared.append(path)
    elif kobj is None or isinstance(kobj, (bool, int, str, bytes, uuid.UUID)):
        assert wval == kobj and (kobj is None) == (wval is None), f"{path}: {wval!r} != {kobj!r}"
        compared.append(path)


@frames_param()
def test_kio_reads_the_same_frame(g: Any) -> None:
    kio_index = pytest.importorskip("kio.index")
    kio_serial = pytest.importorskip("kio.serial")
    cls = kio_index.load_request_schema(g.api_key, g.api_version)
    header_end, body_end = _span(g.payload)
    body = g.payload[header_end:]
    obj, used = kio_serial.entity_reader(cls)(body, 0)
    assert header_end + used == len(g.payload) == body_end
    out = io.BytesIO()
    kio_serial.entity_writer(cls)(out, obj)
    assert out.getvalue() == body
    compared: list[str] = []
    _compare_with_kio(obj, wire.decode_request(g.payload).body, "body", compared)
    assert compared or body == b"", "no field compared"


def test_size_prefixes() -> None:
    for g in FRAMES:
        assert struct.unpack(">i", g.frame[:4])[0] == len(g.payload)
        assert wire.peek_request_header(g.payload) == (g.api_key, g.api_version,
                                                        g.correlation_id)

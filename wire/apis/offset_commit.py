"""OffsetCommit: versions 0-10.

Request versions (Kafka's schema notes):
    Versions 0-1 were removed in Apache Kafka 4.0, Version 2 is the new baseline.
    Version 1 adds timestamp and group membership information, as well as the commit timestamp.
    Version 2 adds retention time.  It removes the commit timestamp added in version 1.
    Version 3 and 4 are the same as version 2.
    Version 5 removes the retention time, which is now controlled only by a broker
      configuration.
    Version 6 adds the leader epoch for fencing.
    version 7 adds a new field called groupInstanceId to indicate member identity across
      restarts.
    Version 8 is the first flexible version.
    Version 9 is the first version that can be used with the new consumer group protocol
      (KIP-848). The
    request is the same as version 8.
    Version 10 adds support for topic ids and removes support for topic names (KIP-848).

Response versions:
    Versions 0-1 were removed in Apache Kafka 4.0, Version 2 is the new baseline.
    Versions 1 and 2 are the same as version 0.
    Version 3 adds the throttle time to the response.
    Starting in version 4, on quota violation, brokers send out responses before throttling.
    Versions 5 and 6 are the same as version 4.
    Version 7 offsetCommitRequest supports a new field called groupInstanceId to indicate
      member identity across restarts.
    Version 8 is the first flexible version.
    Version 9 is the first version that can be used with the new consumer group protocol
      (KIP-848). The response is
    the same as version 8 but can return STALE_MEMBER_EPOCH when the new consumer group
      protocol is used and
    GROUP_ID_NOT_FOUND when the group does not exist for both protocols.
    Version 10 adds support for topic ids and removes support for topic names (KIP-848).
    Supported errors:
    - GROUP_AUTHORIZATION_FAILED (version 0+)
    - NOT_COORDINATOR (version 0+)
    - COORDINATOR_NOT_AVAILABLE (version 0+)
    - COORDINATOR_LOAD_IN_PROGRESS (version 0+)
    - ILLEGAL_GENERATION (version 1+)
    - UNKNOWN_MEMBER_ID (version 1+)
    - INVALID_COMMIT_OFFSET_SIZE (version 0+)
    - FENCED_MEMBER_EPOCH (version 7+)
    - GROUP_ID_NOT_FOUND (version 9+)
    - STALE_MEMBER_EPOCH (version 9+)
    - UNKNOWN_TOPIC_ID (version 10+)
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from wire.bounded_cache import BoundedCache
from wire.fast_frames import (
    I16,
    I32,
    I64,
    UNKNOWN_TAGS,
    Malformed,
    array_count,
    compact_string,
    encode_compact_string,
    encode_string,
    message_end,
    no_tags,
    nullable_compact_string,
    nullable_string,
    request_header_end,
    string,
)
from wire.fields import Field as F
from wire.fields import Message
from wire.kafka_uuid import ZERO_UUID
from wire.registry import ApiSpec, register
from wire.varint import encode_uvarint

REQUEST = Message(
    "OffsetCommitRequest",
    api_key=8,
    valid="0-10",
    flexible="8+",
    fields=(
        F("group_id", "string", "0+"),
        F("generation_id_or_member_epoch", "int32", "1+", default=-1),
        F("member_id", "string", "1+"),
        F("group_instance_id", "string", "7+", nullable="7+", default="null"),
        F("retention_time_ms", "int64", "2-4", default=-1),
        F(
            "topics",
            "[]",
            "0+",
            fields=(
                F("name", "string", "0-9"),
                F("topic_id", "uuid", "10+"),
                F(
                    "partitions",
                    "[]",
                    "0+",
                    fields=(
                        F("partition_index", "int32", "0+"),
                        F("committed_offset", "int64", "0+"),
                        F("committed_leader_epoch", "int32", "6+", default=-1),
                        F("commit_timestamp", "int64", "1", default=-1),
                        F("committed_metadata", "string", "0+", nullable="0+"),
                    ),
                ),
            ),
        ),
    ),
)

RESPONSE = Message(
    "OffsetCommitResponse",
    api_key=8,
    valid="0-10",
    flexible="8+",
    fields=(
        F("throttle_time_ms", "int32", "3+"),
        F(
            "topics",
            "[]",
            "0+",
            fields=(
                F("name", "string", "0-9"),
                F("topic_id", "uuid", "10+"),
                F(
                    "partitions",
                    "[]",
                    "0+",
                    fields=(
                        F("partition_index", "int32", "0+"),
                        F("error_code", "int16", "0+"),
                    ),
                ),
            ),
        ),
    ),
)

API = register(ApiSpec(api_key=8, name="OffsetCommit", request=REQUEST, response=RESPONSE))


# ------------------------------------------------------------------ without construct
#
# The server's hot path (``wire/fast_codec.py``): the request decoded straight into the
# same keys and values as the codec's (absent fields at their defaults; the message and its
# topics built by ``make``, which the server passes construct's Container for code that
# reads attributes; each partition a plain dict, which is all the core reads), and the
# response written with struct. Shapes these do not handle (tagged fields, nulls, anything
# malformed) raise, and the codec takes the frame instead.
# tests/wire/test_offset_commit_fast.py checks both against the codec, byte for byte.

_PARTITION_V0 = struct.Struct(">iq")  # partition_index, committed_offset
_PARTITION_V1 = struct.Struct(">iqq")  # + commit_timestamp
_PARTITION_V6 = struct.Struct(">iqi")  # + committed_leader_epoch
_ANSWER = struct.Struct(">ih")  # partition_index, error_code
_FLEXIBLE_ANSWER = struct.Struct(">ihx")  # and no tagged fields
_FLEXIBLE = 8
_TOPIC_IDS = 10


def decode_request_body(
    payload: bytes, version: int, make: Callable[..., Any] = dict
) -> tuple[str | None, Any]:
    """(client_id, body) of an OffsetCommit request frame's payload; raises on any shape
    left to the codec."""
    if version == 8 or version == 9:
        common = _consumer_frame(payload, make)
        if common is not None:
            return common
    flexible = version >= _FLEXIBLE
    client_id, pos = request_header_end(payload, flexible)
    read = compact_string if flexible else string
    group_id, pos = read(payload, pos)
    generation = -1
    member_id = ""
    instance_id: str | None = None
    retention = -1
    if version >= 1:
        (generation,) = I32.unpack_from(payload, pos)
        member_id, pos = read(payload, pos + 4)
        if version >= 7:
            instance_id, pos = (nullable_compact_string if flexible else nullable_string)(
                payload, pos
            )
        elif 2 <= version <= 4:
            (retention,) = I64.unpack_from(payload, pos)
            pos += 8
    count, pos = array_count(payload, pos, flexible)
    layout = (_PARTITION_V6 if version >= 6 else _PARTITION_V1 if version == 1
              else _PARTITION_V0)
    size = layout.size
    unpack = layout.unpack_from
    topics = []
    for _ in range(count):
        if version >= _TOPIC_IDS:
            end = pos + 16
            if end > len(payload):
                raise Malformed("truncated")
            name = ""
            topic_id = uuid.UUID(bytes=bytes(payload[pos:end]))
            pos = end
        else:
            name, pos = read(payload, pos)
            topic_id = ZERO_UUID
        n, pos = array_count(payload, pos, flexible)
        partitions: list[dict[str, Any]]
        if flexible:  # v8+: the usual shape, read in one step per partition
            partitions, pos = _flexible_partitions(payload, pos, n)
        else:
            partitions = []
            append = partitions.append
            for _ in range(n):
                fields = unpack(payload, pos)
                nullable, pos = nullable_string(payload, pos + size)
                append({
                    "partition_index": fields[0],
                    "committed_offset": fields[1],
                    "committed_leader_epoch": fields[2] if version >= 6 else -1,
                    "commit_timestamp": fields[2] if version == 1 else -1,
                    "committed_metadata": nullable,
                })
        if flexible:
            pos = no_tags(payload, pos)
        topics.append(make(name=name, topic_id=topic_id, partitions=partitions))
    message_end(payload, pos, flexible)
    return client_id, make(
        group_id=group_id,
        generation_id_or_member_epoch=generation,
        member_id=member_id,
        group_instance_id=instance_id,
        retention_time_ms=retention,
        topics=topics,
    )


_GENERATION_AND_MEMBER_SIZE = struct.Struct(">iB")


def _flexible_partitions(
    payload: bytes, pos: int, count: int
) -> tuple[list[dict[str, Any]], int]:
    """``count`` v8+ partitions from ``pos`` (the usual metadata "" in one step); raises on
    tagged fields or a malformed metadata string."""
    partitions: list[dict[str, Any]] = []
    append = partitions.append
    unpack = _PARTITION_V6.unpack_from
    size = _PARTITION_V6.size
    for _ in range(count):
        index, offset, leader_epoch = unpack(payload, pos)
        pos += size
        if payload[pos] == 1 and payload[pos + 1] == 0:  # "" and no tagged fields
            metadata: str | None = ""
            pos += 2
        else:
            metadata, pos = nullable_compact_string(payload, pos)
            pos = no_tags(payload, pos)
        append({
            "partition_index": index,
            "committed_offset": offset,
            "committed_leader_epoch": leader_epoch,
            "commit_timestamp": -1,
            "committed_metadata": metadata,
        })
    return partitions, pos


def _consumer_frame(payload: bytes, make: Callable[..., Any]) -> tuple[str | None, Any] | None:
    """``decode_request_body`` of v8/v9 in the shape consumers send: a client id, every
    string before the partitions with a one-byte length, one topic of fewer than 127
    partitions, no tagged fields; None for anything else (the general reader takes it),
    including anything truncated or trailing. One step per field."""
    try:
        (size,) = I16.unpack_from(payload, 8)
        if size < 0:
            return None
        pos = 10 + size
        client_id = payload[10:pos].decode("utf-8")
        size = payload[pos + 1]
        if payload[pos] != 0 or not 0 < size < 0x80:
            return None
        start = pos + 2
        pos = start + size - 1
        group_id = payload[start:pos].decode("utf-8")
        generation, size = _GENERATION_AND_MEMBER_SIZE.unpack_from(payload, pos)
        if not 0 < size < 0x80:
            return None
        start = pos + 5
        pos = start + size - 1
        member_id = payload[start:pos].decode("utf-8")
        size = payload[pos]
        if size == 0:
            instance_id: str | None = None
            pos += 1
        elif size < 0x80:
            start = pos + 1
            pos = start + size - 1
            instance_id = payload[start:pos].decode("utf-8")
        else:
            return None
        size = payload[pos + 1]
        if payload[pos] != 2 or not 0 < size < 0x80:  # one topic; its name
            return None
        start = pos + 2
        pos = start + size - 1
        name = payload[start:pos].decode("utf-8")
        count = payload[pos] - 1
        if not 0 <= count < 0x7F:
            return None
        partitions, pos = _flexible_partitions(payload, pos + 1, count)
        # The topic's and the message's tagged fields (none), and nothing after them.
        if payload[pos] != 0 or payload[pos + 1] != 0 or pos + 2 != len(payload):
            return None
    except (IndexError, struct.error, UnicodeDecodeError, Malformed):
        return None
    return client_id, make(
        group_id=group_id,
        generation_id_or_member_epoch=generation,
        member_id=member_id,
        group_instance_id=instance_id,
        retention_time_ms=-1,
        topics=[make(name=name, topic_id=ZERO_UUID, partitions=partitions)],
    )


def _unknown_tags() -> bool:
    raise Malformed("unknown tagged fields")


_HEAD = struct.Struct(">i")  # correlation id (v0-2)
_HEAD_THROTTLE = struct.Struct(">ii")  # correlation id, throttle time (v3-7)
_HEAD_FLEXIBLE = struct.Struct(">ixi")  # correlation id, no header tags, throttle (v8+)
#: (topic name, flexible) -> the name as the answer writes it (bounded: cleared when full).
_NAMES: BoundedCache[tuple[str, bool], bytes] = BoundedCache(4096)


def _count(n: int, flexible: bool) -> bytes:
    return encode_uvarint(n + 1) if flexible else I32.pack(n)


def _name(name: str, flexible: bool) -> bytes:
    encoded = (encode_compact_string if flexible else encode_string)(name)
    return _NAMES.put((name, flexible), encoded)


_SIZE_AND_CORRELATION = struct.Struct(">ii")


def encode_response_body(version: int, correlation_id: int, body: Mapping[str, Any]) -> bytes:
    """A size-prefixed OffsetCommit response frame; raises on any shape left to the codec
    (unknown tagged fields, missing keys, out-of-range values). A body that is never
    changed once made (the core's shared all-NONE answers) may carry ``encoded_tails``, a
    dict in which its frame after the size and correlation id is kept per version: it is
    encoded once, then each frame costs one ``struct`` call."""
    tails: dict[int, bytes] | None = getattr(body, "encoded_tails", None)
    if tails is not None:
        tail = tails.get(version)
        if tail is None:
            tail = tails[version] = _encode_frame(version, 0, body)[8:]
        return _SIZE_AND_CORRELATION.pack(len(tail) + 4, correlation_id) + tail
    return _encode_frame(version, correlation_id, body)


def _encode_frame(version: int, correlation_id: int, body: Mapping[str, Any]) -> bytes:
    if UNKNOWN_TAGS in body:
        raise Malformed("unknown tagged fields")
    flexible = version >= _FLEXIBLE
    topics = body["topics"]
    if flexible:
        head = _HEAD_FLEXIBLE.pack(correlation_id, body.get("throttle_time_ms", 0))
    elif version >= 3:
        head = _HEAD_THROTTLE.pack(correlation_id, body.get("throttle_time_ms", 0))
    else:
        head = _HEAD.pack(correlation_id)
    parts = [head, _count(len(topics), flexible)]
    add = parts.append
    pack = (_FLEXIBLE_ANSWER if flexible else _ANSWER).pack
    names = _NAMES
    for topic in topics:
        if UNKNOWN_TAGS in topic:
            raise Malformed("unknown tagged fields")
        if version >= _TOPIC_IDS:
            topic_id = topic.get("topic_id", ZERO_UUID)
            if not isinstance(topic_id, uuid.UUID):
                raise Malformed("topic id")
            add(topic_id.bytes)
        else:
            name = topic["name"]
            add(names.get((name, flexible)) or _name(name, flexible))
        partitions = topic["partitions"]
        add(_count(len(partitions), flexible))
        parts.extend([
            pack(p["partition_index"], p["error_code"]) for p in partitions
            # A two-key answer (the core's) holds the two fields and nothing else.
            if len(p) == 2 or UNKNOWN_TAGS not in p or _unknown_tags()
        ])
        if flexible:
            add(b"\x00")
    if flexible:
        add(b"\x00")
    data = b"".join(parts)
    return I32.pack(len(data)) + data

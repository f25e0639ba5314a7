"""The embedded consumer protocol: what ``consumer`` groups carry inside JoinGroup
metadata and SyncGroup assignments (ConsumerProtocolSubscription / Assignment v0-3).

Each blob is an int16 version followed by the struct. Non-flexible. As in Kafka, a
version newer than 3 is parsed with the v3 layout (new versions may only append fields)
and bytes after the known fields are ignored.

Subscription versions: v1 adds OwnedPartitions (KIP-429), v2 GenerationId, v3 RackId.
Assignment versions: v1-v3 are the same layout as v0 (bumped with the subscription).
"""

from __future__ import annotations

import struct
from io import BytesIO
from typing import Any

from construct import Container

from wire.errors import CorruptFrame
from wire.schema import Field as F
from wire.schema import Message, message_struct

__all__ = [
    "ASSIGNMENT",
    "SUBSCRIPTION",
    "decode_assignment",
    "decode_subscription",
    "encode_assignment",
    "encode_subscription",
]

SUBSCRIPTION = Message(
    "ConsumerProtocolSubscription",
    api_key=-1,
    valid="0-3",
    flexible="none",
    fields=(
        F("topics", "[]string", "0+"),
        F("user_data", "bytes", "0+", nullable="0+", default="null"),
        F(
            "owned_partitions",
            "[]",
            "1+",
            fields=(
                F("topic", "string", "1+"),
                F("partitions", "[]int32", "1+"),
            ),
        ),
        F("generation_id", "int32", "2+", default=-1),
        F("rack_id", "string", "3+", nullable="3+", default="null"),
    ),
)

ASSIGNMENT = Message(
    "ConsumerProtocolAssignment",
    api_key=-1,
    valid="0-3",
    flexible="none",
    fields=(
        F(
            "assigned_partitions",
            "[]",
            "0+",
            fields=(
                F("topic", "string", "0+"),
                F("partitions", "[]int32", "0+"),
            ),
        ),
        F("user_data", "bytes", "0+", nullable="0+", default="null"),
    ),
)

_VERSION = struct.Struct(">h")


def _decode(message: Message, data: bytes) -> tuple[int, Container]:
    if len(data) < 2:
        raise CorruptFrame(f"{message.name} of {len(data)} bytes has no version")
    (version,) = _VERSION.unpack_from(data)
    if version < 0:
        raise CorruptFrame(f"{message.name} has negative version {version}")
    io = BytesIO(data)
    io.seek(2)
    try:
        body = message_struct(message, min(version, 3)).parsefunc(io, None)
    except Exception as exc:
        raise CorruptFrame(f"cannot decode {message.name} v{version}: {exc}") from exc
    return version, body


def _encode(message: Message, version: int, body: Any) -> bytes:
    io = BytesIO()
    io.write(_VERSION.pack(version))
    message_struct(message, version).buildfunc(body, io, None)
    return io.getvalue()


def decode_subscription(data: bytes) -> tuple[int, Container]:
    """(version, subscription) of a consumer group member's protocol metadata."""
    return _decode(SUBSCRIPTION, data)


def decode_assignment(data: bytes) -> tuple[int, Container]:
    """(version, assignment) of a member's SyncGroup assignment."""
    return _decode(ASSIGNMENT, data)


def encode_subscription(version: int, body: Any) -> bytes:
    """Encode a subscription at ``version`` (0-3)."""
    return _encode(SUBSCRIPTION, version, body)


def encode_assignment(version: int, body: Any) -> bytes:
    """Encode an assignment at ``version`` (0-3)."""
    return _encode(ASSIGNMENT, version, body)

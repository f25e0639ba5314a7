"""The embedded consumer protocol's schema, declared with wire's DSL, and its schema-driven
writers (ConsumerProtocolSubscription / Assignment v0-3): what ``consumer`` groups carry
inside JoinGroup metadata and SyncGroup assignments. Tests build blobs with it; it is the
independent writer the one reader (``wire.consumer_protocol``, stdlib only, so the core can
use it) is checked against.

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

from wire.schema import Field as F
from wire.schema import Message, message_struct

__all__ = [
    "ASSIGNMENT",
    "SUBSCRIPTION",
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


def _encode(message: Message, version: int, body: Any) -> bytes:
    io = BytesIO()
    io.write(_VERSION.pack(version))
    message_struct(message, version).buildfunc(body, io, None)
    return io.getvalue()


def encode_subscription(version: int, body: Any) -> bytes:
    """Encode a subscription at ``version`` (0-3)."""
    return _encode(SUBSCRIPTION, version, body)


def encode_assignment(version: int, body: Any) -> bytes:
    """Encode an assignment at ``version`` (0-3)."""
    return _encode(ASSIGNMENT, version, body)

"""A tiny stdlib-only reader of the consumer protocol's subscription (ConsumerProtocol v0-3).

The coordinator only needs the subscribed topics of ``consumer`` groups (OffsetDelete's
GROUP_SUBSCRIBED_TO_TOPIC and KIP-211 offset expiry). Like Kafka
(``GroupMetadata.computeSubscribedTopics``) it reads the version and then the v0 prefix that
every later version starts with: ``int16 version, int32 count, count x (int16 len, utf-8)``.
Anything that does not parse means "unknown", which callers treat as subscribed to everything.
"""

from __future__ import annotations

import struct

__all__ = ["CONSUMER_PROTOCOL_TYPE", "parse_subscription_topics"]

CONSUMER_PROTOCOL_TYPE = "consumer"

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")


def parse_subscription_topics(metadata: bytes) -> frozenset[str] | None:
    """Topics of a ConsumerProtocolSubscription, or None when the bytes do not parse."""
    try:
        (version,) = _I16.unpack_from(metadata, 0)
        if version < 0:
            return None
        (count,) = _I32.unpack_from(metadata, 2)
        if count < 0:
            return None
        pos = 6
        topics: set[str] = set()
        for _ in range(count):
            (length,) = _I16.unpack_from(metadata, pos)
            pos += 2
            if length < 0 or pos + length > len(metadata):
                return None
            topics.add(metadata[pos : pos + length].decode("utf-8", errors="replace"))
            pos += length
    except struct.error:
        return None
    return frozenset(topics)

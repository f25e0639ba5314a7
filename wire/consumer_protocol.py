"""The one reader of the embedded ``consumer`` protocol, standard library only (the core
reads it too, and may not import codec libraries): ConsumerProtocolSubscription v0-3
(topics, user data, v1 owned partitions, v2 generation, v3 rack id) and
ConsumerProtocolAssignment v0-3 (assigned partitions, user data), and the assignment writer
online migration uses. Each blob is an int16 version and a non-flexible struct; as in Kafka,
a newer version is read with the v3 layout and trailing bytes are ignored.

Readers: online migration (:func:`decode_subscription`, :func:`decode_assignment`), a
classic group's subscribed topics (:func:`subscription_topics`), ``kcoord log dump``, the
pipeline, ``kcoord groups`` and the test double. ``wire.consumer_protocol_schema`` declares
the same messages with wire's DSL (the tests check both agree)."""

from __future__ import annotations

import struct
from dataclasses import dataclass

__all__ = [
    "CONSUMER_PROTOCOL_TYPE",
    "EmbeddedSubscription",
    "MalformedEmbeddedProtocolError",
    "decode_assignment",
    "decode_subscription",
    "encode_assignment",
    "protocol_version",
    "subscription_topics",
]

#: The protocol type of groups using the embedded consumer protocol.
CONSUMER_PROTOCOL_TYPE = "consumer"

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_MAX_VERSION = 3

TopicPartitionList = tuple[tuple[str, tuple[int, ...]], ...]


class MalformedEmbeddedProtocolError(ValueError):
    """The bytes are not a readable ConsumerProtocolSubscription / Assignment."""


@dataclass(frozen=True, slots=True)
class EmbeddedSubscription:
    """A decoded ConsumerProtocolSubscription (the fields migration uses)."""

    version: int
    topics: tuple[str, ...]
    owned_partitions: TopicPartitionList
    rack_id: str | None


class _Reader:
    __slots__ = ("data", "pos")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def _unpack(self, fmt: struct.Struct) -> int:
        try:
            (value,) = fmt.unpack_from(self.data, self.pos)
        except struct.error:
            raise MalformedEmbeddedProtocolError("truncated embedded protocol") from None
        self.pos += fmt.size
        return int(value)

    def int16(self) -> int:
        return self._unpack(_I16)

    def int32(self) -> int:
        return self._unpack(_I32)

    def _take(self, length: int) -> bytes:
        if length < 0 or self.pos + length > len(self.data):
            raise MalformedEmbeddedProtocolError("truncated embedded protocol")
        out = self.data[self.pos:self.pos + length]
        self.pos += length
        return out

    def string(self, nullable: bool = False, errors: str = "strict") -> str | None:
        length = self.int16()
        if length == -1 and nullable:
            return None
        try:
            return self._take(length).decode("utf-8", errors)
        except UnicodeDecodeError:
            raise MalformedEmbeddedProtocolError("a string is not UTF-8") from None

    def name(self, errors: str = "strict") -> str:
        value = self.string(errors=errors)
        assert value is not None
        return value

    def skip_bytes(self) -> None:
        length = self.int32()
        if length != -1:
            self._take(length)

    def count(self) -> int:
        n = self.int32()
        if n < 0 or n > len(self.data):
            raise MalformedEmbeddedProtocolError(f"bad array length {n}")
        return n

    def partitions(self) -> TopicPartitionList:
        out = []
        for _ in range(self.count()):
            topic = self.name()
            out.append((topic, tuple(self.int32() for _ in range(self.count()))))
        return tuple(out)


def _versioned(data: bytes) -> tuple[int, _Reader]:
    reader = _Reader(data)
    version = reader.int16()
    if version < 0:
        raise MalformedEmbeddedProtocolError(f"negative version {version}")
    return version, reader


def protocol_version(data: bytes) -> int:
    """The version to answer in (Kafka's ConsumerProtocol.deserializeVersion), at most 3."""
    version, _ = _versioned(data)
    return min(version, _MAX_VERSION)


def decode_subscription(data: bytes) -> EmbeddedSubscription:
    """A member's JoinGroup metadata for the ``consumer`` protocol type."""
    version, reader = _versioned(data)
    topics = tuple(reader.name() for _ in range(reader.count()))
    reader.skip_bytes()  # user data
    owned: TopicPartitionList = ()
    rack_id = None
    if version >= 1:
        owned = reader.partitions()
    if version >= 2:
        reader.int32()  # generation id
    if version >= 3:
        rack_id = reader.string(nullable=True)
    return EmbeddedSubscription(version, topics, owned, rack_id)


def subscription_topics(data: bytes) -> frozenset[str] | None:
    """The topics of a ConsumerProtocolSubscription, or None when the bytes do not parse
    (callers take that as subscribed to everything). As Kafka's
    ``ClassicGroup.computeSubscribedTopics``, only the version and the topic list every
    version starts with are read, and a name that is not UTF-8 is read with replacement
    characters (as Java decodes it)."""
    try:
        _, reader = _versioned(data)
        return frozenset(reader.name(errors="replace") for _ in range(reader.count()))
    except MalformedEmbeddedProtocolError:
        return None


def decode_assignment(data: bytes) -> TopicPartitionList:
    """A member's SyncGroup assignment: (topic, partitions) pairs."""
    _, reader = _versioned(data)
    partitions = reader.partitions()
    reader.skip_bytes()  # user data
    return partitions


def _string(value: str) -> bytes:
    raw = value.encode("utf-8")
    return _I16.pack(len(raw)) + raw


def encode_assignment(version: int, partitions: TopicPartitionList) -> bytes:
    """A ConsumerProtocolAssignment at ``version`` (the layout is the same for 0-3), no
    user data."""
    out = [_I16.pack(version), _I32.pack(len(partitions))]
    for topic, parts in partitions:
        out.append(_string(topic))
        out.append(_I32.pack(len(parts)))
        out.extend(_I32.pack(p) for p in parts)
    out.append(_I32.pack(-1))
    return b"".join(out)

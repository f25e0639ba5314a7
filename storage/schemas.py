"""Kafka's ``__consumer_offsets`` key/value schemas, declared with construct.

One cached ``Struct`` per (record, version), built from Kafka's primitive types:
STRING/NULLABLE_STRING, BYTES, ARRAY and, in flexible versions (v4 values), their COMPACT_
forms plus a tagged-field buffer at the end of every struct. Field names and version
ranges follow ``group-coordinator/src/main/resources/common/message/*.json``.
Every schema here starts *after* the int16 version prefix.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from construct import (
    Construct,
    ExplicitError,
    Int16sb,
    Int32sb,
    Int64sb,
    Struct,
    Terminated,
    VarInt,
)
from construct.core import stream_read, stream_write

__all__ = [
    "KafkaArray",
    "KafkaBytes",
    "KafkaString",
    "TaggedFields",
    "group_key_schema",
    "group_metadata_value_schema",
    "member_metadata_schema",
    "offset_commit_key_schema",
    "offset_commit_value_schema",
    "rebalance_event_value_schema",
]

# --------------------------------------------------------------------------------------
# Kafka primitive types as construct classes


class KafkaString(Construct):  # type: ignore[misc]
    """STRING / NULLABLE_STRING (int16 length, -1 = null) or their COMPACT_ forms
    (unsigned varint length+1, 0 = null); UTF-8."""

    def __init__(self, flexible: bool, nullable: bool) -> None:
        super().__init__()
        self.flexible = flexible
        self.nullable = nullable

    def _parse(self, stream: Any, context: Any, path: str) -> str | None:
        if self.flexible:
            n = VarInt._parsereport(stream, context, path) - 1
        else:
            n = Int16sb._parsereport(stream, context, path)
        if n < 0:
            if self.nullable and n == -1:
                return None
            raise ExplicitError(f"bad string length {n}", path=path)
        data = stream_read(stream, n, path)
        try:
            return bytes(data).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ExplicitError(f"string is not UTF-8: {exc}", path=path) from None

    def _build(self, obj: str | None, stream: Any, context: Any, path: str) -> str | None:
        if obj is None:
            if not self.nullable:
                raise ExplicitError("null for a non-nullable string", path=path)
            if self.flexible:
                VarInt._build(0, stream, context, path)
            else:
                Int16sb._build(-1, stream, context, path)
            return obj
        data = obj.encode("utf-8")
        if self.flexible:
            VarInt._build(len(data) + 1, stream, context, path)
        else:
            if len(data) > 0x7FFF:
                raise ExplicitError(f"string of {len(data)} bytes exceeds int16", path=path)
            Int16sb._build(len(data), stream, context, path)
        stream_write(stream, data, len(data), path)
        return obj


class KafkaBytes(Construct):  # type: ignore[misc]
    """BYTES (int32 length) or COMPACT_BYTES (unsigned varint length+1); not nullable."""

    def __init__(self, flexible: bool) -> None:
        super().__init__()
        self.flexible = flexible

    def _parse(self, stream: Any, context: Any, path: str) -> bytes:
        if self.flexible:
            n = VarInt._parsereport(stream, context, path) - 1
        else:
            n = Int32sb._parsereport(stream, context, path)
        if n < 0:
            raise ExplicitError(f"bad bytes length {n}", path=path)
        return bytes(stream_read(stream, n, path))

    def _build(self, obj: bytes, stream: Any, context: Any, path: str) -> bytes:
        if self.flexible:
            VarInt._build(len(obj) + 1, stream, context, path)
        else:
            Int32sb._build(len(obj), stream, context, path)
        stream_write(stream, bytes(obj), len(obj), path)
        return obj


class KafkaArray(Construct):  # type: ignore[misc]
    """ARRAY (int32 count) or COMPACT_ARRAY (unsigned varint count+1); not nullable."""

    def __init__(self, subcon: Construct, flexible: bool) -> None:
        super().__init__()
        self.subcon = subcon
        self.flexible = flexible

    def _parse(self, stream: Any, context: Any, path: str) -> list[Any]:
        if self.flexible:
            n = VarInt._parsereport(stream, context, path) - 1
        else:
            n = Int32sb._parsereport(stream, context, path)
        if n < 0:
            raise ExplicitError(f"bad array length {n}", path=path)
        return [self.subcon._parsereport(stream, context, path) for _ in range(n)]

    def _build(self, obj: list[Any], stream: Any, context: Any, path: str) -> list[Any]:
        if self.flexible:
            VarInt._build(len(obj) + 1, stream, context, path)
        else:
            Int32sb._build(len(obj), stream, context, path)
        for item in obj:
            self.subcon._build(item, stream, context, path)
        return obj


class TaggedFields(Construct):  # type: ignore[misc]
    """A flexible struct's tagged-field buffer: varint count, then (varint tag, varint
    size, bytes) each. Parsed to ``{tag: bytes}``; kcoord writes none."""

    def _parse(self, stream: Any, context: Any, path: str) -> dict[int, bytes]:
        fields: dict[int, bytes] = {}
        for _ in range(VarInt._parsereport(stream, context, path)):
            tag = VarInt._parsereport(stream, context, path)
            size = VarInt._parsereport(stream, context, path)
            fields[tag] = bytes(stream_read(stream, size, path))
        return fields

    def _build(
        self, obj: dict[int, bytes] | None, stream: Any, context: Any, path: str
    ) -> dict[int, bytes]:
        obj = obj or {}
        VarInt._build(len(obj), stream, context, path)
        for tag in sorted(obj):
            VarInt._build(tag, stream, context, path)
            VarInt._build(len(obj[tag]), stream, context, path)
            stream_write(stream, obj[tag], len(obj[tag]), path)
        return obj


# --------------------------------------------------------------------------------------
# Schemas per (record, version)


@cache
def offset_commit_key_schema(version: int) -> Construct:
    """OffsetCommitKey struct (after the int16 version); versions 0 and 1 are identical."""
    del version
    return Struct(
        "group" / KafkaString(False, False),
        "topic" / KafkaString(False, False),
        "partition" / Int32sb,
        Terminated,
    )


@cache
def group_key_schema() -> Construct:
    """GroupMetadataKey (version 2) and kcoord's RebalanceEventKey (version 100) struct."""
    return Struct("group" / KafkaString(False, False), Terminated)


@cache
def offset_commit_value_schema(version: int) -> Construct:
    """OffsetCommitValue v0-4: leader_epoch v3+, expire_timestamp v1 only, v4 flexible."""
    flex = version >= 4
    fields: list[Construct] = ["offset" / Int64sb]
    if version >= 3:
        fields.append("leader_epoch" / Int32sb)
    fields.append("metadata" / KafkaString(flex, False))
    fields.append("commit_timestamp" / Int64sb)
    if version == 1:
        fields.append("expire_timestamp" / Int64sb)
    if flex:
        fields.append("tagged_fields" / TaggedFields())
    return Struct(*fields, Terminated)


@cache
def member_metadata_schema(version: int) -> Construct:
    """GroupMetadataValue.MemberMetadata: group_instance_id v3+, rebalance_timeout v1+."""
    flex = version >= 4
    fields: list[Construct] = ["member_id" / KafkaString(flex, False)]
    if version >= 3:
        fields.append("group_instance_id" / KafkaString(flex, True))
    fields.append("client_id" / KafkaString(flex, False))
    fields.append("client_host" / KafkaString(flex, False))
    if version >= 1:
        fields.append("rebalance_timeout" / Int32sb)
    fields.append("session_timeout" / Int32sb)
    fields.append("subscription" / KafkaBytes(flex))
    fields.append("assignment" / KafkaBytes(flex))
    if flex:
        fields.append("tagged_fields" / TaggedFields())
    return Struct(*fields)


@cache
def group_metadata_value_schema(version: int) -> Construct:
    """GroupMetadataValue v0-4: current_state_timestamp v2+, v4 flexible."""
    flex = version >= 4
    fields: list[Construct] = [
        "protocol_type" / KafkaString(flex, False),
        "generation" / Int32sb,
        "protocol" / KafkaString(flex, True),
        "leader" / KafkaString(flex, True),
    ]
    if version >= 2:
        fields.append("current_state_timestamp" / Int64sb)
    fields.append("members" / KafkaArray(member_metadata_schema(version), flex))
    if flex:
        fields.append("tagged_fields" / TaggedFields())
    return Struct(*fields, Terminated)


@cache
def rebalance_event_value_schema(version: int) -> Construct:
    """kcoord RebalanceEventValue v0 (flexible from the start, so it can grow by tags)."""
    del version
    return Struct(
        "event" / KafkaString(True, False),
        "timestamp" / Int64sb,
        "generation" / Int32sb,
        "member_id" / KafkaString(True, False),
        "group_instance_id" / KafkaString(True, True),
        "reason" / KafkaString(True, False),
        "members" / KafkaArray(KafkaString(True, False), True),
        "tagged_fields" / TaggedFields(),
        Terminated,
    )

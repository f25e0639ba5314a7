"""Records <-> bytes, following Kafka's ``__consumer_offsets`` key/value schemas.

A key is ``int16 version`` + struct and the key version names the record type; a value is
``int16 version`` + struct; a missing value is a tombstone. The layouts are declared once,
with wire's schema DSL, in :mod:`storage.record_schemas`; :mod:`storage.record_types` ties
each key version to its schemas and dataclasses, so adding a record type is one entry
there. The hot shapes (OffsetCommitKey v1, OffsetCommitValue v1/v3) also have a ``struct``
fast path that tests check byte for byte against the schemas.

Writers use the versions Kafka writes (OffsetCommitKey v1, GroupMetadataKey v2,
OffsetCommitValue v1 when an expire timestamp is set else v3, GroupMetadataValue v3);
readers accept every version. Value versions above the newest known one are read with the
newest flexible schema (KIP-915: later versions only add tagged fields).
"""

from __future__ import annotations

import logging
import struct
from dataclasses import dataclass
from io import BytesIO
from typing import Any

from wire.bounded_cache import BoundedCache
from wire.schema import Message, message_struct

from .record_mapping import from_fields, to_fields
from .record_types import BY_KEY_TYPE, BY_VALUE_TYPE, RECORD_TYPES, RecordType
from .records import (
    GroupMetadataValue,
    MemberMetadata,
    OffsetCommitKey,
    OffsetCommitValue,
    Record,
    RecordKey,
    RecordValue,
)

__all__ = [
    "RecordDecodeError",
    "RecordEncodeError",
    "UnknownKey",
    "decode_key",
    "decode_key_by_schema",
    "decode_record",
    "decode_value",
    "decode_value_by_schema",
    "encode_key",
    "encode_key_by_schema",
    "encode_record",
    "encode_value",
    "encode_value_by_schema",
    "value_version_for",
]

log = logging.getLogger(__name__)


class RecordDecodeError(ValueError):
    """Bytes that claim a known key/value version but do not match its schema."""


class RecordEncodeError(ValueError):
    """A record that cannot be written in the requested schema (type or range error)."""


@dataclass(frozen=True, slots=True)
class UnknownKey:
    """A key whose version (record type) this reader does not know; skipped by replay."""

    version: int
    raw: bytes


# --------------------------------------------------------------------------------------
# The schema path (every type and version)


def _build(schema: Message, version: int, obj: Any, what: str) -> bytes:
    io = BytesIO()
    io.write(struct.pack(">h", version))
    try:
        message_struct(schema, version).buildfunc(obj, io, None)
    except Exception as exc:  # construct, struct and encoding errors alike
        raise RecordEncodeError(f"cannot encode {what} v{version}: {exc}") from exc
    return io.getvalue()


def _parse(schema: Message, version: int, data: bytes, what: str) -> Any:
    io = BytesIO(data)
    io.seek(2)
    try:
        fields = message_struct(schema, version).parsefunc(io, None)
    except Exception as exc:  # a truncated or malformed body
        raise RecordDecodeError(f"bad {what}: {exc}") from None
    if io.tell() != len(data):
        raise RecordDecodeError(f"bad {what}: {len(data) - io.tell()} bytes after its fields")
    return fields


def encode_key_by_schema(key: RecordKey, version: int | None = None) -> bytes:
    """Key bytes built from the schema (the oracle of :func:`encode_key`'s fast path)."""
    kind = BY_KEY_TYPE.get(type(key))
    if kind is None:
        raise RecordEncodeError(f"not a record key: {key!r}")
    version = kind.write_key_version if version is None else version
    if version not in kind.key_versions:
        raise RecordEncodeError(f"{type(key).__name__} has no version {version}")
    return _build(kind.key_schema, version, to_fields(key), type(key).__name__)


def encode_value_by_schema(value: RecordValue, version: int) -> bytes:
    """Value bytes in an explicit version, built from the schema."""
    kind = BY_VALUE_TYPE.get(type(value))
    if kind is None:
        raise RecordEncodeError(f"not a record value: {value!r}")
    if version not in kind.value_schema.version_range:
        raise RecordEncodeError(f"{type(value).__name__} has no version {version}")
    return _build(kind.value_schema, version, to_fields(value), type(value).__name__)


def value_version_for(value: RecordValue) -> int:
    """The value version Kafka's writer picks (kcoord's own for RebalanceEvent)."""
    kind = BY_VALUE_TYPE.get(type(value))
    if kind is None:
        raise RecordEncodeError(f"not a record value: {value!r}")
    return kind.write_value_version(value)


# --------------------------------------------------------------------------------------
# Encoding, with the fast paths

_I16 = struct.Struct(">h")
_OC_VALUE_V3 = struct.Struct(">hqih")  # version, offset, leader_epoch, metadata length
_I64 = struct.Struct(">q")
_I32 = struct.Struct(">i")
_INT64 = (-(2**63), 2**63 - 1)
_INT32 = (-(2**31), 2**31 - 1)


def _check_int(name: str, value: int, bounds: tuple[int, int]) -> None:
    if not bounds[0] <= value <= bounds[1]:
        raise RecordEncodeError(f"{name}={value} out of range")


def _short_string(name: str, value: str) -> bytes:
    data = value.encode("utf-8")
    if len(data) > 0x7FFF:
        raise RecordEncodeError(f"{name} is {len(data)} bytes; int16 strings hold 32767")
    return _I16.pack(len(data)) + data


def encode_key(key: RecordKey, version: int | None = None) -> bytes:
    """Key bytes: int16 version + struct. Default versions are those Kafka writes."""
    if type(key) is OffsetCommitKey and version in (None, 1):
        _check_int("partition", key.partition, _INT32)
        return (
            _I16.pack(1)
            + _short_string("group", key.group)
            + _short_string("topic", key.topic)
            + _I32.pack(key.partition)
        )
    return encode_key_by_schema(key, version)


def encode_value(value: RecordValue | None, version: int | None = None) -> bytes | None:
    """Value bytes: int16 version + struct, or None for a tombstone."""
    if value is None:
        return None
    if version is None:
        version = value_version_for(value)
    if type(value) is OffsetCommitValue and version == 3:
        meta = value.metadata.encode("utf-8")
        if len(meta) > 0x7FFF:
            raise RecordEncodeError(f"metadata is {len(meta)} bytes; int16 strings hold 32767")
        _check_int("offset", value.offset, _INT64)
        _check_int("leader_epoch", value.leader_epoch, _INT32)
        _check_int("commit_timestamp", value.commit_timestamp, _INT64)
        return (
            _OC_VALUE_V3.pack(3, value.offset, value.leader_epoch, len(meta))
            + meta
            + _I64.pack(value.commit_timestamp)
        )
    return encode_value_by_schema(value, version)


def encode_record(record: Record) -> tuple[bytes, bytes | None]:
    """Encode a record as (key bytes, value bytes or None for a tombstone)."""
    value = record.value
    if value is not None:
        kind = BY_KEY_TYPE.get(type(record.key))
        if kind is None or kind.value_type is not type(value):
            raise RecordEncodeError(
                f"{type(value).__name__} cannot be the value of {type(record.key).__name__}"
            )
    return encode_key(record.key), encode_value(value)


# --------------------------------------------------------------------------------------
# Decoding

_KEY_CACHE: BoundedCache[bytes, RecordKey] = BoundedCache(1 << 17)
_OC_KEY_HEAD = struct.Struct(">hh")
_OC_VALUE_V1_TAIL = struct.Struct(">qq")
_OC_VALUE_V0_HEAD = struct.Struct(">hqh")
_warned_key_versions: set[int] = set()


def decode_key(data: bytes) -> RecordKey | UnknownKey:
    """Decode key bytes; an unknown key version gives :class:`UnknownKey`.

    Raises :class:`RecordDecodeError` when a known version's bytes do not fit its schema.
    """
    key = _KEY_CACHE.get(data)
    if key is not None:
        return key
    if len(data) < 2:
        raise RecordDecodeError(f"key of {len(data)} bytes has no version")
    (version,) = _I16.unpack_from(data)
    kind = RECORD_TYPES.get(version)
    if kind is None:
        return UnknownKey(version, bytes(data))
    if kind.key_type is OffsetCommitKey:
        key = _decode_offset_commit_key_fast(data)
    if key is None:
        key = _decode_key_by_schema(kind, version, data)
    return _KEY_CACHE.put(bytes(data), key)


def decode_key_by_schema(data: bytes) -> RecordKey:
    """Key bytes of a known record type decoded through the schema (no cache, no fast
    path: the oracle of :func:`decode_key`)."""
    (version,) = _I16.unpack_from(data)
    return _decode_key_by_schema(RECORD_TYPES[version], version, data)


def _decode_key_by_schema(kind: RecordType, version: int, data: bytes) -> RecordKey:
    fields = _parse(kind.key_schema, version, data, f"{kind.key_schema.name} v{version}")
    key: RecordKey = from_fields(kind.key_type, fields)
    return key


def _decode_offset_commit_key_fast(data: bytes) -> OffsetCommitKey | None:
    """OffsetCommitKey v0/v1 with ``struct``; None when the bytes need the schema path
    (which names what is wrong)."""
    try:
        n = len(data)
        _, glen = _OC_KEY_HEAD.unpack_from(data)
        tpos = 4 + glen
        if glen >= 0 and tpos + 2 <= n:
            (tlen,) = _I16.unpack_from(data, tpos)
            ppos = tpos + 2 + tlen
            if tlen >= 0 and ppos + 4 == n:
                return OffsetCommitKey(
                    data[4:tpos].decode("utf-8"),
                    data[tpos + 2 : ppos].decode("utf-8"),
                    _I32.unpack_from(data, ppos)[0],
                )
    except (struct.error, UnicodeDecodeError):
        pass
    return None


def decode_value(key: RecordKey, data: bytes) -> RecordValue:
    """Decode value bytes for a known key type; raises :class:`RecordDecodeError`."""
    if len(data) < 2:
        raise RecordDecodeError(f"value of {len(data)} bytes has no version")
    (version,) = _I16.unpack_from(data)
    if version < 0:
        raise RecordDecodeError(f"negative value version {version}")
    kind = BY_KEY_TYPE.get(type(key))
    if kind is None:
        raise RecordDecodeError(f"no value schema for {key!r}")
    if kind.value_type is OffsetCommitValue:
        fast = _decode_offset_commit_value_fast(data, version)
        if fast is not None:
            return fast
    return decode_value_by_schema(key, data)


def decode_value_by_schema(key: RecordKey, data: bytes) -> RecordValue:
    """Value bytes decoded through the schema (the oracle of the fast paths)."""
    (version,) = _I16.unpack_from(data)
    kind = BY_KEY_TYPE[type(key)]
    schema = kind.value_schema
    fields = _parse(
        schema, min(version, kind.newest_value_version), data, f"{schema.name} v{version}"
    )
    value: RecordValue = from_fields(kind.value_type, fields)
    if version == 0 and type(value) is GroupMetadataValue:
        # Version quirk: v0 members have no rebalance timeout; Kafka reads the session one.
        value = GroupMetadataValue(
            value.protocol_type,
            value.generation,
            value.protocol,
            value.leader,
            value.current_state_timestamp,
            tuple(_with_rebalance_timeout(m) for m in value.members),
        )
    return value


def _with_rebalance_timeout(m: MemberMetadata) -> MemberMetadata:
    return MemberMetadata(
        m.member_id,
        m.group_instance_id,
        m.client_id,
        m.client_host,
        m.session_timeout,
        m.session_timeout,
        m.subscription,
        m.assignment,
    )


def _decode_offset_commit_value_fast(data: bytes, version: int) -> OffsetCommitValue | None:
    """v3 (and v0/v1/v2) with ``struct``; None when the bytes need the careful path."""
    n = len(data)
    try:
        if version == 3:
            _, offset, epoch, mlen = _OC_VALUE_V3.unpack_from(data)
            end = 16 + mlen
            if mlen < 0 or end + 8 != n:
                return None
            return OffsetCommitValue(
                offset, epoch, data[16:end].decode("utf-8"), _I64.unpack_from(data, end)[0], -1
            )
        if version in (0, 1, 2):
            _, offset, mlen = _OC_VALUE_V0_HEAD.unpack_from(data)
            end = 12 + mlen
            if mlen < 0:
                return None
            if version == 1:
                if end + 16 != n:
                    return None
                commit_ts, expire_ts = _OC_VALUE_V1_TAIL.unpack_from(data, end)
            else:
                if end + 8 != n:
                    return None
                (commit_ts,) = _I64.unpack_from(data, end)
                expire_ts = -1
            return OffsetCommitValue(offset, -1, data[12:end].decode("utf-8"), commit_ts, expire_ts)
    except (struct.error, UnicodeDecodeError):
        return None
    return None


def decode_record(key_data: bytes, value_data: bytes | None) -> Record | None:
    """Decode one entry's key and value. An unknown key version is skipped: a warning is
    logged (once per version) and None returned. Malformed bytes of a known version raise
    :class:`RecordDecodeError`."""
    key = decode_key(key_data)
    if type(key) is UnknownKey:
        if key.version not in _warned_key_versions:
            _warned_key_versions.add(key.version)
            log.warning("skipping records with unknown key version %d", key.version)
        return None
    assert not isinstance(key, UnknownKey)
    if value_data is None:
        return Record(key, None)
    return Record(key, decode_value(key, value_data))

"""Records <-> bytes, following Kafka's ``__consumer_offsets`` key/value schemas.

A key is ``int16 version`` + struct and the key version names the record type (0/1 offset
commit, 2 group metadata); a value is ``int16 version`` + struct; a missing value is a
tombstone. Schemas are declared with construct, one cached ``Struct`` per (record, version);
the hot shapes (OffsetCommitKey v0/v1, OffsetCommitValue v1/v3) also have a ``struct``-module
fast path that tests check byte-for-byte against the construct schemas.

kcoord's own ``RebalanceEvent`` records use key version :data:`REBALANCE_EVENT_KEY_VERSION`
(100), which Kafka does not use, and a flexible value schema of our own (value version 0).

Writers use the versions Kafka writes (OffsetCommitKey v1, GroupMetadataKey v2,
OffsetCommitValue v1 when an expire timestamp is set else v3, GroupMetadataValue v3);
readers accept every version. Value versions above the newest known one are read with the
newest flexible schema (KIP-915: later versions only add tagged fields).
"""

from __future__ import annotations

import logging
import struct
from dataclasses import dataclass
from typing import Any

from construct import Construct, ConstructError

from storage.records import (
    GroupMetadataKey,
    GroupMetadataValue,
    MemberMetadata,
    OffsetCommitKey,
    OffsetCommitValue,
    RebalanceEventKey,
    RebalanceEventValue,
    Record,
    RecordKey,
    RecordValue,
)

from .schemas import (
    group_key_schema,
    group_metadata_value_schema,
    offset_commit_key_schema,
    offset_commit_value_schema,
    rebalance_event_value_schema,
)

__all__ = [
    "EVENT_KEY_PREFIX",
    "GROUP_METADATA_KEY_VERSION",
    "OFFSET_COMMIT_KEY_VERSIONS",
    "REBALANCE_EVENT_KEY_VERSION",
    "RecordDecodeError",
    "RecordEncodeError",
    "UnknownKey",
    "decode_key",
    "decode_record",
    "decode_value",
    "encode_key",
    "encode_record",
    "encode_value",
    "value_version_for",
]

log = logging.getLogger(__name__)

OFFSET_COMMIT_KEY_VERSIONS = (0, 1)
GROUP_METADATA_KEY_VERSION = 2
#: kcoord's RebalanceEvent key version: far above Kafka's record types (0-15 in Kafka 4.x).
REBALANCE_EVENT_KEY_VERSION = 100
#: The first bytes of every RebalanceEvent key (its version): history, not state.
EVENT_KEY_PREFIX = struct.pack(">h", REBALANCE_EVENT_KEY_VERSION)

OFFSET_COMMIT_VALUE_MAX = 4
GROUP_METADATA_VALUE_MAX = 4
REBALANCE_EVENT_VALUE_MAX = 0


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
# Encoding

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
    if type(key) is OffsetCommitKey:
        version = 1 if version is None else version
        if version not in OFFSET_COMMIT_KEY_VERSIONS:
            raise RecordEncodeError(f"OffsetCommitKey has no version {version}")
        _check_int("partition", key.partition, _INT32)
        return (
            _I16.pack(version)
            + _short_string("group", key.group)
            + _short_string("topic", key.topic)
            + _I32.pack(key.partition)
        )
    if type(key) is GroupMetadataKey:
        return _I16.pack(GROUP_METADATA_KEY_VERSION) + _short_string("group", key.group)
    if type(key) is RebalanceEventKey:
        return _I16.pack(REBALANCE_EVENT_KEY_VERSION) + _short_string("group", key.group)
    raise RecordEncodeError(f"not a record key: {key!r}")


def encode_key_construct(key: RecordKey, version: int | None = None) -> bytes:
    """The construct-built twin of :func:`encode_key` (the oracle for its fast path)."""
    if type(key) is OffsetCommitKey:
        version = 1 if version is None else version
        body = offset_commit_key_schema(version).build(
            {"group": key.group, "topic": key.topic, "partition": key.partition}
        )
    elif type(key) is GroupMetadataKey:
        version = GROUP_METADATA_KEY_VERSION
        body = group_key_schema().build({"group": key.group})
    elif type(key) is RebalanceEventKey:
        version = REBALANCE_EVENT_KEY_VERSION
        body = group_key_schema().build({"group": key.group})
    else:
        raise RecordEncodeError(f"not a record key: {key!r}")
    return _I16.pack(version) + bytes(body)


def value_version_for(value: RecordValue) -> int:
    """The value version Kafka's writer picks (kcoord's own for RebalanceEvent)."""
    if type(value) is OffsetCommitValue:
        return 1 if value.expire_timestamp != -1 else 3
    if type(value) is GroupMetadataValue:
        return 3
    if type(value) is RebalanceEventValue:
        return 0
    raise RecordEncodeError(f"not a record value: {value!r}")


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
    return encode_value_construct(value, version)


def encode_value_construct(value: RecordValue, version: int) -> bytes:
    """Build a value in an explicit version with the construct schemas."""
    try:
        if type(value) is OffsetCommitValue:
            if not 0 <= version <= OFFSET_COMMIT_VALUE_MAX:
                raise RecordEncodeError(f"OffsetCommitValue has no version {version}")
            body = offset_commit_value_schema(version).build(
                {
                    "offset": value.offset,
                    "leader_epoch": value.leader_epoch,
                    "metadata": value.metadata,
                    "commit_timestamp": value.commit_timestamp,
                    "expire_timestamp": value.expire_timestamp,
                    "tagged_fields": {},
                }
            )
        elif type(value) is GroupMetadataValue:
            if not 0 <= version <= GROUP_METADATA_VALUE_MAX:
                raise RecordEncodeError(f"GroupMetadataValue has no version {version}")
            body = group_metadata_value_schema(version).build(
                {
                    "protocol_type": value.protocol_type,
                    "generation": value.generation,
                    "protocol": value.protocol,
                    "leader": value.leader,
                    "current_state_timestamp": value.current_state_timestamp,
                    "members": [_member_dict(m) for m in value.members],
                    "tagged_fields": {},
                }
            )
        elif type(value) is RebalanceEventValue:
            if version != 0:
                raise RecordEncodeError(f"RebalanceEventValue has no version {version}")
            body = rebalance_event_value_schema(version).build(
                {
                    "event": value.event,
                    "timestamp": value.timestamp,
                    "generation": value.generation,
                    "member_id": value.member_id,
                    "group_instance_id": value.group_instance_id,
                    "reason": value.reason,
                    "members": list(value.members),
                    "tagged_fields": {},
                }
            )
        else:
            raise RecordEncodeError(f"not a record value: {value!r}")
    except ConstructError as exc:
        raise RecordEncodeError(f"cannot encode {type(value).__name__} v{version}: {exc}") from exc
    except struct.error as exc:  # construct's integer fields
        raise RecordEncodeError(f"cannot encode {type(value).__name__} v{version}: {exc}") from exc
    return _I16.pack(version) + bytes(body)


def _member_dict(m: MemberMetadata) -> dict[str, Any]:
    return {
        "member_id": m.member_id,
        "group_instance_id": m.group_instance_id,
        "client_id": m.client_id,
        "client_host": m.client_host,
        "rebalance_timeout": m.rebalance_timeout,
        "session_timeout": m.session_timeout,
        "subscription": m.subscription,
        "assignment": m.assignment,
        "tagged_fields": {},
    }


_VALUE_TYPES: dict[type, type] = {
    OffsetCommitKey: OffsetCommitValue,
    GroupMetadataKey: GroupMetadataValue,
    RebalanceEventKey: RebalanceEventValue,
}


def encode_record(record: Record) -> tuple[bytes, bytes | None]:
    """Encode a record as (key bytes, value bytes or None for a tombstone)."""
    value = record.value
    if value is not None and _VALUE_TYPES.get(type(record.key)) is not type(value):
        raise RecordEncodeError(
            f"{type(value).__name__} cannot be the value of {type(record.key).__name__}"
        )
    return encode_key(record.key), encode_value(value)


# --------------------------------------------------------------------------------------
# Decoding

_KEY_CACHE: dict[bytes, RecordKey] = {}
_KEY_CACHE_LIMIT = 1 << 17
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
    if version in OFFSET_COMMIT_KEY_VERSIONS:
        key = _decode_offset_commit_key(data, version)
    elif version in (GROUP_METADATA_KEY_VERSION, REBALANCE_EVENT_KEY_VERSION):
        try:
            group = group_key_schema().parse(data[2:]).group
        except ConstructError as exc:
            raise RecordDecodeError(f"bad key v{version}: {exc}") from None
        key = GroupMetadataKey(group) if version == 2 else RebalanceEventKey(group)
    else:
        return UnknownKey(version, bytes(data))
    if len(_KEY_CACHE) >= _KEY_CACHE_LIMIT:
        _KEY_CACHE.clear()
    _KEY_CACHE[bytes(data)] = key
    return key


def _decode_offset_commit_key(data: bytes, version: int) -> OffsetCommitKey:
    # Fast path with struct; falls back to construct for a precise error message.
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
    try:
        c = offset_commit_key_schema(version).parse(data[2:])
    except ConstructError as exc:
        raise RecordDecodeError(f"bad OffsetCommitKey v{version}: {exc}") from None
    return OffsetCommitKey(c.group, c.topic, c.partition)  # pragma: no cover - fast path agrees


def decode_value(key: RecordKey, data: bytes) -> RecordValue:
    """Decode value bytes for a known key type; raises :class:`RecordDecodeError`."""
    if len(data) < 2:
        raise RecordDecodeError(f"value of {len(data)} bytes has no version")
    (version,) = _I16.unpack_from(data)
    if version < 0:
        raise RecordDecodeError(f"negative value version {version}")
    kind = type(key)
    if kind is OffsetCommitKey:
        fast = _decode_offset_commit_value_fast(data, version)
        if fast is not None:
            return fast
        return _parse_offset_commit_value(data, version)
    if kind is GroupMetadataKey:
        return _parse_group_metadata_value(data, version)
    if kind is RebalanceEventKey:
        return _parse_rebalance_event_value(data, version)
    raise RecordDecodeError(f"no value schema for {key!r}")


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


def _parse(schema: Construct, data: bytes, what: str) -> Any:
    try:
        return schema.parse(data[2:])
    except ConstructError as exc:
        raise RecordDecodeError(f"bad {what}: {exc}") from None


def _parse_offset_commit_value(data: bytes, version: int) -> OffsetCommitValue:
    schema_version = min(version, OFFSET_COMMIT_VALUE_MAX)
    c = _parse(offset_commit_value_schema(schema_version), data, f"OffsetCommitValue v{version}")
    return OffsetCommitValue(
        offset=c.offset,
        leader_epoch=c.get("leader_epoch", -1),
        metadata=c.metadata,
        commit_timestamp=c.commit_timestamp,
        expire_timestamp=c.get("expire_timestamp", -1),
    )


def _parse_group_metadata_value(data: bytes, version: int) -> GroupMetadataValue:
    schema_version = min(version, GROUP_METADATA_VALUE_MAX)
    c = _parse(group_metadata_value_schema(schema_version), data, f"GroupMetadataValue v{version}")
    members = tuple(
        MemberMetadata(
            member_id=m.member_id,
            group_instance_id=m.get("group_instance_id"),
            client_id=m.client_id,
            client_host=m.client_host,
            # v0 has no rebalance timeout: Kafka reads it as the session timeout.
            rebalance_timeout=m.get("rebalance_timeout", m.session_timeout),
            session_timeout=m.session_timeout,
            subscription=m.subscription,
            assignment=m.assignment,
        )
        for m in c.members
    )
    return GroupMetadataValue(
        protocol_type=c.protocol_type,
        generation=c.generation,
        protocol=c.protocol,
        leader=c.leader,
        current_state_timestamp=c.get("current_state_timestamp", -1),
        members=members,
    )


def _parse_rebalance_event_value(data: bytes, version: int) -> RebalanceEventValue:
    schema_version = min(version, REBALANCE_EVENT_VALUE_MAX)
    c = _parse(
        rebalance_event_value_schema(schema_version), data, f"RebalanceEventValue v{version}"
    )
    return RebalanceEventValue(
        event=c.event,
        timestamp=c.timestamp,
        generation=c.generation,
        member_id=c.member_id,
        group_instance_id=c.group_instance_id,
        reason=c.reason,
        members=tuple(c.members),
    )


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

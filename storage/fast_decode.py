"""The replay fast path: entry framing and record decoding fused in one loop.

Startup replays every entry, so this is the hot loop of a restart. It does exactly what
``segment.scan_entries`` followed by ``record_codec.decode_record`` per entry does (tests
check that on fuzzed and real logs), minus the per-entry function calls and intermediate
tuples: OffsetCommitKey bytes hit a cache, OffsetCommitValue v3 (what Kafka writes for
commits) is unpacked inline, and the frozen record dataclasses are built through their
slot descriptors. Anything unusual (other value versions, a bad entry, a decode error)
makes it stop; the caller then redoes the segment on the general path, which reports
precisely what is wrong and where.
"""

from __future__ import annotations

import dataclasses
import gc
import struct
from collections.abc import Callable
from typing import Any, Literal, overload

from storage.records import (
    OffsetCommitKey,
    OffsetCommitValue,
    RebalanceEventKey,
    Record,
    RecordKey,
)
from wire.checksum import crc32c

from .record_codec import RecordDecodeError, UnknownKey, decode_key, decode_value
from .segment import ENTRY_FORMAT_VERSION, MAX_ENTRY_LENGTH

__all__ = ["CommitTuple", "fast_decode"]

#: An offset commit as (key, offset, leader epoch, metadata, commit timestamp).
CommitTuple = tuple[RecordKey, int, int, str, int]

_HEAD = struct.Struct(">IIHi")  # length, crc, entry format, key length
_I32 = struct.Struct(">i")
# value length, value version, offset, leader epoch, metadata length, and the commit
# timestamp when the metadata is empty (the common case: one unpack for the whole value)
_OCV3 = struct.Struct(">ihqihq")
_I64 = struct.Struct(">q")
_OCV_FIELDS = ("offset", "leader_epoch", "metadata", "commit_timestamp", "expire_timestamp")


def _slot_setters(cls: type, names: tuple[str, ...]) -> tuple[Callable[[Any, Any], None], ...]:
    """The slot descriptors' setters of a frozen, slotted dataclass without
    ``__post_init__`` whose fields are exactly ``names`` (in order); () otherwise.

    ``obj = object.__new__(cls)`` then one setter per field builds the same object as
    ``cls(*values)`` at half the cost (a frozen dataclass's ``__init__`` goes through
    ``object.__setattr__`` per field)."""
    fields = tuple(f.name for f in dataclasses.fields(cls))
    if fields != names or hasattr(cls, "__post_init__") or "__slots__" not in vars(cls):
        return ()
    return tuple(getattr(cls, name).__set__ for name in names)


_RECORD_SET = _slot_setters(Record, ("key", "value"))
_OCV_SET = _slot_setters(OffsetCommitValue, _OCV_FIELDS)


@overload
def fast_decode(
    data: bytes,
    start: int,
    end: int,
    live: dict[bytes, int],
    keys: dict[bytes, RecordKey],
    *,
    verify: bool = ...,
    limit: int = ...,
    positions: list[int] | None = ...,
    commit_tuples: Literal[False] = ...,
) -> tuple[list[Record], int, int]: ...


@overload
def fast_decode(
    data: bytes,
    start: int,
    end: int,
    live: dict[bytes, int],
    keys: dict[bytes, RecordKey],
    *,
    verify: bool = ...,
    limit: int = ...,
    positions: list[int] | None = ...,
    commit_tuples: Literal[True],
) -> tuple[list[Record | CommitTuple], int, int]: ...


def fast_decode(
    data: bytes,
    start: int,
    end: int,
    live: dict[bytes, int],
    keys: dict[bytes, RecordKey],
    *,
    verify: bool = True,
    limit: int = 8192,
    positions: list[int] | None = None,
    commit_tuples: bool = False,
) -> tuple[list[Any], int, int]:
    """Decode up to ``limit`` entries of ``data[start:end]``: (records, where decoding
    stopped, bytes of RebalanceEvent entries). ``live`` maps key bytes to the size of the
    key's newest entry (tombstones remove the key) and ``keys`` caches decoded keys; both
    are updated as entries go by. ``verify=False`` skips the CRC check (for bytes that were
    checked since they were read). ``positions``, when given, gets each record's entry
    position (every record is one entry: nothing is skipped). ``commit_tuples`` gives the
    common offset commit (value v3) as a :data:`CommitTuple` instead of a Record, for
    readers that want columns, not objects (the pipeline).

    Stops early, at the first entry it does not handle, rather than raising. The cyclic
    garbage collector is paused meanwhile: the loop allocates only acyclic records, and
    letting it run every 700 of them costs a third of the time."""
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _decode(data, start, end, live, keys, verify, limit, positions, commit_tuples)
    finally:
        if gc_was_enabled:
            gc.enable()


def _decode(
    data: bytes,
    start: int,
    end: int,
    live: dict[bytes, int],
    keys: dict[bytes, RecordKey],
    verify: bool,
    limit: int,
    positions: list[int] | None,
    commit_tuples: bool,
) -> tuple[list[Record | CommitTuple], int, int]:
    records: list[Record | CommitTuple] = []
    append = records.append
    head = _HEAD.unpack_from
    i32 = _I32.unpack_from
    ocv3 = _OCV3.unpack_from
    i64 = _I64.unpack_from
    new = object.__new__
    fast_objects = bool(_RECORD_SET and _OCV_SET)
    if fast_objects:
        r_key, r_value = _RECORD_SET
        v_off, v_epoch, v_meta, v_ts, v_exp = _OCV_SET
    max_length = MAX_ENTRY_LENGTH
    entry_format = ENTRY_FORMAT_VERSION
    oc_key = OffsetCommitKey
    oc_value = OffsetCommitValue
    event_key = RebalanceEventKey
    event_bytes = 0
    pos = start
    end = min(end, len(data))
    try:
        while end - pos >= 18 and limit > 0:
            limit -= 1
            length, crc, fmt, klen = head(data, pos)
            body = pos + 8
            stop = body + length
            if length < 10 or length > max_length or stop > end:
                break
            if verify and crc32c(data[body:stop]) != crc:
                break
            kstart = pos + 14
            kend = kstart + klen
            if fmt != entry_format or klen < 0 or kend + 4 > stop:
                break
            kb = data[kstart:kend]
            key = keys.get(kb)
            if key is None:
                decoded = decode_key(kb)
                if isinstance(decoded, UnknownKey):
                    break  # the general path logs and skips it
                key = keys[kb] = decoded
            span = stop - kend  # 4 + value length (or 4 for a tombstone)
            if type(key) is oc_key and span >= 28:
                vlen, version, offset, epoch, mlen, ts = ocv3(data, kend)
                if version == 3 and vlen == span - 4 and mlen >= 0 and span == 28 + mlen:
                    if mlen:
                        meta = data[kend + 20 : kend + 20 + mlen].decode("utf-8")
                        (ts,) = i64(data, kend + 20 + mlen)
                    else:
                        meta = ""
                    if commit_tuples:
                        append((key, offset, epoch, meta, ts))
                        if positions is not None:
                            positions.append(pos)
                        live[kb] = stop - pos
                        pos = stop
                        continue
                    if fast_objects:
                        value = new(oc_value)
                        v_off(value, offset)
                        v_epoch(value, epoch)
                        v_meta(value, meta)
                        v_ts(value, ts)
                        v_exp(value, -1)
                        record = new(Record)
                        r_key(record, key)
                        r_value(record, value)
                    else:  # pragma: no cover - only if records.py changes shape
                        record = Record(key, oc_value(offset, epoch, meta, ts, -1))
                    append(record)
                    if positions is not None:
                        positions.append(pos)
                    live[kb] = stop - pos
                    pos = stop
                    continue
            (vlen,) = i32(data, kend)
            if vlen == -1:
                if span != 4:
                    break
                append(Record(key, None))
                live.pop(kb, None)
            elif vlen < 0 or span != 4 + vlen:
                break
            else:
                append(Record(key, decode_value(key, data[kend + 4 : stop])))
                if type(key) is event_key:
                    event_bytes += stop - pos
                else:
                    live[kb] = stop - pos
            if positions is not None:
                positions.append(pos)
            pos = stop
    except (RecordDecodeError, UnicodeDecodeError):
        pass
    return records, pos, event_bytes

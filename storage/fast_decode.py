"""The replay fast path: record decoding over the one walk of the entry framing.

Startup replays every entry, so this is the hot loop of a restart. It walks the entries
with ``segment.frames`` and does exactly what ``record_codec.decode_record`` per entry
does (tests check that on fuzzed and real logs), minus the per-entry function calls and
intermediate objects: OffsetCommitKey bytes hit a cache, OffsetCommitValue v3 (what Kafka
writes for commits) is unpacked inline, and the frozen record dataclasses are built
through their slot descriptors. Anything unusual (other value versions, a bad entry, a decode error)
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

from .record_codec import RecordDecodeError, UnknownKey, decode_key, decode_value
from .segment import frames

__all__ = ["CommitTuple", "fast_decode"]

#: An offset commit as (key, offset, leader epoch, metadata, commit timestamp).
CommitTuple = tuple[RecordKey, int, int, str, int]

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
    ocv3 = _OCV3.unpack_from
    i64 = _I64.unpack_from
    new = object.__new__
    fast_objects = bool(_RECORD_SET and _OCV_SET)
    if fast_objects:
        r_key, r_value = _RECORD_SET
        v_off, v_epoch, v_meta, v_ts, v_exp = _OCV_SET
    oc_key = OffsetCommitKey
    oc_value = OffsetCommitValue
    event_key = RebalanceEventKey
    event_bytes = 0
    at = start  # where decoding stops: the first entry not decoded
    try:
        for pos, kend, vlen, stop in frames(data, start, end, verify=verify):
            if limit == 0:
                break
            limit -= 1
            kb = data[pos + 14 : kend]
            key = keys.get(kb)
            if key is None:
                decoded = decode_key(kb)
                if isinstance(decoded, UnknownKey):
                    break  # the general path logs and skips it
                key = keys[kb] = decoded
            span = stop - kend  # 4 + value length (or 4 for a tombstone)
            if type(key) is oc_key and span >= 28:
                _, version, offset, epoch, mlen, ts = ocv3(data, kend)
                if version == 3 and mlen >= 0 and span == 28 + mlen:
                    if mlen:
                        meta = data[kend + 20 : kend + 20 + mlen].decode("utf-8")
                        (ts,) = i64(data, kend + 20 + mlen)
                    else:
                        meta = ""
                    if commit_tuples:
                        append((key, offset, epoch, meta, ts))
                    elif fast_objects:
                        value = new(oc_value)
                        v_off(value, offset)
                        v_epoch(value, epoch)
                        v_meta(value, meta)
                        v_ts(value, ts)
                        v_exp(value, -1)
                        record = new(Record)
                        r_key(record, key)
                        r_value(record, value)
                        append(record)
                    else:  # pragma: no cover - only if records.py changes shape
                        append(Record(key, oc_value(offset, epoch, meta, ts, -1)))
                    if positions is not None:
                        positions.append(pos)
                    live[kb] = stop - pos
                    at = stop
                    continue
            if vlen == -1:
                append(Record(key, None))
                live.pop(kb, None)
            else:
                append(Record(key, decode_value(key, data[kend + 4 : stop])))
                if type(key) is event_key:
                    event_bytes += stop - pos
                else:
                    live[kb] = stop - pos
            if positions is not None:
                positions.append(pos)
            at = stop
    except (RecordDecodeError, UnicodeDecodeError):
        pass
    return records, at, event_bytes

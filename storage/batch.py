"""Records encoded and framed as log entries, ready for one write.

OffsetCommit records (the hot path of every consumer) are framed here directly: the key
prefix of each (group, topic) is cached, and one ``struct`` call writes the partition, the
value length and the OffsetCommitValue v3 head. The bytes are those of
:func:`~storage.record_codec.encode_record` + :func:`~storage.segment.encode_entry`, which
encode every other record, and any value the fast path cannot take (an out-of-range
integer, an over-long string) goes to them for their error.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass, field

from storage.records import OffsetCommitKey, OffsetCommitValue, Record, slot_setter
from wire.bounded_cache import BoundedCache
from wire.checksum import crc32c

from .errors import RecordTooLargeError
from .key_ints import KeyInts
from .record_codec import encode_record
from .record_types import EVENT_KEY_PREFIX
from .segment import ENTRY_FORMAT_VERSION, MAX_ENTRY_LENGTH, encode_entry

__all__ = ["EncodedBatch"]

#: Entry framing up to the key (format version, key length) + OffsetCommitKey v1's version.
_KEY_HEAD = struct.Struct(">Hih")
#: The key's partition, the value length, then OffsetCommitValue v3: version, offset,
#: leader epoch, metadata length.
_PARTITION_AND_VALUE_HEAD = struct.Struct(">iihqih")
#: The same, then the empty metadata's commit timestamp: the whole rest of the entry.
_PARTITION_AND_EMPTY_VALUE = struct.Struct(">iihqihq")
_I64 = struct.Struct(">q")
_ENTRY_HEAD = struct.Struct(">II")  # length, CRC-32C
_I16 = struct.Struct(">h")
_VALUE_V3_FIXED = 2 + 8 + 4 + 2 + 8  # value bytes besides the metadata

#: (group, topic) -> the entry's bytes from its format version to the key's partition.
_KEY_PREFIXES: BoundedCache[tuple[str, str], bytes] = BoundedCache(4096)


def _key_prefix(group: str, topic: str) -> bytes | None:
    """Format version, key length, key version, group and topic of an OffsetCommitKey v1
    entry; None when a string is longer than an int16 string holds."""
    g = group.encode("utf-8")
    t = topic.encode("utf-8")
    if len(g) > 0x7FFF or len(t) > 0x7FFF:
        return None
    key_length = 2 + 2 + len(g) + 2 + len(t) + 4
    prefix = b"".join(
        (_KEY_HEAD.pack(ENTRY_FORMAT_VERSION, key_length, 1), _I16.pack(len(g)), g,
         _I16.pack(len(t)), t)
    )
    return _KEY_PREFIXES.put((group, topic), prefix)


@dataclass(frozen=True, slots=True)
class EncodedBatch:
    """Records framed as entries, ready for one write: bytes, entry count, and the
    (key bytes, entry size, is tombstone) of each entry for the compaction statistics.
    ``commits``: every entry is an OffsetCommitKey v1 entry with a value (no tombstone, no
    history, nothing kept), so the log's accounting may skip classifying each key."""

    data: bytes
    count: int
    keys: tuple[tuple[bytes, int, bool], ...] = field(default=())
    commits: bool = False

    @staticmethod
    def encode(records: Sequence[Record]) -> EncodedBatch:
        """Frame ``records``; raises RecordTooLargeError for an oversized one."""
        parts: list[bytes] = []
        keys: list[tuple[bytes, int, bool]] = []
        add_part = parts.append
        add_key = keys.append
        prefixes = _KEY_PREFIXES
        value_head = _PARTITION_AND_VALUE_HEAD.pack
        i64 = _I64.pack
        entry_head = _ENTRY_HEAD.pack
        empty_value = _PARTITION_AND_EMPTY_VALUE.pack
        group: str | None = None  # the (group, topic) of ``prefix``, the last one met
        topic: str | None = None
        prefix: bytes | None = None
        key_end = 0
        commits = True  # every record framed by the fast path so far
        for record in records:
            key = record.key
            value = record.value
            # The fast path: OffsetCommitKey v1 + OffsetCommitValue v3 (no expire timestamp).
            if (
                type(key) is OffsetCommitKey
                and type(value) is OffsetCommitValue
                and value.expire_timestamp == -1
            ):
                try:
                    if key.group != group or key.topic != topic:
                        group = key.group
                        topic = key.topic
                        prefix = prefixes.get((group, topic)) or _key_prefix(group, topic)
                        key_end = 0 if prefix is None else len(prefix) + 4
                    if prefix is not None:
                        meta = value.metadata
                        if meta:
                            encoded = meta.encode("utf-8")
                            body = b"".join((
                                prefix,
                                value_head(key.partition, _VALUE_V3_FIXED + len(encoded), 3,
                                           value.offset, value.leader_epoch, len(encoded)),
                                encoded,
                                i64(value.commit_timestamp),
                            ))
                        else:  # the usual commit: no metadata
                            body = prefix + empty_value(key.partition, _VALUE_V3_FIXED, 3,
                                                        value.offset, value.leader_epoch, 0,
                                                        value.commit_timestamp)
                        # At most three int16 strings: far below MAX_ENTRY_LENGTH.
                        add_part(entry_head(len(body), crc32c(body)))
                        add_part(body)
                        add_key((body[6:key_end], len(body) + 8, False))
                        continue
                except (struct.error, UnicodeEncodeError):
                    group = topic = None  # the general encoder below raises its error
            commits = False
            key_bytes, value_bytes = encode_record(record)
            entry = encode_entry(key_bytes, value_bytes)
            if len(entry) - 8 > MAX_ENTRY_LENGTH:
                raise RecordTooLargeError(
                    f"record for {record.key!r} is {len(entry)} bytes; "
                    f"the limit is {MAX_ENTRY_LENGTH}"
                )
            add_part(entry)
            add_key((key_bytes, len(entry), value_bytes is None))
        return _filled(b"".join(parts), len(keys), tuple(keys), commits and bool(keys))

    def account(self, live: KeyInts) -> tuple[int, int]:
        """Apply these entries to ``live`` (key bytes -> size of the key's newest entry,
        tombstones removing it): the change in live bytes and the history bytes added."""
        put = live.put
        added = events = 0
        if self.commits:  # live offset commits only: no tombstone, no history
            return len(self.data) - live.put_entries(self.keys, 0, None), 0
        for key, size, tombstone in self.keys:
            if tombstone:
                added -= live.pop(key)
            elif key[:2] == EVENT_KEY_PREFIX:
                events += size
            else:
                added += size - put(key, size)
        return added, events

    @staticmethod
    def concat(batches: Sequence[EncodedBatch]) -> EncodedBatch:
        """One batch holding ``batches`` in order (the group-commit write)."""
        if len(batches) == 1:
            return batches[0]
        return EncodedBatch(
            b"".join(b.data for b in batches),
            sum(b.count for b in batches),
            tuple(k for b in batches for k in b.keys),
            all(b.commits for b in batches),
        )


_set_data = slot_setter(EncodedBatch, "data")
_set_count = slot_setter(EncodedBatch, "count")
_set_keys = slot_setter(EncodedBatch, "keys")
_set_commits = slot_setter(EncodedBatch, "commits")


def _filled(data: bytes, count: int, keys: tuple[tuple[bytes, int, bool], ...],
            commits: bool) -> EncodedBatch:
    """``EncodedBatch(data, count, keys, commits)`` filled slot by slot, at half the cost of
    the frozen dataclass's __init__ (once per append on the commit path)."""
    batch: EncodedBatch = object.__new__(EncodedBatch)
    _set_data(batch, data)
    _set_count(batch, count)
    _set_keys(batch, keys)
    _set_commits(batch, commits)
    return batch

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
from typing import cast

from storage.records import OffsetCommitKey, OffsetCommitValue, Record, slot_setter
from wire.bounded_cache import BoundedCache
from wire.checksum import crc32c

from .errors import RecordTooLargeError
from .key_ints import KeyInts, commit_key
from .record_codec import encode_record
from .record_types import EVENT_KEY_PREFIX
from .segment import ENTRY_FORMAT_VERSION, MAX_ENTRY_LENGTH, encode_entry

__all__ = ["EncodedBatch"]

_Keys = tuple[tuple[bytes, int, bool], ...]

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

#: (group, topic) -> the entry's bytes from its format version to the key's partition, and
#: the key's own (from its version) up to the partition.
_KEY_PREFIXES: BoundedCache[tuple[str, str], tuple[bytes, bytes]] = BoundedCache(4096)


def _key_prefix(group: str, topic: str) -> tuple[bytes, bytes] | None:
    """Format version, key length, key version, group and topic of an OffsetCommitKey v1
    entry, and that from the key version on; None when a string is longer than an int16
    string holds."""
    g = group.encode("utf-8")
    t = topic.encode("utf-8")
    if len(g) > 0x7FFF or len(t) > 0x7FFF:
        return None
    key_length = 2 + 2 + len(g) + 2 + len(t) + 4
    prefix = b"".join(
        (_KEY_HEAD.pack(ENTRY_FORMAT_VERSION, key_length, 1), _I16.pack(len(g)), g,
         _I16.pack(len(t)), t)
    )
    return _KEY_PREFIXES.put((group, topic), (prefix, prefix[6:]))


@dataclass(frozen=True, slots=True)
class EncodedBatch:
    """Records framed as entries, ready for one write: bytes, entry count, and the
    (key bytes, entry size, is tombstone) of each entry for the compaction statistics.
    ``commits``: every entry is an OffsetCommitKey v1 entry with a value (no tombstone, no
    history, nothing kept); ``keys`` is then empty and ``commit_keys`` has (key prefix,
    partition, entry size) of each instead, the prefix one object per (group, topic) (as
    ``KeyInts.put_commits`` takes them: the key bytes are never built)."""

    data: bytes
    count: int
    keys: tuple[tuple[bytes, int, bool], ...] = field(default=())
    commits: bool = False
    commit_keys: tuple[tuple[bytes, int, int], ...] = field(default=())

    def entry_keys(self) -> tuple[tuple[bytes, int, bool], ...]:
        """(key bytes, entry size, is tombstone) of each entry, whatever the batch."""
        if not self.commits:
            return self.keys
        return tuple(_entry_keys(self.commit_keys))

    @staticmethod
    def encode(records: Sequence[Record]) -> EncodedBatch:
        """Frame ``records``; raises RecordTooLargeError for an oversized one."""
        parts: list[bytes] = []
        keys: list[tuple[bytes, int, int]] = []  # commit_keys' while ``commits`` holds
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
        key_prefix = b""
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
                        prefixed = prefixes.get((group, topic)) or _key_prefix(group, topic)
                        prefix, key_prefix = prefixed or (None, b"")
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
                        if commits:
                            add_key((key_prefix, key.partition, len(body) + 8))
                        else:
                            add_key((body[6:key_end], len(body) + 8, False))
                        continue
                except (struct.error, UnicodeEncodeError):
                    group = topic = None  # the general encoder below raises its error
            if commits:  # the commits so far as every entry's (key bytes, size, tombstone)
                keys[:] = _entry_keys(keys)
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
        if commits and keys:
            return _filled(b"".join(parts), len(keys), (), True, tuple(keys))
        return _filled(b"".join(parts), len(keys), cast(_Keys, tuple(keys)), False, ())

    def account(self, live: KeyInts) -> tuple[int, int]:
        """Apply these entries to ``live`` (key bytes -> size of the key's newest entry,
        tombstones removing it): the change in live bytes and the history bytes added."""
        put = live.put
        added = events = 0
        if self.commits:  # live offset commits only: no tombstone, no history
            return len(self.data) - live.put_commits(self.commit_keys, 0, None), 0
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
        data = b"".join(b.data for b in batches)
        count = sum(b.count for b in batches)
        if all(b.commits for b in batches):
            return _filled(data, count, (), True,
                           tuple(k for b in batches for k in b.commit_keys))
        return _filled(data, count, tuple(k for b in batches for k in b.entry_keys()), False,
                       ())


def _entry_keys(commit_keys: Sequence[tuple[bytes, int, int]],
                ) -> list[tuple[bytes, int, bool]]:
    """(key bytes, entry size, is tombstone) of commit entries given as (key prefix,
    partition, entry size)."""
    return [(commit_key(prefix, partition), size, False)
            for prefix, partition, size in commit_keys]


_set_data = slot_setter(EncodedBatch, "data")
_set_count = slot_setter(EncodedBatch, "count")
_set_keys = slot_setter(EncodedBatch, "keys")
_set_commits = slot_setter(EncodedBatch, "commits")
_set_commit_keys = slot_setter(EncodedBatch, "commit_keys")


def _filled(data: bytes, count: int, keys: _Keys, commits: bool,
            commit_keys: tuple[tuple[bytes, int, int], ...]) -> EncodedBatch:
    """``EncodedBatch(data, count, keys, commits, commit_keys)`` filled slot by slot, at
    half the cost of the frozen dataclass's __init__ (once per append on the commit
    path)."""
    batch: EncodedBatch = object.__new__(EncodedBatch)
    _set_data(batch, data)
    _set_count(batch, count)
    _set_keys(batch, keys)
    _set_commits(batch, commits)
    _set_commit_keys(batch, commit_keys)
    return batch

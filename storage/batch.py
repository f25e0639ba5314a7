"""Records encoded and framed as log entries, ready for one write."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from storage.records import Record

from .errors import RecordTooLargeError
from .record_codec import encode_record
from .segment import MAX_ENTRY_LENGTH, encode_entry

__all__ = ["EncodedBatch"]


@dataclass(frozen=True, slots=True)
class EncodedBatch:
    """Records framed as entries, ready for one write: bytes, entry count, and the
    (key bytes, entry size, is tombstone) of each entry for the compaction statistics."""

    data: bytes
    count: int
    keys: tuple[tuple[bytes, int, bool], ...] = field(default=())

    @staticmethod
    def encode(records: Sequence[Record]) -> EncodedBatch:
        """Frame ``records``; raises RecordTooLargeError for an oversized one."""
        parts: list[bytes] = []
        keys: list[tuple[bytes, int, bool]] = []
        for record in records:
            key, value = encode_record(record)
            entry = encode_entry(key, value)
            if len(entry) - 8 > MAX_ENTRY_LENGTH:
                raise RecordTooLargeError(
                    f"record for {record.key!r} is {len(entry)} bytes; "
                    f"the limit is {MAX_ENTRY_LENGTH}"
                )
            parts.append(entry)
            keys.append((key, len(entry), value is None))
        return EncodedBatch(b"".join(parts), len(parts), tuple(keys))

    @staticmethod
    def concat(batches: Sequence[EncodedBatch]) -> EncodedBatch:
        """One batch holding ``batches`` in order (the group-commit write)."""
        if len(batches) == 1:
            return batches[0]
        return EncodedBatch(
            b"".join(b.data for b in batches),
            sum(b.count for b in batches),
            tuple(k for b in batches for k in b.keys),
        )

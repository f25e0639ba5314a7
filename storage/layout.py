"""What a data directory holds: file names, segment bookkeeping, encoded batches."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from storage.records import Record

from .errors import RecordTooLargeError
from .record_codec import encode_record
from .segment import HEADER_SIZE, MAX_ENTRY_LENGTH, encode_entry

__all__ = [
    "EVENT_KEY_PREFIX",
    "LOCK_NAME",
    "SEGMENT_RE",
    "SWAP_RE",
    "TEMP_SUFFIXES",
    "EncodedBatch",
    "RecoveryAction",
    "Segment",
    "list_segments",
    "segment_name",
]

LOCK_NAME = ".lock"
SEGMENT_RE = re.compile(r"^(\d{20})\.log$")
SWAP_RE = re.compile(r"^(\d{20})-(\d{20})\.swap$")
#: Temporary files: a segment being created, compaction output not yet committed.
TEMP_SUFFIXES = (".log.new", ".cleaned")
EVENT_KEY_PREFIX = b"\x00\x64"  # key version 100: RebalanceEvent history


def segment_name(base: int) -> str:
    """``00000000000000000042.log``: the file of the segment whose first entry is 42."""
    return f"{base:020d}.log"


def list_segments(names: Sequence[str]) -> list[tuple[int, str]]:
    """(base, name) of the segment files among ``names``, by base."""
    found = [(int(m.group(1)), n) for n in names if (m := SEGMENT_RE.match(n))]
    return sorted(found)


@dataclass
class Segment:
    """One segment file: its first entry index, path, valid size and entry count."""

    base: int
    path: str
    size: int
    count: int
    #: bytes from the start of the file whose entries open() checked (CRC included)
    verified: int = HEADER_SIZE

    @property
    def name(self) -> str:
        return os.path.basename(self.path)


@dataclass(frozen=True, slots=True)
class RecoveryAction:
    """Something ``open`` repaired: which file, where, how many bytes, and why."""

    path: str
    offset: int
    dropped_bytes: int
    reason: str
    #: valid entries left in the file before ``offset``
    entries_kept: int = 0


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

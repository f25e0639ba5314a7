"""A partition's time index, as Kafka keeps one per segment (``TimeIndex``): an entry
(timestamp, offset) each time a batch's max timestamp rises above every earlier one, so the
entries ascend in both. The first entry with a timestamp at or above a target names the
first batch that can hold a record that late: every batch before it has a smaller max
timestamp. ListOffsets by timestamp starts there instead of at the log's start.

Kafka rewrites a batch's max timestamp to its records' largest on append (``LogValidator``),
so the batch found holds the answer. A batch whose header claims more than its records hold
(data written before validation, or a codec the broker cannot open) can send the search on
to later batches; :data:`SCAN_BUDGET_BYTES` bounds the record bytes one search decodes,
after which the search answers the next candidate batch's base offset (never past the
wanted record).

Sans I/O; the broker's ``PartitionLog`` keeps one over its batches in memory (kcoord serves
reads from memory, so one index spans the partition's segments).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable

__all__ = ["SCAN_BUDGET_BYTES", "TimeIndex"]

#: Record bytes one timestamp search may decode (Kafka's default ``message.max.bytes``):
#: one largest batch, whatever the headers say.
SCAN_BUDGET_BYTES = 1_048_588


class TimeIndex:
    """(max timestamp, base offset) of each batch that raised the partition's max timestamp."""

    __slots__ = ("offsets", "timestamps")

    def __init__(self) -> None:
        self.timestamps: list[int] = []
        self.offsets: list[int] = []

    def __len__(self) -> int:
        return len(self.timestamps)

    def append(self, max_timestamp: int, base_offset: int) -> None:
        """Note a batch appended at ``base_offset`` (only one raising the max is kept)."""
        if not self.timestamps or max_timestamp > self.timestamps[-1]:
            self.timestamps.append(max_timestamp)
            self.offsets.append(base_offset)

    def lookup(self, timestamp: int) -> int | None:
        """The base offset of the first batch whose max timestamp is at least
        ``timestamp``; None when no batch's is."""
        at = bisect_left(self.timestamps, timestamp)
        return self.offsets[at] if at < len(self.offsets) else None

    def largest(self) -> tuple[int, int] | None:
        """(timestamp, base offset) of the first batch holding the largest max timestamp."""
        if not self.timestamps:
            return None
        return self.timestamps[-1], self.offsets[-1]

    def rebuild(self, batches: Iterable[tuple[int, int]]) -> None:
        """Index ``batches`` ((max timestamp, base offset), in offset order) anew: after the
        oldest batches left (DeleteRecords, retention)."""
        self.timestamps.clear()
        self.offsets.clear()
        for max_timestamp, base_offset in batches:
            self.append(max_timestamp, base_offset)

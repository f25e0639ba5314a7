"""The vocabulary of a share partition (KIP-932): record states, acknowledge types, what an
acquisition hands out, the errors, and the broker settings that bound a share partition."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import NamedTuple

from wire.constants import ErrorCode

__all__ = [
    "AcknowledgeType",
    "AcknowledgementBatch",
    "AcquiredRecords",
    "RecordState",
    "ShareError",
    "SharePartitionConfig",
]


class RecordState(IntEnum):
    """A record's delivery state, with Kafka's ids (those the state batches persist)."""

    AVAILABLE = 0
    ACQUIRED = 1
    ACKNOWLEDGED = 2
    ARCHIVED = 4

    @property
    def is_terminal(self) -> bool:
        """Acknowledged and archived records are never delivered again."""
        return self in (RecordState.ACKNOWLEDGED, RecordState.ARCHIVED)


class AcknowledgeType(IntEnum):
    """ShareFetch/ShareAcknowledge acknowledge types (RENEW is Kafka 4.2's, KIP-1222); GAP
    marks offsets the client saw no record at (archived)."""

    GAP = 0
    ACCEPT = 1
    RELEASE = 2
    REJECT = 3
    RENEW = 4


class AcquiredRecords(NamedTuple):
    """Records handed to a member: ``first_offset..last_offset`` delivered ``delivery_count``
    times (this delivery included), as ShareFetch's AcquiredRecords."""

    first_offset: int
    last_offset: int
    delivery_count: int


@dataclass(frozen=True, slots=True)
class AcknowledgementBatch:
    """One acknowledgement batch: one type for the whole range, or one per offset."""

    first_offset: int
    last_offset: int
    acknowledge_types: tuple[int, ...]


class ShareError(Exception):
    """A request the share partition refuses, with Kafka's error code and message; nothing
    changed."""

    def __init__(self, error_code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.error_code = error_code
        self.message = message


@dataclass(frozen=True, slots=True)
class SharePartitionConfig:
    """The ``group.share.*`` settings one share partition obeys (Kafka's defaults).

    ``delivery_count_limit``: a record released or timed out at this delivery count is
    archived (a limit of 2 delivers a record at most twice). ``max_record_locks``
    (``group.share.partition.max.record.locks``) bounds the in-flight records.
    ``updates_per_snapshot`` is ``share.coordinator.snapshot.update.records.per.snapshot``.
    """

    delivery_count_limit: int = 5
    record_lock_duration_ms: int = 30_000
    max_record_locks: int = 2000
    updates_per_snapshot: int = 500

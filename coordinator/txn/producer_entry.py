"""What a partition remembers of one producer id (Kafka's ``ProducerStateEntry``): its
epoch, the coordinator epoch of its last marker, its open transaction's first offset and
its last ``NUM_BATCHES_TO_RETAIN`` batches (``BatchMetadata``); what it reads of an
appended batch (``BatchInfo``); and sequence arithmetic, which wraps at Integer.MAX_VALUE.
The checks an append goes through are ``producer_state.py``.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from wire.constants import NO_PRODUCER_EPOCH

__all__ = [
    "NO_SEQUENCE",
    "NUM_BATCHES_TO_RETAIN",
    "BatchInfo",
    "BatchMetadata",
    "ControlType",
    "ProducerStateEntry",
    "decrement_sequence",
    "in_sequence",
    "increment_sequence",
]

NO_SEQUENCE = -1
NUM_BATCHES_TO_RETAIN = 5
_INT_MAX = 2**31 - 1


def increment_sequence(sequence: int, increment: int) -> int:
    """``sequence + increment`` wrapping past Integer.MAX_VALUE to 0."""
    if sequence > _INT_MAX - increment:
        return increment - (_INT_MAX - sequence) - 1
    return sequence + increment


def decrement_sequence(sequence: int, decrement: int) -> int:
    """``sequence - decrement`` wrapping below 0 to Integer.MAX_VALUE."""
    if sequence < decrement:
        return _INT_MAX - (decrement - sequence) + 1
    return sequence - decrement


class ControlType(IntEnum):
    """The control record type of a transaction marker (``ControlRecordType``)."""

    ABORT = 0
    COMMIT = 1


@dataclass(frozen=True, slots=True)
class BatchInfo:
    """What producer state reads of a v2 record batch: its header fields, and for a control
    batch the marker's type and coordinator epoch (``control`` None: a data batch)."""

    producer_id: int
    producer_epoch: int
    base_sequence: int
    last_offset_delta: int
    max_timestamp: int
    is_transactional: bool = False
    control: ControlType | None = None
    coordinator_epoch: int = 0

    @property
    def last_sequence(self) -> int:
        """Sequence of the batch's last record (NO_SEQUENCE without sequences)."""
        if self.base_sequence == NO_SEQUENCE:
            return NO_SEQUENCE
        return increment_sequence(self.base_sequence, self.last_offset_delta)


@dataclass(frozen=True, slots=True)
class BatchMetadata:
    """A retained batch: last sequence and offset, the offset span and max timestamp."""

    last_seq: int
    last_offset: int
    offset_delta: int
    timestamp: int

    @property
    def first_seq(self) -> int:
        return decrement_sequence(self.last_seq, self.offset_delta)

    @property
    def first_offset(self) -> int:
        return self.last_offset - self.offset_delta


class ProducerStateEntry:
    """What the partition remembers of one producer id."""

    __slots__ = (
        "batches",
        "coordinator_epoch",
        "current_txn_first_offset",
        "last_timestamp",
        "producer_epoch",
        "producer_id",
    )

    def __init__(
        self,
        producer_id: int,
        producer_epoch: int = NO_PRODUCER_EPOCH,
        coordinator_epoch: int = -1,
        last_timestamp: int = -1,
        current_txn_first_offset: int | None = None,
        batches: tuple[BatchMetadata, ...] = (),
    ) -> None:
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.coordinator_epoch = coordinator_epoch
        self.last_timestamp = last_timestamp
        self.current_txn_first_offset = current_txn_first_offset
        self.batches: deque[BatchMetadata] = deque(batches, maxlen=NUM_BATCHES_TO_RETAIN)

    def __repr__(self) -> str:
        return (
            f"ProducerStateEntry(pid={self.producer_id}, epoch={self.producer_epoch}, "
            f"coordinator_epoch={self.coordinator_epoch}, txn={self.current_txn_first_offset}, "
            f"batches={list(self.batches)})"
        )

    @property
    def is_empty(self) -> bool:
        return not self.batches

    @property
    def first_seq(self) -> int:
        return self.batches[0].first_seq if self.batches else NO_SEQUENCE

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else NO_SEQUENCE

    @property
    def first_data_offset(self) -> int:
        return self.batches[0].first_offset if self.batches else -1

    @property
    def last_data_offset(self) -> int:
        return self.batches[-1].last_offset if self.batches else -1

    def copy_without_batches(self) -> ProducerStateEntry:
        """The entry an append builds on: same producer fields, no batches yet."""
        return ProducerStateEntry(
            self.producer_id,
            self.producer_epoch,
            self.coordinator_epoch,
            self.last_timestamp,
            self.current_txn_first_offset,
        )

    def maybe_update_producer_epoch(self, producer_epoch: int) -> bool:
        """A new epoch forgets the retained batches."""
        if self.producer_epoch == producer_epoch:
            return False
        self.batches.clear()
        self.producer_epoch = producer_epoch
        return True

    def add_batch(
        self, producer_epoch: int, last_seq: int, last_offset: int, offset_delta: int, ts: int
    ) -> None:
        self.maybe_update_producer_epoch(producer_epoch)
        self.batches.append(BatchMetadata(last_seq, last_offset, offset_delta, ts))
        self.last_timestamp = ts

    def update_from(self, other: ProducerStateEntry) -> None:
        """Fold an append's entry into this one (its batches are the newer ones)."""
        self.maybe_update_producer_epoch(other.producer_epoch)
        self.batches.extend(other.batches)
        self.coordinator_epoch = other.coordinator_epoch
        self.current_txn_first_offset = other.current_txn_first_offset
        self.last_timestamp = other.last_timestamp

    def end_transaction(self, producer_epoch: int, coordinator_epoch: int, ts: int) -> None:
        """A marker: take its epochs, close the open transaction."""
        self.maybe_update_producer_epoch(producer_epoch)
        self.coordinator_epoch = coordinator_epoch
        self.current_txn_first_offset = None
        self.last_timestamp = ts

    def find_duplicate_batch(self, batch: BatchInfo) -> BatchMetadata | None:
        """The retained batch with the same epoch and sequence range, if any."""
        if batch.producer_epoch != self.producer_epoch:
            return None
        return self.batch_with_sequence_range(batch.base_sequence, batch.last_sequence)

    def batch_with_sequence_range(self, first_seq: int, last_seq: int) -> BatchMetadata | None:
        for metadata in self.batches:
            if metadata.first_seq == first_seq and metadata.last_seq == last_seq:
                return metadata
        return None

    def to_data(self) -> dict[str, Any]:
        """Plain data (JSON-able) for a snapshot."""
        return {
            "producer_id": self.producer_id,
            "producer_epoch": self.producer_epoch,
            "coordinator_epoch": self.coordinator_epoch,
            "last_timestamp": self.last_timestamp,
            "current_txn_first_offset": self.current_txn_first_offset,
            "batches": [
                [b.last_seq, b.last_offset, b.offset_delta, b.timestamp] for b in self.batches
            ],
        }

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> ProducerStateEntry:
        """The inverse of :meth:`to_data`."""
        return cls(
            data["producer_id"],
            data["producer_epoch"],
            data["coordinator_epoch"],
            data["last_timestamp"],
            data["current_txn_first_offset"],
            tuple(BatchMetadata(*b) for b in data["batches"]),
        )


def in_sequence(last_seq: int, next_seq: int) -> bool:
    """Whether ``next_seq`` follows ``last_seq`` (wrapping past Integer.MAX_VALUE to 0)."""
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == _INT_MAX)

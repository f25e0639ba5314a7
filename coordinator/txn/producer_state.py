"""A partition's producer state: idempotence and open transactions (Kafka's
``ProducerStateManager``, ``ProducerAppendInfo``; the entry kept per producer id,
``ProducerStateEntry``, is ``producer_entry.py``).

For each producer id the partition remembers its epoch, the coordinator epoch of its last
marker, the first offset of its open transaction and its last five batches (sequence
range and offsets). An append is checked against that before the log writes it:

- a batch whose sequence range equals a retained one is a *duplicate*: the log answers
  with the original batch's offsets and writes nothing (the client sees NONE, not
  DUPLICATE_SEQUENCE_NUMBER, in every Kafka since 1.0);
- an epoch below the producer's is INVALID_PRODUCER_EPOCH;
- from a client, a new epoch must start at sequence 0 and the same epoch must continue
  the last sequence (with wrap-around at Integer.MAX_VALUE), else
  OUT_OF_ORDER_SEQUENCE_NUMBER; a producer with no state yet may start anywhere (since
  KIP-360, Kafka 2.5, Produce never answers UNKNOWN_PRODUCER_ID);
- a non-transactional batch while the producer's transaction is open is INVALID_TXN_STATE;
- a marker with an older coordinator epoch is TRANSACTION_COORDINATOR_FENCED.

Followed: ``storage/src/main/java/org/apache/kafka/storage/internals/log/`` (Kafka 4.0-dev).
Not modelled: snapshot *files* (state is exported as plain data instead), the KIP-890
verification-state entries and the "late transaction" metric.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from coordinator.txn.producer_entry import (
    NO_SEQUENCE,
    BatchInfo,
    ControlType,
    ProducerStateEntry,
    in_sequence,
)
from wire.constants import NO_PRODUCER_EPOCH, ErrorCode

__all__ = [
    "AppendOrigin",
    "CompletedTxn",
    "ProducerAppendInfo",
    "ProducerStateError",
    "ProducerStateManager",
    "TxnMetadata",
]

class AppendOrigin(Enum):
    """Who appends: a client (full checks), a coordinator (offset commits: no sequences)
    or replication/recovery (trusted, only recorded)."""

    CLIENT = "client"
    COORDINATOR = "coordinator"
    REPLICATION = "replication"


@dataclass(frozen=True, slots=True)
class CompletedTxn:
    """A transaction ended by a marker at ``last_offset`` (the marker's offset)."""

    producer_id: int
    first_offset: int
    last_offset: int
    is_aborted: bool


@dataclass(slots=True)
class TxnMetadata:
    """An open (or completed but not yet replicated) transaction on this partition."""

    producer_id: int
    first_offset: int
    last_offset: int | None = None


class ProducerStateError(Exception):
    """An append refused because of producer state; ``code`` is what Produce answers."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code


class ProducerAppendInfo:
    """The effect of appending batches of one producer, checked but not yet applied."""

    __slots__ = ("_current", "_origin", "_partition", "producer_id", "started", "updated")

    def __init__(
        self, partition: str, producer_id: int, current: ProducerStateEntry, origin: AppendOrigin
    ) -> None:
        self._partition = partition
        self.producer_id = producer_id
        self._current = current
        self._origin = origin
        self.updated = current.copy_without_batches()
        self.started: list[TxnMetadata] = []

    def append(self, batch: BatchInfo, first_offset: int) -> CompletedTxn | None:
        """Check and record one batch starting at ``first_offset``; ProducerStateError when
        refused. A marker that ends an open transaction returns it."""
        last_offset = first_offset + batch.last_offset_delta
        if batch.control is not None:
            return self.append_end_txn_marker(
                batch.control,
                batch.coordinator_epoch,
                batch.producer_epoch,
                first_offset,
                batch.max_timestamp,
            )
        self.append_data_batch(
            batch.producer_epoch,
            batch.base_sequence,
            batch.last_sequence,
            batch.max_timestamp,
            first_offset,
            last_offset,
            batch.is_transactional,
        )
        return None

    def append_data_batch(
        self,
        epoch: int,
        first_seq: int,
        last_seq: int,
        timestamp: int,
        first_offset: int,
        last_offset: int,
        is_transactional: bool,
    ) -> None:
        self._check_producer_epoch(epoch, first_offset)
        if self._origin == AppendOrigin.CLIENT:
            self._check_sequence(epoch, first_seq, first_offset)
        entry = self.updated
        entry.add_batch(epoch, last_seq, last_offset, last_offset - first_offset, timestamp)
        if entry.current_txn_first_offset is not None and not is_transactional:
            raise ProducerStateError(
                ErrorCode.INVALID_TXN_STATE,
                f"expected a transactional write from producer {self.producer_id} at offset "
                f"{first_offset} in {self._partition}",
            )
        if entry.current_txn_first_offset is None and is_transactional:
            entry.current_txn_first_offset = first_offset
            self.started.append(TxnMetadata(self.producer_id, first_offset))

    def append_end_txn_marker(
        self,
        control: ControlType,
        coordinator_epoch: int,
        producer_epoch: int,
        offset: int,
        timestamp: int,
    ) -> CompletedTxn | None:
        self._check_producer_epoch(producer_epoch, offset)
        entry = self.updated
        if entry.coordinator_epoch > coordinator_epoch and self._origin != AppendOrigin.REPLICATION:
            raise ProducerStateError(
                ErrorCode.TRANSACTION_COORDINATOR_FENCED,
                f"coordinator epoch {coordinator_epoch} of producer {self.producer_id}'s marker "
                f"at {offset} in {self._partition} is older than {entry.coordinator_epoch}",
            )
        # A marker without data on this partition changes neither the LSO nor the index.
        completed = None
        if entry.current_txn_first_offset is not None:
            completed = CompletedTxn(
                self.producer_id,
                entry.current_txn_first_offset,
                offset,
                control == ControlType.ABORT,
            )
        entry.end_transaction(producer_epoch, coordinator_epoch, timestamp)
        return completed

    def _check_producer_epoch(self, epoch: int, offset: int) -> None:
        if epoch < self.updated.producer_epoch and self._origin != AppendOrigin.REPLICATION:
            raise ProducerStateError(
                ErrorCode.INVALID_PRODUCER_EPOCH,
                f"epoch of producer {self.producer_id} at offset {offset} in {self._partition} "
                f"is {epoch}, smaller than the last seen epoch {self.updated.producer_epoch}",
            )

    def _check_sequence(self, epoch: int, first_seq: int, offset: int) -> None:
        updated, current = self.updated, self._current
        if epoch != updated.producer_epoch:
            if first_seq != 0 and updated.producer_epoch != NO_PRODUCER_EPOCH:
                raise ProducerStateError(
                    ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                    f"invalid sequence number for new epoch {epoch} of producer "
                    f"{self.producer_id} at offset {offset} in {self._partition}: {first_seq} "
                    f"(current epoch {updated.producer_epoch})",
                )
            return
        if not updated.is_empty:
            last_seq = updated.last_seq
        elif epoch == current.producer_epoch:
            last_seq = current.last_seq
        else:
            last_seq = NO_SEQUENCE
        # No epoch known (all its batches deleted by retention or DeleteRecords): any
        # sequence is accepted.
        if current.producer_epoch != NO_PRODUCER_EPOCH and not in_sequence(last_seq, first_seq):
            raise ProducerStateError(
                ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                f"out of order sequence number for producer {self.producer_id} at offset "
                f"{offset} in {self._partition}: {first_seq} (incoming), {last_seq} (current end)",
            )


class ProducerStateManager:
    """Every producer's entry, and the open transactions by first offset."""

    __slots__ = (
        "_ongoing",
        "_unreplicated",
        "expiration_ms",
        "map_end_offset",
        "partition",
        "producers",
    )

    def __init__(self, partition: str = "", producer_id_expiration_ms: int = 86_400_000) -> None:
        self.partition = partition
        self.expiration_ms = producer_id_expiration_ms
        self.producers: dict[int, ProducerStateEntry] = {}
        self._ongoing: dict[int, TxnMetadata] = {}
        self._unreplicated: dict[int, TxnMetadata] = {}
        self.map_end_offset = 0

    def last_entry(self, producer_id: int) -> ProducerStateEntry | None:
        return self.producers.get(producer_id)

    def prepare_update(self, producer_id: int, origin: AppendOrigin) -> ProducerAppendInfo:
        """Start checking an append of ``producer_id`` (nothing changes until :meth:`update`)."""
        current = self.producers.get(producer_id) or ProducerStateEntry(producer_id)
        return ProducerAppendInfo(self.partition, producer_id, current, origin)

    def update(self, info: ProducerAppendInfo) -> None:
        """Apply a checked append."""
        if info.producer_id < 0:
            raise ValueError(f"invalid producer id {info.producer_id}")
        current = self.producers.get(info.producer_id)
        if current is None:
            self.producers[info.producer_id] = info.updated
        else:
            current.update_from(info.updated)
        for txn in info.started:
            self._ongoing[txn.first_offset] = txn

    def complete_txn(self, completed: CompletedTxn) -> None:
        """The transaction's marker is in the log; it stays unstable until replicated."""
        txn = self._ongoing.pop(completed.first_offset, None)
        if txn is None:
            raise ValueError(f"completing {completed}, which was never started")
        txn.last_offset = completed.last_offset
        self._unreplicated[completed.first_offset] = txn

    def last_stable_offset(self, completed: CompletedTxn) -> int:
        """The LSO once ``completed`` ends: the first offset of the earliest other open
        transaction, else just past the marker (what the aborted index records)."""
        for first in sorted(self._ongoing):
            if self._ongoing[first].producer_id != completed.producer_id:
                return first
        return completed.last_offset + 1

    def first_unstable_offset(self) -> int | None:
        """The first offset of an open or unreplicated transaction, if any."""
        firsts = [*self._ongoing, *self._unreplicated]
        return min(firsts) if firsts else None

    def first_undecided_offset(self) -> int | None:
        """The first offset of a transaction without a marker, if any."""
        return min(self._ongoing) if self._ongoing else None

    def has_ongoing_transaction(self, producer_id: int) -> bool:
        entry = self.producers.get(producer_id)
        return entry is not None and entry.current_txn_first_offset is not None

    def ongoing_transactions(self) -> list[TxnMetadata]:
        """Open transactions in first-offset order."""
        return [self._ongoing[first] for first in sorted(self._ongoing)]

    def on_high_watermark_updated(self, high_watermark: int) -> None:
        self._remove_unreplicated(high_watermark)

    def on_log_start_offset_incremented(self, log_start_offset: int) -> None:
        self._remove_unreplicated(log_start_offset)
        self.map_end_offset = max(self.map_end_offset, log_start_offset)

    def _remove_unreplicated(self, offset: int) -> None:
        for first, txn in list(self._unreplicated.items()):
            if txn.last_offset is not None and txn.last_offset < offset:
                del self._unreplicated[first]

    def remove_expired_producers(self, now_ms: int) -> list[int]:
        """Forget producers idle for producer.id.expiration.ms with no open transaction."""
        expired = [pid for pid, entry in self.producers.items() if self._is_expired(entry, now_ms)]
        for pid in expired:
            del self.producers[pid]
        return expired

    def _is_expired(self, entry: ProducerStateEntry, now_ms: int) -> bool:
        # A producer with an open transaction is kept: its transaction must still end.
        return (
            entry.current_txn_first_offset is None
            and now_ms - entry.last_timestamp >= self.expiration_ms
        )

    def truncate_fully_and_start_at(self, offset: int) -> None:
        """Forget everything (the log was emptied and restarts at ``offset``)."""
        self.producers.clear()
        self._ongoing.clear()
        self._unreplicated.clear()
        self.map_end_offset = offset

    def to_data(self) -> dict[str, Any]:
        """Plain data (JSON-able): every entry with all retained batches (an entry's open
        transaction is its ``current_txn_first_offset``), the unreplicated transactions and
        the offset the state is valid up to."""
        return {
            "map_end_offset": self.map_end_offset,
            "producers": [self.producers[pid].to_data() for pid in sorted(self.producers)],
            "unreplicated": [
                [t.producer_id, t.first_offset, t.last_offset]
                for _, t in sorted(self._unreplicated.items())
            ],
        }

    def load_data(self, data: dict[str, Any], now_ms: int | None = None) -> None:
        """Replace the state with :meth:`to_data`'s output; with ``now_ms``, producers that
        expired meanwhile are left out (as Kafka does loading a snapshot)."""
        self.truncate_fully_and_start_at(data["map_end_offset"])
        for entry_data in data["producers"]:
            entry = ProducerStateEntry.from_data(entry_data)
            if now_ms is not None and self._is_expired(entry, now_ms):
                continue
            self.producers[entry.producer_id] = entry
            if entry.current_txn_first_offset is not None:
                first = entry.current_txn_first_offset
                self._ongoing[first] = TxnMetadata(entry.producer_id, first)
        for pid, first, last in data["unreplicated"]:
            self._unreplicated[first] = TxnMetadata(pid, first, last)

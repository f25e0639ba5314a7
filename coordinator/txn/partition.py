"""The transactional side of one partition's log: producer state, the last stable offset
and the aborted-transaction index (the parts of Kafka's ``UnifiedLog``, ``LocalLog`` and
``TransactionIndex`` that decide Produce and read_committed Fetch).

The log owns the bytes; this owns what the bytes mean for transactions. An append is two
steps, so that nothing changes unless the bytes are written:

1. :meth:`PartitionTransactions.check_append` at the log end: a duplicate (answer with its
   offsets, write nothing), a refusal (ProducerStateError: answer its code), or a go;
2. the log writes the batch at :attr:`PartitionTransactions.log_end_offset`, then
   :meth:`PartitionTransactions.apply_append` records it: producer entry, open
   transactions, an aborted transaction's index entry, the first unstable offset.

The last stable offset (LSO) is the first offset not yet decided: the first offset of the
earliest open transaction, else the high watermark, and never beyond the high watermark.
read_committed Fetch returns data below the LSO only, with the aborted transactions
overlapping what it returns; ListOffsets "latest" answers the LSO.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from coordinator.txn.producer_entry import BatchInfo, BatchMetadata
from coordinator.txn.producer_state import (
    AppendOrigin,
    CompletedTxn,
    ProducerAppendInfo,
    ProducerStateError,
    ProducerStateManager,
)
from wire.constants import ErrorCode

__all__ = ["AbortedTxn", "AppendCheck", "PartitionTransactions", "TransactionIndex"]


@dataclass(frozen=True, slots=True)
class AbortedTxn:
    """An aborted transaction: its data spans [first_offset, last_offset] (the marker), and
    ``last_stable_offset`` is the LSO right after its marker (Kafka's ``AbortedTxn``)."""

    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int


class TransactionIndex:
    """Aborted transactions in marker order (one Kafka ``.txnindex`` per segment, merged)."""

    __slots__ = ("_entries",)

    def __init__(self, entries: tuple[AbortedTxn, ...] = ()) -> None:
        self._entries: list[AbortedTxn] = []
        for entry in entries:
            self.append(entry)

    def __len__(self) -> int:
        return len(self._entries)

    def all(self) -> list[AbortedTxn]:
        return list(self._entries)

    def append(self, txn: AbortedTxn) -> None:
        """Add an entry; markers come in offset order."""
        if self._entries and self._entries[-1].last_offset >= txn.last_offset:
            raise ValueError(
                f"aborted transaction ending at {txn.last_offset} does not follow the one "
                f"ending at {self._entries[-1].last_offset}"
            )
        self._entries.append(txn)

    def collect(self, fetch_offset: int, upper_bound: int) -> list[AbortedTxn]:
        """Aborted transactions overlapping [fetch_offset, upper_bound): what a read_committed
        Fetch returning data up to ``upper_bound`` must list."""
        found = []
        for txn in self._entries:
            if txn.last_offset >= fetch_offset and txn.first_offset < upper_bound:
                found.append(txn)
            # Every later transaction starts at or after this LSO: none can overlap.
            if txn.last_stable_offset >= upper_bound:
                break
        return found

    def truncate_to(self, offset: int) -> None:
        """Forget entries whose marker is at or after ``offset``."""
        self._entries = [t for t in self._entries if t.last_offset < offset]

    def drop_before(self, log_start_offset: int) -> None:
        """Forget entries whose marker was deleted with the log's head."""
        self._entries = [t for t in self._entries if t.last_offset >= log_start_offset]


@dataclass(frozen=True, slots=True)
class AppendCheck:
    """The outcome of :meth:`PartitionTransactions.check_append`."""

    batch: BatchInfo
    first_offset: int
    duplicate: BatchMetadata | None
    info: ProducerAppendInfo | None
    completed: CompletedTxn | None

    @property
    def last_offset(self) -> int:
        return self.first_offset + self.batch.last_offset_delta


class PartitionTransactions:
    """Producer state, LSO and aborted index of one partition."""

    __slots__ = ("aborted", "high_watermark", "log_end_offset", "log_start_offset", "producers")

    def __init__(
        self,
        partition: str = "",
        log_start_offset: int = 0,
        producer_id_expiration_ms: int = 86_400_000,
    ) -> None:
        self.producers = ProducerStateManager(partition, producer_id_expiration_ms)
        self.aborted = TransactionIndex()
        self.log_start_offset = log_start_offset
        self.log_end_offset = log_start_offset
        self.high_watermark = log_start_offset
        self.producers.map_end_offset = log_start_offset

    # ------------------------------------------------------------------ offsets

    @property
    def first_unstable_offset(self) -> int | None:
        """The first offset of an undecided (or unreplicated) transaction, never below the
        log start offset."""
        first = self.producers.first_unstable_offset()
        return None if first is None else max(first, self.log_start_offset)

    @property
    def last_stable_offset(self) -> int:
        """Where read_committed reads stop."""
        first = self.first_unstable_offset
        if first is not None and first < self.high_watermark:
            return first
        return self.high_watermark

    def fetch_limit(self, read_committed: bool) -> int:
        """The exclusive offset a Fetch may read up to."""
        return self.last_stable_offset if read_committed else self.high_watermark

    def aborted_transactions(self, fetch_offset: int, upper_bound: int) -> list[AbortedTxn]:
        """Aborted transactions a read_committed Fetch from ``fetch_offset`` lists when the
        data it returns ends before ``upper_bound`` (the offset following its last batch)."""
        return self.aborted.collect(fetch_offset, upper_bound)

    def update_high_watermark(self, high_watermark: int) -> None:
        """Replication reached ``high_watermark`` (with one replica: the log end offset)."""
        self.high_watermark = max(self.log_start_offset, min(high_watermark, self.log_end_offset))
        self.producers.on_high_watermark_updated(self.high_watermark)

    def increment_log_start_offset(self, new_log_start_offset: int) -> bool:
        """Retention or DeleteRecords moved the log start; False when it did not move.
        OFFSET_OUT_OF_RANGE (ProducerStateError) past the high watermark, as in Kafka."""
        if new_log_start_offset > self.high_watermark:
            raise ProducerStateError(
                ErrorCode.OFFSET_OUT_OF_RANGE,
                f"cannot move the log start offset to {new_log_start_offset}, beyond the high "
                f"watermark {self.high_watermark}",
            )
        if new_log_start_offset <= self.log_start_offset:
            return False
        self.log_start_offset = new_log_start_offset
        self.producers.on_log_start_offset_incremented(new_log_start_offset)
        self.aborted.drop_before(new_log_start_offset)
        return True

    # ------------------------------------------------------------------ appends

    def has_ongoing_transaction(self, producer_id: int) -> bool:
        """The producer has transactional data on this partition without a marker yet."""
        return self.producers.has_ongoing_transaction(producer_id)

    def check_append(
        self, batch: BatchInfo, origin: AppendOrigin, verified: bool = True
    ) -> AppendCheck:
        """Check a batch to be appended at the log end (ProducerStateError when refused).

        ``verified`` False means transaction verification (KIP-890,
        ``transaction.partition.verification.enable``) did not confirm that the partition is
        in the producer's transaction: a transactional batch that would open a transaction
        here is then INVALID_TXN_STATE.
        """
        first_offset = self.log_end_offset
        if batch.producer_id < 0:
            return AppendCheck(batch, first_offset, None, None, None)
        if origin == AppendOrigin.CLIENT:
            entry = self.producers.last_entry(batch.producer_id)
            duplicate = None if entry is None else entry.find_duplicate_batch(batch)
            if duplicate is not None:
                return AppendCheck(batch, first_offset, duplicate, None, None)
        if (
            origin != AppendOrigin.REPLICATION
            and batch.is_transactional
            and batch.control is None
            and not verified
            and not self.has_ongoing_transaction(batch.producer_id)
        ):
            raise ProducerStateError(
                ErrorCode.INVALID_TXN_STATE, "record was not part of an ongoing transaction"
            )
        info = self.producers.prepare_update(batch.producer_id, origin)
        completed = info.append(batch, first_offset)
        return AppendCheck(batch, first_offset, None, info, completed)

    def apply_append(self, check: AppendCheck) -> CompletedTxn | None:
        """Record a checked batch the log has just written at ``check.first_offset``."""
        if check.duplicate is not None:
            raise ValueError("a duplicate batch is not appended")
        if check.first_offset != self.log_end_offset:
            raise ValueError(
                f"batch checked at {check.first_offset}, log end is now {self.log_end_offset}"
            )
        self.log_end_offset = check.last_offset + 1
        if check.info is not None:
            self.producers.update(check.info)
        completed = check.completed
        if completed is not None:
            if completed.is_aborted:
                lso = self.producers.last_stable_offset(completed)
                self.aborted.append(
                    AbortedTxn(
                        completed.producer_id, completed.first_offset, completed.last_offset, lso
                    )
                )
            self.producers.complete_txn(completed)
        self.producers.map_end_offset = self.log_end_offset
        return completed

    def append(
        self, batch: BatchInfo, origin: AppendOrigin = AppendOrigin.CLIENT, verified: bool = True
    ) -> AppendCheck:
        """Check and apply in one go, as a one-replica log does (the high watermark follows
        the log end). Returns the check: ``duplicate`` set means nothing was appended."""
        check = self.check_append(batch, origin, verified)
        if check.duplicate is None:
            self.apply_append(check)
            self.update_high_watermark(self.log_end_offset)
        return check

    def remove_expired_producers(self, now_ms: int) -> list[int]:
        """Forget producers idle past producer.id.expiration.ms (no open transaction)."""
        return self.producers.remove_expired_producers(now_ms)

    # ------------------------------------------------------------------ snapshots

    def to_data(self) -> dict[str, Any]:
        """The whole state as plain data (JSON-able)."""
        return {
            "log_start_offset": self.log_start_offset,
            "log_end_offset": self.log_end_offset,
            "high_watermark": self.high_watermark,
            "producer_state": self.producers.to_data(),
            "aborted": [
                [t.producer_id, t.first_offset, t.last_offset, t.last_stable_offset]
                for t in self.aborted.all()
            ],
        }

    @classmethod
    def from_data(
        cls,
        data: dict[str, Any],
        partition: str = "",
        producer_id_expiration_ms: int = 86_400_000,
        now_ms: int | None = None,
    ) -> PartitionTransactions:
        """Rebuild from :meth:`to_data`'s output (``now_ms``: drop expired producers)."""
        state = cls(partition, data["log_start_offset"], producer_id_expiration_ms)
        state.log_end_offset = data["log_end_offset"]
        state.high_watermark = data["high_watermark"]
        state.producers.load_data(data["producer_state"], now_ms)
        state.aborted = TransactionIndex(tuple(AbortedTxn(*t) for t in data["aborted"]))
        return state

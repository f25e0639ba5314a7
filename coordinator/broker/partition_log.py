"""One partition's log in memory: its batches (base offsets assigned), offsets, and the
transactional state of ``coordinator.txn.partition.PartitionTransactions`` (producer state,
last stable offset, aborted-transaction index). The topic store persists a batch
(``persist``) before the partition takes it; a persisted batch's bytes are then read back
from its segment file when asked for (``coordinator.broker.stored_batch``)."""

from __future__ import annotations

import struct
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from typing import TYPE_CHECKING

import trio

from coordinator.broker.batches import record_timestamps
from coordinator.broker.control_batches import batch_info
from coordinator.broker.errors import BrokerError
from coordinator.broker.leader_epochs import LeaderEpochs
from coordinator.broker.stored_batch import (
    BatchGone,
    SegmentSource,
    StoredBatch,
    read_batch,
    read_batches,
)
from coordinator.txn.partition import AbortedTxn, PartitionTransactions, TransactionIndex
from coordinator.txn.producer_state import AppendOrigin, ProducerStateError
from storage.time_index import SCAN_BUDGET_BYTES, TimeIndex
from wire.records import RecordBatchHeader, parse_batches, with_base_offset

if TYPE_CHECKING:
    from storage.log_cleaner import KeptBatch

__all__ = ["PartitionLog", "StoredBatch"]

_LEADER_EPOCH = struct.Struct(">i")  # partitionLeaderEpoch, at byte 12 of a batch


class PartitionLog:
    """One partition's batches and offsets."""

    def __init__(self, index: int, source: SegmentSource | None = None) -> None:
        self.index = index
        #: Where located batches are read back (the topic files), None: memory only.
        self.source = source
        self.batches: list[StoredBatch] = []
        self.log_start_offset = 0
        self.log_end_offset = 0
        self.size_bytes = 0
        #: Where ListOffsets by timestamp starts (``storage.time_index``).
        self.time_index = TimeIndex()
        #: Producer state, open transactions, the LSO and the aborted-transaction index.
        self.txn = PartitionTransactions(str(index))
        #: The leader epoch appends are stamped with (Kafka's partitionLeaderEpoch): 0 from
        #: the partition's creation, the cluster's epoch once a failover bumps it.
        self.leader_epoch = 0
        #: Where each leader epoch started, read off the batches' stamps (OffsetForLeaderEpoch).
        self.epochs = LeaderEpochs()

    @property
    def high_watermark(self) -> int:
        """One replica: everything appended is replicated."""
        return self.log_end_offset

    @property
    def last_stable_offset(self) -> int:
        """The first offset of the earliest open transaction, else the high watermark."""
        return self.txn.last_stable_offset

    def fetchable_offset(self, read_committed: bool) -> int:
        """Where reads stop: the LSO for read_committed, else the high watermark."""
        return self.last_stable_offset if read_committed else self.high_watermark

    def aborted_transactions(self, fetch_offset: int, upper_bound: int) -> list[AbortedTxn]:
        """Aborted transactions overlapping [fetch_offset, upper_bound) (read_committed)."""
        return self.txn.aborted_transactions(fetch_offset, upper_bound)

    # -- writes -----------------------------------------------------------------------

    def append(
        self,
        batch: bytes,
        header: RecordBatchHeader,
        persist: Callable[[int, bytes], tuple[str, int] | None] | None = None,
        origin: AppendOrigin = AppendOrigin.CLIENT,
        verified: bool = True,
    ) -> int:
        """Append one validated batch; its base offset (an earlier one for a duplicate
        of an idempotent producer's recent batch). BrokerError for producer-state errors
        (sequence, epoch, transaction state). ``persist(base_offset, data)`` writes the
        batch first (and says where: segment file, position of the batch); if it raises,
        nothing changes. ``verified`` False: the transaction
        coordinator does not know this partition in the producer's transaction, so a
        transactional batch that would open one is INVALID_TXN_STATE."""
        try:
            check = self.txn.check_append(batch_info(header, batch), origin, verified)
        except ProducerStateError as exc:
            raise BrokerError(exc.code, str(exc)) from None
        if check.duplicate is not None:
            return check.duplicate.first_offset
        base_offset = self.log_end_offset
        data = with_base_offset(batch[: header.size], base_offset)
        data = data[:12] + _LEADER_EPOCH.pack(self.leader_epoch) + data[16:]
        located = persist(base_offset, data) if persist is not None else None
        self._take(data, header, base_offset, located)
        self.epochs.assign(self.leader_epoch, base_offset)
        self.txn.apply_append(check)
        self.txn.update_high_watermark(self.log_end_offset)
        return base_offset

    def restore(self, data: bytes, located: tuple[str, int] | None = None) -> None:
        """Take back a batch read from the data directory (its base offset as stored);
        ``located``: its segment file and position there."""
        (header,) = parse_batches(data, verify_crc=False)
        self.leader_epoch = max(self.leader_epoch, header.partition_leader_epoch)
        if header.base_offset < self.log_end_offset:
            raise ValueError(f"batch at offset {header.base_offset} overlaps the partition's "
                             f"end {self.log_end_offset}")
        if not self.batches:
            self.log_start_offset = header.base_offset
            self.txn = PartitionTransactions(str(self.index), header.base_offset)
        self.epochs.assign(header.partition_leader_epoch, header.base_offset)
        self.txn.log_end_offset = header.base_offset
        self.txn.producers.map_end_offset = header.base_offset
        if header.is_control and header.record_count == 0:
            # The cleaner emptied it: its whole transaction is gone (Kafka's
            # ProducerAppendInfo skips an empty control batch).
            self._take(data, header, header.base_offset, located)
            self.txn.log_end_offset = self.txn.producers.map_end_offset = self.log_end_offset
            self.txn.update_high_watermark(self.log_end_offset)
            return
        check = self.txn.check_append(batch_info(header, data), AppendOrigin.REPLICATION)
        self._take(data, header, header.base_offset, located)
        self.txn.apply_append(check)
        self.txn.update_high_watermark(self.log_end_offset)

    def advance_log_start(self, offset: int) -> None:
        """Move the log start offset up to ``offset`` (DeleteRecords; at most the high
        watermark): records below it are gone for readers, and whole batches below it leave
        memory. A lower offset changes nothing."""
        offset = min(offset, self.high_watermark)
        if offset <= self.log_start_offset:
            return
        self.txn.increment_log_start_offset(offset)
        self.log_start_offset = offset
        self.epochs.truncate_from_start(offset)
        keep = bisect_left(self.batches, offset, key=lambda b: b.last_offset)
        self.size_bytes -= sum(b.size for b in self.batches[:keep])
        del self.batches[:keep]
        if keep:
            self.time_index.rebuild((b.max_timestamp, b.base_offset) for b in self.batches)

    def restore_cleaned_start(self, offset: int) -> None:
        """Take back the log start offset the cleaner noted (at restore, before DeleteRecords'
        moves): it may lie below the first batch the cleaner kept."""
        if offset < self.log_start_offset:
            self.log_start_offset = self.txn.log_start_offset = offset
        else:
            self.advance_log_start(offset)

    def apply_cleaning(self, first_offset: int, last_offset: int, kept: list[KeptBatch],
                       path: str) -> None:
        """The cleaner rewrote the batches in [first_offset, last_offset] as ``kept``, now
        in the segment file ``path``: offsets unchanged, gaps where batches went. Call
        :meth:`cleaning_done` after the round's last group."""
        assert self.source is not None  # (only a partition with files is cleaned)
        start = bisect_left(self.batches, first_offset, key=lambda b: b.base_offset)
        stop = bisect_right(self.batches, last_offset, key=lambda b: b.last_offset)
        fresh = [StoredBatch.located(k.base_offset, k.last_offset, k.max_timestamp, k.size,
                                     k.crc, path, k.position, self.source)
                 for k in kept if k.last_offset >= self.log_start_offset]
        self.size_bytes += (sum(b.size for b in fresh)
                            - sum(b.size for b in self.batches[start:stop]))
        self.batches[start:stop] = fresh

    def cleaning_done(self, first_offset: int, last_offset: int,
                      retained_aborted: set[tuple[int, int]]) -> None:
        """Rebuild the time index, and keep in the aborted-transaction index only the
        aborted transactions of [first_offset, last_offset] whose data the cleaner kept
        (Kafka's cleaned ``.txnindex``)."""
        self.time_index.rebuild((b.max_timestamp, b.base_offset) for b in self.batches)
        entries = self.txn.aborted.all()
        kept = tuple(t for t in entries
                     if not first_offset <= t.last_offset <= last_offset
                     or (t.producer_id, t.last_offset) in retained_aborted)
        if len(kept) != len(entries):
            self.txn.aborted = TransactionIndex(kept)

    def _take(self, data: bytes, header: RecordBatchHeader, base_offset: int,
              located: tuple[str, int] | None) -> None:
        last_offset = base_offset + header.last_offset_delta
        path, position = located if located is not None else (None, 0)
        self.batches.append(StoredBatch(base_offset, last_offset, header.max_timestamp, data,
                                        path, position, self.source))
        self.time_index.append(header.max_timestamp, base_offset)
        self.log_end_offset = last_offset + 1
        self.size_bytes += len(data)

    @property
    def producer_ids(self) -> list[int]:
        """Producers with state here."""
        return list(self.txn.producers.producers)

    # -- reads ------------------------------------------------------------------------

    def offset_in_range(self, offset: int) -> bool:
        """Kafka's fetch range check: log start offset <= offset <= log end offset."""
        return self.log_start_offset <= offset <= self.log_end_offset

    def _first_batch_at(self, offset: int) -> int:
        """Index of the first batch whose last offset is >= ``offset``."""
        return bisect_left(self.batches, offset, key=lambda b: b.last_offset)

    async def read(
        self, fetch_offset: int, max_bytes: int, min_one: bool, max_offset: int,
        limiter: trio.CapacityLimiter | None = None,
    ) -> list[bytes]:
        """The bytes of :meth:`select`'s batches (:func:`read_batches`, what would wait
        read in a worker thread under ``limiter``)."""
        return await read_batches(self.select(fetch_offset, max_bytes, min_one, max_offset),
                                  limiter)

    def select(
        self, fetch_offset: int, max_bytes: int, min_one: bool, max_offset: int
    ) -> list[StoredBatch]:
        """Whole batches from the one holding ``fetch_offset``, below ``max_offset``, up to
        ``max_bytes``; with ``min_one`` the first batch is taken even when larger. Memory
        only: the bytes of located batches are read by :func:`read_batches`."""
        out: list[StoredBatch] = []
        total = 0
        batches = self.batches
        for position in range(self._first_batch_at(fetch_offset), len(batches)):
            batch = batches[position]
            if batch.last_offset >= max_offset:
                break
            size = batch.size
            if total + size > max_bytes and not (min_one and not out):
                break
            out.append(batch)
            total += size
        return out

    def bytes_available(self, fetch_offset: int, max_offset: int, limit: int = 2**63) -> int:
        """Bytes a fetch from ``fetch_offset`` could read below ``max_offset``, counted
        until ``limit`` is reached (the long-poll's min_bytes test)."""
        total = 0
        for position in range(self._first_batch_at(fetch_offset), len(self.batches)):
            batch = self.batches[position]
            if batch.last_offset >= max_offset or total >= limit:
                break
            total += batch.size
        return total

    async def offset_for_timestamp(self, timestamp: int,
                                   limiter: trio.CapacityLimiter | None = None
                                   ) -> tuple[int, int] | None:
        """(timestamp, offset) of the first record with timestamp >= ``timestamp``.

        The time index names the first batch whose max timestamp is >= the target; Kafka
        looks there, and on in later batches that claim as much. A batch whose records
        this broker cannot decode (snappy, lz4, zstd), or met after ``SCAN_BUDGET_BYTES`` of
        records were decoded, answers its base offset and max timestamp instead (never
        past the wanted record).
        """
        start = self.time_index.lookup(timestamp)
        if start is None:
            return None
        decoded = 0
        offset = max(start, self.log_start_offset)
        while (position := self._first_batch_at(offset)) < len(self.batches):
            # (found again by offset each time: a read may wait, and the list change)
            batch = self.batches[position]
            offset = batch.last_offset + 1
            if batch.max_timestamp < timestamp or batch.last_offset < self.log_start_offset:
                continue
            records = await _timestamps(batch, limiter) if decoded < SCAN_BUDGET_BYTES else None
            if records is None:
                return batch.max_timestamp, max(batch.base_offset, self.log_start_offset)
            decoded += batch.size
            for record_offset, record_timestamp in records:
                if record_timestamp >= timestamp and record_offset >= self.log_start_offset:
                    return record_timestamp, record_offset
        return None

    async def max_timestamp_offset(self, limiter: trio.CapacityLimiter | None = None
                                   ) -> tuple[int, int] | None:
        """(timestamp, offset) of the earliest record holding the partition's largest
        timestamp (ListOffsets -3), or None when the log is empty."""
        largest = self.time_index.largest()
        if largest is None or not self.batches:
            return None
        best = self.batches[self._first_batch_at(largest[1])]
        records = await _timestamps(best, limiter)
        if records is not None:
            for offset, record_timestamp in records:
                if record_timestamp == best.max_timestamp:
                    return record_timestamp, offset
        return best.max_timestamp, best.last_offset


async def _timestamps(batch: StoredBatch,
                      limiter: trio.CapacityLimiter | None) -> list[tuple[int, int]] | None:
    """(offset, timestamp) of each record, None when not decodable here or no longer where
    the index says (the answer then comes from the batch's base offset and max timestamp)."""
    try:
        return record_timestamps(await read_batch(batch, limiter))
    except BatchGone:
        return None

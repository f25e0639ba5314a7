"""A share partition driven as the runtime will drive it: every change's record goes through
the storage codec into a list (the log), is replayed into a ShareStateStore, and only then
applied (persist, then apply); ``restart`` rebuilds the partition from that log alone."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from coordinator.share import (
    AcknowledgementBatch,
    AcquiredRecords,
    RecordState,
    SharePartition,
    SharePartitionConfig,
    SharePartitionKey,
    ShareStateChange,
    ShareStateStore,
)
from storage.record_codec import decode_record, encode_record
from storage.records import Record

TOPIC_ID = uuid.UUID("a5b1b6d2-6a1e-4c1f-9c39-3c0c1d2e3f40")
KEY = SharePartitionKey("share-group", TOPIC_ID, 0)
MEMBER_ID = "member-1"
MEMBER_ID_2 = "member-2"
LOCK_MS = 30_000

__all__ = ["KEY", "LOCK_MS", "MEMBER_ID", "MEMBER_ID_2", "TOPIC_ID", "ShareHarness"]


class ShareHarness:
    """One share partition, its log, and a clock at ``now``."""

    def __init__(
        self, config: SharePartitionConfig | None = None, *, start_offset: int = 0
    ) -> None:
        self.config = config or SharePartitionConfig()
        self.now = 0
        self.log: list[Record] = []
        self.store = ShareStateStore()
        self.append(SharePartition.initial_record(KEY, start_offset, self.now, self.config))
        self.partition = SharePartition.from_log(KEY, self.store.partitions[KEY], self.config)
        self.end_offset = 1_000_000  # the high watermark acquisitions read up to

    def append(self, record: Record) -> None:
        """Write ``record`` to the log (through the codec) and replay it into the store."""
        key, value = encode_record(record)
        decoded = decode_record(key, value)
        assert decoded == record
        self.log.append(decoded)
        assert self.store.replay(decoded)

    def persist(self, change: ShareStateChange | None) -> None:
        """Append the change's record, then apply the change."""
        if change is not None:
            self.append(change.record)
            self.partition.append_done(change)

    def acquire(
        self,
        member_id: str = MEMBER_ID,
        max_records: int = 500,
        *,
        end_offset: int | None = None,
        skipped: Sequence[tuple[int, int]] = (),
    ) -> list[AcquiredRecords]:
        found = self.partition.acquire(
            member_id,
            max_records,
            self.end_offset if end_offset is None else end_offset,
            self.now,
            skipped=skipped,
        )
        self.persist(found.change)
        return found.records

    def ack(self, member_id: str, first: int, last: int, *types: int) -> None:
        self.persist(self.acknowledge(member_id, AcknowledgementBatch(first, last, types)))

    def acknowledge(
        self, member_id: str, *batches: AcknowledgementBatch
    ) -> ShareStateChange | None:
        return self.partition.acknowledge(member_id, batches, self.now)

    def sleep(self, ms: int) -> None:
        """Advance the clock and expire the locks whose deadline passed."""
        self.now += ms
        self.persist(self.partition.expire_locks(self.now))

    def state(self, offset: int) -> tuple[RecordState, int]:
        rec = self.partition.records[offset]
        return rec.state, rec.delivery_count

    def owner(self, offset: int) -> str | None:
        return self.partition.records[offset].member_id

    def replayed(self) -> SharePartition:
        """A partition rebuilt from the log alone (a restart)."""
        store = ShareStateStore()
        for record in self.log:
            store.replay(record)
        return SharePartition.from_log(KEY, store.partitions[KEY], self.config)

    def restart(self) -> None:
        self.partition = self.replayed()

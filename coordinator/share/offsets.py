"""The share coordinator's side of the share-group offsets admin APIs: Kafka's
``ShareCoordinatorShard.readStateSummary`` (DescribeShareGroupOffsets) and
``initializeState`` (AlterShareGroupOffsets, through the persister's
InitializeShareGroupState).

- :func:`handle_read_summaries`: each share partition's durable start offset, leader epoch
  and delivery-complete count (None: no state, Kafka's UNINITIALIZED_START_OFFSET). Reads
  the applied state only, so nothing an append could still lose.
- :func:`handle_write_start_offsets`: a fresh snapshot per share partition at the new start
  offset and state epoch, nothing in flight (Kafka's generateInitializeStateRecord: "init
  state implies fresh start"), its snapshot epoch one past the last so updates of the old
  snapshot never apply to it. A negative start offset writes tombstones instead: the share
  partition has no state, and the next ShareFetch starts it by ``share.auto.offset.reset``
  (what Kafka's SharePartition does with an uninitialized start offset). The live partition
  is not served until the records are durable, then rebuilt from them; a failed append
  leaves it as it was and answers :class:`~coordinator.share.manager.ShareAppendFailed`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from coordinator.core.result import Reply, ReplyToken, Result
from storage.records import Record
from storage.share_records import ShareSnapshotKey, ShareUpdateKey

from .durable import DurableState, RecordLog, SharePartitionKey, state_record
from .manager import SharePartitionManager

__all__ = [
    "PartitionSummary",
    "ReadSummaries",
    "WriteStartOffsets",
    "handle_read_summaries",
    "handle_write_start_offsets",
]


@dataclass(frozen=True, slots=True)
class PartitionSummary:
    """A share partition's durable summary (Kafka's ReadShareGroupStateSummary result)."""

    start_offset: int
    leader_epoch: int
    state_epoch: int
    delivery_complete_count: int

    @classmethod
    def of(cls, log: RecordLog) -> PartitionSummary:
        """The summary of a share partition's replayed records."""
        state = log.current
        return cls(state.start_offset, 0, state.state_epoch, state.delivery_complete_count)

    def lag(self, end_offset: int) -> int:
        """Records from the start offset to ``end_offset`` (the high watermark) whose
        delivery is not complete (KIP-1226's share-partition lag)."""
        return end_offset - self.start_offset - self.delivery_complete_count


@dataclass(frozen=True, slots=True)
class ReadSummaries:
    """Read these share partitions' summaries."""

    keys: tuple[SharePartitionKey, ...]


@dataclass(frozen=True, slots=True)
class WriteStartOffsets:
    """Start these share partitions afresh at these offsets, at ``state_epoch``."""

    start_offsets: Mapping[SharePartitionKey, int]
    state_epoch: int


def handle_read_summaries(
    shard: SharePartitionManager, ctx: Any, request: ReadSummaries, token: ReplyToken,
    now_ms: int,
) -> Result:
    """Answer each key's :class:`PartitionSummary`, or None when it has no state."""
    store = shard.coordinator.store.partitions
    answer: dict[SharePartitionKey, PartitionSummary | None] = {}
    for key in request.keys:
        log = store.get(key)
        answer[key] = None if log is None else PartitionSummary.of(log)
    return Result(replies=(Reply(token, answer),))  # type: ignore[arg-type]


def handle_write_start_offsets(
    shard: SharePartitionManager, ctx: Any, request: WriteStartOffsets, token: ReplyToken,
    now_ms: int,
) -> Result:
    """Write each share partition's new state; answered how many once durable."""
    records: list[Record] = []
    callbacks: list[Any] = []
    for key, offset in request.start_offsets.items():
        if offset < 0:
            written: tuple[Record, ...] = (
                Record(ShareUpdateKey(key.group_id, key.topic_id, key.partition), None),
                Record(ShareSnapshotKey(key.group_id, key.topic_id, key.partition), None))
        else:
            log = shard.coordinator.store.partitions.get(key)
            snapshot, _ = state_record(key, log, DurableState(offset, request.state_epoch),
                                       now_ms, shard.coordinator.config_of(key),
                                       force_snapshot=True)
            written = (snapshot,)
        records.extend(written)
        callbacks.append(shard.rewrite(key, written))
    answer = len(callbacks)
    return Result(records=tuple(records), replies=(Reply(token, answer),),  # type: ignore[arg-type]
                  timers=shard.lock_timer(), callbacks=tuple(callbacks))

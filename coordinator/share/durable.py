"""A share partition's durable state and the records that carry it (Kafka's share
coordinator: ``ShareCoordinatorShard``'s replay, ``ShareSnapshot``/``ShareUpdate`` records).

The durable state is the start offset, the state epoch and, for offsets at or above the
start offset, each record that is not a plain never-delivered available record: its state
(available, acknowledged, archived) and delivery count. Acquisitions are not durable (as in
Kafka: an acquired record comes back available after a restart, with the delivery count it
had before that acquisition).

Records are cumulative per snapshot (see :mod:`storage.share_records`): a snapshot holds the
whole state; an update the batches differing from its snapshot. :class:`ShareStateStore`
replays them; :func:`state_record` writes the one record a change needs.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from storage.records import Record
from storage.share_records import (
    ShareSnapshotKey,
    ShareSnapshotValue,
    ShareStateBatch,
    ShareUpdateKey,
    ShareUpdateValue,
)

from .states import RecordState, SharePartitionConfig

__all__ = [
    "DEFAULT_ENTRY",
    "DurableState",
    "Entry",
    "RecordLog",
    "SharePartitionKey",
    "ShareStateStore",
    "normalised",
    "state_batches",
    "state_record",
]

Entry = tuple[RecordState, int]
"""A record's durable (state, delivery count)."""

DEFAULT_ENTRY: Entry = (RecordState.AVAILABLE, 0)


@dataclass(frozen=True, slots=True)
class SharePartitionKey:
    """Which share partition: (group, topic id, partition)."""

    group_id: str
    topic_id: uuid.UUID
    partition: int


@dataclass(frozen=True, slots=True)
class DurableState:
    """Start offset, state epoch, and the non-default entries at or above the start."""

    start_offset: int
    state_epoch: int = 0
    entries: Mapping[int, Entry] = field(default_factory=dict)

    def entry(self, offset: int) -> Entry:
        """The durable (state, delivery count) of ``offset`` (at or above the start)."""
        return self.entries.get(offset, DEFAULT_ENTRY)

    @property
    def delivery_complete_count(self) -> int:
        """Offsets at or above the start whose delivery is complete (KIP-1226)."""
        return sum(1 for state, _ in self.entries.values() if state.is_terminal)


def normalised(start_offset: int, state_epoch: int, entries: Mapping[int, Entry]) -> DurableState:
    """The state with its start offset moved past the acknowledged/archived prefix and the
    entries below it (and default ones) dropped."""
    while (found := entries.get(start_offset)) is not None and found[0].is_terminal:
        start_offset += 1
    kept = {o: e for o, e in entries.items() if o >= start_offset and e != DEFAULT_ENTRY}
    return DurableState(start_offset, state_epoch, kept)


def state_batches(entries: Mapping[int, Entry]) -> tuple[ShareStateBatch, ...]:
    """Entries as state batches: runs of consecutive offsets with one state and count."""
    batches: list[ShareStateBatch] = []
    for offset in sorted(entries):
        state, count = entries[offset]
        last = batches[-1] if batches else None
        if (
            last is not None
            and last.last_offset + 1 == offset
            and last.delivery_state == state
            and last.delivery_count == count
        ):
            batches[-1] = ShareStateBatch(last.first_offset, offset, state, count)
        else:
            batches.append(ShareStateBatch(offset, offset, int(state), count))
    return tuple(batches)


def _entries(batches: Iterable[ShareStateBatch]) -> dict[int, Entry]:
    found: dict[int, Entry] = {}
    for batch in batches:
        state = RecordState(batch.delivery_state)
        # Kafka's writers may persist ACQUIRED (1); no acquisition survives a restart.
        entry = (RecordState.AVAILABLE if state is RecordState.ACQUIRED else state,
                 batch.delivery_count)
        for offset in range(batch.first_offset, batch.last_offset + 1):
            found[offset] = entry
    return found


@dataclass(frozen=True, slots=True)
class RecordLog:
    """Where a share partition's records stand: its snapshot (epoch and state), the updates
    written since, and the state they add up to."""

    snapshot_epoch: int
    snapshot: DurableState
    updates_since_snapshot: int
    current: DurableState
    create_timestamp: int


def state_record(
    key: SharePartitionKey,
    log: RecordLog | None,
    after: DurableState,
    now_ms: int,
    config: SharePartitionConfig,
    *,
    force_snapshot: bool = False,
) -> tuple[Record, RecordLog]:
    """The record that makes ``after`` durable, and where the records stand once it is in:
    a snapshot when there is none yet, when the state epoch changes, when asked, or every
    ``updates_per_snapshot`` records; otherwise an update relative to the snapshot."""
    if (
        log is None
        or force_snapshot
        or after.state_epoch != log.snapshot.state_epoch
        or log.updates_since_snapshot + 1 >= config.updates_per_snapshot
    ):
        epoch = 0 if log is None else log.snapshot_epoch + 1
        created = now_ms if log is None else log.create_timestamp
        value = ShareSnapshotValue(
            snapshot_epoch=epoch,
            state_epoch=after.state_epoch,
            leader_epoch=0,
            start_offset=after.start_offset,
            create_timestamp=created,
            write_timestamp=now_ms,
            state_batches=state_batches(after.entries),
            delivery_complete_count=after.delivery_complete_count,
        )
        snapshot_key = ShareSnapshotKey(key.group_id, key.topic_id, key.partition)
        return Record(snapshot_key, value), RecordLog(epoch, after, 0, after, created)
    changed = {
        offset: entry
        for offset in set(after.entries) | set(log.snapshot.entries)
        if offset >= after.start_offset
        and (entry := after.entry(offset)) != log.snapshot.entry(offset)
    }
    update = ShareUpdateValue(
        snapshot_epoch=log.snapshot_epoch,
        leader_epoch=0,
        start_offset=after.start_offset,
        state_batches=state_batches(changed),
        delivery_complete_count=after.delivery_complete_count,
    )
    update_key = ShareUpdateKey(key.group_id, key.topic_id, key.partition)
    return Record(update_key, update), RecordLog(
        log.snapshot_epoch, log.snapshot, log.updates_since_snapshot + 1, after,
        log.create_timestamp,
    )


class ShareStateStore:
    """Every share partition's record log, rebuilt by replaying the records (Kafka's
    ``ShareCoordinatorShard.replay``)."""

    __slots__ = ("partitions",)

    def __init__(self) -> None:
        self.partitions: dict[SharePartitionKey, RecordLog] = {}

    def replay(self, record: Record) -> bool:
        """Apply one record; False when it is not a share record (or a stale update)."""
        key = record.key
        if not isinstance(key, ShareSnapshotKey | ShareUpdateKey):
            return False
        which = SharePartitionKey(key.group_id, key.topic_id, key.partition)
        value = record.value
        if value is None:  # the share partition's state was deleted
            self.partitions.pop(which, None)
            return True
        if isinstance(value, ShareSnapshotValue):
            state = normalised(value.start_offset, value.state_epoch, _entries(value.state_batches))
            self.partitions[which] = RecordLog(
                value.snapshot_epoch, state, 0, state, value.create_timestamp
            )
            return True
        if not isinstance(value, ShareUpdateValue):
            return False
        log = self.partitions.get(which)
        if log is None or value.snapshot_epoch != log.snapshot_epoch:
            return False  # an update of an older snapshot: the newer snapshot holds it
        entries = dict(log.snapshot.entries)
        entries.update(_entries(value.state_batches))
        start = max(log.snapshot.start_offset, value.start_offset)
        current = normalised(start, log.snapshot.state_epoch, entries)
        self.partitions[which] = RecordLog(
            log.snapshot_epoch, log.snapshot, log.updates_since_snapshot + 1, current,
            log.create_timestamp,
        )
        return True

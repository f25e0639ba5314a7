"""The share coordinator's records and replay: Kafka's ShareCoordinatorShardTest where it
applies (tests/share/COVERAGE.md), and restarts: no accepted record is delivered again,
acquired records come back available."""

from __future__ import annotations

from share_harness import KEY, MEMBER_ID, MEMBER_ID_2, TOPIC_ID, ShareHarness

from coordinator.share import (
    AcknowledgeType,
    AcquiredRecords,
    DurableState,
    RecordState,
    SharePartition,
    SharePartitionConfig,
    ShareStateStore,
)
from coordinator.share.durable import state_batches
from storage.records import Record
from storage.share_records import (
    ShareSnapshotKey,
    ShareSnapshotValue,
    ShareStateBatch,
    ShareUpdateKey,
    ShareUpdateValue,
)

ACCEPT, RELEASE, REJECT = AcknowledgeType.ACCEPT, AcknowledgeType.RELEASE, AcknowledgeType.REJECT
AVAILABLE, ACKNOWLEDGED, ARCHIVED = (
    RecordState.AVAILABLE, RecordState.ACKNOWLEDGED, RecordState.ARCHIVED)
SNAPSHOT_KEY = ShareSnapshotKey(KEY.group_id, TOPIC_ID, KEY.partition)
UPDATE_KEY = ShareUpdateKey(KEY.group_id, TOPIC_ID, KEY.partition)


def _snapshot(epoch: int, state_epoch: int, start: int, *batches: ShareStateBatch) -> Record:
    return Record(SNAPSHOT_KEY, ShareSnapshotValue(epoch, state_epoch, 0, start, 0, 0, batches))


def test_replay_with_share_snapshot() -> None:
    store = ShareStateStore()
    assert store.replay(_snapshot(0, 0, 0, ShareStateBatch(0, 10, 0, 1)))
    log = store.partitions[KEY]
    assert log.snapshot_epoch == 0 and log.current.entry(10) == (AVAILABLE, 1)
    assert store.replay(_snapshot(1, 1, 0, ShareStateBatch(11, 12, 0, 1)))
    log = store.partitions[KEY]
    assert (log.snapshot_epoch, log.current.state_epoch) == (1, 1)
    assert log.current.entry(10) == (AVAILABLE, 0)  # the newer snapshot replaces the state
    assert log.current.entry(11) == (AVAILABLE, 1)


def test_write_state_success() -> None:
    h = ShareHarness(start_offset=7)
    assert h.log == [Record(SNAPSHOT_KEY, ShareSnapshotValue(0, 0, 0, 7, 0, 0, (), 0))]
    assert h.store.partitions[KEY].current == DurableState(7, 0, {})


def test_subsequent_write_state_snapshot_epoch_updates_successfully() -> None:
    h = ShareHarness()
    h.acquire(MEMBER_ID, 21)
    h.ack(MEMBER_ID, 0, 10, RELEASE)
    assert h.log[-1] == Record(
        UPDATE_KEY, ShareUpdateValue(0, 0, 0, (ShareStateBatch(0, 10, 0, 1),), 0))
    h.ack(MEMBER_ID, 11, 20, RELEASE)
    # Cumulative: the update holds every batch changed since its snapshot, merged.
    assert h.log[-1].value == ShareUpdateValue(0, 0, 0, (ShareStateBatch(0, 20, 0, 1),), 0)
    log = h.store.partitions[KEY]
    assert log.snapshot_epoch == 0 and log.updates_since_snapshot == 2
    assert log.current == h.partition.durable_view()


def test_non_sequential_batch_updates() -> None:
    # Batches 100-109, 110-119, 120-129 in flight; 100-109 acknowledged moves the start
    # offset to 110; then 120-129 acknowledged: 110-119's state must not be lost.
    for per_snapshot in (1, 500):
        h = ShareHarness(SharePartitionConfig(updates_per_snapshot=per_snapshot), start_offset=100)
        h.acquire(MEMBER_ID, 30)
        h.ack(MEMBER_ID, 110, 119, RELEASE)
        h.acquire(MEMBER_ID_2, 10)
        h.ack(MEMBER_ID, 100, 109, ACCEPT)
        h.ack(MEMBER_ID, 120, 129, ACCEPT)
        state = h.store.partitions[KEY].current
        assert state.start_offset == 110
        assert state_batches(state.entries) == (
            ShareStateBatch(110, 119, 0, 1), ShareStateBatch(120, 129, 2, 1))


def test_a_snapshot_every_updates_per_snapshot_records() -> None:
    h = ShareHarness(SharePartitionConfig(updates_per_snapshot=3))
    h.acquire(MEMBER_ID, 10)
    kinds = []
    for offset in range(5):
        h.ack(MEMBER_ID, offset, offset, ACCEPT)
        kinds.append((type(h.log[-1].value).__name__, h.log[-1].value.snapshot_epoch))  # type: ignore[union-attr]
    assert kinds == [("ShareUpdateValue", 0), ("ShareUpdateValue", 0), ("ShareSnapshotValue", 1),
                     ("ShareUpdateValue", 1), ("ShareUpdateValue", 1)]


def test_an_update_of_an_older_snapshot_is_ignored() -> None:
    store = ShareStateStore()
    store.replay(_snapshot(1, 0, 0, ShareStateBatch(0, 3, 0, 2)))
    stale = Record(UPDATE_KEY, ShareUpdateValue(0, 0, 0, (ShareStateBatch(0, 3, 2, 2),)))
    assert not store.replay(stale)
    assert store.partitions[KEY].current.entry(0) == (AVAILABLE, 2)


def test_compaction_keeps_the_whole_state() -> None:
    # kcoord's log keeps the newest record of each key: the newest snapshot and update.
    h = ShareHarness(SharePartitionConfig(updates_per_snapshot=4))
    h.acquire(MEMBER_ID, 40)
    for first in range(0, 40, 4):
        h.ack(MEMBER_ID, first + 1, first + 2, ACCEPT if first % 8 else RELEASE)
    newest = {type(r.key): i for i, r in enumerate(h.log)}
    compacted = [r for i, r in enumerate(h.log) if newest[type(r.key)] == i]
    store = ShareStateStore()
    for record in compacted:
        store.replay(record)
    assert store.partitions[KEY].current == h.partition.durable_view()


def test_tombstone_deletes_the_state() -> None:
    h = ShareHarness()
    assert h.store.replay(Record(SNAPSHOT_KEY, None))
    assert KEY not in h.store.partitions
    assert not h.store.replay(Record(UPDATE_KEY, ShareUpdateValue(0, 0, 0, ())))


def test_persisted_acquired_state_replays_available() -> None:
    store = ShareStateStore()
    store.replay(_snapshot(0, 0, 5, ShareStateBatch(5, 9, int(RecordState.ACQUIRED), 1)))
    partition = SharePartition.from_log(KEY, store.partitions[KEY], SharePartitionConfig())
    found = partition.acquire(MEMBER_ID, 10, 10, 0)
    assert found.records == [AcquiredRecords(5, 9, 2)]


def test_restart_delivers_no_accepted_record_again() -> None:
    h = ShareHarness()
    h.acquire(MEMBER_ID, 10)
    h.ack(MEMBER_ID, 2, 4, ACCEPT)
    h.ack(MEMBER_ID, 5, 5, REJECT)
    h.ack(MEMBER_ID, 6, 6, RELEASE)
    # 0, 1 and 7-9 were acquired: they come back available. Acquisitions are not written
    # (as in Kafka), so their delivery counts are the durable ones (0: this one counts 1).
    h.restart()
    assert h.acquire(MEMBER_ID_2, 8) == [
        AcquiredRecords(0, 1, 1), AcquiredRecords(6, 6, 2), AcquiredRecords(7, 11, 1)]
    assert h.state(3) == (ACKNOWLEDGED, 1) and h.state(5) == (ARCHIVED, 1)


def test_restart_after_the_start_offset_moved() -> None:
    h = ShareHarness()
    h.acquire(MEMBER_ID, 10)
    h.ack(MEMBER_ID, 0, 9, ACCEPT)
    h.restart()
    assert h.partition.start_offset == 10
    assert h.acquire(MEMBER_ID, 1) == [AcquiredRecords(10, 10, 1)]

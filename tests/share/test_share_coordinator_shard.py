"""The shard the runtime drives: initialize, persist then apply, expire, restart."""

from __future__ import annotations

import pytest
from share_harness import KEY, MEMBER_ID, TOPIC_ID

from coordinator.share import (
    AcknowledgementBatch,
    AcknowledgeType,
    AcquiredRecords,
    ShareCoordinatorShard,
    SharePartitionConfig,
    SharePartitionKey,
)
from storage.records import Record

OTHER = SharePartitionKey("share-group", TOPIC_ID, 1)
ACCEPT, REJECT = AcknowledgeType.ACCEPT, AcknowledgeType.REJECT


def _restarted(log: list[Record]) -> ShareCoordinatorShard:
    shard = ShareCoordinatorShard()
    for record in log:
        shard.replay(record)
    shard.load()
    return shard


def test_initialize_then_persist_then_apply_then_restart() -> None:
    shard = ShareCoordinatorShard(lambda key: SharePartitionConfig(record_lock_duration_ms=100))
    log = [shard.initialize(KEY, 5, 0), shard.initialize(OTHER, 0, 0)]
    assert shard.partitions == {}  # nothing is live before the append
    partition = shard.initialized(KEY, log[0])
    shard.initialized(OTHER, log[1])
    assert partition.acquire(MEMBER_ID, 3, 100, 0).records == [AcquiredRecords(5, 7, 1)]
    change = partition.acknowledge(MEMBER_ID, [AcknowledgementBatch(5, 5, (ACCEPT,))], 0)
    assert change is not None
    log.append(change.record)
    shard.append_done(KEY, change)
    assert shard.next_lock_deadline() == 100
    assert shard.expire_locks(99) == []
    expired = shard.expire_locks(100)
    assert [key for key, _ in expired] == [KEY]
    for key, c in expired:
        log.append(c.record)
        shard.append_done(key, c)
    assert shard.store.partitions[KEY].current == partition.durable_view()
    again = _restarted(log)
    assert set(again.partitions) == {KEY, OTHER}
    assert again.partitions[KEY].durable_view() == partition.durable_view()
    assert again.partitions[KEY].acquire(MEMBER_ID, 5, 100, 0).records == [
        AcquiredRecords(6, 7, 2), AcquiredRecords(8, 10, 1)]


def test_initialize_twice_is_refused() -> None:
    shard = ShareCoordinatorShard()
    shard.initialized(KEY, shard.initialize(KEY, 0, 0))
    with pytest.raises(ValueError, match="already has state"):
        shard.initialize(KEY, 0, 0)


def test_failed_append_applies_nothing() -> None:
    shard = ShareCoordinatorShard()
    partition = shard.initialized(KEY, shard.initialize(KEY, 0, 0))
    partition.acquire(MEMBER_ID, 2, 10, 0)
    change = partition.acknowledge(MEMBER_ID, [AcknowledgementBatch(0, 1, (REJECT,))], 0)
    assert change is not None
    shard.append_failed(KEY, change)
    assert partition.start_offset == 0 and partition.acquired_by(MEMBER_ID) == [0, 1]
    assert shard.store.partitions[KEY].current.start_offset == 0


def test_restart_from_a_real_log_live_replay(tmp_path: object) -> None:
    # Through storage.log: written, closed, reopened with the live index, replayed live
    # (share entries are kept one by one, like TransactionState) into a fresh shard.
    import os

    from storage.log import Log

    shard = ShareCoordinatorShard(lambda key: SharePartitionConfig(updates_per_snapshot=3))
    data_dir = os.path.join(str(tmp_path), "d")
    with Log.open(data_dir) as log:
        first = shard.initialize(KEY, 0, 0)
        log.append([first])
        partition = shard.initialized(KEY, first)
        partition.acquire(MEMBER_ID, 10, 100, 0)
        for offset in range(0, 8, 2):
            change = partition.acknowledge(
                MEMBER_ID, [AcknowledgementBatch(offset + 1, offset + 1, (ACCEPT,))], 0)
            assert change is not None
            log.append([change.record])
            shard.append_done(KEY, change)
    with Log.open(data_dir, live_index=True) as log:
        again = _restarted(list(log.replay_live()))
    assert again.partitions[KEY].durable_view() == partition.durable_view()
    assert again.partitions[KEY].acquire(MEMBER_ID, 3, 100, 0).records == [
        AcquiredRecords(0, 0, 1), AcquiredRecords(2, 2, 1), AcquiredRecords(4, 4, 1)]

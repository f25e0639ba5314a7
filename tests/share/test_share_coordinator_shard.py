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

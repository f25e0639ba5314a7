"""Kafka's TransactionStateManagerTest.scala (the parts without a real log or threads),
mirrored on coordinator.txn.manager and the coordinator's loading and expiration."""

from __future__ import annotations

import dataclasses

import pytest
from txn_support import Version, log_records, meta

from coordinator.txn.config import TxnConfig
from coordinator.txn.coordinator import TransactionCoordinator
from coordinator.txn.handlers import handle_add_partitions_to_txn
from coordinator.txn.log import (
    TransactionLogKey,
    TransactionLogRecord,
    to_storage,
    value_from_transit,
)
from coordinator.txn.manager import TransactionStateManager, TxnIdAndEpoch
from coordinator.txn.state import TopicPartition, TransactionMetadata
from coordinator.txn.timers import REMOVE_EXPIRED_TRANSACTIONAL_IDS
from coordinator.txn.transaction_state import TransactionResult, TransactionState
from wire.constants import ErrorCode as E

S = TransactionState
CONFIG = TxnConfig(transaction_state_log_num_partitions=2)
TXN1, TXN2 = "one", "two"  # both hash to partition 0 of 2
TIMEOUT = 1000
NOW = 10_000_000_000


def _m(txn_id: str, pid: int, state: S = S.EMPTY, timeout: int = TIMEOUT) -> TransactionMetadata:
    return meta(
        state,
        transactional_id=txn_id,
        producer_id=pid,
        producer_epoch=0,
        txn_timeout_ms=timeout,
        start=NOW,
        last_update=NOW,
    )


def _record(m: TransactionMetadata) -> TransactionLogRecord:
    return TransactionLogRecord(
        TransactionLogKey(m.transactional_id), value_from_transit(m.prepare_no_transit(), 1)
    )


def _loaded(*partitions: int) -> TransactionStateManager:
    manager = TransactionStateManager(CONFIG)
    for p in partitions:
        manager.begin_loading(p, 10)
        manager.complete_loading(p, 10)
    return manager


def test_partitions_of_the_test_ids() -> None:
    manager = TransactionStateManager(CONFIG)
    assert [manager.partition_for(i) for i in (TXN1, TXN2, "b", "a")] == [0, 0, 0, 1]


def test_validate_transaction_timeout() -> None:
    manager = TransactionStateManager(CONFIG)
    assert manager.validate_transaction_timeout_ms(1)
    assert not manager.validate_transaction_timeout_ms(-1)
    assert not manager.validate_transaction_timeout_ms(0)
    assert manager.validate_transaction_timeout_ms(CONFIG.transaction_max_timeout_ms)
    assert not manager.validate_transaction_timeout_ms(CONFIG.transaction_max_timeout_ms + 1)


def test_add_get_pids() -> None:
    manager = _loaded(0)
    m1, m2 = _m(TXN1, 1), _m(TXN2, 2)
    assert manager.get_transaction_state(TXN1) == (10, None)
    assert manager.put_transaction_state_if_not_exists(m1) == (10, m1)
    assert manager.get_transaction_state(TXN1) == (10, m1)
    assert manager.put_transaction_state_if_not_exists(m2) == (10, m2)
    # Putting again keeps the cached one.
    assert manager.put_transaction_state_if_not_exists(_m(TXN1, 9)) == (10, m1)


def test_delete_partition() -> None:
    manager = _loaded(0, 1)
    b, a = _m("b", 5), _m("a", 10)
    manager.put_transaction_state_if_not_exists(b)
    manager.put_transaction_state_if_not_exists(a)
    manager.remove_partition(0)
    assert manager.get_transaction_state("b") == E.NOT_COORDINATOR
    assert manager.get_transaction_state("a") == (10, a)


def test_delete_loading_partition() -> None:
    manager = TransactionStateManager(CONFIG)
    manager.begin_loading(0, 0)
    manager.replay(_record(_m(TXN1, 1, S.PREPARE_COMMIT)))
    manager.remove_partition(0)
    assert manager.loading_epochs() == {}
    # The load that finishes afterwards is ignored.
    assert manager.complete_loading(0, 0) == []
    assert manager.get_transaction_state(TXN1) == E.NOT_COORDINATOR


def test_load_and_remove_transactions_for_partition() -> None:
    t1, t2 = _m(TXN1, 1), _m(TXN2, 2)
    records = []
    t1.state = S.ONGOING
    t1.add_partitions({TopicPartition("topic1", 0), TopicPartition("topic1", 1)})
    records.append(_record(t1))
    t1.add_partitions({TopicPartition("topic2", p) for p in range(3)})
    records.append(_record(t1))
    t1.state = S.PREPARE_COMMIT
    records.append(_record(t1))
    t2.state = S.ONGOING
    t2.add_partitions({TopicPartition("topic3", p) for p in range(3)})
    records.append(_record(t2))
    for state in (S.PREPARE_ABORT, S.COMPLETE_ABORT):
        t2.state = state
        records.append(_record(t2))
    t2.state = S.EMPTY
    t2.topic_partitions.clear()
    records.append(_record(t2))

    manager = TransactionStateManager(CONFIG)
    assert manager.get_transaction_state(TXN1) == E.NOT_COORDINATOR
    manager.begin_loading(0, 0)
    assert manager.get_transaction_state(TXN1) == E.COORDINATOR_LOAD_IN_PROGRESS
    for record in records:
        manager.replay(record)
    manager.complete_loading(0, 0)
    for expected in (t1, t2):
        found = manager.get_transaction_state(expected.transactional_id)
        assert isinstance(found, tuple) and found[1] is not None
        loaded = found[1]
        assert (loaded.state, loaded.producer_id, loaded.producer_epoch) == (
            expected.state,
            expected.producer_id,
            expected.producer_epoch,
        )
        assert loaded.topic_partitions == expected.topic_partitions
    manager.remove_partition(0, 0)
    assert manager.get_transaction_state(TXN1) == E.NOT_COORDINATOR
    assert manager.get_transaction_state(TXN2) == E.NOT_COORDINATOR


def test_should_return_not_coordinator_error_if_transaction_id_partition_not_owned() -> None:
    assert TransactionStateManager(CONFIG).get_transaction_state(TXN1) == E.NOT_COORDINATOR


def test_list_transactions_with_coordinator_loading_in_progress() -> None:
    manager = TransactionStateManager(CONFIG)
    manager.begin_loading(0, 15)
    response = manager.list_transaction_states(frozenset(), (), -1, NOW)
    assert response["error_code"] == E.COORDINATOR_LOAD_IN_PROGRESS


def test_list_transactions_filtering() -> None:
    manager = _loaded(0, 1)
    now = NOW

    def put(txn_id: str, pid: int, state: S) -> None:
        m = _m(txn_id, pid, state)
        m.txn_start_timestamp = m.txn_last_update_timestamp = now
        assert isinstance(manager.put_transaction_state_if_not_exists(m), tuple)

    put("t0", 0, S.ONGOING)
    put("t1", 1, S.ONGOING)
    now += 1000
    put("t2", 2, S.PREPARE_COMMIT)
    put("t3", 3, S.PREPARE_ABORT)
    now += 1000
    put("t4", 4, S.COMPLETE_COMMIT)
    put("t5", 5, S.COMPLETE_ABORT)
    put("t6", 6, S.COMPLETE_ABORT)
    put("t7", 7, S.PREPARE_EPOCH_FENCE)
    now += 1000
    put("t8", 8, S.DEAD)  # being expired: never listed

    def listed(
        ids: set[str],
        pids: frozenset[int] = frozenset(),
        states: tuple[str, ...] = (),
        duration: int = -1,
    ) -> None:
        response = manager.list_transaction_states(pids, states, duration, now)
        assert response["error_code"] == E.NONE
        assert {t["transactional_id"] for t in response["transaction_states"]} == ids
        unknown = {s for s in states if S.from_name(s) is None}
        assert set(response["unknown_state_filters"]) == unknown

    every = {f"t{i}" for i in range(8)}
    listed(every)
    listed(every, duration=0)
    listed({"t0", "t1", "t2", "t3"}, duration=1000)
    listed({"t0", "t1"}, duration=2000)
    listed(set(), duration=3000)
    listed({"t0", "t1"}, states=("Ongoing",))
    listed({"t0", "t1"}, states=("Ongoing", "UnknownState"))
    listed({"t2", "t4"}, states=("PrepareCommit", "CompleteCommit"))
    listed(set(), states=("UnknownState",))
    listed({"t5"}, pids=frozenset({5}))
    listed({"t5", "t6"}, pids=frozenset({5, 6, 8, 9}))
    listed({"t4"}, pids=frozenset({4, 5}), states=("CompleteCommit",))
    listed({"t4", "t5"}, pids=frozenset({4, 5}), states=("CompleteCommit", "CompleteAbort"))
    listed(set(), pids=frozenset({3, 6}), states=("UnknownState",))
    listed(set(), pids=frozenset({10}), states=("CompleteCommit",))
    listed(set(), states=("Dead",))


def test_should_only_consider_transactions_in_the_ongoing_state_to_abort() -> None:
    manager = _loaded(0, 1)
    for txn_id, pid, state, timeout in (
        ("ongoing", 0, S.ONGOING, TIMEOUT),
        ("not-expiring", 1, S.ONGOING, 10_000),
        ("prepare-commit", 2, S.PREPARE_COMMIT, TIMEOUT),
        ("prepare-abort", 3, S.PREPARE_ABORT, TIMEOUT),
        ("complete-commit", 4, S.COMPLETE_COMMIT, TIMEOUT),
        ("complete-abort", 5, S.COMPLETE_ABORT, TIMEOUT),
    ):
        manager.put_transaction_state_if_not_exists(_m(txn_id, pid, state, timeout))
    assert manager.timed_out_transactions(NOW + 2000) == [TxnIdAndEpoch("ongoing", 0, 0)]


def _markers_on_load(state: S, result: TransactionResult) -> None:
    t1 = _m(TXN1, 1, state)
    t1.add_partitions({TopicPartition("topic1", 0), TopicPartition("topic1", 1)})
    coordinator = TransactionCoordinator(CONFIG, owned_partitions=[0])
    coordinator.replay(to_storage(_record(t1)))
    (marker,) = coordinator.on_loaded(NOW).markers
    assert (marker.transactional_id, marker.result) == (TXN1, result)
    assert marker.partitions == (TopicPartition("topic1", 0), TopicPartition("topic1", 1))
    loaded = coordinator.transaction_metadata(TXN1)
    assert loaded is not None and loaded.pending_state is not None


def test_should_write_txn_markers_for_transaction_in_prepared_commit_state() -> None:
    _markers_on_load(S.PREPARE_COMMIT, TransactionResult.COMMIT)


def test_should_write_txn_markers_for_transaction_in_prepared_abort_state() -> None:
    _markers_on_load(S.PREPARE_ABORT, TransactionResult.ABORT)


def _expiration(state: S) -> tuple[TransactionCoordinator, list[TransactionLogRecord]]:
    coordinator = TransactionCoordinator(CONFIG)
    coordinator.on_loaded(NOW)
    m1 = _m(TXN1, 1, state)
    m1.txn_last_update_timestamp = NOW - CONFIG.transactional_id_expiration_ms
    coordinator.manager.put_transaction_state_if_not_exists(m1)
    coordinator.manager.put_transaction_state_if_not_exists(_m(TXN2, 2))
    result = coordinator.fire_timer(REMOVE_EXPIRED_TRANSACTIONAL_IDS, NOW)
    coordinator.append_done(result, NOW)
    return coordinator, log_records(result)


def _usable(coordinator: TransactionCoordinator, txn_id: str) -> bool:
    metadata = coordinator.transaction_metadata(txn_id)
    return metadata is not None and metadata.pending_state is None


def _removed(state: S) -> None:
    coordinator, records = _expiration(state)
    assert records == [TransactionLogRecord(TransactionLogKey(TXN1), None)]
    assert coordinator.transaction_metadata(TXN1) is None
    assert _usable(coordinator, TXN2)


def _kept(state: S) -> None:
    coordinator, records = _expiration(state)
    assert records == []
    assert _usable(coordinator, TXN1) and _usable(coordinator, TXN2)


def test_should_remove_complete_commit_expired_transactional_ids() -> None:
    _removed(S.COMPLETE_COMMIT)


def test_should_remove_complete_abort_expired_transactional_ids() -> None:
    _removed(S.COMPLETE_ABORT)


def test_should_remove_empty_expired_transactional_ids() -> None:
    _removed(S.EMPTY)


def test_should_not_remove_ongoing_transactional_ids() -> None:
    _kept(S.ONGOING)


def test_should_not_remove_prepare_abort_transactional_ids() -> None:
    _kept(S.PREPARE_ABORT)


def test_should_not_remove_prepare_commit_transactional_ids() -> None:
    _kept(S.PREPARE_COMMIT)


def test_successful_reimmigration() -> None:
    t1 = _m(TXN1, 1, S.PREPARE_COMMIT)
    t1.add_partitions({TopicPartition("topic1", 0), TopicPartition("topic1", 1)})
    manager = TransactionStateManager(CONFIG)
    for epoch in (0, 1):  # loaded again at epoch 1 without having been unloaded
        manager.begin_loading(0, epoch)
        manager.replay(_record(t1))
        manager.complete_loading(0, epoch)
        assert manager.loading_epochs() == {}
    assert manager.owned_partitions == {0: 1}


def test_ignore_unknown_record_type() -> None:
    """Kafka skips keys of unknown versions while loading; here the storage layer decodes
    records, and an unknown value status byte is refused (ValueError) as Kafka throws."""
    t1 = _m(TXN1, 1, S.PREPARE_COMMIT)
    t1.add_partitions({TopicPartition("topic1", 0), TopicPartition("topic1", 1)})
    manager = TransactionStateManager(CONFIG)
    manager.begin_loading(0, 1)
    manager.replay(_record(t1))
    manager.complete_loading(0, 1)
    found = manager.get_transaction_state(TXN1)
    assert isinstance(found, tuple) and found[1] is not None
    loaded = found[1]
    assert (loaded.producer_id, loaded.prev_producer_id, loaded.producer_epoch) == (
        t1.producer_id,
        t1.prev_producer_id,
        t1.producer_epoch,
    )
    assert (loaded.last_producer_epoch, loaded.txn_timeout_ms, loaded.state) == (
        t1.last_producer_epoch,
        t1.txn_timeout_ms,
        t1.state,
    )
    assert loaded.topic_partitions == t1.topic_partitions
    assert manager.owned_partitions == {0: 1}
    manager.begin_loading(0, 2)
    record = _record(t1)
    assert record.value is not None
    bad = TransactionLogRecord(record.key, dataclasses.replace(record.value, transaction_status=9))
    with pytest.raises(ValueError):
        manager.replay(bad)


def test_transaction_version_in_transaction_manager() -> None:
    """transaction.version decides the TransactionLogValue version written (0 -> v0, 1 and
    2 -> v1, ``TransactionVersion.transactionLogValueVersion``); 3 does not exist."""
    for level, value_version in ((0, 0), (1, 1), (2, 1)):
        transit = _m(TXN1, 1).prepare_no_transit()
        written = TxnConfig(transaction_version=level).log_value_version
        assert value_from_transit(transit, written).version == value_version
    with pytest.raises(ValueError, match=r"transaction\.version"):
        TxnConfig(transaction_version=3)


def test_complete_transition_when_append_succeeded() -> None:
    coordinator = TransactionCoordinator(CONFIG)
    coordinator.on_loaded(NOW)
    m1 = _m(TXN1, 1)
    coordinator.manager.put_transaction_state_if_not_exists(m1)
    body = {"v3_and_below_transactional_id": TXN1, "v3_and_below_producer_id": 1,
            "v3_and_below_producer_epoch": 0,
            "v3_and_below_topics": [{"name": "topic1", "partitions": [0]}]}
    result = handle_add_partitions_to_txn(coordinator, Version(3), body, "t", NOW)
    (record,) = log_records(result)
    assert record.value is not None
    assert (m1.state, m1.pending_state) == (S.EMPTY, S.ONGOING)  # not before it is durable
    coordinator.append_done(result, NOW)
    assert coordinator.manager.get_transaction_state(TXN1) == (0, m1)
    assert (m1.state, m1.pending_state) == (S.ONGOING, None)


def test_transaction_expiration_should_not_fail_with_uninitialized_transaction_metadata() -> None:
    coordinator = TransactionCoordinator(CONFIG)
    coordinator.on_loaded(NOW)
    # Created by an InitProducerId whose append failed: epoch -1, never written.
    fresh = meta(
        S.EMPTY,
        transactional_id="id",
        producer_id=1,
        producer_epoch=-1,
        txn_timeout_ms=TIMEOUT,
        last_update=NOW,
    )
    coordinator.manager.put_transaction_state_if_not_exists(fresh)
    later = NOW + CONFIG.transactional_id_expiration_ms + 1
    result = coordinator.fire_timer(REMOVE_EXPIRED_TRANSACTIONAL_IDS, later)
    assert TransactionLogRecord(TransactionLogKey("id"), None) in log_records(result)
    coordinator.append_done(result, later)
    assert coordinator.manager.get_transaction_state("id") == (0, None)


def test_load_transaction_metadata_with_corrupted_log() -> None:
    # Nothing readable in the partition: the load still completes and owns it.
    manager = TransactionStateManager(CONFIG)
    manager.begin_loading(0, 0)
    assert manager.complete_loading(0, 0) == []
    assert (manager.loading_epochs(), manager.owned_partitions) == ({}, {0: 0})

"""Kafka's TransactionCoordinatorTest.scala, continued (the first part is
test_transaction_coordinator.py): InitProducerId on an existing transaction (epoch bumps,
fencing, producer-id rotation), partition emigration, timed-out transactions,
DescribeTransactions, and checks beyond Kafka's list.

As in the first part, the metadata is placed in a real cache (``Driver.place``) and "appended"
means a TransactionLogRecord in the Result.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from txn_coordinator_support import FAILED, TIMEOUT, TV, loading, txn_records
from txn_support import (
    PRODUCER_EPOCH,
    PRODUCER_ID,
    TP1,
    TXN_ID,
    Driver,
    InitProducerIdResponse,
    Version,
    meta,
)

from coordinator.txn.config import TxnConfig
from coordinator.txn.coordinator import TransactionCoordinator
from coordinator.txn.handlers import handle_describe_transactions
from coordinator.txn.state import SHORT_MAX, TopicPartition
from coordinator.txn.timers import ABORT_TIMED_OUT_TRANSACTIONS
from coordinator.txn.transaction_state import TransactionResult, TransactionState
from wire.constants import NO_PRODUCER_EPOCH, NO_PRODUCER_ID
from wire.constants import ErrorCode as E

S = TransactionState


@pytest.fixture
def d() -> Driver:
    return Driver()


# ---------------------------------------------------------------------- InitProducerId again


def _increment_epoch_and_update_metadata(d: Driver, state: S, tv: int = 0) -> None:
    d.now = 5
    metadata = d.place(
        meta(state, txn_timeout_ms=TIMEOUT, prev_producer_id=PRODUCER_ID, start=0, last_update=0,
             version=tv)
    )
    assert d.init(TXN_ID, 10) == InitProducerIdResponse(E.NONE, PRODUCER_ID, PRODUCER_EPOCH + 1)
    assert (metadata.txn_timeout_ms, metadata.txn_last_update_timestamp) == (10, 5)
    assert (metadata.producer_id, metadata.producer_epoch) == (PRODUCER_ID, PRODUCER_EPOCH + 1)


def test_should_increment_epoch_and_update_metadata_on_handle_init_pid_when_existing_empty_transaction(  # noqa: E501
    d: Driver,
) -> None:
    _increment_epoch_and_update_metadata(d, S.EMPTY)


@TV
def test_should_increment_epoch_and_update_metadata_on_handle_init_pid_when_existing_complete_transaction(  # noqa: E501
    d: Driver, tv: int
) -> None:
    _increment_epoch_and_update_metadata(d, S.COMPLETE_ABORT, tv)


@TV
def test_should_increment_epoch_and_update_metadata_on_handle_init_pid_when_existing_complete_commit_transaction(  # noqa: E501
    d: Driver, tv: int
) -> None:
    _increment_epoch_and_update_metadata(d, S.COMPLETE_COMMIT, tv)


def _concurrent_on_init_in_prepare(d: Driver, state: S) -> None:
    d.place(
        meta(
            state,
            producer_id=0,
            producer_epoch=0,
            txn_timeout_ms=0,
            partitions={TopicPartition("topic", 1)},
            start=0,
        )
    )
    assert d.init(TXN_ID, 10) == FAILED


def test_should_wait_for_commit_to_complete_on_handle_init_pid_and_existing_transaction_in_prepare_commit_state(  # noqa: E501
    d: Driver,
) -> None:
    _concurrent_on_init_in_prepare(d, S.PREPARE_COMMIT)


def test_should_wait_for_commit_to_complete_on_handle_init_pid_and_existing_transaction_in_prepare_abort_state(  # noqa: E501
    d: Driver,
) -> None:
    _concurrent_on_init_in_prepare(d, S.PREPARE_ABORT)


def test_should_abort_transaction_on_handle_init_pid_when_existing_transaction_in_ongoing_state(
    d: Driver,
) -> None:
    d.place(
        meta(
            S.ONGOING,
            last_producer_epoch=PRODUCER_EPOCH - 1,
            txn_timeout_ms=TIMEOUT,
            partitions={TP1},
            start=0,
        )
    )
    assert d.init(TXN_ID, TIMEOUT) == FAILED
    (value,) = txn_records(d)
    # The abort is written at the fencing epoch, with the last epoch forgotten.
    assert (value.state, value.producer_epoch, value.transaction_start_timestamp_ms) == (
        S.PREPARE_ABORT,
        PRODUCER_EPOCH + 1,
        0,
    )
    (marker,) = d.last.markers
    assert (marker.result, marker.producer_epoch) == (TransactionResult.ABORT, PRODUCER_EPOCH + 1)
    assert d.coordinator.transaction_metadata(TXN_ID).last_producer_epoch == NO_PRODUCER_EPOCH  # type: ignore[union-attr]


def test_should_fail_to_abort_transaction_on_handle_init_pid_when_producer_epoch_is_smaller(
    d: Driver,
) -> None:
    # Kafka changes the metadata between two lookups; here the coordinator's own abort is
    # asked directly with an epoch below the current one.
    d.place(meta(S.ONGOING, producer_epoch=PRODUCER_EPOCH + 2, partitions={TP1}, start=0))
    fx = d.coordinator.effects()
    error, _, _ = d.coordinator.end_transaction(
        TXN_ID, PRODUCER_ID, PRODUCER_EPOCH + 1, TransactionResult.ABORT, False, 0, 0, fx
    )
    assert error == E.PRODUCER_FENCED and fx.records == []


def test_should_use_last_epoch_to_fence_when_epochs_are_exhausted(d: Driver) -> None:
    metadata = d.place(
        meta(
            S.ONGOING,
            producer_epoch=SHORT_MAX - 1,
            last_producer_epoch=SHORT_MAX - 2,
            prev_producer_id=PRODUCER_ID,
            txn_timeout_ms=TIMEOUT,
            partitions={TP1},
            start=0,
        )
    )
    assert metadata.is_producer_epoch_exhausted
    assert d.init(TXN_ID, TIMEOUT) == FAILED
    assert metadata.producer_epoch == SHORT_MAX
    (value,) = txn_records(d)
    assert (value.state, value.producer_id, value.producer_epoch) == (
        S.PREPARE_ABORT,
        PRODUCER_ID,
        SHORT_MAX,
    )
    # Once the abort completes, the retry rotates to a new producer id.
    d.write_markers()
    response = d.init(TXN_ID, TIMEOUT)
    assert response.error_code == E.NONE and response.producer_epoch == 0
    assert response.producer_id != PRODUCER_ID


def test_init_producer_id_with_no_last_producer_data(d: Driver) -> None:
    d.place(meta(producer_epoch=PRODUCER_EPOCH + 1, partitions=set(), txn_timeout_ms=TIMEOUT))
    response = d.init(TXN_ID, TIMEOUT, PRODUCER_ID, PRODUCER_EPOCH)
    assert response == InitProducerIdResponse(E.PRODUCER_FENCED)


def test_fence_producer_when_mapping_exists_with_different_producer_id(d: Driver) -> None:
    d.place(
        meta(
            producer_id=PRODUCER_ID + 1,
            prev_producer_id=PRODUCER_ID,
            last_producer_epoch=PRODUCER_EPOCH - 1,
            txn_timeout_ms=TIMEOUT,
        )
    )
    response = d.init(TXN_ID, TIMEOUT, PRODUCER_ID, PRODUCER_EPOCH)
    assert response == InitProducerIdResponse(E.PRODUCER_FENCED)
    # Before v4 the same is INVALID_PRODUCER_EPOCH.
    old = d.init(TXN_ID, TIMEOUT, PRODUCER_ID, PRODUCER_EPOCH, version=3)
    assert old == InitProducerIdResponse(E.INVALID_PRODUCER_EPOCH)


def test_init_producer_id_with_current_epoch_provided(d: Driver) -> None:
    d.place(
        meta(
            producer_epoch=10,
            last_producer_epoch=9,
            prev_producer_id=PRODUCER_ID,
            txn_timeout_ms=TIMEOUT,
        )
    )
    ok = InitProducerIdResponse(E.NONE, PRODUCER_ID, 11)
    assert d.init(TXN_ID, TIMEOUT, PRODUCER_ID, 10) == ok
    # A retry after a lost response gets the same answer.
    assert d.init(TXN_ID, TIMEOUT, PRODUCER_ID, 10) == ok


def test_init_producer_id_stale_current_epoch_provided(d: Driver) -> None:
    d.place(
        meta(
            producer_epoch=10,
            last_producer_epoch=9,
            prev_producer_id=PRODUCER_ID,
            txn_timeout_ms=TIMEOUT,
        )
    )
    assert d.init(TXN_ID, TIMEOUT) == InitProducerIdResponse(E.NONE, PRODUCER_ID, 11)
    # The old producer, still at epoch 10, is fenced.
    assert d.init(TXN_ID, TIMEOUT, PRODUCER_ID, 10) == InitProducerIdResponse(E.PRODUCER_FENCED)


def _rotated(d: Driver) -> int:
    d.place(
        meta(
            producer_epoch=SHORT_MAX - 1,
            last_producer_epoch=SHORT_MAX - 2,
            prev_producer_id=PRODUCER_ID,
            txn_timeout_ms=TIMEOUT,
        )
    )
    response = d.init(TXN_ID, TIMEOUT, PRODUCER_ID, SHORT_MAX - 1)
    assert response.error_code == E.NONE and response.producer_epoch == 0
    assert response.producer_id != PRODUCER_ID
    return int(response.producer_id)


def test_retry_init_producer_id_after_producer_id_rotation(d: Driver) -> None:
    new_pid = _rotated(d)
    # The retry of the request that rotated (old id, exhausted epoch) gets the same answer.
    retry = d.init(TXN_ID, TIMEOUT, PRODUCER_ID, SHORT_MAX - 1)
    assert retry == InitProducerIdResponse(E.NONE, new_pid, 0)


def test_init_producer_id_with_invalid_epoch_after_producer_id_rotation(d: Driver) -> None:
    _rotated(d)
    stale = d.init(TXN_ID, TIMEOUT, PRODUCER_ID, SHORT_MAX - 2)
    assert stale == InitProducerIdResponse(E.PRODUCER_FENCED)


def test_should_remove_transactions_for_partition_on_emigration(d: Driver) -> None:
    d.place(meta(S.ONGOING, partitions={TP1}, start=0))
    d.end()
    assert TXN_ID in d.coordinator.pending_markers()
    partition = d.coordinator.partition_for(TXN_ID)
    d.coordinator.unload_partition(partition, 0)
    assert d.coordinator.pending_markers() == {}
    assert d.init(TXN_ID, TIMEOUT) == InitProducerIdResponse(E.NOT_COORDINATOR)


# ---------------------------------------------------------------------- timeouts


def test_should_abort_expired_transactions_in_ongoing_state_and_bump_epoch(d: Driver) -> None:
    d.place(
        meta(
            S.ONGOING,
            prev_producer_id=PRODUCER_ID,
            txn_timeout_ms=TIMEOUT,
            partitions={TP1},
            start=0,
            last_update=0,
        )
    )
    interval = TxnConfig().transaction_abort_timed_out_transaction_cleanup_interval_ms
    d.now = interval
    d.tick(ABORT_TIMED_OUT_TRANSACTIONS)
    (value,) = txn_records(d)
    assert (value.state, value.producer_id, value.producer_epoch) == (
        S.PREPARE_ABORT,
        PRODUCER_ID,
        PRODUCER_EPOCH + 1,
    )
    assert (value.transaction_start_timestamp_ms, value.transaction_last_update_timestamp_ms) == (
        0,
        interval,
    )
    assert [t.deadline_ms for t in d.last.timers] == [2 * interval]


def test_should_not_accept_smaller_epoch_during_transaction_expiration(d: Driver) -> None:
    # Kafka's scan sees epoch 1 and the abort finds epoch 3; the abort with the scanned
    # epoch's fence (2) is refused.
    d.place(meta(S.ONGOING, producer_epoch=PRODUCER_EPOCH + 2, partitions={TP1}, start=0))
    fx = d.coordinator.effects()
    error, _, _ = d.coordinator.end_transaction(
        TXN_ID, PRODUCER_ID, PRODUCER_EPOCH + 1, TransactionResult.ABORT, False, 0, 0, fx
    )
    assert error == E.PRODUCER_FENCED


def test_should_not_abort_expired_transactions_that_have_a_pending_state_transition(
    d: Driver,
) -> None:
    metadata = d.place(meta(S.ONGOING, txn_timeout_ms=TIMEOUT, partitions={TP1}, start=0))
    metadata.prepare_abort_or_commit(S.PREPARE_COMMIT, 0, NO_PRODUCER_ID, 0)
    result = d.coordinator.fire_timer(ABORT_TIMED_OUT_TRANSACTIONS, 10_000)
    assert result.records == () and result.markers == ()


def test_should_not_bump_epoch_with_pending_transaction(d: Driver) -> None:
    metadata = d.place(meta(S.ONGOING, txn_timeout_ms=TIMEOUT, partitions={TP1}, start=0))
    metadata.prepare_abort_or_commit(S.PREPARE_COMMIT, 0, NO_PRODUCER_ID, 0)
    assert d.init(TXN_ID, TIMEOUT, PRODUCER_ID, 10) == FAILED
    assert metadata.producer_epoch == PRODUCER_EPOCH


# ---------------------------------------------------------------------- DescribeTransactions


def _describe(d: Driver, txn_id: str) -> Any:
    body = {"transactional_ids": [txn_id]}
    result = handle_describe_transactions(d.coordinator, Version(0), body, "t", d.now)
    (state,) = result.replies[0].response["transaction_states"]
    return SimpleNamespace(**state)


def test_describe_transactions_with_empty_transactional_id(d: Driver) -> None:
    state = _describe(d, "")
    assert (state.transactional_id, state.error_code) == ("", E.INVALID_REQUEST)


def test_describe_transactions_with_expiring_transactional_id(d: Driver) -> None:
    d.place(meta(S.DEAD, txn_timeout_ms=TIMEOUT, start=0))
    state = _describe(d, TXN_ID)
    assert (state.transactional_id, state.error_code) == (TXN_ID, E.TRANSACTIONAL_ID_NOT_FOUND)


def test_describe_transactions_while_coordinator_loading() -> None:
    state = _describe(loading(), TXN_ID)
    assert (state.transactional_id, state.error_code) == (TXN_ID, E.COORDINATOR_LOAD_IN_PROGRESS)


def test_describe_transactions(d: Driver) -> None:
    d.place(meta(S.ONGOING, txn_timeout_ms=TIMEOUT, partitions={TP1}, start=7))
    state = _describe(d, TXN_ID)
    assert state.error_code == E.NONE
    assert (state.transactional_id, state.producer_id, state.producer_epoch) == (
        TXN_ID,
        PRODUCER_ID,
        PRODUCER_EPOCH,
    )
    assert (state.transaction_timeout_ms, state.transaction_start_time_ms) == (TIMEOUT, 7)
    assert (state.transaction_state, state.topics) == (
        "Ongoing", [{"topic": "topic1", "partitions": [0]}])


# ---------------------------------------------------------------------- beyond Kafka's list


def test_invalid_transaction_timeout_is_refused(d: Driver) -> None:
    limit = TxnConfig().transaction_max_timeout_ms
    for bad in (0, -1, limit + 1):
        assert d.init(TXN_ID, bad) == InitProducerIdResponse(E.INVALID_TRANSACTION_TIMEOUT)
    assert d.init(TXN_ID, limit).error_code == E.NONE


def test_producer_id_without_epoch_is_an_invalid_request(d: Driver) -> None:
    assert d.init(TXN_ID, TIMEOUT, producer_id=5) == InitProducerIdResponse(E.INVALID_REQUEST)
    assert d.init(TXN_ID, TIMEOUT, producer_epoch=5) == InitProducerIdResponse(E.INVALID_REQUEST)


def test_add_partitions_with_an_unknown_partition_fails_them_all() -> None:
    d = Driver(partition_exists=lambda tp: tp.topic != "missing")
    d.init(TXN_ID, TIMEOUT)
    missing = TopicPartition("missing", 0)
    errors = d.add((TP1, missing), producer_id=0, producer_epoch=0)
    assert errors == {TP1: E.OPERATION_NOT_ATTEMPTED, missing: E.UNKNOWN_TOPIC_OR_PARTITION}
    assert d.last.records == ()


def test_end_txn_on_an_empty_transaction_is_invalid_txn_state(d: Driver) -> None:
    d.init(TXN_ID, TIMEOUT)
    assert d.end(producer_id=0, producer_epoch=0).error_code == E.INVALID_TXN_STATE


def test_add_offsets_adds_the_groups_offsets_partition(d: Driver) -> None:
    d.init(TXN_ID, TIMEOUT)
    assert d.add_offsets("g", producer_id=0, producer_epoch=0) == E.NONE
    metadata = d.coordinator.transaction_metadata(TXN_ID)
    # "g".hashCode() == 103, 103 % 50 == 3
    assert metadata.topic_partitions == {TopicPartition("__consumer_offsets", 3)}  # type: ignore[union-attr]
    assert d.add_offsets("g", producer_id=0, producer_epoch=5, version=1) == (
        E.INVALID_PRODUCER_EPOCH
    )


def test_not_owning_a_partition_while_others_are_owned() -> None:
    coordinator = TransactionCoordinator(owned_partitions=[0])
    coordinator.on_loaded(0)
    other = next(i for i in (f"id{n}" for n in range(100)) if coordinator.partition_for(i) != 0)
    mine = next(i for i in (f"id{n}" for n in range(100)) if coordinator.partition_for(i) == 0)
    assert coordinator.transaction_metadata(other) is None
    d = Driver(owned_partitions=[0])
    assert d.init(other, TIMEOUT).error_code == E.NOT_COORDINATOR
    assert d.init(mine, TIMEOUT).error_code == E.NONE


def test_the_previous_producer_id_is_accepted_only_at_an_exhausted_epoch(d: Driver) -> None:
    new_pid = _rotated(d)
    # The old id with the new id's epoch is not a retry of the rotation: fenced.
    assert d.init(TXN_ID, TIMEOUT, PRODUCER_ID, 0) == InitProducerIdResponse(E.PRODUCER_FENCED)
    assert d.init(TXN_ID, TIMEOUT, new_pid, 0) == InitProducerIdResponse(E.NONE, new_pid, 1)

"""Kafka's TransactionCoordinatorTest.scala, mirrored on the sans-I/O TransactionCoordinator:
InitProducerId, AddPartitionsToTxn and EndTxn requests.

Kafka mocks the state manager and the log append; here the metadata is placed in a real
cache (``Driver.place``) and "appended" means a TransactionLogRecord in the Result.
Kafka's EndTxn tests parameterised by transaction version run with 0 and 2 (an EndTxn v3 or
v5 here); the TV2-only tests are in test_transaction_coordinator_tv2.py. InitProducerId on an
existing transaction, timeouts, DescribeTransactions and the tests beyond Kafka's list are in
test_transaction_coordinator_epochs.py.
"""

from __future__ import annotations

from typing import Any

import pytest
from txn_coordinator_support import TIMEOUT, TV, loading, not_owning, txn_records
from txn_support import (
    PRODUCER_EPOCH,
    PRODUCER_ID,
    TP1,
    TP2,
    TXN_ID,
    Driver,
    InitProducerIdResponse,
    meta,
)

from coordinator.txn.state import SHORT_MAX, TopicPartition
from coordinator.txn.transaction_state import TransactionResult, TransactionState
from wire.constants import ErrorCode as E

S = TransactionState


@pytest.fixture
def d() -> Driver:
    return Driver()


# ---------------------------------------------------------------------- InitProducerId


def test_should_return_invalid_request_when_transactional_id_is_empty(d: Driver) -> None:
    assert d.init("", TIMEOUT) == InitProducerIdResponse(E.INVALID_REQUEST, -1, -1)
    assert d.init("", TIMEOUT) == InitProducerIdResponse(E.INVALID_REQUEST, -1, -1)


def test_should_accept_init_pid_and_return_next_pid_when_transactional_id_is_null(
    d: Driver,
) -> None:
    assert d.init(None, TIMEOUT) == InitProducerIdResponse(E.NONE, 0, 0)
    assert d.init(None, TIMEOUT) == InitProducerIdResponse(E.NONE, 1, 0)


def test_should_init_pid_with_epoch_zero_for_new_transactional_id(d: Driver) -> None:
    assert d.init(TXN_ID, TIMEOUT) == InitProducerIdResponse(E.NONE, 0, 0)
    assert txn_records(d)[0].producer_epoch == 0


def test_should_generate_new_producer_id_if_no_state_and_producer_id_and_epoch_provided(
    d: Driver,
) -> None:
    assert d.init(TXN_ID, TIMEOUT, PRODUCER_ID, PRODUCER_EPOCH) == InitProducerIdResponse(
        E.NONE, 0, 0
    )


def test_should_generate_new_producer_id_if_epochs_exhausted(d: Driver) -> None:
    d.place(
        meta(
            producer_epoch=SHORT_MAX - 1,
            last_producer_epoch=SHORT_MAX - 2,
            prev_producer_id=PRODUCER_ID,
            txn_timeout_ms=TIMEOUT,
        )
    )
    response = d.init(TXN_ID, TIMEOUT)
    assert response.error_code == E.NONE and response.producer_epoch == 0
    assert response.producer_id != PRODUCER_ID


def test_should_respond_with_not_coordinator_on_init_pid_when_not_coordinator() -> None:
    assert not_owning().init(TXN_ID, TIMEOUT) == InitProducerIdResponse(E.NOT_COORDINATOR)


def test_should_respond_with_coordinator_load_in_progress_on_init_pid_when_coordinator_loading() -> (  # noqa: E501
    None
):
    assert loading().init(TXN_ID, TIMEOUT) == InitProducerIdResponse(
        E.COORDINATOR_LOAD_IN_PROGRESS
    )


# ---------------------------------------------------------------------- AddPartitionsToTxn


def test_should_respond_with_invalid_pid_mapping_on_add_partitions_to_transaction_when_transactional_id_not_present(  # noqa: E501
    d: Driver,
) -> None:
    assert d.add(producer_id=0) == {TP1: E.INVALID_PRODUCER_ID_MAPPING}


def test_should_respond_with_invalid_request_add_partitions_to_transaction_when_transactional_id_is_empty(  # noqa: E501
    d: Driver,
) -> None:
    assert d.add(txn_id="") == {TP1: E.INVALID_REQUEST}


def test_should_respond_with_not_coordinator_on_add_partitions_when_not_coordinator() -> None:
    assert not_owning().add() == {TP1: E.NOT_COORDINATOR}


def test_should_respond_with_coordinator_load_in_progress_on_add_partitions_when_coordinator_loading() -> (  # noqa: E501
    None
):
    assert loading().add() == {TP1: E.COORDINATOR_LOAD_IN_PROGRESS}


def test_verify_partition_handling(d: Driver) -> None:
    def verify(producer_epoch: int, **kwargs: Any) -> dict[TopicPartition, int]:
        d.coordinator.manager.remove(TXN_ID)
        d.place(meta(producer_epoch=0, txn_timeout_ms=0, start=0, **kwargs))
        return d.add(producer_id=0, producer_epoch=producer_epoch, verify_only=True)

    # Another producer id: INVALID_PRODUCER_ID_MAPPING; another epoch: PRODUCER_FENCED.
    wrong_pid = verify(0, state=S.PREPARE_COMMIT, producer_id=1, partitions={TP1})
    assert wrong_pid == {TP1: E.INVALID_PRODUCER_ID_MAPPING}
    old_epoch = verify(1, state=S.PREPARE_COMMIT, producer_id=0, partitions={TP1})
    assert old_epoch == {TP1: E.PRODUCER_FENCED}
    preparing = verify(0, state=S.PREPARE_COMMIT, producer_id=0, partitions={TP1})
    assert preparing == {TP1: E.CONCURRENT_TRANSACTIONS}
    # A pending state does not matter: only whether the partition is in the transaction.
    d.coordinator.manager.remove(TXN_ID)
    ongoing = d.place(meta(S.ONGOING, producer_id=0, producer_epoch=0, start=0))
    ongoing.pending_state = S.COMPLETE_COMMIT
    assert d.add(producer_id=0, producer_epoch=0, verify_only=True) == {
        TP1: E.TRANSACTION_ABORTABLE
    }


def _concurrent_on_add(d: Driver, state: S) -> None:
    d.place(meta(state, producer_id=0, producer_epoch=0, txn_timeout_ms=0, start=0))
    assert d.add(producer_id=0, producer_epoch=0) == {TP1: E.CONCURRENT_TRANSACTIONS}


def test_should_respond_with_concurrent_transactions_on_add_partitions_when_state_is_prepare_commit(
    d: Driver,
) -> None:
    _concurrent_on_add(d, S.PREPARE_COMMIT)


def test_should_respond_with_concurrent_transaction_on_add_partitions_when_state_is_prepare_abort(
    d: Driver,
) -> None:
    _concurrent_on_add(d, S.PREPARE_ABORT)


def test_should_respond_with_producer_fenced_on_add_partitions_when_epochs_are_different(
    d: Driver,
) -> None:
    d.place(meta(S.PREPARE_COMMIT, producer_id=0, producer_epoch=10, last_producer_epoch=9))
    assert d.add(producer_id=0, producer_epoch=0) == {TP1: E.PRODUCER_FENCED}
    # Before v2 the client knows the same condition as INVALID_PRODUCER_EPOCH.
    assert d.add(producer_id=0, producer_epoch=0, version=1) == {TP1: E.INVALID_PRODUCER_EPOCH}


def _successful_add_partitions(d: Driver, previous: S, tv: int = 0) -> None:
    d.place(
        meta(
            previous,
            last_producer_epoch=PRODUCER_EPOCH - 1,
            txn_timeout_ms=TIMEOUT,
            start=d.now,
            last_update=d.now,
            version=tv,
        )
    )
    assert d.add() == {TP1: E.NONE}
    (value,) = txn_records(d)
    assert value.state == S.ONGOING
    assert d.coordinator.transaction_metadata(TXN_ID).topic_partitions == {TP1}  # type: ignore[union-attr]


def test_should_append_new_metadata_to_log_on_add_partitions_when_partitions_added(
    d: Driver,
) -> None:
    _successful_add_partitions(d, S.EMPTY)


def test_should_respond_with_success_on_add_partitions_when_state_is_ongoing(d: Driver) -> None:
    _successful_add_partitions(d, S.ONGOING)


@TV
def test_should_respond_with_success_on_add_partitions_when_state_is_complete_commit(
    d: Driver, tv: int
) -> None:
    _successful_add_partitions(d, S.COMPLETE_COMMIT, tv)


@TV
def test_should_respond_with_success_on_add_partitions_when_state_is_complete_abort(
    d: Driver, tv: int
) -> None:
    _successful_add_partitions(d, S.COMPLETE_ABORT, tv)


def test_should_respond_with_errors_none_on_add_partition_when_no_errors_and_partitions_the_same(
    d: Driver,
) -> None:
    d.place(meta(S.ONGOING, producer_id=0, producer_epoch=0, partitions={TP1}, start=0))
    assert d.add(producer_id=0, producer_epoch=0) == {TP1: E.NONE}
    assert d.last.records == ()  # already in the transaction: nothing written


def test_should_respond_with_errors_none_on_add_partition_when_ongoing_verify_only_and_partitions_the_same(  # noqa: E501
    d: Driver,
) -> None:
    d.place(meta(S.ONGOING, producer_id=0, producer_epoch=0, partitions={TP1}, start=0))
    assert d.add(producer_id=0, producer_epoch=0, verify_only=True) == {TP1: E.NONE}


def test_should_respond_with_invalid_txn_state_when_verify_only_and_partition_not_present(
    d: Driver,
) -> None:
    d.place(meta(S.EMPTY, producer_id=0, producer_epoch=0, partitions={TP1}, start=0))
    errors = d.add((TP1, TP2), producer_id=0, producer_epoch=0, verify_only=True)
    assert errors == {TP1: E.NONE, TP2: E.TRANSACTION_ABORTABLE}


# ---------------------------------------------------------------------- EndTxn

def _version(tv: int) -> int:
    """The EndTxn version a client of transaction version ``tv`` sends."""
    return 5 if tv >= 2 else 3


def _request_epoch(tv: int) -> int:
    """Kafka's ``requestEpoch``: a TV2 end already bumped the epoch the metadata holds."""
    return PRODUCER_EPOCH - 1 if tv >= 2 else PRODUCER_EPOCH


@TV
def test_should_reply_with_invalid_pid_mapping_on_end_txn_when_txn_id_doesnt_exist(
    d: Driver, tv: int
) -> None:
    response = d.end(producer_id=0, producer_epoch=0, version=_version(tv))
    assert response.error_code == E.INVALID_PRODUCER_ID_MAPPING


@TV
def test_should_reply_with_invalid_pid_mapping_on_end_txn_when_pid_dosent_match_mapped(
    d: Driver, tv: int
) -> None:
    d.place(meta(S.ONGOING, producer_id=10, producer_epoch=0, start=0))
    response = d.end(producer_id=0, producer_epoch=0, version=_version(tv))
    assert response.error_code == E.INVALID_PRODUCER_ID_MAPPING


@TV
def test_should_reply_with_producer_fenced_on_end_txn_when_epoch_is_not_same_as_transaction(
    d: Driver, tv: int
) -> None:
    d.place(meta(S.ONGOING, last_producer_epoch=PRODUCER_EPOCH - 1, start=0))
    assert d.end(producer_epoch=0, version=_version(tv)).error_code == E.PRODUCER_FENCED
    assert d.end(producer_epoch=0, version=1).error_code == E.INVALID_PRODUCER_EPOCH


@TV
def test_should_return_ok_on_end_txn_when_status_is_complete_commit_and_result_is_commit(
    d: Driver, tv: int
) -> None:
    d.place(meta(S.COMPLETE_COMMIT, last_producer_epoch=PRODUCER_EPOCH - 1, start=0, version=tv))
    response = d.end(commit=True, producer_epoch=_request_epoch(tv), version=_version(tv))
    assert (response.error_code, response.producer_id, response.producer_epoch) == (
        E.NONE,
        PRODUCER_ID,
        PRODUCER_EPOCH,
    )
    assert d.last.records == () and d.last.markers == ()


@TV
def test_should_return_ok_on_end_txn_when_status_is_complete_abort_and_result_is_abort(
    d: Driver, tv: int
) -> None:
    d.place(meta(S.COMPLETE_ABORT, last_producer_epoch=PRODUCER_EPOCH - 1, start=0, version=tv))
    response = d.end(commit=False, producer_epoch=_request_epoch(tv), version=_version(tv))
    assert response.error_code == E.NONE
    assert d.last.records == ()


@TV
def test_should_return_invalid_txn_request_on_end_txn_request_when_status_is_complete_abort_and_result_is_not_abort(  # noqa: E501
    d: Driver, tv: int
) -> None:
    d.place(meta(S.COMPLETE_ABORT, last_producer_epoch=PRODUCER_EPOCH - 1, start=0, version=tv))
    response = d.end(commit=True, producer_epoch=_request_epoch(tv), version=_version(tv))
    assert response.error_code == E.INVALID_TXN_STATE


@TV
def test_should_return_invalid_txn_request_on_end_txn_request_when_status_is_complete_commit_and_result_is_not_commit(  # noqa: E501
    d: Driver, tv: int
) -> None:
    d.place(meta(S.COMPLETE_COMMIT, last_producer_epoch=PRODUCER_EPOCH - 1, start=0, version=tv))
    response = d.end(commit=False, producer_epoch=_request_epoch(tv), version=_version(tv))
    assert response.error_code == E.INVALID_TXN_STATE


@TV
def test_should_return_concurrent_transactions_on_end_txn_request_when_status_is_prepare_commit(
    d: Driver, tv: int
) -> None:
    d.place(meta(S.PREPARE_COMMIT, last_producer_epoch=PRODUCER_EPOCH - 1, start=0, version=tv))
    response = d.end(commit=True, producer_epoch=_request_epoch(tv), version=_version(tv))
    assert response.error_code == E.CONCURRENT_TRANSACTIONS


@TV
def test_should_return_invalid_txn_request_on_end_txn_request_when_status_is_prepare_abort(
    d: Driver, tv: int
) -> None:
    d.place(meta(S.PREPARE_ABORT, start=0, version=tv))
    response = d.end(commit=True, producer_epoch=_request_epoch(tv), version=_version(tv))
    assert response.error_code == E.INVALID_TXN_STATE


def _prepare_on_end_txn(d: Driver, commit: bool, target: S, tv: int) -> None:
    d.place(meta(S.ONGOING, partitions={TP1}, txn_timeout_ms=TIMEOUT, start=0))
    # Transaction version 2 bumps the epoch with the PrepareCommit/PrepareAbort record.
    epoch = PRODUCER_EPOCH + 1 if tv >= 2 else PRODUCER_EPOCH
    response = d.end(commit=commit, version=_version(tv))
    assert (response.error_code, response.producer_epoch) == (E.NONE, epoch)
    (value,) = txn_records(d)
    assert (value.state, value.producer_epoch, value.transaction_start_timestamp_ms,
            value.client_transaction_version) == (target, epoch, 0, tv)
    (marker,) = d.last.markers
    result = TransactionResult.COMMIT if commit else TransactionResult.ABORT
    assert (marker.result, marker.partitions, marker.producer_epoch) == (result, (TP1,), epoch)


@TV
def test_should_append_prepare_commit_to_log_on_end_txn_when_status_is_ongoing_and_result_is_commit(
    d: Driver, tv: int
) -> None:
    _prepare_on_end_txn(d, True, S.PREPARE_COMMIT, tv)


@TV
def test_should_append_prepare_abort_to_log_on_end_txn_when_status_is_ongoing_and_result_is_abort(
    d: Driver, tv: int
) -> None:
    _prepare_on_end_txn(d, False, S.PREPARE_ABORT, tv)


@TV
def test_should_respond_with_invalid_request_on_end_txn_when_transactional_id_is_empty(
    d: Driver, tv: int
) -> None:
    response = d.end(txn_id="", producer_id=0, producer_epoch=0, version=_version(tv))
    assert response.error_code == E.INVALID_REQUEST


@TV
def test_should_respond_with_not_coordinator_on_end_txn_when_is_not_coordinator_for_id(
    tv: int,
) -> None:
    response = not_owning().end(producer_id=0, producer_epoch=0, version=_version(tv))
    assert response.error_code == E.NOT_COORDINATOR


@TV
def test_should_respond_with_coordinator_load_in_progress_on_end_txn_when_coordinator_is_loading(
    tv: int,
) -> None:
    response = loading().end(producer_id=0, producer_epoch=0, version=_version(tv))
    assert response.error_code == E.COORDINATOR_LOAD_IN_PROGRESS


def _end_txn_epoch(d: Driver, metadata_epoch: int, request_epoch: int, tv: int) -> None:
    d.place(meta(S.COMPLETE_COMMIT, producer_epoch=metadata_epoch, last_producer_epoch=1,
                 start=0, version=tv))
    response = d.end(producer_epoch=request_epoch, version=_version(tv))
    assert response.error_code == E.PRODUCER_FENCED


@TV
def test_should_return_invalid_epoch_on_end_txn_when_epoch_is_larger(d: Driver, tv: int) -> None:
    _end_txn_epoch(d, 1, 2, tv)


@TV
def test_should_return_invalid_epoch_on_end_txn_when_epoch_is_smaller(d: Driver, tv: int) -> None:
    # Since a TV2 end bumps the epoch, the TV2 request is one epoch older.
    _end_txn_epoch(d, 2, _request_epoch(tv), tv)

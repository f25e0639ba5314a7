"""Persist, then apply, for transactions: the append of every kind of transaction log record
fails once, and the live coordinator is then exactly what a restart rebuilds from the records
that did land, the requester hears Kafka's mapped error (``appendTransactionToLog``: a
storage error is NOT_COORDINATOR), and the next attempt succeeds.

The Driver's log is the records whose appends succeeded (``Driver.records``); ``failures``
makes the next appends fail (``TransactionCoordinator.append_failed``).
"""

from __future__ import annotations

import pytest
from txn_support import TP1, TP2, TXN_ID, Cluster, Driver, EndTxnResponse, InitProducerIdResponse

from coordinator.txn.config import TxnConfig
from coordinator.txn.coordinator import TransactionCoordinator
from coordinator.txn.timers import ABORT_TIMED_OUT_TRANSACTIONS, REMOVE_EXPIRED_TRANSACTIONAL_IDS
from coordinator.txn.transaction_state import TransactionState
from wire.constants import ErrorCode as E

S = TransactionState
CONFIG = TxnConfig(transaction_version=1)


def replayed(d: Driver) -> TransactionCoordinator:
    """A restart: a fresh coordinator replaying the log, loaded."""
    fresh = TransactionCoordinator(d.coordinator.config)
    for record in d.records():
        fresh.replay(record)
    fresh.on_loaded(d.now)
    return fresh


def assert_live_equals_replay(d: Driver) -> None:
    """Every owned id is what a replay yields, and nothing is left half-prepared."""
    assert d.coordinator.hard_state() == replayed(d).hard_state()
    for txn_id in d.coordinator.transactional_ids():
        metadata = d.coordinator.transaction_metadata(txn_id)
        assert metadata is not None and metadata.pending_state is None, metadata


def producer(c: Cluster) -> tuple[int, int]:
    """A transactional producer initialised: (producer id, epoch)."""
    answer = c.driver.init(TXN_ID, 60_000)
    assert answer.error_code == E.NONE
    return answer.producer_id, answer.producer_epoch


def ongoing(c: Cluster) -> tuple[int, int]:
    """A producer whose transaction holds TP1 and TP2."""
    pid, epoch = producer(c)
    assert c.driver.add((TP1, TP2), producer_id=pid, producer_epoch=epoch) == {
        TP1: E.NONE, TP2: E.NONE}
    return pid, epoch


@pytest.fixture
def c() -> Cluster:
    return Cluster(CONFIG)


# --------------------------------------------------------------------------- InitProducerId


def test_failed_first_init_producer_id_forgets_the_new_id(c: Cluster) -> None:
    c.driver.failures = 1
    assert c.driver.init(TXN_ID, 60_000) == InitProducerIdResponse(E.NOT_COORDINATOR)
    assert c.driver.coordinator.transaction_metadata(TXN_ID) is None
    assert_live_equals_replay(c.driver)
    producer(c)  # the retry succeeds
    assert_live_equals_replay(c.driver)


def test_failed_epoch_bump_keeps_the_epoch(c: Cluster) -> None:
    pid, epoch = producer(c)
    c.driver.failures = 1
    assert c.driver.init(TXN_ID, 60_000) == InitProducerIdResponse(E.NOT_COORDINATOR)
    metadata = c.driver.coordinator.transaction_metadata(TXN_ID)
    assert metadata is not None and (metadata.producer_id, metadata.producer_epoch) == (pid, epoch)
    assert_live_equals_replay(c.driver)
    assert producer(c) == (pid, epoch + 1)


def test_failed_fence_of_an_open_transaction_leaves_it_open(c: Cluster) -> None:
    _, epoch = ongoing(c)
    c.driver.failures = 1  # the PrepareAbort of the fence
    assert c.driver.init(TXN_ID, 60_000) == InitProducerIdResponse(E.NOT_COORDINATOR)
    metadata = c.driver.coordinator.transaction_metadata(TXN_ID)
    assert metadata is not None
    assert (metadata.state, metadata.producer_epoch) == (S.ONGOING, epoch)
    assert c.driver.last.markers == ()
    assert_live_equals_replay(c.driver)
    # The old producer is not fenced by what never reached the log; a new fence works.
    assert c.driver.init(TXN_ID, 60_000) == InitProducerIdResponse(E.CONCURRENT_TRANSACTIONS)
    (marker,) = c.driver.last.markers
    assert marker.producer_epoch == epoch + 1
    assert_live_equals_replay_but_completing(c.driver)


def assert_live_equals_replay_but_completing(d: Driver) -> None:
    """As ``assert_live_equals_replay``, while markers are being written (the completion is
    pending, as right after a restart)."""
    assert d.coordinator.hard_state() == replayed(d).hard_state()


# --------------------------------------------------------------------------- partitions


def test_failed_add_partitions_begins_nothing(c: Cluster) -> None:
    pid, epoch = producer(c)
    c.driver.failures = 1
    assert c.driver.add((TP1,), producer_id=pid, producer_epoch=epoch) == {
        TP1: E.NOT_COORDINATOR}
    metadata = c.driver.coordinator.transaction_metadata(TXN_ID)
    assert metadata is not None and (metadata.state, metadata.topic_partitions) == (S.EMPTY, set())
    assert_live_equals_replay(c.driver)
    assert c.driver.add((TP1,), producer_id=pid, producer_epoch=epoch) == {TP1: E.NONE}
    assert_live_equals_replay(c.driver)


def test_failed_add_to_an_open_transaction_keeps_its_partitions(c: Cluster) -> None:
    pid, epoch = producer(c)
    assert c.driver.add((TP1,), producer_id=pid, producer_epoch=epoch) == {TP1: E.NONE}
    c.driver.failures = 1
    assert c.driver.add_offsets("group", producer_id=pid, producer_epoch=epoch) == (
        E.NOT_COORDINATOR)
    metadata = c.driver.coordinator.transaction_metadata(TXN_ID)
    assert metadata is not None and metadata.topic_partitions == {TP1}
    assert_live_equals_replay(c.driver)


# --------------------------------------------------------------------------- EndTxn


@pytest.mark.parametrize("commit", [True, False], ids=["prepare-commit", "prepare-abort"])
@pytest.mark.parametrize("version", [3, 5], ids=["tv0", "tv2"])
def test_failed_prepare_leaves_the_transaction_open(c: Cluster, commit: bool, version: int) -> None:
    pid, epoch = ongoing(c)
    c.driver.failures = 1
    answer = c.driver.end(commit, producer_id=pid, producer_epoch=epoch, version=version)
    assert answer == EndTxnResponse(E.NOT_COORDINATOR)
    assert c.driver.last.markers == ()
    metadata = c.driver.coordinator.transaction_metadata(TXN_ID)
    assert metadata is not None
    assert (metadata.state, metadata.producer_epoch) == (S.ONGOING, epoch)
    assert_live_equals_replay(c.driver)
    retried = c.driver.end(commit, producer_id=pid, producer_epoch=epoch, version=version)
    assert retried.error_code == E.NONE
    c.deliver_markers()
    assert_live_equals_replay(c.driver)


@pytest.mark.parametrize("commit", [True, False], ids=["complete-commit", "complete-abort"])
def test_failed_completion_is_prepared_again_and_completed_by_the_next_scan(
    c: Cluster, commit: bool
) -> None:
    pid, epoch = ongoing(c)
    assert c.driver.end(commit, producer_id=pid, producer_epoch=epoch).error_code == E.NONE
    c.driver.failures = 1
    c.deliver_markers()  # the markers are written; the CompleteCommit/CompleteAbort is lost
    prepared = S.PREPARE_COMMIT if commit else S.PREPARE_ABORT
    metadata = c.driver.coordinator.transaction_metadata(TXN_ID)
    assert metadata is not None
    assert (metadata.state, metadata.topic_partitions) == (prepared, {TP1, TP2})
    assert c.driver.coordinator.pending_markers() == {}
    assert_live_equals_replay(c.driver)
    # As after a restart, the next scan writes the markers again, then the completion.
    c.driver.now += CONFIG.transaction_abort_timed_out_transaction_cleanup_interval_ms
    (marker,) = c.driver.tick(ABORT_TIMED_OUT_TRANSACTIONS).markers
    assert set(marker.partitions) == {TP1, TP2}
    c.deliver_markers()
    assert metadata.state == (S.COMPLETE_COMMIT if commit else S.COMPLETE_ABORT)
    assert_live_equals_replay(c.driver)


def test_failed_marker_write_is_retried_by_the_next_scan(c: Cluster) -> None:
    pid, epoch = ongoing(c)
    assert c.driver.end(True, producer_id=pid, producer_epoch=epoch).error_code == E.NONE
    assert c.driver.coordinator.pending_markers()
    failed = c.driver.coordinator.markers_failed(TXN_ID, E.KAFKA_STORAGE_ERROR, c.driver.now)
    c.driver.settle(failed)
    assert c.driver.coordinator.pending_markers() == {}
    assert_live_equals_replay(c.driver)
    c.driver.now += CONFIG.transaction_abort_timed_out_transaction_cleanup_interval_ms
    assert c.driver.tick(ABORT_TIMED_OUT_TRANSACTIONS).markers
    c.deliver_markers()
    metadata = c.driver.coordinator.transaction_metadata(TXN_ID)
    assert metadata is not None and metadata.state == S.COMPLETE_COMMIT


# --------------------------------------------------------------------------- the coordinator's own


def test_failed_timeout_abort_leaves_the_transaction_to_the_next_scan(c: Cluster) -> None:
    answer = c.driver.init(TXN_ID, 1000)
    pid, epoch = answer.producer_id, answer.producer_epoch
    assert c.driver.add((TP1,), producer_id=pid, producer_epoch=epoch) == {TP1: E.NONE}
    c.driver.now += 20_000
    c.driver.failures = 1
    assert c.driver.tick(ABORT_TIMED_OUT_TRANSACTIONS).markers == ()
    metadata = c.driver.coordinator.transaction_metadata(TXN_ID)
    assert metadata is not None and (metadata.state, metadata.producer_epoch) == (S.ONGOING, epoch)
    assert_live_equals_replay(c.driver)
    c.driver.now += CONFIG.transaction_abort_timed_out_transaction_cleanup_interval_ms
    (marker,) = c.driver.tick(ABORT_TIMED_OUT_TRANSACTIONS).markers
    assert marker.producer_epoch == epoch + 1
    c.deliver_markers()
    assert metadata.state == S.COMPLETE_ABORT
    assert_live_equals_replay(c.driver)


def test_failed_expiration_tombstone_keeps_the_id(c: Cluster) -> None:
    producer(c)
    c.driver.now += CONFIG.transactional_id_expiration_ms + 1
    c.driver.failures = 1
    c.driver.tick(REMOVE_EXPIRED_TRANSACTIONAL_IDS)
    assert c.driver.coordinator.transaction_metadata(TXN_ID) is not None
    assert_live_equals_replay(c.driver)
    c.driver.tick(REMOVE_EXPIRED_TRANSACTIONAL_IDS)
    assert c.driver.coordinator.transaction_metadata(TXN_ID) is None
    assert_live_equals_replay(c.driver)


# --------------------------------------------------------------------------- error mapping


@pytest.mark.parametrize(
    ("append_error", "answer"),
    [
        (E.KAFKA_STORAGE_ERROR, E.NOT_COORDINATOR),
        (E.NOT_LEADER_OR_FOLLOWER, E.NOT_COORDINATOR),
        (E.UNKNOWN_TOPIC_OR_PARTITION, E.COORDINATOR_NOT_AVAILABLE),
        (E.NOT_ENOUGH_REPLICAS, E.COORDINATOR_NOT_AVAILABLE),
        (E.NOT_ENOUGH_REPLICAS_AFTER_APPEND, E.COORDINATOR_NOT_AVAILABLE),
        (E.REQUEST_TIMED_OUT, E.COORDINATOR_NOT_AVAILABLE),
        (E.MESSAGE_TOO_LARGE, E.UNKNOWN_SERVER_ERROR),
        (E.RECORD_LIST_TOO_LARGE, E.UNKNOWN_SERVER_ERROR),
        (E.UNKNOWN_SERVER_ERROR, E.UNKNOWN_SERVER_ERROR),
    ],
)
def test_append_errors_map_as_kafkas_transaction_log(
    c: Cluster, append_error: E, answer: E
) -> None:
    pid, epoch = ongoing(c)
    c.driver.failures = 1
    c.driver.append_error = append_error
    assert c.driver.end(True, producer_id=pid, producer_epoch=epoch) == EndTxnResponse(answer)
    assert_live_equals_replay(c.driver)


def test_a_restart_after_failures_resumes_what_the_log_holds(c: Cluster) -> None:
    pid, epoch = ongoing(c)
    assert c.driver.end(True, producer_id=pid, producer_epoch=epoch).error_code == E.NONE
    c.driver.failures = 1
    c.deliver_markers()
    live = c.driver.coordinator.hard_state()
    loaded = c.restart()
    assert c.driver.coordinator.hard_state() == live
    (marker,) = loaded.markers
    assert set(marker.partitions) == {TP1, TP2}

"""Kafka's TransactionMetadataTest.scala, mirrored on coordinator.txn.state."""

from __future__ import annotations

from typing import Any

import pytest
from txn_support import meta

from coordinator.txn.state import (
    SHORT_MAX,
    IllegalTransitionError,
    TopicPartition,
    TransactionMetadata,
    TxnTransitMetadata,
)
from coordinator.txn.transaction_state import TransactionState
from wire.constants import NO_PRODUCER_EPOCH, NO_PRODUCER_ID

S = TransactionState
PID = 23423
NOW = 1_000


def _bump(m: TransactionMetadata, expected: int | None, now: int = NOW) -> TxnTransitMetadata:
    transit = m.prepare_increment_producer_epoch(30_000, expected, now)
    assert transit is not None, "prepare_increment_producer_epoch was fenced"
    return transit


def _m(state: S = S.EMPTY, epoch: int = 1, **kwargs: Any) -> TransactionMetadata:
    return meta(
        state,
        transactional_id="txnlId",
        producer_id=PID,
        producer_epoch=epoch,
        last_update=NOW,
        **kwargs,
    )


def test_initialize_epoch() -> None:
    m = _m(epoch=NO_PRODUCER_EPOCH)
    m.complete_transition_to(_bump(m, None))
    assert (m.producer_id, m.producer_epoch, m.last_producer_epoch) == (PID, 0, NO_PRODUCER_EPOCH)


def test_normal_epoch_bump() -> None:
    m = _m(epoch=735)
    m.complete_transition_to(_bump(m, None))
    assert (m.producer_id, m.producer_epoch, m.last_producer_epoch) == (PID, 736, NO_PRODUCER_EPOCH)


def test_bump_epoch_not_allowed_if_epochs_exhausted() -> None:
    m = _m(epoch=SHORT_MAX - 1)
    assert m.is_producer_epoch_exhausted
    with pytest.raises(IllegalTransitionError):
        m.prepare_increment_producer_epoch(30_000, None, NOW)


def test_tolerate_update_time_shift_during_epoch_bump() -> None:
    m = _m(epoch=1, start=1)
    m.complete_transition_to(_bump(m, 1, NOW - 1))
    assert (m.producer_id, m.producer_epoch, m.last_producer_epoch) == (PID, 2, 1)
    # -1 as in Kafka's Java port of this test (the Scala one kept 1; the log says -1).
    assert (m.txn_start_timestamp, m.txn_last_update_timestamp) == (-1, NOW - 1)


def test_tolerate_update_time_reset_during_producer_id_rotation() -> None:
    m = _m(epoch=1, start=1)
    m.complete_transition_to(m.prepare_producer_id_rotation(PID + 1, 30_000, NOW - 1, True))
    assert (m.producer_id, m.producer_epoch, m.last_producer_epoch) == (PID + 1, 0, 1)
    assert (m.txn_start_timestamp, m.txn_last_update_timestamp) == (-1, NOW - 1)


def test_tolerate_time_shift_during_add_partitions() -> None:
    t1, t2 = TopicPartition("topic1", 0), TopicPartition("topic2", 0)
    m = _m(epoch=1, start=NOW)
    # From Empty the start time becomes the update time, even an earlier one.
    m.complete_transition_to(m.prepare_add_partitions({t1}, NOW - 1))
    assert m.topic_partitions == {t1}
    assert (m.producer_id, m.producer_epoch, m.last_producer_epoch) == (PID, 1, NO_PRODUCER_EPOCH)
    assert (m.txn_start_timestamp, m.txn_last_update_timestamp) == (NOW - 1, NOW - 1)
    # In Ongoing the start time stays.
    m.complete_transition_to(m.prepare_add_partitions({t2}, NOW - 2))
    assert m.topic_partitions == {t1, t2}
    assert (m.txn_start_timestamp, m.txn_last_update_timestamp) == (NOW - 1, NOW - 2)


def _tolerate_time_shift_during_prepare(target: S) -> None:
    m = _m(S.ONGOING, epoch=1, start=1)
    m.complete_transition_to(m.prepare_abort_or_commit(target, 0, NO_PRODUCER_ID, NOW - 1))
    assert m.state == target
    assert (m.producer_id, m.producer_epoch, m.last_producer_epoch) == (PID, 1, NO_PRODUCER_EPOCH)
    assert (m.txn_start_timestamp, m.txn_last_update_timestamp) == (1, NOW - 1)


def test_tolerate_time_shift_during_prepare_commit() -> None:
    _tolerate_time_shift_during_prepare(S.PREPARE_COMMIT)


def test_tolerate_time_shift_during_prepare_abort() -> None:
    _tolerate_time_shift_during_prepare(S.PREPARE_ABORT)


def _tolerate_time_shift_during_complete(prepared: S, completed: S, version: int) -> None:
    m = _m(prepared, epoch=1, start=1, version=version)
    m.complete_transition_to(m.prepare_complete(NOW - 1))
    last_epoch = 1 if version >= 2 else NO_PRODUCER_EPOCH
    assert m.state == completed
    assert (m.producer_id, m.producer_epoch, m.last_producer_epoch) == (PID, 1, last_epoch)
    assert (m.txn_start_timestamp, m.txn_last_update_timestamp) == (1, NOW - 1)


@pytest.mark.parametrize("version", [0, 2])
def test_tolerate_time_shift_during_complete_commit(version: int) -> None:
    _tolerate_time_shift_during_complete(S.PREPARE_COMMIT, S.COMPLETE_COMMIT, version)


@pytest.mark.parametrize("version", [0, 2])
def test_tolerate_time_shift_during_complete_abort(version: int) -> None:
    _tolerate_time_shift_during_complete(S.PREPARE_ABORT, S.COMPLETE_ABORT, version)


def test_fence_producer_after_epochs_exhausted() -> None:
    m = _m(S.ONGOING, epoch=SHORT_MAX - 1)
    assert m.is_producer_epoch_exhausted
    fencing = m.prepare_fence_producer_epoch()
    assert (fencing.producer_epoch, fencing.last_producer_epoch) == (SHORT_MAX, NO_PRODUCER_EPOCH)
    assert m.pending_state == S.PREPARE_EPOCH_FENCE
    # Clear the pending fence to make way for the abort, as the coordinator does.
    m.pending_state = None
    transit = m.prepare_abort_or_commit(S.PREPARE_ABORT, 0, NO_PRODUCER_ID, NOW)
    m.complete_transition_to(transit)
    assert transit.producer_id == PID


def test_fence_producer_not_allowed_if_it_would_overflow() -> None:
    m = _m(S.ONGOING, epoch=SHORT_MAX)
    assert m.is_producer_epoch_exhausted
    with pytest.raises(IllegalTransitionError):
        m.prepare_fence_producer_epoch()


def test_rotate_producer_id() -> None:
    m = _m(epoch=SHORT_MAX - 1)
    m.complete_transition_to(m.prepare_producer_id_rotation(9893, 30_000, NOW, True))
    assert (m.producer_id, m.prev_producer_id) == (9893, PID)
    assert (m.producer_epoch, m.last_producer_epoch) == (0, SHORT_MAX - 1)


def test_epoch_bump_on_end_txn() -> None:
    m = _m(S.ONGOING, epoch=10, start=NOW)
    m.complete_transition_to(
        m.prepare_abort_or_commit(S.PREPARE_COMMIT, 2, NO_PRODUCER_ID, NOW - 1)
    )
    assert (m.producer_id, m.producer_epoch, m.client_transaction_version) == (PID, 11, 2)
    m.complete_transition_to(m.prepare_complete(NOW))
    assert (m.producer_id, m.producer_epoch, m.client_transaction_version) == (PID, 11, 2)


def test_epoch_bump_on_end_txn_overflow() -> None:
    m = _m(S.ONGOING, epoch=SHORT_MAX - 1, start=NOW)
    assert m.is_producer_epoch_exhausted
    m.complete_transition_to(m.prepare_abort_or_commit(S.PREPARE_COMMIT, 2, 9893, NOW - 1))
    assert (m.producer_id, m.producer_epoch, m.client_transaction_version) == (PID, SHORT_MAX, 2)
    m.complete_transition_to(m.prepare_complete(NOW))
    assert (m.producer_id, m.producer_epoch, m.client_transaction_version) == (9893, 0, 2)


def _rotate_in(state: S, version: int) -> None:
    m = _m(state, epoch=SHORT_MAX - 1, prev_producer_id=PID, version=version)
    m.prepare_producer_id_rotation(9893, 30_000, NOW, False)


def test_rotate_producer_id_in_ongoing_state() -> None:
    with pytest.raises(IllegalTransitionError):
        _rotate_in(S.ONGOING, 0)


@pytest.mark.parametrize("version", [0, 2])
def test_rotate_producer_id_in_prepare_abort_state(version: int) -> None:
    with pytest.raises(IllegalTransitionError):
        _rotate_in(S.PREPARE_ABORT, version)


@pytest.mark.parametrize("version", [0, 2])
def test_rotate_producer_id_in_prepare_commit_state(version: int) -> None:
    with pytest.raises(IllegalTransitionError):
        _rotate_in(S.PREPARE_COMMIT, version)


def test_attempted_epoch_bump_with_newly_created_metadata() -> None:
    m = _m(epoch=NO_PRODUCER_EPOCH)
    m.complete_transition_to(_bump(m, 735))
    assert (m.producer_id, m.producer_epoch, m.last_producer_epoch) == (PID, 0, NO_PRODUCER_EPOCH)


def test_epoch_bump_with_current_epoch_provided() -> None:
    m = _m(epoch=735)
    m.complete_transition_to(_bump(m, 735))
    assert (m.producer_id, m.producer_epoch, m.last_producer_epoch) == (PID, 736, 735)


def test_attempted_epoch_bump_with_last_epoch() -> None:
    m = _m(epoch=735, last_producer_epoch=734)
    m.complete_transition_to(_bump(m, 734))
    assert (m.producer_id, m.producer_epoch, m.last_producer_epoch) == (PID, 735, 734)


def test_attempted_epoch_bump_with_fenced_epoch() -> None:
    m = _m(epoch=735, last_producer_epoch=734, prev_producer_id=PID)
    assert m.prepare_increment_producer_epoch(30_000, 733, NOW) is None
    assert m.pending_state is None


def test_transaction_state_id_and_name_mapping() -> None:
    for state in S:
        assert S(int(state)) == state
        assert S.from_name(state.kafka_name) == state
    # The names the admin client parses (TransactionState.parse): Kafka's spelling.
    assert [s.kafka_name for s in S] == [
        "Empty",
        "Ongoing",
        "PrepareCommit",
        "PrepareAbort",
        "CompleteCommit",
        "CompleteAbort",
        "Dead",
        "PrepareEpochFence",
    ]
    assert S.from_name("Bogus") is None


def test_all_transaction_states_are_mapped() -> None:
    assert {int(s) for s in S} == set(range(8))
    with pytest.raises(ValueError):
        S(8)


# ---------------------------------------------------------------------- beyond Kafka's list


VALID_PREVIOUS = {
    S.EMPTY: {S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT},
    S.ONGOING: {S.ONGOING, S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT},
    S.PREPARE_COMMIT: {S.ONGOING},
    S.PREPARE_ABORT: {S.ONGOING, S.PREPARE_EPOCH_FENCE},
    S.COMPLETE_COMMIT: {S.PREPARE_COMMIT},
    S.COMPLETE_ABORT: {S.PREPARE_ABORT},
    S.DEAD: {S.EMPTY, S.COMPLETE_ABORT, S.COMPLETE_COMMIT},
    S.PREPARE_EPOCH_FENCE: {S.ONGOING},
}


def test_valid_previous_states_table() -> None:
    assert {s: set(s.valid_previous_states) for s in S} == VALID_PREVIOUS
    assert {s for s in S if s.is_expiration_allowed} == {
        S.EMPTY,
        S.COMPLETE_COMMIT,
        S.COMPLETE_ABORT,
    }


@pytest.mark.parametrize("current", list(S))
def test_add_partitions_is_refused_from_every_state_not_allowed(current: S) -> None:
    m = _m(current, start=NOW)
    if current in VALID_PREVIOUS[S.ONGOING]:
        m.prepare_add_partitions({TopicPartition("t", 0)}, NOW)
        assert m.pending_state == S.ONGOING
    else:
        with pytest.raises(IllegalTransitionError):
            m.prepare_add_partitions({TopicPartition("t", 0)}, NOW)
        assert m.pending_state is None


def test_a_second_prepare_while_one_is_pending_is_refused() -> None:
    m = _m(S.ONGOING, start=NOW)
    m.prepare_abort_or_commit(S.PREPARE_COMMIT, 0, NO_PRODUCER_ID, NOW)
    with pytest.raises(IllegalTransitionError):
        m.prepare_abort_or_commit(S.PREPARE_ABORT, 0, NO_PRODUCER_ID, NOW)


def test_completing_a_transit_other_than_the_pending_one_is_refused() -> None:
    m = _m(S.ONGOING, start=NOW)
    m.prepare_abort_or_commit(S.PREPARE_COMMIT, 0, NO_PRODUCER_ID, NOW)
    other = _m(S.ONGOING, start=NOW).prepare_abort_or_commit(
        S.PREPARE_ABORT, 0, NO_PRODUCER_ID, NOW
    )
    with pytest.raises(IllegalTransitionError):
        m.complete_transition_to(other)
    with pytest.raises(IllegalTransitionError):
        _m(S.ONGOING).complete_transition_to(other)  # nothing pending


def test_remove_partition_only_while_a_commit_or_abort_is_prepared() -> None:
    tp = TopicPartition("t", 0)
    ongoing = _m(S.ONGOING, partitions={tp})
    with pytest.raises(IllegalTransitionError):
        ongoing.remove_partition(tp)
    prepared = _m(S.PREPARE_COMMIT, partitions={tp})
    prepared.remove_partition(tp)
    assert prepared.topic_partitions == set()

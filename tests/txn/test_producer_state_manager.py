"""Kafka's ProducerStateManagerTest.java and TransactionIndexTest.java (the parts without
snapshot files, follower truncation or KIP-890 verification entries), mirrored on
coordinator.txn.producer_state and coordinator.txn.partition."""

from __future__ import annotations

import json

import pytest

from coordinator.txn.partition import AbortedTxn, PartitionTransactions, TransactionIndex
from coordinator.txn.producer_entry import (
    NO_SEQUENCE,
    BatchMetadata,
    ControlType,
    ProducerStateEntry,
)
from coordinator.txn.producer_state import (
    AppendOrigin,
    CompletedTxn,
    ProducerAppendInfo,
    ProducerStateError,
    ProducerStateManager,
    TxnMetadata,
)
from wire.constants import ErrorCode as E

PID = 1
EPOCH = 0
SEQ = 0
NOW = 1_000_000
EXPIRATION = 86_400_000
INT_MAX = 2**31 - 1
CLIENT, COORDINATOR, REPLICATION = (
    AppendOrigin.CLIENT,
    AppendOrigin.COORDINATOR,
    AppendOrigin.REPLICATION,
)


@pytest.fixture
def sm() -> ProducerStateManager:
    return ProducerStateManager("test-0", EXPIRATION)


def append(
    sm: ProducerStateManager,
    pid: int,
    epoch: int,
    seq: int,
    offset: int,
    ms: int = NOW,
    txn: bool = False,
    origin: AppendOrigin = CLIENT,
) -> None:
    """Kafka's appendClientEntry / appendEntry: one single-record batch at ``offset``."""
    info = sm.prepare_update(pid, origin)
    info.append_data_batch(epoch, seq, seq, ms, offset, offset, txn)
    sm.update(info)
    sm.map_end_offset = offset + 1


def marker(
    sm: ProducerStateManager,
    pid: int,
    epoch: int,
    control: ControlType,
    offset: int,
    coordinator_epoch: int = 0,
    ms: int = NOW,
) -> None:
    """Kafka's appendEndTxnMarker."""
    info = sm.prepare_update(pid, COORDINATOR)
    completed = info.append_end_txn_marker(control, coordinator_epoch, epoch, offset, ms)
    sm.update(info)
    if completed is not None:
        sm.complete_txn(completed)
    sm.map_end_offset = offset + 1


def refused(code: E) -> pytest.RaisesExc[ProducerStateError]:
    return pytest.raises(ProducerStateError, check=lambda e: e.code == code)


def entry(sm: ProducerStateManager, pid: int = PID) -> ProducerStateEntry:
    found = sm.last_entry(pid)
    assert found is not None, f"producer {pid} has no entry"
    return found


def reloaded(sm: ProducerStateManager, now_ms: int | None = None) -> ProducerStateManager:
    """A new manager loaded from the first one's snapshot, through JSON as it would persist."""
    copy = ProducerStateManager("test-0", EXPIRATION)
    copy.load_data(json.loads(json.dumps(sm.to_data())), now_ms)
    return copy


def test_basic_id_mapping(sm: ProducerStateManager) -> None:
    append(sm, PID, EPOCH, SEQ, 0, 0)
    append(sm, PID, EPOCH, 1, 0, 1)
    # A duplicate is found by the log before producer state; appended, it is out of order.
    with refused(E.OUT_OF_ORDER_SEQUENCE_NUMBER):
        append(sm, PID, EPOCH, 1, 0, 1)
    with refused(E.OUT_OF_ORDER_SEQUENCE_NUMBER):
        append(sm, PID, EPOCH, 5, 0, 2)
    append(sm, PID, EPOCH + 1, SEQ, 0, 3)
    with refused(E.INVALID_PRODUCER_EPOCH):
        append(sm, PID, EPOCH, SEQ, 0, 4)


def test_append_txn_marker_with_no_producer_state(sm: ProducerStateManager) -> None:
    marker(sm, PID, 2, ControlType.COMMIT, 27)
    first = entry(sm)
    assert (first.producer_epoch, first.producer_id, first.last_seq) == (2, PID, NO_SEQUENCE)
    # Fencing holds even when only the marker is left.
    with refused(E.INVALID_PRODUCER_EPOCH):
        append(sm, PID, 0, SEQ, 0, 4)
    with refused(E.OUT_OF_ORDER_SEQUENCE_NUMBER):
        append(sm, PID, 2, 17, 0, 4)
    append(sm, PID, 2, SEQ, 39, 4)
    assert (entry(sm).producer_epoch, entry(sm).last_seq) == (2, 0)


def test_producer_sequence_wrap_around(sm: ProducerStateManager) -> None:
    append(sm, PID, 15, INT_MAX, 735, origin=REPLICATION)
    append(sm, PID, 15, 0, 735 + 500)
    last = entry(sm)
    assert (last.producer_epoch, last.first_seq, last.last_seq) == (15, INT_MAX, 0)


def test_producer_sequence_with_wrap_around_batch_record(sm: ProducerStateManager) -> None:
    info = sm.prepare_update(PID, REPLICATION)
    info.append_data_batch(15, INT_MAX - 10, 9, NOW, 2000, 2020, False)
    assert sm.last_entry(PID) is None
    sm.update(info)
    last = entry(sm)
    assert (last.first_seq, last.last_seq) == (INT_MAX - 10, 9)
    assert (last.first_data_offset, last.last_data_offset) == (2000, 2020)


def test_producer_sequence_invalid_wrap_around(sm: ProducerStateManager) -> None:
    append(sm, PID, 15, INT_MAX, 735, origin=REPLICATION)
    with refused(E.OUT_OF_ORDER_SEQUENCE_NUMBER):
        append(sm, PID, 15, 1, 735 + 500)


def test_no_validation_on_first_entry_when_loading_log(sm: ProducerStateManager) -> None:
    append(sm, PID, 5, 16, 735, origin=REPLICATION)
    last = entry(sm)
    assert (last.producer_epoch, last.first_seq, last.last_seq) == (5, 16, 16)
    assert (last.first_data_offset, last.last_data_offset) == (735, 735)


def test_control_record_bumps_producer_epoch(sm: ProducerStateManager) -> None:
    append(sm, PID, EPOCH, SEQ, 0)
    marker(sm, PID, 1, ControlType.ABORT, 1)
    last = entry(sm)
    assert (last.producer_epoch, last.current_txn_first_offset) == (1, None)
    assert (last.first_seq, last.last_seq) == (NO_SEQUENCE, NO_SEQUENCE)
    append(sm, PID, 1, 0, 2)
    assert entry(sm).first_seq == SEQ


def test_txn_first_offset_metadata_cached(sm: ProducerStateManager) -> None:
    info = ProducerAppendInfo("test-0", PID, ProducerStateEntry(PID), CLIENT)
    info.append_data_batch(EPOCH, SEQ, SEQ, NOW, 992342, 992342, True)
    sm.update(info)
    assert sm.first_unstable_offset() == 992342


def test_prepare_update_does_not_mutate(sm: ProducerStateManager) -> None:
    info = sm.prepare_update(PID, CLIENT)
    info.append_data_batch(EPOCH, 0, 5, NOW, 15, 20, False)
    assert sm.last_entry(PID) is None
    sm.update(info)
    following = sm.prepare_update(PID, CLIENT)
    following.append_data_batch(EPOCH, 6, 10, NOW, 26, 30, False)
    assert (entry(sm).first_seq, entry(sm).last_seq, entry(sm).last_data_offset) == (0, 5, 20)
    sm.update(following)
    assert (entry(sm).first_seq, entry(sm).last_seq, entry(sm).last_data_offset) == (0, 10, 30)


def test_update_producer_transaction_state(sm: ProducerStateManager) -> None:
    append(sm, PID, EPOCH, SEQ, 9)
    info = sm.prepare_update(PID, CLIENT)

    def check(first_seq: int, last_seq: int, last_offset: int, txn: int | None) -> None:
        e = info.updated
        assert (e.producer_epoch, e.first_seq, e.last_seq) == (EPOCH, first_seq, last_seq)
        assert (e.first_data_offset, e.last_data_offset) == (16, last_offset)
        assert e.current_txn_first_offset == txn
        assert info.started == [TxnMetadata(PID, 16)]

    info.append_data_batch(EPOCH, 1, 5, NOW, 16, 20, True)
    check(1, 5, 20, 16)
    info.append_data_batch(EPOCH, 6, 10, NOW, 26, 30, True)
    check(1, 10, 30, 16)
    completed = info.append_end_txn_marker(ControlType.COMMIT, 15, EPOCH, 40, NOW)
    assert completed == CompletedTxn(PID, 16, 40, False)
    # The marker leaves the retained batches alone and closes the transaction.
    check(1, 10, 30, None)


def test_out_of_sequence_after_control_record_epoch_bump(sm: ProducerStateManager) -> None:
    append(sm, PID, EPOCH, SEQ, 0, txn=True)
    append(sm, PID, EPOCH, 1, 1, txn=True)
    marker(sm, PID, 1, ControlType.ABORT, 1)
    with refused(E.OUT_OF_ORDER_SEQUENCE_NUMBER):
        append(sm, PID, 1, 2, 2, txn=True)
    with refused(E.OUT_OF_ORDER_SEQUENCE_NUMBER):
        append(sm, PID, 2, 2, 2, txn=True)
    append(sm, PID, 1, SEQ, 0, txn=True)
    assert (entry(sm).producer_epoch, entry(sm).last_seq) == (1, 0)


def test_non_transactional_append_with_ongoing_transaction(sm: ProducerStateManager) -> None:
    append(sm, PID, EPOCH, SEQ, 0, txn=True)
    with refused(E.INVALID_TXN_STATE):
        append(sm, PID, EPOCH, 1, 1)


def test_take_snapshot(sm: ProducerStateManager) -> None:
    append(sm, PID, EPOCH, SEQ, 0, 0)
    append(sm, PID, EPOCH, 1, 1, 1)
    data = sm.to_data()
    assert json.loads(json.dumps(data)) == data and data["producers"]
    assert data["map_end_offset"] == 2


def test_recover_from_snapshot_unfinished_transaction(sm: ProducerStateManager) -> None:
    append(sm, PID, EPOCH, 0, 0, txn=True)
    append(sm, PID, EPOCH, 1, 1, txn=True)
    recovered = reloaded(sm)
    loaded = entry(recovered)
    # Kafka's snapshot keeps the last batch only; this one keeps all retained batches.
    assert (loaded.last_data_offset, loaded.last_seq) == (1, 1)
    assert loaded.current_txn_first_offset == 0
    assert recovered.first_unstable_offset() == 0
    append(recovered, PID, EPOCH, 2, 2, txn=True)


def test_recover_from_snapshot_finished_transaction(sm: ProducerStateManager) -> None:
    append(sm, PID, EPOCH, 0, 0, txn=True)
    append(sm, PID, EPOCH, 1, 1, txn=True)
    marker(sm, PID, EPOCH, ControlType.ABORT, 2)
    loaded = entry(reloaded(sm))
    assert (loaded.last_data_offset, loaded.last_seq) == (1, 1)
    assert loaded.current_txn_first_offset is None


def test_recover_from_snapshot_empty_transaction(sm: ProducerStateManager) -> None:
    marker(sm, PID, EPOCH, ControlType.ABORT, 0, 0, NOW)
    loaded = entry(reloaded(sm))
    assert (loaded.last_timestamp, loaded.current_txn_first_offset) == (NOW, None)


def test_producer_state_after_fencing_abort_marker(sm: ProducerStateManager) -> None:
    append(sm, PID, EPOCH, SEQ, 0, txn=True)
    marker(sm, PID, EPOCH + 1, ControlType.ABORT, 1)
    last = entry(sm)
    assert (last.current_txn_first_offset, last.last_data_offset, last.first_data_offset) == (
        None,
        -1,
        -1,
    )
    # Kept (it was just updated): the fencing epoch must survive.
    sm.remove_expired_producers(NOW)
    entry(sm)


def test_remove_expired_pids_on_reload(sm: ProducerStateManager) -> None:
    append(sm, PID, EPOCH, SEQ, 0, 0)
    append(sm, PID, EPOCH, 1, 1, 1)
    recovered = reloaded(sm, now_ms=EXPIRATION + 70_000)
    # Expired on reload: any sequence is accepted and the producer comes back.
    append(recovered, PID, EPOCH, 2, 2, EXPIRATION + 70_001)
    assert len(recovered.producers) == 1
    assert entry(recovered).last_seq == 2
    assert recovered.map_end_offset == 3


def test_accept_append_without_producer_state_on_replica(sm: ProducerStateManager) -> None:
    append(sm, PID, EPOCH, SEQ, 0, 0)
    append(sm, PID, EPOCH, 1, 1, 1)
    recovered = reloaded(sm, now_ms=EXPIRATION + 70_000)
    assert PID not in recovered.producers
    append(recovered, PID, EPOCH, 2, 2, EXPIRATION + 70_001, origin=REPLICATION)
    loaded = entry(recovered)
    assert (loaded.producer_epoch, loaded.first_seq, loaded.last_seq) == (EPOCH, 2, 2)


def test_accept_append_with_sequence_gaps_on_replica(sm: ProducerStateManager) -> None:
    append(sm, PID, EPOCH, SEQ, 0, 0)
    with refused(E.OUT_OF_ORDER_SEQUENCE_NUMBER):
        append(sm, PID, EPOCH, 3, 1, 1)
    assert entry(sm).last_seq == 0
    append(sm, PID, EPOCH, 3, 1, 1, origin=REPLICATION)
    assert entry(sm).last_seq == 3


def test_load_from_snapshot_retains_non_expired_producers(sm: ProducerStateManager) -> None:
    append(sm, 1, EPOCH, SEQ, 0)
    append(sm, 2, EPOCH, SEQ, 1)
    recovered = reloaded(sm, now_ms=NOW)
    assert len(recovered.producers) == 2
    assert (entry(recovered, 1).last_seq, entry(recovered, 1).last_data_offset) == (0, 0)
    assert (entry(recovered, 2).last_seq, entry(recovered, 2).last_data_offset) == (0, 1)


def test_pid_expiration_timeout(sm: ProducerStateManager) -> None:
    append(sm, PID, 5, SEQ, 1)
    sm.remove_expired_producers(NOW + EXPIRATION + 1)
    append(sm, PID, 5, SEQ + 1, 2)
    assert len(sm.producers) == 1 and entry(sm).last_seq == SEQ + 1
    assert sm.map_end_offset == 3


def test_first_unstable_offset(sm: ProducerStateManager) -> None:
    assert sm.first_undecided_offset() is None
    append(sm, PID, 5, SEQ, 99, txn=True)
    assert (sm.first_undecided_offset(), sm.first_unstable_offset()) == (99, 99)
    append(sm, 2, 5, SEQ, 105, txn=True)
    assert (sm.first_undecided_offset(), sm.first_unstable_offset()) == (99, 99)
    marker(sm, PID, 5, ControlType.COMMIT, 109)
    # Decided but not yet replicated: still unstable.
    assert (sm.first_undecided_offset(), sm.first_unstable_offset()) == (105, 99)
    sm.on_high_watermark_updated(100)
    assert sm.first_unstable_offset() == 99
    sm.on_high_watermark_updated(110)
    assert sm.first_unstable_offset() == 105
    marker(sm, 2, 5, ControlType.ABORT, 112)
    assert (sm.first_undecided_offset(), sm.first_unstable_offset()) == (None, 105)
    sm.on_high_watermark_updated(113)
    assert sm.first_unstable_offset() is None


def test_producers_with_ongoing_transactions_dont_expire(sm: ProducerStateManager) -> None:
    append(sm, PID, 5, SEQ, 99, txn=True)
    assert sm.first_undecided_offset() == 99
    sm.remove_expired_producers(NOW + EXPIRATION + 1)
    assert sm.last_entry(PID) is not None and sm.first_undecided_offset() == 99
    sm.remove_expired_producers(NOW + EXPIRATION + 1)
    assert sm.last_entry(PID) is not None


def test_sequence_not_validated_for_group_metadata_topic() -> None:
    sm = ProducerStateManager("__consumer_offsets-0", EXPIRATION)
    append(sm, PID, EPOCH, NO_SEQUENCE, 99, txn=True, origin=COORDINATOR)
    append(sm, PID, EPOCH, NO_SEQUENCE, 100, txn=True, origin=COORDINATOR)
    assert entry(sm).last_data_offset == 100


def test_old_epoch_for_control_record(sm: ProducerStateManager) -> None:
    assert sm.first_undecided_offset() is None
    append(sm, PID, 5, SEQ, 99, txn=True)
    with refused(E.INVALID_PRODUCER_EPOCH):
        marker(sm, PID, 3, ControlType.COMMIT, 100)


def test_coordinator_fencing(sm: ProducerStateManager) -> None:
    append(sm, PID, 5, SEQ, 99, txn=True)
    marker(sm, PID, 5, ControlType.COMMIT, 100, coordinator_epoch=1)
    assert entry(sm).coordinator_epoch == 1
    marker(sm, PID, 5, ControlType.COMMIT, 101, coordinator_epoch=1)  # the same epoch
    marker(sm, PID, 5, ControlType.COMMIT, 102, coordinator_epoch=2)  # a newer one
    with refused(E.TRANSACTION_COORDINATOR_FENCED):
        marker(sm, PID, 5, ControlType.COMMIT, 103, coordinator_epoch=1)


def test_coordinator_fenced_after_reload(sm: ProducerStateManager) -> None:
    append(sm, PID, EPOCH, SEQ, 99, txn=True)
    marker(sm, PID, EPOCH, ControlType.COMMIT, 100, coordinator_epoch=1)
    recovered = reloaded(sm)
    with refused(E.TRANSACTION_COORDINATOR_FENCED):
        marker(recovered, PID, EPOCH, ControlType.COMMIT, 100, coordinator_epoch=0)


def test_last_stable_offset_completed_txn(sm: ProducerStateManager) -> None:
    def begin(pid: int, start: int) -> None:
        info = ProducerAppendInfo("test-0", pid, ProducerStateEntry(pid), CLIENT)
        info.append_data_batch(EPOCH, 0, 0, NOW, start, start, True)
        sm.update(info)

    start1 = 992342
    start2, start3 = start1 + 25, start1 + 57
    begin(PID, start1)
    begin(PID + 1, start2)
    begin(PID + 2, start3)
    last1 = start3 + 15
    completed1 = CompletedTxn(PID, start1, last1, False)
    assert sm.last_stable_offset(completed1) == start2
    sm.complete_txn(completed1)
    sm.on_high_watermark_updated(last1 + 1)
    assert sm.first_unstable_offset() == start2
    last3 = last1 + 20
    completed3 = CompletedTxn(PID + 2, start3, last3, False)
    assert sm.last_stable_offset(completed3) == start2
    sm.complete_txn(completed3)
    sm.on_high_watermark_updated(last3 + 1)
    assert sm.first_unstable_offset() == start2
    last2 = last3 + 78
    completed2 = CompletedTxn(PID + 1, start2, last2, False)
    assert sm.last_stable_offset(completed2) == last2 + 1
    sm.complete_txn(completed2)
    sm.on_high_watermark_updated(last2 + 1)
    assert sm.first_unstable_offset() is None


def test_skip_empty_transactions(sm: ProducerStateManager) -> None:
    seq = SEQ

    def data(info: ProducerAppendInfo, start: int, end: int) -> None:
        nonlocal seq
        info.append_data_batch(EPOCH, seq, seq + end - start, NOW, start, end, True)
        seq += end - start + 1

    def end_txn(info: ProducerAppendInfo, control: ControlType, offset: int) -> CompletedTxn | None:
        return info.append_end_txn_marker(control, 27, EPOCH, offset, NOW)

    first = sm.prepare_update(PID, CLIENT)
    data(first, 16, 20)
    assert first.started == [TxnMetadata(PID, 16)]
    sm.update(first)
    sm.on_high_watermark_updated(21)
    assert sm.first_unstable_offset() == 16
    # One append: ends that transaction, two empty ones, a whole aborted one, an open one.
    second = sm.prepare_update(PID, CLIENT)
    completed1 = end_txn(second, ControlType.COMMIT, 21)
    assert completed1 == CompletedTxn(PID, 16, 21, False)
    assert end_txn(second, ControlType.COMMIT, 22) is None
    assert end_txn(second, ControlType.ABORT, 23) is None
    data(second, 24, 27)
    completed2 = end_txn(second, ControlType.ABORT, 28)
    assert completed2 is not None
    assert end_txn(second, ControlType.ABORT, 29) is None
    data(second, 30, 31)
    assert second.started == [TxnMetadata(PID, 24), TxnMetadata(PID, 30)]
    sm.update(second)
    sm.complete_txn(completed1)
    sm.complete_txn(completed2)
    sm.on_high_watermark_updated(32)
    assert sm.first_unstable_offset() == 30


def test_read_write_snapshot(sm: ProducerStateManager) -> None:
    sm.producers[1] = ProducerStateEntry(1, 2, 3, -1, 100, (BatchMetadata(1, 2, 3, -1),))
    sm.producers[11] = ProducerStateEntry(11, 12, 13, 123456, None, ())
    loaded = reloaded(sm)
    for pid, expected in sm.producers.items():
        actual = entry(loaded, pid)
        assert (actual.producer_id, actual.producer_epoch, actual.coordinator_epoch) == (
            expected.producer_id,
            expected.producer_epoch,
            expected.coordinator_epoch,
        )
        assert (actual.last_timestamp, actual.current_txn_first_offset) == (
            expected.last_timestamp,
            expected.current_txn_first_offset,
        )
        assert list(actual.batches) == list(expected.batches)
    # An entry's open transaction is open again after loading.
    assert loaded.first_undecided_offset() == 100


def test_only_the_last_five_batches_are_retained(sm: ProducerStateManager) -> None:
    for seq in range(7):
        append(sm, PID, EPOCH, seq, seq)
    last = entry(sm)
    assert [b.last_seq for b in last.batches] == [2, 3, 4, 5, 6]
    assert last.batch_with_sequence_range(1, 1) is None
    assert last.batch_with_sequence_range(2, 2) == BatchMetadata(2, 2, 0, NOW)


# ---------------------------------------------------------------------- TransactionIndexTest

ABORTED = [
    AbortedTxn(0, 0, 10, 11),
    AbortedTxn(1, 5, 15, 13),
    AbortedTxn(2, 18, 35, 25),
    AbortedTxn(3, 32, 50, 40),
]


def test_last_offset_must_increase() -> None:
    index = TransactionIndex((AbortedTxn(1, 5, 15, 13),))
    with pytest.raises(ValueError):
        index.append(AbortedTxn(0, 0, 15, 11))


def test_last_offset_cannot_decrease() -> None:
    index = TransactionIndex((AbortedTxn(1, 5, 15, 13),))
    with pytest.raises(ValueError):
        index.append(AbortedTxn(0, 0, 10, 11))


def test_collect_aborted_transactions() -> None:
    index = TransactionIndex(tuple(ABORTED))
    assert index.collect(0, 100) == ABORTED
    assert index.collect(0, 32) == ABORTED[:3]
    assert index.collect(0, 35) == ABORTED
    assert index.collect(10, 35) == ABORTED
    assert index.collect(11, 35) == ABORTED[1:]
    assert index.collect(20, 41) == ABORTED[2:]


def test_truncate() -> None:
    aborted = [AbortedTxn(0, 0, 10, 2), AbortedTxn(1, 5, 15, 16), *ABORTED[2:]]
    index = TransactionIndex(tuple(aborted))
    index.truncate_to(51)
    assert index.collect(0, 100) == aborted
    index.truncate_to(50)
    assert index.collect(0, 100) == aborted[:3]
    index.truncate_to(0)
    assert index.collect(0, 100) == []


def test_aborted_txn_serde() -> None:
    txn = AbortedTxn(983493, 137, 299, 200)
    assert (txn.producer_id, txn.first_offset, txn.last_offset, txn.last_stable_offset) == (
        983493,
        137,
        299,
        200,
    )
    p = PartitionTransactions()
    p.aborted.append(txn)
    restored = PartitionTransactions.from_data(json.loads(json.dumps(p.to_data())))
    assert restored.aborted.all() == [txn]

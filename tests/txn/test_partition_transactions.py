"""A partition's transactional view: duplicates, LSO, aborted index, verification, snapshots
(the UnifiedLog behaviour Produce, read_committed Fetch and ListOffsets rely on)."""

from __future__ import annotations

import json

import pytest

from coordinator.txn.partition import AbortedTxn, PartitionTransactions
from coordinator.txn.producer_entry import NO_SEQUENCE, BatchInfo, ControlType
from coordinator.txn.producer_state import AppendOrigin, ProducerStateError
from wire.constants import ErrorCode as E

NOW = 1_000


def data(pid: int, epoch: int, seq: int, records: int = 1, txn: bool = False) -> BatchInfo:
    return BatchInfo(pid, epoch, seq, records - 1, NOW, is_transactional=txn)


def end(pid: int, epoch: int, control: ControlType, coordinator_epoch: int = 0) -> BatchInfo:
    return BatchInfo(pid, epoch, NO_SEQUENCE, 0, NOW, True, control, coordinator_epoch)


PLAIN = BatchInfo(-1, -1, NO_SEQUENCE, 2, NOW)  # no producer id: three records


def test_a_duplicate_of_a_retained_batch_answers_its_original_offsets() -> None:
    p = PartitionTransactions()
    p.append(data(7, 0, 0, records=3))
    p.append(data(7, 0, 3, records=2))
    again = p.append(data(7, 0, 0, records=3))
    assert again.duplicate is not None
    assert (again.duplicate.first_offset, again.duplicate.last_offset) == (0, 2)
    assert p.log_end_offset == 5  # nothing appended
    with pytest.raises(ValueError):
        p.apply_append(again)


def test_a_batch_older_than_the_last_five_is_out_of_order() -> None:
    p = PartitionTransactions()
    for seq in range(6):
        p.append(data(7, 0, seq))
    with pytest.raises(ProducerStateError) as refused:
        p.append(data(7, 0, 0))
    assert refused.value.code == E.OUT_OF_ORDER_SEQUENCE_NUMBER


def test_batches_without_a_producer_id_skip_producer_state() -> None:
    p = PartitionTransactions()
    check = p.append(PLAIN)
    assert (check.info, check.duplicate, p.log_end_offset) == (None, None, 3)
    assert p.producers.producers == {}


def test_the_lso_stops_at_an_open_transaction_and_moves_at_its_marker() -> None:
    p = PartitionTransactions()
    p.append(PLAIN)  # 0-2
    p.append(data(7, 0, 0, records=2, txn=True))  # 3-4
    p.append(PLAIN)  # 5-7
    assert (p.high_watermark, p.last_stable_offset) == (8, 3)
    assert p.fetch_limit(read_committed=True) == 3
    assert p.fetch_limit(read_committed=False) == 8
    p.append(end(7, 0, ControlType.COMMIT))  # 8
    assert (p.high_watermark, p.last_stable_offset) == (9, 9)
    assert p.aborted.all() == []


def test_the_lso_waits_for_the_high_watermark() -> None:
    p = PartitionTransactions()
    check = p.check_append(data(7, 0, 0, txn=True), AppendOrigin.CLIENT)
    p.apply_append(check)
    assert (p.log_end_offset, p.high_watermark, p.last_stable_offset) == (1, 0, 0)
    p.apply_append(p.check_append(end(7, 0, ControlType.COMMIT), AppendOrigin.COORDINATOR))
    # Decided, but the marker is not replicated yet.
    p.update_high_watermark(1)
    assert p.last_stable_offset == 0
    p.update_high_watermark(2)
    assert p.last_stable_offset == 2


def test_an_aborted_transaction_is_indexed_with_the_lso_after_it() -> None:
    p = PartitionTransactions()
    p.append(data(7, 0, 0, records=2, txn=True))  # 0-1
    p.append(data(8, 0, 0, records=2, txn=True))  # 2-3, another producer still open
    p.append(end(7, 0, ControlType.ABORT))  # 4
    assert p.aborted.all() == [AbortedTxn(7, 0, 4, 2)]
    assert p.last_stable_offset == 2
    p.append(end(8, 0, ControlType.ABORT))  # 5
    assert p.aborted.all() == [AbortedTxn(7, 0, 4, 2), AbortedTxn(8, 2, 5, 6)]
    assert p.last_stable_offset == 6
    # What a read_committed Fetch lists: aborted transactions overlapping its range.
    assert p.aborted_transactions(0, 6) == p.aborted.all()
    assert p.aborted_transactions(5, 6) == [AbortedTxn(8, 2, 5, 6)]
    assert p.aborted_transactions(0, 2) == [AbortedTxn(7, 0, 4, 2)]


def test_a_marker_without_data_on_the_partition_changes_nothing() -> None:
    p = PartitionTransactions()
    p.append(data(7, 0, 0))
    p.append(end(7, 0, ControlType.ABORT))
    assert (p.aborted.all(), p.last_stable_offset, p.log_end_offset) == ([], 2, 2)


def test_unverified_transactional_data_cannot_open_a_transaction() -> None:
    p = PartitionTransactions()
    with pytest.raises(ProducerStateError) as refused:
        p.append(data(7, 0, 0, txn=True), verified=False)
    assert refused.value.code == E.INVALID_TXN_STATE
    p.append(data(7, 0, 0, txn=True), verified=True)
    # Once open, later batches of the transaction need no verification.
    p.append(data(7, 0, 1, txn=True), verified=False)
    assert p.has_ongoing_transaction(7)


def test_offset_commits_from_the_coordinator_carry_no_sequence() -> None:
    p = PartitionTransactions("__consumer_offsets-3")
    p.append(data(7, 0, NO_SEQUENCE, txn=True), AppendOrigin.COORDINATOR)
    p.append(data(7, 0, NO_SEQUENCE, txn=True), AppendOrigin.COORDINATOR)
    assert p.last_stable_offset == 0
    p.append(end(7, 0, ControlType.COMMIT), AppendOrigin.COORDINATOR)
    assert p.last_stable_offset == 3


def test_a_fencing_abort_marker_fences_the_old_epoch() -> None:
    p = PartitionTransactions()
    p.append(data(7, 0, 0, txn=True))
    p.append(end(7, 1, ControlType.ABORT), AppendOrigin.COORDINATOR)
    with pytest.raises(ProducerStateError) as refused:
        p.append(data(7, 0, 1, txn=True))
    assert refused.value.code == E.INVALID_PRODUCER_EPOCH
    assert p.aborted.all() == [AbortedTxn(7, 0, 1, 2)]


def test_log_start_offset_moves_only_below_the_high_watermark() -> None:
    p = PartitionTransactions()
    p.append(data(7, 0, 0, records=2, txn=True))
    p.append(end(7, 0, ControlType.ABORT))
    p.append(data(8, 0, 0, records=2, txn=True))  # open at 3
    with pytest.raises(ProducerStateError) as refused:
        p.increment_log_start_offset(6)
    assert refused.value.code == E.OFFSET_OUT_OF_RANGE
    assert p.increment_log_start_offset(4)
    assert not p.increment_log_start_offset(4)
    # The aborted transaction's marker is gone with the head; the LSO never precedes the start.
    assert p.aborted.all() == []
    assert (p.first_unstable_offset, p.last_stable_offset) == (4, 4)


def test_snapshot_round_trip_through_json() -> None:
    p = PartitionTransactions("t-0")
    p.append(data(7, 0, 0, records=2, txn=True))
    p.append(end(7, 0, ControlType.ABORT))
    p.append(data(8, 3, 0, txn=True))
    p.append(data(9, 0, 0, records=4))
    restored = PartitionTransactions.from_data(json.loads(json.dumps(p.to_data())), "t-0")
    assert restored.to_data() == p.to_data()
    assert restored.last_stable_offset == p.last_stable_offset == 3
    # Idempotence survives: the duplicate is found, the next sequence accepted.
    assert restored.append(data(9, 0, 0, records=4)).duplicate is not None
    assert restored.append(data(9, 0, 4)).duplicate is None

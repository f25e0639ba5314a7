"""Kafka's SharePartitionTest, mirrored by name where it applies (tests/share/COVERAGE.md).

Kafka feeds fetched record batches to ``acquire``; kcoord's core is given the offset the
readable log ends at and hands out records from the next offset never fetched, so each test
keeps Kafka's scenario with offsets counted from the partition's start."""

from __future__ import annotations

import pytest
from share_harness import LOCK_MS, MEMBER_ID, MEMBER_ID_2, ShareHarness

from coordinator.share import (
    AcknowledgementBatch,
    AcknowledgeType,
    AcquiredRecords,
    RecordState,
    ShareError,
    SharePartitionConfig,
)
from wire.constants import ErrorCode

AVAILABLE, ACQUIRED = RecordState.AVAILABLE, RecordState.ACQUIRED
ACKNOWLEDGED, ARCHIVED = RecordState.ACKNOWLEDGED, RecordState.ARCHIVED
GAP, ACCEPT, RELEASE, REJECT, RENEW = (int(t) for t in AcknowledgeType)


def test_record_state_for_id() -> None:
    assert [RecordState(i) for i in (0, 1, 2, 4)] == [AVAILABLE, ACQUIRED, ACKNOWLEDGED, ARCHIVED]
    with pytest.raises(ValueError):
        RecordState(3)
    assert ACKNOWLEDGED.is_terminal and ARCHIVED.is_terminal
    assert not AVAILABLE.is_terminal and not ACQUIRED.is_terminal


def test_maybe_initialize() -> None:
    # Kafka's scenario: start offset 5, 5-10 available delivered twice, 11-15 archived.
    h = ShareHarness(start_offset=5)
    h.acquire(MEMBER_ID, 11)
    h.ack(MEMBER_ID, 5, 10, RELEASE)
    h.ack(MEMBER_ID, 11, 15, REJECT)
    h.acquire(MEMBER_ID, 6)
    h.ack(MEMBER_ID, 5, 10, RELEASE)
    h.restart()
    p = h.partition
    assert p.start_offset == 5 and p.next_offset == 16
    assert [h.state(o) for o in (5, 10, 11, 15)] == [
        (AVAILABLE, 2), (AVAILABLE, 2), (ARCHIVED, 1), (ARCHIVED, 1)]
    assert h.acquire(MEMBER_ID_2) == [AcquiredRecords(5, 10, 3), AcquiredRecords(16, 509, 1)]


def test_maybe_initialize_with_empty_state_batches() -> None:
    h = ShareHarness(start_offset=10)
    h.restart()
    assert h.partition.start_offset == 10 and h.partition.next_offset == 10
    assert h.partition.records == {}
    assert h.acquire(MEMBER_ID, 3) == [AcquiredRecords(10, 12, 1)]


def test_acquire_single_record() -> None:
    h = ShareHarness()
    assert h.acquire(MEMBER_ID, 1) == [AcquiredRecords(0, 0, 1)]
    assert h.state(0) == (ACQUIRED, 1) and h.owner(0) == MEMBER_ID
    assert h.partition.next_offset == 1


def test_acquire_multiple_records() -> None:
    h = ShareHarness()
    h.end_offset = 15
    assert h.acquire(MEMBER_ID, 500) == [AcquiredRecords(0, 14, 1)]
    assert h.partition.in_flight_count() == 15


def test_acquire_with_max_fetch_records() -> None:
    h = ShareHarness()
    assert h.acquire(MEMBER_ID, 10) == [AcquiredRecords(0, 9, 1)]
    assert h.acquire(MEMBER_ID, 10) == [AcquiredRecords(10, 19, 1)]


def test_acquire_same_batch_again() -> None:
    h = ShareHarness()
    h.end_offset = 5
    assert h.acquire(MEMBER_ID) == [AcquiredRecords(0, 4, 1)]
    assert h.acquire(MEMBER_ID) == []
    assert h.acquire(MEMBER_ID_2) == []


def test_acquire_with_empty_fetch_records() -> None:
    h = ShareHarness()
    assert h.acquire(MEMBER_ID, end_offset=0) == []
    assert h.partition.records == {}


def test_can_acquire_records_with_cached_data_and_limit_reached() -> None:
    h = ShareHarness(SharePartitionConfig(max_record_locks=10))
    assert h.acquire(MEMBER_ID, 500) == [AcquiredRecords(0, 9, 1)]
    assert h.acquire(MEMBER_ID_2, 500) == []  # the in-flight records are at the limit
    h.ack(MEMBER_ID, 0, 4, ACCEPT)  # the start offset moves to 5: room for 5 more
    assert h.partition.start_offset == 5
    assert h.acquire(MEMBER_ID_2, 500) == [AcquiredRecords(10, 14, 1)]


def test_can_acquire_records_after_release_acknowledgement() -> None:
    h = ShareHarness(SharePartitionConfig(max_record_locks=5))
    h.acquire(MEMBER_ID, 5)
    h.ack(MEMBER_ID, 0, 4, RELEASE)
    assert h.acquire(MEMBER_ID_2, 5) == [AcquiredRecords(0, 4, 2)]  # cached records: no limit


def test_acknowledge_single_record_batch() -> None:
    h = ShareHarness()
    h.acquire(MEMBER_ID, 1)
    h.ack(MEMBER_ID, 0, 0, ACCEPT)
    assert h.partition.start_offset == 1 and h.partition.records == {}


def test_acknowledge_multiple_record_batch() -> None:
    h = ShareHarness()
    h.acquire(MEMBER_ID, 10)
    h.ack(MEMBER_ID, 5, 9, ACCEPT)
    assert h.partition.start_offset == 0
    assert [h.state(o)[0] for o in (4, 5, 9)] == [ACQUIRED, ACKNOWLEDGED, ACKNOWLEDGED]


def test_acknowledge_multiple_record_batch_with_gap_offsets() -> None:
    h = ShareHarness()
    h.acquire(MEMBER_ID, 10)
    change = h.acknowledge(
        MEMBER_ID,
        AcknowledgementBatch(0, 3, (ACCEPT, GAP, RELEASE, REJECT)),
        AcknowledgementBatch(4, 9, (ACCEPT,)),
    )
    h.persist(change)
    assert h.partition.start_offset == 2
    assert h.state(2) == (AVAILABLE, 1) and h.state(3) == (ARCHIVED, 1)
    assert h.state(9) == (ACKNOWLEDGED, 1)


def test_acknowledge_out_of_range_cached_data() -> None:
    h = ShareHarness()
    with pytest.raises(ShareError) as empty:
        h.acknowledge(MEMBER_ID, AcknowledgementBatch(0, 15, (REJECT,)))
    assert empty.value.error_code == ErrorCode.INVALID_RECORD_STATE
    h.acquire(MEMBER_ID, 5)
    with pytest.raises(ShareError) as past:
        h.acknowledge(MEMBER_ID, AcknowledgementBatch(20, 25, (REJECT,)))
    assert past.value.error_code == ErrorCode.INVALID_REQUEST
    with pytest.raises(ShareError) as last_past:
        h.acknowledge(MEMBER_ID, AcknowledgementBatch(2, 25, (REJECT,)))
    assert last_past.value.error_code == ErrorCode.INVALID_REQUEST
    assert h.state(2) == (ACQUIRED, 1)


def test_acknowledge_with_another_member() -> None:
    h = ShareHarness()
    h.acquire(MEMBER_ID, 5)
    with pytest.raises(ShareError) as info:
        h.acknowledge(MEMBER_ID_2, AcknowledgementBatch(0, 4, (ACCEPT,)))
    assert info.value.error_code == ErrorCode.INVALID_RECORD_STATE
    assert info.value.message == "Member is not the owner of batch record"


def test_acknowledge_when_offset_not_acquired() -> None:
    h = ShareHarness()
    h.acquire(MEMBER_ID, 5)
    h.ack(MEMBER_ID, 0, 4, RELEASE)
    with pytest.raises(ShareError) as info:
        h.acknowledge(MEMBER_ID, AcknowledgementBatch(0, 4, (ACCEPT,)))
    assert info.value.error_code == ErrorCode.INVALID_RECORD_STATE
    h.acquire(MEMBER_ID, 5)
    h.ack(MEMBER_ID, 1, 3, REJECT)
    with pytest.raises(ShareError):
        h.acknowledge(MEMBER_ID, AcknowledgementBatch(1, 3, (REJECT,)))
    h.ack(MEMBER_ID, 0, 0, ACCEPT)
    h.ack(MEMBER_ID, 4, 4, ACCEPT)
    assert h.partition.start_offset == 5


def test_acknowledge_rollback_with_full_batch_error() -> None:
    h = ShareHarness()
    h.acquire(MEMBER_ID, 5)
    h.acquire(MEMBER_ID_2, 5)
    log_length = len(h.log)
    with pytest.raises(ShareError):
        h.acknowledge(
            MEMBER_ID, AcknowledgementBatch(0, 4, (ACCEPT,)), AcknowledgementBatch(5, 9, (ACCEPT,))
        )
    assert [h.state(o) for o in (0, 5)] == [(ACQUIRED, 1), (ACQUIRED, 1)]
    assert len(h.log) == log_length and h.partition.pending == ()


def test_acknowledge_rollback_with_subset_error() -> None:
    h = ShareHarness()
    h.acquire(MEMBER_ID, 5)
    h.acquire(MEMBER_ID_2, 5)
    with pytest.raises(ShareError):
        h.acknowledge(
            MEMBER_ID, AcknowledgementBatch(3, 6, (ACCEPT, ACCEPT, ACCEPT, ACCEPT))
        )
    assert h.state(3) == (ACQUIRED, 1) and h.owner(3) == MEMBER_ID


def test_acknowledge_invalid_type_is_invalid_request() -> None:
    h = ShareHarness()
    h.acquire(MEMBER_ID, 5)
    for bad in (AcknowledgementBatch(0, 4, (9,)), AcknowledgementBatch(0, 4, (1, 1)),
                AcknowledgementBatch(4, 0, (1,)), AcknowledgementBatch(0, 4, ())):
        with pytest.raises(ShareError) as info:
            h.acknowledge(MEMBER_ID, bad)
        assert info.value.error_code == ErrorCode.INVALID_REQUEST


def test_acquire_released_record() -> None:
    h = ShareHarness()
    h.acquire(MEMBER_ID, 3)
    h.ack(MEMBER_ID, 1, 1, RELEASE)
    assert h.acquire(MEMBER_ID_2, 1) == [AcquiredRecords(1, 1, 2)]
    assert h.owner(1) == MEMBER_ID_2


def test_acquire_released_record_multiple_batches() -> None:
    h = ShareHarness()
    h.acquire(MEMBER_ID, 10)
    h.ack(MEMBER_ID, 2, 3, RELEASE)
    h.ack(MEMBER_ID, 6, 7, RELEASE)
    assert h.acquire(MEMBER_ID_2, 3) == [AcquiredRecords(2, 3, 2), AcquiredRecords(6, 6, 2)]


def test_acquisition_lock_for_acquiring_single_record() -> None:
    h = ShareHarness()
    h.acquire(MEMBER_ID, 1)
    assert h.partition.next_lock_deadline() == LOCK_MS
    h.sleep(LOCK_MS - 1)
    assert h.state(0) == (ACQUIRED, 1)
    h.sleep(1)
    assert h.state(0) == (AVAILABLE, 1) and h.owner(0) is None
    assert h.partition.next_lock_deadline() is None


def test_acquisition_lock_timeout_cause_max_delivery_count_exceed() -> None:
    h = ShareHarness(SharePartitionConfig(delivery_count_limit=2))
    h.acquire(MEMBER_ID, 10)
    h.acquire(MEMBER_ID, 10)
    h.sleep(LOCK_MS)
    assert h.state(10) == (AVAILABLE, 1)
    h.acquire(MEMBER_ID, 20)
    assert h.state(10) == (ACQUIRED, 2)
    h.sleep(LOCK_MS)
    # Every record timed out at the limit is archived: the start offset moves past them all.
    assert h.partition.start_offset == 20 and h.partition.records == {}


def test_acquisition_lock_timeout_cause_s_p_s_o_move_forward() -> None:
    h = ShareHarness()
    h.acquire(MEMBER_ID, 10)
    h.ack(MEMBER_ID, 0, 4, ACCEPT)
    h.sleep(LOCK_MS)
    assert h.partition.start_offset == 5
    assert [h.state(o) for o in range(5, 10)] == [(AVAILABLE, 1)] * 5


def test_acknowledge_after_acquisition_lock_timeout() -> None:
    h = ShareHarness()
    h.acquire(MEMBER_ID, 5)
    h.sleep(LOCK_MS)
    with pytest.raises(ShareError) as info:
        h.acknowledge(MEMBER_ID, AcknowledgementBatch(0, 4, (ACCEPT,)))
    assert info.value.error_code == ErrorCode.INVALID_RECORD_STATE


def test_acquisition_lock_on_acknowledging_single_record_batch() -> None:
    h = ShareHarness()
    h.acquire(MEMBER_ID, 1)
    h.ack(MEMBER_ID, 0, 0, RELEASE)
    assert h.partition.next_lock_deadline() is None
    h.sleep(LOCK_MS)
    assert h.state(0) == (AVAILABLE, 1)


def test_schedule_acquisition_lock_timeout_value_from_group_config() -> None:
    h = ShareHarness()
    found = h.partition.acquire(MEMBER_ID, 2, 10, h.now, lock_duration_ms=1000)
    assert found.records == [AcquiredRecords(0, 1, 1)]
    assert h.partition.next_lock_deadline() == 1000


def test_renew_extends_the_acquisition_lock() -> None:
    # Kafka 4.2's RENEW (KIP-1222): the records stay acquired, their lock restarts.
    h = ShareHarness()
    h.acquire(MEMBER_ID, 2)
    h.now = LOCK_MS - 1
    assert h.acknowledge(MEMBER_ID, AcknowledgementBatch(0, 1, (RENEW,))) is None
    h.sleep(1)
    assert h.state(0) == (ACQUIRED, 1)
    h.sleep(LOCK_MS)
    assert h.state(0) == (AVAILABLE, 1)


def test_release_single_record_batch() -> None:
    h = ShareHarness()
    h.acquire(MEMBER_ID, 1)
    h.persist(h.partition.release_member(MEMBER_ID, h.now))
    assert h.state(0) == (AVAILABLE, 1)


def test_release_acquired_records_with_another_member() -> None:
    h = ShareHarness()
    h.acquire(MEMBER_ID, 5)
    h.acquire(MEMBER_ID_2, 5)
    h.persist(h.partition.release_member(MEMBER_ID_2, h.now))
    assert h.state(0) == (ACQUIRED, 1) and h.state(5) == (AVAILABLE, 1)


def test_release_acquired_records_for_empty_cached_data() -> None:
    h = ShareHarness()
    assert h.partition.release_member(MEMBER_ID, h.now) is None


def test_max_delivery_count_limit_exceeded_for_record_batch() -> None:
    h = ShareHarness(SharePartitionConfig(delivery_count_limit=2))
    h.acquire(MEMBER_ID, 10)
    h.ack(MEMBER_ID, 0, 9, RELEASE)
    h.acquire(MEMBER_ID, 10)
    h.ack(MEMBER_ID, 0, 9, RELEASE)
    assert h.partition.start_offset == 10  # archived at the limit: delivered at most twice


def test_max_delivery_count_limit_exceeded_for_records_subset() -> None:
    h = ShareHarness(SharePartitionConfig(delivery_count_limit=2))
    h.acquire(MEMBER_ID, 20)
    h.ack(MEMBER_ID, 10, 14, RELEASE)
    h.acquire(MEMBER_ID, 5)
    h.ack(MEMBER_ID, 10, 14, RELEASE)
    assert [h.state(o) for o in (10, 14, 15)] == [(ARCHIVED, 2), (ARCHIVED, 2), (ACQUIRED, 1)]
    assert h.partition.start_offset == 0


def test_maybe_update_cached_state_when_acknowledgement_type_accept() -> None:
    h = ShareHarness()
    h.acquire(MEMBER_ID, 100)
    h.ack(MEMBER_ID, 0, 99, ACCEPT)
    assert h.partition.start_offset == 100 and h.partition.next_offset == 100
    assert h.partition.records == {}


def test_maybe_update_cached_state_when_acknowledgement_type_reject() -> None:
    h = ShareHarness()
    h.acquire(MEMBER_ID, 100)
    h.ack(MEMBER_ID, 0, 99, REJECT)
    assert h.partition.start_offset == 100 and h.partition.records == {}


def test_maybe_update_cached_state_when_acknowledgement_type_release() -> None:
    h = ShareHarness()
    h.acquire(MEMBER_ID, 100)
    h.ack(MEMBER_ID, 0, 99, RELEASE)
    assert h.partition.start_offset == 0 and h.partition.next_offset == 100
    assert h.state(50) == (AVAILABLE, 1)


def test_maybe_update_cached_state_when_acknowledgements_in_between() -> None:
    h = ShareHarness()
    h.acquire(MEMBER_ID, 100)
    h.ack(MEMBER_ID, 10, 19, ACCEPT)
    assert h.partition.start_offset == 0
    h.ack(MEMBER_ID, 0, 9, REJECT)
    assert h.partition.start_offset == 20


def test_maybe_update_cached_state_when_all_records_in_cached_state_are_acknowledged() -> None:
    h = ShareHarness()
    h.acquire(MEMBER_ID, 50)
    h.acquire(MEMBER_ID_2, 50)
    h.ack(MEMBER_ID_2, 50, 99, ACCEPT)
    h.ack(MEMBER_ID, 0, 49, ACCEPT)
    assert h.partition.start_offset == 100 and h.partition.records == {}
    assert h.acquire(MEMBER_ID, 1) == [AcquiredRecords(100, 100, 1)]


def test_next_fetch_offset_with_multiple_consumers() -> None:
    h = ShareHarness()
    h.acquire(MEMBER_ID, 3)
    assert h.acquire(MEMBER_ID_2, 3) == [AcquiredRecords(3, 5, 1)]
    h.ack(MEMBER_ID, 0, 2, RELEASE)
    assert h.acquire(MEMBER_ID_2, 3) == [AcquiredRecords(0, 2, 2)]
    assert {h.owner(o) for o in range(6)} == {MEMBER_ID_2}


def test_reacquire_subset_with_another_member() -> None:
    h = ShareHarness()
    h.acquire(MEMBER_ID, 10)
    h.ack(MEMBER_ID, 3, 6, RELEASE)
    assert h.acquire(MEMBER_ID_2, 2) == [AcquiredRecords(3, 4, 2)]
    with pytest.raises(ShareError):
        h.acknowledge(MEMBER_ID, AcknowledgementBatch(3, 3, (ACCEPT,)))
    h.ack(MEMBER_ID_2, 3, 4, ACCEPT)
    assert h.state(3) == (ACKNOWLEDGED, 2)


def test_acknowledge_batch_with_write_share_group_state_failure() -> None:
    h = ShareHarness()
    h.acquire(MEMBER_ID, 5)
    change = h.acknowledge(MEMBER_ID, AcknowledgementBatch(0, 4, (ACCEPT,)))
    assert change is not None
    # Until the append completes the records are neither acknowledged again nor expired.
    with pytest.raises(ShareError):
        h.acknowledge(MEMBER_ID, AcknowledgementBatch(0, 0, (REJECT,)))
    assert h.partition.expire_locks(LOCK_MS) is None
    h.partition.append_failed(change)
    assert h.state(0) == (ACQUIRED, 1) and h.owner(0) == MEMBER_ID
    assert h.partition.pending == ()
    h.ack(MEMBER_ID, 0, 4, ACCEPT)  # the member acknowledges again; a snapshot is written
    assert type(h.log[-1].value).__name__ == "ShareSnapshotValue"
    assert h.partition.start_offset == 5


def test_number_of_write_calls_on_updates() -> None:
    h = ShareHarness()
    writes = len(h.log)
    h.acquire(MEMBER_ID, 10)
    assert len(h.log) == writes  # acquisition writes nothing
    h.ack(MEMBER_ID, 0, 4, ACCEPT)
    h.ack(MEMBER_ID, 5, 9, ACCEPT)
    assert len(h.log) == writes + 2


def test_read_committed_skips_aborted_records() -> None:
    # kcoord's read_committed hook: ranges the caller found aborted are archived, never sent.
    h = ShareHarness()
    assert h.acquire(MEMBER_ID, 10, skipped=[(2, 4)]) == [
        AcquiredRecords(0, 1, 1), AcquiredRecords(5, 12, 1)]
    assert h.state(3) == (ARCHIVED, 0)
    h.ack(MEMBER_ID, 0, 1, ACCEPT)
    assert h.partition.start_offset == 5


def test_a_later_change_applies_an_earlier_pending_one() -> None:
    h = ShareHarness()
    h.acquire(MEMBER_ID, 4)
    first = h.acknowledge(MEMBER_ID, AcknowledgementBatch(0, 1, (ACCEPT,)))
    second = h.acknowledge(MEMBER_ID, AcknowledgementBatch(2, 3, (RELEASE,)))
    assert first is not None and second is not None
    h.partition.append_failed(first)  # its record is not in the log, the second's holds it
    h.persist(second)
    assert h.partition.start_offset == 2 and h.state(2) == (AVAILABLE, 1)
    assert h.replayed().durable_view() == h.partition.durable_view()


def test_acknowledge_out_of_range_cached_data_first_batch() -> None:
    h = ShareHarness()
    h.acquire(MEMBER_ID, 5)
    h.ack(MEMBER_ID, 0, 4, ACCEPT)  # the cache empties: the start offset moves to 5
    with pytest.raises(ShareError) as info:
        h.acknowledge(MEMBER_ID, AcknowledgementBatch(0, 4, (ACCEPT,)))
    assert info.value.error_code == ErrorCode.INVALID_RECORD_STATE


def test_acquisition_lock_timeout_cause_s_p_s_o_move_forward_and_clear_cached_state() -> None:
    h = ShareHarness()
    h.acquire(MEMBER_ID, 10)
    h.ack(MEMBER_ID, 0, 9, REJECT)
    h.sleep(LOCK_MS)
    assert h.partition.start_offset == 10 and h.partition.records == {}
    assert h.partition.next_lock_deadline() is None


def test_maybe_update_cached_state_when_acknowledgements_from_beginning_for_entire_batch() -> None:
    h = ShareHarness()
    h.acquire(MEMBER_ID, 15)
    h.ack(MEMBER_ID, 0, 9, ACCEPT)
    assert h.partition.start_offset == 10 and h.partition.next_offset == 15
    assert sorted(h.partition.records) == list(range(10, 15))


def test_maybe_update_cached_state_when_acknowledgements_from_beginning_for_batch_subset() -> None:
    h = ShareHarness()
    h.acquire(MEMBER_ID, 15)
    h.ack(MEMBER_ID, 0, 4, ACCEPT)
    assert h.partition.start_offset == 5 and h.state(5) == (ACQUIRED, 1)


def test_acknowledge_with_another_member_rollback_batch_error() -> None:
    h = ShareHarness()
    h.acquire(MEMBER_ID, 5)
    h.acquire(MEMBER_ID_2, 5)
    h.acquire(MEMBER_ID, 5)
    with pytest.raises(ShareError):
        h.acknowledge(
            MEMBER_ID,
            AcknowledgementBatch(0, 4, (REJECT,)),
            AcknowledgementBatch(5, 9, (RELEASE,)),
            AcknowledgementBatch(10, 14, (ACCEPT,)),
        )
    assert {h.state(o) for o in range(15)} == {(ACQUIRED, 1)}
    assert [h.owner(o) for o in (0, 5, 10)] == [MEMBER_ID, MEMBER_ID_2, MEMBER_ID]


def test_acknowledge_subset_with_another_member() -> None:
    h = ShareHarness()
    h.acquire(MEMBER_ID, 7)
    h.ack(MEMBER_ID, 5, 6, RELEASE)
    h.acquire(MEMBER_ID_2, 2)
    with pytest.raises(ShareError):
        h.acknowledge(MEMBER_ID, AcknowledgementBatch(5, 6, (ACCEPT,)))
    h.ack(MEMBER_ID, 0, 4, ACCEPT)
    assert h.partition.start_offset == 5


def test_acquisition_lock_for_acquiring_multiple_records() -> None:
    h = ShareHarness()
    h.acquire(MEMBER_ID, 5)
    h.now = 1000
    h.acquire(MEMBER_ID_2, 5)
    assert h.partition.next_lock_deadline() == LOCK_MS
    h.sleep(LOCK_MS - 1000)
    assert h.state(0) == (AVAILABLE, 1) and h.state(5) == (ACQUIRED, 1)
    assert h.partition.next_lock_deadline() == LOCK_MS + 1000


def test_acquisition_lock_on_acknowledging_multiple_record_batch() -> None:
    h = ShareHarness()
    h.acquire(MEMBER_ID, 10)
    h.ack(MEMBER_ID, 0, 9, RELEASE)
    h.sleep(LOCK_MS)
    assert h.partition.expire_locks(h.now) is None
    assert {h.state(o) for o in range(10)} == {(AVAILABLE, 1)}


def test_release_multiple_record_batch() -> None:
    h = ShareHarness()
    h.acquire(MEMBER_ID, 5)
    h.acquire(MEMBER_ID, 5)
    h.persist(h.partition.release_member(MEMBER_ID, h.now))
    assert {h.state(o) for o in range(10)} == {(AVAILABLE, 1)}
    assert h.partition.acquired_by(MEMBER_ID) == []


def test_release_acquired_records_after_different_acknowledges() -> None:
    h = ShareHarness()
    h.acquire(MEMBER_ID, 5)
    h.ack(MEMBER_ID, 1, 1, ACCEPT)
    h.ack(MEMBER_ID, 3, 3, REJECT)
    h.persist(h.partition.release_member(MEMBER_ID, h.now))
    assert [h.state(o)[0] for o in range(5)] == [
        AVAILABLE, ACKNOWLEDGED, AVAILABLE, ARCHIVED, AVAILABLE]


def test_max_delivery_count_limit_exceeded_for_records_subset_cache_cleared() -> None:
    h = ShareHarness(SharePartitionConfig(delivery_count_limit=2))
    h.acquire(MEMBER_ID, 20)
    h.ack(MEMBER_ID, 0, 19, RELEASE)
    h.acquire(MEMBER_ID, 20)
    h.persist(h.partition.release_member(MEMBER_ID, h.now))
    assert h.partition.start_offset == 20 and h.partition.records == {}


def test_acquire_with_multiple_batches_and_max_fetch_records() -> None:
    h = ShareHarness()
    h.acquire(MEMBER_ID, 30)
    h.ack(MEMBER_ID, 10, 14, RELEASE)
    h.ack(MEMBER_ID, 20, 24, RELEASE)
    assert h.acquire(MEMBER_ID_2, 7) == [AcquiredRecords(10, 14, 2), AcquiredRecords(20, 21, 2)]


# ---------------------------------------------------------------- log start offset movement


def _move_log_start(h: ShareHarness, offset: int) -> None:
    h.persist(h.partition.advance_log_start_offset(offset, h.now))


def test_lso_movement_on_initialization_share_partition() -> None:
    h = ShareHarness()
    _move_log_start(h, 5)
    assert h.partition.start_offset == 5 and h.partition.next_offset == 5
    assert h.acquire(MEMBER_ID, 2) == [AcquiredRecords(5, 6, 1)]
    h.restart()
    assert h.partition.start_offset == 5


def test_lso_movement_for_archiving_batches() -> None:
    h = ShareHarness()
    h.acquire(MEMBER_ID, 20)
    h.ack(MEMBER_ID, 0, 14, RELEASE)
    _move_log_start(h, 10)  # 0-9 available: archived, and the start offset follows
    assert h.partition.start_offset == 10
    assert h.acquire(MEMBER_ID_2, 20) == [AcquiredRecords(10, 14, 2), AcquiredRecords(20, 34, 1)]


def test_lso_movement_to_end_offset() -> None:
    h = ShareHarness()
    h.acquire(MEMBER_ID, 10)
    h.ack(MEMBER_ID, 0, 9, RELEASE)
    _move_log_start(h, 10)
    assert h.partition.start_offset == 10 and h.partition.records == {}


def test_lso_movement_ahead_of_end_offset() -> None:
    h = ShareHarness()
    h.acquire(MEMBER_ID, 10)
    h.ack(MEMBER_ID, 0, 9, RELEASE)
    _move_log_start(h, 15)
    assert h.partition.start_offset == 15 and h.partition.next_offset == 15
    assert h.acquire(MEMBER_ID, 1) == [AcquiredRecords(15, 15, 1)]


def test_release_acquired_records_batches_post_start_offset_movement() -> None:
    h = ShareHarness()
    h.acquire(MEMBER_ID, 10)
    _move_log_start(h, 5)  # 0-4 are still acquired: the start offset waits for them
    assert h.partition.start_offset == 0
    h.persist(h.partition.release_member(MEMBER_ID, h.now))
    assert h.partition.start_offset == 5  # released below the log start: archived
    assert h.state(5) == (AVAILABLE, 1)


def test_acquisition_lock_timeout_for_batches_post_start_offset_movement() -> None:
    h = ShareHarness()
    h.acquire(MEMBER_ID, 10)
    _move_log_start(h, 7)
    h.sleep(LOCK_MS)
    assert h.partition.start_offset == 7
    assert [h.state(o) for o in (7, 9)] == [(AVAILABLE, 1), (AVAILABLE, 1)]


def test_acknowledge_batch_post_lso_movement() -> None:
    h = ShareHarness()
    h.acquire(MEMBER_ID, 10)
    _move_log_start(h, 5)
    h.ack(MEMBER_ID, 0, 9, ACCEPT)
    assert h.partition.start_offset == 10 and h.partition.records == {}

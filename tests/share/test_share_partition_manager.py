"""Share sessions and the share shard (``SharePartitionManager``), named after Kafka's
``SharePartitionManagerTest`` and ``ShareSessionCacheTest`` where they apply: the session
epochs and errors, acknowledgements persisted before they apply, session close releasing
what the member holds, lock expiry on the runtime's timer, and restarts."""

from __future__ import annotations

from manager_harness import GROUP, MEMBER_1, MEMBER_2, ManagerHarness, key

from coordinator.share import RecordState, SharePartitionConfig
from coordinator.share.manager import SessionAnswer, ShareAppendFailed
from coordinator.share.sessions import ShareSessionCache, ShareSessionKey, next_epoch
from wire.constants import ErrorCode

ACCEPT, RELEASE, REJECT = 1, 2, 3


def _ok(answer: SessionAnswer | ShareAppendFailed) -> SessionAnswer:
    assert isinstance(answer, SessionAnswer)
    assert answer.error is None, answer.error.message
    return answer


def _error(answer: SessionAnswer | ShareAppendFailed) -> ErrorCode:
    assert isinstance(answer, SessionAnswer) and answer.error is not None
    return answer.error.error_code


def _opened(h: ManagerHarness, member: str = MEMBER_1, end: int = 10) -> None:
    h.end_offsets[key()] = end
    _ok(h.session("fetch", member, 0, [key()]))


# ------------------------------------------------------------------ ShareSessionCacheTest


def test_share_session_cache() -> None:
    cache = ShareSessionCache(max_entries=2)
    a = cache.maybe_create_session(ShareSessionKey("g", "a"), [key(0)])
    b = cache.maybe_create_session(ShareSessionKey("g", "b"), [key(0), key(1)])
    assert a is not None and b is not None and a.epoch == 1
    assert len(cache) == 2 and cache.total_partitions() == 3
    assert cache.maybe_create_session(ShareSessionKey("g", "c"), []) is None  # full
    assert cache.remove(ShareSessionKey("g", "a")) is a
    assert cache.maybe_create_session(ShareSessionKey("g", "c"), []) is not None


def test_next_epoch_wraps_to_one_and_final_stays_final() -> None:
    assert next_epoch(0) == 1 and next_epoch(41) == 42
    assert next_epoch(2**31 - 1) == 1
    assert next_epoch(-1) == -1


# ------------------------------------------------------------------ SharePartitionManagerTest


def test_new_context() -> None:
    h = ManagerHarness()
    answer = _ok(h.session("fetch", MEMBER_1, 0, [key(0), key(1)]))
    assert answer.partitions == (key(0), key(1))
    session = h.shard.sessions.get(ShareSessionKey(GROUP, MEMBER_1))
    assert session is not None and session.epoch == 1
    _ok(h.session("fetch", MEMBER_1, 1))
    assert session.epoch == 2
    assert _error(h.session("fetch", MEMBER_1, 5)) == ErrorCode.INVALID_SHARE_SESSION_EPOCH
    assert session.epoch == 2  # a wrong epoch changes nothing
    assert _error(h.session("fetch", MEMBER_2, 1)) == ErrorCode.SHARE_SESSION_NOT_FOUND
    # Epoch 0 again replaces the session.
    _ok(h.session("fetch", MEMBER_1, 0, [key(2)]))
    replaced = h.shard.sessions.get(ShareSessionKey(GROUP, MEMBER_1))
    assert replaced is not None and replaced.epoch == 1 and list(replaced.partitions) == [key(2)]


def test_new_context_returns_final_context_error() -> None:
    h = ManagerHarness()
    assert _error(h.session("fetch", MEMBER_1, -1)) == ErrorCode.SHARE_SESSION_NOT_FOUND


def test_new_context_returns_final_context_without_request_data() -> None:
    h = ManagerHarness()
    _ok(h.session("fetch", MEMBER_1, 0, [key()]))
    answer = _ok(h.session("fetch", MEMBER_1, -1))
    assert answer.closed and answer.partitions == (key(),)
    assert h.shard.sessions.get(ShareSessionKey(GROUP, MEMBER_1)) is None


def test_initial_fetch_with_acknowledgements_is_invalid_request() -> None:
    h = ManagerHarness()
    answer = h.session("fetch", MEMBER_1, 0, [key()], acks={key(): [(0, 0, ACCEPT)]})
    assert _error(answer) == ErrorCode.INVALID_REQUEST
    assert h.shard.sessions.get(ShareSessionKey(GROUP, MEMBER_1)) is None


def test_share_session_limit_reached() -> None:
    h = ManagerHarness(max_sessions=1)
    _ok(h.session("fetch", MEMBER_1, 0, [key()]))
    assert _error(h.session("fetch", MEMBER_2, 0, [key()])) == ErrorCode.SHARE_SESSION_LIMIT_REACHED
    _ok(h.session("fetch", MEMBER_1, 0, [key()]))  # the same member replaces its own


def test_subsequent_share_session() -> None:
    h = ManagerHarness()
    _ok(h.session("fetch", MEMBER_1, 0, [key(0)]))
    answer = _ok(h.session("fetch", MEMBER_1, 1, [key(1)]))
    assert answer.partitions == (key(0), key(1))  # a later request adds partitions


def test_to_forget_partitions() -> None:
    h = ManagerHarness()
    _ok(h.session("fetch", MEMBER_1, 0, [key(0), key(1)]))
    answer = _ok(h.session("fetch", MEMBER_1, 1, forgotten=[key(0)]))
    assert answer.partitions == (key(1),)


def test_share_acknowledge_cannot_open_a_session() -> None:
    h = ManagerHarness()
    assert _error(h.session("acknowledge", MEMBER_1, 0)) == ErrorCode.INVALID_SHARE_SESSION_EPOCH
    assert _error(h.session("acknowledge", MEMBER_1, 1)) == ErrorCode.SHARE_SESSION_NOT_FOUND
    _ok(h.session("fetch", MEMBER_1, 0, [key()]))
    assert _error(h.session("acknowledge", MEMBER_1, 3)) == ErrorCode.INVALID_SHARE_SESSION_EPOCH
    _ok(h.session("acknowledge", MEMBER_1, 1))
    _ok(h.session("fetch", MEMBER_1, 2))  # ShareAcknowledge moved the epoch on


def test_pending_initialization_should_complete_fetch_request() -> None:
    h = ManagerHarness()
    _opened(h, end=10)
    assert key() not in h.shard.partitions
    records_before = len(h.log)
    # The partition's first snapshot is written (start offset from share.auto.offset.reset),
    # then the records are acquired.
    assert h.acquire(MEMBER_1, start_offset_if_new=4) == {key(): [(4, 9, 1)]}
    assert len(h.log) == records_before + 1
    assert h.shard.partitions[key()].start_offset == 4


def test_acknowledge_single_partition() -> None:
    h = ManagerHarness()
    _opened(h)
    h.acquire(MEMBER_1)
    answer = _ok(h.session("acknowledge", MEMBER_1, 1, acks={key(): [(0, 9, ACCEPT)]}))
    assert answer.acknowledge_errors == {key(): (ErrorCode.NONE, None)}
    assert h.shard.partitions[key()].start_offset == 10  # persisted, then applied
    assert h.restart().shard.partitions[key()].start_offset == 10


def test_acknowledge_multiple_partition() -> None:
    h = ManagerHarness()
    for p in (0, 1):
        h.end_offsets[key(p)] = 5
    _ok(h.session("fetch", MEMBER_1, 0, [key(0), key(1)]))
    assert h.acquire(MEMBER_1, [key(0), key(1)]) == {key(0): [(0, 4, 1)], key(1): [(0, 4, 1)]}
    answer = _ok(h.session("fetch", MEMBER_1, 1, acks={
        key(0): [(0, 4, ACCEPT)], key(1): [(0, 1, RELEASE), (2, 4, REJECT)]}))
    assert set(answer.acknowledge_errors.values()) == {(ErrorCode.NONE, None)}
    assert h.shard.partitions[key(0)].start_offset == 5
    one = h.shard.partitions[key(1)]
    assert [one.records[o].state for o in range(5)] == [RecordState.AVAILABLE] * 2 + [
        RecordState.ARCHIVED] * 3


def test_acknowledge_incorrect_member_id() -> None:
    h = ManagerHarness()
    _opened(h)
    _ok(h.session("fetch", MEMBER_2, 0, [key()]))
    h.acquire(MEMBER_1)
    answer = _ok(h.session("acknowledge", MEMBER_2, 1, acks={key(): [(0, 9, ACCEPT)]}))
    code, message = answer.acknowledge_errors[key()]
    assert code == ErrorCode.INVALID_RECORD_STATE and message is not None
    assert h.shard.partitions[key()].records[0].state is RecordState.ACQUIRED


def test_acknowledge_empty_partition_cache_map() -> None:
    h = ManagerHarness()
    _opened(h)  # no acquisition yet: the share partition has no state
    answer = _ok(h.session("acknowledge", MEMBER_1, 1, acks={key(): [(0, 0, ACCEPT)]}))
    assert answer.acknowledge_errors[key()][0] == ErrorCode.INVALID_RECORD_STATE


def test_acknowledge_append_failure_applies_nothing() -> None:
    h = ManagerHarness()
    _opened(h)
    h.acquire(MEMBER_1)
    h.fail_next_append = True
    answer = h.session("acknowledge", MEMBER_1, 1, acks={key(): [(0, 9, ACCEPT)]})
    assert answer == ShareAppendFailed(ErrorCode.KAFKA_STORAGE_ERROR)
    partition = h.shard.partitions[key()]
    assert partition.start_offset == 0 and partition.records[0].state is RecordState.ACQUIRED


def test_release_session_success() -> None:
    h = ManagerHarness()
    _opened(h)
    h.acquire(MEMBER_1)
    changes = h.changes
    _ok(h.session("fetch", MEMBER_1, -1, acks={key(): [(0, 1, ACCEPT)]}))
    partition = h.shard.partitions[key()]
    assert partition.start_offset == 2  # the acknowledgement applied
    assert partition.acquired_by(MEMBER_1) == []  # the rest released
    assert all(partition.records[o].state is RecordState.AVAILABLE for o in range(2, 10))
    assert h.changes > changes  # long-polling fetches are woken
    assert h.acquire(MEMBER_2) == {key(): [(2, 9, 2)]}


def test_release_session_with_incorrect_member_id() -> None:
    h = ManagerHarness()
    _opened(h)
    _ok(h.session("fetch", MEMBER_2, 0, [key()]))
    h.acquire(MEMBER_1)
    _ok(h.session("fetch", MEMBER_2, -1))
    assert len(h.shard.partitions[key()].acquired_by(MEMBER_1)) == 10


def test_release_session_with_null_share_session() -> None:
    h = ManagerHarness()
    assert _error(h.session("acknowledge", MEMBER_1, -1)) == ErrorCode.SHARE_SESSION_NOT_FOUND


def test_multiple_sequential_share_fetches() -> None:
    h = ManagerHarness()
    _opened(h, end=10)
    _ok(h.session("fetch", MEMBER_2, 0, [key()]))
    assert h.acquire(MEMBER_1, max_records=4) == {key(): [(0, 3, 1)]}
    assert h.acquire(MEMBER_2, max_records=4) == {key(): [(4, 7, 1)]}
    assert h.acquire(MEMBER_1, max_records=4) == {key(): [(8, 9, 1)]}
    assert h.acquire(MEMBER_2) == {}


def test_lock_expiry_is_driven_by_the_timer() -> None:
    h = ManagerHarness(SharePartitionConfig(record_lock_duration_ms=1000))
    _opened(h, end=3)
    h.acquire(MEMBER_1)
    assert h.lock_deadline == 1000
    h.sleep(999)
    assert h.shard.partitions[key()].records[0].state is RecordState.ACQUIRED
    h.sleep(1)
    partition = h.shard.partitions[key()]
    assert [partition.records[o].state for o in range(3)] == [RecordState.AVAILABLE] * 3
    assert h.lock_deadline is None
    assert h.acquire(MEMBER_2) == {key(): [(0, 2, 2)]}  # redelivered, count raised


def test_delivery_count_limit_archives_on_lock_expiry() -> None:
    h = ManagerHarness(SharePartitionConfig(record_lock_duration_ms=100, delivery_count_limit=2))
    _opened(h, end=1)
    assert h.acquire(MEMBER_1) == {key(): [(0, 0, 1)]}
    h.sleep(100)
    assert h.acquire(MEMBER_1) == {key(): [(0, 0, 2)]}
    h.sleep(100)  # the second delivery timed out at the limit: archived
    assert h.shard.partitions[key()].start_offset == 1
    assert h.acquire(MEMBER_1) == {}


def test_restart_makes_acquired_records_available_and_keeps_accepted() -> None:
    h = ManagerHarness()
    _opened(h, end=6)
    h.acquire(MEMBER_1)
    _ok(h.session("acknowledge", MEMBER_1, 1, acks={key(): [(0, 1, ACCEPT), (4, 4, REJECT)]}))
    again = h.restart()
    assert again.shard.sessions.get(ShareSessionKey(GROUP, MEMBER_1)) is None
    assert _error(again.session("fetch", MEMBER_1, 2)) == ErrorCode.SHARE_SESSION_NOT_FOUND
    _ok(again.session("fetch", MEMBER_1, 0, [key()]))
    # 2, 3, 5 come back with the delivery count they had durably (acquisitions are not
    # written, as in Kafka); 0, 1 accepted and 4 rejected never do.
    assert again.acquire(MEMBER_1) == {key(): [(2, 3, 1), (5, 5, 1)]}


def test_resize_cached_sessions() -> None:
    h = ManagerHarness()
    _ok(h.session("fetch", MEMBER_1, 0, [key(0)]))
    assert h.shard.sessions.total_partitions() == 1
    _ok(h.session("fetch", MEMBER_1, 1, [key(1), key(2)]))
    assert h.shard.sessions.total_partitions() == 3
    _ok(h.session("fetch", MEMBER_1, 2, forgotten=[key(0), key(2)]))
    assert h.shard.sessions.total_partitions() == 1


def test_zero_size_share_session() -> None:
    h = ManagerHarness()
    assert _ok(h.session("fetch", MEMBER_1, 0)).partitions == ()
    assert _ok(h.session("fetch", MEMBER_1, 1, [key(0)])).partitions == (key(0),)


def test_cached_topic_partitions_with_no_topic_partitions() -> None:
    h = ManagerHarness()
    assert h.shard.sessions.get(ShareSessionKey(GROUP, MEMBER_1)) is None
    _ok(h.session("fetch", MEMBER_1, 0))
    session = h.shard.sessions.get(ShareSessionKey(GROUP, MEMBER_1))
    assert session is not None and list(session.partitions) == []


def test_cached_topic_partitions_for_valid_share_sessions() -> None:
    h = ManagerHarness()
    _ok(h.session("fetch", MEMBER_1, 0, [key(0), key(1)]))
    _ok(h.session("fetch", MEMBER_2, 0, [key(1, group="other")], group="other"))
    one = h.shard.sessions.get(ShareSessionKey(GROUP, MEMBER_1))
    two = h.shard.sessions.get(ShareSessionKey("other", MEMBER_2))
    assert one is not None and list(one.partitions) == [key(0), key(1)]
    assert two is not None and list(two.partitions) == [key(1, group="other")]
    assert h.shard.sessions.get(ShareSessionKey("other", MEMBER_1)) is None


def test_share_partition_key() -> None:
    assert key(0) == key(0) and hash(key(0)) == hash(key(0))
    assert key(0) != key(1) and key(0) != key(0, group="other")


def test_release_session_with_incorrect_group_id() -> None:
    h = ManagerHarness()
    _opened(h)
    h.acquire(MEMBER_1)
    assert _error(h.session("fetch", MEMBER_1, -1, group="other")) == (
        ErrorCode.SHARE_SESSION_NOT_FOUND)
    assert len(h.shard.partitions[key()].acquired_by(MEMBER_1)) == 10


def test_release_session_with_empty_topic_partitions() -> None:
    h = ManagerHarness()
    _ok(h.session("fetch", MEMBER_1, 0))
    records = len(h.log)
    assert _ok(h.session("fetch", MEMBER_1, -1)).closed
    assert len(h.log) == records  # nothing to release, nothing written


def test_acknowledge_incorrect_group_id() -> None:
    h = ManagerHarness()
    _opened(h)
    h.acquire(MEMBER_1)
    answer = h.session("acknowledge", MEMBER_1, 1, acks={key(): [(0, 9, ACCEPT)]},
                       group="other")
    assert _error(answer) == ErrorCode.SHARE_SESSION_NOT_FOUND
    assert h.shard.partitions[key()].start_offset == 0

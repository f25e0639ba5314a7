"""OffsetCommit / OffsetFetch / expiry: mirrors of GroupCoordinatorTest.scala's offset tests,
OffsetMetadataManagerTest's classic ("generic group") cases and the KIP-211 expiry matrix."""

from __future__ import annotations

import pytest
from harness import (
    GROUP_ID,
    MEMBER_ID,
    PROTOCOL_TYPE,
    PROTOCOLS,
    UNKNOWN_MEMBER_ID,
    Harness,
    partition,
)
from scenarios import subscription, verify_leave_group_result

from coordinator.config import CoordinatorConfig
from coordinator.core import (
    ErrorCode,
    HeartbeatTimerKey,
    RetentionTimerKey,
)
from coordinator.core.classic.group import ClassicGroup
from coordinator.core.classic.state import DEAD
from coordinator.core.offset_commit import metadata_too_large
from storage.records import GroupMetadataKey, OffsetCommitKey, OffsetCommitValue

TP = ("topic", 0)


def _join_and_sync(h: Harness, session_timeout: int = 500, protocol_type: str = PROTOCOL_TYPE,
                   protocols=PROTOCOLS) -> tuple[str, int]:  # type: ignore[no-untyped-def]
    join = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, protocol_type, protocols,
                                session_timeout, session_timeout)
    assert join.error_code == ErrorCode.NONE
    sync = h.sync_group_leader(GROUP_ID, join.generation_id, join.member_id, {})
    assert sync.error_code == ErrorCode.NONE
    return join.member_id, join.generation_id


def test_offset_commit_dead_group(h: Harness) -> None:
    h.add_group(ClassicGroup("deadGroupId", DEAD, 0))
    result = h.commit_offsets("deadGroupId", "memberId", 1, {TP: 0})
    assert result == {TP: ErrorCode.COORDINATOR_NOT_AVAILABLE}


def test_commit_maintains_session(h: Harness) -> None:
    session_timeout = 1000
    member_id, generation = _join_and_sync(h, session_timeout)
    h.sleep(session_timeout // 2)
    assert h.commit_offsets(GROUP_ID, member_id, generation, {TP: 0}) == {TP: ErrorCode.NONE}
    h.sleep(session_timeout // 2 + 100)
    assert h.heartbeat(GROUP_ID, member_id, 1) == ErrorCode.NONE


def test_commit_offset_from_unknown_group(h: Harness) -> None:
    assert h.commit_offsets(GROUP_ID, MEMBER_ID, 1, {TP: 0}) == {TP: ErrorCode.ILLEGAL_GENERATION}
    assert h.maybe_group() is None


def test_commit_offset_with_default_generation(h: Harness) -> None:
    assert h.commit_offsets(GROUP_ID, "", -1, {TP: 0}) == {TP: ErrorCode.NONE}
    group = h.group()
    assert group.state.value == "Empty"
    assert group.protocol_type is None


def test_commit_offsets_after_group_is_empty(h: Harness) -> None:
    join = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    assert join.error_code == ErrorCode.NONE
    verify_leave_group_result(h.single_leave_group(GROUP_ID, join.member_id))
    # The reset-offsets tool commits to the now Empty group.
    assert h.commit_offsets(GROUP_ID, "", -1, {TP: 0}) == {TP: ErrorCode.NONE}
    error, data = h.fetch_offsets(GROUP_ID, [TP])
    assert error == ErrorCode.NONE
    assert data[TP][0] == 0


def test_fetch_offsets(h: Harness) -> None:
    part = partition(0, 97, committed_leader_epoch=15, committed_metadata="some metadata")
    assert h.commit_offsets(GROUP_ID, "", -1, {TP: part}) == {TP: ErrorCode.NONE}
    error, data = h.fetch_offsets(GROUP_ID, [TP])
    assert error == ErrorCode.NONE
    assert data[TP] == (97, 15, "some metadata", ErrorCode.NONE)


def test_commit_and_fetch_offsets_with_empty_group(h: Harness) -> None:
    # "" is allowed for OffsetCommit/OffsetFetch/DescribeGroups/DeleteGroups (back-compat).
    assert h.commit_offsets("", "", -1, {TP: 0}) == {TP: ErrorCode.NONE}
    error, data = h.fetch_offsets("", [TP])
    assert error == ErrorCode.NONE and data[TP][0] == 0
    described = h.describe_group("")
    assert described.error_code == ErrorCode.NONE
    assert described.group_state == "Empty"
    assert h.delete_groups([""]) == {"": ErrorCode.NONE}
    error, data = h.fetch_offsets("", [TP])
    assert error == ErrorCode.NONE and data[TP][0] == -1


def test_fetch_offset_for_unknown_partition(h: Harness) -> None:
    error, data = h.fetch_offsets(GROUP_ID, [TP])
    assert error == ErrorCode.NONE
    assert data[TP] == (-1, -1, "", ErrorCode.NONE)


def test_fetch_all_offsets(h: Harness) -> None:
    assert h.fetch_offsets(GROUP_ID, None) == (ErrorCode.NONE, {})
    offsets = {("topic", 0): 15, ("topic", 1): 16, ("other-topic", 0): 17}
    assert h.commit_offsets(GROUP_ID, "", -1, offsets) == {tp: ErrorCode.NONE for tp in offsets}
    error, data = h.fetch_offsets(GROUP_ID, None)
    assert error == ErrorCode.NONE
    assert len(data) == 3
    assert all(v[3] == ErrorCode.NONE for v in data.values())
    assert {tp: v[0] for tp, v in data.items()} == offsets


def test_commit_offset_in_completing_rebalance(h: Harness) -> None:
    join = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    assert join.error_code == ErrorCode.NONE
    result = h.commit_offsets(GROUP_ID, join.member_id, join.generation_id, {TP: 0})
    assert result == {TP: ErrorCode.REBALANCE_IN_PROGRESS}


def test_commit_offset_in_completing_rebalance_from_unknown_member_id(h: Harness) -> None:
    join = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    assert join.error_code == ErrorCode.NONE
    result = h.commit_offsets(GROUP_ID, UNKNOWN_MEMBER_ID, join.generation_id, {TP: 0})
    assert result == {TP: ErrorCode.UNKNOWN_MEMBER_ID}


def test_commit_offset_in_completing_rebalance_from_illegal_generation(h: Harness) -> None:
    join = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    assert join.error_code == ErrorCode.NONE
    result = h.commit_offsets(GROUP_ID, join.member_id, join.generation_id + 1, {TP: 0})
    assert result == {TP: ErrorCode.ILLEGAL_GENERATION}


def test_manual_commit_offset_should_not_validate_member_id_and_instance_id(h: Harness) -> None:
    result = h.commit_offsets(GROUP_ID, UNKNOWN_MEMBER_ID, -1, {TP: 0}, "instance-id")
    assert result == {TP: ErrorCode.NONE}
    assert h.commit_offsets(GROUP_ID, "unknown", -1, {TP: 0}) == {TP: ErrorCode.NONE}


# --------------------------------------------------------------------------- beyond Kafka's names


def test_commit_to_missing_group_v9_is_group_id_not_found(h: Harness) -> None:
    result = h.commit_offsets(GROUP_ID, MEMBER_ID, 1, {TP: 0}, api_version=9)
    assert result == {TP: ErrorCode.GROUP_ID_NOT_FOUND}


def test_commit_without_member_to_non_empty_group_is_unknown_member(h: Harness) -> None:
    _join_and_sync(h)
    assert h.commit_offsets(GROUP_ID, "", -1, {TP: 0}) == {TP: ErrorCode.UNKNOWN_MEMBER_ID}


def test_commit_during_preparing_rebalance_from_previous_generation_is_accepted(
    h: Harness,
) -> None:
    member_id, generation = _join_and_sync(h)
    h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    assert h.state() == "PreparingRebalance"
    h.sleep(100)
    assert h.commit_offsets(GROUP_ID, member_id, generation, {TP: 5}) == {TP: ErrorCode.NONE}
    assert h.deadline(HeartbeatTimerKey(GROUP_ID, member_id)) == h.now + 500


def test_offset_metadata_too_large_only_fails_that_partition() -> None:
    h = Harness(config=CoordinatorConfig(offset_metadata_max_bytes=10))
    ok = ("topic", 0)
    big = ("topic", 1)
    result = h.commit_offsets(GROUP_ID, "", -1, {ok: (1, "0123456789"), big: (2, "0123456789x")})
    assert result == {ok: ErrorCode.NONE, big: ErrorCode.OFFSET_METADATA_TOO_LARGE}
    _, data = h.fetch_offsets(GROUP_ID, [ok, big])
    assert data[ok][0] == 1
    assert data[big][0] == -1


def test_offset_metadata_length_counts_utf16_code_units() -> None:
    assert not metadata_too_large("é" * 4, 4)
    assert metadata_too_large("\U0001f600" * 3, 5)  # 3 astral chars = 6 UTF-16 units
    assert not metadata_too_large("\U0001f600" * 2, 4)


def test_commit_records_are_persisted_and_replayable(h: Harness) -> None:
    member_id, generation = _join_and_sync(h)
    before = len(h.records)
    h.commit_offsets(GROUP_ID, member_id, generation, {TP: (42, "m")})
    offsets = [r for r in h.records[before:] if isinstance(r.key, OffsetCommitKey)]
    assert len(offsets) == 1
    assert offsets[0].key == OffsetCommitKey(GROUP_ID, "topic", 0)
    value = offsets[0].value
    assert isinstance(value, OffsetCommitValue)
    assert (value.offset, value.metadata, value.commit_timestamp, value.expire_timestamp) == (
        42, "m", h.now, -1)


@pytest.mark.parametrize("api_version", [2, 3, 4])
def test_commit_retention_time_sets_expire_timestamp(h: Harness, api_version: int) -> None:
    h.commit_offsets(GROUP_ID, "", -1, {TP: 1}, api_version=api_version, retention_time_ms=1000)
    assert h.coordinator.committed_offsets(GROUP_ID)[TP].expire_timestamp == h.now + 1000


def test_commit_retention_time_ignored_from_v5(h: Harness) -> None:
    h.commit_offsets(GROUP_ID, "", -1, {TP: 1}, api_version=5, retention_time_ms=1000)
    assert h.coordinator.committed_offsets(GROUP_ID)[TP].expire_timestamp == -1


def test_fetch_offsets_of_several_groups(h: Harness) -> None:
    h.commit_offsets("g1", "", -1, {("a", 0): 1})
    h.commit_offsets("g2", "", -1, {("b", 0): 2, ("b", 1): 3})
    response = h.fetch_offsets_response([("g1", [("a", 0), ("a", 1)]), ("g2", None),
                                         ("missing", None)])
    assert [g.group_id for g in response.groups] == ["g1", "g2", "missing"]
    g1, g2, missing = response.groups
    assert [(p.partition_index, p.committed_offset) for p in g1.topics[0].partitions] == [
        (0, 1), (1, -1)]
    assert [(t.name, [p.committed_offset for p in t.partitions]) for t in g2.topics] == [
        ("b", [2, 3])]
    assert missing.topics == ()
    assert all(g.error_code == ErrorCode.NONE for g in response.groups)


def test_fetch_offsets_require_stable_has_no_unstable_offsets(h: Harness) -> None:
    h.commit_offsets(GROUP_ID, "", -1, {TP: 7})
    for require_stable in (True, False):
        error, data = h.fetch_offsets(GROUP_ID, [TP], require_stable=require_stable)
        assert error == ErrorCode.NONE
        assert data[TP] == (7, -1, "", ErrorCode.NONE)


def test_fetch_offsets_invalid_group_id_is_only_null(h: Harness) -> None:
    response = h.fetch_offsets_response([(None, None)])  # type: ignore[list-item]
    assert response.groups[0].error_code == ErrorCode.INVALID_GROUP_ID
    # (v0-7's top-level copy of the single group's error is the broker's:
    # tests/server/test_groups.py::test_offset_fetch_single_group_error_placement)


# --------------------------------------------------------------------------- KIP-211 expiry

RETENTION_CONFIG = CoordinatorConfig(
    group_min_session_timeout_ms=10, offsets_retention_minutes=1,
    offsets_retention_check_interval_ms=1000, group_initial_rebalance_delay_ms=50,
)
RETENTION_MS = 60_000


def _loaded(h: Harness) -> None:
    h.apply(h.coordinator.on_loaded(h.now))


def test_retention_scan_is_armed_on_load() -> None:
    h = Harness(config=RETENTION_CONFIG)
    _loaded(h)
    assert h.deadline(RetentionTimerKey()) == 1000


def test_offsets_of_simple_group_expire_by_commit_timestamp() -> None:
    h = Harness(config=RETENTION_CONFIG)
    _loaded(h)
    h.commit_offsets(GROUP_ID, "", -1, {("a", 0): 1})
    h.sleep(30_000)
    h.commit_offsets(GROUP_ID, "", -1, {("b", 0): 2})
    h.sleep(RETENTION_MS - 30_000 + 1000)
    assert set(h.coordinator.committed_offsets(GROUP_ID)) == {("b", 0)}
    h.sleep(30_000)
    assert h.coordinator.committed_offsets(GROUP_ID) == {}
    # The offset-only group is gone and, never having had a generation, gets no tombstone.
    assert h.maybe_group() is None
    assert not any(isinstance(r.key, GroupMetadataKey) for r in h.records)
    tombstones = [r for r in h.records if isinstance(r.key, OffsetCommitKey) and r.value is None]
    assert len(tombstones) == 2


def test_offsets_of_empty_consumer_group_expire_from_when_it_became_empty() -> None:
    h = Harness(config=RETENTION_CONFIG)
    _loaded(h)
    member_id, generation = _join_and_sync(h, 200_000)
    h.commit_offsets(GROUP_ID, member_id, generation, {TP: 1})
    h.sleep(RETENTION_MS * 2)
    assert h.heartbeat(GROUP_ID, member_id, generation) == ErrorCode.NONE
    # Stable with an unknown (unparsable) subscription: nothing expires.
    assert TP in h.coordinator.committed_offsets(GROUP_ID)
    verify_leave_group_result(h.single_leave_group(GROUP_ID, member_id))
    assert h.state() == "Empty"
    empty_since = h.now
    h.commit_offsets(GROUP_ID, "", -1, {("x", 0): 3})
    h.sleep(RETENTION_MS - 2000)
    assert set(h.coordinator.committed_offsets(GROUP_ID)) == {TP, ("x", 0)}
    h.sleep(3000)
    assert h.now - empty_since >= RETENTION_MS
    # Both expire together: the clock started when the group became Empty.
    assert h.coordinator.committed_offsets(GROUP_ID) == {}
    # A group that had a generation is tombstoned when it dies.
    assert h.maybe_group() is None
    assert GROUP_ID not in h.coordinator.hard_state().groups
    assert any(isinstance(r.key, GroupMetadataKey) and r.value is None for r in h.records)


def test_offsets_of_stable_consumer_group_expire_only_for_unsubscribed_topics() -> None:
    h = Harness(config=RETENTION_CONFIG)
    _loaded(h)
    member_id, generation = _join_and_sync(h, 30_000, protocols=[("range", subscription("bar"))])
    h.commit_offsets(GROUP_ID, member_id, generation, {("bar", 0): 1, ("foo", 0): 2})
    for _ in range(3):
        h.sleep(25_000)
        assert h.heartbeat(GROUP_ID, member_id, generation) == ErrorCode.NONE
    assert set(h.coordinator.committed_offsets(GROUP_ID)) == {("bar", 0)}
    assert h.state() == "Stable"


def test_offsets_of_rebalancing_group_never_expire() -> None:
    h = Harness(config=RETENTION_CONFIG)
    _loaded(h)
    member_id, generation = _join_and_sync(h, 100_000)
    h.commit_offsets(GROUP_ID, member_id, generation, {TP: 1})
    h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS,
                      session_timeout=100_000, rebalance_timeout=500_000)
    assert h.state() == "PreparingRebalance"
    h.sleep(RETENTION_MS + 5000)
    assert h.state() == "PreparingRebalance"
    assert TP in h.coordinator.committed_offsets(GROUP_ID)


def test_offsets_with_explicit_expire_timestamp_use_old_semantics() -> None:
    h = Harness(config=RETENTION_CONFIG)
    _loaded(h)
    h.commit_offsets(GROUP_ID, "", -1, {TP: 1}, api_version=2, retention_time_ms=5000)
    h.sleep(4000)
    assert TP in h.coordinator.committed_offsets(GROUP_ID)
    h.sleep(2000)
    assert TP not in h.coordinator.committed_offsets(GROUP_ID)


def test_offsets_retention_scan_rearms_itself() -> None:
    h = Harness(config=RETENTION_CONFIG)
    _loaded(h)
    h.sleep(1001)
    assert h.deadline(RetentionTimerKey()) == 2001
    assert h.fired.count(RetentionTimerKey()) == 1

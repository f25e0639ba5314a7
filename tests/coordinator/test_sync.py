"""SyncGroup: mirrors of GroupCoordinatorTest.scala's sync tests (and Java-only ones)."""

from __future__ import annotations

from harness import (
    DEFAULT_REBALANCE_TIMEOUT,
    DEFAULT_SESSION_TIMEOUT,
    FOLLOWER_INSTANCE_ID,
    GROUP_ID,
    GROUP_INITIAL_REBALANCE_DELAY,
    LEADER_INSTANCE_ID,
    MEMBER_ID,
    PROTOCOL_NAME,
    PROTOCOL_SUPERSET,
    PROTOCOL_TYPE,
    PROTOCOLS,
    UNKNOWN_MEMBER_ID,
    Harness,
)

from coordinator.core import ErrorCode, SyncTimerKey
from coordinator.core.classic.group import ClassicGroup
from coordinator.core.classic.state import DEAD
from storage.records import GroupMetadataKey, GroupMetadataValue


def _two_member_group(h: Harness) -> tuple[str, str, int]:
    """Kafka's recurring setup: join+sync one member, then a second member and a leader rejoin."""
    first = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    assert first.member_id == first.leader
    assert first.error_code == ErrorCode.NONE
    sync = h.sync_group_leader(GROUP_ID, first.generation_id, first.member_id,
                               {first.member_id: b""})
    assert sync.error_code == ErrorCode.NONE
    other_token = h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    join_token = h.send_join_group(GROUP_ID, first.member_id, PROTOCOL_TYPE, PROTOCOLS)
    join, other = h.reply(join_token), h.reply(other_token)
    assert join.error_code == other.error_code == ErrorCode.NONE
    assert join.generation_id == other.generation_id
    assert join.leader == other.leader == first.member_id
    return first.member_id, other.member_id, join.generation_id


def test_new_member_failure_after_sync_group_completion(h: Harness) -> None:
    leader_id, follower_id, generation = _two_member_group(h)
    h.send_sync_group(GROUP_ID, generation, follower_id)
    sync = h.sync_group_leader(GROUP_ID, generation, leader_id,
                               {leader_id: b"", follower_id: b""})
    assert sync.error_code == ErrorCode.NONE
    h.sleep(DEFAULT_SESSION_TIMEOUT + 1)
    assert h.state() == "Empty"
    assert not h.group().members


def test_sync_dead_group(h: Harness) -> None:
    h.add_group(ClassicGroup("deadGroupId", DEAD, 0))
    result = h.sync_group_follower("deadGroupId", 1, "memberId")
    assert result.error_code == ErrorCode.COORDINATOR_NOT_AVAILABLE


def _sync_protocol_type_and_name_with(
    h: Harness,
    protocol_type: str | None,
    protocol_name: str | None,
    expected_error: int,
    expected_protocol_type: str | None,
    expected_protocol_name: str | None,
) -> None:
    leader_token = h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE,
                                     PROTOCOL_SUPERSET, LEADER_INSTANCE_ID, DEFAULT_SESSION_TIMEOUT)
    follower_token = h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE,
                                       PROTOCOL_SUPERSET, FOLLOWER_INSTANCE_ID,
                                       DEFAULT_SESSION_TIMEOUT)
    h.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
    h.sleep(DEFAULT_REBALANCE_TIMEOUT + 1)
    leader, follower = h.reply(leader_token), h.reply(follower_token)
    leader_sync = h.sync_group_leader(GROUP_ID, leader.generation_id, leader.member_id,
                                      {leader.member_id: b""}, protocol_type, protocol_name)
    assert leader_sync.error_code == expected_error
    assert leader_sync.protocol_type == expected_protocol_type
    assert leader_sync.protocol_name == expected_protocol_name
    follower_sync = h.sync_group_follower(GROUP_ID, leader.generation_id, follower.member_id,
                                          protocol_type, protocol_name)
    assert follower_sync.error_code == expected_error
    assert follower_sync.protocol_type == expected_protocol_type
    assert follower_sync.protocol_name == expected_protocol_name


def test_sync_group_returns_an_error_when_protocol_type_is_inconsistent(h: Harness) -> None:
    _sync_protocol_type_and_name_with(h, "whatever", None, ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
                                      None, None)


def test_sync_group_returns_an_error_when_protocol_name_is_inconsistent(h: Harness) -> None:
    _sync_protocol_type_and_name_with(h, None, "whatever", ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
                                      None, None)


def test_sync_group_succeed_when_protocol_type_and_name_are_not_provided(h: Harness) -> None:
    _sync_protocol_type_and_name_with(h, None, None, ErrorCode.NONE, PROTOCOL_TYPE, PROTOCOL_NAME)


def test_sync_group_succeed_when_protocol_type_and_name_are_consistent(h: Harness) -> None:
    _sync_protocol_type_and_name_with(h, PROTOCOL_TYPE, PROTOCOL_NAME, ErrorCode.NONE,
                                      PROTOCOL_TYPE, PROTOCOL_NAME)


def test_sync_group_empty_assignment(h: Harness) -> None:
    join = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    assert join.error_code == ErrorCode.NONE
    sync = h.sync_group_leader(GROUP_ID, join.generation_id, join.member_id, {})
    assert sync.error_code == ErrorCode.NONE
    assert sync.assignment == b""
    assert h.heartbeat(GROUP_ID, join.member_id, 1) == ErrorCode.NONE


def test_sync_group_from_unknown_group(h: Harness) -> None:
    assert h.sync_group_follower(GROUP_ID, 1, MEMBER_ID).error_code == ErrorCode.UNKNOWN_MEMBER_ID


def test_sync_group_from_unknown_member(h: Harness) -> None:
    join = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    assert join.error_code == ErrorCode.NONE
    sync = h.sync_group_leader(GROUP_ID, join.generation_id, join.member_id,
                               {join.member_id: b""})
    assert sync.error_code == ErrorCode.NONE
    unknown = h.sync_group_follower(GROUP_ID, join.generation_id, "blah")
    assert unknown.error_code == ErrorCode.UNKNOWN_MEMBER_ID


def test_sync_group_from_illegal_generation(h: Harness) -> None:
    join = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    assert join.error_code == ErrorCode.NONE
    sync = h.sync_group_leader(GROUP_ID, join.generation_id + 1, join.member_id,
                               {join.member_id: b""})
    assert sync.error_code == ErrorCode.ILLEGAL_GENERATION


def test_rebalance_times_out_when_sync_request_is_not_received(h: Harness) -> None:
    results = h.join_with_n_members(3)
    assert {r.error_code for r in results} == {ErrorCode.NONE}
    h.sleep(DEFAULT_REBALANCE_TIMEOUT // 2)
    # Heartbeats do not interfere with the pending-sync deadline.
    for r in results:
        assert h.heartbeat(GROUP_ID, r.member_id, r.generation_id) == ErrorCode.NONE
    h.sleep(DEFAULT_REBALANCE_TIMEOUT // 2 + 1)
    for r in results:
        assert h.heartbeat(GROUP_ID, r.member_id, r.generation_id) == ErrorCode.UNKNOWN_MEMBER_ID


def test_rebalance_times_out_when_sync_request_is_not_received_from_followers(
    h: Harness,
) -> None:
    results = h.join_with_n_members(3)
    assert {r.error_code for r in results} == {ErrorCode.NONE}
    h.sleep(DEFAULT_REBALANCE_TIMEOUT // 2)
    for r in results:
        assert h.heartbeat(GROUP_ID, r.member_id, r.generation_id) == ErrorCode.NONE
    leader = results[0]
    assert leader.leader == leader.member_id
    assignments = {r.member_id: b"" for r in results}
    sync = h.sync_group_leader(GROUP_ID, leader.generation_id, leader.member_id, assignments,
                               PROTOCOL_TYPE, PROTOCOL_NAME)
    assert sync.error_code == ErrorCode.NONE
    assert h.heartbeat(GROUP_ID, leader.member_id, leader.generation_id) == ErrorCode.NONE
    h.sleep(DEFAULT_REBALANCE_TIMEOUT // 2 + 1)
    assert h.heartbeat(GROUP_ID, leader.member_id,
                       leader.generation_id) == ErrorCode.REBALANCE_IN_PROGRESS
    for r in results[1:]:
        assert h.heartbeat(GROUP_ID, r.member_id, r.generation_id) == ErrorCode.UNKNOWN_MEMBER_ID


def test_rebalance_times_out_when_sync_request_is_not_received_from_leaders(h: Harness) -> None:
    results = h.join_with_n_members(3)
    assert {r.error_code for r in results} == {ErrorCode.NONE}
    h.sleep(DEFAULT_REBALANCE_TIMEOUT // 2)
    for r in results:
        assert h.heartbeat(GROUP_ID, r.member_id, r.generation_id) == ErrorCode.NONE
    followers = [h.send_sync_group(GROUP_ID, r.generation_id, r.member_id, None, PROTOCOL_TYPE,
                                   PROTOCOL_NAME) for r in results[1:]]
    h.sleep(DEFAULT_REBALANCE_TIMEOUT // 2 + 1)
    assert {h.reply(t).error_code for t in followers} == {ErrorCode.REBALANCE_IN_PROGRESS}
    leader = results[0]
    assert h.heartbeat(GROUP_ID, leader.member_id,
                       leader.generation_id) == ErrorCode.UNKNOWN_MEMBER_ID
    for r in results[1:]:
        assert h.heartbeat(GROUP_ID, r.member_id,
                           r.generation_id) == ErrorCode.REBALANCE_IN_PROGRESS


def test_rebalance_does_not_time_out_when_all_sync_are_received(h: Harness) -> None:
    results = h.join_with_n_members(3)
    assert {r.error_code for r in results} == {ErrorCode.NONE}
    h.sleep(DEFAULT_REBALANCE_TIMEOUT // 2)
    for r in results:
        assert h.heartbeat(GROUP_ID, r.member_id, r.generation_id) == ErrorCode.NONE
    leader = results[0]
    assignments = {r.member_id: b"" for r in results}
    sync = h.sync_group_leader(GROUP_ID, leader.generation_id, leader.member_id, assignments,
                               PROTOCOL_TYPE, PROTOCOL_NAME)
    assert sync.error_code == ErrorCode.NONE
    followers = [h.send_sync_group(GROUP_ID, r.generation_id, r.member_id, None, PROTOCOL_TYPE,
                                   PROTOCOL_NAME) for r in results[1:]]
    assert {h.reply(t).error_code for t in followers} == {ErrorCode.NONE}
    assert h.deadline(SyncTimerKey(GROUP_ID)) is None
    h.sleep(DEFAULT_REBALANCE_TIMEOUT // 2 + 1)
    for r in results:
        assert h.heartbeat(GROUP_ID, r.member_id, r.generation_id) == ErrorCode.NONE
    h.sleep(DEFAULT_REBALANCE_TIMEOUT // 2)
    for r in results:
        assert h.heartbeat(GROUP_ID, r.member_id, r.generation_id) == ErrorCode.NONE


def test_leader_failure_in_sync_group(h: Harness) -> None:
    _, follower_id, generation = _two_member_group(h)
    # Without the leader's SyncGroup the follower is eventually told to rejoin.
    follower_sync = h.send_sync_group(GROUP_ID, generation, follower_id)
    h.sleep(DEFAULT_SESSION_TIMEOUT + 100)
    assert h.reply(follower_sync).error_code == ErrorCode.REBALANCE_IN_PROGRESS


def test_sync_group_follower_after_leader(h: Harness) -> None:
    leader_id, follower_id, generation = _two_member_group(h)
    leader_sync = h.sync_group_leader(GROUP_ID, generation, leader_id,
                                      {leader_id: b"\x00", follower_id: b"\x01"})
    assert leader_sync.error_code == ErrorCode.NONE
    assert leader_sync.assignment == b"\x00"
    follower_sync = h.sync_group_follower(GROUP_ID, generation, follower_id)
    assert follower_sync.error_code == ErrorCode.NONE
    assert follower_sync.assignment == b"\x01"


def test_sync_group_leader_after_follower(h: Harness) -> None:
    leader_id, follower_id, generation = _two_member_group(h)
    follower_token = h.send_sync_group(GROUP_ID, generation, follower_id)
    assert not h.answered(follower_token)
    leader_sync = h.sync_group_leader(GROUP_ID, generation, leader_id,
                                      {leader_id: b"\x00", follower_id: b"\x01"})
    assert leader_sync.error_code == ErrorCode.NONE
    assert leader_sync.assignment == b"\x00"
    follower_sync = h.reply(follower_token)
    assert follower_sync.error_code == ErrorCode.NONE
    assert follower_sync.assignment == b"\x01"


def test_sync_group_as_leader_append_failure_transforms_error(h: Harness) -> None:
    join = h.static_join_group("group-id", UNKNOWN_MEMBER_ID, "leader-instance-id",
                               PROTOCOL_TYPE, PROTOCOLS)
    assert join.error_code == ErrorCode.NONE
    with h.hold_appends():
        token = h.send_sync_group("group-id", 1, join.member_id, {})
    assert not h.answered(token)
    h.release(ErrorCode.NOT_LEADER_OR_FOLLOWER)  # a failed write to the log
    assert h.reply(token).error_code == ErrorCode.NOT_COORDINATOR


# --------------------------------------------------------------------------- beyond Kafka's names


def test_sync_group_persists_assignment_filling_missing_members(h: Harness) -> None:
    leader_id, follower_id, generation = _two_member_group(h)
    before = len(h.records)
    sync = h.sync_group_leader(GROUP_ID, generation, leader_id,
                               {leader_id: b"L", "not-a-member": b"X"})
    assert sync.error_code == ErrorCode.NONE
    stored = [r for r in h.records[before:] if isinstance(r.key, GroupMetadataKey)]
    assert len(stored) == 1
    value = stored[0].value
    assert isinstance(value, GroupMetadataValue)
    assert {m.member_id: m.assignment for m in value.members} == {leader_id: b"L",
                                                                   follower_id: b""}
    assert value.generation == generation
    assert value.leader == leader_id
    assert h.sync_group_follower(GROUP_ID, generation, follower_id).assignment == b""


def test_sync_group_in_preparing_rebalance_is_rebalance_in_progress(h: Harness) -> None:
    leader_id, follower_id, generation = _two_member_group(h)
    h.sync_group_leader(GROUP_ID, generation, leader_id, {})
    h.send_join_group(GROUP_ID, leader_id, PROTOCOL_TYPE, PROTOCOLS)
    assert h.state() == "PreparingRebalance"
    result = h.sync_group_follower(GROUP_ID, generation, follower_id)
    assert result.error_code == ErrorCode.REBALANCE_IN_PROGRESS


def test_sync_group_in_empty_group_is_unknown_member(h: Harness) -> None:
    join = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    group = h.group()
    from coordinator.core.classic.state import EMPTY, PREPARING_REBALANCE

    group.transition_to(PREPARING_REBALANCE, h.now)
    group.transition_to(EMPTY, h.now)
    result = h.sync_group_follower(GROUP_ID, join.generation_id, join.member_id)
    assert result.error_code == ErrorCode.UNKNOWN_MEMBER_ID


def test_sync_group_leader_waits_for_its_record(h: Harness) -> None:
    """The group stays CompletingRebalance, and every SyncGroup parked, until the leader's
    assignment is in the log; then they all get their assignment and the group is Stable."""
    leader_id, follower_id, generation = _two_member_group(h)
    follower_token = h.send_sync_group(GROUP_ID, generation, follower_id)
    with h.hold_appends():
        leader_token = h.send_sync_group(GROUP_ID, generation, leader_id,
                                         {leader_id: b"L", follower_id: b"F"})
    assert h.state() == "CompletingRebalance"
    assert not h.answered(leader_token) and not h.answered(follower_token)
    assert GROUP_ID not in h.coordinator.hard_state().groups or (
        h.coordinator.hard_state().groups[GROUP_ID].generation < generation)
    h.release()
    assert h.state() == "Stable"
    assert h.reply(leader_token).assignment == b"L"
    assert h.reply(follower_token).assignment == b"F"
    assert h.coordinator.hard_state().groups[GROUP_ID].generation == generation


def test_sync_group_leader_append_failure_rebalances(h: Harness) -> None:
    """A failed append answers every parked SyncGroup with the mapped error and rebalances;
    nothing of the assignment is kept."""
    leader_id, follower_id, generation = _two_member_group(h)
    follower_token = h.send_sync_group(GROUP_ID, generation, follower_id)
    persisted = h.coordinator.hard_state()
    h.fail_appends(ErrorCode.KAFKA_STORAGE_ERROR)
    leader_token = h.send_sync_group(GROUP_ID, generation, leader_id,
                                     {leader_id: b"L", follower_id: b"F"})
    assert h.reply(leader_token).error_code == ErrorCode.NOT_COORDINATOR
    assert h.reply(follower_token).error_code == ErrorCode.NOT_COORDINATOR
    assert h.state() == "PreparingRebalance"
    assert all(m.assignment == b"" for m in h.group().members.values())
    assert h.coordinator.hard_state() == persisted


def test_sync_group_leader_record_landing_after_a_rebalance_changes_nothing(h: Harness) -> None:
    """Kafka's callback checks the group is still CompletingRebalance in the same generation:
    a member rejoining while the record is in flight wins (the record still lands)."""
    leader_id, follower_id, generation = _two_member_group(h)
    with h.hold_appends():
        leader_token = h.send_sync_group(GROUP_ID, generation, leader_id,
                                         {leader_id: b"L", follower_id: b"F"})
    h.send_join_group(GROUP_ID, follower_id, PROTOCOL_TYPE, PROTOCOL_SUPERSET)  # new metadata
    assert h.state() == "PreparingRebalance"
    h.release()
    assert h.reply(leader_token).error_code == ErrorCode.REBALANCE_IN_PROGRESS
    assert h.state() == "PreparingRebalance"
    assert h.coordinator.hard_state().groups[GROUP_ID].generation == generation
    assert all(m.assignment == b"" for m in h.group().members.values())

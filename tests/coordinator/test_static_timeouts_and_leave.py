"""Static membership (KIP-345 / KIP-814), continued from test_static.py: mirrors of
GroupCoordinatorTest.scala's static-member rebalance timeouts, LeaveGroup (single and batch)
and DescribeGroups tests."""

from __future__ import annotations

from harness import (
    DEFAULT_REBALANCE_TIMEOUT,
    DEFAULT_SESSION_TIMEOUT,
    FOLLOWER_INSTANCE_ID,
    GROUP_ID,
    LEADER_INSTANCE_ID,
    PROTOCOL_SUPERSET,
    PROTOCOL_TYPE,
    PROTOCOLS,
    UNKNOWN_MEMBER_ID,
    Harness,
    identity,
)
from scenarios import check_join_group_result, verify_leave_group_result

from coordinator.core import ErrorCode

CONSUMER = PROTOCOL_TYPE


def _group_stuck_in_rebalance_timeout_due_to_nonjoined_static_member(h: Harness) -> str:
    long_session = DEFAULT_SESSION_TIMEOUT * 2
    rr = h.static_members_join_and_rebalance(session_timeout=long_session)
    token = h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOL_SUPERSET,
                              session_timeout=long_session)
    h.sleep(DEFAULT_REBALANCE_TIMEOUT + 1)
    dynamic = h.reply(token)
    # The new dynamic member is elected leader.
    assert dynamic.leader == dynamic.member_id
    assert dynamic.error_code == ErrorCode.NONE
    assert len(dynamic.members) == 3
    assert dynamic.generation_id == 2
    assert h.state() == "CompletingRebalance"
    group = h.group()
    assert set(group.members) == {rr.leader_id, rr.follower_id, dynamic.member_id}
    assert set(group.static_members) == {LEADER_INSTANCE_ID, FOLLOWER_INSTANCE_ID}

    verify_leave_group_result(h.single_leave_group(GROUP_ID, rr.follower_id))
    assert h.state() == "PreparingRebalance"
    h.sleep(DEFAULT_REBALANCE_TIMEOUT + 1)
    # Only the static leader remains and the group is stuck in PreparingRebalance.
    assert set(group.members) == {rr.leader_id}
    assert group.generation_id == 2
    assert h.state() == "PreparingRebalance"
    return rr.leader_id


def test_leader_fail_to_rejoin_before_final_rebalance_timeout_with_long_session_timeout(
    h: Harness,
) -> None:
    _group_stuck_in_rebalance_timeout_due_to_nonjoined_static_member(h)
    h.sleep(DEFAULT_REBALANCE_TIMEOUT + 1)
    # The static leader's session expired: the group moves on to Empty.
    group = h.group()
    assert not group.members
    assert group.leader_id is None
    assert group.generation_id == 3
    assert h.state() == "Empty"


def test_leader_rejoin_before_final_rebalance_timeout_with_long_session_timeout(
    h: Harness,
) -> None:
    _group_stuck_in_rebalance_timeout_due_to_nonjoined_static_member(h)
    result = h.static_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, LEADER_INSTANCE_ID, PROTOCOL_TYPE,
                                 PROTOCOLS)
    check_join_group_result(h, result, ErrorCode.NONE, 3, {LEADER_INSTANCE_ID},
                            "CompletingRebalance", CONSUMER)
    group = h.group()
    assert set(group.members) == {result.member_id}
    assert group.leader_id is not None
    assert group.generation_id == 3


def test_group_stuck_in_rebalance_timeout_due_to_nonjoined_static_member(h: Harness) -> None:
    """Java-only name for the shared scenario: a non-rejoined static member keeps the group in
    PreparingRebalance (the join phase is re-armed) until its session expires."""
    leader_id = _group_stuck_in_rebalance_timeout_due_to_nonjoined_static_member(h)
    assert h.deadline(h.group().members[leader_id].heartbeat_key) is not None
    from coordinator.core import JoinTimerKey

    assert h.deadline(JoinTimerKey(GROUP_ID)) is not None


def test_static_member_follower_fail_to_rejoin_before_rebalance_timeout(h: Harness) -> None:
    rr = h.static_members_join_and_rebalance(session_timeout=DEFAULT_REBALANCE_TIMEOUT * 2)
    new_token = h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOL_SUPERSET,
                                  "newMember")
    assert h.state() == "PreparingRebalance"
    leader = h.static_join_group(GROUP_ID, rr.leader_id, LEADER_INSTANCE_ID, PROTOCOL_TYPE,
                                 PROTOCOL_SUPERSET, clock_advance=DEFAULT_REBALANCE_TIMEOUT + 1)
    check_join_group_result(h, leader, ErrorCode.NONE, rr.generation + 1,
                            {LEADER_INSTANCE_ID, FOLLOWER_INSTANCE_ID, "newMember"},
                            "CompletingRebalance", CONSUMER, rr.leader_id, rr.leader_id)
    new_member = h.reply(new_token)
    check_join_group_result(h, new_member, ErrorCode.NONE, rr.generation + 1, set(),
                            "CompletingRebalance", CONSUMER, expected_leader_id=rr.leader_id)


def test_static_member_leader_fail_to_rejoin_before_rebalance_timeout(h: Harness) -> None:
    rr = h.static_members_join_and_rebalance(session_timeout=DEFAULT_REBALANCE_TIMEOUT * 2)
    new_token = h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOL_SUPERSET,
                                  "newMember")
    h.sleep(1)
    assert h.state() == "PreparingRebalance"
    follower = h.static_join_group(GROUP_ID, rr.follower_id, FOLLOWER_INSTANCE_ID, PROTOCOL_TYPE,
                                   PROTOCOL_SUPERSET, clock_advance=DEFAULT_REBALANCE_TIMEOUT + 1)
    new_member = h.reply(new_token)
    if follower.leader == follower.member_id:
        new_leader, new_follower = follower, new_member
    else:
        new_leader, new_follower = new_member, follower
    check_join_group_result(h, new_leader, ErrorCode.NONE, rr.generation + 1,
                            {LEADER_INSTANCE_ID, FOLLOWER_INSTANCE_ID, "newMember"},
                            "CompletingRebalance", CONSUMER)
    check_join_group_result(h, new_follower, ErrorCode.NONE, rr.generation + 1, set(),
                            "CompletingRebalance", CONSUMER,
                            expected_leader_id=new_leader.member_id)


def test_leave_group_with_fenced_instance_id(h: Harness) -> None:
    result = h.static_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, LEADER_INSTANCE_ID, PROTOCOL_TYPE,
                                 PROTOCOL_SUPERSET)
    assert result.error_code == ErrorCode.NONE
    verify_leave_group_result(h.single_leave_group(GROUP_ID, "some_member", LEADER_INSTANCE_ID),
                              ErrorCode.NONE, [ErrorCode.FENCED_INSTANCE_ID])
    assert result.member_id in h.group().members


def test_leave_group_static_member_with_unknown_member_id(h: Harness) -> None:
    result = h.static_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, LEADER_INSTANCE_ID, PROTOCOL_TYPE,
                                 PROTOCOL_SUPERSET)
    assert result.error_code == ErrorCode.NONE
    # An empty member id with an instance id removes the static member (KIP-345 admin path).
    verify_leave_group_result(h.single_leave_group(GROUP_ID, UNKNOWN_MEMBER_ID,
                                                   LEADER_INSTANCE_ID),
                              ErrorCode.NONE, [ErrorCode.NONE])
    assert result.member_id not in h.group().members


def test_static_members_valid_batch_leave_group(h: Harness) -> None:
    h.static_members_join_and_rebalance()
    result = h.batch_leave_group(GROUP_ID, [identity("", LEADER_INSTANCE_ID),
                                            identity("", FOLLOWER_INSTANCE_ID)])
    verify_leave_group_result(result, ErrorCode.NONE, [ErrorCode.NONE, ErrorCode.NONE])
    assert h.state() == "Empty"


def test_static_members_unknown_group_batch_leave_group(h: Harness) -> None:
    result = h.batch_leave_group(GROUP_ID, [identity("", LEADER_INSTANCE_ID),
                                            identity("", FOLLOWER_INSTANCE_ID)])
    verify_leave_group_result(result, ErrorCode.NONE,
                              [ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.UNKNOWN_MEMBER_ID])


def test_static_members_fenced_instance_batch_leave_group(h: Harness) -> None:
    h.static_members_join_and_rebalance()
    result = h.batch_leave_group(GROUP_ID, [identity("", LEADER_INSTANCE_ID),
                                            identity("invalid-member",
                                                           FOLLOWER_INSTANCE_ID)])
    verify_leave_group_result(result, ErrorCode.NONE,
                              [ErrorCode.NONE, ErrorCode.FENCED_INSTANCE_ID])


def test_static_members_unknown_instance_batch_leave_group(h: Harness) -> None:
    h.static_members_join_and_rebalance()
    result = h.batch_leave_group(GROUP_ID, [identity("", "unknown-instance"),
                                            identity("", FOLLOWER_INSTANCE_ID)])
    verify_leave_group_result(result, ErrorCode.NONE, [ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.NONE])


def test_describe_group_stable_for_static_member(h: Harness) -> None:
    join = h.static_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, LEADER_INSTANCE_ID, PROTOCOL_TYPE,
                               PROTOCOLS)
    assert join.error_code == ErrorCode.NONE
    sync = h.sync_group_leader(GROUP_ID, join.generation_id, join.member_id,
                               {join.member_id: b""})
    assert sync.error_code == ErrorCode.NONE
    described = h.describe_group(GROUP_ID)
    assert described.error_code == ErrorCode.NONE
    assert described.protocol_type == PROTOCOL_TYPE
    assert described.protocol_data == "range"
    assert [m.member_id for m in described.members] == [join.member_id]
    assert [m.group_instance_id for m in described.members] == [LEADER_INSTANCE_ID]

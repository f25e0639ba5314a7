"""LeaveGroup: mirrors of GroupCoordinatorTest.scala's leave tests and Java-only leave tests."""

from __future__ import annotations

from harness import (
    GROUP_ID,
    MEMBER_ID,
    PROTOCOL_TYPE,
    PROTOCOLS,
    UNKNOWN_MEMBER_ID,
    Harness,
    identity,
)
from scenarios import setup_group_with_pending_member, verify_leave_group_result

from coordinator.core import ErrorCode, HeartbeatTimerKey
from coordinator.core.classic.group import ClassicGroup
from coordinator.core.classic.state import DEAD


def test_leave_group_unknown_group(h: Harness) -> None:
    verify_leave_group_result(h.single_leave_group(GROUP_ID, MEMBER_ID), ErrorCode.NONE,
                              [ErrorCode.UNKNOWN_MEMBER_ID])


def test_leave_group_unknown_consumer_existing_group(h: Harness) -> None:
    join = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    assert join.error_code == ErrorCode.NONE
    verify_leave_group_result(h.single_leave_group(GROUP_ID, "consumerId"), ErrorCode.NONE,
                              [ErrorCode.UNKNOWN_MEMBER_ID])
    assert join.member_id in h.group().members


def test_single_leave_dead_group(h: Harness) -> None:
    h.add_group(ClassicGroup("deadGroupId", DEAD, 0))
    result = h.single_leave_group("deadGroupId", MEMBER_ID)
    verify_leave_group_result(result, ErrorCode.COORDINATOR_NOT_AVAILABLE)
    assert result.members == ()


def test_batch_leave_dead_group(h: Harness) -> None:
    h.add_group(ClassicGroup("deadGroupId", DEAD, 0))
    result = h.batch_leave_group("deadGroupId", [identity(MEMBER_ID),
                                                 identity(MEMBER_ID)])
    verify_leave_group_result(result, ErrorCode.COORDINATOR_NOT_AVAILABLE)
    assert result.members == ()


def test_valid_leave_group(h: Harness) -> None:
    join = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    assert join.error_code == ErrorCode.NONE
    verify_leave_group_result(h.single_leave_group(GROUP_ID, join.member_id), ErrorCode.NONE,
                              [ErrorCode.NONE])
    assert not h.group().members
    assert h.state() == "Empty"
    assert h.deadline(HeartbeatTimerKey(GROUP_ID, join.member_id)) is None


def test_pending_members_leaves_group(h: Harness) -> None:
    pending = setup_group_with_pending_member(h)
    verify_leave_group_result(h.single_leave_group(GROUP_ID, pending.member_id))
    assert h.state() == "CompletingRebalance"
    group = h.group()
    assert group.size == 2
    assert not group.static_members
    assert not group.pending_members


def test_pending_member_batch_leave_group(h: Harness) -> None:
    pending = setup_group_with_pending_member(h)
    result = h.batch_leave_group(GROUP_ID, [identity("", "unknown-instance"),
                                            identity(pending.member_id)])
    verify_leave_group_result(result, ErrorCode.NONE, [ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.NONE])


# --------------------------------------------------------------------------- Java-only tests


def test_joined_member_pending_member_batch_leave_group(h: Harness) -> None:
    pending = setup_group_with_pending_member(h)
    joined = next(iter(h.group().members))
    result = h.batch_leave_group(GROUP_ID, [identity(joined),
                                            identity(pending.member_id)])
    verify_leave_group_result(result, ErrorCode.NONE, [ErrorCode.NONE, ErrorCode.NONE])
    group = h.group()
    assert joined not in group.members
    assert not group.pending_members
    # The remaining member had rejoined: the join phase completes without the leavers.
    assert h.state() == "CompletingRebalance"
    assert group.size == 1


def test_joined_member_pending_member_batch_leave_group_with_unknown_member(h: Harness) -> None:
    pending = setup_group_with_pending_member(h)
    joined = next(iter(h.group().members))
    result = h.batch_leave_group(GROUP_ID, [identity(joined),
                                            identity(pending.member_id),
                                            identity("unknown-member")])
    verify_leave_group_result(result, ErrorCode.NONE,
                              [ErrorCode.NONE, ErrorCode.NONE, ErrorCode.UNKNOWN_MEMBER_ID])


def test_leave_group_invalid_group(h: Harness) -> None:
    result = h.single_leave_group("", MEMBER_ID)
    verify_leave_group_result(result, ErrorCode.INVALID_GROUP_ID)


# --------------------------------------------------------------------------- versions


def test_leave_group_v0_copies_member_error_to_top_level(h: Harness) -> None:
    join = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    assert h.legacy_leave_group(GROUP_ID, "nobody").error_code == ErrorCode.UNKNOWN_MEMBER_ID
    assert h.legacy_leave_group(GROUP_ID, join.member_id, 2).error_code == ErrorCode.NONE
    assert h.state() == "Empty"


def test_leave_group_answers_parked_join_with_unknown_member(h: Harness) -> None:
    first = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    h.sync_group_leader(GROUP_ID, 1, first.member_id, {})
    h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    second = h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    new_id = next(m for m in h.group().members.values() if m.join_token == second).member_id
    verify_leave_group_result(h.single_leave_group(GROUP_ID, new_id), ErrorCode.NONE,
                              [ErrorCode.NONE])
    parked = h.reply(second)
    assert parked.error_code == ErrorCode.UNKNOWN_MEMBER_ID
    assert parked.member_id == ""

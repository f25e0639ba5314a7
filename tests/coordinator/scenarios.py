"""Shared Kafka-test scenarios and assertions (Kafka's GroupCoordinatorTest helpers)."""

from __future__ import annotations

import struct
from collections.abc import Sequence

from harness import GROUP_ID, PROTOCOL_TYPE, PROTOCOLS, UNKNOWN_MEMBER_ID, Harness

from coordinator.core import ErrorCode, JoinGroupResponse, LeaveGroupResponse

__all__ = [
    "check_join_group_result",
    "setup_group_with_pending_member",
    "subscription",
    "verify_leave_group_result",
]


def subscription(*topics: str, version: int = 3) -> bytes:
    """A serialized ConsumerProtocolSubscription (what Java's serializeSubscription writes)."""
    out = struct.pack(">hi", version, len(topics))
    for topic in topics:
        raw = topic.encode()
        out += struct.pack(">h", len(raw)) + raw
    out += struct.pack(">i", -1)  # user_data: null
    if version >= 1:
        out += struct.pack(">i", 0)  # owned_partitions: []
    if version >= 2:
        out += struct.pack(">i", -1)  # generation_id
    if version >= 3:
        out += struct.pack(">h", -1)  # rack_id: null
    return out


def check_join_group_result(
    h: Harness,
    result: JoinGroupResponse,
    expected_error: int,
    expected_generation: int,
    expected_instance_ids: set[str],
    expected_state: str,
    expected_protocol_type: str | None,
    expected_leader_id: str = "",
    expected_member_id: str = "",
    expected_skip_assignment: bool = False,
) -> None:
    """Kafka's checkJoinGroupResult."""
    assert result.error_code == expected_error
    assert result.generation_id == expected_generation
    assert len(result.members) == len(expected_instance_ids)
    assert {m.group_instance_id for m in result.members} == expected_instance_ids
    assert h.state() == expected_state
    assert result.protocol_type == expected_protocol_type
    assert result.skip_assignment == expected_skip_assignment
    if expected_leader_id:
        assert result.leader == expected_leader_id
    if expected_member_id:
        assert result.member_id == expected_member_id


def verify_leave_group_result(
    result: LeaveGroupResponse,
    expected_top_level_error: int = ErrorCode.NONE,
    expected_member_errors: Sequence[int] = (),
) -> None:
    """Kafka's verifyLeaveGroupResult."""
    assert result.error_code == expected_top_level_error
    if expected_member_errors:
        assert [m.error_code for m in result.members] == list(expected_member_errors)


def setup_group_with_pending_member(h: Harness) -> JoinGroupResponse:
    """Kafka's setupGroupWithPendingMember: two members in PreparingRebalance + a pending one."""
    join1 = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    assert h.state() == "CompletingRebalance"
    sync = h.sync_group_leader(GROUP_ID, join1.generation_id, join1.member_id,
                               {join1.member_id: b""})
    assert sync.error_code == ErrorCode.NONE
    assert h.state() == "Stable"

    second_token = h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    first_token = h.send_join_group(GROUP_ID, join1.member_id, PROTOCOL_TYPE, PROTOCOLS)
    first, second = h.reply(first_token), h.reply(second_token)
    assert h.state() == "CompletingRebalance"

    sync = h.sync_group_leader(GROUP_ID, first.generation_id, join1.member_id,
                               {join1.member_id: b""})
    assert sync.error_code == ErrorCode.NONE
    assert h.state() == "Stable"

    h.send_join_group(GROUP_ID, first.member_id, PROTOCOL_TYPE, PROTOCOLS)
    assert h.state() == "PreparingRebalance"

    pending = h.join_group_partial(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS,
                                   session_timeout=100)
    assert len(h.group().pending_members) == 1

    h.send_join_group(GROUP_ID, second.member_id, PROTOCOL_TYPE, PROTOCOLS)
    assert h.state() == "PreparingRebalance"
    assert len(h.group().pending_members) == 1
    return pending

"""Static membership (KIP-345 / KIP-814): mirrors of GroupCoordinatorTest.scala's static tests
and the Java-only replace-static-member tests -- joining, rejoining, fencing, SyncGroup,
Heartbeat and OffsetCommit. Rebalance timeouts with static members, LeaveGroup and
DescribeGroups are in test_static_timeouts_and_leave.py."""

from __future__ import annotations

import pytest
from harness import (
    DEFAULT_REBALANCE_TIMEOUT,
    DEFAULT_SESSION_TIMEOUT,
    FOLLOWER_INSTANCE_ID,
    GROUP_ID,
    GROUP_INITIAL_REBALANCE_DELAY,
    GROUP_INSTANCE_ID,
    INVALID_MEMBER_ID,
    LEADER_INSTANCE_ID,
    METADATA,
    PROTOCOL_NAME,
    PROTOCOL_SUPERSET,
    PROTOCOL_TYPE,
    PROTOCOLS,
    UNKNOWN_MEMBER_ID,
    Harness,
)
from scenarios import check_join_group_result

from coordinator.core import CoordinatorStateError, ErrorCode
from coordinator.core.classic.state import DEAD, EMPTY, PREPARING_REBALANCE
from storage.records import GroupMetadataKey, GroupMetadataValue

CONSUMER = PROTOCOL_TYPE


def _group_records(h: Harness, start: int) -> list[GroupMetadataValue]:
    out = []
    for record in h.records[start:]:
        if isinstance(record.key, GroupMetadataKey) and isinstance(record.value,
                                                                     GroupMetadataValue):
            out.append(record.value)
    return out


def test_static_member_join_as_first_member(h: Harness) -> None:
    result = h.static_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, GROUP_INSTANCE_ID, PROTOCOL_TYPE,
                                 PROTOCOLS)
    assert result.error_code == ErrorCode.NONE
    assert result.member_id.startswith(GROUP_INSTANCE_ID + "-")


def test_static_member_re_join_with_explicit_unknown_member_id(h: Harness) -> None:
    result = h.static_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, GROUP_INSTANCE_ID, PROTOCOL_TYPE,
                                 PROTOCOLS)
    assert result.error_code == ErrorCode.NONE
    result = h.static_join_group(GROUP_ID, "unknown_member", GROUP_INSTANCE_ID, PROTOCOL_TYPE,
                                 PROTOCOLS)
    assert result.error_code == ErrorCode.FENCED_INSTANCE_ID


def test_static_member_fence_duplicate_rejoined_follower(h: Harness) -> None:
    rr = h.static_members_join_and_rebalance()
    h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    h.sleep(1)
    assert h.group().state is PREPARING_REBALANCE
    h.sleep(1)
    old_follower = h.send_join_group(GROUP_ID, rr.follower_id, PROTOCOL_TYPE, PROTOCOLS,
                                     FOLLOWER_INSTANCE_ID)
    h.sleep(1)
    duplicate = h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS,
                                  FOLLOWER_INSTANCE_ID)
    h.sleep(1)
    # The old member id is fenced as soon as the duplicate joins.
    check_join_group_result(h, h.reply(old_follower), ErrorCode.FENCED_INSTANCE_ID, -1, set(),
                            "PreparingRebalance", None)
    assert not h.answered(duplicate)


def test_static_member_fence_duplicate_syncing_follower_after_member_id_changed(
    h: Harness,
) -> None:
    rr = h.static_members_join_and_rebalance()
    leader_token = h.send_join_group(GROUP_ID, rr.leader_id, PROTOCOL_TYPE, PROTOCOLS,
                                     LEADER_INSTANCE_ID)
    h.sleep(1)
    assert h.group().state is PREPARING_REBALANCE
    h.sleep(1)
    old_follower_token = h.send_join_group(GROUP_ID, rr.follower_id, PROTOCOL_TYPE, PROTOCOLS,
                                           FOLLOWER_INSTANCE_ID)
    h.sleep(1)
    leader = h.reply(leader_token)
    check_join_group_result(h, leader, ErrorCode.NONE, rr.generation + 1,
                            {LEADER_INSTANCE_ID, FOLLOWER_INSTANCE_ID}, "CompletingRebalance",
                            CONSUMER)
    assert leader.member_id == rr.leader_id
    assert leader.leader == rr.leader_id

    old_follower = h.reply(old_follower_token)
    check_join_group_result(h, old_follower, ErrorCode.NONE, rr.generation + 1, set(),
                            "CompletingRebalance", CONSUMER, expected_leader_id=leader.member_id)
    assert old_follower.member_id == rr.follower_id
    assert old_follower.leader == rr.leader_id

    # The old follower parks its SyncGroup; a duplicate joining with an unknown id replaces it,
    # which fences the parked SyncGroup and, in CompletingRebalance, forces a rebalance.
    old_sync = h.send_sync_group(GROUP_ID, old_follower.generation_id, old_follower.member_id,
                                 None, PROTOCOL_TYPE, PROTOCOL_NAME, FOLLOWER_INSTANCE_ID)
    duplicate = h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS,
                                  FOLLOWER_INSTANCE_ID)
    h.sleep(1)
    assert h.reply(old_sync).error_code == ErrorCode.FENCED_INSTANCE_ID
    assert h.group().state is PREPARING_REBALANCE

    h.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
    h.sleep(DEFAULT_REBALANCE_TIMEOUT + 1)
    result = h.reply(duplicate)
    # The leader's session expired; the new follower id leads alone.
    check_join_group_result(h, result, ErrorCode.NONE, rr.generation + 2, {FOLLOWER_INSTANCE_ID},
                            "CompletingRebalance", CONSUMER, expected_leader_id=result.member_id)


def test_static_member_fence_duplicate_rejoining_follower_after_member_id_changed(
    h: Harness,
) -> None:
    rr = h.static_members_join_and_rebalance()
    leader_token = h.send_join_group(GROUP_ID, rr.leader_id, PROTOCOL_TYPE, PROTOCOLS,
                                     LEADER_INSTANCE_ID)
    h.sleep(1)
    assert h.group().state is PREPARING_REBALANCE
    duplicate_token = h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS,
                                        FOLLOWER_INSTANCE_ID)
    h.sleep(1)
    old_follower_token = h.send_join_group(GROUP_ID, rr.follower_id, PROTOCOL_TYPE, PROTOCOLS,
                                           FOLLOWER_INSTANCE_ID)
    check_join_group_result(h, h.reply(leader_token), ErrorCode.NONE, rr.generation + 1,
                            {LEADER_INSTANCE_ID, FOLLOWER_INSTANCE_ID}, "CompletingRebalance",
                            CONSUMER)
    duplicate = h.reply(duplicate_token)
    check_join_group_result(h, duplicate, ErrorCode.NONE, rr.generation + 1, set(),
                            "CompletingRebalance", CONSUMER)
    assert duplicate.member_id != rr.follower_id
    check_join_group_result(h, h.reply(old_follower_token), ErrorCode.FENCED_INSTANCE_ID, -1, set(),
                            "CompletingRebalance", None)


def test_static_member_rejoin_with_known_member_id(h: Harness) -> None:
    result = h.static_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, GROUP_INSTANCE_ID, PROTOCOL_TYPE,
                                 PROTOCOLS)
    assert result.error_code == ErrorCode.NONE
    member_id = result.member_id
    # Same metadata during CompletingRebalance: answered at once.
    token = h.send_join_group(GROUP_ID, member_id, PROTOCOL_TYPE, PROTOCOLS, GROUP_INSTANCE_ID)
    h.sleep(1)
    result = h.reply(token)
    assert result.error_code == ErrorCode.NONE
    assert h.state() == "CompletingRebalance"
    sync = h.send_sync_group(GROUP_ID, result.generation_id, member_id, {member_id: b""},
                             PROTOCOL_TYPE, PROTOCOL_NAME, GROUP_INSTANCE_ID)
    h.sleep(1)
    assert h.reply(sync).error_code == ErrorCode.NONE
    assert h.state() == "Stable"


@pytest.mark.parametrize("support_skipping_assignment", [True, False])
def test_static_member_rejoin_with_leader_id_and_unknown_member_id(
    h: Harness, support_skipping_assignment: bool
) -> None:
    rr = h.static_members_join_and_rebalance()
    records_before = len(h.records)
    # A static leader rejoining with an unknown id does not rebalance.
    result = h.static_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, LEADER_INSTANCE_ID, PROTOCOL_TYPE,
                                 PROTOCOL_SUPERSET, clock_advance=1,
                                 support_skipping_assignment=support_skipping_assignment)
    check_join_group_result(
        h, result, ErrorCode.NONE, rr.generation,
        {LEADER_INSTANCE_ID, FOLLOWER_INSTANCE_ID} if support_skipping_assignment else set(),
        "Stable", CONSUMER,
        result.member_id if support_skipping_assignment else rr.leader_id,
        expected_skip_assignment=support_skipping_assignment,
    )
    # The replacement is persisted.
    persisted = _group_records(h, records_before)
    assert len(persisted) == 1
    assert result.member_id in {m.member_id for m in persisted[0].members}

    old_leader = h.static_join_group(GROUP_ID, rr.leader_id, LEADER_INSTANCE_ID, PROTOCOL_TYPE,
                                     PROTOCOL_SUPERSET, clock_advance=1)
    assert old_leader.error_code == ErrorCode.FENCED_INSTANCE_ID
    old_sync = h.sync_group_leader(GROUP_ID, rr.generation, rr.leader_id, {}, None, None,
                                   LEADER_INSTANCE_ID)
    assert old_sync.error_code == ErrorCode.FENCED_INSTANCE_ID
    stale_sync = h.sync_group_leader(GROUP_ID, rr.generation, rr.leader_id, {})
    assert stale_sync.error_code == ErrorCode.UNKNOWN_MEMBER_ID


def test_static_member_rejoin_with_leader_id_and_known_member_id(h: Harness) -> None:
    rr = h.static_members_join_and_rebalance(session_timeout=DEFAULT_REBALANCE_TIMEOUT // 2)
    # A static leader rejoining with its known id rebalances; the follower times out meanwhile.
    result = h.static_join_group(GROUP_ID, rr.leader_id, LEADER_INSTANCE_ID, PROTOCOL_TYPE,
                                 PROTOCOL_SUPERSET, clock_advance=DEFAULT_REBALANCE_TIMEOUT + 1)
    assert FOLLOWER_INSTANCE_ID not in h.group().static_members
    check_join_group_result(h, result, ErrorCode.NONE, rr.generation + 1, {LEADER_INSTANCE_ID},
                            "CompletingRebalance", CONSUMER, rr.leader_id, rr.leader_id)


def test_static_member_rejoin_with_leader_id_and_unexpected_dead_group(h: Harness) -> None:
    rr = h.static_members_join_and_rebalance()
    h.group().transition_to(DEAD, h.now)
    result = h.static_join_group(GROUP_ID, rr.leader_id, LEADER_INSTANCE_ID, PROTOCOL_TYPE,
                                 PROTOCOLS, clock_advance=1)
    assert result.error_code == ErrorCode.COORDINATOR_NOT_AVAILABLE


def test_static_member_rejoin_with_leader_id_and_unexpected_empty_group(h: Harness) -> None:
    rr = h.static_members_join_and_rebalance()
    h.group().transition_to(PREPARING_REBALANCE, h.now)
    h.group().transition_to(EMPTY, h.now)
    result = h.static_join_group(GROUP_ID, rr.leader_id, LEADER_INSTANCE_ID, PROTOCOL_TYPE,
                                 PROTOCOLS, clock_advance=1)
    assert result.error_code == ErrorCode.UNKNOWN_MEMBER_ID


def test_static_member_rejoin_with_follower_id_and_change_of_protocol(h: Harness) -> None:
    rr = h.static_members_join_and_rebalance(session_timeout=DEFAULT_SESSION_TIMEOUT * 2)
    new_protocols = [("roundrobin", METADATA)]
    # The follower's protocol change rebalances; the old leader does not rejoin in time.
    result = h.static_join_group(GROUP_ID, rr.follower_id, FOLLOWER_INSTANCE_ID, PROTOCOL_TYPE,
                                 new_protocols, clock_advance=DEFAULT_SESSION_TIMEOUT + 1)
    assert result.member_id == rr.follower_id
    assert LEADER_INSTANCE_ID in h.group().static_members
    assert h.group().is_leader(rr.follower_id)
    check_join_group_result(h, result, ErrorCode.NONE, rr.generation + 1,
                            {LEADER_INSTANCE_ID, FOLLOWER_INSTANCE_ID}, "CompletingRebalance",
                            CONSUMER, rr.follower_id, rr.follower_id)


def test_static_member_rejoin_with_unknown_member_id_and_change_of_protocol_with_selected_protocol_changed(  # noqa: E501
    h: Harness,
) -> None:
    rr = h.static_members_join_and_rebalance()
    selected = h.group().select_protocol()
    new_protocols = [("roundrobin", METADATA)]
    assert selected not in {name for name, _ in new_protocols}
    result = h.static_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, FOLLOWER_INSTANCE_ID, PROTOCOL_TYPE,
                                 new_protocols, clock_advance=DEFAULT_SESSION_TIMEOUT + 1)
    check_join_group_result(h, result, ErrorCode.NONE, rr.generation + 1,
                            {LEADER_INSTANCE_ID, FOLLOWER_INSTANCE_ID}, "CompletingRebalance",
                            CONSUMER)
    assert h.group().is_leader(result.member_id)
    assert result.member_id != rr.follower_id
    assert result.protocol_name == "roundrobin"


def test_static_member_rejoin_with_updated_session_and_rebalance_timeouts_and_persist_change(
    h: Harness,
) -> None:
    rr = h.static_members_join_and_rebalance()
    follower = h.static_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, FOLLOWER_INSTANCE_ID,
                                   PROTOCOL_TYPE, PROTOCOL_SUPERSET, clock_advance=1,
                                   session_timeout=2 * DEFAULT_SESSION_TIMEOUT,
                                   rebalance_timeout=2 * DEFAULT_REBALANCE_TIMEOUT)
    check_join_group_result(h, follower, ErrorCode.NONE, rr.generation, set(), "Stable", CONSUMER)
    leader = h.static_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, LEADER_INSTANCE_ID, PROTOCOL_TYPE,
                                 PROTOCOL_SUPERSET, clock_advance=1,
                                 session_timeout=2 * DEFAULT_SESSION_TIMEOUT,
                                 rebalance_timeout=2 * DEFAULT_REBALANCE_TIMEOUT)
    check_join_group_result(h, leader, ErrorCode.NONE, rr.generation,
                            {LEADER_INSTANCE_ID, FOLLOWER_INSTANCE_ID}, "Stable", CONSUMER,
                            leader.leader, leader.member_id, expected_skip_assignment=True)
    for member in h.group().members.values():
        assert member.session_timeout_ms == 2 * DEFAULT_SESSION_TIMEOUT
        assert member.rebalance_timeout_ms == 2 * DEFAULT_REBALANCE_TIMEOUT
    # The persisted record carries the new timeouts too.
    persisted = h.coordinator.hard_state().groups[GROUP_ID]
    assert {m.session_timeout for m in persisted.members} == {2 * DEFAULT_SESSION_TIMEOUT}


def test_static_member_rejoin_with_unknown_member_id_and_change_of_protocol_while_select_protocol_unchanged(  # noqa: E501
    h: Harness,
) -> None:
    rr = h.static_members_join_and_rebalance()
    selected = h.group().select_protocol()
    new_protocols = [(selected, METADATA)]
    result = h.static_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, FOLLOWER_INSTANCE_ID, PROTOCOL_TYPE,
                                 new_protocols, clock_advance=1)
    check_join_group_result(h, result, ErrorCode.NONE, rr.generation, set(), "Stable", CONSUMER)
    # The old member id is fenced everywhere.
    assert result.member_id != rr.follower_id
    old = h.static_join_group(GROUP_ID, rr.follower_id, FOLLOWER_INSTANCE_ID, PROTOCOL_TYPE,
                              new_protocols, clock_advance=1)
    assert old.error_code == ErrorCode.FENCED_INSTANCE_ID
    old_sync = h.sync_group_follower(GROUP_ID, rr.generation, rr.follower_id, None, None,
                                     FOLLOWER_INSTANCE_ID)
    assert old_sync.error_code == ErrorCode.FENCED_INSTANCE_ID
    new_sync = h.sync_group_follower(GROUP_ID, rr.generation, result.member_id, None, None,
                                     FOLLOWER_INSTANCE_ID)
    assert new_sync.error_code == ErrorCode.NONE
    assert new_sync.assignment == rr.follower_assignment


def test_static_member_rejoin_with_unknown_member_id_and_change_of_protocol_while_select_protocol_unchanged_persistence_failure(  # noqa: E501
    h: Harness,
) -> None:
    rr = h.static_members_join_and_rebalance()
    selected = h.group().select_protocol()
    new_protocols = [(selected, METADATA)]
    h.fail_appends(ErrorCode.MESSAGE_TOO_LARGE)
    result = h.static_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, FOLLOWER_INSTANCE_ID, PROTOCOL_TYPE,
                                 new_protocols, clock_advance=1)
    check_join_group_result(h, result, ErrorCode.UNKNOWN_SERVER_ERROR, rr.generation, set(),
                            "Stable", CONSUMER)
    # Join with the old member id does not fail: the member id was not updated. (Kafka's
    # Scala test rejoins with the new protocols because its revert keeps them; kcoord, like
    # the Java coordinator, restores the old ones, so the unchanged rejoin uses those.)
    assert result.member_id != rr.follower_id
    old = h.static_join_group(GROUP_ID, rr.follower_id, FOLLOWER_INSTANCE_ID, PROTOCOL_TYPE,
                              PROTOCOL_SUPERSET, clock_advance=1)
    assert old.error_code == ErrorCode.NONE
    # Sync with the old member id does not fail either.
    old_sync = h.sync_group_follower(GROUP_ID, rr.generation, rr.follower_id, None, None,
                                     FOLLOWER_INSTANCE_ID)
    assert old_sync.error_code == ErrorCode.NONE


def test_static_member_rejoin_with_updated_session_and_rebalance_timeouts_but_cannot_persist_change(
    h: Harness,
) -> None:
    rr = h.static_members_join_and_rebalance()
    h.fail_appends(ErrorCode.MESSAGE_TOO_LARGE)
    result = h.static_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, FOLLOWER_INSTANCE_ID, PROTOCOL_TYPE,
                                 PROTOCOL_SUPERSET, clock_advance=1,
                                 session_timeout=2 * DEFAULT_SESSION_TIMEOUT,
                                 rebalance_timeout=2 * DEFAULT_REBALANCE_TIMEOUT)
    check_join_group_result(h, result, ErrorCode.UNKNOWN_SERVER_ERROR, rr.generation, set(),
                            "Stable", CONSUMER)
    assert h.maybe_group() is not None
    for member in h.group().members.values():
        assert member.session_timeout_ms == DEFAULT_SESSION_TIMEOUT
        assert member.rebalance_timeout_ms == DEFAULT_REBALANCE_TIMEOUT


def test_static_member_rejoin_with_known_leader_id_to_trigger_rebalance_and_follower_with_change_of_protocol(  # noqa: E501
    h: Harness,
) -> None:
    rr = h.static_members_join_and_rebalance()
    leader_token = h.send_join_group(GROUP_ID, rr.leader_id, PROTOCOL_TYPE, PROTOCOL_SUPERSET,
                                     LEADER_INSTANCE_ID)
    follower_token = h.send_join_group(GROUP_ID, rr.follower_id, PROTOCOL_TYPE,
                                       PROTOCOL_SUPERSET, FOLLOWER_INSTANCE_ID)
    h.sleep(1)
    check_join_group_result(h, h.reply(leader_token), ErrorCode.NONE, rr.generation + 1,
                            {LEADER_INSTANCE_ID, FOLLOWER_INSTANCE_ID}, "CompletingRebalance",
                            CONSUMER, rr.leader_id, rr.leader_id)
    check_join_group_result(h, h.reply(follower_token), ErrorCode.NONE, rr.generation + 1, set(),
                            "CompletingRebalance", CONSUMER, rr.leader_id, rr.follower_id)
    # The follower narrows its protocols: CompletingRebalance -> PreparingRebalance.
    changed = h.send_join_group(GROUP_ID, rr.follower_id, PROTOCOL_TYPE, PROTOCOLS,
                                FOLLOWER_INSTANCE_ID)
    assert h.group().state is PREPARING_REBALANCE
    h.sleep(DEFAULT_REBALANCE_TIMEOUT + 1)
    check_join_group_result(h, h.reply(changed), ErrorCode.NONE, rr.generation + 2,
                            {FOLLOWER_INSTANCE_ID}, "CompletingRebalance", CONSUMER,
                            rr.follower_id, rr.follower_id)


def test_static_member_rejoin_as_follower_with_unknown_member_id(h: Harness) -> None:
    rr = h.static_members_join_and_rebalance()
    result = h.static_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, FOLLOWER_INSTANCE_ID, PROTOCOL_TYPE,
                                 PROTOCOL_SUPERSET, clock_advance=1)
    assert LEADER_INSTANCE_ID in h.group().static_members
    check_join_group_result(h, result, ErrorCode.NONE, rr.generation, set(), "Stable", CONSUMER)
    assert result.member_id != rr.follower_id
    sync = h.sync_group_follower(GROUP_ID, rr.generation, result.member_id)
    assert sync.error_code == ErrorCode.NONE
    assert sync.assignment == rr.follower_assignment


def test_static_member_rejoin_as_follower_with_known_member_id_and_no_protocol_change(
    h: Harness,
) -> None:
    rr = h.static_members_join_and_rebalance()
    result = h.static_join_group(GROUP_ID, rr.follower_id, FOLLOWER_INSTANCE_ID, PROTOCOL_TYPE,
                                 PROTOCOL_SUPERSET, clock_advance=1)
    assert LEADER_INSTANCE_ID in h.group().static_members
    check_join_group_result(h, result, ErrorCode.NONE, rr.generation, set(), "Stable", CONSUMER,
                            rr.leader_id, rr.follower_id)


def test_static_member_rejoin_as_follower_with_mismatched_member_id(h: Harness) -> None:
    rr = h.static_members_join_and_rebalance()
    result = h.static_join_group(GROUP_ID, rr.follower_id, LEADER_INSTANCE_ID, PROTOCOL_TYPE,
                                 PROTOCOL_SUPERSET, clock_advance=1)
    assert result.error_code == ErrorCode.FENCED_INSTANCE_ID


def test_static_member_rejoin_as_leader_with_mismatched_member_id(h: Harness) -> None:
    rr = h.static_members_join_and_rebalance()
    result = h.static_join_group(GROUP_ID, rr.leader_id, FOLLOWER_INSTANCE_ID, PROTOCOL_TYPE,
                                 PROTOCOL_SUPERSET, clock_advance=1)
    assert result.error_code == ErrorCode.FENCED_INSTANCE_ID


def test_static_member_sync_as_leader_with_invalid_member_id(h: Harness) -> None:
    rr = h.static_members_join_and_rebalance()
    result = h.sync_group_leader(GROUP_ID, rr.generation, "invalid", {}, None, None,
                                 LEADER_INSTANCE_ID)
    assert result.error_code == ErrorCode.FENCED_INSTANCE_ID


def test_static_member_heartbeat_leader_with_invalid_member_id(h: Harness) -> None:
    rr = h.static_members_join_and_rebalance()
    assert h.sync_group_leader(GROUP_ID, rr.generation, rr.leader_id, {}).error_code == 0
    assert h.heartbeat(GROUP_ID, rr.leader_id, rr.generation) == ErrorCode.NONE
    assert h.heartbeat(GROUP_ID, INVALID_MEMBER_ID, rr.generation,
                       LEADER_INSTANCE_ID) == ErrorCode.FENCED_INSTANCE_ID


def test_should_get_different_static_member_id_after_each_rejoin(h: Harness) -> None:
    rr = h.static_members_join_and_rebalance()
    last = rr.leader_id
    for _ in range(5):
        result = h.static_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, LEADER_INSTANCE_ID,
                                     PROTOCOL_TYPE, PROTOCOLS, clock_advance=1)
        assert result.error_code == ErrorCode.NONE
        assert result.member_id.startswith(LEADER_INSTANCE_ID)
        assert result.member_id != last
        last = result.member_id
    assert h.group().generation_id == rr.generation


def test_static_member_commit_offset_with_invalid_member_id(h: Harness) -> None:
    rr = h.static_members_join_and_rebalance()
    assert h.sync_group_leader(GROUP_ID, rr.generation, rr.leader_id, {}).error_code == 0
    tp = ("topic", 0)
    assert h.commit_offsets(GROUP_ID, rr.leader_id, rr.generation, {tp: 0}) == {tp: 0}
    assert h.commit_offsets(GROUP_ID, INVALID_MEMBER_ID, rr.generation, {tp: 0},
                            LEADER_INSTANCE_ID) == {tp: ErrorCode.FENCED_INSTANCE_ID}


def test_static_member_join_with_unknown_instance_id_and_known_member_id(h: Harness) -> None:
    rr = h.static_members_join_and_rebalance()
    result = h.static_join_group(GROUP_ID, rr.leader_id, "unknown_instance", PROTOCOL_TYPE,
                                 PROTOCOL_SUPERSET, clock_advance=1)
    assert result.error_code == ErrorCode.UNKNOWN_MEMBER_ID


def test_static_member_re_join_with_illegal_state_as_unknown_member(h: Harness) -> None:
    h.static_members_join_and_rebalance()
    group = h.group()
    group.transition_to(PREPARING_REBALANCE, h.now)
    group.transition_to(EMPTY, h.now)
    with pytest.raises(CoordinatorStateError) as info:
        h.static_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, FOLLOWER_INSTANCE_ID, PROTOCOL_TYPE,
                            PROTOCOL_SUPERSET, clock_advance=1)
    assert GROUP_ID in str(info.value)
    assert FOLLOWER_INSTANCE_ID in str(info.value)

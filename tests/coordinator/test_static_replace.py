"""Static member replacement (KIP-345/814): the Java-only GroupMetadataManagerTest cases."""

from __future__ import annotations

from harness import (
    FOLLOWER_INSTANCE_ID,
    GROUP_ID,
    LEADER_INSTANCE_ID,
    METADATA,
    PROTOCOL_SUPERSET,
    PROTOCOL_TYPE,
    UNKNOWN_MEMBER_ID,
    Harness,
)
from scenarios import subscription

from coordinator.core import ErrorCode, HeartbeatTimerKey
from coordinator.core.classic.state import STABLE
from storage.records import GroupMetadataKey, GroupMetadataValue, RebalanceEventKey


def _group_records(h: Harness, start: int) -> list[GroupMetadataValue]:
    return [r.value for r in h.records[start:]
            if isinstance(r.key, GroupMetadataKey) and isinstance(r.value, GroupMetadataValue)]



def test_replace_static_member_in_stable_state_no_error(h: Harness) -> None:
    rr = h.static_members_join_and_rebalance()
    before = len(h.records)
    result = h.static_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, FOLLOWER_INSTANCE_ID, PROTOCOL_TYPE,
                                 PROTOCOL_SUPERSET, clock_advance=0)
    assert result.error_code == ErrorCode.NONE
    assert result.generation_id == rr.generation
    assert not result.skip_assignment
    assert h.group().static_members[FOLLOWER_INSTANCE_ID] == result.member_id
    assert len(_group_records(h, before)) == 1


def test_replace_static_member_in_stable_state_succeeds(h: Harness) -> None:
    rr = h.static_members_join_and_rebalance()
    leader = h.static_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, LEADER_INSTANCE_ID, PROTOCOL_TYPE,
                                 PROTOCOL_SUPERSET, clock_advance=0)
    assert leader.error_code == ErrorCode.NONE
    assert leader.skip_assignment
    assert leader.leader == leader.member_id
    assert {m.group_instance_id for m in leader.members} == {LEADER_INSTANCE_ID,
                                                            FOLLOWER_INSTANCE_ID}
    assert h.state() == "Stable"
    # The persisted group names the new leader id and keeps the assignment.
    persisted = h.coordinator.hard_state().groups[GROUP_ID]
    assert persisted.leader == leader.member_id
    assert persisted.generation == rr.generation


def test_replace_static_member_in_stable_state_with_updated_protocol_triggers_rebalance(
    h: Harness,
) -> None:
    rr = h.static_members_join_and_rebalance()
    token = h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE,
                              [("roundrobin", METADATA)], FOLLOWER_INSTANCE_ID)
    assert not h.answered(token)
    assert h.state() == "PreparingRebalance"
    assert h.group().generation_id == rr.generation


def test_replace_static_member_fences_the_old_member_id(h: Harness) -> None:
    """After a Stable replacement the old member id is fenced (with its instance id) or unknown."""
    rr = h.static_members_join_and_rebalance()
    new = h.static_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, LEADER_INSTANCE_ID, PROTOCOL_TYPE,
                              PROTOCOL_SUPERSET, clock_advance=0)
    assert new.member_id != rr.leader_id
    assert h.heartbeat(GROUP_ID, rr.leader_id, rr.generation,
                       LEADER_INSTANCE_ID) == ErrorCode.FENCED_INSTANCE_ID
    assert h.heartbeat(GROUP_ID, rr.leader_id, rr.generation) == ErrorCode.UNKNOWN_MEMBER_ID


def test_replace_static_member_in_completing_rebalance_state_triggers_rebalance(
    h: Harness,
) -> None:
    rr = h.static_members_join_and_rebalance()
    leader = h.send_join_group(GROUP_ID, rr.leader_id, PROTOCOL_TYPE, PROTOCOL_SUPERSET,
                               LEADER_INSTANCE_ID)
    follower = h.send_join_group(GROUP_ID, rr.follower_id, PROTOCOL_TYPE, PROTOCOL_SUPERSET,
                                 FOLLOWER_INSTANCE_ID)
    assert h.reply(leader).generation_id == h.reply(follower).generation_id == 2
    assert h.state() == "CompletingRebalance"
    h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOL_SUPERSET,
                      FOLLOWER_INSTANCE_ID)
    assert h.state() == "PreparingRebalance"


def test_pre_v9_static_leader_rejoin_gets_old_leader_id(h: Harness) -> None:
    rr = h.static_members_join_and_rebalance()
    result = h.static_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, LEADER_INSTANCE_ID, PROTOCOL_TYPE,
                                 PROTOCOL_SUPERSET, clock_advance=0,
                                 support_skipping_assignment=False)
    assert result.leader == rr.leader_id
    assert result.member_id != rr.leader_id
    assert not result.skip_assignment
    assert result.members == ()
    # The group itself knows the new id leads.
    assert h.group().leader_id == result.member_id


def test_replace_static_member_in_stable_state_errors() -> None:
    """If the append fails, the member is not updated: old id, protocols and timeouts back."""
    h = Harness()
    first = h.send_join_group("group-id", UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, [("range", METADATA)],
                              "group-instance-id", session_timeout=3000,
                              rebalance_timeout=4000, support_skipping_assignment=False)
    h.sleep(51)  # the initial rebalance delay
    response = h.reply(first)
    assert response.error_code == ErrorCode.NONE
    group = h.group("group-id")
    assert (group.size, group.generation_id, group.state.value) == (
        1, 1, "CompletingRebalance")
    old_member_id = response.member_id
    group.transition_to(STABLE, h.now)  # simulate a successful sync group phase

    # The static member rejoins with UNKNOWN_MEMBER_ID but the append fails.
    protocols = [("range", METADATA), ("roundrobin", subscription("bar"))]
    before = len(h.results)
    with h.hold_appends():
        rejoin = h.send_join_group("group-id", UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, protocols,
                                   "group-instance-id", session_timeout=6000,
                                   rebalance_timeout=7000, support_skipping_assignment=False)
    held = [r for result in h.results[before:] for r in result.records]
    assert [type(r.key) for r in held if not isinstance(r.key, RebalanceEventKey)] == [
        GroupMetadataKey]
    assert not h.answered(rejoin)
    h.release(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)  # a failed write to the log
    assert h.reply(rejoin) == {
        "error_code": ErrorCode.COORDINATOR_NOT_AVAILABLE, "generation_id": 1,
        "protocol_type": "consumer", "protocol_name": "range", "leader": old_member_id,
        "skip_assignment": False, "member_id": UNKNOWN_MEMBER_ID, "members": ()}
    reverted = group.members[group.static_members["group-instance-id"]]
    assert reverted.member_id == old_member_id
    assert reverted.group_instance_id == "group-instance-id"
    assert (reverted.rebalance_timeout_ms, reverted.session_timeout_ms) == (4000, 3000)
    # Kafka's Java test expects the mutated request collection (range + roundrobin) here:
    # its revert restores the old collection object, which the test had mutated in place.
    assert reverted.protocols == (("range", METADATA),)
    assert (group.size, group.generation_id, group.state.value) == (1, 1, "Stable")
    # The old id's session is armed again; the new id's is not.
    assert h.deadline(HeartbeatTimerKey("group-id", old_member_id)) == h.now + 3000
    assert all(k.member_id == old_member_id for k in h.timers
               if isinstance(k, HeartbeatTimerKey))


def test_replacement_record_landing_during_a_rebalance_leaves_the_answer_to_it(
    h: Harness,
) -> None:
    """The replacement's record lands after a new member started a rebalance: the parked
    JoinGroup is answered by the rebalance (next generation), not with the old one."""
    rr = h.static_members_join_and_rebalance()
    with h.hold_appends():
        token = h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOL_SUPERSET,
                                  FOLLOWER_INSTANCE_ID)
        newcomer = h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE,
                                     PROTOCOL_SUPERSET, api_version=3)
    assert h.state() == "PreparingRebalance"  # the leader has not rejoined yet
    h.release()
    assert not h.answered(token)  # still parked: the record's landing did not answer it
    leader = h.send_join_group(GROUP_ID, rr.leader_id, PROTOCOL_TYPE, PROTOCOL_SUPERSET,
                               LEADER_INSTANCE_ID)
    for t in (token, newcomer, leader):
        assert h.reply(t).error_code == ErrorCode.NONE
        assert h.reply(t).generation_id == rr.generation + 1
    assert h.state() == "CompletingRebalance"

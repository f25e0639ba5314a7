"""A coordinator move (issue 13): ``reload_groups`` unloads groups as Kafka's old coordinator
does (GroupMetadataManager.onUnloaded: parked JoinGroup and SyncGroup answered
NOT_COORDINATOR) and loads them as the new one does (onLoaded: from the log, sessions
re-armed). Kafka's two onUnloaded tests are mirrored under their names; where Kafka leaves
the old group DEAD, the one kcoord process holds the group the new coordinator loaded: none
for a group the log never heard of, the last stored generation otherwise."""

from __future__ import annotations

from harness import GROUP_ID, PROTOCOL_TYPE, PROTOCOLS, UNKNOWN_MEMBER_ID, Harness
from scenarios import setup_group_with_pending_member

from coordinator.core import ErrorCode
from coordinator.core.classic.group import ClassicGroup
from coordinator.core.classic.state import EMPTY
from coordinator.core.group_reload import reload_groups
from coordinator.core.timers import HeartbeatTimerKey, JoinTimerKey


def unload_and_load(h: Harness, *group_ids: str) -> None:
    h.apply(reload_groups(h.coordinator, group_ids, h.now))


def test_classic_group_on_unloaded_empty_and_preparing_rebalance() -> None:
    h = Harness()
    h.add_group(ClassicGroup("empty-group", EMPTY, None))
    first = h.send_join_group("preparing-group", UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS,
                              api_version=3, rebalance_timeout=10_000)
    second = h.send_join_group("preparing-group", UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS,
                               api_version=3, rebalance_timeout=10_000)
    assert not h.answered(first) and not h.answered(second)
    assert h.state("preparing-group") == "PreparingRebalance"
    assert len(h.group("preparing-group").members) == 2
    parked = [first, second]

    unload_and_load(h, "empty-group", "preparing-group")

    for token in parked:
        reply = h.reply(token)
        assert reply.error_code == ErrorCode.NOT_COORDINATOR
        assert list(reply.members) == []
        assert reply.member_id != ""
    # Neither group ever reached the log: the new coordinator does not know them.
    assert h.maybe_group("empty-group") is None
    assert h.maybe_group("preparing-group") is None
    assert h.deadline(JoinTimerKey("preparing-group")) is None


def test_classic_group_on_unloaded_completing_rebalance() -> None:
    h = Harness()
    pending = setup_group_with_pending_member(h)
    join_token = h.send_join_group(GROUP_ID, pending.member_id, PROTOCOL_TYPE, PROTOCOLS)
    joined = h.reply(join_token)
    assert joined.error_code == ErrorCode.NONE
    group = h.group()
    assert len(group.members) == 3 and not group.pending_members
    stored_generation = joined.generation_id - 1  # the last generation the log holds
    follower_id = next(m for m in group.members
                       if m not in (group.leader_id, pending.member_id))
    follower_sync = h.send_sync_group(GROUP_ID, joined.generation_id, follower_id)
    pending_sync = h.send_sync_group(GROUP_ID, joined.generation_id, pending.member_id)
    assert not h.answered(follower_sync) and not h.answered(pending_sync)
    assert h.state() == "CompletingRebalance"

    unload_and_load(h, GROUP_ID)

    for token in (follower_sync, pending_sync):
        reply = h.reply(token)
        assert reply.error_code == ErrorCode.NOT_COORDINATOR
        assert reply.assignment == b""
    # Loaded from its last record: Stable at the stored generation, without the member the
    # log never saw, every stored member's session re-armed from now.
    reloaded = h.group()
    assert reloaded is not group
    assert (h.state(), reloaded.generation_id) == ("Stable", stored_generation)
    assert pending.member_id not in reloaded.members
    for member_id, member in reloaded.members.items():
        assert h.deadline(HeartbeatTimerKey(GROUP_ID, member_id)) == (
            h.now + member.session_timeout_ms)

"""JoinGroup: mirrors of GroupCoordinatorTest.scala's join tests (and Java-only join tests)."""

from __future__ import annotations

import pytest
from harness import (
    DEFAULT_REBALANCE_TIMEOUT,
    DEFAULT_SESSION_TIMEOUT,
    GROUP_ID,
    GROUP_INITIAL_REBALANCE_DELAY,
    GROUP_INSTANCE_ID,
    GROUP_MAX_SESSION_TIMEOUT,
    GROUP_MIN_SESSION_TIMEOUT,
    LEADER_INSTANCE_ID,
    MEMBER_ID,
    METADATA,
    PROTOCOL_SUPERSET,
    PROTOCOL_TYPE,
    PROTOCOLS,
    UNKNOWN_MEMBER_ID,
    Harness,
)
from scenarios import setup_group_with_pending_member

from coordinator.core import NEW_MEMBER_JOIN_TIMEOUT_MS, CoordinatorStateError, ErrorCode
from coordinator.core.classic.group import ClassicGroup
from coordinator.core.classic.state import COMPLETING_REBALANCE, DEAD, EMPTY, PREPARING_REBALANCE


def _dead_group(h: Harness, group_id: str) -> None:
    h.add_group(ClassicGroup(group_id, DEAD, h.now))


def _join_and_sync_one(h: Harness) -> tuple[str, int]:
    first = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    assert first.error_code == ErrorCode.NONE
    assert first.leader == first.member_id
    sync = h.sync_group_leader(GROUP_ID, first.generation_id, first.member_id,
                               {first.member_id: b""})
    assert sync.error_code == ErrorCode.NONE
    return first.member_id, first.generation_id


def test_join_group_session_timeout_too_small(h: Harness) -> None:
    result = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS,
                                  session_timeout=GROUP_MIN_SESSION_TIMEOUT - 1)
    assert result.error_code == ErrorCode.INVALID_SESSION_TIMEOUT
    assert h.maybe_group() is None


def test_join_group_session_timeout_too_large(h: Harness) -> None:
    result = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS,
                                  session_timeout=GROUP_MAX_SESSION_TIMEOUT + 1)
    assert result.error_code == ErrorCode.INVALID_SESSION_TIMEOUT


def test_join_group_unknown_consumer_new_group(h: Harness) -> None:
    result = h.dynamic_join_group(GROUP_ID, MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    assert result.error_code == ErrorCode.UNKNOWN_MEMBER_ID
    result = h.static_join_group(GROUP_ID, MEMBER_ID, GROUP_INSTANCE_ID, PROTOCOL_TYPE, PROTOCOLS)
    assert result.error_code == ErrorCode.UNKNOWN_MEMBER_ID
    assert h.maybe_group() is None


def test_invalid_group_id(h: Harness) -> None:
    result = h.dynamic_join_group("", UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    assert result.error_code == ErrorCode.INVALID_GROUP_ID
    assert h.maybe_group("") is None


def test_valid_join_group(h: Harness) -> None:
    result = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    assert result.error_code == ErrorCode.NONE
    assert result.generation_id == 1
    assert result.member_id.startswith("clientId-")
    assert h.state() == "CompletingRebalance"


def test_join_group_inconsistent_protocol_type(h: Harness) -> None:
    result = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    assert result.error_code == ErrorCode.NONE
    other = h.reply(h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, "connect", PROTOCOLS))
    assert other.error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL


def test_join_group_with_empty_protocol_type(h: Harness) -> None:
    result = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, "", PROTOCOLS)
    assert result.error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    result = h.static_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, GROUP_INSTANCE_ID, "", PROTOCOLS)
    assert result.error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL


def test_join_group_with_empty_group_protocol(h: Harness) -> None:
    result = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, [])
    assert result.error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL


def test_new_member_timeout_completion(h: Harness) -> None:
    session_timeout = NEW_MEMBER_JOIN_TIMEOUT_MS + 5000
    token = h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS, None,
                              session_timeout, DEFAULT_REBALANCE_TIMEOUT)
    h.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
    join = h.reply(token)
    group = h.group()
    assert join.error_code == ErrorCode.NONE
    assert sum(m.is_new for m in group.members.values()) == 0

    sync = h.sync_group_leader(GROUP_ID, join.generation_id, join.member_id, {join.member_id: b""})
    assert sync.error_code == ErrorCode.NONE
    assert group.size == 1

    h.sleep(NEW_MEMBER_JOIN_TIMEOUT_MS + 100)
    # The new-member timeout no longer applies: the member stays.
    assert group.size == 1

    h.sleep(session_timeout + 100)
    assert group.size == 0


def test_new_member_join_expiration(h: Harness) -> None:
    session_timeout = NEW_MEMBER_JOIN_TIMEOUT_MS + 5000
    rebalance_timeout = NEW_MEMBER_JOIN_TIMEOUT_MS * 2
    first = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS,
                                 session_timeout, rebalance_timeout)
    assert first.member_id == first.leader
    assert first.error_code == ErrorCode.NONE
    group = h.group()
    assert sum(m.is_new for m in group.members.values()) == 0

    token = h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS, None,
                              session_timeout, rebalance_timeout)
    assert not h.answered(token)
    assert group.size == 2
    new_members = [m for m in group.members.values() if m.is_new]
    assert len(new_members) == 1
    assert new_members[0].member_id != first.member_id

    h.sleep(NEW_MEMBER_JOIN_TIMEOUT_MS + 1)
    response = h.reply(token)
    assert response.error_code == ErrorCode.UNKNOWN_MEMBER_ID
    assert group.size == 1
    assert sum(m.is_new for m in group.members.values()) == 0
    assert list(group.members) == [first.member_id]


def _verify_session_expiration(h: Harness) -> None:
    h.sleep(DEFAULT_SESSION_TIMEOUT + 1)
    assert h.state() == "Empty"
    assert not h.group().members


def test_new_member_failure_after_join_group_completion(h: Harness) -> None:
    first_id, _ = _join_and_sync_one(h)
    other_token = h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    join_token = h.send_join_group(GROUP_ID, first_id, PROTOCOL_TYPE, PROTOCOLS)
    assert h.reply(join_token).error_code == ErrorCode.NONE
    assert h.reply(other_token).error_code == ErrorCode.NONE
    _verify_session_expiration(h)


def test_join_group_inconsistent_group_protocol(h: Harness) -> None:
    token = h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, [("range", METADATA)])
    other = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE,
                                 [("roundrobin", METADATA)])
    h.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
    assert h.reply(token).error_code == ErrorCode.NONE
    assert other.error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL


def test_join_group_unknown_consumer_existing_group(h: Harness) -> None:
    result = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    assert result.error_code == ErrorCode.NONE
    other = h.reply(h.send_join_group(GROUP_ID, "memberId", PROTOCOL_TYPE, PROTOCOLS))
    assert other.error_code == ErrorCode.UNKNOWN_MEMBER_ID
    assert other.generation_id == -1


def test_join_group_unknown_consumer_new_dead_group(h: Harness) -> None:
    _dead_group(h, "deadGroupId")
    result = h.dynamic_join_group("deadGroupId", UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    assert result.error_code == ErrorCode.COORDINATOR_NOT_AVAILABLE


def test_join_group_second_join_inconsistent_protocol(h: Harness) -> None:
    result = h.reply(h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS,
                                       require_known_member_id=True))
    assert result.error_code == ErrorCode.MEMBER_ID_REQUIRED
    member_id = result.member_id
    # An inconsistent protocol is refused ...
    result = h.reply(h.send_join_group(GROUP_ID, member_id, PROTOCOL_TYPE, [],
                                       require_known_member_id=True))
    assert result.error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    # ... a consistent one accepted.
    token = h.send_join_group(GROUP_ID, member_id, PROTOCOL_TYPE, PROTOCOLS,
                              require_known_member_id=True)
    h.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
    assert h.reply(token).error_code == ErrorCode.NONE


def test_join_group_protocol_type_is_not_provided_when_an_error_occurs(h: Harness) -> None:
    result = h.reply(h.send_join_group(GROUP_ID, "fake-id", PROTOCOL_TYPE, PROTOCOL_SUPERSET,
                                       LEADER_INSTANCE_ID, DEFAULT_SESSION_TIMEOUT))
    assert result.error_code == ErrorCode.UNKNOWN_MEMBER_ID
    assert result.protocol_type is None
    assert result.protocol_name is None
    assert result.generation_id == -1
    assert result.leader == ""


def test_join_group_returns_the_protocol_type(h: Harness) -> None:
    leader = h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOL_SUPERSET,
                               LEADER_INSTANCE_ID, DEFAULT_SESSION_TIMEOUT)
    follower = h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOL_SUPERSET,
                                 "follower", DEFAULT_SESSION_TIMEOUT)
    h.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
    h.sleep(DEFAULT_REBALANCE_TIMEOUT + 1)
    for token in (leader, follower):
        result = h.reply(token)
        assert result.error_code == ErrorCode.NONE
        assert result.protocol_type == PROTOCOL_TYPE


def test_rebalance_completes_before_member_joins(h: Harness) -> None:
    first = h.static_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, LEADER_INSTANCE_ID, PROTOCOL_TYPE,
                                PROTOCOLS, rebalance_timeout=1200, session_timeout=1000)
    first_id, first_generation = first.member_id, first.generation_id
    assert first.leader == first_id
    assert first.error_code == ErrorCode.NONE
    sync = h.sync_group_leader(GROUP_ID, first_generation, first_id, {first_id: b""})
    assert sync.error_code == ErrorCode.NONE

    other_session_timeout = DEFAULT_SESSION_TIMEOUT
    other_token = h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    # A couple of heartbeats keep the first member alive while the rebalance runs.
    for expected in (ErrorCode.REBALANCE_IN_PROGRESS, ErrorCode.REBALANCE_IN_PROGRESS):
        h.sleep(other_session_timeout)
        assert h.heartbeat(GROUP_ID, first_id, first_generation) == expected

    # The rebalance times out.
    h.sleep(other_session_timeout)
    other = h.reply(other_token)
    other_id, other_generation = other.member_id, other.generation_id
    sync = h.sync_group_leader(GROUP_ID, other_generation, other_id, {other_id: b""})
    assert sync.error_code == ErrorCode.NONE

    # The static member that did not rejoin stays until its session expires.
    assert other.error_code == ErrorCode.NONE
    assert h.heartbeat(GROUP_ID, first_id, first_generation) == ErrorCode.ILLEGAL_GENERATION
    assert first_id in h.group().members

    for expected in (ErrorCode.NONE, ErrorCode.NONE, ErrorCode.REBALANCE_IN_PROGRESS):
        h.sleep(other_session_timeout)
        assert h.heartbeat(GROUP_ID, other_id, other_generation) == expected
    assert first_id not in h.group().members

    rejoin = h.reply(h.send_join_group(GROUP_ID, other_id, PROTOCOL_TYPE, PROTOCOLS))
    assert rejoin.error_code == ErrorCode.NONE
    resync = h.sync_group_leader(GROUP_ID, rejoin.generation_id, other_id, {other_id: b""})
    assert resync.error_code == ErrorCode.NONE
    # No rebalance sneaks in while the member keeps heartbeating.
    for _ in range(20):
        h.sleep(500)
        assert h.heartbeat(GROUP_ID, other_id, rejoin.generation_id) == ErrorCode.NONE


def test_join_group_from_unchanged_follower_does_not_rebalance(h: Harness) -> None:
    first_id, _ = _join_and_sync_one(h)
    other_token = h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    join_token = h.send_join_group(GROUP_ID, first_id, PROTOCOL_TYPE, PROTOCOLS)
    join, other = h.reply(join_token), h.reply(other_token)
    assert join.error_code == other.error_code == ErrorCode.NONE
    assert join.generation_id == other.generation_id
    assert join.leader == other.leader == first_id
    next_generation = join.generation_id
    # Unchanged follower metadata: answered at once with the current generation.
    follower = h.reply(h.send_join_group(GROUP_ID, other.member_id, PROTOCOL_TYPE, PROTOCOLS))
    assert follower.error_code == ErrorCode.NONE
    assert follower.generation_id == next_generation
    assert h.state() == "CompletingRebalance"


def test_join_group_from_unchanged_leader_should_rebalance(h: Harness) -> None:
    first_id, first_generation = _join_and_sync_one(h)
    second = h.reply(h.send_join_group(GROUP_ID, first_id, PROTOCOL_TYPE, PROTOCOLS))
    assert second.error_code == ErrorCode.NONE
    assert second.generation_id != first_generation


def test_second_member_partially_join_and_timeout(h: Harness) -> None:
    first_id, _ = _join_and_sync_one(h)
    h.sleep(100)
    group = h.group()
    assert list(group.members) == [first_id]
    assert not group.static_members
    assert not group.pending_members
    assert group.state.value == "Stable"

    second = h.join_group_partial(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    assert second.error_code == ErrorCode.MEMBER_ID_REQUIRED
    assert len(group.pending_members) == 1
    assert group.state.value == "Stable"

    h.sleep(300)
    assert h.heartbeat(GROUP_ID, first_id, 1) == ErrorCode.NONE
    h.sleep(300)
    assert list(group.members) == [first_id]
    assert not group.pending_members
    assert group.state.value == "Stable"


def test_generation_id_increments_on_rebalance(h: Harness) -> None:
    result = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    assert result.generation_id == 1
    assert result.error_code == ErrorCode.NONE
    sync = h.sync_group_leader(GROUP_ID, 1, result.member_id, {result.member_id: b""})
    assert sync.error_code == ErrorCode.NONE
    other = h.reply(h.send_join_group(GROUP_ID, result.member_id, PROTOCOL_TYPE, PROTOCOLS))
    assert other.generation_id == 2
    assert other.error_code == ErrorCode.NONE


# --------------------------------------------------------------------------- pending members


def test_join_group_completion_when_pending_member_joins(h: Harness) -> None:
    pending = setup_group_with_pending_member(h)
    token = h.send_join_group(GROUP_ID, pending.member_id, PROTOCOL_TYPE, PROTOCOLS)
    assert h.reply(token).error_code == ErrorCode.NONE
    assert h.state() == "CompletingRebalance"
    assert h.group().size == 3
    assert not h.group().pending_members


def test_join_group_completion_when_pending_member_times_out(h: Harness) -> None:
    setup_group_with_pending_member(h)
    # Past the pending member's 100 ms session, before the members' 500 ms ones.
    h.sleep(120)
    assert h.state() == "CompletingRebalance"
    assert h.group().size == 2
    assert not h.group().pending_members


# --------------------------------------------------------------------------- Java-only tests


def test_join_group_existing_member_in_empty_state(h: Harness) -> None:
    response = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    assert response.error_code == ErrorCode.NONE
    group = h.group()
    assert group.state is COMPLETING_REBALANCE
    group.transition_to(PREPARING_REBALANCE, h.now)
    group.transition_to(EMPTY, h.now)
    result = h.reply(h.send_join_group(GROUP_ID, response.member_id, PROTOCOL_TYPE, PROTOCOLS,
                                       require_known_member_id=True))
    assert result.error_code == ErrorCode.UNKNOWN_MEMBER_ID
    assert result.generation_id == -1
    assert not h.results[-1].records


def test_existing_member_join_dead_group(h: Harness) -> None:
    response = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    assert response.member_id in h.group().members
    h.group().transition_to(DEAD, h.now)
    result = h.reply(h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS,
                                       require_known_member_id=True))
    assert result.error_code == ErrorCode.COORDINATOR_NOT_AVAILABLE
    result = h.reply(h.send_join_group(GROUP_ID, response.member_id, PROTOCOL_TYPE, PROTOCOLS,
                                       require_known_member_id=True))
    assert result.error_code == ErrorCode.COORDINATOR_NOT_AVAILABLE
    assert not h.results[-1].records


def test_join_group_existing_pending_member_with_group_instance_id_throws_exception(
    h: Harness,
) -> None:
    result = h.reply(h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS,
                                       require_known_member_id=True))
    assert result.error_code == ErrorCode.MEMBER_ID_REQUIRED
    with pytest.raises(CoordinatorStateError, match="pending member"):
        h.send_join_group(GROUP_ID, result.member_id, PROTOCOL_TYPE, PROTOCOLS,
                          group_instance_id="some-instance")


def test_complete_join_remove_not_yet_rejoined_dynamic_members() -> None:
    h = Harness(strict=False)
    leader = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS,
                                  session_timeout=1000, rebalance_timeout=1000)
    assert leader.error_code == ErrorCode.NONE
    group = h.group()
    assert group.generation_id == 1
    token = h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS,
                              session_timeout=1000, rebalance_timeout=1000)
    assert not h.answered(token)
    assert group.size == 2
    assert group.state is PREPARING_REBALANCE
    # The rebalance timeout expires the leader, which did not rejoin.
    h.sleep(1000)
    response = h.reply(token)
    assert response.error_code == ErrorCode.NONE
    assert list(group.members) == [response.member_id]
    assert group.generation_id == 2


def test_join_group_v0_uses_session_timeout_as_rebalance_timeout(h: Harness) -> None:
    token = h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS,
                              session_timeout=700, rebalance_timeout=99999, api_version=0)
    h.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
    member_id = h.reply(token).member_id
    assert h.group().members[member_id].rebalance_timeout_ms == 700


def test_join_group_member_id_format_uses_client_and_instance_id(h: Harness) -> None:
    dynamic = h.reply(h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS,
                                        require_known_member_id=True, client_id="my-client"))
    assert dynamic.member_id == "my-client-uuid0001"
    token = h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS,
                              group_instance_id="inst-1")
    h.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
    static_id = next(m for m in h.group().members.values() if m.group_instance_id == "inst-1")
    assert static_id.member_id == "inst-1-uuid0002"
    assert h.answered(token)


def test_join_group_protocol_vote_picks_most_preferred_common_protocol(h: Harness) -> None:
    a = h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE,
                          [("roundrobin", b"a"), ("range", b"a"), ("sticky", b"a")])
    b = h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE,
                          [("range", b"b"), ("roundrobin", b"b")])
    c = h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE,
                          [("range", b"c"), ("roundrobin", b"c")])
    h.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
    h.sleep(DEFAULT_REBALANCE_TIMEOUT + 1)
    results = [h.reply(t) for t in (a, b, c)]
    assert {r.protocol_name for r in results} == {"range"}
    leader = next(r for r in results if r.member_id == r.leader)
    assert sorted(m.metadata for m in leader.members) == [b"a", b"b", b"c"]
    assert all(r.members == () for r in results if r is not leader)

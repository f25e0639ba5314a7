"""Heartbeat and session expiry: mirrors of GroupCoordinatorTest.scala (and Java-only tests)."""

from __future__ import annotations

from harness import (
    DEFAULT_REBALANCE_TIMEOUT,
    DEFAULT_SESSION_TIMEOUT,
    GROUP_ID,
    GROUP_INSTANCE_ID,
    MEMBER_ID,
    PROTOCOL_TYPE,
    PROTOCOLS,
    UNKNOWN_MEMBER_ID,
    Harness,
)

from coordinator.core import ErrorCode, HeartbeatTimerKey
from coordinator.core.classic.group import ClassicGroup
from coordinator.core.classic.group_member import Member
from coordinator.core.classic.state import DEAD, EMPTY


def _join_and_sync(h: Harness, session_timeout: int = DEFAULT_SESSION_TIMEOUT,
                   rebalance_timeout: int = DEFAULT_REBALANCE_TIMEOUT) -> tuple[str, int]:
    join = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS,
                                session_timeout, rebalance_timeout)
    assert join.error_code == ErrorCode.NONE
    sync = h.sync_group_leader(GROUP_ID, join.generation_id, join.member_id,
                               {join.member_id: b""})
    assert sync.error_code == ErrorCode.NONE
    return join.member_id, join.generation_id


def test_heartbeat_unknown_group(h: Harness) -> None:
    assert h.heartbeat(GROUP_ID, MEMBER_ID, -1) == ErrorCode.UNKNOWN_MEMBER_ID


def test_heartbeat_dead_group(h: Harness) -> None:
    h.add_group(ClassicGroup("deadGroupId", DEAD, 0))
    assert h.heartbeat("deadGroupId", "memberId", 1) == ErrorCode.COORDINATOR_NOT_AVAILABLE


def test_heartbeat_empty_group(h: Harness) -> None:
    group = h.add_group(ClassicGroup(GROUP_ID, EMPTY, 0))
    member = Member(GROUP_ID, "memberId", GROUP_INSTANCE_ID, "clientId", "clientHost",
                    DEFAULT_REBALANCE_TIMEOUT, DEFAULT_SESSION_TIMEOUT, PROTOCOL_TYPE,
                    (("range", b""), ("roundrobin", b"")))
    group.add(member, None)
    assert h.heartbeat(GROUP_ID, "memberId", 0) == ErrorCode.UNKNOWN_MEMBER_ID


def test_heartbeat_unknown_consumer_existing_group(h: Harness) -> None:
    _join_and_sync(h)
    assert h.heartbeat(GROUP_ID, "memberId", 1) == ErrorCode.UNKNOWN_MEMBER_ID


def test_heartbeat_rebalance_in_progress(h: Harness) -> None:
    # Despite Kafka's name: in CompletingRebalance a heartbeat is answered NONE.
    join = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    assert join.error_code == ErrorCode.NONE
    assert h.state() == "CompletingRebalance"
    assert h.heartbeat(GROUP_ID, join.member_id, 1) == ErrorCode.NONE


def test_heartbeat_illegal_generation(h: Harness) -> None:
    member_id, _ = _join_and_sync(h)
    assert h.heartbeat(GROUP_ID, member_id, 2) == ErrorCode.ILLEGAL_GENERATION


def test_valid_heartbeat(h: Harness) -> None:
    member_id, _ = _join_and_sync(h)
    assert h.heartbeat(GROUP_ID, member_id, 1) == ErrorCode.NONE


def test_session_timeout(h: Harness) -> None:
    member_id, _ = _join_and_sync(h)
    h.sleep(DEFAULT_SESSION_TIMEOUT + 100)
    assert h.heartbeat(GROUP_ID, member_id, 1) == ErrorCode.UNKNOWN_MEMBER_ID
    assert h.state() == "Empty"


def test_heartbeat_maintains_session(h: Harness) -> None:
    session_timeout = 1000
    member_id, _ = _join_and_sync(h, session_timeout, session_timeout)
    h.sleep(session_timeout // 2)
    assert h.heartbeat(GROUP_ID, member_id, 1) == ErrorCode.NONE
    h.sleep(session_timeout // 2 + 100)
    assert h.heartbeat(GROUP_ID, member_id, 1) == ErrorCode.NONE


def test_session_timeout_during_rebalance(h: Harness) -> None:
    first_id, first_generation = _join_and_sync(h, 1000, 2000)
    other_token = h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    h.sleep(500)
    assert h.heartbeat(GROUP_ID, first_id, first_generation) == ErrorCode.REBALANCE_IN_PROGRESS
    # Letting the session expire drops the member; the rebalance completes without it.
    h.sleep(1100)
    assert h.heartbeat(GROUP_ID, first_id, first_generation) == ErrorCode.UNKNOWN_MEMBER_ID
    assert h.reply(other_token).error_code == ErrorCode.NONE


def test_heartbeat_during_rebalance_causes_rebalance_in_progress(h: Harness) -> None:
    join = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    assert join.error_code == ErrorCode.NONE
    h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    assert h.heartbeat(GROUP_ID, join.member_id,
                       join.generation_id) == ErrorCode.REBALANCE_IN_PROGRESS


def test_complete_heartbeat_with_group_dead(h: Harness) -> None:
    rr = h.static_members_join_and_rebalance()
    h.heartbeat(GROUP_ID, rr.leader_id, rr.generation)
    group = h.group()
    group.transition_to(DEAD, h.now)
    # An expiry reaching a Dead group does nothing.
    result = h.coordinator.fire_timer(HeartbeatTimerKey(GROUP_ID, rr.leader_id), h.now + 10**9)
    assert result.records == result.replies == result.timers == ()
    assert rr.leader_id in group.members


def test_complete_heartbeat_with_member_already_removed(h: Harness) -> None:
    rr = h.static_members_join_and_rebalance()
    h.heartbeat(GROUP_ID, rr.leader_id, rr.generation)
    group = h.group()
    group.remove(rr.leader_id)
    result = h.coordinator.fire_timer(HeartbeatTimerKey(GROUP_ID, rr.leader_id), h.now + 10**9)
    assert result.records == result.replies == result.timers == ()
    assert h.state() == "Stable"


# --------------------------------------------------------------------------- Java-only tests


def test_heartbeat_expiration_should_remove_pending_member() -> None:
    h = Harness(strict=False)
    result = h.reply(h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS,
                                       session_timeout=1000, require_known_member_id=True))
    assert result.error_code == ErrorCode.MEMBER_ID_REQUIRED
    group = h.group()
    assert group.size == 0
    assert len(group.pending_members) == 1
    h.sleep(1000)
    assert not group.pending_members


def test_heartbeat_expiration_should_remove_member() -> None:
    h = Harness(strict=False)
    member_id, _ = _join_and_sync(h, 1000, 1000)
    assert h.deadline(HeartbeatTimerKey(GROUP_ID, member_id)) == h.now + 1000
    h.sleep(1000)
    assert member_id not in h.group().members
    assert h.state() == "Empty"


def test_heartbeat_during_completing_rebalance(h: Harness) -> None:
    join = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    assert join.generation_id == 1
    assert h.state() == "CompletingRebalance"
    assert h.heartbeat(GROUP_ID, join.member_id, join.generation_id) == ErrorCode.NONE
    key = HeartbeatTimerKey(GROUP_ID, join.member_id)
    assert h.deadline(key) == h.now + DEFAULT_SESSION_TIMEOUT


def test_heartbeat_in_preparing_rebalance_still_refreshes_session(h: Harness) -> None:
    member_id, generation = _join_and_sync(h)
    h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    h.sleep(300)
    assert h.heartbeat(GROUP_ID, member_id, generation) == ErrorCode.REBALANCE_IN_PROGRESS
    assert h.deadline(HeartbeatTimerKey(GROUP_ID, member_id)) == h.now + DEFAULT_SESSION_TIMEOUT


def test_heartbeat_invalid_group_id(h: Harness) -> None:
    assert h.heartbeat("", MEMBER_ID, 1) == ErrorCode.INVALID_GROUP_ID


def test_members_parked_in_join_count_as_alive(h: Harness) -> None:
    a_id, _ = _join_and_sync(h, session_timeout=500, rebalance_timeout=5000)
    b_token = h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS,
                                session_timeout=500, rebalance_timeout=5000)
    h.send_join_group(GROUP_ID, a_id, PROTOCOL_TYPE, PROTOCOLS, session_timeout=500,
                      rebalance_timeout=5000)
    b = h.reply(b_token)
    h.sync_group_leader(GROUP_ID, b.generation_id, a_id, {})
    h.sync_group_follower(GROUP_ID, b.generation_id, b.member_id)
    assert h.state() == "Stable"
    # C joins; A rejoins and parks; B stays silent.
    c_token = h.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS,
                                session_timeout=500, rebalance_timeout=5000)
    a_token = h.send_join_group(GROUP_ID, a_id, PROTOCOL_TYPE, PROTOCOLS, session_timeout=500,
                                rebalance_timeout=5000)
    assert not h.answered(a_token)
    h.sleep(1000)
    # A's session passed while it was parked: it survives; B's session expired: it is gone,
    # which lets the join phase complete.
    a = h.reply(a_token)
    assert a.error_code == ErrorCode.NONE
    assert h.reply(c_token).error_code == ErrorCode.NONE
    assert set(h.group().members) == {a_id, h.reply(c_token).member_id}
    assert b.member_id not in h.group().members

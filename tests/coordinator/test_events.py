"""kcoord's RebalanceEvent history records: emitted at the right moments, ignored by replay."""

from __future__ import annotations

from harness import (
    DEFAULT_SESSION_TIMEOUT,
    GROUP_ID,
    LEADER_INSTANCE_ID,
    PROTOCOL_SUPERSET,
    PROTOCOL_TYPE,
    PROTOCOLS,
    UNKNOWN_MEMBER_ID,
    Harness,
    identity,
)

from storage.records import RebalanceEventKey, RebalanceEventValue


def _events(h: Harness, start: int = 0) -> list[RebalanceEventValue]:
    return [r.value for r in h.records[start:]
            if isinstance(r.key, RebalanceEventKey) and isinstance(r.value, RebalanceEventValue)]


def test_rebalance_start_and_end_events(h: Harness) -> None:
    join = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    events = _events(h)
    assert [e.event for e in events] == ["member_join", "rebalance_start", "rebalance_end"]
    assert events[1].reason == "member join"
    assert events[2].generation == 1
    assert events[2].members == (join.member_id,)
    assert all(isinstance(r.key, RebalanceEventKey) and r.key.group == GROUP_ID
               for r in h.records if isinstance(r.key, RebalanceEventKey))


def test_leader_rejoin_and_leave_events(h: Harness) -> None:
    join = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    h.sync_group_leader(GROUP_ID, 1, join.member_id, {})
    start = len(h.records)
    h.send_join_group(GROUP_ID, join.member_id, PROTOCOL_TYPE, PROTOCOLS)
    first = _events(h, start)[0]
    assert (first.event, first.reason) == ("rebalance_start", "leader rejoin")
    start = len(h.records)
    h.single_leave_group(GROUP_ID, join.member_id)
    kinds = [(e.event, e.reason) for e in _events(h, start)]
    assert kinds[0] == ("member_leave", "")
    assert ("rebalance_end", "") in kinds


def test_session_timeout_events(h: Harness) -> None:
    join = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    h.sync_group_leader(GROUP_ID, 1, join.member_id, {})
    start = len(h.records)
    h.sleep(DEFAULT_SESSION_TIMEOUT + 1)
    events = _events(h, start)
    assert (events[0].event, events[0].reason, events[0].member_id) == (
        "member_expired", "session timeout", join.member_id)
    assert ("rebalance_start", "session timeout") in [(e.event, e.reason) for e in events]


def test_static_replace_and_group_deleted_events(h: Harness) -> None:
    rr = h.static_members_join_and_rebalance()
    start = len(h.records)
    h.static_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, LEADER_INSTANCE_ID, PROTOCOL_TYPE,
                        PROTOCOL_SUPERSET, clock_advance=0)
    replaced = [e for e in _events(h, start) if e.event == "static_replace"]
    assert len(replaced) == 1
    assert replaced[0].group_instance_id == LEADER_INSTANCE_ID
    assert rr.leader_id in replaced[0].reason
    h.batch_leave_group(GROUP_ID, [identity("", LEADER_INSTANCE_ID), identity("", "follower")])
    start = len(h.records)
    h.delete_groups([GROUP_ID])
    assert [e.event for e in _events(h, start)] == ["group_deleted"]

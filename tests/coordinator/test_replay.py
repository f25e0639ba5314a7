"""Replay and load: startup rebuilds state from the log; live state equals replayed state."""

from __future__ import annotations

import pytest
from harness import (
    GROUP_ID,
    PROTOCOL_SUPERSET,
    PROTOCOL_TYPE,
    PROTOCOLS,
    UNKNOWN_MEMBER_ID,
    Harness,
)
from scenarios import subscription

from coordinator.config import CoordinatorConfig
from coordinator.core import ErrorCode, GroupCoordinator, HeartbeatTimerKey, RetentionTimerKey
from storage.records import (
    GroupMetadataKey,
    GroupMetadataValue,
    MemberMetadata,
    OffsetCommitKey,
    OffsetCommitValue,
    RebalanceEventKey,
    RebalanceEventValue,
    Record,
)


def _fresh(config: CoordinatorConfig | None = None) -> GroupCoordinator:
    return GroupCoordinator(config or CoordinatorConfig(), lambda: "uuid")


def _loaded(*records: Record, config: CoordinatorConfig | None = None) -> GroupCoordinator:
    """A fresh coordinator that replayed ``records`` and built its groups (on_loaded)."""
    coordinator = _fresh(config)
    for record in records:
        coordinator.replay(record)
    coordinator.on_loaded(0)
    return coordinator


def _members(rebalance_timeout: int = 9000) -> tuple[MemberMetadata, ...]:
    sub = subscription("foo")
    return tuple(
        MemberMetadata(member_id=f"member-{i}", group_instance_id=f"group-instance-id-{i}",
                       client_id=f"client-{i}", client_host=f"host-{i}",
                       rebalance_timeout=rebalance_timeout, session_timeout=4000,
                       subscription=sub, assignment=b"\x02")
        for i in range(2)
    )


def _group_record(members: tuple[MemberMetadata, ...], generation: int = 1) -> Record:
    return Record(GroupMetadataKey("group-id"), GroupMetadataValue(
        protocol_type="consumer", generation=generation, protocol="range", leader="member-0",
        current_state_timestamp=1234, members=members))


@pytest.mark.parametrize("use_default_rebalance_timeout", [True, False])
def test_replay_group_metadata_records(use_default_rebalance_timeout: bool) -> None:
    coordinator = _loaded(_group_record(_members(-1 if use_default_rebalance_timeout else 9000)))
    view = coordinator.describe("group-id")
    assert view is not None
    assert (view.state, view.generation_id, view.protocol_type, view.protocol_name,
            view.leader_id, view.current_state_timestamp) == (
        "Stable", 1, "consumer", "range", "member-0", 1234)
    assert [m.member_id for m in view.members] == ["member-0", "member-1"]
    for i, m in enumerate(view.members):
        assert m.group_instance_id == f"group-instance-id-{i}"
        assert (m.client_id, m.client_host) == (f"client-{i}", f"host-{i}")
        assert m.session_timeout_ms == 4000
        assert m.rebalance_timeout_ms == (4000 if use_default_rebalance_timeout else 9000)
        assert m.assignment == b"\x02"
        assert m.protocols == ("range",)
    group = coordinator.groups["group-id"]
    assert group.subscribed_topics == {"foo"}
    assert group.static_members == {"group-instance-id-0": "member-0",
                                    "group-instance-id-1": "member-1"}


def test_on_loaded() -> None:
    coordinator = _fresh()
    coordinator.replay(_group_record(_members()))
    result = coordinator.on_loaded(100)
    timers = {t.key: t.deadline_ms for t in result.timers}  # type: ignore[union-attr]
    assert timers[HeartbeatTimerKey("group-id", "member-0")] == 4100
    assert timers[HeartbeatTimerKey("group-id", "member-1")] == 4100
    assert timers[RetentionTimerKey()] == 100 + 600_000
    assert coordinator.describe("group-id").state == "Stable"  # type: ignore[union-attr]


def test_on_loaded_schedules_classic_group_member_heartbeats() -> None:
    h = Harness(config=CoordinatorConfig())
    h.coordinator.replay(_group_record(_members()))
    h.apply(h.coordinator.on_loaded(h.now))
    for i in range(2):
        assert h.deadline(HeartbeatTimerKey("group-id", f"member-{i}")) == h.now + 4000
    # A loaded member that never heartbeats is expired; the group rebalances without it.
    h.sleep(2000)
    assert h.heartbeat("group-id", "member-1", 1) == ErrorCode.NONE
    h.sleep(2001)
    group = h.group("group-id")
    assert list(group.members) == ["member-1"]
    assert group.state.value == "PreparingRebalance"


def test_load_group_without_members_is_empty() -> None:
    coordinator = _loaded(_group_record((), generation=5))
    view = coordinator.describe("group-id")
    assert view is not None and view.state == "Empty" and view.generation_id == 5


def test_load_offsets_without_group_record_make_an_offset_only_group() -> None:
    coordinator = _loaded(Record(OffsetCommitKey("g", "t", 0), OffsetCommitValue(offset=3)))
    view = coordinator.describe("g")
    assert view is not None
    assert (view.state, view.generation_id, view.protocol_type) == ("Empty", 0, None)
    assert coordinator.committed_offsets("g") == {("t", 0): OffsetCommitValue(offset=3)}


def test_load_last_record_wins_and_tombstones_remove() -> None:
    key = OffsetCommitKey("g", "t", 0)
    log = [Record(key, OffsetCommitValue(offset=1)), Record(key, OffsetCommitValue(offset=2))]
    assert _loaded(*log).committed_offsets("g")[("t", 0)].offset == 2
    log.append(Record(key, None))
    coordinator = _loaded(*log)
    assert coordinator.committed_offsets("g") == {}
    assert coordinator.describe("g") is None
    log += [_group_record(_members()), _group_record((), generation=2)]
    assert _loaded(*log).describe("group-id").state == "Empty"  # type: ignore[union-attr]
    log.append(Record(GroupMetadataKey("group-id"), None))
    assert _loaded(*log).describe("group-id") is None


def test_group_tombstone_keeps_an_offset_only_group_when_offsets_remain() -> None:
    coordinator = _loaded(
        _group_record(_members()),
        Record(OffsetCommitKey("group-id", "t", 0), OffsetCommitValue(offset=1)),
        Record(GroupMetadataKey("group-id"), None),
    )
    view = coordinator.describe("group-id")
    assert view is not None and view.state == "Empty" and view.generation_id == 0


def test_replay_ignores_rebalance_events() -> None:
    coordinator = _fresh()
    before = coordinator.hard_state()
    coordinator.replay(Record(RebalanceEventKey("g"), RebalanceEventValue(
        event="rebalance_start", timestamp=0, generation=0, reason="member join")))
    assert coordinator.hard_state() == before
    assert coordinator.group_ids() == []


def _scenario(h: Harness) -> None:
    rr = h.static_members_join_and_rebalance()
    h.commit_offsets(GROUP_ID, rr.leader_id, rr.generation, {("t", 0): 1, ("t", 1): 2})
    h.static_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, "leader", PROTOCOL_TYPE, PROTOCOL_SUPERSET,
                        clock_advance=0)
    h.commit_offsets("simple", "", -1, {("s", 0): 9})
    h.commit_offsets("doomed", "", -1, {("d", 0): 9})
    h.delete_groups(["doomed"])
    h.delete_offsets("simple", [("s", 0)])


def test_replayed_hard_state_equals_live_hard_state(h: Harness) -> None:
    _scenario(h)
    replayed = _loaded(*h.records, config=h.config)
    assert replayed.hard_state() == h.coordinator.hard_state()
    assert sorted(replayed.group_ids()) == [GROUP_ID]
    live, loaded = h.coordinator.describe(GROUP_ID), replayed.describe(GROUP_ID)
    assert live is not None and loaded is not None
    assert (loaded.state, loaded.generation_id, loaded.leader_id) == (
        live.state, live.generation_id, live.leader_id)
    assert [m.member_id for m in loaded.members] == [m.member_id for m in live.members]


def test_restart_keeps_a_stable_group_working(h: Harness) -> None:
    rr = h.static_members_join_and_rebalance()
    h.crash_and_replay()
    assert h.state() == "Stable"
    assert h.heartbeat(GROUP_ID, rr.leader_id, rr.generation) == ErrorCode.NONE
    # The follower's session was re-armed on load and expires without heartbeats.
    for _ in range(3):
        h.sleep(300)
        h.heartbeat(GROUP_ID, rr.leader_id, rr.generation)
    assert rr.follower_id not in h.group().members


def test_restart_loses_soft_state_but_keeps_the_persisted_generation(h: Harness) -> None:
    join = h.dynamic_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS)
    assert h.state() == "CompletingRebalance"
    h.crash_and_replay()
    # Nothing was persisted for the CompletingRebalance generation.
    assert h.maybe_group() is None
    assert h.heartbeat(GROUP_ID, join.member_id, 1) == ErrorCode.UNKNOWN_MEMBER_ID

"""Online migration between the classic and consumer group protocols (KIP-848) in the core,
mirroring GroupMetadataManagerTest's migration tests (Kafka's names in snake_case) on the
fake-clock harness: a classic group is formed by real JoinGroup/SyncGroup exchanges, a
ConsumerGroupHeartbeat upgrades it, its classic members keep being served by the consumer
group, and the last consumer-protocol member leaving downgrades it. Every scenario checks
that the live group equals what its appended records rebuild."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from consumer_harness import CONFIG, FOO, GROUP, ConsumerHarness, assignment
from harness import GROUP_INITIAL_REBALANCE_DELAY, identity

from coordinator.core import ErrorCode
from coordinator.core.classic.group import ClassicGroup
from coordinator.core.classic.state import EMPTY, PREPARING_REBALANCE
from coordinator.core.consumer import MemberState
from coordinator.core.timers import (
    ClassicMemberJoinTimerKey,
    ClassicMemberSyncTimerKey,
    ConsumerSessionTimerKey,
)
from storage.records import ClassicProtocol, ConsumerGroupMemberMetadataValue, GroupMetadataKey
from wire.consumer_protocol import decode_assignment
from wire.consumer_protocol_schema import encode_assignment, encode_subscription

SESSION_MS = 5_000
REBALANCE_MS = 10_000


def subscription(topics: list[str], owned: dict[str, list[int]] | None = None,
                 version: int = 1) -> bytes:
    return encode_subscription(version, {
        "topics": topics, "user_data": None,
        "owned_partitions": [{"topic": t, "partitions": p} for t, p in (owned or {}).items()],
        "generation_id": -1, "rack_id": None,
    })


def assignment_blob(partitions: dict[str, list[int]]) -> bytes:
    return encode_assignment(0, {"assigned_partitions": [
        {"topic": t, "partitions": p} for t, p in partitions.items()], "user_data": None})


def decoded(blob: bytes) -> dict[str, list[int]]:
    return {topic: sorted(partitions) for topic, partitions in decode_assignment(blob)}


def classic_join(h: ConsumerHarness, member_id: str, topics: list[str],
                 owned: dict[str, list[int]] | None = None, **kw: Any) -> Any:
    """A classic consumer's JoinGroup (v5, answered at once or after the join phase)."""
    kw.setdefault("api_version", 5)
    token = h.send_join_group(GROUP, member_id, kw.pop("protocol_type", "consumer"),
                              kw.pop("protocols", [("range", subscription(topics, owned))]),
                              session_timeout=SESSION_MS, rebalance_timeout=REBALANCE_MS, **kw)
    if not h.answered(token):
        h.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
    return h.reply(token)


def stable_classic_group(h: ConsumerHarness, n: int = 1) -> list[str]:
    """A Stable classic group of ``n`` consumers of foo (6 partitions), range-assigned."""
    tokens = [h.send_join_group(GROUP, "", "consumer", [("range", subscription(["foo"]))],
                                session_timeout=SESSION_MS, rebalance_timeout=REBALANCE_MS,
                                api_version=3) for _ in range(n)]
    for _ in range(REBALANCE_MS // GROUP_INITIAL_REBALANCE_DELAY):  # the delay may extend
        if all(h.answered(t) for t in tokens):
            break
        h.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
    answers = [h.reply(t) for t in tokens]
    ids = [a.member_id for a in answers]
    per = 6 // n
    plan = {mid: assignment_blob({"foo": list(range(i * per, (i + 1) * per))})
            for i, mid in enumerate(ids)}
    leader = answers[0].leader
    sync = {mid: h.send_sync_group(GROUP, answers[0].generation_id, mid,
                                   plan if mid == leader else None) for mid in ids}
    for token in sync.values():
        assert h.reply(token).error_code == ErrorCode.NONE
    assert h.state(GROUP) == "Stable"
    return ids


@pytest.fixture
def h() -> ConsumerHarness:
    return ConsumerHarness()


def upgraded(h: ConsumerHarness, n: int = 1) -> tuple[list[str], int]:
    """A classic group of ``n`` upgraded by consumer member "c1" joining; (ids, epoch)."""
    ids = stable_classic_group(h, n)
    generation = h.group(GROUP).generation_id
    answer = h.join("c1", ["foo"])
    assert answer.error_code == ErrorCode.NONE
    return ids, generation


def rejoin_and_sync(h: ConsumerHarness, member_id: str, owned: dict[str, list[int]]
                    ) -> tuple[Any, dict[str, list[int]]]:
    joined = classic_join(h, member_id, ["foo"], owned)
    assert joined.error_code == ErrorCode.NONE, joined
    synced = h.sync_group_follower(GROUP, joined.generation_id, member_id, "consumer", "range")
    assert synced.error_code == ErrorCode.NONE, synced
    return joined, decoded(synced.assignment)


# --------------------------------------------------------------------------- upgrade


def test_consumer_group_heartbeat_with_non_empty_classic_group(h: ConsumerHarness) -> None:
    # Kafka's case: a classic group without members that is rebalancing.
    rebalancing = h.add_group(ClassicGroup(GROUP, EMPTY, 0))
    rebalancing.transition_to(PREPARING_REBALANCE, 0)
    assert h.join("c1", ["foo"]).error_code == ErrorCode.GROUP_ID_NOT_FOUND
    del h.coordinator.groups[GROUP]
    # A classic group of another protocol type.
    stable_classic_group(h)
    h.coordinator.groups[GROUP].protocol_type = "connect"
    answer = h.join("c1", ["foo"])
    assert (answer.error_code, answer.error_message) == (
        ErrorCode.GROUP_ID_NOT_FOUND, f"Group {GROUP} is not a consumer group.")
    assert GROUP not in h.coordinator.consumer_groups and h.state(GROUP) == "Stable"


@pytest.mark.parametrize("policy", ["disabled", "downgrade"])
def test_online_upgrade_refused_by_policy(policy: str) -> None:
    h = ConsumerHarness(dataclasses.replace(CONFIG, group_consumer_migration_policy=policy))
    stable_classic_group(h)
    assert h.join("c1", ["foo"]).error_code == ErrorCode.GROUP_ID_NOT_FOUND
    assert h.state(GROUP) == "Stable" and not h.coordinator.consumer_groups


def test_online_upgrade_refused_over_consumer_group_max_size() -> None:
    h = ConsumerHarness(dataclasses.replace(CONFIG, group_consumer_max_size=1))
    stable_classic_group(h, 2)
    assert h.join("c1", ["foo"]).error_code == ErrorCode.GROUP_ID_NOT_FOUND
    assert h.state(GROUP) == "Stable"


def test_online_upgrade_refused_with_malformed_embedded_protocol(h: ConsumerHarness) -> None:
    (mid,) = stable_classic_group(h)
    h.coordinator.groups[GROUP].members[mid].assignment = b"\x00"
    records = len(h.records)
    answer = h.join("c1", ["foo"])
    assert answer.error_code == ErrorCode.GROUP_ID_NOT_FOUND
    assert "malformed" in answer.error_message
    assert len(h.records) == records and h.state(GROUP) == "Stable"


def test_consumer_group_heartbeat_with_stable_classic_group(h: ConsumerHarness) -> None:
    ids, generation = upgraded(h, 2)
    assert GROUP not in h.coordinator.groups
    assert any(r.key == GroupMetadataKey(GROUP) and r.value is None for r in h.records)
    group = h.consumer_group()
    assert set(group.members) == {*ids, "c1"}
    # The join bumped the epoch past the classic generation and computed a new target.
    assert group.group_epoch == group.assignment_epoch == generation + 1
    for i, mid in enumerate(ids):
        member = group.members[mid]
        assert member.classic is not None
        assert member.classic.session_timeout_ms == SESSION_MS
        assert member.classic.supported_protocols == (
            ClassicProtocol("range", subscription(["foo"])),)
        assert member.subscribed_topic_names == ("foo",)
        assert member.rebalance_timeout_ms == REBALANCE_MS
        assert member.current.member_epoch == generation
        assert dict(member.current.assigned_partitions) == {
            FOO: frozenset(range(i * 3, i * 3 + 3))}
        assert h.deadline(ConsumerSessionTimerKey(GROUP, mid)) == h.now + SESSION_MS
    assert group.members["c1"].classic is None
    h.assert_live_equals_replay()


def test_upgrade_then_restart_keeps_classic_members(h: ConsumerHarness) -> None:
    ids, generation = upgraded(h, 2)
    before = h.consumer_group().members[ids[0]].metadata_value()
    h.crash_and_replay()
    member = h.consumer_group().members[ids[0]]
    assert member.metadata_value() == before
    assert isinstance(before, ConsumerGroupMemberMetadataValue)
    assert h.heartbeat(GROUP, ids[0], generation) == ErrorCode.REBALANCE_IN_PROGRESS
    h.assert_live_equals_replay()


def test_failed_upgrade_append_restores_the_classic_group(h: ConsumerHarness) -> None:
    ids = stable_classic_group(h, 2)
    h.fail_appends(ErrorCode.NOT_LEADER_OR_FOLLOWER)
    answer = h.join("c1", ["foo"])
    assert answer.error_code == ErrorCode.NOT_COORDINATOR
    assert GROUP not in h.coordinator.consumer_groups
    assert h.state(GROUP) == "Stable" and set(h.group(GROUP).members) == set(ids)
    assert h.heartbeat(GROUP, ids[0], h.group(GROUP).generation_id) == ErrorCode.NONE


def test_consumer_group_heartbeat_with_preparing_rebalance_classic_group(
    h: ConsumerHarness,
) -> None:
    (m1, m2) = stable_classic_group(h, 2)
    parked = h.send_join_group(GROUP, m1, "consumer", [("range", subscription(["foo"]))],
                               session_timeout=SESSION_MS, rebalance_timeout=REBALANCE_MS,
                               api_version=5)
    assert h.state(GROUP) == "PreparingRebalance" and not h.answered(parked)
    generation = h.group(GROUP).generation_id
    assert h.join("c1", ["foo"]).error_code == ErrorCode.NONE
    # The parked JoinGroup is told to rejoin: the consumer group serves it now.
    assert h.reply(parked).error_code == ErrorCode.REBALANCE_IN_PROGRESS
    assert set(h.consumer_group().members) == {m1, m2, "c1"}
    assert h.heartbeat(GROUP, m2, generation) == ErrorCode.REBALANCE_IN_PROGRESS
    h.assert_live_equals_replay()


# --------------------------------------------------------------------------- classic members


def test_joining_consumer_group_failing_to_persist_records(h: ConsumerHarness) -> None:
    h.join("c1", ["foo"])
    h.fail_appends(ErrorCode.NOT_LEADER_OR_FOLLOWER)
    answer = classic_join(h, "m1", ["foo"])
    assert answer.error_code == ErrorCode.NOT_COORDINATOR
    assert set(h.consumer_group().members) == {"c1"}
    h.assert_live_equals_replay()


def test_static_member_joining_consumer_group_with_unknown_instance_id(
    h: ConsumerHarness,
) -> None:
    h.join("c1", ["foo"])
    answer = classic_join(h, "m1", ["foo"], group_instance_id="i1")
    assert answer.error_code == ErrorCode.UNKNOWN_MEMBER_ID


def test_static_member_joining_consumer_group_with_unmatched_member_id(
    h: ConsumerHarness,
) -> None:
    h.join("c1", ["foo"], instance_id="i1")
    answer = classic_join(h, "m1", ["foo"], group_instance_id="i1")
    assert answer.error_code == ErrorCode.FENCED_INSTANCE_ID


def test_joining_consumer_group_replacing_existing_static_member(h: ConsumerHarness) -> None:
    h.join("c0", ["foo"])
    joined = classic_join(h, "", ["foo"], group_instance_id="i1")
    old = joined.member_id
    h.sync_group_follower(GROUP, joined.generation_id, old, group_instance_id="i1")
    again = classic_join(h, "", ["foo"], group_instance_id="i1")
    assert again.error_code == ErrorCode.NONE and again.member_id != old
    group = h.consumer_group()
    assert old not in group.members and group.static_members["i1"] == again.member_id
    h.assert_live_equals_replay()



def test_consumer_group_heartbeat_from_existing_classic_static_member(
    h: ConsumerHarness,
) -> None:
    h.join("c0", ["foo"])
    joined = classic_join(h, "", ["foo"], group_instance_id="i1")
    assert joined.error_code == ErrorCode.NONE
    # The same instance restarts with the consumer protocol: it takes the classic member's
    # place without the classic member having left.
    answer = h.join("c1", ["foo"], instance_id="i1")
    assert answer.error_code == ErrorCode.NONE
    group = h.consumer_group()
    assert joined.member_id not in group.members
    assert group.static_members["i1"] == "c1" and group.members["c1"].classic is None
    h.assert_live_equals_replay()


def test_reconciliation_in_joining_consumer_group_with_cooperative_protocol(
    h: ConsumerHarness,
) -> None:
    (mid,), generation = upgraded(h, 1)
    group = h.consumer_group()
    epoch = group.group_epoch
    # The new target splits foo; the classic member must rejoin.
    assert h.heartbeat(GROUP, mid, generation) == ErrorCode.REBALANCE_IN_PROGRESS
    joined, got = rejoin_and_sync(h, mid, {"foo": list(range(6))})
    keep = sorted(group.target_of(mid)[FOO])
    assert len(keep) == 3
    assert joined.generation_id == generation  # revoking first, at its old epoch
    assert got == {"foo": keep}
    assert group.members[mid].current.state is MemberState.UNREVOKED_PARTITIONS
    assert h.heartbeat(GROUP, mid, generation) == ErrorCode.REBALANCE_IN_PROGRESS
    # Rejoining without the revoked partitions completes the reconciliation.
    joined, got = rejoin_and_sync(h, mid, {"foo": keep})
    assert joined.generation_id == epoch and got == {"foo": keep}
    assert h.heartbeat(GROUP, mid, epoch) == ErrorCode.NONE
    # The consumer member now gets the released partitions.
    answer = h.consumer_heartbeat("c1", epoch, topic_partitions=[])
    assert assignment(answer) == {FOO: sorted(set(range(6)) - set(keep))}
    assert group.state == "Stable"
    h.assert_live_equals_replay()


def test_classic_member_commits_with_its_generation(h: ConsumerHarness) -> None:
    (mid,), generation = upgraded(h, 1)
    ok = h.commit_offsets(GROUP, mid, generation, {("foo", 0): 5}, api_version=7)
    assert ok == {("foo", 0): ErrorCode.NONE}
    stale = h.commit_offsets(GROUP, mid, generation + 5, {("foo", 0): 6}, api_version=7)
    assert stale == {("foo", 0): ErrorCode.ILLEGAL_GENERATION}


def test_joining_consumer_group_with_new_dynamic_member(h: ConsumerHarness) -> None:
    h.join("c1", ["foo"])
    first = classic_join(h, "", ["foo"])
    assert first.error_code == ErrorCode.MEMBER_ID_REQUIRED
    joined = classic_join(h, first.member_id, ["foo"])
    assert (joined.error_code, joined.protocol_type, joined.protocol_name) == (
        ErrorCode.NONE, "consumer", "range")
    group = h.consumer_group()
    assert group.members[first.member_id].classic is not None
    assert group.group_epoch == 2
    synced = h.sync_group_follower(GROUP, joined.generation_id, first.member_id)
    assert synced.error_code == ErrorCode.NONE
    h.assert_live_equals_replay()


def test_joining_consumer_group_throws_exception_if_protocol_is_not_supported(
    h: ConsumerHarness,
) -> None:
    upgraded(h, 1)
    answer = classic_join(h, "x", ["foo"], protocols=[("roundrobin", subscription(["foo"]))])
    assert answer.error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    answer = classic_join(h, "x", ["foo"], protocol_type="connect")
    assert answer.error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL


def test_joining_consumer_group_throws_exception_if_group_over_max_size() -> None:
    h = ConsumerHarness(dataclasses.replace(CONFIG, group_consumer_max_size=1))
    h.join("c1", ["foo"])
    assert classic_join(h, "", ["foo"]).error_code == ErrorCode.GROUP_MAX_SIZE_REACHED


def test_classic_group_sync_to_consumer_group_with_all_consumer_protocol_versions(
    h: ConsumerHarness,
) -> None:
    h.join("c1", ["foo", "bar"])
    for version in range(4):
        metadata = subscription(["bar"], version=version)
        joined = classic_join(h, f"m{version}", ["bar"], protocols=[("range", metadata)])
        synced = h.sync_group_follower(GROUP, joined.generation_id, f"m{version}")
        assert synced.error_code == ErrorCode.NONE
        assert int.from_bytes(synced.assignment[:2], "big") == version


def test_classic_group_sync_to_consumer_group_with_unknown_member_id(h: ConsumerHarness) -> None:
    upgraded(h, 1)
    assert h.sync_group_follower(GROUP, 1, "nobody").error_code == ErrorCode.UNKNOWN_MEMBER_ID
    # A consumer-protocol member cannot use SyncGroup.
    assert h.sync_group_follower(GROUP, 2, "c1").error_code == ErrorCode.UNKNOWN_MEMBER_ID


def test_classic_group_sync_to_consumer_group_with_fenced_instance_id(h: ConsumerHarness) -> None:
    h.join("c1", ["foo"], instance_id="i1")
    answer = h.sync_group_follower(GROUP, 1, "other", group_instance_id="i1")
    assert answer.error_code == ErrorCode.FENCED_INSTANCE_ID


def test_classic_group_sync_to_consumer_group_with_inconsistent_group_protocol(
    h: ConsumerHarness,
) -> None:
    (mid,), generation = upgraded(h, 1)
    for kind, name in (("connect", "range"), ("consumer", "roundrobin")):
        answer = h.sync_group_follower(GROUP, generation, mid, kind, name)
        assert answer.error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL


def test_classic_group_sync_to_consumer_group_with_illegal_generation(h: ConsumerHarness) -> None:
    (mid,), generation = upgraded(h, 1)
    answer = h.sync_group_follower(GROUP, generation + 7, mid)
    assert answer.error_code == ErrorCode.ILLEGAL_GENERATION


def test_classic_group_sync_to_consumer_group_rebalance_in_progress(h: ConsumerHarness) -> None:
    (mid,), generation = upgraded(h, 1)
    answer = h.sync_group_follower(GROUP, generation, mid)
    assert answer.error_code == ErrorCode.REBALANCE_IN_PROGRESS


def test_classic_group_heartbeat_to_consumer_group_maintains_session(h: ConsumerHarness) -> None:
    (mid,), generation = upgraded(h, 1)
    h.sleep(SESSION_MS - 100)
    h.heartbeat(GROUP, mid, generation)
    assert h.deadline(ConsumerSessionTimerKey(GROUP, mid)) == h.now + SESSION_MS
    h.sleep(SESSION_MS - 100)
    assert mid in h.consumer_group().members


def test_classic_group_heartbeat_to_consumer_group_rebalance_in_progress(
    h: ConsumerHarness,
) -> None:
    (mid,), generation = upgraded(h, 1)
    assert h.heartbeat(GROUP, mid, generation) == ErrorCode.REBALANCE_IN_PROGRESS


def test_classic_group_heartbeat_to_consumer_with_unknown_member(h: ConsumerHarness) -> None:
    upgraded(h, 1)
    assert h.heartbeat(GROUP, "nobody", 1) == ErrorCode.UNKNOWN_MEMBER_ID


def test_classic_group_heartbeat_to_consumer_with_fenced_instance_id(h: ConsumerHarness) -> None:
    h.join("c1", ["foo"], instance_id="i1")
    assert h.heartbeat(GROUP, "other", 1, group_instance_id="i1") == ErrorCode.FENCED_INSTANCE_ID
    assert h.heartbeat(GROUP, "other", 1, group_instance_id="i9") == ErrorCode.UNKNOWN_MEMBER_ID


def test_classic_group_heartbeat_to_consumer_with_illegal_generation_id(
    h: ConsumerHarness,
) -> None:
    (mid,), generation = upgraded(h, 1)
    assert h.heartbeat(GROUP, mid, generation + 3) == ErrorCode.ILLEGAL_GENERATION


def test_classic_group_heartbeat_to_consumer_with_member_not_using_classic_protocol(
    h: ConsumerHarness,
) -> None:
    h.join("c1", ["foo"])
    assert h.heartbeat(GROUP, "c1", 1) == ErrorCode.UNKNOWN_MEMBER_ID


def test_consumer_group_member_using_classic_protocol_fenced_when_session_timeout(
    h: ConsumerHarness,
) -> None:
    (mid, other), _ = upgraded(h, 2)
    epoch = h.consumer_group().group_epoch
    h.consumer_heartbeat("c1", epoch, topic_partitions=[])
    h.sleep(SESSION_MS + 1)
    group = h.consumer_group()
    assert mid not in group.members and other not in group.members
    assert group.group_epoch > epoch
    h.assert_live_equals_replay()


def test_consumer_group_member_using_classic_protocol_fenced_when_join_timeout(
    h: ConsumerHarness,
) -> None:
    (mid,), generation = upgraded(h, 1)
    assert h.heartbeat(GROUP, mid, generation) == ErrorCode.REBALANCE_IN_PROGRESS
    assert h.deadline(ClassicMemberJoinTimerKey(GROUP, mid)) == h.now + REBALANCE_MS
    for _ in range(REBALANCE_MS // 2_000 + 1):  # its session stays alive; it never rejoins
        h.sleep(2_000)
        if mid in h.consumer_group().members:
            h.heartbeat(GROUP, mid, generation)
    assert mid not in h.consumer_group().members
    h.assert_live_equals_replay()


def test_classic_member_fenced_when_sync_timeout(h: ConsumerHarness) -> None:
    (mid,), _ = upgraded(h, 1)
    joined = classic_join(h, mid, ["foo"], {"foo": list(range(6))})
    assert joined.error_code == ErrorCode.NONE
    assert h.deadline(ClassicMemberJoinTimerKey(GROUP, mid)) is None
    assert h.deadline(ClassicMemberSyncTimerKey(GROUP, mid)) == h.now + REBALANCE_MS
    h.sleep(REBALANCE_MS + 1)
    assert mid not in h.consumer_group().members
    h.assert_live_equals_replay()


def test_consumer_group_describe_shows_classic_members(h: ConsumerHarness) -> None:
    (mid,), _ = upgraded(h, 1)
    (described,) = h.describe(GROUP).groups
    types = {m["member_id"]: m["member_type"] for m in described["members"]}
    assert types == {mid: 0, "c1": 1}


def test_consumer_group_member_using_classic_protocol_batch_leave_group(
    h: ConsumerHarness,
) -> None:
    (m1, m2), _ = upgraded(h, 2)
    epoch = h.consumer_group().group_epoch
    answer = h.batch_leave_group(GROUP, [identity(m1), identity(m2), identity("c1")])
    assert [m["error_code"] for m in answer.members] == [
        ErrorCode.NONE, ErrorCode.NONE, ErrorCode.UNKNOWN_MEMBER_ID]
    group = h.consumer_group()
    assert set(group.members) == {"c1"} and group.group_epoch == epoch + 1  # bumped once
    h.assert_live_equals_replay()


def test_classic_leave_to_consumer_group_failing_to_persist_records(h: ConsumerHarness) -> None:
    (m1, m2), _ = upgraded(h, 2)
    h.fail_appends(ErrorCode.NOT_LEADER_OR_FOLLOWER)
    answer = h.batch_leave_group(GROUP, [identity(m1), identity(m2)])
    assert answer.error_code == ErrorCode.NOT_COORDINATOR
    assert set(h.consumer_group().members) == {m1, m2, "c1"}
    h.assert_live_equals_replay()


def test_classic_group_leave_to_consumer_group_without_valid_leave_group_member(
    h: ConsumerHarness,
) -> None:
    h.join("c1", ["foo"])
    epoch = h.consumer_group().group_epoch
    answer = h.batch_leave_group(GROUP, [identity("unknown")])
    assert [m["error_code"] for m in answer.members] == [ErrorCode.UNKNOWN_MEMBER_ID]
    assert h.consumer_group().group_epoch == epoch


# --------------------------------------------------------------------------- downgrade


def test_last_consumer_protocol_member_leaving_consumer_group(h: ConsumerHarness) -> None:
    (m1, m2), generation = upgraded(h, 2)
    epoch = h.consumer_group().group_epoch
    targets = {mid: h.consumer_group().target_of(mid) for mid in (m1, m2)}
    h.consumer_heartbeat("c1", -1)
    assert GROUP not in h.coordinator.consumer_groups
    classic = h.group(GROUP)
    assert classic.state.value == "PreparingRebalance"
    assert classic.generation_id == epoch and classic.protocol_name == "range"
    assert set(classic.members) == {m1, m2}
    for mid in (m1, m2):  # the classic group holds the consumer group's target assignment
        got = decoded(classic.members[mid].assignment)
        assert got == ({"foo": sorted(targets[mid][FOO])} if targets[mid] else {})
    assert h.replies  # the leave was answered
    # Both rejoin; the classic rebalance completes as usual.
    assert h.heartbeat(GROUP, m1, epoch) == ErrorCode.REBALANCE_IN_PROGRESS
    t1 = h.send_join_group(GROUP, m1, "consumer", [("range", subscription(["foo"]))],
                           session_timeout=SESSION_MS, rebalance_timeout=REBALANCE_MS,
                           api_version=5)
    t2 = h.send_join_group(GROUP, m2, "consumer", [("range", subscription(["foo"]))],
                           session_timeout=SESSION_MS, rebalance_timeout=REBALANCE_MS,
                           api_version=5)
    assert h.reply(t1).generation_id == h.reply(t2).generation_id == epoch + 1
    assert generation < epoch


def test_downgrade_disabled_by_policy() -> None:
    h = ConsumerHarness(dataclasses.replace(CONFIG, group_consumer_migration_policy="upgrade"))
    upgraded(h, 1)
    h.consumer_heartbeat("c1", -1)
    assert GROUP in h.coordinator.consumer_groups and h.coordinator.groups == {}
    h.assert_live_equals_replay()


def test_last_consumer_protocol_member_session_timeout_in_consumer_group(
    h: ConsumerHarness,
) -> None:
    (mid,), generation = upgraded(h, 1)
    owned = {"foo": list(range(6))}
    limit = h.now + 2 * CONFIG.group_consumer_session_timeout_ms
    while GROUP in h.coordinator.consumer_groups and h.now < limit:
        # The classic member keeps its session and rejoins when told; c1 never heartbeats.
        if h.heartbeat(GROUP, mid, generation) == ErrorCode.REBALANCE_IN_PROGRESS:
            joined, got = rejoin_and_sync(h, mid, owned)
            generation, owned = joined.generation_id, got
        h.sleep(SESSION_MS // 2)
    assert GROUP not in h.coordinator.consumer_groups
    assert set(h.group(GROUP).members) == {mid}


def test_failed_downgrade_append_restores_the_consumer_group(h: ConsumerHarness) -> None:
    (mid,), _ = upgraded(h, 1)
    h.fail_appends(ErrorCode.NOT_LEADER_OR_FOLLOWER)
    answer = h.consumer_heartbeat("c1", -1)
    assert answer.error_code == ErrorCode.NOT_COORDINATOR
    assert GROUP not in h.coordinator.groups
    assert set(h.consumer_group().members) == {mid, "c1"}
    assert h.deadline(ConsumerSessionTimerKey(GROUP, "c1")) is not None
    h.assert_live_equals_replay()


def test_restart_after_downgrade_loads_the_classic_group(h: ConsumerHarness) -> None:
    (m1, m2), _ = upgraded(h, 2)
    h.consumer_heartbeat("c1", -1)
    record = h.coordinator.hard_state()
    h.crash_and_replay()
    assert h.coordinator.hard_state() == record
    assert GROUP not in h.coordinator.consumer_groups
    assert set(h.group(GROUP).members) == {m1, m2} and h.state(GROUP) == "Stable"

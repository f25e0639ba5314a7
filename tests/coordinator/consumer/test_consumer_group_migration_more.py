"""More of GroupMetadataManagerTest's migration tests (Kafka's names in snake_case), on the
fake-clock harness, continuing ``test_consumer_group_migration.py``: upgrading a classic group
caught in CompletingRebalance or by a static member's replacement, classic static members
joining a consumer group, an eager classic member's reconciliation, a classic member's leave
updating the subscribed topics, and the downgrades when the last consumer-protocol member
misses its rebalance timeout or, static, is replaced by a classic member. Kafka's records are
compared in order, leaving out kcoord's own RebalanceEvent records."""

from __future__ import annotations

import dataclasses
import uuid
from typing import Any

import pytest
from consumer_harness import BAR, CONFIG, FOO, GROUP, ConsumerHarness, assignment, owned
from harness import identity
from test_consumer_group_migration import (
    REBALANCE_MS,
    SESSION_MS,
    assignment_blob,
    classic_join,
    decoded,
    rejoin_and_sync,
    stable_classic_group,
    subscription,
)

from coordinator.core import ErrorCode
from coordinator.core.consumer import MemberState
from coordinator.core.timers import (
    ClassicMemberJoinTimerKey,
    ClassicMemberSyncTimerKey,
    ConsumerRebalanceTimerKey,
    ConsumerSessionTimerKey,
    HeartbeatTimerKey,
    JoinTimerKey,
)
from storage.records import (
    ConsumerGroupCurrentMemberAssignmentKey,
    ConsumerGroupMemberMetadataKey,
    ConsumerGroupMetadataKey,
    ConsumerGroupTargetAssignmentMemberKey,
    ConsumerGroupTargetAssignmentMetadataKey,
    GroupMetadataKey,
    RebalanceEventKey,
    TopicPartitions,
)

ZAR = uuid.UUID(int=0x2A4)
# Kafka's createGroupTombstoneRecords for a group of two members (kcoord has no subscription
# metadata record to tombstone: the metadata hash is in the epoch record).
TWO_MEMBER_GROUP_TOMBSTONES = [
        (ConsumerGroupCurrentMemberAssignmentKey, True),
        (ConsumerGroupCurrentMemberAssignmentKey, True),
        (ConsumerGroupTargetAssignmentMemberKey, True),
        (ConsumerGroupTargetAssignmentMemberKey, True),
        (ConsumerGroupTargetAssignmentMetadataKey, True),
        (ConsumerGroupMemberMetadataKey, True),
        (ConsumerGroupMemberMetadataKey, True),
        (ConsumerGroupMetadataKey, True)]


@pytest.fixture
def h() -> ConsumerHarness:
    return ConsumerHarness()


def records_since(h: ConsumerHarness, start: int) -> list[Any]:
    """The records appended since ``start``, without kcoord's RebalanceEvent records."""
    return [r for r in h.records[start:] if not isinstance(r.key, RebalanceEventKey)]


def test_joining_consumer_group_with_new_static_member(h: ConsumerHarness) -> None:
    h.join("c1", ["foo"])
    group = h.consumer_group()
    epoch = group.group_epoch
    start = len(h.records)
    # A new static member joins with an unknown member id: it gets one at once (no
    # MEMBER_ID_REQUIRED round trip) and joins at the bumped epoch.
    joined = classic_join(h, "", ["foo", "bar"], group_instance_id="i1")
    mid = joined.member_id
    assert mid != ""
    assert (joined.error_code, joined.generation_id, joined.protocol_type,
            joined.protocol_name) == (ErrorCode.NONE, epoch + 1, "consumer", "range")
    records = records_since(h, start)
    assert [type(r.key) for r in records] == [
        ConsumerGroupMemberMetadataKey, ConsumerGroupMetadataKey,
        ConsumerGroupTargetAssignmentMemberKey, ConsumerGroupTargetAssignmentMemberKey,
        ConsumerGroupTargetAssignmentMetadataKey, ConsumerGroupCurrentMemberAssignmentKey]
    subscription, group_epoch, *_, assignment_epoch, current = records
    assert subscription.key.member_id == mid and subscription.value.instance_id == "i1"
    assert subscription.value.subscribed_topic_names == ("bar", "foo")
    assert subscription.value.classic_member_metadata.session_timeout_ms == SESSION_MS
    assert group_epoch.value.epoch == assignment_epoch.value.assignment_epoch == epoch + 1
    assert current.key.member_id == mid
    assert (current.value.member_epoch, current.value.previous_member_epoch) == (epoch + 1, 0)
    assert group.static_members["i1"] == mid
    assert h.deadline(ConsumerSessionTimerKey(GROUP, mid)) == h.now + SESSION_MS
    assert h.deadline(ClassicMemberSyncTimerKey(GROUP, mid)) == (
        h.now + group.members[mid].rebalance_timeout_ms)
    h.assert_live_equals_replay()


def test_consumer_group_member_using_classic_protocol_batch_leave_group_updating_subscription_metadata(  # noqa: E501
    h: ConsumerHarness,
) -> None:
    h.join("c1", ["foo"])
    first = classic_join(h, "", ["foo", "bar"])
    joined = classic_join(h, first.member_id, ["foo", "bar"])
    assert joined.error_code == ErrorCode.NONE
    group = h.consumer_group()
    epoch = group.group_epoch
    only_foo = ConsumerHarness()
    only_foo.join("c1", ["foo"])
    assert group.metadata_hash != only_foo.consumer_group().metadata_hash
    start = len(h.records)
    answer = h.batch_leave_group(GROUP, [identity(first.member_id)])
    assert answer.error_code == ErrorCode.NONE
    assert [(m["member_id"], m["group_instance_id"], m["error_code"])
            for m in answer.members] == [(first.member_id, None, ErrorCode.NONE)]
    # The member's records are removed, then the epoch is bumped once, with the metadata
    # of the topics still subscribed (foo only: KIP-1101's hash in the epoch record).
    records = records_since(h, start)
    assert [(type(r.key), r.value is None) for r in records] == [
        (ConsumerGroupCurrentMemberAssignmentKey, True),
        (ConsumerGroupTargetAssignmentMemberKey, True),
        (ConsumerGroupMemberMetadataKey, True),
        (ConsumerGroupMetadataKey, False)]
    assert all(r.key.member_id == first.member_id for r in records[:3])
    assert records[3].value.epoch == epoch + 1 == group.group_epoch
    assert records[3].value.metadata_hash == only_foo.consumer_group().metadata_hash
    h.assert_live_equals_replay()


def test_last_consumer_protocol_member_rebalance_timeout_in_consumer_group() -> None:
    h = ConsumerHarness(dataclasses.replace(CONFIG, group_consumer_migration_policy="downgrade"))
    answer = h.join("c1", ["foo", "bar"], rebalance_timeout_ms=30_000)
    assert assignment(answer) == {FOO: list(range(6)), BAR: [0, 1, 2]}
    held_by_c1 = owned(answer)
    assert h.consumer_heartbeat("c1", answer.member_epoch,
                                topic_partitions=held_by_c1).error_code == ErrorCode.NONE
    # A classic member joins; c1 must revoke partitions and never does.
    first = classic_join(h, "", ["foo"])
    joined = classic_join(h, first.member_id, ["foo"])
    mid = joined.member_id
    group = h.consumer_group()
    epoch = group.group_epoch
    h.consumer_heartbeat("c1", group.members["c1"].current.member_epoch,
                         topic_partitions=held_by_c1)
    assert group.members["c1"].current.state is MemberState.UNREVOKED_PARTITIONS
    c1_epoch = group.members["c1"].current.member_epoch
    timer = ConsumerRebalanceTimerKey(GROUP, "c1", c1_epoch)
    assert h.deadline(timer) == h.now + 30_000
    # The classic member keeps its session (SyncGroup, then heartbeats).
    synced = h.sync_group_follower(GROUP, joined.generation_id, mid)
    assert synced.error_code == ErrorCode.NONE
    generation, held = joined.generation_id, decoded(synced.assignment)
    target = group.target_of(mid)
    while h.deadline(timer) is not None:
        start = len(h.records)
        if h.heartbeat(GROUP, mid, generation) == ErrorCode.REBALANCE_IN_PROGRESS:
            rejoined, held = rejoin_and_sync(h, mid, held)
            generation = rejoined.generation_id
        h.sleep(SESSION_MS // 2)
    # c1 was fenced by its rebalance timeout; the group went back to the classic protocol.
    assert GROUP not in h.coordinator.consumer_groups
    classic = h.group(GROUP)
    assert set(classic.members) == {mid} and classic.protocol_name == "range"
    assert classic.generation_id == epoch  # the epoch c1 was fenced at; no bump
    records = records_since(h, start)
    assert [(type(r.key), r.value is None) for r in records] == [
        *TWO_MEMBER_GROUP_TOMBSTONES, (GroupMetadataKey, False)]
    assert {r.key.member_id for r in records[:2]} == {"c1", mid}
    metadata = records[-1].value
    assert (metadata.protocol_type, metadata.generation, metadata.protocol,
            metadata.leader) == ("consumer", epoch, "range", mid)
    (member,) = metadata.members
    assert (member.member_id, member.session_timeout, member.rebalance_timeout) == (
        mid, SESSION_MS, REBALANCE_MS)
    assert decoded(member.assignment) == {"foo": sorted(target[FOO])}
    assert classic.state.value == "PreparingRebalance"
    assert h.deadline(HeartbeatTimerKey(GROUP, mid)) is not None
    assert h.deadline(JoinTimerKey(GROUP)) is not None



def test_joining_consumer_group_with_existing_static_member_and_new_subscription() -> None:
    h = ConsumerHarness(foo=(FOO, 2), bar=(BAR, 1), zar=(ZAR, 1))
    h.join("c2", ["foo", "bar"])
    joined = classic_join(h, "", ["foo", "bar"], group_instance_id="i1")
    mid = joined.member_id
    synced = h.sync_group_follower(GROUP, joined.generation_id, mid, group_instance_id="i1")
    assert synced.error_code == ErrorCode.NONE
    group = h.consumer_group()
    epoch = group.group_epoch
    start = len(h.records)
    # The static member rejoins with its member id (and, as in Kafka's test, no instance
    # id) and a new subscription: the epoch is bumped and a new target computed at once.
    rejoined = classic_join(h, mid, ["foo", "bar", "zar"])
    assert (rejoined.error_code, rejoined.member_id, rejoined.generation_id,
            rejoined.protocol_type, rejoined.protocol_name) == (
        ErrorCode.NONE, mid, epoch + 1, "consumer", "range")
    records = records_since(h, start)
    assert [type(r.key) for r in records] == [
        ConsumerGroupMemberMetadataKey, ConsumerGroupMetadataKey,
        ConsumerGroupTargetAssignmentMemberKey, ConsumerGroupTargetAssignmentMetadataKey,
        ConsumerGroupCurrentMemberAssignmentKey]
    subscription, group_epoch, target, assignment_epoch, current = records
    assert subscription.value.instance_id == "i1"
    assert subscription.value.subscribed_topic_names == ("bar", "foo", "zar")
    assert group_epoch.value.epoch == assignment_epoch.value.assignment_epoch == epoch + 1
    assert target.key.member_id == mid
    assert ZAR in {tp.topic_id for tp in target.value.topic_partitions}
    assert (current.key.member_id, current.value.member_epoch,
            current.value.previous_member_epoch) == (mid, epoch + 1, epoch)
    assert group.static_members["i1"] == mid
    assert h.deadline(ConsumerSessionTimerKey(GROUP, mid)) == h.now + SESSION_MS
    assert h.deadline(ClassicMemberSyncTimerKey(GROUP, mid)) == h.now + REBALANCE_MS
    h.assert_live_equals_replay()


def test_reconciliation_in_joining_consumer_group_with_eager_protocol(h: ConsumerHarness) -> None:
    answer = h.join("c2", ["foo", "bar"])
    held_by_c2 = owned(answer)
    h.consumer_heartbeat("c2", answer.member_epoch, topic_partitions=held_by_c2)
    # An eager classic consumer joins owning nothing; its target holds partitions c2 owns,
    # so it waits in UNRELEASED_PARTITIONS at the new epoch with nothing assigned yet.
    first = classic_join(h, "", ["foo"])
    mid = first.member_id
    joined = classic_join(h, mid, ["foo"])
    group = h.consumer_group()
    epoch = group.group_epoch
    assert (joined.error_code, joined.generation_id) == (ErrorCode.NONE, epoch)
    member = group.members[mid]
    assert member.current.state is MemberState.UNRELEASED_PARTITIONS
    assert member.current.member_epoch == epoch and not member.current.assigned_partitions
    target = {FOO: sorted(group.target_of(mid)[FOO])}
    assert target[FOO]
    assert h.deadline(ConsumerSessionTimerKey(GROUP, mid)) == h.now + SESSION_MS
    assert h.deadline(ClassicMemberSyncTimerKey(GROUP, mid)) == h.now + REBALANCE_MS
    synced = h.sync_group_follower(GROUP, joined.generation_id, mid)
    assert synced.error_code == ErrorCode.NONE and decoded(synced.assignment) == {}
    # c2 revokes the partitions, then confirms the revocation.
    answer = h.consumer_heartbeat("c2", answer.member_epoch, topic_partitions=held_by_c2)
    assert set(target[FOO]).isdisjoint((assignment(answer) or {}).get(FOO, []))
    h.consumer_heartbeat("c2", answer.member_epoch, topic_partitions=owned(answer))
    assert group.members["c2"].current.member_epoch == epoch
    # The classic member is told to rejoin, within its rebalance timeout.
    assert h.heartbeat(GROUP, mid, joined.generation_id) == ErrorCode.REBALANCE_IN_PROGRESS
    assert h.deadline(ClassicMemberJoinTimerKey(GROUP, mid)) == h.now + REBALANCE_MS
    rejoined = classic_join(h, mid, ["foo"])
    assert (rejoined.error_code, rejoined.generation_id) == (ErrorCode.NONE, epoch)
    current = group.members[mid].current
    assert current.state is MemberState.STABLE
    assert (current.member_epoch, current.previous_member_epoch) == (epoch, epoch)
    assert {t: sorted(p) for t, p in current.assigned_partitions.items()} == target
    assert h.deadline(ClassicMemberJoinTimerKey(GROUP, mid)) is None
    synced = h.sync_group_follower(GROUP, rejoined.generation_id, mid)
    assert decoded(synced.assignment) == {"foo": target[FOO]}
    assert h.heartbeat(GROUP, mid, rejoined.generation_id) == ErrorCode.NONE
    h.assert_live_equals_replay()


def test_consumer_group_heartbeat_with_completing_rebalance_classic_group(
    h: ConsumerHarness,
) -> None:
    m1, m2 = stable_classic_group(h, 2)
    generation = h.group(GROUP).generation_id
    # Both members rejoin: the group completes the join phase and waits for the leader's
    # SyncGroup; the follower's SyncGroup is parked.
    rejoins = [h.send_join_group(GROUP, mid, "consumer", [("range", subscription(["foo"]))],
                                 session_timeout=SESSION_MS, rebalance_timeout=REBALANCE_MS,
                                 api_version=5) for mid in (m1, m2)]
    assert [h.reply(t).error_code for t in rejoins] == [ErrorCode.NONE, ErrorCode.NONE]
    assert h.state(GROUP) == "CompletingRebalance"
    assert h.group(GROUP).generation_id == generation + 1
    follower = m2 if h.group(GROUP).leader_id == m1 else m1
    parked = h.send_sync_group(GROUP, generation + 1, follower, None)
    assert not h.answered(parked)
    start = len(h.records)
    # A consumer-protocol member joins: the group is upgraded, its classic members keep
    # their assignments of the last generation at the new generation's epoch.
    answer = h.join("c1", ["foo"])
    assert (answer.error_code, answer.member_epoch) == (ErrorCode.NONE, generation + 2)
    assert h.reply(parked).error_code == ErrorCode.REBALANCE_IN_PROGRESS
    records = records_since(h, start)
    assert [(type(r.key), getattr(r.key, "member_id", None)) for r in records[:9]] == [
        (GroupMetadataKey, None),
        (ConsumerGroupMemberMetadataKey, m1), (ConsumerGroupMemberMetadataKey, m2),
        (ConsumerGroupMetadataKey, None),
        (ConsumerGroupTargetAssignmentMemberKey, m1),
        (ConsumerGroupTargetAssignmentMemberKey, m2),
        (ConsumerGroupTargetAssignmentMetadataKey, None),
        (ConsumerGroupCurrentMemberAssignmentKey, m1),
        (ConsumerGroupCurrentMemberAssignmentKey, m2)]
    assert records[0].value is None
    assert records[3].value.epoch == records[6].value.assignment_epoch == generation + 1
    for record, partitions in zip(records[7:9], ((0, 1, 2), (3, 4, 5)), strict=True):
        assert (record.value.member_epoch, record.value.previous_member_epoch) == (
            generation + 1, generation + 1)
        assert record.value.assigned_partitions == (TopicPartitions(FOO, partitions),)
    # Then c1 joins the consumer group: a new epoch and target, c1 waiting for partitions.
    rest = records[9:]
    assert [type(r.key) for r in rest] == [
        ConsumerGroupMemberMetadataKey, ConsumerGroupMetadataKey,
        *[ConsumerGroupTargetAssignmentMemberKey] * (len(rest) - 4),
        ConsumerGroupTargetAssignmentMetadataKey, ConsumerGroupCurrentMemberAssignmentKey]
    assert rest[0].key.member_id == rest[-1].key.member_id == "c1"
    assert rest[1].value.epoch == rest[-2].value.assignment_epoch == generation + 2
    assert (rest[-1].value.member_epoch, rest[-1].value.previous_member_epoch,
            rest[-1].value.state, rest[-1].value.assigned_partitions) == (
        generation + 2, 0, MemberState.UNRELEASED_PARTITIONS, ())
    for mid in (m1, m2):
        assert h.deadline(ConsumerSessionTimerKey(GROUP, mid)) == h.now + SESSION_MS
    assert h.deadline(ConsumerSessionTimerKey(GROUP, "c1")) == (
        h.now + CONFIG.group_consumer_session_timeout_ms)
    h.assert_live_equals_replay()


def test_consumer_group_heartbeat_to_classic_group_from_existing_static_member() -> None:
    h = ConsumerHarness(foo=(FOO, 1))
    joined = classic_join(h, "", ["foo"], {"foo": [0]}, group_instance_id="i1")
    old = joined.member_id
    plan = {old: assignment_blob({"foo": [0]})}
    synced = h.send_sync_group(GROUP, joined.generation_id, old, plan, group_instance_id="i1")
    assert h.reply(synced).error_code == ErrorCode.NONE
    generation = h.group(GROUP).generation_id
    start = len(h.records)
    # The static member rejoins with the consumer protocol, triggering the upgrade.
    answer = h.join("c1", ["foo"], instance_id="i1", rebalance_timeout_ms=5_000,
                    server_assignor="range")
    assert (answer.error_code, answer.member_id, answer.member_epoch, assignment(answer)) == (
        ErrorCode.NONE, "c1", generation + 1, {FOO: [0]})
    records = records_since(h, start)
    assert [(type(r.key), getattr(r.key, "member_id", None), r.value is None)
            for r in records] == [
        # The existing classic group tombstone.
        (GroupMetadataKey, None, True),
        # The new consumer group with the static member.
        (ConsumerGroupMemberMetadataKey, old, False), (ConsumerGroupMetadataKey, None, False),
        (ConsumerGroupTargetAssignmentMemberKey, old, False),
        (ConsumerGroupTargetAssignmentMetadataKey, None, False),
        (ConsumerGroupCurrentMemberAssignmentKey, old, False),
        # The static member is removed: the rejoining member replaces it ...
        (ConsumerGroupCurrentMemberAssignmentKey, old, True),
        (ConsumerGroupTargetAssignmentMemberKey, old, True),
        (ConsumerGroupMemberMetadataKey, old, True),
        # ... as a new static member taking its place.
        (ConsumerGroupMemberMetadataKey, "c1", False),
        (ConsumerGroupTargetAssignmentMemberKey, "c1", False),
        (ConsumerGroupCurrentMemberAssignmentKey, "c1", False),
        # The static member rejoins the new consumer group.
        (ConsumerGroupMemberMetadataKey, "c1", False),
        # The conversion left the subscription metadata out, so it is computed now and the
        # group epoch bumped (kcoord: the hash in the epoch record, KIP-1101); a new target.
        (ConsumerGroupMetadataKey, None, False),
        (ConsumerGroupTargetAssignmentMemberKey, "c1", False),
        (ConsumerGroupTargetAssignmentMetadataKey, None, False),
        # The new static member takes the existing member's assignment at the new epoch.
        (ConsumerGroupCurrentMemberAssignmentKey, "c1", False)]
    foo0 = (TopicPartitions(FOO, (0,)),)
    classic_member, epoch, target, target_epoch, current = records[1:6]
    value = classic_member.value
    assert (value.instance_id, value.subscribed_topic_names, value.rebalance_timeout_ms,
            value.server_assignor) == ("i1", ("foo",), REBALANCE_MS, None)
    assert value.classic_member_metadata.session_timeout_ms == SESSION_MS
    assert (epoch.value.epoch, epoch.value.metadata_hash) == (generation, 0)
    assert target.value.topic_partitions == foo0
    assert target_epoch.value.assignment_epoch == generation
    assert (current.value.member_epoch, current.value.previous_member_epoch,
            current.value.state, current.value.assigned_partitions) == (
        generation, generation, MemberState.STABLE, foo0)
    replacing_member, replacing_target, replacing = records[9:12]
    assert replacing_member.value == value
    assert replacing_target.value.topic_partitions == foo0
    assert (replacing.value.member_epoch, replacing.value.previous_member_epoch,
            replacing.value.state, replacing.value.assigned_partitions) == (
        0, 0, MemberState.STABLE, foo0)
    final_member, bumped, new_target, new_target_epoch, final = records[12:]
    assert final_member.value == dataclasses.replace(
        value, rebalance_timeout_ms=5_000, server_assignor="range", classic_member_metadata=None)
    assert bumped.value.epoch == new_target_epoch.value.assignment_epoch == generation + 1
    assert bumped.value.metadata_hash == h.consumer_group().metadata_hash != 0
    assert new_target.value.topic_partitions == foo0
    assert (final.value.member_epoch, final.value.previous_member_epoch, final.value.state,
            final.value.assigned_partitions) == (generation + 1, 0, MemberState.STABLE, foo0)
    assert h.consumer_group().static_members["i1"] == "c1"
    assert h.deadline(ConsumerSessionTimerKey(GROUP, "c1")) == (
        h.now + CONFIG.group_consumer_session_timeout_ms)
    h.assert_live_equals_replay()


def _stable_mixed_group(h: ConsumerHarness) -> tuple[str, Any]:
    """Static consumer-protocol member c2 (instance i1, foo) and classic member m1 (foo,
    bar), both reconciled: (m1's id, c2's last answer)."""
    answer = h.join("c2", ["foo"], instance_id="i1", server_assignor="range")
    first = classic_join(h, "", ["foo", "bar"])
    mid = first.member_id
    joined = classic_join(h, mid, ["foo", "bar"])
    held: dict[str, list[int]] = decoded(
        h.sync_group_follower(GROUP, joined.generation_id, mid).assignment)
    generation = joined.generation_id
    group = h.consumer_group()
    for _ in range(6):
        member = group.members["c2"].current
        answer = h.consumer_heartbeat("c2", member.member_epoch,
                                      topic_partitions=list(member.assigned_partitions.items()))
        if h.heartbeat(GROUP, mid, generation) == ErrorCode.REBALANCE_IN_PROGRESS:
            joined = classic_join(h, mid, ["foo", "bar"], held)
            generation = joined.generation_id
            held = decoded(h.sync_group_follower(GROUP, generation, mid).assignment)
    assert group.state == "Stable"
    return mid, answer


def test_last_static_consumer_protocol_member_replaced_by_classic_protocol_member() -> None:
    h = ConsumerHarness(dataclasses.replace(CONFIG, group_consumer_migration_policy="downgrade"),
                        foo=(FOO, 6), bar=(BAR, 2))
    m1, _ = _stable_mixed_group(h)
    group = h.consumer_group()
    epoch = group.group_epoch
    old = group.members["c2"]
    old_value, old_target = old.metadata_value(), dict(group.target_of("c2"))
    targets = {m1: dict(group.target_of(m1))}
    assert old_target and targets[m1]
    start = len(h.records)
    # A classic member with the same instance id joins: it replaces c2, the last member
    # using the consumer protocol, so the group is downgraded.
    joined = classic_join(h, "", ["foo"], group_instance_id="i1")
    new = joined.member_id
    targets[new] = old_target
    assert new not in ("", "c2", m1)
    assert (joined.error_code, joined.generation_id, joined.protocol_type,
            joined.protocol_name) == (ErrorCode.NONE, epoch, "consumer", "range")
    records = records_since(h, start)
    assert [(type(r.key), getattr(r.key, "member_id", None), r.value is None)
            for r in records[:8]] == [
        # The existing member 2, using the consumer protocol, is removed ...
        (ConsumerGroupCurrentMemberAssignmentKey, "c2", True),
        (ConsumerGroupTargetAssignmentMemberKey, "c2", True),
        (ConsumerGroupMemberMetadataKey, "c2", True),
        # ... the new member 2 takes its place ...
        (ConsumerGroupMemberMetadataKey, new, False),
        (ConsumerGroupTargetAssignmentMemberKey, new, False),
        (ConsumerGroupCurrentMemberAssignmentKey, new, False),
        # ... and is updated to the member using the classic protocol.
        (ConsumerGroupMemberMetadataKey, new, False),
        (ConsumerGroupCurrentMemberAssignmentKey, new, False)]
    assert records[3].value == old_value
    assert records[4].value.topic_partitions == to_partitions(old_target)
    replacing, classic_member, current = records[5].value, records[6].value, records[7].value
    assert (replacing.member_epoch, replacing.previous_member_epoch, replacing.state,
            replacing.assigned_partitions) == (0, 0, MemberState.STABLE, to_partitions(old_target))
    assert classic_member == dataclasses.replace(
        old_value, rebalance_timeout_ms=REBALANCE_MS, client_id=classic_member.client_id,
        classic_member_metadata=classic_member.classic_member_metadata)
    assert classic_member.classic_member_metadata.session_timeout_ms == SESSION_MS
    assert (current.member_epoch, current.previous_member_epoch, current.state,
            current.assigned_partitions) == (epoch, 0, MemberState.STABLE,
                                             to_partitions(old_target))
    # Then member 1, member 2 and the consumer group are removed (Kafka's subscription
    # metadata tombstone has no kcoord counterpart: the hash is in the epoch record), and
    # the classic group is created.
    tombstones = records[8:16]
    assert [(type(r.key), r.value is None) for r in tombstones] == TWO_MEMBER_GROUP_TOMBSTONES
    for pair in (tombstones[0:2], tombstones[2:4], tombstones[5:7]):
        assert {r.key.member_id for r in pair} == {m1, new}
    (created,) = records[16:]
    assert isinstance(created.key, GroupMetadataKey) and created.value is not None
    metadata = created.value
    assert (metadata.protocol_type, metadata.generation, metadata.protocol) == (
        "consumer", epoch, "range")
    assert metadata.leader in (m1, new)  # either member, as in Kafka's test
    stored = {m.member_id: m for m in metadata.members}
    assert set(stored) == {m1, new}
    assert (stored[new].group_instance_id, stored[new].session_timeout,
            stored[new].rebalance_timeout) == ("i1", SESSION_MS, REBALANCE_MS)
    for member_id, target in targets.items():
        assert decoded(stored[member_id].assignment) == by_name(h, target)
    # The group is a Stable classic group: no rebalance, heartbeats armed, no consumer
    # protocol timers left.
    assert GROUP not in h.coordinator.consumer_groups
    assert h.state(GROUP) == "Stable" and h.group(GROUP).generation_id == epoch
    for member_id in (m1, new):
        assert h.deadline(HeartbeatTimerKey(GROUP, member_id)) is not None
        assert h.deadline(ConsumerSessionTimerKey(GROUP, member_id)) is None
    assert h.deadline(ClassicMemberSyncTimerKey(GROUP, new)) is None
    assert h.deadline(JoinTimerKey(GROUP)) is None
    # The new member syncs and gets member 2's partitions.
    synced = h.sync_group_follower(GROUP, epoch, new, group_instance_id="i1")
    assert synced.error_code == ErrorCode.NONE
    assert decoded(synced.assignment) == by_name(h, old_target)
    h.assert_live_equals_replay()
    before = {m: h.group(GROUP).members[m].assignment for m in (m1, new)}
    h.crash_and_replay()
    assert h.state(GROUP) == "Stable" and h.group(GROUP).generation_id == epoch
    assert {m: h.group(GROUP).members[m].assignment for m in (m1, new)} == before


def to_partitions(target: dict[uuid.UUID, frozenset[int]]) -> tuple[TopicPartitions, ...]:
    return tuple(TopicPartitions(t, tuple(sorted(p))) for t, p in sorted(target.items()))


def by_name(h: ConsumerHarness, target: dict[uuid.UUID, frozenset[int]]) -> dict[str, list[int]]:
    names = {tid: name for name, (tid, _) in h.topics.items()}
    return {names[t]: sorted(p) for t, p in target.items() if p}


def test_classic_member_replacing_last_static_consumer_member_without_downgrade_policy() -> None:
    # kcoord's own: with the downgrade disabled, the classic member joins the consumer group
    # in the replaced member's place.
    h = ConsumerHarness(dataclasses.replace(CONFIG, group_consumer_migration_policy="upgrade"),
                        foo=(FOO, 6), bar=(BAR, 2))
    m1, _ = _stable_mixed_group(h)
    epoch = h.consumer_group().group_epoch
    old_target = dict(h.consumer_group().target_of("c2"))
    joined = classic_join(h, "", ["foo"], group_instance_id="i1")
    assert (joined.error_code, joined.generation_id) == (ErrorCode.NONE, epoch)
    group = h.consumer_group()
    assert set(group.members) == {m1, joined.member_id}
    assert all(m.classic is not None for m in group.members.values())
    assert dict(group.target_of(joined.member_id)) == old_target
    assert not any(isinstance(r.key, GroupMetadataKey) and r.value is not None
                   for r in h.records[-20:])
    assert h.deadline(ConsumerSessionTimerKey(GROUP, joined.member_id)) == h.now + SESSION_MS
    h.assert_live_equals_replay()


def test_failed_downgrade_by_replacement_keeps_the_consumer_group() -> None:
    # kcoord's own: the downgrade's records do not reach the log; the consumer group is
    # rebuilt from the log and the joining member hears the mapped error.
    h = ConsumerHarness(foo=(FOO, 6), bar=(BAR, 2))
    m1, _ = _stable_mixed_group(h)
    h.fail_appends(ErrorCode.NOT_LEADER_OR_FOLLOWER)
    joined = classic_join(h, "", ["foo"], group_instance_id="i1")
    assert joined.error_code == ErrorCode.NOT_COORDINATOR
    assert GROUP not in h.coordinator.groups
    group = h.consumer_group()
    assert set(group.members) == {"c2", m1} and group.static_members["i1"] == "c2"
    assert h.deadline(ConsumerSessionTimerKey(GROUP, "c2")) is not None
    h.assert_live_equals_replay()

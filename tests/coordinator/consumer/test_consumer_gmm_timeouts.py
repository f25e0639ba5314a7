"""GroupMetadataManagerTest's reconciliation, group-size, group-state and timeout cases of
the consumer group heartbeat (Kafka's names in snake_case), on the fake-clock harness.
Kafka prepares each target assignment with a mocked assignor; kcoord runs its real ones, so
where the targets differ from Kafka's the test derives what it checks from the target the
assignor wrote and says so. Records are compared in order without kcoord's RebalanceEvent
records; kcoord has no subscription metadata record (the metadata hash is in the epoch
record, KIP-1101). Every state-changing scenario ends by checking the live group equals its
replay."""

from __future__ import annotations

import dataclasses
import uuid
from typing import Any

from consumer_harness import (
    BAR,
    CONFIG,
    FOO,
    GROUP,
    ConsumerHarness,
    assignment,
    owned,
    records_since,
)

from coordinator.core import ErrorCode
from coordinator.core.consumer import MemberState
from coordinator.core.consumer.group import (
    ASSIGNING,
    CONSUMER_EMPTY,
    CONSUMER_STABLE,
    RECONCILING,
    ConsumerGroup,
    to_topic_partitions,
)
from coordinator.core.timers import ConsumerRebalanceTimerKey, ConsumerSessionTimerKey
from storage.records import (
    ConsumerGroupCurrentMemberAssignmentKey,
    ConsumerGroupCurrentMemberAssignmentValue,
    ConsumerGroupMemberMetadataKey,
    ConsumerGroupMemberMetadataValue,
    ConsumerGroupMetadataKey,
    ConsumerGroupMetadataValue,
    ConsumerGroupTargetAssignmentMemberKey,
    ConsumerGroupTargetAssignmentMemberValue,
    ConsumerGroupTargetAssignmentMetadataKey,
    ConsumerGroupTargetAssignmentMetadataValue,
    Record,
)

SESSION_MS = CONFIG.group_consumer_session_timeout_ms
MEMBER_TOMBSTONES = [ConsumerGroupCurrentMemberAssignmentKey,
                     ConsumerGroupTargetAssignmentMemberKey,
                     ConsumerGroupMemberMetadataKey]


def sorted_partitions(parts: Any) -> dict[uuid.UUID, list[int]]:
    """topic id -> sorted partitions, from a record's TopicPartitions tuple."""
    return {tp.topic_id: sorted(tp.partitions) for tp in parts}


def current_record(h: ConsumerHarness, start: int, member_id: str) -> Any:
    """The one record a heartbeat wrote: the member's current assignment."""
    (record,) = records_since(h, start)
    assert record.key == ConsumerGroupCurrentMemberAssignmentKey(GROUP, member_id)
    return record.value


def test_reconciliation_process() -> None:
    """Kafka's three-member walk through the reconciliation states. kcoord's uniform
    assignor gives m3 partitions held by both m1 and m2 (Kafka's mock does too, with other
    partitions), so m3 gets m1's part before m2 revokes: the same sequence of states."""
    h = ConsumerHarness()
    a1 = h.join("m1", ["foo", "bar"], rebalance_timeout_ms=5000)
    h.join("m2", ["foo", "bar"], rebalance_timeout_ms=5000)
    a1 = h.consumer_heartbeat("m1", 1, topic_partitions=owned(a1))
    h.consumer_heartbeat("m1", a1.member_epoch, topic_partitions=owned(a1))
    h.consumer_heartbeat("m2", 2, topic_partitions=[])
    group = h.consumer_group()
    epoch = group.group_epoch
    assert group.state == CONSUMER_STABLE
    assert {m.member_id: m.current.state for m in group.members.values()} == {
        "m1": MemberState.STABLE, "m2": MemberState.STABLE}
    assert {mid: m.current.assigned_partitions for mid, m in group.members.items()} == {
        "m1": {BAR: frozenset({0, 1, 2}), FOO: frozenset({0, 1})},
        "m2": {FOO: frozenset({2, 3, 4, 5})}}

    def state(member_id: str) -> MemberState:
        return group.members[member_id].current.state

    # m3 joins: a new target; it gets nothing yet (all owned) but moves to the new epoch in
    # Unreleased Partitions.
    start = len(h.records)
    c = h.join("m3", ["foo", "bar"], rebalance_timeout_ms=5000)
    assert (c.error_code, c.member_epoch, assignment(c)) == (0, epoch + 1, {})
    last = records_since(h, start)[-1]
    assert last.key == ConsumerGroupCurrentMemberAssignmentKey(GROUP, "m3")
    assert (last.value.state, last.value.member_epoch, last.value.previous_member_epoch,
            last.value.assigned_partitions) == (int(MemberState.UNRELEASED_PARTITIONS),
                                                epoch + 1, 0, ())
    assert {mid: dict(t) for mid, t in group.target.items()} == {
        "m1": {BAR: frozenset({0, 1, 2})},
        "m2": {FOO: frozenset({2, 3, 4})},
        "m3": {FOO: frozenset({0, 1, 5})}}
    assert (state("m3"), group.state) == (MemberState.UNRELEASED_PARTITIONS, RECONCILING)

    # m1 heartbeats: it stays at its epoch, revoking foo 0-1; the answer leaves them out.
    start = len(h.records)
    a = h.consumer_heartbeat("m1", epoch)
    assert (a.member_epoch, assignment(a)) == (epoch, {BAR: [0, 1, 2]})
    value = current_record(h, start, "m1")
    assert (value.state, value.member_epoch, value.previous_member_epoch) == (
        int(MemberState.UNREVOKED_PARTITIONS), epoch, epoch)
    assert sorted_partitions(value.assigned_partitions) == {BAR: [0, 1, 2]}
    assert sorted_partitions(value.partitions_pending_revocation) == {FOO: [0, 1]}
    assert (state("m1"), group.state) == (MemberState.UNREVOKED_PARTITIONS, RECONCILING)

    # m2 heartbeats: the same, revoking foo 5.
    start = len(h.records)
    b = h.consumer_heartbeat("m2", epoch)
    assert (b.member_epoch, assignment(b)) == (epoch, {FOO: [2, 3, 4]})
    value = current_record(h, start, "m2")
    assert (value.state, value.member_epoch, value.previous_member_epoch) == (
        int(MemberState.UNREVOKED_PARTITIONS), epoch, epoch)
    assert sorted_partitions(value.partitions_pending_revocation) == {FOO: [5]}
    assert (state("m2"), group.state) == (MemberState.UNREVOKED_PARTITIONS, RECONCILING)

    # m3 heartbeats: still nothing, everything is waiting on revocations.
    start = len(h.records)
    c = h.consumer_heartbeat("m3", epoch + 1)
    assert (c.member_epoch, assignment(c)) == (epoch + 1, None)
    value = current_record(h, start, "m3")
    assert (value.state, value.member_epoch, value.previous_member_epoch) == (
        int(MemberState.UNRELEASED_PARTITIONS), epoch + 1, epoch + 1)
    assert group.state == RECONCILING

    # m1 acknowledges by sending what it still owns: Stable at the new epoch.
    start = len(h.records)
    a = h.consumer_heartbeat("m1", epoch, topic_partitions=[(BAR, [0, 1, 2])])
    assert (a.member_epoch, assignment(a)) == (epoch + 1, None)
    value = current_record(h, start, "m1")
    assert (value.state, value.member_epoch, value.previous_member_epoch) == (
        int(MemberState.STABLE), epoch + 1, epoch)
    assert sorted_partitions(value.assigned_partitions) == {BAR: [0, 1, 2]}
    assert (state("m1"), group.state) == (MemberState.STABLE, RECONCILING)

    # m2 heartbeats without acknowledging: a no-op.
    start = len(h.records)
    b = h.consumer_heartbeat("m2", epoch)
    assert b.member_epoch == epoch and records_since(h, start) == []
    assert (state("m2"), group.state) == (MemberState.UNREVOKED_PARTITIONS, RECONCILING)

    # m3 heartbeats: it gets what m1 released, still waiting on m2's foo 5.
    start = len(h.records)
    c = h.consumer_heartbeat("m3", epoch + 1)
    assert assignment(c) == {FOO: [0, 1]}
    value = current_record(h, start, "m3")
    assert (value.state, value.member_epoch, value.previous_member_epoch) == (
        int(MemberState.UNRELEASED_PARTITIONS), epoch + 1, epoch + 1)
    assert sorted_partitions(value.assigned_partitions) == {FOO: [0, 1]}
    assert group.state == RECONCILING

    # m3 again: m2 has not revoked yet, nothing changes.
    start = len(h.records)
    c = h.consumer_heartbeat("m3", epoch + 1)
    assert records_since(h, start) == []
    assert (state("m3"), group.state) == (MemberState.UNRELEASED_PARTITIONS, RECONCILING)

    # m2 acknowledges: Stable at the new epoch.
    start = len(h.records)
    b = h.consumer_heartbeat("m2", epoch, topic_partitions=[(FOO, [2, 3, 4])])
    assert b.member_epoch == epoch + 1
    value = current_record(h, start, "m2")
    assert (value.state, value.member_epoch, value.previous_member_epoch) == (
        int(MemberState.STABLE), epoch + 1, epoch)
    assert sorted_partitions(value.assigned_partitions) == {FOO: [2, 3, 4]}
    assert (state("m2"), group.state) == (MemberState.STABLE, RECONCILING)

    # m3 acknowledges what it has and gets the rest: Stable, and so is the group.
    start = len(h.records)
    c = h.consumer_heartbeat("m3", epoch + 1, topic_partitions=[(FOO, [0, 1])])
    assert assignment(c) == {FOO: [0, 1, 5]}
    value = current_record(h, start, "m3")
    assert (value.state, value.member_epoch, value.previous_member_epoch) == (
        int(MemberState.STABLE), epoch + 1, epoch + 1)
    assert (state("m3"), group.state) == (MemberState.STABLE, CONSUMER_STABLE)
    h.assert_live_equals_replay()


def test_new_member_is_rejected_with_maximum_members_is_reached() -> None:
    h = ConsumerHarness(config=dataclasses.replace(CONFIG, group_consumer_max_size=2))
    h.join("m1", ["foo", "bar"], rebalance_timeout_ms=5000)
    h.join("m2", ["foo", "bar"], rebalance_timeout_ms=5000)
    start = len(h.records)
    answer = h.join("m3", ["foo", "bar"], rebalance_timeout_ms=5000)
    assert answer.error_code == ErrorCode.GROUP_MAX_SIZE_REACHED
    assert answer.error_message == (
        "The consumer group has reached its maximum capacity of 2 members.")
    assert h.records[start:] == []
    assert set(h.consumer_group().members) == {"m1", "m2"}
    h.assert_live_equals_replay()


def test_consumer_group_states() -> None:
    """Kafka replays records into its GroupMetadataManager; kcoord's groups change only by
    replaying records too (the same ConsumerGroup.replay the live path and the log load
    use). Kafka's fixture is an empty group at epoch 10."""
    group = ConsumerGroup(GROUP)

    def replay(key: Any, value: Any) -> None:
        group.replay(Record(key, value))

    def current(state: MemberState) -> ConsumerGroupCurrentMemberAssignmentValue:
        return ConsumerGroupCurrentMemberAssignmentValue(
            member_epoch=11, previous_member_epoch=10, state=int(state),
            assigned_partitions=to_topic_partitions({FOO: frozenset({1, 2, 3})}),
            partitions_pending_revocation=())

    replay(ConsumerGroupMetadataKey(GROUP), ConsumerGroupMetadataValue(10))
    assert group.state == CONSUMER_EMPTY
    replay(ConsumerGroupMemberMetadataKey(GROUP, "m1"), ConsumerGroupMemberMetadataValue(
        instance_id=None, rack_id=None, client_id="", client_host="",
        subscribed_topic_names=("foo",), subscribed_topic_regex=None,
        rebalance_timeout_ms=-1, server_assignor=None))
    replay(ConsumerGroupMetadataKey(GROUP), ConsumerGroupMetadataValue(11))
    assert group.state == ASSIGNING
    replay(ConsumerGroupTargetAssignmentMemberKey(GROUP, "m1"),
           ConsumerGroupTargetAssignmentMemberValue(
               to_topic_partitions({FOO: frozenset({1, 2, 3})})))
    replay(ConsumerGroupTargetAssignmentMetadataKey(GROUP),
           ConsumerGroupTargetAssignmentMetadataValue(11))
    assert group.state == RECONCILING
    replay(ConsumerGroupCurrentMemberAssignmentKey(GROUP, "m1"),
           current(MemberState.UNREVOKED_PARTITIONS))
    assert group.state == RECONCILING
    replay(ConsumerGroupCurrentMemberAssignmentKey(GROUP, "m1"), current(MemberState.STABLE))
    assert group.state == CONSUMER_STABLE


def session_timeout_expiration(static: bool) -> None:
    """Without a heartbeat for the session timeout the member is fenced: its three records
    are tombstoned and the group epoch bumped (Kafka also writes an empty subscription
    metadata record; kcoord's epoch record carries the empty hash). Run for a dynamic and,
    as Kafka's ...StaticMember variant, a static member."""
    h = ConsumerHarness()
    instance_id = "m" if static else None
    answer = h.join("m", ["foo"], rebalance_timeout_ms=90_000, instance_id=instance_id)
    assert answer.member_epoch == 1
    assert h.deadline(ConsumerSessionTimerKey(GROUP, "m")) == SESSION_MS
    if static:
        # A temporary leave keeps the session timer running.
        assert h.consumer_heartbeat("m", -2, instance_id="m").member_epoch == -2
        assert h.deadline(ConsumerSessionTimerKey(GROUP, "m")) == SESSION_MS
    start = len(h.records)
    h.sleep(SESSION_MS + 1)
    records = records_since(h, start)
    assert [(type(r.key), getattr(r.key, "member_id", None), r.value is None)
            for r in records] == [(key, "m", True) for key in MEMBER_TOMBSTONES] + [
        (ConsumerGroupMetadataKey, None, False)]
    assert records[-1].value.epoch == 2
    assert records[-1].value.metadata_hash == 0
    assert h.deadline(ConsumerSessionTimerKey(GROUP, "m")) is None
    assert h.deadline(ConsumerRebalanceTimerKey(GROUP, "m", 1)) is None
    group = h.consumer_group()
    assert group.members == {} and group.static_members == {}
    h.assert_live_equals_replay()


def test_session_timeout_expiration() -> None:
    session_timeout_expiration(static=False)


def test_session_timeout_expiration_static_member() -> None:
    session_timeout_expiration(static=True)


def test_rebalance_timeout_expiration() -> None:
    h = ConsumerHarness(foo=(FOO, 3))
    a1 = h.join("m1", ["foo"], rebalance_timeout_ms=10_000)  # shorter than the session
    assert (a1.member_epoch, assignment(a1)) == (1, {FOO: [0, 1, 2]})
    h.sleep(a1.heartbeat_interval_ms)
    b1 = h.join("m2", ["foo"], rebalance_timeout_ms=10_000)
    assert (b1.member_epoch, assignment(b1)) == (2, {})
    h.sleep(b1.heartbeat_interval_ms)
    # m1 heartbeats and starts revoking: the rebalance timer is armed.
    a2 = h.consumer_heartbeat("m1", 1)
    assert a2.member_epoch == 1
    kept = assignment(a2)
    target = h.consumer_group().target
    assert kept == {FOO: sorted(target["m1"][FOO])} and len(kept[FOO]) == 2
    assert h.deadline(ConsumerRebalanceTimerKey(GROUP, "m1", 1)) == h.now + 10_000
    start = len(h.records)
    h.sleep(10_000 + 1)
    records = records_since(h, start)
    assert [(type(r.key), getattr(r.key, "member_id", None), r.value is None)
            for r in records] == [(key, "m1", True) for key in MEMBER_TOMBSTONES] + [
        (ConsumerGroupMetadataKey, None, False)]
    assert records[3].value.epoch == 3
    assert h.deadline(ConsumerSessionTimerKey(GROUP, "m1")) is None
    assert h.deadline(ConsumerRebalanceTimerKey(GROUP, "m1", 1)) is None
    assert set(h.consumer_group().members) == {"m2"}
    h.assert_live_equals_replay()

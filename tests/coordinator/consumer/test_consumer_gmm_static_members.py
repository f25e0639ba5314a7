"""GroupMetadataManagerTest's static-member and request-validation cases of the consumer
group heartbeat (Kafka's names in snake_case), on the fake-clock harness. Kafka builds its
groups with a mocked assignor; kcoord's groups are built by real joins with the ``range``
assignor, which gives the same assignments as Kafka's prepared ones where the test says so.
Kafka's records are compared in order, leaving out kcoord's own RebalanceEvent records;
kcoord has no subscription metadata record (the metadata hash is in the epoch record,
KIP-1101). Every state-changing scenario ends by checking the live group equals its
replay."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from consumer_harness import (
    BAR,
    FOO,
    GROUP,
    ConsumerHarness,
    assignment,
    owned,
    records_since,
)

from coordinator.core import ErrorCode
from coordinator.core.consumer import MemberState
from coordinator.core.timers import ConsumerSessionTimerKey
from storage.records import (
    ConsumerGroupCurrentMemberAssignmentKey,
    ConsumerGroupMemberMetadataKey,
    ConsumerGroupMetadataKey,
    ConsumerGroupTargetAssignmentMemberKey,
    ConsumerGroupTargetAssignmentMetadataKey,
    TopicPartitions,
)

ZAR = uuid.UUID(int=0x2A4)


@pytest.fixture
def h() -> ConsumerHarness:
    return ConsumerHarness()


def shape(records: list[Any]) -> list[tuple[type, str | None, bool]]:
    """(key type, member id, is tombstone) of each record."""
    return [(type(r.key), getattr(r.key, "member_id", None), r.value is None)
            for r in records]


def partitions(value: Any) -> dict[uuid.UUID, list[int]]:
    """A target or current assignment record's partitions, topic id -> sorted partitions."""
    tps: tuple[TopicPartitions, ...] = (
        value.topic_partitions if hasattr(value, "topic_partitions")
        else value.assigned_partitions)
    return {tp.topic_id: sorted(tp.partitions) for tp in tps}


def two_static_members(h: ConsumerHarness, topics2: list[str] | None = None) -> tuple[Any, Any]:
    """Kafka's fixture: two static members (instance id = member id) with the range assignor
    subscribed to foo and bar, m1 owning foo 0-2 and bar 0-1, m2 foo 3-5 and bar 2, the
    group Stable. ``topics2`` is m2's subscription if not foo and bar."""
    first = h.join("m1", ["foo", "bar"], instance_id="m1", server_assignor="range")
    second = h.join("m2", topics2 or ["foo", "bar"], instance_id="m2", server_assignor="range")
    first = h.consumer_heartbeat("m1", 1, topic_partitions=owned(first))
    first = h.consumer_heartbeat("m1", first.member_epoch, topic_partitions=owned(first))
    second = h.consumer_heartbeat("m2", 2, topic_partitions=[])
    group = h.consumer_group()
    assert group.state == "Stable"
    assert group.members["m1"].current.assigned_partitions == {
        FOO: frozenset({0, 1, 2}), BAR: frozenset({0, 1})}
    m2_partitions = {FOO: frozenset({3, 4, 5}), BAR: frozenset({2})}
    if topics2 is not None:  # zar (one partition) goes to m2, its only subscriber
        m2_partitions[ZAR] = frozenset({0})
    assert group.members["m2"].current.assigned_partitions == m2_partitions
    return first, second


def test_consumer_heartbeat_regex_validation(h: ConsumerHarness) -> None:
    """Kafka's October 2024 trunk refused every SubscribedTopicRegex ("SubscribedTopicRegex
    is not supported yet.", INVALID_REQUEST); Kafka 4.0 (KIP-848 regex) and kcoord accept a
    valid regular expression and refuse an invalid one with INVALID_REGULAR_EXPRESSION,
    writing nothing."""
    bad = h.consumer_heartbeat("m1", 0, rebalance_timeout_ms=5000, topic_partitions=[],
                               subscribed_topic_regex="[foo", server_assignor="range")
    assert bad.error_code == ErrorCode.INVALID_REGULAR_EXPRESSION
    assert bad.error_message
    assert not h.records
    good = h.consumer_heartbeat("m1", 0, rebalance_timeout_ms=5000, topic_partitions=[],
                                subscribed_topic_regex="t*", server_assignor="range")
    assert (good.error_code, good.member_epoch) == (ErrorCode.NONE, 1)
    assert assignment(good) == {}  # "t*" matches no topic as a whole name
    h.assert_live_equals_replay()


def test_group_epoch_bump_when_new_static_member_joins(h: ConsumerHarness) -> None:
    two_static_members(h)
    epoch = h.consumer_group().group_epoch
    start = len(h.records)
    answer = h.join("m3", ["foo", "bar"], instance_id="m3", server_assignor="range",
                    rebalance_timeout_ms=5000)
    assert (answer.error_code, answer.member_id, answer.member_epoch) == (0, "m3", epoch + 1)
    assert answer.heartbeat_interval_ms == 5000
    assert assignment(answer) == {}  # everything m3 is given is still owned
    records = records_since(h, start)
    assert shape(records) == [
        (ConsumerGroupMemberMetadataKey, "m3", False),
        (ConsumerGroupMetadataKey, None, False),
        (ConsumerGroupTargetAssignmentMemberKey, "m1", False),
        (ConsumerGroupTargetAssignmentMemberKey, "m2", False),
        (ConsumerGroupTargetAssignmentMemberKey, "m3", False),
        (ConsumerGroupTargetAssignmentMetadataKey, None, False),
        (ConsumerGroupCurrentMemberAssignmentKey, "m3", False)]
    subscription, group_epoch, t1, t2, t3, target_epoch, current = records
    assert subscription.value.instance_id == "m3"
    assert subscription.value.server_assignor == "range"
    assert group_epoch.value.epoch == target_epoch.value.assignment_epoch == epoch + 1
    # Kafka's prepared assignment is the range assignor's.
    assert partitions(t1.value) == {FOO: [0, 1], BAR: [0]}
    assert partitions(t2.value) == {FOO: [2, 3], BAR: [1]}
    assert partitions(t3.value) == {FOO: [4, 5], BAR: [2]}
    assert (current.value.member_epoch, current.value.previous_member_epoch) == (epoch + 1, 0)
    assert current.value.state == MemberState.UNRELEASED_PARTITIONS.value
    assert current.value.assigned_partitions == ()
    assert h.consumer_group().static_members["m3"] == "m3"
    h.assert_live_equals_replay()


def test_static_member_rejoins_with_new_subscribed_topics() -> None:
    h = ConsumerHarness()
    a1 = h.join("m1", ["foo"], instance_id="instance-id-1", server_assignor="range",
                rebalance_timeout_ms=5000)
    h.join("m2", ["foo"], instance_id="instance-id-2", server_assignor="range",
           rebalance_timeout_ms=5000)
    a1 = h.consumer_heartbeat("m1", 1, topic_partitions=owned(a1))
    h.consumer_heartbeat("m1", a1.member_epoch, topic_partitions=owned(a1))
    h.consumer_heartbeat("m2", 2, topic_partitions=[])
    group = h.consumer_group()
    assert group.members["m2"].current.assigned_partitions == {FOO: frozenset({3, 4, 5})}
    epoch = group.group_epoch
    # Member 2 leaves temporarily: one record, its epoch set to -2.
    start = len(h.records)
    left = h.consumer_heartbeat("m2", -2, instance_id="instance-id-2")
    assert (left.error_code, left.member_id, left.member_epoch) == (0, "m2", -2)
    (record,) = records_since(h, start)
    assert shape([record]) == [(ConsumerGroupCurrentMemberAssignmentKey, "m2", False)]
    assert record.value.member_epoch == -2
    assert partitions(record.value) == {FOO: [3, 4, 5]}
    # A second later it rejoins under a new member id, subscribing to bar too.
    h.sleep(1_000)
    start = len(h.records)
    rejoined = h.join("m2-rejoin", ["foo", "bar"], instance_id="instance-id-2",
                      server_assignor="range", rebalance_timeout_ms=5000)
    assert (rejoined.error_code, rejoined.member_id, rejoined.member_epoch) == (
        0, "m2-rejoin", epoch + 1)
    # range: bar (3 partitions) all to the only member subscribing to it.
    assert assignment(rejoined) == {FOO: [3, 4, 5], BAR: [0, 1, 2]}
    records = records_since(h, start)
    assert shape(records) == [
        # The previous member is deleted...
        (ConsumerGroupCurrentMemberAssignmentKey, "m2", True),
        (ConsumerGroupTargetAssignmentMemberKey, "m2", True),
        (ConsumerGroupMemberMetadataKey, "m2", True),
        # ...and created again as a copy under its new id...
        (ConsumerGroupMemberMetadataKey, "m2-rejoin", False),
        (ConsumerGroupTargetAssignmentMemberKey, "m2-rejoin", False),
        (ConsumerGroupCurrentMemberAssignmentKey, "m2-rejoin", False),
        # ...then its new subscription triggers a rebalance.
        (ConsumerGroupMemberMetadataKey, "m2-rejoin", False),
        (ConsumerGroupMetadataKey, None, False),
        (ConsumerGroupTargetAssignmentMemberKey, "m2-rejoin", False),
        (ConsumerGroupTargetAssignmentMetadataKey, None, False),
        (ConsumerGroupCurrentMemberAssignmentKey, "m2-rejoin", False)]
    copied, copied_target, copied_current = (r.value for r in records[3:6])
    assert copied.subscribed_topic_names == ("foo",)
    assert partitions(copied_target) == {FOO: [3, 4, 5]}
    assert (copied_current.member_epoch, copied_current.previous_member_epoch) == (0, 0)
    assert partitions(copied_current) == {FOO: [3, 4, 5]}
    subscription, group_epoch, target, target_epoch, current = (r.value for r in records[6:])
    assert subscription.subscribed_topic_names == ("bar", "foo")
    assert group_epoch.epoch == target_epoch.assignment_epoch == epoch + 1
    assert partitions(target) == {FOO: [3, 4, 5], BAR: [0, 1, 2]}
    assert (current.member_epoch, current.previous_member_epoch) == (epoch + 1, 0)
    assert current.state == MemberState.STABLE.value
    # Kafka checks the old member id has no timers: its test group was built without any.
    # Like Kafka's replaceMember, kcoord leaves the old member's session timer in place (in
    # case the change is reverted); when it fires it finds no such member and does nothing.
    assert h.deadline(ConsumerSessionTimerKey(GROUP, "m2")) == 45_000
    assert h.deadline(ConsumerSessionTimerKey(GROUP, "m2-rejoin")) == 46_000
    m1_epoch = h.consumer_group().members["m1"].current.member_epoch
    assert h.consumer_heartbeat("m1", m1_epoch).error_code == ErrorCode.NONE  # m1 stays
    start = len(h.records)
    h.sleep(44_500)
    assert h.deadline(ConsumerSessionTimerKey(GROUP, "m2")) is None
    assert records_since(h, start) == []
    assert set(h.consumer_group().members) == {"m1", "m2-rejoin"}
    h.assert_live_equals_replay()


def test_leaving_static_member_bumps_group_epoch() -> None:
    h = ConsumerHarness(foo=(FOO, 6), bar=(BAR, 3), zar=(ZAR, 1))
    two_static_members(h, topics2=["foo", "bar", "zar"])
    group = h.consumer_group()
    epoch = group.group_epoch
    start = len(h.records)
    # A static member leaving for good (epoch -1) is removed like a dynamic one.
    answer = h.consumer_heartbeat("m2", -1, instance_id="m2", rebalance_timeout_ms=5000,
                                  subscribed_topic_names=["foo", "bar"], topic_partitions=[])
    assert (answer.error_code, answer.member_id, answer.member_epoch) == (0, "m2", -1)
    records = records_since(h, start)
    assert shape(records) == [
        (ConsumerGroupCurrentMemberAssignmentKey, "m2", True),
        (ConsumerGroupTargetAssignmentMemberKey, "m2", True),
        (ConsumerGroupMemberMetadataKey, "m2", True),
        (ConsumerGroupMetadataKey, None, False)]
    # The metadata is recomputed because zar is no longer subscribed: Kafka writes a
    # subscription metadata record; kcoord's epoch record carries the new hash.
    only_foo_bar = ConsumerHarness(foo=(FOO, 6), bar=(BAR, 3), zar=(ZAR, 1))
    only_foo_bar.join("x", ["foo", "bar"])
    assert records[3].value.epoch == epoch + 1
    assert records[3].value.metadata_hash == only_foo_bar.consumer_group().metadata_hash
    assert "m2" not in group.static_members
    h.assert_live_equals_replay()


def test_should_thrown_unreleased_instance_id_exception_when_new_member_joins_with_in_use_instance_id(  # noqa: E501
    h: ConsumerHarness,
) -> None:
    """Kafka's October 2024 name ("Thrown"); test_consumer_group_heartbeat.py mirrors the
    earlier spelling with a dynamic-epoch setup. Here, as Kafka: a Stable static member at
    epoch 10 is not released, a new member id with its instance id is refused."""
    two_static_members(h)
    start = len(h.records)
    answer = h.join("other", ["foo", "bar"], instance_id="m1", server_assignor="range",
                    rebalance_timeout_ms=5000)
    assert answer.error_code == ErrorCode.UNRELEASED_INSTANCE_ID
    assert h.records[start:] == []
    assert h.consumer_group().static_members["m1"] == "m1"


def test_should_thrown_unknown_member_id_exception_when_unknown_static_member_joins(
    h: ConsumerHarness,
) -> None:
    two_static_members(h)
    start = len(h.records)
    # An unknown instance id with a non-zero epoch.
    answer = h.consumer_heartbeat("m9", 10, instance_id="m9", rebalance_timeout_ms=5000,
                                  server_assignor="range",
                                  subscribed_topic_names=["foo", "bar"], topic_partitions=[])
    assert answer.error_code == ErrorCode.UNKNOWN_MEMBER_ID
    assert h.records[start:] == []


def test_should_throw_fenced_instance_id_exception_when_static_member_with_different_member_id_joins(  # noqa: E501
    h: ConsumerHarness,
) -> None:
    two_static_members(h)
    start = len(h.records)
    answer = h.consumer_heartbeat("unknown-m1", 11, instance_id="m1",
                                  rebalance_timeout_ms=5000,
                                  subscribed_topic_names=["foo", "bar"], topic_partitions=[])
    assert answer.error_code == ErrorCode.FENCED_INSTANCE_ID
    assert h.records[start:] == []


def test_consumer_group_member_epoch_validation_for_static_member(h: ConsumerHarness) -> None:
    """Kafka replays a member at epoch 100 (previous 99); kcoord reaches epoch 3 (previous
    2) by two topic changes and checks the same four cases relative to it."""
    first = h.join("m", ["foo", "bar"], instance_id="m", server_assignor="range")
    h.set_topics(foo=(FOO, 6), bar=(BAR, 4))
    second = h.consumer_heartbeat("m", 1, topic_partitions=owned(first))
    h.set_topics(foo=(FOO, 6), bar=(BAR, 5))
    third = h.consumer_heartbeat("m", 2, topic_partitions=owned(second))
    member = h.consumer_group().members["m"]
    assert (member.current.member_epoch, member.current.previous_member_epoch) == (3, 2)
    assert third.member_epoch == 3
    start = len(h.records)

    def beat(epoch: int, owned_now: list[tuple[uuid.UUID, list[int]]] | None) -> Any:
        return h.consumer_heartbeat("m", epoch, instance_id="m", rebalance_timeout_ms=5000,
                                    subscribed_topic_names=["foo", "bar"],
                                    topic_partitions=owned_now)

    fenced = ErrorCode.FENCED_MEMBER_EPOCH
    assert beat(200, None).error_code == fenced  # greater than expected
    assert beat(1, None).error_code == fenced  # smaller than expected
    assert beat(2, None).error_code == fenced  # previous epoch without partitions
    assert h.records[start:] == []
    # The previous epoch with a subset of the owned partitions: the answer with the bumped
    # epoch may have been lost, so the member gets the right epoch back.
    retried = beat(2, [(FOO, [1, 2])])
    assert (retried.error_code, retried.member_epoch) == (ErrorCode.NONE, 3)
    h.assert_live_equals_replay()


def test_should_throw_unknown_member_id_exception_when_unknown_static_member_leaves(
    h: ConsumerHarness,
) -> None:
    two_static_members(h)
    start = len(h.records)
    answer = h.consumer_heartbeat("m1", -2, instance_id="unknown-m1",
                                  rebalance_timeout_ms=5000,
                                  subscribed_topic_names=["foo", "bar"], topic_partitions=[])
    assert answer.error_code == ErrorCode.UNKNOWN_MEMBER_ID
    assert h.records[start:] == []
    assert h.consumer_group().members["m1"].current.member_epoch > 0


def test_should_throw_fenced_instance_id_exception_when_static_member_with_different_member_id_leaves(  # noqa: E501
    h: ConsumerHarness,
) -> None:
    two_static_members(h)
    start = len(h.records)
    answer = h.consumer_heartbeat("unknown-m1", -2, instance_id="m1",
                                  rebalance_timeout_ms=5000,
                                  subscribed_topic_names=["foo", "bar"], topic_partitions=[])
    assert answer.error_code == ErrorCode.FENCED_INSTANCE_ID
    assert answer.error_message == (
        "Static member unknown-m1 with instance id m1 was fenced by member m1.")
    assert h.records[start:] == []
    assert h.consumer_group().static_members["m1"] == "m1"


def test_static_member_temporary_leave_releases_partitions_pending_revocation(
    h: ConsumerHarness,
) -> None:
    """kcoord's own, from Kafka's consumerGroupStaticMemberGroupLeave: the -2 record keeps
    the member's state, previous epoch and assigned partitions, but drops the partitions it
    was revoking, so the member they go to gets them without waiting for the departed one."""
    first = h.join("m1", ["foo"], instance_id="i1")
    h.join("m2", ["foo"])
    revoking = h.consumer_heartbeat("m1", 1, topic_partitions=owned(first))
    current = h.consumer_group().members["m1"].current
    assert current.state is MemberState.UNREVOKED_PARTITIONS
    assert (current.member_epoch, current.previous_member_epoch) == (1, 1)
    pending = current.partitions_pending_revocation
    assert assignment(revoking) == {FOO: sorted(current.assigned_partitions[FOO])}
    start = len(h.records)
    assert h.consumer_heartbeat("m1", -2, instance_id="i1").member_epoch == -2
    (record,) = records_since(h, start)
    assert record.key == ConsumerGroupCurrentMemberAssignmentKey(GROUP, "m1")
    assert (record.value.state, record.value.member_epoch,
            record.value.previous_member_epoch) == (int(MemberState.UNREVOKED_PARTITIONS), -2, 1)
    assert partitions(record.value) == {FOO: sorted(current.assigned_partitions[FOO])}
    assert record.value.partitions_pending_revocation == ()
    got = h.consumer_heartbeat("m2", 2, topic_partitions=[])
    assert assignment(got) == {FOO: sorted(pending[FOO])}
    h.assert_live_equals_replay()

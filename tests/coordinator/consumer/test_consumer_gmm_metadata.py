"""GroupMetadataManagerTest (Kafka trunk 2024-10-25, commit 1eb76443): a consumer group
noticing that the metadata of the topics it subscribes to changed -- after loading, after a
failed write, when a new metadata image arrives -- and which groups subscribe to a topic.
Kafka's names in snake_case.

Kafka keeps a per-topic subscription metadata map (ConsumerGroupPartitionMetadata record)
and a refresh deadline per group, set off by ``onNewMetadataImage`` for the groups its
``groupsSubscribedToTopic`` index names. kcoord, as Kafka 4.1 (KIP-1101), keeps the hash of
the subscribed topics' metadata in the group epoch record and compares it with the current
topics image on the group's next heartbeat (cached per image): there is no deadline and no
index. So these mirrors check the outcome Kafka's deadline leads to -- the group epoch is
bumped and a new target assignment computed exactly when a subscribed topic changed -- and
derive "groups subscribed to a topic" from the groups' subscriptions."""

from __future__ import annotations

import uuid

from consumer_harness import ConsumerHarness, assignment
from test_consumer_gmm_describe import group_records_written, loaded, subscription_record

from coordinator.core import ErrorCode
from coordinator.core.consumer import MemberState
from coordinator.core.consumer.group import to_topic_partitions
from coordinator.core.topics_image import TopicsImage
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

GROUP = "fooup"
MEMBER = "member-id"
FOO = uuid.UUID(int=0xF00)


def group_with_stale_metadata() -> ConsumerHarness:
    """Kafka's group of one Stable member at epoch 10 owning foo 0-2, whose stored metadata
    says foo has 3 partitions while the image has 6 (kcoord: the stored hash is that of a
    3-partition foo)."""
    h = ConsumerHarness(foo=(FOO, 6))
    stale_hash = TopicsImage((("foo", FOO, 3),), version=1).metadata_hash(frozenset({FOO}))
    owned = to_topic_partitions({FOO: frozenset({0, 1, 2})})
    return loaded(
        h,
        Record(ConsumerGroupMemberMetadataKey(GROUP, MEMBER), ConsumerGroupMemberMetadataValue(
            instance_id=None, rack_id=None, client_id="client", client_host="localhost",
            subscribed_topic_names=("bar", "foo"), subscribed_topic_regex=None,
            rebalance_timeout_ms=5000, server_assignor="range")),
        Record(ConsumerGroupCurrentMemberAssignmentKey(GROUP, MEMBER),
               ConsumerGroupCurrentMemberAssignmentValue(10, 10, int(MemberState.STABLE),
                                                         owned, ())),
        Record(ConsumerGroupMetadataKey(GROUP), ConsumerGroupMetadataValue(10, stale_hash)),
        Record(ConsumerGroupTargetAssignmentMemberKey(GROUP, MEMBER),
               ConsumerGroupTargetAssignmentMemberValue(owned)),
        Record(ConsumerGroupTargetAssignmentMetadataKey(GROUP),
               ConsumerGroupTargetAssignmentMetadataValue(10)),
    )


def assert_refreshed(h: ConsumerHarness, start: int) -> None:
    """The heartbeat at epoch 10 refreshed the metadata: epoch 11, all six partitions, and
    Kafka's records (without its partition-metadata record; the new hash is in the epoch
    record)."""
    answer = h.consumer_heartbeat(MEMBER, 10)
    assert (answer.error_code, answer.member_id, answer.member_epoch,
            answer.heartbeat_interval_ms) == (ErrorCode.NONE, MEMBER, 11, 5000)
    assert assignment(answer) == {FOO: [0, 1, 2, 3, 4, 5]}
    fresh_hash = h.coordinator.topics_image.metadata_hash(frozenset({FOO}))
    all_foo = to_topic_partitions({FOO: frozenset(range(6))})
    assert [(type(r.key), r.value) for r in group_records_written(h, start)] == [
        (ConsumerGroupMetadataKey, ConsumerGroupMetadataValue(11, fresh_hash)),
        (ConsumerGroupTargetAssignmentMemberKey, ConsumerGroupTargetAssignmentMemberValue(all_foo)),
        (ConsumerGroupTargetAssignmentMetadataKey, ConsumerGroupTargetAssignmentMetadataValue(11)),
        (ConsumerGroupCurrentMemberAssignmentKey, ConsumerGroupCurrentMemberAssignmentValue(
            11, 10, int(MemberState.STABLE), all_foo, ())),
    ]
    # Refreshed: the next heartbeat writes nothing.
    start = len(h.records)
    assert h.consumer_heartbeat(MEMBER, 11).member_epoch == 11
    assert group_records_written(h, start) == []
    h.assert_live_equals_replay(GROUP)


def test_subscription_metadata_refreshed_after_group_is_loaded() -> None:
    h = group_with_stale_metadata()
    assert h.consumer_group(GROUP).group_epoch == 10
    assert_refreshed(h, len(h.records))


def test_subscription_metadata_refreshed_again_after_write_failure() -> None:
    h = group_with_stale_metadata()
    start = len(h.records)
    h.fail_appends(ErrorCode.NOT_LEADER_OR_FOLLOWER)
    assert h.consumer_heartbeat(MEMBER, 10).error_code == ErrorCode.NOT_COORDINATOR
    # The failed write is undone: the group is back at epoch 10 with the stale hash...
    assert len(h.records) == start
    assert h.consumer_group(GROUP).group_epoch == 10
    h.assert_live_equals_replay(GROUP)
    # ...and the next heartbeat detects the divergence again.
    assert_refreshed(h, start)


def groups_subscribed_to_topic(h: ConsumerHarness, topic: str) -> set[str]:
    """Kafka's groupsSubscribedToTopic, derived from the groups' subscriptions (kcoord keeps
    no index; ConsumerGroup.subscribed_topic_names is Kafka's isSubscribedToTopic)."""
    image = h.coordinator.topics_image
    return {gid for gid, group in h.coordinator.consumer_groups.items()
            if topic in group.subscribed_topic_names(image)}


def test_group_ids_by_topics() -> None:
    h = ConsumerHarness()

    def subscribe(group_id: str, member_id: str, *topics: str) -> None:
        loaded(h, subscription_record(group_id, member_id, topics))

    def check(foo: set[str], bar: set[str], zar: set[str]) -> None:
        assert {t: groups_subscribed_to_topic(h, t) for t in ("foo", "bar", "zar")} == {
            "foo": foo, "bar": bar, "zar": zar}

    g1, g2 = "group1", "group2"
    check(set(), set(), set())
    subscribe(g1, "group1-m1", "foo", "bar")
    check({g1}, {g1}, set())
    subscribe(g2, "group2-m1", "foo", "bar", "zar")
    check({g1, g2}, {g1, g2}, {g2})
    subscribe(g1, "group1-m2", "bar", "zar")
    check({g1, g2}, {g1, g2}, {g1, g2})
    subscribe(g2, "group2-m2", "foo", "bar")
    check({g1, g2}, {g1, g2}, {g1, g2})
    # M1 in group 1 is removed.
    loaded(h, Record(ConsumerGroupCurrentMemberAssignmentKey(g1, "group1-m1"), None),
           Record(ConsumerGroupMemberMetadataKey(g1, "group1-m1"), None))
    check({g2}, {g1, g2}, {g1, g2})
    subscribe(g2, "group2-m1")
    check({g2}, {g1, g2}, {g1})
    subscribe(g2, "group2-m2", "foo")
    check({g2}, {g1}, {g1})
    subscribe(g2, "group2-m2")
    check(set(), {g1}, {g1})
    subscribe(g1, "group1-m2")
    check(set(), set(), set())


def test_on_new_metadata_image_with_empty_delta() -> None:
    # kcoord's counterpart of onNewMetadataImage is replacing the topics image.
    h = ConsumerHarness()
    h.set_topics()
    image = h.coordinator.topics_image
    assert (image.version, dict(image.by_id)) == (h.version, {})


def test_on_new_metadata_image() -> None:
    a, b, c, d, e = (uuid.UUID(int=0xA0 + i) for i in range(5))
    h = ConsumerHarness(a=(a, 1), b=(b, 1), c=(c, 1), d=(d, 1))
    subscriptions = {"group1": ["a", "b"], "group2": ["b", "c"], "group3": ["d"],
                     "group4": ["e"], "group5": ["f"]}
    epochs = {}
    for group_id, topics in subscriptions.items():
        joined = h.join(f"{group_id}-m1", topics, group_id=group_id)
        assert joined.error_code == ErrorCode.NONE
        epochs[group_id] = joined.member_epoch
    assert set(epochs.values()) == {1}
    # b gets a second partition, d is deleted, e is created.
    h.set_topics(a=(a, 1), b=(b, 2), c=(c, 1), e=(e, 2))
    after = {}
    for group_id in subscriptions:
        answer = h.consumer_heartbeat(f"{group_id}-m1", epochs[group_id], group_id=group_id)
        assert answer.error_code == ErrorCode.NONE
        after[group_id] = h.consumer_group(group_id).group_epoch
        h.assert_live_equals_replay(group_id)
    # Groups 1-4 subscribe to a changed topic: their metadata is refreshed (epoch bumped);
    # group 5's topic f exists neither before nor after.
    assert after == {"group1": 2, "group2": 2, "group3": 2, "group4": 2, "group5": 1}

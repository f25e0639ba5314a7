"""GroupMetadataManagerTest's ``testReplayConsumerGroup*`` cases (Kafka trunk 2024-10-25,
commit 1eb76443), Kafka's names in snake_case.

Kafka's ``context.replay(record)`` is its load path; kcoord replays records only when it
loads, so each test appends the records to the log and restarts the coordinator. Kafka's
``consumerGroup(id)`` throwing GroupIdNotFoundException is checked as the group being absent
(and ConsumerGroupDescribe answering GROUP_ID_NOT_FOUND); ``getOrMaybeCreateMember(id, false)``
throwing UnknownMemberIdException as the member being absent (and its heartbeat answering
UNKNOWN_MEMBER_ID).

kcoord writes no ConsumerGroupPartitionMetadata record: as Kafka 4.1 (KIP-1101) it keeps the
hash of the subscribed topics' metadata in the group epoch record. The two
PartitionMetadata tests check that hash's replay instead of the per-topic metadata map."""

from __future__ import annotations

import uuid

from consumer_harness import ConsumerHarness
from test_consumer_gmm_describe import loaded

from coordinator.core import ErrorCode
from coordinator.core.consumer import MemberState
from coordinator.core.consumer.group import ConsumerGroup, from_topic_partitions
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
    TopicPartitions,
)

TOPIC = uuid.UUID(int=0x7091C)


def replayed(*records: Record) -> ConsumerHarness:
    """A coordinator that loaded ``records`` (Kafka's context.replay)."""
    return loaded(ConsumerHarness(), *records)


def loaded_group(h: ConsumerHarness, group_id: str) -> ConsumerGroup:
    group = h.coordinator.consumer_groups.get(group_id)
    assert group is not None, group_id
    return group


def assert_no_group(h: ConsumerHarness, group_id: str) -> None:
    """Kafka's consumerGroup(id) throws GroupIdNotFoundException."""
    assert group_id not in h.coordinator.consumer_groups
    assert group_id not in h.coordinator.groups
    assert h.describe(group_id).groups[0].error_code == ErrorCode.GROUP_ID_NOT_FOUND


def assert_no_member(h: ConsumerHarness, group_id: str, member_id: str) -> None:
    """Kafka's getOrMaybeCreateMember(id, false) throws UnknownMemberIdException."""
    assert member_id not in loaded_group(h, group_id).members
    answer = h.consumer_heartbeat(member_id, 10, group_id=group_id)
    assert answer.error_code == ErrorCode.UNKNOWN_MEMBER_ID


def epoch_record(group_id: str, epoch: int, metadata_hash: int = 0) -> Record:
    return Record(ConsumerGroupMetadataKey(group_id),
                  ConsumerGroupMetadataValue(epoch, metadata_hash))


def test_replay_consumer_group_member_metadata() -> None:
    value = ConsumerGroupMemberMetadataValue(
        instance_id=None, rack_id="rackid", client_id="clientid", client_host="clienthost",
        subscribed_topic_names=("foo",), subscribed_topic_regex=None,
        rebalance_timeout_ms=-1, server_assignor="range")
    # The group and the member are created if they do not exist.
    h = replayed(Record(ConsumerGroupMemberMetadataKey("foo", "member"), value))
    member = loaded_group(h, "foo").members["member"]
    assert member.metadata_value() == value
    # Kafka's builder defaults: epoch 0, previous epoch 0, Stable, nothing assigned.
    current = member.current
    assert (current.member_epoch, current.previous_member_epoch, current.state) == (
        0, 0, MemberState.STABLE)
    assert not current.assigned_partitions and not current.partitions_pending_revocation


def test_replay_consumer_group_member_metadata_tombstone() -> None:
    # The group still exists but the member is already gone: a no-op.
    h = replayed(epoch_record("foo", 10),
                 Record(ConsumerGroupMemberMetadataKey("foo", "m1"), None))
    assert loaded_group(h, "foo").group_epoch == 10
    assert_no_member(h, "foo", "m1")
    # The group may not exist at all: a no-op.
    h = replayed(Record(ConsumerGroupMemberMetadataKey("bar", "m1"), None))
    assert_no_group(h, "bar")


def test_replay_consumer_group_metadata() -> None:
    # The group is created if it does not exist.
    h = replayed(epoch_record("foo", 10))
    assert loaded_group(h, "foo").group_epoch == 10


def test_replay_consumer_group_metadata_tombstone() -> None:
    h = replayed(Record(ConsumerGroupMetadataKey("foo"), None))
    assert_no_group(h, "foo")


def test_replay_consumer_group_partition_metadata() -> None:
    # kcoord: the subscribed topics' metadata hash travels in the group epoch record (no
    # partition-metadata record); replaying it creates the group with that hash.
    h = replayed(epoch_record("foo", 0, metadata_hash=0x5EED))
    group = loaded_group(h, "foo")
    assert (group.group_epoch, group.metadata_hash) == (0, 0x5EED)


def test_replay_consumer_group_partition_metadata_tombstone() -> None:
    # kcoord: the group epoch record's tombstone drops the hash with it; for a group that
    # does not exist it is a no-op.
    h = replayed(Record(ConsumerGroupMetadataKey("foo"), None))
    assert_no_group(h, "foo")
    h = replayed(epoch_record("foo", 3, metadata_hash=0x5EED),
                 Record(ConsumerGroupTargetAssignmentMetadataKey("foo"),
                        ConsumerGroupTargetAssignmentMetadataValue(3)),
                 Record(ConsumerGroupMetadataKey("foo"), None))
    group = loaded_group(h, "foo")
    assert (group.group_epoch, group.metadata_hash, group.assignment_epoch) == (0, 0, 3)


def test_replay_consumer_group_target_assignment_member() -> None:
    partitions = (TopicPartitions(TOPIC, (0, 1, 2)),)
    # The group is created if it does not exist.
    h = replayed(Record(ConsumerGroupTargetAssignmentMemberKey("foo", "m1"),
                        ConsumerGroupTargetAssignmentMemberValue(partitions)))
    assert loaded_group(h, "foo").target_of("m1") == {TOPIC: frozenset({0, 1, 2})}


def test_replay_consumer_group_target_assignment_member_tombstone() -> None:
    h = replayed(Record(ConsumerGroupTargetAssignmentMemberKey("foo", "m1"), None))
    assert_no_group(h, "foo")


def test_replay_consumer_group_target_assignment_metadata() -> None:
    # The group is created if it does not exist.
    h = replayed(Record(ConsumerGroupTargetAssignmentMetadataKey("foo"),
                        ConsumerGroupTargetAssignmentMetadataValue(10)))
    assert loaded_group(h, "foo").assignment_epoch == 10


def test_replay_consumer_group_target_assignment_metadata_tombstone() -> None:
    h = replayed(Record(ConsumerGroupTargetAssignmentMetadataKey("foo"), None))
    assert_no_group(h, "foo")


def test_replay_consumer_group_current_member_assignment() -> None:
    value = ConsumerGroupCurrentMemberAssignmentValue(
        member_epoch=10, previous_member_epoch=9, state=int(MemberState.UNRELEASED_PARTITIONS),
        assigned_partitions=(TopicPartitions(TOPIC, (0, 1, 2)),),
        partitions_pending_revocation=())
    # The group and the member are created if they do not exist.
    h = replayed(Record(ConsumerGroupCurrentMemberAssignmentKey("bar", "member"), value))
    member = loaded_group(h, "bar").members["member"]
    current = member.current
    assert (current.member_epoch, current.previous_member_epoch, current.state) == (
        10, 9, MemberState.UNRELEASED_PARTITIONS)
    assert current.assigned_partitions == from_topic_partitions(value.assigned_partitions)
    assert not current.partitions_pending_revocation
    # Kafka's builder defaults for the metadata the record does not carry.
    assert member.metadata_value() == ConsumerGroupMemberMetadataValue(
        instance_id=None, rack_id=None, client_id="", client_host="",
        subscribed_topic_names=(), subscribed_topic_regex=None, rebalance_timeout_ms=-1,
        server_assignor=None)


def test_replay_consumer_group_current_member_assignment_tombstone() -> None:
    # The group still exists but the member is already gone: a no-op.
    h = replayed(epoch_record("foo", 10),
                 Record(ConsumerGroupCurrentMemberAssignmentKey("foo", "m1"), None))
    assert_no_member(h, "foo", "m1")
    # The group may not exist at all: a no-op.
    h = replayed(Record(ConsumerGroupCurrentMemberAssignmentKey("bar", "m1"), None))
    assert_no_group(h, "bar")

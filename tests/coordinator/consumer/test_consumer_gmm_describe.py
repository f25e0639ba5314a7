"""GroupMetadataManagerTest (Kafka trunk 2024-10-25, commit 1eb76443): ListGroups,
ConsumerGroupDescribe, deleting consumer groups, the group's life through replay, and the
conversion of an empty group between the classic and consumer types. Kafka's names in
snake_case.

Groups Kafka's tests build with ``ConsumerGroupBuilder`` are loaded from their records by a
restart (kcoord's replay path). Differences, each noted where it shows:

- kcoord writes no ConsumerGroupPartitionMetadata record (the subscribed topics' metadata
  hash is in the group epoch record), so deleting a consumer group writes two tombstones
  where Kafka writes three.
- kcoord has no share groups and no metrics: Kafka's share group rows and its
  ``onConsumerGroupStateTransition`` counts are left out; the group's existence, which those
  counts follow, is checked instead.
- Kafka reads a group "at the last committed offset" (its snapshot registry); kcoord answers
  from the live group. The groups here are loaded from the log, so committed."""

from __future__ import annotations

import dataclasses
import uuid
from typing import Any

from consumer_harness import CONFIG, ConsumerHarness

from coordinator.core import ErrorCode
from coordinator.core.consumer import MemberState
from coordinator.core.consumer.group import ConsumerGroup
from storage.records import (
    ClassicMemberMetadata,
    ClassicProtocol,
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
    GroupMetadataKey,
    GroupMetadataValue,
    RebalanceEventKey,
    Record,
)

TOPIC = uuid.UUID(int=0x7091C)
SCAN_EVERY_SECOND = dataclasses.replace(CONFIG, offsets_retention_check_interval_ms=1_000)


def loaded(h: ConsumerHarness, *records: Record) -> ConsumerHarness:
    """Kafka's withConsumerGroup / context.replay: ``records`` loaded by a restart."""
    h.records.extend(records)
    h.crash_and_replay()
    return h


def group_records(group_id: str, epoch: int, assignment_epoch: int = 0) -> list[Record]:
    """Kafka's ConsumerGroupBuilder(groupId, epoch): the epoch and target epoch records."""
    return [Record(ConsumerGroupMetadataKey(group_id), ConsumerGroupMetadataValue(epoch)),
            Record(ConsumerGroupTargetAssignmentMetadataKey(group_id),
                   ConsumerGroupTargetAssignmentMetadataValue(assignment_epoch))]


def subscription_record(group_id: str, member_id: str, topics: tuple[str, ...] = (),
                        assignor: str | None = None,
                        classic: ClassicMemberMetadata | None = None) -> Record:
    """Kafka's newConsumerGroupMemberSubscriptionRecord of a builder-default member."""
    return Record(ConsumerGroupMemberMetadataKey(group_id, member_id),
                  ConsumerGroupMemberMetadataValue(
                      instance_id=None, rack_id=None, client_id="", client_host="",
                      subscribed_topic_names=topics, subscribed_topic_regex=None,
                      rebalance_timeout_ms=-1, server_assignor=assignor,
                      classic_member_metadata=classic))


def current_record(group_id: str, member_id: str, epoch: int = 0, previous: int = 0
                   ) -> Record:
    return Record(ConsumerGroupCurrentMemberAssignmentKey(group_id, member_id),
                  ConsumerGroupCurrentMemberAssignmentValue(
                      member_epoch=epoch, previous_member_epoch=previous,
                      state=int(MemberState.STABLE), assigned_partitions=(),
                      partitions_pending_revocation=()))


def group_records_written(h: ConsumerHarness, start: int) -> list[Record]:
    """The records appended since ``start``, without kcoord's own history events."""
    return [r for r in h.records[start:] if not isinstance(r.key, RebalanceEventKey)]


def listed(h: ConsumerHarness, states: tuple[str, ...] = (), types: tuple[str, ...] = ()
           ) -> dict[str, tuple[str, str, str]]:
    error, groups = h.list_groups(states=states, types=types)
    assert error == ErrorCode.NONE
    return {g.group_id: (g.protocol_type, g.group_state, g.group_type) for g in groups}


# --------------------------------------------------------------------------- ListGroups


def test_list_groups() -> None:
    consumer_group_id, classic_group_id = "consumer-group-id", "classic-group-id"
    h = loaded(ConsumerHarness(), *group_records(consumer_group_id, 10),
               Record(GroupMetadataKey(classic_group_id),
                      GroupMetadataValue("classic", 2, "range", None, 0)))
    # A member subscribes and the group epoch moves past the assignment epoch: Assigning.
    loaded(h, subscription_record(consumer_group_id, "member-1", ("foo",)),
           Record(ConsumerGroupMetadataKey(consumer_group_id), ConsumerGroupMetadataValue(11)))
    classic = ("classic", "Empty", "classic")
    assigning = ("consumer", "Assigning", "consumer")
    # Kafka's test first lists the consumer group as Empty: it reads at the last committed
    # offset and the member's record is not committed yet. Here every record is loaded, so
    # committed: the listing is Kafka's after-commit one. (kcoord has no read at a committed
    # offset; see testConsumerGroupDescribeBeforeAndAfterCommittingOffset in COVERAGE.md.)
    assert listed(h) == {classic_group_id: classic, consumer_group_id: assigning}
    # State filters compare case-insensitively.
    assert listed(h, states=("empty",)) == {classic_group_id: classic}
    assert listed(h, states=("assigning",)) == {consumer_group_id: assigning}
    assert listed(h, states=("Empty",)) == {classic_group_id: classic}
    # Type filters too.
    assert listed(h, types=("classic",)) == {classic_group_id: classic}
    assert listed(h, types=("Consumer",)) == {consumer_group_id: assigning}
    assert listed(h, types=("Share",)) == {}  # kcoord has no share groups
    assert listed(h, states=("empty", "Assigning")) == {
        classic_group_id: classic, consumer_group_id: assigning}
    # Unknown filters list nothing.
    assert listed(h, types=("Invalid",)) == {}
    assert listed(h, states=("Invalid",)) == {}
    h.assert_live_equals_replay(consumer_group_id)


# --------------------------------------------------------------------------- Describe


def described_member(m: Any) -> tuple[Any, ...]:
    return (m.member_id, m.member_epoch, tuple(m.subscribed_topic_names),
            [(tp.topic_id, tp.topic_name, list(tp.partitions))
             for tp in m.assignment.topic_partitions],
            [(tp.topic_id, tp.topic_name, list(tp.partitions))
             for tp in m.target_assignment.topic_partitions])


def test_consumer_group_describe_no_errors() -> None:
    h = loaded(ConsumerHarness(), *group_records("group-id-1", 10),
               *group_records("group-id-2", 10),
               subscription_record("group-id-2", "member-id", ("topicName",), "assignorName"),
               current_record("group-id-2", "member-id"))
    first, second = h.describe("group-id-1", "group-id-2").groups
    # Kafka's test context has one assignor, "range"; kcoord's default is the first of
    # group.consumer.assignors (Kafka's default list too: uniform, range).
    default_assignor = h.coordinator.config.consumer_assignors[0]
    assert (first.error_code, first.group_id, first.group_epoch, first.group_state,
            first.assignor_name, list(first.members)) == (
        ErrorCode.NONE, "group-id-1", 10, "Empty", default_assignor, [])
    assert (second.error_code, second.group_id, second.group_epoch, second.group_state,
            second.assignor_name) == (ErrorCode.NONE, "group-id-2", 10, "Assigning",
                                      "assignorName")
    assert [described_member(m) for m in second.members] == [
        ("member-id", 0, ("topicName",), [], [])]
    h.assert_live_equals_replay("group-id-2")


def test_consumer_group_describe_with_errors() -> None:
    h = ConsumerHarness()
    (group,) = h.describe("groupId").groups
    assert (group.group_id, group.error_code, group.error_message) == (
        "groupId", ErrorCode.GROUP_ID_NOT_FOUND, "Group groupId not found.")


# --------------------------------------------------------------------------- deletion


def tombstones(group_id: str) -> list[Record]:
    """Kafka's createGroupTombstoneRecords of an empty consumer group, without the
    ConsumerGroupPartitionMetadata tombstone kcoord has no record for."""
    return [Record(ConsumerGroupTargetAssignmentMetadataKey(group_id), None),
            Record(ConsumerGroupMetadataKey(group_id), None)]


def test_consumer_group_delete() -> None:
    h = loaded(ConsumerHarness(), *group_records("group-id", 10))
    start = len(h.records)
    assert h.delete_groups(["group-id"]) == {"group-id": ErrorCode.NONE}
    assert group_records_written(h, start) == tombstones("group-id")
    assert "group-id" not in h.coordinator.consumer_groups
    h.assert_live_equals_replay("group-id")


def test_consumer_group_maybe_delete() -> None:
    # Kafka's maybeDeleteGroup runs when offsets expire: an empty group without offsets
    # goes; kcoord's offset-retention scan does the same. The scan runs every second here,
    # well within the member's session.
    h = loaded(ConsumerHarness(SCAN_EVERY_SECOND), *group_records("group-id", 10))
    start = len(h.records)
    h.sleep(1_001)
    assert group_records_written(h, start) == tombstones("group-id")
    assert "group-id" not in h.coordinator.consumer_groups
    h.assert_live_equals_replay("group-id")
    # A group with a member is not deleted.
    h = loaded(ConsumerHarness(SCAN_EVERY_SECOND), *group_records("group-id", 10),
               subscription_record("group-id", "member"),
               current_record("group-id", "member", 10, 10))
    start = len(h.records)
    h.sleep(1_001)
    assert not [r for r in group_records_written(h, start)
                if isinstance(r.key, ConsumerGroupMetadataKey)]
    assert "group-id" in h.coordinator.consumer_groups


def test_on_consumer_group_state_transition() -> None:
    # Kafka counts the group's state transitions in metrics (kcoord has none); the group's
    # existence they follow is checked. An epoch record creates the group, Empty.
    h = loaded(ConsumerHarness(), Record(ConsumerGroupMetadataKey("group-id"),
                                         ConsumerGroupMetadataValue(1)))
    assert h.coordinator.consumer_groups["group-id"].state == "Empty"
    # A second epoch record for the same group leaves one group.
    loaded(h, Record(ConsumerGroupMetadataKey("group-id"), ConsumerGroupMetadataValue(1)))
    assert list(h.coordinator.consumer_groups) == ["group-id"]
    # Its tombstones remove it; replaying them again changes nothing.
    loaded(h, *tombstones("group-id"))
    assert "group-id" not in h.coordinator.consumer_groups
    loaded(h, *tombstones("group-id"))
    assert "group-id" not in h.coordinator.consumer_groups
    assert h.describe("group-id").groups[0].error_code == ErrorCode.GROUP_ID_NOT_FOUND


def test_on_consumer_group_state_transition_on_loading() -> None:
    # Five epoch records then four rounds of tombstones: the last record wins, no group.
    h = loaded(ConsumerHarness(),
               *[Record(ConsumerGroupMetadataKey("group-id"), ConsumerGroupMetadataValue(0))
                 for _ in range(5)],
               *[r for _ in range(4) for r in tombstones("group-id")])
    assert "group-id" not in h.coordinator.consumer_groups
    assert "group-id" not in h.coordinator.persisted_group_ids()


# --------------------------------------------------------------------------- conversions


def test_consumer_group_heartbeat_with_empty_classic_group() -> None:
    group_id, member_id = "classic-group-id", "member-id"
    # The topics image lacks foo and bar, so the assignment is empty as with Kafka's no-op
    # assignor.
    h = loaded(ConsumerHarness(zar=(TOPIC, 1)),
               Record(GroupMetadataKey(group_id), GroupMetadataValue("", 0, None, None, 0)))
    start = len(h.records)
    answer = h.consumer_heartbeat(member_id, 0, group_id=group_id, server_assignor="range",
                                  rebalance_timeout_ms=5000,
                                  subscribed_topic_names=["foo", "bar"], topic_partitions=[])
    assert (answer.error_code, answer.member_epoch) == (ErrorCode.NONE, 1)
    group: ConsumerGroup = h.consumer_group(group_id)
    member = group.members[member_id]
    records = group_records_written(h, start)
    assert [(type(r.key), r.value) for r in records] == [
        (GroupMetadataKey, None),
        (ConsumerGroupMemberMetadataKey, member.metadata_value()),
        (ConsumerGroupMetadataKey, ConsumerGroupMetadataValue(1, group.metadata_hash)),
        (ConsumerGroupTargetAssignmentMemberKey, ConsumerGroupTargetAssignmentMemberValue(())),
        (ConsumerGroupTargetAssignmentMetadataKey, ConsumerGroupTargetAssignmentMetadataValue(1)),
        (ConsumerGroupCurrentMemberAssignmentKey, ConsumerGroupCurrentMemberAssignmentValue(
            1, 0, int(MemberState.STABLE), (), ())),
    ]
    value = member.metadata_value()
    # kcoord keeps the subscribed names sorted.
    assert (value.subscribed_topic_names, value.server_assignor, value.rebalance_timeout_ms) == (
        ("bar", "foo"), "range", 5000)
    assert group_id not in h.coordinator.groups
    h.assert_live_equals_replay(group_id)


def test_classic_group_join_with_empty_consumer_group() -> None:
    group_id = "consumer-group-id"
    h = loaded(ConsumerHarness(), *group_records(group_id, 10))
    start = len(h.records)
    token = h.send_join_group(group_id, "", "consumer", [("range", b"")],
                              require_known_member_id=True)
    assert h.reply(token).error_code == ErrorCode.MEMBER_ID_REQUIRED
    assert group_records_written(h, start)[:2] == tombstones(group_id)
    assert group_id not in h.coordinator.consumer_groups
    assert group_id in h.coordinator.groups
    h.assert_live_equals_replay(group_id)


def test_no_conversion_when_size_exceeds_classic_max_group_size() -> None:
    config = dataclasses.replace(CONFIG, group_max_size=1,
                                 group_consumer_migration_policy="downgrade")
    classic = ClassicMemberMetadata(45_000, (ClassicProtocol("range", b""),))
    h = loaded(ConsumerHarness(config), *group_records("group-id", 10),
               subscription_record("group-id", "1"), current_record("group-id", "1"),
               subscription_record("group-id", "2", classic=classic),
               current_record("group-id", "2"),
               subscription_record("group-id", "3", classic=classic),
               current_record("group-id", "3"))
    answer = h.consumer_heartbeat("1", -1, group_id="group-id", rebalance_timeout_ms=5000)
    assert (answer.error_code, answer.member_epoch) == (ErrorCode.NONE, -1)
    # Two classic members left exceed group.max.size 1: the group stays a consumer group.
    assert "group-id" in h.coordinator.consumer_groups
    assert "group-id" not in h.coordinator.groups
    assert set(h.consumer_group("group-id").members) == {"2", "3"}
    h.assert_live_equals_replay("group-id")

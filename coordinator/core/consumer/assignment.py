"""Recomputing a consumer group's target assignment at its group epoch (Kafka's
updateTargetAssignment): the server assignor most members prefer runs over every member's
resolved subscription; only the members whose target changed get a new record."""

from __future__ import annotations

import uuid
from collections.abc import Mapping

from coordinator.core.consumer import (
    ASSIGNORS,
    GroupSpec,
    MemberSubscription,
    PartitionAssignorError,
    TopicMetadata,
)
from coordinator.core.consumer.group import ConsumerGroup, to_topic_partitions
from coordinator.core.consumer.records import RecordWriter
from coordinator.core.group_manager import GroupManager
from storage.records import (
    ConsumerGroupTargetAssignmentMemberKey,
    ConsumerGroupTargetAssignmentMemberValue,
    ConsumerGroupTargetAssignmentMetadataKey,
    ConsumerGroupTargetAssignmentMetadataValue,
)

__all__ = ["assign_target"]


def assign_target(
    manager: GroupManager,
    group: ConsumerGroup,
    subscribed: Mapping[str, frozenset[uuid.UUID]],
    writer: RecordWriter,
    replacing: str | None = None,
) -> None:
    """Recompute the target assignment at the group epoch (Kafka's updateTargetAssignment).
    ``replacing`` is a static member that took a departed one's place in this request: its
    target is written even if unchanged (Kafka's builder still holds it under the old id)."""
    image = manager.topics_image
    topics = {}
    for ids in subscribed.values():
        for topic_id in ids:
            name = image.by_id[topic_id]
            topics[topic_id] = TopicMetadata(name, image.by_name[name][1])
    spec = GroupSpec(
        members={
            mid: MemberSubscription(
                subscribed_topic_ids=subscribed[mid],
                assignment=_existing(group.target_of(mid), topics),
                instance_id=m.instance_id,
                rack_id=m.rack_id,
            )
            for mid, m in group.members.items()
        },
        topics=topics,
    )
    assignor = ASSIGNORS[group.preferred_assignor(manager.config.consumer_assignors[0])]
    try:
        new_target = assignor.assign(spec)
    except PartitionAssignorError as exc:
        raise AssertionError(f"assignor {assignor.name} failed: {exc}") from exc
    gid = group.group_id
    for mid in group.members:
        assignment = new_target.get(mid, {})
        if mid == replacing or mid not in group.target or (
            dict(assignment) != dict(group.target_of(mid))
        ):
            writer.write(ConsumerGroupTargetAssignmentMemberKey(gid, mid),
                         ConsumerGroupTargetAssignmentMemberValue(to_topic_partitions(assignment)))
    writer.write(ConsumerGroupTargetAssignmentMetadataKey(gid),
                 ConsumerGroupTargetAssignmentMetadataValue(group.group_epoch))


def _existing(
    target: Mapping[uuid.UUID, frozenset[int]], topics: Mapping[uuid.UUID, TopicMetadata]
) -> Mapping[uuid.UUID, frozenset[int]]:
    """The partitions of a previous target that still exist (a topic can be deleted, and a
    partition count only grows in Kafka, but a hand-made image may shrink one)."""
    kept = {}
    for topic_id, partitions in target.items():
        topic = topics.get(topic_id)
        if topic is None:
            continue
        alive = frozenset(p for p in partitions if p < topic.partition_count)
        if alive:
            kept[topic_id] = alive
    return kept

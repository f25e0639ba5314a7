"""A share group as its records say (Kafka's ShareGroup and ShareGroupMember), built only by
replaying Kafka's share group records: handlers emit records and replay each one at once
(the consumer group's ``RecordWriter``); the store keeps the appended ones
(``HardState.share``), from which a restart or a failed append rebuilds the group
(``coordinator.core.group_rebuild``)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping

from coordinator.core.consumer import EMPTY_ASSIGNMENT
from coordinator.core.consumer.group import (
    PartitionMap,
    from_topic_partitions,
    to_topic_partitions,
)
from coordinator.core.topics_image import TopicsImage
from storage.records import (
    Record,
    ShareGroupCurrentMemberAssignmentKey,
    ShareGroupCurrentMemberAssignmentValue,
    ShareGroupMemberMetadataKey,
    ShareGroupMemberMetadataValue,
    ShareGroupMetadataKey,
    ShareGroupMetadataValue,
    ShareGroupStatePartitionMetadataKey,
    ShareGroupStatePartitionMetadataValue,
    ShareGroupTargetAssignmentMemberKey,
    ShareGroupTargetAssignmentMemberValue,
    ShareGroupTargetAssignmentMetadataKey,
    ShareGroupTargetAssignmentMetadataValue,
    ShareTopicPartitionsInfo,
)

__all__ = [
    "SHARE_EMPTY",
    "SHARE_GROUP_TYPE",
    "SHARE_PROTOCOL_TYPE",
    "SHARE_STABLE",
    "PartitionMap",
    "ShareGroup",
    "ShareMember",
    "state_partitions_value",
]

#: Kafka's ShareGroup.ShareGroupState names.
SHARE_EMPTY = "Empty"
SHARE_STABLE = "Stable"
#: ListGroups' group type and protocol type of a share group (ShareGroup.PROTOCOL_TYPE).
SHARE_GROUP_TYPE = "share"
SHARE_PROTOCOL_TYPE = "share"
#: Kafka's MemberState.STABLE value: a share member has no other state.
MEMBER_STATE_STABLE = 0


def state_partitions_value(
    initialized: Mapping[uuid.UUID, tuple[str, frozenset[int]]],
) -> ShareGroupStatePartitionMetadataValue:
    """The state partition metadata record value saying ``initialized`` (topic id ->
    (name, partitions)) have share state."""
    return ShareGroupStatePartitionMetadataValue(
        (),
        tuple(ShareTopicPartitionsInfo(tid, name, tuple(sorted(parts)))
              for tid, (name, parts) in sorted(initialized.items())),
        (),
    )


class ShareMember:
    """One share group member: its metadata record and its current assignment."""

    __slots__ = ("assigned", "client_host", "client_id", "member_epoch", "member_id",
                 "previous_member_epoch", "rack_id", "subscribed_topic_names")

    def __init__(self, member_id: str) -> None:
        self.member_id = member_id
        self.rack_id: str | None = None
        self.client_id = ""
        self.client_host = ""
        self.subscribed_topic_names: tuple[str, ...] = ()
        self.member_epoch = 0
        self.previous_member_epoch = 0
        self.assigned: PartitionMap = EMPTY_ASSIGNMENT

    def metadata_value(self) -> ShareGroupMemberMetadataValue:
        """The member's metadata record value."""
        return ShareGroupMemberMetadataValue(self.rack_id, self.client_id, self.client_host,
                                             self.subscribed_topic_names)

    def current_value(self) -> ShareGroupCurrentMemberAssignmentValue:
        """The member's current assignment record value."""
        return ShareGroupCurrentMemberAssignmentValue(
            self.member_epoch, self.previous_member_epoch, MEMBER_STATE_STABLE,
            to_topic_partitions(self.assigned))


class ShareGroup:
    """Kafka's ShareGroup: the group epoch, members, target assignment and the topic
    partitions whose share state is initialized."""

    __slots__ = ("assignment_epoch", "group_epoch", "group_id", "initialized", "members",
                 "metadata_hash", "target")

    def __init__(self, group_id: str) -> None:
        self.group_id = group_id
        self.group_epoch = 0
        self.metadata_hash = 0
        self.assignment_epoch = 0
        self.members: dict[str, ShareMember] = {}
        self.target: dict[str, PartitionMap] = {}
        #: topic id -> (topic name, partitions with share state), as the state partition
        #: metadata record says.
        self.initialized: dict[uuid.UUID, tuple[str, frozenset[int]]] = {}

    @property
    def state(self) -> str:
        """Kafka's ShareGroup.state(): Empty without members, else Stable."""
        return SHARE_STABLE if self.members else SHARE_EMPTY

    def subscriptions(self, image: TopicsImage) -> tuple[dict[str, frozenset[uuid.UUID]], int]:
        """(each member's subscribed topic ids, the subscribed topics' metadata hash)."""
        subscribed = {mid: image.resolve(m.subscribed_topic_names, None)
                      for mid, m in self.members.items()}
        every: frozenset[uuid.UUID] = frozenset().union(*subscribed.values())
        return subscribed, image.metadata_hash(every)

    def subscribed_topic_names(self) -> set[str]:
        """Every topic some member subscribes to."""
        return {name for m in self.members.values() for name in m.subscribed_topic_names}

    def target_of(self, member_id: str) -> PartitionMap:
        """The member's target assignment (empty when it has none)."""
        return self.target.get(member_id, EMPTY_ASSIGNMENT)


    # ------------------------------------------------------------------ replay

    def replay(self, record: Record) -> None:
        """Apply one share group record of this group (a None value is a tombstone)."""
        key, value = record.key, record.value
        if isinstance(key, ShareGroupMetadataKey):
            epoch = value if isinstance(value, ShareGroupMetadataValue) else None
            self.group_epoch = 0 if epoch is None else epoch.epoch
            self.metadata_hash = 0 if epoch is None else epoch.metadata_hash
        elif isinstance(key, ShareGroupTargetAssignmentMetadataKey):
            self.assignment_epoch = (value.assignment_epoch if isinstance(
                value, ShareGroupTargetAssignmentMetadataValue) else 0)
        elif isinstance(key, ShareGroupTargetAssignmentMemberKey):
            if isinstance(value, ShareGroupTargetAssignmentMemberValue):
                self.target[key.member_id] = from_topic_partitions(value.topic_partitions)
            else:
                self.target.pop(key.member_id, None)
        elif isinstance(key, ShareGroupMemberMetadataKey):
            self._replay_member(key.member_id, value)
        elif isinstance(key, ShareGroupCurrentMemberAssignmentKey):
            self._replay_current(key.member_id, value)
        elif isinstance(key, ShareGroupStatePartitionMetadataKey):
            self.initialized = {}
            if isinstance(value, ShareGroupStatePartitionMetadataValue):
                for info in value.initialized_topics:
                    self.initialized[info.topic_id] = (info.topic_name,
                                                       frozenset(info.partitions))

    def _replay_member(self, member_id: str, value: object) -> None:
        if value is None:
            self.members.pop(member_id, None)
            return
        assert isinstance(value, ShareGroupMemberMetadataValue)
        member = self.members.get(member_id)
        if member is None:
            member = self.members[member_id] = ShareMember(member_id)
        member.rack_id = value.rack_id
        member.client_id = value.client_id
        member.client_host = value.client_host
        member.subscribed_topic_names = value.subscribed_topic_names

    def _replay_current(self, member_id: str, value: object) -> None:
        member = self.members.get(member_id)
        if member is None:
            if value is None:
                return
            member = self.members[member_id] = ShareMember(member_id)
        if value is None:
            member.member_epoch = member.previous_member_epoch = 0
            member.assigned = EMPTY_ASSIGNMENT
            return
        assert isinstance(value, ShareGroupCurrentMemberAssignmentValue)
        member.member_epoch = value.member_epoch
        member.previous_member_epoch = value.previous_member_epoch
        member.assigned = from_topic_partitions(value.assigned_partitions)

"""The share group records (KIP-932): a share group's membership and assignment, as the
group coordinator persists them.

They carry the fields of Kafka's ``group-coordinator/src/main/resources/common/message/
ShareGroup*Key/Value.json`` (Kafka 4.2) and, as there, the key's version is the record
type: 10 member metadata, 11 group epoch, 12 target assignment epoch, 13 a member's target
assignment, 14 a member's current assignment, 15 the state partitions (which topic
partitions have share-partition state). Type 9 (ShareGroupPartitionMetadata) is gone from
Kafka 4.1 on: the group epoch record carries the subscribed topics' metadata hash instead.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from storage.topic_partitions import TopicPartitions

__all__ = [
    "SHARE_GROUP_KEY_TYPES",
    "ShareGroupCurrentMemberAssignmentKey",
    "ShareGroupCurrentMemberAssignmentValue",
    "ShareGroupKey",
    "ShareGroupMemberMetadataKey",
    "ShareGroupMemberMetadataValue",
    "ShareGroupMetadataKey",
    "ShareGroupMetadataValue",
    "ShareGroupStatePartitionMetadataKey",
    "ShareGroupStatePartitionMetadataValue",
    "ShareGroupTargetAssignmentMemberKey",
    "ShareGroupTargetAssignmentMemberValue",
    "ShareGroupTargetAssignmentMetadataKey",
    "ShareGroupTargetAssignmentMetadataValue",
    "ShareGroupValue",
    "ShareTopicInfo",
    "ShareTopicPartitionsInfo",
]


@dataclass(frozen=True, slots=True)
class ShareGroupMemberMetadataKey:
    """Key of one share group member's metadata (type 10)."""

    group: str
    member_id: str


@dataclass(frozen=True, slots=True)
class ShareGroupMemberMetadataValue:
    """What the member told the coordinator: its rack, client and subscribed topics."""

    rack_id: str | None
    client_id: str
    client_host: str
    subscribed_topic_names: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ShareGroupMetadataKey:
    """Key of a share group's epoch record (type 11)."""

    group: str


@dataclass(frozen=True, slots=True)
class ShareGroupMetadataValue:
    """The group epoch and the subscribed topics' metadata hash it was computed for."""

    epoch: int
    metadata_hash: int = 0


@dataclass(frozen=True, slots=True)
class ShareGroupTargetAssignmentMetadataKey:
    """Key of a share group's target assignment epoch (type 12)."""

    group: str


@dataclass(frozen=True, slots=True)
class ShareGroupTargetAssignmentMetadataValue:
    """The epoch of the group's target assignment."""

    assignment_epoch: int


@dataclass(frozen=True, slots=True)
class ShareGroupTargetAssignmentMemberKey:
    """Key of one member's target assignment (type 13)."""

    group: str
    member_id: str


@dataclass(frozen=True, slots=True)
class ShareGroupTargetAssignmentMemberValue:
    """The partitions the simple assignor gave the member."""

    topic_partitions: tuple[TopicPartitions, ...]


@dataclass(frozen=True, slots=True)
class ShareGroupCurrentMemberAssignmentKey:
    """Key of one member's current assignment (type 14)."""

    group: str
    member_id: str


@dataclass(frozen=True, slots=True)
class ShareGroupCurrentMemberAssignmentValue:
    """The member's epochs, state (Kafka's MemberState value) and assigned partitions."""

    member_epoch: int
    previous_member_epoch: int
    state: int
    assigned_partitions: tuple[TopicPartitions, ...]


@dataclass(frozen=True, slots=True)
class ShareTopicPartitionsInfo:
    """A topic's partitions in the state partition metadata (Kafka's TopicPartitionsInfo)."""

    topic_id: uuid.UUID
    topic_name: str
    partitions: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class ShareTopicInfo:
    """A topic whose share state is being deleted (Kafka's TopicInfo)."""

    topic_id: uuid.UUID
    topic_name: str


@dataclass(frozen=True, slots=True)
class ShareGroupStatePartitionMetadataKey:
    """Key of a share group's state partition metadata (type 15)."""

    group: str


@dataclass(frozen=True, slots=True)
class ShareGroupStatePartitionMetadataValue:
    """The topic partitions whose share-partition state is being initialized, is
    initialized, or is being deleted."""

    initializing_topics: tuple[ShareTopicPartitionsInfo, ...]
    initialized_topics: tuple[ShareTopicPartitionsInfo, ...]
    deleting_topics: tuple[ShareTopicInfo, ...]


ShareGroupKey = (
    ShareGroupMemberMetadataKey
    | ShareGroupMetadataKey
    | ShareGroupTargetAssignmentMetadataKey
    | ShareGroupTargetAssignmentMemberKey
    | ShareGroupCurrentMemberAssignmentKey
    | ShareGroupStatePartitionMetadataKey
)
ShareGroupValue = (
    ShareGroupMemberMetadataValue
    | ShareGroupMetadataValue
    | ShareGroupTargetAssignmentMetadataValue
    | ShareGroupTargetAssignmentMemberValue
    | ShareGroupCurrentMemberAssignmentValue
    | ShareGroupStatePartitionMetadataValue
)

SHARE_GROUP_KEY_TYPES: tuple[type, ...] = (
    ShareGroupMemberMetadataKey,
    ShareGroupMetadataKey,
    ShareGroupTargetAssignmentMetadataKey,
    ShareGroupTargetAssignmentMemberKey,
    ShareGroupCurrentMemberAssignmentKey,
    ShareGroupStatePartitionMetadataKey,
)

"""The consumer group protocol's requests and responses as the core reads and writes them:
``TypedDict`` views of the dicts ``wire`` decodes (``wire/apis/consumer_group_heartbeat.py``
and ``consumer_group_describe.py``), field for field; nothing is translated.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import TypedDict

__all__ = [
    "ConsumerGroupDescribeRequest",
    "ConsumerGroupDescribeResponse",
    "ConsumerGroupHeartbeatRequest",
    "ConsumerGroupHeartbeatResponse",
    "HeartbeatTopicPartitions",
]


class HeartbeatTopicPartitions(TypedDict):
    """Partitions of one topic, by id."""

    topic_id: uuid.UUID
    partitions: Sequence[int]


class ConsumerGroupHeartbeatRequest(TypedDict):
    """ConsumerGroupHeartbeat (68); null fields mean "unchanged since the last heartbeat"."""

    group_id: str
    member_id: str
    member_epoch: int
    instance_id: str | None
    rack_id: str | None
    rebalance_timeout_ms: int
    subscribed_topic_names: Sequence[str] | None
    subscribed_topic_regex: str | None
    server_assignor: str | None
    topic_partitions: Sequence[HeartbeatTopicPartitions] | None


class HeartbeatAssignment(TypedDict):
    """The partitions the member may use now."""

    topic_partitions: Sequence[HeartbeatTopicPartitions]


class ConsumerGroupHeartbeatResponse(TypedDict, total=False):
    """ConsumerGroupHeartbeat's answer (fields left out take their defaults)."""

    error_code: int
    error_message: str | None
    member_id: str | None
    member_epoch: int
    heartbeat_interval_ms: int
    assignment: HeartbeatAssignment | None


class ConsumerGroupDescribeRequest(TypedDict):
    """ConsumerGroupDescribe (69)."""

    group_ids: Sequence[str]
    include_authorized_operations: bool


class DescribedTopicPartitions(TypedDict):
    """Partitions of one topic, by id and name."""

    topic_id: uuid.UUID
    topic_name: str
    partitions: Sequence[int]


class DescribedAssignment(TypedDict):
    """A member's current or target assignment."""

    topic_partitions: Sequence[DescribedTopicPartitions]


class DescribedMember(TypedDict):
    """One member as ConsumerGroupDescribe shows it."""

    member_id: str
    instance_id: str | None
    rack_id: str | None
    member_epoch: int
    client_id: str
    client_host: str
    subscribed_topic_names: Sequence[str]
    subscribed_topic_regex: str | None
    assignment: DescribedAssignment
    target_assignment: DescribedAssignment
    member_type: int


class DescribedGroup(TypedDict, total=False):
    """One described group (fields left out take their defaults)."""

    error_code: int
    error_message: str | None
    group_id: str
    group_state: str
    group_epoch: int
    assignment_epoch: int
    assignor_name: str
    members: Sequence[DescribedMember]
    authorized_operations: int


class ConsumerGroupDescribeResponse(TypedDict):
    """ConsumerGroupDescribe's answer."""

    groups: Sequence[DescribedGroup]

"""ConsumerGroupDescribe (API 69), versions 0-1, and what the classic group APIs say about
consumer groups (Kafka's ConsumerGroup.asListedGroup / asDescribedGroup).

v1 adds each member's type (KIP-1099): always 1 (consumer protocol) here, since classic
members inside a consumer group are not modelled.
"""

from __future__ import annotations

from coordinator.core.consumer.group import ConsumerGroup, PartitionMap, to_topic_partitions
from coordinator.core.consumer.messages import (
    ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse,
    DescribedAssignment,
    DescribedGroup,
)
from coordinator.core.group_manager import GroupManager
from coordinator.core.messages import DescribedGroup as ClassicDescribedGroup
from coordinator.core.messages import RequestContext
from coordinator.core.result import Reply, ReplyToken, Result
from coordinator.core.topics_image import TopicsImage
from wire.constants import ErrorCode
from wire.consumer_protocol import CONSUMER_PROTOCOL_TYPE

__all__ = [
    "CONSUMER_GROUP_TYPE",
    "CONSUMER_MEMBER_TYPE",
    "GROUP_AUTHORIZED_OPERATIONS",
    "describe_as_classic",
    "described_assignment",
    "handle_consumer_group_describe",
]

CONSUMER_GROUP_TYPE = "consumer"
CONSUMER_MEMBER_TYPE = 1
CLASSIC_MEMBER_TYPE = 0  # Kafka's MemberType: a member using the classic protocol
# READ (3), DELETE (6), DESCRIBE (8): every group operation, with no authorizer.
GROUP_AUTHORIZED_OPERATIONS = (1 << 3) | (1 << 6) | (1 << 8)
_NOT_REQUESTED = -(2**31)


def described_assignment(partitions: PartitionMap, image: TopicsImage) -> DescribedAssignment:
    """A member's partitions as the describe APIs carry them (topic ids and names)."""
    return {"topic_partitions": [
        {"topic_id": tp.topic_id, "topic_name": image.by_id.get(tp.topic_id, ""),
         "partitions": list(tp.partitions)}
        for tp in to_topic_partitions(partitions)
    ]}


def describe_consumer_group(
    group: ConsumerGroup, manager: GroupManager, include_operations: bool
) -> DescribedGroup:
    """Kafka's ConsumerGroup.asDescribedGroup."""
    image = manager.topics_image
    return {
        "error_code": ErrorCode.NONE,
        "error_message": None,
        "group_id": group.group_id,
        "group_state": group.state,
        "group_epoch": group.group_epoch,
        "assignment_epoch": group.assignment_epoch,
        "assignor_name": group.preferred_assignor(manager.config.consumer_assignors[0]),
        "members": [
            {
                "member_id": member.member_id,
                "instance_id": member.instance_id,
                "rack_id": member.rack_id,
                "member_epoch": member.member_epoch,
                "client_id": member.client_id,
                "client_host": member.client_host,
                "subscribed_topic_names": list(member.subscribed_topic_names),
                # Kafka's member holds "" when it has no regex, and describes it so.
                "subscribed_topic_regex": member.subscribed_topic_regex or "",
                "assignment": described_assignment(member.current.assigned_partitions, image),
                "target_assignment": described_assignment(group.target_of(member.member_id), image),
                "member_type": (CLASSIC_MEMBER_TYPE if member.uses_classic_protocol
                                else CONSUMER_MEMBER_TYPE),
            }
            for member in group.members.values()
        ],
        "authorized_operations": (
            GROUP_AUTHORIZED_OPERATIONS if include_operations else _NOT_REQUESTED
        ),
    }


def handle_consumer_group_describe(
    manager: GroupManager,
    ctx: RequestContext,
    req: ConsumerGroupDescribeRequest,
    token: ReplyToken,
    now_ms: int,
) -> Result:
    """Handle one ConsumerGroupDescribe."""
    described: list[DescribedGroup] = []
    for group_id in req["group_ids"]:
        if group_id == "":
            described.append({"group_id": group_id, "error_code": ErrorCode.INVALID_GROUP_ID,
                              "error_message": "Group ID can't be empty."})
            continue
        group = manager.consumer_groups.get(group_id)
        if group is None:
            message = (f"Group {group_id} is not a consumer group."
                       if group_id in manager.groups or group_id in manager.share_groups
                       else f"Group {group_id} not found.")
            described.append({"group_id": group_id, "error_code": ErrorCode.GROUP_ID_NOT_FOUND,
                              "error_message": message})
            continue
        described.append(
            describe_consumer_group(group, manager, req["include_authorized_operations"])
        )
    response: ConsumerGroupDescribeResponse = {"groups": described}
    return Result((), (Reply(token, response),))


def describe_as_classic(group: ConsumerGroup, manager: GroupManager) -> ClassicDescribedGroup:
    """A consumer group as DescribeGroups shows it: protocol type "consumer", the group's
    assignor as protocol, and the members without subscription or assignment bytes."""
    return {
        "error_code": ErrorCode.NONE,
        "error_message": None,
        "group_id": group.group_id,
        "group_state": group.state,
        "protocol_type": CONSUMER_PROTOCOL_TYPE,
        "protocol_data": group.preferred_assignor(manager.config.consumer_assignors[0]),
        "members": tuple(
            {
                "member_id": member.member_id,
                "group_instance_id": member.instance_id,
                "client_id": member.client_id,
                "client_host": member.client_host,
                "member_metadata": b"",
                "member_assignment": b"",
            }
            for member in group.members.values()
        ),
    }

"""ShareGroupDescribe (API 77), version 1: Kafka's GroupMetadataManager
``shareGroupDescribe`` and ShareGroup.asDescribedGroup (members with their current
assignment, topic names from the topics image, the simple assignor's name)."""

from __future__ import annotations

from typing import Any, TypedDict

from coordinator.core.consumer.describe import GROUP_AUTHORIZED_OPERATIONS, described_assignment
from coordinator.core.group_manager import GroupManager
from coordinator.core.messages import RequestContext
from coordinator.core.result import Reply, ReplyToken, Result
from coordinator.core.share_group.group import ShareGroup
from coordinator.share.assignor import SIMPLE_ASSIGNOR_NAME
from wire.constants import ErrorCode

__all__ = ["ShareGroupDescribeRequest", "describe_share_group", "handle_share_group_describe"]

_NOT_REQUESTED = -(2**31)


class ShareGroupDescribeRequest(TypedDict):
    """ShareGroupDescribe v1's request fields."""

    group_ids: list[str]
    include_authorized_operations: bool


def describe_share_group(
    group: ShareGroup, manager: GroupManager, include_operations: bool
) -> dict[str, Any]:
    """Kafka's ShareGroup.asDescribedGroup."""
    image = manager.topics_image
    return {
        "error_code": ErrorCode.NONE,
        "error_message": None,
        "group_id": group.group_id,
        "group_state": group.state,
        "group_epoch": group.group_epoch,
        "assignment_epoch": group.assignment_epoch,
        "assignor_name": SIMPLE_ASSIGNOR_NAME,
        "members": [
            {
                "member_id": member.member_id,
                "rack_id": member.rack_id,
                "member_epoch": member.member_epoch,
                "client_id": member.client_id,
                "client_host": member.client_host,
                "subscribed_topic_names": list(member.subscribed_topic_names),
                "assignment": described_assignment(member.assigned, image),
            }
            for member in group.members.values()
        ],
        "authorized_operations": (
            GROUP_AUTHORIZED_OPERATIONS if include_operations else _NOT_REQUESTED),
    }


def handle_share_group_describe(
    manager: GroupManager, ctx: RequestContext, req: ShareGroupDescribeRequest, token: ReplyToken,
    now_ms: int,
) -> Result:
    """Handle one ShareGroupDescribe: an unknown id, or one of another group type, is
    GROUP_ID_NOT_FOUND (Kafka's shareGroup())."""
    described: list[dict[str, Any]] = []
    for group_id in req["group_ids"]:
        if group_id == "":
            described.append({"group_id": group_id, "error_code": ErrorCode.INVALID_GROUP_ID,
                              "error_message": "Group ID can't be empty."})
            continue
        group = manager.share_groups.get(group_id)
        if group is None:
            other = group_id in manager.groups or group_id in manager.consumer_groups
            message = (f"Group {group_id} is not a share group." if other
                       else f"Group {group_id} not found.")
            described.append({"group_id": group_id, "error_code": ErrorCode.GROUP_ID_NOT_FOUND,
                              "error_message": message})
            continue
        described.append(describe_share_group(group, manager, req["include_authorized_operations"]))
    return Result((), (Reply(token, {"groups": described}),))

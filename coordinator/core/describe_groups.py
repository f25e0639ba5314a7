"""DescribeGroups (API 15), versions 0-6.

Version notes: v3 authorized operations (the broker's business: it has the authorizer);
v4 member group.instance.id; v6 GROUP_ID_NOT_FOUND with a message for unknown groups
(KIP-1043; before: NONE with state Dead). A share group is described as Kafka does: not a
classic group, so GROUP_ID_NOT_FOUND (v6) or Dead.
"""

from __future__ import annotations

from coordinator.core.classic.group import ClassicGroup
from coordinator.core.classic.state import DEAD, STABLE
from coordinator.core.consumer.describe import describe_as_classic
from coordinator.core.group_manager import GroupManager, valid_group_id
from coordinator.core.messages import (
    DescribedGroup,
    DescribedGroupMember,
    DescribeGroupsRequest,
    DescribeGroupsResponse,
    RequestContext,
)
from coordinator.core.result import Reply, ReplyToken, Result
from wire.constants import ErrorCode

__all__ = ["describe_group", "handle_describe_groups"]


def describe_group(group: ClassicGroup) -> DescribedGroup:
    """Kafka's GroupMetadata.summary: metadata and assignments only when Stable."""
    stable = group.state is STABLE and group.protocol_name is not None
    protocol = group.protocol_name if stable else None
    members = tuple(
        DescribedGroupMember(
            member_id=member_id,
            group_instance_id=member.group_instance_id,
            client_id=member.client_id,
            client_host=member.client_host,
            member_metadata=member.metadata(protocol) if protocol is not None else b"",
            member_assignment=member.assignment if protocol is not None else b"",
        )
        for member_id, member in group.members.items()
    )
    return {
        "error_code": ErrorCode.NONE,
        "error_message": None,
        "group_id": group.group_id,
        "group_state": group.state.value,
        "protocol_type": group.protocol_type or "",
        "protocol_data": protocol or "",
        "members": members,
    }


def _unknown(group_id: str, error: ErrorCode, message: str | None = None) -> DescribedGroup:
    return {"error_code": error, "error_message": message, "group_id": group_id,
            "group_state": DEAD.value if error != ErrorCode.INVALID_GROUP_ID else "",
            "protocol_type": "", "protocol_data": "", "members": ()}


def handle_describe_groups(
    manager: GroupManager,
    ctx: RequestContext,
    req: DescribeGroupsRequest,
    token: ReplyToken,
    now_ms: int,
) -> Result:
    """Handle one DescribeGroups."""
    described: list[DescribedGroup] = []
    for group_id in req["groups"]:
        if not valid_group_id(group_id, allow_empty=True):
            described.append(_unknown(group_id, ErrorCode.INVALID_GROUP_ID))
            continue
        group = manager.groups.get(group_id)
        consumer_group = manager.consumer_groups.get(group_id)
        if consumer_group is not None:
            described.append(describe_as_classic(consumer_group, manager))
            continue
        if group_id in manager.share_groups:  # Kafka's classicGroup(): not a classic group
            if ctx.api_version >= 6:
                described.append(_unknown(group_id, ErrorCode.GROUP_ID_NOT_FOUND,
                                          f"Group {group_id} is not a classic group."))
            else:
                described.append(_unknown(group_id, ErrorCode.NONE))
            continue
        if group is None:
            if ctx.api_version >= 6:
                described.append(_unknown(group_id, ErrorCode.GROUP_ID_NOT_FOUND,
                                          f"Group {group_id} not found."))
            else:
                described.append(_unknown(group_id, ErrorCode.NONE))
            continue
        described.append(describe_group(group))
    response: DescribeGroupsResponse = {"groups": described}
    return Result((), (Reply(token, response),))

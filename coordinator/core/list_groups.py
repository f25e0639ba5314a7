"""ListGroups (API 16), versions 0-5.

Version notes: v4 states filter (KIP-518, case-insensitive), v5 types filter (KIP-848:
"classic" or "consumer"; KIP-932: "share").
"""

from __future__ import annotations

from coordinator.core.group_manager import GroupManager
from coordinator.core.messages import (
    ListedGroup,
    ListGroupsRequest,
    ListGroupsResponse,
    RequestContext,
)
from coordinator.core.result import Reply, ReplyToken, Result
from coordinator.core.share_group.group import SHARE_GROUP_TYPE, SHARE_PROTOCOL_TYPE
from wire.constants import ErrorCode

__all__ = ["CLASSIC_GROUP_TYPE", "handle_list_groups"]

CLASSIC_GROUP_TYPE = "classic"


def handle_list_groups(
    manager: GroupManager, ctx: RequestContext, req: ListGroupsRequest, token: ReplyToken,
    now_ms: int,
) -> Result:
    """Handle one ListGroups: states compare case-insensitively, types too."""
    states = {s.lower() for s in req["states_filter"]}
    types = {t.lower() for t in req["types_filter"]}
    listed: list[ListedGroup] = []
    if not types or CLASSIC_GROUP_TYPE in types:
        for group_id, group in manager.groups.items():
            if states and group.state.lower_name not in states:
                continue
            listed.append({"group_id": group_id, "protocol_type": group.protocol_type or "",
                           "group_state": group.state.value, "group_type": CLASSIC_GROUP_TYPE})
    if not types or "consumer" in types:
        for group_id, consumer_group in manager.consumer_groups.items():
            state = consumer_group.state
            if states and state.lower() not in states:
                continue
            listed.append({"group_id": group_id, "protocol_type": "consumer",
                           "group_state": state, "group_type": "consumer"})
    if not types or SHARE_GROUP_TYPE in types:
        for group_id, share_group in manager.share_groups.items():
            state = share_group.state
            if states and state.lower() not in states:
                continue
            listed.append({"group_id": group_id, "protocol_type": SHARE_PROTOCOL_TYPE,
                           "group_state": state, "group_type": SHARE_GROUP_TYPE})
    response: ListGroupsResponse = {"error_code": ErrorCode.NONE, "groups": listed}
    return Result((), (Reply(token, response),))

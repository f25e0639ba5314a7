"""DescribeGroups (15): state, protocol and members of classic groups (the group core's
``coordinator/core/describe.py``). v3+ may ask for the authorized operations, an
authorizer's business: without one, every group operation is allowed."""

from __future__ import annotations

from typing import Any

import wire
from coordinator.core import ErrorCode, handle_describe_groups
from coordinator.server.acl_answers import filter_described_groups
from coordinator.server.api_support import GROUP_AUTHORIZED_OPERATIONS, group_runtime
from coordinator.server.context import RequestContext
from coordinator.server.route import Acl, AclOperation, EachKey, ResourceType, Route
from coordinator.txn.placement import OFFSETS_TOPIC
from wire.constants import ApiKey

__all__ = ["ROUTE", "describe_groups"]


async def describe_groups(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any]:
    """Describe groups: state, protocol and members (metadata/assignment when Stable)."""
    body = request.body
    response: dict[str, Any] = await group_runtime(ctx).call(handle_describe_groups, ctx, body)
    if not body.include_authorized_operations:
        return response
    return {"groups": [
        {**g, "authorized_operations": GROUP_AUTHORIZED_OPERATIONS}
        if g["error_code"] == ErrorCode.NONE else g
        for g in response["groups"]
    ]}


ROUTE = Route(
    ApiKey.DESCRIBE_GROUPS,
    describe_groups,
    acl=(Acl(ResourceType.GROUP, AclOperation.DESCRIBE),),
    routing=EachKey(OFFSETS_TOPIC, "groups", "groups", "group_id"),
    read_only=True,
    core_handler=handle_describe_groups,
    answer_filter=filter_described_groups,
)

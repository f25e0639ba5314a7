"""JoinGroup (11): a member joins a classic group, parked until the join phase completes
(the group core's ``coordinator/core/classic/join.py``). Before v7 the response's protocol_name
is not nullable: "" instead of null."""

from __future__ import annotations

from typing import Any

import wire
from coordinator.core import handle_join_group
from coordinator.server.api_support import group_runtime
from coordinator.server.context import RequestContext
from coordinator.server.route import Acl, AclOperation, OneKey, ResourceType, Route, field
from coordinator.txn.placement import OFFSETS_TOPIC
from wire.constants import ApiKey

__all__ = ["ROUTE", "join_group"]

_NULLABLE_PROTOCOL_NAME_VERSION = 7


async def join_group(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any]:
    """JoinGroup, parked until the join phase completes."""
    response: dict[str, Any] = await group_runtime(ctx).call(handle_join_group, ctx,
                                                             request.body)
    if ctx.api_version < _NULLABLE_PROTOCOL_NAME_VERSION and response["protocol_name"] is None:
        response = {**response, "protocol_name": ""}
    return response


ROUTE = Route(
    ApiKey.JOIN_GROUP,
    join_group,
    acl=(Acl(ResourceType.GROUP, AclOperation.READ),),
    routing=OneKey(OFFSETS_TOPIC, field("group_id")),
    may_wait=True,
    parks=True,
)

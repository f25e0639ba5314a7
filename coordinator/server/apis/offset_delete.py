"""OffsetDelete (47): delete committed offsets of partitions no member of the group
consumes (the group core's ``coordinator/core/offset_delete.py``). Partitions of topics
the broker does not have are answered here with UNKNOWN_TOPIC_OR_PARTITION and never reach
the coordinator."""

from __future__ import annotations

from typing import Any

import wire
from coordinator.core import ErrorCode, handle_offset_delete
from coordinator.server.api_support import TopicView, group_runtime
from coordinator.server.context import RequestContext
from coordinator.server.route import Acl, AclOperation, Entries, OneKey, ResourceType, Route, field
from coordinator.txn.placement import OFFSETS_TOPIC
from wire.constants import ApiKey

__all__ = ["ROUTE", "offset_delete"]


async def offset_delete(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any]:
    """Delete committed offsets of partitions no member of the group consumes."""
    body = request.body
    view = TopicView(ctx.state.topics)
    unknown: list[dict[str, Any]] = []
    valid: list[dict[str, Any]] = []
    for t in body.topics:
        count = view.partition_count(t["name"])
        good = []
        bad = []
        for p in t["partitions"]:
            index = p["partition_index"]
            if count is not None and 0 <= index < count:
                good.append(p)
            else:
                bad.append(index)
        if bad:
            unknown.append({"name": t["name"], "partitions": [
                {"partition_index": index, "error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
                for index in bad]})
        if good:
            valid.append({"name": t["name"], "partitions": good})
    core: Any = body if not unknown else {**body, "topics": valid}
    response: dict[str, Any] = await group_runtime(ctx).call(handle_offset_delete, ctx, core)
    if response["error_code"] != ErrorCode.NONE or not unknown:
        return response
    return {"error_code": ErrorCode.NONE, "topics": unknown + list(response["topics"])}


ROUTE = Route(
    ApiKey.OFFSET_DELETE,
    offset_delete,
    acl=(Acl(ResourceType.GROUP, AclOperation.DELETE),
         Acl(ResourceType.TOPIC, AclOperation.READ, entries=(Entries("topics"),))),
    routing=OneKey(OFFSETS_TOPIC, field("group_id")),
)

"""ListPartitionReassignments (key 46), version 0: the ongoing reassignments, as Kafka's
``ReplicationControlManager.listPartitionReassignments`` lists them. AlterPartitionReassignments
completes every reassignment at once here (the replicas share one log), so none is ever
ongoing: every answer is NONE with no topics, whether ``topics`` is null (all) or names
partitions (unknown ones are left out without an error, as Kafka's)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import wire
from coordinator.server.route import Acl, AclOperation, ResourceType, Route
from wire import ErrorCode
from wire.constants import ApiKey

if TYPE_CHECKING:
    from coordinator.server.context import RequestContext

__all__ = ["ROUTE", "handle"]


async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any] | None:
    """No reassignment is ever ongoing (module docstring)."""
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "error_message": None,
            "topics": []}


ROUTE = Route(
    ApiKey.LIST_PARTITION_REASSIGNMENTS,
    handle,
    acl=(Acl(ResourceType.CLUSTER, AclOperation.DESCRIBE),),
)

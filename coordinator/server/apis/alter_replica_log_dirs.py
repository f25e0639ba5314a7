"""AlterReplicaLogDirs (key 34), versions 1-2: move partition replicas between this broker's
log directories, as ``ReplicaManager.alterReplicaLogDirs`` answers. The broker has one log
directory (``describe_log_dirs``: the data directory, or ``(memory)``), so:

- a replica asked to move to that directory is already there: NONE, nothing moves (Kafka
  answers a move to the current directory NONE too);
- any other path is LOG_DIR_NOT_FOUND for each of its partitions;
- an unknown topic or partition UNKNOWN_TOPIC_OR_PARTITION; with ``--brokers``, a
  partition this broker holds no replica of REPLICA_NOT_AVAILABLE (Kafka's answer to its
  NotLeaderOrFollowerException here).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import wire
from coordinator.server.api_support import store_of
from coordinator.server.apis.describe_log_dirs import log_dir_of
from coordinator.server.route import Acl, AclOperation, ResourceType, Route
from wire import ErrorCode
from wire.constants import ApiKey

if TYPE_CHECKING:
    from coordinator.server.context import RequestContext

__all__ = ["ROUTE", "handle"]


def _move(ctx: RequestContext, path: str, name: str, index: int) -> ErrorCode:
    if path != log_dir_of(ctx):
        return ErrorCode.LOG_DIR_NOT_FOUND
    topic = store_of(ctx).get(name)
    if topic is None or topic.partition(index) is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    cluster = ctx.state.cluster
    if cluster is not None and ctx.state.identity.node_id not in cluster.replicas(
            index, topic.replication_factor, name):
        return ErrorCode.REPLICA_NOT_AVAILABLE
    return ErrorCode.NONE


async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any] | None:
    """Each replica's move (module docstring), grouped by topic as Kafka's answer is."""
    results: dict[str, list[dict[str, Any]]] = {}
    for directory in request.body.dirs:
        for topic in directory.topics:
            results.setdefault(topic.name, []).extend(
                {"partition_index": index,
                 "error_code": _move(ctx, directory.path, topic.name, index)}
                for index in topic.partitions)
    return {"throttle_time_ms": 0, "results": [
        {"topic_name": name, "partitions": partitions} for name, partitions in results.items()]}


ROUTE = Route(
    ApiKey.ALTER_REPLICA_LOG_DIRS,
    handle,
    acl=(Acl(ResourceType.CLUSTER, AclOperation.ALTER),),
)

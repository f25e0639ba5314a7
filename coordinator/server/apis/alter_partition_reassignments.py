"""AlterPartitionReassignments (key 45), versions 0-1: move partitions to other replicas on
the multi-broker model (``cluster.Cluster.reassign``), with the checks of Kafka's controller
(``ReplicationControlManager.alterPartitionReassignments``).

- A reassignment completes at once: the replicas share one log, so the new ones are in
  sync when named. A leader left out (or stopped) gives way to the first live new replica
  at the next leader epoch. ListPartitionReassignments therefore never finds one ongoing.
- ``replicas`` null cancels an ongoing reassignment: NO_REASSIGNMENT_IN_PROGRESS.
- Checks, per partition: an unknown topic or partition UNKNOWN_TOPIC_OR_PARTITION; an empty
  list, a broker named twice or an unregistered broker INVALID_REPLICA_ASSIGNMENT; a
  different replica count with ``allow_replication_factor_change`` false (v1+)
  INVALID_REPLICATION_FACTOR; Kafka's messages.
- The internal topics' partitions are led by their coordinators and are not moved:
  INVALID_REPLICA_ASSIGNMENT.
- With one broker the only possible assignment is the current one: NONE, nothing moves.
- Moved replicas are written to ``cluster.json`` before the answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import wire
from coordinator.broker.errors import BrokerError
from coordinator.server.api_support import broker_ids, store_of
from coordinator.server.apis.create_topics import check_registered
from coordinator.server.internal_topics import is_internal
from coordinator.server.route import Acl, AclOperation, ResourceType, Route
from wire import ErrorCode
from wire.constants import ApiKey

if TYPE_CHECKING:
    from coordinator.server.context import RequestContext

__all__ = ["ROUTE", "handle"]


def _check(ctx: RequestContext, target: list[int], current: list[int],
           allow_factor_change: bool) -> None:
    if not target:
        raise BrokerError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                          "The manual partition assignment includes an empty replica list.")
    seen: set[int] = set()
    for broker in target:
        if broker in seen:
            raise BrokerError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                              f"The manual partition assignment includes the broker {broker} "
                              "more than once.")
        seen.add(broker)
    check_registered(target, broker_ids(ctx))
    if not allow_factor_change and len(target) != len(current):
        raise BrokerError(ErrorCode.INVALID_REPLICATION_FACTOR,
                          f"The replication factor is changed from {len(current)} to "
                          f"{len(target)} but allowReplicationFactorChange is false")


def _reassign(ctx: RequestContext, name: str, index: int, target: list[int] | None,
              allow_factor_change: bool) -> bool:
    """Move one partition; whether anything moved (BrokerError when refused)."""
    if is_internal(name):
        raise BrokerError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                          f"The partitions of {name} are led by their coordinators and "
                          "cannot be reassigned.")
    topic = store_of(ctx).get(name)
    if topic is None:
        raise BrokerError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                          "This server does not host this topic-partition.")
    if topic.partition(index) is None:
        raise BrokerError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                          f"Unable to find partition {name}:{index}.")
    if target is None:
        raise BrokerError(ErrorCode.NO_REASSIGNMENT_IN_PROGRESS,
                          "No partition reassignment is in progress.")
    cluster = ctx.state.cluster
    node_id = ctx.state.identity.node_id
    current = ([node_id] if cluster is None
               else cluster.replicas(index, topic.replication_factor, name))
    _check(ctx, target, current, allow_factor_change)
    if cluster is None:
        return False
    moved: bool = cluster.reassign(name, index, topic.replication_factor, target)
    return moved


async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any] | None:
    """Reassign each named partition (module docstring)."""
    body = request.body
    allow = request.api_version < 1 or bool(body.allow_replication_factor_change)
    moved = False
    responses = []
    for topic in body.topics:
        partitions = []
        for p in topic.partitions:
            target = None if p.replicas is None else list(p.replicas)
            try:
                moved = _reassign(ctx, topic.name, p.partition_index, target, allow) or moved
            except BrokerError as exc:
                partitions.append({"partition_index": p.partition_index,
                                   "error_code": exc.code, "error_message": exc.message})
                continue
            partitions.append({"partition_index": p.partition_index,
                               "error_code": ErrorCode.NONE, "error_message": None})
        responses.append({"name": topic.name, "partitions": partitions})
    cluster = ctx.state.cluster
    if moved and cluster is not None:
        await cluster.changed()
    return {"throttle_time_ms": 0, "allow_replication_factor_change": allow,
            "error_code": ErrorCode.NONE, "error_message": None, "responses": responses}


ROUTE = Route(
    ApiKey.ALTER_PARTITION_REASSIGNMENTS,
    handle,
    acl=(Acl(ResourceType.CLUSTER, AclOperation.ALTER),),
)

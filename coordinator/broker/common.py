"""Small helpers the broker handlers share."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, cast

from coordinator.broker.topics import TopicStore
from wire import ErrorCode

if TYPE_CHECKING:
    from coordinator.server.context import RequestContext

__all__ = [
    "CLUSTER_AUTHORIZED_OPERATIONS",
    "NO_AUTHORIZED_OPERATIONS",
    "TOPIC_AUTHORIZED_OPERATIONS",
    "ZERO_UUID",
    "broker_ids",
    "leadership_error",
    "replication_factor_of",
    "store_of",
]

ZERO_UUID = uuid.UUID(int=0)

# Kafka without an authorizer reports every operation its resource type supports
# (AclEntry.supportedOperations) as a bit field of AclOperation codes.
TOPIC_AUTHORIZED_OPERATIONS = sum(1 << op for op in (3, 4, 5, 6, 7, 8, 10, 11))
CLUSTER_AUTHORIZED_OPERATIONS = sum(1 << op for op in (5, 7, 8, 9, 10, 11, 12))
NO_AUTHORIZED_OPERATIONS = -(2**31)  # the schema's default: "not requested"


def store_of(ctx: RequestContext) -> TopicStore:
    """The server's topic store."""
    return cast(TopicStore, ctx.state.topics)


def leadership_error(
    ctx: RequestContext, topic: str, partition: int, leader_epoch: int = -1
) -> ErrorCode | None:
    """Why this broker cannot serve ``topic``/``partition`` (NOT_LEADER_OR_FOLLOWER,
    FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH), or None. One broker leads everything."""
    cluster = getattr(ctx.state, "cluster", None)
    if cluster is None:
        return None
    code: ErrorCode = cluster.leadership_error(
        ctx.state.identity.node_id, topic, partition, leader_epoch
    )
    return None if code == ErrorCode.NONE else code


def broker_ids(ctx: RequestContext) -> list[int]:
    """The registered brokers' node ids (``--brokers``: 0..N-1; otherwise this one)."""
    cluster = getattr(ctx.state, "cluster", None)
    if cluster is None:
        return [ctx.state.identity.node_id]
    return list(range(cluster.size))


def replication_factor_of(ctx: RequestContext, factor: int) -> int:
    """The replicas a topic created with ``factor`` has (-1: ``default.replication.factor``,
    1 with one broker)."""
    cluster = getattr(ctx.state, "cluster", None)
    if cluster is None:
        return 1
    return len(cluster.replicas(0, factor))

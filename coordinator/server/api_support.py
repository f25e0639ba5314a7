"""What the route modules (``coordinator/server/apis/``) share: the questions they ask the
broker's topic store and cluster (``store_of``, ``TopicView``, ``leadership_error``,
``broker_ids``, ``replication_factor_of``), the authorized-operation bit fields Kafka
reports without an authorizer, and the group core's view of the broker's topics
(``with_current_topics``)."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, cast

from coordinator.broker.topics import TopicStore
from coordinator.server.context import group_runtime
from wire import ErrorCode
from wire.kafka_uuid import ZERO_UUID

if TYPE_CHECKING:
    import wire
    from coordinator.server.context import RequestContext
    from coordinator.server.runtime import CoordinatorRuntime
    from coordinator.server.waiters import PendingReply, ReadyReply

__all__ = [
    "CLUSTER_AUTHORIZED_OPERATIONS",
    "GROUP_AUTHORIZED_OPERATIONS",
    "NO_AUTHORIZED_OPERATIONS",
    "TOPIC_AUTHORIZED_OPERATIONS",
    "ZERO_UUID",
    "TopicView",
    "WithCurrentTopics",
    "all_exist",
    "broker_ids",
    "group_runtime",
    "leader_epoch_of",
    "leadership_error",
    "replication_factor_of",
    "store_of",
    "with_current_topics",
]

# Kafka without an authorizer reports every operation its resource type supports
# (AclEntry.supportedOperations) as a bit field of AclOperation codes.
TOPIC_AUTHORIZED_OPERATIONS = sum(1 << op for op in (3, 4, 5, 6, 7, 8, 10, 11))
CLUSTER_AUTHORIZED_OPERATIONS = sum(1 << op for op in (5, 7, 8, 9, 10, 11, 12))
# READ (3), DELETE (6), DESCRIBE (8).
GROUP_AUTHORIZED_OPERATIONS = sum(1 << op for op in (3, 6, 8))
NO_AUTHORIZED_OPERATIONS = -(2**31)  # the schema's default: "not requested"

_ANY_PARTITION_COUNT = 2**31 - 1  # every partition exists without a topic store


def store_of(ctx: RequestContext) -> TopicStore:
    """The server's topic store."""
    return cast(TopicStore, ctx.state.topics)


def leadership_error(
    ctx: RequestContext, topic: str, partition: int, leader_epoch: int = -1
) -> ErrorCode | None:
    """Why this broker cannot serve ``topic``/``partition`` (NOT_LEADER_OR_FOLLOWER,
    FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH), or None. ``leader_epoch`` is the client's
    current leader epoch (-1: not checked). One broker leads everything at epoch 0, so a
    larger epoch is one it does not know (Kafka's ``Partition.checkCurrentLeaderEpoch``)."""
    cluster = ctx.state.cluster
    if cluster is None:
        return ErrorCode.UNKNOWN_LEADER_EPOCH if leader_epoch > 0 else None
    code: ErrorCode = cluster.leadership_error(
        ctx.state.identity.node_id, topic, partition, leader_epoch
    )
    return None if code == ErrorCode.NONE else code


def leader_epoch_of(ctx: RequestContext, topic: str, partition: int) -> int:
    """The partition's leader epoch: 0 on one broker (Kafka's first epoch), the cluster
    model's on several (a failover bumps it)."""
    cluster = ctx.state.cluster
    if cluster is None:
        return 0
    epoch: int = cluster.leader(topic, partition)[1]
    return epoch


def broker_ids(ctx: RequestContext) -> list[int]:
    """The registered brokers' node ids (``--brokers``: 0..N-1; otherwise this one)."""
    cluster = ctx.state.cluster
    if cluster is None:
        return [ctx.state.identity.node_id]
    return list(range(cluster.size))


def replication_factor_of(ctx: RequestContext, factor: int) -> int:
    """The replicas a topic created with ``factor`` has (-1: ``default.replication.factor``,
    1 with one broker)."""
    cluster = ctx.state.cluster
    if cluster is None:
        return 1
    return len(cluster.replicas(0, factor))


# --------------------------------------------------------------------------- topics


def _partition_count(store: Any, name: str) -> int | None:
    """Partitions of topic ``name`` in the broker's topic store (any number without one);
    None if it does not exist."""
    if store is None:
        return _ANY_PARTITION_COUNT
    topic = store.get(name)
    return None if topic is None else len(topic.partitions)


class TopicView:
    """The questions the group APIs ask the broker's topic store. With no topic store (a
    coordinator-only server) every topic and partition exists and no topic id resolves."""

    __slots__ = ("_store",)

    def __init__(self, store: Any) -> None:
        self._store = store

    def partition_count(self, name: str) -> int | None:
        """Partitions of topic ``name``; None if it does not exist."""
        return _partition_count(self._store, name)

    def name_of(self, topic_id: uuid.UUID) -> str | None:
        """The name of the topic with this id, or None."""
        store = self._store
        if store is None or topic_id == ZERO_UUID:
            return None
        topic = store.by_id(topic_id)
        return None if topic is None else str(topic.name)

    def id_of(self, name: str) -> uuid.UUID:
        """The id of topic ``name`` (the zero UUID if unknown)."""
        store = self._store
        if store is None:
            return ZERO_UUID
        topic = store.get(name)
        return ZERO_UUID if topic is None else uuid.UUID(str(topic.topic_id))


def all_exist(store: Any, topics: Iterable[Any]) -> bool:
    """Whether ``topics`` (by name) name partitions, all of which exist in the topic store
    (``TopicView.partition_count``; a commit of no partition at all is answered without
    the coordinator, as Kafka's broker does)."""
    some = False
    for topic in topics:
        count = _partition_count(store, topic["name"])
        if count is None:
            return False
        for p in topic["partitions"]:
            if not 0 <= p["partition_index"] < count:
                return False
            some = True
    return some


def refresh_topics_image(ctx: RequestContext) -> None:
    """Give the group core the broker's topics if they changed since it last saw them
    (Kafka hands its coordinator each new MetadataImage the same way)."""
    store = ctx.state.topics
    if store is None:
        return
    manager = group_runtime(ctx).coordinator
    if manager.topics_image.version == store.version:
        return
    # Imported here: a module-level import runs coordinator.core's __init__ (the whole group
    # core, 43 modules) before the first Metadata, which this module's helpers also serve.
    from coordinator.core.topics_image import TopicsImage

    topics = (topic for name in store.names() if (topic := store.get(name)) is not None)
    manager.topics_image = TopicsImage(
        ((topic.name, topic.topic_id, len(topic.partitions)) for topic in topics),
        version=store.version,
    )


def with_current_topics(ctx: RequestContext) -> CoordinatorRuntime:
    """The runtime, its core holding the broker's current topics."""
    runtime = group_runtime(ctx)
    store = ctx.state.topics
    # The version check inline: every steady heartbeat passes it with nothing to refresh.
    if store is not None and runtime.coordinator.topics_image.version != store.version:
        refresh_topics_image(ctx)
    return runtime


class WithCurrentTopics:
    """A KIP-848 API's handler: the core sees the broker's current topics, then answers
    (``handler``, a group core handler). ``submit`` hands the request to the coordinator at
    once and returns its pending reply, so a connection may pipeline it."""

    def __init__(self, handler: Any, name: str, doc: str) -> None:
        self.handler = handler
        self.__name__ = self.__qualname__ = name
        self.__doc__ = doc

    async def __call__(self, ctx: RequestContext, request: wire.DecodedRequest) -> Any:
        pending = self.submit(ctx, request)
        if pending is None:  # the coordinator is still loading its log
            return await group_runtime(ctx).call(self.handler, ctx, request.body)
        return pending.result() if pending.ready() else await pending.wait()

    def submit(
        self, ctx: RequestContext, request: wire.DecodedRequest
    ) -> PendingReply | ReadyReply | None:
        runtime = group_runtime(ctx)
        store = ctx.state.topics
        # with_current_topics, inline: every steady heartbeat passes with nothing to refresh.
        if store is not None and runtime.coordinator.topics_image.version != store.version:
            refresh_topics_image(ctx)
        return runtime.submit(self.handler, ctx, request.body)

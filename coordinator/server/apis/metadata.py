"""Metadata (key 3), versions 0-13: the live brokers and who leads each partition.

- One broker leads every partition. With several (``--brokers``, ``cluster.Cluster``) the
  live ones are listed, and each partition has its replicas, in-sync and offline replicas
  and leader epoch; an offline partition is LEADER_NOT_AVAILABLE with leader -1.

- ``topics`` null means every topic (v1+); in v0 an empty list means every topic too.
- Unknown requested topics are auto-created with ``num.partitions`` when
  ``auto.create.topics.enable`` is true and the request allows it
  (``allow_auto_topic_creation``, v4+; always allowed before v4). Otherwise they come back
  with UNKNOWN_TOPIC_OR_PARTITION (INVALID_TOPIC_EXCEPTION for an illegal name).
- The internal topics (``__consumer_offsets``, ``__transaction_state``) are listed with
  ``is_internal`` true and their coordinators as leaders (``server.internal_topics``), in
  an all-topics answer and when named (or, v12+, looked up by id); never auto-created.
- v10+ carries topic ids; v12+ may look topics up by id (UNKNOWN_TOPIC_ID when absent).
  Before v12 a null name or a topic id in the request is INVALID_REQUEST, as in Kafka.
- Every partition has a leader epoch >= 0, as Kafka's: 0 with one broker, as the record
  batches the store serves are stamped (``partitionLeaderEpoch``); with several,
  leadership moves, a failover bumps the epoch and the epochs fence stale clients.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

import wire
from coordinator.broker import config as broker_config
from coordinator.broker.errors import BrokerError
from coordinator.broker.topics import Topic, TopicStore, validate_topic_name
from coordinator.server.acl_answers import filter_metadata
from coordinator.server.api_support import (
    CLUSTER_AUTHORIZED_OPERATIONS,
    NO_AUTHORIZED_OPERATIONS,
    TOPIC_AUTHORIZED_OPERATIONS,
    ZERO_UUID,
    store_of,
)
from coordinator.server.context import listener_of
from coordinator.server.internal_topics import (
    InternalTopic,
    internal_topic,
    internal_topic_by_id,
    internal_topics,
    is_internal,
)
from coordinator.server.partition_view import internal_partition_view, partition_view
from coordinator.server.route import Acl, AclOperation, AnyOf, ResourceType, Route
from wire import ErrorCode
from wire.constants import ApiKey

if TYPE_CHECKING:
    from coordinator.server.context import RequestContext

__all__ = ["ROUTE", "handle"]

_NO_LEADER = ErrorCode.LEADER_NOT_AVAILABLE  # an offline partition's error


def _topic_entry(topic: Topic, node_id: int, operations: int, cluster: Any) -> dict[str, Any]:
    return {
        "error_code": ErrorCode.NONE,
        "name": topic.name,
        "topic_id": topic.topic_id,
        "is_internal": False,
        "partitions": [
            partition_view(topic, partition.index, node_id, cluster, _NO_LEADER)
            for partition in topic.partitions
        ],
        "topic_authorized_operations": operations,
    }


def _internal_entry(topic: InternalTopic, node_id: int, operations: int,
                    cluster: Any) -> dict[str, Any]:
    """An internal topic: each partition led by its coordinator, no replicas elsewhere."""
    partitions = [internal_partition_view(topic, index, node_id, cluster, _NO_LEADER)
                  for index in range(topic.partition_count)]
    return {"error_code": ErrorCode.NONE, "name": topic.name, "topic_id": topic.topic_id,
            "is_internal": True, "partitions": partitions,
            "topic_authorized_operations": operations}


def _error_entry(
    code: ErrorCode, name: str | None, topic_id: uuid.UUID = ZERO_UUID
) -> dict[str, Any]:
    return {"error_code": code, "name": name, "topic_id": topic_id, "partitions": []}


def _invalid_request(requested: list[Any]) -> dict[str, Any]:
    """Kafka's MetadataRequest.getErrorResponse."""
    return {
        "throttle_time_ms": 0,
        "brokers": [],
        "topics": [
            _error_entry(ErrorCode.INVALID_REQUEST, t.name or "", t.topic_id) for t in requested
        ],
    }


async def _by_name(store: TopicStore, name: str, auto_create: bool,
                   partitions: int) -> Topic | ErrorCode:
    topic = store.get(name)
    if topic is not None:
        return topic
    try:
        validate_topic_name(name)
        if not auto_create:
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        created = store.create_topic(name, partitions)
    except BrokerError as exc:
        return exc.code
    await store.open_logs(created)  # (before this client learns of it)
    return created


async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any] | None:
    """Describe the requested topics (creating unknown ones when allowed) and the broker."""
    version = request.api_version
    body = request.body
    store = store_of(ctx)
    identity = ctx.state.identity
    cluster = ctx.state.cluster
    requested: list[Any] | None = body.topics
    all_topics = requested is None or (version == 0 and not requested)
    if (
        requested
        and version < 12
        and any(t.name is None or t.topic_id != ZERO_UUID for t in requested)
    ):
        return _invalid_request(requested)
    with_operations = version >= 8 and bool(body.include_topic_authorized_operations)
    operations = TOPIC_AUTHORIZED_OPERATIONS if with_operations else NO_AUTHORIZED_OPERATIONS

    topics: list[dict[str, Any]] = []
    config, cluster_id = ctx.state.config, identity.cluster_id
    if all_topics:
        for name in store.names():
            topic = store.get(name)
            assert topic is not None
            if not is_internal(name):
                topics.append(_topic_entry(topic, identity.node_id, operations, cluster))
        topics.extend(_internal_entry(internal, identity.node_id, operations, cluster)
                      for internal in internal_topics(config, cluster_id))
    else:
        assert requested is not None
        topic_ids = list(dict.fromkeys(t.topic_id for t in requested if t.topic_id != ZERO_UUID))
        if topic_ids:
            # Kafka: once any topic id is given, the request is served by id alone.
            for topic_id in topic_ids:
                found = store.by_id(topic_id)
                internal = internal_topic_by_id(topic_id, config, cluster_id)
                if internal is not None:
                    topics.append(_internal_entry(internal, identity.node_id, operations,
                                                  cluster))
                elif found is None:
                    topics.append(_error_entry(ErrorCode.UNKNOWN_TOPIC_ID, None, topic_id))
                else:
                    topics.append(_topic_entry(found, identity.node_id, operations, cluster))
        else:
            auto_create = broker_config.auto_create_topics_enable(ctx.state.config) and bool(
                body.allow_auto_topic_creation
            )
            partitions = broker_config.num_partitions(ctx.state.config)
            for name in dict.fromkeys(t.name for t in requested):
                if name is None:
                    topics.append(_error_entry(ErrorCode.UNKNOWN_TOPIC_ID, None))
                    continue
                if is_internal(name):  # never auto-created as an ordinary topic
                    topics.append(_internal_entry(internal_topic(name, config, cluster_id),
                                                  identity.node_id, operations, cluster))
                    continue
                result = await _by_name(store, name, auto_create, partitions)
                if isinstance(result, Topic):
                    topics.append(_topic_entry(result, identity.node_id, operations, cluster))
                else:
                    entry = _error_entry(result, name)
                    entry["topic_authorized_operations"] = operations
                    topics.append(entry)

    with_cluster_operations = 8 <= version <= 10 and bool(
        body.include_cluster_authorized_operations
    )
    return {
        "throttle_time_ms": 0,
        "brokers": _brokers(ctx, cluster),
        "cluster_id": identity.cluster_id,
        "controller_id": identity.node_id if cluster is None else cluster.controller(),
        "topics": topics,
        "cluster_authorized_operations": (
            CLUSTER_AUTHORIZED_OPERATIONS if with_cluster_operations else NO_AUTHORIZED_OPERATIONS
        ),
        "error_code": ErrorCode.NONE,
    }


ROUTE = Route(
    ApiKey.METADATA,
    handle,
    acl=(Acl(ResourceType.TOPIC, AclOperation.DESCRIBE),
         AnyOf((Acl(ResourceType.CLUSTER, AclOperation.CREATE, "auto-creation"),
               Acl(ResourceType.TOPIC, AclOperation.CREATE, "auto-creation"))),
         Acl(ResourceType.CLUSTER, AclOperation.DESCRIBE, "cluster authorized operations")),
    answer_filter=filter_metadata,
)


def _brokers(ctx: RequestContext, cluster: Any) -> list[dict[str, Any]]:
    """The live brokers at the addresses of the listener the request came on (Kafka: a
    client only ever sees its own listener's ports)."""
    listener = listener_of(ctx)
    out = []
    for broker in (cluster.live_brokers() if cluster is not None else (ctx.state.identity,)):
        host, port = broker.address(listener)
        out.append({"node_id": broker.node_id, "host": host, "port": port, "rack": None})
    return out

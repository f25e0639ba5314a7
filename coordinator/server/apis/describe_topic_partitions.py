"""DescribeTopicPartitions (key 75), version 0 (KIP-966): topics' partitions, a page at a
time, as Kafka's ``DescribeTopicPartitionsRequestHandler`` and
``KRaftMetadataCache.getTopicMetadataForDescribeTopicResponse`` answer it.

- No topics named: every topic (the internal ones included), unknown ones never reported.
  Named topics: an unknown one is UNKNOWN_TOPIC_OR_PARTITION (INVALID_TOPIC_EXCEPTION for
  an illegal name) with the zero topic id and no partitions.
- Topics are answered in name order, from the cursor's topic on (names sorting before it
  are left out); the cursor's partition index is where its topic starts. A cursor whose
  topic the named topics do not include is INVALID_REQUEST for every named topic.
- At most min(``response_partition_limit``, ``max.request.partition.size.limit`` = 2000)
  partitions. A topic cut short sets ``next_cursor`` to its first partition left out; when
  the limit is reached exactly at a topic's end, ``next_cursor`` names the next topic at
  partition 0 (even an unknown one, as Kafka's does). Done: ``next_cursor`` null.
- A partition without a live leader has leader -1 and error NONE; eligible leader replicas
  and last known ELR are empty (ELR is off); ``topic_authorized_operations`` is every
  topic operation (no authorizer).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import wire
from coordinator.broker.errors import BrokerError
from coordinator.broker.topics import validate_topic_name
from coordinator.server.api_support import TOPIC_AUTHORIZED_OPERATIONS, ZERO_UUID, store_of
from coordinator.server.internal_topics import internal_topic, internal_topics, is_internal
from coordinator.server.partition_view import internal_partition_view, partition_view
from coordinator.server.route import Acl, AclOperation, Entries, ResourceType, Route
from wire import ErrorCode
from wire.constants import ApiKey

if TYPE_CHECKING:
    from collections.abc import Callable

    from coordinator.server.context import RequestContext

__all__ = ["MAX_REQUEST_PARTITION_SIZE_LIMIT", "ROUTE", "handle"]

#: Kafka's ``max.request.partition.size.limit`` default: the most partitions one answer holds.
MAX_REQUEST_PARTITION_SIZE_LIMIT = 2000

#: A described topic: (topic id, is internal, partition count, partition ``i``'s entry).
Described = tuple[Any, bool, int, "Callable[[int], dict[str, Any]]"]


def _describer(ctx: RequestContext, name: str) -> Described | None:
    """How to describe topic ``name``, or None if it does not exist."""
    node_id = ctx.state.identity.node_id
    cluster = ctx.state.cluster
    if is_internal(name):
        internal = internal_topic(name, ctx.state.config, ctx.state.identity.cluster_id)
        return (internal.topic_id, True, internal.partition_count,
                lambda i: internal_partition_view(internal, i, node_id, cluster, ErrorCode.NONE))
    topic = store_of(ctx).get(name)
    if topic is None:
        return None
    return (topic.topic_id, False, len(topic.partitions),
            lambda i: partition_view(topic, i, node_id, cluster, ErrorCode.NONE))


def _unknown(name: str) -> dict[str, Any]:
    try:
        validate_topic_name(name)
        code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    except BrokerError:
        code = ErrorCode.INVALID_TOPIC_EXCEPTION
    return {"error_code": code, "name": name, "topic_id": ZERO_UUID, "is_internal": False,
            "partitions": [], "topic_authorized_operations": TOPIC_AUTHORIZED_OPERATIONS}


def _invalid_request(topics: list[Any]) -> dict[str, Any]:
    """Kafka's DescribeTopicPartitionsRequest.getErrorResponse."""
    return {"throttle_time_ms": 0, "next_cursor": None, "topics": [
        {"error_code": ErrorCode.INVALID_REQUEST, "name": t.name, "topic_id": ZERO_UUID,
         "is_internal": False, "partitions": []} for t in topics]}


def _candidates(ctx: RequestContext, body: Any, cursor_topic: str) -> list[str] | None:
    """The topic names to answer, in order; None when the cursor's topic is not named."""
    if not body.topics:
        store = store_of(ctx)
        names = {n for n in store.names() if not is_internal(n)}
        names.update(t.name for t in internal_topics(ctx.state.config,
                                                     ctx.state.identity.cluster_id))
    else:
        names = {t.name for t in body.topics}
        if body.cursor is not None and cursor_topic not in names:
            return None
    return sorted(n for n in names if n >= cursor_topic)


async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any] | None:
    """Describe a page of topic partitions (module docstring)."""
    body = request.body
    cursor = body.cursor
    cursor_topic = cursor.topic_name if cursor is not None else ""
    names = _candidates(ctx, body, cursor_topic)
    if names is None:
        return _invalid_request(list(body.topics))
    fetch_all = not body.topics
    remaining = min(MAX_REQUEST_PARTITION_SIZE_LIMIT, body.response_partition_limit)
    topics: list[dict[str, Any]] = []
    next_cursor = None
    for name in names:
        if remaining <= 0:
            if remaining == 0:
                next_cursor = {"topic_name": name, "partition_index": 0}
            break
        described = _describer(ctx, name)
        if described is None:
            if not fetch_all:
                topics.append(_unknown(name))
            continue
        topic_id, internal, count, view = described
        start = cursor.partition_index if cursor is not None and name == cursor_topic else 0
        upper = min(count, start + remaining)
        partitions = [view(index) for index in range(max(start, 0), upper)]
        for entry in partitions:  # ELR is off: both lists empty
            entry["eligible_leader_replicas"] = entry["last_known_elr"] = []
        topics.append({"error_code": ErrorCode.NONE, "name": name, "topic_id": topic_id,
                       "is_internal": internal, "partitions": partitions,
                       "topic_authorized_operations": TOPIC_AUTHORIZED_OPERATIONS})
        if upper < count:
            next_cursor = {"topic_name": name, "partition_index": upper}
            break
        remaining -= len(partitions)
    return {"throttle_time_ms": 0, "topics": topics, "next_cursor": next_cursor}


ROUTE = Route(
    ApiKey.DESCRIBE_TOPIC_PARTITIONS,
    handle,
    acl=(Acl(ResourceType.TOPIC, AclOperation.DESCRIBE, entries=(Entries("topics"),)),),
)

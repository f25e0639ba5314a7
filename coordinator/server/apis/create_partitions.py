"""CreatePartitions (key 37), versions 0-3: grow a topic, with the checks of Kafka's
controller (``ReplicationControlManager.createPartitions``) and ``KafkaApis``:

- a topic named twice: INVALID_REQUEST "Duplicate topic in request." (after the others);
- an unknown topic: UNKNOWN_TOPIC_OR_PARTITION;
- ``count`` not above the current count: INVALID_PARTITIONS; above 10,000 (the most
  CreateTopics takes here): INVALID_PARTITIONS;
- manual ``assignments`` (null: automatic): one per new partition, each naming registered
  brokers once, as many replicas as the topic has; otherwise INVALID_REPLICA_ASSIGNMENT;
- ``validate_only`` checks everything and changes nothing.

The new count is persisted (``topic.json``) before the partitions exist. Metadata shows them
at once; the topics image the consumer group protocol reads changes with the store's
version, so KIP-848 groups rebalance onto them, and classic consumers see them on their
next metadata refresh.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

import wire
from coordinator.broker.admin_limits import yield_between_topics
from coordinator.broker.errors import BrokerError
from coordinator.server.api_support import broker_ids, replication_factor_of, store_of
from coordinator.server.apis.create_topics import MAX_PARTITIONS_PER_TOPIC, check_registered
from coordinator.server.route import Acl, AclOperation, Entries, ResourceType, Route
from wire import ErrorCode
from wire.constants import ApiKey

if TYPE_CHECKING:
    from coordinator.server.context import RequestContext

__all__ = ["ROUTE", "handle"]

def _check_assignments(assignments: Any, added: int, factor: int,
                       registered: list[int]) -> None:
    if assignments is None:
        return
    if len(assignments) != added:
        raise BrokerError(
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            f"Attempted to add {added} additional partition(s), but only {len(assignments)} "
            "assignment(s) were specified.",
        )
    for assignment in assignments:
        brokers = list(assignment.broker_ids)
        if len(brokers) != factor:
            raise BrokerError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"The manual partition assignment includes a partition with {len(brokers)} "
                "replica(s), but this is not consistent with previous partitions, which have "
                f"{factor} replica(s).",
            )
        check_registered(brokers, registered)


async def _grow(ctx: RequestContext, topic: Any, validate_only: bool) -> None:
    store = store_of(ctx)
    existing = store.get(topic.name)
    if existing is None:
        raise BrokerError(
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
            "This server does not host this topic-partition.",
        )
    current = len(existing.partitions)
    if topic.count == current:
        raise BrokerError(ErrorCode.INVALID_PARTITIONS,
                          f"Topic already has {current} partition(s).")
    if topic.count < current:
        raise BrokerError(
            ErrorCode.INVALID_PARTITIONS,
            f"The topic {topic.name} currently has {current} partition(s); {topic.count} "
            "would not be an increase.",
        )
    if topic.count > MAX_PARTITIONS_PER_TOPIC:
        raise BrokerError(
            ErrorCode.INVALID_PARTITIONS,
            f"Number of partitions {topic.count} exceeds the maximum of "
            f"{MAX_PARTITIONS_PER_TOPIC} per topic.",
        )
    _check_assignments(topic.assignments, topic.count - current,
                       replication_factor_of(ctx, existing.replication_factor), broker_ids(ctx))
    if not validate_only:
        await store.open_logs(store.add_partitions(topic.name, topic.count))


async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any] | None:
    """Grow (or with validate_only, check) each requested topic."""
    body = request.body
    counts = Counter(t.name for t in body.topics)
    results: list[dict[str, Any]] = []
    for topic in body.topics:
        if counts[topic.name] > 1:
            continue
        if results:
            await yield_between_topics()
        try:
            await _grow(ctx, topic, bool(body.validate_only))
        except BrokerError as exc:
            results.append({"name": topic.name, "error_code": exc.code,
                            "error_message": exc.message})
            continue
        results.append({"name": topic.name, "error_code": ErrorCode.NONE, "error_message": None})
    results.extend(
        {"name": name, "error_code": ErrorCode.INVALID_REQUEST,
         "error_message": "Duplicate topic in request."}
        for name, count in counts.items() if count > 1
    )
    return {"throttle_time_ms": 0, "results": results}


ROUTE = Route(
    ApiKey.CREATE_PARTITIONS,
    handle,
    acl=(Acl(ResourceType.TOPIC, AclOperation.ALTER, entries=(Entries("topics"),)),),
)

"""DeleteRecords (key 21), versions 0-2: move partitions' log start offsets forward, as
Kafka's ``ReplicaManager.deleteRecords`` does.

Per partition: an internal topic is INVALID_TOPIC_EXCEPTION; an unknown topic or partition
is UNKNOWN_TOPIC_OR_PARTITION; ``offset`` -1
means the high watermark; an offset below 0 or above the high watermark is
OFFSET_OUT_OF_RANGE; a topic whose ``cleanup.policy`` lacks ``delete`` is POLICY_VIOLATION.
Otherwise the log start offset becomes ``max(log start, offset)`` (persisted first) and is
answered as ``low_watermark``; errors carry ``low_watermark`` -1. Fetch below the new log
start is OFFSET_OUT_OF_RANGE and ListOffsets "earliest" answers it. The bytes stay on disk
until the partition's files go (no retention yet): only readers stop seeing them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import wire
from coordinator.broker.errors import BrokerError
from coordinator.server.api_support import store_of
from coordinator.server.internal_topics import is_internal
from coordinator.server.route import Acl, AclOperation, Entries, ResourceType, Route
from wire import ErrorCode
from wire.constants import ApiKey

if TYPE_CHECKING:
    from coordinator.server.context import RequestContext

__all__ = ["ROUTE", "handle"]


async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any] | None:
    """Delete the records below each requested offset."""
    store = store_of(ctx)
    topics: list[dict[str, Any]] = []
    for topic in request.body.topics:
        partitions: list[dict[str, Any]] = []
        for p in topic.partitions:
            try:
                if is_internal(topic.name):  # Kafka's ReplicaManager refuses these
                    raise BrokerError(ErrorCode.INVALID_TOPIC_EXCEPTION,
                                      f"Cannot delete records of internal topic {topic.name}")
                low = store.delete_records(topic.name, p.partition_index, p.offset)
            except BrokerError as exc:
                partitions.append({"partition_index": p.partition_index, "low_watermark": -1,
                                   "error_code": exc.code})
                continue
            partitions.append({"partition_index": p.partition_index, "low_watermark": low,
                               "error_code": ErrorCode.NONE})
        topics.append({"name": topic.name, "partitions": partitions})
    return {"throttle_time_ms": 0, "topics": topics}


ROUTE = Route(
    ApiKey.DELETE_RECORDS,
    handle,
    acl=(Acl(ResourceType.TOPIC, AclOperation.DELETE, entries=(Entries("topics"),)),),
)

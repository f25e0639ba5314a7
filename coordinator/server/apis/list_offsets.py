"""ListOffsets (key 2), versions 0-11: offsets by special value or by timestamp.

v1+, per partition (Kafka's ``ReplicaManager.fetchOffset`` / ``UnifiedLog.fetchOffsetByTimestamp``):

- -2 earliest (and -4 earliest-local, v8+): the log start offset, timestamp -1;
- -1 latest: the high watermark (the last stable offset for read_committed, which is the
  same here), timestamp -1; a ``replica_id`` other than -1 gets the log end offset;
- -3 max timestamp (v7+): the earliest record holding the largest timestamp;
- -5 latest-tiered (v9+) and -6 earliest-pending-upload (v11): no tiered storage, so
  offset -1 and timestamp -1;
- a timestamp >= 0: the first record whose timestamp is at least that one;
- nothing found, or an offset at or beyond the fetchable end: offset -1, timestamp -1;
- a special value the version does not know, or any other negative timestamp:
  UNSUPPORTED_VERSION; a partition listed twice: INVALID_REQUEST; an unknown topic or
  partition: UNKNOWN_TOPIC_OR_PARTITION. An offset found carries the partition's current
  leader epoch (0 on one broker).

v0 answers ``old_style_offsets`` the legacy way (the log as one segment): latest is
[log end, log start] (one entry when they are equal or the log is empty), earliest is
[log start], a timestamp is [log start] once it reaches the newest record's timestamp
and [] before; at most ``max_num_offsets`` of them.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

import trio

import wire
from coordinator.broker.errors import BrokerError
from coordinator.broker.partition_log import PartitionLog
from coordinator.server.api_support import leader_epoch_of, leadership_error, store_of
from coordinator.server.route import Acl, AclOperation, Entries, ResourceType, Route
from wire import ErrorCode
from wire.constants import ApiKey, IsolationLevel

if TYPE_CHECKING:
    from coordinator.server.context import RequestContext

__all__ = ["ROUTE", "handle"]

LATEST = -1
EARLIEST = -2
MAX_TIMESTAMP = -3
EARLIEST_LOCAL = -4
LATEST_TIERED = -5
EARLIEST_PENDING_UPLOAD = -6
CONSUMER_REPLICA_ID = -1

# Lowest ListOffsets version that knows each special timestamp.
_MIN_VERSION = {
    EARLIEST: 1,
    LATEST: 1,
    MAX_TIMESTAMP: 7,
    EARLIEST_LOCAL: 8,
    LATEST_TIERED: 9,
    EARLIEST_PENDING_UPLOAD: 11,
}
_NOT_FOUND = (-1, -1)


async def _lookup(partition: PartitionLog, timestamp: int, fetchable: int,
                  limiter: trio.CapacityLimiter) -> tuple[int, int]:
    """(timestamp, offset) for a v1+ query; (-1, -1) when there is none."""
    if timestamp in (EARLIEST, EARLIEST_LOCAL):
        return -1, partition.log_start_offset
    if timestamp == LATEST:
        return -1, fetchable
    if timestamp in (LATEST_TIERED, EARLIEST_PENDING_UPLOAD):
        return _NOT_FOUND
    if timestamp == MAX_TIMESTAMP:
        found = await partition.max_timestamp_offset(limiter)
    else:
        found = await partition.offset_for_timestamp(timestamp, limiter)
    if found is None or found[1] >= fetchable:
        return _NOT_FOUND
    return found


def _legacy_offsets(partition: PartitionLog, timestamp: int, max_num_offsets: int) -> list[int]:
    """Kafka's ``legacyFetchOffsetsBefore`` over a log of one segment."""
    entries = [
        (partition.log_start_offset, max((b.max_timestamp for b in partition.batches), default=-1))
    ]
    if partition.batches:
        entries.append((partition.log_end_offset, 2**63 - 1))  # the "now" entry
    if timestamp == LATEST:
        start = len(entries) - 1
    elif timestamp == EARLIEST:
        start = 0
    else:
        start = len(entries) - 1
        while start >= 0 and entries[start][1] > timestamp:
            start -= 1
    count = max(0, min(max_num_offsets, start + 1))
    offsets = [entries[start - j][0] for j in range(count)]
    return sorted(set(offsets), reverse=True)


async def _answer(
    limiter: trio.CapacityLimiter,
    partition: PartitionLog | None,
    request_partition: Any,
    version: int,
    fetchable: int | None,
    leader_epoch: int = 0,
) -> dict[str, Any]:
    index = request_partition.partition_index
    timestamp = request_partition.timestamp
    try:
        if version == 0:
            if timestamp < EARLIEST:
                raise BrokerError(ErrorCode.UNSUPPORTED_VERSION, "")
        elif timestamp < 0 and version < _MIN_VERSION.get(timestamp, 2**15):
            raise BrokerError(ErrorCode.UNSUPPORTED_VERSION, "")
        if partition is None:
            raise BrokerError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "")
    except BrokerError as exc:
        return {"partition_index": index, "error_code": exc.code}
    if version == 0:
        offsets = _legacy_offsets(partition, timestamp, request_partition.max_num_offsets)
        return {
            "partition_index": index,
            "error_code": ErrorCode.NONE,
            "old_style_offsets": offsets,
        }
    assert fetchable is not None
    found_timestamp, offset = await _lookup(partition, timestamp, fetchable, limiter)
    return {
        "partition_index": index,
        "error_code": ErrorCode.NONE,
        "timestamp": found_timestamp,
        "offset": offset,
        "leader_epoch": leader_epoch,
    }


async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any] | None:
    """Answer each partition's offset query."""
    body = request.body
    version = request.api_version
    store = store_of(ctx)
    from_client = body.replica_id == CONSUMER_REPLICA_ID
    read_committed = body.isolation_level == IsolationLevel.READ_COMMITTED
    counts = Counter((t.name, p.partition_index) for t in body.topics for p in t.partitions)
    answered: set[tuple[str, int]] = set()
    by_topic: dict[str, list[dict[str, Any]]] = {}
    for topic_request in body.topics:
        name = topic_request.name
        answers = by_topic.setdefault(name, [])
        for request_partition in topic_request.partitions:
            key = (name, request_partition.partition_index)
            if key in answered:
                continue
            answered.add(key)
            if counts[key] > 1:
                answers.append(
                    {
                        "partition_index": request_partition.partition_index,
                        "error_code": ErrorCode.INVALID_REQUEST,
                    }
                )
                continue
            partition = store.partition(name, request_partition.partition_index)
            not_led = None if partition is None else leadership_error(
                ctx, name, request_partition.partition_index,
                request_partition.get("current_leader_epoch", -1),
            )
            if not_led is not None:
                answers.append({"partition_index": request_partition.partition_index,
                                "error_code": not_led})
                continue
            fetchable = None
            if partition is not None:
                fetchable = (
                    partition.fetchable_offset(read_committed)
                    if from_client
                    else partition.log_end_offset
                )
            epoch = leader_epoch_of(ctx, name, request_partition.partition_index)
            answers.append(await _answer(store.read_limiter, partition, request_partition,
                                         version, fetchable, epoch))
    return {
        "throttle_time_ms": 0,
        "topics": [{"name": name, "partitions": parts} for name, parts in by_topic.items()],
    }


ROUTE = Route(
    ApiKey.LIST_OFFSETS,
    handle,
    acl=(Acl(ResourceType.TOPIC, AclOperation.DESCRIBE, entries=(Entries("topics"),)),),
)

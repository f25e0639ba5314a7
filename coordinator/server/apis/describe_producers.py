"""DescribeProducers (key 61), version 0: the active producers of each asked partition, from
the partition's producer state (the same state Produce checks sequences against), as
``Partition.activeProducerState`` answers.

- Each producer with state in the partition: id, epoch, last sequence, last timestamp,
  coordinator epoch and the first offset of its open transaction (-1 when none), by id.
- An unknown topic or partition: UNKNOWN_TOPIC_OR_PARTITION. With ``--brokers``, a broker
  holding no replica of the partition: NOT_LEADER_OR_FOLLOWER (Kafka answers from any
  replica's log, a follower's too; the model's replicas share one log).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import wire
from coordinator.server.api_support import store_of
from coordinator.server.route import Acl, AclOperation, Entries, ResourceType, Route
from wire import ErrorCode
from wire.constants import ApiKey

if TYPE_CHECKING:
    from coordinator.broker.partition_log import PartitionLog
    from coordinator.server.context import RequestContext

__all__ = ["ROUTE", "active_producers", "handle"]


def active_producers(partition: PartitionLog) -> list[dict[str, Any]]:
    """The partition's producers as DescribeProducers reports them."""
    entries = partition.txn.producers.producers
    out = []
    for producer_id in sorted(entries):
        entry = entries[producer_id]
        first = entry.current_txn_first_offset
        out.append({
            "producer_id": producer_id,
            "producer_epoch": entry.producer_epoch,
            "last_sequence": entry.last_seq,
            "last_timestamp": entry.last_timestamp,
            "coordinator_epoch": entry.coordinator_epoch,
            "current_txn_start_offset": -1 if first is None else first,
        })
    return out


def _partition(ctx: RequestContext, name: str, index: int) -> dict[str, Any]:
    answer: dict[str, Any] = {"partition_index": index, "error_message": None,
                              "active_producers": []}
    topic = store_of(ctx).get(name)
    partition = None if topic is None else topic.partition(index)
    if topic is None or partition is None:
        answer["error_code"] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        return answer
    cluster = ctx.state.cluster
    if cluster is not None and ctx.state.identity.node_id not in cluster.replicas(
            index, topic.replication_factor, name):
        answer["error_code"] = ErrorCode.NOT_LEADER_OR_FOLLOWER
        return answer
    answer["error_code"] = ErrorCode.NONE
    answer["active_producers"] = active_producers(partition)
    return answer


async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any] | None:
    """Each asked partition's active producers (module docstring)."""
    return {"throttle_time_ms": 0, "topics": [
        {"name": topic.name,
         "partitions": [_partition(ctx, topic.name, i) for i in topic.partition_indexes]}
        for topic in request.body.topics]}


ROUTE = Route(
    ApiKey.DESCRIBE_PRODUCERS,
    handle,
    acl=(Acl(ResourceType.TOPIC, AclOperation.READ, entries=(Entries("topics"),)),),
)

"""OffsetForLeaderEpoch (key 23), versions 2-4: where a leader epoch ended (KIP-320).

A consumer sends it after a leader change (a larger leader epoch in Metadata), with the epoch
of the record before its position, to learn whether the new leader's log still holds that
position. Per partition, as Kafka's ``ReplicaManager.lastOffsetForLeaderEpoch`` and
``Partition.lastOffsetForLeaderEpoch`` answer:

- an unknown topic or partition: UNKNOWN_TOPIC_OR_PARTITION;
- ``current_leader_epoch`` (-1: not checked) older than the partition's leader epoch:
  FENCED_LEADER_EPOCH; newer: UNKNOWN_LEADER_EPOCH (one broker leads at epoch 0);
- with ``--brokers``, a broker that does not lead the partition: NOT_LEADER_OR_FOLLOWER;
- otherwise ``leader_epoch`` and ``end_offset``: the largest known epoch not above the
  requested one and where it ended -- the start offset of the next larger epoch, or the log
  end offset for the current epoch; an epoch older than every epoch the log still holds
  answers itself and the log's first epoch start; a newer one (or -1) answers -1/-1
  (``coordinator.broker.leader_epochs``: Kafka's ``LeaderEpochFileCache.endOffsetFor``).

``replica_id`` (v3+) changes nothing, as in Kafka 4.x, which serves every caller from the
leader only. Authorized as Kafka: CLUSTER_ACTION on the cluster, else DESCRIBE per topic
(a denied topic answers TOPIC_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import wire
from coordinator.server.api_support import leader_epoch_of, leadership_error, store_of
from coordinator.server.route import Acl, AclOperation, AnyOf, Entries, ResourceType, Route
from wire import ErrorCode
from wire.constants import ApiKey

if TYPE_CHECKING:
    from coordinator.server.context import RequestContext

__all__ = ["ROUTE", "handle"]


def _partition(ctx: RequestContext, name: str, asked: Any) -> dict[str, Any]:
    index = asked.partition
    answer: dict[str, Any] = {"partition": index, "leader_epoch": -1, "end_offset": -1}
    topic = store_of(ctx).get(name)
    partition = None if topic is None else topic.partition(index)
    if partition is None:
        answer["error_code"] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        return answer
    not_led = leadership_error(ctx, name, index, asked.current_leader_epoch)
    if not_led is not None:
        answer["error_code"] = not_led
        return answer
    epoch, end_offset = partition.epochs.end_offset_for(
        asked.leader_epoch, leader_epoch_of(ctx, name, index), partition.log_end_offset)
    answer.update(error_code=ErrorCode.NONE, leader_epoch=epoch, end_offset=end_offset)
    return answer


async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any] | None:
    """Each asked partition's epoch end offset (module docstring)."""
    return {"throttle_time_ms": 0, "topics": [
        {"topic": topic.topic, "partitions": [_partition(ctx, topic.topic, p)
                                              for p in topic.partitions]}
        for topic in request.body.topics]}


ROUTE = Route(
    ApiKey.OFFSET_FOR_LEADER_EPOCH,
    handle,
    acl=(AnyOf((Acl(ResourceType.CLUSTER, AclOperation.CLUSTER_ACTION),
                Acl(ResourceType.TOPIC, AclOperation.DESCRIBE,
                    entries=(Entries("topics", "topic"),)))),),
)

"""DescribeQuorum (key 55), versions 0-2 (KIP-595, KIP-836, KIP-853): the metadata quorum
answered as a single-voter KRaft quorum, as ``KafkaRaftClient.handleDescribeQuorumRequest``
and ``LeaderState.describeQuorum`` answer it.

- Only ``__cluster_metadata`` partition 0, asked alone, is described; any other request gets
  UNKNOWN_TOPIC_OR_PARTITION on each asked partition ("This server does not host this
  topic-partition.", v2) and top-level NONE (``getPartitionLevelErrorResponse``).
- The one voter, and leader, is the controller: this broker alone (a combined
  broker-and-controller node); with ``--brokers`` the multi-broker model's controller (the
  lowest live node id, the one Metadata and DescribeCluster name). The other live brokers
  are observers. Leader epoch 1.
- The metadata log's end offset (high watermark, every replica's log end offset) is the
  topic store's version: one record per topic change since start-up. Every replica is
  caught up: last fetch and last caught-up timestamps are now (coordinator time).
- v2: each replica's directory id (stable for the cluster id and node id) and ``nodes``,
  the voter's endpoint as listener ``CONTROLLER`` (the broker's own address: it answers
  the controller's APIs it serves).
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

import wire
from coordinator.server.api_support import group_runtime, store_of
from coordinator.server.route import Acl, AclOperation, ResourceType, Route
from wire import ErrorCode
from wire.constants import ApiKey

if TYPE_CHECKING:
    from coordinator.server.context import BrokerIdentity, RequestContext

__all__ = ["METADATA_TOPIC", "ROUTE", "handle"]

METADATA_TOPIC = "__cluster_metadata"
LEADER_EPOCH = 1
_UNKNOWN_PARTITION = "This server does not host this topic-partition."


def _asks_for_the_metadata_partition(topics: list[Any]) -> bool:
    return (len(topics) == 1 and topics[0].topic_name == METADATA_TOPIC
            and len(topics[0].partitions) == 1 and topics[0].partitions[0].partition_index == 0)


def _unknown(topics: list[Any]) -> dict[str, Any]:
    return {"error_code": ErrorCode.NONE, "error_message": None, "nodes": [], "topics": [
        {"topic_name": t.topic_name, "partitions": [
            {"partition_index": p.partition_index,
             "error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
             "error_message": _UNKNOWN_PARTITION, "leader_id": -1, "leader_epoch": -1,
             "high_watermark": -1, "current_voters": [], "observers": []}
            for p in t.partitions]} for t in topics]}


def _replica(cluster_id: str, node_id: int, end_offset: int, now_ms: int) -> dict[str, Any]:
    return {"replica_id": node_id,
            "replica_directory_id": uuid.uuid5(uuid.NAMESPACE_URL,
                                               f"kcoord:{cluster_id}:log-dir:{node_id}"),
            "log_end_offset": end_offset, "last_fetch_timestamp": now_ms,
            "last_caught_up_timestamp": now_ms}


def _members(ctx: RequestContext) -> tuple[BrokerIdentity, list[BrokerIdentity]]:
    """The voter and the observers."""
    identity = ctx.state.identity
    cluster = ctx.state.cluster
    if cluster is None:
        return identity, []
    live = cluster.live_brokers()
    controller = cluster.controller()
    voter = next((b for b in live if b.node_id == controller), identity)
    return voter, [b for b in live if b.node_id != controller]


async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any] | None:
    """The single-voter quorum (module docstring)."""
    topics = list(request.body.topics)
    if not _asks_for_the_metadata_partition(topics):
        return _unknown(topics)
    cluster_id = ctx.state.identity.cluster_id
    store = ctx.state.topics  # None on a coordinator-only server
    end_offset = 0 if store is None else store_of(ctx).version
    now_ms = group_runtime(ctx).now_ms()
    voter, observers = _members(ctx)
    return {
        "error_code": ErrorCode.NONE,
        "error_message": None,
        "topics": [{"topic_name": METADATA_TOPIC, "partitions": [{
            "partition_index": 0, "error_code": ErrorCode.NONE, "error_message": None,
            "leader_id": voter.node_id, "leader_epoch": LEADER_EPOCH,
            "high_watermark": end_offset,
            "current_voters": [_replica(cluster_id, voter.node_id, end_offset, now_ms)],
            "observers": [_replica(cluster_id, o.node_id, end_offset, now_ms)
                          for o in observers],
        }]}],
        "nodes": [{"node_id": voter.node_id, "listeners": [
            {"name": "CONTROLLER", "host": voter.host, "port": voter.port}]}],
    }


ROUTE = Route(
    ApiKey.DESCRIBE_QUORUM,
    handle,
    acl=(Acl(ResourceType.CLUSTER, AclOperation.DESCRIBE),),
)

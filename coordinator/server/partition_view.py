"""One partition as the describing APIs report it (Metadata, DescribeTopicPartitions): its
error, leader, leader epoch, replicas, in-sync and offline replicas, as one plain dict
(Metadata builds one per partition: no copies).

With one broker it leads every partition alone, at leader epoch 0 (as the record batches
the store serves are stamped). With several (``--brokers``,
``cluster.Cluster``) each partition has the model's replicas (reassigned ones included) and
leader; an offline one has leader -1 and the caller's ``offline_error`` (Metadata:
LEADER_NOT_AVAILABLE; DescribeTopicPartitions: NONE, as Kafka's metadata cache answers).
The internal topics' partitions are led by their coordinators (``server.internal_topics``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from wire.constants import ErrorCode

if TYPE_CHECKING:
    from coordinator.broker.topics import Topic
    from coordinator.server.internal_topics import InternalTopic

__all__ = ["internal_partition_view", "partition_view"]

_NONE = ErrorCode.NONE  # looked up once: Metadata builds an entry per partition


def partition_view(topic: Topic, index: int, node_id: int, cluster: Any,
                   offline_error: ErrorCode) -> dict[str, Any]:
    """Partition ``index`` of ``topic``, described by broker ``node_id``."""
    if cluster is None:
        return {"error_code": _NONE, "partition_index": index, "leader_id": node_id,
                "leader_epoch": 0, "replica_nodes": [node_id], "isr_nodes": [node_id],
                "offline_replicas": []}
    leader, epoch = cluster.leader(topic.name, index)
    replicas = cluster.replicas(index, topic.replication_factor, topic.name)
    return {
        "error_code": offline_error if leader == -1 else _NONE,
        "partition_index": index,
        "leader_id": leader,
        "leader_epoch": epoch,
        "replica_nodes": replicas,
        "isr_nodes": cluster.in_sync(index, topic.replication_factor, topic.name),
        "offline_replicas": [r for r in replicas if r not in cluster.live],
    }


def internal_partition_view(topic: InternalTopic, index: int, node_id: int, cluster: Any,
                            offline_error: ErrorCode) -> dict[str, Any]:
    """Partition ``index`` of an internal topic: led by its coordinator, no other replica."""
    leader = topic.leader(index, node_id, cluster)
    return {"error_code": offline_error if leader == -1 else _NONE,
            "partition_index": index, "leader_id": leader,
            "leader_epoch": 0, "replica_nodes": [leader],
            "isr_nodes": [leader], "offline_replicas": []}

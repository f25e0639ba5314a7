"""One partition as the describing APIs report it (Metadata, DescribeTopicPartitions): its
leader, leader epoch, replicas, in-sync and offline replicas.

With one broker it leads every partition alone. With several (``--brokers``,
``cluster.Cluster``) each partition has the model's replicas and leader; an offline one
has leader -1 and ``offline`` true (Metadata answers it LEADER_NOT_AVAILABLE,
DescribeTopicPartitions NONE, as Kafka's metadata cache does). The internal topics' partitions
are led by their coordinators (``server.internal_topics``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from coordinator.broker.topics import Topic
    from coordinator.server.internal_topics import InternalTopic

__all__ = ["PartitionView", "internal_partition_view", "partition_view"]


class PartitionView(dict[str, Any]):
    """``partition_index``, ``leader_id``, ``leader_epoch``, ``replica_nodes``,
    ``isr_nodes``, ``offline_replicas`` (the fields both APIs share), as a dict."""

    @property
    def offline(self) -> bool:
        """No live leader."""
        return bool(self["leader_id"] == -1)


def partition_view(topic: Topic, index: int, node_id: int, cluster: Any) -> PartitionView:
    """Partition ``index`` of ``topic``, described by broker ``node_id``."""
    if cluster is None:
        return PartitionView(partition_index=index, leader_id=node_id, leader_epoch=-1,
                             replica_nodes=[node_id], isr_nodes=[node_id], offline_replicas=[])
    leader, epoch = cluster.leader(topic.name, index)
    replicas = cluster.replicas(index, topic.replication_factor, topic.name)
    return PartitionView(
        partition_index=index,
        leader_id=leader,
        leader_epoch=epoch,
        replica_nodes=replicas,
        isr_nodes=cluster.in_sync(index, topic.replication_factor, topic.name),
        offline_replicas=[r for r in replicas if r not in cluster.live],
    )


def internal_partition_view(topic: InternalTopic, index: int, node_id: int,
                            cluster: Any) -> PartitionView:
    """Partition ``index`` of an internal topic: led by its coordinator, no other replica."""
    leader = topic.leader(index, node_id, cluster)
    return PartitionView(partition_index=index, leader_id=leader,
                         leader_epoch=-1 if cluster is None else 0, replica_nodes=[leader],
                         isr_nodes=[leader], offline_replicas=[])

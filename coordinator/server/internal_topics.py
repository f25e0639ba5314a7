"""Kafka's internal topics as clients see them: ``__consumer_offsets`` and
``__transaction_state``.

Their records live in the coordinators' own logs, not in the topic store, so they are
described here: each has ``offsets.topic.num.partitions`` /
``transaction.state.log.num.partitions`` partitions (default 50, the counts the coordinator
placement uses), each partition led by the broker coordinating it (this broker alone; with
``--brokers`` the cluster model's coordinator of that partition), a topic id stable for the
cluster id, and Kafka's creation configs (``cleanup.policy=compact``, 100 MiB segments).
Metadata lists them with ``is_internal`` true; CreateTopics, Produce and DescribeConfigs
ask ``is_internal``. The topic store refuses to create them (``TopicStore.check_new_topic``).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from coordinator.txn.placement import (
    DEFAULT_OFFSETS_TOPIC_PARTITIONS,
    DEFAULT_TRANSACTION_STATE_PARTITIONS,
    OFFSETS_TOPIC,
    TRANSACTION_STATE_TOPIC,
)

__all__ = [
    "CREATION_CONFIGS",
    "INTERNAL_TOPICS",
    "InternalTopic",
    "internal_topic",
    "internal_topic_by_id",
    "internal_topics",
    "is_internal",
    "partition_count",
]

#: Internal topic -> (its partition-count config key, Kafka's default).
_PARTITION_COUNT_KEYS: dict[str, tuple[str, int]] = {
    OFFSETS_TOPIC: ("offsets.topic.num.partitions", DEFAULT_OFFSETS_TOPIC_PARTITIONS),
    TRANSACTION_STATE_TOPIC: ("transaction.state.log.num.partitions",
                              DEFAULT_TRANSACTION_STATE_PARTITIONS),
}
INTERNAL_TOPICS = tuple(_PARTITION_COUNT_KEYS)

#: The topic configs Kafka creates them with (GroupCoordinatorService.groupMetadataTopicConfigs,
#: TransactionStateManager.transactionTopicConfigs; offsets.topic.segment.bytes and
#: transaction.state.log.segment.bytes default to 100 MiB, transaction.state.log.min.isr 2).
CREATION_CONFIGS: dict[str, dict[str, str]] = {
    OFFSETS_TOPIC: {"cleanup.policy": "compact", "compression.type": "producer",
                    "segment.bytes": "104857600"},
    TRANSACTION_STATE_TOPIC: {"cleanup.policy": "compact", "compression.type": "uncompressed",
                              "min.insync.replicas": "2", "segment.bytes": "104857600",
                              "unclean.leader.election.enable": "false"},
}


class InternalTopic:
    """One internal topic as this server describes it."""

    __slots__ = ("configs", "name", "partition_count", "topic_id")

    def __init__(self, name: str, partition_count: int, cluster_id: str) -> None:
        self.name = name
        self.partition_count = partition_count
        self.topic_id = uuid.uuid5(uuid.NAMESPACE_URL, f"kcoord:{cluster_id}:{name}")
        self.configs = CREATION_CONFIGS[name]

    def leader(self, partition: int, node_id: int, cluster: Any) -> int:
        """The broker coordinating ``partition`` (this one without a cluster model)."""
        if cluster is None:
            return node_id
        leader: int = cluster.partition_coordinator(self.name, partition)
        return leader


def is_internal(name: str | None) -> bool:
    """Whether ``name`` is one of Kafka's internal topics."""
    return name in _PARTITION_COUNT_KEYS


def partition_count(name: str, config: Mapping[str, str]) -> int:
    """The partitions ``config`` gives internal topic ``name`` (Kafka's default without
    its key)."""
    key, default = _PARTITION_COUNT_KEYS[name]
    return int(config.get(key, default))


def internal_topic(name: str, config: Mapping[str, str], cluster_id: str) -> InternalTopic:
    """``name`` (an internal topic) with the partition count ``config`` gives it."""
    return InternalTopic(name, partition_count(name, config), cluster_id)


def internal_topics(config: Mapping[str, str], cluster_id: str) -> list[InternalTopic]:
    """Both internal topics, by name."""
    return [internal_topic(name, config, cluster_id) for name in INTERNAL_TOPICS]


def internal_topic_by_id(topic_id: uuid.UUID, config: Mapping[str, str],
                         cluster_id: str) -> InternalTopic | None:
    """The internal topic whose id is ``topic_id``, or None."""
    return next((t for t in internal_topics(config, cluster_id) if t.topic_id == topic_id),
                None)

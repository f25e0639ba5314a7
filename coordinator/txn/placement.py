"""Which internal-topic partition owns a group or a transactional id, as Kafka computes it.

``GroupCoordinator.partitionFor`` and ``TransactionStateManager.partitionFor`` are both
``Utils.abs(id.hashCode()) % partitionCount``: Java's ``String.hashCode`` (32-bit, over
UTF-16 code units) and Kafka's ``Utils.abs``, which maps Integer.MIN_VALUE to 0 instead of
leaving it negative as ``Math.abs`` does.
"""

from __future__ import annotations

from coordinator.configs.broker_keys import SERVER_PROPERTIES

__all__ = [
    "DEFAULT_OFFSETS_TOPIC_PARTITIONS",
    "DEFAULT_TRANSACTION_STATE_PARTITIONS",
    "OFFSETS_TOPIC",
    "TRANSACTION_STATE_TOPIC",
    "java_string_hash",
    "kafka_abs",
    "partition_for",
]

OFFSETS_TOPIC = "__consumer_offsets"
TRANSACTION_STATE_TOPIC = "__transaction_state"
DEFAULT_OFFSETS_TOPIC_PARTITIONS = int(
    SERVER_PROPERTIES["offsets.topic.num.partitions"].typed_default)
DEFAULT_TRANSACTION_STATE_PARTITIONS = int(
    SERVER_PROPERTIES["transaction.state.log.num.partitions"].typed_default)

_INT_MIN = -(2**31)


def java_string_hash(value: str) -> int:
    """Java's ``String.hashCode``: s[0]*31^(n-1) + ... + s[n-1] over UTF-16 code units,
    wrapped to a signed 32-bit int."""
    h = 0
    data = value.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def kafka_abs(n: int) -> int:
    """Kafka's ``Utils.abs``: |n|, except that Integer.MIN_VALUE maps to 0."""
    return 0 if n == _INT_MIN else abs(n)


def partition_for(key: str, partitions: int) -> int:
    """The partition of ``__consumer_offsets`` / ``__transaction_state`` owning ``key``."""
    if partitions <= 0:
        raise ValueError(f"partition count must be positive, got {partitions}")
    return kafka_abs(java_string_hash(key)) % partitions

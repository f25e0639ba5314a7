"""Kafka transactions as pure, sans-I/O code: the transaction coordinator (state machine,
log records, loading, timeouts), placement of ids on internal-topic partitions, and a
partition's producer state (idempotence, ongoing transactions, last stable offset,
aborted-transaction index).

The coordinator (``coordinator.txn.coordinator``, its API handlers in
``coordinator.txn.handlers``) is a shard of the coordinator runtime, speaking the group
core's Result vocabulary (``coordinator.core.result``); no I/O, no clock. This package
exports only what that vocabulary itself refers to and the plain types around it, so that
``coordinator.core.result`` can name them without importing the coordinator.
"""

from coordinator.txn.config import KAFKA_CONFIG_NAMES, TxnConfig
from coordinator.txn.log import (
    TransactionLogKey,
    TransactionLogRecord,
    TransactionLogValue,
    TxnPartitions,
)
from coordinator.txn.messages import TxnMarker
from coordinator.txn.placement import (
    OFFSETS_TOPIC,
    TRANSACTION_STATE_TOPIC,
    java_string_hash,
    kafka_abs,
    partition_for,
)
from coordinator.txn.state import TopicPartition, TransactionMetadata
from coordinator.txn.timers import (
    ABORT_TIMED_OUT_TRANSACTIONS,
    REMOVE_EXPIRED_TRANSACTIONAL_IDS,
    TxnTimerKey,
)
from coordinator.txn.transaction_state import TransactionResult, TransactionState

__all__ = [
    "ABORT_TIMED_OUT_TRANSACTIONS",
    "KAFKA_CONFIG_NAMES",
    "OFFSETS_TOPIC",
    "REMOVE_EXPIRED_TRANSACTIONAL_IDS",
    "TRANSACTION_STATE_TOPIC",
    "TopicPartition",
    "TransactionLogKey",
    "TransactionLogRecord",
    "TransactionLogValue",
    "TransactionMetadata",
    "TransactionResult",
    "TransactionState",
    "TxnConfig",
    "TxnMarker",
    "TxnPartitions",
    "TxnTimerKey",
    "java_string_hash",
    "kafka_abs",
    "partition_for",
]
